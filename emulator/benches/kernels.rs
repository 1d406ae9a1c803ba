//! Emulator throughput on four real kernels, against plain native Rust doing the same work in
//! the same run: a tiled SGEMM (256 x 256 x 256, 16 x 16 tiles in local memory), a
//! register-blocked GEMM (512 x 512 x 512, each thread an 8 x 8 tile in 64 registers), a sum
//! reduction (wave_reduce plus one atomic per wave) and a 256-bin histogram (local atomics,
//! then device atomics). Prints lane-operations per second and the time ratio to native on
//! one thread, then the speedup and efficiency of both GEMMs at 512 on 1, 2, 4, ... threads up
//! to the machine's cores, each against one thread in the same run.
//! Run: `cargo bench -p wave-emulator --bench kernels`. Targets at W = 32 on one core: at
//! least 3 G lane-ops/s on the SGEMM and 2.5 G on the register-blocked GEMM, the reduction and
//! the histogram within 8x of native; on threads, at least 1.8x on 2 and an efficiency of
//! 0.8 on 16 for the SGEMM at 512. Figures are recorded in docs/performance.md.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use wave_emulator::{Dispatch, run};

const N: usize = 256;

/// Runs of the two short kernels (a few milliseconds each); the best one counts.
const RUNS: usize = 15;

const SGEMM: &str = "
.kernel sgemm
.param a: ptr
.param b: ptr
.param c: ptr
.param n: u32
.workgroup_size 16, 16
.local_memory 2048
    mov r4, sr_thread_id_x
    mov r5, sr_thread_id_y
    mov r6, sr_workgroup_id_x
    mov r7, sr_workgroup_id_y
    shl r8, r6, 4
    iadd r8, r8, r4               ; col
    shl r9, r7, 4
    iadd r9, r9, r5               ; row
    mov_imm r10, 0                ; acc
    mov_imm r11, 0                ; tile start
    shl r12, r5, 4
    iadd r12, r12, r4
    shl r12, r12, 2               ; As[ty][tx]
    iadd r13, r12, 1024           ; Bs[ty][tx]
    shl r20, r5, 6                ; As row ty
    shl r21, r4, 2                ; Bs column tx
    imul r27, r9, n               ; row * n
    loop
        iadd r14, r27, r11
        iadd r14, r14, r4
        shl r14, r14, 2
        iadd r14, r14, a
        device_load.u32 r15, r14
        local_store.u32 r12, r15
        iadd r16, r11, r5
        imul r16, r16, n
        iadd r16, r16, r8
        shl r16, r16, 2
        iadd r16, r16, b
        device_load.u32 r17, r16
        local_store.u32 r13, r17
        barrier
        mov r23, r20
        mov r25, r21
        mov_imm r18, 16
        loop
            local_load.u32 r24, r23
            local_load.u32 r26, [r25 + 1024]
            fma r10, r24, r26, r10
            iadd r23, r23, 4
            iadd r25, r25, 64
            isub r18, r18, 1
            icmp.eq p0, r18, 0
            break p0
        endloop
        barrier
        iadd r11, r11, 16
        icmp.ge p1, r11, n
        break p1
    endloop
    iadd r14, r27, r8
    shl r14, r14, 2
    iadd r14, r14, c
    device_store.u32 r14, r10
.end
";

const REDUCE: &str = "
.kernel reduce
.param data: ptr
.param out: ptr
.param n: u32
.workgroup_size 256
    mov r4, sr_workgroup_id_x
    mov r5, sr_thread_id_x
    shl r6, r4, 10                ; 1024 elements per workgroup
    iadd r6, r6, r5
    shl r6, r6, 2
    iadd r6, r6, data
    device_load.u32 r7, r6
    device_load.u32 r8, [r6 + 1024]
    device_load.u32 r9, [r6 + 2048]
    device_load.u32 r10, [r6 + 3072]
    iadd r7, r7, r8
    iadd r9, r9, r10
    iadd r7, r7, r9
    wave_reduce.add r11, r7
    mov r12, sr_lane_id
    icmp.eq p0, r12, 0
    if p0
        atomic_add r13, out, r11
    endif
.end
";

const HISTOGRAM: &str = "
.kernel histogram
.param data: ptr
.param bins: ptr
.workgroup_size 256
.local_memory 1024
    mov r4, sr_workgroup_id_x
    mov r5, sr_thread_id_x
    shl r6, r5, 2
    mov_imm r7, 0
    local_store.u32 r6, r7        ; clear this thread's bin
    barrier
    shl r8, r4, 12                ; 4096 bytes per workgroup
    iadd r8, r8, r5
    iadd r8, r8, data
    mov_imm r9, 16
    mov_imm r10, 1
    loop
        device_load.u8 r11, r8
        shl r11, r11, 2
        atomic_add.local.workgroup r0, r11, r10
        iadd r8, r8, 256
        isub r9, r9, 1
        icmp.eq p0, r9, 0
        break p0
    endloop
    barrier
    local_load.u32 r12, r6
    iadd r13, bins, r6
    atomic_add r0, r13, r12
.end
";

/// A register-blocked GEMM: each of a workgroup's 16 x 16 threads computes an 8 x 8 tile of C
/// held in 64 registers (r40 to r103), so that a workgroup covers 128 x 128; A and B pass
/// through Local Memory 8 columns (rows) at a time, A transposed, and each thread reads its
/// fragments as 64-bit loads. `n` must be a multiple of 128.
fn gemm8x8() -> String {
    let mut s = String::from(
        ".kernel gemm8x8
.param a: ptr
.param b: ptr
.param c: ptr
.param n: u32
.workgroup_size 16, 16
.local_memory 8192
    mov r4, sr_thread_id_x
    mov r5, sr_thread_id_y
    mov r6, sr_workgroup_id_x
    mov r7, sr_workgroup_id_y
    shl r8, r5, 4
    iadd r8, r8, r4               ; t
    shr r9, r8, 3                 ; t / 8: the A row this thread loads (+ 32 q)
    and r10, r8, 7                ; t % 8: its column
    shl r11, r7, 7
    iadd r11, r11, r9
    imul r12, r11, n
    iadd r12, r12, r10
    shl r12, r12, 2
    iadd r12, r12, a              ; &A[by * 128 + t / 8][t % 8]
    shl r13, n, 7                 ; 32 rows of A, in bytes
    shl r14, r10, 7
    iadd r14, r14, r9
    shl r14, r14, 2               ; As[t % 8][t / 8], transposed
    shr r15, r8, 7                ; t / 128: the B row (+ 2 q)
    and r16, r8, 127              ; t % 128: its column
    imul r17, r15, n
    shl r18, r6, 7
    iadd r17, r17, r18
    iadd r17, r17, r16
    shl r17, r17, 2
    iadd r17, r17, b              ; &B[t / 128][bx * 128 + t % 128]
    shl r19, n, 3                 ; 2 rows of B, in bytes
    shl r20, r8, 2
    iadd r20, r20, 4096           ; Bs[t / 128][t % 128]
    shl r21, r5, 5                ; As[kk][ty * 8]
    shl r22, r4, 5
    iadd r22, r22, 4096           ; Bs[kk][tx * 8]
    shl r36, n, 5                 ; 8 rows of B, in bytes
    mov_imm r23, 0                ; k0
",
    );
    for r in 40..104 {
        s.push_str(&format!(
            "    mov_imm r{r}, 0
"
        ));
    }
    s.push_str(
        "    loop
",
    );
    // Each thread moves 4 values of the A tile and 4 of the B tile into Local Memory.
    s.push_str("        mov r32, r12\n        mov r33, r17\n");
    for q in 0..4 {
        s.push_str(&format!(
            "        device_load.u32 r{}, [r32]\n        device_load.u32 r{}, [r33]\n",
            24 + q,
            28 + q
        ));
        if q < 3 {
            s.push_str("        iadd r32, r32, r13\n        iadd r33, r33, r19\n");
        }
    }
    for q in 0..4 {
        s.push_str(&format!(
            "        local_store.u32 [r14 + {}], r{}
",
            128 * q,
            24 + q
        ));
        s.push_str(&format!(
            "        local_store.u32 [r20 + {}], r{}
",
            1024 * q,
            28 + q
        ));
    }
    s.push_str(
        "        barrier
",
    );
    for kk in 0..8 {
        let off = kk * 512;
        for h in 0..4 {
            s.push_str(&format!(
                "        local_load.u64 r{}, [r21 + {}]\n        local_load.u64 r{}, [r22 + {}]\n",
                104 + 2 * h,
                off + 8 * h,
                112 + 2 * h,
                off + 8 * h
            ));
        }
        for i in 0..8 {
            for j in 0..8 {
                let acc = 40 + 8 * i + j;
                s.push_str(&format!(
                    "        fma r{acc}, r{}, r{}, r{acc}
",
                    104 + i,
                    112 + j
                ));
            }
        }
    }
    s.push_str(
        "        barrier
        iadd r12, r12, 32
        iadd r17, r17, r36
        iadd r23, r23, 8
        icmp.ge p0, r23, n
        break p0
    endloop
    shl r24, r7, 7
    shl r25, r5, 3
    iadd r24, r24, r25            ; the first row of this thread's tile
    shl r26, r6, 7
    shl r27, r4, 3
    iadd r26, r26, r27            ; its first column
    imul r28, r24, n
    iadd r28, r28, r26
    shl r28, r28, 2
    iadd r28, r28, c
    shl r29, n, 2                 ; a row of C, in bytes
",
    );
    for i in 0..8 {
        s.push_str(&format!(
            "    device_store.u128 [r28], r{}
    device_store.u128 [r28 + 16], r{}
    iadd r28, r28, r29
",
            40 + 8 * i,
            44 + 8 * i
        ));
    }
    s.push_str(
        ".end
",
    );
    s
}

fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn put(memory: &mut [u8], at: usize, words: &[u32]) {
    for (i, w) in words.iter().enumerate() {
        memory[at + 4 * i..at + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
}

fn get(memory: &[u8], at: usize, count: usize) -> Vec<u32> {
    (0..count)
        .map(|i| {
            u32::from_le_bytes(memory[at + 4 * i..at + 4 * i + 4].try_into().unwrap_or([0; 4]))
        })
        .collect()
}

struct Row {
    name: &'static str,
    lane_ops: u64,
    emulated: Duration,
    native: Duration,
}

/// A GEMM over n x n matrices of small integers (every order of summation is exact), and
/// the native result to check against.
struct Gemm {
    module: wave_wbin::Module,
    n: usize,
    /// Rows and columns of C one workgroup computes.
    tile: usize,
    memory: Vec<u8>,
    a: Vec<f32>,
    b: Vec<f32>,
}

impl Gemm {
    fn new(source: &str, n: usize, tile: usize) -> Gemm {
        let assembly = wave_asm::assemble(source, "gemm.wave");
        assert!(!assembly.has_errors(), "{:#?}", assembly.diagnostics);
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 5) as f32).collect();
        let b: Vec<f32> = (0..n * n).map(|i| ((i * 3) % 4) as f32).collect();
        let mut memory = vec![0u8; 3 * n * n * 4];
        put(&mut memory, 0, &a.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        put(&mut memory, n * n * 4, &b.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        Gemm { module: assembly.module, n, tile, memory, a, b }
    }

    fn dispatch(&self, w: u32, threads: u32) -> Dispatch {
        let n = self.n;
        let g = (n / self.tile) as u32;
        Dispatch {
            grid: [g, g, 1],
            wave_width: w,
            threads,
            args: vec![
                ("a".into(), 0),
                ("b".into(), (n * n * 4) as u32),
                ("c".into(), (2 * n * n * 4) as u32),
                ("n".into(), n as u32),
            ],
            ..Dispatch::default()
        }
    }

    /// The best of `runs` runs on `threads` threads, and its lane-operations.
    fn time(&mut self, w: u32, threads: u32, runs: usize) -> (Duration, u64) {
        let dispatch = self.dispatch(w, threads);
        let mut lane_ops = 0;
        let (module, memory) = (&self.module, &mut self.memory);
        let t = best(runs, || {
            lane_ops = run(module, &dispatch, memory).expect("the GEMM runs").stats.lane_ops;
        });
        (t, lane_ops)
    }

    /// Native C = A B, timed; panics unless the emulator's C is the same.
    fn check_native(&self, runs: usize) -> Duration {
        let n = self.n;
        let mut c = vec![0f32; n * n];
        let native = best(runs, || {
            for i in 0..n {
                for j in 0..n {
                    let mut acc = 0f32;
                    for k in 0..n {
                        acc = self.a[i * n + k].mul_add(self.b[k * n + j], acc);
                    }
                    c[i * n + j] = acc;
                }
            }
            black_box(&c);
        });
        let got = get(&self.memory, 2 * n * n * 4, n * n);
        assert!(
            got.iter().zip(&c).all(|(g, e)| *g == e.to_bits()),
            "GEMM results differ from native"
        );
        native
    }
}

fn report(rows: &[Row], w: u32) {
    println!(
        "emulator at W = {w}, one thread, best of 3 runs (the GEMMs) or {RUNS} runs (the others)"
    );
    println!(
        "  {:<10} {:>12} {:>10} {:>12} {:>10} {:>8}",
        "kernel", "lane-ops", "emulated", "lane-ops/s", "native", "ratio"
    );
    for r in rows {
        println!(
            "  {:<10} {:>12} {:>8.1}ms {:>10.2} G {:>8.2}ms {:>7.1}x",
            r.name,
            r.lane_ops,
            r.emulated.as_secs_f64() * 1e3,
            r.lane_ops as f64 / r.emulated.as_secs_f64() / 1e9,
            r.native.as_secs_f64() * 1e3,
            r.emulated.as_secs_f64() / r.native.as_secs_f64()
        );
    }
    // The targets hold at W = 32 on one core: SGEMM at least 3 G lane-ops/s, the
    // register-blocked GEMM 2.5 G, the reduction and the histogram within 8x of native.
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    for r in rows {
        let rate = r.lane_ops as f64 / r.emulated.as_secs_f64() / 1e9;
        let ratio = r.emulated.as_secs_f64() / r.native.as_secs_f64();
        let line = match r.name {
            "sgemm" => format!(">= 3 G lane-ops/s: {}", verdict(rate >= 3.0)),
            "gemm8x8" => format!(">= 2.5 G lane-ops/s: {}", verdict(rate >= 2.5)),
            _ => format!("within 8x of native: {}", verdict(ratio <= 8.0)),
        };
        println!("  target {:<10} {line}", r.name);
    }
}

/// Thread counts to measure: 1, 2, 4, ... up to the cores, and the cores.
fn thread_counts() -> Vec<u32> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let mut counts: Vec<u32> =
        std::iter::successors(Some(1u32), |t| Some(t * 2)).take_while(|&t| t <= cores).collect();
    if counts.last() != Some(&cores) {
        counts.push(cores);
    }
    counts
}

/// Speedup and efficiency of `name` at each thread count against one thread: three rounds
/// over every count in turn (so that a machine whose speed drifts affects all counts alike),
/// the best time of each count.
fn scaling(name: &str, counts: &[u32], mut time: impl FnMut(u32) -> Duration) -> Vec<(u32, f64)> {
    let mut best = vec![Duration::MAX; counts.len()];
    for _ in 0..3 {
        for (b, &t) in best.iter_mut().zip(counts) {
            *b = (*b).min(time(t));
        }
    }
    let one = best[0];
    println!("  {name}: 1 thread {:.1} ms", one.as_secs_f64() * 1e3);
    let mut out = vec![(1, 1.0)];
    for (&t, d) in counts.iter().zip(&best).skip(1) {
        let speedup = one.as_secs_f64() / d.as_secs_f64();
        println!(
            "  {name}: {t} threads {:.1} ms, speedup {speedup:.2}x, efficiency {:.2}",
            d.as_secs_f64() * 1e3,
            speedup / f64::from(t)
        );
        out.push((t, speedup));
    }
    out
}

/// The median time of one-thread runs of `gemm` made on `cores` threads at once, each on its
/// own memory.
fn loaded_one_thread(gemm: &Gemm, w: u32, cores: usize) -> Duration {
    let mut times: Vec<Duration> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..cores)
            .map(|_| {
                scope.spawn(|| {
                    let mut memory = gemm.memory.clone();
                    let dispatch = gemm.dispatch(w, 1);
                    best(1, || {
                        run(&gemm.module, &dispatch, &mut memory).expect("the GEMM runs");
                    })
                })
            })
            .collect();
        runs.into_iter().filter_map(|r| r.join().ok()).collect()
    });
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn main() {
    let w = std::env::var("WAVE_WIDTH").ok().and_then(|v| v.parse().ok()).unwrap_or(32);
    // WAVE_BENCH=name runs one part (sgemm, gemm8x8, reduce, histogram, scaling); `source`
    // prints the register-blocked GEMM.
    let only = std::env::var("WAVE_BENCH").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if only.as_deref() == Some("source") {
        // The register-blocked kernel's text, to run it with `wave run`.
        print!("{}", gemm8x8());
        return;
    }
    let mut rows = Vec::new();
    let mut lane_ops = 0;

    if wanted("sgemm") {
        let mut gemm = Gemm::new(SGEMM, N, 16);
        let (emulated, lane_ops) = gemm.time(w, 1, 3);
        let native = gemm.check_native(3);
        rows.push(Row { name: "sgemm", lane_ops, emulated, native });
    }
    if wanted("gemm8x8") {
        let mut gemm = Gemm::new(&gemm8x8(), 512, 128);
        let (emulated, lane_ops) = gemm.time(w, 1, 3);
        let native = gemm.check_native(2);
        rows.push(Row { name: "gemm8x8", lane_ops, emulated, native });
    }
    let count = 1 << 20;
    // Reduction of 1 M values.
    if wanted("reduce") {
        let data: Vec<u32> =
            (0..count as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 20).collect();
        let module = wave_asm::assemble(REDUCE, "reduce.wave").module;
        let mut memory = vec![0u8; count * 4 + 64];
        put(&mut memory, 0, &data);
        let out = count * 4;
        let dispatch = Dispatch {
            grid: [(count / 1024) as u32, 1, 1],
            wave_width: w,
            args: vec![("data".into(), 0), ("out".into(), out as u32), ("n".into(), count as u32)],
            threads: 1,
            ..Dispatch::default()
        };
        let emulated = best(RUNS, || {
            put(&mut memory, out, &[0]);
            lane_ops = run(&module, &dispatch, &mut memory).expect("reduce runs").stats.lane_ops;
        });
        let mut sum = 0u32;
        let native = best(RUNS, || {
            sum = black_box(&data).iter().fold(0u32, |s, v| s.wrapping_add(*v));
        });
        assert_eq!(get(&memory, out, 1)[0], sum, "reduction differs from native");
        rows.push(Row { name: "reduce", lane_ops, emulated, native });
    }

    // Histogram of 1 MiB of bytes.
    if wanted("histogram") {
        let bytes: Vec<u8> =
            (0..count as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        let module = wave_asm::assemble(HISTOGRAM, "histogram.wave").module;
        let mut memory = vec![0u8; count + 1024];
        memory[..count].copy_from_slice(&bytes);
        let dispatch = Dispatch {
            grid: [(count / 4096) as u32, 1, 1],
            wave_width: w,
            args: vec![("data".into(), 0), ("bins".into(), count as u32)],
            threads: 1,
            ..Dispatch::default()
        };
        let emulated = best(RUNS, || {
            memory[count..].fill(0);
            lane_ops = run(&module, &dispatch, &mut memory).expect("histogram runs").stats.lane_ops;
        });
        let mut bins = [0u32; 256];
        let native = best(RUNS, || {
            bins = [0; 256];
            for b in black_box(&bytes) {
                bins[usize::from(*b)] += 1;
            }
        });
        assert_eq!(get(&memory, count, 256), bins.to_vec(), "histogram differs from native");
        rows.push(Row { name: "histogram", lane_ops, emulated, native });
    }
    report(&rows, w);

    if wanted("scaling") {
        let counts = thread_counts();
        println!(
            "scaling at W = {w} on {} threads ({} cores), best of 3 rounds over the counts, against one thread",
            counts.last().copied().unwrap_or(1),
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
        let mut sgemm = Gemm::new(SGEMM, 512, 16);
        let s = scaling("sgemm 512", &counts, |t| sgemm.time(w, t, 1).0);
        sgemm.check_native(1);
        // A core runs one thread faster when the others are idle (turbo frequencies, a
        // shared host): the same one-thread run made on every core at once shows what one
        // core gives when all are busy, the most t threads can make of t cores.
        let cores = counts.last().copied().unwrap_or(1);
        let loaded = loaded_one_thread(&sgemm, w, cores as usize);
        let parallel = best(2, || {
            sgemm.time(w, cores, 1);
        });
        let speedup = loaded.as_secs_f64() / parallel.as_secs_f64();
        println!(
            "  sgemm 512: one thread on each of {cores} cores at once {:.1} ms each; {cores} threads {:.1} ms: efficiency {:.2} against a busy core",
            loaded.as_secs_f64() * 1e3,
            parallel.as_secs_f64() * 1e3,
            speedup / f64::from(cores)
        );
        let mut blocked = Gemm::new(&gemm8x8(), 512, 128);
        scaling("gemm8x8 512", &counts, |t| blocked.time(w, t, 1).0);
        blocked.check_native(1);
        let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
        if let Some(&(_, two)) = s.iter().find(|(t, _)| *t == 2) {
            println!(
                "  target sgemm 512 >= 1.8x on 2 threads: {} ({two:.2}x)",
                verdict(two >= 1.8)
            );
        }
        match s.iter().find(|(t, _)| *t == 16) {
            Some(&(_, sixteen)) => println!(
                "  target sgemm 512 efficiency >= 0.8 on 16 threads: {} ({:.2})",
                verdict(sixteen / 16.0 >= 0.8),
                sixteen / 16.0
            ),
            None => println!(
                "  target sgemm 512 efficiency on 16 threads: not measured (fewer than 16 cores)"
            ),
        }
    }
}

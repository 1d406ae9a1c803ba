//! Emulator throughput on three real kernels, against plain native Rust doing the same work in
//! the same run: a tiled SGEMM (256 x 256 x 256, 16 x 16 tiles in local memory), a sum
//! reduction (wave_reduce plus one atomic per wave) and a 256-bin histogram (local atomics,
//! then device atomics). Prints lane-operations per second and the time ratio to native.
//! Run: `cargo bench -p wave-emulator --bench kernels`. Targets at W = 32 on one core: at
//! least 1.5 G lane-ops/s on the SGEMM, and each kernel within 15x of its native time.
//! Figures are recorded in docs/performance.md.

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

fn report(rows: &[Row], w: u32) {
    println!("emulator at W = {w}, one thread, best of 3 runs (SGEMM) or {RUNS} runs (the others)");
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
    // The targets hold at W = 32 on one core: SGEMM at least 1.5 G lane-ops/s, and every
    // kernel within 15x of its native time.
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    for r in rows {
        let rate = r.lane_ops as f64 / r.emulated.as_secs_f64() / 1e9;
        let ratio = r.emulated.as_secs_f64() / r.native.as_secs_f64();
        let speed = if r.name == "sgemm" {
            format!(">= 1.5 G lane-ops/s: {}; ", verdict(rate >= 1.5))
        } else {
            String::new()
        };
        println!("  target {:<10} {speed}within 15x of native: {}", r.name, verdict(ratio <= 15.0));
    }
}

fn main() {
    let w = std::env::var("WAVE_WIDTH").ok().and_then(|v| v.parse().ok()).unwrap_or(32);
    // WAVE_BENCH=name runs one kernel (for profiling).
    let only = std::env::var("WAVE_BENCH").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let mut rows = Vec::new();
    let mut lane_ops = 0;

    // SGEMM with small integer values so that every order of summation is exact.
    if wanted("sgemm") {
        let a: Vec<f32> = (0..N * N).map(|i| ((i * 7) % 5) as f32).collect();
        let b: Vec<f32> = (0..N * N).map(|i| ((i * 3) % 4) as f32).collect();
        let module = wave_asm::assemble(SGEMM, "sgemm.wave").module;
        let (ab, bb, cb) = (0, N * N * 4, 2 * N * N * 4);
        let mut memory = vec![0u8; 3 * N * N * 4];
        put(&mut memory, ab, &a.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        put(&mut memory, bb, &b.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        let dispatch = Dispatch {
            grid: [16, 16, 1],
            wave_width: w,
            args: vec![
                ("a".into(), ab as u32),
                ("b".into(), bb as u32),
                ("c".into(), cb as u32),
                ("n".into(), N as u32),
            ],
            ..Dispatch::default()
        };
        let emulated = best(3, || {
            let outcome = run(&module, &dispatch, &mut memory).expect("sgemm runs");
            lane_ops = outcome.stats.lane_ops;
        });
        let mut c = vec![0f32; N * N];
        let native = best(3, || {
            for i in 0..N {
                for j in 0..N {
                    let mut acc = 0f32;
                    for k in 0..N {
                        acc = a[i * N + k].mul_add(b[k * N + j], acc);
                    }
                    c[i * N + j] = acc;
                }
            }
            black_box(&c);
        });
        let got = get(&memory, cb, N * N);
        assert!(
            got.iter().zip(&c).all(|(g, e)| *g == e.to_bits()),
            "SGEMM results differ from native"
        );
        rows.push(Row { name: "sgemm", lane_ops, emulated, native });
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
}

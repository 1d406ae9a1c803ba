//! The kernel set on a CUDA GPU against CUDA C++ twins, in one run.
//!
//! Each of the eight kernels of `conformance/kernels/` is compiled from each of its four
//! languages (Python, Rust, C++, TypeScript, as users write them) at the levels asked for (-O2
//! by default), translated by the PTX backend for the GPU, and timed against its twin in
//! `benches/cuda/`, written the same way in CUDA C++ and compiled by `nvcc -O3`. Both run
//! through the same launcher (`wave-cuda`) over the same memory image, and each WAVE output is
//! checked against the twin's. The figure is the median of the timed runs (CUDA events around
//! each launch), after warm-up runs; the ratio is WAVE's time over the twin's.
//!
//! ```sh
//! cargo bench -p wave-runtime --bench gpu_kernels -- [--opt N]... [--only NAME]... [--runs N] [--quick]
//! ```
//!
//! Needs a CUDA GPU and `nvcc` (on `PATH`, in `$NVCC` or `/usr/local/cuda/bin`); without
//! either it says so and measures nothing. Target: every kernel within 1.10x of its twin at -O2.

#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a benchmark prints its table")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use wave_kernel::Language;
use wave_kernel::opt::Level;
use wave_runtime::{Dispatch, Gpu, LaunchPlan};

/// The target: WAVE at -O2 within this factor of CUDA.
const TARGET: f64 = 1.10;

/// How to compare an output region.
#[derive(Clone, Copy)]
enum Check {
    /// Bit for bit.
    Exact,
    /// `f32` values within a relative error (sums in another order, FMA contraction).
    Close(f32),
}

/// One kernel's benchmark: its dispatch and memory, and which bytes are its output.
struct Setup {
    name: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    /// The parameters' values, in declaration order (the same in every language).
    args: Vec<u32>,
    memory: Vec<u8>,
    outputs: Vec<(usize, usize, Check)>,
    size: String,
}

/// A reproducible stream of numbers (xorshift64*).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    }
}

fn put_f32(memory: &mut [u8], offset: usize, values: impl Iterator<Item = f32>) {
    for (i, v) in values.enumerate() {
        memory[offset + 4 * i..offset + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
}

fn put_u32(memory: &mut [u8], offset: usize, values: impl Iterator<Item = u32>) {
    for (i, v) in values.enumerate() {
        memory[offset + 4 * i..offset + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
}

fn setups(quick: bool) -> Vec<Setup> {
    let n: usize = if quick { 1 << 16 } else { 1 << 24 };
    let side: usize = if quick { 256 } else { 8192 };
    let dim: usize = if quick { 256 } else { 2048 };
    let threads: usize = if quick { 1 << 12 } else { 1 << 22 };
    let mut r = Random(0x9E37_79B9_7F4A_7C15);
    let u = |x: usize| x as u32;
    let mut out = Vec::new();

    let mut m = vec![0u8; 12 * n];
    put_f32(&mut m, 0, (0..n).map(|_| r.unit()));
    put_f32(&mut m, 4 * n, (0..n).map(|_| r.unit()));
    out.push(Setup {
        name: "vector_add",
        grid: [u(n / 64), 1, 1],
        block: [64, 1, 1],
        args: vec![0, u(4 * n), u(8 * n), u(n)],
        memory: m,
        outputs: vec![(8 * n, 4 * n, Check::Exact)],
        size: format!("n = {n}"),
    });

    let mut m = vec![0u8; 8 * n];
    put_f32(&mut m, 0, (0..n).map(|_| r.unit()));
    put_f32(&mut m, 4 * n, (0..n).map(|_| r.unit()));
    out.push(Setup {
        name: "saxpy",
        grid: [u(n / 64), 1, 1],
        block: [64, 1, 1],
        args: vec![1.5f32.to_bits(), 0, u(4 * n), u(n)],
        memory: m,
        // alpha * x + y may be one FMA on one side and two roundings on the other.
        outputs: vec![(4 * n, 4 * n, Check::Close(1e-6))],
        size: format!("n = {n}"),
    });

    let blocks = n / 256;
    let (partial, total) = (8 * n, 8 * n + 4 * blocks);
    let mut m = vec![0u8; total + 4];
    put_f32(&mut m, 0, (0..n).map(|_| r.unit()));
    put_u32(&mut m, 4 * n, (0..n).map(|_| r.next() % 8));
    out.push(Setup {
        name: "reduction",
        grid: [u(blocks), 1, 1],
        block: [256, 1, 1],
        args: vec![0, u(4 * n), u(partial), u(total), u(n)],
        memory: m,
        outputs: vec![(partial, 4 * blocks, Check::Close(1e-5)), (total, 4, Check::Exact)],
        size: format!("n = {n}"),
    });

    let mut m = vec![0u8; 4 * n + 64];
    put_u32(&mut m, 0, (0..n).map(|_| r.next()));
    out.push(Setup {
        name: "histogram",
        grid: [u(n / 128), 1, 1],
        block: [128, 1, 1],
        args: vec![0, u(4 * n), u(n)],
        memory: m,
        outputs: vec![(4 * n, 64, Check::Exact)],
        size: format!("n = {n}, 16 bins"),
    });

    let mut m = vec![0u8; 8 * n + 4 * blocks];
    put_u32(&mut m, 0, (0..n).map(|_| r.next() % 100));
    out.push(Setup {
        name: "prefix_sum",
        grid: [u(blocks), 1, 1],
        block: [256, 1, 1],
        args: vec![0, u(4 * n), u(8 * n), u(n)],
        memory: m,
        outputs: vec![(4 * n, 4 * n + 4 * blocks, Check::Exact)],
        size: format!("n = {n}"),
    });

    let cells = side * side;
    let mut m = vec![0u8; 8 * cells];
    put_f32(&mut m, 0, (0..cells).map(|_| r.unit()));
    out.push(Setup {
        name: "transpose",
        grid: [u(side / 16), u(side / 16), 1],
        block: [16, 16, 1],
        args: vec![0, u(4 * cells), u(side), u(side)],
        memory: m,
        outputs: vec![(4 * cells, 4 * cells, Check::Exact)],
        size: format!("{side} x {side}"),
    });

    out.push(Setup {
        name: "divergent_loop",
        grid: [u(threads / 32), 1, 1],
        block: [32, 1, 1],
        args: vec![0, u(4 * threads), u(threads), 500],
        memory: vec![0u8; 12 * threads],
        outputs: vec![(0, 12 * threads, Check::Exact)],
        size: format!("n = {threads}"),
    });

    let cells = dim * dim;
    let mut m = vec![0u8; 12 * cells];
    put_f32(&mut m, 0, (0..2 * cells).map(|_| r.unit()));
    out.push(Setup {
        name: "sgemm",
        grid: [u(dim / 16), u(dim / 16), 1],
        block: [16, 16, 1],
        args: vec![0, u(4 * cells), u(8 * cells), u(dim), u(dim), u(dim)],
        memory: m,
        outputs: vec![(8 * cells, 4 * cells, Check::Close(1e-4))],
        size: format!("{dim} x {dim} x {dim}"),
    });
    out
}

/// The first difference between two outputs, if any.
fn differs(a: &[u8], b: &[u8], check: Check) -> Option<String> {
    match check {
        Check::Exact => a.chunks(4).zip(b.chunks(4)).position(|(x, y)| x != y).map(|i| {
            format!("word {i}: {:02x?} against {:02x?}", &a[4 * i..4 * i + 4], &b[4 * i..4 * i + 4])
        }),
        Check::Close(tolerance) => {
            let f = |x: &[u8]| f32::from_le_bytes([x[0], x[1], x[2], x[3]]);
            a.chunks(4).zip(b.chunks(4)).enumerate().find_map(|(i, (x, y))| {
                let (x, y) = (f(x), f(y));
                let scale = x.abs().max(y.abs()).max(1.0);
                ((x - y).abs() > tolerance * scale || x.is_nan() != y.is_nan())
                    .then(|| format!("element {i}: {x} against {y}"))
            })
        }
    }
}

fn root() -> PathBuf {
    // From the repository root (as on a machine that runs a carried binary), or from the crate.
    if Path::new("conformance/kernels").is_dir() {
        PathBuf::from(".")
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }
}

fn nvcc() -> Option<PathBuf> {
    let candidates =
        std::env::var_os("NVCC")
            .map(PathBuf::from)
            .into_iter()
            .chain(std::env::var_os("PATH").into_iter().flat_map(|p| {
                std::env::split_paths(&p).map(|d| d.join("nvcc")).collect::<Vec<_>>()
            }))
            .chain([PathBuf::from("/usr/local/cuda/bin/nvcc")]);
    candidates.into_iter().find(|p| p.is_file())
}

struct Timed {
    ms: f64,
    registers: u32,
    memory: Vec<u8>,
}

fn time(
    gpu: &mut Gpu,
    ptx: &str,
    entry: &str,
    plan: &LaunchPlan,
    setup: &Setup,
    warmup: usize,
    runs: usize,
) -> Result<Timed, String> {
    let mut memory = setup.memory.clone();
    let run = gpu
        .time_ptx(ptx, entry, plan, &mut memory, warmup + runs, Duration::from_secs(60))
        .map_err(|e| e.to_string())?;
    let mut timed: Vec<f32> = run.times_ms[warmup..].to_vec();
    timed.sort_by(f32::total_cmp);
    Ok(Timed { ms: f64::from(timed[timed.len() / 2]), registers: run.registers, memory })
}

fn main() {
    let mut levels = Vec::new();
    let mut only = Vec::new();
    let (mut runs, mut quick) = (30, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--opt" => levels.extend(args.next().and_then(|d| Level::from_digit(&d))),
            "--only" => only.extend(args.next()),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--quick" => quick = true,
            // What cargo bench passes to every bench binary.
            "--bench" => {}
            other => {
                eprintln!("unknown argument `{other}`");
                std::process::exit(2);
            }
        }
    }
    if levels.is_empty() {
        levels.push(Level::O2);
    }
    let mut gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            println!("skipped: the GPU benchmark needs a CUDA GPU ({e})");
            return;
        }
    };
    let Some(nvcc) = nvcc() else {
        println!("skipped: the GPU benchmark needs nvcc for the CUDA twins (set NVCC or PATH)");
        return;
    };
    let info = gpu.info().clone();
    println!(
        "{} (compute capability {}.{}, {} SMs), PTX for sm_{}; nvcc {}; median of {runs} runs after 5 warm-up runs",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.multiprocessors,
        gpu.sm(),
        nvcc.display()
    );
    let root = root();
    let scratch = std::env::temp_dir().join(format!("wave-gpu-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&scratch);
    let languages = [
        (Language::Python, "python", "py"),
        (Language::Rust, "rust", "rs"),
        (Language::Cpp, "cpp", "cpp"),
        (Language::TypeScript, "typescript", "ts"),
    ];
    println!();
    println!(
        "| kernel | size | language | level | WAVE ms | CUDA ms | ratio | registers WAVE/CUDA | check |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut misses = Vec::new();
    let mut failures = 0;
    for setup in
        setups(quick).iter().filter(|s| only.is_empty() || only.iter().any(|o| o == s.name))
    {
        // The twin, compiled for this GPU.
        let cu = root.join("server/runtime/benches/cuda").join(format!("{}.cu", setup.name));
        let ptx_path = scratch.join(format!("{}.ptx", setup.name));
        let compiled = Command::new(&nvcc)
            .args(["-ptx", "-O3", &format!("-arch=sm_{}", info.sm())])
            .arg(&cu)
            .arg("-o")
            .arg(&ptx_path)
            .output();
        let twin_ptx = match compiled {
            Ok(o) if o.status.success() => std::fs::read_to_string(&ptx_path).unwrap_or_default(),
            Ok(o) => {
                println!("{}: nvcc failed: {}", setup.name, String::from_utf8_lossy(&o.stderr));
                failures += 1;
                continue;
            }
            Err(e) => {
                println!("{}: cannot run nvcc: {e}", setup.name);
                failures += 1;
                continue;
            }
        };
        let twin_plan = LaunchPlan {
            kernel: setup.name.into(),
            grid: setup.grid,
            block: setup.block,
            values: setup.args.clone(),
        };
        let twin = match time(&mut gpu, &twin_ptx, setup.name, &twin_plan, setup, 5, runs) {
            Ok(t) => t,
            Err(e) => {
                println!("{}: the CUDA twin failed: {e}", setup.name);
                failures += 1;
                continue;
            }
        };
        for &level in &levels {
            for (language, folder, ext) in languages {
                let file = root
                    .join("conformance/kernels")
                    .join(folder)
                    .join(format!("{}.{ext}", setup.name));
                let text = match std::fs::read_to_string(&file) {
                    Ok(t) => t,
                    Err(e) => {
                        println!("{}: {e}", file.display());
                        failures += 1;
                        continue;
                    }
                };
                let options = wave_kernel::Options { level, ..Default::default() };
                let (compiled, diagnostics) =
                    wave_kernel::compile(&text, language, &file.display().to_string(), options);
                let Some(compiled) = compiled else {
                    println!("{}: does not compile: {diagnostics:?}", file.display());
                    failures += 1;
                    continue;
                };
                let module = &compiled.module;
                let Some(kernel) = module.kernels.first() else { continue };
                let dispatch = Dispatch {
                    kernel: Some(kernel.name.clone()),
                    grid: setup.grid,
                    workgroup: Some(setup.block),
                    wave_width: 32,
                    args: kernel
                        .params
                        .iter()
                        .map(|p| p.name.clone())
                        .zip(setup.args.iter().copied())
                        .collect(),
                    ..Dispatch::default()
                };
                let result = LaunchPlan::new(module, &dispatch)
                    .map_err(|e| e.to_string())
                    .and_then(|plan| {
                        let (ptx, entry) =
                            gpu.translate(module, &plan.kernel).map_err(|e| e.to_string())?;
                        time(&mut gpu, &ptx, &entry, &plan, setup, 5, runs)
                    });
                let wave = match result {
                    Ok(w) => w,
                    Err(e) => {
                        println!("{}: {e}", file.display());
                        failures += 1;
                        continue;
                    }
                };
                let check = setup.outputs.iter().find_map(|&(at, len, how)| {
                    differs(&wave.memory[at..at + len], &twin.memory[at..at + len], how)
                });
                if check.is_some() {
                    failures += 1;
                }
                let ratio = wave.ms / twin.ms;
                if level == Level::O2 && ratio > TARGET {
                    misses.push(format!("{} ({folder}) x{ratio:.3}", setup.name));
                }
                println!(
                    "| {} | {} | {folder} | -O{} | {:.4} | {:.4} | x{ratio:.3} | {}/{} | {} |",
                    setup.name,
                    setup.size,
                    level.digit(),
                    wave.ms,
                    twin.ms,
                    wave.registers,
                    twin.registers,
                    check
                        .as_deref()
                        .map_or("same as CUDA".to_string(), |d| format!("DIFFERS: {d}"))
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    println!();
    if levels.contains(&Level::O2) {
        if misses.is_empty() {
            println!("target x{TARGET:.2} of CUDA at -O2: met for every kernel measured");
        } else {
            println!("target x{TARGET:.2} of CUDA at -O2: missed by {}", misses.join(", "));
        }
    }
    if failures > 0 {
        println!("{failures} runs failed or differed from CUDA");
        std::process::exit(1);
    }
}

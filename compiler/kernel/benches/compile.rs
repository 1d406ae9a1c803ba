//! Compile speed: a 1,000-line Python file of kernels (the kernel set, repeated under new
//! names) through the whole pipeline at O2 to a `.wbin`; the target is under 50 ms. The
//! baseline measured in the same run is the frontend alone (parse and HIR), so the ratio
//! shows what the middle and back end cost on top of it.
//!
//! Then each frontend alone (parse and lower to HIR) on a 1,000-line file of the kernel set
//! in its language; the target is under 20 ms each, and the ratio to the Python frontend,
//! measured in the same run, shows how the four compare.
//!
//! Then one kernel that grows: `divergent_loop`'s first loop nest written out 50, 100 and 200
//! times in one Python kernel (about 650, 1,300 and 2,600 lines), compiled at O2, with the
//! time per line and the ratio of each to the smallest (a compile linear in the kernel's
//! length keeps the time per line flat). No target: it shows how the passes scale.
//!
//! `cargo bench -p wave-kernel --bench compile`

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::time::{Duration, Instant};

use wave_kernel::{Language, Options, opt::Level};

const SOURCES: [&str; 8] = [
    include_str!("../../../conformance/kernels/python/vector_add.py"),
    include_str!("../../../conformance/kernels/python/saxpy.py"),
    include_str!("../../../conformance/kernels/python/reduction.py"),
    include_str!("../../../conformance/kernels/python/histogram.py"),
    include_str!("../../../conformance/kernels/python/prefix_sum.py"),
    include_str!("../../../conformance/kernels/python/sgemm.py"),
    include_str!("../../../conformance/kernels/python/transpose.py"),
    include_str!("../../../conformance/kernels/python/divergent_loop.py"),
];

/// The kernel set in each other language: the folder, the language, how a kernel's name is
/// introduced (renamed per copy), and the lines that may appear once only.
const OTHERS: [(&str, Language, &str, &[&str]); 3] = [
    ("rust", Language::Rust, "fn ", &[]),
    ("cpp", Language::Cpp, "void ", &["#include"]),
    ("typescript", Language::TypeScript, "function ", &["import"]),
];

const NAMES: [&str; 8] = [
    "vector_add",
    "saxpy",
    "reduction",
    "histogram",
    "prefix_sum",
    "sgemm",
    "transpose",
    "divergent_loop",
];

/// The kernel set of `dir`, each kernel renamed per copy, until the file has 1,000 lines.
fn other_file(dir: &str, language: Language, intro: &str, once: &[&str]) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/kernels");
    let sources: Vec<String> = NAMES
        .iter()
        .map(|n| {
            let path = root.join(dir).join(format!("{n}.{}", language.extension()));
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .collect();
    let mut out = String::new();
    for src in &sources {
        for l in src.lines().filter(|l| once.iter().any(|o| l.starts_with(o))) {
            if !out.contains(l) {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    let mut copy = 0;
    while out.lines().count() < 1000 {
        for src in &sources {
            for l in src.lines().filter(|l| !once.iter().any(|o| l.starts_with(o))) {
                // `export const vectorAdd = wave.kernel(...)` binds a name per copy too.
                let l = l.replace("export const ", &format!("export const k{copy}_"));
                match l.find(intro) {
                    Some(at) => {
                        out.push_str(&l[..at + intro.len()]);
                        out.push_str(&format!("k{copy}_"));
                        out.push_str(&l[at + intro.len()..]);
                    }
                    None => out.push_str(&l),
                }
                out.push('\n');
            }
        }
        copy += 1;
    }
    out
}

/// The kernel set, each kernel renamed per copy, until the file has 1,000 lines.
fn file() -> String {
    let mut out = String::from("import wave\n");
    let mut copy = 0;
    while out.lines().count() < 1000 {
        for src in SOURCES {
            let body: String = src
                .lines()
                .filter(|l| !l.starts_with("import"))
                .map(|l| match l.strip_prefix("def ") {
                    Some(rest) => format!("def k{copy}_{rest}\n"),
                    None => format!("{l}\n"),
                })
                .collect();
            out.push_str(&body);
        }
        copy += 1;
    }
    out
}

fn time(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    samples.sort();
    (samples[runs / 2], samples[runs * 95 / 100])
}

fn main() {
    let text = file();
    let lines = text.lines().count();
    let (kernels, d) = wave_kernel::hir(&text, Language::Python);
    assert!(d.is_empty(), "{d:?}");
    let options = Options { level: Level::O2, ..Default::default() };
    let (out, d) = wave_kernel::compile(&text, Language::Python, "bench.py", options);
    assert!(out.is_some(), "{d:?}");
    let runs = 30;
    let (front, front95) = time(runs, || {
        let _ = wave_kernel::hir(&text, Language::Python);
    });
    let (whole, whole95) = time(runs, || {
        let _ = wave_kernel::compile(&text, Language::Python, "bench.py", options);
    });
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("{lines} lines, {} kernels, O2 to .wbin, {runs} runs", kernels.len());
    println!(
        "frontend (parse + HIR), the baseline: median {:.2} ms, p95 {:.2} ms",
        ms(front),
        ms(front95)
    );
    println!(
        "whole pipeline:                       median {:.2} ms, p95 {:.2} ms",
        ms(whole),
        ms(whole95)
    );
    println!("ratio whole / frontend: {:.1}", ms(whole) / ms(front));
    println!(
        "target 50 ms: {} (median at {:.0}% of it)",
        if ms(whole95) < 50.0 { "met" } else { "MISSED" },
        ms(whole) / 50.0 * 100.0
    );
    println!();
    println!("each frontend alone on 1,000 lines of the kernel set (target 20 ms):");
    println!(
        "  Python      {lines} lines, {:3} kernels: median {:.2} ms, p95 {:.2} ms (the baseline)",
        kernels.len(),
        ms(front),
        ms(front95)
    );
    let mut all_met = ms(front95) < 20.0;
    for (dir, language, intro, once) in OTHERS {
        let text = other_file(dir, language, intro, once);
        let (kernels, d) = wave_kernel::hir(&text, language);
        assert!(d.is_empty(), "{dir}: {d:?}");
        let (median, p95) = time(runs, || {
            let _ = wave_kernel::hir(&text, language);
        });
        all_met &= ms(p95) < 20.0;
        println!(
            "  {:11} {} lines, {:3} kernels: median {:.2} ms, p95 {:.2} ms, x{:.2} of Python",
            language.name(),
            text.lines().count(),
            kernels.len(),
            ms(median),
            ms(p95),
            ms(median) / ms(front)
        );
    }
    println!("target 20 ms per frontend: {}", if all_met { "met" } else { "MISSED" });
    println!();
    println!("one kernel that grows (divergent_loop's first loop nest written out n times), O2:");
    let mut first: Option<f64> = None;
    for n in [50, 100, 200] {
        let text = long_kernel(n);
        let lines = text.lines().count();
        let (kernels, d) = wave_kernel::hir(&text, Language::Python);
        assert!(d.is_empty() && kernels.len() == 1, "{d:?}");
        let (median, _) = time(3, || {
            let _ = wave_kernel::compile(&text, Language::Python, "long.py", options);
        });
        let per_line = ms(median) / lines as f64;
        let base = *first.get_or_insert(per_line);
        println!(
            "  {lines:5} lines: median {:8.1} ms, {:.3} ms per line, x{:.2} the smallest's per line",
            ms(median),
            per_line,
            per_line / base
        );
    }
}

/// `divergent_loop` with its first loop nest (from `total: u32 = 0` to the line before
/// `out[i] = total`) written out `n` times.
fn long_kernel(n: usize) -> String {
    let source = SOURCES[7];
    let start = source.find("    total: u32 = 0\n").expect("the accumulator");
    let nest_start = start + "    total: u32 = 0\n".len();
    let nest_end = source.find("    out[i] = total").expect("the store");
    let mut out = source[..nest_start].to_owned();
    for _ in 0..n {
        out.push_str(&source[nest_start..nest_end]);
    }
    out.push_str("    out[i] = total\n");
    out
}

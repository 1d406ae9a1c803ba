//! Assembler throughput on a generated 100,000-line file.
//!
//! Prints lines per second, each the best of several runs in this process, for: tree-sitter
//! parsing alone (the baseline), tree-sitter parsing plus flattening into statements, the
//! whole assembler on the tree-sitter path, the line fast path's parse, and the whole
//! assembler as `wave asm` runs it (fast path, checks, encoding, line table); with each
//! one's time relative to the baseline. Run: `cargo bench -p wave-asm --bench assemble`. Target: 1,000,000 lines/s end to
//! end on one core. Figures are recorded in docs/performance.md.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::hint::black_box;
use std::time::{Duration, Instant};

/// A realistic mix: directives, arithmetic with registers, parameters and immediates, memory
/// with offsets, nested blocks, guards, comments, labels and calls.
fn generate(lines: usize) -> String {
    let body = [
        "    mov r4, sr_workgroup_id_x",
        "    mov r5, sr_workgroup_size_x",
        "    imad r7, r4, r5, r6         ; global index",
        "    icmp.lt p0, r7, n",
        "    if p0",
        "        shift.shl r8, r7, 2",
        "        iadd r9, a, r8",
        "        device_load.u32 r10, [r9 + 16]",
        "        fadd r12, r10, 1.5",
        "        @!p1 fmul r12, r12, r11",
        "        loop",
        "            iadd r13, r13, -1",
        "            icmp.eq p2, r13, 0",
        "            break p2",
        "            wave_reduce.add r14, r12",
        "        endloop",
        "        device_store.u32 [r9 + 4], r12",
        "    endif",
        "    atomic_add.workgroup r15, r9, r12",
        "    call helper",
    ];
    let mut out = String::new();
    let mut n = 0;
    let mut k = 0;
    while n < lines {
        out.push_str(&format!(".kernel k{k}\n.param a: ptr\n.param n: u32\n.workgroup_size 64\n"));
        n += 4;
        for _ in 0..45 {
            for line in body {
                out.push_str(line);
                out.push('\n');
            }
            n += body.len();
        }
        out.push_str("    halt\nhelper:\n    wave_prefix_sum r16, r3\n    return\n.end\n");
        n += 5;
        k += 1;
    }
    out
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

fn main() {
    let text = generate(100_000);
    let lines = text.lines().count();
    let check = wave_asm::assemble(&text, "bench.wave");
    assert!(!check.has_errors(), "{:?}", &check.diagnostics[..check.diagnostics.len().min(3)]);
    let runs = 5;
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_wave::LANGUAGE.into()).expect("grammar loads");
    let parse = best(runs, || {
        black_box(parser.parse(&text, None));
    });
    let flatten = best(runs, || {
        black_box(wave_asm::syntax::parse_tree(&text));
    });
    let tree_whole = best(runs, || {
        black_box(wave_asm::assemble_with_tree_sitter(&text, "bench.wave"));
    });
    let fast_parse = best(runs, || {
        black_box(wave_asm::syntax::parse(&text));
    });
    let whole = best(runs, || {
        black_box(wave_asm::assemble(&text, "bench.wave"));
    });
    let rate = |d: Duration| lines as f64 / d.as_secs_f64();
    let row = |name: &str, d: Duration| {
        println!(
            "  {name:<44} {:>8.1} ms {:>10.0} lines/s  {:>5.2}x baseline time",
            d.as_secs_f64() * 1e3,
            rate(d),
            d.as_secs_f64() / parse.as_secs_f64()
        );
    };
    println!("assembling {lines} lines ({} bytes), best of {runs} runs, one thread", text.len());
    row("tree-sitter parse only (baseline)", parse);
    row("tree-sitter parse + flatten to statements", flatten);
    row("assemble via tree-sitter (editor path)", tree_whole);
    row("line fast path: parse to statements", fast_parse);
    row("assemble (end to end, what `wave asm` does)", whole);
    println!(
        "  target 1,000,000 lines/s end to end: {} ({:.2}x the target)",
        if rate(whole) >= 1e6 { "met" } else { "NOT met" },
        rate(whole) / 1e6
    );
}

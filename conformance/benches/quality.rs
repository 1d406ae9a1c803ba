//! Code quality of the kernel compiler: registers (R) and dynamic instruction counts
//! (wave-instructions executed at W = 32 on each case's dispatch) of every kernel of the
//! Python set at O0..O3, next to the hand-written WAVE assembly of the same kernel, run in
//! the same process on the same data. The target at O2: no more registers than the
//! hand-written code, and within 10% of its dynamic instruction count.
//!
//! `cargo bench -p wave-conformance --bench quality`

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::path::PathBuf;

use wave_conformance::Case;
use wave_kernel::opt::Level;

/// R and wave-instructions of a case's kernel at W = 32.
fn measure(case: &Case) -> (u16, u64) {
    let assembly = wave_asm::assemble(&case.source, &case.source_name);
    assert!(!assembly.has_errors(), "{}: {:?}", case.path.display(), assembly.diagnostics);
    let module = assembly.module;
    let mut device = case.initial_memory();
    let outcome = wave_emulator::run(&module, &case.dispatch(32), &mut device)
        .unwrap_or_else(|t| panic!("{}: {t}", case.path.display()));
    if let wave_conformance::Expectation::Memory(blocks) = &case.expect {
        for b in blocks.iter().filter(|b| b.wave_width.is_none_or(|w| w == 32)) {
            wave_conformance::compare(b, &device)
                .unwrap_or_else(|e| panic!("{}: wrong result: {e}", case.path.display()));
        }
    }
    let name = case.kernel.as_deref();
    let kernel = match name {
        Some(n) => module.kernel(n).map(|(_, k)| k),
        None => module.kernels.first(),
    }
    .expect("the kernel");
    (kernel.registers, outcome.stats.instructions)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels");
    println!("registers (R) and wave-instructions executed at W = 32; ratio = O2 / hand-written");
    println!();
    println!(
        "| kernel | hand-written | O0 | O1 | O2 | O3 | O2 R vs hand | O2 instructions vs hand |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut misses = Vec::new();
    for name in wave_conformance::KERNEL_SET {
        let hand = Case::load(&root.join("handwritten").join(format!("{name}.toml")))
            .expect("hand-written case");
        let python =
            Case::load(&root.join("python").join(format!("{name}.toml"))).expect("python case");
        let (hr, hi) = measure(&hand);
        let mut cells = Vec::new();
        let mut o2 = (0, 0);
        for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
            let (r, i) = measure(&python.at_level(level));
            if level == Level::O2 {
                o2 = (r, i);
            }
            cells.push(format!("R={r} {i}"));
        }
        let ratio = o2.1 as f64 / hi as f64;
        println!(
            "| {name} | R={hr} {hi} | {} | {} vs {hr} {} | {ratio:.3} |",
            cells.join(" | "),
            o2.0,
            if o2.0 <= hr { "ok" } else { "MORE" },
        );
        if o2.0 > hr || ratio > 1.10 {
            misses.push(format!("{name}: O2 R={} vs {hr}, instructions x{ratio:.3}", o2.0));
        }
    }
    println!();
    if misses.is_empty() {
        println!("target met at O2 for every kernel: R <= hand-written, instructions within 10%");
    } else {
        println!("target missed at O2:");
        for m in misses {
            println!("  {m}");
        }
    }
}

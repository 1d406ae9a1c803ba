//! A compile can be stopped between its steps (issue 19): `compile_hir_with` calls its
//! checkpoint before each optimisation pass, each LIR pass and register allocation, and a
//! checkpoint that unwinds stops the compile there. The language server's checkpoint is
//! salsa's cancellation check, so an edit stops a compile of seconds at its next pass.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use wave_kernel::{Language, Options};

const KERNEL: &str = include_str!("../../../conformance/kernels/python/divergent_loop.py");

/// The marker a checkpoint unwinds with.
struct Stop;

#[test]
fn a_compile_calls_its_checkpoint_between_passes_and_stops_where_it_unwinds() {
    let (hir, d) = wave_kernel::hir(KERNEL, Language::Python);
    assert!(!wave_diag::has_errors(&d), "{d:?}");
    let options = Options::default();
    // Every call counted: at least one per optimisation pass.
    let calls = Cell::new(0usize);
    let count = || calls.set(calls.get() + 1);
    let out = wave_kernel::emit::compile_hir_with(&hir, KERNEL, "k.py", options, &count);
    assert!(out.is_ok());
    let passes = wave_kernel::opt::passes(options.level).len();
    assert!(calls.get() > passes, "{} checkpoints for {passes} passes", calls.get());
    // The same code as without checkpoints.
    let plain = wave_kernel::emit::compile_hir(&hir, KERNEL, "k.py", options).expect("compiles");
    assert_eq!(out.expect("compiles").asm, plain.asm);
    // Unwinding half way stops it there: the checkpoint is not called again.
    let stop_at = calls.get() / 2;
    let seen = Cell::new(0usize);
    let stopping = || {
        seen.set(seen.get() + 1);
        if seen.get() == stop_at {
            std::panic::resume_unwind(Box::new(Stop));
        }
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        wave_kernel::emit::compile_hir_with(&hir, KERNEL, "k.py", options, &stopping)
    }));
    let Err(payload) = result else { panic!("the compile was not stopped") };
    assert!(payload.is::<Stop>(), "stopped by the checkpoint, not by another panic");
    assert_eq!(seen.get(), stop_at, "nothing ran after the checkpoint that stopped it");
}

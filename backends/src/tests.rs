//! Unit tests of the backends; the conformance goldens live in `backends/tests/`.

use crate::{Options, Target, write_string};

fn module(source: &str) -> wave_wbin::Module {
    let a = wave_asm::assemble(source, "test.wave");
    assert!(!wave_diag::has_errors(&a.diagnostics), "{:?}", a.diagnostics);
    a.module
}

#[test]
fn every_target_translates_a_small_kernel() {
    let m = module(
        ".kernel k\n.param out: ptr\n    mov r1, sr_thread_id_x\n    shl r2, r1, 2\n    iadd r2, r2, out\n    device_store.u32 r2, r1\n.end\n",
    );
    for t in Target::ALL {
        let out = write_string(t, &m, &Options::default()).expect("translates");
        assert!(out.text.contains("device_store.u32"), "{t:?}: the source comment is there");
        assert_eq!(
            out.source_map.lines.len(),
            out.text.lines().count(),
            "{t:?}: one map entry per line"
        );
    }
}

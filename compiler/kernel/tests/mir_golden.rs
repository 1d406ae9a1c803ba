//! Golden tests of HIR to MIR: each kernel file of `tests/hir` that compiles is lowered to SSA
//! MIR, checked by the verifier, and its text must equal `tests/mir/NAME.mir`.
//! `UPDATE_EXPECT=1 cargo test -p wave-kernel` rewrites the expected files.

use std::path::Path;

#[test]
fn python_kernels_lower_to_verified_ssa() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut entries: Vec<_> = std::fs::read_dir(root.join("hir"))
        .expect("tests/hir")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let mut seen = 0;
    for path in entries {
        if path.extension().is_none_or(|e| e != "py") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("source");
        let (kernels, diagnostics) = wave_kernel::hir(&source, wave_kernel::Language::Python);
        if !diagnostics.is_empty() {
            continue;
        }
        let funcs: Vec<_> = kernels.iter().map(wave_kernel::mir::lower).collect();
        for f in &funcs {
            let problems = wave_kernel::mir::verify(f);
            assert!(
                problems.is_empty(),
                "{}: {problems:#?}\n{}",
                path.display(),
                wave_kernel::mir::print(&funcs)
            );
        }
        let got = wave_kernel::mir::print(&funcs);
        let expected_path =
            root.join("mir").join(path.file_name().expect("name")).with_extension("mir");
        if update {
            std::fs::write(&expected_path, &got).expect("write");
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        assert_eq!(got, expected, "{} (UPDATE_EXPECT=1 to accept)", expected_path.display());
        seen += 1;
    }
    assert!(seen >= 5, "{seen} kernels");
}

//! Golden tests of the back end: each kernel file of `tests/hir` that compiles is compiled at
//! O2; its LIR (before allocation) must equal `tests/lir/NAME.lir` and its assembly
//! `tests/asm/NAME.wave`. `UPDATE_EXPECT=1 cargo test -p wave-kernel` rewrites them.

use std::path::Path;

use wave_kernel::{Language, Options};

fn check(expected_path: &Path, got: &str, update: bool) {
    if update {
        std::fs::write(expected_path, got).expect("write");
    }
    let expected = std::fs::read_to_string(expected_path).unwrap_or_default();
    assert_eq!(got, expected, "{} (UPDATE_EXPECT=1 to accept)", expected_path.display());
}

#[test]
fn python_kernels_compile_to_the_expected_lir_and_assembly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut entries: Vec<_> = std::fs::read_dir(root.join("hir"))
        .expect("tests/hir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    entries.sort();
    let mut seen = 0;
    for path in entries {
        let source = std::fs::read_to_string(&path).expect("source");
        let name = path.file_name().expect("name").to_owned();
        let (out, diagnostics) =
            wave_kernel::compile(&source, Language::Python, "kernel.py", Options::default());
        let Some(out) = out else {
            assert!(
                diagnostics.iter().any(|d| d.is_error()),
                "{}: no output and no error",
                path.display()
            );
            continue;
        };
        let lirs: Vec<_> = out.kernels.iter().map(|k| k.lir.clone()).collect();
        for lir in &lirs {
            let problems = wave_kernel::lir::verify(lir);
            assert!(problems.is_empty(), "{}: {problems:?}", path.display());
        }
        check(
            &root.join("lir").join(&name).with_extension("lir"),
            &wave_kernel::lir::print(&lirs),
            update,
        );
        check(&root.join("asm").join(&name).with_extension("wave"), &out.asm, update);
        // The assembly is what was encoded: assembling it again gives the same code.
        let again = wave_asm::assemble(&out.asm, "again.wave");
        assert!(!again.has_errors(), "{}", path.display());
        assert_eq!(again.module.code, out.module.code);
        seen += 1;
    }
    assert!(seen >= 6, "{seen} kernels");
}

#[test]
fn the_line_table_points_into_the_kernel_source() {
    let source = include_str!("hir/vector_add.py");
    let (out, d) =
        wave_kernel::compile(source, Language::Python, "vector_add.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    assert_eq!(out.module.files, vec!["vector_add.py".to_string()]);
    let line_of = |needle: &str| {
        source.lines().position(|l| l.contains(needle)).map(|i| i as u32 + 1).expect("line")
    };
    let (_, kernel) = out.module.kernel("vector_add").expect("kernel");
    let mut mnemonics_at = std::collections::BTreeMap::<u32, Vec<String>>::new();
    let text = wave_asm::disassemble(&out.module);
    let mut offsets = Vec::new();
    for (offset, _) in out.module.instructions(kernel) {
        offsets.push(offset);
    }
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("    ")).collect();
    assert_eq!(lines.len(), offsets.len(), "{text}");
    for (offset, line) in offsets.iter().zip(&lines) {
        let entry = out.module.line_at(*offset).expect("every instruction has a line");
        assert_eq!(entry.file, 0);
        let mnemonic = line.split_whitespace().next().unwrap_or("").to_owned();
        mnemonics_at.entry(entry.line).or_default().push(mnemonic);
    }
    let body = line_of("        c[i] = a[i] + b[i]");
    assert!(
        mnemonics_at.get(&body).is_some_and(
            |m| m.iter().any(|x| x == "fadd") && m.iter().any(|x| x == "device_store.u32")
        ),
        "{mnemonics_at:?}"
    );
    let test = line_of("if i < n");
    assert!(
        mnemonics_at.get(&test).is_some_and(|m| m.iter().any(|x| x.starts_with("ucmp"))),
        "{mnemonics_at:?}"
    );
    let id = line_of("wave.global_id()");
    assert!(
        mnemonics_at.get(&id).is_some_and(|m| m.iter().any(|x| x == "imad")),
        "{mnemonics_at:?}"
    );
}

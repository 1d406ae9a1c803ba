//! Golden tests of the frontends: each `tests/hir/NAME.py` (and `.rs`, `.cpp`, `.ts`) is lowered
//! to HIR, and its text (or, for files with errors, its diagnostics as `line:column code
//! message`) must equal `tests/hir/NAME.hir`. `UPDATE_EXPECT=1 cargo test -p wave-kernel`
//! rewrites the expected files.

use std::path::Path;

fn render(source: &str, language: wave_kernel::Language) -> String {
    let (kernels, diagnostics) = wave_kernel::hir(source, language);
    if diagnostics.is_empty() {
        return wave_kernel::hir::print(&kernels);
    }
    let mut out = String::new();
    for d in &diagnostics {
        let before = &source[..d.span.start.min(source.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        out.push_str(&format!("{line}:{col} {} {}\n", d.code, d.message));
        for (span, label) in &d.labels {
            let before = &source[..span.start.min(source.len())];
            let l = before.matches('\n').count() + 1;
            out.push_str(&format!("    {l}: {label}\n"));
        }
    }
    out
}

#[test]
fn kernels_lower_to_the_expected_hir() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hir");
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut seen = 0;
    let mut entries: Vec<_> =
        std::fs::read_dir(&dir).expect("tests/hir").flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let Some(language) = wave_kernel::Language::from_extension(ext) else { continue };
        let source = std::fs::read_to_string(&path).expect("source");
        let got = render(&source, language);
        let expected_path = path.with_extension("hir");
        if update {
            std::fs::write(&expected_path, &got).expect("write");
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        assert_eq!(got, expected, "{} (UPDATE_EXPECT=1 to accept)", path.display());
        seen += 1;
    }
    assert!(seen >= 5, "{seen} golden files");
}

//! What the golden and toolchain tests share: every conformance case translated for every
//! target.

#![allow(dead_code, reason = "each test file uses part of it")]

use std::path::{Path, PathBuf};

use wave_backends::{Options, Target, Translation};

/// One case's output for one target: the translation, or the diagnostics that refuse it.
pub struct Output {
    /// The case file, relative to the repository root.
    pub case: PathBuf,
    /// `<area>/<name>`.
    pub key: String,
    pub target: Target,
    pub result: Result<Translation, String>,
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Options for `target`: PTX at `sm`.
pub fn options(sm: u32) -> Options {
    let mut o = Options::default();
    o.ptx.sm = sm;
    o
}

/// Every conformance case that assembles, for `target`.
pub fn outputs(target: Target, options: &Options) -> Vec<Output> {
    let root = root();
    let paths = wave_conformance::collect(&[root.join("conformance/cases")]).expect("cases");
    // The reference toolchain's own tests (`cases/reference`, docs/compatibility.md) check
    // that its programs assemble and run here; the cases above cover every instruction's
    // translation already, and 120 more goldens per backend would say nothing new.
    let reference = root.join("conformance/cases/reference");
    let mut out = Vec::new();
    for path in paths.into_iter().filter(|p| !p.starts_with(&reference)) {
        let case = wave_conformance::Case::load(&path).expect("case loads");
        let assembly = wave_asm::assemble(&case.source, &case.source_name);
        if assembly.has_errors() {
            continue;
        }
        // Relative to the repository, so that the goldens do not depend on where it is.
        let rel = path
            .strip_prefix(&root)
            .or_else(|_| path.strip_prefix(root.canonicalize().unwrap_or_default()))
            .unwrap_or(&path)
            .to_path_buf();
        let area = rel
            .parent()
            .and_then(|p| p.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = rel.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let result = wave_backends::write_string(target, &assembly.module, options).map_err(|e| {
            let lines: Vec<String> = e
                .problems
                .iter()
                .map(|p| {
                    let d = p.to_diagnostic(&assembly.module, &case.source);
                    let line =
                        case.source[..d.span.start.min(case.source.len())].lines().count().max(1);
                    format!("{}:{line}: {p}", rel.display())
                })
                .collect();
            lines.join("\n") + "\n"
        });
        out.push(Output { case: rel, key: format!("{area}/{name}"), target, result });
    }
    out
}

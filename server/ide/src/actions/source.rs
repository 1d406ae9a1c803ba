//! Diagnostics of kernel sources (`.py`, `.rs`, `.cpp`, `.ts`): the compiler's, as the
//! database placed them in the file. Code actions are assembly's only.

use super::FileDiagnostic;

/// The diagnostics of a kernel source.
pub(super) fn diagnostics(build: &wave_db::SourceBuild) -> Vec<FileDiagnostic> {
    build
        .diagnostics
        .iter()
        .map(|d| FileDiagnostic { diagnostic: d.clone(), hint: false, tags: Vec::new() })
        .collect()
}

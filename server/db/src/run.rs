//! What a run or a debug session of one kernel of a file starts from: the kernel compiled (a
//! kernel source, at the level asked) or assembled on its own (WAVE assembly), with where it
//! is in the file. The editor's runs, its lenses and the debugger all take their module from
//! here, so they run what the editor's diagnostics were computed on.

use std::ops::Range;

use wave_kernel::opt::Level;

use crate::{
    Db, SourceFile, check_kernel, kernels, read_chunk, source_chunks, source_language, source_units,
};

/// One kernel of a file, ready to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunModule {
    /// The module: for a kernel source, its unit's kernels with a line table of file lines;
    /// for assembly, the kernel alone with lines counted from its `.kernel` line.
    pub module: wave_wbin::Module,
    /// The kernel's bytes in the file.
    pub range: Range<usize>,
    /// The file line (from 1) of the module's line 1.
    pub first_line: u32,
    /// The kernel to dispatch by name when the module holds others (a kernel source's unit).
    pub only: Option<String>,
}

/// The kernels of `file` by name, in order: a kernel source's kernel functions, or the
/// `.kernel` blocks of assembly.
pub fn kernel_names(db: &dyn Db, file: SourceFile) -> Vec<String> {
    if source_language(db, file).is_some() {
        source_units(db, file).iter().flat_map(|u| u.kernels.iter().cloned()).collect()
    } else {
        kernels(db, file).kernels.iter().map(|k| k.name.clone()).collect()
    }
}

/// Kernel `kernel` of `file`, compiled at `level` when it is a kernel source, or the error
/// that stops it, as `path:line:column: error[code]: message`.
pub fn run_module(
    db: &dyn Db,
    file: SourceFile,
    kernel: &str,
    level: Level,
) -> Result<RunModule, String> {
    let text = file.text(db);
    let path = file.path(db);
    let at = |offset: usize| {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        (line, col)
    };
    let missing = || {
        let names = kernel_names(db, file);
        if names.is_empty() {
            format!("no kernel `{kernel}` in {path}: it has none")
        } else {
            format!("no kernel `{kernel}` in {path} (it has {})", names.join(", "))
        }
    };
    if source_language(db, file).is_some() {
        let unit = source_units(db, file).iter().find(|u| u.kernels.iter().any(|k| k == kernel));
        let unit = unit.ok_or_else(missing)?.build(db, level);
        if let Some(e) = unit.build.diagnostics.iter().find(|d| d.is_error()) {
            let (line, col) = at(unit.to_file(&e.span).start);
            return Err(format!(
                "{path}:{line}:{col}: error[{}]: {} (the kernel does not compile)",
                e.code, e.message
            ));
        }
        // The kernel function's own span (its chunk may hold others).
        let range = source_chunks(db, file)
            .iter()
            .find_map(|c| {
                let f = read_chunk(db, c.chunk)
                    .functions
                    .iter()
                    .find(|f| f.kernel && f.name == kernel)?;
                Some(c.start + f.span.start..c.start + f.span.end)
            })
            .unwrap_or(unit.starts[0]..unit.starts[0]);
        Ok(RunModule {
            module: unit.module_in_file(text, path),
            range,
            first_line: 1,
            only: Some(kernel.to_owned()),
        })
    } else {
        let layout = kernels(db, file);
        let span = layout.kernels.iter().find(|k| k.name == kernel).ok_or_else(missing)?;
        let check = check_kernel(db, span.source);
        if let Some(e) = check.diagnostics.iter().find(|d| d.is_error()) {
            let (line, col) = at(span.range.start + e.span.start);
            return Err(format!(
                "{path}:{line}:{col}: error[{}]: {} (the kernel does not assemble)",
                e.code, e.message
            ));
        }
        Ok(RunModule {
            module: check.module.clone(),
            range: span.range.clone(),
            first_line: at(span.range.start).0 as u32,
            only: None,
        })
    }
}

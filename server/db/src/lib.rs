//! The language server's database: salsa inputs and the incremental queries over them.
//!
//! Inputs are the open files ([`SourceFile`]: path, text, version) and the editor's settings
//! ([`Settings`]). A file is split into its kernels ([`kernels`]); each kernel's text is
//! interned without its position ([`KernelSource`]), so an edit inside one kernel leaves the
//! others' keys equal and only that kernel's queries run again ([`check_kernel`],
//! [`occupancy`], [`backend`]). File-level answers ([`file_diagnostics`]) put the per-kernel
//! results back at their place in the file.
//!
//! Memory stays bounded over a long editing session, which interns a new kernel text per
//! keystroke: per-kernel queries keep at most 4,096 results each (`lru`, least recently used
//! first out), and salsa reclaims interned texts unused for 3 revisions.
//!
//! Everything here wraps the pure crates; no LSP
//! types (positions stay byte offsets).

// salsa's macros generate accessors and constructors without doc comments.
#![allow(missing_docs, reason = "salsa-generated items have no doc comments")]

use std::ops::Range;

use wave_diag::Diagnostic;

mod run;
mod source;
pub use run::{RunModule, kernel_names, run_module};
pub use source::{
    Chunk, ChunkRead, Outlines, PlacedChunk, PlacedUnit, SourceBuild, Unit, UnitAt, UnitBuild,
    build_unit, read_chunk, source_build, source_chunks, source_units,
};

/// An open file.
#[salsa::input(debug)]
pub struct SourceFile {
    /// Its path or URI, for messages.
    #[returns(ref)]
    pub path: String,
    /// Its current text.
    #[returns(ref)]
    pub text: String,
    /// The editor's version of the text.
    pub version: i32,
}

/// The editor's settings.
#[salsa::input(debug)]
pub struct Settings {
    /// The target profile for occupancy (`wave info --list-targets`).
    #[returns(ref)]
    pub target: String,
    /// The backend of the preview (`ptx`, `hip`, `sycl`, `metal`).
    #[returns(ref)]
    pub preview: String,
    /// Threads per wave for occupancy and runs; 0 means the target profile's own.
    #[returns(copy)]
    pub wave_width: u32,
    /// Show the live register count at the end of each instruction line.
    #[returns(copy)]
    pub live_registers: bool,
}

/// One kernel's text, from its `.kernel` line to its `.end` line, without its position.
#[salsa::interned(debug)]
pub struct KernelSource<'db> {
    /// The text.
    #[returns(ref)]
    pub text: String,
}

/// Where a kernel is in its file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct KernelSpan<'db> {
    /// Its name (from the `.kernel` line).
    pub name: String,
    /// Its text.
    pub source: KernelSource<'db>,
    /// Byte range in the file.
    pub range: Range<usize>,
}

/// A file's kernels, and the text outside them.
#[derive(Clone, Debug, PartialEq, Eq, salsa::SalsaValue)]
pub struct FileLayout<'db> {
    /// The kernels, in order.
    pub kernels: Vec<KernelSpan<'db>>,
    /// The byte ranges of the lines outside every kernel (comments, blank lines or
    /// mistakes), in order, each with its newline.
    pub outside: Vec<Range<usize>>,
}

/// Splits a file into kernels: a kernel runs from a line whose first word is `.kernel` to the
/// next line whose first word is `.end` (or to the next `.kernel`, or the end of the file).
#[salsa::tracked(returns(ref))]
pub fn kernels<'db>(db: &'db dyn salsa::Database, file: SourceFile) -> FileLayout<'db> {
    let text = file.text(db);
    let mut kernels = Vec::new();
    let mut outside = Vec::new();
    let mut open: Option<(usize, String)> = None;
    let mut at = 0;
    let close = |kernels: &mut Vec<KernelSpan<'db>>, start: usize, end: usize, name: String| {
        let source = KernelSource::new(db, text[start..end].to_string());
        kernels.push(KernelSpan { name, source, range: start..end });
    };
    for line in text.split_inclusive('\n') {
        let first = line.split_whitespace().next().unwrap_or("");
        let end = at + line.len();
        if first.eq_ignore_ascii_case(".kernel") {
            if let Some((start, name)) = open.take() {
                close(&mut kernels, start, at, name);
            }
            let name = line.split_whitespace().nth(1).unwrap_or("").to_string();
            open = Some((at, name));
        } else if first.eq_ignore_ascii_case(".end") && open.is_some() {
            if let Some((start, name)) = open.take() {
                close(&mut kernels, start, end, name);
            }
        } else if open.is_none() {
            outside.push(at..end);
        }
        at = end;
    }
    if let Some((start, name)) = open.take() {
        close(&mut kernels, start, text.len(), name);
    }
    FileLayout { kernels, outside }
}

/// What checking one kernel gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelCheck {
    /// Diagnostics, with spans relative to the kernel's text.
    pub diagnostics: Vec<Diagnostic>,
    /// The kernel assembled (empty when it has errors).
    pub module: wave_wbin::Module,
    /// Its statements and comments (spans relative to the kernel's text).
    pub parsed: wave_asm::syntax::Parsed,
    /// Each encoded instruction with its statement (empty when it has errors).
    pub placed: Vec<wave_asm::Placed>,
    /// What the assembler knows of the kernel's source: name, labels, parameter spans.
    pub source: Option<wave_asm::KernelSource>,
}

/// Assembles one kernel on its own.
#[salsa::tracked(returns(ref), lru = 4096)]
pub fn check_kernel<'db>(db: &'db dyn salsa::Database, kernel: KernelSource<'db>) -> KernelCheck {
    let assembly = wave_asm::assemble(kernel.text(db), "kernel.wave");
    let ok = !assembly.has_errors();
    KernelCheck {
        module: if ok { assembly.module } else { wave_wbin::Module::default() },
        placed: if ok { assembly.placed } else { Vec::new() },
        source: assembly.kernels.into_iter().next(),
        parsed: assembly.parsed,
        diagnostics: assembly.diagnostics,
    }
}

/// Every diagnostic of the file, with spans in the file.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    let layout = kernels(db, file);
    let mut out = Vec::new();
    for k in &layout.kernels {
        let shift = |r: &Range<usize>| r.start + k.range.start..r.end + k.range.start;
        out.extend(check_kernel(db, k.source).diagnostics.iter().map(|d| d.moved(shift)));
    }
    // What stands outside every kernel, put back at its place in the file.
    if !outside_text(db, file).trim().is_empty() {
        let place =
            |r: &Range<usize>| outside_offset(layout, r.start)..outside_offset(layout, r.end);
        out.extend(check_outside(db, file).iter().map(|d| d.moved(place)));
    }
    out.sort_by_key(|d| (d.span.start, d.span.end));
    out
}

/// The lines outside every kernel (see [`FileLayout::outside`]), joined. Without positions,
/// so that an edit inside a kernel leaves it equal and the outside is not checked again.
#[salsa::tracked(returns(ref))]
pub fn outside_text(db: &dyn salsa::Database, file: SourceFile) -> String {
    let text = file.text(db);
    kernels(db, file).outside.iter().map(|r| &text[r.clone()]).collect()
}

/// The file offset of byte `at` of [`outside_text`] (the pieces are the layout's ranges, in
/// order).
fn outside_offset(layout: &FileLayout<'_>, at: usize) -> usize {
    let mut joined = 0;
    for r in &layout.outside {
        if at < joined + r.len() {
            return r.start + (at - joined);
        }
        joined += r.len();
    }
    layout.outside.last().map_or(0, |r| r.end)
}

/// Diagnostics of the text outside every kernel.
#[salsa::tracked(returns(ref))]
pub fn check_outside(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    wave_asm::assemble(outside_text(db, file), "outside.wave").diagnostics
}

/// A kernel's occupancy on the settings' target profile, as one line (the inlay hint:
/// `R=24 · 10 waves/core · limited by registers · free 4 for 12`), or `None` when the kernel
/// has errors or the profile is unknown.
#[salsa::tracked(returns(ref), lru = 4096)]
pub fn occupancy<'db>(
    db: &'db dyn salsa::Database,
    kernel: KernelSource<'db>,
    settings: Settings,
) -> Option<String> {
    let check = check_kernel(db, kernel);
    let k = check.module.kernels.first()?;
    occupancy_line(k, settings.target(db), settings.wave_width(db))
}

/// The occupancy line of a kernel on the target profile `target` (with `wave_width` threads
/// per wave, 0 for the profile's own): see [`occupancy`].
pub fn occupancy_line(k: &wave_wbin::Kernel, target: &str, wave_width: u32) -> Option<String> {
    let profile = wave_isa::target::profile(target)?;
    let mut constants = profile.constants;
    if wave_width != 0 {
        constants.wave_width = wave_width;
    }
    let [x, y, z] = k.workgroup_size.unwrap_or([64, 1, 1]);
    let resources = wave_isa::target::KernelResources {
        registers: u32::from(k.registers),
        local_memory: k.local_memory,
        workgroup_threads: x * y * z,
    };
    let o = wave_isa::target::occupancy(&constants, resources);
    if let Some(why) = o.rejections.first() {
        return Some(format!("R={} · cannot run on {}: {why}", k.registers, profile.name));
    }
    let mut line = format!(
        "R={} · {} waves/core · limited by {}",
        k.registers,
        o.resident_waves,
        o.limit.name()
    );
    if let Some(r) = o.registers_for_next_workgroup {
        let free = u32::from(k.registers).saturating_sub(r);
        line.push_str(&format!(" · free {free} for {}", o.resident_waves + o.waves_per_workgroup));
    }
    Some(line)
}

/// The kernel language of `file`, by its extension (`None`: WAVE assembly).
pub fn source_language(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> Option<wave_kernel::Language> {
    let path = file.path(db);
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (_, ext) = name.rsplit_once('.')?;
    wave_kernel::Language::from_extension(&ext.to_ascii_lowercase())
}

/// A kernel's code for `target`, or the backend's problems. Every preview of a kernel on a
/// target is computed once per kernel text.
#[salsa::tracked(returns(ref), lru = 4096)]
pub fn backend<'db>(
    db: &'db dyn salsa::Database,
    kernel: KernelSource<'db>,
    target: wave_backends::Target,
) -> Result<wave_backends::Translation, wave_backends::Error> {
    let check = check_kernel(db, kernel);
    wave_backends::write_string(target, &check.module, &wave_backends::Options::default())
}

/// What the queries of kernel sources need of the database beyond salsa's.
#[salsa::db]
pub trait Db: salsa::Database {
    /// The last outline of each kernel source (see [`source_chunks`]).
    fn outlines(&self) -> &Outlines;
}

/// The database.
#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
    outlines: std::sync::Arc<Outlines>,
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn outlines(&self) -> &Outlines {
        &self.outlines
    }
}

impl Database {
    /// A database that reports every query execution to `log` (for incremental tests).
    pub fn with_log(log: std::sync::Arc<std::sync::Mutex<Vec<String>>>) -> Database {
        Database {
            storage: salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
                if let salsa::EventKind::WillExecute { database_key } = event.kind
                    && let Ok(mut log) = log.lock()
                {
                    log.push(format!("{database_key:?}"));
                }
            }))),
            outlines: std::sync::Arc::default(),
        }
    }
}

#[cfg(test)]
mod tests;

//! Kernel source files (Python, Rust, C++, TypeScript), one kernel at a time.
//!
//! A file is cut into chunks that parse on their own ([`wave_kernel::outline`]; the cut
//! reuses the previous version's tree, so it costs a fraction of a parse). Each chunk's text
//! is interned without its position ([`Chunk`]) and read once ([`read_chunk`]: its functions
//! and whether each is a kernel). Each chunk holding a kernel is compiled as a [`Unit`]: its
//! text followed by the chunks holding helpers (which kernels call by name) and the
//! module-level constants it names (`TILE = 16`), so an edit inside
//! one kernel compiles that kernel again and nothing else, an edit in a helper compiles the
//! kernels that may call it again (whose text names it), and an edit elsewhere (host code,
//! comments, imports) only reads its chunk. [`source_build`] puts the units' answers back at their
//! place in the file.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use wave_diag::Diagnostic;
use wave_kernel::{Function, Language, outline::Outline};

use crate::{Db, SourceFile};

/// The last outline of each kernel source, whose tree the next version's parse reuses.
#[derive(Default)]
pub struct Outlines(Mutex<HashMap<SourceFile, Arc<Outline>>>);

impl Outlines {
    /// Forgets the outline of `file` (closed).
    pub fn forget(&self, file: SourceFile) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(&file);
        }
    }
}

/// The text of one chunk of a kernel source, without its position.
#[salsa::interned(debug)]
pub struct Chunk<'db> {
    /// The file's language.
    #[returns(copy)]
    pub language: Language,
    /// The text.
    #[returns(ref)]
    pub text: String,
}

/// A chunk at its place.
#[derive(Clone, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct PlacedChunk<'db> {
    /// The chunk.
    pub chunk: Chunk<'db>,
    /// Where its text starts in the file.
    pub start: usize,
}

/// The chunks of a kernel source, in order (empty for WAVE assembly).
#[salsa::tracked(returns(ref))]
pub fn source_chunks<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<PlacedChunk<'db>> {
    let Some(language) = crate::source_language(db, file) else { return Vec::new() };
    let text = file.text(db);
    let previous = db.outlines().0.lock().ok().and_then(|map| map.get(&file).cloned());
    let outline = wave_kernel::outline::outline(text, language, previous.as_deref());
    let chunks = outline
        .chunks
        .iter()
        .map(|r| PlacedChunk {
            chunk: Chunk::new(db, language, text[r.clone()].to_owned()),
            start: r.start,
        })
        .collect();
    if let Ok(mut map) = db.outlines().0.lock() {
        map.insert(file, Arc::new(outline));
    }
    chunks
}

/// What reading a chunk on its own gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkRead {
    /// Its functions, spans relative to the chunk.
    pub functions: Vec<Function>,
    /// The module-level constants it defines (a kernel naming one takes this chunk along).
    pub constants: Vec<String>,
    /// Code nested deeper than the compiler follows (E0412), reported wherever it is.
    pub nesting: Vec<Diagnostic>,
    /// Every word of the text that could name a function, sorted, once each (a superset of
    /// the helpers it calls).
    pub words: Vec<String>,
}

impl ChunkRead {
    /// Whether it holds a kernel.
    pub fn has_kernel(&self) -> bool {
        self.functions.iter().any(|f| f.kernel)
    }

    /// Whether it holds a helper (or a constant).
    pub fn has_helper(&self) -> bool {
        self.functions.iter().any(|f| !f.kernel) || !self.constants.is_empty()
    }
}

/// Reads one chunk: its functions.
#[salsa::tracked(returns(ref), lru = 4096)]
pub fn read_chunk<'db>(db: &'db dyn salsa::Database, chunk: Chunk<'db>) -> ChunkRead {
    let (functions, constants, diagnostics) =
        wave_kernel::read_with_constants(chunk.text(db), chunk.language(db));
    let nesting =
        diagnostics.into_iter().filter(|d| d.code == wave_kernel::front::codes::NESTING).collect();
    let text = chunk.text(db);
    let mut words: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .map(str::to_owned)
        .collect();
    words.sort_unstable();
    words.dedup();
    ChunkRead { functions, constants, nesting, words }
}

/// A chunk holding kernels, with the chunks holding the helpers they may call (whose names
/// appear in it, or in a helper it may call).
#[salsa::interned(debug)]
pub struct Unit<'db> {
    /// The chunk with the kernels.
    pub kernel: Chunk<'db>,
    /// The chunks with helpers it may call, in file order (without the kernel's own).
    #[returns(ref)]
    pub helpers: Vec<Chunk<'db>>,
}

/// What compiling a [`Unit`] gives. Spans are in [`UnitBuild::text`]: its chunks one
/// after the other (see [`UnitBuild::pieces`]).
#[derive(Clone, Debug, PartialEq)]
pub struct UnitBuild {
    /// The text compiled.
    pub text: String,
    /// Where each chunk is in it: the kernel's chunk first, then the helpers'.
    pub pieces: Vec<Range<usize>>,
    /// The typed HIR of each kernel.
    pub hir: Vec<wave_kernel::hir::Kernel>,
    /// Every diagnostic.
    pub diagnostics: Vec<Diagnostic>,
    /// The compiled kernels (empty when there are errors); line numbers are lines of `text`.
    pub module: wave_wbin::Module,
    /// The generated assembly, and for each of its lines the span it comes from.
    pub asm: String,
    /// See [`UnitBuild::asm`].
    pub asm_spans: Vec<Option<Range<usize>>>,
    /// The optimised MIR, and for each of its lines the span.
    pub mir: String,
    /// See [`UnitBuild::mir`].
    pub mir_spans: Vec<Option<Range<usize>>>,
}

// (HIR holds f64 constants; a NaN compares unequal and only costs a recomputation.)
impl Eq for UnitBuild {}

/// Compiles a unit: its chunks' text as one file, at `level` (the editor's builds are `-O2`,
/// a debug session's `-O0` unless its launch says otherwise).
#[salsa::tracked(returns(ref), lru = 4096)]
pub fn build_unit<'db>(
    db: &'db dyn salsa::Database,
    unit: Unit<'db>,
    level: wave_kernel::opt::Level,
) -> Arc<UnitBuild> {
    let language = unit.kernel(db).language(db);
    let mut text = String::new();
    let mut pieces = Vec::new();
    for chunk in std::iter::once(*unit.kernel(db)).chain(unit.helpers(db).iter().copied()) {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        let start = text.len();
        text.push_str(chunk.text(db));
        pieces.push(start..text.len());
    }
    let (hir, mut diagnostics) = wave_kernel::hir(&text, language);
    let mut build = UnitBuild {
        text: String::new(),
        pieces,
        hir,
        diagnostics: Vec::new(),
        module: wave_wbin::Module::default(),
        asm: String::new(),
        asm_spans: Vec::new(),
        mir: String::new(),
        mir_spans: Vec::new(),
    };
    if !wave_diag::has_errors(&diagnostics) && !build.hir.is_empty() {
        let options = wave_kernel::Options { level, ..Default::default() };
        let name = format!("kernel.{}", language.extension());
        // An edit that supersedes this compile stops it between two of its passes (a kernel
        // of thousands of lines takes seconds), not only at the next query.
        let checkpoint = || db.unwind_if_revision_cancelled();
        match wave_kernel::emit::compile_hir_with(&build.hir, &text, &name, options, &checkpoint) {
            Ok(out) => {
                let mir: Vec<_> = out.kernels.iter().map(|k| k.mir.clone()).collect();
                build.mir = wave_kernel::mir::print(&mir);
                build.mir_spans = wave_kernel::mir::line_spans(&mir);
                build.module = out.module;
                build.asm = out.asm;
                build.asm_spans = out.asm_spans;
            }
            Err(d) => diagnostics.extend(d),
        }
    }
    build.diagnostics = diagnostics;
    build.text = text;
    Arc::new(build)
}

/// A unit's build at its place in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedUnit {
    /// The build.
    pub build: Arc<UnitBuild>,
    /// Where each of its pieces starts in the file.
    pub starts: Vec<usize>,
    /// The kernels of its own chunk (the first piece), by name.
    pub kernels: Vec<String>,
}

impl PlacedUnit {
    /// The file span of a span of the unit's text (an end past its piece stays in the piece).
    pub fn to_file(&self, span: &Range<usize>) -> Range<usize> {
        let pieces = &self.build.pieces;
        let p = pieces.iter().rposition(|p| p.start <= span.start).unwrap_or(0);
        let (piece, start) = (&pieces[p], self.starts[p]);
        let end = span.end.clamp(span.start, piece.end.max(span.start));
        let at = |o: usize| start + o.min(piece.end).saturating_sub(piece.start);
        at(span.start)..at(end)
    }

    /// The offset in the unit's text of file offset `offset`, if one of its pieces holds it.
    pub fn to_unit(&self, offset: usize) -> Option<usize> {
        self.build.pieces.iter().zip(&self.starts).find_map(|(piece, start)| {
            (*start <= offset && offset <= start + piece.len())
                .then(|| piece.start + (offset - start))
        })
    }

    /// The 1-based file line of 1-based line `line` of the unit's text, given the file's
    /// text.
    pub fn file_line(&self, file: &str, line: u32) -> Option<u32> {
        let text = &self.build.text;
        let line_start = match line {
            0 => return None,
            1 => 0,
            n => text.match_indices('\n').nth(n as usize - 2)?.0 + 1,
        };
        let span = self.to_file(&(line_start..line_start));
        Some(file[..span.start.min(file.len())].matches('\n').count() as u32 + 1)
    }

    /// The unit's module with its line table naming lines of the file (`file`: its text,
    /// `path`: its name).
    pub fn module_in_file(&self, file: &str, path: &str) -> wave_wbin::Module {
        let mut module = self.build.module.clone();
        // Every line of the unit's text once, in order.
        let mut starts = vec![0];
        starts.extend(self.build.text.match_indices('\n').map(|(i, _)| i + 1));
        let lines: Vec<u32> = starts
            .iter()
            .map(|s| {
                let span = self.to_file(&(*s..*s));
                file[..span.start.min(file.len())].matches('\n').count() as u32 + 1
            })
            .collect();
        let map =
            |l: u32| l.checked_sub(1).and_then(|i| lines.get(i as usize)).copied().unwrap_or(l);
        for e in &mut module.lines {
            let first = e.line;
            e.line = map(e.line);
            e.end_line = map(e.end_line.max(first));
        }
        module.files = vec![path.to_owned()];
        module
    }
}

/// What a kernel source gives the editor (see the module documentation). Only the kernels and
/// the helpers they call are the server's: diagnostics elsewhere in the file (a syntax error
/// in other code, "no kernel") are left to the language's own server, and a file without
/// kernels gets nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceBuild {
    /// The language.
    pub language: Language,
    /// The kernels and helpers of the file, with their spans in the file.
    pub functions: Vec<Function>,
    /// The diagnostics inside the functions, in the file.
    pub diagnostics: Vec<Diagnostic>,
    /// The compiled chunks with kernels, in file order.
    pub units: Vec<PlacedUnit>,
}

impl SourceBuild {
    /// The unit that compiles kernel `name` (the first of that name).
    pub fn unit_of(&self, name: &str) -> Option<&PlacedUnit> {
        self.units.iter().find(|u| u.kernels.iter().any(|k| k == name))
    }

    /// The compiled kernel `name`, with its unit (`None` when it does not compile).
    pub fn kernel(&self, name: &str) -> Option<(&PlacedUnit, &wave_wbin::Kernel)> {
        let unit = self.unit_of(name)?;
        Some((unit, unit.build.module.kernel(name)?.1))
    }
}

/// The chunks with helpers whose names chunk `i` mentions, and those they mention in turn,
/// in file order (without `i`).
fn called(reads: &[&ChunkRead], helpers: &HashMap<&str, Vec<usize>>, i: usize) -> Vec<usize> {
    let mut seen = vec![false; reads.len()];
    seen[i] = true;
    let mut todo = vec![i];
    while let Some(c) = todo.pop() {
        for w in &reads[c].words {
            for h in helpers.get(w.as_str()).into_iter().flatten() {
                if !seen[*h] {
                    seen[*h] = true;
                    todo.push(*h);
                }
            }
        }
    }
    seen[i] = false;
    (0..reads.len()).filter(|c| seen[*c]).collect()
}

/// A unit that compiles a chunk with kernels, and where its pieces are in the file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct UnitAt<'db> {
    /// The unit.
    pub unit: Unit<'db>,
    /// Where each of its pieces starts in the file.
    pub starts: Vec<usize>,
    /// The kernels of its own chunk, by name.
    pub kernels: Vec<String>,
}

impl UnitAt<'_> {
    /// The unit compiled at `level`, at its place.
    pub fn build(&self, db: &dyn salsa::Database, level: wave_kernel::opt::Level) -> PlacedUnit {
        PlacedUnit {
            build: build_unit(db, self.unit, level).clone(),
            starts: self.starts.clone(),
            kernels: self.kernels.clone(),
        }
    }
}

/// The units of a kernel source: one per chunk with kernels, with the helpers it calls (empty
/// for WAVE assembly).
#[salsa::tracked(returns(ref))]
pub fn source_units<'db>(db: &'db dyn Db, file: SourceFile) -> Vec<UnitAt<'db>> {
    let chunks = source_chunks(db, file);
    let reads: Vec<&ChunkRead> = chunks.iter().map(|c| read_chunk(db, c.chunk)).collect();
    // Each helper's name, to the chunks defining it.
    let mut helpers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, read) in reads.iter().enumerate() {
        for f in read.functions.iter().filter(|f| !f.kernel) {
            helpers.entry(f.name.as_str()).or_default().push(i);
        }
        // A constant is taken along as a helper is.
        for c in &read.constants {
            helpers.entry(c.as_str()).or_default().push(i);
        }
    }
    let mut units = Vec::new();
    for (i, (c, read)) in chunks.iter().zip(&reads).enumerate() {
        if !read.has_kernel() {
            continue;
        }
        let others = called(&reads, &helpers, i);
        let unit =
            Unit::new(db, c.chunk, others.iter().map(|h| chunks[*h].chunk).collect::<Vec<_>>());
        let mut starts = vec![c.start];
        starts.extend(others.iter().map(|h| chunks[*h].start));
        let kernels = read.functions.iter().filter(|f| f.kernel).map(|f| f.name.clone()).collect();
        units.push(UnitAt { unit, starts, kernels });
    }
    units
}

/// Compiles a kernel source file one unit at a time at `-O2` (see [`SourceBuild`]); `None`
/// for WAVE assembly.
#[salsa::tracked(returns(ref))]
pub fn source_build(db: &dyn Db, file: SourceFile) -> Option<SourceBuild> {
    let language = crate::source_language(db, file)?;
    let chunks = source_chunks(db, file);
    let mut functions = Vec::new();
    let mut diagnostics = Vec::new();
    for c in chunks {
        let read = read_chunk(db, c.chunk);
        let shift = |r: &Range<usize>| r.start + c.start..r.end + c.start;
        diagnostics.extend(read.nesting.iter().map(|d| d.moved(shift)));
        functions.extend(read.functions.iter().map(|f| Function {
            name: f.name.clone(),
            span: shift(&f.span),
            name_span: shift(&f.name_span),
            kernel: f.kernel,
        }));
    }
    let units: Vec<PlacedUnit> =
        source_units(db, file).iter().map(|u| u.build(db, wave_kernel::opt::Level::O2)).collect();
    // The units' diagnostics, in the file.
    for u in &units {
        diagnostics.extend(u.build.diagnostics.iter().map(|d| d.moved(|r| u.to_file(r))));
    }
    // Kernels need distinct names (a unit only sees its own).
    let mut seen: HashMap<&str, &Function> = HashMap::new();
    for f in functions.iter().filter(|f| f.kernel) {
        match seen.get(f.name.as_str()) {
            Some(first) => diagnostics.push(
                Diagnostic::error(
                    wave_kernel::front::codes::UNSUPPORTED,
                    f.span.clone(),
                    format!(
                        "a kernel named `{}` is already defined: kernels need distinct names",
                        f.name
                    ),
                )
                .with_label(first.span.clone(), "first defined here"),
            ),
            None => {
                seen.insert(&f.name, f);
            }
        }
    }
    let inside = |d: &Diagnostic| {
        functions.iter().any(|f| f.span.start <= d.span.start && d.span.end <= f.span.end)
    };
    // Nesting the compiler does not follow stops it before it finds the functions: that
    // error is the file's, wherever it is.
    diagnostics.retain(|d| {
        d.code != wave_kernel::front::codes::NO_KERNEL
            && (inside(d) || d.code == wave_kernel::front::codes::NESTING)
    });
    // A helper's problem is found by every unit that calls it: once is enough.
    diagnostics.sort_by(|a, b| {
        (a.span.start, a.span.end, a.code, &a.message).cmp(&(
            b.span.start,
            b.span.end,
            b.code,
            &b.message,
        ))
    });
    diagnostics.dedup();
    Some(SourceBuild { language, functions, diagnostics, units })
}

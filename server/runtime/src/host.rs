//! The Rust API for calling WAVE kernels from a program: compile (or load) a kernel, pick a
//! device, fill buffers, launch, read the results.
//!
//! ```no_run
//! use wave_runtime::host::{Arg, Device, Language, Launch, Options, Program, Source};
//!
//! let source = "import wave\n@wave.kernel(workgroup=64)\ndef add(a: f32[:], b: f32[:], c: f32[:], n: u32):\n    i = wave.global_id()\n    if i < n:\n        c[i] = a[i] + b[i]\n";
//! let program = Program::compile(
//!     Source::Kernel { text: source, language: Language::Python },
//!     "add.py",
//!     &Options::default(),
//! )?;
//! let device = Device::emulator();
//! let a = device.buffer_from(&[1.0f32, 2.0, 3.0])?;
//! let b = device.buffer_from(&[10.0f32, 20.0, 30.0])?;
//! let c = device.buffer::<f32>(3)?;
//! device.launch(&program, "add", &Launch::grid([1, 1, 1]), &mut [
//!     Arg::Buffer(&a), Arg::Buffer(&b), Arg::Buffer(&c), Arg::U32(3),
//! ])?;
//! assert_eq!(c.read::<f32>()?, [11.0, 22.0, 33.0]);
//! # Ok::<(), wave_runtime::host::Error>(())
//! ```
//!
//! How it is built:
//! - A [`Program`] is compiled once per source text, options and file name: programs are
//!   cached in memory (a second [`Program::compile`] of the same source is a hash and a map
//!   look-up) and on disk ([`cache_dir`]), keyed also by a hash of the compiler's own source
//!   (`build.rs`), so a changed compiler never reuses old code.
//! - The emulator's device memory is built for each launch: every buffer argument is copied
//!   into one memory (each aligned to 256 bytes), the kernel runs, and the buffers the kernel
//!   may write are copied back. A buffer passed twice is placed once, so aliasing holds.
//! - On a CUDA GPU, buffers live in device memory; a launch passes the lowest buffer's address
//!   as the kernel's memory and each buffer as its distance from there (the PTX backend
//!   addresses `memory + u32`), so arrays of other libraries (CuPy, PyTorch) are used where
//!   they are, as long as all of a launch's buffers lie within 4 GiB of each other. Host
//!   slices are copied to temporary device memory and back.
//! - Each kernel's PTX is translated and loaded by the driver once per device.

use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use wave_emulator::Interrupt;
pub use wave_kernel::Language;
use wave_kernel::hir::{self, ExprKind, Scalar, StmtKind, Ty};
use wave_wbin::{Module, ParamType};

use crate::{DeviceSpec, GpuError};

/// Alignment of each buffer in a launch's memory.
const ALIGN: usize = 256;

/// The element type of a buffer, or the type of a scalar parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    /// `bool` (a scalar parameter passed as 0 or 1).
    Bool,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `f16`.
    F16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl Elem {
    /// The name in kernel annotations (`f32`).
    pub fn name(self) -> &'static str {
        match self {
            Elem::Bool => "bool",
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::F16 => "f16",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }

    /// Bytes per element in a buffer.
    pub fn size(self) -> usize {
        match self {
            Elem::F16 => 2,
            Elem::F64 => 8,
            Elem::Bool | Elem::I32 | Elem::U32 | Elem::F32 => 4,
        }
    }

    fn of(s: Scalar) -> Elem {
        match s {
            Scalar::Bool => Elem::Bool,
            Scalar::I32 => Elem::I32,
            Scalar::U32 => Elem::U32,
            Scalar::F16 => Elem::F16,
            Scalar::F32 => Elem::F32,
            Scalar::F64 => Elem::F64,
        }
    }

    fn from_name(name: &str) -> Option<Elem> {
        [Elem::Bool, Elem::I32, Elem::U32, Elem::F16, Elem::F32, Elem::F64]
            .into_iter()
            .find(|e| e.name() == name)
    }
}

/// A plain value type that buffers hold: `f32`, `f64`, `i32`, `u32`.
pub trait Element: Copy + Default + 'static {
    /// Its element type.
    const ELEM: Elem;
    /// Its little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// The value of `bytes` (exactly [`Elem::size`] of them).
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $e:expr) => {
        impl Element for $t {
            const ELEM: Elem = $e;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    };
}
element!(f32, Elem::F32);
element!(f64, Elem::F64);
element!(i32, Elem::I32);
element!(u32, Elem::U32);

/// What a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A buffer of `elem` (unknown for assembly and `.wbin`, whose pointers are untyped);
    /// `written` when the kernel may store into it (or, unknown, may).
    Buffer {
        /// The element type, where the source says.
        elem: Option<Elem>,
        /// Whether the kernel may write it.
        written: bool,
    },
    /// A scalar.
    Scalar(Elem),
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// What it takes.
    pub kind: ParamKind,
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ParamKind::Buffer { elem: Some(e), .. } => write!(f, "{}: {}[:]", self.name, e.name()),
            ParamKind::Buffer { elem: None, .. } => write!(f, "{}: ptr", self.name),
            ParamKind::Scalar(e) => write!(f, "{}: {}", self.name, e.name()),
        }
    }
}

/// A kernel of a [`Program`]: its name, parameters and declared workgroup size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelInfo {
    /// Its name.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// The workgroup size the source declares.
    pub workgroup_size: Option<[u32; 3]>,
}

impl KernelInfo {
    /// `name(a: f32[:], n: u32)`.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|p| p.to_string()).collect();
        format!("{}({})", self.name, params.join(", "))
    }
}

/// How to compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// Optimisation level, 0 to 3 (`-O`).
    pub opt_level: u8,
    /// The most registers a kernel may use before it spills.
    pub max_registers: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { opt_level: 2, max_registers: 64 }
    }
}

/// What to compile or load.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A kernel in Python, Rust, C++ or TypeScript.
    Kernel {
        /// The whole file's text.
        text: &'a str,
        /// Its language.
        language: Language,
    },
    /// WAVE assembly.
    Assembly(&'a str),
    /// A `.wbin`.
    Wbin(&'a [u8]),
}

/// Why something could not be done. Every variant's text is complete (the rendered
/// diagnostic of a compile error, the source line of a trap).
#[derive(Clone, Debug)]
pub enum Error {
    /// The source does not compile.
    Compile(Box<CompileError>),
    /// The kernel trapped on the emulator.
    Trap(Box<TrapError>),
    /// The run was interrupted (its [`Interrupt`] said so).
    Interrupted(String),
    /// The arguments or the launch do not fit the kernel.
    Argument(String),
    /// The device cannot do it (no GPU, the driver failed, the kernel faulted on the GPU).
    Device(String),
    /// A file could not be read.
    Io(String),
}

/// A compile error: the rustc-style rendering and the diagnostics it renders.
#[derive(Clone, Debug)]
pub struct CompileError {
    /// The file name the diagnostics name.
    pub file: String,
    /// Every diagnostic, rendered with the source lines they point at.
    pub rendered: String,
    /// The diagnostics (errors and warnings), spans in the source text.
    pub diagnostics: Vec<wave_diag::Diagnostic>,
    /// The source text (for line and column numbers of the spans).
    pub text: Arc<str>,
}

impl CompileError {
    /// The first error: its code, message, and 1-based line and column.
    pub fn first(&self) -> Option<(&str, &str, u32, u32)> {
        let d = self.diagnostics.iter().find(|d| d.is_error())?;
        let (line, column) = line_column(&self.text, d.span.start);
        Some((d.code, d.message.as_str(), line, column))
    }
}

/// A trap on the emulator, with where it happened.
#[derive(Clone, Debug)]
pub struct TrapError {
    /// The emulator's trap (message, kernel, pc, source line, workgroup, wave, lane).
    pub trap: wave_emulator::Trap,
    /// The source file.
    pub file: String,
    /// The text of the source line, where the line table has one.
    pub source_line: Option<String>,
    /// The rendered message.
    pub rendered: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Compile(e) => f.write_str(e.rendered.trim_end()),
            Error::Trap(e) => f.write_str(&e.rendered),
            Error::Interrupted(m) | Error::Argument(m) | Error::Device(m) | Error::Io(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<GpuError> for Error {
    fn from(e: GpuError) -> Error {
        Error::Device(e.to_string())
    }
}

/// The 1-based line and column (in bytes) of byte `at` of `text`.
pub fn line_column(text: &str, at: usize) -> (u32, u32) {
    let at = at.min(text.len());
    let before = &text.as_bytes()[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    let start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    (line, (at - start) as u32 + 1)
}

/// A compiled (or loaded) module and what its kernels take.
#[derive(Debug)]
pub struct Program {
    id: u128,
    file: String,
    text: Arc<str>,
    module: Module,
    kernels: Vec<KernelInfo>,
    from_disk: bool,
    /// The warnings of the compile (none when the program came from a cache on disk).
    warnings: Vec<wave_diag::Diagnostic>,
    /// The warnings rendered (kept in the disk cache too).
    rendered_warnings: String,
}

impl Program {
    /// Compiles (assembles, loads) `source`, named `file` in messages, or returns the program
    /// compiled before from the same text, options and name (from memory, or from the disk
    /// cache where [`cache_dir`] has one).
    pub fn compile(
        source: Source<'_>,
        file: &str,
        options: &Options,
    ) -> Result<Arc<Program>, Error> {
        let id = key(&source, file, options);
        let memory = MEMORY.get_or_init(Default::default);
        if let Some(p) = memory.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
            return Ok(p.clone());
        }
        let program = compile_cached_in(cache_dir().as_deref(), id, source, file, options)?;
        let program = Arc::new(program);
        memory.lock().unwrap_or_else(|e| e.into_inner()).insert(id, program.clone());
        Ok(program)
    }

    /// Compiles the file at `path`; its extension chooses the language (`.wave` is assembly,
    /// `.wbin` a module).
    pub fn compile_file(path: &Path, options: &Options) -> Result<Arc<Program>, Error> {
        let name = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|e| Error::Io(format!("cannot read {name}: {e}")))?;
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext == "wbin" {
            return Program::compile(Source::Wbin(&bytes), &name, options);
        }
        let text = String::from_utf8(bytes)
            .map_err(|e| Error::Io(format!("{name} is not UTF-8 text: {e}")))?;
        let source = match ext {
            "wave" | "s" | "asm" => Source::Assembly(&text),
            _ => match Language::from_extension(ext) {
                Some(language) => Source::Kernel { text: &text, language },
                None => {
                    return Err(Error::Io(format!(
                        "{name}: unknown extension `.{ext}` (expected .py, .rs, .cpp, .ts, .wave or .wbin)"
                    )));
                }
            },
        };
        Program::compile(source, &name, options)
    }

    /// Its kernels.
    pub fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }

    /// The kernel named `name`, or the only one when `name` is empty.
    pub fn kernel(&self, name: &str) -> Result<&KernelInfo, Error> {
        if name.is_empty() {
            return match self.kernels.as_slice() {
                [k] => Ok(k),
                ks => Err(Error::Argument(format!(
                    "{} has {} kernels ({}): name one",
                    self.file,
                    ks.len(),
                    ks.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", ")
                ))),
            };
        }
        self.kernels.iter().find(|k| k.name == name).ok_or_else(|| {
            Error::Argument(format!(
                "{} has no kernel named `{name}` (it has {})",
                self.file,
                self.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// The `.wbin` module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The file name its messages use.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The warnings of its compile (none when it came from the disk cache: see
    /// [`Program::rendered_warnings`]).
    pub fn warnings(&self) -> &[wave_diag::Diagnostic] {
        &self.warnings
    }

    /// The warnings rendered like a compile error's diagnostics (also for a program from the
    /// disk cache); empty when there are none.
    pub fn rendered_warnings(&self) -> &str {
        &self.rendered_warnings
    }

    /// Whether it came from the disk cache.
    pub fn loaded_from_disk(&self) -> bool {
        self.from_disk
    }
}

/// The program from the disk cache in `dir`, or compiled and stored there.
fn compile_cached_in(
    dir: Option<&Path>,
    id: u128,
    source: Source<'_>,
    file: &str,
    options: &Options,
) -> Result<Program, Error> {
    if let Some(p) = dir.and_then(|d| disk::load(d, id, file, &source)) {
        return Ok(p);
    }
    let p = build(id, source, file, options)?;
    if let (Some(d), false) = (dir, matches!(source, Source::Wbin(_))) {
        disk::store(d, &p);
    }
    Ok(p)
}

static MEMORY: OnceLock<Mutex<HashMap<u128, Arc<Program>>>> = OnceLock::new();

/// The cache key: the compiler's identity, the source, the options and the file name.
fn key(source: &Source<'_>, file: &str, options: &Options) -> u128 {
    let mut halves = [0u64; 2];
    for (i, half) in halves.iter_mut().enumerate() {
        let mut h = std::hash::DefaultHasher::new();
        (i as u8, env!("WAVE_COMPILER_HASH"), file, options).hash(&mut h);
        match source {
            Source::Kernel { text, language } => (0u8, language.name(), text).hash(&mut h),
            Source::Assembly(text) => (1u8, text).hash(&mut h),
            Source::Wbin(bytes) => (2u8, bytes).hash(&mut h),
        }
        *half = h.finish();
    }
    (u128::from(halves[0]) << 64) | u128::from(halves[1])
}

fn build(id: u128, source: Source<'_>, file: &str, options: &Options) -> Result<Program, Error> {
    let compile_error = |text: &str, diagnostics: Vec<wave_diag::Diagnostic>| {
        Error::Compile(Box::new(CompileError {
            file: file.to_owned(),
            rendered: crate::report::render(file, text, &diagnostics),
            diagnostics,
            text: text.into(),
        }))
    };
    match source {
        Source::Kernel { text, language } => {
            let (kernels, diagnostics) = wave_kernel::hir(text, language);
            if wave_diag::has_errors(&diagnostics) {
                return Err(compile_error(text, diagnostics));
            }
            let level = match options.opt_level {
                0 => wave_kernel::opt::Level::O0,
                1 => wave_kernel::opt::Level::O1,
                2 => wave_kernel::opt::Level::O2,
                3 => wave_kernel::opt::Level::O3,
                n => {
                    return Err(Error::Argument(format!(
                        "optimisation level {n}: expected 0 to 3"
                    )));
                }
            };
            let opts = wave_kernel::Options { level, max_registers: options.max_registers };
            let out = wave_kernel::emit::compile_hir(&kernels, text, file, opts)
                .map_err(|d| compile_error(text, [diagnostics.clone(), d].concat()))?;
            let infos = kernels.iter().map(info_of_hir).collect();
            Ok(Program {
                id,
                file: file.to_owned(),
                text: text.into(),
                module: out.module,
                kernels: infos,
                from_disk: false,
                rendered_warnings: render_warnings(file, text, &diagnostics),
                warnings: diagnostics,
            })
        }
        Source::Assembly(text) => {
            let a = wave_asm::assemble(text, file);
            if wave_diag::has_errors(&a.diagnostics) {
                return Err(compile_error(text, a.diagnostics));
            }
            let kernels = info_of_module(&a.module);
            Ok(Program {
                id,
                file: file.to_owned(),
                text: text.into(),
                module: a.module,
                kernels,
                from_disk: false,
                rendered_warnings: render_warnings(file, text, &a.diagnostics),
                warnings: a.diagnostics,
            })
        }
        Source::Wbin(bytes) => {
            let module = wave_wbin::read(bytes).map_err(|e| {
                Error::Compile(Box::new(CompileError {
                    file: file.to_owned(),
                    rendered: format!(
                        "error: {file} is not a valid .wbin: {} (at byte {})",
                        e.message, e.offset
                    ),
                    diagnostics: Vec::new(),
                    text: "".into(),
                }))
            })?;
            let kernels = info_of_module(&module);
            Ok(Program {
                id,
                file: file.to_owned(),
                text: "".into(),
                module,
                kernels,
                from_disk: false,
                warnings: Vec::new(),
                rendered_warnings: String::new(),
            })
        }
    }
}

fn render_warnings(file: &str, text: &str, warnings: &[wave_diag::Diagnostic]) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    crate::report::render(file, text, warnings)
}

/// What a kernel compiled from source takes: element types from its annotations, and which
/// buffers it stores into or updates atomically.
fn info_of_hir(k: &hir::Kernel) -> KernelInfo {
    let mut written = vec![false; k.vars.len()];
    mark_written(&k.body, &mut written);
    let params = k
        .vars
        .iter()
        .enumerate()
        .filter(|(_, v)| v.param)
        .map(|(i, v)| Param {
            name: v.name.clone(),
            kind: match v.ty {
                Ty::Buffer(s) => ParamKind::Buffer { elem: Some(Elem::of(s)), written: written[i] },
                Ty::Scalar(s) => ParamKind::Scalar(Elem::of(s)),
                // Parameters are buffers or scalars; anything else is taken as a word.
                Ty::Local(..) | Ty::Private(..) | Ty::Unit => ParamKind::Scalar(Elem::U32),
            },
        })
        .collect();
    KernelInfo { name: k.name.clone(), params, workgroup_size: k.workgroup_size }
}

fn mark_written(body: &[hir::Stmt], written: &mut [bool]) {
    for s in body {
        match &s.kind {
            StmtKind::Assign(_, e) | StmtKind::Expr(e) => mark_expr(e, written),
            StmtKind::Store(b, i, v) => {
                if let ExprKind::Var(id) = b.kind {
                    written[id.0 as usize] = true;
                }
                mark_expr(i, written);
                mark_expr(v, written);
            }
            StmtKind::If(c, a, b) => {
                mark_expr(c, written);
                mark_written(a, written);
                mark_written(b, written);
            }
            StmtKind::While(c, b) => {
                mark_expr(c, written);
                mark_written(b, written);
            }
            StmtKind::For { start, end, body, .. } => {
                mark_expr(start, written);
                mark_expr(end, written);
                mark_written(body, written);
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Return => {}
        }
    }
}

fn mark_expr(e: &hir::Expr, written: &mut [bool]) {
    match &e.kind {
        ExprKind::Call(intrinsic, args) => {
            if let (hir::Intrinsic::Atomic(_), Some(first)) = (intrinsic, args.first())
                && let ExprKind::Var(id) = first.kind
            {
                written[id.0 as usize] = true;
            }
            args.iter().for_each(|a| mark_expr(a, written));
        }
        ExprKind::Load(a, b) | ExprKind::Binary(_, a, b) => {
            mark_expr(a, written);
            mark_expr(b, written);
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => mark_expr(a, written),
        ExprKind::Select(a, b, c) => {
            mark_expr(a, written);
            mark_expr(b, written);
            mark_expr(c, written);
        }
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Var(_)
        | ExprKind::Special(_) => {}
    }
}

/// What the kernels of an assembled or loaded module take: pointers are untyped, and may be
/// written.
fn info_of_module(module: &Module) -> Vec<KernelInfo> {
    module
        .kernels
        .iter()
        .map(|k| KernelInfo {
            name: k.name.clone(),
            params: k
                .params
                .iter()
                .map(|p| Param {
                    name: p.name.clone(),
                    kind: match p.ty {
                        ParamType::Ptr => ParamKind::Buffer { elem: None, written: true },
                        ParamType::U32 => ParamKind::Scalar(Elem::U32),
                        ParamType::I32 => ParamKind::Scalar(Elem::I32),
                        ParamType::F32 => ParamKind::Scalar(Elem::F32),
                    },
                })
                .collect(),
            workgroup_size: k.workgroup_size,
        })
        .collect()
}

/// Where compiled programs are kept between processes: `$WAVE_CACHE_DIR` (none when it is
/// empty or `off`), else `$XDG_CACHE_HOME/wave/kernels`, else `~/.cache/wave/kernels`.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("WAVE_CACHE_DIR") {
        Some(d) if d.is_empty() || d == "off" => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("wave").join("kernels")),
    }
}

/// The disk cache: one file per program, `<key>.wcache`: a text header describing the
/// kernels, a blank line, then the `.wbin`. Anything unreadable is a miss; failures to write
/// are ignored (the cache only saves time).
mod disk {
    use super::*;

    const MAGIC: &str = "wave-cache 2";

    fn path(dir: &Path, id: u128) -> PathBuf {
        dir.join(format!("{id:032x}.wcache"))
    }

    pub(super) fn store(dir: &Path, p: &Program) {
        let path = path(dir, p.id);
        let mut out = format!("{MAGIC}\n");
        for k in &p.kernels {
            let wg = k.workgroup_size.map_or("-".to_owned(), |[x, y, z]| format!("{x},{y},{z}"));
            out.push_str(&format!("kernel {} {wg}\n", k.name));
            for param in &k.params {
                let kind = match param.kind {
                    ParamKind::Buffer { elem, written } => {
                        format!("buffer {} {}", elem.map_or("-", Elem::name), u8::from(written))
                    }
                    ParamKind::Scalar(e) => format!("scalar {}", e.name()),
                };
                out.push_str(&format!("param {} {kind}\n", param.name));
            }
        }
        out.push_str(&format!("warnings {}\n", p.rendered_warnings.len()));
        out.push('\n');
        let mut bytes = out.into_bytes();
        bytes.extend(p.rendered_warnings.as_bytes());
        bytes.extend(wave_wbin::write(&p.module));
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        // Written aside and renamed, so that a reader never sees half a file.
        let tmp = dir.join(format!(".{:032x}.{}.tmp", p.id, std::process::id()));
        if std::fs::write(&tmp, &bytes).is_ok() && std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    pub(super) fn load(dir: &Path, id: u128, file: &str, source: &Source<'_>) -> Option<Program> {
        let bytes = std::fs::read(path(dir, id)).ok()?;
        let split = bytes.windows(2).position(|w| w == b"\n\n")?;
        let header = std::str::from_utf8(&bytes[..split]).ok()?;
        let mut lines = header.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let mut kernels: Vec<KernelInfo> = Vec::new();
        let mut warnings_len = None;
        for line in lines {
            let words: Vec<&str> = line.split(' ').collect();
            match words.as_slice() {
                ["warnings", n] => warnings_len = Some(n.parse::<usize>().ok()?),
                ["kernel", name, wg] => kernels.push(KernelInfo {
                    name: (*name).to_owned(),
                    params: Vec::new(),
                    workgroup_size: match *wg {
                        "-" => None,
                        wg => {
                            let v: Vec<u32> =
                                wg.split(',').filter_map(|n| n.parse().ok()).collect();
                            Some(<[u32; 3]>::try_from(v).ok()?)
                        }
                    },
                }),
                ["param", name, "buffer", elem, written] => {
                    kernels.last_mut()?.params.push(Param {
                        name: (*name).to_owned(),
                        kind: ParamKind::Buffer {
                            elem: Elem::from_name(elem),
                            written: *written == "1",
                        },
                    })
                }
                ["param", name, "scalar", elem] => kernels.last_mut()?.params.push(Param {
                    name: (*name).to_owned(),
                    kind: ParamKind::Scalar(Elem::from_name(elem)?),
                }),
                _ => return None,
            }
        }
        let body = &bytes[split + 2..];
        let warnings_len = warnings_len?;
        let rendered_warnings = String::from_utf8(body.get(..warnings_len)?.to_vec()).ok()?;
        let module = wave_wbin::read(&body[warnings_len..]).ok()?;
        // The header must describe the module's kernels.
        if kernels.len() != module.kernels.len()
            || kernels
                .iter()
                .zip(&module.kernels)
                .any(|(a, b)| a.name != b.name || a.params.len() != b.params.len())
        {
            return None;
        }
        let text: Arc<str> = match source {
            Source::Kernel { text, .. } | Source::Assembly(text) => (*text).into(),
            Source::Wbin(_) => "".into(),
        };
        Some(Program {
            id,
            file: file.to_owned(),
            text,
            module,
            kernels,
            from_disk: true,
            warnings: Vec::new(),
            rendered_warnings,
        })
    }
}

/// A scalar argument's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A `u32`.
    U32(u32),
    /// An `i32`.
    I32(i32),
    /// An `f32`.
    F32(f32),
    /// A `bool`.
    Bool(bool),
}

/// One argument of a launch.
#[derive(Debug)]
pub enum Arg<'a> {
    /// A buffer made by [`Device::buffer`] on the same device.
    Buffer(&'a Buffer),
    /// Host memory: copied to the device, and back after the run if the kernel may write it.
    Host(&'a mut [u8]),
    /// Host memory the kernel must not write.
    HostRead(&'a [u8]),
    /// Memory on the CUDA GPU that the caller holds (another library's array), used in place.
    Device {
        /// Its device address.
        ptr: u64,
        /// Its size in bytes.
        len: usize,
    },
    /// A `u32`.
    U32(u32),
    /// An `i32`.
    I32(i32),
    /// An `f32`.
    F32(f32),
    /// A `bool`.
    Bool(bool),
    /// The same memory as argument `i` (an earlier one): a buffer or host slice passed for two
    /// parameters, which borrowing cannot express twice.
    Same(usize),
}

impl Arg<'_> {
    fn describe(&self) -> &'static str {
        match self {
            Arg::Buffer(_) => "a buffer",
            Arg::Host(_) | Arg::HostRead(_) => "host memory",
            Arg::Device { .. } => "GPU memory",
            Arg::U32(_) => "a u32",
            Arg::I32(_) => "an i32",
            Arg::F32(_) => "an f32",
            Arg::Bool(_) => "a bool",
            Arg::Same(_) => "an earlier argument's memory",
        }
    }

    /// The 32 bits a scalar parameter of type `elem` gets, if this argument fits it.
    fn bits(&self, elem: Elem) -> Option<u32> {
        match (self, elem) {
            (Arg::U32(v), Elem::U32) => Some(*v),
            (Arg::I32(v), Elem::U32) if *v >= 0 => Some(*v as u32),
            (Arg::I32(v), Elem::I32) => Some(*v as u32),
            (Arg::U32(v), Elem::I32) if *v <= i32::MAX as u32 => Some(*v),
            (Arg::F32(v), Elem::F32) => Some(v.to_bits()),
            (Arg::Bool(b), Elem::Bool) => Some(u32::from(*b)),
            _ => None,
        }
    }
}

/// How to launch.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Workgroups in the grid.
    pub grid: [u32; 3],
    /// Threads per workgroup; the kernel's declared size when `None`.
    pub workgroup: Option<[u32; 3]>,
    /// The emulator's instruction budget, in wave-instructions.
    pub max_steps: u64,
    /// The emulator's wave width W (a GPU's is 32).
    pub wave_width: u32,
    /// How long a GPU kernel may run.
    pub timeout: Duration,
    /// Asked now and then on the emulator whether to stop (Ctrl-C).
    pub interrupt: Option<Interrupt>,
}

impl Launch {
    /// A launch of `grid` workgroups of the kernel's declared size.
    pub fn grid(grid: [u32; 3]) -> Launch {
        Launch {
            grid,
            workgroup: None,
            max_steps: wave_emulator::Dispatch::default().max_steps,
            wave_width: 32,
            timeout: Duration::from_secs(60),
            interrupt: None,
        }
    }

    /// With workgroups of `size` threads.
    pub fn workgroup(mut self, size: [u32; 3]) -> Launch {
        self.workgroup = Some(size);
        self
    }
}

/// What a launch measured.
#[derive(Clone, Debug, Default)]
pub struct Ran {
    /// The emulator's counters (zero on a GPU).
    pub stats: wave_emulator::Stats,
    /// The kernel's time on a GPU, in milliseconds (`None` on the emulator).
    pub kernel_ms: Option<f32>,
}

/// A buffer on a device: host memory for the emulator, device memory on a GPU.
#[derive(Clone)]
pub struct Buffer(Arc<BufferInner>);

struct BufferInner {
    len: usize,
    elem: Option<Elem>,
    store: Store,
}

enum Store {
    Host(Mutex<Vec<u8>>),
    Gpu { memory: wave_cuda::DeviceMemory, gpu: Arc<Mutex<CudaState>> },
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match self.0.store {
            Store::Host(_) => "emulator",
            Store::Gpu { .. } => "cuda",
        };
        write!(f, "Buffer({} bytes on the {place})", self.0.len)
    }
}

impl Buffer {
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// The element type it was made with.
    pub fn elem(&self) -> Option<Elem> {
        self.0.elem
    }

    /// Its bytes.
    pub fn read_bytes(&self) -> Result<Vec<u8>, Error> {
        match &self.0.store {
            Store::Host(m) => Ok(m.lock().unwrap_or_else(|e| e.into_inner()).clone()),
            Store::Gpu { memory, gpu } => {
                let mut out = vec![0u8; self.0.len];
                lock(gpu).gpu.gpu.download(memory.ptr(), &mut out)?;
                Ok(out)
            }
        }
    }

    /// Its elements.
    pub fn read<T: Element>(&self) -> Result<Vec<T>, Error> {
        let bytes = self.read_bytes()?;
        Ok(bytes.chunks_exact(T::ELEM.size()).map(T::get).collect())
    }

    /// Overwrites its bytes from `bytes` (of the same length).
    pub fn write_bytes(&self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() != self.0.len {
            return Err(Error::Argument(format!(
                "writing {} bytes into a buffer of {}",
                bytes.len(),
                self.0.len
            )));
        }
        match &self.0.store {
            Store::Host(m) => m.lock().unwrap_or_else(|e| e.into_inner()).copy_from_slice(bytes),
            Store::Gpu { memory, gpu } => lock(gpu).gpu.gpu.upload(memory.ptr(), bytes)?,
        }
        Ok(())
    }

    /// Overwrites its elements.
    pub fn write<T: Element>(&self, data: &[T]) -> Result<(), Error> {
        let mut bytes = Vec::with_capacity(data.len() * T::ELEM.size());
        data.iter().for_each(|v| v.put(&mut bytes));
        self.write_bytes(&bytes)
    }
}

struct CudaState {
    gpu: crate::Gpu,
    /// Each kernel translated and loaded: by program and kernel name.
    loaded: HashMap<(u128, String), Arc<wave_cuda::Loaded>>,
    /// Device memory that held host slices during earlier launches, kept for the next ones
    /// (allocating device memory costs more than a small kernel).
    staging: Vec<wave_cuda::DeviceMemory>,
}

/// The most staging allocations kept between launches.
const STAGING_KEPT: usize = 32;

fn lock(m: &Mutex<CudaState>) -> std::sync::MutexGuard<'_, CudaState> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where kernels run: the emulator, or a CUDA GPU.
#[derive(Clone)]
pub struct Device {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    Emulator,
    Cuda { ordinal: u32, state: Arc<Mutex<CudaState>> },
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({})", self.spec())
    }
}

impl Device {
    /// The emulator (always there).
    pub fn emulator() -> Device {
        Device { kind: Kind::Emulator }
    }

    /// CUDA GPU `ordinal`.
    pub fn cuda(ordinal: u32) -> Result<Device, Error> {
        let gpu = crate::Gpu::open(ordinal)?;
        let state =
            Arc::new(Mutex::new(CudaState { gpu, loaded: HashMap::new(), staging: Vec::new() }));
        Ok(Device { kind: Kind::Cuda { ordinal, state } })
    }

    /// The device `spec` names.
    pub fn open(spec: DeviceSpec) -> Result<Device, Error> {
        match spec {
            DeviceSpec::Emulator => Ok(Device::emulator()),
            DeviceSpec::Cuda(n) => Device::cuda(n),
        }
    }

    /// Which device it is.
    pub fn spec(&self) -> DeviceSpec {
        match &self.kind {
            Kind::Emulator => DeviceSpec::Emulator,
            Kind::Cuda { ordinal, .. } => DeviceSpec::Cuda(*ordinal),
        }
    }

    /// What it is, in words: `emulator`, or the GPU's name and `sm`.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Emulator => "the WAVE emulator".into(),
            Kind::Cuda { ordinal, state } => {
                let s = lock(state);
                format!("cuda:{ordinal} ({}, PTX for sm_{})", s.gpu.info().name, s.gpu.sm())
            }
        }
    }

    /// A buffer of `len` zeroed elements of `T`.
    pub fn buffer<T: Element>(&self, len: usize) -> Result<Buffer, Error> {
        self.buffer_bytes(&vec![0u8; len * T::ELEM.size()], Some(T::ELEM))
    }

    /// A buffer holding `data`.
    pub fn buffer_from<T: Element>(&self, data: &[T]) -> Result<Buffer, Error> {
        let mut bytes = Vec::with_capacity(data.len() * T::ELEM.size());
        data.iter().for_each(|v| v.put(&mut bytes));
        self.buffer_bytes(&bytes, Some(T::ELEM))
    }

    /// A buffer holding `bytes`, of elements `elem` where known.
    pub fn buffer_bytes(&self, bytes: &[u8], elem: Option<Elem>) -> Result<Buffer, Error> {
        let store = match &self.kind {
            Kind::Emulator => {
                if bytes.len() > u32::MAX as usize / 2 {
                    return Err(Error::Argument(format!(
                        "a buffer of {} bytes: the emulator's device memory is addressed with 32 bits",
                        bytes.len()
                    )));
                }
                Store::Host(Mutex::new(bytes.to_vec()))
            }
            Kind::Cuda { state, .. } => {
                let mut s = lock(state);
                let memory = s.gpu.gpu.alloc(bytes.len())?;
                s.gpu.gpu.upload(memory.ptr(), bytes)?;
                Store::Gpu { memory, gpu: state.clone() }
            }
        };
        Ok(Buffer(Arc::new(BufferInner { len: bytes.len(), elem, store })))
    }

    /// Runs kernel `kernel` of `program` (the only one when empty) with `args` in parameter
    /// order, and waits for it.
    pub fn launch(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &mut [Arg<'_>],
    ) -> Result<Ran, Error> {
        let info = program.kernel(kernel)?;
        check_args(info, args)?;
        let workgroup = launch.workgroup.or(info.workgroup_size).ok_or_else(|| {
            Error::Argument(format!(
                "kernel `{}` declares no workgroup size: give one with the launch",
                info.name
            ))
        })?;
        if launch.grid.contains(&0) || workgroup.contains(&0) {
            return Err(Error::Argument("grid and workgroup dimensions must be at least 1".into()));
        }
        // A declared size is a promise the code relies on: the PTX declares it as the most
        // threads a block has (`.maxntid`), and spill frames are laid out for it.
        let threads = |[x, y, z]: [u32; 3]| u64::from(x) * u64::from(y) * u64::from(z);
        if let Some(declared) = info.workgroup_size
            && threads(workgroup) > threads(declared)
        {
            let [x, y, z] = workgroup;
            let [dx, dy, dz] = declared;
            return Err(Error::Argument(format!(
                "kernel `{}` declares workgroups of ({dx}, {dy}, {dz}) threads, and the launch asks for ({x}, {y}, {z}): launch at most {} threads a workgroup, or declare a larger size",
                info.name,
                threads(declared)
            )));
        }
        match &self.kind {
            Kind::Emulator => emulate(program, info, launch, workgroup, args),
            Kind::Cuda { state, .. } => on_gpu(state, program, info, launch, workgroup, args),
        }
    }

    /// [`Device::launch`] with arguments by parameter name.
    pub fn launch_named(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: Vec<(&str, Arg<'_>)>,
    ) -> Result<Ran, Error> {
        let info = program.kernel(kernel)?;
        if let Some((n, _)) = args.iter().find(|(n, _)| !info.params.iter().any(|p| p.name == *n)) {
            return Err(Error::Argument(format!(
                "kernel {} has no parameter `{n}`",
                info.signature()
            )));
        }
        let mut args: Vec<(&str, Option<Arg<'_>>)> =
            args.into_iter().map(|(n, a)| (n, Some(a))).collect();
        let mut ordered = Vec::with_capacity(info.params.len());
        for p in &info.params {
            let arg = args.iter_mut().find(|(n, _)| *n == p.name).and_then(|(_, a)| a.take());
            match arg {
                Some(a) => ordered.push(a),
                None => {
                    return Err(Error::Argument(format!(
                        "missing argument for parameter `{p}` of kernel {}",
                        info.signature()
                    )));
                }
            }
        }
        let name = info.name.clone();
        self.launch(program, &name, launch, &mut ordered)
    }
}

/// Checks the arguments against the parameters: their number, buffers for buffers, values
/// of the right type for scalars, and typed buffers of the right element type.
fn check_args(info: &KernelInfo, args: &[Arg<'_>]) -> Result<(), Error> {
    if args.len() != info.params.len() {
        return Err(Error::Argument(format!(
            "kernel {} takes {} arguments, {} given",
            info.signature(),
            info.params.len(),
            args.len()
        )));
    }
    for (p, a) in info.params.iter().zip(args) {
        match (p.kind, a) {
            (ParamKind::Buffer { elem, .. }, Arg::Buffer(b)) => {
                if let (Some(want), Some(have)) = (elem, b.elem())
                    && want != have
                {
                    return Err(Error::Argument(format!(
                        "parameter `{p}` of kernel `{}` takes {} elements, and the buffer holds {}",
                        info.name,
                        want.name(),
                        have.name()
                    )));
                }
            }
            (ParamKind::Buffer { written: true, .. }, Arg::HostRead(_)) => {
                return Err(Error::Argument(format!(
                    "parameter `{p}` of kernel `{}` may be written, and the memory given is read-only",
                    info.name
                )));
            }
            (ParamKind::Buffer { .. }, Arg::Host(_) | Arg::HostRead(_) | Arg::Device { .. }) => {}
            (ParamKind::Buffer { .. }, Arg::Same(i)) => {
                let earlier = info.params.iter().zip(args).take_while(|(q, _)| q.name != p.name);
                let written = matches!(p.kind, ParamKind::Buffer { written: true, .. });
                let ok = earlier.enumerate().any(|(j, (q, a))| {
                    j == *i
                        && matches!(q.kind, ParamKind::Buffer { .. })
                        && match a {
                            Arg::Buffer(_) | Arg::Host(_) | Arg::Device { .. } => true,
                            Arg::HostRead(_) => !written,
                            _ => false,
                        }
                });
                if !ok {
                    return Err(Error::Argument(format!(
                        "parameter `{p}` of kernel `{}`: `Same({i})` names no earlier buffer argument (that may be written, where this one may)",
                        info.name
                    )));
                }
            }
            (ParamKind::Scalar(e), a) => {
                if a.bits(e).is_none() {
                    return Err(Error::Argument(format!(
                        "parameter `{p}` of kernel `{}` takes {} {}, and {} was given",
                        info.name,
                        if e == Elem::I32 { "an" } else { "a" },
                        e.name(),
                        a.describe()
                    )));
                }
            }
            (ParamKind::Buffer { .. }, a) => {
                return Err(Error::Argument(format!(
                    "parameter `{p}` of kernel `{}` takes a buffer, and {} was given",
                    info.name,
                    a.describe()
                )));
            }
        }
    }
    Ok(())
}

/// The distinct memories among buffer arguments: for each argument, the index of its region
/// (a buffer or host slice passed twice is one region), and each region's written flag.
fn regions(info: &KernelInfo, args: &[Arg<'_>]) -> (Vec<Option<usize>>, Vec<(usize, bool)>) {
    let mut keys: Vec<(usize, usize)> = Vec::new();
    let mut of_arg: Vec<Option<usize>> = Vec::with_capacity(args.len());
    let mut region_info: Vec<(usize, bool)> = Vec::new();
    for (p, a) in info.params.iter().zip(args) {
        let written = matches!(p.kind, ParamKind::Buffer { written: true, .. });
        let key = match a {
            Arg::Buffer(b) => Some((Arc::as_ptr(&b.0) as usize, b.len())),
            Arg::Host(s) => Some((s.as_ptr() as usize, s.len())),
            Arg::HostRead(s) => Some((s.as_ptr() as usize, s.len())),
            Arg::Device { ptr, len } => Some((*ptr as usize, *len)),
            _ => None,
        };
        let Some(key) = key else {
            // `Same(i)` shares argument `i`'s region, and its writes.
            let same = match a {
                Arg::Same(i) => of_arg.get(*i).copied().flatten(),
                _ => None,
            };
            if let Some(r) = same {
                region_info[r].1 |= written;
            }
            of_arg.push(same);
            continue;
        };
        let index = match keys.iter().position(|k| *k == key) {
            Some(i) => {
                region_info[i].1 |= written;
                i
            }
            None => {
                keys.push(key);
                region_info.push((key.1, written));
                keys.len() - 1
            }
        };
        of_arg.push(Some(index));
    }
    (of_arg, region_info)
}

/// For each region the kernel may write, the first argument that holds it, and the region.
fn written_regions(of_arg: &[Option<usize>], regions: &[(usize, bool)]) -> Vec<(usize, usize)> {
    let mut done = vec![false; regions.len()];
    let mut out = Vec::new();
    for (i, region) in of_arg.iter().enumerate() {
        if let Some(r) = *region
            && regions[r].1
            && !done[r]
        {
            done[r] = true;
            out.push((i, r));
        }
    }
    out
}

fn emulate(
    program: &Program,
    info: &KernelInfo,
    launch: &Launch,
    workgroup: [u32; 3],
    args: &mut [Arg<'_>],
) -> Result<Ran, Error> {
    let (of_arg, regions) = regions(info, args);
    // Lay the regions out one after another.
    let mut offsets = Vec::with_capacity(regions.len());
    let mut end = 0usize;
    for (len, _) in &regions {
        offsets.push(end);
        end = (end + len).div_ceil(ALIGN) * ALIGN;
    }
    if end > u32::MAX as usize {
        return Err(Error::Argument(format!(
            "the launch's buffers take {end} bytes: the emulator addresses 4 GiB"
        )));
    }
    let mut memory = vec![0u8; end];
    let mut values = Vec::with_capacity(args.len());
    for ((p, a), region) in info.params.iter().zip(args.iter()).zip(&of_arg) {
        let value = match (a, region) {
            (_, Some(r)) => {
                let at = offsets[*r];
                match a {
                    Arg::Buffer(b) => match &b.0.store {
                        Store::Host(m) => {
                            let m = m.lock().unwrap_or_else(|e| e.into_inner());
                            memory[at..at + m.len()].copy_from_slice(&m);
                        }
                        Store::Gpu { .. } => {
                            return Err(Error::Argument(format!(
                                "parameter `{}`: the buffer lives on a CUDA GPU, and this launch is on the emulator",
                                p.name
                            )));
                        }
                    },
                    Arg::Host(s) => memory[at..at + s.len()].copy_from_slice(s),
                    Arg::HostRead(s) => memory[at..at + s.len()].copy_from_slice(s),
                    Arg::Device { .. } => {
                        return Err(Error::Argument(format!(
                            "parameter `{}`: GPU memory cannot be passed to the emulator (copy it to the host first)",
                            p.name
                        )));
                    }
                    _ => {}
                }
                at as u32
            }
            (a, None) => match p.kind {
                ParamKind::Scalar(e) => a.bits(e).unwrap_or(0),
                ParamKind::Buffer { .. } => 0,
            },
        };
        values.push((p.name.clone(), value));
    }
    let dispatch = wave_emulator::Dispatch {
        kernel: Some(info.name.clone()),
        grid: launch.grid,
        workgroup: Some(workgroup),
        wave_width: launch.wave_width,
        args: values,
        max_steps: launch.max_steps,
        trace: false,
        interrupt: launch.interrupt.clone(),
    };
    let outcome = wave_emulator::run(&program.module, &dispatch, &mut memory)
        .map_err(|t| trap_error(program, t))?;
    // Copy back what the kernel may have written (each region once).
    for (i, r) in written_regions(&of_arg, &regions) {
        let at = offsets[r];
        match &mut args[i] {
            Arg::Buffer(b) => {
                if let Store::Host(m) = &b.0.store {
                    let mut m = m.lock().unwrap_or_else(|e| e.into_inner());
                    let len = m.len();
                    m.copy_from_slice(&memory[at..at + len]);
                }
            }
            Arg::Host(s) => {
                let len = s.len();
                s.copy_from_slice(&memory[at..at + len]);
            }
            _ => {}
        }
    }
    Ok(Ran { stats: outcome.stats, kernel_ms: None })
}

/// A trap as an error: an interruption, or the trap with its source line.
fn trap_error(program: &Program, trap: wave_emulator::Trap) -> Error {
    if trap.message.starts_with("interrupted") {
        return Error::Interrupted(format!("{trap}"));
    }
    let source_line = trap
        .line
        .and_then(|l| program.text.lines().nth(l.saturating_sub(1) as usize))
        .map(str::to_owned);
    let mut rendered = format!("error: {}\n", trap.message);
    match trap.line {
        Some(line) => rendered.push_str(&format!("  --> {}:{line}\n", program.file)),
        None => rendered.push_str(&format!("  --> {}\n", program.file)),
    }
    if let (Some(line), Some(text)) = (trap.line, &source_line) {
        let n = line.to_string();
        let pad = " ".repeat(n.len());
        rendered.push_str(&format!("{pad} |\n{n} | {text}\n{pad} |\n"));
    }
    let mut at = vec![format!("kernel `{}`", trap.kernel)];
    if let Some([x, y, z]) = trap.workgroup {
        at.push(format!("workgroup ({x}, {y}, {z})"));
    }
    if let Some(w) = trap.wave {
        at.push(format!("wave {w}"));
    }
    if let Some(l) = trap.lane {
        at.push(format!("lane {l}"));
    }
    if let Some(pc) = trap.pc {
        at.push(format!("pc 0x{pc:x}"));
    }
    rendered.push_str(&format!("  = in {}", at.join(", ")));
    Error::Trap(Box::new(TrapError { trap, file: program.file.clone(), source_line, rendered }))
}

fn on_gpu(
    state: &Arc<Mutex<CudaState>>,
    program: &Program,
    info: &KernelInfo,
    launch: &Launch,
    workgroup: [u32; 3],
    args: &mut [Arg<'_>],
) -> Result<Ran, Error> {
    if launch.wave_width != 32 {
        return Err(Error::Argument(format!(
            "a CUDA GPU runs waves of 32 threads; W = {} runs only on the emulator",
            launch.wave_width
        )));
    }
    let mut s = lock(state);
    let key = (program.id, info.name.clone());
    let loaded = match s.loaded.get(&key) {
        Some(l) => l.clone(),
        None => {
            let (ptx, entry) = s.gpu.translate(&program.module, &info.name).map_err(|e| {
                Error::Device(format!("kernel `{}` cannot run on the GPU: {e}", info.name))
            })?;
            let l = Arc::new(s.gpu.gpu.load(&ptx, &entry)?);
            s.loaded.insert(key, l.clone());
            l
        }
    };
    let (of_arg, regions) = regions(info, args);
    // Each region's device address; host memory goes to temporary device memory.
    let mut temporaries: Vec<Option<wave_cuda::DeviceMemory>> = Vec::new();
    let mut addresses = vec![0u64; regions.len()];
    let mut placed = vec![false; regions.len()];
    for (a, region) in args.iter().zip(&of_arg) {
        let Some(r) = *region else { continue };
        if placed[r] {
            continue;
        }
        placed[r] = true;
        addresses[r] = match a {
            Arg::Buffer(b) => match &b.0.store {
                Store::Gpu { memory, gpu } if Arc::ptr_eq(gpu, state) => memory.ptr(),
                _ => {
                    return Err(Error::Argument(
                        "a buffer of another device was passed to this GPU".into(),
                    ));
                }
            },
            Arg::Device { ptr, .. } => *ptr,
            Arg::Host(bytes) => upload_temporary(&mut s, bytes, &mut temporaries)?,
            Arg::HostRead(bytes) => upload_temporary(&mut s, bytes, &mut temporaries)?,
            _ => 0,
        };
    }
    let base = addresses.iter().copied().min().unwrap_or(0);
    let top = addresses.iter().zip(&regions).map(|(a, (len, _))| a + *len as u64).max();
    if top.is_some_and(|t| t - base > u64::from(u32::MAX)) {
        return Err(Error::Argument(
            "the launch's buffers lie more than 4 GiB apart on the GPU: WAVE addresses memory with 32 bits"
                .into(),
        ));
    }
    let mut params = vec![wave_cuda::Arg::Ptr(base)];
    for ((p, a), region) in info.params.iter().zip(args.iter()).zip(&of_arg) {
        let v = match (region, p.kind) {
            (Some(r), _) => (addresses[*r] - base) as u32,
            (None, ParamKind::Scalar(e)) => a.bits(e).unwrap_or(0),
            (None, ParamKind::Buffer { .. }) => 0,
        };
        params.push(wave_cuda::Arg::U32(v));
    }
    let ms = s.gpu.gpu.launch(&loaded, launch.grid, workgroup, &params, launch.timeout)?;
    // Host memory the kernel may write comes back.
    for (i, r) in written_regions(&of_arg, &regions) {
        if let Arg::Host(bytes) = &mut args[i] {
            s.gpu.gpu.download(addresses[r], bytes)?;
        }
    }
    for m in temporaries.into_iter().flatten() {
        s.staging.push(m);
    }
    // Over the limit, the oldest go.
    let over = s.staging.len().saturating_sub(STAGING_KEPT);
    s.staging.drain(..over);
    Ok(Ran { stats: wave_emulator::Stats::default(), kernel_ms: Some(ms) })
}

/// Copies `bytes` to device memory for one launch: the smallest kept staging allocation
/// that holds them, or a new one (a power of two, to be reused).
fn upload_temporary(
    s: &mut CudaState,
    bytes: &[u8],
    temporaries: &mut Vec<Option<wave_cuda::DeviceMemory>>,
) -> Result<u64, Error> {
    let fits = s
        .staging
        .iter()
        .enumerate()
        .filter(|(_, m)| m.len() >= bytes.len())
        .min_by_key(|(_, m)| m.len())
        .map(|(i, _)| i);
    let memory = match fits {
        Some(i) => s.staging.swap_remove(i),
        None => s.gpu.gpu.alloc(bytes.len().next_power_of_two().max(ALIGN))?,
    };
    s.gpu.gpu.upload(memory.ptr(), bytes)?;
    let ptr = memory.ptr();
    temporaries.push(Some(memory));
    Ok(ptr)
}

#[cfg(test)]
mod tests;

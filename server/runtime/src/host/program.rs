//! [`Program`]: a compiled (or loaded) module and what its kernels take.

use std::path::Path;
use std::sync::Arc;

use wave_kernel::hir::{self, ExprKind, StmtKind, Ty};
use wave_wbin::{Module, ParamType};

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::cache::{cache_dir, disk, key};
use super::error::{CompileError, Error};
use super::types::{Elem, KernelInfo, Options, Param, ParamKind, Source};
use wave_kernel::Language;

/// A compiled (or loaded) module and what its kernels take.
#[derive(Debug)]
pub struct Program {
    pub(super) id: u128,
    pub(super) file: String,
    pub(super) text: Arc<str>,
    pub(super) module: Module,
    pub(super) kernels: Vec<KernelInfo>,
    pub(super) from_disk: bool,
    /// The warnings of the compile (none when the program came from a cache on disk).
    pub(super) warnings: Vec<wave_diag::Diagnostic>,
    /// The warnings rendered (kept in the disk cache too).
    pub(super) rendered_warnings: String,
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
pub(super) fn compile_cached_in(
    dir: Option<&Path>,
    id: u128,
    source: Source<'_>,
    file: &str,
    options: &Options,
) -> Result<Program, Error> {
    if let Some(e) = dir.and_then(|d| disk::load(d, id)) {
        let text: Arc<str> = match source {
            Source::Kernel { text, .. } | Source::Assembly(text) => text.into(),
            Source::Wbin(_) => "".into(),
        };
        return Ok(Program {
            id,
            file: file.to_owned(),
            text,
            module: e.module,
            kernels: e.kernels,
            from_disk: true,
            warnings: Vec::new(),
            rendered_warnings: e.rendered_warnings,
        });
    }
    let p = build(id, source, file, options)?;
    if let (Some(d), false) = (dir, matches!(source, Source::Wbin(_))) {
        let entry = disk::Entry {
            kernels: p.kernels.clone(),
            rendered_warnings: p.rendered_warnings.clone(),
            module: p.module.clone(),
        };
        disk::store(d, id, &entry);
    }
    Ok(p)
}

pub(super) static MEMORY: OnceLock<Mutex<HashMap<u128, Arc<Program>>>> = OnceLock::new();

pub(super) fn build(
    id: u128,
    source: Source<'_>,
    file: &str,
    options: &Options,
) -> Result<Program, Error> {
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
            let opts = wave_kernel::Options {
                level,
                max_registers: options.max_registers,
                ..Default::default()
            };
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
            let (module, _) = wave_wbin::read_any(bytes).map_err(|e| {
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

//! The kernel compiler (`wave compile`): GPU kernels written in a general-purpose language, to
//! WAVE. The pipeline of `docs/kernels.md` (from the compiler design): frontend, HIR, MIR in SSA
//! form, optimisation, LIR, register allocation, emission.
//!
//! The frontends ([`front`]: Python, Rust, C++ and TypeScript, each on its tree-sitter grammar,
//! to one surface syntax and one typer) build [`hir`](mod@hir); [`mir`] is SSA with its
//! verifier; [`opt`] holds the passes of `-O0` to `-O3`; [`lir`] is out of SSA with structured
//! control flow; [`regalloc`] colours registers (with coalescing, spilling and a checker);
//! [`emit`] prints assembly, assembles it and points the line table into the kernel source.
//! [`compile`] runs all of it; every stage has a text form (`wave compile --emit
//! hir|mir|lir|asm`). [`outline`] cuts a file into chunks for the language server.

pub mod emit;
pub mod front;
pub mod hir;
pub mod legalize;
pub mod lir;
pub mod mir;
pub mod opt;
pub mod outline;
pub mod regalloc;

pub use emit::{Options, Output, compile};

use wave_diag::Diagnostic;

/// A kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// Python (`.py`).
    Python,
    /// Rust (`.rs`).
    Rust,
    /// C++ (`.cpp`, `.cc`, `.cxx`, `.hpp`, `.h`).
    Cpp,
    /// TypeScript (`.ts`).
    TypeScript,
}

impl Language {
    /// Every kernel language.
    pub const ALL: [Language; 4] =
        [Language::Python, Language::Rust, Language::Cpp, Language::TypeScript];

    /// The language of a file, by its extension.
    pub fn from_extension(ext: &str) -> Option<Language> {
        match ext.to_ascii_lowercase().as_str() {
            "py" => Some(Language::Python),
            "rs" => Some(Language::Rust),
            "cpp" | "cc" | "cxx" | "hpp" | "hh" | "h" => Some(Language::Cpp),
            "ts" | "mts" | "cts" => Some(Language::TypeScript),
            _ => None,
        }
    }

    /// The language's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Rust => "Rust",
            Language::Cpp => "C++",
            Language::TypeScript => "TypeScript",
        }
    }

    /// The extension of its files (the first, where it has several).
    pub fn extension(self) -> &'static str {
        match self {
            Language::Python => "py",
            Language::Rust => "rs",
            Language::Cpp => "cpp",
            Language::TypeScript => "ts",
        }
    }
}

/// A function of a kernel source file, as its frontend reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// The whole definition (with its decorators or attributes).
    pub span: wave_diag::Span,
    /// Where its name is.
    pub name_span: wave_diag::Span,
    /// A kernel (else a helper).
    pub kernel: bool,
}

/// The kernels and helpers of `text`: what an editor analyses in a file of a general-purpose
/// language (the rest is left to the language's own tools).
pub fn functions(text: &str, language: Language) -> Vec<Function> {
    let funcs = match language {
        Language::Python => front::python::parse(text).0,
        Language::Rust => front::rust::parse(text).0,
        Language::Cpp => front::cpp::parse(text).0,
        Language::TypeScript => front::typescript::parse(text).0,
    };
    funcs
        .into_iter()
        .filter(|f| f.constant.is_none())
        .map(|f| Function { name: f.name, span: f.span, name_span: f.name_span, kernel: f.kernel })
        .collect()
}

/// [`functions`], with the diagnostics of reading them (syntax errors, unsupported
/// constructs, nesting too deep), spans in `text`.
pub fn read(text: &str, language: Language) -> (Vec<Function>, Vec<Diagnostic>) {
    let (functions, _, diagnostics) = read_with_constants(text, language);
    (functions, diagnostics)
}

/// [`read`], with the names of the module-level constants `text` defines (`TILE = 16`,
/// `const TILE: u32 = 16;`, ...), which kernels elsewhere may use: an editor compiling one
/// kernel at a time takes the text that defines them along, as it does a helper's.
pub fn read_with_constants(
    text: &str,
    language: Language,
) -> (Vec<Function>, Vec<String>, Vec<Diagnostic>) {
    let (funcs, mut diagnostics) = match language {
        Language::Python => front::python::parse(text),
        Language::Rust => front::rust::parse(text),
        Language::Cpp => front::cpp::parse(text),
        Language::TypeScript => front::typescript::parse(text),
    };
    let mut constants = Vec::new();
    let mut functions = Vec::new();
    for f in funcs {
        if f.constant.is_some() {
            // (What is wrong with a constant's value is reported where a kernel uses it.)
            constants.push(f.name);
            continue;
        }
        diagnostics.extend(f.diagnostics);
        functions.push(Function {
            name: f.name,
            span: f.span,
            name_span: f.name_span,
            kernel: f.kernel,
        });
    }
    (functions, constants, diagnostics)
}

/// The HIR of every kernel of `text`, with every diagnostic (errors mean the HIR is partial).
pub fn hir(text: &str, language: Language) -> (Vec<hir::Kernel>, Vec<Diagnostic>) {
    match language {
        Language::Python => front::python::lower(text),
        Language::Rust => front::rust::lower(text),
        Language::Cpp => front::cpp::lower(text),
        Language::TypeScript => front::typescript::lower(text),
    }
}

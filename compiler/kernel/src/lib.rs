//! The kernel compiler (`wave compile`): GPU kernels written in a general-purpose language, to
//! WAVE. The pipeline of `docs/kernels.md` (from the compiler design): frontend, HIR, MIR in SSA
//! form, optimisation, LIR, register allocation, emission.
//!
//! Built so far: the Python frontend and HIR ([`hir`]): typed, with thread identity bound to
//! special registers and intrinsics recognised, printed by `wave compile --emit hir`; and MIR
//! in SSA form ([`mir`]), with its verifier, printed by `--emit mir`. The stages after MIR are
//! the next step of the issue "The kernel compiler".

pub mod emit;
pub mod front;
pub mod hir;
pub mod lir;
pub mod mir;
pub mod opt;
pub mod regalloc;

pub use emit::{Options, Output, compile};

use wave_diag::Diagnostic;

/// A kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// Python (`.py`).
    Python,
}

impl Language {
    /// The language of a file, by its extension.
    pub fn from_extension(ext: &str) -> Option<Language> {
        match ext {
            "py" => Some(Language::Python),
            _ => None,
        }
    }
}

/// The HIR of every kernel of `text`, with every diagnostic (errors mean the HIR is partial).
pub fn hir(text: &str, language: Language) -> (Vec<hir::Kernel>, Vec<Diagnostic>) {
    match language {
        Language::Python => front::python::lower(text),
    }
}

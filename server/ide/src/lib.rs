//! Editor features as plain data, computed from the database ([`wave_db`]).
//!
//! Positions are byte offsets into the file's text; the LSP crate converts them. So far:
//! [`hover`] on an instruction gives its syntax, its semantics, the exact encoding of *this*
//! instruction (bytes and a table of its bit fields) and what each backend writes for it;
//! [`completions`]; [`definition`] and [`references`] of labels and parameters; [`symbols`], [`folding_ranges`], [`format`] (as `wave fmt`) and
//! [`inlay_hints`] (each kernel's occupancy on the chosen target).
//!
//! Files of the kernel languages (`.py`, `.rs`, `.cpp`, `.ts`) get the features of kernels
//! written there: diagnostics, hover, hints, lenses, previews and symbols of their kernels
//! (the rest of the file belongs to the language's own server).

mod actions;
mod at;
mod completion;
mod editing;
mod hover;
mod liveness;
mod navigation;
mod outline;
mod run;
mod source;
mod tokens;

pub use actions::{
    ALIAS, Action, ActionKind, FileDiagnostic, Tag, UNREACHABLE, UNUSED_LABEL, UNUSED_PARAMETER,
    code_actions, diagnostics, kernel_hints,
};
pub use completion::{Completion, CompletionKind, completions};
pub use editing::{
    Access, Signature, document_highlights, on_type_indent, selection_ranges, signature_help,
};
pub use hover::{Hover, hover};
pub use liveness::kernel_liveness;
pub use navigation::{definition, references, rename};
pub use outline::{Symbol, SymbolKind, folding_ranges, format, inlay_hints, symbols};
pub use run::{
    Agreement, DEFAULT_RUN_BUDGET, DIFFERENCES_SHOWN, DebugLaunch, Lens, LensCommand, Preview,
    RunDevice, RunPlan, RunResult, RunTrap, agreement, code_lenses, compare, execute,
    execute_on_gpu, plan_run, preview_form,
};
pub use tokens::{Token, TokenKind, file_tokens, kernel_tokens};
/// How far an emulator run has got (for [`execute`]).
pub use wave_emulator::Progress;

#[cfg(test)]
mod tests;

//! Editor features as plain data, computed from the database ([`wave_db`]).
//!
//! Positions are byte offsets into the file's text; the LSP crate converts them. So far:
//! [`hover`] on an instruction gives its syntax, its semantics, the exact encoding of *this*
//! instruction (bytes and a table of its bit fields) and what it becomes on each vendor;
//! [`completions`]; [`definition`] and [`references`] of labels and parameters; [`symbols`], [`folding_ranges`], [`format`] (as `wave fmt`) and
//! [`inlay_hints`] (each kernel's occupancy on the chosen target).

mod completion;
mod hover;
mod navigation;
mod outline;

pub use completion::{Completion, CompletionKind, completions};
pub use hover::{Hover, hover};
pub use navigation::{definition, references, rename};
pub use outline::{Symbol, SymbolKind, folding_ranges, format, inlay_hints, symbols};

#[cfg(test)]
mod tests;

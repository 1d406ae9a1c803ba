//! Editor features as plain data, computed from the database ([`wave_db`]).
//!
//! Positions are byte offsets into the file's text; the LSP crate converts them. So far:
//! [`hover`] on an instruction gives its syntax, its semantics, the exact encoding of *this*
//! instruction (bytes and a table of its bit fields) and what it becomes on each vendor.

mod hover;

pub use hover::{Hover, hover};

#[cfg(test)]
mod tests;

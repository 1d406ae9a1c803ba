//! Why something could not be done: [`Error`], with the rendered diagnostic or trap.

use std::fmt;
use std::sync::Arc;

use crate::GpuError;

/// Why something could not be done. Every variant's text is complete (the rendered
/// diagnostic of a compile error, the source line of a trap).
#[derive(Clone, Debug)]
pub enum Error {
    /// The source does not compile.
    Compile(Box<CompileError>),
    /// The kernel trapped on the emulator.
    Trap(Box<TrapError>),
    /// The run was interrupted (its [`Interrupt`](super::Interrupt) said so).
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

//! WAVE backends: a `.wbin` module to PTX, HIP C++, SYCL C++ or Metal Shading Language.
//!
//! All four share one shape: an `Options` struct, [`Error`], `write_string(module, options)`
//! returning a [`Translation`] (the text and a [`SourceMap`] from generated lines to WAVE
//! instruction offsets), and a `KEYWORDS` list of the target language's reserved words, which
//! generated names avoid. HIP, SYCL and Metal share one C-family writer (`cfamily`); PTX has
//! its own. Both print the same lowered form of each kernel (`lower`): calls inlined, and
//! control flow either per thread or wave-uniform, so that `break`, `continue`, `return`,
//! `halt` and wave operations in divergent code behave exactly as in the emulator.
//!
//! What a target cannot express (F64 on Metal, recursion, matrix instructions, ...) is an
//! [`Error`] naming the instruction's offset, which [`Problem::to_diagnostic`] turns into a
//! located diagnostic; the backends never emit code that would silently compute something
//! else. Mappings and limits are documented in `docs/backends/`.

mod cfamily;
mod divide;
pub mod hip;
mod kind;
mod lower;
pub mod metal;
mod names;
pub mod ptx;
mod structure;
pub mod sycl;

use std::fmt;

use wave_diag::{Diagnostic, Severity};
use wave_wbin::Module;

/// Diagnostic codes of the backends (documented in `docs/diagnostics.md`).
pub mod codes {
    /// The `.wbin` is not a valid program (undecodable, unbalanced blocks, bad call targets,
    /// registers outside R).
    pub const INVALID: &str = "E0300";
    /// The target cannot express this instruction.
    pub const UNSUPPORTED: &str = "E0301";
    /// A recursive call (CAP_RECURSION); the backends inline calls.
    pub const RECURSION: &str = "E0302";
    /// A guarded control-flow instruction.
    pub const GUARDED_CONTROL: &str = "E0303";
    /// Inlining made the kernel too large.
    pub const TOO_LARGE: &str = "E0304";
    /// No kernel of that name.
    pub const NO_KERNEL: &str = "E0305";
    /// Code the emulator always traps on (`return` outside a function, local memory in a
    /// kernel that has none): the generated code traps there too.
    pub const TRAPS: &str = "W0300";
    /// A documented difference from the emulator on this target.
    pub const DIFFERS: &str = "W0301";
}

/// A target language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// NVIDIA PTX.
    Ptx,
    /// AMD HIP C++.
    Hip,
    /// SYCL 2020 C++.
    Sycl,
    /// Metal Shading Language.
    Metal,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 4] = [Target::Ptx, Target::Hip, Target::Sycl, Target::Metal];

    /// The name used on the command line (`ptx`, `hip`, `sycl`, `metal`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Ptx => "ptx",
            Target::Hip => "hip",
            Target::Sycl => "sycl",
            Target::Metal => "metal",
        }
    }

    /// Its language as people write it (`PTX`, `HIP`, `SYCL`, `Metal`).
    pub fn label(self) -> &'static str {
        match self {
            Target::Ptx => "PTX",
            Target::Hip => "HIP",
            Target::Sycl => "SYCL",
            Target::Metal => "Metal",
        }
    }

    /// Its vendor and language (`NVIDIA (PTX)`).
    pub fn title(self) -> &'static str {
        match self {
            Target::Ptx => "NVIDIA (PTX)",
            Target::Hip => "AMD (HIP)",
            Target::Sycl => "Intel (SYCL)",
            Target::Metal => "Apple (Metal)",
        }
    }

    /// The Markdown fence its code is highlighted with: PTX, or C++ for the three C++
    /// dialects (the grammar renderers have).
    pub fn fence(self) -> &'static str {
        match self {
            Target::Ptx => "ptx",
            Target::Hip | Target::Sycl | Target::Metal => "cpp",
        }
    }

    /// The target named `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The usual file extension of the output.
    pub fn extension(self) -> &'static str {
        match self {
            Target::Ptx => "ptx",
            Target::Hip => "hip",
            Target::Sycl => "cpp",
            Target::Metal => "metal",
        }
    }

    /// The target language's reserved words.
    pub fn keywords(self) -> &'static [&'static str] {
        match self {
            Target::Ptx => ptx::KEYWORDS,
            Target::Hip => hip::KEYWORDS,
            Target::Sycl => sycl::KEYWORDS,
            Target::Metal => metal::KEYWORDS,
        }
    }
}

/// Generated code with its source map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The generated file.
    pub text: String,
    /// Generated line to WAVE instruction.
    pub source_map: SourceMap,
    /// Warnings (documented differences, `return` outside a function, ...).
    pub warnings: Vec<Problem>,
}

impl Translation {
    /// The code written for the instruction at `offset`, trimmed, without comments or lone
    /// braces: what a reader would call its translation. Every backend writes `// N: <the
    /// instruction>` before an instruction's code; lines mapped to the instruction before that
    /// marker are the kernel's prologue (a kernel's first instruction owns the entry's
    /// declarations) and are left out. The hover and the ISA reference both show this.
    pub fn code_of(&self, offset: u32) -> Vec<&str> {
        let mapped: Vec<&str> = self
            .text
            .lines()
            .enumerate()
            .filter(|(i, _)| self.source_map.offset_at(*i) == Some(offset))
            .map(|(_, l)| l.trim())
            .collect();
        let own = mapped
            .iter()
            .rposition(|l| {
                l.strip_prefix("// ")
                    .and_then(|r| r.split_once(": "))
                    .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .map_or(0, |i| i + 1);
        mapped[own..]
            .iter()
            .copied()
            // Comments, and the braces and labels that close enclosing blocks there.
            .filter(|l| {
                !l.is_empty() && !l.starts_with("//") && !l.chars().all(|c| c == '}' || c == '{')
            })
            .collect()
    }
}

/// Which WAVE instruction each generated line comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// For each line of the generated text (0-based), the byte offset of the WAVE
    /// instruction in the module's code, if the line comes from one.
    pub lines: Vec<Option<u32>>,
}

impl SourceMap {
    /// The instruction offset of generated line `line` (0-based).
    pub fn offset_at(&self, line: usize) -> Option<u32> {
        self.lines.get(line).copied().flatten()
    }

    /// The generated lines (0-based) of the instruction at `offset`.
    pub fn lines_of(&self, offset: u32) -> Vec<usize> {
        self.lines
            .iter()
            .enumerate()
            .filter(|(_, o)| **o == Some(offset))
            .map(|(line, _)| line)
            .collect()
    }
}

/// Something a backend reports about the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Stable code (`E03xx`, `W03xx`).
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// The kernel it concerns.
    pub kernel: String,
    /// Byte offset of the instruction in the module's code, when one is to blame.
    pub offset: Option<u32>,
    /// What is wrong, in plain words.
    pub message: String,
    /// Background.
    pub notes: Vec<String>,
}

impl Problem {
    pub(crate) fn error(
        code: &'static str,
        kernel: &str,
        offset: Option<u32>,
        message: String,
    ) -> Problem {
        Problem {
            code,
            severity: Severity::Error,
            kernel: kernel.into(),
            offset,
            message,
            notes: Vec::new(),
        }
    }

    pub(crate) fn warning(
        code: &'static str,
        kernel: &str,
        offset: Option<u32>,
        message: String,
    ) -> Problem {
        Problem {
            code,
            severity: Severity::Warning,
            kernel: kernel.into(),
            offset,
            message,
            notes: Vec::new(),
        }
    }

    pub(crate) fn with_note(mut self, note: &str) -> Problem {
        self.notes.push(note.into());
        self
    }

    /// A located diagnostic: the instruction's span in `source` (the text the module was
    /// assembled from) through the module's line table, or the start of the file.
    pub fn to_diagnostic(&self, module: &Module, source: &str) -> Diagnostic {
        let span = self
            .offset
            .and_then(|o| module.line_at(o))
            .map(|l| span_of(source, l.line, l.column, l.end_line, l.end_column))
            .unwrap_or(0..0);
        let mut d = match self.severity {
            Severity::Error => Diagnostic::error(self.code, span, self.message.clone()),
            Severity::Warning => Diagnostic::warning(self.code, span, self.message.clone()),
        };
        for n in &self.notes {
            d = d.with_note(n.clone());
        }
        d
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = if self.severity == Severity::Error { "error" } else { "warning" };
        write!(f, "{level}[{}]: kernel `{}`", self.code, self.kernel)?;
        if let Some(o) = self.offset {
            write!(f, ", instruction at offset {o}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Byte span of 1-based (line, column)..(end_line, end_column) in `source`.
fn span_of(
    source: &str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
) -> std::ops::Range<usize> {
    let at = |line: u32, column: u32| -> usize {
        let start: usize =
            source.split_inclusive('\n').take(line.saturating_sub(1) as usize).map(str::len).sum();
        (start + column.saturating_sub(1) as usize).min(source.len())
    };
    let (a, b) = (at(line, column), at(end_line, end_column));
    a..b.max(a)
}

/// Why a module cannot be translated: at least one error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// Every problem found, errors and warnings.
    pub problems: Vec<Problem>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Options of every target, for callers that pick the target at run time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// PTX options.
    pub ptx: ptx::Options,
    /// HIP options.
    pub hip: hip::Options,
    /// SYCL options.
    pub sycl: sycl::Options,
    /// Metal options.
    pub metal: metal::Options,
}

/// Translates `module` for `target`.
pub fn write_string(
    target: Target,
    module: &Module,
    options: &Options,
) -> Result<Translation, Error> {
    match target {
        Target::Ptx => ptx::write_string(module, &options.ptx),
        Target::Hip => hip::write_string(module, &options.hip),
        Target::Sycl => sycl::write_string(module, &options.sycl),
        Target::Metal => metal::write_string(module, &options.metal),
    }
}

/// The kernels to translate: all, or the one named.
pub(crate) fn selected<'m>(
    module: &'m Module,
    kernel: Option<&str>,
) -> Result<Vec<&'m wave_wbin::Kernel>, Error> {
    match kernel {
        None => Ok(module.kernels.iter().collect()),
        Some(name) => match module.kernel(name) {
            Some((_, k)) => Ok(vec![k]),
            None => Err(Error {
                problems: vec![Problem::error(
                    codes::NO_KERNEL,
                    name,
                    None,
                    format!(
                        "no kernel `{name}`; the module has {}",
                        module
                            .kernels
                            .iter()
                            .map(|k| format!("`{}`", k.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )],
            }),
        },
    }
}

/// Text being generated, with its source map.
pub(crate) struct Out {
    pub text: String,
    pub lines: Vec<Option<u32>>,
    /// The instruction the next lines come from.
    pub current: Option<u32>,
    pub indent: usize,
}

impl Out {
    pub fn new() -> Out {
        Out { text: String::new(), lines: Vec::new(), current: None, indent: 0 }
    }

    /// Writes one line at the current indentation.
    pub fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.text.push_str("    ");
        }
        self.text.push_str(s);
        self.text.push('\n');
        self.lines.push(self.current);
    }

    /// Writes one line with no indentation (labels, directives).
    pub fn flush_left(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
        self.lines.push(self.current);
    }

    pub fn finish(self, warnings: Vec<Problem>) -> Translation {
        Translation { text: self.text, source_map: SourceMap { lines: self.lines }, warnings }
    }
}

#[cfg(test)]
mod tests;

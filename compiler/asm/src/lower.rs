//! Checking and encoding: from flat statements to a [`Module`] plus every diagnostic.
//!
//! One pass over the statements does kernel grouping, directive handling, mnemonic and
//! operand resolution against the isa table, block matching and encoding; a second step per
//! kernel resolves call targets and checks what needs the whole kernel (declared register
//! count, unclosed blocks, uniformity of barrier conditions, non-returning atomics). Errors
//! never stop the pass: each statement is checked on its own so that one mistake gives one
//! diagnostic, and the result holds everything that could be encoded.
//!
//! [`Lowering`] and the per-kernel state live here, with the statement dispatch; its methods
//! sit in rooms by what they check: `directive` (kernels and directives), `instruction` (one
//! instruction, using `operand` for its operands and `blocks` for structured control flow)
//! and `finish` (the whole-kernel checks at `.end`).

mod blocks;
mod directive;
mod finish;
mod instruction;
mod operand;

use std::collections::HashMap;

use wave_diag::{Diagnostic, Span};
use wave_isa::{Inst, Opcode};
use wave_wbin::{Module, Param};

use crate::syntax::{Parsed, Stmt, StmtKind};

/// The directives the assembler knows.
pub const DIRECTIVES: [&str; 6] =
    [".kernel", ".end", ".param", ".registers", ".local_memory", ".workgroup_size"];

/// An instruction placed in the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Index of its statement in [`Parsed::stmts`].
    pub stmt: usize,
    /// Index of its kernel in the module.
    pub kernel: usize,
    /// Byte offset in the module's code.
    pub offset: u32,
    /// The encoded fields.
    pub inst: Inst,
}

/// What the assembler knows of one kernel's source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSource {
    /// Its name.
    pub name: String,
    /// From `.kernel` to `.end` (or the last statement when `.end` is missing).
    pub span: Span,
    /// The name's span.
    pub name_span: Span,
    /// Labels: name, span and code offset.
    pub labels: Vec<(String, Span, u32)>,
    /// Parameter spans, in order.
    pub param_spans: Vec<Span>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    If,
    Else,
    Loop,
}

impl BlockKind {
    /// The instruction that opens a block of this kind (an `else` arm's is its `if`).
    fn opener(self) -> Opcode {
        match self {
            BlockKind::If | BlockKind::Else => Opcode::If,
            BlockKind::Loop => Opcode::Loop,
        }
    }

    /// The instruction that closes a block of this kind.
    fn closer(self) -> Opcode {
        match self {
            BlockKind::If | BlockKind::Else => Opcode::Endif,
            BlockKind::Loop => Opcode::Endloop,
        }
    }
}

struct Block {
    kind: BlockKind,
    span: Span,
    /// The `if` condition is provably lane-varying.
    divergent: bool,
}

struct KernelState {
    source: KernelSource,
    index: usize,
    start: u32,
    params: Vec<Param>,
    registers: Option<(u16, Span)>,
    local_memory: Option<(u32, Span)>,
    workgroup_size: Option<([u32; 3], Span)>,
    blocks: Vec<Block>,
    labels: HashMap<String, (Span, u32)>,
    calls: Vec<(usize, String, Span)>,
    /// Register uses: (first register, count, span) for the `.registers` check.
    register_uses: Vec<(u32, u32, Span)>,
    max_predicate: Option<u8>,
    instructions: usize,
    /// Registers whose value may differ between lanes (flow-insensitive).
    varying: [bool; 256],
    varying_predicates: [bool; 4],
}

pub(crate) struct Lowering<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) module: Module,
    pub(crate) placed: Vec<Placed>,
    pub(crate) kernels: Vec<KernelSource>,
    kernel: Option<KernelState>,
    kernel_names: HashMap<String, Span>,
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
    starts
}

impl<'a> Lowering<'a> {
    pub(crate) fn new(text: &'a str, file: &str) -> Self {
        let module = Module { files: vec![file.to_owned()], ..Module::default() };
        Lowering {
            text,
            line_starts: line_starts(text),
            diagnostics: Vec::new(),
            module,
            placed: Vec::new(),
            kernels: Vec::new(),
            kernel: None,
            kernel_names: HashMap::new(),
        }
    }

    /// 1-based line and column of byte `at`.
    fn position(&self, at: usize) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= at).max(1) - 1;
        ((line + 1) as u32, (at - self.line_starts[line] + 1) as u32)
    }

    fn line_of(&self, at: usize) -> u32 {
        self.position(at).0
    }

    fn error(
        &mut self,
        code: &'static str,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.diagnostics.push(Diagnostic::error(code, span, message));
        self.diagnostics.last_mut().unwrap_or_else(|| unreachable!())
    }

    fn warning(
        &mut self,
        code: &'static str,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.diagnostics.push(Diagnostic::warning(code, span, message));
        self.diagnostics.last_mut().unwrap_or_else(|| unreachable!())
    }

    pub(crate) fn run(&mut self, parsed: &Parsed) {
        for (index, stmt) in parsed.stmts.iter().enumerate() {
            self.statement(index, stmt);
        }
        if let Some(k) = self.kernel.take() {
            let span = k.source.span.clone();
            let name = k.source.name.clone();
            let at = self.text.len();
            let insert = if self.text.ends_with('\n') || self.text.is_empty() {
                ".end\n"
            } else {
                "\n.end\n"
            };
            let d = self.error(
                "E0152",
                k.source.name_span.clone(),
                format!("kernel `{name}` has no `.end`"),
            );
            d.labels.push((span, "this kernel".into()));
            d.suggestion = Some(wave_diag::Suggestion {
                message: "end the kernel".into(),
                span: at..at,
                replacement: insert.into(),
            });
            self.finish_kernel(k);
        }
    }

    fn statement(&mut self, index: usize, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Kernel { name } => self.begin_kernel(stmt, name.clone()),
            StmtKind::End => match self.kernel.take() {
                Some(mut k) => {
                    k.source.span.end = stmt.span.end;
                    self.finish_kernel(k);
                }
                None => {
                    self.error("E0151", stmt.span.clone(), "`.end` without a `.kernel`");
                }
            },
            StmtKind::Directive { name, name_span, args } => {
                if self.kernel.is_none() && DIRECTIVES.contains(&name.as_str()) {
                    self.error("E0146", stmt.span.clone(), format!("`{name}` outside a kernel"))
                        .notes
                        .push("directives other than `.kernel` belong between `.kernel NAME` and `.end`".into());
                    return;
                }
                self.directive(stmt, name, name_span, args);
            }
            StmtKind::Label { name, name_span } => {
                let Some(k) = self.kernel.as_mut() else {
                    self.error("E0147", stmt.span.clone(), "label outside a kernel");
                    return;
                };
                let offset = self.module.code.len() as u32;
                if let Some((first, _)) = k.labels.get(name) {
                    let first = first.clone();
                    self.error(
                        "E0172",
                        name_span.clone(),
                        format!("label `{name}` is defined twice"),
                    )
                    .labels
                    .push((first, "first defined here".into()));
                    return;
                }
                k.labels.insert(name.clone(), (name_span.clone(), offset));
                k.source.labels.push((name.clone(), name_span.clone(), offset));
            }
            StmtKind::Instruction(syntax) => {
                if self.kernel.is_none() {
                    self.error("E0147", stmt.span.clone(), "instruction outside a kernel")
                        .notes
                        .push("instructions belong between `.kernel NAME` and `.end`".into());
                    return;
                }
                self.instruction(index, stmt, syntax);
            }
        }
    }
}

/// Whether a name would be read as something other than a parameter name.
/// Whether a name reads as a register, predicate, special register or float literal in
/// assembly (`r3`, `p0`, `sr_x`, `inf`), so it cannot name a parameter.
pub fn looks_reserved(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let numbered = |prefix: char| {
        lower.strip_prefix(prefix).is_some_and(|rest| {
            let digits = rest.split('.').next().unwrap_or("");
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        })
    };
    numbered('r')
        || numbered('p')
        || lower.starts_with("sr_")
        || matches!(lower.as_str(), "inf" | "nan")
}

/// Parses an integer literal: decimal, `0x`, `0b`, optional `-`, `_` separators.
pub fn parse_integer(text: &str) -> Option<i128> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let clean: String = rest.chars().filter(|c| *c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || digits.len() > 40 {
        return None;
    }
    let value = i128::from_str_radix(digits, radix).ok()?;
    Some(if negative { -value } else { value })
}

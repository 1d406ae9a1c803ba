//! What each piece of a kernel's text is: the classification behind semantic tokens, hovers on
//! operands and document highlights. Computed from the assembler's statements, so it agrees
//! with what the assembler understood.

use std::ops::Range;

use wave_asm::syntax::{ArgKind, InstructionSyntax, Operand, OperandKind, StmtKind};
use wave_db::KernelCheck;
use wave_isa::{OpInfo, Operand as Form};

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// An instruction mnemonic with its suffixes.
    Mnemonic {
        /// The table row, when the name resolves.
        op: Option<&'static OpInfo>,
        /// Written as an alias (any spelling other than the canonical name).
        alias: bool,
    },
    /// A directive name (`.param`, `.kernel`, `.end`).
    Directive(String),
    /// The name on a `.kernel` line.
    KernelName,
    /// A label: its definition (`name:`) or a call target.
    Label {
        /// The `name:` itself.
        definition: bool,
    },
    /// A parameter: its `.param` name or a use as an operand.
    Parameter {
        /// The `.param` itself.
        definition: bool,
        /// Its index (the register that holds it at entry).
        index: usize,
    },
    /// A parameter type in a `.param` line.
    Type,
    /// A general register (a pair counts as its first register).
    Register {
        /// Its number.
        number: u32,
        /// Written by the instruction.
        write: bool,
    },
    /// A predicate (guards included).
    Predicate {
        /// Its number.
        number: u32,
        /// Written by the instruction.
        write: bool,
    },
    /// A special register.
    Special(String),
    /// A number.
    Number,
    /// A comment.
    Comment,
}

/// One classified piece of a kernel's text (range relative to the kernel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// Where.
    pub range: Range<usize>,
    /// What.
    pub kind: TokenKind,
    /// Index of its statement in the kernel's statements (`None` for comments).
    pub stmt: Option<usize>,
}

/// The parameters of a kernel as written: name and span, in order.
pub(crate) fn params(check: &KernelCheck) -> Vec<(String, Range<usize>, String)> {
    let mut out = Vec::new();
    for stmt in &check.parsed.stmts {
        if let StmtKind::Directive { name, args, .. } = &stmt.kind
            && name == ".param"
        {
            for a in args {
                if let ArgKind::Typed { name, ty } = &a.kind {
                    out.push((name.0.clone(), name.1.clone(), ty.0.to_ascii_lowercase()));
                }
            }
        }
    }
    out
}

/// The labels of a kernel as written: name and span of `name:`.
pub(crate) fn labels(check: &KernelCheck) -> Vec<(String, Range<usize>)> {
    check
        .parsed
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Label { name, name_span } => Some((name.clone(), name_span.clone())),
            _ => None,
        })
        .collect()
}

/// The table row of a written mnemonic, and whether it is an alias.
pub(crate) fn resolve(mnemonic: &str) -> (Option<&'static OpInfo>, bool) {
    let lower = mnemonic.to_ascii_lowercase();
    let base = lower.split('.').next().unwrap_or("");
    match wave_isa::lookup_name(base) {
        Some((op, _)) => (Some(op), op.mnemonic != base),
        None => (None, false),
    }
}

/// Whether operand `i` of `op` is written.
fn writes(op: Option<&OpInfo>, i: usize) -> bool {
    matches!(
        op.and_then(|op| op.operands.get(i)),
        Some(Form::Reg { write: true, .. } | Form::PredDst)
    )
}

/// Every token of a kernel, in text order.
pub fn kernel_tokens(check: &KernelCheck) -> Vec<Token> {
    let params = params(check);
    let labels = labels(check);
    let mut out = Vec::new();
    for (i, stmt) in check.parsed.stmts.iter().enumerate() {
        let s = Some(i);
        match &stmt.kind {
            StmtKind::Kernel { name } => {
                let dir_end = stmt.span.start + ".kernel".len().min(stmt.span.len());
                out.push(Token {
                    range: stmt.span.start..dir_end,
                    kind: TokenKind::Directive(".kernel".into()),
                    stmt: s,
                });
                if let Some((_, span)) = name {
                    out.push(Token { range: span.clone(), kind: TokenKind::KernelName, stmt: s });
                }
            }
            StmtKind::End => out.push(Token {
                range: stmt.span.clone(),
                kind: TokenKind::Directive(".end".into()),
                stmt: s,
            }),
            StmtKind::Directive { name, name_span, args } => {
                out.push(Token {
                    range: name_span.clone(),
                    kind: TokenKind::Directive(name.clone()),
                    stmt: s,
                });
                for a in args {
                    match &a.kind {
                        ArgKind::Typed { name: (n, span), ty } => {
                            let index = params.iter().position(|(p, _, _)| p == n).unwrap_or(0);
                            out.push(Token {
                                range: span.clone(),
                                kind: TokenKind::Parameter { definition: true, index },
                                stmt: s,
                            });
                            out.push(Token { range: ty.1.clone(), kind: TokenKind::Type, stmt: s });
                        }
                        ArgKind::Integer(_) | ArgKind::Float(_) => out.push(Token {
                            range: a.span.clone(),
                            kind: TokenKind::Number,
                            stmt: s,
                        }),
                        ArgKind::Name(_) => {}
                    }
                }
            }
            StmtKind::Label { name_span, .. } => out.push(Token {
                range: name_span.clone(),
                kind: TokenKind::Label { definition: true },
                stmt: s,
            }),
            StmtKind::Instruction(inst) => instruction(inst, s, &params, &labels, &mut out),
        }
    }
    for c in &check.parsed.comments {
        out.push(Token { range: c.clone(), kind: TokenKind::Comment, stmt: None });
    }
    out.sort_by_key(|t| (t.range.start, t.range.end));
    out
}

fn instruction(
    inst: &InstructionSyntax,
    stmt: Option<usize>,
    params: &[(String, Range<usize>, String)],
    labels: &[(String, Range<usize>)],
    out: &mut Vec<Token>,
) {
    if let Some(g) = &inst.guard {
        out.push(Token {
            range: g.span.clone(),
            kind: TokenKind::Predicate { number: g.number, write: false },
            stmt,
        });
    }
    let (op, alias) = resolve(&inst.mnemonic);
    out.push(Token {
        range: inst.mnemonic_span.clone(),
        kind: TokenKind::Mnemonic { op, alias },
        stmt,
    });
    for (i, operand) in inst.operands.iter().enumerate() {
        operand_tokens(operand, writes(op, i), stmt, params, labels, out);
    }
}

fn operand_tokens(
    operand: &Operand,
    write: bool,
    stmt: Option<usize>,
    params: &[(String, Range<usize>, String)],
    labels: &[(String, Range<usize>)],
    out: &mut Vec<Token>,
) {
    let range = operand.span.clone();
    let kind = match &operand.kind {
        OperandKind::Register { number, .. } => TokenKind::Register { number: *number, write },
        OperandKind::Pair { low, .. } => TokenKind::Register { number: *low, write },
        OperandKind::Predicate { number, .. } => TokenKind::Predicate { number: *number, write },
        OperandKind::Special(name) => TokenKind::Special(name.clone()),
        OperandKind::Integer(_) | OperandKind::Float(_) => TokenKind::Number,
        OperandKind::Name(name) => {
            if let Some(index) = params.iter().position(|(p, _, _)| p == name) {
                TokenKind::Parameter { definition: false, index }
            } else if labels.iter().any(|(l, _)| l == name) {
                TokenKind::Label { definition: false }
            } else {
                return;
            }
        }
        OperandKind::Memory { base, offset } => {
            operand_tokens(base, false, stmt, params, labels, out);
            if let Some((_, span)) = offset {
                out.push(Token { range: span.clone(), kind: TokenKind::Number, stmt });
            }
            return;
        }
        OperandKind::Scope(_) => return,
    };
    out.push(Token { range, kind, stmt });
}

/// The token at `local` (inclusive of its end, so a cursor just after a word finds it).
pub(crate) fn token_at(tokens: &[Token], local: usize) -> Option<&Token> {
    tokens
        .iter()
        .find(|t| t.range.start <= local && local < t.range.end)
        .or_else(|| tokens.iter().find(|t| t.range.end == local && t.range.start < local))
}

/// Every token of a file, in text order, with ranges in the file: each kernel's tokens and
/// the comments outside kernels (the semantic tokens).
pub fn file_tokens(db: &wave_db::Database, file: wave_db::SourceFile) -> Vec<Token> {
    if crate::source::is_source(db, file) {
        return Vec::new();
    }
    let layout = wave_db::kernels(db, file);
    let text = file.text(db);
    let mut out = Vec::new();
    for r in &layout.outside {
        let line = &text[r.clone()];
        if let Some(i) = line.find(';') {
            let end = line.trim_end().len();
            if i < end {
                let at = r.start;
                out.push(Token { range: at + i..at + end, kind: TokenKind::Comment, stmt: None });
            }
        }
    }
    for k in &layout.kernels {
        let check = wave_db::check_kernel(db, k.source);
        out.extend(kernel_tokens(check).into_iter().map(|mut t| {
            t.range = t.range.start + k.range.start..t.range.end + k.range.start;
            t
        }));
    }
    out.sort_by_key(|t| (t.range.start, t.range.end));
    out
}

/// Where control goes after the instruction spelled `word` (any case, suffixes allowed), by
/// the table's flags; `None` when `word` is no mnemonic.
pub(crate) fn flow_of(word: &str) -> Option<wave_isa::Flow> {
    let word = word.to_ascii_lowercase();
    let base = word.split('.').next().unwrap_or("");
    wave_isa::lookup_name(base).map(|(op, _)| op.flags.flow)
}

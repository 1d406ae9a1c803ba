//! From source text to a flat list of statements.
//!
//! The grammar nests kernels and structured blocks so that editors can fold and indent them,
//! but the assembler does its own block matching over a flat, line-ordered statement list:
//! that way an unbalanced `endif` or a crossing `loop` gets a precise diagnostic from us
//! instead of whatever shape tree-sitter's error recovery chose. Statements found inside
//! `ERROR` nodes are recovered the same way; any other token there is a syntax error.
//!
//! This module holds the statement types and [`parse`], which picks one of two readers that
//! give the same statements: the line parser (`fast`), and the tree-sitter flattener
//! (`tree`, [`parse_tree`]) that the line parser falls back on for the lines it does not model.
//! Arrows go one way: `fast` uses `tree`, both use the types here, neither knows [`parse`].

pub(crate) mod fast;
mod tree;

use wave_diag::{Diagnostic, Span};

pub use tree::parse_tree;

/// A half of a 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    /// Bits [15:0].
    Lo,
    /// Bits [31:16].
    Hi,
}

/// One operand as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// `r7`, `r3.lo`. The number may be out of range; the checker says so.
    Register {
        /// Register number as written.
        number: u32,
        /// `.lo` / `.hi`.
        half: Option<Half>,
    },
    /// `r4:r5`.
    Pair {
        /// First register.
        low: u32,
        /// Last register.
        high: u32,
    },
    /// `p1` or `!p1`.
    Predicate {
        /// Predicate number as written.
        number: u32,
        /// Written with `!`.
        negate: bool,
    },
    /// `sr_lane_id` (lowercased).
    Special(String),
    /// An integer literal, as written.
    Integer(String),
    /// A float literal, as written.
    Float(String),
    /// A name: a parameter or a label.
    Name(String),
    /// `[base + offset]`.
    Memory {
        /// The base register or parameter name.
        base: Box<Operand>,
        /// The signed offset literal (sign applied) and its span.
        offset: Option<(String, Span)>,
    },
    /// A legacy trailing scope `.device` (without the dot, lowercased).
    Scope(String),
}

/// An operand with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// What was written.
    pub kind: OperandKind,
    /// Where.
    pub span: Span,
}

/// `@p0` / `@!p0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardSyntax {
    /// Predicate number as written.
    pub number: u32,
    /// Written with `!`.
    pub negate: bool,
    /// Where.
    pub span: Span,
}

/// An instruction statement as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionSyntax {
    /// Optional guard.
    pub guard: Option<GuardSyntax>,
    /// The mnemonic as written, with its suffixes.
    pub mnemonic: String,
    /// The mnemonic's span.
    pub mnemonic_span: Span,
    /// Operands in order.
    pub operands: Vec<Operand>,
    /// A syntax error inside the statement was already reported: skip operand checks.
    pub broken: bool,
}

/// A directive argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// An integer literal.
    Integer(String),
    /// A float literal.
    Float(String),
    /// A name.
    Name(String),
    /// `name: type`.
    Typed {
        /// The name and its span.
        name: (String, Span),
        /// The type and its span.
        ty: (String, Span),
    },
}

/// A directive argument with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// What was written.
    pub kind: ArgKind,
    /// Where.
    pub span: Span,
}

/// What a statement is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// `.kernel NAME`.
    Kernel {
        /// The name, if written.
        name: Option<(String, Span)>,
    },
    /// `.end`.
    End,
    /// Any other directive.
    Directive {
        /// Its name with the dot, lowercased.
        name: String,
        /// The name's span.
        name_span: Span,
        /// Its arguments.
        args: Vec<Arg>,
    },
    /// `name:`.
    Label {
        /// The label's name.
        name: String,
        /// The name's span.
        name_span: Span,
    },
    /// An instruction, including the structured control flow keywords.
    Instruction(InstructionSyntax),
}

/// One statement with the span of its whole text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Its text, without trailing comments.
    pub span: Span,
}

/// The parse of one file: statements in source order, comments, and syntax errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Statements in source order.
    pub stmts: Vec<Stmt>,
    /// Comment spans in source order.
    pub comments: Vec<Span>,
    /// Syntax errors (code E0001, E0002).
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses `text` with tree-sitter-wave and flattens the tree.
///
/// Well-formed files take a line-by-line fast path ([`fast::parse`]) that yields exactly
/// the statements the tree would; a line it cannot read is parsed by tree-sitter in a window
/// around it. Where the block keywords do not balance, each line is read as it stands and
/// the block matcher reports the mismatch (see [`parse_is_tree_sitters`]).
pub fn parse(text: &str) -> Parsed {
    fast::parse(text).unwrap_or_else(|| parse_tree(text))
}

/// Whether [`parse`] gives tree-sitter's answer for `text` (`true`), or the block keywords do
/// not balance and the line parser's reading is the definition (`false`; the block matcher
/// then reports what is open or unmatched, see docs/assembly.md).
pub fn parse_is_tree_sitters(text: &str) -> bool {
    fast::parse_reading(text).is_none_or(|(_, exact)| exact)
}

/// The value of a memory offset written after `+` or `-` (`[r1 - 4]` is `-4`, `[r1 - -4]`
/// is `4`).
pub(crate) fn signed_offset(negative: bool, literal: &str) -> String {
    match (negative, literal.strip_prefix('-')) {
        (false, _) => literal.to_owned(),
        (true, Some(rest)) => rest.to_owned(),
        (true, None) => format!("-{literal}"),
    }
}

pub(crate) fn register(text: &str) -> OperandKind {
    let (num, half) = match text.split_once('.') {
        Some((n, h)) if h.eq_ignore_ascii_case("lo") => (n, Some(Half::Lo)),
        Some((n, h)) if h.eq_ignore_ascii_case("hi") => (n, Some(Half::Hi)),
        Some((n, _)) => (n, None),
        None => (text, None),
    };
    OperandKind::Register { number: number_after(num, 1), half }
}

/// The decimal number after the first `skip` bytes, saturating at `u32::MAX`.
pub(crate) fn number_after(text: &str, skip: usize) -> u32 {
    text.get(skip..)
        .unwrap_or("")
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0u32, |n, d| n.saturating_mul(10).saturating_add(u32::from(d - b'0')))
}

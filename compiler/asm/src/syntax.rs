//! From the tree-sitter tree to a flat list of statements.
//!
//! The grammar nests kernels and structured blocks so that editors can fold and indent them,
//! but the assembler does its own block matching over a flat, line-ordered statement list:
//! that way an unbalanced `endif` or a crossing `loop` gets a precise diagnostic from us
//! instead of whatever shape tree-sitter's error recovery chose. Statements found inside
//! `ERROR` nodes are recovered the same way; any other token there is a syntax error.

use wave_diag::{Diagnostic, Span};

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
/// Well-formed files take a line-by-line fast path ([`crate::fast::parse`]) that yields exactly
/// the statements the tree would; a line it cannot read is parsed by tree-sitter in a window
/// around it. Where the block keywords do not balance, each line is read as it stands and
/// the block matcher reports the mismatch (see [`parse_is_tree_sitters`]).
pub fn parse(text: &str) -> Parsed {
    crate::fast::parse(text).unwrap_or_else(|| parse_tree(text))
}

/// Whether [`parse`] gives tree-sitter's answer for `text` (`true`), or the block keywords do
/// not balance and the line parser's reading is the definition (`false`; the block matcher
/// then reports what is open or unmatched, see docs/assembly.md).
pub fn parse_is_tree_sitters(text: &str) -> bool {
    crate::fast::parse_reading(text).is_none_or(|(_, exact)| exact)
}

/// Parses `text` with tree-sitter-wave and flattens the tree (no fast path).
pub fn parse_tree(text: &str) -> Parsed {
    let mut parser = tree_sitter::Parser::new();
    let mut parsed = Parsed::default();
    if parser.set_language(&tree_sitter_wave::LANGUAGE.into()).is_err() {
        parsed.diagnostics.push(Diagnostic::error(
            "E0000",
            0..0,
            "internal error: the WAVE grammar does not match the tree-sitter runtime",
        ));
        return parsed;
    }
    let Some(tree) = parser.parse(text, None) else {
        parsed.diagnostics.push(Diagnostic::error(
            "E0000",
            0..0,
            "internal error: parsing stopped",
        ));
        return parsed;
    };
    let mut walker = Walker { text, out: &mut parsed, consumed_to: 0 };
    walker.container(tree.root_node());
    parsed
}

/// The siblings just before and after a node.
#[derive(Clone, Copy)]
struct Around<'t> {
    prev: Option<tree_sitter::Node<'t>>,
    next: Option<tree_sitter::Node<'t>>,
}

struct Walker<'a> {
    text: &'a str,
    out: &'a mut Parsed,
    /// Nodes that start before this offset were taken by an earlier keyword (a kernel name
    /// that error recovery parsed as an instruction).
    consumed_to: usize,
}

fn span(node: tree_sitter::Node<'_>) -> Span {
    node.start_byte()..node.end_byte()
}

impl<'a> Walker<'a> {
    fn text(&self, node: tree_sitter::Node<'_>) -> &'a str {
        &self.text[node.start_byte()..node.end_byte()]
    }

    fn push(&mut self, kind: StmtKind, span: Span) {
        self.out.stmts.push(Stmt { kind, span });
    }

    fn keyword(
        &mut self,
        mnemonic: &str,
        node: tree_sitter::Node<'_>,
        operands: Vec<Operand>,
        end: usize,
    ) {
        let s = span(node);
        self.push(
            StmtKind::Instruction(InstructionSyntax {
                guard: None,
                mnemonic: mnemonic.to_owned(),
                mnemonic_span: s.clone(),
                operands,
                broken: false,
            }),
            s.start..end,
        );
    }

    fn syntax_error(&mut self, node: tree_sitter::Node<'_>) {
        let s = span(node);
        // One diagnostic per line of unexpected text.
        if let Some(last) = self.out.diagnostics.last_mut()
            && last.code == "E0001"
            && !self.text[last.span.end.min(s.start)..s.start].contains('\n')
            && last.span.end <= s.start
        {
            last.span.end = s.end;
            last.message = format!("syntax error: unexpected `{}`", &self.text[last.span.clone()]);
            return;
        }
        let shown = self.text(node).trim();
        let message = if shown.is_empty() {
            "syntax error".to_owned()
        } else {
            format!("syntax error: unexpected `{shown}`")
        };
        self.out.diagnostics.push(Diagnostic::error("E0001", s, message));
    }

    /// Visits the statements inside a container node (source file, kernel, block, ERROR).
    fn container(&mut self, node: tree_sitter::Node<'_>) {
        let mut cursor = node.walk();
        // Each child with its neighbours, from one walk: tree-sitter's own `prev_sibling` and
        // `next_sibling` search down from the root, which in thousands of nested blocks made
        // flattening quadratic.
        let children: Vec<tree_sitter::Node<'_>> = node.children(&mut cursor).collect();
        for (i, child) in children.iter().enumerate() {
            let around = Around {
                prev: i.checked_sub(1).map(|j| children[j]),
                next: children.get(i + 1).copied(),
            };
            self.item(*child, node, around);
        }
    }

    fn item(
        &mut self,
        node: tree_sitter::Node<'_>,
        parent: tree_sitter::Node<'_>,
        around: Around<'_>,
    ) {
        if node.start_byte() < self.consumed_to {
            return;
        }
        if node.is_missing() {
            // Missing block closers are reported by the block matcher; other missing tokens
            // are syntax errors.
            let kind = node.kind();
            if !matches!(kind, "endif" | "endloop" | ".end") {
                let at = node.start_byte();
                self.out.diagnostics.push(Diagnostic::error(
                    "E0002",
                    at..at,
                    format!("syntax error: expected `{kind}`"),
                ));
            }
            return;
        }
        match node.kind() {
            "comment" => self.out.comments.push(span(node)),
            "kernel" => self.kernel(node),
            "if_block" | "else_clause" | "loop_block" | "ERROR" => {
                if node.kind() == "ERROR" && node.child_count() == 0 {
                    // A leaf ERROR may be a lone keyword that recovery could not place.
                    match self.text(node).trim() {
                        ".kernel" => self.kernel_keyword(node, parent, around),
                        ".end" => self.push(StmtKind::End, span(node)),
                        kw @ ("else" | "endif" | "loop" | "endloop") => {
                            let end = node.end_byte();
                            self.keyword(kw, node, Vec::new(), end);
                        }
                        _ => self.syntax_error(node),
                    }
                } else {
                    self.container(node);
                }
            }
            "directive" => self.directive(node),
            "label" => {
                let name = node.child_by_field_name("name").unwrap_or(node);
                let name_text = self.text(name).to_owned();
                self.push(StmtKind::Label { name: name_text, name_span: span(name) }, span(node));
            }
            "instruction" => self.instruction(node),
            "if" => {
                let condition =
                    around.next.filter(|n| matches!(n.kind(), "predicate" | "negated_predicate"));
                let (operands, end) = match condition {
                    Some(c) => (self.operand(c).into_iter().collect(), c.end_byte()),
                    None => (Vec::new(), node.end_byte()),
                };
                self.keyword("if", node, operands, end);
            }
            "else" | "endif" | "loop" | "endloop" => {
                let end = node.end_byte();
                self.keyword(node.kind(), node, Vec::new(), end);
            }
            ".end" => self.push(StmtKind::End, span(node)),
            ".kernel" => self.kernel_keyword(node, parent, around),
            // Consumed with their keyword.
            "predicate" | "negated_predicate" | "identifier"
                if parent.kind() != "ERROR"
                    || around.prev.is_some_and(|p| matches!(p.kind(), "if" | ".kernel")) => {}
            "\n" | "\r\n" | "newline" | "_newline" => {}
            kind if !node.is_named() && kind.trim().is_empty() => {}
            _ => self.syntax_error(node),
        }
    }

    fn kernel_keyword(
        &mut self,
        node: tree_sitter::Node<'_>,
        parent: tree_sitter::Node<'_>,
        around: Around<'_>,
    ) {
        // Inside an ERROR the name may have been parsed as an operand-less instruction.
        let next = around.next.or_else(|| {
            if node.is_error() || parent.is_error() {
                let outer = if node.is_error() { node } else { parent };
                outer.next_sibling()
            } else {
                None
            }
        });
        let name_node = next.and_then(|n| match n.kind() {
            "identifier" => Some(n),
            "instruction" if n.named_child_count() == 1 => n.child_by_field_name("mnemonic"),
            _ => None,
        });
        let name = name_node.map(|n| (self.text(n).to_owned(), span(n)));
        if let Some((_, s)) = &name {
            self.consumed_to = s.end;
        }
        let end = name.as_ref().map_or(node.end_byte(), |(_, s)| s.end);
        self.push(StmtKind::Kernel { name }, node.start_byte()..end);
    }

    fn kernel(&mut self, node: tree_sitter::Node<'_>) {
        self.container(node);
    }

    fn directive(&mut self, node: tree_sitter::Node<'_>) {
        let name_node = node.child_by_field_name("name").unwrap_or(node);
        let name = self.text(name_node).to_ascii_lowercase();
        let mut args = Vec::new();
        let mut cursor = node.walk();
        for child in node.children_by_field_name("argument", &mut cursor) {
            let kind = match child.kind() {
                "integer" => ArgKind::Integer(self.text(child).to_owned()),
                "float" => ArgKind::Float(self.text(child).to_owned()),
                "typed_name" => {
                    let n = child.child_by_field_name("name").unwrap_or(child);
                    let t = child.child_by_field_name("type").unwrap_or(child);
                    ArgKind::Typed {
                        name: (self.text(n).to_owned(), span(n)),
                        ty: (self.text(t).to_owned(), span(t)),
                    }
                }
                _ => ArgKind::Name(self.text(child).to_owned()),
            };
            args.push(Arg { kind, span: span(child) });
        }
        self.report_errors_inside(node);
        let s = span(node);
        match name.as_str() {
            ".kernel" => {
                let name =
                    args.first().map(|a| (self.text[a.span.clone()].to_owned(), a.span.clone()));
                self.push(StmtKind::Kernel { name }, s);
            }
            ".end" => self.push(StmtKind::End, s),
            _ => self.push(StmtKind::Directive { name, name_span: span(name_node), args }, s),
        }
    }

    /// Reports ERROR and MISSING nodes nested in a statement; returns whether there were any.
    fn report_errors_inside(&mut self, node: tree_sitter::Node<'_>) -> bool {
        if !node.has_error() {
            return false;
        }
        let mut found = false;
        let mut cursor = node.walk();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.is_error() {
                self.syntax_error(n);
                found = true;
                continue;
            }
            if n.is_missing() {
                let at = n.start_byte();
                self.out.diagnostics.push(Diagnostic::error(
                    "E0002",
                    at..at,
                    format!("syntax error: expected `{}`", n.kind()),
                ));
                found = true;
                continue;
            }
            let children: Vec<_> = n.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
        found
    }

    fn instruction(&mut self, node: tree_sitter::Node<'_>) {
        let broken = self.report_errors_inside(node);
        let guard = node.child_by_field_name("guard").and_then(|g| {
            let reg = g.child_by_field_name("register")?;
            let negate = (0..g.child_count()).any(|i| g.child(i).is_some_and(|c| c.kind() == "!"));
            Some(GuardSyntax { number: number_after(self.text(reg), 1), negate, span: span(g) })
        });
        let mnemonic_node = node.child_by_field_name("mnemonic").unwrap_or(node);
        let mut operands = Vec::new();
        let mut cursor = node.walk();
        for child in node.children_by_field_name("operand", &mut cursor) {
            if let Some(op) = self.operand(child) {
                operands.push(op);
            }
        }
        self.push(
            StmtKind::Instruction(InstructionSyntax {
                guard,
                mnemonic: self.text(mnemonic_node).to_owned(),
                mnemonic_span: span(mnemonic_node),
                operands,
                broken,
            }),
            span(node),
        );
    }

    fn operand(&self, node: tree_sitter::Node<'_>) -> Option<Operand> {
        let text = self.text(node);
        let kind = match node.kind() {
            "register" => register(text),
            "register_pair" => {
                let low =
                    node.child_by_field_name("low").map_or(0, |n| number_after(self.text(n), 1));
                let high =
                    node.child_by_field_name("high").map_or(0, |n| number_after(self.text(n), 1));
                OperandKind::Pair { low, high }
            }
            "predicate" => OperandKind::Predicate { number: number_after(text, 1), negate: false },
            "negated_predicate" => {
                let reg = node.child_by_field_name("register")?;
                OperandKind::Predicate { number: number_after(self.text(reg), 1), negate: true }
            }
            "special_register" => OperandKind::Special(text.to_ascii_lowercase()),
            "integer" => OperandKind::Integer(text.to_owned()),
            "float" => OperandKind::Float(text.to_owned()),
            "identifier" => OperandKind::Name(text.to_owned()),
            "scope_operand" => {
                OperandKind::Scope(text.trim_start_matches('.').to_ascii_lowercase())
            }
            "memory_operand" => {
                let base = self.operand(node.child_by_field_name("base")?)?;
                let offset = node.child_by_field_name("offset").map(|o| {
                    let negative = (0..node.child_count())
                        .any(|i| node.child(i).is_some_and(|c| c.kind() == "-"));
                    (signed_offset(negative, self.text(o)), span(o))
                });
                OperandKind::Memory { base: Box::new(base), offset }
            }
            _ => return None,
        };
        Some(Operand { kind, span: span(node) })
    }
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

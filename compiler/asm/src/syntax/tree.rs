//! The tree-sitter reading: parses with tree-sitter-wave and flattens the tree into the
//! statement list of [`super`], recovering statements inside `ERROR` nodes.

use wave_diag::{Diagnostic, Span};

use super::{
    Arg, ArgKind, GuardSyntax, InstructionSyntax, Operand, OperandKind, Parsed, Stmt, StmtKind,
    number_after, register, signed_offset,
};

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

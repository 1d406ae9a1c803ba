//! Expressions tree-sitter-cpp reads as casts, not knowing which names are types: parsed
//! again as expressions.

use tree_sitter::Node;

use super::{R, Reported, Translator, scalar};
use crate::front::ast::{Expr, ExprKind};

impl Translator<'_> {
    /// A `cast_expression` that is an expression the grammar misread: `(g * (x)) + y`, where
    /// not knowing that `g` is a variable, it read `(g *(x))` as a cast to a pointer type of
    /// `+y`, or `(std::max(a, b)) * (c)`, read as a cast of `*(c)` to a function type. A
    /// kernel's casts name its types (scalars, template parameters); anything else in the
    /// parentheses is a value.
    pub(super) fn misread_cast(&self, n: Node<'_>) -> bool {
        let Some(t) = n.child_by_field_name("type") else { return false };
        let base = t.child_by_field_name("type").unwrap_or(t);
        // (`(std::max(a, b)) * (c)` too: a call read as a function type.)
        let known = matches!(base.kind(), "primitive_type" | "sized_type_specifier")
            || scalar(self.src(base)).is_some()
            || self.generics.iter().any(|g| g == self.src(base));
        !known && self.src(n).starts_with('(')
    }

    /// The misread cast `n` parsed again as an expression: its text with `(` made `(+`, which
    /// cannot open a cast, alone in a function; the spans are those of the text here.
    pub(super) fn reparse(&mut self, n: Node<'_>) -> R<Expr> {
        let (start, text) = (n.start_byte(), self.src(n));
        const PREFIX: &str = "void wave_reparse() { wave_x = ";
        let snippet = format!("{PREFIX}(+{}; }}", &text[1..]);
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&tree_sitter_cpp::LANGUAGE.into()).map_err(|_| Reported)?;
        let tree = parser.parse(&snippet, None).ok_or(Reported)?;
        let mut node = tree.root_node();
        let found = loop {
            if node.kind() == "assignment_expression" {
                break node.child_by_field_name("right");
            }
            let Some(next) = node.named_child(0) else { break None };
            node = match next.kind() {
                "function_definition" => next.child_by_field_name("body").unwrap_or(next),
                _ => next,
            };
        };
        let Some(right) = found.filter(|r| !r.has_error()) else {
            // Not an expression either: a cast to a type kernels do not have (`(size_t)x`).
            let t = n.child_by_field_name("type").ok_or(Reported)?;
            let t = self.ty(t.child_by_field_name("type").unwrap_or(t));
            let v = self.expr(n.child_by_field_name("value").ok_or(Reported)?)?;
            return Ok(Expr::new(ExprKind::Cast(t, Box::new(v)), n.byte_range()));
        };
        // Snippet offsets to offsets here: the prefix and the inserted `+` removed.
        let at = |o: usize| -> usize {
            let o = o.saturating_sub(PREFIX.len());
            start + if o <= 1 { o.min(1) } else { o - 1 }
        };
        let mut sub = Translator {
            text: &snippet,
            diagnostics: Vec::new(),
            generics: self.generics.clone(),
            temps: self.temps,
        };
        let result = sub.expr(right);
        self.temps = sub.temps;
        for mut d in sub.diagnostics {
            d.span = at(d.span.start)..at(d.span.end);
            self.diagnostics.push(d);
        }
        let mut e = result?;
        super::ast::respan(&mut e, &at);
        Ok(e)
    }
}

//! The Rust frontend: functions marked `#[wave::kernel]` (or `#[kernel]`), parsed by
//! tree-sitter-rust, to the shared surface syntax ([`super::ast`]).
//!
//! Slices are buffers (`&[f32]` read-only, `&mut [f32]` writable); `usize` is `u32` on WAVE.
//! `for i in a..b` (and `(a..b).step_by(k)`), `while`, `loop`, `if`/`else` (also as a value),
//! and `match` on integers (literals, `|`, ranges, `_`), which becomes a chain of conditions.
//! `let` shadows; `let` without `mut` cannot be assigned again. Casts are `as`; math is
//! method-style (`x.sqrt()`, `a.mul_add(b, c)`, `a.min(b)`). The other functions of the
//! file are helpers, inlined where called; a helper's final expression is its value.

mod items;

use tree_sitter::Node;
use wave_diag::{Diagnostic, Span};

use super::ast::{
    Dialect, Expr, ExprKind, Func, Op, Param, Stmt, StmtKind, TypeKind, TypeRef, UnaryOp,
};
use super::{R, Reported, codes};
use crate::hir::{Kernel, Scalar};
use items::float_constant;

/// Parses `text` and builds the HIR of each kernel, with every diagnostic.
pub fn lower(text: &str) -> (Vec<Kernel>, Vec<Diagnostic>) {
    let (funcs, diagnostics) = parse(text);
    super::typer::lower(text, &funcs, Dialect::RUST, diagnostics)
}

/// The functions of `text` in the shared surface syntax, with the diagnostics of parsing.
pub fn parse(text: &str) -> (Vec<Func>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let Some(tree) =
        super::parse_tree(text, &tree_sitter_rust::LANGUAGE.into(), "Rust", &mut diagnostics)
    else {
        return (Vec::new(), diagnostics);
    };
    let root = tree.root_node();
    let mut t = Translator { text, diagnostics: Vec::new(), temps: 0 };
    let mut funcs = Vec::new();
    let mut attributes: Vec<Node<'_>> = Vec::new();
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        match item.kind() {
            "attribute_item" => attributes.push(item),
            "line_comment" | "block_comment" => {}
            "function_item" => {
                let kernel = attributes.iter().find(|a| {
                    a.named_child(0)
                        .and_then(|attr| attr.named_child(0))
                        .is_some_and(|path| matches!(t.src(path), "wave::kernel" | "kernel"))
                });
                let workgroup = kernel.and_then(|a| {
                    let at = t.src(*a);
                    let from = at.find("workgroup")?;
                    let rest = at[from..].split_once('=')?.1.trim_start();
                    let inner = rest.trim_start_matches('(');
                    let size = super::dims(inner.split(')').next()?)?;
                    Some((size, a.byte_range()))
                });
                let start = attributes.first().map_or(item.start_byte(), |a| a.start_byte());
                funcs.extend(t.function(item, start, kernel.is_some(), workgroup));
                attributes.clear();
            }
            "const_item" | "static_item" => {
                funcs.extend(t.constant(item));
                attributes.clear();
            }
            _ => attributes.clear(),
        }
    }
    diagnostics.append(&mut t.diagnostics);
    super::syntax_errors(root, &mut diagnostics);
    super::distribute(&mut funcs, &mut diagnostics);
    (funcs, diagnostics)
}

struct Translator<'t> {
    text: &'t str,
    diagnostics: Vec<Diagnostic>,
    /// Compiler-made names so far (a `match` on an expression).
    temps: u32,
}

/// The scalar a Rust type name stands for.
fn scalar(name: &str) -> Option<Scalar> {
    match name {
        "usize" => Some(Scalar::U32),
        "isize" => Some(Scalar::I32),
        other => Scalar::from_name(other),
    }
}

/// Node kinds that are statements when they stand in a block.
const STATEMENTS: [&str; 10] = [
    "if_expression",
    "while_expression",
    "loop_expression",
    "for_expression",
    "match_expression",
    "return_expression",
    "break_expression",
    "continue_expression",
    "assignment_expression",
    "compound_assignment_expr",
];

impl<'t> Translator<'t> {
    fn src(&self, n: Node<'_>) -> &'t str {
        &self.text[n.byte_range()]
    }

    fn error(&mut self, code: &'static str, span: Span, message: impl Into<String>) -> Reported {
        self.diagnostics.push(Diagnostic::error(code, span, message));
        Reported
    }

    fn unsupported(&mut self, n: Node<'_>, what: &str) -> Reported {
        self.error(
            codes::UNSUPPORTED,
            n.byte_range(),
            format!("{what} are not supported in kernels"),
        )
    }

    fn function(
        &mut self,
        def: Node<'_>,
        start: usize,
        kernel: bool,
        workgroup: Option<([u32; 3], Span)>,
    ) -> Option<Func> {
        let name_node = def.child_by_field_name("name")?;
        if let Some(g) = def.child_by_field_name("type_parameters") {
            let _ = self.unsupported(g, "generic functions");
        }
        let mut params = Vec::new();
        if let Some(list) = def.child_by_field_name("parameters") {
            let mut c = list.walk();
            for p in list.named_children(&mut c).filter(|n| !n.is_extra()) {
                if p.kind() == "line_comment" || p.kind() == "block_comment" {
                    continue;
                }
                if let Ok(p) = self.param(p) {
                    params.push(p);
                }
            }
        }
        if kernel && let Some(ret) = def.child_by_field_name("return_type") {
            let _ = self.error(
                codes::UNSUPPORTED,
                ret.byte_range(),
                "a kernel returns no value: write results to a buffer",
            );
        }
        let valued = !kernel && def.child_by_field_name("return_type").is_some();
        let body = match def.child_by_field_name("body") {
            Some(b) => self.block(b, valued),
            None => Vec::new(),
        };
        Some(Func {
            name: self.src(name_node).to_owned(),
            name_span: name_node.byte_range(),
            span: start..def.end_byte(),
            kernel,
            workgroup,
            generics: Vec::new(),
            params,
            body,
            diagnostics: Vec::new(),
            constant: None,
        })
    }

    fn param(&mut self, p: Node<'_>) -> R<Param> {
        if p.kind() != "parameter" {
            return Err(self.error(
                codes::UNSUPPORTED,
                p.byte_range(),
                "parameters are plain names with a type: `a: &[f32]`, `n: u32`",
            ));
        }
        let pattern = p.child_by_field_name("pattern").ok_or(Reported)?;
        let name = match pattern.kind() {
            "identifier" => pattern,
            _ => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    pattern.byte_range(),
                    "a parameter is a plain name (`mut` and patterns are not supported)",
                ));
            }
        };
        let mutable = {
            let mut c = p.walk();
            p.children(&mut c).any(|ch| ch.kind() == "mutable_specifier")
        };
        Ok(Param {
            name: self.src(name).to_owned(),
            span: name.byte_range(),
            ty: p.child_by_field_name("type").map(|t| self.ty(t)),
            whole: p.byte_range(),
            mutable,
        })
    }

    fn ty(&self, n: Node<'_>) -> TypeRef {
        let kind = match n.kind() {
            "primitive_type" | "type_identifier" => match scalar(self.src(n)) {
                Some(s) => TypeKind::Scalar(s),
                None => TypeKind::Unknown(self.src(n).to_owned()),
            },
            "reference_type" => {
                let writable = {
                    let mut c = n.walk();
                    n.children(&mut c).any(|ch| ch.kind() == "mutable_specifier")
                };
                let inner = n.child_by_field_name("type");
                let elem = inner
                    .filter(|i| {
                        i.kind() == "array_type" && i.child_by_field_name("length").is_none()
                    })
                    .and_then(|i| i.child_by_field_name("element"))
                    .and_then(|e| scalar(self.src(e)));
                match elem {
                    Some(elem) => TypeKind::Buffer { elem, writable },
                    None => TypeKind::Unknown(self.src(n).to_owned()),
                }
            }
            _ => TypeKind::Unknown(self.src(n).to_owned()),
        };
        TypeRef { kind, span: n.byte_range() }
    }

    /// A block's statements. With `valued`, its final expression is the value of the
    /// function (a `return`).
    fn block(&mut self, n: Node<'_>, valued: bool) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut c = n.walk();
        let items: Vec<Node<'_>> = n
            .named_children(&mut c)
            .filter(|s| !matches!(s.kind(), "line_comment" | "block_comment" | "empty_statement"))
            .collect();
        for (i, s) in items.iter().enumerate() {
            // A final `if` or `match` without `;` is its block's value, but the grammar wraps a
            // block-like expression in statement position in an `expression_statement`.
            let unwrapped;
            let s = match s.named_child(0) {
                Some(e)
                    if s.kind() == "expression_statement"
                        && i + 1 == items.len()
                        && !self.src(*s).trim_end().ends_with(';')
                        && matches!(e.kind(), "if_expression" | "match_expression") =>
                {
                    unwrapped = e;
                    &unwrapped
                }
                _ => s,
            };
            let tail = i + 1 == items.len()
                && !matches!(s.kind(), "expression_statement" | "let_declaration")
                && !s.kind().ends_with("_item");
            // A helper's final expression is its value (also `if c { a } else { b }` and a
            // `match`).
            let value = !STATEMENTS.contains(&s.kind())
                || matches!(s.kind(), "if_expression" | "match_expression");
            let r = if tail && valued && value {
                self.expr(*s).map(|e| {
                    let span = e.span.clone();
                    Some(Stmt { kind: StmtKind::Return(Some(e)), span })
                })
            } else {
                self.stmt(*s)
            };
            if let Ok(Some(stmt)) = r {
                out.push(stmt);
            }
        }
        out
    }

    fn stmt(&mut self, n: Node<'_>) -> R<Option<Stmt>> {
        let span = n.byte_range();
        let kind = match n.kind() {
            "expression_statement" => {
                let Some(e) = n.named_child(0) else { return Ok(None) };
                return self.stmt(e);
            }
            "let_declaration" => return self.let_declaration(n).map(Some),
            // `(a, b) = (b, a);`: both values first.
            "assignment_expression"
                if n.child_by_field_name("left")
                    .is_some_and(|l| l.kind() == "tuple_expression") =>
            {
                let targets = self.tuple(n.child_by_field_name("left").ok_or(Reported)?)?;
                let right = n.child_by_field_name("right").ok_or(Reported)?;
                if right.kind() != "tuple_expression" {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        right.byte_range(),
                        "a tuple assignment unpacks a tuple written there: `(a, b) = (b, a)`",
                    ));
                }
                let values = self.tuple(right)?;
                if targets.len() != values.len() {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        format!("{} targets take {} values", targets.len(), values.len()),
                    ));
                }
                super::ast::assign_all(targets, values, &span, true)
            }
            // `std::mem::swap(&mut a, &mut b)`.
            "call_expression"
                if n.child_by_field_name("function").is_some_and(|f| {
                    matches!(
                        self.src(f),
                        "std::mem::swap" | "core::mem::swap" | "mem::swap" | "swap"
                    )
                }) =>
            {
                let list = n.child_by_field_name("arguments").ok_or(Reported)?;
                let mut c = list.walk();
                let mut places = Vec::new();
                for a in list.named_children(&mut c).filter(|a| !a.is_extra()) {
                    let inner = match a.kind() {
                        "reference_expression" => a.child_by_field_name("value").unwrap_or(a),
                        _ => a,
                    };
                    places.push(self.expr(inner)?);
                }
                if places.len() != 2 {
                    return Err(self.error(codes::BAD_CALL, span, "`swap` takes two places"));
                }
                let values = places.iter().rev().cloned().collect();
                super::ast::assign_all(places, values, &span, true)
            }
            "assignment_expression" => StmtKind::Assign {
                target: self.expr(n.child_by_field_name("left").ok_or(Reported)?)?,
                op: None,
                value: self.expr(n.child_by_field_name("right").ok_or(Reported)?)?,
                annotation: None,
            },
            "compound_assignment_expr" => {
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                let sym = sym.trim_end_matches('=');
                let Some(op) = Op::from_text(sym) else {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        format!("the operator `{sym}=` is not supported"),
                    ));
                };
                StmtKind::Assign {
                    target: self.expr(n.child_by_field_name("left").ok_or(Reported)?)?,
                    op: Some((op, sym.to_owned())),
                    value: self.expr(n.child_by_field_name("right").ok_or(Reported)?)?,
                    annotation: None,
                }
            }
            "if_expression" => self.if_statement(n)?,
            "while_expression" => {
                self.no_label(n)?;
                let cond = n.child_by_field_name("condition").ok_or(Reported)?;
                if cond.kind() == "let_condition" {
                    return Err(self.unsupported(cond, "`while let` loops"));
                }
                let cond = self.expr(cond)?;
                StmtKind::While(cond, self.body(n)?)
            }
            "loop_expression" => {
                self.no_label(n)?;
                let always = Expr::new(ExprKind::Bool(true), span.clone());
                StmtKind::While(always, self.body(n)?)
            }
            "for_expression" => self.for_statement(n)?,
            "match_expression" => return self.match_statement(n).map(Some),
            "break_expression" | "continue_expression" => {
                if n.named_child_count() > 0 {
                    return Err(
                        self.unsupported(n, "labelled `break`/`continue` and `break` with a value")
                    );
                }
                if n.kind() == "break_expression" { StmtKind::Break } else { StmtKind::Continue }
            }
            "return_expression" => {
                let value = match n.named_child(0) {
                    Some(v) => Some(self.expr(v)?),
                    None => None,
                };
                StmtKind::Return(value)
            }
            "block" => StmtKind::Block(self.block(n, false)),
            "unsafe_block" => return Err(self.unsupported(n, "`unsafe` blocks")),
            "macro_invocation" => return Err(self.unsupported(n, "macros")),
            "unit_expression" => return Ok(None),
            k if k.ends_with("_item") => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    "items inside a kernel are not supported: define helpers at the top level",
                ));
            }
            _ => StmtKind::Expr(self.expr(n)?),
        };
        Ok(Some(Stmt { kind, span }))
    }

    fn no_label(&mut self, n: Node<'_>) -> R<()> {
        let mut c = n.walk();
        let label = n.named_children(&mut c).find(|ch| ch.kind() == "label");
        match label {
            Some(l) => Err(self.unsupported(l, "loop labels")),
            None => Ok(()),
        }
    }

    fn body(&mut self, n: Node<'_>) -> R<Vec<Stmt>> {
        let body = n.child_by_field_name("body").ok_or(Reported)?;
        Ok(self.block(body, false))
    }

    /// The parts of a tuple `(a, b)` (targets or values).
    fn tuple(&mut self, t: Node<'_>) -> R<Vec<Expr>> {
        let mut c = t.walk();
        let mut out = Vec::new();
        for p in t.named_children(&mut c).filter(|p| !p.is_extra()) {
            out.push(self.expr(p)?);
        }
        Ok(out)
    }

    fn let_declaration(&mut self, n: Node<'_>) -> R<Stmt> {
        let span = n.byte_range();
        let pattern = n.child_by_field_name("pattern").ok_or(Reported)?;
        // `let (a, mut b) = (x, y);`: a `let` of each, in this block.
        if pattern.kind() == "tuple_pattern"
            && let Some(value) =
                n.child_by_field_name("value").filter(|v| v.kind() == "tuple_expression")
        {
            let values = self.tuple(value)?;
            let mut c = pattern.walk();
            let names: Vec<Node<'_>> =
                pattern.named_children(&mut c).filter(|p| !p.is_extra()).collect();
            if names.len() != values.len() {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    format!("{} names take {} values", names.len(), values.len()),
                ));
            }
            let mut lets = Vec::new();
            for (p, v) in names.into_iter().zip(values) {
                let (mutable, id) = match p.kind() {
                    "identifier" => (false, p),
                    "mut_pattern" => (
                        true,
                        p.named_child(p.named_child_count().saturating_sub(1) as u32).unwrap_or(p),
                    ),
                    _ => {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            p.byte_range(),
                            "a tuple `let` binds names: `let (a, mut b) = (x, y);`",
                        ));
                    }
                };
                lets.push(Stmt {
                    kind: StmtKind::Let {
                        name: self.src(id).to_owned(),
                        name_span: id.byte_range(),
                        ty: None,
                        value: Some(v),
                        mutable,
                    },
                    span: span.clone(),
                });
            }
            return Ok(Stmt { kind: StmtKind::Seq(lets), span });
        }
        if pattern.kind() != "identifier" {
            return Err(self.error(
                codes::UNSUPPORTED,
                pattern.byte_range(),
                "`let` binds one name (patterns are not supported)",
            ));
        }
        let mutable = {
            let mut c = n.walk();
            n.children(&mut c).any(|ch| ch.kind() == "mutable_specifier")
        };
        let name = self.src(pattern).to_owned();
        let name_span = pattern.byte_range();
        let ty = n.child_by_field_name("type");
        let value = n.child_by_field_name("value");
        if n.child_by_field_name("alternative").is_some() {
            return Err(self.unsupported(n, "`let ... else`"));
        }
        // `wave::local_array::<f32, 256>()`: Local Memory shared by the workgroup.
        if let Some(v) = value
            && v.kind() == "call_expression"
            && let Some(f) = v.child_by_field_name("function")
            && f.kind() == "generic_function"
            && f.child_by_field_name("function")
                .is_some_and(|p| matches!(self.src(p), "wave::local_array" | "local_array"))
        {
            let args = f.child_by_field_name("type_arguments").ok_or(Reported)?;
            let mut c = args.walk();
            let parts: Vec<Node<'_>> =
                args.named_children(&mut c).filter(|n| !n.is_extra()).collect();
            let (elem, len, columns) = match parts.as_slice() {
                [elem, len] => (*elem, *len, None),
                [elem, rows, cols] => (*elem, *rows, Some(*cols)),
                _ => {
                    return Err(self.error(
                        codes::BAD_CALL,
                        v.byte_range(),
                        "`local_array` takes an element type and a constant length (or two, rows and columns): `wave::local_array::<f32, 256>()`",
                    ));
                }
            };
            let elem = self.ty(elem);
            let len = self.constant_len(len);
            let columns = columns.map(|c| self.constant_len(c));
            return Ok(Stmt {
                kind: StmtKind::Array { name, name_span, local: true, elem, len, columns },
                span,
            });
        }
        // `[0.0f32; 4]` (or `let a: [f32; 4] = [0.0; 4]`): each thread's own array.
        if let Some(v) = value
            && v.kind() == "array_expression"
        {
            let Some(len) = v.child_by_field_name("length") else {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    v.byte_range(),
                    "a private array is written `[0.0f32; N]` (zero-filled)",
                ));
            };
            let fill = v.named_child(0).ok_or(Reported)?;
            let fill_text = self.src(fill).replace('_', "");
            let (digits, suffix) = split_suffix(&fill_text);
            if digits.parse::<f64>().ok() != Some(0.0) {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    fill.byte_range(),
                    "a private array starts zero-filled: `[0.0f32; N]`, then assign its elements",
                ));
            }
            let declared = ty
                .filter(|t| t.kind() == "array_type")
                .and_then(|t| t.child_by_field_name("element"));
            let elem = match (suffix.and_then(scalar), declared) {
                (Some(s), _) => TypeRef { kind: TypeKind::Scalar(s), span: fill.byte_range() },
                (None, Some(e)) => self.ty(e),
                (None, None) => {
                    let s = if fill.kind() == "float_literal" { Scalar::F32 } else { Scalar::I32 };
                    TypeRef { kind: TypeKind::Scalar(s), span: fill.byte_range() }
                }
            };
            let len = self.constant_len(len);
            return Ok(Stmt {
                kind: StmtKind::Array { name, name_span, local: false, elem, len, columns: None },
                span,
            });
        }
        let value = match value {
            Some(v) => Some(self.expr(v)?),
            None => None,
        };
        Ok(Stmt {
            kind: StmtKind::Let { name, name_span, ty: ty.map(|t| self.ty(t)), value, mutable },
            span,
        })
    }

    fn constant_len(&mut self, n: Node<'_>) -> Expr {
        let text = self.src(n).replace('_', "");
        let (digits, _) = split_suffix(&text);
        match digits.parse::<i64>() {
            Ok(v) => Expr::new(ExprKind::Int(v, None), n.byte_range()),
            Err(_) => Expr::new(ExprKind::Name(text), n.byte_range()),
        }
    }

    fn if_statement(&mut self, n: Node<'_>) -> R<StmtKind> {
        let cond = n.child_by_field_name("condition").ok_or(Reported)?;
        if cond.kind() == "let_condition" || cond.kind() == "let_chain" {
            return Err(self.unsupported(cond, "`if let` conditions"));
        }
        let cond = self.expr(cond)?;
        let then = match n.child_by_field_name("consequence") {
            Some(b) => self.block(b, false),
            None => Vec::new(),
        };
        let otherwise = match n.child_by_field_name("alternative").and_then(|e| e.named_child(0)) {
            Some(e) if e.kind() == "if_expression" => {
                let kind = self.if_statement(e)?;
                vec![Stmt { kind, span: e.byte_range() }]
            }
            Some(b) => self.block(b, false),
            None => Vec::new(),
        };
        Ok(StmtKind::If(cond, then, otherwise))
    }

    fn for_statement(&mut self, n: Node<'_>) -> R<StmtKind> {
        self.no_label(n)?;
        let pattern = n.child_by_field_name("pattern").ok_or(Reported)?;
        if pattern.kind() != "identifier" {
            return Err(self.error(
                codes::UNSUPPORTED,
                pattern.byte_range(),
                "a `for` loop has one variable",
            ));
        }
        let value = n.child_by_field_name("value").ok_or(Reported)?;
        let (range, step) = match value.kind() {
            "range_expression" => (value, None),
            "call_expression" => {
                let f = value.child_by_field_name("function").ok_or(Reported)?;
                let method = f.child_by_field_name("field").map(|m| self.src(m));
                let recv = f.child_by_field_name("value");
                let arg = value.child_by_field_name("arguments").and_then(|a| a.named_child(0));
                match (method, recv, arg) {
                    (Some("step_by"), Some(r), Some(k)) => {
                        let r = if r.kind() == "parenthesized_expression" {
                            r.named_child(0).ok_or(Reported)?
                        } else {
                            r
                        };
                        if r.kind() != "range_expression" {
                            return Err(self.error(
                                codes::UNSUPPORTED,
                                value.byte_range(),
                                "a stepped loop is `(a..b).step_by(k)` with a positive integer constant `k`",
                            ));
                        }
                        // (A negative constant here would be a Rust error: the typer says so.)
                        (r, Some(self.expr(k)?))
                    }
                    _ => {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            value.byte_range(),
                            "kernels loop over a range `a..b` or `(a..b).step_by(k)` only",
                        ));
                    }
                }
            }
            _ => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    value.byte_range(),
                    "kernels loop over a range `a..b` or `(a..b).step_by(k)` only",
                ));
            }
        };
        let step = step.unwrap_or_else(|| Expr::new(ExprKind::Int(1, None), range.byte_range()));
        let mut c = range.walk();
        let children: Vec<Node<'_>> = range.children(&mut c).collect();
        let op = children.iter().find(|ch| !ch.is_named()).map(|o| self.src(*o)).unwrap_or("");
        if op != ".." {
            return Err(self.error(
                codes::UNSUPPORTED,
                range.byte_range(),
                "a loop range is `a..b` (an inclusive `a..=b` is `a..b + 1`)",
            ));
        }
        let mut named = children.iter().filter(|ch| ch.is_named());
        let (Some(start), Some(end)) = (named.next(), named.next()) else {
            return Err(self.error(
                codes::UNSUPPORTED,
                range.byte_range(),
                "a loop range has both ends: `a..b`",
            ));
        };
        let start = self.expr(*start)?;
        let end = self.expr(*end)?;
        let body = self.body(n)?;
        Ok(StmtKind::For {
            var: self.src(pattern).to_owned(),
            var_span: pattern.byte_range(),
            ty: None,
            declare: true,
            start: Some(start),
            end,
            step,
            body,
        })
    }

    /// The scrutinee of a `match` as a name: itself, or a new variable holding it.
    fn scrutinee(&mut self, value: Node<'_>, out: &mut Vec<Stmt>) -> R<Expr> {
        let e = self.expr(value)?;
        if let ExprKind::Name(_) = e.kind {
            return Ok(e);
        }
        self.temps += 1;
        let name = format!("match#{}", self.temps);
        let span = value.byte_range();
        out.push(Stmt {
            kind: StmtKind::Let {
                name: name.clone(),
                name_span: span.clone(),
                ty: None,
                value: Some(e),
                mutable: false,
            },
            span: span.clone(),
        });
        Ok(Expr::new(ExprKind::Name(name), span))
    }

    /// The condition under which `pattern` matches `value` (`None`: always).
    fn pattern(&mut self, p: Node<'_>, value: &Expr) -> R<Option<Expr>> {
        let span = p.byte_range();
        let eq = |lit: Expr, span: Span| {
            Expr::new(
                ExprKind::Binary(Op::Eq, "==".into(), Box::new(value.clone()), Box::new(lit)),
                span,
            )
        };
        match p.kind() {
            "match_pattern" => {
                if p.child_by_field_name("condition").is_some() {
                    return Err(self.unsupported(p, "match guards"));
                }
                // (`_` is an anonymous node: the first child, named or not.)
                self.pattern(p.child(0).ok_or(Reported)?, value)
            }
            "_" => Ok(None),
            "identifier" => Err(self.error(
                codes::UNSUPPORTED,
                span,
                "a `match` pattern is an integer, a range or `_` (bindings are not supported)",
            )),
            "or_pattern" => {
                let mut c = p.walk();
                let mut out: Option<Expr> = None;
                for alt in p.named_children(&mut c) {
                    let Some(cond) = self.pattern(alt, value)? else { return Ok(None) };
                    out = Some(match out {
                        None => cond,
                        Some(prev) => Expr::new(
                            ExprKind::Binary(Op::Or, "||".into(), Box::new(prev), Box::new(cond)),
                            span.clone(),
                        ),
                    });
                }
                Ok(out)
            }
            "range_pattern" => {
                let lo = p.child_by_field_name("left").map(|l| self.expr(l)).transpose()?;
                let hi = p.child_by_field_name("right").map(|r| self.expr(r)).transpose()?;
                let inclusive = self.src(p).contains("..=");
                let cmp = |op: Op, sym: &str, lit: Expr| {
                    Expr::new(
                        ExprKind::Binary(op, sym.into(), Box::new(value.clone()), Box::new(lit)),
                        span.clone(),
                    )
                };
                let lo = lo.map(|l| cmp(Op::Ge, ">=", l));
                let hi =
                    hi.map(|h| if inclusive { cmp(Op::Le, "<=", h) } else { cmp(Op::Lt, "<", h) });
                Ok(match (lo, hi) {
                    (Some(a), Some(b)) => Some(Expr::new(
                        ExprKind::Binary(Op::And, "&&".into(), Box::new(a), Box::new(b)),
                        span,
                    )),
                    (a, b) => a.or(b),
                })
            }
            "integer_literal" | "negative_literal" => Ok(Some(eq(self.expr(p)?, span))),
            _ => Err(self.error(
                codes::UNSUPPORTED,
                span,
                "a `match` pattern is an integer, a range or `_`",
            )),
        }
    }

    /// The arms of a `match`: each arm's condition and node.
    fn arms<'n>(&mut self, n: Node<'n>, value: &Expr) -> R<Vec<(Option<Expr>, Node<'n>)>> {
        let block = n.child_by_field_name("body").ok_or(Reported)?;
        let mut c = block.walk();
        let mut arms = Vec::new();
        for arm in block.named_children(&mut c).filter(|a| a.kind() == "match_arm") {
            let p = arm.child_by_field_name("pattern").ok_or(Reported)?;
            let cond = self.pattern(p, value)?;
            let v = arm.child_by_field_name("value").ok_or(Reported)?;
            let last = cond.is_none();
            arms.push((cond, v));
            if last {
                break;
            }
        }
        Ok(arms)
    }

    fn match_statement(&mut self, n: Node<'_>) -> R<Stmt> {
        let span = n.byte_range();
        let mut out = Vec::new();
        let value = self.scrutinee(n.child_by_field_name("value").ok_or(Reported)?, &mut out)?;
        let arms = self.arms(n, &value)?;
        let mut otherwise: Vec<Stmt> = Vec::new();
        for (cond, v) in arms.into_iter().rev() {
            let body = match v.kind() {
                "block" => self.block(v, false),
                _ => self.stmt(v)?.into_iter().collect(),
            };
            otherwise = match cond {
                None => body,
                Some(c) => {
                    vec![Stmt { kind: StmtKind::If(c, body, otherwise), span: v.byte_range() }]
                }
            };
        }
        out.extend(otherwise);
        Ok(Stmt { kind: StmtKind::Block(out), span })
    }

    /// The value of a block used as an expression: its one final expression.
    fn block_value(&mut self, b: Node<'_>) -> R<Expr> {
        if b.kind() != "block" {
            return self.expr(b);
        }
        let mut c = b.walk();
        let items: Vec<Node<'_>> = b
            .named_children(&mut c)
            .filter(|s| !matches!(s.kind(), "line_comment" | "block_comment"))
            .collect();
        match items.as_slice() {
            [e] if e.kind() != "expression_statement" && e.kind() != "let_declaration" => {
                self.expr(*e)
            }
            _ => Err(self.error(
                codes::UNSUPPORTED,
                b.byte_range(),
                "a block used as a value holds one expression: `if c { a } else { b }`",
            )),
        }
    }

    fn expr(&mut self, n: Node<'_>) -> R<Expr> {
        let span = n.byte_range();
        let e = |kind| Ok(Expr::new(kind, span.clone()));
        match n.kind() {
            "parenthesized_expression" => {
                let inner = self.expr(n.named_child(0).ok_or(Reported)?)?;
                Ok(Expr { span, ..inner })
            }
            "integer_literal" => {
                let text = self.src(n).replace('_', "");
                let (digits, suffix) = split_suffix(&text);
                let v = super::parse_int(digits);
                match (v, suffix.map(|s| (s, scalar(s)))) {
                    (Some(v), None) => e(ExprKind::Int(v, None)),
                    (Some(v), Some((_, Some(s)))) => e(ExprKind::Int(v, Some(s))),
                    (Some(_), Some((s, None))) => Err(self.error(
                        codes::BAD_ANNOTATION,
                        span,
                        format!("`{s}` is not a kernel type: use u32, i32, usize, f32 or f64"),
                    )),
                    (None, _) => Err(self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        "this integer does not fit in 64 bits",
                    )),
                }
            }
            "float_literal" => {
                let text = self.src(n).replace('_', "");
                let (digits, suffix) = split_suffix(&text);
                match digits.parse::<f64>() {
                    Ok(v) => e(ExprKind::Float(v, suffix.and_then(scalar))),
                    Err(_) => Err(self.error(codes::TYPE_MISMATCH, span, "not a float")),
                }
            }
            "negative_literal" => {
                let inner = self.expr(n.named_child(0).ok_or(Reported)?)?;
                e(ExprKind::Unary(UnaryOp::Neg, "-".into(), Box::new(inner)))
            }
            "boolean_literal" => e(ExprKind::Bool(self.src(n) == "true")),
            "identifier" => e(ExprKind::Name(self.src(n).to_owned())),
            // `std::f32::consts::PI`, `f64::consts::E`: float literals of that type.
            "scoped_identifier" if float_constant(self.src(n)).is_some() => {
                let (v, s) = float_constant(self.src(n)).unwrap_or((0.0, Scalar::F32));
                e(ExprKind::Float(v, Some(s)))
            }
            "binary_expression" => {
                let l = self.expr(n.child_by_field_name("left").ok_or(Reported)?)?;
                let r = self.expr(n.child_by_field_name("right").ok_or(Reported)?)?;
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                match Op::from_text(sym) {
                    Some(op) => e(ExprKind::Binary(op, sym.to_owned(), Box::new(l), Box::new(r))),
                    None => Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        format!("the operator `{sym}` is not supported"),
                    )),
                }
            }
            "unary_expression" => {
                let sym = n.child(0).map(|o| self.src(o)).unwrap_or("");
                let arg = self.expr(n.named_child(0).ok_or(Reported)?)?;
                let op = match sym {
                    "-" => UnaryOp::Neg,
                    "!" => UnaryOp::NotOrBitNot,
                    _ => return Err(self.unsupported(n, "dereferences")),
                };
                e(ExprKind::Unary(op, sym.to_owned(), Box::new(arg)))
            }
            "type_cast_expression" => {
                let v = self.expr(n.child_by_field_name("value").ok_or(Reported)?)?;
                let t = self.ty(n.child_by_field_name("type").ok_or(Reported)?);
                e(ExprKind::Cast(t, Box::new(v)))
            }
            "index_expression" => {
                let base = self.expr(n.named_child(0).ok_or(Reported)?)?;
                let index = self.expr(n.named_child(1).ok_or(Reported)?)?;
                e(ExprKind::Index(Box::new(base), Box::new(index)))
            }
            "reference_expression" => {
                let v = n.child_by_field_name("value").ok_or(Reported)?;
                self.expr(v)
            }
            "if_expression" => {
                let cond = n.child_by_field_name("condition").ok_or(Reported)?;
                if cond.kind() == "let_condition" || cond.kind() == "let_chain" {
                    return Err(self.unsupported(cond, "`if let` conditions"));
                }
                let cond = self.expr(cond)?;
                let then =
                    self.block_value(n.child_by_field_name("consequence").ok_or(Reported)?)?;
                let Some(alt) = n.child_by_field_name("alternative").and_then(|a| a.named_child(0))
                else {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        "an `if` used as a value needs an `else`",
                    ));
                };
                let otherwise = self.block_value(alt)?;
                e(ExprKind::Cond(Box::new(cond), Box::new(then), Box::new(otherwise)))
            }
            "match_expression" => {
                let value = self.expr(n.child_by_field_name("value").ok_or(Reported)?)?;
                // Each arm's test reads the scrutinee again: it must have no effect.
                if !pure(&value) {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        value.span,
                        "a `match` used as a value matches an expression without calls: bind the value with `let` first",
                    ));
                }
                let arms = self.arms(n, &value)?;
                if arms.last().is_none_or(|(c, _)| c.is_some()) {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        "a `match` used as a value ends with a `_` arm",
                    ));
                }
                let mut out: Option<Expr> = None;
                for (cond, v) in arms.into_iter().rev() {
                    let v = self.block_value(v)?;
                    out = Some(match (cond, out) {
                        (Some(c), Some(rest)) => {
                            let s = v.span.clone();
                            Expr::new(ExprKind::Cond(Box::new(c), Box::new(v), Box::new(rest)), s)
                        }
                        (_, _) => v,
                    });
                }
                out.ok_or(Reported)
            }
            "block" => self.block_value(n),
            "call_expression" => self.call(n),
            "range_expression" => Err(self.error(
                codes::UNSUPPORTED,
                span,
                "a range is the bound of a `for` loop only",
            )),
            "closure_expression" => Err(self.unsupported(n, "closures")),
            "macro_invocation" => Err(self.unsupported(n, "macros")),
            "unsafe_block" => Err(self.unsupported(n, "`unsafe` blocks")),
            "field_expression" => Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!("`{}`: kernels have no structs or fields", self.src(n)),
            )),
            "array_expression" => Err(self.error(
                codes::UNSUPPORTED,
                span,
                "an array is declared with `let`: `let mut acc = [0.0f32; 4];`",
            )),
            other => Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!("{} expressions are not supported in kernels", other.replace('_', " ")),
            )),
        }
    }

    fn call(&mut self, n: Node<'_>) -> R<Expr> {
        let span = n.byte_range();
        let f = n.child_by_field_name("function").ok_or(Reported)?;
        let mut args = Vec::new();
        if let Some(list) = n.child_by_field_name("arguments") {
            let mut c = list.walk();
            for a in list.named_children(&mut c).filter(|n| !n.is_extra()) {
                if !matches!(a.kind(), "line_comment" | "block_comment") {
                    args.push(self.expr(a)?);
                }
            }
        }
        let callee = self.src(f).to_owned();
        let name = match f.kind() {
            "identifier" => callee.clone(),
            "scoped_identifier" => {
                let path = f.child_by_field_name("path").map(|p| self.src(p)).unwrap_or("");
                let last = f.child_by_field_name("name").map(|p| self.src(p)).unwrap_or("");
                match (path, last) {
                    ("wave", name) => name.to_owned(),
                    // `f32::from(x)`, `u32::try_from` is not supported.
                    (ty, "from") if scalar(ty).is_some() => {
                        let t = TypeRef {
                            kind: TypeKind::Scalar(scalar(ty).unwrap_or(Scalar::U32)),
                            span: f.byte_range(),
                        };
                        let [a] = <[Expr; 1]>::try_from(args).map_err(|_| {
                            self.error(
                                codes::BAD_CALL,
                                span.clone(),
                                format!("`{callee}` takes 1 argument"),
                            )
                        })?;
                        return Ok(Expr::new(ExprKind::Cast(t, Box::new(a)), span));
                    }
                    // `f32::sqrt(x)`, `u32::min(a, b)`.
                    (ty, name) if scalar(ty).is_some() => method(name).unwrap_or(name).to_owned(),
                    _ => {
                        return Err(self.error(
                            codes::UNKNOWN_NAME,
                            f.byte_range(),
                            format!("`{callee}` is not an intrinsic or a function of this file"),
                        ));
                    }
                }
            }
            "field_expression" => {
                // Method-style math: `x.sqrt()`, `a.mul_add(b, c)`, `a.min(b)`.
                let recv = self.expr(f.child_by_field_name("value").ok_or(Reported)?)?;
                let m = f.child_by_field_name("field").map(|m| self.src(m)).unwrap_or("");
                if let Some(op) = wrapping(m) {
                    let [b] = <[Expr; 1]>::try_from(args).map_err(|_| {
                        self.error(codes::BAD_CALL, span.clone(), format!("`{m}` takes 1 argument"))
                    })?;
                    let sym = match op {
                        Op::Add => "+",
                        Op::Sub => "-",
                        _ => "*",
                    };
                    return Ok(Expr::new(
                        ExprKind::Binary(op, sym.into(), Box::new(recv), Box::new(b)),
                        span,
                    ));
                }
                let Some(name) = method(m) else {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        f.byte_range(),
                        format!("the method `{m}` is not supported in kernels"),
                    ));
                };
                args.insert(0, recv);
                let callee_span =
                    f.child_by_field_name("field").map_or(f.byte_range(), |m| m.byte_range());
                return Ok(Expr::new(
                    ExprKind::Call {
                        name: name.to_owned(),
                        callee: m.to_owned(),
                        callee_span,
                        args,
                        types: Vec::new(),
                    },
                    span,
                ));
            }
            _ => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    f.byte_range(),
                    "kernels call intrinsics (`wave::...`) and the functions of this file",
                ));
            }
        };
        Ok(Expr::new(
            ExprKind::Call { name, callee, callee_span: f.byte_range(), args, types: Vec::new() },
            span,
        ))
    }
}

/// `e` has no call (reading it twice changes nothing).
fn pure(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { .. } | ExprKind::Error => false,
        ExprKind::Int(..) | ExprKind::Float(..) | ExprKind::Bool(_) | ExprKind::Name(_) => true,
        ExprKind::Index(a, b) | ExprKind::Binary(_, _, a, b) => pure(a) && pure(b),
        ExprKind::Unary(_, _, a) | ExprKind::Cast(_, a) => pure(a),
        ExprKind::Cond(c, a, b) => pure(c) && pure(a) && pure(b),
    }
}

/// The intrinsic a method of Rust's numbers stands for.
fn method(m: &str) -> Option<&'static str> {
    Some(match m {
        "sqrt" => "sqrt",
        "abs" => "abs",
        "floor" => "floor",
        "ceil" => "ceil",
        "sin" => "sin",
        "cos" => "cos",
        "exp2" => "exp2",
        "log2" => "log2",
        "mul_add" => "fma",
        "min" => "min",
        "max" => "max",
        "exp" => "exp",
        "ln" => "log",
        "log10" => "log10",
        "tanh" => "tanh",
        "powi" | "powf" | "pow" => "pow",
        "count_ones" => "popcount",
        "leading_zeros" => "clz",
        "trailing_zeros" => "ctz",
        _ => return None,
    })
}

/// `wrapping_add` and its kin: integers wrap in kernels anyway.
fn wrapping(m: &str) -> Option<Op> {
    match m {
        "wrapping_add" => Some(Op::Add),
        "wrapping_sub" => Some(Op::Sub),
        "wrapping_mul" => Some(Op::Mul),
        _ => None,
    }
}

/// `16u32` → (`16`, `u32`); `0.5f32` → (`0.5`, `f32`); `0x1F` → (`0x1F`, none).
fn split_suffix(text: &str) -> (&str, Option<&str>) {
    for s in [
        "usize", "isize", "u32", "i32", "f32", "f64", "f16", "u64", "i64", "u16", "i16", "u8", "i8",
    ] {
        if let Some(d) = text.strip_suffix(s)
            && !d.is_empty()
            // `0x1f32` is a hexadecimal number, not `0x1` of `f32`.
            && !(s.starts_with('f') && d.starts_with("0x"))
        {
            return (d, Some(s));
        }
    }
    (text, None)
}

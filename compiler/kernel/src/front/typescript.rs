//! The TypeScript frontend: static methods decorated `@kernel` (or `@wave.kernel`), and
//! functions wrapped in `wave.kernel(...)`, parsed by tree-sitter-typescript, to the shared
//! surface syntax ([`super::ast`]).
//!
//! Typed arrays are buffers (`Float32Array`, `Float16Array`, `Float64Array`, `Int32Array`,
//! `Uint32Array`). `number` is `f64`, as in JavaScript; the `wave` module's aliases (`u32`,
//! `i32`, `f32`, `f16`) narrow where they are written, and so do `wave.u32(x)` and its kin.
//! A narrower value meets a `number` as a `number`; a `number` into a narrower place is E0401
//! with the narrowing to write. `/` divides floats; `Math.trunc(a / b)` divides integers.
//! `>>>` shifts a `u32`, `>>` an `i32`. Intrinsics are camelCase (`wave.threadId`,
//! `wave.reduceAdd`); atomics are `Atomics.add` and its kin.

use tree_sitter::Node;
use wave_diag::{Diagnostic, Span};

use super::ast::{
    self, Dialect, Expr, ExprKind, Func, Op, Param, Stmt, StmtKind, TypeKind, TypeRef, UnaryOp,
};
use super::{R, Reported, codes};
use crate::hir::{Kernel, Scalar};

/// Parses `text` and builds the HIR of each kernel, with every diagnostic.
pub fn lower(text: &str) -> (Vec<Kernel>, Vec<Diagnostic>) {
    let (mut funcs, diagnostics) = parse(text);
    plain_functions_are_kernels(&mut funcs);
    super::typer::lower(text, &funcs, Dialect::TYPESCRIPT, diagnostics)
}

/// The functions of `text` in the shared surface syntax, with the diagnostics of parsing.
pub fn parse(text: &str) -> (Vec<Func>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let Some(tree) = super::parse_tree(
        text,
        &tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "TypeScript",
        &mut diagnostics,
    ) else {
        return (Vec::new(), diagnostics);
    };
    let root = tree.root_node();
    let mut t = Translator { text, diagnostics: Vec::new() };
    let mut funcs = Vec::new();
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        t.item(item, &mut funcs);
    }
    diagnostics.append(&mut t.diagnostics);
    super::syntax_errors(root, &mut diagnostics);
    super::distribute(&mut funcs, &mut diagnostics);
    (funcs, diagnostics)
}

/// A file with no kernel marked as such (`wave.kernel(...)`, `@kernel`) is written for the
/// reference toolchain, where a plain `function` is a kernel: there, every function that no
/// other function of the file calls is one (the rest are its helpers).
fn plain_functions_are_kernels(funcs: &mut [Func]) {
    if funcs.iter().any(|f| f.kernel) {
        return;
    }
    let called: Vec<bool> = funcs
        .iter()
        .map(|f| funcs.iter().any(|g| g.name != f.name && ast::calls(&g.body, &f.name)))
        .collect();
    for (f, called) in funcs.iter_mut().zip(called) {
        if !called && f.constant.is_none() && !f.name.is_empty() {
            f.kernel = true;
        }
    }
}

/// An array a declaration makes: local (else private), its element type, its length (rows)
/// and its columns.
type ArrayDecl = (bool, TypeRef, Expr, Option<Expr>);

struct Translator<'t> {
    text: &'t str,
    diagnostics: Vec<Diagnostic>,
}

/// The scalar a TypeScript type name stands for.
fn scalar(name: &str) -> Option<Scalar> {
    match name.strip_prefix("wave.").unwrap_or(name) {
        "number" | "f64" => Some(Scalar::F64),
        "boolean" => Some(Scalar::Bool),
        "u32" => Some(Scalar::U32),
        "i32" => Some(Scalar::I32),
        "f32" => Some(Scalar::F32),
        "f16" => Some(Scalar::F16),
        _ => None,
    }
}

/// The element type of a typed array.
fn typed_array(name: &str) -> Option<Scalar> {
    match name {
        "Float32Array" => Some(Scalar::F32),
        "Float16Array" => Some(Scalar::F16),
        "Float64Array" => Some(Scalar::F64),
        "Int32Array" => Some(Scalar::I32),
        "Uint32Array" => Some(Scalar::U32),
        "Uint8Array" => Some(Scalar::U8),
        "Uint16Array" => Some(Scalar::U16),
        _ => None,
    }
}

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

    /// A top-level item: a function (a helper), a class with `@kernel` static methods, or a
    /// declaration or statement holding `wave.kernel(...)`.
    fn item(&mut self, item: Node<'_>, funcs: &mut Vec<Func>) {
        match item.kind() {
            "function_declaration" => {
                funcs.extend(self.function(item, item, None, false, None));
            }
            "export_statement" => {
                if let Some(d) = item.child_by_field_name("declaration") {
                    self.item(d, funcs);
                }
            }
            "class_declaration" => {
                let Some(body) = item.child_by_field_name("body") else { return };
                let mut decorators: Vec<Node<'_>> = Vec::new();
                let mut c = body.walk();
                for member in body.named_children(&mut c) {
                    match member.kind() {
                        "decorator" => decorators.push(member),
                        "method_definition" => {
                            let kernel = decorators.iter().find(|d| {
                                let call = d.named_child(0);
                                let f =
                                    call.map(|c| c.child_by_field_name("function").unwrap_or(c));
                                f.is_some_and(|f| matches!(self.src(f), "kernel" | "wave.kernel"))
                            });
                            let options = kernel
                                .and_then(|d| d.named_child(0))
                                .and_then(|c| c.child_by_field_name("arguments"))
                                .and_then(|a| a.named_child(0));
                            let start =
                                decorators.first().map_or(member.start_byte(), |d| d.start_byte());
                            let is_static = {
                                let mut mc = member.walk();
                                member.children(&mut mc).any(|ch| ch.kind() == "static")
                            };
                            if kernel.is_some() && !is_static {
                                let _ = self.error(
                                    codes::UNSUPPORTED,
                                    member.byte_range(),
                                    "a kernel is a `static` method (kernels have no `this`)",
                                );
                            }
                            let workgroup = options
                                .and_then(|o| self.workgroup(o, kernel.map(|d| d.byte_range())));
                            funcs.extend(self.function(
                                member,
                                member,
                                workgroup,
                                kernel.is_some(),
                                Some(start),
                            ));
                            decorators.clear();
                        }
                        _ => decorators.clear(),
                    }
                }
            }
            "lexical_declaration" | "variable_declaration" | "expression_statement" => {
                let before = funcs.len();
                self.find_wrapped(item, funcs);
                if funcs.len() == before && item.kind() == "lexical_declaration" {
                    funcs.extend(self.constants(item));
                }
            }
            _ => {}
        }
    }

    /// A top-level `const TILE = 16;` (or `const TILE: u32 = 16;`): the constants kernels
    /// may use; what is wrong with a value is reported where a kernel uses it.
    fn constants(&mut self, item: Node<'_>) -> Vec<Func> {
        let is_const = {
            let mut c = item.walk();
            item.children(&mut c).any(|k| k.kind() == "const")
        };
        let mut out = Vec::new();
        if !is_const {
            return out;
        }
        let mut c = item.walk();
        for d in item.named_children(&mut c).filter(|d| d.kind() == "variable_declarator") {
            let (Some(name), Some(value)) =
                (d.child_by_field_name("name"), d.child_by_field_name("value"))
            else {
                continue;
            };
            if name.kind() != "identifier" {
                continue;
            }
            let ty = d.child_by_field_name("type").map(|t| self.ty(t));
            let outer = std::mem::take(&mut self.diagnostics);
            let v = self
                .expr(value)
                .unwrap_or_else(|Reported| Expr::new(ExprKind::Error, value.byte_range()));
            let diagnostics = std::mem::replace(&mut self.diagnostics, outer);
            let mut f = Func::constant(
                self.src(name).to_owned(),
                name.byte_range(),
                ty,
                v,
                item.byte_range(),
            );
            f.diagnostics = diagnostics;
            out.push(f);
        }
        out
    }

    /// `wave.kernel(function f(...) {...})` or `wave.kernel({ workgroup: [64] }, function ...)`
    /// anywhere in a top-level declaration or statement.
    fn find_wrapped(&mut self, n: Node<'_>, funcs: &mut Vec<Func>) {
        if n.kind() == "call_expression"
            && n.child_by_field_name("function")
                .is_some_and(|f| matches!(self.src(f), "wave.kernel" | "kernel"))
        {
            let Some(args) = n.child_by_field_name("arguments") else { return };
            let mut c = args.walk();
            let parts: Vec<Node<'_>> =
                args.named_children(&mut c).filter(|a| a.kind() != "comment").collect();
            let (options, f) = match parts.as_slice() {
                [f] => (None, *f),
                [o, f] => (Some(*o), *f),
                _ => {
                    let _ = self.error(
                        codes::BAD_CALL,
                        n.byte_range(),
                        "`wave.kernel` takes a function, or options and a function: `wave.kernel({ workgroup: [64] }, function k(...) {...})`",
                    );
                    return;
                }
            };
            if !matches!(f.kind(), "function_expression" | "arrow_function") {
                let _ = self.error(
                    codes::BAD_CALL,
                    f.byte_range(),
                    "`wave.kernel` wraps a function written here: `function k(...) {...}`",
                );
                return;
            }
            let workgroup = options.and_then(|o| self.workgroup(o, Some(o.byte_range())));
            // An anonymous function takes the name of the variable it is assigned to.
            let mut name = None;
            let mut up = n.parent();
            while let Some(p) = up {
                if p.kind() == "variable_declarator" {
                    name = p.child_by_field_name("name");
                    break;
                }
                up = p.parent();
            }
            funcs.extend(self.function(n, f, workgroup, true, None).map(|mut func| {
                if f.child_by_field_name("name").is_none()
                    && let Some(nm) = name
                {
                    func.name = self.src(nm).to_owned();
                    func.name_span = nm.byte_range();
                }
                func
            }));
            return;
        }
        let mut c = n.walk();
        for child in n.named_children(&mut c) {
            self.find_wrapped(child, funcs);
        }
    }

    /// `{ workgroup: [64, 1, 1] }`.
    fn workgroup(&mut self, options: Node<'_>, at: Option<Span>) -> Option<([u32; 3], Span)> {
        if options.kind() != "object" {
            let _ = self.error(
                codes::BAD_CALL,
                options.byte_range(),
                "kernel options are an object: `{ workgroup: [64, 1, 1] }`",
            );
            return None;
        }
        let mut c = options.walk();
        for pair in options.named_children(&mut c).filter(|p| p.kind() == "pair") {
            let key =
                pair.child_by_field_name("key").map(|k| self.src(k).trim_matches(['"', '\'']));
            if key != Some("workgroup") {
                let _ = self.error(
                    codes::BAD_CALL,
                    pair.byte_range(),
                    "the kernel option is `workgroup: [x, y, z]`",
                );
                continue;
            }
            let value = pair.child_by_field_name("value")?;
            let inner = self.src(value).trim_start_matches('[').trim_end_matches(']');
            return match super::dims(inner) {
                Some(size) => Some((size, at.unwrap_or_else(|| options.byte_range()))),
                None => {
                    let _ = self.error(
                        codes::BAD_CALL,
                        value.byte_range(),
                        "a workgroup size is `[x]`, `[x, y]` or `[x, y, z]`",
                    );
                    None
                }
            };
        }
        None
    }

    fn function(
        &mut self,
        whole: Node<'_>,
        def: Node<'_>,
        workgroup: Option<([u32; 3], Span)>,
        kernel: bool,
        start: Option<usize>,
    ) -> Option<Func> {
        let name_node = def.child_by_field_name("name");
        if let Some(g) = def.child_by_field_name("type_parameters") {
            let _ = self.unsupported(g, "generic functions");
        }
        let mut params = Vec::new();
        if let Some(list) = def.child_by_field_name("parameters") {
            let mut c = list.walk();
            for p in list.named_children(&mut c).filter(|n| !n.is_extra()) {
                if p.kind() == "comment" {
                    continue;
                }
                if let Ok(p) = self.param(p) {
                    params.push(p);
                }
            }
        }
        let body = match def.child_by_field_name("body") {
            Some(b) if b.kind() == "statement_block" => self.block(b),
            Some(e) => match self.expr(e) {
                // An arrow function's expression body is its value.
                Ok(v) => vec![Stmt { kind: StmtKind::Return(Some(v)), span: e.byte_range() }],
                Err(Reported) => Vec::new(),
            },
            None => Vec::new(),
        };
        let (name, name_span) = match name_node {
            Some(n) => (self.src(n).to_owned(), n.byte_range()),
            None => (String::new(), def.byte_range()),
        };
        Some(Func {
            name,
            name_span,
            span: start.unwrap_or(whole.start_byte())..whole.end_byte(),
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
        if p.kind() != "required_parameter" {
            return Err(self.error(
                codes::UNSUPPORTED,
                p.byte_range(),
                "parameters are a name and a type (no defaults, no optional or rest parameters)",
            ));
        }
        let pattern = p.child_by_field_name("pattern").ok_or(Reported)?;
        if pattern.kind() != "identifier" {
            return Err(self.error(
                codes::UNSUPPORTED,
                pattern.byte_range(),
                "a parameter is a plain name (destructuring is not supported)",
            ));
        }
        if p.child_by_field_name("value").is_some() {
            return Err(self.error(
                codes::UNSUPPORTED,
                p.byte_range(),
                "kernel parameters have no default values",
            ));
        }
        Ok(Param {
            name: self.src(pattern).to_owned(),
            span: pattern.byte_range(),
            ty: p.child_by_field_name("type").map(|t| self.ty(t)),
            whole: p.byte_range(),
            mutable: true,
        })
    }

    /// A type annotation (`: u32`) or a type.
    fn ty(&self, n: Node<'_>) -> TypeRef {
        let inner = if n.kind() == "type_annotation" { n.named_child(0).unwrap_or(n) } else { n };
        let text = self.src(inner);
        // `f32[]`, the reference toolchain's buffer type, is a `Float32Array`.
        let element = text.strip_suffix("[]").map(str::trim_end).and_then(scalar);
        let kind = match (scalar(text), typed_array(text), element) {
            (Some(s), _, _) => TypeKind::Scalar(s),
            (_, Some(elem), _) | (_, _, Some(elem)) => TypeKind::Buffer { elem, writable: true },
            _ => TypeKind::Unknown(text.to_owned()),
        };
        TypeRef { kind, span: inner.byte_range() }
    }

    fn block(&mut self, n: Node<'_>) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut c = n.walk();
        for s in n.named_children(&mut c) {
            let _ = self.stmt(s, &mut out);
        }
        out
    }

    fn body(&mut self, n: Option<Node<'_>>) -> Vec<Stmt> {
        let mut out = Vec::new();
        if let Some(n) = n {
            if n.kind() == "statement_block" {
                return self.block(n);
            }
            let _ = self.stmt(n, &mut out);
        }
        out
    }

    fn stmt(&mut self, n: Node<'_>, out: &mut Vec<Stmt>) -> R<()> {
        let span = n.byte_range();
        let kind = match n.kind() {
            "comment" | "empty_statement" => return Ok(()),
            "expression_statement" => {
                let Some(e) = n.named_child(0) else { return Ok(()) };
                if e.kind() == "string" {
                    return Ok(()); // a directive like "use strict"
                }
                self.effect(e)?
            }
            "lexical_declaration" | "variable_declaration" => return self.declaration(n, out),
            "statement_block" => StmtKind::Block(self.block(n)),
            "if_statement" => {
                let cond = self.expr(n.child_by_field_name("condition").ok_or(Reported)?)?;
                let then = self.body(n.child_by_field_name("consequence"));
                let otherwise =
                    self.body(n.child_by_field_name("alternative").and_then(|a| a.named_child(0)));
                StmtKind::If(cond, then, otherwise)
            }
            "while_statement" => {
                let cond = self.expr(n.child_by_field_name("condition").ok_or(Reported)?)?;
                StmtKind::While(cond, self.body(n.child_by_field_name("body")))
            }
            "do_statement" => {
                let body = self.body(n.child_by_field_name("body"));
                let cond = self.expr(n.child_by_field_name("condition").ok_or(Reported)?)?;
                StmtKind::DoWhile(body, cond)
            }
            "for_statement" => return self.for_statement(n, out),
            "break_statement" | "continue_statement" => {
                if n.child_by_field_name("label").is_some() {
                    return Err(self.unsupported(n, "labelled `break` and `continue`"));
                }
                if n.kind() == "break_statement" { StmtKind::Break } else { StmtKind::Continue }
            }
            "return_statement" => {
                let value = match n.named_child(0) {
                    Some(v) => Some(self.expr(v)?),
                    None => None,
                };
                StmtKind::Return(value)
            }
            "for_in_statement" => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    "kernels count with `for (let i: u32 = a; i < b; i++)`: `for ... of` and `for ... in` are not supported",
                ));
            }
            "function_declaration" | "class_declaration" => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    "definitions inside a kernel are not supported",
                ));
            }
            "throw_statement" | "try_statement" => return Err(self.unsupported(n, "exceptions")),
            other => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    format!(
                        "`{}` is not supported in kernels",
                        other.replace('_', " ").trim_end_matches(" statement")
                    ),
                ));
            }
        };
        out.push(Stmt { kind, span });
        Ok(())
    }

    /// The names (or elements) of `[a, b]` on the left of a destructuring.
    fn pattern(&mut self, p: Node<'_>) -> R<Vec<Expr>> {
        let mut c = p.walk();
        let mut out = Vec::new();
        for t in p.named_children(&mut c).filter(|t| t.kind() != "comment") {
            match t.kind() {
                "identifier" | "subscript_expression" => out.push(self.expr(t)?),
                _ => {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        t.byte_range(),
                        "a destructuring assigns names and elements: `[a, b] = [b, a]`",
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The values of an array literal `[x, y]` being unpacked.
    fn elements(&mut self, a: Node<'_>) -> R<Vec<Expr>> {
        let mut c = a.walk();
        let mut out = Vec::new();
        for v in a.named_children(&mut c).filter(|t| t.kind() != "comment") {
            out.push(self.expr(v)?);
        }
        Ok(out)
    }

    /// An expression statement: an assignment, `i++`, or a call.
    fn effect(&mut self, e: Node<'_>) -> R<StmtKind> {
        match e.kind() {
            // `[a, b] = [b, a]`: both values first.
            "assignment_expression"
                if e.child_by_field_name("left").is_some_and(|l| l.kind() == "array_pattern")
                    && e.child_by_field_name("right").is_some_and(|r| r.kind() == "array") =>
            {
                let targets = self.pattern(e.child_by_field_name("left").ok_or(Reported)?)?;
                let values = self.elements(e.child_by_field_name("right").ok_or(Reported)?)?;
                if targets.len() != values.len() {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        e.byte_range(),
                        format!("{} targets take {} values", targets.len(), values.len()),
                    ));
                }
                Ok(ast::assign_all(targets, values, &e.byte_range(), true))
            }
            // `a = b = 0`: each target, left to right, gets the one value.
            "assignment_expression"
                if e.child_by_field_name("right")
                    .is_some_and(|r| r.kind() == "assignment_expression") =>
            {
                let mut targets = Vec::new();
                let mut at = e;
                while at.kind() == "assignment_expression" {
                    targets.push(self.expr(at.child_by_field_name("left").ok_or(Reported)?)?);
                    at = at.child_by_field_name("right").ok_or(Reported)?;
                }
                let value = self.expr(at)?;
                Ok(ast::assign_all(targets, vec![value], &e.byte_range(), true))
            }
            "assignment_expression" => Ok(StmtKind::Assign {
                target: self.expr(e.child_by_field_name("left").ok_or(Reported)?)?,
                op: None,
                value: self.expr(e.child_by_field_name("right").ok_or(Reported)?)?,
                annotation: None,
            }),
            "augmented_assignment_expression" => {
                let sym = e.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                let s = sym.trim_end_matches('=');
                let Some(op) =
                    Op::from_text(s).filter(|o| !matches!(o, Op::IntDiv | Op::And | Op::Or))
                else {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        e.byte_range(),
                        format!("the operator `{sym}` is not supported"),
                    ));
                };
                Ok(StmtKind::Assign {
                    target: self.expr(e.child_by_field_name("left").ok_or(Reported)?)?,
                    op: Some((op, s.to_owned())),
                    value: self.expr(e.child_by_field_name("right").ok_or(Reported)?)?,
                    annotation: None,
                })
            }
            "update_expression" => {
                let sym = e.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("++");
                let target = self.expr(e.child_by_field_name("argument").ok_or(Reported)?)?;
                let one = Expr::new(ExprKind::Int(1, None), e.byte_range());
                let op =
                    if sym == "++" { (Op::Add, "+".to_owned()) } else { (Op::Sub, "-".to_owned()) };
                Ok(StmtKind::Assign { target, op: Some(op), value: one, annotation: None })
            }
            "sequence_expression" => Err(self.unsupported(e, "comma expressions")),
            _ => Ok(StmtKind::Expr(self.expr(e)?)),
        }
    }

    /// `let x: u32 = e`, `const i = wave.globalId()`, `const acc = new Float32Array(4)`,
    /// `const tile = wave.localArray(Float32Array, 256)`.
    fn declaration(&mut self, n: Node<'_>, out: &mut Vec<Stmt>) -> R<()> {
        let span = n.byte_range();
        let constant = n.child_by_field_name("kind").is_some_and(|k| self.src(k) == "const");
        let mut c = n.walk();
        for d in n.named_children(&mut c).filter(|d| d.kind() == "variable_declarator") {
            let name = d.child_by_field_name("name").ok_or(Reported)?;
            // `let [a, b] = [x, y]`: a declaration of each (none can read another: they are
            // not initialised before the declaration ends).
            if name.kind() == "array_pattern"
                && let Some(value) = d.child_by_field_name("value").filter(|v| v.kind() == "array")
            {
                let names = self.pattern(name)?;
                let values = self.elements(value)?;
                if names.len() != values.len() {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        d.byte_range(),
                        format!("{} names take {} values", names.len(), values.len()),
                    ));
                }
                for (n, v) in names.into_iter().zip(values) {
                    let ExprKind::Name(id) = &n.kind else { continue };
                    out.push(Stmt {
                        kind: StmtKind::Let {
                            name: id.clone(),
                            name_span: n.span.clone(),
                            ty: None,
                            value: Some(v),
                            mutable: !constant,
                        },
                        span: span.clone(),
                    });
                }
                continue;
            }
            if name.kind() != "identifier" {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    name.byte_range(),
                    "a declaration binds names, or unpacks an array written there (`let [a, b] = [x, y]`)",
                ));
            }
            let value = d.child_by_field_name("value");
            let array = value.and_then(|v| self.array(v).transpose()).transpose()?;
            if let Some((local, elem, len, columns)) = array {
                out.push(Stmt {
                    kind: StmtKind::Array {
                        name: self.src(name).to_owned(),
                        name_span: name.byte_range(),
                        local,
                        elem,
                        len,
                        columns,
                    },
                    span: span.clone(),
                });
                continue;
            }
            let value = match value {
                Some(v) => Some(self.expr(v)?),
                None => None,
            };
            out.push(Stmt {
                kind: StmtKind::Let {
                    name: self.src(name).to_owned(),
                    name_span: name.byte_range(),
                    ty: d.child_by_field_name("type").map(|t| self.ty(t)),
                    value,
                    mutable: !constant,
                },
                span: span.clone(),
            });
        }
        Ok(())
    }

    /// `new Float32Array(4)` (each thread's own) or `wave.localArray(Float32Array, 256)`
    /// (Local Memory): local or not, the element type and the length.
    fn array(&mut self, v: Node<'_>) -> R<Option<ArrayDecl>> {
        let (local, ctor, len, cols) = match v.kind() {
            "new_expression" => {
                let ctor = v.child_by_field_name("constructor").ok_or(Reported)?;
                let len = v.child_by_field_name("arguments").and_then(|a| a.named_child(0));
                (false, ctor, len, None)
            }
            // `wave.localArray(Float32Array, 256)`, or with rows and columns.
            "call_expression"
                if v.child_by_field_name("function")
                    .is_some_and(|f| self.src(f) == "wave.localArray") =>
            {
                let args = v.child_by_field_name("arguments").ok_or(Reported)?;
                (
                    true,
                    args.named_child(0).ok_or(Reported)?,
                    args.named_child(1),
                    args.named_child(2),
                )
            }
            _ => return Ok(None),
        };
        let Some(elem) = typed_array(self.src(ctor)) else {
            return Err(self.error(
                codes::UNSUPPORTED,
                ctor.byte_range(),
                format!("`{}` is not a typed array: use Float32Array, Float16Array, Float64Array, Int32Array or Uint32Array", self.src(ctor)),
            ));
        };
        let Some(len) = len else {
            return Err(self.error(
                codes::BAD_CALL,
                v.byte_range(),
                "an array has a constant length",
            ));
        };
        let len = match super::parse_int(self.src(len)) {
            Some(n) => Expr::new(ExprKind::Int(n, None), len.byte_range()),
            None => self.expr(len)?,
        };
        let cols = match cols {
            Some(c) => Some(self.expr(c)?),
            None => None,
        };
        Ok(Some((
            local,
            TypeRef { kind: TypeKind::Scalar(elem), span: ctor.byte_range() },
            len,
            cols,
        )))
    }

    /// `for (let i: u32 = a; i < b; i++)` is a counted loop (also `i += k`, and `i > b`
    /// with `i--`); another `for` is `init; while (cond) { body; update }`, which needs a body
    /// without `continue`.
    fn for_statement(&mut self, n: Node<'_>, out: &mut Vec<Stmt>) -> R<()> {
        let span = n.byte_range();
        let init = n.child_by_field_name("initializer");
        let mut cc = n.walk();
        let cond = n.children_by_field_name("condition", &mut cc).find(|c| c.is_named());
        let cond = cond.map(|c| {
            if c.kind() == "expression_statement" { c.named_child(0).unwrap_or(c) } else { c }
        });
        let update = n.child_by_field_name("increment");
        let body_node = n.child_by_field_name("body");
        if let Some((var, var_span, ty, start, end, step)) = self.counted(init, cond, update)? {
            let body = self.body(body_node);
            out.push(Stmt {
                kind: StmtKind::For {
                    step: Expr::new(ExprKind::Int(step, None), var_span.clone()),
                    var,
                    var_span,
                    ty,
                    declare: true,
                    start: Some(start),
                    end,
                    body,
                },
                span,
            });
            return Ok(());
        }
        let mut stmts = Vec::new();
        if let Some(i) = init {
            match i.kind() {
                "lexical_declaration" | "variable_declaration" => {
                    self.declaration(i, &mut stmts)?
                }
                "expression_statement" => {
                    if let Some(e) = i.named_child(0) {
                        let kind = self.effect(e)?;
                        stmts.push(Stmt { kind, span: i.byte_range() });
                    }
                }
                _ => {
                    let kind = self.effect(i)?;
                    stmts.push(Stmt { kind, span: i.byte_range() });
                }
            }
        }
        let cond = match cond {
            Some(c) => self.expr(c)?,
            None => Expr::new(ExprKind::Bool(true), span.clone()),
        };
        let mut body = self.body(body_node);
        if update.is_some() && ast::continues(&body) {
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                "a `continue` in this `for` loop would skip its update: write the loop as `for (let i: u32 = a; i < b; i++)`, or as a `while` loop",
            ));
        }
        if let Some(u) = update {
            let kind = self.effect(u)?;
            body.push(Stmt { kind, span: u.byte_range() });
        }
        stmts.push(Stmt { kind: StmtKind::While(cond, body), span: span.clone() });
        out.push(Stmt { kind: StmtKind::Block(stmts), span });
        Ok(())
    }

    #[allow(clippy::type_complexity, reason = "the parts of one counted loop")]
    fn counted(
        &mut self,
        init: Option<Node<'_>>,
        cond: Option<Node<'_>>,
        update: Option<Node<'_>>,
    ) -> R<Option<(String, Span, Option<TypeRef>, Expr, Expr, i64)>> {
        let (Some(init), Some(cond), Some(update)) = (init, cond, update) else { return Ok(None) };
        if init.kind() != "lexical_declaration" {
            return Ok(None);
        }
        let mut c = init.walk();
        let ds: Vec<Node<'_>> =
            init.named_children(&mut c).filter(|d| d.kind() == "variable_declarator").collect();
        let [d] = ds.as_slice() else { return Ok(None) };
        let (Some(var), Some(start)) =
            (d.child_by_field_name("name"), d.child_by_field_name("value"))
        else {
            return Ok(None);
        };
        let name = self.src(var);
        if cond.kind() != "binary_expression" {
            return Ok(None);
        }
        let (Some(l), Some(r)) =
            (cond.child_by_field_name("left"), cond.child_by_field_name("right"))
        else {
            return Ok(None);
        };
        let sym = cond.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
        let field = |n: Node<'_>, f: &str| n.child_by_field_name(f).map(|x| self.src(x));
        let update_parts = match update.kind() {
            "update_expression" => (field(update, "argument"), field(update, "operator"), None),
            "augmented_assignment_expression" => {
                (field(update, "left"), field(update, "operator"), field(update, "right"))
            }
            _ => return Ok(None),
        };
        let Some((step, bound_left)) =
            super::counting(name, (self.src(l), sym, self.src(r)), update_parts)
        else {
            return Ok(None);
        };
        let bound = if bound_left { l } else { r };
        let ty = d.child_by_field_name("type").map(|t| self.ty(t));
        let start = self.expr(start)?;
        let end = self.expr(bound)?;
        Ok(Some((name.to_owned(), var.byte_range(), ty, start, end, step)))
    }

    fn expr(&mut self, n: Node<'_>) -> R<Expr> {
        let span = n.byte_range();
        let e = |kind| Ok(Expr::new(kind, span.clone()));
        match n.kind() {
            "parenthesized_expression" => {
                let inner = self.expr(n.named_child(0).ok_or(Reported)?)?;
                Ok(Expr { span, ..inner })
            }
            "number" => {
                let t = self.src(n).replace('_', "");
                let lower = t.to_ascii_lowercase();
                let radix = ["0x", "0o", "0b"].iter().any(|p| lower.starts_with(p));
                if !radix && (lower.contains('.') || lower.contains('e')) {
                    match lower.parse::<f64>() {
                        Ok(v) => e(ExprKind::Float(v, None)),
                        Err(_) => Err(self.error(codes::TYPE_MISMATCH, span, "not a number")),
                    }
                } else {
                    match super::parse_int(&lower) {
                        Some(v) => e(ExprKind::Int(v, None)),
                        None => Err(self.error(codes::TYPE_MISMATCH, span, "this integer does not fit in 64 bits")),
                    }
                }
            }
            "true" => e(ExprKind::Bool(true)),
            "false" => e(ExprKind::Bool(false)),
            "identifier" => e(ExprKind::Name(self.src(n).to_owned())),
            "binary_expression" => {
                let l = n.child_by_field_name("left").ok_or(Reported)?;
                let r = n.child_by_field_name("right").ok_or(Reported)?;
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                if sym == "**" {
                    // `2 ** x` is `exp2(x)`.
                    if self.src(l).trim() == "2" || self.src(l).trim() == "2.0" {
                        let x = self.expr(r)?;
                        return e(ExprKind::Call {
                            name: "exp2".into(),
                            callee: "2 **".into(),
                            callee_span: l.byte_range(),
                            args: vec![x],
                            types: Vec::new(),
                        });
                    }
                    let (a, b) = (self.expr(l)?, self.expr(r)?);
                    return e(ExprKind::Binary(Op::Pow, sym.to_owned(), Box::new(a), Box::new(b)));
                }
                if sym == "==" || sym == "!=" {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        format!("`{sym}` converts in JavaScript: compare with `{sym}=`"),
                    ));
                }
                let (a, b) = (self.expr(l)?, self.expr(r)?);
                match Op::from_text(sym).filter(|o| *o != Op::IntDiv) {
                    Some(op) => e(ExprKind::Binary(op, sym.to_owned(), Box::new(a), Box::new(b))),
                    None => Err(self.error(codes::UNSUPPORTED, span, format!("the operator `{sym}` is not supported"))),
                }
            }
            "unary_expression" => {
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                let arg = n.child_by_field_name("argument").ok_or(Reported)?;
                let op = match sym {
                    "-" => UnaryOp::Neg,
                    "+" => UnaryOp::Plus,
                    "!" => UnaryOp::Not,
                    "~" => UnaryOp::BitNot,
                    _ => return Err(self.error(codes::UNSUPPORTED, span, format!("`{sym}` is not supported in kernels"))),
                };
                let a = self.expr(arg)?;
                e(ExprKind::Unary(op, sym.to_owned(), Box::new(a)))
            }
            "ternary_expression" => {
                let c = self.expr(n.child_by_field_name("condition").ok_or(Reported)?)?;
                let a = self.expr(n.child_by_field_name("consequence").ok_or(Reported)?)?;
                let b = self.expr(n.child_by_field_name("alternative").ok_or(Reported)?)?;
                e(ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)))
            }
            "subscript_expression" => {
                let base = self.expr(n.child_by_field_name("object").ok_or(Reported)?)?;
                let index = self.expr(n.child_by_field_name("index").ok_or(Reported)?)?;
                e(ExprKind::Index(Box::new(base), Box::new(index)))
            }
            "call_expression" => self.call(n),
            "non_null_expression" => self.expr(n.named_child(0).ok_or(Reported)?),
            "as_expression" | "satisfies_expression" => Err(self.error(
                codes::TYPE_MISMATCH,
                span,
                "`as` asserts a type and converts nothing: narrow with `wave.u32(x)`, `wave.i32(x)`, `wave.f32(x)`",
            )),
            "assignment_expression" | "augmented_assignment_expression" | "update_expression" => Err(self.error(
                codes::UNSUPPORTED,
                span,
                "an assignment or `++` inside an expression is not supported: write it as its own statement",
            )),
            "arrow_function" | "function_expression" => Err(self.unsupported(n, "closures")),
            "new_expression" => Err(self.error(
                codes::UNSUPPORTED,
                span,
                "`new` makes a private array in a declaration only: `const acc = new Float32Array(4)`",
            )),
            "member_expression" if math_constant(self.src(n)).is_some() => {
                let v = math_constant(self.src(n)).unwrap_or(0.0);
                e(ExprKind::Float(v, Some(Scalar::F64)))
            }
            "member_expression" => Err(self.error(
                codes::UNKNOWN_NAME,
                span,
                format!("`{}` is not a value: intrinsics are called, like `wave.laneId()`", self.src(n)),
            )),
            "string" | "template_string" => Err(self.unsupported(n, "strings")),
            "array" | "object" => Err(self.unsupported(n, "arrays and objects (but typed arrays)")),
            "this" => Err(self.error(codes::UNSUPPORTED, span, "kernels have no `this`: call helpers by name")),
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
            for a in list.named_children(&mut c) {
                if a.kind() != "comment" {
                    args.push(self.expr(a)?);
                }
            }
        }
        let callee = self.src(f).to_owned();
        let cast = |to: Scalar, args: Vec<Expr>, me: &mut Self| -> R<Expr> {
            let [a] = <[Expr; 1]>::try_from(args).map_err(|_| {
                me.error(codes::BAD_CALL, span.clone(), format!("`{callee}` takes 1 argument"))
            })?;
            let t = TypeRef { kind: TypeKind::Scalar(to), span: f.byte_range() };
            Ok(Expr::new(ExprKind::Cast(t, Box::new(a)), span.clone()))
        };
        let name = match f.kind() {
            "identifier" if callee == "Number" => return cast(Scalar::F64, args, self),
            "identifier" => callee.clone(),
            "member_expression" => {
                let object = f.child_by_field_name("object").map(|o| self.src(o)).unwrap_or("");
                let property = f.child_by_field_name("property").map(|o| self.src(o)).unwrap_or("");
                match (object, property) {
                    ("wave", p) => ast::snake_case(p),
                    ("Math", "fround") => return cast(Scalar::F32, args, self),
                    (
                        "Math",
                        p @ ("sqrt" | "abs" | "floor" | "ceil" | "sin" | "cos" | "log2" | "min"
                        | "max" | "trunc" | "exp" | "log" | "log10" | "tanh" | "pow"),
                    ) => p.to_owned(),
                    ("Math", "clz32") => "clz".to_owned(),
                    ("Atomics", p @ ("add" | "sub" | "and" | "or" | "xor" | "exchange")) => {
                        format!("atomic_{p}")
                    }
                    ("Atomics", "compareExchange" | "load" | "store" | "wait" | "notify") => {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            f.byte_range(),
                            format!("`{callee}` is not supported: the atomics are add, sub, and, or, xor, exchange, `wave.atomicMin` and `wave.atomicMax`"),
                        ));
                    }
                    // `Kernels.helper(x)`: a static method of the kernels' class.
                    (o, p) if o != "Math" && o != "Atomics" && !o.contains('.') => p.to_owned(),
                    _ => {
                        return Err(self.error(
                            codes::UNKNOWN_NAME,
                            f.byte_range(),
                            format!("`{callee}` is not an intrinsic or a function of this file"),
                        ));
                    }
                }
            }
            _ => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    f.byte_range(),
                    "kernels call intrinsics (`wave.*`, `Math.*`, `Atomics.*`) and the functions of this file",
                ));
            }
        };
        Ok(Expr::new(
            ExprKind::Call { name, callee, callee_span: f.byte_range(), args, types: Vec::new() },
            span,
        ))
    }
}

/// `Math.PI` and its kin: `number` constants.
fn math_constant(text: &str) -> Option<f64> {
    Some(match text {
        "Math.PI" => std::f64::consts::PI,
        "Math.E" => std::f64::consts::E,
        "Math.LN2" => std::f64::consts::LN_2,
        "Math.LN10" => std::f64::consts::LN_10,
        "Math.LOG2E" => std::f64::consts::LOG2_E,
        "Math.SQRT2" => std::f64::consts::SQRT_2,
        _ => return None,
    })
}

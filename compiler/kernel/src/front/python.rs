//! The Python frontend: functions decorated `@wave.kernel` (or `@kernel`), parsed by
//! tree-sitter-python, to the shared surface syntax ([`super::ast`]), which
//! [`super::typer`] types into HIR.
//!
//! Parameters are annotated: `f32[:]` (a buffer) or a scalar type (`f32`, `i32`, `u32`, `f16`,
//! `f64`, `bool`). Locals take the type of their first assignment (or an annotation,
//! `x: f32 = 0`). Integer literals take the type the context wants (i32 when nothing does);
//! float literals likewise (f32). There are no implicit conversions: `f32(i)` converts. `/` is
//! float division and `//` integer division (truncating toward zero, as on GPUs).

use tree_sitter::Node;
use wave_diag::{Diagnostic, Span};

use super::ast::{
    self, Dialect, Expr, ExprKind, Func, Op, Stmt, StmtKind, TypeKind, TypeRef, UnaryOp,
};
use super::{R, Reported, codes};
use crate::hir::{Kernel, Scalar};

/// Parses `text` and builds the HIR of each kernel, with every diagnostic.
pub fn lower(text: &str) -> (Vec<Kernel>, Vec<Diagnostic>) {
    let (funcs, diagnostics) = parse(text);
    super::typer::lower(text, &funcs, Dialect::PYTHON, diagnostics)
}

/// The functions of `text` in the shared surface syntax, with the diagnostics of parsing.
pub fn parse(text: &str) -> (Vec<Func>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let Some(tree) = super::parse_tree(
        &mask_buffer_annotations(text),
        &tree_sitter_python::LANGUAGE.into(),
        "Python",
        &mut diagnostics,
    ) else {
        return (Vec::new(), diagnostics);
    };
    let root = tree.root_node();
    let mut t = Translator { text, diagnostics: Vec::new() };
    let mut funcs = Vec::new();
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        match item.kind() {
            "function_definition" => funcs.extend(t.function(item, item, false, None)),
            "decorated_definition" => {
                let Some(def) = item.child_by_field_name("definition") else { continue };
                if def.kind() != "function_definition" {
                    continue;
                }
                let mut c = item.walk();
                let decorators: Vec<Node<'_>> =
                    item.named_children(&mut c).filter(|d| d.kind() == "decorator").collect();
                let is_kernel = decorators.iter().any(|d| {
                    // (A comment after the decorator is inside its node.)
                    let t = text[d.byte_range()].split('#').next().unwrap_or("");
                    let t = t.trim().trim_start_matches('@').trim();
                    let t = t.split('(').next().unwrap_or("").trim();
                    unqualified(t) == "kernel"
                });
                if is_kernel {
                    let workgroup = workgroup_size(text, &decorators)
                        .map(|s| (s, item.byte_range().start..def.byte_range().start));
                    funcs.extend(t.function(item, def, true, workgroup));
                } else if !text[item.byte_range()].contains("kernel") {
                    funcs.extend(t.function(item, def, false, None));
                }
            }
            "expression_statement" => funcs.extend(t.constant(item)),
            _ => {}
        }
    }
    // A name assigned again at module level is the last value, as a kernel called after the
    // module ran sees it.
    let mut seen = std::collections::HashSet::new();
    let mut keep: Vec<bool> =
        funcs.iter().rev().map(|f| f.constant.is_none() || seen.insert(f.name.clone())).collect();
    keep.reverse();
    let mut keep = keep.into_iter();
    funcs.retain(|_| keep.next().unwrap_or(true));
    diagnostics.append(&mut t.diagnostics);
    super::syntax_errors(root, &mut diagnostics);
    super::distribute(&mut funcs, &mut diagnostics);
    (funcs, diagnostics)
}

/// `name` without the module it is taken from: `wave.` (the dialect's own spelling, also
/// `import wave_gpu as wave`) or `wave_gpu.` (the Python package's name, which the reference
/// SDK's programs use): `wave_gpu.thread_id`, `wave.thread_id` and `thread_id` are one name.
pub(crate) fn unqualified(name: &str) -> &str {
    name.strip_prefix("wave.")
        .or_else(|| name.strip_prefix("wave_gpu."))
        .or_else(|| name.strip_prefix("math."))
        .unwrap_or(name)
}

/// tree-sitter-python reads annotations as types, where the slice of `f32[:]` is a syntax
/// error; Python reads them as expressions. The parser gets `f32[0]` in their place (same
/// length, so every offset holds), and the annotation is read from the original text.
pub(crate) fn mask_buffer_annotations(text: &str) -> String {
    let mut out = text.to_owned();
    let mut from = 0;
    while let Some(i) = text[from..].find("[:]") {
        let at = from + i;
        let before = text[..at].trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let name = &text[before.len()..at];
        // A type in an annotation (`a: i8[:]` too, which the typer then refuses by name
        // instead of a syntax error): after `:` or `->`, perhaps with a module (`wave.`).
        let module =
            before.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        let annotation = module.trim_end().ends_with(':') || module.trim_end().ends_with("->");
        if !name.is_empty() && (Scalar::from_name(name).is_some() || annotation) {
            out.replace_range(at..at + 3, "[0]");
        }
        from = at + 3;
    }
    out
}

/// `@wave.kernel(workgroup=(64, 1, 1))` or `@wave.kernel(workgroup=64)`.
fn workgroup_size(text: &str, decorators: &[Node<'_>]) -> Option<[u32; 3]> {
    // The decorators' text only (not the body), without comments.
    let deco: String = decorators
        .iter()
        .map(|d| {
            let t = &text[d.byte_range()];
            t.lines().map(|l| l.split('#').next().unwrap_or("")).collect::<Vec<_>>().join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let at = deco.find("workgroup=")? + "workgroup=".len();
    super::dims(deco[at..].trim_start_matches('(').split([')', '\n']).next()?)
}

struct Translator<'t> {
    text: &'t str,
    diagnostics: Vec<Diagnostic>,
}

impl<'t> Translator<'t> {
    fn src(&self, n: Node<'_>) -> &'t str {
        &self.text[n.byte_range()]
    }

    fn error(&mut self, code: &'static str, span: Span, message: impl Into<String>) -> Reported {
        self.diagnostics.push(Diagnostic::error(code, span, message));
        Reported
    }

    fn function(
        &mut self,
        whole: Node<'_>,
        def: Node<'_>,
        kernel: bool,
        workgroup: Option<([u32; 3], Span)>,
    ) -> Option<Func> {
        let name_node = def.child_by_field_name("name")?;
        let mut params = Vec::new();
        if let Some(list) = def.child_by_field_name("parameters") {
            let mut c = list.walk();
            for p in list.named_children(&mut c).filter(|n| !n.is_extra()) {
                if let Ok(p) = self.param(p, kernel) {
                    params.push(p);
                }
            }
        }
        let body = def.child_by_field_name("body").map(|b| self.block(b)).unwrap_or_default();
        Some(Func {
            name: self.src(name_node).to_owned(),
            name_span: name_node.byte_range(),
            span: if kernel { def.byte_range() } else { whole.byte_range() },
            kernel,
            workgroup,
            generics: Vec::new(),
            params,
            body,
            diagnostics: Vec::new(),
            constant: None,
        })
    }

    /// A module-level `NAME = value` or `NAME: u32 = value`: a constant kernels may use. Its
    /// value is read quietly (module code is the host program's too): what is wrong with it
    /// is reported where a kernel uses the name.
    fn constant(&mut self, item: Node<'_>) -> Option<Func> {
        let a = item.named_child(0).filter(|a| a.kind() == "assignment")?;
        let left = a.child_by_field_name("left").filter(|l| l.kind() == "identifier")?;
        let right = a.child_by_field_name("right")?;
        let ty = a.child_by_field_name("type").map(|t| self.annotation(t));
        let outer = std::mem::take(&mut self.diagnostics);
        let value = self
            .expr(right)
            .unwrap_or_else(|Reported| Expr::new(ExprKind::Error, right.byte_range()));
        let diagnostics = std::mem::replace(&mut self.diagnostics, outer);
        let mut f = Func::constant(
            self.src(left).to_owned(),
            left.byte_range(),
            ty,
            value,
            item.byte_range(),
        );
        f.diagnostics = diagnostics;
        Some(f)
    }

    fn param(&mut self, p: Node<'_>, kernel: bool) -> R<ast::Param> {
        let (name_node, ty_node) = match p.kind() {
            "typed_parameter" => {
                let mut c = p.walk();
                let name = p.named_children(&mut c).find(|n| n.kind() == "identifier");
                (name, p.child_by_field_name("type"))
            }
            "identifier" => (Some(p), None),
            "typed_default_parameter" if kernel => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    p.byte_range(),
                    "kernel parameters have no default values",
                ));
            }
            _ => {
                let whose = if kernel { "kernel" } else { "helper" };
                return Err(self.error(
                    codes::UNSUPPORTED,
                    p.byte_range(),
                    format!("{whose} parameters are plain names with a type"),
                ));
            }
        };
        let name_node = name_node.ok_or(Reported)?;
        Ok(ast::Param {
            name: self.src(name_node).to_owned(),
            span: name_node.byte_range(),
            ty: ty_node.map(|t| self.annotation(t)),
            whole: p.byte_range(),
            mutable: true,
        })
    }

    /// `f32[:]`, `wave.f32[:]`, `f32`, `wave.u32`.
    fn annotation(&self, n: Node<'_>) -> TypeRef {
        let text: String = self.src(n).chars().filter(|c| !c.is_whitespace()).collect();
        let text = unqualified(&text);
        let (base, buffer) = match text.strip_suffix("[:]") {
            Some(b) => (b, true),
            None => (text, false),
        };
        let kind = match (Scalar::from_name(base), buffer) {
            (Some(s), true) => TypeKind::Buffer { elem: s, writable: true },
            (Some(s), false) => TypeKind::Scalar(s),
            (None, _) => TypeKind::Unknown(self.src(n).to_owned()),
        };
        TypeRef { kind, span: n.byte_range() }
    }

    fn block(&mut self, n: Node<'_>) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut c = n.walk();
        for s in n.named_children(&mut c) {
            if let Ok(Some(stmt)) = self.stmt(s) {
                out.push(stmt);
            }
        }
        out
    }

    fn stmt(&mut self, n: Node<'_>) -> R<Option<Stmt>> {
        let span = n.byte_range();
        let kind = match n.kind() {
            "comment" | "pass_statement" => return Ok(None),
            "expression_statement" => {
                let Some(e) = n.named_child(0) else { return Ok(None) };
                match e.kind() {
                    "assignment" => return self.assignment(e).map(Some),
                    "augmented_assignment" => {
                        let left = e.child_by_field_name("left").ok_or(Reported)?;
                        let right = e.child_by_field_name("right").ok_or(Reported)?;
                        let op_text =
                            e.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                        let sym = op_text.trim_end_matches('=');
                        let Some(op) = Op::from_text(sym).filter(|o| !matches!(o, Op::UShr)) else {
                            return Err(self.error(
                                codes::UNSUPPORTED,
                                e.byte_range(),
                                format!("the operator `{sym}` is not supported"),
                            ));
                        };
                        let target = self.expr(left)?;
                        let value = self.expr(right)?;
                        StmtKind::Assign {
                            target,
                            op: Some((op, sym.to_owned())),
                            value,
                            annotation: None,
                        }
                    }
                    "string" => return Ok(None), // a docstring
                    _ => StmtKind::Expr(self.expr(e)?),
                }
            }
            "if_statement" => self.if_statement(n)?,
            "while_statement" => {
                let cond = self.expr(n.child_by_field_name("condition").ok_or(Reported)?)?;
                let body = n.child_by_field_name("body").map(|b| self.block(b)).unwrap_or_default();
                if n.child_by_field_name("alternative").is_some() {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        "`while ... else` is not supported",
                    ));
                }
                StmtKind::While(cond, body)
            }
            "for_statement" => self.for_statement(n)?,
            "break_statement" => StmtKind::Break,
            "continue_statement" => StmtKind::Continue,
            "return_statement" => {
                let value = match n.named_child(0) {
                    Some(v) => Some(self.expr(v)?),
                    None => None,
                };
                StmtKind::Return(value)
            }
            "function_definition" | "decorated_definition" | "class_definition" => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    "definitions inside a kernel are not supported",
                ));
            }
            other => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    format!(
                        "`{}` statements are not supported in kernels",
                        other.replace('_', " ").trim_end_matches(" statement")
                    ),
                ));
            }
        };
        Ok(Some(Stmt { kind, span }))
    }

    fn if_statement(&mut self, n: Node<'_>) -> R<StmtKind> {
        let cond = self.expr(n.child_by_field_name("condition").ok_or(Reported)?)?;
        let then = n.child_by_field_name("consequence").map(|b| self.block(b)).unwrap_or_default();
        // `elif`/`else` clauses, innermost last: fold them into nested ifs.
        let mut c = n.walk();
        let clauses: Vec<Node<'_>> = n.children_by_field_name("alternative", &mut c).collect();
        let mut otherwise: Vec<Stmt> = Vec::new();
        for clause in clauses.into_iter().rev() {
            match clause.kind() {
                "else_clause" => {
                    otherwise = clause
                        .child_by_field_name("body")
                        .map(|b| self.block(b))
                        .unwrap_or_default();
                }
                _ => {
                    let c = self.expr(clause.child_by_field_name("condition").ok_or(Reported)?)?;
                    let body = clause
                        .child_by_field_name("consequence")
                        .map(|b| self.block(b))
                        .unwrap_or_default();
                    otherwise = vec![Stmt {
                        kind: StmtKind::If(c, body, otherwise),
                        span: clause.byte_range(),
                    }];
                }
            }
        }
        Ok(StmtKind::If(cond, then, otherwise))
    }

    fn for_statement(&mut self, n: Node<'_>) -> R<StmtKind> {
        let left = n.child_by_field_name("left").ok_or(Reported)?;
        let right = n.child_by_field_name("right").ok_or(Reported)?;
        if left.kind() != "identifier" {
            return Err(self.error(
                codes::UNSUPPORTED,
                left.byte_range(),
                "a `for` loop has one variable",
            ));
        }
        let is_range = right.kind() == "call"
            && right.child_by_field_name("function").is_some_and(|f| self.src(f) == "range");
        if !is_range {
            return Err(self.error(
                codes::UNSUPPORTED,
                right.byte_range(),
                "kernels loop over `range(...)` only",
            ));
        }
        let args = self.args(right)?;
        let (start, end, step) = match args.as_slice() {
            [end] => {
                (None, self.expr(*end)?, Expr::new(ExprKind::Int(1, None), right.byte_range()))
            }
            [start, end] | [start, end, _] => {
                let step = match args.get(2) {
                    Some(s) => self.expr(*s)?,
                    None => Expr::new(ExprKind::Int(1, None), right.byte_range()),
                };
                (Some(self.expr(*start)?), self.expr(*end)?, step)
            }
            _ => {
                return Err(self.error(
                    codes::BAD_CALL,
                    right.byte_range(),
                    "`range` takes 1 to 3 arguments",
                ));
            }
        };
        let body = n.child_by_field_name("body").map(|b| self.block(b)).unwrap_or_default();
        Ok(StmtKind::For {
            var: self.src(left).to_owned(),
            var_span: left.byte_range(),
            ty: None,
            declare: false,
            start,
            end,
            step,
            body,
        })
    }

    fn assignment(&mut self, n: Node<'_>) -> R<Stmt> {
        let span = n.byte_range();
        let left = n.child_by_field_name("left").ok_or(Reported)?;
        let Some(right) = n.child_by_field_name("right") else {
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                "a declaration without a value is not supported: `x: f32 = 0.0`",
            ));
        };
        let annotation = n.child_by_field_name("type").map(|t| self.annotation(t));
        // `tile = wave.local_array(f32, 256)` declares Local Memory shared by the workgroup;
        // `acc = wave.private_array(f32, 4)` an array of each thread's own.
        let array = match right.child_by_field_name("function").map(|f| unqualified(self.src(f))) {
            _ if right.kind() != "call" => None,
            Some("local_array") => Some("local"),
            Some("private_array") => Some("private"),
            _ => None,
        };
        if let Some(kind) = array {
            let args = self.args(right)?;
            let [ty, len] = args.as_slice() else {
                let example = if kind == "local" { "256" } else { "4" };
                return Err(self.error(
                    codes::BAD_CALL,
                    right.byte_range(),
                    format!(
                        "`{kind}_array` takes an element type and a constant length: `{kind}_array(f32, {example})`"
                    ),
                ));
            };
            if left.kind() != "identifier" {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    left.byte_range(),
                    format!("a {kind} array is assigned to a name"),
                ));
            }
            let elem = self.annotation(*ty);
            // `(rows, columns)`: a 2D array.
            let (len, columns) = if len.kind() == "tuple" {
                let mut c = len.walk();
                let dims: Vec<Node<'_>> =
                    len.named_children(&mut c).filter(|d| !d.is_extra()).collect();
                let [rows, cols] = dims.as_slice() else {
                    return Err(self.error(
                        codes::BAD_CALL,
                        len.byte_range(),
                        "an array has one dimension or two: `(rows, columns)`",
                    ));
                };
                (self.expr(*rows)?, Some(self.expr(*cols)?))
            } else {
                (self.expr(*len)?, None)
            };
            return Ok(Stmt {
                kind: StmtKind::Array {
                    name: self.src(left).to_owned(),
                    name_span: left.byte_range(),
                    local: kind == "local",
                    elem,
                    len,
                    columns,
                },
                span,
            });
        }
        // `x = y = v`: each target, left to right, gets the one value.
        if right.kind() == "assignment" && annotation.is_none() {
            let mut targets = vec![left];
            let mut value = right;
            while value.kind() == "assignment" {
                match (value.child_by_field_name("left"), value.child_by_field_name("right")) {
                    (Some(l), Some(r)) if value.child_by_field_name("type").is_none() => {
                        targets.push(l);
                        value = r;
                    }
                    _ => {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            value.byte_range(),
                            "a chained assignment assigns names and elements: `x = y = 0`",
                        ));
                    }
                }
            }
            let value = self.expr(value)?;
            let mut targets_ast = Vec::new();
            for t in targets {
                targets_ast.push(self.target(t)?);
            }
            return Ok(Stmt {
                kind: ast::assign_all(targets_ast, vec![value], &span, false),
                span,
            });
        }
        // `x, y = y, x`: every value first, then the targets in order.
        if matches!(left.kind(), "pattern_list" | "tuple_pattern") {
            let mut c = left.walk();
            let mut targets = Vec::new();
            for t in left.named_children(&mut c).filter(|t| !t.is_extra()) {
                targets.push(self.target(t)?);
            }
            let mut c = right.walk();
            let parts: Vec<Node<'_>> = if matches!(right.kind(), "expression_list" | "tuple") {
                right.named_children(&mut c).filter(|t| !t.is_extra()).collect()
            } else {
                vec![right]
            };
            if parts.len() != targets.len() {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    format!(
                        "{} names take {} values: a tuple assignment unpacks values written there (`x, y = y, x`)",
                        targets.len(),
                        parts.len()
                    ),
                ));
            }
            let mut values = Vec::new();
            for p in parts {
                values.push(self.expr(p)?);
            }
            return Ok(Stmt { kind: ast::assign_all(targets, values, &span, false), span });
        }
        let target = match left.kind() {
            "identifier" | "subscript" => self.expr(left)?,
            _ => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    left.byte_range(),
                    "assign to a name or to a buffer element",
                ));
            }
        };
        let value = self.expr(right)?;
        Ok(Stmt { kind: StmtKind::Assign { target, op: None, value, annotation }, span })
    }

    /// A name or an element assigned to.
    fn target(&mut self, t: Node<'_>) -> R<Expr> {
        match t.kind() {
            "identifier" | "subscript" => self.expr(t),
            _ => Err(self.error(
                codes::UNSUPPORTED,
                t.byte_range(),
                "assign to a name or to a buffer element",
            )),
        }
    }

    fn args<'n>(&mut self, call: Node<'n>) -> R<Vec<Node<'n>>> {
        let Some(list) = call.child_by_field_name("arguments") else { return Ok(Vec::new()) };
        let mut c = list.walk();
        let mut args = Vec::new();
        for a in list.named_children(&mut c).filter(|a| a.kind() != "comment") {
            if a.kind() == "keyword_argument" {
                // `thread_id(axis=1)`: the one keyword the intrinsics know.
                match (a.child_by_field_name("name"), a.child_by_field_name("value")) {
                    (Some(k), Some(v)) if self.src(k) == "axis" => args.push(v),
                    _ => {
                        return Err(self.error(
                            codes::BAD_CALL,
                            a.byte_range(),
                            "intrinsics take positional arguments",
                        ));
                    }
                }
            } else {
                args.push(a);
            }
        }
        Ok(args)
    }

    fn expr(&mut self, n: Node<'_>) -> R<Expr> {
        let span = n.byte_range();
        let e = |kind| Ok(Expr::new(kind, span.clone()));
        match n.kind() {
            "parenthesized_expression" => {
                let inner = self.expr(n.named_child(0).ok_or(Reported)?)?;
                Ok(Expr { span, ..inner })
            }
            "integer" => {
                let t = self.src(n).replace('_', "").to_ascii_lowercase();
                let v = match t.strip_prefix("0x") {
                    Some(h) => i64::from_str_radix(h, 16),
                    None => t.parse::<i64>(),
                };
                match v {
                    Ok(v) => e(ExprKind::Int(v, None)),
                    Err(_) => Err(self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        "this integer does not fit in 64 bits",
                    )),
                }
            }
            "float" => match self.src(n).replace('_', "").parse::<f64>() {
                Ok(v) => e(ExprKind::Float(v, None)),
                Err(_) => Err(self.error(codes::TYPE_MISMATCH, span, "not a float")),
            },
            "true" => e(ExprKind::Bool(true)),
            "false" => e(ExprKind::Bool(false)),
            "identifier" => e(ExprKind::Name(self.src(n).to_owned())),
            "binary_operator" | "boolean_operator" => {
                let l = n.child_by_field_name("left").ok_or(Reported)?;
                let r = n.child_by_field_name("right").ok_or(Reported)?;
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                let Some(op) = Op::from_text(sym).filter(|o| !matches!(o, Op::UShr)) else {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        format!("the operator `{sym}` is not supported"),
                    ));
                };
                let (a, b) = (self.expr(l)?, self.expr(r)?);
                e(ExprKind::Binary(op, sym.to_owned(), Box::new(a), Box::new(b)))
            }
            "comparison_operator" => {
                let mut c = n.walk();
                let parts: Vec<Node<'_>> = n.named_children(&mut c).collect();
                let mut oc = n.walk();
                let ops: Vec<String> = n
                    .children_by_field_name("operators", &mut oc)
                    .map(|o| self.src(o).to_owned())
                    .collect();
                if parts.len() != ops.len() + 1 || ops.is_empty() {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        "this comparison is not supported: write `a < b and b < c`",
                    ));
                }
                // `a < b < c` is `a < b and b < c` with `b` computed once: a middle operand
                // is read twice here, so it may not call anything (a call could have an
                // effect, or cost twice).
                for middle in &parts[1..parts.len() - 1] {
                    if contains_call(*middle) {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            middle.byte_range(),
                            "a call in the middle of a chained comparison: give it a name first (`t = f(x)`, then `a < t < c`)",
                        ));
                    }
                }
                let mut chain: Option<Expr> = None;
                for (k, sym) in ops.iter().enumerate() {
                    let Some(op) = Op::from_text(sym).filter(|o| o != &Op::UShr) else {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            span,
                            format!("the operator `{sym}` is not supported"),
                        ));
                    };
                    let (a, b) = (self.expr(parts[k])?, self.expr(parts[k + 1])?);
                    let at = parts[k].start_byte()..parts[k + 1].end_byte();
                    let cmp =
                        Expr::new(ExprKind::Binary(op, sym.clone(), Box::new(a), Box::new(b)), at);
                    chain = Some(match chain {
                        None => cmp,
                        Some(left) => Expr::new(
                            ExprKind::Binary(Op::And, "and".into(), Box::new(left), Box::new(cmp)),
                            span.clone(),
                        ),
                    });
                }
                chain.ok_or(Reported)
            }
            "not_operator" => {
                let a = self.expr(n.child_by_field_name("argument").ok_or(Reported)?)?;
                e(ExprKind::Unary(UnaryOp::Not, "not".into(), Box::new(a)))
            }
            "unary_operator" => {
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                let a = self.expr(n.child_by_field_name("argument").ok_or(Reported)?)?;
                let op = match sym {
                    "+" => UnaryOp::Plus,
                    "-" => UnaryOp::Neg,
                    _ => UnaryOp::BitNot,
                };
                e(ExprKind::Unary(op, sym.to_owned(), Box::new(a)))
            }
            "conditional_expression" => {
                let mut c = n.walk();
                let parts: Vec<Node<'_>> = n.named_children(&mut c).collect();
                let [a, cond, b] = parts.as_slice() else { return Err(Reported) };
                let (a, cond, b) = (self.expr(*a)?, self.expr(*cond)?, self.expr(*b)?);
                e(ExprKind::Cond(Box::new(cond), Box::new(a), Box::new(b)))
            }
            "subscript" => {
                let mut base = self.expr(n.child_by_field_name("value").ok_or(Reported)?)?;
                // `t[i, j]` is `t[i][j]`.
                let mut c = n.walk();
                let subscripts: Vec<Node<'_>> =
                    n.children_by_field_name("subscript", &mut c).collect();
                let mut parts = Vec::new();
                for s in subscripts {
                    if s.kind() == "tuple" || s.kind() == "expression_list" {
                        let mut c = s.walk();
                        for p in s.named_children(&mut c).filter(|p| !p.is_extra()) {
                            parts.push(p);
                        }
                    } else {
                        parts.push(s);
                    }
                }
                if parts.is_empty() {
                    return Err(Reported);
                }
                for p in parts {
                    let index = self.expr(p)?;
                    let at = base.span.start..p.end_byte();
                    base = Expr::new(ExprKind::Index(Box::new(base), Box::new(index)), at);
                }
                Ok(Expr { span, ..base })
            }
            "call" => {
                let f = n.child_by_field_name("function").ok_or(Reported)?;
                let callee = self.src(f).to_owned();
                let name = unqualified(&callee).to_owned();
                let nodes = self.args(n)?;
                let mut args = Vec::with_capacity(nodes.len());
                for a in nodes {
                    args.push(self.expr(a)?);
                }
                e(ExprKind::Call {
                    name,
                    callee,
                    callee_span: f.byte_range(),
                    args,
                    types: Vec::new(),
                })
            }
            "attribute" if math_constant(self.src(n)).is_some() => {
                e(ExprKind::Float(math_constant(self.src(n)).unwrap_or(0.0), None))
            }
            "attribute" => Err(self.error(
                codes::UNKNOWN_NAME,
                span,
                format!(
                    "`{}` is not a value: intrinsics are called, like `wave.lane_id()`",
                    self.src(n)
                ),
            )),
            other => Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!("{} expressions are not supported in kernels", other.replace('_', " ")),
            )),
        }
    }
}

/// `math.pi` and its kin: float literals.
fn math_constant(text: &str) -> Option<f64> {
    Some(match text {
        "math.pi" => std::f64::consts::PI,
        "math.e" => std::f64::consts::E,
        "math.tau" => std::f64::consts::TAU,
        "math.inf" => f64::INFINITY,
        "math.nan" => f64::NAN,
        _ => return None,
    })
}

/// Whether the expression `n` calls anything.
fn contains_call(n: Node<'_>) -> bool {
    if n.kind() == "call" {
        return true;
    }
    let mut c = n.walk();
    let children: Vec<Node<'_>> = n.named_children(&mut c).collect();
    children.into_iter().any(contains_call)
}

#[cfg(test)]
mod tests {
    use super::codes;

    /// Every code of the frontend is documented in docs/diagnostics.md.
    #[test]
    fn every_code_is_documented() {
        let docs = include_str!("../../../../docs/diagnostics.md");
        for code in [
            codes::UNSUPPORTED,
            codes::TYPE_MISMATCH,
            codes::UNKNOWN_NAME,
            codes::BAD_CALL,
            codes::BAD_ANNOTATION,
            codes::BAD_ASSIGNMENT,
            codes::OUTSIDE_LOOP,
            codes::NO_KERNEL,
            codes::CODEGEN,
            codes::REGISTERS,
            codes::INTERNAL,
            codes::LOCAL_MEMORY,
        ] {
            assert!(docs.contains(&format!("## {code}: ")), "{code} is not documented");
        }
    }

    #[test]
    fn the_python_packages_spellings_are_the_same_dialect() {
        // The reference SDK's README kernel, `import wave_gpu as wave`, and names imported
        // `from wave_gpu import ...` all give the HIR of the `wave.` spelling.
        let own = "import wave\n@wave.kernel(workgroup=64)\ndef vector_add(a: wave.f32[:], b: f32[:], out: f32[:], n: wave.u32):\n    t = wave.local_array(f32, 64)\n    gid = wave.thread_id()\n    if gid < n:\n        t[gid] = a[gid]\n        out[gid] = t[gid] + b[gid]\n";
        let package = "import wave_gpu\n@wave_gpu.kernel(workgroup=64)\ndef vector_add(a: wave_gpu.f32[:], b: wave_gpu.f32[:], out: wave_gpu.f32[:], n: wave_gpu.u32):\n    t = wave_gpu.local_array(wave_gpu.f32, 64)\n    gid = wave_gpu.thread_id()\n    if gid < n:\n        t[gid] = a[gid]\n        out[gid] = t[gid] + b[gid]\n";
        let aliased = own.replace("import wave\n", "import wave_gpu as wave\n");
        let imported = "from wave_gpu import kernel, f32, u32, thread_id, local_array\n@kernel(workgroup=64)\ndef vector_add(a: f32[:], b: f32[:], out: f32[:], n: u32):\n    t = local_array(f32, 64)\n    gid = thread_id()\n    if gid < n:\n        t[gid] = a[gid]\n        out[gid] = t[gid] + b[gid]\n";
        let (want, d) = super::lower(own);
        assert!(d.is_empty(), "{d:?}");
        let want = crate::hir::print(&want);
        for text in [package, &aliased, imported] {
            let (k, d) = super::lower(text);
            assert!(d.is_empty(), "{text}\n{d:?}");
            assert_eq!(crate::hir::print(&k), want, "{text}");
        }
    }

    #[test]
    fn a_workgroup_size_of_zero_is_refused() {
        let (_, d) = super::lower(
            "import wave\n@wave.kernel(workgroup=(32, 0, 1))\ndef k(out: u32[:]):\n    out[0] = 1\n",
        );
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, codes::BAD_CALL);
        assert!(d[0].message.contains("at least 1"), "{}", d[0].message);
    }

    #[test]
    fn the_decorator_alone_gives_the_kernel_and_its_workgroup_size() {
        // A comment after the decorator, and `workgroup=` in the body, change nothing.
        let (k, d) = super::lower(
            "import wave\n@wave.kernel  # workgroup=8\ndef k(out: u32[:]):\n    # workgroup=(4, 4)\n    out[0] = 1\n",
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(k.len(), 1);
        assert_eq!(k[0].workgroup_size, None);
        let (k, d) = super::lower(
            "import wave\n@wave.kernel(workgroup=(16, 2))  # 32 threads\ndef k(out: u32[:]):\n    out[0] = 1\n",
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(k[0].workgroup_size, Some([16, 2, 1]));
    }

    #[test]
    fn names_assembly_cannot_write_are_refused() {
        let (_, d) = super::lower(
            "import wave\n@wave.kernel\ndef k(r3: u32[:], sr_x: u32):\n    r3[0] = sr_x\n",
        );
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d.iter().all(|d| d.code == codes::UNSUPPORTED && d.message.contains("rename")));
        let (_, d) =
            super::lower("import wave\n@wave.kernel\ndef k\u{e9}(out: u32[:]):\n    out[0] = 1\n");
        assert!(d.iter().any(|d| d.message.contains("kernel name")), "{d:?}");
    }

    #[test]
    fn two_kernels_of_one_name_are_refused() {
        let (kernels, d) = super::lower(
            "import wave\n@wave.kernel\ndef k(out: u32[:]):\n    out[0] = 1\n@wave.kernel\ndef k(out: u32[:]):\n    out[0] = 2\n",
        );
        assert_eq!(kernels.len(), 1);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, codes::UNSUPPORTED);
        assert!(d[0].message.contains("already defined"), "{}", d[0].message);
        assert_eq!(d[0].labels.len(), 1);
    }

    #[test]
    fn two_parameters_of_one_name_are_refused() {
        // (Found by the fuzzer: the assembler refused the generated `.param` twice.)
        let (_, d) = super::lower(
            "import wave\n@wave.kernel\ndef k(y: f32[:], y: f32[:]):\n    y[0] = 1.0\n",
        );
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, codes::UNSUPPORTED);
        assert!(d[0].message.contains("named twice"), "{}", d[0].message);
        assert_eq!(d[0].span, 42..43, "the second `y`");
        assert_eq!(d[0].labels.len(), 1);
    }

    #[test]
    fn a_file_without_a_kernel_says_so_and_nothing_panics_on_broken_text() {
        let (kernels, d) = super::lower("def f():\n    pass\n");
        assert!(kernels.is_empty());
        assert_eq!(d[0].code, codes::NO_KERNEL);
        // Truncations of a kernel never panic.
        let text = include_str!("../../tests/hir/reduce.py");
        for end in 0..text.len() {
            if text.is_char_boundary(end) {
                let _ = super::lower(&text[..end]);
            }
        }
    }
}

//! The Python frontend: functions decorated `@wave.kernel` (or `@kernel`), parsed by
//! tree-sitter-python, to typed HIR.
//!
//! Parameters are annotated: `f32[:]` (a buffer) or a scalar type (`f32`, `i32`, `u32`, `f16`,
//! `f64`, `bool`). Locals take the type of their first assignment (or an annotation,
//! `x: f32 = 0`). Integer literals take the type the context wants (i32 when nothing does);
//! float literals likewise (f32). There are no implicit conversions: `f32(i)` converts. `/` is
//! float division and `//` integer division (truncating toward zero, as on GPUs).

use std::collections::HashMap;

use tree_sitter::Node;
use wave_diag::{Diagnostic, Span};

use crate::hir::{
    AtomicOp, BinOp, Expr, ExprKind, Intrinsic, Kernel, MathFn, Scalar, Special, Stmt, StmtKind,
    Ty, UnOp, Var, VarId, WaveOp,
};

/// The most elements of a private array: each thread has its own, in registers or in a
/// per-thread frame of Local Memory (16 KiB for the whole workgroup).
const MAX_PRIVATE: u32 = 64;

/// Diagnostic codes of the kernel frontends (documented in `docs/diagnostics.md`).
pub mod codes {
    /// A construct kernels cannot use (or not yet).
    pub const UNSUPPORTED: &str = "E0400";
    /// Operand or value types that do not fit.
    pub const TYPE_MISMATCH: &str = "E0401";
    /// A name that is not a variable, parameter, type or intrinsic.
    pub const UNKNOWN_NAME: &str = "E0402";
    /// An intrinsic called with the wrong number or kind of arguments.
    pub const BAD_CALL: &str = "E0403";
    /// A parameter without a kernel type annotation.
    pub const BAD_ANNOTATION: &str = "E0404";
    /// An assignment to a parameter that cannot take one (a buffer).
    pub const BAD_ASSIGNMENT: &str = "E0405";
    /// `break` or `continue` outside a loop.
    pub const OUTSIDE_LOOP: &str = "E0406";
    /// A file with no kernel.
    pub const NO_KERNEL: &str = "E0407";
    /// A construct the code generator does not handle (yet): an f64 conversion to f16, a
    /// float wave reduction, an f16 scalar parameter.
    pub const CODEGEN: &str = "E0408";
    /// A kernel that needs more registers than allowed and cannot spill.
    pub const REGISTERS: &str = "E0409";
    /// An internal compiler error (a bug: please report it with the kernel).
    pub const INTERNAL: &str = "E0410";
    /// Local Memory that cannot be laid out: a private array kept in memory without a
    /// workgroup size, or more than LOCAL_MEMORY_SIZE in all.
    pub const LOCAL_MEMORY: &str = "E0411";
}

/// Parses `text` and builds the HIR of each kernel, with every diagnostic.
pub fn lower(text: &str) -> (Vec<Kernel>, Vec<Diagnostic>) {
    let mut parser = tree_sitter::Parser::new();
    let mut diagnostics = Vec::new();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        diagnostics.push(Diagnostic::error(
            "E0000",
            0..0,
            "internal error: the Python grammar does not load",
        ));
        return (Vec::new(), diagnostics);
    }
    let Some(tree) = parser.parse(mask_buffer_annotations(text), None) else {
        diagnostics.push(Diagnostic::error("E0000", 0..0, "internal error: parsing stopped"));
        return (Vec::new(), diagnostics);
    };
    let root = tree.root_node();
    let mut kernels = Vec::new();
    // Every other top-level function is a helper, inlined where a kernel calls it.
    let mut helpers: HashMap<String, Node<'_>> = HashMap::new();
    let mut hc = root.walk();
    for item in root.named_children(&mut hc) {
        let def = match item.kind() {
            "function_definition" => Some(item),
            "decorated_definition" if !text[item.byte_range()].contains("kernel") => {
                item.child_by_field_name("definition")
            }
            _ => None,
        };
        if let Some(def) = def.filter(|d| d.kind() == "function_definition")
            && let Some(name) = def.child_by_field_name("name")
        {
            helpers.insert(text[name.byte_range()].to_owned(), def);
        }
    }
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        if item.kind() != "decorated_definition" {
            continue;
        }
        let mut c = item.walk();
        let is_kernel = item.named_children(&mut c).filter(|d| d.kind() == "decorator").any(|d| {
            // (A comment after the decorator is inside its node.)
            let t = text[d.byte_range()].split('#').next().unwrap_or("");
            let t = t.trim().trim_start_matches('@').trim();
            let t = t.split('(').next().unwrap_or("").trim();
            t == "wave.kernel" || t == "kernel"
        });
        let (Some(def), true) = (item.child_by_field_name("definition"), is_kernel) else {
            continue;
        };
        let mut workgroup = workgroup_size(text, item);
        if let Some(size) = workgroup
            && (size.contains(&0) || size.iter().map(|d| u64::from(*d)).product::<u64>() > 1 << 16)
        {
            let at = item.byte_range().start..def.byte_range().start;
            diagnostics.push(Diagnostic::error(
                codes::BAD_CALL,
                at,
                format!(
                    "workgroup size {size:?}: each dimension is at least 1, and a workgroup holds at most 65,536 threads"
                ),
            ));
            workgroup = None;
        }
        let mut b = Builder {
            text,
            vars: Vec::new(),
            names: HashMap::new(),
            diagnostics: Vec::new(),
            loops: 0,
            helpers: &helpers,
            inlining: Vec::new(),
            prelude: Vec::new(),
        };
        if let Some(k) = b.kernel(def, workgroup) {
            match kernels.iter().find(|other: &&Kernel| other.name == k.name) {
                Some(first) => diagnostics.push(
                    Diagnostic::error(
                        codes::UNSUPPORTED,
                        k.span.clone(),
                        format!(
                            "a kernel named `{}` is already defined: kernels need distinct names",
                            k.name
                        ),
                    )
                    .with_label(first.span.clone(), "first defined here"),
                ),
                None => kernels.push(k),
            }
        }
        diagnostics.append(&mut b.diagnostics);
    }
    // Syntax errors first, where tree-sitter saw them.
    let mut errors = Vec::new();
    syntax_errors(root, &mut errors);
    for span in errors {
        diagnostics.push(Diagnostic::error(codes::UNSUPPORTED, span, "syntax error"));
    }
    if kernels.is_empty() && !wave_diag::has_errors(&diagnostics) {
        diagnostics.push(Diagnostic::error(
            codes::NO_KERNEL,
            0..0,
            "no kernel in this file: decorate a function with `@wave.kernel`",
        ));
    }
    diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    // A helper inlined twice reports its mistakes once.
    diagnostics.dedup_by(|a, b| a.span == b.span && a.code == b.code && a.message == b.message);
    (kernels, diagnostics)
}

/// tree-sitter-python reads annotations as types, where the slice of `f32[:]` is a syntax
/// error; Python reads them as expressions. The parser gets `f32[0]` in their place (same
/// length, so every offset holds), and the annotation is read from the original text.
fn mask_buffer_annotations(text: &str) -> String {
    let mut out = text.to_owned();
    let mut from = 0;
    while let Some(i) = text[from..].find("[:]") {
        let at = from + i;
        let before = text[..at].trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let name = &text[before.len()..at];
        if Scalar::from_name(name).is_some() {
            out.replace_range(at..at + 3, "[0]");
        }
        from = at + 3;
    }
    out
}

fn syntax_errors(node: Node<'_>, out: &mut Vec<Span>) {
    if node.is_error() || node.is_missing() {
        out.push(node.byte_range());
        return;
    }
    let mut c = node.walk();
    for child in node.children(&mut c) {
        syntax_errors(child, out);
    }
}

/// A name WAVE assembly can write: `[A-Za-z_][A-Za-z0-9_]*`, and not one of the structured
/// control-flow words, which a line starts with.
fn assembly_name(name: &str) -> bool {
    let mut chars = name.chars();
    let control = ["if", "else", "endif", "loop", "break", "continue", "endloop"];
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !control.contains(&name.to_ascii_lowercase().as_str())
}

/// `@wave.kernel(workgroup=(64, 1, 1))` or `@wave.kernel(workgroup=64)`.
fn workgroup_size(text: &str, item: Node<'_>) -> Option<[u32; 3]> {
    // The decorators' text only (not the body), without comments.
    let mut c = item.walk();
    let deco: String = item
        .named_children(&mut c)
        .filter(|d| d.kind() == "decorator")
        .map(|d| {
            let t = &text[d.byte_range()];
            t.lines().map(|l| l.split('#').next().unwrap_or("")).collect::<Vec<_>>().join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let at = deco.find("workgroup=")? + "workgroup=".len();
    let rest = &deco[at..];
    let nums: Vec<u32> = rest
        .trim_start_matches('(')
        .split([')', '\n'])
        .next()?
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    match nums.as_slice() {
        [x] => Some([*x, 1, 1]),
        [x, y] => Some([*x, *y, 1]),
        [x, y, z, ..] => Some([*x, *y, *z]),
        [] => None,
    }
}

struct Builder<'t, 'h> {
    text: &'t str,
    vars: Vec<Var>,
    names: HashMap<String, VarId>,
    diagnostics: Vec<Diagnostic>,
    loops: usize,
    /// The module's other functions, by name: helpers inlined where they are called.
    helpers: &'h HashMap<String, Node<'t>>,
    /// The helpers being inlined, outermost first (a repeat is recursion).
    inlining: Vec<String>,
    /// Statements an expression needs before it (an inlined helper's body), taken by the
    /// statement that contains the expression.
    prelude: Vec<Stmt>,
}

/// A failure already reported as a diagnostic.
struct Reported;

type R<T> = Result<T, Reported>;

fn scalar(ty: Ty) -> Option<Scalar> {
    match ty {
        Ty::Scalar(s) => Some(s),
        _ => None,
    }
}

impl<'t> Builder<'t, '_> {
    fn src(&self, n: Node<'_>) -> &'t str {
        &self.text[n.byte_range()]
    }

    fn error(&mut self, code: &'static str, span: Span, message: impl Into<String>) -> Reported {
        self.diagnostics.push(Diagnostic::error(code, span, message));
        Reported
    }

    fn kernel(&mut self, def: Node<'_>, workgroup_size: Option<[u32; 3]>) -> Option<Kernel> {
        let name_node = def.child_by_field_name("name")?;
        let name = self.src(name_node).to_owned();
        if !assembly_name(&name) {
            let _ = self.error(
                codes::UNSUPPORTED,
                name_node.byte_range(),
                format!("kernel name `{name}` cannot be written in WAVE assembly (ASCII letters, digits and `_`, and not a control-flow word like `loop`); rename it"),
            );
        }
        if let Some(params) = def.child_by_field_name("parameters") {
            let mut c = params.walk();
            for p in params.named_children(&mut c) {
                let _ = self.param(p);
            }
        }
        // Parameters are bound by name when the kernel is dispatched: the names must be
        // ones WAVE assembly can write.
        for v in self.vars.iter().filter(|v| v.param) {
            if !assembly_name(&v.name) || wave_asm::looks_reserved(&v.name) {
                self.diagnostics.push(Diagnostic::error(
                    codes::UNSUPPORTED,
                    v.span.clone(),
                    format!(
                        "parameter name `{}` cannot name a .wbin parameter: WAVE assembly would read it as a register, predicate, special register or control-flow word, or it is not ASCII; rename it",
                        v.name
                    ),
                ));
            }
        }
        let body = def.child_by_field_name("body")?;
        let body = self.block(body);
        Some(Kernel {
            name,
            vars: std::mem::take(&mut self.vars),
            body,
            span: def.byte_range(),
            workgroup_size,
        })
    }

    fn param(&mut self, p: Node<'_>) -> R<()> {
        let (name_node, ty_node) = match p.kind() {
            "typed_parameter" => {
                let mut c = p.walk();
                let name = p.named_children(&mut c).find(|n| n.kind() == "identifier");
                (name, p.child_by_field_name("type"))
            }
            "identifier" => (Some(p), None),
            "typed_default_parameter" => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    p.byte_range(),
                    "kernel parameters have no default values",
                ));
            }
            _ => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    p.byte_range(),
                    "kernel parameters are plain names with a type",
                ));
            }
        };
        let Some(name_node) = name_node else { return Err(Reported) };
        let name = self.src(name_node).to_owned();
        if let Some(first) = self.names.get(&name) {
            let first = self.vars[first.0 as usize].span.clone();
            self.diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED,
                    name_node.byte_range(),
                    format!("parameter `{name}` is named twice: parameters need distinct names"),
                )
                .with_label(first, "first named here"),
            );
            return Err(Reported);
        }
        let Some(ty_node) = ty_node else {
            return Err(self.error(
                codes::BAD_ANNOTATION,
                p.byte_range(),
                format!("parameter `{name}` needs a type: `{name}: f32[:]` for a buffer, `{name}: u32` for a scalar"),
            ));
        };
        let ty = self.annotation(ty_node)?;
        let id = VarId(self.vars.len() as u32);
        self.vars.push(Var { name: name.clone(), ty, span: name_node.byte_range(), param: true });
        self.names.insert(name, id);
        Ok(())
    }

    /// `f32[:]`, `wave.f32[:]`, `f32`, `wave.u32`.
    fn annotation(&mut self, n: Node<'_>) -> R<Ty> {
        let text: String = self.src(n).chars().filter(|c| !c.is_whitespace()).collect();
        let text = text.strip_prefix("wave.").unwrap_or(&text);
        let (base, buffer) = match text.strip_suffix("[:]") {
            Some(b) => (b, true),
            None => (text, false),
        };
        match (Scalar::from_name(base), buffer) {
            (Some(Scalar::Bool), true) => {
                Err(self.error(codes::BAD_ANNOTATION, n.byte_range(), "buffers of `bool` are not supported: use `u32[:]`"))
            }
            (Some(s), true) => Ok(Ty::Buffer(s)),
            (Some(s), false) => Ok(Ty::Scalar(s)),
            (None, _) => Err(self.error(
                codes::BAD_ANNOTATION,
                n.byte_range(),
                format!("`{}` is not a kernel type: use f32, f16, f64, i32, u32, bool, or a buffer like `f32[:]`", self.src(n)),
            )),
        }
    }

    fn block(&mut self, n: Node<'_>) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut c = n.walk();
        for s in n.named_children(&mut c) {
            let outer = std::mem::take(&mut self.prelude);
            let result = self.stmt(s);
            // What the statement's expressions needed first, then the statement.
            out.extend(std::mem::replace(&mut self.prelude, outer));
            if let Ok(Some(stmt)) = result {
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
                    "assignment" => return self.assignment(e),
                    "augmented_assignment" => return self.augmented(e).map(Some),
                    "string" => return Ok(None), // a docstring
                    "call"
                        if e.child_by_field_name("function")
                            .is_some_and(|f| self.helpers.contains_key(self.src(f))) =>
                    {
                        // A helper called for its effect: its body is the prelude.
                        self.inline(e, None, true)?;
                        return Ok(None);
                    }
                    _ => {
                        let e = self.expr(e, None)?;
                        if !matches!(e.kind, ExprKind::Call(..)) {
                            return Err(self.error(
                                codes::UNSUPPORTED,
                                span,
                                "this expression does nothing: only intrinsic calls stand alone",
                            ));
                        }
                        StmtKind::Expr(e)
                    }
                }
            }
            "if_statement" => self.if_statement(n)?,
            "while_statement" => {
                let before = self.prelude.len();
                let cond = self.condition(n.child_by_field_name("condition"))?;
                if self.prelude.len() != before {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        "a helper call in a `while` condition runs once, not at every test: assign its result inside the loop",
                    ));
                }
                self.loops += 1;
                let body = n.child_by_field_name("body").map(|b| self.block(b)).unwrap_or_default();
                self.loops -= 1;
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
            "break_statement" | "continue_statement" => {
                if self.loops == 0 {
                    return Err(self.error(
                        codes::OUTSIDE_LOOP,
                        span,
                        format!("`{}` outside a loop", self.src(n)),
                    ));
                }
                if n.kind() == "break_statement" { StmtKind::Break } else { StmtKind::Continue }
            }
            "return_statement" if !self.inlining.is_empty() => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    "a helper returns at the end of its body only",
                ));
            }
            "return_statement" => {
                if n.named_child(0).is_some() {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        "a kernel returns no value: write results to a buffer",
                    ));
                }
                StmtKind::Return
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

    fn condition(&mut self, n: Option<Node<'_>>) -> R<Expr> {
        let n = n.ok_or(Reported)?;
        let e = self.expr(n, Some(Scalar::Bool))?;
        if e.ty != Ty::Scalar(Scalar::Bool) {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                n.byte_range(),
                format!("a condition is a `bool`, not `{}` (compare it: `x != 0`)", e.ty),
            ));
        }
        Ok(e)
    }

    fn if_statement(&mut self, n: Node<'_>) -> R<StmtKind> {
        let cond = self.condition(n.child_by_field_name("condition"))?;
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
                    let outer = std::mem::take(&mut self.prelude);
                    let c = self.condition(clause.child_by_field_name("condition"));
                    let mut first = std::mem::replace(&mut self.prelude, outer);
                    let c = c?;
                    let body = clause
                        .child_by_field_name("consequence")
                        .map(|b| self.block(b))
                        .unwrap_or_default();
                    first.push(Stmt {
                        kind: StmtKind::If(c, body, otherwise),
                        span: clause.byte_range(),
                    });
                    otherwise = first;
                }
            }
        }
        Ok(StmtKind::If(cond, then, otherwise))
    }

    fn for_statement(&mut self, n: Node<'_>) -> R<StmtKind> {
        let span = n.byte_range();
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
        let ints = |b: &mut Self, n: Node<'_>, want: Option<Scalar>| -> R<Expr> {
            let e = b.expr(n, want.or(Some(Scalar::I32)))?;
            match scalar(e.ty) {
                Some(s) if s.is_int() => Ok(e),
                _ => Err(b.error(
                    codes::TYPE_MISMATCH,
                    n.byte_range(),
                    format!("`range` takes integers, not `{}`", e.ty),
                )),
            }
        };
        let (start, end, step) = match args.as_slice() {
            [end] => {
                let end = ints(self, *end, None)?;
                let s = scalar(end.ty);
                (self.int_const(0, s.unwrap_or(Scalar::I32), span.clone()), end, 1)
            }
            [start, end] | [start, end, _] => {
                // Type the non-literal bound first, so a literal takes its type.
                let (start, end) = if start.kind() == "integer" {
                    let end = ints(self, *end, None)?;
                    (ints(self, *start, scalar(end.ty))?, end)
                } else {
                    let start = ints(self, *start, None)?;
                    let end = ints(self, *end, scalar(start.ty))?;
                    (start, end)
                };
                if start.ty != end.ty {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        right.byte_range(),
                        format!("`range` bounds are `{}` and `{}`", start.ty, end.ty),
                    ));
                }
                let step = match args.get(2) {
                    Some(s) => match self.src(*s).trim().replace('_', "").parse::<i64>() {
                        Ok(0) | Err(_) => {
                            return Err(self.error(
                                codes::UNSUPPORTED,
                                s.byte_range(),
                                "the step of `range` is a non-zero integer constant",
                            ));
                        }
                        Ok(v) => v,
                    },
                    None => 1,
                };
                (start, end, step)
            }
            _ => {
                return Err(self.error(
                    codes::BAD_CALL,
                    right.byte_range(),
                    "`range` takes 1 to 3 arguments",
                ));
            }
        };
        let var = self.declare(left, start.ty)?;
        self.loops += 1;
        let body = n.child_by_field_name("body").map(|b| self.block(b)).unwrap_or_default();
        self.loops -= 1;
        Ok(StmtKind::For { var, start, end, step, body })
    }

    fn int_const(&self, v: i64, s: Scalar, span: Span) -> Expr {
        Expr { kind: ExprKind::Int(v), ty: Ty::Scalar(s), span }
    }

    /// The variable `name` as the target of an assignment of type `ty`: declared by its first
    /// assignment, and of that type afterwards.
    fn declare(&mut self, name: Node<'_>, ty: Ty) -> R<VarId> {
        let text = self.src(name).to_owned();
        if let Some(&id) = self.names.get(&text) {
            let var = &self.vars[id.0 as usize];
            if matches!(var.ty, Ty::Buffer(_) | Ty::Local(..) | Ty::Private(..)) {
                return Err(self.error(
                    codes::BAD_ASSIGNMENT,
                    name.byte_range(),
                    format!("`{text}` is a buffer: assign to its elements, `{text}[i] = ...`"),
                ));
            }
            if var.ty != ty {
                let (vty, span) = (var.ty, var.span.clone());
                let mut d = Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    name.byte_range(),
                    format!("`{text}` is `{vty}`, and this assigns `{ty}`"),
                );
                d.labels.push((span, format!("`{text}` became `{vty}` here")));
                d.notes.push(format!("convert explicitly: `{text} = {vty}(...)`"));
                self.diagnostics.push(d);
                return Err(Reported);
            }
            return Ok(id);
        }
        let id = VarId(self.vars.len() as u32);
        let shown = match self.inlining.last() {
            Some(h) => self.unique(format!("{h}.{text}")),
            None => text.clone(),
        };
        self.vars.push(Var { name: shown, ty, span: name.byte_range(), param: false });
        self.names.insert(text, id);
        Ok(id)
    }

    fn assignment(&mut self, n: Node<'_>) -> R<Option<Stmt>> {
        let span = n.byte_range();
        let left = n.child_by_field_name("left").ok_or(Reported)?;
        let Some(right) = n.child_by_field_name("right") else {
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                "a declaration without a value is not supported: `x: f32 = 0.0`",
            ));
        };
        let annotated = match n.child_by_field_name("type") {
            Some(t) => Some(self.annotation(t)?),
            None => None,
        };
        // `tile = wave.local_array(f32, 256)` declares Local Memory shared by the workgroup;
        // `acc = wave.private_array(f32, 4)` an array of each thread's own.
        let array = match right.child_by_field_name("function").map(|f| self.src(f)) {
            _ if right.kind() != "call" => None,
            Some("wave.local_array" | "local_array") => Some("local"),
            Some("wave.private_array" | "private_array") => Some("private"),
            _ => None,
        };
        if let Some(kind) = array {
            let ty = self.array(right, kind)?;
            if left.kind() != "identifier" {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    left.byte_range(),
                    format!("a {kind} array is assigned to a name"),
                ));
            }
            if self.loops > 0 || self.names.contains_key(self.src(left)) {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    format!("a {kind} array is declared once, outside loops"),
                ));
            }
            self.declare(left, ty)?;
            return Ok(None);
        }
        match left.kind() {
            "identifier" => {
                let known = self.names.get(self.src(left)).map(|id| self.vars[id.0 as usize].ty);
                let want = annotated.or(known).and_then(scalar);
                let value = self.value(right, want)?;
                if let Some(t) = annotated
                    && t != value.ty
                {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        right.byte_range(),
                        format!("the annotation says `{t}`, the value is `{}`", value.ty),
                    ));
                }
                let var = self.declare(left, value.ty)?;
                Ok(Some(Stmt { kind: StmtKind::Assign(var, value), span }))
            }
            "subscript" => {
                let (buffer, index, elem) = self.element(left)?;
                let value = self.expr(right, Some(elem))?;
                if value.ty != Ty::Scalar(elem) {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        right.byte_range(),
                        format!(
                            "`{}` holds `{}`, the value is `{}`",
                            self.src(left.child_by_field_name("value").unwrap_or(left)),
                            elem.name(),
                            value.ty
                        ),
                    ));
                }
                Ok(Some(Stmt { kind: StmtKind::Store(buffer, index, value), span }))
            }
            _ => Err(self.error(
                codes::UNSUPPORTED,
                left.byte_range(),
                "assign to a name or to a buffer element",
            )),
        }
    }

    /// The value of an assignment.
    fn value(&mut self, n: Node<'_>, want: Option<Scalar>) -> R<Expr> {
        self.expr(n, want)
    }

    /// `wave.local_array(f32, 256)` or `wave.private_array(f32, 4)` (`kind` is `local` or
    /// `private`): the element type and a constant length.
    fn array(&mut self, call: Node<'_>, kind: &str) -> R<Ty> {
        let args = self.args(call)?;
        let [ty, len] = args.as_slice() else {
            let example = if kind == "local" { "256" } else { "4" };
            return Err(self.error(
                codes::BAD_CALL,
                call.byte_range(),
                format!(
                    "`{kind}_array` takes an element type and a constant length: `{kind}_array(f32, {example})`"
                ),
            ));
        };
        let name = self.src(*ty).trim_start_matches("wave.");
        let elem = match Scalar::from_name(name) {
            Some(s) if s != Scalar::Bool => s,
            _ => {
                return Err(self.error(
                    codes::BAD_ANNOTATION,
                    ty.byte_range(),
                    format!(
                        "`{}` is not an element type: f32, f16, f64, i32 or u32",
                        self.src(*ty)
                    ),
                ));
            }
        };
        match self.src(*len).replace('_', "").parse::<u32>() {
            Ok(n) if n > 0 && kind == "local" => Ok(Ty::Local(elem, n)),
            Ok(n) if n > 0 && n <= MAX_PRIVATE => Ok(Ty::Private(elem, n)),
            Ok(n) if n > 0 => Err(self.error(
                codes::UNSUPPORTED,
                len.byte_range(),
                format!(
                    "a private array holds at most {MAX_PRIVATE} elements (each thread has its own: a larger one belongs in a `local_array`)"
                ),
            )),
            _ => Err(self.error(
                codes::UNSUPPORTED,
                len.byte_range(),
                format!("the length of a {kind} array is a positive integer constant"),
            )),
        }
    }

    fn augmented(&mut self, n: Node<'_>) -> R<Stmt> {
        let span = n.byte_range();
        let left = n.child_by_field_name("left").ok_or(Reported)?;
        let right = n.child_by_field_name("right").ok_or(Reported)?;
        let op_text = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
        let op_text = op_text.trim_end_matches('=');
        let current = self.expr(left, None)?;
        let value = self.expr(right, scalar(current.ty))?;
        let combined = self.binary(op_text, current, value, span.clone())?;
        match left.kind() {
            "identifier" => {
                let var = self.declare(left, combined.ty)?;
                Ok(Stmt { kind: StmtKind::Assign(var, combined), span })
            }
            _ => {
                let (buffer, index, _) = self.element(left)?;
                Ok(Stmt { kind: StmtKind::Store(buffer, index, combined), span })
            }
        }
    }

    /// `buffer[index]`: the buffer, the index and the element type.
    fn element(&mut self, n: Node<'_>) -> R<(Expr, Expr, Scalar)> {
        let base = n.child_by_field_name("value").ok_or(Reported)?;
        let index = n.child_by_field_name("subscript").ok_or(Reported)?;
        let buffer = self.expr(base, None)?;
        let elem = match buffer.ty {
            Ty::Buffer(s) | Ty::Local(s, _) | Ty::Private(s, _) => s,
            other => {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    base.byte_range(),
                    format!("`{}` is `{other}`, not a buffer", self.src(base)),
                ));
            }
        };
        let idx = self.expr(index, Some(Scalar::U32))?;
        if !scalar(idx.ty).is_some_and(Scalar::is_int) {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                index.byte_range(),
                format!("an index is `i32` or `u32`, not `{}`", idx.ty),
            ));
        }
        Ok((buffer, idx, elem))
    }

    fn args<'n>(&mut self, call: Node<'n>) -> R<Vec<Node<'n>>> {
        let Some(list) = call.child_by_field_name("arguments") else { return Ok(Vec::new()) };
        let mut c = list.walk();
        let args: Vec<Node<'n>> =
            list.named_children(&mut c).filter(|a| a.kind() != "comment").collect();
        if let Some(k) = args.iter().find(|a| a.kind() == "keyword_argument") {
            return Err(self.error(
                codes::BAD_CALL,
                k.byte_range(),
                "intrinsics take positional arguments",
            ));
        }
        Ok(args)
    }

    fn binary(&mut self, op: &str, a: Expr, b: Expr, span: Span) -> R<Expr> {
        let binop = match op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" | "//" => BinOp::Div,
            "%" => BinOp::Rem,
            "&" => BinOp::And,
            "|" => BinOp::Or,
            "^" => BinOp::Xor,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            "and" => BinOp::LogicAnd,
            "or" => BinOp::LogicOr,
            other => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    format!("the operator `{other}` is not supported"),
                ));
            }
        };
        if a.ty != b.ty {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                span,
                format!(
                    "`{op}` between `{}` and `{}`: convert one side, like `f32(i)`",
                    a.ty, b.ty
                ),
            ));
        }
        let Some(s) = scalar(a.ty) else {
            return Err(self.error(codes::TYPE_MISMATCH, span, format!("`{op}` on `{}`", a.ty)));
        };
        let ok = match binop {
            BinOp::LogicAnd | BinOp::LogicOr => s == Scalar::Bool,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Rem => s != Scalar::Bool,
            BinOp::Div if op == "/" => s.is_float(),
            BinOp::Div => s.is_int(),
            BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr => s.is_int(),
            BinOp::Eq | BinOp::Ne => true,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => s != Scalar::Bool,
        };
        if !ok {
            let hint = match (binop, op) {
                (BinOp::Div, "/") => ": `/` divides floats; integers use `//`",
                (BinOp::Div, _) => ": `//` divides integers; floats use `/`",
                _ => "",
            };
            return Err(self.error(
                codes::TYPE_MISMATCH,
                span,
                format!("`{op}` does not apply to `{}`{hint}", a.ty),
            ));
        }
        let ty = if binop.is_comparison() { Ty::Scalar(Scalar::Bool) } else { a.ty };
        Ok(Expr { kind: ExprKind::Binary(binop, Box::new(a), Box::new(b)), ty, span })
    }

    /// Types both operands, the literal one (if any) in the other's type.
    fn operands(&mut self, l: Node<'_>, r: Node<'_>, want: Option<Scalar>) -> R<(Expr, Expr)> {
        let literal = |n: Node<'_>| {
            matches!(n.kind(), "integer" | "float")
                || (n.kind() == "unary_operator"
                    && n.child_by_field_name("argument")
                        .is_some_and(|a| matches!(a.kind(), "integer" | "float")))
        };
        if literal(l) && !literal(r) {
            let b = self.expr(r, want)?;
            let a = self.expr(l, scalar(b.ty))?;
            Ok((a, b))
        } else {
            let a = self.expr(l, want)?;
            let b = self.expr(r, scalar(a.ty))?;
            Ok((a, b))
        }
    }

    fn expr(&mut self, n: Node<'_>, want: Option<Scalar>) -> R<Expr> {
        let span = n.byte_range();
        let e = |kind, ty| Ok(Expr { kind, ty, span: span.clone() });
        match n.kind() {
            "parenthesized_expression" => self.expr(n.named_child(0).ok_or(Reported)?, want),
            "integer" => {
                let t = self.src(n).replace('_', "").to_ascii_lowercase();
                let v = match t.strip_prefix("0x") {
                    Some(h) => i64::from_str_radix(h, 16),
                    None => t.parse::<i64>(),
                };
                let Ok(v) = v else {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        "this integer does not fit in 64 bits",
                    ));
                };
                match want {
                    Some(s) if s.is_float() => e(ExprKind::Float(v as f64), Ty::Scalar(s)),
                    Some(s) if s.is_int() => e(ExprKind::Int(v), Ty::Scalar(s)),
                    _ => e(ExprKind::Int(v), Ty::Scalar(Scalar::I32)),
                }
            }
            "float" => {
                let v: f64 =
                    self.src(n).replace('_', "").parse().map_err(|_| {
                        self.error(codes::TYPE_MISMATCH, span.clone(), "not a float")
                    })?;
                let s = want.filter(|s| s.is_float()).unwrap_or(Scalar::F32);
                e(ExprKind::Float(v), Ty::Scalar(s))
            }
            "true" => e(ExprKind::Bool(true), Ty::Scalar(Scalar::Bool)),
            "false" => e(ExprKind::Bool(false), Ty::Scalar(Scalar::Bool)),
            "identifier" => {
                let name = self.src(n);
                match self.names.get(name) {
                    Some(&id) => e(ExprKind::Var(id), self.vars[id.0 as usize].ty),
                    None => {
                        Err(self.error(codes::UNKNOWN_NAME, span, format!("unknown name `{name}`")))
                    }
                }
            }
            "binary_operator" | "boolean_operator" => {
                let l = n.child_by_field_name("left").ok_or(Reported)?;
                let r = n.child_by_field_name("right").ok_or(Reported)?;
                let op = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                let (a, b) = self.operands(
                    l,
                    r,
                    if op == "and" || op == "or" { Some(Scalar::Bool) } else { want },
                )?;
                self.binary(op, a, b, span)
            }
            "comparison_operator" => {
                let mut c = n.walk();
                let parts: Vec<Node<'_>> = n.named_children(&mut c).collect();
                let mut oc = n.walk();
                let ops: Vec<String> = n
                    .children_by_field_name("operators", &mut oc)
                    .map(|o| self.src(o).to_owned())
                    .collect();
                if parts.len() != 2 || ops.len() != 1 {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        "chained comparisons are not supported: `a < b and b < c`",
                    ));
                }
                let (a, b) = self.operands(parts[0], parts[1], None)?;
                self.binary(&ops[0], a, b, span)
            }
            "not_operator" => {
                let a = self
                    .expr(n.child_by_field_name("argument").ok_or(Reported)?, Some(Scalar::Bool))?;
                if a.ty != Ty::Scalar(Scalar::Bool) {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        format!("`not` takes a `bool`, not `{}`", a.ty),
                    ));
                }
                e(ExprKind::Unary(UnOp::Not, Box::new(a)), Ty::Scalar(Scalar::Bool))
            }
            "unary_operator" => {
                let op = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                let arg = n.child_by_field_name("argument").ok_or(Reported)?;
                if op == "+" {
                    return self.expr(arg, want);
                }
                // `-5` is a literal of the wanted type.
                if op == "-" && matches!(arg.kind(), "integer" | "float") {
                    let mut lit = self.expr(arg, want)?;
                    lit.kind = match lit.kind {
                        ExprKind::Int(v) => ExprKind::Int(-v),
                        ExprKind::Float(v) => ExprKind::Float(-v),
                        k => k,
                    };
                    lit.span = span;
                    return Ok(lit);
                }
                let a = self.expr(arg, want)?;
                let s = scalar(a.ty);
                let (unop, ok) = match op {
                    "-" => (UnOp::Neg, s.is_some_and(|s| s != Scalar::Bool && s != Scalar::U32)),
                    _ => (UnOp::BitNot, s.is_some_and(Scalar::is_int)),
                };
                if !ok {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        format!("`{op}` does not apply to `{}`", a.ty),
                    ));
                }
                let ty = a.ty;
                e(ExprKind::Unary(unop, Box::new(a)), ty)
            }
            "conditional_expression" => {
                let mut c = n.walk();
                let parts: Vec<Node<'_>> = n.named_children(&mut c).collect();
                let [a, cond, b] = parts.as_slice() else { return Err(Reported) };
                let cond = self.condition(Some(*cond))?;
                let (a, b) = self.operands(*a, *b, want)?;
                if a.ty != b.ty {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        format!("the two values are `{}` and `{}`", a.ty, b.ty),
                    ));
                }
                let ty = a.ty;
                e(ExprKind::Select(Box::new(cond), Box::new(a), Box::new(b)), ty)
            }
            "subscript" => {
                let (buffer, index, elem) = self.element(n)?;
                e(ExprKind::Load(Box::new(buffer), Box::new(index)), Ty::Scalar(elem))
            }
            "call" => self.call(n, want),
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

    /// Inlines the helper called by `call`. Its arguments are evaluated here; each scalar
    /// parameter becomes a variable (`helper.name`) assigned in the prelude, and a buffer
    /// parameter names the caller's buffer. Its body goes to the prelude, and its value is the
    /// expression of its final `return`. With `effect`, it is called as a statement.
    fn inline(&mut self, call: Node<'_>, want: Option<Scalar>, effect: bool) -> R<Expr> {
        let span = call.byte_range();
        let f = call.child_by_field_name("function").ok_or(Reported)?;
        let name = self.src(f).to_owned();
        let def = *self.helpers.get(&name).ok_or(Reported)?;
        if self.inlining.contains(&name) {
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!(
                    "`{name}` calls itself (through {}): kernels cannot recurse",
                    self.inlining.join(" → ")
                ),
            ));
        }
        let mut params: Vec<(String, Ty)> = Vec::new();
        if let Some(list) = def.child_by_field_name("parameters") {
            let mut c = list.walk();
            for p in list.named_children(&mut c) {
                let (pname, ty) = match p.kind() {
                    "typed_parameter" => {
                        let mut c2 = p.walk();
                        let pname = p.named_children(&mut c2).find(|n| n.kind() == "identifier");
                        (pname, p.child_by_field_name("type"))
                    }
                    "identifier" => (Some(p), None),
                    _ => {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            p.byte_range(),
                            "helper parameters are plain names with a type",
                        ));
                    }
                };
                let pname = pname.ok_or(Reported)?;
                let Some(ty) = ty else {
                    return Err(self.error(
                        codes::BAD_ANNOTATION,
                        p.byte_range(),
                        format!("parameter `{}` of `{name}` needs a type", self.src(pname)),
                    ));
                };
                let ty = self.annotation(ty)?;
                params.push((self.src(pname).to_owned(), ty));
            }
        }
        let args = self.args(call)?;
        if args.len() != params.len() {
            return Err(self.error(
                codes::BAD_CALL,
                span,
                format!("`{name}` takes {} arguments, not {}", params.len(), args.len()),
            ));
        }
        let mut bound = Vec::new();
        for ((pname, ty), a) in params.iter().zip(&args) {
            let e = self.expr(*a, scalar(*ty))?;
            let fits = e.ty == *ty
                || matches!((e.ty, ty), (Ty::Local(s, _) | Ty::Private(s, _), Ty::Buffer(t)) if s == *t);
            if !fits {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    a.byte_range(),
                    format!("`{pname}` of `{name}` is `{ty}`, the argument is `{}`", e.ty),
                ));
            }
            bound.push((pname.clone(), e));
        }
        let outer_names = std::mem::take(&mut self.names);
        let outer_loops = std::mem::replace(&mut self.loops, 0);
        self.inlining.push(name.clone());
        let result = self.inline_body(def, &name, bound, want, &span);
        self.inlining.pop();
        self.loops = outer_loops;
        self.names = outer_names;
        let value = result?;
        match (value, effect) {
            (Some(v), _) => Ok(v),
            (None, true) => Ok(Expr { kind: ExprKind::Bool(true), ty: Ty::Unit, span }),
            (None, false) => {
                Err(self.error(codes::TYPE_MISMATCH, span, format!("`{name}` returns no value")))
            }
        }
    }

    /// `name`, or `name#2`, `name#3`, ... when a variable already has it (a helper inlined
    /// more than once).
    fn unique(&self, name: String) -> String {
        let taken = |n: &str| self.vars.iter().any(|v| v.name == n);
        if !taken(&name) {
            return name;
        }
        (2..).map(|i| format!("{name}#{i}")).find(|n| !taken(n)).unwrap_or(name)
    }

    fn inline_body(
        &mut self,
        def: Node<'_>,
        name: &str,
        bound: Vec<(String, Expr)>,
        want: Option<Scalar>,
        span: &Span,
    ) -> R<Option<Expr>> {
        for (pname, e) in bound {
            match (&e.kind, e.ty) {
                (ExprKind::Var(v), Ty::Buffer(_) | Ty::Local(..) | Ty::Private(..)) => {
                    self.names.insert(pname, *v);
                }
                _ => {
                    let id = VarId(self.vars.len() as u32);
                    let shown = self.unique(format!("{name}.{pname}"));
                    self.vars.push(Var { name: shown, ty: e.ty, span: span.clone(), param: false });
                    self.names.insert(pname, id);
                    self.prelude.push(Stmt { kind: StmtKind::Assign(id, e), span: span.clone() });
                }
            }
        }
        let body = def.child_by_field_name("body").ok_or(Reported)?;
        let mut c = body.walk();
        let stmts: Vec<Node<'_>> =
            body.named_children(&mut c).filter(|s| s.kind() != "comment").collect();
        let mut value = None;
        for (i, s) in stmts.iter().enumerate() {
            if s.kind() == "return_statement" {
                if i + 1 != stmts.len() {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        s.byte_range(),
                        "a helper returns at the end of its body only",
                    ));
                }
                if let Some(e) = s.named_child(0) {
                    value = Some(self.expr(e, want)?);
                }
                continue;
            }
            if let Some(stmt) = self.stmt(*s)? {
                self.prelude.push(stmt);
            }
        }
        Ok(value)
    }

    fn call(&mut self, n: Node<'_>, want: Option<Scalar>) -> R<Expr> {
        let span = n.byte_range();
        let f = n.child_by_field_name("function").ok_or(Reported)?;
        let full = self.src(f).to_owned();
        let name = full.strip_prefix("wave.").unwrap_or(&full).to_owned();
        let args = self.args(n)?;
        let count = |b: &mut Self, k: usize| -> R<()> {
            if args.len() == k {
                Ok(())
            } else {
                Err(b.error(
                    codes::BAD_CALL,
                    span.clone(),
                    format!(
                        "`{full}` takes {k} argument{}, not {}",
                        if k == 1 { "" } else { "s" },
                        args.len()
                    ),
                ))
            }
        };
        let u32t = Ty::Scalar(Scalar::U32);
        let special = |b: &mut Self, make: fn(u8) -> Special| -> R<Expr> {
            let axis = match args.first() {
                None => 0,
                Some(a) => match b.src(*a).trim() {
                    "0" => 0,
                    "1" => 1,
                    "2" => 2,
                    _ => {
                        return Err(b.error(
                            codes::BAD_CALL,
                            a.byte_range(),
                            "the axis is 0, 1 or 2",
                        ));
                    }
                },
            };
            if args.len() > 1 {
                return Err(b.error(
                    codes::BAD_CALL,
                    span.clone(),
                    format!("`{full}` takes an axis: 0, 1 or 2"),
                ));
            }
            Ok(Expr { kind: ExprKind::Special(make(axis)), ty: u32t, span: span.clone() })
        };
        // Thread identity.
        match name.as_str() {
            "thread_id" => return special(self, Special::ThreadId),
            "workgroup_id" => return special(self, Special::WorkgroupId),
            "workgroup_size" => return special(self, Special::WorkgroupSize),
            "grid_size" => return special(self, Special::GridSize),
            "global_id" => return special(self, Special::GlobalId),
            "lane_id" | "wave_id" | "wave_width" => {
                count(self, 0)?;
                let s = match name.as_str() {
                    "lane_id" => Special::LaneId,
                    "wave_id" => Special::WaveId,
                    _ => Special::WaveWidth,
                };
                return Ok(Expr { kind: ExprKind::Special(s), ty: u32t, span });
            }
            "barrier" | "fence" => {
                count(self, 0)?;
                let i = if name == "barrier" { Intrinsic::Barrier } else { Intrinsic::Fence };
                return Ok(Expr { kind: ExprKind::Call(i, Vec::new()), ty: Ty::Unit, span });
            }
            _ => {}
        }
        // Conversions: `f32(x)`, `int(x)` (i32), `float(x)` (f32).
        let conversion = match name.as_str() {
            "int" => Some(Scalar::I32),
            "float" => Some(Scalar::F32),
            other => Scalar::from_name(other),
        };
        if let Some(to) = conversion {
            count(self, 1)?;
            let a = self.expr(args[0], Some(to))?;
            if a.ty == Ty::Scalar(to) {
                return Ok(a);
            }
            if scalar(a.ty).is_none() {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("`{full}` converts a scalar, not `{}`", a.ty),
                ));
            }
            return Ok(Expr { kind: ExprKind::Cast(Box::new(a)), ty: Ty::Scalar(to), span });
        }
        if name == "local_array" || name == "private_array" {
            let example = if name == "local_array" {
                "tile = wave.local_array(f32, 256)"
            } else {
                "acc = wave.private_array(f32, 4)"
            };
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!("`{name}` declares a variable: `{example}`"),
            ));
        }
        // Atomics: `atomic_add(buffer, index, value)`.
        if let Some(op) = name.strip_prefix("atomic_") {
            let op = match op {
                "add" => AtomicOp::Add,
                "sub" => AtomicOp::Sub,
                "min" => AtomicOp::Min,
                "max" => AtomicOp::Max,
                "and" => AtomicOp::And,
                "or" => AtomicOp::Or,
                "xor" => AtomicOp::Xor,
                "exchange" => AtomicOp::Exchange,
                _ => {
                    return Err(self.error(
                        codes::UNKNOWN_NAME,
                        f.byte_range(),
                        format!("unknown atomic `{full}`"),
                    ));
                }
            };
            count(self, 3)?;
            let buffer = self.expr(args[0], None)?;
            let elem = match buffer.ty {
                Ty::Buffer(s) | Ty::Local(s, _) => s,
                Ty::Private(..) => {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        args[0].byte_range(),
                        "an atomic works on a buffer or a local array: a private array is the thread's own, so `a[i] += v` does the same",
                    ));
                }
                other => {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        args[0].byte_range(),
                        format!("an atomic works on a buffer, not `{other}`"),
                    ));
                }
            };
            let index = self.expr(args[1], Some(Scalar::U32))?;
            let value = self.expr(args[2], Some(elem))?;
            if value.ty != Ty::Scalar(elem) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[2].byte_range(),
                    format!("the buffer holds `{}`, the value is `{}`", elem.name(), value.ty),
                ));
            }
            return Ok(Expr {
                kind: ExprKind::Call(Intrinsic::Atomic(op), vec![buffer, index, value]),
                ty: Ty::Scalar(elem),
                span,
            });
        }
        // Wave operations.
        let wave = match name.as_str() {
            "shuffle" => Some((WaveOp::Shuffle, 2)),
            "shuffle_up" => Some((WaveOp::ShuffleUp, 2)),
            "shuffle_down" => Some((WaveOp::ShuffleDown, 2)),
            "shuffle_xor" => Some((WaveOp::ShuffleXor, 2)),
            "broadcast" => Some((WaveOp::Broadcast, 2)),
            "ballot" => Some((WaveOp::Ballot, 1)),
            "any" => Some((WaveOp::Any, 1)),
            "all" => Some((WaveOp::All, 1)),
            "reduce_add" => Some((WaveOp::ReduceAdd, 1)),
            "reduce_min" => Some((WaveOp::ReduceMin, 1)),
            "reduce_max" => Some((WaveOp::ReduceMax, 1)),
            "prefix_sum" => Some((WaveOp::PrefixSum, 1)),
            _ => None,
        };
        if let Some((op, k)) = wave {
            count(self, k)?;
            let cond = matches!(op, WaveOp::Ballot | WaveOp::Any | WaveOp::All);
            let a = self.expr(args[0], if cond { Some(Scalar::Bool) } else { want })?;
            let mut list = vec![a];
            if k == 2 {
                list.push(self.expr(args[1], Some(Scalar::U32))?);
                if list[1].ty != u32t && list[1].ty != Ty::Scalar(Scalar::I32) {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        args[1].byte_range(),
                        "a lane or distance is an integer",
                    ));
                }
            }
            let ty = match op {
                WaveOp::Ballot => u32t,
                WaveOp::Any | WaveOp::All => Ty::Scalar(Scalar::Bool),
                _ => list[0].ty,
            };
            if cond && list[0].ty != Ty::Scalar(Scalar::Bool) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[0].byte_range(),
                    format!("`{full}` takes a `bool`, not `{}`", list[0].ty),
                ));
            }
            let integer_only = matches!(
                op,
                WaveOp::ReduceAdd | WaveOp::ReduceMin | WaveOp::ReduceMax | WaveOp::PrefixSum
            );
            if integer_only && !scalar(list[0].ty).is_some_and(Scalar::is_int) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[0].byte_range(),
                    format!(
                        "`{full}` takes an integer (i32 or u32), not `{}`: the WAVE instruction reduces integers; for floats, combine lanes with `wave.shuffle_xor` or through Local Memory",
                        list[0].ty
                    ),
                ));
            }
            let signed_only = matches!(op, WaveOp::ReduceMin | WaveOp::ReduceMax);
            if signed_only && list[0].ty != Ty::Scalar(Scalar::I32) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[0].byte_range(),
                    format!(
                        "`{full}` takes an i32, not `{}`: the WAVE instruction compares signed; convert with `i32(...)`",
                        list[0].ty
                    ),
                ));
            }
            if !cond && scalar(list[0].ty).is_none_or(|s| s == Scalar::Bool) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[0].byte_range(),
                    format!("`{full}` takes a number, not `{}`", list[0].ty),
                ));
            }
            return Ok(Expr { kind: ExprKind::Call(Intrinsic::Wave(op), list), ty, span });
        }
        // Math.
        let math = match name.as_str() {
            "sqrt" => Some((Intrinsic::Math(MathFn::Sqrt), 1)),
            "rsqrt" => Some((Intrinsic::Math(MathFn::Rsqrt), 1)),
            "abs" => Some((Intrinsic::Math(MathFn::Abs), 1)),
            "floor" => Some((Intrinsic::Math(MathFn::Floor), 1)),
            "ceil" => Some((Intrinsic::Math(MathFn::Ceil), 1)),
            "sin" => Some((Intrinsic::Math(MathFn::Sin), 1)),
            "cos" => Some((Intrinsic::Math(MathFn::Cos), 1)),
            "exp2" => Some((Intrinsic::Math(MathFn::Exp2), 1)),
            "log2" => Some((Intrinsic::Math(MathFn::Log2), 1)),
            "fma" => Some((Intrinsic::Math(MathFn::Fma), 3)),
            "min" => Some((Intrinsic::Min, 2)),
            "max" => Some((Intrinsic::Max, 2)),
            _ => None,
        };
        if let Some((i, k)) = math {
            count(self, k)?;
            let mut list = Vec::new();
            // Type a non-literal argument first, so literals take its type.
            let first =
                args.iter().position(|a| !matches!(a.kind(), "integer" | "float")).unwrap_or(0);
            let lead = self.expr(args[first], want)?;
            for (j, a) in args.iter().enumerate() {
                if j == first {
                    list.push(lead.clone());
                } else {
                    list.push(self.expr(*a, scalar(lead.ty))?);
                }
            }
            if list.iter().any(|a| a.ty != lead.ty)
                || scalar(lead.ty).is_none_or(|s| s == Scalar::Bool)
            {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("`{full}` takes numbers of one type"),
                ));
            }
            let float_only = matches!(i, Intrinsic::Math(m) if !matches!(m, MathFn::Abs));
            if float_only && !scalar(lead.ty).is_some_and(Scalar::is_float) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("`{full}` takes floats, not `{}`: convert with `f32(...)`", lead.ty),
                ));
            }
            let ty = lead.ty;
            return Ok(Expr { kind: ExprKind::Call(i, list), ty, span });
        }
        if self.helpers.contains_key(full.as_str()) {
            return self.inline(n, want, false);
        }
        Err(self.error(
            codes::UNKNOWN_NAME,
            f.byte_range(),
            format!("`{full}` is not an intrinsic or a function of this file"),
        ))
    }
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

//! Types the surface syntax of any frontend ([`super::ast`]) into HIR: the one place that
//! knows the shared rules of `docs/kernels.md` ("The kernel language"): literal typing,
//! operator typing, the intrinsics, scoping, and helper inlining. A [`Dialect`] carries the
//! few ways the languages differ (block scopes, integer `/`, implicit conversions).

use std::collections::HashMap;

use wave_diag::{Diagnostic, Span};

use super::ast::{self, Conversions, Dialect, Func, Op, TypeKind, TypeRef, UnaryOp};
use super::{R, Reported, codes};
use crate::Language;
use crate::hir::{
    AtomicOp, BinOp, Expr, ExprKind, Intrinsic, Kernel, MathFn, Scalar, Special, Stmt, StmtKind,
    Ty, UnOp, Var, VarId, WaveOp,
};

/// The most elements of a private array: each thread has its own, in registers or in a
/// per-thread frame of Local Memory (16 KiB for the whole workgroup).
const MAX_PRIVATE: u32 = 64;

/// Types every kernel of `funcs` (the other functions are helpers, inlined where called),
/// adding its diagnostics to `diagnostics`, then sorts them by place. `text` is the source
/// the spans point into.
pub fn lower(
    text: &str,
    funcs: &[Func],
    dialect: Dialect,
    mut diagnostics: Vec<Diagnostic>,
) -> (Vec<Kernel>, Vec<Diagnostic>) {
    let helpers: HashMap<&str, &Func> =
        funcs.iter().filter(|f| !f.kernel).map(|f| (f.name.as_str(), f)).collect();
    let mut kernels: Vec<Kernel> = Vec::new();
    for f in funcs.iter().filter(|f| f.kernel) {
        diagnostics.extend(f.diagnostics.iter().cloned());
        let mut workgroup = f.workgroup.as_ref().map(|(size, _)| *size);
        if let Some((size, at)) = &f.workgroup
            && (size.contains(&0) || size.iter().map(|d| u64::from(*d)).product::<u64>() > 1 << 16)
        {
            diagnostics.push(Diagnostic::error(
                codes::BAD_CALL,
                at.clone(),
                format!(
                    "workgroup size {size:?}: each dimension is at least 1, and a workgroup holds at most 65,536 threads"
                ),
            ));
            workgroup = None;
        }
        let mut b = Builder {
            text,
            dialect,
            vars: Vec::new(),
            fixed: Vec::new(),
            names: HashMap::new(),
            scopes: Vec::new(),
            generics: HashMap::new(),
            diagnostics: Vec::new(),
            loops: 0,
            helpers: &helpers,
            inlining: Vec::new(),
            prelude: Vec::new(),
            temps: 0,
        };
        let k = b.kernel(f, workgroup);
        match kernels.iter().find(|other| other.name == k.name) {
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
        diagnostics.append(&mut b.diagnostics);
    }
    if kernels.is_empty() && !wave_diag::has_errors(&diagnostics) {
        let how = match dialect.language {
            Language::Python => "decorate a function with `@wave.kernel`",
            Language::Rust => "mark a function `#[wave::kernel]`",
            Language::Cpp => "mark a function `[[wave::kernel]]`",
            Language::TypeScript => {
                "wrap a function in `wave.kernel(...)` or decorate a static method `@kernel`"
            }
        };
        diagnostics.push(Diagnostic::error(
            codes::NO_KERNEL,
            0..0,
            format!("no kernel in this file: {how}"),
        ));
    }
    diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    // A helper inlined twice reports its mistakes once.
    diagnostics.dedup_by(|a, b| a.span == b.span && a.code == b.code && a.message == b.message);
    (kernels, diagnostics)
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

struct Builder<'t, 'h> {
    text: &'t str,
    dialect: Dialect,
    vars: Vec<Var>,
    /// Per variable: it cannot be assigned (a `const`, a Rust `let` without `mut`), or it is
    /// a read-only buffer (`&[f32]`, `const float*`).
    fixed: Vec<bool>,
    names: HashMap<String, VarId>,
    /// Per open block: the names it bound, with what they named before (block scopes).
    scopes: Vec<Vec<(String, Option<VarId>)>>,
    /// The types a function template's parameters stand for, while it is inlined.
    generics: HashMap<String, Ty>,
    diagnostics: Vec<Diagnostic>,
    loops: usize,
    /// The file's other functions, by name: helpers inlined where they are called.
    helpers: &'h HashMap<&'h str, &'h Func>,
    /// The helpers being inlined, outermost first (a repeat is recursion).
    inlining: Vec<String>,
    /// Statements an expression needs before it (an inlined helper's body), taken by the
    /// statement that contains the expression.
    prelude: Vec<Stmt>,
    /// Compiler-made variables so far (a `do`/`while`'s first-iteration flag).
    temps: u32,
}

fn scalar(ty: Ty) -> Option<Scalar> {
    match ty {
        Ty::Scalar(s) => Some(s),
        _ => None,
    }
}

/// C++'s rank of an arithmetic type in the usual conversions (`bool` is promoted first).
fn rank(s: Scalar) -> u8 {
    match s {
        Scalar::Bool | Scalar::I32 => 0,
        Scalar::U32 => 1,
        Scalar::F16 => 2,
        Scalar::F32 => 3,
        Scalar::F64 => 4,
    }
}

impl<'t> Builder<'t, '_> {
    fn src(&self, span: &Span) -> &'t str {
        self.text.get(span.clone()).unwrap_or("")
    }

    fn error(&mut self, code: &'static str, span: Span, message: impl Into<String>) -> Reported {
        self.diagnostics.push(Diagnostic::error(code, span, message));
        Reported
    }

    fn python(&self) -> bool {
        self.dialect.language == Language::Python
    }

    /// How this language writes a conversion of the expression at `span` to `to`.
    fn cast_hint(&self, to: Scalar, span: &Span) -> String {
        let what = self.src(span);
        let what = if what.len() > 24 || what.is_empty() { "x" } else { what };
        // `(float)a * b` and `a * b as f32` would convert `a` alone.
        let simple = what.chars().all(|c| c.is_alphanumeric() || "_.[]".contains(c))
            || (what.starts_with('(') && what.ends_with(')'));
        let prefix = matches!(self.dialect.language, Language::Rust | Language::Cpp);
        if prefix && !simple {
            self.dialect.cast(to, &format!("({what})"))
        } else {
            self.dialect.cast(to, what)
        }
    }

    fn kernel(&mut self, f: &Func, workgroup_size: Option<[u32; 3]>) -> Kernel {
        if !assembly_name(&f.name) {
            let _ = self.error(
                codes::UNSUPPORTED,
                f.name_span.clone(),
                format!("kernel name `{}` cannot be written in WAVE assembly (ASCII letters, digits and `_`, and not a control-flow word like `loop`); rename it", f.name),
            );
        }
        for p in &f.params {
            let _ = self.param(p);
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
        let body = self.block(&f.body);
        Kernel {
            name: f.name.clone(),
            vars: std::mem::take(&mut self.vars),
            body,
            span: f.span.clone(),
            workgroup_size,
        }
    }

    fn param(&mut self, p: &ast::Param) -> R<()> {
        if let Some(first) = self.names.get(&p.name) {
            let first = self.vars[first.0 as usize].span.clone();
            self.diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED,
                    p.span.clone(),
                    format!(
                        "parameter `{}` is named twice: parameters need distinct names",
                        p.name
                    ),
                )
                .with_label(first, "first named here"),
            );
            return Err(Reported);
        }
        let Some(ty_ref) = &p.ty else {
            let name = &p.name;
            let how = match self.dialect.language {
                Language::Rust => {
                    format!("`{name}: &[f32]` for a buffer, `{name}: u32` for a scalar")
                }
                Language::Cpp => {
                    format!("`const float* {name}` for a buffer, `uint32_t {name}` for a scalar")
                }
                Language::TypeScript => {
                    format!("`{name}: Float32Array` for a buffer, `{name}: u32` for a scalar")
                }
                Language::Python => {
                    format!("`{name}: f32[:]` for a buffer, `{name}: u32` for a scalar")
                }
            };
            return Err(self.error(
                codes::BAD_ANNOTATION,
                p.whole.clone(),
                format!("parameter `{name}` needs a type: {how}"),
            ));
        };
        let ty = self.ty(ty_ref)?;
        let readonly = matches!(ty_ref.kind, TypeKind::Buffer { writable: false, .. });
        let id = self.new_var(p.name.clone(), ty, p.span.clone(), true);
        self.fixed[id.0 as usize] = readonly;
        self.bind(p.name.clone(), id);
        Ok(())
    }

    /// The kernel type `t` names.
    fn ty(&mut self, t: &TypeRef) -> R<Ty> {
        match &t.kind {
            TypeKind::Scalar(s) => Ok(Ty::Scalar(*s)),
            TypeKind::Buffer { elem: Scalar::Bool, .. } => {
                let instead = match self.dialect.language {
                    Language::Python => "`u32[:]`",
                    Language::Rust => "`&[u32]`",
                    Language::Cpp => "`uint32_t*`",
                    Language::TypeScript => "`Uint32Array`",
                };
                Err(self.error(
                    codes::BAD_ANNOTATION,
                    t.span.clone(),
                    format!("buffers of `bool` are not supported: use {instead}"),
                ))
            }
            TypeKind::Buffer { elem, .. } => Ok(Ty::Buffer(*elem)),
            TypeKind::Generic(name) => match self.generics.get(name) {
                Some(ty) => Ok(*ty),
                None => Err(self.error(
                    codes::BAD_ANNOTATION,
                    t.span.clone(),
                    format!("the type parameter `{name}` is not known here: pass a value of it, or write `f<float>(...)`"),
                )),
            },
            TypeKind::Unknown(text) => {
                let kinds = match self.dialect.language {
                    Language::Python => "f32, f16, f64, i32, u32, bool, or a buffer like `f32[:]`",
                    Language::Rust => "f32, f16, f64, i32, u32, usize, bool, or a slice like `&[f32]`",
                    Language::Cpp => "float, half, double, int32_t, uint32_t, int, unsigned, bool, or a pointer like `const float*`",
                    Language::TypeScript => "f32, f16, i32, u32, number (f64), boolean, or a typed array like `Float32Array`",
                };
                Err(self.error(
                    codes::BAD_ANNOTATION,
                    t.span.clone(),
                    format!("`{text}` is not a kernel type: use {kinds}"),
                ))
            }
        }
    }

    fn new_var(&mut self, name: String, ty: Ty, span: Span, param: bool) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(Var { name, ty, span, param });
        self.fixed.push(false);
        id
    }

    /// Makes `name` refer to `id` until the innermost open block ends.
    fn bind(&mut self, name: String, id: VarId) {
        let before = self.names.insert(name.clone(), id);
        if self.dialect.block_scopes
            && let Some(scope) = self.scopes.last_mut()
        {
            scope.push((name, before));
        }
    }

    /// A block: its statements, each after the prelude its expressions needed, in a scope of
    /// its own where the language has block scopes.
    fn block(&mut self, stmts: &[ast::Stmt]) -> Vec<Stmt> {
        self.scopes.push(Vec::new());
        let mut out = Vec::new();
        for s in stmts {
            let outer = std::mem::take(&mut self.prelude);
            let result = self.stmt(s, &mut out);
            // What the statement's expressions needed first, then the statement.
            let before = std::mem::replace(&mut self.prelude, outer);
            if let Ok(Some(stmt)) = result {
                out.extend(before);
                out.push(stmt);
            } else {
                out.extend(before);
            }
        }
        self.close_scope();
        out
    }

    fn close_scope(&mut self) {
        for (name, before) in self.scopes.pop().unwrap_or_default().into_iter().rev() {
            match before {
                Some(id) => self.names.insert(name, id),
                None => self.names.remove(&name),
            };
        }
    }

    /// A statement. Most give one HIR statement; a declaration of an array gives none, and a
    /// `do`/`while` gives its flag's assignment first (into `out`).
    fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> R<Option<Stmt>> {
        let span = s.span.clone();
        let kind = match &s.kind {
            ast::StmtKind::Let { name, name_span, ty, value, mutable } => {
                return self.let_stmt(name, name_span, ty.as_ref(), value.as_ref(), *mutable, span);
            }
            ast::StmtKind::Assign { target, op, value, annotation } => {
                return self
                    .assign(target, op.as_ref(), value, annotation.as_ref(), span)
                    .map(Some);
            }
            ast::StmtKind::Array { name, name_span, local, elem, len } => {
                self.array(name, name_span, *local, elem, len, span)?;
                return Ok(None);
            }
            ast::StmtKind::Expr(e) => {
                if let ast::ExprKind::Call { name, .. } = &e.kind
                    && self.helpers.contains_key(name.as_str())
                    && !self.intrinsic(name)
                {
                    // A helper called for its effect: its body is the prelude.
                    self.inline(e, None, true)?;
                    return Ok(None);
                }
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
            ast::StmtKind::If(c, then, otherwise) => {
                let cond = self.condition(c)?;
                let then = self.block(then);
                let otherwise = self.block(otherwise);
                StmtKind::If(cond, then, otherwise)
            }
            ast::StmtKind::While(c, body) => {
                let cond = self.loop_condition(c, &span)?;
                self.loops += 1;
                let body = self.block(body);
                self.loops -= 1;
                StmtKind::While(cond, body)
            }
            ast::StmtKind::DoWhile(body, c) => return self.do_while(body, c, span, out),
            ast::StmtKind::For { var, var_span, ty, declare, start, end, step, body } => {
                self.scopes.push(Vec::new());
                let r = self.for_stmt(
                    (var, var_span, ty.as_ref(), *declare),
                    start.as_ref(),
                    end,
                    *step,
                    body,
                    &span,
                );
                self.close_scope();
                r?
            }
            ast::StmtKind::Block(stmts) => {
                // A block's statements join the enclosing list, in a scope of their own.
                let inner = self.block(stmts);
                let mut inner = inner.into_iter();
                let last = inner.next_back();
                out.extend(inner);
                return Ok(last);
            }
            ast::StmtKind::Break | ast::StmtKind::Continue => {
                let is_break = matches!(s.kind, ast::StmtKind::Break);
                if self.loops == 0 {
                    let word = self.src(&span).trim_end_matches(';').trim();
                    let word = if word.is_empty() {
                        if is_break { "break" } else { "continue" }
                    } else {
                        word
                    };
                    return Err(self.error(
                        codes::OUTSIDE_LOOP,
                        span,
                        format!("`{word}` outside a loop"),
                    ));
                }
                if is_break { StmtKind::Break } else { StmtKind::Continue }
            }
            ast::StmtKind::Return(_) if !self.inlining.is_empty() => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    "a helper returns at the end of its body only",
                ));
            }
            ast::StmtKind::Return(value) => {
                if value.is_some() {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        "a kernel returns no value: write results to a buffer",
                    ));
                }
                StmtKind::Return
            }
        };
        Ok(Some(Stmt { kind, span }))
    }

    fn condition(&mut self, c: &ast::Expr) -> R<Expr> {
        let e = self.expr(c, Some(Scalar::Bool))?;
        if e.ty != Ty::Scalar(Scalar::Bool) {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                c.span.clone(),
                format!("a condition is a `bool`, not `{}` (compare it: `x != 0`)", e.ty),
            ));
        }
        Ok(e)
    }

    /// A loop's condition, which runs at every test: a helper call in it would run once.
    fn loop_condition(&mut self, c: &ast::Expr, span: &Span) -> R<Expr> {
        let before = self.prelude.len();
        let cond = self.condition(c)?;
        if self.prelude.len() != before {
            let word = if self.python() { "`while`" } else { "loop" };
            return Err(self.error(
                codes::UNSUPPORTED,
                span.clone(),
                format!("a helper call in a {word} condition runs once, not at every test: assign its result inside the loop"),
            ));
        }
        Ok(cond)
    }

    /// `do { body } while (c)`: `while (true) { body; if (!c) break; }`, or, where the body
    /// has a `continue` (which goes to the test), `first = true; while (first || c) {
    /// first = false; body }`.
    fn do_while(
        &mut self,
        body: &[ast::Stmt],
        c: &ast::Expr,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> R<Option<Stmt>> {
        let bool_ty = Ty::Scalar(Scalar::Bool);
        let constant = |b: bool| Expr { kind: ExprKind::Bool(b), ty: bool_ty, span: span.clone() };
        if !ast::continues(body) {
            self.loops += 1;
            let mut stmts = self.block(body);
            self.loops -= 1;
            let cond = self.loop_condition(c, &span)?;
            let leave = Expr {
                kind: ExprKind::Unary(UnOp::Not, Box::new(cond)),
                ty: bool_ty,
                span: c.span.clone(),
            };
            stmts.push(Stmt {
                kind: StmtKind::If(
                    leave,
                    vec![Stmt { kind: StmtKind::Break, span: c.span.clone() }],
                    Vec::new(),
                ),
                span: c.span.clone(),
            });
            return Ok(Some(Stmt { kind: StmtKind::While(constant(true), stmts), span }));
        }
        self.temps += 1;
        let name = format!("do#{}", self.temps);
        let first = self.new_var(name, bool_ty, span.clone(), false);
        out.push(Stmt { kind: StmtKind::Assign(first, constant(true)), span: span.clone() });
        let cond = self.loop_condition(c, &span)?;
        let test = Expr {
            kind: ExprKind::Binary(
                BinOp::LogicOr,
                Box::new(Expr { kind: ExprKind::Var(first), ty: bool_ty, span: span.clone() }),
                Box::new(cond),
            ),
            ty: bool_ty,
            span: c.span.clone(),
        };
        self.loops += 1;
        let mut stmts =
            vec![Stmt { kind: StmtKind::Assign(first, constant(false)), span: span.clone() }];
        stmts.extend(self.block(body));
        self.loops -= 1;
        Ok(Some(Stmt { kind: StmtKind::While(test, stmts), span }))
    }

    fn int_const(&self, v: i64, s: Scalar, span: Span) -> Expr {
        Expr { kind: ExprKind::Int(v), ty: Ty::Scalar(s), span }
    }

    /// An integer loop bound.
    fn bound(&mut self, e: &ast::Expr, want: Option<Scalar>) -> R<Expr> {
        let v = self.expr(e, want.or(Some(Scalar::I32)))?;
        match scalar(v.ty) {
            Some(s) if s.is_int() => Ok(v),
            _ => {
                let what = if self.python() {
                    "`range` takes integers"
                } else {
                    "a counted loop counts integers"
                };
                Err(self.error(
                    codes::TYPE_MISMATCH,
                    e.span.clone(),
                    format!("{what}, not `{}`", v.ty),
                ))
            }
        }
    }

    /// A counted loop; `counter` is its variable's name, place, declared type, and whether it
    /// is a new variable of the loop.
    fn for_stmt(
        &mut self,
        counter: (&str, &Span, Option<&TypeRef>, bool),
        start: Option<&ast::Expr>,
        end: &ast::Expr,
        step: i64,
        body: &[ast::Stmt],
        span: &Span,
    ) -> R<StmtKind> {
        let (var, var_span, ty, declare) = counter;
        let declared = match ty {
            Some(t) => match self.ty(t)? {
                Ty::Scalar(s) if s.is_int() => Some(s),
                other => {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        t.span.clone(),
                        format!("a loop counter is an integer, not `{other}`"),
                    ));
                }
            },
            None => None,
        };
        let (start, end) = match start {
            None => {
                let end = self.bound(end, declared)?;
                let s = scalar(end.ty).unwrap_or(Scalar::I32);
                (self.int_const(0, s, span.clone()), end)
            }
            // Type the non-literal bound first, so a literal takes its type.
            Some(start) if start.is_literal() && declared.is_none() => {
                let end = self.bound(end, None)?;
                (self.bound(start, scalar(end.ty))?, end)
            }
            Some(start) => {
                let start = self.bound(start, declared)?;
                let end = self.bound(end, declared.or(scalar(start.ty)))?;
                (start, end)
            }
        };
        let want = declared.map_or(start.ty, Ty::Scalar);
        let (start, end) = match (self.convert(start, want), self.convert(end, want)) {
            (Ok(s), Ok(e)) => (s, e),
            (s, e) => {
                let (s, e) = (s.unwrap_or_else(|x| x), e.unwrap_or_else(|x| x));
                let span = s.span.start.min(e.span.start)..s.span.end.max(e.span.end);
                let what =
                    if self.python() { "`range` bounds" } else { "the loop's start and bound" };
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("{what} are `{}` and `{}`", s.ty, e.ty),
                ));
            }
        };
        let var = if declare {
            let id = self.new_var(self.shown(var), start.ty, var_span.clone(), false);
            self.bind(var.to_owned(), id);
            id
        } else {
            self.declare(var, var_span, start.ty)?
        };
        self.loops += 1;
        let body = self.block(body);
        self.loops -= 1;
        Ok(StmtKind::For { var, start, end, step, body })
    }
}

impl<'t> Builder<'t, '_> {
    /// `name`, or `name#2`, `name#3`, ... when a variable already has it (a helper inlined
    /// more than once, a shadowed `let`).
    fn unique(&self, name: String) -> String {
        let taken = |n: &str| self.vars.iter().any(|v| v.name == n);
        if !taken(&name) {
            return name;
        }
        (2..).map(|i| format!("{name}#{i}")).find(|n| !taken(n)).unwrap_or(name)
    }

    /// The name a new variable `text` shows in HIR (and in the debugger).
    fn shown(&self, text: &str) -> String {
        match self.inlining.last() {
            Some(h) => self.unique(format!("{h}.{text}")),
            None if self.dialect.block_scopes => self.unique(text.to_owned()),
            None => text.to_owned(),
        }
    }

    /// Python: the variable `name` as the target of an assignment of type `ty`: declared by
    /// its first assignment, and of that type afterwards.
    fn declare(&mut self, text: &str, span: &Span, ty: Ty) -> R<VarId> {
        if let Some(&id) = self.names.get(text) {
            let var = &self.vars[id.0 as usize];
            if matches!(var.ty, Ty::Buffer(_) | Ty::Local(..) | Ty::Private(..)) {
                return Err(self.error(
                    codes::BAD_ASSIGNMENT,
                    span.clone(),
                    format!("`{text}` is a buffer: assign to its elements, `{text}[i] = ...`"),
                ));
            }
            if var.ty != ty {
                let (vty, vspan) = (var.ty, var.span.clone());
                let mut d = Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    span.clone(),
                    format!("`{text}` is `{vty}`, and this assigns `{ty}`"),
                );
                d.labels.push((vspan, format!("`{text}` became `{vty}` here")));
                d.notes.push(format!("convert explicitly: `{text} = {vty}(...)`"));
                self.diagnostics.push(d);
                return Err(Reported);
            }
            return Ok(id);
        }
        let id = self.new_var(self.shown(text), ty, span.clone(), false);
        self.bind(text.to_owned(), id);
        Ok(id)
    }

    /// `let x: T = value;` and its kin: a new variable.
    fn let_stmt(
        &mut self,
        name: &str,
        name_span: &Span,
        ty: Option<&TypeRef>,
        value: Option<&ast::Expr>,
        mutable: bool,
        span: Span,
    ) -> R<Option<Stmt>> {
        let declared = match ty {
            Some(t) => {
                match self.ty(t)? {
                    Ty::Scalar(s) => Some(s),
                    other => {
                        return Err(self.error(
                        codes::UNSUPPORTED,
                        t.span.clone(),
                        format!("a local variable holds a scalar, not `{other}`: buffers are parameters"),
                    ));
                    }
                }
            }
            None => None,
        };
        let value = match (value, declared) {
            (Some(v), _) => {
                let e = self.expr(v, declared)?;
                match declared {
                    Some(d) => match self.convert(e, Ty::Scalar(d)) {
                        Ok(e) => e,
                        Err(e) => {
                            let hint = self.cast_hint(d, &v.span);
                            return Err(self.error(
                                codes::TYPE_MISMATCH,
                                v.span.clone(),
                                format!("`{name}` is declared `{}`, the value is `{}`: convert it, `{hint}`", d.name(), e.ty),
                            ));
                        }
                    },
                    None => e,
                }
            }
            (None, Some(d)) => zero(d, span.clone()),
            (None, None) => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    format!("`{name}` needs a type or a first value"),
                ));
            }
        };
        if scalar(value.ty).is_none() {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                span,
                format!("`{name}` would hold `{}`: a local variable holds a scalar", value.ty),
            ));
        }
        let id = self.new_var(self.shown(name), value.ty, name_span.clone(), false);
        self.fixed[id.0 as usize] = !mutable;
        self.bind(name.to_owned(), id);
        Ok(Some(Stmt { kind: StmtKind::Assign(id, value), span }))
    }

    /// `target = value`, `target op= value`.
    fn assign(
        &mut self,
        target: &ast::Expr,
        op: Option<&(Op, String)>,
        value: &ast::Expr,
        annotation: Option<&TypeRef>,
        span: Span,
    ) -> R<Stmt> {
        match &target.kind {
            ast::ExprKind::Name(name) => {
                let known = self.names.get(name).copied();
                if self.python() {
                    return self.python_assign(name, target, op, value, annotation, span);
                }
                let Some(id) = known else {
                    let how = match self.dialect.language {
                        Language::Rust => format!("`let mut {name} = ...;`"),
                        Language::Cpp => format!("`auto {name} = ...;`"),
                        _ => format!("`let {name} = ...`"),
                    };
                    return Err(self.error(
                        codes::UNKNOWN_NAME,
                        target.span.clone(),
                        format!("unknown name `{name}`: declare it first, {how}"),
                    ));
                };
                let var = &self.vars[id.0 as usize];
                if matches!(var.ty, Ty::Buffer(_) | Ty::Local(..) | Ty::Private(..)) {
                    return Err(self.error(
                        codes::BAD_ASSIGNMENT,
                        target.span.clone(),
                        format!("`{name}` is a buffer: assign to its elements, `{name}[i] = ...`"),
                    ));
                }
                if self.fixed[id.0 as usize] {
                    let how = match self.dialect.language {
                        Language::Rust => format!("declare it `let mut {name}`"),
                        Language::Cpp => "drop the `const`".to_owned(),
                        _ => format!("declare it `let {name}`"),
                    };
                    let at = var.span.clone();
                    self.diagnostics.push(
                        Diagnostic::error(
                            codes::BAD_ASSIGNMENT,
                            target.span.clone(),
                            format!("`{name}` cannot be assigned again: {how}"),
                        )
                        .with_label(at, "declared here"),
                    );
                    return Err(Reported);
                }
                let (vty, vspan) = (var.ty, var.span.clone());
                let current = Expr { kind: ExprKind::Var(id), ty: vty, span: target.span.clone() };
                let v = self.compound(current, op, value, &span)?;
                match self.convert(v, vty) {
                    Ok(v) => Ok(Stmt { kind: StmtKind::Assign(id, v), span }),
                    Err(v) => {
                        let mut d = Diagnostic::error(
                            codes::TYPE_MISMATCH,
                            value.span.clone(),
                            format!("`{name}` is `{vty}`, and this assigns `{}`", v.ty),
                        );
                        d.labels.push((vspan, format!("`{name}` is `{vty}` from here")));
                        if let Some(s) = scalar(vty) {
                            d.notes.push(format!(
                                "convert explicitly: `{}`",
                                self.cast_hint(s, &value.span)
                            ));
                        }
                        self.diagnostics.push(d);
                        Err(Reported)
                    }
                }
            }
            ast::ExprKind::Index(base, index) => {
                let (buffer, index, elem) = self.element(base, index)?;
                self.writable(&buffer, &base.span)?;
                let current = Expr {
                    kind: ExprKind::Load(Box::new(buffer.clone()), Box::new(index.clone())),
                    ty: Ty::Scalar(elem),
                    span: target.span.clone(),
                };
                let v = self.compound(current, op, value, &span)?;
                match self.convert(v, Ty::Scalar(elem)) {
                    Ok(v) => Ok(Stmt { kind: StmtKind::Store(buffer, index, v), span }),
                    Err(v) => {
                        let hint = match scalar(v.ty) {
                            Some(_) if !self.python() => {
                                format!(": convert it, `{}`", self.cast_hint(elem, &value.span))
                            }
                            _ => String::new(),
                        };
                        Err(self.error(
                            codes::TYPE_MISMATCH,
                            value.span.clone(),
                            format!(
                                "`{}` holds `{}`, the value is `{}`{hint}",
                                self.src(&base.span),
                                elem.name(),
                                v.ty
                            ),
                        ))
                    }
                }
            }
            _ => Err(self.error(
                codes::UNSUPPORTED,
                target.span.clone(),
                "assign to a name or to a buffer element",
            )),
        }
    }

    /// The value `target = value` stores, or `target op= value` (with `current` the
    /// target's value).
    fn compound(
        &mut self,
        current: Expr,
        op: Option<&(Op, String)>,
        value: &ast::Expr,
        span: &Span,
    ) -> R<Expr> {
        let want = scalar(current.ty);
        match op {
            None => self.expr(value, want),
            Some((op, sym)) => {
                let v = self.expr(value, want)?;
                self.binary(*op, sym, current, v, span.clone())
            }
        }
    }

    /// Python's assignment to a name: the first declares it.
    fn python_assign(
        &mut self,
        name: &str,
        target: &ast::Expr,
        op: Option<&(Op, String)>,
        value: &ast::Expr,
        annotation: Option<&TypeRef>,
        span: Span,
    ) -> R<Stmt> {
        if let Some((op, sym)) = op {
            let current = self.expr(target, None)?;
            let v = self.expr(value, scalar(current.ty))?;
            let combined = self.binary(*op, sym, current, v, span.clone())?;
            let var = self.declare(name, &target.span, combined.ty)?;
            return Ok(Stmt { kind: StmtKind::Assign(var, combined), span });
        }
        let annotated = match annotation {
            Some(t) => Some(self.ty(t)?),
            None => None,
        };
        let known = self.names.get(name).map(|id| self.vars[id.0 as usize].ty);
        let want = annotated.or(known).and_then(scalar);
        let v = self.expr(value, want)?;
        if let Some(t) = annotated
            && t != v.ty
        {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                value.span.clone(),
                format!("the annotation says `{t}`, the value is `{}`", v.ty),
            ));
        }
        let var = self.declare(name, &target.span, v.ty)?;
        Ok(Stmt { kind: StmtKind::Assign(var, v), span })
    }

    /// A store or an atomic into `buffer` is allowed (it is not `&[T]` or `const T*`).
    fn writable(&mut self, buffer: &Expr, span: &Span) -> R<()> {
        if let ExprKind::Var(id) = buffer.kind
            && self.fixed[id.0 as usize]
        {
            let var = &self.vars[id.0 as usize];
            let (name, at) = (var.name.clone(), var.span.clone());
            let elem = match var.ty {
                Ty::Buffer(s) => s,
                _ => Scalar::U32,
            };
            let how = match self.dialect.language {
                Language::Rust => {
                    format!("(`&[{0}]`): take it as `&mut [{0}]` to store into it", elem.name())
                }
                Language::Cpp => {
                    format!("(`const {}*`): drop the `const` to store into it", ast::cpp_name(elem))
                }
                _ => "to this kernel".to_owned(),
            };
            self.diagnostics.push(
                Diagnostic::error(
                    codes::BAD_ASSIGNMENT,
                    span.clone(),
                    format!("`{name}` is read-only {how}"),
                )
                .with_label(at, "declared here"),
            );
            return Err(Reported);
        }
        Ok(())
    }

    /// An array declaration: Local Memory (`local`) or each thread's own.
    fn array(
        &mut self,
        name: &str,
        name_span: &Span,
        local: bool,
        elem: &TypeRef,
        len: &ast::Expr,
        span: Span,
    ) -> R<()> {
        let kind = if local { "local" } else { "private" };
        if self.loops > 0 || (!self.dialect.block_scopes && self.names.contains_key(name)) {
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!("a {kind} array is declared once, outside loops"),
            ));
        }
        let elem = match self.ty(elem)? {
            Ty::Scalar(s) if s != Scalar::Bool => s,
            _ => {
                return Err(self.error(
                    codes::BAD_ANNOTATION,
                    elem.span.clone(),
                    format!(
                        "`{}` is not an element type: f32, f16, f64, i32 or u32",
                        self.src(&elem.span)
                    ),
                ));
            }
        };
        let n = match len.kind {
            ast::ExprKind::Int(n, _) => u32::try_from(n).ok().filter(|n| *n > 0),
            _ => None,
        };
        let ty = match n {
            Some(n) if local => Ty::Local(elem, n),
            Some(n) if n <= MAX_PRIVATE => Ty::Private(elem, n),
            Some(_) => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    len.span.clone(),
                    format!(
                        "a private array holds at most {MAX_PRIVATE} elements (each thread has its own: a larger one belongs in a local array)"
                    ),
                ));
            }
            None => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    len.span.clone(),
                    format!("the length of a {kind} array is a positive integer constant"),
                ));
            }
        };
        let id = self.new_var(self.shown(name), ty, name_span.clone(), false);
        self.bind(name.to_owned(), id);
        Ok(())
    }

    /// `buffer[index]`: the buffer, the index and the element type.
    fn element(&mut self, base: &ast::Expr, index: &ast::Expr) -> R<(Expr, Expr, Scalar)> {
        let buffer = self.expr(base, None)?;
        let elem = match buffer.ty {
            Ty::Buffer(s) | Ty::Local(s, _) | Ty::Private(s, _) => s,
            other => {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    base.span.clone(),
                    format!("`{}` is `{other}`, not a buffer", self.src(&base.span)),
                ));
            }
        };
        let idx = self.expr(index, Some(Scalar::U32))?;
        if !scalar(idx.ty).is_some_and(Scalar::is_int) {
            let hint = match self.dialect.conversions {
                Conversions::TypeScript => {
                    format!(": narrow it, `{}`", self.cast_hint(Scalar::U32, &index.span))
                }
                _ => String::new(),
            };
            return Err(self.error(
                codes::TYPE_MISMATCH,
                index.span.clone(),
                format!("an index is `i32` or `u32`, not `{}`{hint}", idx.ty),
            ));
        }
        Ok((buffer, idx, elem))
    }

    /// `e` as a value of type `to`: itself, or converted where the language converts
    /// implicitly (a constant that fits; a widening); else `Err(e)`.
    fn convert(&self, e: Expr, to: Ty) -> Result<Expr, Expr> {
        if e.ty == to {
            return Ok(e);
        }
        let (Some(from), Ty::Scalar(to)) = (scalar(e.ty), to) else { return Err(e) };
        let widening = match self.dialect.conversions {
            Conversions::None => return Err(e),
            Conversions::Cpp => matches!(
                (from, to),
                (Scalar::Bool, _)
                    | (Scalar::I32 | Scalar::U32, Scalar::F64)
                    | (Scalar::F16, Scalar::F32 | Scalar::F64)
                    | (Scalar::F32, Scalar::F64)
            ),
            Conversions::TypeScript => {
                to == Scalar::F64 && from != Scalar::Bool
                    || (from == Scalar::F16 && to == Scalar::F32)
            }
        };
        if let Some(c) = constant(&e, to) {
            return Ok(c);
        }
        if widening { Ok(cast(e, to)) } else { Err(e) }
    }

    /// The operands of a binary operation, brought to one type where the language does
    /// (C++'s usual arithmetic conversions; TypeScript's `number`).
    fn unify(&self, a: Expr, b: Expr) -> (Expr, Expr) {
        let (Some(x), Some(y)) = (scalar(a.ty), scalar(b.ty)) else { return (a, b) };
        if x == y {
            return (a, b);
        }
        let to = match self.dialect.conversions {
            Conversions::None => return (a, b),
            Conversions::Cpp => {
                let to = if rank(x) >= rank(y) { x } else { y };
                if to == Scalar::Bool { Scalar::I32 } else { to }
            }
            Conversions::TypeScript if x == Scalar::F64 || y == Scalar::F64 => Scalar::F64,
            Conversions::TypeScript => return (a, b),
        };
        let a = constant(&a, to).unwrap_or_else(|| cast(a, to));
        let b = constant(&b, to).unwrap_or_else(|| cast(b, to));
        (a, b)
    }

    fn binary(&mut self, op: Op, sym: &str, a: Expr, b: Expr, span: Span) -> R<Expr> {
        let binop = match op {
            Op::Add => BinOp::Add,
            Op::Sub => BinOp::Sub,
            Op::Mul => BinOp::Mul,
            Op::Div | Op::IntDiv => BinOp::Div,
            Op::Rem => BinOp::Rem,
            Op::BitAnd => BinOp::And,
            Op::BitOr => BinOp::Or,
            Op::BitXor => BinOp::Xor,
            Op::Shl => BinOp::Shl,
            Op::Shr | Op::UShr => BinOp::Shr,
            Op::Lt => BinOp::Lt,
            Op::Le => BinOp::Le,
            Op::Gt => BinOp::Gt,
            Op::Ge => BinOp::Ge,
            Op::Eq => BinOp::Eq,
            Op::Ne => BinOp::Ne,
            Op::And => BinOp::LogicAnd,
            Op::Or => BinOp::LogicOr,
        };
        let shift = matches!(binop, BinOp::Shl | BinOp::Shr);
        let (a, b) = match (scalar(a.ty), scalar(b.ty)) {
            // A shift count's type does not matter (its low 5 bits count).
            (Some(x), Some(y)) if shift && !self.python() && x.is_int() && y.is_int() && x != y => {
                let b = constant(&b, x).unwrap_or_else(|| cast(b, x));
                (a, b)
            }
            _ => self.unify(a, b),
        };
        if a.ty != b.ty {
            // Python's message has always shown `f32(i)`; the others convert the right side
            // to the left's type, as written in the language.
            let like = match scalar(a.ty) {
                Some(s) if !self.python() && scalar(b.ty).is_some() => self.cast_hint(s, &b.span),
                _ => self.dialect.cast(Scalar::F32, "i"),
            };
            return Err(self.error(
                codes::TYPE_MISMATCH,
                span,
                format!(
                    "`{sym}` between `{}` and `{}`: convert one side, like `{like}`",
                    a.ty, b.ty
                ),
            ));
        }
        let Some(s) = scalar(a.ty) else {
            return Err(self.error(codes::TYPE_MISMATCH, span, format!("`{sym}` on `{}`", a.ty)));
        };
        let ts = self.dialect.language == Language::TypeScript;
        let ok = match binop {
            BinOp::LogicAnd | BinOp::LogicOr => s == Scalar::Bool,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Rem => s != Scalar::Bool,
            BinOp::Div if op == Op::IntDiv => s.is_int(),
            BinOp::Div => s.is_float() || (s.is_int() && self.dialect.int_slash),
            BinOp::Shr if op == Op::UShr => s == Scalar::U32,
            BinOp::Shr if ts => s == Scalar::I32,
            BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr => s.is_int(),
            BinOp::Eq | BinOp::Ne => true,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => s != Scalar::Bool,
        };
        if !ok {
            let hint = match (binop, op) {
                (BinOp::Div, Op::Div) if ts => {
                    ": `/` divides floats; integer division is `Math.trunc(a / b)`"
                }
                (BinOp::Div, Op::Div) => ": `/` divides floats; integers use `//`",
                (BinOp::Div, _) => ": `//` divides integers; floats use `/`",
                (BinOp::Shr, Op::UShr) => ": `>>>` shifts a `u32`; `>>` shifts an `i32`",
                (BinOp::Shr, _) if ts && s == Scalar::U32 => {
                    ": `>>` on a `u32` is an arithmetic shift in JavaScript; write `>>>`"
                }
                _ => "",
            };
            return Err(self.error(
                codes::TYPE_MISMATCH,
                span,
                format!("`{sym}` does not apply to `{}`{hint}", a.ty),
            ));
        }
        let ty = if binop.is_comparison() { Ty::Scalar(Scalar::Bool) } else { a.ty };
        Ok(Expr { kind: ExprKind::Binary(binop, Box::new(a), Box::new(b)), ty, span })
    }

    /// Types both operands, the literal one (if any) in the other's type.
    fn operands(&mut self, l: &ast::Expr, r: &ast::Expr, want: Option<Scalar>) -> R<(Expr, Expr)> {
        if l.is_literal() && !r.is_literal() {
            let b = self.expr(r, want)?;
            let a = self.expr(l, scalar(b.ty))?;
            Ok((a, b))
        } else {
            let a = self.expr(l, want)?;
            let b = self.expr(r, scalar(a.ty))?;
            Ok((a, b))
        }
    }

    fn expr(&mut self, n: &ast::Expr, want: Option<Scalar>) -> R<Expr> {
        let span = n.span.clone();
        let e = |kind, ty| Ok(Expr { kind, ty, span: span.clone() });
        match &n.kind {
            ast::ExprKind::Int(v, suffix) => match suffix.or(want) {
                Some(s) if s.is_float() => e(ExprKind::Float(*v as f64), Ty::Scalar(s)),
                Some(s) if s.is_int() => e(ExprKind::Int(*v), Ty::Scalar(s)),
                _ => e(ExprKind::Int(*v), Ty::Scalar(Scalar::I32)),
            },
            ast::ExprKind::Float(v, suffix) => {
                let s =
                    suffix.or(want.filter(|s| s.is_float())).unwrap_or(self.dialect.float_default);
                e(ExprKind::Float(*v), Ty::Scalar(s))
            }
            ast::ExprKind::Bool(b) => e(ExprKind::Bool(*b), Ty::Scalar(Scalar::Bool)),
            ast::ExprKind::Name(name) => match self.names.get(name) {
                Some(&id) => e(ExprKind::Var(id), self.vars[id.0 as usize].ty),
                None => {
                    Err(self.error(codes::UNKNOWN_NAME, span, format!("unknown name `{name}`")))
                }
            },
            ast::ExprKind::Binary(op, sym, l, r) => {
                let want = match op {
                    Op::And | Op::Or => Some(Scalar::Bool),
                    Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne => None,
                    _ => want,
                };
                let (a, b) = self.operands(l, r, want)?;
                self.binary(*op, sym, a, b, span)
            }
            ast::ExprKind::Unary(op, sym, arg) => self.unary(*op, sym, arg, want, span),
            ast::ExprKind::Cond(c, a, b) => {
                let cond = self.condition(c)?;
                let (a, b) = self.operands(a, b, want)?;
                let (a, b) = self.unify(a, b);
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
            ast::ExprKind::Index(base, index) => {
                let (buffer, index, elem) = self.element(base, index)?;
                e(ExprKind::Load(Box::new(buffer), Box::new(index)), Ty::Scalar(elem))
            }
            ast::ExprKind::Call { .. } => self.call(n, want),
            ast::ExprKind::Cast(t, arg) => match self.ty(t)? {
                Ty::Scalar(to) => self.conversion(to, arg, span, self.src(&t.span)),
                other => Err(self.error(
                    codes::TYPE_MISMATCH,
                    t.span.clone(),
                    format!("a conversion is to a scalar type, not `{other}`"),
                )),
            },
            ast::ExprKind::Error => Err(Reported),
        }
    }

    fn unary(
        &mut self,
        op: UnaryOp,
        sym: &str,
        arg: &ast::Expr,
        want: Option<Scalar>,
        span: Span,
    ) -> R<Expr> {
        if op == UnaryOp::Plus {
            return self.expr(arg, want);
        }
        // `-5` is a literal of the wanted type.
        if op == UnaryOp::Neg
            && matches!(arg.kind, ast::ExprKind::Int(..) | ast::ExprKind::Float(..))
        {
            let mut lit = self.expr(arg, want)?;
            lit.kind = match lit.kind {
                ExprKind::Int(v) => ExprKind::Int(-v),
                ExprKind::Float(v) => ExprKind::Float(-v),
                k => k,
            };
            lit.span = span;
            return Ok(lit);
        }
        let logical = matches!(op, UnaryOp::Not);
        let a = self.expr(arg, if logical { Some(Scalar::Bool) } else { want })?;
        let s = scalar(a.ty);
        let (unop, ok) = match op {
            UnaryOp::Neg => (UnOp::Neg, s.is_some_and(|s| s != Scalar::Bool && s != Scalar::U32)),
            UnaryOp::Not => (UnOp::Not, s == Some(Scalar::Bool)),
            UnaryOp::NotOrBitNot if s == Some(Scalar::Bool) => (UnOp::Not, true),
            _ => (UnOp::BitNot, s.is_some_and(Scalar::is_int)),
        };
        if !ok {
            let message = if unop == UnOp::Not {
                format!("`{sym}` takes a `bool`, not `{}`", a.ty)
            } else {
                format!("`{sym}` does not apply to `{}`", a.ty)
            };
            return Err(self.error(codes::TYPE_MISMATCH, span, message));
        }
        let ty = a.ty;
        Ok(Expr { kind: ExprKind::Unary(unop, Box::new(a)), ty, span })
    }

    /// A written conversion of `arg` to `to` (`callee` as written, for messages).
    fn conversion(&mut self, to: Scalar, arg: &ast::Expr, span: Span, callee: &str) -> R<Expr> {
        let a = self.expr(arg, Some(to))?;
        if a.ty == Ty::Scalar(to) {
            return Ok(a);
        }
        if scalar(a.ty).is_none() {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                span,
                format!("`{callee}` converts a scalar, not `{}`", a.ty),
            ));
        }
        Ok(Expr { kind: ExprKind::Cast(Box::new(a)), ty: Ty::Scalar(to), span })
    }
}

impl<'t> Builder<'t, '_> {
    /// `name` is an intrinsic's canonical name.
    fn intrinsic(&self, name: &str) -> bool {
        const NAMES: [&str; 38] = [
            "thread_id",
            "workgroup_id",
            "workgroup_size",
            "grid_size",
            "global_id",
            "lane_id",
            "wave_id",
            "wave_width",
            "barrier",
            "fence",
            "int",
            "float",
            "local_array",
            "private_array",
            "shuffle",
            "shuffle_up",
            "shuffle_down",
            "shuffle_xor",
            "broadcast",
            "ballot",
            "any",
            "all",
            "reduce_add",
            "reduce_min",
            "reduce_max",
            "prefix_sum",
            "sqrt",
            "rsqrt",
            "abs",
            "floor",
            "ceil",
            "sin",
            "cos",
            "exp2",
            "log2",
            "fma",
            "min",
            "max",
        ];
        NAMES.contains(&name)
            || name == "trunc"
            || name.starts_with("atomic_")
            || Scalar::from_name(name).is_some()
    }

    fn call(&mut self, n: &ast::Expr, want: Option<Scalar>) -> R<Expr> {
        let ast::ExprKind::Call { name, callee, callee_span, args, .. } = &n.kind else {
            return Err(Reported);
        };
        let span = n.span.clone();
        let full = callee.as_str();
        if !self.intrinsic(name) && self.helpers.contains_key(name.as_str()) {
            return self.inline(n, want, false);
        }
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
                Some(a) => match a.kind {
                    ast::ExprKind::Int(v @ 0..=2, _) => v as u8,
                    _ => {
                        return Err(b.error(
                            codes::BAD_CALL,
                            a.span.clone(),
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
            "trunc" => {
                count(self, 1)?;
                return self.trunc(&args[0], want, span);
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
            return self.conversion(to, &args[0], span, full);
        }
        if name == "local_array" || name == "private_array" {
            let example = match (self.dialect.language, name == "local_array") {
                (Language::Python, true) => "tile = wave.local_array(f32, 256)",
                (Language::Python, false) => "acc = wave.private_array(f32, 4)",
                (Language::Rust, true) => "let tile = wave::local_array::<f32, 256>();",
                (Language::Rust, false) => "let mut acc = [0.0f32; 4];",
                (Language::Cpp, true) => "wave::local_array<float, 256> tile;",
                (Language::Cpp, false) => "float acc[4] = {};",
                (Language::TypeScript, true) => "const tile = wave.localArray(Float32Array, 256)",
                (Language::TypeScript, false) => "const acc = new Float32Array(4)",
            };
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!("`{full}` declares a variable: `{example}`"),
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
                        callee_span.clone(),
                        format!("unknown atomic `{full}`"),
                    ));
                }
            };
            count(self, 3)?;
            let buffer = self.expr(&args[0], None)?;
            let elem = match buffer.ty {
                Ty::Buffer(s) | Ty::Local(s, _) => s,
                Ty::Private(..) => {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span.clone(),
                        "an atomic works on a buffer or a local array: a private array is the thread's own, so `a[i] += v` does the same",
                    ));
                }
                other => {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        args[0].span.clone(),
                        format!("an atomic works on a buffer, not `{other}`"),
                    ));
                }
            };
            self.writable(&buffer, &args[0].span)?;
            let index = self.expr(&args[1], Some(Scalar::U32))?;
            if !scalar(index.ty).is_some_and(Scalar::is_int) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[1].span.clone(),
                    format!("an index is `i32` or `u32`, not `{}`", index.ty),
                ));
            }
            let value = self.expr(&args[2], Some(elem))?;
            let value = match self.convert(value, Ty::Scalar(elem)) {
                Ok(v) => v,
                Err(v) => {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        args[2].span.clone(),
                        format!("the buffer holds `{}`, the value is `{}`", elem.name(), v.ty),
                    ));
                }
            };
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
            let a = self.expr(&args[0], if cond { Some(Scalar::Bool) } else { want })?;
            let mut list = vec![a];
            if k == 2 {
                list.push(self.expr(&args[1], Some(Scalar::U32))?);
                if list[1].ty != u32t && list[1].ty != Ty::Scalar(Scalar::I32) {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        args[1].span.clone(),
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
                    args[0].span.clone(),
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
                    args[0].span.clone(),
                    format!(
                        "`{full}` takes an integer (i32 or u32), not `{}`: the WAVE instruction reduces integers; for floats, combine lanes with a shuffle or through Local Memory",
                        list[0].ty
                    ),
                ));
            }
            let signed_only = matches!(op, WaveOp::ReduceMin | WaveOp::ReduceMax);
            if signed_only && list[0].ty != Ty::Scalar(Scalar::I32) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[0].span.clone(),
                    format!(
                        "`{full}` takes an i32, not `{}`: the WAVE instruction compares signed; convert with `{}`",
                        list[0].ty,
                        self.dialect.cast(Scalar::I32, "...")
                    ),
                ));
            }
            if !cond && scalar(list[0].ty).is_none_or(|s| s == Scalar::Bool) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[0].span.clone(),
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
            let first = args.iter().position(|a| !a.is_literal()).unwrap_or(0);
            let lead = self.expr(&args[first], want)?;
            for (j, a) in args.iter().enumerate() {
                if j == first {
                    list.push(lead.clone());
                } else {
                    list.push(self.expr(a, scalar(lead.ty))?);
                }
            }
            // C++ and TypeScript bring the arguments to one type as they would operands.
            if self.dialect.conversions != Conversions::None
                && let Some(to) = list.iter().filter_map(|a| scalar(a.ty)).reduce(|x, y| {
                    let (a, b) = self.unify(zero(x, 0..0), zero(y, 0..0));
                    if a.ty == b.ty { scalar(a.ty).unwrap_or(x) } else { x }
                })
            {
                list = list
                    .into_iter()
                    .map(|a| match self.convert(a, Ty::Scalar(to)) {
                        Ok(a) | Err(a) => a,
                    })
                    .collect();
            }
            let lead_ty = list[0].ty;
            if list.iter().any(|a| a.ty != lead_ty)
                || scalar(lead_ty).is_none_or(|s| s == Scalar::Bool)
            {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("`{full}` takes numbers of one type"),
                ));
            }
            let float_only = matches!(i, Intrinsic::Math(m) if !matches!(m, MathFn::Abs));
            if float_only && !scalar(lead_ty).is_some_and(Scalar::is_float) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!(
                        "`{full}` takes floats, not `{lead_ty}`: convert with `{}`",
                        self.dialect.cast(Scalar::F32, "...")
                    ),
                ));
            }
            return Ok(Expr { kind: ExprKind::Call(i, list), ty: lead_ty, span });
        }
        let what = match self.dialect.language {
            Language::Python => "a function of this file",
            _ => "a function of this file (or not one kernels can call)",
        };
        Err(self.error(
            codes::UNKNOWN_NAME,
            callee_span.clone(),
            format!("`{full}` is not an intrinsic or {what}"),
        ))
    }

    /// TypeScript's `Math.trunc(a / b)`: integer division where `a` and `b` are integers.
    fn trunc(&mut self, arg: &ast::Expr, want: Option<Scalar>, span: Span) -> R<Expr> {
        if let ast::ExprKind::Binary(Op::Div, _, l, r) = &arg.kind {
            let (a, b) = self.operands(l, r, want)?;
            let (a, b) = self.unify(a, b);
            if a.ty == b.ty && scalar(a.ty).is_some_and(Scalar::is_int) {
                let ty = a.ty;
                return Ok(Expr {
                    kind: ExprKind::Binary(BinOp::Div, Box::new(a), Box::new(b)),
                    ty,
                    span,
                });
            }
        }
        let a = self.expr(arg, want)?;
        if scalar(a.ty).is_some_and(Scalar::is_int) {
            return Ok(a);
        }
        Err(self.error(
            codes::UNSUPPORTED,
            span,
            format!("`Math.trunc` of `{}` is not supported: it divides integers, `Math.trunc(a / b)`; for a float use `Math.floor` or `Math.ceil`", a.ty),
        ))
    }

    /// Inlines the helper called by `call`. Its arguments are evaluated here; each scalar
    /// parameter becomes a variable (`helper.name`) assigned in the prelude, and a buffer
    /// parameter names the caller's buffer. Its body goes to the prelude, and its value is the
    /// expression of its final `return`. With `effect`, it is called as a statement.
    fn inline(&mut self, call: &ast::Expr, want: Option<Scalar>, effect: bool) -> R<Expr> {
        let span = call.span.clone();
        let ast::ExprKind::Call { name, args, types, .. } = &call.kind else {
            return Err(Reported);
        };
        let def: &Func = self.helpers.get(name.as_str()).copied().ok_or(Reported)?;
        // What reading the helper found wrong counts where a kernel calls it.
        self.diagnostics.extend(def.diagnostics.iter().cloned());
        if self.inlining.contains(name) {
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!(
                    "`{name}` calls itself (through {}): kernels cannot recurse",
                    self.inlining.join(" → ")
                ),
            ));
        }
        if args.len() != def.params.len() {
            return Err(self.error(
                codes::BAD_CALL,
                span,
                format!("`{name}` takes {} arguments, not {}", def.params.len(), args.len()),
            ));
        }
        if types.len() > def.generics.len() {
            return Err(self.error(
                codes::BAD_CALL,
                span,
                format!(
                    "`{name}` takes {} type arguments, not {}",
                    def.generics.len(),
                    types.len()
                ),
            ));
        }
        // The template's type parameters: the written ones, then those its arguments give.
        let mut generics: HashMap<String, Ty> = HashMap::new();
        for (g, t) in def.generics.iter().zip(types) {
            let ty = self.ty(t)?;
            generics.insert(g.clone(), ty);
        }
        let mut bound = Vec::new();
        for (p, a) in def.params.iter().zip(args) {
            let Some(pty) = &p.ty else {
                return Err(self.error(
                    codes::BAD_ANNOTATION,
                    p.whole.clone(),
                    format!("parameter `{}` of `{name}` needs a type", p.name),
                ));
            };
            let ty = match &pty.kind {
                TypeKind::Generic(g) if !generics.contains_key(g) => {
                    let e = self.expr(a, None)?;
                    generics.insert(g.clone(), e.ty);
                    bound.push((p.name.clone(), e));
                    continue;
                }
                _ => {
                    let outer = std::mem::replace(&mut self.generics, generics.clone());
                    let ty = self.ty(pty);
                    self.generics = outer;
                    ty?
                }
            };
            let e = self.expr(a, scalar(ty))?;
            let fits = e.ty == ty
                || matches!((e.ty, ty), (Ty::Local(s, _) | Ty::Private(s, _), Ty::Buffer(t)) if s == t);
            let e = if fits {
                e
            } else {
                match self.convert(e, ty) {
                    Ok(e) => e,
                    Err(e) => {
                        return Err(self.error(
                            codes::TYPE_MISMATCH,
                            a.span.clone(),
                            format!(
                                "`{}` of `{name}` is `{ty}`, the argument is `{}`",
                                p.name, e.ty
                            ),
                        ));
                    }
                }
            };
            bound.push((p.name.clone(), e));
        }
        let outer_names = std::mem::take(&mut self.names);
        let outer_scopes = std::mem::take(&mut self.scopes);
        let outer_generics = std::mem::replace(&mut self.generics, generics);
        let outer_loops = std::mem::replace(&mut self.loops, 0);
        self.inlining.push(name.clone());
        let result = self.inline_body(def, name, bound, want, &span);
        self.inlining.pop();
        self.loops = outer_loops;
        self.generics = outer_generics;
        self.scopes = outer_scopes;
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

    fn inline_body(
        &mut self,
        def: &Func,
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
                    let shown = self.unique(format!("{name}.{pname}"));
                    let id = self.new_var(shown, e.ty, span.clone(), false);
                    self.names.insert(pname, id);
                    self.prelude.push(Stmt { kind: StmtKind::Assign(id, e), span: span.clone() });
                }
            }
        }
        self.scopes.push(Vec::new());
        let mut value = None;
        let mut result = Ok(());
        for (i, s) in def.body.iter().enumerate() {
            if let ast::StmtKind::Return(v) = &s.kind {
                if i + 1 != def.body.len() {
                    result = Err(self.error(
                        codes::UNSUPPORTED,
                        s.span.clone(),
                        "a helper returns at the end of its body only",
                    ));
                    break;
                }
                if let Some(e) = v {
                    match self.expr(e, want) {
                        Ok(e) => value = Some(e),
                        Err(r) => result = Err(r),
                    }
                }
                continue;
            }
            let mut extra = Vec::new();
            match self.stmt(s, &mut extra) {
                Ok(stmt) => {
                    self.prelude.extend(extra);
                    self.prelude.extend(stmt);
                }
                Err(r) => {
                    result = Err(r);
                    break;
                }
            }
        }
        self.close_scope();
        result.map(|()| value)
    }
}

/// The value zero of `s`.
fn zero(s: Scalar, span: Span) -> Expr {
    let kind = match s {
        Scalar::Bool => ExprKind::Bool(false),
        s if s.is_float() => ExprKind::Float(0.0),
        _ => ExprKind::Int(0),
    };
    Expr { kind, ty: Ty::Scalar(s), span }
}

/// `e` converted to `to`.
fn cast(e: Expr, to: Scalar) -> Expr {
    let span = e.span.clone();
    Expr { kind: ExprKind::Cast(Box::new(e)), ty: Ty::Scalar(to), span }
}

/// A literal constant `e` as a constant of `to`, where its value fits exactly (an integer
/// in the range of an integer type or any float type; a float in a float type).
fn constant(e: &Expr, to: Scalar) -> Option<Expr> {
    let kind = match (&e.kind, to) {
        (ExprKind::Int(v), s) if s.is_float() => ExprKind::Float(*v as f64),
        (ExprKind::Int(v), Scalar::I32) if i32::try_from(*v).is_ok() => ExprKind::Int(*v),
        (ExprKind::Int(v), Scalar::U32) if u32::try_from(*v).is_ok() => ExprKind::Int(*v),
        (ExprKind::Float(v), s) if s.is_float() => ExprKind::Float(*v),
        _ => return None,
    };
    Some(Expr { kind, ty: Ty::Scalar(to), span: e.span.clone() })
}

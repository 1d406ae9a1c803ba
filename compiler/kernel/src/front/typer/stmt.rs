//! Statements: conditions, `if`, `while`, `do`/`while` and `for` loops with their bounds.

use wave_diag::Span;

use super::{Builder, scalar};
use crate::front::ast::{self, TypeRef};
use crate::front::{R, codes};
use crate::hir::{BinOp, Expr, ExprKind, Scalar, Stmt, StmtKind, Ty, UnOp};

impl<'t> Builder<'t, '_> {
    /// A statement. Most give one HIR statement; a declaration of an array gives none, and a
    /// `do`/`while` gives its flag's assignment first (into `out`).
    pub(super) fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> R<Option<Stmt>> {
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
            ast::StmtKind::Array { name, name_span, local, elem, len, columns } => {
                self.array(name, name_span, *local, elem, (len, columns.as_ref()), span)?;
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
                    step,
                    body,
                    &span,
                );
                self.close_scope();
                r?
            }
            ast::StmtKind::Seq(stmts) => {
                // Each with the prelude its expressions need, into the enclosing list.
                for s in stmts {
                    let outer = std::mem::take(&mut self.prelude);
                    let result = self.stmt(s, out);
                    let before = std::mem::replace(&mut self.prelude, outer);
                    out.extend(before);
                    if let Ok(Some(stmt)) = result {
                        out.push(stmt);
                    }
                }
                return Ok(None);
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
            ast::StmtKind::Return(value) if self.returning.is_some() => {
                return self.early_return(value.as_ref(), span, out);
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

    /// A `return` in a helper that returns early: its value into the helper's result (the
    /// first makes it), the flag set, and the helper's loop left.
    fn early_return(
        &mut self,
        value: Option<&ast::Expr>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> R<Option<Stmt>> {
        let (want, flag, result, name) = match &self.returning {
            Some(r) => (r.want, r.flag, r.result, r.name.clone()),
            None => return Err(crate::front::Reported),
        };
        if let Some(v) = value {
            let e = self.expr(v, result.map_or(want, |r| scalar(self.vars[r.0 as usize].ty)))?;
            let r = match result {
                Some(r) => r,
                None => {
                    // (The first value's type: a literal takes the one the call's context
                    // wants.)
                    let ty = e.ty;
                    let r = self.new_var(
                        self.unique(format!("{name}.result")),
                        ty,
                        span.clone(),
                        false,
                    );
                    if let Some(ret) = &mut self.returning {
                        ret.result = Some(r);
                    }
                    r
                }
            };
            let ty = self.vars[r.0 as usize].ty;
            let e = match self.convert(e, ty) {
                Ok(e) => e,
                Err(e) => {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        v.span.clone(),
                        format!("`{name}` returned `{ty}` before, this value is `{}`", e.ty),
                    ));
                }
            };
            out.push(Stmt { kind: StmtKind::Assign(r, e), span: span.clone() });
        }
        let yes =
            Expr { kind: ExprKind::Bool(true), ty: Ty::Scalar(Scalar::Bool), span: span.clone() };
        if self.loops == 0 {
            return Ok(Some(Stmt { kind: StmtKind::Assign(flag, yes), span }));
        }
        out.push(Stmt { kind: StmtKind::Assign(flag, yes), span: span.clone() });
        Ok(Some(Stmt { kind: StmtKind::Break, span }))
    }

    pub(super) fn condition(&mut self, c: &ast::Expr) -> R<Expr> {
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
    pub(super) fn loop_condition(&mut self, c: &ast::Expr, span: &Span) -> R<Expr> {
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
    pub(super) fn do_while(
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

    pub(super) fn int_const(&self, v: i64, s: Scalar, span: Span) -> Expr {
        Expr { kind: ExprKind::Int(v), ty: Ty::Scalar(s), span }
    }

    /// An integer loop bound.
    pub(super) fn bound(&mut self, e: &ast::Expr, want: Option<Scalar>) -> R<Expr> {
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
    pub(super) fn for_stmt(
        &mut self,
        counter: (&str, &Span, Option<&TypeRef>, bool),
        start: Option<&ast::Expr>,
        end: &ast::Expr,
        step: &ast::Expr,
        body: &[ast::Stmt],
        span: &Span,
    ) -> R<StmtKind> {
        // The step: a constant (a literal, a module constant, arithmetic on them).
        let before = self.prelude.len();
        let typed = self.expr(step, Some(Scalar::I32))?;
        let value = if self.prelude.len() == before { super::fold(&typed) } else { None };
        self.prelude.truncate(before);
        let rust = self.dialect.language == crate::Language::Rust;
        let step = match value {
            Some(v) if v != 0 && (!rust || v > 0) && i32::try_from(v).is_ok() => v,
            _ => {
                let what = match self.dialect.language {
                    crate::Language::Python => "the step of `range` is a non-zero integer constant",
                    crate::Language::Rust => "`step_by` takes a positive integer constant",
                    _ => "a loop's step is a non-zero integer constant",
                };
                return Err(self.error(codes::UNSUPPORTED, step.span.clone(), what));
            }
        };
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
        let name = var;
        let var = if declare {
            let id = self.new_var(self.shown(var), start.ty, var_span.clone(), false);
            self.bind(var.to_owned(), id);
            id
        } else {
            self.declare(var, var_span, start.ty)?
        };
        // An `i32` counter from a constant at least 0, counting up and not assigned in the
        // body, is never negative: it meets a `u32` as one (`range(4)` beside a `u32`).
        let natural = start.ty == Ty::Scalar(Scalar::I32)
            && step > 0
            && matches!(start.kind, ExprKind::Int(v) if v >= 0)
            && !assigns(body, name);
        if natural {
            self.naturals.insert(var);
        }
        self.loops += 1;
        let body = self.block(body);
        self.loops -= 1;
        self.naturals.remove(&var);
        Ok(StmtKind::For { var, start, end, step, body })
    }
}

/// `body` assigns the name `name` (not a new variable of that name in a nested block).
fn assigns(body: &[ast::Stmt], name: &str) -> bool {
    body.iter().any(|s| match &s.kind {
        ast::StmtKind::Assign { target, .. } => {
            matches!(&target.kind, ast::ExprKind::Name(n) if n == name)
        }
        ast::StmtKind::If(_, a, b) => assigns(a, name) || assigns(b, name),
        ast::StmtKind::While(_, b)
        | ast::StmtKind::DoWhile(b, _)
        | ast::StmtKind::Block(b)
        | ast::StmtKind::Seq(b) => assigns(b, name),
        ast::StmtKind::For { var, body, .. } => var == name || assigns(body, name),
        _ => false,
    })
}

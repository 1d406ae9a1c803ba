//! Declarations and assignments: names made unique, `let` and its kin, plain, compound and
//! Python-style assignment, which buffers may be written, and local and private arrays.

use wave_diag::{Diagnostic, Span};

use super::{Builder, MAX_PRIVATE, scalar, zero};
use crate::Language;
use crate::front::ast::{self, Conversions, Op, TypeRef};
use crate::front::{R, Reported, codes};
use crate::hir::{Expr, ExprKind, Scalar, Stmt, StmtKind, Ty, VarId};

impl<'t> Builder<'t, '_> {
    /// `name`, or `name#2`, `name#3`, ... when a variable already has it (a helper inlined
    /// more than once, a shadowed `let`).
    pub(super) fn unique(&self, name: String) -> String {
        let taken = |n: &str| self.vars.iter().any(|v| v.name == n);
        if !taken(&name) {
            return name;
        }
        (2..).map(|i| format!("{name}#{i}")).find(|n| !taken(n)).unwrap_or(name)
    }

    /// The name a new variable `text` shows in HIR (and in the debugger).
    pub(super) fn shown(&self, text: &str) -> String {
        match self.inlining.last() {
            Some(h) => self.unique(format!("{h}.{text}")),
            None if self.dialect.block_scopes => self.unique(text.to_owned()),
            None => text.to_owned(),
        }
    }

    /// Python: the variable `name` as the target of an assignment of type `ty`: declared by
    /// its first assignment, and of that type afterwards.
    pub(super) fn declare(&mut self, text: &str, span: &Span, ty: Ty) -> R<VarId> {
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
    pub(super) fn let_stmt(
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
    pub(super) fn assign(
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
                        Language::Rust if var.param => {
                            format!("make the parameter mutable, `mut {name}`")
                        }
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
                // A `u8` or `u16` element is a `u32` value, stored as its low bits.
                let (current, value_ty) = if elem.is_narrow() {
                    (super::cast(current, Scalar::U32), Scalar::U32)
                } else {
                    (current, elem)
                };
                let v = self.compound(current, op, value, &span)?;
                match self.convert(v, Ty::Scalar(value_ty)) {
                    Ok(v) => {
                        let v = if elem.is_narrow() { super::cast(v, elem) } else { v };
                        Ok(Stmt { kind: StmtKind::Store(buffer, index, v), span })
                    }
                    Err(v) => {
                        let hint = match scalar(v.ty) {
                            Some(_) if !self.python() => {
                                format!(": convert it, `{}`", self.cast_hint(value_ty, &value.span))
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
    pub(super) fn compound(
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
    pub(super) fn python_assign(
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
    pub(super) fn writable(&mut self, buffer: &Expr, span: &Span) -> R<()> {
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
    pub(super) fn array(
        &mut self,
        name: &str,
        name_span: &Span,
        local: bool,
        elem: &TypeRef,
        (len, columns): (&ast::Expr, Option<&ast::Expr>),
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
        let n = match self.length(len)? {
            Some(rows) => match columns {
                Some(c) if !local => {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        c.span.clone(),
                        "a private array has one dimension (index it `i * columns + j`)",
                    ));
                }
                Some(c) => {
                    let cols = self.length(c)?;
                    if let Some(cols) = cols {
                        self.pending_columns = Some(cols);
                    }
                    cols.and_then(|cols| rows.checked_mul(cols))
                }
                None => Some(rows),
            },
            None => None,
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
        if let Some(cols) = self.pending_columns.take() {
            self.columns.insert(id, cols);
        }
        self.bind(name.to_owned(), id);
        Ok(())
    }

    /// An array's length (or one dimension): a literal, a module constant, or arithmetic on
    /// them, positive.
    fn length(&mut self, len: &ast::Expr) -> R<Option<u32>> {
        let before = self.prelude.len();
        let n = match self.expr(len, Some(Scalar::U32)) {
            Ok(e) if self.prelude.len() == before => {
                super::fold(&e).and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0)
            }
            Err(Reported) if matches!(len.kind, ast::ExprKind::Error) => None,
            Err(Reported) => return Err(Reported),
            Ok(_) => None,
        };
        self.prelude.truncate(before);
        Ok(n)
    }

    /// `buffer[index]`: the buffer, the index and the element type.
    pub(super) fn element(
        &mut self,
        base: &ast::Expr,
        index: &ast::Expr,
    ) -> R<(Expr, Expr, Scalar)> {
        // `t[i][j]` of a 2D local array: element `i · columns + j`.
        if let ast::ExprKind::Index(inner, row) = &base.kind
            && let ast::ExprKind::Name(n) = &inner.kind
            && let Some(&id) = self.names.get(n)
            && let Some(&cols) = self.columns.get(&id)
        {
            let ty = self.vars[id.0 as usize].ty;
            let Ty::Local(elem, _) = ty else { return Err(Reported) };
            let array = Expr { kind: ExprKind::Var(id), ty, span: inner.span.clone() };
            let r = self.index(row)?;
            let c = self.index(index)?;
            let u = Ty::Scalar(Scalar::U32);
            let u32_of = |e: Expr| if e.ty == u { e } else { super::cast(e, Scalar::U32) };
            let (r, c) = (u32_of(r), u32_of(c));
            let at = r.span.start..c.span.end;
            let k = Expr { kind: ExprKind::Int(i64::from(cols)), ty: u, span: at.clone() };
            let scaled = Expr {
                kind: ExprKind::Binary(crate::hir::BinOp::Mul, Box::new(r), Box::new(k)),
                ty: u,
                span: at.clone(),
            };
            let idx = Expr {
                kind: ExprKind::Binary(crate::hir::BinOp::Add, Box::new(scaled), Box::new(c)),
                ty: u,
                span: at,
            };
            return Ok((array, idx, elem));
        }
        if let ast::ExprKind::Name(n) = &base.kind
            && let Some(id) = self.names.get(n)
            && let Some(cols) = self.columns.get(id)
        {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                base.span.start..index.span.end,
                format!("`{n}` has two dimensions ({cols} columns): index it `{n}[i][j]`"),
            ));
        }
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
        let idx = self.index(index)?;
        Ok((buffer, idx, elem))
    }

    /// An index: an integer (a float one is E0401, with the conversion to write).
    fn index(&mut self, index: &ast::Expr) -> R<Expr> {
        let idx = self.expr(index, Some(Scalar::U32))?;
        if !scalar(idx.ty).is_some_and(Scalar::is_int) {
            let how = if self.dialect.conversions == Conversions::TypeScript {
                "narrow it"
            } else {
                "convert it"
            };
            let hint = match scalar(idx.ty) {
                Some(s) if s != Scalar::Bool => {
                    format!(": {how}, `{}`", self.cast_hint(Scalar::U32, &index.span))
                }
                _ => String::new(),
            };
            return Err(self.error(
                codes::TYPE_MISMATCH,
                index.span.clone(),
                format!("an index is `i32` or `u32`, not `{}`{hint}", idx.ty),
            ));
        }
        Ok(idx)
    }
}

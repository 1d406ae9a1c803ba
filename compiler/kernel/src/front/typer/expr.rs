//! Expressions: implicit conversions and the usual arithmetic conversions, operators,
//! literals and names, and explicit conversions.

use wave_diag::Span;

use super::{Builder, cast, constant, rank, scalar};
use crate::Language;
use crate::front::ast::{self, Conversions, Op, UnaryOp};
use crate::front::{R, Reported, codes};
use crate::hir::{BinOp, Expr, ExprKind, Scalar, Ty, UnOp};

impl<'t> Builder<'t, '_> {
    /// `e` as a value of type `to`: itself, or converted where the language converts
    /// implicitly (a constant that fits; a widening); else `Err(e)`.
    pub(super) fn convert(&self, e: Expr, to: Ty) -> Result<Expr, Expr> {
        if e.ty == to {
            return Ok(e);
        }
        if to == Ty::Scalar(Scalar::U32) && self.natural(&e) {
            return Ok(cast(e, Scalar::U32));
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
    pub(super) fn unify(&self, a: Expr, b: Expr) -> (Expr, Expr) {
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

    /// `e` is a loop counter that is never negative (see `naturals`).
    fn natural(&self, e: &Expr) -> bool {
        matches!(e.kind, ExprKind::Var(v) if self.naturals.contains(&v))
    }

    pub(super) fn binary(&mut self, op: Op, sym: &str, a: Expr, b: Expr, span: Span) -> R<Expr> {
        // A counter that is never negative meets a `u32` as one.
        let u = Ty::Scalar(Scalar::U32);
        let (a, b) = match (a.ty == u, b.ty == u) {
            (true, false) if self.natural(&b) => (a, cast(b, Scalar::U32)),
            (false, true) if self.natural(&a) => (cast(a, Scalar::U32), b),
            _ => (a, b),
        };
        let binop = match op {
            Op::Pow => return self.power(a, b, span, sym),
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
            // The right side converted to the left's type, as written in the language.
            let like = match scalar(a.ty) {
                Some(s) if scalar(b.ty).is_some() => self.cast_hint(s, &b.span),
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
    pub(super) fn operands(
        &mut self,
        l: &ast::Expr,
        r: &ast::Expr,
        want: Option<Scalar>,
    ) -> R<(Expr, Expr)> {
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

    pub(super) fn expr(&mut self, n: &ast::Expr, want: Option<Scalar>) -> R<Expr> {
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
                None if self.helpers.get(name.as_str()).is_some_and(|f| f.constant.is_some()) => {
                    self.constant_value(name, want, span)
                }
                None if self.poisoned.contains(name) => Err(Reported),
                None => {
                    let close =
                        wave_diag::did_you_mean(name, self.names.keys().map(String::as_str))
                            .map(str::to_owned);
                    let reported = self.error(
                        codes::UNKNOWN_NAME,
                        span.clone(),
                        format!("unknown name `{name}`"),
                    );
                    if let (Some(close), Some(d)) = (close, self.diagnostics.last_mut()) {
                        d.suggest_replacement(span, &close);
                    }
                    Err(reported)
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
                let load = e(ExprKind::Load(Box::new(buffer), Box::new(index)), Ty::Scalar(elem))?;
                // A `u8` or `u16` element is read as a `u32`.
                Ok(if elem.is_narrow() { cast(load, Scalar::U32) } else { load })
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

    pub(super) fn unary(
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

    /// The value of the module-level constant `name`, used at `span`: its expression, typed
    /// here (an untyped one like a literal, in the type the context wants), in a scope of its
    /// own, every part placed at the use.
    pub(super) fn constant_value(
        &mut self,
        name: &str,
        want: Option<Scalar>,
        span: Span,
    ) -> R<Expr> {
        let Some(def) = self.helpers.get(name).copied() else { return Err(Reported) };
        let declared = match &def.constant {
            Some(Some(t)) => Some(self.ty(t)?),
            _ => None,
        };
        let call = ast::Expr::new(
            ast::ExprKind::Call {
                name: name.to_owned(),
                callee: name.to_owned(),
                callee_span: span.clone(),
                args: Vec::new(),
                types: Vec::new(),
            },
            span.clone(),
        );
        let before = self.prelude.len();
        let value = self.inline(&call, declared.and_then(scalar).or(want), false)?;
        if self.prelude.len() != before || !constant_expr(&value) {
            self.prelude.truncate(before);
            return Err(self.error(
                codes::UNSUPPORTED,
                def.span.clone(),
                format!("the constant `{name}` is not computed from constants: a constant's value is arithmetic (and math functions) on literals and other constants"),
            ));
        }
        let mut value = match declared {
            Some(ty) => match self.convert(value, ty) {
                Ok(v) => v,
                Err(v) => {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        def.span.clone(),
                        format!(
                            "the constant `{name}` is declared `{ty}`, its value is `{}`",
                            v.ty
                        ),
                    ));
                }
            },
            None => value,
        };
        respan(&mut value, &span);
        Ok(value)
    }

    /// A written conversion of `arg` to `to` (`callee` as written, for messages).
    pub(super) fn conversion(
        &mut self,
        to: Scalar,
        arg: &ast::Expr,
        span: Span,
        callee: &str,
    ) -> R<Expr> {
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

/// `e` and every part of it placed at `span` (a constant's value, where it is used).
fn respan(e: &mut Expr, span: &Span) {
    e.span = span.clone();
    match &mut e.kind {
        ExprKind::Load(a, b) | ExprKind::Binary(_, a, b) => {
            respan(a, span);
            respan(b, span);
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => respan(a, span),
        ExprKind::Select(c, a, b) => {
            respan(c, span);
            respan(a, span);
            respan(b, span);
        }
        ExprKind::Call(_, args) => args.iter_mut().for_each(|a| respan(a, span)),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Var(_)
        | ExprKind::Special(_) => {}
    }
}

/// `e` is computed from constants only (literals, arithmetic, conversions, math functions).
fn constant_expr(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => true,
        ExprKind::Binary(_, a, b) => constant_expr(a) && constant_expr(b),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => constant_expr(a),
        ExprKind::Select(c, a, b) => constant_expr(c) && constant_expr(a) && constant_expr(b),
        ExprKind::Call(
            crate::hir::Intrinsic::Math(_)
            | crate::hir::Intrinsic::Min
            | crate::hir::Intrinsic::Max,
            args,
        ) => args.iter().all(constant_expr),
        ExprKind::Var(_) | ExprKind::Load(..) | ExprKind::Special(_) | ExprKind::Call(..) => false,
    }
}

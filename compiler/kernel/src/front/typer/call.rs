//! Calls: the intrinsics (their names, arguments and types) and helpers, inlined where they
//! are called.

use std::collections::HashMap;

use wave_diag::Span;

use super::{Builder, scalar, zero};
use crate::Language;
use crate::front::ast::{self, Conversions, Func, Op, TypeKind};
use crate::front::{R, Reported, codes};
use crate::hir::{
    AtomicOp, BinOp, Expr, ExprKind, Intrinsic, MathFn, Scalar, Special, Stmt, StmtKind, Ty, WaveOp,
};

/// The intrinsics' canonical names (besides `trunc`, the `atomic_*` family and the type
/// conversions), for recognising calls and for "did you mean".
const INTRINSIC_NAMES: [&str; 46] = [
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
    "exp",
    "log",
    "log10",
    "tanh",
    "pow",
    "popcount",
    "clz",
    "ctz",
];

impl<'t> Builder<'t, '_> {
    /// `name` is an intrinsic's canonical name.
    pub(super) fn intrinsic(&self, name: &str) -> bool {
        INTRINSIC_NAMES.contains(&name)
            || name == "trunc"
            || name.starts_with("atomic_")
            || Scalar::from_name(name).is_some()
    }

    pub(super) fn call(&mut self, n: &ast::Expr, want: Option<Scalar>) -> R<Expr> {
        let ast::ExprKind::Call { name, callee, callee_span, args, .. } = &n.kind else {
            return Err(Reported);
        };
        let span = n.span.clone();
        let full = callee.as_str();
        // TypeScript kernels written for the reference toolchain call the intrinsics bare and
        // in camelCase (`threadId()`, `workgroupId()`): the intrinsic, unless the file has a
        // function of that name.
        let camel;
        let name = if self.dialect.language == Language::TypeScript
            && name.bytes().any(|b| b.is_ascii_uppercase())
            && !self.helpers.contains_key(name.as_str())
            && self.intrinsic(&ast::snake_case(name))
        {
            camel = ast::snake_case(name);
            &camel
        } else {
            name
        };
        if !self.intrinsic(name) && self.helpers.contains_key(name.as_str()) {
            if self.helpers.get(name.as_str()).is_some_and(|f| f.constant.is_some()) {
                return Err(self.error(
                    codes::BAD_CALL,
                    callee_span.clone(),
                    format!("`{full}` is a constant, not a function: write `{full}`"),
                ));
            }
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
            if elem.is_narrow() {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[0].span.clone(),
                    format!("an atomic works on 32-bit elements, not `{}`", elem.name()),
                ));
            }
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
            if integer_only && !scalar(list[0].ty).is_some_and(|s| s != Scalar::Bool) {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    args[0].span.clone(),
                    format!("`{full}` takes a number, not `{}`", list[0].ty),
                ));
            }
            let signed_only = matches!(op, WaveOp::ReduceMin | WaveOp::ReduceMax);
            if signed_only && list[0].ty == Ty::Scalar(Scalar::U32) {
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
            "exp" => Some((Intrinsic::Math(MathFn::Exp), 1)),
            "log" => Some((Intrinsic::Math(MathFn::Log), 1)),
            "log10" => Some((Intrinsic::Math(MathFn::Log10), 1)),
            "tanh" => Some((Intrinsic::Math(MathFn::Tanh), 1)),
            "popcount" => Some((Intrinsic::Math(MathFn::Popcount), 1)),
            "clz" => Some((Intrinsic::Math(MathFn::Clz), 1)),
            "ctz" => Some((Intrinsic::Math(MathFn::Ctz), 1)),
            "min" => Some((Intrinsic::Min, 2)),
            "max" => Some((Intrinsic::Max, 2)),
            _ => None,
        };
        if name == "pow" {
            count(self, 2)?;
            return self.pow(&args[0], &args[1], want, span, full);
        }
        // `min(a, b, c)`: `min(min(a, b), c)`.
        if matches!(name.as_str(), "min" | "max") && args.len() > 2 {
            let mut fold = ast::Expr::new(
                ast::ExprKind::Call {
                    name: name.clone(),
                    callee: full.to_owned(),
                    callee_span: callee_span.clone(),
                    args: args[..2].to_vec(),
                    types: Vec::new(),
                },
                args[0].span.start..args[1].span.end,
            );
            for a in &args[2..] {
                let at = fold.span.start..a.span.end;
                fold = ast::Expr::new(
                    ast::ExprKind::Call {
                        name: name.clone(),
                        callee: full.to_owned(),
                        callee_span: callee_span.clone(),
                        args: vec![fold, a.clone()],
                        types: Vec::new(),
                    },
                    at,
                );
            }
            let mut e = self.call(&fold, want)?;
            e.span = span;
            return Ok(e);
        }
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
            if let Intrinsic::Math(m) = i
                && m.on_integers()
            {
                if !scalar(lead_ty).is_some_and(Scalar::is_int) {
                    return Err(self.error(
                        codes::TYPE_MISMATCH,
                        span,
                        format!(
                            "`{full}` counts the bits of an integer, not `{lead_ty}`: convert with `{}`",
                            self.dialect.cast(Scalar::U32, "...")
                        ),
                    ));
                }
                // C's and C++'s counts are `int`; Rust's, Python's and JavaScript's `u32`.
                let to =
                    if self.dialect.language == Language::Cpp { Scalar::I32 } else { Scalar::U32 };
                return Ok(Expr { kind: ExprKind::Call(i, list), ty: Ty::Scalar(to), span });
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
        let reported = self.error(
            codes::UNKNOWN_NAME,
            callee_span.clone(),
            format!("`{full}` is not an intrinsic or {what}"),
        );
        // The closest intrinsic or helper, spelled as this call spells the rest (`wave.expp`
        // → `wave.exp`, `std::tanhh` → `std::tanh`).
        let base = full.rsplit(['.', ':']).next().unwrap_or(full);
        // (Python's intrinsics are the `wave` module's, whatever module the call named.)
        let prefix = match &full[..full.len() - base.len()] {
            p if self.python() && !matches!(p, "" | "wave." | "wave_gpu." | "math.") => "wave.",
            p => p,
        };
        let helpers: Vec<String> = self.helpers.keys().map(|k| k.to_string()).collect();
        let suggestion = match wave_diag::did_you_mean(base, helpers.iter().map(String::as_str)) {
            Some(helper) if prefix.is_empty() => Some(helper.to_owned()),
            _ => wave_diag::did_you_mean(base, INTRINSIC_NAMES)
                .map(|intrinsic| format!("{prefix}{intrinsic}")),
        };
        if let (Some(suggestion), Some(d)) = (suggestion, self.diagnostics.last_mut()) {
            d.suggest_replacement(callee_span.clone(), &suggestion);
        }
        Err(reported)
    }

    /// `x ** y`, `pow(x, y)`, `x.powi(n)`: on floats (an integer exponent converted to the
    /// base's type), or on integers with a constant exponent of at least 0 (multiplications).
    pub(super) fn pow(
        &mut self,
        x: &ast::Expr,
        y: &ast::Expr,
        want: Option<Scalar>,
        span: Span,
        full: &str,
    ) -> R<Expr> {
        let (a, b) = self.operands(x, y, want)?;
        self.power(a, b, span, full)
    }

    /// [`Self::pow`] of typed operands.
    pub(super) fn power(&mut self, a: Expr, b: Expr, span: Span, full: &str) -> R<Expr> {
        let (a, b) =
            if self.dialect.conversions == Conversions::None { (a, b) } else { self.unify(a, b) };
        let (Some(s), Some(t)) = (scalar(a.ty), scalar(b.ty)) else {
            return Err(self.error(
                codes::TYPE_MISMATCH,
                span,
                format!("`{full}` takes numbers, not `{}` and `{}`", a.ty, b.ty),
            ));
        };
        if s == Scalar::Bool || t == Scalar::Bool {
            return Err(self.error(codes::TYPE_MISMATCH, span, format!("`{full}` takes numbers")));
        }
        let to = |b: Expr| super::constant(&b, s).unwrap_or_else(|| super::cast(b, s));
        let b = match (s.is_float(), t.is_float()) {
            (true, true) if s == t => b,
            // `x.powi(n)`: the integer exponent as the base's type.
            (true, false) => to(b),
            (false, false) if matches!(b.kind, ExprKind::Int(0..=64)) => to(b),
            (false, false) => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    b.span.clone(),
                    format!(
                        "an integer power takes a constant exponent from 0 to 64 (it is multiplications): for another, compute in floats, `{}`",
                        self.dialect.cast(Scalar::F32, "x")
                    ),
                ));
            }
            _ => {
                return Err(self.error(
                    codes::TYPE_MISMATCH,
                    span,
                    format!("`{full}` of `{}` and `{}`: convert one side", a.ty, b.ty),
                ));
            }
        };
        let ty = a.ty;
        Ok(Expr { kind: ExprKind::Call(Intrinsic::Math(MathFn::Pow), vec![a, b]), ty, span })
    }

    /// TypeScript's `Math.trunc(a / b)`: integer division where `a` and `b` are integers.
    pub(super) fn trunc(&mut self, arg: &ast::Expr, want: Option<Scalar>, span: Span) -> R<Expr> {
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
    pub(super) fn inline(
        &mut self,
        call: &ast::Expr,
        want: Option<Scalar>,
        effect: bool,
    ) -> R<Expr> {
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

    pub(super) fn inline_body(
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
                    let mutable =
                        def.params.iter().find(|p| p.name == pname).is_none_or(|p| p.mutable);
                    self.fixed[id.0 as usize] = !mutable;
                    self.names.insert(pname, id);
                    self.prelude.push(Stmt { kind: StmtKind::Assign(id, e), span: span.clone() });
                }
            }
        }
        self.scopes.push(Vec::new());
        let early = early_return(&def.body);
        let outer_returning = self.returning.take();
        let mut init_at = None;
        let body: Vec<ast::Stmt> = if early {
            let flag = self.new_var(
                self.unique(format!("{name}.returned")),
                Ty::Scalar(Scalar::Bool),
                span.clone(),
                false,
            );
            self.names.insert(super::RETURNED.to_owned(), flag);
            self.prelude.push(Stmt {
                kind: StmtKind::Assign(
                    flag,
                    Expr {
                        kind: ExprKind::Bool(false),
                        ty: Ty::Scalar(Scalar::Bool),
                        span: span.clone(),
                    },
                ),
                span: span.clone(),
            });
            init_at = Some(self.prelude.len());
            self.returning =
                Some(super::Returning { name: name.to_owned(), flag, result: None, want });
            guard(&def.body, false)
        } else {
            def.body.clone()
        };
        let mut value = None;
        let mut result = Ok(());
        for (i, s) in body.iter().enumerate() {
            if !early && let ast::StmtKind::Return(v) = &s.kind {
                if i + 1 != body.len() {
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
        if early {
            let returning = std::mem::replace(&mut self.returning, outer_returning);
            if let (Some(r), Some(at)) = (returning.and_then(|r| r.result), init_at) {
                // The value starts at zero: a path that ends without `return` gives it.
                let ty = self.vars[r.0 as usize].ty;
                if let Some(s) = scalar(ty) {
                    self.prelude.insert(
                        at,
                        Stmt {
                            kind: StmtKind::Assign(r, zero(s, span.clone())),
                            span: span.clone(),
                        },
                    );
                }
                value = Some(Expr { kind: ExprKind::Var(r), ty, span: span.clone() });
            }
        } else {
            self.returning = outer_returning;
        }
        self.close_scope();
        result.map(|()| value)
    }
}

/// `body` returns other than by its last statement.
fn early_return(body: &[ast::Stmt]) -> bool {
    body.iter().enumerate().any(|(i, s)| match &s.kind {
        ast::StmtKind::Return(_) => i + 1 != body.len(),
        _ => returns(std::slice::from_ref(s)),
    })
}

/// `body` has a `return` somewhere.
fn returns(body: &[ast::Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        ast::StmtKind::Return(_) => true,
        ast::StmtKind::If(_, a, b) => returns(a) || returns(b),
        ast::StmtKind::While(_, b)
        | ast::StmtKind::DoWhile(b, _)
        | ast::StmtKind::Block(b)
        | ast::StmtKind::Seq(b)
        | ast::StmtKind::For { body: b, .. } => returns(b),
        _ => false,
    })
}

/// `body` of a helper that returns early, with what follows a statement that may return
/// guarded: inside a loop by `if returned { break }`, elsewhere by running only where the
/// helper has not returned.
fn guard(body: &[ast::Stmt], in_loop: bool) -> Vec<ast::Stmt> {
    use ast::StmtKind as S;
    let mut out = Vec::new();
    for (k, s) in body.iter().enumerate() {
        let kind = match &s.kind {
            S::If(c, a, b) => S::If(c.clone(), guard(a, in_loop), guard(b, in_loop)),
            S::While(c, b) => S::While(c.clone(), guard(b, true)),
            S::DoWhile(b, c) => S::DoWhile(guard(b, true), c.clone()),
            S::Block(b) => S::Block(guard(b, in_loop)),
            S::Seq(b) => S::Seq(guard(b, in_loop)),
            S::For { var, var_span, ty, declare, start, end, step, body } => S::For {
                var: var.clone(),
                var_span: var_span.clone(),
                ty: ty.clone(),
                declare: *declare,
                start: start.clone(),
                end: end.clone(),
                step: step.clone(),
                body: guard(body, true),
            },
            other => other.clone(),
        };
        out.push(ast::Stmt { kind, span: s.span.clone() });
        if matches!(s.kind, S::Return(_)) {
            // What follows cannot run.
            break;
        }
        if k + 1 == body.len() || !returns(std::slice::from_ref(s)) {
            continue;
        }
        let at = s.span.clone();
        let flag = ast::Expr::new(ast::ExprKind::Name(super::RETURNED.to_owned()), at.clone());
        if in_loop {
            out.push(ast::Stmt {
                kind: S::If(flag, vec![ast::Stmt { kind: S::Break, span: at.clone() }], Vec::new()),
                span: at,
            });
        } else {
            let not = ast::Expr::new(
                ast::ExprKind::Unary(ast::UnaryOp::Not, "not".into(), Box::new(flag)),
                at.clone(),
            );
            out.push(ast::Stmt {
                kind: S::If(not, guard(&body[k + 1..], false), Vec::new()),
                span: at,
            });
            break;
        }
    }
    out
}

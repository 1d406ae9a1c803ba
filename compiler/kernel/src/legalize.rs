//! MIR legalisation: what the code generator takes, run after the optimiser at every level.
//!
//! `f16` values live in the low half of a register. WAVE has `hadd`, `hsub` and `hmul` on
//! halves and conversions to and from `f32`; everything else on `f16` (division, negation,
//! comparisons, minimum, math functions, conversions to and from integers) is done in `f32`
//! and rounded back. That gives the correctly rounded `f16` result: the `f32` result of one
//! operation on `f16` values, rounded to `f16`, is the `f16` operation's result (`f32` has
//! more than twice the precision plus two bits, so the double rounding is innocuous).
//!
//! `f64` values live in register pairs. WAVE has `dadd`, `dsub`, `dmul`, `ddiv`, `dsqrt`,
//! `dma` and conversions to and from `f32`, and no `f64` comparison. The rest is built from
//! those, exactly:
//! - `a < b` (and the others): the sign of `a - b`, which is exact in sign, scaled by 2^1200
//!   so that no difference is too small for `f32`, converted to `f32` and compared with 0;
//!   where the difference is NaN, `a` and `b` are the same infinity (equal) if their `f32`
//!   values are equal, else one is NaN (unordered);
//! - `-a` is `-0.0 - a`; `abs(a)` is `-0.0 - a` where `a` is negative, else `a + 0.0`;
//!   `min`/`max` are a comparison and selects that, like `fmin`/`fmax`, return the other
//!   operand where one is NaN; `rsqrt(a)` is `1.0 / sqrt(a)`;
//! - `i32`/`u32` to `f64`: the two 16-bit halves, each exact in `f32`, then `hi * 65536 + lo`;
//!   `f16` to `f64` through `f32` (exact).
//!
//! - `floor(a)`: `(a + m) - m` with `m = ±2^52` rounds to an integer where `|a| < 2^52`
//!   (beyond, `a` is one), less 1 where that rounded up; `ceil(a)` is `-floor(-a)`;
//! - `f64` to `i32`/`u32` like `f32` to them (toward zero, saturating, NaN to 0): the
//!   integer made exactly, clamped, then split into `f32(t)` and the rest, each converted
//!   exactly.
//!
//! - `a % b` is `a - trunc(a / b) * b`, as on `f32`; shuffles and broadcasts move both
//!   halves.
//!
//! Refused, with the span: `f64` to `f16` (convert to `f32` first), the transcendental
//! functions on `f64`, atomics, and wave reductions and votes on `f64`.

use crate::hir::{BinOp, Intrinsic, MathFn, Scalar, Ty, UnOp, WaveOp};
use crate::mir::{Func, Inst, Op, Value};
/// (Kept here too, where they were: the `f16` encoding is MIR's.)
pub use crate::mir::{f16_bits, f16_value};

/// Rewrites what the code generator does not take directly. Returns the problems it cannot
/// rewrite (an atomic on an `f16` buffer), with their spans.
pub fn legalize(f: &mut Func) -> Vec<(wave_diag::Span, String)> {
    let mut problems = Vec::new();
    let f16 = Ty::Scalar(Scalar::F16);
    let f32 = Ty::Scalar(Scalar::F32);
    for b in 0..f.blocks.len() {
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len());
        for inst in insts {
            if let Some(inst) = legalize_f64(f, inst, &mut out, &mut problems) {
                out.push(inst);
            }
        }
        f.blocks[b].insts = out;
    }
    for b in 0..f.blocks.len() {
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len());
        for inst in insts {
            let span = inst.span.clone();
            let ty = |f: &Func, v: Value| f.types[v.0 as usize];
            let dst_ty = inst.dst.map(|d| ty(f, d));
            let reads_f16 = inst.op.operands().iter().any(|v| ty(f, *v) == f16);
            let direct = match &inst.op {
                // Loads, stores, phis (elsewhere), selects and register moves of wave
                // operations keep f16 as it is; so do the half instructions.
                Op::Load(..) | Op::Store(..) | Op::Select(..) | Op::Float(_) => true,
                Op::Call(Intrinsic::Wave(_), _) => true,
                Op::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, ..) => true,
                Op::Cast(a) => ty(f, *a) == f32 || dst_ty == Some(f32),
                _ => false,
            };
            if (dst_ty != Some(f16) && !reads_f16) || direct {
                if let Op::Atomic(..) = inst.op
                    && dst_ty == Some(f16)
                {
                    problems.push((span, "atomics on `f16` buffers are not supported".into()));
                }
                out.push(inst);
                continue;
            }
            if let Op::Atomic(..) = inst.op {
                problems.push((span, "atomics on `f16` buffers are not supported".into()));
                out.push(inst);
                continue;
            }
            // Widen the f16 operands, compute in f32, and round an f16 result back.
            let fresh = |f: &mut Func, t: Ty| {
                f.types.push(t);
                Value(f.types.len() as u32 - 1)
            };
            let mut op = inst.op.clone();
            let mut widened: Vec<(Value, Value)> = Vec::new();
            for v in inst.op.operands() {
                if ty(f, v) == f16 && !widened.iter().any(|(x, _)| *x == v) {
                    let w = fresh(f, f32);
                    // A constant widens to the f32 constant of the same value.
                    let constant =
                        f.blocks.iter().flat_map(|b| &b.insts).chain(&out).find_map(|i| {
                            match i.op {
                                Op::Float(x) if i.dst == Some(v) => Some(x),
                                _ => None,
                            }
                        });
                    let op = match constant {
                        Some(x) => Op::Float(f16_value(f16_bits(x))),
                        None => Op::Cast(v),
                    };
                    out.push(Inst { dst: Some(w), op, span: span.clone() });
                    widened.push((v, w));
                }
            }
            op.map_operands(&mut |v| widened.iter().find(|(x, _)| *x == v).map_or(v, |(_, w)| *w));
            match (inst.dst, dst_ty) {
                (Some(d), Some(t)) if t == f16 => {
                    let w = fresh(f, f32);
                    out.push(Inst { dst: Some(w), op, span: span.clone() });
                    out.push(Inst { dst: Some(d), op: Op::Cast(w), span });
                }
                _ => out.push(Inst { dst: inst.dst, op, span }),
            }
        }
        f.blocks[b].insts = out;
    }
    problems
}

const F64: Ty = Ty::Scalar(Scalar::F64);
const F32: Ty = Ty::Scalar(Scalar::F32);
const BOOL: Ty = Ty::Scalar(Scalar::Bool);
/// 2^600: twice, it brings the smallest `f64` (2^-1074) into `f32`'s normal range.
const SCALE: f64 = 4.149515568880993e180;

/// Writes instructions into `out` for one rewritten `f64` operation.
struct Emit<'a> {
    f: &'a mut Func,
    out: &'a mut Vec<Inst>,
    span: wave_diag::Span,
}

impl Emit<'_> {
    fn push(&mut self, op: Op, ty: Ty) -> Value {
        self.f.types.push(ty);
        let v = Value(self.f.types.len() as u32 - 1);
        self.out.push(Inst { dst: Some(v), op, span: self.span.clone() });
        v
    }

    fn float(&mut self, x: f64, ty: Ty) -> Value {
        self.push(Op::Float(x), ty)
    }

    fn bin(&mut self, op: BinOp, a: Value, b: Value, ty: Ty) -> Value {
        self.push(Op::Binary(op, a, b), ty)
    }

    fn select(&mut self, c: Value, a: Value, b: Value, ty: Ty) -> Value {
        self.push(Op::Select(c, a, b), ty)
    }

    fn cast(&mut self, a: Value, ty: Ty) -> Value {
        self.push(Op::Cast(a), ty)
    }

    /// `x` as `f32`, scaled by 2^1200 first (its sign, exactly; NaN stays NaN).
    fn sign_of(&mut self, x: Value) -> Value {
        let k = self.float(SCALE, F64);
        let once = self.bin(BinOp::Mul, x, k, F64);
        let twice = self.bin(BinOp::Mul, once, k, F64);
        self.cast(twice, F32)
    }

    /// `a op b` on `f64`, as a comparison of `f32` values; `dst` is the result (a new value
    /// when `None`).
    fn compare(&mut self, op: BinOp, a: Value, b: Value, dst: Option<Value>) -> Value {
        let (fa, fb) = (self.cast(a, F32), self.cast(b, F32));
        let d = self.bin(BinOp::Sub, a, b, F64);
        let fd = self.sign_of(d);
        let ordered = self.bin(BinOp::Eq, fd, fd, BOOL);
        let same = self.bin(BinOp::Eq, fa, fb, BOOL);
        let zero = self.float(0.0, F32);
        let nan = self.float(f64::NAN, F32);
        let otherwise = self.select(same, zero, nan, F32);
        let x = self.select(ordered, fd, otherwise, F32);
        let zero = self.float(0.0, F32);
        match dst {
            Some(d) => {
                self.out.push(Inst {
                    dst: Some(d),
                    op: Op::Binary(op, x, zero),
                    span: self.span.clone(),
                });
                d
            }
            None => self.bin(op, x, zero, BOOL),
        }
    }

    /// Puts `op` into `dst`.
    fn finish(&mut self, dst: Value, op: Op) {
        self.out.push(Inst { dst: Some(dst), op, span: self.span.clone() });
    }

    /// `f32(x) op c`: exact for the sign of an `x` that is 0 or at least 2^-126 from `c`
    /// in magnitude (an integer, or the difference of two nearby integers).
    fn test(&mut self, op: BinOp, x: Value, c: f64) -> Value {
        let fx = self.cast(x, F32);
        let k = self.float(c, F32);
        self.bin(op, fx, k, BOOL)
    }

    /// `floor(a)`: rounded to an integer by `(a + m) - m` with `m = ±2^52` (exact where
    /// `|a| < 2^52`; beyond, `a` is an integer), less 1 where that rounded up, and the sign of
    /// a zero result taken from `a` (`floor(-0.0)` is `-0.0`).
    fn floor(&mut self, a: Value, dst: Option<Value>) -> Value {
        let big = self.float(4503599627370496.0, F64);
        let below = self.bin(BinOp::Sub, a, big, F64);
        let above = self.bin(BinOp::Add, a, big, F64);
        let (lt, gt) = (self.test(BinOp::Lt, below, 0.0), self.test(BinOp::Gt, above, 0.0));
        let small = self.bin(BinOp::LogicAnd, lt, gt, BOOL);
        let negative = self.test(BinOp::Lt, a, 0.0);
        let minus = self.float(-4503599627370496.0, F64);
        let m = self.select(negative, minus, big, F64);
        let up = self.bin(BinOp::Add, a, m, F64);
        let r = self.bin(BinOp::Sub, up, m, F64);
        let over = self.bin(BinOp::Sub, r, a, F64);
        let over = self.sign_of(over);
        let zero = self.float(0.0, F32);
        let rounded_up = self.bin(BinOp::Gt, over, zero, BOOL);
        let one = self.float(1.0, F64);
        let less = self.bin(BinOp::Sub, r, one, F64);
        let r = self.select(rounded_up, less, r, F64);
        let is_zero = self.test(BinOp::Eq, r, 0.0);
        let z = self.float(0.0, F64);
        let signed = self.bin(BinOp::Mul, a, z, F64);
        let r = self.select(is_zero, signed, r, F64);
        self.done(dst, Op::Select(small, r, a), F64)
    }

    /// `op` into `dst`, or into a new value.
    fn done(&mut self, dst: Option<Value>, op: Op, ty: Ty) -> Value {
        match dst {
            Some(d) => {
                self.finish(d, op);
                d
            }
            None => self.push(op, ty),
        }
    }

    /// `ceil(a)`: `-floor(-a)`.
    fn ceil(&mut self, a: Value, dst: Option<Value>) -> Value {
        let z = self.float(-0.0, F64);
        let minus = self.bin(BinOp::Sub, z, a, F64);
        let f = self.floor(minus, None);
        let z = self.float(-0.0, F64);
        self.done(dst, Op::Binary(BinOp::Sub, z, f), F64)
    }

    /// `a` converted to `to` (i32 or u32) as `f32` converts: toward zero, saturating, NaN
    /// to 0. The integer `t` (made exactly) is `f32(t)`, at most 2^7 off for `|t| < 2^32`,
    /// plus the rest; each converts exactly, and where `f32(t)` rounded up to 2^31 (2^32),
    /// which the conversion saturates, one more wraps to the right bits.
    fn integer(&mut self, a: Value, to: Scalar, dst: Value) {
        let t = {
            let s = self.sign_of(a);
            let zero = self.float(0.0, F32);
            let negative = self.bin(BinOp::Lt, s, zero, BOOL);
            let (f, c) = (self.floor(a, None), self.ceil(a, None));
            self.select(negative, c, f, F64)
        };
        let (lo, hi) =
            if to == Scalar::I32 { (-2147483648.0, 2147483647.0) } else { (0.0, 4294967295.0) };
        let ty = Ty::Scalar(to);
        let (klo, khi) = (self.float(lo, F64), self.float(hi, F64));
        let under = self.bin(BinOp::Sub, t, klo, F64);
        let under = self.test(BinOp::Lt, under, 0.0);
        let t = self.select(under, klo, t, F64);
        let over = self.bin(BinOp::Sub, t, khi, F64);
        let over = self.test(BinOp::Gt, over, 0.0);
        let t = self.select(over, khi, t, F64);
        let head = self.cast(t, F32);
        let head64 = self.cast(head, F64);
        let rest = self.bin(BinOp::Sub, t, head64, F64);
        let rest = self.cast(rest, F32);
        // (The rest may be negative: it converts as i32, then wraps into the sum.)
        let h = self.cast(head, ty);
        let r = self.cast(rest, Ty::Scalar(Scalar::I32));
        let r = if to == Scalar::I32 { r } else { self.cast(r, ty) };
        let top = self.float(if to == Scalar::I32 { 2147483648.0 } else { 4294967296.0 }, F32);
        let saturated = self.bin(BinOp::Eq, head, top, BOOL);
        let one = self.push(Op::Int(1), ty);
        let nought = self.push(Op::Int(0), ty);
        let fix = self.select(saturated, one, nought, ty);
        let h = self.bin(BinOp::Add, h, fix, ty);
        let v = self.bin(BinOp::Add, h, r, ty);
        // NaN: 0.
        let fa = self.cast(a, F32);
        let nan = self.bin(BinOp::Ne, fa, fa, BOOL);
        let zero = self.push(Op::Int(0), ty);
        self.finish(dst, Op::Select(nan, zero, v));
    }
}

/// Rewrites one instruction on `f64` values into what the code generator takes, into `out`;
/// returns it unchanged when it needs nothing (the caller keeps it).
fn legalize_f64(
    f: &mut Func,
    inst: Inst,
    out: &mut Vec<Inst>,
    problems: &mut Vec<(wave_diag::Span, String)>,
) -> Option<Inst> {
    let ty = |f: &Func, v: Value| f.types[v.0 as usize];
    let dst_ty = inst.dst.map(|d| ty(f, d));
    let reads = inst.op.operands().iter().any(|v| ty(f, *v) == F64);
    if dst_ty != Some(F64) && !reads {
        return Some(inst);
    }
    let span = inst.span.clone();
    let refuse = |problems: &mut Vec<(wave_diag::Span, String)>, what: &str| {
        problems.push((span.clone(), format!("{what} is not supported on f64 yet")));
    };
    let Some(dst) = inst.dst else {
        // Stores (and nothing else without a result) take f64 as it is.
        return Some(inst);
    };
    let mut e = Emit { f, out, span: span.clone() };
    match inst.op.clone() {
        Op::Load(..) | Op::Store(..) | Op::Select(..) | Op::Float(_) => return Some(inst),
        Op::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, ..) => return Some(inst),
        Op::Binary(op, a, b) if op.is_comparison() => {
            e.compare(op, a, b, Some(dst));
        }
        Op::Binary(BinOp::Rem, a, b) => {
            // a - trunc(a / b) * b, as on f32.
            let q = e.bin(BinOp::Div, a, b, F64);
            let s = e.sign_of(q);
            let zero = e.float(0.0, F32);
            let negative = e.bin(BinOp::Lt, s, zero, BOOL);
            let (f, c) = (e.floor(q, None), e.ceil(q, None));
            let t = e.select(negative, c, f, F64);
            let m = e.bin(BinOp::Mul, t, b, F64);
            e.finish(dst, Op::Binary(BinOp::Sub, a, m));
        }
        Op::Binary(op, ..) => refuse(problems, &format!("`{}`", op.symbol())),
        Op::Unary(UnOp::Neg, a) => {
            let z = e.float(-0.0, F64);
            e.finish(dst, Op::Binary(BinOp::Sub, z, a));
        }
        Op::Unary(..) => refuse(problems, "this operator"),
        Op::Cast(a) => {
            let from = ty(e.f, a);
            match (from, dst_ty) {
                (Ty::Scalar(Scalar::F32), _) | (_, Some(Ty::Scalar(Scalar::F32))) => {
                    return Some(inst);
                }
                (x, Some(y)) if x == y => return Some(inst),
                (Ty::Scalar(Scalar::F16 | Scalar::Bool), _) => {
                    let w = e.cast(a, F32);
                    e.finish(dst, Op::Cast(w));
                }
                (Ty::Scalar(s @ (Scalar::I32 | Scalar::U32)), _) => {
                    let t = Ty::Scalar(s);
                    let sixteen = e.push(Op::Int(16), t);
                    let hi = e.bin(BinOp::Shr, a, sixteen, t);
                    let mask = e.push(Op::Int(0xffff), t);
                    let lo = e.bin(BinOp::And, a, mask, t);
                    let (hi, lo) = (e.cast(hi, F32), e.cast(lo, F32));
                    let (hi, lo) = (e.cast(hi, F64), e.cast(lo, F64));
                    let k = e.float(65536.0, F64);
                    let high = e.bin(BinOp::Mul, hi, k, F64);
                    e.finish(dst, Op::Binary(BinOp::Add, high, lo));
                }
                (_, Some(Ty::Scalar(Scalar::Bool))) => {
                    let z = e.float(0.0, F64);
                    e.compare(BinOp::Ne, a, z, Some(dst));
                }
                (_, Some(Ty::Scalar(s @ (Scalar::I32 | Scalar::U32)))) => e.integer(a, s, dst),
                (_, Some(to)) => refuse(
                    problems,
                    &format!("converting to {} (convert to f32 first: `{}(f32(x))`)", to, to),
                ),
                _ => return Some(inst),
            }
        }
        Op::Call(Intrinsic::Math(MathFn::Sqrt | MathFn::Fma), _) => return Some(inst),
        Op::Call(Intrinsic::Math(MathFn::Floor), args) => {
            e.floor(args[0], Some(dst));
        }
        Op::Call(Intrinsic::Math(MathFn::Ceil), args) => {
            e.ceil(args[0], Some(dst));
        }
        Op::Call(Intrinsic::Math(MathFn::Rsqrt), args) => {
            let root = e.push(Op::Call(Intrinsic::Math(MathFn::Sqrt), vec![args[0]]), F64);
            let one = e.float(1.0, F64);
            e.finish(dst, Op::Binary(BinOp::Div, one, root));
        }
        Op::Call(Intrinsic::Math(MathFn::Abs), args) => {
            let a = args[0];
            let s = e.sign_of(a);
            let zero = e.float(0.0, F32);
            let negative = e.bin(BinOp::Lt, s, zero, BOOL);
            let z = e.float(-0.0, F64);
            let flipped = e.bin(BinOp::Sub, z, a, F64);
            let z = e.float(0.0, F64);
            let kept = e.bin(BinOp::Add, a, z, F64);
            e.finish(dst, Op::Select(negative, flipped, kept));
        }
        Op::Call(i @ (Intrinsic::Min | Intrinsic::Max), args) => {
            // b where it is smaller (larger), else a; b where a is NaN.
            let (a, b) = (args[0], args[1]);
            let op = if i == Intrinsic::Min { BinOp::Lt } else { BinOp::Gt };
            let better = e.compare(op, b, a, None);
            let pick = e.select(better, b, a, F64);
            let fa = e.cast(a, F32);
            let nan = e.bin(BinOp::Ne, fa, fa, BOOL);
            e.finish(dst, Op::Select(nan, b, pick));
        }
        Op::Call(Intrinsic::Math(m), _) => {
            refuse(problems, &format!("`{}`", crate::hir::intrinsic_name(Intrinsic::Math(m))))
        }
        // Moves between lanes move both halves (two instructions at emission).
        Op::Call(
            Intrinsic::Wave(
                WaveOp::Shuffle
                | WaveOp::ShuffleUp
                | WaveOp::ShuffleDown
                | WaveOp::ShuffleXor
                | WaveOp::Broadcast,
            ),
            _,
        ) => return Some(inst),
        Op::Call(Intrinsic::Wave(_), _) => refuse(problems, "a wave reduction or vote"),
        Op::Atomic(..) => refuse(problems, "an atomic"),
        _ => return Some(inst),
    }
    None
}

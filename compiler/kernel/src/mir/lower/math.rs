//! The math functions WAVE has no instruction for, built from those it has, on `f32`
//! (`docs/kernels.md`, "Math functions"):
//! - `exp(x)` is `exp2(h) · (1 + l · ln 2)` where `h + l` is `x · log2 e` to about twice
//!   `f32`'s precision (`h` the rounded product, `l` its error by `fma` plus `x` times the
//!   part of `log2 e` that `f32` drops), so that the product's rounding, which `exp2` would
//!   magnify by `|x|`, is corrected; where that correction is not finite (`x` infinite or
//!   NaN) or the result overflows, `exp2(h)` is the result;
//! - `log(x)` is `log2(x) · ln 2`, `log10(x)` is `log2(x) · log10 2`;
//! - `tanh(x)`: for `|x| < 0.25` its odd Taylor polynomial to `x^13` (truncation below
//!   2^-32 relative); above, `(1 - t) / (1 + t)` with `t = exp(-2|x|)`, with the sign of `x`;
//! - `pow(x, y)` is `exp2(y · log2 |x|)`, negated for a negative `x` and an odd integer `y`,
//!   NaN for a negative `x` and a `y` that is not an integer, and 1 where `y` is 0 or `x` is 1
//!   (as C's `pow`). An integer constant exponent is multiplications instead
//!   ([`super::Builder::power`]).

use wave_diag::Span;

use super::Builder;
use crate::hir::{BinOp, Intrinsic, MathFn, Scalar, Ty, UnOp};
use crate::mir::{Op, Value};

const F32: Ty = Ty::Scalar(Scalar::F32);
const BOOL: Ty = Ty::Scalar(Scalar::Bool);

/// `f` of `args` (all `f32`).
pub(super) fn expand(b: &mut Builder, f: MathFn, args: &[Value], span: &Span) -> Value {
    let mut e = Emit { b, span };
    let x = args[0];
    match f {
        MathFn::Exp => e.exp(x),
        MathFn::Log => {
            let l = e.call(MathFn::Log2, vec![x]);
            e.mul_const(l, std::f64::consts::LN_2)
        }
        MathFn::Log10 => {
            let l = e.call(MathFn::Log2, vec![x]);
            e.mul_const(l, std::f64::consts::LOG10_2)
        }
        MathFn::Tanh => e.tanh(x),
        MathFn::Pow => e.pow(x, args[1]),
        // (Only the functions above come here.)
        _ => e.call(f, args.to_vec()),
    }
}

struct Emit<'b, 's> {
    b: &'b mut Builder,
    span: &'s Span,
}

impl Emit<'_, '_> {
    fn push(&mut self, op: Op, ty: Ty) -> Value {
        self.b.push(op, ty, self.span)
    }

    fn k(&mut self, v: f64) -> Value {
        self.push(Op::Float(v), F32)
    }

    fn bin(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        let ty = if op.is_comparison() || matches!(op, BinOp::LogicAnd | BinOp::LogicOr) {
            BOOL
        } else {
            F32
        };
        self.push(Op::Binary(op, a, b), ty)
    }

    fn mul_const(&mut self, a: Value, c: f64) -> Value {
        let k = self.k(c);
        self.bin(BinOp::Mul, a, k)
    }

    fn call(&mut self, f: MathFn, args: Vec<Value>) -> Value {
        self.push(Op::Call(Intrinsic::Math(f), args), F32)
    }

    fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        self.call(MathFn::Fma, vec![a, b, c])
    }

    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.push(Op::Select(c, a, b), F32)
    }

    fn exp(&mut self, x: Value) -> Value {
        const LOG2_E: f64 = std::f64::consts::LOG2_E;
        let head = f64::from(LOG2_E as f32);
        let l2e = self.k(head);
        let h = self.bin(BinOp::Mul, x, l2e);
        let nh = self.push(Op::Unary(UnOp::Neg, h), F32);
        let err = self.fma(x, l2e, nh);
        let tail = self.mul_const(x, LOG2_E - head);
        let l = self.bin(BinOp::Add, err, tail);
        let c = self.mul_const(l, std::f64::consts::LN_2);
        let p = self.call(MathFn::Exp2, vec![h]);
        let corrected = self.fma(p, c, p);
        let inf = self.k(f64::INFINITY);
        let finite = self.bin(BinOp::Lt, p, inf);
        let number = self.bin(BinOp::Eq, c, c);
        let ok = self.bin(BinOp::LogicAnd, finite, number);
        self.select(ok, corrected, p)
    }

    fn tanh(&mut self, x: Value) -> Value {
        // Near zero: x + x^3 c3 + ... + x^13 c13.
        const C: [f64; 6] = [
            -1.0 / 3.0,
            2.0 / 15.0,
            -17.0 / 315.0,
            62.0 / 2835.0,
            -1382.0 / 155925.0,
            21844.0 / 6081075.0,
        ];
        let x2 = self.bin(BinOp::Mul, x, x);
        let mut p = self.k(C[5]);
        for c in C[..5].iter().rev() {
            let c = self.k(*c);
            p = self.fma(p, x2, c);
        }
        let p = self.bin(BinOp::Mul, p, x2);
        let near = self.fma(x, p, x);
        // Elsewhere: (1 - t) / (1 + t), t = e^(-2|x|).
        let a = self.call(MathFn::Abs, vec![x]);
        let m2a = self.mul_const(a, -2.0);
        let t = self.exp(m2a);
        let one = self.k(1.0);
        let num = self.bin(BinOp::Sub, one, t);
        let den = self.bin(BinOp::Add, one, t);
        let r = self.bin(BinOp::Div, num, den);
        let nr = self.push(Op::Unary(UnOp::Neg, r), F32);
        let zero = self.k(0.0);
        let negative = self.bin(BinOp::Lt, x, zero);
        let far = self.select(negative, nr, r);
        let quarter = self.k(0.25);
        let small = self.bin(BinOp::Lt, a, quarter);
        self.select(small, near, far)
    }

    fn pow(&mut self, x: Value, y: Value) -> Value {
        let ax = self.call(MathFn::Abs, vec![x]);
        let lg = self.call(MathFn::Log2, vec![ax]);
        let yl = self.bin(BinOp::Mul, y, lg);
        let r = self.call(MathFn::Exp2, vec![yl]);
        // A negative base: the sign of an odd integer power, NaN for a fraction.
        let fy = self.call(MathFn::Floor, vec![y]);
        let integer = self.bin(BinOp::Eq, fy, y);
        let half = self.mul_const(y, 0.5);
        let fh = self.call(MathFn::Floor, vec![half]);
        let halves = self.bin(BinOp::Ne, fh, half);
        let odd = self.bin(BinOp::LogicAnd, integer, halves);
        let nr = self.push(Op::Unary(UnOp::Neg, r), F32);
        let signed = self.select(odd, nr, r);
        let nan = self.k(f64::NAN);
        let of_negative = self.select(integer, signed, nan);
        let zero = self.k(0.0);
        let negative = self.bin(BinOp::Lt, x, zero);
        let r = self.select(negative, of_negative, r);
        // pow(x, 0) and pow(1, y) are 1, even for NaN.
        let zero = self.k(0.0);
        let y0 = self.bin(BinOp::Eq, y, zero);
        let one = self.k(1.0);
        let x1 = self.bin(BinOp::Eq, x, one);
        let trivial = self.bin(BinOp::LogicOr, y0, x1);
        self.select(trivial, one, r)
    }
}

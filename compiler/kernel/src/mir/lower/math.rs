//! The math functions WAVE has no instruction for, built from those it has
//! (`docs/kernels.md`, "Math functions"), on `f32` (an `f16` value is computed there) and on
//! `f64`:
//! - `exp(x)` is `exp2(h) · (1 + l · ln 2)` where `h + l` is `x · log2 e` to about twice the
//!   type's precision (`h` the rounded product, `l` its error by `fma` plus `x` times the part
//!   of `log2 e` the type drops), so that the product's rounding, which `exp2` would magnify by
//!   `|x|`, is corrected; where that correction is not finite (`x` infinite or NaN) or the
//!   result overflows, `exp2(h)` is the result;
//! - `log(x)` is `log2(x) · ln 2`, `log10(x)` is `log2(x) · log10 2` (on `f64`, from the
//!   exponent and the logarithm of the significand separately);
//! - `tanh(x)`: near zero (`|x| < 0.25` on `f32`, `1/16` on `f64`) its odd Taylor polynomial
//!   to `x^13`; elsewhere `(1 - t) / (1 + t)` with `t = exp(-2|x|)`, with the sign of `x`;
//! - `pow(x, y)` is `exp2(y · log2 |x|)`, negated for a negative `x` and an odd integer `y`,
//!   NaN for a negative `x` and a `y` that is not an integer, and 1 where `y` is 0 or `x` is 1
//!   (as C's `pow`). An integer constant exponent is multiplications instead
//!   ([`super::Builder::power`]).
//!
//! On `f64`, which WAVE has no transcendental instruction for:
//! - `exp2(x)`: `n` the nearest integer to `x` (found in `f32`), `f = x - n` (exact, `|f| <=
//!   0.51`), `2^f` by its Taylor polynomial in `f` to degree 13 (truncation below 2^-57),
//!   times `2^n` made exactly as a product of the powers `2^(±2^k)` that the bits of `n`
//!   select (the last, `2^±1024`, as two factors of `2^±512`); beyond ±1100 (infinities
//!   too), infinity or zero by a test;
//! - `log2(x)`: the exponent `e` estimated in `f32` through whichever of nine scalings of `x`
//!   by `2^(240 k)` lands in `f32`'s range, `m = x · 2^-e` made exactly by the same products
//!   of powers of two (`m` within `[0.7, 1.42]`), `ln m = 2 atanh(s)` with `s = (m - 1) / (m +
//!   1)` by its series to `s^21` (truncation below 2^-54), and `log2 x = e + ln m · log2 e`;
//!   negative, zero, infinite and NaN `x` by tests.

use wave_diag::Span;

use super::Builder;
use crate::hir::{BinOp, Intrinsic, MathFn, Scalar, Ty, UnOp};
use crate::mir::{Op, Value};

const F32: Ty = Ty::Scalar(Scalar::F32);
const F64: Ty = Ty::Scalar(Scalar::F64);
const I32: Ty = Ty::Scalar(Scalar::I32);
const BOOL: Ty = Ty::Scalar(Scalar::Bool);

/// `f` of `args`, all of type `ty` (`f32` or `f64`).
pub(super) fn expand(b: &mut Builder, f: MathFn, args: &[Value], ty: Ty, span: &Span) -> Value {
    let mut e = Emit { b, span, ty };
    let x = args[0];
    match f {
        MathFn::Exp => e.exp(x),
        MathFn::Exp2 => e.exp2(x),
        MathFn::Log2 => e.log2(x),
        MathFn::Log | MathFn::Log10 => {
            let (to_e, c) = if f == MathFn::Log {
                (std::f64::consts::LN_2, 1.0)
            } else {
                (std::f64::consts::LOG10_2, std::f64::consts::LOG10_E)
            };
            if ty == F64 {
                // e · ln 2 + ln m (· log10 e): the exponent exactly, the rest once rounded.
                let (exp, ln_m) = e.log_parts(x);
                let k = e.k(to_e);
                let scaled = e.mul_const(ln_m, c);
                let r = e.fma(exp, k, scaled);
                e.log_specials(x, r)
            } else {
                let l = e.call(MathFn::Log2, vec![x]);
                e.mul_const(l, to_e)
            }
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
    /// The type computed in: `f32` or `f64`.
    ty: Ty,
}

impl Emit<'_, '_> {
    fn push(&mut self, op: Op, ty: Ty) -> Value {
        self.b.push(op, ty, self.span)
    }

    /// A constant of the type computed in.
    fn k(&mut self, v: f64) -> Value {
        self.push(Op::Float(v), self.ty)
    }

    fn k32(&mut self, v: f64) -> Value {
        self.push(Op::Float(v), F32)
    }

    fn int(&mut self, v: i64) -> Value {
        self.push(Op::Int(v), I32)
    }

    /// `a op b` of the type of `a` (a `bool` for a comparison or logic).
    fn bin(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        let ty = if op.is_comparison() || matches!(op, BinOp::LogicAnd | BinOp::LogicOr) {
            BOOL
        } else {
            self.b.types[a.0 as usize]
        };
        self.push(Op::Binary(op, a, b), ty)
    }

    fn mul_const(&mut self, a: Value, c: f64) -> Value {
        let k = self.k(c);
        self.bin(BinOp::Mul, a, k)
    }

    /// `f` of `args`, an instruction (`f32`; `fma` on either type).
    fn call(&mut self, f: MathFn, args: Vec<Value>) -> Value {
        let ty = self.b.types[args[0].0 as usize];
        self.push(Op::Call(Intrinsic::Math(f), args), ty)
    }

    fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        self.call(MathFn::Fma, vec![a, b, c])
    }

    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ty = self.b.types[a.0 as usize];
        self.push(Op::Select(c, a, b), ty)
    }

    fn neg(&mut self, a: Value) -> Value {
        let ty = self.b.types[a.0 as usize];
        self.push(Op::Unary(UnOp::Neg, a), ty)
    }

    fn cast(&mut self, a: Value, ty: Ty) -> Value {
        self.push(Op::Cast(a), ty)
    }

    /// `2^x` in the type computed in.
    fn exp2(&mut self, x: Value) -> Value {
        if self.ty == F32 {
            return self.call(MathFn::Exp2, vec![x]);
        }
        // n, the integer nearest x (from f32: any integer within 0.51 of x will do).
        let xf = self.cast(x, F32);
        let half = self.k32(0.5);
        let up = self.bin(BinOp::Add, xf, half);
        let nf = self.call(MathFn::Floor, vec![up]);
        let n = self.cast(nf, F64);
        let f = self.bin(BinOp::Sub, x, n);
        // 2^f = e^(f ln 2): its Taylor polynomial in f.
        let mut coef = [0.0f64; 14];
        let mut c = 1.0f64;
        for (k, slot) in coef.iter_mut().enumerate() {
            if k > 0 {
                c *= std::f64::consts::LN_2 / k as f64;
            }
            *slot = c;
        }
        let mut p = self.k(coef[13]);
        for c in coef[..13].iter().rev() {
            let c = self.k(*c);
            p = self.fma(p, f, c);
        }
        let ni = self.cast(nf, I32);
        let r = self.scale(p, ni);
        // Beyond ±1100 (where f32 no longer finds n, and f is not small) the result
        // overflows or underflows.
        let limit = self.k32(1100.0);
        let over = self.bin(BinOp::Gt, xf, limit);
        let limit = self.k32(-1100.0);
        let under = self.bin(BinOp::Lt, xf, limit);
        let big = self.k(f64::INFINITY);
        let r = self.select(over, big, r);
        let zero = self.k(0.0);
        self.select(under, zero, r)
    }

    /// `x · 2^n` (`f64`, `n` an `i32`), exact where the result is normal: `x` times the
    /// powers `2^(±2^k)` the bits of `|n|` (at most 1100) select, in increasing order, so that
    /// no product on the way leaves the range the result is in; each power is the square of
    /// the one before.
    fn scale(&mut self, x: Value, n: Value) -> Value {
        let lo = self.int(-1100);
        let hi = self.int(1100);
        let n = self.push(Op::Call(Intrinsic::Max, vec![n, lo]), I32);
        let n = self.push(Op::Call(Intrinsic::Min, vec![n, hi]), I32);
        let zero = self.int(0);
        let negative = self.bin(BinOp::Lt, n, zero);
        let m = self.push(Op::Call(Intrinsic::Math(MathFn::Abs), vec![n]), I32);
        let up = self.k(2.0);
        let down = self.k(0.5);
        let mut power = self.select(negative, down, up);
        let mut r = x;
        for k in 0..=10u32 {
            let shift = self.int(i64::from(k));
            let shifted = self.bin(BinOp::Shr, m, shift);
            let one = self.int(1);
            let bit = self.bin(BinOp::And, shifted, one);
            let zero = self.int(0);
            let set = self.bin(BinOp::Ne, bit, zero);
            let unit = self.k(1.0);
            let factor = self.select(set, power, unit);
            r = self.bin(BinOp::Mul, r, factor);
            if k == 10 {
                // 2^±1024 is not an f64: 2^±512 twice.
                r = self.bin(BinOp::Mul, r, factor);
            } else if k < 9 {
                power = self.bin(BinOp::Mul, power, power);
            }
        }
        r
    }

    /// `log2 x` in the type computed in.
    fn log2(&mut self, x: Value) -> Value {
        if self.ty == F32 {
            return self.call(MathFn::Log2, vec![x]);
        }
        let (e, ln_m) = self.log_parts(x);
        let k = self.k(std::f64::consts::LOG2_E);
        let r = self.fma(ln_m, k, e);
        self.log_specials(x, r)
    }

    /// `x = 2^e · m` for a positive finite `x` (`f64`): `e` (an integer, as `f64`) and
    /// `ln m`.
    fn log_parts(&mut self, x: Value) -> (Value, Value) {
        // The exponent, in f32, of whichever scaling lands in f32's range.
        let mut y = self.k32(1.0);
        let mut shift = self.k32(0.0);
        for s in [-960i32, -720, -480, -240, 0, 240, 480, 720, 960] {
            let k = self.k(2f64.powi(-s));
            let scaled = self.bin(BinOp::Mul, x, k);
            let yf = self.cast(scaled, F32);
            let low = self.k32(2f64.powi(-120));
            let high = self.k32(2f64.powi(120));
            let above = self.bin(BinOp::Ge, yf, low);
            let below = self.bin(BinOp::Le, yf, high);
            let fits = self.bin(BinOp::LogicAnd, above, below);
            y = self.select(fits, yf, y);
            let sk = self.k32(f64::from(s));
            shift = self.select(fits, sk, shift);
        }
        let l = self.call(MathFn::Log2, vec![y]);
        let half = self.k32(0.5);
        let l = self.bin(BinOp::Add, l, half);
        let l = self.call(MathFn::Floor, vec![l]);
        let ef = self.bin(BinOp::Add, l, shift);
        let ei = self.cast(ef, I32);
        let zero = self.int(0);
        let minus = self.bin(BinOp::Sub, zero, ei);
        let m = self.scale(x, minus);
        // ln m = 2 atanh(s), s = (m - 1) / (m + 1).
        let one = self.k(1.0);
        let num = self.bin(BinOp::Sub, m, one);
        let one = self.k(1.0);
        let den = self.bin(BinOp::Add, m, one);
        let s = self.bin(BinOp::Div, num, den);
        let s2 = self.bin(BinOp::Mul, s, s);
        let mut q = self.k(1.0 / 21.0);
        for k in (0..10).rev() {
            let c = self.k(1.0 / f64::from(2 * k + 1));
            q = self.fma(q, s2, c);
        }
        let two_s = self.mul_const(s, 2.0);
        let ln_m = self.bin(BinOp::Mul, two_s, q);
        (self.cast(ef, F64), ln_m)
    }

    /// `r` (a logarithm of `x`), or what it is for a negative, zero or infinite `x`.
    fn log_specials(&mut self, x: Value, r: Value) -> Value {
        let zero = self.k(0.0);
        let negative = self.bin(BinOp::Lt, x, zero);
        let zero = self.k(0.0);
        let is_zero = self.bin(BinOp::Eq, x, zero);
        let inf = self.k(f64::INFINITY);
        let is_inf = self.bin(BinOp::Eq, x, inf);
        let nan = self.k(f64::NAN);
        let r = self.select(negative, nan, r);
        let ninf = self.k(f64::NEG_INFINITY);
        let r = self.select(is_zero, ninf, r);
        let inf = self.k(f64::INFINITY);
        self.select(is_inf, inf, r)
    }

    fn exp(&mut self, x: Value) -> Value {
        const LOG2_E: f64 = std::f64::consts::LOG2_E;
        let head = if self.ty == F32 { f64::from(LOG2_E as f32) } else { LOG2_E };
        // (In f64, the part of log2 e beyond the f64 value.)
        let tail = if self.ty == F32 { LOG2_E - head } else { 2.035_527_374_093_103_3e-17 };
        let l2e = self.k(head);
        let h = self.bin(BinOp::Mul, x, l2e);
        let nh = self.neg(h);
        let err = self.fma(x, l2e, nh);
        let tail = self.mul_const(x, tail);
        let l = self.bin(BinOp::Add, err, tail);
        let c = self.mul_const(l, std::f64::consts::LN_2);
        let p = self.exp2(h);
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
        let nr = self.neg(r);
        let zero = self.k(0.0);
        let negative = self.bin(BinOp::Lt, x, zero);
        let far = self.select(negative, nr, r);
        let limit = self.k(if self.ty == F32 { 0.25 } else { 0.0625 });
        let small = self.bin(BinOp::Lt, a, limit);
        self.select(small, near, far)
    }

    /// `2^(y log2 |x|)` on `f64`: with `|x| = 2^e m`, the exponent is `y e + y log2 m`, each
    /// product with its rounding error (by `fma`) and their sum with its own (Knuth's
    /// two-sum), and `exp2` of the rounded sum corrected by the rest, as in `exp`. Zero and
    /// infinite `|x|` by tests.
    fn pow_magnitude(&mut self, ax: Value, y: Value) -> Value {
        let (e, ln_m) = self.log_parts(ax);
        let l = self.mul_const(ln_m, std::f64::consts::LOG2_E);
        let a = self.bin(BinOp::Mul, y, e);
        let na = self.neg(a);
        let a_lo = self.fma(y, e, na);
        let b = self.bin(BinOp::Mul, y, l);
        let nb = self.neg(b);
        let b_lo = self.fma(y, l, nb);
        let t = self.bin(BinOp::Add, a, b);
        let bb = self.bin(BinOp::Sub, t, a);
        let aa = self.bin(BinOp::Sub, t, bb);
        let ea = self.bin(BinOp::Sub, a, aa);
        let eb = self.bin(BinOp::Sub, b, bb);
        let err = self.bin(BinOp::Add, ea, eb);
        let lo = self.bin(BinOp::Add, a_lo, b_lo);
        let lo = self.bin(BinOp::Add, err, lo);
        let c = self.mul_const(lo, std::f64::consts::LN_2);
        let p = self.exp2(t);
        let corrected = self.fma(p, c, p);
        let inf = self.k(f64::INFINITY);
        let finite = self.bin(BinOp::Lt, p, inf);
        let number = self.bin(BinOp::Eq, c, c);
        let ok = self.bin(BinOp::LogicAnd, finite, number);
        let r = self.select(ok, corrected, p);
        // |x| zero or infinite: 0 or infinity by the sign of y.
        let zero = self.k(0.0);
        let y_pos = self.bin(BinOp::Gt, y, zero);
        let zero = self.k(0.0);
        let inf = self.k(f64::INFINITY);
        let at_zero = self.select(y_pos, zero, inf);
        let zero = self.k(0.0);
        let inf = self.k(f64::INFINITY);
        let at_inf = self.select(y_pos, inf, zero);
        let zero = self.k(0.0);
        let is_zero = self.bin(BinOp::Eq, ax, zero);
        let inf = self.k(f64::INFINITY);
        let is_inf = self.bin(BinOp::Eq, ax, inf);
        let r = self.select(is_zero, at_zero, r);
        self.select(is_inf, at_inf, r)
    }

    fn pow(&mut self, x: Value, y: Value) -> Value {
        let ax = self.call(MathFn::Abs, vec![x]);
        let r = if self.ty == F64 {
            self.pow_magnitude(ax, y)
        } else {
            let lg = self.log2(ax);
            let yl = self.bin(BinOp::Mul, y, lg);
            self.exp2(yl)
        };
        // A negative base: the sign of an odd integer power, NaN for a fraction.
        let fy = self.call(MathFn::Floor, vec![y]);
        let integer = self.bin(BinOp::Eq, fy, y);
        let half = self.mul_const(y, 0.5);
        let fh = self.call(MathFn::Floor, vec![half]);
        let halves = self.bin(BinOp::Ne, fh, half);
        let odd = self.bin(BinOp::LogicAnd, integer, halves);
        let nr = self.neg(r);
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

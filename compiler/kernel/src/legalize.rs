//! MIR legalisation: what the code generator takes, run after the optimiser at every level.
//!
//! `f16` values live in the low half of a register. WAVE has `hadd`, `hsub` and `hmul` on
//! halves and conversions to and from `f32`; everything else on `f16` (division, negation,
//! comparisons, minimum, math functions, conversions to and from integers) is done in `f32`
//! and rounded back. That gives the correctly rounded `f16` result: the `f32` result of one
//! operation on `f16` values, rounded to `f16`, is the `f16` operation's result (`f32` has
//! more than twice the precision plus two bits, so the double rounding is innocuous).

use crate::hir::{BinOp, Intrinsic, Scalar, Ty};
use crate::mir::{Func, Inst, Op, Value};

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

/// The value of `f16` bits.
pub fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        0x1f if mant == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        e => (1.0 + mant / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The bits of the `f16` nearest to `x` (ties to even; overflow to infinity).
pub fn f16_bits(x: f64) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & ((1 << 52) - 1);
    if exp == 0x7ff {
        // Infinity or NaN (a NaN stays quiet).
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    // The exponent f16 would give it (bias 15).
    let e = exp - 1023 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    let (m, shift) = if e <= 0 {
        // Subnormal or zero: the implicit bit joins the mantissa, shifted further.
        if e < -11 {
            return sign;
        }
        (mant | (1 << 52), (42 + 1 - e) as u32)
    } else {
        (mant, 42u32)
    };
    let half = 1u64 << (shift - 1);
    let rest = m & ((1u64 << shift) - 1);
    let mut r = m >> shift;
    if rest > half || (rest == half && r & 1 == 1) {
        r += 1;
    }
    if e <= 0 {
        sign | r as u16
    } else {
        // A carry out of the mantissa moves into the exponent (0x7c00 is infinity).
        sign | (((e as u64) << 10) + r) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::f16_bits;

    #[test]
    fn f16_bits_round_to_nearest_even() {
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-2.0), 0xc000);
        assert_eq!(f16_bits(0.0), 0x0000);
        assert_eq!(f16_bits(65504.0), 0x7bff);
        assert_eq!(f16_bits(65520.0), 0x7c00, "halfway to the next power: infinity");
        assert_eq!(f16_bits(1e9), 0x7c00);
        assert_eq!(f16_bits(5.960464477539063e-8), 0x0001, "the smallest subnormal");
        assert_eq!(f16_bits(2.0f64.powi(-25)), 0x0000, "half of it: ties to even, zero");
        assert_eq!(f16_bits(0.1), 0x2e66);
        assert_eq!(f16_bits(1.0 + 2.0f64.powi(-11)), 0x3c00, "a tie rounds to even");
        assert_eq!(f16_bits(1.0 + 3.0 * 2.0f64.powi(-11)), 0x3c02);
        assert_eq!(f16_bits(f64::INFINITY), 0x7c00);
        for h in [0x0001u16, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0x7bff, 0xc000, 0x2e66] {
            assert_eq!(f16_bits(super::f16_value(h)), h, "{h:#06x} round trips");
        }
    }
}

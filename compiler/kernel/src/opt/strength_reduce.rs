//! Strength reduction of multiplies, divisions and remainders by powers of two (O2).

use std::collections::HashMap;

use crate::hir::{BinOp, Scalar, Ty};
use crate::mir::{Func, Inst, Op, Value};

/// Strength reduction: `x * 2^k` becomes `x << k`, and for `u32`, `x / 2^k` becomes
/// `x >> k` and `x % 2^k` becomes `x & (2^k - 1)`.
pub fn strength_reduce(f: &mut Func) -> bool {
    let mut consts: HashMap<Value, i64> = HashMap::new();
    for b in &f.blocks {
        for inst in &b.insts {
            if let (Some(d), Op::Int(x)) = (inst.dst, &inst.op) {
                consts.insert(d, *x);
            }
        }
    }
    let pow2 =
        |v: &Value| consts.get(v).copied().filter(|x| *x > 1 && (*x as u64).is_power_of_two());
    let mut changed = false;
    let mut new_types = Vec::new();
    let base = f.types.len() as u32;
    for b in &mut f.blocks {
        let mut out = Vec::with_capacity(b.insts.len());
        for inst in std::mem::take(&mut b.insts) {
            let s = inst.dst.and_then(|d| match f.types[d.0 as usize] {
                Ty::Scalar(s) => Some(s),
                _ => None,
            });
            let rewrite = match (&inst.op, s) {
                (Op::Binary(BinOp::Mul, a, c), Some(s)) if s.is_int() && pow2(c).is_some() => {
                    pow2(c).map(|k| (BinOp::Shl, *a, i64::from(k.trailing_zeros()), s))
                }
                (Op::Binary(BinOp::Mul, c, a), Some(s)) if s.is_int() && pow2(c).is_some() => {
                    pow2(c).map(|k| (BinOp::Shl, *a, i64::from(k.trailing_zeros()), s))
                }
                (Op::Binary(BinOp::Div, a, c), Some(Scalar::U32)) => {
                    pow2(c).map(|k| (BinOp::Shr, *a, i64::from(k.trailing_zeros()), Scalar::U32))
                }
                (Op::Binary(BinOp::Rem, a, c), Some(Scalar::U32)) => {
                    pow2(c).map(|k| (BinOp::And, *a, k - 1, Scalar::U32))
                }
                _ => None,
            };
            match rewrite {
                Some((op, a, k, s)) => {
                    let kv = Value(base + new_types.len() as u32);
                    new_types.push(Ty::Scalar(s));
                    out.push(Inst { dst: Some(kv), op: Op::Int(k), span: inst.span.clone() });
                    out.push(Inst { dst: inst.dst, op: Op::Binary(op, a, kv), span: inst.span });
                    changed = true;
                }
                None => out.push(inst),
            }
        }
        b.insts = out;
    }
    f.types.extend(new_types);
    changed
}

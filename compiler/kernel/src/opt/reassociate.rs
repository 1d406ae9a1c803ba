//! Reassociation (O2): integer constants move outward, so that addresses become
//! `x + constant` and the rest is shared.

use std::collections::HashMap;

use super::dce::dce;
use super::fold::wrap;
use crate::hir::{BinOp, Scalar, Ty};
use crate::mir::{Func, Inst, Op, Value};

/// Moves integer constants outward so that addresses become `x + constant`, which a memory
/// instruction takes as its offset, and so that the rest is shared: `(a + c1) << k` becomes
/// `(a << k) + (c1 << k)`, `(a + c1) * k` becomes `a * k + c1 * k`, `(a + c1) + c2` becomes
/// `a + (c1 + c2)`, `(a + c) + b` becomes `(a + b) + c`, `a - c` becomes `a + (-c)`, and a
/// constant first operand of `+` goes second. Wrapping 32-bit arithmetic is a ring, so the
/// values are the same bits.
pub fn reassociate(f: &mut Func) -> bool {
    let mut changed = false;
    for _ in 0..8 {
        let mut consts: HashMap<Value, i64> = HashMap::new();
        let mut defs: HashMap<Value, Op> = HashMap::new();
        for b in &f.blocks {
            for inst in &b.insts {
                if let Some(d) = inst.dst {
                    if let Op::Int(x) = inst.op {
                        consts.insert(d, x);
                    }
                    defs.insert(d, inst.op.clone());
                }
            }
        }
        let mut round = false;
        let mut new_types = Vec::new();
        let base = f.types.len() as u32;
        for b in 0..f.blocks.len() {
            let insts = std::mem::take(&mut f.blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for inst in insts {
                let Some(d) = inst.dst else {
                    out.push(inst);
                    continue;
                };
                let s = match f.types[d.0 as usize] {
                    Ty::Scalar(s) if s.is_int() => s,
                    _ => {
                        out.push(inst);
                        continue;
                    }
                };
                let span = inst.span.clone();
                let mut fresh = |op: Op, out: &mut Vec<Inst>, ty: Ty| {
                    let v = Value(base + new_types.len() as u32);
                    new_types.push(ty);
                    out.push(Inst { dst: Some(v), op, span: span.clone() });
                    v
                };
                let ty = Ty::Scalar(s);
                // `x + c` when `x` is defined so (c a constant).
                let plus_const = |v: &Value| match defs.get(v) {
                    Some(Op::Binary(BinOp::Add, a, c)) => consts.get(c).map(|k| (*a, *k)),
                    _ => None,
                };
                let rewritten: Option<Op> = match &inst.op {
                    Op::Binary(BinOp::Add, c, x)
                        if consts.contains_key(c) && !consts.contains_key(x) =>
                    {
                        Some(Op::Binary(BinOp::Add, *x, *c))
                    }
                    Op::Binary(BinOp::Sub, x, c)
                        if consts.contains_key(c) && !consts.contains_key(x) =>
                    {
                        let k = fresh(Op::Int(wrap(s, consts[c].wrapping_neg())), &mut out, ty);
                        Some(Op::Binary(BinOp::Add, *x, k))
                    }
                    Op::Binary(BinOp::Add, x, c) if consts.contains_key(c) => {
                        plus_const(x).map(|(a, c1)| {
                            let k =
                                fresh(Op::Int(wrap(s, c1.wrapping_add(consts[c]))), &mut out, ty);
                            Op::Binary(BinOp::Add, a, k)
                        })
                    }
                    Op::Binary(BinOp::Add, x, y) => match (plus_const(x), plus_const(y)) {
                        (Some((a, c1)), _) => {
                            let sum = fresh(Op::Binary(BinOp::Add, a, *y), &mut out, ty);
                            let k = fresh(Op::Int(c1), &mut out, ty);
                            Some(Op::Binary(BinOp::Add, sum, k))
                        }
                        (None, Some((a, c1))) => {
                            let sum = fresh(Op::Binary(BinOp::Add, *x, a), &mut out, ty);
                            let k = fresh(Op::Int(c1), &mut out, ty);
                            Some(Op::Binary(BinOp::Add, sum, k))
                        }
                        _ => None,
                    },
                    Op::Binary(BinOp::Shl, x, c)
                        if consts.get(c).is_some_and(|k| (0..32).contains(k))
                            && matches!(defs.get(x), Some(Op::Binary(BinOp::Shl, _, c1))
                                if consts.get(c1).is_some_and(|k1| (0..32).contains(&(k1 + consts[c])))) =>
                    {
                        // (a << k1) << k2 = a << (k1 + k2)
                        let Some(Op::Binary(BinOp::Shl, a, c1)) = defs.get(x) else {
                            unreachable!()
                        };
                        let k = fresh(Op::Int(consts[c1] + consts[c]), &mut out, ty);
                        Some(Op::Binary(BinOp::Shl, *a, k))
                    }
                    // ((x >> k) & m) << k = x & (m << k), for a logical shift and m << k in
                    // 32 bits: the bits shifted out are the ones masked off.
                    Op::Binary(BinOp::Shl, y, k2)
                        if s == Scalar::U32
                            && consts.get(k2).is_some_and(|k| (1..32).contains(k))
                            && matches!(defs.get(y), Some(Op::Binary(BinOp::And, z, m))
                                if consts.get(m).is_some_and(|m| (*m as u64) < (1u64 << (32 - consts[k2])))
                                    && matches!(defs.get(z), Some(Op::Binary(BinOp::Shr, _, k1)) if consts.get(k1) == consts.get(k2))) =>
                    {
                        let Some(Op::Binary(BinOp::And, z, m)) = defs.get(y) else {
                            unreachable!()
                        };
                        let Some(Op::Binary(BinOp::Shr, x, _)) = defs.get(z) else {
                            unreachable!()
                        };
                        let mask = fresh(Op::Int(wrap(s, consts[m] << consts[k2])), &mut out, ty);
                        Some(Op::Binary(BinOp::And, *x, mask))
                    }
                    Op::Binary(op @ (BinOp::Shl | BinOp::Mul), x, c) if consts.contains_key(c) => {
                        let k2 = consts[c];
                        plus_const(x).and_then(|(a, c1)| {
                            let moved = match op {
                                BinOp::Shl if (0..32).contains(&k2) => c1.wrapping_shl(k2 as u32),
                                BinOp::Mul => c1.wrapping_mul(k2),
                                _ => return None,
                            };
                            let scaled = fresh(Op::Binary(*op, a, *c), &mut out, ty);
                            let k = fresh(Op::Int(wrap(s, moved)), &mut out, ty);
                            Some(Op::Binary(BinOp::Add, scaled, k))
                        })
                    }
                    _ => None,
                };
                match rewritten {
                    Some(op) => {
                        round = true;
                        out.push(Inst { dst: Some(d), op, span: inst.span });
                    }
                    None => out.push(inst),
                }
            }
            f.blocks[b].insts = out;
        }
        f.types.extend(new_types);
        if !round {
            break;
        }
        changed = true;
    }
    if changed {
        dce(f);
    }
    changed
}

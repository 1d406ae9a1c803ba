//! Accumulator seeding (O2): a sum read after its loop only as `acc + q`, for one invariant
//! `q`, starts at `init + q` instead, so `q` is not held through the loop.

use std::collections::HashMap;

use super::fold::scalar_of;
use super::{def_of, substitute};
use crate::hir::{BinOp, Ty};
use crate::mir::{BlockId, Func, Inst, Op, Term, Value, natural_loops, simple_loop};

/// Accumulator seeding: an integer sum over a loop, `acc = phi(init, acc + x)`, read after
/// the loop only as `acc + q` with one loop-invariant q, starts at `init + q` instead (and
/// those reads become `acc`). q is then not kept through the loop: integer addition wraps,
/// so the sums are the same bits in any order.
pub fn seed_accumulators(f: &mut Func) -> bool {
    let mut changed = false;
    let preds = f.predecessors();
    for (header, body) in natural_loops(f) {
        let Some((pre, latch)) = simple_loop(f, &preds, header, &body) else { continue };
        let idom = f.dominators();
        let phis = f.blocks[header.0 as usize].phis.clone();
        for phi in phis {
            let Some(s) = scalar_of(f, phi.dst).filter(|s| s.is_int()) else { continue };
            let arg = |b: BlockId| phi.args.iter().find(|(x, _)| *x == b).map(|(_, v)| *v);
            let (Some(init), Some(next)) = (arg(pre), arg(latch)) else { continue };
            // Every reader of acc and of next, with the block it is in.
            let mut readers: Vec<(BlockId, Option<Value>, Op)> = Vec::new();
            let mut other = false;
            for (b, blk) in f.blocks.iter().enumerate() {
                for p in &blk.phis {
                    let n = p.args.iter().filter(|(_, v)| *v == phi.dst || *v == next).count();
                    // Only the loop's own phi may read next.
                    if n > 0 && !(p.dst == phi.dst && n == 1) {
                        other = true;
                    }
                }
                for i in &blk.insts {
                    if i.op.operands().iter().any(|v| *v == phi.dst || *v == next) {
                        readers.push((BlockId(b as u32), i.dst, i.op.clone()));
                    }
                }
                if let Term::Branch(c, _, _) = blk.term
                    && (c == phi.dst || c == next)
                {
                    other = true;
                }
            }
            if other {
                continue;
            }
            // next = acc + x, in the loop; the other readers `acc + q` after it.
            let mut q: Option<Value> = None;
            let mut uses_after: Vec<Value> = Vec::new();
            let mut ok = false;
            for (b, dst, op) in &readers {
                match (dst, op) {
                    (Some(d), Op::Binary(BinOp::Add, a, x)) if *d == next && body.contains(b) => {
                        ok = (*a == phi.dst) != (*x == phi.dst);
                    }
                    (Some(d), Op::Binary(BinOp::Add, a, x)) if !body.contains(b) => {
                        let other_side = if *a == phi.dst { *x } else { *a };
                        if (*a == phi.dst) == (*x == phi.dst) || q.is_some_and(|q| q != other_side)
                        {
                            ok = false;
                            uses_after.clear();
                            break;
                        }
                        q = Some(other_side);
                        uses_after.push(*d);
                    }
                    _ => {
                        uses_after.clear();
                        ok = false;
                        break;
                    }
                }
            }
            let Some(q) = q else { continue };
            // q is defined before the loop (its definition dominates the preheader).
            let q_at = f.blocks.iter().enumerate().find_map(|(b, blk)| {
                (blk.insts.iter().any(|i| i.dst == Some(q)) || blk.phis.iter().any(|p| p.dst == q))
                    .then_some(BlockId(b as u32))
            });
            if !ok
                || uses_after.is_empty()
                || !q_at.is_some_and(|at| Func::dominates(&idom, at, pre))
            {
                continue;
            }
            let seeded = if matches!(def_of(f, init), Some(Op::Int(0))) {
                q
            } else {
                f.types.push(Ty::Scalar(s));
                let v = Value(f.types.len() as u32 - 1);
                let span = f.blocks[pre.0 as usize].insts.last().map_or(0..0, |i| i.span.clone());
                f.blocks[pre.0 as usize].insts.push(Inst {
                    dst: Some(v),
                    op: Op::Binary(BinOp::Add, init, q),
                    span,
                });
                v
            };
            for p in &mut f.blocks[header.0 as usize].phis {
                if p.dst == phi.dst {
                    for (b, v) in &mut p.args {
                        if *b == pre {
                            *v = seeded;
                        }
                    }
                }
            }
            let subst: HashMap<Value, Value> = uses_after.iter().map(|d| (*d, phi.dst)).collect();
            for blk in &mut f.blocks {
                blk.insts.retain(|i| i.dst.is_none_or(|d| !subst.contains_key(&d)));
            }
            substitute(f, &subst);
            changed = true;
        }
    }
    changed
}

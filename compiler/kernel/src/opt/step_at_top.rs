//! Counters stepped at the top of the header (O2), so the latch is empty and LIR leaves an
//! iteration early with `continue p`.

use super::fold::wrap;
use crate::hir::{BinOp, Scalar, Ty};
use crate::mir::{BlockId, Func, Inst, Op, Term, Value};

/// A loop whose latch only steps counters (`k = phi(s, k + c)`, a `for` loop's step), and
/// which several paths reach (`continue`), steps them at the top of the header instead:
/// `k' = phi(s - c, k)` and `k = k' + c` first thing, so every use of `k` sees the same
/// value as before. The latch is then empty: LIR leaves an iteration early with `continue p`
/// rather than wrapping the rest of the body in `if !p … endif` to reach the step.
pub fn step_at_top(f: &mut Func) -> bool {
    let mut changed = false;
    let idom = f.dominators();
    let preds = f.predecessors();
    let reads = f.reads();
    for h in 0..f.blocks.len() {
        let header = BlockId(h as u32);
        let (pre, latch) = match preds[h].as_slice() {
            [a, b] if Func::dominates(&idom, header, *b) && !Func::dominates(&idom, header, *a) => {
                (*a, *b)
            }
            [a, b] if Func::dominates(&idom, header, *a) && !Func::dominates(&idom, header, *b) => {
                (*b, *a)
            }
            _ => continue,
        };
        let l = latch.0 as usize;
        if latch == header
            || preds[l].len() < 2
            || f.blocks[l].term != Term::Jump(header)
            || f.blocks[l].insts.is_empty()
        {
            continue;
        }
        // Every instruction of the latch: `next = k + c`, read only by k's phi.
        let konst = |f: &Func, v: Value| {
            f.blocks.iter().flat_map(|b| &b.insts).find(|i| i.dst == Some(v)).and_then(|i| match i
                .op
            {
                Op::Int(c) => Some(c),
                _ => None,
            })
        };
        let steps: Option<Vec<(usize, Value, i64, Value)>> = f.blocks[l]
            .insts
            .iter()
            .map(|inst| {
                let next = inst.dst?;
                let Op::Binary(BinOp::Add, a, b) = inst.op else { return None };
                if !matches!(f.types[next.0 as usize], Ty::Scalar(Scalar::U32 | Scalar::I32)) {
                    return None;
                }
                let (k, c) = match (konst(f, a), konst(f, b)) {
                    (None, Some(c)) => (a, c),
                    (Some(c), None) => (b, c),
                    _ => return None,
                };
                let at = f.blocks[h].phis.iter().position(|p| {
                    p.dst == k && p.args.iter().any(|(from, v)| *from == latch && *v == next)
                })?;
                let start = f.blocks[h].phis[at].args.iter().find(|(from, _)| *from == pre)?.1;
                (reads[next.0 as usize] == 1).then_some((at, next, c, start))
            })
            .collect();
        let Some(steps) = steps else { continue };
        let span = f.blocks[h].insts.first().map_or(0..0, |i| i.span.clone());
        let mut at_top = Vec::new();
        for (at, next, c, start) in steps {
            let k = f.blocks[h].phis[at].dst;
            let ty = f.types[k.0 as usize];
            let Ty::Scalar(s) = ty else { continue };
            let fresh = |f: &mut Func, ty: Ty| {
                f.types.push(ty);
                Value(f.types.len() as u32 - 1)
            };
            // s - c, made before the loop (SCCP folds it when s is a constant).
            let minus = fresh(f, ty);
            let before = fresh(f, ty);
            let step = fresh(f, ty);
            let prev = fresh(f, ty);
            let pre_insts = &mut f.blocks[pre.0 as usize].insts;
            pre_insts.push(Inst {
                dst: Some(minus),
                op: Op::Int(wrap(s, c.wrapping_neg())),
                span: span.clone(),
            });
            pre_insts.push(Inst {
                dst: Some(before),
                op: Op::Binary(BinOp::Add, start, minus),
                span: span.clone(),
            });
            at_top.push(Inst { dst: Some(step), op: Op::Int(wrap(s, c)), span: span.clone() });
            at_top.push(Inst {
                dst: Some(k),
                op: Op::Binary(BinOp::Add, prev, step),
                span: span.clone(),
            });
            let phi = &mut f.blocks[h].phis[at];
            phi.dst = prev;
            for (from, v) in &mut phi.args {
                *v = if *from == pre { before } else { k };
            }
            f.blocks[l].insts.retain(|i| i.dst != Some(next));
        }
        f.blocks[h].insts.splice(0..0, at_top);
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mir::natural_loops;
    use crate::opt::{Level, optimize};

    #[test]
    fn a_loop_with_continue_steps_its_counter_at_the_top() {
        let src = |body: &str| {
            format!(
                "import wave\n@wave.kernel\ndef k(out: u32[:], n: u32):\n    s: u32 = 0\n    for j in range(n):\n{body}\n        s += j * j\n    out[0] = s\n"
            )
        };
        for (body, at_top) in [
            ("        if j % 3 == 2:\n            continue", true),
            // One way round: nothing to gain.
            ("        s += 1", false),
        ] {
            let mut f = crate::opt::tests::lowered(&src(body));
            optimize(&mut f, Level::O2).expect("verified");
            let text = crate::mir::print(std::slice::from_ref(&f));
            let (header, body_blocks) = natural_loops(&f).first().cloned().expect("a loop");
            // The header makes `j = j' + 1` from its phi `j' = phi(-1, j)`, and the block
            // going back is empty.
            let h = &f.blocks[header.0 as usize];
            let steps_first = h.insts.iter().any(|i| match i.op {
                Op::Binary(BinOp::Add, a, _) => h
                    .phis
                    .iter()
                    .any(|p| p.dst == a && p.args.iter().any(|(_, v)| Some(*v) == i.dst)),
                _ => false,
            });
            let latch = body_blocks
                .iter()
                .find(|b| f.blocks[b.0 as usize].term == Term::Jump(header))
                .expect("a latch");
            assert_eq!(steps_first, at_top, "{body}\n{text}");
            assert_eq!(f.blocks[latch.0 as usize].insts.is_empty(), at_top, "{body}\n{text}");
            // The start is one step back: 0 - 1.
            if at_top {
                assert!(text.contains("const 4294967295"), "{text}");
            }
        }
    }
}

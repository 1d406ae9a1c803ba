//! One latch per loop (O2): the edges back to a header meet in one block first.

use crate::mir::{BlockId, Func, Phi, Term, Value};

/// A loop with several edges back to its header (`continue`, or an `if`/`else` whose arms
/// both end the iteration) gets one latch block that they all jump to: the header's phis
/// take one value from it, merged there. The values that go round the loop are then made
/// once after the arms join (for LIR: copies after the `endif`, not in each arm).
pub fn single_latch(f: &mut Func) -> bool {
    let mut changed = false;
    let idom = f.dominators();
    let preds = f.predecessors();
    for (h, from) in preds.iter().enumerate() {
        let header = BlockId(h as u32);
        let back: Vec<BlockId> =
            from.iter().copied().filter(|p| Func::dominates(&idom, header, *p)).collect();
        if back.len() < 2 {
            continue;
        }
        let latch = BlockId(f.blocks.len() as u32);
        let span = f.blocks[h].insts.first().map_or(0..0, |i| i.span.clone());
        let mut latch_phis = Vec::new();
        let phis = std::mem::take(&mut f.blocks[h].phis);
        let mut new_phis = Vec::new();
        for mut phi in phis {
            let from_back: Vec<(BlockId, Value)> =
                phi.args.iter().copied().filter(|(b, _)| back.contains(b)).collect();
            phi.args.retain(|(b, _)| !back.contains(b));
            let v = if from_back.iter().all(|(_, v)| *v == from_back[0].1) {
                from_back[0].1
            } else {
                let ty = f.types[phi.dst.0 as usize];
                f.types.push(ty);
                let d = Value(f.types.len() as u32 - 1);
                latch_phis.push(Phi { dst: d, var: phi.var, args: from_back });
                d
            };
            phi.args.push((latch, v));
            new_phis.push(phi);
        }
        f.blocks[h].phis = new_phis;
        for b in &back {
            let t = &mut f.blocks[b.0 as usize].term;
            *t = match t.clone() {
                Term::Jump(x) if x == header => Term::Jump(latch),
                Term::Branch(c, x, y) => Term::Branch(
                    c,
                    if x == header { latch } else { x },
                    if y == header { latch } else { y },
                ),
                other => other,
            };
        }
        let _ = span;
        f.blocks.push(crate::mir::Block {
            phis: latch_phis,
            insts: Vec::new(),
            term: Term::Jump(header),
        });
        changed = true;
    }
    changed
}

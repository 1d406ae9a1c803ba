//! Special registers read where they are first needed (O2), never inside a loop.

use crate::mir::{BlockId, Func, Op, Term, Value, common_dominator, natural_loops};

/// Special registers are read where they are first needed (they cost one instruction
/// anywhere, and a register from the read to the use): each moves to the nearest common
/// dominator of its uses, before the first of them there, but never into a loop.
pub fn sink_specials(f: &mut Func) -> bool {
    let idom = f.dominators();
    let nca = common_dominator(f, &idom);
    let loops = natural_loops(f);
    let in_loops = |b: BlockId| -> Vec<BlockId> {
        loops.iter().filter(|(_, body)| body.contains(&b)).map(|(h, _)| *h).collect()
    };
    let specials: Vec<(BlockId, Value)> = f
        .blocks
        .iter()
        .enumerate()
        .flat_map(|(b, blk)| {
            blk.insts.iter().filter_map(move |i| match (i.dst, &i.op) {
                (Some(d), Op::Special(_)) => Some((BlockId(b as u32), d)),
                _ => None,
            })
        })
        .collect();
    let mut changed = false;
    for (from, v) in specials {
        // The blocks that read it (a phi reads at the end of its predecessor).
        let mut at: Vec<BlockId> = Vec::new();
        for (b, blk) in f.blocks.iter().enumerate() {
            for p in &blk.phis {
                at.extend(p.args.iter().filter(|(_, a)| *a == v).map(|(x, _)| *x));
            }
            let reads = blk.insts.iter().any(|i| i.op.operands().contains(&v))
                || matches!(blk.term, Term::Branch(c, _, _) if c == v);
            if reads {
                at.push(BlockId(b as u32));
            }
        }
        let Some(target) = at.iter().copied().reduce(&nca) else { continue };
        let outer = in_loops(from);
        if in_loops(target).iter().any(|h| !outer.contains(h)) {
            continue;
        }
        let Some(k) = f.blocks[from.0 as usize].insts.iter().position(|i| i.dst == Some(v)) else {
            continue;
        };
        let inst = f.blocks[from.0 as usize].insts.remove(k);
        let tb = &mut f.blocks[target.0 as usize].insts;
        let first = tb.iter().position(|i| i.op.operands().contains(&v)).unwrap_or(tb.len());
        if target == from && first == k {
            tb.insert(k, inst);
            continue;
        }
        tb.insert(first, inst);
        changed = true;
    }
    changed
}

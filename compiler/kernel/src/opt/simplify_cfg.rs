//! CFG simplification (O1): blocks merged into their only predecessor, unreachable blocks
//! dropped.

use std::collections::HashMap;

use super::substitute;
use crate::mir::{BlockId, Func, Term, Value};

/// CFG simplification: a block whose only predecessor jumps straight to it is merged into that
/// predecessor; blocks no path reaches are dropped. `if` diamonds and loop headers stay (a
/// header has two predecessors, a branch target's predecessor branches).
pub fn simplify_cfg(f: &mut Func) -> bool {
    let mut changed = false;
    loop {
        let preds = f.predecessors();
        let mut merged = false;
        for (b, from) in preds.iter().enumerate().skip(1) {
            let [p] = from.as_slice() else { continue };
            let p = *p;
            if p.0 as usize == b || f.blocks[p.0 as usize].term != Term::Jump(BlockId(b as u32)) {
                continue;
            }
            // B's phis have one argument each: they are that value.
            let block = std::mem::replace(
                &mut f.blocks[b],
                crate::mir::Block { phis: Vec::new(), insts: Vec::new(), term: Term::Return },
            );
            let subst: HashMap<Value, Value> = block
                .phis
                .iter()
                .filter_map(|phi| phi.args.first().map(|(_, v)| (phi.dst, *v)))
                .collect();
            let target = &mut f.blocks[p.0 as usize];
            target.insts.extend(block.insts);
            target.term = block.term;
            // Successors of B now come from P.
            for s in f.blocks[p.0 as usize].term.successors() {
                for phi in &mut f.blocks[s.0 as usize].phis {
                    for (from, _) in &mut phi.args {
                        if from.0 as usize == b {
                            *from = p;
                        }
                    }
                }
            }
            substitute(f, &subst);
            // B is now unreachable; renumbering drops it.
            crate::mir::remove_unreachable(f);
            merged = true;
            changed = true;
            break;
        }
        if !merged {
            return changed;
        }
    }
}

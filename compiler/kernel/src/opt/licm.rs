//! Loop-invariant code motion (O2): pure instructions whose operands come from outside a
//! loop move to its preheader.

use crate::mir::{BlockId, Func, Op, Term, Value, natural_loops};

/// Loop-invariant code motion: a pure instruction of a loop whose operands are all defined
/// outside it moves to the loop's preheader (the one block outside that jumps to the header).
/// An address plus a constant, read only as addresses, stays ([`Func::offset_addresses`]).
/// Loads stay (a store in the loop may change memory), and so do intrinsic calls: a wave
/// operation depends on which lanes are still in the loop.
pub fn licm(f: &mut Func) -> bool {
    // Moving instructions changes no block, no definition and no read: the loops, the
    // predecessors and the free addresses hold throughout.
    let preds = f.predecessors();
    let loops = natural_loops(f);
    // An address plus a constant offset costs nothing where it is read (the back end
    // folds it into the access); hoisted, it would hold a register through the loop.
    let offsets = f.offset_addresses();
    // When each block last changed, and when each loop was last found with nothing to
    // hoist: a loop none of whose blocks changed since then still has nothing, and is not
    // scanned again (a function with hundreds of loops would otherwise be rescanned after
    // every hoist).
    let mut changed_at = vec![0u64; f.blocks.len()];
    let mut settled_at: Vec<Option<u64>> = vec![None; loops.len()];
    let mut clock = 0u64;
    let mut changed = false;
    loop {
        let mut moved = false;
        for (l, (header, body)) in loops.iter().enumerate() {
            if settled_at[l].is_some_and(|t| body.iter().all(|b| changed_at[b.0 as usize] <= t)) {
                continue;
            }
            let outside: Vec<BlockId> =
                preds[header.0 as usize].iter().copied().filter(|p| !body.contains(p)).collect();
            let [pre] = outside.as_slice() else { continue };
            if f.blocks[pre.0 as usize].term != Term::Jump(*header) {
                continue;
            }
            // Values defined inside the loop.
            let mut inside: std::collections::HashSet<Value> = Default::default();
            for b in body {
                let block = &f.blocks[b.0 as usize];
                inside.extend(block.phis.iter().map(|p| p.dst));
                inside.extend(block.insts.iter().filter_map(|i| i.dst));
            }
            let mut hoisted = Vec::new();
            clock += 1;
            for b in body {
                let block = &mut f.blocks[b.0 as usize];
                let before = block.insts.len();
                let mut keep = Vec::with_capacity(before);
                for inst in std::mem::take(&mut block.insts) {
                    let pure = !matches!(
                        inst.op,
                        Op::Load(..) | Op::Store(..) | Op::Atomic(..) | Op::Call(..)
                    );
                    let invariant = inst.op.operands().iter().all(|v| !inside.contains(v));
                    let free = inst.dst.is_some_and(|d| offsets[d.0 as usize].is_some());
                    match inst.dst {
                        Some(d) if pure && invariant && !free => {
                            inside.remove(&d);
                            hoisted.push(inst);
                        }
                        _ => keep.push(inst),
                    }
                }
                block.insts = keep;
                if block.insts.len() != before {
                    changed_at[b.0 as usize] = clock;
                }
            }
            if !hoisted.is_empty() {
                f.blocks[pre.0 as usize].insts.extend(hoisted);
                changed_at[pre.0 as usize] = clock;
                moved = true;
                changed = true;
                break;
            }
            settled_at[l] = Some(clock);
        }
        if !moved {
            return changed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hir::BinOp;
    use crate::opt::{Level, optimize};

    #[test]
    fn invariant_arithmetic_leaves_the_loop_and_wave_operations_stay() {
        let src = "import wave\n@wave.kernel\ndef k(out: u32[:], n: u32, m: u32):\n    s: u32 = 0\n    for i in range(n):\n        t = m * m + 7\n        s += t + wave.reduce_add(i)\n    out[0] = s\n";
        let (kernels, d) = crate::hir(src, crate::Language::Python);
        assert!(d.is_empty(), "{d:?}");
        let mut f = crate::mir::lower(&kernels[0]);
        optimize(&mut f, Level::O2).expect("verified");
        let header = natural_loops(&f).first().map(|(h, _)| *h).expect("a loop");
        let body: Vec<BlockId> = natural_loops(&f)[0].1.clone();
        let in_loop = |pred: &dyn Fn(&Op) -> bool| {
            body.iter().any(|b| f.blocks[b.0 as usize].insts.iter().any(|i| pred(&i.op)))
        };
        assert!(
            !in_loop(&|op| matches!(op, Op::Binary(BinOp::Mul, ..))),
            "m * m is hoisted:\n{}",
            crate::mir::print(std::slice::from_ref(&f))
        );
        assert!(in_loop(&|op| matches!(op, Op::Call(..))), "the wave reduction stays in the loop");
        assert!(header.0 > 0);
    }
}

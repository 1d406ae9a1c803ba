//! Early evaluation (O2): a cheap computation after a loop made as soon as its operands are,
//! so that they die before the loop.

use std::collections::HashMap;

use super::fold::scalar_of;
use super::repeat;
use crate::hir::{BinOp, Scalar};
use crate::mir::{BlockId, Func, Op, Term, Value, natural_loops, simple_loop};

/// Early evaluation: a cheap pure computation after a loop whose operands are all defined
/// before it, and are read by nothing after the loop's start but this, is made as soon as
/// its operands are (after the last of them). Its operands then die earlier, and one value
/// instead of two or more is held through the loop (`out + 4 i` for a store after it).
pub fn evaluate_early(f: &mut Func) -> bool {
    repeat(f, 8, evaluate_early_once)
}

pub(super) fn evaluate_early_once(f: &mut Func) -> bool {
    let Some((b, k, at_block, at)) = find_early(f) else { return false };
    let inst = f.blocks[b].insts.remove(k);
    f.blocks[at_block.0 as usize].insts.insert(at, inst);
    true
}

/// The first instruction [`evaluate_early`] moves (by loop, then block, then position): its
/// block and index, and where it goes. Every question it asks of the function (who reads a
/// value, which block dominates which, which loops hold a block) is answered from tables made
/// once, so a kernel with hundreds of loops one after another is not scanned again for each
/// instruction after each loop.
fn find_early(f: &Func) -> Option<(usize, usize, BlockId, usize)> {
    let preds = f.predecessors();
    let loops = natural_loops(f);
    let idom = f.dominators();
    let dom = crate::mir::DomTree::new(&idom);
    let mut def_block: HashMap<Value, BlockId> = HashMap::new();
    let mut def_at: HashMap<Value, usize> = HashMap::new();
    let mut def_op: HashMap<Value, &Op> = HashMap::new();
    // The instructions that read each value (once per instruction, in block and instruction
    // order), the blocks whose branch reads it, and the values some phi reads.
    let mut readers: HashMap<Value, Vec<(usize, usize)>> = HashMap::new();
    let mut branch_readers: HashMap<Value, Vec<usize>> = HashMap::new();
    let mut phi_read: std::collections::HashSet<Value> = Default::default();
    for (b, blk) in f.blocks.iter().enumerate() {
        for p in &blk.phis {
            def_block.insert(p.dst, BlockId(b as u32));
            phi_read.extend(p.args.iter().map(|(_, a)| *a));
        }
        for (k, i) in blk.insts.iter().enumerate() {
            if let Some(d) = i.dst {
                def_block.insert(d, BlockId(b as u32));
                def_at.insert(d, k);
                def_op.entry(d).or_insert(&i.op);
            }
            let mut ops = i.op.operands();
            ops.sort_unstable_by_key(|v| v.0);
            ops.dedup();
            for v in ops {
                readers.entry(v).or_default().push((b, k));
            }
        }
        if let Term::Branch(c, _, _) = &blk.term {
            branch_readers.entry(*c).or_default().push(b);
        }
    }
    // The loops that hold each block.
    let mut loops_of: Vec<Vec<usize>> = vec![Vec::new(); f.blocks.len()];
    for (l, (_, body)) in loops.iter().enumerate() {
        for b in body {
            loops_of[b.0 as usize].push(l);
        }
    }
    let none: Vec<(usize, usize)> = Vec::new();
    let no_blocks: Vec<usize> = Vec::new();
    for (l, (header, body)) in loops.iter().enumerate() {
        let Some((pre, _)) = simple_loop(f, &preds, *header, body) else { continue };
        // Blocks after the loop: dominated by the header, outside the loop.
        for (b, blk) in f.blocks.iter().enumerate() {
            let bid = BlockId(b as u32);
            if loops_of[b].contains(&l) || !dom.dominates(*header, bid) {
                continue;
            }
            for (k, inst) in blk.insts.iter().enumerate() {
                let Some(d) = inst.dst else { continue };
                let cheap = matches!(
                    inst.op,
                    Op::Binary(BinOp::Add | BinOp::Shl | BinOp::Mul | BinOp::Sub, ..)
                ) && scalar_of(f, d).is_some_and(Scalar::is_int);
                if !cheap {
                    continue;
                }
                let ops = inst.op.operands();
                let before = |v: &Value| def_block.get(v).is_some_and(|db| dom.dominates(*db, pre));
                if !ops.iter().all(before) {
                    continue;
                }
                // The operands that die here: read by nothing else at or after the loop.
                // Read at or after the loop, other than by the instruction at `skip`.
                let read_late = |v: Value, skip: (usize, usize)| {
                    phi_read.contains(&v)
                        || readers.get(&v).unwrap_or(&none).iter().any(|&(x, j)| {
                            (x, j) != skip && dom.dominates(*header, BlockId(x as u32))
                        })
                        || branch_readers
                            .get(&v)
                            .unwrap_or(&no_blocks)
                            .iter()
                            .any(|&x| dom.dominates(*header, BlockId(x as u32)))
                };
                let late_reader = |v: Value| read_late(v, (b, k));
                // (A value made outside an enclosing loop lives round all of it.)
                let round_outer = |v: Value| {
                    let home = &loops_of[def_block[&v].0 as usize];
                    loops_of[b].iter().any(|outer| !home.contains(outer))
                };
                // Constants and special registers hold no register through the loop: they
                // are set again, or read, where needed.
                let konst = |v: &Value| matches!(def_op.get(v), Some(Op::Int(_) | Op::Special(_)));
                let dying = ops
                    .iter()
                    .filter(|v| !konst(v))
                    .filter(|v| !late_reader(**v) && !round_outer(**v))
                    .count();
                let dies = |v: &Value, skip: (usize, usize)| {
                    konst(v) || (before(v) && !read_late(*v, skip) && !round_outer(*v))
                };
                // One operand for one value is no gain by itself, but it is when the value's
                // one reader would move after it (`c + (x << 2)`: the shift, then the add).
                let enables = || {
                    let [(x, j)] = readers.get(&d).unwrap_or(&none).as_slice() else {
                        return false;
                    };
                    let r = &f.blocks[*x].insts[*j];
                    let cheap = matches!(
                        r.op,
                        Op::Binary(BinOp::Add | BinOp::Shl | BinOp::Mul | BinOp::Sub, ..)
                    );
                    let others: Vec<Value> =
                        r.op.operands().into_iter().filter(|v| *v != d).collect();
                    !phi_read.contains(&d)
                        && cheap
                        && others.iter().all(|v| dies(v, (*x, *j)))
                        && others.iter().any(|v| !konst(v))
                };
                let all_die = ops.iter().all(|v| dies(v, (b, k)));
                if dying < 2 && !(dying == 1 && all_die && enables()) {
                    continue;
                }
                // As early as its operands allow: after the last of them to be defined (their
                // definitions dominate the preheader, so they lie on one chain of dominators).
                let mut at_block = BlockId(0);
                let mut at = 0usize;
                for v in &ops {
                    let db = def_block[v];
                    let after = def_at.get(v).map_or(0, |k| k + 1);
                    if dom.dominates(at_block, db) && (db != at_block || after > at) {
                        if db != at_block {
                            at = 0;
                        }
                        at_block = db;
                        at = at.max(after);
                    }
                }
                return Some((b, k, at_block, at));
            }
        }
    }
    None
}

//! Rematerialization (O2): values read in a loop only around its inner loop are made again
//! where they are read, and (O2 only) likewise in long loops.

use std::collections::HashMap;

use super::dce::dce;
use super::fold::scalar_of;
use super::{copy_chain, repeat};
use crate::hir::BinOp;
use crate::mir::{BlockId, Func, Op, Term, Value, common_dominator, natural_loops};

/// The most instructions one rematerialized value costs per iteration.
const REMAT_MAX: usize = 4;

/// The fewest instructions a loop without inner loops needs for rematerialization in it.
const REMAT_LONG_BODY: usize = 64;

/// Rematerialization: in a loop that holds an inner loop, a loop-invariant value made before
/// it from values the loop keeps anyway (`tiles = (k + 15) >> 4` with k compared inside, a
/// thread's slot `4 (16 ty + tx)` with tx and ty used inside), or a special register, and
/// read in the loop only outside the inner loop (and not after the loop) is made again where
/// the loop reads it, in each iteration: a few instructions per outer iteration for one
/// register fewer held through the inner loop, where the most registers are live. A
/// register is what limits occupancy. The copy lives only between its making and its last
/// reader in an iteration, inside the old value's range: no point needs more registers.
pub fn remat_around_inner_loops(f: &mut Func) -> bool {
    // (No CSE after: it would merge the copies back into what they copy.)
    repeat(f, 32, |f| remat_once(f, false))
}

/// Rematerialization in a loop without inner loops whose body is long (at least
/// `REMAT_LONG_BODY` instructions: a loop fully unrolled inside it): a value read only in
/// part of an iteration is made again right before its first reader there, so that it is not
/// held through the rest, where the unrolled code keeps the most registers live. O2 only: it
/// costs a few instructions per iteration for registers, and O3 spends registers for speed.
pub fn remat_in_long_loops(f: &mut Func) -> bool {
    repeat(f, 8, |f| remat_once(f, true))
}

fn remat_once(f: &mut Func, long_loops: bool) -> bool {
    let loops = natural_loops(f);
    // Which loops qualify, before the maps below are built (most functions have none).
    let qualifies = |header: BlockId, body: &[BlockId]| {
        let has_inner = loops.iter().any(|(h, _)| *h != header && body.contains(h));
        if long_loops {
            let size: usize = body.iter().map(|b| f.blocks[b.0 as usize].insts.len()).sum();
            !has_inner && size >= REMAT_LONG_BODY
        } else {
            has_inner
        }
    };
    if !loops.iter().any(|(h, body)| qualifies(*h, body)) {
        return false;
    }
    let idom = f.dominators();
    let nca = common_dominator(f, &idom);
    let mut def_block: HashMap<Value, (BlockId, usize)> = HashMap::new();
    let mut phi_read: std::collections::HashSet<Value> = Default::default();
    for (b, blk) in f.blocks.iter().enumerate() {
        for p in &blk.phis {
            def_block.insert(p.dst, (BlockId(b as u32), usize::MAX));
            phi_read.extend(p.args.iter().map(|(_, v)| *v));
        }
        for (k, i) in blk.insts.iter().enumerate() {
            if let Some(d) = i.dst {
                def_block.insert(d, (BlockId(b as u32), k));
            }
        }
    }
    // The blocks that read each value (terminators too).
    let mut readers: HashMap<Value, Vec<(BlockId, usize)>> = HashMap::new();
    for (b, blk) in f.blocks.iter().enumerate() {
        for (k, i) in blk.insts.iter().enumerate() {
            for v in i.op.operands() {
                readers.entry(v).or_default().push((BlockId(b as u32), k));
            }
        }
        if let Term::Branch(c, ..) = blk.term {
            readers.entry(c).or_default().push((BlockId(b as u32), usize::MAX));
        }
    }
    let cheap = |op: &Op| {
        matches!(
            op,
            Op::Binary(
                BinOp::Add
                    | BinOp::Sub
                    | BinOp::Shl
                    | BinOp::Shr
                    | BinOp::And
                    | BinOp::Or
                    | BinOp::Xor,
                ..
            )
        )
    };
    for (header, body) in &loops {
        let inner: Vec<BlockId> = loops
            .iter()
            .filter(|(h, _)| h != header && body.contains(h))
            .flat_map(|(_, b)| b.iter().copied())
            .collect();
        if !qualifies(*header, body) {
            continue;
        }
        let outside = |v: &Value| def_block.get(v).is_some_and(|(b, _)| !body.contains(b));
        // Kept through the loop anyway: made outside it and read inside, other than by `tree`.
        let kept = |v: &Value, tree: &[Value]| {
            outside(v)
                && readers.get(v).is_some_and(|rs| {
                    rs.iter().any(|&(b, k)| {
                        body.contains(&b)
                            && (k == usize::MAX
                                || f.blocks[b.0 as usize].insts[k]
                                    .dst
                                    .is_none_or(|d| !tree.contains(&d)))
                    })
                })
        };
        let konst = |v: &Value| matches!(motion_def(f, &def_block, *v), Some(Op::Int(_)));
        // (In value order: the same code every time.)
        // Only values made outside the loop and read in it can be made again in it.
        let mut candidates: Vec<(Value, (BlockId, usize))> = def_block
            .iter()
            .filter(|(v, (b, k))| {
                *k != usize::MAX
                    && !body.contains(b)
                    && readers.get(v).is_some_and(|rs| rs.iter().any(|(rb, _)| body.contains(rb)))
            })
            .map(|(v, at)| (*v, *at))
            .collect();
        candidates.sort_by_key(|(v, _)| std::cmp::Reverse(v.0));
        for (v, (vb, vk)) in candidates {
            if vk == usize::MAX || body.contains(&vb) || phi_read.contains(&v) {
                continue;
            }
            let Some(op) = motion_def(f, &def_block, v) else { continue };
            let special = matches!(op, Op::Special(_));
            if !(cheap(op) || special) || scalar_of(f, v).is_none_or(|s| !s.is_int()) {
                continue;
            }
            // Read in the loop outside its inner loops, and not after it (before it, the value
            // made there serves).
            let Some(all) = readers.get(&v) else { continue };
            let after = |b: &BlockId| !body.contains(b) && Func::dominates(&idom, *header, *b);
            if all.iter().any(|(b, _)| inner.contains(b) || after(b)) {
                continue;
            }
            let rs: Vec<(BlockId, usize)> =
                all.iter().copied().filter(|(b, _)| body.contains(b)).collect();
            if rs.is_empty() {
                continue;
            }
            // The tree to copy: v and the values only it reads, down to constants and values
            // the loop keeps anyway.
            let mut tree = vec![v];
            let mut leaves_ok = true;
            let mut i = 0;
            while i < tree.len() && leaves_ok {
                let Some(op) = motion_def(f, &def_block, tree[i]) else { break };
                for x in op.operands() {
                    if konst(&x) || tree.contains(&x) {
                        continue;
                    }
                    if kept(&x, &tree) {
                        continue;
                    }
                    let only_here = readers.get(&x).is_some_and(|rs| {
                        rs.iter().all(|&(b, k)| {
                            k != usize::MAX
                                && f.blocks[b.0 as usize].insts[k]
                                    .dst
                                    .is_some_and(|d| tree.contains(&d))
                        })
                    }) && !phi_read.contains(&x);
                    let inner_op = motion_def(f, &def_block, x);
                    // A special register is read again wherever it is needed, whoever else
                    // reads it; other leaves must be read by this tree alone.
                    let special = inner_op.is_some_and(|op| matches!(op, Op::Special(_)));
                    if outside(&x) && (special || (only_here && inner_op.is_some_and(&cheap))) {
                        tree.push(x);
                    } else {
                        leaves_ok = false;
                    }
                }
                i += 1;
            }
            if !leaves_ok || tree.len() > REMAT_MAX {
                continue;
            }
            // Made where its readers' blocks meet, first thing there.
            let Some(at) = rs.iter().map(|(b, _)| *b).reduce(&nca) else { continue };
            // (Not into an inner loop, where it would run every inner iteration.)
            if !body.contains(&at) || inner.contains(&at) {
                continue;
            }
            let mut map: HashMap<Value, Value> = HashMap::new();
            let order: Vec<Value> = tree.iter().rev().copied().collect();
            let copies = copy_chain(f, &def_block, &order, &mut map);
            let new = map[&v];
            for b in body {
                let blk = &mut f.blocks[b.0 as usize];
                for i in &mut blk.insts {
                    i.op.map_operands(&mut |x| if x == v { new } else { x });
                }
                if let Term::Branch(c, ..) = &mut blk.term
                    && *c == v
                {
                    *c = new;
                }
            }
            // Without inner loops, right before the first reader in that block, so that the
            // copy is not held through what comes before it.
            let first = rs.iter().filter(|(b, _)| *b == at).map(|(_, k)| *k).min();
            let place = match first {
                Some(k) if inner.is_empty() => k.min(f.blocks[at.0 as usize].insts.len()),
                _ => 0,
            };
            f.blocks[at.0 as usize].insts.splice(place..place, copies);
            dce(f);
            return true;
        }
    }
    false
}

fn motion_def<'a>(
    f: &'a Func,
    def_block: &HashMap<Value, (BlockId, usize)>,
    v: Value,
) -> Option<&'a Op> {
    let &(b, k) = def_block.get(&v)?;
    if k == usize::MAX {
        return None;
    }
    f.blocks[b.0 as usize].insts.get(k).map(|i| &i.op)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::opt::{Level, optimize};

    #[test]
    fn a_bound_made_from_values_a_loop_keeps_is_made_again_around_an_inner_loop() {
        // tiles = (k + 15) // 16 is made in the outer loop (k lives through it anyway), and
        // the thread id read there, so neither is held through the inner loop; without an
        // inner loop both stay before the loop.
        let src = |inner: &str| {
            format!(
                "import wave\n@wave.kernel\ndef k(a: u32[:], out: u32[:], k: u32):\n    tx = wave.thread_id(0)\n    tiles = (k + 15) // 16\n    s: u32 = 0\n    for t in range(tiles):\n        if t * 16 + tx < k:\n            s += a[t]\n{inner}    out[0] = s\n"
            )
        };
        // (24 steps: 16 or fewer are unrolled at O2.)
        let inner = "        for j in range(u32(24)):\n            s += a[j + 8]\n";
        for (body, again) in [(inner, true), ("", false)] {
            let mut f = crate::opt::tests::lowered(&src(body));
            optimize(&mut f, Level::O2).expect("verified");
            let text = crate::mir::print(std::slice::from_ref(&f));
            let loops = natural_loops(&f);
            let (_, outer) = loops.iter().max_by_key(|(_, b)| b.len()).expect("a loop");
            let shr_inside = outer.iter().any(|b| {
                f.blocks[b.0 as usize]
                    .insts
                    .iter()
                    .any(|i| matches!(i.op, Op::Binary(BinOp::Shr, ..)))
            });
            assert_eq!(shr_inside, again, "{body}\n{text}");
            let specials_inside = outer
                .iter()
                .flat_map(|b| &f.blocks[b.0 as usize].insts)
                .filter(|i| matches!(i.op, Op::Special(_)))
                .count();
            assert_eq!(specials_inside, usize::from(again), "{body}\n{text}");
        }
    }
}

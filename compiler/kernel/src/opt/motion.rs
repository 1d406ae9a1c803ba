//! Code motion that shortens live ranges (O2): accumulator seeding, special registers read
//! where needed, early evaluation before loops, and store sinking.

use std::collections::HashMap;

use super::*;
use crate::hir::{BinOp, Scalar, Ty};
use crate::mir::{BlockId, Func, Inst, Op, Phi, Term, Value};

// -------------------------------------------------------------------------------------------
// Shorter live ranges across loops (O2).

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

pub(super) fn def_of(f: &Func, v: Value) -> Option<&Op> {
    f.blocks.iter().flat_map(|b| &b.insts).find(|i| i.dst == Some(v)).map(|i| &i.op)
}

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

// -------------------------------------------------------------------------------------------
// Rematerialization around inner loops (O2).

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

// -------------------------------------------------------------------------------------------
// Store sinking (O2).

/// Both arms of an `if`/`else` ending with a store to the same address become one store of
/// a phi after the join: `if c: a[i] = x else: a[i] = y` stores once. The value then comes
/// from a copy (or a constant set) in each arm, which if-conversion turns into guarded
/// instructions, and no register holds the constant across the code around it.
pub fn sink_stores(f: &mut Func) -> bool {
    let mut changed = false;
    let preds = f.predecessors();
    for (j, from) in preds.iter().enumerate() {
        let [a, b] = from.as_slice() else { continue };
        let (a, b) = (*a, *b);
        let join = BlockId(j as u32);
        if a == b
            || f.blocks[a.0 as usize].term != Term::Jump(join)
            || f.blocks[b.0 as usize].term != Term::Jump(join)
        {
            continue;
        }
        let last = |x: BlockId| f.blocks[x.0 as usize].insts.last().map(|i| i.op.clone());
        let (Some(Op::Store(sa, addr_a, va)), Some(Op::Store(sb, addr_b, vb))) = (last(a), last(b))
        else {
            continue;
        };
        if sa != sb || addr_a != addr_b || f.types[va.0 as usize] != f.types[vb.0 as usize] {
            continue;
        }
        let span = f.blocks[a.0 as usize].insts.last().map(|i| i.span.clone()).unwrap_or(0..0);
        f.blocks[a.0 as usize].insts.pop();
        f.blocks[b.0 as usize].insts.pop();
        f.types.push(f.types[va.0 as usize]);
        let v = Value(f.types.len() as u32 - 1);
        let var = f.blocks[j].phis.first().map(|p| p.var).unwrap_or(crate::hir::VarId(u32::MAX));
        f.blocks[j].phis.push(Phi { dst: v, var, args: vec![(a, va), (b, vb)] });
        f.blocks[j].insts.insert(0, Inst { dst: None, op: Op::Store(sa, addr_a, v), span });
        changed = true;
    }
    changed
}

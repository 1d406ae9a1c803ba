//! Loop passes: natural loops, loop-invariant code motion and code hoisting (O2),
//! induction-variable strength reduction with linear function test replacement, one latch
//! per loop, exit merging and loop rotation (O2), and full unrolling (O3).

use std::collections::HashMap;

use super::*;
use crate::hir::{BinOp, Scalar, Ty, UnOp};
use crate::mir::{BlockId, Func, Inst, Op, Phi, Space, Term, Value};

// -------------------------------------------------------------------------------------------
// Loop-invariant code motion (O2).

/// Runs a pass that makes one change at a time until it makes none, at most `rounds` times.
pub(super) fn repeat(f: &mut Func, rounds: usize, once: fn(&mut Func) -> bool) -> bool {
    let mut changed = false;
    for _ in 0..rounds {
        if !once(f) {
            break;
        }
        changed = true;
    }
    changed
}

/// Code hoisting (O2): a cheap pure computation made in blocks none of which dominates the
/// others (the two arms of an `if`, two `if`s on the same condition) is made once at the end
/// of their nearest common dominator, when its operands are available there. The value is
/// then computed on every path through that block: only one-instruction arithmetic moves
/// (no division, which may trap, and no comparison, which LIR keeps where it is tested).
pub fn hoist(f: &mut Func) -> bool {
    // Each round may make the operands of another computation available.
    repeat(f, 4, hoist_once)
}

pub(super) fn hoist_once(f: &mut Func) -> bool {
    let idom = f.dominators();
    let nca = common_dominator(f, &idom);
    let rpo = f.reverse_postorder();
    let mut def_block: HashMap<Value, BlockId> = HashMap::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for phi in &block.phis {
            def_block.insert(phi.dst, BlockId(b as u32));
        }
        for inst in &block.insts {
            if let Some(d) = inst.dst {
                def_block.insert(d, BlockId(b as u32));
            }
        }
    }
    let cheap = |op: &Op, ty: Ty| {
        ty != Ty::Scalar(Scalar::Bool)
            && match op {
                Op::Binary(op, ..) => !matches!(op, BinOp::Div | BinOp::Rem),
                Op::Unary(..) | Op::Cast(_) | Op::Special(_) | Op::Int(_) | Op::Float(_) => true,
                _ => false,
            }
    };
    // Equal computations, by key, in reverse postorder.
    let mut groups: HashMap<Key, Vec<(BlockId, Value)>> = HashMap::new();
    let mut keys: Vec<Key> = Vec::new();
    for &b in &rpo {
        for inst in &f.blocks[b.0 as usize].insts {
            let Some(d) = inst.dst else { continue };
            if !cheap(&inst.op, f.types[d.0 as usize]) {
                continue;
            }
            if let Some(k) = key(f, &inst.op, d) {
                let g = groups.entry(k).or_default();
                if g.is_empty() {
                    keys.push(k);
                }
                g.push((b, d));
            }
        }
    }
    let mut subst: HashMap<Value, Value> = HashMap::new();
    let mut moves: Vec<(BlockId, Value, BlockId)> = Vec::new();
    for k in keys {
        let g = &groups[&k];
        if g.len() < 2 {
            continue;
        }
        let target = g.iter().map(|(b, _)| *b).reduce(&nca).unwrap_or(BlockId(0));
        // Only where no member's block is the target (CSE handles dominating ones).
        if g.iter().any(|(b, _)| *b == target || Func::dominates(&idom, *b, target)) {
            continue;
        }
        let (from, keep) = g[0];
        let op = f.blocks[from.0 as usize]
            .insts
            .iter()
            .find(|i| i.dst == Some(keep))
            .map(|i| i.op.clone());
        let Some(op) = op else { continue };
        let available = op
            .operands()
            .iter()
            .all(|v| def_block.get(v).is_some_and(|db| Func::dominates(&idom, *db, target)));
        if !available {
            continue;
        }
        moves.push((from, keep, target));
        for &(_, v) in &g[1..] {
            subst.insert(v, keep);
        }
    }
    if moves.is_empty() {
        return false;
    }
    for (from, v, to) in moves {
        let block = &mut f.blocks[from.0 as usize];
        let Some(at) = block.insts.iter().position(|i| i.dst == Some(v)) else { continue };
        let inst = block.insts.remove(at);
        f.blocks[to.0 as usize].insts.push(inst);
    }
    for block in &mut f.blocks {
        block.insts.retain(|i| i.dst.is_none_or(|d| !subst.contains_key(&d)));
    }
    substitute(f, &subst);
    true
}

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

// -------------------------------------------------------------------------------------------
// Strength reduction of induction variables (O2).

/// An affine function of a loop's induction variable: `coef * scale * iv + base`, where the
/// chain of instructions that computes it (from the IV and loop-invariant values) is known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Affine {
    coef: i64,
    /// A loop-invariant factor (`a[(16 t + ty) * n + col]`), or none (1).
    scale: Option<Value>,
}

/// Addresses that are affine functions of a loop's basic induction variable (`i = phi(init,
/// i + c)`) become their own induction variables: `p = phi(start, p + coef * c)`, with
/// `start` computed once before the loop. `a[i * n + j]` in a `for j` loop then costs one
/// addition per iteration instead of a multiply, a shift and two additions.
pub fn iv_reduce(f: &mut Func) -> bool {
    let mut changed = false;
    for (header, body) in natural_loops(f) {
        changed |= reduce_loop(f, header, &body);
    }
    changed
}

pub(super) fn reduce_loop(f: &mut Func, header: BlockId, body: &[BlockId]) -> bool {
    let preds = f.predecessors();
    let Some((pre, latch)) = simple_loop(f, &preds, header, body) else { return false };
    let mut defs: HashMap<Value, (BlockId, usize)> = HashMap::new();
    let mut inside: std::collections::HashSet<Value> = Default::default();
    for b in body {
        let block = &f.blocks[b.0 as usize];
        inside.extend(block.phis.iter().map(|p| p.dst));
        for (i, inst) in block.insts.iter().enumerate() {
            if let Some(d) = inst.dst {
                inside.insert(d);
                defs.insert(d, (*b, i));
            }
        }
    }
    let consts: HashMap<Value, i64> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match (i.dst, &i.op) {
            (Some(d), Op::Int(x)) => Some((d, *x)),
            _ => None,
        })
        .collect();
    let mut changed = false;
    // Basic induction variables: header phis stepped by a constant in the latch.
    let phis = f.blocks[header.0 as usize].phis.clone();
    for phi in phis {
        let Some(s) = scalar_of(f, phi.dst).filter(|s| s.is_int()) else { continue };
        let (Some(&(_, init)), Some(&(_, next))) =
            (phi.args.iter().find(|(p, _)| *p == pre), phi.args.iter().find(|(p, _)| *p == latch))
        else {
            continue;
        };
        let step = match defs.get(&next).map(|&(b, i)| &f.blocks[b.0 as usize].insts[i].op) {
            Some(Op::Binary(BinOp::Add, x, c)) if *x == phi.dst => consts.get(c).copied(),
            Some(Op::Binary(BinOp::Add, c, x)) if *x == phi.dst => consts.get(c).copied(),
            Some(Op::Binary(BinOp::Sub, x, c)) if *x == phi.dst => consts.get(c).map(|c| -c),
            _ => None,
        };
        let Some(step) = step else { continue };
        // Affine values of this IV, in program order over the loop's blocks.
        let mut affine: HashMap<Value, Affine> = HashMap::new();
        affine.insert(phi.dst, Affine { coef: 1, scale: None });
        let invariant = |v: &Value| !inside.contains(v);
        let add = |x: Affine, y: Affine, sign: i64| {
            (x.scale == y.scale)
                .then(|| Affine { coef: x.coef.wrapping_add(sign.wrapping_mul(y.coef)), ..x })
        };
        let times = |x: Affine, k: i64| Affine { coef: x.coef.wrapping_mul(k), ..x };
        let mut chain: Vec<Value> = Vec::new();
        for b in f.reverse_postorder() {
            if !body.contains(&b) {
                continue;
            }
            for inst in &f.blocks[b.0 as usize].insts {
                let Some(d) = inst.dst else { continue };
                if scalar_of(f, d).is_none_or(|t| !t.is_int()) {
                    continue;
                }
                let a = |v: &Value| affine.get(v).copied();
                // `x * y` with x affine: y a constant, or an invariant value when x has no
                // invariant factor yet.
                let product = |x: Affine, y: &Value| match consts.get(y) {
                    Some(k) => Some(times(x, *k)),
                    None if invariant(y) && x.scale.is_none() => {
                        Some(Affine { scale: Some(*y), ..x })
                    }
                    None => None,
                };
                let form = match &inst.op {
                    Op::Binary(BinOp::Add, x, y) => match (a(x), a(y)) {
                        (Some(c), None) if invariant(y) => Some(c),
                        (None, Some(c)) if invariant(x) => Some(c),
                        (Some(c), Some(e)) => add(c, e, 1),
                        _ => None,
                    },
                    Op::Binary(BinOp::Sub, x, y) => match (a(x), a(y)) {
                        (Some(c), None) if invariant(y) => Some(c),
                        (None, Some(c)) if invariant(x) => Some(times(c, -1)),
                        (Some(c), Some(e)) => add(c, e, -1),
                        _ => None,
                    },
                    Op::Binary(BinOp::Mul, x, y) => match (a(x), a(y)) {
                        (Some(c), None) => product(c, y),
                        (None, Some(c)) => product(c, x),
                        _ => None,
                    },
                    Op::Binary(BinOp::Shl, x, y) => match (a(x), consts.get(y)) {
                        (Some(c), Some(k)) if (0..31).contains(k) => Some(times(c, 1 << *k)),
                        _ => None,
                    },
                    Op::Cast(x) if matches!(scalar_of(f, *x), Some(Scalar::I32 | Scalar::U32)) => {
                        a(x)
                    }
                    _ => None,
                };
                if let Some(form) = form {
                    affine.insert(d, form);
                    chain.push(d);
                }
            }
        }
        // Addresses to reduce: affine values a memory access uses, not the IV itself.
        let mut targets: Vec<Value> = Vec::new();
        for b in body {
            for inst in &f.blocks[b.0 as usize].insts {
                let addr = match &inst.op {
                    Op::Load(s, _) | Op::Store(s, _, _) if matches!(s, Space::Private(_)) => None,
                    Op::Load(_, a) | Op::Store(_, a, _) | Op::Atomic(_, _, a, _) => Some(*a),
                    _ => None,
                };
                if let Some(a) = addr
                    && a != phi.dst
                    && affine.get(&a).is_some_and(|x| x.coef != 0)
                    && !targets.contains(&a)
                {
                    targets.push(a);
                }
            }
        }
        let mut reduced: Vec<(Value, Value, i64, Ty)> = Vec::new();
        for target in targets {
            // The start value: the chain computing `target`, cloned before the loop with the
            // IV replaced by its initial value.
            let mut needed: Vec<Value> = Vec::new();
            let mut stack = vec![target];
            while let Some(v) = stack.pop() {
                if v == phi.dst || needed.contains(&v) || !affine.contains_key(&v) {
                    continue;
                }
                needed.push(v);
                let (b, i) = defs[&v];
                stack.extend(f.blocks[b.0 as usize].insts[i].op.operands());
            }
            let order: Vec<Value> = chain.iter().copied().filter(|v| needed.contains(v)).collect();
            let mut map: HashMap<Value, Value> = HashMap::new();
            map.insert(phi.dst, init);
            let clones = copy_chain(f, &defs, &order, &mut map);
            let start = map[&target];
            let span = clones.last().map(|i: &Inst| i.span.clone()).unwrap_or(0..0);
            f.blocks[pre.0 as usize].insts.extend(clones);
            // p = phi(start, p + coef * scale * step), stepped at the end of the latch.
            let ty = f.types[target.0 as usize];
            let form = affine[&target];
            let delta = form.coef.wrapping_mul(step);
            let new = |f: &mut Func| {
                f.types.push(ty);
                Value(f.types.len() as u32 - 1)
            };
            let (p, k, p_next) = (new(f), new(f), new(f));
            match form.scale {
                None => f.blocks[latch.0 as usize].insts.push(Inst {
                    dst: Some(k),
                    op: Op::Int(wrap(s, delta)),
                    span: span.clone(),
                }),
                // An invariant step, made once before the loop.
                Some(scale) => {
                    let c = new(f);
                    // (A shift only below 32: WAVE shifts by the count's low five bits.)
                    let (op, konst) = if delta > 0 && delta.count_ones() == 1 && delta < 1 << 32 {
                        (BinOp::Shl, i64::from(delta.trailing_zeros()))
                    } else {
                        (BinOp::Mul, wrap(s, delta))
                    };
                    let pre_insts = &mut f.blocks[pre.0 as usize].insts;
                    pre_insts.push(Inst { dst: Some(c), op: Op::Int(konst), span: span.clone() });
                    pre_insts.push(Inst {
                        dst: Some(k),
                        op: Op::Binary(op, scale, c),
                        span: span.clone(),
                    });
                }
            }
            f.blocks[latch.0 as usize].insts.push(Inst {
                dst: Some(p_next),
                op: Op::Binary(BinOp::Add, p, k),
                span,
            });
            f.blocks[header.0 as usize].phis.push(Phi {
                dst: p,
                var: phi.var,
                args: vec![(pre, start), (latch, p_next)],
            });
            let subst: HashMap<Value, Value> = [(target, p)].into_iter().collect();
            substitute(f, &subst);
            changed = true;
            if form.scale.is_none() {
                reduced.push((p, start, delta, ty));
            }
        }
        // Linear function test replacement: with a known trip count N, `i < bound` is
        // `p != start + N * delta` for a reduced pointer p whose N + 1 values are distinct,
        // and the counter i, now read by nothing else, goes.
        if let Some(&(p, start, delta, ty)) = reduced.first() {
            replace_test(f, header, pre, latch, phi.dst, next, p, start, delta, ty);
        }
        if changed {
            // Definitions moved: start again on a fresh view of the function.
            dce(f);
            return true;
        }
    }
    changed
}

/// The trip count of a loop whose header tests `iv op bound` (both from constants): how
/// many times the body runs, if at most `limit`.
pub(super) fn trip_count(
    f: &Func,
    header: BlockId,
    pre: BlockId,
    latch: BlockId,
    iv: Value,
    limit: u64,
) -> Option<(u64, Value)> {
    let def_op = |v: Value| {
        f.blocks.iter().flat_map(|b| &b.insts).find(|i| i.dst == Some(v)).map(|i| i.op.clone())
    };
    let konst = |v: Value| match def_op(v) {
        Some(Op::Int(x)) => Some(x),
        _ => None,
    };
    let Term::Branch(cond, t, _) = f.blocks[header.0 as usize].term else { return None };
    let exit_when = t == header || !f.dominates_block(header, t) || t == pre;
    let Some(Op::Binary(cmp, x, bound)) = def_op(cond) else { return None };
    if x != iv || !cmp.is_comparison() {
        return None;
    }
    let phi = f.blocks[header.0 as usize].phis.iter().find(|p| p.dst == iv)?;
    let s = scalar_of(f, iv).filter(|s| s.is_int())?;
    let start = phi.args.iter().find(|(b, _)| *b == pre).and_then(|(_, v)| konst(*v))?;
    let next = phi.args.iter().find(|(b, _)| *b == latch).map(|(_, v)| *v)?;
    let step = match def_op(next) {
        Some(Op::Binary(BinOp::Add, y, c)) if y == iv => konst(c)?,
        _ => return None,
    };
    let bound = konst(bound)?;
    let mut trips = 0u64;
    let mut i = wrap(s, start);
    loop {
        let holds = match fold(cmp, s, Lat::Int(i), Lat::Int(wrap(s, bound))) {
            Some(Lat::Bool(b)) => b,
            _ => return None,
        };
        if holds == exit_when {
            return Some((trips, cond));
        }
        trips += 1;
        if trips > limit {
            return None;
        }
        i = wrap(s, i.wrapping_add(step));
    }
}

/// The bound of a loop that tests `iv < bound` (u32) at its header, counting up from 0 by 1,
/// where `bound` is defined before the loop: the loop leaves exactly when iv equals it.
pub(super) fn invariant_bound(
    f: &Func,
    header: BlockId,
    pre: BlockId,
    latch: BlockId,
    iv: Value,
    cond: Value,
) -> Option<Value> {
    let def = |v: Value| {
        f.blocks.iter().enumerate().find_map(|(b, blk)| {
            blk.insts.iter().find(|i| i.dst == Some(v)).map(|i| (BlockId(b as u32), i.op.clone()))
        })
    };
    let Term::Branch(c, body, _) = f.blocks[header.0 as usize].term else { return None };
    if c != cond || !f.dominates_block(header, body) || body == header {
        return None;
    }
    let (_, Op::Binary(BinOp::Lt, x, bound)) = def(cond)? else { return None };
    if x != iv || scalar_of(f, iv) != Some(Scalar::U32) {
        return None;
    }
    let phi = f.blocks[header.0 as usize].phis.iter().find(|p| p.dst == iv)?;
    let start = phi.args.iter().find(|(b, _)| *b == pre)?.1;
    let next = phi.args.iter().find(|(b, _)| *b == latch)?.1;
    let (_, Op::Int(0)) = def(start)? else { return None };
    let (_, Op::Binary(BinOp::Add, y, one)) = def(next)? else { return None };
    let (_, Op::Int(1)) = def(one)? else { return None };
    if y != iv {
        return None;
    }
    // Defined before the loop: in a block that dominates the preheader.
    let (at, _) = def(bound)?;
    f.dominates_block(at, pre).then_some(bound)
}

#[allow(
    clippy::too_many_arguments,
    reason = "the exit test's parts, each found by the caller's analysis of the loop"
)]
pub(super) fn replace_test(
    f: &mut Func,
    header: BlockId,
    pre: BlockId,
    latch: BlockId,
    iv: Value,
    next: Value,
    p: Value,
    start: Value,
    delta: i64,
    ty: Ty,
) {
    // The body runs on the branch's first target; the test must be `iv < bound` style.
    let Term::Branch(cond, body, _) = f.blocks[header.0 as usize].term else { return };
    if !f.dominates_block(header, body) || body == header {
        return;
    }
    // The pointer's end: `start + delta * trips` for a constant trip count, or
    // `start + delta * bound` for `iv < bound` counting up from 0 by 1 (unsigned: it leaves
    // exactly when iv reaches bound) with a loop-invariant bound small enough that no two
    // pointers of the range are equal.
    enum End {
        Trips(u64),
        Bound(Value),
    }
    let end = match trip_count(f, header, pre, latch, iv, 1 << 20) {
        Some((trips, c)) if c == cond => End::Trips(trips),
        Some(_) => return,
        None => match invariant_bound(f, header, pre, latch, iv, cond) {
            Some(b) => End::Bound(b),
            None => return,
        },
    };
    // What the reduced addresses replaced is dead now.
    dce(f);
    let fits = match end {
        End::Trips(trips) => (delta.unsigned_abs() as u128) * (trips as u128) < 1 << 32,
        End::Bound(b) => {
            let most = crate::mir::upper_bounds(f).get(b.0 as usize).copied().unwrap_or(u64::MAX);
            // Or: p addresses Local Memory on every iteration. Reaching bound >= 2^32 / delta
            // would then access 2^32 bytes of it, far past its size: no correct kernel
            // does, so the pointers before the end are all different.
            let idom = f.dominators();
            let every_iteration = f.blocks.iter().enumerate().any(|(b, blk)| {
                Func::dominates(&idom, BlockId(b as u32), latch)
                    && blk.insts.iter().any(|i| {
                        matches!(i.op, Op::Load(Space::Local, a) | Op::Store(Space::Local, a, _) if a == p)
                    })
            });
            every_iteration || (delta.unsigned_abs() as u128) * (most as u128) < 1 << 32
        }
    };
    if delta == 0 || !fits {
        return;
    }
    // Nothing else reads the counter or the test.
    let mut readers = 0;
    let mut cond_readers = 0;
    for b in &f.blocks {
        for phi in &b.phis {
            readers += phi.args.iter().filter(|(_, v)| *v == iv).count();
            cond_readers += phi.args.iter().filter(|(_, v)| *v == cond).count();
        }
        for inst in &b.insts {
            let ops = inst.op.operands();
            if inst.dst != Some(next) {
                readers += ops.iter().filter(|v| **v == iv).count();
            }
            cond_readers += ops.iter().filter(|v| **v == cond).count();
        }
    }
    // The test reads iv once; the increment reads it once (excluded above).
    if readers != 1 || cond_readers != 0 {
        return;
    }
    let Ty::Scalar(s) = ty else { return };
    let span = f.blocks[header.0 as usize].insts.last().map(|i| i.span.clone()).unwrap_or(0..0);
    let push = |f: &mut Func, b: BlockId, op: Op, t: Ty| {
        f.types.push(t);
        let v = Value(f.types.len() as u32 - 1);
        f.blocks[b.0 as usize].insts.push(Inst { dst: Some(v), op, span: span.clone() });
        v
    };
    let total = match end {
        End::Trips(trips) => push(f, pre, Op::Int(wrap(s, delta.wrapping_mul(trips as i64))), ty),
        End::Bound(b) if delta.unsigned_abs().is_power_of_two() && delta > 0 => {
            let k = push(f, pre, Op::Int(i64::from(delta.trailing_zeros())), ty);
            push(f, pre, Op::Binary(BinOp::Shl, b, k), ty)
        }
        End::Bound(b) => {
            let k = push(f, pre, Op::Int(wrap(s, delta)), ty);
            push(f, pre, Op::Binary(BinOp::Mul, b, k), ty)
        }
    };
    let end = push(f, pre, Op::Binary(BinOp::Add, start, total), ty);
    let test = push(f, header, Op::Binary(BinOp::Ne, p, end), Ty::Scalar(Scalar::Bool));
    if let Term::Branch(c, _, _) = &mut f.blocks[header.0 as usize].term {
        *c = test;
    }
}

// -------------------------------------------------------------------------------------------
// One latch per loop (O2).

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

// -------------------------------------------------------------------------------------------
// Exit merging (O2).

/// Two exits in a row merge into one: a block that leaves to E or goes on to B, where B
/// makes a few cheap pure values and leaves to E too or goes on to C (`while x != 1:
/// count += 1; if count > 60: break`). B's values are made in the first block (for every
/// lane: they cannot fault), which goes on to C only when both tests say so; E tells the
/// two ways in apart with a `select` on the first test. One test and one branch fewer on
/// the path that goes on.
pub fn merge_exits(f: &mut Func) -> bool {
    repeat(f, 16, merge_exits_once)
}

pub(super) fn merge_exits_once(f: &mut Func) -> bool {
    let preds = f.predecessors();
    // An empty block that only jumps on stands for its target.
    let through = |b: BlockId| -> BlockId {
        let blk = &f.blocks[b.0 as usize];
        match blk.term {
            Term::Jump(t)
                if blk.insts.is_empty()
                    && blk.phis.is_empty()
                    && preds[b.0 as usize].len() == 1 =>
            {
                t
            }
            _ => b,
        }
    };
    let cheap = |op: &Op| match op {
        Op::Binary(op, ..) => !matches!(op, BinOp::Div | BinOp::Rem),
        Op::Unary(..) | Op::Cast(_) | Op::Int(_) | Op::Float(_) | Op::Bool(_) | Op::Special(_) => {
            true
        }
        _ => false,
    };
    for a in 0..f.blocks.len() {
        let Term::Branch(c1, x, y) = f.blocks[a].term.clone() else { continue };
        for (b, e_edge, go_if) in [(x, y, true), (y, x, false)] {
            let e = through(e_edge);
            let bi = b.0 as usize;
            if b.0 as usize == a
                || preds[bi] != [BlockId(a as u32)]
                || !f.blocks[bi].phis.is_empty()
            {
                continue;
            }
            let Term::Branch(c2, u, v) = f.blocks[bi].term.clone() else { continue };
            let (c, e2_edge, stay_if) = if through(u) == e {
                (v, u, false)
            } else if through(v) == e {
                (u, v, true)
            } else {
                continue;
            };
            let insts = &f.blocks[bi].insts;
            if insts.len() > 6 || !insts.iter().all(|i| cheap(&i.op) && i.dst.is_some()) {
                continue;
            }
            if c == b || c == e || e.0 as usize == a || c.0 as usize == a {
                continue;
            }
            // E is reached by these two edges only, so the select can go at its top.
            let e_preds = &preds[e.0 as usize];
            let edge_a = if e_edge == e { BlockId(a as u32) } else { e_edge };
            let edge_b = if e2_edge == e { b } else { e2_edge };
            if e_preds.len() != 2 || !e_preds.contains(&edge_a) || !e_preds.contains(&edge_b) {
                continue;
            }
            // C's phis may read values from B: they now come from A.
            let span = f.blocks[bi].insts.last().map_or(0..0, |i| i.span.clone());
            let moved = std::mem::take(&mut f.blocks[bi].insts);
            let push = |f: &mut Func, op: Op, ty: Ty| {
                f.types.push(ty);
                let v = Value(f.types.len() as u32 - 1);
                f.blocks[a].insts.push(Inst { dst: Some(v), op, span: span.clone() });
                v
            };
            f.blocks[a].insts.extend(moved);
            let bool_ty = Ty::Scalar(Scalar::Bool);
            let go_a = if go_if { c1 } else { push(f, Op::Unary(UnOp::Not, c1), bool_ty) };
            let go_b = if stay_if { c2 } else { push(f, Op::Unary(UnOp::Not, c2), bool_ty) };
            let both = push(f, Op::Binary(BinOp::LogicAnd, go_a, go_b), bool_ty);
            f.blocks[a].term = Term::Branch(both, c, e);
            // E: one way in now; each phi picks by the first test.
            let phis = std::mem::take(&mut f.blocks[e.0 as usize].phis);
            let mut selects = Vec::new();
            for phi in phis {
                let from = |p: BlockId| phi.args.iter().find(|(x, _)| *x == p).map(|(_, v)| *v);
                let (Some(va), Some(vb)) = (from(edge_a), from(edge_b)) else { continue };
                // `vb = va + k` (a counter stepped before the second test): the way out
                // past the first test recomputes va from vb, so va need not be kept beside
                // vb through the loop.
                let step =
                    f.blocks[a].insts.iter().find(|i| i.dst == Some(vb)).and_then(|i| match i.op {
                        Op::Binary(BinOp::Add, x, y) if x == va => {
                            def_of(f, y).cloned().map(|o| (o, y))
                        }
                        _ => None,
                    });
                let va = match (step, scalar_of(f, vb)) {
                    (Some((Op::Int(k), _)), Some(sc)) if sc.is_int() => {
                        let ty = f.types[vb.0 as usize];
                        f.types.push(ty);
                        let minus = Value(f.types.len() as u32 - 1);
                        f.types.push(ty);
                        let back = Value(f.types.len() as u32 - 1);
                        selects.push(Inst {
                            dst: Some(minus),
                            op: Op::Int(wrap(sc, k.wrapping_neg())),
                            span: span.clone(),
                        });
                        selects.push(Inst {
                            dst: Some(back),
                            op: Op::Binary(BinOp::Add, vb, minus),
                            span: span.clone(),
                        });
                        back
                    }
                    _ => va,
                };
                selects.push(Inst {
                    dst: Some(phi.dst),
                    op: Op::Select(go_a, vb, va),
                    span: span.clone(),
                });
            }
            let eb = &mut f.blocks[e.0 as usize].insts;
            for (k, s) in selects.into_iter().enumerate() {
                eb.insert(k, s);
            }
            for p in &mut f.blocks[c.0 as usize].phis {
                for (from, _) in &mut p.args {
                    if *from == b {
                        *from = BlockId(a as u32);
                    }
                }
            }
            f.blocks[bi].term = Term::Return;
            crate::mir::remove_unreachable(f);
            return true;
        }
    }
    false
}

/// Counted exits: a loop counting `j` up from 0 by 1 (u32) that goes on while `j < a` and
/// `j != b` (a `for` with a `break` at `j == b`, after exit merging) leaves at the first of
/// them it reaches, which is `min(a, b)`: one test, `j < min(a, b)`, with the minimum made
/// before the loop.
pub fn merge_counted_exits(f: &mut Func) -> bool {
    let mut changed = false;
    let preds = f.predecessors();
    for (header, body) in natural_loops(f) {
        let Some((pre, latch)) = simple_loop(f, &preds, header, &body) else { continue };
        let h = header.0 as usize;
        let Term::Branch(c, t, _) = f.blocks[h].term.clone() else { continue };
        if !body.contains(&t) {
            continue;
        }
        let here =
            |v: Value| f.blocks[h].insts.iter().find(|i| i.dst == Some(v)).map(|i| i.op.clone());
        let Some(Op::Binary(BinOp::LogicAnd, x, y)) = here(c) else { continue };
        // One side `j < a`, the other `j != b` (or `not (j == b)`).
        let lt = |v: Value| match here(v) {
            Some(Op::Binary(BinOp::Lt, j, a)) => Some((j, a)),
            _ => None,
        };
        let ne = |v: Value| match here(v) {
            Some(Op::Binary(BinOp::Ne, j, b)) => Some((j, b)),
            Some(Op::Unary(UnOp::Not, e)) => match here(e) {
                Some(Op::Binary(BinOp::Eq, j, b)) => Some((j, b)),
                _ => None,
            },
            _ => None,
        };
        let (Some((j, a)), Some((j2, b))) = (lt(x).or(lt(y)), ne(y).or(ne(x))) else { continue };
        if j != j2 || scalar_of(f, j) != Some(Scalar::U32) {
            continue;
        }
        // j = phi(0, j + 1), and a, b from before the loop.
        let Some(phi) = f.blocks[h].phis.iter().find(|p| p.dst == j) else { continue };
        let from = |blk: BlockId| phi.args.iter().find(|(x, _)| *x == blk).map(|(_, v)| *v);
        let (Some(start), Some(next)) = (from(pre), from(latch)) else { continue };
        let starts_at_zero = matches!(def_of(f, start), Some(Op::Int(0)));
        let steps_by_one = match def_of(f, next) {
            Some(Op::Binary(BinOp::Add, v, one)) => {
                *v == j && matches!(def_of(f, *one), Some(Op::Int(1)))
            }
            _ => false,
        };
        let idom = f.dominators();
        let before = |v: Value| {
            f.blocks.iter().enumerate().any(|(blk, block)| {
                Func::dominates(&idom, BlockId(blk as u32), pre)
                    && (block.insts.iter().any(|i| i.dst == Some(v))
                        || block.phis.iter().any(|p| p.dst == v))
            })
        };
        if !starts_at_zero || !steps_by_one || !before(a) || !before(b) {
            continue;
        }
        let span = f.blocks[h].insts.last().map_or(0..0, |i| i.span.clone());
        f.types.push(Ty::Scalar(Scalar::U32));
        let m = Value(f.types.len() as u32 - 1);
        f.blocks[pre.0 as usize].insts.push(Inst {
            dst: Some(m),
            op: Op::Call(crate::hir::Intrinsic::Min, vec![a, b]),
            span: span.clone(),
        });
        f.types.push(Ty::Scalar(Scalar::Bool));
        let test = Value(f.types.len() as u32 - 1);
        f.blocks[h].insts.push(Inst { dst: Some(test), op: Op::Binary(BinOp::Lt, j, m), span });
        if let Term::Branch(cond, _, _) = &mut f.blocks[h].term {
            *cond = test;
        }
        changed = true;
    }
    changed
}

// -------------------------------------------------------------------------------------------
// Loop rotation (O2).

/// What a header computes on the way in: a constant, or a value plus a constant offset.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Entry {
    Const(Lat),
    Offset(Value, i64),
}

/// Loop rotation: a loop whose first test is known to enter it goes straight from its
/// preheader into the body and tests at the bottom, so the test runs once per iteration
/// instead of once more. Known: `stride = 128; while stride > 0`, or a pointer tested
/// against its start plus a non-zero length. The header's values become variables, rebuilt
/// into SSA (phis at the body's top, and at the exit for the paths that break out).
pub fn rotate(f: &mut Func) -> bool {
    let mut changed = false;
    // Each rotation changes the loops: find them again, a bounded number of times.
    for _ in 0..16 {
        let preds = f.predecessors();
        let mut done = false;
        for (header, body) in natural_loops(f) {
            if let Some((pre, latch)) = simple_loop(f, &preds, header, &body)
                && rotate_loop(f, header, pre, latch, &body, &preds)
            {
                done = true;
                break;
            }
        }
        if !done {
            break;
        }
        changed = true;
    }
    changed
}

pub(super) fn rotate_loop(
    f: &mut Func,
    header: BlockId,
    pre: BlockId,
    latch: BlockId,
    body: &[BlockId],
    preds: &[Vec<BlockId>],
) -> bool {
    let h = header.0 as usize;
    let Term::Branch(cond, t, e) = f.blocks[h].term.clone() else { return false };
    let (inside, exit, enter_if) = match (body.contains(&t), body.contains(&e)) {
        (true, false) => (t, e, true),
        (false, true) => (e, t, false),
        _ => return false,
    };
    if inside == header || preds[inside.0 as usize] != [header] {
        return false;
    }
    // Only loops left by their test alone (no `break` or `return` inside): the bottom test
    // is then the loop's one way out, which LIR structures as `break` before `endloop`.
    let leaves = body.iter().any(|b| {
        *b != header && f.blocks[b.0 as usize].term.successors().iter().any(|s| !body.contains(s))
    });
    if leaves || preds[exit.0 as usize] != [header] {
        return false;
    }
    let pure = |op: &Op| match op {
        Op::Binary(op, ..) => !matches!(op, BinOp::Div | BinOp::Rem),
        Op::Int(_) | Op::Float(_) | Op::Bool(_) | Op::Special(_) | Op::Unary(..) | Op::Cast(_) => {
            true
        }
        _ => false,
    };
    if !f.blocks[h].insts.iter().all(|i| pure(&i.op) && i.dst.is_some()) {
        return false;
    }
    let phis = f.blocks[h].phis.clone();
    let in_header: Vec<Value> =
        phis.iter().map(|p| p.dst).chain(f.blocks[h].insts.iter().filter_map(|i| i.dst)).collect();
    let from = |p: &Phi, b: BlockId| p.args.iter().find(|(x, _)| *x == b).map(|(_, v)| *v);
    // (A value carried from one iteration to the next is made in the body, not here.)
    if phis
        .iter()
        .any(|p| from(p, latch).is_none_or(|v| f.blocks[h].insts.iter().any(|i| i.dst == Some(v))))
    {
        return false;
    }
    // The first test, with the phis' values on entry.
    let konst = |v: Value| {
        f.blocks.iter().flat_map(|b| &b.insts).find(|i| i.dst == Some(v)).and_then(|i| match i.op {
            Op::Int(x) => Some(Lat::Int(x)),
            Op::Bool(b) => Some(Lat::Bool(b)),
            _ => None,
        })
    };
    // A value from outside the header: a constant, or `x + c` (as x plus c) chains.
    let outside = |mut v: Value| {
        let mut offset = 0i64;
        for _ in 0..8 {
            match konst(v) {
                Some(c) if offset == 0 => return Entry::Const(c),
                Some(Lat::Int(c)) => return Entry::Const(Lat::Int(c.wrapping_add(offset))),
                Some(_) => return Entry::Offset(v, offset),
                None => {}
            }
            let def = f.blocks.iter().flat_map(|b| &b.insts).find(|i| i.dst == Some(v));
            match def.map(|i| &i.op) {
                Some(Op::Binary(BinOp::Add, a, b))
                    if scalar_of(f, v).is_some_and(Scalar::is_int) =>
                {
                    match konst(*b) {
                        Some(Lat::Int(k)) => {
                            offset = offset.wrapping_add(k);
                            v = *a;
                        }
                        _ => break,
                    }
                }
                _ => break,
            }
        }
        Entry::Offset(v, offset)
    };
    let look =
        |env: &HashMap<Value, Entry>, v: Value| env.get(&v).copied().unwrap_or_else(|| outside(v));
    let mut env: HashMap<Value, Entry> = HashMap::new();
    for p in &phis {
        let Some(v) = from(p, pre) else { return false };
        env.insert(p.dst, outside(v));
    }
    for inst in &f.blocks[h].insts {
        let Some(d) = inst.dst else { continue };
        let r = match &inst.op {
            Op::Int(x) => Some(Entry::Const(Lat::Int(*x))),
            Op::Bool(b) => Some(Entry::Const(Lat::Bool(*b))),
            Op::Binary(op, a, b) => {
                let s = scalar_of(f, *a);
                match (look(&env, *a), look(&env, *b), s) {
                    (Entry::Const(x), Entry::Const(y), Some(s)) => {
                        fold(*op, s, x, y).map(Entry::Const)
                    }
                    (Entry::Offset(v, o), Entry::Const(Lat::Int(k)), Some(s))
                        if *op == BinOp::Add && s.is_int() =>
                    {
                        Some(Entry::Offset(v, o.wrapping_add(k)))
                    }
                    (Entry::Offset(v, o1), Entry::Offset(w, o2), Some(s))
                        if v == w && s.is_int() && matches!(op, BinOp::Eq | BinOp::Ne) =>
                    {
                        let same = wrap(s, o1) == wrap(s, o2);
                        Some(Entry::Const(Lat::Bool(same == (*op == BinOp::Eq))))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(r) = r {
            env.insert(d, r);
        }
    }
    if env.get(&cond) != Some(&Entry::Const(Lat::Bool(enter_if))) {
        return false;
    }
    // The header's values as variables: defined on entry (in the preheader, by a copy of
    // the header's code) and again by the header, now the bottom of the loop.
    // (The phis kept stay out of the rebuild: the variables can be numbered from 0.)
    let base = 0u32;
    let var_of: HashMap<Value, crate::hir::VarId> = in_header
        .iter()
        .enumerate()
        .map(|(i, v)| (*v, crate::hir::VarId(base + i as u32)))
        .collect();
    let header_code = f.blocks[h].insts.clone();
    let mut vars: Vec<crate::hir::Var> = (0..base + in_header.len() as u32)
        .map(|_| crate::hir::Var { name: String::new(), ty: Ty::Unit, span: 0..0, param: false })
        .collect();
    for (v, var) in &var_of {
        vars[var.0 as usize].ty = f.types[v.0 as usize];
    }
    let fresh = |f: &mut Func, ty: Ty| {
        f.types.push(ty);
        Value(f.types.len() as u32 - 1)
    };
    let n = f.blocks.len();
    let mut raw: Vec<Vec<crate::mir::Raw>> = vec![Vec::new(); n];
    let mut tails: Vec<Vec<crate::mir::Raw>> = vec![Vec::new(); n];
    let mut kept: Vec<Vec<Phi>> = Vec::with_capacity(n);
    use crate::mir::Raw;
    // Phis elsewhere that read a header value read the variable at the end of that edge.
    for b in 0..n {
        let mut phis_b = std::mem::take(&mut f.blocks[b].phis);
        if b == h {
            kept.push(Vec::new());
            continue;
        }
        for phi in &mut phis_b {
            for (p, v) in &mut phi.args {
                if let Some(var) = var_of.get(v) {
                    let x = fresh(f, f.types[v.0 as usize]);
                    tails[p.0 as usize].push(Raw::Use(x, *var));
                    *v = x;
                }
            }
        }
        kept.push(phis_b);
    }
    for b in 0..n {
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut items = Vec::new();
        if b == h {
            // The bottom of the loop: the phis' values from the latch, then the test.
            let mut now: HashMap<Value, Value> = HashMap::new();
            for p in &phis {
                let v = from(p, latch).unwrap_or(p.dst);
                let v = match var_of.get(&v) {
                    Some(var) => {
                        let x = fresh(f, f.types[v.0 as usize]);
                        items.push(Raw::Use(x, *var));
                        x
                    }
                    None => v,
                };
                now.insert(p.dst, v);
            }
            for p in &phis {
                items.push(Raw::Def(var_of[&p.dst], now[&p.dst]));
            }
            for mut inst in insts {
                inst.op.map_operands(&mut |v| *now.get(&v).unwrap_or(&v));
                if let Some(d) = inst.dst {
                    now.insert(d, d);
                    items.push(Raw::Inst(inst));
                    items.push(Raw::Def(var_of[&d], d));
                }
            }
        } else {
            for mut inst in insts {
                let mut reads = Vec::new();
                inst.op.map_operands(&mut |v| match var_of.get(&v) {
                    Some(var) => {
                        reads.push((v, *var));
                        v
                    }
                    None => v,
                });
                let mut map: HashMap<Value, Value> = HashMap::new();
                for (v, var) in reads {
                    let x = fresh(f, f.types[v.0 as usize]);
                    items.push(Raw::Use(x, var));
                    map.insert(v, x);
                }
                inst.op.map_operands(&mut |v| *map.get(&v).unwrap_or(&v));
                items.push(Raw::Inst(inst));
            }
            if let Term::Branch(c, a, z) = f.blocks[b].term.clone()
                && let Some(var) = var_of.get(&c)
            {
                let x = fresh(f, Ty::Scalar(Scalar::Bool));
                tails[b].push(Raw::Use(x, *var));
                f.blocks[b].term = Term::Branch(x, a, z);
            }
        }
        raw[b] = items;
    }
    // On entry: the header's code on the phis' entry values, then straight into the body.
    let mut now: HashMap<Value, Value> = HashMap::new();
    for p in &phis {
        let v = from(p, pre).unwrap_or(p.dst);
        now.insert(p.dst, v);
        raw[pre.0 as usize].push(Raw::Def(var_of[&p.dst], v));
    }
    for inst in header_code {
        let Some(d) = inst.dst else { continue };
        let mut c = inst.clone();
        c.op.map_operands(&mut |v| *now.get(&v).unwrap_or(&v));
        let x = fresh(f, f.types[d.0 as usize]);
        c.dst = Some(x);
        now.insert(d, x);
        raw[pre.0 as usize].push(Raw::Inst(c));
        raw[pre.0 as usize].push(Raw::Def(var_of[&d], x));
    }
    for (b, t) in tails.into_iter().enumerate() {
        raw[b].extend(t);
    }
    f.blocks[pre.0 as usize].term = Term::Jump(inside);
    crate::mir::rebuild(f, &vars, raw, kept);
    crate::mir::remove_unreachable(f);
    true
}

// -------------------------------------------------------------------------------------------
// Counters stepped at the top (O2).

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

// -------------------------------------------------------------------------------------------
// Loop unrolling (O3).

/// The most copies of a loop body full unrolling makes.
pub const UNROLL_MAX_TRIPS: u64 = 32;
/// The most instructions a fully unrolled loop may have.
pub const UNROLL_MAX_INSTRUCTIONS: usize = 384;

/// Full unrolling of innermost loops with a trip count known at compile time: a loop whose
/// only exit is its header's test of a basic induction variable (constant start and step)
/// against a constant. The body is copied once per iteration, the induction variable becomes
/// a constant in each copy, and the next passes fold it into addresses and offsets. A loop
/// whose copies would pass [`UNROLL_MAX_TRIPS`] iterations or [`UNROLL_MAX_INSTRUCTIONS`]
/// instructions stays a loop (more code would mean more registers live at once, and so less
/// occupancy, for little gain).
pub fn unroll(f: &mut Func) -> bool {
    unroll_within(f, UNROLL_MAX_TRIPS, UNROLL_MAX_INSTRUCTIONS)
}

/// The most copies of a loop body O2's unrolling makes.
pub const UNROLL_SMALL_MAX_TRIPS: u64 = 16;
/// The most instructions a loop fully unrolled at O2 may have.
pub const UNROLL_SMALL_MAX_INSTRUCTIONS: usize = 256;

/// Full unrolling at O2: as [`unroll`], for small loops only ([`UNROLL_SMALL_MAX_TRIPS`],
/// [`UNROLL_SMALL_MAX_INSTRUCTIONS`]), such as a 16-step walk over a tile. A GPU's own
/// compiler does not unroll a PTX loop, so a loop kept at O2 costs its test, its branch and
/// its counter on every step (SGEMM ran 1.4x slower than CUDA's unrolled twin). The
/// registers this could cost are won back by rematerialization (`motion.rs`).
pub fn unroll_small(f: &mut Func) -> bool {
    unroll_within(f, UNROLL_SMALL_MAX_TRIPS, UNROLL_SMALL_MAX_INSTRUCTIONS)
}

fn unroll_within(f: &mut Func, max_trips: u64, max_instructions: usize) -> bool {
    let mut changed = false;
    for _ in 0..16 {
        let loops = natural_loops(f);
        let innermost: Vec<(BlockId, Vec<BlockId>)> = loops
            .iter()
            .filter(|(h, body)| !loops.iter().any(|(h2, _)| h2 != h && body.contains(h2)))
            .cloned()
            .collect();
        let mut done = false;
        for (header, body) in innermost {
            if unroll_loop(f, header, &body, max_trips, max_instructions) {
                done = true;
                changed = true;
                break;
            }
        }
        if !done {
            break;
        }
    }
    changed
}

pub(super) fn unroll_loop(
    f: &mut Func,
    header: BlockId,
    body: &[BlockId],
    max_trips: u64,
    max_instructions: usize,
) -> bool {
    let preds = f.predecessors();
    let Some((pre, latch)) = simple_loop(f, &preds, header, body) else { return false };
    // The header's test is the only way out.
    let Term::Branch(cond, t, e) = f.blocks[header.0 as usize].term.clone() else { return false };
    let (inside, exit, exit_when) = match (body.contains(&t), body.contains(&e)) {
        (true, false) => (t, e, false),
        (false, true) => (e, t, true),
        _ => return false,
    };
    for b in body {
        if *b == header {
            continue;
        }
        let term = &f.blocks[b.0 as usize].term;
        if *term == Term::Return || term.successors().iter().any(|s| !body.contains(s)) {
            return false;
        }
    }
    // The test: a comparison of a header phi (the IV) with a constant.
    let def_op = |v: Value| {
        f.blocks.iter().flat_map(|b| &b.insts).find(|i| i.dst == Some(v)).map(|i| i.op.clone())
    };
    let konst = |v: Value| match def_op(v) {
        Some(Op::Int(x)) => Some(x),
        _ => None,
    };
    let Some(Op::Binary(cmp, iv, bound)) = def_op(cond) else { return false };
    if !cmp.is_comparison() {
        return false;
    }
    let Some(phi) = f.blocks[header.0 as usize].phis.iter().find(|p| p.dst == iv).cloned() else {
        return false;
    };
    let Some(s) = scalar_of(f, iv).filter(|s| s.is_int()) else { return false };
    let (Some(bound), Some(start)) =
        (konst(bound), phi.args.iter().find(|(p, _)| *p == pre).and_then(|(_, v)| konst(*v)))
    else {
        return false;
    };
    let Some(next) = phi.args.iter().find(|(p, _)| *p == latch).map(|(_, v)| *v) else {
        return false;
    };
    let step = match def_op(next) {
        Some(Op::Binary(BinOp::Add, x, c)) if x == iv => konst(c),
        Some(Op::Binary(BinOp::Sub, x, c)) if x == iv => konst(c).map(|c| -c),
        _ => None,
    };
    let Some(step) = step else { return false };
    // The trip count, by running the test with the machine's arithmetic.
    let mut trips = 0u64;
    let mut i = wrap(s, start);
    loop {
        let holds = match fold(cmp, s, Lat::Int(i), Lat::Int(wrap(s, bound))) {
            Some(Lat::Bool(b)) => b,
            _ => return false,
        };
        if holds == exit_when {
            break;
        }
        trips += 1;
        if trips > max_trips {
            return false;
        }
        i = wrap(s, i.wrapping_add(step));
    }
    let size: usize = body.iter().map(|b| f.blocks[b.0 as usize].insts.len() + 1).sum();
    if size * trips as usize > max_instructions {
        return false;
    }
    // Copies 0..trips of the whole loop, then copy `trips` of the header alone (the exit).
    let mut carried: HashMap<Value, Value> = HashMap::new();
    for p in &f.blocks[header.0 as usize].phis {
        if let Some((_, v)) = p.args.iter().find(|(b, _)| *b == pre) {
            carried.insert(p.dst, *v);
        }
    }
    let header_phis = f.blocks[header.0 as usize].phis.clone();
    let mut first: Option<BlockId> = None;
    let mut previous_latch: Option<BlockId> = None;
    let mut final_map: HashMap<Value, Value> = HashMap::new();
    for copy in 0..=trips {
        let last = copy == trips;
        let blocks: Vec<BlockId> = if last { vec![header] } else { body.to_vec() };
        let mut map: HashMap<Value, Value> = carried.clone();
        let mut bmap: HashMap<BlockId, BlockId> = HashMap::new();
        for b in &blocks {
            f.blocks.push(crate::mir::Block {
                phis: Vec::new(),
                insts: Vec::new(),
                term: Term::Return,
            });
            bmap.insert(*b, BlockId(f.blocks.len() as u32 - 1));
        }
        // Fresh values for everything the copied blocks define.
        for b in &blocks {
            let block = f.blocks[b.0 as usize].clone();
            for p in &block.phis {
                if *b != header {
                    f.types.push(f.types[p.dst.0 as usize]);
                    map.insert(p.dst, Value(f.types.len() as u32 - 1));
                }
            }
            for inst in &block.insts {
                if let Some(d) = inst.dst {
                    f.types.push(f.types[d.0 as usize]);
                    map.insert(d, Value(f.types.len() as u32 - 1));
                }
            }
        }
        let mv = |v: Value, map: &HashMap<Value, Value>| *map.get(&v).unwrap_or(&v);
        for b in &blocks {
            let block = f.blocks[b.0 as usize].clone();
            let nb = bmap[b];
            let mut phis = Vec::new();
            if *b != header {
                for p in &block.phis {
                    phis.push(crate::mir::Phi {
                        dst: mv(p.dst, &map),
                        var: p.var,
                        args: p.args.iter().map(|(pb, v)| (bmap[pb], mv(*v, &map))).collect(),
                    });
                }
            }
            let insts = block
                .insts
                .iter()
                .map(|inst| {
                    let mut inst = inst.clone();
                    inst.op.map_operands(&mut |v| mv(v, &map));
                    inst.dst = inst.dst.map(|d| mv(d, &map));
                    inst
                })
                .collect();
            let term = if *b == header {
                Term::Jump(if last { exit } else { bmap[&inside] })
            } else {
                match &block.term {
                    Term::Jump(x) if *x == header => Term::Jump(BlockId(u32::MAX)),
                    Term::Jump(x) => Term::Jump(bmap[x]),
                    Term::Branch(c, x, y) => Term::Branch(mv(*c, &map), bmap[x], bmap[y]),
                    Term::Return => Term::Return,
                }
            };
            f.blocks[nb.0 as usize] = crate::mir::Block { phis, insts, term };
        }
        // Link the previous copy's latch to this copy's header.
        let this_header = bmap[&header];
        match previous_latch {
            Some(l) => f.blocks[l.0 as usize].term = Term::Jump(this_header),
            None => first = Some(this_header),
        }
        if !last {
            previous_latch = Some(bmap[&latch]);
            // What the header phis are on the next iteration.
            let mut next = HashMap::new();
            for p in &header_phis {
                if let Some((_, v)) = p.args.iter().find(|(b, _)| *b == latch) {
                    next.insert(p.dst, mv(*v, &map));
                }
            }
            carried = next;
        } else {
            final_map = map;
        }
    }
    let first = first.expect("one copy at least");
    let exit_from = BlockId(f.blocks.len() as u32 - 1);
    // Enter the copies instead of the loop; the exit now comes from the last header copy.
    f.blocks[pre.0 as usize].term = Term::Jump(first);
    for p in &mut f.blocks[exit.0 as usize].phis {
        for (b, v) in &mut p.args {
            if *b == header {
                *b = exit_from;
                *v = *final_map.get(v).unwrap_or(v);
            }
        }
    }
    // Values of the header used after the loop are the last copy's.
    let header_values: HashMap<Value, Value> = final_map
        .iter()
        .filter(|(old, _)| {
            header_phis.iter().any(|p| p.dst == **old)
                || f.blocks[header.0 as usize].insts.iter().any(|i| i.dst == Some(**old))
        })
        .map(|(a, b)| (*a, *b))
        .collect();
    crate::mir::remove_unreachable(f);
    substitute(f, &header_values);
    true
}

#[cfg(test)]
mod licm_tests {
    use super::*;

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
    #[test]
    fn a_loop_up_to_an_invariant_bound_tests_its_pointer() {
        // `k < w` with w unknown: the loop reads Local Memory at 4 k on every iteration, so
        // the pointer's test `p != 4 w` replaces the counter. With a device buffer the same
        // needs a bound on w (here `& 255`); without one the counter stays.
        let src = |index: &str, bound: &str| {
            format!(
                "import wave\n@wave.kernel\ndef k(out: u32[:], d: u32[:], w: u32):\n    t = wave.local_array(u32, 64)\n    s: u32 = 0\n    for k in range({bound}):\n        s += {index}[k]\n    out[0] = s\n"
            )
        };
        for (index, bound, counter_goes) in
            [("t", "w", true), ("d", "w & 255", true), ("d", "w", false)]
        {
            let mut f = crate::opt::tests::lowered(&src(index, bound));
            optimize(&mut f, Level::O2).expect("verified");
            let text = crate::mir::print(std::slice::from_ref(&f));
            let compares_with_lt = text.contains(" = lt ");
            assert_eq!(!compares_with_lt, counter_goes, "{index}[k] for k < {bound}:\n{text}");
            if counter_goes {
                assert!(text.contains(" = ne "), "{text}");
            }
        }
    }

    #[test]
    fn loops_whose_first_test_holds_test_at_the_bottom() {
        let src = |head: &str| {
            format!(
                "import wave\n@wave.kernel\ndef k(out: u32[:], n: u32):\n    t = wave.local_array(u32, 64)\n    s: u32 = 0\n    stride: u32 = 32\n{head}\n        s += t[stride]\n        stride = stride >> 1\n    out[0] = s\n"
            )
        };
        for (head, rotated) in [
            ("    while stride > 0:", true),
            // The counter goes (a pointer test against start + 128), which holds on entry.
            // (32 steps: 16 or fewer are unrolled at O2.)
            ("    for j in range(u32(32)):", true),
            ("    for j in range(n):", false),
            ("    while stride > n:", false),
            ("    while stride > 0:\n        if s > n:\n            break", false),
        ] {
            let mut f = crate::opt::tests::lowered(&src(head));
            optimize(&mut f, Level::O2).expect("verified");
            let text = crate::mir::print(std::slice::from_ref(&f));
            let (header, body) = natural_loops(&f).first().cloned().expect("a loop");
            // Rotated, the block that goes back tests (the loop's bottom); else it just jumps
            // back to the header, which tests.
            let jumps_back = body.iter().any(|b| f.blocks[b.0 as usize].term == Term::Jump(header));
            assert_eq!(!jumps_back, rotated, "{head}\n{text}");
        }
    }

    #[test]
    fn live_ranges_across_a_loop_shrink() {
        // q is added after the loop: the sum starts at q instead. out + 4 i is made before
        // the loop (out and i die there). The lane id is read where it is needed.
        let src = "import wave\n@wave.kernel\ndef k(out: u32[:], d: u32[:], n: u32, q: u32):\n    lane = wave.lane_id()\n    i = wave.global_id()\n    d[i] = 1\n    wave.barrier()\n    s: u32 = 0\n    for k in range(n):\n        s += d[k]\n    out[i] = s + q + lane\n";
        let mut f = crate::opt::tests::lowered(src);
        optimize(&mut f, Level::O2).expect("verified");
        let text = crate::mir::print(std::slice::from_ref(&f));
        let (header, body) = natural_loops(&f).first().cloned().expect("a loop");
        let q = f.blocks[0].insts.iter().find(|i| i.op == Op::Param(3)).and_then(|i| i.dst);
        let sum = f.blocks[header.0 as usize]
            .phis
            .iter()
            .find(|p| p.args.iter().any(|(b, v)| !body.contains(b) && Some(*v) == q));
        assert!(sum.is_some(), "the sum starts at q:\n{text}");
        let out = f.blocks[0].insts.iter().find(|i| i.op == Op::Param(0)).and_then(|i| i.dst);
        let idom = f.dominators();
        let address_before = f.blocks.iter().enumerate().any(|(b, blk)| {
            Func::dominates(&idom, BlockId(b as u32), header)
                && b != header.0 as usize
                && blk
                    .insts
                    .iter()
                    .any(|i| matches!(i.op, Op::Binary(BinOp::Add, a, _) if Some(a) == out))
        });
        assert!(address_before, "out + 4 i before the loop:\n{text}");
        let entry = &f.blocks[0].insts;
        let barrier =
            entry.iter().position(|i| matches!(i.op, Op::Call(crate::hir::Intrinsic::Barrier, _)));
        let lane = f.blocks.iter().enumerate().find_map(|(b, blk)| {
            blk.insts
                .iter()
                .position(|i| i.op == Op::Special(crate::hir::Special::LaneId))
                .map(|k| (b, k))
        });
        assert!(
            lane.is_some_and(|(b, k)| b != 0 || barrier.is_some_and(|x| k > x)),
            "the lane id is read after the barrier:\n{text}"
        );
    }

    #[test]
    fn two_exits_in_a_row_merge_and_a_loop_has_one_latch() {
        let src = include_str!("../../tests/hir/collatz.py");
        let mut f = crate::opt::tests::lowered(src);
        optimize(&mut f, Level::O2).expect("verified");
        let text = crate::mir::print(std::slice::from_ref(&f));
        let (header, body) = natural_loops(&f).first().cloned().expect("a loop");
        // One way out (the merged test), and one block going back to the header.
        let exits = body
            .iter()
            .filter(|b| f.blocks[b.0 as usize].term.successors().iter().any(|s| !body.contains(s)))
            .count();
        assert_eq!(exits, 1, "{text}");
        let back = body
            .iter()
            .filter(|b| f.blocks[b.0 as usize].term.successors().contains(&header))
            .count();
        assert_eq!(back, 1, "{text}");
        // The exit tells the two ways out apart: count, or count + 1 past the cap.
        assert_eq!(text.matches(" = select ").count(), 1, "{text}");
    }

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

    #[test]
    fn an_address_scaled_by_an_invariant_steps_by_a_multiple_of_it_and_one_after_is_made_before() {
        // b[(16 t + ty) * n + col] steps by 64 n; c + 4 (row * n + col), stored after the
        // loop, is made before it (row, n, col and c die there instead of living through).
        let src = "import wave\n@wave.kernel\ndef k(b: f32[:], c: f32[:], n: u32, tiles: u32):\n    ty = wave.thread_id(1)\n    col = wave.workgroup_id(0) * 16 + wave.thread_id(0)\n    row = wave.workgroup_id(1) * 16 + ty\n    acc: f32 = 0.0\n    for t in range(tiles):\n        acc += b[(t * 16 + ty) * n + col]\n    c[row * n + col] = acc\n";
        let mut f = crate::opt::tests::lowered(src);
        optimize(&mut f, Level::O2).expect("verified");
        let text = crate::mir::print(std::slice::from_ref(&f));
        let (header, body) = natural_loops(&f).first().cloned().expect("a loop");
        let in_loop = |p: &dyn Fn(&Op) -> bool| {
            body.iter().flat_map(|b| &f.blocks[b.0 as usize].insts).any(|i| p(&i.op))
        };
        assert!(!in_loop(&|op| matches!(op, Op::Binary(BinOp::Mul | BinOp::Shl, ..))), "{text}");
        let n = f.blocks[0].insts.iter().find(|i| i.op == Op::Param(2)).and_then(|i| i.dst);
        let step = f.blocks.iter().flat_map(|b| &b.insts).find_map(|i| match i.op {
            Op::Binary(BinOp::Shl, x, k) if Some(x) == n => Some(k),
            _ => None,
        });
        let six = step.and_then(|k| super::super::motion::def_of(&f, k).cloned());
        assert_eq!(six, Some(Op::Int(6)), "n << 6 before the loop:\n{text}");
        // The store's address is made in a block that dominates the loop.
        let idom = f.dominators();
        let store_at = f.blocks.iter().flat_map(|b| &b.insts).find_map(|i| match i.op {
            Op::Store(_, a, _) => Some(a),
            _ => None,
        });
        let made_before = f.blocks.iter().enumerate().any(|(b, blk)| {
            Func::dominates(&idom, BlockId(b as u32), header)
                && b != header.0 as usize
                && blk.insts.iter().any(|i| i.dst.is_some() && i.dst == store_at)
        });
        assert!(made_before, "{text}");
    }

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

    #[test]
    fn a_count_with_a_break_at_a_value_tests_against_the_minimum() {
        let src = |start: &str| {
            format!(
                "import wave\n@wave.kernel\ndef k(out: u32[:], n: u32, m: u32):\n    s: u32 = 0\n    for j in range({start}n):\n        if j == m:\n            break\n        s += j\n    out[0] = s\n"
            )
        };
        for (start, merged) in [("", true), ("u32(1), ", false)] {
            let mut f = crate::opt::tests::lowered(&src(start));
            optimize(&mut f, Level::O2).expect("verified");
            let text = crate::mir::print(std::slice::from_ref(&f));
            assert_eq!(text.contains("call min("), merged, "range({start}n):\n{text}");
            if merged {
                assert!(!text.contains(" = eq ") && !text.contains(" = ne "), "{text}");
            }
        }
    }

    #[test]
    fn computations_made_on_both_sides_are_made_once_before_and_divisions_stay() {
        let src = "import wave\n@wave.kernel\ndef k(a: u32[:], b: u32[:], n: u32):\n    t = wave.thread_id()\n    if t < n:\n        a[t] = t * 5 + 1\n    if t < 16:\n        b[t] = (t * 5 + 1) // n\n    else:\n        b[t] = (t * 5 + 1) // n\n";
        let mut f = crate::opt::tests::lowered(src);
        optimize(&mut f, Level::O2).expect("verified");
        let text = crate::mir::print(std::slice::from_ref(&f));
        // `t << 2` and `t * 5 + 1`, once each, in the entry block; the divisions stay apart.
        let entry = &f.blocks[0].insts;
        let count = |p: &dyn Fn(&Op) -> bool| {
            f.blocks.iter().flat_map(|b| &b.insts).filter(|i| p(&i.op)).count()
        };
        assert_eq!(count(&|op| matches!(op, Op::Binary(BinOp::Shl, ..))), 1, "{text}");
        assert_eq!(count(&|op| matches!(op, Op::Binary(BinOp::Mul, ..))), 1, "{text}");
        assert!(entry.iter().any(|i| matches!(i.op, Op::Binary(BinOp::Shl, ..))), "{text}");
        assert!(entry.iter().any(|i| matches!(i.op, Op::Binary(BinOp::Mul, ..))), "{text}");
        assert_eq!(count(&|op| matches!(op, Op::Binary(BinOp::Div, ..))), 2, "{text}");
    }
}

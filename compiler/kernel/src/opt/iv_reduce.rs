//! Induction-variable strength reduction with linear function test replacement (O2):
//! addresses affine in a loop's counter become counters of their own.

use std::collections::HashMap;

use super::dce::dce;
use super::fold::{Lat, fold, scalar_of, wrap};
use super::{copy_chain, substitute};
use crate::hir::{BinOp, Scalar, Ty};
use crate::mir::{BlockId, Func, Inst, Op, Phi, Space, Term, Value, natural_loops, simple_loop};

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
        // Each pointer reduced so far, with its value on entry: a later target's chain may
        // read it (`a[j + 1]`'s address is `a[j]`'s plus 4 once CSE has seen both), and its
        // start value must then read the earlier pointer's start, not the phi.
        let mut entry: HashMap<Value, Value> = HashMap::new();
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
            let mut map = entry.clone();
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
            entry.insert(p, start);
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::opt::{Level, optimize};

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
        let six = step.and_then(|k| crate::opt::def_of(&f, k).cloned());
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
}

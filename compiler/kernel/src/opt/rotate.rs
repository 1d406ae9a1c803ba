//! Loop rotation (O2): a loop known to be entered tests at the bottom.

use std::collections::HashMap;

use super::fold::{Lat, fold, scalar_of, wrap};
use crate::hir::{BinOp, Scalar, Ty};
use crate::mir::{BlockId, Func, Op, Phi, Term, Value, natural_loops, simple_loop};

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
    // With a `continue` (a second way into the latch), the test at the bottom makes the latch
    // more than a `continue` can reach; the code a `continue` skips would then be emitted on
    // both sides of the merge, and a wave operation or barrier in it would run twice, each
    // time with some of the lanes. (Not where every path runs it.)
    if preds[latch.0 as usize].len() > 1 && super::unroll::cross_lane_skipped(f, body, latch) {
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::opt::{Level, optimize};

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
}

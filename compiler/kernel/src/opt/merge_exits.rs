//! Exit merging (O2): two tests in a row that leave a loop become one, and a count with a
//! break at a value tests against the minimum.

use super::fold::{scalar_of, wrap};
use super::{def_of, repeat};
use crate::hir::{BinOp, Scalar, Ty, UnOp};
use crate::mir::{BlockId, Func, Inst, Op, Term, Value, natural_loops, simple_loop};

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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::opt::{Level, optimize};

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
}

//! Code hoisting (O2): a computation made on several paths is made once in their nearest
//! common dominator (not on `f64`).

use std::collections::HashMap;

use super::cse::{Key, key};
use super::{repeat, substitute};
use crate::hir::{BinOp, Scalar, Ty};
use crate::mir::{BlockId, Func, Op, Value, common_dominator};

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
    // (Not `f64` values: they take a register pair and are not spilled; a constant shared by
    // the arms of an `if` would be held through all of them.)
    let cheap = |op: &Op, ty: Ty| {
        ty != Ty::Scalar(Scalar::Bool)
            && ty != Ty::Scalar(Scalar::F64)
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::opt::{Level, optimize};

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

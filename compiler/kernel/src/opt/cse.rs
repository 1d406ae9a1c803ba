//! Common subexpression elimination over the dominator tree (O1), and the key that tells
//! equal pure computations apart (code hoisting uses it too).

use std::collections::HashMap;

use super::substitute;
use crate::mir::{BlockId, Func, Op, Value};

/// A key for pure instructions: equal keys compute equal values.
pub(super) fn key(f: &Func, op: &Op, dst: Value) -> Option<Key> {
    let ty = f.types[dst.0 as usize];
    let what = match *op {
        Op::Load(..) | Op::Store(..) | Op::Atomic(..) | Op::Call(..) => return None,
        Op::Int(x) => What::Int(x),
        // By bits: -0.0 and 0.0 stay apart, and so do NaNs of different payloads.
        Op::Float(x) => What::Float(x.to_bits()),
        Op::Bool(x) => What::Bool(x),
        Op::Param(n) => What::Param(n),
        Op::Special(s) => What::Special(s),
        Op::Unary(u, a) => What::Unary(u, a),
        Op::Binary(b, x, y) => What::Binary(b, x, y),
        Op::Cast(a) => What::Cast(a),
        Op::Select(c, x, y) => What::Select(c, x, y),
    };
    Some(Key(what, ty))
}

/// What a pure instruction computes, and its type: equal keys compute equal values.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Key(What, crate::hir::Ty);

/// A pure [`Op`] as a hashable value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum What {
    Int(i64),
    Float(u64),
    Bool(bool),
    Param(u32),
    Special(crate::hir::Special),
    Unary(crate::hir::UnOp, Value),
    Binary(crate::hir::BinOp, Value, Value),
    Cast(Value),
    Select(Value, Value, Value),
}

/// Common subexpression elimination over the dominator tree: a pure instruction equal to one
/// in a dominating position (earlier in the block, or in a dominating block) is replaced by it.
/// Loads, atomics and intrinsic calls are left alone (memory and the active lanes may differ).
pub fn cse(f: &mut Func) -> bool {
    let idom = f.dominators();
    let n = f.blocks.len();
    let mut children: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for (b, d) in idom.iter().enumerate() {
        if let Some(d) = d {
            children[d.0 as usize].push(BlockId(b as u32));
        }
    }
    let mut subst: HashMap<Value, Value> = HashMap::new();
    let mut available: HashMap<Key, Value> = HashMap::new();
    enum Visit {
        Enter(BlockId),
        Leave(Vec<Key>),
    }
    let mut stack = vec![Visit::Enter(BlockId(0))];
    while let Some(visit) = stack.pop() {
        let b = match visit {
            Visit::Leave(added) => {
                for k in added {
                    available.remove(&k);
                }
                continue;
            }
            Visit::Enter(b) => b,
        };
        let mut added = Vec::new();
        let block = &mut f.blocks[b.0 as usize];
        let mut keep = Vec::with_capacity(block.insts.len());
        let insts = std::mem::take(&mut block.insts);
        for mut inst in insts {
            inst.op.map_operands(&mut |v| *subst.get(&v).unwrap_or(&v));
            if let Some(d) = inst.dst
                && let Some(k) = key(f, &inst.op, d)
            {
                if let Some(&prior) = available.get(&k) {
                    subst.insert(d, prior);
                    continue;
                }
                available.insert(k, d);
                added.push(k);
            }
            keep.push(inst);
        }
        f.blocks[b.0 as usize].insts = keep;
        stack.push(Visit::Leave(added));
        for &c in children[b.0 as usize].iter().rev() {
            stack.push(Visit::Enter(c));
        }
    }
    let changed = !subst.is_empty();
    substitute(f, &subst);
    changed
}

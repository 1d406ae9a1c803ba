//! The SSA verifier: the invariants every pass keeps, checked after each pass in debug builds.

use std::collections::HashMap;

use super::{BlockId, Func, Term, Value};
use crate::hir::{Scalar, Ty};

/// Checks the SSA invariants: every value defined once; every use dominated by its
/// definition (a phi's argument at the end of its predecessor); one phi argument per
/// predecessor; branch conditions of type `bool`; targets in range. Returns the problems.
pub fn verify(f: &Func) -> Vec<String> {
    let mut problems = Vec::new();
    let n = f.blocks.len();
    let idom = f.dominators();
    let preds = f.predecessors();
    let mut def_at: HashMap<Value, (BlockId, usize)> = HashMap::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for phi in &block.phis {
            if def_at.insert(phi.dst, (BlockId(b as u32), 0)).is_some() {
                problems.push(format!("%{} is defined twice", phi.dst.0));
            }
        }
        for (i, inst) in block.insts.iter().enumerate() {
            if let Some(d) = inst.dst
                && def_at.insert(d, (BlockId(b as u32), i + 1)).is_some()
            {
                problems.push(format!("%{} is defined twice", d.0));
            }
        }
        for s in block.term.successors() {
            if s.0 as usize >= n {
                problems.push(format!("bb{b} jumps to bb{}, which does not exist", s.0));
            }
        }
    }
    let dominated = |v: Value, b: BlockId, at: usize| -> bool {
        match def_at.get(&v) {
            None => false,
            Some(&(db, di)) if db == b => di <= at,
            Some(&(db, _)) => Func::dominates(&idom, db, b),
        }
    };
    for (b, block) in f.blocks.iter().enumerate() {
        let bid = BlockId(b as u32);
        for phi in &block.phis {
            let mut from: Vec<BlockId> = phi.args.iter().map(|(p, _)| *p).collect();
            from.sort();
            let mut want = preds[b].clone();
            want.sort();
            if from != want {
                problems.push(format!("the phi %{} of bb{b} has arguments from {from:?}, its predecessors are {want:?}", phi.dst.0));
            }
            for (p, v) in &phi.args {
                if !dominated(*v, *p, usize::MAX) {
                    problems.push(format!(
                        "the phi %{} of bb{b} takes %{} from bb{}, which it does not dominate",
                        phi.dst.0, v.0, p.0
                    ));
                }
            }
        }
        for (i, inst) in block.insts.iter().enumerate() {
            for u in inst.op.operands() {
                if !dominated(u, bid, i) {
                    problems.push(format!(
                        "%{} is used in bb{b} where its definition does not dominate",
                        u.0
                    ));
                }
            }
        }
        if let Term::Branch(c, _, _) = &block.term {
            if f.types.get(c.0 as usize) != Some(&Ty::Scalar(Scalar::Bool)) {
                problems.push(format!("bb{b} branches on %{}, which is not a bool", c.0));
            }
            if !dominated(*c, bid, usize::MAX) {
                problems.push(format!(
                    "bb{b} branches on %{}, whose definition does not dominate",
                    c.0
                ));
            }
        }
    }
    problems
}

//! Dead code elimination (O1).

use std::collections::HashMap;

use crate::mir::{Func, Term, Value};

/// Dead code elimination: keeps what has an effect, what a branch tests, and everything they
/// use, transitively; removes the rest (instructions and phis).
pub fn dce(f: &mut Func) -> bool {
    let mut live = vec![false; f.types.len()];
    let mut work: Vec<Value> = Vec::new();
    for b in &f.blocks {
        for inst in &b.insts {
            if inst.op.has_effect() {
                work.extend(inst.op.operands());
                if let Some(d) = inst.dst {
                    work.push(d);
                }
            }
        }
        if let Term::Branch(c, _, _) = b.term {
            work.push(c);
        }
    }
    // Definitions, to follow uses back.
    let mut uses_of: HashMap<Value, Vec<Value>> = HashMap::new();
    for b in &f.blocks {
        for phi in &b.phis {
            uses_of.insert(phi.dst, phi.args.iter().map(|(_, v)| *v).collect());
        }
        for inst in &b.insts {
            if let Some(d) = inst.dst {
                uses_of.insert(d, inst.op.operands());
            }
        }
    }
    while let Some(v) = work.pop() {
        let i = v.0 as usize;
        if i >= live.len() || live[i] {
            continue;
        }
        live[i] = true;
        if let Some(u) = uses_of.get(&v) {
            work.extend(u.iter().copied());
        }
    }
    let mut changed = false;
    for b in &mut f.blocks {
        let before = b.insts.len() + b.phis.len();
        b.phis.retain(|p| live[p.dst.0 as usize]);
        b.insts.retain(|i| i.op.has_effect() || i.dst.is_some_and(|d| live[d.0 as usize]));
        changed |= before != b.insts.len() + b.phis.len();
    }
    changed
}

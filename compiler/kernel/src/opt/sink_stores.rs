//! Store sinking (O2): the same store at the end of both arms of an `if` becomes one store
//! after the join.

use crate::mir::{BlockId, Func, Inst, Op, Phi, Term, Value};

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

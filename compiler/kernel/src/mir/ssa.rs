//! SSA construction (Cytron et al.): phis at the iterated dominance frontiers of each
//! variable's definitions, then renaming along the dominator tree. MIR lowering builds SSA
//! here, and so does mem2reg, which promotes private arrays indexed by constants to values.

use std::collections::{BTreeSet, HashMap};

use super::{BlockId, Func, Inst, Op, Phi, PrivateArray, Space, Term, Value, remove_unreachable};
use crate::hir::{self, Scalar, Ty, VarId};

/// Pseudo-instructions used while building, before SSA renaming.
#[derive(Clone, Debug)]
pub(crate) enum Raw {
    Inst(Inst),
    /// `var = value`.
    Def(VarId, Value),
    /// `value = var` (replaced by the reaching definition).
    Use(Value, VarId),
}

/// mem2reg: each private array whose every access has a constant index inside it becomes
/// one SSA variable per element. Its stores are definitions and its loads uses, and phis are
/// placed and values renamed as for the source's variables (the zero-filling stores on entry
/// give every element a first value). Arrays indexed by a computed value stay in memory. The
/// phis already in the function are kept. Returns whether an array was promoted.
pub fn mem2reg(func: &mut Func) -> bool {
    let constant: HashMap<Value, i64> = func
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match (i.dst, &i.op) {
            (Some(d), Op::Int(c)) => Some((d, *c)),
            _ => None,
        })
        .collect();
    let element = |arrays: &[PrivateArray], var: VarId, index: Value| -> Option<u32> {
        let a = arrays.iter().find(|a| a.var == var)?;
        let c = *constant.get(&index)?;
        u32::try_from(c).ok().filter(|&c| c < a.len)
    };
    // Which arrays qualify, and the first synthetic variable of each one's elements.
    let mut promotable: HashMap<VarId, bool> = HashMap::new();
    for inst in func.blocks.iter().flat_map(|b| &b.insts) {
        let (var, index) = match &inst.op {
            Op::Load(Space::Private(v), i) | Op::Store(Space::Private(v), i, _) => (*v, *i),
            // (Frontends refuse atomics on private arrays; were one here, it stays memory.)
            Op::Atomic(_, Space::Private(v), _, _) => {
                promotable.insert(*v, false);
                continue;
            }
            _ => continue,
        };
        let ok = element(&func.private, var, index).is_some();
        let e = promotable.entry(var).or_insert(true);
        *e &= ok;
    }
    // (The phis already there stay out of the rebuild: the variables start at 0.)
    let mut first_var = 0u32;
    let mut vars: Vec<hir::Var> = (0..first_var)
        .map(|_| hir::Var { name: String::new(), ty: Ty::Unit, span: 0..0, param: false })
        .collect();
    let mut base: HashMap<VarId, u32> = HashMap::new();
    for a in &func.private {
        if promotable.get(&a.var) != Some(&true) {
            continue;
        }
        base.insert(a.var, first_var);
        for e in 0..a.len {
            vars.push(hir::Var {
                name: format!("{}[{e}]", a.name),
                ty: Ty::Scalar(a.elem),
                span: 0..0,
                param: false,
            });
        }
        first_var += a.len;
    }
    if base.is_empty() {
        return false;
    }
    remove_unreachable(func);
    // The function as raw items: promoted loads are uses, promoted stores definitions.
    let mut raw: Vec<Vec<Raw>> = Vec::with_capacity(func.blocks.len());
    let mut kept_phis: Vec<Vec<Phi>> = Vec::with_capacity(func.blocks.len());
    for block in &mut func.blocks {
        kept_phis.push(std::mem::take(&mut block.phis));
        let mut items = Vec::new();
        for inst in std::mem::take(&mut block.insts) {
            let promoted = match &inst.op {
                Op::Load(Space::Private(v), i) | Op::Store(Space::Private(v), i, _) => {
                    base.get(v).and_then(|b| Some(VarId(b + element(&func.private, *v, *i)?)))
                }
                _ => None,
            };
            match (promoted, &inst.op, inst.dst) {
                (Some(var), Op::Load(..), Some(d)) => items.push(Raw::Use(d, var)),
                (Some(var), Op::Store(_, _, x), _) => items.push(Raw::Def(var, *x)),
                _ => items.push(Raw::Inst(inst)),
            }
        }
        raw.push(items);
    }
    rebuild(func, &vars, raw, kept_phis);
    true
}

/// Rebuilds SSA for the variables of `raw` (each block's items, which replace its
/// instructions): phis at the iterated dominance frontiers of their definitions, then
/// renaming. `kept` are phis already decided (they are kept, first, with their arguments
/// renamed where they name a variable's read).
pub(crate) fn rebuild(func: &mut Func, vars: &[hir::Var], raw: Vec<Vec<Raw>>, kept: Vec<Vec<Phi>>) {
    for block in &mut func.blocks {
        block.phis.clear();
    }
    let subst = ssa(func, vars, raw);
    let find = |mut v: Value| {
        while let Some(s) = subst.get(&v) {
            v = *s;
        }
        v
    };
    for (block, mut kept) in func.blocks.iter_mut().zip(kept) {
        for phi in &mut kept {
            for (_, v) in &mut phi.args {
                *v = find(*v);
            }
        }
        kept.append(&mut block.phis);
        block.phis = kept;
    }
}

/// Places phis at iterated dominance frontiers and renames variables along the dominator
/// tree. Returns the values replaced by a variable's reaching definition.
pub(super) fn ssa(func: &mut Func, vars: &[hir::Var], raw: Vec<Vec<Raw>>) -> HashMap<Value, Value> {
    let n = func.blocks.len();
    let idom = func.dominators();
    let preds = func.predecessors();
    // Dominance frontiers (Cooper, Harvey and Kennedy).
    let reachable = |b: BlockId| b.0 == 0 || idom[b.0 as usize].is_some();
    let mut df: Vec<BTreeSet<BlockId>> = vec![BTreeSet::new(); n];
    for b in 0..n {
        if preds[b].len() < 2 || !reachable(BlockId(b as u32)) {
            continue;
        }
        for &p in preds[b].iter().filter(|p| reachable(**p)) {
            let mut runner = p;
            while Some(runner) != idom[b] {
                df[runner.0 as usize].insert(BlockId(b as u32));
                match idom[runner.0 as usize] {
                    Some(up) => runner = up,
                    None => break,
                }
            }
        }
    }
    // Phis for each variable at the iterated frontier of its definitions.
    let mut phi_var: Vec<Vec<VarId>> = vec![Vec::new(); n];
    for (v, var) in vars.iter().enumerate() {
        if matches!(var.ty, Ty::Local(..) | Ty::Private(..)) {
            continue;
        }
        let var_id = VarId(v as u32);
        let mut work: Vec<BlockId> = (0..n)
            .filter(|&b| raw[b].iter().any(|r| matches!(r, Raw::Def(d, _) if *d == var_id)))
            .map(|b| BlockId(b as u32))
            .collect();
        let mut placed = BTreeSet::new();
        while let Some(b) = work.pop() {
            for &f in &df[b.0 as usize] {
                if placed.insert(f) {
                    phi_var[f.0 as usize].push(var_id);
                    work.push(f);
                }
            }
        }
    }
    for (b, placed) in phi_var.iter().enumerate() {
        for &var in placed {
            let ty = match vars[var.0 as usize].ty {
                Ty::Buffer(_) => Ty::Scalar(Scalar::U32),
                t => t,
            };
            func.types.push(ty);
            let dst = Value(func.types.len() as u32 - 1);
            func.blocks[b].phis.push(Phi { dst, var, args: Vec::new() });
        }
    }
    // Rename along the dominator tree.
    let mut children: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for (b, d) in idom.iter().enumerate() {
        if let Some(d) = d {
            children[d.0 as usize].push(BlockId(b as u32));
        }
    }
    let mut subst: HashMap<Value, Value> = HashMap::new();
    let mut current: HashMap<VarId, Value> = HashMap::new();
    // Iterative walk: (block, saved definitions to restore after its subtree).
    enum Visit {
        Enter(BlockId),
        Leave(HashMap<VarId, Value>),
    }
    let mut stack = vec![Visit::Enter(BlockId(0))];
    while let Some(visit) = stack.pop() {
        let b = match visit {
            Visit::Leave(saved) => {
                current = saved;
                continue;
            }
            Visit::Enter(b) => b,
        };
        stack.push(Visit::Leave(current.clone()));
        let phis: Vec<(VarId, Value)> =
            func.blocks[b.0 as usize].phis.iter().map(|p| (p.var, p.dst)).collect();
        for (var, dst) in phis {
            current.insert(var, dst);
            func.name_value(dst, &vars[var.0 as usize].name);
        }
        let mut insts = Vec::new();
        for item in &raw[b.0 as usize] {
            match item {
                Raw::Inst(i) => {
                    let mut i = i.clone();
                    i.op.map_operands(&mut |v| *subst.get(&v).unwrap_or(&v));
                    insts.push(i);
                }
                Raw::Def(var, v) => {
                    let v = *subst.get(v).unwrap_or(v);
                    current.insert(*var, v);
                    if matches!(vars[var.0 as usize].ty, Ty::Scalar(_) | Ty::Buffer(_)) {
                        func.name_value(v, &vars[var.0 as usize].name);
                    }
                }
                Raw::Use(v, var) => match current.get(var) {
                    Some(r) => {
                        subst.insert(*v, *r);
                    }
                    None => {
                        // A read before any write: the variable's zero.
                        insts.push(Inst {
                            dst: Some(*v),
                            op: zero(func.types[v.0 as usize]),
                            span: 0..0,
                        });
                        current.insert(*var, *v);
                        func.name_value(*v, &vars[var.0 as usize].name);
                    }
                },
            }
        }
        let mut term = func.blocks[b.0 as usize].term.clone();
        if let Term::Branch(c, _, _) = &mut term {
            *c = *subst.get(c).unwrap_or(c);
        }
        func.blocks[b.0 as usize].insts = insts;
        func.blocks[b.0 as usize].term = term;
        // Fill the successors' phi arguments from here (a variable not yet written here
        // arrives as its zero, defined at the end of this block).
        for s in func.blocks[b.0 as usize].term.successors() {
            let phis = std::mem::take(&mut func.blocks[s.0 as usize].phis);
            let mut filled = Vec::new();
            for mut phi in phis {
                let v = match current.get(&phi.var) {
                    Some(v) => *v,
                    None => {
                        let ty = func.types[phi.dst.0 as usize];
                        func.types.push(ty);
                        let z = Value(func.types.len() as u32 - 1);
                        func.blocks[b.0 as usize].insts.push(Inst {
                            dst: Some(z),
                            op: zero(ty),
                            span: 0..0,
                        });
                        current.insert(phi.var, z);
                        z
                    }
                };
                phi.args.push((b, v));
                filled.push(phi);
            }
            func.blocks[s.0 as usize].phis = filled;
        }
        for &c in children[b.0 as usize].iter().rev() {
            stack.push(Visit::Enter(c));
        }
    }
    // Phi arguments may name values substituted later in the walk.
    for block in &mut func.blocks {
        for phi in &mut block.phis {
            for (_, v) in &mut phi.args {
                while let Some(s) = subst.get(v) {
                    *v = *s;
                }
            }
        }
    }
    subst
}

/// The zero of a type.
pub(super) fn zero(ty: Ty) -> Op {
    match ty {
        Ty::Scalar(s) if s.is_float() => Op::Float(0.0),
        Ty::Scalar(Scalar::Bool) => Op::Bool(false),
        _ => Op::Int(0),
    }
}

//! Optimisation passes on MIR. Each keeps SSA and the CFG's structure (one header per loop,
//! `if` diamonds), and in debug builds the verifier runs after every pass. [`passes`] gives
//! each level's order, which is part of the design: later passes rely on earlier ones.
//!
//! - Here, O1: dead code elimination, common subexpression elimination over the dominator
//!   tree (local and global at once), CFG simplification (merging a block into its only
//!   predecessor when that predecessor jumps straight to it).
//! - `scalar.rs` (O2): sparse conditional constant propagation, strength reduction, algebraic
//!   identities, reassociation.
//! - `loops.rs`: one latch per loop, loop-invariant code motion and code hoisting,
//!   induction-variable strength reduction with linear function test replacement, exit
//!   merging and loop rotation (O2); full unrolling of counted loops (O3).
//! - `motion.rs` (O2): accumulator seeding, early evaluation, special registers read where
//!   needed, store sinking, rematerialization around inner loops and (O2 only) in long loops.
//! - mem2reg is [`crate::mir::mem2reg`]: it shares SSA construction with MIR lowering.

mod loops;
mod motion;
mod scalar;

use std::collections::HashMap;

pub use loops::*;
pub use motion::*;
pub use scalar::*;

use crate::mir::{
    BlockId, Func, Op, Term, Value, common_dominator, natural_loops, simple_loop, verify,
};

/// An optimisation level, `-O0` to `-O3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// No optimisation.
    O0,
    /// DCE, CSE, CFG simplification.
    O1,
    /// O1 and SCCP, strength reduction, identities, reassociation, LICM, induction
    /// variables, store sinking, full unrolling of small counted loops (16 steps or fewer)
    /// with rematerialization so that registers do not rise.
    O2,
    /// O2 and full unrolling of larger counted loops, without O2's rematerialization in long
    /// loops: registers for speed (helpers are inlined at every level).
    O3,
}

impl Level {
    /// Its digit: `0`..`3`.
    pub fn digit(self) -> u8 {
        match self {
            Level::O0 => 0,
            Level::O1 => 1,
            Level::O2 => 2,
            Level::O3 => 3,
        }
    }

    /// `0`..`3`.
    pub fn from_digit(d: &str) -> Option<Level> {
        match d {
            "0" => Some(Level::O0),
            "1" => Some(Level::O1),
            "2" => Some(Level::O2),
            "3" => Some(Level::O3),
            _ => None,
        }
    }
}

/// A pass: its name and what it does to a function (true when it changed something).
pub type Pass = (&'static str, fn(&mut Func) -> bool);

/// The passes of a level, in order.
pub fn passes(level: Level) -> Vec<Pass> {
    match level {
        Level::O0 => Vec::new(),
        Level::O1 => vec![("cse", cse), ("dce", dce), ("simplify-cfg", simplify_cfg), ("dce", dce)],
        Level::O3 => {
            // O2, with full unrolling before induction variables are reduced (a reduced
            // loop's test no longer counts iterations).
            // O3 spends registers for speed: no rematerialization inside long loops.
            let mut passes = passes(Level::O2);
            passes.retain(|(n, _)| *n != "remat-in-long-loops");
            let at = passes.iter().position(|(n, _)| *n == "iv-reduce").unwrap_or(passes.len());
            let mut extra = vec![("unroll", unroll as fn(&mut Func) -> bool)];
            extra.extend(passes_after_unrolling());
            passes.splice(at..at, extra);
            passes
        }
        Level::O2 => vec![
            ("single-latch", single_latch),
            ("sccp", sccp),
            // Private arrays indexed by constants (folded by SCCP) become values.
            ("mem2reg", crate::mir::mem2reg),
            ("strength-reduce", strength_reduce),
            ("identities", identities),
            ("reassociate", reassociate),
            ("cse", cse),
            ("licm", licm),
            // Hoisting brings equal computations from different branches together.
            ("cse", cse),
            ("hoist", hoist),
            // Small counted loops, fully: before induction variables are reduced (a reduced
            // loop's test no longer counts iterations).
            ("unroll-small", unroll_small_and_clean),
            ("iv-reduce", iv_reduce),
            // Start values computed before loops fold (`(ty << 4) << 2` is `ty << 6`).
            ("sccp", sccp),
            ("identities", identities),
            ("reassociate", reassociate),
            ("cse", cse),
            ("seed-accumulators", seed_accumulators),
            ("evaluate-early", evaluate_early),
            ("sink-specials", sink_specials),
            ("sink-stores", sink_stores),
            ("dce", dce),
            ("merge-exits", merge_exits),
            ("merge-counted-exits", merge_counted_exits),
            ("rotate", rotate),
            ("step-at-top", step_at_top),
            ("remat-around-inner-loops", remat_around_inner_loops),
            ("remat-in-long-loops", remat_in_long_loops),
            ("sccp", sccp),
            ("dce", dce),
            ("simplify-cfg", simplify_cfg),
            ("dce", dce),
        ],
    }
}

/// O2's unrolling of small loops, and the cleanup after it only where it unrolled something
/// (most kernels have no such loop, and the cleanup would cost them compile time for nothing).
fn unroll_small_and_clean(f: &mut Func) -> bool {
    if !unroll_small(f) {
        return false;
    }
    // Constants into the copies (the counter, the addresses), private arrays indexed by them
    // into values; the passes after iv-reduce do the rest.
    sccp(f);
    crate::mir::mem2reg(f);
    dce(f);
    true
}

/// What cleans up after unrolling: constants into addresses and offsets, shared work.
fn passes_after_unrolling() -> Vec<Pass> {
    vec![
        ("sccp", sccp),
        // Unrolled loops index private arrays with constants.
        ("mem2reg", crate::mir::mem2reg),
        ("identities", identities),
        ("reassociate", reassociate),
        ("cse", cse),
        ("licm", licm),
        ("cse", cse),
        ("dce", dce),
        ("simplify-cfg", simplify_cfg),
        ("dce", dce),
    ]
}

/// Copies of the instructions that define `order` (each at `at[v]`: block and index), in
/// that order, as new values: each copy reads the copies made before it, or what `map`
/// says. `map` gains each original's copy.
pub(super) fn copy_chain(
    f: &mut Func,
    at: &HashMap<Value, (BlockId, usize)>,
    order: &[Value],
    map: &mut HashMap<Value, Value>,
) -> Vec<crate::mir::Inst> {
    let mut copies = Vec::with_capacity(order.len());
    for v in order {
        let (b, i) = at[v];
        let mut inst = f.blocks[b.0 as usize].insts[i].clone();
        inst.op.map_operands(&mut |x| *map.get(&x).unwrap_or(&x));
        f.types.push(f.types[v.0 as usize]);
        let nv = Value(f.types.len() as u32 - 1);
        inst.dst = Some(nv);
        map.insert(*v, nv);
        copies.push(inst);
    }
    copies
}

/// Runs the passes of `level`; in debug builds the verifier checks the function after each
/// pass and a failure names the pass.
pub fn optimize(f: &mut Func, level: Level) -> Result<(), String> {
    optimize_with(f, level, &|| {})
}

/// [`optimize`], calling `checkpoint` before each pass: a caller that must be able to stop a
/// long compile (the language server, when an edit supersedes it) unwinds from there.
pub fn optimize_with(f: &mut Func, level: Level, checkpoint: &dyn Fn()) -> Result<(), String> {
    for (name, pass) in passes(level) {
        checkpoint();
        pass(f);
        if cfg!(debug_assertions) {
            let problems = verify(f);
            if !problems.is_empty() {
                return Err(format!(
                    "the MIR of `{}` is broken after `{name}`: {}",
                    f.name,
                    problems.join("; ")
                ));
            }
        }
    }
    Ok(())
}

/// Replaces every use of a value by its substitute.
fn substitute(f: &mut Func, subst: &HashMap<Value, Value>) {
    if subst.is_empty() {
        return;
    }
    let find = |mut v: Value| {
        while let Some(s) = subst.get(&v) {
            v = *s;
        }
        v
    };
    // A replaced value's source names go to what replaces it.
    let carried: Vec<(Value, Value)> =
        subst.keys().filter(|v| f.names.contains_key(v)).map(|&v| (v, find(v))).collect();
    for (from, to) in carried {
        f.carry_names(from, to);
    }
    for b in &mut f.blocks {
        for phi in &mut b.phis {
            for (_, v) in &mut phi.args {
                *v = find(*v);
            }
        }
        for inst in &mut b.insts {
            inst.op.map_operands(&mut |v| find(v));
        }
        if let Term::Branch(c, _, _) = &mut b.term {
            *c = find(*c);
        }
    }
}

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

/// A key for pure instructions: equal keys compute equal values.
fn key(f: &Func, op: &Op, dst: Value) -> Option<Key> {
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
struct Key(What, crate::hir::Ty);

/// A pure [`Op`] as a hashable value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum What {
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

/// CFG simplification: a block whose only predecessor jumps straight to it is merged into that
/// predecessor; blocks no path reaches are dropped. `if` diamonds and loop headers stay (a
/// header has two predecessors, a branch target's predecessor branches).
pub fn simplify_cfg(f: &mut Func) -> bool {
    let mut changed = false;
    loop {
        let preds = f.predecessors();
        let mut merged = false;
        for (b, from) in preds.iter().enumerate().skip(1) {
            let [p] = from.as_slice() else { continue };
            let p = *p;
            if p.0 as usize == b || f.blocks[p.0 as usize].term != Term::Jump(BlockId(b as u32)) {
                continue;
            }
            // B's phis have one argument each: they are that value.
            let block = std::mem::replace(
                &mut f.blocks[b],
                crate::mir::Block { phis: Vec::new(), insts: Vec::new(), term: Term::Return },
            );
            let subst: HashMap<Value, Value> = block
                .phis
                .iter()
                .filter_map(|phi| phi.args.first().map(|(_, v)| (phi.dst, *v)))
                .collect();
            let target = &mut f.blocks[p.0 as usize];
            target.insts.extend(block.insts);
            target.term = block.term;
            // Successors of B now come from P.
            for s in f.blocks[p.0 as usize].term.successors() {
                for phi in &mut f.blocks[s.0 as usize].phis {
                    for (from, _) in &mut phi.args {
                        if from.0 as usize == b {
                            *from = p;
                        }
                    }
                }
            }
            substitute(f, &subst);
            // B is now unreachable; renumbering drops it.
            crate::mir::remove_unreachable(f);
            merged = true;
            changed = true;
            break;
        }
        if !merged {
            return changed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn lowered(src: &str) -> Func {
        let (kernels, d) = crate::hir(src, crate::Language::Python);
        assert!(d.is_empty(), "{d:?}");
        crate::mir::lower(&kernels[0])
    }

    #[test]
    fn o1_removes_repeats_and_dead_code_and_keeps_effects() {
        let src = include_str!("../../tests/hir/vector_add.py");
        let mut f = lowered(src);
        let before = crate::mir::print(std::slice::from_ref(&f));
        optimize(&mut f, Level::O1).expect("verified after every pass");
        let after = crate::mir::print(std::slice::from_ref(&f));
        // The index is shifted once, not three times; the store and both loads stay.
        assert_eq!(before.matches("shl").count(), 3, "{before}");
        assert_eq!(after.matches("shl").count(), 1, "{after}");
        assert_eq!(after.matches("load.device").count(), 2);
        assert_eq!(after.matches("store.device").count(), 1);
        assert!(
            after.contains("param 3 : u32") && after.contains("lt"),
            "n stays: the branch uses it:\n{after}"
        );
    }

    #[test]
    fn every_golden_kernel_survives_every_level() {
        for src in [
            include_str!("../../tests/hir/divergent_loop.py"),
            include_str!("../../tests/hir/reduce.py"),
            include_str!("../../tests/hir/saxpy.py"),
            include_str!("../../tests/hir/transpose.py"),
        ] {
            for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
                let mut f = lowered(src);
                optimize(&mut f, level).expect("verified");
                assert!(verify(&f).is_empty());
                let text = crate::mir::print(std::slice::from_ref(&f));
                assert_eq!(
                    text.matches("store.").count(),
                    lowered(src)
                        .blocks
                        .iter()
                        .flat_map(|b| &b.insts)
                        .filter(|i| matches!(i.op, Op::Store(..)))
                        .count(),
                    "{text}"
                );
            }
        }
    }

    /// The dominator tree's intervals answer as the walk up the dominators does, for every
    /// pair of blocks of every Python kernel of the kernel set, before and after -O2.
    #[test]
    fn dom_tree_agrees_with_the_walk_up_the_dominators() {
        let sources = [
            include_str!("../../../../conformance/kernels/python/divergent_loop.py"),
            include_str!("../../../../conformance/kernels/python/sgemm.py"),
            include_str!("../../../../conformance/kernels/python/reduction.py"),
            include_str!("../../../../conformance/kernels/python/prefix_sum.py"),
        ];
        let mut pairs = 0;
        for source in sources {
            let (kernels, d) = crate::hir(source, crate::Language::Python);
            assert!(!wave_diag::has_errors(&d), "{d:?}");
            for k in &kernels {
                let mut f = crate::mir::lower(k);
                for optimised in [false, true] {
                    if optimised {
                        optimize(&mut f, Level::O2).expect("optimises");
                    }
                    let idom = f.dominators();
                    let tree = crate::mir::DomTree::new(&idom);
                    for a in 0..f.blocks.len() {
                        for b in 0..f.blocks.len() {
                            let (a, b) = (BlockId(a as u32), BlockId(b as u32));
                            assert_eq!(tree.dominates(a, b), Func::dominates(&idom, a, b));
                            pairs += 1;
                        }
                    }
                }
            }
        }
        assert!(pairs > 1000, "{pairs} pairs");
    }
}

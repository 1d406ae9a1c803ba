//! Optimisation passes on MIR. Each keeps SSA and the CFG's structure (one header per loop,
//! `if` diamonds), and in debug builds the verifier runs after every pass. [`passes`] gives
//! each level's order, which is part of the design: later passes rely on earlier ones.
//!
//! One file per pass, named as [`passes`] names it. What several passes share is here (the
//! driver, `copy_chain`, `substitute`, `repeat`, `def_of`) or in `fold` (the constant
//! lattice and the machine's arithmetic); loop and dominator analyses are MIR's. Passes know
//! MIR and nothing after it: legalisation and LIR come later and are not called from here.
//!
//! - O1: dead code elimination (`dce`), common subexpression elimination over the dominator
//!   tree, local and global at once (`cse`), CFG simplification (`simplify_cfg`: merging a
//!   block into its only predecessor when that predecessor jumps straight to it).
//! - O2, scalar: sparse conditional constant propagation (`sccp`), strength reduction
//!   (`strength_reduce`), algebraic identities (`identities`), reassociation (`reassociate`).
//! - O2, loops: one latch per loop (`single_latch`), loop-invariant code motion (`licm`) and
//!   code hoisting (`hoist`), induction-variable strength reduction with linear function test
//!   replacement (`iv_reduce`), exit merging (`merge_exits`), loop rotation (`rotate`),
//!   counters stepped at the top (`step_at_top`); full unrolling of counted loops (`unroll`:
//!   small ones at O2, larger ones at O3).
//! - O2, live ranges: accumulator seeding (`seed_accumulators`), early evaluation
//!   (`evaluate_early`), special registers read where needed (`sink_specials`), store sinking
//!   (`sink_stores`), rematerialization around inner loops and (O2 only) in long loops
//!   (`remat`).
//! - mem2reg is [`crate::mir::mem2reg`]: it shares SSA construction with MIR lowering.

mod cse;
mod dce;
mod evaluate_early;
mod fold;
mod hoist;
mod identities;
mod iv_reduce;
mod licm;
mod merge_exits;
mod reassociate;
mod remat;
mod rotate;
mod sccp;
mod seed_accumulators;
mod simplify_cfg;
mod single_latch;
mod sink_specials;
mod sink_stores;
mod step_at_top;
mod strength_reduce;
mod unroll;

use std::collections::HashMap;

use crate::mir::{BlockId, Func, Op, Term, Value};

pub use cse::cse;
pub use dce::dce;
pub use evaluate_early::evaluate_early;
pub use hoist::hoist;
pub use identities::identities;
pub use iv_reduce::iv_reduce;
pub use licm::licm;
pub use merge_exits::{merge_counted_exits, merge_exits};
pub use reassociate::reassociate;
pub use remat::{remat_around_inner_loops, remat_in_long_loops};
pub use rotate::rotate;
pub use sccp::sccp;
pub use seed_accumulators::seed_accumulators;
pub use simplify_cfg::simplify_cfg;
pub use single_latch::single_latch;
pub use sink_specials::sink_specials;
pub use sink_stores::sink_stores;
pub use step_at_top::step_at_top;
pub use strength_reduce::strength_reduce;
pub use unroll::{
    UNROLL_MAX_INSTRUCTIONS, UNROLL_MAX_TRIPS, UNROLL_SMALL_MAX_INSTRUCTIONS,
    UNROLL_SMALL_MAX_TRIPS, unroll, unroll_small,
};

/// An optimisation level, `-O0` to `-O3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
    optimize_verified(f, level, cfg!(debug_assertions), checkpoint)
}

/// [`optimize_with`], with the verifier after each pass when `verify` is set (in any build).
pub fn optimize_verified(
    f: &mut Func,
    level: Level,
    verify: bool,
    checkpoint: &dyn Fn(),
) -> Result<(), String> {
    for (name, pass) in passes(level) {
        checkpoint();
        pass(f);
        if verify {
            let problems = crate::mir::verify(f);
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

/// Runs a pass that makes one change at a time until it makes none, at most `rounds` times.
fn repeat(f: &mut Func, rounds: usize, once: fn(&mut Func) -> bool) -> bool {
    let mut changed = false;
    for _ in 0..rounds {
        if !once(f) {
            break;
        }
        changed = true;
    }
    changed
}

/// The operation that defines `v`, if an instruction does.
fn def_of(f: &Func, v: Value) -> Option<&Op> {
    f.blocks.iter().flat_map(|b| &b.insts).find(|i| i.dst == Some(v)).map(|i| &i.op)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::hir::BinOp;
    use crate::mir::natural_loops;

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
                assert!(crate::mir::verify(&f).is_empty());
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

    #[test]
    fn live_ranges_across_a_loop_shrink() {
        // q is added after the loop: the sum starts at q instead. out + 4 i is made before
        // the loop (out and i die there). The lane id is read where it is needed.
        let src = "import wave\n@wave.kernel\ndef k(out: u32[:], d: u32[:], n: u32, q: u32):\n    lane = wave.lane_id()\n    i = wave.global_id()\n    d[i] = 1\n    wave.barrier()\n    s: u32 = 0\n    for k in range(n):\n        s += d[k]\n    out[i] = s + q + lane\n";
        let mut f = crate::opt::tests::lowered(src);
        optimize(&mut f, Level::O2).expect("verified");
        let text = crate::mir::print(std::slice::from_ref(&f));
        let (header, body) = natural_loops(&f).first().cloned().expect("a loop");
        let q = f.blocks[0].insts.iter().find(|i| i.op == Op::Param(3)).and_then(|i| i.dst);
        let sum = f.blocks[header.0 as usize]
            .phis
            .iter()
            .find(|p| p.args.iter().any(|(b, v)| !body.contains(b) && Some(*v) == q));
        assert!(sum.is_some(), "the sum starts at q:\n{text}");
        let out = f.blocks[0].insts.iter().find(|i| i.op == Op::Param(0)).and_then(|i| i.dst);
        let idom = f.dominators();
        let address_before = f.blocks.iter().enumerate().any(|(b, blk)| {
            Func::dominates(&idom, BlockId(b as u32), header)
                && b != header.0 as usize
                && blk
                    .insts
                    .iter()
                    .any(|i| matches!(i.op, Op::Binary(BinOp::Add, a, _) if Some(a) == out))
        });
        assert!(address_before, "out + 4 i before the loop:\n{text}");
        let entry = &f.blocks[0].insts;
        let barrier =
            entry.iter().position(|i| matches!(i.op, Op::Call(crate::hir::Intrinsic::Barrier, _)));
        let lane = f.blocks.iter().enumerate().find_map(|(b, blk)| {
            blk.insts
                .iter()
                .position(|i| i.op == Op::Special(crate::hir::Special::LaneId))
                .map(|k| (b, k))
        });
        assert!(
            lane.is_some_and(|(b, k)| b != 0 || barrier.is_some_and(|x| k > x)),
            "the lane id is read after the barrier:\n{text}"
        );
    }
}

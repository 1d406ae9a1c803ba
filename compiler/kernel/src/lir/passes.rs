//! The LIR passes after lowering: if-conversion and rematerialization across loops.

use super::Code;
use std::collections::HashMap;
use wave_isa::{IntCond, Opcode};

use super::{Arg, Inst, Kind, Lir, Pred, Reg, guardable, liveness, loop_depths, successors};
use crate::hir::Special;

/// A pass on LIR: its name and what it does.
pub type Pass = (&'static str, fn(&mut Lir));

/// The passes after lowering, in order (the LIR verifier runs after each in debug builds).
pub fn passes() -> Vec<Pass> {
    vec![
        ("if-convert", |lir: &mut Lir| lir.insts = if_convert(std::mem::take(&mut lir.insts))),
        ("rematerialize", rematerialize),
    ]
}

/// A value that costs one instruction with no operands (a special register, a constant)
/// and is read after a loop it lives across is set again right before that read, instead
/// of holding a register through the loop. Reads at the same loop depth as the definition
/// only, so no loop runs the extra instruction.
pub fn rematerialize(lir: &mut Lir) {
    let depth = loop_depths(&lir.insts);
    let mut def_at: HashMap<Reg, Vec<usize>> = HashMap::new();
    for (i, inst) in lir.insts.iter().enumerate() {
        for d in inst.defs() {
            def_at.entry(d).or_default().push(i);
        }
    }
    // (use index, register, defining instruction index)
    let mut plan: Vec<(usize, Reg, usize)> = Vec::new();
    for (i, inst) in lir.insts.iter().enumerate() {
        for r in inst.uses() {
            let Some([d]) = def_at.get(&r).map(|v| v.as_slice()) else { continue };
            let def = &lir.insts[*d];
            let cheap = def.guard.is_none()
                && !lir.pairs.contains(&r)
                && def.args.len() == 2
                && (def.code == Code::of(Opcode::MovSpecial)
                    || def.code == Code::of(Opcode::MovImm));
            if !cheap
                || *d >= i
                || depth[i] != depth[*d]
                || inst.guard.is_some() && inst.defs().any(|x| x == r)
            {
                continue;
            }
            // It crosses a loop that does not read it (one that does keeps it live anyway).
            let crosses = lir.insts[*d..i].iter().any(|x| x.kind == Kind::EndLoop)
                && !(*d + 1..i)
                    .any(|k| depth[k] > depth[*d] && lir.insts[k].uses().any(|u| u == r));
            if crosses && !plan.iter().any(|(u, rr, _)| *u == i && *rr == r) {
                plan.push((i, r, *d));
            }
        }
    }
    if plan.is_empty() {
        return;
    }
    plan.sort();
    let mut out = Vec::with_capacity(lir.insts.len() + plan.len());
    let mut next = 0;
    let old = std::mem::take(&mut lir.insts);
    for (i, mut inst) in old.clone().into_iter().enumerate() {
        while next < plan.len() && plan[next].0 == i {
            let (_, r, d) = plan[next];
            let fresh = lir.reg();
            let mut again = old[d].clone();
            again.args[0] = Arg::Def(fresh);
            again.span = inst.span.clone();
            out.push(again);
            for a in &mut inst.args {
                match a {
                    Arg::Use(x) | Arg::Addr(x, _) if *x == r => *x = fresh,
                    _ => {}
                }
            }
            if let Some(o) = lir.origin.get(&r).copied() {
                lir.origin.insert(fresh, o);
            }
            next += 1;
        }
        out.push(inst);
    }
    // Definitions nobody reads any more.
    let read: std::collections::HashSet<Reg> =
        out.iter().flat_map(|i| i.uses().collect::<Vec<_>>()).collect();
    out.retain(|i| {
        !(i.guard.is_none()
            && i.args.len() == 2
            && (i.code == Code::of(Opcode::MovSpecial) || i.code == Code::of(Opcode::MovImm))
            && i.defs().all(|d| !d.is_phys() && !read.contains(&d)))
    });
    lir.insts = out;
}

/// Whether the value instruction `at` writes to `r` can be read outside `arm` (or before `at`
/// in it): a search along the control flow from `at` that stops at writes of `r` that do not
/// keep its old value.
fn reaches_read(
    insts: &[Inst],
    succ: &[Vec<usize>],
    at: usize,
    r: Reg,
    arm: &std::ops::Range<usize>,
) -> bool {
    let mut seen = vec![false; insts.len() + 1];
    let mut work: Vec<usize> = succ[at].clone();
    while let Some(j) = work.pop() {
        if j >= insts.len() || seen[j] {
            continue;
        }
        seen[j] = true;
        let x = &insts[j];
        if x.uses().any(|u| u == r) && (!arm.contains(&j) || j <= at) {
            return true;
        }
        let kills = x.defs().any(|d| d == r) && (x.guard.is_none() || x.guard_kills);
        if !kills {
            work.extend(succ[j].iter().copied());
        }
    }
    false
}

/// Whether predicate `p`, as last set in `before`, holds in at most one thread of the
/// workgroup: `thread_id.x|y|z == u` for a value `u` the same in every thread (an immediate,
/// a parameter, a uniform special register, or arithmetic of those).
fn one_thread_test(before: &[Inst], p: Pred) -> bool {
    let Some(at) = before.iter().rposition(|x| x.pred_defs().any(|q| q == p)) else {
        return false;
    };
    let cmp = &before[at];
    if cmp.guard.is_some() || cmp.code != Code::with(Opcode::Icmp, IntCond::Eq) {
        return false;
    }
    // The instruction that last wrote `r` before `at`, when it is not inside a branch.
    let def = |r: Reg, at: usize| -> Option<(usize, &Inst)> {
        let k = before[..at].iter().rposition(|x| x.defs().any(|d| d == r))?;
        (before[k].guard.is_none()).then_some((k, &before[k]))
    };
    fn uniform(before: &[Inst], r: Reg, at: usize, depth: u32) -> bool {
        if r.is_phys() {
            return true; // a parameter (registers r0.. hold them until written)
        }
        let Some(k) = before[..at].iter().rposition(|x| x.defs().any(|d| d == r)) else {
            return false;
        };
        let x = &before[k];
        if x.guard.is_some() || depth == 0 {
            return false;
        }
        if x.code.opcode == Opcode::MovImm {
            true
        } else if x.code.opcode == Opcode::MovSpecial {
            x.args.iter().any(|a| {
                matches!(
                    a,
                    Arg::Special(
                        Special::WorkgroupId(_)
                            | Special::WorkgroupSize(_)
                            | Special::GridSize(_)
                            | Special::WaveWidth
                    )
                )
            })
        } else if x.code.flags().lane_varying {
            // Loads, atomics and wave operations.
            false
        } else {
            x.uses().all(|u| uniform(before, u, k, depth - 1))
        }
    }
    let thread = |a: &Arg| match a {
        Arg::Use(r) => def(*r, at).is_some_and(|(_, x)| {
            x.code == Code::of(Opcode::MovSpecial)
                && x.args.iter().any(|a| matches!(a, Arg::Special(Special::ThreadId(_))))
        }),
        _ => false,
    };
    let same_everywhere = |a: &Arg| match a {
        Arg::Imm(_) => true,
        Arg::Use(r) => uniform(before, *r, at, 4),
        _ => false,
    };
    let (Some(x), Some(y)) = (cmp.args.get(1), cmp.args.get(2)) else { return false };
    (thread(x) && same_everywhere(y)) || (thread(y) && same_everywhere(x))
}

/// If-conversion: a short `if p / A / [else / B /] endif` whose arms hold only plain
/// instructions becomes `@p A` and `@!p B`. A wave then runs |A| + |B| instructions instead
/// of |A| + |B| + 3 control instructions (or |A| + 2 without `else`), and nothing diverges.
/// A register written in an arm and read only inside it (or written by both arms) does
/// not keep its old value: `guard_kills`.
pub fn if_convert(insts: Vec<Inst>) -> Vec<Inst> {
    // Where every register is read.
    let mut reads: HashMap<Reg, Vec<usize>> = HashMap::new();
    for (i, inst) in insts.iter().enumerate() {
        for r in inst.uses() {
            reads.entry(r).or_default().push(i);
        }
    }
    let depth = loop_depths(&insts);
    let nregs =
        insts.iter().flat_map(|x| x.defs().chain(x.uses())).max().map_or(0, |r| r.index() + 1);
    let succ = successors(&insts).ok();
    let live_out = succ.as_ref().map(|succ| liveness(&insts, succ, nregs));
    let mut out: Vec<Inst> = Vec::with_capacity(insts.len());
    let mut i = 0;
    while i < insts.len() {
        let inst = &insts[i];
        let candidate = (|| {
            if inst.kind != Kind::If {
                return None;
            }
            let Some(Arg::PUse(p, n)) = inst.args.first() else { return None };
            let mut j = i + 1;
            while j < insts.len() && guardable(&insts[j]) {
                j += 1;
            }
            let then = i + 1..j;
            let (other, end) = match insts.get(j).map(|x| x.kind) {
                Some(Kind::EndIf) => (j..j, j),
                Some(Kind::Else) => {
                    let mut k = j + 1;
                    while k < insts.len() && guardable(&insts[k]) {
                        k += 1;
                    }
                    if insts.get(k).map(|x| x.kind) != Some(Kind::EndIf) {
                        return None;
                    }
                    (j + 1..k, k)
                }
                _ => return None,
            };
            // Copies inside an arm mostly coalesce away, in either form; but a guarded copy
            // into a register read after the `endif` (a phi's) usually stays an instruction,
            // where the branching form needed none.
            let cost = |r: &std::ops::Range<usize>| {
                r.clone().filter(|&k| insts[k].kind != Kind::Copy).count()
            };
            let (a, b) = (cost(&then), cost(&other));
            // A copy into a register read after the `if` stays an instruction unless its
            // source dies there (then the two share a register: a phi's value made in the
            // arm, or a variable the arm leaves unchanged).
            let source_lives_on = |k: usize| match (&live_out, insts[k].args.get(1)) {
                (Some(live), Some(Arg::Use(s))) => {
                    live[end].get(s.index() / 64).is_some_and(|w| w & (1 << (s.index() % 64)) != 0)
                }
                _ => true,
            };
            let kept_copies = then
                .clone()
                .chain(other.clone())
                .filter(|&k| insts[k].kind == Kind::Copy)
                .filter(|&k| {
                    insts[k].defs().any(|d| {
                        reads.get(&d).is_some_and(|at| at.iter().any(|&r| r <= i || r >= end))
                    })
                })
                .filter(|&k| source_lives_on(k))
                .count();
            let no_else = other.is_empty() && end == j;
            let control = if no_else { 2 } else { 3 };
            // `if thread_id == c`: one thread of the workgroup runs the arm, so every other
            // wave skips it whole when it branches.
            let rare = no_else && !*n && one_thread_test(&insts[..i], *p);
            let worth = kept_copies < control
                && !(rare && a > control)
                && if no_else {
                    // In a loop the test often fails for most lanes (a tree reduction's
                    // shrinking half): branching then skips the arm.
                    a <= if depth[i] > 0 { 3 } else { 6 }
                } else {
                    a + b <= 6 && a.min(b) <= 3
                };
            worth.then_some((*p, *n, then, other, end))
        })();
        let Some((p, n, then, other, end)) = candidate else {
            out.push(inst.clone());
            i += 1;
            continue;
        };
        let inside = |k: usize| k > i && k < end;
        for (range, neg) in [(then.clone(), n), (other.clone(), !n)] {
            for k in range.clone() {
                let mut g = insts[k].clone();
                g.guard = Some((p, neg));
                let defs: Vec<Reg> = g.defs().collect();
                // Read only inside this arm, after this write, before another write of it?
                let local = defs.iter().all(|d| {
                    // (An instruction that reads the register it writes reads it first. Code
                    // duplicated elsewhere reuses registers: what matters is where this
                    // write's value can be read.)
                    let read_outside = match &succ {
                        Some(succ) => reaches_read(&insts, succ, k, *d, &range),
                        None => !reads
                            .get(d)
                            .is_none_or(|at| at.iter().all(|&r| range.contains(&r) && r >= k)),
                    };
                    !read_outside
                        && insts.iter().enumerate().all(|(x, y)| {
                            x == k || !y.defs().any(|e| e == *d) || range.contains(&x) || !inside(x)
                        })
                });
                // Or written again by the other arm (complementary guards cover every lane).
                let covered = neg == n
                    && defs.iter().all(|d| other.clone().any(|x| insts[x].defs().any(|e| e == *d)))
                    && defs.iter().all(|d| {
                        reads
                            .get(d)
                            .is_none_or(|at| at.iter().all(|&r| !inside(r) || then.contains(&r)))
                    });
                g.guard_kills = !defs.is_empty() && (local || covered);
                out.push(g);
            }
        }
        i = end + 1;
    }
    out
}

//! The checker: a forward dataflow over the allocated program that knows which virtual
//! registers each physical register holds at every point. Every read must find its value in
//! the register it was given, every spill reload must follow a store on every path.

use super::{Allocation, phys};
use crate::lir::Code;
use crate::lir::{self, Arg, Inst, Kind, Lir, PHYS, Pred, Reg};
use wave_isa::{IntCond, Opcode};

/// What a physical register holds: a virtual register's value, in every lane or only in
/// the lanes where a guard held.
type Held = (Reg, Option<(Pred, bool)>);

/// Checks an allocation independently of how it was found.
pub fn check(lir: &Lir, alloc: &Allocation) -> Result<(), String> {
    let succ = lir::successors(&lir.insts)?;
    let n = lir.insts.len();
    let nphys = usize::from(alloc.registers).max(1);
    // State: for each physical register, the virtual registers whose value it holds (in
    // every lane, or where a guard held); for each predicate the virtual predicates; and
    // the spill slots written.
    #[derive(Clone, PartialEq)]
    struct State {
        regs: Vec<Vec<Held>>,
        preds: Vec<Vec<Pred>>,
        slots: Vec<bool>,
    }
    // Where paths join: a value held in every lane on one and in some lanes on the other is
    // held in those lanes.
    let meet = |a: &State, b: &State| State {
        regs: a
            .regs
            .iter()
            .zip(&b.regs)
            .map(|(x, y)| {
                x.iter()
                    .filter_map(|&(r, t)| {
                        let u = y.iter().find(|(q, _)| *q == r)?.1;
                        match (t, u) {
                            _ if t == u => Some((r, t)),
                            (None, u) => Some((r, u)),
                            (t, None) => Some((r, t)),
                            _ => None,
                        }
                    })
                    .collect()
            })
            .collect(),
        preds: a
            .preds
            .iter()
            .zip(&b.preds)
            .map(|(x, y)| x.iter().copied().filter(|v| y.contains(v)).collect())
            .collect(),
        slots: a.slots.iter().zip(&b.slots).map(|(x, y)| *x && *y).collect(),
    };
    let mut entry = State {
        regs: vec![Vec::new(); nphys.max(lir.params.len())],
        preds: vec![Vec::new(); 4],
        slots: vec![false; alloc.spill_slots as usize],
    };
    for p in 0..lir.params.len() {
        entry.regs[p].push((Reg::phys(p as u32), None));
    }
    // Reads an instruction makes: (register, the lanes that need its value).
    let reads = |inst: &Inst| -> Vec<(Reg, Option<(Pred, bool)>)> {
        let mut out = Vec::new();
        for a in &inst.args {
            match a {
                Arg::Use(r) | Arg::Addr(r, _) => out.push((*r, inst.guard)),
                // A guarded write that keeps the old value where the guard fails.
                Arg::Def(r) if inst.guard.is_some() && !inst.guard_kills => {
                    out.push((*r, inst.guard.map(|(p, n)| (p, !n))))
                }
                _ => {}
            }
        }
        out
    };
    let holds = |h: &[Held], r: Reg, lanes: Option<(Pred, bool)>| {
        h.iter().any(|(x, g)| *x == r && (g.is_none() || *g == lanes))
    };
    let mut into: Vec<Option<State>> = vec![None; n + 1];
    into[0] = Some(entry);
    let mut work = vec![0usize];
    let mut errors = Vec::new();
    let mut steps = 0usize;
    while let Some(i) = work.pop() {
        steps += 1;
        if i >= n || steps > 1000 * (n + 1) {
            continue;
        }
        let Some(mut st) = into[i].clone() else { continue };
        let inst = &lir.insts[i];
        // Transfer.
        if let Kind::SpillStore(s) = inst.kind
            && let Some(x) = st.slots.get_mut(s as usize)
        {
            *x = true;
        }
        if let Kind::SpillLoad(s) = inst.kind
            && !st.slots.get(s as usize).copied().unwrap_or(false)
        {
            errors.push(format!("instruction {i} reloads spill slot {s} before it is stored"));
        }
        let source: Option<Vec<Held>> = match (inst.kind == Kind::Copy, inst.args.get(1)) {
            (true, Some(Arg::Use(s))) => {
                Some(st.regs.get(phys(alloc, *s) as usize).cloned().unwrap_or_default())
            }
            _ => None,
        };
        for d in inst.defs() {
            let pr = phys(alloc, d) as usize;
            if pr >= st.regs.len() {
                errors.push(format!("instruction {i} writes r{pr}, beyond R"));
                continue;
            }
            let old = st.regs[pr].clone();
            for r in &mut st.regs {
                r.retain(|x| x.0 != d);
            }
            st.regs[pr] = match inst.guard {
                None => {
                    let mut h = source.clone().unwrap_or_default();
                    h.retain(|x| x.0 != d);
                    h.push((d, None));
                    h
                }
                Some((p, neg)) => {
                    let (g, ng) = (Some((p, neg)), Some((p, !neg)));
                    // What the lanes that run it hold: the copied values and d; what the
                    // others keep: the register's old contents (with d's old value only
                    // when the write keeps it).
                    let mut run: Vec<Reg> = source
                        .as_ref()
                        .map(|h| {
                            h.iter()
                                .filter(|(x, t)| *x != d && (t.is_none() || *t == g))
                                .map(|(x, _)| *x)
                                .collect()
                        })
                        .unwrap_or_default();
                    run.push(d);
                    let kept: Vec<Reg> = old
                        .iter()
                        .filter(|(x, t)| {
                            (t.is_none() || *t == ng) && (*x != d || !inst.guard_kills)
                        })
                        .map(|(x, _)| *x)
                        .collect();
                    let mut h: Vec<Held> = Vec::new();
                    for x in run.iter().chain(&kept) {
                        if h.iter().any(|(y, _)| y == x) {
                            continue;
                        }
                        let tag = match (run.contains(x), kept.contains(x)) {
                            (true, true) => None,
                            (true, false) => g,
                            _ => ng,
                        };
                        h.push((*x, tag));
                    }
                    h
                }
            };
        }
        for p in inst.pred_defs() {
            for r in &mut st.preds {
                r.retain(|x| *x != p);
            }
            // What was known only under this predicate no longer is.
            for r in &mut st.regs {
                r.retain(|(_, g)| g.is_none_or(|(q, _)| q != p));
            }
            let c = usize::from(alloc.pred.get(p.index()).copied().unwrap_or(0));
            st.preds[c] = vec![p];
        }
        // A way out taken where a guard holds (`continue p`, `break p`, `@p halt`): the lanes
        // that take it are those where the guard holds, and the others go on.
        let escape = match (inst.kind, inst.args.first()) {
            (Kind::Continue | Kind::Break, Some(Arg::PUse(p, neg))) => Some((*p, *neg)),
            (Kind::Halt, _) => inst.guard,
            _ => None,
        };
        // (`icmp.eq p, any, any` then `break p`: every lane leaves, nothing goes on.)
        let always = i > 0
            && matches!(inst.args.first(), Some(Arg::PUse(p, false))
                if lir.insts[i - 1].guard.is_none()
                    && lir.insts[i - 1].code == Code::with(Opcode::Icmp, IntCond::Eq)
                    && lir.insts[i - 1].args == [Arg::PDef(*p), Arg::Any, Arg::Any]);
        let targets = &succ[i];
        for &s in targets {
            if always && escape.is_some() && s == i + 1 && targets.iter().any(|&t| t != i + 1) {
                continue;
            }
            let lanes = match escape {
                Some(g) if targets.iter().filter(|&&t| t == s).count() == 1 => {
                    Some(if s == i + 1 { (g.0, !g.1) } else { g })
                }
                _ => None,
            };
            let edge = match lanes {
                None => None,
                Some(g) => {
                    let mut e = st.clone();
                    for h in &mut e.regs {
                        h.retain(|(_, t)| t.is_none() || *t == Some(g));
                        h.iter_mut().for_each(|(_, t)| *t = None);
                    }
                    Some(e)
                }
            };
            let st = edge.as_ref().unwrap_or(&st);
            let merged = match &into[s] {
                None => st.clone(),
                Some(old) => meet(old, st),
            };
            if into[s].as_ref() != Some(&merged) {
                into[s] = Some(merged);
                work.push(s);
            }
        }
    }
    for (i, inst) in lir.insts.iter().enumerate() {
        let Some(st) = &into[i] else { continue };
        for (u, lanes) in reads(inst) {
            let pr = phys(alloc, u) as usize;
            if !st.regs.get(pr).is_some_and(|h| holds(h, u, lanes)) {
                errors.push(format!(
                    "instruction {i} (`{}`) reads %{} from r{pr}, which does not hold it there",
                    inst.code,
                    u.0.wrapping_sub(PHYS)
                ));
            }
        }
        for p in inst.pred_uses() {
            let c = usize::from(alloc.pred.get(p.index()).copied().unwrap_or(0));
            if !st.preds[c].contains(&p) {
                errors.push(format!(
                    "instruction {i} (`{}`) reads %p{} from p{c}, which does not hold it",
                    inst.code, p.0
                ));
            }
        }
        if inst.code.info().category == wave_isa::Category::Atomic
            && inst.defs().any(|d| phys(alloc, d) == 0)
        {
            errors.push(format!("instruction {i}: an atomic's result in r0 would discard it"));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        errors.truncate(5);
        Err(format!("the register allocation of `{}` is wrong: {}", lir.name, errors.join("; ")))
    }
}

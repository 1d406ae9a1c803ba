//! The allocated program: every register and predicate physical, the halves of 64-bit
//! copies and constants written out, and the structure that coalesced copies emptied removed.

use super::{Allocation, phys};
use crate::lir::Code;
use crate::lir::{Arg, Imm, Inst, Kind, Lir, Pred, Reg};
use wave_isa::Opcode;

/// The allocated program: every register and predicate physical.
pub fn rewrite(lir: &Lir, alloc: &Allocation) -> Vec<Inst> {
    rewrite_indexed(lir, alloc).into_iter().map(|(_, inst)| inst).collect()
}

/// [`rewrite`], with the index in `lir.insts` each instruction comes from (for debug info).
pub fn rewrite_indexed(lir: &Lir, alloc: &Allocation) -> Vec<(usize, Inst)> {
    let mut out = Vec::with_capacity(lir.insts.len());
    for (index, original) in lir.insts.iter().enumerate() {
        let mut inst = original.clone();
        for a in &mut inst.args {
            match a {
                Arg::Def(r) | Arg::Use(r) | Arg::Addr(r, _) => *r = Reg::phys(phys(alloc, *r)),
                Arg::PDef(p) | Arg::PUse(p, _) => {
                    *p = Pred(u32::from(alloc.pred.get(p.index()).copied().unwrap_or(0)))
                }
                _ => {}
            }
        }
        if let Some((p, n)) = inst.guard {
            inst.guard =
                Some((Pred(u32::from(alloc.pred.get(p.index()).copied().unwrap_or(0))), n));
        }
        // A copy into its own register is gone (guarded or not).
        if inst.kind == Kind::Copy
            && let (Some(Arg::Def(d)), Some(Arg::Use(s))) = (inst.args.first(), inst.args.get(1))
            && d == s
        {
            continue;
        }
        // An instruction that copies bits (a move, a constant, a select, a shuffle) on a pair
        // is one instruction per half: the second on the pair registers' second halves (and a
        // constant's high word).
        let wide = inst.code.flags().copies
            && original
                .args
                .first()
                .is_some_and(|a| matches!(a, Arg::Def(r) if lir.pairs.contains(r)));
        if wide {
            let constant = inst.code == Code::of(Opcode::MovImm);
            let mut hi = inst.clone();
            for (a, o) in hi.args.iter_mut().zip(&original.args) {
                match (a, o) {
                    (Arg::Def(r) | Arg::Use(r), Arg::Def(v) | Arg::Use(v))
                        if lir.pairs.contains(v) =>
                    {
                        r.0 += 1
                    }
                    (Arg::Imm(t), _) if constant => *t = Imm::F32((t.bits() >> 32) as u32),
                    _ => {}
                }
            }
            if constant {
                for a in &mut inst.args {
                    if let Arg::Imm(t) = a {
                        *t = Imm::F32(t.bits() as u32);
                    }
                }
            }
            out.push((index, inst));
            out.push((index, hi));
            continue;
        }
        out.push((index, inst));
    }
    tidy(out)
}

/// Removes the structure that coalesced copies left empty: `if p / else X / endif` becomes
/// `if !p / X / endif`, an empty `else` goes, and an empty `if`/`endif` pair goes.
fn tidy(insts: Vec<(usize, Inst)>) -> Vec<(usize, Inst)> {
    let mut out: Vec<(usize, Inst)> = Vec::with_capacity(insts.len());
    for (index, inst) in insts {
        match inst.kind {
            Kind::Else if out.last().is_some_and(|(_, l)| l.kind == Kind::If) => {
                if let Some((_, last)) = out.last_mut()
                    && let Some(Arg::PUse(_, neg)) = last.args.first_mut()
                {
                    *neg = !*neg;
                }
                // Mark the flipped `if` as having no else: nothing to push.
            }
            Kind::EndIf if out.last().is_some_and(|(_, l)| l.kind == Kind::Else) => {
                out.pop();
                out.push((index, inst));
            }
            Kind::EndIf if out.last().is_some_and(|(_, l)| l.kind == Kind::If) => {
                out.pop();
            }
            _ => out.push((index, inst)),
        }
    }
    // Falling off the end of a kernel halts: a last `halt` is not needed.
    if out.last().is_some_and(|(_, i)| i.kind == Kind::Halt && i.guard.is_none()) {
        out.pop();
    }
    out
}

/// Register names for printing the allocated program.
pub fn names() -> (impl Fn(Reg) -> String, impl Fn(Pred) -> String) {
    (|r: Reg| format!("r{}", r.0), |p: Pred| format!("p{}", p.0))
}

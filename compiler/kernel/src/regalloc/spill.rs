//! Spilling to Local Memory: each thread's slots behind a spill pointer set on entry, and the
//! Local Memory a kernel needs with its slots.

use crate::lir::Code;
use crate::lir::{self, Arg, Imm, Inst, Kind, Lir, Reg};
use wave_isa::{MemWidth, Opcode};

/// Bytes of Local Memory a kernel needs with `slots` spill slots.
pub fn local_memory(lir: &Lir, slots: u32) -> u32 {
    let frame = lir.frame_bytes + slots * 4;
    if frame == 0 {
        return lir.local_memory;
    }
    let threads = lir.workgroup_size.map_or(0, |[x, y, z]| x * y * z);
    lir.local_memory.next_multiple_of(4) + frame * threads
}

/// Sets the spill pointer's stride (`sp = base + thread * stride`): the multiply before the
/// instruction that defines `sp` gets its immediate. It changes no register.
pub(super) fn set_spill_stride(lir: &mut Lir, sp: Reg, stride: u32) {
    let Some(at) = lir.insts.iter().position(|i| i.defs().any(|d| d == sp)) else { return };
    // `imul sp, a, stride` (the frame at address 0), or `imul a, a, stride; iadd sp, a, base`.
    let at =
        if lir.insts[at].code == Code::of(Opcode::Imul) { Some(at) } else { at.checked_sub(1) };
    if let Some(at) = at
        && lir.insts[at].code == Code::of(Opcode::Imul)
    {
        lir.insts[at].args[2] = Arg::Imm(Imm::Int(i64::from(stride)));
    }
}

/// `sp = base + linear_thread_id * stride`, at the entry (the stride, every slot of one
/// thread, is set when allocation is done).
pub(super) fn insert_spill_pointer(lir: &mut Lir) -> Reg {
    let span = lir.insts.first().map(|i| i.span.clone()).unwrap_or(0..0);
    let sp = lir.reg();
    let (code, next) = lir::frame_pointer_code(lir, sp, 0, &span);
    lir.next_reg = next;
    lir.insts.splice(0..0, code);
    sp
}

/// Puts spilled register `v` in its slot (at `offset` from the spill pointer `sp`): each
/// instruction that reads it loads a fresh register first, and each that writes it stores a
/// fresh register after. The fresh registers are added to `new_regs`.
pub(super) fn spill_register(
    lir: &mut Lir,
    v: Reg,
    slot: u32,
    sp: Reg,
    offset: i32,
    new_regs: &mut Vec<Reg>,
) {
    let old = std::mem::take(&mut lir.insts);
    for mut inst in old {
        let uses = inst.uses().any(|r| r == v);
        let defs = inst.defs().any(|r| r == v);
        if !uses && !defs {
            lir.insts.push(inst);
            continue;
        }
        let t = lir.reg();
        new_regs.push(t);
        for a in &mut inst.args {
            match a {
                Arg::Def(r) | Arg::Use(r) | Arg::Addr(r, _) if *r == v => *r = t,
                _ => {}
            }
        }
        let span = inst.span.clone();
        let guard = inst.guard;
        if uses {
            lir.insts.push(Inst {
                kind: Kind::SpillLoad(slot),
                code: Code::with(Opcode::LocalLoad, MemWidth::U32),
                guard: None,
                guard_kills: false,
                args: vec![Arg::Def(t), Arg::Addr(sp, offset)],
                span: span.clone(),
            });
        }
        lir.insts.push(inst);
        if defs {
            lir.insts.push(Inst {
                kind: Kind::SpillStore(slot),
                code: Code::with(Opcode::LocalStore, MemWidth::U32),
                guard,
                guard_kills: false,
                args: vec![Arg::Addr(sp, offset), Arg::Use(t)],
                span,
            });
        }
    }
}

//! The canonical text of an instruction: what the disassembler prints and the formatter
//! writes. Mnemonics are canonical (Appendix A) with suffixes in one fixed order — the named
//! modifier, the atomic type (unless u32), `.local`, then the scope (always, for atomics and
//! fences) or the cache hint (when set) — and operands are separated by `, `.

use std::fmt::Write;

use crate::{
    AtomicType, CACHE_HINTS, ImmKind, Inst, Modifier, Operand, SPECIAL_REGISTERS, ScopeUse, Width,
    operand_registers, scope_name,
};

/// Writes the canonical text of a valid `inst` to `out`. `target` names call targets (a
/// label for a code offset); without a name the offset is printed as a number.
pub fn write_inst(inst: &Inst, out: &mut String, target: &dyn Fn(u32) -> Option<String>) {
    let Some(op) = inst.info() else {
        let _ = write!(out, "; invalid opcode 0x{:02x}", inst.opcode);
        return;
    };
    if let Some(g) = inst.guard {
        out.push('@');
        if g.negate {
            out.push('!');
        }
        let _ = write!(out, "p{} ", g.predicate);
    }
    write_mnemonic(inst, out);
    for (i, operand) in op.operands.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        match *operand {
            Operand::Reg { slot, width, .. } => {
                let reg = inst.register(slot);
                match width {
                    Width::Half(bit) => {
                        let half = if inst.modifier >> bit & 1 == 1 { "hi" } else { "lo" };
                        let _ = write!(out, "r{reg}.{half}");
                    }
                    _ => write_regs(out, reg, operand_registers(op, operand, inst.modifier)),
                }
            }
            Operand::RegOrImm(kind) => match inst.ext {
                Some(imm) if op.format == crate::Format::Base => write_imm(out, imm, kind),
                _ => {
                    let _ = write!(out, "r{}", inst.rs2);
                }
            },
            Operand::PredDst => {
                let _ = write!(out, "p{}", inst.rd);
            }
            Operand::PredSrc => {
                if inst.modifier & 4 != 0 {
                    out.push('!');
                }
                let _ = write!(out, "p{}", inst.modifier & 3);
            }
            Operand::Address { offset } => match inst.ext {
                Some(off) if offset => {
                    let off = off as i32;
                    let sign = if off < 0 { '-' } else { '+' };
                    let _ = write!(out, "[r{} {sign} {}]", inst.rs1, off.unsigned_abs());
                }
                _ => {
                    let _ = write!(out, "r{}", inst.rs1);
                }
            },
            Operand::Special => {
                out.push_str(SPECIAL_REGISTERS.get(usize::from(inst.rs1)).copied().unwrap_or("?"))
            }
            Operand::Imm(kind) => write_imm(out, inst.ext.unwrap_or(0), kind),
            Operand::Target => {
                let offset = inst.ext.unwrap_or(0);
                match target(offset) {
                    Some(name) => out.push_str(&name),
                    None => {
                        let _ = write!(out, "0x{offset:x}");
                    }
                }
            }
        }
    }
}

fn write_regs(out: &mut String, reg: u8, count: u8) {
    if count <= 1 {
        let _ = write!(out, "r{reg}");
    } else {
        let _ = write!(out, "r{reg}:r{}", u16::from(reg) + u16::from(count) - 1);
    }
}

fn write_imm(out: &mut String, bits: u32, kind: ImmKind) {
    match kind {
        ImmKind::Float => out.push_str(&format_float(bits)),
        ImmKind::Int | ImmKind::Bits => {
            let signed = bits as i32;
            if (-65536..=65535).contains(&signed) {
                let _ = write!(out, "{signed}");
            } else {
                let _ = write!(out, "0x{bits:x}");
            }
        }
    }
}

/// The canonical text of a binary32 immediate: the shortest decimal that reads back to the
/// same bits, `inf`/`-inf`, `nan` for the canonical quiet NaN, and raw hex bits for any other
/// NaN (hex literals in float operands are bit patterns).
pub fn format_float(bits: u32) -> String {
    let value = f32::from_bits(bits);
    if value.is_nan() {
        if bits == 0x7fc0_0000 { "nan".to_owned() } else { format!("0x{bits:08x}") }
    } else if value.is_infinite() {
        if value > 0.0 { "inf".to_owned() } else { "-inf".to_owned() }
    } else {
        format!("{value:?}")
    }
}

/// Writes the canonical mnemonic of a valid `inst` with its suffixes (no guard, no operands).
pub fn write_mnemonic(inst: &Inst, out: &mut String) {
    let Some(op) = inst.info() else {
        return;
    };
    out.push_str(op.mnemonic);
    match op.modifier {
        Modifier::Named { .. } => {
            if let Some(name) = op.modifier_name(inst.modifier) {
                out.push('.');
                out.push_str(name);
            }
        }
        Modifier::Atomic { .. } => {
            if let Some(t) = AtomicType::from_bits(inst.modifier & 7)
                && t != AtomicType::U32
            {
                out.push('.');
                out.push_str(t.name());
            }
            if inst.modifier & 8 != 0 {
                out.push_str(".local");
            }
        }
        _ => {}
    }
    match op.scope {
        ScopeUse::Scope => {
            out.push('.');
            out.push_str(scope_name(inst.scope));
        }
        ScopeUse::CacheHint if inst.scope != 0 => {
            out.push('.');
            out.push_str(CACHE_HINTS[usize::from(inst.scope & 3)]);
        }
        _ => {}
    }
}

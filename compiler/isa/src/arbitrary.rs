//! Valid instructions from random numbers, for property tests here and in the assembler
//! (text round trips) and for fuzzing. Every field an opcode uses is drawn from its whole
//! range, so a property over this generator covers every modifier, scope, guard and operand
//! form of the table.

use crate::{
    Format, Guard, Inst, Modifier, OpInfo, Operand, ScopeUse, Slot, Width, operand_registers,
};

/// A valid instruction of `op`, with every choice taken from `next`.
pub fn arbitrary_inst(op: &OpInfo, next: &mut dyn FnMut() -> u32) -> Inst {
    let mut inst = Inst { opcode: op.opcode, ..Inst::default() };
    inst.modifier = match op.modifier {
        Modifier::None => 0,
        Modifier::Named { names, .. } => names[next() as usize % names.len()].1,
        Modifier::PredSrc => (next() & 7) as u8,
        Modifier::Halves => {
            let mask = op.operands.iter().fold(0u8, |m, o| match o {
                Operand::Reg { width: Width::Half(bit), .. } => m | (1 << bit),
                _ => m,
            });
            next() as u8 & mask
        }
        Modifier::Atomic { types } => {
            types[next() as usize % types.len()] as u8 | (((next() & 1) as u8) << 3)
        }
    };
    inst.scope = match op.scope {
        ScopeUse::None => 0,
        ScopeUse::Scope | ScopeUse::CacheHint => (next() & 3) as u8,
    };
    if op.predicable && next() & 1 == 1 {
        inst.guard = Some(Guard { predicate: (next() & 3) as u8, negate: next() & 1 == 1 });
    }
    if op.format == Format::Extended {
        inst.ext = Some(0);
    }
    for operand in op.operands {
        match *operand {
            Operand::Reg { slot, .. } => {
                let count = u32::from(operand_registers(op, operand, inst.modifier));
                let reg = (next() % (257 - count)) as u8;
                match slot {
                    Slot::Rd => inst.rd = reg,
                    Slot::Rs1 => inst.rs1 = reg,
                    Slot::Rs2 => inst.rs2 = reg,
                    Slot::Rs3 => inst.ext = Some(inst.ext.unwrap_or(0) | u32::from(reg)),
                    Slot::Rs4 => inst.ext = Some(inst.ext.unwrap_or(0) | (u32::from(reg) << 8)),
                }
            }
            Operand::RegOrImm(_) => {
                if next() & 1 == 1 {
                    inst.ext = Some(next());
                } else {
                    inst.rs2 = next() as u8;
                }
            }
            Operand::PredDst => inst.rd = (next() & 3) as u8,
            Operand::PredSrc => {}
            Operand::Address { offset } => {
                inst.rs1 = next() as u8;
                if offset && next() & 1 == 1 {
                    inst.ext = Some(next());
                }
            }
            Operand::Special => inst.rs1 = (next() % 16) as u8,
            Operand::Imm(_) | Operand::Target => inst.ext = Some(next()),
        }
    }
    inst
}

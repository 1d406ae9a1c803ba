//! What an LIR instruction is: its [`Opcode`] and the modifier its suffix selects, built from
//! the ISA's typed sub-operations, never from text. Passes and the register allocator ask its
//! row of the table ([`Code::info`], [`Code::flags`]); only printing turns it into a mnemonic.

use std::fmt;

use wave_isa::{AtomicOp, AtomicType, Flags, Modifier, OpInfo, Opcode, ReduceOp};

/// An instruction's opcode and modifier bits (its predicate operand, for `if`, `break` and the
/// like, is an operand of the instruction, not part of this).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Code {
    /// The opcode.
    pub opcode: Opcode,
    /// The modifier field: a named sub-operation, or an atomic's type and memory.
    pub modifier: u8,
}

impl Code {
    /// `opcode` with no modifier.
    pub const fn of(opcode: Opcode) -> Code {
        Code { opcode, modifier: 0 }
    }

    /// `opcode` with the sub-operation `sub` (`icmp` with `IntCond::Lt`, `device_load` with
    /// `MemWidth::U32`).
    pub fn with(opcode: Opcode, sub: impl Into<u8>) -> Code {
        Code { opcode, modifier: sub.into() }
    }

    /// `wave_reduce` with `op` (its modifier values start at 8).
    pub fn reduce(op: ReduceOp) -> Code {
        Code { opcode: Opcode::WaveReduce, modifier: 8 + u8::from(op) }
    }

    /// The atomic `op` on `ty`, in Local Memory when `local`.
    pub fn atomic(op: AtomicOp, ty: AtomicType, local: bool) -> Code {
        let opcode = match op {
            AtomicOp::Add => Opcode::AtomicAdd,
            AtomicOp::Sub => Opcode::AtomicSub,
            AtomicOp::Min => Opcode::AtomicMin,
            AtomicOp::Max => Opcode::AtomicMax,
            AtomicOp::And => Opcode::AtomicAnd,
            AtomicOp::Or => Opcode::AtomicOr,
            AtomicOp::Xor => Opcode::AtomicXor,
            AtomicOp::Exchange => Opcode::AtomicExchange,
            AtomicOp::Cas => Opcode::AtomicCas,
        };
        Code { opcode, modifier: ty as u8 | if local { 8 } else { 0 } }
    }

    /// Its row of the table.
    pub fn info(self) -> &'static OpInfo {
        self.opcode.info()
    }

    /// What passes may assume about it.
    pub fn flags(self) -> Flags {
        self.info().flags
    }
}

impl fmt::Display for Code {
    /// The mnemonic with its suffixes as the kernel compiler writes them: the named
    /// sub-operation, or an atomic's type (unless `u32`) and `.local`. The scope is left to
    /// the assembler's default.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.info();
        f.write_str(info.mnemonic)?;
        match info.modifier {
            Modifier::Named { .. } => {
                if let Some(name) = info.modifier_name(self.modifier) {
                    write!(f, ".{name}")?;
                }
            }
            Modifier::Atomic { .. } => {
                match AtomicType::from_bits(self.modifier & 7) {
                    Some(AtomicType::U32) | None => {}
                    Some(t) => write!(f, ".{}", t.name())?,
                }
                if self.modifier & 8 != 0 {
                    f.write_str(".local")?;
                }
            }
            Modifier::None | Modifier::PredSrc | Modifier::Halves => {}
        }
        Ok(())
    }
}

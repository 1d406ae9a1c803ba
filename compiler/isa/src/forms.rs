//! The types of the instruction table's rows: operand forms, modifiers, scopes, atomic
//! types and the row itself ([`OpInfo`]), with the helpers that read them.

use crate::flags::Flags;
use crate::{Capability, Category, Format, Opcode};

/// Where a register operand's number is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// Bits [39:32] of the base word.
    Rd,
    /// Bits [31:24] of the base word.
    Rs1,
    /// Bits [23:16] of the base word.
    Rs2,
    /// Bits [7:0] of the extension word.
    Rs3,
    /// Bits [15:8] of the extension word (only `bfi` has a fourth source).
    Rs4,
}

impl Slot {
    /// The field name as the spec writes it.
    pub fn name(self) -> &'static str {
        match self {
            Slot::Rd => "rd",
            Slot::Rs1 => "rs1",
            Slot::Rs2 => "rs2",
            Slot::Rs3 => "rs3",
            Slot::Rs4 => "rs4",
        }
    }
}

/// How many consecutive 32-bit registers an operand spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// One 32-bit register.
    W32,
    /// A 16-bit half, `.lo` or `.hi`; the half is selected by modifier bit `0..=3`.
    Half(u8),
    /// A 64-bit pair `rN:rN+1`.
    Pair,
    /// Decided by the memory width or atomic type modifier: 8..32 bits one register, 64 a
    /// pair, 128 four registers.
    Data,
}

/// What kind of immediate an operand accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImmKind {
    /// A 32-bit integer, signed or unsigned (`-1` and `0xffff_ffff` are the same bits).
    Int,
    /// An IEEE binary32 value; integer literals mean the float of that value, hex literals
    /// give raw bits.
    Float,
    /// Raw 32 bits: integer literals as is, float literals as their binary32 pattern.
    Bits,
}

/// One text operand of an instruction form, in the order it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A general register; `write` is true for a destination.
    Reg {
        /// Field that holds the register number.
        slot: Slot,
        /// How many registers it spans.
        width: Width,
        /// Written by the instruction (else read).
        write: bool,
    },
    /// A register in `rs2`, or an immediate carried by the extension word.
    RegOrImm(ImmKind),
    /// A predicate destination `pN`, stored in `rd`.
    PredDst,
    /// A predicate source `pN` or `!pN`, stored in modifier bits [1:0] and [2].
    PredSrc,
    /// A byte address register in `rs1`, optionally `[rN + offset]` with the signed offset
    /// in the extension word.
    Address {
        /// Whether an offset may be given.
        offset: bool,
    },
    /// A special register, its index in `rs1`.
    Special,
    /// A 32-bit immediate in the extension word.
    Imm(ImmKind),
    /// A code label, its byte offset in the extension word.
    Target,
}

/// What the 4-bit modifier field means for an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modifier {
    /// Unused; must be zero.
    None,
    /// A sub-operation chosen by a named suffix.
    Named {
        /// Suffix names and their field values.
        names: &'static [(&'static str, u8)],
        /// Value used when no suffix is written (`None`: a suffix is required).
        default: Option<u8>,
    },
    /// Holds the predicate source operand: bits [1:0] the index, bit [2] negation.
    PredSrc,
    /// One bit per half-register operand (bit set: `.hi`).
    Halves,
    /// Bits [2:0]: the atomic's data type (see [`ATOMIC_TYPES`]); bit [3]: Local Memory.
    Atomic {
        /// The types this atomic accepts.
        types: &'static [AtomicType],
    },
}

/// What the 2-bit scope field means for an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeUse {
    /// Unused; must be zero.
    None,
    /// A memory scope (`.wave .workgroup .device .system`); `.device` when none is written.
    Scope,
    /// A cache hint (`.cached .uncached .streaming`) on a device load or store.
    CacheHint,
}

/// The data type of an atomic operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicType {
    /// Unsigned 32-bit (the default; also the bitwise and exchange type).
    U32 = 0,
    /// Signed 32-bit (differs from u32 only for min and max).
    I32 = 1,
    /// Binary32 float add (CAP_ATOMIC_F32).
    F32 = 2,
    /// Unsigned 64-bit (CAP_ATOMIC_64), register pairs.
    U64 = 3,
    /// Signed 64-bit (CAP_ATOMIC_64), register pairs.
    I64 = 4,
}

impl AtomicType {
    /// The suffix that names this type.
    pub fn name(self) -> &'static str {
        match self {
            AtomicType::U32 => "u32",
            AtomicType::I32 => "i32",
            AtomicType::F32 => "f32",
            AtomicType::U64 => "u64",
            AtomicType::I64 => "i64",
        }
    }

    /// The type stored in modifier bits [2:0].
    pub fn from_bits(bits: u8) -> Option<AtomicType> {
        ATOMIC_TYPES.iter().copied().find(|t| *t as u8 == bits)
    }

    /// Whether the operands are 64-bit register pairs.
    pub fn is_64(self) -> bool {
        matches!(self, AtomicType::U64 | AtomicType::I64)
    }
}

/// Every atomic type, in field order.
pub const ATOMIC_TYPES: &[AtomicType] =
    &[AtomicType::U32, AtomicType::I32, AtomicType::F32, AtomicType::U64, AtomicType::I64];

/// One row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// The opcode.
    pub op: Opcode,
    /// The 8-bit primary opcode (`op as u8`).
    pub opcode: u8,
    /// Canonical mnemonic (Appendix A).
    pub mnemonic: &'static str,
    /// Base (48-bit) or Extended (80-bit, always with the extension word).
    pub format: Format,
    /// The Appendix A category.
    pub category: Category,
    /// Operands in text order.
    pub operands: &'static [Operand],
    /// Meaning of the modifier field.
    pub modifier: Modifier,
    /// Meaning of the scope field.
    pub scope: ScopeUse,
    /// Whether `@p`/`@!p` may guard it (false for structured control flow and barriers).
    pub predicable: bool,
    /// The capability it needs, if optional.
    pub capability: Option<Capability>,
    /// Other whole spellings: (alias, suffixes it implies).
    pub aliases: &'static [(&'static str, &'static [&'static str])],
    /// What passes and analyses may assume about it ([`crate::flags`]).
    pub flags: Flags,
    /// The spec section that defines it.
    pub section: &'static str,
    /// One paragraph of semantics, in the words of the spec where it has them.
    pub summary: &'static str,
}

/// The names of a named modifier that are printed, completed and listed: the first name of
/// each value. A later name of the same value is an alias (`.and` of `.and_bits`).
pub fn canonical_names(
    names: &'static [(&'static str, u8)],
) -> impl Iterator<Item = (&'static str, u8)> {
    names
        .iter()
        .enumerate()
        .filter(|(i, (_, v))| names[..*i].iter().all(|(_, w)| w != v))
        .map(|(_, &(n, v))| (n, v))
}

/// The aliases of modifier value `value` in `names`: its names after the first.
pub fn modifier_aliases(
    names: &'static [(&'static str, u8)],
    value: u8,
) -> impl Iterator<Item = &'static str> {
    names.iter().filter(move |(_, v)| *v == value).skip(1).map(|(n, _)| *n)
}

impl OpInfo {
    /// Name of modifier value `value`, for `Named` modifiers.
    pub fn modifier_name(&self, value: u8) -> Option<&'static str> {
        match self.modifier {
            Modifier::Named { names, .. } => {
                names.iter().find(|(_, v)| *v == value).map(|(n, _)| *n)
            }
            _ => None,
        }
    }

    /// Whether the extension word may or must be present.
    pub fn may_extend(&self) -> bool {
        self.format == Format::Extended
            || self
                .operands
                .iter()
                .any(|o| matches!(o, Operand::RegOrImm(_) | Operand::Address { offset: true }))
    }
}

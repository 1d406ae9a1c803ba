//! The instruction table: one row per opcode of WAVE v0.3 Appendix A.
//!
//! Every other part of the toolchain derives from these rows: the assembler's mnemonic and
//! operand checks, the encoder and decoder, the disassembler's canonical text, the editor's
//! hovers and completions, the grammar's mnemonic list and `docs/isa/reference.md`. Adding an
//! instruction is adding a row here (plus its semantics in the emulator).
//!
//! Naming rules kept next to the table:
//! - `mnemonic` is the Appendix A name, lowercase. A modifier or scope is written as a dot
//!   suffix in Appendix A's words (`icmp.lt`, `fence.acq_rel.device`).
//! - `aliases` are whole spellings that resolve to this opcode with the given suffixes; the
//!   generated underscore forms (`icmp_lt`, `device_load_u32`) are added by [`crate::lookup`]
//!   from the modifier names and need no row.

use crate::{Capability, Category, Format};

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
    /// The 8-bit primary opcode.
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
    /// The spec section that defines it.
    pub section: &'static str,
    /// One paragraph of semantics, in the words of the spec where it has them.
    pub summary: &'static str,
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

use Operand::*;
use Slot::*;
use Width::*;

const fn dst(slot: Slot) -> Operand {
    Reg { slot, width: W32, write: true }
}
const fn src(slot: Slot) -> Operand {
    Reg { slot, width: W32, write: false }
}

const NONE: &[Operand] = &[];
const UNARY: &[Operand] = &[dst(Rd), src(Rs1)];
const BIN_INT: &[Operand] = &[dst(Rd), src(Rs1), RegOrImm(ImmKind::Int)];
const BIN_FLOAT: &[Operand] = &[dst(Rd), src(Rs1), RegOrImm(ImmKind::Float)];
const TERNARY: &[Operand] = &[dst(Rd), src(Rs1), src(Rs2), src(Rs3)];
const QUATERNARY: &[Operand] = &[dst(Rd), src(Rs1), src(Rs2), src(Rs3), src(Rs4)];
const CMP_INT: &[Operand] = &[PredDst, src(Rs1), RegOrImm(ImmKind::Int)];
const CMP_FLOAT: &[Operand] = &[PredDst, src(Rs1), RegOrImm(ImmKind::Float)];
const SELECT: &[Operand] = &[dst(Rd), PredSrc, src(Rs1), src(Rs2)];
const LOAD: &[Operand] = &[Reg { slot: Rd, width: Data, write: true }, Address { offset: true }];
const STORE: &[Operand] = &[Address { offset: true }, Reg { slot: Rs2, width: Data, write: false }];
const ATOMIC: &[Operand] = &[
    Reg { slot: Rd, width: Data, write: true },
    Address { offset: false },
    Reg { slot: Rs2, width: Data, write: false },
];
const ATOMIC_CAS: &[Operand] = &[
    Reg { slot: Rd, width: Data, write: true },
    Address { offset: false },
    Reg { slot: Rs2, width: Data, write: false },
    Reg { slot: Rs3, width: Data, write: false },
];
const SHUFFLE: &[Operand] = &[dst(Rd), src(Rs1), RegOrImm(ImmKind::Int)];
const BALLOT: &[Operand] = &[dst(Rd), PredSrc];
const VOTE: &[Operand] = &[PredDst, PredSrc];
const PRED_ONLY: &[Operand] = &[PredSrc];
const CALL: &[Operand] = &[Target];
const HALF_BIN: &[Operand] = &[
    Reg { slot: Rd, width: Half(0), write: true },
    Reg { slot: Rs1, width: Half(1), write: false },
    Reg { slot: Rs2, width: Half(2), write: false },
];
const HALF_TERN: &[Operand] = &[
    Reg { slot: Rd, width: Half(0), write: true },
    Reg { slot: Rs1, width: Half(1), write: false },
    Reg { slot: Rs2, width: Half(2), write: false },
    Reg { slot: Rs3, width: Half(3), write: false },
];
const PACKED_BIN: &[Operand] = &[dst(Rd), src(Rs1), src(Rs2)];
const CVT_FROM_HALF: &[Operand] = &[dst(Rd), Reg { slot: Rs1, width: Half(1), write: false }];
const CVT_TO_HALF: &[Operand] = &[Reg { slot: Rd, width: Half(0), write: true }, src(Rs1)];
const CVT_FROM_PAIR: &[Operand] = &[dst(Rd), Reg { slot: Rs1, width: Pair, write: false }];
const CVT_TO_PAIR: &[Operand] = &[Reg { slot: Rd, width: Pair, write: true }, src(Rs1)];
const PAIR_UNARY: &[Operand] =
    &[Reg { slot: Rd, width: Pair, write: true }, Reg { slot: Rs1, width: Pair, write: false }];
const PAIR_BIN: &[Operand] = &[
    Reg { slot: Rd, width: Pair, write: true },
    Reg { slot: Rs1, width: Pair, write: false },
    Reg { slot: Rs2, width: Pair, write: false },
];
const PAIR_TERN: &[Operand] = &[
    Reg { slot: Rd, width: Pair, write: true },
    Reg { slot: Rs1, width: Pair, write: false },
    Reg { slot: Rs2, width: Pair, write: false },
    Reg { slot: Rs3, width: Pair, write: false },
];
const MOV_IMM: &[Operand] = &[dst(Rd), Imm(ImmKind::Bits)];
const MOV_SPECIAL: &[Operand] = &[dst(Rd), Special];

/// Memory access widths of `local_load`/`local_store` (modifier values).
pub const LOCAL_WIDTHS: &[(&str, u8)] = &[("u8", 0), ("u16", 1), ("u32", 2), ("u64", 3)];
/// Memory access widths of `device_load`/`device_store` (modifier values).
pub const DEVICE_WIDTHS: &[(&str, u8)] =
    &[("u8", 0), ("u16", 1), ("u32", 2), ("u64", 3), ("u128", 4)];
/// `icmp` conditions.
pub const ICMP_CONDITIONS: &[(&str, u8)] =
    &[("eq", 0), ("ne", 1), ("lt", 2), ("le", 3), ("gt", 4), ("ge", 5)];
/// `ucmp` conditions.
pub const UCMP_CONDITIONS: &[(&str, u8)] = &[("lt", 0), ("le", 1)];
/// `fcmp` conditions.
pub const FCMP_CONDITIONS: &[(&str, u8)] =
    &[("eq", 0), ("lt", 1), ("le", 2), ("gt", 3), ("ne", 4), ("ord", 5), ("unord", 6)];
/// `fround` modes.
pub const ROUND_MODES: &[(&str, u8)] = &[("floor", 0), ("ceil", 1), ("round", 2), ("trunc", 3)];
/// `ftransc` functions.
pub const TRANSCENDENTALS: &[(&str, u8)] = &[("sin", 0), ("cos", 1), ("exp2", 2), ("log2", 3)];
/// `shift` kinds.
pub const SHIFTS: &[(&str, u8)] = &[("shl", 0), ("shr", 1), ("sar", 2)];
/// `bitop` kinds.
pub const BITOPS: &[(&str, u8)] = &[("bitcount", 0), ("bitfind", 1), ("bitrev", 2)];
/// `fence` orderings.
pub const FENCES: &[(&str, u8)] = &[("acquire", 0), ("release", 1), ("acq_rel", 2)];
/// `wave_reduce` operations. Values 8-13 per the v0.3 changelog (see docs/isa/deviations.md).
pub const REDUCTIONS: &[(&str, u8)] =
    &[("add", 8), ("min", 9), ("max", 10), ("and", 11), ("or", 12), ("xor", 13)];

const ALL_ATOMIC: &[AtomicType] =
    &[AtomicType::U32, AtomicType::I32, AtomicType::F32, AtomicType::U64, AtomicType::I64];
const INT_ATOMIC: &[AtomicType] =
    &[AtomicType::U32, AtomicType::I32, AtomicType::U64, AtomicType::I64];
const BIT_ATOMIC: &[AtomicType] = &[AtomicType::U32, AtomicType::U64];

macro_rules! op {
    ($code:literal, $name:literal, $fmt:ident, $cat:ident, $ops:expr, $sec:literal, $sum:literal
     $(, modifier = $m:expr)? $(, scope = $s:expr)? $(, predicable = $p:expr)?
     $(, cap = $c:ident)? $(, aliases = $a:expr)?) => {
        OpInfo {
            opcode: $code,
            mnemonic: $name,
            format: Format::$fmt,
            category: Category::$cat,
            operands: $ops,
            modifier: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let m = Modifier::None; $(let m = $m;)? m },
            scope: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let s = ScopeUse::None; $(let s = $s;)? s },
            predicable: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let p = true; $(let p = $p;)? p },
            capability: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let c: Option<Capability> = None; $(let c = Some(Capability::$c);)? c },
            aliases: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let a: &[(&str, &[&str])] = &[]; $(let a: &[(&str, &[&str])] = $a;)? a },
            section: $sec,
            summary: $sum,
        }
    };
}

const fn named(names: &'static [(&'static str, u8)], default: Option<u8>) -> Modifier {
    Modifier::Named { names, default }
}

/// The instruction table, sorted by opcode.
pub static OPCODES: &[OpInfo] = &[
    // Integer arithmetic (6.2).
    op!(0x00, "iadd", Base, Integer, BIN_INT, "6.2", "rd = rs1 + rs2, wrapping on overflow."),
    op!(0x01, "isub", Base, Integer, BIN_INT, "6.2", "rd = rs1 - rs2, wrapping on overflow."),
    op!(
        0x02,
        "imul",
        Base,
        Integer,
        BIN_INT,
        "6.2",
        "rd = (rs1 * rs2) & 0xFFFFFFFF: the low 32 bits of the product."
    ),
    op!(
        0x03,
        "imul_hi",
        Base,
        Integer,
        BIN_INT,
        "6.2",
        "rd = (rs1 * rs2) >> 32: the high 32 bits of the signed 64-bit product."
    ),
    op!(0x04, "imad", Extended, Integer, TERNARY, "6.2", "rd = rs1 * rs2 + rs3, wrapping."),
    op!(
        0x05,
        "idiv",
        Base,
        Integer,
        BIN_INT,
        "6.2",
        "rd = rs1 / rs2, signed, rounding toward zero. Division by zero is undefined behaviour."
    ),
    op!(
        0x06,
        "imod",
        Base,
        Integer,
        BIN_INT,
        "6.2",
        "rd = rs1 % rs2, signed, with the sign of rs1. Division by zero is undefined behaviour."
    ),
    op!(0x07, "ineg", Base, Integer, UNARY, "6.2", "rd = -rs1, wrapping (-(-2^31) = -2^31)."),
    op!(0x08, "iabs", Base, Integer, UNARY, "6.2", "rd = abs(rs1), wrapping (abs(-2^31) = -2^31)."),
    op!(0x09, "imin", Base, Integer, BIN_INT, "6.2", "rd = min(rs1, rs2), signed."),
    op!(0x0A, "imax", Base, Integer, BIN_INT, "6.2", "rd = max(rs1, rs2), signed."),
    op!(
        0x0B,
        "iclamp",
        Extended,
        Integer,
        TERNARY,
        "6.2",
        "rd = clamp(rs1, rs2, rs3) = min(max(rs1, rs2), rs3), signed."
    ),
    op!(0x0C, "umin", Base, Integer, BIN_INT, "6.2", "rd = min(rs1, rs2), unsigned."),
    op!(0x0D, "umax", Base, Integer, BIN_INT, "6.2", "rd = max(rs1, rs2), unsigned."),
    // Floating-point arithmetic, F32 (6.4).
    op!(
        0x10,
        "fadd",
        Base,
        Float,
        BIN_FLOAT,
        "6.4",
        "rd = rs1 + rs2 in IEEE binary32, round to nearest even."
    ),
    op!(0x11, "fsub", Base, Float, BIN_FLOAT, "6.4", "rd = rs1 - rs2 in binary32."),
    op!(0x12, "fmul", Base, Float, BIN_FLOAT, "6.4", "rd = rs1 * rs2 in binary32."),
    op!(
        0x13,
        "fma",
        Extended,
        Float,
        TERNARY,
        "6.4",
        "rd = rs1 * rs2 + rs3 with a single rounding."
    ),
    op!(0x14, "fdiv", Base, Float, BIN_FLOAT, "6.4", "rd = rs1 / rs2 in binary32."),
    op!(0x15, "fneg", Base, Float, UNARY, "6.4", "rd = -rs1 (flips the sign bit, NaN included)."),
    op!(0x16, "fabs", Base, Float, UNARY, "6.4", "rd = abs(rs1) (clears the sign bit)."),
    op!(
        0x17,
        "fmin",
        Base,
        Float,
        BIN_FLOAT,
        "6.4",
        "rd = min(rs1, rs2); if one operand is NaN the other is returned."
    ),
    op!(
        0x18,
        "fmax",
        Base,
        Float,
        BIN_FLOAT,
        "6.4",
        "rd = max(rs1, rs2); if one operand is NaN the other is returned."
    ),
    op!(
        0x19,
        "fclamp",
        Extended,
        Float,
        TERNARY,
        "6.4",
        "rd = clamp(rs1, rs2, rs3) = min(max(rs1, rs2), rs3)."
    ),
    op!(0x1A, "fsqrt", Base, Float, UNARY, "6.4", "rd = sqrt(rs1)."),
    op!(0x1B, "frsqrt", Base, Float, UNARY, "6.4", "rd = 1 / sqrt(rs1)."),
    op!(0x1C, "frcp", Base, Float, UNARY, "6.4", "rd = 1 / rs1."),
    op!(
        0x1D,
        "fround",
        Base,
        Float,
        UNARY,
        "6.4",
        "rd = rs1 rounded to an integral value: floor, ceil, round (to nearest, ties to even) or trunc.",
        modifier = named(ROUND_MODES, Some(2)),
        aliases = &[("ffloor", &["floor"]), ("fceil", &["ceil"]), ("ftrunc", &["trunc"])]
    ),
    op!(
        0x1E,
        "ffract",
        Base,
        Float,
        UNARY,
        "6.4",
        "rd = rs1 - floor(rs1), in [0, 1): where the subtraction rounds up to 1.0 (tiny negative rs1) the result is the largest binary32 below 1."
    ),
    op!(
        0x1F,
        "ftransc",
        Base,
        Float,
        UNARY,
        "6.4",
        "rd = sin, cos, exp2 or log2 of rs1, within 2 ULP.",
        modifier = named(TRANSCENDENTALS, None),
        aliases =
            &[("fsin", &["sin"]), ("fcos", &["cos"]), ("fexp2", &["exp2"]), ("flog2", &["log2"])]
    ),
    // Bitwise (6.3).
    op!(0x20, "and", Base, Bitwise, BIN_INT, "6.3", "rd = rs1 & rs2."),
    op!(0x21, "or", Base, Bitwise, BIN_INT, "6.3", "rd = rs1 | rs2."),
    op!(0x22, "xor", Base, Bitwise, BIN_INT, "6.3", "rd = rs1 ^ rs2."),
    op!(0x23, "not", Base, Bitwise, UNARY, "6.3", "rd = ~rs1."),
    op!(
        0x24,
        "shift",
        Base,
        Bitwise,
        BIN_INT,
        "6.3",
        "rd = rs1 shifted by (rs2 & 0x1F): shl left, shr logical right, sar arithmetic right.",
        modifier = named(SHIFTS, None),
        aliases = &[("shl", &["shl"]), ("shr", &["shr"]), ("sar", &["sar"])]
    ),
    op!(
        0x25,
        "bitop",
        Base,
        Bitwise,
        UNARY,
        "6.3",
        "bitcount: number of set bits; bitfind: index of the most significant set bit, or 0xFFFFFFFF if none; bitrev: bits reversed.",
        modifier = named(BITOPS, None),
        aliases =
            &[("bitcount", &["bitcount"]), ("bitfind", &["bitfind"]), ("bitrev", &["bitrev"])]
    ),
    op!(
        0x26,
        "bfe",
        Extended,
        Bitwise,
        TERNARY,
        "6.3",
        "Bit field extract: rd = (rs1 >> (rs2 & 31)) & ((1 << w) - 1) with w = min(rs3 & 0xFF, 32), zero-extended."
    ),
    op!(
        0x27,
        "bfi",
        Extended,
        Bitwise,
        QUATERNARY,
        "6.3",
        "Bit field insert: rd = rs2 with the w = min(rs4 & 0xFF, 32) bits at offset (rs3 & 31) replaced by the low bits of rs1."
    ),
    // Comparison and select (6.8).
    op!(
        0x28,
        "icmp",
        Base,
        Compare,
        CMP_INT,
        "6.8",
        "pd = rs1 <cond> rs2, signed; cond is eq, ne, lt, le, gt or ge.",
        modifier = named(ICMP_CONDITIONS, None)
    ),
    op!(
        0x29,
        "ucmp",
        Base,
        Compare,
        CMP_INT,
        "6.8",
        "pd = rs1 <cond> rs2, unsigned; cond is lt or le.",
        modifier = named(UCMP_CONDITIONS, None)
    ),
    op!(
        0x2A,
        "fcmp",
        Base,
        Compare,
        CMP_FLOAT,
        "6.8",
        "pd = rs1 <cond> rs2 in binary32; eq, lt, le, gt are false on NaN, ne is true on NaN, ord is true when neither is NaN, unord when either is.",
        modifier = named(FCMP_CONDITIONS, None)
    ),
    op!(
        0x2B,
        "select",
        Base,
        Compare,
        SELECT,
        "6.8",
        "rd = ps ? rs1 : rs2.",
        modifier = Modifier::PredSrc
    ),
    op!(
        0x2C,
        "fsat",
        Base,
        Compare,
        UNARY,
        "6.4",
        "rd = clamp(rs1, 0.0, 1.0) with the fmin/fmax rules: NaN and -0.0 give +0.0."
    ),
    // Local memory (6.9).
    op!(
        0x30,
        "local_load",
        Base,
        LocalMemory,
        LOAD,
        "6.9",
        "rd = Local Memory at [rs1 + offset], zero-extended; u64 fills a register pair.",
        modifier = named(LOCAL_WIDTHS, None)
    ),
    op!(
        0x31,
        "local_store",
        Base,
        LocalMemory,
        STORE,
        "6.9",
        "Local Memory at [rs1 + offset] = the low bits of rs2 (a pair for u64).",
        modifier = named(LOCAL_WIDTHS, None)
    ),
    // Device memory (6.9).
    op!(
        0x38,
        "device_load",
        Base,
        DeviceMemory,
        LOAD,
        "6.9",
        "rd = Device Memory at [rs1 + offset], zero-extended; u64 fills a pair, u128 four registers. Asynchronous: use wait or a fence before relying on ordering with other threads.",
        modifier = named(DEVICE_WIDTHS, None),
        scope = ScopeUse::CacheHint
    ),
    op!(
        0x39,
        "device_store",
        Base,
        DeviceMemory,
        STORE,
        "6.9",
        "Device Memory at [rs1 + offset] = the low bits of rs2 (a pair for u64, four registers for u128).",
        modifier = named(DEVICE_WIDTHS, None),
        scope = ScopeUse::CacheHint
    ),
    // Atomics (4.5, 6.10).
    op!(
        0x40,
        "atomic_add",
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] += rs2 at the given scope; rd receives the old value (rd = r0: non-returning).",
        modifier = Modifier::Atomic { types: ALL_ATOMIC },
        scope = ScopeUse::Scope
    ),
    op!(
        0x41,
        "atomic_sub",
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] -= rs2; rd receives the old value (rd = r0: non-returning).",
        modifier = Modifier::Atomic { types: INT_ATOMIC },
        scope = ScopeUse::Scope
    ),
    op!(
        0x42,
        "atomic_min",
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] = min([rs1], rs2), signed for i32/i64; rd receives the old value.",
        modifier = Modifier::Atomic { types: INT_ATOMIC },
        scope = ScopeUse::Scope
    ),
    op!(
        0x43,
        "atomic_max",
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] = max([rs1], rs2), signed for i32/i64; rd receives the old value.",
        modifier = Modifier::Atomic { types: INT_ATOMIC },
        scope = ScopeUse::Scope
    ),
    op!(
        0x44,
        "atomic_and",
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] &= rs2; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope
    ),
    op!(
        0x45,
        "atomic_or",
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] |= rs2; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope
    ),
    op!(
        0x46,
        "atomic_xor",
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] ^= rs2; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope
    ),
    op!(
        0x47,
        "atomic_exchange",
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically swaps [rs1] and rs2; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope,
        aliases = &[("atomic_exch", &[]), ("atomic_swap", &[])]
    ),
    op!(
        0x48,
        "atomic_cas",
        Extended,
        Atomic,
        ATOMIC_CAS,
        "6.10",
        "Atomically: if [rs1] == rs2 then [rs1] = rs3; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope,
        aliases = &[("atomic_compare_swap", &[])]
    ),
    // Wave operations (6.11).
    op!(
        0x50,
        "wave_shuffle",
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane rs2. A source lane that is out of range or inactive gives rd's own rs1 (see docs/isa/deviations.md)."
    ),
    op!(0x51, "wave_shuffle_up", Base, Wave, SHUFFLE, "6.11", "rd = rs1 of lane (lane_id - rs2)."),
    op!(
        0x52,
        "wave_shuffle_down",
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane (lane_id + rs2)."
    ),
    op!(0x53, "wave_shuffle_xor", Base, Wave, SHUFFLE, "6.11", "rd = rs1 of lane (lane_id ^ rs2)."),
    op!(
        0x54,
        "wave_broadcast",
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane rs2 (uniform lane), in every active thread."
    ),
    op!(
        0x55,
        "wave_ballot",
        Base,
        Wave,
        BALLOT,
        "6.11",
        "rd = bit mask of ps across the active threads (bit i is lane i).",
        modifier = Modifier::PredSrc
    ),
    op!(
        0x56,
        "wave_any",
        Base,
        Wave,
        VOTE,
        "6.11",
        "pd = true if ps holds in any active thread.",
        modifier = Modifier::PredSrc
    ),
    op!(
        0x57,
        "wave_all",
        Base,
        Wave,
        VOTE,
        "6.11",
        "pd = true if ps holds in every active thread.",
        modifier = Modifier::PredSrc
    ),
    op!(
        0x58,
        "wave_prefix_sum",
        Base,
        Wave,
        UNARY,
        "6.11",
        "rd = sum of rs1 over the active lanes below this one (exclusive prefix sum, wrapping)."
    ),
    op!(
        0x59,
        "wave_reduce",
        Base,
        Wave,
        UNARY,
        "6.11",
        "rd = reduction of rs1 over the active lanes: add (wrapping), min and max (signed), and, or, xor.",
        modifier = named(REDUCTIONS, None),
        aliases = &[
            ("wave_reduce_add", &["add"]),
            ("wave_reduce_min", &["min"]),
            ("wave_reduce_max", &["max"]),
            ("wave_reduce_and", &["and"]),
            ("wave_reduce_or", &["or"]),
            ("wave_reduce_xor", &["xor"]),
            ("wave_reduce_and_bits", &["and"]),
            ("wave_reduce_or_bits", &["or"]),
            ("wave_reduce_xor_bits", &["xor"])
        ]
    ),
    op!(
        0x5A,
        "wave_shuffle_idx",
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane rs2 (arbitrary index shuffle), the same rule for inactive or out-of-range sources as wave_shuffle."
    ),
    // Control flow and synchronisation (5.1, 6.12, 6.13).
    op!(
        0x60,
        "if",
        Base,
        Control,
        PRED_ONLY,
        "5.1",
        "Begins a conditional block: threads where ps is false become inactive until else or endif.",
        modifier = Modifier::PredSrc,
        predicable = false
    ),
    op!(
        0x61,
        "else",
        Base,
        Control,
        NONE,
        "5.1",
        "Switches to the threads that were active at the if and had ps false.",
        predicable = false
    ),
    op!(
        0x62,
        "endif",
        Base,
        Control,
        NONE,
        "5.1",
        "Ends a conditional block: the threads active before the if are active again.",
        predicable = false
    ),
    op!(0x63, "loop", Base, Control, NONE, "5.1", "Begins a loop.", predicable = false),
    op!(
        0x64,
        "break",
        Base,
        Control,
        PRED_ONLY,
        "5.1",
        "Threads where ps holds (or, with !ps, does not hold) leave the loop, in this iteration.",
        modifier = Modifier::PredSrc,
        predicable = false
    ),
    op!(
        0x65,
        "continue",
        Base,
        Control,
        PRED_ONLY,
        "5.1",
        "Threads where ps holds skip to the next iteration.",
        modifier = Modifier::PredSrc,
        predicable = false
    ),
    op!(
        0x66,
        "endloop",
        Base,
        Control,
        NONE,
        "5.1",
        "Ends the loop body: branches back to loop while any thread remains in the loop.",
        predicable = false
    ),
    op!(
        0x67,
        "call",
        Extended,
        Control,
        CALL,
        "5.1",
        "Calls the function at the label; the extension word holds its byte offset in the code section.",
        predicable = false
    ),
    op!(
        0x68,
        "return",
        Base,
        Control,
        NONE,
        "5.1",
        "Returns from the current function.",
        predicable = false
    ),
    op!(
        0x69,
        "barrier",
        Base,
        Control,
        NONE,
        "6.12",
        "Workgroup barrier: every wave of the workgroup reaches it before any proceeds; memory operations before it are visible to the workgroup after it. Must not be reached in divergent control flow.",
        predicable = false
    ),
    op!(
        0x6A,
        "fence",
        Base,
        Control,
        NONE,
        "4.4",
        "Memory fence at the scope: acquire, release or acq_rel.",
        modifier = named(FENCES, None),
        scope = ScopeUse::Scope,
        aliases = &[
            ("fence_acquire", &["acquire"]),
            ("fence_release", &["release"]),
            ("fence_acq_rel", &["acq_rel"])
        ]
    ),
    op!(
        0x6B,
        "wait",
        Base,
        Control,
        NONE,
        "6.9",
        "Waits until this thread's outstanding device loads have completed."
    ),
    op!(0x6C, "halt", Base, Control, NONE, "5.1", "Terminates the executing threads."),
    // Conversions (6.7).
    op!(
        0x70,
        "cvt_f32_i32",
        Base,
        Convert,
        UNARY,
        "6.7",
        "rd = (f32) rs1 as a signed integer, round to nearest even."
    ),
    op!(0x71, "cvt_f32_u32", Base, Convert, UNARY, "6.7", "rd = (f32) rs1 as an unsigned integer."),
    op!(
        0x72,
        "cvt_i32_f32",
        Base,
        Convert,
        UNARY,
        "6.7",
        "rd = (i32) rs1 rounded toward zero, saturating; NaN gives 0."
    ),
    op!(
        0x73,
        "cvt_u32_f32",
        Base,
        Convert,
        UNARY,
        "6.7",
        "rd = (u32) rs1 rounded toward zero, saturating; NaN gives 0."
    ),
    op!(
        0x74,
        "cvt_f32_f16",
        Base,
        Convert,
        CVT_FROM_HALF,
        "6.7",
        "rd = the binary16 half rs1.lo or rs1.hi widened to binary32.",
        modifier = Modifier::Halves
    ),
    op!(
        0x75,
        "cvt_f16_f32",
        Base,
        Convert,
        CVT_TO_HALF,
        "6.7",
        "rd.lo or rd.hi = rs1 narrowed to binary16 (round to nearest even); the other half is kept.",
        modifier = Modifier::Halves
    ),
    op!(
        0x76,
        "cvt_f32_f64",
        Base,
        Convert,
        CVT_FROM_PAIR,
        "6.7",
        "rd = the binary64 pair rs1 narrowed to binary32.",
        cap = F64
    ),
    op!(
        0x77,
        "cvt_f64_f32",
        Base,
        Convert,
        CVT_TO_PAIR,
        "6.7",
        "rd pair = rs1 widened to binary64.",
        cap = F64
    ),
    // F16 (6.5).
    op!(
        0x80,
        "hadd",
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half + rs2 half in binary16; the other half of rd is kept.",
        modifier = Modifier::Halves
    ),
    op!(
        0x81,
        "hsub",
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half - rs2 half in binary16.",
        modifier = Modifier::Halves
    ),
    op!(
        0x82,
        "hmul",
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half * rs2 half in binary16.",
        modifier = Modifier::Halves
    ),
    op!(
        0x83,
        "hma",
        Extended,
        F16,
        HALF_TERN,
        "6.5",
        "rd half = rs1 half * rs2 half + rs3 half with a single rounding.",
        modifier = Modifier::Halves
    ),
    op!(
        0x84,
        "hadd2",
        Base,
        F16,
        PACKED_BIN,
        "6.5",
        "Both halves: rd.lo = rs1.lo + rs2.lo, rd.hi = rs1.hi + rs2.hi in binary16."
    ),
    op!(0x85, "hmul2", Base, F16, PACKED_BIN, "6.5", "Both halves multiplied in binary16."),
    op!(
        0x86,
        "hma2",
        Extended,
        F16,
        TERNARY,
        "6.5",
        "Both halves: rd.x = rs1.x * rs2.x + rs3.x with a single rounding."
    ),
    // F64 (6.6), optional.
    op!(
        0x90,
        "dadd",
        Base,
        F64,
        PAIR_BIN,
        "6.6",
        "rd = rs1 + rs2 in binary64 on register pairs.",
        cap = F64
    ),
    op!(0x91, "dsub", Base, F64, PAIR_BIN, "6.6", "rd = rs1 - rs2 in binary64.", cap = F64),
    op!(0x92, "dmul", Base, F64, PAIR_BIN, "6.6", "rd = rs1 * rs2 in binary64.", cap = F64),
    op!(
        0x93,
        "dma",
        Extended,
        F64,
        PAIR_TERN,
        "6.6",
        "rd = rs1 * rs2 + rs3 in binary64 with a single rounding.",
        cap = F64
    ),
    op!(0x94, "ddiv", Base, F64, PAIR_BIN, "6.6", "rd = rs1 / rs2 in binary64.", cap = F64),
    op!(0x95, "dsqrt", Base, F64, PAIR_UNARY, "6.6", "rd = sqrt(rs1) in binary64.", cap = F64),
    // Matrix multiply-accumulate (6.14), optional.
    op!(
        0xA0,
        "mma_f16_f32",
        Extended,
        Mma,
        TERNARY,
        "6.14",
        "D = A * B + C over the wave: A and B binary16 fragments starting at rs1 and rs2, C and D binary32 fragments at rs3 and rd; tile MMA_M x MMA_N x MMA_K.",
        cap = Mma
    ),
    op!(
        0xA1,
        "mma_bf16_f32",
        Extended,
        Mma,
        TERNARY,
        "6.14",
        "D = A * B + C with A and B bfloat16, C and D binary32.",
        cap = Mma
    ),
    op!(
        0xA2,
        "mma_f32_f32",
        Extended,
        Mma,
        TERNARY,
        "6.14",
        "D = A * B + C, all binary32.",
        cap = Mma
    ),
    // Miscellaneous (6.15).
    op!(0xF0, "mov", Base, Misc, UNARY, "6.15", "rd = rs1."),
    op!(
        0xF1,
        "mov_imm",
        Extended,
        Misc,
        MOV_IMM,
        "6.15",
        "rd = imm32 (any bit pattern; float literals give their binary32 bits)."
    ),
    op!(
        0xF2,
        "mov_special",
        Base,
        Misc,
        MOV_SPECIAL,
        "6.15",
        "rd = a special register (rs1 selects which).",
        aliases = &[("mov_sr", &[])]
    ),
    op!(0xF3, "nop", Base, Misc, NONE, "6.15", "No operation."),
];

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

use crate::flags::{self, Flow};
use crate::{Capability, Category, Format, Opcode};

pub use crate::forms::*;

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

/// The opcodes that are not in the spec's Appendix A: the reference toolchain's v0.4 BF16
/// operations and conversions (docs/isa/deviations.md, item 21).
pub const EXTENSIONS: [Opcode; 9] = [
    Opcode::CvtF32Bf16,
    Opcode::CvtBf16F32,
    Opcode::Badd,
    Opcode::Bsub,
    Opcode::Bmul,
    Opcode::Bma,
    Opcode::Badd2,
    Opcode::Bmul2,
    Opcode::Bma2,
];

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
/// The bitwise ones are named as Appendix A names them (`and_bits`), the canonical spelling;
/// the short names after them are aliases (the first name of a value is the one printed).
pub const REDUCTIONS: &[(&str, u8)] = &[
    ("add", 8),
    ("min", 9),
    ("max", 10),
    ("and_bits", 11),
    ("or_bits", 12),
    ("xor_bits", 13),
    ("and", 11),
    ("or", 12),
    ("xor", 13),
];

const ALL_ATOMIC: &[AtomicType] =
    &[AtomicType::U32, AtomicType::I32, AtomicType::F32, AtomicType::U64, AtomicType::I64];
const INT_ATOMIC: &[AtomicType] =
    &[AtomicType::U32, AtomicType::I32, AtomicType::U64, AtomicType::I64];
const BIT_ATOMIC: &[AtomicType] = &[AtomicType::U32, AtomicType::U64];

macro_rules! op {
    ($op:ident, $fmt:ident, $cat:ident, $ops:expr, $sec:literal, $sum:literal
     $(, modifier = $m:expr)? $(, scope = $s:expr)? $(, predicable = $p:expr)?
     $(, cap = $c:ident)? $(, aliases = $a:expr)? $(, flags = $f:expr)? $(,)?) => {
        OpInfo {
            op: Opcode::$op,
            opcode: Opcode::$op as u8,
            mnemonic: Opcode::$op.mnemonic(),
            format: Format::$fmt,
            category: Category::$cat,
            operands: $ops,
            modifier: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let m = Modifier::None; $(let m = $m;)? m },
            scope: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let s = ScopeUse::None; $(let s = $s;)? s },
            predicable: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let p = true; $(let p = $p;)? p },
            capability: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let c: Option<Capability> = None; $(let c = Some(Capability::$c);)? c },
            aliases: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let a: &[(&str, &[&str])] = &[]; $(let a: &[(&str, &[&str])] = $a;)? a },
            flags: { #[allow(unused_variables, reason = "the default, shadowed when the row gives its own")] let f = flags::PURE; $(let f = $f;)? f },
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
    op!(Iadd, Base, Integer, BIN_INT, "6.2", "rd = rs1 + rs2, wrapping on overflow."),
    op!(Isub, Base, Integer, BIN_INT, "6.2", "rd = rs1 - rs2, wrapping on overflow."),
    op!(
        Imul,
        Base,
        Integer,
        BIN_INT,
        "6.2",
        "rd = (rs1 * rs2) & 0xFFFFFFFF: the low 32 bits of the product."
    ),
    op!(
        ImulHi,
        Base,
        Integer,
        BIN_INT,
        "6.2",
        "rd = (rs1 * rs2) >> 32: the high 32 bits of the signed 64-bit product."
    ),
    op!(Imad, Extended, Integer, TERNARY, "6.2", "rd = rs1 * rs2 + rs3, wrapping."),
    op!(
        Idiv,
        Base,
        Integer,
        BIN_INT,
        "6.2",
        "rd = rs1 / rs2, signed, rounding toward zero. Division by zero is undefined behaviour."
    ),
    op!(
        Imod,
        Base,
        Integer,
        BIN_INT,
        "6.2",
        "rd = rs1 % rs2, signed, with the sign of rs1. Division by zero is undefined behaviour."
    ),
    op!(Ineg, Base, Integer, UNARY, "6.2", "rd = -rs1, wrapping (-(-2^31) = -2^31)."),
    op!(Iabs, Base, Integer, UNARY, "6.2", "rd = abs(rs1), wrapping (abs(-2^31) = -2^31)."),
    op!(Imin, Base, Integer, BIN_INT, "6.2", "rd = min(rs1, rs2), signed."),
    op!(Imax, Base, Integer, BIN_INT, "6.2", "rd = max(rs1, rs2), signed."),
    op!(
        Iclamp,
        Extended,
        Integer,
        TERNARY,
        "6.2",
        "rd = clamp(rs1, rs2, rs3) = min(max(rs1, rs2), rs3), signed."
    ),
    op!(Umin, Base, Integer, BIN_INT, "6.2", "rd = min(rs1, rs2), unsigned."),
    op!(Umax, Base, Integer, BIN_INT, "6.2", "rd = max(rs1, rs2), unsigned."),
    // Floating-point arithmetic, F32 (6.4).
    op!(
        Fadd,
        Base,
        Float,
        BIN_FLOAT,
        "6.4",
        "rd = rs1 + rs2 in IEEE binary32, round to nearest even."
    ),
    op!(Fsub, Base, Float, BIN_FLOAT, "6.4", "rd = rs1 - rs2 in binary32."),
    op!(Fmul, Base, Float, BIN_FLOAT, "6.4", "rd = rs1 * rs2 in binary32."),
    op!(Fma, Extended, Float, TERNARY, "6.4", "rd = rs1 * rs2 + rs3 with a single rounding."),
    op!(Fdiv, Base, Float, BIN_FLOAT, "6.4", "rd = rs1 / rs2 in binary32."),
    op!(Fneg, Base, Float, UNARY, "6.4", "rd = -rs1 (flips the sign bit, NaN included)."),
    op!(Fabs, Base, Float, UNARY, "6.4", "rd = abs(rs1) (clears the sign bit)."),
    op!(
        Fmin,
        Base,
        Float,
        BIN_FLOAT,
        "6.4",
        "rd = min(rs1, rs2); if one operand is NaN the other is returned."
    ),
    op!(
        Fmax,
        Base,
        Float,
        BIN_FLOAT,
        "6.4",
        "rd = max(rs1, rs2); if one operand is NaN the other is returned."
    ),
    op!(
        Fclamp,
        Extended,
        Float,
        TERNARY,
        "6.4",
        "rd = clamp(rs1, rs2, rs3) = min(max(rs1, rs2), rs3)."
    ),
    op!(Fsqrt, Base, Float, UNARY, "6.4", "rd = sqrt(rs1)."),
    op!(Frsqrt, Base, Float, UNARY, "6.4", "rd = 1 / sqrt(rs1)."),
    op!(Frcp, Base, Float, UNARY, "6.4", "rd = 1 / rs1."),
    op!(
        Fround,
        Base,
        Float,
        UNARY,
        "6.4",
        "rd = rs1 rounded to an integral value: floor, ceil, round (to nearest, ties to even) or trunc.",
        modifier = named(ROUND_MODES, Some(2)),
        aliases = &[("ffloor", &["floor"]), ("fceil", &["ceil"]), ("ftrunc", &["trunc"])]
    ),
    op!(
        Ffract,
        Base,
        Float,
        UNARY,
        "6.4",
        "rd = rs1 - floor(rs1), in [0, 1): where the subtraction rounds up to 1.0 (tiny negative rs1) the result is the largest binary32 below 1."
    ),
    op!(
        Ftransc,
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
    op!(And, Base, Bitwise, BIN_INT, "6.3", "rd = rs1 & rs2."),
    op!(Or, Base, Bitwise, BIN_INT, "6.3", "rd = rs1 | rs2."),
    op!(Xor, Base, Bitwise, BIN_INT, "6.3", "rd = rs1 ^ rs2."),
    op!(Not, Base, Bitwise, UNARY, "6.3", "rd = ~rs1."),
    op!(
        Shift,
        Base,
        Bitwise,
        BIN_INT,
        "6.3",
        "rd = rs1 shifted by (rs2 & 0x1F): shl left, shr logical right, sar arithmetic right.",
        modifier = named(SHIFTS, None),
        aliases = &[("shl", &["shl"]), ("shr", &["shr"]), ("sar", &["sar"])]
    ),
    op!(
        Bitop,
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
        Bfe,
        Extended,
        Bitwise,
        TERNARY,
        "6.3",
        "Bit field extract: rd = (rs1 >> (rs2 & 31)) & ((1 << w) - 1) with w = min(rs3 & 0xFF, 32), zero-extended."
    ),
    op!(
        Bfi,
        Extended,
        Bitwise,
        QUATERNARY,
        "6.3",
        "Bit field insert: rd = rs2 with the w = min(rs4 & 0xFF, 32) bits at offset (rs3 & 31) replaced by the low bits of rs1."
    ),
    // Comparison and select (6.8).
    op!(
        Icmp,
        Base,
        Compare,
        CMP_INT,
        "6.8",
        "pd = rs1 <cond> rs2, signed; cond is eq, ne, lt, le, gt or ge.",
        modifier = named(ICMP_CONDITIONS, None)
    ),
    op!(
        Ucmp,
        Base,
        Compare,
        CMP_INT,
        "6.8",
        "pd = rs1 <cond> rs2, unsigned; cond is lt or le.",
        modifier = named(UCMP_CONDITIONS, None)
    ),
    op!(
        Fcmp,
        Base,
        Compare,
        CMP_FLOAT,
        "6.8",
        "pd = rs1 <cond> rs2 in binary32; eq, lt, le, gt are false on NaN, ne is true on NaN, ord is true when neither is NaN, unord when either is.",
        modifier = named(FCMP_CONDITIONS, None)
    ),
    op!(
        Select,
        Base,
        Compare,
        SELECT,
        "6.8",
        "rd = ps ? rs1 : rs2.",
        modifier = Modifier::PredSrc,
        flags = flags::COPY,
    ),
    op!(
        Fsat,
        Base,
        Compare,
        UNARY,
        "6.4",
        "rd = clamp(rs1, 0.0, 1.0) with the fmin/fmax rules: NaN and -0.0 give +0.0."
    ),
    // Local memory (6.9).
    op!(
        LocalLoad,
        Base,
        LocalMemory,
        LOAD,
        "6.9",
        "rd = Local Memory at [rs1 + offset], zero-extended; u64 fills a register pair.",
        modifier = named(LOCAL_WIDTHS, None),
        flags = flags::LOAD,
    ),
    op!(
        LocalStore,
        Base,
        LocalMemory,
        STORE,
        "6.9",
        "Local Memory at [rs1 + offset] = the low bits of rs2 (a pair for u64).",
        modifier = named(LOCAL_WIDTHS, None),
        flags = flags::STORE,
    ),
    // Device memory (6.9).
    op!(
        DeviceLoad,
        Base,
        DeviceMemory,
        LOAD,
        "6.9",
        "rd = Device Memory at [rs1 + offset], zero-extended; u64 fills a pair, u128 four registers. Asynchronous: use wait or a fence before relying on ordering with other threads.",
        modifier = named(DEVICE_WIDTHS, None),
        scope = ScopeUse::CacheHint,
        flags = flags::LOAD,
    ),
    op!(
        DeviceStore,
        Base,
        DeviceMemory,
        STORE,
        "6.9",
        "Device Memory at [rs1 + offset] = the low bits of rs2 (a pair for u64, four registers for u128).",
        modifier = named(DEVICE_WIDTHS, None),
        scope = ScopeUse::CacheHint,
        flags = flags::STORE,
    ),
    // Atomics (4.5, 6.10).
    op!(
        AtomicAdd,
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] += rs2 at the given scope; rd receives the old value (rd = r0: non-returning).",
        modifier = Modifier::Atomic { types: ALL_ATOMIC },
        scope = ScopeUse::Scope,
        flags = flags::ATOMIC,
    ),
    op!(
        AtomicSub,
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] -= rs2; rd receives the old value (rd = r0: non-returning).",
        modifier = Modifier::Atomic { types: INT_ATOMIC },
        scope = ScopeUse::Scope,
        flags = flags::ATOMIC,
    ),
    op!(
        AtomicMin,
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] = min([rs1], rs2), signed for i32/i64; rd receives the old value.",
        modifier = Modifier::Atomic { types: INT_ATOMIC },
        scope = ScopeUse::Scope,
        flags = flags::ATOMIC,
    ),
    op!(
        AtomicMax,
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] = max([rs1], rs2), signed for i32/i64; rd receives the old value.",
        modifier = Modifier::Atomic { types: INT_ATOMIC },
        scope = ScopeUse::Scope,
        flags = flags::ATOMIC,
    ),
    op!(
        AtomicAnd,
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] &= rs2; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope,
        flags = flags::ATOMIC,
    ),
    op!(
        AtomicOr,
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] |= rs2; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope,
        flags = flags::ATOMIC,
    ),
    op!(
        AtomicXor,
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically [rs1] ^= rs2; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope,
        flags = flags::ATOMIC,
    ),
    op!(
        AtomicExchange,
        Extended,
        Atomic,
        ATOMIC,
        "6.10",
        "Atomically swaps [rs1] and rs2; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope,
        aliases = &[("atomic_exch", &[]), ("atomic_swap", &[])],
        flags = flags::ATOMIC,
    ),
    op!(
        AtomicCas,
        Extended,
        Atomic,
        ATOMIC_CAS,
        "6.10",
        "Atomically: if [rs1] == rs2 then [rs1] = rs3; rd receives the old value.",
        modifier = Modifier::Atomic { types: BIT_ATOMIC },
        scope = ScopeUse::Scope,
        aliases = &[("atomic_compare_swap", &[])],
        flags = flags::ATOMIC,
    ),
    // Wave operations (6.11).
    op!(
        WaveShuffle,
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane rs2. A source lane that is out of range or inactive gives rd's own rs1 (see docs/isa/deviations.md).",
        flags = flags::SHUFFLE,
    ),
    op!(
        WaveShuffleUp,
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane (lane_id - rs2).",
        flags = flags::SHUFFLE
    ),
    op!(
        WaveShuffleDown,
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane (lane_id + rs2).",
        flags = flags::SHUFFLE,
    ),
    op!(
        WaveShuffleXor,
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane (lane_id ^ rs2).",
        flags = flags::SHUFFLE
    ),
    op!(
        WaveBroadcast,
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane rs2 (uniform lane), in every active thread.",
        flags = flags::SHUFFLE,
    ),
    op!(
        WaveBallot,
        Base,
        Wave,
        BALLOT,
        "6.11",
        "rd = bit mask of ps across the active threads (bit i is lane i).",
        modifier = Modifier::PredSrc,
        flags = flags::WAVE,
    ),
    op!(
        WaveAny,
        Base,
        Wave,
        VOTE,
        "6.11",
        "pd = true if ps holds in any active thread.",
        modifier = Modifier::PredSrc,
        flags = flags::WAVE,
    ),
    op!(
        WaveAll,
        Base,
        Wave,
        VOTE,
        "6.11",
        "pd = true if ps holds in every active thread.",
        modifier = Modifier::PredSrc,
        flags = flags::WAVE,
    ),
    op!(
        WavePrefixSum,
        Base,
        Wave,
        UNARY,
        "6.11",
        "rd = sum of rs1 over the active lanes below this one (exclusive prefix sum, wrapping).",
        flags = flags::WAVE,
    ),
    op!(
        WaveReduce,
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
            ("wave_reduce_and_bits", &["and_bits"]),
            ("wave_reduce_or_bits", &["or_bits"]),
            ("wave_reduce_xor_bits", &["xor_bits"]),
            ("wave_reduce_and", &["and_bits"]),
            ("wave_reduce_or", &["or_bits"]),
            ("wave_reduce_xor", &["xor_bits"])
        ],
        flags = flags::WAVE,
    ),
    op!(
        WaveShuffleIdx,
        Base,
        Wave,
        SHUFFLE,
        "6.11",
        "rd = rs1 of lane rs2 (arbitrary index shuffle), the same rule for inactive or out-of-range sources as wave_shuffle.",
        flags = flags::SHUFFLE,
    ),
    // Control flow and synchronisation (5.1, 6.12, 6.13).
    op!(
        If,
        Base,
        Control,
        PRED_ONLY,
        "5.1",
        "Begins a conditional block: threads where ps is false become inactive until else or endif.",
        modifier = Modifier::PredSrc,
        predicable = false,
        flags = flags::flow(Flow::If),
    ),
    op!(
        Else,
        Base,
        Control,
        NONE,
        "5.1",
        "Switches to the threads that were active at the if and had ps false.",
        predicable = false,
        flags = flags::flow(Flow::Else),
    ),
    op!(
        Endif,
        Base,
        Control,
        NONE,
        "5.1",
        "Ends a conditional block: the threads active before the if are active again.",
        predicable = false,
        flags = flags::flow(Flow::Endif),
    ),
    op!(
        Loop,
        Base,
        Control,
        NONE,
        "5.1",
        "Begins a loop.",
        predicable = false,
        flags = flags::flow(Flow::Loop)
    ),
    op!(
        Break,
        Base,
        Control,
        PRED_ONLY,
        "5.1",
        "Threads where ps holds (or, with !ps, does not hold) leave the loop, in this iteration.",
        modifier = Modifier::PredSrc,
        predicable = false,
        flags = flags::flow(Flow::Break),
    ),
    op!(
        Continue,
        Base,
        Control,
        PRED_ONLY,
        "5.1",
        "Threads where ps holds skip to the next iteration.",
        modifier = Modifier::PredSrc,
        predicable = false,
        flags = flags::flow(Flow::Continue),
    ),
    op!(
        Endloop,
        Base,
        Control,
        NONE,
        "5.1",
        "Ends the loop body: branches back to loop while any thread remains in the loop.",
        predicable = false,
        flags = flags::flow(Flow::Endloop),
    ),
    op!(
        Call,
        Extended,
        Control,
        CALL,
        "5.1",
        "Calls the function at the label; the extension word holds its byte offset in the code section.",
        predicable = false,
        flags = flags::CALL,
    ),
    op!(
        Return,
        Base,
        Control,
        NONE,
        "5.1",
        "Returns from the current function.",
        predicable = false,
        flags = flags::flow(Flow::Return),
    ),
    op!(
        Barrier,
        Base,
        Control,
        NONE,
        "6.12",
        "Workgroup barrier: every wave of the workgroup reaches it before any proceeds; memory operations before it are visible to the workgroup after it. Must not be reached in divergent control flow.",
        predicable = false,
        flags = flags::SYNC,
    ),
    op!(
        Fence,
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
        ],
        flags = flags::SYNC,
    ),
    op!(
        Wait,
        Base,
        Control,
        NONE,
        "6.9",
        "Waits until this thread's outstanding device loads have completed.",
        flags = flags::SYNC,
    ),
    op!(Halt, Base, Control, NONE, "5.1", "Terminates the executing threads.", flags = flags::HALT),
    // Conversions (6.7).
    op!(
        CvtF32I32,
        Base,
        Convert,
        UNARY,
        "6.7",
        "rd = (f32) rs1 as a signed integer, round to nearest even."
    ),
    op!(CvtF32U32, Base, Convert, UNARY, "6.7", "rd = (f32) rs1 as an unsigned integer."),
    op!(
        CvtI32F32,
        Base,
        Convert,
        UNARY,
        "6.7",
        "rd = (i32) rs1 rounded toward zero, saturating; NaN gives 0."
    ),
    op!(
        CvtU32F32,
        Base,
        Convert,
        UNARY,
        "6.7",
        "rd = (u32) rs1 rounded toward zero, saturating; NaN gives 0."
    ),
    op!(
        CvtF32F16,
        Base,
        Convert,
        CVT_FROM_HALF,
        "6.7",
        "rd = the binary16 half rs1.lo or rs1.hi widened to binary32.",
        modifier = Modifier::Halves
    ),
    op!(
        CvtF16F32,
        Base,
        Convert,
        CVT_TO_HALF,
        "6.7",
        "rd.lo or rd.hi = rs1 narrowed to binary16 (round to nearest even); the other half is kept.",
        modifier = Modifier::Halves
    ),
    op!(
        CvtF32F64,
        Base,
        Convert,
        CVT_FROM_PAIR,
        "6.7",
        "rd = the binary64 pair rs1 narrowed to binary32.",
        cap = F64
    ),
    op!(
        CvtF64F32,
        Base,
        Convert,
        CVT_TO_PAIR,
        "6.7",
        "rd pair = rs1 widened to binary64.",
        cap = F64
    ),
    op!(
        CvtF32Bf16,
        Base,
        Convert,
        CVT_FROM_HALF,
        "6.7",
        "rd = the bfloat16 half rs1.lo or rs1.hi widened to binary32 (exact). An extension: the reference toolchain's v0.4.",
        modifier = Modifier::Halves
    ),
    op!(
        CvtBf16F32,
        Base,
        Convert,
        CVT_TO_HALF,
        "6.7",
        "rd.lo or rd.hi = rs1 narrowed to bfloat16 (round to nearest even); the other half is kept. An extension: the reference toolchain's v0.4.",
        modifier = Modifier::Halves
    ),
    // F16 (6.5).
    op!(
        Hadd,
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half + rs2 half in binary16; the other half of rd is kept.",
        modifier = Modifier::Halves
    ),
    op!(
        Hsub,
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half - rs2 half in binary16.",
        modifier = Modifier::Halves
    ),
    op!(
        Hmul,
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half * rs2 half in binary16.",
        modifier = Modifier::Halves
    ),
    op!(
        Hma,
        Extended,
        F16,
        HALF_TERN,
        "6.5",
        "rd half = rs1 half * rs2 half + rs3 half with a single rounding.",
        modifier = Modifier::Halves
    ),
    op!(
        Hadd2,
        Base,
        F16,
        PACKED_BIN,
        "6.5",
        "Both halves: rd.lo = rs1.lo + rs2.lo, rd.hi = rs1.hi + rs2.hi in binary16."
    ),
    op!(Hmul2, Base, F16, PACKED_BIN, "6.5", "Both halves multiplied in binary16."),
    op!(
        Hma2,
        Extended,
        F16,
        TERNARY,
        "6.5",
        "Both halves: rd.x = rs1.x * rs2.x + rs3.x with a single rounding."
    ),
    // BF16 (an extension: the reference toolchain's v0.4), on register halves like F16.
    op!(
        Badd,
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half + rs2 half in bfloat16 (rounded once, to nearest even); the other half of rd is kept.",
        modifier = Modifier::Halves
    ),
    op!(
        Bsub,
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half - rs2 half in bfloat16.",
        modifier = Modifier::Halves
    ),
    op!(
        Bmul,
        Base,
        F16,
        HALF_BIN,
        "6.5",
        "rd half = rs1 half * rs2 half in bfloat16.",
        modifier = Modifier::Halves
    ),
    op!(
        Bma,
        Extended,
        F16,
        HALF_TERN,
        "6.5",
        "rd half = rs1 half * rs2 half + rs3 half in bfloat16 with a single rounding.",
        modifier = Modifier::Halves
    ),
    op!(
        Badd2,
        Base,
        F16,
        PACKED_BIN,
        "6.5",
        "Both halves: rd.lo = rs1.lo + rs2.lo, rd.hi = rs1.hi + rs2.hi in bfloat16."
    ),
    op!(Bmul2, Base, F16, PACKED_BIN, "6.5", "Both halves multiplied in bfloat16."),
    op!(
        Bma2,
        Extended,
        F16,
        TERNARY,
        "6.5",
        "Both halves: rd.x = rs1.x * rs2.x + rs3.x in bfloat16 with a single rounding."
    ),
    // F64 (6.6), optional.
    op!(
        Dadd,
        Base,
        F64,
        PAIR_BIN,
        "6.6",
        "rd = rs1 + rs2 in binary64 on register pairs.",
        cap = F64
    ),
    op!(Dsub, Base, F64, PAIR_BIN, "6.6", "rd = rs1 - rs2 in binary64.", cap = F64),
    op!(Dmul, Base, F64, PAIR_BIN, "6.6", "rd = rs1 * rs2 in binary64.", cap = F64),
    op!(
        Dma,
        Extended,
        F64,
        PAIR_TERN,
        "6.6",
        "rd = rs1 * rs2 + rs3 in binary64 with a single rounding.",
        cap = F64
    ),
    op!(Ddiv, Base, F64, PAIR_BIN, "6.6", "rd = rs1 / rs2 in binary64.", cap = F64),
    op!(Dsqrt, Base, F64, PAIR_UNARY, "6.6", "rd = sqrt(rs1) in binary64.", cap = F64),
    // Matrix multiply-accumulate (6.14), optional.
    op!(
        MmaF16F32,
        Extended,
        Mma,
        TERNARY,
        "6.14",
        "D = A * B + C over the wave: A and B binary16 fragments starting at rs1 and rs2, C and D binary32 fragments at rs3 and rd; tile MMA_M x MMA_N x MMA_K.",
        cap = Mma
    ),
    op!(
        MmaBf16F32,
        Extended,
        Mma,
        TERNARY,
        "6.14",
        "D = A * B + C with A and B bfloat16, C and D binary32.",
        cap = Mma
    ),
    op!(MmaF32F32, Extended, Mma, TERNARY, "6.14", "D = A * B + C, all binary32.", cap = Mma),
    // Miscellaneous (6.15).
    op!(Mov, Base, Misc, UNARY, "6.15", "rd = rs1.", flags = flags::COPY),
    op!(
        MovImm,
        Extended,
        Misc,
        MOV_IMM,
        "6.15",
        "rd = imm32 (any bit pattern; float literals give their binary32 bits).",
        flags = flags::COPY,
    ),
    op!(
        MovSpecial,
        Base,
        Misc,
        MOV_SPECIAL,
        "6.15",
        "rd = a special register (rs1 selects which).",
        aliases = &[("mov_sr", &[])],
        flags = flags::VARYING,
    ),
    op!(Nop, Base, Misc, NONE, "6.15", "No operation."),
];

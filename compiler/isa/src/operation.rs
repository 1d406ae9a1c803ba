//! What an instruction does, with its sub-operation resolved from the mnemonic and modifier:
//! the one decoding that the emulator, the backends and editor features share.
//!
//! The operands stay in [`Inst`] (`rd`, `rs1`, `rs2`, the extension word); an [`Operation`]
//! says which computation they take part in. Sub-operations selected by the modifier
//! (`shift.shl`, `fround.floor`, `ftransc.sin`, the comparison of `icmp`, the operation of
//! `wave_reduce`, the type and memory of an atomic) are separate variants or fields, so a
//! consumer matches once and never decodes modifier bits itself.

use crate::subop::{AtomicOp, FloatCond, IntCond, MemWidth, ReduceOp, Shuffle, UintCond};
use crate::{AtomicType, Category, Inst, Opcode};

/// What an instruction does, with the sub-operation its modifier selects as a type
/// ([`crate::subop`]). `Atomic(op, type, local)`: `local` for Local Memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs, reason = "each variant is the instruction of the same name")]
pub enum Operation {
    Iadd,
    Isub,
    Imul,
    ImulHi,
    Imad,
    Idiv,
    Imod,
    Ineg,
    Iabs,
    Imin,
    Imax,
    Iclamp,
    Umin,
    Umax,
    Fadd,
    Fsub,
    Fmul,
    Fma,
    Fdiv,
    Fneg,
    Fabs,
    Fmin,
    Fmax,
    Fclamp,
    Fsqrt,
    Frsqrt,
    Frcp,
    Ffloor,
    Fceil,
    Fround,
    Ftrunc,
    Ffract,
    Fsin,
    Fcos,
    Fexp2,
    Flog2,
    And,
    Or,
    Xor,
    Not,
    Shl,
    Shr,
    Sar,
    Bitcount,
    Bitfind,
    Bitrev,
    Bfe,
    Bfi,
    Icmp(IntCond),
    Ucmp(UintCond),
    Fcmp(FloatCond),
    Select,
    Fsat,
    LocalLoad(MemWidth),
    LocalStore(MemWidth),
    DeviceLoad(MemWidth),
    DeviceStore(MemWidth),
    /// Operation, type, Local Memory.
    Atomic(AtomicOp, AtomicType, bool),
    /// The shuffles and `wave_broadcast`, by the lane they read.
    Shuffle(Shuffle),
    Ballot,
    Any,
    All,
    PrefixSum,
    Reduce(ReduceOp),
    If,
    Else,
    Endif,
    Loop,
    Break,
    Continue,
    Endloop,
    Call,
    Return,
    Barrier,
    Fence,
    Wait,
    Halt,
    CvtF32I32,
    CvtF32U32,
    CvtI32F32,
    CvtU32F32,
    CvtF32F16,
    CvtF16F32,
    CvtF32F64,
    CvtF64F32,
    CvtF32Bf16,
    CvtBf16F32,
    Hadd,
    Hsub,
    Hmul,
    Hma,
    Hadd2,
    Hmul2,
    Hma2,
    Badd,
    Bsub,
    Bmul,
    Bma,
    Badd2,
    Bmul2,
    Bma2,
    Dadd,
    Dsub,
    Dmul,
    Dma,
    Ddiv,
    Dsqrt,
    Mma,
    Mov,
    MovSpecial,
    Nop,
}

impl Operation {
    /// The operation of `inst`, or `None` when its opcode is not in the table or its
    /// modifier names no sub-operation.
    pub fn of(inst: &Inst) -> Option<Operation> {
        of(Opcode::from_u8(inst.opcode)?, inst)
    }
}

/// The atomics' modifier bit for Local Memory (bits 2:0 are the type).
pub const ATOMIC_LOCAL: u8 = 8;

impl Inst {
    /// The memory it reads or writes: its row's for loads and stores, its modifier's for an
    /// atomic; `None` for the rest (a fence orders memory but accesses none, a call's callee
    /// accesses what it does).
    pub fn space(&self) -> Option<Space> {
        match self.info()?.category {
            Category::LocalMemory => Some(Space::Local),
            Category::DeviceMemory => Some(Space::Device),
            Category::Atomic if self.modifier & ATOMIC_LOCAL != 0 => Some(Space::Local),
            Category::Atomic => Some(Space::Device),
            Category::Integer
            | Category::Float
            | Category::Bitwise
            | Category::Compare
            | Category::Wave
            | Category::Control
            | Category::Convert
            | Category::F16
            | Category::F64
            | Category::Mma
            | Category::Misc => None,
        }
    }
}

/// A memory an instruction accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// The workgroup's Local Memory.
    Local,
    /// Device Memory.
    Device,
}

fn of(opcode: Opcode, inst: &Inst) -> Option<Operation> {
    let m = inst.modifier;
    let atomic = |op: AtomicOp| {
        Operation::Atomic(
            op,
            AtomicType::from_bits(m & 7).unwrap_or(AtomicType::U32),
            m & ATOMIC_LOCAL != 0,
        )
    };
    Some(match opcode {
        Opcode::Iadd => Operation::Iadd,
        Opcode::Isub => Operation::Isub,
        Opcode::Imul => Operation::Imul,
        Opcode::ImulHi => Operation::ImulHi,
        Opcode::Imad => Operation::Imad,
        Opcode::Idiv => Operation::Idiv,
        Opcode::Imod => Operation::Imod,
        Opcode::Ineg => Operation::Ineg,
        Opcode::Iabs => Operation::Iabs,
        Opcode::Imin => Operation::Imin,
        Opcode::Imax => Operation::Imax,
        Opcode::Iclamp => Operation::Iclamp,
        Opcode::Umin => Operation::Umin,
        Opcode::Umax => Operation::Umax,
        Opcode::Fadd => Operation::Fadd,
        Opcode::Fsub => Operation::Fsub,
        Opcode::Fmul => Operation::Fmul,
        Opcode::Fma => Operation::Fma,
        Opcode::Fdiv => Operation::Fdiv,
        Opcode::Fneg => Operation::Fneg,
        Opcode::Fabs => Operation::Fabs,
        Opcode::Fmin => Operation::Fmin,
        Opcode::Fmax => Operation::Fmax,
        Opcode::Fclamp => Operation::Fclamp,
        Opcode::Fsqrt => Operation::Fsqrt,
        Opcode::Frsqrt => Operation::Frsqrt,
        Opcode::Frcp => Operation::Frcp,
        Opcode::Fround => {
            [Operation::Ffloor, Operation::Fceil, Operation::Fround, Operation::Ftrunc]
                [usize::from(m & 3)]
        }
        Opcode::Ffract => Operation::Ffract,
        Opcode::Ftransc => [Operation::Fsin, Operation::Fcos, Operation::Fexp2, Operation::Flog2]
            [usize::from(m & 3)],
        Opcode::And => Operation::And,
        Opcode::Or => Operation::Or,
        Opcode::Xor => Operation::Xor,
        Opcode::Not => Operation::Not,
        Opcode::Shift => {
            [Operation::Shl, Operation::Shr, Operation::Sar, Operation::Sar][usize::from(m & 3)]
        }
        Opcode::Bitop => {
            [Operation::Bitcount, Operation::Bitfind, Operation::Bitrev, Operation::Bitrev]
                [usize::from(m & 3)]
        }
        Opcode::Bfe => Operation::Bfe,
        Opcode::Bfi => Operation::Bfi,
        Opcode::Icmp => Operation::Icmp(IntCond::from_bits(m)?),
        Opcode::Ucmp => Operation::Ucmp(UintCond::from_bits(m)?),
        Opcode::Fcmp => Operation::Fcmp(FloatCond::from_bits(m)?),
        Opcode::Select => Operation::Select,
        Opcode::Fsat => Operation::Fsat,
        Opcode::LocalLoad => Operation::LocalLoad(MemWidth::from_bits(m)?),
        Opcode::LocalStore => Operation::LocalStore(MemWidth::from_bits(m)?),
        Opcode::DeviceLoad => Operation::DeviceLoad(MemWidth::from_bits(m)?),
        Opcode::DeviceStore => Operation::DeviceStore(MemWidth::from_bits(m)?),
        Opcode::WaveShuffle | Opcode::WaveShuffleIdx => Operation::Shuffle(Shuffle::Index),
        Opcode::WaveShuffleUp => Operation::Shuffle(Shuffle::Up),
        Opcode::WaveShuffleDown => Operation::Shuffle(Shuffle::Down),
        Opcode::WaveShuffleXor => Operation::Shuffle(Shuffle::Xor),
        Opcode::WaveBroadcast => Operation::Shuffle(Shuffle::Broadcast),
        Opcode::WaveBallot => Operation::Ballot,
        Opcode::WaveAny => Operation::Any,
        Opcode::WaveAll => Operation::All,
        Opcode::WavePrefixSum => Operation::PrefixSum,
        Opcode::WaveReduce => Operation::Reduce(ReduceOp::from_bits(m.wrapping_sub(8))?),
        Opcode::If => Operation::If,
        Opcode::Else => Operation::Else,
        Opcode::Endif => Operation::Endif,
        Opcode::Loop => Operation::Loop,
        Opcode::Break => Operation::Break,
        Opcode::Continue => Operation::Continue,
        Opcode::Endloop => Operation::Endloop,
        Opcode::Call => Operation::Call,
        Opcode::Return => Operation::Return,
        Opcode::Barrier => Operation::Barrier,
        Opcode::Fence => Operation::Fence,
        Opcode::Wait => Operation::Wait,
        Opcode::Halt => Operation::Halt,
        Opcode::CvtF32I32 => Operation::CvtF32I32,
        Opcode::CvtF32U32 => Operation::CvtF32U32,
        Opcode::CvtI32F32 => Operation::CvtI32F32,
        Opcode::CvtU32F32 => Operation::CvtU32F32,
        Opcode::CvtF32F16 => Operation::CvtF32F16,
        Opcode::CvtF16F32 => Operation::CvtF16F32,
        Opcode::CvtF32F64 => Operation::CvtF32F64,
        Opcode::CvtF64F32 => Operation::CvtF64F32,
        Opcode::CvtF32Bf16 => Operation::CvtF32Bf16,
        Opcode::CvtBf16F32 => Operation::CvtBf16F32,
        Opcode::Hadd => Operation::Hadd,
        Opcode::Hsub => Operation::Hsub,
        Opcode::Hmul => Operation::Hmul,
        Opcode::Hma => Operation::Hma,
        Opcode::Hadd2 => Operation::Hadd2,
        Opcode::Hmul2 => Operation::Hmul2,
        Opcode::Hma2 => Operation::Hma2,
        Opcode::Badd => Operation::Badd,
        Opcode::Bsub => Operation::Bsub,
        Opcode::Bmul => Operation::Bmul,
        Opcode::Bma => Operation::Bma,
        Opcode::Badd2 => Operation::Badd2,
        Opcode::Bmul2 => Operation::Bmul2,
        Opcode::Bma2 => Operation::Bma2,
        Opcode::Dadd => Operation::Dadd,
        Opcode::Dsub => Operation::Dsub,
        Opcode::Dmul => Operation::Dmul,
        Opcode::Dma => Operation::Dma,
        Opcode::Ddiv => Operation::Ddiv,
        Opcode::Dsqrt => Operation::Dsqrt,
        Opcode::MmaF16F32 | Opcode::MmaBf16F32 | Opcode::MmaF32F32 => Operation::Mma,
        Opcode::Mov | Opcode::MovImm => Operation::Mov,
        Opcode::MovSpecial => Operation::MovSpecial,
        Opcode::Nop => Operation::Nop,
        Opcode::AtomicAdd => atomic(AtomicOp::Add),
        Opcode::AtomicSub => atomic(AtomicOp::Sub),
        Opcode::AtomicMin => atomic(AtomicOp::Min),
        Opcode::AtomicMax => atomic(AtomicOp::Max),
        Opcode::AtomicAnd => atomic(AtomicOp::And),
        Opcode::AtomicOr => atomic(AtomicOp::Or),
        Opcode::AtomicXor => atomic(AtomicOp::Xor),
        Opcode::AtomicExchange => atomic(AtomicOp::Exchange),
        Opcode::AtomicCas => atomic(AtomicOp::Cas),
    })
}

//! What the backends do with each instruction: the one `match` that names every
//! [`Operation`] and sorts it into the part of a writer that prints it.
//!
//! `structure` and `lower` turn control flow and barriers into blocks and statements, so a
//! writer's per-instruction code sees only data instructions (each under its guard) and wave
//! operations (run converged, with a flag saying which lanes take part). A wave operation
//! arrives as a [`WaveOp`], which names only the wave operations, so the wave room of each
//! writer matches it without a catch-all arm. A new operation stops the build here until it
//! is given a kind, and then in every `match` that must learn it.

use wave_isa::{Operation, ReduceOp};

/// How the backends treat an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Computes into registers, predicates or memory in its own lane, under its guard:
    /// arithmetic, comparisons, loads, stores, atomics, fences, conversions, moves.
    Data,
    /// Reads other lanes of the wave.
    Wave(WaveOp),
    /// `barrier`: a statement of its own (`Stmt::Barrier`).
    Barrier,
    /// Changes where control goes (its row's `Flow` is not `Next`): `if`, `else`, `endif`,
    /// `loop`, `break`, `continue`, `endloop`, `call`, `return`, `halt`.
    Control,
}

/// A wave operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaveOp {
    /// A shuffle or `wave_broadcast`: each lane reads one lane of `rs1`.
    Shuffle(Shuffle),
    /// `wave_ballot`
    Ballot,
    /// `wave_any`
    Any,
    /// `wave_all`
    All,
    /// `wave_prefix_sum`
    PrefixSum,
    /// `wave_reduce`
    Reduce(ReduceOp),
}

/// The lane a shuffle reads (the ISA's own type).
pub(crate) use wave_isa::Shuffle;

impl Kind {
    /// The kind of `op`.
    pub(crate) fn of(op: Operation) -> Kind {
        match op {
            Operation::Shuffle(from) => Kind::Wave(WaveOp::Shuffle(from)),
            Operation::Ballot => Kind::Wave(WaveOp::Ballot),
            Operation::Any => Kind::Wave(WaveOp::Any),
            Operation::All => Kind::Wave(WaveOp::All),
            Operation::PrefixSum => Kind::Wave(WaveOp::PrefixSum),
            Operation::Reduce(op) => Kind::Wave(WaveOp::Reduce(op)),
            Operation::Barrier => Kind::Barrier,
            Operation::If
            | Operation::Else
            | Operation::Endif
            | Operation::Loop
            | Operation::Break
            | Operation::Continue
            | Operation::Endloop
            | Operation::Call
            | Operation::Return
            | Operation::Halt => Kind::Control,
            Operation::Iadd
            | Operation::Isub
            | Operation::Imul
            | Operation::ImulHi
            | Operation::Imad
            | Operation::Idiv
            | Operation::Imod
            | Operation::Ineg
            | Operation::Iabs
            | Operation::Imin
            | Operation::Imax
            | Operation::Iclamp
            | Operation::Umin
            | Operation::Umax
            | Operation::Fadd
            | Operation::Fsub
            | Operation::Fmul
            | Operation::Fma
            | Operation::Fdiv
            | Operation::Fneg
            | Operation::Fabs
            | Operation::Fmin
            | Operation::Fmax
            | Operation::Fclamp
            | Operation::Fsqrt
            | Operation::Frsqrt
            | Operation::Frcp
            | Operation::Ffloor
            | Operation::Fceil
            | Operation::Fround
            | Operation::Ftrunc
            | Operation::Ffract
            | Operation::Fsin
            | Operation::Fcos
            | Operation::Fexp2
            | Operation::Flog2
            | Operation::And
            | Operation::Or
            | Operation::Xor
            | Operation::Not
            | Operation::Shl
            | Operation::Shr
            | Operation::Sar
            | Operation::Bitcount
            | Operation::Bitfind
            | Operation::Bitrev
            | Operation::Bfe
            | Operation::Bfi
            | Operation::Icmp(_)
            | Operation::Ucmp(_)
            | Operation::Fcmp(_)
            | Operation::Select
            | Operation::Fsat
            | Operation::LocalLoad(_)
            | Operation::LocalStore(_)
            | Operation::DeviceLoad(_)
            | Operation::DeviceStore(_)
            | Operation::Atomic(..)
            | Operation::Fence
            | Operation::Wait
            | Operation::CvtF32I32
            | Operation::CvtF32U32
            | Operation::CvtI32F32
            | Operation::CvtU32F32
            | Operation::CvtF32F16
            | Operation::CvtF16F32
            | Operation::CvtF32F64
            | Operation::CvtF64F32
            | Operation::CvtF32Bf16
            | Operation::CvtBf16F32
            | Operation::Hadd
            | Operation::Hsub
            | Operation::Hmul
            | Operation::Hma
            | Operation::Hadd2
            | Operation::Hmul2
            | Operation::Hma2
            | Operation::Badd
            | Operation::Bsub
            | Operation::Bmul
            | Operation::Bma
            | Operation::Badd2
            | Operation::Bmul2
            | Operation::Bma2
            | Operation::Dadd
            | Operation::Dsub
            | Operation::Dmul
            | Operation::Dma
            | Operation::Ddiv
            | Operation::Dsqrt
            | Operation::Mma
            | Operation::Mov
            | Operation::MovSpecial
            | Operation::Nop => Kind::Data,
        }
    }
}

//! The opcode space: each primary opcode's number and canonical mnemonic, as the [`Opcode`]
//! enum that every per-opcode `match` of the toolchain is written over.
//!
//! The rest of what is known about an opcode (its format, operands, modifiers, flags, docs) is
//! its row of [`crate::OPCODES`], which names the variant. A new instruction is a variant here
//! and a row there; the compiler then points at every `match` that must learn it.

use crate::{OpInfo, info};

macro_rules! opcodes {
    ($($variant:ident = $code:literal $mnemonic:literal,)*) => {
        /// A primary opcode of WAVE v0.3 (Appendix A), by its canonical mnemonic.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Opcode {
            $(
                #[doc = concat!("`", $mnemonic, "`")]
                $variant = $code,
            )*
        }

        impl Opcode {
            /// Every opcode, in numeric order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant,)*];

            /// The canonical mnemonic (Appendix A).
            pub const fn mnemonic(self) -> &'static str {
                match self {
                    $(Opcode::$variant => $mnemonic,)*
                }
            }

            /// The opcode numbered `code`, if one is defined.
            pub const fn from_u8(code: u8) -> Option<Opcode> {
                match code {
                    $($code => Some(Opcode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

opcodes! {
    Iadd = 0x00 "iadd",
    Isub = 0x01 "isub",
    Imul = 0x02 "imul",
    ImulHi = 0x03 "imul_hi",
    Imad = 0x04 "imad",
    Idiv = 0x05 "idiv",
    Imod = 0x06 "imod",
    Ineg = 0x07 "ineg",
    Iabs = 0x08 "iabs",
    Imin = 0x09 "imin",
    Imax = 0x0A "imax",
    Iclamp = 0x0B "iclamp",
    Umin = 0x0C "umin",
    Umax = 0x0D "umax",
    Fadd = 0x10 "fadd",
    Fsub = 0x11 "fsub",
    Fmul = 0x12 "fmul",
    Fma = 0x13 "fma",
    Fdiv = 0x14 "fdiv",
    Fneg = 0x15 "fneg",
    Fabs = 0x16 "fabs",
    Fmin = 0x17 "fmin",
    Fmax = 0x18 "fmax",
    Fclamp = 0x19 "fclamp",
    Fsqrt = 0x1A "fsqrt",
    Frsqrt = 0x1B "frsqrt",
    Frcp = 0x1C "frcp",
    Fround = 0x1D "fround",
    Ffract = 0x1E "ffract",
    Ftransc = 0x1F "ftransc",
    And = 0x20 "and",
    Or = 0x21 "or",
    Xor = 0x22 "xor",
    Not = 0x23 "not",
    Shift = 0x24 "shift",
    Bitop = 0x25 "bitop",
    Bfe = 0x26 "bfe",
    Bfi = 0x27 "bfi",
    Icmp = 0x28 "icmp",
    Ucmp = 0x29 "ucmp",
    Fcmp = 0x2A "fcmp",
    Select = 0x2B "select",
    Fsat = 0x2C "fsat",
    LocalLoad = 0x30 "local_load",
    LocalStore = 0x31 "local_store",
    DeviceLoad = 0x38 "device_load",
    DeviceStore = 0x39 "device_store",
    AtomicAdd = 0x40 "atomic_add",
    AtomicSub = 0x41 "atomic_sub",
    AtomicMin = 0x42 "atomic_min",
    AtomicMax = 0x43 "atomic_max",
    AtomicAnd = 0x44 "atomic_and",
    AtomicOr = 0x45 "atomic_or",
    AtomicXor = 0x46 "atomic_xor",
    AtomicExchange = 0x47 "atomic_exchange",
    AtomicCas = 0x48 "atomic_cas",
    WaveShuffle = 0x50 "wave_shuffle",
    WaveShuffleUp = 0x51 "wave_shuffle_up",
    WaveShuffleDown = 0x52 "wave_shuffle_down",
    WaveShuffleXor = 0x53 "wave_shuffle_xor",
    WaveBroadcast = 0x54 "wave_broadcast",
    WaveBallot = 0x55 "wave_ballot",
    WaveAny = 0x56 "wave_any",
    WaveAll = 0x57 "wave_all",
    WavePrefixSum = 0x58 "wave_prefix_sum",
    WaveReduce = 0x59 "wave_reduce",
    WaveShuffleIdx = 0x5A "wave_shuffle_idx",
    If = 0x60 "if",
    Else = 0x61 "else",
    Endif = 0x62 "endif",
    Loop = 0x63 "loop",
    Break = 0x64 "break",
    Continue = 0x65 "continue",
    Endloop = 0x66 "endloop",
    Call = 0x67 "call",
    Return = 0x68 "return",
    Barrier = 0x69 "barrier",
    Fence = 0x6A "fence",
    Wait = 0x6B "wait",
    Halt = 0x6C "halt",
    CvtF32I32 = 0x70 "cvt_f32_i32",
    CvtF32U32 = 0x71 "cvt_f32_u32",
    CvtI32F32 = 0x72 "cvt_i32_f32",
    CvtU32F32 = 0x73 "cvt_u32_f32",
    CvtF32F16 = 0x74 "cvt_f32_f16",
    CvtF16F32 = 0x75 "cvt_f16_f32",
    CvtF32F64 = 0x76 "cvt_f32_f64",
    CvtF64F32 = 0x77 "cvt_f64_f32",
    CvtF32Bf16 = 0x78 "cvt_f32_bf16",
    CvtBf16F32 = 0x79 "cvt_bf16_f32",
    Hadd = 0x80 "hadd",
    Hsub = 0x81 "hsub",
    Hmul = 0x82 "hmul",
    Hma = 0x83 "hma",
    Hadd2 = 0x84 "hadd2",
    Hmul2 = 0x85 "hmul2",
    Hma2 = 0x86 "hma2",
    Badd = 0x88 "badd",
    Bsub = 0x89 "bsub",
    Bmul = 0x8A "bmul",
    Bma = 0x8B "bma",
    Badd2 = 0x8C "badd2",
    Bmul2 = 0x8D "bmul2",
    Bma2 = 0x8E "bma2",
    Dadd = 0x90 "dadd",
    Dsub = 0x91 "dsub",
    Dmul = 0x92 "dmul",
    Dma = 0x93 "dma",
    Ddiv = 0x94 "ddiv",
    Dsqrt = 0x95 "dsqrt",
    MmaF16F32 = 0xA0 "mma_f16_f32",
    MmaBf16F32 = 0xA1 "mma_bf16_f32",
    MmaF32F32 = 0xA2 "mma_f32_f32",
    Mov = 0xF0 "mov",
    MovImm = 0xF1 "mov_imm",
    MovSpecial = 0xF2 "mov_special",
    Nop = 0xF3 "nop",
}

impl Opcode {
    /// Its row of the table.
    pub fn info(self) -> &'static OpInfo {
        // Every variant has a row: `every_opcode_has_one_row` checks it.
        info(self as u8).unwrap_or(&crate::OPCODES[0])
    }
}

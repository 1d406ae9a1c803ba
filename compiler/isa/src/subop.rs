//! The sub-operations a modifier selects, as types: the condition of a comparison, the width
//! of a memory access, the operation of an atomic or a reduction. [`crate::Operation`] carries
//! them, so a consumer matches every case by name and never decodes modifier bits itself.
//! Their numbers are the modifier values of the table (`ICMP_CONDITIONS`, `LOCAL_WIDTHS`, …);
//! a test checks that the names agree.

macro_rules! subop {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $value:literal $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$vdoc])* $variant = $value,)*
        }

        impl $name {
            /// Every value, in modifier order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The value of modifier bits `bits`, if they name one.
            pub const fn from_bits(bits: u8) -> Option<$name> {
                match bits {
                    $($value => Some($name::$variant),)*
                    _ => None,
                }
            }

            /// Its name as a mnemonic suffix (`icmp.lt`).
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl From<$name> for u8 {
            fn from(value: $name) -> u8 {
                value as u8
            }
        }
    };
}

subop! {
    /// `icmp`: a signed comparison.
    IntCond {
        /// `==`
        Eq = 0 "eq",
        /// `!=`
        Ne = 1 "ne",
        /// `<`
        Lt = 2 "lt",
        /// `<=`
        Le = 3 "le",
        /// `>`
        Gt = 4 "gt",
        /// `>=`
        Ge = 5 "ge",
    }
}

subop! {
    /// `ucmp`: an unsigned comparison.
    UintCond {
        /// `<`
        Lt = 0 "lt",
        /// `<=`
        Le = 1 "le",
    }
}

subop! {
    /// `fcmp`: a float comparison (ordered unless it says otherwise).
    FloatCond {
        /// `==`, false when either is NaN.
        Eq = 0 "eq",
        /// `<`
        Lt = 1 "lt",
        /// `<=`
        Le = 2 "le",
        /// `>`
        Gt = 3 "gt",
        /// `!=`: unordered, true when either is NaN.
        Ne = 4 "ne",
        /// Neither is NaN.
        Ord = 5 "ord",
        /// Either is NaN.
        Unord = 6 "unord",
    }
}

subop! {
    /// The width of a memory access.
    MemWidth {
        /// One byte, zero-extended.
        U8 = 0 "u8",
        /// Two bytes, zero-extended.
        U16 = 1 "u16",
        /// One register.
        U32 = 2 "u32",
        /// A register pair.
        U64 = 3 "u64",
        /// Four registers (Device Memory only).
        U128 = 4 "u128",
    }
}

impl MemWidth {
    /// Bytes accessed.
    pub const fn bytes(self) -> usize {
        1 << self as u8
    }

    /// Registers read or written.
    pub const fn registers(self) -> u8 {
        match self {
            MemWidth::U8 | MemWidth::U16 | MemWidth::U32 => 1,
            MemWidth::U64 => 2,
            MemWidth::U128 => 4,
        }
    }
}

subop! {
    /// `wave_reduce`: the combining operation (signed `min` and `max`).
    ReduceOp {
        /// Sum, wrapping.
        Add = 0 "add",
        /// Signed minimum.
        Min = 1 "min",
        /// Signed maximum.
        Max = 2 "max",
        /// Bitwise and.
        And = 3 "and_bits",
        /// Bitwise or.
        Or = 4 "or_bits",
        /// Bitwise xor.
        Xor = 5 "xor_bits",
    }
}

subop! {
    /// An atomic read-modify-write, by its opcode.
    AtomicOp {
        /// `atomic_add`
        Add = 0 "add",
        /// `atomic_sub`
        Sub = 1 "sub",
        /// `atomic_min`
        Min = 2 "min",
        /// `atomic_max`
        Max = 3 "max",
        /// `atomic_and`
        And = 4 "and",
        /// `atomic_or`
        Or = 5 "or",
        /// `atomic_xor`
        Xor = 6 "xor",
        /// `atomic_exchange`
        Exchange = 7 "exchange",
        /// `atomic_cas`: compare and swap.
        Cas = 8 "cas",
    }
}

subop! {
    /// `shift`: which shift.
    Shift {
        /// Left.
        Shl = 0 "shl",
        /// Right, logical.
        Shr = 1 "shr",
        /// Right, arithmetic.
        Sar = 2 "sar",
    }
}

subop! {
    /// `fround`: the rounding.
    Round {
        /// Toward negative infinity.
        Floor = 0 "floor",
        /// Toward positive infinity.
        Ceil = 1 "ceil",
        /// To nearest, ties to even.
        Round = 2 "round",
        /// Toward zero.
        Trunc = 3 "trunc",
    }
}

subop! {
    /// `ftransc`: the function.
    Transc {
        /// Sine.
        Sin = 0 "sin",
        /// Cosine.
        Cos = 1 "cos",
        /// Base-2 exponential.
        Exp2 = 2 "exp2",
        /// Base-2 logarithm.
        Log2 = 3 "log2",
    }
}

subop! {
    /// `bitop`: the bit operation.
    BitOp {
        /// Population count.
        Bitcount = 0 "bitcount",
        /// Index of the highest set bit.
        Bitfind = 1 "bitfind",
        /// Bit reversal.
        Bitrev = 2 "bitrev",
    }
}

subop! {
    /// `fence`: the ordering.
    FenceOrder {
        /// Later accesses stay after it.
        Acquire = 0 "acquire",
        /// Earlier accesses stay before it.
        Release = 1 "release",
        /// Both.
        AcqRel = 2 "acq_rel",
    }
}

/// Which lane a shuffle reads, from the reader's lane and `rs2`: the shuffle opcodes and
/// `wave_broadcast`, one [`crate::Operation`] told apart by this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shuffle {
    /// `wave_shuffle`, `wave_shuffle_idx`: lane `rs2`.
    Index,
    /// `wave_shuffle_up`: the lane `rs2` below.
    Up,
    /// `wave_shuffle_down`: the lane `rs2` above.
    Down,
    /// `wave_shuffle_xor`: the lane whose id is the reader's xor `rs2`.
    Xor,
    /// `wave_broadcast`: lane `rs2` (the same for every lane).
    Broadcast,
}

//! The WAVE instruction set: the single source of truth for instructions.
//!
//! This crate holds the instruction table ([`OPCODES`], one row per opcode of WAVE v0.3
//! Appendix A), the exact binary encoding of spec 8.2 ([`Inst::encode`], [`Inst::decode`]),
//! the canonical text of an instruction ([`Inst::write_text`]), mnemonic and alias resolution
//! ([`lookup`]), what each instruction does ([`Operation`]), the special registers, the Section 7 constants and capabilities with named
//! target profiles and the occupancy function ([`target`]), and the vendor mapping
//! ([`vendor`]).
//!
//! Invariants:
//! - Every valid instruction has exactly one encoding and one canonical text. The decoder
//!   rejects anything the encoder would not produce (reserved bits, unused fields that are not
//!   zero, out-of-range modifiers), so `encode(decode(bytes)) == bytes` for every accepted input
//!   and `decode(encode(inst)) == inst` for every valid `inst`.
//! - Nothing here allocates on the encode/decode path, prints, or knows about files, spans,
//!   salsa or editors. Decisions where the spec is silent or contradicts itself are listed in
//!   `docs/isa/deviations.md` and the encoding in `docs/isa/encoding.md`.

mod arbitrary;
mod encoding;
pub mod flags;
mod forms;
mod lookup;
mod opcode;
mod operation;
pub mod subop;
mod table;
pub mod target;
mod text;
pub mod vendor;

pub use arbitrary::arbitrary_inst;
pub use encoding::{
    BASE_FIELDS, DecodeError, EncodeError, FLAG_EXTENDED, FLAG_PREDICATED, Field, Guard, Inst,
};
pub use flags::{Flags, Flow};
pub use lookup::{
    Resolved, SuffixError, all_spellings, expected_suffixes, lookup, lookup_name, scope_name,
    suggest,
};
pub use opcode::Opcode;
pub use operation::{ATOMIC_LOCAL, Operation, Space};
pub use subop::{
    AtomicOp, BitOp, FenceOrder, FloatCond, IntCond, MemWidth, ReduceOp, Round, Shift, Shuffle,
    Transc, UintCond,
};
pub use table::*;
pub use text::{format_float, write_inst, write_mnemonic};

/// Base (48-bit) or Extended (80-bit) instruction format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// One 48-bit word; an extension word only when an immediate or offset is used.
    Base,
    /// Always a 48-bit word followed by a 32-bit extension word.
    Extended,
}

/// The opcode ranges of spec 8.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// 0x00-0x0F.
    Integer,
    /// 0x10-0x1F.
    Float,
    /// 0x20-0x27.
    Bitwise,
    /// 0x28-0x2F.
    Compare,
    /// 0x30-0x37.
    LocalMemory,
    /// 0x38-0x3F.
    DeviceMemory,
    /// 0x40-0x4F.
    Atomic,
    /// 0x50-0x5F.
    Wave,
    /// 0x60-0x6F.
    Control,
    /// 0x70-0x7F.
    Convert,
    /// 0x80-0x8F.
    F16,
    /// 0x90-0x9F, optional.
    F64,
    /// 0xA0-0xAF, optional.
    Mma,
    /// 0xF0-0xFF.
    Misc,
}

impl Category {
    /// A short human title.
    pub fn title(self) -> &'static str {
        match self {
            Category::Integer => "Integer arithmetic",
            Category::Float => "Floating-point arithmetic (F32)",
            Category::Bitwise => "Bitwise operations",
            Category::Compare => "Comparison and select",
            Category::LocalMemory => "Local memory",
            Category::DeviceMemory => "Device memory",
            Category::Atomic => "Atomic operations",
            Category::Wave => "Wave operations",
            Category::Control => "Control flow and synchronisation",
            Category::Convert => "Type conversion",
            Category::F16 => "F16 and BF16 arithmetic",
            Category::F64 => "F64 arithmetic (optional)",
            Category::Mma => "Matrix multiply-accumulate (optional)",
            Category::Misc => "Miscellaneous",
        }
    }
}

/// The optional capabilities of spec 7.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// CAP_F64: 64-bit floating point.
    F64,
    /// CAP_ATOMIC_64: 64-bit atomics.
    Atomic64,
    /// CAP_ATOMIC_F32: F32 atomic add.
    AtomicF32,
    /// CAP_MMA: matrix multiply-accumulate.
    Mma,
    /// CAP_RECURSION: recursive function calls.
    Recursion,
    /// CAP_CLUSTER: clusters of workgroups.
    Cluster,
}

impl Capability {
    /// Every capability.
    pub const ALL: [Capability; 6] = [
        Capability::F64,
        Capability::Atomic64,
        Capability::AtomicF32,
        Capability::Mma,
        Capability::Recursion,
        Capability::Cluster,
    ];

    /// The spec's name, e.g. `CAP_F64`.
    pub fn name(self) -> &'static str {
        match self {
            Capability::F64 => "CAP_F64",
            Capability::Atomic64 => "CAP_ATOMIC_64",
            Capability::AtomicF32 => "CAP_ATOMIC_F32",
            Capability::Mma => "CAP_MMA",
            Capability::Recursion => "CAP_RECURSION",
            Capability::Cluster => "CAP_CLUSTER",
        }
    }
}

/// The memory scopes of spec 4.4, in field order.
pub const SCOPES: [&str; 4] = ["wave", "workgroup", "device", "system"];

/// The scope field value used when an atomic or fence names none (`.device`).
pub const DEFAULT_SCOPE: u8 = 2;

/// The cache hints of device loads and stores, in scope-field order (0: none).
pub const CACHE_HINTS: [&str; 4] = ["", "cached", "uncached", "streaming"];

/// The special registers of spec 3.3, indexed by their `rs1` value in `mov_special`: name,
/// and what it holds (hovers, completion details and the ISA reference show it). The last
/// four are the MMA queries of spec 7.3 as the reference toolchain numbers them (16-19).
pub const SPECIALS: [(&str, &str); 20] = [
    ("sr_thread_id_x", "the thread's index in its workgroup, X dimension"),
    ("sr_thread_id_y", "the thread's index in its workgroup, Y dimension"),
    ("sr_thread_id_z", "the thread's index in its workgroup, Z dimension"),
    ("sr_wave_id", "the wave's index in its workgroup"),
    ("sr_lane_id", "the thread's lane in its wave, 0 to W-1"),
    ("sr_workgroup_id_x", "the workgroup's index in the grid, X dimension"),
    ("sr_workgroup_id_y", "the workgroup's index in the grid, Y dimension"),
    ("sr_workgroup_id_z", "the workgroup's index in the grid, Z dimension"),
    ("sr_workgroup_size_x", "threads per workgroup, X dimension"),
    ("sr_workgroup_size_y", "threads per workgroup, Y dimension"),
    ("sr_workgroup_size_z", "threads per workgroup, Z dimension"),
    ("sr_grid_size_x", "workgroups in the grid, X dimension"),
    ("sr_grid_size_y", "workgroups in the grid, Y dimension"),
    ("sr_grid_size_z", "workgroups in the grid, Z dimension"),
    ("sr_wave_width", "W, the threads per wave of this dispatch"),
    ("sr_num_waves", "waves per workgroup"),
    ("sr_mma_supported", "1 where CAP_MMA is present, else 0: 0 on every target of this toolchain"),
    ("sr_mma_m", "rows of an MMA tile (M), 0 without CAP_MMA"),
    ("sr_mma_n", "columns of an MMA tile (N), 0 without CAP_MMA"),
    ("sr_mma_k", "the MMA tile's inner dimension (K), 0 without CAP_MMA"),
];

/// The special registers' names, by index (the first column of [`SPECIALS`]).
pub const SPECIAL_REGISTERS: [&str; SPECIALS.len()] = {
    let mut names = [""; SPECIALS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = SPECIALS[i].0;
        i += 1;
    }
    names
};

/// What special register `index` holds.
pub fn special_meaning(index: u8) -> Option<&'static str> {
    SPECIALS.get(usize::from(index)).map(|(_, m)| *m)
}

/// The special register named `name` (lowercase), as its index.
pub fn special_register(name: &str) -> Option<u8> {
    SPECIAL_REGISTERS.iter().position(|s| *s == name).map(|i| i as u8)
}

/// The number of predicate registers (p0-p3).
pub const PREDICATES: u8 = 4;

const OPCODE_INDEX: [u8; 256] = {
    let mut index = [u8::MAX; 256];
    let mut i = 0;
    while i < OPCODES.len() {
        index[OPCODES[i].opcode as usize] = i as u8;
        i += 1;
    }
    index
};

/// The table row of primary opcode `opcode`, if it is defined.
pub fn info(opcode: u8) -> Option<&'static OpInfo> {
    let i = OPCODE_INDEX[opcode as usize];
    if i == u8::MAX { None } else { Some(&OPCODES[i as usize]) }
}

/// The table row of canonical mnemonic `mnemonic` (no suffixes, lowercase).
pub fn info_by_mnemonic(mnemonic: &str) -> Option<&'static OpInfo> {
    OPCODES.iter().find(|op| op.mnemonic == mnemonic)
}

/// Registers spanned by a `Data`-width operand of `op` with modifier `modifier`.
pub fn data_registers(op: &OpInfo, modifier: u8) -> u8 {
    match op.modifier {
        Modifier::Named { .. } => match op.category {
            Category::LocalMemory | Category::DeviceMemory => match modifier {
                3 => 2,
                4 => 4,
                _ => 1,
            },
            _ => 1,
        },
        Modifier::Atomic { .. } => match AtomicType::from_bits(modifier & 7) {
            Some(t) if t.is_64() => 2,
            _ => 1,
        },
        _ => 1,
    }
}

/// Registers spanned by operand `operand` of `op` with modifier `modifier`.
pub fn operand_registers(op: &OpInfo, operand: &Operand, modifier: u8) -> u8 {
    match operand {
        Operand::Reg { width: Width::Pair, .. } => 2,
        Operand::Reg { width: Width::Data, .. } => data_registers(op, modifier),
        _ => 1,
    }
}

#[cfg(test)]
mod tests;

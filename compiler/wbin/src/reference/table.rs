//! The reference toolchain's instructions: one row per (G3 opcode, modifier) that its decoder
//! accepts, with the operand layout, the size its assembler's first pass gives it, and the
//! instruction of ours it becomes (`docs/wbin.md`, "Reading reference files").

/// Where a reference instruction's operands are, by role. The G3 word count and the fields
/// that must be zero follow from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `rd, rs1`; one word.
    R2,
    /// `rd, rs1, W1.a`.
    R3,
    /// `rd, rs1, W1.a, W1.b`.
    R4,
    /// `rd, rs1, W1.a, W1.b, W1.c` (`bfi`).
    Bfi,
    /// `pd, rs1, W1.a`: a compare, `pd` in rd.
    Cmp,
    /// `rd, ps, W1.a, W1.b`: `ps` in rs1.
    Select,
    /// `rd, raddr`; one word.
    Load,
    /// `raddr, W1.a`.
    Store,
    /// `rd, raddr, W1.a` on Local Memory (no scope).
    LocalAtomic,
    /// `rd, raddr, W1.a, W1.s`.
    DeviceAtomic,
    /// `rd, raddr, W1.a, W1.b` on Local Memory.
    LocalCas,
    /// `rd, raddr, W1.a, W1.b, W1.s`.
    DeviceCas,
    /// `rd, ps`: `ps` in rs1; one word.
    Ballot,
    /// `pd, ps`: `pd` in rd, `ps` in rs1; one word.
    Vote,
    /// `ps` in rs1; one word.
    PredCtrl,
    /// No operands; one word.
    Plain,
    /// W1 = the target's code-section byte offset.
    Call,
    /// W1.s = the scope.
    Fence,
    /// `rd, rs1, W1.a` as fragment ids and registers.
    Mma,
    /// `rd`, W1 = the value.
    MovImm,
    /// `rd`, rs1 = the special register's index; one word.
    MovSr,
}

impl Form {
    /// Whether G3 gives it a second word.
    pub(crate) fn g3_two_words(self) -> bool {
        !matches!(
            self,
            Form::R2
                | Form::Load
                | Form::Ballot
                | Form::Vote
                | Form::PredCtrl
                | Form::Plain
                | Form::MovSr
        )
    }

    /// Whether G2 (the published crate) gives it a second word.
    pub(crate) fn g2_two_words(self) -> bool {
        matches!(
            self,
            Form::R4 | Form::Bfi | Form::LocalCas | Form::DeviceCas | Form::Call | Form::MovImm
        )
    }

    /// Which fields it uses: rd, rs1, W1.a, W1.b, W1.c, scope, the whole W1.
    pub(crate) fn uses(self) -> Uses {
        let mut u = Uses::default();
        match self {
            Form::R2 | Form::Load | Form::Ballot | Form::Vote | Form::MovSr => {
                u.rd = true;
                u.rs1 = true;
            }
            Form::R3 | Form::Cmp | Form::Mma | Form::LocalAtomic => {
                u.rd = true;
                u.rs1 = true;
                u.a = true;
            }
            Form::R4 | Form::Select | Form::LocalCas => {
                u.rd = true;
                u.rs1 = true;
                u.a = true;
                u.b = true;
            }
            Form::Bfi => {
                u.rd = true;
                u.rs1 = true;
                u.a = true;
                u.b = true;
                u.c = true;
            }
            Form::Store => {
                u.rs1 = true;
                u.a = true;
            }
            Form::DeviceAtomic => {
                u.rd = true;
                u.rs1 = true;
                u.a = true;
                u.scope = true;
            }
            Form::DeviceCas => {
                u.rd = true;
                u.rs1 = true;
                u.a = true;
                u.b = true;
                u.scope = true;
            }
            Form::PredCtrl => u.rs1 = true,
            Form::Plain => {}
            Form::Call => u.imm = true,
            Form::Fence => u.scope = true,
            Form::MovImm => {
                u.rd = true;
                u.imm = true;
            }
        }
        u
    }
}

/// The fields a [`Form`] uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Uses {
    pub rd: bool,
    pub rs1: bool,
    pub a: bool,
    pub b: bool,
    pub c: bool,
    pub scope: bool,
    pub imm: bool,
}

/// One reference instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    /// The reference mnemonic.
    pub name: &'static str,
    /// G3 opcode (W0[31:24]).
    pub op: u8,
    /// G3 modifier (W0[7:4]).
    pub modifier: u8,
    /// Operand layout.
    pub form: Form,
    /// Marked "extended" in the reference assembler: its first pass counts 8 bytes (else 4),
    /// whatever the encoder then emits (the label-size bug of G3).
    pub marked: bool,
    /// Our opcode and base modifier (the predicate source or Local Memory bit is added to
    /// it); `None` where there is no counterpart.
    pub ours: Option<(u8, u8)>,
    /// Why there is no counterpart (empty when there is one).
    pub note: &'static str,
    /// Whether the published crate's G2 encoding has it.
    pub in_g2: bool,
}

/// Our `cvt_f32_bf16`.
pub(crate) const CVT_F32_BF16: u8 = 0x78;
/// Our `cvt_bf16_f32`.
pub(crate) const CVT_BF16_F32: u8 = 0x79;
/// Our `badd`.
pub(crate) const BADD: u8 = 0x88;
/// Our `bsub`.
pub(crate) const BSUB: u8 = 0x89;
/// Our `bmul`.
pub(crate) const BMUL: u8 = 0x8A;
/// Our `bma`.
pub(crate) const BMA: u8 = 0x8B;
/// Our `badd2`.
pub(crate) const BADD2: u8 = 0x8C;
/// Our `bmul2`.
pub(crate) const BMUL2: u8 = 0x8D;
/// Our `bma2`.
pub(crate) const BMA2: u8 = 0x8E;

const fn row(name: &'static str, op: u8, modifier: u8, form: Form, ours: (u8, u8)) -> Row {
    Row { name, op, modifier, form, marked: false, ours: Some(ours), note: "", in_g2: true }
}

/// A row the assembler's first pass counts as 8 bytes.
const fn ext(name: &'static str, op: u8, modifier: u8, form: Form, ours: (u8, u8)) -> Row {
    Row { marked: true, ..row(name, op, modifier, form, ours) }
}

/// A row only G3 has.
const fn g3(r: Row) -> Row {
    Row { in_g2: false, ..r }
}

/// A row without a counterpart.
const fn none(name: &'static str, op: u8, modifier: u8, form: Form, note: &'static str) -> Row {
    Row { name, op, modifier, form, marked: false, ours: None, note, in_g2: true }
}

const DECODER_ONLY: &str = "the reference decoder accepts this encoding, but its assembler never \
    writes it and its emulator evaluates it as always false";

use Form::*;

/// Every instruction the reference decoder accepts, by G3 opcode and modifier.
pub(crate) static ROWS: &[Row] = &[
    // Integer (0x00-0x0B).
    row("iadd", 0x00, 0, R3, (0x00, 0)),
    row("isub", 0x01, 0, R3, (0x01, 0)),
    row("imul", 0x02, 0, R3, (0x02, 0)),
    row("imul_hi", 0x03, 0, R3, (0x03, 0)),
    ext("imad", 0x04, 0, R4, (0x04, 0)),
    row("idiv", 0x05, 0, R3, (0x05, 0)),
    row("imod", 0x06, 0, R3, (0x06, 0)),
    row("ineg", 0x07, 0, R2, (0x07, 0)),
    row("iabs", 0x08, 0, R2, (0x08, 0)),
    row("imin", 0x09, 0, R3, (0x09, 0)),
    row("imax", 0x0A, 0, R3, (0x0A, 0)),
    ext("iclamp", 0x0B, 0, R4, (0x0B, 0)),
    // F32 (0x10-0x1B).
    row("fadd", 0x10, 0, R3, (0x10, 0)),
    row("fsub", 0x11, 0, R3, (0x11, 0)),
    row("fmul", 0x12, 0, R3, (0x12, 0)),
    ext("fma", 0x13, 0, R4, (0x13, 0)),
    row("fdiv", 0x14, 0, R3, (0x14, 0)),
    row("fneg", 0x15, 0, R2, (0x15, 0)),
    row("fabs", 0x16, 0, R2, (0x16, 0)),
    row("fmin", 0x17, 0, R3, (0x17, 0)),
    row("fmax", 0x18, 0, R3, (0x18, 0)),
    ext("fclamp", 0x19, 0, R4, (0x19, 0)),
    row("fsqrt", 0x1A, 0, R2, (0x1A, 0)),
    row("frsqrt", 0x1B, 0, R2, (0x1B, 0)),
    row("frcp", 0x1B, 1, R2, (0x1C, 0)),
    row("ffloor", 0x1B, 2, R2, (0x1D, 0)),
    row("fceil", 0x1B, 3, R2, (0x1D, 1)),
    row("fround", 0x1B, 4, R2, (0x1D, 2)),
    row("ftrunc", 0x1B, 5, R2, (0x1D, 3)),
    row("ffract", 0x1B, 6, R2, (0x1E, 0)),
    row("fsat", 0x1B, 7, R2, (0x2C, 0)),
    row("fsin", 0x1B, 8, R2, (0x1F, 0)),
    row("fcos", 0x1B, 9, R2, (0x1F, 1)),
    row("fexp2", 0x1B, 10, R2, (0x1F, 2)),
    row("flog2", 0x1B, 11, R2, (0x1F, 3)),
    // F16 (0x1C, 0x1D): every half `.lo`.
    row("hadd", 0x1C, 0, R3, (0x80, 0)),
    row("hsub", 0x1C, 1, R3, (0x81, 0)),
    row("hmul", 0x1C, 2, R3, (0x82, 0)),
    ext("hma", 0x1C, 3, R4, (0x83, 0)),
    row("hadd2", 0x1D, 0, R3, (0x84, 0)),
    row("hmul2", 0x1D, 1, R3, (0x85, 0)),
    ext("hma2", 0x1D, 2, R4, (0x86, 0)),
    // F64 (0x1E, 0x1F): register pairs, the low register in the field.
    row("dadd", 0x1E, 0, R3, (0x90, 0)),
    row("dsub", 0x1E, 1, R3, (0x91, 0)),
    row("dmul", 0x1E, 2, R3, (0x92, 0)),
    ext("dma", 0x1E, 3, R4, (0x93, 0)),
    row("ddiv", 0x1F, 0, R3, (0x94, 0)),
    row("dsqrt", 0x1F, 1, R2, (0x95, 0)),
    // Bitwise (0x20-0x27).
    row("and", 0x20, 0, R3, (0x20, 0)),
    row("or", 0x21, 0, R3, (0x21, 0)),
    row("xor", 0x22, 0, R3, (0x22, 0)),
    row("not", 0x23, 0, R2, (0x23, 0)),
    row("shl", 0x24, 0, R3, (0x24, 0)),
    row("shr", 0x25, 0, R3, (0x24, 1)),
    row("sar", 0x26, 0, R3, (0x24, 2)),
    row("bitcount", 0x27, 0, R2, (0x25, 0)),
    row("bitfind", 0x27, 1, R2, (0x25, 1)),
    row("bitrev", 0x27, 2, R2, (0x25, 2)),
    ext("bfe", 0x27, 3, R4, (0x26, 0)),
    // Fields map straight (rd, rs1, rs2, rs3, rs4); the operand roles of the two `bfi`s
    // differ (docs/wbin.md).
    ext("bfi", 0x27, 4, Bfi, (0x27, 0)),
    // Compares (0x28-0x2A): the reference numbers conditions eq ne lt le gt ge ord unord.
    row("icmp_eq", 0x28, 0, Cmp, (0x28, 0)),
    row("icmp_ne", 0x28, 1, Cmp, (0x28, 1)),
    row("icmp_lt", 0x28, 2, Cmp, (0x28, 2)),
    row("icmp_le", 0x28, 3, Cmp, (0x28, 3)),
    row("icmp_gt", 0x28, 4, Cmp, (0x28, 4)),
    row("icmp_ge", 0x28, 5, Cmp, (0x28, 5)),
    none("icmp_ord", 0x28, 6, Cmp, DECODER_ONLY),
    none("icmp_unord", 0x28, 7, Cmp, DECODER_ONLY),
    none("ucmp_eq", 0x29, 0, Cmp, DECODER_ONLY),
    none("ucmp_ne", 0x29, 1, Cmp, DECODER_ONLY),
    row("ucmp_lt", 0x29, 2, Cmp, (0x29, 0)),
    row("ucmp_le", 0x29, 3, Cmp, (0x29, 1)),
    none("ucmp_gt", 0x29, 4, Cmp, DECODER_ONLY),
    none("ucmp_ge", 0x29, 5, Cmp, DECODER_ONLY),
    none("ucmp_ord", 0x29, 6, Cmp, DECODER_ONLY),
    none("ucmp_unord", 0x29, 7, Cmp, DECODER_ONLY),
    row("fcmp_eq", 0x2A, 0, Cmp, (0x2A, 0)),
    row("fcmp_ne", 0x2A, 1, Cmp, (0x2A, 4)),
    row("fcmp_lt", 0x2A, 2, Cmp, (0x2A, 1)),
    row("fcmp_le", 0x2A, 3, Cmp, (0x2A, 2)),
    row("fcmp_gt", 0x2A, 4, Cmp, (0x2A, 3)),
    none("fcmp_ge", 0x2A, 5, Cmp, DECODER_ONLY),
    row("fcmp_ord", 0x2A, 6, Cmp, (0x2A, 5)),
    row("fcmp_unord", 0x2A, 7, Cmp, (0x2A, 6)),
    // Select: ps goes to our modifier, the data operands W1.a and W1.b to rs1 and rs2.
    row("select", 0x2B, 0, Select, (0x2B, 0)),
    // Conversions (0x2C).
    row("cvt_f32_i32", 0x2C, 0, R2, (0x70, 0)),
    row("cvt_f32_u32", 0x2C, 1, R2, (0x71, 0)),
    row("cvt_i32_f32", 0x2C, 2, R2, (0x72, 0)),
    row("cvt_u32_f32", 0x2C, 3, R2, (0x73, 0)),
    row("cvt_f32_f16", 0x2C, 4, R2, (0x74, 0)),
    row("cvt_f16_f32", 0x2C, 5, R2, (0x75, 0)),
    row("cvt_f32_f64", 0x2C, 6, R2, (0x76, 0)),
    row("cvt_f64_f32", 0x2C, 7, R2, (0x77, 0)),
    g3(row("cvt_f32_bf16", 0x2C, 8, R2, (CVT_F32_BF16, 0))),
    g3(row("cvt_bf16_f32", 0x2C, 9, R2, (CVT_BF16_F32, 0))),
    // BF16 (0x2D, 0x2E), G3 only.
    g3(row("badd", 0x2D, 0, R3, (BADD, 0))),
    g3(row("bsub", 0x2D, 1, R3, (BSUB, 0))),
    g3(row("bmul", 0x2D, 2, R3, (BMUL, 0))),
    g3(ext("bma", 0x2D, 3, R4, (BMA, 0))),
    g3(row("badd2", 0x2E, 0, R3, (BADD2, 0))),
    g3(row("bmul2", 0x2E, 1, R3, (BMUL2, 0))),
    g3(ext("bma2", 0x2E, 2, R4, (BMA2, 0))),
    // Memory (0x30, 0x31, 0x38, 0x39): widths u8 0, u16 1, u32 2, u64 3, u128 4 as ours.
    row("local_load_u8", 0x30, 0, Load, (0x30, 0)),
    row("local_load_u16", 0x30, 1, Load, (0x30, 1)),
    row("local_load_u32", 0x30, 2, Load, (0x30, 2)),
    row("local_load_u64", 0x30, 3, Load, (0x30, 3)),
    none(
        "local_load_u128",
        0x30,
        4,
        Load,
        "our Local Memory accesses stop at u64 (the reference's decoder accepts u128 there, \
         its assembler never writes it and its emulator moves 4 bytes)",
    ),
    row("local_store_u8", 0x31, 0, Store, (0x31, 0)),
    row("local_store_u16", 0x31, 1, Store, (0x31, 1)),
    row("local_store_u32", 0x31, 2, Store, (0x31, 2)),
    row("local_store_u64", 0x31, 3, Store, (0x31, 3)),
    none(
        "local_store_u128",
        0x31,
        4,
        Store,
        "our Local Memory accesses stop at u64 (the reference's decoder accepts u128 there, \
         its assembler never writes it and its emulator moves 4 bytes)",
    ),
    row("device_load_u8", 0x38, 0, Load, (0x38, 0)),
    row("device_load_u16", 0x38, 1, Load, (0x38, 1)),
    row("device_load_u32", 0x38, 2, Load, (0x38, 2)),
    row("device_load_u64", 0x38, 3, Load, (0x38, 3)),
    row("device_load_u128", 0x38, 4, Load, (0x38, 4)),
    row("device_store_u8", 0x39, 0, Store, (0x39, 0)),
    row("device_store_u16", 0x39, 1, Store, (0x39, 1)),
    row("device_store_u32", 0x39, 2, Store, (0x39, 2)),
    row("device_store_u64", 0x39, 3, Store, (0x39, 3)),
    row("device_store_u128", 0x39, 4, Store, (0x39, 4)),
    // Atomics (0x3C local, 0x3D device), u32 only: ours with type u32 (0), bit 3 = local.
    // The reference assembler writes CAS with modifier 0, so an assembled CAS reads as add
    // (what the reference then executes); modifier 8 is CAS only per its decoder, which names
    // W1.a "expected" and W1.b "desired": our rs2 (compare) and rs3 (new value).
    row("local_atomic_add", 0x3C, 0, LocalAtomic, (0x40, 8)),
    row("local_atomic_sub", 0x3C, 1, LocalAtomic, (0x41, 8)),
    row("local_atomic_min", 0x3C, 2, LocalAtomic, (0x42, 8)),
    row("local_atomic_max", 0x3C, 3, LocalAtomic, (0x43, 8)),
    row("local_atomic_and", 0x3C, 4, LocalAtomic, (0x44, 8)),
    row("local_atomic_or", 0x3C, 5, LocalAtomic, (0x45, 8)),
    row("local_atomic_xor", 0x3C, 6, LocalAtomic, (0x46, 8)),
    row("local_atomic_exchange", 0x3C, 7, LocalAtomic, (0x47, 8)),
    ext("local_atomic_cas", 0x3C, 8, LocalCas, (0x48, 8)),
    row("atomic_add", 0x3D, 0, DeviceAtomic, (0x40, 0)),
    row("atomic_sub", 0x3D, 1, DeviceAtomic, (0x41, 0)),
    row("atomic_min", 0x3D, 2, DeviceAtomic, (0x42, 0)),
    row("atomic_max", 0x3D, 3, DeviceAtomic, (0x43, 0)),
    row("atomic_and", 0x3D, 4, DeviceAtomic, (0x44, 0)),
    row("atomic_or", 0x3D, 5, DeviceAtomic, (0x45, 0)),
    row("atomic_xor", 0x3D, 6, DeviceAtomic, (0x46, 0)),
    row("atomic_exchange", 0x3D, 7, DeviceAtomic, (0x47, 0)),
    ext("atomic_cas", 0x3D, 8, DeviceCas, (0x48, 0)),
    // Wave (0x3E).
    row("wave_shuffle", 0x3E, 0, R3, (0x50, 0)),
    row("wave_shuffle_up", 0x3E, 1, R3, (0x51, 0)),
    row("wave_shuffle_down", 0x3E, 2, R3, (0x52, 0)),
    row("wave_shuffle_xor", 0x3E, 3, R3, (0x53, 0)),
    row("wave_broadcast", 0x3E, 4, R3, (0x54, 0)),
    row("wave_ballot", 0x3E, 5, Ballot, (0x55, 0)),
    row("wave_any", 0x3E, 6, Vote, (0x56, 0)),
    row("wave_all", 0x3E, 7, Vote, (0x57, 0)),
    row("wave_prefix_sum", 0x3E, 8, R2, (0x58, 0)),
    row("wave_reduce_add", 0x3E, 9, R2, (0x59, 8)),
    row("wave_reduce_min", 0x3E, 10, R2, (0x59, 9)),
    row("wave_reduce_max", 0x3E, 11, R2, (0x59, 10)),
    // Control flow (0x3F, 0-7) and synchronisation (0x3F, 8-15).
    row("if", 0x3F, 0, PredCtrl, (0x60, 0)),
    row("else", 0x3F, 1, Plain, (0x61, 0)),
    row("endif", 0x3F, 2, Plain, (0x62, 0)),
    row("loop", 0x3F, 3, Plain, (0x63, 0)),
    row("break", 0x3F, 4, PredCtrl, (0x64, 0)),
    row("continue", 0x3F, 5, PredCtrl, (0x65, 0)),
    row("endloop", 0x3F, 6, Plain, (0x66, 0)),
    ext("call", 0x3F, 7, Call, (0x67, 0)),
    row("return", 0x3F, 8, Plain, (0x68, 0)),
    row("halt", 0x3F, 9, Plain, (0x6C, 0)),
    row("barrier", 0x3F, 10, Plain, (0x69, 0)),
    ext("fence_acquire", 0x3F, 11, Fence, (0x6A, 0)),
    ext("fence_release", 0x3F, 12, Fence, (0x6A, 1)),
    ext("fence_acq_rel", 0x3F, 13, Fence, (0x6A, 2)),
    row("wait", 0x3F, 14, Plain, (0x6B, 0)),
    row("nop", 0x3F, 15, Plain, (0xF3, 0)),
    // MMA (0x40), G3 only.
    g3(Row { marked: true, ..none("mma_load_a", 0x40, 0, Mma, MMA) }),
    g3(Row { marked: true, ..none("mma_load_b", 0x40, 1, Mma, MMA) }),
    g3(Row { marked: true, ..none("mma_store_c", 0x40, 2, Mma, MMA) }),
    g3(Row { marked: true, ..none("mma_compute", 0x40, 3, Mma, MMA) }),
    // Misc (0x41 in G3; 0x3F with the MISC flag in G2).
    row("mov", 0x41, 0, R2, (0xF0, 0)),
    ext("mov_imm", 0x41, 1, MovImm, (0xF1, 0)),
    row("mov_sr", 0x41, 2, MovSr, (0xF2, 0)),
];

const MMA: &str = "the reference's MMA loads and stores fragments by id through Local Memory, \
    while ours (`mma_f16_f32`, `mma_bf16_f32`, `mma_f32_f32`) multiply register fragments, \
    D = A * B + C";

/// The row of G3 opcode `op` with modifier `modifier`.
pub(crate) fn by_g3(op: u8, modifier: u8) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.op == op && r.modifier == modifier)
}

/// Whether G3 opcode `op` has sub-operations in its modifier (else the modifier is zero).
pub(crate) fn has_suboperations(op: u8) -> bool {
    ROWS.iter().any(|r| r.op == op && r.modifier != 0)
}

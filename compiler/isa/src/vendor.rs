//! Vendor mapping table: how each WAVE instruction is realised on each vendor target.
//!
//! One row per canonical WAVE mnemonic (WAVE ISA spec v0.3, Appendix A). Where the vendor
//! form depends on the modifier, the row key carries it as a suffix (`fround.floor`,
//! `ftransc.sin`, `shift.sar`, `bitop.bitfind`, `wave_reduce.min`, ...). The strings are
//! reference documentation for backend authors and users; they are not emitted verbatim.
//!
//! Conventions in the C++-like columns: `a`, `b`, `c` stand for the rs1/rs2/rs3 values already
//! reinterpreted at the instruction's type (i32 for `i*`, u32 for `u*`, f32 for `f*`, half for
//! `h*`, double for `d*`; the backends do this with `as_type<T>()`, `__uint_as_float()`,
//! `sycl::bit_cast<T>()` and `mov.b32`), `p` is a predicate, `v` a wave-operation value,
//! `sg` the SYCL sub-group and `wg` the SYCL work-group. A `+` joins a sequence of native
//! instructions.
//!
//! Where each column comes from:
//! - `ptx`: the WAVE PTX backend (backend mappings page: `ld.global`/`st.global`,
//!   `atom.global`/`atom.shared`, `bar.sync 0`, no `atom.sub` so `neg` + `atom.add`) and the PTX
//!   ISA. Shuffles and votes use the mask from `activemask.b32`, never `0xffffffff`, because
//!   WAVE allows them inside divergent control flow. Control flow is predicated `bra` to labels.
//! - `hip`: the WAVE HIP backend (`__shfl`, `__ballot`, `__shfl_xor` reduction tree,
//!   `__syncthreads()`) and HIP device functions. F16 needs `hip_fp16.h` (spec conformance note).
//! - `sycl`: the WAVE SYCL backend (`select_from_group`, `reduce_over_group`, `group_ballot`,
//!   `group_broadcast`, `sycl::atomic_ref`, `sycl::atomic_fence`, `group_barrier`) and SYCL 2020
//!   group algorithms.
//! - `metal`: the WAVE Metal backend (`simd_shuffle`, `simd_sum`, `simd_ballot`,
//!   `simd_broadcast`, `threadgroup_barrier`) and the Metal Shading Language. MSL has no
//!   double-precision type, so F64 rows say so.
//! - `g13`: the reverse-engineered Apple G13 (M1) GPU ISA document. Only mnemonics that document
//!   names are used; `None` where it names none. Where a WAVE operation is a short sequence or
//!   a special use of named instructions (a modifier, an immediate, a zero operand), the `//`
//!   comment on the row says how, based on the document's pseudocode. G13 has no predicate
//!   registers in that document, so predicates live in ordinary registers and comparisons are
//!   done by compare-and-select (`icmpsel`/`fcmpsel`) or folded into `if_icmp`/`while_icmp`.
//!   Control flow uses the per-lane execution-mask counter stack in `r0l` (see
//!   `docs/isa/vendor-notes.md`).

/// How one WAVE instruction maps onto each vendor's native form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VendorForms {
    /// PTX (NVIDIA), e.g. "add.s32" or "shfl.sync.idx.b32".
    pub ptx: &'static str,
    /// HIP C++ (AMD), e.g. "a + b" or "__shfl(v, lane)".
    pub hip: &'static str,
    /// SYCL C++ (Intel), e.g. "sycl::select_from_group(sg, v, lane)".
    pub sycl: &'static str,
    /// Metal Shading Language (Apple), e.g. "simd_shuffle(v, lane)".
    pub metal: &'static str,
    /// Apple G13's native instruction as named in the reverse-engineered ISA document, if it names one.
    pub g13: Option<&'static str>,
}

/// Vendor forms by canonical mnemonic (with modifier suffix where the mapping differs per modifier).
pub static VENDOR_FORMS: &[(&str, VendorForms)] = &[
    // ---- Integer arithmetic (0x00-0x0F) ----
    (
        "iadd",
        VendorForms {
            ptx: "add.s32",
            hip: "a + b",
            sycl: "a + b",
            metal: "a + b",
            g13: Some("iadd"),
        },
    ),
    // G13 iadd is "Integer Add or Subtract": its N bit negates B.
    (
        "isub",
        VendorForms {
            ptx: "sub.s32",
            hip: "a - b",
            sycl: "a - b",
            metal: "a - b",
            g13: Some("iadd"),
        },
    ),
    // G13 imadd computes a * b + c; a multiply uses an immediate zero addend.
    (
        "imul",
        VendorForms {
            ptx: "mul.lo.s32",
            hip: "a * b",
            sycl: "a * b",
            metal: "a * b",
            g13: Some("imadd"),
        },
    ),
    // G13 imadd has a 64-bit destination (ALUDst64) and sign-extending sources (MulSrc), so the
    // full product lands in a register pair whose high register is the result; the document
    // names no separate multiply-high. Signedness follows the i32 default (u32: mul.hi.u32,
    // __umulhi).
    (
        "imul_hi",
        VendorForms {
            ptx: "mul.hi.s32",
            hip: "__mulhi(a, b)",
            sycl: "sycl::mul_hi(a, b)",
            metal: "mulhi(a, b)",
            g13: Some("imadd"),
        },
    ),
    (
        "imad",
        VendorForms {
            ptx: "mad.lo.s32",
            hip: "a * b + c",
            sycl: "a * b + c",
            metal: "a * b + c",
            g13: Some("imadd"),
        },
    ),
    // The G13 document names no integer divide or remainder.
    (
        "idiv",
        VendorForms { ptx: "div.s32", hip: "a / b", sycl: "a / b", metal: "a / b", g13: None },
    ),
    (
        "imod",
        VendorForms { ptx: "rem.s32", hip: "a % b", sycl: "a % b", metal: "a % b", g13: None },
    ),
    // G13: iadd of zero and B with the N (negate) bit set.
    ("ineg", VendorForms { ptx: "neg.s32", hip: "-a", sycl: "-a", metal: "-a", g13: Some("iadd") }),
    // G13: negate with iadd, then pick a or -a with icmpsel (a < 0).
    (
        "iabs",
        VendorForms {
            ptx: "abs.s32",
            hip: "abs(a)",
            sycl: "sycl::abs(a)",
            metal: "abs(a)",
            g13: Some("iadd + icmpsel"),
        },
    ),
    // G13 min/max: icmpsel compares A, B and selects X = A or Y = B; ICondition's sign-extend
    // bit chooses a signed (imin/imax) or unsigned (umin/umax) compare.
    (
        "imin",
        VendorForms {
            ptx: "min.s32",
            hip: "min(a, b)",
            sycl: "sycl::min(a, b)",
            metal: "min(a, b)",
            g13: Some("icmpsel"),
        },
    ),
    (
        "imax",
        VendorForms {
            ptx: "max.s32",
            hip: "max(a, b)",
            sycl: "sycl::max(a, b)",
            metal: "max(a, b)",
            g13: Some("icmpsel"),
        },
    ),
    (
        "iclamp",
        VendorForms {
            ptx: "max.s32 + min.s32",
            hip: "min(max(a, b), c)",
            sycl: "sycl::clamp(a, b, c)",
            metal: "clamp(a, b, c)",
            g13: Some("icmpsel + icmpsel"),
        },
    ),
    (
        "umin",
        VendorForms {
            ptx: "min.u32",
            hip: "min(a, b)",
            sycl: "sycl::min(a, b)",
            metal: "min(a, b)",
            g13: Some("icmpsel"),
        },
    ),
    (
        "umax",
        VendorForms {
            ptx: "max.u32",
            hip: "max(a, b)",
            sycl: "sycl::max(a, b)",
            metal: "max(a, b)",
            g13: Some("icmpsel"),
        },
    ),
    // ---- F32 arithmetic (0x10-0x1F) ----
    // PTX: an explicit .rn keeps ptxas from contracting separate mul/add into fma.
    (
        "fadd",
        VendorForms {
            ptx: "add.rn.f32",
            hip: "a + b",
            sycl: "a + b",
            metal: "a + b",
            g13: Some("fadd"),
        },
    ),
    // G13: fadd with the negate source modifier (FloatSrc) on B.
    (
        "fsub",
        VendorForms {
            ptx: "sub.rn.f32",
            hip: "a - b",
            sycl: "a - b",
            metal: "a - b",
            g13: Some("fadd"),
        },
    ),
    (
        "fmul",
        VendorForms {
            ptx: "mul.rn.f32",
            hip: "a * b",
            sycl: "a * b",
            metal: "a * b",
            g13: Some("fmul"),
        },
    ),
    (
        "fma",
        VendorForms {
            ptx: "fma.rn.f32",
            hip: "fmaf(a, b, c)",
            sycl: "sycl::fma(a, b, c)",
            metal: "fma(a, b, c)",
            g13: Some("fmadd"),
        },
    ),
    // The G13 document names no floating-point divide.
    (
        "fdiv",
        VendorForms { ptx: "div.rn.f32", hip: "a / b", sycl: "a / b", metal: "a / b", g13: None },
    ),
    // G13 negation and absolute value are FloatSrc source modifiers folded into the consuming
    // float instruction; the document names no standalone instruction for them.
    ("fneg", VendorForms { ptx: "neg.f32", hip: "-a", sycl: "-a", metal: "-a", g13: None }),
    (
        "fabs",
        VendorForms {
            ptx: "abs.f32",
            hip: "fabsf(a)",
            sycl: "sycl::fabs(a)",
            metal: "fabs(a)",
            g13: None,
        },
    ),
    // G13: fcmpsel; FCondition has "NaN loses" less-than/greater-than compares for min/max.
    (
        "fmin",
        VendorForms {
            ptx: "min.f32",
            hip: "fminf(a, b)",
            sycl: "sycl::fmin(a, b)",
            metal: "fmin(a, b)",
            g13: Some("fcmpsel"),
        },
    ),
    (
        "fmax",
        VendorForms {
            ptx: "max.f32",
            hip: "fmaxf(a, b)",
            sycl: "sycl::fmax(a, b)",
            metal: "fmax(a, b)",
            g13: Some("fcmpsel"),
        },
    ),
    (
        "fclamp",
        VendorForms {
            ptx: "max.f32 + min.f32",
            hip: "fminf(fmaxf(a, b), c)",
            sycl: "sycl::clamp(a, b, c)",
            metal: "clamp(a, b, c)",
            g13: Some("fcmpsel + fcmpsel"),
        },
    ),
    // G13: the document says fast sqrt is rsqrt_special(x) * x.
    (
        "fsqrt",
        VendorForms {
            ptx: "sqrt.rn.f32",
            hip: "sqrtf(a)",
            sycl: "sycl::sqrt(a)",
            metal: "sqrt(a)",
            g13: Some("rsqrt_special + fmul"),
        },
    ),
    (
        "frsqrt",
        VendorForms {
            ptx: "rsqrt.approx.f32",
            hip: "rsqrtf(a)",
            sycl: "sycl::rsqrt(a)",
            metal: "rsqrt(a)",
            g13: Some("rsqrt"),
        },
    ),
    (
        "frcp",
        VendorForms {
            ptx: "rcp.rn.f32",
            hip: "1.0f / a",
            sycl: "1.0f / a",
            metal: "1.0f / a",
            g13: Some("rcp"),
        },
    ),
    (
        "fround.floor",
        VendorForms {
            ptx: "cvt.rmi.f32.f32",
            hip: "floorf(a)",
            sycl: "sycl::floor(a)",
            metal: "floor(a)",
            g13: Some("floor"),
        },
    ),
    (
        "fround.ceil",
        VendorForms {
            ptx: "cvt.rpi.f32.f32",
            hip: "ceilf(a)",
            sycl: "sycl::ceil(a)",
            metal: "ceil(a)",
            g13: Some("ceil"),
        },
    ),
    // Round to nearest, ties to even everywhere (G13 rint, PTX .rni). MSL/C++ round() rounds
    // ties away from zero, so it is deliberately not used.
    (
        "fround.round",
        VendorForms {
            ptx: "cvt.rni.f32.f32",
            hip: "rintf(a)",
            sycl: "sycl::rint(a)",
            metal: "rint(a)",
            g13: Some("rint"),
        },
    ),
    (
        "fround.trunc",
        VendorForms {
            ptx: "cvt.rzi.f32.f32",
            hip: "truncf(a)",
            sycl: "sycl::trunc(a)",
            metal: "trunc(a)",
            g13: Some("trunc"),
        },
    ),
    // fract(x) = x - floor(x); MSL's fract() also clamps just below 1.0. G13: floor, then fadd
    // with the negate modifier.
    (
        "ffract",
        VendorForms {
            ptx: "cvt.rmi.f32.f32 + sub.rn.f32",
            hip: "a - floorf(a)",
            sycl: "a - sycl::floor(a)",
            metal: "fract(a)",
            g13: Some("floor + fadd"),
        },
    ),
    // G13: after argument reduction to [0, 4) (4 * fract(x / tau), "a few ALU instructions"),
    // sin_pt_1 feeds sin_pt_2 and the two results are multiplied. Cosine adds a 1/4 bias in
    // the reduction's fused multiply-add (cos(x) = sin(x + tau/4)).
    (
        "ftransc.sin",
        VendorForms {
            ptx: "sin.approx.f32",
            hip: "sinf(a)",
            sycl: "sycl::sin(a)",
            metal: "sin(a)",
            g13: Some("sin_pt_1 + sin_pt_2 + fmul"),
        },
    ),
    (
        "ftransc.cos",
        VendorForms {
            ptx: "cos.approx.f32",
            hip: "cosf(a)",
            sycl: "sycl::cos(a)",
            metal: "cos(a)",
            g13: Some("sin_pt_1 + sin_pt_2 + fmul"),
        },
    ),
    (
        "ftransc.exp2",
        VendorForms {
            ptx: "ex2.approx.f32",
            hip: "exp2f(a)",
            sycl: "sycl::exp2(a)",
            metal: "exp2(a)",
            g13: Some("exp2"),
        },
    ),
    (
        "ftransc.log2",
        VendorForms {
            ptx: "lg2.approx.f32",
            hip: "log2f(a)",
            sycl: "sycl::log2(a)",
            metal: "log2(a)",
            g13: Some("log2"),
        },
    ),
    // ---- Bitwise (0x20-0x27) ----
    // G13 bitop takes a 4-bit truth table (tt0..tt3), so and/or/xor/not are all bitop.
    (
        "and",
        VendorForms {
            ptx: "and.b32",
            hip: "a & b",
            sycl: "a & b",
            metal: "a & b",
            g13: Some("bitop"),
        },
    ),
    (
        "or",
        VendorForms {
            ptx: "or.b32",
            hip: "a | b",
            sycl: "a | b",
            metal: "a | b",
            g13: Some("bitop"),
        },
    ),
    (
        "xor",
        VendorForms {
            ptx: "xor.b32",
            hip: "a ^ b",
            sycl: "a ^ b",
            metal: "a ^ b",
            g13: Some("bitop"),
        },
    ),
    ("not", VendorForms { ptx: "not.b32", hip: "~a", sycl: "~a", metal: "~a", g13: Some("bitop") }),
    // WAVE masks shift amounts to 5 bits. PTX clamps amounts above 32, C++ makes them
    // undefined and G13 masks them with 0x7F, so a non-immediate amount is ANDed with 31 first.
    // G13 shl: bfi ("Bitfield Insert/Shift Left") with mask field 0 and A = 0.
    (
        "shift.shl",
        VendorForms {
            ptx: "and.b32 + shl.b32",
            hip: "a << (b & 31)",
            sycl: "a << (b & 31)",
            metal: "a << (b & 31)",
            g13: Some("bfi"),
        },
    ),
    // G13 logical shr: bfeil ("Bitfield Extract and Insert Low/Shift Right") with mask 0, A = 0.
    (
        "shift.shr",
        VendorForms {
            ptx: "and.b32 + shr.u32",
            hip: "a >> (b & 31)",
            sycl: "a >> (b & 31)",
            metal: "a >> (b & 31)",
            g13: Some("bfeil"),
        },
    ),
    (
        "shift.sar",
        VendorForms {
            ptx: "and.b32 + shr.s32",
            hip: "a >> (b & 31)",
            sycl: "a >> (b & 31)",
            metal: "a >> (b & 31)",
            g13: Some("asr"),
        },
    ),
    (
        "bitop.bitcount",
        VendorForms {
            ptx: "popc.b32",
            hip: "__popc(a)",
            sycl: "sycl::popcount(a)",
            metal: "popcount(a)",
            g13: Some("popcount"),
        },
    ),
    // Index of the most significant set bit, -1 (0xFFFFFFFF) for zero. Despite its name, G13
    // ffs's pseudocode scans from bit 31 downwards, so it matches PTX bfind.u32.
    (
        "bitop.bitfind",
        VendorForms {
            ptx: "bfind.u32",
            hip: "31 - __clz(a)",
            sycl: "31 - sycl::clz(a)",
            metal: "31 - clz(a)",
            g13: Some("ffs"),
        },
    ),
    // SYCL 2020 has no bit-reverse builtin; DPC++ accepts the clang builtin.
    (
        "bitop.bitrev",
        VendorForms {
            ptx: "brev.b32",
            hip: "__brev(a)",
            sycl: "__builtin_bitreverse32(a)",
            metal: "reverse_bits(a)",
            g13: Some("bitrev"),
        },
    ),
    // `mask(len)` is (1 << len) - 1 (all ones for len = 32). G13 bfeil with A = 0 extracts
    // (b >> shift) & mask and bfi inserts; their field width is an immediate (m3:m2:m1), so a
    // width held in a register needs a longer sequence.
    (
        "bfe",
        VendorForms {
            ptx: "bfe.u32",
            hip: "__bitextract_u32(a, off, len)",
            sycl: "(a >> off) & mask(len)",
            metal: "extract_bits(a, off, len)",
            g13: Some("bfeil"),
        },
    ),
    (
        "bfi",
        VendorForms {
            ptx: "bfi.b32",
            hip: "__bitinsert_u32(base, ins, off, len)",
            sycl: "(base & ~(mask(len) << off)) | ((ins & mask(len)) << off)",
            metal: "insert_bits(base, ins, off, len)",
            g13: Some("bfi"),
        },
    ),
    // ---- Comparison and select (0x28-0x2F) ----
    // PTX ne is unordered (neu) to match C++ `!=` on NaN; ord/unord are num/nan. G13 has only
    // eq/lt/gt (plus invert) in ICondition; le/ge/ne are the inverted forms.
    (
        "icmp",
        VendorForms {
            ptx: "setp.{eq,ne,lt,le,gt,ge}.s32",
            hip: "p = a OP b (i32)",
            sycl: "p = a OP b (i32)",
            metal: "p = a OP b (i32)",
            g13: Some("icmpsel"),
        },
    ),
    (
        "ucmp",
        VendorForms {
            ptx: "setp.{lo,ls}.u32",
            hip: "p = a OP b (u32)",
            sycl: "p = a OP b (u32)",
            metal: "p = a OP b (u32)",
            g13: Some("icmpsel"),
        },
    ),
    // G13 FCondition has eq, lt, gt, le, ge and NaN-losing lt/gt, each invertible; ord/unord
    // need self-compares (x == x).
    (
        "fcmp",
        VendorForms {
            ptx: "setp.{eq,lt,le,gt,neu,num,nan}.f32",
            hip: "p = a OP b; ord/unord via isnan()",
            sycl: "p = a OP b; ord/unord via sycl::isnan()",
            metal: "p = a OP b; ord/unord via isnan()",
            g13: Some("fcmpsel"),
        },
    ),
    // G13: icmpsel comparing the predicate register against zero.
    (
        "select",
        VendorForms {
            ptx: "selp.b32",
            hip: "p ? a : b",
            sycl: "p ? a : b",
            metal: "p ? a : b",
            g13: Some("icmpsel"),
        },
    ),
    // G13 saturation is the S flag on a float destination (FloatDst), not an instruction.
    (
        "fsat",
        VendorForms {
            ptx: "cvt.sat.f32.f32",
            hip: "__saturatef(a)",
            sycl: "sycl::clamp(a, 0.0f, 1.0f)",
            metal: "saturate(a)",
            g13: None,
        },
    ),
    // ---- Local memory (0x30-0x37) ----
    (
        "local_load",
        VendorForms {
            ptx: "ld.shared.{u8,u16,u32,u64}",
            hip: "*(T*)(shared_mem + addr)",
            sycl: "*(T*)&local_acc[addr]",
            metal: "*(threadgroup T*)(shared_mem + addr)",
            g13: Some("threadgroup_load"),
        },
    ),
    (
        "local_store",
        VendorForms {
            ptx: "st.shared.{u8,u16,u32,u64}",
            hip: "*(T*)(shared_mem + addr) = v",
            sycl: "*(T*)&local_acc[addr] = v",
            metal: "*(threadgroup T*)(shared_mem + addr) = v",
            g13: Some("threadgroup_store"),
        },
    ),
    // ---- Device memory (0x38-0x3F) ----
    // G13 device_load is asynchronous: the result may be used after a `wait`, like WAVE's.
    (
        "device_load",
        VendorForms {
            ptx: "ld.global.{u8,u16,b32,b64,v4.b32}",
            hip: "*(T*)(buf + addr)",
            sycl: "*(T*)(buf + addr)",
            metal: "*(device T*)(buf + addr)",
            g13: Some("device_load"),
        },
    ),
    (
        "device_store",
        VendorForms {
            ptx: "st.global.{u8,u16,b32,b64,v4.b32}",
            hip: "*(T*)(buf + addr) = v",
            sycl: "*(T*)(buf + addr) = v",
            metal: "*(device T*)(buf + addr) = v",
            g13: Some("device_store"),
        },
    ),
    // ---- Atomics (0x40-0x4F) ----
    // PTX scope: atom.cta/.gpu/.sys (wave scope has no narrower PTX scope, so it uses .cta);
    // rd == 0 (non-returning) may use red.* instead. SYCL: sycl::atomic_ref<T, order, scope,
    // space> ref(*p). Metal: memory_order_relaxed. The G13 document names no atomic instructions.
    (
        "atomic_add",
        VendorForms {
            ptx: "atom.{global,shared}.add.{u32,f32}",
            hip: "atomicAdd(p, v)",
            sycl: "ref.fetch_add(v)",
            metal: "atomic_fetch_add_explicit(p, v, memory_order_relaxed)",
            g13: None,
        },
    ),
    // PTX has no atom.sub.
    (
        "atomic_sub",
        VendorForms {
            ptx: "neg.s32 + atom.{global,shared}.add.u32",
            hip: "atomicSub(p, v)",
            sycl: "ref.fetch_sub(v)",
            metal: "atomic_fetch_sub_explicit(p, v, memory_order_relaxed)",
            g13: None,
        },
    ),
    (
        "atomic_min",
        VendorForms {
            ptx: "atom.{global,shared}.min.{s32,u32}",
            hip: "atomicMin(p, v)",
            sycl: "ref.fetch_min(v)",
            metal: "atomic_fetch_min_explicit(p, v, memory_order_relaxed)",
            g13: None,
        },
    ),
    (
        "atomic_max",
        VendorForms {
            ptx: "atom.{global,shared}.max.{s32,u32}",
            hip: "atomicMax(p, v)",
            sycl: "ref.fetch_max(v)",
            metal: "atomic_fetch_max_explicit(p, v, memory_order_relaxed)",
            g13: None,
        },
    ),
    (
        "atomic_and",
        VendorForms {
            ptx: "atom.{global,shared}.and.b32",
            hip: "atomicAnd(p, v)",
            sycl: "ref.fetch_and(v)",
            metal: "atomic_fetch_and_explicit(p, v, memory_order_relaxed)",
            g13: None,
        },
    ),
    (
        "atomic_or",
        VendorForms {
            ptx: "atom.{global,shared}.or.b32",
            hip: "atomicOr(p, v)",
            sycl: "ref.fetch_or(v)",
            metal: "atomic_fetch_or_explicit(p, v, memory_order_relaxed)",
            g13: None,
        },
    ),
    (
        "atomic_xor",
        VendorForms {
            ptx: "atom.{global,shared}.xor.b32",
            hip: "atomicXor(p, v)",
            sycl: "ref.fetch_xor(v)",
            metal: "atomic_fetch_xor_explicit(p, v, memory_order_relaxed)",
            g13: None,
        },
    ),
    (
        "atomic_exchange",
        VendorForms {
            ptx: "atom.{global,shared}.exch.b32",
            hip: "atomicExch(p, v)",
            sycl: "ref.exchange(v)",
            metal: "atomic_exchange_explicit(p, v, memory_order_relaxed)",
            g13: None,
        },
    ),
    // MSL only has the weak compare-exchange, so a strong CAS is a retry loop around it.
    (
        "atomic_cas",
        VendorForms {
            ptx: "atom.{global,shared}.cas.b32",
            hip: "atomicCAS(p, cmp, v)",
            sycl: "ref.compare_exchange_strong(cmp, v)",
            metal: "atomic_compare_exchange_weak_explicit loop",
            g13: None,
        },
    ),
    // ---- Wave operations (0x50-0x5F) ----
    // G13 simd_shuffle: in the document's pseudocode each quad picks one source lane from the
    // OR of its lanes' (index & 3), not execution-masked. The document says this "works fine"
    // when the index is an immediate; arbitrary per-lane indices are uncertain.
    (
        "wave_shuffle",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.idx.b32",
            hip: "__shfl(v, lane)",
            sycl: "sycl::select_from_group(sg, v, lane)",
            metal: "simd_shuffle(v, lane)",
            g13: Some("simd_shuffle"),
        },
    ),
    // The G13 document names simd_shuffle_down only; no up or xor form.
    (
        "wave_shuffle_up",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.up.b32",
            hip: "__shfl_up(v, delta)",
            sycl: "sycl::shift_group_right(sg, v, delta)",
            metal: "simd_shuffle_up(v, delta)",
            g13: None,
        },
    ),
    (
        "wave_shuffle_down",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.down.b32",
            hip: "__shfl_down(v, delta)",
            sycl: "sycl::shift_group_left(sg, v, delta)",
            metal: "simd_shuffle_down(v, delta)",
            g13: Some("simd_shuffle_down"),
        },
    ),
    (
        "wave_shuffle_xor",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.bfly.b32",
            hip: "__shfl_xor(v, mask)",
            sycl: "sycl::permute_group_by_xor(sg, v, mask)",
            metal: "simd_shuffle_xor(v, mask)",
            g13: None,
        },
    ),
    // G13: the simd_shuffle entry notes that simd_broadcast is simd_shuffle with an immediate
    // (uniform) index.
    (
        "wave_broadcast",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.idx.b32",
            hip: "__shfl(v, lane)",
            sycl: "sycl::group_broadcast(sg, v, lane)",
            metal: "simd_broadcast(v, lane)",
            g13: Some("simd_shuffle"),
        },
    ),
    // G13 icmp_ballot: compare (here p != 0) across active lanes, broadcast the bit mask.
    (
        "wave_ballot",
        VendorForms {
            ptx: "activemask.b32 + vote.sync.ballot.b32",
            hip: "__ballot(p)",
            sycl: "sycl::ext::oneapi::group_ballot(sg, p)",
            metal: "simd_ballot(p)",
            g13: Some("icmp_ballot"),
        },
    ),
    // G13: any = ballot(p) != 0; all = ballot(!p) == 0 (icmp_ballot only counts active lanes).
    (
        "wave_any",
        VendorForms {
            ptx: "activemask.b32 + vote.sync.any.pred",
            hip: "__any(p)",
            sycl: "sycl::any_of_group(sg, p)",
            metal: "simd_any(p)",
            g13: Some("icmp_ballot + icmpsel"),
        },
    ),
    (
        "wave_all",
        VendorForms {
            ptx: "activemask.b32 + vote.sync.all.pred",
            hip: "__all(p)",
            sycl: "sycl::all_of_group(sg, p)",
            metal: "simd_all(p)",
            g13: Some("icmp_ballot + icmpsel"),
        },
    ),
    // No single PTX/HIP instruction: shuffle loops that must treat inactive lanes as identity.
    // The G13 document names no scan or reduction instruction.
    (
        "wave_prefix_sum",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.up.b32 loop",
            hip: "__shfl_up scan loop",
            sycl: "sycl::exclusive_scan_over_group(sg, v, sycl::plus<>())",
            metal: "simd_prefix_exclusive_sum(v)",
            g13: None,
        },
    ),
    // PTX redux.sync exists for 32-bit integers on sm_80+; the backend targets sm_75, so the
    // default is a butterfly (shfl.sync.bfly) loop.
    (
        "wave_reduce.add",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.bfly.b32 loop (redux.sync.add.s32 on sm_80+)",
            hip: "__shfl_xor tree (+)",
            sycl: "sycl::reduce_over_group(sg, v, sycl::plus<>())",
            metal: "simd_sum(v)",
            g13: None,
        },
    ),
    (
        "wave_reduce.min",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.bfly.b32 loop (redux.sync.min.s32 on sm_80+)",
            hip: "__shfl_xor tree (min)",
            sycl: "sycl::reduce_over_group(sg, v, sycl::minimum<>())",
            metal: "simd_min(v)",
            g13: None,
        },
    ),
    (
        "wave_reduce.max",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.bfly.b32 loop (redux.sync.max.s32 on sm_80+)",
            hip: "__shfl_xor tree (max)",
            sycl: "sycl::reduce_over_group(sg, v, sycl::maximum<>())",
            metal: "simd_max(v)",
            g13: None,
        },
    ),
    (
        "wave_reduce.and",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.bfly.b32 loop (redux.sync.and.b32 on sm_80+)",
            hip: "__shfl_xor tree (&)",
            sycl: "sycl::reduce_over_group(sg, v, sycl::bit_and<>())",
            metal: "simd_and(v)",
            g13: None,
        },
    ),
    (
        "wave_reduce.or",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.bfly.b32 loop (redux.sync.or.b32 on sm_80+)",
            hip: "__shfl_xor tree (|)",
            sycl: "sycl::reduce_over_group(sg, v, sycl::bit_or<>())",
            metal: "simd_or(v)",
            g13: None,
        },
    ),
    (
        "wave_reduce.xor",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.bfly.b32 loop (redux.sync.xor.b32 on sm_80+)",
            hip: "__shfl_xor tree (^)",
            sycl: "sycl::reduce_over_group(sg, v, sycl::bit_xor<>())",
            metal: "simd_xor(v)",
            g13: None,
        },
    ),
    (
        "wave_shuffle_idx",
        VendorForms {
            ptx: "activemask.b32 + shfl.sync.idx.b32",
            hip: "__shfl(v, lane)",
            sycl: "sycl::select_from_group(sg, v, lane)",
            metal: "simd_shuffle(v, lane)",
            g13: Some("simd_shuffle"),
        },
    ),
    // ---- Control flow and synchronisation (0x60-0x6F) ----
    // G13 rows use the r0l execution-mask counter stack ("Conditional Execution" and
    // "Execution Mask Stack Instructions"). Levels: if = 1; a loop pushes 2 (continue, break).
    // if: if_icmp (p != 0, n = 1) sets r0l = 1 on lanes where p is false and adds n to lanes
    // that are already inactive; jmp_exec_none skips the body if no lane is left.
    (
        "if",
        VendorForms {
            ptx: "@!p bra ELSE",
            hip: "if (p) {",
            sycl: "if (p) {",
            metal: "if (p) {",
            g13: Some("if_icmp + jmp_exec_none"),
        },
    ),
    // else: else_icmp with an always-true compare (n = 1) turns r0l 0 -> 1 and 1 -> 0, leaving
    // lanes that were inactive before the `if` (r0l >= 2) alone.
    (
        "else",
        VendorForms {
            ptx: "bra ENDIF; ELSE:",
            hip: "} else {",
            sycl: "} else {",
            metal: "} else {",
            g13: Some("else_icmp + jmp_exec_none"),
        },
    ),
    // endif: pop_exec 1 decrements every lane's r0l (floor 0); lanes reaching 0 are active.
    (
        "endif",
        VendorForms { ptx: "ENDIF:", hip: "}", sycl: "}", metal: "}", g13: Some("pop_exec") },
    ),
    // loop: if_icmp with an always-true compare and n = 2 adds two levels to lanes that are
    // already inactive and keeps active lanes active. This prologue is derived from the
    // pseudocode; the document does not spell one out.
    (
        "loop",
        VendorForms {
            ptx: "LOOP:",
            hip: "while (true) {",
            sycl: "while (true) {",
            metal: "while (true) {",
            g13: Some("if_icmp"),
        },
    ),
    // break: per the document, conditionally move the number of levels to leave (open ifs + 2)
    // into r0l, then pop_exec 0 deactivates every lane whose r0l is now non-zero. icmpsel is
    // the document's conditional move.
    (
        "break",
        VendorForms {
            ptx: "@p bra LOOP_END",
            hip: "if (p) break;",
            sycl: "if (p) break;",
            metal: "if (p) break;",
            g13: Some("icmpsel + pop_exec"),
        },
    ),
    // continue: the same with (open ifs + 1), so the lane is still below the loop's break level.
    (
        "continue",
        VendorForms {
            ptx: "@p bra LOOP_CONT",
            hip: "if (p) continue;",
            sycl: "if (p) continue;",
            metal: "if (p) continue;",
            g13: Some("icmpsel + pop_exec"),
        },
    ),
    // endloop: while_icmp (always-true compare, n = 2) re-activates lanes with r0l < 2
    // (active or continued); jmp_exec_any jumps back while any lane is active; after the loop,
    // pop_exec 2 re-activates lanes that broke out (r0l == 2).
    (
        "endloop",
        VendorForms {
            ptx: "LOOP_CONT: bra LOOP; LOOP_END:",
            hip: "}",
            sycl: "}",
            metal: "}",
            g13: Some("while_icmp + jmp_exec_any + pop_exec"),
        },
    ),
    // G13 has a register call and a pc-relative call that writes the link register r1 = pc + 6.
    ("call", VendorForms { ptx: "call", hip: "f()", sycl: "f()", metal: "f()", g13: Some("call") }),
    (
        "return",
        VendorForms {
            ptx: "ret",
            hip: "return",
            sycl: "return",
            metal: "return",
            g13: Some("ret"),
        },
    ),
    (
        "barrier",
        VendorForms {
            ptx: "bar.sync 0",
            hip: "__syncthreads()",
            sycl: "sycl::group_barrier(wg)",
            metal: "threadgroup_barrier(mem_flags::mem_threadgroup)",
            g13: Some("threadgroup_barrier"),
        },
    ),
    // PTX and HIP fences are full fences: acquire and release use the acq_rel form. The spec's
    // vendor table lists Apple's fence as "wait_for_loads", which is the G13 `wait`
    // pseudocode; that only waits for loads, so no G13 fence instruction is recorded.
    (
        "fence",
        VendorForms {
            ptx: "fence.acq_rel.{cta,gpu,sys}",
            hip: "__threadfence_block() / __threadfence() / __threadfence_system()",
            sycl: "sycl::atomic_fence(order, scope)",
            metal: "atomic_thread_fence(mem_flags::mem_device, order, scope)",
            g13: None,
        },
    ),
    // Loads in PTX and the C++ languages are synchronous from the program's view, so nothing
    // is emitted. G13 `wait` is wait_for_loads().
    (
        "wait",
        VendorForms {
            ptx: "(nothing: ld is synchronous)",
            hip: "(nothing)",
            sycl: "(nothing)",
            metal: "(nothing)",
            g13: Some("wait"),
        },
    ),
    // G13 stop is end_execution(). WAVE halt ends one thread; in divergent code a lane would
    // instead be deactivated through r0l.
    (
        "halt",
        VendorForms {
            ptx: "exit",
            hip: "return",
            sycl: "return",
            metal: "return",
            g13: Some("stop"),
        },
    ),
    // ---- Conversions (0x70-0x7F) ----
    // G13 `convert` has mode/round fields; the document leaves its semantics as TODO. PTX
    // float-to-int saturates (NaN gives 0); a C++ cast of an out-of-range value is undefined.
    (
        "cvt_f32_i32",
        VendorForms {
            ptx: "cvt.rn.f32.s32",
            hip: "(float)a",
            sycl: "static_cast<float>(a)",
            metal: "float(a)",
            g13: Some("convert"),
        },
    ),
    (
        "cvt_f32_u32",
        VendorForms {
            ptx: "cvt.rn.f32.u32",
            hip: "(float)a",
            sycl: "static_cast<float>(a)",
            metal: "float(a)",
            g13: Some("convert"),
        },
    ),
    (
        "cvt_i32_f32",
        VendorForms {
            ptx: "cvt.rzi.s32.f32",
            hip: "(int32_t)a",
            sycl: "static_cast<int32_t>(a)",
            metal: "int(a)",
            g13: Some("convert"),
        },
    ),
    (
        "cvt_u32_f32",
        VendorForms {
            ptx: "cvt.rzi.u32.f32",
            hip: "(uint32_t)a",
            sycl: "static_cast<uint32_t>(a)",
            metal: "uint(a)",
            g13: Some("convert"),
        },
    ),
    (
        "cvt_f32_f16",
        VendorForms {
            ptx: "cvt.f32.f16",
            hip: "__half2float(a)",
            sycl: "static_cast<float>(a)",
            metal: "float(a)",
            g13: Some("convert"),
        },
    ),
    (
        "cvt_f16_f32",
        VendorForms {
            ptx: "cvt.rn.f16.f32",
            hip: "__float2half(a)",
            sycl: "sycl::half(a)",
            metal: "half(a)",
            g13: Some("convert"),
        },
    ),
    // The G13 document describes no 64-bit float format.
    (
        "cvt_f32_f64",
        VendorForms {
            ptx: "cvt.rn.f32.f64",
            hip: "(float)a",
            sycl: "static_cast<float>(a)",
            metal: "unsupported (no f64 in MSL)",
            g13: None,
        },
    ),
    (
        "cvt_f64_f32",
        VendorForms {
            ptx: "cvt.f64.f32",
            hip: "(double)a",
            sycl: "static_cast<double>(a)",
            metal: "unsupported (no f64 in MSL)",
            g13: None,
        },
    ),
    // ---- F16 arithmetic (0x80-0x8F) ----
    // G13 16-bit float ops work on 16-bit register halves (rNl/rNh). The document names no
    // packed two-lane form, so the packed ops are one 16-bit op per half.
    (
        "hadd",
        VendorForms {
            ptx: "add.rn.f16",
            hip: "__hadd(a, b)",
            sycl: "a + b",
            metal: "a + b",
            g13: Some("fadd16"),
        },
    ),
    (
        "hsub",
        VendorForms {
            ptx: "sub.rn.f16",
            hip: "__hsub(a, b)",
            sycl: "a - b",
            metal: "a - b",
            g13: Some("fadd16"),
        },
    ),
    (
        "hmul",
        VendorForms {
            ptx: "mul.rn.f16",
            hip: "__hmul(a, b)",
            sycl: "a * b",
            metal: "a * b",
            g13: Some("fmul16"),
        },
    ),
    (
        "hma",
        VendorForms {
            ptx: "fma.rn.f16",
            hip: "__hfma(a, b, c)",
            sycl: "sycl::fma(a, b, c)",
            metal: "fma(a, b, c)",
            g13: Some("fmadd16"),
        },
    ),
    (
        "hadd2",
        VendorForms {
            ptx: "add.rn.f16x2",
            hip: "__hadd2(a, b)",
            sycl: "a + b (sycl::half2)",
            metal: "a + b (half2)",
            g13: Some("fadd16 (once per half)"),
        },
    ),
    (
        "hmul2",
        VendorForms {
            ptx: "mul.rn.f16x2",
            hip: "__hmul2(a, b)",
            sycl: "a * b (sycl::half2)",
            metal: "a * b (half2)",
            g13: Some("fmul16 (once per half)"),
        },
    ),
    (
        "hma2",
        VendorForms {
            ptx: "fma.rn.f16x2",
            hip: "__hfma2(a, b, c)",
            sycl: "sycl::fma(a, b, c) (sycl::half2)",
            metal: "fma(a, b, c) (half2)",
            g13: Some("fmadd16 (once per half)"),
        },
    ),
    // ---- F64 arithmetic (0x90-0x9F, CAP_F64) ----
    // SYCL needs a device with sycl::aspect::fp64. Neither MSL nor the G13 document has f64.
    (
        "dadd",
        VendorForms {
            ptx: "add.rn.f64",
            hip: "a + b",
            sycl: "a + b",
            metal: "unsupported (no f64 in MSL)",
            g13: None,
        },
    ),
    (
        "dsub",
        VendorForms {
            ptx: "sub.rn.f64",
            hip: "a - b",
            sycl: "a - b",
            metal: "unsupported (no f64 in MSL)",
            g13: None,
        },
    ),
    (
        "dmul",
        VendorForms {
            ptx: "mul.rn.f64",
            hip: "a * b",
            sycl: "a * b",
            metal: "unsupported (no f64 in MSL)",
            g13: None,
        },
    ),
    (
        "dma",
        VendorForms {
            ptx: "fma.rn.f64",
            hip: "fma(a, b, c)",
            sycl: "sycl::fma(a, b, c)",
            metal: "unsupported (no f64 in MSL)",
            g13: None,
        },
    ),
    (
        "ddiv",
        VendorForms {
            ptx: "div.rn.f64",
            hip: "a / b",
            sycl: "a / b",
            metal: "unsupported (no f64 in MSL)",
            g13: None,
        },
    ),
    (
        "dsqrt",
        VendorForms {
            ptx: "sqrt.rn.f64",
            hip: "sqrt(a)",
            sycl: "sycl::sqrt(a)",
            metal: "unsupported (no f64 in MSL)",
            g13: None,
        },
    ),
    // ---- Matrix MMA (0xA0-0xAF, CAP_MMA) ----
    // The G13 document names no matrix instruction.
    (
        "mma_f16_f32",
        VendorForms {
            ptx: "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
            hip: "__builtin_amdgcn_mfma_f32_16x16x16f16 (CDNA) / __builtin_amdgcn_wmma_f32_16x16x16_f16_w32 (RDNA3)",
            sycl: "sycl::ext::oneapi::experimental::matrix::joint_matrix_mad",
            metal: "simdgroup_multiply_accumulate (simdgroup_half8x8 -> simdgroup_float8x8)",
            g13: None,
        },
    ),
    (
        "mma_bf16_f32",
        VendorForms {
            ptx: "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (sm_80+)",
            hip: "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k (CDNA) / __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32 (RDNA3)",
            sycl: "sycl::ext::oneapi::experimental::matrix::joint_matrix_mad",
            metal: "simdgroup_multiply_accumulate (bfloat, MSL 3.1+)",
            g13: None,
        },
    ),
    // PTX has no full-f32-input mma; the tf32 form (sm_80+) rounds its inputs.
    (
        "mma_f32_f32",
        VendorForms {
            ptx: "fma.rn.f32 loop (tf32 mma.sync on sm_80+ rounds inputs)",
            hip: "__builtin_amdgcn_mfma_f32_16x16x4f32 (CDNA)",
            sycl: "sycl::ext::oneapi::experimental::matrix::joint_matrix_mad",
            metal: "simdgroup_multiply_accumulate (simdgroup_float8x8)",
            g13: None,
        },
    ),
    // ---- Miscellaneous (0xF0-0xFF) ----
    // The G13 document's mov only moves 16- or 32-bit immediates; no register-to-register move
    // is named.
    ("mov", VendorForms { ptx: "mov.b32", hip: "a", sycl: "a", metal: "a", g13: None }),
    (
        "mov_imm",
        VendorForms {
            ptx: "mov.b32 (immediate)",
            hip: "imm",
            sycl: "imm",
            metal: "imm",
            g13: Some("mov"),
        },
    ),
    // Special registers: thread/workgroup ids and sizes, lane id. WAVE's wave_id is
    // thread index / wave width on all four (PTX %warpid is a physical slot, not the index).
    (
        "mov_special",
        VendorForms {
            ptx: "mov.u32 %tid / %ctaid / %ntid / %nctaid / %laneid",
            hip: "threadIdx / blockIdx / blockDim / gridDim / __lane_id()",
            sycl: "it.get_local_id / get_group / get_local_range / get_group_range / sg.get_local_id()",
            metal: "[[thread_position_in_threadgroup]] etc. / [[thread_index_in_simdgroup]]",
            g13: Some("get_sr"),
        },
    ),
    // The G13 document names no nop; PTX has none, so nothing is emitted.
    (
        "nop",
        VendorForms {
            ptx: "(nothing)",
            hip: "(nothing)",
            sycl: "(nothing)",
            metal: "(nothing)",
            g13: None,
        },
    ),
];

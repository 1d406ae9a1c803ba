//! Apple G13: which native instruction realises each WAVE instruction, as named in the
//! reverse-engineered G13 (M1) ISA document.
//!
//! G13 is the one vendor column of `docs/isa/reference.md` that no backend writes, so it is
//! kept here by hand. The PTX, HIP, SYCL and Metal columns are not kept anywhere: `cargo xtask
//! codegen` translates a one-instruction kernel with each backend and shows what it emits, so
//! they cannot drift from the code.
//!
//! One row per canonical WAVE mnemonic (WAVE ISA spec v0.3, Appendix A). Where the form depends
//! on the modifier, the key carries it as a suffix (`fround.floor`, `ftransc.sin`, `shift.sar`,
//! `bitop.bitfind`, `wave_reduce.min`, ...). Only mnemonics that the document names are used;
//! `None` where it names none. Where a WAVE operation is a short sequence or a special use of
//! named instructions (a modifier, an immediate, a zero operand), the `//` comment on the row
//! says how, based on the document's pseudocode. G13 has no predicate registers in that
//! document, so predicates live in ordinary registers and comparisons are done by
//! compare-and-select (`icmpsel`/`fcmpsel`) or folded into `if_icmp`/`while_icmp`. Control flow
//! uses the per-lane execution-mask counter stack in `r0l` (see `docs/isa/vendor-notes.md`).

/// The G13 instruction for each WAVE form, by canonical mnemonic (with a modifier suffix where
/// the form differs per modifier).
pub static G13_FORMS: &[(&str, Option<&str>)] = &[
    // ---- Integer arithmetic (0x00-0x0F) ----
    ("iadd", Some("iadd")),
    // G13 iadd is "Integer Add or Subtract": its N bit negates B.
    ("isub", Some("iadd")),
    // G13 imadd computes a * b + c; a multiply uses an immediate zero addend.
    ("imul", Some("imadd")),
    // G13 imadd has a 64-bit destination (ALUDst64) and sign-extending sources (MulSrc), so the
    // full product lands in a register pair whose high register is the result; the document
    // names no separate multiply-high. Signedness follows the i32 default (u32: mul.hi.u32,
    // __umulhi).
    ("imul_hi", Some("imadd")),
    ("imad", Some("imadd")),
    // The G13 document names no integer divide or remainder.
    ("idiv", None),
    ("imod", None),
    // G13: iadd of zero and B with the N (negate) bit set.
    ("ineg", Some("iadd")),
    // G13: negate with iadd, then pick a or -a with icmpsel (a < 0).
    ("iabs", Some("iadd + icmpsel")),
    // G13 min/max: icmpsel compares A, B and selects X = A or Y = B; ICondition's sign-extend
    // bit chooses a signed (imin/imax) or unsigned (umin/umax) compare.
    ("imin", Some("icmpsel")),
    ("imax", Some("icmpsel")),
    ("iclamp", Some("icmpsel + icmpsel")),
    ("umin", Some("icmpsel")),
    ("umax", Some("icmpsel")),
    // ---- F32 arithmetic (0x10-0x1F) ----
    // PTX: an explicit .rn keeps ptxas from contracting separate mul/add into fma.
    ("fadd", Some("fadd")),
    // G13: fadd with the negate source modifier (FloatSrc) on B.
    ("fsub", Some("fadd")),
    ("fmul", Some("fmul")),
    ("fma", Some("fmadd")),
    // The G13 document names no floating-point divide.
    ("fdiv", None),
    // G13 negation and absolute value are FloatSrc source modifiers folded into the consuming
    // float instruction; the document names no standalone instruction for them.
    ("fneg", None),
    ("fabs", None),
    // G13: fcmpsel; FCondition has "NaN loses" less-than/greater-than compares for min/max.
    ("fmin", Some("fcmpsel")),
    ("fmax", Some("fcmpsel")),
    ("fclamp", Some("fcmpsel + fcmpsel")),
    // G13: the document says fast sqrt is rsqrt_special(x) * x.
    ("fsqrt", Some("rsqrt_special + fmul")),
    ("frsqrt", Some("rsqrt")),
    ("frcp", Some("rcp")),
    ("fround.floor", Some("floor")),
    ("fround.ceil", Some("ceil")),
    // Round to nearest, ties to even everywhere (G13 rint, PTX .rni). MSL/C++ round() rounds
    // ties away from zero, so it is deliberately not used.
    ("fround.round", Some("rint")),
    ("fround.trunc", Some("trunc")),
    // fract(x) = x - floor(x); MSL's fract() also clamps just below 1.0. G13: floor, then fadd
    // with the negate modifier.
    ("ffract", Some("floor + fadd")),
    // G13: after argument reduction to [0, 4) (4 * fract(x / tau), "a few ALU instructions"),
    // sin_pt_1 feeds sin_pt_2 and the two results are multiplied. Cosine adds a 1/4 bias in
    // the reduction's fused multiply-add (cos(x) = sin(x + tau/4)).
    ("ftransc.sin", Some("sin_pt_1 + sin_pt_2 + fmul")),
    ("ftransc.cos", Some("sin_pt_1 + sin_pt_2 + fmul")),
    ("ftransc.exp2", Some("exp2")),
    ("ftransc.log2", Some("log2")),
    // ---- Bitwise (0x20-0x27) ----
    // G13 bitop takes a 4-bit truth table (tt0..tt3), so and/or/xor/not are all bitop.
    ("and", Some("bitop")),
    ("or", Some("bitop")),
    ("xor", Some("bitop")),
    ("not", Some("bitop")),
    // WAVE masks shift amounts to 5 bits. PTX clamps amounts above 32, C++ makes them
    // undefined and G13 masks them with 0x7F, so a non-immediate amount is ANDed with 31 first.
    // G13 shl: bfi ("Bitfield Insert/Shift Left") with mask field 0 and A = 0.
    ("shift.shl", Some("bfi")),
    // G13 logical shr: bfeil ("Bitfield Extract and Insert Low/Shift Right") with mask 0, A = 0.
    ("shift.shr", Some("bfeil")),
    ("shift.sar", Some("asr")),
    ("bitop.bitcount", Some("popcount")),
    // Index of the most significant set bit, -1 (0xFFFFFFFF) for zero. Despite its name, G13
    // ffs's pseudocode scans from bit 31 downwards, so it matches PTX bfind.u32.
    ("bitop.bitfind", Some("ffs")),
    // SYCL 2020 has no bit-reverse builtin; DPC++ accepts the clang builtin.
    ("bitop.bitrev", Some("bitrev")),
    // `mask(len)` is (1 << len) - 1 (all ones for len = 32). G13 bfeil with A = 0 extracts
    // (b >> shift) & mask and bfi inserts; their field width is an immediate (m3:m2:m1), so a
    // width held in a register needs a longer sequence.
    ("bfe", Some("bfeil")),
    ("bfi", Some("bfi")),
    // ---- Comparison and select (0x28-0x2F) ----
    // PTX ne is unordered (neu) to match C++ `!=` on NaN; ord/unord are num/nan. G13 has only
    // eq/lt/gt (plus invert) in ICondition; le/ge/ne are the inverted forms.
    ("icmp", Some("icmpsel")),
    ("ucmp", Some("icmpsel")),
    // G13 FCondition has eq, lt, gt, le, ge and NaN-losing lt/gt, each invertible; ord/unord
    // need self-compares (x == x).
    ("fcmp", Some("fcmpsel")),
    // G13: icmpsel comparing the predicate register against zero.
    ("select", Some("icmpsel")),
    // G13 saturation is the S flag on a float destination (FloatDst), not an instruction.
    ("fsat", None),
    // ---- Local memory (0x30-0x37) ----
    ("local_load", Some("threadgroup_load")),
    ("local_store", Some("threadgroup_store")),
    // ---- Device memory (0x38-0x3F) ----
    // G13 device_load is asynchronous: the result may be used after a `wait`, like WAVE's.
    ("device_load", Some("device_load")),
    ("device_store", Some("device_store")),
    // ---- Atomics (0x40-0x4F) ----
    // PTX scope: atom.cta/.gpu/.sys (wave scope has no narrower PTX scope, so it uses .cta);
    // rd == 0 (non-returning) may use red.* instead. SYCL: sycl::atomic_ref<T, order, scope,
    // space> ref(*p). Metal: memory_order_relaxed. The G13 document names no atomic instructions.
    ("atomic_add", None),
    // PTX has no atom.sub.
    ("atomic_sub", None),
    ("atomic_min", None),
    ("atomic_max", None),
    ("atomic_and", None),
    ("atomic_or", None),
    ("atomic_xor", None),
    ("atomic_exchange", None),
    // MSL only has the weak compare-exchange, so a strong CAS is a retry loop around it.
    ("atomic_cas", None),
    // ---- Wave operations (0x50-0x5F) ----
    // G13 simd_shuffle: in the document's pseudocode each quad picks one source lane from the
    // OR of its lanes' (index & 3), not execution-masked. The document says this "works fine"
    // when the index is an immediate; arbitrary per-lane indices are uncertain.
    ("wave_shuffle", Some("simd_shuffle")),
    // The G13 document names simd_shuffle_down only; no up or xor form.
    ("wave_shuffle_up", None),
    ("wave_shuffle_down", Some("simd_shuffle_down")),
    ("wave_shuffle_xor", None),
    // G13: the simd_shuffle entry notes that simd_broadcast is simd_shuffle with an immediate
    // (uniform) index.
    ("wave_broadcast", Some("simd_shuffle")),
    // G13 icmp_ballot: compare (here p != 0) across active lanes, broadcast the bit mask.
    ("wave_ballot", Some("icmp_ballot")),
    // G13: any = ballot(p) != 0; all = ballot(!p) == 0 (icmp_ballot only counts active lanes).
    ("wave_any", Some("icmp_ballot + icmpsel")),
    ("wave_all", Some("icmp_ballot + icmpsel")),
    // No single PTX/HIP instruction: shuffle loops that must treat inactive lanes as identity.
    // The G13 document names no scan or reduction instruction.
    ("wave_prefix_sum", None),
    // PTX redux.sync exists for 32-bit integers on sm_80+; the backend targets sm_75, so the
    // default is a butterfly (shfl.sync.bfly) loop.
    ("wave_reduce.add", None),
    ("wave_reduce.min", None),
    ("wave_reduce.max", None),
    ("wave_reduce.and_bits", None),
    ("wave_reduce.or_bits", None),
    ("wave_reduce.xor_bits", None),
    ("wave_shuffle_idx", Some("simd_shuffle")),
    // ---- Control flow and synchronisation (0x60-0x6F) ----
    // G13 rows use the r0l execution-mask counter stack ("Conditional Execution" and
    // "Execution Mask Stack Instructions"). Levels: if = 1; a loop pushes 2 (continue, break).
    // if: if_icmp (p != 0, n = 1) sets r0l = 1 on lanes where p is false and adds n to lanes
    // that are already inactive; jmp_exec_none skips the body if no lane is left.
    ("if", Some("if_icmp + jmp_exec_none")),
    // else: else_icmp with an always-true compare (n = 1) turns r0l 0 -> 1 and 1 -> 0, leaving
    // lanes that were inactive before the `if` (r0l >= 2) alone.
    ("else", Some("else_icmp + jmp_exec_none")),
    // endif: pop_exec 1 decrements every lane's r0l (floor 0); lanes reaching 0 are active.
    ("endif", Some("pop_exec")),
    // loop: if_icmp with an always-true compare and n = 2 adds two levels to lanes that are
    // already inactive and keeps active lanes active. This prologue is derived from the
    // pseudocode; the document does not spell one out.
    ("loop", Some("if_icmp")),
    // break: per the document, conditionally move the number of levels to leave (open ifs + 2)
    // into r0l, then pop_exec 0 deactivates every lane whose r0l is now non-zero. icmpsel is
    // the document's conditional move.
    ("break", Some("icmpsel + pop_exec")),
    // continue: the same with (open ifs + 1), so the lane is still below the loop's break level.
    ("continue", Some("icmpsel + pop_exec")),
    // endloop: while_icmp (always-true compare, n = 2) re-activates lanes with r0l < 2
    // (active or continued); jmp_exec_any jumps back while any lane is active; after the loop,
    // pop_exec 2 re-activates lanes that broke out (r0l == 2).
    ("endloop", Some("while_icmp + jmp_exec_any + pop_exec")),
    // G13 has a register call and a pc-relative call that writes the link register r1 = pc + 6.
    ("call", Some("call")),
    ("return", Some("ret")),
    ("barrier", Some("threadgroup_barrier")),
    // PTX and HIP fences are full fences: acquire and release use the acq_rel form. The spec's
    // vendor table lists Apple's fence as "wait_for_loads", which is the G13 `wait`
    // pseudocode; that only waits for loads, so no G13 fence instruction is recorded.
    ("fence", None),
    // Loads in PTX and the C++ languages are synchronous from the program's view, so nothing
    // is emitted. G13 `wait` is wait_for_loads().
    ("wait", Some("wait")),
    // G13 stop is end_execution(). WAVE halt ends one thread; in divergent code a lane would
    // instead be deactivated through r0l.
    ("halt", Some("stop")),
    // ---- Conversions (0x70-0x7F) ----
    // G13 `convert` has mode/round fields; the document leaves its semantics as TODO. PTX
    // float-to-int saturates (NaN gives 0); a C++ cast of an out-of-range value is undefined.
    ("cvt_f32_i32", Some("convert")),
    ("cvt_f32_u32", Some("convert")),
    ("cvt_i32_f32", Some("convert")),
    ("cvt_u32_f32", Some("convert")),
    ("cvt_f32_f16", Some("convert")),
    ("cvt_f16_f32", Some("convert")),
    // The G13 document describes no bfloat16 format.
    ("cvt_f32_bf16", None),
    ("cvt_bf16_f32", None),
    // The G13 document describes no 64-bit float format.
    ("cvt_f32_f64", None),
    ("cvt_f64_f32", None),
    // ---- F16 arithmetic (0x80-0x8F) ----
    // G13 16-bit float ops work on 16-bit register halves (rNl/rNh). The document names no
    // packed two-lane form, so the packed ops are one 16-bit op per half.
    ("hadd", Some("fadd16")),
    ("hsub", Some("fadd16")),
    ("hmul", Some("fmul16")),
    ("hma", Some("fmadd16")),
    ("hadd2", Some("fadd16 (once per half)")),
    ("hmul2", Some("fmul16 (once per half)")),
    ("hma2", Some("fmadd16 (once per half)")),
    // No bfloat16 arithmetic in the G13 document.
    ("badd", None),
    ("bsub", None),
    ("bmul", None),
    ("bma", None),
    ("badd2", None),
    ("bmul2", None),
    ("bma2", None),
    // ---- F64 arithmetic (0x90-0x9F, CAP_F64) ----
    // SYCL needs a device with sycl::aspect::fp64. Neither MSL nor the G13 document has f64.
    ("dadd", None),
    ("dsub", None),
    ("dmul", None),
    ("dma", None),
    ("ddiv", None),
    ("dsqrt", None),
    // ---- Matrix MMA (0xA0-0xAF, CAP_MMA) ----
    // The G13 document names no matrix instruction.
    ("mma_f16_f32", None),
    ("mma_bf16_f32", None),
    // PTX has no full-f32-input mma; the tf32 form (sm_80+) rounds its inputs.
    ("mma_f32_f32", None),
    // ---- Miscellaneous (0xF0-0xFF) ----
    // The G13 document's mov only moves 16- or 32-bit immediates; no register-to-register move
    // is named.
    ("mov", None),
    ("mov_imm", Some("mov")),
    // Special registers: thread/workgroup ids and sizes, lane id. WAVE's wave_id is
    // thread index / wave width on all four (PTX %warpid is a physical slot, not the index).
    ("mov_special", Some("get_sr")),
    // The G13 document names no nop; PTX has none, so nothing is emitted.
    ("nop", None),
];

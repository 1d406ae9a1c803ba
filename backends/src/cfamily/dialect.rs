//! What differs between HIP, SYCL and Metal: the spellings of bit casts, pointers, votes,
//! barriers and types, and each dialect's prelude of helper functions.

use super::Dialect;

impl Dialect {
    pub(super) fn name(self) -> &'static str {
        match self {
            Dialect::Hip => "hip",
            Dialect::Sycl => "sycl",
            Dialect::Metal => "metal",
        }
    }

    /// Qualifiers of helper functions.
    pub(super) fn helper(self) -> &'static str {
        match self {
            Dialect::Hip => "__device__ static inline",
            Dialect::Sycl | Dialect::Metal => "static inline",
        }
    }

    /// The pointer to `T` in device memory, at byte address `at`.
    pub(super) fn device_ptr(self, ty: &str, at: &str) -> String {
        match self {
            Dialect::Metal => format!("((device {ty}*)(wave_mem + {at}))"),
            _ => format!("(({ty}*)(wave_mem + {at}))"),
        }
    }

    pub(super) fn local_ptr(self, ty: &str, at: &str) -> String {
        match self {
            Dialect::Metal => format!("((threadgroup {ty}*)(wave_local + {at}))"),
            _ => format!("(({ty}*)(wave_local + {at}))"),
        }
    }

    pub(super) fn any(self, x: &str) -> String {
        match self {
            Dialect::Hip => format!("__any({x})"),
            Dialect::Sycl => format!("sycl::any_of_group(wave_sg, {x})"),
            Dialect::Metal => format!("simd_any({x})"),
        }
    }

    pub(super) fn barrier(self) -> &'static str {
        match self {
            Dialect::Hip => "__syncthreads();",
            Dialect::Sycl => "sycl::group_barrier(wave_item.get_group());",
            Dialect::Metal => {
                "threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);"
            }
        }
    }

    pub(super) fn types(self) -> (&'static str, &'static str, &'static str, &'static str) {
        // (u32, i32, u64, i64)
        match self {
            Dialect::Metal => ("uint", "int", "ulong", "long"),
            _ => ("uint32_t", "int32_t", "uint64_t", "int64_t"),
        }
    }

    /// The prelude: includes and helper functions.
    pub(super) fn prelude(self, wave_width: Option<u32>) -> String {
        let q = self.helper();
        let (u32t, i32t, u64t, i64t) = self.types();
        let mut s = String::new();
        match self {
            Dialect::Hip => {
                s.push_str("#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n#include <stdint.h>\n\n");
                s.push_str("// Each WAVE instruction rounds once: no fusing of a multiply and an add.\n#pragma clang fp contract(off)\n\n");
                s.push_str(&format!(
                    "{q} float wave_f(uint32_t x) {{ return __uint_as_float(x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} uint32_t wave_u(float x) {{ return __float_as_uint(x); }}\n"
                ));
                s.push_str(&format!("{q} double wave_d(uint32_t lo, uint32_t hi) {{ return __hiloint2double((int)hi, (int)lo); }}\n"));
                s.push_str(&format!(
                    "{q} uint32_t wave_dlo(double x) {{ return (uint32_t)__double2loint(x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} uint32_t wave_dhi(double x) {{ return (uint32_t)__double2hiint(x); }}\n"
                ));
                s.push_str(&format!("{q} __half wave_h(uint32_t x, bool hi) {{ return __ushort_as_half((unsigned short)(hi ? x >> 16 : x)); }}\n"));
                s.push_str(&format!("{q} uint32_t wave_set_h(uint32_t old, bool hi, __half h) {{ uint32_t b = __half_as_ushort(h); return hi ? (old & 0xFFFFu) | (b << 16) : (old & 0xFFFF0000u) | b; }}\n"));
                s.push_str(&format!(
                    "{q} float wave_h2f(__half h) {{ return __half2float(h); }}\n"
                ));
                s.push_str(&format!(
                    "{q} __half wave_f2h(float x) {{ return __float2half_rn(x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} __half wave_hadd(__half a, __half b) {{ return __hadd(a, b); }}\n"
                ));
                s.push_str(&format!(
                    "{q} __half wave_hsub(__half a, __half b) {{ return __hsub(a, b); }}\n"
                ));
                s.push_str(&format!(
                    "{q} __half wave_hmul(__half a, __half b) {{ return __hmul(a, b); }}\n"
                ));
                s.push_str(&format!("{q} __half wave_hfma(__half a, __half b, __half c) {{ return __hfma(a, b, c); }}\n"));
                s.push_str(&format!(
                    "{q} uint32_t wave_clz(uint32_t x) {{ return (uint32_t)__clz((int)x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} uint32_t wave_popc(uint32_t x) {{ return (uint32_t)__popc(x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} uint32_t wave_brev(uint32_t x) {{ return __brev(x); }}\n"
                ));
                s.push_str(&format!("{q} float wave_floor(float x) {{ return floorf(x); }}\n"));
                s.push_str(&format!("{q} float wave_ceil(float x) {{ return ceilf(x); }}\n"));
                s.push_str(&format!("{q} float wave_rint(float x) {{ return rintf(x); }}\n"));
                s.push_str(&format!("{q} float wave_trunc(float x) {{ return truncf(x); }}\n"));
                s.push_str(&format!(
                    "{q} float wave_fma(float a, float b, float c) {{ return fmaf(a, b, c); }}\n"
                ));
                s.push_str(&format!("{q} float wave_sqrt(float x) {{ return __fsqrt_rn(x); }}\n"));
                s.push_str(&format!(
                    "{q} float wave_rsqrt(float x) {{ return (float)(1.0 / sqrt((double)x)); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_sin(float x) {{ return (float)sin((double)x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_cos(float x) {{ return (float)cos((double)x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_exp2(float x) {{ return (float)exp2((double)x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_log2(float x) {{ return (float)log2((double)x); }}\n"
                ));
                s.push_str(&format!("{q} double wave_dsqrt(double x) {{ return sqrt(x); }}\n"));
                s.push_str(&format!("{q} double wave_dfma(double a, double b, double c) {{ return fma(a, b, c); }}\n"));
                s.push_str(&format!(
                    "{q} uint64_t wave_ballot(bool b) {{ return __ballot(b); }}\n"
                ));
                s.push_str(&format!("{q} uint32_t wave_shfl(uint32_t v, uint32_t lane) {{ return (uint32_t)__shfl((int)v, (int)lane); }}\n"));
                s.push_str(&format!("{q} uint32_t wave_shfl_up(uint32_t v, uint32_t d) {{ return (uint32_t)__shfl_up((int)v, d); }}\n"));
            }
            Dialect::Sycl => {
                s.push_str("#include <sycl/sycl.hpp>\n#include <cassert>\n#include <stdint.h>\n\n");
                s.push_str("// Each WAVE instruction rounds once: no fusing of a multiply and an add.\n#if defined(__clang__)\n#pragma clang fp contract(off)\n#endif\n\n");
                s.push_str(&format!(
                    "{q} float wave_f(uint32_t x) {{ return sycl::bit_cast<float>(x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} uint32_t wave_u(float x) {{ return sycl::bit_cast<uint32_t>(x); }}\n"
                ));
                s.push_str(&format!("{q} double wave_d(uint32_t lo, uint32_t hi) {{ return sycl::bit_cast<double>(((uint64_t)hi << 32) | lo); }}\n"));
                s.push_str(&format!("{q} uint32_t wave_dlo(double x) {{ return (uint32_t)sycl::bit_cast<uint64_t>(x); }}\n"));
                s.push_str(&format!("{q} uint32_t wave_dhi(double x) {{ return (uint32_t)(sycl::bit_cast<uint64_t>(x) >> 32); }}\n"));
                s.push_str(&format!("{q} sycl::half wave_h(uint32_t x, bool hi) {{ return sycl::bit_cast<sycl::half>((uint16_t)(hi ? x >> 16 : x)); }}\n"));
                s.push_str(&format!("{q} uint32_t wave_set_h(uint32_t old, bool hi, sycl::half h) {{ uint32_t b = sycl::bit_cast<uint16_t>(h); return hi ? (old & 0xFFFFu) | (b << 16) : (old & 0xFFFF0000u) | b; }}\n"));
                s.push_str(&format!("{q} float wave_h2f(sycl::half h) {{ return (float)h; }}\n"));
                s.push_str(&format!(
                    "{q} sycl::half wave_f2h(float x) {{ return (sycl::half)x; }}\n"
                ));
                s.push_str(&format!(
                    "{q} sycl::half wave_hadd(sycl::half a, sycl::half b) {{ return a + b; }}\n"
                ));
                s.push_str(&format!(
                    "{q} sycl::half wave_hsub(sycl::half a, sycl::half b) {{ return a - b; }}\n"
                ));
                s.push_str(&format!(
                    "{q} sycl::half wave_hmul(sycl::half a, sycl::half b) {{ return a * b; }}\n"
                ));
                s.push_str(&format!("{q} sycl::half wave_hfma(sycl::half a, sycl::half b, sycl::half c) {{ return sycl::fma(a, b, c); }}\n"));
                s.push_str(&format!(
                    "{q} uint32_t wave_clz(uint32_t x) {{ return sycl::clz(x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} uint32_t wave_popc(uint32_t x) {{ return sycl::popcount(x); }}\n"
                ));
                s.push_str(&format!("{q} uint32_t wave_brev(uint32_t x) {{ x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1); x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2); x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4); x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8); return (x >> 16) | (x << 16); }}\n"));
                s.push_str(&format!(
                    "{q} float wave_floor(float x) {{ return sycl::floor(x); }}\n"
                ));
                s.push_str(&format!("{q} float wave_ceil(float x) {{ return sycl::ceil(x); }}\n"));
                s.push_str(&format!("{q} float wave_rint(float x) {{ return sycl::rint(x); }}\n"));
                s.push_str(&format!(
                    "{q} float wave_trunc(float x) {{ return sycl::trunc(x); }}\n"
                ));
                s.push_str(&format!("{q} float wave_fma(float a, float b, float c) {{ return sycl::fma(a, b, c); }}\n"));
                s.push_str(&format!(
                    "{q} float wave_sqrt(float x) {{ return (float)sycl::sqrt((double)x); }}\n"
                ));
                s.push_str(&format!("{q} float wave_rsqrt(float x) {{ return (float)(1.0 / sycl::sqrt((double)x)); }}\n"));
                s.push_str(&format!(
                    "{q} float wave_sin(float x) {{ return (float)sycl::sin((double)x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_cos(float x) {{ return (float)sycl::cos((double)x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_exp2(float x) {{ return (float)sycl::exp2((double)x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_log2(float x) {{ return (float)sycl::log2((double)x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} double wave_dsqrt(double x) {{ return sycl::sqrt(x); }}\n"
                ));
                s.push_str(&format!("{q} double wave_dfma(double a, double b, double c) {{ return sycl::fma(a, b, c); }}\n"));
                s.push_str(&format!("{q} uint64_t wave_ballot(sycl::sub_group sg, bool b) {{ uint32_t bits = 0; sycl::ext::oneapi::group_ballot(sg, b).extract_bits(bits); return bits; }}\n"));
            }
            Dialect::Metal => {
                s.push_str("#include <metal_stdlib>\nusing namespace metal;\n\n");
                s.push_str("// Each WAVE instruction rounds once: no fusing of a multiply and an add.\n#pragma clang fp contract(off)\n\n");
                s.push_str(&format!("{q} float wave_f(uint x) {{ return as_type<float>(x); }}\n"));
                s.push_str(&format!("{q} uint wave_u(float x) {{ return as_type<uint>(x); }}\n"));
                s.push_str(&format!("{q} half wave_h(uint x, bool hi) {{ return as_type<half>((ushort)(hi ? x >> 16 : x)); }}\n"));
                s.push_str(&format!("{q} uint wave_set_h(uint old, bool hi, half h) {{ uint b = as_type<ushort>(h); return hi ? (old & 0xFFFFu) | (b << 16) : (old & 0xFFFF0000u) | b; }}\n"));
                s.push_str(&format!("{q} float wave_h2f(half h) {{ return (float)h; }}\n"));
                s.push_str(&format!("{q} half wave_f2h(float x) {{ return (half)x; }}\n"));
                s.push_str(&format!("{q} half wave_hadd(half a, half b) {{ return a + b; }}\n"));
                s.push_str(&format!("{q} half wave_hsub(half a, half b) {{ return a - b; }}\n"));
                s.push_str(&format!("{q} half wave_hmul(half a, half b) {{ return a * b; }}\n"));
                s.push_str(&format!(
                    "{q} half wave_hfma(half a, half b, half c) {{ return fma(a, b, c); }}\n"
                ));
                s.push_str(&format!("{q} uint wave_clz(uint x) {{ return clz(x); }}\n"));
                s.push_str(&format!("{q} uint wave_popc(uint x) {{ return popcount(x); }}\n"));
                s.push_str(&format!("{q} uint wave_brev(uint x) {{ return reverse_bits(x); }}\n"));
                s.push_str(&format!("{q} float wave_floor(float x) {{ return floor(x); }}\n"));
                s.push_str(&format!("{q} float wave_ceil(float x) {{ return ceil(x); }}\n"));
                s.push_str(&format!("{q} float wave_rint(float x) {{ return rint(x); }}\n"));
                s.push_str(&format!("{q} float wave_trunc(float x) {{ return trunc(x); }}\n"));
                s.push_str(&format!(
                    "{q} float wave_fma(float a, float b, float c) {{ return fma(a, b, c); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_sqrt(float x) {{ return precise::sqrt(x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_rsqrt(float x) {{ return 1.0f / precise::sqrt(x); }}\n"
                ));
                s.push_str(&format!("{q} float wave_sin(float x) {{ return precise::sin(x); }}\n"));
                s.push_str(&format!("{q} float wave_cos(float x) {{ return precise::cos(x); }}\n"));
                s.push_str(&format!(
                    "{q} float wave_exp2(float x) {{ return precise::exp2(x); }}\n"
                ));
                s.push_str(&format!(
                    "{q} float wave_log2(float x) {{ return precise::log2(x); }}\n"
                ));
                s.push_str(&format!("{q} ulong wave_ballot(bool b) {{ return static_cast<ulong>((simd_vote::vote_t)simd_ballot(b)); }}\n"));
            }
        }
        // Integer and float helpers with the emulator's exact rules.
        s.push_str(&format!("{q} {u32t} wave_idiv({u32t} a, {u32t} b) {{ if (b == 0u) return 0xFFFFFFFFu; if (b == 0xFFFFFFFFu) return 0u - a; return ({u32t})(({i32t})a / ({i32t})b); }}\n"));
        s.push_str(&format!("{q} {u32t} wave_imod({u32t} a, {u32t} b) {{ if (b == 0u) return a; if (b == 0xFFFFFFFFu) return 0u; return ({u32t})(({i32t})a % ({i32t})b); }}\n"));
        s.push_str(&format!("{q} {u32t} wave_mulhi({u32t} a, {u32t} b) {{ return ({u32t})((({i64t})({i32t})a * ({i64t})({i32t})b) >> 32); }}\n"));
        s.push_str(&format!(
            "{q} {u32t} wave_iabs({u32t} a) {{ return ({i32t})a < 0 ? 0u - a : a; }}\n"
        ));
        s.push_str(&format!(
            "{q} {u32t} wave_imin({u32t} a, {u32t} b) {{ return ({i32t})a < ({i32t})b ? a : b; }}\n"
        ));
        s.push_str(&format!(
            "{q} {u32t} wave_imax({u32t} a, {u32t} b) {{ return ({i32t})a > ({i32t})b ? a : b; }}\n"
        ));
        s.push_str(&format!("{q} {u32t} wave_fmin({u32t} a, {u32t} b) {{ float x = wave_f(a), y = wave_f(b); if (x != x) return b; if (y != y) return a; if (x == y) return a | b; return x < y ? a : b; }}\n"));
        s.push_str(&format!("{q} {u32t} wave_fmax({u32t} a, {u32t} b) {{ float x = wave_f(a), y = wave_f(b); if (x != x) return b; if (y != y) return a; if (x == y) return a & b; return x > y ? a : b; }}\n"));
        s.push_str(&format!("{q} {u32t} wave_fract({u32t} a) {{ float x = wave_f(a); float r = x - wave_floor(x); return r >= 1.0f ? 0x3F7FFFFFu : wave_u(r); }}\n"));
        s.push_str(&format!("{q} {u32t} wave_cvt_i32({u32t} a) {{ float x = wave_f(a); if (x != x) return 0u; if (x >= 2147483648.0f) return 0x7FFFFFFFu; if (x <= -2147483648.0f) return 0x80000000u; return ({u32t})({i32t})x; }}\n"));
        s.push_str(&format!("{q} {u32t} wave_cvt_u32({u32t} a) {{ float x = wave_f(a); if (!(x > 0.0f)) return 0u; if (x >= 4294967296.0f) return 0xFFFFFFFFu; return ({u32t})x; }}\n"));
        s.push_str(&format!("{q} {u32t} wave_bfe({u32t} a, {u32t} off, {u32t} width) {{ {u32t} v = a >> (off & 31u); {u32t} w = width & 255u; return w >= 32u ? v : v & ((1u << w) - 1u); }}\n"));
        s.push_str(&format!("{q} {u32t} wave_bfi({u32t} ins, {u32t} base, {u32t} off, {u32t} width) {{ {u32t} o = off & 31u, w = width & 255u; {u32t} m = (w >= 32u ? 0xFFFFFFFFu : (1u << w) - 1u) << o; return (base & ~m) | ((ins << o) & m); }}\n"));
        s.push_str(&format!("{q} {u32t} wave_bitfind({u32t} a) {{ return a == 0u ? 0xFFFFFFFFu : 31u - wave_clz(a); }}\n"));
        s.push_str(&format!(
            "{q} {u64t} wave_pair({u32t} lo, {u32t} hi) {{ return (({u64t})hi << 32) | lo; }}\n"
        ));
        let _ = (u64t, wave_width);
        s
    }
}

impl Dialect {
    /// The bfloat16 helpers, for a translation with BF16 instructions: the platform's bfloat16
    /// type (`hip_bfloat16`, `sycl::ext::oneapi::bfloat16`, MSL 3.1's `bfloat`) converts, and
    /// `wave_bfma` rounds a multiply-add to odd first.
    pub(super) fn bf16_prelude(self) -> String {
        let q = self.helper();
        let mut s = String::new();
        match self {
            Dialect::Hip => {
                s.push_str("#include <hip/hip_bfloat16.h>\n");
                s.push_str(&format!("{q} float wave_b(uint32_t x, bool hi) {{ hip_bfloat16 v; v.data = (uint16_t)(hi ? x >> 16 : x); return (float)v; }}\n"));
                s.push_str(&format!("{q} uint32_t wave_set_b(uint32_t old, bool hi, float x) {{ uint32_t b = hip_bfloat16(x).data; return hi ? (old & 0xFFFFu) | (b << 16) : (old & 0xFFFF0000u) | b; }}\n"));
                s.push_str(&bfma_double(
                    q,
                    "",
                    [
                        "__double_as_longlong",
                        "__longlong_as_double",
                        "__float_as_uint",
                        "__uint_as_float",
                    ],
                ));
            }
            Dialect::Sycl => {
                s.push_str(&format!("{q} float wave_b(uint32_t x, bool hi) {{ return (float)sycl::bit_cast<sycl::ext::oneapi::bfloat16>((uint16_t)(hi ? x >> 16 : x)); }}\n"));
                s.push_str(&format!("{q} uint32_t wave_set_b(uint32_t old, bool hi, float x) {{ uint32_t b = sycl::bit_cast<uint16_t>(sycl::ext::oneapi::bfloat16(x)); return hi ? (old & 0xFFFFu) | (b << 16) : (old & 0xFFFF0000u) | b; }}\n"));
                s.push_str(&bfma_double(
                    q,
                    "sycl::",
                    [
                        "sycl::bit_cast<long long>",
                        "sycl::bit_cast<double>",
                        "sycl::bit_cast<uint32_t>",
                        "sycl::bit_cast<float>",
                    ],
                ));
            }
            Dialect::Metal => {
                s.push_str(&format!("{q} float wave_b(uint x, bool hi) {{ return (float)as_type<bfloat>((ushort)(hi ? x >> 16 : x)); }}\n"));
                s.push_str(&format!("{q} uint wave_set_b(uint old, bool hi, float x) {{ uint b = as_type<ushort>(bfloat(x)); return hi ? (old & 0xFFFFu) | (b << 16) : (old & 0xFFFF0000u) | b; }}\n"));
                // Metal has no binary64: the sum and its error in binary32, exact while the
                // product of two bfloat16 values stays in binary32's normal range.
                s.push_str(&format!("{q} float wave_bfma(float a, float b, float c) {{ float p = a * b; float s = p + c; if (!isfinite(s)) return s; float bb = s - p; float e = (p - (s - bb)) + (c - bb); uint sb = as_type<uint>(s); if (e != 0.0f && (sb & 1u) == 0u) sb = ((e > 0.0f) == (s > 0.0f)) ? sb + 1u : sb - 1u; return as_type<float>(sb); }}\n"));
            }
        }
        s
    }
}

/// `wave_bfma(a, b, c)`: `a * b + c` of three bfloat16 values (widened to binary32), rounded
/// to odd at binary32, so that `wave_set_b`'s rounding to nearest even is the one rounding of
/// the exact result. The product is exact in binary64 and the sum's error is found exactly
/// (TwoSum); rounding to odd at binary64 and then at binary32 keeps the sticky bit.
fn bfma_double(q: &str, m: &str, [dbits, dfrom, fbits, ffrom]: [&str; 4]) -> String {
    format!(
        "{q} float wave_bfma(float a, float b, float c) {{ double p = (double)a * (double)b; double s = p + (double)c; if (!{m}isfinite(s)) return (float)s; double bb = s - p; double e = (p - (s - bb)) + ((double)c - bb); long long sb = {dbits}(s); if (e != 0.0 && (sb & 1) == 0) s = {dfrom}(((e > 0.0) == (s > 0.0)) ? sb + 1 : sb - 1); float r = (float)s; if ({m}isfinite(r) && (double)r != s && ({fbits}(r) & 1u) == 0u) r = {ffrom}(({m}fabs((double)r) < {m}fabs(s)) ? {fbits}(r) + 1u : {fbits}(r) - 1u); return r; }}\n"
    )
}

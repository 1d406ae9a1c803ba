//! The writer shared by the C++-family targets: HIP, SYCL and Metal.
//!
//! Every WAVE register is a `uint32_t` local (`r0`..), predicates are `bool p0`..`p3`, floats
//! are reinterpreted bits (`wave_f`/`wave_u`), device memory is one byte pointer plus each
//! WAVE address, local memory one byte array per workgroup. The dialects differ in spellings
//! (bit casts, thread ids, wave intrinsics, atomics, fences) and in what they can express;
//! the [`Dialect`] methods hold those differences and nothing else.

use wave_isa::{AtomicType, Operation};
use wave_wbin::{Module, ParamType};

use crate::lower::{ACT, Cond, Flag, HALTED, Lit, Lowered, Stmt, lower};
use crate::structure::{Instr, Program, analyse, mnemonic};
use crate::{Error, Out, Problem, Translation, codes, names, selected};

/// The C++ keywords every C-family target reserves, then the target's own `$extra` names:
/// `KEYWORDS` of HIP, SYCL and Metal.
macro_rules! cpp_keywords {
    ($($extra:literal),* $(,)?) => {
        &[
            "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool",
            "break", "case", "catch", "char", "char16_t", "char32_t", "class", "compl", "const",
            "constexpr", "const_cast", "continue", "decltype", "default", "delete", "do",
            "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
            "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
            "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
            "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "return",
            "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
            "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
            "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
            "wchar_t", "while", "xor", "xor_eq", "main", $($extra),*
        ]
    };
}
pub(crate) use cpp_keywords;

/// A C++-family target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Hip,
    Sycl,
    Metal,
}

/// What the dialect-independent writer needs to know.
pub(crate) struct Config<'o> {
    pub dialect: Dialect,
    pub keywords: &'static [&'static str],
    /// Only this kernel.
    pub kernel: Option<&'o str>,
    /// Wave width when fixed (SYCL's required sub-group size, Metal's 32); `None`: HIP's
    /// `warpSize`, known when the code runs.
    pub wave_width: Option<u32>,
}

impl Dialect {
    fn name(self) -> &'static str {
        match self {
            Dialect::Hip => "hip",
            Dialect::Sycl => "sycl",
            Dialect::Metal => "metal",
        }
    }

    /// Qualifiers of helper functions.
    fn helper(self) -> &'static str {
        match self {
            Dialect::Hip => "__device__ static inline",
            Dialect::Sycl | Dialect::Metal => "static inline",
        }
    }

    /// The pointer to `T` in device memory, at byte address `at`.
    fn device_ptr(self, ty: &str, at: &str) -> String {
        match self {
            Dialect::Metal => format!("((device {ty}*)(wave_mem + {at}))"),
            _ => format!("(({ty}*)(wave_mem + {at}))"),
        }
    }

    fn local_ptr(self, ty: &str, at: &str) -> String {
        match self {
            Dialect::Metal => format!("((threadgroup {ty}*)(wave_local + {at}))"),
            _ => format!("(({ty}*)(wave_local + {at}))"),
        }
    }

    fn any(self, x: &str) -> String {
        match self {
            Dialect::Hip => format!("__any({x})"),
            Dialect::Sycl => format!("sycl::any_of_group(wave_sg, {x})"),
            Dialect::Metal => format!("simd_any({x})"),
        }
    }

    fn barrier(self) -> &'static str {
        match self {
            Dialect::Hip => "__syncthreads();",
            Dialect::Sycl => "sycl::group_barrier(wave_item.get_group());",
            Dialect::Metal => {
                "threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);"
            }
        }
    }

    fn types(self) -> (&'static str, &'static str, &'static str, &'static str) {
        // (u32, i32, u64, i64)
        match self {
            Dialect::Metal => ("uint", "int", "ulong", "long"),
            _ => ("uint32_t", "int32_t", "uint64_t", "int64_t"),
        }
    }

    /// The prelude: includes and helper functions.
    fn prelude(self, wave_width: Option<u32>) -> String {
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

/// Translates the kernels of `module` for `config`.
pub(crate) fn write_string(module: &Module, config: &Config<'_>) -> Result<Translation, Error> {
    let kernels = selected(module, config.kernel)?;
    let mut problems = Vec::new();
    let mut out = Out::new();
    let d = config.dialect;
    out.flush_left("//");
    out.flush_left(&format!(
        "// Generated by the WAVE toolchain (`wave emit --target {}`). Every WAVE instruction is",
        d.name()
    ));
    out.flush_left(
        "// preceded by a comment with its source line; each WAVE register rN is the variable rN.",
    );
    match d {
        Dialect::Hip => out.flush_left("// Compile: hipcc --offload-arch=<gfx...> -c FILE.hip (no fast-math: WAVE floats are IEEE)."),
        Dialect::Sycl => out.flush_left("// Compile with a SYCL 2020 compiler, e.g. icpx -fsycl -fp-model=precise FILE.cpp; each kernel has a launch_<name> function."),
        Dialect::Metal => out.flush_left("// Compile: xcrun metal -fno-fast-math -c FILE.metal (WAVE floats are IEEE)."),
    }
    out.flush_left("//");
    for line in d.prelude(config.wave_width).lines() {
        out.flush_left(line);
    }
    for kernel in kernels {
        let program = match analyse(module, kernel) {
            Ok(p) => p,
            Err(mut p) => {
                problems.append(&mut p);
                continue;
            }
        };
        let lowered = match lower(&program, config.dialect == Dialect::Hip) {
            Ok(l) => l,
            Err(mut p) => {
                problems.append(&mut p);
                continue;
            }
        };
        let mut w = Writer {
            module,
            program: &program,
            lowered: &lowered,
            config,
            out: Out::new(),
            problems: Vec::new(),
            in_function: false,
        };
        w.kernel();
        problems.append(&mut w.problems);
        problems.extend(lowered.warnings.iter().cloned());
        out.text.push_str(&w.out.text);
        out.lines.extend(w.out.lines);
    }
    if problems.iter().any(|p| p.severity == wave_diag::Severity::Error) {
        return Err(Error { problems });
    }
    Ok(out.finish(problems))
}

struct Writer<'a, 'm> {
    module: &'m Module,
    program: &'a Program<'m>,
    lowered: &'a Lowered,
    config: &'a Config<'a>,
    out: Out,
    problems: Vec<Problem>,
    /// Writing a function kept as a function (recursive kernels on HIP).
    in_function: bool,
}

fn flag_name(f: Flag) -> String {
    match f {
        ACT => "act".into(),
        HALTED => "halted".into(),
        n => format!("f{n}"),
    }
}

fn lit(l: Lit) -> String {
    match l {
        Lit::Flag(f, neg) => format!("{}{}", if neg { "!" } else { "" }, flag_name(f)),
        Lit::Pred(p, neg) => format!("{}p{}", if neg { "!" } else { "" }, p & 3),
    }
}

fn cond(c: &Cond) -> String {
    if c.is_empty() {
        return "true".into();
    }
    c.iter().map(|l| lit(*l)).collect::<Vec<_>>().join(" && ")
}

fn r(n: u8) -> String {
    format!("r{n}")
}

fn hex(v: u32) -> String {
    format!("0x{v:08X}u")
}

impl Writer<'_, '_> {
    fn line(&mut self, s: &str) {
        self.out.line(s);
    }

    fn d(&self) -> Dialect {
        self.config.dialect
    }

    fn kernel(&mut self) {
        let k = self.program.kernel;
        let d = self.d();
        let (u32t, i32t, _, _) = d.types();
        let name = names::safe(&k.name, self.config.keywords);
        self.functions();
        self.out.current = Some(k.code.start);
        self.out.flush_left("");
        self.out.flush_left(&format!(
            "// kernel `{}`: {} registers, {} bytes of local memory{}",
            k.name,
            self.program.registers,
            k.local_memory,
            if self.lowered.uniform {
                "; wave-uniform control flow (the kernel uses wave operations)"
            } else {
                ""
            }
        ));
        let params: Vec<(String, String, ParamType)> = k
            .params
            .iter()
            .map(|p| {
                let ty = match p.ty {
                    ParamType::F32 => "float",
                    ParamType::I32 => i32t,
                    _ => u32t,
                };
                (names::safe(&p.name, self.config.keywords), ty.to_string(), p.ty)
            })
            .collect();
        let wave_width = self.config.wave_width;
        match d {
            Dialect::Hip => {
                let bounds = k
                    .workgroup_size
                    .map(|s| format!("__launch_bounds__({}) ", s.iter().product::<u32>()))
                    .unwrap_or_default();
                let mut sig = vec!["uint8_t* __restrict__ wave_mem".to_string()];
                sig.extend(params.iter().map(|(n, t, _)| format!("{t} {n}")));
                self.out.flush_left(&format!(
                    "extern \"C\" __global__ void {bounds}{name}({}) {{",
                    sig.join(", ")
                ));
            }
            Dialect::Sycl => {
                self.out.flush_left(&format!("struct wave_kernel_{name} {{"));
                self.out.flush_left("    uint8_t* wave_mem;");
                for (n, t, _) in &params {
                    self.out.flush_left(&format!("    {t} {n};"));
                }
                if k.local_memory > 0 {
                    self.out.flush_left("    sycl::local_accessor<uint8_t, 1> wave_local_memory;");
                }
                self.out.flush_left(&format!(
                    "    [[sycl::reqd_sub_group_size({})]] void operator()(sycl::nd_item<3> wave_item) const {{",
                    wave_width.unwrap_or(32)
                ));
            }
            Dialect::Metal => {
                let mut sig = vec!["device uchar* wave_mem [[buffer(0)]]".to_string()];
                for (i, (n, t, _)) in params.iter().enumerate() {
                    sig.push(format!("constant {t}& {n} [[buffer({})]]", i + 1));
                }
                sig.push("uint3 wave_tid [[thread_position_in_threadgroup]]".into());
                sig.push("uint3 wave_ctaid [[threadgroup_position_in_grid]]".into());
                sig.push("uint3 wave_ntid [[threads_per_threadgroup]]".into());
                sig.push("uint3 wave_nctaid [[threadgroups_per_grid]]".into());
                sig.push("uint wave_lane [[thread_index_in_simdgroup]]".into());
                sig.push("uint wave_simd [[simdgroup_index_in_threadgroup]]".into());
                self.out.flush_left(&format!("kernel void {name}("));
                let n = sig.len();
                for (i, s) in sig.into_iter().enumerate() {
                    self.out.flush_left(&format!("    {s}{}", if i + 1 < n { "," } else { ") {" }));
                }
            }
        }
        self.out.indent = if d == Dialect::Sycl { 2 } else { 1 };
        // Thread identity.
        match d {
            Dialect::Hip => self.hip_identity(),
            Dialect::Sycl => {
                self.line("sycl::sub_group wave_sg = wave_item.get_sub_group();");
                self.line("const uint32_t wave_tx = wave_item.get_local_id(2), wave_ty = wave_item.get_local_id(1), wave_tz = wave_item.get_local_id(0);");
                self.line("const uint32_t wave_threads = wave_item.get_local_range(0) * wave_item.get_local_range(1) * wave_item.get_local_range(2);");
                self.line(&format!("const uint32_t wave_w = {};", wave_width.unwrap_or(32)));
                self.line("const uint32_t lane = wave_sg.get_local_linear_id(), wave_id = wave_sg.get_group_linear_id();");
                if k.local_memory > 0 {
                    self.line("uint8_t* wave_local = wave_local_memory.get_multi_ptr<sycl::access::decorated::no>().get();");
                }
            }
            Dialect::Metal => {
                self.line("const uint wave_threads = wave_ntid.x * wave_ntid.y * wave_ntid.z;");
                self.line("const uint wave_w = 32;");
                self.line("const uint lane = wave_lane, wave_id = wave_simd;");
            }
        }
        if k.local_memory > 0 {
            let words = k.local_memory.div_ceil(16);
            match d {
                Dialect::Hip => {
                    self.line(&format!("__shared__ uint4 wave_local_words[{words}];"));
                    self.line("uint8_t* wave_local = (uint8_t*)wave_local_words;");
                }
                Dialect::Metal => {
                    self.line(&format!("threadgroup uint4 wave_local_words[{words}];"));
                    self.line(
                        "threadgroup uchar* wave_local = (threadgroup uchar*)wave_local_words;",
                    );
                }
                Dialect::Sycl => {}
            }
        }
        // Registers: parameters first, then zeros.
        let regs = self.program.registers;
        let mut inits = Vec::new();
        for i in 0..regs {
            let init = match params.get(i) {
                Some((n, _, ParamType::F32)) => format!("wave_u({n})"),
                Some((n, _, _)) => format!("({u32t}){n}"),
                None => "0u".into(),
            };
            inits.push(format!("r{i} = {init}"));
        }
        for chunk in inits.chunks(8) {
            self.line(&format!("{u32t} {};", chunk.join(", ")));
        }
        self.line("bool p0 = false, p1 = false, p2 = false, p3 = false;");
        if !self.lowered.functions.is_empty() {
            self.line("bool halted = false;");
        }
        if self.lowered.flags > 0 {
            let flags: Vec<String> =
                (0..self.lowered.flags).map(|f| format!("{} = false", flag_name(f))).collect();
            for chunk in flags.chunks(12) {
                self.line(&format!("bool {};", chunk.join(", ")));
            }
        }
        self.line("(void)wave_threads; (void)lane; (void)wave_id; (void)wave_w;");
        let body = self.lowered.body.clone();
        self.stmts(&body);
        self.out.current = None;
        match d {
            Dialect::Sycl => {
                self.out.indent = 0;
                self.out.flush_left("    }");
                self.out.flush_left("};");
                let mut args = vec!["uint8_t* mem".to_string()];
                args.extend(params.iter().map(|(n, t, _)| format!("{t} {n}")));
                self.out.flush_left(&format!(
                    "/// Runs `{}`: `grid` in workgroups and `workgroup` in threads, both x, y, z (x varies fastest)."
                , k.name));
                self.out.flush_left(&format!(
                    "inline sycl::event launch_{name}(sycl::queue& queue, sycl::range<3> grid, sycl::range<3> workgroup, {}) {{",
                    args.join(", ")
                ));
                self.out.flush_left("    return queue.submit([&](sycl::handler& h) {");
                let mut fields = vec!["mem".to_string()];
                fields.extend(params.iter().map(|(n, _, _)| n.clone()));
                if k.local_memory > 0 {
                    fields.push(format!(
                        "sycl::local_accessor<uint8_t, 1>(sycl::range<1>({}), h)",
                        k.local_memory
                    ));
                }
                self.out.flush_left(&format!(
                    "        wave_kernel_{name} kernel{{{}}};",
                    fields.join(", ")
                ));
                self.out.flush_left("        h.parallel_for(sycl::nd_range<3>(");
                self.out.flush_left("            sycl::range<3>(grid[2] * workgroup[2], grid[1] * workgroup[1], grid[0] * workgroup[0]),");
                self.out.flush_left("            sycl::range<3>(workgroup[2], workgroup[1], workgroup[0])), kernel);");
                self.out.flush_left("    });");
                self.out.flush_left("}");
            }
            _ => {
                self.out.indent = 0;
                self.out.flush_left("}");
            }
        }
    }

    fn hip_identity(&mut self) {
        self.line(
            "const uint32_t wave_tx = threadIdx.x, wave_ty = threadIdx.y, wave_tz = threadIdx.z;",
        );
        self.line("const uint32_t wave_threads = blockDim.x * blockDim.y * blockDim.z;");
        self.line(
            "const uint32_t wave_linear = wave_tx + blockDim.x * (wave_ty + blockDim.y * wave_tz);",
        );
        self.line("const uint32_t wave_w = warpSize;");
        self.line("const uint32_t lane = wave_linear % wave_w, wave_id = wave_linear / wave_w;");
    }

    /// The name of function `f` of this kernel when it stays a function.
    fn function_name(&self, f: usize) -> String {
        let entry = self.program.insts[self.program.functions[f].entry].offset;
        format!("wave_fn_{}_{entry}", names::safe(&self.program.kernel.name, self.config.keywords))
    }

    /// Every register and predicate by reference, then the halted flag.
    fn function_signature(&self, name: &str) -> String {
        let mut p =
            vec!["uint8_t* __restrict__ wave_mem".to_string(), "uint8_t* wave_local".to_string()];
        p.extend((0..self.program.registers).map(|r| format!("uint32_t& r{r}")));
        p.extend((0..4).map(|k| format!("bool& p{k}")));
        p.push("bool& halted".into());
        format!("__device__ static void {name}({})", p.join(", "))
    }

    /// Functions kept as functions (a recursive kernel on HIP): prototypes, then bodies.
    fn functions(&mut self) {
        let functions = self.lowered.functions.clone();
        if functions.is_empty() {
            return;
        }
        self.out.flush_left("");
        for (f, _) in &functions {
            let sig = self.function_signature(&self.function_name(*f));
            self.out.flush_left(&format!("{sig};"));
        }
        for (f, body) in &functions {
            let entry = self.program.functions[*f].entry;
            let offset = self.program.insts[entry].offset;
            self.out.current = Some(offset);
            let label = self
                .module
                .symbol_at(offset)
                .map_or_else(|| format!("fn_{offset}"), |s| s.name.clone());
            self.out.flush_left("");
            self.out.flush_left(&format!(
                "// function `{label}`, kept as a function because the kernel recurses: registers are passed by reference"
            ));
            let sig = self.function_signature(&self.function_name(*f));
            self.out.flush_left(&format!("{sig} {{"));
            self.out.indent = 1;
            self.hip_identity();
            self.line(
                "(void)wave_threads; (void)lane; (void)wave_id; (void)wave_w; (void)wave_local;",
            );
            self.in_function = true;
            self.stmts(body);
            self.in_function = false;
            self.out.indent = 0;
            self.out.flush_left("}");
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn block(&mut self, head: &str, body: &[Stmt]) {
        self.line(&format!("{head} {{"));
        self.out.indent += 1;
        self.stmts(body);
        self.out.indent -= 1;
    }

    fn stmt(&mut self, s: &Stmt) {
        let d = self.d();
        match s {
            Stmt::Inst(n) => self.inst(*n, None),
            Stmt::Wave { index, active } => self.inst(*index, *active),
            Stmt::Barrier(n) => {
                self.comment(*n);
                self.line(d.barrier());
            }
            Stmt::Marker(n) => self.comment(*n),
            Stmt::Set(f, c) => {
                let line = format!("{} = {};", flag_name(*f), cond(c));
                self.line(&line);
            }
            Stmt::Reset(f) => self.line(&format!("{} = false;", flag_name(*f))),
            Stmt::Clear(f, g) => {
                let (f, g) = (flag_name(*f), flag_name(*g));
                self.line(&format!("{f} = {f} && !{g};"));
            }
            Stmt::Or(f, g) => {
                let (f, g) = (flag_name(*f), flag_name(*g));
                self.line(&format!("{f} = {f} || {g};"));
            }
            Stmt::If { cond: c, then, otherwise } => {
                let head = format!("if ({})", cond(c));
                self.block(&head, then);
                if otherwise.is_empty() {
                    self.line("}");
                } else {
                    self.block("} else", otherwise);
                    self.line("}");
                }
            }
            Stmt::IfAny { cond: c, then } => {
                let head = format!("if ({})", d.any(&cond(c)));
                self.block(&head, then);
                self.line("}");
            }
            Stmt::Loop(body) => {
                self.block("for (;;)", body);
                self.line("}");
            }
            Stmt::Break => self.line("break;"),
            Stmt::Continue => self.line("continue;"),
            Stmt::BreakUnlessAny(c) => {
                let line = format!("if (!{}) break;", d.any(&cond(c)));
                self.line(&line);
            }
            Stmt::Exit if self.in_function => self.line("halted = true; return;"),
            Stmt::Exit => self.line("return;"),
            Stmt::Return => self.line("return;"),
            Stmt::Call { callee, .. } => {
                let name = self.function_name(*callee);
                let mut args = vec![
                    "wave_mem".to_string(),
                    if self.program.kernel.local_memory > 0 {
                        "wave_local".into()
                    } else {
                        "(uint8_t*)0".into()
                    },
                ];
                args.extend((0..self.program.registers).map(|r| format!("r{r}")));
                args.extend((0..4).map(|k| format!("p{k}")));
                args.push("halted".into());
                self.line(&format!("{name}({});", args.join(", ")));
                self.line("if (halted) return;");
            }
            Stmt::Trap { index, message } => {
                self.comment(*index);
                match self.trap_line(message) {
                    Some(t) => self.line(&t),
                    None => {
                        let i = self.program.insts[*index];
                        self.problems.push(Problem::error(
                            codes::UNSUPPORTED,
                            &self.program.kernel.name,
                            Some(i.offset),
                            format!("{message}: the emulator traps here, and {} has no way to stop a kernel with an error", d.name()),
                        ));
                    }
                }
            }
        }
    }

    /// A statement that stops the kernel with an error, where the dialect has one.
    fn trap_line(&self, message: &str) -> Option<String> {
        match self.d() {
            Dialect::Hip => Some(format!("__builtin_trap();   // {message}")),
            Dialect::Sycl => Some(format!("assert(!\"{message}\");")),
            Dialect::Metal => None,
        }
    }

    fn comment(&mut self, n: usize) {
        let i = &self.program.insts[n];
        self.out.current = Some(i.offset);
        let mut text = String::new();
        wave_isa::write_inst(&i.inst, &mut text, &|o| {
            self.module.symbol_at(o).map(|s| s.name.clone())
        });
        match self.module.line_at(i.offset).map(|l| l.line) {
            Some(line) => self.line(&format!("// {line}: {text}")),
            None => self.line(&format!("// {text}")),
        }
    }

    fn unsupported(&mut self, i: &Instr, why: &str) {
        self.problems.push(Problem::error(
            codes::UNSUPPORTED,
            &self.program.kernel.name,
            Some(i.offset),
            format!("`{}` cannot be translated to {}: {why}", mnemonic(i), self.d().name()),
        ));
    }

    fn inst(&mut self, n: usize, active: Option<Flag>) {
        let i = self.program.insts[n];
        self.comment(n);
        let guard = i
            .inst
            .guard
            .map(|g| format!("{}p{}", if g.negate { "!" } else { "" }, g.predicate & 3));
        if i.is_wave_op() {
            let mut parts = Vec::new();
            if let Some(a) = active {
                parts.push(flag_name(a));
            }
            if let Some(g) = &guard {
                parts.push(g.clone());
            }
            let part = if parts.is_empty() { "true".to_string() } else { parts.join(" && ") };
            let lines = self.wave(&i, &part);
            self.line("{");
            self.out.indent += 1;
            for l in lines {
                self.line(&l);
            }
            self.out.indent -= 1;
            self.line("}");
            return;
        }
        let lines = self.data(&i);
        match (guard, lines.len()) {
            (_, 0) => {}
            (None, _) => {
                for l in lines {
                    self.line(&l);
                }
            }
            (Some(g), 1) => self.line(&format!("if ({g}) {}", lines[0])),
            (Some(g), _) => {
                self.line(&format!("if ({g}) {{"));
                self.out.indent += 1;
                for l in lines {
                    self.line(&l);
                }
                self.out.indent -= 1;
                self.line("}");
            }
        }
    }

    /// The second source: `rs2` or the immediate.
    fn b(&self, i: &Instr) -> String {
        match i.imm2() {
            Some(v) => hex(v),
            None => r(i.inst.rs2),
        }
    }

    /// Byte address of a memory operand, as a signed 64-bit expression.
    fn at(&self, i: &Instr, plus: i64) -> String {
        let (_, _, _, i64t) = self.d().types();
        let off = i64::from(i.mem_offset()) + plus;
        if off == 0 {
            format!("({i64t}){}", r(i.inst.rs1))
        } else {
            format!("(({i64t}){} + {off})", r(i.inst.rs1))
        }
    }

    fn ptr(&self, local: bool, ty: &str, at: &str) -> String {
        if local { self.d().local_ptr(ty, at) } else { self.d().device_ptr(ty, at) }
    }

    fn data(&mut self, i: &Instr) -> Vec<String> {
        let d = self.d();
        let (u32t, _, _, _) = d.types();
        let mut l = Vec::new();
        if crate::ptx::uses_local(i) && self.program.kernel.local_memory == 0 {
            match self.trap_line("local memory access in a kernel without local memory") {
                Some(t) => {
                    self.problems.push(crate::ptx::traps_without_local(self.program, i));
                    l.push(t);
                }
                None => self.unsupported(i, "the kernel declares no local memory, so the emulator traps here, and Metal has no way to stop a kernel with an error"),
            }
            return l;
        }
        let rd = r(i.inst.rd);
        let a = r(i.inst.rs1);
        let b = self.b(i);
        let c = r(i.rs3());
        let f = |x: &str| format!("wave_f({x})");
        let pd = format!("p{}", i.inst.rd & 3);
        let fbin = |op: &str| format!("{rd} = wave_u({} {op} {});", f(&a), f(&b));
        match i.op {
            Operation::Iadd => l.push(format!("{rd} = {a} + {b};")),
            Operation::Isub => l.push(format!("{rd} = {a} - {b};")),
            Operation::Imul => l.push(format!("{rd} = {a} * {b};")),
            Operation::ImulHi => l.push(format!("{rd} = wave_mulhi({a}, {b});")),
            Operation::Imad => l.push(format!("{rd} = {a} * {} + {c};", r(i.inst.rs2))),
            Operation::Idiv => l.push(format!("{rd} = wave_idiv({a}, {b});")),
            Operation::Imod => l.push(format!("{rd} = wave_imod({a}, {b});")),
            Operation::Ineg => l.push(format!("{rd} = 0u - {a};")),
            Operation::Iabs => l.push(format!("{rd} = wave_iabs({a});")),
            Operation::Imin => l.push(format!("{rd} = wave_imin({a}, {b});")),
            Operation::Imax => l.push(format!("{rd} = wave_imax({a}, {b});")),
            Operation::Iclamp => l.push(format!("{rd} = wave_imin(wave_imax({a}, {}), {c});", r(i.inst.rs2))),
            Operation::Umin => l.push(format!("{rd} = {a} < {b} ? {a} : {b};")),
            Operation::Umax => l.push(format!("{rd} = {a} > {b} ? {a} : {b};")),
            Operation::Fadd => l.push(fbin("+")),
            Operation::Fsub => l.push(fbin("-")),
            Operation::Fmul => l.push(fbin("*")),
            Operation::Fdiv => l.push(fbin("/")),
            Operation::Fma => l.push(format!("{rd} = wave_u(wave_fma({}, {}, {}));", f(&a), f(&r(i.inst.rs2)), f(&c))),
            Operation::Fneg => l.push(format!("{rd} = {a} ^ 0x80000000u;")),
            Operation::Fabs => l.push(format!("{rd} = {a} & 0x7FFFFFFFu;")),
            Operation::Fmin => l.push(format!("{rd} = wave_fmin({a}, {b});")),
            Operation::Fmax => l.push(format!("{rd} = wave_fmax({a}, {b});")),
            Operation::Fclamp => l.push(format!("{rd} = wave_fmin(wave_fmax({a}, {}), {c});", r(i.inst.rs2))),
            Operation::Fsat => l.push(format!("{rd} = wave_fmin(wave_fmax({a}, 0u), 0x3F800000u);")),
            Operation::Fsqrt => l.push(format!("{rd} = wave_u(wave_sqrt({}));", f(&a))),
            Operation::Frsqrt => {
                if d == Dialect::Metal {
                    self.differs(i, "1 / precise::sqrt(x) rounds twice (no binary64 on Apple GPUs), so it can be 1 ULP from the emulator's result");
                }
                l.push(format!("{rd} = wave_u(wave_rsqrt({}));", f(&a)));
            }
            Operation::Frcp => l.push(format!("{rd} = wave_u(1.0f / {});", f(&a))),
            Operation::Ffloor => l.push(format!("{rd} = wave_u(wave_floor({}));", f(&a))),
            Operation::Fceil => l.push(format!("{rd} = wave_u(wave_ceil({}));", f(&a))),
            Operation::Fround => l.push(format!("{rd} = wave_u(wave_rint({}));", f(&a))),
            Operation::Ftrunc => l.push(format!("{rd} = wave_u(wave_trunc({}));", f(&a))),
            Operation::Ffract => l.push(format!("{rd} = wave_fract({a});")),
            Operation::Fsin | Operation::Fcos | Operation::Fexp2 | Operation::Flog2 => {
                let func = match i.op {
                    Operation::Fsin => "wave_sin",
                    Operation::Fcos => "wave_cos",
                    Operation::Fexp2 => "wave_exp2",
                    _ => "wave_log2",
                };
                if d == Dialect::Metal {
                    self.differs(i, "Metal's `precise::` functions are within 4 ULP; the spec asks for 2 (no binary64 on Apple GPUs)");
                }
                l.push(format!("{rd} = wave_u({func}({}));", f(&a)));
            }
            Operation::And => l.push(format!("{rd} = {a} & {b};")),
            Operation::Or => l.push(format!("{rd} = {a} | {b};")),
            Operation::Xor => l.push(format!("{rd} = {a} ^ {b};")),
            Operation::Not => l.push(format!("{rd} = ~{a};")),
            Operation::Shl => l.push(format!("{rd} = {a} << ({b} & 31u);")),
            Operation::Shr => l.push(format!("{rd} = {a} >> ({b} & 31u);")),
            Operation::Sar => l.push(format!("{rd} = ({u32t})(({}){a} >> ({b} & 31u));", d.types().1)),
            Operation::Bitcount => l.push(format!("{rd} = wave_popc({a});")),
            Operation::Bitfind => l.push(format!("{rd} = wave_bitfind({a});")),
            Operation::Bitrev => l.push(format!("{rd} = wave_brev({a});")),
            Operation::Bfe => l.push(format!("{rd} = wave_bfe({a}, {}, {c});", r(i.inst.rs2))),
            Operation::Bfi => l.push(format!("{rd} = wave_bfi({a}, {}, {c}, {});", r(i.inst.rs2), r(i.rs4()))),
            Operation::Icmp(cc) => {
                let i32t = d.types().1;
                let op = ["==", "!=", "<", "<=", ">", ">="].get(usize::from(cc)).copied().unwrap_or(">=");
                l.push(format!("{pd} = ({i32t}){a} {op} ({i32t}){b};"));
            }
            Operation::Ucmp(cc) => {
                let op = if cc == 0 { "<" } else { "<=" };
                l.push(format!("{pd} = {a} {op} {b};"));
            }
            Operation::Fcmp(cc) => {
                let (x, y) = (f(&a), f(&b));
                let e = match cc {
                    0 => format!("{x} == {y}"),
                    1 => format!("{x} < {y}"),
                    2 => format!("{x} <= {y}"),
                    3 => format!("{x} > {y}"),
                    4 => format!("!({x} == {y})"),
                    5 => format!("({x} == {x}) && ({y} == {y})"),
                    _ => format!("({x} != {x}) || ({y} != {y})"),
                };
                l.push(format!("{pd} = {e};"));
            }
            Operation::Select => {
                let (p, neg) = i.pred();
                l.push(format!("{rd} = {}p{p} ? {a} : {b};", if neg { "!" } else { "" }));
            }
            Operation::LocalLoad(w) | Operation::DeviceLoad(w) => {
                let local = matches!(i.op, Operation::LocalLoad(_));
                let rdn = i.inst.rd;
                match w {
                    0 => l.push(format!("{rd} = *{};", self.ptr(local, uchar(d), &self.at(i, 0)))),
                    1 => l.push(format!("{rd} = *{};", self.ptr(local, ushort(d), &self.at(i, 0)))),
                    _ => {
                        let count = [1, 1, 1, 2, 4][usize::from(w.min(4))];
                        for k in 0..count {
                            l.push(format!("{} = *{};", r(rdn + k as u8), self.ptr(local, u32t, &self.at(i, 4 * k))));
                        }
                    }
                }
            }
            Operation::LocalStore(w) | Operation::DeviceStore(w) => {
                let local = matches!(i.op, Operation::LocalStore(_));
                let v = i.inst.rs2;
                match w {
                    0 => l.push(format!("*{} = ({}){};", self.ptr(local, uchar(d), &self.at(i, 0)), uchar(d), r(v))),
                    1 => l.push(format!("*{} = ({}){};", self.ptr(local, ushort(d), &self.at(i, 0)), ushort(d), r(v))),
                    _ => {
                        let count = [1, 1, 1, 2, 4][usize::from(w.min(4))];
                        for k in 0..count {
                            l.push(format!("*{} = {};", self.ptr(local, u32t, &self.at(i, 4 * k)), r(v + k as u8)));
                        }
                    }
                }
            }
            Operation::Atomic(kind, ty, local) => self.atomic(i, kind, ty, local, &mut l),
            Operation::Fence => l.push(self.fence(i.inst.scope)),
            Operation::Wait | Operation::Nop => {}
            Operation::CvtF32I32 => l.push(format!("{rd} = wave_u((float)({}){a});", d.types().1)),
            Operation::CvtF32U32 => l.push(format!("{rd} = wave_u((float){a});")),
            Operation::CvtI32F32 => l.push(format!("{rd} = wave_cvt_i32({a});")),
            Operation::CvtU32F32 => l.push(format!("{rd} = wave_cvt_u32({a});")),
            Operation::CvtF32F16 => {
                let hi = i.inst.modifier & 2 != 0;
                l.push(format!("{rd} = wave_u(wave_h2f(wave_h({a}, {hi})));"));
            }
            Operation::CvtF16F32 => {
                let hi = i.inst.modifier & 1 != 0;
                l.push(format!("{rd} = wave_set_h({rd}, {hi}, wave_f2h({}));", f(&a)));
            }
            Operation::Hadd | Operation::Hsub | Operation::Hmul | Operation::Hma => {
                let sel = i.inst.modifier;
                let x = format!("wave_h({a}, {})", sel & 2 != 0);
                let y = format!("wave_h({}, {})", r(i.inst.rs2), sel & 4 != 0);
                let v = match i.op {
                    Operation::Hadd => format!("wave_hadd({x}, {y})"),
                    Operation::Hsub => format!("wave_hsub({x}, {y})"),
                    Operation::Hmul => format!("wave_hmul({x}, {y})"),
                    _ => format!("wave_hfma({x}, {y}, wave_h({c}, {}))", sel & 8 != 0),
                };
                l.push(format!("{rd} = wave_set_h({rd}, {}, {v});", sel & 1 != 0));
            }
            Operation::Hadd2 | Operation::Hmul2 | Operation::Hma2 => {
                let b2 = r(i.inst.rs2);
                let half = |hi: bool| match i.op {
                    Operation::Hadd2 => format!("wave_hadd(wave_h({a}, {hi}), wave_h({b2}, {hi}))"),
                    Operation::Hmul2 => format!("wave_hmul(wave_h({a}, {hi}), wave_h({b2}, {hi}))"),
                    _ => format!("wave_hfma(wave_h({a}, {hi}), wave_h({b2}, {hi}), wave_h({c}, {hi}))"),
                };
                l.push(format!("{rd} = wave_set_h(wave_set_h(0u, false, {}), true, {});", half(false), half(true)));
            }
            Operation::CvtF32F64
            | Operation::CvtF64F32
            | Operation::Dadd
            | Operation::Dsub
            | Operation::Dmul
            | Operation::Ddiv
            | Operation::Dma
            | Operation::Dsqrt => {
                if d == Dialect::Metal {
                    self.unsupported(i, "Apple GPUs have no binary64 (CAP_F64)");
                    return l;
                }
                let pair = |n: u8| format!("wave_d({}, {})", r(n), r(n + 1));
                let (rs1, rs2, rs3, rdn) = (i.inst.rs1, i.inst.rs2, i.rs3(), i.inst.rd);
                let value = match i.op {
                    Operation::CvtF32F64 => {
                        l.push(format!("{rd} = wave_u((float){});", pair(rs1)));
                        return l;
                    }
                    Operation::CvtF64F32 => format!("(double){}", f(&a)),
                    Operation::Dadd => format!("{} + {}", pair(rs1), pair(rs2)),
                    Operation::Dsub => format!("{} - {}", pair(rs1), pair(rs2)),
                    Operation::Dmul => format!("{} * {}", pair(rs1), pair(rs2)),
                    Operation::Ddiv => format!("{} / {}", pair(rs1), pair(rs2)),
                    Operation::Dsqrt => format!("wave_dsqrt({})", pair(rs1)),
                    _ => format!("wave_dfma({}, {}, {})", pair(rs1), pair(rs2), pair(rs3)),
                };
                l.push("{".into());
                l.push(format!("    double wave_v = {value};"));
                l.push(format!("    {rd} = wave_dlo(wave_v); {} = wave_dhi(wave_v);", r(rdn + 1)));
                l.push("}".into());
            }
            Operation::Mma => match self.trap_line("CAP_MMA is not supported") {
                // The emulator reports CAP_MMA as absent and traps; so does the generated code.
                Some(t) => {
                    self.problems.push(Problem::warning(
                        codes::TRAPS,
                        &self.program.kernel.name,
                        Some(i.offset),
                        format!("`{}` needs CAP_MMA, which WAVE's emulator and backends do not offer: the emulator traps here, and so does the generated code", mnemonic(i)),
                    ));
                    l.push(t);
                }
                None => self.unsupported(i, "CAP_MMA is not supported, so the emulator traps here, and Metal has no way to stop a kernel with an error"),
            },
            Operation::Mov => match i.inst.info().map(|o| o.mnemonic) {
                Some("mov_imm") => l.push(format!("{rd} = {};", hex(i.inst.ext.unwrap_or(0)))),
                _ => l.push(format!("{rd} = {a};")),
            },
            Operation::MovSpecial => {
                let v = self.special(i.inst.rs1);
                l.push(format!("{rd} = {v};"));
            }
            _ => {}
        }
        l
    }

    fn differs(&mut self, i: &Instr, why: &str) {
        let p = Problem::warning(
            codes::DIFFERS,
            &self.program.kernel.name,
            Some(i.offset),
            format!("`{}` on {}: {why}", mnemonic(i), self.d().name()),
        );
        if !self.problems.contains(&p) {
            self.problems.push(p);
        }
    }

    fn special(&self, which: u8) -> String {
        let d = self.d();
        match (d, which) {
            (Dialect::Hip, 0) => "threadIdx.x".into(),
            (Dialect::Hip, 1) => "threadIdx.y".into(),
            (Dialect::Hip, 2) => "threadIdx.z".into(),
            (Dialect::Hip, 5) => "blockIdx.x".into(),
            (Dialect::Hip, 6) => "blockIdx.y".into(),
            (Dialect::Hip, 7) => "blockIdx.z".into(),
            (Dialect::Hip, 8) => "blockDim.x".into(),
            (Dialect::Hip, 9) => "blockDim.y".into(),
            (Dialect::Hip, 10) => "blockDim.z".into(),
            (Dialect::Hip, 11) => "gridDim.x".into(),
            (Dialect::Hip, 12) => "gridDim.y".into(),
            (Dialect::Hip, 13) => "gridDim.z".into(),
            (Dialect::Sycl, 0) => "wave_tx".into(),
            (Dialect::Sycl, 1) => "wave_ty".into(),
            (Dialect::Sycl, 2) => "wave_tz".into(),
            (Dialect::Sycl, 5..=7) => format!("(uint32_t)wave_item.get_group({})", 7 - which),
            (Dialect::Sycl, 8..=10) => {
                format!("(uint32_t)wave_item.get_local_range({})", 10 - which)
            }
            (Dialect::Sycl, 11..=13) => {
                format!("(uint32_t)wave_item.get_group_range({})", 13 - which)
            }
            (Dialect::Metal, 0..=2) => format!("wave_tid.{}", ["x", "y", "z"][usize::from(which)]),
            (Dialect::Metal, 5..=7) => {
                format!("wave_ctaid.{}", ["x", "y", "z"][usize::from(which - 5)])
            }
            (Dialect::Metal, 8..=10) => {
                format!("wave_ntid.{}", ["x", "y", "z"][usize::from(which - 8)])
            }
            (Dialect::Metal, 11..=13) => {
                format!("wave_nctaid.{}", ["x", "y", "z"][usize::from(which - 11)])
            }
            (_, 3) => "wave_id".into(),
            (_, 4) => "lane".into(),
            (_, 14) => "wave_w".into(),
            _ => "(wave_threads + wave_w - 1u) / wave_w".into(),
        }
    }

    fn fence(&self, scope: u8) -> String {
        match self.d() {
            Dialect::Hip => match scope {
                0 | 1 => "__threadfence_block();".into(),
                2 => "__threadfence();".into(),
                _ => "__threadfence_system();".into(),
            },
            Dialect::Sycl => {
                let s = ["sub_group", "work_group", "device", "system"][usize::from(scope.min(3))];
                format!("sycl::atomic_fence(sycl::memory_order::acq_rel, sycl::memory_scope::{s});")
            }
            Dialect::Metal => {
                let s = match scope {
                    0 => "thread_scope_simdgroup",
                    1 => "thread_scope_threadgroup",
                    _ => "thread_scope_device",
                };
                format!(
                    "atomic_thread_fence(mem_flags::mem_device | mem_flags::mem_threadgroup, memory_order_seq_cst, {s});"
                )
            }
        }
    }

    fn atomic(&mut self, i: &Instr, kind: u8, ty: AtomicType, local: bool, l: &mut Vec<String>) {
        let d = self.d();
        let (u32t, i32t, u64t, i64t) = d.types();
        let wide = ty.is_64();
        if d == Dialect::Metal && wide {
            self.unsupported(i, "Metal has no general 64-bit atomics (CAP_ATOMIC_64)");
            return;
        }
        if ty == AtomicType::F32 && kind != 0 {
            self.unsupported(i, "only `atomic_add` takes the f32 type");
            return;
        }
        let (rd, rs2, rs3) = (i.inst.rd, i.inst.rs2, i.rs3());
        let at = self.at(i, 0);
        let t = match ty {
            AtomicType::U32 => u32t,
            AtomicType::I32 => i32t,
            AtomicType::F32 => "float",
            AtomicType::U64 => u64t,
            AtomicType::I64 => i64t,
        };
        let val = |n: u8| -> String {
            match ty {
                AtomicType::U64 | AtomicType::I64 => {
                    format!("({t})wave_pair({}, {})", r(n), r(n + 1))
                }
                AtomicType::F32 => format!("wave_f({})", r(n)),
                _ => format!("({t}){}", r(n)),
            }
        };
        let value = val(rs2);
        let scope = i.inst.scope.min(3);
        let expr = match d {
            Dialect::Hip => {
                let s = [
                    "__HIP_MEMORY_SCOPE_WAVEFRONT",
                    "__HIP_MEMORY_SCOPE_WORKGROUP",
                    "__HIP_MEMORY_SCOPE_AGENT",
                    "__HIP_MEMORY_SCOPE_SYSTEM",
                ][usize::from(scope)];
                let p = self.ptr(local, t, &at);
                match kind {
                    0 => format!("__hip_atomic_fetch_add({p}, {value}, __ATOMIC_RELAXED, {s})"),
                    1 => format!(
                        "__hip_atomic_fetch_add({p}, ({t})0 - {value}, __ATOMIC_RELAXED, {s})"
                    ),
                    2 => format!("__hip_atomic_fetch_min({p}, {value}, __ATOMIC_RELAXED, {s})"),
                    3 => format!("__hip_atomic_fetch_max({p}, {value}, __ATOMIC_RELAXED, {s})"),
                    4 => format!("__hip_atomic_fetch_and({p}, {value}, __ATOMIC_RELAXED, {s})"),
                    5 => format!("__hip_atomic_fetch_or({p}, {value}, __ATOMIC_RELAXED, {s})"),
                    6 => format!("__hip_atomic_fetch_xor({p}, {value}, __ATOMIC_RELAXED, {s})"),
                    7 => format!("__hip_atomic_exchange({p}, {value}, __ATOMIC_RELAXED, {s})"),
                    _ => {
                        l.push(format!("{t} wave_expected = {value};"));
                        l.push(format!("__hip_atomic_compare_exchange_strong({p}, &wave_expected, {}, __ATOMIC_RELAXED, __ATOMIC_RELAXED, {s});", val(rs3)));
                        "wave_expected".into()
                    }
                }
            }
            Dialect::Sycl => {
                let s = ["sub_group", "work_group", "device", "system"][usize::from(scope)];
                let space = if local { "local_space" } else { "global_space" };
                let p = self.ptr(local, t, &at);
                l.push(format!(
                    "sycl::atomic_ref<{t}, sycl::memory_order::relaxed, sycl::memory_scope::{s}, sycl::access::address_space::{space}> wave_ref(*{p});"
                ));
                match kind {
                    0 => format!("wave_ref.fetch_add({value})"),
                    1 => format!("wave_ref.fetch_sub({value})"),
                    2 => format!("wave_ref.fetch_min({value})"),
                    3 => format!("wave_ref.fetch_max({value})"),
                    4 => format!("wave_ref.fetch_and({value})"),
                    5 => format!("wave_ref.fetch_or({value})"),
                    6 => format!("wave_ref.fetch_xor({value})"),
                    7 => format!("wave_ref.exchange({value})"),
                    _ => {
                        l.push(format!("{t} wave_expected = {value};"));
                        l.push(format!(
                            "wave_ref.compare_exchange_strong(wave_expected, {});",
                            val(rs3)
                        ));
                        "wave_expected".into()
                    }
                }
            }
            Dialect::Metal => {
                let aty = match ty {
                    AtomicType::I32 => "atomic_int",
                    AtomicType::F32 => "atomic_float",
                    _ => "atomic_uint",
                };
                let p = self.ptr(local, aty, &at);
                match kind {
                    0 => format!("atomic_fetch_add_explicit({p}, {value}, memory_order_relaxed)"),
                    1 => format!("atomic_fetch_sub_explicit({p}, {value}, memory_order_relaxed)"),
                    2 => format!("atomic_fetch_min_explicit({p}, {value}, memory_order_relaxed)"),
                    3 => format!("atomic_fetch_max_explicit({p}, {value}, memory_order_relaxed)"),
                    4 => format!("atomic_fetch_and_explicit({p}, {value}, memory_order_relaxed)"),
                    5 => format!("atomic_fetch_or_explicit({p}, {value}, memory_order_relaxed)"),
                    6 => format!("atomic_fetch_xor_explicit({p}, {value}, memory_order_relaxed)"),
                    7 => format!("atomic_exchange_explicit({p}, {value}, memory_order_relaxed)"),
                    _ => {
                        // A strong compare-and-swap from the weak one: retry while it fails
                        // spuriously (the value seen still equals the expected one).
                        l.push(format!("{t} wave_expected;"));
                        l.push("do {".into());
                        l.push(format!("    wave_expected = {value};"));
                        l.push(format!(
                            "}} while (!atomic_compare_exchange_weak_explicit({p}, &wave_expected, {}, memory_order_relaxed, memory_order_relaxed) && wave_expected == {value});",
                            val(rs3)
                        ));
                        "wave_expected".into()
                    }
                }
            }
        };
        let store = if rd == 0 {
            format!("(void)({expr});")
        } else {
            match ty {
                AtomicType::U64 | AtomicType::I64 => {
                    format!(
                        "{{ {u64t} wave_old = ({u64t})({expr}); {} = ({u32t})wave_old; {} = ({u32t})(wave_old >> 32); }}",
                        r(rd),
                        r(rd + 1)
                    )
                }
                AtomicType::F32 => format!("{} = wave_u({expr});", r(rd)),
                _ => format!("{} = ({u32t})({expr});", r(rd)),
            }
        };
        l.push(store);
        if l.len() > 1 {
            l.insert(0, "{".into());
            for line in l.iter_mut().skip(1) {
                line.insert_str(0, "    ");
            }
            l.push("}".into());
        }
    }

    /// A wave operation run by every lane of the wave (wave-uniform lowering); `part` says
    /// whether this lane takes part.
    fn wave(&mut self, i: &Instr, part: &str) -> Vec<String> {
        let d = self.d();
        let (u32t, i32t, u64t, _) = d.types();
        let mut l = Vec::new();
        let rd = r(i.inst.rd);
        let a = r(i.inst.rs1);
        let (p, neg) = i.pred();
        let pv = format!("{}p{p}", if neg { "!" } else { "" });
        let ballot = |x: &str| match d {
            Dialect::Sycl => format!("wave_ballot(wave_sg, {x})"),
            _ => format!("wave_ballot({x})"),
        };
        l.push(format!("const bool wave_part = {part};"));
        match i.op {
            Operation::Ballot => {
                l.push(format!(
                    "const {u32t} wave_v = ({u32t}){};",
                    ballot(&format!("wave_part && {pv}"))
                ));
                l.push(format!("if (wave_part) {rd} = wave_v;"));
            }
            Operation::Any => {
                l.push(format!("const bool wave_v = {};", d.any(&format!("wave_part && {pv}"))));
                l.push(format!("if (wave_part) p{} = wave_v;", i.inst.rd & 3));
            }
            Operation::All => {
                let npv = format!("{}p{p}", if neg { "" } else { "!" });
                l.push(format!("const bool wave_v = !{};", d.any(&format!("wave_part && {npv}"))));
                l.push(format!("if (wave_part) p{} = wave_v;", i.inst.rd & 3));
            }
            Operation::Reduce(kind) => {
                let (identity, op) = match kind {
                    0 => ("0u", "add"),
                    1 => ("0x7FFFFFFFu", "min"),
                    2 => ("0x80000000u", "max"),
                    3 => ("0xFFFFFFFFu", "and"),
                    4 => ("0u", "or"),
                    _ => ("0u", "xor"),
                };
                l.push(format!("const {u32t} wave_x = wave_part ? {a} : {identity};"));
                let v = match d {
                    Dialect::Sycl => match op {
                        "add" => "sycl::reduce_over_group(wave_sg, wave_x, sycl::plus<uint32_t>())".to_string(),
                        "min" => "(uint32_t)sycl::reduce_over_group(wave_sg, (int32_t)wave_x, sycl::minimum<int32_t>())".into(),
                        "max" => "(uint32_t)sycl::reduce_over_group(wave_sg, (int32_t)wave_x, sycl::maximum<int32_t>())".into(),
                        "and" => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_and<uint32_t>())".into(),
                        "or" => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_or<uint32_t>())".into(),
                        _ => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_xor<uint32_t>())".into(),
                    },
                    Dialect::Metal => match op {
                        "add" => "simd_sum(wave_x)".to_string(),
                        "min" => "(uint)simd_min((int)wave_x)".into(),
                        "max" => "(uint)simd_max((int)wave_x)".into(),
                        "and" => "simd_and(wave_x)".into(),
                        "or" => "simd_or(wave_x)".into(),
                        _ => "simd_xor(wave_x)".into(),
                    },
                    Dialect::Hip => {
                        // Inclusive scan upwards (reads only lower lanes, which exist), then
                        // the last lane of the wave has the total.
                        l.push(format!("{u32t} wave_s = wave_x;"));
                        l.push("for (uint32_t wave_k = 1; wave_k < wave_w; wave_k <<= 1) {".into());
                        l.push("    const uint32_t wave_y = wave_shfl_up(wave_s, wave_k);".into());
                        let combine = match op {
                            "add" => "wave_s + wave_y".to_string(),
                            "min" => "wave_imin(wave_s, wave_y)".into(),
                            "max" => "wave_imax(wave_s, wave_y)".into(),
                            "and" => "wave_s & wave_y".into(),
                            "or" => "wave_s | wave_y".into(),
                            _ => "wave_s ^ wave_y".into(),
                        };
                        l.push(format!("    if (lane >= wave_k) wave_s = {combine};"));
                        l.push("}".into());
                        l.push("const uint32_t wave_last = (wave_threads - wave_id * wave_w < wave_w ? wave_threads - wave_id * wave_w : wave_w) - 1u;".into());
                        "wave_shfl(wave_s, wave_last)".into()
                    }
                };
                l.push(format!("const {u32t} wave_v = {v};"));
                l.push(format!("if (wave_part) {rd} = wave_v;"));
            }
            Operation::PrefixSum => {
                l.push(format!("const {u32t} wave_x = wave_part ? {a} : 0u;"));
                let v = match d {
                    Dialect::Sycl => {
                        "sycl::exclusive_scan_over_group(wave_sg, wave_x, sycl::plus<uint32_t>())"
                            .to_string()
                    }
                    Dialect::Metal => "simd_prefix_exclusive_sum(wave_x)".into(),
                    Dialect::Hip => {
                        l.push(format!("{u32t} wave_s = wave_x;"));
                        l.push("for (uint32_t wave_k = 1; wave_k < wave_w; wave_k <<= 1) {".into());
                        l.push("    const uint32_t wave_y = wave_shfl_up(wave_s, wave_k);".into());
                        l.push("    if (lane >= wave_k) wave_s += wave_y;".into());
                        l.push("}".into());
                        "wave_s - wave_x".into()
                    }
                };
                l.push(format!("const {u32t} wave_v = {v};"));
                l.push(format!("if (wave_part) {rd} = wave_v;"));
            }
            Operation::Shuffle
            | Operation::ShuffleUp
            | Operation::ShuffleDown
            | Operation::ShuffleXor
            | Operation::Broadcast => {
                let sel = match i.imm2() {
                    Some(v) => hex(v),
                    None => r(i.inst.rs2),
                };
                // Source lane; out of range or not taking part: the lane's own value.
                let (src, ok) = match i.op {
                    Operation::ShuffleUp => (format!("lane - {sel}"), format!("{sel} <= lane")),
                    Operation::ShuffleDown => (
                        format!("lane + {sel}"),
                        format!("{sel} < wave_w && lane + {sel} < wave_w"),
                    ),
                    Operation::ShuffleXor => (format!("lane ^ {sel}"), format!("{sel} < wave_w")),
                    _ => (sel.clone(), format!("{sel} < wave_w")),
                };
                l.push(format!("const {u64t} wave_m = {};", ballot("wave_part")));
                l.push(format!("const {u32t} wave_src = ({src}) & (wave_w - 1u);"));
                l.push(format!(
                    "const bool wave_ok = ({ok}) && ((wave_m >> wave_src) & 1u) != 0u;"
                ));
                let shfl = match d {
                    Dialect::Hip => format!("wave_shfl({a}, wave_src)"),
                    Dialect::Sycl => format!("sycl::select_from_group(wave_sg, {a}, wave_src)"),
                    Dialect::Metal => format!("simd_shuffle({a}, (ushort)wave_src)"),
                };
                l.push(format!("const {u32t} wave_y = {shfl};"));
                l.push(format!("if (wave_part) {rd} = wave_ok ? wave_y : {a};"));
            }
            _ => {}
        }
        let _ = i32t;
        l
    }
}

fn uchar(d: Dialect) -> &'static str {
    if d == Dialect::Metal { "uchar" } else { "uint8_t" }
}

fn ushort(d: Dialect) -> &'static str {
    if d == Dialect::Metal { "ushort" } else { "uint16_t" }
}

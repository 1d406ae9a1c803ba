//! Metal Shading Language (Apple GPUs).
//!
//! One `kernel` function per kernel: the device memory at `[[buffer(0)]]`, each `.param` at
//! the next buffer index as a `constant` reference, the thread and SIMD-group ids as
//! attributes. The wave is the 32-lane SIMD-group. Apple GPUs have no binary64 and no general
//! 64-bit atomics, so `CAP_F64` and `CAP_ATOMIC_64` instructions are errors here; the
//! transcendentals use `precise::` (within 4 ULP), a documented difference. Mappings:
//! `docs/backends/metal.md`.

use wave_wbin::Module;

use crate::cfamily::{self, Config, Dialect};
use crate::{Error, Translation};

/// Metal options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Only this kernel; all when `None`.
    pub kernel: Option<String>,
}

/// MSL keywords (C++14's and Metal's own) and the names generated code must not shadow.
pub const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "asm",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "const_cast",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "explicit",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "nullptr",
    "operator",
    "or",
    "private",
    "protected",
    "public",
    "register",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
    "xor",
    "kernel",
    "vertex",
    "fragment",
    "device",
    "constant",
    "threadgroup",
    "threadgroup_imageblock",
    "thread",
    "ray_data",
    "object_data",
    "half",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "float2",
    "float3",
    "float4",
    "uint2",
    "uint3",
    "uint4",
    "metal",
    "simd_vote",
    "texture",
    "sampler",
    "main",
];

/// Translates every kernel of `module` (or the one `options.kernel` names) to one Metal file.
pub fn write_string(module: &Module, options: &Options) -> Result<Translation, Error> {
    let config = Config {
        dialect: Dialect::Metal,
        keywords: KEYWORDS,
        kernel: options.kernel.as_deref(),
        wave_width: Some(32),
    };
    cfamily::write_string(module, &config)
}

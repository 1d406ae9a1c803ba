//! AMD HIP C++ (`hipcc`, ROCm 5.2 and later).
//!
//! One `extern "C" __global__` function per kernel: the device memory pointer, then each
//! `.param` as a real parameter (`u32`/`ptr` as `uint32_t`, `i32` as `int32_t`, `f32` as
//! `float`; a `ptr` is a byte offset into the device memory). The wave is the hardware's
//! wavefront: `warpSize` lanes (64 on CDNA, 32 or 64 on RDNA), so lane masks are 64-bit.
//! Mappings: `docs/backends/hip.md`.

use wave_wbin::Module;

use crate::cfamily::{self, Config, Dialect};
use crate::{Error, Translation};

/// HIP options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Only this kernel; all when `None`.
    pub kernel: Option<String>,
}

/// C++ keywords and the HIP names that generated code must not shadow.
pub const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "const",
    "constexpr",
    "const_cast",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
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
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
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
    "thread_local",
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
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "size_t",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    "uint4",
    "std",
    "hip",
    "main",
];

/// Translates every kernel of `module` (or the one `options.kernel` names) to one HIP file.
pub fn write_string(module: &Module, options: &Options) -> Result<Translation, Error> {
    let config = Config {
        dialect: Dialect::Hip,
        keywords: KEYWORDS,
        kernel: options.kernel.as_deref(),
        wave_width: None,
    };
    cfamily::write_string(module, &config)
}

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
pub const KEYWORDS: &[&str] = crate::cfamily::cpp_keywords!(
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
);

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

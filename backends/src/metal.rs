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

/// C++ keywords (a superset of MSL's C++14 ones) and Metal's own reserved names.
pub const KEYWORDS: &[&str] = crate::cfamily::cpp_keywords!(
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
);

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

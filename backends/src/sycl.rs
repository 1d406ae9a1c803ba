//! SYCL 2020 C++ (DPC++ and other SYCL compilers).
//!
//! One named function object per kernel (`wave_kernel_<name>`, with the device memory
//! pointer, each `.param` and, when the kernel uses local memory, a `local_accessor`) and a
//! `launch_<name>(queue, grid, workgroup, mem, params...)` that submits it. The wave is a
//! sub-group of the required size (`[[sycl::reqd_sub_group_size(W)]]`, 32 by default). WAVE's
//! x dimension is SYCL's dimension 2, the one that varies fastest. Mappings:
//! `docs/backends/sycl.md`.

use wave_wbin::Module;

use crate::cfamily::{self, Config, Dialect};
use crate::{Error, Translation};

/// SYCL options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Only this kernel; all when `None`.
    pub kernel: Option<String>,
    /// The required sub-group size: the wave width, 8, 16 or 32 (Intel GPUs' sizes; lane
    /// masks are 32 bits).
    pub sub_group_size: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options { kernel: None, sub_group_size: 32 }
    }
}

/// C++ keywords and the SYCL names that generated code must not shadow.
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
    "sycl",
    "std",
    "queue",
    "grid",
    "workgroup",
    "h",
    "kernel",
);

/// Translates every kernel of `module` (or the one `options.kernel` names) to one SYCL file.
pub fn write_string(module: &Module, options: &Options) -> Result<Translation, Error> {
    if ![8, 16, 32].contains(&options.sub_group_size) {
        return Err(Error {
            problems: vec![crate::Problem::error(
                crate::codes::UNSUPPORTED,
                options.kernel.as_deref().unwrap_or(""),
                None,
                format!(
                    "sub-group size {} is not supported: the wave width must be 8, 16 or 32 (lane masks are 32 bits)",
                    options.sub_group_size
                ),
            )],
        });
    }
    let config = Config {
        dialect: Dialect::Sycl,
        keywords: KEYWORDS,
        kernel: options.kernel.as_deref(),
        wave_width: Some(options.sub_group_size),
    };
    cfamily::write_string(module, &config)
}

//! The Rust API for calling WAVE kernels from a program: compile (or load) a kernel, pick a
//! device, fill buffers, launch, read the results.
//!
//! ```no_run
//! use wave_runtime::host::{Arg, Device, Language, Launch, Options, Program, Source};
//!
//! let source = "import wave\n@wave.kernel(workgroup=64)\ndef add(a: f32[:], b: f32[:], c: f32[:], n: u32):\n    i = wave.global_id()\n    if i < n:\n        c[i] = a[i] + b[i]\n";
//! let program = Program::compile(
//!     Source::Kernel { text: source, language: Language::Python },
//!     "add.py",
//!     &Options::default(),
//! )?;
//! let device = Device::emulator();
//! let a = device.buffer_from(&[1.0f32, 2.0, 3.0])?;
//! let b = device.buffer_from(&[10.0f32, 20.0, 30.0])?;
//! let c = device.buffer::<f32>(3)?;
//! device.launch(&program, "add", &Launch::grid([1, 1, 1]), &mut [
//!     Arg::Buffer(&a), Arg::Buffer(&b), Arg::Buffer(&c), Arg::U32(3),
//! ])?;
//! assert_eq!(c.read::<f32>()?, [11.0, 22.0, 33.0]);
//! # Ok::<(), wave_runtime::host::Error>(())
//! ```
//!
//! How it is built:
//! - A [`Program`] is compiled once per source text, options and file name: programs are
//!   cached in memory (a second [`Program::compile`] of the same source is a hash and a map
//!   look-up) and on disk ([`cache_dir`]), keyed also by a hash of the compiler's own source
//!   (`build.rs`), so a changed compiler never reuses old code.
//! - The emulator's device memory is built for each launch: every buffer argument is copied
//!   into one memory (each aligned to 256 bytes), the kernel runs, and the buffers the kernel
//!   may write are copied back. A buffer passed twice is placed once, so aliasing holds.
//! - On a CUDA GPU, buffers live in device memory; a launch passes the lowest buffer's address
//!   as the kernel's memory and each buffer as its distance from there (the PTX backend
//!   addresses `memory + u32`), so arrays of other libraries (CuPy, PyTorch) are used where
//!   they are, as long as all of a launch's buffers lie within 4 GiB of each other. Host
//!   slices are copied to temporary device memory and back.
//! - Each kernel's PTX is translated and loaded by the driver once per device.

mod cache;
mod device;
mod error;
mod program;
mod types;

pub use cache::cache_dir;
pub use device::{Arg, Buffer, Device, Interrupt, Launch, Ran};
pub use error::{CompileError, Error, TrapError, line_column};
pub use program::Program;
pub use types::{Elem, Element, KernelInfo, Options, Param, ParamKind, Source};
pub use wave_kernel::Language;

#[cfg(test)]
mod tests;

//! Devices for WAVE kernels: the emulator and CUDA GPUs.
//!
//! This crate is the one place that picks a device (ARCHITECTURE.md, rule 8): the command line
//! names a [`DeviceSpec`] and runs test cases through [`Gpu`] (or the emulator), and a user's
//! program (Rust, or Python through the `wave_gpu` package) uses [`host`], the API that
//! compiles and caches kernels, holds buffers and launches on either device. For a GPU it
//! translates the module with the PTX backend (`wave_backends::ptx`, for the GPU's `sm`) and
//! runs the result with `wave_cuda`; the emulator runs the module itself. [`report`] renders
//! diagnostics for all of them.
//!
//! It also holds the rules that decide which test cases a GPU can run
//! ([`cases::gpu_not_run`]) and how a GPU's memory is compared with a case's expectations
//! ([`cases::compare_on_gpu`]), so that there is exactly one definition of "passes on a GPU"
//! ([`cases`]).

pub mod cases;
pub mod host;
pub mod process;
pub mod report;
mod verdict;
pub mod workers;

use std::fmt;
use std::time::Duration;

use wave_wbin::Module;

pub use wave_cuda::{Error as GpuError, GpuInfo, gpus};
pub use wave_emulator::Dispatch;

/// The PTX target used for a GPU: its own `sm`, capped at the newest the backend knows. PTX
/// written for an older `sm` runs on newer GPUs.
pub const NEWEST_SM: u32 = 90;
/// The oldest `sm` the PTX backend writes for.
pub const OLDEST_SM: u32 = 75;

/// A device named on the command line or in a request: `emulator`, `cuda` or `cuda:N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    /// The emulator.
    Emulator,
    /// CUDA GPU `N` (0 for `cuda`).
    Cuda(u32),
}

impl std::str::FromStr for DeviceSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<DeviceSpec, String> {
        match s {
            "emulator" | "emu" => Ok(DeviceSpec::Emulator),
            "cuda" | "gpu" => Ok(DeviceSpec::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(DeviceSpec::Cuda)
                .ok_or_else(|| format!("unknown device `{s}`: expected emulator, cuda or cuda:N")),
        }
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Emulator => f.write_str("emulator"),
            DeviceSpec::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

/// The `sm` the PTX for `gpu` is written for.
pub fn sm_for(gpu: &GpuInfo) -> u32 {
    gpu.sm().clamp(OLDEST_SM, NEWEST_SM)
}

/// Every CUDA GPU (the emulator is always there too), with why there is none when the driver
/// is missing or reports none.
pub fn devices() -> (Vec<GpuInfo>, Option<GpuError>) {
    match wave_cuda::gpus() {
        Ok(gpus) if gpus.is_empty() => {
            (gpus, Some(GpuError::NoGpu("the driver reports no GPU".into())))
        }
        Ok(gpus) => (gpus, None),
        Err(e) => (Vec::new(), Some(e)),
    }
}

/// An open CUDA GPU, with the PTX target chosen for it.
pub struct Gpu {
    gpu: wave_cuda::Gpu,
    sm: u32,
}

impl Gpu {
    /// Opens CUDA GPU `ordinal`.
    pub fn open(ordinal: u32) -> Result<Gpu, GpuError> {
        let gpu = wave_cuda::Gpu::open(ordinal)?;
        let sm = sm_for(gpu.info());
        Ok(Gpu { gpu, sm })
    }

    /// What the driver says of this GPU.
    pub fn info(&self) -> &GpuInfo {
        self.gpu.info()
    }

    /// The `sm` the PTX is written for.
    pub fn sm(&self) -> u32 {
        self.sm
    }

    /// Writes the PTX for `sm` instead of the GPU's own: an older target's code paths (before
    /// sm_80, `wave_reduce` without `redux.sync`) run on a newer GPU too.
    pub fn set_sm(&mut self, sm: u32) -> Result<(), String> {
        let own = self.gpu.info().sm();
        if !(OLDEST_SM..=own.min(NEWEST_SM)).contains(&sm) {
            return Err(format!(
                "--sm {sm}: this GPU runs PTX for sm_{OLDEST_SM} to sm_{}",
                own.min(NEWEST_SM)
            ));
        }
        self.sm = sm;
        Ok(())
    }

    /// Why this GPU can run nothing more in this process, or `None` while it can.
    pub fn gone(&self) -> Option<&str> {
        self.gpu.gone()
    }

    /// Translates one kernel of `module` to PTX for this GPU: the text and its entry's name.
    pub fn translate(&self, module: &Module, kernel: &str) -> Result<(String, String), RunError> {
        let options = wave_backends::ptx::Options { sm: self.sm, kernel: Some(kernel.into()) };
        let t = wave_backends::ptx::write_string(module, &options).map_err(|e| {
            let first = e.problems.iter().find(|p| p.severity == wave_diag::Severity::Error);
            RunError::Refused(
                first.map_or_else(|| e.to_string(), |p| format!("[{}] {}", p.code, p.message)),
            )
        })?;
        Ok((t.text, wave_backends::ptx::entry_name(kernel)))
    }

    /// Runs `dispatch` of `module` on the GPU over `memory` (the device memory, copied in and
    /// back), waiting at most `timeout`.
    pub fn run(
        &mut self,
        module: &Module,
        dispatch: &Dispatch,
        memory: &mut [u8],
        timeout: Duration,
    ) -> Result<GpuRun, RunError> {
        let launch = LaunchPlan::new(module, dispatch)?;
        let (ptx, entry) = self.translate(module, &launch.kernel)?;
        self.run_ptx(&ptx, &entry, &launch, memory, timeout)
    }

    /// Runs PTX already translated for `launch`.
    pub fn run_ptx(
        &mut self,
        ptx: &str,
        entry: &str,
        launch: &LaunchPlan,
        memory: &mut [u8],
        timeout: Duration,
    ) -> Result<GpuRun, RunError> {
        self.time_ptx(ptx, entry, launch, memory, 1, timeout)
    }

    /// Runs PTX `runs` times from the same initial `memory`, which is left as the first run
    /// left it; [`GpuRun::times_ms`] has each run's time.
    pub fn time_ptx(
        &mut self,
        ptx: &str,
        entry: &str,
        launch: &LaunchPlan,
        memory: &mut [u8],
        runs: usize,
        timeout: Duration,
    ) -> Result<GpuRun, RunError> {
        let args = launch.args();
        let l = wave_cuda::Launch {
            ptx,
            entry,
            grid: launch.grid,
            block: launch.block,
            args: &args,
            // Functions keep their frames on the per-thread stack (recursion, deep calls).
            stack_bytes: ptx.contains(".func").then_some(wave_cuda::CALL_STACK_BYTES),
            timeout,
        };
        let info = self.gpu.run_times(&l, memory, runs).map_err(RunError::Gpu)?;
        Ok(GpuRun { kernel_ms: info.kernel_ms, registers: info.registers, times_ms: info.times_ms })
    }
}

/// What a GPU run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuRun {
    /// The kernel's time on the GPU, in milliseconds.
    pub kernel_ms: f32,
    /// Registers per thread after the driver's compiler.
    pub registers: u32,
    /// Each run's time, in milliseconds.
    pub times_ms: Vec<f32>,
}

/// Why a kernel could not run on a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The dispatch does not fit the kernel or the device (missing argument, W other than 32).
    Dispatch(String),
    /// The PTX backend cannot translate the kernel.
    Refused(String),
    /// The GPU failed (the driver rejected the code, the kernel faulted or timed out, ...).
    Gpu(GpuError),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Dispatch(m) => f.write_str(m),
            RunError::Refused(m) => write!(f, "the PTX backend cannot translate the kernel: {m}"),
            RunError::Gpu(e) => e.fmt(f),
        }
    }
}

/// A dispatch checked against its kernel for a GPU: the grid, the block and each parameter's
/// value in declaration order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// The kernel's name.
    pub kernel: String,
    /// Blocks in the grid.
    pub grid: [u32; 3],
    /// Threads per block.
    pub block: [u32; 3],
    /// Each parameter's 32 bits, in declaration order.
    pub values: Vec<u32>,
}

impl LaunchPlan {
    /// Checks `dispatch` against `module` as the emulator does (kernel, workgroup, every
    /// argument, no unknown one), plus W = 32, the only width of an NVIDIA warp.
    pub fn new(module: &Module, dispatch: &Dispatch) -> Result<LaunchPlan, RunError> {
        let err = |m: String| Err(RunError::Dispatch(m));
        if dispatch.wave_width != 32 {
            return err(format!(
                "a CUDA GPU runs waves of 32 threads; W = {} runs only on the emulator",
                dispatch.wave_width
            ));
        }
        let kernel = match &dispatch.kernel {
            Some(name) => match module.kernel(name) {
                Some((_, k)) => k,
                None => return err(format!("no kernel named `{name}`")),
            },
            None => match module.kernels.as_slice() {
                [k] => k,
                [] => return err("the module has no kernel".into()),
                ks => {
                    let names: Vec<&str> = ks.iter().map(|k| k.name.as_str()).collect();
                    return err(format!(
                        "the module has {} kernels ({}): name one",
                        ks.len(),
                        names.join(", ")
                    ));
                }
            },
        };
        let Some(block) = dispatch.workgroup.or(kernel.workgroup_size) else {
            return err(
                "no workgroup size: the kernel declares no `.workgroup_size` and the dispatch gives none"
                    .into(),
            );
        };
        if dispatch.grid.contains(&0) || block.contains(&0) {
            return err("grid and workgroup dimensions must be at least 1".into());
        }
        let mut values = Vec::with_capacity(kernel.params.len());
        for p in &kernel.params {
            match dispatch.args.iter().find(|(n, _)| *n == p.name) {
                Some((_, v)) => values.push(*v),
                None => {
                    return err(format!(
                        "missing argument for parameter `{}` ({})",
                        p.name,
                        p.ty.name()
                    ));
                }
            }
        }
        if let Some((n, _)) =
            dispatch.args.iter().find(|(n, _)| !kernel.params.iter().any(|p| p.name == *n))
        {
            return err(format!("kernel `{}` has no parameter `{n}`", kernel.name));
        }
        Ok(LaunchPlan { kernel: kernel.name.clone(), grid: dispatch.grid, block, values })
    }

    /// The PTX entry's parameters: the device memory's address, then each value.
    pub fn args(&self) -> Vec<wave_cuda::Arg> {
        std::iter::once(wave_cuda::Arg::Memory)
            .chain(self.values.iter().map(|v| wave_cuda::Arg::U32(*v)))
            .collect()
    }
}

#[cfg(test)]
mod tests;

//! Runs PTX on NVIDIA GPUs through the CUDA driver API.
//!
//! This crate executes what `wave_backends::ptx` writes; it neither translates (that is the
//! backend's job) nor decides what to run or how to check it (that is `wave-runtime`'s). It
//! knows the PTX calling convention of the backend only as "a list of 64-bit and 32-bit
//! parameters", with [`Arg::Memory`] standing for the device address of the launch's memory.
//!
//! The driver is loaded with `dlopen` on first use (`cudarc`'s dynamic loading), so building
//! needs no CUDA toolkit and a machine without a driver or a GPU gets an [`Error`] naming
//! what is missing, never a failure to start or a panic.
//!
//! Invariants:
//! - Every driver call goes through `check`, which turns a `CUresult` into an [`Error`]
//!   with the call's name and the driver's own name and text for the code.
//! - A kernel that faults (a `trap`, an illegal address, ...) spoils its CUDA context, and in
//!   practice the process's use of the driver. [`Gpu::run`] returns [`Error::Fault`] and the
//!   [`Gpu`] refuses every later run ([`Error::Gone`], [`Gpu::gone`]).
//! - A kernel that does not finish within [`Launch::timeout`] cannot be stopped from inside
//!   the process. [`Gpu::run`] returns [`Error::Timeout`] and the [`Gpu`] refuses every later
//!   run ([`Error::Gone`]); the kernel ends with the process.

#![allow(
    unsafe_code,
    reason = "the CUDA driver is a C API; every unsafe block below is one driver call with \
              pointers to live locals or to device memory this crate allocated"
)]

use std::ffi::{CStr, CString, c_int, c_uint, c_void};
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cudarc::driver::sys;

/// Stack bytes per thread for a kernel that calls functions: the emulator allows 64 nested
/// calls, whose frames need more than the driver's default of 1 KiB.
pub const CALL_STACK_BYTES: usize = 64 * 1024;

/// Why something could not be done on a GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// No CUDA driver library (`libcuda.so`) could be loaded.
    NoDriver,
    /// The driver loaded but could not start, or reports no GPU.
    NoGpu(String),
    /// The GPU asked for does not exist.
    NoSuchGpu {
        /// The ordinal asked for.
        ordinal: u32,
        /// How many GPUs there are.
        count: u32,
    },
    /// The driver's PTX compiler rejected the code.
    Jit {
        /// The driver's error.
        message: String,
        /// The compiler's error log.
        log: String,
    },
    /// The PTX has no entry of this name.
    NoEntry(String),
    /// A driver call failed before the kernel ran (bad launch configuration, out of memory).
    Driver {
        /// The driver function.
        call: &'static str,
        /// The driver's name for the error (`CUDA_ERROR_INVALID_VALUE`).
        name: String,
        /// The driver's description.
        message: String,
    },
    /// The kernel faulted while it ran (`trap`, illegal address, misaligned access, ...).
    Fault {
        /// The driver's name for the error.
        name: String,
        /// The driver's description.
        message: String,
    },
    /// The kernel did not finish within the time limit.
    Timeout(Duration),
    /// This GPU can run nothing more in this process: an earlier kernel faulted or never
    /// finished.
    Gone(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDriver => f.write_str(
                "no CUDA driver: libcuda.so could not be loaded (install the NVIDIA driver, or run on the emulator)",
            ),
            Error::NoGpu(why) => write!(f, "no CUDA GPU: {why}"),
            Error::NoSuchGpu { ordinal, count } => {
                write!(f, "there is no CUDA GPU {ordinal}: the driver reports {count}")
            }
            Error::Jit { message, log } => {
                write!(f, "the CUDA driver rejected the PTX: {message}")?;
                if !log.trim().is_empty() {
                    write!(f, "\n{}", log.trim_end())?;
                }
                Ok(())
            }
            Error::NoEntry(name) => write!(f, "the PTX has no kernel entry `{name}`"),
            Error::Driver { call, name, message } => write!(f, "{call} failed: {name}: {message}"),
            Error::Fault { name, message } => {
                write!(f, "the kernel faulted on the GPU: {name}: {message}")
            }
            Error::Timeout(limit) => write!(
                f,
                "the kernel did not finish within {:.1} s (it may never end); the GPU stays busy until this process exits",
                limit.as_secs_f64()
            ),
            Error::Gone(why) => write!(f, "the GPU can run nothing more in this process: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// One GPU as the driver describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// The driver's ordinal (`cuda:N`).
    pub ordinal: u32,
    /// The product name.
    pub name: String,
    /// Compute capability, major and minor.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
    /// Global memory in bytes.
    pub memory_bytes: u64,
}

impl GpuInfo {
    /// The compute capability as an `sm_XX` number (9.0 is 90).
    pub fn sm(&self) -> u32 {
        self.compute_capability.0 * 10 + self.compute_capability.1
    }
}

/// The CUDA version the driver supports, as (major, minor).
pub fn driver_version() -> Result<(u32, u32), Error> {
    init()?;
    let mut v: c_int = 0;
    check("cuDriverGetVersion", unsafe { sys::cuDriverGetVersion(&mut v) })?;
    Ok(((v / 1000) as u32, ((v % 1000) / 10) as u32))
}

/// Every GPU the driver sees.
pub fn gpus() -> Result<Vec<GpuInfo>, Error> {
    init()?;
    let mut count: c_int = 0;
    check("cuDeviceGetCount", unsafe { sys::cuDeviceGetCount(&mut count) })?;
    (0..count.max(0) as u32).map(|ordinal| device(ordinal).map(|(_, info)| info)).collect()
}

/// A parameter of a launch, in the order of the PTX entry's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// The device address of the launch's memory (a `.u64` parameter).
    Memory,
    /// A 32-bit value (a `.u32` parameter; floats and signed integers by their bits).
    U32(u32),
    /// A device address (a `.u64` parameter): memory the caller holds, such as a
    /// [`DeviceMemory`] or another library's array.
    Ptr(u64),
}

/// How to launch a kernel.
#[derive(Clone, Debug)]
pub struct Launch<'a> {
    /// The PTX text.
    pub ptx: &'a str,
    /// The entry to launch.
    pub entry: &'a str,
    /// Blocks in the grid.
    pub grid: [u32; 3],
    /// Threads per block.
    pub block: [u32; 3],
    /// The entry's parameters.
    pub args: &'a [Arg],
    /// Stack bytes per thread (the driver's default when `None`); see [`CALL_STACK_BYTES`].
    pub stack_bytes: Option<usize>,
    /// How long the kernel may run.
    pub timeout: Duration,
}

/// What a finished run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    /// The kernel's time on the GPU (CUDA events around the launch), in milliseconds; the
    /// median where it ran several times.
    pub kernel_ms: f32,
    /// Each run's time, in milliseconds.
    pub times_ms: Vec<f32>,
    /// Registers per thread, as the driver's compiler allocated them.
    pub registers: u32,
}

/// An open GPU: its device and primary context.
pub struct Gpu {
    info: GpuInfo,
    device: sys::CUdevice,
    context: sys::CUcontext,
    stack_bytes: Option<usize>,
    /// Why this GPU can run nothing more, once that is so.
    gone: Option<String>,
    /// A kernel that timed out still runs: the context must not be released under it.
    still_running: bool,
    /// The two events [`Gpu::launch`] times each launch with, made once.
    events: Option<(Event, Event)>,
}

impl Gpu {
    /// Opens GPU `ordinal` (retains its primary context).
    pub fn open(ordinal: u32) -> Result<Gpu, Error> {
        init()?;
        let mut count: c_int = 0;
        check("cuDeviceGetCount", unsafe { sys::cuDeviceGetCount(&mut count) })?;
        if count <= 0 {
            return Err(Error::NoGpu("the driver reports no GPU".into()));
        }
        if ordinal >= count as u32 {
            return Err(Error::NoSuchGpu { ordinal, count: count as u32 });
        }
        let (device, info) = device(ordinal)?;
        let mut context = std::ptr::null_mut();
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut context, device)
        })?;
        Ok(Gpu {
            info,
            device,
            context,
            stack_bytes: None,
            gone: None,
            still_running: false,
            events: None,
        })
    }

    /// What the driver says of this GPU.
    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// Why this GPU can run nothing more in this process (a fault spoiled its context, or a
    /// kernel never finished), or `None` while it can.
    pub fn gone(&self) -> Option<&str> {
        self.gone.as_deref()
    }

    /// Loads `launch.ptx`, copies `memory` to the GPU, runs the entry, waits for it (at most
    /// `launch.timeout`) and copies the memory back.
    pub fn run(&mut self, launch: &Launch<'_>, memory: &mut [u8]) -> Result<RunInfo, Error> {
        self.run_times(launch, memory, 1)
    }

    /// Like [`Gpu::run`], `runs` times from the same initial `memory` (copied in before each
    /// run, outside the timing): the module is loaded once. `memory` is left as the first run
    /// left it, and [`RunInfo::kernel_ms`] is the median; [`RunInfo::times_ms`] has each run's.
    pub fn run_times(
        &mut self,
        launch: &Launch<'_>,
        memory: &mut [u8],
        runs: usize,
    ) -> Result<RunInfo, Error> {
        if let Some(why) = &self.gone {
            return Err(Error::Gone(why.clone()));
        }
        let module = self.load(launch.ptx, launch.entry)?;
        self.stack_at_least(launch.stack_bytes)?;
        let (function, registers) = (module.function, module.registers);
        let buffer = Buffer::new(memory.len().max(1))?;
        let start = Event::new()?;
        let end = Event::new()?;
        // The parameters as the driver wants them: one pointer to each value.
        let mut values: Vec<u64> = launch
            .args
            .iter()
            .map(|a| match a {
                Arg::Memory => buffer.ptr,
                Arg::U32(v) => u64::from(*v),
                Arg::Ptr(p) => *p,
            })
            .collect();
        // A `.u32` parameter reads the first four bytes: the low half on a little-endian host.
        let mut pointers: Vec<*mut c_void> =
            values.iter_mut().map(|v| (v as *mut u64).cast()).collect();
        let null_stream: sys::CUstream = std::ptr::null_mut();
        let mut times_ms = Vec::with_capacity(runs);
        for run in 0..runs.max(1) {
            check("cuMemcpyHtoD", unsafe {
                sys::cuMemcpyHtoD_v2(buffer.ptr, memory.as_ptr().cast(), memory.len())
            })?;
            check("cuEventRecord", unsafe { sys::cuEventRecord(start.0, null_stream) })?;
            start_kernel(function, launch.grid, launch.block, &mut pointers)?;
            check("cuEventRecord", unsafe { sys::cuEventRecord(end.0, null_stream) })?;
            match wait(&end, launch.timeout) {
                Waited::Done => {}
                Waited::Failed(status) => {
                    drop((start, end, buffer, module));
                    return Err(self.fault(status));
                }
                Waited::TimedOut => {
                    self.gone = Some("a kernel did not finish in time and still runs".into());
                    self.still_running = true;
                    // The kernel still uses these; the process's exit frees them.
                    std::mem::forget((start, end, buffer, module));
                    return Err(Error::Timeout(launch.timeout));
                }
            }
            let mut ms = 0f32;
            check("cuEventElapsedTime", unsafe {
                sys::cuEventElapsedTime_v2(&mut ms, start.0, end.0)
            })?;
            times_ms.push(ms);
            if run == 0 {
                let copied = unsafe {
                    sys::cuMemcpyDtoH_v2(memory.as_mut_ptr().cast(), buffer.ptr, memory.len())
                };
                if copied != sys::CUresult::CUDA_SUCCESS {
                    drop((start, end, buffer, module));
                    return Err(self.fault(copied));
                }
            }
        }
        let mut sorted = times_ms.clone();
        sorted.sort_by(f32::total_cmp);
        let kernel_ms = sorted[sorted.len() / 2];
        Ok(RunInfo { kernel_ms, registers, times_ms })
    }

    /// Raises the per-thread stack to `wanted` bytes if it is smaller. Never lowers it:
    /// setting the limit makes the driver lay out local memory for the whole GPU again,
    /// milliseconds that a program alternating kernels with and without calls would pay at
    /// every launch (seen: 12 to 30 ms a launch in a training loop on an H200).
    fn stack_at_least(&mut self, wanted: Option<usize>) -> Result<(), Error> {
        if wanted > self.stack_bytes {
            check("cuCtxSetLimit", unsafe {
                sys::cuCtxSetLimit(sys::CUlimit::CU_LIMIT_STACK_SIZE, wanted.unwrap_or(1024))
            })?;
            self.stack_bytes = wanted;
        }
        Ok(())
    }

    /// Makes this GPU's context current on the calling thread, after checking that it can
    /// still run.
    fn enter(&self) -> Result<(), Error> {
        if let Some(why) = &self.gone {
            return Err(Error::Gone(why.clone()));
        }
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.context) })
    }

    /// Allocates `bytes` of device memory (at least one byte), left uninitialised.
    pub fn alloc(&mut self, bytes: usize) -> Result<DeviceMemory, Error> {
        self.enter()?;
        let buffer = Buffer::new(bytes.max(1))?;
        let ptr = buffer.ptr;
        std::mem::forget(buffer);
        Ok(DeviceMemory { ptr, len: bytes, context: self.context })
    }

    /// Copies `bytes` from the host to device address `ptr`.
    pub fn upload(&mut self, ptr: u64, bytes: &[u8]) -> Result<(), Error> {
        self.enter()?;
        if bytes.is_empty() {
            return Ok(());
        }
        check("cuMemcpyHtoD", unsafe {
            sys::cuMemcpyHtoD_v2(ptr, bytes.as_ptr().cast(), bytes.len())
        })
    }

    /// Copies `bytes.len()` bytes from device address `ptr` to the host.
    pub fn download(&mut self, ptr: u64, bytes: &mut [u8]) -> Result<(), Error> {
        self.enter()?;
        if bytes.is_empty() {
            return Ok(());
        }
        let status = unsafe { sys::cuMemcpyDtoH_v2(bytes.as_mut_ptr().cast(), ptr, bytes.len()) };
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(self.fault(status));
        }
        Ok(())
    }

    /// Compiles `ptx` (the driver's PTX compiler) and finds `entry` in it, to launch it any
    /// number of times with [`Gpu::launch`].
    pub fn load(&mut self, ptx: &str, entry: &str) -> Result<Loaded, Error> {
        self.enter()?;
        let module = Module::load(ptx)?;
        let function = module.function(entry)?;
        let mut registers: c_int = 0;
        check("cuFuncGetAttribute", unsafe {
            sys::cuFuncGetAttribute(
                &mut registers,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS,
                function,
            )
        })?;
        let calls = ptx.contains(".func");
        Ok(Loaded { module, function, registers: registers.max(0) as u32, calls })
    }

    /// Launches `kernel` over memory the caller holds (no copies), and waits for it, at most
    /// `timeout`. Returns the kernel's time in milliseconds.
    pub fn launch(
        &mut self,
        kernel: &Loaded,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[Arg],
        timeout: Duration,
    ) -> Result<f32, Error> {
        self.enter()?;
        self.stack_at_least(kernel.calls.then_some(CALL_STACK_BYTES))?;
        let mut values: Vec<u64> = args
            .iter()
            .map(|a| match a {
                // A launch over the caller's memory has no memory of its own.
                Arg::Memory => 0,
                Arg::U32(v) => u64::from(*v),
                Arg::Ptr(p) => *p,
            })
            .collect();
        let mut pointers: Vec<*mut c_void> =
            values.iter_mut().map(|v| (v as *mut u64).cast()).collect();
        let (start, end) = match self.events.take() {
            Some(events) => events,
            None => (Event::new()?, Event::new()?),
        };
        let null_stream: sys::CUstream = std::ptr::null_mut();
        check("cuEventRecord", unsafe { sys::cuEventRecord(start.0, null_stream) })?;
        start_kernel(kernel.function, grid, block, &mut pointers)?;
        check("cuEventRecord", unsafe { sys::cuEventRecord(end.0, null_stream) })?;
        match wait(&end, timeout) {
            Waited::Done => {}
            Waited::Failed(status) => {
                drop((start, end));
                return Err(self.fault(status));
            }
            Waited::TimedOut => {
                self.gone = Some("a kernel did not finish in time and still runs".into());
                self.still_running = true;
                std::mem::forget((start, end));
                return Err(Error::Timeout(timeout));
            }
        }
        let mut ms = 0f32;
        let timed = check("cuEventElapsedTime", unsafe {
            sys::cuEventElapsedTime_v2(&mut ms, start.0, end.0)
        });
        self.events = Some((start, end));
        timed.map(|()| ms)
    }

    /// A fault while the kernel ran. It spoils the context, and with today's drivers the whole
    /// process: a context retained again after a reset reports the same error (seen with
    /// driver 580 on an H100). So the GPU is given up; a caller that must go on runs the next
    /// kernel in a new process (see `wave-runtime`'s GPU workers).
    fn fault(&mut self, status: sys::CUresult) -> Error {
        let (name, message) = describe(status);
        self.gone = Some(format!("an earlier kernel faulted ({name})"));
        Error::Fault { name, message }
    }
}

// SAFETY: a CUDA context may be used from any thread once made current there, and every
// method that calls the driver first makes this GPU's context current on the calling thread.
// `&mut self` methods keep two threads from using one `Gpu` at once.
unsafe impl Send for Gpu {}

impl Drop for Gpu {
    fn drop(&mut self) {
        if !self.still_running {
            unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.device) };
        }
    }
}

/// Starts `function` on the null stream (`pointers`: one pointer to each parameter's value).
fn start_kernel(
    function: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    pointers: &mut [*mut c_void],
) -> Result<(), Error> {
    let [gx, gy, gz] = grid;
    let [bx, by, bz] = block;
    check("cuLaunchKernel", unsafe {
        sys::cuLaunchKernel(
            function,
            gx as c_uint,
            gy as c_uint,
            gz as c_uint,
            bx as c_uint,
            by as c_uint,
            bz as c_uint,
            0,
            std::ptr::null_mut(),
            pointers.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    })
}

/// How a wait for a kernel ended.
enum Waited {
    Done,
    /// The event reported an error: the kernel faulted.
    Failed(sys::CUresult),
    TimedOut,
}

/// Waits for `end` by polling, so that a kernel that never ends cannot hang the caller: a
/// spin for the first 200 microseconds (most kernels called from a program end by then, and
/// a sleep costs tens of microseconds), then pauses that grow to 5 ms.
fn wait(end: &Event, timeout: Duration) -> Waited {
    let began = Instant::now();
    let mut pause = Duration::from_micros(20);
    loop {
        let status = unsafe { sys::cuEventQuery(end.0) };
        if status == sys::CUresult::CUDA_SUCCESS {
            return Waited::Done;
        }
        if status != sys::CUresult::CUDA_ERROR_NOT_READY {
            return Waited::Failed(status);
        }
        let waited = began.elapsed();
        if waited > timeout {
            return Waited::TimedOut;
        }
        if waited < Duration::from_micros(200) {
            std::hint::spin_loop();
            continue;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Loads the driver and initialises it, once per process.
fn init() -> Result<(), Error> {
    static INIT: OnceLock<Result<(), Error>> = OnceLock::new();
    INIT.get_or_init(|| {
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoDriver);
        }
        let status = unsafe { sys::cuInit(0) };
        if status == sys::CUresult::CUDA_ERROR_NO_DEVICE {
            return Err(Error::NoGpu("the driver found no GPU".into()));
        }
        if status != sys::CUresult::CUDA_SUCCESS {
            let (name, message) = describe(status);
            return Err(Error::NoGpu(format!("the driver did not start: {name}: {message}")));
        }
        Ok(())
    })
    .clone()
}

fn device(ordinal: u32) -> Result<(sys::CUdevice, GpuInfo), Error> {
    let mut device: sys::CUdevice = 0;
    check("cuDeviceGet", unsafe { sys::cuDeviceGet(&mut device, ordinal as c_int) })?;
    let mut name = [0 as std::ffi::c_char; 256];
    check("cuDeviceGetName", unsafe {
        sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as c_int, device)
    })?;
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
    let attribute = |a: sys::CUdevice_attribute| -> Result<u32, Error> {
        let mut v: c_int = 0;
        check("cuDeviceGetAttribute", unsafe { sys::cuDeviceGetAttribute(&mut v, a, device) })?;
        Ok(v.max(0) as u32)
    };
    use sys::CUdevice_attribute as A;
    let major = attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let multiprocessors = attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    let mut memory_bytes: usize = 0;
    check("cuDeviceTotalMem", unsafe { sys::cuDeviceTotalMem_v2(&mut memory_bytes, device) })?;
    let info = GpuInfo {
        ordinal,
        name,
        compute_capability: (major, minor),
        multiprocessors,
        memory_bytes: memory_bytes as u64,
    };
    Ok((device, info))
}

/// Device memory allocated by [`Gpu::alloc`], freed on drop.
pub struct DeviceMemory {
    ptr: sys::CUdeviceptr,
    len: usize,
    context: sys::CUcontext,
}

// SAFETY: the allocation belongs to the context, not to a thread; drop makes the context
// current on whichever thread frees it.
unsafe impl Send for DeviceMemory {}
// SAFETY: shared references only read the address and the length.
unsafe impl Sync for DeviceMemory {}

impl DeviceMemory {
    /// The device address.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        unsafe {
            sys::cuCtxSetCurrent(self.context);
            sys::cuMemFree_v2(self.ptr);
        }
    }
}

/// A kernel compiled by the driver, ready to launch ([`Gpu::load`]).
pub struct Loaded {
    module: Module,
    function: sys::CUfunction,
    registers: u32,
    calls: bool,
}

// SAFETY: a module and its functions belong to the context, not to a thread; launches go
// through `Gpu::launch`, which makes the context current first.
unsafe impl Send for Loaded {}
// SAFETY: shared references only pass the function handle to the driver, which is thread-safe.
unsafe impl Sync for Loaded {}

impl Loaded {
    /// Registers per thread, as the driver's compiler allocated them.
    pub fn registers(&self) -> u32 {
        self.registers
    }
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Loaded {{ module: {:p}, registers: {} }}", self.module.0, self.registers)
    }
}

/// A loaded module, unloaded on drop.
struct Module(sys::CUmodule);

impl Module {
    fn load(ptx: &str) -> Result<Module, Error> {
        let text = CString::new(ptx).map_err(|_| Error::Jit {
            message: "the PTX text contains a NUL byte".into(),
            log: String::new(),
        })?;
        let mut log = vec![0u8; 16 * 1024];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // The driver reads the size from the pointer's bits and writes back the log's length.
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), log.len() as *mut c_void];
        let mut module = std::ptr::null_mut();
        let status = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                text.as_ptr().cast(),
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            let (name, message) = describe(status);
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            return Err(Error::Jit {
                message: format!("{name}: {message}"),
                log: String::from_utf8_lossy(&log[..end]).into_owned(),
            });
        }
        Ok(Module(module))
    }

    fn function(&self, entry: &str) -> Result<sys::CUfunction, Error> {
        let name = CString::new(entry).map_err(|_| Error::NoEntry(entry.into()))?;
        let mut function = std::ptr::null_mut();
        let status = unsafe { sys::cuModuleGetFunction(&mut function, self.0, name.as_ptr()) };
        if status == sys::CUresult::CUDA_ERROR_NOT_FOUND {
            return Err(Error::NoEntry(entry.into()));
        }
        check("cuModuleGetFunction", status)?;
        Ok(function)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        unsafe { sys::cuModuleUnload(self.0) };
    }
}

/// Device memory, freed on drop.
struct Buffer {
    ptr: sys::CUdeviceptr,
}

impl Buffer {
    fn new(bytes: usize) -> Result<Buffer, Error> {
        let mut ptr: sys::CUdeviceptr = 0;
        check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) })?;
        Ok(Buffer { ptr })
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe { sys::cuMemFree_v2(self.ptr) };
    }
}

/// A CUDA event, destroyed on drop.
struct Event(sys::CUevent);

impl Event {
    fn new() -> Result<Event, Error> {
        let mut event = std::ptr::null_mut();
        check("cuEventCreate", unsafe {
            sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DEFAULT as c_uint)
        })?;
        Ok(Event(event))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        unsafe { sys::cuEventDestroy_v2(self.0) };
    }
}

fn check(call: &'static str, status: sys::CUresult) -> Result<(), Error> {
    if status == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let (name, message) = describe(status);
    Err(Error::Driver { call, name, message })
}

/// The driver's name and description of a status.
fn describe(status: sys::CUresult) -> (String, String) {
    let text = |f: unsafe fn(sys::CUresult, *mut *const std::ffi::c_char) -> sys::CUresult| {
        let mut s: *const std::ffi::c_char = std::ptr::null();
        let ok = unsafe { f(status, &mut s) } == sys::CUresult::CUDA_SUCCESS && !s.is_null();
        ok.then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
    };
    let name = text(sys::cuGetErrorName).unwrap_or_else(|| format!("CUresult {}", status as i32));
    let message = text(sys::cuGetErrorString).unwrap_or_else(|| "unknown error".into());
    (name, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_is_missing_in_one_line() {
        for e in [
            Error::NoDriver,
            Error::NoGpu("the driver found no GPU".into()),
            Error::NoSuchGpu { ordinal: 3, count: 1 },
            Error::Gone("a kernel did not finish in time and still runs".into()),
            Error::Timeout(Duration::from_secs(20)),
        ] {
            let text = e.to_string();
            assert!(!text.contains('\n'), "{text}");
            assert!(text.contains("CUDA") || text.contains("GPU") || text.contains("kernel"));
        }
        assert!(Error::NoDriver.to_string().contains("libcuda.so"));
    }

    #[test]
    fn sm_number_of_a_compute_capability() {
        let info = GpuInfo {
            ordinal: 0,
            name: "x".into(),
            compute_capability: (9, 0),
            multiprocessors: 132,
            memory_bytes: 1 << 30,
        };
        assert_eq!(info.sm(), 90);
    }
}

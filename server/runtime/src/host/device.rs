//! Devices, buffers and launches: the arguments checked against the parameters, buffers laid
//! out (the emulator) or placed (a GPU), the run, and what the kernel wrote brought back.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::error::{Error, TrapError};
use super::program::Program;
use super::types::{ALIGN, Elem, Element, KernelInfo, ParamKind};
use crate::DeviceSpec;
pub use wave_emulator::Interrupt;

/// One argument of a launch.
#[derive(Debug)]
pub enum Arg<'a> {
    /// A buffer made by [`Device::buffer`] on the same device.
    Buffer(&'a Buffer),
    /// Host memory: copied to the device, and back after the run if the kernel may write it.
    Host(&'a mut [u8]),
    /// Host memory the kernel must not write.
    HostRead(&'a [u8]),
    /// Memory on the CUDA GPU that the caller holds (another library's array), used in place.
    Device {
        /// Its device address.
        ptr: u64,
        /// Its size in bytes.
        len: usize,
    },
    /// A `u32`.
    U32(u32),
    /// An `i32`.
    I32(i32),
    /// An `f32`.
    F32(f32),
    /// A `bool`.
    Bool(bool),
    /// The same memory as argument `i` (an earlier one): a buffer or host slice passed for two
    /// parameters, which borrowing cannot express twice.
    Same(usize),
}

impl Arg<'_> {
    pub(super) fn describe(&self) -> &'static str {
        match self {
            Arg::Buffer(_) => "a buffer",
            Arg::Host(_) | Arg::HostRead(_) => "host memory",
            Arg::Device { .. } => "GPU memory",
            Arg::U32(_) => "a u32",
            Arg::I32(_) => "an i32",
            Arg::F32(_) => "an f32",
            Arg::Bool(_) => "a bool",
            Arg::Same(_) => "an earlier argument's memory",
        }
    }

    /// The 32 bits a scalar parameter of type `elem` gets, if this argument fits it.
    pub(super) fn bits(&self, elem: Elem) -> Option<u32> {
        match (self, elem) {
            (Arg::U32(v), Elem::U32) => Some(*v),
            (Arg::I32(v), Elem::U32) if *v >= 0 => Some(*v as u32),
            (Arg::I32(v), Elem::I32) => Some(*v as u32),
            (Arg::U32(v), Elem::I32) if *v <= i32::MAX as u32 => Some(*v),
            // (An `f16` parameter is passed as an `f32`, rounded in the kernel.)
            (Arg::F32(v), Elem::F32 | Elem::F16) => Some(v.to_bits()),
            (Arg::Bool(b), Elem::Bool) => Some(u32::from(*b)),
            _ => None,
        }
    }
}

/// How to launch.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Workgroups in the grid.
    pub grid: [u32; 3],
    /// Threads per workgroup; the kernel's declared size when `None`.
    pub workgroup: Option<[u32; 3]>,
    /// The emulator's instruction budget, in wave-instructions.
    pub max_steps: u64,
    /// The emulator's wave width W (a GPU's is 32).
    pub wave_width: u32,
    /// How long a GPU kernel may run.
    pub timeout: Duration,
    /// Asked now and then on the emulator whether to stop (Ctrl-C).
    pub interrupt: Option<Interrupt>,
}

impl Launch {
    /// A launch of `grid` workgroups of the kernel's declared size.
    pub fn grid(grid: [u32; 3]) -> Launch {
        Launch {
            grid,
            workgroup: None,
            max_steps: wave_emulator::Dispatch::default().max_steps,
            wave_width: 32,
            timeout: Duration::from_secs(60),
            interrupt: None,
        }
    }

    /// With workgroups of `size` threads.
    pub fn workgroup(mut self, size: [u32; 3]) -> Launch {
        self.workgroup = Some(size);
        self
    }
}

/// What a launch measured.
#[derive(Clone, Debug, Default)]
pub struct Ran {
    /// The emulator's counters (zero on a GPU).
    pub stats: wave_emulator::Stats,
    /// The kernel's time on a GPU, in milliseconds (`None` on the emulator).
    pub kernel_ms: Option<f32>,
}

/// A buffer on a device: host memory for the emulator, device memory on a GPU.
#[derive(Clone)]
pub struct Buffer(pub(super) Arc<BufferInner>);

pub(super) struct BufferInner {
    pub(super) len: usize,
    pub(super) elem: Option<Elem>,
    pub(super) store: Store,
}

pub(super) enum Store {
    Host(Mutex<Vec<u8>>),
    Gpu { memory: wave_cuda::DeviceMemory, gpu: Arc<Mutex<CudaState>> },
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = match self.0.store {
            Store::Host(_) => "emulator",
            Store::Gpu { .. } => "cuda",
        };
        write!(f, "Buffer({} bytes on the {place})", self.0.len)
    }
}

impl Buffer {
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// The element type it was made with.
    pub fn elem(&self) -> Option<Elem> {
        self.0.elem
    }

    /// Its bytes.
    pub fn read_bytes(&self) -> Result<Vec<u8>, Error> {
        match &self.0.store {
            Store::Host(m) => Ok(m.lock().unwrap_or_else(|e| e.into_inner()).clone()),
            Store::Gpu { memory, gpu } => {
                let mut out = vec![0u8; self.0.len];
                lock(gpu).gpu.gpu.download(memory.ptr(), &mut out)?;
                Ok(out)
            }
        }
    }

    /// Its elements.
    pub fn read<T: Element>(&self) -> Result<Vec<T>, Error> {
        let bytes = self.read_bytes()?;
        Ok(bytes.chunks_exact(T::ELEM.size()).map(T::get).collect())
    }

    /// Overwrites its bytes from `bytes` (of the same length).
    pub fn write_bytes(&self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() != self.0.len {
            return Err(Error::Argument(format!(
                "writing {} bytes into a buffer of {}",
                bytes.len(),
                self.0.len
            )));
        }
        match &self.0.store {
            Store::Host(m) => m.lock().unwrap_or_else(|e| e.into_inner()).copy_from_slice(bytes),
            Store::Gpu { memory, gpu } => lock(gpu).gpu.gpu.upload(memory.ptr(), bytes)?,
        }
        Ok(())
    }

    /// Overwrites its elements.
    pub fn write<T: Element>(&self, data: &[T]) -> Result<(), Error> {
        let mut bytes = Vec::with_capacity(data.len() * T::ELEM.size());
        data.iter().for_each(|v| v.put(&mut bytes));
        self.write_bytes(&bytes)
    }
}

pub(super) struct CudaState {
    pub(super) gpu: crate::Gpu,
    /// Each kernel translated and loaded: by program and kernel name.
    pub(super) loaded: HashMap<(u128, String), Arc<wave_cuda::Loaded>>,
    /// Device memory that held host slices during earlier launches, kept for the next ones
    /// (allocating device memory costs more than a small kernel).
    pub(super) staging: Vec<wave_cuda::DeviceMemory>,
}

/// The most staging allocations kept between launches.
pub(super) const STAGING_KEPT: usize = 32;

pub(super) fn lock(m: &Mutex<CudaState>) -> std::sync::MutexGuard<'_, CudaState> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where kernels run: the emulator, or a CUDA GPU.
#[derive(Clone)]
pub struct Device {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    Emulator,
    Cuda { ordinal: u32, state: Arc<Mutex<CudaState>> },
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({})", self.spec())
    }
}

impl Device {
    /// The emulator (always there).
    pub fn emulator() -> Device {
        Device { kind: Kind::Emulator }
    }

    /// CUDA GPU `ordinal`.
    pub fn cuda(ordinal: u32) -> Result<Device, Error> {
        let gpu = crate::Gpu::open(ordinal)?;
        let state =
            Arc::new(Mutex::new(CudaState { gpu, loaded: HashMap::new(), staging: Vec::new() }));
        Ok(Device { kind: Kind::Cuda { ordinal, state } })
    }

    /// The device `spec` names.
    pub fn open(spec: DeviceSpec) -> Result<Device, Error> {
        match spec {
            DeviceSpec::Emulator => Ok(Device::emulator()),
            DeviceSpec::Cuda(n) => Device::cuda(n),
        }
    }

    /// Which device it is.
    pub fn spec(&self) -> DeviceSpec {
        match &self.kind {
            Kind::Emulator => DeviceSpec::Emulator,
            Kind::Cuda { ordinal, .. } => DeviceSpec::Cuda(*ordinal),
        }
    }

    /// What it is, in words: `emulator`, or the GPU's name and `sm`.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Emulator => "the WAVE emulator".into(),
            Kind::Cuda { ordinal, state } => {
                let s = lock(state);
                format!("cuda:{ordinal} ({}, PTX for sm_{})", s.gpu.info().name, s.gpu.sm())
            }
        }
    }

    /// A buffer of `len` zeroed elements of `T`.
    pub fn buffer<T: Element>(&self, len: usize) -> Result<Buffer, Error> {
        let bytes = len
            .checked_mul(T::ELEM.size())
            .filter(|b| *b <= u32::MAX as usize / 2)
            .ok_or_else(|| {
                Error::Argument(format!(
                    "a buffer of {len} {} elements: device memory is addressed with 32 bits",
                    T::ELEM.name()
                ))
            })?;
        self.buffer_bytes(&vec![0u8; bytes], Some(T::ELEM))
    }

    /// A buffer holding `data`.
    pub fn buffer_from<T: Element>(&self, data: &[T]) -> Result<Buffer, Error> {
        let mut bytes = Vec::with_capacity(data.len() * T::ELEM.size());
        data.iter().for_each(|v| v.put(&mut bytes));
        self.buffer_bytes(&bytes, Some(T::ELEM))
    }

    /// A buffer holding `bytes`, of elements `elem` where known.
    pub fn buffer_bytes(&self, bytes: &[u8], elem: Option<Elem>) -> Result<Buffer, Error> {
        let store = match &self.kind {
            Kind::Emulator => {
                if bytes.len() > u32::MAX as usize / 2 {
                    return Err(Error::Argument(format!(
                        "a buffer of {} bytes: the emulator's device memory is addressed with 32 bits",
                        bytes.len()
                    )));
                }
                Store::Host(Mutex::new(bytes.to_vec()))
            }
            Kind::Cuda { state, .. } => {
                let mut s = lock(state);
                let memory = s.gpu.gpu.alloc(bytes.len())?;
                s.gpu.gpu.upload(memory.ptr(), bytes)?;
                Store::Gpu { memory, gpu: state.clone() }
            }
        };
        Ok(Buffer(Arc::new(BufferInner { len: bytes.len(), elem, store })))
    }

    /// Runs kernel `kernel` of `program` (the only one when empty) with `args` in parameter
    /// order, and waits for it.
    pub fn launch(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &mut [Arg<'_>],
    ) -> Result<Ran, Error> {
        let info = program.kernel(kernel)?;
        check_args(info, args)?;
        let workgroup = launch.workgroup.or(info.workgroup_size).ok_or_else(|| {
            Error::Argument(format!(
                "kernel `{}` declares no workgroup size: give one with the launch",
                info.name
            ))
        })?;
        if launch.grid.contains(&0) || workgroup.contains(&0) {
            return Err(Error::Argument("grid and workgroup dimensions must be at least 1".into()));
        }
        // A declared size is a promise the code relies on: the PTX declares it as the most
        // threads a block has (`.maxntid`), and spill frames are laid out for it.
        let threads = |[x, y, z]: [u32; 3]| u64::from(x) * u64::from(y) * u64::from(z);
        if let Some(declared) = info.workgroup_size
            && threads(workgroup) > threads(declared)
        {
            let [x, y, z] = workgroup;
            let [dx, dy, dz] = declared;
            return Err(Error::Argument(format!(
                "kernel `{}` declares workgroups of ({dx}, {dy}, {dz}) threads, and the launch asks for ({x}, {y}, {z}): launch at most {} threads a workgroup, or declare a larger size",
                info.name,
                threads(declared)
            )));
        }
        match &self.kind {
            Kind::Emulator => emulate(program, info, launch, workgroup, args),
            Kind::Cuda { state, .. } => on_gpu(state, program, info, launch, workgroup, args),
        }
    }

    /// [`Device::launch`] with arguments by parameter name.
    pub fn launch_named(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: Vec<(&str, Arg<'_>)>,
    ) -> Result<Ran, Error> {
        let info = program.kernel(kernel)?;
        if let Some((n, _)) = args.iter().find(|(n, _)| !info.params.iter().any(|p| p.name == *n)) {
            return Err(Error::Argument(format!(
                "kernel {} has no parameter `{n}`",
                info.signature()
            )));
        }
        let mut args: Vec<(&str, Option<Arg<'_>>)> =
            args.into_iter().map(|(n, a)| (n, Some(a))).collect();
        let mut ordered = Vec::with_capacity(info.params.len());
        for p in &info.params {
            let arg = args.iter_mut().find(|(n, _)| *n == p.name).and_then(|(_, a)| a.take());
            match arg {
                Some(a) => ordered.push(a),
                None => {
                    return Err(Error::Argument(format!(
                        "missing argument for parameter `{p}` of kernel {}",
                        info.signature()
                    )));
                }
            }
        }
        let name = info.name.clone();
        self.launch(program, &name, launch, &mut ordered)
    }
}

/// Checks the arguments against the parameters: their number, buffers for buffers, values
/// of the right type for scalars, and typed buffers of the right element type.
fn check_args(info: &KernelInfo, args: &[Arg<'_>]) -> Result<(), Error> {
    if args.len() != info.params.len() {
        return Err(Error::Argument(format!(
            "kernel {} takes {} arguments, {} given",
            info.signature(),
            info.params.len(),
            args.len()
        )));
    }
    for (p, a) in info.params.iter().zip(args) {
        match (p.kind, a) {
            (ParamKind::Buffer { elem, .. }, Arg::Buffer(b)) => {
                if let (Some(want), Some(have)) = (elem, b.elem())
                    && want != have
                {
                    return Err(Error::Argument(format!(
                        "parameter `{p}` of kernel `{}` takes {} elements, and the buffer holds {}",
                        info.name,
                        want.name(),
                        have.name()
                    )));
                }
            }
            (ParamKind::Buffer { written: true, .. }, Arg::HostRead(_)) => {
                return Err(Error::Argument(format!(
                    "parameter `{p}` of kernel `{}` may be written, and the memory given is read-only",
                    info.name
                )));
            }
            (ParamKind::Buffer { .. }, Arg::Host(_) | Arg::HostRead(_) | Arg::Device { .. }) => {}
            (ParamKind::Buffer { .. }, Arg::Same(i)) => {
                let earlier = info.params.iter().zip(args).take_while(|(q, _)| q.name != p.name);
                let written = matches!(p.kind, ParamKind::Buffer { written: true, .. });
                let ok = earlier.enumerate().any(|(j, (q, a))| {
                    j == *i
                        && matches!(q.kind, ParamKind::Buffer { .. })
                        && match a {
                            Arg::Buffer(_) | Arg::Host(_) | Arg::Device { .. } => true,
                            Arg::HostRead(_) => !written,
                            _ => false,
                        }
                });
                if !ok {
                    return Err(Error::Argument(format!(
                        "parameter `{p}` of kernel `{}`: `Same({i})` names no earlier buffer argument (that may be written, where this one may)",
                        info.name
                    )));
                }
            }
            (ParamKind::Scalar(e), a) => {
                if a.bits(e).is_none() {
                    return Err(Error::Argument(format!(
                        "parameter `{p}` of kernel `{}` takes {} {}, and {} was given",
                        info.name,
                        if e == Elem::I32 { "an" } else { "a" },
                        e.name(),
                        a.describe()
                    )));
                }
            }
            (ParamKind::Buffer { .. }, a) => {
                return Err(Error::Argument(format!(
                    "parameter `{p}` of kernel `{}` takes a buffer, and {} was given",
                    info.name,
                    a.describe()
                )));
            }
        }
    }
    Ok(())
}

/// The distinct memories among buffer arguments: for each argument, the index of its region
/// (a buffer or host slice passed twice is one region), and each region's written flag.
fn regions(info: &KernelInfo, args: &[Arg<'_>]) -> (Vec<Option<usize>>, Vec<(usize, bool)>) {
    let mut keys: Vec<(usize, usize)> = Vec::new();
    let mut of_arg: Vec<Option<usize>> = Vec::with_capacity(args.len());
    let mut region_info: Vec<(usize, bool)> = Vec::new();
    for (p, a) in info.params.iter().zip(args) {
        let written = matches!(p.kind, ParamKind::Buffer { written: true, .. });
        let key = match a {
            Arg::Buffer(b) => Some((Arc::as_ptr(&b.0) as usize, b.len())),
            Arg::Host(s) => Some((s.as_ptr() as usize, s.len())),
            Arg::HostRead(s) => Some((s.as_ptr() as usize, s.len())),
            Arg::Device { ptr, len } => Some((*ptr as usize, *len)),
            _ => None,
        };
        let Some(key) = key else {
            // `Same(i)` shares argument `i`'s region, and its writes.
            let same = match a {
                Arg::Same(i) => of_arg.get(*i).copied().flatten(),
                _ => None,
            };
            if let Some(r) = same {
                region_info[r].1 |= written;
            }
            of_arg.push(same);
            continue;
        };
        let index = match keys.iter().position(|k| *k == key) {
            Some(i) => {
                region_info[i].1 |= written;
                i
            }
            None => {
                keys.push(key);
                region_info.push((key.1, written));
                keys.len() - 1
            }
        };
        of_arg.push(Some(index));
    }
    (of_arg, region_info)
}

/// For each region the kernel may write, the first argument that holds it, and the region.
fn written_regions(of_arg: &[Option<usize>], regions: &[(usize, bool)]) -> Vec<(usize, usize)> {
    let mut done = vec![false; regions.len()];
    let mut out = Vec::new();
    for (i, region) in of_arg.iter().enumerate() {
        if let Some(r) = *region
            && regions[r].1
            && !done[r]
        {
            done[r] = true;
            out.push((i, r));
        }
    }
    out
}

fn emulate(
    program: &Program,
    info: &KernelInfo,
    launch: &Launch,
    workgroup: [u32; 3],
    args: &mut [Arg<'_>],
) -> Result<Ran, Error> {
    let (of_arg, regions) = regions(info, args);
    // Lay the regions out one after another.
    let mut offsets = Vec::with_capacity(regions.len());
    let mut end = 0usize;
    for (len, _) in &regions {
        offsets.push(end);
        end = (end + len).div_ceil(ALIGN) * ALIGN;
    }
    if end > u32::MAX as usize {
        return Err(Error::Argument(format!(
            "the launch's buffers take {end} bytes: the emulator addresses 4 GiB"
        )));
    }
    let mut memory = vec![0u8; end];
    let mut values = Vec::with_capacity(args.len());
    for ((p, a), region) in info.params.iter().zip(args.iter()).zip(&of_arg) {
        let value = match (a, region) {
            (_, Some(r)) => {
                let at = offsets[*r];
                match a {
                    Arg::Buffer(b) => match &b.0.store {
                        Store::Host(m) => {
                            let m = m.lock().unwrap_or_else(|e| e.into_inner());
                            memory[at..at + m.len()].copy_from_slice(&m);
                        }
                        Store::Gpu { .. } => {
                            return Err(Error::Argument(format!(
                                "parameter `{}`: the buffer lives on a CUDA GPU, and this launch is on the emulator",
                                p.name
                            )));
                        }
                    },
                    Arg::Host(s) => memory[at..at + s.len()].copy_from_slice(s),
                    Arg::HostRead(s) => memory[at..at + s.len()].copy_from_slice(s),
                    Arg::Device { .. } => {
                        return Err(Error::Argument(format!(
                            "parameter `{}`: GPU memory cannot be passed to the emulator (copy it to the host first)",
                            p.name
                        )));
                    }
                    _ => {}
                }
                at as u32
            }
            (a, None) => match p.kind {
                ParamKind::Scalar(e) => a.bits(e).unwrap_or(0),
                ParamKind::Buffer { .. } => 0,
            },
        };
        values.push((p.name.clone(), value));
    }
    let dispatch = wave_emulator::Dispatch {
        kernel: Some(info.name.clone()),
        grid: launch.grid,
        workgroup: Some(workgroup),
        wave_width: launch.wave_width,
        args: values,
        max_steps: launch.max_steps,
        trace: false,
        interrupt: launch.interrupt.clone(),
        progress: None,
        threads: 0,
    };
    let outcome = wave_emulator::run(&program.module, &dispatch, &mut memory)
        .map_err(|t| trap_error(program, t))?;
    // Copy back what the kernel may have written (each region once).
    for (i, r) in written_regions(&of_arg, &regions) {
        let at = offsets[r];
        match &mut args[i] {
            Arg::Buffer(b) => {
                if let Store::Host(m) = &b.0.store {
                    let mut m = m.lock().unwrap_or_else(|e| e.into_inner());
                    let len = m.len();
                    m.copy_from_slice(&memory[at..at + len]);
                }
            }
            Arg::Host(s) => {
                let len = s.len();
                s.copy_from_slice(&memory[at..at + len]);
            }
            _ => {}
        }
    }
    Ok(Ran { stats: outcome.stats, kernel_ms: None })
}

fn on_gpu(
    state: &Arc<Mutex<CudaState>>,
    program: &Program,
    info: &KernelInfo,
    launch: &Launch,
    workgroup: [u32; 3],
    args: &mut [Arg<'_>],
) -> Result<Ran, Error> {
    if launch.wave_width != 32 {
        return Err(Error::Argument(format!(
            "a CUDA GPU runs waves of 32 threads; W = {} runs only on the emulator",
            launch.wave_width
        )));
    }
    let mut s = lock(state);
    let key = (program.id, info.name.clone());
    let loaded = match s.loaded.get(&key) {
        Some(l) => l.clone(),
        None => {
            let (ptx, entry) = s.gpu.translate(&program.module, &info.name).map_err(|e| {
                Error::Device(format!("kernel `{}` cannot run on the GPU: {e}", info.name))
            })?;
            let l = Arc::new(s.gpu.gpu.load(&ptx, &entry)?);
            s.loaded.insert(key, l.clone());
            l
        }
    };
    let (of_arg, regions) = regions(info, args);
    // Each region's device address; host memory goes to temporary device memory.
    let mut temporaries: Vec<Option<wave_cuda::DeviceMemory>> = Vec::new();
    let mut addresses = vec![0u64; regions.len()];
    let mut placed = vec![false; regions.len()];
    for (a, region) in args.iter().zip(&of_arg) {
        let Some(r) = *region else { continue };
        if placed[r] {
            continue;
        }
        placed[r] = true;
        addresses[r] = match a {
            Arg::Buffer(b) => match &b.0.store {
                Store::Gpu { memory, gpu } if Arc::ptr_eq(gpu, state) => memory.ptr(),
                _ => {
                    return Err(Error::Argument(
                        "a buffer of another device was passed to this GPU".into(),
                    ));
                }
            },
            Arg::Device { ptr, .. } => *ptr,
            Arg::Host(bytes) => upload_temporary(&mut s, bytes, &mut temporaries)?,
            Arg::HostRead(bytes) => upload_temporary(&mut s, bytes, &mut temporaries)?,
            _ => 0,
        };
    }
    let base = addresses.iter().copied().min().unwrap_or(0);
    let top = addresses.iter().zip(&regions).map(|(a, (len, _))| a + *len as u64).max();
    if top.is_some_and(|t| t - base > u64::from(u32::MAX)) {
        return Err(Error::Argument(
            "the launch's buffers lie more than 4 GiB apart on the GPU: WAVE addresses memory with 32 bits"
                .into(),
        ));
    }
    let mut params = vec![wave_cuda::Arg::Ptr(base)];
    for ((p, a), region) in info.params.iter().zip(args.iter()).zip(&of_arg) {
        let v = match (region, p.kind) {
            (Some(r), _) => (addresses[*r] - base) as u32,
            (None, ParamKind::Scalar(e)) => a.bits(e).unwrap_or(0),
            (None, ParamKind::Buffer { .. }) => 0,
        };
        params.push(wave_cuda::Arg::U32(v));
    }
    let ms = s.gpu.gpu.launch(&loaded, launch.grid, workgroup, &params, launch.timeout)?;
    // Host memory the kernel may write comes back.
    for (i, r) in written_regions(&of_arg, &regions) {
        if let Arg::Host(bytes) = &mut args[i] {
            s.gpu.gpu.download(addresses[r], bytes)?;
        }
    }
    for m in temporaries.into_iter().flatten() {
        s.staging.push(m);
    }
    // Over the limit, the oldest go.
    let over = s.staging.len().saturating_sub(STAGING_KEPT);
    s.staging.drain(..over);
    Ok(Ran { stats: wave_emulator::Stats::default(), kernel_ms: Some(ms) })
}

/// Copies `bytes` to device memory for one launch: the smallest kept staging allocation
/// that holds them, or a new one (a power of two, to be reused).
fn upload_temporary(
    s: &mut CudaState,
    bytes: &[u8],
    temporaries: &mut Vec<Option<wave_cuda::DeviceMemory>>,
) -> Result<u64, Error> {
    let fits = s
        .staging
        .iter()
        .enumerate()
        .filter(|(_, m)| m.len() >= bytes.len())
        .min_by_key(|(_, m)| m.len())
        .map(|(i, _)| i);
    let memory = match fits {
        Some(i) => s.staging.swap_remove(i),
        None => s.gpu.gpu.alloc(bytes.len().next_power_of_two().max(ALIGN))?,
    };
    s.gpu.gpu.upload(memory.ptr(), bytes)?;
    let ptr = memory.ptr();
    temporaries.push(Some(memory));
    Ok(ptr)
}

/// A trap as an error: an interruption, or the trap with its source line.
fn trap_error(program: &Program, trap: wave_emulator::Trap) -> Error {
    if trap.message.starts_with("interrupted") {
        return Error::Interrupted(format!("{trap}"));
    }
    let source_line = trap
        .line
        .and_then(|l| program.text.lines().nth(l.saturating_sub(1) as usize))
        .map(str::to_owned);
    let mut rendered = format!("error: {}\n", trap.message);
    match trap.line {
        Some(line) => rendered.push_str(&format!("  --> {}:{line}\n", program.file)),
        None => rendered.push_str(&format!("  --> {}\n", program.file)),
    }
    if let (Some(line), Some(text)) = (trap.line, &source_line) {
        let n = line.to_string();
        let pad = " ".repeat(n.len());
        rendered.push_str(&format!("{pad} |\n{n} | {text}\n{pad} |\n"));
    }
    let mut at = vec![format!("kernel `{}`", trap.kernel)];
    if let Some([x, y, z]) = trap.workgroup {
        at.push(format!("workgroup ({x}, {y}, {z})"));
    }
    if let Some(w) = trap.wave {
        at.push(format!("wave {w}"));
    }
    if let Some(l) = trap.lane {
        at.push(format!("lane {l}"));
    }
    if let Some(pc) = trap.pc {
        at.push(format!("pc 0x{pc:x}"));
    }
    rendered.push_str(&format!("  = in {}", at.join(", ")));
    Error::Trap(Box::new(TrapError { trap, file: program.file.clone(), source_line, rendered }))
}

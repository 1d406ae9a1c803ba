//! `wave_gpu._native`: the Python package's native module, a thin layer over
//! [`wave_runtime::host`]. The Python side (`python/wave_gpu/__init__.py`) checks arguments
//! against the kernel's parameters and turns numpy arrays into byte views; this module holds
//! the programs and devices, launches with the GIL released, and turns errors into the
//! package's exceptions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyReadwriteArrayDyn};
use pyo3::IntoPyObjectExt;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use wave_runtime::host::{self, Arg, Elem, ParamKind, line_column};

create_exception!(wave_gpu, WaveError, PyException, "Base class of the package's errors.");
create_exception!(
    wave_gpu,
    CompileError,
    WaveError,
    "A kernel does not compile. The message is the rendered diagnostic (as `wave compile` prints it); `diagnostics` has each one (code, message, severity, line, column, end_line, end_column), and `file`, `line`, `column` and `code` are the first error's."
);
create_exception!(
    wave_gpu,
    KernelTrap,
    WaveError,
    "A kernel trapped on the emulator: `reason`, `kernel`, `file`, `line`, `source_line`, `workgroup`, `wave`, `lane`, `pc`."
);
create_exception!(
    wave_gpu,
    LaunchError,
    WaveError,
    "A launch that does not fit the kernel or the device (grid, workgroup, buffers)."
);
create_exception!(
    wave_gpu,
    DeviceError,
    WaveError,
    "The device failed or is missing (no CUDA driver or GPU, a kernel that faulted on the GPU)."
);

fn to_py(py: Python<'_>, e: host::Error, interrupted: Option<PyErr>) -> PyErr {
    let set = |err: &PyErr, name: &str, value: Py<PyAny>| {
        let _ = err.value(py).setattr(name, value);
    };
    match e {
        host::Error::Compile(c) => {
            let err = CompileError::new_err(c.rendered.trim_end().to_owned());
            let diagnostics: Vec<Py<PyAny>> = c
                .diagnostics
                .iter()
                .map(|d| {
                    let dict = PyDict::new(py);
                    let (line, column) = line_column(&c.text, d.span.start);
                    let (end_line, end_column) = line_column(&c.text, d.span.end);
                    let _ = dict.set_item("code", d.code);
                    let _ = dict.set_item("message", &d.message);
                    let _ =
                        dict.set_item("severity", if d.is_error() { "error" } else { "warning" });
                    let _ = dict.set_item("line", line);
                    let _ = dict.set_item("column", column);
                    let _ = dict.set_item("end_line", end_line);
                    let _ = dict.set_item("end_column", end_column);
                    dict.into_any().unbind()
                })
                .collect();
            set(&err, "diagnostics", opt(py, Some(diagnostics)));
            set(&err, "file", opt(py, Some(c.file.clone())));
            let first = c.first();
            let (code, line, column) = match first {
                Some((code, _, line, column)) => (Some(code.to_owned()), Some(line), Some(column)),
                None => (None, None, None),
            };
            set(&err, "code", opt(py, code));
            set(&err, "line", opt(py, line));
            set(&err, "column", opt(py, column));
            err
        }
        host::Error::Trap(t) => {
            let err = KernelTrap::new_err(t.rendered.clone());
            let trap = &t.trap;
            set(&err, "reason", opt(py, Some(trap.message.clone())));
            set(&err, "kernel", opt(py, Some(trap.kernel.clone())));
            set(&err, "file", opt(py, Some(t.file.clone())));
            set(&err, "line", opt(py, trap.line));
            set(&err, "source_line", opt(py, t.source_line.clone()));
            set(&err, "workgroup", opt(py, trap.workgroup.map(|[x, y, z]| (x, y, z))));
            set(&err, "wave", opt(py, trap.wave));
            set(&err, "lane", opt(py, trap.lane));
            set(&err, "pc", opt(py, trap.pc));
            err
        }
        host::Error::Interrupted(m) => {
            interrupted.unwrap_or_else(|| PyKeyboardInterrupt::new_err(m))
        }
        host::Error::Argument(m) => LaunchError::new_err(m),
        host::Error::Device(m) => DeviceError::new_err(m),
        host::Error::Io(m) => WaveError::new_err(m),
    }
}

fn opt<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: Option<T>) -> Py<PyAny> {
    match v {
        Some(v) => v.into_py_any(py).unwrap_or_else(|_| py.None()),
        None => py.None(),
    }
}

/// A compiled kernel file (or assembly, or a `.wbin`).
#[pyclass(frozen, module = "wave_gpu._native")]
struct Program {
    inner: Arc<host::Program>,
}

#[pymethods]
impl Program {
    /// Compiles `text`, a kernel file in `language` (`python`, `rust`, `cpp`, `typescript`,
    /// or `wave` for assembly) named `file` in messages. Cached by text, options and name.
    #[staticmethod]
    #[pyo3(signature = (text, language, file, opt = 2, max_registers = 64))]
    fn compile(
        py: Python<'_>,
        text: &str,
        language: &str,
        file: &str,
        opt: u8,
        max_registers: u32,
    ) -> PyResult<Program> {
        let options = host::Options { opt_level: opt, max_registers };
        let source = match language {
            "wave" | "asm" => host::Source::Assembly(text),
            other => {
                let ext = match other {
                    "python" => "py",
                    "rust" => "rs",
                    "typescript" => "ts",
                    o => o,
                };
                match host::Language::from_extension(ext) {
                    Some(language) => host::Source::Kernel { text, language },
                    None => {
                        return Err(PyValueError::new_err(format!(
                            "unknown language `{other}`: expected python, rust, cpp, typescript or wave"
                        )));
                    }
                }
            }
        };
        let compiled = py.detach(|| host::Program::compile(source, file, &options));
        compiled.map(|inner| Program { inner }).map_err(|e| to_py(py, e, None))
    }

    /// Loads (or compiles) the file at `path`: `.py`, `.rs`, `.cpp`, `.ts`, `.wave`, `.wbin`.
    #[staticmethod]
    #[pyo3(signature = (path, opt = 2, max_registers = 64))]
    fn load(py: Python<'_>, path: &str, opt: u8, max_registers: u32) -> PyResult<Program> {
        let options = host::Options { opt_level: opt, max_registers };
        let compiled =
            py.detach(|| host::Program::compile_file(std::path::Path::new(path), &options));
        compiled.map(|inner| Program { inner }).map_err(|e| to_py(py, e, None))
    }

    /// The kernels: `(name, params, workgroup)`, each parameter `(name, kind, elem, written)`
    /// with kind `buffer` or `scalar`, elem a type name or None (an untyped pointer).
    #[getter]
    fn kernels(&self) -> Vec<KernelDesc> {
        self.inner
            .kernels()
            .iter()
            .map(|k| {
                let params = k
                    .params
                    .iter()
                    .map(|p| match p.kind {
                        ParamKind::Buffer { elem, written } => {
                            (p.name.clone(), "buffer", elem.map(Elem::name), written)
                        }
                        ParamKind::Scalar(e) => (p.name.clone(), "scalar", Some(e.name()), false),
                    })
                    .collect();
                (k.name.clone(), params, k.workgroup_size.map(|[x, y, z]| (x, y, z)))
            })
            .collect()
    }

    /// The file name messages use.
    #[getter]
    fn file(&self) -> &str {
        self.inner.file()
    }

    /// The compile's warnings, rendered (empty when there are none).
    #[getter]
    fn warnings(&self) -> &str {
        self.inner.rendered_warnings()
    }

    /// Whether this program came from the disk cache.
    #[getter]
    fn loaded_from_disk(&self) -> bool {
        self.inner.loaded_from_disk()
    }
}

type KernelDesc =
    (String, Vec<(String, &'static str, Option<&'static str>, bool)>, Option<(u32, u32, u32)>);

/// A device: the emulator, or a CUDA GPU.
#[pyclass(frozen, module = "wave_gpu._native")]
struct Device {
    inner: host::Device,
}

/// One argument as the Python side hands it over.
enum Given<'py> {
    Host(PyReadwriteArrayDyn<'py, u8>),
    HostRead(PyReadonlyArrayDyn<'py, u8>),
    Device(u64, usize),
    Same(usize),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
}

fn given<'py>(index: usize, t: &Bound<'py, PyAny>) -> PyResult<Given<'py>> {
    let t = t.cast::<PyTuple>()?;
    let tag: String = t.get_item(0)?.extract()?;
    let v = t.get_item(1)?;
    // numpy's borrow checking refuses two views of one memory where one is written.
    let overlap = |_| {
        PyTypeError::new_err(format!(
            "argument {} is a view of memory that another array argument also uses: pass the same array for both parameters, or a copy",
            index + 1
        ))
    };
    Ok(match tag.as_str() {
        "host" => Given::Host(v.cast::<PyArrayDyn<u8>>()?.try_readwrite().map_err(overlap)?),
        "host_ro" => Given::HostRead(v.cast::<PyArrayDyn<u8>>()?.try_readonly().map_err(overlap)?),
        "device" => Given::Device(v.extract()?, t.get_item(2)?.extract()?),
        "same" => Given::Same(v.extract()?),
        "u32" => Given::U32(v.extract()?),
        "i32" => Given::I32(v.extract()?),
        "f32" => Given::F32(v.extract()?),
        "bool" => Given::Bool(v.extract()?),
        other => return Err(PyValueError::new_err(format!("unknown argument kind `{other}`"))),
    })
}

fn host_args<'a>(given: &'a mut [Given<'_>]) -> PyResult<Vec<Arg<'a>>> {
    let mut out = Vec::with_capacity(given.len());
    for g in given.iter_mut() {
        out.push(match g {
            Given::Host(a) => {
                Arg::Host(a.as_slice_mut().map_err(|e| PyValueError::new_err(e.to_string()))?)
            }
            Given::HostRead(a) => {
                Arg::HostRead(a.as_slice().map_err(|e| PyValueError::new_err(e.to_string()))?)
            }
            Given::Device(ptr, len) => Arg::Device { ptr: *ptr, len: *len },
            Given::Same(i) => Arg::Same(*i),
            Given::U32(v) => Arg::U32(*v),
            Given::I32(v) => Arg::I32(*v),
            Given::F32(v) => Arg::F32(*v),
            Given::Bool(v) => Arg::Bool(*v),
        });
    }
    Ok(out)
}

#[pymethods]
impl Device {
    /// Opens `spec`: `emulator`, `cuda` or `cuda:N`.
    #[new]
    fn new(py: Python<'_>, spec: &str) -> PyResult<Device> {
        let spec: wave_runtime::DeviceSpec = spec.parse().map_err(PyValueError::new_err)?;
        let opened = py.detach(|| host::Device::open(spec));
        opened.map(|inner| Device { inner }).map_err(|e| to_py(py, e, None))
    }

    /// `emulator` or `cuda:N`.
    #[getter]
    fn spec(&self) -> String {
        self.inner.spec().to_string()
    }

    /// The device in words.
    #[getter]
    fn description(&self) -> String {
        self.inner.describe()
    }

    /// Launches `kernel` of `program` over `grid` workgroups of `workgroup` threads with
    /// `args` (tuples made by the Python side), and waits. Returns `(instructions, kernel_ms)`.
    #[allow(clippy::too_many_arguments, reason = "the launch's settings, as keywords in Python")]
    #[pyo3(signature = (program, kernel, grid, workgroup, args, max_steps, timeout, wave_width = 32))]
    fn launch(
        &self,
        py: Python<'_>,
        program: &Program,
        kernel: &str,
        grid: (u32, u32, u32),
        workgroup: Option<(u32, u32, u32)>,
        args: Vec<Bound<'_, PyAny>>,
        max_steps: u64,
        timeout: f64,
        wave_width: u32,
    ) -> PyResult<(u64, Option<f32>)> {
        // (`from_secs_f64` panics on NaN, negative and huge values.)
        if !(timeout.is_finite() && timeout > 0.0) {
            return Err(PyValueError::new_err(format!(
                "timeout must be a positive number of seconds, got {timeout}"
            )));
        }
        let mut given: Vec<Given<'_>> =
            args.iter().enumerate().map(|(i, a)| given(i, a)).collect::<PyResult<_>>()?;
        let mut host_args = host_args(&mut given)?;
        // Ctrl-C: the run asks now and then (every 65,536 wave-instructions, about a
        // millisecond) whether a signal came; the handler's exception is raised afterwards.
        let pending: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
        let slot = pending.clone();
        let interrupt = host::Interrupt::new(move || {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    true
                }
            })
        });
        let launch = host::Launch {
            grid: [grid.0, grid.1, grid.2],
            workgroup: workgroup.map(|(x, y, z)| [x, y, z]),
            max_steps,
            wave_width,
            timeout: Duration::from_secs_f64(timeout.min(1e9)),
            interrupt: Some(interrupt),
        };
        let inner = &self.inner;
        let program = &program.inner;
        let ran = py.detach(|| inner.launch(program, kernel, &launch, &mut host_args));
        match ran {
            Ok(r) => Ok((r.stats.instructions, r.kernel_ms)),
            Err(e) => {
                let caught = pending.lock().unwrap_or_else(|p| p.into_inner()).take();
                Err(to_py(py, e, caught))
            }
        }
    }
}

/// The benchmark's baseline: seconds per launch of `kernel` with `args` (as `launch` takes
/// them) done `iterations` times from Rust, with no Python between launches.
#[pyfunction]
#[allow(clippy::too_many_arguments, reason = "the launch's settings, as `launch` takes them")]
fn bench_rust_launch(
    py: Python<'_>,
    device: &Device,
    program: &Program,
    kernel: &str,
    grid: (u32, u32, u32),
    workgroup: Option<(u32, u32, u32)>,
    args: Vec<Bound<'_, PyAny>>,
    iterations: u32,
) -> PyResult<f64> {
    let mut given: Vec<Given<'_>> =
        args.iter().enumerate().map(|(i, a)| given(i, a)).collect::<PyResult<_>>()?;
    let mut host_args = host_args(&mut given)?;
    let mut launch = host::Launch::grid([grid.0, grid.1, grid.2]);
    launch.workgroup = workgroup.map(|(x, y, z)| [x, y, z]);
    let began = std::time::Instant::now();
    for _ in 0..iterations {
        device
            .inner
            .launch(&program.inner, kernel, &launch, &mut host_args)
            .map_err(|e| to_py(py, e, None))?;
    }
    Ok(began.elapsed().as_secs_f64() / f64::from(iterations.max(1)))
}

/// The CUDA GPUs: `(spec, name)` each; and why there are none, if so.
#[pyfunction]
fn cuda_devices(py: Python<'_>) -> (Vec<(String, String)>, Option<String>) {
    let (gpus, why) = py.detach(wave_runtime::devices);
    let list = gpus.iter().map(|g| (format!("cuda:{}", g.ordinal), g.name.clone())).collect();
    (list, why.map(|e| e.to_string()))
}

/// The folder of the disk cache of compiled kernels, if there is one.
#[pyfunction]
fn cache_dir() -> Option<String> {
    host::cache_dir().map(|d| d.display().to_string())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Program>()?;
    m.add_class::<Device>()?;
    m.add_function(wrap_pyfunction!(cuda_devices, m)?)?;
    m.add_function(wrap_pyfunction!(cache_dir, m)?)?;
    m.add_function(wrap_pyfunction!(bench_rust_launch, m)?)?;
    m.add("WaveError", py.get_type::<WaveError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("KernelTrap", py.get_type::<KernelTrap>())?;
    m.add("LaunchError", py.get_type::<LaunchError>())?;
    m.add("DeviceError", py.get_type::<DeviceError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

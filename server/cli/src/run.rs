//! `wave run` and `wave test`: the emulator or a GPU (`--device`) from the command line.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use wave_conformance::options::{
    Dump, json_string, parse_arg, parse_dims, parse_dump, parse_number,
};
use wave_conformance::{Case, Elem, Expectation};

use crate::report::Reporter;
use crate::{Failure, assemble_file};

/// Options of `wave run`.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// A .wave, .wbin or case .toml file.
    file: PathBuf,
    /// Kernel to run (needed when the file has several).
    #[arg(long)]
    kernel: Option<String>,
    /// Workgroups in the grid.
    #[arg(long, value_name = "X[,Y[,Z]]")]
    grid: Option<String>,
    /// Threads per workgroup (default: the kernel's .workgroup_size).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    workgroup: Option<String>,
    /// Threads per wave: 8, 16, 32 or 64 (4 with a warning).
    #[arg(long)]
    wave_width: Option<u32>,
    /// Bytes of device memory (default 1 MiB).
    #[arg(long)]
    device_memory: Option<usize>,
    /// A kernel argument by parameter name: an integer (decimal or 0x hex) or a float.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    args: Vec<String>,
    /// Names the parameters of a .wbin that records none (the reference toolchain's), in the
    /// order of the registers r0, r1, ... that hold them: `--param a:ptr --param n:u32`.
    #[arg(long = "param", value_name = "NAME:TYPE")]
    params: Vec<String>,
    /// Load a file's bytes into device memory at OFFSET.
    #[arg(long = "load", value_name = "OFFSET=FILE")]
    loads: Vec<String>,
    /// Print COUNT values of TYPE (u8 u16 u32 i32 u64 f16 f32) at OFFSET after the run.
    #[arg(long = "dump", value_name = "OFFSET:TYPE:COUNT")]
    dumps: Vec<String>,
    /// Write the whole device memory to FILE after the run.
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Print one line per wave-instruction with its active mask.
    #[arg(long)]
    trace: bool,
    /// Write the trace in the Chrome trace event format (open it in Perfetto).
    #[arg(long, value_name = "FILE")]
    trace_json: Option<PathBuf>,
    /// Print counters: instructions by class, active-lane utilisation, barrier waits, memory traffic.
    #[arg(long)]
    stats: bool,
    /// Print machine-readable results.
    #[arg(long)]
    json: bool,
    /// Instruction budget, in wave-instructions (emulator).
    #[arg(long, default_value_t = 100_000_000)]
    max_steps: u64,
    /// Threads that run the workgroups on the emulator (default: `WAVE_THREADS`, or every
    /// core); the results are the same for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
    /// Where to run: `emulator`, `cuda` or `cuda:N` (see `wave devices`).
    #[arg(long, default_value = "emulator", value_name = "DEVICE")]
    device: wave_runtime::DeviceSpec,
    /// Seconds a kernel may run on a GPU before it is given up.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    timeout: f64,
    /// On a GPU: write the PTX for this `sm_XX` (default: the GPU's own, at most 90).
    #[arg(long)]
    sm: Option<u32>,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure::Usage(message.into())
}

pub(crate) fn run(reporter: &Reporter, a: RunArgs) -> Result<(), Failure> {
    // What to run: a module, plus a case's dispatch and memory when the file is a case.
    let ext = a.file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let (module, case) = match ext {
        "toml" => {
            let case = Case::load(&a.file).map_err(|e| {
                eprintln!("error: {e}");
                Failure::Input
            })?;
            let (module, _) = crate::case_module(reporter, &case)?;
            (module, Some(case))
        }
        "wbin" => (crate::read_wbin_with(&a.file, &a.params)?, None),
        e if wave_kernel::Language::from_extension(e).is_some() => {
            (crate::compile_file(reporter, &a.file)?.0, None)
        }
        _ => (assemble_file(reporter, &a.file)?.module, None),
    };
    let mut dispatch = match &case {
        // A GPU runs W = 32 only; the emulator the case's first width.
        Some(c) if matches!(a.device, wave_runtime::DeviceSpec::Cuda(_)) => c.dispatch(32),
        Some(c) => c.dispatch(c.wave_widths.first().copied().unwrap_or(32)),
        None => wave_emulator::Dispatch::default(),
    };
    dispatch.max_steps = a.max_steps;
    dispatch.trace = a.trace || a.trace_json.is_some();
    dispatch.threads = a.threads.unwrap_or(0);
    if let Some(k) = a.kernel {
        dispatch.kernel = Some(k);
    }
    if let Some(g) = &a.grid {
        dispatch.grid = parse_dims(g, "--grid").map_err(usage)?;
    }
    if let Some(w) = &a.workgroup {
        dispatch.workgroup = Some(parse_dims(w, "--workgroup").map_err(usage)?);
    }
    if let Some(w) = a.wave_width {
        dispatch.wave_width = w;
    }
    for text in &a.args {
        let (name, value) = parse_arg(text).map_err(usage)?;
        dispatch.args.retain(|(n, _)| *n != name);
        dispatch.args.push((name, value));
    }
    let size = a
        .device_memory
        .or(case.as_ref().map(|c| c.device_memory))
        .unwrap_or(wave_conformance::DEFAULT_DEVICE_MEMORY);
    if size > wave_conformance::MAX_DEVICE_MEMORY {
        return Err(usage(format!(
            "--device-memory {size} is above the emulator's {} bytes",
            wave_conformance::MAX_DEVICE_MEMORY
        )));
    }
    let mut device = match &case {
        Some(c) if a.device_memory.is_none() => c.initial_memory(),
        Some(c) => {
            let mut d = vec![0u8; size];
            for b in &c.memory {
                let end = (b.offset + b.bytes.len()).min(size);
                if b.offset < end {
                    d[b.offset..end].copy_from_slice(&b.bytes[..end - b.offset]);
                }
            }
            d
        }
        None => vec![0u8; size],
    };
    for load in &a.loads {
        let (offset, file) = load
            .split_once('=')
            .ok_or_else(|| usage(format!("--load takes OFFSET=FILE, found `{load}`")))?;
        let offset = parse_number(offset)
            .and_then(|o| usize::try_from(o).ok())
            .ok_or_else(|| usage(format!("--load: bad offset `{offset}`")))?;
        let bytes = crate::read_bytes(Path::new(file))?;
        if offset.checked_add(bytes.len()).is_none_or(|end| end > device.len()) {
            return Err(usage(format!(
                "--load: {} bytes at {offset} do not fit in {} bytes of device memory",
                bytes.len(),
                device.len()
            )));
        }
        device[offset..offset + bytes.len()].copy_from_slice(&bytes);
    }
    let mut dumps: Vec<Dump> =
        a.dumps.iter().map(|d| parse_dump(d).map_err(usage)).collect::<Result<_, _>>()?;
    if dumps.is_empty()
        && let Some(Case { expect: Expectation::Memory(blocks), .. }) = &case
    {
        dumps = blocks
            .iter()
            .map(|b| Dump { offset: b.offset, elem: b.elem, count: b.bytes.len() / b.elem.size() })
            .collect();
    }
    for d in &dumps {
        let end = d.count.checked_mul(d.elem.size()).and_then(|n| n.checked_add(d.offset));
        if end.is_none_or(|end| end > device.len()) {
            return Err(usage(format!(
                "--dump at {} of {} {} values lies outside device memory",
                d.offset,
                d.count,
                d.elem.name()
            )));
        }
    }
    if let wave_runtime::DeviceSpec::Cuda(ordinal) = a.device {
        if a.trace || a.trace_json.is_some() || a.stats {
            return Err(usage("--trace, --trace-json and --stats need --device emulator"));
        }
        let mut gpu = wave_runtime::Gpu::open(ordinal)
            .map_err(|e| usage(format!("--device {}: {e}", a.device)))?;
        if let Some(sm) = a.sm {
            gpu.set_sm(sm).map_err(usage)?;
        }
        let timeout = timeout(a.timeout)?;
        let result = gpu.run(&module, &dispatch, &mut device, timeout);
        if result.is_ok() {
            save(a.save.as_deref(), &device)?;
        }
        let mut out = String::new();
        match &result {
            Ok(run) if a.json => {
                let _ = write!(
                    out,
                    "{{\"ok\":true,\"device\":{},\"gpu\":{},\"kernel_ms\":{:.4},\"registers\":{},\"dumps\":",
                    json_string(&a.device.to_string()),
                    json_string(&gpu.info().name),
                    run.kernel_ms,
                    run.registers
                );
                write_dumps_json(&mut out, &dumps, &device);
                out.push_str("}\n");
            }
            Ok(_) => write_dumps(&mut out, &dumps, &device),
            Err(e) if a.json => {
                let _ = writeln!(
                    out,
                    "{{\"ok\":false,\"device\":{},\"error\":{{\"message\":{}}}}}",
                    json_string(&a.device.to_string()),
                    json_string(&e.to_string())
                );
            }
            Err(e) => eprintln!("error: {e}"),
        }
        std::io::stdout().lock().write_all(out.as_bytes())?;
        return if result.is_err() { Err(Failure::Input) } else { Ok(()) };
    }
    let progress = std::sync::Arc::new(wave_emulator::Progress::default());
    dispatch.progress = Some(progress.clone());
    let workgroups = dispatch.grid.iter().fold(1u64, |n, &d| n.saturating_mul(u64::from(d)));
    let result = crate::progress::shown(!a.json, &progress, workgroups, || {
        wave_emulator::run(&module, &dispatch, &mut device)
    });
    if result.is_ok() {
        save(a.save.as_deref(), &device)?;
    }
    let mut out = String::new();
    match &result {
        Ok(outcome) => {
            for w in &outcome.warnings {
                eprintln!("warning: {w}");
            }
            if outcome.trace_truncated {
                eprintln!("warning: the trace stopped after {} events", wave_emulator::TRACE_LIMIT);
            }
            if let Some(path) = &a.trace_json {
                std::fs::write(path, wave_emulator::chrome_trace(&outcome.trace))
                    .map_err(|e| usage(format!("cannot write `{}`: {e}", path.display())))?;
            }
            if a.json {
                let s = &outcome.stats;
                let _ = write!(
                    out,
                    "{{\"ok\":true,\"stats\":{{\"instructions\":{},\"lane_ops\":{},\"utilisation\":{:.4},\"alu\":{},\"memory\":{},\"wave\":{},\"control\":{},\"barrier_waits\":{},\"device_read\":{},\"device_written\":{},\"local_read\":{},\"local_written\":{},\"workgroups\":{}}},\"dumps\":",
                    s.instructions,
                    s.lane_ops,
                    s.utilisation(),
                    s.by_class[0],
                    s.by_class[1],
                    s.by_class[2],
                    s.by_class[3],
                    s.barrier_waits,
                    s.device_bytes[0],
                    s.device_bytes[1],
                    s.local_bytes[0],
                    s.local_bytes[1],
                    s.workgroups
                );
                write_dumps_json(&mut out, &dumps, &device);
                out.push_str("}\n");
            } else {
                if a.trace {
                    for event in &outcome.trace {
                        let _ = writeln!(out, "{event}");
                    }
                }
                write_dumps(&mut out, &dumps, &device);
                if a.stats {
                    let s = &outcome.stats;
                    let _ = writeln!(
                        out,
                        "instructions      {} wave-instructions, {} lane-operations",
                        s.instructions, s.lane_ops
                    );
                    let _ = writeln!(
                        out,
                        "  by class        alu {}, memory {}, wave {}, control {}",
                        s.by_class[0], s.by_class[1], s.by_class[2], s.by_class[3]
                    );
                    let _ = writeln!(
                        out,
                        "active lanes      {:.1}% of W = {}",
                        100.0 * s.utilisation(),
                        s.wave_width
                    );
                    let _ = writeln!(out, "barrier waits     {}", s.barrier_waits);
                    let _ = writeln!(
                        out,
                        "device memory     {} bytes read, {} written",
                        s.device_bytes[0], s.device_bytes[1]
                    );
                    let _ = writeln!(
                        out,
                        "local memory      {} bytes read, {} written",
                        s.local_bytes[0], s.local_bytes[1]
                    );
                    let _ = writeln!(out, "workgroups        {}", s.workgroups);
                }
            }
        }
        Err(trap) => {
            if a.json {
                let _ = writeln!(
                    out,
                    "{{\"ok\":false,\"trap\":{{\"message\":{},\"kernel\":{},\"pc\":{},\"line\":{},\"wave\":{},\"lane\":{}}}}}",
                    json_string(&trap.message),
                    json_string(&trap.kernel),
                    trap.pc.map_or("null".into(), |v| v.to_string()),
                    trap.line.map_or("null".into(), |v| v.to_string()),
                    trap.wave.map_or("null".into(), |v| v.to_string()),
                    trap.lane.map_or("null".into(), |v| v.to_string())
                );
            } else {
                eprintln!("error: {trap}");
            }
        }
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    if result.is_err() { Err(Failure::Input) } else { Ok(()) }
}

/// Writes device memory to `path`, when one is given (written beside and renamed, so that a
/// reader never sees half a file).
fn save(path: Option<&std::path::Path>, device: &[u8]) -> Result<(), Failure> {
    let Some(path) = path else { return Ok(()) };
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, device)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| usage(format!("cannot write `{}`: {e}", path.display())))
}

/// `SECONDS` as a duration, or a usage error.
fn timeout(seconds: f64) -> Result<std::time::Duration, Failure> {
    std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| usage(format!("--timeout {seconds}: expected a positive number of seconds")))
}

/// Each dump as `OFFSET TYPE[COUNT]: v v v`, one line each.
fn write_dumps(out: &mut String, dumps: &[Dump], device: &[u8]) {
    for d in dumps {
        let _ = write!(out, "{} {}[{}]:", d.offset, d.elem.name(), d.count);
        for k in 0..d.count {
            let at = d.offset + k * d.elem.size();
            let _ = write!(out, " {}", short(d.elem, &device[at..at + d.elem.size()]));
        }
        out.push('\n');
    }
}

/// The dumps as a JSON array of `{offset, type, values}`.
fn write_dumps_json(out: &mut String, dumps: &[Dump], device: &[u8]) {
    out.push('[');
    for (i, d) in dumps.iter().enumerate() {
        let values: Vec<String> = (0..d.count)
            .map(|k| {
                let at = d.offset + k * d.elem.size();
                json_value(d.elem, &device[at..at + d.elem.size()])
            })
            .collect();
        let _ = write!(
            out,
            "{}{{\"offset\":{},\"type\":\"{}\",\"values\":[{}]}}",
            if i > 0 { "," } else { "" },
            d.offset,
            d.elem.name(),
            values.join(",")
        );
    }
    out.push(']');
}

fn raw(bytes: &[u8]) -> u64 {
    let mut r = [0u8; 8];
    r[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(r)
}

fn short(elem: Elem, bytes: &[u8]) -> String {
    let v = raw(bytes);
    match elem {
        Elem::F32 => format!("{:?}", f32::from_bits(v as u32)),
        Elem::F16 => format!("{:?}", half::f16::from_bits(v as u16).to_f32()),
        Elem::I32 => (v as u32 as i32).to_string(),
        _ => v.to_string(),
    }
}

fn json_value(elem: Elem, bytes: &[u8]) -> String {
    let s = short(elem, bytes);
    match elem {
        Elem::F32 | Elem::F16 if s.contains("NaN") || s.contains("inf") => json_string(&s),
        _ => s,
    }
}

/// Options of `wave test`.
#[derive(clap::Args)]
pub(crate) struct TestArgs {
    /// Case files or folders.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Where to run: `emulator`, `cuda` or `cuda:N` (see `wave devices`).
    #[arg(long, default_value = "emulator", value_name = "DEVICE")]
    device: wave_runtime::DeviceSpec,
    /// Level of kernel-source cases: 0 to 3, or `all` (default: each case's own).
    #[arg(long, value_name = "LEVEL")]
    opt: Option<wave_runtime::cases::Levels>,
    /// Seconds one case may run on a GPU before it counts as failed.
    #[arg(long, default_value_t = 20.0, value_name = "SECONDS")]
    timeout: f64,
    /// On a GPU: write the PTX for this `sm_XX` (default: the GPU's own, at most 90).
    #[arg(long)]
    sm: Option<u32>,
    /// Threads on the emulator: cases run side by side, and a single case's workgroups
    /// (default: `WAVE_THREADS`, or every core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
}

pub(crate) fn test(a: TestArgs) -> Result<(), Failure> {
    let levels = a.opt.unwrap_or(wave_runtime::cases::Levels::Case);
    let timeout = timeout(a.timeout)?;
    let mut out = String::new();
    let mut runner = match a.device {
        wave_runtime::DeviceSpec::Emulator => wave_runtime::cases::Runner::Emulator,
        wave_runtime::DeviceSpec::Cuda(ordinal) => {
            // Checked here, so that a missing GPU is one line and exit 2, not a failed case each.
            let gpus =
                wave_runtime::gpus().map_err(|e| usage(format!("--device {}: {e}", a.device)))?;
            let Some(info) = gpus.iter().find(|g| g.ordinal == ordinal) else {
                return Err(usage(format!(
                    "--device {}: {}",
                    a.device,
                    wave_runtime::GpuError::NoSuchGpu { ordinal, count: gpus.len() as u32 }
                )));
            };
            let sm = a.sm.unwrap_or_else(|| wave_runtime::sm_for(info));
            let _ = writeln!(
                out,
                "device {}: {} (compute capability {}.{}), PTX for sm_{sm}",
                a.device, info.name, info.compute_capability.0, info.compute_capability.1,
            );
            let exe = std::env::current_exe().map_err(|e| {
                usage(format!("cannot find the wave binary to start GPU workers: {e}"))
            })?;
            let secs = a.timeout;
            let start = move || {
                let mut c = std::process::Command::new(&exe);
                c.args(["gpu-worker", "--device", &format!("cuda:{ordinal}")]).args([
                    "--timeout",
                    &secs.to_string(),
                    "--sm",
                    &sm.to_string(),
                ]);
                c
            };
            wave_runtime::cases::Runner::Gpu(wave_runtime::workers::GpuWorkers::new(start, timeout))
        }
    };
    let threads = wave_emulator::resolve_threads(a.threads.unwrap_or(0));
    let summary =
        wave_runtime::cases::run_paths(&a.paths, &mut runner, levels, threads).map_err(usage)?;
    for failure in &summary.failures {
        let _ = writeln!(out, "FAIL {failure}");
    }
    for why in &summary.not_run {
        let _ = writeln!(out, "not run: {why}");
    }
    let _ = write!(out, "{} passed, {} failed", summary.passed, summary.failures.len());
    if !summary.not_run.is_empty() {
        let _ = write!(out, ", {} not run", summary.not_run.len());
    }
    out.push('\n');
    std::io::stdout().lock().write_all(out.as_bytes())?;
    if summary.failures.is_empty() { Ok(()) } else { Err(Failure::Input) }
}

/// Options of the hidden `wave gpu-worker`.
#[derive(clap::Args)]
pub(crate) struct WorkerArgs {
    /// The GPU.
    #[arg(long, value_name = "DEVICE")]
    device: wave_runtime::DeviceSpec,
    /// Seconds a kernel may run.
    #[arg(long, value_name = "SECONDS")]
    timeout: f64,
    /// The PTX target.
    #[arg(long)]
    sm: Option<u32>,
}

/// `wave gpu-worker`: runs the cases `wave test --device cuda` sends it (wave_runtime::workers).
pub(crate) fn gpu_worker(a: WorkerArgs) -> Result<(), Failure> {
    let wave_runtime::DeviceSpec::Cuda(ordinal) = a.device else {
        return Err(usage("gpu-worker needs --device cuda:N"));
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    wave_runtime::workers::serve(ordinal, a.sm, timeout(a.timeout)?, stdin, stdout)?;
    Ok(())
}

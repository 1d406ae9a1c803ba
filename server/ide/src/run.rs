//! Code lenses, "Run in emulator" and the backend previews.
//!
//! A run's dispatch comes from, in order: a `; wave-run: OPTIONS` comment inside the kernel
//! (or on the lines just above its `.kernel`), with `wave run`'s options; a case file next to
//! the source (`NAME.toml`, or any `.toml` of the folder whose `file` names the source); or
//! defaults (one workgroup of `.workgroup_size` or W threads, each `ptr` parameter given its
//! own 4 KiB region and the first 16 `u32` of each region shown after the run, an integer
//! parameter the number of threads and a float one 1.0). The editor's
//! text is what runs, saved or not. Runs step the emulator in slices, so that they can be
//! cancelled and report progress, under an instruction budget.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wave_backends::Target;
use wave_conformance::options::{Dump, parse_run_options};
use wave_conformance::{Block, Case, Elem, Expectation};
use wave_db::{Database, Settings, SourceFile, backend, check_kernel, kernels};
use wave_emulator::Progress;

use crate::at::all_kernels;
use crate::source::line_of;

mod source;

/// What a lens does when clicked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LensCommand {
    /// Run the kernel (`wave.run`, executed by the server): in the emulator, on a GPU, or on
    /// both with their memories compared.
    Run {
        /// The kernel.
        kernel: String,
        /// Where.
        device: RunDevice,
    },
    /// Show the kernel's code for a backend (`wave.showPreview`, executed by the editor
    /// through the `wave/preview` request).
    Preview {
        /// The kernel.
        kernel: String,
        /// The backend.
        target: Target,
    },
    /// Show the kernel's WAVE assembly or MIR (`wave.showPreview` with `target` `wave` or
    /// `mir`): for kernels written in Python, Rust, C++ or TypeScript.
    Show {
        /// The kernel.
        kernel: String,
        /// `wave` or `mir`.
        form: String,
    },
    /// Start the debugger with the run's dispatch (`wave.debug`, executed by the editor).
    Debug {
        /// The kernel.
        kernel: String,
        /// What to debug, when the dispatch resolves.
        launch: Option<DebugLaunch>,
    },
}

/// What the debugger should launch for a kernel: the `wave dap` launch configuration as plain
/// data (the adapter's crate writes its JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugLaunch {
    /// The case file when the dispatch comes from one (its memory comes with it), else the
    /// source file, when it has a path.
    pub program: Option<std::path::PathBuf>,
    /// The kernel.
    pub kernel: String,
    /// Workgroups.
    pub grid: [u32; 3],
    /// Threads per workgroup, when the dispatch gives them.
    pub workgroup: Option<[u32; 3]>,
    /// W.
    pub wave_width: u32,
    /// Arguments by parameter name.
    pub args: Vec<(String, u64)>,
}

/// A code lens above a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lens {
    /// The `.kernel` line.
    pub range: Range<usize>,
    /// What it shows.
    pub title: String,
    /// What it does.
    pub command: LensCommand,
}

/// Where `wave.run` runs a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunDevice {
    /// The emulator.
    Emulator,
    /// The first CUDA GPU.
    Gpu,
    /// Both, with each buffer's memory compared.
    Compare,
}

impl RunDevice {
    /// Its name in `wave.run`'s arguments.
    pub fn name(self) -> &'static str {
        match self {
            RunDevice::Emulator => "emulator",
            RunDevice::Gpu => "cuda",
            RunDevice::Compare => "compare",
        }
    }

    /// The device named `name`.
    pub fn from_name(name: &str) -> Option<RunDevice> {
        [RunDevice::Emulator, RunDevice::Gpu, RunDevice::Compare]
            .into_iter()
            .find(|d| d.name() == name)
    }
}

/// The run lenses of a kernel at `range`: "Run in emulator" (naming where the dispatch comes
/// from), and where a GPU is present, "Run on GPU" and "Compare GPU with emulator".
pub(crate) fn run_lenses(
    range: &Range<usize>,
    kernel: &str,
    plan: &Result<RunPlan, String>,
    gpu: bool,
) -> Vec<Lens> {
    let (from, gpu) = match plan {
        Ok(p) => (format!("({})", p.from), gpu),
        // A dispatch that does not resolve runs nowhere: no GPU lens either.
        Err(e) => (format!("(dispatch error: {e})"), false),
    };
    let mut out = vec![Lens {
        range: range.clone(),
        title: format!("▶ Run in emulator {from}"),
        command: LensCommand::Run { kernel: kernel.into(), device: RunDevice::Emulator },
    }];
    if gpu {
        out.push(Lens {
            range: range.clone(),
            title: "▶ Run on GPU".into(),
            command: LensCommand::Run { kernel: kernel.into(), device: RunDevice::Gpu },
        });
        out.push(Lens {
            range: range.clone(),
            title: "Compare GPU with emulator".into(),
            command: LensCommand::Run { kernel: kernel.into(), device: RunDevice::Compare },
        });
    }
    out
}

/// The lenses of `file`: per kernel that assembles, the run lenses ([`run_lenses`]; the GPU
/// ones only when `gpu`), "Debug" and one "Show …" per backend. `path` is the file on disk,
/// when it has one (to find a case file next to it).
pub fn code_lenses(
    db: &Database,
    file: SourceFile,
    path: Option<&Path>,
    settings: Settings,
    gpu: bool,
) -> Vec<Lens> {
    if let Some(build) = crate::source::build(db, file) {
        return source::code_lenses(db, file, build, path, settings, gpu);
    }
    let mut out = Vec::new();
    for k in all_kernels(db, file) {
        if wave_diag::has_errors(&k.check.diagnostics) {
            continue;
        }
        let line_end = k.text.find('\n').unwrap_or(k.text.len());
        let range = k.span.range.start..k.span.range.start + line_end;
        let name = k.span.name.clone();
        let plan = plan_run(db, file, &name, path, settings);
        out.extend(run_lenses(&range, &name, &plan, gpu));
        let launch = plan.as_ref().ok().map(|p| debug_launch(p, path));
        out.push(Lens {
            range: range.clone(),
            title: "Debug".into(),
            command: LensCommand::Debug { kernel: name.clone(), launch },
        });
        for target in Target::ALL {
            out.push(Lens {
                range: range.clone(),
                title: format!("Show {}", target.label()),
                command: LensCommand::Preview { kernel: name.clone(), target },
            });
        }
    }
    out
}

/// A resolved run: the kernel assembled on its own, its dispatch and memory.
#[derive(Clone, Debug)]
pub struct RunPlan {
    /// The kernel.
    pub kernel: String,
    /// Where the dispatch came from (`; wave-run:`, `add.toml`, `defaults`).
    pub from: String,
    /// The kernel as a module.
    pub module: wave_wbin::Module,
    /// The dispatch.
    pub dispatch: wave_emulator::Dispatch,
    /// Device memory before the run.
    pub device: Vec<u8>,
    /// What to show after the run.
    pub dumps: Vec<Dump>,
    /// What the case file expects (checked after the run).
    pub expect: Vec<Block>,
    /// The trap the case file expects, if it expects one.
    pub expect_trap: Option<String>,
    /// The 1-based file line of the kernel's first line (module lines are relative to it).
    pub first_line: u32,
    /// The case file the dispatch came from, if one did.
    pub case: Option<PathBuf>,
}

/// The default instruction budget of an editor run, in wave-instructions.
pub const DEFAULT_RUN_BUDGET: u64 = 20_000_000;
const DEFAULT_MEMORY: usize = 64 << 10;
const REGION: usize = 4096;

/// Resolves the dispatch of `kernel` in `file` (see the module documentation).
pub fn plan_run(
    db: &Database,
    file: SourceFile,
    kernel: &str,
    path: Option<&Path>,
    settings: Settings,
) -> Result<RunPlan, String> {
    let text = file.text(db);
    // The kernel as a module, and the file line its module's line 1 is: what the editor's
    // diagnostics were computed on (`-O2` for a kernel source).
    let wave_db::RunModule { module, range, first_line, only } =
        wave_db::run_module(db, file, kernel, wave_kernel::opt::Level::O2)?;
    let k = match &only {
        Some(name) => module.kernel(name).map(|(_, k)| k),
        None => module.kernels.first(),
    }
    .ok_or("the kernel is empty")?;
    let w = match settings.wave_width(db) {
        0 => 32,
        w => w,
    };
    let mut plan = RunPlan {
        kernel: kernel.to_owned(),
        from: "defaults".into(),
        dispatch: wave_emulator::Dispatch {
            kernel: only,
            wave_width: w,
            max_steps: DEFAULT_RUN_BUDGET,
            ..wave_emulator::Dispatch::default()
        },
        device: Vec::new(),
        dumps: Vec::new(),
        expect: Vec::new(),
        expect_trap: None,
        first_line,
        module: module.clone(),
        case: None,
    };
    if k.workgroup_size.is_none() {
        plan.dispatch.workgroup = Some([w, 1, 1]);
    }
    if let Some(options) = run_comment(text, range) {
        let o = parse_run_options(&options).map_err(|e| format!("`; wave-run:` {e}"))?;
        plan.from = "; wave-run:".into();
        if let Some(g) = o.grid {
            plan.dispatch.grid = g;
        }
        if o.workgroup.is_some() {
            plan.dispatch.workgroup = o.workgroup;
        }
        if let Some(w) = o.wave_width {
            plan.dispatch.wave_width = w;
            if k.workgroup_size.is_none() && o.workgroup.is_none() {
                plan.dispatch.workgroup = Some([w, 1, 1]);
            }
        }
        if let Some(m) = o.max_steps {
            plan.dispatch.max_steps = m;
        }
        plan.dispatch.args = o.args;
        plan.dumps = o.dumps;
        plan.device = vec![0; o.device_memory.unwrap_or(DEFAULT_MEMORY)];
    } else if let Some(case) = path.and_then(|p| case_next_to(p, kernel)) {
        plan.from =
            case.path.file_name().map_or("case file".into(), |n| n.to_string_lossy().into_owned());
        plan.case = Some(case.path.clone());
        plan.dispatch.grid = case.grid;
        plan.dispatch.workgroup = case.workgroup.or(plan.dispatch.workgroup);
        plan.dispatch.args = case.args.clone();
        let w = case.wave_widths.first().copied().unwrap_or(w);
        plan.dispatch.wave_width =
            if settings.wave_width(db) != 0 { plan.dispatch.wave_width } else { w };
        plan.device = case.initial_memory();
        match &case.expect {
            Expectation::Memory(blocks) => {
                let width = plan.dispatch.wave_width;
                plan.expect = blocks
                    .iter()
                    .filter(|b| b.wave_width.is_none_or(|bw| bw == width))
                    .cloned()
                    .collect();
                plan.dumps = plan
                    .expect
                    .iter()
                    .map(|b| Dump {
                        offset: b.offset,
                        elem: b.elem,
                        count: b.bytes.len() / b.elem.size(),
                    })
                    .collect();
            }
            Expectation::Trap(t) => plan.expect_trap = Some(t.clone()),
            Expectation::Error(_) => {}
        }
    } else {
        plan.device = vec![0; DEFAULT_MEMORY];
        let mut region = 0;
        // An integer parameter is the number of threads (a bound like `n` then covers every
        // thread), a float one 1.0.
        let [gx, gy, gz] = plan.dispatch.grid;
        let [wx, wy, wz] = k.workgroup_size.or(plan.dispatch.workgroup).unwrap_or([w, 1, 1]);
        let threads = (gx * gy * gz).saturating_mul(wx * wy * wz);
        for p in &k.params {
            let value = match p.ty {
                wave_wbin::ParamType::Ptr => {
                    plan.dumps.push(Dump { offset: region, elem: Elem::U32, count: 16 });
                    region += REGION;
                    (region - REGION) as u32
                }
                wave_wbin::ParamType::F32 => 1.0f32.to_bits(),
                _ => threads,
            };
            plan.dispatch.args.push((p.name.clone(), value));
        }
    }
    for d in &plan.dumps {
        if d.offset + d.count * d.elem.size() > plan.device.len() {
            return Err(format!(
                "a dump of {} {} at {} lies outside the {} bytes of device memory",
                d.count,
                d.elem.name(),
                d.offset,
                plan.device.len()
            ));
        }
    }
    Ok(plan)
}

/// The options of the `; wave-run:` comment inside `range` of `text`, or in the comment lines
/// just above it.
fn run_comment(text: &str, range: Range<usize>) -> Option<String> {
    let find = |line: &str| {
        let comment = &line[line.find(';')? + 1..];
        comment.trim_start().strip_prefix("wave-run:").map(|o| o.trim().to_owned())
    };
    if let Some(o) = text[range.clone()].lines().find_map(find) {
        return Some(o);
    }
    let before: Vec<&str> = text[..range.start].lines().collect();
    before.iter().rev().take_while(|l| l.trim_start().starts_with(';')).find_map(|l| find(l))
}

/// The case file next to `source` that runs `kernel`: `STEM.toml`, or a `.toml` of the same
/// folder whose `file` is the source.
fn case_next_to(source: &Path, kernel: &str) -> Option<Case> {
    let dir = source.parent()?;
    let name = source.file_name()?;
    let mut candidates: Vec<PathBuf> = vec![source.with_extension("toml")];
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut others: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        others.sort();
        candidates.extend(others);
    }
    candidates.into_iter().find_map(|p| {
        let text = std::fs::read_to_string(&p).ok()?;
        let own = p == source.with_extension("toml");
        let refers = text.lines().any(|l| {
            l.split_once('=').is_some_and(|(k, v)| {
                k.trim() == "file" && v.trim().trim_matches('"') == name.to_string_lossy()
            })
        });
        if !own && !refers {
            return None;
        }
        let case = Case::parse(&p, &text).ok()?;
        case.kernel.as_deref().is_none_or(|k| k == kernel).then_some(case)
    })
}

/// The debugger's launch for a plan: the case file as the program when the dispatch comes
/// from one (its memory comes with it), else the source with the dispatch spelled out.
pub(crate) fn debug_launch(plan: &RunPlan, path: Option<&Path>) -> DebugLaunch {
    let d = &plan.dispatch;
    DebugLaunch {
        program: plan.case.as_deref().or(path).map(Path::to_path_buf),
        kernel: plan.kernel.clone(),
        grid: d.grid,
        workgroup: d.workgroup,
        wave_width: d.wave_width,
        args: d.args.iter().map(|(n, v)| (n.clone(), u64::from(*v))).collect(),
    }
}

/// Where a trap happened, in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunTrap {
    /// The emulator's message with its location.
    pub message: String,
    /// The 1-based line in the file, when known.
    pub line: Option<u32>,
}

/// What a run gave.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunResult {
    /// The kernel.
    pub kernel: String,
    /// Where the dispatch came from.
    pub from: String,
    /// The run finished (no trap, not cancelled) and met the case's expectations.
    pub ok: bool,
    /// Stopped by cancellation.
    pub cancelled: bool,
    /// The trap, if one stopped the run.
    pub trap: Option<RunTrap>,
    /// Wave-instructions executed.
    pub steps: u64,
    /// Counters: instructions, lane operations, utilisation, by class, memory traffic.
    pub stats: Vec<(String, String)>,
    /// Each dump: offset, type and values.
    pub dumps: Vec<(usize, &'static str, Vec<String>)>,
    /// Differences from the case's expectations (empty when they hold or there are none).
    pub mismatches: Vec<String>,
    /// Warnings about the dispatch.
    pub warnings: Vec<String>,
    /// Per instruction executed: its file line, text, executions and mean active-lane share.
    pub profile: Vec<(Option<u32>, String, u64, f64)>,
    /// The first [`TIMELINE_LIMIT`] wave-instructions: wave (numbered across workgroups),
    /// step, text and active-lane share.
    pub timeline: Vec<(u32, u64, String, f64)>,
    /// Where it ran: `emulator`, `cuda:0`, or `compare` (both).
    pub device: String,
    /// With `compare`: per dumped buffer, whether the GPU left what the emulator left.
    pub comparison: Vec<Agreement>,
}

/// One buffer of a comparison between the GPU and the emulator.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    /// Its byte offset.
    pub offset: usize,
    /// Its element type.
    pub elem: &'static str,
    /// Its elements.
    pub count: usize,
    /// The first elements that differ (at most [`DIFFERENCES_SHOWN`]): index, emulator's
    /// value, GPU's value.
    pub differences: Vec<(usize, String, String)>,
    /// How many elements differ.
    pub differing: usize,
}

/// Differing elements listed per buffer in a comparison.
pub const DIFFERENCES_SHOWN: usize = 4;

/// Wave-instructions kept in a run's timeline.
pub const TIMELINE_LIMIT: usize = 5000;

impl RunResult {
    /// The result as text for an output panel.
    pub fn to_text(&self) -> String {
        let mut out = format!("wave run {} ({})", self.kernel, self.from);
        if !self.device.is_empty() && self.device != "emulator" {
            out.push_str(&format!(" on {}", self.device));
        }
        out.push('\n');
        if self.cancelled {
            out.push_str(&format!("cancelled after {} wave-instructions\n", self.steps));
        }
        if let Some(t) = &self.trap {
            out.push_str(&format!("trap: {}\n", t.message));
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        for (o, t, v) in &self.dumps {
            out.push_str(&format!("{o} {t}[{}]: {}\n", v.len(), v.join(" ")));
        }
        for m in &self.mismatches {
            out.push_str(&format!("expected: {m}\n"));
        }
        for a in &self.comparison {
            let what = format!("{} {}[{}]", a.offset, a.elem, a.count);
            if a.differing == 0 {
                out.push_str(&format!("GPU and emulator agree: {what}\n"));
            } else {
                let first: Vec<String> = a
                    .differences
                    .iter()
                    .map(|(i, e, g)| format!("[{i}] emulator {e}, GPU {g}"))
                    .collect();
                out.push_str(&format!(
                    "GPU and emulator differ: {what}, {} elements; first: {}\n",
                    a.differing,
                    first.join("; ")
                ));
            }
        }
        for (k, v) in &self.stats {
            out.push_str(&format!("{k}: {v}\n"));
        }
        out
    }
}

/// Runs a plan in slices of `slice` wave-instructions, storing the steps so far in `progress`
/// and stopping early when `cancel` is set.
pub fn execute(plan: RunPlan, cancel: &Arc<AtomicBool>, progress: &Arc<Progress>) -> RunResult {
    let mut result =
        RunResult { kernel: plan.kernel.clone(), from: plan.from.clone(), ..Default::default() };
    let trap = |t: wave_emulator::Trap| RunTrap {
        line: t.line.map(|l| l + plan.first_line - 1),
        message: {
            let mut t = t;
            t.line = t.line.map(|l| l + plan.first_line - 1);
            t.to_string()
        },
    };
    let initial = plan.device.clone();
    let mut device = plan.device.clone();
    let flag = Arc::clone(cancel);
    let dispatch = wave_emulator::Dispatch {
        interrupt: Some(wave_emulator::Interrupt::new(move || flag.load(Ordering::Relaxed))),
        progress: Some(Arc::clone(progress)),
        ..plan.dispatch.clone()
    };
    // Workgroups run on every core, with the one-thread results (docs/emulator.md).
    let outcome = match wave_emulator::run(&plan.module, &dispatch, &mut device) {
        Ok(outcome) => {
            result.steps = outcome.steps;
            result.warnings = outcome.warnings;
            let s = &outcome.stats;
            result.stats = vec![
                ("instructions".into(), s.instructions.to_string()),
                ("lane_ops".into(), s.lane_ops.to_string()),
                ("utilisation".into(), format!("{:.4}", s.utilisation())),
                ("alu".into(), s.by_class[0].to_string()),
                ("memory".into(), s.by_class[1].to_string()),
                ("wave".into(), s.by_class[2].to_string()),
                ("control".into(), s.by_class[3].to_string()),
                ("barrier_waits".into(), s.barrier_waits.to_string()),
                ("device_read".into(), s.device_bytes[0].to_string()),
                ("device_written".into(), s.device_bytes[1].to_string()),
                ("workgroups".into(), s.workgroups.to_string()),
            ];
            Ok(())
        }
        Err(t) if cancel.load(Ordering::Relaxed) && t.message.starts_with("interrupted") => {
            result.cancelled = true;
            result.steps = progress.steps.load(Ordering::Relaxed);
            Ok(())
        }
        Err(t) => {
            result.steps = progress.steps.load(Ordering::Relaxed);
            Err(t)
        }
    };
    let device = &device;
    for d in &plan.dumps {
        let values = (0..d.count)
            .map(|i| {
                let at = d.offset + i * d.elem.size();
                device.get(at..at + d.elem.size()).map_or("?".into(), |b| d.elem.show(b))
            })
            .collect();
        result.dumps.push((d.offset, d.elem.name(), values));
    }
    match outcome {
        Err(t) => {
            let t = trap(t);
            if let Some(want) = &plan.expect_trap
                && !t.message.contains(want.as_str())
            {
                result.mismatches.push(format!("a trap containing `{want}`"));
            }
            result.trap = Some(t);
        }
        Ok(()) => {
            if let Some(want) = &plan.expect_trap {
                result.mismatches.push(format!("a trap containing `{want}`, but the run finished"));
            }
            if !result.cancelled {
                for b in &plan.expect {
                    if let Err(e) = wave_conformance::compare(b, device) {
                        result.mismatches.push(e);
                    }
                }
            }
        }
    }
    result.ok = !result.cancelled
        && result.mismatches.is_empty()
        && (result.trap.is_none() || plan.expect_trap.is_some());
    if !result.cancelled && result.trap.is_none() {
        profile(&plan, initial, &mut result);
    }
    result
}

/// Runs a plan on CUDA GPU 0 in a child `wave` process (`exe`, the server's own binary; see
/// `wave_runtime::process`), at W = 32: the dumps and the case's expectations as for the
/// emulator, no statistics or profile.
pub fn execute_on_gpu(
    plan: &RunPlan,
    exe: &Path,
    timeout: Duration,
    cancel: &AtomicBool,
) -> RunResult {
    let mut result = RunResult {
        kernel: plan.kernel.clone(),
        from: plan.from.clone(),
        device: "cuda:0".into(),
        ..Default::default()
    };
    let dispatch = wave_emulator::Dispatch { wave_width: 32, ..plan.dispatch.clone() };
    match wave_runtime::process::run_in_child(
        exe,
        0,
        &plan.module,
        &dispatch,
        &plan.device,
        timeout,
        cancel,
    ) {
        Ok(memory) => {
            for d in &plan.dumps {
                result.dumps.push((d.offset, d.elem.name(), shown(&memory, d)));
            }
            if let Some(want) = &plan.expect_trap {
                result.mismatches.push(format!("a trap containing `{want}`, but the run finished"));
            }
            for b in plan.expect.iter().filter(|b| b.wave_width.is_none_or(|w| w == 32)) {
                if let Err(e) = wave_runtime::cases::compare_on_gpu(b, &memory) {
                    result.mismatches.push(e);
                }
            }
            result.ok = result.mismatches.is_empty();
        }
        Err(e) if e == "cancelled" => result.cancelled = true,
        Err(e) => result.trap = Some(RunTrap { message: e, line: None }),
    }
    result
}

/// Runs a plan in the emulator (at W = 32) and on CUDA GPU 0, and compares the memory each
/// left in every dumped buffer: [`RunResult::comparison`]. The rest of the result is the
/// emulator's.
pub fn compare(
    plan: RunPlan,
    exe: &Path,
    timeout: Duration,
    cancel: &Arc<AtomicBool>,
    progress: &Arc<Progress>,
) -> RunResult {
    let mut at32 = plan.clone();
    at32.dispatch.wave_width = 32;
    let gpu_plan = at32.clone();
    // The emulator's memory after the run (the budget of the dispatch bounds it).
    let mut emulator = {
        let mut memory = at32.device.clone();
        wave_emulator::run(&at32.module, &at32.dispatch, &mut memory).map(|_| memory)
    };
    let mut result = execute(at32, cancel, progress);
    result.device = "compare".into();
    if result.cancelled {
        return result;
    }
    let dispatch = wave_emulator::Dispatch { wave_width: 32, ..gpu_plan.dispatch.clone() };
    let gpu = wave_runtime::process::run_in_child(
        exe,
        0,
        &gpu_plan.module,
        &dispatch,
        &gpu_plan.device,
        timeout,
        cancel,
    );
    match (emulator.as_mut(), gpu) {
        (Ok(emu), Ok(gpu)) => {
            result.comparison = gpu_plan.dumps.iter().map(|d| agreement(d, emu, &gpu)).collect();
            result.ok &= result.comparison.iter().all(|a| a.differing == 0);
        }
        (Err(t), _) => {
            result.ok = false;
            result.mismatches.push(format!("nothing to compare: the emulator trapped ({t})"));
        }
        (_, Err(e)) if e == "cancelled" => result.cancelled = true,
        (_, Err(e)) => {
            result.ok = false;
            result.mismatches.push(format!("nothing to compare: the GPU run failed: {e}"));
        }
    }
    result
}

/// How one dumped buffer compares between the emulator's memory and the GPU's.
pub fn agreement(d: &Dump, emulator: &[u8], gpu: &[u8]) -> Agreement {
    let size = d.elem.size();
    let mut a =
        Agreement { offset: d.offset, elem: d.elem.name(), count: d.count, ..Default::default() };
    for i in 0..d.count {
        let at = d.offset + i * size;
        let (Some(e), Some(g)) = (emulator.get(at..at + size), gpu.get(at..at + size)) else {
            break;
        };
        if e != g {
            a.differing += 1;
            if a.differences.len() < DIFFERENCES_SHOWN {
                a.differences.push((i, d.elem.show(e), d.elem.show(g)));
            }
        }
    }
    a
}

fn shown(memory: &[u8], d: &Dump) -> Vec<String> {
    (0..d.count)
        .map(|i| {
            let at = d.offset + i * d.elem.size();
            memory.get(at..at + d.elem.size()).map_or("?".into(), |b| d.elem.show(b))
        })
        .collect()
}

/// Fills the per-instruction profile and the timeline from a traced run of the same dispatch
/// (deterministic, so it is the run just made; the trace stops at the emulator's limit).
fn profile(plan: &RunPlan, mut device: Vec<u8>, result: &mut RunResult) {
    let dispatch = wave_emulator::Dispatch { trace: true, ..plan.dispatch.clone() };
    let Ok(outcome) = wave_emulator::run(&plan.module, &dispatch, &mut device) else { return };
    let mut by_pc: std::collections::BTreeMap<u32, (String, u64, u64, u32)> = Default::default();
    let mut waves: std::collections::HashMap<([u32; 3], u32), u32> = Default::default();
    for e in &outcome.trace {
        let entry = by_pc.entry(e.pc).or_insert_with(|| (e.text.clone(), 0, 0, e.wave_width));
        entry.1 += 1;
        entry.2 += u64::from(e.mask.count_ones());
        if result.timeline.len() < TIMELINE_LIMIT {
            let next = waves.len() as u32;
            let wave = *waves.entry((e.workgroup, e.wave)).or_insert(next);
            let active = f64::from(e.mask.count_ones()) / f64::from(e.wave_width.max(1));
            result.timeline.push((wave, e.step, e.text.clone(), active));
        }
    }
    result.profile = by_pc
        .into_iter()
        .map(|(pc, (text, n, lanes, w))| {
            let line = plan.module.line_at(pc).map(|l| l.line + plan.first_line - 1);
            (line, text, n, lanes as f64 / (n.max(1) * u64::from(w.max(1))) as f64)
        })
        .collect();
}

/// A backend preview: the text and, for each generated line, the 1-based line of the WAVE
/// file it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preview {
    /// The backend (`None` for the WAVE assembly and the MIR of a kernel source).
    pub target: Option<Target>,
    /// The generated text.
    pub text: String,
    /// Per generated line (0-based), the WAVE line (1-based) of its instruction.
    pub lines: Vec<Option<u32>>,
    /// Warnings of the backend, as text.
    pub warnings: Vec<String>,
}

/// The preview of `kernel` (or the kernel containing byte `offset`, or the first) as `form`:
/// a backend's name (`ptx`, `hip`, `sycl`, `metal`), or for a kernel written in Python, Rust,
/// C++ or TypeScript also `wave` (the assembly) and `mir`. Gives the form's name with the
/// preview, whose lines map to the 1-based lines of `file`.
pub fn preview_form(
    db: &Database,
    file: SourceFile,
    kernel: Option<&str>,
    offset: Option<usize>,
    form: &str,
) -> Result<(String, Preview), String> {
    if let Some(build) = crate::source::build(db, file) {
        return source::preview(db, file, build, kernel, offset, form);
    }
    let target = Target::from_name(form)
        .ok_or_else(|| format!("unknown target `{form}` (ptx, hip, sycl, metal)"))?;
    preview(db, file, kernel, offset, target).map(|p| (target.name().to_owned(), p))
}

/// The preview of `kernel` (or the kernel containing byte `offset`, or the first) on `target`.
pub(crate) fn preview(
    db: &Database,
    file: SourceFile,
    kernel: Option<&str>,
    offset: Option<usize>,
    target: Target,
) -> Result<Preview, String> {
    let layout = kernels(db, file);
    let span = match (kernel, offset) {
        (Some(name), _) => layout.kernels.iter().find(|k| k.name == name),
        (None, Some(o)) => {
            layout.kernels.iter().find(|k| k.range.contains(&o)).or_else(|| layout.kernels.first())
        }
        (None, None) => layout.kernels.first(),
    }
    .ok_or_else(|| "no such kernel in this file".to_string())?;
    let check = check_kernel(db, span.source);
    if let Some(e) = check.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!(
            "kernel `{}` does not assemble: error[{}] {}",
            span.name, e.code, e.message
        ));
    }
    let translation = backend(db, span.source, target)
        .as_ref()
        .map_err(|e| e.problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; "))?;
    let first_line = line_of(file.text(db), span.range.start) as u32;
    let lines = translation
        .source_map
        .lines
        .iter()
        .map(|o| {
            let o = (*o)?;
            let entry = check.module.lines.iter().find(|e| e.offset == o)?;
            Some(entry.line + first_line - 1)
        })
        .collect();
    Ok(Preview {
        target: Some(target),
        text: translation.text.clone(),
        lines,
        warnings: translation.warnings.iter().map(|w| w.message.clone()).collect(),
    })
}

//! The WAVE emulator: the executable meaning of the spec.
//!
//! [`run`] executes one dispatch of a kernel from a [`Module`] over a device memory buffer.
//! Execution follows spec section 2: a grid of workgroups, each of `ceil(threads / W)` waves of
//! W lanes. A wave runs one instruction for all its active lanes at a time; registers are kept
//! lane-contiguous (`row * W + lane`) so that each instruction is a tight loop over lanes, and
//! immediates are decoded once into constant rows. Structured control flow keeps a per-wave
//! stack of masks (spec 5.5); the exact rules — a lane that breaks leaves in the same
//! iteration, skipped paths when no lane is active — are in `docs/emulator.md`, with every
//! implementation-defined choice.
//!
//! The emulator depends only on `isa` and `wbin`. It never panics on any module or dispatch:
//! bad input is a [`Trap`] naming the kernel, pc, source line, wave and lane, and every run
//! has an instruction budget.

mod decode;
mod exec;
mod session;

use std::fmt;

use wave_wbin::Module;

pub use exec::Stats;
pub use session::{Block, BlockKind, Session, Snapshot, Stop, WaveState, WaveView};

/// The wave widths the emulator runs: the spec's minimum of 8 up to 64, and 4 for programs
/// written for the reference toolchain (with a warning).
pub const WAVE_WIDTHS: [u32; 5] = [4, 8, 16, 32, 64];

/// The emulator's limits (the `emulator` target profile of the isa crate).
pub fn profile() -> &'static wave_isa::target::Profile {
    wave_isa::target::profile("emulator").unwrap_or(&wave_isa::target::PROFILES[0])
}

/// One dispatch.
#[derive(Clone, Debug)]
pub struct Dispatch {
    /// Kernel name; `None` picks the only kernel.
    pub kernel: Option<String>,
    /// Workgroups in the grid.
    pub grid: [u32; 3],
    /// Threads per workgroup; `None` uses the kernel's `.workgroup_size`.
    pub workgroup: Option<[u32; 3]>,
    /// W.
    pub wave_width: u32,
    /// Kernel arguments by parameter name (the 32 bits of the value).
    pub args: Vec<(String, u32)>,
    /// Instruction budget in wave-instructions.
    pub max_steps: u64,
    /// Record one [`TraceEvent`] per wave-instruction.
    pub trace: bool,
    /// Asked every [`INTERRUPT_EVERY`] wave-instructions whether to stop (Ctrl-C in a host
    /// program, a cancelled request): a run it stops ends with an `interrupted` trap.
    pub interrupt: Option<Interrupt>,
    /// Counters the run keeps up to date for a progress display.
    pub progress: Option<std::sync::Arc<Progress>>,
    /// Threads that run the grid's workgroups; 0 takes `WAVE_THREADS` from the environment,
    /// or else every core. The results do not depend on it (docs/emulator.md, "Threads").
    pub threads: u32,
}

/// The threads a dispatch asking for `threads` gets: itself, or for 0 `WAVE_THREADS`, or else
/// the machine's cores.
pub fn resolve_threads(threads: u32) -> usize {
    if threads > 0 {
        return threads as usize;
    }
    std::env::var("WAVE_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// How often a run asks its [`Interrupt`], in wave-instructions (about a millisecond).
pub const INTERRUPT_EVERY: u64 = 1 << 16;

/// How far a run has got, updated as it goes (about every millisecond of work, and at each
/// workgroup's end): for a progress line or an editor's progress report.
#[derive(Debug, Default)]
pub struct Progress {
    /// Workgroups finished (in grid order: with several threads, those committed).
    pub workgroups: std::sync::atomic::AtomicU64,
    /// Lane-operations executed so far, on every thread (a workgroup run again counts again).
    pub lane_ops: std::sync::atomic::AtomicU64,
    /// Steps of the budget taken so far, counted the same way.
    pub steps: std::sync::atomic::AtomicU64,
}

/// A question a long run asks now and then: "should I stop?" (see [`Dispatch::interrupt`]).
#[derive(Clone)]
pub struct Interrupt(pub std::sync::Arc<dyn Fn() -> bool + Send + Sync>);

impl Interrupt {
    /// An interrupt that stops the run once `stop` returns true.
    pub fn new(stop: impl Fn() -> bool + Send + Sync + 'static) -> Interrupt {
        Interrupt(std::sync::Arc::new(stop))
    }
}

impl fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Interrupt")
    }
}

impl Default for Dispatch {
    fn default() -> Self {
        Dispatch {
            kernel: None,
            grid: [1, 1, 1],
            workgroup: None,
            wave_width: 32,
            args: Vec::new(),
            max_steps: 100_000_000,
            trace: false,
            interrupt: None,
            progress: None,
            threads: 0,
        }
    }
}

/// The result of a successful run.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Counters.
    pub stats: Stats,
    /// Steps the run took of its budget ([`Dispatch::max_steps`]): wave-instructions, and
    /// the launch costs of waves.
    pub steps: u64,
    /// One event per wave-instruction, when asked for (at most [`TRACE_LIMIT`]).
    pub trace: Vec<TraceEvent>,
    /// Whether the trace stopped at [`TRACE_LIMIT`] events.
    pub trace_truncated: bool,
    /// Warnings about the dispatch (e.g. W = 4 below the spec minimum).
    pub warnings: Vec<String>,
}

/// The most trace events one run records.
pub const TRACE_LIMIT: usize = 1_000_000;

/// One executed wave-instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// Steps executed before it in the whole run (its time).
    pub step: u64,
    /// Workgroup id.
    pub workgroup: [u32; 3],
    /// Wave within the workgroup.
    pub wave: u32,
    /// Byte offset of the instruction.
    pub pc: u32,
    /// Lanes that executed it.
    pub mask: u64,
    /// W.
    pub wave_width: u32,
    /// 0 ALU, 1 memory, 2 wave operation, 3 control flow.
    pub class: u8,
    /// Its canonical text.
    pub text: String,
}

impl TraceEvent {
    /// The class as a word.
    pub fn class_name(&self) -> &'static str {
        ["alu", "memory", "wave", "control"][usize::from(self.class & 3)]
    }
}

impl fmt::Display for TraceEvent {
    /// `wg(0,0,0) wave 1 pc 0x0018 mask 11110000  iadd r1, r2, r3`, lane 0 first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.wave_width as usize;
        let lanes: String =
            (0..w).map(|l| if self.mask >> l & 1 == 1 { '1' } else { '.' }).collect();
        write!(
            f,
            "wg({},{},{}) wave {} pc 0x{:04x} {lanes}  {}",
            self.workgroup[0], self.workgroup[1], self.workgroup[2], self.wave, self.pc, self.text
        )
    }
}

/// Writes `events` in the Chrome trace event format (viewable in Perfetto and
/// chrome://tracing): one process per workgroup, one thread per wave, one complete event
/// per wave-instruction at its step.
pub fn chrome_trace(events: &[TraceEvent]) -> String {
    use fmt::Write as _;
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut named: std::collections::HashSet<([u32; 3], Option<u32>)> = Default::default();
    let pid = |wg: [u32; 3]| u64::from(wg[0]) | (u64::from(wg[1]) << 20) | (u64::from(wg[2]) << 40);
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
    };
    for e in events {
        if named.insert((e.workgroup, None)) {
            sep(&mut out);
            let [x, y, z] = e.workgroup;
            let _ = write!(
                out,
                "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"workgroup ({x},{y},{z})\"}}}}",
                pid(e.workgroup)
            );
        }
        if named.insert((e.workgroup, Some(e.wave))) {
            sep(&mut out);
            let _ = write!(
                out,
                "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"wave {}\"}}}}",
                pid(e.workgroup),
                e.wave,
                e.wave
            );
        }
        sep(&mut out);
        let text = e.text.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = write!(
            out,
            "{{\"name\":\"{text}\",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{},\"dur\":1,\"pid\":{},\"tid\":{},\"args\":{{\"pc\":\"0x{:x}\",\"active_lanes\":{},\"mask\":\"0x{:x}\"}}}}",
            e.class_name(),
            e.step,
            pid(e.workgroup),
            e.wave,
            e.pc,
            e.mask.count_ones(),
            e.mask
        );
    }
    out.push_str("\n]}\n");
    out
}

/// Why a run stopped: a fault of the program or a dispatch that cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trap {
    /// What happened, starting with a stable phrase (`device memory out of bounds`,
    /// `local memory out of bounds`, `barrier in divergent control flow`, `deadlock`,
    /// `instruction budget exceeded`, `interrupted`, `call depth exceeded`, `CAP_MMA`, `invalid dispatch`,
    /// `invalid kernel`).
    pub message: String,
    /// The kernel.
    pub kernel: String,
    /// Byte offset of the faulting instruction.
    pub pc: Option<u32>,
    /// Its source line, from the line table.
    pub line: Option<u32>,
    /// Workgroup id.
    pub workgroup: Option<[u32; 3]>,
    /// Wave within the workgroup.
    pub wave: Option<u32>,
    /// Lane within the wave.
    pub lane: Option<u32>,
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        let mut at = Vec::new();
        if !self.kernel.is_empty() {
            at.push(format!("kernel `{}`", self.kernel));
        }
        if let Some(pc) = self.pc {
            at.push(format!("pc 0x{pc:x}"));
        }
        if let Some(line) = self.line {
            at.push(format!("line {line}"));
        }
        if let Some([x, y, z]) = self.workgroup {
            at.push(format!("workgroup ({x},{y},{z})"));
        }
        if let Some(w) = self.wave {
            at.push(format!("wave {w}"));
        }
        if let Some(l) = self.lane {
            at.push(format!("lane {l}"));
        }
        if !at.is_empty() {
            write!(f, " (at {})", at.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for Trap {}

/// Runs `dispatch` of a kernel of `module` over `device` memory (taken for the run and given
/// back, also after a trap).
pub fn run(module: &Module, dispatch: &Dispatch, device: &mut Vec<u8>) -> Result<Outcome, Trap> {
    exec::run(module, dispatch, device)
}

#[cfg(test)]
mod tests;

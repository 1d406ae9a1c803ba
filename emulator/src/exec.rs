//! The interpreter: workgroups, waves, masks and every instruction's semantics.
//!
//! Invariants of a wave's control state:
//! - `alive` holds the lanes that exist and have not halted; `active` ⊆ `alive`.
//! - Each frame remembers the lanes to restore when its block ends. A lane that leaves early
//!   (break, continue, return, halt) is removed from every frame it jumps over, so no `endif`
//!   can bring it back before its time: that is what makes `break` inside an `if` take effect
//!   in the same iteration.
//! - When `active` becomes empty the wave jumps to the instruction that ends the innermost
//!   frame (`else`, `endif`, `endloop`, or the return of a call), which restores lanes.
//!
//! This module holds the machine ([`Exec`], [`Wave`], [`Frame`]) and the two operations that
//! keep those invariants (`retire`, `settle`); the rest is in rooms: `setup` (checking a
//! dispatch), `schedule` (workgroups, waves, barriers, the step loop), `parallel` (workgroups
//! on several threads with the one-thread results, through each workgroup's `overlay` of
//! device memory), `semantics` (what each instruction does), built on `memory` (loads,
//! stores, atomics) and `access` (the word-level pieces they share), `rows` (register rows)
//! and `float` (floating-point bits).

mod access;
mod float;
mod memory;
mod overlay;
mod parallel;
mod rows;
mod schedule;
mod semantics;
mod setup;

use wave_wbin::Module;

use crate::decode::{Code, Op, Program};
use crate::{Dispatch, Outcome, Trap};

pub(crate) use setup::prepare;

/// Lanes per register row. Rows always hold 64 lanes whatever W is, so every per-lane loop
/// has a fixed length that the compiler unrolls and vectorises; lanes at W and above are
/// scratch that no instruction reads.
const LANES: usize = 64;

/// Lanes per step of the row loops: a fixed length the compiler vectorises.
const CHUNK: usize = 8;

/// The most memory the register rows of one workgroup may take (256 MiB).
const MAX_WORKGROUP_STATE: u64 = 256 << 20;

/// Counters of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Wave-instructions executed.
    pub instructions: u64,
    /// Lane-operations: active lanes summed over executed instructions.
    pub lane_ops: u64,
    /// Wave-instructions by class: ALU, memory, wave operations, control flow.
    pub by_class: [u64; 4],
    /// Times a wave waited at a barrier.
    pub barrier_waits: u64,
    /// Bytes read from and written to device memory.
    pub device_bytes: [u64; 2],
    /// Bytes read from and written to local memory.
    pub local_bytes: [u64; 2],
    /// Workgroups run.
    pub workgroups: u64,
    /// W of the run, for utilisation.
    pub wave_width: u32,
}

impl Stats {
    /// Sets `instructions`, which the step loop leaves to be summed from `by_class`.
    pub(crate) fn settle(&mut self) {
        self.instructions = self.by_class.iter().sum();
    }

    /// Active lanes per executed instruction, as a fraction of W.
    pub fn utilisation(&self) -> f64 {
        if self.instructions == 0 {
            return 0.0;
        }
        self.lane_ops as f64 / (self.instructions as f64 * f64::from(self.wave_width.max(1)))
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Frame {
    If { saved: u64, else_mask: u64, at: u32 },
    Loop { saved: u64, cont: u64, at: u32 },
    Call { saved: u64, ret: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Running,
    AtBarrier,
    Done,
}

#[derive(Clone)]
pub(crate) struct Wave {
    pub(crate) id: u32,
    pub(crate) regs: Vec<u32>,
    pub(crate) preds: [u64; 4],
    pub(crate) active: u64,
    pub(crate) alive: u64,
    pub(crate) pc: usize,
    pub(crate) frames: Vec<Frame>,
    pub(crate) state: State,
    /// Per-lane thread ids x, y, z.
    tid: [[u32; 64]; 3],
}

/// A dispatch in progress: the module, the decoded kernel, device memory, and the state of
/// the current workgroup. It owns everything, so that a debugging [`crate::Session`] can keep
/// it between steps.
pub(crate) struct Exec {
    pub(crate) module: Module,
    pub(crate) kernel_name: String,
    pub(crate) prog: Program,
    pub(crate) w: usize,
    full: u64,
    /// Lanes a row operation computes: W rounded up to a multiple of [`CHUNK`], so that
    /// at W = 32 an instruction does half the work of a 64-lane row.
    span: usize,
    pub(crate) device: Vec<u8>,
    args: Vec<u32>,
    pub(crate) local: Vec<u8>,
    pub(crate) steps: u64,
    max_steps: u64,
    /// Where the step loop next looks up from its work: the budget, or sooner, the next time
    /// to ask the interrupt.
    stop_at: u64,
    interrupt: Option<crate::Interrupt>,
    progress: Option<std::sync::Arc<crate::Progress>>,
    /// The lane-operations and steps already added to `progress`.
    published: (u64, u64),
    max_call_depth: usize,
    pub(crate) stats: Stats,
    pub(crate) wg_id: [u32; 3],
    pub(crate) wg_size: [u32; 3],
    pub(crate) grid: [u32; 3],
    pub(crate) num_waves: u32,
    trace: Option<Vec<crate::TraceEvent>>,
    trace_truncated: bool,
    pub(crate) waves: Vec<Wave>,
    /// The registers every wave starts with (R rows: the parameters, then zeros), built when
    /// the first workgroup starts.
    start_regs: Vec<u32>,
    /// Warnings found while running, and the pcs already noted.
    pub(crate) notes: Vec<String>,
    shuffle_notes: Vec<u32>,
    /// Worker threads for the grid's workgroups (1: all on the calling thread).
    threads: usize,
    /// Reset every register at each workgroup's start, not only those the kernel may read
    /// before writing: a debugger shows them all.
    pub(crate) every_register: bool,
    /// On a worker: the speculative view of device memory the workgroup runs on (then
    /// `device` is empty and unused).
    overlay: Option<overlay::Overlay>,
}

/// Runs a whole dispatch over `device`. The emulator takes the buffer for the run and gives
/// it back, also after a trap, so that what the program wrote before the fault can be
/// inspected.
pub(crate) fn run(
    module: &Module,
    dispatch: &Dispatch,
    device: &mut Vec<u8>,
) -> Result<Outcome, Trap> {
    let (mut exec, warnings) = prepare(module, dispatch, std::mem::take(device))?;
    let result = exec.run_all();
    *device = std::mem::take(&mut exec.device);
    result?;
    let mut outcome = Outcome { warnings, ..Outcome::default() };
    exec.stats.settle();
    outcome.stats = std::mem::take(&mut exec.stats);
    outcome.steps = exec.steps;
    outcome.trace = exec.trace.take().unwrap_or_default();
    outcome.trace_truncated = exec.trace_truncated;
    outcome.warnings.append(&mut exec.notes);
    Ok(outcome)
}

impl Exec {
    fn trap(
        &self,
        wave: Option<&Wave>,
        op: Option<&Op>,
        lane: Option<usize>,
        message: String,
    ) -> Trap {
        let pc = op.map(|o| o.pc);
        Trap {
            message,
            kernel: self.kernel_name.clone(),
            pc,
            line: pc.and_then(|pc| self.module.line_at(pc)).map(|l| l.line),
            workgroup: Some(self.wg_id),
            wave: wave.map(|w| w.id),
            lane: lane.map(|l| l as u32),
        }
    }

    /// Removes `lanes` from the frames above index `floor` (exclusive).
    fn retire(wave: &mut Wave, lanes_out: u64, floor: usize) {
        for frame in wave.frames[floor..].iter_mut() {
            match frame {
                Frame::If { saved, else_mask, .. } => {
                    *saved &= !lanes_out;
                    *else_mask &= !lanes_out;
                }
                Frame::Loop { saved, cont, .. } => {
                    *saved &= !lanes_out;
                    *cont &= !lanes_out;
                }
                Frame::Call { saved, .. } => *saved &= !lanes_out,
            }
        }
    }

    /// With no active lane, jump to the instruction that ends the innermost frame.
    fn settle(&self, wave: &mut Wave) {
        if wave.active != 0 {
            return;
        }
        match wave.frames.last().copied() {
            None => wave.state = State::Done,
            Some(Frame::If { at, .. }) => {
                // The `if`'s target is its else or endif; an else's target is the endif. Both
                // instructions restore the right lanes when executed.
                let target = self.prog.ops[at as usize].target as usize;
                let is_else = self.prog.ops[target].code == Code::Else;
                wave.pc = if is_else && wave.pc <= target {
                    target
                } else {
                    if is_else { self.prog.ops[target].target as usize } else { target }
                };
            }
            Some(Frame::Loop { at, .. }) => wave.pc = self.prog.ops[at as usize].target as usize,
            Some(Frame::Call { saved, ret }) => {
                wave.frames.pop();
                wave.active = saved & wave.alive;
                wave.pc = ret as usize;
                self.settle(wave);
            }
        }
    }
}

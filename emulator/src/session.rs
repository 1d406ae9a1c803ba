//! The step API: a dispatch that a debugger drives one wave-instruction at a time.
//!
//! A [`Session`] holds a prepared dispatch and the state of its current workgroup. It steps
//! one wave by one instruction, or runs in scheduler order to a breakpoint; it reads and
//! writes per-lane registers, predicates and memory; it explains why each inactive lane is
//! inactive ("off since the `if` at line 12, 2 levels up"); and it takes [`Snapshot`]s that
//! [`Session::restore`] returns to, which is how a debugger steps backwards (execution is
//! deterministic, so snapshot-and-replay reproduces any earlier state exactly).

use wave_wbin::Module;

use crate::decode::Code;
use crate::exec::{Exec, Frame, State, Wave, prepare};
use crate::{Dispatch, Stats, Trap};

/// Why [`Session::step`] or [`Session::run_until`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// One instruction ran.
    Step,
    /// A wave is about to execute an instruction at a breakpoint.
    Breakpoint {
        /// The wave.
        wave: u32,
        /// The instruction's byte offset.
        pc: u32,
    },
    /// The stepped wave waits at a barrier for the others.
    Barrier,
    /// The workgroup finished and the next one started.
    NextWorkgroup,
    /// Every workgroup finished.
    Finished,
}

/// A wave's scheduling state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveState {
    /// Can execute.
    Running,
    /// Waits at a barrier.
    AtBarrier,
    /// Every lane halted or the code ended.
    Done,
}

/// What kind of block a [`Block`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// The then-part of an `if`.
    If,
    /// The `else` part of an `if`.
    Else,
    /// A `loop`.
    Loop,
    /// A function call.
    Call,
}

impl BlockKind {
    /// The keyword that opens it, as a debugger shows it: `if`, `else`, `loop` or `call`.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::If => "if",
            BlockKind::Else => "else",
            BlockKind::Loop => "loop",
            BlockKind::Call => "call",
        }
    }
}

impl std::fmt::Display for BlockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One open structured block or call of a wave, innermost last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// An `if`, `else`, `loop` or call.
    pub kind: BlockKind,
    /// Byte offset of the instruction that opened it.
    pub pc: u32,
    /// Its source line.
    pub line: Option<u32>,
    /// Lanes that return to activity when it ends.
    pub saved: u64,
}

/// What a debugger shows of a wave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveView {
    /// Wave index in the workgroup.
    pub id: u32,
    /// Byte offset of the next instruction (`None` past the end).
    pub pc: Option<u32>,
    /// Its source line.
    pub line: Option<u32>,
    /// Scheduling state.
    pub state: WaveState,
    /// Lanes that execute the next instruction (before its guard).
    pub active: u64,
    /// Lanes that have not halted (and are threads of the workgroup).
    pub alive: u64,
    /// The divergence and call stack, outermost first.
    pub blocks: Vec<Block>,
}

/// The state of a session at one moment.
#[derive(Clone)]
pub struct Snapshot {
    device: Vec<u8>,
    local: Vec<u8>,
    waves: Vec<Wave>,
    steps: u64,
    stats: Stats,
    workgroup: [u32; 3],
    finished: bool,
}

/// A dispatch being debugged.
pub struct Session {
    exec: Exec,
    warnings: Vec<String>,
    finished: bool,
}

impl Session {
    /// Prepares `dispatch` over `device` memory and starts its first workgroup.
    pub fn new(module: &Module, dispatch: &Dispatch, device: Vec<u8>) -> Result<Session, Trap> {
        let (mut exec, warnings) = prepare(module, dispatch, device)?;
        exec.every_register = true;
        exec.begin_workgroup([0, 0, 0])?;
        let mut session = Session { exec, warnings, finished: false };
        // A workgroup whose waves have no thread (impossible) or no code finishes at once.
        session.advance()?;
        Ok(session)
    }

    /// Warnings about the dispatch and the run so far.
    pub fn warnings(&self) -> Vec<String> {
        let mut all = self.warnings.clone();
        all.extend(self.exec.notes.iter().cloned());
        all
    }

    /// The current workgroup.
    pub fn workgroup(&self) -> [u32; 3] {
        self.exec.wg_id
    }

    /// Whether every workgroup has finished.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Wave-instructions executed so far (plus one per wave launched).
    pub fn steps(&self) -> u64 {
        self.exec.steps
    }

    /// Counters so far.
    pub fn stats(&self) -> &Stats {
        &self.exec.stats
    }

    /// W.
    pub fn wave_width(&self) -> u32 {
        self.exec.w as u32
    }

    /// The lowest wave of the current workgroup that can run (what [`Session::run_until`]
    /// steps next), without building views.
    pub fn next_running(&self) -> Option<u32> {
        self.exec.waves.iter().find(|w| w.state == State::Running).map(|w| w.id)
    }

    /// The byte offset of `wave`'s next instruction, without building its view.
    pub fn wave_pc(&self, wave: u32) -> Option<u32> {
        let w = self.exec.waves.get(wave as usize)?;
        self.exec.prog.ops.get(w.pc).map(|o| o.pc)
    }

    /// The lanes of `wave` that execute its next instruction (0 for no such wave).
    pub fn wave_active(&self, wave: u32) -> u64 {
        self.exec.waves.get(wave as usize).map_or(0, |w| w.active)
    }

    /// The scheduling state of `wave`, without building its view.
    pub fn wave_state(&self, wave: u32) -> Option<WaveState> {
        self.exec.waves.get(wave as usize).map(|w| match w.state {
            State::Running => WaveState::Running,
            State::AtBarrier => WaveState::AtBarrier,
            State::Done => WaveState::Done,
        })
    }

    /// How many calls `wave` is inside.
    pub fn call_depth(&self, wave: u32) -> usize {
        self.exec
            .waves
            .get(wave as usize)
            .map_or(0, |w| w.frames.iter().filter(|f| matches!(f, Frame::Call { .. })).count())
    }

    /// Every wave of the current workgroup.
    pub fn waves(&self) -> Vec<WaveView> {
        self.exec.waves.iter().map(|w| self.view(w)).collect()
    }

    fn view(&self, wave: &Wave) -> WaveView {
        let ops = &self.exec.prog.ops;
        let pc = ops.get(wave.pc).map(|o| o.pc);
        let line_of = |pc: u32| self.exec.module.line_at(pc).map(|l| l.line);
        let blocks = wave
            .frames
            .iter()
            .map(|f| match *f {
                Frame::If { saved, at, .. } => {
                    let opener = ops[at as usize];
                    let else_at = opener.target as usize;
                    let in_else = ops[else_at].code == Code::Else && wave.pc > else_at;
                    let pc = if in_else { ops[else_at].pc } else { opener.pc };
                    Block {
                        kind: if in_else { BlockKind::Else } else { BlockKind::If },
                        pc,
                        line: line_of(pc),
                        saved,
                    }
                }
                Frame::Loop { saved, at, .. } => {
                    let pc = ops[at as usize].pc;
                    Block { kind: BlockKind::Loop, pc, line: line_of(pc), saved }
                }
                Frame::Call { saved, ret } => {
                    let pc = ops.get(ret as usize - 1).map_or(0, |o| o.pc);
                    Block { kind: BlockKind::Call, pc, line: line_of(pc), saved }
                }
            })
            .collect();
        WaveView {
            id: wave.id,
            pc,
            line: pc.and_then(line_of),
            state: match wave.state {
                State::Running => WaveState::Running,
                State::AtBarrier => WaveState::AtBarrier,
                State::Done => WaveState::Done,
            },
            active: wave.active,
            alive: wave.alive,
            blocks,
        }
    }

    /// Why `lane` of `wave` does not execute the next instruction, or `None` if it does.
    pub fn inactive_reason(&self, wave: u32, lane: u32) -> Option<String> {
        let w = self.exec.waves.get(wave as usize)?;
        let bit = 1u64 << (lane & 63);
        if lane >= self.exec.w as u32 {
            return Some(format!("there is no lane {lane}: W = {}", self.exec.w));
        }
        if w.active & bit != 0 {
            return None;
        }
        if w.alive & bit == 0 {
            let threads: u32 = self.exec.wg_size.iter().product();
            return Some(if wave * self.exec.w as u32 + lane >= threads {
                "not a thread: the workgroup's last wave is partial".to_owned()
            } else {
                "halted".to_owned()
            });
        }
        let view = self.view(w);
        let depth = view.blocks.len();
        // The innermost block that still holds the lane explains why it waits.
        for (i, (block, frame)) in view.blocks.iter().zip(&w.frames).enumerate().rev() {
            if block.saved & bit == 0 {
                continue;
            }
            let up = depth - i;
            let levels = if up == 1 { "1 level up".to_owned() } else { format!("{up} levels up") };
            let line = block.line.map(|l| format!(" at line {l}")).unwrap_or_default();
            return Some(match (block.kind, frame) {
                (BlockKind::If, Frame::If { else_mask, .. }) if else_mask & bit != 0 => {
                    format!(
                        "off since the `if`{line} ({levels}): its condition was false, waits for the `else`"
                    )
                }
                (BlockKind::If, _) => {
                    format!("off since the `if`{line} ({levels}): its condition was false")
                }
                (BlockKind::Else, _) => {
                    format!("ran the then-part of the `if`{line} ({levels}); waits at its `endif`")
                }
                (BlockKind::Loop, Frame::Loop { cont, .. }) if cont & bit != 0 => {
                    format!(
                        "continued in the loop{line} ({levels}); waits at `endloop` for the next iteration"
                    )
                }
                (BlockKind::Loop, _) => format!(
                    "left the loop{line} with `break` ({levels}); waits for the loop to end"
                ),
                (BlockKind::Call, _) => format!(
                    "returned from the function called{line} ({levels}); waits for the call to finish"
                ),
            });
        }
        Some("inactive".to_owned())
    }

    /// Register `reg` of `lane` in `wave`.
    pub fn register(&self, wave: u32, reg: u16, lane: u32) -> Option<u32> {
        let w = self.exec.waves.get(wave as usize)?;
        if usize::from(reg) >= self.exec.prog.registers || lane as usize >= self.exec.w {
            return None;
        }
        w.regs.get(usize::from(reg) * 64 + lane as usize).copied()
    }

    /// Sets register `reg` of `lane` in `wave`; `false` if there is no such register or lane.
    pub fn set_register(&mut self, wave: u32, reg: u16, lane: u32, value: u32) -> bool {
        let (rows, width) = (self.exec.prog.registers, self.exec.w);
        let Some(w) = self.exec.waves.get_mut(wave as usize) else { return false };
        if usize::from(reg) >= rows || lane as usize >= width {
            return false;
        }
        match w.regs.get_mut(usize::from(reg) * 64 + lane as usize) {
            Some(r) => {
                *r = value;
                true
            }
            None => false,
        }
    }

    /// The four predicates of `wave`, one bit per lane.
    pub fn predicates(&self, wave: u32) -> Option<[u64; 4]> {
        self.exec.waves.get(wave as usize).map(|w| w.preds)
    }

    /// Sets predicate `p` of `lane` in `wave`.
    pub fn set_predicate(&mut self, wave: u32, p: u8, lane: u32, value: bool) -> bool {
        let width = self.exec.w;
        let Some(w) = self.exec.waves.get_mut(wave as usize) else { return false };
        if p > 3 || lane as usize >= width {
            return false;
        }
        let bit = 1u64 << lane;
        w.preds[usize::from(p)] =
            if value { w.preds[usize::from(p)] | bit } else { w.preds[usize::from(p)] & !bit };
        true
    }

    /// Device memory.
    pub fn device(&self) -> &[u8] {
        &self.exec.device
    }

    /// Device memory, writable.
    pub fn device_mut(&mut self) -> &mut [u8] {
        &mut self.exec.device
    }

    /// The current workgroup's Local Memory.
    pub fn local(&self) -> &[u8] {
        &self.exec.local
    }

    /// The current workgroup's Local Memory, writable.
    pub fn local_mut(&mut self) -> &mut [u8] {
        &mut self.exec.local
    }

    /// Executes one instruction of `wave` (if it can run), then releases a barrier or moves to
    /// the next workgroup when no wave can run.
    pub fn step(&mut self, wave: u32) -> Result<Stop, Trap> {
        if self.finished {
            return Ok(Stop::Finished);
        }
        let mut waves = std::mem::take(&mut self.exec.waves);
        let result = match waves.get_mut(wave as usize) {
            Some(w) if w.state == State::Running => self.exec.step_one(w),
            _ => Ok(()),
        };
        let at_barrier = waves.get(wave as usize).is_some_and(|w| w.state == State::AtBarrier);
        self.exec.waves = waves;
        result?;
        match self.advance()? {
            Stop::Step if at_barrier => Ok(Stop::Barrier),
            stop => Ok(stop),
        }
    }

    /// Runs in scheduler order (the lowest running wave first) until a wave is about to
    /// execute an instruction at one of `breakpoints` (byte offsets), the dispatch finishes,
    /// or `max_steps` instructions ran. The first instruction is executed even if it is at a
    /// breakpoint, so that continuing from a breakpoint makes progress.
    pub fn run_until(&mut self, breakpoints: &[u32], max_steps: u64) -> Result<Stop, Trap> {
        let mut first = true;
        for _ in 0..max_steps {
            if self.finished {
                return Ok(Stop::Finished);
            }
            let Some(wave) = self.exec.waves.iter().find(|w| w.state == State::Running) else {
                // Nothing can run: advance settles barriers or workgroups.
                match self.advance()? {
                    Stop::Finished => return Ok(Stop::Finished),
                    _ => continue,
                }
            };
            let (id, pc) = (wave.id, self.exec.prog.ops.get(wave.pc).map(|o| o.pc));
            if let Some(pc) = pc
                && !first
                && breakpoints.contains(&pc)
            {
                return Ok(Stop::Breakpoint { wave: id, pc });
            }
            first = false;
            if self.step(id)? == Stop::Finished {
                return Ok(Stop::Finished);
            }
        }
        Ok(Stop::Step)
    }

    /// When no wave can run: release a barrier, or start the next workgroup, or finish.
    fn advance(&mut self) -> Result<Stop, Trap> {
        if self.exec.waves.iter().any(|w| w.state == State::Running) {
            return Ok(Stop::Step);
        }
        let mut waves = std::mem::take(&mut self.exec.waves);
        let done = self.exec.barrier_state(&mut waves);
        self.exec.waves = waves;
        if !done? {
            return Ok(Stop::Step);
        }
        let [x, y, z] = self.exec.wg_id;
        let [gx, gy, gz] = self.exec.grid;
        let next = if x + 1 < gx {
            [x + 1, y, z]
        } else if y + 1 < gy {
            [0, y + 1, z]
        } else if z + 1 < gz {
            [0, 0, z + 1]
        } else {
            self.finished = true;
            return Ok(Stop::Finished);
        };
        self.exec.begin_workgroup(next)?;
        Ok(Stop::NextWorkgroup)
    }

    /// The whole state now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            device: self.exec.device.clone(),
            local: self.exec.local.clone(),
            waves: self.exec.waves.clone(),
            steps: self.exec.steps,
            stats: self.exec.stats.clone(),
            workgroup: self.exec.wg_id,
            finished: self.finished,
        }
    }

    /// Returns to the state of `snapshot` (taken from this session).
    pub fn restore(&mut self, snapshot: &Snapshot) {
        self.exec.device.clone_from(&snapshot.device);
        self.exec.local.clone_from(&snapshot.local);
        self.exec.waves.clone_from(&snapshot.waves);
        self.exec.steps = snapshot.steps;
        self.exec.stats = snapshot.stats.clone();
        self.exec.wg_id = snapshot.workgroup;
        self.finished = snapshot.finished;
    }
}

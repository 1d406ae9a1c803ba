//! Execution with history: the emulator's [`Session`] plus a trail of every step taken, and
//! snapshots along it, so that any earlier moment can be reached again exactly.
//!
//! Execution is deterministic, so a moment is a position in the trail: restoring the latest
//! snapshot at or before it and replaying the steps in between reproduces the state bit for
//! bit. Snapshots are taken every `interval` steps and thinned (every other one dropped, the
//! interval doubled) past 64, so memory stays bounded on long runs; snapshots taken after the
//! user changed a register or memory are pinned, so replays keep the change.

use wave_emulator::{Dispatch, Session, Snapshot, Stop, Trap};
use wave_wbin::Module;

/// A trail entry for a step that only advanced the scheduler (released a barrier, started the
/// next workgroup or finished): no wave ran.
pub const ADVANCE: u32 = u32::MAX;

const MAX_CHECKPOINTS: usize = 64;

struct Checkpoint {
    pos: usize,
    snapshot: Snapshot,
    pinned: bool,
}

/// A dispatch being debugged, with its history.
pub struct Debugger {
    /// The program.
    pub module: Module,
    /// The dispatch.
    pub dispatch: Dispatch,
    /// The session.
    pub session: Session,
    /// The wave stepped at each step since the start ([`ADVANCE`] for scheduler steps).
    trail: Vec<u32>,
    checkpoints: Vec<Checkpoint>,
    interval: usize,
    /// Where each workgroup started: its id and trail position.
    pub workgroup_starts: Vec<([u32; 3], usize)>,
}

impl Debugger {
    /// Starts a session.
    pub fn new(module: Module, dispatch: Dispatch, device: Vec<u8>) -> Result<Debugger, Trap> {
        let session = Session::new(&module, &dispatch, device)?;
        let first = Checkpoint { pos: 0, snapshot: session.snapshot(), pinned: true };
        let start = session.workgroup();
        Ok(Debugger {
            module,
            dispatch,
            session,
            trail: Vec::new(),
            checkpoints: vec![first],
            interval: 1024,
            workgroup_starts: vec![(start, 0)],
        })
    }

    /// The current position: steps taken since the start.
    pub fn pos(&self) -> usize {
        self.trail.len()
    }

    /// The wave the trail stepped at position `i`.
    pub fn trail_at(&self, i: usize) -> Option<u32> {
        self.trail.get(i).copied()
    }

    /// The lowest wave that can run, if any.
    pub fn next_runnable(&self) -> Option<u32> {
        self.session.next_running()
    }

    /// One step of `wave` (or of the scheduler with [`ADVANCE`]). On a trap, the state is put
    /// back to just before the faulting instruction, so it can be inspected.
    pub fn step(&mut self, wave: u32) -> Result<Stop, Trap> {
        let pos = self.trail.len();
        if pos >= self.checkpoints.last().map_or(0, |c| c.pos) + self.interval {
            self.checkpoint(false);
        }
        self.trail.push(wave);
        match self.session.step(wave) {
            Ok(stop) => {
                if stop == Stop::NextWorkgroup {
                    self.workgroup_starts.push((self.session.workgroup(), self.trail.len()));
                }
                Ok(stop)
            }
            Err(trap) => {
                self.goto(pos);
                Err(trap)
            }
        }
    }

    /// One step in scheduler order: the lowest running wave, or the scheduler.
    pub fn step_any(&mut self) -> Result<(u32, Stop), Trap> {
        let wave = self.next_runnable().unwrap_or(ADVANCE);
        self.step(wave).map(|s| (wave, s))
    }

    fn checkpoint(&mut self, pinned: bool) {
        let pos = self.trail.len();
        self.checkpoints.retain(|c| c.pos != pos || c.pinned && !pinned);
        if self.checkpoints.iter().any(|c| c.pos == pos) {
            return;
        }
        self.checkpoints.push(Checkpoint { pos, snapshot: self.session.snapshot(), pinned });
        if self.checkpoints.len() > MAX_CHECKPOINTS {
            let mut keep = true;
            self.checkpoints.retain(|c| {
                keep = !keep;
                c.pinned || c.pos == pos || keep
            });
            self.interval *= 2;
        }
    }

    /// The user changed the state here: later replays must start from this state.
    pub fn modified(&mut self) {
        self.checkpoint(true);
    }

    /// Returns to position `k` (at most the current one); the steps after it are forgotten.
    pub fn goto(&mut self, k: usize) {
        let k = k.min(self.trail.len());
        self.rebuild(k);
        self.trail.truncate(k);
        self.checkpoints.retain(|c| c.pos <= k);
        self.workgroup_starts.retain(|(_, p)| *p <= k);
    }

    /// Puts the session in the state of position `k` of the trail (which is kept).
    fn rebuild(&mut self, k: usize) {
        let Some(c) = self.checkpoints.iter().rev().find(|c| c.pos <= k) else { return };
        let from = c.pos;
        self.session.restore(&c.snapshot);
        for i in from..k {
            let _ = self.session.step(self.trail[i]);
        }
    }

    /// The latest earlier position (before the current one) where `hit(session, wave about to
    /// step)` holds, searched
    /// backwards one snapshot segment at a time; the state goes there. When there is none,
    /// the state stays where it was and `None` is returned.
    pub fn search_back(&mut self, hit: &mut dyn FnMut(&Session, u32) -> bool) -> Option<usize> {
        let end = self.trail.len();
        let starts: Vec<usize> = self.checkpoints.iter().map(|c| c.pos).rev().collect();
        let mut seg_end = end;
        for start in starts {
            if start >= seg_end {
                continue;
            }
            self.rebuild(start);
            let mut found = None;
            for i in start..seg_end {
                if hit(&self.session, self.trail[i]) {
                    found = Some(i);
                }
                let _ = self.session.step(self.trail[i]);
            }
            if let Some(at) = found {
                self.goto(at);
                return Some(at);
            }
            seg_end = start;
        }
        self.rebuild(end);
        None
    }
}

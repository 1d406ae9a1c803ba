//! Workgroups in parallel, with the one-thread run's results.
//!
//! The grid is run in batches. The workgroups of a batch run at once on worker threads, each
//! on a speculative overlay of device memory as the batch found it (`overlay`). Then they
//! commit one by one in grid order, the order the one-thread run takes: a workgroup that read
//! a line written by an earlier workgroup of the batch, recorded an atomic it then touched,
//! or may have run past the instruction budget is run again, alone, on the memory as
//! committed so far; the others' writes, recorded atomics, statistics, trace events and
//! notes are taken as they are. A trap is reported by the first workgroup, in grid order,
//! that traps when it commits, with every earlier workgroup's writes and its own before the
//! fault in memory: what the one-thread run leaves. docs/emulator.md ("Threads") has the
//! argument.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::Trap;

use super::memory::REDO;
use super::overlay::{Lines, Overlay};
use super::{Exec, Stats};

/// Workgroups per worker in a batch: enough to balance uneven workgroups, few enough that a
/// batch's overlays stay small.
const PER_WORKER: usize = 4;

/// The most memory the overlays' line sets and page tables of one batch may take.
const OVERLAY_BUDGET: usize = 256 << 20;

/// What a workgroup did on a worker, waiting for its commit.
struct Spec {
    overlay: Overlay,
    result: Result<(), Trap>,
    /// Steps at its start and end.
    steps: (u64, u64),
    stats: Stats,
    trace: Vec<crate::TraceEvent>,
    truncated: bool,
    /// Notes with the pc each is about.
    notes: Vec<(u32, String)>,
}

impl Exec {
    /// The workgroup id of the `index`th workgroup in grid order (x fastest).
    fn workgroup_at(&self, index: u64) -> [u32; 3] {
        let [gx, gy, _] = self.grid.map(u64::from);
        [(index % gx) as u32, (index / gx % gy) as u32, (index / (gx * gy)) as u32]
    }

    /// A machine for a worker thread: the same kernel and dispatch, no device memory.
    fn worker(&self) -> Exec {
        Exec {
            module: self.module.clone(),
            kernel_name: self.kernel_name.clone(),
            prog: self.prog.clone(),
            w: self.w,
            full: self.full,
            span: self.span,
            device: Vec::new(),
            args: self.args.clone(),
            local: vec![0; self.local.len()],
            steps: 0,
            max_steps: self.max_steps,
            stop_at: self.max_steps,
            interrupt: self.interrupt.clone(),
            progress: self.progress.clone(),
            published: (0, 0),
            max_call_depth: self.max_call_depth,
            stats: Stats::default(),
            wg_id: [0; 3],
            wg_size: self.wg_size,
            grid: self.grid,
            num_waves: self.num_waves,
            trace: None,
            trace_truncated: false,
            waves: Vec::new(),
            start_regs: Vec::new(),
            notes: Vec::new(),
            shuffle_notes: Vec::new(),
            threads: 1,
            overlay: None,
        }
    }

    /// Runs workgroup `index` on this worker over `base`, starting at step `start` of a budget
    /// of `max_steps`.
    fn speculate(
        &mut self,
        index: u64,
        mut overlay: Overlay,
        base: Arc<Vec<u8>>,
        defer: bool,
        (start, max_steps): (u64, u64),
        trace: bool,
    ) -> Spec {
        overlay.begin(base, defer);
        self.overlay = Some(overlay);
        self.steps = start;
        self.max_steps = max_steps;
        self.stop_at = if self.interrupt.is_some() || self.progress.is_some() {
            max_steps.min(start.saturating_add(crate::INTERRUPT_EVERY))
        } else {
            max_steps
        };
        self.stats = Stats { wave_width: self.w as u32, ..Stats::default() };
        self.published = (0, start);
        self.trace = trace.then(Vec::new);
        self.trace_truncated = false;
        self.notes.clear();
        self.shuffle_notes.clear();
        let result = self.run_one(self.workgroup_at(index));
        let mut overlay = self.overlay.take().unwrap_or_default();
        overlay.end();
        Spec {
            overlay,
            result,
            steps: (start, self.steps),
            stats: std::mem::take(&mut self.stats),
            trace: self.trace.take().unwrap_or_default(),
            truncated: self.trace_truncated,
            notes: self.shuffle_notes.drain(..).zip(self.notes.drain(..)).collect(),
        }
    }

    /// Runs every workgroup of the grid on `self.threads` threads.
    pub(super) fn run_parallel(&mut self, total: u64) -> Result<(), Trap> {
        let threads = self.threads.min(total as usize).max(1);
        let overlay_bytes = self.device.len() / 256 + 4096;
        let most = (OVERLAY_BUDGET / overlay_bytes).clamp(threads, 1 << 16);
        let mut batch = (threads * PER_WORKER).min(most);
        let mut workers: Vec<Exec> = (0..threads).map(|_| self.worker()).collect();
        let pool: Mutex<Vec<Overlay>> = Mutex::new(Vec::new());
        let mut written = Lines::default();
        written.fit_to(self.device.len());
        let tracing = self.trace.is_some();
        let mut next = 0u64;
        // After a batch where most workgroups had to run again, the next few run on this
        // thread alone: they depend on each other (a ticket counter, a chain).
        let mut alone_until = 0u64;
        while next < total {
            if next < alone_until {
                self.run_one(self.workgroup_at(next))?;
                self.finished_workgroup();
                next += 1;
                continue;
            }
            let n = (batch as u64).min(total - next) as usize;
            let began = std::time::Instant::now();
            let base = Arc::new(std::mem::take(&mut self.device));
            let budget = (0, self.max_steps.saturating_sub(self.steps));
            let taken = AtomicUsize::new(0);
            let mut specs: Vec<Option<Spec>> = Vec::with_capacity(n);
            specs.resize_with(n, || None);
            let done: Vec<(usize, Spec)> = std::thread::scope(|scope| {
                let handles: Vec<_> = workers
                    .iter_mut()
                    .take(n)
                    .map(|worker| {
                        let (base, taken, pool) = (&base, &taken, &pool);
                        scope.spawn(move || {
                            let mut out = Vec::new();
                            loop {
                                let i = taken.fetch_add(1, Ordering::Relaxed);
                                if i >= n {
                                    return out;
                                }
                                let overlay =
                                    pool.lock().ok().and_then(|mut p| p.pop()).unwrap_or_default();
                                let spec = worker.speculate(
                                    next + i as u64,
                                    overlay,
                                    Arc::clone(base),
                                    true,
                                    budget,
                                    tracing,
                                );
                                out.push((i, spec));
                            }
                        })
                    })
                    .collect();
                handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
            });
            for (i, spec) in done {
                if let Some(slot) = specs.get_mut(i) {
                    *slot = Some(spec);
                }
            }
            self.device = Arc::try_unwrap(base).unwrap_or_else(|shared| shared.to_vec());
            let mut redone = 0;
            for (i, spec) in specs.into_iter().enumerate() {
                let index = next + i as u64;
                let spec = match spec {
                    Some(spec)
                        if !spec.overlay.poisoned
                            && !spec.overlay.read.meets(&written)
                            && self.steps.saturating_add(spec.steps.1) < self.max_steps =>
                    {
                        spec
                    }
                    other => {
                        // A worker that died (it cannot: the interpreter does not panic)
                        // leaves its workgroups to this thread.
                        redone += 1;
                        let overlay = other.map(|s| s.overlay).unwrap_or_default();
                        let Some(worker) = workers.first_mut() else {
                            return Err(self.trap(None, None, None, REDO.into()));
                        };
                        let base = Arc::new(std::mem::take(&mut self.device));
                        let spec = worker.speculate(
                            index,
                            overlay,
                            Arc::clone(&base),
                            false,
                            (self.steps, self.max_steps),
                            tracing,
                        );
                        self.device =
                            Arc::try_unwrap(base).unwrap_or_else(|shared| shared.to_vec());
                        spec
                    }
                };
                spec.overlay.commit(&mut self.device, &mut written);
                self.merge(spec, &pool)?;
                self.finished_workgroup();
            }
            written.clear();
            next += n as u64;
            // Batches of small workgroups grow until starting the threads costs little.
            if began.elapsed() < std::time::Duration::from_millis(4) && n == batch {
                batch = (batch * 2).min(most);
            }
            if redone * 2 > n {
                alone_until = next + 4 * n as u64;
            }
        }
        Ok(())
    }

    /// Takes a committed workgroup's statistics, trace and notes, as the one-thread run
    /// would have gathered them, and returns its overlay to the pool.
    fn merge(&mut self, spec: Spec, pool: &Mutex<Vec<Overlay>>) -> Result<(), Trap> {
        let offset = self.steps - spec.steps.0;
        self.steps += spec.steps.1 - spec.steps.0;
        self.published.1 += spec.steps.1 - spec.steps.0;
        let s = &mut self.stats;
        let t = &spec.stats;
        s.instructions += t.instructions;
        s.lane_ops += t.lane_ops;
        // The worker published these to the progress already.
        self.published.0 += t.lane_ops;
        for (a, b) in s.by_class.iter_mut().zip(t.by_class) {
            *a += b;
        }
        s.barrier_waits += t.barrier_waits;
        for (a, b) in s.device_bytes.iter_mut().zip(t.device_bytes) {
            *a += b;
        }
        for (a, b) in s.local_bytes.iter_mut().zip(t.local_bytes) {
            *a += b;
        }
        s.workgroups += t.workgroups;
        if let Some(trace) = self.trace.as_mut() {
            for mut event in spec.trace {
                if trace.len() < crate::TRACE_LIMIT {
                    event.step += offset;
                    trace.push(event);
                } else {
                    self.trace_truncated = true;
                }
            }
            self.trace_truncated |= spec.truncated;
        }
        for (pc, note) in spec.notes {
            if !self.shuffle_notes.contains(&pc) && self.shuffle_notes.len() < 64 {
                self.shuffle_notes.push(pc);
                self.notes.push(note);
            }
        }
        if let Ok(mut p) = pool.lock() {
            p.push(spec.overlay);
        }
        spec.result
    }
}

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

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::Trap;

use super::overlay::{Lines, Overlay};
use super::{Exec, Stats};

/// Workgroups per worker in the first batch; later batches are sized by time.
const PER_WORKER: usize = 4;

/// How long a batch should take: long enough that waiting for the slowest worker and
/// committing cost little, short enough that a long run shows progress and budgets bite.
const BATCH_TIME: Duration = Duration::from_millis(50);

/// The most memory the overlays of one batch may hold (line sets, page tables, pages).
const OVERLAY_BUDGET: usize = 256 << 20;

/// Bytes a written page holds in an overlay.
const PAGE_BYTES: usize = 4096 + 64 * 8;

/// A workgroup for a worker to run.
struct Task {
    index: u64,
    slot: usize,
    overlay: Overlay,
    base: Arc<Vec<u8>>,
    budget: (u64, u64),
}

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
        let mut workers: Vec<Exec> = (0..threads).map(|_| self.worker()).collect();
        // Runs the workgroups that must run again, on this thread.
        let mut redo = self.worker();
        let (task_tx, task_rx) = mpsc::channel::<Task>();
        let task_rx = Mutex::new(task_rx);
        let (done_tx, done_rx) = mpsc::channel::<(usize, Option<Spec>)>();
        let tracing = self.trace.is_some();
        std::thread::scope(|scope| {
            for worker in workers.iter_mut() {
                let (task_rx, done_tx) = (&task_rx, done_tx.clone());
                scope.spawn(move || {
                    loop {
                        let task = match task_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(task) = task else { return };
                        // A panic (the interpreter has none) loses only this workgroup's
                        // speculation: it runs again on the committing thread.
                        let spec = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            worker.speculate(
                                task.index,
                                task.overlay,
                                task.base,
                                true,
                                task.budget,
                                tracing,
                            )
                        }))
                        .ok();
                        if done_tx.send((task.slot, spec)).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_tx);
            let result = self.batches(total, threads, &task_tx, &done_rx, &mut redo);
            drop(task_tx);
            result
        })
    }

    /// The batches of [`Exec::run_parallel`]: each sent to the workers as tasks, then
    /// committed in grid order.
    fn batches(
        &mut self,
        total: u64,
        threads: usize,
        tasks: &mpsc::Sender<Task>,
        done: &mpsc::Receiver<(usize, Option<Spec>)>,
        redo: &mut Exec,
    ) -> Result<(), Trap> {
        let tracing = self.trace.is_some();
        let overlay_bytes = self.device.len() / 256 + 4096;
        let mut batch = threads * PER_WORKER;
        let mut pool: Vec<Overlay> = Vec::new();
        let mut written = Lines::default();
        written.fit_to(self.device.len());
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
            let began = Instant::now();
            let base = Arc::new(std::mem::take(&mut self.device));
            let budget = (0, self.max_steps.saturating_sub(self.steps));
            let mut specs: Vec<Option<Spec>> = Vec::with_capacity(n);
            specs.resize_with(n, || None);
            let mut sent = 0;
            for slot in 0..n {
                let task = Task {
                    index: next + slot as u64,
                    slot,
                    overlay: pool.pop().unwrap_or_default(),
                    base: Arc::clone(&base),
                    budget,
                };
                if tasks.send(task).is_ok() {
                    sent += 1;
                }
            }
            for _ in 0..sent {
                let Ok((slot, spec)) = done.recv() else { break };
                if let Some(s) = specs.get_mut(slot) {
                    *s = spec;
                }
            }
            self.device = Arc::try_unwrap(base).unwrap_or_else(|shared| shared.to_vec());
            let running = began.elapsed();
            let mut redone = 0;
            let mut pages = 0;
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
                        redone += 1;
                        let overlay = other.map(|s| s.overlay).unwrap_or_default();
                        let base = Arc::new(std::mem::take(&mut self.device));
                        let spec = redo.speculate(
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
                pages += spec.overlay.pages();
                spec.overlay.commit(&mut self.device, &mut written);
                self.merge(spec, &mut pool)?;
                self.finished_workgroup();
            }
            written.clear();
            next += n as u64;
            if redone * 2 > n {
                alone_until = next + 4 * n as u64;
            }
            // The next batch lasts about BATCH_TIME (fewer waits for the slowest worker and
            // for the commit), within the memory its overlays may hold.
            let per_workgroup = running.as_secs_f64() / n as f64;
            let by_time = (BATCH_TIME.as_secs_f64() / per_workgroup.max(1e-9)) as usize;
            let each = overlay_bytes + pages * PAGE_BYTES / n;
            let by_memory = OVERLAY_BUDGET / each.max(1);
            batch = by_time.min(by_memory).clamp(threads, 1 << 16).min(batch.saturating_mul(8));
        }
        Ok(())
    }

    /// Takes a committed workgroup's statistics, trace and notes, as the one-thread run
    /// would have gathered them, and returns its overlay to the pool.
    fn merge(&mut self, spec: Spec, pool: &mut Vec<Overlay>) -> Result<(), Trap> {
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
        pool.push(spec.overlay);
        spec.result
    }
}

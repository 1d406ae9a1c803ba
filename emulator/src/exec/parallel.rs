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
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::Trap;

use super::overlay::{Lines, Overlay};
use super::{Exec, Stats};

/// The most worker threads a dispatch starts, whatever it asks for.
const MAX_THREADS: usize = 1024;

/// Workgroups per worker in the first batch; later batches are sized by time.
const PER_WORKER: usize = 4;

/// How long a batch should take: long enough that waiting for the slowest worker and
/// committing cost little, short enough that a long run shows progress and budgets bite.
const BATCH_TIME: Duration = Duration::from_millis(50);

/// The most memory the overlays of one batch may hold (line sets, page tables, pages).
const OVERLAY_BUDGET: usize = 256 << 20;

/// Bytes a written page holds in an overlay.
const PAGE_BYTES: usize = 4096 + 64 * 8;

/// A worker's machine on cache lines of its own: each thread writes its counters on every
/// instruction, and a neighbour's reads of the same line would miss every time.
#[repr(align(128))]
struct Apart(Exec);

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

/// One batch as the workers see it: they take workgroups by number until none is left.
struct Batch {
    first: u64,
    n: usize,
    next: AtomicUsize,
    /// The memory as the batch found it; taken back once every workgroup is done.
    base: Mutex<Option<Arc<Vec<u8>>>>,
    budget: (u64, u64),
    overlays: Mutex<Vec<Overlay>>,
    /// Each workgroup's run (`None` if its worker panicked), and how many are done.
    results: Mutex<(Vec<Option<Spec>>, usize)>,
    all_done: Condvar,
}

impl Batch {
    fn new(
        first: u64,
        n: usize,
        base: Arc<Vec<u8>>,
        budget: (u64, u64),
        overlays: Vec<Overlay>,
    ) -> Batch {
        let mut results = Vec::with_capacity(n);
        results.resize_with(n, || None);
        Batch {
            first,
            n,
            next: AtomicUsize::new(0),
            base: Mutex::new(Some(base)),
            budget,
            overlays: Mutex::new(overlays),
            results: Mutex::new((results, 0)),
            all_done: Condvar::new(),
        }
    }
}

/// Where the committing thread posts batches and workers wait for them: one wake-up per
/// batch, not per workgroup.
#[derive(Default)]
struct Board {
    /// The batch's number (0: none yet), the batch, and whether to stop.
    posted: Mutex<(u64, Option<Arc<Batch>>, bool)>,
    wake: Condvar,
}

impl Board {
    /// A worker's life: run workgroups of each posted batch until told to stop.
    fn work(&self, worker: &mut Exec, tracing: bool) {
        let mut seen = 0;
        loop {
            let batch = {
                let Ok(mut posted) = self.posted.lock() else { return };
                while posted.0 == seen && !posted.2 {
                    match self.wake.wait(posted) {
                        Ok(p) => posted = p,
                        Err(_) => return,
                    }
                }
                if posted.2 {
                    return;
                }
                seen = posted.0;
                posted.1.clone()
            };
            let Some(batch) = batch else { continue };
            loop {
                let i = batch.next.fetch_add(1, Ordering::Relaxed);
                if i >= batch.n {
                    break;
                }
                let overlay =
                    batch.overlays.lock().ok().and_then(|mut o| o.pop()).unwrap_or_default();
                let base = batch.base.lock().ok().and_then(|b| b.clone()).unwrap_or_default();
                // A panic (the interpreter has none) loses only this workgroup's
                // speculation: it runs again on the committing thread.
                let spec = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    worker.speculate(
                        batch.first + i as u64,
                        overlay,
                        base,
                        true,
                        batch.budget,
                        tracing,
                    )
                }))
                .ok();
                if let Ok(mut results) = batch.results.lock() {
                    if let Some(slot) = results.0.get_mut(i) {
                        *slot = spec;
                    }
                    results.1 += 1;
                    if results.1 == batch.n {
                        batch.all_done.notify_all();
                    }
                }
            }
        }
    }

    /// Posts `batch`, waits until every workgroup of it is done, and returns their runs.
    fn run(&self, batch: Batch) -> Vec<Option<Spec>> {
        let batch = Arc::new(batch);
        if let Ok(mut posted) = self.posted.lock() {
            posted.0 += 1;
            posted.1 = Some(Arc::clone(&batch));
        }
        self.wake.notify_all();
        let mut specs = Vec::new();
        if let Ok(mut results) = batch.results.lock() {
            while results.1 < batch.n {
                match batch.all_done.wait(results) {
                    Ok(r) => results = r,
                    Err(_) => return specs,
                }
            }
            specs = std::mem::take(&mut results.0);
        }
        if let Ok(mut posted) = self.posted.lock() {
            posted.1 = None;
        }
        // Every run has let go of the base (`Overlay::end`): only the caller holds it now.
        if let Ok(mut base) = batch.base.lock() {
            base.take();
        }
        specs
    }

    fn stop(&self) {
        if let Ok(mut posted) = self.posted.lock() {
            posted.2 = true;
        }
        self.wake.notify_all();
    }
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
            every_register: false,
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
        self.stats.settle();
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
        let threads = self.threads.min(MAX_THREADS).min(total as usize).max(1);
        let mut workers: Vec<Apart> = (0..threads).map(|_| Apart(self.worker())).collect();
        // Runs the workgroups that must run again, on this thread.
        let mut redo = self.worker();
        let board = Board::default();
        let tracing = self.trace.is_some();
        let ran = std::thread::scope(|scope| {
            let mut started = 0;
            for Apart(worker) in workers.iter_mut() {
                let board = &board;
                let spawned = std::thread::Builder::new()
                    .name("wave-workgroups".into())
                    .spawn_scoped(scope, move || board.work(worker, tracing));
                started += usize::from(spawned.is_ok());
            }
            // No thread to be had (a process at its limit): the caller runs them alone.
            if started == 0 {
                return None;
            }
            let result = self.batches(total, started, &board, &mut redo);
            board.stop();
            Some(result)
        });
        match ran {
            Some(result) => result,
            None => self.run_serial(),
        }
    }

    /// The batches of [`Exec::run_parallel`]: each put on the board for the workers, then
    /// committed in grid order.
    fn batches(
        &mut self,
        total: u64,
        threads: usize,
        board: &Board,
        redo: &mut Exec,
    ) -> Result<(), Trap> {
        let tracing = self.trace.is_some();
        let overlay_bytes = self.device.len() / 256 + 4096;
        let mut batch = threads * PER_WORKER;
        let mut pool: Vec<Overlay> = Vec::new();
        let mut written = Lines::default();
        written.fit(self.device.len());
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
            let overlays = pool.drain(pool.len().saturating_sub(n)..).collect();
            let base = Arc::new(std::mem::take(&mut self.device));
            let budget = (0, self.max_steps.saturating_sub(self.steps));
            let specs = board.run(Batch::new(next, n, Arc::clone(&base), budget, overlays));
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
        // A worker counted its steps from the batch's start: the one-thread count is ours.
        spec.result.map_err(|mut trap| {
            if trap.message.starts_with("interrupted after ") {
                trap.message = format!("interrupted after {} wave-instructions", self.steps);
            }
            trap
        })
    }
}

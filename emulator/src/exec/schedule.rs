//! Running the grid: workgroups one after another, each wave of a workgroup until it reaches
//! a barrier or ends, barriers released when every wave has reached them; and the step loop
//! that fetches, counts and traces each instruction before its semantics run.

use crate::Trap;
use crate::decode::Op;

use super::{CHUNK, Exec, LANES, State, Wave};

/// The lanes of wave `id` that are threads of the workgroup.
pub(super) fn alive_mask(id: u32, w: usize, threads: usize) -> u64 {
    let first = id as usize * w;
    let n = threads.saturating_sub(first).min(w);
    if n == 64 { u64::MAX } else { (1u64 << n) - 1 }
}

impl Exec {
    /// Runs every workgroup of the grid: in order on this thread, or on `threads` threads
    /// with the same results (`parallel`).
    pub(crate) fn run_all(&mut self) -> Result<(), Trap> {
        // (Saturating: a grid of 2^96 workgroups ends at the budget long before.)
        let total = self.grid.iter().fold(1u64, |n, &d| n.saturating_mul(u64::from(d)));
        if self.threads > 1 && total > 1 {
            return self.run_parallel(total);
        }
        self.run_serial()
    }

    /// Runs every workgroup of the grid in order on this thread.
    pub(super) fn run_serial(&mut self) -> Result<(), Trap> {
        let [gx, gy, gz] = self.grid;
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    self.run_one([x, y, z])?;
                    self.finished_workgroup();
                }
            }
        }
        Ok(())
    }

    /// Runs workgroup `id` from its start to its end.
    pub(super) fn run_one(&mut self, id: [u32; 3]) -> Result<(), Trap> {
        // The code is held apart from the machine, so that an instruction is read in place.
        let ops = std::sync::Arc::clone(&self.prog.ops);
        self.begin_workgroup(id)?;
        let mut waves = std::mem::take(&mut self.waves);
        let result = self.run_waves(&ops, &mut waves);
        self.waves = waves;
        self.publish_progress();
        result
    }

    /// Adds the lane-operations run since the last call to the dispatch's progress.
    fn publish_progress(&mut self) {
        if let Some(p) = &self.progress {
            let relaxed = std::sync::atomic::Ordering::Relaxed;
            p.lane_ops.fetch_add(self.stats.lane_ops.saturating_sub(self.published.0), relaxed);
            p.steps.fetch_add(self.steps.saturating_sub(self.published.1), relaxed);
            self.published = (self.stats.lane_ops, self.steps);
        }
    }

    /// Counts a workgroup done in the dispatch's progress.
    pub(super) fn finished_workgroup(&self) {
        if let Some(p) = &self.progress {
            p.workgroups.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Whether the dispatch's interrupt asks the run to stop (and, now and then, the
    /// progress published).
    #[cold]
    fn interrupted(&mut self) -> bool {
        self.publish_progress();
        self.interrupt.as_ref().is_some_and(|i| (i.0)())
    }

    /// Starts workgroup `id`: local memory and every wave reset.
    pub(crate) fn begin_workgroup(&mut self, id: [u32; 3]) -> Result<(), Trap> {
        self.wg_id = id;
        self.stats.workgroups += 1;
        // Launching a wave costs one step, so that even a kernel with no instructions over an
        // enormous grid ends at the budget.
        // Resetting registers and local memory costs a step per 256 words too, so that the
        // budget bounds the run time of any dispatch.
        let words = u64::from(self.num_waves) * self.prog.registers as u64 * self.w as u64
            + self.local.len() as u64 / 4;
        self.steps = self.steps.saturating_add(u64::from(self.num_waves) + words / 256);
        if self.steps > self.max_steps {
            return Err(self.trap(
                None,
                None,
                None,
                format!("instruction budget exceeded: {} wave-instructions and wave launches (raise --max-steps if the dispatch is meant to run longer)", self.max_steps),
            ));
        }
        if !self.local.is_empty() {
            self.local.fill(0);
        }
        let w = self.w;
        let [sx, sy, _] = self.wg_size;
        let threads = self.wg_size.iter().product::<u32>() as usize;
        // A wave's register file: the kernel's R registers, then one row per immediate. The
        // immediate rows are written once, when the wave is created; no instruction writes them.
        let rows = self.prog.registers + self.prog.constants.len();
        // Waves are allocated once per run and reset for each workgroup.
        let mut waves = std::mem::take(&mut self.waves);
        // Fresh waves get every register; later workgroups only those the kernel may read
        // before writing (`Program::live_in`), unless a debugger shows them all.
        let every_register = waves.is_empty() || self.every_register;
        if waves.is_empty() {
            waves = (0..self.num_waves)
                .map(|id| {
                    let mut tid = [[0u32; 64]; 3];
                    let mut alive = 0u64;
                    // Lanes past the workgroup's threads (a partial last wave) never run.
                    let first = id as usize * w;
                    for (lane, t) in (first..(first + w).min(threads)).enumerate() {
                        alive |= 1 << lane;
                        let t = t as u32;
                        tid[0][lane] = t % sx;
                        tid[1][lane] = (t / sx) % sy;
                        tid[2][lane] = t / (sx * sy);
                    }
                    Wave {
                        id,
                        regs: {
                            let mut regs = vec![0u32; rows * LANES];
                            for (i, c) in self.prog.constants.iter().enumerate() {
                                let at = (self.prog.registers + i) * LANES;
                                regs[at..at + LANES].fill(*c);
                            }
                            regs
                        },
                        preds: [0; 4],
                        active: alive,
                        alive,
                        pc: 0,
                        frames: Vec::new(),
                        state: State::Done,
                        tid,
                    }
                })
                .collect();
        }
        if self.start_regs.is_empty() {
            // Every wave starts from the same registers: the parameters, then zeros.
            self.start_regs = (0..self.prog.registers * LANES)
                .map(|i| self.args.get(i / LANES).copied().unwrap_or(0))
                .collect();
        }
        for wave in waves.iter_mut() {
            // Only the first `span` lanes of each row: the scratch lanes above are never read.
            let n = self.span / CHUNK;
            let rows = wave.regs.as_chunks_mut::<LANES>().0;
            let start = self.start_regs.as_chunks::<LANES>().0;
            let copy = |row: &mut [u32; LANES], start: &[u32; LANES]| {
                let pieces = row.as_chunks_mut::<CHUNK>().0.iter_mut();
                for (d, s) in pieces.zip(start.as_chunks::<CHUNK>().0).take(n) {
                    *d = *s;
                }
            };
            if every_register {
                for (row, start) in rows.iter_mut().zip(start) {
                    copy(row, start);
                }
            } else {
                for &r in &self.prog.live_in {
                    if let (Some(row), Some(start)) =
                        (rows.get_mut(usize::from(r)), start.get(usize::from(r)))
                    {
                        copy(row, start);
                    }
                }
            }
            wave.preds = [0; 4];
            wave.alive =
                if w == 64 { u64::MAX } else { (1u64 << w) - 1 } & alive_mask(wave.id, w, threads);
            wave.active = wave.alive;
            wave.pc = 0;
            wave.frames.clear();
            wave.state = if wave.alive == 0 { State::Done } else { State::Running };
        }
        self.waves = waves;
        Ok(())
    }

    fn run_waves(&mut self, ops: &[Op], waves: &mut [Wave]) -> Result<(), Trap> {
        loop {
            for wave in waves.iter_mut() {
                if wave.state == State::Running {
                    self.run_wave(ops, wave)?;
                }
            }
            if self.barrier_state(waves)? {
                return Ok(());
            }
        }
    }

    /// With no wave running: releases a barrier every wave reached and returns `false`, or
    /// returns `true` when every wave has finished; a barrier that finished waves can never
    /// reach is a deadlock.
    pub(crate) fn barrier_state(&self, waves: &mut [Wave]) -> Result<bool, Trap> {
        let waiting = waves.iter().filter(|w| w.state == State::AtBarrier).count();
        if waiting == 0 {
            return Ok(waves.iter().all(|w| w.state == State::Done));
        }
        if waves.iter().any(|w| w.state == State::Running) {
            return Ok(false);
        }
        if waves.iter().any(|w| w.state == State::Done) {
            let mut at = Vec::new();
            for wave in waves.iter() {
                let op = self.prog.ops.get(wave.pc.saturating_sub(1));
                let line = op.and_then(|o| self.module.line_at(o.pc)).map(|l| l.line);
                let place = match (wave.state, op, line) {
                    (State::Done, _, _) => "finished".to_owned(),
                    (_, Some(o), Some(l)) => {
                        format!("waits at the barrier at pc 0x{:x} (line {l})", o.pc)
                    }
                    (_, Some(o), None) => format!("waits at the barrier at pc 0x{:x}", o.pc),
                    _ => "waits".to_owned(),
                };
                at.push(format!("wave {} {place}", wave.id));
            }
            return Err(Trap {
                message: format!(
                    "deadlock: {waiting} of {} waves wait at a barrier that finished waves can never reach ({})",
                    waves.len(),
                    at.join("; ")
                ),
                kernel: self.kernel_name.clone(),
                pc: None,
                line: None,
                workgroup: Some(self.wg_id),
                wave: None,
                lane: None,
            });
        }
        for wave in waves.iter_mut() {
            if wave.state == State::AtBarrier {
                wave.state = State::Running;
            }
        }
        Ok(false)
    }

    fn run_wave(&mut self, ops: &[Op], wave: &mut Wave) -> Result<(), Trap> {
        // Two loops, so that the one without a trace has no trace code in it.
        if self.trace.is_some() {
            while wave.state == State::Running {
                self.step_in::<true>(ops, wave)?;
            }
        } else {
            while wave.state == State::Running {
                self.step_in::<false>(ops, wave)?;
            }
        }
        Ok(())
    }

    /// Executes the next instruction of a running wave.
    pub(crate) fn step_one(&mut self, wave: &mut Wave) -> Result<(), Trap> {
        let ops = std::sync::Arc::clone(&self.prog.ops);
        let result = self.step_in::<true>(&ops, wave);
        self.stats.settle();
        result
    }

    /// Executes the next instruction of a running wave, from `ops` (the kernel's code).
    #[inline(always)]
    pub(super) fn step_in<const TRACE: bool>(
        &mut self,
        ops: &[Op],
        wave: &mut Wave,
    ) -> Result<(), Trap> {
        let w = self.w;
        let Some(op) = ops.get(wave.pc) else {
            // Falling off the end of the code halts the lanes that got there; lanes still
            // waiting in enclosing blocks (an `else` not yet run, the caller of a function
            // that has no `return`) carry on.
            let gone = wave.active;
            wave.alive &= !gone;
            Self::retire(wave, gone, 0);
            wave.active = 0;
            self.settle(wave);
            return Ok(());
        };
        if self.steps >= self.stop_at {
            if self.steps < self.max_steps && !self.interrupted() {
                self.stop_at = self.max_steps.min(self.steps + crate::INTERRUPT_EVERY);
            } else {
                let message = if self.steps < self.max_steps {
                    format!("interrupted after {} wave-instructions", self.steps)
                } else {
                    format!(
                        "instruction budget exceeded: {} wave-instructions (raise --max-steps if the kernel is meant to run longer)",
                        self.max_steps
                    )
                };
                return Err(self.trap(Some(wave), Some(op), None, message));
            }
        }
        self.steps += 1;
        let mask = match op.guard {
            None => wave.active,
            Some((p, false)) => wave.active & wave.preds[usize::from(p)],
            Some((p, true)) => wave.active & !wave.preds[usize::from(p)],
        };
        // A full mask is the common case, and counting bits without a POPCNT instruction (the
        // baseline x86-64 target) is not free.
        self.stats.lane_ops +=
            if mask == self.full { w as u64 } else { u64::from(mask.count_ones()) };
        if TRACE && self.trace.is_some() {
            let mut text = String::new();
            if let Some(inst) = self.prog.insts.get(wave.pc) {
                wave_isa::write_inst(inst, &mut text, &|_| None);
            }
            let trace = self.trace.get_or_insert_with(Vec::new);
            if trace.len() < crate::TRACE_LIMIT {
                trace.push(crate::TraceEvent {
                    step: self.steps,
                    workgroup: self.wg_id,
                    wave: wave.id,
                    pc: op.pc,
                    mask,
                    wave_width: w as u32,
                    class: op.class,
                    text,
                });
            } else {
                self.trace_truncated = true;
            }
        }
        wave.pc += 1;
        // (`instructions` is their sum, taken when the counters are read: `Stats::settle`.)
        self.stats.by_class[usize::from(op.class & 3)] += 1;
        self.step(wave, op, mask)?;
        Ok(())
    }
}

//! Running: `continue`, the steps (`next`, `stepIn`, `stepOut`, `stepInstruction`), `stepBack`,
//! `reverseContinue`, and the slices a resumed execution runs in, with the stops they end in.

use super::*;

impl Adapter {
    pub(super) fn resume(&mut self, r: Resume) {
        self.nodes.clear();
        self.resume = Some(r);
    }

    pub(super) fn stop(&mut self, reason: &str, wave: u32, description: String, ids: Vec<i64>) {
        self.resume = None;
        self.nodes.clear();
        self.focus_wave = wave;
        let mut body = json!({
            "reason": reason,
            "threadId": wave + 1,
            "allThreadsStopped": true,
            "description": description,
        });
        if !ids.is_empty() {
            body["hitBreakpointIds"] = json!(ids);
        }
        if reason == "exception" {
            body["text"] = json!("trap");
        }
        self.event("stopped", body);
    }

    pub(super) fn finish(&mut self) {
        self.resume = None;
        if let Some(dbg) = &self.dbg {
            let s = dbg.session.stats();
            let text = format!(
                "the dispatch finished: {} wave-instructions, {:.1}% of lanes active",
                s.instructions,
                100.0 * s.utilisation()
            );
            self.output("console", text);
        }
        if !self.terminated {
            self.terminated = true;
            self.event("exited", json!({"exitCode": 0}));
            self.event("terminated", json!({}));
        }
    }

    pub(super) fn trapped(&mut self, trap: Trap) {
        let wave = trap.wave.unwrap_or(self.focus_wave);
        if let Some(l) = trap.lane {
            self.focus_lane = l;
        }
        let message = trap.to_string();
        self.output("stderr", format!("trap: {message}"));
        self.trap = Some((trap, wave));
        self.stop("exception", wave, message, Vec::new());
    }

    pub(super) fn step(&mut self, command: &str, args: &Value) -> Reply {
        let wave = self.wave_of_thread(args)?;
        let dbg = self.stopped()?;
        let view = &dbg.session.waves()[wave as usize];
        if view.state == WaveState::Done {
            return Err(format!("wave {wave} has finished: step another thread or continue"));
        }
        let instruction = args.get("granularity").and_then(Value::as_str) == Some("instruction");
        let kind = match command {
            "stepIn" => StepKind::In,
            "stepOut" => StepKind::Out,
            _ if instruction => StepKind::Instruction,
            _ => StepKind::Line,
        };
        let line = view.pc.and_then(|pc| self.line_of(pc));
        let depth = view.blocks.iter().filter(|b| b.kind == BlockKind::Call).count();
        self.focus_wave = wave;
        self.resume(Resume::Step { wave, kind, line, depth, first: true });
        Ok(Value::Null)
    }

    pub(super) fn step_back(&mut self, args: &Value) -> Reply {
        let wave = self.wave_of_thread(args)?;
        let dbg = self.stopped()?;
        let at = (0..dbg.pos()).rev().find(|&i| dbg.trail_at(i) == Some(wave));
        let Some(at) = at else {
            return Err(format!(
                "wave {wave} has not run an instruction yet: nothing to step back to"
            ));
        };
        self.dbg_mut()?.goto(at);
        self.trap = None;
        self.stop("step", wave, "stepped back one instruction".into(), Vec::new());
        Ok(Value::Null)
    }

    pub(super) fn reverse_continue(&mut self) -> Reply {
        self.stopped()?;
        let mut dbg = self.dbg.take().ok_or("no program is being debugged")?;
        let focus = self.focus_lane;
        let (grid, size) = (dbg.dispatch.grid, workgroup_size(&dbg));
        let mut hit_at: Option<(u32, Vec<i64>)> = None;
        let found = dbg.search_back(&mut |session, wave| {
            if wave == ADVANCE {
                return false;
            }
            let Some(view) = session.waves().into_iter().find(|v| v.id == wave) else {
                return false;
            };
            let Some(pc) = view.pc else { return false };
            let ids: Vec<i64> = self
                .breakpoints
                .iter()
                .filter(|b| b.pcs.contains(&pc) && b.log.is_none())
                .filter(|b| {
                    let env = WaveEnv { session, grid, size, wave, active: view.active };
                    lanes_hit(b, &env, focus, pc).is_ok_and(|m| m != 0)
                })
                .map(|b| b.id)
                .collect();
            if ids.is_empty() {
                return false;
            }
            hit_at = Some((wave, ids));
            true
        });
        self.dbg = Some(dbg);
        self.trap = None;
        match (found, hit_at) {
            (Some(_), Some((wave, ids))) => {
                self.stop(
                    "breakpoint",
                    wave,
                    "reverse continue: the latest earlier breakpoint".into(),
                    ids,
                );
            }
            _ => {
                self.dbg_mut()?.goto(0);
                self.stop(
                    "entry",
                    0,
                    "reverse continue: no earlier breakpoint, back at the start".into(),
                    Vec::new(),
                );
            }
        }
        Ok(Value::Null)
    }

    /// Runs the resumed execution for up to [`SLICE`] instructions.
    pub fn run_slice(&mut self) {
        let Some(resume) = self.resume.clone() else { return };
        let result = self.slice(resume);
        if let Err(trap) = result {
            self.trapped(trap);
        }
        self.flush_events();
    }

    pub(super) fn slice(&mut self, resume: Resume) -> Result<(), Trap> {
        match resume {
            Resume::Continue { mut first } => {
                for _ in 0..SLICE {
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    let Some(wave) = dbg.next_runnable() else {
                        if dbg.step(ADVANCE)? == Stop::Finished {
                            self.finish();
                            return Ok(());
                        }
                        continue;
                    };
                    let pc = dbg.session.wave_pc(wave);
                    if !first
                        && let Some(pc) = pc
                        && let Some((ids, description)) = self.breakpoint_hit(wave, pc)
                    {
                        self.stop("breakpoint", wave, description, ids);
                        return Ok(());
                    }
                    first = false;
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    if dbg.step(wave)? == Stop::Finished {
                        self.finish();
                        return Ok(());
                    }
                }
                self.resume = Some(Resume::Continue { first: false });
                Ok(())
            }
            Resume::Step { wave, kind, line, depth, mut first } => {
                for _ in 0..SLICE {
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    let state = dbg.session.wave_state(wave).unwrap_or(WaveState::Done);
                    match state {
                        WaveState::Done => {
                            let next = dbg.next_runnable();
                            match next {
                                Some(n) => self.stop(
                                    "step",
                                    n,
                                    format!("wave {wave} finished; wave {n} runs next"),
                                    Vec::new(),
                                ),
                                None if dbg.session.is_finished() => self.finish(),
                                None => {
                                    dbg.step(ADVANCE)?;
                                    continue;
                                }
                            }
                            return Ok(());
                        }
                        WaveState::AtBarrier => {
                            // The others run to the barrier; the stepped wave waits for them.
                            let other = dbg.next_runnable().unwrap_or(ADVANCE);
                            if dbg.step(other)? == Stop::NextWorkgroup {
                                self.stop(
                                    "step",
                                    0,
                                    "the workgroup finished; the next one started".into(),
                                    Vec::new(),
                                );
                                return Ok(());
                            }
                            continue;
                        }
                        WaveState::Running => {}
                    }
                    let depth_now = dbg.session.call_depth(wave);
                    let pc_now = dbg.session.wave_pc(wave);
                    let line_now = pc_now.and_then(|pc| self.line_of(pc));
                    if !first {
                        let arrived = match kind {
                            StepKind::Instruction | StepKind::In => true,
                            StepKind::Line => {
                                depth_now < depth || (depth_now == depth && line_now != line)
                            }
                            StepKind::Out => depth_now < depth,
                        };
                        if arrived {
                            self.stop("step", wave, String::new(), Vec::new());
                            return Ok(());
                        }
                        if matches!(kind, StepKind::Line | StepKind::Out)
                            && let Some(pc) = pc_now
                            && let Some((ids, description)) = self.breakpoint_hit(wave, pc)
                        {
                            self.stop("breakpoint", wave, description, ids);
                            return Ok(());
                        }
                    }
                    first = false;
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    match dbg.step(wave)? {
                        Stop::Finished => {
                            self.finish();
                            return Ok(());
                        }
                        Stop::NextWorkgroup => {
                            self.stop(
                                "step",
                                0,
                                "the workgroup finished; the next one started".into(),
                                Vec::new(),
                            );
                            return Ok(());
                        }
                        _ => {}
                    }
                }
                self.resume = Some(Resume::Step { wave, kind, line, depth, first });
                Ok(())
            }
            Resume::Workgroup(id) => {
                for _ in 0..SLICE {
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    match dbg.step_any()? {
                        (_, Stop::Finished) => {
                            self.output(
                                "console",
                                format!("workgroup {id:?} never started: the dispatch finished"),
                            );
                            self.finish();
                            return Ok(());
                        }
                        (_, Stop::NextWorkgroup) if dbg.session.workgroup() == id => {
                            self.stop(
                                "goto",
                                0,
                                format!("workgroup {id:?}, at its start"),
                                Vec::new(),
                            );
                            return Ok(());
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
        }
    }
}

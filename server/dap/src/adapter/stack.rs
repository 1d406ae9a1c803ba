//! `threads`, `stackTrace` and `exceptionInfo`: the waves as threads, their calls as frames,
//! and what trapped.

use super::*;

impl Adapter {
    pub(super) fn threads(&self) -> Value {
        let Some(dbg) = &self.dbg else { return json!({"threads": []}) };
        let [x, y, z] = dbg.session.workgroup();
        let threads: Vec<Value> = dbg
            .session
            .waves()
            .iter()
            .map(|w| {
                let state = match w.state {
                    WaveState::Running => "",
                    WaveState::AtBarrier => " (at barrier)",
                    WaveState::Done => " (done)",
                };
                json!({"id": w.id + 1, "name": format!("wg ({x},{y},{z}) · wave {}{state}", w.id)})
            })
            .collect();
        json!({"threads": threads})
    }

    /// The function (label called) or kernel that contains `pc`.
    pub(super) fn function_at(&self, pc: u32) -> String {
        let Some(dbg) = &self.dbg else { return String::new() };
        let Some(k) = self.kernel() else { return String::new() };
        dbg.module
            .symbols
            .iter()
            .filter(|s| {
                s.kind == wave_wbin::SymbolKind::Function
                    && s.offset <= pc
                    && k.code.contains(&s.offset)
            })
            .max_by_key(|s| s.offset)
            .map_or_else(|| k.name.clone(), |s| s.name.clone())
    }

    pub(super) fn stack_trace(&mut self, args: &Value) -> Reply {
        let wave = self.wave_of_thread(args)?;
        let dbg = self.stopped()?;
        let view = &dbg.session.waves()[wave as usize];
        let w = dbg.session.wave_width();
        let mut frames = Vec::new();
        let frame = |id: u32, pc: Option<u32>, name: String| -> Value {
            let mut f = json!({"id": id, "name": name, "line": 0, "column": 0});
            if let Some(pc) = pc {
                f["instructionPointerReference"] = json!(format!("0x{pc:x}"));
                if let Some(line) = self.line_of(pc) {
                    f["line"] = json!(line);
                    f["column"] = json!(1);
                    f["source"] = self.source_json();
                }
            }
            f
        };
        let active = view.active.count_ones();
        let from_source = self.program.as_ref().is_some_and(|p| p.from_kernel_source);
        match view.pc {
            // A compiled kernel also shows the WAVE instruction about to run.
            Some(pc) if from_source => frames.push(frame(
                wave * 1000,
                Some(pc),
                format!(
                    "{} · {} · {active}/{w} lanes active",
                    self.function_at(pc),
                    self.instruction_at(pc).unwrap_or("?")
                ),
            )),
            Some(pc) => frames.push(frame(
                wave * 1000,
                Some(pc),
                format!("{} · {active}/{w} lanes active", self.function_at(pc)),
            )),
            None => frames.push(frame(wave * 1000, None, "(finished)".into())),
        }
        for (depth, b) in view.blocks.iter().rev().filter(|b| b.kind == BlockKind::Call).enumerate()
        {
            frames.push(frame(wave * 1000 + depth as u32 + 1, Some(b.pc), self.function_at(b.pc)));
        }
        let total = frames.len();
        let start = args.get("startFrame").and_then(Value::as_u64).unwrap_or(0) as usize;
        let levels =
            args.get("levels").and_then(Value::as_u64).filter(|l| *l > 0).unwrap_or(u64::MAX)
                as usize;
        let frames: Vec<Value> = frames.into_iter().skip(start).take(levels).collect();
        Ok(json!({"stackFrames": frames, "totalFrames": total}))
    }

    pub(super) fn exception_info(&mut self) -> Reply {
        let (trap, wave) = self.trap.as_ref().ok_or("the program did not stop on a trap")?;
        let mut place = Vec::new();
        if let Some(l) = trap.line {
            place.push(format!("line {}", self.client_line(l)));
        }
        if let Some(pc) = trap.pc {
            place.push(format!("pc 0x{pc:x}"));
        }
        place.push(format!("wave {wave}"));
        if let Some(l) = trap.lane {
            place.push(format!("lane {l}"));
        }
        Ok(json!({
            "exceptionId": trap.message.split(':').next().unwrap_or("trap"),
            "description": trap.to_string(),
            "breakMode": "always",
            "details": {"message": trap.message, "typeName": "trap", "stackTrace": place.join(", ")}
        }))
    }
}

//! Breakpoints of every kind (source lines, functions, instructions) with conditions, hit
//! counts and log points, and deciding whether one is hit.

use super::*;

/// `5`, `==5`, `>5`, `>=5`, `%5`.
pub(super) fn parse_hit_condition(text: &str) -> Result<(String, u64), String> {
    let t = text.trim();
    let (op, n) = ["==", ">=", ">", "%", "="]
        .iter()
        .find_map(|op| t.strip_prefix(op).map(|n| (op.trim_start_matches('='), n)))
        .unwrap_or(("", t));
    let n: u64 =
        n.trim().parse().map_err(|_| format!("hit condition `{text}`: use N, >N, >=N or %N"))?;
    Ok((if op.is_empty() { "==".into() } else { op.to_owned() }, n))
}

pub(super) fn hit_count_ok(hit: &Option<(String, u64)>, hits: u64) -> bool {
    match hit {
        None => true,
        Some((op, n)) => match op.as_str() {
            ">" => hits > *n,
            ">=" | "" => hits >= *n,
            "%" => *n > 0 && hits.is_multiple_of(*n),
            _ => hits == *n,
        },
    }
}

impl Adapter {
    pub(super) fn new_breakpoint(
        &mut self,
        spec: &Value,
        pcs: Vec<u32>,
        what: String,
    ) -> (Breakpoint, Option<String>) {
        let id = self.next_bp;
        self.next_bp += 1;
        let mut problem = None;
        // A condition naming source variables is read at each pc with their registers there;
        // elsewhere (or with no names) as written.
        let mut by_pc = Vec::new();
        let mut condition = None;
        if let Some(c) =
            spec.get("condition").and_then(Value::as_str).filter(|c| !c.trim().is_empty())
        {
            let mut as_written = pcs.is_empty();
            for &pc in &pcs {
                let at = self.substitute_at(pc, c);
                if at == c {
                    as_written = true;
                    continue;
                }
                match expr::parse(&at) {
                    Ok(e) => by_pc.push((pc, e)),
                    Err(e) => problem = Some(format!("condition `{c}`: {e}")),
                }
            }
            if as_written {
                match expr::parse(c) {
                    Ok(e) => condition = Some(e),
                    Err(e) => problem = Some(format!("condition `{c}`: {e}")),
                }
            }
        }
        let hit_condition =
            match spec.get("hitCondition").and_then(Value::as_str).filter(|c| !c.trim().is_empty())
            {
                Some(h) => match parse_hit_condition(h) {
                    Ok(h) => Some(h),
                    Err(e) => {
                        problem = Some(e);
                        None
                    }
                },
                None => None,
            };
        let mode = match spec.get("mode").and_then(Value::as_str) {
            Some("focus") => Mode::Focus,
            _ => Mode::Any,
        };
        let log = spec.get("logMessage").and_then(Value::as_str).map(str::to_owned);
        let b = Breakpoint { id, pcs, condition, by_pc, hit_condition, log, mode, hits: 0, what };
        (b, problem)
    }

    pub(super) fn bp_json(
        &self,
        b: &Breakpoint,
        problem: Option<String>,
        line: Option<u32>,
    ) -> Value {
        let verified = !b.pcs.is_empty() && problem.is_none();
        let mut v = json!({"id": b.id, "verified": verified});
        if let Some(l) = line {
            v["line"] = json!(l);
            v["source"] = self.source_json();
        }
        if let Some(pc) = b.pcs.first() {
            v["instructionReference"] = json!(format!("0x{pc:x}"));
        }
        if let Some(p) = problem {
            v["message"] = json!(p);
            v["reason"] = json!("failed");
        } else if b.pcs.is_empty() {
            v["message"] = json!(format!("no instruction at {}", b.what));
            v["reason"] = json!("failed");
        }
        v
    }

    /// The module lines of the program's source with code, in the kernel: client line → pcs.
    pub(super) fn lines_with_code(&self) -> Vec<(u32, u32)> {
        let (Some(dbg), Some(k)) = (self.dbg.as_ref(), self.kernel()) else { return Vec::new() };
        if self.program.as_ref().is_some_and(|p| p.source.is_none()) {
            return self
                .disassembly()
                .iter()
                .enumerate()
                .map(|(i, (pc, _, _))| (i as u32 + 1, *pc))
                .collect();
        }
        dbg.module
            .lines
            .iter()
            .filter(|l| k.code.contains(&l.offset))
            .map(|l| (self.client_line(l.line), l.offset))
            .collect()
    }

    pub(super) fn is_program_source(&self, source: &Value) -> bool {
        if source.get("sourceReference").and_then(Value::as_i64).is_some_and(|r| r > 0) {
            return self.program.as_ref().is_some_and(|p| p.source.is_none());
        }
        let Some(path) = source.get("path").and_then(Value::as_str) else { return false };
        let Some(ours) = self.program.as_ref().and_then(|p| p.source.as_ref()) else {
            return false;
        };
        let canon =
            |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        canon(std::path::Path::new(path)) == canon(ours)
    }

    pub(super) fn set_breakpoints(&mut self, args: &Value) -> Reply {
        let source = args.get("source").cloned().unwrap_or(json!({}));
        let key = source
            .get("path")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| source.get("sourceReference").map(|r| format!("ref:{r}")))
            .ok_or("`source` needs a `path`")?;
        // Replace this source's breakpoints.
        if let Some(old) = self.source_bps.remove(&key) {
            self.breakpoints.retain(|b| !old.contains(&b.id));
        }
        let ours = self.dbg.is_some() && self.is_program_source(&source);
        let lines = self.lines_with_code();
        let requested: Vec<Value> = match args.get("breakpoints") {
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return Err("`breakpoints` must be a list".into()),
            None => args
                .get("lines")
                .and_then(Value::as_array)
                .map(|l| l.iter().map(|n| json!({"line": n})).collect())
                .unwrap_or_default(),
        };
        let mut out = Vec::new();
        let mut ids = Vec::new();
        for spec in requested {
            let line = spec.get("line").and_then(Value::as_u64).unwrap_or(0) as u32;
            // The first line at or after the requested one that has code (within 20 lines).
            let actual = if ours {
                lines.iter().map(|(l, _)| *l).filter(|l| *l >= line && *l < line + 20).min()
            } else {
                None
            };
            // The first instruction of each run of the line's instructions: a line of a
            // compiled kernel is several instructions, and a stop at each would stop again at
            // every step of the same line.
            let pcs: Vec<u32> = match actual {
                Some(a) => {
                    let mut by_pc: Vec<(u32, u32)> = lines.clone();
                    by_pc.sort_by_key(|(_, pc)| *pc);
                    let mut starts = Vec::new();
                    let mut previous = None;
                    for (l, pc) in by_pc {
                        if l == a && previous != Some(a) {
                            starts.push(pc);
                        }
                        previous = Some(l);
                    }
                    starts
                }
                None => Vec::new(),
            };
            let what = if ours {
                format!("or after line {line}")
            } else {
                "this file: it is not the program being debugged".into()
            };
            let (b, problem) = self.new_breakpoint(&spec, pcs, what);
            out.push(self.bp_json(&b, problem, actual.or(Some(line))));
            ids.push(b.id);
            self.breakpoints.push(b);
        }
        self.source_bps.insert(key, ids);
        Ok(json!({"breakpoints": out}))
    }

    pub(super) fn replace_kind(&mut self, prefix: &str) {
        if let Some(old) = self.source_bps.remove(prefix) {
            self.breakpoints.retain(|b| !old.contains(&b.id));
        }
    }

    /// Replaces the breakpoints of one kind (`key`): each requested one resolved by `resolve`
    /// to its instruction offsets and, when there are none, why.
    pub(super) fn set_kind(&mut self, key: &str, args: &Value, resolve: &Resolver) -> Reply {
        self.replace_kind(key);
        let requested =
            args.get("breakpoints").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut out = Vec::new();
        let mut ids = Vec::new();
        for spec in requested {
            let (pcs, why) = resolve(self, &spec);
            let (b, problem) = self.new_breakpoint(&spec, pcs, why);
            let line = b.pcs.first().and_then(|pc| self.line_of(*pc));
            out.push(self.bp_json(&b, problem, line));
            ids.push(b.id);
            self.breakpoints.push(b);
        }
        self.source_bps.insert(key.into(), ids);
        Ok(json!({"breakpoints": out}))
    }

    pub(super) fn set_function_breakpoints(&mut self, args: &Value) -> Reply {
        self.set_kind("@functions", args, &|a, spec| {
            let name = spec.get("name").and_then(Value::as_str).unwrap_or("");
            let pcs = a.dbg.as_ref().map_or(Vec::new(), |dbg| {
                let kernel =
                    dbg.module.kernels.iter().find(|k| k.name == name).map(|k| k.code.start);
                let label = dbg.module.symbols.iter().find(|s| s.name == name).map(|s| s.offset);
                kernel.or(label).into_iter().collect()
            });
            (pcs, format!("`{name}`: no kernel or label has that name"))
        })
    }

    pub(super) fn set_instruction_breakpoints(&mut self, args: &Value) -> Reply {
        self.set_kind("@instructions", args, &|a, spec| {
            let reference = spec.get("instructionReference").and_then(Value::as_str).unwrap_or("");
            let offset = spec.get("offset").and_then(Value::as_i64).unwrap_or(0);
            let pc = parse_address(reference).map(|p| (i64::from(p) + offset) as u32);
            let pcs =
                pc.filter(|p| a.disassembly().iter().any(|(q, _, _)| q == p)).into_iter().collect();
            (pcs, format!("`{reference}`+{offset}: not the address of an instruction"))
        })
    }

    pub(super) fn breakpoint_locations(&mut self, args: &Value) -> Reply {
        let source = args.get("source").cloned().unwrap_or(json!({}));
        if !self.is_program_source(&source) {
            return Ok(json!({"breakpoints": []}));
        }
        let line = args.get("line").and_then(Value::as_u64).unwrap_or(0) as u32;
        let end = args.get("endLine").and_then(Value::as_u64).map_or(line, |e| e as u32);
        let mut lines: Vec<u32> = self
            .lines_with_code()
            .into_iter()
            .map(|(l, _)| l)
            .filter(|l| *l >= line && *l <= end)
            .collect();
        lines.dedup();
        Ok(json!({"breakpoints": lines.iter().map(|l| json!({"line": l})).collect::<Vec<_>>()}))
    }

    /// Checks the breakpoints at `pc` for `wave`, about to execute it. Log points print and
    /// do not stop; a stop returns the ids and a description naming the lanes that hit.
    pub(super) fn breakpoint_hit(&mut self, wave: u32, pc: u32) -> Option<(Vec<i64>, String)> {
        if !self.breakpoints.iter().any(|b| b.pcs.contains(&pc)) {
            return None;
        }
        let dbg = self.dbg.as_ref()?;
        let env = WaveEnv::new(dbg, wave);
        let w = env.width();
        let focus = self.focus_lane;
        let mut ids = Vec::new();
        let mut lanes = 0u64;
        let mut logs = Vec::new();
        let mut errors = Vec::new();
        let messages: Vec<Option<String>> = self
            .breakpoints
            .iter()
            .filter(|b| b.pcs.contains(&pc))
            .map(|b| b.log.as_ref().map(|m| self.substitute_in_braces(pc, m)))
            .collect();
        let mut messages = messages.into_iter();
        for b in self.breakpoints.iter_mut().filter(|b| b.pcs.contains(&pc)) {
            let message = messages.next().flatten();
            let mask = match lanes_hit(b, &env, focus, pc) {
                Ok(m) => m,
                Err(e) => {
                    errors.push(format!("breakpoint {}: condition failed: {e}", b.id));
                    ids.push(b.id);
                    continue;
                }
            };
            if mask == 0 {
                continue;
            }
            b.hits += 1;
            if !hit_count_ok(&b.hit_condition, b.hits) {
                continue;
            }
            if let Some(message) = &message {
                let lane = if mask >> focus & 1 == 1 { focus } else { mask.trailing_zeros() };
                logs.push(format!(
                    "[wave {wave}, {}] {}",
                    lanes_text(mask, w),
                    interpolate(message, &env, lane)
                ));
                continue;
            }
            ids.push(b.id);
            lanes |= mask;
        }
        for l in logs {
            self.output("console", l);
        }
        if ids.is_empty() {
            return None;
        }
        let line = self.line_of(pc).map_or(format!("0x{pc:x}"), |l| format!("line {l}"));
        let mut description =
            format!("breakpoint at {line}: wave {wave}, {} hit", lanes_text(lanes, w));
        for e in errors {
            description.push_str(&format!(" · {e}"));
        }
        if lanes != 0 && lanes >> focus & 1 == 0 {
            // Focus a lane that hit, so the variables show it.
            self.focus_lane = lanes.trailing_zeros();
        }
        Some((ids, description))
    }
}

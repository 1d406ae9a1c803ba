//! `scopes`, `variables`, `setVariable` and `setExpression`: registers, predicates, special
//! registers, source variables and Local Memory, per wave and per lane.

use super::*;

impl Adapter {
    pub(super) fn node(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len()
    }

    pub(super) fn scopes(&mut self, args: &Value) -> Reply {
        let wave = self.wave_of_frame(args)?;
        self.stopped()?;
        let local = self.kernel().map_or(0, |k| k.local_memory) as usize;
        let mut scopes = Vec::new();
        // A kernel compiled from a source language: its variables by their names first.
        if self.program.as_ref().is_some_and(|p| p.from_kernel_source) {
            let r = self.node(Node::Scope(wave, "variables"));
            scopes.push(json!({"name": "Variables", "variablesReference": r, "expensive": false, "presentationHint": "locals"}));
        }
        for (name, key, hint) in [
            ("Lanes", "lanes", ""),
            ("Registers", "registers", "registers"),
            ("Predicates", "predicates", "registers"),
            ("Special registers", "specials", "registers"),
            ("Divergence and calls", "divergence", ""),
        ] {
            let r = self.node(Node::Scope(wave, key));
            let mut s = json!({"name": name, "variablesReference": r, "expensive": false});
            if !hint.is_empty() {
                s["presentationHint"] = json!(hint);
            }
            scopes.push(s);
        }
        if local > 0 {
            let r = self.node(Node::Local(0, local));
            scopes
                .push(json!({"name": "Local memory", "variablesReference": r, "expensive": false}));
        }
        Ok(json!({"scopes": scopes}))
    }

    pub(super) fn dim(&self, text: String) -> String {
        if self.ansi { format!("\u{1b}[2m{text}\u{1b}[0m") } else { text }
    }

    pub(super) fn variables(&mut self, args: &Value) -> Reply {
        let r = args.get("variablesReference").and_then(Value::as_u64).unwrap_or(0) as usize;
        let hex = args.pointer("/format/hex").and_then(Value::as_bool).unwrap_or(false);
        self.stopped()?;
        let node = self.nodes.get(r.wrapping_sub(1)).cloned().ok_or_else(|| {
            format!("variables reference {r} is not valid (references last until the program runs again)")
        })?;
        let dbg = self.dbg()?;
        let w = dbg.session.wave_width();
        let focus = self.focus_lane.min(w - 1);
        let mut vars: Vec<Value> = Vec::new();
        let mut children: Vec<(usize, Node)> = Vec::new();
        let var = |name: String, value: String| json!({"name": name, "value": value, "variablesReference": 0});
        match &node {
            Node::Scope(wave, "lanes") => {
                let view = &dbg.session.waves()[*wave as usize];
                vars.push(var(
                    "focus lane".into(),
                    format!("{focus} (change it with `lane N` in the console)"),
                ));
                let mask: String =
                    (0..w).map(|l| if view.active >> l & 1 == 1 { '1' } else { '.' }).collect();
                vars.push(var(
                    "active".into(),
                    format!("{mask} ({}/{w}, lane 0 first)", view.active.count_ones()),
                ));
                for l in 0..w {
                    let state = match dbg.session.inactive_reason(*wave, l) {
                        None => "active".to_string(),
                        Some(why) => self.dim(format!("inactive: {}", self.client_lines(&why))),
                    };
                    vars.push(var(format!("lane {l}"), state));
                }
            }
            Node::Scope(wave, "registers") => {
                let view = &dbg.session.waves()[*wave as usize];
                let params = self.kernel().map(|k| k.params.clone()).unwrap_or_default();
                let regs = self.kernel().map_or(0, |k| k.registers);
                for reg in 0..regs {
                    let name = match params.get(usize::from(reg)) {
                        Some(p) => format!("r{reg} ({})", p.name),
                        None => format!("r{reg}"),
                    };
                    let focus_value = dbg.session.register(*wave, reg, focus).unwrap_or(0);
                    let shown: Vec<String> = (0..w.min(8))
                        .map(|l| {
                            let v = dbg.session.register(*wave, reg, l).unwrap_or(0);
                            let v = if hex { format!("0x{v:x}") } else { v.to_string() };
                            if view.active >> l & 1 == 1 { v } else { format!("({v})") }
                        })
                        .collect();
                    let value = format!(
                        "{} · lanes [{}{}]",
                        format_bits(focus_value, hex),
                        shown.join(", "),
                        if w > 8 { ", …" } else { "" }
                    );
                    children.push((vars.len(), Node::Register(*wave, reg)));
                    vars.push(json!({"name": name, "value": value, "variablesReference": 0, "indexedVariables": w, "evaluateName": format!("r{reg}")}));
                }
            }
            Node::Scope(wave, "variables") => {
                let view = &dbg.session.waves()[*wave as usize];
                let pc = view.pc.unwrap_or(u32::MAX);
                for v in self.source_vars(pc) {
                    let value_of = |l: u32| var_value(&dbg.session, *wave, &v, l, hex);
                    let shown: Vec<String> = (0..w.min(8))
                        .map(|l| {
                            let x = value_of(l);
                            if view.active >> l & 1 == 1 { x } else { format!("({x})") }
                        })
                        .collect();
                    let value = format!(
                        "{} · lanes [{}{}]",
                        value_of(focus),
                        shown.join(", "),
                        if w > 8 { ", …" } else { "" }
                    );
                    children.push((vars.len(), Node::SourceVar(*wave, v.register, v.ty)));
                    vars.push(json!({
                        "name": v.name,
                        "value": value,
                        "type": v.ty.name(),
                        "variablesReference": 0,
                        "indexedVariables": w,
                        "evaluateName": v.name,
                    }));
                }
            }
            Node::SourceVar(wave, reg, ty) => {
                let view = &dbg.session.waves()[*wave as usize];
                let v = wave_wbin::VarLocation {
                    name: String::new(),
                    ty: *ty,
                    register: *reg,
                    start: 0,
                    end: 0,
                };
                for l in 0..w {
                    let x = var_value(&dbg.session, *wave, &v, l, hex);
                    let x = if view.active >> l & 1 == 1 {
                        x
                    } else {
                        self.dim(format!("{x} (inactive)"))
                    };
                    vars.push(
                        json!({"name": format!("[{l}]"), "value": x, "variablesReference": 0}),
                    );
                }
            }
            Node::Register(wave, reg) => {
                let view = &dbg.session.waves()[*wave as usize];
                for l in 0..w {
                    let v = format_bits(dbg.session.register(*wave, *reg, l).unwrap_or(0), hex);
                    let v = if view.active >> l & 1 == 1 {
                        v
                    } else {
                        self.dim(format!("{v} · inactive"))
                    };
                    vars.push(json!({"name": format!("[{l}]"), "value": v, "variablesReference": 0, "evaluateName": format!("r{reg}[{l}]")}));
                }
            }
            Node::Scope(wave, "predicates") => {
                let preds = dbg.session.predicates(*wave).unwrap_or_default();
                for (p, mask) in preds.iter().enumerate() {
                    let bits: String =
                        (0..w).map(|l| if mask >> l & 1 == 1 { '1' } else { '0' }).collect();
                    let value = format!(
                        "{} in lane {focus} · {bits} (lane 0 first)",
                        mask >> focus & 1 == 1
                    );
                    children.push((vars.len(), Node::Predicate(*wave, p as u8)));
                    vars.push(json!({"name": format!("p{p}"), "value": value, "variablesReference": 0, "indexedVariables": w, "evaluateName": format!("p{p}")}));
                }
            }
            Node::Predicate(wave, p) => {
                let mask = dbg.session.predicates(*wave).unwrap_or_default()[usize::from(*p)];
                for l in 0..w {
                    vars.push(json!({"name": format!("[{l}]"), "value": (mask >> l & 1 == 1).to_string(), "variablesReference": 0, "evaluateName": format!("p{p}[{l}]")}));
                }
            }
            Node::Scope(wave, "specials") => {
                for (i, name) in SPECIALS.iter().enumerate() {
                    let v = special(dbg, *wave, focus, i);
                    let varies = (0..w).any(|l| special(dbg, *wave, l, i) != v);
                    if varies {
                        children.push((vars.len(), Node::Special(*wave, i)));
                    }
                    let value = if varies { format!("{v} in lane {focus}") } else { v.to_string() };
                    vars.push(json!({"name": name, "value": value, "variablesReference": 0, "indexedVariables": if varies { w } else { 0 }, "evaluateName": name}));
                }
            }
            Node::Special(wave, i) => {
                for l in 0..w {
                    vars.push(var(format!("[{l}]"), special(dbg, *wave, l, *i).to_string()));
                }
            }
            Node::Scope(wave, _) => {
                let view = &dbg.session.waves()[*wave as usize];
                if view.blocks.is_empty() {
                    vars.push(var(
                        "(none)".into(),
                        "the wave is in no block: every live lane runs".into(),
                    ));
                }
                for (depth, b) in view.blocks.iter().enumerate() {
                    let line = b
                        .line
                        .map_or(String::new(), |l| format!(" at line {}", self.client_line(l)));
                    vars.push(var(
                        format!("{depth}: {}{line}", b.kind),
                        format!("waiting there: {}", lanes_text(b.saved, w)),
                    ));
                }
                vars.push(var("steps".into(), format!("{} wave-instructions so far", dbg.pos())));
            }
            Node::Local(start, len) => {
                let local = dbg.session.local();
                if *len > 256 {
                    let mut at = *start;
                    while at < start + len {
                        let n = (start + len - at).min(256);
                        children.push((vars.len(), Node::Local(at, n)));
                        vars.push(json!({"name": format!("0x{at:04x}..0x{:04x}", at + n), "value": format!("{n} bytes"), "variablesReference": 0}));
                        at += n;
                    }
                } else {
                    for row in (*start..start + len).step_by(16) {
                        let words: Vec<String> = local
                            .get(row..(row + 16).min(start + len).min(local.len()))
                            .unwrap_or(&[])
                            .chunks(4)
                            .map(|c| {
                                let mut b = [0u8; 4];
                                b[..c.len()].copy_from_slice(c);
                                format!("{:08x}", u32::from_le_bytes(b))
                            })
                            .collect();
                        vars.push(var(format!("0x{row:04x}"), words.join(" ")));
                    }
                }
            }
            Node::Lanes(wave, e) => {
                let view = &dbg.session.waves()[*wave as usize];
                let env = WaveEnv::new(dbg, *wave);
                for l in 0..w {
                    let v = match expr::eval(e, &env, l) {
                        Ok(v) => v.to_string(),
                        Err(e) => format!("error: {e}"),
                    };
                    let v = if view.active >> l & 1 == 1 {
                        v
                    } else {
                        self.dim(format!("{v} · inactive"))
                    };
                    vars.push(var(format!("[{l}]"), v));
                }
            }
        }
        for (i, n) in children {
            let r = self.node(n);
            vars[i]["variablesReference"] = json!(r);
        }
        let start = args.get("start").and_then(Value::as_u64).unwrap_or(0) as usize;
        let count = args.get("count").and_then(Value::as_u64).filter(|c| *c > 0).unwrap_or(u64::MAX)
            as usize;
        let vars: Vec<Value> = vars.into_iter().skip(start).take(count).collect();
        Ok(json!({"variables": vars}))
    }

    pub(super) fn set_register(
        &mut self,
        wave: u32,
        reg: u16,
        lane: u32,
        text: &str,
    ) -> Result<String, String> {
        let bits =
            parse_bits(text).ok_or_else(|| format!("`{text}` is not an integer or a float"))?;
        let dbg = self.dbg_mut()?;
        if !dbg.session.set_register(wave, reg, lane, bits) {
            return Err(format!("there is no r{reg} in lane {lane} of this kernel"));
        }
        dbg.modified();
        Ok(format_bits(bits, false))
    }

    pub(super) fn set_predicate(
        &mut self,
        wave: u32,
        p: u8,
        lane: u32,
        text: &str,
    ) -> Result<String, String> {
        let value = match text.trim() {
            "true" | "1" => true,
            "false" | "0" => false,
            other => return Err(format!("`{other}` is not true or false")),
        };
        let dbg = self.dbg_mut()?;
        if !dbg.session.set_predicate(wave, p, lane, value) {
            return Err(format!("there is no p{p} in lane {lane}"));
        }
        dbg.modified();
        Ok(value.to_string())
    }

    pub(super) fn lane_from_name(name: &str) -> Option<u32> {
        name.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
    }

    pub(super) fn set_variable(&mut self, args: &Value) -> Reply {
        self.stopped()?;
        let r = args.get("variablesReference").and_then(Value::as_u64).unwrap_or(0) as usize;
        let name = args.get("name").and_then(Value::as_str).unwrap_or("");
        let value =
            args.get("value").and_then(Value::as_str).ok_or("`value` is missing")?.to_owned();
        let node = self
            .nodes
            .get(r.wrapping_sub(1))
            .cloned()
            .ok_or("the variable is gone: the program ran since")?;
        let focus = self.focus_lane;
        let shown = match node {
            Node::Register(wave, reg) => {
                let lane =
                    Self::lane_from_name(name).ok_or_else(|| format!("`{name}` is not a lane"))?;
                self.set_register(wave, reg, lane, &value)?
            }
            Node::Predicate(wave, p) => {
                let lane =
                    Self::lane_from_name(name).ok_or_else(|| format!("`{name}` is not a lane"))?;
                self.set_predicate(wave, p, lane, &value)?
            }
            Node::Scope(wave, "registers") => {
                let reg = name
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.strip_prefix('r'))
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| format!("`{name}` is not a register"))?;
                self.set_register(wave, reg, focus, &value)?
            }
            Node::Scope(wave, "predicates") => {
                let p = name
                    .strip_prefix('p')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| format!("`{name}` is not a predicate"))?;
                self.set_predicate(wave, p, focus, &value)?
            }
            _ => {
                return Err(format!(
                    "`{name}` cannot be set: registers, predicates and their lanes can"
                ));
            }
        };
        Ok(json!({"value": shown}))
    }

    pub(super) fn set_expression(&mut self, args: &Value) -> Reply {
        let wave = self.wave_of_frame(args)?;
        let dbg = self.stopped()?;
        let text =
            args.get("expression").and_then(Value::as_str).ok_or("`expression` is missing")?;
        let value =
            args.get("value").and_then(Value::as_str).ok_or("`value` is missing")?.to_owned();
        let e = expr::parse(text)?;
        let env = WaveEnv::new(dbg, wave);
        let lane_of = |i: &Option<Box<Expr>>| -> Result<u32, String> {
            match i {
                Some(i) => match expr::eval(i, &env, self.focus_lane)? {
                    expr::Value::Int(l) if l >= 0 && l < i64::from(env.width()) => Ok(l as u32),
                    other => Err(format!("lane {other} is outside the wave")),
                },
                None => Ok(self.focus_lane),
            }
        };
        let shown = match &e {
            Expr::Reg(r, _, i) => {
                let lane = lane_of(i)?;
                self.set_register(wave, *r, lane, &value)?
            }
            Expr::Pred(p, i) => {
                let lane = lane_of(i)?;
                self.set_predicate(wave, *p, lane, &value)?
            }
            Expr::Mem(local, _, addr) => {
                let a = match expr::eval(addr, &env, self.focus_lane)? {
                    expr::Value::Int(a) if a >= 0 => a as usize,
                    other => return Err(format!("`{other}` is not a byte address")),
                };
                let bits = parse_bits(&value)
                    .ok_or_else(|| format!("`{value}` is not an integer or a float"))?;
                let space = if *local { "local" } else { "device" };
                let mem = self.memory_mut(space)?;
                let Some(word) = mem.get_mut(a..a.saturating_add(4)) else {
                    return Err(format!("{space}[{a}] is outside {space} memory"));
                };
                word.copy_from_slice(&bits.to_le_bytes());
                self.dbg_mut()?.modified();
                format_bits(bits, false)
            }
            _ => {
                return Err(
                    "only registers, predicates and memory words can be set: r3, r3[5], p1[2], device[256]"
                        .into(),
                );
            }
        };
        Ok(json!({"value": shown}))
    }
}

//! `evaluate`: lane expressions in the console, in watches and on hover.

use super::*;

impl Adapter {
    pub(super) fn evaluate(&mut self, args: &Value) -> Reply {
        let text = args
            .get("expression")
            .and_then(Value::as_str)
            .ok_or("`expression` is missing")?
            .trim()
            .to_owned();
        let context = args.get("context").and_then(Value::as_str).unwrap_or("repl");
        // Console commands.
        let mut words = text.split_whitespace();
        let head = words.next().unwrap_or("");
        if context == "repl" {
            match head {
                "help" => {
                    return Ok(
                        json!({"result": "lane N: change the focus lane · wg X,Y,Z: go to a workgroup · an expression in lanes: r3, r3.f, r3[5], p0, sr_lane_id, lane == 5 && r3 > 10, ballot(p0)", "variablesReference": 0}),
                    );
                }
                // `lane 5` (one number after the word) is the command; `lane == 5` an expression.
                "lane" | "focus"
                    if words.clone().count() == 1
                        && words.clone().all(|w| w.chars().all(|c| c.is_ascii_digit())) =>
                {
                    let w = self.dbg()?.session.wave_width();
                    let n: u32 = words
                        .next()
                        .and_then(|n| n.parse().ok())
                        .ok_or("`lane N`: N is a lane number")?;
                    if n >= w {
                        return Err(format!("there is no lane {n}: W = {w}"));
                    }
                    self.focus_lane = n;
                    self.nodes.clear();
                    self.event("invalidated", json!({"areas": ["variables"]}));
                    return Ok(
                        json!({"result": format!("focus lane: {n}"), "variablesReference": 0}),
                    );
                }
                "wg" | "workgroup" if words.clone().next().is_some() => {
                    let rest: String = words.collect::<Vec<_>>().join("");
                    let mut id = [0u32; 3];
                    for (i, p) in rest.split(',').enumerate().take(3) {
                        id[i] = p
                            .trim()
                            .parse()
                            .map_err(|_| format!("`{rest}` is not a workgroup id X,Y,Z"))?;
                    }
                    let dbg = self.stopped()?;
                    if (0..3).any(|i| id[i] >= dbg.dispatch.grid[i]) {
                        return Err(format!(
                            "the grid is {:?}: there is no workgroup {id:?}",
                            dbg.dispatch.grid
                        ));
                    }
                    let earlier =
                        dbg.workgroup_starts.iter().find(|(w, _)| *w == id).map(|(_, p)| *p);
                    match earlier {
                        Some(p) => {
                            self.dbg_mut()?.goto(p);
                            self.stop(
                                "goto",
                                0,
                                format!("workgroup {id:?}, at its start"),
                                Vec::new(),
                            );
                            return Ok(
                                json!({"result": format!("back at the start of workgroup {id:?}"), "variablesReference": 0}),
                            );
                        }
                        None => {
                            self.resume(Resume::Workgroup(id));
                            return Ok(
                                json!({"result": format!("running to workgroup {id:?}"), "variablesReference": 0}),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        let wave = self.wave_of_frame(args)?;
        // Source variables by name (a kernel compiled from a source language).
        let text = self.substitute_vars(wave, &text);
        let dbg = self.stopped()?;
        let e = expr::parse(&text)?;
        let env = WaveEnv::new(dbg, wave);
        let w = env.width();
        let focus = self.focus_lane.min(w - 1);
        let value = expr::eval(&e, &env, focus)?;
        let per_lane: Vec<Result<expr::Value, String>> =
            (0..w).map(|l| expr::eval(&e, &env, l)).collect();
        let uniform = per_lane.iter().all(|v| v.as_ref().ok() == Some(&value));
        let mut result = match (&e, value) {
            (Expr::Vote("ballot", _), expr::Value::Int(m)) => {
                let bits: String =
                    (0..w).map(|l| if m >> l & 1 == 1 { '1' } else { '.' }).collect();
                format!("0x{m:x} · {bits} · {}", lanes_text(m as u64, w))
            }
            _ => value.to_string(),
        };
        let mut reference = 0;
        if !uniform {
            let shown: Vec<String> = per_lane
                .iter()
                .take(8)
                .map(|v| v.as_ref().map_or("?".into(), |v| v.to_string()))
                .collect();
            result = format!(
                "{result} (lane {focus}) · lanes [{}{}]",
                shown.join(", "),
                if w > 8 { ", …" } else { "" }
            );
            reference = self.node(Node::Lanes(wave, e));
        }
        Ok(
            json!({"result": result, "variablesReference": reference, "indexedVariables": if reference > 0 { w } else { 0 }}),
        )
    }
}

//! The answer to `wave.run` and the "Debug" lens's launch configuration: the JSON shapes the
//! editor extensions read, written from the plain data that `wave_ide` returns.

use serde_json::{Value, json};

/// A run's result as the `wave.run` command answers it.
pub(crate) fn run_json(r: &wave_ide::RunResult) -> Value {
    let trap = r.trap.as_ref().map(|t| json!({ "message": t.message, "line": t.line }));
    let stats: serde_json::Map<String, Value> = r
        .stats
        .iter()
        .map(|(k, v)| {
            // Counters are numbers; a value that does not parse stays text.
            let value = serde_json::from_str::<Value>(v)
                .ok()
                .filter(Value::is_number)
                .unwrap_or_else(|| Value::from(v.clone()));
            (k.clone(), value)
        })
        .collect();
    let dumps: Vec<Value> = r
        .dumps
        .iter()
        .map(|(offset, elem, values)| json!({ "offset": offset, "type": elem, "values": values }))
        .collect();
    let comparison: Vec<Value> = r
        .comparison
        .iter()
        .map(|a| {
            let first: Vec<Value> = a
                .differences
                .iter()
                .map(|(i, e, g)| json!({ "index": i, "emulator": e, "gpu": g }))
                .collect();
            json!({
                "offset": a.offset,
                "type": a.elem,
                "count": a.count,
                "agree": a.differing == 0,
                "differing": a.differing,
                "first": first,
            })
        })
        .collect();
    let profile: Vec<Value> = r
        .profile
        .iter()
        .map(|(line, text, n, u)| {
            json!({ "line": line, "text": text, "executions": n, "utilisation": round4(*u) })
        })
        .collect();
    let timeline: Vec<Value> = r
        .timeline
        .iter()
        .map(|(w, step, text, a)| {
            json!({ "wave": w, "start": step, "end": step + 1, "text": text, "active": round4(*a) })
        })
        .collect();
    json!({
        "kernel": r.kernel,
        "from": r.from,
        "device": if r.device.is_empty() { "emulator" } else { &r.device },
        "ok": r.ok,
        "cancelled": r.cancelled,
        "trap": trap,
        "steps": r.steps,
        "stats": stats,
        "dumps": dumps,
        "mismatches": r.mismatches,
        "warnings": r.warnings,
        "comparison": comparison,
        "profile": profile,
        "timeline": timeline,
    })
}

/// Four decimals, as the panels show shares.
fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The launch configuration of a "Debug" lens, in the adapter's schema.
pub(crate) fn launch_json(l: &wave_ide::DebugLaunch) -> Value {
    wave_dap::launch::Launch {
        name: format!("Debug {}", l.kernel),
        program: l.program.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
        kernel: l.kernel.clone(),
        grid: l.grid,
        workgroup: l.workgroup,
        wave_width: l.wave_width,
        args: l.args.clone(),
        stop_on_entry: true,
    }
    .to_json()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comparison_answers_with_each_buffer_and_its_first_differences() {
        let r = wave_ide::RunResult {
            kernel: "k".into(),
            device: "compare".into(),
            stats: vec![
                ("instructions".into(), "12".into()),
                ("utilisation".into(), "0.2500".into()),
            ],
            profile: vec![(Some(5), "iadd r1, r1, r2".into(), 2, 0.123_456)],
            comparison: vec![wave_ide::Agreement {
                offset: 8,
                elem: "u32",
                count: 6,
                differences: vec![(1, "10".into(), "11".into())],
                differing: 5,
            }],
            ..Default::default()
        };
        assert_eq!(
            run_json(&r),
            json!({
                "kernel": "k", "from": "", "device": "compare", "ok": false, "cancelled": false,
                "trap": null, "steps": 0,
                "stats": { "instructions": 12, "utilisation": 0.25 },
                "dumps": [], "mismatches": [], "warnings": [],
                "comparison": [{ "offset": 8, "type": "u32", "count": 6, "agree": false,
                    "differing": 5, "first": [{ "index": 1, "emulator": "10", "gpu": "11" }] }],
                "profile": [{ "line": 5, "text": "iadd r1, r1, r2", "executions": 2,
                    "utilisation": 0.1235 }],
                "timeline": [],
            })
        );
    }

    #[test]
    fn the_debug_lens_launch_is_one_the_adapter_loads() {
        let dir = std::env::temp_dir().join(format!("wave-lsp-launch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("add.wave");
        std::fs::write(
            &path,
            ".kernel add\n.param out: ptr\n.param n: u32\n    mov_special r2, sr_thread_id_x\n    halt\n.end\n",
        )
        .expect("source");
        let launch = wave_ide::DebugLaunch {
            program: Some(path.clone()),
            kernel: "add".into(),
            grid: [2, 1, 1],
            workgroup: Some([4, 1, 1]),
            wave_width: 32,
            args: vec![("out".into(), 0), ("n".into(), 7)],
        };
        let json = launch_json(&launch);
        assert_eq!(json["program"], path.display().to_string());
        assert_eq!(json["args"]["n"], 7);
        let program = wave_dap::launch::load(&json).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert!(program.warnings.is_empty(), "{:?}", program.warnings);
        assert!(program.stop_on_entry);
        assert_eq!(program.dispatch.grid, [2, 1, 1]);
        assert_eq!(program.dispatch.workgroup, Some([4, 1, 1]));
        let mut args = program.dispatch.args.clone();
        args.sort();
        assert_eq!(args, [("n".to_owned(), 7), ("out".to_owned(), 0)]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

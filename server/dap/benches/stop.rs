//! How fast the debugger answers a step and a breakpoint stop on a workgroup of 64 waves
//! (1,024 threads at W = 16), in process.
//!
//! Each sample is a request (`next` of one wave, or `continue` to a breakpoint in the loop
//! body that the next wave reaches) until its `stopped` event, followed by what a client asks
//! on every stop: `threads`, `stackTrace`, `scopes` and the `Registers` variables. The baseline,
//! measured in the same run, is the emulator's step API executing the same instructions
//! without the adapter. Target: under 20 ms per stop with its follow-up requests.
//! Run: `cargo bench -p wave-dap --bench stop`. Figures are in docs/performance.md.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wave_dap::Adapter;

const KERNEL: &str = ".kernel wide
.param out: ptr
.workgroup_size 1024
    mov r1, sr_thread_id_x
    and r4, r1, 7
    iadd r4, r4, 1
    mov_imm r2, 0
    loop
        iadd r2, r2, r4
        icmp.gt p0, r2, 200
        break p0
    endloop
    shift.shl r3, r1, 2
    iadd r3, out, r3
    device_store.u32 [r3], r2
.end
";

struct Client {
    adapter: Adapter,
    seq: i64,
}

impl Client {
    fn request(&mut self, command: &str, arguments: Value) -> (Value, Option<Value>) {
        self.seq += 1;
        self.adapter.handle(&json!({"seq": self.seq, "type": "request", "command": command, "arguments": arguments}));
        while self.adapter.running() {
            self.adapter.run_slice();
        }
        let mut response = Value::Null;
        let mut stopped = None;
        for m in self.adapter.take_output() {
            if m["type"] == "response" {
                response = m["body"].clone();
            } else if m["event"] == "stopped" {
                stopped = Some(m["body"].clone());
            }
        }
        (response, stopped)
    }

    /// What a client asks after each stop.
    fn follow_up(&mut self, thread: i64) {
        let (threads, _) = self.request("threads", json!({}));
        assert_eq!(threads["threads"].as_array().map(Vec::len), Some(64));
        let (st, _) = self.request("stackTrace", json!({"threadId": thread}));
        let frame = st["stackFrames"][0]["id"].clone();
        let (scopes, _) = self.request("scopes", json!({"frameId": frame}));
        let regs = scopes["scopes"][1]["variablesReference"].clone();
        let (vars, _) = self.request("variables", json!({"variablesReference": regs}));
        assert!(vars["variables"].as_array().is_some_and(|v| !v.is_empty()));
    }
}

fn stats(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95), *v.last().unwrap_or(&Duration::ZERO))
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let dir = std::env::temp_dir().join(format!("wave-dap-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("wide.wave");
    std::fs::write(&path, KERNEL).expect("write");
    let program = path.display().to_string();
    let mut c = Client { adapter: Adapter::new(), seq: 0 };
    c.request("initialize", json!({}));
    c.request("launch", json!({"program": program, "waveWidth": 16, "args": {"out": 0}, "stopOnEntry": true, "deviceMemory": 65536}));
    let (_, stop) = c.request("configurationDone", json!({}));
    assert_eq!(stop.expect("entry")["reason"], "entry");

    // Steps: `next` of wave 0 by line, 200 times (through the loop).
    let mut step = Vec::new();
    let mut step_alone = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        let (_, stopped) = c.request("next", json!({"threadId": 1}));
        step_alone.push(t.elapsed());
        assert!(stopped.is_some());
        c.follow_up(1);
        step.push(t.elapsed());
    }
    // Breakpoint stops: the loop body, reached by one wave after another.
    c.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 9}]}));
    let mut stop = Vec::new();
    let mut stop_alone = Vec::new();
    let mut executed = 0u64;
    for _ in 0..200 {
        let t = Instant::now();
        let (_, stopped) = c.request("continue", json!({"threadId": 1}));
        stop_alone.push(t.elapsed());
        let stopped = stopped.expect("a stop");
        assert_eq!(stopped["reason"], "breakpoint");
        c.follow_up(stopped["threadId"].as_i64().unwrap_or(1));
        stop.push(t.elapsed());
        executed += 1;
    }
    // A far breakpoint: its lane condition is evaluated at every visit of every wave.
    let mut far = Vec::new();
    let mut far_steps = 0u64;
    for _ in 0..20 {
        let mut f = Client { adapter: Adapter::new(), seq: 0 };
        f.request("initialize", json!({}));
        f.request("launch", json!({"program": program, "waveWidth": 16, "args": {"out": 0}, "stopOnEntry": true, "deviceMemory": 65536}));
        f.request("configurationDone", json!({}));
        f.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 10, "condition": "wave == 63 && r2 > 190"}]}));
        let t = Instant::now();
        let (_, stopped) = f.request("continue", json!({"threadId": 1}));
        far.push(t.elapsed());
        let thread = stopped.expect("a stop")["threadId"].as_i64().unwrap_or(1);
        assert_eq!(thread, 64);
        let (st, _) = f.request("stackTrace", json!({"threadId": thread}));
        let (scopes, _) = f.request("scopes", json!({"frameId": st["stackFrames"][0]["id"]}));
        let (vars, _) = f.request(
            "variables",
            json!({"variablesReference": scopes["scopes"][4]["variablesReference"]}),
        );
        let text = vars["variables"]
            .as_array()
            .and_then(|v| v.last())
            .map(|v| v["value"].to_string())
            .unwrap_or_default();
        far_steps =
            text.trim_matches('"').split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    }
    // Baseline: the emulator's step API alone, over the same kernel.
    let module = wave_asm::assemble(KERNEL, "wide.wave").module;
    let dispatch = wave_emulator::Dispatch {
        wave_width: 16,
        args: vec![("out".into(), 0)],
        ..wave_emulator::Dispatch::default()
    };
    let t = Instant::now();
    let mut session =
        wave_emulator::Session::new(&module, &dispatch, vec![0; 65536]).expect("session");
    let _ = session.run_until(&[], far_steps);
    let baseline = t.elapsed();

    println!("workgroup: 1,024 threads, 64 waves at W = 16");
    let (far50, far95, farmax) = stats(far);
    println!(
        "far breakpoint (`wave == 63 && r2 > 190`, checked in every lane at every visit): {far_steps} wave-instructions; p50 {}, p95 {}, max {}",
        ms(far50),
        ms(far95),
        ms(farmax)
    );
    println!(
        "baseline: the emulator's step API runs the same {far_steps} wave-instructions in {} ({:.2}x of it is the debugger)",
        ms(baseline),
        far50.as_secs_f64() / baseline.as_secs_f64().max(1e-9)
    );
    println!("{:<44} {:>10} {:>10} {:>10} {:>8}", "", "p50", "p95", "max", "target");
    let mut all = true;
    for (name, samples, target) in [
        ("next (line) to stopped", step_alone, None),
        ("next + threads, stackTrace, scopes, variables", step, Some(20)),
        ("continue to a breakpoint, to stopped", stop_alone, None),
        ("breakpoint stop + the same follow-up", stop, Some(20)),
    ] {
        let (p50, p95, max) = stats(samples);
        let verdict = match target {
            Some(t) if p95 < Duration::from_millis(t) => "met",
            Some(_) => {
                all = false;
                "MISSED"
            }
            None => "",
        };
        println!("{name:<44} {:>10} {:>10} {:>10} {:>8}", ms(p50), ms(p95), ms(max), verdict);
    }
    println!("({executed} breakpoint stops; each stop is the next wave reaching the loop body)");
    println!("verdict: {}", if all { "every target met" } else { "a target was missed" });
    let _ = std::fs::remove_dir_all(&dir);
}

//! The adapter through the protocol, in process: requests as a client sends them, execution
//! run to its next stop between requests.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use wave_dap::Adapter;

/// A divergent loop: lane l adds l + 1 until the sum passes 10, then stores it.
const LOOP: &str = "; divergent loop
.kernel divergent
.param out: ptr
.workgroup_size 32
    mov r1, sr_lane_id
    iadd r4, r1, 1
    mov_imm r2, 0
    loop
        iadd r2, r2, r4
        icmp.gt p0, r2, 10
        break p0
    endloop
    shift.shl r3, r1, 2
    iadd r3, out, r3
    device_store.u32 [r3], r2
.end
";

/// Line numbers (1-based) of LOOP.
const LINE_ADD: u32 = 9;
const LINE_CMP: u32 = 10;
const LINE_STORE: u32 = 15;

struct Dap {
    adapter: Adapter,
    seq: i64,
    events: Vec<Value>,
}

impl Dap {
    fn new() -> Dap {
        Dap { adapter: Adapter::new(), seq: 1, events: Vec::new() }
    }

    /// Sends a request, runs any resumed execution to its stop, returns the response.
    fn request(&mut self, command: &str, arguments: Value) -> Value {
        let seq = self.seq;
        self.seq += 1;
        self.adapter.handle(
            &json!({"seq": seq, "type": "request", "command": command, "arguments": arguments}),
        );
        let mut guard = 0;
        while self.adapter.running() {
            self.adapter.run_slice();
            guard += 1;
            assert!(guard < 10_000, "the execution never stops");
        }
        let mut response = Value::Null;
        for m in self.adapter.take_output() {
            match m["type"].as_str() {
                Some("response") if m["request_seq"] == seq => response = m,
                Some("event") => self.events.push(m),
                _ => panic!("unexpected message {m}"),
            }
        }
        assert!(!response.is_null(), "no response to {command}");
        response
    }

    fn ok(&mut self, command: &str, arguments: Value) -> Value {
        let r = self.request(command, arguments);
        assert_eq!(r["success"], true, "{command} failed: {r}");
        r["body"].clone()
    }

    fn err(&mut self, command: &str, arguments: Value) -> String {
        let r = self.request(command, arguments);
        assert_eq!(r["success"], false, "{command} should fail: {r}");
        r["message"].as_str().expect("a message").to_owned()
    }

    /// The last `stopped` event, removed with everything before it.
    fn stopped(&mut self) -> Value {
        let i = self.events.iter().rposition(|e| e["event"] == "stopped").expect("a stopped event");
        let e = self.events[i]["body"].clone();
        self.events.drain(..=i);
        e
    }

    fn event(&self, name: &str) -> Option<&Value> {
        self.events.iter().find(|e| e["event"] == name).map(|e| &e["body"])
    }

    /// initialize, launch, configurationDone with breakpoints set in between.
    fn launch(&mut self, config: Value, breakpoints: &[Value]) -> Value {
        let caps = self.ok(
            "initialize",
            json!({"adapterID": "wave", "linesStartAt1": true, "columnsStartAt1": true}),
        );
        assert!(self.event("initialized").is_some());
        self.ok("launch", config.clone());
        if !breakpoints.is_empty() {
            let path = config["program"].as_str().expect("program").to_owned();
            self.ok(
                "setBreakpoints",
                json!({"source": {"path": path}, "breakpoints": breakpoints}),
            );
        }
        self.ok("configurationDone", json!({}));
        caps
    }

    fn frame(&mut self, thread: u32) -> Value {
        let st = self.ok("stackTrace", json!({"threadId": thread}));
        st["stackFrames"][0].clone()
    }

    /// The lanes of register `r` of the top frame of `thread`, as text.
    fn lanes(&mut self, thread: u32, r: &str) -> Vec<String> {
        let frame = self.frame(thread)["id"].clone();
        let scopes = self.ok("scopes", json!({"frameId": frame}));
        let regs = scopes["scopes"]
            .as_array()
            .expect("scopes")
            .iter()
            .find(|s| s["name"] == "Registers")
            .expect("Registers")["variablesReference"]
            .clone();
        let vars = self.ok("variables", json!({"variablesReference": regs}));
        let row = vars["variables"]
            .as_array()
            .expect("rows")
            .iter()
            .find(|v| v["name"].as_str().is_some_and(|n| n.split(' ').next() == Some(r)))
            .expect("the register")
            .clone();
        let lanes = self.ok(
            "variables",
            json!({"variablesReference": row["variablesReference"], "format": {"hex": false}}),
        );
        lanes["variables"]
            .as_array()
            .expect("lanes")
            .iter()
            .map(|v| v["value"].as_str().unwrap_or("").split(' ').next().unwrap_or("").to_owned())
            .collect()
    }
}

/// Little-endian u32 words of base64 data.
fn words(data: &str) -> Vec<u32> {
    let table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut bytes = Vec::new();
    for c in data.chars().filter(|c| *c != '=') {
        bits = bits << 6 | table.find(c).expect("base64") as u32;
        n += 6;
        if n >= 8 {
            n -= 8;
            bytes.push((bits >> n) as u8);
        }
    }
    bytes
        .chunks(4)
        .filter(|c| c.len() == 4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn program(name: &str, text: &str) -> PathBuf {
    file_in(name, &format!("{name}.wave"), text)
}

/// `text` as file `file` of a temporary folder of its own (`tag`).
fn file_in(tag: &str, file: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wave-dap-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(file);
    std::fs::write(&path, text).expect("write");
    path
}

fn config(path: &std::path::Path) -> Value {
    json!({"type": "wave", "request": "launch", "program": path.display().to_string(), "args": {"out": 256}, "stopOnEntry": false})
}

#[test]
fn a_conditional_breakpoint_stops_in_the_lane_it_names() {
    let path = program("cond", LOOP);
    let mut d = Dap::new();
    let caps =
        d.launch(config(&path), &[json!({"line": LINE_CMP, "condition": "lane == 5 && r2 > 10"})]);
    assert_eq!(caps["supportsStepBack"], true);
    assert_eq!(caps["breakpointModes"][1]["mode"], "focus");
    let stop = d.stopped();
    assert_eq!(stop["reason"], "breakpoint");
    assert_eq!(stop["allThreadsStopped"], true);
    assert_eq!(stop["description"], "breakpoint at line 10: wave 0, lane 5 hit", "{stop}");
    // Lane 5 adds 6: 6, then 12 > 10 at the second visit.
    let r2 = d.lanes(1, "r2");
    assert_eq!(r2[5], "12");
    assert_eq!(r2[0], "2", "lane 0 has added 1 twice");
    let frame = d.frame(1);
    assert_eq!(frame["line"], LINE_CMP);
    assert!(frame["source"]["path"].as_str().expect("path").ends_with("cond.wave"));
    // The focus moved to the lane that hit; the console sees it.
    let e =
        d.ok("evaluate", json!({"expression": "r2", "context": "repl", "frameId": frame["id"]}));
    assert!(
        e["result"].as_str().expect("result").starts_with("12 (lane 5) · lanes [2, 4, 6, 8"),
        "{e}"
    );
    let e = d.ok("evaluate", json!({"expression": "ballot(r2 > 10)", "context": "repl"}));
    assert!(e["result"].as_str().expect("result").contains("lanes 5, 6, 7, 8, 9"), "{e}");
    let threads = d.ok("threads", json!({}));
    assert_eq!(threads["threads"][0]["name"], "wg (0,0,0) · wave 0");
}

#[test]
fn stepping_forward_and_back_restores_every_register() {
    let path = program("steps", LOOP);
    let mut d = Dap::new();
    let mut c = config(&path);
    c["stopOnEntry"] = json!(true);
    d.launch(c, &[]);
    assert_eq!(d.stopped()["reason"], "entry");
    for _ in 0..4 {
        d.ok("next", json!({"threadId": 1}));
        d.stopped();
    }
    assert_eq!(d.frame(1)["line"], LINE_ADD, "mov, iadd, mov_imm, loop");
    d.ok("next", json!({"threadId": 1}));
    d.stopped();
    let after = d.lanes(1, "r2");
    assert_eq!(after[3], "4", "lane 3 added 4");
    d.ok("stepBack", json!({"threadId": 1}));
    assert_eq!(d.stopped()["reason"], "step");
    assert_eq!(d.frame(1)["line"], LINE_ADD);
    assert_eq!(d.lanes(1, "r2")[3], "0", "before the add");
    // Instruction granularity, then forward again gives the same values.
    d.ok("next", json!({"threadId": 1, "granularity": "instruction"}));
    d.stopped();
    assert_eq!(d.lanes(1, "r2"), after);
    // Reverse-continue to a breakpoint hit earlier.
    d.ok("setBreakpoints", json!({"source": {"path": path.display().to_string()}, "breakpoints": [{"line": LINE_ADD}]}));
    d.ok("continue", json!({"threadId": 1}));
    d.stopped();
    d.ok("continue", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.lanes(1, "r2")[0], "2", "the third visit: lane 0 has added 1 twice");
    d.ok("reverseContinue", json!({"threadId": 1}));
    let back = d.stopped();
    assert_eq!(back["reason"], "breakpoint");
    assert_eq!(d.lanes(1, "r2")[0], "1", "the second visit");
}

#[test]
fn variables_show_lanes_state_and_can_be_set() {
    let path = program("vars", LOOP);
    let mut d = Dap::new();
    d.launch(config(&path), &[json!({"line": LINE_STORE})]);
    d.stopped();
    let frame = d.frame(1)["id"].clone();
    let scopes = d.ok("scopes", json!({"frameId": frame}));
    let names: Vec<&str> = scopes["scopes"]
        .as_array()
        .expect("scopes")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["Lanes", "Registers", "Predicates", "Special registers", "Divergence and calls"]
    );
    let lanes_ref = scopes["scopes"][0]["variablesReference"].clone();
    let lanes = d.ok("variables", json!({"variablesReference": lanes_ref}));
    let rows = lanes["variables"].as_array().expect("rows");
    assert!(
        rows[1]["value"]
            .as_str()
            .expect("active")
            .starts_with("11111111111111111111111111111111 (32/32"),
        "{rows:?}"
    );
    // setVariable on a lane, then the store writes it.
    let regs_ref = scopes["scopes"][1]["variablesReference"].clone();
    let regs = d.ok("variables", json!({"variablesReference": regs_ref}));
    let r2 = regs["variables"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|v| v["name"] == "r2")
        .expect("r2")
        .clone();
    assert_eq!(r2["indexedVariables"], 32);
    let set = d.ok(
        "setVariable",
        json!({"variablesReference": r2["variablesReference"], "name": "[7]", "value": "0x77"}),
    );
    assert!(set["value"].as_str().expect("value").starts_with("119 (0x77"));
    d.ok("setExpression", json!({"expression": "r2[8]", "value": "-1", "frameId": frame}));
    d.ok("setExpression", json!({"expression": "device[1024]", "value": "99", "frameId": frame}));
    let e = d.ok(
        "evaluate",
        json!({"expression": "device[1024] + 1", "context": "watch", "frameId": frame}),
    );
    assert_eq!(e["result"], "100");
    // Raw bytes in and out as base64 (padding included), and data that is not base64.
    let w = d.ok(
        "writeMemory",
        json!({"memoryReference": "device", "offset": 2048, "data": "AQID BAU="}),
    );
    assert_eq!(w["bytesWritten"], 5);
    let m = d.ok("readMemory", json!({"memoryReference": "device", "offset": 2048, "count": 5}));
    assert_eq!(m["data"], "AQIDBAU=");
    let e = d.err("writeMemory", json!({"memoryReference": "device", "data": "A*=="}));
    assert!(e.contains("not base64"), "{e}");
    d.ok("continue", json!({"threadId": 1}));
    assert!(d.event("terminated").is_some(), "the dispatch finished");
    // Memory after the run: lanes 7 and 8 as set, lane 0 as computed (11).
    let m = d.ok("readMemory", json!({"memoryReference": "device", "offset": 256, "count": 36}));
    let stored = words(m["data"].as_str().expect("data"));
    assert_eq!(stored[..2], [11, 12]);
    assert_eq!(stored[7..9], [0x77, 0xffff_ffff], "lanes 7 and 8 as set");
    let m = d.ok("readMemory", json!({"memoryReference": "device", "offset": 1024, "count": 4}));
    assert_eq!(words(m["data"].as_str().expect("data")), [99]);
}

#[test]
fn traps_stop_at_the_faulting_instruction_and_lane() {
    let text = ".kernel oob\n.param out: ptr\n.workgroup_size 8\n    mov r1, sr_lane_id\n    icmp.eq p0, r1, 6\n    mov_imm r2, 0x7ffffff0\n    @p0 device_store.u32 [r2], r1\n.end\n";
    let path = program("trap", text);
    let mut d = Dap::new();
    d.launch(config(&path), &[]);
    let stop = d.stopped();
    assert_eq!(stop["reason"], "exception");
    assert!(
        stop["description"].as_str().expect("d").contains("device memory out of bounds"),
        "{stop}"
    );
    let info = d.ok("exceptionInfo", json!({"threadId": 1}));
    assert!(info["details"]["stackTrace"].as_str().expect("where").contains("line 7"), "{info}");
    assert!(info["details"]["stackTrace"].as_str().expect("where").contains("lane 6"), "{info}");
    assert_eq!(d.frame(1)["line"], 7, "stopped before the faulting store");
    let e = d.ok("evaluate", json!({"expression": "lane", "context": "repl"}));
    assert!(
        e["result"].as_str().expect("r").starts_with("6 (lane 6)"),
        "the focus lane is the faulting lane: {e}"
    );
}

#[test]
fn bad_configurations_and_requests_get_clear_errors() {
    let mut d = Dap::new();
    d.ok("initialize", json!({}));
    assert_eq!(d.ok("threads", json!({}))["threads"], json!([]), "no threads before launch");
    assert!(d.err("stackTrace", json!({"threadId": 1})).contains("send `launch` first"));
    assert!(d.err("launch", json!({})).contains("needs `program`"));
    assert!(d.err("launch", json!({"program": "/nonexistent/k.wave"})).contains("does not exist"));
    let path = program("bad", LOOP);
    let e = d.err("launch", json!({"program": path.display().to_string(), "grid": "big"}));
    assert!(e.contains("`grid` must be a number or a list"), "{e}");
    let e = d.err("launch", json!({"program": path.display().to_string(), "waveWidth": 12}));
    assert!(e.contains("wave width 12 is not one of"), "{e}");
    let e = d.err("launch", json!({"program": path.display().to_string(), "kernel": "nope"}));
    assert!(e.contains("no kernel `nope`"), "{e}");
    let broken = program("broken", ".kernel k\n    iaddd r1, r1, r1\n.end\n");
    let e = d.err("launch", json!({"program": broken.display().to_string()}));
    assert!(e.contains("broken.wave:2:5: error[E0101]"), "{e}");
    // A mistake in another kernel does not stop debugging this one; lines stay the file's.
    let two = program("two", &format!("{LOOP}\n.kernel broken\n    iaddd r1, r1, 1\n.end\n"));
    let mut d2 = Dap::new();
    d2.launch(
        json!({"program": two.display().to_string(), "kernel": "divergent", "args": {"out": 0}}),
        &[json!({"line": LINE_CMP})],
    );
    assert_eq!(d2.stopped()["reason"], "breakpoint");
    assert_eq!(d2.frame(1)["line"], LINE_CMP);
    // A case file with inline source: lines are the case file's, in frames and in lane states.
    let case = program("inline", "").with_file_name("inline.toml");
    let body = LOOP.replace('\\', "\\\\");
    std::fs::write(&case, format!("name = \"inline\"\nsource = \"\"\"\n{body}\"\"\"\n[args]\nout = 0\n[[expect]]\noffset = 0\nu32 = [11]\n")).expect("case");
    let mut d3 = Dap::new();
    d3.launch(
        json!({"program": case.display().to_string(), "waveWidth": 32, "stopOnEntry": true}),
        &[json!({"line": LINE_CMP + 2})],
    );
    d3.stopped();
    d3.ok("continue", json!({"threadId": 1}));
    d3.stopped();
    d3.ok("next", json!({"threadId": 1}));
    d3.stopped();
    d3.ok("next", json!({"threadId": 1}));
    d3.stopped();
    assert_eq!(d3.frame(1)["line"], LINE_CMP + 4, "`endloop`, counted in the case file");
    let frame = d3.frame(1)["id"].clone();
    let scopes = d3.ok("scopes", json!({"frameId": frame}));
    let lanes = d3
        .ok("variables", json!({"variablesReference": scopes["scopes"][0]["variablesReference"]}));
    let states: Vec<String> = lanes["variables"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|v| v["value"].as_str().map(str::to_owned))
        .collect();
    assert!(
        states.iter().any(|s| s.contains(&format!("left the loop at line {}", 8 + 2))),
        "{states:?}"
    );
    assert!(d.err("frobnicate", json!({})).contains("not a request the WAVE debugger handles"));
    d.ok(
        "launch",
        json!({"program": path.display().to_string(), "stopOnEntry": true, "args": {"out": 0}}),
    );
    d.ok("configurationDone", json!({}));
    assert!(d.err("stackTrace", json!({"threadId": 9})).contains("there is no thread 9"));
    assert!(d.err("variables", json!({"variablesReference": 999})).contains("not valid"));
    assert!(d.err("evaluate", json!({"expression": "r2 +", "context": "repl"})).contains("at 5"));
    assert!(
        d.err("evaluate", json!({"expression": "lane 99", "context": "repl"}))
            .contains("there is no lane 99")
    );
    assert!(d.err("stepBack", json!({"threadId": 1})).contains("nothing to step back to"));
    // `lane 3` is the focus command; `lane == 3` is an expression.
    let e = d.ok("evaluate", json!({"expression": "lane == 3", "context": "repl"}));
    assert!(e["result"].as_str().expect("r").starts_with("false (lane 0)"), "{e}");
    assert_eq!(
        d.ok("evaluate", json!({"expression": "lane 3", "context": "repl"}))["result"],
        "focus lane: 3"
    );
}

#[test]
fn pause_stops_a_kernel_that_never_ends() {
    let path = program(
        "spin",
        ".kernel spin\n    mov_imm r1, 0\n    loop\n        iadd r1, r1, 1\n    endloop\n.end\n",
    );
    let mut d = Dap::new();
    d.ok("initialize", json!({}));
    d.ok("launch", json!({"program": path.display().to_string()}));
    // configurationDone starts it; run a few slices by hand, then pause.
    d.adapter.handle(
        &json!({"seq": 90, "type": "request", "command": "configurationDone", "arguments": {}}),
    );
    assert!(d.adapter.running());
    for _ in 0..3 {
        d.adapter.run_slice();
    }
    assert!(d.adapter.running(), "still running");
    let _ = d.adapter.take_output();
    d.ok("pause", json!({"threadId": 1}));
    let stop = d.stopped();
    assert_eq!(stop["reason"], "pause");
    let r1 = d.lanes(1, "r1");
    assert!(r1[0].parse::<u64>().expect("a number") > 10_000, "it ran: {}", r1[0]);
    // The budget traps.
    let mut d = Dap::new();
    d.launch(json!({"program": path.display().to_string(), "maxSteps": 5000}), &[]);
    let stop = d.stopped();
    assert_eq!(stop["reason"], "exception");
    assert!(stop["description"].as_str().expect("d").contains("instruction budget exceeded"));
}

const BARRIER: &str = ".kernel sync
.param out: ptr
.workgroup_size 64
.local_memory 256
    mov r1, sr_thread_id_x
    shift.shl r2, r1, 2
    local_store.u32 [r2], r1
    barrier
    iadd r3, r1, 1
    and r3, r3, 63
    shift.shl r3, r3, 2
    local_load.u32 r4, [r3]
    iadd r5, out, r2
    device_store.u32 [r5], r4
.end
";

#[test]
fn stepping_over_a_barrier_runs_the_other_waves_to_it() {
    let path = program("barrier", BARRIER);
    let mut d = Dap::new();
    d.launch(
        json!({"program": path.display().to_string(), "args": {"out": 0}, "stopOnEntry": true}),
        &[],
    );
    d.stopped();
    let threads = d.ok("threads", json!({}));
    assert_eq!(threads["threads"].as_array().expect("threads").len(), 2, "64 threads at W = 32");
    for _ in 0..3 {
        d.ok("next", json!({"threadId": 1}));
        d.stopped();
    }
    assert_eq!(d.frame(1)["line"], 8, "at the barrier");
    assert_eq!(d.frame(2)["line"], 5, "wave 1 has not run");
    d.ok("next", json!({"threadId": 1}));
    let stop = d.stopped();
    assert_eq!(stop["threadId"], 1);
    assert_eq!(d.frame(1)["line"], 9, "past the barrier");
    assert_eq!(d.frame(2)["line"], 9, "wave 1 ran to the barrier and was released with it");
    // Local memory holds every thread's id.
    let m = d.ok("readMemory", json!({"memoryReference": "local", "offset": 0, "count": 256}));
    let w = words(m["data"].as_str().expect("data"));
    assert_eq!(w, (0..64).collect::<Vec<u32>>());
}

#[test]
fn log_points_hit_counts_function_and_instruction_breakpoints() {
    let text = ".kernel calls\n.param out: ptr\n.workgroup_size 8\n    mov r1, sr_lane_id\n    mov_imm r2, 0\n    call bump\n    call bump\n    call bump\n    shift.shl r3, r1, 2\n    iadd r3, out, r3\n    device_store.u32 [r3], r2\n    halt\nbump:\n    iadd r2, r2, r1\n    return\n.end\n";
    let path = program("calls", text);
    let mut d = Dap::new();
    d.launch(
        json!({"program": path.display().to_string(), "args": {"out": 0}}),
        &[
            json!({"line": 14, "logMessage": "r2 is {r2} in lane {lane}"}),
            json!({"line": 14, "hitCondition": "3"}),
        ],
    );
    let logs: Vec<String> = d
        .events
        .iter()
        .filter(|e| e["event"] == "output")
        .filter_map(|e| e["body"]["output"].as_str().map(str::to_owned))
        .collect();
    let stop = d.stopped();
    assert_eq!(stop["reason"], "breakpoint", "{stop}");
    assert_eq!(
        logs.iter().filter(|l| l.contains("r2 is")).count(),
        3,
        "one line per hit: {logs:?}"
    );
    assert_eq!(logs[0], "[wave 0, lanes 0, 1, 2, 3, 4, 5, 6, 7] r2 is 0 in lane 0\n", "{logs:?}");
    assert_eq!(d.lanes(1, "r2")[3], "6", "the third call: 3 + 3 so far");
    // The stack has the call.
    let st = d.ok("stackTrace", json!({"threadId": 1}));
    let names: Vec<&str> = st["stackFrames"]
        .as_array()
        .expect("frames")
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("bump · 8/32 lanes active") && names[1] == "calls", "{names:?}");
    // stepOut returns to the caller.
    d.ok("stepOut", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.frame(1)["line"], 9);
    // A function breakpoint on a label, an instruction breakpoint from the disassembly.
    let mut d = Dap::new();
    d.ok("initialize", json!({}));
    d.ok("launch", json!({"program": path.display().to_string(), "args": {"out": 0}}));
    let f = d.ok(
        "setFunctionBreakpoints",
        json!({"breakpoints": [{"name": "bump"}, {"name": "nosuch"}]}),
    );
    assert_eq!(f["breakpoints"][0]["verified"], true);
    assert_eq!(f["breakpoints"][0]["line"], 14);
    assert_eq!(f["breakpoints"][1]["verified"], false);
    let dis = d.ok("disassemble", json!({"memoryReference": "0x0", "instructionCount": 12}));
    let list = dis["instructions"].as_array().expect("instructions");
    assert_eq!(list[0]["instruction"], "mov_special r1, sr_lane_id");
    assert_eq!(list[0]["line"], 4);
    let store = list
        .iter()
        .find(|i| i["instruction"].as_str().is_some_and(|t| t.starts_with("device_store")))
        .expect("store");
    let ib = d.ok(
        "setInstructionBreakpoints",
        json!({"breakpoints": [{"instructionReference": store["address"]}]}),
    );
    assert_eq!(ib["breakpoints"][0]["verified"], true);
    d.ok("configurationDone", json!({}));
    assert_eq!(d.stopped()["reason"], "breakpoint");
    assert!(d.frame(1)["name"].as_str().expect("name").starts_with("bump"));
    d.ok("continue", json!({"threadId": 1}));
    d.stopped();
    d.ok("continue", json!({"threadId": 1}));
    d.stopped();
    d.ok("continue", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.frame(1)["line"], 11, "the instruction breakpoint on the store");
}

#[test]
fn large_grids_list_the_focused_workgroup_and_move_between_workgroups() {
    let path = program("grid", LOOP);
    let mut d = Dap::new();
    d.launch(json!({"program": path.display().to_string(), "args": {"out": 0}, "grid": [4, 1, 1], "stopOnEntry": true}), &[]);
    d.stopped();
    let e = d.ok("evaluate", json!({"expression": "wg 2,0,0", "context": "repl"}));
    assert_eq!(e["result"], "running to workgroup [2, 0, 0]");
    let stop = d.stopped();
    assert_eq!(stop["reason"], "goto");
    let threads = d.ok("threads", json!({}));
    assert_eq!(threads["threads"][0]["name"], "wg (2,0,0) · wave 0");
    let e = d.ok("evaluate", json!({"expression": "sr_workgroup_id_x", "context": "watch"}));
    assert_eq!(e["result"], "2");
    // Back to a workgroup that ran: time travel.
    d.ok("evaluate", json!({"expression": "wg 1,0,0", "context": "repl"}));
    d.stopped();
    assert_eq!(d.ok("threads", json!({}))["threads"][0]["name"], "wg (1,0,0) · wave 0");
    // Focus-lane breakpoints stop only where the focus lane hits.
    d.ok("evaluate", json!({"expression": "lane 9", "context": "repl"}));
    d.ok("setBreakpoints", json!({"source": {"path": path.display().to_string()}, "breakpoints": [{"line": LINE_STORE, "mode": "focus", "condition": "r2 == 10"}, {"line": LINE_CMP, "mode": "focus", "condition": "r2 > 10"}]}));
    d.ok("continue", json!({"threadId": 1}));
    let stop = d.stopped();
    assert_eq!(stop["description"], "breakpoint at line 10: wave 0, lane 9 hit", "{stop}");
}

#[test]
fn random_requests_in_any_order_never_crash_the_adapter() {
    let path = program("random", LOOP);
    let commands = [
        "initialize",
        "launch",
        "configurationDone",
        "setBreakpoints",
        "setFunctionBreakpoints",
        "setInstructionBreakpoints",
        "setExceptionBreakpoints",
        "threads",
        "stackTrace",
        "scopes",
        "variables",
        "setVariable",
        "setExpression",
        "evaluate",
        "continue",
        "next",
        "stepIn",
        "stepOut",
        "stepBack",
        "reverseContinue",
        "pause",
        "exceptionInfo",
        "readMemory",
        "writeMemory",
        "disassemble",
        "source",
        "breakpointLocations",
        "terminate",
        "bogus",
        "",
    ];
    let values = [
        json!(null),
        json!(0),
        json!(1),
        json!(-7),
        json!(3000000000u64),
        json!("r2"),
        json!("lane == 3"),
        json!("0x10"),
        json!("[5]"),
        json!("device"),
        json!("local"),
        json!("AAAA"),
        json!("(("),
        json!([1, 2]),
        json!({"path": path.display().to_string()}),
        json!(true),
        json!(1.5),
        json!([{"line": 9, "condition": "r2 >"}, {"line": 10}]),
        json!("instruction"),
        json!(path.display().to_string()),
    ];
    let keys = [
        "threadId",
        "frameId",
        "variablesReference",
        "name",
        "value",
        "expression",
        "context",
        "memoryReference",
        "offset",
        "count",
        "data",
        "instructionCount",
        "instructionOffset",
        "source",
        "breakpoints",
        "granularity",
        "program",
        "args",
        "stopOnEntry",
        "startFrame",
        "levels",
        "line",
        "grid",
        "maxSteps",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for round in 0..40 {
        let mut d = Dap::new();
        if round % 2 == 0 {
            d.launch(json!({"program": path.display().to_string(), "args": {"out": 0}, "stopOnEntry": true, "maxSteps": 100000}), &[]);
        }
        for _ in 0..150 {
            let command = commands[next(commands.len())];
            let mut args = serde_json::Map::new();
            for _ in 0..next(4) {
                args.insert(keys[next(keys.len())].into(), values[next(values.len())].clone());
            }
            if command == "launch" {
                args.insert("program".into(), json!(path.display().to_string()));
                args.insert("maxSteps".into(), json!(100000));
            }
            let r = d.request(command, Value::Object(args.clone()));
            let message = r["message"].as_str().unwrap_or("");
            assert!(
                !message.contains("internal error"),
                "round {round}: {command} {args:?} -> {r}"
            );
            assert!(r["success"].is_boolean());
            if d.adapter.done() {
                break;
            }
        }
    }
}

#[test]
fn serve_frames_messages_over_a_channel() {
    let path = program("serve", LOOP);
    let (tx, rx) = std::sync::mpsc::channel();
    let client = std::thread::spawn(move || {
        for (i, (command, args)) in [
            ("initialize", json!({})),
            ("launch", json!({"program": path.display().to_string(), "args": {"out": 0}})),
            ("configurationDone", json!({})),
            ("disconnect", json!({})),
        ]
        .into_iter()
        .enumerate()
        {
            if command == "disconnect" {
                std::thread::sleep(std::time::Duration::from_millis(300));
            }
            tx.send(
                json!({"seq": i + 1, "type": "request", "command": command, "arguments": args}),
            )
            .expect("send");
        }
    });
    let mut out = Vec::new();
    wave_dap::serve(&mut Adapter::new(), &rx, &mut out).expect("serves");
    client.join().expect("client");
    let mut reader = std::io::BufReader::new(out.as_slice());
    let mut messages = Vec::new();
    while let Some(m) = wave_dap::protocol::read_message(&mut reader).expect("framed") {
        messages.push(m);
    }
    let kinds: Vec<String> = messages
        .iter()
        .map(|m| {
            format!(
                "{}:{}",
                m["type"].as_str().unwrap_or(""),
                m["command"].as_str().or(m["event"].as_str()).unwrap_or("")
            )
        })
        .collect();
    assert_eq!(kinds[..3], ["response:initialize", "event:initialized", "response:launch"]);
    assert!(kinds.contains(&"event:terminated".to_string()), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("response:disconnect"));
    let seqs: Vec<i64> = messages.iter().filter_map(|m| m["seq"].as_i64()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "sequence numbers count up: {seqs:?}");
}

/// The walkthrough of docs/debugging.md, step by step.
#[test]
fn the_documented_walkthrough() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/client/divergent.wave"
    ))
    .expect("kernel");
    let path = program("walk", &text);
    let mut d = Dap::new();
    d.launch(config(&path), &[json!({"line": 11, "condition": "lane == 5 && r2 > 10"})]);
    let stop = d.stopped();
    assert_eq!(stop["description"], "breakpoint at line 11: wave 0, lane 5 hit");
    let threads = d.ok("threads", json!({}));
    assert_eq!(threads["threads"].as_array().map(Vec::len), Some(2));
    let frame = d.frame(1)["id"].clone();
    let scopes = d.ok("scopes", json!({"frameId": frame}));
    let regs =
        d.ok("variables", json!({"variablesReference": scopes["scopes"][1]["variablesReference"]}));
    let r2 = regs["variables"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|v| v["name"] == "r2")
        .expect("r2")
        .clone();
    assert_eq!(r2["value"], "12 (0xc, 1.7e-44f) · lanes [2, 4, 6, 8, 10, 12, 14, 16, …]");
    let b = d.ok("evaluate", json!({"expression": "ballot(r2 > 10)", "context": "repl"}));
    assert_eq!(
        b["result"],
        "0xe0e0e0e0 · .....111.....111.....111.....111 · lanes 5, 6, 7, 13, 14, 15, 21, 22, 23, 29, 30, 31"
    );
    d.ok("next", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.frame(1)["line"], 12);
    d.ok("next", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.frame(1)["line"], 13, "past `break p0`: at `endloop`");
    let frame = d.frame(1)["id"].clone();
    let scopes = d.ok("scopes", json!({"frameId": frame}));
    let lanes =
        d.ok("variables", json!({"variablesReference": scopes["scopes"][0]["variablesReference"]}));
    assert_eq!(
        lanes["variables"][2 + 5]["value"],
        "inactive: left the loop at line 9 with `break` (1 level up); waits for the loop to end"
    );
    assert_eq!(
        lanes["variables"][1]["value"],
        "11111...11111...11111...11111... (20/32, lane 0 first)"
    );
    d.ok("stepBack", json!({"threadId": 1}));
    d.stopped();
    d.ok("stepBack", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.frame(1)["line"], 11);
    assert_eq!(d.lanes(1, "r2")[5], "12", "as it was");
}

/// A Python kernel: each lane sums `x[i] * (k + 1)` over three iterations.
const PY: &str = "import wave

@wave.kernel(workgroup=32)
def scale(x: f32[:], out: f32[:], n: u32):
    i = wave.global_id()
    if i >= n:
        return
    total: f32 = 0.0
    for k in range(u32(3)):
        total += x[i] * f32(k + 1)
    out[i] = total
";

/// The rows of the Variables scope of the top frame of `thread`: name → value.
fn source_vars(d: &mut Dap, thread: u32) -> Vec<(String, String, Value)> {
    let frame = d.frame(thread)["id"].clone();
    let scopes = d.ok("scopes", json!({"frameId": frame}));
    let first = &scopes["scopes"][0];
    assert_eq!(first["name"], "Variables", "{scopes}");
    let vars = d.ok("variables", json!({"variablesReference": first["variablesReference"]}));
    vars["variables"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap_or("").to_owned(),
                v["value"].as_str().unwrap_or("").to_owned(),
                v["variablesReference"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_python_kernel_stops_at_its_source_lines_and_shows_its_variables_by_name() {
    let path = file_in("py", "scale.py", PY);
    // x[i] = i + 1 for 32 lanes; out at 256.
    let memory: Vec<u32> = (0..32).map(|i| (i as f32 + 1.0).to_bits()).collect();
    let line =
        |needle: &str| PY.lines().position(|l| l.contains(needle)).expect("a line") as u32 + 1;
    let (loop_line, store_line) = (line("total += x[i]"), line("out[i] = total"));
    let mut d = Dap::new();
    d.launch(
        json!({"type": "wave", "request": "launch", "program": path.display().to_string(),
               "args": {"x": 0, "out": 256, "n": 32}, "memory": [{"offset": 0, "u32": memory}]}),
        &[json!({"line": loop_line}), json!({"line": store_line})],
    );
    // The first stop: the loop body's line, before its first iteration's sum.
    let stop = d.stopped();
    assert_eq!(stop["reason"], "breakpoint", "{stop}");
    let frame = d.frame(1);
    assert_eq!(frame["line"], loop_line, "{frame}");
    assert!(frame["source"]["path"].as_str().expect("path").ends_with("scale.py"));
    // The frame shows the WAVE instruction about to run.
    let name = frame["name"].as_str().expect("a name");
    assert!(name.starts_with("scale · ") && name.contains("lanes active"), "{name}");
    let vars = source_vars(&mut d, 1);
    let names: Vec<&str> = vars.iter().map(|v| v.0.as_str()).collect();
    for want in ["i", "k", "total", "x"] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let value = |vars: &[(String, String, Value)], name: &str| {
        vars.iter().find(|v| v.0 == name).map(|v| v.1.clone()).expect("the variable")
    };
    assert!(value(&vars, "i").starts_with("0 · lanes [0, 1, 2, 3, 4, 5, 6, 7"), "{vars:?}");
    assert!(value(&vars, "total").starts_with("0.0 ·"), "{vars:?}");
    assert!(value(&vars, "k").starts_with("0 ·"), "{vars:?}");
    // By name in the console, in another lane, and per lane under the row.
    let frame = d.frame(1)["id"].clone();
    let e =
        d.ok("evaluate", json!({"expression": "i[5] + 100", "context": "repl", "frameId": frame}));
    assert_eq!(e["result"], "105");
    let total = vars.iter().find(|v| v.0 == "i").expect("i").2.clone();
    let lanes = d.ok("variables", json!({"variablesReference": total}));
    assert_eq!(lanes["variables"][7]["value"], "7");
    // Continue: the loop's line again (a line is one stop per visit, not one per instruction).
    d.ok("continue", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.frame(1)["line"], loop_line);
    let vars = source_vars(&mut d, 1);
    assert!(value(&vars, "k").starts_with("1 ·"), "{vars:?}");
    // Lane 3 has x = 4: total = 4 after the first iteration.
    let frame = d.frame(1)["id"].clone();
    let e =
        d.ok("evaluate", json!({"expression": "total[3]", "context": "watch", "frameId": frame}));
    assert_eq!(e["result"], "4.0");
    // A line step stays in the kernel's lines; continuing twice more reaches the store.
    d.ok("continue", json!({"threadId": 1}));
    d.stopped();
    d.ok("continue", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.frame(1)["line"], store_line);
    let vars = source_vars(&mut d, 1);
    // total = x * (1 + 2 + 3) = 6 x: lane 3 → 24.
    let frame = d.frame(1)["id"].clone();
    let e =
        d.ok("evaluate", json!({"expression": "total[3]", "context": "watch", "frameId": frame}));
    assert_eq!(e["result"], "24.0", "{vars:?}");
    d.ok("next", json!({"threadId": 1}));
    d.stopped();
    let after = d.frame(1)["line"].as_u64().unwrap_or(0) as u32;
    assert!(after == 0 || after >= store_line, "a step from the store goes on from there: {after}");
}

#[test]
fn a_kernel_source_that_does_not_compile_is_a_launch_error_with_its_place() {
    let path = file_in(
        "bad",
        "bad.rs",
        "#[wave::kernel]\nfn k(out: &mut [f32]) {\n    out[0] = 1u32;\n}\n",
    );
    let mut d = Dap::new();
    d.ok("initialize", json!({"adapterID": "wave"}));
    let e = d.err("launch", json!({"program": path.display().to_string()}));
    assert!(e.contains("bad.rs:3:14: error[E0401]"), "{e}");
}

#[test]
fn conditions_and_log_points_take_a_python_kernels_variable_names() {
    let path = file_in("pycond", "scale.py", PY);
    let memory: Vec<u32> = (0..32).map(|i| (i as f32 + 1.0).to_bits()).collect();
    let line =
        |needle: &str| PY.lines().position(|l| l.contains(needle)).expect("a line") as u32 + 1;
    let mut d = Dap::new();
    d.launch(
        json!({"type": "wave", "request": "launch", "program": path.display().to_string(),
               "args": {"x": 0, "out": 256, "n": 32}, "memory": [{"offset": 0, "u32": memory}]}),
        &[
            // Lane 3 (x = 4) has total 0, 4, 12 at its three visits of the loop's line.
            json!({"line": line("total += x[i]"), "condition": "lane == 3 && total > 10"}),
            json!({"line": line("out[i] = total"), "logMessage": "total is {total}"}),
        ],
    );
    let stop = d.stopped();
    assert_eq!(stop["description"], "breakpoint at line 10: wave 0, lane 3 hit", "{stop}");
    let frame = d.frame(1)["id"].clone();
    let e = d.ok("evaluate", json!({"expression": "k", "context": "watch", "frameId": frame}));
    assert!(e["result"].as_str().expect("a result").starts_with('2'), "{e}");
    d.ok("continue", json!({"threadId": 1}));
    // The log point printed the focus lane's total (lane 3, which hit: x = 4, so 24.0) and the
    // run went on to the end.
    let logged: Vec<String> = d
        .events
        .iter()
        .filter(|e| e["event"] == "output")
        .filter_map(|e| e["body"]["output"].as_str().map(str::to_owned))
        .collect();
    assert!(logged.iter().any(|l| l.contains("total is 24.0")), "{logged:?}");
}

/// A Python file as people write them: host code around two kernels and a helper.
const PY_TWO: &str = "import numpy as np
import wave

def twice(v: f32) -> f32:
    return v * 2.0

@wave.kernel(workgroup=32)
def first(out: f32[:]):
    i = wave.global_id()
    out[i] = twice(f32(i))

@wave.kernel(workgroup=32)
def second(out: f32[:]):
    i = wave.global_id()
    v = f32(i) + 1.0
    out[i] = twice(v)

if __name__ == \"__main__\":
    print(np.zeros(4))
";

#[test]
fn a_debug_session_compiles_a_kernel_source_as_the_editor_does() {
    // The extension's case does not matter (as in the editor).
    let path = file_in("two", "TWO.PY", PY_TWO);
    let program = path.display().to_string();
    let mut d = Dap::new();
    d.ok("initialize", json!({"adapterID": "wave"}));
    let e = d.err("launch", json!({"program": program}));
    assert!(e.contains("several kernels (first, second)"), "{e}");
    let e = d.err("launch", json!({"program": program, "kernel": "third"}));
    assert!(e.contains("no kernel `third`") && e.contains("(it has first, second)"), "{e}");
    // The second kernel (compiled with the helper it calls) stops at its lines of the file.
    let line =
        |needle: &str| PY_TWO.lines().position(|l| l.contains(needle)).expect("a line") as u32 + 1;
    let mut d = Dap::new();
    d.launch(
        json!({"program": program, "kernel": "second", "args": {"out": 0}}),
        &[json!({"line": line("out[i] = twice(v)")})],
    );
    assert_eq!(d.stopped()["reason"], "breakpoint");
    let frame = d.frame(1);
    assert_eq!(frame["line"], line("out[i] = twice(v)"), "{frame}");
    assert!(frame["source"]["path"].as_str().expect("path").ends_with("TWO.PY"), "{frame}");
    assert!(frame["name"].as_str().expect("a name").starts_with("second · "), "{frame}");
    let vars = source_vars(&mut d, 1);
    assert!(vars.iter().any(|v| v.0 == "i" && v.1.starts_with("0 · lanes [0, 1, 2")), "{vars:?}");
}

/// A `.wbin` written by the reference toolchain's published assembler (its own encoding; see
/// server/cli/tests/data/reference/README.md): the same divergent loop, without parameters.
#[test]
fn a_binary_of_the_reference_assembler_debugs_like_our_own() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/reference/divergent.wbin");
    let mut d = Dap::new();
    d.launch(
        json!({"type": "wave", "request": "launch", "program": path.display().to_string(), "stopOnEntry": true}),
        &[],
    );
    assert_eq!(d.stopped()["reason"], "entry");
    // mov_sr, mov_imm, iadd: r4 = lane + 1 in every lane.
    for _ in 0..3 {
        d.ok("next", json!({"threadId": 1, "granularity": "instruction"}));
        d.stopped();
    }
    let r4 = d.lanes(1, "r4");
    assert_eq!(r4[..4], ["1", "2", "3", "4"], "{r4:?}");
    d.ok("stepBack", json!({"threadId": 1}));
    d.stopped();
    assert_eq!(d.lanes(1, "r4")[3], "0", "before the iadd");
    d.ok("continue", json!({"threadId": 1}));
    assert!(d.event("terminated").is_some(), "the dispatch finished");
    let m = d.ok("readMemory", json!({"memoryReference": "device", "offset": 256, "count": 16}));
    // Lane l adds l + 1 until the sum passes 10.
    assert_eq!(words(m["data"].as_str().expect("data")), [11, 12, 12, 12]);
}

//! The adapter through the protocol, in process: requests as a client sends them, execution
//! run to its next stop between requests.

use std::path::PathBuf;

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
    let dir = std::env::temp_dir().join(format!("wave-dap-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("{name}.wave"));
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
    d.ok("continue", json!({"threadId": 1}));
    assert!(d.event("terminated").is_some(), "the dispatch finished");
    // Memory after the run: lanes 7 and 8 as set, lane 0 as computed (11).
    let m = d.ok("readMemory", json!({"memoryReference": "device", "offset": 256, "count": 36}));
    let words = words(m["data"].as_str().expect("data"));
    assert_eq!(words[..2], [11, 12]);
    assert_eq!(words[7..9], [0x77, 0xffff_ffff], "lanes 7 and 8 as set");
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
}

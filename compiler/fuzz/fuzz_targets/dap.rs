//! The debug adapter on arbitrary request sequences: the input is split into requests (a
//! command from the first byte, arguments from a JSON fragment or raw text), after a launch of
//! a small divergent kernel. Every request gets one answer and nothing panics or hangs.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

const COMMANDS: [&str; 24] = [
    "setBreakpoints", "setFunctionBreakpoints", "setInstructionBreakpoints", "threads",
    "stackTrace", "scopes", "variables", "setVariable", "setExpression", "evaluate", "continue",
    "next", "stepIn", "stepOut", "stepBack", "reverseContinue", "pause", "exceptionInfo",
    "readMemory", "writeMemory", "disassemble", "source", "breakpointLocations", "launch",
];

const KERNEL: &str = ".kernel k\n.param out: ptr\n.workgroup_size 16\n    mov r1, sr_lane_id\n    mov_imm r2, 0\n    loop\n        iadd r2, r2, r1\n        icmp.gt p0, r2, 9\n        break p0\n    endloop\n    shift.shl r3, r1, 2\n    iadd r3, out, r3\n    device_store.u32 [r3], r2\n.end\n";

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join("wave-dap-fuzz");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("k.wave");
    if !path.exists() {
        let _ = std::fs::write(&path, KERNEL);
    }
    let program = path.display().to_string();
    let mut a = wave_dap::Adapter::new();
    let mut seq = 0;
    let mut send = |a: &mut wave_dap::Adapter, command: &str, args: Value| {
        seq += 1;
        a.handle(&json!({"seq": seq, "type": "request", "command": command, "arguments": args}));
        let mut slices = 0;
        while a.running() && slices < 50 {
            a.run_slice();
            slices += 1;
        }
        if a.running() {
            a.handle(&json!({"seq": 0, "type": "request", "command": "pause", "arguments": {}}));
        }
        let answers = a.take_output().iter().filter(|m| m["type"] == "response").count();
        assert!(answers >= 1, "{command} got no answer");
    };
    send(&mut a, "initialize", json!({}));
    send(&mut a, "launch", json!({"program": program, "args": {"out": 0}, "stopOnEntry": true, "maxSteps": 20000}));
    send(&mut a, "configurationDone", json!({}));
    for chunk in data.split(|b| *b == 0xff).take(64) {
        let Some((&first, rest)) = chunk.split_first() else { continue };
        let command = COMMANDS[usize::from(first) % COMMANDS.len()];
        let text = String::from_utf8_lossy(rest);
        let mut args = serde_json::from_str::<Value>(&text).unwrap_or(Value::Null);
        if !args.is_object() {
            // Raw text goes where text is read: expressions, conditions, names, values.
            args = json!({
                "expression": text, "value": text, "name": text, "threadId": first % 3,
                "frameId": 0, "variablesReference": first % 9, "memoryReference": "device",
                "count": 16, "instructionCount": 4,
                "source": {"path": program}, "breakpoints": [{"line": 7, "condition": text, "logMessage": "{r2}"}],
            });
        }
        if command == "launch" {
            args["program"] = json!(program);
            args["maxSteps"] = json!(20000);
        }
        send(&mut a, command, args);
    }
});

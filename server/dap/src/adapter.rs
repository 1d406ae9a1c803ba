//! The adapter: DAP requests in, responses and events out, over a [`Debugger`].
//!
//! Threads are the waves of the current workgroup (thread id = wave + 1), named
//! `wg (x,y,z) · wave N`. Every stop is all-stop. A resumed execution (continue or a step)
//! runs in slices of [`SLICE`] instructions between which the I/O loop reads new requests, so
//! `pause` and `disconnect` are answered at once.
//!
//! This file holds the adapter's state, the request dispatch and what every request needs
//! (the program's lines and source variables). Each group of requests has its own room:
//! `lifecycle` (`initialize`, `launch`), `execution` (continue, steps, reverse execution
//! and the slices they run in), `breakpoints`, `stack` (threads, frames, exceptions),
//! `variables`, `evaluate`, `memory` and `disassemble`; `env` is what expressions
//! and variables see of a wave.

use std::collections::HashMap;

use serde_json::{Value, json};
use wave_emulator::{BlockKind, Stop, Trap, WaveState};

use crate::debugger::{ADVANCE, Debugger};
use crate::expr::{self, Env, Expr};
use crate::launch::{self, Program};

mod breakpoints;
mod disassemble;
mod env;
mod evaluate;
mod execution;
mod lifecycle;
mod memory;
mod stack;
mod variables;

use env::*;
use memory::*;

/// Instructions per slice of a resumed execution.
pub const SLICE: u64 = 20_000;

/// How a breakpoint chooses its lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Any active lane for which the condition holds.
    Any,
    /// Only the focus lane.
    Focus,
}

struct Breakpoint {
    id: i64,
    pcs: Vec<u32>,
    condition: Option<Expr>,
    /// The condition at each of `pcs` where it names source variables (they may live in
    /// other registers at another pc of the line).
    by_pc: Vec<(u32, Expr)>,
    hit_condition: Option<(String, u64)>,
    log: Option<String>,
    mode: Mode,
    hits: u64,
    what: String,
}

/// What a resumed execution is doing.
#[derive(Clone, Debug)]
enum Resume {
    Continue {
        first: bool,
    },
    /// Step `wave` until `done` says so.
    Step {
        wave: u32,
        kind: StepKind,
        line: Option<u32>,
        depth: usize,
        first: bool,
    },
    /// Run to the start of a workgroup.
    Workgroup([u32; 3]),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepKind {
    Instruction,
    Line,
    In,
    Out,
}

/// A variables container, by reference number (index + 1), valid until the next resume.
#[derive(Clone, Debug)]
enum Node {
    Scope(u32, &'static str),
    Register(u32, u16),
    Predicate(u32, u8),
    Special(u32, usize),
    Local(usize, usize),
    Lanes(u32, Expr),
    /// A source variable of a kernel compiled from Python, Rust, C++ or TypeScript: its
    /// register and type, one child per lane.
    SourceVar(u32, u8, wave_wbin::VarType),
}

/// The adapter's state.
pub struct Adapter {
    seq: i64,
    out: Vec<Value>,
    ansi: bool,
    lines_start_at1: bool,
    program: Option<ProgramInfo>,
    dbg: Option<Debugger>,
    configured: bool,
    launched: bool,
    breakpoints: Vec<Breakpoint>,
    source_bps: HashMap<String, Vec<i64>>,
    next_bp: i64,
    focus_lane: u32,
    focus_wave: u32,
    resume: Option<Resume>,
    nodes: Vec<Node>,
    trap: Option<(Trap, u32)>,
    stop_on_entry: bool,
    started: bool,
    done: bool,
    terminated: bool,
    events: Vec<Value>,
}

struct ProgramInfo {
    source: Option<std::path::PathBuf>,
    line_offset: u32,
    /// Compiled from a kernel source: lines are the source's, variables have names.
    from_kernel_source: bool,
    kernel: usize,
    /// The kernel's instructions: pc, canonical text, module line.
    listing: Vec<(u32, String, Option<u32>)>,
}

const SPECIALS: [&str; wave_isa::SPECIALS.len()] = wave_isa::SPECIAL_REGISTERS;

impl Default for Adapter {
    fn default() -> Self {
        Adapter {
            seq: 1,
            out: Vec::new(),
            ansi: false,
            lines_start_at1: true,
            program: None,
            dbg: None,
            configured: false,
            launched: false,
            breakpoints: Vec::new(),
            source_bps: HashMap::new(),
            next_bp: 1,
            focus_lane: 0,
            focus_wave: 0,
            resume: None,
            nodes: Vec::new(),
            trap: None,
            stop_on_entry: false,
            started: false,
            done: false,
            terminated: false,
            events: Vec::new(),
        }
    }
}

type Reply = Result<Value, String>;

/// Turns a requested breakpoint into its instruction offsets and, when there are none, why.
type Resolver = dyn Fn(&Adapter, &Value) -> (Vec<u32>, String);

impl Adapter {
    /// A new adapter, before `initialize`.
    pub fn new() -> Adapter {
        Adapter::default()
    }

    /// Messages to send, in order.
    pub fn take_output(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.out)
    }

    /// Whether an execution is under way (the I/O loop calls [`Adapter::run_slice`]).
    pub fn running(&self) -> bool {
        self.resume.is_some()
    }

    /// Whether the client disconnected.
    pub fn done(&self) -> bool {
        self.done
    }

    /// Queues an event; it is sent after the response of the request being handled.
    fn event(&mut self, event: &str, body: Value) {
        self.events.push(json!({"type": "event", "event": event, "body": body}));
    }

    fn flush_events(&mut self) {
        for mut e in std::mem::take(&mut self.events) {
            e["seq"] = json!(self.seq);
            self.seq += 1;
            self.out.push(e);
        }
    }

    fn output(&mut self, category: &str, text: String) {
        self.event("output", json!({"category": category, "output": format!("{text}\n")}));
    }

    /// Handles one message from the client.
    pub fn handle(&mut self, msg: &Value) {
        if let Some(e) = msg.get("__error").and_then(Value::as_str) {
            self.output("important", format!("wave dap: {e}"));
            return;
        }
        if msg.get("type").and_then(Value::as_str) != Some("request") {
            return; // responses to our requests and stray events are ignored
        }
        let command = msg.get("command").and_then(Value::as_str).unwrap_or("").to_owned();
        let request_seq = msg.get("seq").and_then(Value::as_i64).unwrap_or(0);
        let args = msg.get("arguments").cloned().unwrap_or(json!({}));
        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.dispatch(&command, &args)
        }))
        .unwrap_or_else(|_| {
            Err(format!("internal error while handling `{command}`; the session goes on"))
        });
        let seq = self.seq;
        self.seq += 1;
        let response = match reply {
            Ok(body) => {
                json!({"seq": seq, "type": "response", "request_seq": request_seq, "success": true, "command": command, "body": body})
            }
            Err(message) => json!({
                "seq": seq, "type": "response", "request_seq": request_seq, "success": false,
                "command": command, "message": message,
                "body": {"error": {"id": 1, "format": message, "showUser": true}}
            }),
        };
        self.out.push(response);
        self.flush_events();
    }
}

impl Adapter {
    fn dbg(&self) -> Result<&Debugger, String> {
        self.dbg
            .as_ref()
            .ok_or_else(|| "no program is being debugged: send `launch` first".to_string())
    }

    fn dbg_mut(&mut self) -> Result<&mut Debugger, String> {
        self.dbg
            .as_mut()
            .ok_or_else(|| "no program is being debugged: send `launch` first".to_string())
    }

    /// Refuses a request that needs the program stopped.
    fn stopped(&self) -> Result<&Debugger, String> {
        if self.resume.is_some() {
            return Err("the program is running: pause it first".into());
        }
        self.dbg()
    }

    fn kernel(&self) -> Option<&wave_wbin::Kernel> {
        let dbg = self.dbg.as_ref()?;
        dbg.module.kernels.get(self.program.as_ref()?.kernel)
    }

    /// A module line (1-based) as the client's line.
    fn client_line(&self, line: u32) -> u32 {
        let offset = self.program.as_ref().map_or(0, |p| p.line_offset);
        line + offset - u32::from(!self.lines_start_at1)
    }

    /// `at line N` in an emulator message, with N as the client's line.
    fn client_lines(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(i) = rest.find("at line ") {
            let (head, tail) = rest.split_at(i + "at line ".len());
            out.push_str(head);
            let digits = tail.chars().take_while(char::is_ascii_digit).count();
            match tail[..digits].parse::<u32>() {
                Ok(n) => out.push_str(&self.client_line(n).to_string()),
                Err(_) => out.push_str(&tail[..digits]),
            }
            rest = &tail[digits..];
        }
        out.push_str(rest);
        out
    }

    fn source_json(&self) -> Value {
        match self.program.as_ref().and_then(|p| p.source.as_ref()) {
            Some(path) => json!({
                "name": path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                "path": path.display().to_string(),
            }),
            None => json!({"name": "disassembly", "sourceReference": 1}),
        }
    }

    fn line_of(&self, pc: u32) -> Option<u32> {
        let dbg = self.dbg.as_ref()?;
        if self.program.as_ref().is_some_and(|p| p.source.is_none()) {
            return self.disassembly().iter().position(|(p, _, _)| *p == pc).map(|i| i as u32 + 1);
        }
        if let Some(l) = dbg.module.line_at(pc) {
            return Some(self.client_line(l.line));
        }
        // In a compiled kernel, an instruction the compiler made for no line of its own (a
        // variable's first zero, a copy) belongs to the line before it.
        if self.program.as_ref().is_some_and(|p| p.from_kernel_source) {
            let k = self.kernel()?;
            let before = dbg.module.lines.partition_point(|l| l.offset < pc);
            let l = dbg.module.lines[..before].last().filter(|l| k.code.contains(&l.offset))?;
            return Some(self.client_line(l.line));
        }
        None
    }

    /// The instruction at `pc`, as the disassembler writes it.
    fn instruction_at(&self, pc: u32) -> Option<&str> {
        self.disassembly().iter().find(|(p, _, _)| *p == pc).map(|(_, t, _)| t.as_str())
    }

    /// The source variables in registers at `pc` (a kernel compiled from a source language).
    fn source_vars(&self, pc: u32) -> Vec<wave_wbin::VarLocation> {
        let (Some(dbg), Some(k)) = (self.dbg.as_ref(), self.kernel()) else { return Vec::new() };
        if !k.code.contains(&pc) {
            return Vec::new();
        }
        dbg.module.vars_at(pc).into_iter().cloned().collect()
    }

    /// `expr` with each source variable visible at `wave`'s pc written as its register (`x`
    /// → `r3.f`, `i[5]` → `r2[5]`); a view written on the name stays (`x.i`).
    fn substitute_vars(&self, wave: u32, text: &str) -> String {
        let Some(dbg) = self.dbg.as_ref() else { return text.to_owned() };
        let Some(pc) = dbg.session.wave_pc(wave) else { return text.to_owned() };
        self.substitute_at(pc, text)
    }

    /// A log message with the source variables inside its `{...}` written as registers.
    fn substitute_in_braces(&self, pc: u32, message: &str) -> String {
        let mut out = String::with_capacity(message.len());
        let mut rest = message;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else { break };
            out.push_str(&rest[..=open]);
            out.push_str(&self.substitute_at(pc, &rest[open + 1..open + close]));
            out.push('}');
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        out
    }

    /// `expr` with each source variable visible at `pc` written as its register.
    fn substitute_at(&self, pc: u32, text: &str) -> String {
        let vars = self.source_vars(pc);
        if vars.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) =
            rest.find(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            out.push_str(&rest[..start]);
            let tail = &rest[start..];
            let len = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(tail.len());
            let token = &tail[..len];
            let (base, view) = match token.split_once('.') {
                Some((b, v)) => (b, Some(v)),
                None => (token, None),
            };
            let called = tail[len..].trim_start().starts_with('(');
            match vars.iter().find(|v| v.name == base).filter(|_| !called) {
                Some(v) => {
                    let view = view.map(str::to_owned).unwrap_or_else(|| match v.ty {
                        wave_wbin::VarType::F32 => "f".into(),
                        wave_wbin::VarType::I32 => "i".into(),
                        _ => String::new(),
                    });
                    out.push_str(&format!("r{}", v.register));
                    if !view.is_empty() {
                        out.push('.');
                        out.push_str(&view);
                    }
                }
                None => out.push_str(token),
            }
            rest = &tail[len..];
        }
        out.push_str(rest);
        out
    }

    fn wave_count(&self) -> u32 {
        self.dbg.as_ref().map_or(0, |d| d.session.waves().len() as u32)
    }

    fn wave_of_thread(&self, args: &Value) -> Result<u32, String> {
        self.dbg()?;
        let id = args.get("threadId").and_then(Value::as_i64).ok_or("`threadId` is missing")?;
        let n = self.wave_count();
        if id < 1 || id > i64::from(n) {
            return Err(format!(
                "there is no thread {id}: the workgroup has {n} waves (threads 1 to {n})"
            ));
        }
        Ok(id as u32 - 1)
    }

    fn wave_of_frame(&self, args: &Value) -> Result<u32, String> {
        self.dbg()?;
        match args.get("frameId").and_then(Value::as_i64) {
            Some(f) if f >= 0 && (f / 1000) < i64::from(self.wave_count()) => Ok((f / 1000) as u32),
            Some(f) => Err(format!("there is no frame {f}")),
            None => Ok(self.focus_wave),
        }
    }

    fn dispatch(&mut self, command: &str, args: &Value) -> Reply {
        match command {
            "initialize" => self.initialize(args),
            "launch" => self.launch(args),
            "attach" => {
                Err("the WAVE debugger launches programs; `attach` is not supported".into())
            }
            "configurationDone" => {
                self.configured = true;
                if self.launched {
                    self.start();
                }
                Ok(Value::Null)
            }
            "setBreakpoints" => self.set_breakpoints(args),
            "setFunctionBreakpoints" => self.set_function_breakpoints(args),
            "setInstructionBreakpoints" => self.set_instruction_breakpoints(args),
            "setExceptionBreakpoints" => Ok(json!({"breakpoints": []})),
            "breakpointLocations" => self.breakpoint_locations(args),
            "threads" => Ok(self.threads()),
            "stackTrace" => self.stack_trace(args),
            "scopes" => self.scopes(args),
            "variables" => self.variables(args),
            "setVariable" => self.set_variable(args),
            "setExpression" => self.set_expression(args),
            "evaluate" => self.evaluate(args),
            "continue" => {
                self.stopped()?;
                self.resume(Resume::Continue { first: true });
                Ok(json!({"allThreadsContinued": true}))
            }
            "next" | "stepIn" | "stepOut" => self.step(command, args),
            "stepBack" => self.step_back(args),
            "reverseContinue" => self.reverse_continue(),
            "pause" => {
                self.dbg()?;
                if self.resume.take().is_some() {
                    let wave = self.dbg()?.next_runnable().unwrap_or(self.focus_wave);
                    self.stop("pause", wave, "paused".into(), Vec::new());
                }
                Ok(Value::Null)
            }
            "exceptionInfo" => self.exception_info(),
            "readMemory" => self.read_memory(args),
            "writeMemory" => self.write_memory(args),
            "disassemble" => self.disassemble(args),
            "source" => {
                let text: Vec<String> =
                    self.disassembly().iter().map(|(_, t, _)| t.clone()).collect();
                self.dbg()?;
                Ok(json!({"content": text.join("\n") + "\n", "mimeType": "text/x-wave"}))
            }
            "terminate" => {
                self.resume = None;
                if !self.terminated {
                    self.terminated = true;
                    self.event("terminated", json!({}));
                }
                Ok(Value::Null)
            }
            "disconnect" => {
                self.resume = None;
                self.done = true;
                Ok(Value::Null)
            }
            "" => Err("a request needs a `command`".into()),
            other => Err(format!("`{other}` is not a request the WAVE debugger handles")),
        }
    }
}

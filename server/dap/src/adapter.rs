//! The adapter: DAP requests in, responses and events out, over a [`Debugger`].
//!
//! Threads are the waves of the current workgroup (thread id = wave + 1), named
//! `wg (x,y,z) · wave N`. Every stop is all-stop. A resumed execution (continue or a step)
//! runs in slices of [`SLICE`] instructions between which the I/O loop reads new requests, so
//! `pause` and `disconnect` are answered at once.

use std::collections::HashMap;

use serde_json::{Value, json};
use wave_emulator::{Stop, Trap, WaveState};

use crate::debugger::{ADVANCE, Debugger};
use crate::expr::{self, Env, Expr};
use crate::launch::{self, Program};

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

const SPECIALS: [&str; 16] = wave_isa::SPECIAL_REGISTERS;

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

/// One wave, seen by expressions.
struct WaveEnv<'a> {
    session: &'a wave_emulator::Session,
    grid: [u32; 3],
    size: [u32; 3],
    wave: u32,
    active: u64,
}

impl<'a> WaveEnv<'a> {
    fn new(dbg: &'a Debugger, wave: u32) -> WaveEnv<'a> {
        let active = dbg.session.wave_active(wave);
        WaveEnv {
            session: &dbg.session,
            grid: dbg.dispatch.grid,
            size: workgroup_size(dbg),
            wave,
            active,
        }
    }

    /// Special register `i` (spec 3.3 order) of `lane`.
    fn special_at(&self, lane: u32, i: usize) -> u32 {
        let w = self.session.wave_width();
        let [x, y, z] = self.size;
        let t = self.wave * w + lane;
        let wg = self.session.workgroup();
        match i {
            0 => t % x.max(1),
            1 => (t / x.max(1)) % y.max(1),
            2 => t / (x * y).max(1),
            3 => self.wave,
            4 => lane,
            5..=7 => wg[i - 5],
            8 => x,
            9 => y,
            10 => z,
            11..=13 => self.grid[i - 11],
            14 => w,
            _ => (x * y * z).div_ceil(w.max(1)),
        }
    }
}

impl Env for WaveEnv<'_> {
    fn width(&self) -> u32 {
        self.session.wave_width()
    }
    fn wave(&self) -> u32 {
        self.wave
    }
    fn active(&self) -> u64 {
        self.active
    }
    fn register(&self, r: u16, lane: u32) -> Option<u32> {
        self.session.register(self.wave, r, lane)
    }
    fn predicate(&self, p: u8, lane: u32) -> Option<bool> {
        let preds = self.session.predicates(self.wave)?;
        preds.get(usize::from(p)).map(|m| m >> lane & 1 == 1)
    }
    fn special(&self, name: &str, lane: u32) -> Option<u32> {
        let i = SPECIALS.iter().position(|s| *s == name)?;
        Some(self.special_at(lane, i))
    }
    fn memory(&self, local: bool, addr: u64) -> Option<u32> {
        let mem = if local { self.session.local() } else { self.session.device() };
        let a = usize::try_from(addr).ok()?;
        let b = mem.get(a..a.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The workgroup size of the dispatch.
fn workgroup_size(dbg: &Debugger) -> [u32; 3] {
    let kernel = dbg
        .dispatch
        .kernel
        .as_ref()
        .and_then(|k| dbg.module.kernels.iter().find(|x| &x.name == k))
        .or(dbg.module.kernels.first());
    dbg.dispatch.workgroup.or(kernel.and_then(|k| k.workgroup_size)).unwrap_or([1, 1, 1])
}

/// Special register `i` of `lane` in `wave`.
fn special(dbg: &Debugger, wave: u32, lane: u32, i: usize) -> u32 {
    WaveEnv::new(dbg, wave).special_at(lane, i)
}

/// The lanes for which breakpoint `b` holds: its condition in the active lanes (or, in focus
/// mode, the focus lane only).
fn lanes_hit(b: &Breakpoint, env: &WaveEnv<'_>, focus: u32, pc: u32) -> Result<u64, String> {
    let lanes = match b.mode {
        Mode::Any => env.active,
        Mode::Focus => env.active & (1u64 << focus.min(63)),
    };
    let at_pc = b.by_pc.iter().find(|(p, _)| *p == pc).map(|(_, e)| e);
    let Some(cond) = at_pc.or(b.condition.as_ref()) else { return Ok(lanes) };
    let mut mask = 0;
    for l in 0..env.width() {
        if lanes >> l & 1 == 1 && expr::eval(cond, env, l)?.truthy() {
            mask |= 1 << l;
        }
    }
    Ok(mask)
}

fn lanes_text(mask: u64, w: u32) -> String {
    let lanes: Vec<String> = (0..w).filter(|l| mask >> l & 1 == 1).map(|l| l.to_string()).collect();
    if lanes.len() > 12 {
        format!("{} lanes", lanes.len())
    } else if lanes.is_empty() {
        "no lane".into()
    } else {
        format!("lane{} {}", if lanes.len() == 1 { "" } else { "s" }, lanes.join(", "))
    }
}

/// The value of a source variable in `lane`, as its type writes it.
fn var_value(
    session: &wave_emulator::Session,
    wave: u32,
    v: &wave_wbin::VarLocation,
    lane: u32,
    hex: bool,
) -> String {
    use wave_wbin::VarType;
    let bits = session.register(wave, u16::from(v.register), lane).unwrap_or(0);
    if hex {
        return format!("0x{bits:x}");
    }
    match v.ty {
        VarType::U32 => bits.to_string(),
        VarType::I32 => (bits as i32).to_string(),
        VarType::F32 => format!("{:?}", f32::from_bits(bits)),
        VarType::Bool => (bits & 1 == 1).to_string(),
        VarType::F16 => format!("{:?}", half::f16::from_bits(bits as u16).to_f32()),
        VarType::F64 => {
            let high = session.register(wave, u16::from(v.register) + 1, lane).unwrap_or(0);
            format!("{:?}", f64::from_bits(u64::from(high) << 32 | u64::from(bits)))
        }
    }
}

fn format_bits(bits: u32, hex: bool) -> String {
    if hex {
        format!("0x{bits:08x}")
    } else {
        format!("{bits} (0x{bits:x}, {:?}f)", f32::from_bits(bits))
    }
}

/// Parses a value typed by the user: an integer (decimal, `0x`, negative) or a float.
fn parse_bits(text: &str) -> Option<u32> {
    let t = text.trim();
    if let Some(n) = wave_conformance::options::parse_number(t) {
        return u32::try_from(n).ok();
    }
    if let Some(n) = t.strip_prefix('-').and_then(wave_conformance::options::parse_number) {
        return i32::try_from(-(n as i64)).ok().map(|v| v as u32);
    }
    t.trim_end_matches('f').parse::<f32>().ok().map(f32::to_bits)
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The bytes of base64 `text` (whitespace allowed), or `None` when it is not base64.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let clean: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(clean).ok()
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

    fn initialize(&mut self, args: &Value) -> Reply {
        self.lines_start_at1 = args.get("linesStartAt1").and_then(Value::as_bool).unwrap_or(true);
        self.ansi = args.get("supportsANSIStyling").and_then(Value::as_bool).unwrap_or(false);
        self.event("initialized", json!({}));
        Ok(json!({
            "supportsConfigurationDoneRequest": true,
            "supportsFunctionBreakpoints": true,
            "supportsConditionalBreakpoints": true,
            "supportsHitConditionalBreakpoints": true,
            "supportsLogPoints": true,
            "supportsEvaluateForHovers": true,
            "supportsStepBack": true,
            "supportsSetVariable": true,
            "supportsSetExpression": true,
            "supportsExceptionInfoRequest": true,
            "supportsValueFormattingOptions": true,
            "supportsTerminateRequest": true,
            "supportsReadMemoryRequest": true,
            "supportsWriteMemoryRequest": true,
            "supportsDisassembleRequest": true,
            "supportsSteppingGranularity": true,
            "supportsInstructionBreakpoints": true,
            "supportsBreakpointLocationsRequest": true,
            "supportsANSIStyling": true,
            "exceptionBreakpointFilters": [
                {"filter": "traps", "label": "Traps (out of bounds, deadlock, divergent barrier, budget)", "default": true}
            ],
            "breakpointModes": [
                {"mode": "any", "label": "Any active lane", "description": "Stop when the condition holds in any active lane", "appliesTo": ["source", "instruction"]},
                {"mode": "focus", "label": "Focus lane", "description": "Stop when the focus lane is active and the condition holds in it", "appliesTo": ["source", "instruction"]}
            ]
        }))
    }

    fn launch(&mut self, args: &Value) -> Reply {
        if self.launched {
            return Err("a program is already being debugged".into());
        }
        let Program {
            module,
            dispatch,
            device,
            source,
            line_offset,
            stop_on_entry,
            warnings,
            from_kernel_source,
        } = launch::load(args)?;
        let kernel = match &dispatch.kernel {
            Some(k) => module.kernels.iter().position(|x| &x.name == k).unwrap_or(0),
            None => 0,
        };
        let dbg = Debugger::new(module, dispatch, device)
            .map_err(|t| format!("the dispatch cannot start: {t}"))?;
        for w in warnings.iter().chain(dbg.session.warnings().iter()) {
            self.output("console", format!("warning: {w}"));
        }
        self.dbg = Some(dbg);
        self.program = Some(ProgramInfo {
            source,
            line_offset,
            from_kernel_source,
            kernel,
            listing: Vec::new(),
        });
        let listing = self.listing();
        if let Some(p) = self.program.as_mut() {
            p.listing = listing;
        }
        self.launched = true;
        self.stop_on_entry = stop_on_entry;
        if self.configured {
            self.start();
        }
        Ok(Value::Null)
    }

    fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        if self.stop_on_entry {
            self.stop("entry", 0, "stopped at the kernel's first instruction".into(), Vec::new());
        } else {
            self.resume(Resume::Continue { first: false });
        }
    }

    fn resume(&mut self, r: Resume) {
        self.nodes.clear();
        self.resume = Some(r);
    }

    fn stop(&mut self, reason: &str, wave: u32, description: String, ids: Vec<i64>) {
        self.resume = None;
        self.nodes.clear();
        self.focus_wave = wave;
        let mut body = json!({
            "reason": reason,
            "threadId": wave + 1,
            "allThreadsStopped": true,
            "description": description,
        });
        if !ids.is_empty() {
            body["hitBreakpointIds"] = json!(ids);
        }
        if reason == "exception" {
            body["text"] = json!("trap");
        }
        self.event("stopped", body);
    }

    fn finish(&mut self) {
        self.resume = None;
        if let Some(dbg) = &self.dbg {
            let s = dbg.session.stats();
            let text = format!(
                "the dispatch finished: {} wave-instructions, {:.1}% of lanes active",
                s.instructions,
                100.0 * s.utilisation()
            );
            self.output("console", text);
        }
        if !self.terminated {
            self.terminated = true;
            self.event("exited", json!({"exitCode": 0}));
            self.event("terminated", json!({}));
        }
    }

    fn trapped(&mut self, trap: Trap) {
        let wave = trap.wave.unwrap_or(self.focus_wave);
        if let Some(l) = trap.lane {
            self.focus_lane = l;
        }
        let message = trap.to_string();
        self.output("stderr", format!("trap: {message}"));
        self.trap = Some((trap, wave));
        self.stop("exception", wave, message, Vec::new());
    }

    fn threads(&self) -> Value {
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
    fn function_at(&self, pc: u32) -> String {
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

    fn stack_trace(&mut self, args: &Value) -> Reply {
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
        for (depth, b) in view.blocks.iter().rev().filter(|b| b.kind == "call").enumerate() {
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

    fn node(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len()
    }

    fn scopes(&mut self, args: &Value) -> Reply {
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

    fn dim(&self, text: String) -> String {
        if self.ansi { format!("\u{1b}[2m{text}\u{1b}[0m") } else { text }
    }

    fn variables(&mut self, args: &Value) -> Reply {
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
}

impl Adapter {
    fn set_register(
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

    fn set_predicate(&mut self, wave: u32, p: u8, lane: u32, text: &str) -> Result<String, String> {
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

    fn lane_from_name(name: &str) -> Option<u32> {
        name.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
    }

    fn set_variable(&mut self, args: &Value) -> Reply {
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

    fn set_expression(&mut self, args: &Value) -> Reply {
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

    fn evaluate(&mut self, args: &Value) -> Reply {
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

    fn step(&mut self, command: &str, args: &Value) -> Reply {
        let wave = self.wave_of_thread(args)?;
        let dbg = self.stopped()?;
        let view = &dbg.session.waves()[wave as usize];
        if view.state == WaveState::Done {
            return Err(format!("wave {wave} has finished: step another thread or continue"));
        }
        let instruction = args.get("granularity").and_then(Value::as_str) == Some("instruction");
        let kind = match command {
            "stepIn" => StepKind::In,
            "stepOut" => StepKind::Out,
            _ if instruction => StepKind::Instruction,
            _ => StepKind::Line,
        };
        let line = view.pc.and_then(|pc| self.line_of(pc));
        let depth = view.blocks.iter().filter(|b| b.kind == "call").count();
        self.focus_wave = wave;
        self.resume(Resume::Step { wave, kind, line, depth, first: true });
        Ok(Value::Null)
    }

    fn step_back(&mut self, args: &Value) -> Reply {
        let wave = self.wave_of_thread(args)?;
        let dbg = self.stopped()?;
        let at = (0..dbg.pos()).rev().find(|&i| dbg.trail_at(i) == Some(wave));
        let Some(at) = at else {
            return Err(format!(
                "wave {wave} has not run an instruction yet: nothing to step back to"
            ));
        };
        self.dbg_mut()?.goto(at);
        self.trap = None;
        self.stop("step", wave, "stepped back one instruction".into(), Vec::new());
        Ok(Value::Null)
    }

    fn reverse_continue(&mut self) -> Reply {
        self.stopped()?;
        let mut dbg = self.dbg.take().ok_or("no program is being debugged")?;
        let focus = self.focus_lane;
        let (grid, size) = (dbg.dispatch.grid, workgroup_size(&dbg));
        let mut hit_at: Option<(u32, Vec<i64>)> = None;
        let found = dbg.search_back(&mut |session, wave| {
            if wave == ADVANCE {
                return false;
            }
            let Some(view) = session.waves().into_iter().find(|v| v.id == wave) else {
                return false;
            };
            let Some(pc) = view.pc else { return false };
            let ids: Vec<i64> = self
                .breakpoints
                .iter()
                .filter(|b| b.pcs.contains(&pc) && b.log.is_none())
                .filter(|b| {
                    let env = WaveEnv { session, grid, size, wave, active: view.active };
                    lanes_hit(b, &env, focus, pc).is_ok_and(|m| m != 0)
                })
                .map(|b| b.id)
                .collect();
            if ids.is_empty() {
                return false;
            }
            hit_at = Some((wave, ids));
            true
        });
        self.dbg = Some(dbg);
        self.trap = None;
        match (found, hit_at) {
            (Some(_), Some((wave, ids))) => {
                self.stop(
                    "breakpoint",
                    wave,
                    "reverse continue: the latest earlier breakpoint".into(),
                    ids,
                );
            }
            _ => {
                self.dbg_mut()?.goto(0);
                self.stop(
                    "entry",
                    0,
                    "reverse continue: no earlier breakpoint, back at the start".into(),
                    Vec::new(),
                );
            }
        }
        Ok(Value::Null)
    }

    fn exception_info(&mut self) -> Reply {
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

    fn memory_mut(&mut self, reference: &str) -> Result<&mut [u8], String> {
        let dbg = self.dbg_mut()?;
        match reference {
            "device" => Ok(dbg.session.device_mut()),
            "local" => Ok(dbg.session.local_mut()),
            other => Err(format!("unknown memory `{other}`: use `device` or `local`")),
        }
    }

    fn read_memory(&mut self, args: &Value) -> Reply {
        self.stopped()?;
        let reference = args
            .get("memoryReference")
            .and_then(Value::as_str)
            .ok_or("`memoryReference` is missing")?
            .to_owned();
        let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
        let count = args.get("count").and_then(Value::as_u64).ok_or("`count` is missing")? as usize;
        let base = reference_base(&reference)?;
        let mem = self.memory_mut(base.0)?;
        let start = (base.1 as i64 + offset).max(0) as usize;
        let end = start.saturating_add(count).min(mem.len());
        let data = if start < end { &mem[start..end] } else { &[][..] };
        Ok(
            json!({"address": format!("0x{start:x}"), "data": base64(data), "unreadableBytes": count - data.len()}),
        )
    }

    fn write_memory(&mut self, args: &Value) -> Reply {
        self.stopped()?;
        let reference = args
            .get("memoryReference")
            .and_then(Value::as_str)
            .ok_or("`memoryReference` is missing")?
            .to_owned();
        let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
        let data = args.get("data").and_then(Value::as_str).ok_or("`data` is missing")?;
        let bytes = unbase64(data).ok_or("`data` is not base64")?;
        let base = reference_base(&reference)?;
        let mem = self.memory_mut(base.0)?;
        let start = (base.1 as i64 + offset).max(0) as usize;
        if start + bytes.len() > mem.len() {
            return Err(format!(
                "{} bytes at {start} do not fit in {} bytes of {} memory",
                bytes.len(),
                mem.len(),
                base.0
            ));
        }
        mem[start..start + bytes.len()].copy_from_slice(&bytes);
        self.dbg_mut()?.modified();
        self.event("invalidated", json!({"areas": ["variables"]}));
        Ok(json!({"bytesWritten": bytes.len()}))
    }

    /// The kernel's instructions: pc, canonical text, module line.
    fn disassembly(&self) -> &[(u32, String, Option<u32>)] {
        self.program.as_ref().map_or(&[], |p| p.listing.as_slice())
    }

    fn listing(&self) -> Vec<(u32, String, Option<u32>)> {
        let (Some(dbg), Some(k)) = (self.dbg.as_ref(), self.kernel()) else { return Vec::new() };
        let mut out = Vec::new();
        let mut pc = k.code.start;
        while pc < k.code.end {
            let Some(bytes) = dbg.module.code.get(pc as usize..k.code.end as usize) else { break };
            let Ok((inst, size)) = wave_isa::Inst::decode(bytes) else { break };
            let mut text = String::new();
            wave_isa::write_inst(&inst, &mut text, &|o| {
                dbg.module.symbol_at(o).map(|s| s.name.clone())
            });
            if let Some(s) =
                dbg.module.symbols.iter().find(|s| s.offset == pc && k.code.contains(&s.offset))
            {
                text = format!("{}: {text}", s.name);
            }
            out.push((pc, text, dbg.module.line_at(pc).map(|l| l.line)));
            pc += size as u32;
        }
        out
    }

    fn disassemble(&mut self, args: &Value) -> Reply {
        self.dbg()?;
        let reference = args
            .get("memoryReference")
            .and_then(Value::as_str)
            .ok_or("`memoryReference` is missing")?;
        let base = parse_address(reference)
            .ok_or_else(|| format!("`{reference}` is not an instruction address like 0x18"))?;
        let offset = args.get("offset").and_then(Value::as_i64).unwrap_or(0);
        let inst_offset = args.get("instructionOffset").and_then(Value::as_i64).unwrap_or(0);
        let count = args
            .get("instructionCount")
            .and_then(Value::as_u64)
            .ok_or("`instructionCount` is missing")?
            .min(100_000) as i64;
        let list = self.disassembly();
        let address = base as i64 + offset;
        let index =
            list.iter().position(|(pc, _, _)| i64::from(*pc) >= address).unwrap_or(list.len())
                as i64;
        let source = self.source_json();
        let has_source = self.program.as_ref().is_some_and(|p| p.source.is_some());
        let mut out = Vec::new();
        for i in index + inst_offset..index + inst_offset + count {
            match usize::try_from(i).ok().and_then(|i| list.get(i)) {
                Some((pc, text, line)) => {
                    let mut v = json!({"address": format!("0x{pc:x}"), "instruction": text});
                    if let Some(l) = line.filter(|_| has_source) {
                        v["location"] = source.clone();
                        v["line"] = json!(self.client_line(l));
                    }
                    out.push(v);
                }
                None => out.push(json!({"address": format!("0x{:x}", (address + (i - index) * 6).max(0)), "instruction": "(no instruction)", "presentationHint": "invalid"})),
            }
        }
        Ok(json!({"instructions": out}))
    }
}

fn parse_address(text: &str) -> Option<u32> {
    let t = text.trim();
    match t.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// `device`, `local`, or `device+0x40`.
fn reference_base(reference: &str) -> Result<(&'static str, usize), String> {
    let (name, plus) = match reference.split_once('+') {
        Some((n, o)) => (
            n.trim(),
            parse_address(o).ok_or_else(|| format!("bad offset in `{reference}`"))? as usize,
        ),
        None => (reference.trim(), 0),
    };
    match name {
        "device" => Ok(("device", plus)),
        "local" => Ok(("local", plus)),
        other => Err(format!("unknown memory `{other}`: use `device` or `local`")),
    }
}

/// `5`, `==5`, `>5`, `>=5`, `%5`.
fn parse_hit_condition(text: &str) -> Result<(String, u64), String> {
    let t = text.trim();
    let (op, n) = ["==", ">=", ">", "%", "="]
        .iter()
        .find_map(|op| t.strip_prefix(op).map(|n| (op.trim_start_matches('='), n)))
        .unwrap_or(("", t));
    let n: u64 =
        n.trim().parse().map_err(|_| format!("hit condition `{text}`: use N, >N, >=N or %N"))?;
    Ok((if op.is_empty() { "==".into() } else { op.to_owned() }, n))
}

fn hit_count_ok(hit: &Option<(String, u64)>, hits: u64) -> bool {
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
    fn new_breakpoint(
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

    fn bp_json(&self, b: &Breakpoint, problem: Option<String>, line: Option<u32>) -> Value {
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
    fn lines_with_code(&self) -> Vec<(u32, u32)> {
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

    fn is_program_source(&self, source: &Value) -> bool {
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

    fn set_breakpoints(&mut self, args: &Value) -> Reply {
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

    fn replace_kind(&mut self, prefix: &str) {
        if let Some(old) = self.source_bps.remove(prefix) {
            self.breakpoints.retain(|b| !old.contains(&b.id));
        }
    }

    /// Replaces the breakpoints of one kind (`key`): each requested one resolved by `resolve`
    /// to its instruction offsets and, when there are none, why.
    fn set_kind(&mut self, key: &str, args: &Value, resolve: &Resolver) -> Reply {
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

    fn set_function_breakpoints(&mut self, args: &Value) -> Reply {
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

    fn set_instruction_breakpoints(&mut self, args: &Value) -> Reply {
        self.set_kind("@instructions", args, &|a, spec| {
            let reference = spec.get("instructionReference").and_then(Value::as_str).unwrap_or("");
            let offset = spec.get("offset").and_then(Value::as_i64).unwrap_or(0);
            let pc = parse_address(reference).map(|p| (i64::from(p) + offset) as u32);
            let pcs =
                pc.filter(|p| a.disassembly().iter().any(|(q, _, _)| q == p)).into_iter().collect();
            (pcs, format!("`{reference}`+{offset}: not the address of an instruction"))
        })
    }

    fn breakpoint_locations(&mut self, args: &Value) -> Reply {
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
    fn breakpoint_hit(&mut self, wave: u32, pc: u32) -> Option<(Vec<i64>, String)> {
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

    /// Runs the resumed execution for up to [`SLICE`] instructions.
    pub fn run_slice(&mut self) {
        let Some(resume) = self.resume.clone() else { return };
        let result = self.slice(resume);
        if let Err(trap) = result {
            self.trapped(trap);
        }
        self.flush_events();
    }

    fn slice(&mut self, resume: Resume) -> Result<(), Trap> {
        match resume {
            Resume::Continue { mut first } => {
                for _ in 0..SLICE {
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    let Some(wave) = dbg.next_runnable() else {
                        if dbg.step(ADVANCE)? == Stop::Finished {
                            self.finish();
                            return Ok(());
                        }
                        continue;
                    };
                    let pc = dbg.session.wave_pc(wave);
                    if !first
                        && let Some(pc) = pc
                        && let Some((ids, description)) = self.breakpoint_hit(wave, pc)
                    {
                        self.stop("breakpoint", wave, description, ids);
                        return Ok(());
                    }
                    first = false;
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    if dbg.step(wave)? == Stop::Finished {
                        self.finish();
                        return Ok(());
                    }
                }
                self.resume = Some(Resume::Continue { first: false });
                Ok(())
            }
            Resume::Step { wave, kind, line, depth, mut first } => {
                for _ in 0..SLICE {
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    let state = dbg.session.wave_state(wave).unwrap_or(WaveState::Done);
                    match state {
                        WaveState::Done => {
                            let next = dbg.next_runnable();
                            match next {
                                Some(n) => self.stop(
                                    "step",
                                    n,
                                    format!("wave {wave} finished; wave {n} runs next"),
                                    Vec::new(),
                                ),
                                None if dbg.session.is_finished() => self.finish(),
                                None => {
                                    dbg.step(ADVANCE)?;
                                    continue;
                                }
                            }
                            return Ok(());
                        }
                        WaveState::AtBarrier => {
                            // The others run to the barrier; the stepped wave waits for them.
                            let other = dbg.next_runnable().unwrap_or(ADVANCE);
                            if dbg.step(other)? == Stop::NextWorkgroup {
                                self.stop(
                                    "step",
                                    0,
                                    "the workgroup finished; the next one started".into(),
                                    Vec::new(),
                                );
                                return Ok(());
                            }
                            continue;
                        }
                        WaveState::Running => {}
                    }
                    let depth_now = dbg.session.call_depth(wave);
                    let pc_now = dbg.session.wave_pc(wave);
                    let line_now = pc_now.and_then(|pc| self.line_of(pc));
                    if !first {
                        let arrived = match kind {
                            StepKind::Instruction | StepKind::In => true,
                            StepKind::Line => {
                                depth_now < depth || (depth_now == depth && line_now != line)
                            }
                            StepKind::Out => depth_now < depth,
                        };
                        if arrived {
                            self.stop("step", wave, String::new(), Vec::new());
                            return Ok(());
                        }
                        if matches!(kind, StepKind::Line | StepKind::Out)
                            && let Some(pc) = pc_now
                            && let Some((ids, description)) = self.breakpoint_hit(wave, pc)
                        {
                            self.stop("breakpoint", wave, description, ids);
                            return Ok(());
                        }
                    }
                    first = false;
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    match dbg.step(wave)? {
                        Stop::Finished => {
                            self.finish();
                            return Ok(());
                        }
                        Stop::NextWorkgroup => {
                            self.stop(
                                "step",
                                0,
                                "the workgroup finished; the next one started".into(),
                                Vec::new(),
                            );
                            return Ok(());
                        }
                        _ => {}
                    }
                }
                self.resume = Some(Resume::Step { wave, kind, line, depth, first });
                Ok(())
            }
            Resume::Workgroup(id) => {
                for _ in 0..SLICE {
                    let Some(dbg) = self.dbg.as_mut() else { return Ok(()) };
                    match dbg.step_any()? {
                        (_, Stop::Finished) => {
                            self.output(
                                "console",
                                format!("workgroup {id:?} never started: the dispatch finished"),
                            );
                            self.finish();
                            return Ok(());
                        }
                        (_, Stop::NextWorkgroup) if dbg.session.workgroup() == id => {
                            self.stop(
                                "goto",
                                0,
                                format!("workgroup {id:?}, at its start"),
                                Vec::new(),
                            );
                            return Ok(());
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
        }
    }
}

/// A log message with each `{expression}` replaced by its value in `lane`.
fn interpolate(message: &str, env: &WaveEnv<'_>, lane: u32) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let text = &rest[open + 1..open + close];
        match expr::parse(text).and_then(|e| expr::eval(&e, env, lane)) {
            Ok(v) => out.push_str(&v.to_string()),
            Err(e) => out.push_str(&format!("<{text}: {e}>")),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

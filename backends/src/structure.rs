//! From a kernel's instructions to a tree: functions, `if`/`else` and `loop` blocks.
//!
//! WAVE control flow is structured, so every kernel is a tree of blocks. A function is the code
//! from its entry (the kernel's first instruction, or a `call` target) up to the first
//! top-level `return` or `halt` (inclusive), or the end of the kernel's code: execution never
//! gets past an unguarded `return` or `halt` at the function's own level, so the code after
//! it belongs to other functions. Everything a backend must refuse because the `.wbin` itself
//! is malformed (an undecodable instruction, a register outside R, unbalanced blocks, a call
//! into the middle of a block, a guarded control-flow instruction) is found here, once for
//! all targets.

use wave_isa::{Flags, Flow, Inst, Operand, Operation};
use wave_wbin::{Kernel, Module};

use crate::kind::Kind;
use crate::{Problem, codes};

/// One decoded instruction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Instr {
    /// Byte offset in the module's code.
    pub offset: u32,
    pub inst: Inst,
    pub op: Operation,
    /// Its row's flags: where control goes after it, memory, other lanes.
    pub flags: Flags,
}

impl Instr {
    /// The predicate source of `if`, `break`, `continue`, `select` and the votes.
    pub fn pred(&self) -> (u8, bool) {
        (self.inst.modifier & 3, self.inst.modifier & 4 != 0)
    }

    /// Register `rs3` (extension word bits 7:0).
    pub fn rs3(&self) -> u8 {
        (self.inst.ext.unwrap_or(0) & 0xFF) as u8
    }

    /// Register `rs4` (extension word bits 15:8).
    pub fn rs4(&self) -> u8 {
        ((self.inst.ext.unwrap_or(0) >> 8) & 0xFF) as u8
    }

    /// The immediate second source, when the instruction has one instead of `rs2`.
    pub fn imm2(&self) -> Option<u32> {
        if self.inst.has_immediate_source() { self.inst.ext } else { None }
    }

    /// The memory offset of an address operand.
    pub fn mem_offset(&self) -> i32 {
        let info = self.inst.info();
        let has = info.is_some_and(|i| i.operands.contains(&Operand::Address { offset: true }));
        if has { self.inst.ext.unwrap_or(0) as i32 } else { 0 }
    }

    /// How the backends treat it.
    pub fn kind(&self) -> Kind {
        Kind::of(self.op)
    }

    /// Whether the instruction is a wave operation (reads other lanes).
    pub fn is_wave_op(&self) -> bool {
        matches!(self.kind(), Kind::Wave(_))
    }
}

/// A node of a block.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// An instruction that is not a block: arithmetic, memory, wave operations, `break`,
    /// `continue`, `call`, `return`, `halt`, `barrier`, ...
    Inst(usize),
    /// `if` at `at`, its then-block, `else` (if any) and else-block, `endif` at `end`.
    If { at: usize, then: Vec<Node>, else_at: Option<usize>, otherwise: Vec<Node>, end: usize },
    /// `loop` at `at`, its body, `endloop` at `end`.
    Loop { at: usize, body: Vec<Node>, end: usize },
}

/// A function: the kernel body (index 0) or a `call` target.
#[derive(Clone, Debug)]
pub(crate) struct Function {
    /// Index of its first instruction.
    pub entry: usize,
    pub body: Vec<Node>,
    /// Functions it calls, by index into [`Program::functions`].
    pub calls: Vec<usize>,
}

/// A kernel ready for a backend.
#[derive(Clone, Debug)]
pub(crate) struct Program<'m> {
    pub kernel: &'m Kernel,
    pub insts: Vec<Instr>,
    /// `functions[0]` is the kernel body.
    pub functions: Vec<Function>,
    /// Whether any function reachable from the kernel uses a wave operation: the backends
    /// then run the whole kernel in wave-uniform control flow (see `lower`).
    pub uses_wave_ops: bool,
    /// Registers (R), at least as many as parameters and at least one.
    pub registers: usize,
}

impl Program<'_> {
    /// The function whose entry is instruction `index`.
    pub fn function_at(&self, index: usize) -> Option<usize> {
        self.functions.iter().position(|f| f.entry == index)
    }

    /// The `call` target of instruction `index`, as a function index.
    pub fn callee(&self, index: usize) -> Option<usize> {
        let target = self.insts.get(index)?.inst.ext?;
        let at = self.insts.binary_search_by_key(&target, |i| i.offset).ok()?;
        self.function_at(at)
    }
}

/// Builds the tree of `kernel`, or the problems that make it untranslatable.
pub(crate) fn analyse<'m>(
    module: &'m Module,
    kernel: &'m Kernel,
) -> Result<Program<'m>, Vec<Problem>> {
    let mut problems = Vec::new();
    let problem = |offset: u32, message: String| {
        Problem::error(codes::INVALID, &kernel.name, Some(offset), message)
    };
    // Decode every instruction of the kernel's range.
    let mut insts = Vec::new();
    let mut at = kernel.code.start;
    while at < kernel.code.end {
        let bytes = module.code.get(at as usize..kernel.code.end as usize).unwrap_or(&[]);
        match Inst::decode(bytes) {
            Ok((inst, size)) => {
                // An opcode with a row always has an operation, unless the modifier names none.
                let (Some(op), Some(info)) = (Operation::of(&inst), inst.info()) else {
                    problems.push(problem(at, format!("unknown opcode 0x{:02x}", inst.opcode)));
                    break;
                };
                insts.push(Instr { offset: at, inst, op, flags: info.flags });
                at += size as u32;
            }
            Err(e) => {
                problems.push(problem(at, format!("undecodable instruction: {e}")));
                break;
            }
        }
    }
    let registers = usize::from(kernel.registers.max(1));
    if kernel.params.len() > registers {
        problems.push(problem(
            kernel.code.start,
            format!(
                "the kernel has {} parameters but {} registers: parameters are preloaded into r0, r1, ...",
                kernel.params.len(),
                registers
            ),
        ));
    }
    for i in &insts {
        for (first, count) in registers_used(&i.inst) {
            let last = usize::from(first) + usize::from(count);
            if last > registers {
                problems.push(problem(
                    i.offset,
                    format!(
                        "`{}` uses r{} but the kernel declares {registers} register{}",
                        mnemonic(i),
                        last - 1,
                        if registers == 1 { "" } else { "s" }
                    ),
                ));
            }
        }
        if i.inst.guard.is_some() && is_unguardable(i) {
            problems.push(Problem::error(
                codes::GUARDED_CONTROL,
                &kernel.name,
                Some(i.offset),
                format!("`{}` cannot be guarded by a predicate", mnemonic(i)),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    // Block nesting over the whole code: every block must close, and a call target must lie
    // outside every block.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Open {
        If,
        Else,
        Loop,
    }
    let mut depth = Vec::with_capacity(insts.len());
    let mut stack: Vec<(Open, usize)> = Vec::new();
    for (n, i) in insts.iter().enumerate() {
        depth.push(stack.len());
        match i.flags.flow {
            Flow::If => stack.push((Open::If, n)),
            Flow::Loop => stack.push((Open::Loop, n)),
            Flow::Else => match stack.last() {
                Some((Open::If, _)) => {
                    if let Some(top) = stack.last_mut() {
                        top.0 = Open::Else;
                    }
                }
                Some((Open::Else | Open::Loop, _)) | None => {
                    problems.push(problem(i.offset, "`else` without a matching `if`".into()));
                }
            },
            Flow::Endif => match stack.last() {
                Some((Open::If | Open::Else, _)) => {
                    stack.pop();
                }
                Some((Open::Loop, _)) | None => {
                    problems.push(problem(i.offset, "`endif` without a matching `if`".into()));
                }
            },
            Flow::Endloop => match stack.last() {
                Some((Open::Loop, _)) => {
                    stack.pop();
                }
                Some((Open::If | Open::Else, _)) | None => {
                    problems.push(problem(i.offset, "`endloop` without a matching `loop`".into()));
                }
            },
            Flow::Break | Flow::Continue => {
                if !stack.iter().any(|(open, _)| *open == Open::Loop) {
                    problems.push(problem(i.offset, format!("`{}` outside a loop", mnemonic(i))));
                }
            }
            // Call targets are checked below; the rest opens or closes no block.
            Flow::Next | Flow::Call | Flow::Return | Flow::Halt => {}
        }
        if i.flags.flow.opens() && stack.len() == wave_isa::target::MAX_DIVERGENCE_DEPTH + 1 {
            problems.push(problem(
                i.offset,
                format!(
                    "control flow nested deeper than {} levels, the most any target supports",
                    wave_isa::target::MAX_DIVERGENCE_DEPTH
                ),
            ));
        }
    }
    for (_, open) in &stack {
        problems.push(problem(insts[*open].offset, "this block is never closed".into()));
    }
    // Function entries: the kernel start, then every call target in code order.
    let mut entries = vec![0usize];
    for i in &insts {
        if i.op != Operation::Call {
            continue;
        }
        let target = i.inst.ext.unwrap_or(u32::MAX);
        match insts.binary_search_by_key(&target, |x| x.offset) {
            Ok(n) if depth[n] == 0 => {
                if !entries.contains(&n) {
                    entries.push(n);
                }
            }
            Ok(_) => problems.push(problem(
                i.offset,
                "the call target is inside an `if` or a loop; functions must start outside every block"
                    .into(),
            )),
            Err(_) => problems.push(problem(
                i.offset,
                format!("call target {target} is not an instruction of this kernel"),
            )),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    entries[1..].sort_unstable();
    let mut functions = Vec::new();
    for &entry in &entries {
        let mut pos = entry;
        let body = parse_block(&insts, &mut pos, true);
        functions.push(Function { entry, body, calls: Vec::new() });
    }
    let mut program = Program { kernel, insts, functions, uses_wave_ops: false, registers };
    for f in 0..program.functions.len() {
        let mut calls = Vec::new();
        walk(&program.functions[f].body, &mut |n| {
            if program.insts[n].op == Operation::Call
                && let Some(callee) = program.callee(n)
                && !calls.contains(&callee)
            {
                calls.push(callee);
            }
        });
        program.functions[f].calls = calls;
    }
    // Wave operations anywhere reachable from the kernel body.
    let reachable = program.reachable();
    let mut wave = false;
    for &f in &reachable {
        walk(&program.functions[f].body, &mut |n| wave |= program.insts[n].is_wave_op());
    }
    program.uses_wave_ops = wave;
    Ok(program)
}

impl Program<'_> {
    /// Functions reachable from the kernel body (the body first).
    pub fn reachable(&self) -> Vec<usize> {
        let mut seen = vec![0usize];
        let mut next = 0;
        while next < seen.len() {
            for &c in &self.functions[seen[next]].calls {
                if !seen.contains(&c) {
                    seen.push(c);
                }
            }
            next += 1;
        }
        seen
    }

    /// A call that closes a cycle of calls (recursion), if any: the backends inline calls.
    pub fn recursive_call(&self) -> Option<usize> {
        // Depth-first search for a back edge, reporting the call instruction.
        fn visit(
            p: &Program<'_>,
            f: usize,
            stack: &mut Vec<usize>,
            done: &mut Vec<bool>,
        ) -> Option<usize> {
            stack.push(f);
            let mut found = None;
            walk(&p.functions[f].body, &mut |n| {
                if found.is_some() || p.insts[n].op != Operation::Call {
                    return;
                }
                if let Some(c) = p.callee(n) {
                    if stack.contains(&c) {
                        found = Some(n);
                    } else if !done[c] {
                        found = visit(p, c, stack, done);
                    }
                }
            });
            stack.pop();
            done[f] = true;
            found
        }
        let mut done = vec![false; self.functions.len()];
        visit(self, 0, &mut Vec::new(), &mut done)
    }
}

/// Calls `f` with every instruction index of a block, nested blocks included (not the
/// `if`/`else`/`endif`/`loop`/`endloop` markers).
pub(crate) fn walk(block: &[Node], f: &mut impl FnMut(usize)) {
    for node in block {
        match node {
            Node::Inst(n) => f(*n),
            Node::If { then, otherwise, .. } => {
                walk(then, f);
                walk(otherwise, f);
            }
            Node::Loop { body, .. } => walk(body, f),
        }
    }
}

/// Parses nodes from `*pos` until the block's end marker (`else`, `endif`, `endloop`, left
/// at `*pos`) or, at a function's top level, past an unguarded `return` or `halt`.
fn parse_block(insts: &[Instr], pos: &mut usize, top: bool) -> Vec<Node> {
    let mut block = Vec::new();
    while let Some(i) = insts.get(*pos) {
        match i.flags.flow {
            Flow::Else | Flow::Endif | Flow::Endloop => {
                if top {
                    // Unreachable for balanced code whose entries are outside blocks.
                    *pos = insts.len();
                }
                return block;
            }
            Flow::If => {
                let at = *pos;
                *pos += 1;
                let then = parse_block(insts, pos, false);
                let (else_at, otherwise) =
                    if insts.get(*pos).is_some_and(|x| x.flags.flow == Flow::Else) {
                        let e = *pos;
                        *pos += 1;
                        (Some(e), parse_block(insts, pos, false))
                    } else {
                        (None, Vec::new())
                    };
                let end = *pos;
                *pos += 1;
                block.push(Node::If { at, then, else_at, otherwise, end });
            }
            Flow::Loop => {
                let at = *pos;
                *pos += 1;
                let body = parse_block(insts, pos, false);
                let end = *pos;
                *pos += 1;
                block.push(Node::Loop { at, body, end });
            }
            flow @ (Flow::Next
            | Flow::Break
            | Flow::Continue
            | Flow::Call
            | Flow::Return
            | Flow::Halt) => {
                block.push(Node::Inst(*pos));
                *pos += 1;
                let ends = flow == Flow::Return || (flow == Flow::Halt && i.inst.guard.is_none());
                if top && ends {
                    return block;
                }
            }
        }
    }
    block
}

/// Control flow that acts on the whole wave and so takes no guard (`halt` takes one), and
/// barriers.
fn is_unguardable(i: &Instr) -> bool {
    !matches!(i.flags.flow, Flow::Next | Flow::Halt) || i.op == Operation::Barrier
}

/// The instruction's canonical mnemonic.
pub(crate) fn mnemonic(i: &Instr) -> &'static str {
    i.inst.info().map_or("?", |o| o.mnemonic)
}

/// `(first register, count)` for every register operand.
fn registers_used(inst: &Inst) -> Vec<(u8, u8)> {
    let Some(op) = inst.info() else { return Vec::new() };
    let mut used = Vec::new();
    for operand in op.operands {
        match operand {
            Operand::Reg { slot, .. } => used.push((
                inst.register(*slot),
                wave_isa::operand_registers(op, operand, inst.modifier),
            )),
            Operand::RegOrImm(_) if !inst.has_immediate_source() => used.push((inst.rs2, 1)),
            Operand::Address { .. } => used.push((inst.rs1, 1)),
            _ => {}
        }
    }
    used
}

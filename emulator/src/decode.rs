//! Decoding a kernel once into the interpreter's form.
//!
//! Every instruction of the kernel becomes one [`Op`] indexed by instruction number (not byte
//! offset): register operands are resolved to rows of the wave's register file, immediates
//! become extra constant rows (so every ALU form is register-register in the interpreter),
//! and structured control flow gets its matching targets (`if` → its `else` or `endif`,
//! `else` → `endif`, `loop` → `endloop`, `break`/`continue` → the innermost `endloop`,
//! `call` → the callee's first instruction). A kernel whose blocks do not balance is refused
//! here, before it runs.

use wave_isa::{Flow, Inst, Modifier, Operand, info};
use wave_wbin::{Kernel, Module};

/// What an instruction does: the isa crate's decoding, shared with the backends.
pub(crate) use wave_isa::Operation as Code;

/// One decoded instruction.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Op {
    pub code: Code,
    /// Destination row (register or predicate index).
    pub rd: u16,
    /// Source rows; immediates are constant rows.
    pub rs1: u16,
    pub rs2: u16,
    pub rs3: u16,
    pub rs4: u16,
    /// Memory offset, or the raw modifier for half selects.
    pub imm: i32,
    /// Guard: predicate index and negation.
    pub guard: Option<(u8, bool)>,
    /// Predicate source (index, negate) for if/break/continue/select/votes.
    pub pred: (u8, bool),
    /// Control-flow target (instruction index), see the module docs.
    pub target: u32,
    /// Byte offset of the instruction in the module's code, for traps and traces.
    pub pc: u32,
    /// Statistics class: 0 ALU, 1 memory, 2 wave operation, 3 control flow.
    pub class: u8,
    /// An atomic whose old value no instruction can read (its destination is `r0` without
    /// effect, or a register nothing reads afterwards): a workgroup run on a worker thread
    /// may record it for the commit instead of performing it (`exec::overlay`).
    pub discard: bool,
}

/// A decoded kernel.
#[derive(Clone)]
pub(crate) struct Program {
    /// Shared, so that the interpreter loop can hold the code while it mutates the machine.
    pub ops: std::sync::Arc<[Op]>,
    /// The encoded instructions, for traces.
    pub insts: Vec<Inst>,
    /// Registers the kernel declares (R).
    pub registers: usize,
    /// Constant rows: (row, value); rows start at `registers`.
    pub constants: Vec<u32>,
    /// Whether the kernel uses an instruction that needs CAP_MMA.
    pub uses_mma: Option<u32>,
    /// The registers a workgroup's start must set (to the parameters, or zero): those an
    /// instruction may read before the kernel writes them. The others are written before any
    /// read, whatever the previous workgroup left in them.
    pub live_in: Vec<u16>,
}

/// Why a kernel cannot be decoded.
pub(crate) struct DecodeFailure {
    pub pc: u32,
    pub message: String,
}

fn fail<T>(pc: u32, message: impl Into<String>) -> Result<T, DecodeFailure> {
    Err(DecodeFailure { pc, message: message.into() })
}

pub(crate) fn decode(module: &Module, kernel: &Kernel) -> Result<Program, DecodeFailure> {
    let insts: Vec<(u32, Inst)> = module.instructions(kernel).collect();
    let registers = usize::from(kernel.registers.max(1));
    if kernel.params.len() > registers {
        return fail(
            kernel.code.start,
            format!(
                "the kernel has {} parameters but {} registers: parameters are preloaded into r0, r1, ...",
                kernel.params.len(),
                registers
            ),
        );
    }
    // Immediates become constant rows after the registers, one per distinct value.
    let mut constants: Vec<u32> = Vec::new();
    let mut constant_index: std::collections::HashMap<u32, u16> = std::collections::HashMap::new();
    let mut constant_row = |value: u32, pc: u32| -> Result<u16, DecodeFailure> {
        if let Some(&row) = constant_index.get(&value) {
            return Ok(row);
        }
        let row = registers + constants.len();
        let Ok(row) = u16::try_from(row) else {
            return fail(pc, "more distinct immediates than the emulator's 65,535 register rows");
        };
        constants.push(value);
        constant_index.insert(value, row);
        Ok(row)
    };
    let mut ops = Vec::with_capacity(insts.len());
    let mut flows = Vec::with_capacity(insts.len());
    let mut uses_mma = None;
    for &(pc, inst) in &insts {
        let Some(op) = info(inst.opcode) else {
            return fail(pc, format!("unknown opcode 0x{:02x}", inst.opcode));
        };
        let Some(code) = Code::of(&inst) else {
            return fail(pc, format!("the emulator has no semantics for `{}`", op.mnemonic));
        };
        if code == Code::Mma && uses_mma.is_none() {
            uses_mma = Some(pc);
        }
        let ext = inst.ext.unwrap_or(0);
        let mut decoded = Op {
            code,
            rd: inst.rd.into(),
            rs1: inst.rs1.into(),
            rs2: inst.rs2.into(),
            rs3: (ext & 0xFF) as u16,
            rs4: ((ext >> 8) & 0xFF) as u16,
            imm: 0,
            guard: inst.guard.map(|g| (g.predicate, g.negate)),
            pred: (inst.modifier & 3, inst.modifier & 4 != 0),
            target: 0,
            pc,
            class: class_of(code),
            discard: false,
        };
        for operand in op.operands {
            match operand {
                Operand::RegOrImm(_) if inst.has_immediate_source() => {
                    decoded.rs2 = constant_row(ext, pc)?;
                }
                Operand::Imm(_) => decoded.rs1 = constant_row(ext, pc)?,
                Operand::Address { offset: true } => decoded.imm = ext as i32,
                _ => {}
            }
        }
        if op.modifier == Modifier::Halves {
            decoded.imm = i32::from(inst.modifier);
        }
        // Every register a form reads or writes must lie inside R.
        for (slot_value, count) in registers_used(&inst) {
            if usize::from(slot_value) + usize::from(count) > registers {
                return fail(
                    pc,
                    format!(
                        "`{}` uses r{} but the kernel declares {} registers",
                        op.mnemonic,
                        usize::from(slot_value) + usize::from(count) - 1,
                        registers
                    ),
                );
            }
        }
        if code == Code::Call {
            match insts.binary_search_by_key(&ext, |(pc, _)| *pc) {
                Ok(index) => decoded.target = index as u32,
                Err(_) => return fail(pc, format!("call target {ext} is not an instruction")),
            }
        }
        ops.push(decoded);
        flows.push(op.flags.flow);
    }
    let depths = link_blocks(&mut ops, &flows)?;
    // A function must start outside every block: a call into the middle of an `if` or a loop
    // would close blocks it never opened.
    for op in &ops {
        if op.code == Code::Call && depths.get(op.target as usize).copied().unwrap_or(0) != 0 {
            return fail(
                op.pc,
                "the call target is inside an `if` or a loop; functions must start outside every block",
            );
        }
    }
    let insts: Vec<Inst> = insts.into_iter().map(|(_, inst)| inst).collect();
    mark_discarded_results(&mut ops, &insts);
    let live_in = live_in(&insts, &flows, registers);
    Ok(Program { live_in, ops: ops.into(), insts, registers, constants, uses_mma })
}

/// Sets [`Op::discard`] on the atomics whose old value is never read: no instruction after
/// one reads its destination, nor, inside a loop, any instruction of the outermost loop
/// around it (the next iteration). Kernels with calls are left alone: a function's code may
/// run after any call.
fn mark_discarded_results(ops: &mut [Op], insts: &[Inst]) {
    if ops.iter().any(|o| o.code == Code::Call) {
        return;
    }
    let reads: Vec<Vec<(u16, u16)>> = insts.iter().map(registers_read).collect();
    for i in 0..ops.len() {
        let Code::Atomic(_, ty, _) = ops[i].code else { continue };
        let rd = ops[i].rd;
        if rd == 0 {
            ops[i].discard = true;
            continue;
        }
        let width = if ty.is_64() { 2 } else { 1 };
        // The outermost loop that holds the atomic, if any: its whole body runs again.
        let from = ops[..i]
            .iter()
            .position(|o| o.code == Code::Loop && o.target as usize >= i)
            .unwrap_or(i + 1);
        let read = reads.get(from..).into_iter().flatten().any(|regs| {
            regs.iter().any(|&(first, count)| first < rd + width && rd < first + count)
        });
        ops[i].discard = !read;
    }
}

/// The registers that may be read before they are written: every register but those the
/// straight-line start of the kernel (before its first block, call or guarded instruction
/// that could skip lanes) writes whole, with every lane active, before reading them.
fn live_in(insts: &[Inst], flows: &[Flow], registers: usize) -> Vec<u16> {
    let mut written = vec![false; registers];
    let mut read_first = vec![false; registers];
    for (inst, flow) in insts.iter().zip(flows) {
        if *flow != Flow::Next {
            break;
        }
        for (first, count) in registers_read(inst) {
            for r in usize::from(first)..(usize::from(first) + usize::from(count)).min(registers) {
                if !written[r] {
                    read_first[r] = true;
                }
            }
        }
        let Some(op) = inst.info() else { break };
        if inst.guard.is_some() || matches!(Code::of(inst), Some(Code::Atomic(..)) | None) {
            continue;
        }
        for operand in op.operands {
            if let Operand::Reg { slot, width, write: true } = operand
                && !matches!(width, wave_isa::Width::Half(_))
            {
                let first = usize::from(inst.register(*slot));
                let count = usize::from(wave_isa::operand_registers(op, operand, inst.modifier));
                for r in first..(first + count).min(registers) {
                    if !read_first[r] {
                        written[r] = true;
                    }
                }
            }
        }
    }
    (0..registers).filter(|&r| !written[r]).map(|r| r as u16).collect()
}

/// The registers an instruction reads: (first, count) per operand.
fn registers_read(inst: &Inst) -> Vec<(u16, u16)> {
    let Some(op) = inst.info() else { return vec![(0, u16::MAX)] };
    let mut read = Vec::new();
    for operand in op.operands {
        match operand {
            Operand::Reg { slot, write: false, .. } => read.push((
                u16::from(inst.register(*slot)),
                u16::from(wave_isa::operand_registers(op, operand, inst.modifier)),
            )),
            Operand::RegOrImm(_) if !inst.has_immediate_source() => {
                read.push((u16::from(inst.rs2), 1));
            }
            Operand::Address { .. } => read.push((u16::from(inst.rs1), 1)),
            _ => {}
        }
    }
    read
}

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

/// Matches structured control flow and fills in targets; returns each instruction's block
/// nesting depth. `flows[i]` is where control goes after `ops[i]`, from its row of the table:
/// the blocks are a property of the flow, whatever the opcode.
fn link_blocks(ops: &mut [Op], flows: &[Flow]) -> Result<Vec<u32>, DecodeFailure> {
    #[derive(Clone, Copy)]
    enum Open {
        If(usize),
        Else(usize, usize),
        Loop(usize),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut loop_members: Vec<Vec<usize>> = Vec::new();
    let mut depths = Vec::with_capacity(ops.len());
    for i in 0..ops.len() {
        let pc = ops[i].pc;
        depths.push(stack.len() as u32);
        match flows[i] {
            Flow::If => stack.push(Open::If(i)),
            Flow::Else => match stack.pop() {
                Some(Open::If(at)) => {
                    ops[at].target = i as u32;
                    stack.push(Open::Else(at, i));
                }
                Some(Open::Else(..) | Open::Loop(_)) | None => {
                    return fail(pc, "`else` without a matching `if`");
                }
            },
            Flow::Endif => match stack.pop() {
                Some(Open::If(at)) => ops[at].target = i as u32,
                Some(Open::Else(_, else_at)) => ops[else_at].target = i as u32,
                Some(Open::Loop(_)) | None => return fail(pc, "`endif` without a matching `if`"),
            },
            Flow::Loop => {
                stack.push(Open::Loop(i));
                loop_members.push(Vec::new());
            }
            Flow::Break | Flow::Continue => {
                if !stack.iter().any(|o| matches!(o, Open::Loop(_))) {
                    return fail(pc, "`break` or `continue` outside a loop");
                }
                if let Some(members) = loop_members.last_mut() {
                    members.push(i);
                }
            }
            Flow::Endloop => match stack.pop() {
                Some(Open::Loop(at)) => {
                    ops[at].target = i as u32;
                    ops[i].target = at as u32;
                    for member in loop_members.pop().unwrap_or_default() {
                        ops[member].target = i as u32;
                    }
                }
                Some(Open::If(_) | Open::Else(..)) | None => {
                    return fail(pc, "`endloop` without a matching `loop`");
                }
            },
            // Calls were linked while decoding; the rest opens or closes no block.
            Flow::Next | Flow::Call | Flow::Return | Flow::Halt => {}
        }
    }
    match stack.last() {
        Some(Open::If(at) | Open::Else(at, _) | Open::Loop(at)) => {
            fail(ops[*at].pc, "this block is never closed")
        }
        None => Ok(depths),
    }
}

/// The statistics class of an op: 0 ALU, 1 memory, 2 wave operation, 3 control flow.
fn class_of(code: Code) -> u8 {
    match code {
        Code::LocalLoad(_)
        | Code::LocalStore(_)
        | Code::DeviceLoad(_)
        | Code::DeviceStore(_)
        | Code::Atomic(..) => 1,
        Code::Shuffle(_)
        | Code::Ballot
        | Code::Any
        | Code::All
        | Code::PrefixSum
        | Code::Reduce(_) => 2,
        Code::If
        | Code::Else
        | Code::Endif
        | Code::Loop
        | Code::Break
        | Code::Continue
        | Code::Endloop
        | Code::Call
        | Code::Return
        | Code::Barrier
        | Code::Halt => 3,
        Code::Iadd
        | Code::Isub
        | Code::Imul
        | Code::ImulHi
        | Code::Imad
        | Code::Idiv
        | Code::Imod
        | Code::Ineg
        | Code::Iabs
        | Code::Imin
        | Code::Imax
        | Code::Iclamp
        | Code::Umin
        | Code::Umax
        | Code::Fadd
        | Code::Fsub
        | Code::Fmul
        | Code::Fma
        | Code::Fdiv
        | Code::Fneg
        | Code::Fabs
        | Code::Fmin
        | Code::Fmax
        | Code::Fclamp
        | Code::Fsqrt
        | Code::Frsqrt
        | Code::Frcp
        | Code::Ffloor
        | Code::Fceil
        | Code::Fround
        | Code::Ftrunc
        | Code::Ffract
        | Code::Fsin
        | Code::Fcos
        | Code::Fexp2
        | Code::Flog2
        | Code::And
        | Code::Or
        | Code::Xor
        | Code::Not
        | Code::Shl
        | Code::Shr
        | Code::Sar
        | Code::Bitcount
        | Code::Bitfind
        | Code::Bitrev
        | Code::Bfe
        | Code::Bfi
        | Code::Icmp(_)
        | Code::Ucmp(_)
        | Code::Fcmp(_)
        | Code::Select
        | Code::Fsat
        // Fences and waits order memory but access none: they count as ALU work.
        | Code::Fence
        | Code::Wait
        | Code::CvtF32I32
        | Code::CvtF32U32
        | Code::CvtI32F32
        | Code::CvtU32F32
        | Code::CvtF32F16
        | Code::CvtF16F32
        | Code::CvtF32F64
        | Code::CvtF64F32
        | Code::CvtF32Bf16
        | Code::CvtBf16F32
        | Code::Hadd
        | Code::Hsub
        | Code::Hmul
        | Code::Hma
        | Code::Hadd2
        | Code::Hmul2
        | Code::Hma2
        | Code::Badd
        | Code::Bsub
        | Code::Bmul
        | Code::Bma
        | Code::Badd2
        | Code::Bmul2
        | Code::Bma2
        | Code::Dadd
        | Code::Dsub
        | Code::Dmul
        | Code::Dma
        | Code::Ddiv
        | Code::Dsqrt
        | Code::Mma
        | Code::Mov
        | Code::MovSpecial
        | Code::Nop => 0,
    }
}

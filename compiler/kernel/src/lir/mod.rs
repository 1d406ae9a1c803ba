//! LIR: a kernel as a list of WAVE instructions on virtual registers, out of SSA form, with
//! structured control flow (`if`/`else`/`endif`, `loop`/`break`/`continue`/`endloop`).
//!
//! Lowering from MIR:
//! - **Out of SSA** (Sreedhar's method I): each phi `d = phi(a1..an)` gets a fresh register
//!   `d'`; every predecessor ends with `d' = ai` and the phi's block starts with `d = d'`.
//!   Because `d'` is fresh, the copies at the end of a predecessor never clobber a value that
//!   the other successor still needs (the "lost copy" and "swap" problems cannot arise), and
//!   no edge needs splitting. The register allocator coalesces most of these copies away.
//! - **Booleans**: a comparison used only by its own block's branch, selects or wave votes
//!   lives in a predicate: the compare is emitted right before each use, so a predicate is
//!   live for one or two instructions and WAVE's four predicates always suffice. Any other
//!   `bool` lives in a general register as 0 or 1 (`mov_imm r, 0` then `@p mov_imm r, 1`),
//!   and is turned back into a predicate by `icmp.ne p, r, 0` where a branch needs one.
//! - **Constants** are immediates wherever the instruction's second source takes one, and a
//!   `mov_imm` at their definition where a register is needed.
//! - **Control flow** is recovered from the reducible CFG: loops from their headers (the
//!   loop's extent is what the header dominates up to its exit), `if`/`else` from branches
//!   with their join at the immediate post-dominator, and edges that leave a loop or go back
//!   to its header as `break`/`continue` (conditional when the branch itself leaves).
//!   `return` is `halt` (`@p halt` when conditional).
//!
//! The types are here, with [`Code`] (an instruction's opcode and sub-operation, typed, from
//! the ISA table); the rooms follow the pipeline: [`lower`] (with its instruction
//! selection and the structurer inside it), [`passes`] (if-conversion, rematerialization),
//! then what reads the finished list: `flow` (successors and loop depths), `liveness`,
//! [`verify`] and [`print()`]. LIR knows MIR and nothing after itself: the register allocator
//! reads LIR, never the other way round.

mod code;
mod flow;
mod liveness;
mod lower;
mod passes;
mod print;
mod verify;

use std::collections::HashMap;

use wave_diag::Span;
use wave_isa::Opcode;

use crate::hir::Special;

/// (Kept here too, where it was: the range analysis is MIR's.)
pub use crate::mir::upper_bounds;
pub use code::Code;
pub use flow::{loop_depths, successors};
pub use liveness::liveness;
pub use lower::{Hold, frame_pointer_code, lower, lower_with};
pub use passes::{Pass, if_convert, passes, rematerialize};
pub use print::{inst_text, print, write_insts};
pub use verify::verify;

/// Registers `0..PHYS` are physical (`r0`..); virtual registers are numbered from `PHYS`.
pub const PHYS: u32 = 256;

/// A general register: physical below [`PHYS`] (`r0`..), virtual from it (`%0`..).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Reg(pub u32);

impl Reg {
    /// The physical register `rn`.
    pub const fn phys(n: u32) -> Reg {
        Reg(n)
    }

    /// Whether it is a physical register.
    pub const fn is_phys(self) -> bool {
        self.0 < PHYS
    }

    /// Its number, as an index into per-register tables.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// A virtual predicate (`%p0`..), given one of the four physical ones by the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pred(pub u32);

impl Pred {
    /// Its number, as an index into per-predicate tables.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// One operand as written.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A register written.
    Def(Reg),
    /// A register read.
    Use(Reg),
    /// A predicate written.
    PDef(Pred),
    /// A predicate read, negated when the flag is set.
    PUse(Pred, bool),
    /// An immediate.
    Imm(Imm),
    /// A special register.
    Special(Special),
    /// A byte address `[reg + offset]`.
    Addr(Reg, i32),
    /// Any register (its value does not matter: `icmp.eq p, r0, r0` is true).
    Any,
}

/// An immediate operand, kept as the value it is and written as the assembler reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imm {
    /// An integer, written in decimal.
    Int(i64),
    /// The bits of an `f16`, written as `0x` and four hex digits.
    F16(u16),
    /// The bits of an `f32` (or of one half of an `f64`), written as `0x` and eight digits.
    F32(u32),
    /// The bits of an `f64`: a pair's constant, which the allocator splits into its halves.
    F64(u64),
}

impl Imm {
    /// The value's bits, zero-extended (an integer's two's complement).
    pub fn bits(self) -> u64 {
        match self {
            Imm::Int(n) => n as u64,
            Imm::F16(b) => u64::from(b),
            Imm::F32(b) => u64::from(b),
            Imm::F64(b) => b,
        }
    }
}

impl std::fmt::Display for Imm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Imm::Int(n) => write!(f, "{n}"),
            Imm::F16(b) => write!(f, "0x{b:04x}"),
            Imm::F32(b) => write!(f, "0x{b:08x}"),
            Imm::F64(b) => write!(f, "0x{b:016x}"),
        }
    }
}

/// What an instruction is, for the passes after lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An ordinary instruction.
    Op,
    /// `mov d, s`: a copy the allocator may coalesce.
    Copy,
    /// `mov_imm` of a constant; dropped when no instruction reads the register.
    Const,
    /// `if p`.
    If,
    /// `else`.
    Else,
    /// `endif`.
    EndIf,
    /// `loop`.
    Loop,
    /// `break p`.
    Break,
    /// `continue p`.
    Continue,
    /// `endloop`.
    EndLoop,
    /// `halt` (or `@p halt`).
    Halt,
    /// A store of a spilled register to its slot (added by the allocator).
    SpillStore(u32),
    /// A load of a spilled register from its slot (added by the allocator).
    SpillLoad(u32),
}

/// One LIR instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// What it is.
    pub kind: Kind,
    /// The opcode and its sub-operation (`icmp.lt`, `device_load.u32`).
    pub code: Code,
    /// `@p` / `@!p`: it runs only where the predicate holds (or does not).
    pub guard: Option<(Pred, bool)>,
    /// For a guarded instruction: what it writes is read afterwards only where the guard
    /// held (or is written again where it did not), so the old value need not survive it.
    /// Otherwise a guarded write also keeps the register's old value in the other lanes.
    pub guard_kills: bool,
    /// Operands, in assembly order.
    pub args: Vec<Arg>,
    /// The source it comes from.
    pub span: Span,
}

impl Inst {
    fn new(kind: Kind, code: Code, args: Vec<Arg>, span: &Span) -> Inst {
        Inst { kind, code, guard: None, guard_kills: false, args, span: span.clone() }
    }

    /// Registers written.
    pub fn defs(&self) -> impl Iterator<Item = Reg> + '_ {
        self.args.iter().filter_map(|a| match a {
            Arg::Def(r) => Some(*r),
            _ => None,
        })
    }

    /// Registers read (a guarded instruction also keeps what it may not overwrite).
    pub fn uses(&self) -> impl Iterator<Item = Reg> + '_ {
        let guarded = self.guard.is_some() && !self.guard_kills;
        self.args.iter().filter_map(move |a| match a {
            Arg::Use(r) | Arg::Addr(r, _) => Some(*r),
            Arg::Def(r) if guarded => Some(*r),
            _ => None,
        })
    }

    /// Predicates read.
    pub fn pred_uses(&self) -> impl Iterator<Item = Pred> + '_ {
        self.guard.iter().map(|g| g.0).chain(self.args.iter().filter_map(|a| match a {
            Arg::PUse(p, _) => Some(*p),
            _ => None,
        }))
    }

    /// Predicates written.
    pub fn pred_defs(&self) -> impl Iterator<Item = Pred> + '_ {
        self.args.iter().filter_map(|a| match a {
            Arg::PDef(p) => Some(*p),
            _ => None,
        })
    }
}

/// A kernel in LIR.
#[derive(Clone, Debug, PartialEq)]
pub struct Lir {
    /// Its name.
    pub name: String,
    /// Parameters: name and `.param` type (preloaded into `r0`, `r1`, ...).
    pub params: Vec<(String, &'static str)>,
    /// The instructions, with structured control flow.
    pub insts: Vec<Inst>,
    /// The next unused virtual register.
    pub next_reg: Reg,
    /// The next unused virtual predicate.
    pub next_pred: Pred,
    /// Bytes of Local Memory for the local arrays.
    pub local_memory: u32,
    /// Bytes of each thread's frame taken by private arrays kept in memory (a multiple of
    /// 4); spill slots follow them.
    pub frame_bytes: u32,
    /// The register holding this thread's frame address, set on entry when private arrays
    /// are kept in memory (spilling reuses it).
    pub frame: Option<Reg>,
    /// A workgroup size given in the source.
    pub workgroup_size: Option<[u32; 3]>,
    /// The MIR value each virtual register holds, where it holds one (for names).
    pub origin: HashMap<Reg, u32>,
    /// The virtual registers that hold 64-bit values (`f64`): each is given a pair of
    /// registers `r2k:r2k+1` and named by the first (instructions on pairs name the pair by
    /// its first register; a copy, a constant or a `select` of a pair is two instructions).
    pub pairs: std::collections::HashSet<Reg>,
}

impl Lir {
    /// A fresh virtual register.
    pub fn reg(&mut self) -> Reg {
        self.next_reg.0 += 1;
        Reg(self.next_reg.0 - 1)
    }

    /// A fresh virtual register for a 64-bit value.
    pub fn reg_pair(&mut self) -> Reg {
        let r = self.reg();
        self.pairs.insert(r);
        r
    }

    /// A fresh virtual predicate.
    pub fn pred(&mut self) -> Pred {
        self.next_pred.0 += 1;
        Pred(self.next_pred.0 - 1)
    }
}

/// Why a kernel cannot be lowered to LIR.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsupported {
    /// What and why.
    pub message: String,
    /// Where.
    pub span: Span,
}

/// Instructions an `if` arm may hold to become guarded instructions.
/// A copy, or a constant set again (what a phi's incoming value becomes).
fn is_copy(i: &Inst) -> bool {
    guardable(i)
        && (i.kind == Kind::Copy || (i.kind == Kind::Op && i.code.opcode == Opcode::MovImm))
}

fn guardable(i: &Inst) -> bool {
    matches!(i.kind, Kind::Op | Kind::Copy | Kind::Const)
        && i.guard.is_none()
        && i.pred_defs().next().is_none()
        && i.pred_uses().next().is_none()
        && !i.code.flags().cross_lane
        && !i.code.flags().orders_memory()
}

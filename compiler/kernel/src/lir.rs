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

use std::collections::HashMap;
use std::fmt::Write as _;

use wave_diag::Span;

use crate::hir::{AtomicOp, BinOp, Intrinsic, MathFn, Scalar, Special, Ty, UnOp, VarId, WaveOp};
/// (Kept here too, where it was: the range analysis is MIR's.)
pub use crate::mir::upper_bounds;
use crate::mir::{BlockId, Func, Op, Space, Term, Value};

/// Registers `0..PHYS` are physical (`r0`..); virtual registers are numbered from `PHYS`.
pub const PHYS: u32 = 256;

/// A general register: physical below [`PHYS`], virtual from it.
pub type Reg = u32;

/// A virtual predicate.
pub type Pred = u32;

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
    /// An immediate, as assembly text.
    Imm(String),
    /// A special register by name.
    Special(&'static str),
    /// A byte address `[reg + offset]`.
    Addr(Reg, i32),
    /// Any register (its value does not matter: `icmp.eq p, r0, r0` is true).
    Any,
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
    /// The mnemonic with its suffixes (`icmp.lt`, `device_load.u32`).
    pub mnemonic: String,
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
    fn new(kind: Kind, mnemonic: &str, args: Vec<Arg>, span: &Span) -> Inst {
        Inst {
            kind,
            mnemonic: mnemonic.to_owned(),
            guard: None,
            guard_kills: false,
            args,
            span: span.clone(),
        }
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
        self.next_reg += 1;
        self.next_reg - 1
    }

    /// A fresh virtual register for a 64-bit value.
    pub fn reg_pair(&mut self) -> Reg {
        let r = self.reg();
        self.pairs.insert(r);
        r
    }

    /// A fresh virtual predicate.
    pub fn pred(&mut self) -> Pred {
        self.next_pred += 1;
        self.next_pred - 1
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

// -------------------------------------------------------------------------------------------
// Lowering from MIR.

/// Where a use of a value is.
#[derive(Clone, Copy, PartialEq)]
enum Use {
    /// As a condition (branch, select, vote, ballot) in block `b`.
    Cond(BlockId),
    /// As the operand of a `not`, `and` or `or` that defines this value.
    Part(Value),
    /// Anything else.
    Other,
}

struct Lower<'f> {
    f: &'f Func,
    lir: Lir,
    /// The defining operation of each value (`None` for phis).
    def: Vec<Option<&'f Op>>,
    /// Values computed into a predicate where they are used.
    pred_form: Vec<bool>,
    /// Constants whose register is read.
    const_read: Vec<bool>,
    /// Addresses `x + c` folded into their loads' and stores' offsets.
    folded: Vec<Option<(Value, i32)>>,
    /// Multiplies done by the `imad` of the addition that uses them.
    fused: Vec<bool>,
    /// An upper bound of each integer value, as unsigned (see [`upper_bounds`]).
    bound: Vec<u64>,
    /// Comparisons computed once where they are defined and held in a predicate, because
    /// they are tested in other blocks (re-testing would keep their operands alive).
    held: Vec<bool>,
    /// The predicate a held comparison lives in.
    held_pred: HashMap<Value, (Pred, bool)>,
    /// The fresh register of each phi (`d'`).
    phi_copy: HashMap<Value, Reg>,
    /// The code of each block (without its terminator).
    code: Vec<Vec<Inst>>,
    /// The span of each block's last instruction (for its terminator).
    end_span: Vec<Span>,
    /// The byte offset in the thread's frame and the element size of each private array
    /// still in memory.
    frame_offset: HashMap<VarId, (u32, u32)>,
    /// The address register of each (private array, computed index) in the current block.
    private_cache: HashMap<(VarId, Value), Reg>,
    error: Option<Unsupported>,
}

fn reg_of(v: Value) -> Reg {
    PHYS + v.0
}

/// The `.param` type of a kernel parameter.
fn param_type(ty: Ty) -> Option<&'static str> {
    match ty {
        Ty::Buffer(Scalar::F32 | Scalar::F16 | Scalar::F64 | Scalar::I32 | Scalar::U32) => {
            Some("ptr")
        }
        Ty::Scalar(Scalar::U32 | Scalar::Bool) => Some("u32"),
        Ty::Scalar(Scalar::I32) => Some("i32"),
        Ty::Scalar(Scalar::F32) => Some("f32"),
        _ => None,
    }
}

/// `device_load.u32`, `local_store.u16`, ...: the instruction that moves a value of type
/// `ty` to or from `space` (`what` is `load` or `store`); private arrays are in Local Memory.
fn memory_mnemonic(space: Space, what: &str, ty: Scalar) -> String {
    let place = if space == Space::Device { "device" } else { "local" };
    let width = match ty {
        Scalar::F16 => "u16",
        Scalar::F64 => "u64",
        _ => "u32",
    };
    format!("{place}_{what}.{width}")
}

fn special_name(s: Special) -> &'static str {
    let pick = |d: u8, names: [&'static str; 3]| names[usize::from(d.min(2))];
    match s {
        Special::ThreadId(d) => pick(d, ["sr_thread_id_x", "sr_thread_id_y", "sr_thread_id_z"]),
        Special::WorkgroupId(d) => {
            pick(d, ["sr_workgroup_id_x", "sr_workgroup_id_y", "sr_workgroup_id_z"])
        }
        Special::WorkgroupSize(d) => {
            pick(d, ["sr_workgroup_size_x", "sr_workgroup_size_y", "sr_workgroup_size_z"])
        }
        Special::GridSize(d) => pick(d, ["sr_grid_size_x", "sr_grid_size_y", "sr_grid_size_z"]),
        Special::GlobalId(_) => "",
        Special::LaneId => "sr_lane_id",
        Special::WaveId => "sr_wave_id",
        Special::WaveWidth => "sr_wave_width",
    }
}

impl<'f> Lower<'f> {
    fn ty(&self, v: Value) -> Ty {
        self.f.types[v.0 as usize]
    }

    fn scalar(&self, v: Value) -> Scalar {
        match self.ty(v) {
            Ty::Scalar(s) => s,
            _ => Scalar::U32,
        }
    }

    fn unsupported(&mut self, span: &Span, message: String) {
        if self.error.is_none() {
            self.error = Some(Unsupported { message, span: span.clone() });
        }
    }

    /// The register of `v` (recording that a constant's register is read).
    fn reg(&mut self, v: Value) -> Reg {
        if let Some(c) = self.const_read.get_mut(v.0 as usize) {
            *c = true;
        }
        reg_of(v)
    }

    /// The address operand of a load or store: `[x + offset]` when the address is `x + c`
    /// used only as an address.
    fn address(&mut self, v: Value) -> Arg {
        if let Some((x, offset)) = self.folded[v.0 as usize] {
            return Arg::Addr(self.reg(x), offset);
        }
        Arg::Addr(self.reg(v), 0)
    }

    fn src(&mut self, v: Value) -> Arg {
        Arg::Use(self.reg(v))
    }

    /// The address operand of a load or store: a private array's element, or a byte address.
    fn memory_address(
        &mut self,
        space: Space,
        addr: Value,
        out: &mut Vec<Inst>,
        span: &Span,
    ) -> Arg {
        match space {
            Space::Private(v) => self.private_address(v, addr, out, span),
            _ => self.address(addr),
        }
    }

    /// The Local Memory address of element `index` of private array `var`: in this
    /// thread's frame, at the array's offset.
    fn private_address(
        &mut self,
        var: VarId,
        index: Value,
        out: &mut Vec<Inst>,
        span: &Span,
    ) -> Arg {
        let (offset, size) = self.frame_offset.get(&var).copied().unwrap_or((0, 4));
        let fp = match self.lir.frame {
            Some(fp) => fp,
            None => {
                let fp = self.lir.reg();
                self.lir.frame = Some(fp);
                fp
            }
        };
        if let Some(Op::Int(c)) = self.def[index.0 as usize] {
            let at = i64::from(offset) + (*c as u32 as i64) * i64::from(size);
            if let Ok(at) = i32::try_from(at) {
                return Arg::Addr(fp, at);
            }
        }
        // The same element again in this block: its address is in a register already.
        if let Some(&t) = self.private_cache.get(&(var, index)) {
            return Arg::Addr(t, offset as i32);
        }
        let i = self.src(index);
        let (scaled, t) = (self.lir.reg(), self.lir.reg());
        self.private_cache.insert((var, index), t);
        let shift = Arg::Imm(size.trailing_zeros().to_string());
        out.push(Inst::new(Kind::Op, "shift.shl", vec![Arg::Def(scaled), i, shift], span));
        out.push(Inst::new(
            Kind::Op,
            "iadd",
            vec![Arg::Def(t), Arg::Use(scaled), Arg::Use(fp)],
            span,
        ));
        Arg::Addr(t, offset as i32)
    }

    /// The immediate text of a constant, if `v` is one.
    fn imm(&self, v: Value) -> Option<String> {
        match self.def[v.0 as usize]? {
            Op::Int(n) => Some(format!("{}", *n as i32)),
            Op::Bool(b) => Some(u8::from(*b).to_string()),
            Op::Float(x) if self.scalar(v) == Scalar::F32 => {
                Some(format!("0x{:08x}", (*x as f32).to_bits()))
            }
            Op::Float(x) if self.scalar(v) == Scalar::F16 => {
                Some(format!("0x{:04x}", crate::legalize::f16_bits(*x)))
            }
            _ => None,
        }
    }

    /// A second source: an immediate when `v` is a constant, else its register.
    fn src2(&mut self, v: Value) -> Arg {
        match self.imm(v) {
            Some(t) => Arg::Imm(t),
            None => self.src(v),
        }
    }

    fn is_const(&self, v: Value) -> bool {
        self.imm(v).is_some()
    }

    /// Puts `v` into a predicate at this point: `(p, negated)`.
    fn cond(&mut self, v: Value, out: &mut Vec<Inst>, span: &Span) -> (Pred, bool) {
        if let Some(held) = self.held_pred.get(&v) {
            return *held;
        }
        if self.pred_form[v.0 as usize] {
            match self.def[v.0 as usize] {
                Some(Op::Binary(op, a, b)) if op.is_comparison() => {
                    return self.compare(*op, *a, *b, out, span);
                }
                Some(Op::Unary(UnOp::Not, a)) => {
                    let (p, n) = self.cond(*a, out, span);
                    return (p, !n);
                }
                Some(Op::Binary(op @ (BinOp::LogicAnd | BinOp::LogicOr), x, y))
                    if self.is_held(*x) || self.is_held(*y) =>
                {
                    // A held predicate is read, never written: start from the other operand
                    // (or a copy), then set the result where the held one decides it.
                    let and = *op == BinOp::LogicAnd;
                    let (first, second) = if self.is_held(*x) { (*y, *x) } else { (*x, *y) };
                    let (p, n) = if self.is_held(first) {
                        let h = self.cond(first, out, span);
                        let q = self.lir.pred();
                        self.set_where(q, false, true, None, out, span);
                        self.set_where(q, false, false, Some((h.0, !h.1)), out, span);
                        (q, false)
                    } else {
                        self.cond(first, out, span)
                    };
                    let (h, nh) = self.cond(second, out, span);
                    // `and`: false where the held one is false; `or`: true where it is true.
                    let guard = if and { (h, !nh) } else { (h, nh) };
                    self.set_where(p, n, !and, Some(guard), out, span);
                    return (p, n);
                }
                Some(Op::Binary(op @ (BinOp::LogicAnd | BinOp::LogicOr), x, y)) => {
                    let and = *op == BinOp::LogicAnd;
                    let (p, n) = self.cond(*x, out, span);
                    // Where `x` decides nothing (true for `and`, false for `or`), one guarded
                    // compare writes `y` into the same predicate, with its polarity.
                    let guard = if and { (p, n) } else { (p, !n) };
                    if self.compare_into(*y, p, n, guard, out, span) {
                        return (p, n);
                    }
                    // Otherwise through registers.
                    let (rx, ry, rz) = (self.lir.reg(), self.lir.reg(), self.lir.reg());
                    self.materialize(rx, (p, n), out, span);
                    let c = self.cond(*y, out, span);
                    self.materialize(ry, c, out, span);
                    let m = if and { "and" } else { "or" };
                    self.op3(out, m, rz, Arg::Use(rx), Arg::Use(ry), span);
                    let q = self.lir.pred();
                    out.push(Inst::new(
                        Kind::Op,
                        "icmp.ne",
                        vec![Arg::PDef(q), Arg::Use(rz), Arg::Imm("0".into())],
                        span,
                    ));
                    return (q, false);
                }
                _ => {}
            }
        }
        let p = self.lir.pred();
        let r = self.src(v);
        out.push(Inst::new(Kind::Op, "icmp.ne", vec![Arg::PDef(p), r, Arg::Imm("0".into())], span));
        (p, false)
    }

    /// Whether `v`'s condition is a held predicate (which must not be written).
    fn is_held(&self, v: Value) -> bool {
        self.held_pred.contains_key(&v)
            || matches!(self.def[v.0 as usize], Some(Op::Unary(UnOp::Not, a))
                if self.pred_form[v.0 as usize] && self.is_held(*a))
    }

    /// Makes condition `(p, neg)` read `value` (where `guard` holds): `icmp.eq p, any, any`
    /// sets p, `icmp.ne` clears it.
    fn set_where(
        &mut self,
        p: Pred,
        neg: bool,
        value: bool,
        guard: Option<(Pred, bool)>,
        out: &mut Vec<Inst>,
        span: &Span,
    ) {
        let m = if value != neg { "icmp.eq" } else { "icmp.ne" };
        let mut inst = Inst::new(Kind::Op, m, vec![Arg::PDef(p), Arg::Any, Arg::Any], span);
        inst.guard = guard;
        out.push(inst);
    }

    /// A comparison into a fresh predicate: `(p, negated)`.
    fn compare(
        &mut self,
        op: BinOp,
        a: Value,
        b: Value,
        out: &mut Vec<Inst>,
        span: &Span,
    ) -> (Pred, bool) {
        let (mnemonic, x, y, neg) = self.compare_form(op, a, b);
        let p = self.lir.pred();
        out.push(Inst::new(Kind::Op, mnemonic, vec![Arg::PDef(p), x, y], span));
        (p, neg)
    }

    /// Writes comparison `v` (negated when `neg`) into predicate `p` where `guard` holds, if
    /// one compare instruction can.
    fn compare_into(
        &mut self,
        v: Value,
        p: Pred,
        neg: bool,
        guard: (Pred, bool),
        out: &mut Vec<Inst>,
        span: &Span,
    ) -> bool {
        if !self.pred_form[v.0 as usize] {
            return false;
        }
        let (op, a, b, neg) = match self.def[v.0 as usize] {
            Some(Op::Binary(op, a, b)) if op.is_comparison() => (*op, *a, *b, neg),
            Some(Op::Unary(UnOp::Not, x)) => match self.def[x.0 as usize] {
                Some(Op::Binary(op, a, b))
                    if op.is_comparison() && self.pred_form[x.0 as usize] =>
                {
                    (*op, *a, *b, !neg)
                }
                _ => return false,
            },
            _ => return false,
        };
        let Some((mnemonic, x, y, _)) = self.compare_with(op, a, b, neg) else { return false };
        let mut inst = Inst::new(Kind::Op, mnemonic, vec![Arg::PDef(p), x, y], span);
        inst.guard = Some(guard);
        out.push(inst);
        true
    }

    /// A compare instruction giving exactly `a op b` negated when `neg`, if there is one.
    fn compare_with(
        &mut self,
        op: BinOp,
        a: Value,
        b: Value,
        neg: bool,
    ) -> Option<(&'static str, Arg, Arg, bool)> {
        use BinOp::*;
        let op = if self.compare_choice(op, a, b).2 == neg {
            op
        } else if self.scalar(a).is_float() {
            // `!(a < b)` is not `a >= b` when either is NaN.
            return None;
        } else {
            let opposite = match op {
                Lt => Ge,
                Ge => Lt,
                Le => Gt,
                Gt => Le,
                Eq => Ne,
                _ => Eq,
            };
            if self.compare_choice(opposite, a, b).2 == neg {
                return None;
            }
            // The opposite comparison's natural result is the negation we want... of
            // the opposite: `!(a >= b)` is `a < b`, so emit it and report `neg`.
            let f = self.compare_form(opposite, a, b);
            return Some((f.0, f.1, f.2, neg));
        };
        Some(self.compare_form(op, a, b))
    }

    /// The compare for `a op b`, without reading anything: mnemonic, whether the operands
    /// swap, whether the result is the negation, and the operands in order.
    fn compare_choice(
        &self,
        op: BinOp,
        mut a: Value,
        mut b: Value,
    ) -> (&'static str, bool, bool, Value, Value) {
        use BinOp::*;
        let s = self.scalar(a);
        // A constant goes second, where the immediate is.
        let mirror = |op: BinOp| match op {
            Lt => Gt,
            Gt => Lt,
            Le => Ge,
            Ge => Le,
            o => o,
        };
        let mut op = op;
        if self.is_const(a) && !self.is_const(b) {
            std::mem::swap(&mut a, &mut b);
            op = mirror(op);
        }
        let (mnemonic, swap, neg) = match (s, op) {
            (Scalar::F32 | Scalar::F16 | Scalar::F64, _) => match op {
                Eq => ("fcmp.eq", false, false),
                Ne => ("fcmp.ne", false, false),
                Lt => ("fcmp.lt", false, false),
                Le => ("fcmp.le", false, false),
                Gt => ("fcmp.gt", false, false),
                _ => ("fcmp.le", true, false),
            },
            (Scalar::U32, Lt) => ("ucmp.lt", false, false),
            (Scalar::U32, Le) => ("ucmp.le", false, false),
            (Scalar::U32, Gt) => ("ucmp.le", false, true),
            (Scalar::U32, Ge) => ("ucmp.lt", false, true),
            (_, Eq) => ("icmp.eq", false, false),
            (_, Ne) => ("icmp.ne", false, false),
            (_, Lt) => ("icmp.lt", false, false),
            (_, Le) => ("icmp.le", false, false),
            (_, Gt) => ("icmp.gt", false, false),
            _ => ("icmp.ge", false, false),
        };
        (mnemonic, swap, neg, a, b)
    }

    /// The compare instruction for `a op b`: mnemonic, operands, and whether its result is
    /// the negation.
    fn compare_form(&mut self, op: BinOp, a: Value, b: Value) -> (&'static str, Arg, Arg, bool) {
        let (mnemonic, swap, neg, a, b) = self.compare_choice(op, a, b);
        let (x, y) = if swap {
            let x = self.src(b);
            (x, self.src(a))
        } else {
            let x = self.src(a);
            (x, self.src2(b))
        };
        (mnemonic, x, y, neg)
    }

    /// `d = p ? 1 : 0` (with the predicate's negation).
    fn materialize(&mut self, d: Reg, (p, neg): (Pred, bool), out: &mut Vec<Inst>, span: &Span) {
        out.push(Inst::new(Kind::Op, "mov_imm", vec![Arg::Def(d), Arg::Imm("0".into())], span));
        let mut set = Inst::new(Kind::Op, "mov_imm", vec![Arg::Def(d), Arg::Imm("1".into())], span);
        set.guard = Some((p, neg));
        out.push(set);
    }

    fn op3(&mut self, out: &mut Vec<Inst>, m: &str, d: Reg, a: Arg, b: Arg, span: &Span) {
        out.push(Inst::new(Kind::Op, m, vec![Arg::Def(d), a, b], span));
    }

    fn op2(&mut self, out: &mut Vec<Inst>, m: &str, d: Reg, a: Arg, span: &Span) {
        out.push(Inst::new(Kind::Op, m, vec![Arg::Def(d), a], span));
    }

    /// The instructions of one MIR instruction.
    fn inst(&mut self, inst: &crate::mir::Inst, out: &mut Vec<Inst>) {
        let span = &inst.span;
        let d = inst.dst.map(reg_of).unwrap_or(0);
        let dty = inst.dst.map(|v| self.ty(v));
        let dscalar = inst.dst.map(|v| self.scalar(v)).unwrap_or(Scalar::U32);
        match &inst.op {
            Op::Float(x) if dscalar == Scalar::F64 => {
                // A pair: the two halves set one after the other (see `Lir::pairs`).
                out.push(Inst::new(
                    Kind::Const,
                    "mov_imm",
                    vec![Arg::Def(d), Arg::Imm(format!("0x{:016x}", x.to_bits()))],
                    span,
                ));
            }
            Op::Int(_) | Op::Float(_) | Op::Bool(_) => {
                let text = inst.dst.and_then(|v| self.imm(v)).unwrap_or_else(|| "0".into());
                out.push(Inst::new(
                    Kind::Const,
                    "mov_imm",
                    vec![Arg::Def(d), Arg::Imm(text)],
                    span,
                ));
            }
            Op::Param(i) => {
                if dty == Some(Ty::Scalar(Scalar::Bool)) {
                    // Any nonzero argument is true; kept as 0 or 1.
                    let p = self.lir.pred();
                    out.push(Inst::new(
                        Kind::Op,
                        "icmp.ne",
                        vec![Arg::PDef(p), Arg::Use(*i), Arg::Imm("0".into())],
                        span,
                    ));
                    self.materialize(d, (p, false), out, span);
                } else {
                    out.push(Inst::new(Kind::Copy, "mov", vec![Arg::Def(d), Arg::Use(*i)], span));
                }
            }
            Op::Special(Special::GlobalId(axis)) => {
                let (w, s, t) = (self.lir.reg(), self.lir.reg(), self.lir.reg());
                for (r, sp) in [
                    (w, Special::WorkgroupId(*axis)),
                    (s, Special::WorkgroupSize(*axis)),
                    (t, Special::ThreadId(*axis)),
                ] {
                    self.op2(out, "mov_special", r, Arg::Special(special_name(sp)), span);
                }
                out.push(Inst::new(
                    Kind::Op,
                    "imad",
                    vec![Arg::Def(d), Arg::Use(w), Arg::Use(s), Arg::Use(t)],
                    span,
                ));
            }
            Op::Special(s) => self.op2(out, "mov_special", d, Arg::Special(special_name(*s)), span),
            Op::Unary(op, a) => {
                let a = *a;
                match (op, self.scalar(a)) {
                    (UnOp::Not, _) => {
                        if !self.pred_form[inst.dst.map_or(0, |v| v.0) as usize] {
                            let x = self.src(a);
                            self.op3(out, "xor", d, x, Arg::Imm("1".into()), span);
                        }
                    }
                    (UnOp::Neg, Scalar::F32) => {
                        let x = self.src(a);
                        self.op2(out, "fneg", d, x, span);
                    }
                    (UnOp::Neg, _) => {
                        let x = self.src(a);
                        self.op2(out, "ineg", d, x, span);
                    }
                    (UnOp::BitNot, _) => {
                        let x = self.src(a);
                        self.op2(out, "not", d, x, span);
                    }
                }
            }
            Op::Binary(op, a, b) => self.binary(*op, *a, *b, inst.dst, out, span),
            Op::Cast(a) => self.cast(*a, d, dscalar, out, span),
            Op::Select(c, a, b) => {
                let (p, n) = self.cond(*c, out, span);
                let (x, y) = (self.src(*a), self.src(*b));
                out.push(Inst::new(
                    Kind::Op,
                    "select",
                    vec![Arg::Def(d), Arg::PUse(p, n), x, y],
                    span,
                ));
            }
            Op::Load(space, addr) => {
                let m = memory_mnemonic(*space, "load", dscalar);
                let a = self.memory_address(*space, *addr, out, span);
                out.push(Inst::new(Kind::Op, &m, vec![Arg::Def(d), a], span));
            }
            Op::Store(space, addr, x) => {
                let m = memory_mnemonic(*space, "store", self.scalar(*x));
                let a = self.memory_address(*space, *addr, out, span);
                let x = self.src(*x);
                out.push(Inst::new(Kind::Op, &m, vec![a, x], span));
            }
            Op::Atomic(op, space, addr, x) => {
                let name = match op {
                    AtomicOp::Add => "atomic_add",
                    AtomicOp::Sub => "atomic_sub",
                    AtomicOp::Min => "atomic_min",
                    AtomicOp::Max => "atomic_max",
                    AtomicOp::And => "atomic_and",
                    AtomicOp::Or => "atomic_or",
                    AtomicOp::Xor => "atomic_xor",
                    AtomicOp::Exchange => "atomic_exchange",
                };
                let mut m = name.to_owned();
                match dscalar {
                    Scalar::I32 => m.push_str(".i32"),
                    Scalar::F32 => m.push_str(".f32"),
                    _ => {}
                }
                if *space == Space::Local {
                    m.push_str(".local");
                }
                let a = self.reg(*addr);
                let x = self.src(*x);
                out.push(Inst::new(Kind::Op, &m, vec![Arg::Def(d), Arg::Use(a), x], span));
            }
            Op::Call(i, args) => self.call(*i, args, inst.dst, out, span),
        }
    }

    fn binary(
        &mut self,
        op: BinOp,
        a: Value,
        b: Value,
        dst: Option<Value>,
        out: &mut Vec<Inst>,
        span: &Span,
    ) {
        use BinOp::*;
        let Some(dv) = dst else { return };
        if self.folded[dv.0 as usize].is_some() || self.fused[dv.0 as usize] {
            return;
        }
        let d = reg_of(dv);
        if op == Add && self.scalar(a).is_int() {
            for (m, c) in [(a, b), (b, a)] {
                if let (true, Some(Op::Binary(Mul, x, y))) =
                    (self.fused[m.0 as usize], self.def[m.0 as usize])
                {
                    let (x, y, c) = (self.src(*x), self.src(*y), self.src(c));
                    out.push(Inst::new(Kind::Op, "imad", vec![Arg::Def(d), x, y, c], span));
                    return;
                }
            }
        }
        if op.is_comparison() {
            if self.held[dv.0 as usize] {
                let c = self.compare(op, a, b, out, span);
                self.held_pred.insert(dv, c);
                return;
            }
            if !self.pred_form[dv.0 as usize] {
                let c = self.compare(op, a, b, out, span);
                self.materialize(d, c, out, span);
            }
            return;
        }
        let s = self.scalar(a);
        if s == Scalar::F64 {
            // Pairs take registers, no immediates; the rest was legalised away.
            let m = match op {
                Add => "dadd",
                Sub => "dsub",
                Mul => "dmul",
                Div => "ddiv",
                _ => {
                    self.unsupported(span, format!("`{}` on f64 is not supported", op.symbol()));
                    return;
                }
            };
            let (x, y) = (self.src(a), self.src(b));
            self.op3(out, m, d, x, y, span);
            return;
        }
        if s == Scalar::F16 {
            // The half instructions take registers (their low halves), not immediates.
            let m = match op {
                Add => "hadd",
                Sub => "hsub",
                _ => "hmul",
            };
            let (x, y) = (self.src(a), self.src(b));
            self.op3(out, m, d, x, y, span);
            return;
        }
        let commutative = matches!(op, Add | Mul | And | Or | Xor | LogicAnd | LogicOr);
        let (a, b) =
            if commutative && self.is_const(a) && !self.is_const(b) { (b, a) } else { (a, b) };
        let m = match (op, s) {
            (LogicAnd | LogicOr, _) if self.pred_form[dv.0 as usize] => return,
            (LogicAnd, _) | (And, _) => "and",
            (LogicOr, _) | (Or, _) => "or",
            (Xor, _) => "xor",
            (Add, Scalar::F32) => "fadd",
            (Sub, Scalar::F32) => "fsub",
            (Mul, Scalar::F32) => "fmul",
            (Div, Scalar::F32) => "fdiv",
            (Rem, Scalar::F32) => {
                // a - trunc(a / b) * b: the remainder with the sign of the dividend.
                let (q, t) = (self.lir.reg(), self.lir.reg());
                let (x, y) = (self.src(a), self.src(b));
                self.op3(out, "fdiv", q, x.clone(), y.clone(), span);
                self.op2(out, "fround.trunc", q, Arg::Use(q), span);
                self.op3(out, "fmul", t, Arg::Use(q), y, span);
                self.op3(out, "fsub", d, x, Arg::Use(t), span);
                return;
            }
            (Add, _) => "iadd",
            (Sub, _) => "isub",
            (Mul, _) => "imul",
            (Div, Scalar::I32) => "idiv",
            (Rem, Scalar::I32) => "imod",
            (Div | Rem, _) => {
                self.unsigned_divide(op == Rem, a, b, d, out, span);
                return;
            }
            (Shl, _) => "shift.shl",
            (Shr, Scalar::I32) => "shift.sar",
            (Shr, _) => "shift.shr",
            _ => "iadd",
        };
        let x = self.src(a);
        let y = self.src2(b);
        self.op3(out, m, d, x, y, span);
    }

    /// Unsigned division (or remainder). `idiv` is signed: when both operands are below 2^31
    /// it is exact (and `imod` gives the remainder at once); otherwise a divisor of 2^31 or
    /// more gives `a >= b`, and a smaller one divides `a >> 1` and corrects the doubled
    /// quotient by one.
    fn unsigned_divide(
        &mut self,
        rem: bool,
        a: Value,
        b: Value,
        d: Reg,
        out: &mut Vec<Inst>,
        span: &Span,
    ) {
        // Both below 2^31 (by their known bounds): the signed instruction is exact.
        const HALF: u64 = 1 << 31;
        if self.bound[a.0 as usize] < HALF && self.bound[b.0 as usize] < HALF {
            let (x, y) = (self.src(a), self.src2(b));
            let m = if rem { "imod" } else { "idiv" };
            out.push(Inst::new(Kind::Op, m, vec![Arg::Def(d), x, y], span));
            return;
        }
        // A constant divisor below 2^31 is an immediate, and only `a` needs testing.
        let small = match self.def[b.0 as usize] {
            Some(Op::Int(c)) => (1..=i64::from(i32::MAX)).contains(&(*c & 0xffff_ffff)),
            _ => false,
        };
        let x = self.src(a);
        let y = if small { self.src2(b) } else { self.src(b) };
        let q = if rem { self.lir.reg() } else { d };
        let (t, u) = (self.lir.reg(), self.lir.reg());
        let (p, big) = (self.lir.pred(), self.lir.pred());
        let new = |k: Kind, m: &str, args: Vec<Arg>| Inst::new(k, m, args, span);
        if small {
            out.push(new(Kind::Op, "icmp.lt", vec![Arg::PDef(p), x.clone(), Arg::Imm("0".into())]));
        } else {
            out.push(new(Kind::Op, "or", vec![Arg::Def(t), x.clone(), y.clone()]));
            out.push(new(
                Kind::Op,
                "icmp.lt",
                vec![Arg::PDef(p), Arg::Use(t), Arg::Imm("0".into())],
            ));
        }
        out.push(new(Kind::If, "if", vec![Arg::PUse(p, true)]));
        // Both below 2^31 here: the signed instruction gives the result.
        let m = if rem { "imod" } else { "idiv" };
        out.push(new(Kind::Op, m, vec![Arg::Def(d), x.clone(), y.clone()]));
        out.push(new(Kind::Else, "else", vec![]));
        out.push(new(Kind::Op, "shift.shr", vec![Arg::Def(t), x.clone(), Arg::Imm("1".into())]));
        out.push(new(Kind::Op, "idiv", vec![Arg::Def(q), Arg::Use(t), y.clone()]));
        out.push(new(Kind::Op, "shift.shl", vec![Arg::Def(q), Arg::Use(q), Arg::Imm("1".into())]));
        out.push(new(Kind::Op, "imul", vec![Arg::Def(u), Arg::Use(q), y.clone()]));
        out.push(new(Kind::Op, "isub", vec![Arg::Def(u), x.clone(), Arg::Use(u)]));
        let c = self.lir.pred();
        out.push(new(Kind::Op, "ucmp.lt", vec![Arg::PDef(c), Arg::Use(u), y.clone()]));
        let mut inc = new(Kind::Op, "iadd", vec![Arg::Def(q), Arg::Use(q), Arg::Imm("1".into())]);
        inc.guard = Some((c, true));
        out.push(inc);
        if !small {
            // A divisor of 2^31 or more: the quotient is a >= b.
            out.push(new(
                Kind::Op,
                "icmp.lt",
                vec![Arg::PDef(big), y.clone(), Arg::Imm("0".into())],
            ));
            out.push(new(Kind::If, "if", vec![Arg::PUse(big, false)]));
            let ge = self.lir.pred();
            out.push(new(Kind::Op, "ucmp.lt", vec![Arg::PDef(ge), x.clone(), y.clone()]));
            self.materialize(q, (ge, true), out, span);
            out.push(new(Kind::EndIf, "endif", vec![]));
        }
        if rem {
            out.push(new(Kind::Op, "imul", vec![Arg::Def(u), Arg::Use(q), y]));
            out.push(new(Kind::Op, "isub", vec![Arg::Def(d), x, Arg::Use(u)]));
        }
        out.push(new(Kind::EndIf, "endif", vec![]));
    }

    fn cast(&mut self, a: Value, d: Reg, to: Scalar, out: &mut Vec<Inst>, span: &Span) {
        let from = self.scalar(a);
        let x = self.src(a);
        let m = match (from, to) {
            (f, t) if f == t => "mov",
            (Scalar::F32, Scalar::F64) => "cvt_f64_f32",
            (Scalar::F64, Scalar::F32) => "cvt_f32_f64",
            (Scalar::I32 | Scalar::U32 | Scalar::Bool, Scalar::I32 | Scalar::U32) => "mov",
            (Scalar::I32, Scalar::F32) => "cvt_f32_i32",
            (Scalar::U32 | Scalar::Bool, Scalar::F32) => "cvt_f32_u32",
            (Scalar::F16, Scalar::F32) => "cvt_f32_f16",
            (Scalar::F32, Scalar::F16) => "cvt_f16_f32",
            (Scalar::F32, Scalar::I32) => "cvt_i32_f32",
            (Scalar::F32, Scalar::U32) => "cvt_u32_f32",
            (_, Scalar::Bool) => {
                let p = self.lir.pred();
                let m = if from == Scalar::F32 { "fcmp.ne" } else { "icmp.ne" };
                let zero = if from == Scalar::F32 { "0x00000000" } else { "0" };
                out.push(Inst::new(
                    Kind::Op,
                    m,
                    vec![Arg::PDef(p), x, Arg::Imm(zero.into())],
                    span,
                ));
                self.materialize(d, (p, false), out, span);
                return;
            }
            _ => {
                self.unsupported(
                    span,
                    format!(
                        "a conversion from {} to {} is not supported yet",
                        from.name(),
                        to.name()
                    ),
                );
                return;
            }
        };
        let kind = if m == "mov" { Kind::Copy } else { Kind::Op };
        out.push(Inst::new(kind, m, vec![Arg::Def(d), x], span));
    }

    fn call(
        &mut self,
        i: Intrinsic,
        args: &[Value],
        dst: Option<Value>,
        out: &mut Vec<Inst>,
        span: &Span,
    ) {
        let d = dst.map(reg_of).unwrap_or(0);
        let s = args.first().map(|a| self.scalar(*a)).unwrap_or(Scalar::U32);
        let float = s == Scalar::F32;
        match i {
            Intrinsic::Barrier => out.push(Inst::new(Kind::Op, "barrier", vec![], span)),
            Intrinsic::Fence => out.push(Inst::new(Kind::Op, "fence.acq_rel", vec![], span)),
            Intrinsic::Atomic(_) => {}
            Intrinsic::Min | Intrinsic::Max => {
                let m = match (i == Intrinsic::Min, s) {
                    (true, Scalar::F32) => "fmin",
                    (false, Scalar::F32) => "fmax",
                    (true, Scalar::I32) => "imin",
                    (false, Scalar::I32) => "imax",
                    (true, _) => "umin",
                    (false, _) => "umax",
                };
                let (a, b) =
                    if self.is_const(args[0]) { (args[1], args[0]) } else { (args[0], args[1]) };
                let x = self.src(a);
                // umin/umax/imin/imax take an immediate; so do fmin/fmax.
                let y = self.src2(b);
                self.op3(out, m, d, x, y, span);
            }
            Intrinsic::Math(f) if s == Scalar::F64 => {
                // The rest was legalised away, or refused.
                let x = self.src(args[0]);
                match f {
                    MathFn::Sqrt => self.op2(out, "dsqrt", d, x, span),
                    MathFn::Fma => {
                        let (y, z) = (self.src(args[1]), self.src(args[2]));
                        out.push(Inst::new(Kind::Op, "dma", vec![Arg::Def(d), x, y, z], span));
                    }
                    _ => self.unsupported(
                        span,
                        format!("`{}` on f64 is not supported", crate::hir::intrinsic_name(i)),
                    ),
                }
            }
            Intrinsic::Math(f) => {
                let x = self.src(args[0]);
                let m = match f {
                    MathFn::Sqrt => "fsqrt",
                    MathFn::Rsqrt => "frsqrt",
                    MathFn::Abs if float => "fabs",
                    MathFn::Abs if s == Scalar::I32 => "iabs",
                    MathFn::Abs => "mov",
                    MathFn::Floor => "fround.floor",
                    MathFn::Ceil => "fround.ceil",
                    MathFn::Sin => "ftransc.sin",
                    MathFn::Cos => "ftransc.cos",
                    MathFn::Exp2 => "ftransc.exp2",
                    MathFn::Log2 => "ftransc.log2",
                    MathFn::Fma => {
                        let (y, z) = (self.src(args[1]), self.src(args[2]));
                        out.push(Inst::new(Kind::Op, "fma", vec![Arg::Def(d), x, y, z], span));
                        return;
                    }
                };
                let kind = if m == "mov" { Kind::Copy } else { Kind::Op };
                out.push(Inst::new(kind, m, vec![Arg::Def(d), x], span));
            }
            Intrinsic::Wave(op) => match op {
                WaveOp::Shuffle
                | WaveOp::ShuffleUp
                | WaveOp::ShuffleDown
                | WaveOp::ShuffleXor
                | WaveOp::Broadcast => {
                    let m = match op {
                        WaveOp::Shuffle => "wave_shuffle",
                        WaveOp::ShuffleUp => "wave_shuffle_up",
                        WaveOp::ShuffleDown => "wave_shuffle_down",
                        WaveOp::ShuffleXor => "wave_shuffle_xor",
                        _ => "wave_broadcast",
                    };
                    let x = self.src(args[0]);
                    let y = self.src2(args[1]);
                    self.op3(out, m, d, x, y, span);
                }
                WaveOp::Ballot => {
                    let (p, n) = self.cond(args[0], out, span);
                    out.push(Inst::new(
                        Kind::Op,
                        "wave_ballot",
                        vec![Arg::Def(d), Arg::PUse(p, n)],
                        span,
                    ));
                }
                WaveOp::Any | WaveOp::All => {
                    let (p, n) = self.cond(args[0], out, span);
                    let q = self.lir.pred();
                    let m = if op == WaveOp::Any { "wave_any" } else { "wave_all" };
                    out.push(Inst::new(Kind::Op, m, vec![Arg::PDef(q), Arg::PUse(p, n)], span));
                    self.materialize(d, (q, false), out, span);
                }
                WaveOp::ReduceAdd | WaveOp::ReduceMin | WaveOp::ReduceMax | WaveOp::PrefixSum => {
                    let signed_only = matches!(op, WaveOp::ReduceMin | WaveOp::ReduceMax);
                    if float || (signed_only && s != Scalar::I32) {
                        self.unsupported(
                            span,
                            format!(
                                "the ISA's wave reductions and prefix sums are on integers (min and max on i32); this one is on {}",
                                s.name()
                            ),
                        );
                        return;
                    }
                    let m = match op {
                        WaveOp::ReduceAdd => "wave_reduce.add",
                        WaveOp::ReduceMin => "wave_reduce.min",
                        WaveOp::ReduceMax => "wave_reduce.max",
                        _ => "wave_prefix_sum",
                    };
                    let x = self.src(args[0]);
                    self.op2(out, m, d, x, span);
                }
            },
        }
    }
}

/// Lowers a kernel's MIR to LIR.
pub fn lower(f: &Func) -> Result<Lir, Unsupported> {
    lower_with(f, Hold::Operands)
}

/// Which comparisons made in one block and tested in others stay in a predicate between
/// (each one held takes one of the four predicates for that while).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hold {
    /// None: every comparison is made again where it is tested.
    Nothing,
    /// Those tested directly (a branch, a select).
    Conditions,
    /// Those too that are operands of `and`/`or` (loop-invariant bounds checks).
    Operands,
}

/// The code that sets `fp` to this thread's frame in Local Memory:
/// `base + linear_thread_id * stride`, with the local arrays below `base`. The linear id is
/// `(tz * Y + ty) * X + tx` for the kernel's workgroup size (X, Y, Z): a wider dispatch
/// puts a thread's frame past the kernel's Local Memory, where the access traps, and never
/// on another thread's. The stride (the multiply's immediate) is patched when the spill
/// slots are known. Returns the code and the next unused register.
pub fn frame_pointer_code(lir: &Lir, fp: Reg, stride: u32, span: &Span) -> (Vec<Inst>, Reg) {
    let base = lir.local_memory.next_multiple_of(4);
    let [x, y, _] = lir.workgroup_size.unwrap_or([1, 1, 1]);
    let (a, b) = (lir.next_reg, lir.next_reg + 1);
    let op = |m: &str, args: Vec<Arg>| Inst::new(Kind::Op, m, args, span);
    let imm = |v: u32| Arg::Imm(v.to_string());
    let mut code = vec![op("mov_special", vec![Arg::Def(a), Arg::Special("sr_thread_id_z")])];
    // (Multiplies by 1 left out.)
    if y != 1 {
        code.push(op("imul", vec![Arg::Def(a), Arg::Use(a), imm(y)]));
    }
    code.push(op("mov_special", vec![Arg::Def(b), Arg::Special("sr_thread_id_y")]));
    code.push(op("iadd", vec![Arg::Def(a), Arg::Use(a), Arg::Use(b)]));
    if x != 1 {
        code.push(op("imul", vec![Arg::Def(a), Arg::Use(a), imm(x)]));
    }
    code.push(op("mov_special", vec![Arg::Def(b), Arg::Special("sr_thread_id_x")]));
    code.push(op("iadd", vec![Arg::Def(a), Arg::Use(a), Arg::Use(b)]));
    if base == 0 {
        code.push(op("imul", vec![Arg::Def(fp), Arg::Use(a), imm(stride)]));
    } else {
        code.push(op("imul", vec![Arg::Def(a), Arg::Use(a), imm(stride)]));
        code.push(op("iadd", vec![Arg::Def(fp), Arg::Use(a), imm(base)]));
    }
    (code, lir.next_reg + 2)
}

/// Lowers a kernel's MIR to LIR; `hold` says which comparisons tested in other blocks stay
/// in a predicate (fewer when that would need more than the four predicates).
pub fn lower_with(f: &Func, hold: Hold) -> Result<Lir, Unsupported> {
    let n = f.types.len();
    let mut def: Vec<Option<&Op>> = vec![None; n];
    let mut def_block = vec![BlockId(0); n];
    for (b, block) in f.blocks.iter().enumerate() {
        for phi in &block.phis {
            def_block[phi.dst.0 as usize] = BlockId(b as u32);
        }
        for inst in &block.insts {
            if let Some(d) = inst.dst {
                def[d.0 as usize] = Some(&inst.op);
                def_block[d.0 as usize] = BlockId(b as u32);
            }
        }
    }
    // Where each value is used.
    let mut uses: Vec<Vec<Use>> = vec![Vec::new(); n];
    for (b, block) in f.blocks.iter().enumerate() {
        let here = BlockId(b as u32);
        for phi in &block.phis {
            for (_, v) in &phi.args {
                uses[v.0 as usize].push(Use::Other);
            }
        }
        for inst in &block.insts {
            match &inst.op {
                Op::Select(c, a, x) => {
                    uses[c.0 as usize].push(Use::Cond(here));
                    uses[a.0 as usize].push(Use::Other);
                    uses[x.0 as usize].push(Use::Other);
                }
                Op::Call(Intrinsic::Wave(WaveOp::Ballot | WaveOp::Any | WaveOp::All), args) => {
                    for a in args {
                        uses[a.0 as usize].push(Use::Cond(here));
                    }
                }
                Op::Unary(UnOp::Not, a) => {
                    uses[a.0 as usize].push(match inst.dst {
                        Some(d) => Use::Part(d),
                        None => Use::Other,
                    });
                }
                Op::Binary(BinOp::LogicAnd | BinOp::LogicOr, a, x) => {
                    for v in [a, x] {
                        uses[v.0 as usize].push(match inst.dst {
                            Some(d) => Use::Part(d),
                            None => Use::Other,
                        });
                    }
                }
                op => {
                    for a in op.operands() {
                        uses[a.0 as usize].push(Use::Other);
                    }
                }
            }
        }
        if let Term::Branch(c, _, _) = &block.term {
            uses[c.0 as usize].push(Use::Cond(here));
        }
    }
    // Predicate form: comparisons, and `not`/`and`/`or` of values in predicate form, used
    // only as conditions (or inside such a value). The compare is emitted where each
    // condition is tested; its operands are available there, since their definitions
    // dominate the comparison's. Demote what does not qualify until nothing changes.
    let mut pred_form = vec![false; n];
    for (v, d) in def.iter().enumerate() {
        let candidate = match d {
            Some(Op::Binary(op, _, _)) => {
                op.is_comparison() || matches!(op, BinOp::LogicAnd | BinOp::LogicOr)
            }
            Some(Op::Unary(UnOp::Not, _)) => true,
            _ => false,
        };
        pred_form[v] = candidate && f.types[v] == Ty::Scalar(Scalar::Bool);
    }
    loop {
        let mut changed = false;
        for v in 0..n {
            if !pred_form[v] {
                continue;
            }
            let ok = !uses[v].is_empty()
                && uses[v].iter().all(|u| match u {
                    Use::Cond(_) => true,
                    Use::Part(d) => pred_form[d.0 as usize],
                    Use::Other => false,
                })
                && match def[v] {
                    Some(Op::Unary(UnOp::Not, a)) => pred_form[a.0 as usize],
                    Some(Op::Binary(BinOp::LogicAnd | BinOp::LogicOr, a, b)) => {
                        pred_form[a.0 as usize] && pred_form[b.0 as usize]
                    }
                    _ => true,
                };
            if !ok {
                pred_form[v] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Held: a comparison tested only as a condition in some block other than its own. With
    // `Hold::Operands`, also one read as an operand of `and`/`or` in other blocks, one of
    // them in a loop that does not make it (a bounds check made once before the loop: its
    // operands need not live through it).
    let logic = |d: &Value| {
        matches!(def[d.0 as usize], Some(Op::Binary(BinOp::LogicAnd | BinOp::LogicOr, ..)))
    };
    let loops = if hold == Hold::Operands { crate::mir::natural_loops(f) } else { Vec::new() };
    let invariant_in_loop = |made: BlockId, used: BlockId| {
        loops.iter().any(|(_, body)| body.contains(&used) && !body.contains(&made))
    };
    let held: Vec<bool> = (0..n)
        .map(|v| {
            hold > Hold::Nothing
                && pred_form[v]
                && matches!(def[v], Some(Op::Binary(op, ..)) if op.is_comparison())
                && uses[v].iter().all(|u| match u {
                    Use::Cond(_) => true,
                    Use::Part(d) => {
                        hold == Hold::Operands
                            && logic(d)
                            && def_block[d.0 as usize] != def_block[v]
                    }
                    Use::Other => false,
                })
                && uses[v].iter().any(|u| match u {
                    Use::Cond(b) => *b != def_block[v],
                    Use::Part(d) => invariant_in_loop(def_block[v], def_block[d.0 as usize]),
                    Use::Other => false,
                })
        })
        .collect();
    let all_uses = f.reads();
    // Integer multiplies used once, by an addition: one `imad`.
    let fused: Vec<bool> = (0..n)
        .map(|v| {
            matches!(def[v], Some(Op::Binary(BinOp::Mul, ..)))
                && matches!(f.types[v], Ty::Scalar(Scalar::I32 | Scalar::U32))
                && all_uses[v] == 1
        })
        .collect();
    let mut fused_into = vec![false; n];
    for block in &f.blocks {
        for inst in &block.insts {
            // `imad` takes registers only: with a constant operand, `imul`/`iadd` with
            // immediates hold fewer registers (and constants are not kept live).
            let is_const = |v: &Value| matches!(def[v.0 as usize], Some(Op::Int(_)));
            let no_consts = |m: &Value| match def[m.0 as usize] {
                Some(Op::Binary(BinOp::Mul, x, y)) => !is_const(x) && !is_const(y),
                _ => false,
            };
            if let (Some(d), Op::Binary(BinOp::Add, a, b)) = (inst.dst, &inst.op)
                && matches!(f.types[d.0 as usize], Ty::Scalar(Scalar::I32 | Scalar::U32))
            {
                if fused[a.0 as usize] && no_consts(a) && !is_const(b) {
                    fused_into[a.0 as usize] = true;
                } else if fused[b.0 as usize] && no_consts(b) && !is_const(a) {
                    fused_into[b.0 as usize] = true;
                }
            }
        }
    }
    // Addresses `x + c` whose every use is the address of a load or store.
    let folded = f.offset_addresses();
    let params: Vec<(String, &'static str)> = f
        .params
        .iter()
        .map(|(name, ty)| (name.clone(), param_type(*ty).unwrap_or("u32")))
        .collect();
    let mut l = Lower {
        f,
        lir: Lir {
            name: f.name.clone(),
            params,
            insts: Vec::new(),
            next_reg: PHYS + n as u32,
            next_pred: 0,
            local_memory: f.local_memory,
            frame_bytes: 0,
            frame: None,
            workgroup_size: f.workgroup_size,
            origin: HashMap::new(),
            pairs: Default::default(),
        },
        def,
        pred_form,
        const_read: vec![false; n],
        folded,
        fused: fused_into,
        bound: upper_bounds(f),
        held,
        held_pred: HashMap::new(),
        phi_copy: HashMap::new(),
        code: Vec::new(),
        end_span: Vec::new(),
        frame_offset: HashMap::new(),
        private_cache: HashMap::new(),
        error: None,
    };
    // The private arrays still in memory, one after another in the thread's frame.
    let mut frame = 0u32;
    for a in &f.private {
        let used = f.blocks.iter().flat_map(|b| &b.insts).any(|i| {
            matches!(&i.op, Op::Load(Space::Private(v), _) | Op::Store(Space::Private(v), _, _) if *v == a.var)
        });
        if used {
            let size = if a.elem == Scalar::F64 { 8 } else { 4 };
            frame = frame.next_multiple_of(size);
            l.frame_offset.insert(a.var, (frame, size));
            frame += a.len * size;
        }
    }
    l.lir.frame_bytes = frame.next_multiple_of(4);
    for (i, (name, ty)) in f.params.iter().enumerate() {
        if param_type(*ty).is_none() {
            let span = f
                .blocks
                .first()
                .and_then(|b| {
                    b.insts.iter().find(|x| x.op == Op::Param(i as u32)).map(|x| x.span.clone())
                })
                .unwrap_or(0..0);
            return Err(Unsupported {
                message: format!(
                    "parameter `{name}` has type {ty}, which a .wbin cannot pass yet: use f32, i32, u32, bool or a buffer of f32, f16, i32 or u32"
                ),
                span,
            });
        }
    }
    // 64-bit values live in register pairs.
    for (v, ty) in f.types.iter().enumerate() {
        if *ty == Ty::Scalar(Scalar::F64) {
            l.lir.pairs.insert(reg_of(Value(v as u32)));
        }
    }
    for block in &f.blocks {
        for phi in &block.phis {
            let fresh = if f.types[phi.dst.0 as usize] == Ty::Scalar(Scalar::F64) {
                l.lir.reg_pair()
            } else {
                l.lir.reg()
            };
            l.phi_copy.insert(phi.dst, fresh);
        }
    }
    for (v, _) in f.types.iter().enumerate() {
        l.lir.origin.insert(reg_of(Value(v as u32)), v as u32);
    }
    // Each block's code: phi copies in, instructions, copies out to each successor's phis.
    for (b, block) in f.blocks.iter().enumerate() {
        let mut out = Vec::new();
        l.private_cache.clear();
        let first_span = block.insts.first().map(|i| i.span.clone()).unwrap_or(0..0);
        for phi in &block.phis {
            out.push(Inst::new(
                Kind::Copy,
                "mov",
                vec![Arg::Def(reg_of(phi.dst)), Arg::Use(l.phi_copy[&phi.dst])],
                &first_span,
            ));
        }
        for inst in &block.insts {
            l.inst(inst, &mut out);
        }
        let span = block.insts.last().map(|i| i.span.clone()).unwrap_or(first_span);
        let mut seen = Vec::new();
        for s in block.term.successors() {
            if seen.contains(&s) {
                continue;
            }
            seen.push(s);
            for phi in &f.blocks[s.0 as usize].phis {
                if let Some((_, v)) = phi.args.iter().find(|(p, _)| p.0 as usize == b) {
                    let dst = Arg::Def(l.phi_copy[&phi.dst]);
                    // A constant is set again here rather than kept in a register since
                    // its definition: the same one instruction, and nothing held live.
                    if let Some(text) = l.imm(*v) {
                        out.push(Inst::new(Kind::Op, "mov_imm", vec![dst, Arg::Imm(text)], &span));
                    } else {
                        let src = l.src(*v);
                        out.push(Inst::new(Kind::Copy, "mov", vec![dst, src], &span));
                    }
                }
            }
        }
        l.code.push(out);
        l.end_span.push(span);
    }
    let insts = structure(&mut l)?;
    if let Some(e) = l.error {
        return Err(e);
    }
    // Constants nobody reads as a register need no instruction.
    let const_read = l.const_read;
    let mut lir = l.lir;
    lir.insts = insts
        .into_iter()
        .filter(|i| {
            i.kind != Kind::Const
                || i.defs().any(|r| r < PHYS || const_read.get((r - PHYS) as usize) != Some(&false))
        })
        .collect();
    // Private arrays kept in memory: the frame pointer is set on entry.
    if let Some(fp) = lir.frame {
        let span =
            f.blocks[0].insts.iter().find(|i| i.span != (0..0)).map_or(0..0, |i| i.span.clone());
        let (code, next) = frame_pointer_code(&lir, fp, lir.frame_bytes, &span);
        lir.insts.splice(0..0, code);
        lir.next_reg = lir.next_reg.max(next);
    }
    Ok(lir)
}

/// A pass on LIR: its name and what it does.
pub type Pass = (&'static str, fn(&mut Lir));

/// The passes after lowering, in order (the LIR verifier runs after each in debug builds).
pub fn passes() -> Vec<Pass> {
    vec![
        ("if-convert", |lir: &mut Lir| lir.insts = if_convert(std::mem::take(&mut lir.insts))),
        ("rematerialize", rematerialize),
    ]
}

/// A value that costs one instruction with no operands (a special register, a constant)
/// and is read after a loop it lives across is set again right before that read, instead
/// of holding a register through the loop. Reads at the same loop depth as the definition
/// only, so no loop runs the extra instruction.
pub fn rematerialize(lir: &mut Lir) {
    let depth = loop_depths(&lir.insts);
    let mut def_at: HashMap<Reg, Vec<usize>> = HashMap::new();
    for (i, inst) in lir.insts.iter().enumerate() {
        for d in inst.defs() {
            def_at.entry(d).or_default().push(i);
        }
    }
    // (use index, register, defining instruction index)
    let mut plan: Vec<(usize, Reg, usize)> = Vec::new();
    for (i, inst) in lir.insts.iter().enumerate() {
        for r in inst.uses() {
            let Some([d]) = def_at.get(&r).map(|v| v.as_slice()) else { continue };
            let def = &lir.insts[*d];
            let cheap = def.guard.is_none()
                && !lir.pairs.contains(&r)
                && def.args.len() == 2
                && (def.mnemonic == "mov_special" || def.mnemonic == "mov_imm");
            if !cheap
                || *d >= i
                || depth[i] != depth[*d]
                || inst.guard.is_some() && inst.defs().any(|x| x == r)
            {
                continue;
            }
            // It crosses a loop that does not read it (one that does keeps it live anyway).
            let crosses = lir.insts[*d..i].iter().any(|x| x.kind == Kind::EndLoop)
                && !(*d + 1..i)
                    .any(|k| depth[k] > depth[*d] && lir.insts[k].uses().any(|u| u == r));
            if crosses && !plan.iter().any(|(u, rr, _)| *u == i && *rr == r) {
                plan.push((i, r, *d));
            }
        }
    }
    if plan.is_empty() {
        return;
    }
    plan.sort();
    let mut out = Vec::with_capacity(lir.insts.len() + plan.len());
    let mut next = 0;
    let old = std::mem::take(&mut lir.insts);
    for (i, mut inst) in old.clone().into_iter().enumerate() {
        while next < plan.len() && plan[next].0 == i {
            let (_, r, d) = plan[next];
            let fresh = lir.reg();
            let mut again = old[d].clone();
            again.args[0] = Arg::Def(fresh);
            again.span = inst.span.clone();
            out.push(again);
            for a in &mut inst.args {
                match a {
                    Arg::Use(x) | Arg::Addr(x, _) if *x == r => *x = fresh,
                    _ => {}
                }
            }
            if let Some(o) = lir.origin.get(&r).copied() {
                lir.origin.insert(fresh, o);
            }
            next += 1;
        }
        out.push(inst);
    }
    // Definitions nobody reads any more.
    let read: std::collections::HashSet<Reg> =
        out.iter().flat_map(|i| i.uses().collect::<Vec<_>>()).collect();
    out.retain(|i| {
        !(i.guard.is_none()
            && i.args.len() == 2
            && (i.mnemonic == "mov_special" || i.mnemonic == "mov_imm")
            && i.defs().all(|d| d >= PHYS && !read.contains(&d)))
    });
    lir.insts = out;
}

/// Instructions an `if` arm may hold to become guarded instructions.
/// A copy, or a constant set again (what a phi's incoming value becomes).
fn is_copy(i: &Inst) -> bool {
    guardable(i) && (i.kind == Kind::Copy || (i.kind == Kind::Op && i.mnemonic == "mov_imm"))
}

fn guardable(i: &Inst) -> bool {
    matches!(i.kind, Kind::Op | Kind::Copy | Kind::Const)
        && i.guard.is_none()
        && i.pred_defs().next().is_none()
        && i.pred_uses().next().is_none()
        && !i.mnemonic.starts_with("wave_")
        && !i.mnemonic.starts_with("barrier")
        && !i.mnemonic.starts_with("fence")
}

/// Whether the value instruction `at` writes to `r` can be read outside `arm` (or before `at`
/// in it): a search along the control flow from `at` that stops at writes of `r` that do not
/// keep its old value.
fn reaches_read(
    insts: &[Inst],
    succ: &[Vec<usize>],
    at: usize,
    r: Reg,
    arm: &std::ops::Range<usize>,
) -> bool {
    let mut seen = vec![false; insts.len() + 1];
    let mut work: Vec<usize> = succ[at].clone();
    while let Some(j) = work.pop() {
        if j >= insts.len() || seen[j] {
            continue;
        }
        seen[j] = true;
        let x = &insts[j];
        if x.uses().any(|u| u == r) && (!arm.contains(&j) || j <= at) {
            return true;
        }
        let kills = x.defs().any(|d| d == r) && (x.guard.is_none() || x.guard_kills);
        if !kills {
            work.extend(succ[j].iter().copied());
        }
    }
    false
}

/// Whether predicate `p`, as last set in `before`, holds in at most one thread of the
/// workgroup: `thread_id.x|y|z == u` for a value `u` the same in every thread (an immediate,
/// a parameter, a uniform special register, or arithmetic of those).
fn one_thread_test(before: &[Inst], p: Pred) -> bool {
    let Some(at) = before.iter().rposition(|x| x.pred_defs().any(|q| q == p)) else {
        return false;
    };
    let cmp = &before[at];
    if cmp.guard.is_some() || !(cmp.mnemonic == "icmp.eq" || cmp.mnemonic == "ucmp.eq") {
        return false;
    }
    // The instruction that last wrote `r` before `at`, when it is not inside a branch.
    let def = |r: Reg, at: usize| -> Option<(usize, &Inst)> {
        let k = before[..at].iter().rposition(|x| x.defs().any(|d| d == r))?;
        (before[k].guard.is_none()).then_some((k, &before[k]))
    };
    fn uniform(before: &[Inst], r: Reg, at: usize, depth: u32) -> bool {
        if r < PHYS {
            return true; // a parameter (registers r0.. hold them until written)
        }
        let Some(k) = before[..at].iter().rposition(|x| x.defs().any(|d| d == r)) else {
            return false;
        };
        let x = &before[k];
        if x.guard.is_some() || depth == 0 {
            return false;
        }
        match x.mnemonic.as_str() {
            "mov_imm" => true,
            "mov_special" => x.args.iter().any(|a| {
                matches!(a, Arg::Special(s) if ["sr_workgroup_", "sr_grid_size", "sr_wave_width"].iter().any(|u| s.starts_with(u)))
            }),
            m if m.starts_with("wave_") || m.contains("load") || m.starts_with("atomic") => false,
            _ => x.uses().all(|u| uniform(before, u, k, depth - 1)),
        }
    }
    let thread = |a: &Arg| match a {
        Arg::Use(r) => def(*r, at).is_some_and(|(_, x)| {
            x.mnemonic == "mov_special"
                && x.args
                    .iter()
                    .any(|a| matches!(a, Arg::Special(s) if s.starts_with("sr_thread_id")))
        }),
        _ => false,
    };
    let same_everywhere = |a: &Arg| match a {
        Arg::Imm(_) => true,
        Arg::Use(r) => uniform(before, *r, at, 4),
        _ => false,
    };
    let (Some(x), Some(y)) = (cmp.args.get(1), cmp.args.get(2)) else { return false };
    (thread(x) && same_everywhere(y)) || (thread(y) && same_everywhere(x))
}

/// If-conversion: a short `if p / A / [else / B /] endif` whose arms hold only plain
/// instructions becomes `@p A` and `@!p B`. A wave then runs |A| + |B| instructions instead
/// of |A| + |B| + 3 control instructions (or |A| + 2 without `else`), and nothing diverges.
/// A register written in an arm and read only inside it (or written by both arms) does
/// not keep its old value: `guard_kills`.
pub fn if_convert(insts: Vec<Inst>) -> Vec<Inst> {
    // Where every register is read.
    let mut reads: HashMap<Reg, Vec<usize>> = HashMap::new();
    for (i, inst) in insts.iter().enumerate() {
        for r in inst.uses() {
            reads.entry(r).or_default().push(i);
        }
    }
    let depth = loop_depths(&insts);
    let nregs =
        insts.iter().flat_map(|x| x.defs().chain(x.uses())).max().map_or(0, |r| r as usize + 1);
    let succ = successors(&insts).ok();
    let live_out = succ.as_ref().map(|succ| crate::regalloc::liveness(&insts, succ, nregs));
    let mut out: Vec<Inst> = Vec::with_capacity(insts.len());
    let mut i = 0;
    while i < insts.len() {
        let inst = &insts[i];
        let candidate = (|| {
            if inst.kind != Kind::If {
                return None;
            }
            let Some(Arg::PUse(p, n)) = inst.args.first() else { return None };
            let mut j = i + 1;
            while j < insts.len() && guardable(&insts[j]) {
                j += 1;
            }
            let then = i + 1..j;
            let (other, end) = match insts.get(j).map(|x| x.kind) {
                Some(Kind::EndIf) => (j..j, j),
                Some(Kind::Else) => {
                    let mut k = j + 1;
                    while k < insts.len() && guardable(&insts[k]) {
                        k += 1;
                    }
                    if insts.get(k).map(|x| x.kind) != Some(Kind::EndIf) {
                        return None;
                    }
                    (j + 1..k, k)
                }
                _ => return None,
            };
            // Copies inside an arm mostly coalesce away, in either form; but a guarded copy
            // into a register read after the `endif` (a phi's) usually stays an instruction,
            // where the branching form needed none.
            let cost = |r: &std::ops::Range<usize>| {
                r.clone().filter(|&k| insts[k].kind != Kind::Copy).count()
            };
            let (a, b) = (cost(&then), cost(&other));
            // A copy into a register read after the `if` stays an instruction unless its
            // source dies there (then the two share a register: a phi's value made in the
            // arm, or a variable the arm leaves unchanged).
            let source_lives_on = |k: usize| match (&live_out, insts[k].args.get(1)) {
                (Some(live), Some(Arg::Use(s))) => {
                    live[end].get(*s as usize / 64).is_some_and(|w| w & (1 << (s % 64)) != 0)
                }
                _ => true,
            };
            let kept_copies = then
                .clone()
                .chain(other.clone())
                .filter(|&k| insts[k].kind == Kind::Copy)
                .filter(|&k| {
                    insts[k].defs().any(|d| {
                        reads.get(&d).is_some_and(|at| at.iter().any(|&r| r <= i || r >= end))
                    })
                })
                .filter(|&k| source_lives_on(k))
                .count();
            let no_else = other.is_empty() && end == j;
            let control = if no_else { 2 } else { 3 };
            // `if thread_id == c`: one thread of the workgroup runs the arm, so every other
            // wave skips it whole when it branches.
            let rare = no_else && !*n && one_thread_test(&insts[..i], *p);
            let worth = kept_copies < control
                && !(rare && a > control)
                && if no_else {
                    // In a loop the test often fails for most lanes (a tree reduction's
                    // shrinking half): branching then skips the arm.
                    a <= if depth[i] > 0 { 3 } else { 6 }
                } else {
                    a + b <= 6 && a.min(b) <= 3
                };
            worth.then_some((*p, *n, then, other, end))
        })();
        let Some((p, n, then, other, end)) = candidate else {
            out.push(inst.clone());
            i += 1;
            continue;
        };
        let inside = |k: usize| k > i && k < end;
        for (range, neg) in [(then.clone(), n), (other.clone(), !n)] {
            for k in range.clone() {
                let mut g = insts[k].clone();
                g.guard = Some((p, neg));
                let defs: Vec<Reg> = g.defs().collect();
                // Read only inside this arm, after this write, before another write of it?
                let local = defs.iter().all(|d| {
                    // (An instruction that reads the register it writes reads it first. Code
                    // duplicated elsewhere reuses registers: what matters is where this
                    // write's value can be read.)
                    let read_outside = match &succ {
                        Some(succ) => reaches_read(&insts, succ, k, *d, &range),
                        None => !reads
                            .get(d)
                            .is_none_or(|at| at.iter().all(|&r| range.contains(&r) && r >= k)),
                    };
                    !read_outside
                        && insts.iter().enumerate().all(|(x, y)| {
                            x == k || !y.defs().any(|e| e == *d) || range.contains(&x) || !inside(x)
                        })
                });
                // Or written again by the other arm (complementary guards cover every lane).
                let covered = neg == n
                    && defs.iter().all(|d| other.clone().any(|x| insts[x].defs().any(|e| e == *d)))
                    && defs.iter().all(|d| {
                        reads
                            .get(d)
                            .is_none_or(|at| at.iter().all(|&r| !inside(r) || then.contains(&r)))
                    });
                g.guard_kills = !defs.is_empty() && (local || covered);
                out.push(g);
            }
        }
        i = end + 1;
    }
    out
}

// -------------------------------------------------------------------------------------------
// Structured control flow.

/// Where control goes, in the current loop's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Block(BlockId),
    /// Back to the innermost loop's header.
    Cont,
    /// To the innermost loop's latch (the block that goes back to the header, like a `for`
    /// loop's step), which `continue` reaches in a `for` loop.
    Latch,
    /// Out of the innermost loop.
    Brk,
    /// The thread ends.
    Ret,
    /// Nowhere (no path continues).
    Exit,
}

struct Region {
    header: Option<BlockId>,
    exit: Option<BlockId>,
    /// The one block that jumps back to the header, when it is not the header itself.
    latch: Option<BlockId>,
    blocks: Vec<bool>,
}

struct Structurer<'a, 'f> {
    l: &'a mut Lower<'f>,
    dom: crate::mir::DomTree,
    succ: Vec<Vec<BlockId>>,
    /// Loop headers: blocks with an incoming edge from a block they dominate.
    header: Vec<bool>,
    regions: Vec<Region>,
    out: Vec<Inst>,
    emitted: Vec<bool>,
    /// Blocks in reverse postorder.
    rpo: Vec<BlockId>,
    /// Instructions emitted a second time (tail duplication), against a budget.
    duplicated: usize,
}

impl Structurer<'_, '_> {
    fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.dom.dominates(a, b)
    }

    fn region(&self) -> &Region {
        self.regions.last().expect("the kernel's region")
    }

    /// Where an edge to `b` goes, in the innermost region's terms.
    fn classify(&self, b: BlockId) -> Node {
        let r = self.region();
        if Some(b) == r.header {
            Node::Cont
        } else if Some(b) == r.latch {
            Node::Latch
        } else if Some(b) == r.exit {
            Node::Brk
        } else {
            Node::Block(b)
        }
    }

    /// Follows blocks with no code and no condition.
    fn resolve(&self, mut b: BlockId) -> Node {
        for _ in 0..self.succ.len() + 1 {
            match self.classify(b) {
                Node::Block(x)
                    if self.l.code[x.0 as usize].is_empty()
                        && !self.header[x.0 as usize]
                        && !self.emitted[x.0 as usize] =>
                {
                    match self.l.f.blocks[x.0 as usize].term {
                        Term::Jump(t) => b = t,
                        Term::Return => return Node::Ret,
                        Term::Branch(..) => return Node::Block(x),
                    }
                }
                other => return other,
            }
        }
        Node::Block(b)
    }

    /// A region: the blocks a loop header dominates that its exit does not reach without
    /// passing the header, with post-dominators inside.
    fn make_region(&self, header: Option<BlockId>, exit: Option<BlockId>) -> Region {
        let n = self.succ.len();
        let mut blocks = vec![false; n];
        match header {
            None => blocks.iter_mut().for_each(|b| *b = true),
            Some(h) => {
                // Reached from the exit without passing the header: outside.
                let mut outside = vec![false; n];
                if let Some(e) = exit {
                    let mut stack = vec![e];
                    outside[e.0 as usize] = true;
                    while let Some(x) = stack.pop() {
                        for &s in &self.succ[x.0 as usize] {
                            if s != h && !outside[s.0 as usize] {
                                outside[s.0 as usize] = true;
                                stack.push(s);
                            }
                        }
                    }
                }
                for (b, inside) in blocks.iter_mut().enumerate() {
                    let id = BlockId(b as u32);
                    *inside = !outside[b] && self.dominates(h, id);
                }
            }
        }
        // The latch: the only back edge's source, ending in a jump to the header.
        let latch = header.and_then(|h| {
            let sources: Vec<usize> =
                (0..n).filter(|&b| blocks[b] && self.succ[b].contains(&h)).collect();
            match sources.as_slice() {
                [l] if BlockId(*l as u32) != h && self.l.f.blocks[*l].term == Term::Jump(h) => {
                    Some(BlockId(*l as u32))
                }
                _ => None,
            }
        });
        Region { header, exit, latch, blocks }
    }

    /// The exit of the loop at `h`: the block after the loop, where `break` goes.
    fn loop_exit(&self, h: BlockId) -> Option<BlockId> {
        let n = self.succ.len();
        // The natural loop: blocks that reach a back edge's source without passing h.
        let mut in_loop = vec![false; n];
        in_loop[h.0 as usize] = true;
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in self.succ.iter().enumerate() {
            for s in ss {
                preds[s.0 as usize].push(BlockId(b as u32));
            }
        }
        let mut stack: Vec<BlockId> =
            preds[h.0 as usize].iter().copied().filter(|p| self.dominates(h, *p)).collect();
        while let Some(x) = stack.pop() {
            if !in_loop[x.0 as usize] {
                in_loop[x.0 as usize] = true;
                stack.extend(preds[x.0 as usize].iter().copied());
            }
        }
        // Candidates: the header's own way out first, then other exits, then what they
        // reach, in block order.
        let mut candidates: Vec<BlockId> = Vec::new();
        for &s in &self.succ[h.0 as usize] {
            if !in_loop[s.0 as usize] {
                candidates.push(s);
            }
        }
        let mut exits: Vec<BlockId> = (0..n)
            .filter(|&b| in_loop[b])
            .flat_map(|b| self.succ[b].iter().copied())
            .filter(|s| !in_loop[s.0 as usize])
            .collect();
        exits.sort();
        exits.dedup();
        candidates.extend(exits.iter().copied());
        let mut reach = vec![false; n];
        let mut stack = exits.clone();
        while let Some(x) = stack.pop() {
            for &s in &self.succ[x.0 as usize] {
                if !in_loop[s.0 as usize] && !reach[s.0 as usize] {
                    reach[s.0 as usize] = true;
                    stack.push(s);
                }
            }
        }
        candidates.extend((0..n).filter(|&b| reach[b]).map(|b| BlockId(b as u32)));
        if candidates.is_empty() {
            return None;
        }
        // Valid: every edge leaving the region goes to the exit or back to the header.
        for &m in &candidates {
            let r = self.make_region_blocks(h, m);
            let ok = (0..n)
                .filter(|&b| r[b])
                .all(|b| self.succ[b].iter().all(|s| *s == m || *s == h || r[s.0 as usize]));
            if ok {
                return Some(m);
            }
        }
        // Only ways out that end the thread: no exit.
        None
    }

    fn make_region_blocks(&self, h: BlockId, e: BlockId) -> Vec<bool> {
        let n = self.succ.len();
        let mut outside = vec![false; n];
        let mut stack = vec![e];
        outside[e.0 as usize] = true;
        while let Some(x) = stack.pop() {
            for &s in &self.succ[x.0 as usize] {
                if s != h && !outside[s.0 as usize] {
                    outside[s.0 as usize] = true;
                    stack.push(s);
                }
            }
        }
        (0..n).map(|b| !outside[b] && self.dominates(h, BlockId(b as u32))).collect()
    }

    /// Blocks reachable from `from` inside the region without leaving it or passing `stop`,
    /// and which of the latch, the header (`continue`) and `stop` it reaches.
    fn reach(&self, from: Node, stop: Node) -> (Vec<bool>, bool, bool, bool) {
        let n = self.succ.len();
        let mut seen = vec![false; n];
        let r = self.region();
        let b = match from {
            Node::Block(b) => b,
            Node::Latch => return (seen, true, false, stop == Node::Latch),
            Node::Cont => return (seen, false, true, stop == Node::Cont),
            _ => return (seen, false, false, false),
        };
        let (mut latch, mut cont, mut at_stop) = (false, false, false);
        let mut stack = vec![b];
        seen[b.0 as usize] = true;
        if stop == Node::Block(b) {
            return (seen, false, false, true);
        }
        while let Some(x) = stack.pop() {
            for &s in &self.succ[x.0 as usize] {
                if Some(s) == r.latch {
                    latch = true;
                    continue;
                }
                if Some(s) == r.header {
                    cont = true;
                    continue;
                }
                if Some(s) == r.exit || !r.blocks[s.0 as usize] {
                    continue;
                }
                if stop == Node::Block(s) {
                    at_stop = true;
                    seen[s.0 as usize] = true;
                    continue;
                }
                if !seen[s.0 as usize] {
                    seen[s.0 as usize] = true;
                    stack.push(s);
                }
            }
        }
        at_stop |= (stop == Node::Latch && latch) || (stop == Node::Cont && cont);
        (seen, latch, cont, at_stop)
    }

    /// Where the arms of an `if` meet: the first block (in reverse postorder) that both
    /// reach without leaving; else the latch (or header) if both go there; else an arm that
    /// never reaches `stop` (it leaves by break, continue or return) meets the other at the
    /// other's start.
    fn join(&self, t: Node, f: Node, stop: Node) -> Node {
        if t == stop || f == stop {
            return stop;
        }
        let ((rt, lt, ct, st), (rf, lf, cf, sf)) = (self.reach(t, stop), self.reach(f, stop));
        // The first common block that every continuing path passes: from either arm, a path
        // that avoids it must not reach what follows it (it may only leave the region).
        let common = self
            .rpo
            .iter()
            .find(|b| rt[b.0 as usize] && rf[b.0 as usize] && self.merges_all(**b, &[t, f], stop));
        match common {
            Some(b) => Node::Block(*b),
            None if st && sf => stop,
            None if sf => f,
            None if st => t,
            None if lt && lf => Node::Latch,
            None if ct && cf => Node::Cont,
            None => f,
        }
    }

    /// Whether every path from `arms` that does not pass `j` leaves the region (or ends)
    /// without reaching anything `j` reaches, or `stop`.
    fn merges_all(&self, j: BlockId, arms: &[Node], stop: Node) -> bool {
        let n = self.succ.len();
        let r = self.region();
        let inside = |s: BlockId| {
            Some(s) != r.header && Some(s) != r.exit && Some(s) != r.latch && r.blocks[s.0 as usize]
        };
        // What follows j.
        let mut after = vec![false; n];
        let mut stack = vec![j];
        while let Some(x) = stack.pop() {
            for &s in &self.succ[x.0 as usize] {
                if inside(s) && s != j && !after[s.0 as usize] {
                    after[s.0 as usize] = true;
                    stack.push(s);
                }
            }
        }
        let mut seen = vec![false; n];
        let mut stack: Vec<BlockId> = arms
            .iter()
            .filter_map(|a| match a {
                Node::Block(b) if *b != j => Some(*b),
                _ => None,
            })
            .collect();
        while let Some(x) = stack.pop() {
            if seen[x.0 as usize] {
                continue;
            }
            seen[x.0 as usize] = true;
            if after[x.0 as usize] || stop == Node::Block(x) {
                return false;
            }
            for &s in &self.succ[x.0 as usize] {
                if inside(s) && s != j {
                    stack.push(s);
                }
            }
        }
        true
    }

    fn always(&mut self, span: &Span) -> Pred {
        let p = self.l.lir.pred();
        self.out.push(Inst::new(Kind::Op, "icmp.eq", vec![Arg::PDef(p), Arg::Any, Arg::Any], span));
        p
    }

    /// Leaves unconditionally: `continue`/`break` on an always-true predicate, or `halt`.
    /// The latch's code, for a `continue` that must run it before going back.
    fn latch_code(&self) -> Vec<Inst> {
        match self.region().latch {
            Some(l) => self.l.code[l.0 as usize].clone(),
            None => Vec::new(),
        }
    }

    fn escape(&mut self, to: Node, span: &Span) {
        match to {
            Node::Latch => {
                let code = self.latch_code();
                self.out.extend(code);
                self.escape(Node::Cont, span);
            }
            Node::Cont => {
                let p = self.always(span);
                self.out.push(Inst::new(
                    Kind::Continue,
                    "continue",
                    vec![Arg::PUse(p, false)],
                    span,
                ));
            }
            Node::Brk => {
                let p = self.always(span);
                self.out.push(Inst::new(Kind::Break, "break", vec![Arg::PUse(p, false)], span));
            }
            Node::Ret => self.out.push(Inst::new(Kind::Halt, "halt", vec![], span)),
            _ => {}
        }
    }

    /// Leaves where the predicate holds.
    fn escape_if(&mut self, to: Node, c: (Pred, bool), span: &Span) {
        match to {
            Node::Latch => {
                let code = self.latch_code();
                if code.iter().all(is_copy) {
                    // Copies into the header's phis (or nothing): made where the way out is
                    // taken, then back to the top.
                    self.guarded(code, c);
                    self.escape_if(Node::Cont, c, span);
                } else {
                    self.out.push(Inst::new(Kind::If, "if", vec![Arg::PUse(c.0, c.1)], span));
                    self.out.extend(code);
                    self.escape(Node::Cont, span);
                    self.out.push(Inst::new(Kind::EndIf, "endif", vec![], span));
                }
            }
            Node::Cont => self.out.push(Inst::new(
                Kind::Continue,
                "continue",
                vec![Arg::PUse(c.0, c.1)],
                span,
            )),
            Node::Brk => {
                self.out.push(Inst::new(Kind::Break, "break", vec![Arg::PUse(c.0, c.1)], span))
            }
            Node::Ret => {
                let mut h = Inst::new(Kind::Halt, "halt", vec![], span);
                h.guard = Some(c);
                self.out.push(h);
            }
            _ => {}
        }
    }

    /// The operands of `c` when it is an `and` of two conditions held in predicates.
    fn held_and(&self, c: Value) -> Option<(Value, Value)> {
        match self.l.def[c.0 as usize] {
            Some(Op::Binary(BinOp::LogicAnd, x, y))
                if self.l.pred_form[c.0 as usize] && self.l.is_held(*x) && self.l.is_held(*y) =>
            {
                Some((*x, *y))
            }
            _ => None,
        }
    }

    /// Whether the innermost loop's latch holds only copies (or nothing): a way to it can
    /// then be `continue p`, with the copies made under `p` first.
    fn latch_copies_only(&self) -> bool {
        self.latch_code().iter().all(is_copy)
    }

    /// Whether the way from `arm` to `stop` is a few plain instructions in a row, which
    /// if-conversion turns into guarded instructions: no loop, branch or way out.
    fn straight_to(&self, mut arm: Node, stop: Node) -> bool {
        let mut count = 0;
        for _ in 0..self.succ.len() + 1 {
            if arm == stop {
                return true;
            }
            let Node::Block(b) = arm else { return false };
            let code = &self.l.code[b.0 as usize];
            count += code.iter().filter(|i| i.kind != Kind::Copy).count();
            if self.header[b.0 as usize] || count > 6 || !code.iter().all(guardable) {
                return false;
            }
            arm = match self.l.f.blocks[b.0 as usize].term {
                Term::Jump(t) => self.resolve(t),
                _ => return false,
            };
        }
        false
    }

    /// Whether to leave for `to` where a branch's condition says so, rather than wrap the
    /// other arm (`other`) in an `if`: always for `break`, `return` and `continue` past the
    /// rest of the body; for the end of the body (`to` is `stop`), when the latch holds
    /// only copies and the other arm is more than if-conversion would take.
    fn escape_pays(&self, to: Node, other: Node, stop: Node) -> bool {
        let can_leave = match to {
            Node::Brk | Node::Ret | Node::Cont => true,
            Node::Latch => self.latch_copies_only(),
            _ => false,
        };
        let other_is_long = matches!(other, Node::Block(_)) && !self.straight_to(other, stop);
        can_leave && other != to && (to != stop || other_is_long)
    }

    /// A block of a few plain instructions (phi copies, mostly) that then leaves the loop or
    /// the kernel: its code and where it goes.
    fn code_then_escape(&self, arm: Node, other: Node, stop: Node) -> Option<(Vec<Inst>, Node)> {
        let Node::Block(b) = arm else { return None };
        if self.header[b.0 as usize] || self.emitted[b.0 as usize] {
            return None;
        }
        let code = &self.l.code[b.0 as usize];
        if code.is_empty() || code.len() > 6 || !code.iter().all(guardable) {
            return None;
        }
        let to = match self.l.f.blocks[b.0 as usize].term {
            Term::Jump(t) => self.resolve(t),
            Term::Return => Node::Ret,
            Term::Branch(..) => return None,
        };
        self.escape_pays(to, other, stop).then(|| (code.clone(), to))
    }

    /// Emits `code` under `guard`, before a way out taken under the same guard; a register
    /// it writes that nothing else reads (a phi of the block the code comes from) need not
    /// keep its old value, nor does a phi's incoming copy: the lanes that stay write it
    /// again on their own way to the phi's block.
    fn guarded(&mut self, code: Vec<Inst>, guard: (Pred, bool)) {
        let phi_copies: std::collections::HashSet<Reg> =
            self.l.phi_copy.values().copied().collect();
        let reads_elsewhere = |d: Reg, code: &[Inst], l: &Lower<'_>| {
            let total: usize =
                l.code.iter().flatten().map(|i| i.uses().filter(|u| *u == d).count()).sum();
            let here: usize = code.iter().map(|i| i.uses().filter(|u| *u == d).count()).sum();
            total > here
        };
        let n = code.len();
        for k in 0..n {
            let mut i = code[k].clone();
            i.guard = Some(guard);
            i.guard_kills = i.defs().next().is_some()
                && i.defs().all(|d| {
                    phi_copies.contains(&d)
                        || (!reads_elsewhere(d, &code, self.l)
                            && code[..=k].iter().all(|x| !x.uses().any(|u| u == d)))
                });
            self.out.push(i);
        }
    }

    fn is_escape(n: Node) -> bool {
        matches!(n, Node::Cont | Node::Brk | Node::Ret | Node::Latch)
    }

    /// Emits code from `at` until control reaches `stop`.
    fn seq(&mut self, mut at: Node, stop: Node, depth: usize) -> Result<(), Unsupported> {
        if depth > 10_000 {
            return Err(Unsupported {
                message: "control flow nested too deeply".into(),
                span: 0..0,
            });
        }
        let mut guard = 0usize;
        loop {
            guard += 1;
            if guard > 4 * self.succ.len() + 8 {
                return Err(Unsupported {
                    message: "internal error: the control flow could not be structured".into(),
                    span: 0..0,
                });
            }
            if at == stop {
                return Ok(());
            }
            let b = match at {
                Node::Block(b) => b,
                Node::Exit => return Ok(()),
                escape => {
                    let span = self.out.last().map(|i| i.span.clone()).unwrap_or(0..0);
                    self.escape(escape, &span);
                    return Ok(());
                }
            };
            if self.emitted[b.0 as usize] {
                // Reached again from another arm (an unstructured merge, like the code a
                // `continue` skips in an unrolled loop): emit it again there (tail
                // duplication); each thread still runs it once.
                self.duplicated += self.l.code[b.0 as usize].len() + 1;
                if self.duplicated > 50_000 {
                    return Err(Unsupported {
                        message: "the control flow is too irregular to structure without copying too much code".into(),
                        span: self.l.end_span[b.0 as usize].clone(),
                    });
                }
            }
            if self.header[b.0 as usize] && self.region().header != Some(b) {
                // A loop: `loop`, the body from its header until it comes back, `endloop`.
                let exit = self.loop_exit(b);
                let span = self.l.end_span[b.0 as usize].clone();
                let region = self.make_region(Some(b), exit);
                self.out.push(Inst::new(Kind::Loop, "loop", vec![], &span));
                self.regions.push(region);
                let end = if self.region().latch.is_some() { Node::Latch } else { Node::Cont };
                if let Some(next) = self.block(b, end, depth)? {
                    self.seq(next, end, depth + 1)?;
                }
                if let Some(l) = self.region().latch {
                    self.block(l, Node::Cont, depth)?;
                }
                self.regions.pop();
                self.out.push(Inst::new(Kind::EndLoop, "endloop", vec![], &span));
                at = match exit {
                    Some(e) => self.resolve(e),
                    None => Node::Exit,
                };
                continue;
            }
            match self.block(b, stop, depth)? {
                Some(next) => at = next,
                None => return Ok(()),
            }
        }
    }

    /// Emits block `b` and its terminator; returns where control goes next (or `None` when
    /// the sequence is finished).
    fn block(&mut self, b: BlockId, stop: Node, depth: usize) -> Result<Option<Node>, Unsupported> {
        self.emitted[b.0 as usize] = true;
        let code = self.l.code[b.0 as usize].clone();
        self.out.extend(code);
        let span = self.l.end_span[b.0 as usize].clone();
        let term = self.l.f.blocks[b.0 as usize].term.clone();
        let next = match term {
            Term::Return => Node::Ret,
            Term::Jump(t) => self.resolve(t),
            Term::Branch(c, t, f) => {
                let (t, f) = (self.resolve(t), self.resolve(f));
                if t == f {
                    t
                } else if let Some((x, y)) = self.held_and(c)
                    && matches!(f, Node::Ret | Node::Brk | Node::Cont)
                    && self.escape_pays(f, t, stop)
                    && self.code_then_escape(t, f, stop).is_none()
                    && !(Self::is_escape(t) && self.escape_pays(t, f, stop))
                {
                    // Leaving unless two held conditions both hold: leave where either
                    // fails (`@!p0 halt` / `@!p1 halt`), rather than combine them first.
                    for v in [x, y] {
                        let mut pre = Vec::new();
                        let (p, n) = self.l.cond(v, &mut pre, &span);
                        self.out.extend(pre);
                        self.escape_if(f, (p, !n), &span);
                    }
                    t
                } else {
                    let before = self.out.len();
                    let mut pre = Vec::new();
                    let cond = self.l.cond(c, &mut pre, &span);
                    self.out.extend(pre);
                    if let Some((code, to)) = self.code_then_escape(t, f, stop) {
                        // The way out's code, run where it is taken, then leave.
                        self.guarded(code, cond);
                        self.escape_if(to, cond, &span);
                        f
                    } else if let Some((code, to)) = self.code_then_escape(f, t, stop) {
                        let neg = (cond.0, !cond.1);
                        self.guarded(code, neg);
                        self.escape_if(to, neg, &span);
                        t
                    } else if Self::is_escape(t) && self.escape_pays(t, f, stop) {
                        self.escape_if(t, cond, &span);
                        f
                    } else if Self::is_escape(f) && self.escape_pays(f, t, stop) {
                        self.escape_if(f, (cond.0, !cond.1), &span);
                        t
                    } else {
                        let mut join = self.join(t, f, stop);
                        if let Node::Block(j) = join {
                            join = self.resolve(j);
                        }
                        let if_at = self.out.len();
                        self.out.push(Inst::new(
                            Kind::If,
                            "if",
                            vec![Arg::PUse(cond.0, cond.1)],
                            &span,
                        ));
                        self.seq(t, join, depth + 1)?;
                        if self.out.len() == if_at + 1 {
                            // Nothing to do where the condition holds: `if !p` and the rest.
                            self.out[if_at].args = vec![Arg::PUse(cond.0, !cond.1)];
                            self.seq(f, join, depth + 1)?;
                            if self.out.len() == if_at + 1 {
                                // Nothing at all: no test either.
                                self.out.truncate(before);
                            } else {
                                self.out.push(Inst::new(Kind::EndIf, "endif", vec![], &span));
                            }
                        } else {
                            let else_at = self.out.len();
                            self.out.push(Inst::new(Kind::Else, "else", vec![], &span));
                            self.seq(f, join, depth + 1)?;
                            if self.out.len() == else_at + 1 {
                                self.out.pop();
                            }
                            self.out.push(Inst::new(Kind::EndIf, "endif", vec![], &span));
                        }
                        join
                    }
                }
            }
        };
        if next == stop {
            return Ok(None);
        }
        if next == Node::Ret {
            self.out.push(Inst::new(Kind::Halt, "halt", vec![], &span));
            return Ok(None);
        }
        Ok(Some(next))
    }
}

fn structure(l: &mut Lower<'_>) -> Result<Vec<Inst>, Unsupported> {
    let f = l.f;
    let n = f.blocks.len();
    let idom = f.dominators();
    let succ: Vec<Vec<BlockId>> = f
        .blocks
        .iter()
        .map(|b| {
            let mut s = b.term.successors();
            s.dedup();
            s
        })
        .collect();
    let mut header = vec![false; n];
    for (b, ss) in succ.iter().enumerate() {
        for s in ss {
            if Func::dominates(&idom, *s, BlockId(b as u32)) {
                header[s.0 as usize] = true;
            }
        }
    }
    let mut s = Structurer {
        l,
        dom: crate::mir::DomTree::new(&idom),
        succ,
        header,
        regions: Vec::new(),
        out: Vec::new(),
        emitted: vec![false; n],
        rpo: f.reverse_postorder(),
        duplicated: 0,
    };
    let top = s.make_region(None, None);
    s.regions.push(top);
    s.seq(Node::Block(BlockId(0)), Node::Exit, 0)?;
    if s.out.last().is_none_or(|i| i.kind != Kind::Halt || i.guard.is_some()) {
        let span = s.out.last().map(|i| i.span.clone()).unwrap_or(0..0);
        s.out.push(Inst::new(Kind::Halt, "halt", vec![], &span));
    }
    Ok(std::mem::take(&mut s.out))
}

// -------------------------------------------------------------------------------------------
// Control flow of the linear form.

/// The successors of every instruction of a structured list (index `len` is the end).
pub fn successors(insts: &[Inst]) -> Result<Vec<Vec<usize>>, String> {
    let n = insts.len();
    let mut succ = vec![Vec::new(); n];
    // Matching: for each if, its else (if any) and endif; for each loop, its endloop.
    let mut stack: Vec<(Kind, usize, Option<usize>)> = Vec::new();
    let mut if_else: HashMap<usize, usize> = HashMap::new();
    let mut if_end: HashMap<usize, usize> = HashMap::new();
    let mut else_end: HashMap<usize, usize> = HashMap::new();
    let mut loop_end: HashMap<usize, usize> = HashMap::new();
    let mut enclosing_loop = vec![None; n];
    let mut loops: Vec<usize> = Vec::new();
    for (i, inst) in insts.iter().enumerate() {
        enclosing_loop[i] = loops.last().copied();
        match inst.kind {
            Kind::If => stack.push((Kind::If, i, None)),
            Kind::Else => match stack.last_mut() {
                Some((Kind::If, at, e @ None)) => {
                    *e = Some(i);
                    if_else.insert(*at, i);
                }
                _ => return Err(format!("instruction {i}: `else` without `if`")),
            },
            Kind::EndIf => match stack.pop() {
                Some((Kind::If, at, e)) => {
                    if_end.insert(at, i);
                    if let Some(e) = e {
                        else_end.insert(e, i);
                    }
                }
                _ => return Err(format!("instruction {i}: `endif` without `if`")),
            },
            Kind::Loop => {
                stack.push((Kind::Loop, i, None));
                loops.push(i);
            }
            Kind::EndLoop => match stack.pop() {
                Some((Kind::Loop, at, _)) => {
                    loop_end.insert(at, i);
                    loops.pop();
                }
                _ => return Err(format!("instruction {i}: `endloop` without `loop`")),
            },
            Kind::Break | Kind::Continue if loops.is_empty() => {
                return Err(format!("instruction {i}: `{}` outside a loop", inst.mnemonic));
            }
            _ => {}
        }
    }
    if let Some((k, at, _)) = stack.last() {
        return Err(format!("instruction {at}: `{k:?}` is not closed"));
    }
    for (i, inst) in insts.iter().enumerate() {
        succ[i] = match inst.kind {
            Kind::If => {
                let other = match if_else.get(&i) {
                    Some(e) => e + 1,
                    None => if_end[&i],
                };
                vec![i + 1, other]
            }
            Kind::Else => vec![else_end[&i]],
            Kind::Break => {
                let l = enclosing_loop[i].unwrap_or(0);
                vec![i + 1, loop_end[&l] + 1]
            }
            Kind::Continue => {
                let l = enclosing_loop[i].unwrap_or(0);
                vec![i + 1, l + 1]
            }
            Kind::EndLoop => {
                let l = loops_start(insts, i);
                vec![l + 1]
            }
            Kind::Halt if inst.guard.is_none() => Vec::new(),
            _ => vec![i + 1],
        };
    }
    Ok(succ)
}

fn loops_start(insts: &[Inst], end: usize) -> usize {
    let mut depth = 0usize;
    for i in (0..end).rev() {
        match insts[i].kind {
            Kind::EndLoop => depth += 1,
            Kind::Loop if depth == 0 => return i,
            Kind::Loop => depth -= 1,
            _ => {}
        }
    }
    0
}

/// Loop depth of every instruction.
pub fn loop_depths(insts: &[Inst]) -> Vec<u32> {
    let mut depth = 0u32;
    insts
        .iter()
        .map(|i| match i.kind {
            Kind::Loop => {
                depth += 1;
                depth
            }
            Kind::EndLoop => {
                depth = depth.saturating_sub(1);
                depth + 1
            }
            _ => depth,
        })
        .collect()
}

/// Checks LIR: structure balanced, every register and predicate read is written on every
/// path before it (parameters are written at entry), operands where they belong.
pub fn verify(lir: &Lir) -> Vec<String> {
    let mut problems = Vec::new();
    let succ = match successors(&lir.insts) {
        Ok(s) => s,
        Err(e) => return vec![e],
    };
    let n = lir.insts.len();
    // Must-be-defined: a forward dataflow of sets (intersection at joins).
    let mut index: HashMap<Reg, usize> = HashMap::new();
    let mut pindex: HashMap<Pred, usize> = HashMap::new();
    for inst in &lir.insts {
        for r in inst.defs().chain(inst.uses()) {
            let k = index.len();
            index.entry(r).or_insert(k);
        }
        for p in inst.pred_defs().chain(inst.pred_uses()) {
            let k = pindex.len();
            pindex.entry(p).or_insert(k);
        }
    }
    let width = index.len() + pindex.len();
    let words = width.div_ceil(64).max(1);
    let full = vec![u64::MAX; words];
    let mut into: Vec<Option<Vec<u64>>> = vec![None; n + 1];
    let mut entry = vec![0u64; words];
    for p in 0..lir.params.len() as u32 {
        if let Some(&k) = index.get(&p) {
            entry[k / 64] |= 1 << (k % 64);
        }
    }
    into[0] = Some(entry);
    let bit = |set: &[u64], k: usize| set[k / 64] >> (k % 64) & 1 == 1;
    let mut work: Vec<usize> = vec![0];
    let mut visits = 0usize;
    while let Some(i) = work.pop() {
        visits += 1;
        if visits > 64 * (n + 1) * 4 || i >= n {
            continue;
        }
        let mut set = into[i].clone().unwrap_or_else(|| full.clone());
        for r in lir.insts[i].defs() {
            let k = index[&r];
            set[k / 64] |= 1 << (k % 64);
        }
        for p in lir.insts[i].pred_defs() {
            let k = index.len() + pindex[&p];
            set[k / 64] |= 1 << (k % 64);
        }
        for &s in &succ[i] {
            let merged = match &into[s] {
                None => set.clone(),
                Some(old) => old.iter().zip(&set).map(|(a, b)| a & b).collect(),
            };
            if into[s].as_ref() != Some(&merged) {
                into[s] = Some(merged);
                work.push(s);
            }
        }
    }
    for (i, inst) in lir.insts.iter().enumerate() {
        let Some(set) = &into[i] else { continue };
        for r in inst.uses() {
            if !bit(set, index[&r]) {
                problems.push(format!(
                    "instruction {i} (`{}`) reads {} before it is written on some path",
                    inst.mnemonic,
                    reg_name(r)
                ));
            }
        }
        for p in inst.pred_uses() {
            if !bit(set, index.len() + pindex[&p]) {
                problems.push(format!(
                    "instruction {i} (`{}`) reads %p{p} before it is written",
                    inst.mnemonic
                ));
            }
        }
        let control =
            matches!(inst.kind, Kind::If | Kind::Else | Kind::EndIf | Kind::Loop | Kind::EndLoop);
        if control && inst.guard.is_some() {
            problems.push(format!("instruction {i}: `{}` cannot be guarded", inst.mnemonic));
        }
    }
    problems
}

fn reg_name(r: Reg) -> String {
    if r < PHYS { format!("r{r}") } else { format!("%{}", r - PHYS) }
}

/// LIR as text: what `wave compile --emit lir` prints (virtual registers `%n`, predicates
/// `%pn`, physical registers `rn`).
pub fn print(kernels: &[Lir]) -> String {
    let mut out = String::new();
    for (k, lir) in kernels.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let params: Vec<String> =
            lir.params.iter().enumerate().map(|(i, (n, t))| format!("r{i} = {n}: {t}")).collect();
        let _ = write!(out, "kernel {}({})", lir.name, params.join(", "));
        if lir.local_memory > 0 {
            let _ = write!(out, " local {}", lir.local_memory);
        }
        out.push_str(" {\n");
        write_insts(&mut out, &lir.insts, &|r| reg_name(r), &|p| format!("%p{p}"));
        out.push_str("}\n");
    }
    out
}

/// Writes instructions with one level of indentation per open block.
pub fn write_insts(
    out: &mut String,
    insts: &[Inst],
    reg: &dyn Fn(Reg) -> String,
    pred: &dyn Fn(Pred) -> String,
) {
    let mut depth = 1usize;
    for inst in insts {
        if matches!(inst.kind, Kind::Else | Kind::EndIf | Kind::EndLoop) {
            depth = depth.saturating_sub(1);
        }
        out.push_str(&"    ".repeat(depth));
        out.push_str(&inst_text(inst, reg, pred));
        out.push('\n');
        if matches!(inst.kind, Kind::If | Kind::Else | Kind::Loop) {
            depth += 1;
        }
    }
}

/// One instruction as assembly text.
pub fn inst_text(
    inst: &Inst,
    reg: &dyn Fn(Reg) -> String,
    pred: &dyn Fn(Pred) -> String,
) -> String {
    let mut s = String::new();
    if let Some((p, neg)) = inst.guard {
        let _ = write!(s, "@{}{} ", if neg { "!" } else { "" }, pred(p));
    }
    s.push_str(&inst.mnemonic);
    let args: Vec<String> = inst
        .args
        .iter()
        .map(|a| match a {
            Arg::Def(r) | Arg::Use(r) => reg(*r),
            Arg::PDef(p) => pred(*p),
            Arg::PUse(p, neg) => format!("{}{}", if *neg { "!" } else { "" }, pred(*p)),
            Arg::Imm(t) => t.clone(),
            Arg::Special(n) => (*n).to_owned(),
            Arg::Addr(r, 0) => reg(*r),
            Arg::Addr(r, o) if *o < 0 => format!("[{} - {}]", reg(*r), o.unsigned_abs()),
            Arg::Addr(r, o) => format!("[{} + {o}]", reg(*r)),
            Arg::Any => "r0".into(),
        })
        .collect();
    if !args.is_empty() {
        s.push(' ');
        s.push_str(&args.join(", "));
    }
    s
}

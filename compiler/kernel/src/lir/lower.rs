//! From MIR to LIR: out of SSA, booleans into predicates or registers, constants into
//! immediates, addresses folded into their accesses. The per-instruction translation is in
//! `inst`, and the recovery of structured control flow from the CFG in `structure`.

mod inst;
mod structure;

use super::Code;
use std::collections::HashMap;
use wave_isa::{FloatCond, IntCond, MemWidth, Opcode, Shift, UintCond};

use wave_diag::Span;

use self::structure::structure;
use super::{Arg, Imm, Inst, Kind, Lir, PHYS, Pred, Reg, Unsupported};
use crate::hir::{BinOp, Intrinsic, Scalar, Special, Ty, UnOp, VarId, WaveOp};
use crate::mir::{BlockId, Func, Op, Space, Term, Value, f16_bits, upper_bounds};

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
    Reg(PHYS + v.0)
}

/// The `.param` type of a kernel parameter.
fn param_type(ty: Ty) -> Option<&'static str> {
    match ty {
        Ty::Buffer(
            Scalar::F32
            | Scalar::F16
            | Scalar::F64
            | Scalar::I32
            | Scalar::U32
            | Scalar::U8
            | Scalar::U16,
        ) => Some("ptr"),
        Ty::Scalar(Scalar::U32 | Scalar::Bool) => Some("u32"),
        Ty::Scalar(Scalar::I32) => Some("i32"),
        Ty::Scalar(Scalar::F32) => Some("f32"),
        _ => None,
    }
}

/// `device_load.u32`, `local_store.u16`, ...: the instruction that moves a value of type
/// `ty` to or from `space` (a load, or a store when `store`); private arrays are in Local
/// Memory.
fn memory_code(space: Space, store: bool, ty: Scalar) -> Code {
    let opcode = match (space == Space::Device, store) {
        (true, false) => Opcode::DeviceLoad,
        (true, true) => Opcode::DeviceStore,
        (false, false) => Opcode::LocalLoad,
        (false, true) => Opcode::LocalStore,
    };
    let width = match ty {
        Scalar::F16 => MemWidth::U16,
        Scalar::F64 => MemWidth::U64,
        Scalar::U8 => MemWidth::U8,
        Scalar::U16 => MemWidth::U16,
        Scalar::Bool | Scalar::I32 | Scalar::U32 | Scalar::F32 => MemWidth::U32,
    };
    Code::with(opcode, width)
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
        let shift = Arg::Imm(Imm::Int(i64::from(size.trailing_zeros())));
        out.push(Inst::new(
            Kind::Op,
            Code::with(Opcode::Shift, Shift::Shl),
            vec![Arg::Def(scaled), i, shift],
            span,
        ));
        out.push(Inst::new(
            Kind::Op,
            Code::of(Opcode::Iadd),
            vec![Arg::Def(t), Arg::Use(scaled), Arg::Use(fp)],
            span,
        ));
        Arg::Addr(t, offset as i32)
    }

    /// The immediate text of a constant, if `v` is one.
    fn imm(&self, v: Value) -> Option<Imm> {
        match self.def[v.0 as usize]? {
            Op::Int(n) => Some(Imm::Int(i64::from(*n as i32))),
            Op::Bool(b) => Some(Imm::Int(i64::from(*b))),
            Op::Float(x) if self.scalar(v) == Scalar::F32 => Some(Imm::F32((*x as f32).to_bits())),
            Op::Float(x) if self.scalar(v) == Scalar::F16 => Some(Imm::F16(f16_bits(*x))),
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
                    let m = if and { Code::of(Opcode::And) } else { Code::of(Opcode::Or) };
                    self.op3(out, m, rz, Arg::Use(rx), Arg::Use(ry), span);
                    let q = self.lir.pred();
                    out.push(Inst::new(
                        Kind::Op,
                        Code::with(Opcode::Icmp, IntCond::Ne),
                        vec![Arg::PDef(q), Arg::Use(rz), Arg::Imm(Imm::Int(0))],
                        span,
                    ));
                    return (q, false);
                }
                _ => {}
            }
        }
        let p = self.lir.pred();
        let r = self.src(v);
        out.push(Inst::new(
            Kind::Op,
            Code::with(Opcode::Icmp, IntCond::Ne),
            vec![Arg::PDef(p), r, Arg::Imm(Imm::Int(0))],
            span,
        ));
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
        let m = if value != neg {
            Code::with(Opcode::Icmp, IntCond::Eq)
        } else {
            Code::with(Opcode::Icmp, IntCond::Ne)
        };
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
        let (code, x, y, neg) = self.compare_form(op, a, b);
        let p = self.lir.pred();
        out.push(Inst::new(Kind::Op, code, vec![Arg::PDef(p), x, y], span));
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
        let Some((code, x, y, _)) = self.compare_with(op, a, b, neg) else { return false };
        let mut inst = Inst::new(Kind::Op, code, vec![Arg::PDef(p), x, y], span);
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
    ) -> Option<(Code, Arg, Arg, bool)> {
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

    /// The compare for `a op b`, without reading anything: its code, whether the operands
    /// swap, whether the result is the negation, and the operands in order.
    fn compare_choice(
        &self,
        op: BinOp,
        mut a: Value,
        mut b: Value,
    ) -> (Code, bool, bool, Value, Value) {
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
        let (code, swap, neg) = match (s, op) {
            (Scalar::F32 | Scalar::F16 | Scalar::F64, _) => match op {
                Eq => (Code::with(Opcode::Fcmp, FloatCond::Eq), false, false),
                Ne => (Code::with(Opcode::Fcmp, FloatCond::Ne), false, false),
                Lt => (Code::with(Opcode::Fcmp, FloatCond::Lt), false, false),
                Le => (Code::with(Opcode::Fcmp, FloatCond::Le), false, false),
                Gt => (Code::with(Opcode::Fcmp, FloatCond::Gt), false, false),
                _ => (Code::with(Opcode::Fcmp, FloatCond::Le), true, false),
            },
            (Scalar::U32, Lt) => (Code::with(Opcode::Ucmp, UintCond::Lt), false, false),
            (Scalar::U32, Le) => (Code::with(Opcode::Ucmp, UintCond::Le), false, false),
            (Scalar::U32, Gt) => (Code::with(Opcode::Ucmp, UintCond::Le), false, true),
            (Scalar::U32, Ge) => (Code::with(Opcode::Ucmp, UintCond::Lt), false, true),
            (_, Eq) => (Code::with(Opcode::Icmp, IntCond::Eq), false, false),
            (_, Ne) => (Code::with(Opcode::Icmp, IntCond::Ne), false, false),
            (_, Lt) => (Code::with(Opcode::Icmp, IntCond::Lt), false, false),
            (_, Le) => (Code::with(Opcode::Icmp, IntCond::Le), false, false),
            (_, Gt) => (Code::with(Opcode::Icmp, IntCond::Gt), false, false),
            _ => (Code::with(Opcode::Icmp, IntCond::Ge), false, false),
        };
        (code, swap, neg, a, b)
    }

    /// The compare instruction for `a op b`: its code, operands, and whether its result is
    /// the negation.
    fn compare_form(&mut self, op: BinOp, a: Value, b: Value) -> (Code, Arg, Arg, bool) {
        let (code, swap, neg, a, b) = self.compare_choice(op, a, b);
        let (x, y) = if swap {
            let x = self.src(b);
            (x, self.src(a))
        } else {
            let x = self.src(a);
            (x, self.src2(b))
        };
        (code, x, y, neg)
    }

    /// `d = p ? 1 : 0` (with the predicate's negation).
    fn materialize(&mut self, d: Reg, (p, neg): (Pred, bool), out: &mut Vec<Inst>, span: &Span) {
        out.push(Inst::new(
            Kind::Op,
            Code::of(Opcode::MovImm),
            vec![Arg::Def(d), Arg::Imm(Imm::Int(0))],
            span,
        ));
        let mut set = Inst::new(
            Kind::Op,
            Code::of(Opcode::MovImm),
            vec![Arg::Def(d), Arg::Imm(Imm::Int(1))],
            span,
        );
        set.guard = Some((p, neg));
        out.push(set);
    }

    fn op3(&mut self, out: &mut Vec<Inst>, m: Code, d: Reg, a: Arg, b: Arg, span: &Span) {
        out.push(Inst::new(Kind::Op, m, vec![Arg::Def(d), a, b], span));
    }

    fn op2(&mut self, out: &mut Vec<Inst>, m: Code, d: Reg, a: Arg, span: &Span) {
        out.push(Inst::new(Kind::Op, m, vec![Arg::Def(d), a], span));
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
    let (a, b) = (lir.next_reg, Reg(lir.next_reg.0 + 1));
    let op = |m: Code, args: Vec<Arg>| Inst::new(Kind::Op, m, args, span);
    let imm = |v: u32| Arg::Imm(Imm::Int(i64::from(v)));
    let mut code = vec![op(
        Code::of(Opcode::MovSpecial),
        vec![Arg::Def(a), Arg::Special(Special::ThreadId(2))],
    )];
    // (Multiplies by 1 left out.)
    if y != 1 {
        code.push(op(Code::of(Opcode::Imul), vec![Arg::Def(a), Arg::Use(a), imm(y)]));
    }
    code.push(op(
        Code::of(Opcode::MovSpecial),
        vec![Arg::Def(b), Arg::Special(Special::ThreadId(1))],
    ));
    code.push(op(Code::of(Opcode::Iadd), vec![Arg::Def(a), Arg::Use(a), Arg::Use(b)]));
    if x != 1 {
        code.push(op(Code::of(Opcode::Imul), vec![Arg::Def(a), Arg::Use(a), imm(x)]));
    }
    code.push(op(
        Code::of(Opcode::MovSpecial),
        vec![Arg::Def(b), Arg::Special(Special::ThreadId(0))],
    ));
    code.push(op(Code::of(Opcode::Iadd), vec![Arg::Def(a), Arg::Use(a), Arg::Use(b)]));
    if base == 0 {
        code.push(op(Code::of(Opcode::Imul), vec![Arg::Def(fp), Arg::Use(a), imm(stride)]));
    } else {
        code.push(op(Code::of(Opcode::Imul), vec![Arg::Def(a), Arg::Use(a), imm(stride)]));
        code.push(op(Code::of(Opcode::Iadd), vec![Arg::Def(fp), Arg::Use(a), imm(base)]));
    }
    (code, Reg(lir.next_reg.0 + 2))
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
            next_reg: Reg(PHYS + n as u32),
            next_pred: Pred(0),
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
                    "parameter `{name}` has type {ty}, which a .wbin cannot pass yet: use f16, f32, i32, u32, bool or a buffer"
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
                Code::of(Opcode::Mov),
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
                        out.push(Inst::new(
                            Kind::Op,
                            Code::of(Opcode::MovImm),
                            vec![dst, Arg::Imm(text)],
                            &span,
                        ));
                    } else {
                        let src = l.src(*v);
                        out.push(Inst::new(
                            Kind::Copy,
                            Code::of(Opcode::Mov),
                            vec![dst, src],
                            &span,
                        ));
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
                || i.defs()
                    .any(|r| r.is_phys() || const_read.get((r.0 - PHYS) as usize) != Some(&false))
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

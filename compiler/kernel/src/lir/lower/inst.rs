//! The WAVE instructions of each MIR instruction: arithmetic, comparisons, conversions,
//! memory accesses and intrinsic calls.

use crate::lir::Code;
use wave_diag::Span;
use wave_isa::{
    AtomicType, BitOp, FenceOrder, FloatCond, IntCond, Opcode, ReduceOp, Round, Shift, Transc,
    UintCond,
};

use super::{Lower, memory_code, reg_of};
use crate::hir::{AtomicOp, BinOp, Intrinsic, MathFn, Scalar, Special, Ty, UnOp, WaveOp};
use crate::lir::{Arg, Imm, Inst, Kind, Reg};
use crate::mir::{Op, Space, Value};

impl<'f> Lower<'f> {
    /// The instructions of one MIR instruction.
    pub(super) fn inst(&mut self, inst: &crate::mir::Inst, out: &mut Vec<Inst>) {
        let span = &inst.span;
        let d = inst.dst.map(reg_of).unwrap_or(Reg::phys(0));
        let dty = inst.dst.map(|v| self.ty(v));
        let dscalar = inst.dst.map(|v| self.scalar(v)).unwrap_or(Scalar::U32);
        match &inst.op {
            Op::Float(x) if dscalar == Scalar::F64 => {
                // A pair: the two halves set one after the other (see `Lir::pairs`).
                out.push(Inst::new(
                    Kind::Const,
                    Code::of(Opcode::MovImm),
                    vec![Arg::Def(d), Arg::Imm(Imm::F64(x.to_bits()))],
                    span,
                ));
            }
            Op::Int(_) | Op::Float(_) | Op::Bool(_) => {
                let text = inst.dst.and_then(|v| self.imm(v)).unwrap_or(Imm::Int(0));
                out.push(Inst::new(
                    Kind::Const,
                    Code::of(Opcode::MovImm),
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
                        Code::with(Opcode::Icmp, IntCond::Ne),
                        vec![Arg::PDef(p), Arg::Use(Reg::phys(*i)), Arg::Imm(Imm::Int(0))],
                        span,
                    ));
                    self.materialize(d, (p, false), out, span);
                } else {
                    out.push(Inst::new(
                        Kind::Copy,
                        Code::of(Opcode::Mov),
                        vec![Arg::Def(d), Arg::Use(Reg::phys(*i))],
                        span,
                    ));
                }
            }
            Op::Special(Special::GlobalId(axis)) => {
                let (w, s, t) = (self.lir.reg(), self.lir.reg(), self.lir.reg());
                for (r, sp) in [
                    (w, Special::WorkgroupId(*axis)),
                    (s, Special::WorkgroupSize(*axis)),
                    (t, Special::ThreadId(*axis)),
                ] {
                    self.op2(out, Code::of(Opcode::MovSpecial), r, Arg::Special(sp), span);
                }
                out.push(Inst::new(
                    Kind::Op,
                    Code::of(Opcode::Imad),
                    vec![Arg::Def(d), Arg::Use(w), Arg::Use(s), Arg::Use(t)],
                    span,
                ));
            }
            Op::Special(s) => {
                self.op2(out, Code::of(Opcode::MovSpecial), d, Arg::Special(*s), span)
            }
            Op::Unary(op, a) => {
                let a = *a;
                match (op, self.scalar(a)) {
                    (UnOp::Not, _) => {
                        if !self.pred_form[inst.dst.map_or(0, |v| v.0) as usize] {
                            let x = self.src(a);
                            self.op3(out, Code::of(Opcode::Xor), d, x, Arg::Imm(Imm::Int(1)), span);
                        }
                    }
                    (UnOp::Neg, Scalar::F32) => {
                        let x = self.src(a);
                        self.op2(out, Code::of(Opcode::Fneg), d, x, span);
                    }
                    (UnOp::Neg, _) => {
                        let x = self.src(a);
                        self.op2(out, Code::of(Opcode::Ineg), d, x, span);
                    }
                    (UnOp::BitNot, _) => {
                        let x = self.src(a);
                        self.op2(out, Code::of(Opcode::Not), d, x, span);
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
                    Code::of(Opcode::Select),
                    vec![Arg::Def(d), Arg::PUse(p, n), x, y],
                    span,
                ));
            }
            Op::Load(space, addr) => {
                let m = memory_code(*space, false, dscalar);
                let a = self.memory_address(*space, *addr, out, span);
                out.push(Inst::new(Kind::Op, m, vec![Arg::Def(d), a], span));
            }
            Op::Store(space, addr, x) => {
                let m = memory_code(*space, true, self.scalar(*x));
                let a = self.memory_address(*space, *addr, out, span);
                let x = self.src(*x);
                out.push(Inst::new(Kind::Op, m, vec![a, x], span));
            }
            Op::Atomic(op, space, addr, x) => {
                let isa_op = match op {
                    AtomicOp::Add => wave_isa::AtomicOp::Add,
                    AtomicOp::Sub => wave_isa::AtomicOp::Sub,
                    AtomicOp::Min => wave_isa::AtomicOp::Min,
                    AtomicOp::Max => wave_isa::AtomicOp::Max,
                    AtomicOp::And => wave_isa::AtomicOp::And,
                    AtomicOp::Or => wave_isa::AtomicOp::Or,
                    AtomicOp::Xor => wave_isa::AtomicOp::Xor,
                    AtomicOp::Exchange => wave_isa::AtomicOp::Exchange,
                };
                let ty = match dscalar {
                    Scalar::I32 => AtomicType::I32,
                    Scalar::F32 => AtomicType::F32,
                    Scalar::Bool
                    | Scalar::U32
                    | Scalar::F16
                    | Scalar::F64
                    | Scalar::U8
                    | Scalar::U16 => AtomicType::U32,
                };
                let m = Code::atomic(isa_op, ty, *space == Space::Local);
                let a = self.reg(*addr);
                let x = self.src(*x);
                out.push(Inst::new(Kind::Op, m, vec![Arg::Def(d), Arg::Use(a), x], span));
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
                    out.push(Inst::new(
                        Kind::Op,
                        Code::of(Opcode::Imad),
                        vec![Arg::Def(d), x, y, c],
                        span,
                    ));
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
                Add => Code::of(Opcode::Dadd),
                Sub => Code::of(Opcode::Dsub),
                Mul => Code::of(Opcode::Dmul),
                Div => Code::of(Opcode::Ddiv),
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
                Add => Code::of(Opcode::Hadd),
                Sub => Code::of(Opcode::Hsub),
                _ => Code::of(Opcode::Hmul),
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
            (LogicAnd, _) | (And, _) => Code::of(Opcode::And),
            (LogicOr, _) | (Or, _) => Code::of(Opcode::Or),
            (Xor, _) => Code::of(Opcode::Xor),
            (Add, Scalar::F32) => Code::of(Opcode::Fadd),
            (Sub, Scalar::F32) => Code::of(Opcode::Fsub),
            (Mul, Scalar::F32) => Code::of(Opcode::Fmul),
            (Div, Scalar::F32) => Code::of(Opcode::Fdiv),
            (Rem, Scalar::F32) => {
                // a - trunc(a / b) * b: the remainder with the sign of the dividend.
                let (q, t) = (self.lir.reg(), self.lir.reg());
                let (x, y) = (self.src(a), self.src(b));
                self.op3(out, Code::of(Opcode::Fdiv), q, x.clone(), y.clone(), span);
                self.op2(out, Code::with(Opcode::Fround, Round::Trunc), q, Arg::Use(q), span);
                self.op3(out, Code::of(Opcode::Fmul), t, Arg::Use(q), y, span);
                self.op3(out, Code::of(Opcode::Fsub), d, x, Arg::Use(t), span);
                return;
            }
            (Add, _) => Code::of(Opcode::Iadd),
            (Sub, _) => Code::of(Opcode::Isub),
            (Mul, _) => Code::of(Opcode::Imul),
            (Div, Scalar::I32) => Code::of(Opcode::Idiv),
            (Rem, Scalar::I32) => Code::of(Opcode::Imod),
            (Div | Rem, _) => {
                self.unsigned_divide(op == Rem, a, b, d, out, span);
                return;
            }
            (Shl, _) => Code::with(Opcode::Shift, Shift::Shl),
            (Shr, Scalar::I32) => Code::with(Opcode::Shift, Shift::Sar),
            (Shr, _) => Code::with(Opcode::Shift, Shift::Shr),
            _ => Code::of(Opcode::Iadd),
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
            let m = if rem { Code::of(Opcode::Imod) } else { Code::of(Opcode::Idiv) };
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
        let new = |k: Kind, m: Code, args: Vec<Arg>| Inst::new(k, m, args, span);
        if small {
            out.push(new(
                Kind::Op,
                Code::with(Opcode::Icmp, IntCond::Lt),
                vec![Arg::PDef(p), x.clone(), Arg::Imm(Imm::Int(0))],
            ));
        } else {
            out.push(new(Kind::Op, Code::of(Opcode::Or), vec![Arg::Def(t), x.clone(), y.clone()]));
            out.push(new(
                Kind::Op,
                Code::with(Opcode::Icmp, IntCond::Lt),
                vec![Arg::PDef(p), Arg::Use(t), Arg::Imm(Imm::Int(0))],
            ));
        }
        out.push(new(Kind::If, Code::of(Opcode::If), vec![Arg::PUse(p, true)]));
        // Both below 2^31 here: the signed instruction gives the result.
        let m = if rem { Code::of(Opcode::Imod) } else { Code::of(Opcode::Idiv) };
        out.push(new(Kind::Op, m, vec![Arg::Def(d), x.clone(), y.clone()]));
        out.push(new(Kind::Else, Code::of(Opcode::Else), vec![]));
        out.push(new(
            Kind::Op,
            Code::with(Opcode::Shift, Shift::Shr),
            vec![Arg::Def(t), x.clone(), Arg::Imm(Imm::Int(1))],
        ));
        out.push(new(Kind::Op, Code::of(Opcode::Idiv), vec![Arg::Def(q), Arg::Use(t), y.clone()]));
        out.push(new(
            Kind::Op,
            Code::with(Opcode::Shift, Shift::Shl),
            vec![Arg::Def(q), Arg::Use(q), Arg::Imm(Imm::Int(1))],
        ));
        out.push(new(Kind::Op, Code::of(Opcode::Imul), vec![Arg::Def(u), Arg::Use(q), y.clone()]));
        out.push(new(Kind::Op, Code::of(Opcode::Isub), vec![Arg::Def(u), x.clone(), Arg::Use(u)]));
        let c = self.lir.pred();
        out.push(new(
            Kind::Op,
            Code::with(Opcode::Ucmp, UintCond::Lt),
            vec![Arg::PDef(c), Arg::Use(u), y.clone()],
        ));
        let mut inc = new(
            Kind::Op,
            Code::of(Opcode::Iadd),
            vec![Arg::Def(q), Arg::Use(q), Arg::Imm(Imm::Int(1))],
        );
        inc.guard = Some((c, true));
        out.push(inc);
        if !small {
            // A divisor of 2^31 or more: the quotient is a >= b.
            out.push(new(
                Kind::Op,
                Code::with(Opcode::Icmp, IntCond::Lt),
                vec![Arg::PDef(big), y.clone(), Arg::Imm(Imm::Int(0))],
            ));
            out.push(new(Kind::If, Code::of(Opcode::If), vec![Arg::PUse(big, false)]));
            let ge = self.lir.pred();
            out.push(new(
                Kind::Op,
                Code::with(Opcode::Ucmp, UintCond::Lt),
                vec![Arg::PDef(ge), x.clone(), y.clone()],
            ));
            self.materialize(q, (ge, true), out, span);
            out.push(new(Kind::EndIf, Code::of(Opcode::Endif), vec![]));
        }
        if rem {
            out.push(new(Kind::Op, Code::of(Opcode::Imul), vec![Arg::Def(u), Arg::Use(q), y]));
            out.push(new(Kind::Op, Code::of(Opcode::Isub), vec![Arg::Def(d), x, Arg::Use(u)]));
        }
        out.push(new(Kind::EndIf, Code::of(Opcode::Endif), vec![]));
    }

    fn cast(&mut self, a: Value, d: Reg, to: Scalar, out: &mut Vec<Inst>, span: &Span) {
        let from = self.scalar(a);
        let x = self.src(a);
        let m = match (from, to) {
            (f, t) if f == t => Code::of(Opcode::Mov),
            (Scalar::F32, Scalar::F64) => Code::of(Opcode::CvtF64F32),
            (Scalar::F64, Scalar::F32) => Code::of(Opcode::CvtF32F64),
            (Scalar::I32 | Scalar::U32 | Scalar::Bool, Scalar::I32 | Scalar::U32) => {
                Code::of(Opcode::Mov)
            }
            // A `u8`/`u16` load zero-extends, and a store keeps the low bits: the register
            // holds the `u32` either way.
            (Scalar::U8 | Scalar::U16, Scalar::U32) | (Scalar::U32, Scalar::U8 | Scalar::U16) => {
                Code::of(Opcode::Mov)
            }
            (Scalar::I32, Scalar::F32) => Code::of(Opcode::CvtF32I32),
            (Scalar::U32 | Scalar::Bool, Scalar::F32) => Code::of(Opcode::CvtF32U32),
            (Scalar::F16, Scalar::F32) => Code::of(Opcode::CvtF32F16),
            (Scalar::F32, Scalar::F16) => Code::of(Opcode::CvtF16F32),
            (Scalar::F32, Scalar::I32) => Code::of(Opcode::CvtI32F32),
            (Scalar::F32, Scalar::U32) => Code::of(Opcode::CvtU32F32),
            (_, Scalar::Bool) => {
                let p = self.lir.pred();
                let m = if from == Scalar::F32 {
                    Code::with(Opcode::Fcmp, FloatCond::Ne)
                } else {
                    Code::with(Opcode::Icmp, IntCond::Ne)
                };
                let zero = if from == Scalar::F32 { Imm::F32(0) } else { Imm::Int(0) };
                out.push(Inst::new(Kind::Op, m, vec![Arg::PDef(p), x, Arg::Imm(zero)], span));
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
        let kind = if m == Code::of(Opcode::Mov) { Kind::Copy } else { Kind::Op };
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
        let d = dst.map(reg_of).unwrap_or(Reg::phys(0));
        let s = args.first().map(|a| self.scalar(*a)).unwrap_or(Scalar::U32);
        let float = s == Scalar::F32;
        match i {
            Intrinsic::Barrier => {
                out.push(Inst::new(Kind::Op, Code::of(Opcode::Barrier), vec![], span))
            }
            Intrinsic::Fence => out.push(Inst::new(
                Kind::Op,
                Code::with(Opcode::Fence, FenceOrder::AcqRel),
                vec![],
                span,
            )),
            Intrinsic::Atomic(_) => {}
            Intrinsic::Min | Intrinsic::Max => {
                let m = match (i == Intrinsic::Min, s) {
                    (true, Scalar::F32) => Code::of(Opcode::Fmin),
                    (false, Scalar::F32) => Code::of(Opcode::Fmax),
                    (true, Scalar::I32) => Code::of(Opcode::Imin),
                    (false, Scalar::I32) => Code::of(Opcode::Imax),
                    (true, _) => Code::of(Opcode::Umin),
                    (false, _) => Code::of(Opcode::Umax),
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
                    MathFn::Sqrt => self.op2(out, Code::of(Opcode::Dsqrt), d, x, span),
                    MathFn::Fma => {
                        let (y, z) = (self.src(args[1]), self.src(args[2]));
                        out.push(Inst::new(
                            Kind::Op,
                            Code::of(Opcode::Dma),
                            vec![Arg::Def(d), x, y, z],
                            span,
                        ));
                    }
                    _ => self.unsupported(
                        span,
                        format!("`{}` on f64 is not supported", crate::hir::intrinsic_name(i)),
                    ),
                }
            }
            Intrinsic::Math(f @ (MathFn::Clz | MathFn::Ctz)) => {
                // `bitfind` gives the index of the highest set bit (all ones for none), so
                // the count is `31 - index`, that is `!index + 32` (32 for zero); the
                // trailing zeros are the leading zeros of the bits reversed.
                let mut x = self.src(args[0]);
                let new = |m: Code, args: Vec<Arg>| Inst::new(Kind::Op, m, args, span);
                if f == MathFn::Ctz {
                    let r = self.lir.reg();
                    out.push(new(Code::with(Opcode::Bitop, BitOp::Bitrev), vec![Arg::Def(r), x]));
                    x = Arg::Use(r);
                }
                let (t, n) = (self.lir.reg(), self.lir.reg());
                out.push(new(Code::with(Opcode::Bitop, BitOp::Bitfind), vec![Arg::Def(t), x]));
                out.push(new(Code::of(Opcode::Not), vec![Arg::Def(n), Arg::Use(t)]));
                out.push(new(
                    Code::of(Opcode::Iadd),
                    vec![Arg::Def(d), Arg::Use(n), Arg::Imm(Imm::Int(32))],
                ));
            }
            Intrinsic::Math(f) => {
                let x = self.src(args[0]);
                let m = match f {
                    MathFn::Popcount => Code::with(Opcode::Bitop, BitOp::Bitcount),
                    MathFn::Exp
                    | MathFn::Log
                    | MathFn::Log10
                    | MathFn::Tanh
                    | MathFn::Pow
                    | MathFn::Clz
                    | MathFn::Ctz => {
                        // Expanded when MIR is built; only a hand-written MIR function
                        // brings one here.
                        self.unsupported(
                            span,
                            format!(
                                "`{}` is expanded into other instructions when MIR is built from HIR: a MIR function cannot call it",
                                crate::hir::intrinsic_name(i)
                            ),
                        );
                        return;
                    }
                    MathFn::Sqrt => Code::of(Opcode::Fsqrt),
                    MathFn::Rsqrt => Code::of(Opcode::Frsqrt),
                    MathFn::Abs if float => Code::of(Opcode::Fabs),
                    MathFn::Abs if s == Scalar::I32 => Code::of(Opcode::Iabs),
                    MathFn::Abs => Code::of(Opcode::Mov),
                    MathFn::Floor => Code::with(Opcode::Fround, Round::Floor),
                    MathFn::Ceil => Code::with(Opcode::Fround, Round::Ceil),
                    MathFn::Sin => Code::with(Opcode::Ftransc, Transc::Sin),
                    MathFn::Cos => Code::with(Opcode::Ftransc, Transc::Cos),
                    MathFn::Exp2 => Code::with(Opcode::Ftransc, Transc::Exp2),
                    MathFn::Log2 => Code::with(Opcode::Ftransc, Transc::Log2),
                    MathFn::Fma => {
                        let (y, z) = (self.src(args[1]), self.src(args[2]));
                        out.push(Inst::new(
                            Kind::Op,
                            Code::of(Opcode::Fma),
                            vec![Arg::Def(d), x, y, z],
                            span,
                        ));
                        return;
                    }
                };
                let kind = if m == Code::of(Opcode::Mov) { Kind::Copy } else { Kind::Op };
                out.push(Inst::new(kind, m, vec![Arg::Def(d), x], span));
            }
            Intrinsic::Wave(op) => match op {
                WaveOp::Shuffle
                | WaveOp::ShuffleUp
                | WaveOp::ShuffleDown
                | WaveOp::ShuffleXor
                | WaveOp::Broadcast => {
                    let m = match op {
                        WaveOp::Shuffle => Code::of(Opcode::WaveShuffle),
                        WaveOp::ShuffleUp => Code::of(Opcode::WaveShuffleUp),
                        WaveOp::ShuffleDown => Code::of(Opcode::WaveShuffleDown),
                        WaveOp::ShuffleXor => Code::of(Opcode::WaveShuffleXor),
                        _ => Code::of(Opcode::WaveBroadcast),
                    };
                    let x = self.src(args[0]);
                    let y = self.src2(args[1]);
                    self.op3(out, m, d, x, y, span);
                }
                WaveOp::Ballot => {
                    let (p, n) = self.cond(args[0], out, span);
                    out.push(Inst::new(
                        Kind::Op,
                        Code::of(Opcode::WaveBallot),
                        vec![Arg::Def(d), Arg::PUse(p, n)],
                        span,
                    ));
                }
                WaveOp::Any | WaveOp::All => {
                    let (p, n) = self.cond(args[0], out, span);
                    let q = self.lir.pred();
                    let m = if op == WaveOp::Any {
                        Code::of(Opcode::WaveAny)
                    } else {
                        Code::of(Opcode::WaveAll)
                    };
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
                        WaveOp::ReduceAdd => Code::reduce(ReduceOp::Add),
                        WaveOp::ReduceMin => Code::reduce(ReduceOp::Min),
                        WaveOp::ReduceMax => Code::reduce(ReduceOp::Max),
                        _ => Code::of(Opcode::WavePrefixSum),
                    };
                    let x = self.src(args[0]);
                    self.op2(out, m, d, x, span);
                }
            },
        }
    }
}

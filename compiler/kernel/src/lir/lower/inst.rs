//! The WAVE instructions of each MIR instruction: arithmetic, comparisons, conversions,
//! memory accesses and intrinsic calls.

use wave_diag::Span;

use super::{Lower, memory_mnemonic, reg_of, special_name};
use crate::hir::{AtomicOp, BinOp, Intrinsic, MathFn, Scalar, Special, Ty, UnOp, WaveOp};
use crate::lir::{Arg, Inst, Kind, Reg};
use crate::mir::{Op, Space, Value};

impl<'f> Lower<'f> {
    /// The instructions of one MIR instruction.
    pub(super) fn inst(&mut self, inst: &crate::mir::Inst, out: &mut Vec<Inst>) {
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

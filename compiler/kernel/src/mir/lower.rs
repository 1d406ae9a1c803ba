//! From HIR to MIR: structured control flow becomes blocks with explicit branches, memory
//! accesses become byte addresses in their address space, and SSA is built from the
//! variables by [`super::ssa`].

use std::collections::HashMap;

use wave_diag::Span;

mod math;

use super::ssa::{Raw, ssa, zero};
use super::{Block, BlockId, Func, Inst, Op, PrivateArray, Space, Term, Value, remove_unreachable};
use crate::hir::{self, BinOp, Intrinsic, MathFn, Scalar, Special, Ty, VarId, WaveOp};

struct RawBlock {
    items: Vec<Raw>,
    term: Option<Term>,
}

struct Builder {
    /// The kernel's variables and the temporaries lowering adds (the value of a
    /// short-circuit `and`/`or` or of a conditional expression).
    vars: Vec<hir::Var>,
    blocks: Vec<RawBlock>,
    types: Vec<Ty>,
    current: BlockId,
    /// (continue target, break target) of each enclosing loop.
    loops: Vec<(BlockId, BlockId)>,
    /// The byte offset of each local array.
    local_base: HashMap<VarId, u32>,
}

fn size_of(s: Scalar) -> u32 {
    match s {
        Scalar::U8 => 1,
        Scalar::F16 | Scalar::U16 => 2,
        Scalar::F64 => 8,
        _ => 4,
    }
}

impl Builder {
    fn value(&mut self, ty: Ty) -> Value {
        self.types.push(ty);
        Value(self.types.len() as u32 - 1)
    }

    fn block(&mut self) -> BlockId {
        self.blocks.push(RawBlock { items: Vec::new(), term: None });
        BlockId(self.blocks.len() as u32 - 1)
    }

    fn push(&mut self, op: Op, ty: Ty, span: &Span) -> Value {
        let v = self.value(ty);
        self.blocks[self.current.0 as usize].items.push(Raw::Inst(Inst {
            dst: Some(v),
            op,
            span: span.clone(),
        }));
        v
    }

    fn effect(&mut self, op: Op, span: &Span) {
        self.blocks[self.current.0 as usize].items.push(Raw::Inst(Inst {
            dst: None,
            op,
            span: span.clone(),
        }));
    }

    fn terminate(&mut self, term: Term) {
        let b = &mut self.blocks[self.current.0 as usize];
        if b.term.is_none() {
            b.term = Some(term);
        }
    }

    fn def(&mut self, var: VarId, v: Value) {
        self.blocks[self.current.0 as usize].items.push(Raw::Def(var, v));
    }

    fn use_var(&mut self, var: VarId) -> Value {
        let ty = self.vars[var.0 as usize].ty;
        let v = self.value(ty);
        self.blocks[self.current.0 as usize].items.push(Raw::Use(v, var));
        v
    }

    fn u32(&mut self, v: i64, span: &Span) -> Value {
        self.push(Op::Int(v), Ty::Scalar(Scalar::U32), span)
    }

    /// The byte address of `base[index]` and its address space (for a private array, the
    /// element index).
    fn address(&mut self, base: &hir::Expr, index: &hir::Expr) -> (Space, Value) {
        let span = &index.span;
        if let (hir::ExprKind::Var(v), Ty::Private(..)) = (&base.kind, base.ty) {
            let mut i = self.expr(index);
            if index.ty == Ty::Scalar(Scalar::I32) {
                i = self.push(Op::Cast(i), Ty::Scalar(Scalar::U32), span);
            }
            return (Space::Private(*v), i);
        }
        let (space, elem, start) = match (&base.kind, base.ty) {
            (hir::ExprKind::Var(v), Ty::Local(s, _)) => {
                let at = self.local_base.get(v).copied().unwrap_or(0);
                let start = self.u32(i64::from(at), span);
                (Space::Local, s, start)
            }
            (_, Ty::Buffer(s)) => {
                let b = self.expr(base);
                (Space::Device, s, b)
            }
            _ => {
                let b = self.expr(base);
                (Space::Device, Scalar::U32, b)
            }
        };
        let mut i = self.expr(index);
        if index.ty == Ty::Scalar(Scalar::I32) {
            i = self.push(Op::Cast(i), Ty::Scalar(Scalar::U32), span);
        }
        let shift = size_of(elem).trailing_zeros();
        let scaled = if shift == 0 {
            i
        } else {
            let s = self.u32(i64::from(shift), span);
            self.push(Op::Binary(BinOp::Shl, i, s), Ty::Scalar(Scalar::U32), span)
        };
        let addr = self.push(Op::Binary(BinOp::Add, start, scaled), Ty::Scalar(Scalar::U32), span);
        (space, addr)
    }

    fn expr(&mut self, e: &hir::Expr) -> Value {
        let span = &e.span;
        match &e.kind {
            hir::ExprKind::Int(v) => self.push(Op::Int(*v), e.ty, span),
            hir::ExprKind::Float(v) => self.push(Op::Float(*v), e.ty, span),
            hir::ExprKind::Bool(b) => self.push(Op::Bool(*b), e.ty, span),
            hir::ExprKind::Var(v) => self.use_var(*v),
            hir::ExprKind::Load(b, i) => {
                let (space, addr) = self.address(b, i);
                self.push(Op::Load(space, addr), e.ty, span)
            }
            hir::ExprKind::Binary(op @ (BinOp::LogicAnd | BinOp::LogicOr), a, b)
                if !speculable(b) =>
            {
                // `a and b` evaluates `b` only where `a` holds (`or`: where it does not).
                let and = *op == BinOp::LogicAnd;
                let tmp = self.temporary(e.ty, span);
                let a = self.expr(a);
                self.def(tmp, a);
                let (eval, join) = (self.block(), self.block());
                let term =
                    if and { Term::Branch(a, eval, join) } else { Term::Branch(a, join, eval) };
                self.terminate(term);
                self.current = eval;
                let b = self.expr(b);
                self.def(tmp, b);
                self.terminate(Term::Jump(join));
                self.current = join;
                self.use_var(tmp)
            }
            hir::ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                self.push(Op::Binary(*op, a, b), e.ty, span)
            }
            hir::ExprKind::Unary(op, a) => {
                let a = self.expr(a);
                self.push(Op::Unary(*op, a), e.ty, span)
            }
            hir::ExprKind::Cast(a) => {
                let a = self.expr(a);
                self.push(Op::Cast(a), e.ty, span)
            }
            hir::ExprKind::Special(Special::GlobalId(d)) => {
                // Its parts, so that the thread id is shared with other uses of it.
                let u = Ty::Scalar(Scalar::U32);
                let w = self.push(Op::Special(Special::WorkgroupId(*d)), u, span);
                let size = self.push(Op::Special(Special::WorkgroupSize(*d)), u, span);
                let base = self.push(Op::Binary(BinOp::Mul, w, size), u, span);
                let t = self.push(Op::Special(Special::ThreadId(*d)), u, span);
                self.push(Op::Binary(BinOp::Add, base, t), e.ty, span)
            }
            hir::ExprKind::Special(s) => self.push(Op::Special(*s), e.ty, span),
            hir::ExprKind::Select(c, a, b) if !speculable(a) || !speculable(b) => {
                // Only the chosen side is evaluated.
                let tmp = self.temporary(e.ty, span);
                let c = self.expr(c);
                let (yes, no, join) = (self.block(), self.block(), self.block());
                self.terminate(Term::Branch(c, yes, no));
                self.current = yes;
                let a = self.expr(a);
                self.def(tmp, a);
                self.terminate(Term::Jump(join));
                self.current = no;
                let b = self.expr(b);
                self.def(tmp, b);
                self.terminate(Term::Jump(join));
                self.current = join;
                self.use_var(tmp)
            }
            hir::ExprKind::Select(c, a, b) => {
                let (c, a, b) = (self.expr(c), self.expr(a), self.expr(b));
                self.push(Op::Select(c, a, b), e.ty, span)
            }
            hir::ExprKind::Call(Intrinsic::Atomic(op), args) => {
                let (space, addr) = self.address(&args[0], &args[1]);
                let v = self.expr(&args[2]);
                self.push(Op::Atomic(*op, space, addr, v), e.ty, span)
            }
            hir::ExprKind::Call(
                Intrinsic::Wave(
                    op @ (WaveOp::ReduceAdd
                    | WaveOp::ReduceMin
                    | WaveOp::ReduceMax
                    | WaveOp::PrefixSum),
                ),
                args,
            ) if matches!(e.ty, Ty::Scalar(s) if s.is_float()) => {
                self.float_wave(*op, &args[0], e.ty, span)
            }
            hir::ExprKind::Call(Intrinsic::Math(MathFn::Pow), args)
                if integer_exponent(&args[1]).is_some() =>
            {
                let x = self.expr(&args[0]);
                let n = integer_exponent(&args[1]).unwrap_or(1);
                self.power(x, n, e.ty, span)
            }
            hir::ExprKind::Call(
                Intrinsic::Math(
                    f @ (MathFn::Exp
                    | MathFn::Log
                    | MathFn::Log10
                    | MathFn::Tanh
                    | MathFn::Pow
                    | MathFn::Exp2
                    | MathFn::Log2),
                ),
                args,
            ) if e.ty == Ty::Scalar(Scalar::F64) || !matches!(f, MathFn::Exp2 | MathFn::Log2) => {
                // Computed in `f32` (an `f16` value converted there and back), or in `f64`.
                let work =
                    if e.ty == Ty::Scalar(Scalar::F64) { e.ty } else { Ty::Scalar(Scalar::F32) };
                let mut vals: Vec<Value> = args.iter().map(|a| self.expr(a)).collect();
                if e.ty != work {
                    for v in &mut vals {
                        *v = self.push(Op::Cast(*v), work, span);
                    }
                }
                let r = math::expand(self, *f, &vals, work, span);
                if e.ty == work { r } else { self.push(Op::Cast(r), e.ty, span) }
            }
            hir::ExprKind::Call(i, args) => {
                let vals: Vec<Value> = args.iter().map(|a| self.expr(a)).collect();
                if e.ty == Ty::Unit {
                    self.effect(Op::Call(*i, vals), span);
                    self.value(Ty::Unit)
                } else {
                    self.push(Op::Call(*i, vals), e.ty, span)
                }
            }
        }
    }

    /// A wave reduction or prefix sum of a float `arg`, which no instruction computes
    /// (`docs/kernels.md`, "Wave reductions"). Where every lane of the wave is active (the
    /// integer `reduce_add(1)` is the width), a butterfly of `shuffle_xor` (a Hillis–Steele
    /// scan of `shuffle_up` for the prefix sum), every step past the width skipped; otherwise
    /// the lanes one by one in lane order, each taken where `any(lane_id == l)` says it is
    /// active (a shuffle from an inactive lane reads an undefined value).
    fn float_wave(&mut self, op: WaveOp, arg: &hir::Expr, ty: Ty, span: &Span) -> Value {
        use hir::ExprKind as K;
        let u32t = Ty::Scalar(Scalar::U32);
        let boolt = Ty::Scalar(Scalar::Bool);
        let ex = |kind: K, ty: Ty| hir::Expr { kind, ty, span: span.clone() };
        let int = |v: i64| ex(K::Int(v), u32t);
        let var = |v: VarId, ty: Ty| ex(K::Var(v), ty);
        let bin = |op: BinOp, a: hir::Expr, b: hir::Expr| {
            let ty = if op.is_comparison() || matches!(op, BinOp::LogicAnd) { boolt } else { a.ty };
            ex(K::Binary(op, Box::new(a), Box::new(b)), ty)
        };
        let width = ex(K::Special(Special::WaveWidth), u32t);
        let lane = ex(K::Special(Special::LaneId), u32t);
        let assign = |v: VarId, e: hir::Expr| hir::Stmt {
            kind: hir::StmtKind::Assign(v, e),
            span: span.clone(),
        };
        let combine = |a: hir::Expr, b: hir::Expr| match op {
            WaveOp::ReduceMin => ex(K::Call(Intrinsic::Min, vec![a, b]), ty),
            WaveOp::ReduceMax => ex(K::Call(Intrinsic::Max, vec![a, b]), ty),
            _ => bin(BinOp::Add, a, b),
        };
        let identity = match op {
            WaveOp::ReduceMin => f64::INFINITY,
            WaveOp::ReduceMax => f64::NEG_INFINITY,
            _ => -0.0,
        };
        let v = self.temporary(ty, span);
        let acc = self.temporary(ty, span);
        let other = self.temporary(ty, span);
        let l = self.temporary(u32t, span);
        self.stmt(&assign(v, arg.clone()));
        let count = ex(K::Call(Intrinsic::Wave(WaveOp::ReduceAdd), vec![int(1)]), u32t);
        let full = bin(BinOp::Eq, count, width.clone());
        let mut fast = vec![assign(acc, var(v, ty))];
        for off in [1, 2, 4, 8, 16, 32] {
            let (shuffle, step) = if op == WaveOp::PrefixSum {
                let below = bin(BinOp::Ge, lane.clone(), int(off));
                (
                    WaveOp::ShuffleUp,
                    bin(BinOp::LogicAnd, bin(BinOp::Lt, int(off), width.clone()), below),
                )
            } else {
                (WaveOp::ShuffleXor, bin(BinOp::Lt, int(off), width.clone()))
            };
            fast.push(assign(
                other,
                ex(K::Call(Intrinsic::Wave(shuffle), vec![var(acc, ty), int(off)]), ty),
            ));
            let next = combine(var(acc, ty), var(other, ty));
            fast.push(assign(
                acc,
                ex(K::Select(Box::new(step), Box::new(next), Box::new(var(acc, ty))), ty),
            ));
        }
        let active = ex(
            K::Call(Intrinsic::Wave(WaveOp::Any), vec![bin(BinOp::Eq, lane.clone(), var(l, u32t))]),
            boolt,
        );
        let take = if op == WaveOp::PrefixSum {
            bin(BinOp::LogicAnd, active, bin(BinOp::Le, var(l, u32t), lane.clone()))
        } else {
            active
        };
        let slow_body = vec![
            assign(
                other,
                ex(K::Call(Intrinsic::Wave(WaveOp::Broadcast), vec![var(v, ty), var(l, u32t)]), ty),
            ),
            assign(
                acc,
                ex(
                    K::Select(
                        Box::new(take),
                        Box::new(combine(var(acc, ty), var(other, ty))),
                        Box::new(var(acc, ty)),
                    ),
                    ty,
                ),
            ),
        ];
        let slow = vec![
            assign(acc, ex(K::Float(identity), ty)),
            hir::Stmt {
                kind: hir::StmtKind::For {
                    var: l,
                    start: int(0),
                    end: width,
                    step: 1,
                    body: slow_body,
                },
                span: span.clone(),
            },
        ];
        self.stmt(&hir::Stmt { kind: hir::StmtKind::If(full, fast, slow), span: span.clone() });
        self.use_var(acc)
    }

    /// `x` to the constant power `n`, by squaring (`1 / x^-n` for a negative `n`).
    fn power(&mut self, x: Value, n: i64, ty: Ty, span: &Span) -> Value {
        let one = match ty {
            Ty::Scalar(s) if s.is_float() => Op::Float(1.0),
            _ => Op::Int(1),
        };
        let mut result: Option<Value> = None;
        let mut base = x;
        let mut k = n.unsigned_abs();
        while k > 0 {
            if k & 1 == 1 {
                result = Some(match result {
                    None => base,
                    Some(r) => self.push(Op::Binary(BinOp::Mul, r, base), ty, span),
                });
            }
            k >>= 1;
            if k > 0 {
                base = self.push(Op::Binary(BinOp::Mul, base, base), ty, span);
            }
        }
        let r = match result {
            Some(r) => r,
            None => self.push(one.clone(), ty, span),
        };
        if n < 0 {
            let one = self.push(one, ty, span);
            self.push(Op::Binary(BinOp::Div, one, r), ty, span)
        } else {
            r
        }
    }

    /// A variable for a value that control flow merges.
    fn temporary(&mut self, ty: Ty, span: &Span) -> VarId {
        self.vars.push(hir::Var {
            name: format!("tmp.{}", self.vars.len()),
            ty,
            span: span.clone(),
            param: false,
        });
        VarId(self.vars.len() as u32 - 1)
    }

    fn stmts(&mut self, body: &[hir::Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &hir::Stmt) {
        let span = &s.span;
        match &s.kind {
            hir::StmtKind::Assign(var, e) => {
                let v = self.expr(e);
                self.def(*var, v);
            }
            hir::StmtKind::Store(b, i, v) => {
                // Python evaluates the value before the target's index.
                let v = self.expr(v);
                let (space, addr) = self.address(b, i);
                self.effect(Op::Store(space, addr, v), span);
            }
            hir::StmtKind::Expr(e) => {
                self.expr(e);
            }
            hir::StmtKind::If(c, then, otherwise) => {
                let c = self.expr(c);
                let (t, f, join) = (self.block(), self.block(), self.block());
                self.terminate(Term::Branch(c, t, f));
                self.current = t;
                self.stmts(then);
                self.terminate(Term::Jump(join));
                self.current = f;
                self.stmts(otherwise);
                self.terminate(Term::Jump(join));
                self.current = join;
            }
            hir::StmtKind::While(c, body) => {
                let (header, inner, exit) = (self.block(), self.block(), self.block());
                self.terminate(Term::Jump(header));
                self.current = header;
                let c = self.expr(c);
                self.terminate(Term::Branch(c, inner, exit));
                self.current = inner;
                self.loops.push((header, exit));
                self.stmts(body);
                self.loops.pop();
                self.terminate(Term::Jump(header));
                self.current = exit;
            }
            hir::StmtKind::For { var, start, end, step, body } => {
                let first = self.expr(start);
                self.def(*var, first);
                let (header, inner, latch, exit) =
                    (self.block(), self.block(), self.block(), self.block());
                self.terminate(Term::Jump(header));
                self.current = header;
                let i = self.use_var(*var);
                let bound = self.expr(end);
                let cmp = if *step > 0 { BinOp::Lt } else { BinOp::Gt };
                let c = self.push(Op::Binary(cmp, i, bound), Ty::Scalar(Scalar::Bool), span);
                self.terminate(Term::Branch(c, inner, exit));
                self.current = inner;
                self.loops.push((latch, exit));
                self.stmts(body);
                self.loops.pop();
                self.terminate(Term::Jump(latch));
                self.current = latch;
                let i = self.use_var(*var);
                let ty = self.vars[var.0 as usize].ty;
                let stepv = self.push(Op::Int(step.abs()), ty, span);
                let op = if *step > 0 { BinOp::Add } else { BinOp::Sub };
                let next = self.push(Op::Binary(op, i, stepv), ty, span);
                self.def(*var, next);
                self.terminate(Term::Jump(header));
                self.current = exit;
            }
            hir::StmtKind::Break | hir::StmtKind::Continue => {
                if let Some(&(cont, brk)) = self.loops.last() {
                    let target = if s.kind == hir::StmtKind::Break { brk } else { cont };
                    self.terminate(Term::Jump(target));
                }
                // What follows in the same block is unreachable.
                self.current = self.block();
            }
            hir::StmtKind::Return => {
                self.terminate(Term::Return);
                self.current = self.block();
            }
        }
    }
}

/// The exponent of `pow` where it is an integer constant that multiplications compute:
/// from -64 to 64 (an integer power's is from 0, by the typer).
fn integer_exponent(e: &hir::Expr) -> Option<i64> {
    match e.kind {
        hir::ExprKind::Int(n) if (0..=64).contains(&n) => Some(n),
        hir::ExprKind::Float(v) if v.fract() == 0.0 && v.abs() <= 64.0 => Some(v as i64),
        _ => None,
    }
}

/// Whether evaluating `e` where the source does not can change nothing: no load (it may
/// fault), no atomic, barrier or wave operation (their result depends on which lanes run).
fn speculable(e: &hir::Expr) -> bool {
    use hir::ExprKind as K;
    match &e.kind {
        K::Int(_) | K::Float(_) | K::Bool(_) | K::Var(_) | K::Special(_) => true,
        K::Load(..) => false,
        K::Binary(_, a, b) => speculable(a) && speculable(b),
        K::Unary(_, a) | K::Cast(a) => speculable(a),
        K::Select(c, a, b) => speculable(c) && speculable(a) && speculable(b),
        K::Call(Intrinsic::Math(_) | Intrinsic::Min | Intrinsic::Max, args) => {
            args.iter().all(speculable)
        }
        K::Call(..) => false,
    }
}

/// Lowers a kernel's HIR to MIR in SSA form.
pub fn lower(kernel: &hir::Kernel) -> Func {
    let mut b = Builder {
        vars: kernel.vars.clone(),
        blocks: Vec::new(),
        types: Vec::new(),
        current: BlockId(0),
        loops: Vec::new(),
        local_base: HashMap::new(),
    };
    b.block();
    // Local arrays, one after another, each aligned to its element size.
    let mut local = 0u32;
    for (i, v) in kernel.vars.iter().enumerate() {
        if let Ty::Local(s, n) = v.ty {
            local = local.next_multiple_of(size_of(s));
            b.local_base.insert(VarId(i as u32), local);
            local += n * size_of(s);
        }
    }
    // Private arrays, each filled with zeros on entry (mem2reg makes those stores the
    // arrays' first values; LIR places the others in the thread's frame).
    let mut private = Vec::new();
    for (i, v) in kernel.vars.iter().enumerate() {
        if let Ty::Private(s, n) = v.ty {
            private.push(PrivateArray {
                var: VarId(i as u32),
                name: v.name.clone(),
                elem: s,
                len: n,
            });
        }
    }
    for a in &private {
        let span = &kernel.vars[a.var.0 as usize].span;
        for e in 0..a.len {
            let at = b.u32(i64::from(e), span);
            let z = b.push(zero(Ty::Scalar(a.elem)), Ty::Scalar(a.elem), span);
            b.effect(Op::Store(Space::Private(a.var), at, z), span);
        }
    }
    // Parameters are defined on entry.
    let mut params = Vec::new();
    for (i, v) in kernel.vars.iter().enumerate().filter(|(_, v)| v.param) {
        let ty = match v.ty {
            Ty::Buffer(_) => Ty::Scalar(Scalar::U32),
            // An `f16` is passed as an `f32` (a `.wbin` passes 32-bit values) and rounded.
            Ty::Scalar(Scalar::F16) => Ty::Scalar(Scalar::F32),
            t => t,
        };
        let mut p = b.push(Op::Param(params.len() as u32), ty, &v.span);
        if v.ty == Ty::Scalar(Scalar::F16) {
            p = b.push(Op::Cast(p), v.ty, &v.span);
        }
        b.def(VarId(i as u32), p);
        params.push((v.name.clone(), if v.ty == Ty::Scalar(Scalar::F16) { ty } else { v.ty }));
    }
    b.stmts(&kernel.body);
    b.terminate(Term::Return);
    let Builder { blocks, types, vars, .. } = b;
    let mut func = Func {
        name: kernel.name.clone(),
        params,
        blocks: blocks
            .iter()
            .map(|r| Block {
                phis: Vec::new(),
                insts: Vec::new(),
                term: r.term.clone().unwrap_or(Term::Return),
            })
            .collect(),
        types,
        local_memory: local,
        private,
        workgroup_size: kernel.workgroup_size,
        names: HashMap::new(),
    };
    let raw: Vec<Vec<Raw>> = blocks.into_iter().map(|r| r.items).collect();
    ssa(&mut func, &vars, raw);
    remove_unreachable(&mut func);
    func
}

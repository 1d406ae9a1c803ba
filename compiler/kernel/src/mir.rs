//! MIR: a kernel as a control-flow graph of basic blocks in SSA form.
//!
//! Every value is defined once; phi nodes merge values where control flow joins. They are
//! placed at the iterated dominance frontiers of each variable's definitions (Cytron et al.),
//! then the variables are renamed along the dominator tree. Memory accesses are lowered to
//! explicit byte addresses (`base + index << log2(size)`) in an address space: device memory
//! for buffer parameters, Local Memory for local arrays (laid out one after another).
//!
//! HIR's structured control flow becomes blocks with explicit branches: an `if` is a diamond,
//! a loop a header that tests its condition, a body, and (for `for`) a latch that steps the
//! variable; `break` jumps to the loop's exit and `continue` to its header (or latch). The graph
//! is therefore reducible, with one header per loop, which is what LIR needs to recover
//! structured `if`/`loop` instructions.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use wave_diag::Span;

use crate::hir::{self, BinOp, Intrinsic, Scalar, Special, Ty, UnOp, VarId};

mod parse;

pub use parse::{ParseError, parse};

/// An SSA value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// A basic block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

/// An address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Device memory.
    Device,
    /// The workgroup's Local Memory.
    Local,
    /// A private array of the thread (the HIR variable): its accesses take the element
    /// index, not a byte address. mem2reg turns the arrays indexed only by constants into
    /// SSA values; LIR places the others in the thread's frame in Local Memory.
    Private(VarId),
}

/// A private array: each thread's own, zero-filled on entry.
#[derive(Clone, Debug, PartialEq)]
pub struct PrivateArray {
    /// The HIR variable.
    pub var: VarId,
    /// Its source name.
    pub name: String,
    /// The element type.
    pub elem: Scalar,
    /// The number of elements.
    pub len: u32,
}

/// What an instruction computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// An integer constant (bits of the value's type).
    Int(i64),
    /// A float constant.
    Float(f64),
    /// `true`/`false`.
    Bool(bool),
    /// Parameter `n` (a buffer parameter is its byte address).
    Param(u32),
    /// A special register, or a value computed from them.
    Special(Special),
    /// A unary operation.
    Unary(UnOp, Value),
    /// A binary operation.
    Binary(BinOp, Value, Value),
    /// A conversion to the result type.
    Cast(Value),
    /// `cond ? a : b`.
    Select(Value, Value, Value),
    /// A load of the result type from a byte address.
    Load(Space, Value),
    /// A store of a value to a byte address.
    Store(Space, Value, Value),
    /// An atomic read-modify-write at a byte address, returning the old value.
    Atomic(hir::AtomicOp, Space, Value, Value),
    /// A barrier, fence, wave operation or math function.
    Call(Intrinsic, Vec<Value>),
}

impl Op {
    /// The values it reads.
    pub fn operands(&self) -> Vec<Value> {
        match self {
            Op::Int(_) | Op::Float(_) | Op::Bool(_) | Op::Param(_) | Op::Special(_) => Vec::new(),
            Op::Unary(_, a) | Op::Cast(a) | Op::Load(_, a) => vec![*a],
            Op::Binary(_, a, b) | Op::Store(_, a, b) | Op::Atomic(_, _, a, b) => vec![*a, *b],
            Op::Select(c, a, b) => vec![*c, *a, *b],
            Op::Call(_, args) => args.clone(),
        }
    }

    /// Whether it has an effect beyond its result (it must stay even if unused).
    pub fn has_effect(&self) -> bool {
        matches!(
            self,
            Op::Store(..) | Op::Atomic(..) | Op::Call(Intrinsic::Barrier | Intrinsic::Fence, _)
        )
    }

    /// Replaces each value it reads by `f` of it.
    pub fn map_operands(&mut self, f: &mut dyn FnMut(Value) -> Value) {
        match self {
            Op::Int(_) | Op::Float(_) | Op::Bool(_) | Op::Param(_) | Op::Special(_) => {}
            Op::Unary(_, a) | Op::Cast(a) | Op::Load(_, a) => *a = f(*a),
            Op::Binary(_, a, b) | Op::Store(_, a, b) | Op::Atomic(_, _, a, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            Op::Select(c, a, b) => {
                *c = f(*c);
                *a = f(*a);
                *b = f(*b);
            }
            Op::Call(_, args) => args.iter_mut().for_each(|a| *a = f(*a)),
        }
    }
}

/// An instruction: an operation and the value it defines (if it defines one).
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// The value defined.
    pub dst: Option<Value>,
    /// What it computes.
    pub op: Op,
    /// The source it comes from.
    pub span: Span,
}

/// A phi node: the value of `var` on entry, from each predecessor.
#[derive(Clone, Debug, PartialEq)]
pub struct Phi {
    /// The value defined.
    pub dst: Value,
    /// The HIR variable it merges (for names in the text form).
    pub var: VarId,
    /// One incoming value per predecessor.
    pub args: Vec<(BlockId, Value)>,
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// Go to a block.
    Jump(BlockId),
    /// Go to the first block when the value is true, else to the second.
    Branch(Value, BlockId, BlockId),
    /// The thread ends.
    Return,
}

impl Term {
    /// The blocks it can go to.
    pub fn successors(&self) -> Vec<BlockId> {
        match self {
            Term::Jump(b) => vec![*b],
            Term::Branch(_, a, b) => vec![*a, *b],
            Term::Return => Vec::new(),
        }
    }
}

/// A basic block.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Phi nodes, first.
    pub phis: Vec<Phi>,
    /// The instructions.
    pub insts: Vec<Inst>,
    /// How it ends.
    pub term: Term,
}

/// A kernel in MIR.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// Its name.
    pub name: String,
    /// Parameters: name and type.
    pub params: Vec<(String, Ty)>,
    /// Blocks; the first is the entry.
    pub blocks: Vec<Block>,
    /// The type of each value.
    pub types: Vec<Ty>,
    /// Bytes of Local Memory (the local arrays, one after another).
    pub local_memory: u32,
    /// The private arrays (those mem2reg promoted are gone from the code, not from here).
    pub private: Vec<PrivateArray>,
    /// A workgroup size given in the source.
    pub workgroup_size: Option<[u32; 3]>,
    /// The source variables each value is the value of (for the debugger's variables):
    /// recorded when SSA is built, and carried to a value's substitute by the passes.
    pub names: HashMap<Value, Vec<String>>,
}

impl Func {
    /// Records that `v` is the value of the source variable `name`.
    pub fn name_value(&mut self, v: Value, name: &str) {
        // (Passes that rebuild SSA name their variables `` or `tmp.N`: not the source's.)
        if name.is_empty() || name.starts_with("tmp.") {
            return;
        }
        // A second variable of one name (`x#2`: a shadowing `let`, a second loop's `i`, a
        // helper inlined twice) is the source's `x`.
        let name = name.split('#').next().unwrap_or(name);
        let names = self.names.entry(v).or_default();
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }

    /// The names of `from` are also those of `to` (which replaces it).
    pub fn carry_names(&mut self, from: Value, to: Value) {
        if from == to {
            return;
        }
        if let Some(names) = self.names.get(&from).cloned() {
            for n in names {
                self.name_value(to, &n);
            }
        }
    }

    /// The predecessors of every block.
    pub fn predecessors(&self) -> Vec<Vec<BlockId>> {
        let mut preds = vec![Vec::new(); self.blocks.len()];
        for (i, b) in self.blocks.iter().enumerate() {
            for s in b.term.successors() {
                if !preds[s.0 as usize].contains(&BlockId(i as u32)) {
                    preds[s.0 as usize].push(BlockId(i as u32));
                }
            }
        }
        preds
    }

    /// Blocks in reverse postorder from the entry (unreachable blocks left out).
    pub fn reverse_postorder(&self) -> Vec<BlockId> {
        let mut seen = vec![false; self.blocks.len()];
        let mut post = Vec::new();
        let mut stack = vec![(BlockId(0), 0usize)];
        seen[0] = true;
        while let Some((b, i)) = stack.pop() {
            let succ = self.blocks[b.0 as usize].term.successors();
            if i < succ.len() {
                stack.push((b, i + 1));
                let s = succ[i];
                if !seen[s.0 as usize] {
                    seen[s.0 as usize] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
            }
        }
        post.reverse();
        post
    }

    /// Immediate dominators (Cooper, Harvey and Kennedy), by block; `None` for the entry and
    /// unreachable blocks.
    pub fn dominators(&self) -> Vec<Option<BlockId>> {
        let rpo = self.reverse_postorder();
        let mut order = vec![usize::MAX; self.blocks.len()];
        for (i, b) in rpo.iter().enumerate() {
            order[b.0 as usize] = i;
        }
        let preds = self.predecessors();
        let mut idom: Vec<Option<BlockId>> = vec![None; self.blocks.len()];
        idom[0] = Some(BlockId(0));
        let intersect = |idom: &[Option<BlockId>], mut a: BlockId, mut b: BlockId| {
            while a != b {
                while order[a.0 as usize] > order[b.0 as usize] {
                    a = idom[a.0 as usize].unwrap_or(BlockId(0));
                }
                while order[b.0 as usize] > order[a.0 as usize] {
                    b = idom[b.0 as usize].unwrap_or(BlockId(0));
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new: Option<BlockId> = None;
                for &p in &preds[b.0 as usize] {
                    if idom[p.0 as usize].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(n) => intersect(&idom, p, n),
                    });
                }
                if new.is_some() && idom[b.0 as usize] != new {
                    idom[b.0 as usize] = new;
                    changed = true;
                }
            }
        }
        idom[0] = None;
        idom
    }

    /// How many times each value is read: by phis, instructions and branches.
    pub fn reads(&self) -> Vec<usize> {
        let mut reads = vec![0usize; self.types.len()];
        for b in &self.blocks {
            for phi in &b.phis {
                for (_, v) in &phi.args {
                    reads[v.0 as usize] += 1;
                }
            }
            for inst in &b.insts {
                for v in inst.op.operands() {
                    reads[v.0 as usize] += 1;
                }
            }
            if let Term::Branch(c, ..) = &b.term {
                reads[c.0 as usize] += 1;
            }
        }
        reads
    }

    /// The values `x + c` (c a constant under 2^23 in magnitude) whose every read is the byte
    /// address of a load or store: the back end folds each into its accesses as `[x + c]`,
    /// so such a value costs no instruction and no register of its own.
    pub fn offset_addresses(&self) -> Vec<Option<(Value, i32)>> {
        let n = self.types.len();
        let mut def: Vec<Option<&Op>> = vec![None; n];
        let mut address_uses = vec![0usize; n];
        for block in &self.blocks {
            for inst in &block.insts {
                if let Some(d) = inst.dst {
                    def[d.0 as usize] = Some(&inst.op);
                }
                // (A private array's element index is not a byte address.)
                match &inst.op {
                    Op::Load(s, a) if !matches!(s, Space::Private(_)) => {
                        address_uses[a.0 as usize] += 1
                    }
                    Op::Store(s, a, x) if a != x && !matches!(s, Space::Private(_)) => {
                        address_uses[a.0 as usize] += 1
                    }
                    _ => {}
                }
            }
        }
        let all_uses = self.reads();
        (0..n)
            .map(|v| match def[v] {
                Some(Op::Binary(BinOp::Add, x, c))
                    if all_uses[v] > 0 && all_uses[v] == address_uses[v] =>
                {
                    match def[c.0 as usize] {
                        Some(Op::Int(k)) => i32::try_from(*k as i32 as i64)
                            .ok()
                            .filter(|k| k.unsigned_abs() < 1 << 23)
                            .map(|k| (*x, k)),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect()
    }

    /// Whether block `a` dominates block `b` (computing the dominators).
    pub fn dominates_block(&self, a: BlockId, b: BlockId) -> bool {
        Func::dominates(&self.dominators(), a, b)
    }

    /// Whether block `a` dominates block `b`.
    pub fn dominates(idom: &[Option<BlockId>], a: BlockId, mut b: BlockId) -> bool {
        loop {
            if a == b {
                return true;
            }
            match idom[b.0 as usize] {
                Some(p) if p != b => b = p,
                _ => return false,
            }
        }
    }
}

/// The dominator tree as intervals of a depth-first numbering: whether a block dominates
/// another in constant time, where [`Func::dominates`] walks the chain of dominators (as
/// long as the function, in straight-line code).
pub struct DomTree {
    /// When the walk enters and leaves each block (`u32::MAX` for unreachable blocks).
    enter: Vec<u32>,
    leave: Vec<u32>,
}

impl DomTree {
    /// The tree of the immediate dominators [`Func::dominators`] gives.
    pub fn new(idom: &[Option<BlockId>]) -> DomTree {
        let n = idom.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (b, d) in idom.iter().enumerate() {
            if let Some(p) = d
                && p.0 as usize != b
            {
                children[p.0 as usize].push(b);
            }
        }
        let (mut enter, mut leave) = (vec![u32::MAX; n], vec![u32::MAX; n]);
        let mut clock = 0u32;
        // (Block 0 is the entry; its own entry is `None` or itself.)
        if n > 0 {
            let mut stack = vec![(0usize, 0usize)];
            enter[0] = clock;
            clock += 1;
            while let Some((b, next)) = stack.last_mut() {
                if let Some(&c) = children[*b].get(*next) {
                    *next += 1;
                    enter[c] = clock;
                    clock += 1;
                    stack.push((c, 0));
                } else {
                    leave[*b] = clock;
                    clock += 1;
                    stack.pop();
                }
            }
        }
        DomTree { enter, leave }
    }

    /// Whether block `a` dominates block `b` (as [`Func::dominates`] says).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        let (a, b) = (a.0 as usize, b.0 as usize);
        a == b
            || (self.enter[a] != u32::MAX
                && self.enter[b] != u32::MAX
                && self.enter[a] <= self.enter[b]
                && self.leave[b] <= self.leave[a])
    }
}

// -------------------------------------------------------------------------------------------
// From HIR.

/// Pseudo-instructions used while building, before SSA renaming.
#[derive(Clone, Debug)]
pub(crate) enum Raw {
    Inst(Inst),
    /// `var = value`.
    Def(VarId, Value),
    /// `value = var` (replaced by the reaching definition).
    Use(Value, VarId),
}

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
        Scalar::F16 => 2,
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
            t => t,
        };
        let p = b.push(Op::Param(params.len() as u32), ty, &v.span);
        b.def(VarId(i as u32), p);
        params.push((v.name.clone(), v.ty));
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

/// mem2reg: each private array whose every access has a constant index inside it becomes
/// one SSA variable per element. Its stores are definitions and its loads uses, and phis are
/// placed and values renamed as for the source's variables (the zero-filling stores on entry
/// give every element a first value). Arrays indexed by a computed value stay in memory. The
/// phis already in the function are kept. Returns whether an array was promoted.
pub fn mem2reg(func: &mut Func) -> bool {
    let constant: HashMap<Value, i64> = func
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match (i.dst, &i.op) {
            (Some(d), Op::Int(c)) => Some((d, *c)),
            _ => None,
        })
        .collect();
    let element = |arrays: &[PrivateArray], var: VarId, index: Value| -> Option<u32> {
        let a = arrays.iter().find(|a| a.var == var)?;
        let c = *constant.get(&index)?;
        u32::try_from(c).ok().filter(|&c| c < a.len)
    };
    // Which arrays qualify, and the first synthetic variable of each one's elements.
    let mut promotable: HashMap<VarId, bool> = HashMap::new();
    for inst in func.blocks.iter().flat_map(|b| &b.insts) {
        let (var, index) = match &inst.op {
            Op::Load(Space::Private(v), i) | Op::Store(Space::Private(v), i, _) => (*v, *i),
            // (Frontends refuse atomics on private arrays; were one here, it stays memory.)
            Op::Atomic(_, Space::Private(v), _, _) => {
                promotable.insert(*v, false);
                continue;
            }
            _ => continue,
        };
        let ok = element(&func.private, var, index).is_some();
        let e = promotable.entry(var).or_insert(true);
        *e &= ok;
    }
    // (The phis already there stay out of the rebuild: the variables start at 0.)
    let mut first_var = 0u32;
    let mut vars: Vec<hir::Var> = (0..first_var)
        .map(|_| hir::Var { name: String::new(), ty: Ty::Unit, span: 0..0, param: false })
        .collect();
    let mut base: HashMap<VarId, u32> = HashMap::new();
    for a in &func.private {
        if promotable.get(&a.var) != Some(&true) {
            continue;
        }
        base.insert(a.var, first_var);
        for e in 0..a.len {
            vars.push(hir::Var {
                name: format!("{}[{e}]", a.name),
                ty: Ty::Scalar(a.elem),
                span: 0..0,
                param: false,
            });
        }
        first_var += a.len;
    }
    if base.is_empty() {
        return false;
    }
    remove_unreachable(func);
    // The function as raw items: promoted loads are uses, promoted stores definitions.
    let mut raw: Vec<Vec<Raw>> = Vec::with_capacity(func.blocks.len());
    let mut kept_phis: Vec<Vec<Phi>> = Vec::with_capacity(func.blocks.len());
    for block in &mut func.blocks {
        kept_phis.push(std::mem::take(&mut block.phis));
        let mut items = Vec::new();
        for inst in std::mem::take(&mut block.insts) {
            let promoted = match &inst.op {
                Op::Load(Space::Private(v), i) | Op::Store(Space::Private(v), i, _) => {
                    base.get(v).and_then(|b| Some(VarId(b + element(&func.private, *v, *i)?)))
                }
                _ => None,
            };
            match (promoted, &inst.op, inst.dst) {
                (Some(var), Op::Load(..), Some(d)) => items.push(Raw::Use(d, var)),
                (Some(var), Op::Store(_, _, x), _) => items.push(Raw::Def(var, *x)),
                _ => items.push(Raw::Inst(inst)),
            }
        }
        raw.push(items);
    }
    rebuild(func, &vars, raw, kept_phis);
    true
}

/// Rebuilds SSA for the variables of `raw` (each block's items, which replace its
/// instructions): phis at the iterated dominance frontiers of their definitions, then
/// renaming. `kept` are phis already decided (they are kept, first, with their arguments
/// renamed where they name a variable's read).
pub(crate) fn rebuild(func: &mut Func, vars: &[hir::Var], raw: Vec<Vec<Raw>>, kept: Vec<Vec<Phi>>) {
    for block in &mut func.blocks {
        block.phis.clear();
    }
    let subst = ssa(func, vars, raw);
    let find = |mut v: Value| {
        while let Some(s) = subst.get(&v) {
            v = *s;
        }
        v
    };
    for (block, mut kept) in func.blocks.iter_mut().zip(kept) {
        for phi in &mut kept {
            for (_, v) in &mut phi.args {
                *v = find(*v);
            }
        }
        kept.append(&mut block.phis);
        block.phis = kept;
    }
}

/// Places phis at iterated dominance frontiers and renames variables along the dominator
/// tree. Returns the values replaced by a variable's reaching definition.
fn ssa(func: &mut Func, vars: &[hir::Var], raw: Vec<Vec<Raw>>) -> HashMap<Value, Value> {
    let n = func.blocks.len();
    let idom = func.dominators();
    let preds = func.predecessors();
    // Dominance frontiers (Cooper, Harvey and Kennedy).
    let reachable = |b: BlockId| b.0 == 0 || idom[b.0 as usize].is_some();
    let mut df: Vec<BTreeSet<BlockId>> = vec![BTreeSet::new(); n];
    for b in 0..n {
        if preds[b].len() < 2 || !reachable(BlockId(b as u32)) {
            continue;
        }
        for &p in preds[b].iter().filter(|p| reachable(**p)) {
            let mut runner = p;
            while Some(runner) != idom[b] {
                df[runner.0 as usize].insert(BlockId(b as u32));
                match idom[runner.0 as usize] {
                    Some(up) => runner = up,
                    None => break,
                }
            }
        }
    }
    // Phis for each variable at the iterated frontier of its definitions.
    let mut phi_var: Vec<Vec<VarId>> = vec![Vec::new(); n];
    for (v, var) in vars.iter().enumerate() {
        if matches!(var.ty, Ty::Local(..) | Ty::Private(..)) {
            continue;
        }
        let var_id = VarId(v as u32);
        let mut work: Vec<BlockId> = (0..n)
            .filter(|&b| raw[b].iter().any(|r| matches!(r, Raw::Def(d, _) if *d == var_id)))
            .map(|b| BlockId(b as u32))
            .collect();
        let mut placed = BTreeSet::new();
        while let Some(b) = work.pop() {
            for &f in &df[b.0 as usize] {
                if placed.insert(f) {
                    phi_var[f.0 as usize].push(var_id);
                    work.push(f);
                }
            }
        }
    }
    for (b, placed) in phi_var.iter().enumerate() {
        for &var in placed {
            let ty = match vars[var.0 as usize].ty {
                Ty::Buffer(_) => Ty::Scalar(Scalar::U32),
                t => t,
            };
            func.types.push(ty);
            let dst = Value(func.types.len() as u32 - 1);
            func.blocks[b].phis.push(Phi { dst, var, args: Vec::new() });
        }
    }
    // Rename along the dominator tree.
    let mut children: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for (b, d) in idom.iter().enumerate() {
        if let Some(d) = d {
            children[d.0 as usize].push(BlockId(b as u32));
        }
    }
    let mut subst: HashMap<Value, Value> = HashMap::new();
    let mut current: HashMap<VarId, Value> = HashMap::new();
    // Iterative walk: (block, saved definitions to restore after its subtree).
    enum Visit {
        Enter(BlockId),
        Leave(HashMap<VarId, Value>),
    }
    let mut stack = vec![Visit::Enter(BlockId(0))];
    while let Some(visit) = stack.pop() {
        let b = match visit {
            Visit::Leave(saved) => {
                current = saved;
                continue;
            }
            Visit::Enter(b) => b,
        };
        stack.push(Visit::Leave(current.clone()));
        let phis: Vec<(VarId, Value)> =
            func.blocks[b.0 as usize].phis.iter().map(|p| (p.var, p.dst)).collect();
        for (var, dst) in phis {
            current.insert(var, dst);
            func.name_value(dst, &vars[var.0 as usize].name);
        }
        let mut insts = Vec::new();
        for item in &raw[b.0 as usize] {
            match item {
                Raw::Inst(i) => {
                    let mut i = i.clone();
                    i.op.map_operands(&mut |v| *subst.get(&v).unwrap_or(&v));
                    insts.push(i);
                }
                Raw::Def(var, v) => {
                    let v = *subst.get(v).unwrap_or(v);
                    current.insert(*var, v);
                    if matches!(vars[var.0 as usize].ty, Ty::Scalar(_) | Ty::Buffer(_)) {
                        func.name_value(v, &vars[var.0 as usize].name);
                    }
                }
                Raw::Use(v, var) => match current.get(var) {
                    Some(r) => {
                        subst.insert(*v, *r);
                    }
                    None => {
                        // A read before any write: the variable's zero.
                        insts.push(Inst {
                            dst: Some(*v),
                            op: zero(func.types[v.0 as usize]),
                            span: 0..0,
                        });
                        current.insert(*var, *v);
                        func.name_value(*v, &vars[var.0 as usize].name);
                    }
                },
            }
        }
        let mut term = func.blocks[b.0 as usize].term.clone();
        if let Term::Branch(c, _, _) = &mut term {
            *c = *subst.get(c).unwrap_or(c);
        }
        func.blocks[b.0 as usize].insts = insts;
        func.blocks[b.0 as usize].term = term;
        // Fill the successors' phi arguments from here (a variable not yet written here
        // arrives as its zero, defined at the end of this block).
        for s in func.blocks[b.0 as usize].term.successors() {
            let phis = std::mem::take(&mut func.blocks[s.0 as usize].phis);
            let mut filled = Vec::new();
            for mut phi in phis {
                let v = match current.get(&phi.var) {
                    Some(v) => *v,
                    None => {
                        let ty = func.types[phi.dst.0 as usize];
                        func.types.push(ty);
                        let z = Value(func.types.len() as u32 - 1);
                        func.blocks[b.0 as usize].insts.push(Inst {
                            dst: Some(z),
                            op: zero(ty),
                            span: 0..0,
                        });
                        current.insert(phi.var, z);
                        z
                    }
                };
                phi.args.push((b, v));
                filled.push(phi);
            }
            func.blocks[s.0 as usize].phis = filled;
        }
        for &c in children[b.0 as usize].iter().rev() {
            stack.push(Visit::Enter(c));
        }
    }
    // Phi arguments may name values substituted later in the walk.
    for block in &mut func.blocks {
        for phi in &mut block.phis {
            for (_, v) in &mut phi.args {
                while let Some(s) = subst.get(v) {
                    *v = *s;
                }
            }
        }
    }
    subst
}

/// The zero of a type.
fn zero(ty: Ty) -> Op {
    match ty {
        Ty::Scalar(s) if s.is_float() => Op::Float(0.0),
        Ty::Scalar(Scalar::Bool) => Op::Bool(false),
        _ => Op::Int(0),
    }
}

/// Drops blocks no path from the entry reaches, renumbering the others.
pub(crate) fn remove_unreachable(func: &mut Func) {
    let rpo = func.reverse_postorder();
    let mut keep: Vec<BlockId> = rpo.clone();
    keep.sort();
    let mut new_id = vec![None; func.blocks.len()];
    for (i, b) in keep.iter().enumerate() {
        new_id[b.0 as usize] = Some(BlockId(i as u32));
    }
    let map = |b: BlockId| new_id[b.0 as usize].unwrap_or(BlockId(0));
    let old = std::mem::take(&mut func.blocks);
    for (i, mut block) in old.into_iter().enumerate() {
        if new_id[i].is_none() {
            continue;
        }
        block.term = match block.term {
            Term::Jump(t) => Term::Jump(map(t)),
            Term::Branch(c, a, b) => Term::Branch(c, map(a), map(b)),
            Term::Return => Term::Return,
        };
        for phi in &mut block.phis {
            phi.args.retain(|(p, _)| new_id[p.0 as usize].is_some());
            for (p, _) in &mut phi.args {
                *p = map(*p);
            }
        }
        func.blocks.push(block);
    }
}

// -------------------------------------------------------------------------------------------
// Text and checks.

fn name_of(func: &Func, v: Value) -> String {
    let _ = func;
    format!("%{}", v.0)
}

/// MIR as text: what `wave compile --emit mir` prints.
pub fn print(funcs: &[Func]) -> String {
    let mut out = String::new();
    for (i, f) in funcs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let params: Vec<String> = f.params.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        let _ = write!(out, "kernel {}({})", f.name, params.join(", "));
        if f.local_memory > 0 {
            let _ = write!(out, " local {}", f.local_memory);
        }
        out.push_str(" {\n");
        for (b, block) in f.blocks.iter().enumerate() {
            let _ = writeln!(out, "bb{b}:");
            for phi in &block.phis {
                let args: Vec<String> = phi
                    .args
                    .iter()
                    .map(|(p, v)| format!("bb{}: {}", p.0, name_of(f, *v)))
                    .collect();
                let _ = writeln!(
                    out,
                    "    {} = phi {} [{}]",
                    name_of(f, phi.dst),
                    f.types[phi.dst.0 as usize],
                    args.join(", ")
                );
            }
            for inst in &block.insts {
                out.push_str("    ");
                if let Some(d) = inst.dst {
                    let _ = write!(out, "{} = ", name_of(f, d));
                }
                let ty = inst.dst.map(|d| f.types[d.0 as usize]);
                let v = |x: &Value| name_of(f, *x);
                let text = match &inst.op {
                    Op::Int(n) => format!("const {n}"),
                    Op::Float(x) => format!("const {x:?}"),
                    Op::Bool(b) => format!("const {b}"),
                    Op::Param(n) => format!("param {n}"),
                    Op::Special(s) => format!("special {}", s.name()),
                    Op::Unary(op, a) => format!("{op:?} {}", v(a)).to_ascii_lowercase(),
                    Op::Binary(op, a, b) => {
                        format!("{:?} {}, {}", op, v(a), v(b)).to_ascii_lowercase()
                    }
                    Op::Cast(a) => format!("cast {}", v(a)),
                    Op::Select(c, a, b) => format!("select {}, {}, {}", v(c), v(a), v(b)),
                    Op::Load(s, a) => format!("load.{} {}", space(f, *s), v(a)),
                    Op::Store(s, a, x) => format!("store.{} {}, {}", space(f, *s), v(a), v(x)),
                    Op::Atomic(op, s, a, x) => {
                        format!("atomic_{:?}.{} {}, {}", op, space(f, *s), v(a), v(x))
                            .to_ascii_lowercase()
                    }
                    Op::Call(i, args) => {
                        let args: Vec<String> = args.iter().map(v).collect();
                        format!("call {}({})", hir::intrinsic_name(*i), args.join(", "))
                    }
                };
                out.push_str(&text);
                if let Some(t) = ty {
                    let _ = write!(out, " : {t}");
                }
                out.push('\n');
            }
            let _ = match &block.term {
                Term::Jump(t) => writeln!(out, "    jump bb{}", t.0),
                Term::Branch(c, a, b) => {
                    writeln!(out, "    branch {}, bb{}, bb{}", name_of(f, *c), a.0, b.0)
                }
                Term::Return => writeln!(out, "    return"),
            };
        }
        out.push_str("}\n");
    }
    out
}

/// For each line of [`print()`]'s text of `funcs`, the source span of the instruction on it
/// (headers, block labels, phis and terminators have none): the previews' line mapping.
pub fn line_spans(funcs: &[Func]) -> Vec<Option<Span>> {
    let mut out = Vec::new();
    for (i, f) in funcs.iter().enumerate() {
        if i > 0 {
            out.push(None);
        }
        out.push(None); // kernel NAME(...) {
        for block in &f.blocks {
            out.push(None); // bbN:
            out.extend(block.phis.iter().map(|_| None));
            out.extend(block.insts.iter().map(|inst| Some(inst.span.clone())));
            out.push(None); // the terminator
        }
        out.push(None); // }
    }
    out
}

fn space(f: &Func, s: Space) -> String {
    match s {
        Space::Device => "device".into(),
        Space::Local => "local".into(),
        Space::Private(v) => match f.private.iter().find(|a| a.var == v) {
            Some(a) => format!("private {}", a.name),
            None => format!("private v{}", v.0),
        },
    }
}

/// Checks the SSA invariants: every value defined once; every use dominated by its
/// definition (a phi's argument at the end of its predecessor); one phi argument per
/// predecessor; branch conditions of type `bool`; targets in range. Returns the problems.
pub fn verify(f: &Func) -> Vec<String> {
    let mut problems = Vec::new();
    let n = f.blocks.len();
    let idom = f.dominators();
    let preds = f.predecessors();
    let mut def_at: HashMap<Value, (BlockId, usize)> = HashMap::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for phi in &block.phis {
            if def_at.insert(phi.dst, (BlockId(b as u32), 0)).is_some() {
                problems.push(format!("%{} is defined twice", phi.dst.0));
            }
        }
        for (i, inst) in block.insts.iter().enumerate() {
            if let Some(d) = inst.dst
                && def_at.insert(d, (BlockId(b as u32), i + 1)).is_some()
            {
                problems.push(format!("%{} is defined twice", d.0));
            }
        }
        for s in block.term.successors() {
            if s.0 as usize >= n {
                problems.push(format!("bb{b} jumps to bb{}, which does not exist", s.0));
            }
        }
    }
    let dominated = |v: Value, b: BlockId, at: usize| -> bool {
        match def_at.get(&v) {
            None => false,
            Some(&(db, di)) if db == b => di <= at,
            Some(&(db, _)) => Func::dominates(&idom, db, b),
        }
    };
    for (b, block) in f.blocks.iter().enumerate() {
        let bid = BlockId(b as u32);
        for phi in &block.phis {
            let mut from: Vec<BlockId> = phi.args.iter().map(|(p, _)| *p).collect();
            from.sort();
            let mut want = preds[b].clone();
            want.sort();
            if from != want {
                problems.push(format!("the phi %{} of bb{b} has arguments from {from:?}, its predecessors are {want:?}", phi.dst.0));
            }
            for (p, v) in &phi.args {
                if !dominated(*v, *p, usize::MAX) {
                    problems.push(format!(
                        "the phi %{} of bb{b} takes %{} from bb{}, which it does not dominate",
                        phi.dst.0, v.0, p.0
                    ));
                }
            }
        }
        for (i, inst) in block.insts.iter().enumerate() {
            for u in inst.op.operands() {
                if !dominated(u, bid, i) {
                    problems.push(format!(
                        "%{} is used in bb{b} where its definition does not dominate",
                        u.0
                    ));
                }
            }
        }
        if let Term::Branch(c, _, _) = &block.term {
            if f.types.get(c.0 as usize) != Some(&Ty::Scalar(Scalar::Bool)) {
                problems.push(format!("bb{b} branches on %{}, which is not a bool", c.0));
            }
            if !dominated(*c, bid, usize::MAX) {
                problems.push(format!(
                    "bb{b} branches on %{}, whose definition does not dominate",
                    c.0
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(src: &str) -> Func {
        let (kernels, d) = crate::hir(src, crate::Language::Python);
        assert!(d.is_empty(), "{d:?}");
        lower(&kernels[0])
    }

    const LOOP: &str = "import wave\n@wave.kernel\ndef k(out: u32[:], n: u32):\n    s = 0\n    i = 0\n    while i < 10:\n        i += 1\n        if i == 3:\n            continue\n        if i > 7:\n            break\n        s += i\n    out[0] = u32(s + i)\n";

    #[test]
    fn the_verifier_accepts_lowered_kernels_and_finds_broken_ones() {
        let f = lowered(LOOP);
        assert_eq!(verify(&f), Vec::<String>::new(), "{}", print(std::slice::from_ref(&f)));
        // Two loop-carried variables: two phis in the header.
        let header = f.blocks.iter().position(|b| b.phis.len() == 2).expect("a loop header");
        assert!(header > 0);
        // A phi argument dropped.
        let mut broken = f.clone();
        broken.blocks[header].phis[0].args.pop();
        assert!(
            verify(&broken).iter().any(|p| p.contains("has arguments from")),
            "{:?}",
            verify(&broken)
        );
        // A use before its definition.
        let mut broken = f.clone();
        let last = broken.blocks.len() - 1;
        let late = broken.blocks[last].insts.iter().find_map(|i| i.dst).expect("a value");
        broken.blocks[0].insts.push(Inst {
            dst: None,
            op: Op::Store(Space::Device, late, late),
            span: 0..0,
        });
        assert!(
            verify(&broken).iter().any(|p| p.contains("does not dominate")),
            "{:?}",
            verify(&broken)
        );
        // A value defined twice.
        let mut broken = f;
        let first = broken.blocks[0].insts[0].clone();
        broken.blocks[0].insts.push(first);
        assert!(verify(&broken).iter().any(|p| p.contains("defined twice")));
    }

    #[test]
    fn a_variable_read_before_any_write_is_zero_and_unreachable_code_is_dropped() {
        let f = lowered(
            "import wave\n@wave.kernel\ndef k(out: f32[:], c: bool):\n    if c:\n        x = 1.5\n    out[0] = x\n    return\n    out[1] = 2.0\n",
        );
        assert!(verify(&f).is_empty());
        let text = print(std::slice::from_ref(&f));
        assert!(
            text.contains("const 0.0 : f32"),
            "x is 0.0 on the path that skips the if:\n{text}"
        );
        assert!(text.contains("= phi f32"), "{text}");
        assert_eq!(
            text.matches("store.device").count(),
            1,
            "the store after return is gone:\n{text}"
        );
    }

    #[test]
    fn local_arrays_are_laid_out_and_addressed_in_local_memory() {
        let f = lowered(
            "import wave\n@wave.kernel\ndef k(out: f32[:]):\n    a = wave.local_array(u32, 3)\n    b = wave.local_array(f64, 2)\n    b[1] = 2.0\n    a[2] = 7\n    wave.barrier()\n    out[0] = f32(b[1])\n",
        );
        assert_eq!(f.local_memory, 16 + 16, "a: 12 bytes, b aligned to 16: 16 bytes");
        let text = print(std::slice::from_ref(&f));
        assert!(text.contains("store.local") && text.contains("load.local"), "{text}");
        assert!(text.contains("const 16 : u32"), "b starts at byte 16:\n{text}");
        assert!(text.contains("call barrier()"), "{text}");
    }

    /// The dominator tree's intervals answer as the walk up the dominators does, for every
    /// pair of blocks of every Python kernel of the kernel set, before and after -O2.
    #[test]
    fn dom_tree_agrees_with_the_walk_up_the_dominators() {
        let sources = [
            include_str!("../../../conformance/kernels/python/divergent_loop.py"),
            include_str!("../../../conformance/kernels/python/sgemm.py"),
            include_str!("../../../conformance/kernels/python/reduction.py"),
            include_str!("../../../conformance/kernels/python/prefix_sum.py"),
        ];
        let mut pairs = 0;
        for source in sources {
            let (kernels, d) = crate::hir(source, crate::Language::Python);
            assert!(!wave_diag::has_errors(&d), "{d:?}");
            for k in &kernels {
                let mut f = lower(k);
                for optimised in [false, true] {
                    if optimised {
                        crate::opt::optimize(&mut f, crate::opt::Level::O2).expect("optimises");
                    }
                    let idom = f.dominators();
                    let tree = DomTree::new(&idom);
                    for a in 0..f.blocks.len() {
                        for b in 0..f.blocks.len() {
                            let (a, b) = (BlockId(a as u32), BlockId(b as u32));
                            assert_eq!(tree.dominates(a, b), Func::dominates(&idom, a, b));
                            pairs += 1;
                        }
                    }
                }
            }
        }
        assert!(pairs > 1000, "{pairs} pairs");
    }
}

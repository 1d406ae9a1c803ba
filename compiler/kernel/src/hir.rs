//! HIR: a kernel as its source wrote it (named variables, structured `if`/`while`/`for`),
//! with every expression typed and every thread-identity expression and intrinsic
//! recognised. Every frontend produces it; nothing after it knows the source language.

use std::fmt::{self, Write as _};

use wave_diag::Span;

/// A scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `bool`.
    Bool,
    /// 32-bit signed.
    I32,
    /// 32-bit unsigned.
    U32,
    /// binary16.
    F16,
    /// binary32.
    F32,
    /// binary64.
    F64,
    /// An unsigned byte: the element of a `u8` buffer only. A load gives a `u32` (zero
    /// extended), a store takes a `u32` and keeps its low byte.
    U8,
    /// An unsigned 16-bit integer, as `U8` for `u16` buffers.
    U16,
}

impl Scalar {
    /// The name in HIR text and in every kernel language's type annotations.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::F16 => "f16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
        }
    }

    /// The scalar named `name`.
    pub fn from_name(name: &str) -> Option<Scalar> {
        [
            Scalar::Bool,
            Scalar::I32,
            Scalar::U32,
            Scalar::F16,
            Scalar::F32,
            Scalar::F64,
            Scalar::U8,
            Scalar::U16,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }

    /// A narrow integer: the element of a buffer only (`u8`, `u16`), loaded as a `u32`.
    pub fn is_narrow(self) -> bool {
        matches!(self, Scalar::U8 | Scalar::U16)
    }

    /// An integer type.
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::U32)
    }

    /// A float type.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32 | Scalar::F64)
    }
}

/// A type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// A scalar.
    Scalar(Scalar),
    /// A buffer of scalars in device memory (a kernel parameter).
    Buffer(Scalar),
    /// An array of `len` scalars in Local Memory, shared by the workgroup.
    Local(Scalar, u32),
    /// An array of `len` scalars private to each thread (zero-filled when the thread
    /// starts): registers where every index is a constant (mem2reg), else a per-thread
    /// frame in Local Memory.
    Private(Scalar, u32),
    /// No value (a statement call).
    Unit,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(s) => f.write_str(s.name()),
            Ty::Buffer(s) => write!(f, "{}[]", s.name()),
            Ty::Local(s, n) => write!(f, "local {}[{n}]", s.name()),
            Ty::Private(s, n) => write!(f, "private {}[{n}]", s.name()),
            Ty::Unit => f.write_str("()"),
        }
    }
}

/// A variable: a parameter or a local.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// Its source name.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Where it is declared.
    pub span: Span,
    /// A parameter (set by the dispatch), or a local.
    pub param: bool,
}

/// An index into [`Kernel::vars`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarId(pub u32);

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (floats) or integer division truncating toward zero (integers).
    Div,
    /// Remainder, with the sign of the dividend.
    Rem,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>` (arithmetic for i32, logical for u32).
    Shr,
    /// Comparisons, giving `bool`.
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// Logical and of two `bool`s (both evaluated: kernels have no side effects in conditions).
    LogicAnd,
    /// Logical or of two `bool`s.
    LogicOr,
}

impl BinOp {
    /// Every operator.
    pub const ALL: [BinOp; 18] = {
        use BinOp::*;
        [Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr, Lt, Le, Gt, Ge, Eq, Ne, LogicAnd, LogicOr]
    };

    /// The operator as HIR text writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::LogicAnd => "&&",
            BinOp::LogicOr => "||",
        }
    }

    /// A comparison (its result is `bool`).
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne)
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation.
    Neg,
    /// Logical not of a `bool`.
    Not,
    /// Bitwise not of an integer.
    BitNot,
}

impl UnOp {
    /// Every variant.
    pub const ALL: [UnOp; 3] = [UnOp::Neg, UnOp::Not, UnOp::BitNot];
}

/// A thread-identity value, bound to a WAVE special register (or computed from them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// The thread's index in its workgroup, dimension 0..3 (`sr_thread_id_*`).
    ThreadId(u8),
    /// The workgroup's index in the grid (`sr_workgroup_id_*`).
    WorkgroupId(u8),
    /// Threads per workgroup (`sr_workgroup_size_*`).
    WorkgroupSize(u8),
    /// Workgroups in the grid (`sr_grid_size_*`).
    GridSize(u8),
    /// The thread's index in the whole grid: workgroup id × size + thread id.
    GlobalId(u8),
    /// The lane in the wave (`sr_lane_id`).
    LaneId,
    /// The wave in the workgroup (`sr_wave_id`).
    WaveId,
    /// W (`sr_wave_width`).
    WaveWidth,
}

impl Special {
    /// The name in HIR text.
    pub fn name(self) -> String {
        let axis = |d: u8| ["x", "y", "z"][usize::from(d.min(2))];
        match self {
            Special::ThreadId(d) => format!("thread_id.{}", axis(d)),
            Special::WorkgroupId(d) => format!("workgroup_id.{}", axis(d)),
            Special::WorkgroupSize(d) => format!("workgroup_size.{}", axis(d)),
            Special::GridSize(d) => format!("grid_size.{}", axis(d)),
            Special::GlobalId(d) => format!("global_id.{}", axis(d)),
            Special::LaneId => "lane_id".into(),
            Special::WaveId => "wave_id".into(),
            Special::WaveWidth => "wave_width".into(),
        }
    }
}

/// An intrinsic: a call the compiler lowers to WAVE instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    /// A workgroup barrier.
    Barrier,
    /// A memory fence.
    Fence,
    /// `atomic_add(buffer, index, value)` and its kin, returning the old value.
    Atomic(AtomicOp),
    /// One of the eleven wave operations.
    Wave(WaveOp),
    /// A math function.
    Math(MathFn),
    /// `min(a, b)`.
    Min,
    /// `max(a, b)`.
    Max,
}

/// Atomic read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// Add.
    Add,
    /// Subtract.
    Sub,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// And.
    And,
    /// Or.
    Or,
    /// Xor.
    Xor,
    /// Exchange.
    Exchange,
}

impl AtomicOp {
    /// Every variant.
    pub const ALL: [AtomicOp; 8] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Exchange,
    ];
}

/// The wave operations of spec 6.11.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaveOp {
    /// `shuffle(v, lane)`.
    Shuffle,
    /// `shuffle_up(v, n)`.
    ShuffleUp,
    /// `shuffle_down(v, n)`.
    ShuffleDown,
    /// `shuffle_xor(v, mask)`.
    ShuffleXor,
    /// `broadcast(v, lane)`.
    Broadcast,
    /// `ballot(cond)`: a mask of the lanes where `cond` holds.
    Ballot,
    /// `any(cond)`.
    Any,
    /// `all(cond)`.
    All,
    /// `reduce_add(v)` (and min, max through [`WaveOp::ReduceMin`], [`WaveOp::ReduceMax`]).
    ReduceAdd,
    /// `reduce_min(v)`.
    ReduceMin,
    /// `reduce_max(v)`.
    ReduceMax,
    /// `prefix_sum(v)`: the inclusive sum over lower lanes.
    PrefixSum,
}

impl WaveOp {
    /// Every variant.
    pub const ALL: [WaveOp; 12] = [
        WaveOp::Shuffle,
        WaveOp::ShuffleUp,
        WaveOp::ShuffleDown,
        WaveOp::ShuffleXor,
        WaveOp::Broadcast,
        WaveOp::Ballot,
        WaveOp::Any,
        WaveOp::All,
        WaveOp::ReduceAdd,
        WaveOp::ReduceMin,
        WaveOp::ReduceMax,
        WaveOp::PrefixSum,
    ];
}

/// Math functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    /// Square root.
    Sqrt,
    /// 1 / sqrt.
    Rsqrt,
    /// Absolute value.
    Abs,
    /// Floor.
    Floor,
    /// Ceiling.
    Ceil,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// 2^x.
    Exp2,
    /// log2.
    Log2,
    /// Fused multiply-add.
    Fma,
    /// e^x: `exp2` of `x · log2 e`, that product carried to twice `f32`'s precision.
    Exp,
    /// The natural logarithm: `log2(x) · ln 2`.
    Log,
    /// The base-10 logarithm: `log2(x) · log10 2`.
    Log10,
    /// The hyperbolic tangent.
    Tanh,
    /// `x` to the power `y` (an integer constant `y`: multiplications).
    Pow,
    /// The number of set bits.
    Popcount,
    /// The number of leading zero bits (32 for zero).
    Clz,
    /// The number of trailing zero bits (32 for zero).
    Ctz,
}

impl MathFn {
    /// Every variant.
    pub const ALL: [MathFn; 18] = [
        MathFn::Sqrt,
        MathFn::Rsqrt,
        MathFn::Abs,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Exp2,
        MathFn::Log2,
        MathFn::Fma,
        MathFn::Exp,
        MathFn::Log,
        MathFn::Log10,
        MathFn::Tanh,
        MathFn::Pow,
        MathFn::Popcount,
        MathFn::Clz,
        MathFn::Ctz,
    ];

    /// Works on integers (else on floats; `abs`, `min`, `max` and `pow` on both).
    pub fn on_integers(self) -> bool {
        matches!(self, MathFn::Popcount | MathFn::Clz | MathFn::Ctz)
    }
}

/// A typed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Its type.
    pub ty: Ty,
    /// Where.
    pub span: Span,
}

/// Expression kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer constant (of an integer type).
    Int(i64),
    /// A float constant (of a float type).
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A variable's value.
    Var(VarId),
    /// `buffer[index]`: a load.
    Load(Box<Expr>, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A conversion to the expression's type.
    Cast(Box<Expr>),
    /// A thread-identity value.
    Special(Special),
    /// An intrinsic call.
    Call(Intrinsic, Vec<Expr>),
    /// `cond ? a : b`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// Statement kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `var = value` (the first assignment declares it).
    Assign(VarId, Expr),
    /// `buffer[index] = value`.
    Store(Expr, Expr, Expr),
    /// `if cond { then } else { otherwise }`.
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `while cond { body }`.
    While(Expr, Vec<Stmt>),
    /// `for var in start..end step step { body }` (step a non-zero constant).
    For {
        /// The induction variable.
        var: VarId,
        /// First value.
        start: Expr,
        /// Bound (exclusive).
        end: Expr,
        /// The step, a constant.
        step: i64,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `return` (the thread ends).
    Return,
    /// An expression for its effect (an intrinsic call).
    Expr(Expr),
}

/// A kernel in HIR.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// Parameters first (in order), then locals.
    pub vars: Vec<Var>,
    /// The body.
    pub body: Vec<Stmt>,
    /// Where the kernel is.
    pub span: Span,
    /// A workgroup size given in the source.
    pub workgroup_size: Option<[u32; 3]>,
}

impl Kernel {
    /// The variable `id`.
    pub fn var(&self, id: VarId) -> &Var {
        &self.vars[id.0 as usize]
    }

    /// The parameters, in order.
    pub fn params(&self) -> impl Iterator<Item = &Var> {
        self.vars.iter().filter(|v| v.param)
    }
}

/// HIR as text: what `wave compile --emit hir` prints and the golden tests compare.
pub fn print(kernels: &[Kernel]) -> String {
    let mut out = String::new();
    for (i, k) in kernels.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let params: Vec<String> = k.params().map(|p| format!("{}: {}", p.name, p.ty)).collect();
        let _ = write!(out, "kernel {}({})", k.name, params.join(", "));
        if let Some([x, y, z]) = k.workgroup_size {
            let _ = write!(out, " workgroup({x}, {y}, {z})");
        }
        out.push_str(" {\n");
        for v in k.vars.iter().filter(|v| !v.param) {
            let _ = writeln!(out, "    let {}: {}", v.name, v.ty);
        }
        block(k, &k.body, 1, &mut out);
        out.push_str("}\n");
    }
    out
}

fn block(k: &Kernel, stmts: &[Stmt], depth: usize, out: &mut String) {
    let pad = "    ".repeat(depth);
    for s in stmts {
        match &s.kind {
            StmtKind::Assign(v, e) => {
                let _ = writeln!(out, "{pad}{} = {}", k.var(*v).name, expr(k, e));
            }
            StmtKind::Store(b, i, v) => {
                let _ = writeln!(out, "{pad}{}[{}] = {}", expr(k, b), expr(k, i), expr(k, v));
            }
            StmtKind::If(c, t, e) => {
                let _ = writeln!(out, "{pad}if {} {{", expr(k, c));
                block(k, t, depth + 1, out);
                if !e.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    block(k, e, depth + 1, out);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            StmtKind::While(c, b) => {
                let _ = writeln!(out, "{pad}while {} {{", expr(k, c));
                block(k, b, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            StmtKind::For { var, start, end, step, body } => {
                let _ = writeln!(
                    out,
                    "{pad}for {} in {}..{} step {step} {{",
                    k.var(*var).name,
                    expr(k, start),
                    expr(k, end)
                );
                block(k, body, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            StmtKind::Break => {
                let _ = writeln!(out, "{pad}break");
            }
            StmtKind::Continue => {
                let _ = writeln!(out, "{pad}continue");
            }
            StmtKind::Return => {
                let _ = writeln!(out, "{pad}return");
            }
            StmtKind::Expr(e) => {
                let _ = writeln!(out, "{pad}{}", expr(k, e));
            }
        }
    }
}

/// An expression as text, fully parenthesised, with its type on casts and constants.
pub fn expr(k: &Kernel, e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => format!("{v}{}", e.ty),
        ExprKind::Float(v) => format!("{v:?}{}", e.ty),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Var(v) => k.var(*v).name.clone(),
        ExprKind::Load(b, i) => format!("{}[{}]", expr(k, b), expr(k, i)),
        ExprKind::Binary(op, a, b) => format!("({} {} {})", expr(k, a), op.symbol(), expr(k, b)),
        ExprKind::Unary(op, a) => {
            let sym = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
            };
            format!("{sym}{}", expr(k, a))
        }
        ExprKind::Cast(a) => format!("{}({})", e.ty, expr(k, a)),
        ExprKind::Special(s) => s.name(),
        ExprKind::Call(i, args) => {
            let args: Vec<String> = args.iter().map(|a| expr(k, a)).collect();
            format!("{}({})", intrinsic_name(*i), args.join(", "))
        }
        ExprKind::Select(c, a, b) => {
            format!("select({}, {}, {})", expr(k, c), expr(k, a), expr(k, b))
        }
    }
}

/// The name of an intrinsic in HIR text.
pub fn intrinsic_name(i: Intrinsic) -> String {
    match i {
        Intrinsic::Barrier => "barrier".into(),
        Intrinsic::Fence => "fence".into(),
        Intrinsic::Atomic(op) => format!("atomic_{}", format!("{op:?}").to_ascii_lowercase()),
        Intrinsic::Wave(op) => format!("wave.{}", snake(&format!("{op:?}"))),
        Intrinsic::Math(f) => snake(&format!("{f:?}")),
        Intrinsic::Min => "min".into(),
        Intrinsic::Max => "max".into(),
    }
}

fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

//! The surface syntax every frontend produces: a kernel as its language wrote it, with names
//! still names and nothing typed. Each frontend only translates its tree-sitter tree into
//! this (recognising its spelling of each construct: `x as f32`, `(float)x` and `f32(x)` are
//! all a [`ExprKind::Cast`]); [`super::typer`] then types it into HIR under the
//! [`Dialect`]'s few rules, so that the types, the intrinsics, the scoping, helper inlining
//! and the diagnostics are one piece of code for all four languages.

use wave_diag::Span;

use crate::hir::Scalar;

/// A function of the file: a kernel, or a helper inlined where it is called.
#[derive(Clone, Debug)]
pub struct Func {
    /// Its name.
    pub name: String,
    /// Where its name is.
    pub name_span: Span,
    /// The whole definition (with its attributes or decorators).
    pub span: Span,
    /// A kernel (else a helper).
    pub kernel: bool,
    /// The workgroup size its attribute gives, with where the attribute is.
    pub workgroup: Option<([u32; 3], Span)>,
    /// The type parameters of a C++ function template.
    pub generics: Vec<String>,
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// The body.
    pub body: Vec<Stmt>,
    /// What reading it found wrong (syntax errors and unsupported constructs inside it):
    /// reported for a kernel, and for a helper only where a kernel calls it.
    pub diagnostics: Vec<wave_diag::Diagnostic>,
    /// A module-level constant (`TILE = 16`, `const TILE: u32 = 16;`, `constexpr`, a
    /// top-level `const`), with its declared type where written: its body is one `return`
    /// of its value, which a use of its name anywhere in the file stands for (typed where it
    /// is used, so that an untyped `TILE = 16` takes the type the context wants, like the
    /// literal).
    pub constant: Option<Option<TypeRef>>,
}

impl Func {
    /// A module-level constant `name` (declared type `ty`) of value `value`; `span` is the
    /// whole declaration.
    pub fn constant(
        name: String,
        name_span: Span,
        ty: Option<TypeRef>,
        value: Expr,
        span: Span,
    ) -> Func {
        let at = value.span.clone();
        Func {
            name,
            name_span,
            span,
            kernel: false,
            workgroup: None,
            generics: Vec::new(),
            params: Vec::new(),
            body: vec![Stmt { kind: StmtKind::Return(Some(value)), span: at }],
            diagnostics: Vec::new(),
            constant: Some(ty),
        }
    }
}

/// A parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Where its name is.
    pub span: Span,
    /// Its type, where written.
    pub ty: Option<TypeRef>,
    /// The whole parameter (for messages about a missing type).
    pub whole: Span,
    /// The body may assign it (not a Rust parameter without `mut`, nor a C++ `const` one).
    pub mutable: bool,
}

/// A type as written.
#[derive(Clone, Debug)]
pub struct TypeRef {
    /// What it names.
    pub kind: TypeKind,
    /// Where.
    pub span: Span,
}

/// What a written type names.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// A scalar type.
    Scalar(Scalar),
    /// A buffer of scalars; `writable` unless declared read-only (`&[f32]`, `const float*`).
    Buffer {
        /// The element type.
        elem: Scalar,
        /// Stores and atomics are allowed.
        writable: bool,
    },
    /// A type parameter of a function template (`T`).
    Generic(String),
    /// A type the language has and kernels do not: its text, and what to write instead.
    Unknown(String),
}

impl Stmt {
    /// The names this statement declares (what a mistake in it leaves undeclared).
    pub fn declares(&self) -> Vec<&str> {
        match &self.kind {
            StmtKind::Let { name, .. } | StmtKind::Array { name, .. } => vec![name.as_str()],
            StmtKind::Assign { target: Expr { kind: ExprKind::Name(name), .. }, .. } => {
                vec![name.as_str()]
            }
            StmtKind::Seq(stmts) => stmts.iter().flat_map(Stmt::declares).collect(),
            _ => Vec::new(),
        }
    }
}

/// A statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// Statement kinds.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// A new variable (`let x: f32 = e;`, `float x = e;`, `const x: u32 = e`): it shadows an
    /// earlier one of the name. Without a value it starts at zero.
    Let {
        /// Its name.
        name: String,
        /// Where the name is.
        name_span: Span,
        /// The declared type (`auto` and an inferred `let` have none).
        ty: Option<TypeRef>,
        /// The first value.
        value: Option<Expr>,
        /// Assignments after the declaration are allowed (`let mut`, `let`; not `const`).
        mutable: bool,
    },
    /// `target = value`, or `target op= value`. In Python, assigning a name that does not
    /// exist declares it (with `annotation` as its type where written).
    Assign {
        /// A name or an element.
        target: Expr,
        /// The operator of a compound assignment.
        op: Option<(Op, String)>,
        /// The value.
        value: Expr,
        /// Python's `x: f32 = e`.
        annotation: Option<TypeRef>,
    },
    /// An array in Local Memory shared by the workgroup, or private to each thread.
    Array {
        /// Its name.
        name: String,
        /// Where the name is.
        name_span: Span,
        /// Local (shared) or private.
        local: bool,
        /// The element type.
        elem: TypeRef,
        /// The length, a constant (the number of rows of a 2D array).
        len: Expr,
        /// The number of columns of a 2D array (`t[i][j]` is element `i · columns + j`).
        columns: Option<Expr>,
    },
    /// `if cond { then } else { otherwise }`.
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `while cond { body }`.
    While(Expr, Vec<Stmt>),
    /// `do { body } while (cond)`.
    DoWhile(Vec<Stmt>, Expr),
    /// A counted loop: `for var in start..end` stepping by `step` (a non-zero constant);
    /// the bound is tested (`<`, or `>` for a negative step) before every iteration.
    For {
        /// The counter.
        var: String,
        /// Where the counter is named.
        var_span: Span,
        /// Its declared type, where written.
        ty: Option<TypeRef>,
        /// A new variable scoped to the loop (else, in Python, an assignment to the name).
        declare: bool,
        /// The first value (zero when absent: `range(n)`).
        start: Option<Expr>,
        /// The bound.
        end: Expr,
        /// The step: a non-zero constant (a literal, a module constant, arithmetic on them),
        /// positive where `positive` (Rust's `step_by`).
        step: Expr,
        /// The body.
        body: Vec<Stmt>,
    },
    /// A nested block with its own scope.
    Block(Vec<Stmt>),
    /// Statements of the enclosing block, in its scope (`let (a, b) = (x, y);` declares two
    /// names there).
    Seq(Vec<Stmt>),
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `return`, with a value in a helper.
    Return(Option<Expr>),
    /// An expression for its effect.
    Expr(Expr),
}

/// An expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// Expression kinds.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal, with the type its suffix gives (`16u32`, `16u`).
    Int(i64, Option<Scalar>),
    /// A float literal, with the type its suffix gives (`0.5f32`, `0.5f`; C++'s unsuffixed
    /// `0.5` is a `double`).
    Float(f64, Option<Scalar>),
    /// `true` or `false`.
    Bool(bool),
    /// A name.
    Name(String),
    /// `base[index]`.
    Index(Box<Expr>, Box<Expr>),
    /// A binary operation, with the operator as written.
    Binary(Op, String, Box<Expr>, Box<Expr>),
    /// A unary operation, with the operator as written.
    Unary(UnaryOp, String, Box<Expr>),
    /// `cond ? a : b`, `a if cond else b`, `if cond { a } else { b }`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A call: an intrinsic by its canonical name (`thread_id`, `atomic_add`, `sqrt`,
    /// `shuffle_xor`, the Python spellings), or a helper of the file.
    Call {
        /// The canonical name.
        name: String,
        /// The callee as written (for messages).
        callee: String,
        /// Where the callee is.
        callee_span: Span,
        /// The arguments (a method's receiver first).
        args: Vec<Expr>,
        /// Explicit template arguments (`square<float>(x)`).
        types: Vec<TypeRef>,
    },
    /// A written conversion: `f32(x)`, `x as f32`, `(float)x`, `wave.f32(x)`.
    Cast(TypeRef, Box<Expr>),
    /// Something the frontend already reported.
    Error,
}

/// Binary operators as the languages write them, before typing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`: float division; integer division where the dialect allows it.
    Div,
    /// Python's `//`: integer division.
    IntDiv,
    /// `%`
    Rem,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// TypeScript's `>>>` (on `u32`).
    UShr,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`, `===`
    Eq,
    /// `!=`, `!==`
    Ne,
    /// `and`, `&&`
    And,
    /// `or`, `||`
    Or,
    /// `**`: a power.
    Pow,
}

impl Op {
    /// The operator of `text` in C-like languages and Python.
    pub fn from_text(text: &str) -> Option<Op> {
        Some(match text {
            "+" => Op::Add,
            "-" => Op::Sub,
            "*" => Op::Mul,
            "/" => Op::Div,
            "//" => Op::IntDiv,
            "%" => Op::Rem,
            "&" => Op::BitAnd,
            "|" => Op::BitOr,
            "^" => Op::BitXor,
            "<<" => Op::Shl,
            ">>" => Op::Shr,
            ">>>" => Op::UShr,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "==" | "===" => Op::Eq,
            "!=" | "!==" => Op::Ne,
            "and" | "&&" => Op::And,
            "or" | "||" => Op::Or,
            "**" => Op::Pow,
            _ => return None,
        })
    }
}

/// Unary operators before typing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-`
    Neg,
    /// `+` (nothing).
    Plus,
    /// Logical not (`not`, `!` in C++ and TypeScript).
    Not,
    /// Bitwise not (`~`).
    BitNot,
    /// Rust's `!`: logical on `bool`, bitwise on integers.
    NotOrBitNot,
}

impl Expr {
    /// An expression.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    /// A literal number (or a negated one) without a suffix: it takes the type the context
    /// wants.
    pub fn is_literal(&self) -> bool {
        match &self.kind {
            ExprKind::Int(_, None) | ExprKind::Float(_, None) => true,
            ExprKind::Unary(UnaryOp::Neg | UnaryOp::Plus, _, a) => a.is_literal(),
            _ => false,
        }
    }
}

/// How a language's rules differ from the shared ones (`docs/kernels.md`, "The kernel
/// language").
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// The language.
    pub language: crate::Language,
    /// Names live in blocks (`let`, declarations); in Python, in the whole function.
    pub block_scopes: bool,
    /// `/` divides integers too (Rust, C++); in Python and TypeScript it divides floats.
    pub int_slash: bool,
    /// Implicit conversions between operands and into typed places.
    pub conversions: Conversions,
    /// The type of a float literal nothing constrains.
    pub float_default: Scalar,
}

/// Which implicit conversions a language makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversions {
    /// None: every conversion is written (Python, Rust).
    None,
    /// C++'s usual arithmetic conversions between operands; a narrowing one into a typed
    /// place is E0401 unless written.
    Cpp,
    /// TypeScript: `number` (f64) absorbs the narrower types; narrowing is written.
    TypeScript,
}

impl Dialect {
    /// Python.
    pub const PYTHON: Dialect = Dialect {
        language: crate::Language::Python,
        block_scopes: false,
        int_slash: false,
        conversions: Conversions::None,
        float_default: Scalar::F32,
    };
    /// Rust.
    pub const RUST: Dialect = Dialect {
        language: crate::Language::Rust,
        block_scopes: true,
        int_slash: true,
        conversions: Conversions::None,
        float_default: Scalar::F32,
    };
    /// C++.
    pub const CPP: Dialect = Dialect {
        language: crate::Language::Cpp,
        block_scopes: true,
        int_slash: true,
        conversions: Conversions::Cpp,
        float_default: Scalar::F64,
    };
    /// TypeScript.
    pub const TYPESCRIPT: Dialect = Dialect {
        language: crate::Language::TypeScript,
        block_scopes: true,
        int_slash: false,
        conversions: Conversions::TypeScript,
        float_default: Scalar::F64,
    };

    /// How this language writes a conversion of `what` to `to`.
    pub fn cast(&self, to: Scalar, what: &str) -> String {
        match self.language {
            crate::Language::Python => format!("{}({what})", to.name()),
            crate::Language::Rust => format!("{what} as {}", to.name()),
            crate::Language::Cpp => format!("({}){what}", cpp_name(to)),
            crate::Language::TypeScript => match to {
                Scalar::F64 => format!("Number({what})"),
                _ => format!("wave.{}({what})", to.name()),
            },
        }
    }
}

/// The C++ spelling of a scalar type.
pub fn cpp_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "bool",
        Scalar::I32 => "int32_t",
        Scalar::U32 => "uint32_t",
        Scalar::F16 => "half",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
        Scalar::U8 => "uint8_t",
        Scalar::U16 => "uint16_t",
    }
}

/// `threadId` → `thread_id`: TypeScript's camelCase names of the intrinsics.
pub fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `body` calls the function `name` somewhere (by the name as written: a helper's name).
pub fn calls(body: &[Stmt], name: &str) -> bool {
    fn expr(e: &Expr, name: &str) -> bool {
        match &e.kind {
            ExprKind::Index(a, b) | ExprKind::Binary(_, _, a, b) => expr(a, name) || expr(b, name),
            ExprKind::Unary(_, _, a) | ExprKind::Cast(_, a) => expr(a, name),
            ExprKind::Cond(c, a, b) => expr(c, name) || expr(a, name) || expr(b, name),
            ExprKind::Call { callee, args, .. } => {
                callee == name || args.iter().any(|a| expr(a, name))
            }
            ExprKind::Int(..)
            | ExprKind::Float(..)
            | ExprKind::Bool(_)
            | ExprKind::Name(_)
            | ExprKind::Error => false,
        }
    }
    let opt = |e: &Option<Expr>| e.as_ref().is_some_and(|e| expr(e, name));
    body.iter().any(|s| match &s.kind {
        StmtKind::Let { value, .. } => opt(value),
        StmtKind::Assign { target, value, .. } => expr(target, name) || expr(value, name),
        StmtKind::Array { len, columns, .. } => expr(len, name) || opt(columns),
        StmtKind::If(c, a, b) => expr(c, name) || calls(a, name) || calls(b, name),
        StmtKind::While(c, b) | StmtKind::DoWhile(b, c) => expr(c, name) || calls(b, name),
        StmtKind::For { start, end, step, body, .. } => {
            opt(start) || expr(end, name) || expr(step, name) || calls(body, name)
        }
        StmtKind::Block(b) | StmtKind::Seq(b) => calls(b, name),
        StmtKind::Return(v) => opt(v),
        StmtKind::Expr(e) => expr(e, name),
        StmtKind::Break | StmtKind::Continue => false,
    })
}

/// `body` has a `continue` of its own loop (not of a loop inside it).
pub fn continues(body: &[Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Continue => true,
        StmtKind::If(_, a, b) => continues(a) || continues(b),
        StmtKind::Block(b) | StmtKind::Seq(b) => continues(b),
        _ => false,
    })
}

/// `targets[k] = values[k]` for each `k`, every value computed before the first assignment
/// (`x, y = y, x`; through a temporary, `tuple.N`, where it is not a literal), or, with one
/// value, every target assigned that value in turn (`x = y = 0`). `declare`: the temporaries
/// are `let`s (languages with block scopes; the block keeps them to itself), else Python's
/// assignments.
pub fn assign_all(targets: Vec<Expr>, values: Vec<Expr>, span: &Span, declare: bool) -> StmtKind {
    let mut out = Vec::new();
    let one = values.len() == 1 && targets.len() > 1;
    let mut fixed = Vec::new();
    for v in values {
        // (With one value for several targets, a name needs no temporary either: it is read
        // before each assignment, and only the targets change.)
        let constant =
            matches!(v.kind, ExprKind::Int(..) | ExprKind::Float(..) | ExprKind::Bool(_));
        if v.is_literal() || constant || (one && matches!(v.kind, ExprKind::Name(_))) {
            fixed.push(v);
            continue;
        }
        let name = format!("tuple.{}", span.start + fixed.len());
        let at = v.span.clone();
        let kind = if declare {
            StmtKind::Let {
                name: name.clone(),
                name_span: at.clone(),
                ty: None,
                value: Some(v),
                mutable: false,
            }
        } else {
            StmtKind::Assign {
                target: Expr::new(ExprKind::Name(name.clone()), at.clone()),
                op: None,
                value: v,
                annotation: None,
            }
        };
        out.push(Stmt { kind, span: at.clone() });
        fixed.push(Expr::new(ExprKind::Name(name), at));
    }
    for (k, target) in targets.into_iter().enumerate() {
        let Some(value) = fixed.get(if one { 0 } else { k }).cloned() else { break };
        out.push(Stmt {
            kind: StmtKind::Assign { target, op: None, value, annotation: None },
            span: span.clone(),
        });
    }
    StmtKind::Block(out)
}

/// Every span in `e` moved by `at` (an expression parsed from another text).
pub fn respan(e: &mut Expr, at: &dyn Fn(usize) -> usize) {
    e.span = at(e.span.start)..at(e.span.end);
    match &mut e.kind {
        ExprKind::Index(a, b) | ExprKind::Binary(_, _, a, b) => {
            respan(a, at);
            respan(b, at);
        }
        ExprKind::Unary(_, _, a) => respan(a, at),
        ExprKind::Cond(c, a, b) => {
            respan(c, at);
            respan(a, at);
            respan(b, at);
        }
        ExprKind::Call { callee_span, args, types, .. } => {
            *callee_span = at(callee_span.start)..at(callee_span.end);
            for a in args {
                respan(a, at);
            }
            for t in types {
                t.span = at(t.span.start)..at(t.span.end);
            }
        }
        ExprKind::Cast(t, a) => {
            t.span = at(t.span.start)..at(t.span.end);
            respan(a, at);
        }
        ExprKind::Int(..)
        | ExprKind::Float(..)
        | ExprKind::Bool(_)
        | ExprKind::Name(_)
        | ExprKind::Error => {}
    }
}

//! Random well-typed kernels, the same program written in Python, Rust, C++ and TypeScript:
//! the generator of `compiler/kernel/tests/differential.rs` and of the `differential` fuzz
//! target (`compiler/fuzz`).
//!
//! A seed gives a [`Program`]: a kernel `k(inp, inb, out, fout)` and a helper `hf`, as a small
//! tree of typed statements and expressions ([`Stmt`], [`Expr`]) that [`Program::source`]
//! prints in each language with every type written (`i32(5)`, `5i32`, `(int32_t)5`,
//! `wave.i32(5)`), so that the four texts mean the same computation under each language's
//! rules. What it holds: `i32`, `u32`, `f32`, `f16` and (in a third of the kernels) `f64`
//! arithmetic and conversions, nested `if`/`elif`/`else`, counted and `while` loops with
//! `break` and `continue`, early `return`s, loads that step with a loop counter and their
//! neighbours (`inp[j]`, `inp[j + 1]`, `inp[2 j + c]`), several accumulators in one loop, a
//! private array, a local array written before a barrier and read after it, bytes read from
//! a `u8` view of the input, wave operations (reductions and prefix sums on integers and
//! floats anywhere, shuffles and broadcasts where every lane runs), `exp`, `tanh`, `pow`,
//! bit counts, and calls of a helper that returns early.
//!
//! Every operation is defined for every input: divisors are `(x & 7) + 1`, shift counts are
//! masked, float-to-integer conversions are clamped first, indices are masked into their
//! buffers, and loops are bounded.

use std::fmt::Write as _;

/// A kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// Python (`.py`).
    Python,
    /// Rust (`.rs`).
    Rust,
    /// C++ (`.cpp`).
    Cpp,
    /// TypeScript (`.ts`).
    TypeScript,
}

impl Lang {
    /// Every language.
    pub const ALL: [Lang; 4] = [Lang::Python, Lang::Rust, Lang::Cpp, Lang::TypeScript];

    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Lang::Python => "py",
            Lang::Rust => "rs",
            Lang::Cpp => "cpp",
            Lang::TypeScript => "ts",
        }
    }
}

/// The byte offsets of the kernel's buffers in device memory, and its size.
pub mod layout {
    /// `inp`: 64 `i32` inputs (also read as bytes through `inb`).
    pub const INP: usize = 0;
    /// `out`: 8 `i32` results per thread.
    pub const OUT: usize = 256;
    /// `fout`: 2 `f32` results per thread.
    pub const FOUT: usize = OUT + 64 * 8 * 4;
    /// All of it.
    pub const SIZE: usize = FOUT + 64 * 2 * 4;
    /// Workgroups of 32 threads.
    pub const GRID: u32 = 2;
}

/// A small random number generator (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next_u64() >> 33) as u32 % n.max(1)
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}

/// The input words for a seed: 64 values from -1000 to 1000.
pub fn inputs(seed: u64) -> Vec<i32> {
    let mut rng = Rng(seed | 1);
    (0..64).map(|_| rng.below(2001) as i32 - 1000).collect()
}

/// A value type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum T {
    /// `i32`.
    I,
    /// `u32`.
    U,
    /// `f32`.
    F,
    /// `f16`.
    H,
    /// `f64`.
    D,
    /// `bool`.
    B,
}

/// An expression, typed.
#[derive(Clone, Debug)]
pub enum Expr {
    /// An integer constant of the type.
    Int(T, i64),
    /// A float constant of the type (a few significant bits).
    Float(T, f64),
    /// `true` or `false`.
    Bool(bool),
    /// A variable.
    Var(String, T),
    /// `inp[index]` (an `i32`).
    Inp(Box<Expr>),
    /// `inb[index]`: a byte of the input, as a `u32`.
    Inb(Box<Expr>),
    /// `pa[index]`, the private `i32` array of 4.
    Pa(Box<Expr>),
    /// `tile[index]`, the local `i32` array of 64.
    Tile(Box<Expr>),
    /// `a op b` of one type.
    Bin(&'static str, T, Box<Expr>, Box<Expr>),
    /// Integer division (the divisor is never 0).
    Div(T, Box<Expr>, Box<Expr>),
    /// `a op b` comparing values of a type.
    Cmp(&'static str, T, Box<Expr>, Box<Expr>),
    /// `a and b` (`true`) or `a or b`.
    Logic(bool, Box<Expr>, Box<Expr>),
    /// `not a`.
    Not(Box<Expr>),
    /// `-a`.
    Neg(T, Box<Expr>),
    /// A conversion to the type.
    Cast(T, Box<Expr>),
    /// `c ? a : b`.
    Cond(T, Box<Expr>, Box<Expr>, Box<Expr>),
    /// `min` (`true`) or `max` of two values.
    MinMax(bool, T, Box<Expr>, Box<Expr>),
    /// A math function of a float (or `abs` of any number): its canonical name.
    Math(&'static str, T, Vec<Expr>),
    /// A bit count of a `u32` (`popcount`, `clz`, `ctz`), as a `u32`.
    Bits(&'static str, Box<Expr>),
    /// A wave operation of a value of the type (`reduce_add`, `reduce_min`, `reduce_max`,
    /// `prefix_sum`, `shuffle_xor`, `broadcast`), with its lane argument for the last two.
    Wave(&'static str, T, Box<Expr>, Option<u32>),
    /// `any` (`true`) or `all` of a condition.
    Vote(bool, Box<Expr>),
    /// `hf(i, x)`, the helper (an `i32`).
    Call(Box<Expr>, Box<Expr>),
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `name = value` or `name op= value`.
    Assign(String, Option<&'static str>, Expr),
    /// `out[t * 8 + slot] = value` (`slot` a `u32` from 0 to 7).
    Out(Expr, Expr),
    /// `pa[index] = value` or `pa[index] += value`.
    Pa(Expr, bool, Expr),
    /// `if c { a } elif c2 { b } else { c }`.
    If(Expr, Vec<Stmt>, Option<(Expr, Vec<Stmt>)>, Option<Vec<Stmt>>),
    /// `for k in 0..hi` (`k` a `u32`).
    For(String, Expr, Vec<Stmt>),
    /// `w = 0; while w < bound and c { w += 1; body }` (`w` a `u32`).
    While(String, u32, Expr, Vec<Stmt>),
    /// `if c { [name = value;] break }` (`true`) or `continue`.
    Leave(Expr, Option<(String, Expr)>, bool),
    /// `if c { out[t * 8 + 7] = 12345; return }`.
    Return(Expr),
    /// The helper's `return value`.
    Give(Expr),
}

/// A kernel and its helper.
#[derive(Clone, Debug)]
pub struct Program {
    /// The kernel has the `f64` variable `g`.
    pub doubles: bool,
    /// The kernel's body after its fixed prologue.
    pub body: Vec<Stmt>,
    /// The helper `hf(p: i32, q: f32) -> i32`'s body.
    pub helper: Vec<Stmt>,
}

/// What a generated kernel may hold.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// An `f64` variable (kernels squeezed into few registers leave it out: `f64` values are
    /// not spilled).
    pub doubles: bool,
    /// The private array indexed by computed values (else by constants and counters only,
    /// which mem2reg promotes once loops are unrolled).
    pub computed_index: bool,
    /// How deep statements nest (3 by default; fewer makes smaller kernels).
    pub depth: u32,
}

impl Options {
    /// What a seed gives: an `f64` variable in a third of the kernels, computed private
    /// indices in half.
    pub fn for_seed(seed: u64) -> Options {
        Options {
            doubles: seed.is_multiple_of(3),
            computed_index: seed.is_multiple_of(2),
            depth: 3,
        }
    }
}

/// The kernel's variables, with their types (`g` only with `doubles`).
const VARS: [(&str, T); 9] = [
    ("a", T::I),
    ("b", T::I),
    ("c", T::I),
    ("u", T::U),
    ("v", T::U),
    ("x", T::F),
    ("y", T::F),
    ("h", T::H),
    ("g", T::D),
];

/// Where an expression is made: what it may read.
#[derive(Clone)]
struct Scope {
    /// Variables it may read and assign.
    vars: Vec<(String, T)>,
    /// Loop counters in scope (`u32`, never assigned).
    counters: Vec<String>,
    /// Inside the helper (no buffers, no wave operations, no calls).
    helper: bool,
    /// Helper calls allowed (not in a `while` condition, which a helper call would run once).
    calls: bool,
}

struct Gen {
    rng: Rng,
    options: Options,
    loops: u32,
    next: u32,
}

fn bx(e: Expr) -> Box<Expr> {
    Box::new(e)
}

impl Gen {
    fn pick<'a, X>(&mut self, xs: &'a [X]) -> &'a X {
        &xs[self.rng.below(xs.len() as u32) as usize]
    }

    fn numeric(&mut self, with: &[T]) -> T {
        let mut ts = with.to_vec();
        if self.options.doubles {
            ts.push(T::D);
        }
        *self.pick(&ts)
    }

    fn literal(&mut self, t: T) -> Expr {
        let frac = [0.0, 0.25, 0.5, 0.75][self.rng.below(4) as usize];
        match t {
            T::I => Expr::Int(t, i64::from(self.rng.below(41)) - 20),
            T::U => Expr::Int(t, i64::from(self.rng.below(50))),
            T::F | T::H | T::D => Expr::Float(t, f64::from(self.rng.below(9)) + frac),
            T::B => Expr::Bool(self.rng.chance(50)),
        }
    }

    fn var(&mut self, t: T, s: &Scope) -> Expr {
        let mut options: Vec<Expr> =
            s.vars.iter().filter(|v| v.1 == t).map(|(n, t)| Expr::Var(n.clone(), *t)).collect();
        if t == T::U {
            options.extend(s.counters.iter().map(|k| Expr::Var(k.clone(), T::U)));
        }
        if t == T::I {
            options.extend(
                s.counters.iter().map(|k| Expr::Cast(T::I, bx(Expr::Var(k.clone(), T::U)))),
            );
        }
        if options.is_empty() {
            return self.literal(t);
        }
        let k = self.rng.below(options.len() as u32) as usize;
        options.swap_remove(k)
    }

    fn counter(&mut self, s: &Scope) -> Option<Expr> {
        if s.counters.is_empty() {
            return None;
        }
        let k = self.pick(&s.counters).clone();
        Some(Expr::Var(k, T::U))
    }

    /// `u32` masked into `0..=mask`.
    fn masked(e: Expr, mask: i64) -> Expr {
        Expr::Bin("&", T::U, bx(e), bx(Expr::Int(T::U, mask)))
    }

    fn t() -> Expr {
        Expr::Var("t".into(), T::U)
    }

    /// An index of `pa`.
    fn private_index(&mut self, s: &Scope) -> Expr {
        match self.rng.below(10) {
            4..=6 if !s.counters.is_empty() => {
                let k = self.counter(s).unwrap_or(Expr::Int(T::U, 0));
                Self::masked(k, 3)
            }
            7..=9 if self.options.computed_index => {
                let e = self.expr(T::I, 1, s);
                Self::masked(Expr::Cast(T::U, bx(e)), 3)
            }
            _ => Expr::Int(T::U, i64::from(self.rng.below(4))),
        }
    }

    /// A leaf of type `t`.
    fn leaf(&mut self, t: T, s: &Scope) -> Expr {
        let c = self.rng.below(12);
        if s.helper {
            return if c < 3 { self.literal(t) } else { self.var(t, s) };
        }
        match (t, c) {
            (T::B, 0) => self.literal(T::B),
            (T::B, _) => {
                let ct = self.numeric(&[T::I, T::U, T::F, T::H]);
                let op = *self.pick(&["<", "<=", ">", ">=", "==", "!="]);
                let l = self.var(ct, s);
                let r = if self.rng.chance(50) { self.literal(ct) } else { self.var(ct, s) };
                Expr::Cmp(op, ct, bx(l), bx(r))
            }
            (T::I, 0) => {
                let i = Expr::Bin("+", T::U, bx(Self::t()), bx(Expr::Int(T::U, 3)));
                Expr::Inp(bx(Self::masked(i, 63)))
            }
            (T::I, 1) if !s.counters.is_empty() => {
                // An address that steps with a loop counter, and its neighbours: what
                // stencils, dot products and interleaved data read (`a[j]`, `a[j + 1]`,
                // `a[2 j + c]`), which strength reduction gives pointers of their own.
                let k = self.counter(s).unwrap_or(Expr::Int(T::U, 0));
                let base = |m: i64| Self::masked(Self::t(), m);
                let idx = match self.rng.below(4) {
                    0 | 1 => Expr::Bin("+", T::U, bx(base(31)), bx(k)),
                    2 => {
                        let step = Expr::Int(T::U, 1 + i64::from(self.rng.below(2)));
                        let at = Expr::Bin("+", T::U, bx(base(31)), bx(k));
                        Expr::Bin("+", T::U, bx(at), bx(step))
                    }
                    _ => {
                        let twice = Expr::Bin("*", T::U, bx(k), bx(Expr::Int(T::U, 2)));
                        let at = Expr::Bin("+", T::U, bx(base(15)), bx(twice));
                        Expr::Bin(
                            "+",
                            T::U,
                            bx(at),
                            bx(Expr::Int(T::U, i64::from(self.rng.below(2)))),
                        )
                    }
                };
                Expr::Inp(bx(idx))
            }
            (T::I, 1) => {
                let v = self.var(T::I, s);
                Expr::Inp(bx(Self::masked(Expr::Cast(T::U, bx(v)), 63)))
            }
            (T::I, 2) => {
                let i = self.private_index(s);
                Expr::Pa(bx(i))
            }
            (T::I, 3) => {
                let i = Expr::Bin(
                    "^",
                    T::U,
                    bx(Self::t()),
                    bx(Expr::Int(T::U, i64::from(self.rng.below(64)))),
                );
                Expr::Tile(bx(Self::masked(i, 63)))
            }
            (T::U, 0) => Self::t(),
            (T::U, 1) => {
                let i = Expr::Bin("*", T::U, bx(Self::t()), bx(Expr::Int(T::U, 3)));
                Expr::Inb(bx(Self::masked(i, 255)))
            }
            (T::F, 0) => {
                let i = Expr::Bin("^", T::U, bx(Self::t()), bx(Expr::Int(T::U, 5)));
                Expr::Cast(T::F, bx(Expr::Inp(bx(Self::masked(i, 63)))))
            }
            (T::H, 0) => {
                let i = Expr::Bin("^", T::U, bx(Self::t()), bx(Expr::Int(T::U, 6)));
                let byte = Expr::Bin(
                    "&",
                    T::I,
                    bx(Expr::Inp(bx(Self::masked(i, 63)))),
                    bx(Expr::Int(T::I, 255)),
                );
                Expr::Cast(T::H, bx(byte))
            }
            (T::D, 0) => {
                let i = Expr::Bin("^", T::U, bx(Self::t()), bx(Expr::Int(T::U, 7)));
                Expr::Cast(T::D, bx(Expr::Inp(bx(Self::masked(i, 63)))))
            }
            (_, 4 | 5) => self.literal(t),
            _ => self.var(t, s),
        }
    }

    fn expr(&mut self, t: T, depth: u32, s: &Scope) -> Expr {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(t, s);
        }
        let d = depth - 1;
        let two = |g: &mut Gen, op: &'static str| {
            let (a, b) = (g.expr(t, d, s), g.expr(t, d, s));
            Expr::Bin(op, t, bx(a), bx(b))
        };
        match t {
            T::I | T::U => match self.rng.below(18) {
                0 => two(self, "+"),
                1 => two(self, "-"),
                2 => two(self, "*"),
                3 => two(self, "&"),
                4 => two(self, "|"),
                5 => two(self, "^"),
                6 | 7 => {
                    // A divisor that is never zero (and never -1, so no MIN / -1).
                    let n = self.expr(t, d, s);
                    let m = self.expr(t, d, s);
                    let mask = if self.rng.chance(50) { 7 } else { 15 };
                    let div = Expr::Bin(
                        "+",
                        t,
                        bx(Expr::Bin("&", t, bx(n), bx(Expr::Int(t, mask)))),
                        bx(Expr::Int(t, 1)),
                    );
                    if self.rng.chance(50) {
                        Expr::Div(t, bx(m), bx(div))
                    } else {
                        Expr::Bin("%", t, bx(m), bx(div))
                    }
                }
                8 => {
                    let (a, b) = (self.expr(t, d, s), self.expr(t, d, s));
                    Expr::Bin("<<", t, bx(a), bx(Expr::Bin("&", t, bx(b), bx(Expr::Int(t, 7)))))
                }
                9 => {
                    let (a, b) = (self.expr(t, d, s), self.expr(t, d, s));
                    Expr::Bin(">>", t, bx(a), bx(Expr::Bin("&", t, bx(b), bx(Expr::Int(t, 15)))))
                }
                10 => {
                    let from = self.numeric(&[T::I, T::U, T::F, T::H]);
                    let e = self.expr(from, d, s);
                    let e = if matches!(from, T::F | T::H | T::D) {
                        // Clamped first: a float out of the integer's range converts to a
                        // saturated value on one machine and another on the next.
                        let (lo, hi) = (Expr::Float(from, -1000.0), Expr::Float(from, 1000.0));
                        Expr::MinMax(
                            true,
                            from,
                            bx(Expr::MinMax(false, from, bx(e), bx(lo))),
                            bx(hi),
                        )
                    } else {
                        e
                    };
                    Expr::Cast(t, bx(e))
                }
                11 => {
                    let (a, c, b) = (self.expr(t, d, s), self.expr(T::B, d, s), self.expr(t, d, s));
                    Expr::Cond(t, bx(c), bx(a), bx(b))
                }
                12 => {
                    let (a, b) = (self.expr(t, d, s), self.expr(t, d, s));
                    Expr::MinMax(true, t, bx(a), bx(b))
                }
                13 => {
                    let (a, b) = (self.expr(t, d, s), self.expr(t, d, s));
                    Expr::MinMax(false, t, bx(a), bx(b))
                }
                14 if !s.helper => {
                    let op = *self.pick(&["reduce_add", "prefix_sum", "reduce_min", "reduce_max"]);
                    // (min and max reduce i32s.)
                    let wt = if op == "reduce_min" || op == "reduce_max" { T::I } else { t };
                    let e = self.expr(wt, d, s);
                    let w = Expr::Wave(op, wt, bx(e), None);
                    if wt == t { w } else { Expr::Cast(t, bx(w)) }
                }
                15 if !s.helper => {
                    // A bit count of a u32.
                    let op = *self.pick(&["popcount", "clz", "ctz"]);
                    let e = self.expr(T::U, d, s);
                    let b = Expr::Bits(op, bx(e));
                    if t == T::U { b } else { Expr::Cast(t, bx(b)) }
                }
                16 if !s.helper && s.calls && t == T::I => {
                    let (i, x) = (self.expr(T::I, d.min(1), s), self.expr(T::F, d.min(1), s));
                    Expr::Call(bx(i), bx(x))
                }
                _ => {
                    let (a, b) = (self.expr(t, d, s), self.expr(t, d, s));
                    Expr::Bin("+", t, bx(a), bx(b))
                }
            },
            T::F | T::H | T::D => match self.rng.below(if t == T::F { 14 } else { 10 }) {
                0 => two(self, "+"),
                1 => two(self, "-"),
                2 => two(self, "*"),
                3 => {
                    let (a, b) = (self.expr(t, d, s), self.expr(t, d, s));
                    let offset = if t == T::H { 8.0 } else { 100.0 };
                    let den = Expr::Bin(
                        "+",
                        t,
                        bx(Expr::Math("abs", t, vec![b])),
                        bx(Expr::Float(t, offset)),
                    );
                    Expr::Bin("/", t, bx(a), bx(den))
                }
                4 => {
                    let from = *self.pick(&[T::I, T::U, T::F, T::H]);
                    let from = if from == t { T::I } else { from };
                    let e = self.expr(from, d, s);
                    Expr::Cast(t, bx(e))
                }
                5 => {
                    let (a, c, b) = (self.expr(t, d, s), self.expr(T::B, d, s), self.expr(t, d, s));
                    Expr::Cond(t, bx(c), bx(a), bx(b))
                }
                6 => {
                    let (a, b) = (self.expr(t, d, s), self.expr(t, d, s));
                    Expr::MinMax(self.rng.chance(50), t, bx(a), bx(b))
                }
                7 => {
                    let e = self.expr(t, d, s);
                    Expr::Math("floor", t, vec![e])
                }
                8 if !s.helper => {
                    let op = *self.pick(&["reduce_add", "prefix_sum", "reduce_min", "reduce_max"]);
                    let e = self.expr(t, d, s);
                    Expr::Wave(op, t, bx(e), None)
                }
                // f32 only from here.
                10 => {
                    // exp of a value kept small enough not to overflow.
                    let e = self.expr(t, d, s);
                    let small = Expr::MinMax(
                        true,
                        t,
                        bx(Expr::MinMax(false, t, bx(e), bx(Expr::Float(t, -20.0)))),
                        bx(Expr::Float(t, 20.0)),
                    );
                    Expr::Math("exp", t, vec![small])
                }
                11 => {
                    let e = self.expr(t, d, s);
                    Expr::Math("tanh", t, vec![e])
                }
                12 => {
                    let e = self.expr(t, d, s);
                    let base = Expr::Bin(
                        "+",
                        t,
                        bx(Expr::Math("abs", t, vec![e])),
                        bx(Expr::Float(t, 1.0)),
                    );
                    Expr::Math(
                        "pow",
                        t,
                        vec![
                            base,
                            Expr::Float(t, [0.5, 1.5, 2.0, 3.0][self.rng.below(4) as usize]),
                        ],
                    )
                }
                _ => {
                    let e = self.expr(t, d, s);
                    Expr::Neg(t, bx(e))
                }
            },
            T::B => match self.rng.below(7) {
                0 => {
                    let (a, b) = (self.expr(T::B, d, s), self.expr(T::B, d, s));
                    Expr::Logic(true, bx(a), bx(b))
                }
                1 => {
                    let (a, b) = (self.expr(T::B, d, s), self.expr(T::B, d, s));
                    Expr::Logic(false, bx(a), bx(b))
                }
                2 => Expr::Not(bx(self.expr(T::B, d, s))),
                3 if !s.helper => {
                    let c = self.expr(T::B, d, s);
                    Expr::Vote(self.rng.chance(50), bx(c))
                }
                _ => {
                    let ct = self.numeric(&[T::I, T::U, T::F, T::H]);
                    let op = *self.pick(&["<", "<=", ">", ">=", "==", "!="]);
                    let (a, b) = (self.expr(ct, d, s), self.expr(ct, d, s));
                    Expr::Cmp(op, ct, bx(a), bx(b))
                }
            },
        }
    }

    fn any_var(&mut self, s: &Scope) -> (String, T) {
        self.pick(&s.vars).clone()
    }

    fn block(&mut self, depth: u32, in_loop: bool, s: &Scope) -> Vec<Stmt> {
        let n = 1 + self.rng.below(4);
        (0..n).map(|_| self.stmt(depth, in_loop, s)).collect()
    }

    fn stmt(&mut self, depth: u32, in_loop: bool, s: &Scope) -> Stmt {
        let choice = self.rng.below(if depth == 0 { 5 } else { 11 });
        match choice {
            0..=3 => {
                let (name, t) = self.any_var(s);
                let e = self.expr(t, 3, s);
                let op = (t != T::B && self.rng.chance(20)).then_some("+");
                Stmt::Assign(name, op, e)
            }
            4 if s.helper => {
                let (name, t) = self.any_var(s);
                let e = self.expr(t, 2, s);
                Stmt::Assign(name, None, e)
            }
            4 if self.rng.chance(50) => {
                let at = self.private_index(s);
                let e = self.expr(T::I, 2, s);
                Stmt::Pa(at, self.rng.chance(30), e)
            }
            4 => {
                let slot = match self.counter(s) {
                    Some(k) if self.rng.chance(50) => k,
                    _ => Expr::Int(T::U, i64::from(self.rng.below(8))),
                };
                let e = self.expr(T::I, 2, s);
                Stmt::Out(slot, e)
            }
            5 | 6 => {
                let c = self.expr(T::B, 2, s);
                let then = self.block(depth - 1, in_loop, s);
                let elif = if self.rng.chance(50) {
                    let c2 = self.expr(T::B, 2, s);
                    Some((c2, self.block(depth - 1, in_loop, s)))
                } else {
                    None
                };
                let otherwise = if self.rng.chance(50) {
                    Some(self.block(depth - 1, in_loop, s))
                } else {
                    None
                };
                Stmt::If(c, then, elif, otherwise)
            }
            7 if self.loops < 3 => {
                self.loops += 1;
                let k = format!("k{}", self.next);
                self.next += 1;
                let hi = if self.rng.chance(50) || s.helper {
                    Expr::Int(T::U, i64::from(self.rng.below(6)))
                } else {
                    Self::masked(Self::t(), 7)
                };
                let mut inner = s.clone();
                inner.counters.push(k.clone());
                let body = self.block(depth - 1, true, &inner);
                Stmt::For(k, hi, body)
            }
            8 if self.loops < 3 => {
                self.loops += 1;
                let w = format!("w{}", self.next);
                self.next += 1;
                let c = self.expr(T::B, 1, &Scope { calls: false, ..s.clone() });
                let bound = 1 + self.rng.below(6);
                let body = self.block(depth - 1, true, s);
                Stmt::While(w, bound, c, body)
            }
            9 if in_loop => {
                let c = self.expr(T::B, 2, s);
                let set = if self.rng.chance(50) {
                    let (name, t) = self.any_var(s);
                    let e = self.expr(t, 1, s);
                    Some((name, e))
                } else {
                    None
                };
                Stmt::Leave(c, set, self.rng.chance(50))
            }
            10 if s.helper => {
                let c = self.expr(T::B, 1, s);
                let v = self.expr(T::I, 2, s);
                Stmt::If(c, vec![Stmt::Give(v)], None, None)
            }
            10 => Stmt::Return(self.expr(T::B, 1, s)),
            _ => {
                let (name, t) = self.any_var(s);
                let e = self.expr(t, 2, s);
                Stmt::Assign(name, None, e)
            }
        }
    }
}

impl Program {
    /// The kernel of `seed`, holding what `options` allows.
    pub fn generate(seed: u64, options: Options) -> Program {
        let mut g = Gen {
            rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
            options,
            loops: 0,
            next: 0,
        };
        let n = if options.doubles { VARS.len() } else { VARS.len() - 1 };
        let scope = Scope {
            vars: VARS[..n].iter().map(|(n, t)| ((*n).to_owned(), *t)).collect(),
            counters: Vec::new(),
            helper: false,
            calls: true,
        };
        let body = g.block(options.depth, false, &scope);
        // The helper: its parameters, a variable, early returns, a loop.
        g.loops = 1;
        let hscope = Scope {
            vars: vec![("r".into(), T::I), ("z".into(), T::F)],
            counters: Vec::new(),
            helper: true,
            calls: false,
        };
        let mut helper = g.block(2, false, &hscope);
        let last = g.expr(T::I, 2, &hscope);
        helper.push(Stmt::Give(last));
        Program { doubles: options.doubles, body, helper }
    }

    /// The kernel of `seed` with [`Options::for_seed`].
    pub fn for_seed(seed: u64) -> Program {
        Program::generate(seed, Options::for_seed(seed))
    }

    /// The program written in `lang`.
    pub fn source(&self, lang: Lang) -> String {
        let p = Printer { lang, out: String::new() };
        p.program(self)
    }
}

struct Printer {
    lang: Lang,
    out: String,
}

fn ty(lang: Lang, t: T) -> &'static str {
    match (lang, t) {
        (Lang::Cpp, T::I) => "int32_t",
        (Lang::Cpp, T::U) => "uint32_t",
        (Lang::Cpp, T::F) => "float",
        (Lang::Cpp, T::H) => "half",
        (Lang::Cpp, T::D) => "double",
        (Lang::Cpp, T::B) => "bool",
        (Lang::TypeScript, T::D) => "number",
        (Lang::TypeScript, T::B) => "boolean",
        (_, T::I) => "i32",
        (_, T::U) => "u32",
        (_, T::F) => "f32",
        (_, T::H) => "f16",
        (_, T::D) => "f64",
        (_, T::B) => "bool",
    }
}

fn float_text(v: f64) -> String {
    if v.fract() == 0.0 { format!("{v:.1}") } else { format!("{v}") }
}

impl Printer {
    fn lit_int(&self, t: T, v: i64) -> String {
        match self.lang {
            Lang::Python => format!("{}({v})", ty(self.lang, t)),
            Lang::Rust => format!("({v}{})", ty(self.lang, t)),
            Lang::Cpp if t == T::U => format!("{v}u"),
            Lang::Cpp => format!("(int32_t)({v})"),
            Lang::TypeScript => format!("wave.{}({v})", ty(self.lang, t)),
        }
    }

    fn lit_float(&self, t: T, v: f64) -> String {
        let f = float_text(v);
        match (self.lang, t) {
            (Lang::Python, _) => format!("{}({f})", ty(self.lang, t)),
            (Lang::Rust, T::H) => format!("({f}f32 as f16)"),
            (Lang::Rust, _) => format!("{f}{}", ty(self.lang, t)),
            (Lang::Cpp, T::F) => format!("{f}f"),
            (Lang::Cpp, T::H) => format!("(half){f}f"),
            (Lang::Cpp, _) => f,
            (Lang::TypeScript, T::D) => f,
            (Lang::TypeScript, _) => format!("wave.{}({f})", ty(self.lang, t)),
        }
    }

    fn cast(&self, to: T, e: String) -> String {
        match self.lang {
            Lang::Python => format!("{}({e})", ty(self.lang, to)),
            Lang::Rust => format!("(({e}) as {})", ty(self.lang, to)),
            Lang::Cpp => format!("(({})({e}))", ty(self.lang, to)),
            Lang::TypeScript if to == T::D => format!("Number({e})"),
            Lang::TypeScript => format!("wave.{}({e})", ty(self.lang, to)),
        }
    }

    fn index(&self, buf: &str, i: String) -> String {
        match self.lang {
            Lang::Rust => format!("{buf}[({i}) as usize]"),
            _ => format!("{buf}[{i}]"),
        }
    }

    /// `wave.name(args)` in the language's spelling.
    fn intrinsic(&self, name: &str, args: &[String]) -> String {
        let args = args.join(", ");
        match self.lang {
            Lang::Python => format!("wave.{name}({args})"),
            Lang::Rust | Lang::Cpp => format!("wave::{name}({args})"),
            Lang::TypeScript => {
                let mut camel = String::new();
                let mut up = false;
                for ch in name.chars() {
                    if ch == '_' {
                        up = true;
                    } else if up {
                        camel.push(ch.to_ascii_uppercase());
                        up = false;
                    } else {
                        camel.push(ch);
                    }
                }
                format!("wave.{camel}({args})")
            }
        }
    }

    fn expr(&self, e: &Expr) -> String {
        let l = self.lang;
        match e {
            Expr::Int(t, v) => self.lit_int(*t, *v),
            Expr::Float(t, v) => self.lit_float(*t, *v),
            Expr::Bool(b) => match l {
                Lang::Python => (if *b { "True" } else { "False" }).into(),
                _ => (if *b { "true" } else { "false" }).into(),
            },
            Expr::Var(n, _) => n.clone(),
            Expr::Inp(i) => self.index("inp", self.expr(i)),
            Expr::Inb(i) => {
                let load = self.index("inb", self.expr(i));
                match l {
                    // (A byte reads as a u32 in every language; in Rust and C++ the cast is
                    // written.)
                    Lang::Rust | Lang::Cpp => self.cast(T::U, load),
                    _ => load,
                }
            }
            Expr::Pa(i) => self.index("pa", self.expr(i)),
            Expr::Tile(i) => self.index("tile", self.expr(i)),
            Expr::Bin(op, t, a, b) => {
                let op = match (l, *op, *t) {
                    (Lang::TypeScript, ">>", T::U) => ">>>",
                    (_, op, _) => op,
                };
                format!("({} {op} {})", self.expr(a), self.expr(b))
            }
            Expr::Div(_, a, b) => match l {
                Lang::Python => format!("({} // {})", self.expr(a), self.expr(b)),
                Lang::TypeScript => format!("Math.trunc({} / {})", self.expr(a), self.expr(b)),
                _ => format!("({} / {})", self.expr(a), self.expr(b)),
            },
            Expr::Cmp(op, _, a, b) => {
                let op = match (l, *op) {
                    (Lang::TypeScript, "==") => "===",
                    (Lang::TypeScript, "!=") => "!==",
                    (_, op) => op,
                };
                format!("({} {op} {})", self.expr(a), self.expr(b))
            }
            Expr::Logic(and, a, b) => {
                let op = match (l, and) {
                    (Lang::Python, true) => "and",
                    (Lang::Python, false) => "or",
                    (_, true) => "&&",
                    (_, false) => "||",
                };
                format!("({} {op} {})", self.expr(a), self.expr(b))
            }
            Expr::Not(a) => match l {
                Lang::Python => format!("(not {})", self.expr(a)),
                _ => format!("(!{})", self.expr(a)),
            },
            // (tree-sitter-typescript reads `(x) < (-5.0)` as the start of an instantiation
            // expression: a negated number goes unparenthesised there.)
            Expr::Neg(_, a) if l == Lang::TypeScript && matches!(**a, Expr::Float(T::D, _)) => {
                format!("-{}", self.expr(a))
            }
            // (`- -8.5`, not `--8.5`, a decrement.)
            Expr::Neg(_, a) if l == Lang::TypeScript => format!("(- {})", self.expr(a)),
            Expr::Neg(_, a) => format!("(-{})", self.expr(a)),
            Expr::Cast(to, a) => self.cast(*to, self.expr(a)),
            Expr::Cond(_, c, a, b) => match l {
                Lang::Python => {
                    format!("({} if {} else {})", self.expr(a), self.expr(c), self.expr(b))
                }
                Lang::Rust => format!(
                    "(if {} {{ {} }} else {{ {} }})",
                    self.expr(c),
                    self.expr(a),
                    self.expr(b)
                ),
                _ => format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b)),
            },
            Expr::MinMax(min, _, a, b) => {
                let f = if *min { "min" } else { "max" };
                let (a, b) = (self.expr(a), self.expr(b));
                match l {
                    Lang::Python => format!("{f}({a}, {b})"),
                    Lang::Rust => format!("({a}).{f}({b})"),
                    Lang::Cpp => format!("std::{f}({a}, {b})"),
                    Lang::TypeScript => format!("Math.{f}({a}, {b})"),
                }
            }
            Expr::Math(f, _, args) => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                match l {
                    Lang::Python => format!("wave.{f}({})", args.join(", ")),
                    Lang::Rust => {
                        let m = match *f {
                            "pow" => "powf",
                            other => other,
                        };
                        format!("({}).{m}({})", args[0], args[1..].join(", "))
                    }
                    Lang::Cpp => format!("std::{f}({})", args.join(", ")),
                    Lang::TypeScript => format!("Math.{f}({})", args.join(", ")),
                }
            }
            Expr::Bits(f, a) => {
                let a = self.expr(a);
                match l {
                    Lang::Python => format!("wave.{f}({a})"),
                    Lang::Rust => {
                        let m = match *f {
                            "popcount" => "count_ones",
                            "clz" => "leading_zeros",
                            _ => "trailing_zeros",
                        };
                        format!("({a}).{m}()")
                    }
                    // (C++'s counts are `int`.)
                    Lang::Cpp => format!("((uint32_t)wave::{f}({a}))"),
                    Lang::TypeScript => format!("wave.{f}({a})"),
                }
            }
            Expr::Wave(op, _, a, lane) => {
                let mut args = vec![self.expr(a)];
                if let Some(lane) = lane {
                    args.push(self.lit_int(T::U, i64::from(*lane)));
                }
                self.intrinsic(op, &args)
            }
            Expr::Vote(any, c) => self.intrinsic(if *any { "any" } else { "all" }, &[self.expr(c)]),
            Expr::Call(i, x) => format!("hf({}, {})", self.expr(i), self.expr(x)),
        }
    }

    fn line(&mut self, indent: usize, text: &str) {
        let _ = writeln!(self.out, "{}{text}", "    ".repeat(indent));
    }

    fn end(&self) -> &'static str {
        if self.lang == Lang::Python { "" } else { ";" }
    }

    /// `if c` opening a block.
    fn open_if(&mut self, indent: usize, c: &str) {
        let text = match self.lang {
            Lang::Python => format!("if {c}:"),
            Lang::Rust => format!("if {c} {{"),
            _ => format!("if ({c}) {{"),
        };
        self.line(indent, &text);
    }

    fn close(&mut self, indent: usize) {
        if self.lang != Lang::Python {
            self.line(indent, "}");
        }
    }

    fn block(&mut self, indent: usize, body: &[Stmt]) {
        if body.is_empty() && self.lang == Lang::Python {
            self.line(indent, "pass");
        }
        for s in body {
            self.stmt(indent, s);
        }
    }

    fn stmt(&mut self, indent: usize, s: &Stmt) {
        let end = self.end();
        match s {
            Stmt::Assign(name, op, e) => {
                let op = op.map_or("=".to_owned(), |o| format!("{o}="));
                let text = format!("{name} {op} {}{end}", self.expr(e));
                self.line(indent, &text);
            }
            Stmt::Out(slot, e) => {
                let i = format!("(t * {} + {})", self.lit_int(T::U, 8), self.expr(slot));
                let text = format!("{} = {}{end}", self.index("out", i), self.expr(e));
                self.line(indent, &text);
            }
            Stmt::Pa(i, add, e) => {
                let op = if *add { "+=" } else { "=" };
                let text = format!("{} {op} {}{end}", self.index("pa", self.expr(i)), self.expr(e));
                self.line(indent, &text);
            }
            Stmt::If(c, then, elif, otherwise) => {
                let c = self.expr(c);
                self.open_if(indent, &c);
                self.block(indent + 1, then);
                if let Some((c2, body)) = elif {
                    let c2 = self.expr(c2);
                    let text = match self.lang {
                        Lang::Python => format!("elif {c2}:"),
                        Lang::Rust => format!("}} else if {c2} {{"),
                        _ => format!("}} else if ({c2}) {{"),
                    };
                    self.line(indent, &text);
                    self.block(indent + 1, body);
                }
                if let Some(body) = otherwise {
                    let text = if self.lang == Lang::Python { "else:" } else { "} else {" };
                    self.line(indent, text);
                    self.block(indent + 1, body);
                }
                self.close(indent);
            }
            Stmt::For(k, hi, body) => {
                let hi = self.expr(hi);
                let text = match self.lang {
                    Lang::Python => format!("for {k} in range({hi}):"),
                    Lang::Rust => format!("for {k} in 0..{hi} {{"),
                    Lang::Cpp => format!("for (uint32_t {k} = 0; {k} < {hi}; {k}++) {{"),
                    Lang::TypeScript => format!("for (let {k}: u32 = 0; {k} < {hi}; {k}++) {{"),
                };
                self.line(indent, &text);
                self.block(indent + 1, body);
                self.close(indent);
            }
            Stmt::While(w, bound, c, body) => {
                let decl = match self.lang {
                    Lang::Python => format!("{w}: u32 = 0"),
                    Lang::Rust => format!("let mut {w}: u32 = 0;"),
                    Lang::Cpp => format!("uint32_t {w} = 0;"),
                    Lang::TypeScript => format!("let {w}: u32 = 0;"),
                };
                self.line(indent, &decl);
                let b = self.lit_int(T::U, i64::from(*bound));
                let c = self.expr(c);
                let text = match self.lang {
                    Lang::Python => format!("while {w} < {b} and {c}:"),
                    Lang::Rust => format!("while {w} < {b} && {c} {{"),
                    _ => format!("while ({w} < {b} && {c}) {{"),
                };
                self.line(indent, &text);
                let one = self.lit_int(T::U, 1);
                self.line(indent + 1, &format!("{w} += {one}{end}"));
                self.block(indent + 1, body);
                self.close(indent);
            }
            Stmt::Leave(c, set, brk) => {
                let c = self.expr(c);
                self.open_if(indent, &c);
                if let Some((name, e)) = set {
                    let text = format!("{name} = {}{end}", self.expr(e));
                    self.line(indent + 1, &text);
                }
                let word = if *brk { "break" } else { "continue" };
                self.line(indent + 1, &format!("{word}{end}"));
                self.close(indent);
            }
            Stmt::Return(c) => {
                let c = self.expr(c);
                self.open_if(indent, &c);
                let i = format!("(t * {} + {})", self.lit_int(T::U, 8), self.lit_int(T::U, 7));
                let text = format!("{} = {}{end}", self.index("out", i), self.lit_int(T::I, 12345));
                self.line(indent + 1, &text);
                self.line(indent + 1, &format!("return{end}"));
                self.close(indent);
            }
            Stmt::Give(e) => {
                let text = format!("return {}{end}", self.expr(e));
                self.line(indent, &text);
            }
        }
    }

    /// A declaration of `name: t = value`.
    fn decl(&mut self, indent: usize, name: &str, t: T, value: &str) {
        let text = match self.lang {
            Lang::Python => format!("{name}: {} = {value}", ty(self.lang, t)),
            Lang::Rust => format!("let mut {name}: {} = {value};", ty(self.lang, t)),
            Lang::Cpp => format!("{} {name} = {value};", ty(self.lang, t)),
            Lang::TypeScript => format!("let {name}: {} = {value};", ty(self.lang, t)),
        };
        self.line(indent, &text);
    }

    fn program(mut self, p: &Program) -> String {
        let l = self.lang;
        // The helper.
        match l {
            Lang::Python => self.line(0, "import wave\n\n\ndef hf(p: i32, q: f32) -> i32:"),
            Lang::Rust => self.line(0, "fn hf(p: i32, q: f32) -> i32 {"),
            Lang::Cpp => self.line(0, "int32_t hf(int32_t p, float q) {"),
            Lang::TypeScript => {
                self.line(0, "import * as wave from \"wave\";\nimport type { f16, f32, i32, u32 } from \"wave\";\n\nfunction hf(p: i32, q: f32): i32 {");
            }
        }
        self.decl(1, "r", T::I, "p");
        self.decl(1, "z", T::F, "q");
        self.block(1, &p.helper);
        self.close(0);
        self.line(0, "");
        // The kernel.
        match l {
            Lang::Python => self.line(0, "\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], inb: u8[:], out: i32[:], fout: f32[:]):"),
            Lang::Rust => self.line(0, "#[wave::kernel(workgroup = (32, 1, 1))]\nfn k(inp: &[i32], inb: &[u8], out: &mut [i32], fout: &mut [f32]) {"),
            Lang::Cpp => self.line(0, "[[wave::kernel, wave::workgroup(32, 1, 1)]]\nvoid k(const int32_t* inp, const uint8_t* inb, int32_t* out, float* fout) {"),
            Lang::TypeScript => self.line(0, "export const k = wave.kernel({ workgroup: [32] }, function k(inp: Int32Array, inb: Uint8Array, out: Int32Array, fout: Float32Array) {"),
        }
        let t_decl = match l {
            Lang::Python => "t = wave.global_id()",
            Lang::Rust => "let t: u32 = wave::global_id(0);",
            Lang::Cpp => "uint32_t t = wave::global_id(0);",
            Lang::TypeScript => "const t: u32 = wave.globalId();",
        };
        self.line(1, t_decl);
        // The local array: each thread's slot, then a barrier, before anything can return.
        let tile = match l {
            Lang::Python => "tile = wave.local_array(i32, 64)",
            Lang::Rust => "let tile = wave::local_array::<i32, 64>();",
            Lang::Cpp => "wave::local_array<int32_t, 64> tile;",
            Lang::TypeScript => "const tile = wave.localArray(Int32Array, 64);",
        };
        self.line(1, tile);
        let end = self.end();
        let m63 = self.lit_int(T::U, 63);
        let slot = self.index("tile", format!("(t & {m63})"));
        let from = self.index("inp", format!("((t * {}) & {m63})", self.lit_int(T::U, 5)));
        self.line(1, &format!("{slot} = {from}{end}"));
        let barrier = self.intrinsic("barrier", &[]);
        self.line(1, &format!("{barrier}{end}"));
        let inp = |me: &Self, i: &str| me.index("inp", format!("({i})"));
        let a = inp(&self, "t");
        self.decl(1, "a", T::I, &a);
        let b = inp(&self, &format!("(t + {}) & {m63}", self.lit_int(T::U, 1)));
        self.decl(1, "b", T::I, &b);
        let c = self.lit_int(T::I, 7);
        self.decl(1, "c", T::I, &c);
        let u = self.cast(T::U, inp(&self, &format!("t ^ {}", self.lit_int(T::U, 9))));
        self.decl(1, "u", T::U, &u);
        let v = format!("(t * {})", self.lit_int(T::U, 3));
        self.decl(1, "v", T::U, &v);
        let x = format!("({} * {})", self.cast(T::F, "a".into()), self.lit_float(T::F, 0.5));
        self.decl(1, "x", T::F, &x);
        let y = self.lit_float(T::F, 1.25);
        self.decl(1, "y", T::F, &y);
        let h = format!("({} * {})", self.cast(T::H, "x".into()), self.lit_float(T::H, 0.5));
        self.decl(1, "h", T::H, &h);
        if p.doubles {
            let g = format!(
                "(({} * {}) + {})",
                self.cast(T::D, "x".into()),
                self.lit_float(T::D, 0.1),
                self.cast(T::D, inp(&self, &format!("t ^ {}", self.lit_int(T::U, 11))))
            );
            self.decl(1, "g", T::D, &g);
        }
        // Every lane runs here: shuffles and broadcasts read defined lanes.
        let sx = self.intrinsic("shuffle_xor", &["a".into(), self.lit_int(T::U, 1)]);
        let bc = self.intrinsic("broadcast", &["b".into(), self.lit_int(T::U, 0)]);
        self.line(1, &format!("c = (c + ({sx} ^ {bc})){end}"));
        let pa = match l {
            Lang::Python => "pa = wave.private_array(i32, 4)",
            Lang::Rust => "let mut pa = [0i32; 4];",
            Lang::Cpp => "int32_t pa[4] = {};",
            Lang::TypeScript => "const pa = new Int32Array(4);",
        };
        self.line(1, pa);
        let one = self.index("pa", self.lit_int(T::U, 1));
        self.line(1, &format!("{one} = (a - b){end}"));
        self.block(1, &p.body);
        let out = |me: &Self, k: i64| {
            me.index("out", format!("(t * {} + {})", me.lit_int(T::U, 8), me.lit_int(T::U, k)))
        };
        let o0 = out(&self, 0);
        self.line(1, &format!("{o0} = a{end}"));
        let o1 = out(&self, 1);
        self.line(1, &format!("{o1} = (b + c){end}"));
        let o2 = out(&self, 2);
        let uv = self.cast(T::I, "(u ^ v)".into());
        self.line(1, &format!("{o2} = {uv}{end}"));
        let o3 = out(&self, 3);
        let pas: Vec<String> = (0..4).map(|k| self.index("pa", self.lit_int(T::U, k))).collect();
        let (k3, k5, k7) = (self.lit_int(T::I, 3), self.lit_int(T::I, 5), self.lit_int(T::I, 7));
        self.line(
            1,
            &format!(
                "{o3} = ((({} + ({} * {k3})) + ({} * {k5})) + ({} * {k7})){end}",
                pas[0], pas[1], pas[2], pas[3]
            ),
        );
        let f0 = self.index("fout", format!("(t * {})", self.lit_int(T::U, 2)));
        let fx =
            if p.doubles { format!("(x + {})", self.cast(T::F, "g".into())) } else { "x".into() };
        self.line(1, &format!("{f0} = {fx}{end}"));
        let f1 = self
            .index("fout", format!("(t * {} + {})", self.lit_int(T::U, 2), self.lit_int(T::U, 1)));
        let yh = format!("(y + {})", self.cast(T::F, "h".into()));
        self.line(1, &format!("{f1} = {yh}{end}"));
        match l {
            Lang::Python => {}
            Lang::TypeScript => self.line(0, "});"),
            _ => self.line(0, "}"),
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_program_and_seeds_differ() {
        let a = Program::for_seed(1).source(Lang::Python);
        assert_eq!(a, Program::for_seed(1).source(Lang::Python));
        assert_ne!(a, Program::for_seed(2).source(Lang::Python));
        for lang in Lang::ALL {
            assert!(Program::for_seed(3).source(lang).contains("hf("), "{lang:?}");
        }
    }
}

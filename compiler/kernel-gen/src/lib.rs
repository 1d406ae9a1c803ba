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

mod generate;
mod print;

use generate::{Gen, Scope, VARS};
use print::Printer;

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

//! The generator: a seed's random choices, made into a typed program tree.

use super::{Expr, Options, Rng, Stmt, T};

/// The kernel's variables, with their types (`g` only with `doubles`).
pub(super) const VARS: [(&str, T); 9] = [
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
pub(super) struct Scope {
    /// Variables it may read and assign.
    pub(super) vars: Vec<(String, T)>,
    /// Loop counters in scope (`u32`, never assigned).
    pub(super) counters: Vec<String>,
    /// Inside the helper (no buffers, no wave operations, no calls).
    pub(super) helper: bool,
    /// Helper calls allowed (not in a `while` condition, which a helper call would run once).
    pub(super) calls: bool,
}

pub(super) struct Gen {
    pub(super) rng: Rng,
    pub(super) options: Options,
    pub(super) loops: u32,
    pub(super) next: u32,
}

pub(super) fn bx(e: Expr) -> Box<Expr> {
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

    pub(super) fn expr(&mut self, t: T, depth: u32, s: &Scope) -> Expr {
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

    pub(super) fn block(&mut self, depth: u32, in_loop: bool, s: &Scope) -> Vec<Stmt> {
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

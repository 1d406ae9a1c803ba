//! Differential testing of the optimisation levels: random well-typed Python kernels
//! (integer and float arithmetic, nested `if`/`for`/`while` with `break` and `continue`,
//! loads and stores, a private array indexed by constants, loop counters or computed
//! values, f16 arithmetic and conversions, and in a third of them an f64 variable) are
//! compiled at O0, O1, O2 and O3 and run in the emulator on the same inputs; every level must
//! leave the same device memory.
//!
//! `WAVE_DIFF_KERNELS=N` sets how many kernels (default 1,500), `WAVE_DIFF_FROM=S` the first
//! seed and `WAVE_DIFF_SECONDS=T` a time bound for long runs (several processes, one seed
//! range each); `WAVE_SEED=S` replays one kernel. A failure prints the seed, the kernel and
//! the first difference.

use std::fmt::Write as _;

use wave_kernel::{Language, Options, opt::Level};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u32) -> u32 {
        (self.next() >> 33) as u32 % n.max(1)
    }

    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}

#[derive(Clone, Copy, PartialEq)]
enum T {
    I,
    U,
    F,
    /// f16.
    H,
    /// f64.
    D,
    B,
}

impl T {
    fn name(self) -> &'static str {
        match self {
            T::I => "i32",
            T::U => "u32",
            T::F => "f32",
            T::H => "f16",
            T::D => "f64",
            T::B => "bool",
        }
    }
}

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

struct Gen {
    rng: Rng,
    out: String,
    loops: u32,
    /// Loop counters in scope (they are never assigned in the body).
    counters: Vec<String>,
    next_counter: u32,
    /// Whether the private array `pa` may be indexed by computed values (else only by
    /// constants and loop counters, which mem2reg promotes once loops are unrolled).
    computed_index: bool,
    /// Whether the kernel has the f64 variable `g` (f64 values are not spilled, so the
    /// kernels squeezed into eight registers leave it out).
    doubles: bool,
}

impl Gen {
    /// A variable to assign.
    fn any_var(&mut self) -> (&'static str, T) {
        let n = if self.doubles { VARS.len() } else { VARS.len() - 1 };
        VARS[self.rng.below(n as u32) as usize]
    }

    /// A type to compare or convert from.
    fn numeric(&mut self, with: &[T]) -> T {
        let mut ts = with.to_vec();
        if self.doubles {
            ts.push(T::D);
        }
        ts[self.rng.below(ts.len() as u32) as usize]
    }

    /// An index of the private array `pa` (4 elements).
    fn private_index(&mut self) -> String {
        match self.rng.below(10) {
            0..=3 => self.rng.below(4).to_string(),
            4..=6 if !self.counters.is_empty() => {
                let k = self.counters[self.rng.below(self.counters.len() as u32) as usize].clone();
                format!("(u32({k}) & 3)")
            }
            // (`i32(...)` gives the literals inside their type.)
            7..=9 if self.computed_index => format!("(u32(i32({})) & 3)", self.expr(T::I, 1)),
            _ => self.rng.below(4).to_string(),
        }
    }

    fn var(&mut self, t: T) -> String {
        let names: Vec<&str> = VARS.iter().filter(|v| v.1 == t).map(|v| v.0).collect();
        let mut options: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
        if t == T::I {
            options.extend(self.counters.iter().map(|c| format!("i32({c})")));
        }
        options[self.rng.below(options.len() as u32) as usize].clone()
    }

    fn literal(&mut self, t: T) -> String {
        match t {
            T::I => format!("{}", self.rng.below(41) as i32 - 20),
            T::U => format!("{}", self.rng.below(50)),
            T::F => format!("{}.{}", self.rng.below(9), [0, 25, 5, 75][self.rng.below(4) as usize]),
            T::H => {
                format!("f16({}.{})", self.rng.below(9), [0, 25, 5, 75][self.rng.below(4) as usize])
            }
            T::D => {
                format!("f64({}.{})", self.rng.below(9), [0, 1, 5, 3][self.rng.below(4) as usize])
            }
            T::B => (if self.rng.chance(50) { "True" } else { "False" }).into(),
        }
    }

    fn expr(&mut self, t: T, depth: u32) -> String {
        if depth == 0 || self.rng.chance(25) {
            return match (t, self.rng.below(10)) {
                (T::B, 0) => self.literal(T::B),
                (T::B, _) => {
                    let ct = self.numeric(&[T::I, T::U, T::F, T::H]);
                    let op = ["<", "<=", ">", ">=", "==", "!="][self.rng.below(6) as usize];
                    let l = self.var(ct);
                    let r = if self.rng.chance(50) { self.literal(ct) } else { self.var(ct) };
                    format!("({l} {op} {r})")
                }
                (T::I, 0) => "inp[(t + 3) & 63]".into(),
                (T::I, 1) if !self.counters.is_empty() => {
                    // An address that steps with a loop counter, and its neighbours: what
                    // stencils, dot products and interleaved data read (`a[j]`, `a[j + 1]`,
                    // `a[2 j + c]`), which strength reduction gives pointers of their own.
                    let k =
                        self.counters[self.rng.below(self.counters.len() as u32) as usize].clone();
                    match self.rng.below(4) {
                        0 | 1 => format!("inp[(t & 31) + u32({k})]"),
                        2 => format!("inp[(t & 31) + u32({k}) + {}]", 1 + self.rng.below(2)),
                        _ => format!("inp[(t & 15) + u32({k}) * 2 + {}]", self.rng.below(2)),
                    }
                }
                (T::I, 1) => format!("inp[u32({}) & 63]", self.var(T::I)),
                (T::I, 3) => format!("pa[{}]", self.private_index()),
                (T::U, 0) => "t".into(),
                (T::F, 0) => "f32(inp[t ^ 5])".into(),
                (T::H, 0) => "f16(inp[t ^ 6] & 255)".into(),
                (T::D, 0) => "f64(inp[t ^ 7])".into(),
                (_, 1 | 2) => self.literal(t),
                _ => self.var(t),
            };
        }
        let d = depth - 1;
        match t {
            T::I | T::U => match self.rng.below(14) {
                0 => format!("({} + {})", self.expr(t, d), self.expr(t, d)),
                1 => format!("({} - {})", self.expr(t, d), self.expr(t, d)),
                2 => format!("({} * {})", self.expr(t, d), self.expr(t, d)),
                3 => format!("({} & {})", self.expr(t, d), self.expr(t, d)),
                4 => format!("({} | {})", self.expr(t, d), self.expr(t, d)),
                5 => format!("({} ^ {})", self.expr(t, d), self.expr(t, d)),
                6 => {
                    // A divisor that is never zero (and never -1, so no MIN / -1).
                    let n = self.expr(t, d);
                    let m = self.expr(t, d);
                    format!("({m} // ((({n}) & 7) + 1))")
                }
                7 => {
                    let n = self.expr(t, d);
                    let m = self.expr(t, d);
                    format!("({m} % ((({n}) & 15) + 1))")
                }
                8 => format!("({} << ({} & 7))", self.expr(t, d), self.expr(t, d)),
                9 => format!("({} >> ({} & 15))", self.expr(t, d), self.expr(t, d)),
                10 => {
                    let from = self.numeric(&[T::I, T::U, T::F, T::H]);
                    if from == T::F {
                        format!("{}(min(max({}, -1000.0), 1000.0))", t.name(), self.expr(T::F, d))
                    } else if from == T::H {
                        let h = self.expr(T::H, d);
                        format!("{}(min(max({h}, f16(-1000.0)), f16(1000.0)))", t.name())
                    } else {
                        format!("{}({}({}))", t.name(), from.name(), self.expr(from, d))
                    }
                }
                11 => format!(
                    "({} if {} else {})",
                    self.expr(t, d),
                    self.expr(T::B, d),
                    self.expr(t, d)
                ),
                12 => format!("min({}, {})", self.expr(t, d), self.expr(t, d)),
                _ => format!("max({}, {})", self.expr(t, d), self.expr(t, d)),
            },
            T::F => match self.rng.below(9) {
                0 => format!("({} + {})", self.expr(t, d), self.expr(t, d)),
                1 => format!("({} - {})", self.expr(t, d), self.expr(t, d)),
                2 => format!("({} * {})", self.expr(t, d), self.expr(t, d)),
                3 => format!(
                    "({} / ({} + 100.0))",
                    self.expr(t, d),
                    format_args!("abs({})", self.expr(t, d))
                ),
                4 => {
                    let from = self.numeric(&[T::I, T::U, T::H]);
                    format!("f32({}({}))", from.name(), self.expr(from, d))
                }
                5 => format!(
                    "({} if {} else {})",
                    self.expr(t, d),
                    self.expr(T::B, d),
                    self.expr(t, d)
                ),
                6 => format!("floor({})", self.expr(t, d)),
                7 => format!("min({}, {})", self.expr(t, d), self.expr(t, d)),
                _ => format!("-{}", self.expr(t, d)),
            },
            T::H => match self.rng.below(9) {
                0 => format!("({} + {})", self.expr(t, d), self.expr(t, d)),
                1 => format!("({} - {})", self.expr(t, d), self.expr(t, d)),
                2 => format!("({} * {})", self.expr(t, d), self.expr(t, d)),
                3 => format!("({} / (abs({}) + f16(8.0)))", self.expr(t, d), self.expr(t, d)),
                // (`f32(...)` gives the literals inside their type.)
                4 => format!("f16(f32(min(max({}, -1000.0), 1000.0)))", self.expr(T::F, d)),
                5 => format!(
                    "({} if {} else {})",
                    self.expr(t, d),
                    self.expr(T::B, d),
                    self.expr(t, d)
                ),
                6 => format!("min({}, {})", self.expr(t, d), self.expr(t, d)),
                7 => format!("max({}, {})", self.expr(t, d), self.expr(t, d)),
                _ => format!("-{}", self.expr(t, d)),
            },
            T::D => match self.rng.below(13) {
                0 => format!("({} + {})", self.expr(t, d), self.expr(t, d)),
                1 => format!("({} - {})", self.expr(t, d), self.expr(t, d)),
                2 => format!("({} * {})", self.expr(t, d), self.expr(t, d)),
                3 => format!("({} / (abs({}) + f64(100.0)))", self.expr(t, d), self.expr(t, d)),
                4 => {
                    let from = [T::I, T::U, T::F, T::H][self.rng.below(4) as usize];
                    format!("f64({}({}))", from.name(), self.expr(from, d))
                }
                5 => format!(
                    "({} if {} else {})",
                    self.expr(t, d),
                    self.expr(T::B, d),
                    self.expr(t, d)
                ),
                6 => format!("min({}, {})", self.expr(t, d), self.expr(t, d)),
                7 => format!("max({}, {})", self.expr(t, d), self.expr(t, d)),
                8 => format!("wave.sqrt(abs({}))", self.expr(t, d)),
                9 => format!("floor({})", self.expr(t, d)),
                10 => format!("({} % (abs({}) + f64(1.5)))", self.expr(t, d), self.expr(t, d)),
                _ => format!("-{}", self.expr(t, d)),
            },
            T::B => match self.rng.below(6) {
                0 => format!("({} and {})", self.expr(T::B, d), self.expr(T::B, d)),
                1 => format!("({} or {})", self.expr(T::B, d), self.expr(T::B, d)),
                2 => format!("(not {})", self.expr(T::B, d)),
                _ => {
                    let ct = self.numeric(&[T::I, T::U, T::F, T::H]);
                    let op = ["<", "<=", ">", ">=", "==", "!="][self.rng.below(6) as usize];
                    // Each side converted, so a side of only literals is typed too.
                    let n = ct.name();
                    format!("({n}({}) {op} {n}({}))", self.expr(ct, d), self.expr(ct, d))
                }
            },
        }
    }

    fn line(&mut self, indent: usize, text: &str) {
        let _ = writeln!(self.out, "{}{text}", "    ".repeat(indent));
    }

    fn block(&mut self, indent: usize, depth: u32, in_loop: bool) {
        let n = 1 + self.rng.below(4);
        for _ in 0..n {
            self.stmt(indent, depth, in_loop);
        }
    }

    fn stmt(&mut self, indent: usize, depth: u32, in_loop: bool) {
        let choice = self.rng.below(if depth == 0 { 5 } else { 11 });
        match choice {
            0..=3 => {
                let (name, t) = self.any_var();
                let e = self.expr(t, 3);
                let op = if t != T::B && self.rng.chance(20) { "+=" } else { "=" };
                self.line(indent, &format!("{name} {op} {e}"));
            }
            4 if self.rng.chance(50) => {
                let at = self.private_index();
                let e = self.expr(T::I, 2);
                let op = if self.rng.chance(30) { "+=" } else { "=" };
                self.line(indent, &format!("pa[{at}] {op} {e}"));
            }
            4 => {
                let slot = if !self.counters.is_empty() && self.rng.chance(50) {
                    self.counters[self.rng.below(self.counters.len() as u32) as usize].clone()
                } else {
                    self.rng.below(8).to_string()
                };
                let e = self.expr(T::I, 2);
                self.line(indent, &format!("out[t * 8 + u32({slot})] = {e}"));
            }
            5 | 6 => {
                let c = self.expr(T::B, 2);
                self.line(indent, &format!("if {c}:"));
                self.block(indent + 1, depth - 1, in_loop);
                if self.rng.chance(50) {
                    let c2 = self.expr(T::B, 2);
                    self.line(indent, &format!("elif {c2}:"));
                    self.block(indent + 1, depth - 1, in_loop);
                }
                if self.rng.chance(50) {
                    self.line(indent, "else:");
                    self.block(indent + 1, depth - 1, in_loop);
                }
            }
            7 if self.loops < 3 => {
                self.loops += 1;
                let k = format!("k{}", self.next_counter);
                self.next_counter += 1;
                let hi = if self.rng.chance(50) {
                    format!("{}", self.rng.below(6))
                } else {
                    "(t & 7)".into()
                };
                self.line(indent, &format!("for {k} in range({hi}):"));
                self.counters.push(k);
                self.block(indent + 1, depth - 1, true);
                self.counters.pop();
            }
            8 if self.loops < 3 => {
                self.loops += 1;
                let w = format!("w{}", self.next_counter);
                self.next_counter += 1;
                let c = self.expr(T::B, 1);
                self.line(indent, &format!("{w}: u32 = 0"));
                let bound = 1 + self.rng.below(6);
                self.line(indent, &format!("while {w} < {bound} and {c}:"));
                self.line(indent + 1, &format!("{w} += 1"));
                self.block(indent + 1, depth - 1, true);
            }
            9 if in_loop => {
                let c = self.expr(T::B, 2);
                let what = if self.rng.chance(50) { "break" } else { "continue" };
                self.line(indent, &format!("if {c}:"));
                if self.rng.chance(50) {
                    let (name, t) = VARS[self.rng.below(5) as usize];
                    let e = self.expr(t, 1);
                    self.line(indent + 1, &format!("{name} = {e}"));
                }
                self.line(indent + 1, what);
            }
            10 => {
                let c = self.expr(T::B, 1);
                self.line(indent, &format!("if {c}:"));
                self.line(indent + 1, "out[t * 8 + 7] = 12345");
                self.line(indent + 1, "return");
            }
            _ => {
                let (name, t) = self.any_var();
                let e = self.expr(t, 2);
                self.line(indent, &format!("{name} = {e}"));
            }
        }
    }
}

/// A random kernel from a seed.
fn kernel(seed: u64) -> String {
    kernel_for(seed, false)
}

/// A random kernel from a seed; `squeezed` leaves f64 out.
fn kernel_for(seed: u64, squeezed: bool) -> String {
    let mut g = Gen {
        rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
        out: String::new(),
        loops: 0,
        counters: Vec::new(),
        next_counter: 0,
        computed_index: seed.is_multiple_of(2),
        doubles: seed.is_multiple_of(3) && !squeezed,
    };
    g.out.push_str("import wave\n\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n");
    g.line(1, "t = wave.global_id()");
    g.line(1, "a = inp[t]");
    g.line(1, "b = inp[(t + 1) & 63]");
    g.line(1, "c: i32 = 7");
    g.line(1, "u = u32(inp[t ^ 9])");
    g.line(1, "v: u32 = t * 3");
    g.line(1, "x = f32(a) * 0.5");
    g.line(1, "y: f32 = 1.25");
    g.line(1, "h = f16(x) * f16(0.5)");
    if g.doubles {
        g.line(1, "g = f64(x) * f64(0.1) + f64(inp[t ^ 11])");
    }
    g.line(1, "pa = wave.private_array(i32, 4)");
    g.line(1, "pa[1] = a - b");
    g.block(1, 3, false);
    g.line(1, "out[t * 8] = a");
    g.line(1, "out[t * 8 + 1] = b + c");
    g.line(1, "out[t * 8 + 2] = i32(u ^ v)");
    g.line(1, "out[t * 8 + 3] = pa[0] + pa[1] * 3 + pa[2] * 5 + pa[3] * 7");
    g.line(1, if g.doubles { "fout[t * 2] = x + f32(g)" } else { "fout[t * 2] = x" });
    g.line(1, "fout[t * 2 + 1] = y + f32(h)");
    g.out
}

const INP: usize = 0;
const OUT: usize = 256;
const FOUT: usize = OUT + 64 * 8 * 4;
const SIZE: usize = FOUT + 64 * 2 * 4;

fn run(text: &str, level: Level, width: u32, seed: u64) -> Result<Vec<u8>, String> {
    // The verifiers after every pass in any build (a release build of this test runs faster).
    run_with(text, Options { level, verify: true, ..Default::default() }, width, seed)
}

fn run_with(text: &str, options: Options, width: u32, seed: u64) -> Result<Vec<u8>, String> {
    let level = options.level;
    let (out, d) = wave_kernel::compile(text, Language::Python, "random.py", options);
    let Some(out) = out else {
        return Err(format!("does not compile at {level:?}: {d:?}"));
    };
    let mut device = vec![0u8; SIZE];
    let mut rng = Rng(seed | 1);
    for i in 0..64 {
        let v = (rng.below(2001) as i32 - 1000) as u32;
        device[INP + i * 4..INP + i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        kernel: None,
        grid: [2, 1, 1],
        workgroup: None,
        wave_width: width,
        args: vec![
            ("inp".into(), INP as u32),
            ("out".into(), OUT as u32),
            ("fout".into(), FOUT as u32),
        ],
        max_steps: 2_000_000,
        trace: false,
        interrupt: None,
    };
    wave_emulator::run(&out.module, &dispatch, &mut device)
        .map_err(|t| format!("traps at {level:?}: {t}\n{}", out.asm))?;
    Ok(device)
}

fn check(seed: u64) -> Result<(), String> {
    let text = kernel(seed);
    let width = [8, 16, 32][(seed % 3) as usize];
    let reference = run(&text, Level::O0, width, seed)?;
    for level in [Level::O1, Level::O2, Level::O3] {
        let got = run(&text, level, width, seed)?;
        if got != reference {
            let at = got.iter().zip(&reference).position(|(a, b)| a != b).unwrap_or(0) / 4 * 4;
            let word = |m: &[u8]| u32::from_le_bytes([m[at], m[at + 1], m[at + 2], m[at + 3]]);
            return Err(format!(
                "{level:?} differs from O0 at byte {at} (W={width}): {:#x} vs {:#x}",
                word(&got),
                word(&reference)
            ));
        }
    }
    Ok(())
}

#[test]
#[allow(clippy::print_stderr, reason = "a long run says how far it got (`--nocapture`)")]
fn every_level_computes_the_same_results() {
    if let Ok(seed) = std::env::var("WAVE_SEED") {
        let seed: u64 = seed.parse().expect("WAVE_SEED is a number");
        if let Err(e) = check(seed) {
            panic!("seed {seed}: {e}\n{}", kernel(seed));
        }
        return;
    }
    let env = |name: &str| std::env::var(name).ok().and_then(|n| n.parse::<u64>().ok());
    // A long run: `WAVE_DIFF_SECONDS` bounds it by time (the count then defaults to no
    // bound), and `WAVE_DIFF_FROM` starts it at another seed (one range per process).
    let seconds = env("WAVE_DIFF_SECONDS");
    let count = env("WAVE_DIFF_KERNELS").unwrap_or(if seconds.is_some() { u64::MAX } else { 1500 });
    let from = env("WAVE_DIFF_FROM").unwrap_or(1);
    let started = std::time::Instant::now();
    let mut failures = Vec::new();
    let mut checked = 0u64;
    for seed in from..from.saturating_add(count) {
        if seconds.is_some_and(|s| started.elapsed().as_secs() >= s) {
            break;
        }
        checked += 1;
        if let Err(e) = check(seed) {
            failures.push(format!("seed {seed}: {e}"));
            if failures.len() >= 5 {
                break;
            }
        }
    }
    eprintln!(
        "checked {checked} kernels (seeds {from} to {}) in {:.0} s",
        from + checked.saturating_sub(1),
        started.elapsed().as_secs_f64()
    );
    if let Some(first) = failures.first() {
        let seed: u64 =
            first["seed ".len()..].split(':').next().and_then(|s| s.parse().ok()).unwrap_or(0);
        panic!(
            "{} of {checked} kernels differ (replay one with WAVE_SEED=N):\n{}\n\nthe first kernel:\n{}",
            failures.len(),
            failures.join("\n"),
            kernel(seed)
        );
    }
}

#[test]
fn kernels_squeezed_into_eight_registers_spill_and_compute_the_same() {
    let count: u64 = std::env::var("WAVE_DIFF_KERNELS")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
        .map_or(150, |n| n / 10);
    let mut spilled = 0;
    let mut too_big = 0;
    for seed in 1..=count {
        let text = kernel_for(seed, true);
        let reference =
            run(&text, Level::O0, 16, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for level in [Level::O0, Level::O2] {
            let tight = Options { level, max_registers: 8, ..Default::default() };
            let (out, d) = wave_kernel::compile(&text, Language::Python, "random.py", tight);
            if d.iter().any(|d| d.code == "E0411") {
                // So many spill slots that the frames of 32 threads outgrow Local Memory.
                too_big += 1;
                continue;
            }
            if out.as_ref().is_some_and(|o| o.kernels[0].allocation.spill_slots > 0) {
                spilled += 1;
            }
            let got =
                run_with(&text, tight, 16, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            assert!(got == reference, "seed {seed}: {level:?} with 8 registers differs\n{text}");
        }
    }
    assert!(spilled > count / 4, "only {spilled} of {count} kernels spilled");
    assert!(too_big * 20 <= count, "{too_big} of {count} kernels need too much Local Memory");
}

#[test]
fn the_generator_makes_different_kernels_that_compile() {
    let a = kernel(1);
    let b = kernel(2);
    assert_ne!(a, b);
    let mut doubles = 0;
    for seed in 1..20 {
        let text = kernel(seed);
        let (out, d) =
            wave_kernel::compile(&text, Language::Python, "random.py", Options::default());
        let out = out.unwrap_or_else(|| panic!("seed {seed}: {d:?}\n{text}"));
        // A third have an f64 variable, computed in register pairs.
        if text.contains("g = f64(") {
            assert!(out.asm.contains("dmul") && out.asm.contains("dadd"), "seed {seed}");
            doubles += 1;
        }
        assert!(!kernel_for(seed, true).contains("f64"), "seed {seed}: squeezed, no f64");
    }
    assert_eq!(doubles, 6, "seeds 3, 6, ..., 18");
}

#[test]
fn a_pointer_step_that_wraps_to_zero_stays_zero() {
    // (j * 65536) * n with j stepping by 65536: the address does not move (the index wraps
    // to 0 mod 2^32). The reduced pointer's step n * 2^34 must wrap too, not become
    // `n << 34`, which the machine shifts by 34 & 31.
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    t = wave.global_id()\n    n = u32(inp[0] & 7) + 1\n    s: i32 = 0\n    for j in range(0, u32(3) * 65536, 65536):\n        s += inp[(j * 65536) * n + (t & 15)]\n    out[t * 8] = s\n";
    let reference = run(text, Level::O0, 16, 7).expect("runs at O0");
    for level in [Level::O2, Level::O3] {
        assert!(run(text, level, 16, 7).expect("runs") == reference, "{level:?}");
    }
}

/// Runs `text` at O0 and at every other level, at wave widths 8, 16 and 32, asserts that
/// every level leaves the same memory as O0, and returns O0's memory at each width.
fn agree_at_every_level(text: &str, seed: u64) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    for width in [8, 16, 32] {
        let reference = run(text, Level::O0, width, seed).unwrap_or_else(|e| panic!("{e}\n{text}"));
        for level in [Level::O1, Level::O2, Level::O3] {
            let got = run(text, level, width, seed).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert!(got == reference, "{level:?} at W={width} differs\n{text}");
        }
        out.push((width, reference));
    }
    out
}

#[test]
fn neighbouring_elements_read_in_a_loop_agree_at_every_level() {
    // Strength reduction gave `inp[j]` a pointer of its own and then built `inp[j + 1]`'s
    // start before the loop from that pointer's phi (E0410 from the verifier at O2 and O3).
    // The widened generator found it in 5 of 400 kernels, seeds 73, 84, 137, 176 and 304.
    let head = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    t = wave.global_id()\n    n = u32(inp[0] & 15) + 4\n";
    let bodies = [
        // The report's kernel.
        "    s: i32 = 0\n    for j in range(n):\n        s += inp[j] + inp[j + 1]\n    out[t * 8] = s\n",
        // Its unrolled form: `inp[2 j + c]`, the inner loop unrolled at O3.
        "    d: i32 = 0\n    for j in range(n):\n        for c in range(u32(2)):\n            d += inp[j * 2 + c]\n    out[t * 8] = d\n",
        // A 3-point stencil at each thread's own offset.
        "    s: i32 = 0\n    for j in range(n):\n        s += inp[(t & 15) + j] - 2 * inp[(t & 15) + j + 1] + inp[(t & 15) + j + 2]\n    out[t * 8] = s\n",
    ];
    for body in bodies {
        agree_at_every_level(&format!("{head}{body}"), 11);
    }
}

#[test]
fn a_per_wave_minimum_and_maximum_agree_at_every_level() {
    // Each wave's minimum and maximum in two local arrays, read back in one loop: the two
    // local addresses differ by a constant, the shape of the strength-reduction crash above
    // (E0410 at O2 and O3 before its fix).
    let text = "import wave\n\n@wave.kernel(workgroup=64)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    wmin = wave.local_array(i32, 16)\n    wmax = wave.local_array(i32, 16)\n    t = wave.global_id()\n    v = inp[t & 63]\n    a = wave.reduce_min(v)\n    b = wave.reduce_max(v)\n    if wave.lane_id() == 0:\n        wmin[wave.wave_id()] = a\n        wmax[wave.wave_id()] = b\n    wave.barrier()\n    lo: i32 = 2147483647\n    hi: i32 = -2147483647\n    for w in range(wave.workgroup_size() // wave.wave_width()):\n        lo = min(lo, wmin[w])\n        hi = max(hi, wmax[w])\n    out[t * 2] = lo\n    out[t * 2 + 1] = hi\n";
    for (_, reference) in agree_at_every_level(text, 5) {
        let word = |m: &[u8], i: usize| i32::from_le_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
        let inputs: Vec<i32> = (0..64).map(|i| word(&reference, INP + i * 4)).collect();
        let (lo, hi) = (inputs.iter().min().copied(), inputs.iter().max().copied());
        assert_eq!((Some(word(&reference, OUT)), Some(word(&reference, OUT + 4))), (lo, hi));
    }
}

#[test]
fn a_loop_body_that_ends_in_a_break_has_no_dead_latch() {
    // Found by a long run (seed 10009064): every path to the end of the body leaves it (the
    // `continue`s carry the latch's copies themselves, the rest breaks or halts), yet the
    // structurer also put the latch after the final `break`, where it read a register no
    // path had written (the LIR verifier's E0410, at every level).
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    t = wave.global_id()\n    a = inp[t]\n    for k0 in range(t & 7):\n        if inp[k0] != 5:\n            if a >= i32(k0):\n                continue\n            if t != 38:\n                a = a << 1\n                continue\n        if t == 3:\n            return\n        break\n    out[t * 8] = a\n";
    agree_at_every_level(text, 3);
}

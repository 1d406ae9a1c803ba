//! Printing a program in each language, every type written.

use std::fmt::Write as _;

use super::{Expr, Lang, Program, Stmt, T};

pub(super) struct Printer {
    pub(super) lang: Lang,
    pub(super) out: String,
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

    pub(super) fn program(mut self, p: &Program) -> String {
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

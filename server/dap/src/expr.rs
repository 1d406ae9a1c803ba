//! Lane expressions: what breakpoint conditions, log points, `evaluate` and watches are
//! written in. An expression is evaluated in one lane of one wave:
//!
//! - `lane`, `wave` (this lane's and wave's index), integers (`10`, `0x1f`, `-3`), floats (`1.5`);
//! - `r3` (the register's 32 bits as an unsigned integer), `r3.i` (signed), `r3.f` (as binary32);
//! - `r3[5]` (register r3 of lane 5, any view: `r3.f[5]`), `p0` (a predicate), `sr_lane_id` and
//!   every special register;
//! - `device[addr]`, `local[addr]`: the 32-bit word at a byte address (`device.f[r3]`);
//! - `ballot(expr)`: the mask of the active lanes where `expr` holds, `any(expr)`, `all(expr)`;
//! - `! - ~`, `* / % & | ^ << >>`, `+ -`, `== != < <= > >=`, `&&`, `||` and parentheses.
//!
//! Errors say where: `at 4: expected a register, a number or \`(\``.

use std::fmt;

/// A value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer (registers read as unsigned 32-bit unless `.i`).
    Int(i64),
    /// A float (`.f` views, float literals).
    Float(f64),
    /// A truth value (comparisons, predicates).
    Bool(bool),
}

impl Value {
    /// Whether the value counts as true (non-zero).
    pub fn truthy(self) -> bool {
        match self {
            Value::Int(v) => v != 0,
            Value::Float(v) => v != 0.0,
            Value::Bool(b) => b,
        }
    }

    fn int(self) -> i64 {
        match self {
            Value::Int(v) => v,
            Value::Float(v) => v as i64,
            Value::Bool(b) => i64::from(b),
        }
    }

    fn float(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
            Value::Bool(b) => f64::from(u8::from(b)),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v:?}"),
            Value::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// How a register is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Unsigned 32-bit.
    Unsigned,
    /// Signed 32-bit (`.i`).
    Signed,
    /// binary32 (`.f`).
    Float,
}

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal.
    Lit(Value),
    /// `lane`.
    Lane,
    /// `wave`.
    Wave,
    /// `rN` with a view, optionally of another lane (`rN[expr]`).
    Reg(u16, View, Option<Box<Expr>>),
    /// `pN`, optionally of another lane.
    Pred(u8, Option<Box<Expr>>),
    /// A special register by name.
    Special(String),
    /// `device[addr]` or `local[addr]`: the 32-bit word at a byte address, with a view.
    Mem(bool, View, Box<Expr>),
    /// `ballot(e)`, `any(e)`, `all(e)`.
    Vote(&'static str, Box<Expr>),
    /// A unary operator.
    Unary(&'static str, Box<Expr>),
    /// A binary operator.
    Binary(&'static str, Box<Expr>, Box<Expr>),
}

/// Where an expression reads its values from: one wave, seen from one lane.
pub trait Env {
    /// W.
    fn width(&self) -> u32;
    /// The wave's index.
    fn wave(&self) -> u32;
    /// Lanes that execute the next instruction.
    fn active(&self) -> u64;
    /// Register `r` of `lane`, or `None` when the register does not exist.
    fn register(&self, r: u16, lane: u32) -> Option<u32>;
    /// Predicate `p` of `lane`.
    fn predicate(&self, p: u8, lane: u32) -> Option<bool>;
    /// Special register `name` of `lane`.
    fn special(&self, name: &str, lane: u32) -> Option<u32>;
    /// The 32-bit little-endian word at byte `addr` of device (or local) memory.
    fn memory(&self, local: bool, addr: u64) -> Option<u32>;
}

/// Parses an expression.
pub fn parse(text: &str) -> Result<Expr, String> {
    let tokens = lex(text)?;
    let mut p = Parser { tokens, at: 0, text };
    let e = p.or()?;
    match p.tokens.get(p.at) {
        None => Ok(e),
        Some((pos, t)) => Err(format!("at {}: unexpected `{t}`", pos + 1)),
    }
}

fn lex(text: &str) -> Result<Vec<(usize, String)>, String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            while i < bytes.len()
                && ((bytes[i] as char).is_ascii_alphanumeric()
                    || bytes[i] == b'_'
                    || bytes[i] == b'.')
            {
                i += 1;
            }
        } else {
            let two = text.get(i..i + 2).unwrap_or("");
            i +=
                if ["==", "!=", "<=", ">=", "&&", "||", "<<", ">>"].contains(&two) { 2 } else { 1 };
            if !"=!<>&|+-*/%^~()[],".contains(c) {
                return Err(format!("at {}: unexpected character `{c}`", start + 1));
            }
        }
        out.push((start, text[start..i].to_owned()));
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: Vec<(usize, String)>,
    at: usize,
    text: &'a str,
}

const LEVELS: [&[&str]; 5] = [
    &["||"],
    &["&&"],
    &["==", "!=", "<", "<=", ">", ">="],
    &["+", "-"],
    &["*", "/", "%", "&", "|", "^", "<<", ">>"],
];

fn op_name(op: &str) -> &'static str {
    LEVELS.iter().flat_map(|l| l.iter()).find(|o| **o == op).copied().unwrap_or("?")
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.at).map(|(_, t)| t.as_str())
    }

    fn pos(&self) -> usize {
        self.tokens.get(self.at).map_or(self.text.len(), |(p, _)| *p) + 1
    }

    fn expect(&mut self, t: &str) -> Result<(), String> {
        if self.peek() == Some(t) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("at {}: expected `{t}`", self.pos()))
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        self.level(0)
    }

    fn level(&mut self, n: usize) -> Result<Expr, String> {
        if n == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.level(n + 1)?;
        while let Some(op) = self.peek().filter(|t| LEVELS[n].contains(t)).map(op_name) {
            self.at += 1;
            let right = self.level(n + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
            if n == 2 {
                break; // comparisons do not chain
            }
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some("!") => {
                self.at += 1;
                Ok(Expr::Unary("!", Box::new(self.unary()?)))
            }
            Some("-") => {
                self.at += 1;
                Ok(Expr::Unary("-", Box::new(self.unary()?)))
            }
            Some("~") => {
                self.at += 1;
                Ok(Expr::Unary("~", Box::new(self.unary()?)))
            }
            _ => self.primary(),
        }
    }

    fn index(&mut self) -> Result<Option<Box<Expr>>, String> {
        if self.peek() == Some("[") {
            self.at += 1;
            let e = self.or()?;
            self.expect("]")?;
            Ok(Some(Box::new(e)))
        } else {
            Ok(None)
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let pos = self.pos();
        let Some(t) = self.peek().map(str::to_owned) else {
            return Err(format!("at {pos}: expected a value, found the end"));
        };
        self.at += 1;
        if t == "(" {
            let e = self.or()?;
            self.expect(")")?;
            return Ok(e);
        }
        if let Some(v) = number(&t) {
            return Ok(Expr::Lit(v));
        }
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            "lane" => return Ok(Expr::Lane),
            "wave" => return Ok(Expr::Wave),
            "true" => return Ok(Expr::Lit(Value::Bool(true))),
            "false" => return Ok(Expr::Lit(Value::Bool(false))),
            "ballot" | "any" | "all" => {
                let name = match lower.as_str() {
                    "ballot" => "ballot",
                    "any" => "any",
                    _ => "all",
                };
                self.expect("(")?;
                let e = self.or()?;
                self.expect(")")?;
                return Ok(Expr::Vote(name, Box::new(e)));
            }
            _ => {}
        }
        if lower.starts_with("sr_") {
            return Ok(Expr::Special(lower));
        }
        let (base, view) = match lower.rsplit_once('.') {
            Some((b, "f")) => (b, View::Float),
            Some((b, "i")) => (b, View::Signed),
            Some((b, "u")) => (b, View::Unsigned),
            Some(_) => return Err(format!("at {pos}: unknown view in `{t}` (use .u, .i or .f)")),
            None => (lower.as_str(), View::Unsigned),
        };
        if base == "device" || base == "local" {
            self.expect("[")?;
            let addr = self.or()?;
            self.expect("]")?;
            return Ok(Expr::Mem(base == "local", view, Box::new(addr)));
        }
        if let Some(n) = base.strip_prefix('r').and_then(|d| d.parse::<u16>().ok()) {
            return Ok(Expr::Reg(n, view, self.index()?));
        }
        if let Some(n) = base.strip_prefix('p').and_then(|d| d.parse::<u8>().ok()) {
            return Ok(Expr::Pred(n, self.index()?));
        }
        Err(format!(
            "at {pos}: `{t}` is not a register (r0, r3.f, p1), a special register, `lane`, `wave` or a number"
        ))
    }
}

fn number(t: &str) -> Option<Value> {
    let clean = t.replace('_', "");
    if let Some(hex) = clean.strip_prefix("0x").or_else(|| clean.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok().map(Value::Int);
    }
    if clean.starts_with(|c: char| c.is_ascii_digit()) {
        if let Ok(v) = clean.parse::<i64>() {
            return Some(Value::Int(v));
        }
        return clean.parse::<f64>().ok().map(Value::Float);
    }
    None
}

/// Evaluates `e` in `lane`.
pub fn eval(e: &Expr, env: &dyn Env, lane: u32) -> Result<Value, String> {
    Ok(match e {
        Expr::Lit(v) => *v,
        Expr::Lane => Value::Int(i64::from(lane)),
        Expr::Wave => Value::Int(i64::from(env.wave())),
        Expr::Reg(r, view, at) => {
            let l = match at {
                Some(i) => lane_index(eval(i, env, lane)?, env)?,
                None => lane,
            };
            let bits = env
                .register(*r, l)
                .ok_or_else(|| format!("r{r} does not exist in this kernel (see its R)"))?;
            match view {
                View::Unsigned => Value::Int(i64::from(bits)),
                View::Signed => Value::Int(i64::from(bits as i32)),
                View::Float => Value::Float(f64::from(f32::from_bits(bits))),
            }
        }
        Expr::Pred(p, at) => {
            let l = match at {
                Some(i) => lane_index(eval(i, env, lane)?, env)?,
                None => lane,
            };
            Value::Bool(env.predicate(*p, l).ok_or_else(|| format!("there is no predicate p{p}"))?)
        }
        Expr::Mem(local, view, addr) => {
            let a = eval(addr, env, lane)?.int();
            let space = if *local { "local" } else { "device" };
            let bits = u64::try_from(a)
                .ok()
                .and_then(|a| env.memory(*local, a))
                .ok_or_else(|| format!("{space}[{a}] is outside {space} memory"))?;
            match view {
                View::Unsigned => Value::Int(i64::from(bits)),
                View::Signed => Value::Int(i64::from(bits as i32)),
                View::Float => Value::Float(f64::from(f32::from_bits(bits))),
            }
        }
        Expr::Special(name) => Value::Int(i64::from(
            env.special(name, lane).ok_or_else(|| format!("unknown special register `{name}`"))?,
        )),
        Expr::Vote(kind, inner) => {
            let active = env.active();
            let mut mask = 0u64;
            for l in 0..env.width() {
                if active >> l & 1 == 1 && eval(inner, env, l)?.truthy() {
                    mask |= 1 << l;
                }
            }
            match *kind {
                "ballot" => Value::Int(mask as i64),
                "any" => Value::Bool(mask != 0),
                _ => Value::Bool(mask == active),
            }
        }
        Expr::Unary(op, inner) => {
            let v = eval(inner, env, lane)?;
            match (*op, v) {
                ("!", v) => Value::Bool(!v.truthy()),
                ("-", Value::Float(f)) => Value::Float(-f),
                ("-", v) => Value::Int(v.int().wrapping_neg()),
                (_, v) => Value::Int(!v.int()),
            }
        }
        Expr::Binary(op, a, b) => {
            let x = eval(a, env, lane)?;
            if *op == "&&" && !x.truthy() {
                return Ok(Value::Bool(false));
            }
            if *op == "||" && x.truthy() {
                return Ok(Value::Bool(true));
            }
            let y = eval(b, env, lane)?;
            let float = matches!(x, Value::Float(_)) || matches!(y, Value::Float(_));
            match *op {
                "&&" | "||" => Value::Bool(y.truthy()),
                "==" | "!=" | "<" | "<=" | ">" | ">=" => {
                    let ord = if float {
                        x.float().partial_cmp(&y.float())
                    } else {
                        Some(x.int().cmp(&y.int()))
                    };
                    use std::cmp::Ordering::*;
                    Value::Bool(match (*op, ord) {
                        ("==", Some(Equal)) => true,
                        ("!=", o) => o != Some(Equal),
                        ("<", Some(Less)) => true,
                        ("<=", Some(Less | Equal)) => true,
                        (">", Some(Greater)) => true,
                        (">=", Some(Greater | Equal)) => true,
                        _ => false,
                    })
                }
                "+" | "-" | "*" | "/" if float => {
                    let (p, q) = (x.float(), y.float());
                    Value::Float(match *op {
                        "+" => p + q,
                        "-" => p - q,
                        "*" => p * q,
                        _ => p / q,
                    })
                }
                _ => {
                    let (p, q) = (x.int(), y.int());
                    Value::Int(match *op {
                        "+" => p.wrapping_add(q),
                        "-" => p.wrapping_sub(q),
                        "*" => p.wrapping_mul(q),
                        "/" | "%" if q == 0 => return Err("division by zero".into()),
                        "/" => p.wrapping_div(q),
                        "%" => p.wrapping_rem(q),
                        "&" => p & q,
                        "|" => p | q,
                        "^" => p ^ q,
                        "<<" => p.wrapping_shl(q as u32),
                        _ => p.wrapping_shr(q as u32),
                    })
                }
            }
        }
    })
}

fn lane_index(v: Value, env: &dyn Env) -> Result<u32, String> {
    let i = v.int();
    if i < 0 || i >= i64::from(env.width()) {
        return Err(format!("lane {i} is outside the wave (W = {})", env.width()));
    }
    Ok(i as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake;

    impl Env for Fake {
        fn width(&self) -> u32 {
            8
        }
        fn wave(&self) -> u32 {
            2
        }
        fn active(&self) -> u64 {
            0b0111_1111
        }
        fn register(&self, r: u16, lane: u32) -> Option<u32> {
            match r {
                3 => Some(lane * 4),
                4 => Some(1.5f32.to_bits()),
                5 => Some(-2i32 as u32),
                _ => None,
            }
        }
        fn predicate(&self, p: u8, lane: u32) -> Option<bool> {
            (p < 4).then_some(lane.is_multiple_of(2))
        }
        fn special(&self, name: &str, lane: u32) -> Option<u32> {
            (name == "sr_lane_id").then_some(lane)
        }
        fn memory(&self, local: bool, addr: u64) -> Option<u32> {
            (addr < 64).then_some(if local { 7 } else { addr as u32 * 10 })
        }
    }

    fn at(text: &str, lane: u32) -> Result<Value, String> {
        eval(&parse(text)?, &Fake, lane)
    }

    #[test]
    fn lane_expressions_evaluate_per_lane() {
        assert_eq!(at("lane == 5", 5), Ok(Value::Bool(true)));
        assert_eq!(at("r3 > 10", 3), Ok(Value::Bool(true)));
        assert_eq!(at("r3 > 10", 2), Ok(Value::Bool(false)));
        assert_eq!(at("p0", 2), Ok(Value::Bool(true)));
        assert_eq!(at("!p0 && lane < 4", 1), Ok(Value::Bool(true)));
        assert_eq!(at("r3[5]", 0), Ok(Value::Int(20)));
        assert_eq!(at("r4.f * 2", 0), Ok(Value::Float(3.0)));
        assert_eq!(at("r5.i", 0), Ok(Value::Int(-2)));
        assert_eq!(at("r5", 0), Ok(Value::Int(0xffff_fffe)));
        assert_eq!(at("ballot(p0)", 0), Ok(Value::Int(0b0101_0101)), "lane 7 is inactive");
        assert_eq!(at("any(r3 == 28)", 0), Ok(Value::Bool(false)), "lane 7 is inactive");
        assert_eq!(at("(r3 + 4) % 8 == 0 || wave == 9", 1), Ok(Value::Bool(true)));
        assert_eq!(at("sr_lane_id << 2 == r3", 6), Ok(Value::Bool(true)));
        assert_eq!(at("0x10 - 1", 0), Ok(Value::Int(15)));
        assert_eq!(at("device[r3]", 2), Ok(Value::Int(80)));
        assert_eq!(at("local[0] + 1", 0), Ok(Value::Int(8)));
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(at("r3 >", 0), Err("at 5: expected a value, found the end".into()));
        assert_eq!(at("(lane", 0), Err("at 6: expected `)`".into()));
        assert!(at("q7 == 1", 0).expect_err("q7").starts_with("at 1: `q7` is not a register"));
        assert_eq!(at("r9", 0), Err("r9 does not exist in this kernel (see its R)".into()));
        assert_eq!(at("r3[8]", 0), Err("lane 8 is outside the wave (W = 8)".into()));
        assert_eq!(at("lane $ 2", 0), Err("at 6: unexpected character `$`".into()));
        assert_eq!(at("1 / 0", 0), Err("division by zero".into()));
        assert_eq!(at("lane lane", 0), Err("at 6: unexpected `lane`".into()));
        assert_eq!(at("device[100]", 0), Err("device[100] is outside device memory".into()));
    }
}

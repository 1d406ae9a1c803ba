//! MIR from its text: the inverse of [`super::print`], so that a pass can be tested on a
//! function written by hand (`tests/opt/<pass>/*.mir`), as Cranelift's filetests do.
//!
//! The text is what `wave compile --emit mir` prints, plus one line the printer does not
//! write: `private NAME: TYPE[LEN]` after the `kernel` line declares a private array (the
//! printer names an array at each access but leaves its length to the HIR). Lines may carry
//! `;` comments. Phis get variables of their own (the printer does not name them), so
//! passes that rebuild SSA keep each phi apart.

use std::collections::HashMap;

use crate::hir::{AtomicOp, BinOp, Intrinsic, MathFn, Scalar, Special, Ty, UnOp, VarId, WaveOp};

use super::{Block, BlockId, Func, Inst, Op, Phi, PrivateArray, Space, Term, Value};

/// Why the text is not MIR: the 1-based line and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Variables given to phis start here, far from the private arrays' numbers.
const PHI_VARS: u32 = 1 << 30;

/// Parses the functions of `text`.
pub fn parse(text: &str) -> Result<Vec<Func>, ParseError> {
    let mut funcs = Vec::new();
    let mut current: Option<Parser> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |message: String| ParseError { line, message };
        let l = raw.split(';').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        match current.as_mut() {
            None => {
                current = Some(Parser::header(l).map_err(err)?);
            }
            Some(p) => {
                if l == "}" {
                    let done = current.take().map(|p| p.finish()).transpose().map_err(err)?;
                    funcs.extend(done);
                } else {
                    p.line(l).map_err(err)?;
                }
            }
        }
    }
    if current.is_some() {
        return Err(ParseError {
            line: text.lines().count(),
            message: "the last kernel has no closing `}`".into(),
        });
    }
    Ok(funcs)
}

/// One function being read.
struct Parser {
    func: Func,
    /// The block being filled: its phis and instructions, before its terminator.
    open: Option<Block>,
    /// Private arrays by name.
    private: HashMap<String, VarId>,
}

fn scalar(name: &str) -> Result<Scalar, String> {
    Scalar::from_name(name).ok_or_else(|| format!("`{name}` is not a type"))
}

/// A type as `Ty`'s `Display` writes it.
fn ty(text: &str) -> Result<Ty, String> {
    let text = text.trim();
    if text == "()" {
        return Ok(Ty::Unit);
    }
    let array = |rest: &str| -> Result<(Scalar, u32), String> {
        let (s, n) = rest.trim_end_matches(']').split_once('[').ok_or("expected `TYPE[LEN]`")?;
        let n = n.parse().map_err(|_| format!("`{n}` is not a length"))?;
        Ok((scalar(s.trim())?, n))
    };
    if let Some(rest) = text.strip_prefix("local ") {
        let (s, n) = array(rest)?;
        return Ok(Ty::Local(s, n));
    }
    if let Some(rest) = text.strip_prefix("private ") {
        let (s, n) = array(rest)?;
        return Ok(Ty::Private(s, n));
    }
    if let Some(s) = text.strip_suffix("[]") {
        return Ok(Ty::Buffer(scalar(s)?));
    }
    Ok(Ty::Scalar(scalar(text)?))
}

/// The most values a parsed function may number (the type table has one entry per number).
const MAX_VALUES: u32 = 1 << 20;

fn value(text: &str) -> Result<Value, String> {
    let v = text
        .trim()
        .strip_prefix('%')
        .and_then(|n| n.parse().ok())
        .map(Value)
        .ok_or_else(|| format!("expected a value like `%3`, found `{}`", text.trim()))?;
    if v.0 >= MAX_VALUES {
        return Err(format!("value `%{}` is past the limit of {MAX_VALUES} values", v.0));
    }
    Ok(v)
}

fn block(text: &str) -> Result<BlockId, String> {
    text.trim()
        .strip_prefix("bb")
        .and_then(|n| n.parse().ok())
        .map(BlockId)
        .ok_or_else(|| format!("expected a block like `bb2`, found `{}`", text.trim()))
}

fn values(text: &str) -> Result<Vec<Value>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',').map(value).collect()
}

/// Exactly `N` comma-separated values.
fn operands<const N: usize>(text: &str) -> Result<[Value; N], String> {
    let v = values(text)?;
    v.try_into().map_err(|v: Vec<Value>| format!("expected {N} operands, found {}", v.len()))
}

fn binary(name: &str) -> Option<BinOp> {
    BinOp::ALL.into_iter().find(|op| format!("{op:?}").eq_ignore_ascii_case(name))
}

fn unary(name: &str) -> Option<UnOp> {
    UnOp::ALL.into_iter().find(|op| format!("{op:?}").eq_ignore_ascii_case(name))
}

fn atomic(name: &str) -> Option<AtomicOp> {
    AtomicOp::ALL.into_iter().find(|op| format!("{op:?}").eq_ignore_ascii_case(name))
}

fn special(name: &str) -> Option<Special> {
    let mut all = vec![Special::LaneId, Special::WaveId, Special::WaveWidth];
    for d in 0..3 {
        all.extend([
            Special::ThreadId(d),
            Special::WorkgroupId(d),
            Special::WorkgroupSize(d),
            Special::GridSize(d),
            Special::GlobalId(d),
        ]);
    }
    all.into_iter().find(|s| s.name() == name)
}

fn intrinsic(name: &str) -> Option<Intrinsic> {
    let mut all = vec![Intrinsic::Barrier, Intrinsic::Fence, Intrinsic::Min, Intrinsic::Max];
    all.extend(AtomicOp::ALL.map(Intrinsic::Atomic));
    all.extend(WaveOp::ALL.map(Intrinsic::Wave));
    all.extend(MathFn::ALL.map(Intrinsic::Math));
    all.into_iter().find(|i| crate::hir::intrinsic_name(*i) == name)
}

impl Parser {
    /// `kernel NAME(p: TY, ...) [local N] {`
    fn header(l: &str) -> Result<Parser, String> {
        let rest = l
            .strip_prefix("kernel ")
            .ok_or_else(|| format!("expected `kernel NAME(...) {{`, found `{l}`"))?;
        let rest = rest.strip_suffix('{').ok_or("the kernel line must end with `{`")?.trim();
        let (name, rest) = rest.split_once('(').ok_or("expected `(` after the kernel's name")?;
        let (params, rest) = rest.rsplit_once(')').ok_or("expected `)` after the parameters")?;
        let mut func = Func {
            name: name.trim().to_owned(),
            params: Vec::new(),
            blocks: Vec::new(),
            types: Vec::new(),
            local_memory: 0,
            private: Vec::new(),
            workgroup_size: None,
            names: HashMap::new(),
        };
        for p in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (n, t) = p.split_once(':').ok_or_else(|| format!("parameter `{p}` has no type"))?;
            func.params.push((n.trim().to_owned(), ty(t)?));
        }
        let rest = rest.trim();
        if let Some(n) = rest.strip_prefix("local ") {
            func.local_memory =
                n.trim().parse().map_err(|_| format!("`{n}` is not a byte count"))?;
        } else if !rest.is_empty() {
            return Err(format!("unexpected `{rest}` in the kernel line"));
        }
        Ok(Parser { func, open: None, private: HashMap::new() })
    }

    fn set_type(&mut self, v: Value, t: Ty) {
        let i = v.0 as usize;
        if self.func.types.len() <= i {
            self.func.types.resize(i + 1, Ty::Unit);
        }
        self.func.types[i] = t;
    }

    fn space(&self, text: &str) -> Result<(Space, String), String> {
        // `device %a`, `local %a`, `private NAME %a`
        if let Some(rest) = text.strip_prefix("device ") {
            return Ok((Space::Device, rest.to_owned()));
        }
        if let Some(rest) = text.strip_prefix("local ") {
            return Ok((Space::Local, rest.to_owned()));
        }
        if let Some(rest) = text.strip_prefix("private ") {
            let (name, rest) = rest.split_once(' ').ok_or("expected `private NAME %a`")?;
            let var = self.private.get(name).copied().ok_or_else(|| {
                format!(
                    "private array `{name}` is not declared: add `private {name}: TYPE[LEN]` after the kernel line"
                )
            })?;
            return Ok((Space::Private(var), rest.to_owned()));
        }
        Err(format!("unknown address space in `{text}` (device, local or private NAME)"))
    }

    fn line(&mut self, l: &str) -> Result<(), String> {
        if let Some(rest) = l.strip_prefix("private ") {
            if self.open.is_some() || !self.func.blocks.is_empty() {
                return Err("private arrays are declared before the first block".into());
            }
            let (name, t) = rest.split_once(':').ok_or("expected `private NAME: TYPE[LEN]`")?;
            let Ty::Private(elem, len) = ty(&format!("private {}", t.trim()))? else {
                return Err("expected `private NAME: TYPE[LEN]`".into());
            };
            let var = VarId(self.func.private.len() as u32);
            self.private.insert(name.trim().to_owned(), var);
            self.func.private.push(PrivateArray { var, name: name.trim().to_owned(), elem, len });
            return Ok(());
        }
        if let Some(label) = l.strip_suffix(':') {
            if self.open.is_some() {
                return Err(format!(
                    "block `{label}` starts before the last one ended (jump, branch or return)"
                ));
            }
            let id = block(label)?;
            if id.0 as usize != self.func.blocks.len() {
                return Err(format!(
                    "blocks are numbered in order: expected bb{}, found {label}",
                    self.func.blocks.len()
                ));
            }
            self.open = Some(Block { phis: Vec::new(), insts: Vec::new(), term: Term::Return });
            return Ok(());
        }
        if self.open.is_none() {
            return Err(format!("`{l}` is outside a block"));
        }
        // Terminators.
        let term = if l == "return" {
            Some(Term::Return)
        } else if let Some(t) = l.strip_prefix("jump ") {
            Some(Term::Jump(block(t)?))
        } else if let Some(rest) = l.strip_prefix("branch ") {
            let parts: Vec<&str> = rest.split(',').collect();
            let [c, a, b] = parts[..] else {
                return Err("expected `branch %c, bbA, bbB`".into());
            };
            Some(Term::Branch(value(c)?, block(a)?, block(b)?))
        } else {
            None
        };
        if let Some(term) = term {
            let mut b = self.open.take().ok_or("no block")?;
            b.term = term;
            self.func.blocks.push(b);
            return Ok(());
        }
        // `%d = ...` or an instruction without a result.
        let (dst, rest) = match l.split_once(" = ") {
            Some((d, rest)) if d.starts_with('%') => (Some(value(d)?), rest.trim()),
            _ => (None, l),
        };
        if let Some(rest) = rest.strip_prefix("phi ") {
            let dst = dst.ok_or("a phi defines a value")?;
            let (t, args) = rest.split_once('[').ok_or("expected `phi TYPE [bbN: %v, ...]`")?;
            self.set_type(dst, ty(t)?);
            let mut list = Vec::new();
            for arg in args.trim_end_matches(']').split(',').filter(|a| !a.trim().is_empty()) {
                let (b, v) = arg.split_once(':').ok_or("expected `bbN: %v` in a phi")?;
                list.push((block(b)?, value(v)?));
            }
            let b = self.open.as_mut().ok_or("no block")?;
            if !b.insts.is_empty() {
                return Err("phis come first in a block".into());
            }
            b.phis.push(Phi { dst, var: VarId(PHI_VARS + dst.0), args: list });
            return Ok(());
        }
        // The result type after ` : `.
        let (body, t) = match rest.rsplit_once(" : ") {
            Some((body, t)) => (body.trim(), Some(ty(t)?)),
            None => (rest, None),
        };
        if dst.is_some() != t.is_some() {
            return Err("an instruction with a result gives its type (`%d = ... : TYPE`), one without gives none".into());
        }
        let (word, args) = body.split_once(' ').unwrap_or((body, ""));
        let op = match word {
            "const" => match t {
                Some(Ty::Scalar(Scalar::Bool)) => Op::Bool(
                    args.parse().map_err(|_| format!("`{args}` is not `true` or `false`"))?,
                ),
                Some(Ty::Scalar(s)) if s.is_float() => {
                    Op::Float(args.parse().map_err(|_| format!("`{args}` is not a number"))?)
                }
                _ => Op::Int(args.parse().map_err(|_| format!("`{args}` is not an integer"))?),
            },
            "param" => Op::Param(args.parse().map_err(|_| format!("`{args}` is not a number"))?),
            "special" => {
                Op::Special(special(args).ok_or_else(|| format!("no special value `{args}`"))?)
            }
            "cast" => Op::Cast(value(args)?),
            "select" => {
                let [c, a, b] = operands::<3>(args)?;
                Op::Select(c, a, b)
            }
            "call" => {
                let (name, list) = args.split_once('(').ok_or("expected `call NAME(%a, ...)`")?;
                let i = intrinsic(name.trim())
                    .ok_or_else(|| format!("no intrinsic `{}`", name.trim()))?;
                Op::Call(i, values(list.trim_end_matches(')'))?)
            }
            _ => {
                if let Some(space) = word.strip_prefix("load.") {
                    let (s, rest) = self.space(&format!("{space} {args}"))?;
                    Op::Load(s, value(&rest)?)
                } else if let Some(space) = word.strip_prefix("store.") {
                    let (s, rest) = self.space(&format!("{space} {args}"))?;
                    let [a, x] = operands::<2>(&rest)?;
                    Op::Store(s, a, x)
                } else if let Some(rest) = word.strip_prefix("atomic_") {
                    let (name, space) = rest.split_once('.').ok_or("expected `atomic_OP.SPACE`")?;
                    let op = atomic(name).ok_or_else(|| format!("no atomic `{name}`"))?;
                    let (s, rest) = self.space(&format!("{space} {args}"))?;
                    let [a, x] = operands::<2>(&rest)?;
                    Op::Atomic(op, s, a, x)
                } else if let Some(op) = binary(word) {
                    let [a, b] = operands::<2>(args)?;
                    Op::Binary(op, a, b)
                } else if let Some(op) = unary(word) {
                    Op::Unary(op, value(args)?)
                } else {
                    return Err(format!("unknown operation `{word}`"));
                }
            }
        };
        if let (Some(d), Some(t)) = (dst, t) {
            self.set_type(d, t);
        }
        let b = self.open.as_mut().ok_or("no block")?;
        b.insts.push(Inst { dst, op, span: 0..0 });
        Ok(())
    }

    fn finish(self) -> Result<Func, String> {
        if self.open.is_some() {
            return Err("the last block has no terminator (jump, branch or return)".into());
        }
        if self.func.blocks.is_empty() {
            return Err(format!("kernel `{}` has no blocks", self.func.name));
        }
        // Every value read is defined somewhere (the passes index the type table by it), and
        // every block a branch names exists.
        let mut defined = std::collections::HashSet::new();
        for b in &self.func.blocks {
            defined.extend(b.phis.iter().map(|p| p.dst));
            defined.extend(b.insts.iter().filter_map(|i| i.dst));
        }
        let blocks = self.func.blocks.len();
        for b in &self.func.blocks {
            let reads = b
                .phis
                .iter()
                .flat_map(|p| p.args.iter().map(|(_, v)| *v))
                .chain(b.insts.iter().flat_map(|i| i.op.operands()))
                .chain(match b.term {
                    Term::Branch(c, ..) => Some(c),
                    Term::Jump(_) | Term::Return => None,
                });
            for v in reads {
                if !defined.contains(&v) {
                    return Err(format!("`%{}` is read but never defined", v.0));
                }
            }
            let targets = b
                .term
                .successors()
                .into_iter()
                .chain(b.phis.iter().flat_map(|p| p.args.iter().map(|(b, _)| *b)));
            for t in targets {
                if t.0 as usize >= blocks {
                    return Err(format!("`bb{}` is named but the kernel has {blocks} blocks", t.0));
                }
            }
        }
        Ok(self.func)
    }
}

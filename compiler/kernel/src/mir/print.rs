//! MIR as text (what `wave compile --emit mir` prints), and the source span of each printed
//! line for the previews.

use std::fmt::Write as _;

use wave_diag::Span;

use super::{Func, Op, Space, Term, Value};
use crate::hir;

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

//! Algebraic identities on integers and `bool`s (O2).

use std::collections::HashMap;

use super::dce::dce;
use super::fold::{scalar_of, wrap};
use super::substitute;
use crate::hir::{BinOp, Scalar};
use crate::mir::{Func, Op, Value};

/// Algebraic identities on integers and `bool`s: `x + 0`, `x - 0`, `x * 1`, `x << 0`,
/// `x >> 0`, `x | 0`, `x ^ 0`, `x & -1`, `b and True`, `b or False` are `x` (or `b`).
/// Floats keep theirs: `x + 0.0` is not `x` when `x` is `-0.0`.
pub fn identities(f: &mut Func) -> bool {
    let mut consts: HashMap<Value, Op> = HashMap::new();
    for b in &f.blocks {
        for inst in &b.insts {
            if let (Some(d), op @ (Op::Int(_) | Op::Bool(_))) = (inst.dst, &inst.op) {
                consts.insert(d, op.clone());
            }
        }
    }
    let int = |v: &Value, s: Scalar| match consts.get(v) {
        Some(Op::Int(x)) => Some(wrap(s, *x)),
        _ => None,
    };
    let boolean = |v: &Value| match consts.get(v) {
        Some(Op::Bool(x)) => Some(*x),
        _ => None,
    };
    let mut subst: HashMap<Value, Value> = HashMap::new();
    for b in &f.blocks {
        for inst in &b.insts {
            let Some(d) = inst.dst else { continue };
            let Some(s) = scalar_of(f, d) else { continue };
            let same = match &inst.op {
                Op::Binary(op, a, c) if s.is_int() => {
                    let all_ones = wrap(s, -1);
                    match (op, int(a, s), int(c, s)) {
                        (BinOp::Add | BinOp::Or | BinOp::Xor, Some(0), _) => Some(*c),
                        (BinOp::Mul, Some(1), _) => Some(*c),
                        (BinOp::And, Some(x), _) if x == all_ones => Some(*c),
                        (
                            BinOp::Add
                            | BinOp::Sub
                            | BinOp::Or
                            | BinOp::Xor
                            | BinOp::Shl
                            | BinOp::Shr,
                            _,
                            Some(0),
                        ) => Some(*a),
                        (BinOp::Mul | BinOp::Div, _, Some(1)) => Some(*a),
                        (BinOp::And, _, Some(x)) if x == all_ones => Some(*a),
                        _ => None,
                    }
                }
                Op::Binary(op, a, c) if s == Scalar::Bool => match (op, boolean(a), boolean(c)) {
                    (BinOp::LogicAnd, Some(true), _) | (BinOp::LogicOr, Some(false), _) => Some(*c),
                    (BinOp::LogicAnd, _, Some(true)) | (BinOp::LogicOr, _, Some(false)) => Some(*a),
                    _ => None,
                },
                _ => None,
            };
            if let Some(v) = same {
                subst.insert(d, v);
            }
        }
    }
    if subst.is_empty() {
        return false;
    }
    substitute(f, &subst);
    dce(f);
    true
}

//! Scalar passes (O2): sparse conditional constant propagation, strength reduction,
//! algebraic identities and reassociation.

use std::collections::HashMap;

use super::*;
use crate::hir::{BinOp, Scalar, Ty, UnOp};
use crate::mir::{BlockId, Func, Inst, Op, Phi, Term, Value};

// -------------------------------------------------------------------------------------------
// Sparse conditional constant propagation and strength reduction (O2).

/// A lattice value: not known yet, one constant, or more than one value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Lat {
    Top,
    Int(i64),
    Float(f64),
    Bool(bool),
    Bottom,
}

pub(super) fn meet(a: Lat, b: Lat) -> Lat {
    match (a, b) {
        (Lat::Top, x) | (x, Lat::Top) => x,
        (x, y) if x == y => x,
        _ => Lat::Bottom,
    }
}

/// The integer `v` as a value of `s` (wrapping to 32 bits, signed for i32).
pub(super) fn wrap(s: Scalar, v: i64) -> i64 {
    match s {
        Scalar::I32 => i64::from(v as i32),
        _ => i64::from(v as u32),
    }
}

/// Folds a binary operation on constants of type `s`, or `None` when it is not folded
/// (division by zero and `MIN / -1` keep their run-time behaviour; f16/f64 are not folded).
pub(super) fn fold(op: BinOp, s: Scalar, a: Lat, b: Lat) -> Option<Lat> {
    use BinOp::*;
    match (a, b) {
        (Lat::Int(x), Lat::Int(y)) if s.is_int() => {
            let (x, y) = (wrap(s, x), wrap(s, y));
            let signed = s == Scalar::I32;
            let ux = x as u32;
            let uy = y as u32;
            Some(match op {
                Add => Lat::Int(wrap(s, x.wrapping_add(y))),
                Sub => Lat::Int(wrap(s, x.wrapping_sub(y))),
                Mul => Lat::Int(wrap(s, x.wrapping_mul(y))),
                Div | Rem if y == 0 || (signed && x == i64::from(i32::MIN) && y == -1) => {
                    return None;
                }
                Div if signed => Lat::Int(wrap(s, x / y)),
                Div => Lat::Int(i64::from(ux / uy)),
                Rem if signed => Lat::Int(wrap(s, x % y)),
                Rem => Lat::Int(i64::from(ux % uy)),
                And => Lat::Int(wrap(s, x & y)),
                Or => Lat::Int(wrap(s, x | y)),
                Xor => Lat::Int(wrap(s, x ^ y)),
                Shl => Lat::Int(wrap(s, i64::from(ux.wrapping_shl(uy & 31)))),
                Shr if signed => Lat::Int(i64::from((x as i32).wrapping_shr(uy & 31))),
                Shr => Lat::Int(i64::from(ux.wrapping_shr(uy & 31))),
                Lt => Lat::Bool(if signed { x < y } else { ux < uy }),
                Le => Lat::Bool(if signed { x <= y } else { ux <= uy }),
                Gt => Lat::Bool(if signed { x > y } else { ux > uy }),
                Ge => Lat::Bool(if signed { x >= y } else { ux >= uy }),
                Eq => Lat::Bool(x == y),
                Ne => Lat::Bool(x != y),
                LogicAnd | LogicOr => return None,
            })
        }
        (Lat::Float(x), Lat::Float(y)) if s == Scalar::F32 => {
            let (x, y) = (x as f32, y as f32);
            Some(match op {
                Add => Lat::Float(f64::from(x + y)),
                Sub => Lat::Float(f64::from(x - y)),
                Mul => Lat::Float(f64::from(x * y)),
                Lt => Lat::Bool(x < y),
                Le => Lat::Bool(x <= y),
                Gt => Lat::Bool(x > y),
                Ge => Lat::Bool(x >= y),
                Eq => Lat::Bool(x == y),
                Ne => Lat::Bool(x != y),
                _ => return None,
            })
        }
        (Lat::Bool(x), Lat::Bool(y)) => Some(match op {
            LogicAnd => Lat::Bool(x && y),
            LogicOr => Lat::Bool(x || y),
            Eq => Lat::Bool(x == y),
            Ne => Lat::Bool(x != y),
            _ => return None,
        }),
        _ => None,
    }
}

pub(super) fn scalar_of(f: &Func, v: Value) -> Option<Scalar> {
    match f.types.get(v.0 as usize) {
        Some(Ty::Scalar(s)) => Some(*s),
        _ => None,
    }
}

/// Sparse conditional constant propagation: values proven constant become constants, and
/// branches on constants become jumps, dropping the blocks and phi arguments they no longer
/// reach.
pub fn sccp(f: &mut Func) -> bool {
    let n = f.blocks.len();
    let mut lat = vec![Lat::Top; f.types.len()];
    let mut executable = vec![false; n];
    executable[0] = true;
    let rpo = f.reverse_postorder();
    // Edges that can be taken, by (from, to).
    let mut edges: std::collections::HashSet<(BlockId, BlockId)> = Default::default();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &rpo {
            if !executable[b.0 as usize] {
                continue;
            }
            let block = &f.blocks[b.0 as usize];
            for phi in &block.phis {
                let mut v = Lat::Top;
                for (p, a) in &phi.args {
                    if edges.contains(&(*p, b)) {
                        v = meet(v, lat[a.0 as usize]);
                    }
                }
                let new = meet(lat[phi.dst.0 as usize], v);
                if new != lat[phi.dst.0 as usize] {
                    lat[phi.dst.0 as usize] = new;
                    changed = true;
                }
            }
            for inst in &block.insts {
                let Some(d) = inst.dst else { continue };
                let get = |v: &Value| lat[v.0 as usize];
                let v = match &inst.op {
                    Op::Int(x) => Lat::Int(*x),
                    Op::Float(x) => Lat::Float(*x),
                    Op::Bool(x) => Lat::Bool(*x),
                    Op::Binary(op, a, b2) => match (get(a), get(b2)) {
                        (Lat::Top, _) | (_, Lat::Top) => Lat::Top,
                        (x, y) => {
                            scalar_of(f, *a).and_then(|s| fold(*op, s, x, y)).unwrap_or(Lat::Bottom)
                        }
                    },
                    Op::Unary(UnOp::Not, a) => match get(a) {
                        Lat::Bool(x) => Lat::Bool(!x),
                        Lat::Top => Lat::Top,
                        _ => Lat::Bottom,
                    },
                    Op::Select(c, a, b2) => match get(c) {
                        Lat::Bool(true) => get(a),
                        Lat::Bool(false) => get(b2),
                        Lat::Top => Lat::Top,
                        _ => meet(get(a), get(b2)),
                    },
                    _ => Lat::Bottom,
                };
                let new = meet(lat[d.0 as usize], v);
                if new != lat[d.0 as usize] {
                    lat[d.0 as usize] = new;
                    changed = true;
                }
            }
            let targets: Vec<BlockId> = match &block.term {
                Term::Jump(t) => vec![*t],
                Term::Branch(c, t, e) => match lat[c.0 as usize] {
                    Lat::Bool(true) => vec![*t],
                    Lat::Bool(false) => vec![*e],
                    Lat::Top => Vec::new(),
                    _ => vec![*t, *e],
                },
                Term::Return => Vec::new(),
            };
            for t in targets {
                if edges.insert((b, t)) {
                    changed = true;
                }
                if !executable[t.0 as usize] {
                    executable[t.0 as usize] = true;
                    changed = true;
                }
            }
        }
    }
    // Rewrite: constants, jumps, and the edges and blocks that are gone.
    let mut rewrote = false;
    for (block, _) in f.blocks.iter_mut().zip(&executable).filter(|(_, e)| **e) {
        for inst in &mut block.insts {
            let Some(d) = inst.dst else { continue };
            if inst.op.has_effect() || matches!(inst.op, Op::Int(_) | Op::Float(_) | Op::Bool(_)) {
                continue;
            }
            let c = match lat[d.0 as usize] {
                Lat::Int(x) => Op::Int(x),
                Lat::Float(x) => Op::Float(x),
                Lat::Bool(x) => Op::Bool(x),
                _ => continue,
            };
            inst.op = c;
            rewrote = true;
        }
        let mut consts = Vec::new();
        block.phis.retain(|phi: &Phi| {
            let c = match lat[phi.dst.0 as usize] {
                Lat::Int(x) => Op::Int(x),
                Lat::Float(x) => Op::Float(x),
                Lat::Bool(x) => Op::Bool(x),
                _ => return true,
            };
            consts.push(Inst { dst: Some(phi.dst), op: c, span: 0..0 });
            false
        });
        if !consts.is_empty() {
            rewrote = true;
            consts.extend(std::mem::take(&mut block.insts));
            block.insts = consts;
        }
        if let Term::Branch(c, t, e) = block.term.clone() {
            match lat[c.0 as usize] {
                Lat::Bool(true) => {
                    block.term = Term::Jump(t);
                    rewrote = true;
                }
                Lat::Bool(false) => {
                    block.term = Term::Jump(e);
                    rewrote = true;
                }
                _ => {}
            }
        }
    }
    if rewrote {
        crate::mir::remove_unreachable(f);
        // Phi arguments only from the predecessors that remain.
        let preds = f.predecessors();
        for (b, block) in f.blocks.iter_mut().enumerate() {
            for phi in &mut block.phis {
                phi.args.retain(|(p, _)| preds[b].contains(p));
            }
        }
    }
    rewrote
}

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

/// Strength reduction: `x * 2^k` becomes `x << k`, and for `u32`, `x / 2^k` becomes
/// `x >> k` and `x % 2^k` becomes `x & (2^k - 1)`.
pub fn strength_reduce(f: &mut Func) -> bool {
    let mut consts: HashMap<Value, i64> = HashMap::new();
    for b in &f.blocks {
        for inst in &b.insts {
            if let (Some(d), Op::Int(x)) = (inst.dst, &inst.op) {
                consts.insert(d, *x);
            }
        }
    }
    let pow2 =
        |v: &Value| consts.get(v).copied().filter(|x| *x > 1 && (*x as u64).is_power_of_two());
    let mut changed = false;
    let mut new_types = Vec::new();
    let base = f.types.len() as u32;
    for b in &mut f.blocks {
        let mut out = Vec::with_capacity(b.insts.len());
        for inst in std::mem::take(&mut b.insts) {
            let s = inst.dst.and_then(|d| match f.types[d.0 as usize] {
                Ty::Scalar(s) => Some(s),
                _ => None,
            });
            let rewrite = match (&inst.op, s) {
                (Op::Binary(BinOp::Mul, a, c), Some(s)) if s.is_int() && pow2(c).is_some() => {
                    pow2(c).map(|k| (BinOp::Shl, *a, i64::from(k.trailing_zeros()), s))
                }
                (Op::Binary(BinOp::Mul, c, a), Some(s)) if s.is_int() && pow2(c).is_some() => {
                    pow2(c).map(|k| (BinOp::Shl, *a, i64::from(k.trailing_zeros()), s))
                }
                (Op::Binary(BinOp::Div, a, c), Some(Scalar::U32)) => {
                    pow2(c).map(|k| (BinOp::Shr, *a, i64::from(k.trailing_zeros()), Scalar::U32))
                }
                (Op::Binary(BinOp::Rem, a, c), Some(Scalar::U32)) => {
                    pow2(c).map(|k| (BinOp::And, *a, k - 1, Scalar::U32))
                }
                _ => None,
            };
            match rewrite {
                Some((op, a, k, s)) => {
                    let kv = Value(base + new_types.len() as u32);
                    new_types.push(Ty::Scalar(s));
                    out.push(Inst { dst: Some(kv), op: Op::Int(k), span: inst.span.clone() });
                    out.push(Inst { dst: inst.dst, op: Op::Binary(op, a, kv), span: inst.span });
                    changed = true;
                }
                None => out.push(inst),
            }
        }
        b.insts = out;
    }
    f.types.extend(new_types);
    changed
}

// -------------------------------------------------------------------------------------------
// Reassociation (O2).

/// Moves integer constants outward so that addresses become `x + constant`, which a memory
/// instruction takes as its offset, and so that the rest is shared: `(a + c1) << k` becomes
/// `(a << k) + (c1 << k)`, `(a + c1) * k` becomes `a * k + c1 * k`, `(a + c1) + c2` becomes
/// `a + (c1 + c2)`, `(a + c) + b` becomes `(a + b) + c`, `a - c` becomes `a + (-c)`, and a
/// constant first operand of `+` goes second. Wrapping 32-bit arithmetic is a ring, so the
/// values are the same bits.
pub fn reassociate(f: &mut Func) -> bool {
    let mut changed = false;
    for _ in 0..8 {
        let mut consts: HashMap<Value, i64> = HashMap::new();
        let mut defs: HashMap<Value, Op> = HashMap::new();
        for b in &f.blocks {
            for inst in &b.insts {
                if let Some(d) = inst.dst {
                    if let Op::Int(x) = inst.op {
                        consts.insert(d, x);
                    }
                    defs.insert(d, inst.op.clone());
                }
            }
        }
        let mut round = false;
        let mut new_types = Vec::new();
        let base = f.types.len() as u32;
        for b in 0..f.blocks.len() {
            let insts = std::mem::take(&mut f.blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for inst in insts {
                let Some(d) = inst.dst else {
                    out.push(inst);
                    continue;
                };
                let s = match f.types[d.0 as usize] {
                    Ty::Scalar(s) if s.is_int() => s,
                    _ => {
                        out.push(inst);
                        continue;
                    }
                };
                let span = inst.span.clone();
                let mut fresh = |op: Op, out: &mut Vec<Inst>, ty: Ty| {
                    let v = Value(base + new_types.len() as u32);
                    new_types.push(ty);
                    out.push(Inst { dst: Some(v), op, span: span.clone() });
                    v
                };
                let ty = Ty::Scalar(s);
                // `x + c` when `x` is defined so (c a constant).
                let plus_const = |v: &Value| match defs.get(v) {
                    Some(Op::Binary(BinOp::Add, a, c)) => consts.get(c).map(|k| (*a, *k)),
                    _ => None,
                };
                let rewritten: Option<Op> = match &inst.op {
                    Op::Binary(BinOp::Add, c, x)
                        if consts.contains_key(c) && !consts.contains_key(x) =>
                    {
                        Some(Op::Binary(BinOp::Add, *x, *c))
                    }
                    Op::Binary(BinOp::Sub, x, c)
                        if consts.contains_key(c) && !consts.contains_key(x) =>
                    {
                        let k = fresh(Op::Int(wrap(s, consts[c].wrapping_neg())), &mut out, ty);
                        Some(Op::Binary(BinOp::Add, *x, k))
                    }
                    Op::Binary(BinOp::Add, x, c) if consts.contains_key(c) => {
                        plus_const(x).map(|(a, c1)| {
                            let k =
                                fresh(Op::Int(wrap(s, c1.wrapping_add(consts[c]))), &mut out, ty);
                            Op::Binary(BinOp::Add, a, k)
                        })
                    }
                    Op::Binary(BinOp::Add, x, y) => match (plus_const(x), plus_const(y)) {
                        (Some((a, c1)), _) => {
                            let sum = fresh(Op::Binary(BinOp::Add, a, *y), &mut out, ty);
                            let k = fresh(Op::Int(c1), &mut out, ty);
                            Some(Op::Binary(BinOp::Add, sum, k))
                        }
                        (None, Some((a, c1))) => {
                            let sum = fresh(Op::Binary(BinOp::Add, *x, a), &mut out, ty);
                            let k = fresh(Op::Int(c1), &mut out, ty);
                            Some(Op::Binary(BinOp::Add, sum, k))
                        }
                        _ => None,
                    },
                    Op::Binary(BinOp::Shl, x, c)
                        if consts.get(c).is_some_and(|k| (0..32).contains(k))
                            && matches!(defs.get(x), Some(Op::Binary(BinOp::Shl, _, c1))
                                if consts.get(c1).is_some_and(|k1| (0..32).contains(&(k1 + consts[c])))) =>
                    {
                        // (a << k1) << k2 = a << (k1 + k2)
                        let Some(Op::Binary(BinOp::Shl, a, c1)) = defs.get(x) else {
                            unreachable!()
                        };
                        let k = fresh(Op::Int(consts[c1] + consts[c]), &mut out, ty);
                        Some(Op::Binary(BinOp::Shl, *a, k))
                    }
                    // ((x >> k) & m) << k = x & (m << k), for a logical shift and m << k in
                    // 32 bits: the bits shifted out are the ones masked off.
                    Op::Binary(BinOp::Shl, y, k2)
                        if s == Scalar::U32
                            && consts.get(k2).is_some_and(|k| (1..32).contains(k))
                            && matches!(defs.get(y), Some(Op::Binary(BinOp::And, z, m))
                                if consts.get(m).is_some_and(|m| (*m as u64) < (1u64 << (32 - consts[k2])))
                                    && matches!(defs.get(z), Some(Op::Binary(BinOp::Shr, _, k1)) if consts.get(k1) == consts.get(k2))) =>
                    {
                        let Some(Op::Binary(BinOp::And, z, m)) = defs.get(y) else {
                            unreachable!()
                        };
                        let Some(Op::Binary(BinOp::Shr, x, _)) = defs.get(z) else {
                            unreachable!()
                        };
                        let mask = fresh(Op::Int(wrap(s, consts[m] << consts[k2])), &mut out, ty);
                        Some(Op::Binary(BinOp::And, *x, mask))
                    }
                    Op::Binary(op @ (BinOp::Shl | BinOp::Mul), x, c) if consts.contains_key(c) => {
                        let k2 = consts[c];
                        plus_const(x).and_then(|(a, c1)| {
                            let moved = match op {
                                BinOp::Shl if (0..32).contains(&k2) => c1.wrapping_shl(k2 as u32),
                                BinOp::Mul => c1.wrapping_mul(k2),
                                _ => return None,
                            };
                            let scaled = fresh(Op::Binary(*op, a, *c), &mut out, ty);
                            let k = fresh(Op::Int(wrap(s, moved)), &mut out, ty);
                            Some(Op::Binary(BinOp::Add, scaled, k))
                        })
                    }
                    _ => None,
                };
                match rewritten {
                    Some(op) => {
                        round = true;
                        out.push(Inst { dst: Some(d), op, span: inst.span });
                    }
                    None => out.push(inst),
                }
            }
            f.blocks[b].insts = out;
        }
        f.types.extend(new_types);
        if !round {
            break;
        }
        changed = true;
    }
    if changed {
        dce(f);
    }
    changed
}

#[cfg(test)]
mod o2_tests {
    use super::*;
    use crate::opt::tests::lowered;

    #[test]
    fn folding_follows_the_machine() {
        assert_eq!(
            fold(BinOp::Add, Scalar::U32, Lat::Int(0xffff_ffff), Lat::Int(2)),
            Some(Lat::Int(1))
        );
        assert_eq!(
            fold(BinOp::Add, Scalar::I32, Lat::Int(i64::from(i32::MAX)), Lat::Int(1)),
            Some(Lat::Int(i64::from(i32::MIN)))
        );
        assert_eq!(
            fold(BinOp::Shl, Scalar::U32, Lat::Int(1), Lat::Int(33)),
            Some(Lat::Int(2)),
            "shift counts use 5 bits"
        );
        assert_eq!(
            fold(BinOp::Shr, Scalar::I32, Lat::Int(-8), Lat::Int(1)),
            Some(Lat::Int(-4)),
            "arithmetic for i32"
        );
        assert_eq!(
            fold(BinOp::Lt, Scalar::U32, Lat::Int(0xffff_ffff), Lat::Int(1)),
            Some(Lat::Bool(false)),
            "unsigned"
        );
        assert_eq!(
            fold(BinOp::Lt, Scalar::I32, Lat::Int(-1), Lat::Int(1)),
            Some(Lat::Bool(true)),
            "signed"
        );
        assert_eq!(
            fold(BinOp::Div, Scalar::I32, Lat::Int(-7), Lat::Int(2)),
            Some(Lat::Int(-3)),
            "toward zero"
        );
        assert_eq!(
            fold(BinOp::Div, Scalar::U32, Lat::Int(1), Lat::Int(0)),
            None,
            "division by zero stays"
        );
        assert_eq!(
            fold(BinOp::Add, Scalar::F32, Lat::Float(0.1), Lat::Float(0.2)),
            Some(Lat::Float(f64::from(0.1f32 + 0.2f32))),
            "binary32 rounding"
        );
    }

    #[test]
    fn sccp_removes_a_dead_branch_and_strength_reduction_shifts() {
        let src = "import wave\n@wave.kernel\ndef k(out: u32[:], n: u32):\n    w = 4\n    if w > 8:\n        out[0] = 1\n    else:\n        out[1] = n * 8 + n // 4 + n % 16\n";
        let mut f = lowered(src);
        optimize(&mut f, Level::O2).expect("verified");
        let text = crate::mir::print(std::slice::from_ref(&f));
        assert_eq!(text.matches("store.device").count(), 1, "the dead branch is gone:\n{text}");
        assert!(!text.contains("branch"), "{text}");
        assert!(
            !text.contains(" mul ") && !text.contains(" div ") && !text.contains(" rem "),
            "{text}"
        );
        assert!(text.contains("shl") && text.contains("shr") && text.contains("and"), "{text}");
    }
}

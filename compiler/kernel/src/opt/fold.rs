//! Constant folding as the machine computes: the lattice of constant propagation and the
//! wrapping, rounding arithmetic that SCCP, the identities and the loop passes share.

use crate::hir::{BinOp, Scalar, Ty};
use crate::mir::{Func, Value};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}

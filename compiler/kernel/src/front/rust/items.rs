//! Module-level constants (`const`, `static`) and the float constants of `std`.

use tree_sitter::Node;

use super::{Reported, Translator};
use crate::front::ast::{Expr, ExprKind, Func};
use crate::hir::Scalar;

impl Translator<'_> {
    /// `const TILE: u32 = 16;` (or a `static` one): a constant kernels may use; what is wrong
    /// with its value is reported where a kernel uses it.
    pub(super) fn constant(&mut self, item: Node<'_>) -> Option<Func> {
        let name = item.child_by_field_name("name")?;
        let value = item.child_by_field_name("value")?;
        let ty = item.child_by_field_name("type").map(|t| self.ty(t));
        let outer = std::mem::take(&mut self.diagnostics);
        let v = self
            .expr(value)
            .unwrap_or_else(|Reported| Expr::new(ExprKind::Error, value.byte_range()));
        let diagnostics = std::mem::replace(&mut self.diagnostics, outer);
        let mut f =
            Func::constant(self.src(name).to_owned(), name.byte_range(), ty, v, item.byte_range());
        f.diagnostics = diagnostics;
        Some(f)
    }
}

/// `std::f32::consts::PI` and its kin (also from `core::`, or `f32::consts::PI`): the value
/// and type.
pub(super) fn float_constant(path: &str) -> Option<(f64, Scalar)> {
    let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
    let path = path.strip_prefix("std::").or_else(|| path.strip_prefix("core::")).unwrap_or(&path);
    let (ty, name) = path.split_once("::consts::")?;
    let s = match ty {
        "f32" => Scalar::F32,
        "f64" => Scalar::F64,
        _ => return None,
    };
    let v = match name {
        "PI" => std::f64::consts::PI,
        "E" => std::f64::consts::E,
        "TAU" => std::f64::consts::TAU,
        "LN_2" => std::f64::consts::LN_2,
        "LN_10" => std::f64::consts::LN_10,
        "LOG2_E" => std::f64::consts::LOG2_E,
        "SQRT_2" => std::f64::consts::SQRT_2,
        "FRAC_1_SQRT_2" => std::f64::consts::FRAC_1_SQRT_2,
        _ => return None,
    };
    Some((v, s))
}

//! Module-level constants: `constexpr`, `const` and `#define` of a number.

use tree_sitter::Node;

use super::{Reported, Translator, number};
use crate::front::ast::{Expr, ExprKind, Func};

impl Translator<'_> {
    /// `constexpr uint32_t TILE = 16;` (or `const`, `static const`, several declarators): the
    /// constants kernels may use; what is wrong with a value is reported where a kernel uses
    /// it.
    pub(super) fn constants(&mut self, item: Node<'_>) -> Vec<Func> {
        let Some(ty_node) = item.child_by_field_name("type") else { return Vec::new() };
        let ty = (ty_node.kind() != "placeholder_type_specifier").then(|| self.ty(ty_node));
        let mut out = Vec::new();
        let mut c = item.walk();
        for d in item.children_by_field_name("declarator", &mut c) {
            let (Some(name), Some(value)) =
                (d.child_by_field_name("declarator"), d.child_by_field_name("value"))
            else {
                continue;
            };
            if d.kind() != "init_declarator" || name.kind() != "identifier" {
                continue;
            }
            let outer = std::mem::take(&mut self.diagnostics);
            let v = self
                .expr(value)
                .unwrap_or_else(|Reported| Expr::new(ExprKind::Error, value.byte_range()));
            let diagnostics = std::mem::replace(&mut self.diagnostics, outer);
            let mut f = Func::constant(
                self.src(name).to_owned(),
                name.byte_range(),
                ty.clone(),
                v,
                item.byte_range(),
            );
            f.diagnostics = diagnostics;
            out.push(f);
        }
        out
    }

    /// `#define TILE 16`: a number kernels may use by name (other macros are not read).
    pub(super) fn define(&mut self, item: Node<'_>) -> Option<Func> {
        let name = item.child_by_field_name("name")?;
        let value = item.child_by_field_name("value")?;
        let text = self.src(value).trim();
        let text = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(text).trim();
        let kind = number(text)?;
        let v = Expr::new(kind, value.byte_range());
        Some(Func::constant(
            self.src(name).to_owned(),
            name.byte_range(),
            None,
            v,
            item.byte_range(),
        ))
    }
}

/// `M_PI` and its kin from `<cmath>`, and `std::numbers::pi`.
pub(super) fn c_constant(name: &str) -> Option<f64> {
    Some(match name {
        "M_PI" | "std::numbers::pi" => std::f64::consts::PI,
        "M_E" | "std::numbers::e" => std::f64::consts::E,
        "M_LN2" | "std::numbers::ln2" => std::f64::consts::LN_2,
        "M_LN10" | "std::numbers::ln10" => std::f64::consts::LN_10,
        "M_LOG2E" | "std::numbers::log2e" => std::f64::consts::LOG2_E,
        "M_SQRT2" | "std::numbers::sqrt2" => std::f64::consts::SQRT_2,
        _ => return None,
    })
}

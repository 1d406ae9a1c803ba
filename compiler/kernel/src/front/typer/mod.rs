//! Types the surface syntax of any frontend ([`super::ast`]) into HIR: the one place that
//! knows the shared rules of `docs/kernels.md` ("The kernel language"): literal typing,
//! operator typing, the intrinsics, scoping, and helper inlining. A [`Dialect`] carries the
//! few ways the languages differ (block scopes, integer `/`, implicit conversions).
//!
//! Here: the entry point, the typer's state and its scopes. One `impl` of the state per room:
//! `stmt` (statements and loops), `assign` (declarations, assignments, arrays), `expr`
//! (conversions, operators, names) and `call` (intrinsics and inlined helpers).

mod assign;
mod call;
mod expr;
mod stmt;

use std::collections::HashMap;

use wave_diag::{Diagnostic, Span};

use super::ast::{self, Dialect, Func, TypeKind, TypeRef};
use super::{R, Reported, codes};
use crate::Language;
use crate::hir::{Expr, ExprKind, Kernel, Scalar, Stmt, Ty, Var, VarId};

/// The most elements of a private array: each thread has its own, in registers or in a
/// per-thread frame of Local Memory (16 KiB for the whole workgroup).
const MAX_PRIVATE: u32 = 64;

/// Types every kernel of `funcs` (the other functions are helpers, inlined where called),
/// adding its diagnostics to `diagnostics`, then sorts them by place. `text` is the source
/// the spans point into.
pub fn lower(
    text: &str,
    funcs: &[Func],
    dialect: Dialect,
    mut diagnostics: Vec<Diagnostic>,
) -> (Vec<Kernel>, Vec<Diagnostic>) {
    let helpers: HashMap<&str, &Func> =
        funcs.iter().filter(|f| !f.kernel).map(|f| (f.name.as_str(), f)).collect();
    let mut kernels: Vec<Kernel> = Vec::new();
    for f in funcs.iter().filter(|f| f.kernel) {
        diagnostics.extend(f.diagnostics.iter().cloned());
        let mut workgroup = f.workgroup.as_ref().map(|(size, _)| *size);
        if let Some((size, at)) = &f.workgroup
            && (size.contains(&0) || size.iter().map(|d| u64::from(*d)).product::<u64>() > 1 << 16)
        {
            diagnostics.push(Diagnostic::error(
                codes::BAD_CALL,
                at.clone(),
                format!(
                    "workgroup size {size:?}: each dimension is at least 1, and a workgroup holds at most 65,536 threads"
                ),
            ));
            workgroup = None;
        }
        let mut b = Builder {
            text,
            dialect,
            vars: Vec::new(),
            fixed: Vec::new(),
            names: HashMap::new(),
            scopes: Vec::new(),
            generics: HashMap::new(),
            diagnostics: Vec::new(),
            loops: 0,
            helpers: &helpers,
            inlining: Vec::new(),
            returning: None,
            columns: HashMap::new(),
            pending_columns: None,
            poisoned: std::collections::HashSet::new(),
            naturals: std::collections::HashSet::new(),
            prelude: Vec::new(),
            temps: 0,
        };
        let k = b.kernel(f, workgroup);
        match kernels.iter().find(|other| other.name == k.name) {
            Some(first) => diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED,
                    k.span.clone(),
                    format!(
                        "a kernel named `{}` is already defined: kernels need distinct names",
                        k.name
                    ),
                )
                .with_label(first.span.clone(), "first defined here"),
            ),
            None => kernels.push(k),
        }
        diagnostics.append(&mut b.diagnostics);
    }
    if kernels.is_empty() && !wave_diag::has_errors(&diagnostics) {
        let how = match dialect.language {
            Language::Python => "decorate a function with `@wave.kernel`",
            Language::Rust => "mark a function `#[wave::kernel]`",
            Language::Cpp => "mark a function `[[wave::kernel]]`",
            Language::TypeScript => {
                "wrap a function in `wave.kernel(...)` or decorate a static method `@kernel`"
            }
        };
        diagnostics.push(Diagnostic::error(
            codes::NO_KERNEL,
            0..0,
            format!("no kernel in this file: {how}"),
        ));
    }
    diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    // A helper inlined twice reports its mistakes once.
    diagnostics.dedup_by(|a, b| a.span == b.span && a.code == b.code && a.message == b.message);
    (kernels, diagnostics)
}

/// A name WAVE assembly can write: `[A-Za-z_][A-Za-z0-9_]*`, and not one of the structured
/// control-flow words, which a line starts with.
fn assembly_name(name: &str) -> bool {
    let mut chars = name.chars();
    let control = ["if", "else", "endif", "loop", "break", "continue", "endloop"];
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !control.contains(&name.to_ascii_lowercase().as_str())
}

struct Builder<'t, 'h> {
    text: &'t str,
    dialect: Dialect,
    vars: Vec<Var>,
    /// Per variable: it cannot be assigned (a `const`, a Rust `let` without `mut`), or it is
    /// a read-only buffer (`&[f32]`, `const float*`).
    fixed: Vec<bool>,
    names: HashMap<String, VarId>,
    /// Per open block: the names it bound, with what they named before (block scopes).
    scopes: Vec<Vec<(String, Option<VarId>)>>,
    /// The types a function template's parameters stand for, while it is inlined.
    generics: HashMap<String, Ty>,
    diagnostics: Vec<Diagnostic>,
    loops: usize,
    /// The file's other functions, by name: helpers inlined where they are called.
    helpers: &'h HashMap<&'h str, &'h Func>,
    /// The helpers being inlined, outermost first (a repeat is recursion).
    inlining: Vec<String>,
    /// The helper being inlined returns before its end: where its `return`s put the value.
    returning: Option<Returning>,
    /// The number of columns of each 2D local array.
    columns: HashMap<VarId, u32>,
    /// The columns of the 2D array being declared.
    pending_columns: Option<u32>,
    /// Names a wrong declaration left undeclared: using one is no further error.
    poisoned: std::collections::HashSet<String>,
    /// The `i32` loop counters, inside their loops, that are never negative (they count up
    /// from a constant at least 0, and the body does not assign them): each meets a `u32` as
    /// a `u32`, a conversion that changes no value.
    naturals: std::collections::HashSet<VarId>,
    /// Statements an expression needs before it (an inlined helper's body), taken by the
    /// statement that contains the expression.
    prelude: Vec<Stmt>,
    /// Compiler-made variables so far (a `do`/`while`'s first-iteration flag).
    temps: u32,
}

/// An inlined helper with a `return` before its end: each `return` sets `result` and
/// `flag` (and leaves the helper's loops), and the statements after one that may return run
/// where `flag` is not set.
struct Returning {
    /// The helper's name (its variables are `name.result` and `name.returned`).
    name: String,
    /// Set by a `return`.
    flag: VarId,
    /// The value returned, made by the first `return` with a value.
    result: Option<VarId>,
    /// The type the caller wants.
    want: Option<Scalar>,
}

/// The name a helper's body reads its `returned` flag by (no language can write it).
const RETURNED: &str = "return#";

fn scalar(ty: Ty) -> Option<Scalar> {
    match ty {
        Ty::Scalar(s) => Some(s),
        _ => None,
    }
}

/// C++'s rank of an arithmetic type in the usual conversions (`bool` is promoted first).
fn rank(s: Scalar) -> u8 {
    match s {
        Scalar::Bool | Scalar::I32 | Scalar::U8 | Scalar::U16 => 0,
        Scalar::U32 => 1,
        Scalar::F16 => 2,
        Scalar::F32 => 3,
        Scalar::F64 => 4,
    }
}

impl<'t> Builder<'t, '_> {
    fn src(&self, span: &Span) -> &'t str {
        self.text.get(span.clone()).unwrap_or("")
    }

    fn error(&mut self, code: &'static str, span: Span, message: impl Into<String>) -> Reported {
        self.diagnostics.push(Diagnostic::error(code, span, message));
        Reported
    }

    fn python(&self) -> bool {
        self.dialect.language == Language::Python
    }

    /// How this language writes a conversion of the expression at `span` to `to`.
    fn cast_hint(&self, to: Scalar, span: &Span) -> String {
        let what = self.src(span);
        let what = if what.len() > 24 || what.is_empty() { "x" } else { what };
        // `(float)a * b` and `a * b as f32` would convert `a` alone.
        let simple = what.chars().all(|c| c.is_alphanumeric() || "_.[]".contains(c))
            || (what.starts_with('(') && what.ends_with(')'));
        let prefix = matches!(self.dialect.language, Language::Rust | Language::Cpp);
        if prefix && !simple {
            self.dialect.cast(to, &format!("({what})"))
        } else {
            self.dialect.cast(to, what)
        }
    }

    fn kernel(&mut self, f: &Func, workgroup_size: Option<[u32; 3]>) -> Kernel {
        if !assembly_name(&f.name) {
            let _ = self.error(
                codes::UNSUPPORTED,
                f.name_span.clone(),
                format!("kernel name `{}` cannot be written in WAVE assembly (ASCII letters, digits and `_`, and not a control-flow word like `loop`); rename it", f.name),
            );
        }
        for p in &f.params {
            if self.param(p).is_err() {
                // Its uses say nothing more.
                self.poisoned.insert(p.name.clone());
            }
        }
        // Parameters are bound by name when the kernel is dispatched: the names must be
        // ones WAVE assembly can write.
        for v in self.vars.iter().filter(|v| v.param) {
            if !assembly_name(&v.name) || wave_asm::looks_reserved(&v.name) {
                self.diagnostics.push(Diagnostic::error(
                    codes::UNSUPPORTED,
                    v.span.clone(),
                    format!(
                        "parameter name `{}` cannot name a .wbin parameter: WAVE assembly would read it as a register, predicate, special register or control-flow word, or it is not ASCII; rename it",
                        v.name
                    ),
                ));
            }
        }
        let body = self.block(&f.body);
        Kernel {
            name: f.name.clone(),
            vars: std::mem::take(&mut self.vars),
            body,
            span: f.span.clone(),
            workgroup_size,
        }
    }

    fn param(&mut self, p: &ast::Param) -> R<()> {
        if let Some(first) = self.names.get(&p.name) {
            let first = self.vars[first.0 as usize].span.clone();
            self.diagnostics.push(
                Diagnostic::error(
                    codes::UNSUPPORTED,
                    p.span.clone(),
                    format!(
                        "parameter `{}` is named twice: parameters need distinct names",
                        p.name
                    ),
                )
                .with_label(first, "first named here"),
            );
            return Err(Reported);
        }
        let Some(ty_ref) = &p.ty else {
            let name = &p.name;
            let how = match self.dialect.language {
                Language::Rust => {
                    format!("`{name}: &[f32]` for a buffer, `{name}: u32` for a scalar")
                }
                Language::Cpp => {
                    format!("`const float* {name}` for a buffer, `uint32_t {name}` for a scalar")
                }
                Language::TypeScript => {
                    format!("`{name}: Float32Array` for a buffer, `{name}: u32` for a scalar")
                }
                Language::Python => {
                    format!("`{name}: f32[:]` for a buffer, `{name}: u32` for a scalar")
                }
            };
            return Err(self.error(
                codes::BAD_ANNOTATION,
                p.whole.clone(),
                format!("parameter `{name}` needs a type: {how}"),
            ));
        };
        let ty = self.ty(ty_ref)?;
        let readonly = matches!(ty_ref.kind, TypeKind::Buffer { writable: false, .. });
        let id = self.new_var(p.name.clone(), ty, p.span.clone(), true);
        self.fixed[id.0 as usize] = readonly || (!p.mutable && matches!(ty, Ty::Scalar(_)));
        self.bind(p.name.clone(), id);
        Ok(())
    }

    /// The kernel type `t` names.
    fn ty(&mut self, t: &TypeRef) -> R<Ty> {
        match &t.kind {
            TypeKind::Scalar(s) if s.is_narrow() => Err(self.error(
                codes::BAD_ANNOTATION,
                t.span.clone(),
                format!(
                    "`{}` is the element of a buffer only: its values are `u32` (use `u32`)",
                    self.src(&t.span)
                ),
            )),
            TypeKind::Scalar(s) => Ok(Ty::Scalar(*s)),
            TypeKind::Buffer { elem: Scalar::Bool, .. } => {
                let instead = match self.dialect.language {
                    Language::Python => "`u32[:]`",
                    Language::Rust => "`&[u32]`",
                    Language::Cpp => "`uint32_t*`",
                    Language::TypeScript => "`Uint32Array`",
                };
                Err(self.error(
                    codes::BAD_ANNOTATION,
                    t.span.clone(),
                    format!("buffers of `bool` are not supported: use {instead}"),
                ))
            }
            TypeKind::Buffer { elem, .. } => Ok(Ty::Buffer(*elem)),
            TypeKind::Generic(name) => match self.generics.get(name) {
                Some(ty) => Ok(*ty),
                None => Err(self.error(
                    codes::BAD_ANNOTATION,
                    t.span.clone(),
                    format!("the type parameter `{name}` is not known here: pass a value of it, or write `f<float>(...)`"),
                )),
            },
            TypeKind::Unknown(text) => {
                let kinds = match self.dialect.language {
                    Language::Python => "f32, f16, f64, i32, u32, bool, or a buffer like `f32[:]`",
                    Language::Rust => "f32, f16, f64, i32, u32, usize, bool, or a slice like `&[f32]`",
                    Language::Cpp => "float, half, double, int32_t, uint32_t, int, unsigned, bool, or a pointer like `const float*`",
                    Language::TypeScript => "f32, f16, i32, u32, number (f64), boolean, or a typed array like `Float32Array`",
                };
                Err(self.error(
                    codes::BAD_ANNOTATION,
                    t.span.clone(),
                    format!("`{text}` is not a kernel type: use {kinds}"),
                ))
            }
        }
    }

    fn new_var(&mut self, name: String, ty: Ty, span: Span, param: bool) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(Var { name, ty, span, param });
        self.fixed.push(false);
        id
    }

    /// Makes `name` refer to `id` until the innermost open block ends.
    fn bind(&mut self, name: String, id: VarId) {
        let before = self.names.insert(name.clone(), id);
        if self.dialect.block_scopes
            && let Some(scope) = self.scopes.last_mut()
        {
            scope.push((name, before));
        }
    }

    /// A block: its statements, each after the prelude its expressions needed, in a scope of
    /// its own where the language has block scopes.
    fn block(&mut self, stmts: &[ast::Stmt]) -> Vec<Stmt> {
        self.scopes.push(Vec::new());
        let mut out = Vec::new();
        for s in stmts {
            let outer = std::mem::take(&mut self.prelude);
            let result = self.stmt(s, &mut out);
            // What the statement's expressions needed first, then the statement.
            let before = std::mem::replace(&mut self.prelude, outer);
            match result {
                Ok(Some(stmt)) => {
                    out.extend(before);
                    out.push(stmt);
                }
                Ok(None) => out.extend(before),
                Err(Reported) => {
                    out.extend(before);
                    // A name a wrong statement would have declared: its uses say nothing
                    // more (the mistake is reported once, where it is).
                    for name in s.declares() {
                        if !self.names.contains_key(name) {
                            self.poisoned.insert(name.to_owned());
                        }
                    }
                }
            }
        }
        self.close_scope();
        out
    }

    fn close_scope(&mut self) {
        for (name, before) in self.scopes.pop().unwrap_or_default().into_iter().rev() {
            match before {
                Some(id) => self.names.insert(name, id),
                None => self.names.remove(&name),
            };
        }
    }
}

/// The value zero of `s`.
fn zero(s: Scalar, span: Span) -> Expr {
    let kind = match s {
        Scalar::Bool => ExprKind::Bool(false),
        s if s.is_float() => ExprKind::Float(0.0),
        _ => ExprKind::Int(0),
    };
    Expr { kind, ty: Ty::Scalar(s), span }
}

/// `e` converted to `to`.
fn cast(e: Expr, to: Scalar) -> Expr {
    let span = e.span.clone();
    Expr { kind: ExprKind::Cast(Box::new(e)), ty: Ty::Scalar(to), span }
}

/// A literal constant `e` as a constant of `to`, where its value fits exactly (an integer
/// in the range of an integer type or any float type; a float in a float type).
fn constant(e: &Expr, to: Scalar) -> Option<Expr> {
    let kind = match (&e.kind, to) {
        (ExprKind::Int(v), s) if s.is_float() => ExprKind::Float(*v as f64),
        (ExprKind::Int(v), Scalar::I32) if i32::try_from(*v).is_ok() => ExprKind::Int(*v),
        (ExprKind::Int(v), Scalar::U32) if u32::try_from(*v).is_ok() => ExprKind::Int(*v),
        (ExprKind::Float(v), s) if s.is_float() => ExprKind::Float(*v),
        _ => return None,
    };
    Some(Expr { kind, ty: Ty::Scalar(to), span: e.span.clone() })
}

/// The value of an integer expression made of constants (a module constant's, an array's
/// length), where it is one.
fn fold(e: &Expr) -> Option<i64> {
    use crate::hir::BinOp;
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Cast(a) if scalar(e.ty).is_some_and(Scalar::is_int) => {
            fold(a).filter(|_| scalar(a.ty).is_some_and(Scalar::is_int))
        }
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (fold(a)?, fold(b)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div => a.checked_div(b),
                BinOp::Rem => a.checked_rem(b),
                BinOp::Shl => a.checked_shl((b & 31) as u32),
                BinOp::Shr => Some(a >> (b & 31)),
                BinOp::And => Some(a & b),
                BinOp::Or => Some(a | b),
                BinOp::Xor => Some(a ^ b),
                _ => None,
            }
        }
        _ => None,
    }
}

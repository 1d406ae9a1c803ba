//! Hover in a kernel source: the type of what is under the cursor (a variable with its kind,
//! or an expression) and the WAVE instructions its line compiles to.

use std::ops::Range;

use wave_db::{Database, PlacedUnit, SourceBuild, SourceFile};
use wave_kernel::hir::{self, Expr, ExprKind, Kernel, Stmt, StmtKind, Ty};

use crate::source::{line_of, section};

/// What the hover describes: a variable, or an expression with its type; with the unit
/// whose HIR holds it and where it is in the file.
enum Under<'k> {
    Var(&'k PlacedUnit, &'k Kernel, hir::VarId, Range<usize>),
    Expr(&'k PlacedUnit, &'k Kernel, &'k Expr, Range<usize>),
}

/// The innermost expression of `e` holding `offset`.
fn innermost(e: &Expr, offset: usize) -> Option<&Expr> {
    if !(e.span.start <= offset && offset < e.span.end.max(e.span.start + 1)) {
        return None;
    }
    let inner = match &e.kind {
        ExprKind::Load(a, b) | ExprKind::Binary(_, a, b) => {
            innermost(a, offset).or_else(|| innermost(b, offset))
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => innermost(a, offset),
        ExprKind::Call(_, args) => args.iter().find_map(|a| innermost(a, offset)),
        ExprKind::Select(c, a, b) => {
            innermost(c, offset).or_else(|| innermost(a, offset)).or_else(|| innermost(b, offset))
        }
        _ => None,
    };
    inner.or(Some(e))
}

/// The smallest of two candidate expressions.
fn smaller<'e>(a: Option<&'e Expr>, b: Option<&'e Expr>) -> Option<&'e Expr> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.span.len() < x.span.len() { y } else { x }),
        (x, y) => x.or(y),
    }
}

fn in_stmts(stmts: &[Stmt], offset: usize) -> Option<&Expr> {
    let mut best = None;
    for s in stmts {
        let found = match &s.kind {
            StmtKind::Assign(_, e) | StmtKind::Expr(e) => innermost(e, offset),
            StmtKind::Store(b, i, v) => {
                smaller(smaller(innermost(b, offset), innermost(i, offset)), innermost(v, offset))
            }
            StmtKind::If(c, a, b) => {
                smaller(smaller(innermost(c, offset), in_stmts(a, offset)), in_stmts(b, offset))
            }
            StmtKind::While(c, b) => smaller(innermost(c, offset), in_stmts(b, offset)),
            StmtKind::For { start, end, body, .. } => smaller(
                smaller(innermost(start, offset), innermost(end, offset)),
                in_stmts(body, offset),
            ),
            _ => None,
        };
        best = smaller(best, found);
    }
    best
}

/// What is at file offset `offset`: a variable's declaration or use, or the innermost
/// expression (a helper's code is in every unit that may call it: the first that does wins).
fn under(build: &SourceBuild, offset: usize) -> Option<Under<'_>> {
    for unit in &build.units {
        let Some(local) = unit.to_unit(offset) else { continue };
        if let Some(found) = under_in(unit, local) {
            return Some(found);
        }
    }
    None
}

/// [`under`] in one unit, at offset `local` of its text.
fn under_in(unit: &PlacedUnit, local: usize) -> Option<Under<'_>> {
    let hir = &unit.build.hir;
    // A declaration (a parameter, a `let`, Python's first assignment).
    for k in hir {
        for (i, v) in k.vars.iter().enumerate() {
            if v.span.start <= local && local < v.span.end {
                return Some(Under::Var(unit, k, hir::VarId(i as u32), unit.to_file(&v.span)));
            }
        }
    }
    let mut best: Option<(&Kernel, &Expr)> = None;
    for k in hir {
        if let Some(e) = in_stmts(&k.body, local)
            && best.is_none_or(|(_, b)| e.span.len() < b.span.len())
        {
            best = Some((k, e));
        }
    }
    let (k, e) = best?;
    let range = unit.to_file(&e.span);
    match e.kind {
        ExprKind::Var(v) => Some(Under::Var(unit, k, v, range)),
        _ => Some(Under::Expr(unit, k, e, range)),
    }
}

/// The WAVE instructions generated from source line `line` (1-based) of the file (`text`)
/// in kernel `kernel` of `unit`.
fn instructions_of_line(text: &str, unit: &PlacedUnit, kernel: &str, line: usize) -> Vec<String> {
    let Some((lines, spans)) =
        section(&unit.build.asm, &unit.build.asm_spans, &format!(".kernel {kernel}"), ".end")
    else {
        return Vec::new();
    };
    lines
        .iter()
        .zip(&spans)
        .filter(|(_, s)| s.as_ref().is_some_and(|s| line_of(text, unit.to_file(s).start) == line))
        .map(|(l, _)| l.trim().to_owned())
        .collect()
}

/// The hover at `offset` of a kernel source: what is under the cursor (a variable with its
/// type and kind, or an expression with its type), and the WAVE instructions of its line.
pub(super) fn hover(
    db: &Database,
    file: SourceFile,
    build: &SourceBuild,
    offset: usize,
) -> Option<crate::Hover> {
    let text = file.text(db);
    let (unit, kernel, range, head) = match under(build, offset)? {
        Under::Var(unit, k, v, range) => {
            let var = k.var(v);
            let what = match var.ty {
                Ty::Buffer(_) if var.param => "buffer parameter",
                _ if var.param => "parameter",
                Ty::Local(..) => "array in Local Memory, shared by the workgroup",
                Ty::Private(..) => "array of each thread's own",
                _ => "local variable",
            };
            let head = format!("```\n{}: {}\n```\n{what} of kernel `{}`", var.name, var.ty, k.name);
            (unit, k, range, head)
        }
        Under::Expr(unit, k, e, range) => {
            let shown = hir::expr(k, e);
            let shown = if shown.len() > 80 { format!("{}…", &shown[..77]) } else { shown };
            let what = match &e.kind {
                ExprKind::Special(s) => format!("\nthe special register `{}`", s.name()),
                ExprKind::Call(i, _) => format!("\nthe intrinsic `{}`", hir::intrinsic_name(*i)),
                _ => String::new(),
            };
            (unit, k, range, format!("```\n{shown}: {}\n```{what}", e.ty))
        }
    };
    let line = line_of(text, offset);
    let insts = instructions_of_line(text, unit, &kernel.name, line);
    let mut markdown = head;
    if unit.build.module.kernels.is_empty() {
        markdown.push_str("\n\n(the kernel does not compile: no instructions to show)");
    } else if insts.is_empty() {
        markdown.push_str(&format!(
            "\n\nLine {line} compiles to no instruction of its own at -O2 (folded, moved or merged)."
        ));
    } else {
        let shown: Vec<&str> = insts.iter().take(24).map(String::as_str).collect();
        let more = if insts.len() > 24 {
            format!("\n; … {} more", insts.len() - 24)
        } else {
            String::new()
        };
        markdown.push_str(&format!(
            "\n\nLine {line} compiles to (at -O2):\n```wave\n{}{more}\n```",
            shown.join("\n")
        ));
    }
    Some(crate::Hover { range, markdown })
}

//! Editor features for kernels written in Python, Rust, C++ and TypeScript: diagnostics from
//! the frontend, the HIR and the code generator; hover with the type of what is under the
//! cursor and the WAVE instructions its line compiles to; each kernel's registers and
//! occupancy as an inlay hint; previews of the WAVE assembly, the MIR and each backend with
//! every generated line mapped to its source line; "Run in emulator", "Debug" and "Show ..."
//! lenses. Only the kernels (and the helpers they call) are analysed: the rest of the file is
//! left to the language's own server, so a file without kernels gets nothing.

use std::ops::Range;

use wave_backends::Target;
use wave_db::{
    Database, PlacedUnit, Settings, SourceBuild, SourceFile, occupancy_line, source_build,
    source_language,
};
use wave_kernel::hir::{self, Expr, ExprKind, Kernel, Stmt, StmtKind, Ty};

use crate::actions::FileDiagnostic;
use crate::hover::line_of;
use crate::run::{Lens, LensCommand, Preview, target_title};

/// The build of `file` when it is a kernel source (`None`: WAVE assembly).
pub(crate) fn build(db: &Database, file: SourceFile) -> Option<&SourceBuild> {
    source_build(db, file).as_ref()
}

/// Whether `file` is a kernel source (else WAVE assembly), without building it.
pub(crate) fn is_source(db: &Database, file: SourceFile) -> bool {
    source_language(db, file).is_some()
}

/// The diagnostics of a kernel source.
pub(crate) fn diagnostics(build: &SourceBuild) -> Vec<FileDiagnostic> {
    build
        .diagnostics
        .iter()
        .map(|d| FileDiagnostic { diagnostic: d.clone(), hint: false, tags: Vec::new() })
        .collect()
}

/// The line of a kernel's name: where its hint and lenses go.
fn name_line(text: &str, f: &wave_kernel::Function) -> Range<usize> {
    let start = text[..f.name_span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[f.name_span.start..].find('\n').map_or(text.len(), |i| f.name_span.start + i);
    start..end
}

/// Each kernel's occupancy (with its register count R) at the end of its name's line.
pub(crate) fn inlay_hints(
    db: &Database,
    file: SourceFile,
    build: &SourceBuild,
    settings: Settings,
) -> Vec<(usize, String)> {
    let text = file.text(db);
    let mut out = Vec::new();
    for f in build.functions.iter().filter(|f| f.kernel) {
        let Some((_, k)) = build.kernel(&f.name) else { continue };
        if let Some(hint) = occupancy_line(k, settings.target(db), settings.wave_width(db)) {
            out.push((name_line(text, f).end, hint));
        }
    }
    out
}

/// The lenses of a kernel source: per kernel that compiles, the run lenses (the GPU ones
/// only when `gpu`), "Debug", "Show WAVE", "Show MIR" and one "Show ..." per backend.
pub(crate) fn code_lenses(
    db: &Database,
    file: SourceFile,
    build: &SourceBuild,
    path: Option<&std::path::Path>,
    settings: Settings,
    gpu: bool,
) -> Vec<Lens> {
    let text = file.text(db);
    let mut out = Vec::new();
    for f in build.functions.iter().filter(|f| f.kernel) {
        if build.kernel(&f.name).is_none() {
            continue;
        }
        let range = name_line(text, f);
        let name = f.name.clone();
        let plan = crate::run::plan_run(db, file, &name, path, settings);
        out.extend(crate::run::run_lenses(&range, &name, &plan, gpu));
        let launch = plan.as_ref().ok().map(|p| crate::run::debug_launch(p, path));
        out.push(Lens {
            range: range.clone(),
            title: "Debug".into(),
            command: LensCommand::Debug { kernel: name.clone(), launch },
        });
        for (form, title) in [("wave", "WAVE"), ("mir", "MIR")] {
            out.push(Lens {
                range: range.clone(),
                title: format!("Show {title}"),
                command: LensCommand::Show { kernel: name.clone(), form: form.into() },
            });
        }
        for target in Target::ALL {
            out.push(Lens {
                range: range.clone(),
                title: format!("Show {}", target_title(target)),
                command: LensCommand::Preview { kernel: name.clone(), target },
            });
        }
    }
    out
}

/// The kernel `name`, or the one whose text holds `offset`, or the first.
fn pick<'b>(
    build: &'b SourceBuild,
    kernel: Option<&str>,
    offset: Option<usize>,
) -> Result<&'b wave_kernel::Function, String> {
    let kernels = || build.functions.iter().filter(|f| f.kernel);
    match (kernel, offset) {
        (Some(name), _) => kernels().find(|f| f.name == name),
        (None, Some(o)) => kernels().find(|f| f.span.contains(&o)).or_else(|| kernels().next()),
        (None, None) => kernels().next(),
    }
    .ok_or_else(|| "no such kernel in this file".to_string())
}

/// Lines of a generated text with the source span of each.
type Lines<'a> = (Vec<&'a str>, Vec<Option<Range<usize>>>);

/// The lines of `text` from the one starting `start` up to and including the first after it
/// starting `end`, with their source spans.
fn section<'a>(
    text: &'a str,
    spans: &[Option<Range<usize>>],
    start: &str,
    end: &str,
) -> Option<Lines<'a>> {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| l.starts_with(start))?;
    let last = first + lines[first..].iter().position(|l| l.starts_with(end))?;
    Some((lines[first..=last].to_vec(), spans.get(first..=last).unwrap_or_default().to_vec()))
}

/// A preview of a kernel of a kernel source: `form` is `wave` (the assembly), `mir`, or a
/// backend's name; each generated line is mapped to the 1-based source line it comes from.
pub(crate) fn preview(
    db: &Database,
    file: SourceFile,
    build: &SourceBuild,
    kernel: Option<&str>,
    offset: Option<usize>,
    form: &str,
) -> Result<(String, Preview), String> {
    let text = file.text(db);
    let f = pick(build, kernel, offset)?;
    let unit = build.unit_of(&f.name).ok_or("no such kernel in this file")?;
    if unit.build.module.kernels.is_empty() {
        let first = unit.build.diagnostics.iter().find(|d| d.is_error());
        return Err(match first {
            Some(e) => format!("the kernel does not compile: error[{}] {}", e.code, e.message),
            None => "the kernel does not compile".into(),
        });
    }
    let line = |span: &Option<Range<usize>>| {
        span.as_ref().map(|s| line_of(text, unit.to_file(s).start) as u32)
    };
    let (generated, lines) = match form {
        "wave" => {
            let (lines, spans) = section(
                &unit.build.asm,
                &unit.build.asm_spans,
                &format!(".kernel {}", f.name),
                ".end",
            )
            .ok_or("the kernel has no assembly")?;
            (lines.join("\n") + "\n", spans.iter().map(line).collect())
        }
        "mir" => {
            let (lines, spans) = section(
                &unit.build.mir,
                &unit.build.mir_spans,
                &format!("kernel {}(", f.name),
                "}",
            )
            .ok_or("the kernel has no MIR")?;
            (lines.join("\n") + "\n", spans.iter().map(line).collect())
        }
        name => {
            let target = Target::from_name(name).ok_or_else(|| {
                format!("unknown target `{name}` (wave, mir, ptx, hip, sycl, metal)")
            })?;
            let mut options = wave_backends::Options::default();
            options.ptx.kernel = Some(f.name.clone());
            options.hip.kernel = Some(f.name.clone());
            options.sycl.kernel = Some(f.name.clone());
            options.metal.kernel = Some(f.name.clone());
            let module = unit.module_in_file(text, file.path(db));
            let t = wave_backends::write_string(target, &module, &options).map_err(|e| {
                e.problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
            })?;
            let lines = t
                .source_map
                .lines
                .iter()
                .map(|o| {
                    let o = (*o)?;
                    Some(module.lines.iter().find(|e| e.offset == o)?.line)
                })
                .collect();
            let warnings = t.warnings.iter().map(|w| w.message.clone()).collect();
            return Ok((
                target.name().to_owned(),
                Preview { target: Some(target), text: t.text, lines, warnings },
            ));
        }
    };
    Ok((form.to_owned(), Preview { target: None, text: generated, lines, warnings: Vec::new() }))
}

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
pub(crate) fn hover(
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

/// The kernels of a kernel source as document symbols.
pub(crate) fn symbols(build: &SourceBuild) -> Vec<crate::Symbol> {
    build
        .functions
        .iter()
        .filter(|f| f.kernel)
        .map(|f| crate::Symbol {
            name: f.name.clone(),
            kind: crate::SymbolKind::Kernel,
            range: f.span.clone(),
            selection: f.name_span.clone(),
            children: Vec::new(),
        })
        .collect()
}

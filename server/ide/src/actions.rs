//! Diagnostics as the editor shows them (the assembler's, plus hints with tags) and the code
//! actions that fix them.

use std::ops::Range;

use wave_asm::syntax::{OperandKind, StmtKind};
use wave_db::{Database, KernelSource, SourceFile, check_kernel, file_diagnostics, kernels};
use wave_diag::{Diagnostic, Suggestion};
use wave_isa::{Flow, Opcode};

use crate::tokens::{TokenKind, kernel_tokens, labels, params};

mod source;

/// A tag that changes how an editor draws a diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// Unused or unreachable code (drawn faded).
    Unnecessary,
    /// A spelling kept for compatibility (drawn struck through).
    Deprecated,
}

/// One diagnostic of a file, with spans in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileDiagnostic {
    /// The diagnostic.
    pub diagnostic: Diagnostic,
    /// A hint of the editor (codes `H....`), not an assembler error or warning.
    pub hint: bool,
    /// Tags.
    pub tags: Vec<Tag>,
}

/// Codes of the editor's hints.
pub const UNUSED_LABEL: &str = "H0001";
/// A parameter that nothing reads.
pub const UNUSED_PARAMETER: &str = "H0002";
/// An alias of a mnemonic.
pub const ALIAS: &str = "H0003";
/// Code after an unconditional `halt` or `return`.
pub const UNREACHABLE: &str = "H0004";

/// The tags of a hint code.
fn tags(code: &str, deprecated: bool) -> Vec<Tag> {
    match code {
        UNUSED_LABEL | UNUSED_PARAMETER | UNREACHABLE => vec![Tag::Unnecessary],
        ALIAS if deprecated => vec![Tag::Deprecated],
        _ => Vec::new(),
    }
}

/// The editor's hints for one kernel that assembles (spans relative to its text): unused
/// labels and parameters, aliases, unreachable code; each with whether it marks a deprecated
/// spelling. Memoized per kernel text.
#[salsa::tracked(returns(ref), lru = 4096)]
pub fn kernel_hints<'db>(
    db: &'db dyn salsa::Database,
    kernel: KernelSource<'db>,
) -> Vec<(Diagnostic, bool)> {
    let check = check_kernel(db, kernel);
    let text = kernel.text(db);
    if wave_diag::has_errors(&check.diagnostics) {
        return Vec::new();
    }
    let tokens = kernel_tokens(check);
    let mut out = Vec::new();
    for (name, span) in labels(check) {
        let called = tokens.iter().any(|t| {
            matches!(t.kind, TokenKind::Label { definition: false })
                && text[t.range.clone()] == name
        });
        if !called {
            let d =
                Diagnostic::warning(UNUSED_LABEL, span, format!("label `{name}` is never called"));
            out.push((d, false));
        }
    }
    for (index, (name, span, _)) in params(check).into_iter().enumerate() {
        let used = tokens.iter().any(|t| match t.kind {
            TokenKind::Parameter { definition: false, index: i } => i == index,
            TokenKind::Register { number, .. } => number as usize == index,
            _ => false,
        });
        if !used {
            let d = Diagnostic::warning(
                UNUSED_PARAMETER,
                span,
                format!("parameter `{name}` is never used (by name or as `r{index}`)"),
            );
            out.push((d, false));
        }
    }
    for (i, stmt) in check.parsed.stmts.iter().enumerate() {
        let StmtKind::Instruction(inst) = &stmt.kind else { continue };
        let (Some(op), true) = crate::tokens::resolve(&inst.mnemonic) else { continue };
        let Some(placed) = check.placed.iter().find(|p| p.stmt == i) else { continue };
        let mut canonical = String::new();
        wave_isa::write_mnemonic(&placed.inst, &mut canonical);
        let operands: Vec<&str> = inst
            .operands
            .iter()
            .filter(|o| !matches!(o.kind, OperandKind::Scope(_)))
            .map(|o| &text[o.span.clone()])
            .collect();
        let mut replacement = canonical.clone();
        if !operands.is_empty() {
            replacement.push(' ');
            replacement.push_str(&operands.join(", "));
        }
        let written = inst.mnemonic.to_ascii_lowercase();
        let base = written.split('.').next().unwrap_or("");
        let explicit = op.aliases.iter().any(|(a, _)| *a == base);
        let mut d = Diagnostic::warning(
            ALIAS,
            inst.mnemonic_span.clone(),
            format!(
                "`{}` is {} of `{canonical}`",
                inst.mnemonic,
                if explicit { "an alias" } else { "the reference toolchain's spelling" }
            ),
        );
        d.suggestion = Some(Suggestion {
            message: format!("use the canonical `{canonical}`"),
            span: inst.mnemonic_span.start..stmt.span.end,
            replacement,
        });
        if !explicit {
            d.notes.push(
                "the underscore spellings come from the existing reference toolchain; WAVE writes suffixes with dots".into(),
            );
        }
        out.push((d, !explicit));
    }
    out.extend(unreachable(check, text).into_iter().map(|d| (d, false)));
    out
}

/// Statements after an unguarded `halt` or `return` in the same block.
fn unreachable(check: &wave_db::KernelCheck, text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut dead: Option<(String, Range<usize>)> = None;
    let close = |dead: &mut Option<(String, Range<usize>)>, out: &mut Vec<Diagnostic>| {
        if let Some((after, range)) = dead.take()
            && range.start < range.end
        {
            out.push(Diagnostic::warning(
                UNREACHABLE,
                range,
                format!("unreachable: every lane that gets here has already run `{after}`"),
            ));
        }
    };
    for stmt in &check.parsed.stmts {
        match &stmt.kind {
            StmtKind::Instruction(inst) => {
                let flow = crate::tokens::flow_of(&inst.mnemonic);
                if matches!(flow, Some(Flow::Else | Flow::Endif | Flow::Endloop)) {
                    close(&mut dead, &mut out);
                    continue;
                }
                match &mut dead {
                    Some((_, range)) if range.start == range.end => *range = stmt.span.clone(),
                    Some((_, range)) => range.end = stmt.span.end,
                    None if inst.guard.is_none()
                        && matches!(flow, Some(Flow::Halt | Flow::Return)) =>
                    {
                        let end = stmt.span.end;
                        dead = Some((text[inst.mnemonic_span.clone()].to_string(), end..end));
                    }
                    None => {}
                }
            }
            StmtKind::Label { .. } | StmtKind::End | StmtKind::Kernel { .. } => {
                close(&mut dead, &mut out)
            }
            StmtKind::Directive { .. } => {}
        }
    }
    close(&mut dead, &mut out);
    out
}

/// Every diagnostic of `file` (the assembler's, then the hints of kernels that assemble), in
/// file order.
pub fn diagnostics(db: &Database, file: SourceFile) -> Vec<FileDiagnostic> {
    if let Some(b) = crate::source::build(db, file) {
        return source::diagnostics(b);
    }
    let mut out: Vec<FileDiagnostic> = file_diagnostics(db, file)
        .iter()
        .map(|d| FileDiagnostic { diagnostic: d.clone(), hint: false, tags: Vec::new() })
        .collect();
    for k in &kernels(db, file).kernels {
        for (d, deprecated) in kernel_hints(db, k.source) {
            let shift = k.range.start;
            let d = d.moved(|r| r.start + shift..r.end + shift);
            let tags = tags(d.code, *deprecated);
            out.push(FileDiagnostic { diagnostic: d, hint: true, tags });
        }
    }
    out.sort_by_key(|d| (d.diagnostic.span.start, d.diagnostic.span.end));
    out
}

/// What kind of action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// Fixes a diagnostic.
    QuickFix,
    /// Applies a fix everywhere in the file.
    SourceFixAll,
}

/// A code action: a titled set of edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// What the menu shows.
    pub title: String,
    /// Quick fix or whole-file.
    pub kind: ActionKind,
    /// The edits, in the file.
    pub edits: Vec<(Range<usize>, String)>,
    /// The diagnostic it fixes.
    pub fixes: Option<FileDiagnostic>,
    /// The obvious fix (editors apply it with one key).
    pub preferred: bool,
}

/// The code actions for the bytes `range` of `file`: a quick fix for every diagnostic there
/// that has one (every did-you-mean, a missing `endif`/`endloop`, a `.registers` too low, an
/// alias), and converting every alias of the file at once.
pub fn code_actions(db: &Database, file: SourceFile, range: Range<usize>) -> Vec<Action> {
    if crate::source::is_source(db, file) {
        return Vec::new();
    }
    let text = file.text(db);
    let all = diagnostics(db, file);
    let mut out = Vec::new();
    for d in &all {
        let span = &d.diagnostic.span;
        if span.end < range.start || range.end < span.start {
            continue;
        }
        if let Some(s) = &d.diagnostic.suggestion {
            let title = if d.diagnostic.code == ALIAS {
                format!("Use the canonical form `{}`", s.replacement)
            } else {
                format!("Replace `{}` with `{}`", &text[s.span.clone()], s.replacement)
            };
            out.push(Action {
                title,
                kind: ActionKind::QuickFix,
                edits: vec![(s.span.clone(), s.replacement.clone())],
                fixes: Some(d.clone()),
                preferred: true,
            });
        }
        match d.diagnostic.code {
            "E0165" => out.extend(close_block(db, file, d)),
            "E0124" => out.extend(raise_registers(db, file, d)),
            _ => {}
        }
    }
    let aliases: Vec<(Range<usize>, String)> = all
        .iter()
        .filter(|d| d.diagnostic.code == ALIAS)
        .filter_map(|d| d.diagnostic.suggestion.as_ref())
        .map(|s| (s.span.clone(), s.replacement.clone()))
        .collect();
    if !aliases.is_empty() {
        out.push(Action {
            title: format!(
                "Convert every alias to its canonical form ({} instruction{})",
                aliases.len(),
                if aliases.len() == 1 { "" } else { "s" }
            ),
            kind: ActionKind::SourceFixAll,
            edits: aliases,
            fixes: None,
            preferred: false,
        });
    }
    out
}

/// Inserts the `endif` or `endloop` of an unclosed block before its kernel's `.end`, at the
/// block's indentation.
fn close_block(db: &Database, file: SourceFile, d: &FileDiagnostic) -> Option<Action> {
    let text = file.text(db);
    let span = &d.diagnostic.span;
    let keyword = text.get(span.clone())?.split_whitespace().next()?;
    let closer = match crate::tokens::flow_of(keyword)? {
        Flow::If | Flow::Else => Opcode::Endif.mnemonic(),
        Flow::Loop => Opcode::Endloop.mnemonic(),
        Flow::Next
        | Flow::Endif
        | Flow::Endloop
        | Flow::Break
        | Flow::Continue
        | Flow::Call
        | Flow::Return
        | Flow::Halt => return None,
    };
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..span.start];
    let indent = if indent.trim().is_empty() { indent } else { "    " };
    let kernel = kernels(db, file).kernels.iter().find(|k| k.range.contains(&span.start))?;
    let check = check_kernel(db, kernel.source);
    let end = check.parsed.stmts.iter().find(|s| matches!(s.kind, StmtKind::End));
    let (at, insert) = match end {
        Some(end) => {
            let local = kernel.source.text(db)[..end.span.start].rfind('\n').map_or(0, |i| i + 1);
            (kernel.range.start + local, format!("{indent}{closer}\n"))
        }
        None if text[..kernel.range.end].ends_with('\n') => {
            (kernel.range.end, format!("{indent}{closer}\n"))
        }
        None => (kernel.range.end, format!("\n{indent}{closer}")),
    };
    Some(Action {
        title: format!("Insert the missing `{closer}`"),
        kind: ActionKind::QuickFix,
        edits: vec![(at..at, insert)],
        fixes: Some(d.clone()),
        preferred: true,
    })
}

/// Raises the kernel's `.registers` to the highest register it uses plus one (and at least
/// its parameter count).
fn raise_registers(db: &Database, file: SourceFile, d: &FileDiagnostic) -> Option<Action> {
    let span = &d.diagnostic.span;
    let kernel = kernels(db, file).kernels.iter().find(|k| k.range.contains(&span.start))?;
    let check = check_kernel(db, kernel.source);
    let mut highest = params(check).len();
    let mut directive = None;
    for stmt in &check.parsed.stmts {
        match &stmt.kind {
            StmtKind::Instruction(inst) => {
                for o in &inst.operands {
                    let top = match &o.kind {
                        OperandKind::Register { number, .. } => Some(*number),
                        OperandKind::Pair { high, .. } => Some(*high),
                        OperandKind::Memory { base, .. } => match base.kind {
                            OperandKind::Register { number, .. } => Some(number),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let Some(top) = top {
                        highest = highest.max(top as usize + 1);
                    }
                }
            }
            StmtKind::Directive { name, .. } if name == ".registers" => {
                directive = Some(stmt.span.clone());
            }
            _ => {}
        }
    }
    let directive = directive?;
    let r = highest.min(256);
    let shift = kernel.range.start;
    Some(Action {
        title: format!("Raise `.registers` to {r}"),
        kind: ActionKind::QuickFix,
        edits: vec![(directive.start + shift..directive.end + shift, format!(".registers {r}"))],
        fixes: Some(d.clone()),
        preferred: true,
    })
}

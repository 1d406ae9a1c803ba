//! Hover: on an instruction, its encoding and what each backend writes for it; on an operand, a label or a
//! directive, what it means.

use std::fmt::Write as _;
use std::ops::Range;

use wave_db::{Database, SourceFile};
use wave_isa::{Format, Inst};

use crate::at::{KernelAt, kernel_at};
use crate::completion::DIRECTIVES;
use crate::source::line_of;
use crate::tokens::{Token, TokenKind, kernel_tokens, params, token_at};

mod source;

/// What a hover shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    /// The bytes of the file the hover is about (the instruction's span).
    pub range: Range<usize>,
    /// Markdown.
    pub markdown: String,
}

/// The hover at byte `offset` of `file`: on a register, a predicate, a special register, a
/// parameter, a label or a directive, what it is; anywhere else in an instruction, the
/// instruction (when the kernel assembles).
pub fn hover(db: &Database, file: SourceFile, offset: usize) -> Option<Hover> {
    if let Some(b) = crate::source::build(db, file) {
        return source::hover(db, file, b, offset);
    }
    let at = kernel_at(db, file, offset)?;
    let tokens = kernel_tokens(at.check);
    if let Some(t) = token_at(&tokens, at.local)
        && let Some(markdown) = describe_token(db, file, &at, &tokens, t)
    {
        return Some(Hover { range: at.file_range(&t.range), markdown });
    }
    instruction_hover(db, &at)
}

fn instruction_hover(db: &Database, at: &KernelAt<'_>) -> Option<Hover> {
    let (check, text, local) = (at.check, at.text, at.local);
    // The line table maps each instruction to its span (1-based lines and byte columns).
    let (line, column) = line_column(text, local);
    let entry = check.module.lines.iter().find(|e| {
        (e.line, e.column) <= (line, column) && (line, column) < (e.end_line, e.end_column)
    })?;
    let start = at.file_offset(offset_of(text, entry.line, entry.column));
    let end = at.file_offset(offset_of(text, entry.end_line, entry.end_column));
    let bytes = check.module.code.get(entry.offset as usize..)?;
    let (inst, size) = Inst::decode(bytes).ok()?;
    let mut markdown = describe(&check.module, &inst, &bytes[..size]);
    markdown.push_str(&translations(db, at, entry.offset));
    Some(Hover { range: start..end, markdown })
}

/// The most lines of one backend's code shown for an instruction.
const MAX_BACKEND_LINES: usize = 12;

/// What the instruction at code offset `offset` becomes on each target: the lines each
/// backend writes for it in this kernel (by its source map), so the hover shows what the
/// code really is, not a summary that can drift from it.
fn translations(db: &Database, at: &KernelAt<'_>, offset: u32) -> String {
    let mut md = String::from("\nWhat each backend writes for it here:\n");
    for target in wave_backends::Target::ALL {
        let (name, fence) = (target.title(), target.fence());
        match wave_db::backend(db, at.span.source, target) {
            Ok(t) => {
                let lines = t.code_of(offset);
                let _ = write!(md, "\n**{name}**");
                if lines.is_empty() {
                    md.push_str(": no code of its own (folded into its neighbours)\n");
                    continue;
                }
                let _ = writeln!(md, "\n```{fence}");
                for l in lines.iter().take(MAX_BACKEND_LINES) {
                    let _ = writeln!(md, "{l}");
                }
                md.push_str("```\n");
                if lines.len() > MAX_BACKEND_LINES {
                    let _ = writeln!(md, "and {} more lines", lines.len() - MAX_BACKEND_LINES);
                }
            }
            Err(e) => {
                let first =
                    e.problems.iter().find(|p| p.offset == Some(offset)).or(e.problems.first());
                let why =
                    first.map_or_else(|| e.to_string(), |p| format!("[{}] {}", p.code, p.message));
                let _ = writeln!(md, "\n**{name}**: the backend refuses the kernel: {why}");
            }
        }
    }
    md
}

fn describe_token(
    db: &Database,
    file: SourceFile,
    at: &KernelAt<'_>,
    tokens: &[Token],
    t: &Token,
) -> Option<String> {
    let file_text = file.text(db);
    let line = |local: usize| line_of(file_text, at.file_offset(local));
    let stmt_text = |i: usize| {
        let span = &at.check.parsed.stmts[i].span;
        at.text[span.clone()].trim().to_string()
    };
    let params = params(at.check);
    let mut md = String::new();
    match &t.kind {
        TokenKind::Register { number, .. } => {
            let r = format!("r{number}");
            let declared = at.check.module.kernels.first().map(|k| k.registers);
            let _ = write!(md, "```wave\n{r}\n```\ngeneral register {number}");
            if let Some(n) = declared {
                let _ = write!(md, " (the kernel has R = {n}: r0 to r{})", n.saturating_sub(1));
            }
            md.push_str("\n\n");
            if let Some((name, _, ty)) = params.get(*number as usize) {
                let _ = writeln!(md, "Holds the parameter `{name}: {ty}` at entry.\n");
            }
            let here = t.stmt.unwrap_or(usize::MAX);
            let writes: Vec<&Token> = tokens
                .iter()
                .filter(|w| {
                    matches!(w.kind, TokenKind::Register { number: n, write: true } if n == *number)
                        && w.stmt.is_some_and(|s| s < here)
                })
                .collect();
            if writes.is_empty() {
                let _ = writeln!(md, "Not written before this line.");
            } else {
                let _ = writeln!(md, "Last written before this line:\n");
                for w in writes.iter().rev().take(3).rev() {
                    let s = w.stmt.unwrap_or(0);
                    let _ = writeln!(md, "- line {}: `{}`", line(w.range.start), stmt_text(s));
                }
            }
        }
        TokenKind::Predicate { number, .. } => {
            let _ = writeln!(
                md,
                "```wave\np{number}\n```\npredicate register {number}: one bit per lane, set by comparisons, read by guards (`@p{number}`), `if`, `break`, `continue` and `select`."
            );
        }
        TokenKind::Special(name) => {
            let meaning = wave_isa::special_register(name).and_then(wave_isa::special_meaning)?;
            let _ = writeln!(
                md,
                "```wave\n{name}\n```\nspecial register (spec 3.3): {meaning}. Read it with `mov_special`."
            );
        }
        TokenKind::Parameter { index, .. } => {
            let (name, _, ty) = params.get(*index)?;
            let uses = tokens
                .iter()
                .filter(|u| matches!(u.kind, TokenKind::Parameter { definition: false, index: i } if i == *index))
                .count();
            let _ = writeln!(
                md,
                "```wave\n.param {name}: {ty}\n```\nparameter {index} of the kernel: preloaded into `r{index}` at entry. Used {uses} time{} by name.",
                if uses == 1 { "" } else { "s" }
            );
        }
        TokenKind::Label { .. } => {
            let name = &at.text[t.range.clone()];
            let offset =
                at.check.source.as_ref()?.labels.iter().find(|(n, _, _)| n == name).map(|l| l.2);
            let callers: Vec<String> = tokens
                .iter()
                .filter(|u| {
                    matches!(u.kind, TokenKind::Label { definition: false })
                        && &at.text[u.range.clone()] == name
                })
                .map(|u| line(u.range.start).to_string())
                .collect();
            let _ = write!(md, "```wave\n{name}:\n```\nlabel: a function entry for `call`");
            if let Some(o) = offset {
                let _ = write!(md, ", at code offset 0x{o:x}");
            }
            md.push_str(".\n\n");
            if callers.is_empty() {
                md.push_str("Never called.\n");
            } else {
                let _ = writeln!(md, "Called from line {}.", callers.join(", "));
            }
        }
        TokenKind::Directive(name) => {
            let meaning = DIRECTIVES.iter().find(|(d, _)| format!(".{d}") == *name)?.1;
            let _ = writeln!(md, "```wave\n{name}\n```\n{meaning}.");
        }
        TokenKind::KernelName => {
            let k = at.check.module.kernels.first();
            let _ = write!(md, "```wave\n.kernel {}\n```\nkernel", at.span.name);
            if let Some(k) = k {
                let _ = write!(
                    md,
                    ": {} parameter{}, R = {}, {} bytes of Local Memory",
                    k.params.len(),
                    if k.params.len() == 1 { "" } else { "s" },
                    k.registers,
                    k.local_memory
                );
            }
            md.push('\n');
        }
        TokenKind::Mnemonic { .. } | TokenKind::Type | TokenKind::Number | TokenKind::Comment => {
            return None;
        }
    }
    Some(md)
}

/// 1-based line and byte column of `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() as u32 + 1;
    let column = (before.len() - before.rfind('\n').map_or(0, |i| i + 1)) as u32 + 1;
    (line, column)
}

/// The byte offset of 1-based `line`, `column`.
fn offset_of(text: &str, line: u32, column: u32) -> usize {
    let start: usize =
        text.split_inclusive('\n').take(line.saturating_sub(1) as usize).map(str::len).sum();
    (start + column.saturating_sub(1) as usize).min(text.len())
}

fn describe(module: &wave_wbin::Module, inst: &Inst, bytes: &[u8]) -> String {
    let Some(op) = inst.info() else { return String::new() };
    let mut text = String::new();
    wave_isa::write_inst(inst, &mut text, &|o| module.symbol_at(o).map(|s| s.name.clone()));
    let mut md = String::new();
    let _ = writeln!(md, "```wave\n{text}\n```\n");
    let _ = writeln!(md, "**{}** — {} (spec {})\n", op.mnemonic, op.category.title(), op.section);
    // `<cond>` would be read as an HTML tag by Markdown renderers: escape the angle brackets.
    let _ = writeln!(md, "{}\n", op.summary.replace('<', "\\<").replace('>', "\\>"));
    if let Some(cap) = op.capability {
        let _ = writeln!(md, "Needs the optional capability {}.\n", cap.name());
    }
    // The encoding of this instruction.
    let format = match (op.format, inst.ext.is_some()) {
        (Format::Extended, _) => "extended format (80 bits)",
        (Format::Base, true) => "base format with an extension word (80 bits)",
        (Format::Base, false) => "base format (48 bits)",
    };
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let _ = writeln!(md, "Encoding, {format}: `{}`\n", hex.join(" "));
    let w = inst.base_word();
    let _ = writeln!(md, "| field | bits | value |\n|---|---|---|");
    for f in wave_isa::BASE_FIELDS.iter().filter(|f| f.name != "reserved") {
        let bits = if f.hi == f.lo { format!("{}", f.hi) } else { format!("{}:{}", f.hi, f.lo) };
        let _ = writeln!(md, "| {} | {bits} | {} |", f.name, f.of(w));
    }
    if let Some(ext) = inst.ext {
        let _ = writeln!(md, "| extension word | 79:48 | 0x{ext:08x} |");
    }
    md
}

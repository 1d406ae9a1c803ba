//! Help while typing: signature help for operand lists, on-type indentation of blocks,
//! selection ranges, and document highlights.

use std::ops::Range;

use wave_asm::syntax::StmtKind;
use wave_db::{Database, SourceFile, kernels};
use wave_isa::Flow;

use crate::at::kernel_at;
use crate::tokens::{TokenKind, flow_of, kernel_tokens, token_at};

/// The signature of the instruction being typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The form, e.g. `iadd rd, rs1, rs2|imm`.
    pub label: String,
    /// Each operand's byte range in `label`.
    pub parameters: Vec<Range<usize>>,
    /// The operand under the cursor (may equal `parameters.len()` past the last one).
    pub active: usize,
    /// What the instruction does.
    pub documentation: String,
}

/// The signature help at byte `offset`: the operand form of the instruction on the cursor's
/// line, and which operand the cursor is in. Works on lines that do not parse yet.
pub fn signature_help(db: &Database, file: SourceFile, offset: usize) -> Option<Signature> {
    if crate::source::is_source(db, file) {
        return None;
    }
    let text = file.text(db);
    if offset > text.len() || !text.is_char_boundary(offset) {
        return None;
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    if before.contains(';') {
        return None;
    }
    let mut rest = before.trim_start();
    if rest.starts_with('@') {
        rest = rest.split_once(char::is_whitespace)?.1.trim_start();
    }
    let (mnemonic, operands) = rest.split_once(char::is_whitespace)?;
    let (op, _) = crate::tokens::resolve(mnemonic);
    let op = op?;
    // The form as the ISA reference writes it (`icmp.{eq|ne|…} pd, rs1, rs2|imm`).
    let (label, parameters) = wave_asm::form_parts(op);
    // Commas outside brackets before the cursor.
    let mut depth = 0i32;
    let mut active = 0;
    for c in operands.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => active += 1,
            _ => {}
        }
    }
    Some(Signature { label, parameters, active, documentation: op.summary.to_string() })
}

/// The first word of a line, lowercase.
fn first_word(line: &str) -> String {
    line.split_whitespace().next().unwrap_or("").to_ascii_lowercase()
}

/// Whether a line starting with `word` sits one level out of its block (`else`, `endif`,
/// `endloop`).
fn sits_out(word: &str) -> bool {
    flow_of(word).is_some_and(|f| f == Flow::Else || f.closes())
}

/// The block depth before each line of `text` (a kernel's text), counting `if`/`else`/`loop`
/// as openers and `else`/`endif`/`endloop` as closers.
fn depths(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    for line in text.split_inclusive('\n') {
        out.push(depth);
        let flow = flow_of(&first_word(line));
        if flow.is_some_and(Flow::opens) {
            depth += 1;
        } else if flow.is_some_and(Flow::closes) {
            depth = depth.saturating_sub(1);
        }
    }
    out
}

/// The indentation `wave fmt` gives an instruction line at block `depth`; `else`, `endif` and
/// `endloop` sit one level out.
fn indentation(line: &str, depth: usize) -> String {
    let word = first_word(line);
    if word.starts_with('.') || (word.ends_with(':') && !word.contains(',')) {
        return String::new();
    }
    let out = if sits_out(&word) { depth.saturating_sub(1) } else { depth };
    "    ".repeat(1 + out)
}

/// Edits that indent as you type, after `typed` was inserted before byte `offset`: a newline
/// indents the new line to its block depth (and fixes the line it ended if that closed a
/// block); the last letter of `else`, `endif` or `endloop` moves that line one level out.
/// Each edit replaces a line's leading whitespace.
pub fn on_type_indent(
    db: &Database,
    file: SourceFile,
    offset: usize,
    typed: &str,
) -> Vec<(Range<usize>, String)> {
    if crate::source::is_source(db, file) {
        return Vec::new();
    }
    let text = file.text(db);
    let Some(kernel) = kernels(db, file)
        .kernels
        .iter()
        .find(|k| k.range.start < offset && (offset < k.range.end || k.range.end == text.len()))
    else {
        return Vec::new();
    };
    let body = &text[kernel.range.clone()];
    let depth_before = depths(body);
    let starts: Vec<usize> = std::iter::once(0)
        .chain(body.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|s| *s <= body.len())
        .collect();
    let local = offset - kernel.range.start;
    let line_index = starts.partition_point(|s| *s <= local).saturating_sub(1);
    let fix = |index: usize| -> Option<(Range<usize>, String)> {
        let start = *starts.get(index)?;
        let line = body[start..].split('\n').next().unwrap_or("");
        let depth = *depth_before.get(index).unwrap_or(&0);
        let want = indentation(line, depth);
        let have = line.len() - line.trim_start_matches([' ', '\t']).len();
        (line[..have] != want)
            .then(|| (kernel.range.start + start..kernel.range.start + start + have, want.clone()))
    };
    let mut out = Vec::new();
    if typed == "\n" {
        if line_index > 0 {
            let prev = &body[starts[line_index - 1]..starts[line_index]];
            if sits_out(&first_word(prev)) {
                out.extend(fix(line_index - 1));
            }
        }
        // The new line: the depth after the previous line.
        let start = starts[line_index];
        let line = body[start..].split('\n').next().unwrap_or("");
        let have = line.len() - line.trim_start_matches([' ', '\t']).len();
        let depth = *depth_before.get(line_index).unwrap_or(&0);
        let want = if line.trim().is_empty() {
            "    ".repeat(1 + depth)
        } else {
            indentation(line, depth)
        };
        if line[..have] != want {
            out.push((kernel.range.start + start..kernel.range.start + start + have, want));
        }
    } else {
        let start = starts[line_index];
        let line = body[start..].split('\n').next().unwrap_or("");
        if sits_out(line.trim()) {
            out.extend(fix(line_index));
        }
    }
    out
}

/// Nested ranges around byte `offset`, innermost first: the token, its statement, each
/// enclosing block (`if` … `endif`, `loop` … `endloop`), the kernel, the file.
pub fn selection_ranges(db: &Database, file: SourceFile, offset: usize) -> Vec<Range<usize>> {
    if crate::source::is_source(db, file) {
        return Vec::new();
    }
    let text = file.text(db);
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut push = |r: Range<usize>| {
        if out.last().is_none_or(|last| r != *last && r.start <= last.start && last.end <= r.end) {
            out.push(r);
        }
    };
    if let Some(at) = kernel_at(db, file, offset) {
        let tokens = kernel_tokens(at.check);
        if let Some(t) = token_at(&tokens, at.local) {
            push(at.file_range(&t.range));
        }
        let stmts = &at.check.parsed.stmts;
        if let Some(s) = stmts.iter().find(|s| s.span.start <= at.local && at.local <= s.span.end) {
            // An operand, then the statement.
            if let StmtKind::Instruction(inst) = &s.kind
                && let Some(o) = inst
                    .operands
                    .iter()
                    .find(|o| o.span.start <= at.local && at.local <= o.span.end)
            {
                push(at.file_range(&o.span));
            }
            push(at.file_range(&s.span));
        }
        // Blocks, from the matched structure of the statements.
        let mut open: Vec<usize> = Vec::new();
        let mut blocks: Vec<Range<usize>> = Vec::new();
        for s in stmts {
            if let StmtKind::Instruction(inst) = &s.kind {
                let flow = flow_of(&inst.mnemonic);
                if flow.is_some_and(Flow::opens) {
                    open.push(s.span.start);
                } else if flow.is_some_and(Flow::closes)
                    && let Some(start) = open.pop()
                {
                    blocks.push(start..s.span.end);
                }
            }
        }
        let mut around: Vec<Range<usize>> =
            blocks.into_iter().filter(|b| b.start <= at.local && at.local <= b.end).collect();
        around.sort_by_key(|b| b.end - b.start);
        for b in around {
            push(at.file_range(&b));
        }
        push(at.span.range.clone());
    }
    push(0..text.len());
    out
}

/// How a highlighted occurrence is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read.
    Read,
    /// Written (or defined).
    Write,
}

/// Every occurrence in its kernel of the register, predicate, parameter or label at `offset`,
/// with how it is used. A parameter's uses include its register.
pub fn document_highlights(
    db: &Database,
    file: SourceFile,
    offset: usize,
) -> Vec<(Range<usize>, Access)> {
    if crate::source::is_source(db, file) {
        return Vec::new();
    }
    let Some(at) = kernel_at(db, file, offset) else { return Vec::new() };
    let tokens = kernel_tokens(at.check);
    let Some(t) = token_at(&tokens, at.local) else { return Vec::new() };
    let name = &at.text[t.range.clone()];
    let same = |u: &TokenKind, text: &str| -> Option<Access> {
        match (&t.kind, u) {
            (TokenKind::Register { number: a, .. }, TokenKind::Register { number: b, write })
            | (TokenKind::Predicate { number: a, .. }, TokenKind::Predicate { number: b, write })
                if a == b =>
            {
                Some(if *write { Access::Write } else { Access::Read })
            }
            (
                TokenKind::Parameter { index: a, .. },
                TokenKind::Parameter { index: b, definition },
            ) if a == b => Some(if *definition { Access::Write } else { Access::Read }),
            (TokenKind::Label { .. }, TokenKind::Label { definition }) if text == name => {
                Some(if *definition { Access::Write } else { Access::Read })
            }
            (TokenKind::Special(a), TokenKind::Special(b)) if a == b => Some(Access::Read),
            _ => None,
        }
    };
    tokens
        .iter()
        .filter_map(|u| {
            same(&u.kind, &at.text[u.range.clone()]).map(|a| (at.file_range(&u.range), a))
        })
        .collect()
}

//! The formatter behind `wave fmt`: canonical mnemonics, one statement per line, block
//! indentation and aligned trailing comments.
//!
//! It only formats files that assemble without errors (it would otherwise have to guess), and
//! keeps what the author chose: operand spellings (parameter names, number bases), comments
//! and single blank lines. Formatting is idempotent: formatting the output changes nothing.

use std::collections::HashMap;

use wave_diag::Diagnostic;
use wave_isa::Flow;

use crate::syntax::{ArgKind, OperandKind, StmtKind};
use crate::{Assembly, assemble};

const INDENT: &str = "    ";

/// Formats `text`, or returns the errors that prevent it.
pub fn format(text: &str) -> Result<String, Vec<Diagnostic>> {
    let assembly = assemble(text, "<fmt>");
    if assembly.has_errors() {
        return Err(assembly.diagnostics.into_iter().filter(Diagnostic::is_error).collect());
    }
    Ok(render(text, &assembly))
}

struct Line {
    code: String,
    comment: Option<String>,
}

fn render(text: &str, assembly: &Assembly) -> String {
    let placed: HashMap<usize, &crate::Placed> =
        assembly.placed.iter().map(|p| (p.stmt, p)).collect();
    // Source line of each byte offset.
    let mut line_starts = vec![0usize];
    line_starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
    let line_of = |at: usize| line_starts.partition_point(|&s| s <= at) - 1;

    let mut stmts_by_line: Vec<Vec<usize>> = vec![Vec::new(); line_starts.len()];
    for (i, stmt) in assembly.parsed.stmts.iter().enumerate() {
        stmts_by_line[line_of(stmt.span.start)].push(i);
    }
    let mut comment_by_line: Vec<Option<&str>> = vec![None; line_starts.len()];
    for c in &assembly.parsed.comments {
        comment_by_line[line_of(c.start)] = Some(text[c.clone()].trim_end());
    }

    let mut out: Vec<Option<Line>> = Vec::new(); // None: a blank line
    let mut in_kernel = false;
    let mut depth = 0usize;
    for line in 0..line_starts.len() {
        let stmts = &stmts_by_line[line];
        let comment = comment_by_line[line];
        if stmts.is_empty() {
            match comment {
                Some(c) => {
                    let indent = if in_kernel { INDENT.repeat(1 + depth) } else { String::new() };
                    out.push(Some(Line { code: format!("{indent}{c}"), comment: None }));
                }
                None => {
                    if matches!(out.last(), Some(Some(_))) {
                        out.push(None);
                    }
                }
            }
            continue;
        }
        let last = stmts.len() - 1;
        for (n, &i) in stmts.iter().enumerate() {
            let stmt = &assembly.parsed.stmts[i];
            let code = match &stmt.kind {
                StmtKind::Kernel { name } => {
                    in_kernel = true;
                    depth = 0;
                    format!(".kernel {}", name.as_ref().map_or("", |(n, _)| n.as_str()))
                }
                StmtKind::End => {
                    in_kernel = false;
                    ".end".to_owned()
                }
                StmtKind::Directive { name, args, .. } => {
                    let args: Vec<String> = args
                        .iter()
                        .map(|a| match &a.kind {
                            ArgKind::Typed { name, ty } => {
                                format!("{}: {}", name.0, ty.0.to_ascii_lowercase())
                            }
                            ArgKind::Integer(t) | ArgKind::Float(t) | ArgKind::Name(t) => t.clone(),
                        })
                        .collect();
                    if args.is_empty() {
                        name.clone()
                    } else {
                        format!("{name} {}", args.join(", "))
                    }
                }
                StmtKind::Label { name, .. } => format!("{name}:"),
                StmtKind::Instruction(syntax) => {
                    let Some(p) = placed.get(&i) else { continue };
                    let (out_one, in_after) =
                        crate::indentation(p.inst.info().map_or(Flow::Next, |op| op.flags.flow));
                    if out_one {
                        depth = depth.saturating_sub(1);
                    }
                    let mut code = INDENT.repeat(1 + depth);
                    if let Some(g) = p.inst.guard {
                        code.push_str(&format!(
                            "@{}p{} ",
                            if g.negate { "!" } else { "" },
                            g.predicate
                        ));
                    }
                    wave_isa::write_mnemonic(&p.inst, &mut code);
                    let operands: Vec<String> = syntax
                        .operands
                        .iter()
                        .filter(|o| !matches!(o.kind, OperandKind::Scope(_)))
                        .map(|o| operand(text, o))
                        .collect();
                    if !operands.is_empty() {
                        code.push(' ');
                        code.push_str(&operands.join(", "));
                    }
                    if in_after {
                        depth += 1;
                    }
                    code
                }
            };
            let comment = if n == last { comment.map(str::to_owned) } else { None };
            out.push(Some(Line { code, comment }));
        }
    }
    while matches!(out.last(), Some(None)) {
        out.pop();
    }
    align_comments(&mut out);
    let mut result = String::new();
    for line in out {
        match line {
            None => result.push('\n'),
            Some(Line { code, comment }) => {
                result.push_str(&code);
                if let Some(c) = comment {
                    result.push_str(&c);
                }
                result.push('\n');
            }
        }
    }
    result
}

/// Aligns trailing comments of consecutive code lines to one column (two spaces past the
/// longest code in the run).
fn align_comments(lines: &mut [Option<Line>]) {
    let mut i = 0;
    while i < lines.len() {
        let has_trailing = |l: &Option<Line>| l.as_ref().is_some_and(|l| l.comment.is_some());
        if !has_trailing(&lines[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && has_trailing(&lines[i]) {
            i += 1;
        }
        let width = lines[start..i].iter().flatten().map(|l| l.code.len()).max().unwrap_or(0);
        for line in lines[start..i].iter_mut().flatten() {
            let pad = width + 2 - line.code.len();
            line.code.push_str(&" ".repeat(pad));
        }
    }
}

fn operand(text: &str, o: &crate::syntax::Operand) -> String {
    match &o.kind {
        OperandKind::Register { .. } | OperandKind::Pair { .. } | OperandKind::Special(_) => {
            text[o.span.clone()].to_ascii_lowercase().replace(' ', "")
        }
        OperandKind::Predicate { number, negate } => {
            format!("{}p{number}", if *negate { "!" } else { "" })
        }
        OperandKind::Memory { base, offset } => {
            let base = operand(text, base);
            match offset {
                Some((value, _)) => match value.strip_prefix('-') {
                    Some(v) => format!("[{base} - {v}]"),
                    None => format!("[{base} + {value}]"),
                },
                None => format!("[{base}]"),
            }
        }
        _ => text[o.span.clone()].to_owned(),
    }
}

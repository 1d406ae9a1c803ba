//! Document outline features: symbols, folding ranges, formatting and occupancy hints.

use std::ops::Range;

use wave_db::{Database, Settings, SourceFile, kernels, occupancy};
use wave_isa::Flow;

mod source;

/// What a symbol is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A `.kernel`.
    Kernel,
    /// A label (`name:`) inside a kernel.
    Label,
}

/// A document symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// Kernel or label.
    pub kind: SymbolKind,
    /// What it spans (a kernel: `.kernel` to `.end`; a label: its line).
    pub range: Range<usize>,
    /// Its name in the text.
    pub selection: Range<usize>,
    /// Labels of a kernel.
    pub children: Vec<Symbol>,
}

/// The kernels of a file, each with its labels.
pub fn symbols(db: &Database, file: SourceFile) -> Vec<Symbol> {
    if let Some(b) = crate::source::build(db, file) {
        return source::symbols(b);
    }
    let text = file.text(db);
    kernels(db, file)
        .kernels
        .iter()
        .map(|k| {
            let body = &text[k.range.clone()];
            let first_line = body.lines().next().unwrap_or("");
            let selection = first_line
                .find(&k.name)
                .filter(|_| !k.name.is_empty())
                .map_or(k.range.start..k.range.start, |i| {
                    k.range.start + i..k.range.start + i + k.name.len()
                });
            let mut children = Vec::new();
            let mut at = k.range.start;
            for line in body.split_inclusive('\n') {
                let trimmed = line.trim_start();
                let indent = line.len() - trimmed.len();
                if let Some(name) = label_of(trimmed) {
                    let start = at + indent;
                    children.push(Symbol {
                        name: name.to_string(),
                        kind: SymbolKind::Label,
                        range: start..at + line.trim_end().len(),
                        selection: start..start + name.len(),
                        children: Vec::new(),
                    });
                }
                at += line.len();
            }
            Symbol {
                name: k.name.clone(),
                kind: SymbolKind::Kernel,
                range: k.range.clone(),
                selection,
                children,
            }
        })
        .collect()
}

/// The label a line starts with (`name:`), if any.
fn label_of(line: &str) -> Option<&str> {
    let end = line.find(':')?;
    let name = &line[..end];
    let ok = !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then_some(name)
}

/// Foldable ranges: every kernel, and every `if`/`else` and `loop` block, from its first line
/// to the line before its end (byte ranges of whole lines).
pub fn folding_ranges(db: &Database, file: SourceFile) -> Vec<Range<usize>> {
    if crate::source::is_source(db, file) {
        return Vec::new();
    }
    let text = file.text(db);
    let mut out: Vec<Range<usize>> =
        kernels(db, file).kernels.iter().map(|k| k.range.clone()).collect();
    let mut stack: Vec<usize> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let word = line.split_whitespace().next().unwrap_or("");
        match crate::tokens::flow_of(word) {
            Some(Flow::If | Flow::Loop) => stack.push(at),
            Some(Flow::Else) => {
                if let Some(start) = stack.pop() {
                    out.push(start..at);
                }
                stack.push(at);
            }
            Some(Flow::Endif | Flow::Endloop) => {
                if let Some(start) = stack.pop() {
                    out.push(start..at);
                }
            }
            Some(
                Flow::Next | Flow::Break | Flow::Continue | Flow::Call | Flow::Return | Flow::Halt,
            )
            | None => {}
        }
        at += line.len();
    }
    out.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    out
}

/// The formatted file (as `wave fmt`), or `None` when it does not assemble or is formatted.
pub fn format(db: &Database, file: SourceFile) -> Option<String> {
    if crate::source::is_source(db, file) {
        return None;
    }
    let text = file.text(db);
    wave_asm::format(text).ok().filter(|f| f != text)
}

/// Per kernel, the occupancy on the settings' target, shown at the end of its `.kernel` line;
/// with the `live_registers` setting, also the registers live after each instruction
/// (`live 5`) at the end of its line.
pub fn inlay_hints(db: &Database, file: SourceFile, settings: Settings) -> Vec<(usize, String)> {
    if let Some(b) = crate::source::build(db, file) {
        return source::inlay_hints(db, file, b, settings);
    }
    let text = file.text(db);
    let mut out = Vec::new();
    for k in &kernels(db, file).kernels {
        let line_end = text[k.range.clone()].find('\n').map_or(k.range.end, |i| k.range.start + i);
        if let Some(hint) = occupancy(db, k.source, settings).clone() {
            out.push((line_end, hint));
        }
        if settings.live_registers(db) {
            for (end, n) in crate::liveness::kernel_liveness(db, k.source) {
                let at = k.range.start + end;
                let eol = text[at..].find('\n').map_or(text.len(), |i| at + i);
                out.push((eol, format!("live {n}")));
            }
        }
    }
    out.sort_by_key(|(at, _)| *at);
    out
}

//! Completion: mnemonics and snippets at the start of a statement, directives after a `.`,
//! and registers, predicates, parameters, special registers and labels in operand position.

use wave_asm::syntax::{ArgKind, StmtKind};
use wave_db::{Database, SourceFile, check_kernel, kernels};
use wave_isa::SPECIALS;

/// What a completion inserts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    /// An instruction mnemonic.
    Mnemonic,
    /// A directive (`.param`, ...).
    Directive,
    /// A block snippet (`if` ... `endif`).
    Snippet,
    /// A register or predicate.
    Register,
    /// A kernel parameter.
    Parameter,
    /// A special register.
    Special,
    /// A label.
    Label,
    /// A dot suffix of the mnemonic being typed (`.u32`, `.device`).
    Suffix,
}

/// One completion item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// What the list shows.
    pub label: String,
    /// What it is.
    pub kind: CompletionKind,
    /// A short description.
    pub detail: String,
    /// The text to insert, in LSP snippet syntax when `kind` is `Snippet`.
    pub insert: String,
}

pub(crate) const DIRECTIVES: [(&str, &str); 6] = [
    ("kernel", "starts a kernel: .kernel NAME"),
    ("param", "a kernel parameter, preloaded into the next register: .param NAME: TYPE"),
    ("registers", "registers per thread (R): .registers N"),
    ("workgroup_size", "threads per workgroup: .workgroup_size X[, Y[, Z]]"),
    ("local_memory", "bytes of Local Memory per workgroup: .local_memory N"),
    ("end", "ends the kernel"),
];

/// The completions at byte `offset` of `file`.
pub fn completions(db: &Database, file: SourceFile, offset: usize) -> Vec<Completion> {
    if crate::source::is_source(db, file) {
        return Vec::new();
    }
    let text = file.text(db);
    if offset > text.len() || !text.is_char_boundary(offset) {
        return Vec::new();
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    if before.contains(';') {
        return Vec::new();
    }
    let trimmed = before.trim_start();
    // Past a guard (`@p0 `, `@!p1 `), a statement starts.
    let statement = match trimmed.strip_prefix('@') {
        Some(rest) => match rest.find(char::is_whitespace) {
            Some(i) => rest[i..].trim_start(),
            None => return predicates(),
        },
        None => trimmed,
    };
    if let Some(word) = statement.strip_prefix('.')
        && !word.contains(char::is_whitespace)
    {
        return DIRECTIVES
            .iter()
            .map(|(d, detail)| Completion {
                label: format!(".{d}"),
                kind: CompletionKind::Directive,
                detail: (*detail).into(),
                insert: (*d).into(),
            })
            .collect();
    }
    if !statement.contains(char::is_whitespace) {
        if let Some((base, typed)) = statement.split_once('.') {
            return suffixes(base, typed);
        }
        return mnemonics();
    }
    if statement.starts_with('.') {
        return Vec::new();
    }
    operands(db, file, offset)
}

fn mnemonics() -> Vec<Completion> {
    let mut out: Vec<Completion> = wave_isa::all_spellings()
        .iter()
        .map(|m| {
            let detail =
                wave_isa::lookup_name(m).map_or(String::new(), |(op, _)| op.summary.to_string());
            Completion {
                label: m.clone(),
                kind: CompletionKind::Mnemonic,
                detail,
                insert: m.clone(),
            }
        })
        .collect();
    out.push(Completion {
        label: "if … endif".into(),
        kind: CompletionKind::Snippet,
        detail: "a block for the lanes where the predicate holds".into(),
        insert: "if ${1:p0}\n    $0\nendif".into(),
    });
    out.push(Completion {
        label: "loop … endloop".into(),
        kind: CompletionKind::Snippet,
        detail: "a loop that each lane leaves with break".into(),
        insert: "loop\n    $0\n    break ${1:p0}\nendloop".into(),
    });
    out
}

/// The suffixes of mnemonic `base` not yet written in `typed` (the text after its first dot).
fn suffixes(base: &str, typed: &str) -> Vec<Completion> {
    let Some((op, implied)) = wave_isa::lookup_name(&base.to_ascii_lowercase()) else {
        return Vec::new();
    };
    let written: Vec<&str> = typed.split('.').collect();
    wave_isa::expected_suffixes(op)
        .into_iter()
        .filter(|s| !written[..written.len().saturating_sub(1)].contains(s) && !implied.contains(s))
        .map(|s| Completion {
            label: s.to_string(),
            kind: CompletionKind::Suffix,
            detail: format!("suffix of `{}`", op.mnemonic),
            insert: s.to_string(),
        })
        .collect()
}

fn predicates() -> Vec<Completion> {
    (0..4)
        .flat_map(|p| [format!("p{p}"), format!("!p{p}")])
        .map(|p| Completion {
            label: p.clone(),
            kind: CompletionKind::Register,
            detail: "predicate".into(),
            insert: p,
        })
        .collect()
}

/// Registers within the kernel's R, its parameters, predicates, special registers, labels.
fn operands(db: &Database, file: SourceFile, offset: usize) -> Vec<Completion> {
    let layout = kernels(db, file);
    let Some(kernel) =
        layout.kernels.iter().find(|k| k.range.contains(&offset) || k.range.end == offset)
    else {
        return Vec::new();
    };
    let text = kernel.source.text(db);
    let check = check_kernel(db, kernel.source);
    // R and the parameters from the kernel as assembled, or from its directives while it
    // does not assemble.
    let (registers, params): (usize, Vec<String>) = match check.module.kernels.first() {
        Some(k) => (usize::from(k.registers), k.params.iter().map(|p| p.name.clone()).collect()),
        None => {
            // (The parse exists when the kernel does not assemble.)
            let params: Vec<String> =
                crate::tokens::params(check).into_iter().map(|(name, _, _)| name).collect();
            let declared = check.parsed.stmts.iter().find_map(|stmt| match &stmt.kind {
                StmtKind::Directive { name, args, .. } if name == ".registers" => {
                    match &args.first()?.kind {
                        ArgKind::Integer(n) => n.parse::<usize>().ok(),
                        _ => None,
                    }
                }
                _ => None,
            });
            (declared.unwrap_or(16).max(params.len()), params)
        }
    };
    let mut out = Vec::new();
    for (i, p) in params.iter().enumerate() {
        out.push(Completion {
            label: p.clone(),
            kind: CompletionKind::Parameter,
            detail: format!("parameter, in r{i}"),
            insert: p.clone(),
        });
    }
    for r in 0..registers {
        let detail =
            params.get(r).map_or("register".to_string(), |p| format!("register (parameter `{p}`)"));
        out.push(Completion {
            label: format!("r{r}"),
            kind: CompletionKind::Register,
            detail,
            insert: format!("r{r}"),
        });
    }
    out.extend(predicates());
    for (s, meaning) in SPECIALS {
        out.push(Completion {
            label: s.to_string(),
            kind: CompletionKind::Special,
            detail: format!("special register: {meaning}"),
            insert: s.to_string(),
        });
    }
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_suffix(':')
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            out.push(Completion {
                label: name.to_string(),
                kind: CompletionKind::Label,
                detail: "label".into(),
                insert: name.to_string(),
            });
        }
    }
    out
}

//! Go to definition, find references and rename, for labels and parameters within a kernel,
//! and kernel names.

use std::ops::Range;

use wave_db::{Database, SourceFile, kernels};

/// The identifier at `offset` of `text`, with its range.
fn word_at(text: &str, offset: usize) -> Option<(Range<usize>, &str)> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if offset > text.len() || !text.is_char_boundary(offset) {
        return None;
    }
    let start = text[..offset]
        .char_indices()
        .rev()
        .find(|(_, c)| !is_ident(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[offset..].find(|c: char| !is_ident(c)).map_or(text.len(), |i| offset + i);
    (start < end).then(|| (start..end, &text[start..end]))
}

/// Every occurrence of identifier `name` in `text` outside comments, as byte ranges.
fn occurrences(text: &str, name: &str) -> Vec<Range<usize>> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split(';').next().unwrap_or("");
        let mut from = 0;
        while let Some(i) = code[from..].find(name) {
            let s = from + i;
            let e = s + name.len();
            let before = code[..s].chars().next_back();
            let after = code[e..].chars().next();
            let bounded =
                !before.is_some_and(|c| is_ident(c) || c == '.') && !after.is_some_and(is_ident);
            if bounded {
                out.push(at + s..at + e);
            }
            from = e;
        }
        at += line.len();
    }
    out
}

/// Where the label, parameter or kernel at `offset` is defined: the label's `name:`, the
/// parameter's name in its `.param` line, or the name on the `.kernel` line.
pub fn definition(db: &Database, file: SourceFile, offset: usize) -> Option<Range<usize>> {
    if crate::source::is_source(db, file) {
        return None;
    }
    let text = file.text(db);
    let kernel = kernels(db, file).kernels.iter().find(|k| k.range.contains(&offset))?.clone();
    let (_, name) = word_at(text, offset)?;
    // Nothing in a comment is a name.
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    if text[line_start..offset].contains(';') {
        return None;
    }
    let body = &text[kernel.range.clone()];
    let mut at = kernel.range.start;
    for line in body.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.strip_prefix(name).is_some_and(|rest| rest.starts_with(':')) {
            return Some(at + indent..at + indent + name.len());
        }
        if let Some(rest) = trimmed.strip_prefix(".kernel")
            && rest.split_whitespace().next() == Some(name)
        {
            let i = indent + ".kernel".len() + rest.find(name).unwrap_or(0);
            return Some(at + i..at + i + name.len());
        }
        if let Some(rest) = trimmed.strip_prefix(".param") {
            let param = rest.split(':').next().unwrap_or("").trim();
            if param == name {
                let i = line.find(param).unwrap_or(indent);
                return Some(at + i..at + i + name.len());
            }
        }
        at += line.len();
    }
    None
}

/// Every use of the label or parameter at `offset`, its definition included.
pub fn references(db: &Database, file: SourceFile, offset: usize) -> Vec<Range<usize>> {
    if crate::source::is_source(db, file) {
        return Vec::new();
    }
    let Some(def) = definition(db, file, offset) else { return Vec::new() };
    let text = file.text(db);
    let Some(kernel) =
        kernels(db, file).kernels.iter().find(|k| k.range.contains(&offset)).cloned()
    else {
        return Vec::new();
    };
    let name = &text[def];
    occurrences(&text[kernel.range.clone()], name)
        .into_iter()
        .map(|r| r.start + kernel.range.start..r.end + kernel.range.start)
        .collect()
}

/// The edits that rename the label or parameter at `offset` to `new_name`, or why not.
pub fn rename(
    db: &Database,
    file: SourceFile,
    offset: usize,
    new_name: &str,
) -> Result<Vec<(Range<usize>, String)>, String> {
    if crate::source::is_source(db, file) {
        return Err("rename in kernel sources belongs to the language's own server".into());
    }
    let valid = new_name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && new_name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "`{new_name}` is not a name: letters, digits and `_`, not starting with a digit"
        ));
    }
    if wave_isa::lookup_name(new_name).is_some()
        || new_name.starts_with("sr_")
        || is_register(new_name)
    {
        return Err(format!("`{new_name}` is a mnemonic or register name"));
    }
    let refs = references(db, file, offset);
    if refs.is_empty() {
        return Err("only labels, parameters and kernels can be renamed".into());
    }
    // The new name must not already mean something in the kernel, or name another kernel.
    let text = file.text(db);
    let layout = kernels(db, file);
    if let Some(kernel) = layout.kernels.iter().find(|k| k.range.contains(&offset))
        && (!occurrences(&text[kernel.range.clone()], new_name).is_empty()
            || layout.kernels.iter().any(|k| k.name == new_name))
    {
        return Err(format!("`{new_name}` is already used in this kernel or names a kernel"));
    }
    Ok(refs.into_iter().map(|r| (r, new_name.to_string())).collect())
}

/// `r<digits>` or `p<digit>`.
fn is_register(name: &str) -> bool {
    let numbered = |p: &str| {
        name.strip_prefix(p).is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
    };
    numbered("r") || numbered("p")
}

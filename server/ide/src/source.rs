//! What every editor feature needs of a kernel source (Python, Rust, C++, TypeScript): whether a
//! file is one, its build, the kernel a request means and the line of a kernel's name. Each
//! feature then picks the file kind once and keeps its kernel-source half beside its assembly
//! half (`hover/source.rs`, `run/source.rs`, `actions/source.rs`, `outline/source.rs`); the
//! features that are assembly's only (completion, signature help, navigation, folding,
//! formatting, semantic tokens, code actions) return nothing for a kernel source at their top.
//! Only the kernels (and the helpers they call) are analysed: the rest of the file is left to
//! the language's own server, so a file without kernels gets nothing.

use std::ops::Range;

use wave_db::{Database, SourceBuild, SourceFile, source_build, source_language};

/// The build of `file` when it is a kernel source (`None`: WAVE assembly).
pub(crate) fn build(db: &Database, file: SourceFile) -> Option<&SourceBuild> {
    source_build(db, file).as_ref()
}

/// Whether `file` is a kernel source (else WAVE assembly), without building it.
pub(crate) fn is_source(db: &Database, file: SourceFile) -> bool {
    source_language(db, file).is_some()
}

/// The line of a kernel's name: where its hint and lenses go.
pub(crate) fn name_line(text: &str, f: &wave_kernel::Function) -> Range<usize> {
    let start = text[..f.name_span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[f.name_span.start..].find('\n').map_or(text.len(), |i| f.name_span.start + i);
    start..end
}

/// The kernel `name`, or the one whose text holds `offset`, or the first.
pub(crate) fn pick<'b>(
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

/// The 1-based line of byte `offset` of `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Lines of a generated text with the source span of each.
pub(crate) type Lines<'a> = (Vec<&'a str>, Vec<Option<Range<usize>>>);

/// The lines of `text` from the one starting `start` up to and including the first after it
/// starting `end`, with their source spans.
pub(crate) fn section<'a>(
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

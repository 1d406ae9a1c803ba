//! Rendering diagnostics like rustc (with codespan-reporting): the text of a compile error
//! that the command line prints and that the Rust API and the Python package carry in their
//! errors.

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};

/// Writes `diagnostics` of the file `name` with text `text` to `writer`: at most
/// [`MAX_SHOWN`], then a line saying how many more there are; source lines longer than
/// [`MAX_LINE`] bytes are shortened around the parts the diagnostic points at.
pub fn write(
    writer: &mut dyn termcolor::WriteColor,
    name: &str,
    text: &str,
    diagnostics: &[wave_diag::Diagnostic],
) {
    let config = term::Config::default();
    for d in diagnostics.iter().take(MAX_SHOWN) {
        let (shown, edits, d) = shorten(text, d);
        let file = Shown { file: SimpleFile::new(name, shown.as_str()), original: text, edits };
        let _ = term::emit(writer, &config, &file, &convert(&d, shown.len()));
    }
    if diagnostics.len() > MAX_SHOWN {
        let rest = &diagnostics[MAX_SHOWN..];
        let errors = rest.iter().filter(|d| d.severity == wave_diag::Severity::Error).count();
        let _ = writeln!(
            writer,
            "{name}: {} more diagnostics not shown ({errors} errors, {} warnings; at most {MAX_SHOWN} are shown per file)",
            rest.len(),
            rest.len() - errors
        );
    }
}

/// [`write()`] to a string, without colour.
pub fn render(name: &str, text: &str, diagnostics: &[wave_diag::Diagnostic]) -> String {
    let mut out = termcolor::NoColor::new(Vec::new());
    write(&mut out, name, text, diagnostics);
    String::from_utf8_lossy(&out.into_inner()).into_owned()
}

/// The most diagnostics shown for one file.
pub const MAX_SHOWN: usize = 50;

/// Source lines longer than this are shortened in snippets.
pub const MAX_LINE: usize = 240;

/// Bytes of context kept on each side of the span in a shortened line.
const CONTEXT: usize = 60;

/// `text` with each line longer than [`MAX_LINE`] that the snippet of the diagnostic can show
/// cut down to [`CONTEXT`] bytes around each span's ends (or its start, on a line no span
/// ends on), `…` where text was cut, and the diagnostic with its spans moved to match. No
/// newline is cut, so line numbers do not change.
fn shorten(text: &str, d: &wave_diag::Diagnostic) -> (String, Edits, wave_diag::Diagnostic) {
    let len = text.len();
    let spans: Vec<std::ops::Range<usize>> = std::iter::once(&d.span)
        .chain(d.labels.iter().map(|(s, _)| s))
        .map(|s| on_chars(text, s))
        .collect();
    // Every line codespan may print lies between the line before the first span and the line
    // after the last one. Each long line there keeps a window around each span endpoint on it
    // (or its first MAX_LINE bytes when none is), and the rest becomes `…`.
    let first = spans.iter().map(|s| s.start).min().unwrap_or(0);
    let last = spans.iter().map(|s| s.end).max().unwrap_or(0);
    let line_start = |at: usize| text[..at].rfind('\n').map_or(0, |n| n + 1);
    let region_start = line_start(line_start(first).saturating_sub(1));
    let region_end = {
        let end = text[last..].find('\n').map_or(len, |n| last + n);
        if end < len { text[end + 1..].find('\n').map_or(len, |n| end + 1 + n) } else { len }
    };
    let mut edits: Edits = Vec::new();
    let mut start = region_start;
    while start <= region_end && start <= len {
        let end = text[start..].find('\n').map_or(len, |n| start + n);
        if end - start > MAX_LINE {
            let mut windows: Vec<(usize, usize)> = spans
                .iter()
                .flat_map(|s| [s.start, s.end])
                .filter(|&at| start <= at && at <= end)
                .map(|at| {
                    let from = floor(text, at.saturating_sub(CONTEXT).max(start));
                    (from, ceil(text, (at + CONTEXT).min(end)))
                })
                .collect();
            if windows.is_empty() {
                windows.push((start, ceil(text, (start + MAX_LINE).min(end))));
            }
            windows.sort_unstable();
            let mut kept = start;
            for (from, to) in merged(windows) {
                // A cut only where it saves more than the ellipsis it puts there.
                if from > kept + "…".len() {
                    edits.push((kept, from, "…"));
                }
                kept = to;
            }
            if end > kept + "…".len() {
                edits.push((kept, end, "…"));
            }
        }
        start = end + 1;
    }
    if edits.is_empty() {
        let mut d = d.clone();
        d.span = on_chars(text, &d.span);
        for (s, _) in &mut d.labels {
            *s = on_chars(text, s);
        }
        return (text.to_string(), Vec::new(), d);
    }
    let mut out = String::with_capacity(len);
    let mut last = 0;
    for &(from, to, with) in &edits {
        out.push_str(&text[last..from]);
        out.push_str(with);
        last = to;
    }
    out.push_str(&text[last..]);
    let map = |p: usize| -> usize {
        let mut shift: isize = 0;
        for &(from, to, with) in &edits {
            if p >= to {
                shift += with.len() as isize - (to - from) as isize;
            } else if p > from {
                // Inside a cut: at the ellipsis.
                return (from as isize + shift) as usize;
            }
        }
        (p as isize + shift) as usize
    };
    let mut d = d.clone();
    let moved = |s: &std::ops::Range<usize>| {
        let s = on_chars(text, s);
        map(s.start)..map(s.end)
    };
    d.span = moved(&d.span);
    for (s, _) in &mut d.labels {
        *s = moved(s);
    }
    (out, edits, d)
}

/// Sorted windows, overlapping ones joined.
fn merged(windows: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (from, to) in windows {
        match out.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => out.push((from, to)),
        }
    }
    out
}

/// Cuts of the original text: `text[from..to]` replaced with the string.
type Edits = Vec<(usize, usize, &'static str)>;

/// The shortened text for codespan, with the line and column numbers of the original.
struct Shown<'t> {
    file: SimpleFile<&'t str, &'t str>,
    original: &'t str,
    edits: Edits,
}

impl<'a> codespan_reporting::files::Files<'a> for Shown<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: ()) -> Result<&'a str, codespan_reporting::files::Error> {
        codespan_reporting::files::Files::name(&self.file, id)
    }

    fn source(&'a self, id: ()) -> Result<&'a str, codespan_reporting::files::Error> {
        codespan_reporting::files::Files::source(&self.file, id)
    }

    fn line_index(&'a self, id: (), at: usize) -> Result<usize, codespan_reporting::files::Error> {
        codespan_reporting::files::Files::line_index(&self.file, id, at)
    }

    fn line_range(
        &'a self,
        id: (),
        line: usize,
    ) -> Result<std::ops::Range<usize>, codespan_reporting::files::Error> {
        codespan_reporting::files::Files::line_range(&self.file, id, line)
    }

    /// The column in the original line (characters from its start, plus one).
    fn column_number(
        &'a self,
        _: (),
        _: usize,
        at: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        // Back to the original: past each cut before `at`, add what it removed.
        let mut delta = 0usize;
        let mut original = None;
        for &(from, to, with) in &self.edits {
            let shown_from = from - delta;
            if at < shown_from {
                break;
            }
            if at < shown_from + with.len() {
                original = Some(from);
                break;
            }
            delta += (to - from) - with.len();
        }
        let original = original.unwrap_or(at + delta);
        let original = floor(self.original, original.min(self.original.len()));
        let start = self.original[..original].rfind('\n').map_or(0, |n| n + 1);
        Ok(self.original[start..original].chars().count() + 1)
    }
}

/// `span` within `text` and on character boundaries (a diagnostic may point into the middle
/// of a character of a mangled file).
fn on_chars(text: &str, span: &std::ops::Range<usize>) -> std::ops::Range<usize> {
    let s = clamp(span, text.len());
    floor(text, s.start)..ceil(text, s.end)
}

fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

fn clamp(span: &std::ops::Range<usize>, len: usize) -> std::ops::Range<usize> {
    span.start.min(len)..span.end.min(len).max(span.start.min(len))
}

fn convert(d: &wave_diag::Diagnostic, len: usize) -> Diagnostic<()> {
    let severity = match d.severity {
        wave_diag::Severity::Error => Severity::Error,
        wave_diag::Severity::Warning => Severity::Warning,
    };
    let mut labels = vec![Label::primary((), clamp(&d.span, len))];
    labels
        .extend(d.labels.iter().map(|(s, m)| Label::secondary((), clamp(s, len)).with_message(m)));
    let mut notes: Vec<String> = d.notes.iter().map(|n| format!("note: {n}")).collect();
    if let Some(s) = &d.suggestion {
        if s.replacement.trim().is_empty() || s.message.contains(s.replacement.trim()) {
            notes.push(format!("help: {}", s.message));
        } else {
            notes.push(format!("help: {}: `{}`", s.message, s.replacement.trim()));
        }
    }
    Diagnostic::new(severity)
        .with_code(d.code)
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes)
}

//! Diagnostics shared by every WAVE analysis.
//!
//! Analyses never fail: they return their result together with a `Vec<Diagnostic>`. A
//! diagnostic is plain data — a stable code (`E0101`, `W0003`), a primary byte span into the
//! file that was analysed, a message in plain words, optional secondary labels, notes and a
//! machine-applicable suggestion. Rendering (codespan-reporting on the command line, LSP
//! diagnostics in the server) happens at the edges; nothing here knows about terminals or
//! protocols, and spans are byte offsets (UTF-16 conversion lives in the LSP crate).

use std::fmt;
use std::ops::Range;

/// A byte range in the analysed text.
pub type Span = Range<usize>;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Something worth knowing that does not stop the build.
    Warning,
    /// The input is wrong; no output is produced.
    Error,
}

/// A replacement the user (or an editor quick fix) can apply as is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    /// What the fix does, e.g. "use `mov_imm`".
    pub message: String,
    /// The bytes to replace.
    pub span: Span,
    /// The replacement text.
    pub replacement: String,
}

/// One finding of an analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable code: `E....` for errors, `W....` for warnings. Documented in `docs/diagnostics.md`.
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// The primary location.
    pub span: Span,
    /// The message, in plain words, without a trailing period.
    pub message: String,
    /// Secondary locations with their own short messages.
    pub labels: Vec<(Span, String)>,
    /// Extra sentences shown under the diagnostic.
    pub notes: Vec<String>,
    /// A fix that can be applied mechanically.
    pub suggestion: Option<Suggestion>,
}

impl Diagnostic {
    /// The same diagnostic with every span (primary, labels, suggestion) moved by `f`: how a
    /// diagnostic of a piece of a file is placed in the whole file.
    pub fn moved(&self, f: impl Fn(&Span) -> Span) -> Diagnostic {
        let mut d = self.clone();
        d.span = f(&d.span);
        for (span, _) in &mut d.labels {
            *span = f(span);
        }
        if let Some(s) = &mut d.suggestion {
            s.span = f(&s.span);
        }
        d
    }

    /// An error with `code` at `span`.
    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, span, message)
    }

    /// A warning with `code` at `span`.
    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, span, message)
    }

    fn new(severity: Severity, code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity,
            span,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            suggestion: None,
        }
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push((span, message.into()));
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Sets the suggestion.
    pub fn with_suggestion(
        mut self,
        message: impl Into<String>,
        span: Span,
        replacement: impl Into<String>,
    ) -> Self {
        self.suggestion =
            Some(Suggestion { message: message.into(), span, replacement: replacement.into() });
        self
    }

    /// Suggests `replacement` for the text at `span`, as "did you mean `replacement`?".
    pub fn suggest_replacement(&mut self, span: Span, replacement: &str) {
        self.suggestion = Some(Suggestion {
            message: format!("did you mean `{replacement}`?"),
            span,
            replacement: replacement.to_owned(),
        });
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{kind}[{}] {}..{}: {}", self.code, self.span.start, self.span.end, self.message)
    }
}

/// Whether any diagnostic in `diagnostics` is an error.
pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

/// The closest candidate to `word` by edit distance, if it is close enough to be a likely typo.
///
/// "Close enough" follows rustc: at most a third of the word's length, and at least one edit.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count().max(3)) / 3;
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = edit_distance(word, candidate);
        if distance <= limit.max(1) && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over chars, with adjacent transposition counted as one edit.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_transpositions_once() {
        assert_eq!(edit_distance("iadd", "iadd"), 0);
        assert_eq!(edit_distance("iad", "iadd"), 1);
        assert_eq!(edit_distance("idad", "iadd"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn did_you_mean_picks_the_closest_and_rejects_far_words() {
        let words = ["iadd", "isub", "fadd", "halt"];
        assert_eq!(did_you_mean("iaddd", words), Some("iadd"));
        assert_eq!(did_you_mean("hlat", words), Some("halt"));
        assert_eq!(did_you_mean("completely_different", words), None);
    }
}

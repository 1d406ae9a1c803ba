//! Rendering diagnostics like rustc, with codespan-reporting.

use std::io::IsTerminal;

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};

/// When to use colour.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum Color {
    /// When standard error is a terminal.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Prints diagnostics to standard error.
pub(crate) struct Reporter {
    choice: termcolor::ColorChoice,
}

impl Reporter {
    pub(crate) fn new(color: Color) -> Self {
        let choice = match color {
            Color::Always => termcolor::ColorChoice::Always,
            Color::Never => termcolor::ColorChoice::Never,
            Color::Auto if std::io::stderr().is_terminal() => termcolor::ColorChoice::Auto,
            Color::Auto => termcolor::ColorChoice::Never,
        };
        Reporter { choice }
    }

    /// Prints `diagnostics` of the file `name` with text `text`.
    pub(crate) fn emit(&self, name: &str, text: &str, diagnostics: &[wave_diag::Diagnostic]) {
        let file = SimpleFile::new(name, text);
        let writer = termcolor::StandardStream::stderr(self.choice);
        let mut writer = writer.lock();
        let config = term::Config::default();
        for d in diagnostics {
            let _ = term::emit(&mut writer, &config, &file, &convert(d, text.len()));
        }
    }
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

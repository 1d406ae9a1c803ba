//! Rendering diagnostics like rustc, with codespan-reporting.

use std::io::IsTerminal;

use codespan_reporting::term::termcolor;

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

    /// Prints `diagnostics` of the file `name` with text `text` ([`wave_runtime::report`]).
    pub(crate) fn emit(&self, name: &str, text: &str, diagnostics: &[wave_diag::Diagnostic]) {
        let writer = termcolor::StandardStream::stderr(self.choice);
        wave_runtime::report::write(&mut writer.lock(), name, text, diagnostics);
    }
}

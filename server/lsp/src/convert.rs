//! Byte offsets to protocol positions and back, and diagnostics to protocol diagnostics.

use std::ops::Range;

use tower_lsp_server::ls_types::{self as lsp, NumberOrString, Position, Uri};

/// The negotiated position encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Utf8,
    Utf16,
}

/// Line starts of a text, for conversions.
pub(crate) struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
    encoding: Encoding,
}

impl<'t> LineIndex<'t> {
    pub(crate) fn new(text: &'t str, encoding: Encoding) -> LineIndex<'t> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts, encoding }
    }

    /// The byte offset of a position; past the end of a line, the line's end; past the last
    /// line, the end of the text.
    pub(crate) fn offset(&self, p: Position) -> usize {
        let Some(&start) = self.starts.get(p.line as usize) else { return self.text.len() };
        let end = self.starts.get(p.line as usize + 1).map_or(self.text.len(), |e| e - 1);
        let line = &self.text[start..end.max(start)];
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            if units >= p.character {
                return start + i;
            }
            units += match self.encoding {
                Encoding::Utf8 => c.len_utf8() as u32,
                Encoding::Utf16 => c.len_utf16() as u32,
            };
        }
        start + line.len()
    }

    pub(crate) fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts[line];
        let prefix = self.text.get(start..offset).unwrap_or("");
        let character = match self.encoding {
            Encoding::Utf8 => prefix.len(),
            Encoding::Utf16 => prefix.encode_utf16().count(),
        };
        Position { line: line as u32, character: character as u32 }
    }

    pub(crate) fn range(&self, r: Range<usize>) -> lsp::Range {
        lsp::Range { start: self.position(r.start), end: self.position(r.end) }
    }
}

pub(crate) fn diagnostic(
    fd: &wave_ide::FileDiagnostic,
    index: &LineIndex<'_>,
    uri: &Uri,
) -> lsp::Diagnostic {
    let d = &fd.diagnostic;
    let mut message = d.message.clone();
    for note in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    if let Some(s) = &d.suggestion {
        message.push_str("\nhelp: ");
        message.push_str(&s.message);
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .map(|(span, m)| lsp::DiagnosticRelatedInformation {
            location: lsp::Location { uri: uri.clone(), range: index.range(span.clone()) },
            message: m.clone(),
        })
        .collect();
    lsp::Diagnostic {
        range: index.range(d.span.clone()),
        severity: Some(if fd.hint {
            lsp::DiagnosticSeverity::HINT
        } else if d.is_error() {
            lsp::DiagnosticSeverity::ERROR
        } else {
            lsp::DiagnosticSeverity::WARNING
        }),
        tags: (!fd.tags.is_empty()).then(|| {
            fd.tags
                .iter()
                .map(|t| match t {
                    wave_ide::Tag::Unnecessary => lsp::DiagnosticTag::UNNECESSARY,
                    wave_ide::Tag::Deprecated => lsp::DiagnosticTag::DEPRECATED,
                })
                .collect()
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("wave".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..lsp::Diagnostic::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_in_both_encodings() {
        let text = "a\n; é𝄞x\nlast";
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            let idx = LineIndex::new(text, enc);
            for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
                assert_eq!(idx.offset(idx.position(offset)), offset, "{enc:?} {offset}");
            }
        }
        let u16 = LineIndex::new(text, Encoding::Utf16);
        let x = text.find('x').expect("x");
        assert_eq!(u16.position(x), Position { line: 1, character: 5 }, "é is 1 unit, 𝄞 is 2");
        let u8 = LineIndex::new(text, Encoding::Utf8);
        assert_eq!(u8.position(x), Position { line: 1, character: 8 });
        assert_eq!(u16.offset(Position { line: 9, character: 0 }), text.len());
        assert_eq!(u16.offset(Position { line: 0, character: 99 }), 1);
    }
}

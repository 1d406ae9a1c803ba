//! Byte offsets to protocol positions and back, and diagnostics to protocol diagnostics.

use std::ops::Range;

use ropey::Rope;
use tower_lsp_server::ls_types::{self as lsp, NumberOrString, Position, Uri};

/// The negotiated position encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Utf8,
    Utf16,
}

/// Position conversions over a document's rope: each is a lookup in the rope's tree, so a
/// request costs nothing for the lines it does not touch.
pub(crate) struct LineIndex<'t> {
    rope: &'t Rope,
    encoding: Encoding,
}

impl<'t> LineIndex<'t> {
    pub(crate) fn new(rope: &'t Rope, encoding: Encoding) -> LineIndex<'t> {
        LineIndex { rope, encoding }
    }

    /// The byte offset of a position; past the end of a line, the line's end; past the last
    /// line, the end of the text.
    pub(crate) fn offset(&self, p: Position) -> usize {
        let line = p.line as usize;
        if line >= self.rope.len_lines() {
            return self.rope.len_bytes();
        }
        let start = self.rope.line_to_byte(line);
        let mut units = 0u32;
        let mut at = start;
        for c in self.rope.line(line).chars() {
            if c == '\n' || units >= p.character {
                break;
            }
            units += match self.encoding {
                Encoding::Utf8 => c.len_utf8() as u32,
                Encoding::Utf16 => c.len_utf16() as u32,
            };
            at += c.len_utf8();
        }
        at
    }

    pub(crate) fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.rope.len_bytes());
        // Inside a character: its start.
        while offset > 0 && self.rope.try_byte_to_char(offset).is_err() {
            offset -= 1;
        }
        let char_index = self.rope.byte_to_char(offset);
        let line = self.rope.char_to_line(char_index);
        let line_char = self.rope.line_to_char(line);
        let character = match self.encoding {
            Encoding::Utf8 => offset - self.rope.line_to_byte(line),
            Encoding::Utf16 => {
                self.rope.char_to_utf16_cu(char_index) - self.rope.char_to_utf16_cu(line_char)
            }
        };
        Position { line: line as u32, character: character as u32 }
    }

    /// Positions of offsets in increasing order, each found by walking on from the last one:
    /// a request that converts every token of a file reads the text once instead of searching
    /// the rope per position.
    pub(crate) fn cursor(&self) -> Cursor<'t> {
        Cursor {
            rope: self.rope,
            encoding: self.encoding,
            chars: self.rope.chars().peekable(),
            offset: 0,
            line: 0,
            character: 0,
        }
    }

    pub(crate) fn range(&self, r: Range<usize>) -> lsp::Range {
        lsp::Range { start: self.position(r.start), end: self.position(r.end) }
    }

    /// The text of the line holding byte `offset`, without its line break.
    pub(crate) fn line_text(&self, offset: usize) -> String {
        let line = self.rope.byte_to_line(offset.min(self.rope.len_bytes()));
        let text = self.rope.line(line).to_string();
        text.strip_suffix('\n').unwrap_or(&text).to_owned()
    }
}

/// See [`LineIndex::cursor`].
pub(crate) struct Cursor<'t> {
    rope: &'t Rope,
    encoding: Encoding,
    chars: std::iter::Peekable<ropey::iter::Chars<'t>>,
    offset: usize,
    line: u32,
    character: u32,
}

impl Cursor<'_> {
    /// The position of `offset` (inside a character: its start); an offset before the last
    /// one asked is found by searching the rope instead.
    pub(crate) fn position(&mut self, offset: usize) -> Position {
        if offset < self.offset {
            return LineIndex::new(self.rope, self.encoding).position(offset);
        }
        while let Some(&c) = self.chars.peek() {
            if self.offset + c.len_utf8() > offset {
                break;
            }
            self.chars.next();
            self.offset += c.len_utf8();
            if c == '\n' {
                self.line += 1;
                self.character = 0;
            } else {
                self.character += match self.encoding {
                    Encoding::Utf8 => c.len_utf8() as u32,
                    Encoding::Utf16 => c.len_utf16() as u32,
                };
            }
        }
        Position { line: self.line, character: self.character }
    }
}

/// Replaces bytes `range` with `text`.
pub(crate) fn replace(rope: &mut Rope, range: Range<usize>, text: &str) {
    let start = rope.byte_to_char(range.start.min(rope.len_bytes()));
    let end = rope.byte_to_char(range.end.min(rope.len_bytes())).max(start);
    rope.remove(start..end);
    rope.insert(start, text);
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
        let rope = Rope::from_str(text);
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            let idx = LineIndex::new(&rope, enc);
            for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
                assert_eq!(idx.offset(idx.position(offset)), offset, "{enc:?} {offset}");
            }
        }
        let u16 = LineIndex::new(&rope, Encoding::Utf16);
        let x = text.find('x').expect("x");
        assert_eq!(u16.position(x), Position { line: 1, character: 5 }, "é is 1 unit, 𝄞 is 2");
        let u8 = LineIndex::new(&rope, Encoding::Utf8);
        assert_eq!(u8.position(x), Position { line: 1, character: 8 });
        assert_eq!(u16.offset(Position { line: 9, character: 0 }), text.len());
        assert_eq!(u16.offset(Position { line: 0, character: 99 }), 1);
        assert_eq!(u8.line_text(x), "; é𝄞x");
        // The cursor agrees with the index, forwards and after a step back.
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            let idx = LineIndex::new(&rope, enc);
            let mut cursor = idx.cursor();
            let offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            for &o in offsets.iter().chain([&3, &text.len(), &0]) {
                assert_eq!(cursor.position(o), idx.position(o), "{enc:?} {o}");
            }
            // Inside a character: that character's start; past the end: the end.
            let mut cursor = idx.cursor();
            assert_eq!(cursor.position(5), idx.position(4), "{enc:?}");
            assert_eq!(cursor.position(text.len() + 9), idx.position(text.len()), "{enc:?}");
        }
        // A CRLF line keeps its CR, as a client that sends one expects back.
        let crlf = Rope::from_str("a\r\nb");
        let idx = LineIndex::new(&crlf, Encoding::Utf16);
        assert_eq!(idx.position(3), Position { line: 1, character: 0 });
        assert_eq!(idx.offset(Position { line: 0, character: 9 }), 2);
        let mut edited = Rope::from_str("héllo\nworld");
        replace(&mut edited, 1..3, "E");
        assert_eq!(edited.to_string(), "hEllo\nworld");
    }
}

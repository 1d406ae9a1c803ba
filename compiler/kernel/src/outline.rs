//! A kernel source file cut into chunks that each parse on their own, so that an editor can
//! analyse one kernel without the rest of the file.
//!
//! Every frontend reads a file one top-level item at a time (a function with its decorators
//! or attributes, a class, a template, a statement): nothing one item says changes how another
//! is read, except helpers, which kernels call by name. A chunk is the text from the end of
//! one item to the end of the next, widened to whole lines where it can be: the comments and
//! attributes between two items (and C++'s `__kernel` before a function) belong to the item
//! after them. Parsed on its own, a chunk gives the functions the whole file gives there,
//! with spans relative to the chunk.
//!
//! The cut needs a parse, which [`outline`] keeps to what changed: given the outline of the
//! previous version, it finds the edit (the bytes between the texts' common prefix and
//! suffix), parses only the chunks it touches (and, where they do not parse cleanly, their
//! neighbours, which may belong with them: a string opened in one and closed in the next)
//! and cuts that part again. The chunks before and after are kept, moved. While every chunk parses cleanly this
//! gives the cut a parse of the whole file gives; while some do not, the damage stays in the
//! chunks edited. (tree-sitter's own incremental reparse of the whole file was measured and
//! is not enough: on a file with unfinished code it redoes its error recovery over the whole
//! file, 50 to 600 ms a keystroke at 10,000 lines.)

use std::ops::Range;

use tree_sitter::Parser;

use crate::Language;

/// A file cut into chunks (see the module documentation).
pub struct Outline {
    /// The chunks, in order, covering the whole text (a text without items is one chunk).
    pub chunks: Vec<Range<usize>>,
    /// Per chunk, whether it does not parse cleanly on its own.
    broken: Vec<bool>,
    /// The text, to find the next version's edit.
    text: String,
    /// The language.
    language: Language,
}

/// The time the parses of one cut may take together: this, plus [`PARSE_BUDGET_PER_KB`] per
/// KB of the file (1 MB/s, several times slower than tree-sitter on any code we measured,
/// and 200 ms before the first byte). Past it what is left is one broken chunk: only text on
/// which tree-sitter's error recovery takes seconds gets there (the protocol fuzzer found
/// some), and the frontends still read it, as they read any chunk. The cut then depends on
/// the machine's speed, which only such text can notice.
const PARSE_BUDGET_BASE: std::time::Duration = std::time::Duration::from_millis(200);
/// See [`PARSE_BUDGET_BASE`].
const PARSE_BUDGET_PER_KB: std::time::Duration = std::time::Duration::from_millis(1);

/// The largest text parsed again to mend broken chunks with their neighbours.
const GROW_BYTES: usize = 64 << 10;

/// Node kinds that never end a chunk: comments, and Rust's attributes, which belong to the
/// item after them.
const GLUE: [&str; 4] = ["comment", "line_comment", "block_comment", "attribute_item"];

/// Cuts `text` into chunks. `previous` is the outline of the version before, if any: only the
/// chunks the edit touches are parsed again.
pub fn outline(text: &str, language: Language, previous: Option<&Outline>) -> Outline {
    // The cut is worth a few parses, not seconds (see [`PARSE_BUDGET_BASE`]).
    let deadline = std::time::Instant::now()
        + PARSE_BUDGET_BASE
        + PARSE_BUDGET_PER_KB * u32::try_from(text.len() / 1024).unwrap_or(u32::MAX);
    let Some(p) = previous.filter(|p| p.language == language && !p.chunks.is_empty()) else {
        let (chunks, broken) = cut_region(text, language, deadline).0.into_iter().unzip();
        return Outline { chunks, broken, text: text.to_owned(), language };
    };
    let (prefix, old_end, new_end) = edit(&p.text, text);
    let last = p.chunks.len() - 1;
    // The chunks the edit touches (both, at a boundary).
    let lo = p.chunks.iter().position(|c| c.end >= prefix).unwrap_or(last);
    let mut hi = p.chunks.iter().rposition(|c| c.start <= old_end).unwrap_or(lo).max(lo);
    // A cut in the middle of a line depends on the whole line: both sides are taken in.
    let mut lo = lo;
    while lo > 0 && !text[..p.chunks[lo].start].ends_with('\n') {
        lo -= 1;
    }
    while hi < last && !text[..p.chunks[hi].end - old_end + new_end].ends_with('\n') {
        hi += 1;
    }
    let new_range = |lo: usize, hi: usize| p.chunks[lo].start..p.chunks[hi].end - old_end + new_end;
    // The chunks from `lo` to `hi` cut again; text after their last item goes with the
    // chunks after them, which are taken in: 1, 2, 4, ... more at a time, so that a block
    // comment opened between two items (which makes the rest of the file text after the
    // last item) costs a few parses, not one per chunk.
    let region = |lo: usize, mut hi: usize| {
        let mut more = 1;
        loop {
            let r = new_range(lo, hi);
            let (cut, tail) = cut_region(&text[r.clone()], language, deadline);
            if tail && hi < last {
                hi = (hi + more).min(last);
                more *= 2;
                continue;
            }
            let cut: Vec<_> =
                cut.into_iter().map(|(c, b)| (c.start + r.start..c.end + r.start, b)).collect();
            break (cut, hi);
        }
    };
    // A part that does not parse on its own may belong with its neighbours (a string opened
    // in one chunk and closed in the next, a block whose indentation was broken and is
    // mended), and so may a part next to a broken chunk: they are taken in, 1, 2 and 4
    // chunks on each side, until that parses cleanly with no broken chunk around. Otherwise
    // the damage stays in the chunks edited.
    let broken_at = |i: Option<usize>| i.and_then(|i| p.broken.get(i)).copied() == Some(true);
    let unsettled = |cut: &[(Range<usize>, bool)], l: usize, h: usize| {
        cut.iter().any(|(_, b)| *b) || broken_at(l.checked_sub(1)) || broken_at(Some(h + 1))
    };
    let (mut cut, hi) = region(lo, hi);
    let mut span = (lo, hi);
    let mut grow = 1;
    while unsettled(&cut, lo, hi) && grow <= 4 && (lo > 0 || hi < last) {
        let l = lo.saturating_sub(grow);
        // Parsing is all this costs; past 64 KB the damage stays where it is.
        if new_range(l, (hi + grow).min(last)).len() > GROW_BYTES {
            break;
        }
        // A broken chunk just before the wider part is not parsed with it: the part would
        // stay unsettled whatever its parse gives, so it is not parsed. Nor is a part with a
        // broken chunk just after it: only text after its last item (which takes in the
        // chunks after it) could reach past that one, and a broken neighbour is left as is.
        if broken_at(l.checked_sub(1)) || broken_at(Some((hi + grow).min(last) + 1)) {
            grow *= 2;
            continue;
        }
        let (wider, h) = region(l, (hi + grow).min(last));
        if !unsettled(&wider, l, h) {
            (span, cut) = ((l, h), wider);
            break;
        }
        grow *= 2;
    }
    let (lo, hi) = span;
    let (mut chunks, mut broken): (Vec<_>, Vec<_>) =
        p.chunks[..lo].iter().cloned().zip(p.broken[..lo].iter().copied()).unzip();
    for (c, b) in cut {
        chunks.push(c);
        broken.push(b);
    }
    for (c, b) in p.chunks[hi + 1..].iter().zip(&p.broken[hi + 1..]) {
        chunks.push(c.start - old_end + new_end..c.end - old_end + new_end);
        broken.push(*b);
    }
    Outline { chunks, broken, text: text.to_owned(), language }
}

/// The chunks of `text` parsed on its own, each with whether it is broken.
fn cut_region(
    text: &str,
    language: Language,
    deadline: std::time::Instant,
) -> (Vec<(Range<usize>, bool)>, bool) {
    cut_within(text, language, false, deadline)
}

/// [`cut_region`]; `nested` for a piece of a broken item, which is not cut again. Also says
/// whether the last chunk is text after the last item (comments, blank lines).
fn cut_within(
    text: &str,
    language: Language,
    nested: bool,
    deadline: std::time::Instant,
) -> (Vec<(Range<usize>, bool)>, bool) {
    let whole = (vec![(0..text.len(), true)], false);
    // Nested deeper than the compiler follows: one chunk, which reports it (and is not given
    // to tree-sitter's slow recovery).
    if crate::front::bracket_depth(text).is_some() {
        return whole;
    }
    let parsed = match language {
        // Text the Python grammar cannot follow is one chunk; parsing it reports why.
        Language::Python if crate::front::python_indentation(text).is_some() => return whole,
        Language::Python => crate::front::python::mask_buffer_annotations(text),
        Language::Cpp => crate::front::cpp::mask_kernel_keyword(text).0,
        Language::Rust | Language::TypeScript => text.to_owned(),
    };
    let mut parser = Parser::new();
    if parser.set_language(&grammar(language)).is_err() {
        return whole;
    }
    // Past the deadline (tree-sitter's recovery on some garbage), the part is one broken
    // chunk, left to the frontends.
    let mut in_budget = |_: &tree_sitter::ParseState| {
        if std::time::Instant::now() > deadline {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    if std::time::Instant::now() > deadline {
        return whole;
    }
    let bytes = parsed.as_bytes();
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(tree_sitter::ParseOptions::new().progress_callback(&mut in_budget)),
    );
    let Some(tree) = tree else { return whole };
    let pieces = cut(&tree, &parsed);
    let mut chunks = Vec::new();
    for (c, broken) in pieces {
        match broken {
            Some(b) => chunks.push((c, b)),
            None if nested => chunks.push((c, true)),
            // Each piece of a broken item, parsed on its own.
            None => chunks.extend(
                cut_within(&text[c.clone()], language, true, deadline)
                    .0
                    .into_iter()
                    .map(|(p, b)| (p.start + c.start..p.end + c.start, b)),
            ),
        }
    }
    // Comments and attributes alone (left by a cut inside a broken item) go with what
    // follows them, as in a clean cut.
    let mut merged: Vec<(Range<usize>, bool)> = Vec::new();
    let mut carry: Option<(usize, bool)> = None;
    for (c, b) in chunks {
        let (start, b) = match carry.take() {
            Some((s, cb)) => (s, b || cb),
            None => (c.start, b),
        };
        if glue_only(&text[c.clone()], language) {
            carry = Some((start, b));
        } else {
            merged.push((start..c.end, b));
        }
    }
    let tail = carry.is_some();
    if let Some((start, b)) = carry {
        merged.push((start..text.len(), b));
    }
    let mut chunks = merged;
    if language == Language::Python {
        // tree-sitter-python reads an indented line after a function as a statement of its
        // own; in a file it continues the function.
        for (c, broken) in &mut chunks {
            let first = text[c.clone()].lines().find(|l| {
                let t = l.trim_start();
                !t.is_empty() && !t.starts_with('#')
            });
            *broken |= first.is_some_and(|l| l.starts_with([' ', '\t']));
        }
    }
    (chunks, tail)
}

/// The tree-sitter grammar of `language`.
fn grammar(language: Language) -> tree_sitter::Language {
    match language {
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    }
}

/// The chunks of a parsed text, each with whether it is broken: each top-level item that is
/// not [`GLUE`] ends one, at the start of the line after it when no item runs across that
/// line break, else right after it. The pieces of a broken item cut again (see
/// [`item_starts`]) are not known to be broken or not until each is parsed on its own: `None`.
fn cut(tree: &tree_sitter::Tree, text: &str) -> Vec<(Range<usize>, Option<bool>)> {
    let root = tree.root_node();
    let mut cursor = root.walk();
    let items: Vec<tree_sitter::Node<'_>> = root.children(&mut cursor).collect();
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut broken = false;
    for (i, item) in items.iter().enumerate() {
        if item.end_byte() <= start && !chunks.is_empty() {
            // On the line of the item before, and in its chunk already.
            if item.has_error()
                && let Some((_, b)) = chunks.last_mut()
            {
                *b = None;
            }
            continue;
        }
        broken |= item.has_error();
        if GLUE.contains(&item.kind()) {
            continue;
        }
        let mut end = item.end_byte().max(start).min(text.len());
        // (tree-sitter ends nodes between characters; a chunk must, to be sliced.)
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let line_end = if text[..end].ends_with('\n') {
            end
        } else {
            text[end..].find('\n').map_or(text.len(), |n| end + n + 1)
        };
        // An item on the same line that runs past it.
        let crosses = items[i + 1..]
            .iter()
            .take_while(|n| n.start_byte() < line_end)
            .any(|n| n.end_byte() > line_end);
        let end = if crosses { end } else { line_end };
        if end > start {
            // A broken item can swallow the items after it (an unclosed bracket): it is cut
            // again where the next item most likely starts.
            if item.has_error() {
                for at in item_starts(text, start..end) {
                    chunks.push((start..at, None));
                    start = at;
                }
                chunks.push((start..end, None));
            } else {
                chunks.push((start..end, Some(broken)));
            }
            start = end;
            broken = false;
        }
    }
    if start < text.len() || chunks.is_empty() {
        chunks.push((start..text.len(), Some(broken)));
    }
    // An error no item holds (the root itself is one): nothing can be trusted.
    if root.has_error() && chunks.iter().all(|(_, b)| *b == Some(false)) {
        for (_, b) in &mut chunks {
            *b = Some(true);
        }
    }
    chunks
}

/// Whether `text` holds only blank lines, comments and (Rust) attributes.
fn glue_only(text: &str, language: Language) -> bool {
    if language == Language::Python {
        return text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    }
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(r) = rest.strip_prefix("/*") {
            let Some((_, r)) = r.split_once("*/") else { return true };
            rest = r;
        } else if language == Language::Rust && (rest.starts_with("#[") || rest.starts_with("#!["))
        {
            rest = rest.split_once('\n').map_or("", |(_, r)| r);
        } else {
            return false;
        }
        rest = rest.trim_start();
    }
    true
}

/// Where items most likely start inside `range` of a broken part of `text` (whose tree
/// cannot be trusted): at a line that starts at column 0 with a letter, `_`, `@`, `#`, `[` or
/// `/` (a definition, a decorator, an attribute, a comment) right after a line that does not
/// (a blank line, or the indented or closing line of an item before). Kernel bodies are
/// indented in every language, and a decorator, attribute or comment stays with the
/// definition under it.
fn item_starts(text: &str, range: Range<usize>) -> Vec<usize> {
    let heads = |line: &str| {
        line.as_bytes().first().is_some_and(|b| {
            b.is_ascii_alphabetic() || matches!(b, b'_' | b'@' | b'#' | b'[' | b'/')
        })
    };
    let mut out = Vec::new();
    let mut at = range.start;
    let mut previous_heads = true;
    // Where the blank lines just before start: they go with the item after them.
    let mut blank: Option<usize> = None;
    for line in text[range.clone()].split_inclusive('\n') {
        if line.trim().is_empty() {
            blank.get_or_insert(at);
            previous_heads = false;
        } else {
            let this = heads(line);
            let split = blank.take().unwrap_or(at);
            if this && !previous_heads && split > range.start {
                out.push(split);
            }
            previous_heads = this;
        }
        at += line.len();
    }
    out
}

/// The edit from `old` to `new`: where they start to differ, and where the difference ends
/// in each (their common suffix cut off), at character boundaries.
fn edit(old: &str, new: &str) -> (usize, usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let most = a.len().min(b.len()) - prefix;
    let mut suffix =
        a.iter().rev().zip(b.iter().rev()).take(most).take_while(|(x, y)| x == y).count();
    while !new.is_char_boundary(b.len() - suffix) {
        suffix -= 1;
    }
    (prefix, a.len() - suffix, b.len() - suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The functions of each chunk parsed on its own, moved back to file offsets.
    fn by_chunks(text: &str, language: Language, o: &Outline) -> Vec<crate::Function> {
        let mut out = Vec::new();
        for c in &o.chunks {
            for mut f in crate::functions(&text[c.clone()], language) {
                f.span = f.span.start + c.start..f.span.end + c.start;
                f.name_span = f.name_span.start + c.start..f.name_span.end + c.start;
                out.push(f);
            }
        }
        out
    }

    const FILES: [(Language, &str); 4] = [
        (
            Language::Python,
            "import wave\n\n# a helper\ndef h(x: f32) -> f32:\n    return x * 2.0\n\n@wave.kernel(workgroup=64)\ndef k(a: f32[:], n: u32):\n    i = wave.thread_id()\n    if i < n:\n        a[i] = h(a[i])\n\nif __name__ == '__main__':\n    pass\n",
        ),
        (
            Language::Rust,
            "use wave::*;\n\n/// doubles\nfn h(x: f32) -> f32 { x * 2.0 }\n\n#[wave::kernel(workgroup = 64)]\n// between\nfn k(a: &mut [f32], n: u32) {\n    let i = thread_id();\n    if i < n { a[i as usize] = h(a[i as usize]); }\n} fn g() {}\n",
        ),
        (
            Language::Cpp,
            "#include <wave.h>\nfloat h(float x) { return x * 2.0f; } /* a\n comment */\n__kernel void k(float* a, unsigned n) {\n    unsigned i = wave::thread_id();\n    if (i < n) a[i] = h(a[i]);\n}\n",
        ),
        (
            Language::TypeScript,
            "import * as wave from 'wave';\nfunction h(x: f32): f32 { return x * 2.0; }\nexport const k = wave.kernel({ workgroup: 64 }, function (a: Float32Array, n: u32) {\n  const i = wave.threadId();\n  if (i < n) { a[i] = h(a[i]); }\n});\n",
        ),
    ];

    #[test]
    fn chunks_cover_the_file_and_give_the_functions_of_the_whole_file() {
        for (language, text) in FILES {
            let o = outline(text, language, None);
            assert!(o.chunks.len() > 1, "{language:?}: {:?}", o.chunks);
            assert_eq!(o.chunks.first().map(|c| c.start), Some(0));
            assert_eq!(o.chunks.last().map(|c| c.end), Some(text.len()));
            assert!(o.chunks.windows(2).all(|w| w[0].end == w[1].start), "{:?}", o.chunks);
            let whole = crate::functions(text, language);
            assert!(!whole.is_empty(), "{language:?}");
            assert_eq!(by_chunks(text, language, &o), whole, "{language:?}: {:?}", o.chunks);
        }
    }

    #[test]
    fn an_incremental_outline_equals_a_fresh_one_whenever_the_file_parses_cleanly() {
        // Insertions and deletions anywhere, next to multi-byte characters too: one at a time
        // and undone (the undo must give the fresh cut), and piling up.
        for (language, text) in FILES {
            let text = text.replace("doubles", "doublés ✓");
            let clean = outline(&text, language, None);
            assert!(!clean.broken.contains(&true), "{language:?}");
            let mut piled = outline(&text, language, None);
            let mut current = text.clone();
            let mut seed = 0x9e37_79b9_u32;
            for _ in 0..200 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let edit = |from: &str| {
                    let mut at = seed as usize % (from.len() + 1);
                    while !from.is_char_boundary(at) {
                        at -= 1;
                    }
                    let mut to = from.to_owned();
                    if seed.is_multiple_of(3) && at < from.len() {
                        let len = from[at..].chars().next().map_or(0, char::len_utf8);
                        to.replace_range(at..at + len, "");
                    } else {
                        let piece = ["}", "{", "\n", "x", "é", "fn ", "def ", " ", "\"", "("];
                        to.insert_str(at, piece[seed as usize % piece.len()]);
                    }
                    to
                };
                let check = |o: &Outline, t: &str| {
                    assert_eq!(o.chunks.first().map(|c| c.start), Some(0));
                    assert_eq!(o.chunks.last().map(|c| c.end), Some(t.len()));
                    assert!(o.chunks.windows(2).all(|w| w[0].end == w[1].start));
                    if !o.broken.contains(&true) {
                        let fresh = outline(t, language, None).chunks;
                        assert_eq!(o.chunks, fresh, "{language:?}: {t:?}");
                    }
                };
                let once = edit(&text);
                let edited = outline(&once, language, Some(&clean));
                check(&edited, &once);
                let undone = outline(&text, language, Some(&edited));
                assert_eq!(undone.chunks, clean.chunks, "{language:?}: undoing in {once:?}");
                current = edit(&current);
                piled = outline(&current, language, Some(&piled));
                check(&piled, &current);
            }
        }
    }

    /// A block comment opened between two functions makes the rest of the file text after
    /// the last item: the cut takes in the chunks after it a growing number at a time (not
    /// one parse per chunk), and once the comment is closed the cut is a fresh one's again.
    #[test]
    fn a_block_comment_opened_and_closed_between_functions_gives_the_fresh_cut_back() {
        for (language, text) in FILES.into_iter().filter(|(l, _)| *l != Language::Python) {
            let mut file = String::new();
            for _ in 0..150 {
                file.push_str(text);
                file.push('\n');
            }
            // A blank line between two copies, a third of the way in.
            let at = file[file.len() / 3..].find("\n\n").map(|n| file.len() / 3 + n + 1);
            let at = at.expect("a blank line");
            let mut o = outline(&file, language, None);
            let mut current = file.clone();
            for (offset, typed) in [(0, "/"), (1, "*"), (2, "*"), (3, "/")] {
                current.insert_str(at + offset, typed);
                o = outline(&current, language, Some(&o));
            }
            // `/**/`: a comment before the next function, as a fresh cut has it.
            let fresh = outline(&current, language, None);
            assert_eq!(o.chunks, fresh.chunks, "{language:?}");
            assert_eq!(o.broken, fresh.broken, "{language:?}");
            assert!(!o.broken.contains(&true), "{language:?}");
        }
    }

    #[test]
    fn an_unclosed_bracket_breaks_its_own_chunk_only() {
        for (language, text) in FILES {
            let whole = crate::functions(text, language);
            let last = whole.last().expect("functions");
            // An opening bracket in the first function's body.
            let first = &whole[0];
            let at = text[first.span.clone()]
                .find('\n')
                .map_or(first.span.start, |n| first.span.start + n + 1);
            let mut broken = text.to_owned();
            broken.insert_str(at, "  (\n");
            let o = outline(&broken, language, None);
            let found = by_chunks(&broken, language, &o);
            assert!(
                found.iter().any(|f| f.name == last.name),
                "{language:?}: {:?} in {:?}",
                found.iter().map(|f| &f.name).collect::<Vec<_>>(),
                o.chunks
            );
        }
    }

    #[test]
    fn a_python_file_too_deep_for_the_grammar_is_one_chunk() {
        let mut text = String::from("def k(a):\n");
        for i in 1..600 {
            text.push_str(&" ".repeat(i));
            text.push_str("if a:\n");
        }
        let o = outline(&text, Language::Python, None);
        assert_eq!(o.chunks, vec![0..text.len()]);
    }
}

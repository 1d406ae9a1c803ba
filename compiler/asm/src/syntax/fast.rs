//! A line-by-line parser, equivalent to tree-sitter-wave.
//!
//! tree-sitter parses about half a million lines per second here, which alone is below the
//! assembler's target of a million lines per second end to end (see docs/performance.md).
//! Assembly is line-oriented and its tokens are simple, so this parser reproduces, for files
//! that tree-sitter parses without an ERROR or MISSING node, exactly the statements and
//! comments that flattening the tree gives: the same spans, the same operand values.
//!
//! A line it does not model (any syntax error, any construct it does not know, any doubt) is
//! set aside, and parsed by tree-sitter in a window of a few lines around it, inside the
//! kernel and blocks open there (see [`mend`]); a 1 MB kernel with one half-typed line costs
//! a line-by-line pass and a few small parses instead of a parse of the whole file. A window
//! is taken only when its good lines come out exactly as read here; otherwise it grows, and
//! past 64 lines, or when the line is a damaged `.kernel` or `.end`, the whole file is parsed
//! by tree-sitter. With one mistake in a file whose block keywords balance, the answer equals
//! the whole file's parse (a test types characters at random to check it). With several,
//! tree-sitter's recovery over the whole file weighs them all at once and can choose
//! differently; then the windows are the definition, and keep each mistake's diagnostic on
//! its own line. The fuzz target checks that the answer equals tree-sitter's on every file
//! without a syntax error whose block keywords balance.
//!
//! Where the block keywords do not balance (an `endif` without its `if`, a `loop` never
//! closed, `.end` with blocks open, a damaged `if` line), this parser's reading is the
//! definition, not tree-sitter's recovery: every line is read as it stands, a damaged line
//! starting with a block keyword is taken to do what the keyword says, and the assembler's
//! block matcher reports what is open or unmatched (E0160 to E0165), with the lines around
//! left as written. tree-sitter's recovery would re-read the whole kernel at every keystroke
//! (about 100 ms at 1 MB) and can wrap good lines into an error.
//!
//! Lexing follows the grammar's context-aware rules: at the start of a statement every word is
//! an identifier (or a block keyword); in operand position a word is a register, predicate or
//! special register only when the whole word has that shape (`r1x` is an identifier), and the
//! reserved words `if else endif loop endloop` are never names.

use std::sync::OnceLock;

use wave_diag::Span;
use wave_isa::{Flow, lookup_name};

use super::{
    Arg, ArgKind, GuardSyntax, InstructionSyntax, Operand, OperandKind, Parsed, Stmt, StmtKind,
    number_after, register, signed_offset,
};

const RESERVED: [&str; 5] = ["if", "else", "endif", "loop", "endloop"];

/// The deepest nesting [`scan`] follows (see there).
const MAX_WINDOW_DEPTH: usize = 64;

/// Parses a file: line by line, and the lines this parser does not model (every syntax error
/// among them) with tree-sitter in a window of their own (see [`mend`]); `None` when
/// tree-sitter must parse the whole file.
pub fn parse(text: &str) -> Option<Parsed> {
    parse_reading(text).map(|(parsed, _)| parsed)
}

/// [`parse`], and whether the answer is tree-sitter's (`true`), or the block keywords did not
/// balance and the line parser's reading is the definition (`false`).
pub(crate) fn parse_reading(text: &str) -> Option<(Parsed, bool)> {
    // tree-sitter's lexer reads a NUL byte as the end of input, even inside a comment.
    if text.as_bytes().contains(&0) {
        return None;
    }
    if let Some(parsed) = well_formed(text) {
        return Some((parsed, true));
    }
    let scan = scan(text)?;
    let exact = !scan.lenient;
    if scan.bad.is_empty() {
        return Some((scan.parsed, exact));
    }
    mend(text, &scan).map(|parsed| (parsed, exact))
}

/// Parses a file this parser reads from start to end, or `None` at the first line it cannot
/// (the common case, without [`scan`]'s bookkeeping per line).
fn well_formed(text: &str) -> Option<Parsed> {
    let mut parsed = Parsed::default();
    let mut blocks: Vec<Block> = Vec::new();
    let mut in_kernel = false;
    for (start, end, _, has_newline) in split_lines(text) {
        let mut line = Line { text, pos: start, end, lenient: false, mismatch: false };
        line.statement(&mut parsed, &mut blocks, &mut in_kernel, has_newline)?;
    }
    // Unclosed blocks or kernels are MISSING nodes for tree-sitter.
    if in_kernel || !blocks.is_empty() {
        return None;
    }
    Some(parsed)
}

/// What one line left behind in the line-by-line pass.
#[derive(Clone, Copy)]
struct LineInfo {
    /// Where the line starts.
    start: usize,
    /// Where the next line starts.
    next: usize,
    /// The index of its first statement and first comment in the pass's output.
    stmt: usize,
    comment: usize,
    /// The open blocks at its start (an index into [`Scan::stacks`]).
    stack: usize,
    /// Inside a kernel at its start, and at its end.
    in_kernel: bool,
    in_kernel_after: bool,
    /// A block keyword that did not match the open blocks: no window takes it in, since
    /// tree-sitter's recovery would read it with the lines around it.
    fence: bool,
}

/// The line-by-line pass over a file.
struct Scan {
    parsed: Parsed,
    lines: Vec<LineInfo>,
    /// Each different stack of open blocks seen, in order.
    stacks: Vec<Vec<Block>>,
    /// The lines this parser does not model.
    bad: Vec<usize>,
    /// The block keywords did not balance (a keyword that does not match, an unreadable line
    /// taken to do what its keyword says, blocks or a kernel open at the end).
    lenient: bool,
}

/// Parses `text` line by line, keeping the lines it cannot parse aside (without statements),
/// or `None` when one of them may change the file's structure (a block keyword, `.kernel`,
/// `.end`), or blocks or a kernel stay open at the end.
fn scan(text: &str) -> Option<Scan> {
    let mut parsed = Parsed::default();
    let mut blocks: Vec<Block> = Vec::new();
    let mut stacks: Vec<Vec<Block>> = vec![Vec::new()];
    let mut in_kernel = false;
    let mut lines = Vec::new();
    let mut bad = Vec::new();
    let mut lenient = false;
    for (start, end, next, has_newline) in split_lines(text) {
        if stacks.last() != Some(&blocks) {
            stacks.push(blocks.clone());
        }
        let mut info = LineInfo {
            start,
            next,
            stmt: parsed.stmts.len(),
            comment: parsed.comments.len(),
            stack: stacks.len() - 1,
            in_kernel,
            in_kernel_after: in_kernel,
            fence: false,
        };
        let mut line = Line { text, pos: start, end, lenient: true, mismatch: false };
        if line.statement(&mut parsed, &mut blocks, &mut in_kernel, has_newline).is_none() {
            let code = &text[start..end];
            if kernel_line(code) || !has_newline {
                return None;
            }
            parsed.stmts.truncate(info.stmt);
            parsed.comments.truncate(info.comment);
            blocks.clone_from(&stacks[info.stack]);
            in_kernel = info.in_kernel;
            // A block keyword the line starts with is taken to do what it says.
            if let Some(flow) =
                first_word(code).filter(|w| RESERVED.contains(w)).and_then(keyword_flow)
            {
                follow(&mut blocks, flow);
                lenient = true;
            } else if structural(code) {
                lenient = true;
            }
            bad.push(lines.len());
        }
        info.fence = line.mismatch;
        lenient |= line.mismatch;
        // Every window writes the blocks open at its start, and the scan keeps each stack:
        // past this depth (twice the spec's MIN_DIVERGENCE_DEPTH; W0102 warns past 32) that
        // would cost more than one parse of the whole file, which tree-sitter then does.
        if blocks.len() > MAX_WINDOW_DEPTH {
            return None;
        }
        info.in_kernel_after = in_kernel;
        lines.push(info);
    }
    // Blocks or a kernel left open at the end are the block matcher's to report.
    lenient |= in_kernel || !blocks.is_empty();
    Some(Scan { parsed, lines, stacks, bad, lenient })
}

/// Whether a line holds a block keyword as a word (a line this parser could not read may then
/// open or close a block where tree-sitter reads it).
fn structural(line: &str) -> bool {
    let code = line.split([';', '#']).next().unwrap_or("");
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .any(|w| RESERVED.contains(&w))
}

/// Whether a line's first word is `.kernel` or `.end` (any case).
fn kernel_line(line: &str) -> bool {
    let code = line.split([';', '#']).next().unwrap_or("");
    let first = code.split_whitespace().next().unwrap_or("");
    let directive = first
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
        .next()
        .unwrap_or("");
    directive.eq_ignore_ascii_case(".kernel") || directive.eq_ignore_ascii_case(".end")
}

/// The first word of a line's code.
fn first_word(line: &str) -> Option<&str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).find(|w| !w.is_empty())
}

/// What a block keyword (one of [`RESERVED`]) does, from its row of the isa table: the
/// parser recognises the words, the table says what they mean. The rows are looked up once,
/// so that a keyword line costs no hash.
fn keyword_flow(word: &str) -> Option<Flow> {
    static FLOWS: OnceLock<[Option<Flow>; RESERVED.len()]> = OnceLock::new();
    let flows = FLOWS.get_or_init(|| RESERVED.map(|w| lookup_name(w).map(|(op, _)| op.flags.flow)));
    RESERVED.iter().position(|w| *w == word).and_then(|i| flows[i])
}

/// Follows a block keyword over the open blocks: `if` and `loop` open one; `else`, `endif`
/// and `endloop` continue or close the innermost where they match it, and otherwise change
/// nothing and give `false`.
fn follow(blocks: &mut Vec<Block>, flow: Flow) -> bool {
    match flow {
        Flow::If => blocks.push(Block::If),
        Flow::Loop => blocks.push(Block::Loop),
        Flow::Else => match blocks.last_mut() {
            Some(top @ Block::If) => *top = Block::Else,
            _ => return false,
        },
        Flow::Endif => match blocks.last() {
            Some(Block::If | Block::Else) => {
                blocks.pop();
            }
            _ => return false,
        },
        Flow::Endloop => match blocks.last() {
            Some(Block::Loop) => {
                blocks.pop();
            }
            _ => return false,
        },
        Flow::Next | Flow::Break | Flow::Continue | Flow::Call | Flow::Return | Flow::Halt => {
            return false;
        }
    }
    true
}

/// The lines of a scan that it could not read, parsed by tree-sitter in windows: each bad
/// line with `margin` good lines on each side (never across a `.kernel` or `.end` line),
/// inside the kernel and blocks open there, written out as a prefix and closed as a suffix.
/// A window is taken when its good lines come out exactly as this parser read them and no
/// diagnostic falls outside it: tree-sitter's error recovery stayed inside, and the whole
/// file's parse would give the same. Otherwise the margins grow (2 to 64 lines), and past
/// that the whole file is tree-sitter's.
fn mend(text: &str, scan: &Scan) -> Option<Parsed> {
    let mut margin = 2;
    'grow: while margin <= 64 {
        // The windows, as line ranges, merged where they meet.
        let mut windows: Vec<(usize, usize)> = Vec::new();
        for &b in &scan.bad {
            let same = |l: &LineInfo| {
                l.in_kernel == scan.lines[b].in_kernel
                    && l.in_kernel_after == l.in_kernel
                    && !l.fence
            };
            let mut lo = b;
            while lo > 0 && b - lo < margin && same(&scan.lines[lo - 1]) {
                lo -= 1;
            }
            let mut hi = b;
            while hi + 1 < scan.lines.len() && hi - b < margin && same(&scan.lines[hi + 1]) {
                hi += 1;
            }
            match windows.last_mut() {
                Some((_, end))
                    if lo <= *end + 1 && scan.lines[lo].in_kernel == scan.lines[*end].in_kernel =>
                {
                    *end = hi.max(*end);
                }
                _ => windows.push((lo, hi)),
            }
        }
        let mut out = Parsed::default();
        let mut line = 0;
        for &(lo, hi) in &windows {
            let first = &scan.lines[lo];
            // The lines before, as read.
            out.stmts.extend_from_slice(&scan.parsed.stmts[scan.lines[line].stmt..first.stmt]);
            out.comments
                .extend_from_slice(&scan.parsed.comments[scan.lines[line].comment..first.comment]);
            let Some(window) = window(text, scan, lo, hi) else {
                margin *= 2;
                continue 'grow;
            };
            // Its good lines must come out as read.
            let stmts_end = scan.lines.get(hi + 1).map_or(scan.parsed.stmts.len(), |l| l.stmt);
            let comments_end =
                scan.lines.get(hi + 1).map_or(scan.parsed.comments.len(), |l| l.comment);
            for l in lo..=hi {
                if scan.bad.binary_search(&l).is_ok() {
                    continue;
                }
                let info = &scan.lines[l];
                let end = scan.lines.get(l + 1).map_or(stmts_end, |n| n.stmt);
                let read = &scan.parsed.stmts[info.stmt..end.min(stmts_end)];
                let theirs: Vec<&Stmt> = window
                    .stmts
                    .iter()
                    .filter(|s| info.start <= s.span.start && s.span.start < info.next)
                    .collect();
                if theirs.len() != read.len() || theirs.iter().zip(read).any(|(a, b)| *a != b) {
                    margin *= 2;
                    continue 'grow;
                }
                let cend = scan.lines.get(l + 1).map_or(comments_end, |n| n.comment);
                let read = &scan.parsed.comments[info.comment..cend.min(comments_end)];
                let theirs: Vec<&Span> = window
                    .comments
                    .iter()
                    .filter(|c| info.start <= c.start && c.start < info.next)
                    .collect();
                if theirs.len() != read.len() || theirs.iter().zip(read).any(|(a, b)| *a != b) {
                    margin *= 2;
                    continue 'grow;
                }
                let touches = |d: &wave_diag::Diagnostic| {
                    d.span.start < info.next
                        && (d.span.end > info.start || d.span.start >= info.start)
                };
                if window.diagnostics.iter().any(touches) {
                    margin *= 2;
                    continue 'grow;
                }
            }
            out.stmts.extend(window.stmts);
            out.comments.extend(window.comments);
            out.diagnostics.extend(window.diagnostics);
            line = hi + 1;
            if line >= scan.lines.len() {
                break;
            }
        }
        if line < scan.lines.len() {
            out.stmts.extend_from_slice(&scan.parsed.stmts[scan.lines[line].stmt..]);
            out.comments.extend_from_slice(&scan.parsed.comments[scan.lines[line].comment..]);
        }
        return Some(out);
    }
    None
}

/// Lines `lo` to `hi` of a scan parsed by tree-sitter inside the kernel and blocks open at
/// `lo`: their statements, comments and diagnostics at their places in the file, or `None`
/// when a diagnostic falls outside them (in the prefix or suffix written around them).
fn window(text: &str, scan: &Scan, lo: usize, hi: usize) -> Option<Parsed> {
    let (first, last) = (&scan.lines[lo], &scan.lines[hi]);
    let in_kernel = first.in_kernel;
    let mut snippet = String::new();
    if in_kernel {
        snippet.push_str(".kernel w\n");
    }
    for b in &scan.stacks[first.stack] {
        snippet.push_str(match b {
            Block::If => "if p0\n",
            Block::Else => "if p0\nelse\n",
            Block::Loop => "loop\n",
        });
    }
    let at = snippet.len();
    // The lines themselves (the last has its newline: see `scan`).
    snippet.push_str(&text[first.start..last.next]);
    let after = snippet.len();
    let open = scan.lines.get(hi + 1).map_or(&[][..], |l| &scan.stacks[l.stack][..]);
    for b in open.iter().rev() {
        snippet.push_str(match b {
            Block::If | Block::Else => "endif\n",
            Block::Loop => "endloop\n",
        });
    }
    if in_kernel {
        snippet.push_str(".end\n");
    }
    let parsed = super::tree::parse_tree(&snippet);
    let inside = |s: &Span| at <= s.start && s.end <= after;
    if parsed.diagnostics.iter().any(|d| !inside(&d.span)) {
        return None;
    }
    // (Every span kept is inside the window; a label elsewhere is pinned to its start.)
    let shift = |s: &Span| {
        let place = |o: usize| o.saturating_sub(at).min(after - at) + first.start;
        place(s.start)..place(s.end.max(s.start))
    };
    let mut out = Parsed::default();
    for mut st in parsed.stmts.into_iter().filter(|s| inside(&s.span)) {
        st.span = shift(&st.span);
        shift_stmt(&mut st.kind, &shift);
        out.stmts.push(st);
    }
    out.comments = parsed.comments.iter().filter(|c| inside(c)).map(shift).collect();
    out.diagnostics = parsed.diagnostics.iter().map(|d| d.moved(shift)).collect();
    Some(out)
}

/// Moves every span inside a statement with `shift`.
fn shift_stmt(kind: &mut StmtKind, shift: &impl Fn(&Span) -> Span) {
    fn operand(o: &mut Operand, shift: &impl Fn(&Span) -> Span) {
        o.span = shift(&o.span);
        if let OperandKind::Memory { base, offset } = &mut o.kind {
            operand(base, shift);
            if let Some((_, s)) = offset {
                *s = shift(s);
            }
        }
    }
    match kind {
        StmtKind::Kernel { name } => {
            if let Some((_, s)) = name {
                *s = shift(s);
            }
        }
        StmtKind::End => {}
        StmtKind::Directive { name_span, args, .. } => {
            *name_span = shift(name_span);
            for a in args {
                a.span = shift(&a.span);
                if let ArgKind::Typed { name, ty } = &mut a.kind {
                    name.1 = shift(&name.1);
                    ty.1 = shift(&ty.1);
                }
            }
        }
        StmtKind::Label { name_span, .. } => *name_span = shift(name_span),
        StmtKind::Instruction(i) => {
            if let Some(g) = &mut i.guard {
                g.span = shift(&g.span);
            }
            i.mnemonic_span = shift(&i.mnemonic_span);
            for o in &mut i.operands {
                operand(o, shift);
            }
        }
    }
}

/// The lines of `text`: where each starts, where its code ends (before `\r\n` or `\n`), where
/// the next starts, and whether it has a newline. An empty text is one empty line.
fn split_lines(text: &str) -> impl Iterator<Item = (usize, usize, usize, bool)> + '_ {
    let bytes = text.as_bytes();
    let mut start = Some(0);
    std::iter::from_fn(move || {
        let at = start?;
        let line = match memchr_newline(&bytes[at..]) {
            Some(i) => {
                let nl = at + i;
                let end = if nl > at && bytes[nl - 1] == b'\r' { nl - 1 } else { nl };
                (at, end, nl + 1, true)
            }
            None => (at, bytes.len(), bytes.len(), false),
        };
        start = (line.2 < bytes.len()).then_some(line.2);
        Some(line)
    })
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    If,
    Else,
    Loop,
}

struct Line<'a> {
    text: &'a str,
    pos: usize,
    end: usize,
    /// Block keywords that do not match the open blocks (and `.end` with blocks open) are read
    /// as they stand, for the assembler's block matcher to report, instead of refused.
    lenient: bool,
    /// Set when a lenient line did not match.
    mismatch: bool,
}

fn is_word_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | 0x0C | 0x0B)
}

/// Whether the whole word is a register token (`r12`, `R3.lo`).
fn is_register(word: &str) -> bool {
    let b = word.as_bytes();
    if b.len() < 2 || !matches!(b[0], b'r' | b'R') {
        return false;
    }
    let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return false;
    }
    let rest = &word[1 + digits..];
    rest.is_empty() || rest.eq_ignore_ascii_case(".lo") || rest.eq_ignore_ascii_case(".hi")
}

fn is_predicate(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 2 && matches!(b[0], b'p' | b'P') && b[1..].iter().all(u8::is_ascii_digit)
}

fn is_special(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 4
        && matches!(b[0], b's' | b'S')
        && matches!(b[1], b'r' | b'R')
        && b[2] == b'_'
        && b[3..].iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

impl<'a> Line<'a> {
    fn peek(&self) -> Option<u8> {
        (self.pos < self.end).then(|| self.text.as_bytes()[self.pos])
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.pos += 1;
        }
    }

    /// At the end of the code: the end of the line, or a comment (recorded).
    fn at_end(&mut self, parsed: &mut Parsed) -> Option<bool> {
        self.skip_space();
        let rest = &self.text.as_bytes()[self.pos..self.end];
        if rest.is_empty() {
            return Some(true);
        }
        if rest[0] == b';' || rest[0] == b'#' || rest.starts_with(b"//") {
            // A carriage return inside a comment ends the comment token for tree-sitter.
            if rest.contains(&b'\r') {
                return None;
            }
            parsed.comments.push(self.pos..self.end);
            self.pos = self.end;
            return Some(true);
        }
        Some(false)
    }

    /// The maximal `[A-Za-z_][A-Za-z0-9_.]*` at the cursor.
    fn word(&mut self) -> Option<(&'a str, Span)> {
        let start = self.pos;
        if !self.peek().is_some_and(is_word_start) {
            return None;
        }
        while self.peek().is_some_and(is_word) {
            self.pos += 1;
        }
        Some((&self.text[start..self.pos], start..self.pos))
    }

    fn expect(&mut self, byte: u8) -> Option<usize> {
        self.skip_space();
        (self.peek() == Some(byte)).then(|| {
            self.pos += 1;
            self.pos - 1
        })
    }

    /// An integer or float literal: `(Some(text), is_float)`.
    fn number(&mut self) -> Option<(Span, bool)> {
        let b = self.text.as_bytes();
        let start = self.pos;
        let mut i = self.pos;
        if i < self.end && b[i] == b'-' {
            i += 1;
        }
        let word_end = |mut j: usize| {
            while j < self.end && is_word(b[j]) {
                j += 1;
            }
            j
        };
        if i < self.end && is_word_start(b[i]) {
            // `inf` / `nan`, alone.
            let j = word_end(i);
            let w = &self.text[i..j];
            if w == "inf" || w == "nan" {
                self.pos = j;
                return Some((start..j, true));
            }
            return None;
        }
        let digits = |mut j: usize| {
            if j < self.end && b[j].is_ascii_digit() {
                j += 1;
                while j < self.end && (b[j].is_ascii_digit() || b[j] == b'_') {
                    j += 1;
                }
                Some(j)
            } else {
                None
            }
        };
        if i + 1 < self.end && b[i] == b'0' && matches!(b[i + 1], b'x' | b'X' | b'b' | b'B') {
            let hex = matches!(b[i + 1], b'x' | b'X');
            let mut j = i + 2;
            while j < self.end
                && (if hex { b[j].is_ascii_hexdigit() } else { matches!(b[j], b'0' | b'1') }
                    || b[j] == b'_')
            {
                j += 1;
            }
            if j == i + 2 {
                return None;
            }
            self.pos = j;
            return Some((start..j, false));
        }
        let int_end = digits(i)?;
        // Float forms: D.D([eE][+-]?D)? and D[eE][+-]?D; the longest match wins.
        let exponent = |j: usize| {
            if j < self.end && matches!(b[j], b'e' | b'E') {
                let mut k = j + 1;
                if k < self.end && matches!(b[k], b'+' | b'-') {
                    k += 1;
                }
                digits(k)
            } else {
                None
            }
        };
        if int_end < self.end
            && b[int_end] == b'.'
            && let Some(frac_end) = digits(int_end + 1)
        {
            let end = exponent(frac_end).unwrap_or(frac_end);
            self.pos = end;
            return Some((start..end, true));
        }
        if let Some(end) = exponent(int_end) {
            self.pos = end;
            return Some((start..end, true));
        }
        self.pos = int_end;
        Some((start..int_end, false))
    }

    /// A token must not run straight into another word or number.
    fn separated(&self) -> bool {
        !self.peek().is_some_and(|b| is_word(b) || b == b'-')
    }

    fn statement(
        &mut self,
        parsed: &mut Parsed,
        blocks: &mut Vec<Block>,
        in_kernel: &mut bool,
        has_newline: bool,
    ) -> Option<()> {
        let line = &self.text.as_bytes()[self.pos..self.end];
        if !line.is_ascii() || line.contains(&b'\r') {
            // Non-ASCII code (comments may hold anything) is rare enough to leave to
            // tree-sitter; a stray carriage return is a syntax error.
            let code_end = line.iter().position(|&b| b == b';' || b == b'#').unwrap_or(line.len());
            if !line[..code_end].is_ascii() || line.contains(&b'\r') {
                return None;
            }
        }
        if self.at_end(parsed)? {
            return Some(());
        }
        let b = self.peek()?;
        if b == b'.' {
            return self.directive(parsed, blocks, in_kernel, has_newline);
        }
        let mut label_seen = false;
        if b == b'@' {
            return self.instruction(parsed, blocks, *in_kernel, has_newline, None);
        }
        let (word, span) = self.word()?;
        // A label, possibly followed by a statement on the same line.
        let save = self.pos;
        self.skip_space();
        let (word, span) = if self.peek() == Some(b':') {
            if RESERVED.contains(&word) {
                return None;
            }
            self.pos += 1;
            parsed.stmts.push(Stmt {
                kind: StmtKind::Label { name: word.to_owned(), name_span: span.clone() },
                span: span.start..self.pos,
            });
            label_seen = true;
            if self.at_end(parsed)? {
                return Some(());
            }
            if self.peek() == Some(b'@') {
                return self.instruction(parsed, blocks, *in_kernel, has_newline, None);
            }
            self.word()?
        } else {
            self.pos = save;
            (word, span)
        };
        match word {
            "if" => {
                self.skip_space();
                let condition = self.operand(true)?;
                if !matches!(condition.kind, OperandKind::Predicate { .. }) {
                    return None;
                }
                let end = condition.span.end;
                if !self.at_end(parsed)? || !has_newline {
                    return None;
                }
                blocks.push(Block::If);
                push_keyword(parsed, "if", span, vec![condition], end);
                Some(())
            }
            "loop" => {
                if !self.at_end(parsed)? || !has_newline {
                    return None;
                }
                blocks.push(Block::Loop);
                let end = span.end;
                push_keyword(parsed, "loop", span, Vec::new(), end);
                Some(())
            }
            "else" | "endif" | "endloop" => {
                if label_seen || !self.at_end(parsed)? {
                    return None;
                }
                let flow = keyword_flow(word)?;
                // An `else` on a last line without a newline is tree-sitter's, matched or not.
                if flow == Flow::Else && !has_newline {
                    return None;
                }
                if !follow(blocks, flow) {
                    if !(self.lenient && has_newline) {
                        return None;
                    }
                    self.mismatch = true;
                }
                let end = span.end;
                push_keyword(parsed, word, span, Vec::new(), end);
                Some(())
            }
            _ => self.instruction(parsed, blocks, *in_kernel, has_newline, Some((word, span))),
        }
    }

    fn directive(
        &mut self,
        parsed: &mut Parsed,
        blocks: &mut Vec<Block>,
        in_kernel: &mut bool,
        has_newline: bool,
    ) -> Option<()> {
        let start = self.pos;
        self.pos += 1;
        if !self.peek().is_some_and(is_word_start) {
            return None;
        }
        while self.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
            self.pos += 1;
        }
        let name = &self.text[start..self.pos];
        let name_span = start..self.pos;
        match name {
            ".kernel" => {
                if *in_kernel || !blocks.is_empty() {
                    return None;
                }
                self.skip_space();
                let (kname, kspan) = self.word()?;
                if RESERVED.contains(&kname) || !self.at_end(parsed)? || !has_newline {
                    return None;
                }
                *in_kernel = true;
                parsed.stmts.push(Stmt {
                    kind: StmtKind::Kernel { name: Some((kname.to_owned(), kspan.clone())) },
                    span: start..kspan.end,
                });
                return Some(());
            }
            ".end" => {
                if !*in_kernel || !(blocks.is_empty() || self.lenient) || !self.at_end(parsed)? {
                    return None;
                }
                self.mismatch = !blocks.is_empty();
                blocks.clear();
                *in_kernel = false;
                parsed.stmts.push(Stmt { kind: StmtKind::End, span: name_span });
                return Some(());
            }
            _ if name.eq_ignore_ascii_case(".kernel") || name.eq_ignore_ascii_case(".end") => {
                return None;
            }
            _ => {}
        }
        if self.peek().is_some_and(|b| b == b'.') {
            return None;
        }
        let mut args = Vec::new();
        let mut end = name_span.end;
        if !self.at_end(parsed)? {
            loop {
                self.skip_space();
                let b = self.peek()?;
                let arg = if b.is_ascii_digit() || b == b'-' {
                    let (span, float) = self.number()?;
                    let t = self.text[span.clone()].to_owned();
                    Arg { kind: if float { ArgKind::Float(t) } else { ArgKind::Integer(t) }, span }
                } else {
                    let (word, span) = self.word()?;
                    if RESERVED.contains(&word) {
                        return None;
                    }
                    if word == "inf" || word == "nan" {
                        Arg { kind: ArgKind::Float(word.to_owned()), span }
                    } else {
                        let save = self.pos;
                        if self.expect(b':').is_some() {
                            self.skip_space();
                            let (ty, tspan) = self.word()?;
                            if RESERVED.contains(&ty) || ty == "inf" || ty == "nan" {
                                return None;
                            }
                            Arg {
                                kind: ArgKind::Typed {
                                    name: (word.to_owned(), span.clone()),
                                    ty: (ty.to_owned(), tspan.clone()),
                                },
                                span: span.start..tspan.end,
                            }
                        } else {
                            self.pos = save;
                            Arg { kind: ArgKind::Name(word.to_owned()), span }
                        }
                    }
                };
                if !self.separated() {
                    return None;
                }
                end = arg.span.end;
                args.push(arg);
                if self.at_end(parsed)? {
                    break;
                }
                self.expect(b',')?;
            }
        }
        parsed.stmts.push(Stmt {
            kind: StmtKind::Directive { name: name.to_ascii_lowercase(), name_span, args },
            span: start..end,
        });
        Some(())
    }

    fn instruction(
        &mut self,
        parsed: &mut Parsed,
        _blocks: &mut [Block],
        in_kernel: bool,
        has_newline: bool,
        mnemonic: Option<(&'a str, Span)>,
    ) -> Option<()> {
        let mut guard = None;
        let (mnemonic, mnemonic_span) = match mnemonic {
            Some(m) => m,
            None => {
                let at = self.expect(b'@')?;
                self.skip_space();
                let negate = self.peek() == Some(b'!');
                if negate {
                    self.pos += 1;
                    self.skip_space();
                }
                let (p, pspan) = self.word()?;
                if !is_predicate(p) {
                    return None;
                }
                guard =
                    Some(GuardSyntax { number: number_after(p, 1), negate, span: at..pspan.end });
                self.skip_space();
                self.word()?
            }
        };
        if RESERVED.contains(&mnemonic) {
            return None;
        }
        let start = guard.as_ref().map_or(mnemonic_span.start, |g| g.span.start);
        let mut end = mnemonic_span.end;
        let mut operands = Vec::new();
        if !self.at_end(parsed)? {
            if !self.peek().is_some_and(is_space) && self.pos == mnemonic_span.end {
                return None;
            }
            loop {
                self.skip_space();
                let operand = self.operand(false)?;
                if !self.separated() {
                    return None;
                }
                end = operand.span.end;
                operands.push(operand);
                if self.at_end(parsed)? {
                    break;
                }
                self.expect(b',')?;
            }
        }
        // An instruction outside a kernel on a last line without a newline is an error for the
        // grammar (see tree-sitter-wave/grammar.js).
        if !in_kernel && !has_newline {
            return None;
        }
        parsed.stmts.push(Stmt {
            kind: StmtKind::Instruction(InstructionSyntax {
                guard,
                mnemonic: mnemonic.to_owned(),
                mnemonic_span,
                operands,
                broken: false,
            }),
            span: start..end,
        });
        Some(())
    }

    /// One operand. `condition`: only a predicate or negated predicate is valid.
    fn operand(&mut self, condition: bool) -> Option<Operand> {
        let b = self.peek()?;
        let start = self.pos;
        if b == b'!' {
            self.pos += 1;
            self.skip_space();
            let (p, _) = self.word()?;
            if !is_predicate(p) {
                return None;
            }
            return Some(Operand {
                kind: OperandKind::Predicate { number: number_after(p, 1), negate: true },
                span: start..self.pos,
            });
        }
        if condition {
            let (p, span) = self.word()?;
            if !is_predicate(p) {
                return None;
            }
            return Some(Operand {
                kind: OperandKind::Predicate { number: number_after(p, 1), negate: false },
                span,
            });
        }
        if b == b'[' {
            self.pos += 1;
            self.skip_space();
            let (base, bspan) = self.word()?;
            if RESERVED.contains(&base) {
                return None;
            }
            let base_kind =
                if is_register(base) { register(base) } else { OperandKind::Name(base.to_owned()) };
            let base = Operand { kind: base_kind, span: bspan };
            self.skip_space();
            let offset = match self.peek()? {
                b'+' | b'-' => {
                    let negative = self.peek() == Some(b'-');
                    self.pos += 1;
                    self.skip_space();
                    let (span, float) = self.number()?;
                    if float {
                        return None;
                    }
                    Some((signed_offset(negative, &self.text[span.clone()]), span))
                }
                _ => None,
            };
            self.expect(b']')?;
            return Some(Operand {
                kind: OperandKind::Memory { base: Box::new(base), offset },
                span: start..self.pos,
            });
        }
        if b == b'.' {
            self.pos += 1;
            let (w, _) = self.word()?;
            if w.contains('.') {
                return None;
            }
            return Some(Operand {
                kind: OperandKind::Scope(w.to_ascii_lowercase()),
                span: start..self.pos,
            });
        }
        if b.is_ascii_digit() || b == b'-' {
            let (span, float) = self.number()?;
            let t = self.text[span.clone()].to_owned();
            let kind = if float { OperandKind::Float(t) } else { OperandKind::Integer(t) };
            return Some(Operand { kind, span });
        }
        let (word, span) = self.word()?;
        if RESERVED.contains(&word) {
            return None;
        }
        let kind = if is_register(word) {
            // A register pair `rA:rB`.
            let save = self.pos;
            if self.expect(b':').is_some() {
                self.skip_space();
                let (high, hspan) = self.word()?;
                if !is_register(high) {
                    return None;
                }
                return Some(Operand {
                    kind: OperandKind::Pair {
                        low: number_after(word, 1),
                        high: number_after(high, 1),
                    },
                    span: span.start..hspan.end,
                });
            }
            self.pos = save;
            register(word)
        } else if is_predicate(word) {
            OperandKind::Predicate { number: number_after(word, 1), negate: false }
        } else if is_special(word) {
            OperandKind::Special(word.to_ascii_lowercase())
        } else if word == "inf" || word == "nan" {
            OperandKind::Float(word.to_owned())
        } else {
            OperandKind::Name(word.to_owned())
        };
        Some(Operand { kind, span })
    }
}

fn push_keyword(
    parsed: &mut Parsed,
    mnemonic: &str,
    span: Span,
    operands: Vec<Operand>,
    end: usize,
) {
    parsed.stmts.push(Stmt {
        kind: StmtKind::Instruction(InstructionSyntax {
            guard: None,
            mnemonic: mnemonic.to_owned(),
            mnemonic_span: span.clone(),
            operands,
            broken: false,
        }),
        span: span.start..end,
    });
}

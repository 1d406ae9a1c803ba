//! Frontends: one per kernel language, each translating its tree-sitter tree into the shared
//! surface syntax ([`ast`]), which one typer ([`typer`]) lowers to HIR.

pub mod ast;
pub mod cpp;
pub mod python;
pub mod rust;
pub mod typer;
pub mod typescript;

use tree_sitter::{Language, Node, Tree};
use wave_diag::{Diagnostic, Span};

/// Diagnostic codes of the kernel frontends (documented in `docs/diagnostics.md`).
pub mod codes {
    /// A construct kernels cannot use (or not yet).
    pub const UNSUPPORTED: &str = "E0400";
    /// Operand or value types that do not fit.
    pub const TYPE_MISMATCH: &str = "E0401";
    /// A name that is not a variable, parameter, type or intrinsic.
    pub const UNKNOWN_NAME: &str = "E0402";
    /// An intrinsic called with the wrong number or kind of arguments.
    pub const BAD_CALL: &str = "E0403";
    /// A parameter without a kernel type annotation.
    pub const BAD_ANNOTATION: &str = "E0404";
    /// An assignment to a parameter that cannot take one (a buffer).
    pub const BAD_ASSIGNMENT: &str = "E0405";
    /// `break` or `continue` outside a loop.
    pub const OUTSIDE_LOOP: &str = "E0406";
    /// A file with no kernel.
    pub const NO_KERNEL: &str = "E0407";
    /// A construct the code generator does not handle (yet): an f64 conversion to f16, a
    /// transcendental function on f64, an f64 scalar parameter.
    pub const CODEGEN: &str = "E0408";
    /// A kernel that needs more registers than allowed and cannot spill.
    pub const REGISTERS: &str = "E0409";
    /// An internal compiler error (a bug: please report it with the kernel).
    pub const INTERNAL: &str = "E0410";
    /// Local Memory that cannot be laid out: a private array kept in memory without a
    /// workgroup size, or more than LOCAL_MEMORY_SIZE in all.
    pub const LOCAL_MEMORY: &str = "E0411";
    /// Code nested deeper than the compiler follows ([`super::MAX_NESTING`] syntax levels, or
    /// more indentation widths than the Python grammar tracks).
    pub const NESTING: &str = "E0412";
}

/// The deepest syntax tree the frontends accept: blocks, statements and expressions inside
/// each other, counted as tree-sitter nodes (a nested `if` in Rust is three: the expression,
/// its block, the statement; a parenthesis in Python is one). Far above written code (the
/// kernel set stays under 40); the typer and the passes after it recurse once per level or
/// so, and at this depth need a few MB of stack (`docs/diagnostics.md#E0412`).
pub const MAX_NESTING: usize = 1000;

/// The most different indentation widths a Python file may use. tree-sitter-python's external
/// scanner keeps a stack of the widths of the open blocks and, between tokens, serialises it
/// into tree-sitter's 1024-byte buffer; past about 510 levels it writes one byte too many and
/// a C assertion aborts the process (no unwinding can catch that). The stack holds strictly
/// increasing widths, so it is never deeper than the number of different widths, which is
/// counted before parsing. CPython itself stops at 100 levels of indentation.
pub const MAX_INDENT_WIDTHS: usize = 380;

/// A failure already reported as a diagnostic (the frontends and the typer go on with the
/// next statement).
struct Reported;

type R<T> = Result<T, Reported>;

/// Parses `text` with `language`, or says why it could not.
fn parse_tree(
    text: &str,
    language: &Language,
    name: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Tree> {
    if name == "Python"
        && let Some(span) = python_indentation(text)
    {
        diagnostics.push(Diagnostic::error(
            codes::NESTING,
            span,
            format!(
                "too many levels of indentation: this line brings the file to more than {MAX_INDENT_WIDTHS} different indentation widths, more than the Python grammar can follow"
            ),
        ));
        return None;
    }
    if let Some(at) = bracket_depth(text) {
        let mut d = Diagnostic::error(
            codes::NESTING,
            at..at + 1,
            format!("code nested deeper than {MAX_NESTING} levels"),
        );
        d.notes.push(format!(
            "this bracket opens level {}: the compiler follows at most {MAX_NESTING} levels of blocks, statements and expressions inside each other; move the inner part into a helper function",
            MAX_NESTING + 1
        ));
        diagnostics.push(d);
        return None;
    }
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(language).is_err() {
        diagnostics.push(Diagnostic::error(
            "E0000",
            0..0,
            format!("internal error: the {name} grammar does not load"),
        ));
        return None;
    }
    let tree = parser.parse(text, None);
    let Some(tree) = tree else {
        diagnostics.push(Diagnostic::error("E0000", 0..0, "internal error: parsing stopped"));
        return None;
    };
    if let Some(deep) = too_deep(tree.root_node()) {
        // Its first character.
        let start = deep.start_byte();
        let first = text.get(start..).and_then(|t| t.chars().next()).map_or(0, char::len_utf8);
        let span = start..(start + first).min(deep.end_byte().max(start));
        let mut d = Diagnostic::error(
            codes::NESTING,
            span,
            format!("code nested deeper than {MAX_NESTING} levels"),
        );
        d.notes.push(format!(
            "the compiler follows at most {MAX_NESTING} levels of blocks, statements and expressions inside each other; move the inner part into a helper function"
        ));
        diagnostics.push(d);
        return None;
    }
    Some(tree)
}

/// Where `text` first has more than [`MAX_NESTING`] brackets (`(`, `[`, `{`) open at once,
/// counted before parsing: each open bracket is at least one level of the tree, so such a text
/// is refused anyway, and tree-sitter's error recovery on thousands of unclosed brackets takes
/// seconds (a line of 47,584 `[` took 9 s to parse). Brackets in strings and comments count
/// too: it takes a thousand unclosed ones there to matter.
pub(crate) fn bracket_depth(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(i);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Clauses that a frontend folds into nested statements although the tree lists them side by
/// side: Python's `elif` (each an `if` inside the `else` of the one before), Rust's match
/// arms, C++'s and TypeScript's `switch` cases (an `if` chain, with fall-through). Each counts
/// as one more level for the clauses after it.
const CHAINED: [&str; 5] =
    ["elif_clause", "match_arm", "case_statement", "switch_case", "switch_default"];

/// The first node (in document order) more than [`MAX_NESTING`] levels below `root`, found
/// without recursion. A level is a tree level, or a clause of a chain (see [`CHAINED`]).
fn too_deep(root: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = root.walk();
    let mut depth = 0usize;
    // Per open tree level: the chained clauses seen so far among its children.
    let mut chained: Vec<usize> = Vec::new();
    loop {
        if depth > MAX_NESTING {
            return Some(cursor.node());
        }
        let entered = if cursor.goto_first_child() {
            depth += 1;
            chained.push(0);
            true
        } else {
            loop {
                if cursor.goto_next_sibling() {
                    break true;
                }
                if !cursor.goto_parent() {
                    return None;
                }
                depth -= 1 + chained.pop().unwrap_or(0);
            }
        };
        if entered && CHAINED.contains(&cursor.node().kind()) {
            depth += 1;
            if let Some(n) = chained.last_mut() {
                *n += 1;
            }
        }
    }
}

/// Where a Python file passes [`MAX_INDENT_WIDTHS`] different indentation widths, measured as
/// tree-sitter-python's scanner measures them (a space 1, a tab 8, `\r` and form feed back
/// to 0, a backslash-newline not ending the line, widths in 16 bits), over every line that
/// does not start with a comment: a superset of the widths the scanner can push.
pub(crate) fn python_indentation(text: &str) -> Option<Span> {
    let mut seen = std::collections::HashSet::new();
    let bytes = text.as_bytes();
    let (mut width, mut at_start) = (0u16, true);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => (width, at_start) = (0, true),
            _ if !at_start => {}
            b' ' => width = width.wrapping_add(1),
            b'\t' => width = width.wrapping_add(8),
            b'\r' | 0x0C => width = 0,
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => i += 1,
            b'\\' if bytes.get(i + 1) == Some(&b'\r') && bytes.get(i + 2) == Some(&b'\n') => i += 2,
            b'#' => at_start = false,
            _ => {
                at_start = false;
                if seen.insert(width) && seen.len() > MAX_INDENT_WIDTHS {
                    let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                    return Some(i..end);
                }
            }
        }
        i += 1;
    }
    None
}

/// A syntax error (E0400) wherever tree-sitter saw one.
fn syntax_errors(root: Node<'_>, out: &mut Vec<Diagnostic>) {
    fn walk(node: Node<'_>, out: &mut Vec<Span>) {
        if node.is_error() || node.is_missing() {
            out.push(node.byte_range());
            return;
        }
        if !node.has_error() {
            return;
        }
        let mut c = node.walk();
        for child in node.children(&mut c) {
            walk(child, out);
        }
    }
    let mut spans = Vec::new();
    walk(root, &mut spans);
    for span in spans {
        out.push(Diagnostic::error(codes::UNSUPPORTED, span, "syntax error"));
    }
}

/// Moves each diagnostic found inside a function to that function (see
/// [`ast::Func::diagnostics`]); what lies outside every function stays in `diagnostics`.
fn distribute(funcs: &mut [ast::Func], diagnostics: &mut Vec<Diagnostic>) {
    let mut outside = Vec::new();
    for d in diagnostics.drain(..) {
        let owner =
            funcs.iter_mut().find(|f| f.span.start <= d.span.start && d.span.end <= f.span.end);
        match owner {
            Some(f) => f.diagnostics.push(d),
            None => outside.push(d),
        }
    }
    *diagnostics = outside;
}

/// `64`, `16, 16` or `64, 1, 1` (what is between the parentheses or brackets of a workgroup
/// size): the three dimensions, missing ones 1.
fn dims(text: &str) -> Option<[u32; 3]> {
    let nums: Vec<u32> = text.split(',').filter_map(|n| n.trim().parse().ok()).collect();
    match nums.as_slice() {
        [x] => Some([*x, 1, 1]),
        [x, y] => Some([*x, *y, 1]),
        [x, y, z, ..] => Some([*x, *y, *z]),
        [] => None,
    }
}

/// An integer literal's value: decimal, `0x`, `0o` or `0b`.
fn parse_int(digits: &str) -> Option<i64> {
    let d = digits.to_ascii_lowercase();
    if let Some(h) = d.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = d.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = d.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else {
        d.parse().ok()
    }
}

/// How a C-style `for` over the counter `name` counts, from its test (`left op right`, as
/// text) and its update (`name++`, `name--`: the target and operator; `name += k`,
/// `name -= k`: also `k`): the step (positive up to a bound `name < b`, negative down to
/// `name > b`) and whether the bound is the test's left side. `None` for any other shape.
fn counting(
    name: &str,
    test: (&str, &str, &str),
    update: (Option<&str>, Option<&str>, Option<&str>),
) -> Option<(i64, bool)> {
    let (left, op, right) = test;
    let (up, bound_left) = match (left == name, right == name, op) {
        (true, false, "<") => (true, false),
        (false, true, ">") => (true, true),
        (true, false, ">") => (false, false),
        (false, true, "<") => (false, true),
        _ => return None,
    };
    let (target, op, k) = update;
    if target != Some(name) {
        return None;
    }
    let k = || k.and_then(|k| parse_int(k.trim().trim_end_matches(['u', 'U']))).filter(|k| *k > 0);
    let step = match op? {
        "++" => 1,
        "--" => -1,
        "+=" => k()?,
        "-=" => -k()?,
        _ => return None,
    };
    ((step > 0) == up).then_some((step, bound_left))
}

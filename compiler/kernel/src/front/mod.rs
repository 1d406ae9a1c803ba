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
    /// float wave reduction, an f16 scalar parameter.
    pub const CODEGEN: &str = "E0408";
    /// A kernel that needs more registers than allowed and cannot spill.
    pub const REGISTERS: &str = "E0409";
    /// An internal compiler error (a bug: please report it with the kernel).
    pub const INTERNAL: &str = "E0410";
    /// Local Memory that cannot be laid out: a private array kept in memory without a
    /// workgroup size, or more than LOCAL_MEMORY_SIZE in all.
    pub const LOCAL_MEMORY: &str = "E0411";
}

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
    if tree.is_none() {
        diagnostics.push(Diagnostic::error("E0000", 0..0, "internal error: parsing stopped"));
    }
    tree
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

//! `cargo xtask layout`: the shape of the source tree, checked.
//!
//! Two rules, so that a newcomer can find a room and follow its arrows:
//!
//! - No Rust source file under `compiler/`, `emulator/`, `backends/` or `server/` is longer than
//!   [`MAX_LINES`] lines.
//! - No module cycle inside a crate. Modules that share a parent are siblings; a reference from
//!   anywhere inside sibling `a` to anywhere inside sibling `b` (a `crate::`, `super::` or
//!   `self::` path in code or in a `use`) is an arrow `a → b`. The arrows between siblings must
//!   form no cycle. References between a module and its own ancestors or descendants are not
//!   arrows (a parent that declares and re-exports its children is the ordinary shape), but a
//!   path through a re-export (`crate::Lir` where the root says `pub use lir::Lir`) is followed
//!   to the module that defines the name.
//!
//! The scan reads the text, not the compiler's name resolution: comments are skipped, a
//! `use` tree is expanded, and a path is resolved to the longest prefix that names a module file.
//! Inline modules (`mod tests { … }`) belong to their file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The longest a source file may be.
pub const MAX_LINES: usize = 1200;

/// Folders whose Rust files the rules cover.
const ROOTS: [&str; 4] = ["compiler", "emulator", "backends", "server"];

/// One module: its path inside the crate (empty for the root) and its file.
struct Module {
    path: Vec<String>,
    file: PathBuf,
    text: String,
}

/// Checks the tree under `root`; the error lists every file too long and every cycle.
pub fn check(root: &Path) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut crates = Vec::new();
    for dir in ROOTS {
        find_crates(&root.join(dir), &mut crates);
    }
    crates.sort();
    for krate in &crates {
        let modules = modules_of(krate);
        for m in &modules {
            let lines = m.text.lines().count();
            if lines > MAX_LINES {
                problems.push(format!(
                    "{}: {lines} lines (at most {MAX_LINES}): split it into rooms",
                    rel(root, &m.file)
                ));
            }
        }
        problems.extend(cycles(root, krate, &modules));
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

fn rel(root: &Path, file: &Path) -> String {
    file.strip_prefix(root).unwrap_or(file).display().to_string()
}

/// Every folder below `dir` with a `Cargo.toml` and a `src/`.
fn find_crates(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
        out.push(dir.to_path_buf());
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    !n.starts_with('.') && n != "target" && n != "node_modules" && n != "src"
                })
        })
        .collect();
    dirs.sort();
    for d in dirs {
        find_crates(&d, out);
    }
}

/// The module files of a crate's library or binary (`src/bin/` files are crates of their own
/// and are not followed).
fn modules_of(krate: &Path) -> Vec<Module> {
    let src = krate.join("src");
    let mut files = Vec::new();
    collect_rs(&src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let Ok(relative) = file.strip_prefix(&src) else { continue };
        let mut parts: Vec<String> =
            relative.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        let last = parts.pop().unwrap_or_default();
        let stem = last.trim_end_matches(".rs");
        if !(parts.is_empty() && (stem == "lib" || stem == "main")) && stem != "mod" {
            parts.push(stem.to_owned());
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        out.push(Module { path: parts, file, text });
    }
    out
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text with comments blanked out (string contents are kept; a `//` inside a string is
/// rare enough in paths that matter).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_str = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_str {
            if b == b'\\' && i + 1 < bytes.len() {
                out.push(' ');
                out.push(' ');
                i += 2;
                continue;
            }
            if b == b'"' {
                in_str = false;
            }
            // Paths inside strings are not references.
            out.push(if b == b'\n' { '\n' } else { ' ' });
            i += 1;
            continue;
        }
        if b == b'"' {
            in_str = true;
            out.push(' ');
            i += 1;
        } else if b == b'\''
            && i + 2 < bytes.len()
            && (bytes[i + 2] == b'\'' || bytes[i + 1] == b'\\')
        {
            // A char literal such as '"' or '\n'.
            let end = bytes[i + 1..].iter().position(|&c| c == b'\'').map_or(i + 1, |p| i + 2 + p);
            let end = if bytes[i + 1] == b'\\' {
                bytes[i + 3..].iter().position(|&c| c == b'\'').map_or(i + 3, |p| i + 4 + p)
            } else {
                end
            };
            for _ in i..end.min(bytes.len()) {
                out.push(' ');
            }
            i = end;
        } else if text[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..].find("*/").map_or(bytes.len(), |p| i + 4 + p);
            for c in text[i..end].chars() {
                out.push(if c == '\n' { '\n' } else { ' ' });
            }
            i = end;
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Other(char),
}

fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            line += 1;
        } else if c.is_alphabetic() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push((Tok::Ident(text[i..end].to_owned()), line));
        } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
            chars.next();
            out.push((Tok::Colons, line));
        } else if c == '{' {
            out.push((Tok::Open, line));
        } else if c == '}' {
            out.push((Tok::Close, line));
        } else if c == ',' {
            out.push((Tok::Comma, line));
        } else if !c.is_whitespace() {
            out.push((Tok::Other(c), line));
        }
    }
    out
}

/// A path found in a file: its segments (starting with `crate`, `super`, `self` or, in a
/// `use`, a child module's name), the line, and whether a `pub use` re-exports it.
struct Found {
    segments: Vec<String>,
    line: usize,
    reexport: bool,
}

/// Every path in `text` rooted at `crate`, `super` or `self`, and every path of a `use` item,
/// with use trees expanded.
fn paths(text: &str) -> Vec<Found> {
    let toks = tokens(&strip_comments(text));
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let is_use = matches!(&toks[i].0, Tok::Ident(s) if s == "use");
        let preceded_by_colons = i > 0 && toks[i - 1].0 == Tok::Colons;
        if is_use {
            let reexport = match toks[..i].last() {
                Some((Tok::Ident(s), _)) => s == "pub",
                // `pub(crate) use`, `pub(in path) use`
                Some((Tok::Other(')'), _)) => toks[..i]
                    .iter()
                    .rposition(|t| t.0 == Tok::Other('('))
                    .and_then(|k| k.checked_sub(1))
                    .is_some_and(|k| toks[k].0 == Tok::Ident("pub".to_owned())),
                _ => false,
            };
            let line = toks[i].1;
            let mut j = i + 1;
            let _ = use_tree(&toks, &mut j, &mut Vec::new(), &mut out, line, reexport);
            i = j;
            continue;
        }
        if !preceded_by_colons
            && matches!(&toks[i].0, Tok::Ident(s) if s == "crate" || s == "super" || s == "self")
            && toks.get(i + 1).is_some_and(|t| t.0 == Tok::Colons)
        {
            let line = toks[i].1;
            let mut segments = Vec::new();
            let mut j = i;
            while let Some((Tok::Ident(s), _)) = toks.get(j) {
                segments.push(s.clone());
                if toks.get(j + 1).is_some_and(|t| t.0 == Tok::Colons) {
                    j += 2;
                } else {
                    j += 1;
                    break;
                }
            }
            out.push(Found { segments, line, reexport: false });
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// Expands one use tree starting at `toks[*j]` under `prefix`.
fn use_tree(
    toks: &[(Tok, usize)],
    j: &mut usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<Found>,
    line: usize,
    reexport: bool,
) -> Option<()> {
    let depth = prefix.len();
    if toks.get(*j)?.0 == Tok::Colons {
        *j += 1; // `use ::std::…`
    }
    loop {
        match &toks.get(*j)?.0 {
            Tok::Ident(s) => {
                prefix.push(s.clone());
                *j += 1;
                if toks.get(*j).is_some_and(|t| t.0 == Tok::Colons) {
                    *j += 1;
                    continue;
                }
                // `as name` and the end of this branch.
                if matches!(toks.get(*j).map(|t| &t.0), Some(Tok::Ident(a)) if a == "as") {
                    *j += 2;
                }
                if prefix.last().is_some_and(|s| s == "self") {
                    prefix.pop();
                }
                out.push(Found { segments: prefix.clone(), line, reexport });
                break;
            }
            Tok::Open => {
                *j += 1;
                loop {
                    if toks.get(*j)?.0 == Tok::Close {
                        *j += 1;
                        break;
                    }
                    use_tree(toks, j, prefix, out, line, reexport)?;
                    match toks.get(*j)?.0 {
                        Tok::Comma => *j += 1,
                        Tok::Close => {
                            *j += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                break;
            }
            Tok::Other('*') => {
                *j += 1;
                out.push(Found { segments: prefix.clone(), line, reexport });
                break;
            }
            _ => return None,
        }
    }
    prefix.truncate(depth);
    Some(())
}

/// Resolves `segments`, written in module `from`, to a path of segments from the crate root
/// (the module part and any item names after it).
fn absolute(from: &[String], segments: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    let mut base: Vec<String> = from.to_vec();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some(first) => {
            // A `use` path that does not start at the root names a child module (or another
            // crate, which is not ours).
            let mut child = from.to_vec();
            child.push(first.to_owned());
            if !modules.contains(&child) {
                return Vec::new();
            }
        }
        None => {}
    }
    base.extend(rest.iter().cloned());
    base
}

/// The module an absolute path lands in: its longest prefix that is a module.
fn module_of(path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
        .unwrap_or_default()
}

fn cycles(root: &Path, krate: &Path, modules: &[Module]) -> Vec<String> {
    let known: BTreeSet<Vec<String>> = modules.iter().map(|m| m.path.clone()).collect();
    let found: Vec<(usize, Vec<Found>)> =
        modules.iter().enumerate().map(|(i, m)| (i, paths(&m.text))).collect();
    // Re-exports: (module, name) → the absolute path it stands for.
    let mut reexports: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    for (i, fs) in &found {
        for f in fs.iter().filter(|f| f.reexport) {
            let abs = absolute(&modules[*i].path, &f.segments, &known);
            if let Some(name) = abs.last() {
                reexports.insert((modules[*i].path.clone(), name.clone()), abs.clone());
            }
        }
    }
    // Arrows between siblings, by parent, with one witness each.
    let mut arrows: BTreeMap<Vec<String>, BTreeMap<(String, String), String>> = BTreeMap::new();
    for (i, fs) in &found {
        let from = &modules[*i].path;
        for f in fs {
            let mut abs = absolute(from, &f.segments, &known);
            if abs.is_empty() && f.segments.first().is_some_and(|s| s != "crate") {
                continue;
            }
            // Follow re-exports a few steps.
            for _ in 0..4 {
                let m = module_of(&abs, &known);
                let Some(name) = abs.get(m.len()) else { break };
                match reexports.get(&(m, name.clone())) {
                    Some(target) if *target != abs => abs = target.clone(),
                    _ => break,
                }
            }
            let to = module_of(&abs, &known);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue;
            }
            let parent = from[..common].to_vec();
            let witness =
                format!("{}:{} `{}`", rel(root, &modules[*i].file), f.line, f.segments.join("::"));
            arrows
                .entry(parent)
                .or_default()
                .entry((from[common].clone(), to[common].clone()))
                .or_insert(witness);
        }
    }
    let mut problems = Vec::new();
    let crate_name = rel(root, krate);
    for (parent, edges) in &arrows {
        for cycle in strongly_connected(edges) {
            let mut text = format!(
                "{crate_name}: module cycle among {} in `{}`:",
                cycle.join(", "),
                if parent.is_empty() { "crate".to_owned() } else { parent.join("::") }
            );
            for ((a, b), witness) in edges {
                if cycle.contains(a) && cycle.contains(b) {
                    let _ = write!(text, "\n    {a} → {b}: {witness}");
                }
            }
            problems.push(text);
        }
    }
    problems
}

/// The strongly connected components with more than one member (Tarjan).
fn strongly_connected(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of = |n: &String| nodes.iter().position(|m| *m == n).unwrap_or(0);
    let mut succ = vec![Vec::new(); nodes.len()];
    for (a, b) in edges.keys() {
        succ[index_of(a)].push(index_of(b));
    }
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(v: usize, succ: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &succ[v] {
            match s.index[w] {
                None => {
                    visit(w, succ, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.out.push(component);
            }
        }
    }
    let n = nodes.len();
    let mut s = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(v, &succ, &mut s);
        }
    }
    let mut out: Vec<Vec<String>> = s
        .out
        .into_iter()
        .map(|c| {
            let mut names: Vec<String> = c.into_iter().map(|i| nodes[i].clone()).collect();
            names.sort();
            names
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    fn tree(files: &[(&str, &str)]) -> (tempdir::Dir, Result<(), String>) {
        let dir = tempdir::Dir::new();
        write(dir.path(), &[("server/x/Cargo.toml", "[package]\n")]);
        let prefixed: Vec<(String, &str)> =
            files.iter().map(|(n, t)| (format!("server/x/src/{n}"), *t)).collect();
        let refs: Vec<(&str, &str)> = prefixed.iter().map(|(n, t)| (n.as_str(), *t)).collect();
        write(dir.path(), &refs);
        let result = check(dir.path());
        (dir, result)
    }

    mod tempdir {
        use std::path::{Path, PathBuf};
        pub struct Dir(PathBuf);
        impl Dir {
            pub fn new() -> Self {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let p = std::env::temp_dir().join(format!(
                    "xtask-layout-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                let _ = std::fs::remove_dir_all(&p);
                std::fs::create_dir_all(&p).unwrap();
                Self(p)
            }
            pub fn path(&self) -> &Path {
                &self.0
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn a_sibling_cycle_is_found_with_its_witnesses() {
        let (_d, r) = tree(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::{self, B};\n"),
            ("b.rs", "// crate::a::A in a comment is not a reference\nfn f() { super::a::g() }\n"),
        ]);
        let e = r.unwrap_err();
        assert!(e.contains("module cycle among a, b in `crate`"), "{e}");
        assert!(e.contains("a → b: server/x/src/a.rs:1 `crate::b`"), "{e}");
        assert!(e.contains("b → a: server/x/src/b.rs:2 `super::a::g`"), "{e}");
    }

    #[test]
    fn parents_and_children_may_refer_to_each_other() {
        let (_d, r) = tree(&[
            ("lib.rs", "mod a;\npub use a::A;\nfn f() { a::inner::g() }\n"),
            ("a/mod.rs", "mod inner;\npub struct A;\nuse inner::g;\n"),
            ("a/inner.rs", "use super::A;\nuse crate::a;\n\"crate::b::c\";\n"),
        ]);
        assert_eq!(r, Ok(()));
    }

    #[test]
    fn a_path_through_a_reexport_reaches_the_defining_module() {
        let (_d, r) = tree(&[
            ("lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
            ("a.rs", "use crate::b::B;\n"),
            ("b.rs", "pub struct B(crate::A);\n"),
        ]);
        let e = r.unwrap_err();
        assert!(e.contains("b → a: server/x/src/b.rs:1 `crate::A`"), "{e}");
    }

    #[test]
    fn a_long_file_is_named() {
        let long = "fn f() {}\n".repeat(MAX_LINES + 1);
        let (_d, r) = tree(&[("lib.rs", &long)]);
        let e = r.unwrap_err();
        assert!(e.contains(&format!("server/x/src/lib.rs: {} lines", MAX_LINES + 1)), "{e}");
    }
}

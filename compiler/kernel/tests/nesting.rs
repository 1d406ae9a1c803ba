//! Deep nesting never takes the compiler down (issue 19): past the limits, one located E0412;
//! below them, a normal compile. The inputs of the fuzzing report are here: a Python file whose
//! indentation overflowed tree-sitter-python's scanner (a C assertion, SIGABRT), and nesting
//! that overflowed the stack (1,600 `if` in Rust, 5,000 parentheses in Python, 3,000 in Rust,
//! a 3,000-level C++ line).
//!
//! The compiles run on a thread with the stack the `wave` command gives its work (256 MB), as
//! a debug build: at the limit, the recursion of a debug build is the deepest there is.

use wave_kernel::{Language, Options};

const STACK: usize = 256 << 20;

/// `text` compiled on a thread with [`STACK`]: whether it compiled, and its diagnostics.
fn compile(text: String, language: Language) -> (bool, Vec<wave_diag::Diagnostic>) {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let (out, d) = wave_kernel::compile(&text, language, "deep", Options::default());
            (out.is_some(), d)
        })
        .expect("thread")
        .join()
        .expect("the compile finished without a panic")
}

/// The codes of the diagnostics of `text` (see [`compile`]), with where each starts.
fn codes(text: String, language: Language) -> (bool, Vec<(&'static str, usize)>) {
    let (compiled, d) = compile(text, language);
    (compiled, d.iter().map(|d| (d.code, d.span.start)).collect())
}

fn nesting_errors(text: String, language: Language) -> Vec<usize> {
    let (_, d) = codes(text, language);
    d.iter().filter(|(c, _)| *c == "E0412").map(|(_, at)| *at).collect()
}

fn python(body: &str) -> String {
    format!(
        "import wave\n\n@wave.kernel(workgroup=32)\ndef k(out: u32[:]):\n    i = wave.global_id()\n{body}"
    )
}

fn rust(body: &str) -> String {
    format!(
        "#[wave::kernel(workgroup = (32, 1, 1))]\nfn k(out: &mut [u32]) {{\n    let i = wave::global_id(0);\n{body}\n}}\n"
    )
}

fn cpp(body: &str) -> String {
    format!(
        "[[wave::kernel, wave::workgroup(32, 1, 1)]]\nvoid k(uint32_t* out) {{\n    uint32_t i = wave::global_id(0);\n{body}\n}}\n"
    )
}

fn ts(body: &str) -> String {
    format!(
        "import * as wave from \"wave\";\nimport type {{ u32 }} from \"wave\";\nexport const k = wave.kernel({{ workgroup: [32] }}, function k(out: Uint32Array) {{\n  const i: u32 = wave.globalId();\n{body}\n}});\n"
    )
}

fn parens(n: usize) -> String {
    format!("{}i{}", "(".repeat(n), ")".repeat(n))
}

#[test]
fn the_python_file_that_aborted_the_scanner_is_an_error() {
    // `def k(a):`, a lone `"`, then 520 `if` lines, each indented one space more.
    let mut text = String::from("def k(a):\n\"\n");
    for level in 1..=520 {
        text.push_str(&" ".repeat(level));
        text.push_str("if a:\n");
    }
    let errors = nesting_errors(text.clone(), Language::Python);
    assert_eq!(errors.len(), 1, "one E0412");
    // At the 381st different width (0, then 1 to 380): `if` number 380, on line 382.
    let line = text[..errors[0]].matches('\n').count() + 1;
    assert_eq!(line, 382, "the line that brings the 381st width");
    // Many lines at few widths are fine.
    let mut text = String::from(
        "import wave\n\n@wave.kernel(workgroup=32)\ndef k(out: u32[:]):\n    i = wave.global_id()\n",
    );
    for _ in 0..2000 {
        text.push_str("    if i > 0:\n        out[i] = i\n");
    }
    assert_eq!(codes(text, Language::Python), (true, vec![]));
}

#[test]
fn deep_blocks_are_one_error_in_every_language_and_shallower_ones_compile() {
    let py = |n: usize| {
        // Python: at most 100 levels of indentation (CPython's own limit) to stay legal.
        let mut body = String::new();
        for level in 0..n {
            body.push_str(&"    ".repeat(level + 1));
            body.push_str("if i > 0:\n");
        }
        body.push_str(&"    ".repeat(n + 1));
        body.push_str("out[i] = i\n");
        python(&body)
    };
    let braces =
        |n: usize, open: &str, store: &str| format!("{}{store}{}", open.repeat(n), "}".repeat(n));
    assert_eq!(codes(py(90), Language::Python), (true, vec![]));
    let rs = |n| rust(&braces(n, "if i > 0 { ", "out[i as usize] = i; "));
    let cc = |n| cpp(&braces(n, "if (i > 0) { ", "out[i] = i; "));
    let tt = |n| ts(&braces(n, "if (i > 0) { ", "out[i] = i; "));
    // Written code is far from the limit.
    assert_eq!(codes(rs(100), Language::Rust).1, vec![]);
    assert_eq!(codes(cc(100), Language::Cpp).1, vec![]);
    assert_eq!(codes(tt(100), Language::TypeScript).1, vec![]);
    // The report's inputs: 1,600 `if` in Rust, a C++ line of 3,000.
    assert_eq!(nesting_errors(rs(1600), Language::Rust).len(), 1);
    assert_eq!(nesting_errors(cc(3000), Language::Cpp).len(), 1);
    assert_eq!(nesting_errors(tt(3000), Language::TypeScript).len(), 1);
}

#[test]
fn deep_parentheses_are_one_error_and_the_deepest_accepted_compile() {
    let py = |n| python(&format!("    out[i] = {}\n", parens(n)));
    let rs = |n| rust(&format!("    out[i as usize] = {};", parens(n)));
    let cc = |n| cpp(&format!("    out[i] = {};", parens(n)));
    let tt = |n| ts(&format!("    out[i] = {};", parens(n)));
    type Make<'a> = &'a dyn Fn(usize) -> String;
    let cases: [(Make<'_>, Language, usize); 4] = [
        (&py, Language::Python, 5000),
        (&rs, Language::Rust, 3000),
        (&cc, Language::Cpp, 3000),
        (&tt, Language::TypeScript, 3000),
    ];
    for (make, language, report) in cases {
        assert_eq!(nesting_errors(make(report), language).len(), 1, "{language:?}");
        // The deepest nesting below the limit compiles: found by halving between a depth that
        // compiles and one that is refused.
        let (mut ok, mut refused) = (1usize, report);
        while refused - ok > 1 {
            let mid = (ok + refused) / 2;
            if nesting_errors(make(mid), language).is_empty() {
                ok = mid;
            } else {
                refused = mid;
            }
        }
        let (compiled, d) = codes(make(ok), language);
        assert!(compiled, "{language:?}: {ok} parentheses: {d:?}");
        assert!(ok >= 300, "{language:?}: only {ok} parentheses accepted");
    }
}

/// Found by the document fuzzer: the deepest node began with `𝄞`, and E0412 pointed at its
/// first byte only, which the command line's report could not cut a snippet at.
#[test]
fn the_error_points_at_whole_characters() {
    let text =
        include_str!("../../../server/cli/tests/data/fuzz/report_span_inside_a_character.ts");
    let (_, d) = compile(text.to_string(), Language::TypeScript);
    let e = d.iter().find(|d| d.code == "E0412").expect("E0412");
    assert_eq!(&text[e.span.clone()], "𝄞");
    for d in &d {
        assert!(text.is_char_boundary(d.span.start) && text.is_char_boundary(d.span.end), "{d:?}");
    }
}

/// Found in review: chains the tree lists side by side but the frontends fold into nested
/// statements (Python `elif`, Rust match arms, C++ `switch` cases) count a level per clause.
#[test]
fn long_chains_of_clauses_count_as_nesting() {
    let elifs = |n: usize| {
        let mut body = String::from("    if i == 0:\n        out[i] = 0\n");
        for k in 1..n {
            body.push_str(&format!("    elif i == {k}:\n        out[i] = {k}\n"));
        }
        python(&body)
    };
    let arms = |n: usize| {
        let arms: String = (0..n).map(|k| format!("{k} => {k}, ")).collect();
        rust(&format!("    out[i as usize] = match i {{ {arms}_ => 0 }};"))
    };
    let cases = |n: usize| {
        let cases: String = (0..n).map(|k| format!("case {k}: out[i] = {k}; ")).collect();
        cpp(&format!("    switch (i) {{ {cases}default: break; }}"))
    };
    assert_eq!(codes(elifs(200), Language::Python), (true, vec![]));
    assert_eq!(nesting_errors(arms(200), Language::Rust), Vec::<usize>::new());
    assert_eq!(nesting_errors(cases(200), Language::Cpp), Vec::<usize>::new());
    assert_eq!(nesting_errors(elifs(20_000), Language::Python).len(), 1);
    assert_eq!(nesting_errors(arms(20_000), Language::Rust).len(), 1);
    assert_eq!(nesting_errors(cases(20_000), Language::Cpp).len(), 1);
}

/// Found by the protocol fuzzer: a line of 47,584 `[` in a C++ kernel took tree-sitter's error
/// recovery 9 s to parse, and the language server parses a chunk several times. Brackets are
/// counted before parsing: past the limit, E0412 at the first bracket beyond it, in every
/// language, and no parse.
#[test]
fn thousands_of_unclosed_brackets_are_refused_before_parsing() {
    for (language, make) in [
        (Language::Python, python as fn(&str) -> String),
        (Language::Rust, rust),
        (Language::Cpp, cpp),
        (Language::TypeScript, ts),
    ] {
        for bracket in ["[", "(", "{"] {
            let text = make(&format!("    x = {}\n", bracket.repeat(50_000)));
            let (compiled, d) = codes(text.clone(), language);
            assert!(!compiled);
            let at = text.find(bracket.repeat(50_000).as_str()).expect("brackets");
            // The kernel's own brackets before the line count too.
            let open_before = text[..at].matches(['(', '[', '{']).count()
                - text[..at].matches([')', ']', '}']).count();
            let nesting: Vec<usize> =
                d.iter().filter(|(c, _)| *c == "E0412").map(|(_, s)| *s).collect();
            assert_eq!(nesting, [at + 1000 - open_before], "{language:?} {bracket}: {d:?}");
        }
    }
}

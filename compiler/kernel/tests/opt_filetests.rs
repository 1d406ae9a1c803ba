//! Filetests of the MIR passes, in Cranelift's manner: `tests/opt/<pass>/<case>.mir` holds a
//! function as MIR text, a line `==== <pass>`, and the text the pass must turn it into. The
//! harness parses the input, checks it with the verifier, runs that one pass, checks the
//! result again and compares its text. `UPDATE_EXPECT=1 cargo test -p wave-kernel --test
//! opt_filetests` rewrites the expected halves (review them in the diff).
//!
//! Every pass of every level has a folder, and at least one of its cases changes the input:
//! a pass that did nothing to all its cases would test nothing. The inputs began as the MIR of
//! a test or conformance kernel just before the pass runs in its level's pipeline (the first
//! line of each says which); they are ordinary text to edit or add to, with `;` comments and
//! `private NAME: TYPE[LEN]` lines for private arrays.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use wave_kernel::mir::{self, Func};
use wave_kernel::opt::{self, Level};

const SEPARATOR: &str = "==== ";

/// Every pass by name: those of the levels' pipelines, and mem2reg.
fn passes() -> BTreeMap<&'static str, fn(&mut Func) -> bool> {
    let mut all = BTreeMap::new();
    for level in [Level::O1, Level::O2, Level::O3] {
        for (name, pass) in opt::passes(level) {
            all.insert(name, pass);
        }
    }
    all
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/opt")
}

/// The input text, the pass named after the separator and the expected text.
fn split(text: &str) -> Option<(&str, &str, &str)> {
    let at = text.find(&format!("\n{SEPARATOR}"))? + 1;
    let (input, rest) = text.split_at(at);
    let rest = &rest[SEPARATOR.len()..];
    let (pass, expected) = rest.split_once('\n').unwrap_or((rest, ""));
    Some((input, pass.trim(), expected))
}

fn verified(funcs: &[Func], what: &str) {
    for f in funcs {
        let problems = mir::verify(f);
        assert!(problems.is_empty(), "{what}: {problems:#?}\n{}", mir::print(funcs));
    }
}

#[test]
fn each_pass_turns_its_cases_into_the_expected_text() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let passes = passes();
    let mut changed_by: BTreeMap<String, usize> = BTreeMap::new();
    let mut cases = 0;
    let mut folders: Vec<PathBuf> =
        std::fs::read_dir(root()).expect("tests/opt").flatten().map(|e| e.path()).collect();
    folders.sort();
    for folder in folders {
        let name = folder.file_name().expect("name").to_string_lossy().into_owned();
        let pass = *passes.get(name.as_str()).unwrap_or_else(|| {
            panic!("tests/opt/{name}: no pass of that name (passes: {:?})", passes.keys())
        });
        let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
            .expect("folder")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "mir"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).expect("case");
            let (input, named, expected) = split(&text).unwrap_or_else(|| {
                panic!("{}: no `{SEPARATOR}{name}` line after the input", path.display())
            });
            assert_eq!(named, name, "{}: the case names another pass", path.display());
            let mut funcs = mir::parse(input).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            verified(&funcs, &format!("{} (input)", path.display()));
            let before = mir::print(&funcs);
            for f in &mut funcs {
                pass(f);
            }
            verified(&funcs, &format!("{} (after {name})", path.display()));
            let got = mir::print(&funcs);
            if got != before {
                *changed_by.entry(name.clone()).or_default() += 1;
            }
            if update && got != expected {
                std::fs::write(&path, format!("{input}{SEPARATOR}{name}\n{got}")).expect("write");
            } else {
                assert_eq!(got, expected, "{} (UPDATE_EXPECT=1 to accept)", path.display());
            }
            cases += 1;
        }
    }
    let missing: Vec<&&str> = passes.keys().filter(|p| !changed_by.contains_key(**p)).collect();
    assert!(
        missing.is_empty(),
        "passes without a case they change (add tests/opt/<pass>/*.mir): {missing:?}"
    );
    assert!(cases >= passes.len(), "{cases} cases");
}

#[test]
fn printed_mir_parses_back_to_the_same_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mir");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/mir").flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("golden");
        if text.contains(".private ") {
            // Private arrays are declared by a line the printer does not write.
            continue;
        }
        let funcs = mir::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
        assert_eq!(mir::print(&funcs), text, "{}", entry.path().display());
        seen += 1;
    }
    assert!(seen >= 5, "{seen} files");
}

#[test]
fn bad_mir_is_an_error_with_its_line() {
    let cases = [
        (
            "kernel k() {\nbb0:\n    %0 = frob %1 : i32\n    return\n}\n",
            "line 3: unknown operation `frob`",
        ),
        ("kernel k() {\nbb1:\n    return\n}\n", "line 2: blocks are numbered in order"),
        (
            "kernel k() {\nbb0:\n    %0 = const 1\n    return\n}\n",
            "line 3: an instruction with a result gives its type",
        ),
        (
            "kernel k() {\nbb0:\n    %0 = load.private a %1 : f32\n    return\n}\n",
            "line 3: private array `a` is not declared",
        ),
        ("kernel k() {\nbb0:\n    return\n", "line 3: the last kernel has no closing `}`"),
        (
            "kernel k() {\nbb0:\n    %0 = const 1 : i32\n}\n",
            "line 4: the last block has no terminator",
        ),
        ("func k() {\n", "line 1: expected `kernel NAME(...) {`"),
        (
            "kernel k() {\nbb0:\n    %0 = neg %7 : i32\n    return\n}\n",
            "line 5: `%7` is read but never defined",
        ),
        (
            "kernel k() {\nbb0:\n    jump bb4\n}\n",
            "line 4: `bb4` is named but the kernel has 1 blocks",
        ),
        (
            "kernel k() {\nbb0:\n    %4000000000 = const 1 : i32\n    return\n}\n",
            "line 3: value `%4000000000` is past the limit",
        ),
    ];
    for (text, want) in cases {
        let e = mir::parse(text).expect_err(text).to_string();
        assert!(e.starts_with(want), "{e}\nwanted: {want}");
    }
}

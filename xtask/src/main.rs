//! Project automation: code generation from the isa table and grammar checks.
//!
//! - `cargo xtask codegen` rewrites the generated parts of the repository from the isa table:
//!   the mnemonic block of `tree-sitter-wave/queries/highlights.scm`, `docs/isa/reference.md`
//!   ([`reference`]), the VS Code extension's TextMate grammar
//!   `editors/vscode/syntaxes/wave.tmLanguage.json` ([`textmate`]), the launch-configuration
//!   schema in `editors/vscode/package.json` from the debug adapter's settings ([`launch`]),
//!   and the copies of the queries in `editors/nvim/queries/wave`. With `--check` it writes nothing and fails if any
//!   is stale (CI runs this).
//! - `cargo xtask grammar` regenerates `tree-sitter-wave/src` with the tree-sitter CLI; with
//!   `--check` it generates into a temporary copy and fails if the committed parser differs
//!   from what `grammar.js` produces.
//!
//! - `cargo xtask layout` fails if a source file under `compiler/`, `emulator/`, `backends/`
//!   or `server/` is longer than 1,200 lines or a crate has a module cycle ([`layout`]).
//!
//! Running cases on a GPU is not automation but a product feature: `wave test --device cuda`.

#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a command line prints")]

mod launch;
mod layout;
mod reference;
mod textmate;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let result = match args.first().map(String::as_str) {
        Some("codegen") => codegen(check),
        Some("grammar") => grammar(check),
        Some("layout") => layout::check(&root()),
        _ => Err(
            "usage: cargo xtask codegen [--check] | cargo xtask grammar [--check] | cargo xtask layout"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes `content` to `path`, or with `check` compares and reports staleness.
fn update(path: &Path, content: &str, check: bool) -> Result<bool, String> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    if old == content {
        return Ok(false);
    }
    if check {
        return Err(format!(
            "{} is stale: run `cargo xtask codegen` and commit the result",
            path.display()
        ));
    }
    std::fs::write(path, content).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("updated {}", path.display());
    Ok(true)
}

fn codegen(check: bool) -> Result<(), String> {
    let root = root();
    let highlights = root.join("tree-sitter-wave/queries/highlights.scm");
    let text = std::fs::read_to_string(&highlights)
        .map_err(|e| format!("cannot read {}: {e}", highlights.display()))?;
    update(&highlights, &with_generated_mnemonics(&text)?, check)?;
    update(&root.join("docs/isa/reference.md"), &reference::render(), check)?;
    update(&root.join("editors/vscode/syntaxes/wave.tmLanguage.json"), &textmate::render(), check)?;
    let package = root.join("editors/vscode/package.json");
    let text = std::fs::read_to_string(&package)
        .map_err(|e| format!("cannot read {}: {e}", package.display()))?;
    update(&package, &launch::render(&text)?, check)?;
    // The Neovim plugin ships the grammar's queries.
    let queries = root.join("tree-sitter-wave/queries");
    let mut names: Vec<_> = std::fs::read_dir(&queries)
        .map_err(|e| format!("cannot read {}: {e}", queries.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    names.sort();
    for name in names {
        let text = if check && name == "highlights.scm" {
            with_generated_mnemonics(
                &std::fs::read_to_string(queries.join(&name)).unwrap_or_default(),
            )?
        } else {
            std::fs::read_to_string(queries.join(&name)).map_err(|e| e.to_string())?
        };
        update(&root.join("editors/nvim/queries/wave").join(&name), &text, check)?;
    }
    Ok(())
}

const BEGIN: &str = "; BEGIN GENERATED MNEMONICS\n";
const END: &str = "; END GENERATED MNEMONICS";

/// The block keywords: tokens of their own in the tree-sitter grammar, keywords in both
/// highlighters.
pub(crate) const BLOCKS: [&str; 5] = ["if", "else", "endif", "loop", "endloop"];

/// The other control-flow mnemonics, instructions in the grammar, coloured as keywords (the
/// one list both the tree-sitter highlights and the TextMate grammar use).
pub(crate) const CONTROL: [&str; 6] = ["break", "continue", "call", "return", "halt", "barrier"];

/// The highlight patterns for every mnemonic spelling of the isa table. The regular
/// expressions mean the same in Rust's regex and in Vim's very-magic syntax (Neovim).
fn with_generated_mnemonics(text: &str) -> Result<String, String> {
    let start = text.find(BEGIN).ok_or("highlights.scm lacks the BEGIN marker")? + BEGIN.len();
    let end = text.find(END).ok_or("highlights.scm lacks the END marker")?;
    let names: Vec<&str> = wave_isa::all_spellings()
        .iter()
        .map(String::as_str)
        .filter(|s| !CONTROL.contains(s) && !BLOCKS.contains(s))
        .collect();
    let mut block = String::new();
    block.push_str(&format!(
        "((mnemonic) @keyword.control\n  (#match? @keyword.control \"^({})$\"))\n",
        CONTROL.join("|")
    ));
    block.push_str("((mnemonic) @function.builtin\n  (#match? @function.builtin \"^(");
    block.push_str(&names.join("|"));
    block.push_str(")([.][a-z0-9_]+)*$\"))\n");
    Ok(format!("{}{block}{}", &text[..start], &text[end..]))
}

fn grammar(check: bool) -> Result<(), String> {
    let root = root();
    let grammar_dir = root.join("tree-sitter-wave");
    let work = if check {
        let tmp = std::env::temp_dir().join(format!("wave-grammar-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
        for file in ["grammar.js", "tree-sitter.json"] {
            std::fs::copy(grammar_dir.join(file), tmp.join(file)).map_err(|e| e.to_string())?;
        }
        tmp
    } else {
        grammar_dir.clone()
    };
    let status = Command::new("tree-sitter")
        .args(["generate", "--js-runtime", "native"])
        .current_dir(&work)
        .status()
        .map_err(|e| format!("cannot run the tree-sitter CLI (install it with `cargo install tree-sitter-cli --version 0.27.1 --locked`): {e}"))?;
    if !status.success() {
        return Err("tree-sitter generate failed".into());
    }
    if check {
        for file in ["parser.c", "grammar.json", "node-types.json"] {
            let fresh = std::fs::read(work.join("src").join(file)).map_err(|e| e.to_string())?;
            let committed =
                std::fs::read(grammar_dir.join("src").join(file)).map_err(|e| e.to_string())?;
            if fresh != committed {
                return Err(format!(
                    "tree-sitter-wave/src/{file} is not what grammar.js generates: run `cargo xtask grammar` and commit"
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok(())
}

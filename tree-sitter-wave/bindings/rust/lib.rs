//! The tree-sitter grammar of WAVE assembly.
//!
//! [`LANGUAGE`] is the parser for `tree_sitter::Parser::set_language(&LANGUAGE.into())`. The
//! queries (`highlights.scm`, `locals.scm`, `folds.scm`, `indents.scm`, `textobjects.scm`) are
//! exported as strings; the node names and fields they and the assembler rely on are listed
//! in `grammar.js` and tested by the corpus in `test/corpus`.

use tree_sitter_language::LanguageFn;

#[allow(unsafe_code, reason = "the generated parser is a C function")]
unsafe extern "C" {
    fn tree_sitter_wave() -> *const ();
}

/// The tree-sitter language of WAVE assembly.
#[allow(unsafe_code, reason = "the generated parser is a C function; this is its only entry")]
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_wave) };

/// The content of `node-types.json`.
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");
/// Syntax highlighting query.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");
/// Local scopes and definitions query.
pub const LOCALS_QUERY: &str = include_str!("../../queries/locals.scm");
/// Folding query.
pub const FOLDS_QUERY: &str = include_str!("../../queries/folds.scm");
/// Indentation query.
pub const INDENTS_QUERY: &str = include_str!("../../queries/indents.scm");
/// Text objects query.
pub const TEXTOBJECTS_QUERY: &str = include_str!("../../queries/textobjects.scm");

#[cfg(test)]
mod tests {
    #[test]
    fn the_grammar_loads_and_parses_a_kernel() {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&super::LANGUAGE.into()).expect("compatible ABI");
        let tree = parser.parse(".kernel k\n    halt\n.end\n", None).expect("a tree");
        let root = tree.root_node();
        assert!(!root.has_error(), "{}", root.to_sexp());
        assert_eq!(root.child(0).map(|n| n.kind()), Some("kernel"));
    }

    #[test]
    fn every_query_compiles_against_the_grammar() {
        let language: tree_sitter::Language = super::LANGUAGE.into();
        for (name, query) in [
            ("highlights", super::HIGHLIGHTS_QUERY),
            ("locals", super::LOCALS_QUERY),
            ("folds", super::FOLDS_QUERY),
            ("indents", super::INDENTS_QUERY),
            ("textobjects", super::TEXTOBJECTS_QUERY),
        ] {
            if let Err(e) = tree_sitter::Query::new(&language, query) {
                panic!("{name}.scm: {e}");
            }
        }
    }
}

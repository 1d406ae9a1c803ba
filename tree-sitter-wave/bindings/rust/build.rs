//! Compiles the generated C parser (committed in `src/`, so no tree-sitter CLI is needed).

fn main() {
    let src_dir = std::path::Path::new("src");
    let mut c_config = cc::Build::new();
    c_config.std("c11").include(src_dir);
    #[cfg(target_env = "msvc")]
    c_config.flag("-utf-8");
    // The generated parser is large and warns about unused parameters; optimise it even in
    // debug builds so that editor-facing parsing stays fast.
    c_config.opt_level(2).warnings(false);
    let parser_path = src_dir.join("parser.c");
    c_config.file(&parser_path);
    println!("cargo:rerun-if-changed={}", parser_path.to_str().unwrap_or("src/parser.c"));
    c_config.compile("tree-sitter-wave");
}

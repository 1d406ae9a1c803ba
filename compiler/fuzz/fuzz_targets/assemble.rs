//! Any text: the assembler must not panic, spans must lie inside the text, the line fast
//! path must agree with tree-sitter on every file tree-sitter parses without a syntax error
//! and whose block keywords balance (on others it parses the lines it cannot read in
//! tree-sitter windows: see `compiler/asm/src/syntax/fast.rs`), a file whose block keywords do not
//! balance never assembles, and whatever assembles cleanly must survive disassembly,
//! reassembly and formatting unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let a = wave_asm::assemble(&text, "fuzz.wave");
    let tree = wave_asm::syntax::parse_tree(&text);
    let parsed = wave_asm::syntax::parse(&text);
    if wave_asm::syntax::parse_is_tree_sitters(&text) {
        if tree.diagnostics.is_empty() && parsed != tree {
            // The fast path answered differently from tree-sitter.
            panic!("fast path disagrees with tree-sitter on {text:?}");
        }
    } else {
        assert!(a.has_errors(), "unbalanced blocks assembled: {text:?}");
    }
    for s in &parsed.stmts {
        assert!(s.span.start <= s.span.end && s.span.end <= text.len(), "{s:?}");
    }
    for d in &a.diagnostics {
        assert!(d.span.start <= d.span.end && d.span.end <= text.len(), "{d:?}");
    }
    if a.has_errors() {
        return;
    }
    let listing = wave_asm::disassemble(&a.module);
    let b = wave_asm::assemble(&listing, "listing.wave");
    assert!(!b.has_errors(), "listing does not reassemble:\n{listing}\n{:?}", b.diagnostics);
    assert_eq!(a.module.code, b.module.code, "{listing}");
    assert_eq!(a.module.kernels, b.module.kernels);
    let formatted = wave_asm::format(&text).expect("clean input formats");
    assert_eq!(wave_asm::format(&formatted).as_deref(), Ok(formatted.as_str()), "not idempotent");
    assert_eq!(wave_asm::assemble(&formatted, "f.wave").module.code, a.module.code);
});

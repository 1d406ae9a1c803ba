//! Every editor feature of `wave_ide` on arbitrary text at arbitrary offsets: no panic, no hang.

#![no_main]

use libfuzzer_sys::fuzz_target;
use wave_db::{Database, Settings, SourceFile};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let db = Database::default();
    let file = SourceFile::new(&db, "fuzz.wave".into(), text.to_owned(), 1);
    let settings = Settings::new(&db, "nvidia".into(), "ptx".into(), 0, true);
    let _ = wave_ide::diagnostics(&db, file);
    let _ = wave_ide::file_tokens(&db, file);
    let _ = wave_ide::inlay_hints(&db, file, settings);
    let _ = wave_ide::code_lenses(&db, file, None, settings, false);
    let _ = wave_ide::symbols(&db, file);
    let _ = wave_ide::folding_ranges(&db, file);
    let _ = wave_ide::format(&db, file);
    let _ = wave_ide::code_actions(&db, file, 0..text.len());
    let _ = wave_ide::preview_form(&db, file, None, None, "ptx");
    // A few offsets from the text's own bytes (char boundaries or not).
    let len = text.len();
    for seed in data.iter().take(8) {
        let offset = (usize::from(*seed) * 131) % (len + 2);
        let _ = wave_ide::hover(&db, file, offset);
        let _ = wave_ide::completions(&db, file, offset);
        let _ = wave_ide::signature_help(&db, file, offset);
        let _ = wave_ide::definition(&db, file, offset);
        let _ = wave_ide::references(&db, file, offset);
        let _ = wave_ide::rename(&db, file, offset, "renamed");
        let _ = wave_ide::document_highlights(&db, file, offset);
        let _ = wave_ide::selection_ranges(&db, file, offset);
        let _ = wave_ide::on_type_indent(&db, file, offset, "\n");
        let _ = wave_ide::on_type_indent(&db, file, offset, "f");
        let _ = wave_ide::code_actions(&db, file, offset..offset.saturating_add(3));
    }
});

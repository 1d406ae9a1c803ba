//! Fixture tests: `$0` marks the cursor.

use wave_db::{Database, SourceFile};

use crate::{
    CompletionKind, SymbolKind, completions, definition, folding_ranges, format, hover,
    inlay_hints, references, rename, symbols,
};

/// The hover at `$0` in `fixture`, and the text it covers.
fn hover_at(fixture: &str) -> Option<(String, String)> {
    let offset = fixture.find("$0").expect("a $0 cursor");
    let text = fixture.replace("$0", "");
    let db = Database::default();
    let file = SourceFile::new(&db, "test.wave".into(), text.clone(), 1);
    hover(&db, file, offset).map(|h| (text[h.range].to_string(), h.markdown))
}

#[test]
fn hover_on_an_instruction_shows_its_encoding_and_vendor_forms() {
    let (covered, md) = hover_at(
        ".kernel k\n.param out: ptr\n    mov_imm r2, 7\n    ia$0dd r3, r2, 5\n    device_store.u32 out, r3\n.end\n",
    )
    .expect("a hover");
    assert_eq!(covered, "iadd r3, r2, 5");
    assert!(md.contains("```wave\niadd r3, r2, 5\n```"), "{md}");
    assert!(md.contains("**iadd** — Integer arithmetic"), "{md}");
    assert!(md.contains("base format with an extension word (80 bits)"), "{md}");
    assert!(md.contains("| rd | 39:32 | 3 |") && md.contains("| rs1 | 31:24 | 2 |"), "{md}");
    assert!(md.contains("| extension word | 79:48 | 0x00000005 |"), "{md}");
    assert!(md.contains("| `iadd` | `add.s32` |"), "{md}");
    // The bytes are those of the instruction: little-endian base word, then the extension.
    assert!(
        md.contains("Encoding, base format with an extension word (80 bits): `01 00 00 02 03 00 05 00 00 00`"),
        "{md}"
    );
}

#[test]
fn hover_finds_the_instruction_in_the_second_kernel() {
    let (covered, md) = hover_at(
        ".kernel a\n    halt\n.end\n\n.kernel b\n.param out: ptr\n    wave_reduce.add r2, r0\n    @p1 device_stor$0e.u32 out, r2\n.end\n",
    )
    .expect("a hover");
    assert_eq!(covered, "@p1 device_store.u32 out, r2");
    assert!(md.contains("| predicate | 4:3 | 1 |"), "{md}");
    assert!(md.contains("| flags | 1:0 | 2 |"), "the guard flag: {md}");
}

#[test]
fn no_hover_outside_instructions_or_in_broken_kernels() {
    assert!(hover_at("; comment$0\n.kernel k\n    halt\n.end\n").is_none());
    assert!(
        hover_at(".kernel k\n    ha$0lt\n    iadd r1\n.end\n").is_none(),
        "the kernel has errors"
    );
    assert!(hover_at(".kernel k\n.param o$0ut: ptr\n    halt\n.end\n").is_none(), "a directive");
}

#[test]
fn an_offset_inside_a_character_gives_no_hover_and_no_panic() {
    let text = ".kernel k\n    halt ; é\n.end\n";
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.into(), 1);
    let inside = text.find('é').expect("é") + 1;
    assert!(hover(&db, file, inside).is_none());
    for offset in 0..=text.len() + 3 {
        let _ = hover(&db, file, offset);
    }
}

const TWO: &str = ".kernel a\n.param out: ptr\n    mov r1, sr_lane_id\n    icmp.lt p0, r1, 4\n    if p0\n        call f\n    else\n        loop\n            break p0\n        endloop\n    endif\n    halt\nf:\n    return\n.end\n\n.kernel b\n    halt\n.end\n";

#[test]
fn symbols_are_kernels_with_their_labels() {
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), TWO.into(), 1);
    let s = symbols(&db, file);
    assert_eq!(s.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(s[0].kind, SymbolKind::Kernel);
    assert_eq!(&TWO[s[0].selection.clone()], "a");
    assert_eq!(s[0].children.len(), 1);
    assert_eq!(&TWO[s[0].children[0].selection.clone()], "f");
    assert!(TWO[s[0].range.clone()].ends_with(".end\n"));
}

#[test]
fn folding_covers_kernels_and_blocks() {
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), TWO.into(), 1);
    let folds: Vec<&str> = folding_ranges(&db, file)
        .iter()
        .map(|r| TWO[r.clone()].lines().next().unwrap_or(""))
        .collect();
    assert_eq!(folds, [".kernel a", "    if p0", "    else", "        loop", ".kernel b"]);
}

#[test]
fn format_is_wave_fmt_and_hints_show_occupancy() {
    let mut db = Database::default();
    let messy = ".kernel k\n.param out: ptr\nIADD r1, r0, 1\n.end\n";
    let file = SourceFile::new(&db, "t.wave".into(), messy.into(), 1);
    let formatted = format(&db, file).expect("changes");
    assert_eq!(Some(formatted.clone()), wave_asm::format(messy).ok());
    use salsa::Setter;
    file.set_text(&mut db).to(formatted);
    assert_eq!(format(&db, file), None, "formatted text is left alone");
    let settings = wave_db::Settings::new(&db, "nvidia".into(), "ptx".into());
    let hints = inlay_hints(&db, file, settings);
    assert_eq!(hints.len(), 1);
    assert_eq!(
        hints[0].0,
        file.text(&db).find('\n').expect("line"),
        "at the end of the .kernel line"
    );
    assert!(hints[0].1.starts_with("R=2 · "), "{:?}", hints);
}

fn complete(fixture: &str) -> Vec<(String, CompletionKind)> {
    let offset = fixture.find("$0").expect("a $0 cursor");
    let text = fixture.replace("$0", "");
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text, 1);
    completions(&db, file, offset).into_iter().map(|c| (c.label, c.kind)).collect()
}

#[test]
fn completion_depends_on_the_position() {
    let start = complete(".kernel k\n.param out: ptr\n    ia$0\n.end\n");
    assert!(
        start.contains(&("iadd".into(), CompletionKind::Mnemonic)),
        "mnemonics at a statement's start"
    );
    assert!(start.iter().any(|(l, k)| l == "if … endif" && *k == CompletionKind::Snippet));
    let directive = complete(".kernel k\n.par$0\n.end\n");
    assert!(directive.contains(&(".param".into(), CompletionKind::Directive)));
    assert!(!directive.iter().any(|(_, k)| *k == CompletionKind::Mnemonic));
    let operand = complete(
        ".kernel k\n.param out: ptr\n.registers 4\n    iadd r1, $0\n    halt\nf:\n    return\n.end\n",
    );
    assert!(operand.contains(&("out".into(), CompletionKind::Parameter)));
    assert!(operand.contains(&("r3".into(), CompletionKind::Register)));
    assert!(!operand.iter().any(|(l, _)| l == "r4"), "registers stop at R = 4: {operand:?}");
    assert!(operand.contains(&("sr_lane_id".into(), CompletionKind::Special)));
    assert!(operand.contains(&("f".into(), CompletionKind::Label)));
    let guarded = complete(".kernel k\n    @p0 dev$0\n.end\n");
    assert!(
        guarded.contains(&("device_load".into(), CompletionKind::Mnemonic))
            || guarded.iter().any(|(l, _)| l.starts_with("device_"))
    );
    assert!(complete(".kernel k\n    halt ; comm$0\n.end\n").is_empty(), "nothing in a comment");
}

#[test]
fn definition_and_references_of_labels_and_parameters() {
    let fixture = ".kernel k\n.param out: ptr\n    call fa$0rt\n    device_store.u32 out, r1\n    halt\nfart:\n    iadd r1, out, 1 ; out\n    return\n.end\n";
    let offset = fixture.find("$0").expect("cursor");
    let text = fixture.replace("$0", "");
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.clone(), 1);
    let def = definition(&db, file, offset).expect("the label");
    assert_eq!(&text[def.clone()], "fart");
    assert!(text[..def.start].ends_with("halt\n"));
    assert_eq!(references(&db, file, offset).len(), 2, "the call and the label");
    let out = text.find("out, r1").expect("use of out");
    let def = definition(&db, file, out + 1).expect("the parameter");
    assert!(text[..def.start].ends_with(".param "));
    let refs = references(&db, file, out);
    assert_eq!(refs.len(), 3, "the .param, the store and the iadd, not the comment: {refs:?}");
    assert!(definition(&db, file, text.find("halt").expect("halt")).is_none());
}

#[test]
fn rename_changes_every_use_and_refuses_bad_names() {
    let text = ".kernel k\n.param out: ptr\n    device_store.u32 out, r1\n    call f\n    halt\nf:\n    return\n.end\n";
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.into(), 1);
    let at = text.find("out,").expect("out");
    let edits = rename(&db, file, at, "dst").expect("renames");
    assert_eq!(edits.len(), 2);
    let mut renamed = text.to_string();
    for (r, t) in edits.iter().rev() {
        renamed.replace_range(r.clone(), t);
    }
    assert!(
        renamed.contains(".param dst: ptr") && renamed.contains("device_store.u32 dst, r1"),
        "{renamed}"
    );
    assert!(!wave_asm::assemble(&renamed, "t.wave").has_errors(), "still assembles");
    assert!(rename(&db, file, at, "iadd").is_err());
    assert!(rename(&db, file, at, "r7").is_err());
    assert!(rename(&db, file, at, "9x").is_err());
    assert!(rename(&db, file, text.find("halt").expect("halt"), "x").is_err());
    assert_eq!(rename(&db, file, text.find("f\n").expect("call f"), "g").expect("label").len(), 2);
}

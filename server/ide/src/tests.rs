//! Fixture tests: `$0` marks the cursor.

use wave_db::{Database, SourceFile};

use crate::hover;

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

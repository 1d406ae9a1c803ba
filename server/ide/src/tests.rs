//! Fixture tests: `$0` marks the cursor.

use wave_db::{Database, SourceFile};

use crate::{
    ALIAS, Access, ActionKind, CompletionKind, SymbolKind, Tag, UNREACHABLE, UNUSED_LABEL,
    UNUSED_PARAMETER, code_actions, completions, definition, diagnostics, document_highlights,
    folding_ranges, format, hover, inlay_hints, on_type_indent, references, rename,
    selection_ranges, signature_help, symbols,
};

/// Each `tests/hover/NAME.EXT.hover` holds a fixture (a `.EXT` file with `$0` at the cursor),
/// a line `==== hover`, and the hover there as the user sees it: the text it covers and the
/// whole Markdown. `UPDATE_EXPECT=1` rewrites what follows the line; review the diff.
#[test]
fn hovers_are_the_whole_text_of_their_golden_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hover");
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/hover")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "hover"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 14, "{} golden files", paths.len());
    let mut stale = Vec::new();
    for path in paths {
        let golden = std::fs::read_to_string(&path).expect("a golden file");
        let (fixture, expected) = golden.split_once("==== hover\n").expect("a `==== hover` line");
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("a name");
        let offset = fixture.find("$0").expect("a $0 cursor");
        let text = fixture.replace("$0", "");
        let db = Database::default();
        let file = SourceFile::new(&db, format!("/w/{stem}"), text.clone(), 1);
        let got = match hover(&db, file, offset) {
            Some(h) => format!("covers: {}\n\n{}\n", &text[h.range], h.markdown.trim_end()),
            None => "no hover\n".to_owned(),
        };
        if got != expected {
            if update {
                std::fs::write(&path, format!("{fixture}==== hover\n{got}")).expect("written");
            } else {
                stale.push(format!(
                    "{}:\n--- expected\n{expected}--- actual\n{got}",
                    path.display()
                ));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "run with UPDATE_EXPECT=1, then review the diff:\n{}",
        stale.join("\n")
    );
}

/// The code a hover shows for an instruction is the backends' code: for `frsqrt` and
/// `ftransc.sin` in the conformance cases, each target's lines in the hover are lines of that
/// case's golden translation (`backends/tests/golden/`), in order. (A summary table once said
/// `rsqrt.approx.f32` and `sin.approx.f32` here, which the PTX backend never wrote.)
#[test]
fn hover_code_is_what_the_backends_write() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (case, mnemonic) in
        [("float_frsqrt", "frsqrt r20"), ("float_ftransc_sin_cos", "ftransc.sin")]
    {
        let toml = std::fs::read_to_string(
            root.join(format!("conformance/cases/instructions/{case}.toml")),
        )
        .expect("the case");
        let text = toml.split("\"\"\"").nth(1).expect("its source").trim_start_matches('\n');
        let db = Database::default();
        let file = SourceFile::new(&db, "/w/case.wave".into(), text.to_owned(), 1);
        let at = text.find(mnemonic).expect("the instruction") + 1;
        let md = hover(&db, file, at).expect("a hover").markdown;
        for (target, ext, fence) in [
            ("ptx", "ptx", "ptx"),
            ("hip", "hip", "cpp"),
            ("sycl", "cpp", "cpp"),
            ("metal", "metal", "cpp"),
        ] {
            let golden = std::fs::read_to_string(
                root.join(format!("backends/tests/golden/{target}/instructions/{case}.{ext}")),
            )
            .expect("the golden translation");
            let heading = match target {
                "ptx" => "**NVIDIA (PTX)**",
                "hip" => "**AMD (HIP)**",
                "sycl" => "**Intel (SYCL)**",
                _ => "**Apple (Metal)**",
            };
            let block = md.split(heading).nth(1).expect("the target's section");
            let code = block
                .split(&format!("```{fence}\n"))
                .nth(1)
                .and_then(|b| b.split("```").next())
                .expect("a code block");
            let lines: Vec<&str> = code.lines().collect();
            assert!(!lines.is_empty(), "{target}: {md}");
            let golden_lines: Vec<&str> = golden.lines().map(str::trim).collect();
            let first = golden_lines.iter().position(|l| *l == lines[0]).unwrap_or_else(|| {
                panic!("{target} {case}: `{}` is not in the golden translation", lines[0])
            });
            assert_eq!(
                &golden_lines[first..first + lines.len()],
                lines.as_slice(),
                "{target} {case}"
            );
        }
        assert!(!md.contains("rsqrt.approx.f32") && !md.contains("sin.approx.f32"), "{md}");
    }
}

/// The hover at `$0` in `fixture`, and the text it covers.
fn hover_at(fixture: &str) -> Option<(String, String)> {
    let offset = fixture.find("$0").expect("a $0 cursor");
    let text = fixture.replace("$0", "");
    let db = Database::default();
    let file = SourceFile::new(&db, "test.wave".into(), text.clone(), 1);
    hover(&db, file, offset).map(|h| (text[h.range].to_string(), h.markdown))
}

#[test]
fn no_hover_outside_instructions_or_in_broken_kernels() {
    assert!(hover_at("; comment$0\n.kernel k\n    halt\n.end\n").is_none());
    assert!(
        hover_at(".kernel k\n    ha$0lt\n    iadd r1\n.end\n").is_none(),
        "the kernel has errors"
    );
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
    let settings = wave_db::Settings::new(&db, "nvidia".into(), "ptx".into(), 0, false);
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

/// A database with `fixture` (its `$0` removed) as a file, and the cursor's offset.
fn at(fixture: &str) -> (Database, SourceFile, usize, String) {
    let offset = fixture.find("$0").unwrap_or(0);
    let text = fixture.replace("$0", "");
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.clone(), 1);
    (db, file, offset, text)
}

#[test]
fn signature_help_follows_the_operand_being_typed() {
    let (db, file, offset, _) = at(".kernel k\n    @p0 device_store.u32 [r1 + 4], $0\n.end\n");
    let sig = signature_help(&db, file, offset).expect("a signature");
    assert_eq!(sig.label, "device_store.{u8|u16|u32|u64|u128} [rs1 + offset], rs2");
    assert_eq!(sig.active, 1, "the comma inside brackets does not count");
    assert_eq!(&sig.label[sig.parameters[1].clone()], "rs2");
    // The form is the ISA reference's, modifier list included.
    let (db, file, offset, _) = at(".kernel k\n    icmp.lt p0, $0\n.end\n");
    let sig = signature_help(&db, file, offset).expect("a signature");
    let icmp = wave_isa::Opcode::Icmp.info();
    assert_eq!(sig.label, wave_asm::form_text(icmp));
    assert!(sig.label.starts_with("icmp.{eq|ne|"), "{}", sig.label);
    assert_eq!(&sig.label[sig.parameters[0].clone()], "pd");
    assert_eq!((sig.active, &sig.label[sig.parameters[1].clone()]), (1, "rs1"));
    let (db, file, offset, _) = at(".kernel k\n    nosuch r1, $0\n.end\n");
    assert!(signature_help(&db, file, offset).is_none());
}

#[test]
fn typing_indents_blocks_like_wave_fmt() {
    let apply = |text: &str, edits: Vec<(std::ops::Range<usize>, String)>| {
        let mut t = text.to_string();
        for (r, s) in edits.into_iter().rev() {
            t.replace_range(r, &s);
        }
        t
    };
    // Enter after `if p0`: the new line goes one level deeper.
    let (db, file, offset, text) = at(".kernel k\n    if p0\n$0\n.end\n");
    let t = apply(&text, on_type_indent(&db, file, offset, "\n"));
    assert_eq!(t, ".kernel k\n    if p0\n        \n.end\n");
    // Finishing `endif` moves it back out.
    let (db, file, offset, text) = at(".kernel k\n    if p0\n        nop\n        endif$0\n.end\n");
    let t = apply(&text, on_type_indent(&db, file, offset, "f"));
    assert_eq!(t, ".kernel k\n    if p0\n        nop\n    endif\n.end\n");
    // Typing an `f` elsewhere changes nothing.
    let (db, file, offset, _) = at(".kernel k\n    if p0\n        iadd r1, r1, 0xf$0\n.end\n");
    assert!(on_type_indent(&db, file, offset, "f").is_empty());
}

#[test]
fn selection_grows_from_token_to_block_to_kernel() {
    let (db, file, offset, text) = at(
        ".kernel k\n    loop\n        icmp.gt p0, r$02, 10\n        break p0\n    endloop\n.end\n",
    );
    let ranges: Vec<&str> =
        selection_ranges(&db, file, offset).into_iter().map(|r| &text[r]).collect();
    assert_eq!(ranges[0], "r2");
    assert_eq!(ranges[1], "icmp.gt p0, r2, 10");
    assert!(ranges[2].starts_with("loop") && ranges[2].ends_with("endloop"), "{ranges:?}");
    assert!(ranges[3].starts_with(".kernel k") && ranges[3].ends_with(".end\n"));
    assert_eq!(ranges.len(), 4, "the kernel is the whole file here: {ranges:?}");
}

#[test]
fn highlights_distinguish_reads_and_writes() {
    let (db, file, offset, text) =
        at(".kernel k\n    mov_imm r$01, 1\n    iadd r1, r1, r1\n    mov_imm r10, 1\n.end\n");
    let hl = document_highlights(&db, file, offset);
    let writes = hl.iter().filter(|(_, a)| *a == Access::Write).count();
    let reads = hl.iter().filter(|(_, a)| *a == Access::Read).count();
    assert_eq!((writes, reads), (2, 2), "{hl:?}");
    assert!(hl.iter().all(|(r, _)| &text[r.clone()] == "r1"), "r10 is another register");
}

#[test]
fn hints_are_tagged_and_fixed() {
    let text = ".kernel k\n.param out: ptr\n.param unused: u32\n    device_load_u32 r2, out\n    shl r2, r2, 1\n    device_store.u32 out, r2\n    halt\n    nop\n    nop\nf:\n    return\n.end\n";
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.into(), 1);
    let d = diagnostics(&db, file);
    let by = |code: &str| d.iter().filter(|x| x.diagnostic.code == code).collect::<Vec<_>>();
    assert_eq!(&text[by(UNUSED_PARAMETER)[0].diagnostic.span.clone()], "unused");
    assert_eq!(&text[by(UNUSED_LABEL)[0].diagnostic.span.clone()], "f");
    assert_eq!(&text[by(UNREACHABLE)[0].diagnostic.span.clone()], "nop\n    nop");
    let aliases = by(ALIAS);
    assert_eq!(aliases.len(), 2, "{d:?}");
    assert_eq!(aliases[0].tags, vec![Tag::Deprecated], "the underscore dialect");
    assert!(aliases[1].tags.is_empty(), "`shl` is a listed alias, not deprecated");
    assert!(d.iter().all(|x| x.hint));
    // The quick fixes turn aliases into canonical forms that assemble to the same bytes.
    let actions = code_actions(&db, file, 0..text.len());
    let all = actions.iter().find(|a| a.kind == ActionKind::SourceFixAll).expect("fix all");
    let mut fixed = text.to_string();
    for (r, s) in all.edits.iter().rev() {
        fixed.replace_range(r.clone(), s);
    }
    assert!(
        fixed.contains("device_load.u32 r2, out") && fixed.contains("shift.shl r2, r2, 1"),
        "{fixed}"
    );
    let before = wave_asm::assemble(text, "a").module.code;
    assert_eq!(wave_asm::assemble(&fixed, "b").module.code, before);
}

#[test]
fn quick_fixes_close_blocks_and_raise_registers() {
    let text = ".kernel k\n.registers 4\n    if p0\n        iadd r6, r1, r1\n.end\n";
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.into(), 1);
    let actions = code_actions(&db, file, 0..text.len());
    let titles: Vec<&str> = actions.iter().map(|a| a.title.as_str()).collect();
    assert!(titles.contains(&"Insert the missing `endif`"), "{titles:?}");
    assert!(titles.contains(&"Raise `.registers` to 7"), "{titles:?}");
    let mut fixed = text.to_string();
    let mut edits: Vec<_> = actions
        .iter()
        .filter(|a| a.kind == ActionKind::QuickFix)
        .flat_map(|a| a.edits.clone())
        .collect();
    edits.sort_by_key(|(r, _)| r.start);
    for (r, s) in edits.iter().rev() {
        fixed.replace_range(r.clone(), s);
    }
    assert_eq!(
        fixed,
        ".kernel k\n.registers 7\n    if p0\n        iadd r6, r1, r1\n    endif\n.end\n"
    );
    assert!(!wave_asm::assemble(&fixed, "t").has_errors());
    // Every did-you-mean is a quick fix.
    let (db, file, _, text) = at(".kernel k\n    mov r1, sr_lane_di\n.end\n");
    let fix =
        code_actions(&db, file, 0..text.len()).into_iter().find(|a| a.preferred).expect("a fix");
    assert_eq!(fix.edits[0].1, "sr_lane_id");
}

#[test]
fn suffixes_complete_after_a_dot() {
    let items = complete(".kernel k\n    device_load.u32.$0\n.end\n");
    let labels: Vec<&str> = items.iter().map(|(l, _)| l.as_str()).collect();
    assert!(labels.contains(&"streaming") && !labels.contains(&"u32"), "{labels:?}");
    assert!(items.iter().all(|(_, k)| *k == CompletionKind::Suffix));
}

#[test]
fn navigation_next_to_a_multibyte_character_does_not_panic() {
    // Found by the `ide` fuzz target: a word boundary just after `ғ` (two bytes).
    let text = ".kernel k\n.param out: ptr\n    iadd r1, out, 1 ; ғout\n.end\n";
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.into(), 1);
    let after = text.find('ғ').expect("ғ") + 'ғ'.len_utf8();
    for offset in after..after + 4 {
        let _ = definition(&db, file, offset);
        let _ = references(&db, file, offset);
        let _ = rename(&db, file, offset, "x");
    }
    assert_eq!(definition(&db, file, after + 1), None, "`ғout` is no parameter name");
}

#[test]
fn kernels_can_be_renamed_but_not_onto_a_name_in_use() {
    let text = ".kernel a\n.param out: ptr\n    halt\n.end\n.kernel b\n    halt\n.end\n";
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.into(), 1);
    let edits = rename(&db, file, 8, "main").expect("renames the kernel");
    assert_eq!(edits, vec![(8..9, "main".to_string())]);
    assert!(rename(&db, file, 8, "b").is_err(), "another kernel's name");
    assert!(rename(&db, file, 8, "out").is_err(), "a parameter of the kernel");
}

const ADD: &str = "; wave-run: --grid 2 --workgroup 8 --arg out=64 --arg n=5 --dump 64:u32:16\n.kernel add\n.param out: ptr\n.param n: u32\n    mov r2, sr_thread_id_x\n    mov r3, sr_workgroup_id_x\n    shift.shl r4, r3, 3\n    iadd r2, r2, r4\n    iadd r5, r2, n\n    shift.shl r6, r2, 2\n    iadd r6, out, r6\n    device_store.u32 [r6], r5\n.end\n";

fn settings(db: &Database) -> wave_db::Settings {
    wave_db::Settings::new(db, "nvidia".into(), "ptx".into(), 0, false)
}

#[test]
fn a_wave_run_comment_gives_the_dispatch_and_the_run_shows_memory() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), ADD.into(), 1);
    let plan = crate::plan_run(&db, file, "add", None, settings(&db)).expect("a plan");
    assert_eq!(plan.from, "; wave-run:");
    assert_eq!(plan.dispatch.grid, [2, 1, 1]);
    let progress = Arc::new(crate::Progress::default());
    let r = crate::execute(plan, &Arc::new(AtomicBool::new(false)), &progress);
    assert!(r.ok && r.trap.is_none(), "{r:?}");
    let want: Vec<String> = (5..21).map(|v: u32| v.to_string()).collect();
    assert_eq!(r.dumps[0].2, want, "thread t stores t + n");
    assert!(progress.steps.load(std::sync::atomic::Ordering::Relaxed) > 0);
    assert_eq!(progress.workgroups.load(std::sync::atomic::Ordering::Relaxed), 2);
    // The profile has every instruction with its line and lane share; the timeline its steps.
    assert_eq!(r.profile.len(), 8, "{:?}", r.profile);
    let store = r.profile.iter().find(|p| p.1.starts_with("device_store")).expect("the store");
    assert_eq!(
        (store.0, store.2, store.3),
        (Some(12), 2, 0.25),
        "line 12, two waves, 8 of 32 lanes"
    );
    assert_eq!(r.timeline.len(), 16, "8 instructions, 2 workgroups");
    assert_eq!(r.profile[0].0, Some(5), "{:?}", r.profile);
    // A bad option is an error that names it, in the lens title too.
    let bad = ADD.replace("--grid 2", "--grid two");
    let file = SourceFile::new(&db, "t.wave".into(), bad, 1);
    let e = crate::plan_run(&db, file, "add", None, settings(&db)).expect_err("bad grid");
    assert!(e.contains("--grid: `two` is not a positive integer"), "{e}");
    let lenses = crate::code_lenses(&db, file, None, settings(&db), true);
    assert!(lenses[0].title.contains("dispatch error"), "{:?}", lenses[0]);
    // A dispatch that does not resolve runs nowhere: no GPU lens even with a GPU.
    assert!(!lenses.iter().any(|l| l.title.contains("GPU")), "{lenses:?}");
}

#[test]
fn gpu_lenses_only_where_a_gpu_is_present() {
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), ADD.into(), 1);
    let titles = |gpu: bool| -> Vec<(String, Option<crate::RunDevice>)> {
        crate::code_lenses(&db, file, None, settings(&db), gpu)
            .into_iter()
            .map(|l| {
                let device = match l.command {
                    crate::LensCommand::Run { device, .. } => Some(device),
                    _ => None,
                };
                (l.title, device)
            })
            .collect()
    };
    let without = titles(false);
    assert!(!without.iter().any(|(t, _)| t.contains("GPU")), "{without:?}");
    let with = titles(true);
    let runs: Vec<&(String, Option<crate::RunDevice>)> =
        with.iter().filter(|(_, d)| d.is_some()).collect();
    assert_eq!(runs.len(), 3, "{with:?}");
    assert!(runs[0].0.starts_with("▶ Run in emulator"));
    assert_eq!(runs[1], &("▶ Run on GPU".to_string(), Some(crate::RunDevice::Gpu)));
    assert_eq!(
        runs[2],
        &("Compare GPU with emulator".to_string(), Some(crate::RunDevice::Compare))
    );
    assert_eq!(with.len(), without.len() + 2);
    for d in [crate::RunDevice::Emulator, crate::RunDevice::Gpu, crate::RunDevice::Compare] {
        assert_eq!(crate::RunDevice::from_name(d.name()), Some(d));
    }
}

#[test]
fn a_comparison_names_each_buffer_and_its_first_differences() {
    let dump =
        wave_conformance::options::Dump { offset: 8, elem: wave_conformance::Elem::U32, count: 6 };
    let mut emulator = vec![0u8; 64];
    for i in 0..6u32 {
        emulator[8 + 4 * i as usize..12 + 4 * i as usize].copy_from_slice(&(i * 10).to_le_bytes());
    }
    let same = crate::agreement(&dump, &emulator, &emulator);
    assert_eq!((same.differing, same.differences.len(), same.count), (0, 0, 6));
    let mut gpu = emulator.clone();
    for i in [1usize, 2, 3, 4, 5] {
        gpu[8 + 4 * i] ^= 1;
    }
    let differs = crate::agreement(&dump, &emulator, &gpu);
    assert_eq!(differs.differing, 5);
    assert_eq!(differs.differences.len(), crate::DIFFERENCES_SHOWN);
    assert_eq!(differs.differences[0], (1, "10".into(), "11".into()));
    let r = crate::RunResult {
        kernel: "k".into(),
        device: "compare".into(),
        comparison: vec![same, differs],
        ..Default::default()
    };
    let text = r.to_text();
    assert!(text.contains("GPU and emulator agree: 8 u32[6]"), "{text}");
    assert!(
        text.contains(
            "GPU and emulator differ: 8 u32[6], 5 elements; first: [1] emulator 10, GPU 11;"
        ),
        "{text}"
    );
}

#[test]
fn a_case_file_next_to_the_source_gives_dispatch_and_expectations() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let dir = std::env::temp_dir().join(format!("wave-ide-case-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let source = ADD.lines().skip(1).collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(dir.join("add.wave"), &source).expect("source");
    std::fs::write(
        dir.join("add.toml"),
        "name = \"add\"\nfile = \"add.wave\"\n[dispatch]\ngrid = [1, 1, 1]\nworkgroup = [4, 1, 1]\n[args]\nout = 0\nn = 100\n[[expect]]\noffset = 0\nu32 = [100, 101, 102, 7]\n",
    )
    .expect("case");
    let db = Database::default();
    let file = SourceFile::new(&db, "add.wave".into(), source, 1);
    let path = dir.join("add.wave");
    let plan = crate::plan_run(&db, file, "add", Some(&path), settings(&db)).expect("a plan");
    assert_eq!(plan.from, "add.toml");
    let lenses = crate::code_lenses(&db, file, Some(&path), settings(&db), false);
    let debug = lenses.iter().find_map(|l| match &l.command {
        crate::LensCommand::Debug { launch, .. } => launch.clone(),
        _ => None,
    });
    let launch = debug.expect("a Debug lens with a launch");
    assert_eq!(launch.program.as_deref(), Some(dir.join("add.toml").as_path()));
    assert!(launch.args.contains(&("n".to_owned(), 100)), "{launch:?}");
    let r = crate::execute(plan, &Arc::new(AtomicBool::new(false)), &Arc::default());
    assert!(!r.ok, "the last value differs from the case");
    assert_eq!(r.dumps[0].2, ["100", "101", "102", "103"]);
    assert!(r.mismatches[0].contains("expected 7, got 103"), "{:?}", r.mismatches);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn runs_stop_on_cancel_and_on_the_budget_and_traps_have_file_lines() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let forever = "; a comment\n\n.kernel spin\n    mov_imm r1, 0\n    loop\n        iadd r1, r1, 1\n    endloop\n.end\n";
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), forever.into(), 1);
    let plan = crate::plan_run(&db, file, "spin", None, settings(&db)).expect("a plan");
    let cancel = Arc::new(AtomicBool::new(true));
    let r = crate::execute(plan.clone(), &cancel, &Arc::default());
    assert!(r.cancelled && !r.ok);
    let mut small = plan;
    small.dispatch.max_steps = 10_000;
    let r = crate::execute(small, &Arc::new(AtomicBool::new(false)), &Arc::default());
    let trap = r.trap.expect("the budget traps");
    assert!(trap.message.contains("instruction budget exceeded"), "{}", trap.message);
    assert!(matches!(trap.line, Some(4..=7)), "a line of the loop in the file: {trap:?}");
}

#[test]
fn the_preview_maps_generated_lines_to_file_lines() {
    let db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), ADD.into(), 1);
    for target in wave_backends::Target::ALL {
        let p = crate::run::preview(&db, file, Some("add"), None, target).expect("translates");
        let store = ADD.lines().position(|l| l.contains("device_store")).expect("store") as u32 + 1;
        assert!(p.lines.contains(&Some(store)), "{target:?} maps a line to the store");
        assert_eq!(p.lines.len(), p.text.lines().count());
    }
    let broken = SourceFile::new(&db, "b.wave".into(), ".kernel k\n    iaddd r1\n.end\n".into(), 1);
    let e = crate::run::preview(&db, broken, None, None, wave_backends::Target::Ptx)
        .expect_err("errors");
    assert!(e.contains("E0101"), "{e}");
}

#[test]
fn live_register_hints_follow_values_through_blocks_and_loops() {
    use salsa::Setter;
    let text = ".kernel k\n.param out: ptr\n    mov r1, sr_lane_id\n    mov_imm r2, 0\n    loop\n        iadd r2, r2, r1\n        icmp.gt p0, r2, 10\n        break p0\n    endloop\n    device_store.u32 out, r2\n.end\n";
    let mut db = Database::default();
    let file = SourceFile::new(&db, "t.wave".into(), text.into(), 1);
    let settings = wave_db::Settings::new(&db, "nvidia".into(), "ptx".into(), 0, false);
    assert!(inlay_hints(&db, file, settings).iter().all(|(_, h)| !h.starts_with("live")));
    settings.set_live_registers(&mut db).to(true);
    let live: Vec<(&str, String)> = inlay_hints(&db, file, settings)
        .into_iter()
        .filter(|(_, h)| h.starts_with("live"))
        .map(|(at, h)| (text[..at].lines().last().unwrap_or("").trim(), h))
        .collect();
    let want = [
        ("mov r1, sr_lane_id", "live 2"), // out, r1
        ("mov_imm r2, 0", "live 3"),      // out, r1, r2
        ("loop", "live 3"),
        ("iadd r2, r2, r1", "live 3"),
        ("icmp.gt p0, r2, 10", "live 3"), // the loop goes on: r1 and r2 stay live
        ("break p0", "live 3"),
        ("endloop", "live 3"),
        ("device_store.u32 out, r2", "live 0"),
    ];
    let got: Vec<(&str, &str)> = live.iter().map(|(l, h)| (*l, h.as_str())).collect();
    assert_eq!(got, want);
}

/// A Rust file with one kernel among other code.
const RUST_FILE: &str = "use std::fmt;

fn unrelated() -> String { format!(\"{}\", 1) }

#[wave::kernel(workgroup = (64, 1, 1))]
fn scale(a: &[f32], out: &mut [f32], n: u32) {
    let i = wave::global_id(0);
    if i < n {
        out[i as usize] = a[i as usize] * 2.0;
    }
}
";

fn source_file(db: &Database, path: &str, text: &str) -> SourceFile {
    SourceFile::new(db, path.into(), text.to_owned(), 1)
}

#[test]
fn a_kernel_source_gets_its_kernels_diagnostics_only() {
    let db = Database::default();
    // A Python file without kernels, and code outside the kernels, are not ours.
    let plain = source_file(&db, "/w/tool.py", "import os\nprint(os.getcwd(\n");
    assert!(diagnostics(&db, plain).is_empty());
    assert!(symbols(&db, plain).is_empty());
    let ok = source_file(&db, "/w/scale.rs", RUST_FILE);
    assert!(diagnostics(&db, ok).is_empty(), "{:?}", diagnostics(&db, ok));
    let broken = RUST_FILE.replace("a[i as usize] * 2.0", "a[i as usize] * i");
    let broken = source_file(&db, "/w/scale.rs", &broken);
    let d = diagnostics(&db, broken);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].diagnostic.code, "E0401");
    assert!(d[0].diagnostic.message.contains("`*` between `f32` and `u32`"), "{d:?}");
    // Assembly features stay out of the way.
    assert!(completions(&db, ok, 10).is_empty());
    assert!(format(&db, ok).is_none());
    assert_eq!(symbols(&db, ok).iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["scale"]);
}

#[test]
fn no_hover_outside_a_kernel_in_a_kernel_source() {
    // What a hover inside a kernel shows is in the golden files (`tests/hover/*.rs.hover`).
    let db = Database::default();
    let file = source_file(&db, "/w/scale.rs", RUST_FILE);
    assert!(hover(&db, file, RUST_FILE.find("unrelated").expect("fn")).is_none());
}

#[test]
fn a_kernel_source_has_hints_lenses_and_previews_mapped_to_its_lines() {
    let db = Database::default();
    let settings = wave_db::Settings::new(&db, "nvidia".into(), "ptx".into(), 0, false);
    let file = source_file(&db, "/w/scale.rs", RUST_FILE);
    let hints = inlay_hints(&db, file, settings);
    assert_eq!(hints.len(), 1, "{hints:?}");
    assert!(hints[0].1.starts_with("R="), "{hints:?}");
    let kernel_line = RUST_FILE.find("fn scale").expect("the kernel");
    assert_eq!(hints[0].0, kernel_line + RUST_FILE[kernel_line..].find('\n').expect("eol"));
    let lenses = crate::code_lenses(&db, file, None, settings, false);
    let titles: Vec<&str> = lenses.iter().map(|l| l.title.as_str()).collect();
    assert!(titles[0].starts_with("▶ Run in emulator"), "{titles:?}");
    for t in ["Debug", "Show WAVE", "Show MIR", "Show PTX", "Show Metal"] {
        assert!(titles.contains(&t), "{t}: {titles:?}");
    }
    // The store is on line 9: the preview's store lines map there.
    for form in ["wave", "mir", "ptx"] {
        let (name, p) =
            crate::preview_form(&db, file, Some("scale"), None, form).expect("a preview");
        assert_eq!(name, form);
        let store = p
            .text
            .lines()
            .position(|l| {
                l.contains("device_store") || l.contains("store.device") || l.contains("st.global")
            })
            .unwrap_or_else(|| panic!("{form}: a store in\n{}", p.text));
        assert_eq!(p.lines[store], Some(9), "{form}:\n{}", p.text);
    }
    assert!(crate::preview_form(&db, file, Some("scale"), None, "llvm").is_err());
    // A run of the kernel source, with defaults (no case file): it completes.
    let plan = crate::plan_run(&db, file, "scale", None, settings).expect("a plan");
    let result = crate::execute(
        plan,
        &std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        &std::sync::Arc::default(),
    );
    assert!(result.trap.is_none(), "{:?}", result.trap);
}

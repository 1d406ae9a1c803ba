//! Assembler, disassembler and formatter tests.

use proptest::prelude::*;
use wave_isa::{Flow, OPCODES, Opcode, arbitrary_inst, write_inst};

use crate::*;

const SAMPLES: &[(&str, &str)] = &[
    ("vector_add.wave", include_str!("../tests/data/vector_add.wave")),
    ("everything.wave", include_str!("../tests/data/everything.wave")),
];

/// Assembles `source` and checks the diagnostics, one `CODE line:col message` per line.
#[track_caller]
fn check(source: &str, expected: &str) {
    let assembly = assemble(source, "test.wave");
    let mut actual = String::new();
    for d in &assembly.diagnostics {
        let line = source[..d.span.start].matches('\n').count() + 1;
        let col = d.span.start - source[..d.span.start].rfind('\n').map_or(0, |i| i + 1) + 1;
        actual.push_str(&format!("{} {line}:{col} {}\n", d.code, d.message));
    }
    assert_eq!(actual.trim(), expected.trim(), "\nsource:\n{source}");
}

fn kernel(body: &str) -> String {
    format!(".kernel k\n.param a: ptr\n{body}\n.end\n")
}

/// Comparable parts of a module: everything but the debug line table.
fn code_of(m: &wave_wbin::Module) -> (Vec<u8>, Vec<wave_wbin::Kernel>, Vec<wave_wbin::Symbol>) {
    (m.code.clone(), m.kernels.clone(), m.symbols.clone())
}

#[test]
fn samples_assemble_cleanly_and_round_trip_through_the_disassembler() {
    for (name, text) in SAMPLES {
        let a = assemble(text, name);
        let errors: Vec<_> = a.diagnostics.iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        let listing = disassemble(&a.module);
        let b = assemble(&listing, "listing.wave");
        assert!(!b.has_errors(), "{name} listing:\n{listing}\n{:#?}", b.diagnostics);
        assert_eq!(code_of(&a.module), code_of(&b.module), "{name}:\n{listing}");
        // And the listing is a fixed point.
        assert_eq!(disassemble(&b.module), listing);
        // The module survives the container.
        let bytes = wave_wbin::write(&a.module);
        assert_eq!(wave_wbin::read(&bytes).as_ref(), Ok(&a.module));
    }
}

#[test]
fn vector_add_encodes_what_the_spec_example_says() {
    let a = assemble(SAMPLES[0].1, "vector_add.wave");
    let k = &a.module.kernels[0];
    assert_eq!(k.name, "vector_add");
    assert_eq!(k.params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "n"]);
    assert_eq!(k.registers, 14);
    assert_eq!(k.predicates, 1);
    assert_eq!(k.workgroup_size, Some([64, 1, 1]));
    let listing = disassemble(&a.module);
    assert!(listing.contains("    mov_special r4, sr_workgroup_id_x\n"), "{listing}");
    assert!(listing.contains("    icmp.lt p0, r7, r3\n"), "{listing}");
    assert!(listing.contains("        device_load.u32 r10, r9\n"), "{listing}");
    // The line table maps each instruction to its line.
    let first = a.module.lines[0];
    assert_eq!((first.line, first.column), (8, 5));
}

#[test]
fn the_alias_dialect_assembles_to_canonical_instructions() {
    let pairs = [
        ("icmp_lt p0, r1, r2", "icmp.lt p0, r1, r2"),
        ("device_load_u32 r1, r2", "device_load.u32 r1, r2"),
        ("mov_sr r1, sr_lane_id", "mov_special r1, sr_lane_id"),
        ("mov r1, sr_lane_id", "mov_special r1, sr_lane_id"),
        ("mov r1, 7", "mov_imm r1, 7"),
        ("atomic_add r2, r0, r1, .device", "atomic_add.device r2, r0, r1"),
        ("local_atomic_add r2, r3, r1", "atomic_add.local.device r2, r3, r1"),
        ("fence_acquire .workgroup", "fence.acquire.workgroup"),
        ("wave_reduce_max r1, r2", "wave_reduce.max r1, r2"),
        ("bitcount r1, r2", "bitop.bitcount r1, r2"),
        ("fsin r1, r2", "ftransc.sin r1, r2"),
        ("SHR R1, R2, 3", "shift.shr r1, r2, 3"),
    ];
    for (alias, canonical) in pairs {
        let a = assemble(&kernel(&format!("    {alias}")), "a.wave");
        assert!(!a.has_errors(), "{alias}: {:#?}", a.diagnostics);
        let b = assemble(&kernel(&format!("    {canonical}")), "b.wave");
        assert!(!b.has_errors(), "{canonical}: {:#?}", b.diagnostics);
        assert_eq!(a.module.code, b.module.code, "{alias}");
        let mut text = String::new();
        write_inst(&a.placed[0].inst, &mut text, &|_| None);
        assert_eq!(text, canonical);
    }
}

#[test]
fn predication_and_negation_are_encoded() {
    let a =
        assemble(&kernel("    @!p2 iadd r1, r1, 1\n    loop\n        break !p1\n    endloop"), "t");
    assert!(!a.has_errors(), "{:#?}", a.diagnostics);
    let g = a.placed[0].inst.guard.expect("guarded");
    assert_eq!((g.predicate, g.negate), (2, true));
    // break !p1: modifier = 1 | negate(4).
    assert_eq!(a.placed[2].inst.modifier, 0b101);
}

#[test]
fn float_immediates_are_exact_binary32() {
    let a = assemble(&kernel("    mov_imm r1, 1.5\n    fadd r2, r1, 0.1\n    fmul r3, r1, 2"), "t");
    assert_eq!(a.placed[0].inst.ext, Some(1.5f32.to_bits()));
    assert_eq!(a.placed[1].inst.ext, Some(0.1f32.to_bits()));
    // An integer literal in a float operand is that value as a float.
    assert_eq!(a.placed[2].inst.ext, Some(2.0f32.to_bits()));
    check(
        &kernel("    fadd r2, r1, 0.1\n    mov_imm r1, 1e39\n    iadd r1, r1, 1.5"),
        "W0106 3:18 `0.1` is not exactly representable in binary32
E0131 4:17 `1e39` is outside the binary32 range (largest finite is 3.4028235e38)
E0127 5:18 this operand takes an integer, found the float `1.5`",
    );
}

#[test]
fn unknown_mnemonics_suffixes_and_directives_get_suggestions() {
    let source =
        kernel("    iaddd r1, r1, r1\n    icmp.lte p0, r1, r1\n    icmp p0, r1, r1\n.regsters 4");
    check(
        &source,
        "E0101 3:5 unknown instruction `iaddd`
E0102 4:10 `.lte` is not a suffix of `icmp`
E0104 5:5 `icmp` needs a suffix saying which operation
E0140 6:1 unknown directive `.regsters`",
    );
    let a = assemble(&source, "t");
    let fixes: Vec<_> = a
        .diagnostics
        .iter()
        .filter_map(|d| d.suggestion.as_ref().map(|s| s.replacement.as_str()))
        .collect();
    assert_eq!(fixes, ["iadd", "lt", ".eq", ".registers"]);
}

#[test]
fn operand_errors_say_what_was_expected() {
    check(
        &kernel(
            "    iadd r1, r2\n    iadd r1, r2, p0\n    fadd r1.lo, r2, r3\n    dadd r2:r4, r4, r6\n    iadd r300, r1, r1\n    iadd r1, r1, 5000000000\n    mov_special r1, sr_lane\n    iadd r1, nn, r1\n    icmp.lt p5, r1, r1",
        ),
        "E0120 3:10 `iadd` takes 3 operands, found 2
E0126 4:18 expected a register, found the predicate p0
E0121 5:10 `.lo` halves are only for F16 instructions and F16 conversions
E0122 6:10 expected r2:r3 (2 registers)
E0123 7:10 there is no register r300: the encoding has r0-r255
E0130 8:18 integer `5000000000` does not fit in 32 bits
E0129 9:21 unknown special register `sr_lane`
E0125 10:14 expected a register, found unknown name `nn`
E0111 11:13 there is no predicate p5: WAVE has p0-p3",
    );
}

#[test]
fn registers_above_the_declared_count_are_errors() {
    check(
        ".kernel k\n.registers 8\n    iadd r7, r7, r7\n    iadd r8, r1, r1\n    dadd r6:r7, r6:r7, r6:r7\n    dadd r7:r8, r2:r3, r2:r3\n.end\n",
        "E0124 4:10 r8 is above `.registers 8`
E0124 6:10 r7:r8 is above `.registers 8`",
    );
}

#[test]
fn structured_blocks_must_balance_and_not_cross() {
    check(
        &kernel("    endif\n    if p0\n    loop\n    endif\n    endloop\n    break p0\n    else"),
        "E0162 3:5 `endif` without a matching `if`
E0163 6:5 `endif` crosses the `loop` opened at line 5, which is still open
E0164 7:5 `endloop` without a matching `loop`
E0166 8:5 `break` outside a loop
E0160 9:5 `else` without a matching `if`",
    );
    check(
        &kernel("    if p0\n    else\n    else\n    endif\n    loop\n    if p1"),
        "E0161 5:5 a second `else` for the same `if`
E0165 7:5 this `loop` is never closed
E0165 8:5 this `if` is never closed",
    );
}

#[test]
fn kernels_labels_and_calls_are_checked() {
    check(
        ".kernel a\n    call missing\n    call fnc\nfn:\nfn:\n    return\n.kernel b\n    halt\n.end\n.end\n    halt\n",
        "E0170 2:10 no label `missing` in kernel `a`
E0170 3:10 no label `fnc` in kernel `a`
E0172 5:1 label `fn` is defined twice
E0150 7:1 `.kernel` inside kernel `a`
E0151 10:1 `.end` without a `.kernel`
E0147 11:5 instruction outside a kernel",
    );
}

#[test]
fn guards_on_control_flow_and_misplaced_params_are_errors() {
    check(
        &kernel("    @p0 barrier\n    nop\n.param b: u32\n.param c: ptr2"),
        "E0110 3:5 `barrier` cannot be guarded by a predicate
E0143 5:1 `.param` after the first instruction
E0143 6:1 `.param` after the first instruction",
    );
    check(
        ".kernel k\n.param a: ptr2\n.param a: u32\n.param a: u32\n.end\n",
        "E0141 2:11 unknown parameter type `ptr2`\nE0142 4:8 parameter `a` is declared twice",
    );
}

#[test]
fn barrier_under_a_lane_dependent_if_is_flagged() {
    check(
        &kernel(
            "    mov r1, sr_lane_id\n    icmp.lt p0, r1, 4\n    if p0\n        barrier\n    endif\n    mov r2, sr_workgroup_id_x\n    icmp.lt p1, r2, 4\n    if p1\n        barrier\n    endif",
        ),
        "W0103 6:9 `barrier` inside an `if` whose condition varies between lanes",
    );
}

#[test]
fn non_returning_atomics_warn_when_r0_is_meaningful() {
    check(
        &kernel("    atomic_add r0, r1, r2"),
        "W0104 3:5 `atomic_add` with rd = r0 is non-returning: r0 keeps parameter `a` and receives no old value",
    );
    check(
        ".kernel k\n    atomic_add r0, r1, r2\n    iadd r3, r0, r0\n.end\n",
        "W0104 2:5 `atomic_add` with rd = r0 is non-returning, but r0 is read later as if it held the old value",
    );
}

#[test]
fn missing_end_and_syntax_errors_are_reported_with_locations() {
    check(".kernel k\n    halt\n", "E0152 1:9 kernel `k` has no `.end`");
    let a = assemble(".kernel k\n    iadd r1,, r2\n.end\n", "t");
    assert!(
        a.diagnostics.iter().any(|d| d.code == "E0001" || d.code == "E0002"),
        "{:#?}",
        a.diagnostics
    );
}

#[test]
fn every_prefix_of_every_sample_assembles_without_panicking() {
    for (_, text) in SAMPLES {
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let a = assemble(&text[..end], "prefix.wave");
            for d in &a.diagnostics {
                assert!(d.span.start <= d.span.end && d.span.end <= end, "{d:?} at prefix {end}");
            }
        }
    }
}

#[test]
fn format_is_canonical_and_idempotent() {
    let ugly = ".kernel   k ; the kernel\n.param a:PTR\n  ICMP_LT p0,r1,a   ; compare\n\n\n  if p0 \n device_load_u32 r2,[ r1+4 ]\n   atomic_add r3, r1, r2, .workgroup ; add\n  endif\n   halt\n.end";
    let formatted = format(ugly).expect("formats");
    assert_eq!(
        formatted,
        ".kernel k  ; the kernel\n.param a: ptr\n    icmp.lt p0, r1, a  ; compare\n\n    if p0\n        device_load.u32 r2, [r1 + 4]\n        atomic_add.workgroup r3, r1, r2  ; add\n    endif\n    halt\n.end\n"
    );
    assert_eq!(format(&formatted).as_deref(), Ok(formatted.as_str()));
    for (name, text) in SAMPLES {
        let once = format(text).unwrap_or_else(|e| panic!("{name}: {e:#?}"));
        assert_eq!(format(&once).as_deref(), Ok(once.as_str()), "{name}");
        // Formatting never changes the code.
        assert_eq!(code_of(&assemble(&once, name).module), code_of(&assemble(text, name).module));
    }
    assert!(format(".kernel k\n    iaddd r1, r1, r1\n.end\n").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Every opcode with every modifier, scope, guard and operand form: the canonical text of
    /// a random valid instruction assembles back to the same bytes.
    #[test]
    fn text_binary_text_binary_round_trips(
        index in 0..OPCODES.len(),
        seed in proptest::collection::vec(any::<u32>(), 16),
    ) {
        let op = &OPCODES[index];
        let mut it = seed.into_iter().cycle();
        let mut inst = arbitrary_inst(op, &mut || it.next().unwrap_or(0));
        // Call targets must be instructions of the kernel: point them at the call itself.
        if op.op == Opcode::Call {
            inst.ext = Some(0);
        }
        let mut text = String::new();
        write_inst(&inst, &mut text, &|offset| (offset == 0).then(|| "self".to_owned()));
        // Structured control flow needs its block around it to assemble.
        let (before, after) = match op.flags.flow {
            Flow::If => ("", "endif"),
            Flow::Loop => ("", "endloop"),
            Flow::Else => ("if p0", "endif"),
            Flow::Endif => ("if p0", ""),
            Flow::Endloop => ("loop", ""),
            Flow::Break | Flow::Continue => ("loop", "endloop"),
            Flow::Next | Flow::Call | Flow::Return | Flow::Halt => ("", ""),
        };
        let source = format!(".kernel k\nself:\n    {before}\n    {text}\n    {after}\n.end\n");
        let a = assemble(&source, "p.wave");
        prop_assert!(!a.has_errors(), "{}\n{:#?}", source, a.diagnostics);
        let mut bytes = Vec::new();
        inst.encode(&mut bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let at = if before.is_empty() { 0 } else { 6 };
        prop_assert_eq!(&a.module.code[at..at + bytes.len()], &bytes[..], "{}", text);
        let bytes = a.module.code.clone();
        // And back again through the disassembler.
        let listing = disassemble(&a.module);
        let b = assemble(&listing, "l.wave");
        prop_assert_eq!(&b.module.code, &bytes, "{}", listing);
    }
}

#[test]
fn review_findings_stay_fixed() {
    // Unknown directives outside a kernel are reported.
    check(".foo 3\n.kernel k\n.end\n", "E0140 1:1 unknown directive `.foo`");
    // Literals beyond binary32 are errors, also when f64 overflows too.
    check(
        &kernel("    fadd r1, r1, 1e400\n    fadd r1, r1, -0x1"),
        "E0131 3:18 `1e400` is outside the binary32 range (largest finite is 3.4028235e38)\nE0131 4:18 `-0x1`: a bit pattern cannot be negative",
    );
    // Call targets are labels, never raw offsets that could point mid-instruction.
    check(&kernel("    call 12"), "E0126 3:10 expected a label, found the integer `12`");
    // Parameter names that read as registers are refused.
    check(
        ".kernel k\n.param r0: u32\n.end\n",
        "E0141 2:8 parameter name `r0` reads as a register, predicate, special register or literal",
    );
    // A bad `if` still opens its block: one mistake, one diagnostic.
    check(&kernel("    if p5\n    endif"), "E0111 3:8 there is no predicate p5: WAVE has p0-p3");
    // Different waves disagreeing on a barrier is as bad as different lanes.
    check(
        &kernel(
            "    mov r1, sr_wave_id\n    icmp.eq p0, r1, 0\n    if p0\n        barrier\n    endif",
        ),
        "W0103 6:9 `barrier` inside an `if` whose condition varies between lanes",
    );
}

/// The fast line parser must agree with the tree-sitter path whenever it answers on a file
/// whose block keywords balance (on a file with syntax errors too, whose lines it leaves to
/// tree-sitter windows); returns whether it gave tree-sitter's answer. Where they do not
/// balance its reading is the definition, checked by [`lenient_reading_holds`].
#[track_caller]
fn same_as_tree_sitter(text: &str) -> bool {
    match crate::syntax::fast::parse_reading(text) {
        Some((fast, true)) => {
            let tree = syntax::parse_tree(text);
            assert_eq!(fast, tree, "\n{text:?}");
            true
        }
        Some((fast, false)) => {
            lenient_reading_holds(text, &fast);
            false
        }
        None => false,
    }
}

/// A file whose block keywords do not balance, read line by line: statements in order inside
/// the text, and the file never assembles (the block matcher or a syntax error says why).
#[track_caller]
fn lenient_reading_holds(text: &str, fast: &syntax::Parsed) {
    let mut at = 0;
    for s in &fast.stmts {
        assert!(at <= s.span.start && s.span.end <= text.len(), "{s:?} in\n{text:?}");
        at = s.span.start;
    }
    let a = assemble(text, "t.wave");
    assert!(a.has_errors(), "a file with unbalanced blocks assembled:\n{text:?}");
    assert_eq!(a.parsed.stmts, fast.stmts, "assemble reads what the fast parser reads");
}

/// A file of thousands of `if` lines that never close, with a line the line parser cannot
/// read: every tree-sitter window would write the thousands of open blocks before it (the
/// protocol fuzzer's document took 0.6 s to check this way). Past 64 open blocks the whole
/// file goes to tree-sitter once, and the block matcher reports what is open.
#[test]
fn deeply_nested_unbalanced_blocks_take_one_whole_file_parse() {
    let mut text = String::from(".kernel k\n");
    for i in 0..3000 {
        text.push_str("    if p0\n");
        if i % 100 == 50 {
            text.push_str("    iadd r1,, r2\n");
        }
    }
    text.push_str(".end\n");
    assert!(
        crate::syntax::fast::parse_reading(&text).is_none(),
        "the whole file goes to tree-sitter"
    );
    let a = assemble(&text, "deep.wave");
    assert!(a.diagnostics.iter().any(|d| d.code == "E0001"), "the syntax errors are reported");
    assert!(a.diagnostics.iter().any(|d| d.code == "E0167"), "and the nesting");
    // At 64 open blocks the lines are still read one by one.
    let shallow = text.replacen("    if p0\n", "", 3000 - 64);
    assert!(crate::syntax::fast::parse_reading(&shallow).is_some());
}

#[test]
fn fast_parser_agrees_with_tree_sitter_on_fuzz_findings() {
    // A NUL byte ends tree-sitter's input, even inside a comment.
    same_as_tree_sitter("; \0.c[; ");
    same_as_tree_sitter(".kernel k\n    halt ; \0 x\n.end\n");
}

#[test]
fn fast_parser_agrees_with_tree_sitter_on_samples_and_their_prefixes() {
    for (name, text) in SAMPLES {
        assert!(same_as_tree_sitter(text), "{name} should take the fast path");
        let crlf = text.replace('\n', "\r\n");
        assert!(same_as_tree_sitter(&crlf), "{name} with CRLF");
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            same_as_tree_sitter(&text[..end]);
        }
    }
}

const SOUP: &[&str] = &[
    ".kernel k",
    ".end",
    ".param a: ptr",
    ".registers 8",
    ".workgroup_size 4, 2",
    ".foo",
    ".KERNEL x",
    "lbl:",
    "lbl: loop",
    "x: if p1",
    "if p0",
    "if !p2",
    "if r1",
    "else",
    "endif",
    "loop",
    "endloop",
    "halt",
    "iadd r1, r2, -3",
    "iadd r1,r2,0x1F",
    "fadd r1, r2, 1.5e-3",
    "fadd r1, r2, -inf",
    "mov r1, sr_lane_id",
    "@p1 iadd r1, r1, r1",
    "@ ! p3 nop",
    "device_load.u32 r1, [r2 + 4]",
    "device_store.u32 [a-8], r3",
    "dadd r4:r5, r6 : r7, r8:r9",
    "atomic_add r1, r2, r3, .device",
    "hadd r1.lo, r2.HI, r3.lo",
    "; comment",
    "  # hash",
    "// slashes",
    "iadd r1, r2, r3 ; trailing",
    "break !p1",
    "continue p0",
    "iadd r1,, r2",
    "iadd r1, r2,",
    "1abc",
    "iadd r1x, p0_ok, info",
    "halt endif",
    "r1: r2",
    "iadd r1, 1., 2",
    "x:",
    "mov_imm r1, nan",
    "\t",
    "",
    "é",
    "iadd r1, [r2]",
    "call f",
    "f:",
    "; nul \0 here",
    "halt\0",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn fast_parser_agrees_with_tree_sitter_on_random_line_soup(
        lines in proptest::collection::vec(0..SOUP.len(), 0..24),
        crlf in any::<bool>(),
        trailing_newline in any::<bool>(),
    ) {
        let sep = if crlf { "\r\n" } else { "\n" };
        let mut text = lines.iter().map(|&i| SOUP[i]).collect::<Vec<_>>().join(sep);
        if trailing_newline {
            text.push_str(sep);
        }
        same_as_tree_sitter(&text);
    }
}

const BODY: &[&str] = &[
    "halt",
    "iadd r1, r2, -3",
    "iadd r1,r2,0x1F",
    "fadd r1, r2, 1.5e-3",
    "fadd r1, r2, -inf",
    "mov r1, sr_lane_id",
    "@p1 iadd r1, r1, r1",
    "@ ! p3 nop",
    "device_load.u32 r1, [r2 + 4]",
    "device_store.u32 [a-8], r3",
    "dadd r4:r5, r6 : r7, r8:r9",
    "atomic_add r1, r2, r3, .device",
    "hadd r1.lo, r2.HI, r3.lo",
    "; comment",
    "  # hash",
    "// slashes",
    "iadd r1, r2, r3 ; trailing",
    "lbl:",
    "x: iadd r1, r1, 0b1_01",
    "IADD R1, R2, R3",
    "mov_imm r1, nan",
    "wave_shuffle r1, r2, 3",
    "iadd r1x, p0_ok, info",
    "icmp.lt p0, r1, 1_000",
    "",
    "\t\t",
    "fence_acquire .workgroup",
];

/// A kernel with balanced blocks built from `ops`: 0 = a body line, 1 = open if, 2 = open
/// loop, 3 = else (when the innermost block is an if without one), 4 = close.
fn structured(ops: &[(u8, usize)]) -> String {
    let mut out = String::from(".kernel k   ; head\n.param a: ptr\n");
    // Each open block's closer, and whether an `if` has had its `else`.
    let mut stack: Vec<(Opcode, bool)> = Vec::new();
    for &(op, i) in ops {
        let indent = "    ".repeat(stack.len() + 1);
        match op {
            1 => {
                out.push_str(&format!(
                    "{indent}if {}p{}\n",
                    if i % 2 == 0 { "!" } else { "" },
                    i % 4
                ));
                stack.push((Opcode::Endif, false));
            }
            2 => {
                out.push_str(&format!("{indent}{}loop\n", if i % 3 == 0 { "top: " } else { "" }));
                stack.push((Opcode::Endloop, false));
            }
            3 if matches!(stack.last(), Some((Opcode::Endif, false))) => {
                out.push_str(&format!("{}else\n", "    ".repeat(stack.len())));
                if let Some(top) = stack.last_mut() {
                    top.1 = true;
                }
            }
            4 if !stack.is_empty() => {
                let (close, _) = stack.pop().unwrap_or((Opcode::Endif, false));
                out.push_str(&format!("{}{}\n", "    ".repeat(stack.len() + 1), close.mnemonic()));
            }
            _ => out.push_str(&format!("{indent}{}\n", BODY[i % BODY.len()])),
        }
    }
    while let Some((close, _)) = stack.pop() {
        out.push_str(&format!("{}{}\n", "    ".repeat(stack.len() + 1), close.mnemonic()));
    }
    out.push_str(".end");
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fast_parser_takes_and_matches_structured_kernels(
        ops in proptest::collection::vec((0u8..5, 0usize..64), 0..40),
        trailing_newline in any::<bool>(),
    ) {
        let mut text = structured(&ops);
        if trailing_newline {
            text.push('\n');
        }
        prop_assert!(same_as_tree_sitter(&text), "the fast path refused a well-formed kernel:\n{}", text);
    }
}

/// Every diagnostic code the assembler can emit is documented in docs/diagnostics.md.
#[test]
fn every_diagnostic_code_is_documented() {
    let docs = include_str!("../../../docs/diagnostics.md");
    let sources = [
        include_str!("lower.rs"),
        include_str!("lower/blocks.rs"),
        include_str!("lower/directive.rs"),
        include_str!("lower/finish.rs"),
        include_str!("lower/instruction.rs"),
        include_str!("lower/operand.rs"),
        include_str!("syntax.rs"),
        include_str!("syntax/tree.rs"),
    ];
    let mut codes: Vec<&str> = Vec::new();
    for source in sources {
        for (i, _) in source.match_indices("\"E0").chain(source.match_indices("\"W0")) {
            let code = &source[i + 1..i + 6];
            if code[1..].bytes().all(|b| b.is_ascii_digit()) && !codes.contains(&code) {
                codes.push(code);
            }
        }
    }
    assert!(codes.len() > 40, "found only {codes:?}");
    for code in codes {
        assert!(
            docs.contains(&format!("\n## {code}:")),
            "{code} is not documented in docs/diagnostics.md"
        );
    }
}

#[test]
fn errors_in_trailing_scope_operands_point_at_the_operand() {
    check(
        &kernel("    iadd r1, r2, r3, .device\n    atomic_add r1, r2, r3, .wave, .device"),
        "E0102 3:22 `.device` is not a suffix of `iadd`\nE0103 4:35 suffix `.device` conflicts with `.wave`: both set the same field",
    );
}

/// Half-typed code, as an editor sends it: characters typed at random places in the samples.
/// With one mistake, the fast parser answers for most files (the line it cannot read goes to
/// a tree-sitter window) and always as the whole file's tree-sitter parse. With many, it
/// (five) answers for most too; there tree-sitter's error recovery over the whole file can choose
/// differently (it weighs all the errors at once), and the windowed answer is the
/// definition (docs/assembly.md).
#[test]
fn fast_parser_agrees_with_tree_sitter_on_half_typed_samples() {
    let mut seed = 0x2545_f491_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let chars = ["x", "[", "]", ":", ",", "@", "!", ";", "(", " ", "1", ".", "é", "r", "\n"];
    for piled in [1, 5] {
        let (mut answered, mut malformed, mut total) = (0, 0, 0);
        let (mut lenient, mut whole) = (0, 0);
        for (_, sample) in SAMPLES {
            for _ in 0..300 {
                let mut text = sample.to_string();
                for _ in 0..piled {
                    let mut at = next() as usize % (text.len() + 1);
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    text.insert_str(at, chars[next() as usize % chars.len()]);
                }
                total += 1;
                match crate::syntax::fast::parse_reading(&text) {
                    None => whole += 1,
                    Some((parsed, exact)) => {
                        if piled == 1 {
                            same_as_tree_sitter(&text);
                        } else if !exact {
                            lenient_reading_holds(&text, &parsed);
                        }
                        lenient += usize::from(!exact);
                        answered += 1;
                        malformed += usize::from(!parsed.diagnostics.is_empty());
                    }
                }
            }
        }
        assert!(answered * 2 > total, "{piled} edits: answered {answered} of {total}");
        // A damaged `.kernel` or `.end` line, a last line without its newline, or a window
        // that does not settle sends the whole file to tree-sitter; a damaged block keyword
        // does not. (The samples are short: a `.kernel` line is one line in 25.)
        let most = if piled == 1 { total / 20 } else { total / 5 };
        assert!(whole < most, "{piled} edits: {whole} of {total} parsed whole");
        assert!(lenient > 0, "{piled} edits: no file with unbalanced blocks");
        assert!(malformed * 4 > total, "{piled} edits: {malformed} of {total} with syntax errors");
    }
}

/// `wave_reduce.and_bits` (Appendix A's name) is canonical: the short names and the
/// underscore spellings assemble to it, and the disassembler and the formatter print it.
#[test]
fn bitwise_reductions_assemble_disassemble_and_format_as_and_bits() {
    let source = kernel(
        "    wave_reduce.and_bits r1, a\n    wave_reduce.or r2, a\n    wave_reduce_xor r3, a\n    wave_reduce_and_bits r4, a",
    );
    let assembly = assemble(&source, "test.wave");
    assert!(!assembly.has_errors(), "{:?}", assembly.diagnostics);
    let listing = disassemble(&assembly.module);
    for line in [
        "wave_reduce.and_bits r1, r0",
        "wave_reduce.or_bits r2, r0",
        "wave_reduce.xor_bits r3, r0",
        "wave_reduce.and_bits r4, r0",
    ] {
        assert!(listing.contains(line), "{line} in\n{listing}");
    }
    let formatted = format(&source).expect("formats");
    for line in [
        "wave_reduce.and_bits r1, a",
        "wave_reduce.or_bits r2, a",
        "wave_reduce.xor_bits r3, a",
        "wave_reduce.and_bits r4, a",
    ] {
        assert!(formatted.contains(line), "{line} in\n{formatted}");
    }
}

/// The reference toolchain's fragment MMA is refused with its reason, not as unknown names.
#[test]
fn the_reference_fragment_mma_is_refused_with_the_reason() {
    check(
        &kernel("    mma_load_a r0, r1, r2\n    mma_compute r0, r0, r0"),
        "E0105 3:5 `mma_load_a` is the reference toolchain's fragment MMA, which needs CAP_MMA: no target of this toolchain has it\nE0105 4:5 `mma_compute` is the reference toolchain's fragment MMA, which needs CAP_MMA: no target of this toolchain has it",
    );
}

//! Tests of the table, the encoding and the occupancy function.

use proptest::prelude::*;

use crate::target::{KernelResources, Limit, MINIMUMS, PROFILES, occupancy};
use crate::*;

fn encode(inst: &Inst) -> Vec<u8> {
    let mut out = Vec::new();
    inst.encode(&mut out).unwrap_or_else(|e| panic!("{inst:?}: {e}"));
    out
}

fn base_word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..6].copy_from_slice(&bytes[..6]);
    u64::from_le_bytes(w)
}

#[test]
fn table_is_sorted_unique_and_in_its_ranges() {
    for pair in OPCODES.windows(2) {
        assert!(pair[0].opcode < pair[1].opcode, "{} / {}", pair[0].mnemonic, pair[1].mnemonic);
    }
    for op in OPCODES {
        let range = match op.category {
            Category::Integer => 0x00..=0x0F,
            Category::Float => 0x10..=0x1F,
            Category::Bitwise => 0x20..=0x27,
            Category::Compare => 0x28..=0x2F,
            Category::LocalMemory => 0x30..=0x37,
            Category::DeviceMemory => 0x38..=0x3F,
            Category::Atomic => 0x40..=0x4F,
            Category::Wave => 0x50..=0x5F,
            Category::Control => 0x60..=0x6F,
            Category::Convert => 0x70..=0x7F,
            Category::F16 => 0x80..=0x8F,
            Category::F64 => 0x90..=0x9F,
            Category::Mma => 0xA0..=0xAF,
            Category::Misc => 0xF0..=0xFF,
        };
        assert!(range.contains(&op.opcode), "{} outside its category range", op.mnemonic);
        assert_eq!(info(op.opcode).map(|o| o.mnemonic), Some(op.mnemonic));
        assert!(!op.summary.is_empty());
    }
    assert_eq!(
        OPCODES.len(),
        108 + EXTENSIONS.len(),
        "Appendix A's 108 opcodes and the extensions"
    );
}

/// The table against Appendix A of the spec (v0.3), transcribed by hand into
/// `appendix_a.tsv`: every row is here with the same opcode, mnemonic and format, and nothing
/// else is.
#[test]
fn table_matches_appendix_a_of_the_spec() {
    let text = include_str!("appendix_a.tsv");
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [opcode, name, format] = fields[..] else {
            panic!("appendix_a.tsv:{}: expected 3 tab-separated fields", n + 1)
        };
        let opcode = opcode
            .strip_prefix("0x")
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .unwrap_or_else(|| panic!("appendix_a.tsv:{}: bad opcode `{opcode}`", n + 1));
        let format = match format {
            "base" => Format::Base,
            "extended" => Format::Extended,
            other => panic!("appendix_a.tsv:{}: bad format `{other}`", n + 1),
        };
        rows.push((opcode, name.to_owned(), format));
    }
    assert_eq!(rows.len(), 108, "Appendix A defines 108 opcodes");
    assert_eq!(rows.len() + EXTENSIONS.len(), OPCODES.len(), "Appendix A and the extensions");
    for e in EXTENSIONS {
        assert!(!rows.iter().any(|(o, _, _)| *o == e as u8), "{} is in Appendix A", e.mnemonic());
    }
    for (opcode, name, format) in rows {
        let op = info(opcode).unwrap_or_else(|| panic!("0x{opcode:02X} {name} missing"));
        assert_eq!(op.mnemonic, name);
        assert_eq!(op.format, format, "{name}");
    }
}

#[test]
fn every_alias_resolves_to_one_instruction() {
    for spelling in all_spellings() {
        let (op, implied) = lookup_name(spelling).expect("listed spelling resolves");
        let resolved = lookup(spelling, &[]);
        // Spellings that leave a required modifier open (e.g. `icmp`) fail only for that.
        match resolved {
            Ok(r) => assert_eq!(r.op.opcode, op.opcode),
            Err(SuffixError::MissingModifier { .. }) => assert!(implied.is_empty()),
            Err(e) => panic!("{spelling}: {e}"),
        }
    }
}

#[test]
fn aliases_give_the_same_fields_as_canonical_forms() {
    let cases = [
        ("shl", "shift.shl"),
        ("sar", "shift.sar"),
        ("bitrev", "bitop.bitrev"),
        ("ffloor", "fround.floor"),
        ("fround", "fround.round"),
        ("flog2", "ftransc.log2"),
        ("fence_acq_rel", "fence.acq_rel"),
        ("wave_reduce_xor", "wave_reduce.xor_bits"),
        ("wave_reduce.xor", "wave_reduce.xor_bits"),
        ("wave_reduce.and", "wave_reduce.and_bits"),
        ("wave_reduce_or_bits", "wave_reduce.or_bits"),
        ("icmp_lt", "icmp.lt"),
        ("fcmp_ord", "fcmp.ord"),
        ("device_load_u32", "device_load.u32"),
        ("local_store_u8", "local_store.u8"),
        ("local_atomic_add", "atomic_add.local"),
        ("mov_sr", "mov_special"),
        ("atomic_compare_swap", "atomic_cas"),
        ("ICMP.LT", "icmp.lt"),
    ];
    for (alias, canonical) in cases {
        assert_eq!(lookup(alias, &[]), lookup(canonical, &[]), "{alias}");
    }
    assert_eq!(lookup("atomic_add", &["workgroup"]), lookup("atomic_add.workgroup", &[]));
    assert_eq!(lookup("fence_acquire", &["workgroup"]), lookup("fence.acquire.workgroup", &[]));
}

#[test]
fn bitwise_reductions_print_as_appendix_a_names_them() {
    for (written, printed) in [
        ("wave_reduce.and", "wave_reduce.and_bits"),
        ("wave_reduce.or_bits", "wave_reduce.or_bits"),
        ("wave_reduce_xor", "wave_reduce.xor_bits"),
        ("wave_reduce.add", "wave_reduce.add"),
    ] {
        let r = lookup(written, &[]).expect("a reduction");
        let inst = Inst { opcode: r.op.opcode, modifier: r.modifier, ..Inst::default() };
        let mut text = String::new();
        crate::write_mnemonic(&inst, &mut text);
        assert_eq!(text, printed, "{written}");
    }
}

#[test]
fn suffix_errors_are_specific() {
    assert!(matches!(
        lookup("icmp", &[]),
        Err(SuffixError::MissingModifier { mnemonic: "icmp", .. })
    ));
    assert!(matches!(
        lookup("icmp.lt.gt", &[]),
        Err(SuffixError::Conflict { ref first, ref second }) if first == "lt" && second == "gt"
    ));
    assert!(matches!(
        lookup("iadd.u32", &[]),
        Err(SuffixError::UnknownSuffix { mnemonic: "iadd", .. })
    ));
    assert!(matches!(
        lookup("iaddd", &[]),
        Err(SuffixError::UnknownMnemonic { suggestion: Some("iadd"), .. })
    ));
    // f32 is an atomic_add type only.
    assert!(lookup("atomic_add.f32", &[]).is_ok());
    assert!(matches!(lookup("atomic_min.f32", &[]), Err(SuffixError::UnknownSuffix { .. })));
}

// Bit-by-bit checks against the field table of spec 8.2.
#[test]
fn iadd_fields_sit_where_spec_8_2_puts_them() {
    let inst = Inst { opcode: 0x00, rd: 5, rs1: 6, rs2: 7, ..Inst::default() };
    let bytes = encode(&inst);
    assert_eq!(bytes.len(), 6);
    let w = base_word(&bytes);
    assert_eq!(w >> 40, 0x00, "opcode [47:40]");
    assert_eq!((w >> 32) & 0xFF, 5, "rd [39:32]");
    assert_eq!((w >> 24) & 0xFF, 6, "rs1 [31:24]");
    assert_eq!((w >> 16) & 0xFF, 7, "rs2 [23:16]");
    assert_eq!(w & 0xFFFF, 0, "reserved, modifier, scope, pred, flags all zero");
    assert_eq!(bytes, [0x00, 0x00, 0x07, 0x06, 0x05, 0x00]);
}

#[test]
fn guarded_atomic_sets_modifier_scope_pred_and_flags() {
    // @!p3 atomic_min.i32.local.workgroup r9, r10, r11
    let (r, _) = (lookup("atomic_min.i32.local.workgroup", &[]).unwrap(), ());
    let inst = Inst {
        opcode: r.op.opcode,
        rd: 9,
        rs1: 10,
        rs2: 11,
        modifier: r.modifier,
        scope: r.scope,
        guard: Some(Guard { predicate: 3, negate: true }),
        ext: Some(0),
    };
    let bytes = encode(&inst);
    assert_eq!(bytes.len(), 10, "atomics are Extended");
    let w = base_word(&bytes);
    assert_eq!(w >> 40, 0x42);
    assert_eq!((w >> 11) & 0x1F, 0, "reserved [15:11]");
    assert_eq!((w >> 7) & 0xF, 0b1001, "modifier [10:7]: i32 (1) | local (8)");
    assert_eq!((w >> 5) & 3, 0b01, "scope [6:5]: workgroup");
    assert_eq!((w >> 3) & 3, 3, "pred [4:3]: p3");
    assert_eq!((w >> 2) & 1, 1, "pred_neg [2]");
    assert_eq!(w & 3, 0b11, "flags: extended | predicated");
    assert_eq!(&bytes[6..], &[0, 0, 0, 0]);
}

#[test]
fn wave_reduce_max_uses_modifier_10_and_fma_puts_rs3_in_the_extension_word() {
    let r = lookup("wave_reduce.max", &[]).unwrap();
    let bytes =
        encode(&Inst { opcode: 0x59, rd: 1, rs1: 2, modifier: r.modifier, ..Inst::default() });
    assert_eq!((base_word(&bytes) >> 7) & 0xF, 10);
    let bytes =
        encode(&Inst { opcode: 0x13, rd: 1, rs1: 2, rs2: 3, ext: Some(4), ..Inst::default() });
    assert_eq!(bytes.len(), 10);
    assert_eq!(base_word(&bytes) & 3, FLAG_EXTENDED.into());
    assert_eq!(&bytes[6..], &[4, 0, 0, 0]);
}

#[test]
fn immediate_source_replaces_rs2_with_the_extension_word() {
    // iadd r1, r2, -1
    let bytes =
        encode(&Inst { opcode: 0x00, rd: 1, rs1: 2, ext: Some(u32::MAX), ..Inst::default() });
    assert_eq!(bytes, [0x01, 0x00, 0x00, 0x02, 0x01, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]);
}

#[test]
fn decoder_rejects_what_the_encoder_never_writes() {
    let good = encode(&Inst { opcode: 0x00, rd: 1, rs1: 2, rs2: 3, ..Inst::default() });
    let mut reserved = good.clone();
    reserved[1] |= 0x08; // bit 11
    assert_eq!(Inst::decode(&reserved), Err(DecodeError::ReservedBits(1)));
    let mut unknown = good.clone();
    unknown[5] = 0xB0;
    assert_eq!(Inst::decode(&unknown), Err(DecodeError::UnknownOpcode(0xB0)));
    assert!(matches!(Inst::decode(&good[..4]), Err(DecodeError::Truncated { needed: 6, .. })));
    // ineg has no rs2.
    let ineg = encode(&Inst { opcode: 0x07, rd: 1, rs1: 2, ..Inst::default() });
    let mut bad = ineg.clone();
    bad[2] = 9;
    assert!(matches!(
        Inst::decode(&bad),
        Err(DecodeError::Invalid(EncodeError::UnusedField { field: "rs2", .. }))
    ));
    // `if` cannot be guarded.
    let mut guarded_if = encode(&Inst { opcode: 0x60, ..Inst::default() });
    guarded_if[0] |= FLAG_PREDICATED;
    assert!(matches!(
        Inst::decode(&guarded_if),
        Err(DecodeError::Invalid(EncodeError::NotPredicable("if")))
    ));
    // Extended without the extension word.
    let mut imad = encode(&Inst { opcode: 0x04, ext: Some(0), ..Inst::default() });
    imad[0] &= !FLAG_EXTENDED;
    assert!(matches!(
        Inst::decode(&imad[..6]),
        Err(DecodeError::Invalid(EncodeError::MissingExtension("imad")))
    ));
    // wave_reduce modifier 0 is the Appendix A numbering, not ours.
    assert!(
        Inst { opcode: 0x59, rd: 1, rs1: 1, modifier: 0, ..Inst::default() }.validate().is_err()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn every_instruction_round_trips_through_bytes(
        index in 0..OPCODES.len(),
        seed in proptest::collection::vec(any::<u32>(), 16),
    ) {
        let op = &OPCODES[index];
        let mut it = seed.into_iter().cycle();
        let inst = arbitrary_inst(op, &mut || it.next().unwrap_or(0));
        let bytes = encode(&inst);
        prop_assert_eq!(bytes.len(), inst.size());
        let (back, size) = Inst::decode(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(size, bytes.len());
        prop_assert_eq!(back, inst);
    }

    #[test]
    fn any_bytes_either_fail_to_decode_or_re_encode_identically(
        bytes in proptest::collection::vec(any::<u8>(), 10),
        opcode_index in 0..OPCODES.len(),
    ) {
        let mut bytes = bytes;
        // Point most inputs at a real opcode so that field validation is what gets tested.
        bytes[5] = OPCODES[opcode_index].opcode;
        if let Ok((inst, size)) = Inst::decode(&bytes) {
            prop_assert_eq!(encode(&inst), bytes[..size].to_vec());
        }
    }
}

#[test]
fn occupancy_equation_and_limits() {
    // floor(16384 / (16 * 8 * 4)) = 32 waves by registers; 4 waves per core binds.
    let occ = occupancy(
        &MINIMUMS,
        KernelResources { registers: 16, local_memory: 0, workgroup_threads: 32 },
    );
    assert_eq!(occ.waves_by_registers, 32);
    assert_eq!(occ.waves_per_workgroup, 4);
    // MAX_WORKGROUPS_PER_CORE = 1 and MAX_WAVES_PER_CORE / 4 = 1 tie; waves come first.
    assert_eq!(occ.resident_workgroups, 1);
    assert_eq!(occ.resident_waves, 4);
    assert!(occ.rejections.is_empty());

    let nvidia = target::profile("nvidia").unwrap();
    // 128 registers, 256 threads: floor(262144 / (128 * 32 * 4)) = 16 waves = 2 workgroups.
    let occ = occupancy(
        &nvidia.constants,
        KernelResources { registers: 128, local_memory: 0, workgroup_threads: 256 },
    );
    assert_eq!(occ.waves_by_registers, 16);
    assert_eq!(occ.resident_workgroups, 2);
    assert_eq!(occ.limit, Limit::Registers);
    // Three workgroups (24 waves) need R <= floor(262144 / (24 * 32 * 4)) = 85.
    assert_eq!(occ.registers_for_next_workgroup, Some(85));

    // Local memory binds: 40 KiB of 48 KiB leaves room for one workgroup.
    let occ = occupancy(
        &nvidia.constants,
        KernelResources { registers: 16, local_memory: 40 * 1024, workgroup_threads: 64 },
    );
    assert_eq!(occ.limit, Limit::LocalMemory);
    assert_eq!(occ.resident_workgroups, 1);

    let occ = occupancy(
        &MINIMUMS,
        KernelResources { registers: 65, local_memory: 20000, workgroup_threads: 512 },
    );
    assert_eq!(occ.rejections.len(), 3);
}

#[test]
fn profiles_meet_the_spec_minimums() {
    for p in PROFILES {
        let c = &p.constants;
        assert!(c.wave_width >= MINIMUMS.wave_width, "{}", p.name);
        assert!(c.max_registers >= MINIMUMS.max_registers, "{}", p.name);
        assert!(c.register_file_size >= MINIMUMS.register_file_size, "{}", p.name);
        assert!(c.local_memory_size >= MINIMUMS.local_memory_size, "{}", p.name);
        assert!(c.max_workgroup_size >= MINIMUMS.max_workgroup_size, "{}", p.name);
        assert!(c.max_waves_per_core >= MINIMUMS.max_waves_per_core, "{}", p.name);
        assert!(c.max_call_depth >= MINIMUMS.max_call_depth, "{}", p.name);
        assert!(c.divergence_depth >= MINIMUMS.divergence_depth, "{}", p.name);
        assert_eq!(p.has(Capability::Mma), p.mma.is_some(), "{}", p.name);
    }
    let deepest = PROFILES.iter().map(|p| p.constants.divergence_depth).max();
    assert_eq!(deepest.map(|d| d as usize), Some(crate::target::MAX_DIVERGENCE_DEPTH));
}

#[test]
fn every_opcode_has_an_operation_for_each_modifier_it_names() {
    for op in OPCODES {
        let modifiers: Vec<u8> = match op.modifier {
            Modifier::Named { names, .. } => names.iter().map(|(_, v)| *v).collect(),
            _ => vec![0],
        };
        for modifier in modifiers {
            let inst = Inst { opcode: op.opcode, modifier, ..Inst::default() };
            assert!(
                Operation::of(&inst).is_some(),
                "`{}` modifier {modifier} has no operation",
                op.mnemonic
            );
        }
    }
    let bad = Inst { opcode: Opcode::Icmp as u8, modifier: 9, ..Inst::default() };
    assert_eq!(Operation::of(&bad), None, "no condition 9");
}

#[test]
fn every_opcode_has_one_row_and_its_number_and_name() {
    assert_eq!(Opcode::ALL.len(), OPCODES.len());
    for (op, row) in Opcode::ALL.iter().zip(OPCODES) {
        assert_eq!(row.op, *op);
        assert_eq!(row.opcode, *op as u8);
        assert_eq!(row.mnemonic, op.mnemonic());
        assert_eq!(Opcode::from_u8(*op as u8), Some(*op));
        assert_eq!(op.info().op, *op);
    }
    let defined = (0..=255u8).filter(|c| Opcode::from_u8(*c).is_some()).count();
    assert_eq!(defined, OPCODES.len());
}

#[test]
fn the_flags_say_where_control_goes_and_what_touches_memory() {
    use crate::Flow;
    let flow = |o: Opcode| o.info().flags.flow;
    let control = [
        (Opcode::If, Flow::If),
        (Opcode::Else, Flow::Else),
        (Opcode::Endif, Flow::Endif),
        (Opcode::Loop, Flow::Loop),
        (Opcode::Endloop, Flow::Endloop),
        (Opcode::Break, Flow::Break),
        (Opcode::Continue, Flow::Continue),
        (Opcode::Call, Flow::Call),
        (Opcode::Return, Flow::Return),
        (Opcode::Halt, Flow::Halt),
    ];
    for (op, f) in control {
        assert_eq!(flow(op), f, "{}", op.mnemonic());
    }
    for row in OPCODES {
        let f = row.flags;
        if !control.iter().any(|(op, _)| *op == row.op) {
            assert_eq!(f.flow, Flow::Next, "{}", row.mnemonic);
        }
        let memory = matches!(
            row.category,
            Category::LocalMemory | Category::DeviceMemory | Category::Atomic
        );
        if memory {
            assert!(f.reads_memory || f.writes_memory, "{}", row.mnemonic);
            assert_eq!(f.side_effects, f.writes_memory, "{}", row.mnemonic);
        }
        assert_eq!(f.cross_lane, row.category == Category::Wave, "{}", row.mnemonic);
        if matches!(row.category, Category::Integer | Category::Float | Category::Convert) {
            assert_eq!(f, crate::flags::PURE, "{}", row.mnemonic);
        }
    }
}

#[test]
fn the_base_fields_tile_the_word_and_hold_the_instructions_fields() {
    let mut covered = 0u64;
    for f in BASE_FIELDS {
        let mask = ((1u64 << (f.hi - f.lo + 1)) - 1) << f.lo;
        assert_eq!(covered & mask, 0, "{} overlaps", f.name);
        covered |= mask;
    }
    assert_eq!(covered, (1u64 << 48) - 1, "every bit of the 48 has a field");
    let inst = Inst {
        opcode: 0x48,
        rd: 7,
        rs1: 200,
        rs2: 3,
        modifier: 9,
        scope: 2,
        guard: Some(Guard { predicate: 3, negate: true }),
        ext: Some(5),
    };
    let w = inst.base_word();
    let value = |name: &str| BASE_FIELDS.iter().find(|f| f.name == name).expect(name).of(w);
    assert_eq!(
        [
            "opcode", "rd", "rs1", "rs2", "reserved", "modifier", "scope", "pred", "pred_neg",
            "flags"
        ]
        .map(value),
        [0x48, 7, 200, 3, 0, 9, 2, 3, 1, 3]
    );
}

#[test]
fn the_instructions_that_copy_bits_are_moves_select_and_shuffles() {
    let copies: Vec<&str> = OPCODES.iter().filter(|r| r.flags.copies).map(|r| r.mnemonic).collect();
    assert_eq!(
        copies,
        [
            "select",
            "wave_shuffle",
            "wave_shuffle_up",
            "wave_shuffle_down",
            "wave_shuffle_xor",
            "wave_broadcast",
            "wave_shuffle_idx",
            "mov",
            "mov_imm"
        ]
    );
}

#[test]
fn an_instruction_has_the_memory_space_of_its_row_or_its_modifier() {
    use crate::Space;
    let space =
        |op: Opcode, modifier: u8| Inst { opcode: op as u8, modifier, ..Inst::default() }.space();
    assert_eq!(space(Opcode::LocalLoad, 2), Some(Space::Local));
    assert_eq!(space(Opcode::LocalStore, 2), Some(Space::Local));
    assert_eq!(space(Opcode::DeviceLoad, 2), Some(Space::Device));
    assert_eq!(space(Opcode::DeviceStore, 2), Some(Space::Device));
    assert_eq!(space(Opcode::AtomicAdd, 0), Some(Space::Device));
    assert_eq!(space(Opcode::AtomicCas, ATOMIC_LOCAL), Some(Space::Local));
    // The atomic's operation agrees about its bit.
    let local = Inst { opcode: Opcode::AtomicAdd as u8, modifier: ATOMIC_LOCAL, ..Inst::default() };
    assert!(matches!(Operation::of(&local), Some(Operation::Atomic(_, _, true))));
    for op in [Opcode::Fence, Opcode::Call, Opcode::Barrier, Opcode::Iadd, Opcode::WaveShuffle] {
        assert_eq!(space(op, 0), None, "{}", op.mnemonic());
    }
}

#[test]
fn the_sub_operation_types_name_what_the_table_names() {
    // The first name of each value is its canonical one; later names of a value are aliases.
    fn agree(list: &[(&str, u8)], offset: u8, name: impl Fn(u8) -> Option<&'static str>) {
        for (i, (n, v)) in list.iter().enumerate() {
            if list[..i].iter().all(|(_, earlier)| earlier != v) {
                assert_eq!(name(v - offset), Some(*n), "modifier {v}");
            }
        }
    }
    agree(ICMP_CONDITIONS, 0, |b| IntCond::from_bits(b).map(IntCond::name));
    assert_eq!(IntCond::ALL.len(), ICMP_CONDITIONS.len());
    agree(UCMP_CONDITIONS, 0, |b| UintCond::from_bits(b).map(UintCond::name));
    assert_eq!(UintCond::ALL.len(), UCMP_CONDITIONS.len());
    agree(FCMP_CONDITIONS, 0, |b| FloatCond::from_bits(b).map(FloatCond::name));
    assert_eq!(FloatCond::ALL.len(), FCMP_CONDITIONS.len());
    agree(LOCAL_WIDTHS, 0, |b| MemWidth::from_bits(b).map(MemWidth::name));
    agree(DEVICE_WIDTHS, 0, |b| MemWidth::from_bits(b).map(MemWidth::name));
    assert_eq!(MemWidth::ALL.len(), DEVICE_WIDTHS.len());
    agree(REDUCTIONS, 8, |b| ReduceOp::from_bits(b).map(ReduceOp::name));
    assert_eq!(ReduceOp::ALL.len(), 6);
    assert_eq!(
        REDUCTIONS.len(),
        9,
        "six operations, the three bitwise ones also by their short names"
    );
    let atomics: Vec<&str> =
        OPCODES.iter().filter(|o| o.category == Category::Atomic).map(|o| o.mnemonic).collect();
    let named: Vec<String> = AtomicOp::ALL.iter().map(|a| format!("atomic_{}", a.name())).collect();
    assert_eq!(atomics, named);
    for w in MemWidth::ALL {
        assert_eq!(w.bytes(), 1 << *w as u8);
        assert_eq!(usize::from(w.registers()), w.bytes().div_ceil(4));
    }
}

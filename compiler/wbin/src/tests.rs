//! Tests of the `.wbin` writer and reader.

use proptest::prelude::*;
use wave_isa::Inst;

use crate::*;

fn sample() -> Module {
    let mut code = Vec::new();
    // kernel a: iadd r2, r0, r1; call f; halt; f: return
    for inst in [
        Inst { opcode: 0x00, rd: 2, rs1: 0, rs2: 1, ..Inst::default() },
        Inst { opcode: 0x67, ext: Some(22), ..Inst::default() },
        Inst { opcode: 0x6C, ..Inst::default() },
        Inst { opcode: 0x68, ..Inst::default() },
        // kernel b: nop
        Inst { opcode: 0xF3, ..Inst::default() },
    ] {
        inst.encode(&mut code).unwrap();
    }
    Module {
        code,
        kernels: vec![
            Kernel {
                name: "a".into(),
                code: 0..28,
                registers: 3,
                predicates: 0,
                local_memory: 256,
                workgroup_size: Some([64, 1, 1]),
                params: vec![
                    Param { name: "x".into(), ty: ParamType::Ptr },
                    Param { name: "n".into(), ty: ParamType::U32 },
                ],
            },
            Kernel {
                name: "b".into(),
                code: 28..34,
                registers: 1,
                predicates: 4,
                local_memory: 0,
                workgroup_size: None,
                params: vec![],
            },
        ],
        symbols: vec![Symbol {
            name: "f".into(),
            kernel: 0,
            offset: 22,
            kind: SymbolKind::Function,
        }],
        files: vec!["k.wave".into()],
        lines: vec![
            LineEntry { offset: 0, file: 0, line: 3, column: 5, end_line: 3, end_column: 19 },
            LineEntry { offset: 6, file: 0, line: 4, column: 5, end_line: 4, end_column: 11 },
        ],
        vars: Vec::new(),
    }
}

#[test]
fn write_then_read_gives_the_same_module_and_bytes() {
    let module = sample();
    let bytes = write(&module);
    assert_eq!(&bytes[..8], b"WAVEBIN\0");
    let back = read(&bytes).unwrap();
    assert_eq!(back, module);
    assert_eq!(write(&back), bytes);
    let names: Vec<u32> = back.instructions(&back.kernels[0]).map(|(pc, _)| pc).collect();
    assert_eq!(names, [0, 6, 16, 22]);
    assert_eq!(back.symbol_at(22).map(|s| s.name.as_str()), Some("f"));
    assert_eq!(back.line_at(6).map(|l| l.line), Some(4));
}

#[test]
fn every_truncation_is_a_clear_error() {
    let bytes = write(&sample());
    for len in 0..bytes.len() {
        let e = read(&bytes[..len]).expect_err("truncated file must not read");
        assert!(!e.message.is_empty());
        assert!(e.offset <= bytes.len());
    }
}

#[test]
fn specific_corruptions_name_their_cause() {
    let bytes = write(&sample());
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(read(&bad).unwrap_err().message.contains("magic"));
    let mut bad = bytes.clone();
    bad[8] = 9;
    assert!(read(&bad).unwrap_err().message.contains("version 9.0"));
    // Corrupt the call target (extension word of the second instruction) to point mid-instruction.
    let code_at = bytes.windows(6).position(|w| w == [1, 0, 0, 0, 0, 0x67]).unwrap();
    let mut bad = bytes.clone();
    bad[code_at + 6] = 7;
    let e = read(&bad).unwrap_err();
    assert!(e.message.contains("call at code offset 6 targets 7"), "{e}");
    assert_eq!(e.offset, code_at);
    // An unknown opcode inside a kernel.
    let mut bad = bytes.clone();
    bad[code_at + 5 + 10] = 0xEE;
    assert!(read(&bad).unwrap_err().message.contains("unknown opcode 0xEE"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_corruption_never_panics(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut bytes = write(&sample());
        let len = bytes.len();
        for (at, value) in flips {
            bytes[at % len] = value;
        }
        if let Ok(module) = read(&bytes) {
            // Whatever reads must write back to something that reads the same.
            prop_assert_eq!(read(&write(&module)), Ok(module));
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = read(&bytes);
        let mut with_magic = MAGIC.to_vec();
        with_magic.extend_from_slice(&[1, 0, 0, 0]);
        with_magic.extend_from_slice(&bytes);
        let _ = read(&with_magic);
    }
}

#[test]
fn variables_round_trip_and_only_they_make_a_version_1_1_file() {
    let plain = write(&sample());
    assert_eq!(u16::from_le_bytes([plain[10], plain[11]]), 0, "no VARS: still 1.0");
    let mut m = sample();
    m.vars = vec![
        VarLocation { name: "i".into(), ty: VarType::U32, register: 2, start: 0, end: 22 },
        VarLocation { name: "x".into(), ty: VarType::F64, register: 4, start: 6, end: 28 },
    ];
    let bytes = write(&m);
    assert_eq!(u16::from_le_bytes([bytes[10], bytes[11]]), VERSION_WITH_VARS);
    let back = read(&bytes).expect("reads");
    assert_eq!(back, m);
    assert_eq!(back.vars_at(10).iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["i", "x"]);
    assert_eq!(back.vars_at(22).iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["x"]);
    // A bad type and an empty range are named.
    let vars_at = bytes.len() - 2 * 16;
    let mut bad = bytes.clone();
    bad[vars_at + 13] = 9;
    let e = read(&bad).expect_err("type 9");
    assert!(e.message.contains("variable `i` has unknown type 9"), "{e}");
    let mut bad = bytes.clone();
    bad[vars_at + 8..vars_at + 12].copy_from_slice(&0u32.to_le_bytes());
    let e = read(&bad).expect_err("an empty range");
    assert!(e.message.contains("code range 0..0"), "{e}");
}

#[test]
fn parameters_are_parsed_from_name_colon_type() {
    assert_eq!(Param::parse("a:ptr"), Ok(Param { name: "a".into(), ty: ParamType::Ptr }));
    assert_eq!(Param::parse(" n : u32 "), Ok(Param { name: "n".into(), ty: ParamType::U32 }));
    assert!(Param::parse("base").is_err_and(|e| e.contains("NAME:TYPE")));
    assert!(Param::parse("1x:u32").is_err_and(|e| e.contains("not a name")));
    assert!(Param::parse("x:f64").is_err_and(|e| e.contains("not a parameter type")));
}

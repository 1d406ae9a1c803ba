//! Tests of reading and writing the reference toolchain's `.wbin` files.

use wave_isa::{
    DEFAULT_SCOPE, Format as InstFormat, Guard, Inst, Modifier, OPCODES, Operand, ScopeUse,
    arbitrary_inst, write_inst,
};

use super::*;

/// The example of section 1.10, G3 (derived by hand from the encoder logic).
const G3_DEMO: &str = "
    57 41 56 45 01 00 00 00 20 00 00 00 10 00 00 00
    30 00 00 00 05 00 00 00 35 00 00 00 24 00 00 00
    20 04 00 41 01 00 01 00 00 00 00 02 90 00 00 3f
    64 65 6d 6f 00 01 00 00 00 30 00 00 00 04 00 00
    00 00 00 00 00 40 00 00 00 01 00 00 00 01 00 00
    00 00 00 00 00 10 00 00 00";

/// The same source under the published crate, G2.
const G2_DEMO: &str = "
    57 41 56 45 01 00 00 00 20 00 00 00 0c 00 00 00
    2c 00 00 00 05 00 00 00 31 00 00 00 24 00 00 00
    02 01 04 fc 08 10 20 00 81 00 00 fc 64 65 6d 6f
    00 01 00 00 00 2c 00 00 00 04 00 00 00 00 00 00
    00 40 00 00 00 01 00 00 00 01 00 00 00 00 00 00
    00 0c 00 00 00";

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace().map(|b| u8::from_str_radix(b, 16).unwrap()).collect()
}

/// A reference file laid out as its writer does (section 1.7): kernels of 32 registers, no
/// workgroup size.
fn ref_file(kernels: &[(&str, &[u32])]) -> Vec<u8> {
    let mut code = Vec::new();
    let mut ranges = Vec::new();
    for (_, words) in kernels {
        let start = code.len();
        for w in *words {
            code.extend_from_slice(&w.to_le_bytes());
        }
        ranges.push((start, code.len() - start));
    }
    let mut names = Vec::new();
    let mut name_at = Vec::new();
    for (name, _) in kernels {
        name_at.push(names.len());
        names.extend_from_slice(name.as_bytes());
        names.push(0);
    }
    let sym = 32 + code.len();
    let meta_at = sym + names.len();
    let mut meta = Vec::new();
    put(&mut meta, kernels.len());
    for (at, (start, size)) in name_at.iter().zip(&ranges) {
        for v in [sym + at, 32, 0, 0, 0, 0, *start, *size] {
            put(&mut meta, v);
        }
    }
    let mut out = b"WAVE\x01\x00\x00\x00".to_vec();
    for v in [32, code.len(), sym, names.len(), meta_at, meta.len()] {
        put(&mut out, v);
    }
    out.extend(code);
    out.extend(names);
    out.extend(meta);
    out
}

/// Every kernel's instructions as canonical text, call targets by symbol.
fn texts(m: &Module) -> Vec<Vec<String>> {
    m.kernels
        .iter()
        .map(|k| {
            m.instructions(k)
                .map(|(_, inst)| {
                    let mut s = String::new();
                    write_inst(&inst, &mut s, &|t| m.symbol_at(t).map(|s| s.name.clone()));
                    s
                })
                .collect()
        })
        .collect()
}

/// Reads a one-kernel G3 file of `words`; its instruction texts or the error.
fn read_words(words: &[u32]) -> Result<Vec<String>, ReadError> {
    let (m, generation) = read(&ref_file(&[("k", words)]))?;
    assert_eq!(generation, Generation::V04);
    Ok(texts(&m).concat())
}

fn u32_at_test(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn set32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn g3_example_of_section_1_10() {
    let file = hex(G3_DEMO);
    assert_eq!(file.len(), 89);
    assert_eq!(format(&file), Some(Format::Reference));
    let (m, generation) = read(&file).unwrap();
    assert_eq!(generation, Generation::V04);
    assert_eq!(texts(&m), [["mov_special r0, sr_lane_id", "@p1 iadd r1, r0, r2", "halt"]]);
    let k = &m.kernels[0];
    assert_eq!(k.name, "demo");
    assert_eq!(k.registers, 4);
    assert_eq!(k.predicates, 2);
    assert_eq!(k.local_memory, 0);
    assert_eq!(k.workgroup_size, Some([64, 1, 1]));
    assert_eq!(k.code, 0..18);
    assert!(k.params.is_empty() && m.symbols.is_empty());
    // The module is valid in our format, and writing it back gives the reference's bytes.
    assert_eq!(crate::read(&crate::write(&m)).unwrap(), m);
    assert_eq!(write(&m).unwrap(), file);
}

#[test]
fn g2_example_of_section_1_10() {
    let file = hex(G2_DEMO);
    assert_eq!(file.len(), 85);
    assert_eq!(format(&file), Some(Format::Reference));
    let (m, generation) = read(&file).unwrap();
    assert_eq!(generation, Generation::Published);
    assert_eq!(texts(&m), [["mov_special r0, sr_lane_id", "@p1 iadd r1, r0, r2", "halt"]]);
    let (g3, _) = read(&hex(G3_DEMO)).unwrap();
    assert_eq!(m, g3);
    // Written back, it is the G3 file.
    assert_eq!(write(&m).unwrap(), hex(G3_DEMO));
}

#[test]
fn g2_words_of_section_6_3() {
    let decode = |w: u32| {
        let (r, size) = g2::decode(&w.to_le_bytes()).unwrap();
        assert_eq!(size, 4);
        r
    };
    assert_eq!(decode(0xFC00_0081).row.name, "halt");
    assert_eq!(decode(0xFC00_0101).row.name, "barrier");
    let sr = decode(0xFC04_0102);
    assert_eq!((sr.row.name, sr.rd, sr.rs1), ("mov_sr", 0, 4));
    let add = decode(0x0020_1008);
    assert_eq!((add.row.name, add.rd, add.rs1, add.a), ("iadd", 1, 0, 2));
    assert_eq!(add.guard, Some(Guard { predicate: 1, negate: false }));
    // The same words are not G3.
    assert!(g3::decode(&0xFC00_0081u32.to_le_bytes()).is_err());
    assert!(g3::decode(&0x0020_1008u32.to_le_bytes()).is_err());
}

#[test]
fn g2_forms() {
    // imad r1, r2, r3, r4: two words, rs3 in W1[31:27].
    let w0 = 0x04u32 << 26 | 1 << 21 | 2 << 16 | 3 << 11;
    let words = [w0, 4 << 27, 0xFC00_0081];
    let (m, generation) = read(&ref_file(&[("k", &words)])).unwrap();
    assert_eq!(generation, Generation::Published);
    assert_eq!(texts(&m).concat(), ["imad r1, r2, r3, r4", "halt"]);
    // select r1, p2, r3, r9: r9 in the modifier field; fence_release .workgroup (SYNC 4);
    // device_load_u32.streaming r1, r2 (flags 2); mov_imm r7, 0x12345678 (MISC 1).
    let select = 0x2Bu32 << 26 | 1 << 21 | 2 << 16 | 3 << 11 | 9 << 7;
    let fence = 0x3Fu32 << 26 | 4 << 7 | 1 << 5 | 1;
    let load = 0x38u32 << 26 | 1 << 21 | 2 << 16 | 2 << 7 | 2;
    let mov_imm = 0x3Fu32 << 26 | 7 << 21 | 1 << 7 | 2;
    let words = [select, fence, load, mov_imm, 0x1234_5678, 0xFC00_0081];
    let (m, _) = read(&ref_file(&[("k", &words)])).unwrap();
    assert_eq!(
        texts(&m).concat(),
        [
            "select r1, p2, r3, r9",
            "fence.release.workgroup",
            "device_load.u32.streaming r1, r2",
            "mov_imm r7, 0x12345678",
            "halt"
        ]
    );
}

/// The worked encodings of section 3.13, and a few more: each decodes to the instruction of
/// ours given, and writing it back gives the same words.
#[test]
fn g3_worked_encodings() {
    let cases: &[(&[u32], &str)] = &[
        (&[0x0005_0600, 0x0700_0000], "iadd r5, r6, r7"),
        (&[0x1001_0207, 0x0300_0000], "@!p3 fadd r1, r2, r3"),
        (&[0x1001_0204, 0x0300_0000], "@!p0 fadd r1, r2, r3"),
        (&[0x1504_0900], "fneg r4, r9"),
        (&[0x1301_0200, 0x0304_0000], "fma r1, r2, r3, r4"),
        (&[0x1B01_0280], "ftransc.sin r1, r2"),
        (&[0x1B01_0270], "fsat r1, r2"),
        (&[0x1B01_0210], "frcp r1, r2"),
        (&[0x1B01_0240], "fround.round r1, r2"),
        (&[0x2801_0220, 0x0300_0000], "icmp.lt p1, r2, r3"),
        (&[0x2901_0230, 0x0300_0000], "ucmp.le p1, r2, r3"),
        (&[0x2A01_0210, 0x0300_0000], "fcmp.ne p1, r2, r3"),
        (&[0x2A03_0270, 0x0300_0000], "fcmp.unord p3, r2, r3"),
        (&[0x2B01_0100, 0x0203_0000], "select r1, p1, r2, r3"),
        (&[0x2501_0200, 0x0300_0000], "shift.shr r1, r2, r3"),
        (&[0x2701_0210], "bitop.bitfind r1, r2"),
        (&[0x2701_0240, 0x0304_0500], "bfi r1, r2, r3, r4, r5"),
        (&[0x2701_0230, 0x0304_0000], "bfe r1, r2, r3, r4"),
        (&[0x2C01_0250], "cvt_f16_f32 r1.lo, r2"),
        (&[0x1C01_0230, 0x0304_0000], "hma r1.lo, r2.lo, r3.lo, r4.lo"),
        (&[0x1E02_0400, 0x0600_0000], "dadd r2:r3, r4:r5, r6:r7"),
        (&[0x1F02_0410], "dsqrt r2:r3, r4:r5"),
        (&[0x3804_0140], "device_load.u128 r4:r7, r1"),
        (&[0x3900_0230, 0x0400_0000], "device_store.u64 r2, r4:r5"),
        (&[0x3002_0320], "local_load.u32 r2, r3"),
        (&[0x3C00_0200, 0x0300_0000], "atomic_add.local.device r0, r2, r3"),
        (&[0x3D01_0200, 0x0300_0001], "atomic_add.workgroup r1, r2, r3"),
        (&[0x3D01_0230, 0x0300_0003], "atomic_max.system r1, r2, r3"),
        (&[0x3D01_0280, 0x0304_0002], "atomic_cas.device r1, r2, r3, r4"),
        (&[0x3C01_0280, 0x0304_0000], "atomic_cas.local.device r1, r2, r3, r4"),
        (&[0x3E01_0230, 0x0300_0000], "wave_shuffle_xor r1, r2, r3"),
        (&[0x3E01_0250], "wave_ballot r1, p2"),
        (&[0x3E01_0260], "wave_any p1, p2"),
        (&[0x3E01_0290], "wave_reduce.add r1, r2"),
        (&[0x3E01_02B0], "wave_reduce.max r1, r2"),
        (&[0x3F00_0200], "if p2"),
        (&[0x3F00_0010], "else"),
        (&[0x3F00_0140], "break p1"),
        (&[0x3F00_0060], "endloop"),
        (&[0x3F00_0080], "return"),
        (&[0x3F00_00A0], "barrier"),
        (&[0x3F00_00C0, 0x0000_0002], "fence.release.device"),
        (&[0x3F00_00E1], "@p1 wait"),
        (&[0x3F00_00F0], "nop"),
        (&[0x3F00_0096], "@!p2 halt"),
        (&[0x4101_0200], "mov r1, r2"),
        (&[0x4101_0010, 0xDEAD_BEEF], "mov_imm r1, 0xdeadbeef"),
        (&[0x4101_0010, 0xFFFF_FFFF], "mov_imm r1, -1"),
        (&[0x4103_0E20], "mov_special r3, sr_wave_width"),
        (&[0x4103_1320], "mov_special r3, sr_mma_k"),
    ];
    for (words, text) in cases {
        let got = read_words(words).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(got, [*text], "{words:08X?}");
        let file = ref_file(&[("k", words)]);
        let (m, _) = read(&file).unwrap();
        assert_eq!(write(&m).unwrap(), file, "{text}");
        assert_eq!(crate::read(&crate::write(&m)).unwrap(), m);
    }
}

#[test]
fn bf16_maps_to_the_new_opcodes() {
    let cases: &[(&[u32], u8, u8)] = &[
        (&[0x2D01_0200, 0x0300_0000], table::BADD, 0),
        (&[0x2D01_0210, 0x0300_0000], table::BSUB, 0),
        (&[0x2D01_0220, 0x0300_0000], table::BMUL, 0),
        (&[0x2D01_0230, 0x0304_0000], table::BMA, 4),
        (&[0x2E01_0200, 0x0300_0000], table::BADD2, 0),
        (&[0x2E01_0210, 0x0300_0000], table::BMUL2, 0),
        (&[0x2E01_0220, 0x0304_0000], table::BMA2, 4),
        (&[0x2C01_0280], table::CVT_F32_BF16, 0),
        (&[0x2C01_0290], table::CVT_BF16_F32, 0),
    ];
    for (words, opcode, rs3) in cases {
        let (r, _) =
            g3::decode(&words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<_>>()).unwrap();
        let result = convert::to_ours(&r);
        if wave_isa::info(*opcode).is_none() {
            // Not in this build's instruction table yet: refused, never dropped.
            assert!(result.is_err());
            assert!(read_words(words).is_err());
            continue;
        }
        let inst = result.unwrap();
        assert_eq!((inst.opcode, inst.rd, inst.rs1, inst.modifier), (*opcode, 1, 2, 0));
        assert_eq!(inst.ext.map(|e| e as u8), (*rs3 != 0).then_some(*rs3));
        let file = ref_file(&[("k", words)]);
        let (m, _) = read(&file).unwrap();
        assert_eq!(write(&m).unwrap(), file);
    }
}

/// Reads a one-kernel file and expects an error whose message contains `needle`.
fn refused(words: &[u32], needle: &str) -> ReadError {
    let e = read(&ref_file(&[("k", words)])).unwrap_err();
    assert!(e.message.contains(needle), "{needle:?} not in {e}");
    e
}

#[test]
fn instructions_without_a_counterpart_are_refused() {
    let e = refused(&[0x3F00_0090, 0x4000_0100, 0x0200_0000], "has no counterpart here");
    assert_eq!(e.offset, 0x24);
    assert!(e.message.starts_with("`mma_load_a` at byte 0x24 of kernel `k` has no counterpart"));
    refused(&[0x2A01_0250, 0x0300_0000], "`fcmp_ge`");
    refused(&[0x2801_0260, 0x0300_0000], "`icmp_ord`");
    refused(&[0x2801_0270, 0x0300_0000], "`icmp_unord`");
    for m in [0, 1, 4, 5, 6, 7] {
        refused(&[0x2901_0200 | m << 4, 0x0300_0000], "has no counterpart");
    }
    refused(&[0x3001_0240], "`local_load_u128`");
    refused(&[0x3100_0240, 0x0300_0000], "`local_store_u128`");
    refused(&[0x4000_0130, 0x0200_0000], "`mma_compute`");
    // An assembled CAS: the add's modifier with a third register.
    refused(&[0x3D01_0200, 0x0304_0002], "atomic_cas");
    refused(&[0x3C01_0200, 0x0304_0000], "local_atomic_cas");
    // Guards our table refuses.
    for w in [0x3F00_0201, 0x3F00_0011, 0x3F00_00A2, 0x3F00_0085] {
        refused(&[w], "is guarded by");
    }
    refused(&[0x3F00_0074, 0x0000_0000], "is guarded by @!p0");
    // A special register past sr_mma_k, a predicate past p3.
    refused(&[0x4103_1420], "special register 20");
    refused(&[0x2804_0200, 0x0300_0000], "p4");
}

#[test]
fn calls_reproduce_the_first_pass_sizes() {
    // Section 4: iadd (8 bytes, counted 4), call f, halt, f: return. The label is 0x10 by
    // the first pass, which is the halt's real offset.
    let words = [0x0000_0000, 0x0000_0000, 0x3F00_0070, 0x0000_0010, 0x3F00_0090, 0x3F00_0080];
    let file = ref_file(&[("k", &words)]);
    let (m, _) = read(&file).unwrap();
    assert_eq!(texts(&m).concat(), ["iadd r0, r0, r0", "call fn_22", "halt", "return"]);
    assert_eq!(
        m.symbols,
        [Symbol { name: "fn_22".into(), kernel: 0, offset: 22, kind: SymbolKind::Function }]
    );
    assert_eq!(write(&m).unwrap(), file);
    assert_eq!(crate::read(&crate::write(&m)).unwrap(), m);
    // Marked instructions count 8: imad, call f, f: return -> label 8 + 8 = 0x10 (real 0x10).
    let words = [0x0400_0000, 0x0000_0000, 0x3F00_0070, 0x0000_0010, 0x3F00_0080];
    let (m, _) = read(&ref_file(&[("k", &words)])).unwrap();
    assert_eq!(texts(&m).concat(), ["imad r0, r0, r0, r0", "call fn_20", "return"]);
    // A target between instructions, past the end, or in another kernel.
    refused(&[0x3F00_0070, 0x0000_0002, 0x3F00_0080], "no instruction start");
    refused(&[0x3F00_0070, 0x0000_0040, 0x3F00_0080], "no instruction start");
    let two = ref_file(&[("a", &[0x3F00_0070, 0x0000_000C, 0x3F00_0090]), ("b", &[0x3F00_0080])]);
    let e = read(&two).unwrap_err();
    assert!(e.message.contains("kernel `b`"), "{e}");
    // Labels are program-wide: a call in the second kernel, after an iadd of the first.
    let two = ref_file(&[
        ("a", &[0x0000_0000, 0x0000_0000, 0x3F00_0090]),
        ("b", &[0x3F00_0070, 0x0000_0010, 0x3F00_0080]),
    ]);
    let (m, _) = read(&two).unwrap();
    assert_eq!(texts(&m), [vec!["iadd r0, r0, r0", "halt"], vec!["call fn_22", "return"]]);
    assert_eq!(m.symbols[0].kernel, 1);
    assert_eq!(write(&m).unwrap(), two);
}

#[test]
fn stripped_names_are_accepted() {
    // `--no-symbols`: symbol offset and size 0, metadata offset 0, the records after the code.
    let mut file = hex(G3_DEMO);
    file.drain(0x30..0x35);
    for at in [16, 20, 24] {
        set32(&mut file, at, 0);
    }
    set32(&mut file, 0x30 + 4, 0);
    let (m, _) = read(&file).unwrap();
    assert_eq!(m.kernels[0].name, "kernel_0");
    assert_eq!(m.kernels[0].registers, 4);
    assert_eq!(texts(&m)[0].len(), 3);
}

#[test]
fn container_errors() {
    let good = hex(G3_DEMO);
    let check = |f: &dyn Fn(&mut Vec<u8>), at: usize, needle: &str| {
        let mut file = good.clone();
        f(&mut file);
        let e = read(&file).unwrap_err();
        assert!(e.message.contains(needle), "{needle:?} not in {e}");
        assert_eq!(e.offset, at, "{e}");
    };
    check(&|f| f.truncate(31), 31, "shorter than the 32-byte header");
    check(&|f| f[0] = b'X', 0, "magic");
    check(&|f| f[4] = 2, 4, "version 2");
    check(&|f| set32(f, 12, 0x100), 8, "code section");
    check(&|f| set32(f, 8, 0xFFFF_FFF0), 8, "code section");
    check(&|f| set32(f, 8, 4), 8, "overlaps the 32-byte header");
    check(&|f| set32(f, 16, 0x200), 16, "name table");
    check(&|f| set32(f, 24, 0x2C), 24, "overlaps the code section");
    check(&|f| set32(f, 28, 0xFFFF_FFFF), 24, "metadata");
    check(&|f| set32(f, 0x35, 0xFFFF_FFFF), 0x35, "kernel records do not fit");
    check(&|f| set32(f, 0x35, 2), 0x35, "kernel records do not fit");
    check(&|f| set32(f, 0x39, 0x1000), 0x39, "past the end of the file");
    check(
        &|f| {
            f.push(b'x');
            set32(f, 0x39, 0x59);
        },
        0x59,
        "no NUL",
    );
    check(&|f| f[0x30] = 0xFF, 0x30, "UTF-8");
    check(&|f| set32(f, 0x3D, 300), 0x3D, "300 registers");
    check(&|f| set32(f, 0x49, 0), 0x45, "zero dimension");
    check(&|f| set32(f, 0x51, 4), 0x51, "runs past");
    check(&|f| set32(f, 0x55, 0xFFFF_FFFF), 0x51, "runs past");
    // A kernel whose code ends inside an instruction: neither G3 nor G2.
    check(&|f| set32(f, 0x55, 6), 0x24, "neither encoding");
    // Two kernels over the same code.
    let mut two = ref_file(&[("a", &[0x3F00_0090]), ("b", &[0x3F00_0090])]);
    let meta = u32_at_test(&two, 24) as usize;
    set32(&mut two, meta + 4 + 32 + 24, 0);
    let e = read(&two).unwrap_err();
    assert!(e.message.contains("overlaps"), "{e}");
    // No metadata at all: no kernels.
    let mut none = good.clone();
    set32(&mut none, 28, 0);
    assert!(read(&none).unwrap().0.kernels.is_empty());
}

#[test]
fn format_is_told_by_the_first_eight_bytes() {
    assert_eq!(format(&hex(G3_DEMO)), Some(Format::Reference));
    assert_eq!(format(&crate::write(&Module::default())), Some(Format::Wave));
    assert_eq!(format(b"WAVE\x02\x00\x00\x00"), None);
    assert_eq!(format(b"WBIN\x01\x00\x00\x00"), None);
    assert_eq!(format(b"WAVE"), None);
}

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }

    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

/// A random instruction of ours that has a G3 counterpart (the call target left at 0).
fn convertible(rng: &mut Rng) -> Inst {
    loop {
        let op = &OPCODES[rng.below(OPCODES.len() as u32) as usize];
        let mut inst = arbitrary_inst(op, &mut || rng.next());
        if op.format == InstFormat::Base {
            // No immediates or memory offsets.
            if inst.ext.take().is_some()
                && op.operands.iter().any(|o| matches!(o, Operand::RegOrImm(_)))
            {
                inst.rs2 = rng.next() as u8;
            }
        }
        match op.modifier {
            Modifier::PredSrc => inst.modifier &= 3,
            Modifier::Halves => inst.modifier = 0,
            Modifier::Atomic { .. } => {
                inst.modifier &= 8;
                if inst.modifier != 0 {
                    inst.scope = DEFAULT_SCOPE;
                }
            }
            _ => {}
        }
        if op.scope == ScopeUse::CacheHint {
            inst.scope = 0;
        }
        if op.operands.contains(&Operand::Special) {
            inst.rs1 = rng.below(20) as u8;
        }
        if inst.guard == Some(Guard { predicate: 0, negate: false }) {
            inst.guard = None;
        }
        if op.opcode == 0x67 {
            inst.ext = Some(0);
        }
        if inst.validate().is_ok() && convert::from_ours(&inst).is_ok() {
            return inst;
        }
    }
}

/// A random module of instructions with G3 counterparts.
fn random_module(rng: &mut Rng) -> Module {
    let mut m = Module::default();
    for k in 0..1 + rng.below(3) {
        let count = 1 + rng.below(24) as usize;
        let mut insts: Vec<Inst> = (0..count).map(|_| convertible(rng)).collect();
        let start = m.code.len() as u32;
        let mut offsets = Vec::new();
        let mut pc = start;
        for inst in &insts {
            offsets.push(pc);
            pc += inst.size() as u32;
        }
        let mut predicates = 0;
        for inst in &mut insts {
            if inst.opcode == 0x67 {
                let target = offsets[rng.below(count as u32) as usize];
                inst.ext = Some(target);
                m.symbols.push(Symbol {
                    name: format!("fn_{target}"),
                    kernel: k,
                    offset: target,
                    kind: SymbolKind::Function,
                });
            }
            predicates = predicates.max(predicates_used(inst));
            inst.encode(&mut m.code).unwrap();
        }
        m.kernels.push(Kernel {
            name: ["a", "b", "main", "k"][rng.below(4) as usize].to_owned(),
            code: start..m.code.len() as u32,
            registers: rng.below(257) as u16,
            predicates,
            local_memory: rng.next(),
            workgroup_size: (rng.next() & 1 == 1)
                .then(|| [1 + rng.below(1024), 1 + rng.below(4), 1]),
            params: Vec::new(),
        });
    }
    m.symbols.sort_by_key(|s| s.offset);
    m.symbols.dedup();
    m
}

#[test]
fn random_programs_round_trip() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..2000 {
        let m = random_module(&mut rng);
        let bytes = write(&m).unwrap_or_else(|e| panic!("{e}"));
        let (back, generation) = read(&bytes).unwrap_or_else(|e| panic!("{e}\n{:?}", texts(&m)));
        assert_eq!(generation, Generation::V04);
        assert_eq!(texts(&back), texts(&m));
        assert_eq!(back, m);
        assert_eq!(write(&back).unwrap(), bytes);
    }
}

#[test]
fn every_counterpart_is_generated() {
    // The generator reaches every row with a counterpart (BF16 once our table has it).
    let mut rng = Rng(7);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..60_000 {
        seen.insert(convert::from_ours(&convertible(&mut rng)).unwrap().row.name);
    }
    for row in table::ROWS {
        let Some((opcode, _)) = row.ours else { continue };
        if wave_isa::info(opcode).is_some() {
            assert!(seen.contains(row.name), "{} never generated", row.name);
        }
    }
}

/// Writes `text` (one instruction of ours, by fields) and expects a refusal.
fn write_refused(inst: Inst, needle: &str) {
    let mut code = Vec::new();
    Inst { opcode: 0x6C, ..Inst::default() }.encode(&mut code).unwrap();
    inst.encode(&mut code).unwrap();
    let m = Module {
        kernels: vec![Kernel {
            name: "k".into(),
            code: 0..code.len() as u32,
            registers: 8,
            predicates: 4,
            local_memory: 0,
            workgroup_size: None,
            params: Vec::new(),
        }],
        code,
        ..Module::default()
    };
    let e = write(&m).unwrap_err();
    assert_eq!((e.kernel.as_str(), e.offset), ("k", 6), "{e}");
    assert!(e.message.contains(needle), "{needle:?} not in {e}");
    assert!(e.to_string().contains("kernel `k`"));
}

#[test]
fn writing_refuses_what_g3_cannot_say() {
    let i = |opcode: u8| Inst { opcode, rd: 1, rs1: 2, rs2: 3, ..Inst::default() };
    write_refused(i(0x0C), "`umin r1, r2, r3` has no counterpart");
    write_refused(i(0x0D), "unsigned min/max");
    write_refused(i(0x5A), "wave_shuffle_idx");
    write_refused(
        Inst { opcode: 0x59, rd: 1, rs1: 2, modifier: 11, ..Inst::default() },
        "add, min and max",
    );
    write_refused(
        Inst { opcode: 0x59, rd: 1, rs1: 2, modifier: 13, ..Inst::default() },
        "wave_reduce.xor_bits",
    );
    write_refused(Inst { ext: Some(4), ..i(0xA2) }, "MMA");
    write_refused(Inst { ext: Some(0), scope: 2, modifier: 1, ..i(0x40) }, "u32 only");
    write_refused(Inst { ext: Some(0), scope: 2, modifier: 9, ..i(0x42) }, "u32 only");
    write_refused(Inst { ext: Some(5), rs2: 0, ..i(0x00) }, "immediate");
    write_refused(
        Inst { opcode: 0x38, rd: 1, rs1: 2, modifier: 2, ext: Some(16), ..Inst::default() },
        "offset",
    );
    write_refused(Inst { modifier: 2, ..i(0x80) }, "`.hi`");
    write_refused(Inst { opcode: 0x75, rd: 1, rs1: 2, modifier: 1, ..Inst::default() }, "`.hi`");
    write_refused(Inst { guard: Some(Guard { predicate: 0, negate: false }), ..i(0x00) }, "@p0");
    write_refused(Inst { opcode: 0x60, modifier: 5, ..Inst::default() }, "negated predicate");
    write_refused(
        Inst { opcode: 0x2B, rd: 1, rs1: 2, rs2: 3, modifier: 4, ..Inst::default() },
        "negated",
    );
}

#[test]
fn writing_checks_the_module() {
    let (mut m, _) = read(&hex(G3_DEMO)).unwrap();
    m.kernels[0].code = 0..40;
    assert!(write(&m).unwrap_err().message.contains("outside"));
    m.kernels[0].code = 0..17;
    assert!(write(&m).unwrap_err().message.contains("invalid instruction"));
    m.kernels[0].code = 0..18;
    m.kernels[0].name = "a\0b".into();
    assert!(write(&m).unwrap_err().message.contains("NUL"));
    // A call to another kernel's instruction.
    let (mut m, _) = read(&ref_file(&[("k", &[0x3F00_0070, 0, 0x3F00_0080])])).unwrap();
    m.code[6..10].copy_from_slice(&100u32.to_le_bytes());
    assert!(write(&m).unwrap_err().message.contains("no instruction of the kernel"));
}

/// Valid files to corrupt: the examples and random modules written.
fn samples() -> Vec<Vec<u8>> {
    let mut out = vec![hex(G3_DEMO), hex(G2_DEMO)];
    let mut rng = Rng(42);
    for _ in 0..20 {
        out.push(write(&random_module(&mut rng)).unwrap());
    }
    out
}

#[test]
fn truncations_and_flips_give_errors_not_panics() {
    let mut rng = Rng(0xDEAD_BEEF);
    for file in samples() {
        for len in 0..file.len() {
            let _ = read(&file[..len]);
        }
        for _ in 0..400 {
            let mut bad = file.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bad.len() as u32) as usize;
                bad[at] ^= 1 << rng.below(8);
            }
            if rng.below(4) == 0 {
                // A whole field replaced: huge counts and offsets.
                let at = rng.below(bad.len() as u32 - 3) as usize;
                set32(&mut bad, at, [u32::MAX, 0x8000_0000, rng.next(), 0][rng.below(4) as usize]);
            }
            if let Ok((m, _)) = read(&bad) {
                // Whatever is accepted is a valid module of ours.
                assert_eq!(crate::read(&crate::write(&m)).unwrap(), m);
            }
        }
    }
    // Random bytes behind a valid header.
    for _ in 0..2000 {
        let mut file = hex(G3_DEMO);
        for b in &mut file[0x20..] {
            *b = rng.next() as u8;
        }
        let _ = read(&file);
    }
}

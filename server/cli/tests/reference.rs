//! Binaries of the reference WAVE toolchain (docs/compatibility.md): one its published
//! assembler wrote (`tests/data/reference/`) runs, disassembles and converts both ways; and,
//! where that assembler is installed (`.ci/run` installs it), every program of the reference's
//! own tests (`conformance/cases/reference`) assembled by it decodes to the instructions our
//! assembler makes of the same text.

use std::path::PathBuf;
use std::process::Command;

#[allow(dead_code, reason = "these tests use the running helpers only")]
mod common;

use common::{root, text, wave};

fn tmp(name: &str) -> PathBuf {
    common::tmp("reference", name)
}

const BINARY: &str = "server/cli/tests/data/reference/divergent.wbin";

/// What the divergent loop stores: lane l adds l + 1 until the sum passes 10.
fn expected() -> String {
    let sums: Vec<String> = (1..=32u32).map(|a| (a * (10 / a + 1)).to_string()).collect();
    format!("256 u32[32]: {}\n", sums.join(" "))
}

#[test]
fn a_published_assembler_binary_runs_disassembles_and_converts_both_ways() {
    let o = wave(&["run", BINARY, "--dump", "256:u32:32"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), expected());
    assert!(text(&o.stderr).contains("a .wbin of the reference toolchain (published-crate (G2))"));
    // Its listing is our canonical text of the reference program.
    let o = wave(&["disasm", BINARY]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let listing = text(&o.stdout);
    assert!(listing.contains("    icmp.gt p0, r2, r6\n        break p0\n"), "{listing}");
    // Ours, then the reference's v0.4 encoding, then ours again: the same program each time.
    let ours = tmp("divergent.ours.wbin");
    let v04 = tmp("divergent.v04.wbin");
    let o = wave(&["convert", BINARY, "-o", ours.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = wave(&[
        "convert",
        ours.to_str().unwrap(),
        "--to",
        "reference",
        "-o",
        v04.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let bytes = std::fs::read(&v04).expect("written");
    assert_eq!(&bytes[..8], b"WAVE\x01\x00\x00\x00", "the reference container");
    for file in [&ours, &v04] {
        let o = wave(&["run", file.to_str().unwrap(), "--dump", "256:u32:32"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout), expected(), "{}", file.display());
        let o = wave(&["disasm", file.to_str().unwrap()]);
        assert_eq!(text(&o.stdout), listing, "{}", file.display());
    }
    let o = wave(&["disasm", v04.to_str().unwrap()]);
    assert!(text(&o.stderr).contains("(v0.4 (G3))"), "{}", text(&o.stderr));
    // Occupancy and backend code from either encoding.
    for file in [BINARY, v04.to_str().unwrap()] {
        let o = wave(&["info", file, "--target", "nvidia"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(text(&o.stdout).contains("divergent"), "{}", text(&o.stdout));
        let o = wave(&["emit", "--target", "ptx", file]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(text(&o.stdout).contains(".entry divergent"), "{}", text(&o.stdout));
    }
}

#[test]
fn parameters_can_be_named_and_unconvertible_instructions_are_located_errors() {
    // A kernel of ours with parameters and `umin`, which the reference has no counterpart for.
    let src = tmp("umin.wave");
    std::fs::write(&src, ".kernel k\n.param out: ptr\n.workgroup_size 32\n    mov r1, sr_lane_id\n    umin r2, r1, r1\n    halt\n.end\n").unwrap();
    let bin = tmp("umin.wbin");
    let o = wave(&["asm", src.to_str().unwrap(), "-o", bin.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = wave(&[
        "convert",
        bin.to_str().unwrap(),
        "--to",
        "reference",
        "-o",
        tmp("no.wbin").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("kernel `k`") && err.contains("umin"), "{err}");
    // A reference binary records no parameters: `--param` names r0, r1, ... for `--arg`.
    let o =
        wave(&["run", BINARY, "--param", "base:ptr", "--arg", "base=512", "--dump", "256:u32:2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = wave(&["run", BINARY, "--param", "base"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("NAME:TYPE"), "{}", text(&o.stderr));
    // A corrupt reference file is a located error.
    let mut bytes = std::fs::read(root().join(BINARY)).unwrap();
    bytes.truncate(40);
    let bad = tmp("truncated.wbin");
    std::fs::write(&bad, bytes).unwrap();
    let o = wave(&["run", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("invalid .wbin at byte"), "{}", text(&o.stderr));
}

/// The reference's published assembler: `WAVE_REFERENCE_ASM`, else where `.ci/run` installs it.
fn reference_assembler() -> Option<PathBuf> {
    let path = std::env::var_os("WAVE_REFERENCE_ASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/reference-tools/bin/wave-asm"));
    path.is_file().then_some(path)
}

#[test]
#[allow(clippy::print_stderr, reason = "says when it did not run, and what it compared")]
fn the_published_assembler_makes_of_the_reference_tests_what_our_assembler_makes() {
    let Some(asm) = reference_assembler() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs the reference assembler (.ci/run): it is missing"
        );
        eprintln!(
            "skipped: the reference assembler wave-asm 0.1.2 is not installed (`cargo install wave-asm --version 0.1.2 --locked --root target/reference-tools`)"
        );
        return;
    };
    let cases =
        wave_conformance::collect(&[root().join("conformance/cases/reference")]).expect("cases");
    let (mut same, mut refused, mut cas, mut differ) = (0, Vec::new(), Vec::new(), Vec::new());
    for path in cases {
        let case = wave_conformance::Case::load(&path).expect("case");
        if case.kernel_source.is_some() || !case.source_name.ends_with(".toml") {
            continue; // compiled kernels and files: not assembly the reference assembler reads
        }
        // The reference's assembler has no `.param` (its runtime passes arguments in r0, r1,
        // ...): the cases that name their registers with one are compared without it.
        let source: String = case
            .source
            .lines()
            .filter(|l| !l.trim_start().starts_with(".param"))
            .map(|l| format!("{l}\n"))
            .collect();
        let ours = wave_asm::assemble(&source, &case.source_name);
        if ours.has_errors() {
            continue; // refused here on purpose (E0105)
        }
        let src = tmp("case.wave");
        let bin = tmp("case.wbin");
        std::fs::write(&src, &source).unwrap();
        let _ = std::fs::remove_file(&bin);
        let o = Command::new(&asm).arg(&src).arg("-o").arg(&bin).output().expect("wave-asm runs");
        if !o.status.success() {
            // Programs of its v0.4, which the published assembler predates: BF16, the MMA
            // queries, registers above r31.
            refused.push(format!("{}: {}", path.display(), text(&o.stderr).trim()));
            continue;
        }
        let (module, generation) =
            wave_wbin::read_any(&std::fs::read(&bin).unwrap()).expect("its binary reads");
        assert_eq!(generation, Some(wave_wbin::reference::Generation::Published));
        let theirs: Vec<Vec<wave_isa::Inst>> = module
            .kernels
            .iter()
            .map(|k| module.instructions(k).map(|(_, i)| i).collect())
            .collect();
        let mine: Vec<Vec<wave_isa::Inst>> = ours
            .module
            .kernels
            .iter()
            .map(|k| ours.module.instructions(k).map(|(_, i)| i).collect())
            .collect();
        if theirs == mine {
            same += 1;
        } else if case.source.contains("_cas") {
            // wave-asm 0.1.2 writes a compare-and-swap as an add (modifier 0) followed by a
            // word its own decoder reads as a separate instruction (docs/compatibility.md).
            cas.push(path.display().to_string());
        } else {
            differ.push(format!("{}:\n  theirs {theirs:?}\n  ours   {mine:?}", path.display()));
        }
    }
    eprintln!(
        "{same} programs decode to the same instructions; {} use its compare-and-swap, which it encodes as an add; {} refused by wave-asm 0.1.2:",
        cas.len(),
        refused.len()
    );
    for r in &refused {
        eprintln!("  {r}");
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(same >= 90, "only {same} programs compared");
}

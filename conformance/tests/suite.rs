//! Runs the whole conformance suite (`cases/`) at every listed wave width, and checks that
//! every opcode of the isa table has at least one case.

use std::path::PathBuf;

fn cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases")
}

#[test]
fn every_case_passes_at_every_width() {
    let summary = wave_conformance::run_paths(&[cases()]).expect("the cases folder reads");
    assert!(summary.passed >= 1, "no case ran");
    assert!(
        summary.failures.is_empty(),
        "{} passed, {} failed:\n{}",
        summary.passed,
        summary.failures.len(),
        summary.failures.join("\n")
    );
}

#[test]
fn every_opcode_has_a_conformance_case() {
    let mut used = std::collections::BTreeSet::new();
    for path in wave_conformance::collect(&[cases()]).expect("cases") {
        let Ok(case) = wave_conformance::Case::load(&path) else { continue };
        let assembly = wave_asm::assemble(&case.source, "case.wave");
        for placed in &assembly.placed {
            used.insert(placed.inst.opcode);
        }
    }
    let missing: Vec<&str> = wave_isa::OPCODES
        .iter()
        .filter(|op| !used.contains(&op.opcode))
        .map(|op| op.mnemonic)
        .collect();
    assert!(missing.is_empty(), "opcodes without a conformance case: {missing:?}");
}

#[test]
fn every_case_is_the_same_on_1_2_and_8_threads() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in wave_conformance::collect(&[cases()]).expect("cases") {
        let case = wave_conformance::Case::load(&path).expect("the case reads");
        if let Err(e) = case.same_at_thread_counts(&[2, 8]) {
            failures.push(format!("{}: {e}", path.display()));
        }
        ran += 1;
    }
    assert!(ran >= 1, "no case ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

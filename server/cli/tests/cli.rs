//! End-to-end tests of the `wave` binary: exit codes, files written, and golden outputs.
//!
//! Golden files live in `tests/golden/`; run with `UPDATE_EXPECT=1` to rewrite them, then
//! review the diff.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wave(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wave"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the wave binary runs")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wave-cli-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

#[track_caller]
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "{} differs (run with UPDATE_EXPECT=1 to update):\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn asm_then_disasm_gives_the_canonical_listing() {
    let out = tmp("vector_add.wbin");
    let o = wave(&["asm", "compiler/asm/tests/data/vector_add.wave", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stderr.is_empty(), "no diagnostics expected: {}", text(&o.stderr));
    let o = wave(&["disasm", out.to_str().unwrap()]);
    assert!(o.status.success());
    golden("vector_add.disasm", &text(&o.stdout));
    // The listing reassembles to the same bytes.
    let listing = tmp("listing.wave");
    std::fs::write(&listing, &o.stdout).unwrap();
    let again = tmp("again.wbin");
    let o = wave(&["asm", listing.to_str().unwrap(), "-o", again.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let a = wave_wbin::read(&std::fs::read(&out).unwrap()).unwrap();
    let b = wave_wbin::read(&std::fs::read(&again).unwrap()).unwrap();
    assert_eq!((a.code, a.kernels, a.symbols), (b.code, b.kernels, b.symbols));
}

#[test]
fn check_renders_every_diagnostic_like_rustc_and_exits_1() {
    let o = wave(&["--color", "never", "check", "server/cli/tests/data/errors.wave"]);
    assert_eq!(o.status.code(), Some(1));
    golden("errors.stderr", &text(&o.stderr));
    let o = wave(&["check", "compiler/asm/tests/data/vector_add.wave"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn fmt_rewrites_in_place_and_check_mode_reports() {
    let file = tmp("unformatted.wave");
    std::fs::copy(root().join("server/cli/tests/data/unformatted.wave"), &file).unwrap();
    let o = wave(&["fmt", "--check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("is not formatted"));
    let o = wave(&["fmt", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let formatted = std::fs::read_to_string(&file).unwrap();
    golden("unformatted.fmt", &formatted);
    let o = wave(&["fmt", "--check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "formatting is idempotent");
    // A file with errors is left alone.
    let bad = tmp("bad.wave");
    std::fs::copy(root().join("server/cli/tests/data/errors.wave"), &bad).unwrap();
    let o = wave(&["fmt", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        std::fs::read(&bad).unwrap(),
        std::fs::read(root().join("server/cli/tests/data/errors.wave")).unwrap()
    );
}

#[test]
fn info_reports_constants_and_occupancy() {
    let o = wave(&["info", "--target", "spec-minimum"]);
    assert!(o.status.success());
    golden("info-spec-minimum.stdout", &text(&o.stdout));
    let o = wave(&["info", "compiler/asm/tests/data/vector_add.wave", "--target", "nvidia"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    golden("info-vector_add-nvidia.stdout", &text(&o.stdout));
    let o = wave(&["info", "--list-targets"]);
    assert!(text(&o.stdout).contains("amd-cdna"));
}

#[test]
fn bad_input_and_bad_usage_get_clear_errors_and_exit_codes() {
    // Corrupt .wbin: located error, exit 1.
    let file = tmp("corrupt.wbin");
    std::fs::write(&file, b"WAVEBIN\0\x01\x00\x00\x00garbage").unwrap();
    let o = wave(&["disasm", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("invalid .wbin at byte"), "{}", text(&o.stderr));
    // Missing file, unknown target, unknown subcommand, bad --workgroup: exit 2.
    assert_eq!(wave(&["asm", "no/such/file.wave"]).status.code(), Some(2));
    let o = wave(&["info", "--target", "nvidai"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown target `nvidai`"));
    assert_eq!(wave(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        wave(&["info", "compiler/asm/tests/data/vector_add.wave", "--workgroup", "0"])
            .status
            .code(),
        Some(2)
    );
    // Not UTF-8: exit 1 with the offset.
    let file = tmp("binary.wave");
    std::fs::write(&file, b".kernel k\n\xff\xfe\n.end\n").unwrap();
    let o = wave(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("not UTF-8"), "{}", text(&o.stderr));
}

//! The kernel set (`kernels/<language>/`): every case compiled at every optimisation level
//! and run at every wave width it lists; and the hand-written assembly of the same kernels
//! (`kernels/handwritten/`), which the quality benchmark compares against.

use std::path::PathBuf;

use wave_kernel::opt::Level;

fn kernels() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

#[test]
fn every_kernel_case_passes_at_every_level_and_width() {
    let paths = wave_conformance::collect(&[kernels()]).expect("the kernels folder reads");
    let mut failures = Vec::new();
    let mut runs = 0;
    for path in &paths {
        let case = match wave_conformance::Case::load(path) {
            Ok(case) => case,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        if case.kernel_source.is_none() {
            // Hand-written assembly of the same kernels (the quality benchmark's baseline).
            runs += 1;
            if let Err(e) = case.run() {
                failures.push(format!("{}: {e}", path.display()));
            }
            continue;
        }
        for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
            runs += 1;
            if let Err(e) = case.at_level(level).run() {
                failures.push(format!("{} at {level:?}: {e}", path.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_python_set_has_every_kernel_of_the_issue() {
    for name in wave_conformance::KERNEL_SET {
        let path = kernels().join("python").join(format!("{name}.toml"));
        let case = wave_conformance::Case::load(&path).expect("the case reads");
        assert_eq!(case.wave_widths, vec![8, 16, 32, 64], "{name} runs at every width");
    }
}

#[test]
fn every_python_kernel_has_a_hand_written_twin_with_the_same_case() {
    for name in wave_conformance::KERNEL_SET {
        let load = |dir: &str| {
            wave_conformance::Case::load(&kernels().join(dir).join(format!("{name}.toml")))
                .expect("the case reads")
        };
        let (py, hand) = (load("python"), load("handwritten"));
        assert!(hand.kernel_source.is_none());
        assert_eq!(
            (&py.kernel, py.grid, py.workgroup, &py.args, &py.memory, &py.expect),
            (&hand.kernel, hand.grid, hand.workgroup, &hand.args, &hand.memory, &hand.expect),
            "{name}: the same dispatch, data and expectations"
        );
    }
}

#[test]
fn a_kernel_that_does_not_compile_is_reported_with_its_code() {
    let dir = std::env::temp_dir().join(format!("wave-kernel-case-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("bad.py"),
        "import wave\n\n@wave.kernel\ndef k(out: f32[:]):\n    out[0] = wave.lane_id() + 2.5\n",
    )
    .expect("write");
    let case_text = "name = \"bad\"\nfile = \"bad.py\"\n";
    let expect = "[[expect]]\noffset = 0\nf32 = [3.5]\n";
    std::fs::write(dir.join("bad.toml"), format!("{case_text}{expect}")).expect("write");
    let case = wave_conformance::Case::load(&dir.join("bad.toml")).expect("reads");
    let e = case.run().expect_err("does not compile");
    assert!(e.contains("does not compile") && e.contains("E0401"), "{e}");
    std::fs::write(dir.join("bad.toml"), format!("{case_text}expect_error = \"E0401\"\n"))
        .expect("write");
    let case = wave_conformance::Case::load(&dir.join("bad.toml")).expect("reads");
    assert_eq!(case.run(), Ok(()));
    std::fs::write(dir.join("bad.toml"), format!("{case_text}opt = 7\n{expect}")).expect("write");
    let e = wave_conformance::Case::load(&dir.join("bad.toml")).expect_err("opt 7");
    assert!(e.contains("`opt` is 0, 1, 2 or 3"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

//! The kernel set (`kernels/<language>/`, in Python, Rust, C++ and TypeScript): every case
//! compiled at every optimisation level and run at every wave width it lists; the same kernel
//! in four languages compiled to the same code; and the hand-written assembly of the same
//! kernels (`kernels/handwritten/`), which the quality benchmark compares against.

use std::path::PathBuf;

use wave_kernel::opt::Level;

fn kernels() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

#[test]
fn every_kernel_case_is_the_same_on_1_2_and_8_threads_at_every_level() {
    let paths = wave_conformance::collect(&[kernels()]).expect("the kernels folder reads");
    let mut failures = Vec::new();
    for path in &paths {
        let case = wave_conformance::Case::load(path).expect("the case reads");
        let levels: &[Level] = if case.kernel_source.is_some() {
            &[Level::O0, Level::O1, Level::O2, Level::O3]
        } else {
            &[Level::O2]
        };
        for &level in levels {
            if let Err(e) = case.at_level(level).same_at_thread_counts(&[2, 8]) {
                failures.push(format!("{} at {level:?}: {e}", path.display()));
            }
        }
    }
    assert!(paths.len() > 1, "no kernel case");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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

/// The folders of the other languages, with their file extension.
const OTHER_LANGUAGES: [(&str, wave_kernel::Language); 3] = [
    ("rust", wave_kernel::Language::Rust),
    ("cpp", wave_kernel::Language::Cpp),
    ("typescript", wave_kernel::Language::TypeScript),
];

/// `block_sums` → `blockSums`: TypeScript's names.
fn camel(name: &str) -> String {
    let mut parts = name.split('_');
    let mut out = parts.next().unwrap_or("").to_owned();
    for p in parts {
        let mut c = p.chars();
        out.extend(c.next().map(|f| f.to_ascii_uppercase()));
        out.push_str(c.as_str());
    }
    out
}

#[test]
fn every_language_has_the_kernel_set_with_the_python_case() {
    for (dir, language) in OTHER_LANGUAGES {
        for name in wave_conformance::KERNEL_SET {
            let load = |dir: &str| {
                wave_conformance::Case::load(&kernels().join(dir).join(format!("{name}.toml")))
                    .unwrap_or_else(|e| panic!("{dir}/{name}.toml: {e}"))
            };
            let (py, other) = (load("python"), load(dir));
            let source = other.kernel_source.as_ref().expect("compiled from a kernel source");
            assert_eq!(source.language, language, "{dir}/{name}");
            let names = |c: &wave_conformance::Case| -> Vec<(String, u32)> {
                let ts = language == wave_kernel::Language::TypeScript;
                c.args.iter().map(|(k, v)| (if ts { camel(k) } else { k.clone() }, *v)).collect()
            };
            assert_eq!(
                (py.grid, py.workgroup, names(&py), &py.memory, &py.expect, &py.wave_widths),
                (
                    other.grid,
                    other.workgroup,
                    other.args.clone(),
                    &other.memory,
                    &other.expect,
                    &other.wave_widths
                ),
                "{dir}/{name}: the same dispatch, data and expectations as Python"
            );
        }
    }
}

/// The same kernel in four languages is the same HIR (up to TypeScript's camelCase names), so
/// the same code: the same registers and the same instructions at O2.
#[test]
fn the_same_kernel_in_four_languages_compiles_to_the_same_code() {
    let compile = |path: &std::path::Path, language| {
        let text = std::fs::read_to_string(path).expect("the kernel reads");
        let hir = wave_kernel::hir::print(&wave_kernel::hir(&text, language).0);
        let options = wave_kernel::Options::default();
        let (out, d) = wave_kernel::compile(&text, language, &path.display().to_string(), options);
        let out = out.unwrap_or_else(|| panic!("{}: {d:?}", path.display()));
        let k = &out.module.kernels[0];
        // The instructions without names (TypeScript's are camelCase).
        let shape: Vec<String> = out
            .asm
            .lines()
            .filter(|l| !l.trim_start().starts_with(['.', ';']) && !l.trim().is_empty())
            .map(|l| l.split_whitespace().next().unwrap_or("").to_owned())
            .collect();
        (hir, k.registers, shape)
    };
    for name in wave_conformance::KERNEL_SET {
        let py = kernels().join("python").join(format!("{name}.py"));
        let (py_hir, py_r, py_shape) = compile(&py, wave_kernel::Language::Python);
        for (dir, language) in OTHER_LANGUAGES {
            let path = kernels().join(dir).join(format!("{name}.{}", language.extension()));
            let (hir, r, shape) = compile(&path, language);
            let hir = if language == wave_kernel::Language::TypeScript {
                // TypeScript names the kernel and its variables in camelCase.
                let mut renamed = hir;
                for v in py_hir.split(|c: char| !c.is_ascii_alphanumeric() && c != '_') {
                    if v.contains('_') && !v.starts_with('_') {
                        renamed = renamed.replace(&camel(v), v);
                    }
                }
                renamed
            } else {
                hir
            };
            assert_eq!(hir, py_hir, "{dir}/{name}: the HIR of the Python kernel");
            assert_eq!(r, py_r, "{dir}/{name}: the registers of the Python kernel at O2");
            assert_eq!(
                shape, py_shape,
                "{dir}/{name}: the instructions of the Python kernel at O2"
            );
        }
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

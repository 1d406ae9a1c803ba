//! Every translation is accepted by the target's real toolchain: `ptxas` (sm_75 and sm_90),
//! `hipcc --offload-arch=gfx90a`, `g++ -fsyntax-only` against the DPC++ SYCL headers, and
//! clang against the Metal stub header (syntax and types only: no Metal compiler runs here).
//!
//! The tools are installed by `.ci/install-backend-tools`, which writes their paths to
//! `/opt/wave-tools/env.sh` (or `$WAVE_TOOLS_PREFIX/env.sh`); `.ci/run` installs them. Without
//! them this test fails and says how to install them, unless `WAVE_SKIP_TOOLCHAINS=1` is set.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use wave_backends::Target;

/// The tool settings: the environment, then the install script's env.sh.
fn tools() -> Option<HashMap<String, String>> {
    let prefix = std::env::var("WAVE_TOOLS_PREFIX").unwrap_or_else(|_| "/opt/wave-tools".into());
    let mut vars: HashMap<String, String> = HashMap::new();
    if let Ok(text) = std::fs::read_to_string(Path::new(&prefix).join("env.sh")) {
        for line in text.lines() {
            if let Some((k, v)) = line.strip_prefix("export ").and_then(|l| l.split_once('=')) {
                vars.insert(k.to_string(), v.trim_matches('"').to_string());
            }
        }
    }
    for (k, v) in std::env::vars() {
        if k.starts_with("WAVE_") {
            vars.insert(k, v);
        }
    }
    let needed = [
        "WAVE_PTXAS",
        "WAVE_HIPCC",
        "WAVE_SYCL_CXX",
        "WAVE_SYCL_FLAGS",
        "WAVE_METAL_CLANG",
        "WAVE_METAL_FLAGS",
    ];
    needed.iter().all(|k| vars.contains_key(*k)).then_some(vars)
}

fn scratch(target: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wave-toolchains-{}-{target}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Runs `make(file)` for every file on two threads; returns the failures.
fn run_all(files: Vec<(String, PathBuf)>, make: &(dyn Fn(&Path) -> Command + Sync)) -> Vec<String> {
    let failures = std::sync::Mutex::new(Vec::new());
    let (a, b): (Vec<_>, Vec<_>) = files.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    std::thread::scope(|s| {
        for half in [a, b] {
            let failures = &failures;
            s.spawn(move || {
                for (_, (key, file)) in half {
                    let out = make(file).output();
                    let failed = match &out {
                        Ok(o) if o.status.success() => None,
                        Ok(o) => Some(
                            String::from_utf8_lossy(&o.stderr)
                                .lines()
                                .take(6)
                                .collect::<Vec<_>>()
                                .join("\n"),
                        ),
                        Err(e) => Some(e.to_string()),
                    };
                    if let Some(why) = failed {
                        failures.lock().expect("lock").push(format!("{key}:\n{why}"));
                    }
                }
            });
        }
    });
    failures.into_inner().expect("lock")
}

fn split(flags: &str) -> Vec<String> {
    flags.split_whitespace().map(str::to_string).collect()
}

/// Writes each accepted translation of `target` to a scratch folder.
fn write_outputs(target: Target, sm: u32, tag: &str) -> Vec<(String, PathBuf)> {
    let dir = scratch(tag);
    let mut files = Vec::new();
    for o in common::outputs(target, &common::options(sm)) {
        if let Ok(t) = o.result {
            let file = dir.join(format!("{}.{}", o.key.replace('/', "__"), target.extension()));
            std::fs::write(&file, t.text).expect("write");
            files.push((o.key, file));
        }
    }
    assert!(files.len() > 100, "{tag}: only {} translations", files.len());
    files
}

#[test]
fn real_toolchains_accept_every_translation() {
    if std::env::var_os("WAVE_SKIP_TOOLCHAINS").is_some_and(|v| v == "1") {
        return;
    }
    let Some(t) = tools() else {
        panic!(
            "the backend toolchains are not installed: run `.ci/install-backend-tools` (or set WAVE_SKIP_TOOLCHAINS=1 to skip this test)"
        );
    };
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    // PTX: the sm_75 form for sm_75 and sm_90, and the sm_90 form (redux.sync) for sm_90.
    let ptxas = t["WAVE_PTXAS"].clone();
    let ptx75 = write_outputs(Target::Ptx, 75, "ptx75");
    for arch in ["sm_75", "sm_90"] {
        failures.extend(run_all(ptx75.clone(), &|f| {
            let mut c = Command::new(&ptxas);
            c.args(["-arch", arch, "-o", "/dev/null"]).arg(f);
            c
        }));
    }
    let ptx90 = write_outputs(Target::Ptx, 90, "ptx90");
    failures.extend(run_all(ptx90.clone(), &|f| {
        let mut c = Command::new(&ptxas);
        c.args(["-arch", "sm_90", "-o", "/dev/null"]).arg(f);
        c
    }));
    counts.push(format!("ptx {} (sm_75, sm_90) + {} (sm_90 form)", ptx75.len(), ptx90.len()));
    // HIP.
    let hip = write_outputs(Target::Hip, 75, "hip");
    let hip_flags =
        split(t.get("WAVE_HIPCC_FLAGS").map_or("--offload-arch=gfx90a -c", String::as_str));
    let obj = scratch("hip-obj");
    failures.extend(run_all(hip.clone(), &|f| {
        let mut c = Command::new(&t["WAVE_HIPCC"]);
        c.args(&hip_flags)
            .arg(f)
            .arg("-o")
            .arg(obj.join(f.file_name().unwrap_or_default()).with_extension("o"));
        c
    }));
    counts.push(format!("hip {}", hip.len()));
    // SYCL.
    let sycl = write_outputs(Target::Sycl, 75, "sycl");
    let mut sycl_flags = split(&t["WAVE_SYCL_FLAGS"]);
    sycl_flags.push("-Wno-attributes=sycl::".into());
    failures.extend(run_all(sycl.clone(), &|f| {
        let mut c = Command::new(&t["WAVE_SYCL_CXX"]);
        c.args(&sycl_flags).arg(f);
        c
    }));
    counts.push(format!("sycl {}", sycl.len()));
    // Metal, against the stub header.
    let metal = write_outputs(Target::Metal, 75, "metal");
    let stub = common::root().join("backends/metal/stub");
    let metal_flags = split(&t["WAVE_METAL_FLAGS"]);
    failures.extend(run_all(metal.clone(), &|f| {
        let mut c = Command::new(&t["WAVE_METAL_CLANG"]);
        c.args(&metal_flags).arg("-I").arg(&stub).arg(f);
        c
    }));
    counts.push(format!("metal {}", metal.len()));
    assert!(
        failures.is_empty(),
        "{} translations rejected:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // The counts show in `cargo test -- --nocapture`.
    #[allow(clippy::print_stderr, reason = "a summary of what was checked")]
    {
        eprintln!("accepted: {}", counts.join(", "));
    }
}

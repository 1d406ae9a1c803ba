//! Golden snapshots: every conformance case translated by every backend, compared with the
//! files under `backends/tests/golden/<target>/`. A case a target refuses has a
//! `.refused.txt` file with the diagnostics instead. Run with `UPDATE_EXPECT=1` to rewrite
//! them, then review the diff.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use wave_backends::Target;

fn golden_dir(target: Target) -> PathBuf {
    common::root().join("backends/tests/golden").join(target.name())
}

fn check_target(target: Target) {
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let dir = golden_dir(target);
    let mut expected_files = BTreeSet::new();
    let mut stale = Vec::new();
    for o in common::outputs(target, &common::options(75)) {
        let (file, text) = match &o.result {
            Ok(t) => (dir.join(format!("{}.{}", o.key, target.extension())), t.text.clone()),
            Err(e) => (dir.join(format!("{}.refused.txt", o.key)), e.clone()),
        };
        expected_files.insert(file.clone());
        if update {
            std::fs::create_dir_all(file.parent().expect("parent")).expect("golden dir");
            std::fs::write(&file, &text).expect("write golden");
            continue;
        }
        let old = std::fs::read_to_string(&file).unwrap_or_default();
        if old != text {
            stale.push(file.display().to_string());
        }
    }
    // Files that no case produces any more.
    let mut orphans = Vec::new();
    for entry in walk(&dir) {
        if !expected_files.contains(&entry) {
            if update {
                std::fs::remove_file(&entry).expect("remove orphan golden");
            } else {
                orphans.push(entry.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty() && orphans.is_empty(),
        "{} golden files differ and {} have no case (run with UPDATE_EXPECT=1, then review the diff):\n{}\n{}",
        stale.len(),
        orphans.len(),
        stale.join("\n"),
        orphans.join("\n")
    );
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn ptx_goldens() {
    check_target(Target::Ptx);
}

#[test]
fn hip_goldens() {
    check_target(Target::Hip);
}

#[test]
fn sycl_goldens() {
    check_target(Target::Sycl);
}

#[test]
fn metal_goldens() {
    check_target(Target::Metal);
}

/// The refusals are exactly the documented ones: recursion on SYCL and Metal (which forbid
/// it in device code), and on Metal binary64, 64-bit atomics and the traps it cannot express.
#[test]
fn only_the_documented_cases_are_refused() {
    for target in Target::ALL {
        for o in common::outputs(target, &common::options(75)) {
            if let Err(e) = &o.result {
                let allowed = (e.contains("[E0302]")
                    && matches!(target, Target::Sycl | Target::Metal))
                    || (target == Target::Metal
                        && (e.contains("binary64")
                            || e.contains("64-bit atomics")
                            || e.contains("no way to stop a kernel")));
                assert!(allowed, "{} refused for {}: {e}", o.key, target.name());
            }
        }
    }
}

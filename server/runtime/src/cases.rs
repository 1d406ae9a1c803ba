//! Test cases (docs/testcase-format.md) on a device.
//!
//! On the emulator a case means what `wave_conformance::Case::run` says. On a GPU three
//! things differ, and each is decided in one place:
//!
//! - **Which cases run** ([`gpu_not_run`]) and **how memory is compared**
//!   ([`compare_on_gpu`]): in the room below this one, `verdict`, re-exported here, so that
//!   the worker processes of [`crate::workers`] use the same rules without depending on the
//!   batch runner.
//! - **Which levels run**: a kernel-source case at its own level, or at every level
//!   ([`Levels::All`]); the same holds on the emulator.

use std::path::{Path, PathBuf};

use wave_conformance::Case;
use wave_kernel::opt::Level;

pub use crate::verdict::{
    IMPLEMENTATION_DEFINED, Verdict, compare_on_gpu, gpu_not_run, run_on_gpu,
};
use crate::workers::GpuWorkers;

/// Which optimisation levels a kernel-source case runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Levels {
    /// The case's own level (`opt = N`, 2 when absent).
    Case,
    /// One level for every case.
    One(Level),
    /// `-O0` to `-O3`.
    All,
}

impl std::str::FromStr for Levels {
    type Err = String;

    fn from_str(s: &str) -> Result<Levels, String> {
        if s == "all" {
            return Ok(Levels::All);
        }
        Level::from_digit(s.trim_start_matches('O'))
            .map(Levels::One)
            .ok_or_else(|| format!("unknown level `{s}`: expected 0, 1, 2, 3 or all"))
    }
}

/// The outcome of running many cases.
#[derive(Debug, Default)]
pub struct Summary {
    /// Runs that passed (a case at one level is one run).
    pub passed: usize,
    /// One line per failed run: the case, its level where it has one, what went wrong.
    pub failures: Vec<String>,
    /// One line per run not made on this device: the case and why.
    pub not_run: Vec<String>,
}

/// Where [`run_paths`] runs cases.
pub enum Runner {
    /// The emulator, in this process.
    Emulator,
    /// A GPU, through worker processes.
    Gpu(GpuWorkers),
}

/// Runs every case under `paths` with `runner`, at `levels`.
pub fn run_paths(
    paths: &[PathBuf],
    runner: &mut Runner,
    levels: Levels,
) -> Result<Summary, String> {
    let mut summary = Summary::default();
    for path in wave_conformance::collect(paths)? {
        let case = match Case::load(&path) {
            Ok(c) => c,
            Err(e) => {
                summary.failures.push(located(&path, None, e));
                continue;
            }
        };
        let at: Vec<Option<Level>> = match (&case.kernel_source, levels) {
            (None, _) | (Some(_), Levels::Case) => vec![None],
            (Some(_), Levels::One(l)) => vec![Some(l)],
            (Some(_), Levels::All) => {
                [Level::O0, Level::O1, Level::O2, Level::O3].map(Some).to_vec()
            }
        };
        for level in at {
            let verdict = match runner {
                Runner::Emulator => {
                    let case = level.map_or_else(|| case.clone(), |l| case.at_level(l));
                    match case.run() {
                        Ok(()) => Verdict::Pass,
                        Err(e) => Verdict::Fail(e),
                    }
                }
                Runner::Gpu(workers) => workers.run(&path, level),
            };
            match verdict {
                Verdict::Pass => summary.passed += 1,
                Verdict::Fail(e) => summary.failures.push(located(&path, level, e)),
                Verdict::NotRun(why) => summary.not_run.push(located(&path, level, why)),
            }
        }
    }
    Ok(summary)
}

fn located(path: &Path, level: Option<Level>, message: String) -> String {
    let name = path.display().to_string();
    let message = message.strip_prefix(&format!("{name}: ")).map_or(message.clone(), Into::into);
    match level {
        Some(l) => format!("{name} (-O{}): {message}", l.digit()),
        None => format!("{name}: {message}"),
    }
}

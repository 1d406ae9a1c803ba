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

/// Runs every case under `paths` with `runner`, at `levels`. On the emulator the runs share
/// `threads` threads: side by side, and each case's workgroups on its share.
pub fn run_paths(
    paths: &[PathBuf],
    runner: &mut Runner,
    levels: Levels,
    threads: usize,
) -> Result<Summary, String> {
    // Every run first (a case at one level), in order; a case that does not read is a failure.
    let mut runs: Vec<(PathBuf, Result<Case, String>, Option<Level>)> = Vec::new();
    for path in wave_conformance::collect(paths)? {
        let case = match Case::load(&path) {
            Ok(c) => c,
            Err(e) => {
                runs.push((path, Err(e), None));
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
            runs.push((path.clone(), Ok(case.clone()), level));
        }
    }
    let verdicts: Vec<Verdict> = match runner {
        Runner::Emulator => on_emulator(&runs, threads.max(1)),
        Runner::Gpu(workers) => runs
            .iter()
            .map(|(path, case, level)| match case {
                Ok(_) => workers.run(path, *level),
                Err(e) => Verdict::Fail(e.clone()),
            })
            .collect(),
    };
    let mut summary = Summary::default();
    for ((path, _, level), verdict) in runs.iter().zip(verdicts) {
        match verdict {
            Verdict::Pass => summary.passed += 1,
            Verdict::Fail(e) => summary.failures.push(located(path, *level, e)),
            Verdict::NotRun(why) => summary.not_run.push(located(path, *level, why)),
        }
    }
    Ok(summary)
}

/// The verdicts of `runs` on the emulator, in order, from `threads` threads.
fn on_emulator(
    runs: &[(PathBuf, Result<Case, String>, Option<Level>)],
    threads: usize,
) -> Vec<Verdict> {
    let each = (threads / runs.len().max(1)).max(1) as u32;
    let one = |(_, case, level): &(PathBuf, Result<Case, String>, Option<Level>)| {
        let case = match case {
            Ok(case) => case,
            Err(e) => return Verdict::Fail(e.clone()),
        };
        let mut case = level.map_or_else(|| case.clone(), |l| case.at_level(l));
        case.threads = each;
        match case.run() {
            Ok(()) => Verdict::Pass,
            Err(e) => Verdict::Fail(e),
        }
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut verdicts: Vec<Option<Verdict>> = runs.iter().map(|_| None).collect();
    let work = || {
        let mut out = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(run) = runs.get(i) else { return out };
            out.push((i, one(run)));
        }
    };
    let done: Vec<(usize, Verdict)> = std::thread::scope(|scope| {
        // Threads that cannot be started leave their share to the others, or to this one.
        let workers: Vec<_> = (0..threads.min(runs.len()).min(1024))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut done: Vec<(usize, Verdict)> =
            workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect();
        done.extend(work());
        done
    });
    for (i, v) in done {
        verdicts[i] = Some(v);
    }
    verdicts
        .into_iter()
        .map(|v| {
            v.unwrap_or_else(|| Verdict::Fail("the run did not finish (a worker stopped)".into()))
        })
        .collect()
}

fn located(path: &Path, level: Option<Level>, message: String) -> String {
    let name = path.display().to_string();
    let message = message.strip_prefix(&format!("{name}: ")).map_or(message.clone(), Into::into);
    match level {
        Some(l) => format!("{name} (-O{}): {message}", l.digit()),
        None => format!("{name}: {message}"),
    }
}

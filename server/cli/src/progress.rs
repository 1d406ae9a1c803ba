//! The progress line of a long `wave run`: on a terminal, once the run has taken a second,
//! `workgroups done of total, lane-ops per second` on stderr, rewritten in place and
//! cleared when the run ends.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use wave_emulator::Progress;

/// How long a run goes before the line appears, and how often it is rewritten.
const AFTER: Duration = Duration::from_secs(1);
const EVERY: Duration = Duration::from_millis(250);

/// The text of the line.
pub(crate) fn line(progress: &Progress, workgroups: u64, elapsed: Duration) -> String {
    let done = progress.workgroups.load(Ordering::Relaxed);
    let rate = progress.lane_ops.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64().max(1e-3);
    format!(
        "running: {done} of {workgroups} workgroups, {:.2} G lane-ops/s, {:.1} s",
        rate / 1e9,
        elapsed.as_secs_f64()
    )
}

/// Runs `work` with `progress` shown on stderr when it is a terminal (and `show` is true).
pub(crate) fn shown<T>(
    show: bool,
    progress: &Arc<Progress>,
    workgroups: u64,
    work: impl FnOnce() -> T,
) -> T {
    if !show || !std::io::stderr().is_terminal() {
        return work();
    }
    let done = (Mutex::new(false), Condvar::new());
    let start = Instant::now();
    std::thread::scope(|scope| {
        let (done, progress) = (&done, &progress);
        scope.spawn(move || {
            let mut wrote = false;
            let Ok(mut finished) = done.0.lock() else { return };
            let mut wait = AFTER;
            loop {
                let Ok((guard, _)) = done.1.wait_timeout(finished, wait) else { return };
                finished = guard;
                if *finished {
                    break;
                }
                wait = EVERY;
                let text = line(progress, workgroups, start.elapsed());
                let _ = write!(std::io::stderr().lock(), "\r\x1b[K{text}");
                wrote = true;
            }
            if wrote {
                let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
            }
        });
        let result = work();
        if let Ok(mut finished) = done.0.lock() {
            *finished = true;
        }
        done.1.notify_all();
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_workgroups_and_the_rate() {
        let p = Progress::default();
        p.workgroups.store(12, Ordering::Relaxed);
        p.lane_ops.store(3_000_000_000, Ordering::Relaxed);
        assert_eq!(
            line(&p, 64, Duration::from_secs(2)),
            "running: 12 of 64 workgroups, 1.50 G lane-ops/s, 2.0 s"
        );
    }
}

//! Test cases on a GPU, each in a worker process that a fault or a hang cannot take along.
//!
//! A kernel that faults spoils the CUDA driver's state for the rest of its process, and a
//! kernel that never ends cannot be stopped from inside it. So a supervisor ([`GpuWorkers`])
//! hands cases one at a time to a worker process ([`serve`]) and starts a new worker after a
//! fault, a timeout or a death. The worker is any program that calls [`serve`] on its standard
//! input and output; `wave` has a hidden `gpu-worker` subcommand for it.
//!
//! The protocol is one line each way. A job: `LEVEL<TAB>PATH`, LEVEL being `-` (the case's
//! own) or a digit. A reply: `P` (pass), `F<TAB>message` or `N<TAB>reason` (not run), the
//! message on one line; a `!` after the letter says that the worker exits after this reply
//! (its GPU can run nothing more). A worker that cannot open its GPU writes `E<TAB>message`
//! and exits.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use wave_conformance::Case;
use wave_kernel::opt::Level;

use crate::Gpu;
use crate::verdict::{Verdict, run_on_gpu};

/// Extra time a worker gets beyond the kernel's timeout, for loading the case, compiling it and
/// the driver's PTX compiler.
const GRACE: Duration = Duration::from_secs(30);

/// The worker's side: runs the jobs read from `input` on GPU `ordinal` (with PTX for `sm`, or
/// the GPU's own), replying on `output`.
pub fn serve(
    ordinal: u32,
    sm: Option<u32>,
    timeout: Duration,
    input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<()> {
    let mut gpu = match Gpu::open(ordinal) {
        Ok(g) => g,
        Err(e) => return writeln!(output, "E\t{}", one_line(&e.to_string())),
    };
    if let Some(sm) = sm
        && let Err(e) = gpu.set_sm(sm)
    {
        return writeln!(output, "E\t{e}");
    }
    for line in input.lines() {
        let line = line?;
        let verdict = match parse_job(&line) {
            Ok((level, path)) => match Case::load(Path::new(path)) {
                Ok(case) => {
                    let case = level.map_or_else(|| case.clone(), |l| case.at_level(l));
                    run_on_gpu(&case, &mut gpu, timeout)
                }
                Err(e) => Verdict::Fail(e),
            },
            Err(e) => Verdict::Fail(e),
        };
        // `!` after the kind: this worker exits after this reply.
        let leaving = if gpu.gone().is_some() { "!" } else { "" };
        let reply = match verdict {
            Verdict::Pass => format!("P{leaving}"),
            Verdict::Fail(m) => format!("F{leaving}\t{}", one_line(&m)),
            Verdict::NotRun(m) => format!("N{leaving}\t{}", one_line(&m)),
        };
        writeln!(output, "{reply}")?;
        output.flush()?;
        if !leaving.is_empty() {
            break;
        }
    }
    Ok(())
}

fn parse_job(line: &str) -> Result<(Option<Level>, &str), String> {
    let (level, path) = line.split_once('\t').ok_or_else(|| format!("bad job `{line}`"))?;
    let level = match level {
        "-" => None,
        d => Some(Level::from_digit(d).ok_or_else(|| format!("bad level `{d}`"))?),
    };
    Ok((level, path))
}

fn one_line(text: &str) -> String {
    text.trim_end().replace('\n', " | ")
}

/// The supervisor's side: one worker at a time, replaced when it stops.
pub struct GpuWorkers {
    start: Box<dyn Fn() -> Command>,
    timeout: Duration,
    grace: Duration,
    worker: Option<Worker>,
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
}

impl GpuWorkers {
    /// Workers started by `start` (a command whose program calls [`serve`]), each kernel
    /// given `timeout`.
    pub fn new(start: impl Fn() -> Command + 'static, timeout: Duration) -> GpuWorkers {
        GpuWorkers { start: Box::new(start), timeout, grace: GRACE, worker: None }
    }

    /// Another allowance beyond the kernel's timeout (30 s by default).
    pub fn with_grace(mut self, grace: Duration) -> GpuWorkers {
        self.grace = grace;
        self
    }

    /// Runs the case at `path` (at `level`, or its own) in a worker.
    pub fn run(&mut self, path: &Path, level: Option<Level>) -> Verdict {
        let Some(path_text) = path.to_str().filter(|p| !p.contains(['\n', '\t'])) else {
            return Verdict::Fail("the path is not plain text without tabs or newlines".into());
        };
        let job = format!("{}\t{path_text}\n", level.map_or("-".into(), |l| l.digit().to_string()));
        let worker = match self.worker.take() {
            Some(w) => w,
            None => match self.spawn() {
                Ok(w) => w,
                Err(e) => return Verdict::Fail(e),
            },
        };
        let mut worker = worker;
        // A worker that could not start has already said why and left: its `E` line is read
        // below, so the failed write alone is no verdict.
        let sent = worker.stdin.write_all(job.as_bytes()).and_then(|()| worker.stdin.flush());
        let wait = if sent.is_ok() { self.timeout + self.grace } else { Duration::from_secs(1) };
        match worker.replies.recv_timeout(wait) {
            Ok(reply) => {
                let (head, message) = reply.split_once('\t').unwrap_or((&reply, ""));
                let leaving = head.ends_with('!') || head == "E";
                let verdict = match head.trim_end_matches('!') {
                    "P" => Verdict::Pass,
                    "F" => Verdict::Fail(message.into()),
                    "N" => Verdict::NotRun(message.into()),
                    "E" => Verdict::Fail(format!("the GPU worker could not start: {message}")),
                    _ => Verdict::Fail(format!("the GPU worker answered `{reply}`")),
                };
                if leaving {
                    drop(worker.stdin);
                    let _ = worker.child.wait();
                } else {
                    self.worker = Some(worker);
                }
                verdict
            }
            Err(_) if sent.is_err() => {
                Verdict::Fail(self.bury(worker, "the GPU worker stopped before the case"))
            }
            Err(RecvTimeoutError::Timeout) => Verdict::Fail(self.bury(
                worker,
                &format!(
                    "the case did not finish within {:.0} s (its worker was stopped)",
                    (self.timeout + self.grace).as_secs_f64()
                ),
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Verdict::Fail(self.bury(worker, "the GPU worker died during the case"))
            }
        }
    }

    fn spawn(&self) -> Result<Worker, String> {
        let mut child = (self.start)()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a GPU worker: {e}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err("cannot talk to the GPU worker".into());
        };
        let (send, replies) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Worker { child, stdin, replies })
    }

    /// Stops a worker that failed, and says why with its exit status when it has one.
    fn bury(&self, mut worker: Worker, why: &str) -> String {
        let _ = worker.child.kill();
        match worker.child.wait() {
            Ok(status) if status.code().is_some() => format!("{why} ({status})"),
            _ => why.into(),
        }
    }
}

impl Drop for GpuWorkers {
    fn drop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            // Closing its input ends a worker's loop; the wait reaps it.
            drop(w.stdin);
            let _ = w.child.wait();
        }
    }
}

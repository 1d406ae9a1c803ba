//! One launch on a GPU in a child process, for a long-lived host (the language server).
//!
//! A kernel that faults spoils the CUDA driver for the rest of its process, and one that never
//! ends cannot be stopped from inside it, so a language server must not launch on a GPU
//! itself. [`run_in_child`] writes the module and the memory to a scratch folder, runs
//! `wave run --device cuda:N ... --save` (the `wave` binary given: the server's own), waits at
//! most the timeout plus a grace (the child's own timeout stops the kernel first), and reads
//! the memory back. A cancelled or late child is killed; the process's exit ends its kernel.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wave_wbin::Module;

use crate::Dispatch;

/// Time beyond the kernel's own timeout for the child to start, compile and copy.
const GRACE: Duration = Duration::from_secs(30);

/// Runs `dispatch` of `module` on CUDA GPU `ordinal` in a child `wave` process (`exe`), over
/// `memory`; returns the memory after the run, or the child's error (one line).
pub fn run_in_child(
    exe: &Path,
    ordinal: u32,
    module: &Module,
    dispatch: &Dispatch,
    memory: &[u8],
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<Vec<u8>, String> {
    let dir = scratch()?;
    let result = run_in(&dir, exe, ordinal, module, dispatch, memory, timeout, cancel);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[allow(clippy::too_many_arguments, reason = "the one private step of run_in_child")]
fn run_in(
    dir: &Path,
    exe: &Path,
    ordinal: u32,
    module: &Module,
    dispatch: &Dispatch,
    memory: &[u8],
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<Vec<u8>, String> {
    let io = |e: std::io::Error| format!("cannot prepare the GPU run in {}: {e}", dir.display());
    std::fs::write(dir.join("kernel.wbin"), wave_wbin::write(module)).map_err(io)?;
    std::fs::write(dir.join("memory.bin"), memory).map_err(io)?;
    let dims = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
    let mut c = Command::new(exe);
    c.arg("run")
        .arg(dir.join("kernel.wbin"))
        .args(["--device", &format!("cuda:{ordinal}")])
        .args(["--grid", &dims(dispatch.grid)])
        .args(["--wave-width", &dispatch.wave_width.to_string()])
        .args(["--device-memory", &memory.len().to_string()])
        .arg("--load")
        .arg(format!("0={}", dir.join("memory.bin").display()))
        .arg("--save")
        .arg(dir.join("after.bin"))
        .args(["--timeout", &timeout.as_secs_f64().to_string()]);
    if let Some(k) = &dispatch.kernel {
        c.args(["--kernel", k]);
    }
    if let Some(w) = dispatch.workgroup {
        c.args(["--workgroup", &dims(w)]);
    }
    for (name, value) in &dispatch.args {
        c.args(["--arg", &format!("{name}={value}")]);
    }
    // (Errors to a file: a pipe read only at the end could fill and block the child.)
    let stderr = std::fs::File::create(dir.join("stderr.txt")).map_err(io)?;
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("cannot start `{}` for the GPU run: {e}", exe.display()))?;
    let began = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(format!("the GPU run's process: {e}")),
        }
        if cancel.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("cancelled".into());
        }
        if began.elapsed() > timeout + GRACE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the GPU run did not finish within {:.0} s and was stopped",
                (timeout + GRACE).as_secs_f64()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    if !status.success() {
        let err = std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default();
        let line = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("the GPU run failed")
            .trim_start_matches("error: ")
            .to_string();
        return Err(line);
    }
    std::fs::read(dir.join("after.bin")).map_err(|e| format!("the GPU run wrote no memory: {e}"))
}

/// A fresh folder under the temporary directory.
fn scratch() -> Result<std::path::PathBuf, String> {
    use std::sync::atomic::AtomicU64;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "wave-gpu-run-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot make a scratch folder {}: {e}", dir.display()))?;
    Ok(dir)
}

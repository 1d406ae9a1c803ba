//! What the command line's test binaries share.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc;

/// Reads `Content-Length` framed messages from a server's output on a thread of its own, and
/// sends each body on the channel (until the output ends).
pub fn frames(output: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(output);
        loop {
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length: ") {
                    length = v.parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; length];
            if reader.read_exact(&mut body).is_err() || tx.send(body).is_err() {
                return;
            }
        }
    });
    rx
}

/// Waits for `child` to end, at most `limit`; past it, kills it and says so.
pub fn wait_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Result<std::process::ExitStatus, String> {
    let start = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no end within {limit:?}"));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Runs the `wave` binary in the repository's root.
pub fn wave(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wave"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the wave binary runs")
}

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A path `name` in a temporary folder of this test binary's own (`tag`).
pub fn tmp(tag: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wave-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

/// Bytes of output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

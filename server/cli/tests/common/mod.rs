//! What the command line's test binaries share.

use std::io::{BufRead, BufReader, Read};
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

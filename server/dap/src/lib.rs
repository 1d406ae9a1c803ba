//! The debug adapter: `wave dap` speaks the Debug Adapter Protocol on stdio and debugs a
//! dispatch in the emulator, wave by wave and lane by lane.
//!
//! - [`launch`] reads the launch configuration (a `.wave`, `.wbin` or case `.toml`, with the
//!   case format's dispatch keys);
//! - [`debugger`] runs the emulator's step API with a history, so any earlier moment can be
//!   reached again (`stepBack`, `reverseContinue`);
//! - [`expr`] evaluates lane expressions (`lane == 5 && r3 > 10`) for conditions, log points
//!   and the console;
//! - [`adapter`] maps requests to all that, and [`protocol`] frames the messages.
//!
//! This crate is the only one that knows DAP.

pub mod adapter;
pub mod debugger;
pub mod expr;
pub mod launch;
pub mod protocol;

use std::io::{BufReader, Write};
use std::sync::mpsc;

pub use adapter::Adapter;

/// Serves the protocol on standard input and output until the client disconnects or the
/// input ends. Requests are read on a thread of their own, so that `pause` reaches a running
/// program between two slices of execution.
pub fn run_stdio() -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel::<serde_json::Value>();
    std::thread::spawn(move || {
        let mut input = BufReader::new(std::io::stdin().lock());
        loop {
            match protocol::read_message(&mut input) {
                Ok(Some(m)) => {
                    if tx.send(m).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e)
                    if e.kind() == std::io::ErrorKind::InvalidData
                        && e.to_string().starts_with("the message is not JSON") =>
                {
                    let _ = tx.send(serde_json::json!({"__error": e.to_string()}));
                }
                Err(e) => {
                    let _ = tx.send(serde_json::json!({"__error": format!("{e}; the input cannot be read any further")}));
                    return;
                }
            }
        }
    });
    let mut adapter = Adapter::new();
    let mut output = std::io::stdout().lock();
    serve(&mut adapter, &rx, &mut output)
}

/// The loop of [`run_stdio`], over any channel and writer (tests use it in process).
pub fn serve(
    adapter: &mut Adapter,
    rx: &mpsc::Receiver<serde_json::Value>,
    output: &mut impl Write,
) -> std::io::Result<()> {
    loop {
        if adapter.running() {
            loop {
                match rx.try_recv() {
                    Ok(m) => adapter.handle(&m),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => return Ok(()),
                }
            }
            adapter.run_slice();
        } else {
            match rx.recv() {
                Ok(m) => adapter.handle(&m),
                Err(_) => return Ok(()),
            }
        }
        for m in adapter.take_output() {
            protocol::write_message(output, &m)?;
        }
        if adapter.done() {
            return Ok(());
        }
    }
}

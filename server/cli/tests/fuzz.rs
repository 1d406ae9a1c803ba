//! Fuzzers of the `wave` binary as editors and users drive it (issue 19): random protocol
//! traffic into `wave lsp` (valid requests on random documents, random edits, malformed
//! messages), and random documents through `wave compile`, `wave check` and `wave emit`.
//! Documents start from the kernel set in all five languages and are cut, spliced and fed the
//! things that broke the tools before: deep nesting, deep indentation, lone quotes, huge pastes,
//! CRLF, surrogate pairs, NUL, very long lines.
//!
//! Each fuzzer runs for `WAVE_FUZZ_SECONDS` (default 15; CI runs the default) from the seed
//! `WAVE_SEED` (default: from the clock, printed). A crash, a hang or an output flood fails the
//! test and writes the reproducer to a file it names: a document for `wave compile`, or the
//! exact bytes sent to `wave lsp`. Kept reproducers go in `tests/data/fuzz/` and are replayed
//! by `kept_findings_replay_clean`. A long run, on the release binary:
//!
//! ```sh
//! WAVE_FUZZ_SECONDS=1800 cargo test --release -p wave-cli --test fuzz -- --nocapture lsp
//! WAVE_FUZZ_SECONDS=1800 cargo test --release -p wave-cli --test fuzz -- --nocapture documents
//! ```

#![allow(clippy::print_stderr, reason = "a fuzzer reports its seed and its counts")]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[allow(dead_code, reason = "the fuzzer uses the framing and waiting helpers only")]
mod common;

/// xorshift64*: small, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn seconds() -> Duration {
    let s = std::env::var("WAVE_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(15);
    Duration::from_secs(s)
}

fn seed(what: &str) -> u64 {
    let seed = std::env::var("WAVE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1
    });
    eprintln!("{what}: WAVE_SEED={seed}");
    seed
}

/// The documents fuzzing starts from: the kernel set in the five languages.
fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["python", "rust", "cpp", "typescript", "handwritten"] {
        let Ok(entries) = std::fs::read_dir(root().join("conformance/kernels").join(dir)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("").to_string();
            if matches!(ext.as_str(), "py" | "rs" | "cpp" | "ts" | "wave")
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                out.push((ext, text));
            }
        }
    }
    assert!(out.len() >= 40, "the kernel set is there: {}", out.len());
    out
}

/// Pieces that broke the tools before, and the words of each language.
fn piece(r: &mut Rng) -> String {
    let n = 1 + r.below(3000);
    match r.below(24) {
        0 => "(".repeat(n),
        1 => ")".repeat(n),
        2 => "if (i > 0) { ".repeat(n.min(2000)),
        3 => "if i > 0 { ".repeat(n.min(2000)),
        4 => (1..n.min(700)).map(|k| format!("{}if a:\n", " ".repeat(k))).collect(),
        5 => "    if p0\n".repeat(n),
        6 => "    loop\n".repeat(n.min(1500)),
        7 => "\"".into(),
        8 => "\r\n".into(),
        9 => "𝄞é\u{FFFD}".into(),
        10 => "\u{0}".into(),
        11 => "\t\u{c}\u{b}".into(),
        12 => "x".repeat(20_000 + n * 10),
        13 => "[".repeat(n),
        14 => "'''".into(),
        15 => "/*".into(),
        16 => "\\\n".into(),
        17 => "-".repeat(n) + "1",
        18 => "a + ".repeat(n) + "a",
        19 => "{".repeat(n),
        20 => r
            .pick(&[
                "def ",
                "fn ",
                "for ",
                "while ",
                "return ",
                "break",
                "continue",
                "@wave.kernel\n",
                "#[wave::kernel]\n",
                "[[wave::kernel]]\n",
                "wave.kernel(",
                ".kernel k\n",
                ".end\n",
                "endif\n",
                "else\n",
                "endloop\n",
                ":",
                ",",
                ";",
                "@p0 ",
                "r255",
                "0x",
                "1e999",
                "9999999999999999999999",
            ])
            .to_string(),
        21 => "\n".repeat(1 + n % 50),
        22 => (0..1 + n % 40)
            .map(|_| {
                *r.pick(&[
                    'a', ' ', '(', ')', ':', '\n', '=', '1', '.', '[', ']', '{', '}', ';', '#',
                    '/', '*', '"', '\\', '<', '>',
                ])
            })
            .collect(),
        _ => " ".repeat(n % 200),
    }
}

fn floor(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A document: a corpus file cut and fed pieces.
fn document(r: &mut Rng, corpus: &[(String, String)]) -> (String, String) {
    let (ext, base) = r.pick(corpus).clone();
    let mut text = base;
    for _ in 0..1 + r.below(6) {
        let at = floor(&text, r.below(text.len() + 1));
        match r.below(5) {
            0 | 1 => {
                let p = piece(r);
                text.insert_str(at, &p);
            }
            2 => {
                let end = floor(&text, at + r.below(200));
                text.replace_range(at..end, "");
            }
            3 => {
                let end = floor(&text, at + r.below(400));
                let copy = text[at..end].repeat(1 + r.below(30));
                text.insert_str(at, &copy);
            }
            _ => {
                // A whole second copy pasted (huge pastes).
                if text.len() < 2_000_000 {
                    let copy = text.clone();
                    text.insert_str(at, &copy);
                }
            }
        }
        if text.len() > 4_000_000 {
            text.truncate(floor(&text, 4_000_000));
        }
    }
    (ext, text)
}

fn dump(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join("wave-fuzz-findings");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(name);
    let _ = std::fs::write(&path, bytes);
    path
}

/// Runs `wave` with `args`; `Err` says what went wrong (a crash, a hang, a flood).
fn run_wave(args: &[&str], limit: Duration) -> Result<(), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wave"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start wave: {e}"))?;
    let out = child.stdout.take().ok_or("stdout")?;
    let err = child.stderr.take().ok_or("stderr")?;
    // Read both, but never more than 16 MB of either (a flood).
    let reader = |mut s: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut s).take(16 << 20).read_to_end(&mut buf);
            buf.len()
        })
    };
    let (o, e) = (reader(Box::new(out)), reader(Box::new(err)));
    let status = common::wait_within(&mut child, limit)?;
    let (o, e) = (o.join().unwrap_or(0), e.join().unwrap_or(0));
    if o + e >= 16 << 20 {
        return Err(format!("{o} bytes of output and {e} of errors"));
    }
    match status.code() {
        Some(0..=2) => Ok(()),
        Some(c) => Err(format!("exit status {c}")),
        None => Err(format!("killed by a signal: {status:?}")),
    }
}

/// The commands a document goes through, by extension.
fn commands(ext: &str, path: &str) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    if ext == "wave" {
        vec![
            s(&["--color", "never", "check", path]),
            s(&["--color", "never", "emit", "--target", "ptx", path]),
            s(&["--color", "never", "run", "--max-steps", "100000", path]),
        ]
    } else {
        vec![s(&["--color", "never", "compile", "--emit", "asm", "-o", "/dev/null", path])]
    }
}

#[test]
fn documents_through_compile_check_and_emit() {
    let corpus = corpus();
    let mut r = Rng(seed("documents"));
    let dir = std::env::temp_dir().join(format!("wave-fuzz-documents-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let deadline = Instant::now() + seconds();
    let mut runs = 0;
    while Instant::now() < deadline {
        let (ext, text) = document(&mut r, &corpus);
        let path = dir.join(format!("doc.{ext}"));
        std::fs::write(&path, &text).expect("write");
        let p = path.to_str().expect("path");
        for args in commands(&ext, p) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            if let Err(why) = run_wave(&args, Duration::from_secs(60)) {
                let kept = dump(&format!("finding-{}.{ext}", r.next()), text.as_bytes());
                panic!("`wave {}`: {why}; the document is {}", args.join(" "), kept.display());
            }
            runs += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("documents: {runs} runs, all clean");
}

/// A `wave lsp` child with a reader thread.
struct Server {
    child: Child,
    stdin: std::process::ChildStdin,
    rx: mpsc::Receiver<Value>,
    /// Every byte sent, for the reproducer.
    sent: Vec<u8>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wave"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("wave lsp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let bodies = common::frames(stdout);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for body in bodies {
                let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Server { child, stdin, rx, sent: Vec::new() }
    }

    fn send_bytes(&mut self, body: &[u8]) -> Result<(), String> {
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(body);
        self.sent.extend_from_slice(&frame);
        self.stdin
            .write_all(&frame)
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("the server is gone ({e})"))
    }

    fn send(&mut self, v: &Value) -> Result<(), String> {
        self.send_bytes(v.to_string().as_bytes())
    }

    /// Waits for the response to `id`, answering the server's own requests.
    fn wait(&mut self, id: i64, limit: Duration) -> Result<Value, String> {
        let until = Instant::now() + limit;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let m = match self.rx.recv_timeout(left) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(format!("no answer to request {id} within {limit:?}"));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().map(|s| format!("{s:?}")).unwrap_or_default();
                    return Err(format!(
                        "the server ended ({status}) before answering request {id}"
                    ));
                }
            };
            if m.get("method").is_some() {
                if let Some(rid) = m.get("id") {
                    let answer = json!({"jsonrpc": "2.0", "id": rid, "result": null});
                    self.send(&answer)?;
                }
                continue;
            }
            if m.get("id").and_then(Value::as_i64) == Some(id) {
                return Ok(m);
            }
        }
    }
}

const URIS: [&str; 5] =
    ["file:///f/a.py", "file:///f/b.rs", "file:///f/c.cpp", "file:///f/d.ts", "file:///f/e.wave"];

fn uri_for(ext: &str) -> &'static str {
    match ext {
        "py" => URIS[0],
        "rs" => URIS[1],
        "cpp" => URIS[2],
        "ts" => URIS[3],
        _ => URIS[4],
    }
}

fn position(r: &mut Rng) -> Value {
    json!({"line": r.below(120), "character": r.below(90)})
}

/// One step of editor traffic: a notification, a request (whose id is returned) or raw bytes.
fn step(
    r: &mut Rng,
    s: &mut Server,
    corpus: &[(String, String)],
    next_id: &mut i64,
    versions: &mut [i32; 5],
) -> Result<Option<i64>, String> {
    let uri = *r.pick(&URIS);
    let slot = URIS.iter().position(|u| *u == uri).unwrap_or(0);
    let doc = json!({"uri": uri});
    let at = json!({"textDocument": doc, "position": position(r)});
    let range = json!({"start": position(r), "end": position(r)});
    let request = |method: &str, params: Value, next_id: &mut i64| {
        *next_id += 1;
        (
            json!({"jsonrpc": "2.0", "id": *next_id, "method": method, "params": params}),
            Some(*next_id),
        )
    };
    let (message, id) = match r.below(30) {
        0..=2 => {
            let (ext, text) = document(r, corpus);
            let uri = uri_for(&ext);
            let slot = URIS.iter().position(|u| *u == uri).unwrap_or(0);
            versions[slot] += 1;
            (
                json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": ext, "version": versions[slot], "text": text}}}),
                None,
            )
        }
        3..=8 => {
            versions[slot] += if r.chance(90) { 1 } else { 0 };
            let text = piece(r);
            let text: String =
                if text.len() > 100_000 { text.chars().take(100_000).collect() } else { text };
            let change = if r.chance(5) {
                json!({"text": text})
            } else {
                json!({"range": range, "text": text})
            };
            (
                json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": versions[slot]}, "contentChanges": [change]}}),
                None,
            )
        }
        9 => (
            json!({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": doc}}),
            None,
        ),
        10 => {
            let bad: [&[u8]; 12] = [
                b"not json",
                b"{}",
                b"[]",
                b"null",
                b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}]",
                b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"textDocument/hover\"}",
                b"{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"x\"}",
                b"{\"id\":4,\"method\":\"textDocument/hover\"}",
                b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"$/x\"}",
                b"{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{\"textDocument\":{\"uri\":\"file:///f/e.wave\",\"version\":99999},\"contentChanges\":[{\"text\":\"\\ud83d\\n\"}]}}",
                b"\xff\xfe\xfd",
                b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"textDocument/hover\",\"params\":{\"textDocument\":{\"uri\":\"\\udc00\"},\"position\":{\"line\":-1,\"character\":4294967296}}}",
            ];
            let body = r.pick(&bad).to_vec();
            s.send_bytes(&body)?;
            return Ok(None);
        }
        11 => (
            json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": r.below(50)}}),
            None,
        ),
        12 => request("textDocument/hover", at, next_id),
        13 => request("textDocument/completion", at, next_id),
        14 => request("textDocument/definition", at, next_id),
        15 => request(
            "textDocument/references",
            json!({"textDocument": doc, "position": position(r), "context": {"includeDeclaration": true}}),
            next_id,
        ),
        16 => request("textDocument/documentHighlight", at, next_id),
        17 => request("textDocument/semanticTokens/full", json!({"textDocument": doc}), next_id),
        18 => request("textDocument/documentSymbol", json!({"textDocument": doc}), next_id),
        19 => request("textDocument/foldingRange", json!({"textDocument": doc}), next_id),
        20 => request(
            "textDocument/selectionRange",
            json!({"textDocument": doc, "positions": [position(r), position(r)]}),
            next_id,
        ),
        21 => request(
            "textDocument/formatting",
            json!({"textDocument": doc, "options": {"tabSize": 4, "insertSpaces": true}}),
            next_id,
        ),
        22 => request(
            "textDocument/onTypeFormatting",
            json!({"textDocument": doc, "position": position(r), "ch": "\n", "options": {"tabSize": 4, "insertSpaces": true}}),
            next_id,
        ),
        23 => {
            request("textDocument/inlayHint", json!({"textDocument": doc, "range": range}), next_id)
        }
        24 => request("textDocument/codeLens", json!({"textDocument": doc}), next_id),
        25 => request(
            "textDocument/codeAction",
            json!({"textDocument": doc, "range": range, "context": {"diagnostics": []}}),
            next_id,
        ),
        26 => request(
            "textDocument/rename",
            json!({"textDocument": doc, "position": position(r), "newName": *r.pick(&["x", "r1", "", "a b", "𝄞"])}),
            next_id,
        ),
        27 => request("textDocument/signatureHelp", at, next_id),
        28 => request(
            "wave/preview",
            json!({"textDocument": doc, "target": *r.pick(&["ptx", "hip", "sycl", "metal", "wave", "mir", "nope"]), "position": position(r)}),
            next_id,
        ),
        _ => request("workspace/symbol", json!({"query": *r.pick(&["", "k", "𝄞"])}), next_id),
    };
    s.send(&message)?;
    Ok(id)
}

fn fuzz_lsp(seed: u64, limit: Duration) -> Result<usize, (String, Vec<u8>)> {
    let corpus = corpus();
    let mut r = Rng(seed);
    let mut s = Server::start();
    let encodings = if r.chance(50) { json!(["utf-8", "utf-16"]) } else { json!(["utf-16"]) };
    let caps = json!({"general": {"positionEncodings": encodings}, "textDocument": if r.chance(50) { json!({"diagnostic": {}}) } else { json!({}) }, "window": {"workDoneProgress": r.chance(50)}});
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": caps}});
    let fail = |s: &mut Server, why: String| Err((why, std::mem::take(&mut s.sent)));
    if let Err(e) = s.send(&init).and_then(|()| s.wait(1, Duration::from_secs(30))) {
        return fail(&mut s, e);
    }
    if let Err(e) = s.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})) {
        return fail(&mut s, e);
    }
    let (mut next_id, mut versions, mut steps) = (100i64, [0i32; 5], 0usize);
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline && steps < 3000 {
        match step(&mut r, &mut s, &corpus, &mut next_id, &mut versions) {
            Ok(Some(id)) => {
                if let Err(e) = s.wait(id, Duration::from_secs(30)) {
                    return fail(&mut s, e);
                }
            }
            Ok(None) => {}
            Err(e) => return fail(&mut s, e),
        }
        steps += 1;
    }
    // Still there, and it ends cleanly.
    next_id += 1;
    let id = next_id;
    let done = s
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": "shutdown"}))
        .and_then(|()| s.wait(id, Duration::from_secs(30)))
        .and_then(|_| s.send(&json!({"jsonrpc": "2.0", "method": "exit"})));
    if let Err(e) = done {
        return fail(&mut s, e);
    }
    let status = s.child.wait().map_err(|e| (e.to_string(), Vec::new()))?;
    if !status.success() {
        return fail(&mut s, format!("exit after shutdown: {status:?}"));
    }
    Ok(steps)
}

#[test]
fn lsp_protocol_traffic() {
    let mut master = Rng(seed("lsp"));
    let deadline = Instant::now() + seconds();
    let (mut sessions, mut steps) = (0, 0);
    while Instant::now() < deadline {
        let seed = master.next() | 1;
        match fuzz_lsp(seed, deadline.saturating_duration_since(Instant::now())) {
            Ok(n) => {
                sessions += 1;
                steps += n;
            }
            Err((why, sent)) => {
                let kept = dump(&format!("lsp-{seed}.bin"), &sent);
                panic!(
                    "session seed {seed}: {why}; the bytes sent are in {} (replay: wave lsp < FILE)",
                    kept.display()
                );
            }
        }
    }
    eprintln!("lsp: {sessions} sessions, {steps} messages, all clean");
}

/// Every kept reproducer (`tests/data/fuzz/`): documents through the commands, and byte
/// streams into `wave lsp`, which must end cleanly when its input ends.
#[test]
fn kept_findings_replay_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz");
    let mut replayed = 0;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/data/fuzz")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    for path in paths {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_string();
        let p = path.to_str().expect("path");
        if ext == "lsp" {
            let bytes = std::fs::read(&path).expect("read");
            let mut child = Command::new(env!("CARGO_BIN_EXE_wave"))
                .arg("lsp")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("wave lsp");
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(&bytes).expect("write");
            drop(stdin);
            let status = common::wait_within(&mut child, Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("{p}: wave lsp: {e}"));
            assert!(status.success(), "{p}: {status:?}");
        } else {
            for args in commands(&ext, p) {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                if let Err(why) = run_wave(&args, Duration::from_secs(60)) {
                    panic!("{p}: `wave {}`: {why}", args.join(" "));
                }
            }
        }
        replayed += 1;
    }
    assert!(replayed >= 3, "the kept findings are there: {replayed}");
}

//! End-to-end tests of the `wave` binary: exit codes, files written, and golden outputs.
//!
//! Golden files live in `tests/golden/`; run with `UPDATE_EXPECT=1` to rewrite them, then
//! review the diff.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{root, text, wave};

fn tmp(name: &str) -> PathBuf {
    common::tmp("tests", name)
}

#[track_caller]
fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "{} differs (run with UPDATE_EXPECT=1 to update):\n--- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

#[test]
fn asm_then_disasm_gives_the_canonical_listing() {
    let out = tmp("vector_add.wbin");
    let o = wave(&["asm", "compiler/asm/tests/data/vector_add.wave", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stderr.is_empty(), "no diagnostics expected: {}", text(&o.stderr));
    let o = wave(&["disasm", out.to_str().unwrap()]);
    assert!(o.status.success());
    golden("vector_add.disasm", &text(&o.stdout));
    // The listing reassembles to the same bytes.
    let listing = tmp("listing.wave");
    std::fs::write(&listing, &o.stdout).unwrap();
    let again = tmp("again.wbin");
    let o = wave(&["asm", listing.to_str().unwrap(), "-o", again.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let a = wave_wbin::read(&std::fs::read(&out).unwrap()).unwrap();
    let b = wave_wbin::read(&std::fs::read(&again).unwrap()).unwrap();
    assert_eq!((a.code, a.kernels, a.symbols), (b.code, b.kernels, b.symbols));
}

#[test]
fn check_renders_every_diagnostic_like_rustc_and_exits_1() {
    let o = wave(&["--color", "never", "check", "server/cli/tests/data/errors.wave"]);
    assert_eq!(o.status.code(), Some(1));
    golden("errors.stderr", &text(&o.stderr));
    let o = wave(&["check", "compiler/asm/tests/data/vector_add.wave"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn check_compiles_kernel_sources() {
    // A Python program with its host code around the kernels (the MLP example) is clean.
    let o = wave(&["check", "examples/mlp_digits.py"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
    let bad = tmp("bad_kernel.py");
    std::fs::write(
        &bad,
        "import wave_gpu as wave\nfrom wave_gpu import f32, u32\n\n@wave.kernel(workgroup=64)\ndef k(a: f32[:], n: u32):\n    i = wave.global_id()\n    a[i] = a[i] + i\n",
    )
    .unwrap();
    let o = wave(&["--color", "never", "check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("error[E0401]") && err.contains("bad_kernel.py:7:12"), "{err}");
    let o = wave(&["check", "conformance/kernels/rust/vector_add.rs"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn fmt_rewrites_in_place_and_check_mode_reports() {
    let file = tmp("unformatted.wave");
    std::fs::copy(root().join("server/cli/tests/data/unformatted.wave"), &file).unwrap();
    let o = wave(&["fmt", "--check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("is not formatted"));
    let o = wave(&["fmt", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let formatted = std::fs::read_to_string(&file).unwrap();
    golden("unformatted.fmt", &formatted);
    let o = wave(&["fmt", "--check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "formatting is idempotent");
    // A file with errors is left alone.
    let bad = tmp("bad.wave");
    std::fs::copy(root().join("server/cli/tests/data/errors.wave"), &bad).unwrap();
    let o = wave(&["fmt", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        std::fs::read(&bad).unwrap(),
        std::fs::read(root().join("server/cli/tests/data/errors.wave")).unwrap()
    );
}

#[test]
fn info_reports_constants_and_occupancy() {
    let o = wave(&["info", "--target", "spec-minimum"]);
    assert!(o.status.success());
    golden("info-spec-minimum.stdout", &text(&o.stdout));
    let o = wave(&["info", "compiler/asm/tests/data/vector_add.wave", "--target", "nvidia"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    golden("info-vector_add-nvidia.stdout", &text(&o.stdout));
    let o = wave(&["info", "--list-targets"]);
    assert!(text(&o.stdout).contains("amd-cdna"));
}

#[test]
fn bad_input_and_bad_usage_get_clear_errors_and_exit_codes() {
    // Corrupt .wbin: located error, exit 1.
    let file = tmp("corrupt.wbin");
    std::fs::write(&file, b"WAVEBIN\0\x01\x00\x00\x00garbage").unwrap();
    let o = wave(&["disasm", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("invalid .wbin at byte"), "{}", text(&o.stderr));
    // Missing file, unknown target, unknown subcommand, bad --workgroup: exit 2.
    assert_eq!(wave(&["asm", "no/such/file.wave"]).status.code(), Some(2));
    let o = wave(&["info", "--target", "nvidai"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown target `nvidai`"));
    assert_eq!(wave(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        wave(&["info", "compiler/asm/tests/data/vector_add.wave", "--workgroup", "0"])
            .status
            .code(),
        Some(2)
    );
    // Not UTF-8: exit 1 with the offset.
    let file = tmp("binary.wave");
    std::fs::write(&file, b".kernel k\n\xff\xfe\n.end\n").unwrap();
    let o = wave(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("not UTF-8"), "{}", text(&o.stderr));
}

#[test]
fn run_dumps_memory_reports_stats_and_traps() {
    let o = wave(&[
        "run",
        "conformance/cases/programs/vector_add_bounds.toml",
        "--wave-width",
        "32",
        "--dump",
        "8192:f32:4",
        "--stats",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    golden("run-vector_add.stdout", &text(&o.stdout));
    // Machine-readable results, and a trace in the Chrome trace format.
    let trace = tmp("trace.json");
    let o = wave(&[
        "run",
        "compiler/asm/tests/data/vector_add.wave",
        "--wave-width",
        "8",
        "--grid",
        "1",
        "--workgroup",
        "8",
        "--arg",
        "a=0",
        "--arg",
        "b=64",
        "--arg",
        "c=128",
        "--arg",
        "n=4",
        "--dump",
        "128:u32:2",
        "--json",
        "--trace-json",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json = text(&o.stdout);
    assert!(json.starts_with("{\"ok\":true,\"stats\":{\"instructions\":"), "{json}");
    assert!(
        json.contains("\"dumps\":[{\"offset\":128,\"type\":\"u32\",\"values\":[0,0]}]"),
        "{json}"
    );
    let events = std::fs::read_to_string(&trace).unwrap();
    assert!(events.contains("\"traceEvents\"") && events.contains("\"name\":\"thread_name\""));
    // A fault: exit 1 with the location.
    let o = wave(&[
        "run",
        "compiler/asm/tests/data/vector_add.wave",
        "--arg",
        "a=0",
        "--arg",
        "b=0",
        "--arg",
        "c=4000000",
        "--arg",
        "n=64",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("device memory out of bounds") && err.contains("line 22"), "{err}");
    // Bad arguments are usage errors.
    assert_eq!(
        wave(&["run", "compiler/asm/tests/data/vector_add.wave", "--arg", "nope"]).status.code(),
        Some(2)
    );
    assert_eq!(
        wave(&["run", "compiler/asm/tests/data/vector_add.wave", "--dump", "0:u33:1"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn test_reports_failures_and_the_closing_line() {
    let o = wave(&["test", "conformance/cases/control"]);
    assert!(o.status.success(), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(out.trim_end().ends_with("passed, 0 failed"), "{out}");
    // A case whose expectation is wrong fails with the first difference, exit 1.
    let case = tmp("wrong.toml");
    std::fs::write(
        &case,
        "name = \"deliberately wrong\"\nwave_widths = [8]\nsource = \"\"\"\n.kernel k\n.param out: ptr\n.workgroup_size 8\n    mov r1, sr_lane_id\n    shl r2, r1, 2\n    iadd r2, r2, out\n    device_store.u32 r2, r1\n.end\n\"\"\"\n[args]\nout = 0\n[[expect]]\noffset = 0\nu32 = [0, 1, 2, 4]\n",
    )
    .unwrap();
    let o = wave(&["test", case.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains(
            "W=8: first difference at offset 12 (0xc, u32[3] of the block at 0): expected 4, got 3"
        ),
        "{out}"
    );
    assert!(out.trim_end().ends_with("0 passed, 1 failed"), "{out}");
    // A typo in a case is an error, not a weaker test.
    std::fs::write(&case, "name = \"typo\"\nsource = \".kernel k\\n.end\\n\"\nexpectt = []\n")
        .unwrap();
    let out = text(&wave(&["test", case.to_str().unwrap()]).stdout);
    assert!(out.contains("unknown key `expectt`"), "{out}");
}

#[test]
fn emit_prints_each_target_and_refuses_with_a_located_error() {
    for target in ["ptx", "hip", "sycl", "metal"] {
        let o = wave(&["emit", "--target", target, "compiler/asm/tests/data/vector_add.wave"]);
        assert!(o.status.success(), "{target}: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains("// 17: device_load.u32"), "{target}: source comments");
    }
    let o = wave(&["emit", "--target", "ptx", "compiler/asm/tests/data/vector_add.wave"]);
    golden("vector_add.ptx", &text(&o.stdout));
    // Metal has no binary64: exit 1, the instruction's location.
    let o = wave(&[
        "emit",
        "--color",
        "never",
        "--target",
        "metal",
        "conformance/cases/instructions/f64_dmul_ddiv.toml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("error[E0301]") && err.contains("binary64") && err.contains("dmul"),
        "{err}"
    );
    // The source map has one entry per generated line.
    let map = tmp("map.json");
    let o = wave(&[
        "emit",
        "--target",
        "hip",
        "compiler/asm/tests/data/vector_add.wave",
        "--source-map",
        map.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let json = std::fs::read_to_string(&map).unwrap();
    let entries = json.split("\"lines\": [").nth(1).unwrap().matches(',').count() + 1;
    assert_eq!(entries, text(&o.stdout).lines().count(), "{json}");
    // Bad usage: exit 2.
    let o =
        wave(&["emit", "--target", "ptx", "--sm", "60", "compiler/asm/tests/data/vector_add.wave"]);
    assert_eq!(o.status.code(), Some(2));
    let o = wave(&["emit", "--target", "cuda", "compiler/asm/tests/data/vector_add.wave"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A `wave` subcommand speaking a `Content-Length` framed protocol on stdio: the child, a
/// function that sends one message, and a function that waits (up to 20 s) for a message
/// containing a text, so that a missing answer fails the test instead of hanging it.
struct Stdio {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    rx: std::sync::mpsc::Receiver<String>,
}

impl Stdio {
    fn start(subcommand: &str) -> Stdio {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wave"))
            .arg(subcommand)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let bodies = common::frames(stdout);
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for body in bodies {
                if tx.send(String::from_utf8_lossy(&body).into_owned()).is_err() {
                    return;
                }
            }
        });
        Stdio { child, stdin, rx }
    }

    fn send(&mut self, json: &str) {
        use std::io::Write as _;
        write!(self.stdin, "Content-Length: {}\r\n\r\n{json}", json.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn wait_for(&self, what: &str) -> String {
        loop {
            let m = self
                .rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("no {what} from the server"));
            if m.contains(what) {
                return m;
            }
        }
    }
}

/// `wave lsp` end to end over stdio: initialize, open a file with a mistake, get its
/// diagnostics, fix it with an incremental edit, hover, shut down.
#[test]
fn lsp_speaks_the_protocol_on_stdio() {
    let mut io = Stdio::start("lsp");
    io.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":["utf-8","utf-16"]}}}}"#,
    );
    let init = io.wait_for("\"id\":1");
    assert!(
        init.contains("\"positionEncoding\":\"utf-8\"") && init.contains("\"hoverProvider\":true"),
        "{init}"
    );
    io.send(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    let text =
        ".kernel k\\n.param out: ptr\\n    iad r1, r0, 1\\n    device_store.u32 out, r1\\n.end\\n";
    io.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"file:///t.wave","languageId":"wave","version":1,"text":"{text}"}}}}}}"#
    ));
    let d = io.wait_for("publishDiagnostics");
    assert!(d.contains("\"code\":\"E0101\"") || d.contains("\"code\":\"E01"), "{d}");
    assert!(d.contains("\"line\":2"), "the mistake is on line 2: {d}");
    // Fix `iad` to `iadd`: insert one `d` at line 2, character 7.
    io.send(
        r#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///t.wave","version":2},"contentChanges":[{"range":{"start":{"line":2,"character":7},"end":{"line":2,"character":7}},"text":"d"}]}}"#,
    );
    let d = io.wait_for("publishDiagnostics");
    assert!(d.contains("\"diagnostics\":[]") && d.contains("\"version\":2"), "{d}");
    io.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///t.wave"},"position":{"line":2,"character":5}}}"#,
    );
    let h = io.wait_for("\"id\":2");
    assert!(h.contains("iadd r1, r0, 1") && h.contains("add.u32") && h.contains("markdown"), "{h}");
    io.send(
        r#"{"jsonrpc":"2.0","id":4,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file:///t.wave"}}}"#,
    );
    let sym = io.wait_for("\"id\":4");
    assert!(sym.contains("\"name\":\"k\"") && sym.contains("\"kind\":12"), "{sym}");
    io.send(
        r#"{"jsonrpc":"2.0","id":5,"method":"textDocument/inlayHint","params":{"textDocument":{"uri":"file:///t.wave"},"range":{"start":{"line":0,"character":0},"end":{"line":9,"character":0}}}}"#,
    );
    let hints = io.wait_for("\"id\":5");
    assert!(hints.contains("waves/core") && hints.contains("\"line\":0"), "{hints}");
    io.send(
        r#"{"jsonrpc":"2.0","id":6,"method":"textDocument/formatting","params":{"textDocument":{"uri":"file:///t.wave"},"options":{"tabSize":4,"insertSpaces":true}}}"#,
    );
    let fmt = io.wait_for("\"id\":6");
    assert!(fmt.contains("\"result\""), "{fmt}");
    io.send(
        r#"{"jsonrpc":"2.0","id":7,"method":"textDocument/foldingRange","params":{"textDocument":{"uri":"file:///t.wave"}}}"#,
    );
    let folds = io.wait_for("\"id\":7");
    assert!(folds.contains("\"startLine\":0") && folds.contains("\"endLine\":4"), "{folds}");
    io.send(
        r#"{"jsonrpc":"2.0","id":8,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///t.wave"},"position":{"line":2,"character":16}}}"#,
    );
    let items = io.wait_for("\"id\":8");
    assert!(
        items.contains("\"label\":\"out\"") && items.contains("\"label\":\"sr_lane_id\""),
        "{items}"
    );
    // `out` on line 3 is the parameter declared on line 1.
    io.send(
        r#"{"jsonrpc":"2.0","id":9,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///t.wave"},"position":{"line":3,"character":22}}}"#,
    );
    let def = io.wait_for("\"id\":9");
    assert!(
        def.contains("\"start\":{\"character\":7,\"line\":1}")
            || def.contains("\"line\":1,\"character\":7")
            || (def.contains("\"line\":1") && def.contains("\"character\":7")),
        "{def}"
    );
    io.send(r#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#);
    io.wait_for("\"id\":3");
    io.send(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    let status = io.child.wait().expect("exits");
    assert!(status.success(), "{status:?}");
}

/// `wave lsp` over stdio after malformed messages (issue 19: it used to answer the first one
/// and exit with status 0): each gets its error and the session goes on to a clean exit.
#[test]
fn lsp_survives_malformed_messages_on_stdio() {
    let mut io = Stdio::start("lsp");
    io.send("this is not JSON");
    assert!(io.wait_for("-32700").contains("\"id\":null"));
    io.send("[]");
    io.wait_for("-32600");
    io.send(r#"{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{}}"#);
    io.wait_for("-32600");
    io.send(r#"{"jsonrpc":"2.0","id":7,"method":"$/unknown"}"#);
    assert!(io.wait_for("-32601").contains("\"id\":7"));
    io.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
    assert!(io.wait_for("\"id\":1").contains("capabilities"));
    io.send(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#);
    io.wait_for("\"id\":2");
    io.send(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    let status = io.child.wait().expect("exits");
    assert!(status.success(), "{status:?}");
}

/// `wave dap` end to end over stdio: a debug session on a case file, stopped on entry, a step,
/// a variable, then disconnect.
#[test]
fn dap_speaks_the_protocol_on_stdio() {
    let mut io = Stdio::start("dap");
    io.send(
        r#"{"seq":1,"type":"request","command":"initialize","arguments":{"adapterID":"wave"}}"#,
    );
    let init = io.wait_for("\"command\":\"initialize\"");
    assert!(init.contains("\"supportsStepBack\":true"), "{init}");
    io.wait_for("\"event\":\"initialized\"");
    let case = format!(
        "{}/../../conformance/cases/programs/vector_add_bounds.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    io.send(&format!(
        r#"{{"seq":2,"type":"request","command":"launch","arguments":{{"program":"{case}","stopOnEntry":true}}}}"#
    ));
    let launch = io.wait_for("\"command\":\"launch\"");
    assert!(launch.contains("\"success\":true"), "{launch}");
    io.send(r#"{"seq":3,"type":"request","command":"configurationDone"}"#);
    let stop = io.wait_for("\"event\":\"stopped\"");
    assert!(stop.contains("\"reason\":\"entry\""), "{stop}");
    io.send(r#"{"seq":4,"type":"request","command":"next","arguments":{"threadId":1,"granularity":"instruction"}}"#);
    io.wait_for("\"reason\":\"step\"");
    io.send(r#"{"seq":5,"type":"request","command":"evaluate","arguments":{"expression":"lane == 3","context":"repl"}}"#);
    let e = io.wait_for("\"command\":\"evaluate\"");
    assert!(e.contains("\"result\":\"false (lane 0)"), "{e}");
    io.send(r#"{"seq":6,"type":"request","command":"disconnect"}"#);
    io.wait_for("\"command\":\"disconnect\"");
    let status = io.child.wait().expect("exits");
    assert!(status.success(), "{status:?}");
}

/// `wave compile --emit hir` prints typed HIR; mistakes are located diagnostics; stages not
/// built yet are a clear usage error.
#[test]
fn compile_prints_hir_and_reports_mistakes() {
    let o = wave(&["compile", "compiler/kernel/tests/hir/vector_add.py", "--emit", "hir"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(
            "kernel vector_add(a: f32[], b: f32[], c: f32[], n: u32) workgroup(64, 1, 1) {"
        ),
        "{out}"
    );
    let o = wave(&["compile", "compiler/kernel/tests/hir/errors.py", "--emit", "hir"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error[E0401]: `+` between `f32` and `u32`") && err.contains("errors.py:7:9"),
        "{err}"
    );
    let o = wave(&["compile", "compiler/kernel/tests/hir/vector_add.py", "--emit", "mir"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("load.device"));
    let out = std::env::temp_dir().join(format!("wave-compile-{}.mir", std::process::id()));
    let o = wave(&[
        "compile",
        "compiler/kernel/tests/hir/saxpy.py",
        "--emit",
        "mir",
        "-O1",
        "-o",
        out.to_str().expect("path"),
    ]);
    assert!(o.status.success());
    assert!(std::fs::read_to_string(&out).expect("written").starts_with("kernel saxpy("));
    let _ = std::fs::remove_file(&out);
    let o = wave(&["compile", "conformance/cases/programs/vector_add_bounds.toml"]);
    assert_eq!(o.status.code(), Some(2));
    let o = wave(&["compile", "compiler/kernel/tests/hir/saxpy.py", "--max-registers", "0"]);
    assert_eq!(o.status.code(), Some(2));
    // `--verify` checks every pass's result and changes nothing in the output.
    let asm = |extra: &[&str]| {
        let mut args = vec!["compile", "conformance/kernels/python/sgemm.py", "-O3"];
        args.extend(["--emit", "asm"]);
        args.extend(extra);
        let o = wave(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    assert_eq!(asm(&["--verify"]), asm(&[]));
}

#[test]
fn compile_writes_a_wbin_that_runs_and_prints_every_stage() {
    let dir = std::env::temp_dir().join(format!("wave-compile-wbin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let wbin = dir.join("vector_add.wbin");
    let src = "conformance/kernels/python/vector_add.py";
    let o = wave(&["compile", src, "-O2", "-o", wbin.to_str().expect("path")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The case's dispatch, run on the written .wbin and on the source directly.
    let run = |file: &str| {
        wave(&[
            "run",
            file,
            "--grid",
            "2",
            "--arg",
            "a=0",
            "--arg",
            "b=512",
            "--arg",
            "c=1024",
            "--arg",
            "n=100",
            "--dump",
            "1024:f32:2",
            "--json",
        ])
    };
    let from_wbin = run(wbin.to_str().expect("path"));
    assert!(from_wbin.status.success(), "{}", String::from_utf8_lossy(&from_wbin.stderr));
    let from_source = run(src);
    assert!(from_source.status.success(), "{}", String::from_utf8_lossy(&from_source.stderr));
    assert_eq!(from_wbin.stdout, from_source.stdout);
    // The line table names the Python file.
    let bytes = std::fs::read(&wbin).expect("written");
    let module = wave_wbin::read(&bytes).expect("a valid .wbin");
    assert_eq!(module.files, vec![src.to_string()]);
    for (emit, needle) in [("lir", "mov_special %"), ("asm", ".kernel vector_add"), ("mir", "phi")]
    {
        let o = wave(&["compile", src, "--emit", emit, "-O0"]);
        assert!(o.status.success());
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(needle) || emit == "mir", "{emit}: {out}");
    }
    // The assembly it prints assembles.
    let o = wave(&["compile", src, "--emit", "asm"]);
    let asm = dir.join("v.wave");
    std::fs::write(&asm, &o.stdout).expect("write");
    let o =
        wave(&["asm", asm.to_str().expect("path"), "-o", dir.join("v2.wbin").to_str().expect("p")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A case compiled from Python runs, and a backend reads the compiled kernel.
    let o = wave(&["test", "conformance/kernels/python/sgemm.toml"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 passed, 0 failed"));
    let o = wave(&["emit", "--target", "ptx", src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains(".entry vector_add"));
    // A kernel that needs more registers than allowed and gives no workgroup size.
    let many = dir.join("many.py");
    let mut text = String::from(
        "import wave\n\n@wave.kernel\ndef many(out: u32[:]):\n    i = wave.lane_id()\n",
    );
    for k in 0..12 {
        text.push_str(&format!("    v{k} = i * {}\n", k + 3));
    }
    let sum: Vec<String> = (0..12).map(|k| format!("v{k}")).collect();
    text.push_str(&format!("    out[i] = {}\n", sum.join(" ^ ")));
    std::fs::write(&many, text).expect("write");
    let o = wave(&["compile", many.to_str().expect("p"), "--max-registers", "4", "-O0"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error[E0409]") && err.contains("workgroup"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether this machine has a CUDA GPU (the device tests below differ there).
fn has_gpu() -> bool {
    let out = wave(&["devices", "--json"]);
    !text(&out.stdout).contains("cuda_unavailable")
}

#[test]
fn devices_lists_the_emulator_and_says_why_there_is_no_gpu() {
    let out = wave(&["devices"]);
    assert!(out.status.success());
    let listing = text(&out.stdout);
    assert!(listing.starts_with("emulator "), "{listing}");
    let json = text(&wave(&["devices", "--json"]).stdout);
    assert!(json.starts_with("{\"devices\":[{\"device\":\"emulator\""), "{json}");
    if has_gpu() {
        assert!(listing.contains("cuda:0 ") && listing.contains("compute capability"), "{listing}");
    } else {
        assert!(listing.contains("cuda       not available: "), "{listing}");
        assert!(json.contains("\"cuda_unavailable\":\"no CUDA"), "{json}");
    }
}

#[test]
#[allow(clippy::print_stderr, reason = "says plainly which checks did not run")]
fn device_cuda_without_a_gpu_is_one_line_and_exit_2() {
    let case = "conformance/kernels/python/saxpy.toml";
    // Refused before any GPU is looked for.
    let out = wave(&["run", "--device", "metal", case]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("expected emulator, cuda or cuda:N"));
    let out = wave(&["run", "--device", "cuda", "--trace", case]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("need --device emulator"));
    if has_gpu() {
        eprintln!("skipped: the no-GPU half of this test, since this machine has a CUDA GPU");
        return;
    }
    for args in [
        &["run", "--device", "cuda", case][..],
        &["run", "--device", "cuda:1", "--json", case],
        &["test", "--device", "cuda", "conformance/kernels/python"],
        &["test", "--device", "cuda", "--opt", "all", "conformance"],
    ] {
        let out = wave(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: --device cuda") && err.contains("no CUDA"), "{err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn test_runs_kernel_sources_at_every_level() {
    let out = wave(&["test", "--opt", "all", "conformance/kernels/rust"]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let passed: usize = last.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let one = text(&wave(&["test", "conformance/kernels/rust"]).stdout);
    let single: usize =
        one.lines().last().and_then(|l| l.split(' ').next()?.parse().ok()).unwrap_or(0);
    assert_eq!(passed, 4 * single, "{last} against {one}");
    let out = wave(&["test", "--opt", "5", "conformance/kernels/rust"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("expected 0, 1, 2, 3 or all"));
}

/// Needs a CUDA GPU: `wave lsp` offers the GPU lenses, and "Compare GPU with emulator" runs the
/// kernel in a child `wave` on the GPU and finds every buffer the same as the emulator's.
#[test]
#[allow(clippy::print_stderr, reason = "says plainly that the test did not run")]
fn lsp_compares_a_gpu_run_with_the_emulator() {
    if !has_gpu() {
        eprintln!("skipped: lsp_compares_a_gpu_run_with_the_emulator needs a CUDA GPU");
        return;
    }
    let mut io = Stdio::start("lsp");
    io.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
    io.wait_for("\"id\":1");
    io.send(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    let text = "; wave-run: --grid 2 --arg out=0 --dump 0:u32:64\\n.kernel k\\n.param out: ptr\\n.workgroup_size 32\\n    mov_special r1, sr_workgroup_id_x\\n    mov_special r2, sr_thread_id_x\\n    mov_imm r6, 32\\n    imad r3, r1, r6, r2\\n    imul r4, r3, r3\\n    shift.shl r5, r3, 2\\n    iadd r5, out, r5\\n    device_store.u32 r5, r4\\n    halt\\n.end\\n";
    io.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"file:///g.wave","languageId":"wave","version":1,"text":"{text}"}}}}}}"#
    ));
    io.wait_for("publishDiagnostics");
    io.send(r#"{"jsonrpc":"2.0","id":2,"method":"textDocument/codeLens","params":{"textDocument":{"uri":"file:///g.wave"}}}"#);
    let lenses = io.wait_for("\"id\":2");
    assert!(
        lenses.contains("Run on GPU") && lenses.contains("Compare GPU with emulator"),
        "{lenses}"
    );
    io.send(r#"{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"wave.run","arguments":[{"uri":"file:///g.wave","kernel":"k","device":"compare"}]}}"#);
    let r = io.wait_for("\"id\":3");
    assert!(r.contains("\"device\":\"compare\"") && r.contains("\"ok\":true"), "{r}");
    // (The server's JSON has its keys in order.)
    assert!(
        r.contains("\"comparison\":[{\"agree\":true,\"count\":64,\"differing\":0,\"first\":[],\"offset\":0,\"type\":\"u32\"}]"),
        "{r}"
    );
    io.send(r#"{"jsonrpc":"2.0","id":4,"method":"workspace/executeCommand","params":{"command":"wave.run","arguments":[{"uri":"file:///g.wave","kernel":"k","device":"cuda"}]}}"#);
    let r = io.wait_for("\"id\":4");
    assert!(
        r.contains("\"device\":\"cuda:0\"") && r.contains("\"ok\":true") && r.contains("\"961\""),
        "{r}"
    );
    io.send(r#"{"jsonrpc":"2.0","id":5,"method":"shutdown"}"#);
    io.wait_for("\"id\":5");
    io.send(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    let _ = io.child.wait();
}

/// Issue 19: the command line's inputs that crashed it, hung it or flooded its output.
#[test]
fn bad_inputs_are_one_clear_error_never_a_crash_a_hang_or_a_flood() {
    let data = tmp("bounded.bin");
    std::fs::write(&data, [1u8, 2, 3, 4]).expect("write");
    let kernel = "compiler/asm/tests/data/vector_add.wave";
    // An offset whose end overflows: the fit check, not a panic (exit 101).
    let load = format!("18446744073709551615={}", data.display());
    let o = wave(&["run", kernel, "--load", &load]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("do not fit"), "{}", text(&o.stderr));
    let o = wave(&["run", kernel, "--dump", "16:u32:4611686018427387904"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // Not regular files, and one over the size limit (sparse: no disk used).
    for path in ["/dev/zero", "/tmp"] {
        let o = wave(&["run", path]);
        assert_eq!(o.status.code(), Some(2), "{path}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("not a regular file"), "{path}: {}", text(&o.stderr));
    }
    let o = wave(&["run", kernel, "--load", "0=/dev/zero"]);
    assert!(text(&o.stderr).contains("not a regular file"), "{}", text(&o.stderr));
    let big = tmp("big.wave");
    std::fs::File::create(&big).and_then(|f| f.set_len(65 << 20)).expect("sparse file");
    let o = wave(&["check", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("over the limit of 67108864 bytes"), "{}", text(&o.stderr));
    let _ = std::fs::remove_file(&big);

    // 3,000 `if` on one C++ line of 40 KB: one error (E0412), its snippet cut to the part
    // that matters.
    let cpp = tmp("line.cpp");
    std::fs::write(
        &cpp,
        format!(
            "[[wave::kernel, wave::workgroup(32, 1, 1)]]\nvoid k(uint32_t* out) {{\n    uint32_t i = wave::global_id(0);\n{}out[0] = i;{}\n}}\n",
            "if (i > 0) { ".repeat(3000),
            "}".repeat(3000)
        ),
    )
    .expect("write");
    let o = wave(&["--color", "never", "compile", cpp.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("error[E0412]").count(), 1, "{err}");
    assert!(err.len() < 2000, "{} bytes of output:\n{err}", err.len());
    assert!(err.lines().all(|l| l.len() < 400), "{err}");
    assert!(err.contains("…"), "{err}");
    // The location is the original line's column, not the shortened one's.
    let column: usize = err
        .split("line.cpp:4:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    assert!(column > 6000, "{err}");

    // Many errors: the first 50, then how many more.
    let many = tmp("many.wave");
    let mut source = String::from(".kernel k\n");
    for _ in 0..120 {
        source.push_str("    bogus r1, r2\n");
    }
    source.push_str(".end\n");
    std::fs::write(&many, source).expect("write");
    let o = wave(&["--color", "never", "check", many.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("error[E").count(), 50, "{err}");
    assert!(err.contains("70 more diagnostics not shown (70 errors, 0 warnings"), "{err}");
}

/// Issue 19: nesting that overflowed the stack or aborted a grammar's scanner is a located
/// error (E0412, E0167), from every command that reads the source.
#[test]
fn deep_nesting_is_a_located_error_from_every_command() {
    let mut scanner = String::from("def k(a):\n\"\n");
    for level in 1..=520 {
        scanner.push_str(&" ".repeat(level));
        scanner.push_str("if a:\n");
    }
    let py = tmp("scanner.py");
    std::fs::write(&py, &scanner).expect("write");
    let o = wave(&["--color", "never", "compile", py.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("error[E0412]"), "{}", text(&o.stderr));
    let o = wave(&["--color", "never", "run", py.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));

    let parens = tmp("parens.py");
    std::fs::write(
        &parens,
        format!(
            "import wave\n\n@wave.kernel(workgroup=32)\ndef k(out: u32[:]):\n    out[0] = {}1{}\n",
            "(".repeat(5000),
            ")".repeat(5000)
        ),
    )
    .expect("write");
    let case = tmp("parens.toml");
    std::fs::write(
        &case,
        "name = \"deep\"\nfile = \"parens.py\"\nkernel = \"k\"\n[dispatch]\ngrid = [1, 1, 1]\n[args]\nout = 0\n[[expect]]\noffset = 0\nu32 = [1]\n",
    )
    .expect("write");
    let o = wave(&["--color", "never", "run", case.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("E0412"), "{}", text(&o.stderr));
    let o = wave(&["test", case.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("0 passed, 1 failed"), "{}", text(&o.stdout));

    let deep = tmp("deep.wave");
    std::fs::write(
        &deep,
        format!(
            ".kernel deep\n.param out: ptr\n    mov r1, sr_lane_id\n    icmp.gt p0, r1, 3\n{}    iadd r1, r1, 1\n{}    device_store.u32 out, r1\n.end\n",
            "    if p0\n".repeat(20_000),
            "    endif\n".repeat(20_000)
        ),
    )
    .expect("write");
    for args in [&["emit", "--target", "ptx"][..], &["run"], &["check"]] {
        let mut all = vec!["--color", "never"];
        all.extend_from_slice(args);
        all.push(deep.to_str().unwrap());
        let o = wave(&all);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("error[E0167]"), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("deep.wave:1029:5"), "{args:?}: {}", text(&o.stderr));
    }
}

/// Long lines codespan shows between two labelled lines, and two spans far apart on one long
/// line, are shortened too (found in review of the snippet shortening).
#[test]
fn long_lines_between_and_around_labels_are_shortened() {
    let dup = tmp("dup.py");
    std::fs::write(
        &dup,
        format!(
            "import wave\n\n@wave.kernel(workgroup=32)\ndef k(a: u32[:],\n      b: u32,  # {}\n      a: u32):\n    a[0] = b\n",
            "x".repeat(50_000)
        ),
    )
    .expect("write");
    let o = wave(&["--color", "never", "compile", dup.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert!(err.contains("named twice"), "{err}");
    assert!(err.lines().all(|l| l.len() < 400), "{err}");
    let one = tmp("one.py");
    std::fs::write(
        &one,
        format!(
            "import wave\n\n@wave.kernel(workgroup=32)\ndef k(a: u32[:], {}b: u32, {}a: u32):\n    a[0] = b\n",
            " ".repeat(30_000),
            " ".repeat(30_000)
        ),
    )
    .expect("write");
    let o = wave(&["--color", "never", "compile", one.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert!(err.contains("named twice"), "{err}");
    assert!(err.lines().all(|l| l.len() < 600), "{err}");
}

/// `exit` while a handler waits for the client's answer to a request of the server's (here
/// the refreshes after a configuration change, never answered): the server still ends (found
/// in review: it used to wait for that handler for ever).
#[test]
fn lsp_exits_even_with_a_request_of_its_own_unanswered() {
    let mut io = Stdio::start("lsp");
    io.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#);
    io.wait_for("\"id\":1");
    io.send(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    io.send(r#"{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"wave":{"target":"amd"}}}}"#);
    io.wait_for("workspace/inlayHint/refresh");
    io.send(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#);
    io.wait_for("\"id\":2");
    io.send(r#"{"jsonrpc":"2.0","method":"exit"}"#);
    let status = common::wait_within(&mut io.child, std::time::Duration::from_secs(20))
        .unwrap_or_else(|e| panic!("wave lsp: {e}"));
    assert!(status.success(), "{status:?}");
}

#[test]
fn runs_and_tests_give_the_same_output_on_any_number_of_threads() {
    let run = |threads: &str| {
        let o = wave(&[
            "run",
            "compiler/asm/tests/data/vector_add.wave",
            "--grid",
            "9",
            "--workgroup",
            "32",
            "--arg",
            "a=0",
            "--arg",
            "b=2048",
            "--arg",
            "c=4096",
            "--arg",
            "n=280",
            "--dump",
            "4096:f32:288",
            "--json",
            "--threads",
            threads,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let one = run("1");
    assert!(one.contains("\"workgroups\":9"), "{one}");
    for threads in ["2", "5", "16"] {
        assert_eq!(run(threads), one, "--threads {threads}");
    }
    let o = wave(&["run", "compiler/asm/tests/data/vector_add.wave", "--threads", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let test = |threads: &str| {
        let o = wave(&[
            "test",
            "conformance/cases/atomics",
            "conformance/cases/programs",
            "--threads",
            threads,
        ]);
        assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
        text(&o.stdout)
    };
    let one = test("1");
    assert!(one.contains(" passed, 0 failed"), "{one}");
    assert_eq!(test("3"), one);
}

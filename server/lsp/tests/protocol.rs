//! The server through the protocol, in process: a client writes framed JSON-RPC into an
//! in-memory pipe, as an editor would.

use serde_json::{Value, json};
use wave_lsp::harness::Client;

const URI: &str = "file:///tmp/wave-protocol-test/loop.wave";

/// A divergent loop: lane l adds l + 1 to a sum until it passes 10, and stores the sum.
const LOOP: &str = "; divergent loop
.kernel divergent
.param out: ptr
.workgroup_size 32
    mov r1, sr_lane_id
    iadd r4, r1, 1
    mov_imm r2, 0
    loop
        iadd r2, r2, r4
        icmp.gt p0, r2, 10
        break p0
    endloop
    shift.shl r3, r1, 2
    iadd r3, out, r3
    device_store.u32 [r3], r2
.end
";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// A client that pushes diagnostics (no pull capability) and speaks UTF-16.
async fn pushing() -> Client {
    let mut c = Client::start();
    c.initialize(json!({"window": {"workDoneProgress": true}}), json!({})).await.expect("init");
    c
}

/// A client that pulls diagnostics.
async fn pulling() -> Client {
    let mut c = Client::start();
    c.initialize(json!({"textDocument": {"diagnostic": {}}}), json!({})).await.expect("init");
    c
}

fn pos(line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}})
}

fn ok(r: std::io::Result<Result<Value, Value>>) -> Value {
    r.expect("transport").expect("a result, not an error")
}

#[test]
fn initialize_advertises_what_is_handled_and_negotiates_utf8() {
    runtime().block_on(async {
        let mut c = Client::start();
        let init = c
            .initialize(json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}), json!({}))
            .await
            .expect("init");
        let caps = &init["capabilities"];
        assert_eq!(caps["positionEncoding"], "utf-8");
        for key in [
            "hoverProvider",
            "completionProvider",
            "signatureHelpProvider",
            "definitionProvider",
            "referencesProvider",
            "renameProvider",
            "documentHighlightProvider",
            "documentSymbolProvider",
            "workspaceSymbolProvider",
            "semanticTokensProvider",
            "foldingRangeProvider",
            "selectionRangeProvider",
            "documentFormattingProvider",
            "documentOnTypeFormattingProvider",
            "codeActionProvider",
            "codeLensProvider",
            "inlayHintProvider",
            "executeCommandProvider",
        ] {
            assert!(!caps[key].is_null(), "{key} missing: {caps}");
        }
        assert!(caps["diagnosticProvider"].is_null(), "this client cannot pull: push instead");
        assert!(caps["callHierarchyProvider"].is_null(), "only what is handled is advertised");
        c.shutdown().await.expect("shutdown");
    });
}

#[test]
fn diagnostics_are_pushed_with_versions_codes_and_tags() {
    runtime().block_on(async {
        let mut c = pushing().await;
        c.open(URI, &LOOP.replace("iadd r2, r2, r4", "iaddd r2, r2, r4")).await.expect("open");
        let d = c
            .wait_for("textDocument/publishDiagnostics", |p| p["uri"] == URI)
            .await
            .expect("diagnostics");
        assert_eq!(d["version"], 1);
        let items = d["diagnostics"].as_array().expect("list");
        let e = items.iter().find(|i| i["code"] == "E0101").expect("E0101");
        assert_eq!(e["severity"], 1);
        assert_eq!(e["range"]["start"], json!({"line": 8, "character": 8}));
        // Fix it; the hints of a kernel that assembles appear (an unused parameter is faded).
        c.change(URI, 2, (8, 8), (8, 13), "iadd").await.expect("change");
        c.change(URI, 3, (2, 0), (2, 0), ".param unused: u32\n").await.expect("change");
        let d = c
            .wait_for("textDocument/publishDiagnostics", |p| p["version"] == 3)
            .await
            .expect("diagnostics");
        let items = d["diagnostics"].as_array().expect("list");
        assert!(items.iter().all(|i| i["code"] != "E0101"), "{items:?}");
        let unused = items.iter().find(|i| i["code"] == "H0002").expect("unused parameter hint");
        assert_eq!(unused["severity"], 4, "a hint");
        assert_eq!(unused["tags"], json!([1]), "unnecessary");
        // A stale version is ignored.
        c.change(URI, 2, (0, 0), (0, 0), "garbage ").await.expect("change");
        let hover = ok(c.request("textDocument/hover", pos(1, 10)).await);
        assert!(hover["contents"]["value"].as_str().expect("md").contains(".kernel divergent"));
    });
}

#[test]
fn diagnostics_are_pulled_when_the_client_can() {
    runtime().block_on(async {
        let mut c = pulling().await;
        c.open(URI, &LOOP.replace("break p0", "break p7")).await.expect("open");
        let doc = json!({"textDocument": {"uri": URI}});
        let r = ok(c.request("textDocument/diagnostic", doc.clone()).await);
        assert_eq!(r["kind"], "full");
        assert!(r["items"].as_array().expect("items").iter().any(|i| i["code"] == "E0111"), "{r}");
        let id = r["resultId"].clone();
        let again = ok(c
            .request(
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": URI}, "previousResultId": id}),
            )
            .await);
        assert_eq!(again["kind"], "unchanged");
        assert!(
            !c.notifications.iter().any(|(m, _)| m == "textDocument/publishDiagnostics"),
            "a pulling client is not also pushed to"
        );
    });
}

#[test]
fn hover_completion_signature_and_highlights() {
    runtime().block_on(async {
        let mut c = pushing().await;
        c.open(URI, LOOP).await.expect("open");
        // On r2 in `iadd r2, r2, r4`: its last writes (lines are 1-based in text).
        let h = ok(c.request("textDocument/hover", pos(8, 13)).await);
        let md = h["contents"]["value"].as_str().expect("markdown");
        assert!(
            md.contains("general register 2") && md.contains("line 7: `mov_imm r2, 0`"),
            "{md}"
        );
        // On the mnemonic: the encoding table.
        let h = ok(c.request("textDocument/hover", pos(8, 9)).await);
        assert!(h["contents"]["value"].as_str().expect("md").contains("| opcode | 47:40 |"));
        // Completion after `device_store.`: suffixes.
        c.change(URI, 2, (15, 0), (15, 0), "    device_store.\n").await.expect("change");
        let items = ok(c.request("textDocument/completion", pos(15, 17)).await);
        let labels: Vec<&str> =
            items.as_array().expect("items").iter().filter_map(|i| i["label"].as_str()).collect();
        assert!(labels.contains(&"u32") && labels.contains(&"streaming"), "{labels:?}");
        // Signature help in the second operand.
        c.change(URI, 3, (15, 0), (16, 0), "    iadd r4, \n").await.expect("change");
        let s = ok(c.request("textDocument/signatureHelp", pos(15, 13)).await);
        assert_eq!(s["signatures"][0]["label"], "iadd rd, rs1, rs2|imm");
        assert_eq!(s["activeParameter"], 1);
        assert_eq!(s["signatures"][0]["parameters"][1]["label"], json!([9, 12]));
        // Highlights of r2: written twice, read three times.
        c.change(URI, 4, (15, 0), (16, 0), "").await.expect("change");
        let hl = ok(c.request("textDocument/documentHighlight", pos(8, 13)).await);
        let kinds: Vec<i64> =
            hl.as_array().expect("list").iter().filter_map(|h| h["kind"].as_i64()).collect();
        assert_eq!(kinds.iter().filter(|k| **k == 3).count(), 2, "{hl}");
        assert_eq!(kinds.iter().filter(|k| **k == 2).count(), 3, "{hl}");
    });
}

#[test]
fn semantic_tokens_selection_ranges_symbols_and_on_type_indentation() {
    runtime().block_on(async {
        let mut c = pushing().await;
        c.open(URI, LOOP).await.expect("open");
        let t = ok(c.request("textDocument/semanticTokens/full", json!({"textDocument": {"uri": URI}})).await);
        let data: Vec<u64> =
            t["data"].as_array().expect("data").iter().filter_map(Value::as_u64).collect();
        assert_eq!(data.len() % 5, 0);
        // The first token is the comment on line 0; the second `.kernel` on line 1.
        assert_eq!(&data[..5], &[0, 0, 16, 7, 0]);
        assert_eq!(&data[5..10], &[1, 0, 7, 1, 0]);
        let sel = ok(c
            .request(
                "textDocument/selectionRange",
                json!({"textDocument": {"uri": URI}, "positions": [{"line": 9, "character": 16}]}),
            )
            .await);
        // p0 → the statement → the loop → the kernel → the file.
        let mut depth = 0;
        let mut node = &sel[0];
        while !node.is_null() {
            depth += 1;
            node = &node["parent"];
        }
        assert_eq!(depth, 5, "{sel}");
        let syms = ok(c.request("workspace/symbol", json!({"query": "dvg"})).await);
        assert_eq!(syms[0]["name"], "divergent");
        // Typing Enter after `loop` indents the new line one level deeper.
        c.change(URI, 2, (7, 8), (7, 8), "\n").await.expect("change");
        let edits = ok(c
            .request(
                "textDocument/onTypeFormatting",
                json!({"textDocument": {"uri": URI}, "position": {"line": 8, "character": 0}, "ch": "\n", "options": {"tabSize": 4, "insertSpaces": true}}),
            )
            .await);
        assert_eq!(edits[0]["newText"], "        ", "{edits}");
    });
}

#[test]
fn code_actions_fix_did_you_mean_and_unclosed_blocks() {
    runtime().block_on(async {
        let mut c = pushing().await;
        let broken = LOOP.replace("iadd r2, r2, r4", "iaddd r2, r2, r4").replace("    endloop\n", "");
        c.open(URI, &broken).await.expect("open");
        let all = json!({"textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}}, "context": {"diagnostics": []}});
        let actions = ok(c.request("textDocument/codeAction", all).await);
        let titles: Vec<&str> =
            actions.as_array().expect("list").iter().filter_map(|a| a["title"].as_str()).collect();
        assert!(titles.contains(&"Replace `iaddd` with `iadd`"), "{titles:?}");
        let close = actions
            .as_array()
            .expect("list")
            .iter()
            .find(|a| a["title"] == "Insert the missing `endloop`")
            .expect("insert endloop");
        let edit = &close["edit"]["changes"][URI][0];
        assert_eq!(edit["newText"], "    endloop\n");
        assert_eq!(edit["range"]["start"], json!({"line": 14, "character": 0}), "before `.end`");
        assert_eq!(close["kind"], "quickfix");
    });
}

#[test]
fn code_lenses_preview_and_run_in_the_emulator() {
    runtime().block_on(async {
        let mut c = pushing().await;
        c.open(URI, LOOP).await.expect("open");
        let lenses =
            ok(c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}})).await);
        let titles: Vec<&str> = lenses
            .as_array()
            .expect("list")
            .iter()
            .filter_map(|l| l["command"]["title"].as_str())
            .collect();
        assert!(titles.contains(&"▶ Run in emulator (defaults)"), "{titles:?}");
        assert!(titles.contains(&"Show PTX") && titles.contains(&"Debug"), "{titles:?}");
        // The GPU lenses exactly where a CUDA GPU is: no lens promises what cannot run.
        let gpu = !wave_runtime::devices().0.is_empty();
        assert_eq!(titles.contains(&"▶ Run on GPU"), gpu, "{titles:?}");
        assert_eq!(titles.contains(&"Compare GPU with emulator"), gpu, "{titles:?}");
        if !gpu {
            // Asked anyway, a GPU run says what is missing.
            for device in ["cuda", "compare"] {
                let e = c
                    .request(
                        "workspace/executeCommand",
                        json!({"command": "wave.run", "arguments": [{"uri": URI, "device": device}]}),
                    )
                    .await
                    .expect("transport")
                    .expect_err("no GPU");
                let m = e["message"].as_str().expect("message");
                assert!(m.starts_with("wave.run on a GPU: no CUDA"), "{m}");
            }
        }
        let e = c
            .request(
                "workspace/executeCommand",
                json!({"command": "wave.run", "arguments": [{"uri": URI, "device": "metal"}]}),
            )
            .await
            .expect("transport")
            .expect_err("unknown device");
        assert!(e["message"].as_str().expect("message").contains("unknown device `metal`"), "{e}");
        // The preview, with its map back to WAVE lines.
        let p = ok(c
            .request("wave/preview", json!({"textDocument": {"uri": URI}, "target": "ptx"}))
            .await);
        let text = p["text"].as_str().expect("text");
        assert!(text.contains(".entry divergent("), "{text}");
        let lines = p["lines"].as_array().expect("lines");
        let store = text.lines().position(|l| l.contains("st.global")).expect("a store");
        let mapped = (0..=store).rev().find_map(|i| lines[i].as_u64()).expect("mapped");
        assert_eq!(mapped, 14, "the store comes from line 14 (0-based)");
        // Run: defaults give `out` its own region and show it.
        let r = ok(c
            .request(
                "workspace/executeCommand",
                json!({"command": "wave.run", "arguments": [{"uri": URI, "kernel": "divergent"}]}),
            )
            .await);
        assert_eq!(r["ok"], true, "{r}");
        let values: Vec<String> = r["dumps"][0]["values"]
            .as_array()
            .expect("values")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        // Lane l adds l + 1 until the sum passes 10.
        assert_eq!(values.len(), 16);
        assert_eq!(values[0], "11");
        assert_eq!(values[3], "12", "lane 3: 4, 8, 12");
        assert_eq!(values[10], "11");
        // Every client shows the result: the summary as a message, the whole in the log.
        let shown = c.wait_for("window/showMessage", |_| true).await.expect("a message");
        let message = shown["message"].as_str().expect("text");
        assert!(message.starts_with("wave run divergent (defaults): ok, "), "{message}");
        assert!(message.contains("0 u32[16]: 11 12 12 12 15"), "{message}");
        let log = c.wait_for("window/logMessage", |_| true).await.expect("a log");
        assert!(log["message"].as_str().expect("text").contains("instructions: "), "{log}");
    });
}

const SPIN: &str =
    ".kernel spin\n    mov_imm r1, 0\n    loop\n        iadd r1, r1, 1\n    endloop\n.end\n";

#[test]
fn a_run_over_budget_traps_at_its_line_with_progress_reported() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(
            json!({"window": {"workDoneProgress": true}}),
            json!({"wave": {"runBudget": 300000}}),
        )
        .await
        .expect("init");
        c.open(URI, SPIN).await.expect("open");
        let r = ok(c
            .request(
                "workspace/executeCommand",
                json!({"command": "wave.run", "arguments": [{"uri": URI}]}),
            )
            .await);
        assert_eq!(r["ok"], false);
        assert!(
            r["trap"]["message"].as_str().expect("trap").contains("instruction budget exceeded"),
            "{r}"
        );
        // The trap is a diagnostic at the loop's line until the next edit.
        let d = c
            .wait_for("textDocument/publishDiagnostics", |p| {
                p["diagnostics"].as_array().is_some_and(|d| d.iter().any(|i| i["code"] == "trap"))
            })
            .await
            .expect("trap diagnostic");
        let trap = d["diagnostics"]
            .as_array()
            .expect("list")
            .iter()
            .find(|i| i["code"] == "trap")
            .cloned()
            .expect("trap");
        assert!(
            (1..=4).contains(&trap["range"]["start"]["line"].as_u64().expect("line")),
            "{trap}"
        );
        assert!(
            c.server_requests.iter().any(|(m, _)| m == "window/workDoneProgress/create"),
            "a progress token was created"
        );
        let progress: Vec<&Value> =
            c.notifications.iter().filter(|(m, _)| m == "$/progress").map(|(_, p)| p).collect();
        assert_eq!(progress.first().map(|p| p["value"]["kind"].clone()), Some(json!("begin")));
        assert_eq!(progress.last().map(|p| p["value"]["kind"].clone()), Some(json!("end")));
        c.change(URI, 2, (0, 0), (0, 0), "; edited\n").await.expect("change");
        let d = c
            .wait_for("textDocument/publishDiagnostics", |p| p["version"] == 2)
            .await
            .expect("after edit");
        assert!(d["diagnostics"].as_array().expect("list").iter().all(|i| i["code"] != "trap"));
    });
}

#[test]
fn a_cancelled_run_stops_and_the_server_keeps_answering() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(json!({}), json!({"runBudget": 100000000000u64})).await.expect("init");
        c.open(URI, SPIN).await.expect("open");
        let started = std::time::Instant::now();
        let id = c
            .send("workspace/executeCommand", json!({"command": "wave.run", "arguments": [{"uri": URI}]}))
            .await
            .expect("send");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        // Other requests are answered while the run goes on.
        let h = ok(c.request("textDocument/hover", pos(3, 9)).await);
        assert!(h["contents"]["value"].as_str().expect("md").contains("iadd"));
        c.notify("$/cancelRequest", json!({"id": id})).await.expect("cancel");
        let answer = c.response(id).await.expect("a response");
        let error = answer.expect_err("cancelled");
        assert_eq!(error["code"], -32800, "RequestCancelled: {error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        // Unknown commands and bad arguments are errors, not crashes.
        let e = c
            .request("workspace/executeCommand", json!({"command": "wave.nope", "arguments": []}))
            .await
            .expect("transport")
            .expect_err("unknown");
        assert!(e["message"].as_str().expect("message").contains("unknown command"));
        let e = c
            .request("workspace/executeCommand", json!({"command": "wave.run", "arguments": [{"uri": URI, "kernel": "nope"}]}))
            .await
            .expect("transport")
            .expect_err("no kernel");
        assert!(e["message"].as_str().expect("message").contains("no kernel `nope`"), "{e}");
        let e = c
            .request("wave/preview", json!({"textDocument": {"uri": URI}, "target": "cuda"}))
            .await
            .expect("transport")
            .expect_err("bad target");
        assert!(e["message"].as_str().expect("message").contains("unknown target"), "{e}");
        // Requests on a document that is not open answer nothing.
        let h = ok(c
            .request("textDocument/hover", json!({"textDocument": {"uri": "file:///nope.wave"}, "position": {"line": 0, "character": 0}}))
            .await);
        assert!(h.is_null());
        c.shutdown().await.expect("shutdown");
    });
}

/// Every malformed message of the fuzzing report (issue 19) gets its JSON-RPC error, and the
/// session goes on: a real request after each one is answered.
#[test]
fn malformed_messages_are_answered_and_the_session_goes_on() {
    runtime().block_on(async {
        let mut c = pushing().await;
        c.open(URI, LOOP).await.expect("open");
        let symbols = json!({"textDocument": {"uri": URI}});
        let bad: [(&[u8], i64); 16] = [
            // A repeated key: the library's decoder refuses it (found in review).
            (b"{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{},\"params\":{}}", 0),
            // A request that also carries a result, and a response whose error the library
            // refuses (its id is the server's: dropped, never answered).
            (b"{\"jsonrpc\":\"2.0\",\"id\":94,\"method\":\"shutdown\",\"result\":null}", -32600),
            (b"{\"jsonrpc\":\"2.0\",\"id\":95,\"error\":{\"code\":\"x\",\"message\":\"m\"}}", 0),
            (b"this is not JSON", -32700),
            (b"\xff\xfe{\"jsonrpc\":\"2.0\"}", -32700),
            (b"{}", -32600),
            (b"[]", -32600),
            (b"null", -32600),
            (b"[{\"jsonrpc\":\"2.0\",\"id\":90,\"method\":\"shutdown\"}]", -32600),
            (b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"textDocument/hover\",\"params\":{}}", -32600),
            (b"{\"jsonrpc\":\"2.0\",\"id\":[],\"method\":\"textDocument/hover\",\"params\":{}}", -32600),
            (b"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"textDocument/hover\",\"params\":{}}", -32600),
            (b"{\"id\":91,\"method\":\"textDocument/hover\",\"params\":{}}", -32600),
            (b"{\"jsonrpc\":\"2.0\",\"id\":92,\"method\":\"$/wave.unknown\"}", -32601),
            (b"{\"jsonrpc\":\"2.0\",\"id\":93,\"method\":\"textDocument/documentSymbol\",\"params\":{\"textDocument\":{\"uri\":\"\\ud83d\"}}}", 0),
            (b"{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{\"textDocument\":{\"uri\":\"file:///tmp/wave-protocol-test/loop.wave\",\"version\":2},\"contentChanges\":[{\"text\":\"; \\ud83d lone\\n\"}]}}", 0),
        ];
        for (body, code) in bad {
            c.send_raw(body).await.expect("send");
            if code != 0 {
                let answer = c.next_response().await.expect("an answer to the malformed message");
                assert_eq!(answer["error"]["code"], code, "{}: {answer}", String::from_utf8_lossy(body));
            }
            // The session goes on.
            let r = c.request("textDocument/documentSymbol", symbols.clone()).await;
            assert!(r.expect("the server is still there").is_ok(), "after {}", String::from_utf8_lossy(body));
        }
        // The lone surrogate in the last edit became U+FFFD: the document is one comment line.
        let d = c
            .wait_for("textDocument/publishDiagnostics", |p| p["version"] == 2)
            .await
            .expect("diagnostics of version 2");
        assert_eq!(d["diagnostics"], json!([]), "{d}");
        let hover = ok(c.request("textDocument/semanticTokens/full", symbols.clone()).await);
        assert!(hover["data"].is_array());
        // Broken framing: a header without Content-Length, then one that is not a number.
        c.send_bytes(b"Content-Type: nothing\r\n\r\n").await.expect("send");
        assert_eq!(c.next_response().await.expect("answer")["error"]["code"], -32700);
        c.send_bytes(b"Content-Length: lots\r\n\r\n").await.expect("send");
        assert_eq!(c.next_response().await.expect("answer")["error"]["code"], -32700);
        assert!(c.request("textDocument/documentSymbol", symbols).await.expect("alive").is_ok());
        c.shutdown().await.expect("shutdown");
    });
}

/// The documents of the fuzzing report that took the server down (issue 19), each opened and
/// asked for everything: a Python file that aborted tree-sitter-python's scanner, 1,600 nested
/// `if` in Rust, 5,000 parentheses in Python, a C++ line of 3,000 `if`, 20,000 nested `if p0`
/// in WAVE. Each gets its diagnostics and answers; the server goes on. The server runs here as
/// `wave lsp` runs it: on a thread with a large stack, in a debug build.
#[test]
fn deeply_nested_documents_get_diagnostics_and_the_server_goes_on() {
    let mut python_scanner = String::from("def k(a):\n\"\n");
    for level in 1..=520 {
        python_scanner.push_str(&" ".repeat(level));
        python_scanner.push_str("if a:\n");
    }
    let rust_ifs = format!(
        "#[wave::kernel(workgroup = (32, 1, 1))]\nfn k(out: &mut [u32]) {{\n    let i = wave::global_id(0);\n{}out[0] = i;{}\n}}\n",
        "if i > 0 { ".repeat(1600),
        "}".repeat(1600)
    );
    let python_parens = format!(
        "import wave\n\n@wave.kernel(workgroup=32)\ndef k(out: u32[:]):\n    out[0] = {}1{}\n",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let cpp_line = format!(
        "[[wave::kernel, wave::workgroup(32, 1, 1)]]\nvoid k(uint32_t* out) {{\n    uint32_t i = wave::global_id(0);\n{}out[0] = i;{}\n}}\n",
        "if (i > 0) { ".repeat(3000),
        "}".repeat(3000)
    );
    let wave = format!(
        ".kernel deep\n.param out: ptr\n.workgroup_size 32\n    mov r1, sr_lane_id\n    icmp.gt p0, r1, 3\n{}    iadd r1, r1, 1\n{}    device_store.u32 out, r1\n.end\n",
        "    if p0\n".repeat(20_000),
        "    endif\n".repeat(20_000)
    );
    let documents = [
        ("file:///tmp/wave-deep/scanner.py", python_scanner, "E0412"),
        ("file:///tmp/wave-deep/ifs.rs", rust_ifs, "E0412"),
        ("file:///tmp/wave-deep/parens.py", python_parens, "E0412"),
        ("file:///tmp/wave-deep/line.cpp", cpp_line, "E0412"),
        ("file:///tmp/wave-deep/deep.wave", wave, "E0167"),
    ];
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            runtime().block_on(async {
                let mut c = pushing().await;
                for (uri, text, code) in &documents {
                    c.open(uri, text).await.expect("open");
                    let d = c
                        .wait_for("textDocument/publishDiagnostics", |p| p["uri"] == *uri)
                        .await
                        .expect("diagnostics");
                    let codes: Vec<&str> = d["diagnostics"]
                        .as_array()
                        .expect("a list")
                        .iter()
                        .filter_map(|d| d["code"].as_str())
                        .collect();
                    assert!(codes.contains(code), "{uri}: {codes:?}");
                    let doc = json!({"textDocument": {"uri": uri}});
                    let at = json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 12}});
                    let range = json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}});
                    for (method, params) in [
                        ("textDocument/semanticTokens/full", &doc),
                        ("textDocument/documentSymbol", &doc),
                        ("textDocument/foldingRange", &doc),
                        ("textDocument/codeLens", &doc),
                        ("textDocument/formatting", &json!({"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": true}})),
                        ("textDocument/hover", &at),
                        ("textDocument/completion", &at),
                        ("textDocument/definition", &at),
                        ("textDocument/inlayHint", &range),
                        ("wave/preview", &json!({"textDocument": {"uri": uri}, "target": "ptx"})),
                    ] {
                        let answer = c.request(method, params.clone()).await;
                        assert!(answer.is_ok(), "{uri}: {method}: the server is gone");
                    }
                }
                c.shutdown().await.expect("shutdown");
            });
        })
        .expect("thread")
        .join()
        .expect("no panic");
}

/// A request whose answer takes long (the first compile of a file of many kernels) does not
/// hold the session up: an edit arriving meanwhile cancels it at its next query (salsa's
/// cancellation), the request is answered `ContentModified` (-32801), and the new version's
/// diagnostics are published.
#[test]
fn an_edit_cancels_a_long_request_and_the_new_version_is_answered() {
    let mut text = String::from("import wave\n\n");
    for k in 0..150 {
        text.push_str(&format!(
            "@wave.kernel(workgroup=64)\ndef k{k}(out: f32[:], n: u32):\n    i = wave.global_id(0)\n    total: f32 = 0.0\n    for j in range(n):\n        if j % 3 == 1:\n            continue\n        total += out[(i + j) % n] * 0.5\n    out[i] = total\n\n"
        ));
    }
    let uri = "file:///tmp/wave-protocol-test/many.py";
    runtime().block_on(async {
        let mut c = pushing().await;
        c.open(uri, &text).await.expect("open");
        let at = json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 4}});
        let hover = c.send("textDocument/hover", at.clone()).await.expect("send");
        // An edit in the last kernel, while the first answers are being computed.
        let line = text.lines().count() as u32 - 2;
        c.change(uri, 2, (line, 4), (line, 4), "#").await.expect("change");
        let answer = c.response(hover).await.expect("a response");
        let error = answer.expect_err("the hover was computing when the edit came: cancelled");
        assert_eq!(error["code"], -32801, "{error}");
        let d = c
            .wait_for("textDocument/publishDiagnostics", |p| p["uri"] == uri && p["version"] == 2)
            .await
            .expect("the new version's diagnostics");
        assert_eq!(d["diagnostics"].as_array().map(Vec::len), Some(0), "{d}");
        // Asked again, it is answered.
        let again = c.request("textDocument/hover", at).await.expect("transport");
        assert!(
            again.is_ok_and(|h| h["contents"]["value"]
                .as_str()
                .is_some_and(|v| v.contains("i: u32")))
        );
    });
}

#[test]
fn a_run_without_a_kernel_name_takes_a_kernel_sources_first_kernel() {
    let uri = "file:///tmp/wave-protocol-test/first.py";
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef fill(out: u32[:]):\n    out[wave.global_id(0)] = 7\n\n@wave.kernel(workgroup=32)\ndef other(out: u32[:]):\n    out[wave.global_id(0)] = 9\n";
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(json!({}), json!({})).await.expect("init");
        c.open(uri, text).await.expect("open");
        let r = ok(c
            .request(
                "workspace/executeCommand",
                json!({"command": "wave.run", "arguments": [{"uri": uri}]}),
            )
            .await);
        assert_eq!(r["ok"], true, "{r}");
        assert_eq!(r["kernel"], "fill", "{r}");
        let values = r["dumps"][0]["values"].as_array().expect("values");
        assert!(values.iter().all(|v| v == "7"), "{r}");
    });
}

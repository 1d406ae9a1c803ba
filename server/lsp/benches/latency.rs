//! Editor latency on a 10,000-line file with 100 kernels, through the protocol in process
//! (JSON-RPC framing over an in-memory pipe, as an editor talks to `wave lsp`).
//!
//! Measures, each over a few hundred samples: a keystroke edit in one kernel to the published
//! diagnostics of that version; hover on instructions and registers; completion in operand
//! position. The baselines, measured in the same run: assembling the whole file once (what a
//! server without incremental queries would do per keystroke), and its parse alone.
//! Targets: p95 under 10 ms for edit to diagnostics, under 5 ms for hover and completion.
//! Run: `cargo bench -p wave-lsp --bench latency`. Figures are in docs/performance.md.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::time::{Duration, Instant};

use serde_json::json;
use wave_lsp::harness::Client;

const URI: &str = "file:///bench/big.wave";

/// 100 kernels of 100 lines each.
fn generate() -> String {
    let body = [
        "    mov r4, sr_workgroup_id_x",
        "    mov r5, sr_workgroup_size_x",
        "    imad r7, r4, r5, r6         ; global index",
        "    icmp.lt p0, r7, n",
        "    if p0",
        "        shift.shl r8, r7, 2",
        "        iadd r9, a, r8",
        "        device_load.u32 r10, [r9 + 16]",
        "        fadd r12, r10, 1.5",
        "        @!p1 fmul r12, r12, r11",
        "        loop",
        "            iadd r13, r13, -1",
        "            icmp.eq p2, r13, 0",
        "            break p2",
        "            wave_reduce.add r14, r12",
        "        endloop",
        "        device_store.u32 [r9 + 4], r12",
        "    endif",
        "    atomic_add.workgroup r15, r9, r12",
        "    call helper",
    ];
    let mut out = String::new();
    for k in 0..100 {
        out.push_str(&format!(
            "; kernel {k}\n.kernel k{k}\n.param a: ptr\n.param n: u32\n.workgroup_size 64\n"
        ));
        for rep in 0..4 {
            out.push_str(&format!("    ; part {rep}\n"));
            for line in body {
                out.push_str(line);
                out.push('\n');
            }
        }
        for _ in 0..6 {
            out.push_str("    nop\n");
        }
        out.push_str("    halt\nhelper:\n    wave_prefix_sum r16, r3\n    return\n.end\n");
    }
    out
}

struct Stats {
    p50: Duration,
    p95: Duration,
    max: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    Stats { p50: at(0.5), p95: at(0.95), max: *samples.last().unwrap_or(&Duration::ZERO) }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let text = generate();
    let lines = text.lines().count();
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");

    // Baselines: the whole file, assembled and parsed, best of 5.
    let best = |f: &dyn Fn()| {
        (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let assemble = best(&|| {
        std::hint::black_box(wave_asm::assemble(&text, "big.wave"));
    });
    let parse = best(&|| {
        std::hint::black_box(wave_asm::syntax::parse(&text));
    });

    let lines_of: Vec<&str> = text.lines().collect();
    let find = |needle: &str, nth: usize| -> (u32, u32) {
        let mut seen = 0;
        for (i, l) in lines_of.iter().enumerate() {
            if let Some(c) = l.find(needle) {
                if seen == nth {
                    return (i as u32, c as u32);
                }
                seen += 1;
            }
        }
        (0, 0)
    };

    runtime.block_on(async {
        let mut c = Client::start();
        c.initialize(json!({}), json!({})).await.expect("init");
        let t = Instant::now();
        c.open(URI, &text).await.expect("open");
        c.wait_for("textDocument/publishDiagnostics", |p| p["version"] == 1).await.expect("diagnostics");
        let open = t.elapsed();

        // Keystrokes: append a digit to an immediate in one kernel, then delete it.
        let mut edit = Vec::new();
        let mut version = 1;
        for i in 0..400 {
            let (line, col) = find("fadd r12, r10, 1.5", (i * 37) % 400);
            let at = col + "fadd r12, r10, 1.5".len() as u32;
            version += 1;
            let t = Instant::now();
            if i % 2 == 0 {
                c.change(URI, version, (line, at), (line, at), "5").await.expect("change");
            } else {
                let (line, col) = find("fadd r12, r10, 1.55", 0);
                let at = col + "fadd r12, r10, 1.5".len() as u32;
                c.change(URI, version, (line, at), (line, at + 1), "").await.expect("change");
            }
            let v = version;
            c.wait_for("textDocument/publishDiagnostics", |p| p["version"] == v).await.expect("diagnostics");
            edit.push(t.elapsed());
        }

        let mut hover = Vec::new();
        let mut completion = Vec::new();
        for i in 0..400 {
            let (line, col) = find("device_load.u32 r10", (i * 13) % 400);
            let character = if i % 2 == 0 { col + 2 } else { col + 17 };
            let p = json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}});
            let t = Instant::now();
            let h = c.request("textDocument/hover", p).await.expect("transport");
            hover.push(t.elapsed());
            assert!(h.is_ok_and(|h| !h.is_null()), "a hover");
            let (line, col) = find("iadd r9, a, r8", (i * 7) % 400);
            let p = json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": col + 9}});
            let t = Instant::now();
            let r = c.request("textDocument/completion", p).await.expect("transport");
            completion.push(t.elapsed());
            assert!(r.is_ok_and(|r| r.as_array().is_some_and(|a| !a.is_empty())), "completions");
        }
        c.shutdown().await.expect("shutdown");

        println!("file: {lines} lines, 100 kernels, {} bytes", text.len());
        println!("baseline: assemble the whole file {} · parse it {}", ms(assemble), ms(parse));
        println!("open to first diagnostics: {}", ms(open));
        println!("{:<34} {:>10} {:>10} {:>10} {:>12} {:>8}", "", "p50", "p95", "max", "p95/assemble", "target");
        let mut all_met = true;
        for (name, samples, target) in [
            ("keystroke to diagnostics", edit, Duration::from_millis(10)),
            ("hover", hover, Duration::from_millis(5)),
            ("completion", completion, Duration::from_millis(5)),
        ] {
            let s = stats(samples);
            let met = s.p95 < target;
            all_met &= met;
            println!(
                "{name:<34} {:>10} {:>10} {:>10} {:>11.3}x {:>8}",
                ms(s.p50),
                ms(s.p95),
                ms(s.max),
                s.p95.as_secs_f64() / assemble.as_secs_f64(),
                if met { "met" } else { "MISSED" }
            );
        }
        println!("verdict: {}", if all_met { "every target met" } else { "a target was missed" });
    });
}

//! Thousands of random edits through the protocol (insertions of random text, deletions,
//! undo), in UTF-16 positions like VS Code sends them. After each batch, the diagnostics the
//! server pushed for the last version must equal those of a fresh server that opens the same
//! text. `WAVE_SEED=N` replays one seed.

use serde_json::{Value, json};
use wave_lsp::harness::Client;

const URI: &str = "file:///tmp/wave-random/edit.wave";

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
}

const PIECES: &[&str] = &[
    "iadd r1, r2, r3\n",
    "    fadd r4, r4, 1.5\n",
    "icmp.lt p0, r1, 4\n",
    "if p0\n",
    "else\n",
    "endif\n",
    "loop\n",
    "break p0\n",
    "endloop\n",
    ".kernel k2\n",
    ".end\n",
    ".param out: ptr\n",
    ".registers 8\n",
    "device_store.u32 [out + 4], r1\n",
    "call f\n",
    "f:\n",
    "return\n",
    "@p1 ",
    "; comment é\n",
    "𝄞",
    "é",
    ",",
    "[",
    "]",
    ":",
    " ",
    "\n",
    "r",
    "9",
    ".",
    "sr_lane_id",
    "\u{0}",
    "\t",
];

const START: &str = ".kernel main
.param out: ptr
.param n: u32
    mov r2, sr_lane_id
    icmp.lt p0, r2, n
    if p0
        loop
            iadd r2, r2, 1
            icmp.gt p1, r2, 40
            break p1
        endloop
    endif
    shift.shl r3, r2, 2
    device_store.u32 [out + 0], r3
.end

; a second kernel
.kernel other
    call f
    halt
f:
    return
.end
";

/// The UTF-16 position of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].encode_utf16().count() as u32)
}

/// A char boundary at or before `offset`.
fn boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

async fn diagnostics_of(c: &mut Client, version: i32) -> Value {
    c.wait_for("textDocument/publishDiagnostics", |p| p["version"] == version)
        .await
        .expect("diagnostics")["diagnostics"]
        .clone()
}

#[test]
fn random_edits_leave_the_same_diagnostics_as_a_fresh_server() {
    let seeds: Vec<u64> = match std::env::var("WAVE_SEED") {
        Ok(s) => vec![s.parse().expect("WAVE_SEED is a number")],
        Err(_) => vec![1, 2, 3],
    };
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let mut edits = 0;
    for seed in seeds {
        runtime.block_on(async {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut c = Client::start();
            c.initialize(json!({}), json!({})).await.expect("init");
            let mut text = START.to_string();
            let mut history: Vec<String> = Vec::new();
            let mut version = 1;
            c.open(URI, &text).await.expect("open");
            for batch in 0..25 {
                for _ in 0..40 {
                    version += 1;
                    edits += 1;
                    let before = text.clone();
                    let (start, end, insert) = match rng.below(10) {
                        // Undo: the whole text back to an earlier version.
                        0 if !history.is_empty() => {
                            let back = history.swap_remove(rng.below(history.len()));
                            (0, text.len(), back)
                        }
                        1..=3 => {
                            let s = boundary(&text, rng.below(text.len() + 1));
                            let e = boundary(&text, (s + rng.below(24)).min(text.len()));
                            (s, e, String::new())
                        }
                        _ => {
                            let s = boundary(&text, rng.below(text.len() + 1));
                            let n = 1 + rng.below(3);
                            let piece: String = (0..n).map(|_| PIECES[rng.below(PIECES.len())]).collect();
                            (s, s, piece)
                        }
                    };
                    let (a, b) = (position(&text, start), position(&text, end));
                    c.change(URI, version, a, b, &insert).await.expect("change");
                    text.replace_range(start..end, &insert);
                    history.push(before);
                    if history.len() > 20 {
                        history.remove(0);
                    }
                }
                let edited = diagnostics_of(&mut c, version).await;
                let mut fresh = Client::start();
                fresh.initialize(json!({}), json!({})).await.expect("init");
                fresh.open(URI, &text).await.expect("open");
                let expected = diagnostics_of(&mut fresh, 1).await;
                fresh.shutdown().await.expect("shutdown");
                assert_eq!(
                    edited, expected,
                    "seed {seed}, batch {batch}: diagnostics differ from a fresh server's for:\n{text}"
                );
                // Hover and completion anywhere never fail.
                let at = boundary(&text, rng.below(text.len() + 1));
                let (line, character) = position(&text, at);
                let p = json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}});
                for method in ["textDocument/hover", "textDocument/completion", "textDocument/signatureHelp", "textDocument/semanticTokens/full"] {
                    let params = if method.ends_with("full") { json!({"textDocument": {"uri": URI}}) } else { p.clone() };
                    let r = c.request(method, params).await.expect("transport");
                    assert!(r.is_ok(), "seed {seed}: {method} at {line}:{character} failed: {r:?}\n{text}");
                }
            }
            c.shutdown().await.expect("shutdown");
        });
    }
    assert!(edits >= 3000, "{edits} edits");
}

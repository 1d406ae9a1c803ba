//! What each frontend lowers in its own way, run in the emulator at every level and compared
//! with the same computation in Rust: Rust's `match`, shadowing, `loop`, `step_by`, `if` as a
//! value and tail-expression helpers; C++'s `switch` with fall-through, `do`/`while` with
//! `continue`, counted and general `for`, function templates and the usual arithmetic
//! conversions; TypeScript's `number`, `Math.trunc` division, `>>>`, `do`/`while` and static
//! helpers.

use wave_kernel::{Language, Options, opt::Level};

const N: u32 = 64;

fn input(i: u32) -> u32 {
    i.wrapping_mul(2654435761) >> 7
}

/// `text` compiled at `level` and run over `N` threads (workgroups of 32, waves of 16): what
/// each thread stored in `out`.
fn run(text: &str, language: Language, level: Level) -> Vec<u32> {
    let options = Options { level, ..Default::default() };
    let (out, d) = wave_kernel::compile(text, language, "k", options);
    let out = out.unwrap_or_else(|| panic!("{language:?} at {level:?}: {d:?}"));
    let mut device = vec![0u8; 1024];
    for i in 0..N {
        device[i as usize * 4..][..4].copy_from_slice(&input(i).to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [N / 32, 1, 1],
        workgroup: Some([32, 1, 1]),
        wave_width: 16,
        args: vec![("inp".into(), 0), ("out".into(), 512)],
        ..Default::default()
    };
    wave_emulator::run(&out.module, &dispatch, &mut device)
        .unwrap_or_else(|t| panic!("{language:?} at {level:?}: {t}"));
    (0..N)
        .map(|i| u32::from_le_bytes(device[512 + i as usize * 4..][..4].try_into().unwrap()))
        .collect()
}

fn check(text: &str, language: Language, model: impl Fn(u32) -> u32) {
    let want: Vec<u32> = (0..N).map(|i| model(input(i))).collect();
    for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
        assert_eq!(run(text, language, level), want, "{language:?} at {level:?}");
    }
}

const RUST: &str = r#"
fn mix(a: u32, b: u32) -> u32 {
    let c = a ^ b;
    c.wrapping_mul(31) + (a >> 3)
}

#[wave::kernel(workgroup = (32, 1, 1))]
fn features(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let x = inp[i as usize];
    let x = x % 1000; // shadows the first `x`
    let mut acc: u32 = 0;
    for k in (0..x % 7).step_by(2) {
        acc += k * 3;
    }
    let mut n = x;
    loop {
        if n < 10 {
            break;
        }
        n = n / 3;
        acc += 1;
    }
    // (Unsuffixed, the literals would be `i32`: nothing constrains them.)
    let kind: u32 = match x % 8 {
        0 | 1 => 10,
        2..=4 => 20,
        5 => { 30 }
        _ => 40,
    };
    match x % 5 {
        0 => {
            acc += 100;
        }
        1 | 3 => acc += 7,
        _ => {}
    }
    {
        let acc = 5u32; // a block's own `acc`
        n = n + acc;
    }
    let f = (x as f32).sqrt().floor() as u32;
    let sel = if x > 500 { mix(x, acc) } else { kind };
    out[i as usize] = acc + kind * 1000 + f + sel + (!x & 0xF) + n;
}
"#;

fn rust_model(x: u32) -> u32 {
    let x = x % 1000;
    let mut acc: u32 = 0;
    for k in (0..x % 7).step_by(2) {
        acc += k * 3;
    }
    let mut n = x;
    while n >= 10 {
        n /= 3;
        acc += 1;
    }
    let kind = match x % 8 {
        0 | 1 => 10,
        2..=4 => 20,
        5 => 30,
        _ => 40,
    };
    match x % 5 {
        0 => acc += 100,
        1 | 3 => acc += 7,
        _ => {}
    }
    n += 5;
    let f = (x as f32).sqrt().floor() as u32;
    let sel = if x > 500 { ((x ^ acc).wrapping_mul(31)).wrapping_add(x >> 3) } else { kind };
    acc.wrapping_add(kind * 1000)
        .wrapping_add(f)
        .wrapping_add(sel)
        .wrapping_add(!x & 0xF)
        .wrapping_add(n)
}

#[test]
fn rust_match_shadowing_loop_and_helpers_compute_what_rust_does() {
    check(RUST, Language::Rust, rust_model);
}

/// Helpers whose last expression is an `if` or a `match`, without `;` (issue 22: refused with
/// E0400 because the grammar wraps them in a statement).
const RUST_TAILS: &str = r#"
fn band(x: u32) -> u32 {
    if x < 300 {
        1
    } else if x < 700 {
        2
    } else {
        3
    }
}

fn weight(b: u32) -> u32 {
    match b {
        1 => 10,
        2 => 20,
        _ => 40,
    }
}

#[wave::kernel(workgroup = (32, 1, 1))]
fn tails(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let x = inp[i as usize] % 1000;
    out[i as usize] = weight(band(x)) + band(x);
}
"#;

#[test]
fn rust_helpers_end_in_an_if_or_a_match() {
    check(RUST_TAILS, Language::Rust, |x| {
        let x = x % 1000;
        let band = if x < 300 {
            1
        } else if x < 700 {
            2
        } else {
            3
        };
        [0, 10, 20, 40][band as usize] + band
    });
}

/// Python's chained comparisons (issue 22): `a < b < c` is `a < b and b < c`.
const PY_CHAINED: &str = r#"
import wave

@wave.kernel(workgroup=32)
def chained(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    x = inp[i] % 1000
    r: u32 = 0
    if 100 < x < 500:
        r = 1
    if 200 <= x < 700 <= x + 400:
        r += 10
    if x < 900 > 5:
        r += 100
    out[i] = r
"#;

#[test]
fn python_chained_comparisons_test_each_pair() {
    check(PY_CHAINED, Language::Python, |x| {
        let x = x % 1000;
        u32::from(100 < x && x < 500)
            + 10 * u32::from((200..700).contains(&x) && 700 <= x + 400)
            + 100 * u32::from(x < 900)
    });
    let call = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:]):\n    t = wave.global_id()\n    if 0 < wave.shuffle(inp[t], 1) < 5:\n        out[t] = 1\n";
    let (_, d) = wave_kernel::compile(call, Language::Python, "k", Options::default());
    assert!(
        d.iter().any(|d| d.code == "E0400" && d.message.contains("give it a name first")),
        "{d:?}"
    );
}

const CPP: &str = r#"
#include <wave.h>

template <typename T>
T clampv(T v, T lo, T hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

__kernel void features(const uint32_t* inp, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    uint32_t x = inp[i] % 1000u;
    uint32_t acc = 0, k = 0;
    switch (x % 6) {
        case 0:
            acc += 1;
        case 1:
            acc += 10;
            break;
        case 2:
        case 3:
            acc += 100;
            break;
        default:
            acc += 1000;
        case 5:
            acc += 5;
    }
    do {
        k += 3;
        if (k % 2 == 0) {
            continue;
        }
        acc += k;
    } while (k < x % 20);
    for (int j = 10; j > 0; j -= 3) {
        acc += (uint32_t)j;
    }
    for (uint32_t j = 0; j < 4; j = j + 1) {
        acc ^= j << 4;
    }
    float f = (float)x * 0.5f;
    double d = f * 2.0;
    acc += static_cast<uint32_t>(d) + clampv<uint32_t>(x, 100u, 600u) + clampv(x & 7, 2u, 5u);
    out[i] = acc;
}
"#;

fn cpp_model(x: u32) -> u32 {
    let x = x % 1000;
    let mut acc: u32 = match x % 6 {
        0 => 11,
        1 => 10,
        2 | 3 => 100,
        5 => 5,
        _ => 1005,
    };
    let mut k = 0;
    loop {
        k += 3;
        if k % 2 != 0 {
            acc += k;
        }
        if k >= x % 20 {
            break;
        }
    }
    for j in [10, 7, 4, 1] {
        acc += j;
    }
    for j in 0..4 {
        acc ^= j << 4;
    }
    acc + x + x.clamp(100, 600) + (x & 7).clamp(2, 5)
}

#[test]
fn cpp_switch_do_while_for_and_templates_compute_what_cpp_does() {
    check(CPP, Language::Cpp, cpp_model);
}

const TYPESCRIPT: &str = r#"
import * as wave from "wave";
import type { u32, i32 } from "wave";

function twice(v: u32): u32 {
  return v * 2;
}

class Kernels {
  static spread(v: u32): u32 {
    return (v >>> 3) ^ (v << 2);
  }

  @kernel({ workgroup: [32] })
  static features(inp: Uint32Array, out: Uint32Array): void {
    const i: u32 = wave.globalId();
    const x: u32 = inp[i] % 1000;
    let acc: u32 = Math.trunc(x / 7) + (x >>> 2);
    const h: number = x * 0.25;
    acc += wave.u32(Math.floor(h));
    let k: i32 = 0;
    do {
      k++;
      if (k === 2) {
        continue;
      }
      acc += wave.u32(k);
    } while (k < 5);
    for (let j: u32 = 0; j < 3; j++) {
      acc += twice(j);
    }
    out[i] = acc + Kernels.spread(x) + (x % 3 === 0 ? 1 : 0);
  }
}
"#;

fn ts_model(x: u32) -> u32 {
    let x = x % 1000;
    let mut acc = x / 7 + (x >> 2);
    acc += (x as f64 * 0.25).floor() as u32;
    acc += 1 + 3 + 4 + 5;
    acc += (0..3).map(|j| 2 * j).sum::<u32>();
    acc.wrapping_add((x >> 3) ^ (x << 2)) + u32::from(x.is_multiple_of(3))
}

#[test]
fn typescript_numbers_division_and_helpers_compute_what_javascript_does() {
    check(TYPESCRIPT, Language::TypeScript, ts_model);
}

/// Comments inside parameter and argument lists are not parameters or arguments (tree-sitter
/// lists them among the named children; found while testing the command line's snippets).
#[test]
fn comments_in_parameter_and_argument_lists_are_ignored() {
    let sources = [
        (
            Language::Python,
            "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: u32[:],  # in\n      out: u32[:]):  # out\n    i = wave.global_id()\n    out[i] = max(inp[i],  # first\n                 3)\n",
        ),
        (
            Language::Rust,
            "#[wave::kernel(workgroup = (32, 1, 1))]\nfn k(inp: &[u32], // in\n     out: &mut [u32]) {\n    let i = wave::global_id(0);\n    out[i as usize] = inp[i as usize].max(/* first */ 3);\n}\n",
        ),
        (
            Language::Cpp,
            "[[wave::kernel, wave::workgroup(32, 1, 1)]]\nvoid k(const uint32_t* inp, // in\n       uint32_t* out /* out */) {\n    uint32_t i = wave::global_id(0);\n    out[i] = std::max(inp[i], /* first */ 3u);\n}\n",
        ),
        (
            Language::TypeScript,
            "import * as wave from \"wave\";\nimport type { u32 } from \"wave\";\nexport const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, // in\n  out: Uint32Array) {\n  const i: u32 = wave.globalId();\n  out[i] = Math.max(inp[i], /* first */ 3);\n});\n",
        ),
    ];
    for (language, text) in sources {
        for level in [Level::O0, Level::O2] {
            assert_eq!(
                run(text, language, level),
                (0..N).map(|i| input(i).max(3)).collect::<Vec<_>>(),
                "{language:?}"
            );
        }
    }
}

#[test]
fn cpp_expressions_the_grammar_reads_as_casts_compute_as_written() {
    // Without knowing which names are types, tree-sitter-cpp reads `(g * (x)) + y` as a cast
    // of `+y` to the pointer type `g *(x)`, `(std::max(a, b)) * (c)` as a cast of `*(c)`,
    // `(half)-x` as a subtraction and `(half)(x)` as a call: found by the differential fuzzer
    // in the C++ version of its kernels.
    let cpp = "[[wave::kernel, wave::workgroup(32, 1, 1)]]\nvoid features(const uint32_t* inp, uint32_t* out) {\n    uint32_t i = wave::global_id(0);\n    uint32_t x = inp[i] % 1000;\n    uint32_t g = x + 3;\n    uint32_t r = (g * (x)) + (x % 7) + (std::max(x, g)) * (2u);\n    half h = (half)-((float)(x % 5));\n    float f = (float)((half)(h));\n    out[i] = r + (uint32_t)(-f);\n}\n";
    check(cpp, Language::Cpp, |x| {
        let x = x % 1000;
        (x + 3) * x + x % 7 + (x + 3) * 2 + x % 5
    });
}

//! The constructs users reach for first (issue 22), each in Python and its counterparts in
//! Rust, C++ and TypeScript, compiled at every level and run in the emulator at wave widths
//! 8, 16 and 32 against the same computation written here in Rust.

use wave_kernel::{Language, Options, opt::Level};

const N: u32 = 64;

fn input(i: u32) -> u32 {
    i.wrapping_mul(2654435761) >> 7
}

/// `text` compiled at `level` and run over `N` threads (workgroups of 32, waves of `width`)
/// with `inp` holding `input(i)` and `out` zeroed: what `out` holds afterwards.
fn run(text: &str, language: Language, level: Level, width: u32) -> Vec<u32> {
    let options = Options { level, ..Default::default() };
    let (out, d) = wave_kernel::compile(text, language, "k", options);
    let out = out.unwrap_or_else(|| panic!("{language:?} at {level:?}: {d:#?}"));
    let mut device = vec![0u8; 1024];
    for i in 0..N {
        device[i as usize * 4..][..4].copy_from_slice(&input(i).to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [N / 32, 1, 1],
        workgroup: Some([32, 1, 1]),
        wave_width: width,
        args: vec![("inp".into(), 0), ("out".into(), 512)],
        ..Default::default()
    };
    wave_emulator::run(&out.module, &dispatch, &mut device)
        .unwrap_or_else(|t| panic!("{language:?} at {level:?}: {t}"));
    (0..N)
        .map(|i| u32::from_le_bytes(device[512 + i as usize * 4..][..4].try_into().unwrap()))
        .collect()
}

/// Every level and width of every version of the kernel gives `want`.
fn check(versions: &[(Language, &str)], want: &[u32]) {
    for (language, text) in versions {
        for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
            for width in [8, 16, 32] {
                let got = run(text, *language, level, width);
                assert_eq!(got, want, "{language:?} at {level:?}, width {width}");
            }
        }
    }
}

/// `model(i, input(i))` for every thread.
fn per_thread(model: impl Fn(u32, u32) -> u32) -> Vec<u32> {
    (0..N).map(|i| model(i, input(i))).collect()
}

#[test]
fn module_constants_in_every_language() {
    let python = r#"
import wave

TILE = 16
MASK = TILE * 4 - 1
SCALE: u32 = 3

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    t = wave.local_array(u32, TILE * 2)
    t[i % (TILE * 2)] = inp[i]
    out[i] = (inp[i] & MASK) * SCALE + TILE
"#;
    let rust = r#"
const TILE: u32 = 16;
const MASK: u32 = TILE * 4 - 1;
static SCALE: u32 = 3;

#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let t = wave::local_array::<u32, 32>();
    t[(i % (TILE * 2)) as usize] = inp[i as usize];
    out[i as usize] = (inp[i as usize] & MASK) * SCALE + TILE;
}
"#;
    let cpp = r#"
#define TILE 16
constexpr uint32_t MASK = TILE * 4 - 1;
static const unsigned SCALE = 3;

[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    wave::local_array<uint32_t, TILE * 2> t;
    t[i % (TILE * 2)] = inp[i];
    out[i] = (inp[i] & MASK) * SCALE + TILE;
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { u32 } from "wave";

const TILE = 16;
const MASK: u32 = TILE * 4 - 1;
export const SCALE: u32 = 3;

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Uint32Array) {
  const i: u32 = wave.globalId();
  const t = wave.localArray(Uint32Array, TILE * 2);
  t[i % (TILE * 2)] = inp[i];
  out[i] = (inp[i] & MASK) * SCALE + TILE;
});
"#;
    let want = per_thread(|_, x| (x & 63) * 3 + 16);
    check(
        &[
            (Language::Python, python),
            (Language::Rust, rust),
            (Language::Cpp, cpp),
            (Language::TypeScript, ts),
        ],
        &want,
    );
}

/// `text`'s kernel `k` at `-O2` and wave width 32 over `inputs.len()` threads (workgroups of
/// 32), `inp` holding `inputs`: what `out` holds afterwards.
fn run_words(text: &str, language: Language, level: Level, width: u32, inputs: &[u32]) -> Vec<u32> {
    let options = Options { level, ..Default::default() };
    let (out, d) = wave_kernel::compile(text, language, "k", options);
    let out = out.unwrap_or_else(|| panic!("{language:?} at {level:?}: {d:#?}"));
    let n = inputs.len();
    let mut device = vec![0u8; n * 8];
    for (i, x) in inputs.iter().enumerate() {
        device[i * 4..][..4].copy_from_slice(&x.to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [(n as u32).div_ceil(32), 1, 1],
        workgroup: Some([32, 1, 1]),
        wave_width: width,
        args: vec![("inp".into(), 0), ("out".into(), n as u32 * 4)],
        ..Default::default()
    };
    wave_emulator::run(&out.module, &dispatch, &mut device)
        .unwrap_or_else(|t| panic!("{language:?} at {level:?}: {t}"));
    (0..n).map(|i| u32::from_le_bytes(device[(n + i) * 4..][..4].try_into().unwrap())).collect()
}

/// How many `f32` steps `got` is from `want` (0 for two NaNs or equal infinities).
fn ulps(got: f32, want: f64) -> u64 {
    let want = want as f32;
    if got.is_nan() && want.is_nan() || got == want {
        return 0;
    }
    if got.is_nan() || want.is_nan() || got.is_infinite() || want.is_infinite() {
        return u64::MAX;
    }
    let key = |f: f32| {
        let b = f.to_bits() as i64;
        if b < 0x8000_0000 { b } else { 0x8000_0000 - b }
    };
    (key(got) - key(want)).unsigned_abs()
}

/// The `x` each thread of the math kernels computes from its input word.
fn math_x(w: u32) -> f32 {
    (w % 2000) as f32 / 100.0 - 10.0
}

/// The value the math kernels store for thread `i` with input `x`, in `f64` (their
/// functions, exactly, of the `f32` values they are given).
fn math_model(i: u32, x: f32) -> f64 {
    let x = f64::from(x);
    let a = f64::from((x.abs() as f32) + 0.5f32);
    match i % 6 {
        0 => x.exp(),
        1 => a.ln(),
        2 => f64::from((x as f32) * 0.3f32).tanh(),
        3 => x * x * x,
        4 => f64::from(x.abs() as f32).powf(1.5),
        _ => f64::from((x.abs() as f32) + 1.0f32).log10() + f64::from(std::f32::consts::PI),
    }
}

#[test]
fn exp_log_tanh_pow_and_the_constants_of_math_in_every_language() {
    let python = r#"
import math
import wave

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: f32[:]):
    i = wave.global_id()
    x = f32(inp[i] % 2000) / 100.0 - 10.0
    m = i % 6
    if m == 0:
        out[i] = math.exp(x)
    elif m == 1:
        out[i] = math.log(abs(x) + 0.5)
    elif m == 2:
        out[i] = wave.tanh(x * 0.3)
    elif m == 3:
        out[i] = x ** 3
    elif m == 4:
        out[i] = pow(abs(x), 1.5)
    else:
        out[i] = math.log10(abs(x) + 1.0) + math.pi
"#;
    let rust = r#"
#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [f32]) {
    let i = wave::global_id(0);
    let x = (inp[i as usize] % 2000) as f32 / 100.0 - 10.0;
    let r = match i % 6 {
        0 => x.exp(),
        1 => (x.abs() + 0.5).ln(),
        2 => (x * 0.3).tanh(),
        3 => x.powi(3),
        4 => x.abs().powf(1.5),
        _ => (x.abs() + 1.0).log10() + std::f32::consts::PI,
    };
    out[i as usize] = r;
}
"#;
    let cpp = r#"
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, float* out) {
    uint32_t i = wave::global_id(0);
    float x = (float)(inp[i] % 2000) / 100.0f - 10.0f;
    float r;
    switch (i % 6) {
    case 0: r = expf(x); break;
    case 1: r = std::log(fabsf(x) + 0.5f); break;
    case 2: r = tanhf(x * 0.3f); break;
    case 3: r = std::pow(x, 3); break;
    case 4: r = powf(fabsf(x), 1.5f); break;
    default: r = log10f(fabsf(x) + 1.0f) + (float)M_PI; break;
    }
    out[i] = r;
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { f32, u32 } from "wave";

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Float32Array) {
  const i: u32 = wave.globalId();
  const x: f32 = wave.f32(inp[i] % 2000) / wave.f32(100) - wave.f32(10);
  const m: u32 = i % 6;
  let r: f32 = wave.f32(0);
  if (m === 0) {
    r = Math.exp(x);
  } else if (m === 1) {
    r = Math.log(Math.abs(x) + wave.f32(0.5));
  } else if (m === 2) {
    r = Math.tanh(x * wave.f32(0.3));
  } else if (m === 3) {
    r = x ** 3;
  } else if (m === 4) {
    r = Math.pow(Math.abs(x), wave.f32(1.5));
  } else {
    r = Math.log10(Math.abs(x) + wave.f32(1)) + wave.f32(Math.PI);
  }
  out[i] = r;
});
"#;
    let inputs: Vec<u32> = (0..N).map(input).collect();
    for (language, text) in [
        (Language::Python, python),
        (Language::Rust, rust),
        (Language::Cpp, cpp),
        (Language::TypeScript, ts),
    ] {
        for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
            let got = run_words(text, language, level, 16, &inputs);
            for (i, (g, w)) in got.iter().zip(&inputs).enumerate() {
                let want = math_model(i as u32, math_x(*w));
                let g = f32::from_bits(*g);
                assert!(
                    ulps(g, want) <= 4,
                    "{language:?} at {level:?}, thread {i}, x = {}: {g} against {want}",
                    math_x(*w)
                );
            }
        }
    }
}

/// The largest error, in `f32` steps, of each math function built from others, over a sweep
/// of its range in the emulator (whose `exp2` and `log2` are correctly rounded): the bounds
/// `docs/kernels.md` gives.
#[test]
#[allow(clippy::print_stdout, reason = "the measured errors, for docs/kernels.md (`--nocapture`)")]
fn math_functions_stay_within_their_documented_error() {
    let text = r#"
import wave

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: f32[:]):
    i = wave.global_id()
    x = f32(inp[i]) / 65536.0
    m = i % 5
    if m == 0:
        out[i] = wave.exp(x * 0.0027 - 87.0)
    elif m == 1:
        out[i] = wave.log(x * x + 0.000001)
    elif m == 2:
        out[i] = wave.tanh(x * 0.0002 - 6.0)
    elif m == 3:
        out[i] = wave.log10(x + 0.0001)
    else:
        out[i] = (x * 0.0001 + 0.5) ** 7.5
"#;
    let n = 40_000u32;
    // Inputs from 0 to 65536 · 1000 (x from 0 to 1000), spread evenly.
    let inputs: Vec<u32> = (0..n).map(|i| i * (65536 * 1000 / n)).collect();
    let got = run_words(text, Language::Python, Level::O2, 32, &inputs);
    let mut worst = [0u64; 5];
    for (i, (g, w)) in got.iter().zip(&inputs).enumerate() {
        let x = (*w as f32) / 65536.0;
        let m = i % 5;
        let want = match m {
            0 => f64::from(x * 0.0027 - 87.0).exp(),
            1 => f64::from(x * x + 0.000001).ln(),
            2 => f64::from(x * 0.0002 - 6.0).tanh(),
            3 => f64::from(x + 0.0001).log10(),
            _ => f64::from(x * 0.0001 + 0.5).powf(7.5),
        };
        worst[m] = worst[m].max(ulps(f32::from_bits(*g), want));
    }
    println!(
        "largest errors in f32 steps: exp {}, log {}, tanh {}, log10 {}, pow {}",
        worst[0], worst[1], worst[2], worst[3], worst[4]
    );
    let bound = [2, 2, 2, 2, 6];
    for (m, name) in ["exp", "log", "tanh", "log10", "pow"].iter().enumerate() {
        assert!(worst[m] <= bound[m], "{name}: {} steps, more than {}", worst[m], bound[m]);
    }
}

#[test]
fn bit_counts_integer_powers_and_min_max_of_several_in_every_language() {
    let python = r#"
import wave

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    x = inp[i]
    y = x >> (i % 32)
    out[i] = wave.popcount(x) + wave.clz(y) * 64 + wave.ctz(y) * 4096 + (x % 16) ** 3 * 65536 + min(x % 7, x % 11, x % 5, 4) * 1000000
"#;
    let rust = r#"
#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let x = inp[i as usize];
    let y = x >> (i % 32);
    out[i as usize] = x.count_ones() + y.leading_zeros() * 64 + y.trailing_zeros() * 4096
        + (x % 16).pow(3) * 65536 + (x % 7).min(x % 11).min(x % 5).min(4) * 1000000;
}
"#;
    let cpp = r#"
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    uint32_t x = inp[i];
    uint32_t y = x >> (i % 32);
    uint32_t m = std::min({x % 7, x % 11, x % 5, 4u});
    out[i] = (uint32_t)__builtin_popcount(x) + (uint32_t)std::countl_zero(y) * 64
        + (uint32_t)__builtin_ctz(y) * 4096 + (x % 16) * (x % 16) * (x % 16) * 65536 + m * 1000000;
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { u32 } from "wave";

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Uint32Array) {
  const i: u32 = wave.globalId();
  const x: u32 = inp[i];
  const y: u32 = x >>> (i % 32);
  out[i] = wave.popcount(x) + Math.clz32(y) * 64 + wave.ctz(y) * 4096 + (x % 16) ** 3 * 65536
    + Math.min(x % 7, x % 11, x % 5, 4) * 1000000;
});
"#;
    let want = per_thread(|i, x| {
        let y = x >> (i % 32);
        x.count_ones()
            .wrapping_add(y.leading_zeros() * 64)
            .wrapping_add(y.trailing_zeros() * 4096)
            .wrapping_add((x % 16).pow(3).wrapping_mul(65536))
            .wrapping_add((x % 7).min(x % 11).min(x % 5).min(4) * 1000000)
    });
    check(
        &[
            (Language::Python, python),
            (Language::Rust, rust),
            (Language::Cpp, cpp),
            (Language::TypeScript, ts),
        ],
        &want,
    );
}

/// What every thread of the float wave-operation kernels stores, at wave width `width`: each
/// value is a small integer, so every order of summation gives the same sum.
fn float_wave_model(width: u32) -> Vec<u32> {
    let xs: Vec<u32> = (0..N).map(|i| input(i) % 1000).collect();
    (0..N)
        .map(|i| {
            let wave = (i / width * width..(i / width + 1) * width).map(|j| xs[j as usize]);
            let all: Vec<u32> = wave.clone().collect();
            let some: Vec<u32> = all.iter().copied().filter(|x| !x.is_multiple_of(3)).collect();
            let lane = (i % width) as usize;
            let x = xs[i as usize];
            let s: u32 = all.iter().sum();
            let mx = *all.iter().max().unwrap();
            let mn = *all.iter().min().unwrap();
            let p: u32 = all[..=lane].iter().sum();
            let (d, q) = if !x.is_multiple_of(3) {
                let before = all[..=lane].iter().filter(|x| !x.is_multiple_of(3)).sum::<u32>();
                (some.iter().sum::<u32>() + some.iter().copied().max().unwrap(), before)
            } else {
                (0, 0)
            };
            s.wrapping_mul(7)
                .wrapping_add(mx * 3)
                .wrapping_add(mn)
                .wrapping_add(p * 11)
                .wrapping_add(d * 13)
                .wrapping_add(q * 17)
        })
        .collect()
}

#[test]
fn float_wave_reductions_and_prefix_sums_in_every_language() {
    let python = r#"
import wave

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    x = f32(inp[i] % 1000)
    s = wave.reduce_add(x)
    mx = wave.reduce_max(x)
    mn = wave.reduce_min(x)
    p = wave.prefix_sum(x)
    d = 0.0
    q = 0.0
    if inp[i] % 1000 % 3 != 0:
        d = wave.reduce_add(x) + wave.reduce_max(x)
        q = wave.prefix_sum(x)
    out[i] = u32(s) * 7 + u32(mx) * 3 + u32(mn) + u32(p) * 11 + u32(d) * 13 + u32(q) * 17
"#;
    let rust = r#"
#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let x = (inp[i as usize] % 1000) as f32;
    let s = wave::reduce_add(x);
    let mx = wave::reduce_max(x);
    let mn = wave::reduce_min(x);
    let p = wave::prefix_sum(x);
    let mut d = 0.0f32;
    let mut q = 0.0f32;
    if inp[i as usize] % 1000 % 3 != 0 {
        d = wave::reduce_add(x) + wave::reduce_max(x);
        q = wave::prefix_sum(x);
    }
    out[i as usize] = s as u32 * 7 + mx as u32 * 3 + mn as u32 + p as u32 * 11 + d as u32 * 13 + q as u32 * 17;
}
"#;
    let cpp = r#"
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    float x = (float)(inp[i] % 1000);
    float s = wave::reduce_add(x);
    float mx = wave::reduce_max(x);
    float mn = wave::reduce_min(x);
    float p = wave::prefix_sum(x);
    float d = 0.0f;
    float q = 0.0f;
    if (inp[i] % 1000 % 3 != 0) {
        d = wave::reduce_add(x) + wave::reduce_max(x);
        q = wave::prefix_sum(x);
    }
    out[i] = (uint32_t)s * 7 + (uint32_t)mx * 3 + (uint32_t)mn + (uint32_t)p * 11 + (uint32_t)d * 13 + (uint32_t)q * 17;
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { f32, u32 } from "wave";

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Uint32Array) {
  const i: u32 = wave.globalId();
  const x: f32 = wave.f32(inp[i] % 1000);
  const s: f32 = wave.reduceAdd(x);
  const mx: f32 = wave.reduceMax(x);
  const mn: f32 = wave.reduceMin(x);
  const p: f32 = wave.prefixSum(x);
  let d: f32 = wave.f32(0);
  let q: f32 = wave.f32(0);
  if (inp[i] % 1000 % 3 !== 0) {
    d = wave.reduceAdd(x) + wave.reduceMax(x);
    q = wave.prefixSum(x);
  }
  out[i] = wave.u32(s) * 7 + wave.u32(mx) * 3 + wave.u32(mn) + wave.u32(p) * 11 + wave.u32(d) * 13 + wave.u32(q) * 17;
});
"#;
    for (language, text) in [
        (Language::Python, python),
        (Language::Rust, rust),
        (Language::Cpp, cpp),
        (Language::TypeScript, ts),
    ] {
        for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
            // (At width 64 a workgroup of 32 fills half a wave: the other lanes never run.)
            for width in [8, 16, 32, 64] {
                let got = run(text, language, level, width);
                let want = float_wave_model(width.min(32));
                assert_eq!(got, want, "{language:?} at {level:?}, width {width}");
            }
        }
    }
}

#[test]
fn float_wave_reductions_of_halves_and_doubles() {
    let python = r#"
import wave

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    x = inp[i] % 100
    h = wave.reduce_max(f16(x)) + wave.reduce_min(f16(x))
    d = wave.reduce_add(f64(x)) + wave.prefix_sum(f64(x))
    out[i] = u32(h) + u32(d) * 1000
"#;
    for width in [8, 16, 32] {
        let want: Vec<u32> = (0..N)
            .map(|i| {
                let wave: Vec<u32> =
                    (i / width * width..(i / width + 1) * width).map(|j| input(j) % 100).collect();
                let lane = (i % width) as usize;
                let h = wave.iter().max().unwrap() + wave.iter().min().unwrap();
                let d: u32 = wave.iter().sum::<u32>() + wave[..=lane].iter().sum::<u32>();
                h + d * 1000
            })
            .collect();
        for level in [Level::O0, Level::O2] {
            assert_eq!(
                run(python, Language::Python, level, width),
                want,
                "{level:?}, width {width}"
            );
        }
    }
}

#[test]
fn tuple_and_chained_assignment_in_every_language() {
    let python = r#"
import wave

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    a = inp[i] % 1000
    b = i
    c = d = u32(7)
    for j in range(3):
        a, b = b + 1, a * 2
    a, b = b, a
    c = d = a + c
    out[i] = a * 3 + b + c * 5 + d
"#;
    let rust = r#"
#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let (mut a, mut b) = (inp[i as usize] % 1000, i);
    for _j in 0..3 {
        (a, b) = (b + 1, a * 2);
    }
    std::mem::swap(&mut a, &mut b);
    let c = a + 7;
    let d = c;
    out[i as usize] = a * 3 + b + c * 5 + d;
}
"#;
    let cpp = r#"
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    uint32_t a = inp[i] % 1000, b = i, c, d;
    c = d = 7;
    for (int j = 0; j < 3; j++) {
        uint32_t t = a;
        a = b + 1;
        b = t * 2;
    }
    std::swap(a, b);
    c = d = a + c;
    out[i] = a * 3 + b + c * 5 + d;
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { u32 } from "wave";

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Uint32Array) {
  const i: u32 = wave.globalId();
  let [a, b] = [inp[i] % 1000, i];
  let c: u32 = 0;
  let d: u32 = 0;
  c = d = 7;
  for (let j = 0; j < 3; j++) {
    [a, b] = [b + 1, a * 2];
  }
  [a, b] = [b, a];
  c = d = a + c;
  out[i] = a * 3 + b + c * 5 + d;
});
"#;
    let want = per_thread(|i, x| {
        let (mut a, mut b) = (x % 1000, i);
        for _ in 0..3 {
            (a, b) = (b + 1, a.wrapping_mul(2));
        }
        std::mem::swap(&mut a, &mut b);
        let c = a + 7;
        a.wrapping_mul(3).wrapping_add(b).wrapping_add(c * 5).wrapping_add(c)
    });
    check(
        &[
            (Language::Python, python),
            (Language::Rust, rust),
            (Language::Cpp, cpp),
            (Language::TypeScript, ts),
        ],
        &want,
    );
}

#[test]
fn helpers_that_return_early_in_every_language() {
    let python = r#"
import wave

def classify(x: u32) -> u32:
    if x < 10:
        return 1
    for k in range(2, 40):
        if x % k == 0:
            return k
    j = u32(0)
    while j < 5:
        j += 1
        if x % 41 == j:
            return 100 + j
    return 0

def put(out: u32[:], i: u32, v: u32):
    if v == 0:
        return
    out[i] = v * 2

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    x = inp[i] % 5000
    out[i] = classify(x) + classify(x + 1) * 1000
    put(out, i, x % 3)
"#;
    let rust = r#"
fn classify(x: u32) -> u32 {
    if x < 10 {
        return 1;
    }
    for k in 2..40 {
        if x % k == 0 {
            return k;
        }
    }
    let mut j = 0u32;
    while j < 5 {
        j += 1;
        if x % 41 == j {
            return 100 + j;
        }
    }
    0
}

fn put(out: &mut [u32], i: u32, v: u32) {
    if v == 0 {
        return;
    }
    out[i as usize] = v * 2;
}

#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let x = inp[i as usize] % 5000;
    out[i as usize] = classify(x) + classify(x + 1) * 1000;
    put(out, i, x % 3);
}
"#;
    let cpp = r#"
uint32_t classify(uint32_t x) {
    if (x < 10) return 1;
    for (uint32_t k = 2; k < 40; k++) {
        if (x % k == 0) return k;
    }
    uint32_t j = 0;
    do {
        j++;
        if (x % 41 == j) return 100 + j;
    } while (j < 5);
    return 0;
}

void put(uint32_t* out, uint32_t i, uint32_t v) {
    if (v == 0) return;
    out[i] = v * 2;
}

[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    uint32_t x = inp[i] % 5000;
    out[i] = classify(x) + classify(x + 1) * 1000;
    put(out, i, x % 3);
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { u32 } from "wave";

function classify(x: u32): u32 {
  if (x < 10) {
    return 1;
  }
  for (let k: u32 = 2; k < 40; k++) {
    if (x % k === 0) {
      return k;
    }
  }
  let j: u32 = 0;
  while (j < 5) {
    j += 1;
    if (x % 41 === j) {
      return 100 + j;
    }
  }
  return 0;
}

function put(out: Uint32Array, i: u32, v: u32) {
  if (v === 0) {
    return;
  }
  out[i] = v * 2;
}

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Uint32Array) {
  const i: u32 = wave.globalId();
  const x: u32 = inp[i] % 5000;
  out[i] = classify(x) + classify(x + 1) * 1000;
  put(out, i, x % 3);
});
"#;
    fn classify(x: u32) -> u32 {
        if x < 10 {
            return 1;
        }
        for k in 2..40 {
            if x.is_multiple_of(k) {
                return k;
            }
        }
        for j in 1..=5 {
            if x % 41 == j {
                return 100 + j;
            }
        }
        0
    }
    let want = per_thread(|_, x| {
        let x = x % 5000;
        if x.is_multiple_of(3) { classify(x) + classify(x + 1) * 1000 } else { (x % 3) * 2 }
    });
    check(
        &[
            (Language::Python, python),
            (Language::Rust, rust),
            (Language::Cpp, cpp),
            (Language::TypeScript, ts),
        ],
        &want,
    );
}

#[test]
fn two_dimensional_local_arrays_in_every_language() {
    let python = r#"
import wave

ROWS = 4

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    t = wave.thread_id()
    tile = wave.local_array(u32, (ROWS, 8))
    tile[t // 8, t % 8] = inp[i]
    tile[t // 8][t % 8] += 1
    wave.barrier()
    out[i] = tile[t % 4][t // 4]
"#;
    let rust = r#"
#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let t = wave::thread_id(0);
    let tile = wave::local_array::<u32, 4, 8>();
    tile[(t / 8) as usize][(t % 8) as usize] = inp[i as usize];
    tile[(t / 8) as usize][(t % 8) as usize] += 1;
    wave::barrier();
    out[i as usize] = tile[(t % 4) as usize][(t / 4) as usize];
}
"#;
    let cpp = r#"
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    uint32_t t = wave::thread_id(0);
    wave::local_array<uint32_t, 4, 8> tile;
    tile[t / 8][t % 8] = inp[i];
    tile[t / 8][t % 8] += 1;
    wave::barrier();
    out[i] = tile[t % 4][t / 4];
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { u32 } from "wave";

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Uint32Array) {
  const i: u32 = wave.globalId();
  const t: u32 = wave.threadId();
  const tile = wave.localArray(Uint32Array, 4, 8);
  tile[Math.trunc(t / 8)][t % 8] = inp[i];
  tile[Math.trunc(t / 8)][t % 8] += 1;
  wave.barrier();
  out[i] = tile[t % 4][Math.trunc(t / 4)];
});
"#;
    let want = per_thread(|i, _| {
        let (w, t) = (i / 32, i % 32);
        input(w * 32 + (t % 4) * 8 + t / 4) + 1
    });
    check(
        &[
            (Language::Python, python),
            (Language::Rust, rust),
            (Language::Cpp, cpp),
            (Language::TypeScript, ts),
        ],
        &want,
    );
}

#[test]
fn byte_and_halfword_buffers_in_every_language() {
    let python = r#"
import wave

@wave.kernel(workgroup=32)
def k(inp: u8[:], out: u16[:]):
    i = wave.global_id()
    s = inp[4 * i] + inp[4 * i + 3] * 3
    out[2 * i] = s + 65536 * 7
    out[2 * i + 1] = inp[4 * i + 1]
    out[2 * i + 1] += 1
"#;
    let rust = r#"
#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u8], out: &mut [u16]) {
    let i = wave::global_id(0);
    let s = inp[(4 * i) as usize] + inp[(4 * i + 3) as usize] * 3;
    out[(2 * i) as usize] = s + 65536 * 7;
    out[(2 * i + 1) as usize] = inp[(4 * i + 1) as usize];
    out[(2 * i + 1) as usize] += 1;
}
"#;
    let cpp = r#"
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint8_t* inp, unsigned short* out) {
    uint32_t i = wave::global_id(0);
    uint32_t s = inp[4 * i] + inp[4 * i + 3] * 3;
    out[2 * i] = s + 65536 * 7;
    out[2 * i + 1] = inp[4 * i + 1];
    out[2 * i + 1] += 1;
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { u32 } from "wave";

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint8Array, out: Uint16Array) {
  const i: u32 = wave.globalId();
  const s: u32 = inp[4 * i] + inp[4 * i + 3] * 3;
  out[2 * i] = s + 65536 * 7;
  out[2 * i + 1] = inp[4 * i + 1];
  out[2 * i + 1] += 1;
});
"#;
    let want = per_thread(|_, x| {
        let b = x.to_le_bytes();
        let s = u32::from(b[0]) + u32::from(b[3]) * 3;
        (s & 0xffff) | ((u32::from(b[1]) + 1) << 16)
    });
    check(
        &[
            (Language::Python, python),
            (Language::Rust, rust),
            (Language::Cpp, cpp),
            (Language::TypeScript, ts),
        ],
        &want,
    );
}

#[test]
fn half_scalar_parameters_are_passed_as_f32_and_rounded_in_every_language() {
    let python = r#"
import wave

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:], h: f16):
    i = wave.global_id()
    out[i] = u32(f32(h * f16(2.0)) * 1000.0) + inp[i] % 7
"#;
    let rust = r#"
#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [u32], h: f16) {
    let i = wave::global_id(0);
    out[i as usize] = ((h * 2.0) as f32 * 1000.0) as u32 + inp[i as usize] % 7;
}
"#;
    let cpp = r#"
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, uint32_t* out, half h) {
    uint32_t i = wave::global_id(0);
    out[i] = (uint32_t)((float)(h * (half)2.0f) * 1000.0f) + inp[i] % 7;
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { f16, u32 } from "wave";

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Uint32Array, h: f16) {
  const i: u32 = wave.globalId();
  out[i] = wave.u32(wave.f32(h * wave.f16(2)) * wave.f32(1000)) + inp[i] % 7;
});
"#;
    // 1.3 rounds to the f16 1.2998046875; twice that, in thousandths, is 2599.
    let want = per_thread(|_, x| 2599 + x % 7);
    for (language, text) in [
        (Language::Python, python),
        (Language::Rust, rust),
        (Language::Cpp, cpp),
        (Language::TypeScript, ts),
    ] {
        for level in [Level::O0, Level::O2] {
            let options = Options { level, ..Default::default() };
            let (out, d) = wave_kernel::compile(text, language, "k", options);
            let out = out.unwrap_or_else(|| panic!("{language:?} at {level:?}: {d:#?}"));
            let mut device = vec![0u8; 1024];
            for i in 0..N {
                device[i as usize * 4..][..4].copy_from_slice(&input(i).to_le_bytes());
            }
            let dispatch = wave_emulator::Dispatch {
                grid: [N / 32, 1, 1],
                workgroup: Some([32, 1, 1]),
                args: vec![("inp".into(), 0), ("out".into(), 512), ("h".into(), 1.3f32.to_bits())],
                ..Default::default()
            };
            wave_emulator::run(&out.module, &dispatch, &mut device).unwrap();
            let got: Vec<u32> = (0..N)
                .map(|i| {
                    u32::from_le_bytes(device[512 + i as usize * 4..][..4].try_into().unwrap())
                })
                .collect();
            assert_eq!(got, want, "{language:?} at {level:?}");
        }
    }
}

/// `text`'s kernel `k` at `level`, wave width 32, over `groups` workgroups of 32 threads,
/// with `inp` holding `inputs`, `out` `outputs` words (zeroed) and `n` the number of threads:
/// what `out` holds afterwards.
fn run_f32(text: &str, level: Level, groups: u32, inputs: &[f32], outputs: usize) -> Vec<f32> {
    let options = Options { level, ..Default::default() };
    let (out, d) = wave_kernel::compile(text, Language::Python, "k", options);
    let out = out.unwrap_or_else(|| panic!("{level:?}: {d:#?}"));
    let at = inputs.len() * 4;
    let mut device = vec![0u8; at + outputs * 4];
    for (i, x) in inputs.iter().enumerate() {
        device[i * 4..][..4].copy_from_slice(&x.to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [groups, 1, 1],
        workgroup: Some([32, 1, 1]),
        wave_width: 32,
        args: vec![("inp".into(), 0), ("out".into(), at as u32), ("n".into(), groups * 32)],
        ..Default::default()
    };
    wave_emulator::run(&out.module, &dispatch, &mut device)
        .unwrap_or_else(|t| panic!("{level:?}: {t}"));
    (0..outputs)
        .map(|i| f32::from_le_bytes(device[at + i * 4..][..4].try_into().unwrap()))
        .collect()
}

fn close(got: &[f32], want: &[f64], what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(*g) - w).abs() / w.abs().max(1e-3);
        assert!(err < 1e-4, "{what}: element {i}: {g} against {w}");
    }
}

/// The n-body step and the attention scores a user writes first, with the constructs of
/// this file (module constants, tuple and chained assignment, a 2D local array, `**`, a
/// loop stepping by a constant, `exp`, float wave reductions): they compile at `-O3` (and
/// every other level) and compute what the same arithmetic in `f64` does.
#[test]
fn an_n_body_step_and_attention_scores_as_a_user_writes_them() {
    let nbody = r#"
import math
import wave

TILE = 32
EPS2 = 0.01

@wave.kernel(workgroup=TILE)
def k(inp: f32[:], out: f32[:], n: u32):
    i = wave.global_id()
    t = wave.thread_id()
    tile = wave.local_array(f32, (TILE, 4))
    x, y, z = inp[4 * i], inp[4 * i + 1], inp[4 * i + 2]
    ax = ay = az = 0.0
    for base in range(0, n, TILE):
        for c in range(4):
            tile[t, c] = inp[4 * (base + t) + c]
        wave.barrier()
        for j in range(TILE):
            dx = tile[j, 0] - x
            dy = tile[j][1] - y
            dz = tile[j][2] - z
            inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz + EPS2)
            s = tile[j][3] * inv ** 3
            ax += dx * s
            ay += dy * s
            az += dz * s
        wave.barrier()
    out[3 * i], out[3 * i + 1], out[3 * i + 2] = ax, ay, az
"#;
    let bodies = 64usize;
    let pos: Vec<f32> = (0..bodies * 4)
        .map(|k| {
            if k % 4 == 3 {
                1.0 + (k % 7) as f32 * 0.25
            } else {
                (input(k as u32) % 2000) as f32 / 100.0 - 10.0
            }
        })
        .collect();
    let mut want = Vec::new();
    for i in 0..bodies {
        let p = |j: usize, c: usize| f64::from(pos[4 * j + c]);
        let mut a = [0.0f64; 3];
        for j in 0..bodies {
            let d = [p(j, 0) - p(i, 0), p(j, 1) - p(i, 1), p(j, 2) - p(i, 2)];
            let inv = 1.0 / (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01).sqrt();
            let s = p(j, 3) * inv * inv * inv;
            for c in 0..3 {
                a[c] += d[c] * s;
            }
        }
        want.extend(a);
    }
    let attention = r#"
import math
import wave

D = 16
KEYS = 32

@wave.kernel(workgroup=KEYS)
def k(inp: f32[:], out: f32[:], n: u32):
    row = wave.workgroup_id()
    j = wave.thread_id()
    queries = n // KEYS
    s = 0.0
    for d in range(D):
        s += inp[row * D + d] * inp[queries * D + j * D + d]
    s = s / math.sqrt(D)
    m = wave.reduce_max(s)
    e = math.exp(s - m)
    out[row * KEYS + j] = e / wave.reduce_add(e)
"#;
    let queries = 4usize;
    let qk: Vec<f32> =
        (0..(queries + 32) * 16).map(|k| (input(k as u32) % 1000) as f32 / 250.0 - 2.0).collect();
    let mut scores = Vec::new();
    for r in 0..queries {
        let s: Vec<f64> = (0..32)
            .map(|j| {
                (0..16)
                    .map(|d| f64::from(qk[r * 16 + d]) * f64::from(qk[queries * 16 + j * 16 + d]))
                    .sum::<f64>()
                    / 4.0
            })
            .collect();
        let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = s.iter().map(|x| (x - m).exp()).sum();
        scores.extend(s.iter().map(|x| (x - m).exp() / total));
    }
    for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
        let got = run_f32(nbody, level, (bodies / 32) as u32, &pos, bodies * 3);
        close(&got, &want, &format!("n-body at {level:?}"));
        let got = run_f32(attention, level, queries as u32, &qk, queries * 32);
        close(&got, &scores, &format!("attention at {level:?}"));
    }
}

#[test]
fn exp2_and_log2_of_doubles_in_every_language() {
    // (The error sweep is `f64_exponentials_and_logarithms_stay_within_their_error` in
    // tests/double.rs; here each language's spelling on `f64`.)
    let python = r#"
import wave

@wave.kernel(workgroup=32)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    x = f64(inp[i] % 1000) / f64(8.0)
    out[i] = u32(wave.exp2(x / f64(16.0)) * f64(1000.0)) + u32(wave.log2(x + f64(1.0)) * f64(1000.0)) * 65536
"#;
    let rust = r#"
#[wave::kernel(workgroup = (32, 1, 1))]
fn k(inp: &[u32], out: &mut [u32]) {
    let i = wave::global_id(0);
    let x = (inp[i as usize] % 1000) as f64 / 8.0f64;
    out[i as usize] = ((x / 16.0f64).exp2() * 1000.0f64) as u32 + (((x + 1.0f64).log2() * 1000.0f64) as u32) * 65536;
}
"#;
    let cpp = r#"
[[wave::kernel, wave::workgroup(32, 1, 1)]]
void k(const uint32_t* inp, uint32_t* out) {
    uint32_t i = wave::global_id(0);
    double x = (double)(inp[i] % 1000) / 8.0;
    out[i] = (uint32_t)(exp2(x / 16.0) * 1000.0) + (uint32_t)(std::log2(x + 1.0) * 1000.0) * 65536;
}
"#;
    let ts = r#"
import * as wave from "wave";
import type { u32 } from "wave";

export const k = wave.kernel({ workgroup: [32] }, function k(inp: Uint32Array, out: Uint32Array) {
  const i: u32 = wave.globalId();
  const x: number = Number(inp[i] % 1000) / 8;
  out[i] = wave.u32((2 ** (x / 16)) * 1000) + wave.u32(Math.log2(x + 1) * 1000) * 65536;
});
"#;
    let want = per_thread(|_, w| {
        let x = f64::from(w % 1000) / 8.0;
        ((x / 16.0).exp2() * 1000.0) as u32 + (((x + 1.0).log2() * 1000.0) as u32) * 65536
    });
    check(
        &[
            (Language::Python, python),
            (Language::Rust, rust),
            (Language::Cpp, cpp),
            (Language::TypeScript, ts),
        ],
        &want,
    );
}

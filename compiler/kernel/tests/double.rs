//! f64 in the code generator: values in register pairs, 64-bit loads and stores, `dadd`,
//! `dsub`, `dmul`, `ddiv`, `dsqrt`, and what WAVE has no instruction for (comparisons,
//! negation, `abs`, `min`, `max`, `floor`, `ceil`, conversions to and from integers) built
//! exactly from those; checked
//! against Rust's f64 on values that f32 cannot tell apart, infinities, NaN, signed zeros
//! and subnormals; and what is still refused (E0408).

use wave_kernel::{Language, Options, opt::Level};

const KERNEL: &str = "import wave

@wave.kernel(workgroup=32)
def double(x: f64[:], y: f64[:], out: f64[:], flags: u32[:], ints: i32[:], n: u32):
    i = wave.global_id()
    if i >= n:
        return
    a = x[i]
    b = y[i]
    out[i * 8] = a + b
    out[i * 8 + 1] = a * b - a / b
    out[i * 8 + 2] = -a
    out[i * 8 + 3] = abs(a)
    out[i * 8 + 4] = min(a, b)
    out[i * 8 + 5] = max(a, b)
    out[i * 8 + 6] = wave.sqrt(abs(b)) + f64(ints[i]) + f64(u32(ints[i]))
    out[i * 8 + 7] = f64(f32(a)) + f64(wave.rsqrt(f32(2.0)))
    f: u32 = 0
    if a < b:
        f |= 1
    if a <= b:
        f |= 2
    if a > b:
        f |= 4
    if a >= b:
        f |= 8
    if a == b:
        f |= 16
    if a != b:
        f |= 32
    if a != 0.0:
        f |= 64
    flags[i] = f
";

/// Pairs that f32 cannot tell apart, infinities, NaN, zeros of both signs, subnormals, huge
/// and tiny values.
fn inputs() -> Vec<(f64, f64)> {
    let tiny = f64::from_bits(1); // the smallest subnormal
    let mut v = vec![
        (1.0, 1.0 + f64::EPSILON),
        (1.0 + f64::EPSILON, 1.0),
        (1.0, 1.0),
        (0.0, -0.0),
        (-0.0, 0.0),
        (tiny, 0.0),
        (-tiny, 0.0),
        (tiny, 2.0 * tiny),
        (f64::INFINITY, f64::INFINITY),
        (f64::NEG_INFINITY, f64::INFINITY),
        (f64::INFINITY, 1e308),
        (f64::NAN, 1.0),
        (2.0, f64::NAN),
        (1e300, -1e300),
        (1e-300, 3e-300),
        (-5.5, 2.25),
        (123_456_789.123_456_79, 123_456_789.123_456_8),
        (0.1, 0.1f32 as f64),
    ];
    for k in 0..14 {
        let a = (k as f64 * std::f64::consts::FRAC_1_SQRT_2 - 4.0) * 10f64.powi(k - 7);
        v.push((a, a * (1.0 + 3.0 * f64::EPSILON) - 1e-9));
    }
    // Random bit patterns: every exponent, both signs.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        f64::from_bits(state)
    };
    for _ in 0..30 {
        let (a, b) = (next(), next());
        v.push((a, b));
        v.push((a, -a));
    }
    v
}

fn flags(a: f64, b: f64) -> u32 {
    let mut f = 0;
    for (bit, holds) in [a < b, a <= b, a > b, a >= b, a == b, a != b, a != 0.0].iter().enumerate()
    {
        if *holds {
            f |= 1 << bit;
        }
    }
    f
}

/// Like `fmin`/`fmax`: the other operand where one is NaN.
fn min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b < a { b } else { a }
}

fn max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b > a { b } else { a }
}

fn same(x: f64, y: f64) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

#[test]
fn f64_arithmetic_comparisons_and_conversions_are_exact_at_every_level() {
    let cases = inputs();
    let n = cases.len();
    let ints: Vec<i32> = (0..n as i32).map(|i| (i - 7).wrapping_mul(300_000_007)).collect();
    for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
        let (out, d) = wave_kernel::compile(
            KERNEL,
            Language::Python,
            "double.py",
            Options { level, ..Default::default() },
        );
        let out = out.unwrap_or_else(|| panic!("{d:?}"));
        for m in ["dadd", "dmul", "ddiv", "dsub", "dsqrt", "device_load.u64", "device_store.u64"] {
            assert!(out.asm.contains(m), "{m}:\n{}", out.asm);
        }
        let (xs, ys, outs, fl, is) = (0usize, 1024usize, 2048usize, 8192usize, 8704usize);
        assert!(n * 8 <= ys - xs && outs + n * 64 <= fl && fl + n * 4 <= is);
        let mut device = vec![0u8; 9216];
        for (i, (a, b)) in cases.iter().enumerate() {
            device[xs + i * 8..xs + i * 8 + 8].copy_from_slice(&a.to_le_bytes());
            device[ys + i * 8..ys + i * 8 + 8].copy_from_slice(&b.to_le_bytes());
            device[is + i * 4..is + i * 4 + 4].copy_from_slice(&ints[i].to_le_bytes());
        }
        let dispatch = wave_emulator::Dispatch {
            grid: [n.div_ceil(32) as u32, 1, 1],
            wave_width: 16,
            args: vec![
                ("x".into(), xs as u32),
                ("y".into(), ys as u32),
                ("out".into(), outs as u32),
                ("flags".into(), fl as u32),
                ("ints".into(), is as u32),
                ("n".into(), n as u32),
            ],
            ..Default::default()
        };
        wave_emulator::run(&out.module, &dispatch, &mut device).expect("runs");
        let word = |at: usize| u32::from_le_bytes(device[at..at + 4].try_into().unwrap());
        let double = |at: usize| f64::from_le_bytes(device[at..at + 8].try_into().unwrap());
        for (i, &(a, b)) in cases.iter().enumerate() {
            let k = ints[i];
            let want = [
                a + b,
                a * b - a / b,
                -a,
                a.abs(),
                min(a, b),
                max(a, b),
                b.abs().sqrt() + f64::from(k) + f64::from(k as u32),
                f64::from(a as f32) + f64::from(1.0 / 2f32.sqrt()),
            ];
            for (j, w) in want.iter().enumerate() {
                let got = double(outs + (i * 8 + j) * 8);
                // rsqrt is the ISA's f32 approximation: compare that one loosely.
                let close = j == 7 && (got - w).abs() <= 1e-6 * w.abs().max(1.0);
                assert!(
                    same(got, *w) || close,
                    "-O{}: a = {a:e}, b = {b:e}, result {j}: {got:e}, want {w:e}",
                    level.digit()
                );
            }
            assert_eq!(
                word(fl + i * 4),
                flags(a, b),
                "-O{}: flags of a = {a:e}, b = {b:e}",
                level.digit()
            );
        }
    }
}

#[test]
fn f64_values_get_even_register_pairs_apart_from_32_bit_registers() {
    let (out, d) = wave_kernel::compile(KERNEL, Language::Python, "double.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    // Every 64-bit instruction names an even first register.
    for line in out.asm.lines().map(str::trim) {
        let m = line.trim_start_matches(|c| c != ' ' && line.starts_with('@')).trim();
        let op = m.split_whitespace().next().unwrap_or("");
        if ["dadd", "dsub", "dmul", "ddiv", "dsqrt", "cvt_f64_f32"].contains(&op) {
            let first = m.split_whitespace().nth(1).unwrap_or("").trim_end_matches(',');
            let r: u32 = first.trim_start_matches('r').parse().expect("a register");
            assert_eq!(r % 2, 0, "{line}\n{}", out.asm);
        }
    }
}

#[test]
fn what_f64_does_not_do_yet_is_refused_with_its_span() {
    for (body, what) in [
        ("    out[i] = f64(f16(x[i]))", "converting to f16"),
        ("    out[i] = wave.sin(x[i])", "`sin`"),
        ("    out[i] = wave.cos(x[i])", "`cos`"),
        ("    wave.atomic_add(out, 0, x[i])", "an atomic"),
    ] {
        let text = format!(
            "import wave\n\n@wave.kernel\ndef k(x: f64[:], out: f64[:]):\n    i = wave.global_id()\n{body}\n"
        );
        let (out, d) = wave_kernel::compile(&text, Language::Python, "k.py", Options::default());
        assert!(out.is_none(), "{body}");
        let e = d.iter().find(|d| d.code == "E0408").unwrap_or_else(|| panic!("{body}: {d:?}"));
        assert!(e.message.contains(what), "{body}: {}", e.message);
        assert!(e.span.start > 0, "{body}: the span points into the kernel");
    }
}

const ROUNDING: &str = "import wave

@wave.kernel(workgroup=32)
def rounding(x: f64[:], out: f64[:], ints: i32[:], uints: u32[:], n: u32):
    i = wave.global_id()
    if i >= n:
        return
    a = x[i]
    out[i * 2] = wave.floor(a)
    out[i * 2 + 1] = wave.ceil(a)
    ints[i] = i32(a)
    uints[i] = u32(a)
";

#[test]
fn f64_floor_ceil_and_integer_conversions_are_exact_at_every_level() {
    let p = |k: i32| 2f64.powi(k);
    let tiny = f64::from_bits(1);
    let mut xs = vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.499_999_999_999_999_94,
        -0.499_999_999_999_999_94,
        tiny,
        -tiny,
        1e-300,
        -1e-300,
        123.999_999_999,
        -123.000_000_001,
        p(51) + 0.5,
        -p(51) - 0.5,
        p(52) - 0.5,
        -p(52) + 0.5,
        p(52),
        p(53) + 2.0,
        p(31) - 0.5,
        p(31) - 1.0 + 0.75,
        p(31),
        p(31) + 0.5,
        -p(31) - 0.5,
        -p(31) + 0.25,
        -p(31) - 1.0,
        p(32) - 0.5,
        p(32) - 1.0,
        p(32),
        p(24) + 1.0,
        p(24) + 3.0,
        -(p(24) + 1.0),
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for k in 0..24 {
        xs.push((k as f64 - 11.3) * 1.37e7 * if k % 2 == 0 { 1.0 } else { 1e-5 });
    }
    // Random bit patterns (every exponent), and random values near integers.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..100 {
        xs.push(f64::from_bits(next()));
        let k = (next() % 2_000_000) as f64 - 1_000_000.0;
        xs.push(k * 4096.0 + [0.0, 0.5, -0.5, 1e-9, -1e-9][(next() % 5) as usize]);
    }
    let n = xs.len();
    for level in [Level::O0, Level::O1, Level::O2, Level::O3] {
        let (out, d) = wave_kernel::compile(
            ROUNDING,
            Language::Python,
            "rounding.py",
            Options { level, ..Default::default() },
        );
        let out = out.unwrap_or_else(|| panic!("{d:?}"));
        let (xo, oo, io, uo) = (0usize, 4096usize, 8448usize, 9600usize);
        assert!(n * 8 <= oo && oo + n * 16 <= io && io + n * 4 <= uo);
        let mut device = vec![0u8; 12288];
        for (i, a) in xs.iter().enumerate() {
            device[xo + i * 8..xo + i * 8 + 8].copy_from_slice(&a.to_le_bytes());
        }
        let dispatch = wave_emulator::Dispatch {
            grid: [n.div_ceil(32) as u32, 1, 1],
            wave_width: 32,
            args: vec![
                ("x".into(), xo as u32),
                ("out".into(), oo as u32),
                ("ints".into(), io as u32),
                ("uints".into(), uo as u32),
                ("n".into(), n as u32),
            ],
            ..Default::default()
        };
        wave_emulator::run(&out.module, &dispatch, &mut device).expect("runs");
        let word = |at: usize| u32::from_le_bytes(device[at..at + 4].try_into().unwrap());
        let double = |at: usize| f64::from_le_bytes(device[at..at + 8].try_into().unwrap());
        for (i, &a) in xs.iter().enumerate() {
            let l = level.digit();
            let (fl, ce) = (double(oo + i * 16), double(oo + i * 16 + 8));
            assert!(same(fl, a.floor()), "-O{l}: floor({a:e}) = {fl:e}");
            assert!(same(ce, a.ceil()), "-O{l}: ceil({a:e}) = {ce:e}");
            assert_eq!(word(io + i * 4) as i32, a as i32, "-O{l}: i32({a:e})");
            assert_eq!(word(uo + i * 4), a as u32, "-O{l}: u32({a:e})");
        }
    }
}

const LANES: &str = "import wave

@wave.kernel(workgroup=32)
def lanes(x: f64[:], y: f64[:], out: f64[:]):
    i = wave.global_id()
    a = x[i]
    out[i * 4] = wave.shuffle_xor(a, 1)
    out[i * 4 + 1] = wave.broadcast(a * 2.0, 3)
    out[i * 4 + 2] = wave.shuffle(a, wave.lane_id() ^ 5)
    out[i * 4 + 3] = a % y[i]
";

#[test]
fn f64_values_move_between_lanes_and_take_a_remainder() {
    let n = 64usize;
    let xs: Vec<f64> = (0..n).map(|i| (i as f64 - 20.5) * 1.000_000_000_1e10 + 0.25).collect();
    let ys: Vec<f64> =
        (0..n).map(|i| [3.0, -7.5, 1e-3, 1e12][i % 4] * (1.0 + f64::EPSILON)).collect();
    for level in [Level::O0, Level::O2, Level::O3] {
        let (out, d) = wave_kernel::compile(
            LANES,
            Language::Python,
            "lanes.py",
            Options { level, ..Default::default() },
        );
        let out = out.unwrap_or_else(|| panic!("{d:?}"));
        let mut device = vec![0u8; 4096];
        for i in 0..n {
            device[i * 8..i * 8 + 8].copy_from_slice(&xs[i].to_le_bytes());
            device[512 + i * 8..520 + i * 8].copy_from_slice(&ys[i].to_le_bytes());
        }
        let dispatch = wave_emulator::Dispatch {
            grid: [2, 1, 1],
            wave_width: 16,
            args: vec![("x".into(), 0), ("y".into(), 512), ("out".into(), 1024)],
            ..Default::default()
        };
        wave_emulator::run(&out.module, &dispatch, &mut device).expect("runs");
        let double = |at: usize| f64::from_le_bytes(device[at..at + 8].try_into().unwrap());
        for i in 0..n {
            let wave = i / 16 * 16;
            let lane = i % 16;
            let (a, b) = (xs[i], ys[i]);
            let want = [
                xs[wave + (lane ^ 1)],
                xs[wave + 3] * 2.0,
                xs[wave + (lane ^ 5)],
                a - (a / b).trunc() * b,
            ];
            for (j, w) in want.iter().enumerate() {
                let got = double(1024 + (i * 4 + j) * 8);
                assert!(
                    same(got, *w),
                    "-O{}: thread {i}, result {j}: {got:e}, want {w:e}",
                    level.digit()
                );
            }
        }
    }
}

#[test]
fn too_many_f64_values_at_once_is_e0409_not_a_crash() {
    // 41 values alive at once: 83 registers of pairs, more than the default 64.
    let mut text = String::from(
        "import wave\n\n@wave.kernel(workgroup=32)\ndef many(x: f64[:], out: f64[:]):\n    i = wave.global_id()\n",
    );
    for k in 0..40 {
        text.push_str(&format!("    v{k} = x[(i + {k}) & 63] * f64({k}.5)\n"));
    }
    text.push_str("    s: f64 = 0.0\n");
    for k in 0..40 {
        text.push_str(&format!("    s = s * v{k} + v{}\n", 39 - k));
    }
    text.push_str("    out[i] = s\n");
    let (out, d) = wave_kernel::compile(&text, Language::Python, "many.py", Options::default());
    assert!(out.is_none());
    assert!(
        d.iter().any(|d| d.code == "E0409" && d.message.contains("f64 values at once")),
        "{d:?}"
    );
    let wide = Options { max_registers: 200, ..Default::default() };
    let (out, d) = wave_kernel::compile(&text, Language::Python, "many.py", wide);
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    assert!(out.kernels[0].allocation.registers > 64);
}

/// How many `f64` steps `got` is from `want` (0 for two NaNs or equal infinities).
fn ulps64(got: f64, want: f64) -> u64 {
    if got.is_nan() && want.is_nan() || got == want {
        return 0;
    }
    if got.is_nan() || want.is_nan() || got.is_infinite() || want.is_infinite() {
        return u64::MAX;
    }
    let key = |f: f64| {
        let b = f.to_bits() as i128;
        if b < 1 << 63 { b } else { (1i128 << 63) - b }
    };
    (key(got) - key(want)).unsigned_abs() as u64
}

/// `exp2`, `log2`, `exp`, `log`, `log10`, `tanh` and `pow` on `f64`, built from its
/// arithmetic: their largest error over a sweep of their ranges (subnormal to overflowing
/// arguments, and the special values), against Rust's `f64` functions.
#[test]
#[allow(clippy::print_stdout, reason = "the measured errors, for docs/kernels.md (`--nocapture`)")]
fn f64_exponentials_and_logarithms_stay_within_their_error() {
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(x: f64[:], out: f64[:], n: u32):\n    i = wave.global_id()\n    if i >= n:\n        return\n    v = x[i]\n    m = i % 7\n    if m == 0:\n        out[i] = wave.exp2(v * 0.001)\n    elif m == 1:\n        out[i] = wave.log2(v)\n    elif m == 2:\n        out[i] = wave.exp(v * 0.0007)\n    elif m == 3:\n        out[i] = wave.log(v)\n    elif m == 4:\n        out[i] = wave.log10(v)\n    elif m == 5:\n        out[i] = wave.tanh(v * 0.000000000000001)\n    else:\n        out[i] = wave.pow(v * 0.0000000001, 1.5)\n";
    let (out, d) = wave_kernel::compile(text, Language::Python, "k.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    // Values from 2^-1074 to 2^1023 (their bits spread evenly), then the special ones.
    let mut xs: Vec<f64> =
        (0..7000u64).map(|k| f64::from_bits(1 + k * (0x7fe0_0000_0000_0000 / 7000))).collect();
    xs.extend([0.0, -0.0, -1.0, 1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-310]);
    xs.extend((0..7).map(|k| -(k as f64) * 1000.0));
    let n = xs.len();
    let mut device = vec![0u8; n * 16];
    for (i, v) in xs.iter().enumerate() {
        device[i * 8..][..8].copy_from_slice(&v.to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [(n as u32).div_ceil(32), 1, 1],
        workgroup: Some([32, 1, 1]),
        args: vec![("x".into(), 0), ("out".into(), n as u32 * 8), ("n".into(), n as u32)],
        ..Default::default()
    };
    wave_emulator::run(&out.module, &dispatch, &mut device).unwrap();
    let mut worst = [0u64; 7];
    for (i, v) in xs.iter().enumerate() {
        let got = f64::from_le_bytes(device[(n + i) * 8..][..8].try_into().unwrap());
        let m = i % 7;
        let want = match m {
            0 => (v * 0.001).exp2(),
            1 => v.log2(),
            2 => (v * 0.0007).exp(),
            3 => v.ln(),
            4 => v.log10(),
            5 => (v * 0.000000000000001).tanh(),
            _ => (v * 0.0000000001).powf(1.5),
        };
        // (Below 2^-1022 the results are subnormal: counted in steps all the same.)
        worst[m] = worst[m].max(ulps64(got, want));
        assert!(ulps64(got, want) <= 64, "{m}: x = {v:e}: {got:e} against {want:e}");
    }
    println!(
        "largest f64 errors in steps: exp2 {}, log2 {}, exp {}, log {}, log10 {}, tanh {}, pow {}",
        worst[0], worst[1], worst[2], worst[3], worst[4], worst[5], worst[6]
    );
    let bound = [1, 2, 2, 2, 2, 2, 4];
    for (m, name) in ["exp2", "log2", "exp", "log", "log10", "tanh", "pow"].iter().enumerate() {
        assert!(worst[m] <= bound[m], "{name}: {} steps, more than {}", worst[m], bound[m]);
    }
}

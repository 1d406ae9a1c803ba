//! f16 in the code generator: 16-bit loads and stores, `hadd`/`hsub`/`hmul`, and the rest
//! through f32 rounded back, checked against a software model of correctly rounded f16 on
//! values that round (products of 11-bit significands) and that overflow; and what is
//! still refused (E0408).

use wave_kernel::legalize::{f16_bits, f16_value};
use wave_kernel::{Language, Options, opt::Level};

const KERNEL: &str = "import wave

@wave.kernel(workgroup=64)
def half(x: f16[:], y: f16[:], out: f16[:], less: u32[:]):
    i = wave.global_id()
    a = x[i]
    b = y[i]
    out[i * 5] = a * b
    out[i * 5 + 1] = a + b
    out[i * 5 + 2] = a - b
    out[i * 5 + 3] = a / b
    out[i * 5 + 4] = -min(a, b)
    less[i] = 1 if a < b else 0
";

fn round(x: f64) -> u16 {
    f16_bits(x)
}

#[test]
fn f16_arithmetic_is_correctly_rounded_at_every_level() {
    // 128 pairs: significands with low bits set, signs mixed, a few large enough to overflow.
    let n = 128usize;
    let xs: Vec<u16> = (0..n)
        .map(|i| {
            round((i as f64 * 37.0 + 1.0) * 1.0009765625 * if i % 3 == 0 { -1.0 } else { 1.0 })
        })
        .collect();
    let ys: Vec<u16> = (0..n)
        .map(|i| {
            round(
                ((i * 53 % 97) as f64 + 0.5) * 1.0029296875 * if i % 5 == 0 { 700.0 } else { 1.0 },
            )
        })
        .collect();
    for level in [Level::O0, Level::O2, Level::O3] {
        let (out, d) = wave_kernel::compile(
            KERNEL,
            Language::Python,
            "half.py",
            Options { level, ..Default::default() },
        );
        let out = out.unwrap_or_else(|| panic!("{d:?}"));
        assert!(
            out.asm.contains("hmul") && out.asm.contains("hadd") && out.asm.contains("hsub"),
            "{}",
            out.asm
        );
        assert!(out.asm.contains("device_load.u16") && out.asm.contains("device_store.u16"));
        let mut device = vec![0u8; 8192];
        for i in 0..n {
            device[i * 2..i * 2 + 2].copy_from_slice(&xs[i].to_le_bytes());
            device[512 + i * 2..514 + i * 2].copy_from_slice(&ys[i].to_le_bytes());
        }
        let dispatch = wave_emulator::Dispatch {
            grid: [2, 1, 1],
            wave_width: 32,
            args: vec![
                ("x".into(), 0),
                ("y".into(), 512),
                ("out".into(), 1024),
                ("less".into(), 4096),
            ],
            ..Default::default()
        };
        wave_emulator::run(&out.module, &dispatch, &mut device).expect("runs");
        for i in 0..n {
            let (a, b) = (f16_value(xs[i]), f16_value(ys[i]));
            let want = [round(a * b), round(a + b), round(a - b), round(a / b), round(-a.min(b))];
            for (k, w) in want.iter().enumerate() {
                let at = 1024 + (i * 5 + k) * 2;
                let got = u16::from_le_bytes([device[at], device[at + 1]]);
                assert_eq!(got, *w, "{level:?} pair {i} ({a}, {b}) result {k}");
            }
            let less = u32::from_le_bytes(device[4096 + i * 4..4100 + i * 4].try_into().unwrap());
            assert_eq!(less, u32::from(a < b), "{level:?} pair {i}");
        }
    }
}

#[test]
fn what_f16_and_f64_cannot_do_yet_is_e0408() {
    // (What f64 does not do yet is in tests/double.rs; an f16 parameter is passed as an f32,
    // in tests/constructs.rs.)
    for (text, words) in [
        ("def k(out: f64[:], x: f64):\n    out[0] = x\n", "parameter `x` has type f64"),
        (
            "def k(out: f16[:]):\n    wave.atomic_add(out, 0, f16(1.0))\n",
            "atomics on `f16` buffers",
        ),
        ("def k(out: f64[:]):\n    out[0] = wave.sin(out[1])\n", "`sin` is not supported on f64"),
    ] {
        let src = format!("import wave\n@wave.kernel\n{text}");
        let (out, d) = wave_kernel::compile(&src, Language::Python, "k.py", Options::default());
        assert!(out.is_none());
        assert!(d.iter().any(|d| d.code == "E0408" && d.message.contains(words)), "{text}: {d:?}");
    }
}

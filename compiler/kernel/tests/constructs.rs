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

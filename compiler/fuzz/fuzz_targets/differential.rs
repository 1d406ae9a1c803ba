//! The differential tester's generator (`wave-kernel-gen`) driven by libFuzzer: the input's
//! bytes choose a seed and the generator's options; the kernel in Python at O0 to O3, and in
//! Rust, C++ and TypeScript at a level chosen by the input, must compile (with the MIR and
//! LIR verifiers after every pass) and leave the same device memory in the emulator, bit for
//! bit, at the wave width the input chooses. `compiler/kernel/tests/differential.rs` runs
//! the same check over a range of seeds.

#![no_main]

use libfuzzer_sys::fuzz_target;
use wave_kernel::{Language, Options, opt::Level};
use wave_kernel_gen::{Lang, Program, layout};

const LEVELS: [Level; 4] = [Level::O0, Level::O1, Level::O2, Level::O3];

fuzz_target!(|data: &[u8]| {
    let mut word = [0u8; 8];
    for (i, b) in data.iter().take(8).enumerate() {
        word[i] = *b;
    }
    let seed = u64::from_le_bytes(word);
    let pick = |k: usize| data.get(8 + k).copied().unwrap_or(0) as usize;
    let options = wave_kernel_gen::Options {
        doubles: pick(0) % 3 == 0,
        computed_index: pick(1) % 2 == 0,
        depth: 1 + (pick(2) % 3) as u32,
    };
    let width = [8, 16, 32, 64][pick(3) % 4];
    let program = Program::generate(seed, options);
    let python = program.source(Lang::Python);
    let reference = run(&python, Language::Python, Level::O0, width, seed);
    for level in &LEVELS[1..] {
        let got = run(&python, Language::Python, *level, width, seed);
        assert!(got == reference, "Python at {level:?} differs from O0 (W={width})\n{python}");
    }
    for (k, (lang, language)) in
        [(Lang::Rust, Language::Rust), (Lang::Cpp, Language::Cpp), (Lang::TypeScript, Language::TypeScript)]
            .into_iter()
            .enumerate()
    {
        let level = LEVELS[pick(4 + k) % 4];
        let text = program.source(lang);
        let got = run(&text, language, level, width, seed);
        assert!(got == reference, "{lang:?} at {level:?} differs from Python (W={width})\n{text}");
    }
});

/// The device memory after running `text` (which must compile and run).
fn run(text: &str, language: Language, level: Level, width: u32, seed: u64) -> Vec<u8> {
    let options = Options { level, verify: true, ..Default::default() };
    let (out, d) = wave_kernel::compile(text, language, "random", options);
    let out = out.unwrap_or_else(|| panic!("{language:?} does not compile at {level:?}: {d:?}\n{text}"));
    let mut device = vec![0u8; layout::SIZE];
    for (i, v) in wave_kernel_gen::inputs(seed).iter().enumerate() {
        device[layout::INP + i * 4..][..4].copy_from_slice(&v.to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        kernel: None,
        grid: [layout::GRID, 1, 1],
        workgroup: None,
        wave_width: width,
        args: vec![
            ("inp".into(), layout::INP as u32),
            ("inb".into(), layout::INP as u32),
            ("out".into(), layout::OUT as u32),
            ("fout".into(), layout::FOUT as u32),
        ],
        max_steps: 2_000_000,
        trace: false,
        interrupt: None,
        threads: 1,
        ..wave_emulator::Dispatch::default()
    };
    wave_emulator::run(&out.module, &dispatch, &mut device)
        .unwrap_or_else(|t| panic!("{language:?} traps at {level:?}: {t}\n{text}"));
    device
}

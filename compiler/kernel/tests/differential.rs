//! Differential testing of the optimisation levels and the four languages: random
//! well-typed kernels from `wave-kernel-gen` (integer, `f16`, `f32` and `f64` arithmetic,
//! nested `if`/`for`/`while` with `break`, `continue` and early `return`, loads stepping with
//! loop counters and their neighbours, a private and a local array, bytes of a `u8` buffer,
//! wave operations, `exp`, `tanh`, `pow`, bit counts, a helper that returns early) are
//! compiled from Python at O0, O1, O2 and O3, and from Rust, C++ and TypeScript at one level
//! each, with the MIR and LIR verifiers after every pass, and run in the emulator on the same
//! inputs; every run must leave the same device memory as Python's O0, bit for bit (floats
//! too: no level contracts `a * b + c` into a fused multiply-add, and every language's
//! program is the same typed computation).
//!
//! `WAVE_DIFF_KERNELS=N` sets how many kernels (default 300), `WAVE_DIFF_FROM=S` the first
//! seed and `WAVE_DIFF_SECONDS=T` a time bound for long runs (several processes, one seed
//! range each); `WAVE_SEED=S` replays one kernel. A failure prints the seed, the kernel and
//! the first difference.

use wave_kernel::{Language, Options, opt::Level};
use wave_kernel_gen::{Lang, Program, layout};

const INP: usize = layout::INP;
const OUT: usize = layout::OUT;

/// The kernel of `seed` in Python.
fn kernel(seed: u64) -> String {
    Program::for_seed(seed).source(Lang::Python)
}

fn language(lang: Lang) -> Language {
    match lang {
        Lang::Python => Language::Python,
        Lang::Rust => Language::Rust,
        Lang::Cpp => Language::Cpp,
        Lang::TypeScript => Language::TypeScript,
    }
}

fn run(text: &str, level: Level, width: u32, seed: u64) -> Result<Vec<u8>, String> {
    // The verifiers after every pass in any build (a release build of this test runs faster).
    run_with(text, Options { level, verify: true, ..Default::default() }, width, seed)
}

fn run_with(text: &str, options: Options, width: u32, seed: u64) -> Result<Vec<u8>, String> {
    run_in(text, Language::Python, options, width, seed)
}

fn run_in(
    text: &str,
    language: Language,
    options: Options,
    width: u32,
    seed: u64,
) -> Result<Vec<u8>, String> {
    let level = options.level;
    let (out, d) = wave_kernel::compile(text, language, "random", options);
    let Some(out) = out else {
        return Err(format!("does not compile at {level:?}: {d:?}"));
    };
    let mut device = vec![0u8; layout::SIZE];
    for (i, v) in wave_kernel_gen::inputs(seed).iter().enumerate() {
        device[INP + i * 4..INP + i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        kernel: None,
        grid: [layout::GRID, 1, 1],
        workgroup: None,
        wave_width: width,
        args: [("inp", INP), ("inb", INP), ("out", OUT), ("fout", layout::FOUT)]
            .into_iter()
            // (The regression kernels below have no `inb`.)
            .filter(|(name, _)| *name != "inb" || text.contains("inb"))
            .map(|(name, at)| (name.to_owned(), at as u32))
            .collect(),
        max_steps: 2_000_000,
        trace: false,
        interrupt: None,
        progress: None,
        threads: 0,
    };
    wave_emulator::run(&out.module, &dispatch, &mut device)
        .map_err(|t| format!("traps at {level:?}: {t}\n{}", out.asm))?;
    Ok(device)
}

/// Where `got` first differs from `reference`, as a message.
fn difference(what: &str, got: &[u8], reference: &[u8], width: u32) -> String {
    let at = got.iter().zip(reference).position(|(a, b)| a != b).unwrap_or(0) / 4 * 4;
    let word = |m: &[u8]| u32::from_le_bytes([m[at], m[at + 1], m[at + 2], m[at + 3]]);
    format!(
        "{what} differs from Python at O0 at byte {at} (W={width}): {:#x} vs {:#x}",
        word(got),
        word(reference)
    )
}

/// Whether a kernel is too big to compile at O0, a property of the generated kernel and not
/// a bug: E0411 (so many values spilled that 32 threads' frames outgrow Local Memory) or
/// E0409 (more `f64` values live at once than registers hold: they are not spilled).
fn too_big(e: &str) -> bool {
    e.starts_with("does not compile at O0")
        && (e.contains("E0411") || e.contains("E0409"))
        && !e.contains("E0410")
}

/// `Ok(false)` where every level and language agree, `Ok(true)` for a kernel too big for O0
/// ([`too_big`]).
fn check(seed: u64) -> Result<bool, String> {
    let program = Program::for_seed(seed);
    let text = program.source(Lang::Python);
    let width = [8, 16, 32][(seed % 3) as usize];
    let reference = match run(&text, Level::O0, width, seed) {
        Err(e) if too_big(&e) => return Ok(true),
        r => r?,
    };
    for level in [Level::O1, Level::O2, Level::O3] {
        let got = run(&text, level, width, seed)?;
        if got != reference {
            return Err(difference(&format!("{level:?}"), &got, &reference, width));
        }
    }
    // The same program in the other languages, each at one level.
    let levels = [Level::O0, Level::O1, Level::O2, Level::O3];
    for (k, lang) in [Lang::Rust, Lang::Cpp, Lang::TypeScript].into_iter().enumerate() {
        let level = levels[(seed as usize / 3 + k) % 4];
        let options = Options { level, verify: true, ..Default::default() };
        let other = program.source(lang);
        let got = run_in(&other, language(lang), options, width, seed)
            .map_err(|e| format!("{lang:?}: {e}\n{other}"))?;
        if got != reference {
            let what = format!("{lang:?} at {level:?}");
            return Err(format!("{}\n{other}", difference(&what, &got, &reference, width)));
        }
    }
    Ok(false)
}

#[test]
#[allow(clippy::print_stderr, reason = "a long run says how far it got (`--nocapture`)")]
fn every_level_computes_the_same_results() {
    // `WAVE_DIFF_FILE=k.py` (with `WAVE_SEED` for the inputs and the width): one Python file
    // of the generator's shape, at every level (to minimise a failing kernel by hand).
    if let Ok(file) = std::env::var("WAVE_DIFF_FILE") {
        let seed: u64 = std::env::var("WAVE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
        let text = std::fs::read_to_string(&file).expect("WAVE_DIFF_FILE is readable");
        let width = [8, 16, 32][(seed % 3) as usize];
        let reference = run(&text, Level::O0, width, seed).unwrap_or_else(|e| panic!("{e}"));
        for level in [Level::O1, Level::O2, Level::O3] {
            let got = run(&text, level, width, seed).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                got == reference,
                "{}",
                difference(&format!("{level:?}"), &got, &reference, width)
            );
        }
        return;
    }
    if let Ok(seed) = std::env::var("WAVE_SEED") {
        let seed: u64 = seed.parse().expect("WAVE_SEED is a number");
        match check(seed) {
            Err(e) => panic!("seed {seed}: {e}\n{}", kernel(seed)),
            Ok(true) => panic!("seed {seed}: too big to compile at O0 (E0411 or E0409)"),
            Ok(false) => return,
        }
    }
    let env = |name: &str| std::env::var(name).ok().and_then(|n| n.parse::<u64>().ok());
    // A long run: `WAVE_DIFF_SECONDS` bounds it by time (the count then defaults to no
    // bound), and `WAVE_DIFF_FROM` starts it at another seed (one range per process).
    let seconds = env("WAVE_DIFF_SECONDS");
    let count = env("WAVE_DIFF_KERNELS").unwrap_or(if seconds.is_some() { u64::MAX } else { 300 });
    let from = env("WAVE_DIFF_FROM").unwrap_or(1);
    let started = std::time::Instant::now();
    let mut failures = Vec::new();
    let mut checked = 0u64;
    let mut skipped = 0u64;
    for seed in from..from.saturating_add(count) {
        if seconds.is_some_and(|s| started.elapsed().as_secs() >= s) {
            break;
        }
        checked += 1;
        match check(seed) {
            Err(e) => {
                failures.push(format!("seed {seed}: {e}"));
                if failures.len() >= 5 {
                    break;
                }
            }
            Ok(true) => skipped += 1,
            Ok(false) => {}
        }
    }
    eprintln!(
        "checked {checked} kernels (seeds {from} to {}) in {:.0} s; {skipped} too big for O0 (E0411, E0409) skipped",
        from + checked.saturating_sub(1),
        started.elapsed().as_secs_f64()
    );
    assert!(skipped * 20 <= checked.max(20), "{skipped} of {checked} kernels too big for O0");
    if let Some(first) = failures.first() {
        let seed: u64 =
            first["seed ".len()..].split(':').next().and_then(|s| s.parse().ok()).unwrap_or(0);
        panic!(
            "{} of {checked} kernels differ (replay one with WAVE_SEED=N):\n{}\n\nthe first kernel:\n{}",
            failures.len(),
            failures.join("\n"),
            kernel(seed)
        );
    }
}

#[test]
fn kernels_squeezed_into_eight_registers_spill_and_compute_the_same() {
    let count: u64 = std::env::var("WAVE_DIFF_KERNELS")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
        .map_or(40, |n| n / 8);
    let mut spilled = 0;
    let mut too_big = 0;
    for seed in 1..=count {
        let squeezed = wave_kernel_gen::Options {
            doubles: false,
            depth: 2,
            ..wave_kernel_gen::Options::for_seed(seed)
        };
        let text = Program::generate(seed, squeezed).source(Lang::Python);
        let reference =
            run(&text, Level::O0, 16, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for level in [Level::O0, Level::O2] {
            let tight = Options { level, max_registers: 8, ..Default::default() };
            let (out, d) = wave_kernel::compile(&text, Language::Python, "random.py", tight);
            if d.iter().any(|d| d.code == "E0411") {
                // So many spill slots that the frames of 32 threads outgrow Local Memory.
                too_big += 1;
                continue;
            }
            if out.as_ref().is_some_and(|o| o.kernels[0].allocation.spill_slots > 0) {
                spilled += 1;
            }
            let got =
                run_with(&text, tight, 16, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            assert!(got == reference, "seed {seed}: {level:?} with 8 registers differs\n{text}");
        }
    }
    assert!(spilled > count / 4, "only {spilled} of {count} kernels spilled");
    // (Eight registers for kernels this size spill much: a few outgrow Local Memory.)
    assert!(too_big * 5 <= count, "{too_big} of {count} kernels need too much Local Memory");
}

#[test]
fn the_generator_makes_different_kernels_that_compile() {
    let a = kernel(1);
    let b = kernel(2);
    assert_ne!(a, b);
    let mut doubles = 0;
    for seed in 1..20 {
        let text = kernel(seed);
        let (out, d) =
            wave_kernel::compile(&text, Language::Python, "random.py", Options::default());
        let out = out.unwrap_or_else(|| panic!("seed {seed}: {d:?}\n{text}"));
        // A third have an f64 variable, computed in register pairs.
        if text.contains("g: f64 =") {
            assert!(out.asm.contains("dmul") && out.asm.contains("dadd"), "seed {seed}");
            doubles += 1;
        }
        let squeezed =
            wave_kernel_gen::Options { doubles: false, ..wave_kernel_gen::Options::for_seed(seed) };
        assert!(
            !Program::generate(seed, squeezed).source(Lang::Python).contains("f64"),
            "seed {seed}: squeezed, no f64"
        );
        // Every language's version compiles.
        for lang in [Lang::Rust, Lang::Cpp, Lang::TypeScript] {
            let other = Program::for_seed(seed).source(lang);
            let (out, d) =
                wave_kernel::compile(&other, language(lang), "random", Options::default());
            assert!(out.is_some(), "seed {seed} in {lang:?}: {d:?}\n{other}");
        }
    }
    assert_eq!(doubles, 6, "seeds 3, 6, ..., 18");
}

#[test]
fn a_pointer_step_that_wraps_to_zero_stays_zero() {
    // (j * 65536) * n with j stepping by 65536: the address does not move (the index wraps
    // to 0 mod 2^32). The reduced pointer's step n * 2^34 must wrap too, not become
    // `n << 34`, which the machine shifts by 34 & 31.
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    t = wave.global_id()\n    n = u32(inp[0] & 7) + 1\n    s: i32 = 0\n    for j in range(0, u32(3) * 65536, 65536):\n        s += inp[(j * 65536) * n + (t & 15)]\n    out[t * 8] = s\n";
    let reference = run(text, Level::O0, 16, 7).expect("runs at O0");
    for level in [Level::O2, Level::O3] {
        assert!(run(text, level, 16, 7).expect("runs") == reference, "{level:?}");
    }
}

/// Runs `text` at O0 and at every other level, at wave widths 8, 16 and 32, asserts that
/// every level leaves the same memory as O0, and returns O0's memory at each width.
fn agree_at_every_level(text: &str, seed: u64) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    for width in [8, 16, 32] {
        let reference = run(text, Level::O0, width, seed).unwrap_or_else(|e| panic!("{e}\n{text}"));
        for level in [Level::O1, Level::O2, Level::O3] {
            let got = run(text, level, width, seed).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert!(got == reference, "{level:?} at W={width} differs\n{text}");
        }
        out.push((width, reference));
    }
    out
}

#[test]
fn neighbouring_elements_read_in_a_loop_agree_at_every_level() {
    // Strength reduction gave `inp[j]` a pointer of its own and then built `inp[j + 1]`'s
    // start before the loop from that pointer's phi (E0410 from the verifier at O2 and O3).
    // The widened generator found it in 5 of 400 kernels, seeds 73, 84, 137, 176 and 304.
    let head = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    t = wave.global_id()\n    n = u32(inp[0] & 15) + 4\n";
    let bodies = [
        // The report's kernel.
        "    s: i32 = 0\n    for j in range(n):\n        s += inp[j] + inp[j + 1]\n    out[t * 8] = s\n",
        // Its unrolled form: `inp[2 j + c]`, the inner loop unrolled at O3.
        "    d: i32 = 0\n    for j in range(n):\n        for c in range(u32(2)):\n            d += inp[j * 2 + c]\n    out[t * 8] = d\n",
        // A 3-point stencil at each thread's own offset.
        "    s: i32 = 0\n    for j in range(n):\n        s += inp[(t & 15) + j] - 2 * inp[(t & 15) + j + 1] + inp[(t & 15) + j + 2]\n    out[t * 8] = s\n",
    ];
    for body in bodies {
        agree_at_every_level(&format!("{head}{body}"), 11);
    }
}

#[test]
fn a_per_wave_minimum_and_maximum_agree_at_every_level() {
    // Each wave's minimum and maximum in two local arrays, read back in one loop: the two
    // local addresses differ by a constant, the shape of the strength-reduction crash above
    // (E0410 at O2 and O3 before its fix).
    let text = "import wave\n\n@wave.kernel(workgroup=64)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    wmin = wave.local_array(i32, 16)\n    wmax = wave.local_array(i32, 16)\n    t = wave.global_id()\n    v = inp[t & 63]\n    a = wave.reduce_min(v)\n    b = wave.reduce_max(v)\n    if wave.lane_id() == 0:\n        wmin[wave.wave_id()] = a\n        wmax[wave.wave_id()] = b\n    wave.barrier()\n    lo: i32 = 2147483647\n    hi: i32 = -2147483647\n    for w in range(wave.workgroup_size() // wave.wave_width()):\n        lo = min(lo, wmin[w])\n        hi = max(hi, wmax[w])\n    out[t * 2] = lo\n    out[t * 2 + 1] = hi\n";
    for (_, reference) in agree_at_every_level(text, 5) {
        let word = |m: &[u8], i: usize| i32::from_le_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
        let inputs: Vec<i32> = (0..64).map(|i| word(&reference, INP + i * 4)).collect();
        let (lo, hi) = (inputs.iter().min().copied(), inputs.iter().max().copied());
        assert_eq!((Some(word(&reference, OUT)), Some(word(&reference, OUT + 4))), (lo, hi));
    }
}

#[test]
fn a_loop_body_that_ends_in_a_break_has_no_dead_latch() {
    // Found by a long run (seed 10009064): every path to the end of the body leaves it (the
    // `continue`s carry the latch's copies themselves, the rest breaks or halts), yet the
    // structurer also put the latch after the final `break`, where it read a register no
    // path had written (the LIR verifier's E0410, at every level).
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    t = wave.global_id()\n    a = inp[t]\n    for k0 in range(t & 7):\n        if inp[k0] != 5:\n            if a >= i32(k0):\n                continue\n            if t != 38:\n                a = a << 1\n                continue\n        if t == 3:\n            return\n        break\n    out[t * 8] = a\n";
    agree_at_every_level(text, 3);
}

#[test]
fn a_wave_reduction_after_a_continue_runs_once_with_its_lanes() {
    // Found by the four-language generator's first long run (seed 300000836 and five more):
    // at O2 loop rotation put the test into the latch that the `continue` reaches, and the
    // structurer could then only make the merge after the `if` by emitting the inner loop
    // (its reductions) on both sides, each copy running with some of the lanes; O0 runs it
    // once with all of them. Loops holding a wave operation or a barrier are no longer
    // rotated or fully unrolled when a `continue` reaches their latch.
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(inp: i32[:], out: i32[:], fout: f32[:]):\n    t = wave.global_id()\n    a = inp[t]\n    b = inp[(t + 1) & 63]\n    u = u32(inp[t ^ 9])\n    v = t * 3\n    for k0 in range(u32(2)):\n        if not (a >= b):\n            if i32(k0) == (a << (inp[(t & 31) + k0] & 7)):\n                continue\n        for k1 in range(u32(2)):\n            v = (v // ((wave.reduce_add(u) & 15) + 1)) + wave.reduce_add(k1 << 2)\n    out[t * 8 + 2] = i32(u ^ v)\n";
    agree_at_every_level(text, 300_000_836);
}

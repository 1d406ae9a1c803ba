//! The register allocator: spilling under a register limit keeps results, the checker
//! rejects wrong allocations, and the LIR verifier rejects broken LIR.

use wave_kernel::{Language, Options, opt::Level};

/// Twelve values alive at once, then combined.
fn pressure(workgroup: bool) -> String {
    let mut text = String::from("import wave\n\n");
    text.push_str(if workgroup { "@wave.kernel(workgroup=32)\n" } else { "@wave.kernel\n" });
    text.push_str("def many(inp: u32[:], out: u32[:]):\n    i = wave.global_id()\n");
    for k in 0..12 {
        text.push_str(&format!("    v{k} = inp[(i + {k}) & 63] * {}\n", k + 3));
    }
    // (17 steps: a loop of 16 or fewer is unrolled at O2, and this one must stay a loop.)
    text.push_str("    s: u32 = 0\n    for j in range(u32(17)):\n");
    for k in 0..12 {
        text.push_str(&format!("        s = (s ^ v{k}) + j\n"));
    }
    text.push_str("    out[i] = s\n");
    text
}

fn run(module: &wave_wbin::Module) -> Vec<u8> {
    let mut device = vec![0u8; 1024];
    for i in 0..64u32 {
        device[i as usize * 4..i as usize * 4 + 4]
            .copy_from_slice(&i.wrapping_mul(2654435761).to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [2, 1, 1],
        wave_width: 16,
        args: vec![("inp".into(), 0), ("out".into(), 256)],
        ..Default::default()
    };
    wave_emulator::run(module, &dispatch, &mut device).expect("runs");
    device
}

#[test]
fn spilled_kernels_compute_what_unconstrained_ones_do() {
    let text = pressure(true);
    for level in [Level::O0, Level::O2] {
        let free = Options { level, max_registers: 64, ..Default::default() };
        let (out, d) = wave_kernel::compile(&text, Language::Python, "many.py", free);
        let free = out.unwrap_or_else(|| panic!("{d:?}"));
        assert_eq!(free.kernels[0].allocation.spill_slots, 0);
        let tight = Options { level, max_registers: 6, ..Default::default() };
        let (out, d) = wave_kernel::compile(&text, Language::Python, "many.py", tight);
        let tight = out.unwrap_or_else(|| panic!("{d:?}"));
        let k = &tight.kernels[0];
        assert!(k.allocation.spill_slots > 0, "{}", tight.asm);
        assert!(k.allocation.registers <= 6, "R = {}", k.allocation.registers);
        assert!(tight.asm.contains("local_store.u32") && tight.asm.contains("local_load.u32"));
        assert!(
            tight.module.kernels[0].local_memory >= k.allocation.spill_slots * 32 * 4,
            "one word per thread per slot"
        );
        assert_eq!(run(&tight.module), run(&free.module), "{level:?}:\n{}", tight.asm);
    }
}

#[test]
fn a_spilling_kernel_dispatched_wider_than_its_size_traps_instead_of_mixing_threads() {
    let tight = Options { level: Level::O2, max_registers: 6, ..Default::default() };
    let (out, d) = wave_kernel::compile(&pressure(true), Language::Python, "many.py", tight);
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    let mut device = vec![0u8; 1024];
    let dispatch = wave_emulator::Dispatch {
        grid: [1, 1, 1],
        workgroup: Some([64, 1, 1]),
        wave_width: 16,
        args: vec![("inp".into(), 0), ("out".into(), 256)],
        ..Default::default()
    };
    let trap = wave_emulator::run(&out.module, &dispatch, &mut device).expect_err("a trap");
    assert!(trap.to_string().contains("local memory"), "{trap}");
}

#[test]
fn more_conditions_held_across_a_loop_than_predicates_still_compile() {
    // Seven comparisons made before a loop and tested after it: holding them all would need
    // seven predicates, so the compiler makes them where they are tested instead.
    let mut text = String::from(
        "import wave\n@wave.kernel(workgroup=32)\ndef k(inp: u32[:], out: u32[:]):\n    i = wave.global_id()\n    x = inp[i & 63]\n",
    );
    for j in 0..7 {
        text.push_str(&format!("    c{j} = x > {}\n", j * 400_000_000u32));
    }
    text.push_str("    s: u32 = 0\n    for k in range(i & 3):\n        s += 1\n");
    for j in 0..7 {
        text.push_str(&format!("    if c{j}:\n        s += {}\n", 1 << j));
    }
    text.push_str("    out[i] = s\n");
    let mut results = Vec::new();
    for level in [Level::O0, Level::O2] {
        let options = Options { level, max_registers: 64, ..Default::default() };
        let (out, d) = wave_kernel::compile(&text, Language::Python, "conds.py", options);
        let out = out.unwrap_or_else(|| panic!("{level:?}: {d:?}"));
        assert!(out.kernels[0].allocation.predicates <= 4);
        results.push(run(&out.module));
    }
    assert_eq!(results[0], results[1]);
}

#[test]
fn a_kernel_that_must_spill_without_a_workgroup_size_is_refused() {
    let options = Options { level: Level::O0, max_registers: 6, ..Default::default() };
    let (out, d) = wave_kernel::compile(&pressure(false), Language::Python, "many.py", options);
    assert!(out.is_none());
    assert_eq!(d[0].code, "E0409", "{d:?}");
    assert!(d[0].message.contains("workgroup size"), "{}", d[0].message);
}

#[test]
fn the_checker_rejects_a_wrong_allocation() {
    let (out, d) =
        wave_kernel::compile(&pressure(true), Language::Python, "many.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    let k = &out.kernels[0];
    assert_eq!(wave_kernel::regalloc::check(&k.lir, &k.allocation), Ok(()));
    // Give one register's values to another: some read finds the wrong value.
    let mut wrong = k.allocation.clone();
    let used: Vec<u8> = k
        .lir
        .insts
        .iter()
        .flat_map(|i| i.defs().collect::<Vec<_>>())
        .filter(|r| !r.is_phys())
        .map(|r| wrong.reg[r.index()])
        .collect();
    let (a, b) = (used[0], *used.iter().find(|c| **c != used[0]).expect("two registers"));
    for c in wrong.reg.iter_mut().skip(wave_kernel::lir::PHYS as usize) {
        if *c == a {
            *c = b;
        }
    }
    let e = wave_kernel::regalloc::check(&k.lir, &wrong).expect_err("caught");
    assert!(e.contains("does not hold it"), "{e}");
    // A predicate moved onto another one that is still live is caught too.
    if k.allocation.predicates >= 1 {
        let mut wrong = k.allocation.clone();
        wrong.pred.iter_mut().for_each(|p| *p = (*p + 1) % 4);
        assert_eq!(wave_kernel::regalloc::check(&k.lir, &wrong), Ok(()), "a consistent renaming");
    }
}

#[test]
fn the_lir_verifier_rejects_broken_lir() {
    let (out, d) =
        wave_kernel::compile(&pressure(true), Language::Python, "many.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    let lir = &out.kernels[0].lir;
    assert!(wave_kernel::lir::verify(lir).is_empty());
    // A definition removed: its reader reads nothing.
    let mut broken = lir.clone();
    let at = broken
        .insts
        .iter()
        .position(|i| i.code.opcode == wave_isa::Opcode::DeviceLoad)
        .expect("a load");
    broken.insts.remove(at);
    assert!(
        wave_kernel::lir::verify(&broken).iter().any(|p| p.contains("before it is written")),
        "{:?}",
        wave_kernel::lir::verify(&broken)
    );
    // An `endloop` removed: the structure is unbalanced.
    let mut broken = lir.clone();
    let at = broken
        .insts
        .iter()
        .position(|i| i.kind == wave_kernel::lir::Kind::EndLoop)
        .expect("a loop");
    broken.insts.remove(at);
    assert!(!wave_kernel::lir::verify(&broken).is_empty());
}

#[test]
fn if_converted_arms_update_their_variables_in_place() {
    let text = include_str!("hir/collatz.py");
    let (out, d) = wave_kernel::compile(text, Language::Python, "collatz.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    let asm = &out.asm;
    let body = &asm[asm.find("    loop").expect("a loop")..asm.find("endloop").expect("its end")];
    // Both arms write x and odd under complementary guards into the registers that hold
    // them: no copy is left in the loop's arms, and the halving is in place.
    let arms: Vec<&str> = body.lines().filter(|l| l.trim_start().starts_with('@')).collect();
    assert!(arms.iter().all(|l| !l.contains(" mov ")), "{asm}");
    assert!(
        arms.iter().any(|l| {
            let w: Vec<&str> = l.split([' ', ',']).filter(|s| !s.is_empty()).collect();
            w.get(1) == Some(&"shift.shr") && w.get(2) == w.get(3)
        }),
        "{asm}"
    );
    // And it computes the steps.
    let mut device = vec![0u8; 1024];
    for i in 0..64u32 {
        device[i as usize * 4..i as usize * 4 + 4].copy_from_slice(&(i + 1).to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [1, 1, 1],
        wave_width: 16,
        args: vec![("start".into(), 0), ("steps".into(), 256), ("odd_steps".into(), 512)],
        ..Default::default()
    };
    wave_emulator::run(&out.module, &dispatch, &mut device).expect("runs");
    for i in 0..64u32 {
        let (mut x, mut count, mut odd) = (i + 1, 0u32, 0u32);
        while x != 1 {
            count += 1;
            if count > 60 {
                break;
            }
            if x % 2 == 0 {
                x >>= 1;
            } else {
                odd += 1;
                x = 3 * x + 1;
            }
        }
        let word = |at: usize| u32::from_le_bytes(device[at..at + 4].try_into().unwrap());
        assert_eq!(
            (word(256 + i as usize * 4), word(512 + i as usize * 4)),
            (count, odd),
            "x = {}",
            i + 1
        );
    }
}

#[test]
fn a_continue_leaves_the_iteration_without_wrapping_the_rest_in_an_if() {
    // The counter steps at the top, so the end of the body holds only copies (which
    // coalesce): each `continue` is `continue p` on its test, with the code of a short arm
    // that ends the iteration (`s += j * j`) under the same guard.
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(out: u32[:], n: u32, m: u32):\n    i = wave.global_id()\n    s: u32 = 0\n    for j in range(i % 23 + 1):\n        if j % 3 == 2:\n            continue\n        if s > n:\n            break\n        if (j & 4) == 0:\n            s += j * j\n            continue\n        for q in range(j):\n            if q == m:\n                break\n            s += q\n    out[i] = s\n";
    let (out, d) = wave_kernel::compile(text, Language::Python, "k.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    let asm = &out.asm;
    let outer = &asm[asm.find("    loop").expect("a loop")..];
    let lines: Vec<&str> = outer.lines().map(str::trim).collect();
    assert!(!lines.iter().any(|l| l.starts_with("if ") || *l == "endif"), "{asm}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("continue ")).count(), 2, "{asm}");
    assert!(lines.iter().any(|l| l.starts_with("@") && l.contains("imad")), "{asm}");
    // `j % 3` is one `imod`: the counter stepped at the top is still known to be small.
    assert!(!outer.contains("idiv"), "{asm}");
    // And it computes the sums, for m past every trip count and for a break at q == 2.
    for m in [100u32, 2] {
        let mut device = vec![0u8; 512];
        let dispatch = wave_emulator::Dispatch {
            grid: [2, 1, 1],
            wave_width: 16,
            args: vec![("out".into(), 0), ("n".into(), 150), ("m".into(), m)],
            ..Default::default()
        };
        wave_emulator::run(&out.module, &dispatch, &mut device).expect("runs");
        for i in 0..64u32 {
            let mut s = 0u32;
            for j in 0..i % 23 + 1 {
                if j % 3 == 2 {
                    continue;
                }
                if s > 150 {
                    break;
                }
                if j & 4 == 0 {
                    s += j * j;
                    continue;
                }
                for q in 0..j {
                    if q == m {
                        break;
                    }
                    s += q;
                }
            }
            let at = i as usize * 4;
            let got = u32::from_le_bytes(device[at..at + 4].try_into().unwrap());
            assert_eq!(got, s, "i = {i}, m = {m}");
        }
    }
}

#[test]
fn a_bounds_check_made_before_a_loop_stays_in_a_predicate_through_it() {
    // `row < m` does not change in the loop: it is compared once, before it, and the
    // predicate clears the loop's `and` where it fails; m is not read in the loop.
    let text = "import wave\n\n@wave.kernel(workgroup=16)\ndef k(a: f32[:], out: f32[:], m: u32, k: u32):\n    row = wave.workgroup_id(0)\n    tx = wave.thread_id(0)\n    acc: f32 = 0.0\n    for t in range(u32(20)):\n        ka = t * 16 + tx\n        if row < m and ka < k:\n            acc += a[ka]\n    out[wave.global_id()] = acc\n";
    let (out, d) = wave_kernel::compile(text, Language::Python, "k.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    let asm = &out.asm;
    let start = asm.find("    loop").expect("a loop");
    let (before, body) = (&asm[..start], &asm[start..asm.find("endloop").expect("its end")]);
    // m arrives in r2; the compare reading it is before the loop.
    assert!(before.lines().any(|l| l.contains("ucmp.") && l.contains("r2")), "{asm}");
    // In the loop: `ka < k` and the loop's own test, no `row < m`.
    assert_eq!(body.matches("ucmp.").count(), 2, "{asm}");
    assert!(
        body.lines().any(|l| l.trim_start().starts_with('@') && l.contains("icmp.ne")),
        "{asm}"
    );
    for (m, k) in [(1u32, 40u32), (3, 64), (0, 64), (2, 0)] {
        let device = run_bounded(&out.module, m, ("k", k));
        for g in 0..32u32 {
            let (row, tx) = (g / 16, g % 16);
            let want: f32 = (0..20u32)
                .map(|t| t * 16 + tx)
                .filter(|&ka| row < m && ka < k)
                .map(|ka| ka as f32)
                .sum();
            let at = 1024 + g as usize * 4;
            let got = f32::from_le_bytes(device[at..at + 4].try_into().unwrap());
            assert_eq!(got, want, "m = {m}, k = {k}, thread {g}");
        }
    }
}

#[test]
fn leaving_unless_two_held_conditions_hold_is_two_guarded_halts() {
    // row < m and col < n are held through the loop; after it, the store is skipped where
    // either fails: `@!p halt` twice, not a third predicate made from the two.
    let text = "import wave\n\n@wave.kernel(workgroup=16)\ndef k(a: f32[:], out: f32[:], m: u32, n: u32):\n    row = wave.workgroup_id(0)\n    col = wave.thread_id(0)\n    acc: f32 = 0.0\n    for t in range(u32(20)):\n        if row < m and t < n:\n            acc += a[t * 16 + col]\n        if col < n and t < m:\n            acc += 1.0\n    if row < m and col < n:\n        out[row * 16 + col] = acc\n";
    let (out, d) = wave_kernel::compile(text, Language::Python, "k.py", Options::default());
    let out = out.unwrap_or_else(|| panic!("{d:?}"));
    let asm = &out.asm;
    let tail = &asm[asm.find("endloop").expect("a loop")..];
    assert_eq!(tail.matches(" halt").count(), 2, "{asm}");
    assert!(!tail.contains("icmp"), "{asm}");
    for (m, n) in [(1u32, 16u32), (2, 8), (0, 16), (2, 0)] {
        let device = run_bounded(&out.module, m, ("n", n));
        for row in 0..2u32 {
            for col in 0..16u32 {
                let mut acc = 0.0f32;
                for t in 0..20u32 {
                    if row < m && t < n {
                        acc += (t * 16 + col) as f32;
                    }
                    if col < n && t < m {
                        acc += 1.0;
                    }
                }
                let at = 1024 + (row * 16 + col) as usize * 4;
                let got = f32::from_le_bytes(device[at..at + 4].try_into().unwrap());
                let want = if row < m && col < n { acc } else { 0.0 };
                assert_eq!(got, want, "m = {m}, n = {n}, row {row}, col {col}");
            }
        }
    }
}

/// Runs a kernel `k(a: f32[:], out: f32[:], m: u32, X: u32)` on two workgroups of 16 at
/// W = 16, with `a[i] = i` and `out` at byte 256; returns the device memory.
fn run_bounded(module: &wave_wbin::Module, m: u32, (name, x): (&str, u32)) -> Vec<u8> {
    // a: 256 floats a[i] = i at 0; out at 1024. (The loops run 20 steps: 16 or fewer would
    // be unrolled at O2, and these tests are about values held through a loop.)
    let mut device = vec![0u8; 2048];
    for i in 0..256u32 {
        device[i as usize * 4..i as usize * 4 + 4].copy_from_slice(&(i as f32).to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [2, 1, 1],
        wave_width: 16,
        args: vec![("a".into(), 0), ("out".into(), 1024), ("m".into(), m), (name.into(), x)],
        ..Default::default()
    };
    wave_emulator::run(module, &dispatch, &mut device).expect("runs");
    device
}

#[test]
fn sgemm_at_o2_unrolls_its_tile_walk_without_more_registers() {
    // The 16-step walk over a tile is unrolled at O2 (a GPU's compiler does not unroll a PTX
    // loop); rematerialization in the long loop keeps R at the rolled loop's 12, under the
    // hand-written kernel's 13. O3 keeps the hoisted values instead: more registers.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance/kernels/python/sgemm.py");
    let text = std::fs::read_to_string(path).expect("the kernel set is in the repository");
    let compile = |level| {
        let options = Options { level, ..Options::default() };
        let (out, d) = wave_kernel::compile(&text, Language::Python, "sgemm.py", options);
        out.unwrap_or_else(|| panic!("{d:?}"))
    };
    let o2 = compile(Level::O2);
    assert_eq!(
        o2.asm.matches("\n    loop").count() + o2.asm.matches("\n        loop").count(),
        1,
        "{}",
        o2.asm
    );
    assert_eq!(o2.asm.matches("local_load.u32").count(), 32, "{}", o2.asm);
    assert!(o2.kernels[0].allocation.registers <= 12, "R = {}", o2.kernels[0].allocation.registers);
    let o3 = compile(Level::O3);
    assert!(o3.kernels[0].allocation.registers > o2.kernels[0].allocation.registers);
}

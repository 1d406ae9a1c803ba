//! Private arrays: mem2reg turns those indexed only by constants into values; the others live
//! in a per-thread frame of Local Memory, which spilled registers share; and what cannot be
//! laid out is refused with E0411.

use wave_kernel::{Language, Options, opt::Level};

fn compile(text: &str, options: Options) -> Result<wave_kernel::Output, String> {
    let (out, d) = wave_kernel::compile(text, Language::Python, "k.py", options);
    out.ok_or_else(|| {
        d.iter()
            .map(|d| format!("{}: {} @{:?}", d.code, d.message, d.span))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn at(level: Level) -> Options {
    Options { level, ..Default::default() }
}

fn run(module: &wave_wbin::Module, workgroup: Option<[u32; 3]>) -> Result<Vec<u8>, String> {
    let mut device = vec![0u8; 2048];
    for i in 0..128u32 {
        device[i as usize * 4..i as usize * 4 + 4]
            .copy_from_slice(&(i.wrapping_mul(2654435761) >> 7).to_le_bytes());
    }
    let dispatch = wave_emulator::Dispatch {
        grid: [2, 1, 1],
        workgroup,
        wave_width: 16,
        args: vec![("inp".into(), 0), ("out".into(), 1024)],
        ..Default::default()
    };
    wave_emulator::run(module, &dispatch, &mut device).map_err(|t| t.to_string())?;
    Ok(device)
}

/// A window of four values written on both sides of a branch and in a counted loop: every
/// index is a constant once the loop is unrolled.
const WINDOW: &str = "import wave

@wave.kernel(workgroup=32)
def window(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    w = wave.private_array(u32, 4)
    w[0] = inp[i]
    if (i & 1) == 0:
        w[1] = w[0] * 3
    else:
        w[2] = w[0] + 7
    for j in range(u32(4)):
        w[3] += w[j] ^ j
    out[i] = w[0] + w[1] * 5 + w[2] * 11 + w[3]
";

#[test]
fn private_arrays_indexed_by_constants_become_values() {
    let mem = |o: &wave_kernel::Output| {
        o.kernels[0]
            .mir
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|i| {
                matches!(
                    i.op,
                    wave_kernel::mir::Op::Load(wave_kernel::mir::Space::Private(_), _)
                        | wave_kernel::mir::Op::Store(wave_kernel::mir::Space::Private(_), _, _)
                )
            })
            .count()
    };
    let o0 = compile(WINDOW, at(Level::O0)).unwrap();
    let o2 = compile(WINDOW, at(Level::O2)).unwrap();
    let o3 = compile(WINDOW, at(Level::O3)).unwrap();
    // -O0 keeps the array in the thread's frame: 4 words per thread of 32.
    assert!(mem(&o0) > 0);
    assert_eq!(o0.module.kernels[0].local_memory, 4 * 4 * 32);
    // -O2 and -O3 unroll the loop (4 steps), whose counter indexes the array, and mem2reg
    // leaves no access to the array and no Local Memory.
    for o in [&o2, &o3] {
        assert_eq!(mem(o), 0, "{}", o.asm);
        assert_eq!(o.module.kernels[0].local_memory, 0, "{}", o.asm);
        assert!(!o.asm.contains("local_"), "{}", o.asm);
    }
    let reference = run(&o0.module, None).unwrap();
    for o in [&o2, &o3] {
        assert_eq!(run(&o.module, None).unwrap(), reference, "{}", o.asm);
    }
    // The values: thread i computes from inp[i] what the Python would.
    for i in 0..64usize {
        let x = u32::from_le_bytes(reference[i * 4..i * 4 + 4].try_into().unwrap());
        let mut w = [x, 0, 0, 0];
        if i % 2 == 0 {
            w[1] = x.wrapping_mul(3);
        } else {
            w[2] = x.wrapping_add(7);
        }
        for j in 0..4 {
            w[3] = w[3].wrapping_add(w[j] ^ j as u32);
        }
        let want = w[0]
            .wrapping_add(w[1].wrapping_mul(5))
            .wrapping_add(w[2].wrapping_mul(11))
            .wrapping_add(w[3]);
        let got = u32::from_le_bytes(reference[1024 + i * 4..1028 + i * 4].try_into().unwrap());
        assert_eq!(got, want, "thread {i}");
    }
}

#[test]
fn straight_line_constant_indices_are_promoted_at_o2() {
    let text = "import wave

@wave.kernel
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    a = wave.private_array(u32, 2)
    if inp[i] > 100:
        a[1] = inp[i]
    out[i] = a[0] + a[1]
";
    // No workgroup size: a frame could not be laid out, so this compiles only promoted.
    let o2 = compile(text, at(Level::O2)).unwrap();
    assert_eq!(o2.module.kernels[0].local_memory, 0, "{}", o2.asm);
    let e = compile(text, at(Level::O0)).unwrap_err();
    assert!(e.starts_with("E0411") && e.contains("`a`"), "{e}");
}

/// A histogram indexed by the data: a computed index keeps it in memory at every level.
const BINS: &str = "import wave

@wave.kernel(workgroup=32)
def bins(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    h = wave.private_array(u32, 8)
    for j in range(u32(6)):
        h[(inp[(i + j) & 127] >> 3) & 7] += j + 1
    s: u32 = 0
    for b in range(u32(8)):
        s = s * 31 + h[b]
    out[i] = s
";

#[test]
fn computed_indices_use_a_frame_per_thread_that_spills_share() {
    let free = compile(BINS, at(Level::O2)).unwrap();
    let k = &free.kernels[0];
    assert_eq!(k.allocation.spill_slots, 0);
    assert_eq!(free.module.kernels[0].local_memory, 8 * 4 * 32, "{}", free.asm);
    let reference = run(&compile(BINS, at(Level::O0)).unwrap().module, None).unwrap();
    assert_eq!(run(&free.module, None).unwrap(), reference);
    // Squeezed: values spill into the same frame, after the array.
    let tight = compile(BINS, Options { level: Level::O2, max_registers: 5, ..Default::default() })
        .unwrap();
    let k = &tight.kernels[0];
    assert!(k.allocation.spill_slots > 0, "{}", tight.asm);
    assert_eq!(
        tight.module.kernels[0].local_memory,
        (8 + k.allocation.spill_slots) * 4 * 32,
        "{}",
        tight.asm
    );
    assert_eq!(run(&tight.module, None).unwrap(), reference, "{}", tight.asm);
    // A dispatch wider than the workgroup size puts frames past the Local Memory: a trap,
    // never another thread's array.
    let e = run(&free.module, Some([64, 1, 1])).unwrap_err();
    assert!(e.contains("local memory"), "{e}");
}

#[test]
fn a_frame_without_a_workgroup_size_is_e0411_at_the_access() {
    let text = BINS.replace("@wave.kernel(workgroup=32)", "@wave.kernel");
    for level in [Level::O0, Level::O3] {
        let e = compile(&text, at(level)).unwrap_err();
        assert!(e.starts_with("E0411") && e.contains("`h`"), "{e}");
        let span = text.find("h[(inp").unwrap();
        assert!(e.contains(&format!("@{span}..")), "{e}");
    }
}

#[test]
fn more_local_memory_than_the_target_has_is_e0411() {
    // 1,000 words shared plus 64 per thread for 256 threads: 69,536 bytes.
    let text = "import wave

@wave.kernel(workgroup=256)
def k(inp: u32[:], out: u32[:]):
    i = wave.global_id()
    t = wave.local_array(u32, 1000)
    p = wave.private_array(u32, 64)
    p[inp[i] & 63] = 1
    t[i & 511] = p[3]
    out[i] = t[3]
";
    let e = compile(text, at(Level::O2)).unwrap_err();
    assert!(e.starts_with("E0411") && e.contains("69536 bytes") && e.contains("16384"), "{e}");
}

#[test]
fn what_a_private_array_cannot_do_is_refused() {
    let body = |line: &str| {
        format!(
            "import wave\n\n@wave.kernel(workgroup=32)\ndef k(out: u32[:]):\n    p = wave.private_array(u32, 4)\n    {line}\n"
        )
    };
    for (line, code, words) in [
        ("wave.atomic_add(p, 0, 1)", "E0401", "a private array is the thread's own"),
        ("p = 3", "E0405", "is a buffer"),
        ("q = wave.private_array(u32, 65)", "E0400", "at most 64"),
        ("q = wave.private_array(u32, 0)", "E0400", "positive integer"),
        ("q = wave.private_array(bool, 2)", "E0404", "not an element type"),
        ("for j in range(3):\n        q = wave.private_array(u32, 2)", "E0400", "outside loops"),
        ("x = wave.private_array(u32)", "E0403", "`private_array(f32, 4)`"),
        ("out[0] = wave.private_array(u32, 4)[0]", "E0400", "declares a variable"),
    ] {
        let e = compile(&body(line), at(Level::O2)).unwrap_err();
        assert!(e.starts_with(code) && e.contains(words), "{line}: {e}");
    }
}

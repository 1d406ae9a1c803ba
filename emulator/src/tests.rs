//! Emulator unit tests; the conformance suite in `conformance/` covers the spec area by area.

use crate::*;

fn run_source(
    source: &str,
    dispatch: &Dispatch,
    memory: usize,
) -> Result<(Vec<u8>, Outcome), Trap> {
    let a = wave_asm::assemble(source, "t.wave");
    assert!(!a.has_errors(), "{:#?}", a.diagnostics);
    let mut device = vec![0u8; memory];
    let outcome = run(&a.module, dispatch, &mut device)?;
    Ok((device, outcome))
}

fn words(bytes: &[u8], offset: usize, count: usize) -> Vec<u32> {
    bytes[offset..offset + 4 * count]
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

const STORE_ID: &str = "
    mov r10, sr_workgroup_id_x
    mov r11, sr_workgroup_size_x
    mov r12, sr_thread_id_x
    imad r13, r10, r11, r12
    shl r14, r13, 2
    iadd r14, r14, out
";

#[test]
fn vector_add_runs_at_every_width() {
    let source = include_str!("../../compiler/asm/tests/data/vector_add.wave");
    for w in [8, 16, 32, 64] {
        let mut memory = vec![0u8; 4096];
        for i in 0..100u32 {
            memory[(4 * i) as usize..(4 * i + 4) as usize]
                .copy_from_slice(&(i as f32).to_bits().to_le_bytes());
            let at = 1024 + 4 * i as usize;
            memory[at..at + 4].copy_from_slice(&((2 * i) as f32).to_bits().to_le_bytes());
        }
        let a = wave_asm::assemble(source, "v.wave");
        let dispatch = Dispatch {
            grid: [2, 1, 1],
            wave_width: w,
            args: vec![("a".into(), 0), ("b".into(), 1024), ("c".into(), 2048), ("n".into(), 100)],
            ..Dispatch::default()
        };
        run(&a.module, &dispatch, &mut memory).unwrap();
        let out: Vec<f32> = words(&memory, 2048, 128).into_iter().map(f32::from_bits).collect();
        for (i, v) in out.iter().take(100).enumerate() {
            assert_eq!(*v, 3.0 * i as f32, "W={w} i={i}");
        }
        assert!(out[100..].iter().all(|v| *v == 0.0), "lanes past n stored nothing");
    }
}

#[test]
fn break_inside_if_leaves_in_the_same_iteration() {
    // Each lane counts iterations; lane i breaks when the counter reaches i (inside an if).
    let source = format!(
        ".kernel k\n.param out: ptr\n.workgroup_size 64\n{STORE_ID}
    mov r1, sr_lane_id
    mov_imm r2, 0
    loop
        icmp.ge p0, r2, r1
        if p0
            break p0
            iadd r2, r2, 100      ; must never run
        endif
        iadd r2, r2, 1
    endloop
    device_store.u32 r14, r2
.end\n"
    );
    for w in [8, 32, 64] {
        let (memory, _) = run_source(
            &source,
            &Dispatch { wave_width: w, args: vec![("out".into(), 0)], ..Dispatch::default() },
            4096,
        )
        .unwrap();
        let out = words(&memory, 0, 64);
        for (t, v) in out.iter().enumerate() {
            assert_eq!(*v, (t % w as usize) as u32, "W={w} thread {t}");
        }
    }
}

#[test]
fn continue_and_else_lanes_are_not_lost() {
    // Odd lanes continue until the counter hits 3; even lanes take the else branch.
    let source = format!(
        ".kernel k\n.param out: ptr\n.workgroup_size 32\n{STORE_ID}
    mov r1, sr_lane_id
    and r3, r1, 1
    icmp.eq p1, r3, 1
    mov_imm r2, 0
    mov_imm r4, 0
    loop
        iadd r2, r2, 1
        icmp.ge p2, r2, 3
        break p2
        if p1
            continue p1
        else
            iadd r4, r4, 10
        endif
    endloop
    iadd r2, r2, r4
    device_store.u32 r14, r2
.end\n"
    );
    let (memory, _) = run_source(
        &source,
        &Dispatch { wave_width: 16, args: vec![("out".into(), 0)], ..Dispatch::default() },
        4096,
    )
    .unwrap();
    let out = words(&memory, 0, 32);
    for (t, v) in out.iter().enumerate() {
        let expected = if t % 2 == 1 { 3 } else { 3 + 20 };
        assert_eq!(*v, expected, "thread {t}");
    }
}

#[test]
fn calls_return_from_divergent_code_and_halt_retires_lanes() {
    let source = format!(
        ".kernel k\n.param out: ptr\n.workgroup_size 32\n{STORE_ID}
    mov r1, r12
    mov_imm r2, 0
    icmp.lt p0, r1, 8
    if p0
        call f
    endif
    icmp.eq p3, r1, 31
    @p3 halt
    iadd r2, r2, 1
    device_store.u32 r14, r2
    halt
f:
    icmp.lt p1, r1, 4
    if p1
        mov_imm r2, 100
        return
    endif
    mov_imm r2, 200
    return
.end\n"
    );
    let (memory, _) = run_source(
        &source,
        &Dispatch { wave_width: 8, args: vec![("out".into(), 0)], ..Dispatch::default() },
        4096,
    )
    .unwrap();
    let out = words(&memory, 0, 32);
    for (t, v) in out.iter().enumerate() {
        let expected = match t {
            31 => 0,
            0..=3 => 101,
            4..=7 => 201,
            _ => 1,
        };
        assert_eq!(*v, expected, "thread {t}");
    }
}

#[test]
fn traps_name_what_and_where() {
    let source = ".kernel k\n.param out: ptr\n.workgroup_size 8\n    mov_imm r1, 5000\n    device_store.u32 r1, r1\n.end\n";
    let e = run_source(
        source,
        &Dispatch { wave_width: 8, args: vec![("out".into(), 0)], ..Dispatch::default() },
        4096,
    )
    .unwrap_err();
    assert!(e.message.starts_with("device memory out of bounds"), "{e}");
    assert_eq!((e.line, e.lane, e.wave), (Some(5), Some(0), Some(0)));
    // An infinite loop stops at the budget.
    let source = ".kernel k\n.workgroup_size 8\n    loop\n    endloop\n.end\n";
    let e =
        run_source(source, &Dispatch { wave_width: 8, max_steps: 1000, ..Dispatch::default() }, 16)
            .unwrap_err();
    assert!(e.message.starts_with("instruction budget exceeded"), "{e}");
    // An infinite loop with an interrupt stops when the interrupt says so, long before the
    // budget, and a run whose interrupt never fires ends at the budget as before.
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let seen = asked.clone();
    let interrupt =
        crate::Interrupt::new(move || seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 2);
    let dispatch = Dispatch { wave_width: 8, interrupt: Some(interrupt), ..Dispatch::default() };
    let e = run_source(source, &dispatch, 16).unwrap_err();
    assert!(e.message.starts_with("interrupted after"), "{e}");
    assert_eq!(asked.load(std::sync::atomic::Ordering::Relaxed), 3);
    let never = crate::Interrupt::new(|| false);
    let dispatch = Dispatch {
        wave_width: 8,
        max_steps: 3 * crate::INTERRUPT_EVERY + 5,
        interrupt: Some(never),
        ..Dispatch::default()
    };
    let e = run_source(source, &dispatch, 16).unwrap_err();
    assert!(e.message.starts_with("instruction budget exceeded"), "{e}");
    // Missing and unknown arguments.
    let source = ".kernel k\n.param out: ptr\n.workgroup_size 8\n    halt\n.end\n";
    let e = run_source(source, &Dispatch::default(), 16).unwrap_err();
    assert!(e.message.contains("missing argument for parameter `out`"), "{e}");
    let e = run_source(
        source,
        &Dispatch { args: vec![("out".into(), 0), ("x".into(), 1)], ..Dispatch::default() },
        16,
    )
    .unwrap_err();
    assert!(e.message.contains("has no parameter `x`"), "{e}");
}

#[test]
fn barriers_synchronise_waves_and_detect_divergence_and_deadlock() {
    // Each thread writes its id to local memory, barrier, reads its mirror's.
    let source = format!(
        ".kernel k\n.param out: ptr\n.local_memory 256\n.workgroup_size 64\n{STORE_ID}
    shl r1, r12, 2
    local_store.u32 r1, r12
    barrier
    mov_imm r2, 63
    isub r2, r2, r12
    shl r2, r2, 2
    local_load.u32 r3, r2
    device_store.u32 r14, r3
.end\n"
    );
    for w in [8, 64] {
        let (memory, outcome) = run_source(
            &source,
            &Dispatch { wave_width: w, args: vec![("out".into(), 0)], ..Dispatch::default() },
            4096,
        )
        .unwrap();
        let out = words(&memory, 0, 64);
        for (t, v) in out.iter().enumerate() {
            assert_eq!(*v, 63 - t as u32, "W={w}");
        }
        assert_eq!(outcome.stats.barrier_waits, u64::from(64 / w));
    }
    let divergent = ".kernel k\n.workgroup_size 16\n    mov r1, sr_lane_id\n    icmp.lt p0, r1, 2\n    if p0\n        barrier\n    endif\n.end\n";
    let e =
        run_source(divergent, &Dispatch { wave_width: 8, ..Dispatch::default() }, 16).unwrap_err();
    assert!(e.message.starts_with("barrier in divergent control flow"), "{e}");
    let deadlock = ".kernel k\n.workgroup_size 16\n    mov r1, sr_wave_id\n    icmp.eq p0, r1, 0\n    @p0 halt\n    barrier\n.end\n";
    let e =
        run_source(deadlock, &Dispatch { wave_width: 8, ..Dispatch::default() }, 16).unwrap_err();
    assert!(e.message.starts_with("deadlock"), "{e}");
}

#[test]
fn every_limit_gives_a_clear_error() {
    let module = |source: &str| wave_asm::assemble(source, "l.wave").module;
    let mut memory = vec![0u8; 64];
    // An empty kernel over 2^32 workgroups stops at the budget, quickly.
    let empty = module(".kernel k\n.workgroup_size 1\n.end\n");
    let e = run(
        &empty,
        &Dispatch {
            grid: [u32::MAX, u32::MAX, u32::MAX],
            wave_width: 8,
            max_steps: 10_000,
            ..Dispatch::default()
        },
        &mut memory,
    )
    .unwrap_err();
    assert!(e.message.starts_with("instruction budget exceeded"), "{e}");
    let halt = module(".kernel k\n    halt\n.end\n");
    for (dispatch, expected) in [
        (
            Dispatch { workgroup: Some([2048, 1, 1]), ..Dispatch::default() },
            "exceed MAX_WORKGROUP_SIZE",
        ),
        (Dispatch { workgroup: Some([0, 1, 1]), ..Dispatch::default() }, "at least 1"),
        (
            Dispatch { workgroup: Some([8, 1, 1]), wave_width: 12, ..Dispatch::default() },
            "wave width 12",
        ),
        (Dispatch::default(), "no workgroup size"),
        (
            Dispatch {
                kernel: Some("nope".into()),
                workgroup: Some([8, 1, 1]),
                ..Dispatch::default()
            },
            "no kernel `nope`",
        ),
    ] {
        let e = run(&halt, &dispatch, &mut memory).unwrap_err();
        assert!(e.message.contains(expected), "{e} (expected {expected})");
    }
    let big_local = module(".kernel k\n.local_memory 1000000\n.workgroup_size 8\n    halt\n.end\n");
    let e = run(&big_local, &Dispatch { wave_width: 8, ..Dispatch::default() }, &mut memory)
        .unwrap_err();
    assert!(e.message.contains("exceed LOCAL_MEMORY_SIZE"), "{e}");
    let two = module(".kernel a\n    halt\n.end\n.kernel b\n    halt\n.end\n");
    let e = run(&two, &Dispatch { workgroup: Some([8, 1, 1]), ..Dispatch::default() }, &mut memory)
        .unwrap_err();
    assert!(e.message.contains("several kernels"), "{e}");
    // W = 4 runs, with a warning.
    let outcome = run(
        &halt,
        &Dispatch { workgroup: Some([8, 1, 1]), wave_width: 4, ..Dispatch::default() },
        &mut memory,
    )
    .unwrap();
    assert!(outcome.warnings[0].contains("below the spec minimum"));
}

#[test]
fn runs_are_deterministic() {
    // Atomics from many waves and workgroups: the same returned values run after run.
    let source = ".kernel k\n.param out: ptr\n.workgroup_size 64\n    mov r1, sr_workgroup_id_x\n    mov r2, sr_thread_id_x\n    mov_imm r3, 0\n    mov_imm r4, 1\n    atomic_add r5, r3, r4\n    shl r6, r5, 2\n    iadd r6, r6, 64\n    device_store.u32 r6, r2\n.end\n";
    let a = wave_asm::assemble(source, "d.wave");
    let mut first: Option<Vec<u8>> = None;
    for _ in 0..3 {
        let mut memory = vec![0u8; 64 + 4 * 64 * 8];
        run(
            &a.module,
            &Dispatch {
                grid: [8, 1, 1],
                wave_width: 16,
                args: vec![("out".into(), 0)],
                ..Dispatch::default()
            },
            &mut memory,
        )
        .unwrap();
        match &first {
            None => first = Some(memory),
            Some(f) => assert_eq!(f, &memory),
        }
    }
}

#[test]
fn a_session_steps_lanes_explains_inactive_ones_and_steps_back() {
    let source = ".kernel k
.param out: ptr
.workgroup_size 16
    mov r1, sr_thread_id_x
    icmp.lt p0, r1, 3
    loop
        if p0
            break p0
        endif
        iadd r2, r2, 1
        icmp.ge p1, r2, 2
        break p1
    endloop
    shl r3, r1, 2
    iadd r3, r3, out
    device_store.u32 r3, r2
.end
";
    let a = wave_asm::assemble(source, "s.wave");
    let dispatch = Dispatch { wave_width: 8, args: vec![("out".into(), 0)], ..Dispatch::default() };
    let mut session = Session::new(&a.module, &dispatch, vec![0u8; 256]).unwrap();
    assert_eq!(session.waves().len(), 2);
    // Step wave 0 to just after `break p0` (mov, icmp, loop, if, break).
    for _ in 0..5 {
        assert_eq!(session.step(0).unwrap(), Stop::Step);
    }
    let view = &session.waves()[0];
    assert_eq!(view.active, 0, "lanes 0-2 broke; the others wait for the if to end");
    assert_eq!(view.line, Some(9), "the wave skips to the endif");
    assert_eq!(
        view.blocks.iter().map(|b| b.kind).collect::<Vec<_>>(),
        [BlockKind::Loop, BlockKind::If]
    );
    let broke = session.inactive_reason(0, 1).unwrap();
    assert!(broke.contains("left the loop at line 6"), "{broke}");
    let waiting = session.inactive_reason(0, 5).unwrap();
    assert!(waiting.contains("off since the `if` at line 7"), "{waiting}");
    assert!(session.inactive_reason(0, 9).unwrap().contains("no lane 9"));
    // Registers and predicates per lane.
    assert_eq!(session.register(0, 1, 5), Some(5));
    assert_eq!(session.predicates(0).unwrap()[0] & 0xFF, 0b111);
    // Snapshot, run on, come back.
    let snapshot = session.snapshot();
    let steps = session.steps();
    assert_eq!(session.step(0).unwrap(), Stop::Step);
    assert!(session.steps() > steps);
    session.restore(&snapshot);
    assert_eq!(session.steps(), steps);
    assert_eq!(session.waves()[0].line, Some(9));
    // Change a lane's register and run to the store: lane 7 counts from 0 again.
    assert!(session.set_register(0, 2, 7, 100));
    let store_pc = a.placed.iter().find(|p| p.inst.opcode == 0x39).map(|p| p.offset).unwrap();
    assert_eq!(
        session.run_until(&[store_pc], 1000).unwrap(),
        Stop::Breakpoint { wave: 0, pc: store_pc }
    );
    assert_eq!(session.run_until(&[], 1000).unwrap(), Stop::Finished);
    let out = words(session.device(), 0, 16);
    // Lanes 0-2 broke at once; lane 7 started at 100 and left after one iteration.
    assert_eq!(&out[..8], &[0, 0, 0, 2, 2, 2, 2, 101]);
    assert_eq!(&out[8..], &[2; 8]);
    // Without interference the session computes what `run` computes.
    let mut memory = vec![0u8; 256];
    run(&a.module, &dispatch, &mut memory).unwrap();
    let mut again = Session::new(&a.module, &dispatch, vec![0u8; 256]).unwrap();
    assert_eq!(again.run_until(&[], 10_000).unwrap(), Stop::Finished);
    assert_eq!(again.device(), &memory[..]);
}

#[test]
fn review_findings_stay_fixed() {
    // Falling off the end of a function halts only the lanes that got there.
    let source = ".kernel main
.param out: ptr
.workgroup_size 8
    mov_special r1, sr_lane_id
    shift.shl r2, r1, 2
    iadd r2, out, r2
    mov_imm r3, 1
    icmp.lt p0, r1, 4
    if p0
        call f
    else
        mov_imm r3, 2
        device_store.u32 [r2], r3
    endif
    mov_imm r3, 3
    device_store.u32 [r2 + 32], r3
    halt
f:
    device_store.u32 [r2 + 64], r3
.end
";
    let (memory, _) = run_source(
        source,
        &Dispatch { wave_width: 8, args: vec![("out".into(), 0)], ..Dispatch::default() },
        256,
    )
    .unwrap();
    assert_eq!(words(&memory, 0, 8), [0, 0, 0, 0, 2, 2, 2, 2]);
    assert_eq!(words(&memory, 32, 8), [0, 0, 0, 0, 3, 3, 3, 3]);
    assert_eq!(words(&memory, 64, 8), [1, 1, 1, 1, 0, 0, 0, 0]);

    // A call into the middle of a block is refused before it runs.
    let source = ".kernel main\n.workgroup_size 8\n    call f\n    halt\n    mov_imm r1, 1\n    icmp.eq p0, r1, 1\n    if p0\nf:\n        nop\n    endif\n    return\n.end\n";
    let e = run_source(source, &Dispatch { wave_width: 8, ..Dispatch::default() }, 16).unwrap_err();
    assert!(e.message.contains("call target is inside an `if` or a loop"), "{e}");

    // A .wbin whose kernel has more parameters than registers is refused.
    let mut module = wave_asm::assemble(
        ".kernel k\n.param a: u32\n.param b: u32\n.workgroup_size 8\n    halt\n.end\n",
        "p.wave",
    )
    .module;
    module.kernels[0].registers = 1;
    let e = run(
        &module,
        &Dispatch {
            wave_width: 8,
            args: vec![("a".into(), 0), ("b".into(), 0)],
            ..Dispatch::default()
        },
        &mut vec![0u8; 16],
    )
    .unwrap_err();
    assert!(e.message.contains("2 parameters but 1 registers"), "{e}");

    // fsat(-0.0) is +0.0 like fclamp; NaN results are the canonical quiet NaN on every host;
    // ffract stays below 1.0.
    let source = ".kernel k\n.param out: ptr\n.workgroup_size 8\n    mov_imm r1, 0x80000000\n    fsat r2, r1\n    mov_imm r3, 0.0\n    fdiv r4, r3, r3\n    mov_imm r5, -1.0\n    fsqrt r6, r5\n    mov_imm r7, -1e-10\n    ffract r8, r7\n    device_store.u32 [out], r2\n    device_store.u32 [out + 4], r4\n    device_store.u32 [out + 8], r6\n    device_store.u32 [out + 12], r8\n.end\n";
    let (memory, _) = run_source(
        source,
        &Dispatch { wave_width: 8, args: vec![("out".into(), 0)], ..Dispatch::default() },
        64,
    )
    .unwrap();
    assert_eq!(words(&memory, 0, 4), [0, 0x7FC0_0000, 0x7FC0_0000, 0x3F7F_FFFF]);
}

#[test]
fn atomics_whose_old_value_nobody_reads_are_marked() {
    let source = "
.kernel k
.param c: ptr
.workgroup_size 32
    mov_imm r4, 1
    atomic_add r3, c, r4
    atomic_add r5, c, r4
    icmp.eq p0, r4, 1
    loop
        device_store.u32 [c], r6
        atomic_add r6, c, r4
        atomic_add r7, c, r4
        break p0
    endloop
    atomic_add r8, c, r4
    iadd r9, r8, 1
.end
";
    let a = wave_asm::assemble(source, "d.wave");
    assert!(!a.has_errors(), "{:#?}", a.diagnostics);
    let prog = crate::decode::decode(&a.module, &a.module.kernels[0]).ok().expect("decodes");
    let marks: Vec<(u16, bool)> = prog
        .ops
        .iter()
        .filter(|o| matches!(o.code, crate::decode::Code::Atomic(..)))
        .map(|o| (o.rd, o.discard))
        .collect();
    // r3 and r5 are never read; r6 is stored in the next iteration; r7 is not; r8 is read.
    assert_eq!(marks, [(3, true), (5, true), (6, false), (7, true), (8, false)]);
}

#[test]
fn registers_read_before_written_start_at_zero_in_every_workgroup() {
    // r5 is read before it is written; r6 is written only by some lanes inside an `if`;
    // r7 is written before any read. Every workgroup must see r5 = 0 and r6 = 0 where it
    // did not write it, whatever the workgroup before it left there.
    let source = "
.kernel k
.param out: ptr
.workgroup_size 32
    mov r7, sr_thread_id_x
    mov r8, sr_workgroup_id_x
    iadd r5, r5, 1
    and r9, r7, 1
    icmp.eq p0, r9, 0
    if p0
        mov_imm r6, 7
    endif
    iadd r10, r5, r6
    shl r11, r8, 5
    iadd r11, r11, r7
    shl r11, r11, 2
    iadd r11, r11, out
    device_store.u32 [r11], r10
    mov_imm r5, 100
    mov_imm r6, 100
.end
";
    let a = wave_asm::assemble(source, "z.wave");
    assert!(!a.has_errors(), "{:#?}", a.diagnostics);
    let prog = crate::decode::decode(&a.module, &a.module.kernels[0]).ok().expect("decodes");
    assert!(prog.live_in.contains(&5) && prog.live_in.contains(&6), "{:?}", prog.live_in);
    assert!(!prog.live_in.contains(&7), "{:?}", prog.live_in);
    for threads in [1, 3] {
        let dispatch = Dispatch {
            grid: [20, 1, 1],
            args: vec![("out".into(), 0)],
            threads,
            ..Dispatch::default()
        };
        let (memory, _) = run_source(source, &dispatch, 20 * 32 * 4).expect("runs");
        let got = words(&memory, 0, 20 * 32);
        for (i, v) in got.iter().enumerate() {
            assert_eq!(*v, if i % 2 == 0 { 8 } else { 1 }, "thread {i} at {threads} threads");
        }
    }
}

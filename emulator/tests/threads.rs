//! Workgroups on several threads give what one thread gives (spec 2.5.8): memory, traps,
//! statistics, traces and notes, bit for bit, for kernels built so that any dependence on the
//! order in which workgroups run would show.

use wave_emulator::{Dispatch, Outcome, Trap, run};

const THREADS: [u32; 4] = [2, 3, 8, 16];

/// What a run leaves: memory, and its outcome or trap.
type Run = (Vec<u8>, Result<Outcome, Trap>);

fn run_at(source: &str, dispatch: &Dispatch, memory: &[u8], threads: u32) -> Run {
    let a = wave_asm::assemble(source, "t.wave");
    assert!(!a.has_errors(), "{:#?}", a.diagnostics);
    let mut device = memory.to_vec();
    let result = run(&a.module, &Dispatch { threads, ..dispatch.clone() }, &mut device);
    (device, result)
}

/// Runs at one thread and at every count of [`THREADS`], asserts they agree, and returns the
/// one-thread run.
fn same_at_every_thread_count(source: &str, dispatch: &Dispatch, memory: &[u8]) -> Run {
    let one = run_at(source, dispatch, memory, 1);
    for threads in THREADS {
        let (device, result) = run_at(source, dispatch, memory, threads);
        assert!(device == one.0, "memory differs at {threads} threads");
        match (&one.1, &result) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.stats, b.stats, "statistics at {threads} threads");
                assert!(a.trace == b.trace, "trace differs at {threads} threads");
                assert_eq!(a.trace_truncated, b.trace_truncated);
                assert_eq!(a.warnings, b.warnings, "notes at {threads} threads");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "trap at {threads} threads"),
            (a, b) => panic!("one thread: {a:?}; {threads} threads: {b:?}"),
        }
    }
    one
}

fn word(memory: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([memory[at], memory[at + 1], memory[at + 2], memory[at + 3]])
}

fn dispatch(grid: u32, args: &[(&str, u32)]) -> Dispatch {
    Dispatch {
        grid: [grid, 1, 1],
        args: args.iter().map(|&(n, v)| (n.to_owned(), v)).collect(),
        wave_width: 32,
        ..Dispatch::default()
    }
}

#[test]
fn returning_atomics_hand_out_tickets_in_workgroup_order() {
    // Thread 0 of each workgroup takes a ticket; the one-thread run hands them out in grid
    // order, so workgroup g gets ticket g.
    let source = "
.kernel k
.param counter: ptr
.param out: ptr
.workgroup_size 64
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    icmp.eq p0, r2, 0
    mov_imm r4, 1
    @p0 atomic_add r5, counter, r4
    shl r6, r3, 2
    iadd r6, r6, out
    @p0 device_store.u32 [r6], r5
    halt
.end
";
    let (memory, result) = same_at_every_thread_count(
        source,
        &dispatch(200, &[("counter", 0), ("out", 64)]),
        &[0; 4096],
    );
    result.expect("runs");
    assert_eq!(word(&memory, 0), 200);
    for g in 0..200 {
        assert_eq!(word(&memory, 64 + 4 * g), g as u32, "workgroup {g}");
    }
}

#[test]
fn float_atomic_adds_round_in_workgroup_order() {
    // Non-returning f32 adds of values whose sum rounds differently in another order.
    let source = "
.kernel k
.param sum: ptr
.workgroup_size 32
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    cvt_f32_u32 r4, r3
    mov_imm r5, 0.37
    fmul r4, r4, r5
    mov_imm r6, 1.0
    fadd r4, r4, r6
    mov_imm r7, 16777216.0
    and r8, r3, 3
    icmp.eq p1, r8, 0
    @p1 mov r4, r7
    icmp.eq p0, r2, 0
    @p0 atomic_add.f32 r0, sum, r4
    halt
.end
";
    let (memory, result) =
        same_at_every_thread_count(source, &dispatch(300, &[("sum", 0)]), &[0; 256]);
    result.expect("runs");
    let mut sum = 0.0f32;
    for g in 0..300u32 {
        sum += if g % 4 == 0 { 16777216.0 } else { g as f32 * 0.37 + 1.0 };
    }
    assert_eq!(f32::from_bits(word(&memory, 0)), sum, "the sum of the one-thread order");
}

#[test]
fn a_workgroup_sees_what_earlier_workgroups_wrote() {
    // Workgroup g reads chain[g] (written by workgroup g - 1) and writes chain[g + 1]; the
    // last thread does it, after a barrier, with a non-returning atomic on the line as well.
    let source = "
.kernel k
.param chain: ptr
.param hits: ptr
.workgroup_size 96
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    barrier
    icmp.eq p0, r2, 95
    shl r4, r3, 2
    iadd r4, r4, chain
    @p0 device_load.u32 r5, [r4]
    iadd r5, r5, 1
    @p0 device_store.u32 [r4 + 4], r5
    mov_imm r6, 1
    @p0 atomic_add hits, hits, r6
    halt
.end
";
    let (memory, result) = same_at_every_thread_count(
        source,
        &dispatch(150, &[("chain", 0), ("hits", 2048)]),
        &[0; 4096],
    );
    result.expect("runs");
    for g in 0..=150 {
        assert_eq!(word(&memory, 4 * g), g as u32, "chain[{g}]");
    }
}

#[test]
fn reading_back_a_recorded_atomic_sees_every_earlier_update() {
    // Each workgroup adds one to a counter without its old value, then loads the counter:
    // workgroup g must read g + 1.
    let source = "
.kernel k
.param counter: ptr
.param out: ptr
.workgroup_size 32
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    icmp.eq p0, r2, 0
    mov_imm r4, 1
    @p0 atomic_add r0, counter, r4
    @p0 device_load.u32 r5, [counter]
    shl r6, r3, 2
    iadd r6, r6, out
    @p0 device_store.u32 [r6], r5
    halt
.end
";
    let (memory, result) = same_at_every_thread_count(
        source,
        &dispatch(100, &[("counter", 0), ("out", 1024)]),
        &[0; 2048],
    );
    result.expect("runs");
    for g in 0..100 {
        assert_eq!(word(&memory, 1024 + 4 * g), g as u32 + 1, "workgroup {g}");
    }
}

/// Every thread stores its id; workgroup 37's thread 5 stores out of bounds.
const FAULT: &str = "
.kernel k
.param out: ptr
.workgroup_size 64
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    shl r4, r3, 6
    iadd r4, r4, r2
    shl r5, r4, 2
    iadd r5, r5, out
    device_store.u32 [r5], r4
    icmp.eq p0, r3, 37
    icmp.eq p1, r2, 5
    mov_imm r6, 0
    @p0 mov r6, r2
    icmp.ne p2, r6, 5
    mov_imm r7, 1000000
    @p2 mov_imm r7, 0
    iadd r5, r5, r7
    device_store.u32 [r5 + 4], r4
    halt
.end
";

#[test]
fn a_fault_is_the_first_in_grid_order_with_the_memory_before_it() {
    let (memory, result) =
        same_at_every_thread_count(FAULT, &dispatch(64, &[("out", 0)]), &vec![0; 64 * 64 * 4 + 8]);
    let trap = result.expect_err("workgroup 37 faults");
    assert!(trap.message.starts_with("device memory out of bounds"), "{trap}");
    assert_eq!(trap.workgroup, Some([37, 0, 0]));
    assert_eq!(trap.lane, Some(5));
    // Wave 0 of workgroup 37 made its first store before the fault, wave 1 never ran;
    // nothing of workgroup 38 did.
    assert_eq!(word(&memory, 4 * (37 * 64 + 31)), 37 * 64 + 31);
    assert_eq!(word(&memory, 4 * (37 * 64 + 63)), 0);
    // (Thread t's second store writes t into word t + 1.)
    assert_eq!(word(&memory, 4 * (36 * 64 + 63)), 36 * 64 + 62);
    assert_eq!(word(&memory, 4 * (38 * 64 + 1)), 0);
}

#[test]
fn the_instruction_budget_runs_out_at_the_same_instruction() {
    // Workgroup g loops g times; the budget ends somewhere in the middle of the grid.
    let source = "
.kernel k
.param out: ptr
.workgroup_size 32
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    mov_imm r4, 0
    loop
        icmp.ge p0, r4, r3
        break p0
        iadd r4, r4, 1
        shl r5, r3, 2
        iadd r5, r5, out
        device_store.u32 [r5], r4
    endloop
    halt
.end
";
    for budget in [500, 1000, 2345, 4000] {
        let d = Dispatch { max_steps: budget, ..dispatch(64, &[("out", 0)]) };
        let (_, result) = same_at_every_thread_count(source, &d, &[0; 512]);
        let trap = result.expect_err("the budget runs out");
        assert!(trap.message.starts_with("instruction budget exceeded"), "{trap}");
    }
}

#[test]
fn traces_and_shuffle_notes_are_those_of_one_thread() {
    // A shuffle from inactive lanes notes itself once; the trace has every workgroup.
    let source = "
.kernel k
.param out: ptr
.workgroup_size 32
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    icmp.lt p0, r2, 16
    if p0
        iadd r4, r2, 16
        wave_shuffle r5, r2, r4
    endif
    shl r6, r3, 7
    shl r7, r2, 2
    iadd r6, r6, r7
    iadd r6, r6, out
    device_store.u32 [r6], r5
    halt
.end
";
    let d = Dispatch { trace: true, ..dispatch(40, &[("out", 0)]) };
    let (_, result) = same_at_every_thread_count(source, &d, &[0; 40 * 128]);
    let outcome = result.expect("runs");
    assert_eq!(outcome.stats.workgroups, 40);
    assert!(outcome.trace.iter().any(|e| e.workgroup == [39, 0, 0]));
    assert!(outcome.warnings.iter().any(|w| w.contains("inactive")), "{:?}", outcome.warnings);
}

#[test]
fn a_deadlock_in_one_workgroup_is_reported_as_one_thread_reports_it() {
    let source = "
.kernel k
.param out: ptr
.workgroup_size 64
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    icmp.eq p0, r3, 9
    icmp.ge p1, r2, 32
    shl r4, r3, 2
    iadd r4, r4, out
    device_store.u32 [r4], r3
    mov_imm r5, 0
    @p0 mov r5, r2
    icmp.ge p2, r5, 32
    if p2
        halt
    endif
    barrier
    halt
.end
";
    let (_, result) = same_at_every_thread_count(source, &dispatch(20, &[("out", 0)]), &[0; 128]);
    let trap = result.expect_err("workgroup 9 deadlocks");
    assert_eq!(trap.workgroup, Some([9, 0, 0]), "{trap}");
}

#[test]
fn the_debugger_stepping_the_grid_ends_with_the_memory_of_every_thread_count() {
    // A debug session runs workgroups in grid order, as one thread does; stopping at a
    // breakpoint in every workgroup, it ends where runs on 1, 2 and 8 threads end.
    let source = "
.kernel k
.param counter: ptr
.param out: ptr
.workgroup_size 64
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    icmp.eq p0, r2, 0
    mov_imm r4, 1
    @p0 atomic_add r5, counter, r4
    shl r6, r3, 2
    iadd r6, r6, out
    @p0 device_load.u32 r7, [r6]
    iadd r5, r5, r7
    mov_imm r8, 0.5
    iadd r9, out, 512
    @p0 atomic_add.f32 r0, r9, r8
    @p0 device_store.u32 [r6 + 4], r5
    halt
.end
";
    let d = dispatch(60, &[("counter", 0), ("out", 64)]);
    let a = wave_asm::assemble(source, "t.wave");
    let mut session = wave_emulator::Session::new(&a.module, &d, vec![0; 1024]).expect("starts");
    let breakpoint =
        a.module.lines.iter().find(|l| l.line == 14).map(|l| l.offset).expect("line 14");
    let mut stops = 0;
    loop {
        match session.run_until(&[breakpoint], 1 << 20).expect("runs") {
            wave_emulator::Stop::Finished => break,
            _ => stops += 1,
        }
    }
    assert!(stops >= 60, "stopped {stops} times");
    for threads in [1, 2, 8] {
        let (memory, result) = run_at(source, &d, &[0; 1024], threads);
        assert!(memory == session.device(), "memory at {threads} threads");
        assert_eq!(&result.expect("runs").stats, session.stats(), "statistics at {threads}");
    }
}

#[test]
fn an_old_value_read_in_the_next_iteration_is_the_one_thread_value() {
    // The atomic's destination is read only at the top of the next iteration: it is not a
    // discarded result. A second atomic's destination is never read again: it may be.
    let source = "
.kernel k
.param counter: ptr
.param out: ptr
.workgroup_size 32
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    shl r6, r3, 4
    shl r7, r2, 2
    iadd r6, r6, r7
    iadd r6, r6, out
    mov_imm r5, 7
    mov_imm r8, 0
    mov_imm r4, 1
    icmp.lt p0, r2, 4
    loop
        @p0 device_store.u32 [r6], r5
        @p0 atomic_add r5, counter, r4
        iadd r9, counter, 4
        @p0 atomic_add r10, r9, r4
        iadd r8, r8, 1
        icmp.ge p1, r8, 3
        break p1
    endloop
    halt
.end
";
    let (memory, result) = same_at_every_thread_count(
        source,
        &dispatch(50, &[("counter", 0), ("out", 64)]),
        &[0; 4096],
    );
    result.expect("runs");
    assert_eq!(word(&memory, 0), 50 * 4 * 3);
    assert_eq!(word(&memory, 4), 50 * 4 * 3);
    // Workgroup 49's lanes stored the tickets of their second iteration last.
    assert_ne!(word(&memory, 64 + 49 * 16), 7);
}

#[test]
fn a_word_partly_written_by_its_own_workgroup_reads_back_as_one_thread_reads_it() {
    // Even threads store one byte into words that hold input bytes; every thread then reads
    // its word back: some bytes come from its own stores, the others from memory as it was.
    let source = "
.kernel k
.param buf: ptr
.param out: ptr
.workgroup_size 64
    mov r2, sr_thread_id_x
    mov r3, sr_workgroup_id_x
    shl r4, r3, 6
    iadd r4, r4, r2
    iadd r5, r4, buf
    and r6, r2, 1
    icmp.eq p0, r6, 0
    iadd r7, r4, 100
    @p0 device_store.u8 [r5], r7
    and r8, r5, 0xFFFFFFFC
    device_load.u32 r9, [r8]
    shl r10, r4, 2
    iadd r10, r10, out
    device_store.u32 [r10], r9
    halt
.end
";
    let memory: Vec<u8> = (0..32 * 64 + 32 * 64 * 4).map(|i| (i * 7 + 3) as u8).collect();
    let (memory_after, result) =
        same_at_every_thread_count(source, &dispatch(32, &[("buf", 0), ("out", 32 * 64)]), &memory);
    result.expect("runs");
    // Thread 1 of workgroup 0 reads bytes 0..4: 100, the input's byte 1, 102, byte 3.
    assert_eq!(
        word(&memory_after, 32 * 64 + 4),
        u32::from_le_bytes([100, memory[1], 102, memory[3]])
    );
}

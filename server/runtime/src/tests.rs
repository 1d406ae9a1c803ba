//! The device layer without a GPU: argument layout, memory comparison and the not-run rules.
//! `gpu_runs_a_case_and_a_trap` needs a CUDA GPU and says so where there is none.

use std::path::Path;
use std::time::Duration;

use wave_conformance::{Block, Case, Elem};

use super::cases::{self, Levels, Verdict, compare_on_gpu, gpu_not_run};
use super::verdict::same_but_nan_payload;
use super::*;
use crate::workers;

const SCALE: &str = r#"
name = "scale"
spec = ["1"]
wave_widths = [8, 32]
source = """
.kernel scale
.param out: ptr
.param k: u32
.param f: f32
.registers 8
.workgroup_size 32
    mov_special r2, sr_lane_id
    imul r3, r2, k
    shift.shl r4, r2, 2
    iadd r4, r4, out
    device_store.u32 [r4], r3
    halt
.end
"""

[dispatch]
grid = [1, 1, 1]
device_memory = 256

[args]
out = 64
k = 3
f = 1.5

[[expect]]
offset = 64
u32 = [0, 3, 6, 9]
"#;

/// SCALE expecting `line` (a top-level key) instead of memory.
fn expecting(line: &str) -> String {
    SCALE
        .replace("wave_widths = [8, 32]\n", &format!("wave_widths = [8, 32]\n{line}\n"))
        .replace("[[expect]]\noffset = 64\nu32 = [0, 3, 6, 9]\n", "")
}

fn case(text: &str) -> Case {
    Case::parse(Path::new("conformance/cases/x/scale.toml"), text).expect("the case parses")
}

fn module(case: &Case) -> wave_wbin::Module {
    let a = wave_asm::assemble(&case.source, &case.source_name);
    assert!(!a.has_errors(), "{:?}", a.diagnostics);
    a.module
}

#[test]
fn a_launch_passes_the_memory_address_then_each_value_in_declaration_order() {
    let c = case(SCALE);
    let plan = LaunchPlan::new(&module(&c), &c.dispatch(32)).expect("the dispatch fits");
    assert_eq!(plan.kernel, "scale");
    assert_eq!(plan.grid, [1, 1, 1]);
    assert_eq!(plan.block, [32, 1, 1]);
    assert_eq!(plan.values, vec![64, 3, 1.5f32.to_bits()]);
    assert_eq!(
        plan.args(),
        vec![
            wave_cuda::Arg::Memory,
            wave_cuda::Arg::U32(64),
            wave_cuda::Arg::U32(3),
            wave_cuda::Arg::U32(0x3FC0_0000)
        ]
    );
}

#[test]
fn a_dispatch_that_does_not_fit_a_gpu_is_refused_with_the_reason() {
    let c = case(SCALE);
    let m = module(&c);
    let refused = |d: &Dispatch| match LaunchPlan::new(&m, d) {
        Err(RunError::Dispatch(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(refused(&c.dispatch(8)).contains("W = 8 runs only on the emulator"));
    let mut d = c.dispatch(32);
    d.args.retain(|(n, _)| n != "k");
    assert_eq!(refused(&d), "missing argument for parameter `k` (u32)");
    let mut d = c.dispatch(32);
    d.args.push(("z".into(), 1));
    assert_eq!(refused(&d), "kernel `scale` has no parameter `z`");
    let mut d = c.dispatch(32);
    d.kernel = Some("other".into());
    assert_eq!(refused(&d), "no kernel named `other`");
    let mut d = c.dispatch(32);
    d.grid = [0, 1, 1];
    assert!(refused(&d).contains("at least 1"));
}

#[test]
fn devices_are_named_emulator_cuda_or_cuda_n() {
    assert_eq!("emulator".parse(), Ok(DeviceSpec::Emulator));
    assert_eq!("cuda".parse(), Ok(DeviceSpec::Cuda(0)));
    assert_eq!("cuda:2".parse(), Ok(DeviceSpec::Cuda(2)));
    assert!("metal".parse::<DeviceSpec>().unwrap_err().contains("expected emulator, cuda"));
    assert!("cuda:x".parse::<DeviceSpec>().is_err());
    assert_eq!(DeviceSpec::Cuda(1).to_string(), "cuda:1");
    assert_eq!("all".parse(), Ok(Levels::All));
    assert_eq!("O3".parse(), Ok(Levels::One(wave_kernel::opt::Level::O3)));
    assert!("4".parse::<Levels>().is_err());
}

#[test]
fn the_not_run_rules() {
    // Runs: memory expectations at W = 32.
    assert_eq!(gpu_not_run(&case(SCALE), Some("trap;")), None);
    // A diagnostic: nothing to run.
    let error = expecting("expect_error = \"E0102\"");
    assert!(gpu_not_run(&case(&error), None).unwrap().contains("expects diagnostic E0102"));
    // A trap of the emulator's: run only where the PTX traps on purpose.
    let trap = expecting("expect_trap = \"device memory out of bounds\"");
    let why = gpu_not_run(&case(&trap), Some("    st.global.u32 [%a0], %r3;")).unwrap();
    assert!(why.contains("undefined behaviour on a GPU (spec 9.3)"), "{why}");
    assert_eq!(gpu_not_run(&case(&trap), Some("    trap;")), None);
    // Not at W = 32.
    let narrow = SCALE.replace("wave_widths = [8, 32]", "wave_widths = [8, 16]");
    assert!(gpu_not_run(&case(&narrow), None).unwrap().contains("W = 32"));
    // Implementation-defined results, by name.
    let unaligned =
        Case::parse(Path::new("conformance/cases/memory/unaligned_device_load.toml"), SCALE)
            .expect("the case parses");
    assert!(gpu_not_run(&unaligned, None).unwrap().contains("implementation-defined (spec 9.2)"));
}

#[test]
fn the_implementation_defined_cases_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases");
    let names: Vec<String> = wave_conformance::collect(&[root])
        .expect("the suite is there")
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    for (name, _) in cases::IMPLEMENTATION_DEFINED {
        assert!(names.iter().any(|n| n == name), "no case named {name}");
    }
}

fn block(elem: Elem, bytes: Vec<u8>) -> Block {
    Block { offset: 0, elem, bytes, wave_width: None, ulps: 0, within: 0.0, nan: Vec::new() }
}

#[test]
fn a_nan_payload_differs_only_in_integer_views_of_nans() {
    let canonical = 0x7FC0_0000u32.to_le_bytes().to_vec();
    let nvidia = 0x7FFF_FFFFu32.to_le_bytes().to_vec();
    assert!(compare_on_gpu(&block(Elem::U32, canonical.clone()), &nvidia).is_ok());
    // Not a NaN on one side: a real difference.
    assert!(compare_on_gpu(&block(Elem::U32, canonical), &1u32.to_le_bytes()).is_err());
    // f16 halves of a word, one differing.
    let want = [0x00, 0x7E, 0x34, 0x12];
    let got = [0xFF, 0x7F, 0x34, 0x12];
    assert!(compare_on_gpu(&block(Elem::U32, want.to_vec()), &got).is_ok());
    let got = [0xFF, 0x7F, 0x35, 0x12];
    assert!(compare_on_gpu(&block(Elem::U32, want.to_vec()), &got).is_err());
    // A u64 f64 NaN.
    let want = 0x7FF8_0000_0000_0000u64.to_le_bytes();
    let got = 0x7FFF_FFFF_FFFF_FFFFu64.to_le_bytes();
    assert!(compare_on_gpu(&block(Elem::U64, want.to_vec()), &got).is_ok());
    assert!(same_but_nan_payload(&[1, 2], &[1, 2]));
    // A float block keeps the emulator's rule: a NaN where none is expected fails.
    let one = 1.0f32.to_le_bytes().to_vec();
    assert!(compare_on_gpu(&block(Elem::F32, one), &nvidia).is_err());
}

#[test]
fn the_emulator_runs_a_folder_of_cases_at_every_level() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/kernels/python");
    let mut runner = cases::Runner::Emulator;
    let one = cases::run_paths(std::slice::from_ref(&root), &mut runner, Levels::Case, 2)
        .expect("the folder is there");
    let all = cases::run_paths(&[root], &mut runner, Levels::All, 1).expect("the folder is there");
    assert!(one.failures.is_empty() && all.failures.is_empty(), "{:?}", all.failures);
    assert!(one.passed >= 8);
    assert_eq!(all.passed, 4 * one.passed, "every case is a kernel source, run at 4 levels");
    assert!(all.not_run.is_empty());
}

#[test]
fn without_a_gpu_opening_one_names_what_is_missing() {
    match (wave_cuda::gpus(), Gpu::open(0).map(|_| ())) {
        (Err(listed), Err(opened)) => {
            assert_eq!(listed, opened);
            assert!(!opened.to_string().contains('\n'));
        }
        (Ok(gpus), Err(GpuError::NoGpu(_))) => assert!(gpus.is_empty()),
        (Ok(gpus), Ok(_)) => assert!(!gpus.is_empty()),
        (listed, opened) => panic!("devices {listed:?} but open gave {:?}", opened.err()),
    }
    match Gpu::open(1000).map(|_| ()) {
        Err(
            GpuError::NoSuchGpu { ordinal: 1000, .. } | GpuError::NoDriver | GpuError::NoGpu(_),
        ) => {}
        other => panic!("cuda:1000 opened: {:?}", other.err()),
    }
}

/// Needs a CUDA GPU: a case passes, and a PTX `trap` is a fault after which the GPU refuses to
/// run more in this process.
#[test]
#[allow(clippy::print_stderr, reason = "says plainly that the test did not run")]
fn gpu_runs_a_case_and_a_trap() {
    let c = case(SCALE);
    let trapping = case(
        &expecting("expect_trap = \"local memory out of bounds\"")
            .replace("    halt\n", "    local_store.u32 [r4], r3\n    halt\n"),
    );
    assert_eq!(c.run(), Ok(()));
    assert_eq!(trapping.run(), Ok(()), "the emulator traps where the PTX does");
    let mut gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("skipped: gpu_runs_a_case_and_a_trap needs a CUDA GPU ({e})");
            return;
        }
    };
    assert_eq!(cases::run_on_gpu(&c, &mut gpu, Duration::from_secs(20)), Verdict::Pass);
    assert_eq!(gpu.gone(), None);
    assert_eq!(cases::run_on_gpu(&trapping, &mut gpu, Duration::from_secs(20)), Verdict::Pass);
    // A fault spoils the process's use of the GPU: later runs say so instead of running.
    assert!(gpu.gone().is_some());
    match cases::run_on_gpu(&c, &mut gpu, Duration::from_secs(20)) {
        Verdict::Fail(why) => assert!(why.contains("can run nothing more"), "{why}"),
        other => panic!("ran after a fault: {other:?}"),
    }
}

/// A supervisor whose workers are `sh -c SCRIPT`.
fn fake_workers(script: &'static str) -> workers::GpuWorkers {
    workers::GpuWorkers::new(
        move || {
            let mut c = std::process::Command::new("sh");
            c.args(["-c", script]);
            c
        },
        Duration::from_millis(1),
    )
    .with_grace(Duration::from_millis(500))
}

#[test]
fn the_supervisor_survives_workers_that_die_hang_or_leave() {
    let path = Path::new("conformance/cases/x/scale.toml");
    // Answers, then dies during the next case.
    let mut w = fake_workers("read l; echo P; read l; exit 3");
    assert_eq!(w.run(path, None), Verdict::Pass);
    match w.run(path, None) {
        Verdict::Fail(why) => {
            assert!(why.starts_with("the GPU worker died during the case"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // A new worker takes the next case.
    assert_eq!(w.run(path, Some(wave_kernel::opt::Level::O1)), Verdict::Pass);
    // Hangs: stopped after the timeout and the grace.
    let mut w = fake_workers("read l; sleep 30");
    match w.run(path, None) {
        Verdict::Fail(why) => assert!(why.contains("did not finish within"), "{why}"),
        other => panic!("{other:?}"),
    }
    // Leaves after its answer (`!`): the next case gets a fresh worker, not a dead one.
    let mut w = fake_workers("read l; printf 'F!\\tthe kernel faulted\\n'");
    for _ in 0..2 {
        assert_eq!(w.run(path, None), Verdict::Fail("the kernel faulted".into()));
    }
    let mut w = fake_workers("read l; printf 'N\\tnot on a GPU\\n'; read l; echo P");
    assert_eq!(w.run(path, None), Verdict::NotRun("not on a GPU".into()));
    assert_eq!(w.run(path, None), Verdict::Pass);
    // Cannot open its GPU.
    let mut w = fake_workers("printf 'E\\tno CUDA GPU\\n'");
    assert_eq!(
        w.run(path, None),
        Verdict::Fail("the GPU worker could not start: no CUDA GPU".into())
    );
    // Cannot be started at all.
    let mut w = workers::GpuWorkers::new(
        || std::process::Command::new("/nonexistent/wave"),
        Duration::from_secs(1),
    );
    match w.run(path, None) {
        Verdict::Fail(why) => assert!(why.starts_with("cannot start a GPU worker"), "{why}"),
        other => panic!("{other:?}"),
    }
}

use std::sync::Arc;

use super::cache::key;
use super::program::compile_cached_in;
use super::*;

const ADD: &str = "import wave\n\n@wave.kernel(workgroup=64)\ndef add(a: f32[:], b: f32[:], c: f32[:], n: u32):\n    i = wave.global_id()\n    if i < n:\n        c[i] = a[i] + b[i]\n";

fn compile(text: &str, file: &str) -> Result<Arc<Program>, Error> {
    Program::compile(Source::Kernel { text, language: Language::Python }, file, &Options::default())
}

#[test]
fn a_python_kernel_runs_on_buffers_by_position_and_by_name() {
    let program = compile(ADD, "add.py").unwrap();
    let device = Device::emulator();
    let n = 100u32;
    let a = device.buffer_from(&(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let b = device.buffer_from(&vec![0.5f32; n as usize]).unwrap();
    let c = device.buffer::<f32>(n as usize).unwrap();
    let launch = Launch::grid([2, 1, 1]);
    let ran = device
        .launch(
            &program,
            "add",
            &launch,
            &mut [Arg::Buffer(&a), Arg::Buffer(&b), Arg::Buffer(&c), Arg::U32(n)],
        )
        .unwrap();
    assert!(ran.stats.instructions > 0);
    let want: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    assert_eq!(c.read::<f32>().unwrap(), want);
    // By name, in any order, into host memory; the only kernel when none is named.
    let mut out = vec![0u8; n as usize * 4];
    device
        .launch_named(
            &program,
            "",
            &launch,
            vec![
                ("n", Arg::U32(n)),
                ("c", Arg::Host(&mut out)),
                ("b", Arg::Buffer(&a)),
                ("a", Arg::Buffer(&a)),
            ],
        )
        .unwrap();
    let doubled: Vec<f32> = out.chunks_exact(4).map(f32::get).collect();
    assert_eq!(doubled, (0..n).map(|i| 2.0 * i as f32).collect::<Vec<_>>());
}

#[test]
fn a_buffer_passed_twice_is_one_memory() {
    // `c` is `a`: the kernel reads and writes the same elements.
    let program = compile(ADD, "alias.py").unwrap();
    let device = Device::emulator();
    let a = device.buffer_from(&[1.0f32, 2.0, 3.0]).unwrap();
    let b = device.buffer_from(&[10.0f32, 20.0, 30.0]).unwrap();
    device
        .launch(
            &program,
            "add",
            &Launch::grid([1, 1, 1]),
            &mut [Arg::Buffer(&a), Arg::Buffer(&b), Arg::Buffer(&a), Arg::U32(3)],
        )
        .unwrap();
    assert_eq!(a.read::<f32>().unwrap(), [11.0, 22.0, 33.0]);
    // Host memory passed for two parameters: `Same(0)`.
    let mut host: Vec<u8> = [1.0f32, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    device
        .launch(
            &program,
            "add",
            &Launch::grid([1, 1, 1]),
            &mut [Arg::Host(&mut host), Arg::Buffer(&b), Arg::Same(0), Arg::U32(3)],
        )
        .unwrap();
    let got: Vec<f32> = host.chunks_exact(4).map(f32::get).collect();
    assert_eq!(got, [11.0, 22.0, 33.0]);
    let e = device
        .launch(
            &program,
            "add",
            &Launch::grid([1, 1, 1]),
            &mut [Arg::Same(1), Arg::Buffer(&b), Arg::Buffer(&b), Arg::U32(3)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("names no earlier buffer argument"), "{e}");
    // Read-only memory cannot stand for a parameter that may be written.
    let x = [0u8; 12];
    let e = device
        .launch(
            &program,
            "add",
            &Launch::grid([1, 1, 1]),
            &mut [Arg::HostRead(&x), Arg::Buffer(&b), Arg::Same(0), Arg::U32(3)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("that may be written"), "{e}");
}

#[test]
fn parameters_say_their_types_and_which_buffers_are_written() {
    let text = "import wave\n@wave.kernel(workgroup=32)\ndef k(x: f32[:], h: u32[:], y: f32[:], s: i32, n: u32):\n    i = wave.global_id()\n    if i < n:\n        y[i] = x[i]\n        wave.atomic_add(h, 0, 1)\n";
    let program = compile(text, "k.py").unwrap();
    let k = program.kernel("k").unwrap();
    let kinds: Vec<ParamKind> = k.params.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ParamKind::Buffer { elem: Some(Elem::F32), written: false },
            ParamKind::Buffer { elem: Some(Elem::U32), written: true },
            ParamKind::Buffer { elem: Some(Elem::F32), written: true },
            ParamKind::Scalar(Elem::I32),
            ParamKind::Scalar(Elem::U32),
        ]
    );
    assert_eq!(k.signature(), "k(x: f32[:], h: u32[:], y: f32[:], s: i32, n: u32)");
    assert_eq!(k.workgroup_size, Some([32, 1, 1]));
    // Read-only host memory is fine for `x`, not for `y`.
    let device = Device::emulator();
    let x = [0u8; 16];
    let mut h = [0u8; 4];
    let mut y = [0u8; 16];
    let launch = Launch::grid([1, 1, 1]);
    device
        .launch(
            &program,
            "k",
            &launch,
            &mut [
                Arg::HostRead(&x),
                Arg::Host(&mut h),
                Arg::Host(&mut y),
                Arg::I32(-1),
                Arg::U32(4),
            ],
        )
        .unwrap();
    assert_eq!(u32::from_le_bytes(h), 4);
    let e = device
        .launch(
            &program,
            "k",
            &launch,
            &mut [
                Arg::HostRead(&x),
                Arg::Host(&mut h),
                Arg::HostRead(&x),
                Arg::I32(-1),
                Arg::U32(4),
            ],
        )
        .unwrap_err();
    assert!(e.to_string().contains("`y: f32[:]` of kernel `k` may be written"), "{e}");
}

#[test]
fn wrong_arguments_are_errors_that_name_the_parameter() {
    let program = compile(ADD, "args.py").unwrap();
    let device = Device::emulator();
    let a = device.buffer_from(&[1.0f32]).unwrap();
    let ints = device.buffer_from(&[1u32]).unwrap();
    let launch = Launch::grid([1, 1, 1]);
    let err = |args: &mut [Arg<'_>]| match device.launch(&program, "add", &launch, args) {
        Err(Error::Argument(m)) => m,
        other => panic!("{other:?}"),
    };
    let m = err(&mut [Arg::Buffer(&a), Arg::Buffer(&a), Arg::U32(1)]);
    assert_eq!(m, "kernel add(a: f32[:], b: f32[:], c: f32[:], n: u32) takes 4 arguments, 3 given");
    let m = err(&mut [Arg::Buffer(&a), Arg::Buffer(&ints), Arg::Buffer(&a), Arg::U32(1)]);
    assert!(m.contains("`b: f32[:]`") && m.contains("holds u32"), "{m}");
    let m = err(&mut [Arg::Buffer(&a), Arg::Buffer(&a), Arg::Buffer(&a), Arg::F32(1.0)]);
    assert!(m.contains("`n: u32`") && m.contains("an f32 was given"), "{m}");
    let m = err(&mut [Arg::U32(0), Arg::Buffer(&a), Arg::Buffer(&a), Arg::U32(1)]);
    assert!(m.contains("`a: f32[:]`") && m.contains("takes a buffer"), "{m}");
    let m = err(&mut [Arg::Buffer(&a), Arg::Buffer(&a), Arg::Buffer(&a), Arg::I32(-1)]);
    assert!(m.contains("`n: u32`"), "{m}");
    let big = Launch::grid([1, 1, 1]).workgroup([128, 1, 1]);
    match device.launch(
        &program,
        "add",
        &big,
        &mut [Arg::Buffer(&a), Arg::Buffer(&a), Arg::Buffer(&a), Arg::U32(1)],
    ) {
        Err(Error::Argument(m)) => {
            assert!(m.contains("declares workgroups of (64, 1, 1) threads"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    // A buffer too large to address is an error, not an allocation failure.
    match device.buffer::<f64>(usize::MAX / 4) {
        Err(Error::Argument(m)) => assert!(m.contains("addressed with 32 bits"), "{m}"),
        other => panic!("{other:?}"),
    }
    match device.launch(&program, "sub", &launch, &mut []) {
        Err(Error::Argument(m)) => assert!(m.contains("no kernel named `sub`"), "{m}"),
        other => panic!("{other:?}"),
    }
    match device.launch_named(&program, "add", &launch, vec![("m", Arg::U32(1))]) {
        Err(Error::Argument(m)) => assert!(m.contains("no parameter `m`"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_compile_error_carries_the_rendered_diagnostic_and_its_place() {
    let text = "import wave\n@wave.kernel(workgroup=64)\ndef k(a: f32[:], n: u32):\n    i = wave.global_id()\n    a[i] = a[i] + i\n";
    let Err(Error::Compile(e)) = compile(text, "bad.py") else { panic!() };
    assert!(e.rendered.contains("error[E0401]"), "{}", e.rendered);
    assert!(e.rendered.contains("bad.py:5:12"), "{}", e.rendered);
    assert!(e.rendered.contains("a[i] = a[i] + i"), "{}", e.rendered);
    let (code, _, line, _) = e.first().unwrap();
    assert_eq!((code, line), ("E0401", 5));
    // An error is not cached: the fixed text compiles.
    assert!(compile(&text.replace("+ i", "+ f32(i)"), "bad.py").is_ok());
}

#[test]
fn a_trap_names_the_source_line_wave_and_lane() {
    let text = "import wave\n@wave.kernel(workgroup=64)\ndef k(a: f32[:], n: u32):\n    i = wave.global_id()\n    a[i + n] = 1.0\n";
    let program = compile(text, "trap.py").unwrap();
    let device = Device::emulator();
    let a = device.buffer::<f32>(64).unwrap();
    let e = device
        .launch(&program, "k", &Launch::grid([1, 1, 1]), &mut [Arg::Buffer(&a), Arg::U32(40)])
        .unwrap_err();
    let Error::Trap(t) = &e else { panic!("{e:?}") };
    assert!(t.trap.message.starts_with("device memory out of bounds"), "{e}");
    assert_eq!(t.trap.line, Some(5));
    assert_eq!(t.source_line.as_deref(), Some("    a[i + n] = 1.0"));
    assert!(t.trap.wave.is_some() && t.trap.lane.is_some());
    assert!(e.to_string().contains("--> trap.py:5"), "{e}");
    assert!(e.to_string().contains("in kernel `k`, workgroup (0, 0, 0), wave"), "{e}");
}

#[test]
fn an_endless_kernel_stops_at_the_budget_or_when_interrupted() {
    let text = "import wave\n@wave.kernel(workgroup=32)\ndef spin(a: u32[:]):\n    i: u32 = 0\n    while a[0] == 0:\n        i = i + 1\n    a[1] = i\n";
    let program = compile(text, "spin.py").unwrap();
    let device = Device::emulator();
    let a = device.buffer::<u32>(2).unwrap();
    let mut launch = Launch::grid([1, 1, 1]);
    launch.max_steps = 10_000;
    let e = device.launch(&program, "spin", &launch, &mut [Arg::Buffer(&a)]).unwrap_err();
    assert!(e.to_string().contains("instruction budget exceeded"), "{e}");
    launch.max_steps = u64::MAX;
    launch.interrupt = Some(Interrupt::new(|| true));
    let e = device.launch(&program, "spin", &launch, &mut [Arg::Buffer(&a)]).unwrap_err();
    assert!(matches!(e, Error::Interrupted(_)), "{e:?}");
}

#[test]
fn a_second_compile_of_the_same_source_is_the_same_program() {
    let a = compile(ADD, "same.py").unwrap();
    let b = compile(ADD, "same.py").unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    // Other options, another program.
    let o3 = Program::compile(
        Source::Kernel { text: ADD, language: Language::Python },
        "same.py",
        &Options { opt_level: 3, ..Options::default() },
    )
    .unwrap();
    assert!(!Arc::ptr_eq(&a, &o3));
}

#[test]
fn the_disk_cache_gives_back_the_program_it_was_given() {
    let dir = std::env::temp_dir().join(format!("wave-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let text = "import wave\n@wave.kernel(workgroup=(8, 2))\ndef k(x: f16[:], y: f64[:], s: f32):\n    i = wave.global_id()\n    y[i] = f64(f32(x[i]) * s)\n";
    let source = Source::Kernel { text, language: Language::Python };
    let options = Options::default();
    let id = key(&source, "disk.py", &options);
    let first = compile_cached_in(Some(&dir), id, source, "disk.py", &options).unwrap();
    assert!(!first.loaded_from_disk());
    let second = compile_cached_in(Some(&dir), id, source, "disk.py", &options).unwrap();
    assert!(second.loaded_from_disk());
    assert_eq!(second.kernels(), first.kernels());
    assert_eq!(second.module(), first.module());
    // A damaged file is a miss, and is written again.
    let path = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    std::fs::write(&path, b"wave-cache 2\nkernel\n\nxx").unwrap();
    let third = compile_cached_in(Some(&dir), id, source, "disk.py", &options).unwrap();
    assert!(!third.loaded_from_disk());
    assert!(
        compile_cached_in(Some(&dir), id, source, "disk.py", &options).unwrap().loaded_from_disk()
    );
    // Warnings come back from the disk too.
    let asm = ".kernel k\n.workgroup_size 1\n    fmul r1, r1, 0.1\n.end\n";
    let source = Source::Assembly(asm);
    let id = key(&source, "w.wave", &options);
    let fresh = compile_cached_in(Some(&dir), id, source, "w.wave", &options).unwrap();
    let again = compile_cached_in(Some(&dir), id, source, "w.wave", &options).unwrap();
    assert!(again.loaded_from_disk());
    assert_eq!(fresh.warnings().len(), 1);
    assert!(fresh.rendered_warnings().contains("warning[W0106]"));
    assert_eq!(again.rendered_warnings(), fresh.rendered_warnings());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn assembly_and_wbin_load_with_untyped_pointers() {
    let text = ".kernel fill\n.param out: ptr\n.param v: u32\n.workgroup_size 4\n    mov_special r2, sr_thread_id_x\n    shift.shl r2, r2, 2\n    iadd r2, r0, r2\n    device_store.u32 r2, r1\n.end\n";
    let program =
        Program::compile(Source::Assembly(text), "fill.wave", &Options::default()).unwrap();
    let wbin = wave_wbin::write(program.module());
    let loaded = Program::compile(Source::Wbin(&wbin), "fill.wbin", &Options::default()).unwrap();
    for p in [&program, &loaded] {
        let k = p.kernel("").unwrap();
        assert_eq!(k.signature(), "fill(out: ptr, v: u32)");
        let device = Device::emulator();
        let out = device.buffer::<u32>(4).unwrap();
        device
            .launch(p, "fill", &Launch::grid([1, 1, 1]), &mut [Arg::Buffer(&out), Arg::U32(7)])
            .unwrap();
        assert_eq!(out.read::<u32>().unwrap(), [7, 7, 7, 7]);
    }
    // Warnings travel with the program.
    let warned =
        text.replace("device_store.u32 r2, r1", "fmul r1, r1, 0.1\n    device_store.u32 r2, r1");
    let p = Program::compile(Source::Assembly(&warned), "warn.wave", &Options::default()).unwrap();
    assert!(p.rendered_warnings().contains("warning[W0106]"), "{}", p.rendered_warnings());
    assert!(program.rendered_warnings().is_empty());
    match Program::compile(Source::Wbin(b"not a wbin"), "x.wbin", &Options::default()) {
        Err(Error::Compile(e)) => {
            assert!(e.rendered.contains("not a valid .wbin"), "{}", e.rendered)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_f16_parameter_takes_an_f32_and_u8_buffers_hold_bytes() {
    let text = "import wave\n\n@wave.kernel(workgroup=32)\ndef k(a: u8[:], out: u16[:], h: f16):\n    i = wave.global_id()\n    out[i] = u32(f32(h) * 1000.0) + a[i]\n";
    let program = compile(text, "k.py").unwrap();
    let kernel = &program.kernels()[0];
    assert!(kernel.params[2].kind == ParamKind::Scalar(Elem::F16), "{:?}", kernel.params);
    assert!(
        kernel.params[0].kind == ParamKind::Buffer { elem: Some(Elem::U8), written: false },
        "{:?}",
        kernel.params
    );
    let device = Device::emulator();
    let a = device.buffer_from(&(0..32u8).collect::<Vec<_>>()).unwrap();
    let out = device.buffer::<u16>(32).unwrap();
    device
        .launch(
            &program,
            "k",
            &Launch::grid([1, 1, 1]),
            &mut [Arg::Buffer(&a), Arg::Buffer(&out), Arg::F32(1.3)],
        )
        .unwrap();
    // 1.3 rounds to the f16 1.2998046875.
    let want: Vec<u16> = (0..32u16).map(|i| 1299 + i).collect();
    assert_eq!(out.read::<u16>().unwrap(), want);
}

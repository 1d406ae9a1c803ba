//! Incremental behaviour, in the style of rust-analyzer's tests: which queries run again after
//! an edit.

use std::sync::{Arc, Mutex};

use salsa::Setter;

use crate::*;

const THREE: &str = "; three kernels\n.kernel a\n.param out: ptr\n    mov_imm r1, 1\n    device_store.u32 out, r1\n.end\n\n.kernel b\n.param out: ptr\n    mov_imm r1, 2\n    device_store.u32 out, r1\n.end\n\n.kernel c\n.param out: ptr\n    mov_imm r1, 3\n    device_store.u32 out, r1\n.end\n";

fn executed(log: &Arc<Mutex<Vec<String>>>, query: &str) -> usize {
    let mut log = log.lock().expect("log");
    let n = log.iter().filter(|e| e.starts_with(query)).count();
    log.retain(|e| !e.starts_with(query));
    n
}

#[test]
fn an_edit_inside_one_kernel_checks_only_that_kernel() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut db = Database::with_log(log.clone());
    let file = SourceFile::new(&db, "three.wave".into(), THREE.into(), 1);
    assert!(file_diagnostics(&db, file).is_empty());
    assert_eq!(executed(&log, "check_kernel"), 3, "the first run checks every kernel");
    assert_eq!(executed(&log, "check_outside"), 1, "and the comment outside them");
    // Change an immediate in kernel b, and add a mistake to it.
    let edited = THREE.replace("mov_imm r1, 2", "mov_imm r1, 22\n    iad r2, r1, r1");
    file.set_text(&mut db).to(edited);
    file.set_version(&mut db).to(2);
    let d = file_diagnostics(&db, file).clone();
    assert_eq!(executed(&log, "check_kernel"), 1, "only kernel b is checked again");
    assert_eq!(executed(&log, "check_outside"), 0, "the text outside kernels did not change");
    assert_eq!(d.len(), 1, "{d:?}");
    let at = THREE
        .replace("mov_imm r1, 2", "mov_imm r1, 22\n    iad r2, r1, r1")
        .find("iad r2")
        .expect("edit");
    assert_eq!(d[0].span.start, at, "the diagnostic is placed in the file");
    // Inserting lines above every kernel moves them all but changes no kernel's text.
    let moved = format!("; a new comment\n\n{}", file.text(&db).clone());
    file.set_text(&mut db).to(moved);
    let d2 = file_diagnostics(&db, file);
    assert_eq!(executed(&log, "check_kernel"), 0, "moved kernels are not checked again");
    assert_eq!(d2[0].span.start, d[0].span.start + "; a new comment\n\n".len());
}

#[test]
fn file_diagnostics_equal_the_assembler_s_for_every_conformance_program() {
    let db = Database::default();
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../compiler/asm/tests/data");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("data dir").flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "wave") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let file = SourceFile::new(&db, path.display().to_string(), text.clone(), 1);
        let whole = wave_asm::assemble(&text, "x.wave").diagnostics;
        let mut whole: Vec<(Range<usize>, &str)> =
            whole.iter().map(|d| (d.span.clone(), d.code)).collect();
        whole.sort_by_key(|(s, _)| (s.start, s.end));
        let ours: Vec<(Range<usize>, &str)> =
            file_diagnostics(&db, file).iter().map(|d| (d.span.clone(), d.code)).collect();
        assert_eq!(ours, whole, "{}", path.display());
        seen += 1;
    }
    assert!(seen > 0);
}

#[test]
fn occupancy_and_preview_follow_the_settings() {
    let mut db = Database::default();
    let file = SourceFile::new(&db, "three.wave".into(), THREE.into(), 1);
    let settings = Settings::new(&db, "nvidia".into(), "ptx".into(), 0, false);
    let first = kernels(&db, file).kernels[0].source;
    let hint = occupancy(&db, first, settings).clone().expect("hint");
    assert!(hint.starts_with("R=2 · ") && hint.contains("waves/core"), "{hint}");
    let ptx = backend(&db, first, wave_backends::Target::Ptx).clone().expect("translates");
    assert!(ptx.text.contains(".entry a("), "{}", ptx.text);
    let metal = backend(&db, first, wave_backends::Target::Metal).clone().expect("translates");
    assert!(metal.text.contains("kernel void a("), "{}", metal.text);
    // Registers bind: the hint says how many to free for one more workgroup.
    let heavy = ".kernel k\n.registers 40\n.workgroup_size 256\n    halt\n.end\n";
    let file2 = SourceFile::new(&db, "heavy.wave".into(), heavy.into(), 1);
    let k = kernels(&db, file2).kernels[0].source;
    assert_eq!(
        occupancy(&db, k, settings).as_deref(),
        Some("R=40 · 48 waves/core · limited by registers · free 4 for 56")
    );
    // The wave width setting overrides the profile's.
    settings.set_wave_width(&mut db).to(64);
    let k = kernels(&db, file2).kernels[0].source;
    let wide = occupancy(&db, k, settings).clone().expect("hint");
    assert!(wide.starts_with("R=40 · 24 waves/core"), "{wide}");
    settings.set_target(&mut db).to("no-such-profile".into());
    let first = kernels(&db, file).kernels[0].source;
    assert_eq!(occupancy(&db, first, settings), &None);
}

#[test]
fn previews_of_other_kernels_survive_an_edit() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut db = Database::with_log(log.clone());
    let file = SourceFile::new(&db, "three.wave".into(), THREE.into(), 1);
    for k in &kernels(&db, file).kernels.clone() {
        assert!(backend(&db, k.source, wave_backends::Target::Hip).is_ok());
    }
    assert_eq!(executed(&log, "backend"), 3);
    file.set_text(&mut db).to(THREE.replace("mov_imm r1, 3", "mov_imm r1, 33"));
    for k in &kernels(&db, file).kernels.clone() {
        assert!(backend(&db, k.source, wave_backends::Target::Hip).is_ok());
    }
    assert_eq!(executed(&log, "backend"), 1, "only kernel c is translated again");
}

#[test]
fn text_outside_kernels_is_checked_in_place() {
    let db = Database::default();
    let text = format!("{THREE}stray junk here\n    iadd r1, r1, r1\n");
    let file = SourceFile::new(&db, "x.wave".into(), text.clone(), 1);
    let mut whole: Vec<(Range<usize>, &str)> = wave_asm::assemble(&text, "x.wave")
        .diagnostics
        .iter()
        .map(|d| (d.span.clone(), d.code))
        .collect();
    whole.sort_by_key(|(s, _)| (s.start, s.end));
    let ours: Vec<(Range<usize>, &str)> =
        file_diagnostics(&db, file).iter().map(|d| (d.span.clone(), d.code)).collect();
    assert!(!ours.is_empty());
    assert_eq!(ours, whole);
}

/// Three Python kernels, a helper, and host code.
const KERNELS: &str = "import wave\n\ndef twice(x: f32) -> f32:\n    return x * 2.0\n\n@wave.kernel(workgroup=64)\ndef a(out: f32[:], n: u32):\n    i = wave.global_id(0)\n    if i < n:\n        out[i] = twice(out[i])\n\n@wave.kernel(workgroup=64)\ndef b(out: f32[:], n: u32):\n    i = wave.global_id(0)\n    if i < n:\n        out[i] = out[i] + 1.0\n\n@wave.kernel(workgroup=64)\ndef c(out: u32[:]):\n    out[wave.global_id(0)] = 3\n\nif __name__ == '__main__':\n    print('host code')\n";

#[test]
fn a_program_using_the_python_package_is_checked_like_any_kernel_file() {
    // `import wave_gpu as wave`, `wave_gpu.` names and names imported from the package, with
    // host code around: the same kernels and diagnostics as the `wave.` spelling.
    let text = KERNELS
        .replace("import wave\n", "import numpy as np\nimport wave_gpu as wave\nfrom wave_gpu import f32, u32, global_id\n")
        .replace("@wave.kernel(workgroup=64)\ndef b", "@wave_gpu.kernel(workgroup=64)\ndef b")
        .replace("out[wave.global_id(0)] = 3", "out[global_id(0)] = 3");
    let db = Database::default();
    let file = SourceFile::new(&db, "program.py".into(), text.clone(), 1);
    let build = source_build(&db, file).clone().expect("a kernel source");
    assert!(build.diagnostics.is_empty(), "{:?}", build.diagnostics);
    assert_eq!(build.units.len(), 3);
    let bad = text.replace("out[i] + 1.0", "out[i] + i");
    let file = SourceFile::new(&db, "program.py".into(), bad.clone(), 1);
    let build = source_build(&db, file).clone().expect("a kernel source");
    assert_eq!(build.diagnostics.len(), 1, "{:?}", build.diagnostics);
    assert_eq!(build.diagnostics[0].code, "E0401");
}

#[test]
fn an_edit_inside_one_kernel_of_a_source_compiles_only_that_kernel() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut db = Database::with_log(log.clone());
    let file = SourceFile::new(&db, "k.py".into(), KERNELS.into(), 1);
    let build = source_build(&db, file).clone().expect("a kernel source");
    assert!(build.diagnostics.is_empty(), "{:?}", build.diagnostics);
    assert_eq!(build.units.len(), 3);
    assert_eq!(executed(&log, "build_unit"), 3, "the first run compiles every kernel");
    assert!(executed(&log, "read_chunk") >= 5, "and reads every chunk");
    // A mistake in kernel b.
    let edited = KERNELS.replace("out[i] + 1.0", "out[i] + undefined_name");
    file.set_text(&mut db).to(edited.clone());
    let build = source_build(&db, file).clone().expect("a kernel source");
    assert_eq!(executed(&log, "build_unit"), 1, "only kernel b is compiled again");
    assert_eq!(executed(&log, "read_chunk"), 1, "and only its chunk read again");
    assert_eq!(build.diagnostics.len(), 1, "{:?}", build.diagnostics);
    let at = edited.find("undefined_name").expect("edit");
    assert_eq!(build.diagnostics[0].span, at..at + "undefined_name".len(), "placed in the file");
    assert!(
        build.kernel("a").is_some() && build.kernel("c").is_some() && build.kernel("b").is_none()
    );
    // Host code and lines above: nothing is compiled again, and everything moves.
    let moved = format!("# header\n\n{}\nprint('more host code')\n", edited);
    file.set_text(&mut db).to(moved.clone());
    let build = source_build(&db, file).clone().expect("a kernel source");
    assert_eq!(executed(&log, "build_unit"), 0, "moved kernels are not compiled again");
    let at = moved.find("undefined_name").expect("edit");
    assert_eq!(build.diagnostics[0].span.start, at);
    let a = build.functions.iter().find(|f| f.name == "a").expect("a");
    assert_eq!(&moved[a.name_span.clone()], "a");
    // The helper: only kernel a calls it, and only a is compiled again.
    file.set_text(&mut db).to(moved.replace("x * 2.0", "x * 3.0"));
    let build = source_build(&db, file).clone().expect("a kernel source");
    assert_eq!(executed(&log, "build_unit"), 1);
    assert_eq!(build.units[0].kernels, ["a"]);
    assert_eq!(build.units[0].build.pieces.len(), 2, "kernel a with the helper");
    assert_eq!(build.units[2].build.pieces.len(), 1, "kernel c alone");
}

/// A compile checks for cancellation between its passes, not only when it starts: an edit
/// that supersedes a compile of seconds (a kernel of thousands of lines) stops it at its next
/// pass (salsa unwinds from the check when a write is waiting).
#[test]
fn a_kernel_compile_checks_for_cancellation_between_its_passes() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let checks = Arc::new(AtomicUsize::new(0));
    let executions = Arc::new(AtomicUsize::new(0));
    let (c, e) = (checks.clone(), executions.clone());
    let db = Database {
        storage: salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            match event.kind {
                salsa::EventKind::WillCheckCancellation => c.fetch_add(1, Ordering::Relaxed),
                salsa::EventKind::WillExecute { .. } => e.fetch_add(1, Ordering::Relaxed),
                _ => 0,
            };
        }))),
        outlines: Arc::default(),
    };
    let file = SourceFile::new(&db, "k.py".into(), KERNELS.into(), 1);
    let build = source_build(&db, file).clone().expect("a kernel source");
    assert_eq!(build.units.len(), 3);
    // Three kernels, each checking before every optimisation pass, on top of the checks
    // salsa makes when a query starts.
    let passes = wave_kernel::opt::passes(wave_kernel::opt::Level::O2).len();
    let (checks, executions) = (checks.load(Ordering::Relaxed), executions.load(Ordering::Relaxed));
    assert!(
        checks >= executions + 3 * passes,
        "{checks} cancellation checks for {executions} queries and 3 compiles of {passes} passes"
    );
}

/// Every kernel source of the kernel set (`conformance/kernels`), and each with a mistake in
/// its first kernel: compiled one unit at a time, each kernel's assembly, MIR and line table
/// are the whole file's, and so are the diagnostics.
#[test]
fn kernel_sources_compile_unit_by_unit_as_the_whole_file_does() {
    let db = Database::default();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/kernels");
    let mut seen = 0;
    for lang in ["python", "rust", "cpp", "typescript"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(lang))
            .expect("kernel dir")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e != "toml"))
            .collect();
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).expect("read");
            let broken = text.replacen("(", "(undefined_name + ", 1);
            for (n, text) in [text, broken].into_iter().enumerate() {
                let name = format!("{}#{n}", path.display());
                let file = SourceFile::new(&db, path.display().to_string(), text.clone(), 1);
                let language = source_language(&db, file).expect("a kernel language");
                let build = source_build(&db, file).as_ref().expect("a kernel source");
                // The whole file at once, as `wave compile` does.
                let (hir, mut whole) = wave_kernel::hir(&text, language);
                let functions = wave_kernel::functions(&text, language);
                assert_eq!(build.functions, functions, "{name}");
                let inside = |d: &Diagnostic| {
                    functions
                        .iter()
                        .any(|f| f.span.start <= d.span.start && d.span.end <= f.span.end)
                };
                let compiled = if wave_diag::has_errors(&whole) {
                    None
                } else {
                    let path = path.display().to_string();
                    let options = wave_kernel::Options::default();
                    match wave_kernel::emit::compile_hir(&hir, &text, &path, options) {
                        Ok(out) => Some(out),
                        Err(d) => {
                            whole.extend(d);
                            None
                        }
                    }
                };
                whole.retain(|d| inside(d) && d.code != wave_kernel::front::codes::NO_KERNEL);
                let key = |d: &Diagnostic| (d.span.start, d.span.end, d.code, d.message.clone());
                let mut whole: Vec<_> = whole.iter().map(key).collect();
                whole.sort();
                whole.dedup();
                let ours: Vec<_> = build.diagnostics.iter().map(key).collect();
                assert_eq!(ours, whole, "{name}");
                let Some(out) = compiled else { continue };
                for k in &out.module.kernels {
                    let unit = build.unit_of(&k.name).expect("a unit per kernel");
                    let module = unit.module_in_file(&text, &path.display().to_string());
                    let (_, ours) = module.kernel(&k.name).expect("compiled");
                    let lines = |m: &wave_wbin::Module, k: &wave_wbin::Kernel| {
                        let range = k.code.start..k.code.end;
                        m.lines
                            .iter()
                            .filter(|e| range.contains(&e.offset))
                            .map(|e| (e.offset - k.code.start, e.line, e.column, e.end_line))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(lines(&module, ours), lines(&out.module, k), "{name}: {}", k.name);
                    let code = |m: &wave_wbin::Module, k: &wave_wbin::Kernel| {
                        m.code[k.code.start as usize..k.code.end as usize].to_vec()
                    };
                    assert_eq!(code(&module, ours), code(&out.module, k), "{name}: {}", k.name);
                    assert_eq!(ours.registers, k.registers, "{name}: {}", k.name);
                }
                seen += 1;
            }
        }
    }
    assert!(seen >= 32, "only {seen} files compiled");
}

#[test]
fn a_run_takes_the_editors_build_and_a_debug_session_its_own_level() {
    use wave_kernel::opt::Level;
    let log = Arc::new(Mutex::new(Vec::new()));
    let db = Database::with_log(log.clone());
    let file = SourceFile::new(&db, "k.py".into(), KERNELS.into(), 1);
    assert_eq!(kernel_names(&db, file), ["a", "b", "c"]);
    let _ = source_build(&db, file);
    assert_eq!(executed(&log, "build_unit"), 3);
    // A run (-O2) reuses the editor's build of the kernel's unit.
    let run = run_module(&db, file, "b", Level::O2).expect("b compiles");
    assert_eq!(executed(&log, "build_unit"), 0, "nothing compiled again for a run");
    assert_eq!(run.only.as_deref(), Some("b"));
    assert_eq!(&KERNELS[run.range.clone()][..5], "def b", "the kernel function's span");
    assert!(run.module.kernel("b").is_some());
    assert_eq!(run.module.files, ["k.py"]);
    // Its line table names lines of the file.
    let line = |needle: &str| KERNELS.lines().position(|l| l.contains(needle)).expect("a line");
    let lines: Vec<u32> = run.module.lines.iter().map(|e| e.line).collect();
    assert!(lines.contains(&(line("out[i] = out[i] + 1.0") as u32 + 1)), "{lines:?}");
    // A debug session (-O0) compiles that one unit at its level, once.
    let debug = run_module(&db, file, "b", Level::O0).expect("b compiles");
    assert_eq!(executed(&log, "build_unit"), 1);
    let _ = run_module(&db, file, "b", Level::O0);
    assert_eq!(executed(&log, "build_unit"), 0);
    assert!(debug.module.code.len() >= run.module.code.len(), "-O0 is no shorter");
    let e = run_module(&db, file, "d", Level::O2).expect_err("no kernel d");
    assert_eq!(e, "no kernel `d` in k.py (it has a, b, c)");
    let bad = SourceFile::new(&db, "k.py".into(), KERNELS.replace("out[i] + 1.0", "out[i] + i"), 1);
    let e = run_module(&db, bad, "b", Level::O0).expect_err("b does not compile");
    assert!(e.starts_with("k.py:16:18: error[E0401]: "), "{e}");
    assert!(e.ends_with("(the kernel does not compile)"), "{e}");
}

#[test]
fn an_assembly_kernel_runs_alone_with_its_first_line() {
    let db = Database::default();
    let text = THREE.replace("mov_imm r1, 2", "mov_imx r1, 2");
    let file = SourceFile::new(&db, "x.wave".into(), text, 1);
    assert_eq!(kernel_names(&db, file), ["a", "b", "c"]);
    let c = run_module(&db, file, "c", wave_kernel::opt::Level::O0).expect("c assembles");
    assert_eq!(c.first_line, 14, "`.kernel c` is line 14");
    assert_eq!(c.only, None);
    assert_eq!(c.module.kernels.len(), 1, "a mistake in b does not stop c");
    let e = run_module(&db, file, "b", wave_kernel::opt::Level::O0).expect_err("b has a typo");
    assert!(e.starts_with("x.wave:10:5: error["), "{e}");
    assert!(e.ends_with("(the kernel does not assemble)"), "{e}");
}

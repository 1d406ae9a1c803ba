//! Unit tests of the backends; the conformance goldens live in `backends/tests/`.

use crate::{Options, Target, write_string};

fn module(source: &str) -> wave_wbin::Module {
    let a = wave_asm::assemble(source, "test.wave");
    assert!(!wave_diag::has_errors(&a.diagnostics), "{:?}", a.diagnostics);
    a.module
}

#[test]
fn every_target_translates_a_small_kernel() {
    let m = module(
        ".kernel k\n.param out: ptr\n    mov r1, sr_thread_id_x\n    shl r2, r1, 2\n    iadd r2, r2, out\n    device_store.u32 r2, r1\n.end\n",
    );
    for t in Target::ALL {
        let out = write_string(t, &m, &Options::default()).expect("translates");
        assert!(out.text.contains("device_store.u32"), "{t:?}: the source comment is there");
        assert_eq!(
            out.source_map.lines.len(),
            out.text.lines().count(),
            "{t:?}: one map entry per line"
        );
    }
}

/// Every code of `crate::codes` is documented in docs/diagnostics.md.
#[test]
fn every_code_is_documented() {
    let docs = include_str!("../../docs/diagnostics.md");
    let source = include_str!("lib.rs");
    let codes: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const ")?.split('"').nth(1))
        .collect();
    assert!(codes.len() >= 8, "{codes:?}");
    for code in codes {
        assert!(
            docs.contains(&format!("## {code}:")),
            "{code} is not documented in docs/diagnostics.md"
        );
    }
}

#[test]
fn refusals_name_the_instruction() {
    let m = module(
        ".kernel k\n.param out: ptr\n    mov_imm r2, 0\n    mov_imm r3, 0x3FF00000\n    dadd r4, r2, r2\n    device_store.u32 out, r4\n.end\n",
    );
    let e = write_string(Target::Metal, &m, &Options::default()).expect_err("Metal has no f64");
    let p = &e.problems[0];
    assert_eq!(p.code, crate::codes::UNSUPPORTED);
    let dadd = m
        .instructions(&m.kernels[0])
        .find(|(_, i)| i.info().is_some_and(|o| o.mnemonic == "dadd"))
        .map(|(o, _)| o);
    assert_eq!(p.offset, dadd, "{p}");
    // The other targets translate it.
    for t in [Target::Ptx, Target::Hip, Target::Sycl] {
        write_string(t, &m, &Options::default()).expect("translates");
    }
}

#[test]
fn recursion_stays_recursion_where_the_target_has_it() {
    let source = ".kernel k\n.param out: ptr\n    call f\n    halt\nf:\n    icmp.lt p0, r1, 3\n    if p0\n        iadd r1, r1, 1\n        call f\n    endif\n    return\n.end\n";
    let m = module(source);
    let insts: Vec<(u32, wave_isa::Inst)> = m.instructions(&m.kernels[0]).collect();
    let inner_call = insts
        .iter()
        .filter(|(_, i)| i.info().is_some_and(|o| o.mnemonic == "call"))
        .nth(1)
        .map(|(o, _)| *o);
    // SYCL and Metal forbid recursion in device code: refused at the recursive call.
    for t in [Target::Sycl, Target::Metal] {
        let e = write_string(t, &m, &Options::default()).expect_err("recursive");
        assert_eq!(e.problems[0].code, crate::codes::RECURSION);
        assert_eq!(e.problems[0].offset, inner_call);
    }
    // PTX and HIP keep the function as a function that calls itself.
    let ptx = write_string(Target::Ptx, &m, &Options::default()).expect("PTX has recursion").text;
    assert!(ptx.contains(".func (.param .align 4 .b8 wave_out["), "{ptx}");
    assert_eq!(ptx.matches("call (wave_call_out), wave_fn_k_").count(), 2, "{ptx}");
    let hip = write_string(Target::Hip, &m, &Options::default()).expect("HIP has recursion").text;
    assert!(
        hip.contains("__device__ static void wave_fn_k_") && hip.contains("if (halted) return;"),
        "{hip}"
    );
    // With a wave operation the kernel runs wave-uniform, where calls are inlined: refused.
    let wave = module(&source.replace("    return\n", "    wave_reduce.add r2, r1\n    return\n"));
    let e =
        write_string(Target::Ptx, &wave, &Options::default()).expect_err("wave-uniform recursion");
    assert_eq!(e.problems[0].code, crate::codes::RECURSION);
}

#[test]
fn wave_operations_switch_to_wave_uniform_control_flow() {
    let plain = module(
        ".kernel k\n.param out: ptr\n    mov r1, sr_lane_id\n    icmp.lt p0, r1, 4\n    if p0\n        device_store.u32 out, r1\n    endif\n.end\n",
    );
    let wave = module(
        ".kernel k\n.param out: ptr\n    mov r1, sr_lane_id\n    icmp.lt p0, r1, 4\n    if p0\n        wave_reduce.add r2, r1\n        device_store.u32 out, r2\n    endif\n.end\n",
    );
    let p = write_string(Target::Ptx, &plain, &Options::default()).expect("ok").text;
    let w = write_string(Target::Ptx, &wave, &Options::default()).expect("ok").text;
    assert!(!p.contains("vote.sync"), "per-thread code votes nowhere");
    assert!(w.contains("vote.sync.any.pred"), "the if runs when any lane takes it");
    assert!(
        !w.contains("0xFFFFFFFF, %live") && w.contains("%live;"),
        "collectives use the live lanes"
    );
    let h = write_string(Target::Hip, &wave, &Options::default()).expect("ok").text;
    assert!(h.contains("if (__any(act))") && h.contains("wave_part ? r1 : 0u"), "{h}");
}

/// A `.wbin` nesting `if` 20,000 deep (the assembler refuses past 1,024, so it is built from
/// the encoded instructions): every target refuses it with a located error instead of
/// following the nesting down and overflowing the stack (issue 19).
#[test]
fn control_flow_nested_past_the_deepest_target_is_refused() {
    let m = module(
        ".kernel k\n.param out: ptr\n    mov r1, sr_lane_id\n    icmp.gt p0, r1, 3\n    if p0\n    iadd r1, r1, 1\n    endif\n    device_store.u32 out, r1\n.end\n",
    );
    // The instructions, by offset: split the code at `if`, `iadd`, `endif`.
    let mut starts = Vec::new();
    let mut at = 0usize;
    while at < m.code.len() {
        let (_, size) = wave_isa::Inst::decode(&m.code[at..]).expect("decodes");
        starts.push(at);
        at += size;
    }
    starts.push(m.code.len());
    let piece = |k: usize| &m.code[starts[k]..starts[k + 1]];
    let (prelude, if_, body, endif) = (&m.code[..starts[2]], piece(2), piece(3), piece(4));
    let rest = &m.code[starts[5]..];
    let depth = 20_000;
    let mut code = prelude.to_vec();
    code.extend(if_.repeat(depth));
    code.extend_from_slice(body);
    code.extend(endif.repeat(depth));
    code.extend_from_slice(rest);
    let mut deep = m.clone();
    deep.kernels[0].code = 0..code.len() as u32;
    deep.code = code;
    deep.lines.clear();
    for t in Target::ALL {
        let e = write_string(t, &deep, &Options::default()).expect_err("refused");
        let text = e.to_string();
        assert!(text.contains("nested deeper than 1024 levels"), "{t:?}: {text}");
        let first = e.problems.iter().filter(|p| p.message.contains("nested deeper")).count();
        assert_eq!(first, 1, "{t:?}: one problem, where the 1,025th level opens");
    }
}

/// An instruction is `Kind::Control` exactly when its row says control goes somewhere other
/// than the next instruction, so `structure` and `lower` (which ask the `Flow`) and the
/// writers (which ask the `Kind`) agree on every instruction.
#[test]
fn control_kind_agrees_with_the_flow_of_every_row() {
    use crate::kind::Kind;
    for row in wave_isa::OPCODES {
        let mut seed = 0u32;
        let inst = wave_isa::arbitrary_inst(row, &mut || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            seed
        });
        let op = wave_isa::Operation::of(&inst).expect("a valid instruction has an operation");
        assert_eq!(
            Kind::of(op) == Kind::Control,
            row.flags.flow != wave_isa::Flow::Next,
            "{}",
            row.mnemonic
        );
    }
}

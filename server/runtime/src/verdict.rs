//! One test case on a GPU: which cases run, how memory is compared, and the [`Verdict`].
//!
//! On the emulator a case means what `wave_conformance::Case::run` says. On a GPU two
//! things differ, and each is decided here and nowhere else:
//!
//! - **Which cases run** ([`gpu_not_run`]). A GPU runs every case that can show something
//!   about the translated code. It does not run a case that expects a diagnostic (there is no
//!   kernel), one that has no expectation at W = 32 (a warp is 32 threads), one that expects
//!   the emulator to trap on undefined behaviour (spec 9.3: an out-of-bounds access, a
//!   deadlock, a divergent barrier or an endless loop does whatever the hardware does), and
//!   one whose result the spec leaves to the implementation where NVIDIA's choice differs
//!   from the emulator's ([`IMPLEMENTATION_DEFINED`]). A trap the PTX raises on purpose
//!   (`trap;` for matrix instructions, Local Memory in a kernel without any) does run: the
//!   launch must then fail.
//! - **How memory is compared** ([`compare_on_gpu`]): as on the emulator, except that a NaN
//!   may have another payload (spec leaves it to the implementation; NVIDIA writes
//!   `0x7FFFFFFF` where the emulator canonicalises to `0x7FC00000`).
//!
//! Both [`crate::cases`] (which runs many cases) and [`crate::workers`] (which runs one case
//! per job in a worker process) build on this room; it knows neither of them.

use std::time::Duration;

use wave_conformance::{Block, Case, Elem, Expectation};

use crate::{Gpu, LaunchPlan, RunError};

/// Cases whose result the spec leaves to the implementation (spec 2.3, 9.2), where the
/// emulator's choice is not NVIDIA's: by file stem, with the reason.
pub const IMPLEMENTATION_DEFINED: &[(&str, &str)] = &[
    (
        "unaligned_device_load",
        "unaligned memory access is implementation-defined (spec 9.2): the emulator reads bytes at any address, NVIDIA GPUs fault on a 32-bit or 16-bit access that is not naturally aligned",
    ),
    (
        "local_memory_zero_at_workgroup_start",
        "Local Memory is undefined at workgroup start (spec 2.3): the emulator zeroes it, a GPU's shared memory keeps what an earlier workgroup left",
    ),
];

/// How a case ended on a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It did what the case expects.
    Pass,
    /// It did not: the first difference, the trap or the fault, in one line.
    Fail(String),
    /// It was not run on this device, and why.
    NotRun(String),
}

/// Why `case` is not run on a GPU, when it is not; `ptx` is its translation.
pub fn gpu_not_run(case: &Case, ptx: Option<&str>) -> Option<String> {
    let stem = case.path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if let Some((_, why)) = IMPLEMENTATION_DEFINED.iter().find(|(n, _)| *n == stem) {
        return Some((*why).to_string());
    }
    match &case.expect {
        Expectation::Error(code) => {
            return Some(format!("expects diagnostic {code}: there is no kernel to run"));
        }
        Expectation::Trap(text) => {
            // Only a trap that the PTX raises on purpose shows something about the backend.
            if ptx.is_some_and(|p| !p.lines().any(|l| l.trim_start().starts_with("trap;"))) {
                return Some(format!(
                    "expects the emulator to trap (`{text}`): undefined behaviour on a GPU (spec 9.3)"
                ));
            }
        }
        Expectation::Memory(_) => {}
    }
    if !case.wave_widths.contains(&32) {
        return Some("does not run at W = 32, the width of an NVIDIA warp".into());
    }
    None
}

/// Runs `case` on `gpu`.
pub fn run_on_gpu(case: &Case, gpu: &mut Gpu, timeout: Duration) -> Verdict {
    if let Some(why) = gpu_not_run(case, None) {
        return Verdict::NotRun(why);
    }
    let assembly = wave_asm::assemble(&case.source, &case.source_name);
    let diagnostics = case.kernel_source.as_ref().map_or(&assembly.diagnostics, |k| &k.diagnostics);
    if let Some(first) = diagnostics.iter().find(|d| d.is_error()) {
        let verb = if case.kernel_source.is_some() { "compile" } else { "assemble" };
        return Verdict::Fail(format!("does not {verb}: error[{}] {}", first.code, first.message));
    }
    let module = &assembly.module;
    let plan = match LaunchPlan::new(module, &case.dispatch(32)) {
        Ok(p) => p,
        Err(e) => return Verdict::Fail(e.to_string()),
    };
    let (ptx, entry) = match gpu.translate(module, &plan.kernel) {
        Ok(t) => t,
        Err(e) => return Verdict::NotRun(e.to_string()),
    };
    if let Some(why) = gpu_not_run(case, Some(&ptx)) {
        return Verdict::NotRun(why);
    }
    let mut memory = case.initial_memory();
    let result = gpu.run_ptx(&ptx, &entry, &plan, &mut memory, timeout);
    match (&case.expect, result) {
        (Expectation::Trap(_), Err(RunError::Gpu(crate::GpuError::Fault { .. }))) => Verdict::Pass,
        (Expectation::Trap(text), Ok(_)) => Verdict::Fail(format!(
            "expected the kernel to fail (the emulator traps: `{text}`), but it finished"
        )),
        (_, Err(e)) => Verdict::Fail(e.to_string()),
        (Expectation::Memory(blocks), Ok(_)) => {
            for b in blocks.iter().filter(|b| b.wave_width.is_none_or(|w| w == 32)) {
                if let Err(e) = compare_on_gpu(b, &memory) {
                    return Verdict::Fail(e);
                }
            }
            Verdict::Pass
        }
        (Expectation::Error(_), Ok(_)) => Verdict::Pass,
    }
}

/// Checks one `[[expect]]` block against a GPU's memory: as on the emulator, except that an
/// integer element may hold a NaN of another payload where a NaN is expected.
pub fn compare_on_gpu(b: &Block, memory: &[u8]) -> Result<(), String> {
    let first = match wave_conformance::compare(b, memory) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    let size = b.elem.size();
    let float = matches!(b.elem, Elem::F32 | Elem::F16);
    let only_payloads = !float
        && b.bytes.chunks(size).enumerate().all(|(i, want)| {
            let at = b.offset + i * size;
            same_but_nan_payload(want, &memory[at..at + size])
        });
    if only_payloads { Ok(()) } else { Err(first) }
}

/// Whether `want` and `got` are equal, or differ only in NaN payloads: as a whole (an f16,
/// f32 or f64 NaN each), or half by half (each differing half a NaN in both).
pub(crate) fn same_but_nan_payload(want: &[u8], got: &[u8]) -> bool {
    if want == got {
        return true;
    }
    let bits = |x: &[u8]| {
        let mut raw = [0u8; 8];
        raw[..x.len()].copy_from_slice(x);
        u64::from_le_bytes(raw)
    };
    let nan = |v: u64, size: usize| match size {
        2 => (v & 0x7C00) == 0x7C00 && (v & 0x03FF) != 0,
        4 => f32::from_bits(v as u32).is_nan(),
        8 => f64::from_bits(v).is_nan(),
        _ => false,
    };
    let size = want.len();
    if nan(bits(want), size) && nan(bits(got), size) {
        return true;
    }
    size > 2 && {
        let half = size / 2;
        same_but_nan_payload(&want[..half], &got[..half])
            && same_but_nan_payload(&want[half..], &got[half..])
    }
}

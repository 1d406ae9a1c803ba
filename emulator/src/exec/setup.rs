//! Setting a dispatch up: the dispatch is checked against the module and the target's limits,
//! the kernel decoded, and an [`Exec`] built that owns everything the run needs.

use wave_wbin::Module;

use crate::decode::decode;
use crate::{Dispatch, Outcome, Trap};

use super::{CHUNK, Exec, LANES, MAX_WORKGROUP_STATE, Stats};

pub(super) fn dispatch_error(kernel: &str, message: String) -> Trap {
    Trap {
        message: format!("invalid dispatch: {message}"),
        kernel: kernel.to_owned(),
        pc: None,
        line: None,
        workgroup: None,
        wave: None,
        lane: None,
    }
}

/// Checks a dispatch and decodes its kernel: a ready [`Exec`] with `device` as its memory,
/// and the dispatch's warnings.
pub(crate) fn prepare(
    module: &Module,
    dispatch: &Dispatch,
    device: Vec<u8>,
) -> Result<(Exec, Vec<String>), Trap> {
    let kernel = match &dispatch.kernel {
        Some(name) => match module.kernel(name) {
            Some((_, k)) => k,
            None => {
                let names: Vec<&str> = module.kernels.iter().map(|k| k.name.as_str()).collect();
                return Err(dispatch_error(
                    name,
                    format!("no kernel `{name}`; the module has {}", names.join(", ")),
                ));
            }
        },
        None => match module.kernels.as_slice() {
            [only] => only,
            [] => return Err(dispatch_error("", "the module has no kernel".into())),
            many => {
                let names: Vec<&str> = many.iter().map(|k| k.name.as_str()).collect();
                return Err(dispatch_error(
                    "",
                    format!("the module has several kernels ({}); name one", names.join(", ")),
                ));
            }
        },
    };
    let name = kernel.name.as_str();
    let mut outcome = Outcome::default();
    let w = dispatch.wave_width;
    if !crate::WAVE_WIDTHS.contains(&w) {
        return Err(dispatch_error(name, format!("wave width {w} is not one of 4, 8, 16, 32, 64")));
    }
    if w == 4 {
        outcome.warnings.push(
            "wave width 4 is below the spec minimum WAVE_WIDTH = 8 (accepted for programs written for the reference toolchain)".into(),
        );
    }
    let limits = crate::profile().constants;
    let wg_size = match dispatch.workgroup.or(kernel.workgroup_size) {
        Some(s) => s,
        None => {
            return Err(dispatch_error(
                name,
                "no workgroup size: the kernel declares no `.workgroup_size` and the dispatch gives none".into(),
            ));
        }
    };
    let threads = wg_size.iter().map(|&d| u64::from(d)).product::<u64>();
    if wg_size.contains(&0) || dispatch.grid.contains(&0) {
        return Err(dispatch_error(
            name,
            "grid and workgroup dimensions must be at least 1".into(),
        ));
    }
    if threads > u64::from(limits.max_workgroup_size) {
        return Err(dispatch_error(
            name,
            format!(
                "{threads} threads per workgroup exceed MAX_WORKGROUP_SIZE = {}",
                limits.max_workgroup_size
            ),
        ));
    }
    if kernel.local_memory > limits.local_memory_size {
        return Err(dispatch_error(
            name,
            format!(
                "{} bytes of local memory exceed LOCAL_MEMORY_SIZE = {}",
                kernel.local_memory, limits.local_memory_size
            ),
        ));
    }
    // Spec 2.6: a dispatch whose workgroup does not fit on a core (register file, wave slots,
    // local memory) is rejected.
    let occupancy = wave_isa::target::occupancy(
        &wave_isa::target::Constants { wave_width: w, ..limits },
        wave_isa::target::KernelResources {
            registers: u32::from(kernel.registers),
            local_memory: kernel.local_memory,
            workgroup_threads: threads as u32,
        },
    );
    if let Some(rejection) = occupancy.rejections.first() {
        return Err(dispatch_error(
            name,
            format!("the workgroup does not fit on a core: {rejection}"),
        ));
    }
    // Arguments by name: every parameter needs one, and no unknown names.
    let mut args = Vec::with_capacity(kernel.params.len());
    for p in &kernel.params {
        match dispatch.args.iter().find(|(n, _)| *n == p.name) {
            Some((_, v)) => args.push(*v),
            None => {
                return Err(dispatch_error(
                    name,
                    format!("missing argument for parameter `{}` ({})", p.name, p.ty.name()),
                ));
            }
        }
    }
    for (n, _) in &dispatch.args {
        if !kernel.params.iter().any(|p| p.name == *n) {
            let known: Vec<&str> = kernel.params.iter().map(|p| p.name.as_str()).collect();
            return Err(dispatch_error(
                name,
                format!(
                    "kernel `{name}` has no parameter `{n}` (parameters: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    let prog = decode(module, kernel).map_err(|f| Trap {
        message: format!("invalid kernel: {}", f.message),
        kernel: name.to_owned(),
        pc: Some(f.pc),
        line: module.line_at(f.pc).map(|l| l.line),
        workgroup: None,
        wave: None,
        lane: None,
    })?;
    // Each wave keeps a row of W..64 lanes per register and per distinct immediate: bound
    // the memory a workgroup needs.
    let waves = threads.div_ceil(u64::from(w));
    let bytes = waves * (prog.registers + prog.constants.len()) as u64 * (LANES as u64) * 4;
    if bytes > MAX_WORKGROUP_STATE {
        return Err(dispatch_error(
            name,
            format!(
                "a workgroup would need {} MiB of register rows ({} registers and {} distinct immediates in each of {waves} waves); the emulator allows {} MiB: use fewer distinct immediates or a smaller workgroup",
                bytes >> 20,
                prog.registers,
                prog.constants.len(),
                MAX_WORKGROUP_STATE >> 20
            ),
        ));
    }
    if let Some(pc) = prog.uses_mma {
        return Err(Trap {
            message: "CAP_MMA is not supported by the emulator: matrix multiply-accumulate instructions cannot run".into(),
            kernel: name.to_owned(),
            pc: Some(pc),
            line: module.line_at(pc).map(|l| l.line),
            workgroup: None,
            wave: None,
            lane: None,
        });
    }
    let w = w as usize;
    let exec = Exec {
        module: module.clone(),
        kernel_name: name.to_owned(),
        w,
        full: if w == 64 { u64::MAX } else { (1u64 << w) - 1 },
        span: w.div_ceil(CHUNK) * CHUNK,
        device,
        args,
        local: vec![0; kernel.local_memory as usize],
        steps: 0,
        max_steps: dispatch.max_steps,
        stop_at: if dispatch.interrupt.is_some() || dispatch.progress.is_some() {
            dispatch.max_steps.min(crate::INTERRUPT_EVERY)
        } else {
            dispatch.max_steps
        },
        interrupt: dispatch.interrupt.clone(),
        progress: dispatch.progress.clone(),
        published: (0, 0),
        max_call_depth: limits.max_call_depth as usize,
        stats: Stats { wave_width: w as u32, ..Stats::default() },
        wg_id: [0; 3],
        wg_size,
        grid: dispatch.grid,
        num_waves: threads.div_ceil(w as u64) as u32,
        trace: dispatch.trace.then(Vec::new),
        trace_truncated: false,
        waves: Vec::new(),
        start_regs: Vec::new(),
        notes: Vec::new(),
        shuffle_notes: Vec::new(),
        threads: crate::resolve_threads(dispatch.threads),
        overlay: None,
        every_register: false,
        prog,
    };
    Ok((exec, outcome.warnings))
}

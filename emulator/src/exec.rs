//! The interpreter: workgroups, waves, masks and every instruction's semantics.
//!
//! Invariants of a wave's control state:
//! - `alive` holds the lanes that exist and have not halted; `active` ⊆ `alive`.
//! - Each frame remembers the lanes to restore when its block ends. A lane that leaves early
//!   (break, continue, return, halt) is removed from every frame it jumps over, so no `endif`
//!   can bring it back before its time: that is what makes `break` inside an `if` take effect
//!   in the same iteration.
//! - When `active` becomes empty the wave jumps to the instruction that ends the innermost
//!   frame (`else`, `endif`, `endloop`, or the return of a call), which restores lanes.

use wave_isa::AtomicType;
use wave_wbin::Module;

use crate::decode::{Code, Op, Program, decode};
use crate::{Dispatch, Outcome, Trap};

/// Lanes per register row. Rows always hold 64 lanes whatever W is, so every per-lane loop
/// has a fixed length that the compiler unrolls and vectorises; lanes at W and above are
/// scratch that no instruction reads.
const LANES: usize = 64;

/// Lanes per step of the row loops: a fixed length the compiler vectorises.
const CHUNK: usize = 8;

/// The most memory the register rows of one workgroup may take (256 MiB).
const MAX_WORKGROUP_STATE: u64 = 256 << 20;

/// Counters of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Wave-instructions executed.
    pub instructions: u64,
    /// Lane-operations: active lanes summed over executed instructions.
    pub lane_ops: u64,
    /// Wave-instructions by class: ALU, memory, wave operations, control flow.
    pub by_class: [u64; 4],
    /// Times a wave waited at a barrier.
    pub barrier_waits: u64,
    /// Bytes read from and written to device memory.
    pub device_bytes: [u64; 2],
    /// Bytes read from and written to local memory.
    pub local_bytes: [u64; 2],
    /// Workgroups run.
    pub workgroups: u64,
    /// W of the run, for utilisation.
    pub wave_width: u32,
}

impl Stats {
    /// Active lanes per executed instruction, as a fraction of W.
    pub fn utilisation(&self) -> f64 {
        if self.instructions == 0 {
            return 0.0;
        }
        self.lane_ops as f64 / (self.instructions as f64 * f64::from(self.wave_width.max(1)))
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Frame {
    If { saved: u64, else_mask: u64, at: u32 },
    Loop { saved: u64, cont: u64, at: u32 },
    Call { saved: u64, ret: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Running,
    AtBarrier,
    Done,
}

#[derive(Clone)]
pub(crate) struct Wave {
    pub(crate) id: u32,
    pub(crate) regs: Vec<u32>,
    pub(crate) preds: [u64; 4],
    pub(crate) active: u64,
    pub(crate) alive: u64,
    pub(crate) pc: usize,
    pub(crate) frames: Vec<Frame>,
    pub(crate) state: State,
    /// Per-lane thread ids x, y, z.
    tid: [[u32; 64]; 3],
}

/// A dispatch in progress: the module, the decoded kernel, device memory, and the state of
/// the current workgroup. It owns everything, so that a debugging [`crate::Session`] can keep
/// it between steps.
pub(crate) struct Exec {
    pub(crate) module: Module,
    pub(crate) kernel_name: String,
    pub(crate) prog: Program,
    pub(crate) w: usize,
    full: u64,
    /// Lanes a row operation computes: W rounded up to a multiple of [`CHUNK`], so that
    /// at W = 32 an instruction does half the work of a 64-lane row.
    span: usize,
    pub(crate) device: Vec<u8>,
    args: Vec<u32>,
    pub(crate) local: Vec<u8>,
    pub(crate) steps: u64,
    max_steps: u64,
    /// Where the step loop next looks up from its work: the budget, or sooner, the next time
    /// to ask the interrupt.
    stop_at: u64,
    interrupt: Option<crate::Interrupt>,
    max_call_depth: usize,
    pub(crate) stats: Stats,
    pub(crate) wg_id: [u32; 3],
    pub(crate) wg_size: [u32; 3],
    pub(crate) grid: [u32; 3],
    pub(crate) num_waves: u32,
    trace: Option<Vec<crate::TraceEvent>>,
    trace_truncated: bool,
    pub(crate) waves: Vec<Wave>,
    /// The registers every wave starts with (R rows: the parameters, then zeros), built when
    /// the first workgroup starts.
    start_regs: Vec<u32>,
    /// Warnings found while running, and the pcs already noted.
    pub(crate) notes: Vec<String>,
    shuffle_notes: Vec<u32>,
}

fn dispatch_error(kernel: &str, message: String) -> Trap {
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
        stop_at: match dispatch.interrupt {
            Some(_) => dispatch.max_steps.min(crate::INTERRUPT_EVERY),
            None => dispatch.max_steps,
        },
        interrupt: dispatch.interrupt.clone(),
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
        prog,
    };
    Ok((exec, outcome.warnings))
}

/// Runs a whole dispatch over `device`. The emulator takes the buffer for the run and gives
/// it back, also after a trap, so that what the program wrote before the fault can be
/// inspected.
pub(crate) fn run(
    module: &Module,
    dispatch: &Dispatch,
    device: &mut Vec<u8>,
) -> Result<Outcome, Trap> {
    let (mut exec, warnings) = prepare(module, dispatch, std::mem::take(device))?;
    let result = exec.run_all();
    *device = std::mem::take(&mut exec.device);
    result?;
    let mut outcome = Outcome { warnings, ..Outcome::default() };
    outcome.stats = std::mem::take(&mut exec.stats);
    outcome.trace = exec.trace.take().unwrap_or_default();
    outcome.trace_truncated = exec.trace_truncated;
    outcome.warnings.append(&mut exec.notes);
    Ok(outcome)
}

/// The byte address of lane 0 when lanes `0..w` of the address row `addrs` (plus `offset`)
/// are `size` bytes apart in lane order, with no address below zero or past 4 GiB; `None`
/// otherwise.
#[inline(always)]
fn contiguous(addrs: &[u32; LANES], w: usize, size: usize, offset: i64) -> Option<usize> {
    let a0 = addrs[0];
    let shift = size.trailing_zeros();
    // One branch-free pass in 32-bit lanes, so that the check vectorises.
    let mut ok = true;
    for (&a, &l) in addrs[..w].iter().zip(&LANE_IDS[..w]) {
        ok &= a.wrapping_sub(a0) == l << shift;
    }
    let first = i64::from(a0) + offset;
    let end = i64::from(a0) + (size * w) as i64;
    (ok && first >= 0 && end <= 1 << 32).then_some(first as usize)
}

/// Lane numbers, for rows that hold them.
const LANE_IDS: [u32; LANES] = {
    let mut ids = [0u32; LANES];
    let mut l = 0;
    while l < LANES {
        ids[l] = l as u32;
        l += 1;
    }
    ids
};

/// Writes `src` into row `rd` of `regs` in the lanes of `mask`. With every lane active
/// (`full`) the first `span` lanes are written, scratch lanes included, which keeps the loop
/// branch-free.
#[inline(always)]
fn put_row(regs: &mut [u32], rd: u16, full: bool, mask: u64, span: usize, src: &[u32; LANES]) {
    let start = usize::from(rd) * LANES;
    let Some(Ok(dst)) = regs.get_mut(start..start + LANES).map(<&mut [u32; LANES]>::try_from)
    else {
        return;
    };
    if full {
        // Fixed-size pieces: the compiler copies them inline, not through memcpy.
        let pieces = dst.as_chunks_mut::<CHUNK>().0.iter_mut();
        for (d, o) in pieces.zip(src.as_chunks::<CHUNK>().0).take(span / CHUNK) {
            *d = *o;
        }
    } else {
        // Only the active lanes: as cheap for a single lane as it can be, and no
        // mispredicted branch per lane.
        for l in lanes(mask) {
            dst[l] = src[l];
        }
    }
}

/// `wave_reduce` of `values` by operation `kind` (add, signed min, signed max, and, or,
/// xor); one loop per operation, no per-lane dispatch.
#[inline(always)]
fn reduce_values(kind: u8, values: impl Iterator<Item = u32>) -> u32 {
    match kind {
        0 => values.fold(0u32, u32::wrapping_add),
        1 => values.map(|v| v as i32).min().unwrap_or(0) as u32,
        2 => values.map(|v| v as i32).max().unwrap_or(0) as u32,
        3 => values.fold(u32::MAX, |a, v| a & v),
        4 => values.fold(0, |a, v| a | v),
        _ => values.fold(0, |a, v| a ^ v),
    }
}

/// One bit per lane: whether `test` holds for the lane's pair of values.
#[inline(always)]
fn compare_bits(a: &[u32], b: &[u32], test: impl Fn(u32, u32) -> bool) -> u64 {
    // First every lane's test as an all-ones or all-zeros word (a vector compare), then
    // eight lanes at a time into a byte (a vector AND with each lane's bit, then an OR).
    const BIT: [u32; CHUNK] = [1, 2, 4, 8, 16, 32, 64, 128];
    let mut words = [0u32; LANES];
    for ((m, &x), &y) in words.iter_mut().zip(a).zip(b) {
        *m = if test(x, y) { u32::MAX } else { 0 };
    }
    let mut bits = 0u64;
    for (c, m) in words[..a.len()].as_chunks::<CHUNK>().0.iter().enumerate() {
        let mut byte = 0u32;
        for i in 0..CHUNK {
            byte |= m[i] & BIT[i];
        }
        bits |= u64::from(byte) << (c * CHUNK);
    }
    bits
}

/// Writes predicate `pd` in the lanes of `mask`.
fn set_pred_bits(wave: &mut Wave, pd: u16, mask: u64, bits: u64) {
    let p = &mut wave.preds[usize::from(pd & 3)];
    *p = (*p & !mask) | (bits & mask);
}

/// The lanes of wave `id` that are threads of the workgroup.
fn alive_mask(id: u32, w: usize, threads: usize) -> u64 {
    let first = id as usize * w;
    let n = threads.saturating_sub(first).min(w);
    if n == 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// `out = a * b + c` lane by lane, in binary32 with one rounding.
fn fma_rows(a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        #[allow(
            unsafe_code,
            reason = "the CPU was just checked to have FMA, which is all the function needs"
        )]
        // SAFETY: `fma_rows_hardware` only requires the `fma` target feature, detected above.
        unsafe {
            fma_rows_hardware(a, b, c, out);
        }
        return;
    }
    fma_rows_portable(a, b, c, out);
}

/// The same computation compiled for CPUs with FMA, so that `mul_add` is one instruction
/// (the portable build calls a libm routine per lane).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn fma_rows_hardware(a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) {
    fma_rows_portable(a, b, c, out);
}

#[inline(always)]
fn fma_rows_portable(a: &[u32], b: &[u32], c: &[u32], out: &mut [u32]) {
    for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
        *o = bits(f(x).mul_add(f(y), f(z)));
    }
}

/// Register row `r` (a row of zeros if it does not exist, which decoding rules out).
#[inline(always)]
fn row_ref(regs: &[u32], r: u16) -> &[u32; LANES] {
    const ZERO: [u32; LANES] = [0; LANES];
    let start = usize::from(r) * LANES;
    match regs.get(start..start + LANES).map(<&[u32; LANES]>::try_from) {
        Some(Ok(row)) => row,
        _ => &ZERO,
    }
}

/// Iterates the set bits of a mask.
fn lanes(mask: u64) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(l)
    })
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

/// The bits of a binary64 result, with the canonical quiet NaN.
fn bits64(x: f64) -> u64 {
    if x.is_nan() { 0x7FF8_0000_0000_0000 } else { x.to_bits() }
}

/// The bits of an arithmetic result. Every NaN an operation produces is the canonical quiet
/// NaN 0x7FC00000, whatever the host CPU would give, so results are the same on every machine.
fn bits(x: f32) -> u32 {
    if x.is_nan() { 0x7FC0_0000 } else { x.to_bits() }
}

fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        // -0.0 is smaller than +0.0.
        if a.is_sign_negative() { a } else { b }
    } else if a < b {
        a
    } else {
        b
    }
}

fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == b {
        if a.is_sign_positive() { a } else { b }
    } else if a > b {
        a
    } else {
        b
    }
}

fn half_of(x: u32, hi: bool) -> f64 {
    let h = if hi { (x >> 16) as u16 } else { x as u16 };
    half::f16::from_bits(h).to_f64()
}

fn set_half(old: u32, hi: bool, value: f64) -> u32 {
    // The canonical binary16 quiet NaN, as for binary32.
    let h = if value.is_nan() { 0x7E00 } else { u32::from(half::f16::from_f64(value).to_bits()) };
    if hi { (old & 0xFFFF) | (h << 16) } else { (old & 0xFFFF_0000) | h }
}

impl Exec {
    fn trap(
        &self,
        wave: Option<&Wave>,
        op: Option<&Op>,
        lane: Option<usize>,
        message: String,
    ) -> Trap {
        let pc = op.map(|o| o.pc);
        Trap {
            message,
            kernel: self.kernel_name.clone(),
            pc,
            line: pc.and_then(|pc| self.module.line_at(pc)).map(|l| l.line),
            workgroup: Some(self.wg_id),
            wave: wave.map(|w| w.id),
            lane: lane.map(|l| l as u32),
        }
    }

    /// Runs every workgroup of the grid in order.
    pub(crate) fn run_all(&mut self) -> Result<(), Trap> {
        let [gx, gy, gz] = self.grid;
        // The code is held apart from the machine, so that an instruction is read in place.
        let ops = std::sync::Arc::clone(&self.prog.ops);
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    self.begin_workgroup([x, y, z])?;
                    let mut waves = std::mem::take(&mut self.waves);
                    let result = self.run_waves(&ops, &mut waves);
                    self.waves = waves;
                    result?;
                }
            }
        }
        Ok(())
    }

    /// Whether the dispatch's interrupt asks the run to stop.
    #[cold]
    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| (i.0)())
    }

    /// Starts workgroup `id`: local memory and every wave reset.
    pub(crate) fn begin_workgroup(&mut self, id: [u32; 3]) -> Result<(), Trap> {
        self.wg_id = id;
        self.stats.workgroups += 1;
        // Launching a wave costs one step, so that even a kernel with no instructions over an
        // enormous grid ends at the budget.
        // Resetting registers and local memory costs a step per 256 words too, so that the
        // budget bounds the run time of any dispatch.
        let words = u64::from(self.num_waves) * self.prog.registers as u64 * self.w as u64
            + self.local.len() as u64 / 4;
        self.steps = self.steps.saturating_add(u64::from(self.num_waves) + words / 256);
        if self.steps > self.max_steps {
            return Err(self.trap(
                None,
                None,
                None,
                format!("instruction budget exceeded: {} wave-instructions and wave launches (raise --max-steps if the dispatch is meant to run longer)", self.max_steps),
            ));
        }
        if !self.local.is_empty() {
            self.local.fill(0);
        }
        let w = self.w;
        let [sx, sy, _] = self.wg_size;
        let threads = self.wg_size.iter().product::<u32>() as usize;
        // A wave's register file: the kernel's R registers, then one row per immediate. The
        // immediate rows are written once, when the wave is created; no instruction writes them.
        let rows = self.prog.registers + self.prog.constants.len();
        // Waves are allocated once per run and reset for each workgroup.
        let mut waves = std::mem::take(&mut self.waves);
        if waves.is_empty() {
            waves = (0..self.num_waves)
                .map(|id| {
                    let mut tid = [[0u32; 64]; 3];
                    let mut alive = 0u64;
                    // Lanes past the workgroup's threads (a partial last wave) never run.
                    let first = id as usize * w;
                    for (lane, t) in (first..(first + w).min(threads)).enumerate() {
                        alive |= 1 << lane;
                        let t = t as u32;
                        tid[0][lane] = t % sx;
                        tid[1][lane] = (t / sx) % sy;
                        tid[2][lane] = t / (sx * sy);
                    }
                    Wave {
                        id,
                        regs: {
                            let mut regs = vec![0u32; rows * LANES];
                            for (i, c) in self.prog.constants.iter().enumerate() {
                                let at = (self.prog.registers + i) * LANES;
                                regs[at..at + LANES].fill(*c);
                            }
                            regs
                        },
                        preds: [0; 4],
                        active: alive,
                        alive,
                        pc: 0,
                        frames: Vec::new(),
                        state: State::Done,
                        tid,
                    }
                })
                .collect();
        }
        if self.start_regs.is_empty() {
            // Every wave starts from the same registers: the parameters, then zeros.
            self.start_regs = (0..self.prog.registers * LANES)
                .map(|i| self.args.get(i / LANES).copied().unwrap_or(0))
                .collect();
        }
        for wave in waves.iter_mut() {
            // Only the first `span` lanes of each row: the scratch lanes above are never read.
            let n = self.span / CHUNK;
            let rows = wave.regs.as_chunks_mut::<LANES>().0.iter_mut();
            for (row, start) in rows.zip(self.start_regs.as_chunks::<LANES>().0) {
                let pieces = row.as_chunks_mut::<CHUNK>().0.iter_mut();
                for (d, s) in pieces.zip(start.as_chunks::<CHUNK>().0).take(n) {
                    *d = *s;
                }
            }
            wave.preds = [0; 4];
            wave.alive =
                if w == 64 { u64::MAX } else { (1u64 << w) - 1 } & alive_mask(wave.id, w, threads);
            wave.active = wave.alive;
            wave.pc = 0;
            wave.frames.clear();
            wave.state = if wave.alive == 0 { State::Done } else { State::Running };
        }
        self.waves = waves;
        Ok(())
    }

    fn run_waves(&mut self, ops: &[Op], waves: &mut [Wave]) -> Result<(), Trap> {
        loop {
            for wave in waves.iter_mut() {
                if wave.state == State::Running {
                    self.run_wave(ops, wave)?;
                }
            }
            if self.barrier_state(waves)? {
                return Ok(());
            }
        }
    }

    /// With no wave running: releases a barrier every wave reached and returns `false`, or
    /// returns `true` when every wave has finished; a barrier that finished waves can never
    /// reach is a deadlock.
    pub(crate) fn barrier_state(&self, waves: &mut [Wave]) -> Result<bool, Trap> {
        let waiting = waves.iter().filter(|w| w.state == State::AtBarrier).count();
        if waiting == 0 {
            return Ok(waves.iter().all(|w| w.state == State::Done));
        }
        if waves.iter().any(|w| w.state == State::Running) {
            return Ok(false);
        }
        if waves.iter().any(|w| w.state == State::Done) {
            let mut at = Vec::new();
            for wave in waves.iter() {
                let op = self.prog.ops.get(wave.pc.saturating_sub(1));
                let line = op.and_then(|o| self.module.line_at(o.pc)).map(|l| l.line);
                let place = match (wave.state, op, line) {
                    (State::Done, _, _) => "finished".to_owned(),
                    (_, Some(o), Some(l)) => {
                        format!("waits at the barrier at pc 0x{:x} (line {l})", o.pc)
                    }
                    (_, Some(o), None) => format!("waits at the barrier at pc 0x{:x}", o.pc),
                    _ => "waits".to_owned(),
                };
                at.push(format!("wave {} {place}", wave.id));
            }
            return Err(Trap {
                message: format!(
                    "deadlock: {waiting} of {} waves wait at a barrier that finished waves can never reach ({})",
                    waves.len(),
                    at.join("; ")
                ),
                kernel: self.kernel_name.clone(),
                pc: None,
                line: None,
                workgroup: Some(self.wg_id),
                wave: None,
                lane: None,
            });
        }
        for wave in waves.iter_mut() {
            if wave.state == State::AtBarrier {
                wave.state = State::Running;
            }
        }
        Ok(false)
    }

    /// Removes `lanes` from the frames above index `floor` (exclusive).
    fn retire(wave: &mut Wave, lanes_out: u64, floor: usize) {
        for frame in wave.frames[floor..].iter_mut() {
            match frame {
                Frame::If { saved, else_mask, .. } => {
                    *saved &= !lanes_out;
                    *else_mask &= !lanes_out;
                }
                Frame::Loop { saved, cont, .. } => {
                    *saved &= !lanes_out;
                    *cont &= !lanes_out;
                }
                Frame::Call { saved, .. } => *saved &= !lanes_out,
            }
        }
    }

    /// With no active lane, jump to the instruction that ends the innermost frame.
    fn settle(&self, wave: &mut Wave) {
        if wave.active != 0 {
            return;
        }
        match wave.frames.last().copied() {
            None => wave.state = State::Done,
            Some(Frame::If { at, .. }) => {
                // The `if`'s target is its else or endif; an else's target is the endif. Both
                // instructions restore the right lanes when executed.
                let target = self.prog.ops[at as usize].target as usize;
                let is_else = self.prog.ops[target].code == Code::Else;
                wave.pc = if is_else && wave.pc <= target {
                    target
                } else {
                    if is_else { self.prog.ops[target].target as usize } else { target }
                };
            }
            Some(Frame::Loop { at, .. }) => wave.pc = self.prog.ops[at as usize].target as usize,
            Some(Frame::Call { saved, ret }) => {
                wave.frames.pop();
                wave.active = saved & wave.alive;
                wave.pc = ret as usize;
                self.settle(wave);
            }
        }
    }

    fn run_wave(&mut self, ops: &[Op], wave: &mut Wave) -> Result<(), Trap> {
        while wave.state == State::Running {
            self.step_in(ops, wave)?;
        }
        Ok(())
    }

    /// Executes the next instruction of a running wave.
    pub(crate) fn step_one(&mut self, wave: &mut Wave) -> Result<(), Trap> {
        let ops = std::sync::Arc::clone(&self.prog.ops);
        self.step_in(&ops, wave)
    }

    /// Executes the next instruction of a running wave, from `ops` (the kernel's code).
    #[inline(always)]
    fn step_in(&mut self, ops: &[Op], wave: &mut Wave) -> Result<(), Trap> {
        let w = self.w;
        let Some(op) = ops.get(wave.pc) else {
            // Falling off the end of the code halts the lanes that got there; lanes still
            // waiting in enclosing blocks (an `else` not yet run, the caller of a function
            // that has no `return`) carry on.
            let gone = wave.active;
            wave.alive &= !gone;
            Self::retire(wave, gone, 0);
            wave.active = 0;
            self.settle(wave);
            return Ok(());
        };
        if self.steps >= self.stop_at {
            if self.steps < self.max_steps && !self.interrupted() {
                self.stop_at = self.max_steps.min(self.steps + crate::INTERRUPT_EVERY);
            } else {
                let message = if self.steps < self.max_steps {
                    format!("interrupted after {} wave-instructions", self.steps)
                } else {
                    format!(
                        "instruction budget exceeded: {} wave-instructions (raise --max-steps if the kernel is meant to run longer)",
                        self.max_steps
                    )
                };
                return Err(self.trap(Some(wave), Some(op), None, message));
            }
        }
        self.steps += 1;
        let mask = match op.guard {
            None => wave.active,
            Some((p, false)) => wave.active & wave.preds[usize::from(p)],
            Some((p, true)) => wave.active & !wave.preds[usize::from(p)],
        };
        self.stats.instructions += 1;
        // A full mask is the common case, and counting bits without a POPCNT instruction (the
        // baseline x86-64 target) is not free.
        self.stats.lane_ops +=
            if mask == self.full { w as u64 } else { u64::from(mask.count_ones()) };
        if self.trace.is_some() {
            let mut text = String::new();
            if let Some(inst) = self.prog.insts.get(wave.pc) {
                wave_isa::write_inst(inst, &mut text, &|_| None);
            }
            let trace = self.trace.get_or_insert_with(Vec::new);
            if trace.len() < crate::TRACE_LIMIT {
                trace.push(crate::TraceEvent {
                    step: self.steps,
                    workgroup: self.wg_id,
                    wave: wave.id,
                    pc: op.pc,
                    mask,
                    wave_width: w as u32,
                    class: op.class,
                    text,
                });
            } else {
                self.trace_truncated = true;
            }
        }
        wave.pc += 1;
        self.stats.by_class[usize::from(op.class)] += 1;
        self.step(wave, op, mask)?;
        Ok(())
    }

    fn row(&self, r: u16) -> std::ops::Range<usize> {
        let start = usize::from(r) * LANES;
        start..start + LANES
    }

    /// Writes `out` into row `rd` in the lanes of `mask`.
    #[inline(always)]
    fn blend(&self, wave: &mut Wave, rd: u16, mask: u64, out: [u32; LANES]) {
        put_row(&mut wave.regs, rd, mask == self.full, mask, self.span, &out);
    }

    /// Source row `r`: a register of the wave, or (at and above R) an immediate's row.
    #[inline(always)]
    fn src<'s>(&'s self, wave: &'s Wave, r: u16) -> &'s [u32; LANES] {
        row_ref(&wave.regs, r)
    }

    /// `rd = f(rs1)` in the lanes of `mask`.
    #[inline(never)]
    fn map1(&self, wave: &mut Wave, op: &Op, mask: u64, f: impl Fn(u32) -> u32) {
        let a = self.src(wave, op.rs1);
        let mut out = [0u32; LANES];
        for (o, x) in out
            .as_chunks_mut::<CHUNK>()
            .0
            .iter_mut()
            .zip(a.as_chunks::<CHUNK>().0.iter())
            .take(self.span / CHUNK)
        {
            for i in 0..CHUNK {
                o[i] = f(x[i]);
            }
        }
        self.blend(wave, op.rd, mask, out);
    }

    /// `rd = f(rs1, rs2)` in the lanes of `mask`.
    #[inline(never)]
    fn map2(&self, wave: &mut Wave, op: &Op, mask: u64, f: impl Fn(u32, u32) -> u32) {
        let (a, b) = (self.src(wave, op.rs1), self.src(wave, op.rs2));
        let mut out = [0u32; LANES];
        let rows = out
            .as_chunks_mut::<CHUNK>()
            .0
            .iter_mut()
            .zip(a.as_chunks::<CHUNK>().0.iter())
            .zip(b.as_chunks::<CHUNK>().0.iter());
        for ((o, x), y) in rows.take(self.span / CHUNK) {
            for i in 0..CHUNK {
                o[i] = f(x[i], y[i]);
            }
        }
        self.blend(wave, op.rd, mask, out);
    }

    /// `rd = f(rs1, rs2, rs3)` in the lanes of `mask`.
    #[inline(never)]
    fn map3(&self, wave: &mut Wave, op: &Op, mask: u64, f: impl Fn(u32, u32, u32) -> u32) {
        let (a, b, c) = (self.src(wave, op.rs1), self.src(wave, op.rs2), self.src(wave, op.rs3));
        let mut out = [0u32; LANES];
        let rows = out
            .as_chunks_mut::<CHUNK>()
            .0
            .iter_mut()
            .zip(a.as_chunks::<CHUNK>().0.iter())
            .zip(b.as_chunks::<CHUNK>().0.iter())
            .zip(c.as_chunks::<CHUNK>().0.iter());
        for (((o, x), y), z) in rows.take(self.span / CHUNK) {
            for i in 0..CHUNK {
                o[i] = f(x[i], y[i], z[i]);
            }
        }
        self.blend(wave, op.rd, mask, out);
    }

    /// `rd = rs1 * rs2 + rs3` with one rounding, using the CPU's FMA when it has one.
    fn fma(&self, wave: &mut Wave, op: &Op, mask: u64) {
        let mut out = [0u32; LANES];
        let n = self.span;
        fma_rows(
            &self.src(wave, op.rs1)[..n],
            &self.src(wave, op.rs2)[..n],
            &self.src(wave, op.rs3)[..n],
            &mut out[..n],
        );
        self.blend(wave, op.rd, mask, out);
    }

    /// Sets predicate `pd` in the lanes of `mask` from a per-lane test.
    fn set_pred(&self, wave: &mut Wave, pd: u16, mask: u64, test: impl Fn(usize) -> bool) {
        let mut value = 0u64;
        for l in lanes(mask) {
            if test(l) {
                value |= 1 << l;
            }
        }
        let p = &mut wave.preds[usize::from(pd & 3)];
        *p = (*p & !mask) | value;
    }

    fn pair(&self, wave: &Wave, r: u16, l: usize) -> u64 {
        let lo = wave.regs[usize::from(r) * LANES + l];
        let hi = wave.regs[(usize::from(r) + 1) * LANES + l];
        u64::from(lo) | (u64::from(hi) << 32)
    }

    fn set_pair(&self, wave: &mut Wave, r: u16, l: usize, v: u64) {
        wave.regs[usize::from(r) * LANES + l] = v as u32;
        wave.regs[(usize::from(r) + 1) * LANES + l] = (v >> 32) as u32;
    }

    fn map_f64(&self, wave: &mut Wave, op: &Op, mask: u64, f: impl Fn(f64, f64, f64) -> f64) {
        for l in lanes(mask) {
            let a = f64::from_bits(self.pair(wave, op.rs1, l));
            let b = f64::from_bits(self.pair(wave, op.rs2, l));
            let c = f64::from_bits(self.pair(wave, op.rs3, l));
            let v = bits64(f(a, b, c));
            self.set_pair(wave, op.rd, l, v);
        }
    }

    fn reg(&self, wave: &Wave, r: u16, l: usize) -> u32 {
        wave.regs[usize::from(r) * LANES + l]
    }

    /// The out-of-bounds trap for lane `lane`'s access at `addr`.
    #[cold]
    fn out_of_bounds(
        &self,
        wave: &Wave,
        op: &Op,
        lane: usize,
        addr: i64,
        size: usize,
        local: bool,
    ) -> Trap {
        let (space, len) =
            if local { ("local", self.local.len()) } else { ("device", self.device.len()) };
        self.trap(
            Some(wave),
            Some(op),
            Some(lane),
            format!(
                "{space} memory out of bounds: {size}-byte access at address {addr} (0x{:x}); {space} memory is {len} bytes",
                addr as u64
            ),
        )
    }

    /// The byte offset of every lane's access in `mask`, checked against the memory size,
    /// indexed by lane; or the trap of the first lane out of bounds.
    fn addresses(
        &self,
        wave: &Wave,
        op: &Op,
        mask: u64,
        size: usize,
        local: bool,
        offset: i64,
    ) -> Result<[usize; LANES], Trap> {
        let mut addrs = [0usize; LANES];
        let len = if local { self.local.len() } else { self.device.len() } as i64;
        let base = &wave.regs[self.row(op.rs1)];
        for l in lanes(mask) {
            let addr = i64::from(base[l]) + offset;
            if addr < 0 || addr + size as i64 > len {
                return Err(self.out_of_bounds(wave, op, l, addr, size, local));
            }
            addrs[l] = addr as usize;
        }
        Ok(addrs)
    }

    fn load(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        width: u8,
        local: bool,
    ) -> Result<(), Trap> {
        let size = 1usize << width;
        let (base, rd) = (usize::from(op.rs1) * LANES, usize::from(op.rd) * LANES);
        let offset = i64::from(op.imm);
        let mem: &[u8] = if local { &self.local } else { &self.device };
        // Lanes before a faulting one may already hold their value: the run stops anyway.
        let at = |wave: &Wave, l: usize| -> Result<usize, Trap> {
            let addr = i64::from(wave.regs[base + l]) + offset;
            match usize::try_from(addr) {
                Ok(at) if at + size <= mem.len() => Ok(at),
                _ => Err(self.out_of_bounds(wave, op, l, addr, size, local)),
            }
        };
        if mask == self.full
            && size <= 4
            && let Some(first) = contiguous(row_ref(&wave.regs, op.rs1), self.w, size, offset)
            && first + size * self.w <= mem.len()
        {
            // Every lane active and lane l reading `first + l * size` (a coalesced access, the
            // common case): one bounds check and a straight copy.
            let w = self.w;
            let bytes = &mem[first..first + size * w];
            let Some(out) = wave.regs.get_mut(rd..rd + w) else { return Ok(()) };
            match size {
                4 => {
                    for (o, b) in out.iter_mut().zip(bytes.as_chunks::<4>().0) {
                        *o = u32::from_le_bytes(*b);
                    }
                }
                2 => {
                    for (o, b) in out.iter_mut().zip(bytes.as_chunks::<2>().0) {
                        *o = u32::from(u16::from_le_bytes(*b));
                    }
                }
                _ => {
                    for (o, &b) in out.iter_mut().zip(bytes) {
                        *o = u32::from(b);
                    }
                }
            }
            self.count_bytes(mask, size, local, 0);
            return Ok(());
        }
        match size {
            // Every lane active: check the lowest and highest address once, then gather.
            4 if mask == self.full => {
                let addrs = row_ref(&wave.regs, op.rs1);
                let w = self.w;
                let (lo, hi) =
                    addrs[..w].iter().fold((u32::MAX, 0), |(lo, hi), &a| (lo.min(a), hi.max(a)));
                let fits =
                    i64::from(lo) + offset >= 0 && i64::from(hi) + offset + 4 <= mem.len() as i64;
                if !fits {
                    for l in 0..w {
                        at(wave, l)?;
                    }
                }
                let mut out = [0u32; LANES];
                for (o, &a) in out.iter_mut().zip(&addrs[..w]) {
                    let a = (i64::from(a) + offset) as usize;
                    let word: [u8; 4] =
                        mem.get(a..a + 4).and_then(|b| b.try_into().ok()).unwrap_or([0; 4]);
                    *o = u32::from_le_bytes(word);
                }
                self.blend(wave, op.rd, mask, out);
            }
            4 => {
                for l in lanes(mask) {
                    let a = at(wave, l)?;
                    let word: [u8; 4] = mem[a..a + 4].try_into().unwrap_or([0; 4]);
                    wave.regs[rd + l] = u32::from_le_bytes(word);
                }
            }
            1 => {
                for l in lanes(mask) {
                    let a = at(wave, l)?;
                    wave.regs[rd + l] = u32::from(mem[a]);
                }
            }
            2 => {
                for l in lanes(mask) {
                    let a = at(wave, l)?;
                    wave.regs[rd + l] = u32::from(mem[a]) | (u32::from(mem[a + 1]) << 8);
                }
            }
            _ => {
                for l in lanes(mask) {
                    let a = at(wave, l)?;
                    for (i, chunk) in mem[a..a + size].chunks_exact(4).enumerate() {
                        let word: [u8; 4] = chunk.try_into().unwrap_or([0; 4]);
                        wave.regs[rd + i * LANES + l] = u32::from_le_bytes(word);
                    }
                }
            }
        }
        self.count_bytes(mask, size, local, 0);
        Ok(())
    }

    /// Adds the bytes an access of `size` in the lanes of `mask` moved: `direction` 0 read,
    /// 1 written.
    fn count_bytes(&mut self, mask: u64, size: usize, local: bool, direction: usize) {
        let lanes = if mask == self.full { self.w as u64 } else { u64::from(mask.count_ones()) };
        let n = lanes * size as u64;
        if local {
            self.stats.local_bytes[direction] += n;
        } else {
            self.stats.device_bytes[direction] += n;
        }
    }

    fn store(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        width: u8,
        local: bool,
    ) -> Result<(), Trap> {
        let size = 1usize << width;
        let rs2 = usize::from(op.rs2) * LANES;
        let w = self.w;
        if mask == self.full
            && size == 4
            && let Some(first) = contiguous(row_ref(&wave.regs, op.rs1), w, 4, i64::from(op.imm))
        {
            let mem: &mut [u8] = if local { &mut self.local } else { &mut self.device };
            if let Some(bytes) = mem.get_mut(first..first + 4 * w) {
                // Every lane active and lane l writing `first + 4 * l`: a straight copy.
                for (b, v) in bytes.chunks_exact_mut(4).zip(&wave.regs[rs2..rs2 + w]) {
                    b.copy_from_slice(&v.to_le_bytes());
                }
                self.count_bytes(mask, size, local, 1);
                return Ok(());
            }
        }
        let addrs = self.addresses(wave, op, mask, size, local, i64::from(op.imm))?;
        let mem: &mut [u8] = if local { &mut self.local } else { &mut self.device };
        for l in lanes(mask) {
            let at = addrs[l];
            for i in 0..size.div_ceil(4) {
                let word = wave.regs[rs2 + i * LANES + l].to_le_bytes();
                let n = (size - 4 * i).min(4);
                mem[at + 4 * i..at + 4 * i + n].copy_from_slice(&word[..n]);
            }
        }
        self.count_bytes(mask, size, local, 1);
        Ok(())
    }

    fn atomic(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        kind: u8,
        ty: AtomicType,
        local: bool,
    ) -> Result<(), Trap> {
        let size = if ty.is_64() { 8 } else { 4 };
        if kind == 0 && matches!(ty, AtomicType::U32 | AtomicType::I32) {
            // Integer add, the common atomic (counters, histograms): when no lane's address
            // is out of bounds, add lane by lane without building the address table.
            let mem: &mut [u8] = if local { &mut self.local } else { &mut self.device };
            let full = mask == self.full;
            let w = self.w;
            let (base, values) = (row_ref(&wave.regs, op.rs1), row_ref(&wave.regs, op.rs2));
            let highest = if full {
                base[..w].iter().fold(0, |hi, &a| hi.max(a))
            } else {
                lanes(mask).fold(0u32, |hi, l| hi.max(base[l]))
            };
            if (highest as usize) + 4 <= mem.len() {
                let mut olds = [0u32; LANES];
                let mut each = |l: usize| {
                    let at = base[l] as usize;
                    if let Some(Ok(cell)) = mem.get_mut(at..at + 4).map(<&mut [u8; 4]>::try_from) {
                        let old = u32::from_le_bytes(*cell);
                        *cell = old.wrapping_add(values[l]).to_le_bytes();
                        olds[l] = old;
                    }
                };
                if full {
                    (0..w).for_each(&mut each);
                } else {
                    lanes(mask).for_each(each);
                }
                if op.rd != 0 {
                    put_row(&mut wave.regs, op.rd, full, mask, self.span, &olds);
                }
                self.count_bytes(mask, size, local, 0);
                self.count_bytes(mask, size, local, 1);
                return Ok(());
            }
        }
        let addrs = self.addresses(wave, op, mask, size, local, 0)?;
        let signed = matches!(ty, AtomicType::I32 | AtomicType::I64);
        // The operation on 64-bit values; 32-bit values are zero-extended, and compared
        // sign-extended where signed.
        let sx = |v: u64| if size == 4 { i64::from(v as u32 as i32) } else { v as i64 };
        let combine = |old: u64, value: u64, compare: u64| -> u64 {
            match kind {
                0 if ty == AtomicType::F32 => {
                    u64::from((f(old as u32) + f(value as u32)).to_bits())
                }
                0 => old.wrapping_add(value),
                1 => old.wrapping_sub(value),
                2 if signed => {
                    if sx(value) < sx(old) {
                        value
                    } else {
                        old
                    }
                }
                2 => old.min(value),
                3 if signed => {
                    if sx(value) > sx(old) {
                        value
                    } else {
                        old
                    }
                }
                3 => old.max(value),
                4 => old & value,
                5 => old | value,
                6 => old ^ value,
                7 => value,
                // cas: rs2 is the compare value, rs3 the new value.
                _ => {
                    if old == value {
                        compare
                    } else {
                        old
                    }
                }
            }
        };
        let mem: &mut [u8] = if local { &mut self.local } else { &mut self.device };
        let (rs2, rs3, rd) =
            (usize::from(op.rs2) * LANES, usize::from(op.rs3) * LANES, usize::from(op.rd) * LANES);
        if size == 4 {
            for l in lanes(mask) {
                let at = addrs[l];
                let Some(Ok(cell)) = mem.get_mut(at..at + 4).map(<&mut [u8; 4]>::try_from) else {
                    continue;
                };
                let old = u32::from_le_bytes(*cell);
                let new = combine(
                    u64::from(old),
                    u64::from(wave.regs[rs2 + l]),
                    u64::from(wave.regs[rs3 + l]),
                );
                *cell = (new as u32).to_le_bytes();
                if rd != 0 {
                    wave.regs[rd + l] = old;
                }
            }
        } else {
            let pair = |regs: &[u32], row: usize, l: usize| {
                u64::from(regs[row + l]) | (u64::from(regs[row + LANES + l]) << 32)
            };
            for l in lanes(mask) {
                let at = addrs[l];
                let Some(Ok(cell)) = mem.get_mut(at..at + 8).map(<&mut [u8; 8]>::try_from) else {
                    continue;
                };
                let old = u64::from_le_bytes(*cell);
                let new = combine(old, pair(&wave.regs, rs2, l), pair(&wave.regs, rs3, l));
                *cell = new.to_le_bytes();
                if rd != 0 {
                    wave.regs[rd + l] = old as u32;
                    wave.regs[rd + LANES + l] = (old >> 32) as u32;
                }
            }
        }
        self.count_bytes(mask, size, local, 0);
        self.count_bytes(mask, size, local, 1);
        Ok(())
    }

    /// Records, once per instruction, that a shuffle read an inactive or out-of-range lane
    /// (the reader got its own value, docs/emulator.md): worth knowing in a debugger.
    #[cold]
    fn note_own_value(&mut self, op: &Op, lanes: u32) {
        if self.shuffle_notes.contains(&op.pc) || self.shuffle_notes.len() >= 64 {
            return;
        }
        self.shuffle_notes.push(op.pc);
        let line =
            self.module.line_at(op.pc).map(|l| format!(" (line {})", l.line)).unwrap_or_default();
        let name = self
            .prog
            .insts
            .iter()
            .zip(self.prog.ops.iter())
            .find(|(_, o)| o.pc == op.pc)
            .and_then(|(i, _)| i.info())
            .map_or("shuffle", |info| info.mnemonic);
        self.notes.push(format!(
            "`{name}` at pc 0x{:x}{line} read an inactive or out-of-range lane for {lanes} lane(s), which got their own value",
            op.pc
        ));
    }

    fn pred_value(&self, wave: &Wave, (p, negate): (u8, bool)) -> u64 {
        let v = wave.preds[usize::from(p & 3)];
        if negate { !v } else { v }
    }

    fn innermost_loop(wave: &Wave) -> Option<usize> {
        wave.frames.iter().rposition(|f| matches!(f, Frame::Loop { .. }))
    }

    #[inline(always)]
    fn step(&mut self, wave: &mut Wave, op: &Op, mask: u64) -> Result<(), Trap> {
        let w = self.w;
        match op.code {
            Code::Iadd => self.map2(wave, op, mask, u32::wrapping_add),
            Code::Isub => self.map2(wave, op, mask, u32::wrapping_sub),
            Code::Imul => self.map2(wave, op, mask, u32::wrapping_mul),
            Code::ImulHi => self.map2(wave, op, mask, |a, b| {
                ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
            }),
            Code::Imad => self.map3(wave, op, mask, |a, b, c| a.wrapping_mul(b).wrapping_add(c)),
            Code::Idiv => self.map2(wave, op, mask, |a, b| {
                if b == 0 { u32::MAX } else { (a as i32).wrapping_div(b as i32) as u32 }
            }),
            Code::Imod => self.map2(wave, op, mask, |a, b| {
                if b == 0 { a } else { (a as i32).wrapping_rem(b as i32) as u32 }
            }),
            Code::Ineg => self.map1(wave, op, mask, |a| (a as i32).wrapping_neg() as u32),
            Code::Iabs => self.map1(wave, op, mask, |a| (a as i32).wrapping_abs() as u32),
            Code::Imin => self.map2(wave, op, mask, |a, b| (a as i32).min(b as i32) as u32),
            Code::Imax => self.map2(wave, op, mask, |a, b| (a as i32).max(b as i32) as u32),
            Code::Iclamp => self
                .map3(wave, op, mask, |a, lo, hi| (a as i32).max(lo as i32).min(hi as i32) as u32),
            Code::Umin => self.map2(wave, op, mask, u32::min),
            Code::Umax => self.map2(wave, op, mask, u32::max),
            Code::Fadd => self.map2(wave, op, mask, |a, b| bits(f(a) + f(b))),
            Code::Fsub => self.map2(wave, op, mask, |a, b| bits(f(a) - f(b))),
            Code::Fmul => self.map2(wave, op, mask, |a, b| bits(f(a) * f(b))),
            Code::Fma => self.fma(wave, op, mask),
            Code::Fdiv => self.map2(wave, op, mask, |a, b| bits(f(a) / f(b))),
            Code::Fneg => self.map1(wave, op, mask, |a| a ^ 0x8000_0000),
            Code::Fabs => self.map1(wave, op, mask, |a| a & 0x7FFF_FFFF),
            Code::Fmin => self.map2(wave, op, mask, |a, b| bits(fmin(f(a), f(b)))),
            Code::Fmax => self.map2(wave, op, mask, |a, b| bits(fmax(f(a), f(b)))),
            Code::Fclamp => {
                self.map3(wave, op, mask, |a, lo, hi| bits(fmin(fmax(f(a), f(lo)), f(hi))))
            }
            Code::Fsqrt => self.map1(wave, op, mask, |a| bits(f(a).sqrt())),
            Code::Frsqrt => {
                self.map1(wave, op, mask, |a| bits((1.0 / f64::from(f(a)).sqrt()) as f32))
            }
            Code::Frcp => self.map1(wave, op, mask, |a| bits(1.0 / f(a))),
            Code::Ffloor => self.map1(wave, op, mask, |a| bits(f(a).floor())),
            Code::Fceil => self.map1(wave, op, mask, |a| bits(f(a).ceil())),
            Code::Fround => self.map1(wave, op, mask, |a| bits(f(a).round_ties_even())),
            Code::Ftrunc => self.map1(wave, op, mask, |a| bits(f(a).trunc())),
            // x - floor(x), kept below 1.0 where the subtraction rounds up to it (tiny
            // negative x), as GPUs' fract() does.
            Code::Ffract => self.map1(wave, op, mask, |a| {
                let x = f(a);
                let r = x - x.floor();
                bits(if r >= 1.0 { f32::from_bits(0x3F7F_FFFF) } else { r })
            }),
            Code::Fsin => self.map1(wave, op, mask, |a| bits(f64::from(f(a)).sin() as f32)),
            Code::Fcos => self.map1(wave, op, mask, |a| bits(f64::from(f(a)).cos() as f32)),
            Code::Fexp2 => self.map1(wave, op, mask, |a| bits(f64::from(f(a)).exp2() as f32)),
            Code::Flog2 => self.map1(wave, op, mask, |a| bits(f64::from(f(a)).log2() as f32)),
            Code::And => self.map2(wave, op, mask, |a, b| a & b),
            Code::Or => self.map2(wave, op, mask, |a, b| a | b),
            Code::Xor => self.map2(wave, op, mask, |a, b| a ^ b),
            Code::Not => self.map1(wave, op, mask, |a| !a),
            Code::Shl => self.map2(wave, op, mask, |a, b| a << (b & 31)),
            Code::Shr => self.map2(wave, op, mask, |a, b| a >> (b & 31)),
            Code::Sar => self.map2(wave, op, mask, |a, b| ((a as i32) >> (b & 31)) as u32),
            Code::Bitcount => self.map1(wave, op, mask, u32::count_ones),
            Code::Bitfind => self
                .map1(wave, op, mask, |a| if a == 0 { u32::MAX } else { 31 - a.leading_zeros() }),
            Code::Bitrev => self.map1(wave, op, mask, u32::reverse_bits),
            Code::Bfe => self.map3(wave, op, mask, |a, off, width| {
                let width = (width & 0xFF).min(32);
                let v = a >> (off & 31);
                if width >= 32 { v } else { v & ((1u32 << width) - 1) }
            }),
            Code::Bfi => {
                for l in lanes(mask) {
                    let insert = self.reg(wave, op.rs1, l);
                    let base = self.reg(wave, op.rs2, l);
                    let off = self.reg(wave, op.rs3, l) & 31;
                    let width = (self.reg(wave, op.rs4, l) & 0xFF).min(32);
                    let field = if width >= 32 { u32::MAX } else { (1u32 << width) - 1 };
                    let m = field.checked_shl(off).unwrap_or(0);
                    let v = (base & !m) | (insert.checked_shl(off).unwrap_or(0) & m);
                    wave.regs[usize::from(op.rd) * LANES + l] = v;
                }
            }
            Code::Icmp(c) => {
                let n = self.span;
                let (a, b) = (&self.src(wave, op.rs1)[..n], &self.src(wave, op.rs2)[..n]);
                // One loop per condition, so that no lane pays for a jump table.
                let s = |x: u32| x as i32;
                let bits = match c {
                    0 => compare_bits(a, b, |x, y| x == y),
                    1 => compare_bits(a, b, |x, y| x != y),
                    2 => compare_bits(a, b, |x, y| s(x) < s(y)),
                    3 => compare_bits(a, b, |x, y| s(x) <= s(y)),
                    4 => compare_bits(a, b, |x, y| s(x) > s(y)),
                    _ => compare_bits(a, b, |x, y| s(x) >= s(y)),
                };
                set_pred_bits(wave, op.rd, mask, bits);
            }
            Code::Ucmp(c) => {
                let n = self.span;
                let (a, b) = (&self.src(wave, op.rs1)[..n], &self.src(wave, op.rs2)[..n]);
                let bits = if c == 0 {
                    compare_bits(a, b, |x, y| x < y)
                } else {
                    compare_bits(a, b, |x, y| x <= y)
                };
                set_pred_bits(wave, op.rd, mask, bits);
            }
            Code::Fcmp(c) => {
                let n = self.span;
                let (a, b) = (&self.src(wave, op.rs1)[..n], &self.src(wave, op.rs2)[..n]);
                let bits = match c {
                    0 => compare_bits(a, b, |x, y| f(x) == f(y)),
                    1 => compare_bits(a, b, |x, y| f(x) < f(y)),
                    2 => compare_bits(a, b, |x, y| f(x) <= f(y)),
                    3 => compare_bits(a, b, |x, y| f(x) > f(y)),
                    4 => compare_bits(a, b, |x, y| f(x) != f(y)),
                    5 => compare_bits(a, b, |x, y| !f(x).is_nan() && !f(y).is_nan()),
                    _ => compare_bits(a, b, |x, y| f(x).is_nan() || f(y).is_nan()),
                };
                set_pred_bits(wave, op.rd, mask, bits);
            }
            Code::Select => {
                let p = self.pred_value(wave, op.pred);
                for l in lanes(mask) {
                    let v = if p >> l & 1 == 1 {
                        self.reg(wave, op.rs1, l)
                    } else {
                        self.reg(wave, op.rs2, l)
                    };
                    wave.regs[usize::from(op.rd) * LANES + l] = v;
                }
            }
            // clamp(x, 0.0, 1.0) with the fmin/fmax rules: NaN and -0.0 give +0.0.
            Code::Fsat => self.map1(wave, op, mask, |a| bits(fmin(fmax(f(a), 0.0), 1.0))),
            Code::LocalLoad(width) => self.load(wave, op, mask, width, true)?,
            Code::LocalStore(width) => self.store(wave, op, mask, width, true)?,
            Code::DeviceLoad(width) => self.load(wave, op, mask, width, false)?,
            Code::DeviceStore(width) => self.store(wave, op, mask, width, false)?,
            Code::Atomic(kind, ty, local) => self.atomic(wave, op, mask, kind, ty, local)?,
            Code::Shuffle
            | Code::ShuffleUp
            | Code::ShuffleDown
            | Code::ShuffleXor
            | Code::Broadcast => {
                let src = *self.src(wave, op.rs1);
                let sel = *self.src(wave, op.rs2);
                let mut own = 0u32;
                for l in lanes(mask) {
                    let s = u64::from(sel[l]);
                    let from = match op.code {
                        Code::ShuffleUp => (l as u64).checked_sub(s),
                        Code::ShuffleDown => Some(l as u64 + s),
                        Code::ShuffleXor => Some(l as u64 ^ s),
                        _ => Some(s),
                    };
                    let v = match from {
                        Some(from) if from < w as u64 && mask >> from & 1 == 1 => {
                            src[from as usize]
                        }
                        _ => {
                            own += 1;
                            src[l]
                        }
                    };
                    wave.regs[usize::from(op.rd) * LANES + l] = v;
                }
                if own > 0 {
                    self.note_own_value(op, own);
                }
            }
            Code::Ballot => {
                let value = (self.pred_value(wave, op.pred) & mask) as u32;
                self.blend(wave, op.rd, mask, [value; LANES]);
            }
            Code::Any | Code::All => {
                let p = self.pred_value(wave, op.pred) & mask;
                let result = if op.code == Code::Any { p != 0 } else { p == mask };
                self.set_pred(wave, op.rd, mask, |_| result);
            }
            Code::PrefixSum => {
                let src = *self.src(wave, op.rs1);
                let mut sum = 0u32;
                for l in lanes(mask) {
                    wave.regs[usize::from(op.rd) * LANES + l] = sum;
                    sum = sum.wrapping_add(src[l]);
                }
            }
            Code::Reduce(kind) => {
                if mask != 0 {
                    let src = self.src(wave, op.rs1);
                    // With every lane active the values are one contiguous run, which
                    // vectorises; otherwise only the active lanes are visited.
                    let total = if mask == self.full {
                        reduce_values(kind, src[..w].iter().copied())
                    } else {
                        reduce_values(kind, lanes(mask).map(|l| src[l]))
                    };
                    self.blend(wave, op.rd, mask, [total; LANES]);
                }
            }
            Code::If => {
                let p = self.pred_value(wave, op.pred);
                let taken = wave.active & p;
                wave.frames.push(Frame::If {
                    saved: wave.active,
                    else_mask: wave.active & !p,
                    at: (wave.pc - 1) as u32,
                });
                wave.active = taken;
                if taken == 0 {
                    // Skip the then-body: go to the else (which activates its lanes) or endif.
                    wave.pc = op.target as usize;
                }
            }
            Code::Else => {
                if let Some(Frame::If { else_mask, .. }) = wave.frames.last().copied() {
                    wave.active = else_mask;
                    if else_mask == 0 {
                        wave.pc = op.target as usize;
                    }
                }
            }
            Code::Endif => {
                if let Some(Frame::If { saved, .. }) = wave.frames.pop() {
                    wave.active = saved & wave.alive;
                    self.settle(wave);
                }
            }
            Code::Loop => {
                wave.frames.push(Frame::Loop {
                    saved: wave.active,
                    cont: 0,
                    at: (wave.pc - 1) as u32,
                });
            }
            Code::Break | Code::Continue => {
                let m = wave.active & self.pred_value(wave, op.pred);
                if m != 0 {
                    let Some(at) = Self::innermost_loop(wave) else {
                        return Err(self.trap(
                            Some(wave),
                            Some(op),
                            None,
                            "invalid kernel: `break` outside a loop".into(),
                        ));
                    };
                    Self::retire(wave, m, at + 1);
                    if op.code == Code::Continue
                        && let Frame::Loop { cont, .. } = &mut wave.frames[at]
                    {
                        *cont |= m;
                    }
                    wave.active &= !m;
                    // Lanes still waiting in enclosing blocks of the loop body (an `else`
                    // not yet run) get their turn; otherwise this ends at `endloop`.
                    self.settle(wave);
                }
            }
            Code::Endloop => {
                let Some(Frame::Loop { saved, cont, at }) = wave.frames.last().copied() else {
                    return Err(self.trap(
                        Some(wave),
                        Some(op),
                        None,
                        "invalid kernel: `endloop` without a loop".into(),
                    ));
                };
                let again = (wave.active | cont) & wave.alive;
                if again != 0 {
                    wave.active = again;
                    if let Some(Frame::Loop { cont, .. }) = wave.frames.last_mut() {
                        *cont = 0;
                    }
                    wave.pc = at as usize + 1;
                } else {
                    wave.frames.pop();
                    wave.active = saved & wave.alive;
                    self.settle(wave);
                }
            }
            Code::Call => {
                let depth = wave.frames.iter().filter(|f| matches!(f, Frame::Call { .. })).count();
                if depth >= self.max_call_depth {
                    return Err(self.trap(
                        Some(wave),
                        Some(op),
                        None,
                        format!(
                            "call depth exceeded: more than MAX_CALL_DEPTH = {} nested calls",
                            self.max_call_depth
                        ),
                    ));
                }
                wave.frames.push(Frame::Call { saved: wave.active, ret: wave.pc as u32 });
                wave.pc = op.target as usize;
            }
            Code::Return => {
                let Some(at) = wave.frames.iter().rposition(|f| matches!(f, Frame::Call { .. }))
                else {
                    return Err(self.trap(
                        Some(wave),
                        Some(op),
                        None,
                        "`return` outside a function: no call is active".into(),
                    ));
                };
                let m = wave.active;
                Self::retire(wave, m, at + 1);
                wave.active = 0;
                // Lanes still waiting inside the function run on; when none are left, the
                // call frame is reached and the call returns.
                self.settle(wave);
            }
            Code::Barrier => {
                if wave.active != wave.alive {
                    return Err(self.trap(
                        Some(wave),
                        Some(op),
                        None,
                        format!(
                            "barrier in divergent control flow: {} of {} live lanes reached it",
                            wave.active.count_ones(),
                            wave.alive.count_ones()
                        ),
                    ));
                }
                self.stats.barrier_waits += 1;
                wave.state = State::AtBarrier;
            }
            Code::Fence | Code::Wait | Code::Nop => {}
            Code::Halt => {
                wave.alive &= !mask;
                Self::retire(wave, mask, 0);
                wave.active &= !mask;
                self.settle(wave);
            }
            Code::CvtF32I32 => self.map1(wave, op, mask, |a| bits(a as i32 as f32)),
            Code::CvtF32U32 => self.map1(wave, op, mask, |a| bits(a as f32)),
            Code::CvtI32F32 => self.map1(wave, op, mask, |a| f(a) as i32 as u32),
            Code::CvtU32F32 => self.map1(wave, op, mask, |a| f(a) as u32),
            Code::CvtF32F16 => {
                let hi = op.imm & 2 != 0;
                self.map1(wave, op, mask, |a| bits(half_of(a, hi) as f32));
            }
            Code::CvtF16F32 => {
                let hi = op.imm & 1 != 0;
                for l in lanes(mask) {
                    let v = f64::from(f(self.reg(wave, op.rs1, l)));
                    let d = usize::from(op.rd) * LANES + l;
                    wave.regs[d] = set_half(wave.regs[d], hi, v);
                }
            }
            Code::CvtF32F64 => {
                for l in lanes(mask) {
                    let v = f64::from_bits(self.pair(wave, op.rs1, l)) as f32;
                    wave.regs[usize::from(op.rd) * LANES + l] = bits(v);
                }
            }
            Code::CvtF64F32 => {
                for l in lanes(mask) {
                    let v = f64::from(f(self.reg(wave, op.rs1, l)));
                    self.set_pair(wave, op.rd, l, bits64(v));
                }
            }
            Code::Hadd | Code::Hsub | Code::Hmul | Code::Hma => {
                let sel = op.imm;
                for l in lanes(mask) {
                    let a = half_of(self.reg(wave, op.rs1, l), sel & 2 != 0);
                    let b = half_of(self.reg(wave, op.rs2, l), sel & 4 != 0);
                    let v = match op.code {
                        Code::Hadd => a + b,
                        Code::Hsub => a - b,
                        Code::Hmul => a * b,
                        _ => a.mul_add(b, half_of(self.reg(wave, op.rs3, l), sel & 8 != 0)),
                    };
                    let d = usize::from(op.rd) * LANES + l;
                    wave.regs[d] = set_half(wave.regs[d], sel & 1 != 0, v);
                }
            }
            Code::Hadd2 | Code::Hmul2 | Code::Hma2 => {
                for l in lanes(mask) {
                    let (a, b, c) = (
                        self.reg(wave, op.rs1, l),
                        self.reg(wave, op.rs2, l),
                        self.reg(wave, op.rs3, l),
                    );
                    let mut out = 0u32;
                    for hi in [false, true] {
                        let (x, y) = (half_of(a, hi), half_of(b, hi));
                        let v = match op.code {
                            Code::Hadd2 => x + y,
                            Code::Hmul2 => x * y,
                            _ => x.mul_add(y, half_of(c, hi)),
                        };
                        out = set_half(out, hi, v);
                    }
                    wave.regs[usize::from(op.rd) * LANES + l] = out;
                }
            }
            Code::Dadd => self.map_f64(wave, op, mask, |a, b, _| a + b),
            Code::Dsub => self.map_f64(wave, op, mask, |a, b, _| a - b),
            Code::Dmul => self.map_f64(wave, op, mask, |a, b, _| a * b),
            Code::Dma => self.map_f64(wave, op, mask, f64::mul_add),
            Code::Ddiv => self.map_f64(wave, op, mask, |a, b, _| a / b),
            Code::Dsqrt => self.map_f64(wave, op, mask, |a, _, _| a.sqrt()),
            Code::Mma => {
                return Err(self.trap(
                    Some(wave),
                    Some(op),
                    None,
                    "CAP_MMA is not supported by the emulator".into(),
                ));
            }
            Code::Mov => self.map1(wave, op, mask, |a| a),
            Code::MovSpecial => {
                let which = op.rs1;
                let (full, span) = (mask == self.full, self.span);
                // Thread ids and lane ids differ per lane; the rest is one value.
                let src = match which {
                    0..=2 => &wave.tid[usize::from(which)],
                    4 => &LANE_IDS,
                    _ => {
                        &[match which {
                            3 => wave.id,
                            5..=7 => self.wg_id[usize::from(which - 5)],
                            8..=10 => self.wg_size[usize::from(which - 8)],
                            11..=13 => self.grid[usize::from(which - 11)],
                            14 => w as u32,
                            _ => self.num_waves,
                        }; LANES]
                    }
                };
                put_row(&mut wave.regs, op.rd, full, mask, span, src);
            }
        }
        Ok(())
    }
}

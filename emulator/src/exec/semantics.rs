//! What each instruction does to a wave: [`Exec::step`] is one `match` over the decoded
//! opcode (integer, float, bitwise, compare, memory, wave operations, control flow,
//! conversions, half and double precision), using the row operations and the memory room.

use wave_isa::{FloatCond, IntCond, ReduceOp, Shuffle, UintCond};

use crate::Trap;
use crate::decode::{Code, Op};

use super::float::{
    bf16_from_f32, bf16_of, bf16_sum, bits, bits64, f, fmax, fmin, half_of, set_bf16, set_half,
};
use super::rows::{LANE_IDS, lanes, put_row, set_pred_bits};
use super::{Exec, Frame, LANES, State, Wave};

/// `wave_reduce` of `values` by operation `kind` (add, signed min, signed max, and, or,
/// xor); one loop per operation, no per-lane dispatch.
#[inline(always)]
pub(super) fn reduce_values(kind: ReduceOp, values: impl Iterator<Item = u32>) -> u32 {
    match kind {
        ReduceOp::Add => values.fold(0u32, u32::wrapping_add),
        ReduceOp::Min => values.map(|v| v as i32).min().unwrap_or(0) as u32,
        ReduceOp::Max => values.map(|v| v as i32).max().unwrap_or(0) as u32,
        ReduceOp::And => values.fold(u32::MAX, |a, v| a & v),
        ReduceOp::Or => values.fold(0, |a, v| a | v),
        ReduceOp::Xor => values.fold(0, |a, v| a ^ v),
    }
}

/// One bit per lane: whether `test` holds for the lane's pair of values.
#[inline(always)]
pub(super) fn compare_bits(a: &[u32], b: &[u32], test: impl Fn(u32, u32) -> bool) -> u64 {
    // Four lanes at a time: one vector compare whose four results the baseline x86-64
    // target packs with one `movmskps`.
    let mut bits = 0u64;
    let pieces = a.as_chunks::<4>().0.iter().zip(b.as_chunks::<4>().0);
    for (c, (x, y)) in pieces.enumerate() {
        let mut nibble = 0u64;
        for i in 0..4 {
            nibble |= u64::from(test(x[i], y[i])) << i;
        }
        bits |= nibble << (c * 4);
    }
    bits
}

impl Exec {
    /// Records, once per instruction, that a shuffle read an inactive or out-of-range lane
    /// (the reader got its own value, docs/emulator.md): worth knowing in a debugger.
    #[cold]
    pub(super) fn note_own_value(&mut self, op: &Op, lanes: u32) {
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

    pub(super) fn pred_value(&self, wave: &Wave, (p, negate): (u8, bool)) -> u64 {
        let v = wave.preds[usize::from(p & 3)];
        if negate { !v } else { v }
    }

    pub(super) fn innermost_loop(wave: &Wave) -> Option<usize> {
        wave.frames.iter().rposition(|f| matches!(f, Frame::Loop { .. }))
    }

    #[inline(always)]
    pub(super) fn step(&mut self, wave: &mut Wave, op: &Op, mask: u64) -> Result<(), Trap> {
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
                    IntCond::Eq => compare_bits(a, b, |x, y| x == y),
                    IntCond::Ne => compare_bits(a, b, |x, y| x != y),
                    IntCond::Lt => compare_bits(a, b, |x, y| s(x) < s(y)),
                    IntCond::Le => compare_bits(a, b, |x, y| s(x) <= s(y)),
                    IntCond::Gt => compare_bits(a, b, |x, y| s(x) > s(y)),
                    IntCond::Ge => compare_bits(a, b, |x, y| s(x) >= s(y)),
                };
                set_pred_bits(wave, op.rd, mask, bits);
            }
            Code::Ucmp(c) => {
                let n = self.span;
                let (a, b) = (&self.src(wave, op.rs1)[..n], &self.src(wave, op.rs2)[..n]);
                let bits = match c {
                    UintCond::Lt => compare_bits(a, b, |x, y| x < y),
                    UintCond::Le => compare_bits(a, b, |x, y| x <= y),
                };
                set_pred_bits(wave, op.rd, mask, bits);
            }
            Code::Fcmp(c) => {
                let n = self.span;
                let (a, b) = (&self.src(wave, op.rs1)[..n], &self.src(wave, op.rs2)[..n]);
                let bits = match c {
                    FloatCond::Eq => compare_bits(a, b, |x, y| f(x) == f(y)),
                    FloatCond::Lt => compare_bits(a, b, |x, y| f(x) < f(y)),
                    FloatCond::Le => compare_bits(a, b, |x, y| f(x) <= f(y)),
                    FloatCond::Gt => compare_bits(a, b, |x, y| f(x) > f(y)),
                    FloatCond::Ne => compare_bits(a, b, |x, y| f(x) != f(y)),
                    FloatCond::Ord => compare_bits(a, b, |x, y| !f(x).is_nan() && !f(y).is_nan()),
                    FloatCond::Unord => compare_bits(a, b, |x, y| f(x).is_nan() || f(y).is_nan()),
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
            Code::LocalLoad(width) => {
                if !self.load_row(wave, op, mask, width, true) {
                    self.load(wave, op, mask, width, true)?;
                }
            }
            Code::LocalStore(width) => self.store(wave, op, mask, width, true)?,
            Code::DeviceLoad(width) => {
                if !self.load_row(wave, op, mask, width, false) {
                    self.load(wave, op, mask, width, false)?;
                }
            }
            Code::DeviceStore(width) => self.store(wave, op, mask, width, false)?,
            Code::Atomic(kind, ty, local) => {
                // A 32-bit integer add (counters, histograms) takes a short path.
                let counter = kind == wave_isa::AtomicOp::Add
                    && matches!(ty, wave_isa::AtomicType::U32 | wave_isa::AtomicType::I32);
                if !(counter && self.add_words(wave, op, mask, local)) {
                    self.atomic(wave, op, mask, kind, ty, local)?;
                }
            }
            Code::Shuffle(from) => self.shuffle(wave, op, mask, from),
            Code::Ballot => {
                let value = (self.pred_value(wave, op.pred) & mask) as u32;
                self.blend(wave, op.rd, mask, &[value; LANES]);
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
                    self.blend(wave, op.rd, mask, &[total; LANES]);
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
            Code::CvtF32Bf16 => {
                let hi = op.imm & 2 != 0;
                self.map1(wave, op, mask, |a| bits(bf16_of(a, hi) as f32));
            }
            Code::CvtBf16F32 => {
                let hi = op.imm & 1 != 0;
                for l in lanes(mask) {
                    let v = bf16_from_f32(f(self.reg(wave, op.rs1, l)));
                    let d = usize::from(op.rd) * LANES + l;
                    wave.regs[d] = set_bf16(wave.regs[d], hi, v);
                }
            }
            Code::Badd => self.bf16(wave, op, mask, None, |x, y, _| bf16_sum(x, y)),
            Code::Bsub => self.bf16(wave, op, mask, None, |x, y, _| bf16_sum(x, -y)),
            Code::Bmul => self.bf16(wave, op, mask, None, |x, y, _| bf16_sum(x * y, -0.0)),
            Code::Bma => self.bf16(wave, op, mask, Some(op.rs3), |x, y, z| bf16_sum(x * y, z)),
            Code::Badd2 => self.bf16x2(wave, op, mask, |x, y, _| bf16_sum(x, y)),
            Code::Bmul2 => self.bf16x2(wave, op, mask, |x, y, _| bf16_sum(x * y, -0.0)),
            Code::Bma2 => self.bf16x2(wave, op, mask, |x, y, z| bf16_sum(x * y, z)),
            Code::Hadd => self.half(wave, op, mask, None, |x, y, _| x + y),
            Code::Hsub => self.half(wave, op, mask, None, |x, y, _| x - y),
            Code::Hmul => self.half(wave, op, mask, None, |x, y, _| x * y),
            Code::Hma => self.half(wave, op, mask, Some(op.rs3), f64::mul_add),
            Code::Hadd2 => self.half2(wave, op, mask, |x, y, _| x + y),
            Code::Hmul2 => self.half2(wave, op, mask, |x, y, _| x * y),
            Code::Hma2 => self.half2(wave, op, mask, f64::mul_add),
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
                            15 => self.num_waves,
                            // sr_mma_supported, _m, _n, _k: the emulator has no CAP_MMA.
                            _ => 0,
                        }; LANES]
                    }
                };
                put_row(&mut wave.regs, op.rd, full, mask, span, src);
            }
        }
        Ok(())
    }

    /// The shuffles and `wave_broadcast`: each lane of `mask` takes the value of the lane
    /// `which` names of `rs1`, or keeps its own where that lane is out of range or inactive.
    fn shuffle(&mut self, wave: &mut Wave, op: &Op, mask: u64, which: Shuffle) {
        let w = self.w;
        let src = *self.src(wave, op.rs1);
        let sel = *self.src(wave, op.rs2);
        let mut own = 0u32;
        for l in lanes(mask) {
            let (lane, s) = (l as u64, u64::from(sel[l]));
            let from = match which {
                Shuffle::Index | Shuffle::Broadcast => Some(s),
                Shuffle::Up => lane.checked_sub(s),
                Shuffle::Down => Some(lane + s),
                Shuffle::Xor => Some(lane ^ s),
            };
            let v = match from {
                Some(from) if from < w as u64 && mask >> from & 1 == 1 => src[from as usize],
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

    /// `hadd`, `hsub`, `hmul`, `hma`: `f` of the binary16 halves of `rs1`, `rs2` and, for
    /// `hma`, `third` (`rs3`) that the modifier selects, into the selected half of `rd`.
    #[inline(never)]
    fn half(
        &self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        third: Option<u16>,
        f: impl Fn(f64, f64, f64) -> f64,
    ) {
        let sel = op.imm;
        for l in lanes(mask) {
            let a = half_of(self.reg(wave, op.rs1, l), sel & 2 != 0);
            let b = half_of(self.reg(wave, op.rs2, l), sel & 4 != 0);
            let c = third.map_or(0.0, |rs3| half_of(self.reg(wave, rs3, l), sel & 8 != 0));
            let d = usize::from(op.rd) * LANES + l;
            wave.regs[d] = set_half(wave.regs[d], sel & 1 != 0, f(a, b, c));
        }
    }

    /// `hadd2`, `hmul2`, `hma2`: `f` of each pair of binary16 halves of `rs1`, `rs2`, `rs3`.
    #[inline(never)]
    fn half2(&self, wave: &mut Wave, op: &Op, mask: u64, f: impl Fn(f64, f64, f64) -> f64) {
        for l in lanes(mask) {
            let (a, b, c) =
                (self.reg(wave, op.rs1, l), self.reg(wave, op.rs2, l), self.reg(wave, op.rs3, l));
            let mut out = 0u32;
            for hi in [false, true] {
                out = set_half(out, hi, f(half_of(a, hi), half_of(b, hi), half_of(c, hi)));
            }
            wave.regs[usize::from(op.rd) * LANES + l] = out;
        }
    }

    /// `badd`, `bsub`, `bmul`, `bma`: `f` of the bfloat16 halves of `rs1`, `rs2` (and `rs3`)
    /// that the modifier selects, into the selected half of `rd`.
    #[inline(never)]
    fn bf16(
        &self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        third: Option<u16>,
        f: impl Fn(f64, f64, f64) -> u16,
    ) {
        let sel = op.imm;
        for l in lanes(mask) {
            let a = bf16_of(self.reg(wave, op.rs1, l), sel & 2 != 0);
            let b = bf16_of(self.reg(wave, op.rs2, l), sel & 4 != 0);
            let c = third.map_or(0.0, |rs3| bf16_of(self.reg(wave, rs3, l), sel & 8 != 0));
            let d = usize::from(op.rd) * LANES + l;
            wave.regs[d] = set_bf16(wave.regs[d], sel & 1 != 0, f(a, b, c));
        }
    }

    /// `badd2`, `bmul2`, `bma2`: `f` of each pair of bfloat16 halves of `rs1`, `rs2`, `rs3`.
    #[inline(never)]
    fn bf16x2(&self, wave: &mut Wave, op: &Op, mask: u64, f: impl Fn(f64, f64, f64) -> u16) {
        for l in lanes(mask) {
            let (a, b, c) =
                (self.reg(wave, op.rs1, l), self.reg(wave, op.rs2, l), self.reg(wave, op.rs3, l));
            let mut out = 0u32;
            for hi in [false, true] {
                out = set_bf16(out, hi, f(bf16_of(a, hi), bf16_of(b, hi), bf16_of(c, hi)));
            }
            wave.regs[usize::from(op.rd) * LANES + l] = out;
        }
    }
}

//! Data instructions (integer, float, bitwise, compare, load and store, conversion, half and
//! double precision, special registers), each as the C++ that gives the emulator's result.

use wave_isa::{FloatCond, IntCond, MemWidth, Opcode, Operation, UintCond};

use crate::structure::{Instr, mnemonic};
use crate::{Problem, codes};

use super::{Dialect, Writer, hex, r};

impl Writer<'_, '_> {
    /// The second source: `rs2` or the immediate.
    pub(super) fn b(&self, i: &Instr) -> String {
        match i.imm2() {
            Some(v) => hex(v),
            None => r(i.inst.rs2),
        }
    }

    pub(super) fn data(&mut self, i: &Instr) -> Vec<String> {
        let d = self.d();
        let (u32t, _, _, _) = d.types();
        let mut l = Vec::new();
        if crate::ptx::uses_local(i) && self.program.kernel.local_memory == 0 {
            match self.trap_line("local memory access in a kernel without local memory") {
                Some(t) => {
                    self.problems.push(crate::ptx::traps_without_local(self.program, i));
                    l.push(t);
                }
                None => self.unsupported(i, "the kernel declares no local memory, so the emulator traps here, and Metal has no way to stop a kernel with an error"),
            }
            return l;
        }
        let rd = r(i.inst.rd);
        let a = r(i.inst.rs1);
        let b = self.b(i);
        let c = r(i.rs3());
        let f = |x: &str| format!("wave_f({x})");
        let pd = format!("p{}", i.inst.rd & 3);
        let fbin = |op: &str| format!("{rd} = wave_u({} {op} {});", f(&a), f(&b));
        let pair = |n: u8| format!("wave_d({}, {})", r(n), r(n + 1));
        match i.op {
            Operation::Iadd => l.push(format!("{rd} = {a} + {b};")),
            Operation::Isub => l.push(format!("{rd} = {a} - {b};")),
            Operation::Imul => l.push(format!("{rd} = {a} * {b};")),
            Operation::ImulHi => l.push(format!("{rd} = wave_mulhi({a}, {b});")),
            Operation::Imad => l.push(format!("{rd} = {a} * {} + {c};", r(i.inst.rs2))),
            Operation::Idiv => l.push(format!("{rd} = wave_idiv({a}, {b});")),
            Operation::Imod => l.push(format!("{rd} = wave_imod({a}, {b});")),
            Operation::Ineg => l.push(format!("{rd} = 0u - {a};")),
            Operation::Iabs => l.push(format!("{rd} = wave_iabs({a});")),
            Operation::Imin => l.push(format!("{rd} = wave_imin({a}, {b});")),
            Operation::Imax => l.push(format!("{rd} = wave_imax({a}, {b});")),
            Operation::Iclamp => l.push(format!("{rd} = wave_imin(wave_imax({a}, {}), {c});", r(i.inst.rs2))),
            Operation::Umin => l.push(format!("{rd} = {a} < {b} ? {a} : {b};")),
            Operation::Umax => l.push(format!("{rd} = {a} > {b} ? {a} : {b};")),
            Operation::Fadd => l.push(fbin("+")),
            Operation::Fsub => l.push(fbin("-")),
            Operation::Fmul => l.push(fbin("*")),
            Operation::Fdiv => l.push(fbin("/")),
            Operation::Fma => l.push(format!("{rd} = wave_u(wave_fma({}, {}, {}));", f(&a), f(&r(i.inst.rs2)), f(&c))),
            Operation::Fneg => l.push(format!("{rd} = {a} ^ 0x80000000u;")),
            Operation::Fabs => l.push(format!("{rd} = {a} & 0x7FFFFFFFu;")),
            Operation::Fmin => l.push(format!("{rd} = wave_fmin({a}, {b});")),
            Operation::Fmax => l.push(format!("{rd} = wave_fmax({a}, {b});")),
            Operation::Fclamp => l.push(format!("{rd} = wave_fmin(wave_fmax({a}, {}), {c});", r(i.inst.rs2))),
            Operation::Fsat => l.push(format!("{rd} = wave_fmin(wave_fmax({a}, 0u), 0x3F800000u);")),
            Operation::Fsqrt => l.push(format!("{rd} = wave_u(wave_sqrt({}));", f(&a))),
            Operation::Frsqrt => {
                if d == Dialect::Metal {
                    self.differs(i, "1 / precise::sqrt(x) rounds twice (no binary64 on Apple GPUs), so it can be 1 ULP from the emulator's result");
                }
                l.push(format!("{rd} = wave_u(wave_rsqrt({}));", f(&a)));
            }
            Operation::Frcp => l.push(format!("{rd} = wave_u(1.0f / {});", f(&a))),
            Operation::Ffloor => l.push(format!("{rd} = wave_u(wave_floor({}));", f(&a))),
            Operation::Fceil => l.push(format!("{rd} = wave_u(wave_ceil({}));", f(&a))),
            Operation::Fround => l.push(format!("{rd} = wave_u(wave_rint({}));", f(&a))),
            Operation::Ftrunc => l.push(format!("{rd} = wave_u(wave_trunc({}));", f(&a))),
            Operation::Ffract => l.push(format!("{rd} = wave_fract({a});")),
            Operation::Fsin => self.math(i, &mut l, "wave_sin"),
            Operation::Fcos => self.math(i, &mut l, "wave_cos"),
            Operation::Fexp2 => self.math(i, &mut l, "wave_exp2"),
            Operation::Flog2 => self.math(i, &mut l, "wave_log2"),
            Operation::And => l.push(format!("{rd} = {a} & {b};")),
            Operation::Or => l.push(format!("{rd} = {a} | {b};")),
            Operation::Xor => l.push(format!("{rd} = {a} ^ {b};")),
            Operation::Not => l.push(format!("{rd} = ~{a};")),
            Operation::Shl => l.push(format!("{rd} = {a} << ({b} & 31u);")),
            Operation::Shr => l.push(format!("{rd} = {a} >> ({b} & 31u);")),
            Operation::Sar => l.push(format!("{rd} = ({u32t})(({}){a} >> ({b} & 31u));", d.types().1)),
            Operation::Bitcount => l.push(format!("{rd} = wave_popc({a});")),
            Operation::Bitfind => l.push(format!("{rd} = wave_bitfind({a});")),
            Operation::Bitrev => l.push(format!("{rd} = wave_brev({a});")),
            Operation::Bfe => l.push(format!("{rd} = wave_bfe({a}, {}, {c});", r(i.inst.rs2))),
            Operation::Bfi => l.push(format!("{rd} = wave_bfi({a}, {}, {c}, {});", r(i.inst.rs2), r(i.rs4()))),
            Operation::Icmp(cc) => {
                let i32t = d.types().1;
                let op = match cc {
                    IntCond::Eq => "==",
                    IntCond::Ne => "!=",
                    IntCond::Lt => "<",
                    IntCond::Le => "<=",
                    IntCond::Gt => ">",
                    IntCond::Ge => ">=",
                };
                l.push(format!("{pd} = ({i32t}){a} {op} ({i32t}){b};"));
            }
            Operation::Ucmp(cc) => {
                let op = match cc {
                    UintCond::Lt => "<",
                    UintCond::Le => "<=",
                };
                l.push(format!("{pd} = {a} {op} {b};"));
            }
            Operation::Fcmp(cc) => {
                let (x, y) = (f(&a), f(&b));
                let e = match cc {
                    FloatCond::Eq => format!("{x} == {y}"),
                    FloatCond::Lt => format!("{x} < {y}"),
                    FloatCond::Le => format!("{x} <= {y}"),
                    FloatCond::Gt => format!("{x} > {y}"),
                    FloatCond::Ne => format!("!({x} == {y})"),
                    FloatCond::Ord => format!("({x} == {x}) && ({y} == {y})"),
                    FloatCond::Unord => format!("({x} != {x}) || ({y} != {y})"),
                };
                l.push(format!("{pd} = {e};"));
            }
            Operation::Select => {
                let (p, neg) = i.pred();
                l.push(format!("{rd} = {}p{p} ? {a} : {b};", if neg { "!" } else { "" }));
            }
            Operation::LocalLoad(w) | Operation::DeviceLoad(w) => {
                let local = i.inst.space() == Some(wave_isa::Space::Local);
                let rdn = i.inst.rd;
                match w {
                    MemWidth::U8 => l.push(format!("{rd} = *{};", self.ptr(local, uchar(d), &self.at(i, 0)))),
                    MemWidth::U16 => l.push(format!("{rd} = *{};", self.ptr(local, ushort(d), &self.at(i, 0)))),
                    MemWidth::U32 | MemWidth::U64 | MemWidth::U128 => {
                        let count = i64::from(w.registers());
                        for k in 0..count {
                            l.push(format!("{} = *{};", r(rdn + k as u8), self.ptr(local, u32t, &self.at(i, 4 * k))));
                        }
                    }
                }
            }
            Operation::LocalStore(w) | Operation::DeviceStore(w) => {
                let local = i.inst.space() == Some(wave_isa::Space::Local);
                let v = i.inst.rs2;
                match w {
                    MemWidth::U8 => l.push(format!("*{} = ({}){};", self.ptr(local, uchar(d), &self.at(i, 0)), uchar(d), r(v))),
                    MemWidth::U16 => l.push(format!("*{} = ({}){};", self.ptr(local, ushort(d), &self.at(i, 0)), ushort(d), r(v))),
                    MemWidth::U32 | MemWidth::U64 | MemWidth::U128 => {
                        let count = i64::from(w.registers());
                        for k in 0..count {
                            l.push(format!("*{} = {};", self.ptr(local, u32t, &self.at(i, 4 * k)), r(v + k as u8)));
                        }
                    }
                }
            }
            Operation::Atomic(kind, ty, local) => self.atomic(i, kind, ty, local, &mut l),
            Operation::Fence => l.push(self.fence(i.inst.scope)),
            Operation::Wait | Operation::Nop => {}
            Operation::CvtF32I32 => l.push(format!("{rd} = wave_u((float)({}){a});", d.types().1)),
            Operation::CvtF32U32 => l.push(format!("{rd} = wave_u((float){a});")),
            Operation::CvtI32F32 => l.push(format!("{rd} = wave_cvt_i32({a});")),
            Operation::CvtU32F32 => l.push(format!("{rd} = wave_cvt_u32({a});")),
            Operation::CvtF32F16 => {
                let hi = i.inst.modifier & 2 != 0;
                l.push(format!("{rd} = wave_u(wave_h2f(wave_h({a}, {hi})));"));
            }
            Operation::CvtF16F32 => {
                let hi = i.inst.modifier & 1 != 0;
                l.push(format!("{rd} = wave_set_h({rd}, {hi}, wave_f2h({}));", f(&a)));
            }
            Operation::CvtF32Bf16 => {
                let hi = i.inst.modifier & 2 != 0;
                l.push(format!("{rd} = wave_u(wave_b({a}, {hi}));"));
            }
            Operation::CvtBf16F32 => {
                let hi = i.inst.modifier & 1 != 0;
                l.push(format!("{rd} = wave_set_b({rd}, {hi}, {});", f(&a)));
            }
            // Binary32 sums, differences and products of bfloat16 values rounded to bfloat16
            // are the bfloat16 results (binary32 has more than twice the bits plus two).
            Operation::Badd => bf16(&mut l, i, |x, y, _| format!("{x} + {y}")),
            Operation::Bsub => bf16(&mut l, i, |x, y, _| format!("{x} - {y}")),
            Operation::Bmul => bf16(&mut l, i, |x, y, _| format!("{x} * {y}")),
            Operation::Bma => bf16(&mut l, i, |x, y, z| format!("wave_bfma({x}, {y}, {z})")),
            Operation::Badd2 => bf16x2(&mut l, i, |x, y, _| format!("{x} + {y}")),
            Operation::Bmul2 => bf16x2(&mut l, i, |x, y, _| format!("{x} * {y}")),
            Operation::Bma2 => bf16x2(&mut l, i, |x, y, z| format!("wave_bfma({x}, {y}, {z})")),
            Operation::Hadd => half(&mut l, i, |x, y| format!("wave_hadd({x}, {y})")),
            Operation::Hsub => half(&mut l, i, |x, y| format!("wave_hsub({x}, {y})")),
            Operation::Hmul => half(&mut l, i, |x, y| format!("wave_hmul({x}, {y})")),
            Operation::Hma => half(&mut l, i, |x, y| format!("wave_hfma({x}, {y}, wave_h({c}, {}))", i.inst.modifier & 8 != 0)),
            Operation::Hadd2 => half2(&mut l, i, |x, y, _| format!("wave_hadd({x}, {y})")),
            Operation::Hmul2 => half2(&mut l, i, |x, y, _| format!("wave_hmul({x}, {y})")),
            Operation::Hma2 => half2(&mut l, i, |x, y, z| format!("wave_hfma({x}, {y}, {z})")),
            Operation::CvtF32F64 => {
                if self.has_f64(i) {
                    l.push(format!("{rd} = wave_u((float){});", pair(i.inst.rs1)));
                }
            }
            Operation::CvtF64F32 => self.double(i, &mut l, || format!("(double){}", f(&a))),
            Operation::Dadd => self.double(i, &mut l, || format!("{} + {}", pair(i.inst.rs1), pair(i.inst.rs2))),
            Operation::Dsub => self.double(i, &mut l, || format!("{} - {}", pair(i.inst.rs1), pair(i.inst.rs2))),
            Operation::Dmul => self.double(i, &mut l, || format!("{} * {}", pair(i.inst.rs1), pair(i.inst.rs2))),
            Operation::Ddiv => self.double(i, &mut l, || format!("{} / {}", pair(i.inst.rs1), pair(i.inst.rs2))),
            Operation::Dsqrt => self.double(i, &mut l, || format!("wave_dsqrt({})", pair(i.inst.rs1))),
            Operation::Dma => self.double(i, &mut l, || format!("wave_dfma({}, {}, {})", pair(i.inst.rs1), pair(i.inst.rs2), pair(i.rs3()))),
            Operation::Mma => match self.trap_line("CAP_MMA is not supported") {
                // The emulator reports CAP_MMA as absent and traps; so does the generated code.
                Some(t) => {
                    self.problems.push(Problem::warning(
                        codes::TRAPS,
                        &self.program.kernel.name,
                        Some(i.offset),
                        format!("`{}` needs CAP_MMA, which WAVE's emulator and backends do not offer: the emulator traps here, and so does the generated code", mnemonic(i)),
                    ));
                    l.push(t);
                }
                None => self.unsupported(i, "CAP_MMA is not supported, so the emulator traps here, and Metal has no way to stop a kernel with an error"),
            },
            // `mov` and `mov_imm` are one operation; the immediate form has its value in the
            // extension word.
            Operation::Mov if i.inst.opcode == Opcode::MovImm as u8 => {
                l.push(format!("{rd} = {};", hex(i.inst.ext.unwrap_or(0))))
            }
            Operation::Mov => l.push(format!("{rd} = {a};")),
            Operation::MovSpecial => {
                let v = self.special(i.inst.rs1);
                l.push(format!("{rd} = {v};"));
            }
            // `inst` sends wave operations to the wave room, and `lower` makes statements of
            // barriers and control flow: none of them reaches here.
            Operation::Shuffle(_)
            | Operation::Ballot
            | Operation::Any
            | Operation::All
            | Operation::PrefixSum
            | Operation::Reduce(_)
            | Operation::Barrier
            | Operation::If
            | Operation::Else
            | Operation::Endif
            | Operation::Loop
            | Operation::Break
            | Operation::Continue
            | Operation::Endloop
            | Operation::Call
            | Operation::Return
            | Operation::Halt => {}
        }
        l
    }

    /// `fsin`, `fcos`, `fexp2`, `flog2` as the prelude's function `func`.
    fn math(&mut self, i: &Instr, l: &mut Vec<String>, func: &str) {
        if self.d() == Dialect::Metal {
            self.differs(i, "Metal's `precise::` functions are within 4 ULP; the spec asks for 2 (no binary64 on Apple GPUs)");
        }
        l.push(format!("{} = wave_u({func}(wave_f({})));", r(i.inst.rd), r(i.inst.rs1)));
    }

    /// Whether the dialect has binary64; on Metal, which has none, `i` is unsupported.
    fn has_f64(&mut self, i: &Instr) -> bool {
        if self.d() == Dialect::Metal {
            self.unsupported(i, "Apple GPUs have no binary64 (CAP_F64)");
            return false;
        }
        true
    }

    /// The binary64 result `value` into the register pair at `rd`, where the dialect has
    /// binary64.
    fn double(&mut self, i: &Instr, l: &mut Vec<String>, value: impl FnOnce() -> String) {
        if !self.has_f64(i) {
            return;
        }
        let rd = i.inst.rd;
        l.push("{".into());
        l.push(format!("    double wave_v = {};", value()));
        l.push(format!("    {} = wave_dlo(wave_v); {} = wave_dhi(wave_v);", r(rd), r(rd + 1)));
        l.push("}".into());
    }

    pub(super) fn special(&self, which: u8) -> String {
        let d = self.d();
        match (d, which) {
            (Dialect::Hip, 0) => "threadIdx.x".into(),
            (Dialect::Hip, 1) => "threadIdx.y".into(),
            (Dialect::Hip, 2) => "threadIdx.z".into(),
            (Dialect::Hip, 5) => "blockIdx.x".into(),
            (Dialect::Hip, 6) => "blockIdx.y".into(),
            (Dialect::Hip, 7) => "blockIdx.z".into(),
            (Dialect::Hip, 8) => "blockDim.x".into(),
            (Dialect::Hip, 9) => "blockDim.y".into(),
            (Dialect::Hip, 10) => "blockDim.z".into(),
            (Dialect::Hip, 11) => "gridDim.x".into(),
            (Dialect::Hip, 12) => "gridDim.y".into(),
            (Dialect::Hip, 13) => "gridDim.z".into(),
            (Dialect::Sycl, 0) => "wave_tx".into(),
            (Dialect::Sycl, 1) => "wave_ty".into(),
            (Dialect::Sycl, 2) => "wave_tz".into(),
            (Dialect::Sycl, 5..=7) => format!("(uint32_t)wave_item.get_group({})", 7 - which),
            (Dialect::Sycl, 8..=10) => {
                format!("(uint32_t)wave_item.get_local_range({})", 10 - which)
            }
            (Dialect::Sycl, 11..=13) => {
                format!("(uint32_t)wave_item.get_group_range({})", 13 - which)
            }
            (Dialect::Metal, 0..=2) => format!("wave_tid.{}", ["x", "y", "z"][usize::from(which)]),
            (Dialect::Metal, 5..=7) => {
                format!("wave_ctaid.{}", ["x", "y", "z"][usize::from(which - 5)])
            }
            (Dialect::Metal, 8..=10) => {
                format!("wave_ntid.{}", ["x", "y", "z"][usize::from(which - 8)])
            }
            (Dialect::Metal, 11..=13) => {
                format!("wave_nctaid.{}", ["x", "y", "z"][usize::from(which - 11)])
            }
            (_, 3) => "wave_id".into(),
            (_, 4) => "lane".into(),
            (_, 14) => "wave_w".into(),
            // sr_mma_supported, _m, _n, _k: no WAVE backend offers CAP_MMA.
            (_, 16..) => "0u".into(),
            _ => "(wave_threads + wave_w - 1u) / wave_w".into(),
        }
    }
}

/// `hadd`, `hsub`, `hmul`, `hma`: `op` of the halves of `rs1` and `rs2` that the modifier
/// selects, into the selected half of `rd`.
fn half(l: &mut Vec<String>, i: &Instr, op: impl FnOnce(&str, &str) -> String) {
    let (rd, sel) = (r(i.inst.rd), i.inst.modifier);
    let x = format!("wave_h({}, {})", r(i.inst.rs1), sel & 2 != 0);
    let y = format!("wave_h({}, {})", r(i.inst.rs2), sel & 4 != 0);
    l.push(format!("{rd} = wave_set_h({rd}, {}, {});", sel & 1 != 0, op(&x, &y)));
}

/// `badd`, `bsub`, `bmul`, `bma`: `op` (in binary32) of the bfloat16 halves the modifier
/// selects, rounded into the selected half of `rd`.
fn bf16(l: &mut Vec<String>, i: &Instr, op: impl FnOnce(&str, &str, &str) -> String) {
    let (rd, sel) = (r(i.inst.rd), i.inst.modifier);
    let x = format!("wave_b({}, {})", r(i.inst.rs1), sel & 2 != 0);
    let y = format!("wave_b({}, {})", r(i.inst.rs2), sel & 4 != 0);
    let z = format!("wave_b({}, {})", r(i.rs3()), sel & 8 != 0);
    l.push(format!("{rd} = wave_set_b({rd}, {}, {});", sel & 1 != 0, op(&x, &y, &z)));
}

/// `badd2`, `bmul2`, `bma2`: `op` of the low bfloat16 halves into the low half of `rd`, and
/// of the high halves into the high half.
fn bf16x2(l: &mut Vec<String>, i: &Instr, op: impl Fn(&str, &str, &str) -> String) {
    let (a, b, c) = (r(i.inst.rs1), r(i.inst.rs2), r(i.rs3()));
    let half = |hi: bool| {
        op(
            &format!("wave_b({a}, {hi})"),
            &format!("wave_b({b}, {hi})"),
            &format!("wave_b({c}, {hi})"),
        )
    };
    l.push(format!(
        "{} = wave_set_b(wave_set_b(0u, false, {}), true, {});",
        r(i.inst.rd),
        half(false),
        half(true)
    ));
}

/// `hadd2`, `hmul2`, `hma2`: `op` of the low halves of `rs1`, `rs2`, `rs3` into the low half of
/// `rd`, and of the high halves into the high half.
fn half2(l: &mut Vec<String>, i: &Instr, op: impl Fn(&str, &str, &str) -> String) {
    let (a, b, c) = (r(i.inst.rs1), r(i.inst.rs2), r(i.rs3()));
    let half = |hi: bool| {
        op(
            &format!("wave_h({a}, {hi})"),
            &format!("wave_h({b}, {hi})"),
            &format!("wave_h({c}, {hi})"),
        )
    };
    l.push(format!(
        "{} = wave_set_h(wave_set_h(0u, false, {}), true, {});",
        r(i.inst.rd),
        half(false),
        half(true)
    ));
}

pub(super) fn uchar(d: Dialect) -> &'static str {
    if d == Dialect::Metal { "uchar" } else { "uint8_t" }
}

pub(super) fn ushort(d: Dialect) -> &'static str {
    if d == Dialect::Metal { "ushort" } else { "uint16_t" }
}

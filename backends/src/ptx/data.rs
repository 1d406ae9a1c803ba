//! Data instructions (integer, float, bitwise, compare, load and store, conversion, half and
//! double precision), each as the PTX lines that give the emulator's result.

use wave_isa::{FloatCond, MemWidth, Opcode, Operation, UintCond};

use crate::structure::{Instr, mnemonic};
use crate::{Problem, codes, divide};

use super::memory::{at, load_hint, store_hint};
use super::{Kernel, imm, r, traps_without_local, uses_local};

impl Kernel<'_, '_> {
    /// The second source: `rs2`, or the immediate as a literal of the instruction's type
    /// (`ty`: `u` unsigned or bits, `s` signed, `f` binary32).
    pub(super) fn b(&self, i: &Instr, ty: char) -> String {
        match i.imm2() {
            Some(v) => match ty {
                's' => format!("{}", v as i32),
                'f' => format!("0f{v:08X}"),
                _ => imm(v),
            },
            None => r(i.inst.rs2),
        }
    }

    pub(super) fn data(&mut self, i: &Instr) -> Vec<String> {
        let mut l: Vec<String> = Vec::new();
        if uses_local(i) && self.program.kernel.local_memory == 0 {
            self.problems.push(traps_without_local(self.program, i));
            l.push("trap;   // local memory access in a kernel without local memory".into());
            return l;
        }
        let d = r(i.inst.rd);
        let a = r(i.inst.rs1);
        let c = r(i.rs3());
        let pd = format!("%p{}", i.inst.rd & 3);
        macro_rules! bin {
            ($op:expr) => {{
                let op: &str = $op;
                let ty = if op.ends_with(".f32") {
                    'f'
                } else if op.ends_with(".s32") {
                    's'
                } else {
                    'u'
                };
                let b = self.b(i, ty);
                l.push(format!("{op} {d}, {a}, {b};"));
            }};
        }
        match i.op {
            Operation::Iadd => bin!("add.u32"),
            Operation::Isub => bin!("sub.u32"),
            Operation::Imul => bin!("mul.lo.u32"),
            Operation::ImulHi => bin!("mul.hi.s32"),
            Operation::Imad => l.push(format!("mad.lo.u32 {d}, {a}, {}, {c};", r(i.inst.rs2))),
            Operation::Idiv | Operation::Imod if const_divisor(i).is_some() => {
                let (c, plan) = const_divisor(i).unwrap_or((1, divide::Plan::Same));
                // A constant divisor: a multiply-high or shifts instead of `div`/`rem`, which
                // ptxas never strength-reduces (see `divide`); a loop testing `k % 3` ran 1.3x
                // slower than CUDA's. The remainder is `n - (n / d) * d`.
                l.extend(plan.emit(&a, "%t1"));
                if i.op == Operation::Idiv {
                    l.push(format!("mov.b32 {d}, %t1;"));
                } else {
                    l.push(format!("mul.lo.u32 %t1, %t1, {c};"));
                    l.push(format!("sub.u32 {d}, {a}, %t1;"));
                }
            }
            Operation::Idiv | Operation::Imod => {
                // Division by zero: idiv gives -1, imod the dividend; INT_MIN / -1 wraps.
                let b = self.b(i, 'u');
                l.push(format!("setp.eq.u32 %q0, {b}, 0;"));
                l.push(format!("setp.eq.u32 %q1, {b}, 0xFFFFFFFF;"));
                l.push(format!("selp.b32 %t1, 1, {b}, %q0;"));
                if i.op == Operation::Idiv {
                    l.push(format!("div.s32 %t2, {a}, %t1;"));
                    l.push(format!("neg.s32 %t3, {a};"));
                    l.push("selp.b32 %t2, %t3, %t2, %q1;".into());
                    l.push(format!("selp.b32 {d}, 0xFFFFFFFF, %t2, %q0;"));
                } else {
                    l.push(format!("rem.s32 %t2, {a}, %t1;"));
                    l.push("selp.b32 %t2, 0, %t2, %q1;".into());
                    l.push(format!("selp.b32 {d}, {a}, %t2, %q0;"));
                }
            }
            Operation::Ineg => l.push(format!("neg.s32 {d}, {a};")),
            Operation::Iabs => l.push(format!("abs.s32 {d}, {a};")),
            Operation::Imin => bin!("min.s32"),
            Operation::Imax => bin!("max.s32"),
            Operation::Iclamp => {
                l.push(format!("max.s32 %t1, {a}, {};", r(i.inst.rs2)));
                l.push(format!("min.s32 {d}, %t1, {c};"));
            }
            Operation::Umin => bin!("min.u32"),
            Operation::Umax => bin!("max.u32"),
            Operation::Fadd => bin!("add.rn.f32"),
            Operation::Fsub => bin!("sub.rn.f32"),
            Operation::Fmul => bin!("mul.rn.f32"),
            Operation::Fma => l.push(format!("fma.rn.f32 {d}, {a}, {}, {c};", r(i.inst.rs2))),
            Operation::Fdiv => bin!("div.rn.f32"),
            Operation::Fneg => l.push(format!("xor.b32 {d}, {a}, 0x80000000;")),
            Operation::Fabs => l.push(format!("and.b32 {d}, {a}, 0x7FFFFFFF;")),
            Operation::Fmin => {
                let b = self.b(i, 'f');
                fminmax(&mut l, "min", &d, &a, &b);
            }
            Operation::Fmax => {
                let b = self.b(i, 'f');
                fminmax(&mut l, "max", &d, &a, &b);
            }
            Operation::Fclamp => {
                fminmax(&mut l, "max", "%t4", &a, &r(i.inst.rs2));
                fminmax(&mut l, "min", &d, "%t4", &c);
            }
            Operation::Fsat => {
                l.push("mov.b32 %t5, 0;".into());
                l.push("mov.b32 %t6, 0x3F800000;".into());
                fminmax(&mut l, "max", "%t4", &a, "%t5");
                fminmax(&mut l, "min", &d, "%t4", "%t6");
            }
            Operation::Fsqrt => l.push(format!("sqrt.rn.f32 {d}, {a};")),
            Operation::Frsqrt => {
                // In binary64, as the emulator: 1 / sqrt(x), rounded once to binary32.
                l.push(format!("cvt.f64.f32 %d0, {a};"));
                l.push("sqrt.rn.f64 %d0, %d0;".into());
                l.push("rcp.rn.f64 %d0, %d0;".into());
                l.push(format!("cvt.rn.f32.f64 {d}, %d0;"));
            }
            Operation::Frcp => l.push(format!("rcp.rn.f32 {d}, {a};")),
            Operation::Ffloor => l.push(format!("cvt.rmi.f32.f32 {d}, {a};")),
            Operation::Fceil => l.push(format!("cvt.rpi.f32.f32 {d}, {a};")),
            Operation::Fround => l.push(format!("cvt.rni.f32.f32 {d}, {a};")),
            Operation::Ftrunc => l.push(format!("cvt.rzi.f32.f32 {d}, {a};")),
            Operation::Ffract => {
                // x - floor(x), kept below 1.0.
                l.push(format!("cvt.rmi.f32.f32 %t1, {a};"));
                l.push(format!("sub.rn.f32 %t1, {a}, %t1;"));
                l.push("setp.ge.f32 %q0, %t1, 0f3F800000;".into());
                l.push(format!("selp.b32 {d}, 0x3F7FFFFF, %t1, %q0;"));
            }
            Operation::Fsin => {
                self.helpers.sin = true;
                math_call(&mut l, "wave_trigf", Some(0), &d, &a);
            }
            Operation::Fcos => {
                self.helpers.sin = true;
                math_call(&mut l, "wave_trigf", Some(1), &d, &a);
            }
            Operation::Fexp2 => {
                self.helpers.exp2 = true;
                math_call(&mut l, "wave_exp2f", None, &d, &a);
            }
            Operation::Flog2 => {
                self.helpers.log2 = true;
                math_call(&mut l, "wave_log2f", None, &d, &a);
            }
            Operation::And => bin!("and.b32"),
            Operation::Or => bin!("or.b32"),
            Operation::Xor => bin!("xor.b32"),
            Operation::Not => l.push(format!("not.b32 {d}, {a};")),
            Operation::Shl => shift(&mut l, i, "shl.b32"),
            Operation::Shr => shift(&mut l, i, "shr.u32"),
            Operation::Sar => shift(&mut l, i, "shr.s32"),
            Operation::Bitcount => l.push(format!("popc.b32 {d}, {a};")),
            Operation::Bitfind => l.push(format!("bfind.u32 {d}, {a};")),
            Operation::Bitrev => l.push(format!("brev.b32 {d}, {a};")),
            Operation::Bfe => {
                // (a >> (off & 31)) & ((1 << min(width & 255, 32)) - 1); PTX's shl gives 0
                // for a shift of 32, so the mask is all ones there.
                l.push(format!("and.b32 %t1, {}, 31;", r(i.inst.rs2)));
                l.push(format!("shr.u32 %t2, {a}, %t1;"));
                l.push(format!("and.b32 %t3, {c}, 255;"));
                l.push("min.u32 %t3, %t3, 32;".into());
                l.push("shl.b32 %t4, 1, %t3;".into());
                l.push("sub.u32 %t4, %t4, 1;".into());
                l.push(format!("and.b32 {d}, %t2, %t4;"));
            }
            Operation::Bfi => {
                let w = r(i.rs4());
                l.push(format!("and.b32 %t1, {c}, 31;"));
                l.push(format!("and.b32 %t3, {w}, 255;"));
                l.push("min.u32 %t3, %t3, 32;".into());
                l.push("shl.b32 %t4, 1, %t3;".into());
                l.push("sub.u32 %t4, %t4, 1;".into());
                l.push("shl.b32 %t4, %t4, %t1;".into());
                l.push(format!("shl.b32 %t5, {a}, %t1;"));
                l.push("and.b32 %t5, %t5, %t4;".into());
                l.push("not.b32 %t4, %t4;".into());
                l.push(format!("and.b32 %t6, {}, %t4;", r(i.inst.rs2)));
                l.push(format!("or.b32 {d}, %t6, %t5;"));
            }
            Operation::Icmp(cc) => {
                let b = self.b(i, 's');
                // PTX's comparison names are the suffixes' own.
                l.push(format!("setp.{}.s32 {pd}, {a}, {b};", cc.name()));
            }
            Operation::Ucmp(cc) => {
                let b = self.b(i, 'u');
                let c = match cc {
                    UintCond::Lt => "lo",
                    UintCond::Le => "ls",
                };
                l.push(format!("setp.{c}.u32 {pd}, {a}, {b};"));
            }
            Operation::Fcmp(cc) => {
                let b = self.b(i, 'f');
                let c = match cc {
                    FloatCond::Eq => "eq",
                    FloatCond::Lt => "lt",
                    FloatCond::Le => "le",
                    FloatCond::Gt => "gt",
                    FloatCond::Ne => "neu",
                    FloatCond::Ord => "num",
                    FloatCond::Unord => "nan",
                };
                l.push(format!("setp.{c}.f32 {pd}, {a}, {b};"));
            }
            Operation::Select => {
                let (p, neg) = i.pred();
                let b = self.b(i, 'u');
                if neg {
                    l.push(format!("selp.b32 {d}, {b}, {a}, %p{p};"));
                } else {
                    l.push(format!("selp.b32 {d}, {a}, {b}, %p{p};"));
                }
            }
            Operation::LocalLoad(w) | Operation::DeviceLoad(w) => {
                let local = i.inst.space() == Some(wave_isa::Space::Local);
                let (base, off) = self.address(i, local, &mut l);
                let a0 = at(&base, off);
                let space = if local {
                    "shared".to_string()
                } else {
                    format!("global{}", load_hint(i.inst.scope))
                };
                let rd = i.inst.rd;
                match w {
                    MemWidth::U8 | MemWidth::U16 | MemWidth::U32 => {
                        l.push(format!("ld.{space}.{} {d}, {a0};", w.name()));
                    }
                    MemWidth::U64 | MemWidth::U128 => {
                        // One vector access when the address is aligned to its size, else
                        // word by word (a 4-byte aligned u64 or u128 works, as in the emulator).
                        let n = w.registers();
                        let regs: Vec<String> = (0..n).map(|k| r(rd + k)).collect();
                        let words: Vec<String> = regs
                            .iter()
                            .enumerate()
                            .map(|(k, reg)| {
                                format!("ld.{space}.u32 {reg}, {};", at(&base, off + 4 * k as i64))
                            })
                            .collect();
                        let vector = format!("ld.{space}.v{n}.u32 {{{}}}, {a0};", regs.join(", "));
                        self.aligned_or_words(&mut l, i, 4 * u32::from(n), vector, words);
                    }
                }
            }
            Operation::LocalStore(w) | Operation::DeviceStore(w) => {
                let local = i.inst.space() == Some(wave_isa::Space::Local);
                let (base, off) = self.address(i, local, &mut l);
                let a0 = at(&base, off);
                let space = if local {
                    "shared".to_string()
                } else {
                    format!("global{}", store_hint(i.inst.scope))
                };
                let v = i.inst.rs2;
                match w {
                    MemWidth::U8 | MemWidth::U16 | MemWidth::U32 => {
                        l.push(format!("st.{space}.{} {a0}, {};", w.name(), r(v)));
                    }
                    MemWidth::U64 | MemWidth::U128 => {
                        let n = w.registers();
                        let regs: Vec<String> = (0..n).map(|k| r(v + k)).collect();
                        let words: Vec<String> = regs
                            .iter()
                            .enumerate()
                            .map(|(k, reg)| {
                                format!("st.{space}.u32 {}, {reg};", at(&base, off + 4 * k as i64))
                            })
                            .collect();
                        let vector = format!("st.{space}.v{n}.u32 {a0}, {{{}}};", regs.join(", "));
                        self.aligned_or_words(&mut l, i, 4 * u32::from(n), vector, words);
                    }
                }
            }
            Operation::Atomic(kind, ty, local) => self.atomic(i, kind, ty, local, &mut l),
            Operation::Fence => {
                let scope = match i.inst.scope {
                    0 | 1 => "cta",
                    2 => "gpu",
                    _ => "sys",
                };
                l.push(format!("fence.acq_rel.{scope};"));
            }
            Operation::Wait | Operation::Nop => {}
            Operation::CvtF32I32 => l.push(format!("cvt.rn.f32.s32 {d}, {a};")),
            Operation::CvtF32U32 => l.push(format!("cvt.rn.f32.u32 {d}, {a};")),
            Operation::CvtI32F32 => l.push(format!("cvt.rzi.s32.f32 {d}, {a};")),
            Operation::CvtU32F32 => l.push(format!("cvt.rzi.u32.f32 {d}, {a};")),
            Operation::CvtF32F16 => {
                let hi = i.inst.modifier & 2 != 0;
                l.push(format!("mov.b32 {{%h0, %h1}}, {a};"));
                l.push(format!("cvt.f32.f16 {d}, %h{};", u8::from(hi)));
            }
            Operation::CvtF16F32 => {
                let hi = i.inst.modifier & 1 != 0;
                l.push(format!("cvt.rn.f16.f32 %h2, {a};"));
                set_half(&mut l, &d, hi, "%h2");
            }
            Operation::CvtF32F64 => {
                l.push(format!("mov.b64 %d0, {{{a}, {}}};", r(i.inst.rs1 + 1)));
                l.push(format!("cvt.rn.f32.f64 {d}, %d0;"));
            }
            Operation::CvtF64F32 => {
                l.push(format!("cvt.f64.f32 %d0, {a};"));
                l.push(format!("mov.b64 {{{d}, {}}}, %d0;", r(i.inst.rd + 1)));
            }
            Operation::CvtF32Bf16 => {
                // A bfloat16 is the top half of a binary32.
                let hi = i.inst.modifier & 2 != 0;
                if hi {
                    l.push(format!("and.b32 {d}, {a}, 0xFFFF0000;"));
                } else {
                    l.push(format!("shl.b32 {d}, {a}, 16;"));
                }
            }
            Operation::CvtBf16F32 => {
                let hi = i.inst.modifier & 1 != 0;
                bf16_round(&mut l, &a, "%t2");
                l.push("mov.b32 {%h6, %h7}, %t2;".into());
                set_half(&mut l, &d, hi, "%h6");
            }
            Operation::Badd | Operation::Bsub | Operation::Bmul | Operation::Bma => {
                self.bf16(&mut l, i)
            }
            Operation::Badd2 | Operation::Bmul2 | Operation::Bma2 => self.bf16x2(&mut l, i),
            Operation::Hadd => {
                half(&mut l, i, |l, x, y| l.push(format!("add.rn.f16 %h6, {x}, {y};")))
            }
            Operation::Hsub => {
                half(&mut l, i, |l, x, y| l.push(format!("sub.rn.f16 %h6, {x}, {y};")))
            }
            Operation::Hmul => {
                half(&mut l, i, |l, x, y| l.push(format!("mul.rn.f16 %h6, {x}, {y};")))
            }
            Operation::Hma => half(&mut l, i, |l, x, y| {
                l.push(format!("mov.b32 {{%h4, %h5}}, {c};"));
                let z = if i.inst.modifier & 8 != 0 { "%h5" } else { "%h4" };
                l.push(format!("fma.rn.f16 %h6, {x}, {y}, {z};"));
            }),
            Operation::Hadd2 => l.push(format!("add.rn.f16x2 {d}, {a}, {};", r(i.inst.rs2))),
            Operation::Hmul2 => l.push(format!("mul.rn.f16x2 {d}, {a}, {};", r(i.inst.rs2))),
            Operation::Hma2 => l.push(format!("fma.rn.f16x2 {d}, {a}, {}, {c};", r(i.inst.rs2))),
            Operation::Dadd => double(&mut l, i, 2, "add.rn.f64 %d0, %d1, %d2;"),
            Operation::Dsub => double(&mut l, i, 2, "sub.rn.f64 %d0, %d1, %d2;"),
            Operation::Dmul => double(&mut l, i, 2, "mul.rn.f64 %d0, %d1, %d2;"),
            Operation::Ddiv => double(&mut l, i, 2, "div.rn.f64 %d0, %d1, %d2;"),
            Operation::Dma => double(&mut l, i, 3, "fma.rn.f64 %d0, %d1, %d2, %d3;"),
            Operation::Dsqrt => double(&mut l, i, 1, "sqrt.rn.f64 %d0, %d1;"),
            Operation::Mma => {
                // The emulator reports CAP_MMA as absent and traps; so does the generated code.
                self.problems.push(Problem::warning(
                    codes::TRAPS,
                    &self.program.kernel.name,
                    Some(i.offset),
                    format!("`{}` needs CAP_MMA, which WAVE's emulator and backends do not offer: the emulator traps here, and so does the generated code", mnemonic(i)),
                ));
                l.push("trap;   // CAP_MMA is not supported".into());
            }
            // `mov` and `mov_imm` are one operation; the immediate form has its value in the
            // extension word.
            Operation::Mov if i.inst.opcode == Opcode::MovImm as u8 => {
                l.push(format!("mov.b32 {d}, {};", imm(i.inst.ext.unwrap_or(0))))
            }
            Operation::Mov => l.push(format!("mov.b32 {d}, {a};")),
            Operation::MovSpecial => {
                let src = match i.inst.rs1 {
                    0 => "%tid.x".to_string(),
                    1 => "%tid.y".into(),
                    2 => "%tid.z".into(),
                    3 => "%wave_id".into(),
                    4 => "%lane".into(),
                    5 => "%ctaid.x".into(),
                    6 => "%ctaid.y".into(),
                    7 => "%ctaid.z".into(),
                    8 => "%ntid.x".into(),
                    9 => "%ntid.y".into(),
                    10 => "%ntid.z".into(),
                    11 => "%nctaid.x".into(),
                    12 => "%nctaid.y".into(),
                    13 => "%nctaid.z".into(),
                    14 => "32".into(),
                    // sr_mma_supported, _m, _n, _k: no WAVE backend offers CAP_MMA.
                    16.. => "0".into(),
                    _ => {
                        l.push("mov.u32 %t1, %ntid.x;".into());
                        l.push("mov.u32 %t2, %ntid.y;".into());
                        l.push("mul.lo.u32 %t1, %t1, %t2;".into());
                        l.push("mov.u32 %t2, %ntid.z;".into());
                        l.push("mul.lo.u32 %t1, %t1, %t2;".into());
                        l.push("add.u32 %t1, %t1, 31;".into());
                        l.push("shr.u32 %t1, %t1, 5;".into());
                        "%t1".into()
                    }
                };
                l.push(format!("mov.u32 {d}, {src};"));
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
}

/// A call of the module's binary64 function `f` (`wave_trigf` with `which`: 0 sine, 1 cosine)
/// from `a` into `d`.
fn math_call(l: &mut Vec<String>, f: &str, which: Option<u8>, d: &str, a: &str) {
    l.push("{".into());
    l.push(".param .b32 wave_in;".into());
    l.push(".param .b32 wave_out;".into());
    l.push(format!("st.param.b32 [wave_in], {a};"));
    match which {
        Some(which) => {
            l.push(".param .b32 wave_which;".into());
            l.push(format!("st.param.b32 [wave_which], {which};"));
            l.push(format!("call.uni (wave_out), {f}, (wave_in, wave_which);"));
        }
        None => l.push(format!("call.uni (wave_out), {f}, (wave_in);")),
    }
    l.push(format!("ld.param.b32 {d}, [wave_out];"));
    l.push("}".into());
}

/// `shl`, `shr`, `sar` as PTX's `op`, with the shift amount masked to 5 bits (PTX would clamp
/// it to 32).
fn shift(l: &mut Vec<String>, i: &Instr, op: &str) {
    let (d, a) = (r(i.inst.rd), r(i.inst.rs1));
    match i.imm2() {
        Some(v) => l.push(format!("{op} {d}, {a}, {};", v & 31)),
        None => {
            l.push(format!("and.b32 %t1, {}, 31;", r(i.inst.rs2)));
            l.push(format!("{op} {d}, {a}, %t1;"));
        }
    }
}

/// `hadd`, `hsub`, `hmul`, `hma`: the halves of `rs1` and `rs2` that the modifier selects go
/// to `op` as `x` and `y`; it writes `%h6`, which goes to the selected half of `rd`.
fn half(l: &mut Vec<String>, i: &Instr, op: impl FnOnce(&mut Vec<String>, &str, &str)) {
    let sel = i.inst.modifier;
    l.push(format!("mov.b32 {{%h0, %h1}}, {};", r(i.inst.rs1)));
    l.push(format!("mov.b32 {{%h2, %h3}}, {};", r(i.inst.rs2)));
    let x = if sel & 2 != 0 { "%h1" } else { "%h0" };
    let y = if sel & 4 != 0 { "%h3" } else { "%h2" };
    op(l, x, y);
    set_half(l, &r(i.inst.rd), sel & 1 != 0, "%h6");
}

/// `to` = the binary32 in `x` rounded to bfloat16, to nearest even, in its low 16 bits (the
/// high 16 are zero); NaN gives the canonical 0x7FC0, as in the emulator. Integer operations
/// only, so every SM has them; uses `%t1` and `%q6`.
fn bf16_round(l: &mut Vec<String>, x: &str, to: &str) {
    l.push(format!("shr.b32 %t1, {x}, 16;"));
    l.push("and.b32 %t1, %t1, 1;".into());
    l.push("add.u32 %t1, %t1, 0x7FFF;".into());
    l.push(format!("add.u32 %t1, {x}, %t1;"));
    l.push(format!("and.b32 {to}, {x}, 0x7FFFFFFF;"));
    l.push(format!("setp.gt.u32 %q6, {to}, 0x7F800000;"));
    l.push(format!("shr.b32 {to}, %t1, 16;"));
    l.push(format!("selp.b32 {to}, 0x7FC0, {to}, %q6;"));
}

/// `%t3` = `%t3 * %t4 + %t5` (binary32 values of bfloat16s) rounded to odd at binary32, so
/// that [`bf16_round`] after it rounds the exact result once: the product is exact in
/// binary64, the sum's error comes from TwoSum, and the sum is rounded to odd at binary64 and
/// then at binary32 (each keeps a sticky last bit). For SMs without `fma.rn.bf16`; uses
/// `%d4`-`%d10`, `%a1`, `%a3`, `%t4`, `%q6`, `%q7`.
fn bf16_fma_odd(l: &mut Vec<String>) {
    for line in [
        "cvt.f64.f32 %d4, %t3;",
        "cvt.f64.f32 %d5, %t4;",
        "cvt.f64.f32 %d6, %t5;",
        "mul.rn.f64 %d4, %d4, %d5;",
        "add.rn.f64 %d7, %d4, %d6;",
        "sub.rn.f64 %d8, %d7, %d4;",
        "sub.rn.f64 %d9, %d7, %d8;",
        "sub.rn.f64 %d9, %d4, %d9;",
        "sub.rn.f64 %d10, %d6, %d8;",
        "add.rn.f64 %d9, %d9, %d10;",
        // To odd at binary64: an inexact sum (error not zero; NaN compares false) with an even
        // last bit moves one unit toward the error.
        "mov.b64 %a3, %d7;",
        "and.b64 %a1, %a3, 1;",
        "setp.eq.u64 %q6, %a1, 0;",
        "setp.ne.and.f64 %q6, %d9, 0d0000000000000000, %q6;",
        "mov.b64 %a1, %d9;",
        "xor.b64 %a1, %a1, %a3;",
        "shr.u64 %a1, %a1, 63;",
        "shl.b64 %a1, %a1, 1;",
        "neg.s64 %a1, %a1;",
        "add.s64 %a1, %a1, 1;",
        "selp.b64 %a1, %a1, 0, %q6;",
        "add.s64 %a3, %a3, %a1;",
        "mov.b64 %d7, %a3;",
        // To odd at binary32: a finite inexact result with an even last bit moves one unit
        // toward the binary64 value.
        "cvt.rn.f32.f64 %t3, %d7;",
        "cvt.f64.f32 %d8, %t3;",
        "setp.ne.f64 %q7, %d8, %d7;",
        "and.b32 %t4, %t3, 1;",
        "setp.eq.and.u32 %q7, %t4, 0, %q7;",
        "and.b32 %t4, %t3, 0x7FFFFFFF;",
        "setp.lt.and.u32 %q7, %t4, 0x7F800000, %q7;",
        "abs.f64 %d9, %d8;",
        "abs.f64 %d10, %d7;",
        "setp.lt.f64 %q6, %d9, %d10;",
        "selp.b32 %t4, 1, -1, %q6;",
        "selp.b32 %t4, %t4, 0, %q7;",
        "add.s32 %t3, %t3, %t4;",
    ] {
        l.push(line.into());
    }
}

/// `to` = the bfloat16 in the `hi` or low half of `x` widened to binary32 (exact).
fn bf16_widen(l: &mut Vec<String>, x: &str, hi: bool, to: &str) {
    if hi {
        l.push(format!("and.b32 {to}, {x}, 0xFFFF0000;"));
    } else {
        l.push(format!("shl.b32 {to}, {x}, 16;"));
    }
}

impl Kernel<'_, '_> {
    /// `badd`, `bsub`, `bmul`, `bma` on the halves the modifier selects. From sm_80 one
    /// `fma.rn.bf16` (an add is `x * 1 + y`, a product `x * y + -0`): a single rounding. Before
    /// sm_80, which has no bfloat16 instructions, the sum, difference or product in binary32
    /// rounded to bfloat16, the same result (binary32 has more than twice bfloat16's bits plus
    /// two), and `bma` through [`bf16_fma_odd`].
    fn bf16(&mut self, l: &mut Vec<String>, i: &Instr) {
        let sel = i.inst.modifier;
        let (a, b, d) = (r(i.inst.rs1), r(i.inst.rs2), r(i.inst.rd));
        let op = Operation::of(&i.inst);
        if self.options.sm >= 80 {
            l.push(format!("mov.b32 {{%h0, %h1}}, {a};"));
            l.push(format!("mov.b32 {{%h2, %h3}}, {b};"));
            let x = if sel & 2 != 0 { "%h1" } else { "%h0" };
            let y = if sel & 4 != 0 { "%h3" } else { "%h2" };
            match op {
                Some(Operation::Badd) => {
                    l.push("mov.b16 %h7, 0x3F80;".into());
                    l.push(format!("fma.rn.bf16 %h6, {x}, %h7, {y};"));
                }
                Some(Operation::Bsub) => {
                    l.push("mov.b16 %h7, 0xBF80;".into());
                    l.push(format!("fma.rn.bf16 %h6, {y}, %h7, {x};"));
                }
                Some(Operation::Bmul) => {
                    l.push("mov.b16 %h7, 0x8000;".into());
                    l.push(format!("fma.rn.bf16 %h6, {x}, {y}, %h7;"));
                }
                _ => {
                    l.push(format!("mov.b32 {{%h4, %h5}}, {};", r(i.rs3())));
                    let z = if sel & 8 != 0 { "%h5" } else { "%h4" };
                    l.push(format!("fma.rn.bf16 %h6, {x}, {y}, {z};"));
                }
            }
            set_half(l, &d, sel & 1 != 0, "%h6");
            return;
        }
        bf16_widen(l, &a, sel & 2 != 0, "%t3");
        bf16_widen(l, &b, sel & 4 != 0, "%t4");
        match op {
            Some(Operation::Badd) => l.push("add.rn.f32 %t3, %t3, %t4;".into()),
            Some(Operation::Bsub) => l.push("sub.rn.f32 %t3, %t3, %t4;".into()),
            Some(Operation::Bmul) => l.push("mul.rn.f32 %t3, %t3, %t4;".into()),
            _ => {
                bf16_widen(l, &r(i.rs3()), sel & 8 != 0, "%t5");
                bf16_fma_odd(l);
            }
        }
        bf16_round(l, "%t3", "%t2");
        l.push("mov.b32 {%h6, %h7}, %t2;".into());
        set_half(l, &d, sel & 1 != 0, "%h6");
    }

    /// `badd2`, `bmul2`, `bma2`: one `fma.rn.bf16x2` from sm_80; before, each half as in
    /// [`Self::bf16`].
    fn bf16x2(&mut self, l: &mut Vec<String>, i: &Instr) {
        let (a, b, c, d) = (r(i.inst.rs1), r(i.inst.rs2), r(i.rs3()), r(i.inst.rd));
        let op = Operation::of(&i.inst);
        if self.options.sm >= 80 {
            match op {
                Some(Operation::Badd2) => {
                    l.push("mov.b32 %t1, 0x3F803F80;".into());
                    l.push(format!("fma.rn.bf16x2 {d}, {a}, %t1, {b};"));
                }
                Some(Operation::Bmul2) => {
                    l.push("mov.b32 %t1, 0x80008000;".into());
                    l.push(format!("fma.rn.bf16x2 {d}, {a}, {b}, %t1;"));
                }
                _ => l.push(format!("fma.rn.bf16x2 {d}, {a}, {b}, {c};")),
            }
            return;
        }
        for hi in [false, true] {
            bf16_widen(l, &a, hi, "%t3");
            bf16_widen(l, &b, hi, "%t4");
            match op {
                Some(Operation::Badd2) => l.push("add.rn.f32 %t3, %t3, %t4;".into()),
                Some(Operation::Bmul2) => l.push("mul.rn.f32 %t3, %t3, %t4;".into()),
                _ => {
                    bf16_widen(l, &c, hi, "%t5");
                    bf16_fma_odd(l);
                }
            }
            bf16_round(l, "%t3", if hi { "%t7" } else { "%t8" });
        }
        l.push("shl.b32 %t7, %t7, 16;".into());
        l.push(format!("or.b32 {d}, %t7, %t8;"));
    }
}

/// A binary64 operation `op` from `%d1`.. (the register pairs at `rs1`, `rs2`, `rs3`, as many as
/// `sources`) into `%d0`, then into the pair at `rd`.
fn double(l: &mut Vec<String>, i: &Instr, sources: usize, op: &str) {
    for (k, rs) in [i.inst.rs1, i.inst.rs2, i.rs3()].into_iter().take(sources).enumerate() {
        l.push(format!("mov.b64 %d{}, {{{}, {}}};", k + 1, r(rs), r(rs + 1)));
    }
    l.push(op.into());
    let rd = i.inst.rd;
    l.push(format!("mov.b64 {{{}, {}}}, %d0;", r(rd), r(rd + 1)));
}

/// `fmin`/`fmax` with the emulator's rules: a NaN operand gives the other one, and -0.0 is
/// below +0.0. PTX's `min.f32`/`max.f32` already return the non-NaN operand; the signed
/// zeros are ordered by comparing the bits when the values are equal.
pub(super) fn fminmax(l: &mut Vec<String>, which: &str, d: &str, a: &str, b: &str) {
    l.push(format!("{which}.f32 %t9, {a}, {b};"));
    l.push(format!("setp.eq.f32 %q0, {a}, {b};"));
    let pick = if which == "min" { "or.b32" } else { "and.b32" };
    l.push(format!("{pick} %t10, {a}, {b};"));
    l.push(format!("selp.b32 {d}, %t10, %t9, %q0;"));
}

/// Writes binary16 `h` into the low or high half of `d`.
pub(super) fn set_half(l: &mut Vec<String>, d: &str, hi: bool, h: &str) {
    l.push(format!("mov.b32 {{%h4, %h5}}, {d};"));
    if hi {
        l.push(format!("mov.b32 {d}, {{%h4, {h}}};"));
    } else {
        l.push(format!("mov.b32 {d}, {{{h}, %h5}};"));
    }
}

/// The immediate divisor of an `idiv`/`imod` and how to divide by it, unless it is 0.
pub(super) fn const_divisor(i: &Instr) -> Option<(i32, divide::Plan)> {
    let c = i.imm2()? as i32;
    Some((c, divide::Plan::new(c)?))
}

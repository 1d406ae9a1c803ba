//! Memory operands: addresses in device and local memory, the choice between one wide access
//! and word-by-word access by alignment, cache hints by scope, and atomics.

use wave_isa::{AtomicOp, AtomicType, SCOPES};

use crate::names;
use crate::structure::Instr;

use super::{KEYWORDS, Kernel, r};

impl Kernel<'_, '_> {
    /// The local memory array: in the kernel, or at module scope when functions use it too.
    pub(super) fn local_symbol(&self) -> String {
        if self.lowered.functions.is_empty() {
            "wave_local".into()
        } else {
            format!("wave_local_{}", names::safe(&self.program.kernel.name, KEYWORDS))
        }
    }

    /// The base register of a memory operand (after the lines that compute it) and the
    /// instruction's offset: the access is at `[base+offset]`.
    pub(super) fn address(&self, i: &Instr, local: bool, lines: &mut Vec<String>) -> (String, i64) {
        let off = i64::from(i.mem_offset());
        if local {
            lines.push(format!("mov.u32 %t21, {};", self.local_symbol()));
            lines.push(format!("add.u32 %t21, %t21, {};", r(i.inst.rs1)));
            ("%t21".into(), off)
        } else {
            lines.push(format!("cvt.u64.u32 %a0, {};", r(i.inst.rs1)));
            lines.push("add.s64 %a0, %mem, %a0;".into());
            ("%a0".into(), off)
        }
    }

    /// `vector` when the WAVE address (register plus offset) is a multiple of `size`, else
    /// `words`. The device memory pointer is at least 256-byte aligned (cudaMalloc) and the
    /// local array 16-byte aligned, so the WAVE address decides; the branch is almost always
    /// taken the same way by the whole wave.
    pub(super) fn aligned_or_words(
        &mut self,
        l: &mut Vec<String>,
        i: &Instr,
        size: u32,
        vector: String,
        words: Vec<String>,
    ) {
        let off = i.mem_offset() as u32;
        let words_label = self.label("words");
        let done = self.label("aligned");
        if off.is_multiple_of(size) {
            l.push(format!("and.b32 %t22, {}, {};", r(i.inst.rs1), size - 1));
        } else {
            l.push(format!("add.u32 %t22, {}, {off};", r(i.inst.rs1)));
            l.push(format!("and.b32 %t22, %t22, {};", size - 1));
        }
        l.push("setp.ne.u32 %q3, %t22, 0;".into());
        l.push(format!("@%q3 bra {words_label};"));
        l.push(vector);
        l.push(format!("bra {done};"));
        l.push(format!("{words_label}:"));
        l.extend(words);
        l.push(format!("{done}:"));
    }

    pub(super) fn atomic(
        &mut self,
        i: &Instr,
        kind: AtomicOp,
        ty: AtomicType,
        local: bool,
        l: &mut Vec<String>,
    ) {
        let (base, off) = self.address(i, local, l);
        let at = at(&base, off);
        let space = if local { "shared" } else { "global" };
        let scope = match i.inst.scope {
            0 | 1 => "cta",
            2 => "gpu",
            _ => "sys",
        };
        let _ = SCOPES;
        let wide = ty.is_64();
        let (rd, rs2, rs3) = (i.inst.rd, i.inst.rs2, i.rs3());
        // Operands as 64-bit registers for the 64-bit types.
        let (value, compare) = if wide {
            l.push(format!("mov.b64 %a1, {{{}, {}}};", r(rs2), r(rs2 + 1)));
            l.push(format!("mov.b64 %a2, {{{}, {}}};", r(rs3), r(rs3 + 1)));
            ("%a1".to_string(), "%a2".to_string())
        } else {
            (r(rs2), r(rs3))
        };
        let t = match (kind, ty) {
            (AtomicOp::Add, AtomicType::F32) => "add.f32",
            (AtomicOp::Add | AtomicOp::Sub, AtomicType::U64 | AtomicType::I64) => "add.u64",
            (
                AtomicOp::Add | AtomicOp::Sub,
                AtomicType::U32 | AtomicType::I32 | AtomicType::F32,
            ) => "add.u32",
            (AtomicOp::Min, AtomicType::I32) => "min.s32",
            (AtomicOp::Min, AtomicType::I64) => "min.s64",
            (AtomicOp::Min, AtomicType::U64) => "min.u64",
            (AtomicOp::Min, AtomicType::U32 | AtomicType::F32) => "min.u32",
            (AtomicOp::Max, AtomicType::I32) => "max.s32",
            (AtomicOp::Max, AtomicType::I64) => "max.s64",
            (AtomicOp::Max, AtomicType::U64) => "max.u64",
            (AtomicOp::Max, AtomicType::U32 | AtomicType::F32) => "max.u32",
            (AtomicOp::And, _) => {
                if wide {
                    "and.b64"
                } else {
                    "and.b32"
                }
            }
            (AtomicOp::Or, _) => {
                if wide {
                    "or.b64"
                } else {
                    "or.b32"
                }
            }
            (AtomicOp::Xor, _) => {
                if wide {
                    "xor.b64"
                } else {
                    "xor.b32"
                }
            }
            (AtomicOp::Exchange, _) => {
                if wide {
                    "exch.b64"
                } else {
                    "exch.b32"
                }
            }
            (AtomicOp::Cas, _) => {
                if wide {
                    "cas.b64"
                } else {
                    "cas.b32"
                }
            }
        };
        if !local && (ty == AtomicType::F32) && kind != AtomicOp::Add {
            self.unsupported(i, "only `atomic_add` takes the f32 type");
            return;
        }
        // PTX has no atom.sub: negate and add.
        let value = if kind == AtomicOp::Sub {
            if wide {
                l.push(format!("neg.s64 %a3, {value};"));
                "%a3".to_string()
            } else {
                l.push(format!("neg.s32 %t7, {value};"));
                "%t7".to_string()
            }
        } else {
            value
        };
        let sem = format!(".relaxed.{scope}.{space}");
        if rd == 0 && kind != AtomicOp::Cas {
            // rd = r0: the non-returning form.
            l.push(format!("red{sem}.{t} {at}, {value};"));
            return;
        }
        let dst = if wide {
            "%a0".to_string()
        } else if rd == 0 {
            "%t8".into()
        } else {
            r(rd)
        };
        if kind == AtomicOp::Cas {
            l.push(format!("atom{sem}.{t} {dst}, {at}, {value}, {compare};"));
        } else {
            l.push(format!("atom{sem}.{t} {dst}, {at}, {value};"));
        }
        if wide && rd != 0 {
            l.push(format!("mov.b64 {{{}, {}}}, %a0;", r(rd), r(rd + 1)));
        }
    }
}

/// `[base+offset]`.
pub(super) fn at(base: &str, off: i64) -> String {
    if off == 0 { format!("[{base}]") } else { format!("[{base}+{off}]") }
}

pub(super) fn load_hint(scope: u8) -> &'static str {
    match scope {
        1 => ".ca",
        2 => ".cv",
        3 => ".cs",
        _ => "",
    }
}

pub(super) fn store_hint(scope: u8) -> &'static str {
    match scope {
        1 => ".wb",
        2 => ".wt",
        3 => ".cs",
        _ => "",
    }
}

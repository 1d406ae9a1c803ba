//! LIR as text (`wave compile --emit lir`), and one instruction's text for the assembly.

use std::fmt::Write as _;

use super::{Arg, Inst, Kind, Lir, PHYS, Pred, Reg};
use crate::hir::Special;

pub(super) fn reg_name(r: Reg) -> String {
    if r.is_phys() { format!("r{}", r.0) } else { format!("%{}", r.0 - PHYS) }
}

/// LIR as text: what `wave compile --emit lir` prints (virtual registers `%n`, predicates
/// `%pn`, physical registers `rn`).
pub fn print(kernels: &[Lir]) -> String {
    let mut out = String::new();
    for (k, lir) in kernels.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let params: Vec<String> =
            lir.params.iter().enumerate().map(|(i, (n, t))| format!("r{i} = {n}: {t}")).collect();
        let _ = write!(out, "kernel {}({})", lir.name, params.join(", "));
        if lir.local_memory > 0 {
            let _ = write!(out, " local {}", lir.local_memory);
        }
        out.push_str(" {\n");
        write_insts(&mut out, &lir.insts, &|r| reg_name(r), &|p| format!("%p{}", p.0));
        out.push_str("}\n");
    }
    out
}

/// Writes instructions with one level of indentation per open block.
pub fn write_insts(
    out: &mut String,
    insts: &[Inst],
    reg: &dyn Fn(Reg) -> String,
    pred: &dyn Fn(Pred) -> String,
) {
    let mut depth = 1usize;
    for inst in insts {
        if matches!(inst.kind, Kind::Else | Kind::EndIf | Kind::EndLoop) {
            depth = depth.saturating_sub(1);
        }
        out.push_str(&"    ".repeat(depth));
        out.push_str(&inst_text(inst, reg, pred));
        out.push('\n');
        if matches!(inst.kind, Kind::If | Kind::Else | Kind::Loop) {
            depth += 1;
        }
    }
}

/// One instruction as assembly text.
pub fn inst_text(
    inst: &Inst,
    reg: &dyn Fn(Reg) -> String,
    pred: &dyn Fn(Pred) -> String,
) -> String {
    let mut s = String::new();
    if let Some((p, neg)) = inst.guard {
        let _ = write!(s, "@{}{} ", if neg { "!" } else { "" }, pred(p));
    }
    let _ = write!(s, "{}", inst.code);
    let args: Vec<String> = inst
        .args
        .iter()
        .map(|a| match a {
            Arg::Def(r) | Arg::Use(r) => reg(*r),
            Arg::PDef(p) => pred(*p),
            Arg::PUse(p, neg) => format!("{}{}", if *neg { "!" } else { "" }, pred(*p)),
            Arg::Imm(t) => t.to_string(),
            Arg::Special(s) => special_name(*s).to_owned(),
            Arg::Addr(r, 0) => reg(*r),
            Arg::Addr(r, o) if *o < 0 => format!("[{} - {}]", reg(*r), o.unsigned_abs()),
            Arg::Addr(r, o) => format!("[{} + {o}]", reg(*r)),
            Arg::Any => "r0".into(),
        })
        .collect();
    if !args.is_empty() {
        s.push(' ');
        s.push_str(&args.join(", "));
    }
    s
}

/// The special register a thread-identity value is read from (`GlobalId` is computed, never
/// read).
pub(super) fn special_name(s: Special) -> &'static str {
    let pick = |d: u8, names: [&'static str; 3]| names[usize::from(d.min(2))];
    match s {
        Special::ThreadId(d) => pick(d, ["sr_thread_id_x", "sr_thread_id_y", "sr_thread_id_z"]),
        Special::WorkgroupId(d) => {
            pick(d, ["sr_workgroup_id_x", "sr_workgroup_id_y", "sr_workgroup_id_z"])
        }
        Special::WorkgroupSize(d) => {
            pick(d, ["sr_workgroup_size_x", "sr_workgroup_size_y", "sr_workgroup_size_z"])
        }
        Special::GridSize(d) => pick(d, ["sr_grid_size_x", "sr_grid_size_y", "sr_grid_size_z"]),
        Special::GlobalId(_) => "",
        Special::LaneId => "sr_lane_id",
        Special::WaveId => "sr_wave_id",
        Special::WaveWidth => "sr_wave_width",
    }
}

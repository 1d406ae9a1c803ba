//! Wave operations (ballot, any/all, shuffles, broadcast, prefix sums, reductions) on the
//! lanes that take part, with `shfl.sync`, `vote.sync` and `redux.sync`.

use wave_isa::ReduceOp;

use crate::kind::{Shuffle, WaveOp};
use crate::structure::Instr;

use super::{Kernel, imm, r};

impl Kernel<'_, '_> {
    /// Wave operation `op` of `i`, run by every live lane; `%q4` says which lanes take part.
    pub(super) fn wave(&mut self, i: &Instr, op: WaveOp) -> Vec<String> {
        let mut l = Vec::new();
        let d = r(i.inst.rd);
        let a = r(i.inst.rs1);
        let (p, neg) = i.pred();
        let pv = format!("{}%p{p}", if neg { "!" } else { "" });
        match op {
            WaveOp::Ballot => {
                l.push(format!("and.pred %q0, %q4, {pv};"));
                l.push("vote.sync.ballot.b32 %t1, %q0, %live;".into());
                l.push(format!("@%q4 mov.b32 {d}, %t1;"));
            }
            WaveOp::Any => {
                l.push(format!("and.pred %q0, %q4, {pv};"));
                l.push("vote.sync.any.pred %q1, %q0, %live;".into());
                l.push(format!("@%q4 mov.pred %p{}, %q1;", i.inst.rd & 3));
            }
            WaveOp::All => {
                let npv = format!("{}%p{p}", if neg { "" } else { "!" });
                l.push(format!("and.pred %q0, %q4, {npv};"));
                l.push("vote.sync.any.pred %q1, %q0, %live;".into());
                l.push("not.pred %q1, %q1;".into());
                l.push(format!("@%q4 mov.pred %p{}, %q1;", i.inst.rd & 3));
            }
            WaveOp::Reduce(kind) => {
                let (identity, op, redux) = match kind {
                    ReduceOp::Add => ("0", "add.u32", "add.u32"),
                    ReduceOp::Min => ("0x7FFFFFFF", "min.s32", "min.s32"),
                    ReduceOp::Max => ("0x80000000", "max.s32", "max.s32"),
                    ReduceOp::And => ("0xFFFFFFFF", "and.b32", "and.b32"),
                    ReduceOp::Or => ("0", "or.b32", "or.b32"),
                    ReduceOp::Xor => ("0", "xor.b32", "xor.b32"),
                };
                l.push(format!("selp.b32 %t1, {a}, {identity}, %q4;"));
                if self.options.sm >= 80 {
                    l.push(format!("redux.sync.{redux} %t1, %t1, %live;"));
                } else {
                    // Inclusive scan upwards (reads only lower, existing lanes), then the
                    // last live lane has the total.
                    scan(&mut l, op);
                    l.push("bfind.u32 %t3, %live;".into());
                    l.push("shfl.sync.idx.b32 %t1, %t1, %t3, 31, %live;".into());
                }
                l.push(format!("@%q4 mov.b32 {d}, %t1;"));
            }
            WaveOp::PrefixSum => {
                l.push(format!("selp.b32 %t1, {a}, 0, %q4;"));
                l.push("mov.b32 %t4, %t1;".into());
                scan(&mut l, "add.u32");
                l.push("sub.u32 %t1, %t1, %t4;".into());
                l.push(format!("@%q4 mov.b32 {d}, %t1;"));
            }
            WaveOp::Shuffle(from) => {
                // Source lane per lane; out of range or not taking part: the lane's own value.
                let sel = match i.imm2() {
                    Some(v) => {
                        l.push(format!("mov.b32 %t2, {};", imm(v)));
                        "%t2".to_string()
                    }
                    None => r(i.inst.rs2),
                };
                l.push("vote.sync.ballot.b32 %t5, %q4, %live;".into());
                match from {
                    Shuffle::Up => {
                        l.push(format!("setp.le.u32 %q0, {sel}, %lane;"));
                        l.push(format!("sub.u32 %t3, %lane, {sel};"));
                    }
                    Shuffle::Down => {
                        l.push(format!("setp.lt.u32 %q0, {sel}, 32;"));
                        l.push(format!("add.u32 %t3, %lane, {sel};"));
                        l.push("setp.lt.u32 %q1, %t3, 32;".into());
                        l.push("and.pred %q0, %q0, %q1;".into());
                    }
                    Shuffle::Xor => {
                        l.push(format!("setp.lt.u32 %q0, {sel}, 32;"));
                        l.push(format!("xor.b32 %t3, %lane, {sel};"));
                    }
                    Shuffle::Index | Shuffle::Broadcast => {
                        l.push(format!("setp.lt.u32 %q0, {sel}, 32;"));
                        l.push(format!("mov.b32 %t3, {sel};"));
                    }
                }
                l.push("and.b32 %t3, %t3, 31;".into());
                l.push("shr.b32 %t6, %t5, %t3;".into());
                l.push("and.b32 %t6, %t6, 1;".into());
                l.push("setp.ne.b32 %q1, %t6, 0;".into());
                l.push("and.pred %q0, %q0, %q1;".into());
                l.push(format!("shfl.sync.idx.b32 %t1, {a}, %t3, 31, %live;"));
                l.push(format!("selp.b32 %t1, %t1, {a}, %q0;"));
                l.push(format!("@%q4 mov.b32 {d}, %t1;"));
            }
        }
        l
    }
}

/// Inclusive scan of `%t1` over lanes (Kogge-Stone, reading lower lanes only).
pub(super) fn scan(l: &mut Vec<String>, op: &str) {
    for k in [1, 2, 4, 8, 16] {
        l.push(format!("shfl.sync.up.b32 %t2|%q2, %t1, {k}, 0, %live;"));
        l.push(format!("@%q2 {op} %t1, %t1, %t2;"));
    }
}

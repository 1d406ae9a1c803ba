//! Wave operations (ballot, any/all, shuffles, broadcast, prefix sums, reductions) in each
//! dialect's sub-group or SIMD-group intrinsics.

use wave_isa::ReduceOp;

use crate::kind::{Shuffle, WaveOp};
use crate::structure::Instr;

use super::{Dialect, Writer, hex, r};

impl Writer<'_, '_> {
    /// Wave operation `op` of `i`, run by every lane of the wave (wave-uniform lowering);
    /// `part` says whether this lane takes part.
    pub(super) fn wave(&mut self, i: &Instr, op: WaveOp, part: &str) -> Vec<String> {
        let d = self.d();
        let (u32t, i32t, u64t, _) = d.types();
        let mut l = Vec::new();
        let rd = r(i.inst.rd);
        let a = r(i.inst.rs1);
        let (p, neg) = i.pred();
        let pv = format!("{}p{p}", if neg { "!" } else { "" });
        let ballot = |x: &str| match d {
            Dialect::Sycl => format!("wave_ballot(wave_sg, {x})"),
            _ => format!("wave_ballot({x})"),
        };
        l.push(format!("const bool wave_part = {part};"));
        match op {
            WaveOp::Ballot => {
                l.push(format!(
                    "const {u32t} wave_v = ({u32t}){};",
                    ballot(&format!("wave_part && {pv}"))
                ));
                l.push(format!("if (wave_part) {rd} = wave_v;"));
            }
            WaveOp::Any => {
                l.push(format!("const bool wave_v = {};", d.any(&format!("wave_part && {pv}"))));
                l.push(format!("if (wave_part) p{} = wave_v;", i.inst.rd & 3));
            }
            WaveOp::All => {
                let npv = format!("{}p{p}", if neg { "" } else { "!" });
                l.push(format!("const bool wave_v = !{};", d.any(&format!("wave_part && {npv}"))));
                l.push(format!("if (wave_part) p{} = wave_v;", i.inst.rd & 3));
            }
            WaveOp::Reduce(kind) => {
                let identity = match kind {
                    ReduceOp::Add => "0u",
                    ReduceOp::Min => "0x7FFFFFFFu",
                    ReduceOp::Max => "0x80000000u",
                    ReduceOp::And => "0xFFFFFFFFu",
                    ReduceOp::Or => "0u",
                    ReduceOp::Xor => "0u",
                };
                l.push(format!("const {u32t} wave_x = wave_part ? {a} : {identity};"));
                let v = match d {
                    Dialect::Sycl => match kind {
                        ReduceOp::Add => "sycl::reduce_over_group(wave_sg, wave_x, sycl::plus<uint32_t>())".to_string(),
                        ReduceOp::Min => "(uint32_t)sycl::reduce_over_group(wave_sg, (int32_t)wave_x, sycl::minimum<int32_t>())".into(),
                        ReduceOp::Max => "(uint32_t)sycl::reduce_over_group(wave_sg, (int32_t)wave_x, sycl::maximum<int32_t>())".into(),
                        ReduceOp::And => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_and<uint32_t>())".into(),
                        ReduceOp::Or => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_or<uint32_t>())".into(),
                        ReduceOp::Xor => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_xor<uint32_t>())".into(),
                    },
                    Dialect::Metal => match kind {
                        ReduceOp::Add => "simd_sum(wave_x)".to_string(),
                        ReduceOp::Min => "(uint)simd_min((int)wave_x)".into(),
                        ReduceOp::Max => "(uint)simd_max((int)wave_x)".into(),
                        ReduceOp::And => "simd_and(wave_x)".into(),
                        ReduceOp::Or => "simd_or(wave_x)".into(),
                        ReduceOp::Xor => "simd_xor(wave_x)".into(),
                    },
                    Dialect::Hip => {
                        // Inclusive scan upwards (reads only lower lanes, which exist), then
                        // the last lane of the wave has the total.
                        l.push(format!("{u32t} wave_s = wave_x;"));
                        l.push("for (uint32_t wave_k = 1; wave_k < wave_w; wave_k <<= 1) {".into());
                        l.push("    const uint32_t wave_y = wave_shfl_up(wave_s, wave_k);".into());
                        let combine = match kind {
                            ReduceOp::Add => "wave_s + wave_y".to_string(),
                            ReduceOp::Min => "wave_imin(wave_s, wave_y)".into(),
                            ReduceOp::Max => "wave_imax(wave_s, wave_y)".into(),
                            ReduceOp::And => "wave_s & wave_y".into(),
                            ReduceOp::Or => "wave_s | wave_y".into(),
                            ReduceOp::Xor => "wave_s ^ wave_y".into(),
                        };
                        l.push(format!("    if (lane >= wave_k) wave_s = {combine};"));
                        l.push("}".into());
                        l.push("const uint32_t wave_last = (wave_threads - wave_id * wave_w < wave_w ? wave_threads - wave_id * wave_w : wave_w) - 1u;".into());
                        "wave_shfl(wave_s, wave_last)".into()
                    }
                };
                l.push(format!("const {u32t} wave_v = {v};"));
                l.push(format!("if (wave_part) {rd} = wave_v;"));
            }
            WaveOp::PrefixSum => {
                l.push(format!("const {u32t} wave_x = wave_part ? {a} : 0u;"));
                let v = match d {
                    Dialect::Sycl => {
                        "sycl::exclusive_scan_over_group(wave_sg, wave_x, sycl::plus<uint32_t>())"
                            .to_string()
                    }
                    Dialect::Metal => "simd_prefix_exclusive_sum(wave_x)".into(),
                    Dialect::Hip => {
                        l.push(format!("{u32t} wave_s = wave_x;"));
                        l.push("for (uint32_t wave_k = 1; wave_k < wave_w; wave_k <<= 1) {".into());
                        l.push("    const uint32_t wave_y = wave_shfl_up(wave_s, wave_k);".into());
                        l.push("    if (lane >= wave_k) wave_s += wave_y;".into());
                        l.push("}".into());
                        "wave_s - wave_x".into()
                    }
                };
                l.push(format!("const {u32t} wave_v = {v};"));
                l.push(format!("if (wave_part) {rd} = wave_v;"));
            }
            WaveOp::Shuffle(from) => {
                let sel = match i.imm2() {
                    Some(v) => hex(v),
                    None => r(i.inst.rs2),
                };
                // Source lane; out of range or not taking part: the lane's own value.
                let (src, ok) = match from {
                    Shuffle::Up => (format!("lane - {sel}"), format!("{sel} <= lane")),
                    Shuffle::Down => (
                        format!("lane + {sel}"),
                        format!("{sel} < wave_w && lane + {sel} < wave_w"),
                    ),
                    Shuffle::Xor => (format!("lane ^ {sel}"), format!("{sel} < wave_w")),
                    Shuffle::Index | Shuffle::Broadcast => (sel.clone(), format!("{sel} < wave_w")),
                };
                l.push(format!("const {u64t} wave_m = {};", ballot("wave_part")));
                l.push(format!("const {u32t} wave_src = ({src}) & (wave_w - 1u);"));
                l.push(format!(
                    "const bool wave_ok = ({ok}) && ((wave_m >> wave_src) & 1u) != 0u;"
                ));
                let shfl = match d {
                    Dialect::Hip => format!("wave_shfl({a}, wave_src)"),
                    Dialect::Sycl => format!("sycl::select_from_group(wave_sg, {a}, wave_src)"),
                    Dialect::Metal => format!("simd_shuffle({a}, (ushort)wave_src)"),
                };
                l.push(format!("const {u32t} wave_y = {shfl};"));
                l.push(format!("if (wave_part) {rd} = wave_ok ? wave_y : {a};"));
            }
        }
        let _ = i32t;
        l
    }
}

//! Wave operations (ballot, any/all, shuffles, broadcast, prefix sums, reductions) in each
//! dialect's sub-group or SIMD-group intrinsics.

use wave_isa::{Operation, ReduceOp};

use crate::structure::Instr;

use super::{Dialect, Writer, hex, r};

impl Writer<'_, '_> {
    /// A wave operation run by every lane of the wave (wave-uniform lowering); `part` says
    /// whether this lane takes part.
    pub(super) fn wave(&mut self, i: &Instr, part: &str) -> Vec<String> {
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
        match i.op {
            Operation::Ballot => {
                l.push(format!(
                    "const {u32t} wave_v = ({u32t}){};",
                    ballot(&format!("wave_part && {pv}"))
                ));
                l.push(format!("if (wave_part) {rd} = wave_v;"));
            }
            Operation::Any => {
                l.push(format!("const bool wave_v = {};", d.any(&format!("wave_part && {pv}"))));
                l.push(format!("if (wave_part) p{} = wave_v;", i.inst.rd & 3));
            }
            Operation::All => {
                let npv = format!("{}p{p}", if neg { "" } else { "!" });
                l.push(format!("const bool wave_v = !{};", d.any(&format!("wave_part && {npv}"))));
                l.push(format!("if (wave_part) p{} = wave_v;", i.inst.rd & 3));
            }
            Operation::Reduce(kind) => {
                let (identity, op) = match kind {
                    ReduceOp::Add => ("0u", "add"),
                    ReduceOp::Min => ("0x7FFFFFFFu", "min"),
                    ReduceOp::Max => ("0x80000000u", "max"),
                    ReduceOp::And => ("0xFFFFFFFFu", "and"),
                    ReduceOp::Or => ("0u", "or"),
                    ReduceOp::Xor => ("0u", "xor"),
                };
                l.push(format!("const {u32t} wave_x = wave_part ? {a} : {identity};"));
                let v = match d {
                    Dialect::Sycl => match op {
                        "add" => "sycl::reduce_over_group(wave_sg, wave_x, sycl::plus<uint32_t>())".to_string(),
                        "min" => "(uint32_t)sycl::reduce_over_group(wave_sg, (int32_t)wave_x, sycl::minimum<int32_t>())".into(),
                        "max" => "(uint32_t)sycl::reduce_over_group(wave_sg, (int32_t)wave_x, sycl::maximum<int32_t>())".into(),
                        "and" => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_and<uint32_t>())".into(),
                        "or" => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_or<uint32_t>())".into(),
                        _ => "sycl::reduce_over_group(wave_sg, wave_x, sycl::bit_xor<uint32_t>())".into(),
                    },
                    Dialect::Metal => match op {
                        "add" => "simd_sum(wave_x)".to_string(),
                        "min" => "(uint)simd_min((int)wave_x)".into(),
                        "max" => "(uint)simd_max((int)wave_x)".into(),
                        "and" => "simd_and(wave_x)".into(),
                        "or" => "simd_or(wave_x)".into(),
                        _ => "simd_xor(wave_x)".into(),
                    },
                    Dialect::Hip => {
                        // Inclusive scan upwards (reads only lower lanes, which exist), then
                        // the last lane of the wave has the total.
                        l.push(format!("{u32t} wave_s = wave_x;"));
                        l.push("for (uint32_t wave_k = 1; wave_k < wave_w; wave_k <<= 1) {".into());
                        l.push("    const uint32_t wave_y = wave_shfl_up(wave_s, wave_k);".into());
                        let combine = match op {
                            "add" => "wave_s + wave_y".to_string(),
                            "min" => "wave_imin(wave_s, wave_y)".into(),
                            "max" => "wave_imax(wave_s, wave_y)".into(),
                            "and" => "wave_s & wave_y".into(),
                            "or" => "wave_s | wave_y".into(),
                            _ => "wave_s ^ wave_y".into(),
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
            Operation::PrefixSum => {
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
            Operation::Shuffle
            | Operation::ShuffleUp
            | Operation::ShuffleDown
            | Operation::ShuffleXor
            | Operation::Broadcast => {
                let sel = match i.imm2() {
                    Some(v) => hex(v),
                    None => r(i.inst.rs2),
                };
                // Source lane; out of range or not taking part: the lane's own value.
                let (src, ok) = match i.op {
                    Operation::ShuffleUp => (format!("lane - {sel}"), format!("{sel} <= lane")),
                    Operation::ShuffleDown => (
                        format!("lane + {sel}"),
                        format!("{sel} < wave_w && lane + {sel} < wave_w"),
                    ),
                    Operation::ShuffleXor => (format!("lane ^ {sel}"), format!("{sel} < wave_w")),
                    _ => (sel.clone(), format!("{sel} < wave_w")),
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
            _ => {}
        }
        let _ = i32t;
        l
    }
}

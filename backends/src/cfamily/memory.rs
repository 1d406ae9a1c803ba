//! Memory operands: addresses and typed pointers into device or local memory, fences by
//! scope, and atomics.

use wave_isa::{AtomicOp, AtomicType};

use crate::structure::Instr;

use super::{Dialect, Writer, r};

impl Writer<'_, '_> {
    /// Byte address of a memory operand, as a signed 64-bit expression.
    pub(super) fn at(&self, i: &Instr, plus: i64) -> String {
        let (_, _, _, i64t) = self.d().types();
        let off = i64::from(i.mem_offset()) + plus;
        if off == 0 {
            format!("({i64t}){}", r(i.inst.rs1))
        } else {
            format!("(({i64t}){} + {off})", r(i.inst.rs1))
        }
    }

    pub(super) fn ptr(&self, local: bool, ty: &str, at: &str) -> String {
        if local { self.d().local_ptr(ty, at) } else { self.d().device_ptr(ty, at) }
    }

    pub(super) fn fence(&self, scope: u8) -> String {
        match self.d() {
            Dialect::Hip => match scope {
                0 | 1 => "__threadfence_block();".into(),
                2 => "__threadfence();".into(),
                _ => "__threadfence_system();".into(),
            },
            Dialect::Sycl => {
                let s = ["sub_group", "work_group", "device", "system"][usize::from(scope.min(3))];
                format!("sycl::atomic_fence(sycl::memory_order::acq_rel, sycl::memory_scope::{s});")
            }
            Dialect::Metal => {
                let s = match scope {
                    0 => "thread_scope_simdgroup",
                    1 => "thread_scope_threadgroup",
                    _ => "thread_scope_device",
                };
                format!(
                    "atomic_thread_fence(mem_flags::mem_device | mem_flags::mem_threadgroup, memory_order_seq_cst, {s});"
                )
            }
        }
    }

    pub(super) fn atomic(
        &mut self,
        i: &Instr,
        kind: AtomicOp,
        ty: AtomicType,
        local: bool,
        l: &mut Vec<String>,
    ) {
        let d = self.d();
        let (u32t, i32t, u64t, i64t) = d.types();
        let wide = ty.is_64();
        if d == Dialect::Metal && wide {
            self.unsupported(i, "Metal has no general 64-bit atomics (CAP_ATOMIC_64)");
            return;
        }
        if ty == AtomicType::F32 && kind != AtomicOp::Add {
            self.unsupported(i, "only `atomic_add` takes the f32 type");
            return;
        }
        let (rd, rs2, rs3) = (i.inst.rd, i.inst.rs2, i.rs3());
        let at = self.at(i, 0);
        let t = match ty {
            AtomicType::U32 => u32t,
            AtomicType::I32 => i32t,
            AtomicType::F32 => "float",
            AtomicType::U64 => u64t,
            AtomicType::I64 => i64t,
        };
        let val = |n: u8| -> String {
            match ty {
                AtomicType::U64 | AtomicType::I64 => {
                    format!("({t})wave_pair({}, {})", r(n), r(n + 1))
                }
                AtomicType::F32 => format!("wave_f({})", r(n)),
                AtomicType::U32 | AtomicType::I32 => format!("({t}){}", r(n)),
            }
        };
        let value = val(rs2);
        let scope = i.inst.scope.min(3);
        let expr = match d {
            Dialect::Hip => {
                let s = [
                    "__HIP_MEMORY_SCOPE_WAVEFRONT",
                    "__HIP_MEMORY_SCOPE_WORKGROUP",
                    "__HIP_MEMORY_SCOPE_AGENT",
                    "__HIP_MEMORY_SCOPE_SYSTEM",
                ][usize::from(scope)];
                let p = self.ptr(local, t, &at);
                match kind {
                    AtomicOp::Add => {
                        format!("__hip_atomic_fetch_add({p}, {value}, __ATOMIC_RELAXED, {s})")
                    }
                    AtomicOp::Sub => format!(
                        "__hip_atomic_fetch_add({p}, ({t})0 - {value}, __ATOMIC_RELAXED, {s})"
                    ),
                    AtomicOp::Min => {
                        format!("__hip_atomic_fetch_min({p}, {value}, __ATOMIC_RELAXED, {s})")
                    }
                    AtomicOp::Max => {
                        format!("__hip_atomic_fetch_max({p}, {value}, __ATOMIC_RELAXED, {s})")
                    }
                    AtomicOp::And => {
                        format!("__hip_atomic_fetch_and({p}, {value}, __ATOMIC_RELAXED, {s})")
                    }
                    AtomicOp::Or => {
                        format!("__hip_atomic_fetch_or({p}, {value}, __ATOMIC_RELAXED, {s})")
                    }
                    AtomicOp::Xor => {
                        format!("__hip_atomic_fetch_xor({p}, {value}, __ATOMIC_RELAXED, {s})")
                    }
                    AtomicOp::Exchange => {
                        format!("__hip_atomic_exchange({p}, {value}, __ATOMIC_RELAXED, {s})")
                    }
                    AtomicOp::Cas => {
                        l.push(format!("{t} wave_expected = {value};"));
                        l.push(format!("__hip_atomic_compare_exchange_strong({p}, &wave_expected, {}, __ATOMIC_RELAXED, __ATOMIC_RELAXED, {s});", val(rs3)));
                        "wave_expected".into()
                    }
                }
            }
            Dialect::Sycl => {
                let s = ["sub_group", "work_group", "device", "system"][usize::from(scope)];
                let space = if local { "local_space" } else { "global_space" };
                let p = self.ptr(local, t, &at);
                l.push(format!(
                    "sycl::atomic_ref<{t}, sycl::memory_order::relaxed, sycl::memory_scope::{s}, sycl::access::address_space::{space}> wave_ref(*{p});"
                ));
                match kind {
                    AtomicOp::Add => format!("wave_ref.fetch_add({value})"),
                    AtomicOp::Sub => format!("wave_ref.fetch_sub({value})"),
                    AtomicOp::Min => format!("wave_ref.fetch_min({value})"),
                    AtomicOp::Max => format!("wave_ref.fetch_max({value})"),
                    AtomicOp::And => format!("wave_ref.fetch_and({value})"),
                    AtomicOp::Or => format!("wave_ref.fetch_or({value})"),
                    AtomicOp::Xor => format!("wave_ref.fetch_xor({value})"),
                    AtomicOp::Exchange => format!("wave_ref.exchange({value})"),
                    AtomicOp::Cas => {
                        l.push(format!("{t} wave_expected = {value};"));
                        l.push(format!(
                            "wave_ref.compare_exchange_strong(wave_expected, {});",
                            val(rs3)
                        ));
                        "wave_expected".into()
                    }
                }
            }
            Dialect::Metal => {
                let aty = match ty {
                    AtomicType::I32 => "atomic_int",
                    AtomicType::F32 => "atomic_float",
                    AtomicType::U32 | AtomicType::U64 | AtomicType::I64 => "atomic_uint",
                };
                let p = self.ptr(local, aty, &at);
                match kind {
                    AtomicOp::Add => {
                        format!("atomic_fetch_add_explicit({p}, {value}, memory_order_relaxed)")
                    }
                    AtomicOp::Sub => {
                        format!("atomic_fetch_sub_explicit({p}, {value}, memory_order_relaxed)")
                    }
                    AtomicOp::Min => {
                        format!("atomic_fetch_min_explicit({p}, {value}, memory_order_relaxed)")
                    }
                    AtomicOp::Max => {
                        format!("atomic_fetch_max_explicit({p}, {value}, memory_order_relaxed)")
                    }
                    AtomicOp::And => {
                        format!("atomic_fetch_and_explicit({p}, {value}, memory_order_relaxed)")
                    }
                    AtomicOp::Or => {
                        format!("atomic_fetch_or_explicit({p}, {value}, memory_order_relaxed)")
                    }
                    AtomicOp::Xor => {
                        format!("atomic_fetch_xor_explicit({p}, {value}, memory_order_relaxed)")
                    }
                    AtomicOp::Exchange => {
                        format!("atomic_exchange_explicit({p}, {value}, memory_order_relaxed)")
                    }
                    AtomicOp::Cas => {
                        // A strong compare-and-swap from the weak one: retry while it fails
                        // spuriously (the value seen still equals the expected one).
                        l.push(format!("{t} wave_expected;"));
                        l.push("do {".into());
                        l.push(format!("    wave_expected = {value};"));
                        l.push(format!(
                            "}} while (!atomic_compare_exchange_weak_explicit({p}, &wave_expected, {}, memory_order_relaxed, memory_order_relaxed) && wave_expected == {value});",
                            val(rs3)
                        ));
                        "wave_expected".into()
                    }
                }
            }
        };
        let store = if rd == 0 {
            format!("(void)({expr});")
        } else {
            match ty {
                AtomicType::U64 | AtomicType::I64 => {
                    format!(
                        "{{ {u64t} wave_old = ({u64t})({expr}); {} = ({u32t})wave_old; {} = ({u32t})(wave_old >> 32); }}",
                        r(rd),
                        r(rd + 1)
                    )
                }
                AtomicType::F32 => format!("{} = wave_u({expr});", r(rd)),
                AtomicType::U32 | AtomicType::I32 => format!("{} = ({u32t})({expr});", r(rd)),
            }
        };
        l.push(store);
        if l.len() > 1 {
            l.insert(0, "{".into());
            for line in l.iter_mut().skip(1) {
                line.insert_str(0, "    ");
            }
            l.push("}".into());
        }
    }
}

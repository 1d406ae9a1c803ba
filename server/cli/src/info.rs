//! `wave info`: a target's Section 7 constants and capabilities, and for each kernel of a file
//! its resources, occupancy, what limits it and how to gain a wave.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use wave_isa::target::{self, KernelResources, Limit, PROFILES, Profile};
use wave_isa::{AtomicType, Capability, Modifier};
use wave_wbin::Module;

use crate::{Failure, report::Reporter};

pub(crate) fn run(
    reporter: &Reporter,
    file: Option<&Path>,
    target_name: &str,
    workgroup: Option<&str>,
    list: bool,
) -> Result<(), Failure> {
    let mut out = String::new();
    if list {
        for p in PROFILES {
            let _ = writeln!(out, "{:<14} {}", p.name, p.description);
        }
        std::io::stdout().lock().write_all(out.as_bytes())?;
        return Ok(());
    }
    let Some(profile) = target::profile(target_name) else {
        let names: Vec<_> = PROFILES.iter().map(|p| p.name).collect();
        return Err(Failure::Usage(format!(
            "unknown target `{target_name}`; targets are {}",
            names.join(", ")
        )));
    };
    let workgroup = workgroup.map(parse_workgroup).transpose()?;
    match file {
        None => describe_target(&mut out, profile),
        Some(path) => {
            let module = if path.extension().is_some_and(|e| e == "wbin") {
                crate::read_wbin(path)?
            } else {
                crate::assemble_file(reporter, path)?.module
            };
            describe_kernels(&mut out, profile, &module, workgroup);
        }
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

fn parse_workgroup(text: &str) -> Result<[u32; 3], Failure> {
    let mut size = [1u32; 3];
    let parts: Vec<&str> = text.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(Failure::Usage(format!("--workgroup takes X[,Y[,Z]], found `{text}`")));
    }
    for (i, p) in parts.iter().enumerate() {
        size[i] = p.trim().parse::<u32>().ok().filter(|v| *v >= 1).ok_or_else(|| {
            Failure::Usage(format!("--workgroup: `{p}` is not a positive integer"))
        })?;
    }
    Ok(size)
}

fn describe_target(out: &mut String, p: &Profile) {
    let _ = writeln!(out, "target {}: {}", p.name, p.description);
    let _ = writeln!(out, "constants:");
    for (name, value) in p.constants.entries() {
        let _ = writeln!(out, "  {name:<24} {value}");
    }
    let _ = writeln!(out, "capabilities:");
    for cap in Capability::ALL {
        let _ = writeln!(out, "  {:<24} {}", cap.name(), if p.has(cap) { "yes" } else { "no" });
    }
    if let Some(m) = p.mma {
        let _ = writeln!(out, "  MMA_M x MMA_N x MMA_K     {} x {} x {}", m.m, m.n, m.k);
    }
}

/// The optional capabilities a kernel's code needs.
fn capabilities_used(module: &Module, kernel: &wave_wbin::Kernel) -> Vec<(Capability, u32)> {
    let mut used: Vec<(Capability, u32)> = Vec::new();
    let mut add = |cap, pc| {
        if !used.iter().any(|(c, _)| *c == cap) {
            used.push((cap, pc));
        }
    };
    for (pc, inst) in module.instructions(kernel) {
        let Some(op) = inst.info() else { continue };
        if let Some(cap) = op.capability {
            add(cap, pc);
        }
        if let Modifier::Atomic { .. } = op.modifier {
            match AtomicType::from_bits(inst.modifier & 7) {
                Some(AtomicType::F32) => add(Capability::AtomicF32, pc),
                Some(t) if t.is_64() => add(Capability::Atomic64, pc),
                _ => {}
            }
        }
    }
    // A call cycle needs CAP_RECURSION: a function that can reach itself.
    let calls: Vec<(u32, u32)> = module
        .instructions(kernel)
        .filter(|(_, i)| i.opcode == 0x67)
        .map(|(pc, i)| (pc, i.ext.unwrap_or(0)))
        .collect();
    let function_of = |pc: u32| calls.iter().map(|(_, t)| *t).filter(|t| *t <= pc).max();
    for &(pc, target) in &calls {
        let mut seen = vec![target];
        let mut frontier = vec![target];
        while let Some(f) = frontier.pop() {
            for &(call_pc, t) in &calls {
                if function_of(call_pc) == Some(f) && !seen.contains(&t) {
                    seen.push(t);
                    frontier.push(t);
                }
            }
        }
        if function_of(pc) == Some(target)
            || seen
                .iter()
                .any(|f| calls.iter().any(|(cp, t)| function_of(*cp) == Some(*f) && *t == target))
        {
            add(Capability::Recursion, pc);
        }
    }
    used
}

fn describe_kernels(out: &mut String, p: &Profile, module: &Module, workgroup: Option<[u32; 3]>) {
    let c = &p.constants;
    let _ = writeln!(
        out,
        "target {} (W = {}, F = {} bytes, S = {} bytes)",
        p.name, c.wave_width, c.register_file_size, c.local_memory_size
    );
    for kernel in &module.kernels {
        let (size, assumed) = match (kernel.workgroup_size, workgroup) {
            (_, Some(w)) => (w, false),
            (Some(w), None) => (w, false),
            (None, None) => ([64, 1, 1], true),
        };
        let threads =
            size.iter().map(|&d| u64::from(d)).product::<u64>().min(u64::from(u32::MAX)) as u32;
        let resources = KernelResources {
            registers: u32::from(kernel.registers),
            local_memory: kernel.local_memory,
            workgroup_threads: threads,
        };
        let occ = target::occupancy(c, resources);
        let _ = writeln!(out, "\nkernel {}", kernel.name);
        let _ = writeln!(
            out,
            "  resources: R = {} registers, {} predicates, {} bytes of local memory, workgroup {}x{}x{}{} = {} waves",
            kernel.registers,
            kernel.predicates,
            kernel.local_memory,
            size[0],
            size[1],
            size[2],
            if assumed { " (assumed: no .workgroup_size; use --workgroup)" } else { "" },
            occ.waves_per_workgroup
        );
        let _ = writeln!(
            out,
            "  occupancy equation: floor(F / (R * W * 4)) = floor({} / ({} * {} * 4)) = {} waves",
            c.register_file_size,
            kernel.registers.max(1),
            c.wave_width,
            occ.waves_by_registers
        );
        for (limit, n) in occ.workgroups_by {
            let shown =
                if n == u32::MAX { "no limit".to_owned() } else { format!("{n} workgroups") };
            let mark = if limit == occ.limit { "  <- binds" } else { "" };
            let _ = writeln!(out, "    {:<48} {shown}{mark}", limit.describe());
        }
        if !occ.rejections.is_empty() {
            for r in &occ.rejections {
                let _ = writeln!(out, "  cannot be dispatched: {r}");
            }
        } else {
            let _ = writeln!(
                out,
                "  resident per core: {} workgroups, {} of {} waves ({}%), limited by {}",
                occ.resident_workgroups,
                occ.resident_waves,
                c.max_waves_per_core,
                occ.percent,
                occ.limit.describe()
            );
            if occ.limit == Limit::Registers {
                match occ.registers_for_next_workgroup {
                    Some(r) if r < u32::from(kernel.registers) => {
                        let _ = writeln!(
                            out,
                            "  hint: use at most {r} registers (free {}) to fit one more workgroup",
                            u32::from(kernel.registers) - r
                        );
                    }
                    _ => {}
                }
            }
        }
        let used = capabilities_used(module, kernel);
        for (cap, pc) in used {
            let line =
                module.line_at(pc).map(|l| format!(" (line {})", l.line)).unwrap_or_default();
            let status = if p.has(cap) { "present" } else { "MISSING on this target" };
            let _ = writeln!(out, "  needs {}{line}: {status}", cap.name());
        }
    }
}

/// `wave devices`: the emulator, then each CUDA GPU, or why there is none.
pub(crate) fn devices(json: bool) -> Result<(), Failure> {
    let (gpus, missing) = wave_runtime::devices();
    let mut out = String::new();
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    if json {
        out.push_str("{\"devices\":[{\"device\":\"emulator\",\"kind\":\"emulator\"}");
        for g in &gpus {
            let _ = write!(
                out,
                ",{{\"device\":\"cuda:{}\",\"kind\":\"cuda\",\"name\":{},\"compute_capability\":\"{}.{}\",\"multiprocessors\":{},\"memory_bytes\":{}}}",
                g.ordinal,
                wave_conformance::options::json_string(&g.name),
                g.compute_capability.0,
                g.compute_capability.1,
                g.multiprocessors,
                g.memory_bytes
            );
        }
        out.push(']');
        if let Some(why) = &missing {
            let _ = write!(
                out,
                ",\"cuda_unavailable\":{}",
                wave_conformance::options::json_string(&why.to_string())
            );
        }
        out.push_str("}\n");
    } else {
        out.push_str("emulator   the WAVE emulator (W = 4 to 64, every capability)\n");
        for g in &gpus {
            let _ = writeln!(
                out,
                "cuda:{:<5} {}, compute capability {}.{}, {} SMs, {:.1} GiB",
                g.ordinal,
                g.name,
                g.compute_capability.0,
                g.compute_capability.1,
                g.multiprocessors,
                gib(g.memory_bytes)
            );
        }
        if let Some(why) = &missing {
            let _ = writeln!(out, "cuda       not available: {why}");
        }
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

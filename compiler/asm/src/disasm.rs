//! The disassembler: a [`Module`] to canonical assembly text.
//!
//! The text reassembles to the same code bytes, kernel table and symbols: every kernel
//! property is printed as a directive (`.registers` always, so that R is kept even when the
//! code uses fewer), labels come from the symbol table, and call targets without a symbol get
//! a generated label. Structured blocks are indented one level per nesting. A `mov_imm` whose
//! bits look like a float gets that float as a comment.

use std::collections::HashMap;
use std::fmt::Write;

use wave_isa::{Flow, ImmKind, Opcode, Operand, format_float, write_inst};
use wave_wbin::Module;

/// Prints `module` as canonical assembly.
pub fn disassemble(module: &Module) -> String {
    let mut out = String::new();
    for (k, kernel) in module.kernels.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        // Labels: the symbol table, plus generated names for call targets without one.
        let mut labels: Vec<(u32, String)> = module
            .symbols
            .iter()
            .filter(|s| s.kernel as usize == k)
            .map(|s| (s.offset, s.name.clone()))
            .collect();
        for (_, inst) in module.instructions(kernel) {
            if inst.opcode == Opcode::Call as u8 {
                let target = inst.ext.unwrap_or(0);
                if !labels.iter().any(|(o, _)| *o == target) {
                    let mut name = format!("fn_{target:x}");
                    while labels.iter().any(|(_, n)| *n == name) {
                        name.push('_');
                    }
                    labels.push((target, name));
                }
            }
        }
        labels.sort_by_key(|(o, _)| *o);
        let names: HashMap<u32, String> =
            labels.iter().rev().map(|(o, n)| (*o, n.clone())).collect();
        let _ = writeln!(out, ".kernel {}", kernel.name);
        for p in &kernel.params {
            let _ = writeln!(out, ".param {}: {}", p.name, p.ty.name());
        }
        let _ = writeln!(out, ".registers {}", kernel.registers);
        if kernel.local_memory != 0 {
            let _ = writeln!(out, ".local_memory {}", kernel.local_memory);
        }
        if let Some([x, y, z]) = kernel.workgroup_size {
            let _ = writeln!(out, ".workgroup_size {x}, {y}, {z}");
        }
        let mut depth = 1usize;
        let mut label_at = labels.iter().peekable();
        let target = |offset: u32| names.get(&offset).cloned();
        for (pc, inst) in module.instructions(kernel) {
            while let Some((_, name)) = label_at.next_if(|(o, _)| *o <= pc) {
                let _ = writeln!(out, "{name}:");
            }
            let (out_one, in_after) =
                crate::indentation(inst.info().map_or(Flow::Next, |op| op.flags.flow));
            if out_one {
                depth = depth.saturating_sub(1).max(1);
            }
            let mut line = String::new();
            write_inst(&inst, &mut line, &target);
            if let Some(comment) = float_comment(&inst) {
                let _ = write!(line, "  ; {comment}");
            }
            let _ = writeln!(out, "{}{line}", "    ".repeat(depth));
            if in_after {
                depth += 1;
            }
        }
        for (_, name) in label_at {
            let _ = writeln!(out, "{name}:");
        }
        out.push_str(".end\n");
    }
    out
}

/// For an untyped immediate whose bits read naturally as a float, that float.
fn float_comment(inst: &wave_isa::Inst) -> Option<String> {
    let op = inst.info()?;
    if !op.operands.contains(&Operand::Imm(ImmKind::Bits)) {
        return None;
    }
    let bits = inst.ext?;
    if (-65536..=65535).contains(&(bits as i32)) {
        return None;
    }
    let value = f32::from_bits(bits);
    let text = format_float(bits);
    let natural = value.is_finite() && value != 0.0 && value.abs() >= 1e-6 && value.abs() <= 1e9;
    (natural && text.len() <= 12).then_some(text)
}

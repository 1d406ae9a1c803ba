//! The G3 ("v0.4") instruction words of the reference toolchain's repository: decoded
//! strictly (every field an instruction does not use must be zero, as both reference writers
//! leave it) and encoded as its assembler would.
//!
//! W0: opcode [31:24], rd [23:16], rs1 [15:8], modifier [7:4], reserved [3], pred_neg [2],
//! pred_reg [1:0]. W1: the whole word as an immediate (`call`, `mov_imm`), or a [31:24],
//! b [23:16], c [15:8], reserved [7:2], scope [1:0].

use wave_isa::Guard;

use super::RefInst;
use super::table::{Form, by_g3, has_suboperations};

/// Decodes the instruction at the start of `bytes`; returns it and its size (4 or 8).
pub(crate) fn decode(bytes: &[u8]) -> Result<(RefInst, usize), String> {
    let Some(w0) = word(bytes, 0) else {
        return Err(format!("truncated instruction: {} bytes left, a word needs 4", bytes.len()));
    };
    let [m0, rs1, rd, op] = w0.to_le_bytes();
    let modifier = m0 >> 4;
    let Some(row) = by_g3(op, modifier) else {
        return Err(if has_suboperations(op) {
            format!("opcode 0x{op:02X} has no modifier {modifier}")
        } else if by_g3(op, 0).is_some() {
            format!("opcode 0x{op:02X} takes no modifier, found {modifier}")
        } else {
            format!("unknown opcode 0x{op:02X}")
        });
    };
    if m0 & 8 != 0 {
        return Err(format!("`{}`: reserved bit 3 of the first word is set", row.name));
    }
    let (pred, negate) = (m0 & 3, m0 & 4 != 0);
    let guard = (pred != 0 || negate).then_some(Guard { predicate: pred, negate });
    let form = row.form;
    let uses = form.uses();
    let mut inst = RefInst { row, rd, rs1, guard, ..RefInst::default() };
    let size = if form.g3_two_words() { 8 } else { 4 };
    if form.g3_two_words() {
        let Some(w1) = word(bytes, 4) else {
            return Err(format!(
                "`{}` needs a second word, but the kernel's code ends {} bytes after the first",
                row.name,
                bytes.len().saturating_sub(4)
            ));
        };
        if uses.imm {
            inst.imm = w1;
        } else {
            let [s, c, b, a] = w1.to_le_bytes();
            (inst.a, inst.b, inst.c, inst.scope) = (a, b, c, s & 3);
            if s & !3 != 0 {
                return Err(format!(
                    "`{}`: reserved bits [7:2] of the second word are set",
                    row.name
                ));
            }
        }
    }
    check_fields(&inst)?;
    Ok((inst, size))
}

/// Checks that the fields `inst`'s form does not use are zero and that predicate and special
/// register indices are in range. Shared with the G2 decoder.
pub(crate) fn check_fields(inst: &RefInst) -> Result<(), String> {
    let row = inst.row;
    let uses = row.form.uses();
    // An atomic's W1.b is where the reference assembler puts a CAS's second value while
    // writing the add's modifier; it is kept for the converter to refuse with a reason.
    let atomic = matches!(row.form, Form::LocalAtomic | Form::DeviceAtomic);
    for (used, value, field) in [
        (uses.rd, inst.rd, "rd"),
        (uses.rs1, inst.rs1, "rs1"),
        (uses.a, inst.a, "rs2 (W1.a)"),
        (uses.b || atomic, inst.b, "rs3 (W1.b)"),
        (uses.c, inst.c, "rs4 (W1.c)"),
        (uses.scope, inst.scope, "scope"),
    ] {
        if !used && value != 0 {
            return Err(format!("`{}` does not use field {field}, but it holds {value}", row.name));
        }
    }
    if !uses.imm && inst.imm != 0 {
        return Err(format!("`{}` takes no immediate", row.name));
    }
    let pd = matches!(row.form, Form::Cmp | Form::Vote);
    let ps = matches!(row.form, Form::Select | Form::Ballot | Form::Vote | Form::PredCtrl);
    if pd && inst.rd > 3 {
        return Err(format!("`{}`: predicate destination p{} does not exist", row.name, inst.rd));
    }
    if ps && inst.rs1 > 3 {
        return Err(format!("`{}`: predicate source p{} does not exist", row.name, inst.rs1));
    }
    if row.form == Form::MovSr && usize::from(inst.rs1) >= SPECIAL_COUNT {
        return Err(format!("`mov_sr`: special register {} does not exist", inst.rs1));
    }
    Ok(())
}

/// The reference's special registers, `sr_thread_id_x` (0) to `sr_mma_k` (19).
pub(crate) const SPECIAL_COUNT: usize = 20;

/// The words of `inst`: W0 and, where its form has one, W1.
pub(crate) fn encode(inst: &RefInst) -> (u32, Option<u32>) {
    let row = inst.row;
    let (pred, negate) = inst.guard.map_or((0, false), |g| (g.predicate & 3, g.negate));
    let w0 = u32::from(row.op) << 24
        | u32::from(inst.rd) << 16
        | u32::from(inst.rs1) << 8
        | u32::from(row.modifier & 15) << 4
        | u32::from(negate) << 2
        | u32::from(pred);
    let w1 = row.form.g3_two_words().then(|| {
        if row.form.uses().imm {
            inst.imm
        } else {
            u32::from(inst.a) << 24
                | u32::from(inst.b) << 16
                | u32::from(inst.c) << 8
                | u32::from(inst.scope & 3)
        }
    });
    (w0, w1)
}

/// The little-endian word at `at`.
pub(crate) fn word(bytes: &[u8], at: usize) -> Option<u32> {
    let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

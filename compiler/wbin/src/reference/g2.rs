//! The G2 instruction words of the published `wave-asm` 0.1.2 crate, decoded as strictly as
//! G3 (unused fields zero).
//!
//! W0: opcode [31:26], rd [25:21], rs1 [20:16], rs2 [15:11], modifier [10:7], scope [6:5],
//! pred_reg [4:3], pred_neg [2], flags [1:0]. On opcode 0x3F the flags select the group:
//! 0 control (modifier as G3's 0-7), 1 SYNC (G3's modifier - 8), 2 MISC (G3's 0x41). On
//! loads and stores the flags are the cache hint (0 cached = none, 1 uncached, 2 streaming).
//! A second word only for `imad iclamp fma fclamp hma hma2 dma bfe bfi` (rs3 [31:27], rs4
//! [26:22]), CAS (rs3 [31:27]), `call` and `mov_imm` (the whole word).
//!
//! Two ambiguities of G2 itself, decoded the way its decoder would: `select` keeps its last
//! operand in the modifier field, so a register above r15 spills its bit 4 into the low bit of
//! rs2 (read here as part of rs2); and the assembler writes CAS with the add's modifier 0
//! while the decoder expects 8, so an assembled CAS reads as a one-word add followed by its
//! second word as a separate instruction.

use wave_isa::Guard;

use super::RefInst;
use super::g3::{check_fields, word};
use super::table::{Form, Row, by_g3};

/// Decodes the instruction at the start of `bytes`; returns it and its size (4 or 8).
pub(crate) fn decode(bytes: &[u8]) -> Result<(RefInst, usize), String> {
    let Some(w0) = word(bytes, 0) else {
        return Err(format!("truncated instruction: {} bytes left, a word needs 4", bytes.len()));
    };
    let field = |lo: u32, bits: u32| ((w0 >> lo) & ((1 << bits) - 1)) as u8;
    let (op, rd, rs1, rs2) = (field(26, 6), field(21, 5), field(16, 5), field(11, 5));
    let (modifier, scope, pred, negate, flags) =
        (field(7, 4), field(5, 2), field(3, 2), field(2, 1) == 1, field(0, 2));
    let row = lookup(op, modifier, flags)?;
    let mut inst = RefInst {
        row,
        rd,
        rs1,
        a: rs2,
        scope,
        guard: (pred != 0 || negate).then_some(Guard { predicate: pred, negate }),
        ..RefInst::default()
    };
    match row.form {
        Form::Select => inst.b = modifier,
        Form::Load | Form::Store => {
            inst.hint = match flags {
                0 => 0,
                1 => 2,
                2 => 3,
                _ => return Err(format!("`{}`: cache hint 3 is not defined", row.name)),
            };
        }
        Form::MovSr if rs1 > 15 => {
            return Err(format!("`mov_sr`: special register {rs1} does not exist in G2"));
        }
        _ => {}
    }
    let size = if row.form.g2_two_words() { 8 } else { 4 };
    if row.form.g2_two_words() {
        let Some(w1) = word(bytes, 4) else {
            return Err(format!(
                "`{}` needs a second word, but the kernel's code ends {} bytes after the first",
                row.name,
                bytes.len().saturating_sub(4)
            ));
        };
        match row.form {
            Form::Call | Form::MovImm => inst.imm = w1,
            _ => {
                inst.b = (w1 >> 27) as u8;
                inst.c = ((w1 >> 22) & 31) as u8;
                if w1 & 0x003F_FFFF != 0 {
                    return Err(format!("`{}`: unused bits of the second word are set", row.name));
                }
            }
        }
    }
    check_fields(&inst)?;
    Ok((inst, size))
}

/// The row of G2 opcode `op` with `modifier` and `flags`.
fn lookup(op: u8, modifier: u8, flags: u8) -> Result<&'static Row, String> {
    let (g3_op, g3_modifier) = match (op, flags) {
        (0x3F, 0) if modifier < 8 => (0x3F, modifier),
        (0x3F, 1) if modifier < 8 => (0x3F, modifier + 8),
        (0x3F, 2) => (0x41, modifier),
        (0x3F, _) => {
            return Err(format!("opcode 0x3F with flags {flags} has no modifier {modifier}"));
        }
        (0x2B, _) => (0x2B, 0),
        _ => (op, modifier),
    };
    let row = by_g3(g3_op, g3_modifier)
        .filter(|r| r.in_g2)
        .ok_or_else(|| format!("G2 has no opcode 0x{op:02X} with modifier {modifier}"))?;
    let hint = matches!(row.form, Form::Load | Form::Store);
    if op != 0x3F && !hint && flags != 0 {
        return Err(format!("`{}` has no flags, found {flags}", row.name));
    }
    Ok(row)
}

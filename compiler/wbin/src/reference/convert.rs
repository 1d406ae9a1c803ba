//! One instruction between the reference's fields ([`RefInst`]) and ours ([`Inst`]): the
//! renumbering of docs/compatibility.md and the operand moves between fields.

use wave_isa::{AtomicType, DEFAULT_SCOPE, Inst, Modifier, ScopeUse};

use super::RefInst;
use super::table::{Form, ROWS, Row};

/// Our instruction for `r`. A `call`'s extension word is left for the caller to fill. The
/// error is a phrase to follow the instruction's name ("has no counterpart here: …").
pub(crate) fn to_ours(r: &RefInst) -> Result<Inst, String> {
    let row = r.row;
    let Some((opcode, modifier)) = row.ours else {
        return Err(format!("has no counterpart here: {}", row.note));
    };
    let mut inst = Inst { opcode, modifier, guard: r.guard, ..Inst::default() };
    match row.form {
        Form::R2 | Form::MovSr => (inst.rd, inst.rs1) = (r.rd, r.rs1),
        Form::Load => (inst.rd, inst.rs1, inst.scope) = (r.rd, r.rs1, r.hint),
        Form::R3 | Form::Cmp => (inst.rd, inst.rs1, inst.rs2) = (r.rd, r.rs1, r.a),
        Form::R4 => {
            (inst.rd, inst.rs1, inst.rs2, inst.ext) = (r.rd, r.rs1, r.a, Some(u32::from(r.b)));
        }
        Form::Bfi => {
            (inst.rd, inst.rs1, inst.rs2) = (r.rd, r.rs1, r.a);
            inst.ext = Some(u32::from(r.b) | u32::from(r.c) << 8);
        }
        Form::Select => {
            (inst.rd, inst.rs1, inst.rs2) = (r.rd, r.a, r.b);
            inst.modifier |= r.rs1;
        }
        Form::Store => (inst.rs1, inst.rs2, inst.scope) = (r.rs1, r.a, r.hint),
        Form::LocalAtomic | Form::DeviceAtomic | Form::LocalCas | Form::DeviceCas => {
            if matches!(row.form, Form::LocalAtomic | Form::DeviceAtomic) && r.b != 0 {
                return Err(format!(
                    "holds a third register (r{}) in W1.b: this is how the reference \
                     assembler writes `{}cas` (with the add's modifier 0, so that the reference \
                     runs it as an add); which of the two was meant cannot be told, so the \
                     instruction is refused",
                    r.b,
                    if row.form == Form::LocalAtomic { "local_atomic_" } else { "atomic_" }
                ));
            }
            (inst.rd, inst.rs1, inst.rs2) = (r.rd, r.rs1, r.a);
            inst.ext = Some(u32::from(r.b));
            // Local Memory atomics have no scope in the reference; ours take the default.
            inst.scope = match row.form {
                Form::DeviceAtomic | Form::DeviceCas => r.scope,
                _ => DEFAULT_SCOPE,
            };
        }
        Form::Ballot => {
            inst.rd = r.rd;
            inst.modifier |= r.rs1;
        }
        Form::Vote => {
            inst.rd = r.rd;
            inst.modifier |= r.rs1;
        }
        Form::PredCtrl => inst.modifier |= r.rs1,
        Form::Plain => {}
        Form::Call => inst.ext = Some(0),
        Form::Fence => inst.scope = r.scope,
        Form::MovImm => (inst.rd, inst.ext) = (r.rd, Some(r.imm)),
        Form::Mma => return Err(format!("has no counterpart here: {}", row.note)),
    }
    if let Some(g) = r.guard
        && inst.info().is_some_and(|op| !op.predicable)
    {
        return Err(format!(
            "is guarded by @{}p{}, but ours takes no guard on structured control flow, \
             `call`, `return` or `barrier` (the reference narrows the mask only for that \
             instruction, which for these changes nothing or skips them for the whole wave)",
            if g.negate { "!" } else { "" },
            g.predicate
        ));
    }
    if r.hint != 0 && inst.info().is_some_and(|op| op.scope != ScopeUse::CacheHint) {
        return Err("has a cache hint, which our Local Memory accesses do not take".to_owned());
    }
    if let Err(e) = inst.validate() {
        return Err(format!("has no counterpart here: {e}"));
    }
    Ok(inst)
}

/// The reference instruction for our valid `inst`; a `call`'s target is left for the caller.
/// The error is a phrase to follow the instruction's text.
pub(crate) fn from_ours(inst: &Inst) -> Result<RefInst, String> {
    let Some(op) = inst.info() else {
        return Err(format!("opcode 0x{:02X} is not an instruction", inst.opcode));
    };
    let refuse = |why: &str| Err(format!("has no counterpart in the reference: {why}"));
    let mut base = inst.modifier;
    match op.modifier {
        Modifier::PredSrc => {
            if inst.modifier & 4 != 0 {
                return refuse("a negated predicate source (`!p`) cannot be encoded");
            }
            base = 0;
        }
        Modifier::Halves if inst.modifier != 0 => {
            return refuse("the reference has no `.hi` halves (every half operand is `.lo`)");
        }
        Modifier::Atomic { .. } => {
            if AtomicType::from_bits(inst.modifier & 7) != Some(AtomicType::U32) {
                return refuse("the reference's atomics are u32 only");
            }
            base = inst.modifier & 8;
        }
        _ => {}
    }
    let Some(row) = ROWS.iter().find(|r| r.ours == Some((inst.opcode, base))) else {
        return refuse(match inst.opcode {
            0x0C | 0x0D => "it has no unsigned min/max",
            0x5A => "it has no `wave_shuffle_idx`",
            0x59 => "its reductions are add, min and max",
            0xA0..=0xA2 => "its MMA instructions are a different model (fragment ids)",
            _ => "no instruction of its encoding does this",
        });
    };
    if op.format == wave_isa::Format::Base && inst.ext.is_some() {
        return refuse(
            "an immediate operand or memory offset (the extension word) cannot be encoded",
        );
    }
    if let Some(g) = inst.guard
        && g.predicate == 0
        && !g.negate
    {
        return refuse("the guard @p0 encodes as \"unguarded\" in the reference");
    }
    let ext = inst.ext.unwrap_or(0);
    let mut r = RefInst { row, guard: inst.guard, ..RefInst::default() };
    let ps = inst.modifier & 3;
    match row.form {
        Form::R2 | Form::Load | Form::MovSr => (r.rd, r.rs1) = (inst.rd, inst.rs1),
        Form::R3 | Form::Cmp => (r.rd, r.rs1, r.a) = (inst.rd, inst.rs1, inst.rs2),
        Form::R4 | Form::LocalCas | Form::LocalAtomic => {
            (r.rd, r.rs1, r.a, r.b) = (inst.rd, inst.rs1, inst.rs2, ext as u8);
        }
        Form::DeviceAtomic | Form::DeviceCas => {
            (r.rd, r.rs1, r.a, r.b) = (inst.rd, inst.rs1, inst.rs2, ext as u8);
            r.scope = inst.scope;
        }
        Form::Bfi => {
            (r.rd, r.rs1, r.a) = (inst.rd, inst.rs1, inst.rs2);
            (r.b, r.c) = (ext as u8, (ext >> 8) as u8);
        }
        Form::Select => (r.rd, r.rs1, r.a, r.b) = (inst.rd, ps, inst.rs1, inst.rs2),
        Form::Store => (r.rs1, r.a) = (inst.rs1, inst.rs2),
        Form::Ballot | Form::Vote => (r.rd, r.rs1) = (inst.rd, ps),
        Form::PredCtrl => r.rs1 = ps,
        Form::Plain | Form::Call => {}
        Form::Fence => r.scope = inst.scope,
        Form::MovImm => (r.rd, r.imm) = (inst.rd, ext),
        Form::Mma => return refuse("no MMA counterpart"),
    }
    Ok(r)
}

/// Whether `row` is one of the reference's `call`s.
pub(crate) fn is_call(row: &Row) -> bool {
    row.form == Form::Call
}

//! Operands: each written operand checked against its form in the isa table (register,
//! predicate, address, immediate, label) and written into the instruction's fields.

use wave_diag::{Span, did_you_mean};
use wave_isa::{
    ImmKind, Inst, OpInfo, Operand as Form, SPECIAL_REGISTERS, Width, operand_registers,
};

use crate::syntax::{Half, OperandKind};

use super::{Lowering, parse_integer};

impl Lowering<'_> {
    pub(super) fn use_predicate(&mut self, p: u8) {
        if let Some(k) = self.kernel.as_mut() {
            k.max_predicate = Some(k.max_predicate.map_or(p, |m| m.max(p)));
        }
    }

    fn param_register(&self, name: &str) -> Option<u32> {
        self.kernel.as_ref()?.params.iter().position(|p| p.name == name).map(|i| i as u32)
    }

    fn unknown_name(&mut self, span: Span, name: &str, expected: &str) {
        let candidates: Vec<String> = self
            .kernel
            .as_ref()
            .map(|k| k.params.iter().map(|p| p.name.clone()).collect())
            .unwrap_or_default();
        let suggestion =
            did_you_mean(name, candidates.iter().map(String::as_str)).map(str::to_owned);
        let d = self.error(
            "E0125",
            span.clone(),
            format!("expected {expected}, found unknown name `{name}`"),
        );
        if let Some(s) = suggestion {
            d.suggestion = Some(wave_diag::Suggestion {
                message: format!("did you mean the parameter `{s}`?"),
                span,
                replacement: s,
            });
        }
    }

    /// Resolves a register operand: returns the first register number.
    fn register_operand(
        &mut self,
        op: &OpInfo,
        form: &Form,
        given: &crate::syntax::Operand,
        inst: &mut Inst,
    ) -> Option<u8> {
        let Form::Reg { width, .. } = *form else { return None };
        let count = u32::from(operand_registers(op, form, inst.modifier));
        let (number, half, high) = match &given.kind {
            OperandKind::Register { number, half } => (*number, *half, None),
            OperandKind::Pair { low, high } => (*low, None, Some(*high)),
            OperandKind::Name(name) => match self.param_register(name) {
                Some(r) => (r, None, None),
                None => {
                    self.unknown_name(given.span.clone(), name, "a register");
                    return None;
                }
            },
            other => {
                let d = self.error(
                    "E0126",
                    given.span.clone(),
                    format!("expected a register, found {}", describe(other)),
                );
                if matches!(other, OperandKind::Integer(_) | OperandKind::Float(_)) {
                    d.notes.push(format!("this operand of `{}` takes no immediate: load the constant with `mov_imm` first", op.mnemonic));
                }
                if matches!(other, OperandKind::Special(_)) {
                    d.notes.push(
                        "copy the special register into a register first: `mov rN, sr_...`".into(),
                    );
                }
                return None;
            }
        };
        if number > 255 || high.is_some_and(|h| h > 255) {
            self.error(
                "E0123",
                given.span.clone(),
                format!(
                    "there is no register r{}: the encoding has r0-r255",
                    number.max(high.unwrap_or(0))
                ),
            );
            return None;
        }
        match width {
            Width::Half(bit) => {
                if high.is_some() {
                    self.error(
                        "E0122",
                        given.span.clone(),
                        "expected a 16-bit half such as `r3.lo`, found a register pair",
                    );
                    return None;
                }
                if half == Some(Half::Hi) {
                    inst.modifier |= 1 << bit;
                }
            }
            _ => {
                if let Some(h) = half {
                    let h = if h == Half::Hi { "hi" } else { "lo" };
                    self.error(
                        "E0121",
                        given.span.clone(),
                        format!("`.{h}` halves are only for F16 instructions and F16 conversions"),
                    );
                    return None;
                }
                match high {
                    Some(_) if count == 1 => {
                        self.error(
                            "E0122",
                            given.span.clone(),
                            format!(
                                "`{}` takes a single register here, found a register range",
                                op.mnemonic
                            ),
                        );
                        return None;
                    }
                    Some(h) if h != number + count - 1 => {
                        self.error(
                            "E0122",
                            given.span.clone(),
                            format!(
                                "expected r{number}:r{} ({count} registers)",
                                number + count - 1
                            ),
                        );
                        return None;
                    }
                    _ => {}
                }
                if number + count - 1 > 255 {
                    self.error(
                        "E0123",
                        given.span.clone(),
                        format!("r{number} starts {count} registers that run past r255"),
                    );
                    return None;
                }
            }
        }
        let count = if matches!(width, Width::Half(_)) { 1 } else { count };
        if let Some(k) = self.kernel.as_mut() {
            k.register_uses.push((number, count, given.span.clone()));
        }
        Some(number as u8)
    }

    pub(super) fn operand(
        &mut self,
        op: &OpInfo,
        form: &Form,
        given: &crate::syntax::Operand,
        inst: &mut Inst,
        target: &mut Option<(String, Span)>,
    ) -> bool {
        match *form {
            Form::Reg { slot, .. } => {
                let Some(reg) = self.register_operand(op, form, given, inst) else { return false };
                match slot {
                    wave_isa::Slot::Rd => inst.rd = reg,
                    wave_isa::Slot::Rs1 => inst.rs1 = reg,
                    wave_isa::Slot::Rs2 => inst.rs2 = reg,
                    wave_isa::Slot::Rs3 => inst.ext = Some(inst.ext.unwrap_or(0) | u32::from(reg)),
                    wave_isa::Slot::Rs4 => {
                        inst.ext = Some(inst.ext.unwrap_or(0) | (u32::from(reg) << 8))
                    }
                }
                if op.format == wave_isa::Format::Extended && inst.ext.is_none() {
                    inst.ext = Some(0);
                }
                true
            }
            Form::RegOrImm(kind) => match &given.kind {
                OperandKind::Integer(_) | OperandKind::Float(_) => {
                    self.immediate_into(given, kind, inst)
                }
                _ => {
                    let reg_form =
                        Form::Reg { slot: wave_isa::Slot::Rs2, width: Width::W32, write: false };
                    match self.register_operand(op, &reg_form, given, inst) {
                        Some(r) => {
                            inst.rs2 = r;
                            true
                        }
                        None => false,
                    }
                }
            },
            Form::PredDst | Form::PredSrc => {
                let OperandKind::Predicate { number, negate } = given.kind else {
                    self.error(
                        "E0126",
                        given.span.clone(),
                        format!("expected a predicate (p0-p3), found {}", describe(&given.kind)),
                    );
                    return false;
                };
                if number > 3 {
                    self.error(
                        "E0111",
                        given.span.clone(),
                        format!("there is no predicate p{number}: WAVE has p0-p3"),
                    );
                    return false;
                }
                self.use_predicate(number as u8);
                if *form == Form::PredDst {
                    if negate {
                        self.error(
                            "E0126",
                            given.span.clone(),
                            "a predicate destination cannot be negated",
                        );
                        return false;
                    }
                    inst.rd = number as u8;
                } else {
                    inst.modifier |= number as u8 | (u8::from(negate) << 2);
                }
                true
            }
            Form::Address { offset } => {
                let (base, off) = match &given.kind {
                    OperandKind::Memory { base, offset } => (base.as_ref(), offset.as_ref()),
                    _ => (given, None),
                };
                let reg_form =
                    Form::Reg { slot: wave_isa::Slot::Rs1, width: Width::W32, write: false };
                let Some(r) = self.register_operand(op, &reg_form, base, inst) else {
                    return false;
                };
                inst.rs1 = r;
                if let Some((text, span)) = off {
                    if !offset {
                        self.error(
                            "E0128",
                            span.clone(),
                            format!("`{}` takes no address offset", op.mnemonic),
                        )
                        .notes
                        .push("add the offset to the address register first (`iadd`)".into());
                        return false;
                    }
                    match parse_integer(text) {
                        Some(v) if (i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v) => {
                            inst.ext = Some(v as i32 as u32)
                        }
                        _ => {
                            self.error(
                                "E0130",
                                span.clone(),
                                format!(
                                    "address offset `{text}` does not fit in a signed 32-bit word"
                                ),
                            );
                            return false;
                        }
                    }
                }
                true
            }
            Form::Special => {
                let OperandKind::Special(name) = &given.kind else {
                    self.error(
                        "E0126",
                        given.span.clone(),
                        format!(
                            "expected a special register such as `sr_lane_id`, found {}",
                            describe(&given.kind)
                        ),
                    );
                    return false;
                };
                match wave_isa::special_register(name) {
                    Some(i) => {
                        inst.rs1 = i;
                        true
                    }
                    None => {
                        let d = self.error(
                            "E0129",
                            given.span.clone(),
                            format!("unknown special register `{name}`"),
                        );
                        let suggestion = did_you_mean(name, SPECIAL_REGISTERS).or_else(|| {
                            SPECIAL_REGISTERS.iter().copied().find(|s| s.starts_with(name.as_str()))
                        });
                        if let Some(s) = suggestion {
                            d.suggest_replacement(given.span.clone(), s);
                        }
                        false
                    }
                }
            }
            Form::Imm(kind) => match &given.kind {
                OperandKind::Integer(_) | OperandKind::Float(_) => {
                    self.immediate_into(given, kind, inst)
                }
                other => {
                    let d = self.error(
                        "E0127",
                        given.span.clone(),
                        format!("expected an immediate, found {}", describe(other)),
                    );
                    if matches!(other, OperandKind::Register { .. } | OperandKind::Name(_)) {
                        d.notes.push("to copy a register use `mov`".into());
                    }
                    false
                }
            },
            Form::Target => match &given.kind {
                OperandKind::Name(name) => {
                    *target = Some((name.clone(), given.span.clone()));
                    inst.ext = Some(0);
                    true
                }
                other => {
                    self.error(
                        "E0126",
                        given.span.clone(),
                        format!("expected a label, found {}", describe(other)),
                    );
                    false
                }
            },
        }
    }

    /// Puts an immediate operand in the extension word; `false` (with a diagnostic) if it
    /// does not fit.
    fn immediate_into(
        &mut self,
        given: &crate::syntax::Operand,
        kind: ImmKind,
        inst: &mut Inst,
    ) -> bool {
        match self.immediate(given, kind) {
            Some(bits) => {
                inst.ext = Some(bits);
                true
            }
            None => false,
        }
    }

    /// The 32 bits of an immediate operand, checking range and exactness.
    fn immediate(&mut self, given: &crate::syntax::Operand, kind: ImmKind) -> Option<u32> {
        match (&given.kind, kind) {
            (OperandKind::Integer(t), ImmKind::Int | ImmKind::Bits) => match parse_integer(t) {
                Some(v) if (i128::from(i32::MIN)..=i128::from(u32::MAX)).contains(&v) => {
                    Some(v as i64 as u32)
                }
                _ => {
                    self.error(
                        "E0130",
                        given.span.clone(),
                        format!("integer `{t}` does not fit in 32 bits"),
                    )
                    .notes
                    .push("immediates are 32-bit: -2147483648 to 4294967295".into());
                    None
                }
            },
            (OperandKind::Integer(t), ImmKind::Float) => {
                let clean = t.replace('_', "");
                let is_bits = clean.trim_start_matches('-').starts_with("0x")
                    || clean.trim_start_matches('-').starts_with("0b");
                if is_bits {
                    // Hex and binary literals in a float operand are raw bit patterns.
                    if clean.starts_with('-') {
                        self.error(
                            "E0131",
                            given.span.clone(),
                            format!("`{t}`: a bit pattern cannot be negative"),
                        )
                        .notes
                        .push(
                            "hex and binary literals in a float operand are raw binary32 bits"
                                .into(),
                        );
                        return None;
                    }
                    return self.immediate(given, ImmKind::Bits);
                }
                self.float_bits(given, &clean)
            }
            (OperandKind::Float(t), ImmKind::Float | ImmKind::Bits) => {
                self.float_bits(given, &t.replace('_', ""))
            }
            (OperandKind::Float(t), ImmKind::Int) => {
                self.error(
                    "E0127",
                    given.span.clone(),
                    format!("this operand takes an integer, found the float `{t}`"),
                )
                .notes
                .push(
                    "write the bit pattern in hex, or use `mov_imm` and a float instruction".into(),
                );
                None
            }
            _ => None,
        }
    }

    fn float_bits(&mut self, given: &crate::syntax::Operand, text: &str) -> Option<u32> {
        let lower = text.to_ascii_lowercase();
        let (Ok(v32), Ok(v64)) = (lower.parse::<f32>(), lower.parse::<f64>()) else {
            self.error("E0131", given.span.clone(), format!("`{text}` is not a float literal"));
            return None;
        };
        let written_infinite = lower.trim_start_matches(['-', '+']).starts_with("inf");
        if v32.is_infinite() && !written_infinite {
            self.error(
                "E0131",
                given.span.clone(),
                format!("`{text}` is outside the binary32 range (largest finite is 3.4028235e38)"),
            );
            return None;
        }
        if v64.is_finite() && f64::from(v32) != v64 {
            self.warning(
                "W0106",
                given.span.clone(),
                format!("`{text}` is not exactly representable in binary32"),
            )
            .notes
            .push(format!(
                "it is rounded to {} (bits 0x{:08x})",
                f64::from(v32),
                v32.to_bits()
            ));
        }
        Some(v32.to_bits())
    }
}

fn describe(kind: &OperandKind) -> String {
    match kind {
        OperandKind::Register { number, .. } => format!("the register r{number}"),
        OperandKind::Pair { low, high } => format!("the register range r{low}:r{high}"),
        OperandKind::Predicate { number, .. } => format!("the predicate p{number}"),
        OperandKind::Special(s) => format!("the special register `{s}`"),
        OperandKind::Integer(t) => format!("the integer `{t}`"),
        OperandKind::Float(t) => format!("the float `{t}`"),
        OperandKind::Name(n) => format!("the name `{n}`"),
        OperandKind::Memory { .. } => "a memory operand".into(),
        OperandKind::Scope(s) => format!("the scope `.{s}`"),
    }
}

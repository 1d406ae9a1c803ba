//! One instruction statement: its mnemonic and suffixes resolved against the isa table, its
//! guard and operands checked, and the encoded result placed in the module.

use wave_diag::{Span, did_you_mean};
use wave_isa::{Flow, Guard, Inst, Opcode, SuffixError, lookup, lookup_name};
use wave_wbin::LineEntry;

/// The reference toolchain's fragment MMA instructions (its own v0.4 extension), refused with
/// a reason rather than as unknown names (docs/compatibility.md).
const REFERENCE_MMA: [&str; 4] = ["mma_load_a", "mma_load_b", "mma_store_c", "mma_compute"];

use crate::syntax::{InstructionSyntax, OperandKind, Stmt};

use super::{Lowering, Placed};

impl Lowering<'_> {
    pub(super) fn instruction(&mut self, index: usize, stmt: &Stmt, syntax: &InstructionSyntax) {
        // A legacy trailing scope operand (`atomic_add r1, r2, r3, .device`) is a suffix.
        let mut extra: Vec<&str> = Vec::new();
        let mut operands: Vec<&crate::syntax::Operand> = Vec::new();
        for op in &syntax.operands {
            match &op.kind {
                OperandKind::Scope(s) => extra.push(s),
                _ => {
                    if !extra.is_empty() {
                        self.error("E0103", op.span.clone(), "a scope operand must come last");
                        return;
                    }
                    operands.push(op);
                }
            }
        }
        let lower = syntax.mnemonic.to_ascii_lowercase();
        // `mov rd, sr_x` and `mov rd, imm` are aliases of mov_special and mov_imm where the
        // name alone is the `mov` row (`mov.x` stays an unknown suffix of `mov`). The name is
        // looked up only when the second operand could make it an alias.
        let alias = match operands.get(1).map(|o| &o.kind) {
            Some(OperandKind::Special(_)) => Some(Opcode::MovSpecial),
            Some(OperandKind::Integer(_) | OperandKind::Float(_)) => Some(Opcode::MovImm),
            _ => None,
        }
        .filter(|_| lookup_name(&lower).is_some_and(|(op, _)| op.op == Opcode::Mov));
        let mnemonic = match alias {
            Some(op) => op.mnemonic(),
            None => lower.as_str(),
        };
        let resolved = match lookup(mnemonic, &extra) {
            Ok(r) => r,
            Err(e) => {
                self.suffix_error(syntax, e);
                return;
            }
        };
        let op = resolved.op;
        let mut inst = Inst {
            opcode: op.opcode,
            modifier: resolved.modifier,
            scope: resolved.scope,
            ..Inst::default()
        };
        if let Some(g) = &syntax.guard {
            if !op.predicable {
                let note = match op.flags.flow {
                    Flow::If | Flow::Break | Flow::Continue => format!(
                        "`{0}` takes its predicate as an operand: `{0} p0` or `{0} !p0`",
                        op.mnemonic
                    ),
                    Flow::Next
                    | Flow::Else
                    | Flow::Endif
                    | Flow::Loop
                    | Flow::Endloop
                    | Flow::Call
                    | Flow::Return
                    | Flow::Halt => {
                        "structured control flow, calls and barriers apply to the whole wave; \
                          put them inside `if pN` ... `endif` instead"
                            .to_owned()
                    }
                };
                self.error(
                    "E0110",
                    g.span.clone(),
                    format!("`{}` cannot be guarded by a predicate", op.mnemonic),
                )
                .notes
                .push(note);
            } else if g.number > 3 {
                self.error(
                    "E0111",
                    g.span.clone(),
                    format!("there is no predicate p{}: WAVE has p0-p3", g.number),
                );
            } else {
                inst.guard = Some(Guard { predicate: g.number as u8, negate: g.negate });
                self.use_predicate(g.number as u8);
            }
        }
        if syntax.broken {
            // Keep the block structure so that one mistake gives one diagnostic.
            self.blocks(op, &inst, stmt);
            return;
        }
        if operands.len() != op.operands.len() {
            let d = self.error(
                "E0120",
                if operands.is_empty() {
                    syntax.mnemonic_span.clone()
                } else {
                    operands[0].span.start..operands[operands.len() - 1].span.end
                },
                format!(
                    "`{}` takes {} operand{}, found {}",
                    op.mnemonic,
                    op.operands.len(),
                    if op.operands.len() == 1 { "" } else { "s" },
                    operands.len()
                ),
            );
            d.notes.push(format!("expected: {}", crate::form_text(op)));
            self.blocks(op, &inst, stmt);
            return;
        }
        let mut targets: Option<(String, Span)> = None;
        let mut ok = true;
        for (form, given) in op.operands.iter().zip(&operands) {
            if !self.operand(op, form, given, &mut inst, &mut targets) {
                ok = false;
            }
        }
        if !ok {
            self.blocks(op, &inst, stmt);
            return;
        }
        if let Err(e) = inst.validate() {
            self.error("E0000", stmt.span.clone(), format!("internal error: {e}"));
            return;
        }
        self.blocks(op, &inst, stmt);
        self.uniformity(op, &inst, &operands);
        let offset = self.module.code.len() as u32;
        if let Err(e) = inst.encode(&mut self.module.code) {
            self.error("E0000", stmt.span.clone(), format!("internal error: {e}"));
            return;
        }
        let (line, column) = self.position(stmt.span.start);
        let (end_line, end_column) = self.position(stmt.span.end);
        self.module.lines.push(LineEntry { offset, file: 0, line, column, end_line, end_column });
        let Some(k) = self.kernel.as_mut() else { return };
        k.instructions += 1;
        if let Some((name, span)) = targets {
            k.calls.push((self.placed.len(), name, span));
        }
        self.placed.push(Placed { stmt: index, kernel: k.index, offset, inst });
    }

    fn suffix_error(&mut self, syntax: &InstructionSyntax, e: SuffixError) {
        let span = syntax.mnemonic_span.clone();
        match e {
            SuffixError::UnknownMnemonic { name, .. } if REFERENCE_MMA.contains(&name.as_str()) => {
                let name_span = span.start..span.start + name.len().min(span.len());
                let d = self.error(
                    "E0105",
                    name_span,
                    format!("`{name}` is the reference toolchain's fragment MMA, which needs CAP_MMA: no target of this toolchain has it"),
                );
                d.notes.push("CAP_MMA is optional (spec 7.2) and its instructions are `mma_f16_f32`, `mma_bf16_f32` and `mma_f32_f32`; every target here reports it absent, and `sr_mma_supported` reads 0".into());
                d.notes.push("compute the tile with `fma` in a loop over k, as a register-blocked GEMM does (docs/compatibility.md)".into());
            }
            SuffixError::UnknownMnemonic { name, suggestion } => {
                let name_span = span.start..span.start + name.len().min(span.len());
                let d =
                    self.error("E0101", name_span.clone(), format!("unknown instruction `{name}`"));
                if let Some(s) = suggestion {
                    d.suggest_replacement(name_span, s);
                }
            }
            SuffixError::UnknownSuffix { suffix, mnemonic, expected } => {
                let at = syntax
                    .mnemonic
                    .to_ascii_lowercase()
                    .find(&format!(".{suffix}"))
                    .map(|i| span.start + i + 1);
                // A suffix not in the mnemonic came from a trailing scope operand.
                let s_span = at
                    .map(|a| a..a + suffix.len())
                    .or_else(|| scope_operand_span(syntax, &suffix))
                    .unwrap_or(span.clone());
                let suggestion = did_you_mean(&suffix, expected.iter().copied());
                let d = self.error(
                    "E0102",
                    s_span.clone(),
                    format!("`.{suffix}` is not a suffix of `{mnemonic}`"),
                );
                if expected.is_empty() {
                    d.notes.push(format!("`{mnemonic}` takes no suffixes"));
                } else {
                    d.notes.push(format!(
                        "`{mnemonic}` takes {}",
                        expected.iter().map(|s| format!("`.{s}`")).collect::<Vec<_>>().join(", ")
                    ));
                }
                if let Some(s) = suggestion.filter(|_| at.is_some()) {
                    d.suggestion = Some(wave_diag::Suggestion {
                        message: format!("did you mean `.{s}`?"),
                        span: s_span,
                        replacement: s.into(),
                    });
                }
            }
            SuffixError::Conflict { first, second } => {
                let at = scope_operand_span(syntax, &second).unwrap_or(span);
                self.error(
                    "E0103",
                    at,
                    format!(
                        "suffix `.{second}` conflicts with `.{first}`: both set the same field"
                    ),
                );
            }
            SuffixError::MissingModifier { mnemonic, expected } => {
                let d = self.error(
                    "E0104",
                    span.clone(),
                    format!(
                        "`{mnemonic}` needs {}",
                        if expected.contains(&"u32") {
                            "an access width"
                        } else {
                            "a suffix saying which operation"
                        }
                    ),
                );
                d.notes.push(format!(
                    "one of {}",
                    expected
                        .iter()
                        .map(|s| format!("`{mnemonic}.{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                let example =
                    if expected.contains(&"u32") { Some(&"u32") } else { expected.first() };
                if let Some(first) = example {
                    d.suggestion = Some(wave_diag::Suggestion {
                        message: format!("for example `{mnemonic}.{first}`"),
                        span: span.end..span.end,
                        replacement: format!(".{first}"),
                    });
                }
            }
        }
    }
}

/// The span of the trailing scope operand `.name` of an instruction, if it has one.
fn scope_operand_span(syntax: &InstructionSyntax, name: &str) -> Option<Span> {
    syntax.operands.iter().find_map(|o| match &o.kind {
        OperandKind::Scope(s) if s == name => Some(o.span.clone()),
        _ => None,
    })
}

//! Structured control flow: `if`/`else`/`endif` and `loop`/`endloop` matching, nesting
//! depth, and the flow-insensitive tracking of lane-varying values that the barrier check uses.

use wave_diag::{Diagnostic, Span};
use wave_isa::{
    Flow, Inst, OpInfo, Opcode, Operand as Form, operand_registers, target::MAX_DIVERGENCE_DEPTH,
};

use crate::syntax::{OperandKind, Stmt};

use super::{Block, BlockKind, Lowering};

impl Lowering<'_> {
    /// E0167 where a block opens the level past [`MAX_DIVERGENCE_DEPTH`].
    fn too_deep(&mut self, span: Span) {
        self.error(
            "E0167",
            span,
            format!("control flow nested deeper than {MAX_DIVERGENCE_DEPTH} levels"),
        )
        .notes
        .push(format!("{MAX_DIVERGENCE_DEPTH} is the largest divergence depth of any target (`wave info`); deeper nesting is undefined behaviour everywhere (spec 5.4)"));
    }

    /// Structured control flow: matching, nesting depth, loops for break/continue, barriers
    /// in divergent blocks. What an instruction does here is its row's [`Flow`].
    pub(super) fn blocks(&mut self, op: &OpInfo, inst: &Inst, stmt: &Stmt) {
        let Some(k) = self.kernel.as_mut() else { return };
        let span = stmt.span.clone();
        match op.flags.flow {
            Flow::If => {
                let p = inst.modifier & 3;
                let divergent = k.varying_predicates[usize::from(p)];
                k.blocks.push(Block { kind: BlockKind::If, span: span.clone(), divergent });
                if k.blocks.len() == MAX_DIVERGENCE_DEPTH + 1 {
                    self.too_deep(span.clone());
                } else if k.blocks.len() == 33 {
                    self.warning("W0102", span, "nesting deeper than 32 levels")
                        .notes
                        .push("MIN_DIVERGENCE_DEPTH is 32: deeper nesting is undefined behaviour on targets that only meet the minimum".into());
                }
            }
            Flow::Loop => {
                k.blocks.push(Block {
                    kind: BlockKind::Loop,
                    span: span.clone(),
                    divergent: false,
                });
                if k.blocks.len() == MAX_DIVERGENCE_DEPTH + 1 {
                    self.too_deep(span.clone());
                } else if k.blocks.len() == 33 {
                    self.warning("W0102", span, "nesting deeper than 32 levels")
                        .notes
                        .push("MIN_DIVERGENCE_DEPTH is 32: deeper nesting is undefined behaviour on targets that only meet the minimum".into());
                }
            }
            Flow::Else => match k.blocks.last_mut() {
                Some(b) if b.kind == BlockKind::If => b.kind = BlockKind::Else,
                Some(b) if b.kind == BlockKind::Else => {
                    let first = b.span.clone();
                    self.error("E0161", span, "a second `else` for the same `if`")
                        .labels
                        .push((first, "this `if` already has an `else`".into()));
                }
                _ => self.close_error(span, op.mnemonic, &[BlockKind::If], "E0160"),
            },
            Flow::Endif => match k.blocks.last() {
                Some(b) if matches!(b.kind, BlockKind::If | BlockKind::Else) => {
                    k.blocks.pop();
                }
                _ => {
                    self.close_error(span, op.mnemonic, &[BlockKind::If, BlockKind::Else], "E0162")
                }
            },
            Flow::Endloop => match k.blocks.last() {
                Some(b) if b.kind == BlockKind::Loop => {
                    k.blocks.pop();
                }
                _ => self.close_error(span, op.mnemonic, &[BlockKind::Loop], "E0164"),
            },
            Flow::Break | Flow::Continue if !k.blocks.iter().any(|b| b.kind == BlockKind::Loop) => {
                self.error("E0166", span, format!("`{}` outside a loop", op.mnemonic))
                    .notes
                    .push("`break` and `continue` belong between `loop` and `endloop`".into());
            }
            Flow::Next if op.op == Opcode::Barrier => {
                if let Some(b) = k.blocks.iter().rev().find(|b| b.divergent) {
                    let if_span = b.span.clone();
                    self.warning("W0103", span, "`barrier` inside an `if` whose condition varies between lanes")
                        .with_label_mut(if_span, "this condition may differ between lanes: it depends on thread or lane ids, or on loaded data")
                        .notes
                        .push("a barrier in divergent control flow is undefined behaviour (spec 6.12); move it out of the `if`, or make the condition uniform".into());
                }
            }
            Flow::Break | Flow::Continue | Flow::Next | Flow::Call | Flow::Return | Flow::Halt => {}
        }
    }

    /// `keyword` (the closing instruction's mnemonic) where the innermost open block is not
    /// one of `wanted`: E0163 where such a block is open further out (the blocks cross),
    /// `code` where none is.
    fn close_error(&mut self, span: Span, keyword: &str, wanted: &[BlockKind], code: &'static str) {
        let Some(k) = self.kernel.as_mut() else { return };
        let opener =
            if wanted.contains(&BlockKind::Loop) { Opcode::Loop } else { Opcode::If }.mnemonic();
        // A matching opener further down the stack means the blocks cross.
        if let Some(pos) = k.blocks.iter().rposition(|b| wanted.contains(&b.kind)) {
            let inner = &k.blocks[k.blocks.len() - 1];
            let (inner_name, close) =
                (inner.kind.opener().mnemonic(), inner.kind.closer().mnemonic());
            let (inner_span, outer_span) = (inner.span.clone(), k.blocks[pos].span.clone());
            let inner_line = self.line_of(inner_span.start);
            let d = self.error("E0163", span, format!("`{keyword}` crosses the `{inner_name}` opened at line {inner_line}, which is still open"));
            d.labels.push((inner_span, format!("this `{inner_name}` needs `{close}` first")));
            d.labels.push((outer_span, format!("the `{opener}` this `{keyword}` would close")));
            // Recover as if the inner blocks were closed here.
            if let Some(k) = self.kernel.as_mut() {
                k.blocks.truncate(pos);
            }
            return;
        }
        self.error(code, span, format!("`{keyword}` without a matching `{opener}`"));
    }

    /// Flow-insensitive "varies between lanes" tracking, for the barrier check.
    pub(super) fn uniformity(
        &mut self,
        op: &OpInfo,
        inst: &Inst,
        operands: &[&crate::syntax::Operand],
    ) {
        let Some(k) = self.kernel.as_mut() else { return };
        let varying_source = op.operands.iter().zip(operands).any(|(form, given)| match form {
            Form::Reg { write: false, slot, .. } => k.varying[usize::from(inst.register(*slot))],
            Form::RegOrImm(_) if !inst.has_immediate_source() => k.varying[usize::from(inst.rs2)],
            Form::Address { .. } => true,
            Form::PredSrc => k.varying_predicates[usize::from(inst.modifier & 3)],
            Form::Special => matches!(&given.kind, OperandKind::Special(s) if matches!(s.as_str(), "sr_thread_id_x" | "sr_thread_id_y" | "sr_thread_id_z" | "sr_lane_id" | "sr_wave_id")),
            _ => false,
        });
        // Wave-wide results (reductions, votes) agree within a wave but may still differ
        // between the waves of a workgroup, which is what a barrier cares about.
        // A prefix sum differs between lanes even over uniform values.
        let varies = varying_source || op.op == Opcode::WavePrefixSum;
        for form in op.operands {
            match form {
                Form::Reg { write: true, slot, .. } if varies => {
                    let r = usize::from(inst.register(*slot));
                    let n = usize::from(operand_registers(op, form, inst.modifier));
                    for v in k.varying.iter_mut().skip(r).take(n) {
                        *v = true;
                    }
                }
                Form::PredDst if varies => k.varying_predicates[usize::from(inst.rd & 3)] = true,
                _ => {}
            }
        }
    }
}

trait LabelMut {
    fn with_label_mut(&mut self, span: Span, message: &str) -> &mut Self;
}

impl LabelMut for Diagnostic {
    fn with_label_mut(&mut self, span: Span, message: &str) -> &mut Self {
        self.labels.push((span, message.to_owned()));
        self
    }
}

//! The end of a kernel: what needs the whole kernel (unclosed blocks, call targets, the
//! declared register count, non-returning atomics) is checked, and the kernel is added to the
//! module.

use wave_diag::{Span, did_you_mean};
use wave_isa::{Category, Inst, Operand as Form};
use wave_wbin::{Kernel, LineEntry, Symbol, SymbolKind};

use super::{KernelState, Lowering};

impl Lowering<'_> {
    pub(super) fn finish_kernel(&mut self, k: KernelState) {
        for b in &k.blocks {
            let (name, close) = (b.kind.opener().mnemonic(), b.kind.closer().mnemonic());
            let d = self.error("E0165", b.span.clone(), format!("this `{name}` is never closed"));
            d.notes.push(format!("add `{close}` before the kernel's `.end`"));
        }
        let mut functions = Vec::new();
        for (placed_index, name, span) in &k.calls {
            match k.labels.get(name) {
                Some((_, offset)) => {
                    if let Some(p) = self.placed.get_mut(*placed_index) {
                        p.inst.ext = Some(*offset);
                        let at = p.offset as usize + 6;
                        self.module.code[at..at + 4].copy_from_slice(&offset.to_le_bytes());
                    }
                    functions.push(*offset);
                }
                None => {
                    let in_other = self
                        .kernels
                        .iter()
                        .any(|other| other.labels.iter().any(|(n, _, _)| n == name));
                    let suggestion =
                        did_you_mean(name, k.labels.keys().map(String::as_str)).map(str::to_owned);
                    let d = self.error(
                        "E0170",
                        span.clone(),
                        format!("no label `{name}` in kernel `{}`", k.source.name),
                    );
                    if in_other {
                        d.notes.push("calls can only reach labels of the same kernel".into());
                    }
                    if let Some(s) = suggestion {
                        d.suggest_replacement(span.clone(), &s);
                    }
                }
            }
        }
        let highest = k.register_uses.iter().map(|(r, n, _)| r + n).max().unwrap_or(0);
        let registers = match &k.registers {
            Some((declared, span)) => {
                for (r, n, use_span) in &k.register_uses {
                    if r + n > u32::from(*declared) {
                        let shown =
                            if *n > 1 { format!("r{r}:r{}", r + n - 1) } else { format!("r{r}") };
                        self.error(
                            "E0124",
                            use_span.clone(),
                            format!("{shown} is above `.registers {declared}`"),
                        )
                        .labels
                        .push((
                            span.clone(),
                            if *declared == 1 {
                                "the kernel declares only r0".to_owned()
                            } else {
                                format!("the kernel declares r0-r{}", declared - 1)
                            },
                        ));
                    }
                }
                if k.params.len() > usize::from(*declared) {
                    self.error(
                        "E0124",
                        span.clone(),
                        format!(
                            "{} parameters need {} registers, but `.registers {declared}`",
                            k.params.len(),
                            k.params.len()
                        ),
                    );
                }
                *declared
            }
            None => highest.max(k.params.len() as u32).max(1) as u16,
        };
        self.non_returning_atomics(&k);
        let start = k.start;
        let end = self.module.code.len() as u32;
        let index = self.module.kernels.len() as u32;
        let mut labels: Vec<_> = k.labels.iter().collect();
        labels.sort_by_key(|(name, (_, offset))| (*offset, (*name).clone()));
        for (name, (_, offset)) in labels {
            let kind =
                if functions.contains(offset) { SymbolKind::Function } else { SymbolKind::Label };
            self.module.symbols.push(Symbol {
                name: name.clone(),
                kernel: index,
                offset: *offset,
                kind,
            });
        }
        self.module.symbols.sort_by_key(|s| s.offset);
        self.module.kernels.push(Kernel {
            name: k.source.name.clone(),
            code: start..end,
            registers,
            predicates: k.max_predicate.map_or(0, |p| p + 1),
            local_memory: k.local_memory.map_or(0, |(b, _)| b),
            workgroup_size: k.workgroup_size.map(|(s, _)| s),
            params: k.params,
        });
        self.kernels.push(k.source);
    }

    /// `rd = r0` makes an atomic non-returning (spec 8.2): warn when r0 is a parameter or is
    /// read afterwards as if it held the old value.
    fn non_returning_atomics(&mut self, k: &KernelState) {
        let placed: Vec<(usize, Inst, usize)> = self
            .placed
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kernel == k.index)
            .map(|(i, p)| (i, p.inst, p.stmt))
            .collect();
        let mut warnings = Vec::new();
        for (pos, (_, inst, _)) in placed.iter().enumerate() {
            let Some(op) = inst.info() else { continue };
            if op.category != Category::Atomic || inst.rd != 0 {
                continue;
            }
            let pc = self.placed[placed[pos].0].offset;
            if let Some(p) = k.params.first() {
                warnings.push((pc, format!("`{}` with rd = r0 is non-returning: r0 keeps parameter `{}` and receives no old value", op.mnemonic, p.name)));
                continue;
            }
            // Is r0 read later before being written?
            for (_, later, _) in &placed[pos + 1..] {
                let (reads, writes) = reads_writes_r0(later);
                if reads {
                    warnings.push((pc, format!("`{}` with rd = r0 is non-returning, but r0 is read later as if it held the old value", op.mnemonic)));
                    break;
                }
                if writes {
                    break;
                }
            }
        }
        for (pc, message) in warnings {
            if let Some(entry) = self.module.line_at(pc).copied() {
                let span = self.span_of(&entry);
                self.warning("W0104", span, message).notes.push("per spec 8.2, rd = r0 on an atomic encodes the non-returning form; use another destination to get the old value".into());
            }
        }
    }

    fn span_of(&self, entry: &LineEntry) -> Span {
        let start = self.line_starts.get(entry.line as usize - 1).copied().unwrap_or(0)
            + entry.column as usize
            - 1;
        let end = self.line_starts.get(entry.end_line as usize - 1).copied().unwrap_or(0)
            + entry.end_column as usize
            - 1;
        start..end.max(start)
    }
}

fn reads_writes_r0(inst: &Inst) -> (bool, bool) {
    let Some(op) = inst.info() else { return (false, false) };
    let mut reads = false;
    let mut writes = false;
    for form in op.operands {
        match form {
            // A register range covers r0 only when it starts there.
            Form::Reg { slot, write, .. } if inst.register(*slot) == 0 => {
                if *write {
                    // A non-returning atomic (rd = r0) does not write r0.
                    writes = op.category != Category::Atomic;
                } else {
                    reads = true;
                }
            }
            Form::RegOrImm(_) if !inst.has_immediate_source() && inst.rs2 == 0 => reads = true,
            Form::Address { .. } if inst.rs1 == 0 => reads = true,
            _ => {}
        }
    }
    (reads, writes)
}

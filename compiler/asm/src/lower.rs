//! Checking and encoding: from flat statements to a [`Module`] plus every diagnostic.
//!
//! One pass over the statements does kernel grouping, directive handling, mnemonic and
//! operand resolution against the isa table, block matching and encoding; a second step per
//! kernel resolves call targets and checks what needs the whole kernel (declared register
//! count, unclosed blocks, uniformity of barrier conditions, non-returning atomics). Errors
//! never stop the pass: each statement is checked on its own so that one mistake gives one
//! diagnostic, and the result holds everything that could be encoded.

use std::collections::HashMap;

use wave_diag::{Diagnostic, Span, did_you_mean};
use wave_isa::{
    Category, Guard, ImmKind, Inst, OpInfo, Operand as Form, SPECIAL_REGISTERS, SuffixError, Width,
    lookup, operand_registers, target::MAX_DIVERGENCE_DEPTH,
};
use wave_wbin::{Kernel, LineEntry, Module, Param, ParamType, Symbol, SymbolKind};

use crate::syntax::{ArgKind, Half, InstructionSyntax, OperandKind, Parsed, Stmt, StmtKind};

/// The directives the assembler knows.
pub const DIRECTIVES: [&str; 6] =
    [".kernel", ".end", ".param", ".registers", ".local_memory", ".workgroup_size"];

/// An instruction placed in the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Index of its statement in [`Parsed::stmts`].
    pub stmt: usize,
    /// Index of its kernel in the module.
    pub kernel: usize,
    /// Byte offset in the module's code.
    pub offset: u32,
    /// The encoded fields.
    pub inst: Inst,
}

/// What the assembler knows of one kernel's source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSource {
    /// Its name.
    pub name: String,
    /// From `.kernel` to `.end` (or the last statement when `.end` is missing).
    pub span: Span,
    /// The name's span.
    pub name_span: Span,
    /// Labels: name, span and code offset.
    pub labels: Vec<(String, Span, u32)>,
    /// Parameter spans, in order.
    pub param_spans: Vec<Span>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    If,
    Else,
    Loop,
}

struct Block {
    kind: BlockKind,
    span: Span,
    /// The `if` condition is provably lane-varying.
    divergent: bool,
}

struct KernelState {
    source: KernelSource,
    index: usize,
    start: u32,
    params: Vec<Param>,
    registers: Option<(u16, Span)>,
    local_memory: Option<(u32, Span)>,
    workgroup_size: Option<([u32; 3], Span)>,
    blocks: Vec<Block>,
    labels: HashMap<String, (Span, u32)>,
    calls: Vec<(usize, String, Span)>,
    /// Register uses: (first register, count, span) for the `.registers` check.
    register_uses: Vec<(u32, u32, Span)>,
    max_predicate: Option<u8>,
    instructions: usize,
    /// Registers whose value may differ between lanes (flow-insensitive).
    varying: [bool; 256],
    varying_predicates: [bool; 4],
}

pub(crate) struct Lowering<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) module: Module,
    pub(crate) placed: Vec<Placed>,
    pub(crate) kernels: Vec<KernelSource>,
    kernel: Option<KernelState>,
    kernel_names: HashMap<String, Span>,
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
    starts
}

impl<'a> Lowering<'a> {
    pub(crate) fn new(text: &'a str, file: &str) -> Self {
        let module = Module { files: vec![file.to_owned()], ..Module::default() };
        Lowering {
            text,
            line_starts: line_starts(text),
            diagnostics: Vec::new(),
            module,
            placed: Vec::new(),
            kernels: Vec::new(),
            kernel: None,
            kernel_names: HashMap::new(),
        }
    }

    /// 1-based line and column of byte `at`.
    fn position(&self, at: usize) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= at).max(1) - 1;
        ((line + 1) as u32, (at - self.line_starts[line] + 1) as u32)
    }

    fn line_of(&self, at: usize) -> u32 {
        self.position(at).0
    }

    fn error(
        &mut self,
        code: &'static str,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.diagnostics.push(Diagnostic::error(code, span, message));
        self.diagnostics.last_mut().unwrap_or_else(|| unreachable!())
    }

    fn warning(
        &mut self,
        code: &'static str,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.diagnostics.push(Diagnostic::warning(code, span, message));
        self.diagnostics.last_mut().unwrap_or_else(|| unreachable!())
    }

    pub(crate) fn run(&mut self, parsed: &Parsed) {
        for (index, stmt) in parsed.stmts.iter().enumerate() {
            self.statement(index, stmt);
        }
        if let Some(k) = self.kernel.take() {
            let span = k.source.span.clone();
            let name = k.source.name.clone();
            let at = self.text.len();
            let insert = if self.text.ends_with('\n') || self.text.is_empty() {
                ".end\n"
            } else {
                "\n.end\n"
            };
            let d = self.error(
                "E0152",
                k.source.name_span.clone(),
                format!("kernel `{name}` has no `.end`"),
            );
            d.labels.push((span, "this kernel".into()));
            d.suggestion = Some(wave_diag::Suggestion {
                message: "end the kernel".into(),
                span: at..at,
                replacement: insert.into(),
            });
            self.finish_kernel(k);
        }
    }

    fn statement(&mut self, index: usize, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Kernel { name } => self.begin_kernel(stmt, name.clone()),
            StmtKind::End => match self.kernel.take() {
                Some(mut k) => {
                    k.source.span.end = stmt.span.end;
                    self.finish_kernel(k);
                }
                None => {
                    self.error("E0151", stmt.span.clone(), "`.end` without a `.kernel`");
                }
            },
            StmtKind::Directive { name, name_span, args } => {
                if self.kernel.is_none() && DIRECTIVES.contains(&name.as_str()) {
                    self.error("E0146", stmt.span.clone(), format!("`{name}` outside a kernel"))
                        .notes
                        .push("directives other than `.kernel` belong between `.kernel NAME` and `.end`".into());
                    return;
                }
                self.directive(stmt, name, name_span, args);
            }
            StmtKind::Label { name, name_span } => {
                let Some(k) = self.kernel.as_mut() else {
                    self.error("E0147", stmt.span.clone(), "label outside a kernel");
                    return;
                };
                let offset = self.module.code.len() as u32;
                if let Some((first, _)) = k.labels.get(name) {
                    let first = first.clone();
                    self.error(
                        "E0172",
                        name_span.clone(),
                        format!("label `{name}` is defined twice"),
                    )
                    .labels
                    .push((first, "first defined here".into()));
                    return;
                }
                k.labels.insert(name.clone(), (name_span.clone(), offset));
                k.source.labels.push((name.clone(), name_span.clone(), offset));
            }
            StmtKind::Instruction(syntax) => {
                if self.kernel.is_none() {
                    self.error("E0147", stmt.span.clone(), "instruction outside a kernel")
                        .notes
                        .push("instructions belong between `.kernel NAME` and `.end`".into());
                    return;
                }
                self.instruction(index, stmt, syntax);
            }
        }
    }

    fn begin_kernel(&mut self, stmt: &Stmt, name: Option<(String, Span)>) {
        if let Some(mut k) = self.kernel.take() {
            let open = k.source.name.clone();
            self.error("E0150", stmt.span.clone(), format!("`.kernel` inside kernel `{open}`"))
                .labels
                .push((
                    k.source.name_span.clone(),
                    format!("`{open}` is still open: it needs `.end` first"),
                ));
            k.source.span.end = stmt.span.start;
            self.finish_kernel(k);
        }
        let (name, name_span) = match name {
            Some(n) => n,
            None => {
                self.error("E0148", stmt.span.clone(), "`.kernel` needs a name: `.kernel NAME`");
                (format!("<unnamed@{}>", stmt.span.start), stmt.span.clone())
            }
        };
        if let Some(first) = self.kernel_names.get(&name).cloned() {
            self.error("E0149", name_span.clone(), format!("kernel `{name}` is defined twice"))
                .labels
                .push((first, "first defined here".into()));
        } else {
            self.kernel_names.insert(name.clone(), name_span.clone());
        }
        self.kernel = Some(KernelState {
            source: KernelSource {
                name,
                span: stmt.span.clone(),
                name_span,
                labels: Vec::new(),
                param_spans: Vec::new(),
            },
            index: self.module.kernels.len(),
            start: self.module.code.len() as u32,
            params: Vec::new(),
            registers: None,
            local_memory: None,
            workgroup_size: None,
            blocks: Vec::new(),
            labels: HashMap::new(),
            calls: Vec::new(),
            register_uses: Vec::new(),
            max_predicate: None,
            instructions: 0,
            varying: [false; 256],
            varying_predicates: [false; 4],
        });
    }

    fn directive(
        &mut self,
        stmt: &Stmt,
        name: &str,
        name_span: &Span,
        args: &[crate::syntax::Arg],
    ) {
        if !DIRECTIVES.contains(&name) {
            let suggestion = did_you_mean(name, DIRECTIVES);
            let d = self.error("E0140", name_span.clone(), format!("unknown directive `{name}`"));
            d.notes.push(format!("directives are {}", DIRECTIVES.join(", ")));
            if let Some(s) = suggestion {
                d.suggest_replacement(name_span.clone(), s);
            }
            return;
        }
        let Some(k) = self.kernel.as_mut() else { return };
        match name {
            ".param" => {
                if k.instructions > 0 {
                    self.error("E0143", stmt.span.clone(), "`.param` after the first instruction")
                        .notes
                        .push("parameters are preloaded into r0, r1, ... in declaration order; declare them all before the code".into());
                    return;
                }
                let [arg] = args else {
                    self.error(
                        "E0141",
                        stmt.span.clone(),
                        "`.param` takes one `NAME: TYPE`, e.g. `.param out: ptr`",
                    );
                    return;
                };
                let ArgKind::Typed { name: (pname, pspan), ty: (tname, tspan) } = &arg.kind else {
                    self.error(
                        "E0141",
                        arg.span.clone(),
                        "`.param` takes `NAME: TYPE`, e.g. `.param out: ptr`",
                    );
                    return;
                };
                let Some(ty) = ParamType::from_name(&tname.to_ascii_lowercase()) else {
                    let suggestion =
                        did_you_mean(&tname.to_ascii_lowercase(), ParamType::ALL.map(|t| t.name()));
                    let d = self.error(
                        "E0141",
                        tspan.clone(),
                        format!("unknown parameter type `{tname}`"),
                    );
                    d.notes.push("parameter types are u32, i32, f32 and ptr".into());
                    if let Some(s) = suggestion {
                        d.suggest_replacement(tspan.clone(), s);
                    }
                    return;
                };
                if looks_reserved(pname) {
                    self.error(
                        "E0141",
                        pspan.clone(),
                        format!("parameter name `{pname}` reads as a register, predicate, special register or literal"),
                    )
                    .notes
                    .push("operands named like `r3`, `p0`, `sr_...`, `inf` or `nan` are never looked up as parameters; choose another name".into());
                    return;
                }
                if let Some(i) = k.params.iter().position(|p| p.name == *pname) {
                    let first = k.source.param_spans[i].clone();
                    self.error(
                        "E0142",
                        pspan.clone(),
                        format!("parameter `{pname}` is declared twice"),
                    )
                    .labels
                    .push((first, "first declared here".into()));
                    return;
                }
                if k.params.len() >= 256 {
                    self.error(
                        "E0142",
                        pspan.clone(),
                        "more than 256 parameters do not fit in r0-r255",
                    );
                    return;
                }
                k.params.push(Param { name: pname.clone(), ty });
                k.source.param_spans.push(pspan.clone());
            }
            ".registers" => {
                if let Some((_, first)) = &k.registers {
                    let first = first.clone();
                    self.error("E0145", stmt.span.clone(), "`.registers` is given twice")
                        .labels
                        .push((first, "first given here".into()));
                    return;
                }
                let Some(n) = self.integer_args(stmt, args, 1, 1, ".registers", "a register count")
                else {
                    return;
                };
                if !(1..=256).contains(&n[0]) {
                    self.error("E0144", args[0].span.clone(), format!("`.registers {}` is out of range: the encoding has r0-r255, so 1 to 256", n[0]));
                    return;
                }
                if let Some(k) = self.kernel.as_mut() {
                    k.registers = Some((n[0] as u16, stmt.span.clone()));
                }
            }
            ".local_memory" => {
                if let Some((_, first)) = &k.local_memory {
                    let first = first.clone();
                    self.error("E0145", stmt.span.clone(), "`.local_memory` is given twice")
                        .labels
                        .push((first, "first given here".into()));
                    return;
                }
                let Some(n) = self.integer_args(stmt, args, 1, 1, ".local_memory", "a byte count")
                else {
                    return;
                };
                let Ok(bytes) = u32::try_from(n[0]) else {
                    self.error(
                        "E0144",
                        args[0].span.clone(),
                        "`.local_memory` must fit in 32 bits",
                    );
                    return;
                };
                if let Some(k) = self.kernel.as_mut() {
                    k.local_memory = Some((bytes, stmt.span.clone()));
                }
            }
            ".workgroup_size" => {
                if let Some((_, first)) = &k.workgroup_size {
                    let first = first.clone();
                    self.error("E0145", stmt.span.clone(), "`.workgroup_size` is given twice")
                        .labels
                        .push((first, "first given here".into()));
                    return;
                }
                let Some(n) =
                    self.integer_args(stmt, args, 1, 3, ".workgroup_size", "1 to 3 sizes")
                else {
                    return;
                };
                let mut size = [1u32; 3];
                for (i, v) in n.iter().enumerate() {
                    match u32::try_from(*v) {
                        Ok(v) if v >= 1 => size[i] = v,
                        _ => {
                            self.error(
                                "E0144",
                                args[i].span.clone(),
                                "workgroup dimensions must be at least 1 and fit in 32 bits",
                            );
                            return;
                        }
                    }
                }
                if size.iter().map(|&d| u64::from(d)).product::<u64>() > u64::from(u32::MAX) {
                    self.error(
                        "E0144",
                        stmt.span.clone(),
                        "the workgroup has 2^32 threads or more",
                    );
                    return;
                }
                if let Some(k) = self.kernel.as_mut() {
                    k.workgroup_size = Some((size, stmt.span.clone()));
                }
            }
            // Unknown directives were reported above.
            _ => {}
        }
    }

    fn integer_args(
        &mut self,
        stmt: &Stmt,
        args: &[crate::syntax::Arg],
        min: usize,
        max: usize,
        name: &str,
        what: &str,
    ) -> Option<Vec<i64>> {
        if args.len() < min || args.len() > max {
            self.error(
                "E0144",
                stmt.span.clone(),
                format!(
                    "`{name}` takes {what}, found {} argument{}",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
            );
            return None;
        }
        let mut out = Vec::new();
        for arg in args {
            let value = match &arg.kind {
                ArgKind::Integer(t) => parse_integer(t),
                _ => None,
            };
            match value {
                Some(v) if i64::try_from(v).is_ok() => out.push(v as i64),
                _ => {
                    self.error(
                        "E0144",
                        arg.span.clone(),
                        format!("`{name}` takes {what}: expected an integer here"),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    fn instruction(&mut self, index: usize, stmt: &Stmt, syntax: &InstructionSyntax) {
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
        // `mov rd, sr_x` and `mov rd, imm` are aliases of mov_special and mov_imm.
        let mnemonic = match (lower.as_str(), operands.get(1).map(|o| &o.kind)) {
            ("mov", Some(OperandKind::Special(_))) => "mov_special",
            ("mov", Some(OperandKind::Integer(_) | OperandKind::Float(_))) => "mov_imm",
            _ => lower.as_str(),
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
                let note = match op.mnemonic {
                    "break" | "continue" | "if" => format!(
                        "`{0}` takes its predicate as an operand: `{0} p0` or `{0} !p0`",
                        op.mnemonic
                    ),
                    _ => "structured control flow, calls and barriers apply to the whole wave; \
                          put them inside `if pN` ... `endif` instead"
                        .to_owned(),
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

    fn use_predicate(&mut self, p: u8) {
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

    fn operand(
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

    /// Structured control flow: matching, nesting depth, loops for break/continue.
    fn blocks(&mut self, op: &OpInfo, inst: &Inst, stmt: &Stmt) {
        if op.category != Category::Control {
            return;
        }
        let Some(k) = self.kernel.as_mut() else { return };
        let span = stmt.span.clone();
        match op.mnemonic {
            "if" => {
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
            "loop" => {
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
            "else" => match k.blocks.last_mut() {
                Some(b) if b.kind == BlockKind::If => b.kind = BlockKind::Else,
                Some(b) if b.kind == BlockKind::Else => {
                    let first = b.span.clone();
                    self.error("E0161", span, "a second `else` for the same `if`")
                        .labels
                        .push((first, "this `if` already has an `else`".into()));
                }
                _ => self.close_error(span, "else", &[BlockKind::If]),
            },
            "endif" => match k.blocks.last() {
                Some(b) if matches!(b.kind, BlockKind::If | BlockKind::Else) => {
                    k.blocks.pop();
                }
                _ => self.close_error(span, "endif", &[BlockKind::If, BlockKind::Else]),
            },
            "endloop" => match k.blocks.last() {
                Some(b) if b.kind == BlockKind::Loop => {
                    k.blocks.pop();
                }
                _ => self.close_error(span, "endloop", &[BlockKind::Loop]),
            },
            "break" | "continue" if !k.blocks.iter().any(|b| b.kind == BlockKind::Loop) => {
                self.error("E0166", span, format!("`{}` outside a loop", op.mnemonic))
                    .notes
                    .push("`break` and `continue` belong between `loop` and `endloop`".into());
            }
            "barrier" => {
                if let Some(b) = k.blocks.iter().rev().find(|b| b.divergent) {
                    let if_span = b.span.clone();
                    self.warning("W0103", span, "`barrier` inside an `if` whose condition varies between lanes")
                        .with_label_mut(if_span, "this condition may differ between lanes: it depends on thread or lane ids, or on loaded data")
                        .notes
                        .push("a barrier in divergent control flow is undefined behaviour (spec 6.12); move it out of the `if`, or make the condition uniform".into());
                }
            }
            _ => {}
        }
    }

    fn close_error(&mut self, span: Span, keyword: &str, wanted: &[BlockKind]) {
        let Some(k) = self.kernel.as_mut() else { return };
        let opener = if wanted.contains(&BlockKind::Loop) { "loop" } else { "if" };
        // A matching opener further down the stack means the blocks cross.
        if let Some(pos) = k.blocks.iter().rposition(|b| wanted.contains(&b.kind)) {
            let inner = &k.blocks[k.blocks.len() - 1];
            let inner_name = if inner.kind == BlockKind::Loop { "loop" } else { "if" };
            let (inner_span, outer_span) = (inner.span.clone(), k.blocks[pos].span.clone());
            let inner_line = self.line_of(inner_span.start);
            let close = if inner_name == "loop" { "endloop" } else { "endif" };
            let d = self.error("E0163", span, format!("`{keyword}` crosses the `{inner_name}` opened at line {inner_line}, which is still open"));
            d.labels.push((inner_span, format!("this `{inner_name}` needs `{close}` first")));
            d.labels.push((outer_span, format!("the `{opener}` this `{keyword}` would close")));
            // Recover as if the inner blocks were closed here.
            if let Some(k) = self.kernel.as_mut() {
                k.blocks.truncate(pos);
            }
            return;
        }
        let code = match keyword {
            "else" => "E0160",
            "endif" => "E0162",
            _ => "E0164",
        };
        self.error(code, span, format!("`{keyword}` without a matching `{opener}`"));
    }

    /// Flow-insensitive "varies between lanes" tracking, for the barrier check.
    fn uniformity(&mut self, op: &OpInfo, inst: &Inst, operands: &[&crate::syntax::Operand]) {
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
        let varies = varying_source || op.mnemonic == "wave_prefix_sum";
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

    fn finish_kernel(&mut self, k: KernelState) {
        for b in &k.blocks {
            let (name, close) =
                if b.kind == BlockKind::Loop { ("loop", "endloop") } else { ("if", "endif") };
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

trait LabelMut {
    fn with_label_mut(&mut self, span: Span, message: &str) -> &mut Self;
}

impl LabelMut for Diagnostic {
    fn with_label_mut(&mut self, span: Span, message: &str) -> &mut Self {
        self.labels.push((span, message.to_owned()));
        self
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

/// The span of the trailing scope operand `.name` of an instruction, if it has one.
fn scope_operand_span(syntax: &InstructionSyntax, name: &str) -> Option<Span> {
    syntax.operands.iter().find_map(|o| match &o.kind {
        OperandKind::Scope(s) if s == name => Some(o.span.clone()),
        _ => None,
    })
}

/// Whether a name would be read as something other than a parameter name.
/// Whether a name reads as a register, predicate, special register or float literal in
/// assembly (`r3`, `p0`, `sr_x`, `inf`), so it cannot name a parameter.
pub fn looks_reserved(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let numbered = |prefix: char| {
        lower.strip_prefix(prefix).is_some_and(|rest| {
            let digits = rest.split('.').next().unwrap_or("");
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        })
    };
    numbered('r')
        || numbered('p')
        || lower.starts_with("sr_")
        || matches!(lower.as_str(), "inf" | "nan")
}

/// Parses an integer literal: decimal, `0x`, `0b`, optional `-`, `_` separators.
pub fn parse_integer(text: &str) -> Option<i128> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let clean: String = rest.chars().filter(|c| *c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || digits.len() > 40 {
        return None;
    }
    let value = i128::from_str_radix(digits, radix).ok()?;
    Some(if negative { -value } else { value })
}

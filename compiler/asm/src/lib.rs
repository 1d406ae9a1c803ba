//! The WAVE assembler, disassembler and formatter.
//!
//! [`assemble`] parses with tree-sitter-wave, flattens the tree into statements
//! ([`syntax`]), then checks and encodes them against the isa table (`lower`). It never
//! fails and never panics: the result is always an [`Assembly`] holding the module that
//! could be built and every diagnostic, with stable codes (listed in `docs/diagnostics.md`).
//! [`disassemble`] prints canonical text that reassembles to identical code, kernels and
//! symbols; [`format`] rewrites a source file in canonical form without touching its
//! comments or operand spellings.

mod disasm;
mod fmt;
mod lower;
pub mod syntax;

use wave_diag::Diagnostic;
use wave_isa::{Flow, OpInfo, Operand, Width};
use wave_wbin::Module;

pub use disasm::disassemble;
pub use fmt::format;
pub use lower::{DIRECTIVES, KernelSource, Placed, looks_reserved, parse_integer};

/// The result of assembling one file.
#[derive(Debug)]
pub struct Assembly {
    /// The module built from everything that checked; only meaningful when there are no
    /// errors in `diagnostics`.
    pub module: Module,
    /// Errors and warnings, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// The statements and comments of the file.
    pub parsed: syntax::Parsed,
    /// Each encoded instruction with its statement, kernel and offset.
    pub placed: Vec<Placed>,
    /// What the source says about each kernel (names, labels, spans).
    pub kernels: Vec<KernelSource>,
}

impl Assembly {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        wave_diag::has_errors(&self.diagnostics)
    }
}

/// Assembles `text`; `file` is recorded in the module's line table.
pub fn assemble(text: &str, file: &str) -> Assembly {
    assemble_parsed(text, file, syntax::parse(text))
}

/// Assembles `text` parsing it with tree-sitter only (no line fast path): what the editor
/// path does, and the reference the fast path is checked against.
pub fn assemble_with_tree_sitter(text: &str, file: &str) -> Assembly {
    assemble_parsed(text, file, syntax::parse_tree(text))
}

fn assemble_parsed(text: &str, file: &str, mut parsed: syntax::Parsed) -> Assembly {
    let mut lowering = lower::Lowering::new(text, file);
    lowering.run(&parsed);
    let mut diagnostics = std::mem::take(&mut parsed.diagnostics);
    diagnostics.append(&mut lowering.diagnostics);
    diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    Assembly {
        module: lowering.module,
        diagnostics,
        parsed,
        placed: lowering.placed,
        kernels: lowering.kernels,
    }
}

/// How an instruction moves the block indentation of printed text: whether it sits one level
/// out from the lines before it (it closes or continues a block), and whether the lines after
/// it sit one level in (it opens or continues one).
pub(crate) fn indentation(flow: Flow) -> (bool, bool) {
    match flow {
        Flow::If | Flow::Loop => (false, true),
        Flow::Else => (true, true),
        Flow::Endif | Flow::Endloop => (true, false),
        Flow::Next | Flow::Break | Flow::Continue | Flow::Call | Flow::Return | Flow::Halt => {
            (false, false)
        }
    }
}

/// The operand syntax of an instruction, e.g. `iadd rd, rs1, rs2|imm`.
pub fn form_text(op: &OpInfo) -> String {
    form_parts(op).0
}

/// [`form_text`], with where each operand is in it (for signature help).
pub fn form_parts(op: &OpInfo) -> (String, Vec<std::ops::Range<usize>>) {
    let mut out = op.mnemonic.to_owned();
    if let wave_isa::Modifier::Named { names, default } = op.modifier
        && default.is_none()
    {
        out.push_str(&format!(
            ".{{{}}}",
            wave_isa::canonical_names(names).map(|(n, _)| n).collect::<Vec<_>>().join("|")
        ));
    }
    let mut parts = Vec::with_capacity(op.operands.len());
    for (i, operand) in op.operands.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        let start = out.len();
        out.push_str(&operand_text(operand));
        parts.push(start..out.len());
    }
    (out, parts)
}

/// How one operand of a form is written, e.g. `rd`, `rs1.lo|hi`, `[rs1 + offset]`.
pub fn operand_text(operand: &Operand) -> String {
    match operand {
        Operand::Reg { slot, width, .. } => match width {
            Width::W32 => slot.name().to_owned(),
            Width::Half(_) => format!("{}.lo|hi", slot.name()),
            Width::Pair => format!("{}:pair", slot.name()),
            Width::Data => slot.name().to_owned(),
        },
        Operand::RegOrImm(_) => "rs2|imm".into(),
        Operand::PredDst => "pd".into(),
        Operand::PredSrc => "ps|!ps".into(),
        Operand::Address { offset: true } => "[rs1 + offset]".into(),
        Operand::Address { offset: false } => "rs1".into(),
        Operand::Special => "sr_name".into(),
        Operand::Imm(_) => "imm32".into(),
        Operand::Target => "label".into(),
    }
}

#[cfg(test)]
mod tests;

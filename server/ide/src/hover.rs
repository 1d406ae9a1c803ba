//! Hover on an instruction.

use std::fmt::Write as _;
use std::ops::Range;

use wave_db::{Database, SourceFile, check_kernel, kernels};
use wave_isa::{Format, Inst, vendor};

/// What a hover shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    /// The bytes of the file the hover is about (the instruction's span).
    pub range: Range<usize>,
    /// Markdown.
    pub markdown: String,
}

/// The hover at byte `offset` of `file`: the instruction there, if the kernel assembles.
pub fn hover(db: &Database, file: SourceFile, offset: usize) -> Option<Hover> {
    let layout = kernels(db, file);
    let kernel = layout.kernels.iter().find(|k| k.range.contains(&offset))?;
    let check = check_kernel(db, kernel.source);
    let text = kernel.source.text(db);
    let local = offset - kernel.range.start;
    if !text.is_char_boundary(local) {
        return None;
    }
    // The line table maps each instruction to its span (1-based lines and byte columns).
    let (line, column) = line_column(text, local);
    let entry = check.module.lines.iter().find(|e| {
        (e.line, e.column) <= (line, column) && (line, column) < (e.end_line, e.end_column)
    })?;
    let start = offset_of(text, entry.line, entry.column) + kernel.range.start;
    let end = offset_of(text, entry.end_line, entry.end_column) + kernel.range.start;
    let bytes = check.module.code.get(entry.offset as usize..)?;
    let (inst, size) = Inst::decode(bytes).ok()?;
    Some(Hover { range: start..end, markdown: describe(&check.module, &inst, &bytes[..size]) })
}

/// 1-based line and byte column of `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() as u32 + 1;
    let column = (before.len() - before.rfind('\n').map_or(0, |i| i + 1)) as u32 + 1;
    (line, column)
}

/// The byte offset of 1-based `line`, `column`.
fn offset_of(text: &str, line: u32, column: u32) -> usize {
    let start: usize =
        text.split_inclusive('\n').take(line.saturating_sub(1) as usize).map(str::len).sum();
    (start + column.saturating_sub(1) as usize).min(text.len())
}

fn describe(module: &wave_wbin::Module, inst: &Inst, bytes: &[u8]) -> String {
    let Some(op) = inst.info() else { return String::new() };
    let mut text = String::new();
    wave_isa::write_inst(inst, &mut text, &|o| module.symbol_at(o).map(|s| s.name.clone()));
    let mut md = String::new();
    let _ = writeln!(md, "```wave\n{text}\n```\n");
    let _ = writeln!(md, "**{}** — {} (spec {})\n", op.mnemonic, op.category.title(), op.section);
    let _ = writeln!(md, "{}\n", op.summary);
    if let Some(cap) = op.capability {
        let _ = writeln!(md, "Needs the optional capability {}.\n", cap.name());
    }
    // The encoding of this instruction.
    let format = match (op.format, inst.ext.is_some()) {
        (Format::Extended, _) => "extended format (80 bits)",
        (Format::Base, true) => "base format with an extension word (80 bits)",
        (Format::Base, false) => "base format (48 bits)",
    };
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let _ = writeln!(md, "Encoding, {format}: `{}`\n", hex.join(" "));
    let w = inst.base_word();
    let field = |hi: u32, lo: u32| (w >> lo) & ((1u64 << (hi - lo + 1)) - 1);
    let _ = writeln!(md, "| field | bits | value |\n|---|---|---|");
    let rows: [(&str, u32, u32); 9] = [
        ("opcode", 47, 40),
        ("rd", 39, 32),
        ("rs1", 31, 24),
        ("rs2", 23, 16),
        ("modifier", 10, 7),
        ("scope", 6, 5),
        ("predicate", 4, 3),
        ("negate", 2, 2),
        ("flags", 1, 0),
    ];
    for (name, hi, lo) in rows {
        let bits = if hi == lo { format!("{hi}") } else { format!("{hi}:{lo}") };
        let _ = writeln!(md, "| {name} | {bits} | {} |", field(hi, lo));
    }
    if let Some(ext) = inst.ext {
        let _ = writeln!(md, "| extension word | 79:48 | 0x{ext:08x} |");
    }
    // What it becomes on each vendor.
    let forms: Vec<_> = vendor::VENDOR_FORMS
        .iter()
        .filter(|(k, _)| *k == op.mnemonic || k.split('.').next() == Some(op.mnemonic))
        .collect();
    if !forms.is_empty() {
        let _ = writeln!(
            md,
            "\n| form | NVIDIA (PTX) | AMD (HIP) | Intel (SYCL) | Apple (Metal) |\n|---|---|---|---|---|"
        );
        for (key, f) in forms {
            let _ = writeln!(
                md,
                "| `{key}` | `{}` | `{}` | `{}` | `{}` |",
                f.ptx, f.hip, f.sycl, f.metal
            );
        }
    }
    md
}

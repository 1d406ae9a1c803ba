//! Reading and writing the `.wbin` files of the reference WAVE toolchain (crates `wave-asm`,
//! `wave-emu`, ... 0.1.2), a different container and instruction encoding from ours.
//!
//! The reference container is a 32-byte header (`"WAVE"`, u16 version 1, u16 flags, then the
//! offsets and sizes of the code, the kernel names and the metadata), the code, the names
//! (NUL-terminated) and the metadata (a kernel count and 32-byte records: name offset,
//! registers, Local Memory, workgroup size, code offset and size). Its instructions come in
//! two generations that share the container: G3, "v0.4", of the repository's head (one or
//! two 32-bit words, opcode in the top byte), and G2, of the published `wave-asm` 0.1.2 crate
//! (6-bit opcodes, 5-bit registers). [`read`] tries G3 first, strictly, then G2.
//!
//! Reading re-encodes every instruction in ours (the mapping is summarised in
//! `docs/wbin.md`): modifiers are renumbered where the two numberings differ, predicate
//! sources move into our modifier, `call` targets become our byte offsets, and each call
//! target gets a `Function` symbol `fn_<our offset>`. The G3 assembler computed label offsets
//! with wrong instruction sizes (every two-word instruction it does not mark "extended" is
//! counted as 4 bytes); the reader reproduces those sizes to find the instruction a `call`
//! meant, and the writer writes targets the same way, as the reference assembler would.
//!
//! Neither direction drops an instruction: one without a counterpart is an error naming the
//! kernel and byte offset. What the conversion does not keep is listed in `docs/wbin.md`
//! (cache hints, the scope of Local Memory atomics, parameter names, labels, line tables).

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use wave_isa::{Guard, Inst, Operand};

use crate::{Kernel, Module, ReadError, Symbol, SymbolKind};

mod convert;
mod g2;
mod g3;
mod table;

#[cfg(test)]
mod tests;

/// Which format a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Ours: `"WAVEBIN\0"` ([`crate::read`]).
    Wave,
    /// The reference toolchain's: `"WAVE"`, u16 version 1, u16 flags 0 ([`read`]).
    Reference,
}

/// The format of `bytes`, from its first 8 bytes; `None` for neither.
pub fn format(bytes: &[u8]) -> Option<Format> {
    match bytes.get(..8) {
        Some(head) if head == crate::MAGIC => Some(Format::Wave),
        Some(head) if head == REFERENCE_HEAD => Some(Format::Reference),
        _ => None,
    }
}

/// The reference encoding generation found in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generation {
    /// G2: the published `wave-asm` 0.1.2 crate.
    Published,
    /// G3: "v0.4", the reference repository's head.
    V04,
}

impl Generation {
    /// Its name in messages.
    pub fn describe(self) -> &'static str {
        match self {
            Generation::Published => "published-crate (G2)",
            Generation::V04 => "v0.4 (G3)",
        }
    }
}

/// Why a module cannot be written in the reference format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertError {
    /// The kernel.
    pub kernel: String,
    /// Byte offset in [`Module::code`] of the instruction (of the kernel, for a kernel-wide
    /// problem).
    pub offset: u32,
    /// What cannot be converted, and why.
    pub message: String,
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write kernel `{}` for the reference toolchain: at code offset {} (0x{:x}): {}",
            self.kernel, self.offset, self.offset, self.message
        )
    }
}

impl std::error::Error for ConvertError {}

const REFERENCE_HEAD: [u8; 8] = *b"WAVE\x01\x00\x00\x00";
const HEADER: usize = 32;
const RECORD: usize = 32;
/// The longest kernel name read.
const MAX_NAME: usize = 4096;
/// The most registers a kernel of ours can have.
const MAX_REGISTERS: u32 = 256;

/// One reference instruction, its fields by role (the same for both generations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RefInst {
    /// What it is.
    pub row: &'static table::Row,
    /// W0.rd.
    pub rd: u8,
    /// W0.rs1.
    pub rs1: u8,
    /// W1.a (G3), rs2 (G2).
    pub a: u8,
    /// W1.b (G3), rs3 (G2; `select`'s last operand).
    pub b: u8,
    /// W1.c (G3), rs4 (G2).
    pub c: u8,
    /// Scope of device atomics and fences.
    pub scope: u8,
    /// The immediate of `call` and `mov_imm`.
    pub imm: u32,
    /// Our cache hint for a G2 load or store (G3 records none).
    pub hint: u8,
    /// The guard; (p0, not negated) is "unguarded".
    pub guard: Option<Guard>,
}

impl Default for RefInst {
    fn default() -> RefInst {
        RefInst {
            row: &table::ROWS[0],
            rd: 0,
            rs1: 0,
            a: 0,
            b: 0,
            c: 0,
            scope: 0,
            imm: 0,
            hint: 0,
            guard: None,
        }
    }
}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, ReadError> {
    Err(ReadError { offset, message: message.into() })
}

fn u32_at(file: &[u8], at: usize) -> Result<u32, ReadError> {
    match g3::word(file, at) {
        Some(v) => Ok(v),
        None => err(at, format!("a 4-byte field at byte {at} runs past the end of the file")),
    }
}

/// A kernel record of the reference container.
struct RawKernel {
    name: String,
    /// File offset of its record.
    record: usize,
    registers: u32,
    local_memory: u32,
    workgroup: [u32; 3],
    /// Its code, as file offsets.
    code: Range<usize>,
    /// Its code offset in the code section.
    rel: usize,
}

/// The checked container: the code section and the kernels.
struct Container {
    code: Range<usize>,
    kernels: Vec<RawKernel>,
}

/// A `[start, start + size)` range inside a file of `len` bytes.
fn range(start: u32, size: u32, len: usize) -> Option<Range<usize>> {
    let (start, size) = (start as usize, size as usize);
    let end = start.checked_add(size)?;
    (end <= len).then_some(start..end)
}

fn parse_container(file: &[u8]) -> Result<Container, ReadError> {
    if file.len() < HEADER {
        return err(
            file.len(),
            format!("file is {} bytes, shorter than the {HEADER}-byte header", file.len()),
        );
    }
    if file.get(..4) != Some(b"WAVE".as_slice()) {
        return err(0, "not a reference .wbin: the magic bytes are not \"WAVE\"");
    }
    let version =
        u16::from_le_bytes([file.get(4).copied().unwrap_or(0), file.get(5).copied().unwrap_or(0)]);
    if version != 1 {
        return err(4, format!("container version {version} is not supported (1 is)"));
    }
    let field = |at: usize| u32_at(file, at);
    let (code_off, code_size) = (field(8)?, field(12)?);
    let (sym_off, sym_size) = (field(16)?, field(20)?);
    let (meta_off, meta_size) = (field(24)?, field(28)?);
    let Some(code) = range(code_off, code_size, file.len()) else {
        return err(
            8,
            format!(
                "code section at {code_off} with {code_size} bytes runs past the {}-byte file",
                file.len()
            ),
        );
    };
    let symbols = if sym_off == 0 && sym_size == 0 {
        0..0
    } else {
        let Some(r) = range(sym_off, sym_size, file.len()) else {
            return err(
                16,
                format!(
                    "name table at {sym_off} with {sym_size} bytes runs past the {}-byte file",
                    file.len()
                ),
            );
        };
        r
    };
    // `--no-symbols` writes metadata_offset = 0 while the metadata follows the code (1.8).
    let stripped = sym_off == 0
        && sym_size == 0
        && meta_off == 0
        && meta_size >= 4
        && (meta_size - 4).is_multiple_of(RECORD as u32);
    let meta = if stripped {
        let end = code.end.checked_add(meta_size as usize).filter(|&e| e <= file.len());
        end.map(|end| code.end..end)
    } else {
        range(meta_off, meta_size, file.len())
    };
    let Some(meta) = meta else {
        return err(
            24,
            format!(
                "metadata at {} with {meta_size} bytes runs past the {}-byte file",
                if stripped { code.end } else { meta_off as usize },
                file.len()
            ),
        );
    };
    let sections =
        [(8, "code section", &code), (16, "name table", &symbols), (24, "metadata", &meta)];
    for (i, (at, what, r)) in sections.iter().enumerate() {
        if !r.is_empty() && r.start < HEADER {
            return err(
                *at,
                format!("the {what} at {} overlaps the {HEADER}-byte header", r.start),
            );
        }
        for (_, other, o) in sections.iter().take(i) {
            if !r.is_empty() && !o.is_empty() && r.start < o.end && o.start < r.end {
                return err(*at, format!("the {what} ({r:?}) overlaps the {other} ({o:?})"));
            }
        }
    }
    let mut kernels = Vec::new();
    if meta.len() >= 4 {
        let count = u32_at(file, meta.start)?;
        let fits = (count as u64).checked_mul(RECORD as u64).map(|n| n + 4 <= meta.len() as u64);
        if fits != Some(true) {
            return err(
                meta.start,
                format!("{count} kernel records do not fit in {} bytes of metadata", meta.len()),
            );
        }
        for i in 0..count as usize {
            let at = meta.start + 4 + RECORD * i;
            kernels.push(parse_record(file, at, i, &code, !symbols.is_empty())?);
        }
    }
    let mut order: Vec<&RawKernel> = kernels.iter().filter(|k| !k.code.is_empty()).collect();
    order.sort_by_key(|k| k.code.start);
    for pair in order.windows(2) {
        if let [a, b] = pair
            && b.code.start < a.code.end
        {
            return err(
                b.record + 24,
                format!("the code of kernel `{}` overlaps that of kernel `{}`", b.name, a.name),
            );
        }
    }
    Ok(Container { code, kernels })
}

fn parse_record(
    file: &[u8],
    at: usize,
    index: usize,
    code: &Range<usize>,
    has_names: bool,
) -> Result<RawKernel, ReadError> {
    let field = |i: usize| u32_at(file, at + 4 * i);
    let name_off = field(0)? as usize;
    // As the reference's decoder: no name without a name table (`--no-symbols`).
    let name = if name_off == 0 || !has_names {
        format!("kernel_{index}")
    } else {
        let Some(rest) = file.get(name_off..) else {
            return err(
                at,
                format!("kernel {index}: its name at {name_off} is past the end of the file"),
            );
        };
        // Bounded, so that many records cannot make the reader scan the file many times.
        let Some(len) = rest.iter().take(MAX_NAME + 1).position(|&b| b == 0) else {
            return err(
                name_off,
                if rest.len() > MAX_NAME {
                    format!("kernel {index}: its name is longer than {MAX_NAME} bytes")
                } else {
                    format!("kernel {index}: its name has no NUL before the end of the file")
                },
            );
        };
        match std::str::from_utf8(rest.get(..len).unwrap_or_default()) {
            Ok(s) => s.to_owned(),
            Err(e) => {
                return err(
                    name_off + e.valid_up_to(),
                    format!("kernel {index}: its name is not valid UTF-8"),
                );
            }
        }
    };
    let (rel, size) = (field(6)?, field(7)?);
    let start = code.start.checked_add(rel as usize);
    let end = start.and_then(|s| s.checked_add(size as usize)).filter(|&e| e <= code.end);
    let (Some(start), Some(end)) = (start, end) else {
        return err(
            at + 24,
            format!(
                "kernel `{name}`: code at {rel} with {size} bytes runs past the {}-byte code section",
                code.len()
            ),
        );
    };
    Ok(RawKernel {
        name,
        record: at,
        registers: field(1)?,
        local_memory: field(2)?,
        workgroup: [field(3)?, field(4)?, field(5)?],
        code: start..end,
        rel: rel as usize,
    })
}

/// A decoded reference instruction and where it is.
struct Decoded {
    /// File offset.
    at: usize,
    /// The offset labels give it: the G3 assembler's first-pass offset, or (G2) its code
    /// offset.
    label: u64,
    inst: RefInst,
}

/// Decodes every kernel as `generation`.
fn decode_all(
    file: &[u8],
    c: &Container,
    generation: Generation,
) -> Result<Vec<Vec<Decoded>>, ReadError> {
    let mut all = Vec::with_capacity(c.kernels.len());
    for k in &c.kernels {
        let code = file.get(k.code.clone()).unwrap_or_default();
        let mut insts = Vec::new();
        let mut pos = 0;
        while pos < code.len() {
            let rest = code.get(pos..).unwrap_or_default();
            let decoded = match generation {
                Generation::V04 => g3::decode(rest),
                Generation::Published => g2::decode(rest),
            };
            match decoded {
                Ok((inst, size)) => {
                    insts.push(Decoded { at: k.code.start + pos, label: 0, inst });
                    pos += size;
                }
                Err(e) => {
                    return err(
                        k.code.start + pos,
                        format!(
                            "kernel `{}`, code offset 0x{:x}: not {} code: {e}",
                            k.name,
                            k.rel + pos,
                            generation.describe()
                        ),
                    );
                }
            }
        }
        all.push(insts);
    }
    // Label offsets, program-wide in code order. G3's assembler sized each instruction by
    // whether its mnemonic is marked "extended" (8 bytes, else 4), not by what it encodes.
    let mut order: Vec<usize> = (0..c.kernels.len()).collect();
    order.sort_by_key(|&k| c.kernels.get(k).map_or(0, |k| k.code.start));
    let mut behind = 0u64;
    for k in order {
        for d in all.get_mut(k).into_iter().flatten() {
            let rel = d.at.saturating_sub(c.code.start) as u64;
            d.label = rel.saturating_sub(behind);
            if generation == Generation::V04 {
                let real = if d.inst.row.form.g3_two_words() { 8 } else { 4 };
                let first_pass = if d.inst.row.marked { 8 } else { 4 };
                behind += real - first_pass.min(real);
            }
        }
    }
    Ok(all)
}

/// Reads a reference `.wbin`: every kernel's instructions decoded (as G3, strictly; failing
/// that, as G2) and re-encoded in ours, with the kernels' names, registers, Local Memory and
/// workgroup size, `call` targets re-mapped to our byte offsets with a `Function` symbol
/// `fn_<offset>` at each, and each kernel's `predicates` = 1 + the highest predicate index it
/// uses. Parameters are not in the format. A bad file, or an instruction without a
/// counterpart here, is a [`ReadError`] naming the byte offset in the file.
pub fn read(bytes: &[u8]) -> Result<(Module, Generation), ReadError> {
    let container = parse_container(bytes)?;
    let (generation, decoded) = match decode_all(bytes, &container, Generation::V04) {
        Ok(d) => (Generation::V04, d),
        Err(e3) => match decode_all(bytes, &container, Generation::Published) {
            Ok(d) => (Generation::Published, d),
            Err(e2) => {
                return err(
                    e3.offset.max(e2.offset),
                    format!(
                        "the code is neither encoding of the reference toolchain: as v0.4 (G3), \
                         at byte 0x{:x}: {}; as the published crate's (G2), at byte 0x{:x}: {}",
                        e3.offset, e3.message, e2.offset, e2.message
                    ),
                );
            }
        },
    };
    let module = convert_module(&container, &decoded, generation)?;
    Ok((module, generation))
}

fn convert_module(
    c: &Container,
    decoded: &[Vec<Decoded>],
    generation: Generation,
) -> Result<Module, ReadError> {
    let mut labels: HashMap<u64, (usize, usize)> = HashMap::new();
    for (k, insts) in decoded.iter().enumerate() {
        for (i, d) in insts.iter().enumerate() {
            labels.insert(d.label, (k, i));
        }
    }
    let mut ours: Vec<Vec<Inst>> = Vec::with_capacity(decoded.len());
    // (kernel, instruction) of each call and of its target.
    let mut calls: Vec<((usize, usize), usize)> = Vec::new();
    for (k, (raw, insts)) in c.kernels.iter().zip(decoded).enumerate() {
        let mut out = Vec::with_capacity(insts.len());
        for (i, d) in insts.iter().enumerate() {
            let name = d.inst.row.name;
            let at = |what: String| {
                format!("`{name}` at byte 0x{:x} of kernel `{}` {what}", d.at, raw.name)
            };
            let inst = match convert::to_ours(&d.inst) {
                Ok(inst) => inst,
                Err(e) => return err(d.at, at(e)),
            };
            if convert::is_call(d.inst.row) {
                let target = u64::from(d.inst.imm);
                match labels.get(&target) {
                    Some(&(tk, ti)) if tk == k => calls.push(((k, i), ti)),
                    Some(&(tk, _)) => {
                        let other = c.kernels.get(tk).map_or("?", |k| k.name.as_str());
                        return err(
                            d.at,
                            at(format!(
                                "targets code offset 0x{target:x}, an instruction of kernel `{other}`: \
                                 our calls stay inside their kernel"
                            )),
                        );
                    }
                    None => {
                        let how = match generation {
                            Generation::V04 => {
                                ", counting instruction sizes as the reference assembler's first pass does"
                            }
                            Generation::Published => "",
                        };
                        return err(
                            d.at,
                            at(format!(
                                "targets code offset 0x{target:x}, which is no instruction start{how}"
                            )),
                        );
                    }
                }
            }
            out.push(inst);
        }
        ours.push(out);
    }
    // Our offsets: the kernels back to back in record order.
    let mut offsets: Vec<Vec<u32>> = Vec::with_capacity(ours.len());
    let mut pc = 0u32;
    for insts in &ours {
        let mut o = Vec::with_capacity(insts.len());
        for inst in insts {
            o.push(pc);
            pc = pc.saturating_add(inst.size() as u32);
        }
        offsets.push(o);
    }
    let mut symbols: Vec<Symbol> = Vec::new();
    for &((k, i), ti) in &calls {
        let target = offsets.get(k).and_then(|o| o.get(ti)).copied().unwrap_or(0);
        if let Some(inst) = ours.get_mut(k).and_then(|v| v.get_mut(i)) {
            inst.ext = Some(target);
        }
        symbols.push(Symbol {
            name: format!("fn_{target}"),
            kernel: k as u32,
            offset: target,
            kind: SymbolKind::Function,
        });
    }
    symbols.sort_by_key(|s| s.offset);
    symbols.dedup();
    let mut module = Module { symbols, ..Module::default() };
    for (k, (raw, insts)) in c.kernels.iter().zip(&ours).enumerate() {
        let start = module.code.len() as u32;
        let mut predicates = 0u8;
        for (inst, d) in insts.iter().zip(decoded.get(k).into_iter().flatten()) {
            if let Err(e) = inst.encode(&mut module.code) {
                return err(
                    d.at,
                    format!(
                        "kernel `{}`: `{}` at byte 0x{:x}: {e}",
                        raw.name, d.inst.row.name, d.at
                    ),
                );
            }
            predicates = predicates.max(predicates_used(inst));
        }
        if raw.registers > MAX_REGISTERS {
            return err(
                raw.record + 4,
                format!("kernel `{}`: {} registers, more than our 256", raw.name, raw.registers),
            );
        }
        let workgroup_size = match raw.workgroup {
            [0, 0, 0] => None,
            wg if wg.contains(&0) => {
                return err(
                    raw.record + 12,
                    format!("kernel `{}`: workgroup size {wg:?} has a zero dimension", raw.name),
                );
            }
            wg => Some(wg),
        };
        module.kernels.push(Kernel {
            name: raw.name.clone(),
            code: start..module.code.len() as u32,
            registers: raw.registers as u16,
            predicates,
            local_memory: raw.local_memory,
            workgroup_size,
            params: Vec::new(),
        });
    }
    Ok(module)
}

/// 1 + the highest predicate `inst` names (guard, destination or source); 0 for none.
fn predicates_used(inst: &Inst) -> u8 {
    let mut n = inst.guard.map_or(0, |g| g.predicate + 1);
    for operand in inst.info().map_or(&[][..], |op| op.operands) {
        match operand {
            Operand::PredDst => n = n.max(inst.rd + 1),
            Operand::PredSrc => n = n.max((inst.modifier & 3) + 1),
            _ => {}
        }
    }
    n
}

/// Writes `module` in the reference's G3 ("v0.4") encoding and container, as its assembler
/// would write the same program: kernel names, registers, Local Memory and workgroup size
/// (none: 0, 0, 0) in the kernel records, `call` targets as the byte offsets its assembler's
/// first pass computes. An instruction without a counterpart (`umin`, `wave_shuffle_idx`,
/// the bitwise reductions, our MMA, atomics other than u32, immediates and memory offsets, a
/// `.hi` half, a negated predicate source, the guard `@p0`, …) is an error naming the kernel
/// and byte offset. Parameters, symbols, line tables, variables, cache hints and the scope of
/// Local Memory atomics are not written (the format has no place for them).
pub fn write(module: &Module) -> Result<Vec<u8>, ConvertError> {
    let fail = |k: &Kernel, offset: u32, message: String| ConvertError {
        kernel: k.name.clone(),
        offset,
        message,
    };
    // Every kernel's instructions as reference instructions, with our offsets.
    let mut kernels: Vec<Vec<(u32, Inst, RefInst)>> = Vec::with_capacity(module.kernels.len());
    for k in &module.kernels {
        if k.name.contains('\0') {
            return Err(fail(k, k.code.start, "the kernel name contains a NUL byte".to_owned()));
        }
        let Some(code) = module.code.get(k.code.start as usize..k.code.end as usize) else {
            return Err(fail(
                k,
                k.code.start,
                format!(
                    "code range {:?} lies outside the module's {} bytes of code",
                    k.code,
                    module.code.len()
                ),
            ));
        };
        let mut insts = Vec::new();
        let mut pos = 0usize;
        while pos < code.len() {
            let pc = k.code.start + pos as u32;
            let (inst, size) = match Inst::decode(code.get(pos..).unwrap_or_default()) {
                Ok(x) => x,
                Err(e) => return Err(fail(k, pc, format!("invalid instruction: {e}"))),
            };
            let r = match convert::from_ours(&inst) {
                Ok(r) => r,
                Err(e) => {
                    let mut text = String::new();
                    wave_isa::write_inst(&inst, &mut text, &|_| None);
                    return Err(fail(k, pc, format!("`{text}` {e}")));
                }
            };
            insts.push((pc, inst, r));
            pos += size;
        }
        kernels.push(insts);
    }
    // Label offsets as the reference assembler's first pass computes them, program-wide.
    let mut labels: Vec<HashMap<u32, u32>> = Vec::with_capacity(kernels.len());
    let mut first_pass = 0u32;
    for insts in &kernels {
        let mut map = HashMap::with_capacity(insts.len());
        for (pc, _, r) in insts {
            map.insert(*pc, first_pass);
            first_pass = first_pass.wrapping_add(if r.row.marked { 8 } else { 4 });
        }
        labels.push(map);
    }
    let mut code = Vec::new();
    let mut ranges = Vec::with_capacity(kernels.len());
    for ((k, insts), map) in module.kernels.iter().zip(&mut kernels).zip(&labels) {
        let start = code.len();
        for (pc, inst, r) in insts.iter_mut() {
            if convert::is_call(r.row) {
                let target = inst.ext.unwrap_or(0);
                let Some(&label) = map.get(&target) else {
                    return Err(fail(
                        k,
                        *pc,
                        format!(
                            "`call` targets code offset {target}, which is no instruction of the kernel"
                        ),
                    ));
                };
                r.imm = label;
            }
            let (w0, w1) = g3::encode(r);
            code.extend_from_slice(&w0.to_le_bytes());
            if let Some(w1) = w1 {
                code.extend_from_slice(&w1.to_le_bytes());
            }
        }
        ranges.push(start..code.len());
    }
    // The container, as the reference's writer lays it out.
    let mut names = Vec::new();
    let mut name_at: Vec<usize> = Vec::with_capacity(module.kernels.len());
    let mut first: HashMap<&str, usize> = HashMap::new();
    for k in &module.kernels {
        let at = *first.entry(k.name.as_str()).or_insert(names.len());
        name_at.push(at);
        names.extend_from_slice(k.name.as_bytes());
        names.push(0);
    }
    let symbol_off = HEADER + code.len();
    let meta_off = symbol_off + names.len();
    let mut meta = Vec::with_capacity(4 + RECORD * module.kernels.len());
    put(&mut meta, module.kernels.len());
    for ((k, at), r) in module.kernels.iter().zip(&name_at).zip(&ranges) {
        put(&mut meta, symbol_off + at);
        put(&mut meta, usize::from(k.registers));
        put(&mut meta, k.local_memory as usize);
        for v in k.workgroup_size.unwrap_or([0; 3]) {
            put(&mut meta, v as usize);
        }
        put(&mut meta, r.start);
        put(&mut meta, r.len());
    }
    let mut out = Vec::with_capacity(meta_off + meta.len());
    out.extend_from_slice(&REFERENCE_HEAD);
    for v in [HEADER, code.len(), symbol_off, names.len(), meta_off, meta.len()] {
        put(&mut out, v);
    }
    out.extend_from_slice(&code);
    out.extend_from_slice(&names);
    out.extend_from_slice(&meta);
    Ok(out)
}

fn put(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u32).to_le_bytes());
}

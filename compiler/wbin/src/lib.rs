//! The `.wbin` container: everything needed to run and debug WAVE code.
//!
//! A `.wbin` holds the encoded instructions of one or more kernels, each kernel's parameters
//! by name and type, its register, predicate and local memory needs and its workgroup size,
//! label symbols, and a debug line table from instruction offsets to source spans. The layout
//! (all integers little-endian) is documented in `docs/wbin.md`:
//!
//! ```text
//! header   magic "WAVEBIN\0", u16 major, u16 minor, u32 flags, u32 section count, u32 zero
//! table    per section: u32 kind, u32 offset, u32 size, u32 zero
//! sections STRINGS (NUL-terminated UTF-8), CODE, KERNELS (40-byte records), PARAMS (8),
//!          SYMBOLS (16), FILES (4), LINES (24), and (version 1.1) VARS (16)
//! ```
//!
//! VARS, written only when a module has variables (a kernel compiled from a source
//! language), says in which register each source variable lives over which code range, for
//! the debugger; files without it stay version 1.0, byte for byte.
//!
//! [`read`] trusts nothing: every offset, size, string, index and instruction is checked, and
//! a bad file gives a [`ReadError`] naming the byte offset and what is wrong, never a panic.
//! [`write`] is deterministic: the same [`Module`] always gives the same bytes.

use std::fmt;
use std::ops::Range;

use wave_isa::Inst;

pub mod reference;

/// The file's first 8 bytes.
pub const MAGIC: [u8; 8] = *b"WAVEBIN\0";
/// The format version this crate writes; files with another major version are refused.
pub const VERSION: (u16, u16) = (1, 0);
/// The minor version of a file with a VARS section.
pub const VERSION_WITH_VARS: u16 = 1;

const HEADER_SIZE: usize = 24;
const SECTION_ENTRY: usize = 16;
const KERNEL_RECORD: usize = 40;
const PARAM_RECORD: usize = 8;
const SYMBOL_RECORD: usize = 16;
const FILE_RECORD: usize = 4;
const LINE_RECORD: usize = 24;
const VAR_RECORD: usize = 16;

/// Section kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
enum SectionKind {
    Strings = 1,
    Code = 2,
    Kernels = 3,
    Params = 4,
    Symbols = 5,
    Files = 6,
    Lines = 7,
    Vars = 8,
}

const SECTION_KINDS: [SectionKind; 8] = [
    SectionKind::Strings,
    SectionKind::Code,
    SectionKind::Kernels,
    SectionKind::Params,
    SectionKind::Symbols,
    SectionKind::Files,
    SectionKind::Lines,
    SectionKind::Vars,
];

impl SectionKind {
    fn name(self) -> &'static str {
        match self {
            SectionKind::Strings => "STRINGS",
            SectionKind::Code => "CODE",
            SectionKind::Kernels => "KERNELS",
            SectionKind::Params => "PARAMS",
            SectionKind::Symbols => "SYMBOLS",
            SectionKind::Files => "FILES",
            SectionKind::Lines => "LINES",
            SectionKind::Vars => "VARS",
        }
    }
}

/// The type of a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamType {
    /// 32-bit unsigned integer.
    U32 = 0,
    /// 32-bit signed integer.
    I32 = 1,
    /// binary32 float.
    F32 = 2,
    /// A 32-bit byte address into Device Memory.
    Ptr = 3,
}

impl ParamType {
    /// Every type, in encoding order.
    pub const ALL: [ParamType; 4] =
        [ParamType::U32, ParamType::I32, ParamType::F32, ParamType::Ptr];

    /// The name used in `.param NAME: TYPE`.
    pub fn name(self) -> &'static str {
        match self {
            ParamType::U32 => "u32",
            ParamType::I32 => "i32",
            ParamType::F32 => "f32",
            ParamType::Ptr => "ptr",
        }
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<ParamType> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A kernel parameter, preloaded into `r<index>` at entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: ParamType,
}

/// One kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// Byte range of its code in [`Module::code`]; execution starts at `code.start`.
    pub code: Range<u32>,
    /// R: registers per thread.
    pub registers: u16,
    /// Predicate registers used (at most 4).
    pub predicates: u8,
    /// Bytes of Local Memory per workgroup.
    pub local_memory: u32,
    /// `.workgroup_size`, when declared.
    pub workgroup_size: Option<[u32; 3]>,
    /// Parameters in declaration order.
    pub params: Vec<Param>,
}

/// What a symbol names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// A label inside a kernel.
    Label = 0,
    /// A label that is the target of a `call`.
    Function = 1,
}

/// A named code offset.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// Index of the kernel it belongs to.
    pub kernel: u32,
    /// Byte offset in [`Module::code`].
    pub offset: u32,
    /// Label or function.
    pub kind: SymbolKind,
}

/// One entry of the debug line table: the instruction at `offset` came from this span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LineEntry {
    /// Byte offset of the instruction in [`Module::code`].
    pub offset: u32,
    /// Index into [`Module::files`].
    pub file: u32,
    /// 1-based line of the span's start.
    pub line: u32,
    /// 1-based column (in bytes) of the span's start.
    pub column: u32,
    /// 1-based line of the span's end.
    pub end_line: u32,
    /// 1-based column of the span's end (exclusive).
    pub end_column: u32,
}

/// The type of a source variable, for showing its register's bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum VarType {
    /// `u32`.
    U32 = 0,
    /// `i32`.
    I32 = 1,
    /// `f32`.
    F32 = 2,
    /// `bool` (0 or 1).
    Bool = 3,
    /// `f16` (the low half of the register).
    F16 = 4,
    /// `f64` (the register and the next, low word first).
    F64 = 5,
}

impl VarType {
    /// Every type.
    pub const ALL: [VarType; 6] =
        [VarType::U32, VarType::I32, VarType::F32, VarType::Bool, VarType::F16, VarType::F64];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            VarType::U32 => "u32",
            VarType::I32 => "i32",
            VarType::F32 => "f32",
            VarType::Bool => "bool",
            VarType::F16 => "f16",
            VarType::F64 => "f64",
        }
    }
}

/// Where a source variable is: in `register` while the program counter is in `start..end`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VarLocation {
    /// The variable's source name.
    pub name: String,
    /// Its type.
    pub ty: VarType,
    /// The register (the first of a pair for `f64`).
    pub register: u8,
    /// First code offset where it is there.
    pub start: u32,
    /// First code offset past the range.
    pub end: u32,
}

/// A whole `.wbin`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Module {
    /// Encoded instructions of every kernel.
    pub code: Vec<u8>,
    /// Kernels, in source order.
    pub kernels: Vec<Kernel>,
    /// Label symbols, sorted by offset.
    pub symbols: Vec<Symbol>,
    /// Source file paths of the line table.
    pub files: Vec<String>,
    /// The debug line table, sorted by offset.
    pub lines: Vec<LineEntry>,
    /// Where source variables live, sorted by start (kernels compiled from a source
    /// language; empty for assembly).
    pub vars: Vec<VarLocation>,
}

impl Module {
    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<(usize, &Kernel)> {
        self.kernels.iter().enumerate().find(|(_, k)| k.name == name)
    }

    /// The instructions of `kernel` with their byte offsets. The module must have been read or
    /// validated; an undecodable instruction ends the sequence.
    pub fn instructions(&self, kernel: &Kernel) -> Instructions<'_> {
        Instructions { code: &self.code, offset: kernel.code.start, end: kernel.code.end }
    }

    /// The line entry of the instruction at `offset`, if any.
    pub fn line_at(&self, offset: u32) -> Option<&LineEntry> {
        self.lines.binary_search_by_key(&offset, |l| l.offset).ok().map(|i| &self.lines[i])
    }

    /// The source variables held in registers at `offset`, each once (its first location).
    pub fn vars_at(&self, offset: u32) -> Vec<&VarLocation> {
        let mut out: Vec<&VarLocation> = Vec::new();
        for v in self.vars.iter().take_while(|v| v.start <= offset) {
            if offset < v.end && !out.iter().any(|o| o.name == v.name) {
                out.push(v);
            }
        }
        out
    }

    /// The symbol at `offset`, preferring functions.
    pub fn symbol_at(&self, offset: u32) -> Option<&Symbol> {
        let start = self.symbols.partition_point(|s| s.offset < offset);
        let mut best: Option<&Symbol> = None;
        for s in self.symbols[start..].iter().take_while(|s| s.offset == offset) {
            if best.is_none() || s.kind == SymbolKind::Function {
                best = Some(s);
            }
        }
        best
    }
}

/// Iterator over `(offset, instruction)` of one kernel.
pub struct Instructions<'a> {
    code: &'a [u8],
    offset: u32,
    end: u32,
}

impl Iterator for Instructions<'_> {
    type Item = (u32, Inst);

    fn next(&mut self) -> Option<(u32, Inst)> {
        if self.offset >= self.end {
            return None;
        }
        let bytes = self.code.get(self.offset as usize..self.end as usize)?;
        let (inst, size) = Inst::decode(bytes).ok()?;
        let at = self.offset;
        self.offset += size as u32;
        Some((at, inst))
    }
}

/// Why a `.wbin` cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// Byte offset in the file where the problem is.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid .wbin at byte {} (0x{:x}): {}", self.offset, self.offset, self.message)
    }
}

impl std::error::Error for ReadError {}

fn err<T>(offset: usize, message: impl Into<String>) -> Result<T, ReadError> {
    Err(ReadError { offset, message: message.into() })
}

/// Serialises `module`. Deterministic: equal modules give equal bytes.
pub fn write(module: &Module) -> Vec<u8> {
    let mut strings = StringTable::default();
    let mut kernels = Vec::with_capacity(module.kernels.len() * KERNEL_RECORD);
    let mut params = Vec::new();
    let mut param_count = 0u32;
    for k in &module.kernels {
        put32(&mut kernels, strings.add(&k.name));
        put32(&mut kernels, k.code.start);
        put32(&mut kernels, k.code.end - k.code.start.min(k.code.end));
        kernels.extend_from_slice(&k.registers.to_le_bytes());
        kernels.push(k.predicates);
        kernels.push(u8::from(k.workgroup_size.is_some()));
        put32(&mut kernels, k.local_memory);
        for v in k.workgroup_size.unwrap_or([0; 3]) {
            put32(&mut kernels, v);
        }
        put32(&mut kernels, param_count);
        put32(&mut kernels, k.params.len() as u32);
        for p in &k.params {
            put32(&mut params, strings.add(&p.name));
            params.extend_from_slice(&[p.ty as u8, 0, 0, 0]);
        }
        param_count += k.params.len() as u32;
    }
    let mut symbols = Vec::new();
    for s in &module.symbols {
        put32(&mut symbols, strings.add(&s.name));
        put32(&mut symbols, s.kernel);
        put32(&mut symbols, s.offset);
        symbols.extend_from_slice(&[s.kind as u8, 0, 0, 0]);
    }
    let mut files = Vec::new();
    for f in &module.files {
        put32(&mut files, strings.add(f));
    }
    let mut lines = Vec::new();
    for l in &module.lines {
        for v in [l.offset, l.file, l.line, l.column, l.end_line, l.end_column] {
            put32(&mut lines, v);
        }
    }
    let mut vars = Vec::new();
    for v in &module.vars {
        put32(&mut vars, strings.add(&v.name));
        put32(&mut vars, v.start);
        put32(&mut vars, v.end);
        vars.extend_from_slice(&[v.register, v.ty as u8, 0, 0]);
    }
    let mut sections: Vec<(SectionKind, &[u8])> = vec![
        (SectionKind::Strings, &strings.bytes),
        (SectionKind::Code, &module.code),
        (SectionKind::Kernels, &kernels),
        (SectionKind::Params, &params),
        (SectionKind::Symbols, &symbols),
        (SectionKind::Files, &files),
        (SectionKind::Lines, &lines),
    ];
    let minor = if module.vars.is_empty() {
        VERSION.1
    } else {
        sections.push((SectionKind::Vars, &vars));
        VERSION_WITH_VARS
    };
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.0.to_le_bytes());
    out.extend_from_slice(&minor.to_le_bytes());
    put32(&mut out, 0);
    put32(&mut out, sections.len() as u32);
    // The header is padded to HEADER_SIZE with the zero word.
    put32(&mut out, 0);
    let mut offset = HEADER_SIZE + sections.len() * SECTION_ENTRY;
    for (kind, bytes) in &sections {
        put32(&mut out, *kind as u32);
        put32(&mut out, offset as u32);
        put32(&mut out, bytes.len() as u32);
        put32(&mut out, 0);
        offset += bytes.len();
    }
    for (_, bytes) in &sections {
        out.extend_from_slice(bytes);
    }
    out
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[derive(Default)]
struct StringTable {
    bytes: Vec<u8>,
    index: std::collections::HashMap<String, u32>,
}

impl StringTable {
    fn add(&mut self, s: &str) -> u32 {
        if let Some(&at) = self.index.get(s) {
            return at;
        }
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        self.index.insert(s.to_owned(), at);
        at
    }
}

struct Reader<'a> {
    file: &'a [u8],
}

impl Reader<'_> {
    fn u32(&self, at: usize) -> u32 {
        u32::from_le_bytes([self.file[at], self.file[at + 1], self.file[at + 2], self.file[at + 3]])
    }

    fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.file[at], self.file[at + 1]])
    }

    /// The string at `index` in the STRINGS section at `strings`.
    fn string(
        &self,
        strings: &Range<usize>,
        index: u32,
        at: usize,
        what: &str,
    ) -> Result<String, ReadError> {
        let start = strings.start.saturating_add(index as usize);
        if index as usize >= strings.len() {
            return err(
                at,
                format!(
                    "{what}: string index {index} is outside STRINGS ({} bytes)",
                    strings.len()
                ),
            );
        }
        let Some(len) = self.file[start..strings.end].iter().position(|&b| b == 0) else {
            return err(start, format!("{what}: string at index {index} has no terminating NUL"));
        };
        match std::str::from_utf8(&self.file[start..start + len]) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => err(start + e.valid_up_to(), format!("{what}: string is not valid UTF-8")),
        }
    }
}

fn records(
    section: &Option<Range<usize>>,
    size: usize,
    kind: SectionKind,
) -> Result<std::iter::StepBy<Range<usize>>, ReadError> {
    let range = section.clone().unwrap_or(0..0);
    if !range.len().is_multiple_of(size) {
        return err(
            range.start,
            format!(
                "{} section size {} is not a multiple of its {size}-byte records",
                kind.name(),
                range.len()
            ),
        );
    }
    Ok(range.step_by(size))
}

/// Reads a `.wbin` of either toolchain: ours ([`read`]), or the reference toolchain's,
/// converted to our instructions ([`reference::read`], whose generation comes back too).
pub fn read_any(file: &[u8]) -> Result<(Module, Option<reference::Generation>), ReadError> {
    match reference::format(file) {
        Some(reference::Format::Reference) => {
            reference::read(file).map(|(module, generation)| (module, Some(generation)))
        }
        _ => read(file).map(|module| (module, None)),
    }
}

impl Param {
    /// A parameter written `NAME: TYPE` (spaces optional; TYPE one of `u32 i32 f32 ptr`), as
    /// `wave run --param` and a case's `params` name the registers of a file that records none.
    pub fn parse(text: &str) -> Result<Param, String> {
        let Some((name, ty)) = text.split_once(':') else {
            return Err(format!("`{text}` is not NAME:TYPE, e.g. `a:ptr` or `n: u32`"));
        };
        let (name, ty) = (name.trim(), ty.trim());
        let first = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !first || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`{text}`: `{name}` is not a name"));
        }
        let ty = ParamType::from_name(ty).ok_or_else(|| {
            format!("`{text}`: `{ty}` is not a parameter type (u32, i32, f32, ptr)")
        })?;
        Ok(Param { name: name.to_owned(), ty })
    }
}

/// Names the parameters of every kernel of a module whose file records none (the reference
/// toolchain's): `params[k]` is preloaded into `r<k>`, the order in which the reference's
/// runtime passes arguments. Refused for a kernel that has parameters already or fewer
/// registers than parameters.
pub fn name_params(module: &mut Module, params: &[Param]) -> Result<(), String> {
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name == p.name) {
            return Err(format!("parameter `{}` is named twice", p.name));
        }
    }
    for k in &mut module.kernels {
        if !k.params.is_empty() {
            return Err(format!("kernel `{}` already has parameters", k.name));
        }
        if params.len() > usize::from(k.registers) {
            return Err(format!(
                "kernel `{}` has {} registers, fewer than the {} parameters",
                k.name,
                k.registers,
                params.len()
            ));
        }
        k.params = params.to_vec();
    }
    Ok(())
}

/// Reads and validates a `.wbin`.
pub fn read(file: &[u8]) -> Result<Module, ReadError> {
    let r = Reader { file };
    if file.len() < HEADER_SIZE {
        return err(
            file.len(),
            format!("file is {} bytes, shorter than the {HEADER_SIZE}-byte header", file.len()),
        );
    }
    if file[..8] != MAGIC {
        return err(0, "not a .wbin: the magic bytes are not \"WAVEBIN\\0\"");
    }
    let (major, minor) = (r.u16(8), r.u16(10));
    if major != VERSION.0 {
        return err(
            8,
            format!(
                "format version {major}.{minor} is not supported (this tool reads {}.x)",
                VERSION.0
            ),
        );
    }
    if r.u32(12) != 0 {
        return err(12, format!("header flags 0x{:x} are not defined", r.u32(12)));
    }
    let count = r.u32(16) as usize;
    let table_end = count
        .checked_mul(SECTION_ENTRY)
        .and_then(|n| n.checked_add(HEADER_SIZE))
        .filter(|&end| end <= file.len());
    let Some(table_end) = table_end else {
        return err(16, format!("{count} sections do not fit in a {}-byte file", file.len()));
    };
    let mut sections: [Option<Range<usize>>; 9] = Default::default();
    for i in 0..count {
        let at = HEADER_SIZE + i * SECTION_ENTRY;
        let (kind, offset, size) = (r.u32(at), r.u32(at + 4) as usize, r.u32(at + 8) as usize);
        let Some(k) = SECTION_KINDS.iter().find(|k| **k as u32 == kind) else {
            return err(at, format!("unknown section kind {kind}"));
        };
        if offset < table_end || offset.checked_add(size).is_none_or(|end| end > file.len()) {
            return err(
                at + 4,
                format!(
                    "{} section at {offset} with {size} bytes lies outside the file's {} data bytes",
                    k.name(),
                    file.len()
                ),
            );
        }
        let slot = &mut sections[kind as usize];
        if slot.is_some() {
            return err(at, format!("{} section appears twice", k.name()));
        }
        *slot = Some(offset..offset + size);
    }
    for required in [SectionKind::Strings, SectionKind::Code, SectionKind::Kernels] {
        if sections[required as usize].is_none() {
            return err(16, format!("the {} section is missing", required.name()));
        }
    }
    let strings = sections[SectionKind::Strings as usize].clone().unwrap_or(0..0);
    let code_range = sections[SectionKind::Code as usize].clone().unwrap_or(0..0);
    let code = file[code_range.clone()].to_vec();

    let mut params = Vec::new();
    for at in records(&sections[SectionKind::Params as usize], PARAM_RECORD, SectionKind::Params)? {
        let name = r.string(&strings, r.u32(at), at, "parameter name")?;
        let ty = file[at + 4];
        let Some(ty) = ParamType::ALL.into_iter().find(|t| *t as u8 == ty) else {
            return err(at + 4, format!("parameter `{name}` has unknown type {ty}"));
        };
        if file[at + 5..at + 8] != [0, 0, 0] {
            return err(at + 5, "parameter record padding is not zero");
        }
        params.push(Param { name, ty });
    }

    let mut module = Module { code, ..Module::default() };
    let mut starts: Vec<Vec<u32>> = Vec::new();
    for at in
        records(&sections[SectionKind::Kernels as usize], KERNEL_RECORD, SectionKind::Kernels)?
    {
        let name = r.string(&strings, r.u32(at), at, "kernel name")?;
        let (start, size) = (r.u32(at + 4), r.u32(at + 8));
        let Some(end) = start.checked_add(size).filter(|&e| e as usize <= module.code.len()) else {
            return err(
                at + 4,
                format!(
                    "kernel `{name}`: code {start}+{size} runs past the {}-byte CODE section",
                    module.code.len()
                ),
            );
        };
        if let Some(prev) = module.kernels.last()
            && start < prev.code.end
        {
            return err(at + 4, format!("kernel `{name}` overlaps kernel `{}`", prev.name));
        }
        let registers = r.u16(at + 12);
        if registers > 256 {
            return err(
                at + 12,
                format!("kernel `{name}`: {registers} registers, more than the encoding's 256"),
            );
        }
        let predicates = file[at + 14];
        if predicates > wave_isa::PREDICATES {
            return err(at + 14, format!("kernel `{name}`: {predicates} predicates, WAVE has 4"));
        }
        let has_size = file[at + 15];
        if has_size > 1 {
            return err(
                at + 15,
                format!("kernel `{name}`: workgroup-size flag {has_size} is not 0 or 1"),
            );
        }
        let wg = [r.u32(at + 20), r.u32(at + 24), r.u32(at + 28)];
        let workgroup_size = match has_size {
            1 if wg.contains(&0) => {
                return err(
                    at + 20,
                    format!("kernel `{name}`: workgroup size {wg:?} has a zero dimension"),
                );
            }
            1 => Some(wg),
            _ if wg != [0; 3] => {
                return err(
                    at + 20,
                    format!("kernel `{name}`: undeclared workgroup size is not zero"),
                );
            }
            _ => None,
        };
        let (first, count) = (r.u32(at + 32) as usize, r.u32(at + 36) as usize);
        let Some(kernel_params) = first.checked_add(count).and_then(|end| params.get(first..end))
        else {
            return err(
                at + 32,
                format!(
                    "kernel `{name}`: parameters {first}+{count} lie outside the {} in PARAMS",
                    params.len()
                ),
            );
        };
        // Every instruction must decode, and the last must end exactly at the kernel's end.
        let mut kernel_starts = Vec::new();
        let mut pc = start;
        while pc < end {
            kernel_starts.push(pc);
            match Inst::decode(&module.code[pc as usize..end as usize]) {
                Ok((_, size)) => pc += size as u32,
                Err(e) => {
                    return err(
                        code_range.start + pc as usize,
                        format!("kernel `{name}`, instruction at code offset {pc}: {e}"),
                    );
                }
            }
        }
        starts.push(kernel_starts);
        module.kernels.push(Kernel {
            name,
            code: start..end,
            registers,
            predicates,
            local_memory: r.u32(at + 16),
            workgroup_size,
            params: kernel_params.to_vec(),
        });
    }
    // Call targets must be instruction starts in the same kernel.
    for (k, kernel) in module.kernels.iter().enumerate() {
        for (pc, inst) in module.instructions(kernel) {
            if inst.opcode == 0x67 {
                let target = inst.ext.unwrap_or(0);
                if starts[k].binary_search(&target).is_err() {
                    return err(
                        code_range.start + pc as usize,
                        format!(
                            "kernel `{}`: call at code offset {pc} targets {target}, which is not an instruction of the kernel",
                            kernel.name
                        ),
                    );
                }
            }
        }
    }
    for at in
        records(&sections[SectionKind::Symbols as usize], SYMBOL_RECORD, SectionKind::Symbols)?
    {
        let name = r.string(&strings, r.u32(at), at, "symbol name")?;
        let (kernel, offset) = (r.u32(at + 4), r.u32(at + 8));
        let Some(k) = module.kernels.get(kernel as usize) else {
            return err(
                at + 4,
                format!(
                    "symbol `{name}` names kernel {kernel}, but there are {}",
                    module.kernels.len()
                ),
            );
        };
        if offset < k.code.start || offset > k.code.end {
            return err(
                at + 8,
                format!("symbol `{name}` at {offset} is outside kernel `{}`", k.name),
            );
        }
        let kind = match file[at + 12] {
            0 => SymbolKind::Label,
            1 => SymbolKind::Function,
            other => return err(at + 12, format!("symbol `{name}` has unknown kind {other}")),
        };
        if file[at + 13..at + 16] != [0, 0, 0] {
            return err(at + 13, "symbol record padding is not zero");
        }
        if module.symbols.last().is_some_and(|s: &Symbol| s.offset > offset) {
            return err(at + 8, "symbols are not sorted by offset");
        }
        module.symbols.push(Symbol { name, kernel, offset, kind });
    }
    for at in records(&sections[SectionKind::Files as usize], FILE_RECORD, SectionKind::Files)? {
        module.files.push(r.string(&strings, r.u32(at), at, "file path")?);
    }
    for at in records(&sections[SectionKind::Lines as usize], LINE_RECORD, SectionKind::Lines)? {
        let v: Vec<u32> = (0..6).map(|i| r.u32(at + 4 * i)).collect();
        let entry = LineEntry {
            offset: v[0],
            file: v[1],
            line: v[2],
            column: v[3],
            end_line: v[4],
            end_column: v[5],
        };
        if entry.file as usize >= module.files.len() {
            return err(
                at + 4,
                format!(
                    "line entry names file {}, but there are {}",
                    entry.file,
                    module.files.len()
                ),
            );
        }
        if entry.offset as usize >= module.code.len() {
            return err(at, format!("line entry at code offset {} is past the code", entry.offset));
        }
        if module.lines.last().is_some_and(|l: &LineEntry| l.offset >= entry.offset) {
            return err(at, "line entries are not sorted by strictly increasing offset");
        }
        module.lines.push(entry);
    }
    for at in records(&sections[SectionKind::Vars as usize], VAR_RECORD, SectionKind::Vars)? {
        let name = r.string(&strings, r.u32(at), at, "variable name")?;
        let (start, end) = (r.u32(at + 4), r.u32(at + 8));
        let (register, ty) = (file[at + 12], file[at + 13]);
        let Some(ty) = VarType::ALL.into_iter().find(|t| *t as u8 == ty) else {
            return err(at + 13, format!("variable `{name}` has unknown type {ty}"));
        };
        if file[at + 14..at + 16] != [0, 0] {
            return err(at + 14, "variable record padding is not zero");
        }
        if start >= end || end as usize > module.code.len() {
            return err(
                at + 4,
                format!(
                    "variable `{name}`: code range {start}..{end} is empty or past the {}-byte code",
                    module.code.len()
                ),
            );
        }
        if module.vars.last().is_some_and(|v: &VarLocation| v.start > start) {
            return err(at + 4, "variables are not sorted by start");
        }
        module.vars.push(VarLocation { name, ty, register, start, end });
    }
    Ok(module)
}

#[cfg(test)]
mod tests;

//! Test cases: "run this kernel with these inputs and expect these outputs".
//!
//! [`Case::parse`] reads the case format of `spec/testcase.md` (strictly: unknown keys are
//! errors, so a typo never silently weakens a case); [`Case::run`] assembles the source, runs
//! it in the emulator at every listed wave width and compares memory; [`run_paths`] runs files
//! and folders recursively and is what both `wave test` and `cargo test` call.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

pub mod options;

/// Default device memory of a case: 1 MiB.
pub const DEFAULT_DEVICE_MEMORY: usize = 1 << 20;
/// Largest device memory a case may ask for: 256 MiB.
pub const MAX_DEVICE_MEMORY: usize = 256 << 20;
/// Default instruction budget of a case, in wave-instructions.
pub const DEFAULT_MAX_STEPS: u64 = 50_000_000;
/// The largest file the tools read (sources, `.wbin`, case data, `--load` files): far above
/// any kernel, and a bound on what a mistaken path (a log, a disk image) costs.
pub const MAX_INPUT: u64 = 64 << 20;

/// Reads a regular file of at most [`MAX_INPUT`] bytes. A device, a pipe or a directory
/// (`/dev/zero` never ends) and a larger file are refused with a message that says so.
pub fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_INPUT {
        return Err(format!("{} bytes, over the limit of {MAX_INPUT} bytes", meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The file may grow while it is read: read one byte past the limit at most.
    file.take(MAX_INPUT + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(format!("over the limit of {MAX_INPUT} bytes"));
    }
    Ok(bytes)
}

/// [`read_file`] of UTF-8 text.
pub fn read_text_file(path: &Path) -> Result<String, String> {
    String::from_utf8(read_file(path)?).map_err(|e| {
        format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to())
    })
}

/// The kernels of the compiler's quality benchmark: each is a Python case in
/// `kernels/python/` with a hand-written twin in `kernels/handwritten/`.
pub const KERNEL_SET: [&str; 8] = [
    "vector_add",
    "saxpy",
    "reduction",
    "histogram",
    "prefix_sum",
    "sgemm",
    "transpose",
    "divergent_loop",
];

/// Element types of typed lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// Unsigned byte.
    U8,
    /// Unsigned 16-bit.
    U16,
    /// Unsigned 32-bit.
    U32,
    /// Signed 32-bit.
    I32,
    /// Unsigned 64-bit.
    U64,
    /// binary16.
    F16,
    /// binary32.
    F32,
}

impl Elem {
    const ALL: [(&'static str, Elem); 7] = [
        ("u8", Elem::U8),
        ("u16", Elem::U16),
        ("u32", Elem::U32),
        ("i32", Elem::I32),
        ("u64", Elem::U64),
        ("f16", Elem::F16),
        ("f32", Elem::F32),
    ];

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::U8 => 1,
            Elem::U16 | Elem::F16 => 2,
            Elem::U32 | Elem::I32 | Elem::F32 => 4,
            Elem::U64 => 8,
        }
    }

    /// The type's name in a case file.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, e)| *e == self).map_or("?", |(n, _)| n)
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<Elem> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
    }

    /// Formats the element at `bytes`.
    pub fn show(self, bytes: &[u8]) -> String {
        let mut raw = [0u8; 8];
        raw[..bytes.len()].copy_from_slice(bytes);
        let v = u64::from_le_bytes(raw);
        match self {
            Elem::U8 | Elem::U16 | Elem::U32 | Elem::U64 => v.to_string(),
            Elem::I32 => (v as u32 as i32).to_string(),
            Elem::F16 => format!("{:?} (0x{v:04x})", half::f16::from_bits(v as u16).to_f32()),
            Elem::F32 => format!("{:?} (0x{v:08x})", f32::from_bits(v as u32)),
        }
    }
}

/// A block of typed values at a byte offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Byte offset in device memory.
    pub offset: usize,
    /// Element type.
    pub elem: Elem,
    /// Raw little-endian bytes.
    pub bytes: Vec<u8>,
    /// For `[[expect]]`: the width it applies to (all when `None`).
    pub wave_width: Option<u32>,
    /// For float expectations: allowed distance in ULPs.
    pub ulps: u32,
    /// For float expectations: allowed absolute difference (`within`; 0 when not given). A
    /// value passes when it is within either bound.
    pub within: f64,
    /// For float expectations: which elements are NaN (any NaN matches).
    pub nan: Vec<bool>,
}

/// What a case expects.
#[derive(Clone, Debug, PartialEq)]
pub enum Expectation {
    /// Memory contents after the run.
    Memory(Vec<Block>),
    /// An assembly diagnostic code, e.g. `E0102`.
    Error(String),
    /// A trap whose message contains this text.
    Trap(String),
}

/// One case file.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Where it was read from.
    pub path: PathBuf,
    /// What it checks.
    pub name: String,
    /// Spec sections.
    pub spec: Vec<String>,
    /// Wave widths to run at.
    pub wave_widths: Vec<u32>,
    /// The assembly source.
    pub source: String,
    /// File name used for diagnostics.
    pub source_name: String,
    /// Kernel to run.
    pub kernel: Option<String>,
    /// Grid in workgroups.
    pub grid: [u32; 3],
    /// Workgroup size, if given.
    pub workgroup: Option<[u32; 3]>,
    /// Device memory bytes.
    pub device_memory: usize,
    /// Arguments by name, as 32-bit values.
    pub args: Vec<(String, u32)>,
    /// Initial memory.
    pub memory: Vec<Block>,
    /// Expected outcome.
    pub expect: Expectation,
    /// Instruction budget.
    pub max_steps: u64,
    /// The kernel source the assembly was compiled from (`.py`, `.rs`, `.cpp`, `.ts`), if any.
    pub kernel_source: Option<KernelSource>,
    /// Threads the emulator runs the workgroups on (not from the file: 0, every core, unless
    /// the runner says otherwise; the results do not depend on it).
    pub threads: u32,
}

/// A kernel source a case is compiled from.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSource {
    /// The file.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// Its language.
    pub language: wave_kernel::Language,
    /// The optimisation level the case's `source` was compiled at.
    pub level: wave_kernel::opt::Level,
    /// Diagnostics of the compilation (errors mean `source` is empty).
    pub diagnostics: Vec<wave_diag::Diagnostic>,
}

/// Compiles a kernel source to assembly text at `level`.
fn compile_kernel(k: &mut KernelSource) -> String {
    let options = wave_kernel::Options { level: k.level, ..Default::default() };
    let (out, diagnostics) =
        wave_kernel::compile(&k.text, k.language, &k.path.display().to_string(), options);
    k.diagnostics = diagnostics;
    out.map(|o| o.asm).unwrap_or_default()
}

fn err<T>(path: &Path, message: impl std::fmt::Display) -> Result<T, String> {
    Err(format!("{}: {message}", path.display()))
}

fn check_keys(path: &Path, table: &Table, what: &str, allowed: &[&str]) -> Result<(), String> {
    for key in table.keys() {
        let typed = Elem::ALL.iter().any(|(n, _)| key == *n || *key == format!("{n}_file"));
        let known = allowed.contains(&key.as_str()) || (typed && allowed.contains(&"<typed>"));
        if !known {
            return err(path, format!("unknown key `{key}` in {what}"));
        }
    }
    Ok(())
}

fn int(path: &Path, v: &Value, what: &str) -> Result<i64, String> {
    v.as_integer().map_or_else(|| err(path, format!("{what} must be an integer")), Ok)
}

fn dims(path: &Path, v: &Value, what: &str) -> Result<[u32; 3], String> {
    let Some(list) = v.as_array().filter(|l| (1..=3).contains(&l.len())) else {
        return err(path, format!("{what} must be a list of 1 to 3 integers"));
    };
    let mut out = [1u32; 3];
    for (i, x) in list.iter().enumerate() {
        out[i] = u32::try_from(int(path, x, what)?)
            .ok()
            .filter(|d| *d >= 1)
            .map_or_else(|| err(path, format!("{what} dimensions must be 1 to 2^32-1")), Ok)?;
    }
    Ok(out)
}

/// Encodes a TOML value as an element; for floats also says whether it is NaN.
fn encode(path: &Path, elem: Elem, v: &Value, out: &mut Vec<u8>) -> Result<bool, String> {
    let bad = |what: &str| err(path, format!("{what} is not a valid {} value", elem.name()));
    match elem {
        Elem::F32 | Elem::F16 => {
            let x = match v {
                Value::Float(f) => *f,
                Value::Integer(i) => *i as f64,
                _ => return bad(&v.to_string()),
            };
            if elem == Elem::F32 {
                out.extend_from_slice(&(x as f32).to_bits().to_le_bytes());
            } else {
                out.extend_from_slice(&half::f16::from_f64(x).to_bits().to_le_bytes());
            }
            Ok(x.is_nan())
        }
        _ => {
            let Some(i) = v.as_integer() else { return bad(&v.to_string()) };
            let ok = match elem {
                Elem::U8 => (0..=0xFF).contains(&i),
                Elem::U16 => (0..=0xFFFF).contains(&i),
                Elem::U32 => (0..=0xFFFF_FFFF).contains(&i),
                Elem::I32 => (i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&i),
                _ => i >= 0,
            };
            if !ok {
                return bad(&i.to_string());
            }
            out.extend_from_slice(&i.to_le_bytes()[..elem.size()]);
            Ok(false)
        }
    }
}

fn block(path: &Path, table: &Table, expect: bool) -> Result<Block, String> {
    let allowed: &[&str] = if expect {
        &["offset", "wave_width", "ulps", "within", "<typed>"]
    } else {
        &["offset", "<typed>"]
    };
    check_keys(path, table, if expect { "[[expect]]" } else { "[[memory]]" }, allowed)?;
    let offset = match table.get("offset") {
        Some(v) => usize::try_from(int(path, v, "offset")?)
            .map_or_else(|_| err(path, "offset must not be negative"), Ok)?,
        None => return err(path, "a memory block needs an `offset`"),
    };
    let typed: Vec<(&String, &Value)> = table
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "offset" | "wave_width" | "ulps" | "within"))
        .collect();
    let [(key, value)] = typed.as_slice() else {
        return err(
            path,
            "a memory block needs exactly one typed list (u8 u16 u32 i32 u64 f16 f32, or NAME_file)",
        );
    };
    let mut bytes = Vec::new();
    let mut nan = Vec::new();
    let elem = if let Some(name) = key.strip_suffix("_file") {
        let elem = Elem::from_name(name)
            .map_or_else(|| err(path, format!("unknown type `{name}`")), Ok)?;
        let Some(file) = value.as_str() else {
            return err(path, format!("`{key}` must be a file name"));
        };
        let at = path.parent().unwrap_or(Path::new(".")).join(file);
        bytes = read_file(&at)
            .map_err(|e| format!("{}: cannot read `{}`: {e}", path.display(), at.display()))?;
        if bytes.len() % elem.size() != 0 {
            return err(path, format!("`{file}` is not a whole number of {} values", elem.name()));
        }
        nan = vec![false; bytes.len() / elem.size()];
        elem
    } else {
        let elem =
            Elem::from_name(key).map_or_else(|| err(path, format!("unknown type `{key}`")), Ok)?;
        let Some(list) = value.as_array() else {
            return err(path, format!("`{key}` must be a list"));
        };
        for v in list {
            nan.push(encode(path, elem, v, &mut bytes)?);
        }
        elem
    };
    let wave_width = match table.get("wave_width") {
        Some(v) => Some(
            u32::try_from(int(path, v, "wave_width")?)
                .map_err(|_| format!("{}: bad wave_width", path.display()))?,
        ),
        None => None,
    };
    let ulps = match table.get("ulps") {
        Some(v) => u32::try_from(int(path, v, "ulps")?)
            .map_err(|_| format!("{}: bad ulps", path.display()))?,
        None => 0,
    };
    let within = match table.get("within") {
        Some(v) => match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
            Some(x) if x >= 0.0 && x.is_finite() => x,
            _ => return err(path, "`within` must be a finite number, zero or more"),
        },
        None => 0.0,
    };
    if within > 0.0 && !matches!(elem, Elem::F32 | Elem::F16) {
        return err(path, "`within` applies to f32 and f16 values only");
    }
    Ok(Block { offset, elem, bytes, wave_width, ulps, within, nan })
}

/// The module of the `.wbin` at `at` (either toolchain's), its parameters named by the case's
/// `params` (`["a: ptr", "n: u32"]`, for r0, r1, ...) where the file records none.
fn wbin_module(
    path: &Path,
    at: &Path,
    params: Option<&Value>,
) -> Result<wave_wbin::Module, String> {
    let bytes = read_file(at)
        .map_err(|e| format!("{}: cannot read `{}`: {e}", path.display(), at.display()))?;
    let (mut module, _) = wave_wbin::read_any(&bytes)
        .map_err(|e| format!("{}: {}: {e}", path.display(), at.display()))?;
    let Some(params) = params else { return Ok(module) };
    let Some(list) = params.as_array() else {
        return err(path, "`params` must be a list like [\"a: ptr\", \"n: u32\"]");
    };
    let mut named = Vec::new();
    for p in list {
        let param = wave_wbin::Param::parse(p.as_str().unwrap_or(""))
            .map_err(|e| format!("{}: `params`: {e}", path.display()))?;
        named.push(param);
    }
    wave_wbin::name_params(&mut module, &named)
        .map_err(|e| format!("{}: `params`: {e}", path.display()))?;
    Ok(module)
}

impl Case {
    /// Reads a case file.
    pub fn load(path: &Path) -> Result<Case, String> {
        let text = read_text_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Case::parse(path, &text)
    }

    /// Parses the text of a case file.
    pub fn parse(path: &Path, text: &str) -> Result<Case, String> {
        let table: Table =
            text.parse().map_err(|e| format!("{}: invalid TOML: {e}", path.display()))?;
        check_keys(
            path,
            &table,
            "the case",
            &[
                "name",
                "spec",
                "wave_widths",
                "source",
                "file",
                "params",
                "kernel",
                "dispatch",
                "args",
                "memory",
                "expect",
                "expect_error",
                "expect_trap",
                "opt",
                "max_steps",
            ],
        )?;
        let name = match table.get("name").and_then(Value::as_str) {
            Some(n) => n.to_owned(),
            None => return err(path, "a case needs a `name`"),
        };
        let spec = match table.get("spec") {
            Some(Value::Array(list)) => {
                list.iter().filter_map(Value::as_str).map(str::to_owned).collect()
            }
            Some(_) => return err(path, "`spec` must be a list of section numbers"),
            None => Vec::new(),
        };
        let wave_widths = match table.get("wave_widths") {
            Some(Value::Array(list)) => {
                let mut out = Vec::new();
                for v in list {
                    let w = int(path, v, "wave_widths")?;
                    match u32::try_from(w) {
                        Ok(w) if wave_emulator::WAVE_WIDTHS.contains(&w) => out.push(w),
                        _ => {
                            return err(
                                path,
                                format!("wave width {w} is not one of 4, 8, 16, 32, 64"),
                            );
                        }
                    }
                }
                out
            }
            Some(_) => return err(path, "`wave_widths` must be a list"),
            None => vec![8, 16, 32, 64],
        };
        let mut kernel_source: Option<KernelSource> = None;
        let (mut source, source_name) = match (table.get("source"), table.get("file")) {
            (Some(Value::String(s)), None) => (s.clone(), format!("{}", path.display())),
            (None, Some(Value::String(f))) => {
                let at = path.parent().unwrap_or(Path::new(".")).join(f);
                let ext = at.extension().and_then(|e| e.to_str()).unwrap_or("");
                let language = wave_kernel::Language::from_extension(ext);
                if ext.eq_ignore_ascii_case("wbin") {
                    // A binary, this toolchain's or the reference toolchain's: its canonical
                    // assembly is the source (it assembles to the same instructions).
                    let module = wbin_module(path, &at, table.get("params"))?;
                    (wave_asm::disassemble(&module), at.display().to_string())
                } else {
                    if !ext.eq_ignore_ascii_case("wave") && language.is_none() {
                        return err(
                            path,
                            format!(
                                "`{f}` is neither a .wave file, a .wbin nor a kernel source (.py, .rs, .cpp, .ts)"
                            ),
                        );
                    }
                    let text = read_text_file(&at).map_err(|e| {
                        format!("{}: cannot read `{}`: {e}", path.display(), at.display())
                    })?;
                    if let Some(language) = language {
                        let level = match table.get("opt") {
                            None => wave_kernel::opt::Level::O2,
                            Some(v) => {
                                let n = int(path, v, "opt")?;
                                wave_kernel::opt::Level::from_digit(&n.to_string()).ok_or_else(
                                    || format!("{}: `opt` is 0, 1, 2 or 3", path.display()),
                                )?
                            }
                        };
                        kernel_source = Some(KernelSource {
                            path: at.clone(),
                            text: text.clone(),
                            language,
                            level,
                            diagnostics: Vec::new(),
                        });
                    }
                    (text, at.display().to_string())
                }
            }
            _ => return err(path, "a case needs exactly one of `source` and `file`"),
        };
        let binary = matches!(table.get("file"), Some(Value::String(f)) if f.to_ascii_lowercase().ends_with(".wbin"));
        if table.get("params").is_some() && !binary {
            return err(
                path,
                "`params` names the parameters of a `.wbin` file; a source declares its own",
            );
        }
        let kernel = table.get("kernel").and_then(Value::as_str).map(str::to_owned);
        let (mut grid, mut workgroup, mut device_memory) = ([1, 1, 1], None, DEFAULT_DEVICE_MEMORY);
        if let Some(d) = table.get("dispatch") {
            let Some(d) = d.as_table() else { return err(path, "`dispatch` must be a table") };
            check_keys(path, d, "[dispatch]", &["grid", "workgroup", "device_memory"])?;
            if let Some(g) = d.get("grid") {
                grid = dims(path, g, "grid")?;
            }
            if let Some(w) = d.get("workgroup") {
                workgroup = Some(dims(path, w, "workgroup")?);
            }
            if let Some(m) = d.get("device_memory") {
                device_memory = usize::try_from(int(path, m, "device_memory")?)
                    .ok()
                    .filter(|m| *m <= MAX_DEVICE_MEMORY)
                    .map_or_else(
                        || {
                            err(
                                path,
                                format!("device_memory must be 0 to {MAX_DEVICE_MEMORY} bytes"),
                            )
                        },
                        Ok,
                    )?;
            }
        }
        let mut args = Vec::new();
        if let Some(a) = table.get("args") {
            let Some(a) = a.as_table() else { return err(path, "`args` must be a table") };
            for (k, v) in a {
                let bits = match v {
                    Value::Integer(i) if (i64::from(i32::MIN)..=0xFFFF_FFFF).contains(i) => {
                        *i as u32
                    }
                    Value::Float(f) => (*f as f32).to_bits(),
                    _ => {
                        return err(
                            path,
                            format!("argument `{k}` must be a 32-bit integer or a float"),
                        );
                    }
                };
                args.push((k.clone(), bits));
            }
        }
        let mut memory = Vec::new();
        if let Some(m) = table.get("memory") {
            let Some(list) = m.as_array() else {
                return err(path, "`memory` must be [[memory]] blocks");
            };
            for b in list {
                let Some(t) = b.as_table() else {
                    return err(path, "`memory` must be [[memory]] blocks");
                };
                memory.push(block(path, t, false)?);
            }
        }
        let expect =
            match (table.get("expect"), table.get("expect_error"), table.get("expect_trap")) {
                (Some(Value::Array(list)), None, None) => {
                    let mut blocks = Vec::new();
                    for b in list {
                        let Some(t) = b.as_table() else {
                            return err(path, "`expect` must be [[expect]] blocks");
                        };
                        blocks.push(block(path, t, true)?);
                    }
                    Expectation::Memory(blocks)
                }
                (None, Some(Value::String(code)), None) => Expectation::Error(code.clone()),
                (None, None, Some(Value::String(text))) => Expectation::Trap(text.clone()),
                (None, None, None) => {
                    return err(
                        path,
                        "a case needs [[expect]] blocks, `expect_error` or `expect_trap`",
                    );
                }
                _ => {
                    return err(
                        path,
                        "give only one of [[expect]], `expect_error` and `expect_trap`",
                    );
                }
            };
        for b in memory.iter().chain(match &expect {
            Expectation::Memory(b) => b.as_slice(),
            _ => &[],
        }) {
            if b.offset.checked_add(b.bytes.len()).is_none_or(|end| end > device_memory) {
                return err(
                    path,
                    format!(
                        "a block at offset {} with {} bytes lies outside the {device_memory}-byte device memory",
                        b.offset,
                        b.bytes.len()
                    ),
                );
            }
        }
        let max_steps = match table.get("max_steps") {
            Some(v) => u64::try_from(int(path, v, "max_steps")?)
                .map_err(|_| format!("{}: bad max_steps", path.display()))?,
            None => DEFAULT_MAX_STEPS,
        };
        if let Some(k) = &mut kernel_source {
            source = compile_kernel(k);
        }
        Ok(Case {
            path: path.to_owned(),
            name,
            spec,
            wave_widths,
            source,
            source_name,
            kernel,
            grid,
            workgroup,
            device_memory,
            args,
            memory,
            expect,
            max_steps,
            kernel_source,
            threads: 0,
        })
    }

    /// The same case compiled from its kernel source at another optimisation level (a case
    /// of assembly is returned as it is).
    pub fn at_level(&self, level: wave_kernel::opt::Level) -> Case {
        let mut case = self.clone();
        if let Some(k) = &mut case.kernel_source {
            k.level = level;
            case.source = compile_kernel(k);
        }
        case
    }

    /// The dispatch at width `w`.
    pub fn dispatch(&self, w: u32) -> wave_emulator::Dispatch {
        wave_emulator::Dispatch {
            kernel: self.kernel.clone(),
            grid: self.grid,
            workgroup: self.workgroup,
            wave_width: w,
            args: self.args.clone(),
            max_steps: self.max_steps,
            trace: false,
            interrupt: None,
            progress: None,
            threads: self.threads,
        }
    }

    /// Device memory initialised from the `[[memory]]` blocks.
    pub fn initial_memory(&self) -> Vec<u8> {
        let mut device = vec![0u8; self.device_memory];
        for b in &self.memory {
            device[b.offset..b.offset + b.bytes.len()].copy_from_slice(&b.bytes);
        }
        device
    }

    /// Runs the case at every width; `Ok` or the first failure, as one line.
    pub fn run(&self) -> Result<(), String> {
        let assembly = wave_asm::assemble(&self.source, &self.source_name);
        let compiled = self.kernel_source.as_ref().map(|k| &k.diagnostics);
        let errors: Vec<&wave_diag::Diagnostic> =
            compiled.unwrap_or(&assembly.diagnostics).iter().filter(|d| d.is_error()).collect();
        if let Expectation::Error(code) = &self.expect {
            return if errors.iter().any(|d| d.code == code) {
                Ok(())
            } else {
                let got: Vec<&str> = errors.iter().map(|d| d.code).collect();
                Err(format!(
                    "expected diagnostic {code}, got {}",
                    if got.is_empty() { "none".into() } else { got.join(", ") }
                ))
            };
        }
        if let Some(first) = errors.first() {
            let verb = if compiled.is_some() { "compile" } else { "assemble" };
            return Err(format!("does not {verb}: {}[{}] {}", "error", first.code, first.message));
        }
        for &w in &self.wave_widths {
            let mut device = self.initial_memory();
            let result = wave_emulator::run(&assembly.module, &self.dispatch(w), &mut device);
            match (&self.expect, result) {
                (Expectation::Trap(text), Err(trap)) => {
                    if !trap.to_string().contains(text.as_str()) {
                        return Err(format!(
                            "W={w}: expected a trap containing `{text}`, got: {trap}"
                        ));
                    }
                }
                (Expectation::Trap(text), Ok(_)) => {
                    return Err(format!(
                        "W={w}: expected a trap containing `{text}`, but the run finished"
                    ));
                }
                (Expectation::Memory(_), Err(trap)) => return Err(format!("W={w}: trap: {trap}")),
                (Expectation::Memory(blocks), Ok(_)) => {
                    for b in blocks.iter().filter(|b| b.wave_width.is_none_or(|bw| bw == w)) {
                        compare(b, &device).map_err(|e| format!("W={w}: {e}"))?;
                    }
                }
                (Expectation::Error(_), _) => {}
            }
        }
        Ok(())
    }
}

impl Case {
    /// Runs the case at every width on one thread and on each of `threads`, with the trace
    /// on, and checks that every run gives the one-thread run's memory, trap, statistics,
    /// trace and notes, bit for bit; `Err` names the first difference. (Whether the
    /// one-thread run meets the expectation is [`Case::run`]'s business.)
    pub fn same_at_thread_counts(&self, threads: &[u32]) -> Result<(), String> {
        if matches!(self.expect, Expectation::Error(_)) {
            return Ok(());
        }
        let assembly = wave_asm::assemble(&self.source, &self.source_name);
        if assembly.has_errors() {
            return Ok(());
        }
        for &w in &self.wave_widths {
            let at = |threads: u32| {
                let mut device = self.initial_memory();
                let dispatch = wave_emulator::Dispatch { trace: true, threads, ..self.dispatch(w) };
                let result = wave_emulator::run(&assembly.module, &dispatch, &mut device);
                (device, result)
            };
            let (device, result) = at(1);
            for &n in threads {
                let (d, r) = at(n);
                let what = match (&result, &r) {
                    _ if d != device => Some("memory"),
                    (Err(a), Err(b)) if a != b => Some("trap"),
                    (Ok(a), Ok(b)) if a.stats != b.stats => Some("statistics"),
                    (Ok(a), Ok(b))
                        if a.trace != b.trace || a.trace_truncated != b.trace_truncated =>
                    {
                        Some("trace")
                    }
                    (Ok(a), Ok(b)) if a.warnings != b.warnings => Some("notes"),
                    (Ok(_), Err(_)) | (Err(_), Ok(_)) => Some("outcome"),
                    _ => None,
                };
                if let Some(what) = what {
                    return Err(format!(
                        "W={w}: the {what} at {n} threads differs from one thread's"
                    ));
                }
            }
        }
        Ok(())
    }
}

fn ulp_distance(a: i64, b: i64) -> u64 {
    a.abs_diff(b)
}

/// Orders float bit patterns so that adjacent floats are adjacent integers.
fn ordered(bits: u64, size: usize) -> i64 {
    let sign = 1u64 << (size * 8 - 1);
    if bits & sign != 0 { -((bits & !sign) as i64) } else { bits as i64 }
}

/// Checks one `[[expect]]` block against device memory: `Err` names the first difference.
pub fn compare(b: &Block, device: &[u8]) -> Result<(), String> {
    let size = b.elem.size();
    for (i, want) in b.bytes.chunks(size).enumerate() {
        let at = b.offset + i * size;
        let got = &device[at..at + size];
        let same = match b.elem {
            Elem::F32 | Elem::F16 => {
                let read = |x: &[u8]| {
                    let mut raw = [0u8; 8];
                    raw[..size].copy_from_slice(x);
                    u64::from_le_bytes(raw)
                };
                let (gw, gg) = (read(want), read(got));
                let got_nan = if size == 4 {
                    f32::from_bits(gg as u32).is_nan()
                } else {
                    half::f16::from_bits(gg as u16).is_nan()
                };
                if b.nan.get(i).copied().unwrap_or(false) {
                    got_nan
                } else {
                    let value = |bits: u64| {
                        if size == 4 {
                            f64::from(f32::from_bits(bits as u32))
                        } else {
                            half::f16::from_bits(bits as u16).to_f64()
                        }
                    };
                    !got_nan
                        && (ulp_distance(ordered(gw, size), ordered(gg, size)) <= u64::from(b.ulps)
                            || (value(gw) - value(gg)).abs() <= b.within)
                }
            }
            _ => want == got,
        };
        if !same {
            let mut line = format!(
                "first difference at offset {at} (0x{at:x}, {}[{i}] of the block at {}): expected {}, got {}",
                b.elem.name(),
                b.offset,
                b.elem.show(want),
                b.elem.show(got)
            );
            if b.ulps > 0 {
                let _ = write!(line, " (allowed {} ULP)", b.ulps);
            }
            if b.within > 0.0 {
                let _ = write!(line, " (allowed a difference of {})", b.within);
            }
            return Err(line);
        }
    }
    Ok(())
}

/// The outcome of running many cases.
#[derive(Debug, Default)]
pub struct Summary {
    /// Cases that passed.
    pub passed: usize,
    /// One line per failure: file and what went wrong.
    pub failures: Vec<String>,
}

/// Collects `*.toml` files under `paths` (files or folders, recursively), sorted.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut stack = vec![p.clone()];
            while let Some(dir) = stack.pop() {
                let entries =
                    std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                for entry in entries {
                    let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
                    let path = entry.path();
                    let name = entry.file_name();
                    // A crate's manifest and build output are not cases.
                    if path.is_dir() {
                        if name != "target" {
                            stack.push(path);
                        }
                    } else if path.extension().is_some_and(|e| e == "toml") && name != "Cargo.toml"
                    {
                        out.push(path);
                    }
                }
            }
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: no such file or folder", p.display()));
        }
    }
    out.sort();
    Ok(out)
}

/// Runs every case under `paths`.
pub fn run_paths(paths: &[PathBuf]) -> Result<Summary, String> {
    let mut summary = Summary::default();
    for path in collect(paths)? {
        match Case::load(&path).and_then(|case| case.run()) {
            Ok(()) => summary.passed += 1,
            Err(e) => summary.failures.push(if e.starts_with(&path.display().to_string()) {
                e
            } else {
                format!("{}: {e}", path.display())
            }),
        }
    }
    Ok(summary)
}

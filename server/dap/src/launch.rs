//! The launch configuration: what to debug and with which dispatch.
//!
//! `program` is a `.wave` file, a kernel source (`.py`, `.rs`, `.cpp`, `.ts`: compiled at
//! `-O0` unless `opt` says another level, so that every line has its code and every variable
//! its register), a `.wbin`, or a case `.toml`. The other keys say the same as
//! in the case format (`spec/testcase.md`) and override a case file's values: `kernel`, `grid`,
//! `workgroup`, `waveWidth`, `args` (by parameter name), `memory` (a list of `{offset, u32:
//! [...]}` blocks), `deviceMemory`; plus `targetProfile`, `stopOnEntry` and `maxSteps`. The
//! configuration is turned into a case document and read by the case reader, so its checks
//! and messages are the same as `wave test`'s.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use toml::Value as Toml;

/// A program ready to debug.
pub struct Program {
    /// The module.
    pub module: wave_wbin::Module,
    /// The dispatch.
    pub dispatch: wave_emulator::Dispatch,
    /// Device memory before the run.
    pub device: Vec<u8>,
    /// The source file shown to the user, if there is one.
    pub source: Option<PathBuf>,
    /// Added to a line of the module's line table to get the line in `source` (a case file's
    /// inline source starts some lines into the case file).
    pub line_offset: u32,
    /// Stop before the first instruction.
    pub stop_on_entry: bool,
    /// Warnings to show in the debug console.
    pub warnings: Vec<String>,
    /// Compiled from a kernel source: lines are the source's, and variables have names.
    pub from_kernel_source: bool,
}

/// The JSON type of a launch setting, as the editor's schema states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    String,
    /// A number.
    Number,
    /// A number from a fixed list.
    NumberOf(&'static [u32]),
    /// `true` or `false`.
    Boolean,
    /// A list of numbers (`[x, y, z]`).
    Numbers,
    /// A list of objects.
    List,
    /// An object.
    Object,
}

/// One key of the launch configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The key.
    pub key: &'static str,
    /// Its type.
    pub kind: Kind,
    /// What it does, for the editor's completion and hover.
    pub description: &'static str,
    /// The editor's default, as JSON text.
    pub default: Option<&'static str>,
    /// The configuration must give it.
    pub required: bool,
}

/// The launch configuration's schema: the one list of keys the adapter reads, the code lens
/// writes ([`Launch::to_json`]) and `cargo xtask codegen` puts into the VS Code extension's
/// `package.json`.
pub const SETTINGS: &[Setting] = &[
    Setting {
        key: "program",
        kind: Kind::String,
        description: "A .wave file, a kernel source (.py, .rs, .cpp, .ts), a .wbin or a case .toml.",
        default: Some("\"${file}\""),
        required: true,
    },
    Setting {
        key: "kernel",
        kind: Kind::String,
        description: "The kernel, when the program has several.",
        default: None,
        required: false,
    },
    Setting {
        key: "opt",
        kind: Kind::NumberOf(&[0, 1, 2, 3]),
        description: "Optimisation level for a kernel source (0 by default, so every line has its code and every variable its register).",
        default: None,
        required: false,
    },
    Setting {
        key: "grid",
        kind: Kind::Numbers,
        description: "Workgroups [x, y, z].",
        default: None,
        required: false,
    },
    Setting {
        key: "workgroup",
        kind: Kind::Numbers,
        description: "Threads per workgroup [x, y, z].",
        default: None,
        required: false,
    },
    Setting {
        key: "waveWidth",
        kind: Kind::NumberOf(&[8, 16, 32, 64]),
        description: "W.",
        default: None,
        required: false,
    },
    Setting {
        key: "targetProfile",
        kind: Kind::String,
        description: "A target profile (`wave info --list-targets`).",
        default: None,
        required: false,
    },
    Setting {
        key: "args",
        kind: Kind::Object,
        description: "Kernel arguments by parameter name.",
        default: None,
        required: false,
    },
    Setting {
        key: "memory",
        kind: Kind::List,
        description: "Device memory blocks, as in case files: [{\"offset\": 0, \"u32\": [1, 2]}].",
        default: None,
        required: false,
    },
    Setting {
        key: "deviceMemory",
        kind: Kind::Number,
        description: "Bytes of device memory.",
        default: None,
        required: false,
    },
    Setting {
        key: "stopOnEntry",
        kind: Kind::Boolean,
        description: "Stop before the first instruction.",
        default: Some("true"),
        required: false,
    },
    Setting {
        key: "maxSteps",
        kind: Kind::Number,
        description: "The instruction budget.",
        default: None,
        required: false,
    },
];

/// Keys that clients set, which the adapter accepts and does not read (besides `cwd`).
const CLIENT_KEYS: [&str; 5] = ["type", "request", "name", "cwd", "noDebug"];

/// A launch configuration to write: what the "Debug" code lens hands the editor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Launch {
    /// The configuration's name in the editor.
    pub name: String,
    /// `program`.
    pub program: String,
    /// `kernel`.
    pub kernel: String,
    /// `grid`.
    pub grid: [u32; 3],
    /// `workgroup`, when the dispatch gives one.
    pub workgroup: Option<[u32; 3]>,
    /// `waveWidth`.
    pub wave_width: u32,
    /// `args`, by parameter name.
    pub args: Vec<(String, u64)>,
    /// `stopOnEntry`.
    pub stop_on_entry: bool,
}

impl Launch {
    /// The configuration as the adapter reads it (keys from [`SETTINGS`]).
    pub fn to_json(&self) -> Json {
        let mut o = serde_json::Map::new();
        o.insert("type".into(), "wave".into());
        o.insert("request".into(), "launch".into());
        o.insert("name".into(), self.name.clone().into());
        let args: serde_json::Map<String, Json> =
            self.args.iter().map(|(k, v)| (k.clone(), Json::from(*v))).collect();
        for s in SETTINGS {
            let v = match s.key {
                "program" => Json::from(self.program.clone()),
                "kernel" => Json::from(self.kernel.clone()),
                "grid" => Json::from(self.grid.to_vec()),
                "workgroup" => match self.workgroup {
                    Some(w) => Json::from(w.to_vec()),
                    None => continue,
                },
                "waveWidth" => Json::from(self.wave_width),
                "args" => Json::Object(args.clone()),
                "stopOnEntry" => Json::from(self.stop_on_entry),
                _ => continue,
            };
            o.insert(s.key.into(), v);
        }
        Json::Object(o)
    }
}

fn to_toml(v: &Json, at: &str) -> Result<Toml, String> {
    Ok(match v {
        Json::Bool(b) => Toml::Boolean(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Toml::Integer(i),
            None => Toml::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Toml::String(s.clone()),
        Json::Array(a) => {
            Toml::Array(a.iter().map(|x| to_toml(x, at)).collect::<Result<Vec<_>, _>>()?)
        }
        Json::Object(o) => {
            let mut t = toml::Table::new();
            for (k, x) in o {
                t.insert(k.clone(), to_toml(x, &format!("{at}.{k}"))?);
            }
            Toml::Table(t)
        }
        Json::Null => return Err(format!("`{at}` is null")),
    })
}

/// `[x, y, z]`, `[x]` or a number.
fn dims(v: &Json, key: &str) -> Result<Toml, String> {
    let list: Vec<Json> = match v {
        Json::Number(_) => vec![v.clone(), Json::from(1), Json::from(1)],
        Json::Array(a) if (1..=3).contains(&a.len()) => {
            let mut a = a.clone();
            a.resize(3, Json::from(1));
            a
        }
        _ => {
            return Err(format!(
                "`{key}` must be a number or a list of 1 to 3 numbers, like [4, 1, 1]"
            ));
        }
    };
    to_toml(&Json::Array(list), key)
}

/// Reads the launch arguments of a `launch` request.
pub fn load(args: &Json) -> Result<Program, String> {
    let Some(obj) = args.as_object() else {
        return Err("the launch arguments must be an object".into());
    };
    let mut warnings = Vec::new();
    for key in obj.keys() {
        let known = SETTINGS.iter().any(|s| s.key == key) || CLIENT_KEYS.contains(&key.as_str());
        if !known && !key.starts_with("__") {
            warnings.push(format!(
                "launch configuration: `{key}` is not a setting of the WAVE debugger and is ignored"
            ));
        }
    }
    let program = obj
        .get("program")
        .and_then(Json::as_str)
        .filter(|p| !p.is_empty())
        .ok_or("the launch configuration needs `program`: a .wave file, a kernel source (.py, .rs, .cpp, .ts), a .wbin or a case .toml file")?;
    let mut path = PathBuf::from(program);
    if path.is_relative()
        && let Some(cwd) = obj.get("cwd").and_then(Json::as_str)
    {
        path = Path::new(cwd).join(path);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let bool_of = |k: &str| -> Result<bool, String> {
        match obj.get(k) {
            None => Ok(false),
            Some(Json::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("`{k}` must be true or false")),
        }
    };
    let stop_on_entry = bool_of("stopOnEntry")?;

    // The case document: the case file itself, or one made for the program.
    let mut table = match ext.as_str() {
        "toml" => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
            text.parse::<toml::Table>()
                .map_err(|e| format!("{}: invalid TOML: {e}", path.display()))?
        }
        "wave" | "wbin" => {
            if !path.is_file() {
                return Err(format!("`{}` does not exist", path.display()));
            }
            let mut t = toml::Table::new();
            t.insert("name".into(), Toml::String(format!("debug {}", path.display())));
            t.insert("expect".into(), Toml::Array(Vec::new()));
            if ext == "wave" {
                let name =
                    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                t.insert("file".into(), Toml::String(name));
            } else {
                t.insert("source".into(), Toml::String(String::new()));
            }
            t
        }
        e if wave_kernel::Language::from_extension(e).is_some() => {
            if !path.is_file() {
                return Err(format!("`{}` does not exist", path.display()));
            }
            let mut t = toml::Table::new();
            t.insert("name".into(), Toml::String(format!("debug {}", path.display())));
            t.insert("expect".into(), Toml::Array(Vec::new()));
            let name =
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            t.insert("file".into(), Toml::String(name));
            t
        }
        _ => {
            return Err(format!(
                "`{}` is not a .wave file, a kernel source (.py, .rs, .cpp, .ts), a .wbin or a case .toml file",
                path.display()
            ));
        }
    };
    // Overrides from the launch configuration.
    if let Some(k) = obj.get("kernel") {
        let k = k.as_str().ok_or("`kernel` must be a string")?;
        table.insert("kernel".into(), Toml::String(k.into()));
    }
    let mut dispatch = match table.remove("dispatch") {
        Some(Toml::Table(t)) => t,
        Some(_) => return Err("`dispatch` of the case must be a table".into()),
        None => toml::Table::new(),
    };
    if let Some(g) = obj.get("grid") {
        dispatch.insert("grid".into(), dims(g, "grid")?);
    }
    if let Some(w) = obj.get("workgroup") {
        dispatch.insert("workgroup".into(), dims(w, "workgroup")?);
    }
    if let Some(m) = obj.get("deviceMemory") {
        let m = m
            .as_i64()
            .filter(|m| *m > 0)
            .ok_or("`deviceMemory` must be a positive number of bytes")?;
        dispatch.insert("device_memory".into(), Toml::Integer(m));
    }
    if !dispatch.is_empty() {
        table.insert("dispatch".into(), Toml::Table(dispatch));
    }
    let profile = match obj.get("targetProfile") {
        Some(p) => {
            let name = p.as_str().ok_or("`targetProfile` must be a string")?;
            Some(wave_isa::target::profile(name).ok_or_else(|| {
                let names: Vec<&str> = wave_isa::target::PROFILES.iter().map(|p| p.name).collect();
                format!("unknown `targetProfile` `{name}` (one of {})", names.join(", "))
            })?)
        }
        None => None,
    };
    let width = match obj.get("waveWidth") {
        Some(w) => Some(w.as_i64().ok_or("`waveWidth` must be a number: 8, 16, 32 or 64")?),
        None => profile.map(|p| i64::from(p.constants.wave_width)),
    };
    // W: the configuration's, the profile's, a case file's first, or 32.
    match width {
        Some(w) => {
            table.insert("wave_widths".into(), Toml::Array(vec![Toml::Integer(w)]));
        }
        None if ext != "toml" => {
            table.insert("wave_widths".into(), Toml::Array(vec![Toml::Integer(32)]));
        }
        None => {}
    }
    if let Some(a) = obj.get("args") {
        if !a.is_object() {
            return Err(
                "`args` must be an object of parameter names to values, like {\"out\": 1024}"
                    .into(),
            );
        }
        let mut merged = match table.remove("args") {
            Some(Toml::Table(t)) => t,
            _ => toml::Table::new(),
        };
        if let Toml::Table(t) = to_toml(a, "args")? {
            merged.extend(t);
        }
        table.insert("args".into(), Toml::Table(merged));
    }
    if let Some(m) = obj.get("memory") {
        if !m.is_array() {
            return Err(
                "`memory` must be a list of blocks, like [{\"offset\": 0, \"u32\": [1, 2]}]".into(),
            );
        }
        table.insert("memory".into(), to_toml(m, "memory")?);
    }
    // A case made for a launch expects nothing; a case file keeps its expectations.
    let case_path = if ext == "toml" { path.clone() } else { path.with_file_name("launch.toml") };
    let case = wave_conformance::Case::parse(
        &case_path,
        &toml::to_string(&table).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.replace(&format!("{}: ", case_path.display()), ""))?;
    let level = match obj.get("opt") {
        None => wave_kernel::opt::Level::O0,
        Some(o) => o
            .as_u64()
            .and_then(|o| wave_kernel::opt::Level::from_digit(&o.to_string()))
            .ok_or("`opt` must be 0, 1, 2 or 3 (the level a kernel source is compiled at)")?,
    };
    let from_kernel_source = case.kernel_source.is_some();
    let mut chosen_kernel = case.kernel.clone();
    let (module, source, line_offset) = if ext == "wbin" {
        let bytes =
            std::fs::read(&path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let (module, _) =
            wave_wbin::read_any(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        let source = module.files.first().map(PathBuf::from).filter(|p| p.is_file());
        (module, source, 0)
    } else {
        // The program through the editor's own queries (`wave_db`): a kernel source one unit
        // at a time, with its line table and variables naming the source; assembly one kernel
        // at a time, so that a mistake in another kernel of the file does not stop debugging
        // this one. What is debugged is what the editor runs and diagnoses.
        let (name, text) = match &case.kernel_source {
            Some(k) => (k.path.display().to_string(), k.text.clone()),
            None => (case.source_name.clone(), case.source.clone()),
        };
        let db = wave_db::Database::default();
        let file = wave_db::SourceFile::new(&db, name, text, 0);
        let kernel = match &case.kernel {
            Some(k) => k.clone(),
            None => match wave_db::kernel_names(&db, file).as_slice() {
                [one] => one.clone(),
                [] => return Err("the program has no kernel".into()),
                names => {
                    return Err(format!(
                        "the program has several kernels ({}): say which with `kernel`",
                        names.join(", ")
                    ));
                }
            },
        };
        let run = wave_db::run_module(&db, file, &kernel, level)?;
        chosen_kernel = Some(kernel);
        match &case.kernel_source {
            // The line table names the source's lines.
            Some(k) => (run.module, Some(k.path.clone()), 0),
            None => {
                let (source, offset) = if ext == "toml" && table.contains_key("source") {
                    // Inline source: lines count from the line after `source = """`.
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let at = text
                        .lines()
                        .position(|l| l.trim_start().starts_with("source"))
                        .unwrap_or(0);
                    (path.clone(), at as u32 + 1)
                } else {
                    (PathBuf::from(&case.source_name), 0)
                };
                (run.module, Some(source), offset + run.first_line - 1)
            }
        }
    };
    let w = case.wave_widths.first().copied().unwrap_or(32);
    let mut dispatch = case.dispatch(w);
    dispatch.kernel = chosen_kernel;
    // A kernel without `.workgroup_size`, dispatched without one: one wave.
    let chosen = match &dispatch.kernel {
        Some(k) => module.kernels.iter().find(|x| &x.name == k),
        None => module.kernels.first(),
    };
    if dispatch.workgroup.is_none() && chosen.is_some_and(|k| k.workgroup_size.is_none()) {
        dispatch.workgroup = Some([w, 1, 1]);
    }
    if let Some(m) = obj.get("maxSteps") {
        dispatch.max_steps =
            m.as_u64().filter(|m| *m > 0).ok_or("`maxSteps` must be a positive number")?;
    }
    if let Some(p) = profile
        && u32::try_from(width.unwrap_or(0)).ok() != Some(p.constants.wave_width)
    {
        warnings.push(format!(
            "`targetProfile` {} has W = {}, but the session runs at W = {w}",
            p.name, p.constants.wave_width
        ));
    }
    let names: Vec<&str> = module.kernels.iter().map(|k| k.name.as_str()).collect();
    match &dispatch.kernel {
        Some(k) if !names.contains(&k.as_str()) => {
            return Err(format!("no kernel `{k}` in the program (it has {})", names.join(", ")));
        }
        None if names.len() > 1 => {
            return Err(format!(
                "the program has several kernels ({}): say which with `kernel`",
                names.join(", ")
            ));
        }
        None if names.is_empty() => return Err("the program has no kernel".into()),
        _ => {}
    }
    Ok(Program {
        module,
        device: case.initial_memory(),
        dispatch,
        source,
        line_offset,
        stop_on_entry,
        warnings,
        from_kernel_source,
    })
}

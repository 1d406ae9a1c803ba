//! `cargo xtask gpu-bundle DIR [--sm N]`: everything the GPU runner (`backends/gpu/`) needs to
//! run the conformance suite through the PTX backend on a machine with no Rust: each case's
//! PTX, dispatch, arguments, initial memory and expected memory at W = 32, in `DIR/cases.json`
//! and `DIR/ptx/`, plus the benchmark kernels' PTX in `DIR/bench/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use wave_conformance::{Block, Case, Expectation};

pub(crate) fn bundle(args: &[String]) -> Result<(), String> {
    let mut dir = None;
    let mut sm = 90;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sm" => {
                sm = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--sm needs a number such as 90")?
            }
            other if dir.is_none() => dir = Some(PathBuf::from(other)),
            other => return Err(format!("unexpected argument `{other}`")),
        }
    }
    let dir = dir.ok_or("usage: cargo xtask gpu-bundle DIR [--sm N]")?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::create_dir_all(dir.join("ptx")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join("bench")).map_err(|e| e.to_string())?;
    let mut options = wave_backends::ptx::Options { sm, ..Default::default() };
    let paths = wave_conformance::collect(&[root.join("conformance/cases")])?;
    let mut json = String::from("[\n");
    let (mut run, mut skipped) = (0, 0);
    for (n, path) in paths.iter().enumerate() {
        let case = Case::load(path)?;
        let rel = path.strip_prefix(&root).unwrap_or(path).display().to_string();
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut entry = format!("  {{\"name\": {}, \"path\": {}", quote(&name), quote(&rel));
        match entry_body(&case, &name, &dir, &mut options) {
            Ok(body) => {
                run += 1;
                entry.push_str(&format!(", \"status\": \"run\"{body}"));
            }
            Err(reason) => {
                skipped += 1;
                entry.push_str(&format!(", \"status\": \"skip\", \"reason\": {}", quote(&reason)));
            }
        }
        entry.push('}');
        if n + 1 < paths.len() {
            entry.push(',');
        }
        json.push_str(&entry);
        json.push('\n');
    }
    json.push_str("]\n");
    std::fs::write(dir.join("cases.json"), json).map_err(|e| e.to_string())?;
    // The benchmark kernels, when they exist.
    let bench = root.join("backends/gpu/bench");
    let mut benches = 0;
    if let Ok(entries) = std::fs::read_dir(&bench) {
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "wave")) {
            let text = std::fs::read_to_string(f).map_err(|e| e.to_string())?;
            let a = wave_asm::assemble(&text, &f.display().to_string());
            if a.has_errors() {
                return Err(format!("{} does not assemble", f.display()));
            }
            options.kernel = None;
            let t = wave_backends::ptx::write_string(&a.module, &options)
                .map_err(|e| format!("{}: {e}", f.display()))?;
            let out =
                dir.join("bench").join(f.with_extension("ptx").file_name().unwrap_or_default());
            std::fs::write(out, t.text).map_err(|e| e.to_string())?;
            benches += 1;
        }
    }
    println!("{}: {run} cases to run, {skipped} skipped, {benches} benchmark files", dir.display());
    Ok(())
}

/// Cases whose behaviour the spec leaves to the implementation (spec 2.3, 9.2), where the
/// emulator's choice is not NVIDIA's: not run, with the reason in the table.
const IMPLEMENTATION_DEFINED: &[(&str, &str)] = &[
    (
        "unaligned_device_load",
        "unaligned memory access is implementation-defined (spec 9.2): the emulator reads bytes at any address, NVIDIA GPUs fault on a 32-bit or 16-bit access that is not naturally aligned",
    ),
    (
        "local_memory_zero_at_workgroup_start",
        "Local Memory is undefined at workgroup start (spec 2.3): the emulator zeroes it, a GPU's shared memory keeps what an earlier workgroup left",
    ),
];

/// The fields of a case that runs, or why it cannot run on a GPU.
fn entry_body(
    case: &Case,
    name: &str,
    dir: &Path,
    options: &mut wave_backends::ptx::Options,
) -> Result<String, String> {
    if let Some((_, why)) = IMPLEMENTATION_DEFINED.iter().find(|(n, _)| *n == name) {
        return Err((*why).to_string());
    }
    let empty = Vec::new();
    let (blocks, trap) = match &case.expect {
        Expectation::Memory(b) => (b, None),
        Expectation::Error(code) => {
            return Err(format!("expects assembly error {code}: nothing to run"));
        }
        Expectation::Trap(text) => (&empty, Some(text)),
    };
    if !case.wave_widths.contains(&32) {
        return Err("does not run at W = 32".into());
    }
    let assembly = wave_asm::assemble(&case.source, &case.source_name);
    if assembly.has_errors() {
        return Err("does not assemble".into());
    }
    let module = &assembly.module;
    let kernel = match &case.kernel {
        Some(k) => module.kernel(k).map(|(_, k)| k),
        None => module.kernels.first(),
    }
    .ok_or("no kernel")?;
    options.kernel = Some(kernel.name.clone());
    let ptx = wave_backends::ptx::write_string(module, options).map_err(|e| {
        let first = e.problems.iter().find(|p| p.severity == wave_diag::Severity::Error);
        format!(
            "the PTX backend refuses it: {}",
            first.map_or(String::new(), |p| format!("[{}] {}", p.code, p.message))
        )
    })?;
    if let Some(text) = trap {
        // The emulator traps. Where the backend emits a deliberate `trap` too (CAP_MMA, local
        // memory in a kernel without any), the GPU run must fail the same way; other traps
        // (out of bounds, deadlock, divergent barrier, budget) are undefined behaviour on a
        // GPU and are not run.
        if !ptx.text.lines().any(|l| l.trim_start().starts_with("trap;")) {
            return Err(format!(
                "expects the emulator to trap (`{text}`): undefined behaviour on a GPU (spec 9.3), not run"
            ));
        }
    }
    std::fs::write(dir.join("ptx").join(format!("{name}.ptx")), ptx.text)
        .map_err(|e| e.to_string())?;
    let block = case.workgroup.or(kernel.workgroup_size).ok_or("no workgroup size")?;
    let mut s = String::new();
    let _ = write!(
        s,
        ", \"ptx\": \"ptx/{name}.ptx\", \"kernel\": {}, \"grid\": {:?}, \"block\": {:?}",
        quote(&kernel.name),
        case.grid,
        block
    );
    let params: Vec<String> = kernel
        .params
        .iter()
        .map(|p| {
            let value = case.args.iter().find(|(n, _)| *n == p.name).map_or(0, |(_, v)| *v);
            format!(
                "{{\"name\": {}, \"type\": \"{}\", \"value\": {value}}}",
                quote(&p.name),
                p.ty.name()
            )
        })
        .collect();
    let _ = write!(
        s,
        ", \"params\": [{}], \"device_memory\": {}",
        params.join(", "),
        case.device_memory
    );
    let memory: Vec<String> = case
        .memory
        .iter()
        .map(|b| format!("{{\"offset\": {}, \"hex\": \"{}\"}}", b.offset, hex(&b.bytes)))
        .collect();
    let _ = write!(s, ", \"memory\": [{}]", memory.join(", "));
    let expect: Vec<String> =
        blocks.iter().filter(|b| b.wave_width.is_none_or(|w| w == 32)).map(expect_block).collect();
    let _ = write!(s, ", \"expect\": [{}], \"expect_trap\": {}", expect.join(", "), trap.is_some());
    Ok(s)
}

fn expect_block(b: &Block) -> String {
    let nan: Vec<&str> = b.nan.iter().map(|n| if *n { "true" } else { "false" }).collect();
    format!(
        "{{\"offset\": {}, \"elem\": \"{}\", \"hex\": \"{}\", \"ulps\": {}, \"nan\": [{}]}}",
        b.offset,
        b.elem.name(),
        hex(&b.bytes),
        b.ulps,
        nan.join(", ")
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

//! `wave emit --target ptx|hip|sycl|metal FILE`: backend code for a `.wave`, `.wbin` or case
//! `.toml` file, with the backends' diagnostics located in the source when it is at hand.

use std::io::Write;
use std::path::PathBuf;

use wave_backends::{Options, Target};

use crate::report::Reporter;
use crate::{Failure, read_text, read_wbin};

/// Arguments of `wave emit`.
#[derive(clap::Args)]
pub(crate) struct EmitArgs {
    /// A .wave, .wbin or case .toml file.
    file: PathBuf,
    /// The target language.
    #[arg(long, value_parser = ["ptx", "hip", "sycl", "metal"])]
    target: String,
    /// Only this kernel (default: every kernel of the file).
    #[arg(long)]
    kernel: Option<String>,
    /// Write here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// PTX: the `sm_XX` target (75 or later; from 80 on, `wave_reduce` uses `redux.sync`).
    #[arg(long, default_value_t = 75)]
    sm: u32,
    /// SYCL: the required sub-group size, which is the wave width (8, 16 or 32).
    #[arg(long, default_value = "32", value_parser = ["8", "16", "32"])]
    sub_group_size: String,
    /// Also write the source map as JSON (one entry per generated line: the WAVE
    /// instruction's byte offset, or null).
    #[arg(long, value_name = "FILE")]
    source_map: Option<PathBuf>,
}

pub(crate) fn emit(reporter: &Reporter, a: EmitArgs) -> Result<(), Failure> {
    let target = Target::from_name(&a.target)
        .ok_or_else(|| Failure::Usage(format!("unknown target `{}`", a.target)))?;
    if a.sm < 75 {
        return Err(Failure::Usage(format!("--sm {}: the PTX backend needs sm_75 or later", a.sm)));
    }
    // The module, and its source text when there is one (for located diagnostics).
    let ext = a.file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let (module, source) = match ext {
        "wbin" => (read_wbin(&a.file)?, None),
        "toml" => {
            let case = wave_conformance::Case::load(&a.file).map_err(|e| {
                eprintln!("error: {e}");
                Failure::Input
            })?;
            let (module, source) = crate::case_module(reporter, &case)?;
            (module, Some(source))
        }
        "py" => {
            let (module, text) = crate::compile_file(reporter, &a.file)?;
            (module, Some((a.file.display().to_string(), text)))
        }
        _ => {
            let text = read_text(&a.file)?;
            let name = a.file.display().to_string();
            let assembly = wave_asm::assemble(&text, &name);
            reporter.emit(&name, &text, &assembly.diagnostics);
            if assembly.has_errors() {
                return Err(Failure::Input);
            }
            (assembly.module, Some((name, text)))
        }
    };
    let mut options = Options::default();
    options.ptx.sm = a.sm;
    options.ptx.kernel = a.kernel.clone();
    options.hip.kernel = a.kernel.clone();
    options.sycl.kernel = a.kernel.clone();
    options.sycl.sub_group_size = a.sub_group_size.parse().unwrap_or(32);
    options.metal.kernel = a.kernel.clone();
    let report = |problems: &[wave_backends::Problem]| match &source {
        Some((name, text)) => {
            let d: Vec<wave_diag::Diagnostic> =
                problems.iter().map(|p| p.to_diagnostic(&module, text)).collect();
            reporter.emit(name, text, &d);
        }
        None => {
            for p in problems {
                eprintln!("{}: {p}", a.file.display());
            }
        }
    };
    let translation = match wave_backends::write_string(target, &module, &options) {
        Ok(t) => t,
        Err(e) => {
            report(&e.problems);
            return Err(Failure::Input);
        }
    };
    report(&translation.warnings);
    match &a.output {
        Some(path) => std::fs::write(path, &translation.text)
            .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))?,
        None => std::io::stdout().lock().write_all(translation.text.as_bytes())?,
    }
    if let Some(path) = &a.source_map {
        let entries: Vec<String> = translation
            .source_map
            .lines
            .iter()
            .map(|o| o.map_or_else(|| "null".to_string(), |o| o.to_string()))
            .collect();
        let json =
            format!("{{\"target\": \"{}\", \"lines\": [{}]}}\n", target.name(), entries.join(", "));
        std::fs::write(path, json)
            .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", path.display())))?;
    }
    Ok(())
}

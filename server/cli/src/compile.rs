//! `wave compile FILE [-O0..-O3] [--emit hir|mir|lir|asm] [-o OUT]`: a kernel written in
//! Python, Rust, C++ or TypeScript, through the kernel compiler, to a `.wbin` (or one of the
//! intermediate forms).

use std::io::Write;
use std::path::PathBuf;

use crate::report::Reporter;
use crate::{Failure, read_text};

/// Arguments of `wave compile`.
#[derive(clap::Args)]
pub(crate) struct CompileArgs {
    /// A kernel source: .py, .rs, .cpp (.cc, .cxx, .hpp, .h) or .ts.
    file: PathBuf,
    /// What to print instead of writing a .wbin.
    #[arg(long, value_parser = ["hir", "mir", "lir", "asm"])]
    emit: Option<String>,
    /// Optimisation level.
    #[arg(short = 'O', default_value = "2", value_parser = ["0", "1", "2", "3"])]
    opt: String,
    /// Write the result here (with `--emit`, the text form; else the .wbin, by default
    /// next to the source) instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The most registers a kernel may use; beyond it, values spill to Local Memory.
    #[arg(long, default_value_t = 64)]
    max_registers: u32,
    /// Check the MIR after every optimisation pass and the LIR after each step of the back
    /// end; a broken one is an internal error (E0410) naming the pass.
    #[arg(long)]
    verify: bool,
}

pub(crate) fn compile(reporter: &Reporter, a: CompileArgs) -> Result<(), Failure> {
    let ext = a.file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let Some(language) = wave_kernel::Language::from_extension(ext) else {
        return Err(Failure::Usage(format!(
            "`{}`: the kernel compiler reads Python (.py), Rust (.rs), C++ (.cpp, .cc, .cxx, .hpp, .h) and TypeScript (.ts) files",
            a.file.display()
        )));
    };
    let text = read_text(&a.file)?;
    let (kernels, diagnostics) = wave_kernel::hir(&text, language);
    reporter.emit(&a.file.display().to_string(), &text, &diagnostics);
    if wave_diag::has_errors(&diagnostics) {
        return Err(Failure::Input);
    }
    let level = wave_kernel::opt::Level::from_digit(&a.opt)
        .ok_or_else(|| Failure::Usage(format!("-O{}: use -O0 to -O3", a.opt)))?;
    if a.max_registers == 0 || a.max_registers > 256 {
        return Err(Failure::Usage(format!("--max-registers {}: give 1 to 256", a.max_registers)));
    }
    let options = wave_kernel::Options {
        level,
        max_registers: a.max_registers,
        verify: a.verify || cfg!(debug_assertions),
    };
    match a.emit.as_deref() {
        Some("hir") => write_out(a.output.as_deref(), &wave_kernel::hir::print(&kernels)),
        Some("mir") => {
            let mut funcs: Vec<_> = kernels.iter().map(wave_kernel::mir::lower).collect();
            for f in &mut funcs {
                wave_kernel::opt::optimize(f, level)
                    .map_err(|e| Failure::Usage(format!("internal error: {e}")))?;
            }
            write_out(a.output.as_deref(), &wave_kernel::mir::print(&funcs))
        }
        emit => {
            let path = a.file.display().to_string();
            let out = match wave_kernel::emit::compile_hir(&kernels, &text, &path, options) {
                Ok(out) => out,
                Err(d) => {
                    reporter.emit(&path, &text, &d);
                    return Err(Failure::Input);
                }
            };
            match emit {
                Some("lir") => {
                    let lirs: Vec<_> = out.kernels.iter().map(|k| k.lir.clone()).collect();
                    write_out(a.output.as_deref(), &wave_kernel::lir::print(&lirs))
                }
                Some(_) => write_out(a.output.as_deref(), &out.asm),
                None => {
                    let bytes = wave_wbin::write(&out.module);
                    let target = a.output.clone().unwrap_or_else(|| a.file.with_extension("wbin"));
                    std::fs::write(&target, bytes).map_err(|e| {
                        Failure::Usage(format!("cannot write `{}`: {e}", target.display()))
                    })
                }
            }
        }
    }
}

/// Writes `text` to `path`, or to standard output.
fn write_out(path: Option<&std::path::Path>, text: &str) -> Result<(), Failure> {
    match path {
        Some(p) => std::fs::write(p, text)
            .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", p.display()))),
        None => Ok(std::io::stdout().lock().write_all(text.as_bytes())?),
    }
}

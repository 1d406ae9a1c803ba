//! `wave compile FILE.py [--emit hir|mir]`: a kernel written in Python, through the kernel
//! compiler. Today the pipeline ends at MIR (`--emit mir`); the optimisations, LIR, register
//! allocation and emission to `.wbin` are the next stages of the compiler.

use std::io::Write;
use std::path::PathBuf;

use crate::report::Reporter;
use crate::{Failure, read_text};

/// Arguments of `wave compile`.
#[derive(clap::Args)]
pub(crate) struct CompileArgs {
    /// A kernel source: .py.
    file: PathBuf,
    /// What to print instead of writing a .wbin.
    #[arg(long, value_parser = ["hir", "mir", "lir", "asm"])]
    emit: Option<String>,
    /// Optimisation level.
    #[arg(short = 'O', default_value = "2", value_parser = ["0", "1", "2", "3"])]
    opt: String,
    /// Write the result here (with `--emit`, the text form) instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub(crate) fn compile(reporter: &Reporter, a: CompileArgs) -> Result<(), Failure> {
    let ext = a.file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let Some(language) = wave_kernel::Language::from_extension(ext) else {
        return Err(Failure::Usage(format!(
            "`{}`: the kernel compiler reads Python (.py) files; Rust, C++ and TypeScript come later",
            a.file.display()
        )));
    };
    let text = read_text(&a.file)?;
    let (kernels, diagnostics) = wave_kernel::hir(&text, language);
    reporter.emit(&a.file.display().to_string(), &text, &diagnostics);
    if wave_diag::has_errors(&diagnostics) {
        return Err(Failure::Input);
    }
    match a.emit.as_deref() {
        Some("hir") => write_out(a.output.as_deref(), &wave_kernel::hir::print(&kernels)),
        Some("mir") => {
            let level = wave_kernel::opt::Level::from_digit(&a.opt)
                .ok_or_else(|| Failure::Usage(format!("-O{}: use -O0 to -O3", a.opt)))?;
            if level >= wave_kernel::opt::Level::O2 {
                eprintln!(
                    "note: -O{} runs DCE, CSE, CFG simplification, SCCP, strength reduction and LICM; unrolling and O3 inlining are not built yet",
                    a.opt
                );
            }
            let mut funcs: Vec<_> = kernels.iter().map(wave_kernel::mir::lower).collect();
            for f in &mut funcs {
                wave_kernel::opt::optimize(f, level)
                    .map_err(|e| Failure::Usage(format!("internal error: {e}")))?;
            }
            write_out(a.output.as_deref(), &wave_kernel::mir::print(&funcs))
        }
        other => Err(Failure::Usage(format!(
            "`{}`: the compiler builds HIR and MIR so far (`--emit hir`, `--emit mir`); {} need the optimisations, LIR, register allocation and emission, the next stages of the compiler",
            a.file.display(),
            match other {
                Some(form) => format!("`--emit {form}`"),
                None => "a .wbin and `-O` levels".to_string(),
            }
        ))),
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

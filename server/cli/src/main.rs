//! The `wave` command line: one binary, subcommands in the style of cargo.
//!
//! Exit status (spec/testcase.md): 0 on success, 1 when the input is wrong (diagnostics are
//! printed like rustc's, traps with their location) or a test fails, 2 for bad usage.
//! Subcommands of later stages of the toolchain (`compile`, `dap`) are added by the crates
//! that implement them; nothing here pretends to do work it does not do.

#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a command line prints")]

mod compile;
mod emit;
mod info;
mod progress;
mod report;
mod run;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The WAVE toolchain: assemble, disassemble, check, format and inspect WAVE programs.
#[derive(Parser)]
#[command(name = "wave", version, about, long_about = None, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour diagnostics.
    #[arg(long, global = true, value_enum, default_value = "auto")]
    color: report::Color,
}

#[derive(Subcommand)]
enum Command {
    /// Assemble a .wave file into a .wbin.
    Asm {
        /// The assembly file.
        file: PathBuf,
        /// Output path (default: the input with extension .wbin).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print the canonical assembly of a .wbin (it reassembles to identical code).
    Disasm {
        /// The binary.
        file: PathBuf,
    },
    /// Rewrite a .wbin, this toolchain's or the reference toolchain's, in either format.
    Convert {
        /// The binary.
        file: PathBuf,
        /// Where to write the result.
        #[arg(short, long)]
        output: PathBuf,
        /// The format to write.
        #[arg(long, value_enum, default_value = "wave")]
        to: ConvertTo,
        /// Names the parameters of a binary that records none (the reference toolchain's), in
        /// the order of the registers r0, r1, ... that hold them: `--param a:ptr`.
        #[arg(long = "param", value_name = "NAME:TYPE")]
        params: Vec<String>,
    },
    /// Report diagnostics without writing anything.
    Check {
        /// Files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Treat warnings as errors.
        #[arg(long)]
        deny_warnings: bool,
    },
    /// Format .wave files in place (canonical mnemonics, indentation, aligned comments).
    Fmt {
        /// Files to format; `-` reads standard input and writes standard output.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Do not write; exit 1 if any file is not formatted.
        #[arg(long)]
        check: bool,
    },
    /// Run a kernel in the emulator or on a GPU (a .wave, .wbin, kernel source or case .toml file).
    Run(run::RunArgs),
    /// Print the PTX, HIP, SYCL or Metal code of a .wave, .wbin or case .toml file.
    Emit(emit::EmitArgs),
    /// Compile a kernel written in Python, Rust, C++ or TypeScript.
    Compile(compile::CompileArgs),
    /// The language server, on standard input and output.
    Lsp,
    /// The debug adapter (Debug Adapter Protocol), on standard input and output.
    Dap,
    /// Run test cases (files or folders, recursively); ends with `N passed, N failed`.
    Test(run::TestArgs),
    /// Runs test cases on a GPU for `wave test --device cuda`, one per line of standard input.
    #[command(hide = true)]
    GpuWorker(run::WorkerArgs),
    /// List the devices kernels can run on: the emulator and each CUDA GPU.
    Devices {
        /// Print machine-readable results.
        #[arg(long)]
        json: bool,
    },
    /// Section 7 constants and capabilities of a target; with FILE, each kernel's occupancy.
    Info {
        /// A .wave or .wbin file.
        file: Option<PathBuf>,
        /// Target profile (see --list-targets).
        #[arg(long, default_value = "spec-minimum")]
        target: String,
        /// Threads per workgroup (overrides each kernel's `.workgroup_size`; 64 when neither).
        #[arg(long, value_name = "X[,Y[,Z]]")]
        workgroup: Option<String>,
        /// List the target profiles.
        #[arg(long)]
        list_targets: bool,
    },
}

/// A failure that ends the command: already reported (1) or bad usage (2).
pub(crate) enum Failure {
    /// The input is wrong; diagnostics were printed.
    Input,
    /// Bad usage, with a message.
    Usage(String),
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Usage(e.to_string())
    }
}

/// The stack of the thread that does the work. The compiler's typer and passes, the
/// assembler and the backends recurse about once per level of nesting, which the frontends
/// bound (E0412, E0167); this leaves a wide margin at those bounds, in a debug build too. Only
/// the pages a deep input touches are committed.
const STACK: usize = 256 << 20;

fn main() -> ExitCode {
    match std::thread::Builder::new().name("wave".into()).stack_size(STACK).spawn(real_main) {
        Ok(worker) => worker.join().unwrap_or(ExitCode::from(101)),
        Err(e) => {
            eprintln!("error: cannot start the main thread: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let reporter = report::Reporter::new(cli.color);
    let result = match cli.command {
        Command::Asm { file, output } => asm(&reporter, &file, output),
        Command::Disasm { file } => disasm(&file),
        Command::Convert { file, output, to, params } => convert(&file, &output, to, &params),
        Command::Check { files, deny_warnings } => check(&reporter, &files, deny_warnings),
        Command::Fmt { files, check } => fmt(&reporter, &files, check),
        Command::Run(args) => run::run(&reporter, args),
        Command::Emit(args) => emit::emit(&reporter, args),
        Command::Compile(args) => compile::compile(&reporter, args),
        Command::Lsp => wave_lsp::run_stdio()
            .map_err(|e| Failure::Usage(format!("the language server stopped: {e}"))),
        Command::Dap => wave_dap::run_stdio()
            .map_err(|e| Failure::Usage(format!("the debug adapter stopped: {e}"))),
        Command::Test(args) => run::test(args),
        Command::GpuWorker(args) => run::gpu_worker(args),
        Command::Devices { json } => info::devices(json),
        Command::Info { file, target, workgroup, list_targets } => {
            info::run(&reporter, file.as_deref(), &target, workgroup.as_deref(), list_targets)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input) => ExitCode::from(1),
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Reads a file, turning I/O errors into usage failures that name the path.
pub(crate) fn read_text(path: &Path) -> Result<String, Failure> {
    if path == Path::new("-") {
        let mut text = String::new();
        let limit = wave_conformance::MAX_INPUT;
        std::io::Read::read_to_string(
            &mut std::io::Read::take(std::io::stdin(), limit + 1),
            &mut text,
        )
        .map_err(|e| Failure::Usage(format!("cannot read standard input: {e}")))?;
        if text.len() as u64 > limit {
            return Err(Failure::Usage(format!(
                "standard input is over the limit of {limit} bytes"
            )));
        }
        return Ok(text);
    }
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        eprintln!(
            "error: `{}` is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        );
        Failure::Input
    })
}

/// Reads a regular file of at most `wave_conformance::MAX_INPUT` bytes.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, Failure> {
    wave_conformance::read_file(path)
        .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))
}

/// Assembles a file and prints its diagnostics; fails on errors.
pub(crate) fn assemble_file(
    reporter: &report::Reporter,
    path: &Path,
) -> Result<wave_asm::Assembly, Failure> {
    let text = read_text(path)?;
    let name = path.display().to_string();
    let assembly = wave_asm::assemble(&text, &name);
    reporter.emit(&name, &text, &assembly.diagnostics);
    if assembly.has_errors() { Err(Failure::Input) } else { Ok(assembly) }
}

/// Compiles a kernel source (.py, .rs, .cpp, .ts) at -O2, printing its diagnostics.
pub(crate) fn compile_file(
    reporter: &report::Reporter,
    path: &Path,
) -> Result<(wave_wbin::Module, String), Failure> {
    let text = read_text(path)?;
    let Some(language) = wave_kernel::Language::from_extension(
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
    ) else {
        return Err(Failure::Usage(format!("`{}` is not a kernel source", path.display())));
    };
    let name = path.display().to_string();
    let (out, diagnostics) =
        wave_kernel::compile(&text, language, &name, wave_kernel::Options::default());
    reporter.emit(&name, &text, &diagnostics);
    match out {
        Some(out) => Ok((out.module, text)),
        None => Err(Failure::Input),
    }
}

/// The module of a case: its kernel source compiled (at the case's level), or its assembly
/// assembled; with the source's name and text for located diagnostics.
pub(crate) fn case_module(
    reporter: &report::Reporter,
    case: &wave_conformance::Case,
) -> Result<(wave_wbin::Module, (String, String)), Failure> {
    if let Some(k) = &case.kernel_source {
        let name = k.path.display().to_string();
        let options = wave_kernel::Options { level: k.level, ..Default::default() };
        let (out, diagnostics) = wave_kernel::compile(&k.text, k.language, &name, options);
        reporter.emit(&name, &k.text, &diagnostics);
        return match out {
            Some(out) => Ok((out.module, (name, k.text.clone()))),
            None => Err(Failure::Input),
        };
    }
    let assembly = wave_asm::assemble(&case.source, &case.source_name);
    reporter.emit(&case.source_name, &case.source, &assembly.diagnostics);
    if assembly.has_errors() {
        return Err(Failure::Input);
    }
    Ok((assembly.module, (case.source_name.clone(), case.source.clone())))
}

/// Reads a .wbin, printing a located error if it is invalid.
pub(crate) fn read_wbin(path: &Path) -> Result<wave_wbin::Module, Failure> {
    read_wbin_with(path, &[])
}

/// Reads a .wbin of this toolchain or the reference toolchain's (saying so, on standard
/// error), naming its parameters `params` (`NAME:TYPE`, for r0, r1, ...) when given.
pub(crate) fn read_wbin_with(path: &Path, params: &[String]) -> Result<wave_wbin::Module, Failure> {
    let bytes = read_bytes(path)?;
    let (mut module, generation) = wave_wbin::read_any(&bytes).map_err(|e| {
        eprintln!("error: {}: {e}", path.display());
        Failure::Input
    })?;
    if let Some(g) = generation {
        eprintln!(
            "note: {}: a .wbin of the reference toolchain ({}), read into this toolchain's instructions (docs/compatibility.md)",
            path.display(),
            g.describe()
        );
    }
    if !params.is_empty() {
        let params = params
            .iter()
            .map(|t| wave_wbin::Param::parse(t).map_err(|e| format!("--param {e}")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Failure::Usage)?;
        wave_wbin::name_params(&mut module, &params)
            .map_err(|e| Failure::Usage(format!("--param: {e}")))?;
    }
    Ok(module)
}

/// Rewrites a .wbin in this toolchain's format or the reference toolchain's v0.4.
fn convert(file: &Path, output: &Path, to: ConvertTo, params: &[String]) -> Result<(), Failure> {
    let module = read_wbin_with(file, params)?;
    let bytes = match to {
        ConvertTo::Wave => wave_wbin::write(&module),
        ConvertTo::Reference => wave_wbin::reference::write(&module).map_err(|e| {
            eprintln!("error: {}: {e}", file.display());
            Failure::Input
        })?,
    };
    std::fs::write(output, bytes)
        .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", output.display())))
}

/// The format `wave convert` writes.
#[derive(Clone, Copy, clap::ValueEnum)]
enum ConvertTo {
    /// This toolchain's .wbin.
    Wave,
    /// The reference toolchain's v0.4 .wbin.
    Reference,
}

fn asm(reporter: &report::Reporter, file: &Path, output: Option<PathBuf>) -> Result<(), Failure> {
    let assembly = assemble_file(reporter, file)?;
    let output = output.unwrap_or_else(|| file.with_extension("wbin"));
    std::fs::write(&output, wave_wbin::write(&assembly.module))
        .map_err(|e| Failure::Usage(format!("cannot write `{}`: {e}", output.display())))?;
    Ok(())
}

fn disasm(file: &Path) -> Result<(), Failure> {
    let module = read_wbin(file)?;
    let mut out = std::io::stdout().lock();
    out.write_all(wave_asm::disassemble(&module).as_bytes())?;
    Ok(())
}

fn check(
    reporter: &report::Reporter,
    files: &[PathBuf],
    deny_warnings: bool,
) -> Result<(), Failure> {
    let mut failed = false;
    for file in files {
        let text = read_text(file)?;
        let name = file.display().to_string();
        // A kernel source is checked by the compiler (every stage, as `wave compile` runs
        // it), anything else as assembly.
        let language = file
            .extension()
            .and_then(|e| e.to_str())
            .and_then(wave_kernel::Language::from_extension);
        let diagnostics = match language {
            Some(language) => {
                wave_kernel::compile(&text, language, &name, wave_kernel::Options::default()).1
            }
            None => wave_asm::assemble(&text, &name).diagnostics,
        };
        reporter.emit(&name, &text, &diagnostics);
        failed |=
            diagnostics.iter().any(|d| d.is_error()) || (deny_warnings && !diagnostics.is_empty());
    }
    if failed { Err(Failure::Input) } else { Ok(()) }
}

fn fmt(reporter: &report::Reporter, files: &[PathBuf], check: bool) -> Result<(), Failure> {
    let mut failed = false;
    for file in files {
        let text = read_text(file)?;
        let name = file.display().to_string();
        let formatted = match wave_asm::format(&text) {
            Ok(f) => f,
            Err(diagnostics) => {
                reporter.emit(&name, &text, &diagnostics);
                eprintln!("error: `{name}` was not formatted because it does not assemble");
                failed = true;
                continue;
            }
        };
        if formatted == text {
            if file == Path::new("-") && !check {
                std::io::stdout().lock().write_all(formatted.as_bytes())?;
            }
        } else if check {
            println!("{name} is not formatted");
            failed = true;
        } else if file == Path::new("-") {
            std::io::stdout().lock().write_all(formatted.as_bytes())?;
        } else {
            {
                // Write beside and rename, so an interrupted write never loses the file.
                let tmp = file.with_extension("wave.fmt-tmp");
                std::fs::write(&tmp, &formatted)?;
                std::fs::rename(&tmp, file)?;
            }
        }
    }
    if failed { Err(Failure::Input) } else { Ok(()) }
}

//! The run side of a kernel source: its lenses ("Run …", "Debug", "Show WAVE", "Show MIR",
//! one "Show …" per backend) and its previews, each generated line mapped to its source line.

use std::ops::Range;

use wave_backends::Target;
use wave_db::{Database, Settings, SourceBuild, SourceFile};

use super::{Lens, LensCommand, Preview};
use crate::source::{line_of, name_line, pick, section};

/// The lenses of a kernel source: per kernel that compiles, the run lenses (the GPU ones
/// only when `gpu`), "Debug", "Show WAVE", "Show MIR" and one "Show ..." per backend.
pub(super) fn code_lenses(
    db: &Database,
    file: SourceFile,
    build: &SourceBuild,
    path: Option<&std::path::Path>,
    settings: Settings,
    gpu: bool,
) -> Vec<Lens> {
    let text = file.text(db);
    let mut out = Vec::new();
    for f in build.functions.iter().filter(|f| f.kernel) {
        if build.kernel(&f.name).is_none() {
            continue;
        }
        let range = name_line(text, f);
        let name = f.name.clone();
        let plan = crate::run::plan_run(db, file, &name, path, settings);
        out.extend(crate::run::run_lenses(&range, &name, &plan, gpu));
        let launch = plan.as_ref().ok().map(|p| crate::run::debug_launch(p, path));
        out.push(Lens {
            range: range.clone(),
            title: "Debug".into(),
            command: LensCommand::Debug { kernel: name.clone(), launch },
        });
        for (form, title) in [("wave", "WAVE"), ("mir", "MIR")] {
            out.push(Lens {
                range: range.clone(),
                title: format!("Show {title}"),
                command: LensCommand::Show { kernel: name.clone(), form: form.into() },
            });
        }
        for target in Target::ALL {
            out.push(Lens {
                range: range.clone(),
                title: format!("Show {}", target.label()),
                command: LensCommand::Preview { kernel: name.clone(), target },
            });
        }
    }
    out
}

/// A preview of a kernel of a kernel source: `form` is `wave` (the assembly), `mir`, or a
/// backend's name; each generated line is mapped to the 1-based source line it comes from.
pub(super) fn preview(
    db: &Database,
    file: SourceFile,
    build: &SourceBuild,
    kernel: Option<&str>,
    offset: Option<usize>,
    form: &str,
) -> Result<(String, Preview), String> {
    let text = file.text(db);
    let f = pick(build, kernel, offset)?;
    let unit = build.unit_of(&f.name).ok_or("no such kernel in this file")?;
    if unit.build.module.kernels.is_empty() {
        let first = unit.build.diagnostics.iter().find(|d| d.is_error());
        return Err(match first {
            Some(e) => format!("the kernel does not compile: error[{}] {}", e.code, e.message),
            None => "the kernel does not compile".into(),
        });
    }
    let line = |span: &Option<Range<usize>>| {
        span.as_ref().map(|s| line_of(text, unit.to_file(s).start) as u32)
    };
    let (generated, lines) = match form {
        "wave" => {
            let (lines, spans) = section(
                &unit.build.asm,
                &unit.build.asm_spans,
                &format!(".kernel {}", f.name),
                ".end",
            )
            .ok_or("the kernel has no assembly")?;
            (lines.join("\n") + "\n", spans.iter().map(line).collect())
        }
        "mir" => {
            let (lines, spans) = section(
                &unit.build.mir,
                &unit.build.mir_spans,
                &format!("kernel {}(", f.name),
                "}",
            )
            .ok_or("the kernel has no MIR")?;
            (lines.join("\n") + "\n", spans.iter().map(line).collect())
        }
        name => {
            let target = Target::from_name(name).ok_or_else(|| {
                format!("unknown target `{name}` (wave, mir, ptx, hip, sycl, metal)")
            })?;
            let mut options = wave_backends::Options::default();
            options.ptx.kernel = Some(f.name.clone());
            options.hip.kernel = Some(f.name.clone());
            options.sycl.kernel = Some(f.name.clone());
            options.metal.kernel = Some(f.name.clone());
            let module = unit.module_in_file(text, file.path(db));
            let t = wave_backends::write_string(target, &module, &options).map_err(|e| {
                e.problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
            })?;
            let lines = t
                .source_map
                .lines
                .iter()
                .map(|o| {
                    let o = (*o)?;
                    Some(module.lines.iter().find(|e| e.offset == o)?.line)
                })
                .collect();
            let warnings = t.warnings.iter().map(|w| w.message.clone()).collect();
            return Ok((
                target.name().to_owned(),
                Preview { target: Some(target), text: t.text, lines, warnings },
            ));
        }
    };
    Ok((form.to_owned(), Preview { target: None, text: generated, lines, warnings: Vec::new() }))
}

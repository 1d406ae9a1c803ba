//! Kernel grouping and directives: `.kernel` opens a kernel, and `.param`, `.registers`,
//! `.local_memory` and `.workgroup_size` fill in what the module records about it.

use std::collections::HashMap;

use wave_diag::{Span, did_you_mean};
use wave_wbin::{Param, ParamType};

use crate::syntax::{ArgKind, Stmt};

use super::{DIRECTIVES, KernelSource, KernelState, Lowering, looks_reserved, parse_integer};

impl Lowering<'_> {
    pub(super) fn begin_kernel(&mut self, stmt: &Stmt, name: Option<(String, Span)>) {
        if let Some(mut k) = self.kernel.take() {
            let open = k.source.name.clone();
            self.error("E0150", stmt.span.clone(), format!("`.kernel` inside kernel `{open}`"))
                .labels
                .push((
                    k.source.name_span.clone(),
                    format!("`{open}` is still open: it needs `.end` first"),
                ));
            k.source.span.end = stmt.span.start;
            self.finish_kernel(k);
        }
        let (name, name_span) = match name {
            Some(n) => n,
            None => {
                self.error("E0148", stmt.span.clone(), "`.kernel` needs a name: `.kernel NAME`");
                (format!("<unnamed@{}>", stmt.span.start), stmt.span.clone())
            }
        };
        if let Some(first) = self.kernel_names.get(&name).cloned() {
            self.error("E0149", name_span.clone(), format!("kernel `{name}` is defined twice"))
                .labels
                .push((first, "first defined here".into()));
        } else {
            self.kernel_names.insert(name.clone(), name_span.clone());
        }
        self.kernel = Some(KernelState {
            source: KernelSource {
                name,
                span: stmt.span.clone(),
                name_span,
                labels: Vec::new(),
                param_spans: Vec::new(),
            },
            index: self.module.kernels.len(),
            start: self.module.code.len() as u32,
            params: Vec::new(),
            registers: None,
            local_memory: None,
            workgroup_size: None,
            blocks: Vec::new(),
            labels: HashMap::new(),
            calls: Vec::new(),
            register_uses: Vec::new(),
            max_predicate: None,
            instructions: 0,
            varying: [false; 256],
            varying_predicates: [false; 4],
        });
    }

    pub(super) fn directive(
        &mut self,
        stmt: &Stmt,
        name: &str,
        name_span: &Span,
        args: &[crate::syntax::Arg],
    ) {
        if !DIRECTIVES.contains(&name) {
            let suggestion = did_you_mean(name, DIRECTIVES);
            let d = self.error("E0140", name_span.clone(), format!("unknown directive `{name}`"));
            d.notes.push(format!("directives are {}", DIRECTIVES.join(", ")));
            if let Some(s) = suggestion {
                d.suggest_replacement(name_span.clone(), s);
            }
            return;
        }
        let Some(k) = self.kernel.as_mut() else { return };
        match name {
            ".param" => {
                if k.instructions > 0 {
                    self.error("E0143", stmt.span.clone(), "`.param` after the first instruction")
                        .notes
                        .push("parameters are preloaded into r0, r1, ... in declaration order; declare them all before the code".into());
                    return;
                }
                let [arg] = args else {
                    self.error(
                        "E0141",
                        stmt.span.clone(),
                        "`.param` takes one `NAME: TYPE`, e.g. `.param out: ptr`",
                    );
                    return;
                };
                let ArgKind::Typed { name: (pname, pspan), ty: (tname, tspan) } = &arg.kind else {
                    self.error(
                        "E0141",
                        arg.span.clone(),
                        "`.param` takes `NAME: TYPE`, e.g. `.param out: ptr`",
                    );
                    return;
                };
                let Some(ty) = ParamType::from_name(&tname.to_ascii_lowercase()) else {
                    let suggestion =
                        did_you_mean(&tname.to_ascii_lowercase(), ParamType::ALL.map(|t| t.name()));
                    let d = self.error(
                        "E0141",
                        tspan.clone(),
                        format!("unknown parameter type `{tname}`"),
                    );
                    d.notes.push("parameter types are u32, i32, f32 and ptr".into());
                    if let Some(s) = suggestion {
                        d.suggest_replacement(tspan.clone(), s);
                    }
                    return;
                };
                if looks_reserved(pname) {
                    self.error(
                        "E0141",
                        pspan.clone(),
                        format!("parameter name `{pname}` reads as a register, predicate, special register or literal"),
                    )
                    .notes
                    .push("operands named like `r3`, `p0`, `sr_...`, `inf` or `nan` are never looked up as parameters; choose another name".into());
                    return;
                }
                if let Some(i) = k.params.iter().position(|p| p.name == *pname) {
                    let first = k.source.param_spans[i].clone();
                    self.error(
                        "E0142",
                        pspan.clone(),
                        format!("parameter `{pname}` is declared twice"),
                    )
                    .labels
                    .push((first, "first declared here".into()));
                    return;
                }
                if k.params.len() >= 256 {
                    self.error(
                        "E0142",
                        pspan.clone(),
                        "more than 256 parameters do not fit in r0-r255",
                    );
                    return;
                }
                k.params.push(Param { name: pname.clone(), ty });
                k.source.param_spans.push(pspan.clone());
            }
            ".registers" => {
                if let Some((_, first)) = &k.registers {
                    let first = first.clone();
                    self.error("E0145", stmt.span.clone(), "`.registers` is given twice")
                        .labels
                        .push((first, "first given here".into()));
                    return;
                }
                let Some(n) = self.integer_args(stmt, args, 1, 1, ".registers", "a register count")
                else {
                    return;
                };
                if !(1..=256).contains(&n[0]) {
                    self.error("E0144", args[0].span.clone(), format!("`.registers {}` is out of range: the encoding has r0-r255, so 1 to 256", n[0]));
                    return;
                }
                if let Some(k) = self.kernel.as_mut() {
                    k.registers = Some((n[0] as u16, stmt.span.clone()));
                }
            }
            ".local_memory" => {
                if let Some((_, first)) = &k.local_memory {
                    let first = first.clone();
                    self.error("E0145", stmt.span.clone(), "`.local_memory` is given twice")
                        .labels
                        .push((first, "first given here".into()));
                    return;
                }
                let Some(n) = self.integer_args(stmt, args, 1, 1, ".local_memory", "a byte count")
                else {
                    return;
                };
                let Ok(bytes) = u32::try_from(n[0]) else {
                    self.error(
                        "E0144",
                        args[0].span.clone(),
                        "`.local_memory` must fit in 32 bits",
                    );
                    return;
                };
                if let Some(k) = self.kernel.as_mut() {
                    k.local_memory = Some((bytes, stmt.span.clone()));
                }
            }
            ".workgroup_size" => {
                if let Some((_, first)) = &k.workgroup_size {
                    let first = first.clone();
                    self.error("E0145", stmt.span.clone(), "`.workgroup_size` is given twice")
                        .labels
                        .push((first, "first given here".into()));
                    return;
                }
                let Some(n) =
                    self.integer_args(stmt, args, 1, 3, ".workgroup_size", "1 to 3 sizes")
                else {
                    return;
                };
                let mut size = [1u32; 3];
                for (i, v) in n.iter().enumerate() {
                    match u32::try_from(*v) {
                        Ok(v) if v >= 1 => size[i] = v,
                        _ => {
                            self.error(
                                "E0144",
                                args[i].span.clone(),
                                "workgroup dimensions must be at least 1 and fit in 32 bits",
                            );
                            return;
                        }
                    }
                }
                if size.iter().map(|&d| u64::from(d)).product::<u64>() > u64::from(u32::MAX) {
                    self.error(
                        "E0144",
                        stmt.span.clone(),
                        "the workgroup has 2^32 threads or more",
                    );
                    return;
                }
                if let Some(k) = self.kernel.as_mut() {
                    k.workgroup_size = Some((size, stmt.span.clone()));
                }
            }
            // Unknown directives were reported above.
            _ => {}
        }
    }

    fn integer_args(
        &mut self,
        stmt: &Stmt,
        args: &[crate::syntax::Arg],
        min: usize,
        max: usize,
        name: &str,
        what: &str,
    ) -> Option<Vec<i64>> {
        if args.len() < min || args.len() > max {
            self.error(
                "E0144",
                stmt.span.clone(),
                format!(
                    "`{name}` takes {what}, found {} argument{}",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
            );
            return None;
        }
        let mut out = Vec::new();
        for arg in args {
            let value = match &arg.kind {
                ArgKind::Integer(t) => parse_integer(t),
                _ => None,
            };
            match value {
                Some(v) if i64::try_from(v).is_ok() => out.push(v as i64),
                _ => {
                    self.error(
                        "E0144",
                        arg.span.clone(),
                        format!("`{name}` takes {what}: expected an integer here"),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }
}

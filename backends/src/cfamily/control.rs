//! Structured control flow as C++ blocks: statements, `if`/`else`, loops, calls and returns
//! from `lower`, and each instruction under its guard with its source line as a comment.

use crate::kind::Kind;
use crate::lower::{Flag, Stmt};
use crate::{Problem, codes};

use super::{Writer, cond, flag_name};

impl Writer<'_, '_> {
    pub(super) fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    pub(super) fn block(&mut self, head: &str, body: &[Stmt]) {
        self.line(&format!("{head} {{"));
        self.out.indent += 1;
        self.stmts(body);
        self.out.indent -= 1;
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        let d = self.d();
        match s {
            Stmt::Inst(n) => self.inst(*n, None),
            Stmt::Wave { index, active } => self.inst(*index, *active),
            Stmt::Barrier(n) => {
                self.comment(*n);
                self.line(d.barrier());
            }
            Stmt::Marker(n) => self.comment(*n),
            Stmt::Set(f, c) => {
                let line = format!("{} = {};", flag_name(*f), cond(c));
                self.line(&line);
            }
            Stmt::Reset(f) => self.line(&format!("{} = false;", flag_name(*f))),
            Stmt::Clear(f, g) => {
                let (f, g) = (flag_name(*f), flag_name(*g));
                self.line(&format!("{f} = {f} && !{g};"));
            }
            Stmt::Or(f, g) => {
                let (f, g) = (flag_name(*f), flag_name(*g));
                self.line(&format!("{f} = {f} || {g};"));
            }
            Stmt::If { cond: c, then, otherwise } => {
                let head = format!("if ({})", cond(c));
                self.block(&head, then);
                if otherwise.is_empty() {
                    self.line("}");
                } else {
                    self.block("} else", otherwise);
                    self.line("}");
                }
            }
            Stmt::IfAny { cond: c, then } => {
                let head = format!("if ({})", d.any(&cond(c)));
                self.block(&head, then);
                self.line("}");
            }
            Stmt::Loop(body) => {
                self.block("for (;;)", body);
                self.line("}");
            }
            Stmt::Break => self.line("break;"),
            Stmt::Continue => self.line("continue;"),
            Stmt::BreakUnlessAny(c) => {
                let line = format!("if (!{}) break;", d.any(&cond(c)));
                self.line(&line);
            }
            Stmt::Exit if self.in_function => self.line("halted = true; return;"),
            Stmt::Exit => self.line("return;"),
            Stmt::Return => self.line("return;"),
            Stmt::Call { callee, .. } => {
                let name = self.function_name(*callee);
                let mut args = vec![
                    "wave_mem".to_string(),
                    if self.program.kernel.local_memory > 0 {
                        "wave_local".into()
                    } else {
                        "(uint8_t*)0".into()
                    },
                ];
                args.extend((0..self.program.registers).map(|r| format!("r{r}")));
                args.extend((0..4).map(|k| format!("p{k}")));
                args.push("halted".into());
                self.line(&format!("{name}({});", args.join(", ")));
                self.line("if (halted) return;");
            }
            Stmt::Trap { index, message } => {
                self.comment(*index);
                match self.trap_line(message) {
                    Some(t) => self.line(&t),
                    None => {
                        let i = self.program.insts[*index];
                        self.problems.push(Problem::error(
                            codes::UNSUPPORTED,
                            &self.program.kernel.name,
                            Some(i.offset),
                            format!("{message}: the emulator traps here, and {} has no way to stop a kernel with an error", d.name()),
                        ));
                    }
                }
            }
        }
    }

    pub(super) fn comment(&mut self, n: usize) {
        let i = &self.program.insts[n];
        self.out.current = Some(i.offset);
        let mut text = String::new();
        wave_isa::write_inst(&i.inst, &mut text, &|o| {
            self.module.symbol_at(o).map(|s| s.name.clone())
        });
        match self.module.line_at(i.offset).map(|l| l.line) {
            Some(line) => self.line(&format!("// {line}: {text}")),
            None => self.line(&format!("// {text}")),
        }
    }

    /// One instruction: data instructions under their guard, wave operations in every lane of
    /// the wave with the lanes of `active` (and the guard) taking part.
    pub(super) fn inst(&mut self, n: usize, active: Option<Flag>) {
        let i = self.program.insts[n];
        self.comment(n);
        let guard = i
            .inst
            .guard
            .map(|g| format!("{}p{}", if g.negate { "!" } else { "" }, g.predicate & 3));
        match i.kind() {
            Kind::Wave(op) => {
                let mut parts = Vec::new();
                if let Some(a) = active {
                    parts.push(flag_name(a));
                }
                if let Some(g) = &guard {
                    parts.push(g.clone());
                }
                let part = if parts.is_empty() { "true".to_string() } else { parts.join(" && ") };
                let lines = self.wave(&i, op, &part);
                self.line("{");
                self.out.indent += 1;
                for l in lines {
                    self.line(&l);
                }
                self.out.indent -= 1;
                self.line("}");
            }
            Kind::Data => {
                let lines = self.data(&i);
                match (guard, lines.len()) {
                    (_, 0) => {}
                    (None, _) => {
                        for l in lines {
                            self.line(&l);
                        }
                    }
                    (Some(g), 1) => self.line(&format!("if ({g}) {}", lines[0])),
                    (Some(g), _) => {
                        self.line(&format!("if ({g}) {{"));
                        self.out.indent += 1;
                        for l in lines {
                            self.line(&l);
                        }
                        self.out.indent -= 1;
                        self.line("}");
                    }
                }
            }
            // `lower` makes statements of these (`Stmt::Barrier`, markers, blocks), never a
            // `Stmt::Inst` or `Stmt::Wave`.
            Kind::Barrier | Kind::Control => {}
        }
    }
}

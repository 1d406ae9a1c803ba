//! Structured control flow as PTX branches: statements, conditions and flags from `lower`,
//! and each instruction under its guard, with its source line as a comment.

use crate::kind::Kind;
use crate::lower::{Cond, Flag, Lit, Stmt};
use crate::structure::{Instr, mnemonic};
use crate::{Problem, codes};

use super::{Kernel, flag_name, pred_name};

impl Kernel<'_, '_> {
    pub(super) fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    /// Computes a condition into a predicate: a literal itself when it is one and not
    /// negated, else `%q7`... Returns the operand and whether it is negated.
    pub(super) fn cond(&mut self, cond: &Cond, into: &str) -> (String, bool) {
        match cond.as_slice() {
            [] => ("%ptrue".into(), false),
            [one] => pred_name(*one),
            lits => {
                let mut first = true;
                for l in lits {
                    let (name, neg) = pred_name(*l);
                    let operand = if neg {
                        self.line(&format!("not.pred %q6, {name};"));
                        "%q6".to_string()
                    } else {
                        name
                    };
                    if first {
                        self.line(&format!("mov.pred {into}, {operand};"));
                        first = false;
                    } else {
                        self.line(&format!("and.pred {into}, {into}, {operand};"));
                    }
                }
                (into.to_string(), false)
            }
        }
    }

    pub(super) fn set_flag(&mut self, dst: &str, cond: &Cond) {
        let (p, neg) = self.cond(cond, "%q7");
        if neg {
            self.line(&format!("not.pred {dst}, {p};"));
        } else if p != dst {
            self.line(&format!("mov.pred {dst}, {p};"));
        }
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Inst(n) => self.inst(*n, None),
            Stmt::Wave { index, active } => self.inst(*index, *active),
            Stmt::Barrier(n) => {
                self.comment(*n);
                self.line("bar.sync 0;");
            }
            Stmt::Marker(n) => self.comment(*n),
            Stmt::Set(f, cond) => self.set_flag(&flag_name(*f), cond),
            Stmt::Reset(f) => self.line(&format!("mov.pred {}, %pfalse;", flag_name(*f))),
            Stmt::Clear(f, g) => {
                let (f, g) = (flag_name(*f), flag_name(*g));
                self.line(&format!("not.pred %q6, {g};"));
                self.line(&format!("and.pred {f}, {f}, %q6;"));
            }
            Stmt::Or(f, g) => {
                let (f, g) = (flag_name(*f), flag_name(*g));
                self.line(&format!("or.pred {f}, {f}, {g};"));
            }
            Stmt::If { cond, then, otherwise } => {
                let (p, neg) = self.cond(cond, "%q7");
                let else_label = self.label("else");
                let end_label = self.label("endif");
                let skip = if otherwise.is_empty() { &end_label } else { &else_label };
                self.line(&format!("@{}{p} bra {skip};", if neg { "" } else { "!" }));
                self.out.indent += 1;
                self.stmts(then);
                self.out.indent -= 1;
                if !otherwise.is_empty() {
                    self.line(&format!("bra {end_label};"));
                    self.out.flush_left(&format!("{else_label}:"));
                    self.out.indent += 1;
                    self.stmts(otherwise);
                    self.out.indent -= 1;
                }
                self.out.flush_left(&format!("{end_label}:"));
            }
            Stmt::IfAny { cond, then } => {
                let (p, neg) = self.cond(cond, "%q7");
                let end_label = self.label("endany");
                let p = if neg {
                    self.line(&format!("not.pred %q7, {p};"));
                    "%q7".to_string()
                } else {
                    p
                };
                self.line(&format!("vote.sync.any.pred %q5, {p}, %live;"));
                self.line(&format!("@!%q5 bra {end_label};"));
                self.out.indent += 1;
                self.stmts(then);
                self.out.indent -= 1;
                self.out.flush_left(&format!("{end_label}:"));
            }
            Stmt::Loop(body) => {
                let top = self.label("loop");
                let end = self.label("endloop");
                self.out.flush_left(&format!("{top}:"));
                self.loops.push((top.clone(), end.clone()));
                self.out.indent += 1;
                self.stmts(body);
                self.out.indent -= 1;
                self.loops.pop();
                self.line(&format!("bra {top};"));
                self.out.flush_left(&format!("{end}:"));
            }
            Stmt::Break => {
                let end = self.loops.last().map(|l| l.1.clone()).unwrap_or_default();
                self.line(&format!("bra {end};"));
            }
            Stmt::Continue => {
                let top = self.loops.last().map(|l| l.0.clone()).unwrap_or_default();
                self.line(&format!("bra {top};"));
            }
            Stmt::BreakUnlessAny(cond) => {
                let (p, neg) = self.cond(cond, "%q7");
                let p = if neg {
                    self.line(&format!("not.pred %q7, {p};"));
                    "%q7".to_string()
                } else {
                    p
                };
                let end = self.loops.last().map(|l| l.1.clone()).unwrap_or_default();
                self.line(&format!("vote.sync.any.pred %q5, {p}, %live;"));
                self.line(&format!("@!%q5 bra {end};"));
            }
            Stmt::Exit => self.line("exit;"),
            Stmt::Call { callee, .. } => self.call(*callee),
            Stmt::Return => {
                let ret = self.ret_label.clone().unwrap_or_default();
                self.line(&format!("bra {ret};"));
            }
            Stmt::Trap { index, message } => {
                self.comment(*index);
                self.line(&format!("trap;   // {message}"));
            }
        }
    }

    /// A comment with the instruction's source line and canonical text.
    pub(super) fn comment(&mut self, n: usize) {
        let i = &self.program.insts[n];
        self.out.current = Some(i.offset);
        let mut text = String::new();
        wave_isa::write_inst(&i.inst, &mut text, &|o| {
            self.module.symbol_at(o).map(|s| s.name.clone())
        });
        let line = self.module.line_at(i.offset).map(|l| l.line);
        match line {
            Some(line) => self.line(&format!("// {line}: {text}")),
            None => self.line(&format!("// {text}")),
        }
    }

    pub(super) fn unsupported(&mut self, i: &Instr, why: &str) {
        self.problems.push(Problem::error(
            codes::UNSUPPORTED,
            &self.program.kernel.name,
            Some(i.offset),
            format!("`{}` cannot be translated to PTX: {why}", mnemonic(i)),
        ));
    }

    /// One instruction: data instructions under their guard, wave operations with the lanes
    /// of `active` (and the guard) taking part.
    pub(super) fn inst(&mut self, n: usize, active: Option<Flag>) {
        let i = self.program.insts[n];
        self.comment(n);
        let guard = i.inst.guard.map(|g| (format!("%p{}", g.predicate & 3), g.negate));
        match i.kind() {
            Kind::Wave(op) => {
                // Lanes taking part: active and guarded in.
                let mut cond: Cond = active.map(|a| vec![Lit::Flag(a, false)]).unwrap_or_default();
                if let Some(g) = i.inst.guard {
                    cond.push(Lit::Pred(g.predicate, g.negate));
                }
                let (p, neg) = self.cond(&cond, "%q4");
                if neg || p != "%q4" {
                    if neg {
                        self.line(&format!("not.pred %q4, {p};"));
                    } else {
                        self.line(&format!("mov.pred %q4, {p};"));
                    }
                }
                let lines = self.wave(&i, op);
                for l in lines {
                    self.line(&l);
                }
            }
            Kind::Data => {
                let lines = self.data(&i);
                match (guard, lines.len()) {
                    (None, _) => {
                        for l in lines {
                            self.line(&l);
                        }
                    }
                    (Some((p, neg)), 1) => {
                        self.line(&format!("@{}{p} {}", if neg { "!" } else { "" }, lines[0]));
                    }
                    (Some((p, neg)), _) => {
                        let skip = self.label("unguarded");
                        self.line(&format!("@{}{p} bra {skip};", if neg { "" } else { "!" }));
                        for l in lines {
                            self.line(&l);
                        }
                        self.out.flush_left(&format!("{skip}:"));
                    }
                }
            }
            // `lower` makes statements of these (`Stmt::Barrier`, markers, branches), never a
            // `Stmt::Inst` or `Stmt::Wave`.
            Kind::Barrier | Kind::Control => {}
        }
    }
}

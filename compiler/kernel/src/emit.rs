//! Emission: the allocated LIR as WAVE assembly, assembled by `wave-asm` into a `.wbin`
//! whose line table points into the kernel source (not the generated assembly).
//!
//! Going through assembly text keeps one encoder (the isa table's) and makes `--emit asm`
//! exactly what is encoded: the assembler checks every generated instruction, and any
//! complaint from it is a compiler bug reported as E0410 with the generated line.

use std::fmt::Write as _;

use wave_diag::{Diagnostic, Span};
use wave_wbin::{LineEntry, Module};

use crate::front::codes;
use crate::hir::VarId;
use crate::lir::{self, Lir};
use crate::opt::Level;
use crate::regalloc::{self, Allocation};
use crate::{Language, hir, mir, opt};

/// How to compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Optimisation level.
    pub level: Level,
    /// The most registers a kernel may use before it spills (the spec minimum of
    /// MAX_REGISTERS, 64, runs on every target).
    pub max_registers: u32,
    /// Check the MIR after every pass and the LIR after lowering and each of its passes, and
    /// report a broken one as an internal error naming the pass (`wave compile --verify`;
    /// on by default in debug builds, so in every test).
    pub verify: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { level: Level::O2, max_registers: 64, verify: cfg!(debug_assertions) }
    }
}

/// One compiled kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Its MIR after optimisation.
    pub mir: mir::Func,
    /// Its LIR before allocation (spill code included).
    pub lir: Lir,
    /// The allocation.
    pub allocation: Allocation,
}

/// A compiled file.
#[derive(Clone, Debug)]
pub struct Output {
    /// Every kernel.
    pub kernels: Vec<Kernel>,
    /// The generated assembly.
    pub asm: String,
    /// For each line of [`Output::asm`], the kernel source span it was generated from.
    pub asm_spans: Vec<Option<Span>>,
    /// The `.wbin`, with the line table into the kernel source.
    pub module: Module,
}

/// Compiles every kernel of `text` (a file at `path`) to a `.wbin`. Errors mean no output.
pub fn compile(
    text: &str,
    language: Language,
    path: &str,
    options: Options,
) -> (Option<Output>, Vec<Diagnostic>) {
    let (kernels, mut diagnostics) = crate::hir(text, language);
    if wave_diag::has_errors(&diagnostics) {
        return (None, diagnostics);
    }
    match compile_hir(&kernels, text, path, options) {
        Ok(out) => (Some(out), diagnostics),
        Err(mut d) => {
            diagnostics.append(&mut d);
            (None, diagnostics)
        }
    }
}

/// The back end from HIR: optimise, lower, allocate, emit.
pub fn compile_hir(
    kernels: &[hir::Kernel],
    text: &str,
    path: &str,
    options: Options,
) -> Result<Output, Vec<Diagnostic>> {
    compile_hir_with(kernels, text, path, options, &|| {})
}

/// [`compile_hir`], calling `checkpoint` between its steps (before each optimisation pass,
/// each LIR pass and register allocation): a caller that must be able to stop a long compile
/// unwinds from there (the language server, whose edits supersede the compile under way).
pub fn compile_hir_with(
    kernels: &[hir::Kernel],
    text: &str,
    path: &str,
    options: Options,
    checkpoint: &dyn Fn(),
) -> Result<Output, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for k in kernels {
        match compile_kernel_with(k, options, checkpoint) {
            Ok(c) => out.push(c),
            Err(d) => errors.push(*d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let (asm, spans, held) = assembly_with_variables(&out);
    let assembled = wave_asm::assemble(&asm, path);
    if let Some(e) = assembled.diagnostics.iter().find(|d| d.is_error()) {
        let line = asm[..e.span.start.min(asm.len())].matches('\n').count();
        let generated = asm.lines().nth(line).unwrap_or("").trim().to_owned();
        let span = spans.get(line).cloned().flatten().unwrap_or(0..0);
        return Err(vec![Diagnostic::error(
            codes::INTERNAL,
            span,
            format!(
                "internal compiler error: the generated `{generated}` does not assemble: {}",
                e.message
            ),
        )]);
    }
    let mut module = assembled.module;
    module.vars = var_locations(&module, &held);
    module.files = vec![path.to_owned()];
    let index = LineIndex::new(text);
    module.lines = module
        .lines
        .iter()
        .filter_map(|entry| {
            // The assembler's entry names a (1-based) line of the generated text.
            let line = (entry.line as usize).checked_sub(1)?;
            // (An instruction made for no source line, like a variable's first zero, has an
            // empty span at 0: it gets no entry rather than line 1.)
            let span = spans.get(line).cloned().flatten().filter(|s| *s != (0..0))?;
            let (l, c) = index.position(span.start);
            let (el, ec) = index.position(span.end.max(span.start));
            Some(LineEntry {
                offset: entry.offset,
                file: 0,
                line: l,
                column: c,
                end_line: el,
                end_column: ec,
            })
        })
        .collect();
    Ok(Output { kernels: out, asm, asm_spans: spans, module })
}

/// Bytes of Local Memory every WAVE target has (spec: LOCAL_MEMORY_SIZE).
pub const LOCAL_MEMORY_SIZE: u32 = 16384;

/// Optimises, lowers and allocates one kernel.
pub fn compile_kernel(k: &hir::Kernel, options: Options) -> Result<Kernel, Box<Diagnostic>> {
    compile_kernel_with(k, options, &|| {})
}

/// [`compile_kernel`] with a checkpoint (see [`compile_hir_with`]).
pub fn compile_kernel_with(
    k: &hir::Kernel,
    options: Options,
    checkpoint: &dyn Fn(),
) -> Result<Kernel, Box<Diagnostic>> {
    checkpoint();
    let mut f = mir::lower(k);
    opt::optimize_verified(&mut f, options.level, options.verify, checkpoint).map_err(|e| {
        Box::new(Diagnostic::error(
            codes::INTERNAL,
            k.span.clone(),
            format!("internal compiler error: {e}"),
        ))
    })?;
    // What the code generator does not take directly (f16 arithmetic through f32).
    if let Some((span, message)) = crate::legalize::legalize(&mut f).into_iter().next() {
        return Err(Box::new(Diagnostic::error(codes::CODEGEN, span, message)));
    }
    // With comparisons held in predicates first; if that needs more than four at once, again
    // with every comparison made where it is tested.
    let mut result = back_end(k, &f, options, lir::Hold::Operands, checkpoint);
    for fewer in [lir::Hold::Conditions, lir::Hold::Nothing] {
        match &result {
            Err(e) if e.message.contains("predicates at once") => {
                result = back_end(k, &f, options, fewer, checkpoint)
            }
            _ => break,
        }
    }
    result
}

fn back_end(
    k: &hir::Kernel,
    f: &mir::Func,
    options: Options,
    hold: lir::Hold,
    checkpoint: &dyn Fn(),
) -> Result<Kernel, Box<Diagnostic>> {
    checkpoint();
    let mut lir = lir::lower_with(f, hold)
        .map_err(|e| Box::new(Diagnostic::error(codes::CODEGEN, e.span, e.message)))?;
    let broken = |pass: &str, lir: &Lir| -> Option<Box<Diagnostic>> {
        if !options.verify {
            return None;
        }
        let problems = lir::verify(lir);
        (!problems.is_empty()).then(|| {
            Box::new(Diagnostic::error(
                codes::INTERNAL,
                k.span.clone(),
                format!(
                    "internal compiler error: the LIR of `{}` is broken after `{pass}`: {}",
                    k.name,
                    problems.join("; ")
                ),
            ))
        })
    };
    if let Some(d) = broken("lowering", &lir) {
        return Err(d);
    }
    if lir.frame.is_some() && lir.workgroup_size.is_none() {
        // Name the first array kept in memory, where one of its computed indices is.
        let constant: std::collections::HashSet<mir::Value> = f
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter(|i| matches!(i.op, mir::Op::Int(_)))
            .filter_map(|i| i.dst)
            .collect();
        let kept = f.blocks.iter().flat_map(|b| &b.insts).find_map(|i| match &i.op {
            mir::Op::Load(mir::Space::Private(v), x)
            | mir::Op::Store(mir::Space::Private(v), x, _)
                if !constant.contains(x) =>
            {
                Some((*v, i.span.clone()))
            }
            _ => None,
        });
        let first = f.private.iter().find(|a| {
            f.blocks.iter().flat_map(|b| &b.insts).any(|i| {
                matches!(&i.op, mir::Op::Load(mir::Space::Private(v), _) | mir::Op::Store(mir::Space::Private(v), _, _) if *v == a.var)
            })
        });
        let named = |v: VarId| f.private.iter().find(|a| a.var == v).map_or("", |a| &a.name);
        let (span, why) = match (kept, first) {
            (Some((v, span)), _) => (
                span,
                format!(
                    "the private array `{}` is indexed by a computed value here, so it stays in Local Memory",
                    named(v)
                ),
            ),
            (None, first) => (
                first.map_or(k.span.clone(), |a| k.vars[a.var.0 as usize].span.clone()),
                format!(
                    "the private array `{}` stays in Local Memory at -O{} (mem2reg makes arrays indexed by constants values from -O2)",
                    first.map_or("", |a| &a.name),
                    options.level.digit()
                ),
            ),
        };
        return Err(Box::new(Diagnostic::error(
            codes::LOCAL_MEMORY,
            span,
            format!(
                "{why}, and `{}` gives no workgroup size to lay out a frame per thread: give one (`@wave.kernel(workgroup=64)`)",
                k.name
            ),
        )));
    }
    for (name, pass) in lir::passes() {
        checkpoint();
        pass(&mut lir);
        if let Some(d) = broken(name, &lir) {
            return Err(d);
        }
    }
    checkpoint();
    let allocation = regalloc::allocate(&mut lir, options.max_registers).map_err(|e| {
        let code = if e.contains("internal") || e.contains("wrong") {
            codes::INTERNAL
        } else {
            codes::REGISTERS
        };
        Box::new(Diagnostic::error(code, k.span.clone(), e))
    })?;
    let bytes = regalloc::local_memory(&lir, allocation.spill_slots);
    if bytes > LOCAL_MEMORY_SIZE {
        return Err(Box::new(Diagnostic::error(
            codes::LOCAL_MEMORY,
            k.span.clone(),
            format!(
                "`{}` needs {bytes} bytes of Local Memory ({} for local arrays, {} per thread for private arrays and spilled values), more than the {LOCAL_MEMORY_SIZE} of LOCAL_MEMORY_SIZE",
                k.name,
                lir.local_memory,
                lir.frame_bytes + allocation.spill_slots * 4
            ),
        )));
    }
    Ok(Kernel { mir: f.clone(), lir, allocation })
}

/// A source variable in a register: its name, the register and its type.
type Held = (String, u8, wave_wbin::VarType);

/// The type of a value, as the debugger shows a register holding it.
fn var_type(ty: hir::Ty) -> wave_wbin::VarType {
    use wave_wbin::VarType;
    match ty {
        hir::Ty::Scalar(hir::Scalar::I32) => VarType::I32,
        hir::Ty::Scalar(hir::Scalar::F32) => VarType::F32,
        hir::Ty::Scalar(hir::Scalar::Bool) => VarType::Bool,
        hir::Ty::Scalar(hir::Scalar::F16) => VarType::F16,
        hir::Ty::Scalar(hir::Scalar::F64) => VarType::F64,
        _ => VarType::U32,
    }
}

/// The source variables in registers before each instruction of `k.lir`: the live virtual
/// registers that hold a value with a source name ([`mir::Func::names`]), in the register
/// the allocation gave them.
fn visible(k: &Kernel) -> Vec<Vec<Held>> {
    let insts = &k.lir.insts;
    let Ok(succ) = lir::successors(insts) else { return vec![Vec::new(); insts.len()] };
    let nregs = insts
        .iter()
        .flat_map(|i| i.defs().chain(i.uses()).collect::<Vec<_>>())
        .max()
        .map_or(1, |r| r.index() + 1);
    let live_out = lir::liveness(insts, &succ, nregs);
    // The registers that hold a named value, once: most registers hold none, and a kernel
    // unrolled at O2 has many instructions to look at.
    let named: Vec<(usize, &Vec<String>, wave_wbin::VarType, u8)> = (0..nregs)
        .filter_map(|r| {
            let &value = k.lir.origin.get(&lir::Reg(r as u32))?;
            let names = k.mir.names.get(&mir::Value(value))?;
            let ty = var_type(k.mir.types.get(value as usize).copied().unwrap_or(hir::Ty::Unit));
            let reg =
                u8::try_from(regalloc::phys(&k.allocation, lir::Reg(r as u32))).unwrap_or(u8::MAX);
            Some((r, names, ty, reg))
        })
        .collect();
    let mut out = Vec::with_capacity(insts.len());
    for (i, inst) in insts.iter().enumerate() {
        let mut live = live_out[i].clone();
        for d in inst.defs() {
            live[d.index() / 64] &= !(1 << (d.index() % 64));
        }
        for u in inst.uses() {
            live[u.index() / 64] |= 1 << (u.index() % 64);
        }
        let mut here: Vec<Held> = Vec::new();
        for &(r, names, ty, reg) in &named {
            if live[r / 64] & (1 << (r % 64)) == 0 {
                continue;
            }
            for n in names {
                if !here.iter().any(|h| h.0 == *n) {
                    here.push((n.clone(), reg, ty));
                }
            }
        }
        here.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        out.push(here);
    }
    out
}

/// The variables' code ranges: for each kernel, the runs of consecutive instructions where a
/// variable stays in one register. `held` is, per line of the assembly, the variables before
/// its instruction; `module` is the assembled module, whose line table still names lines of
/// the assembly.
fn var_locations(module: &Module, held: &[Option<Vec<Held>>]) -> Vec<wave_wbin::VarLocation> {
    let mut out: Vec<wave_wbin::VarLocation> = Vec::new();
    for k in &module.kernels {
        let insts: Vec<(u32, &Vec<Held>)> = module
            .lines
            .iter()
            .filter(|e| k.code.contains(&e.offset))
            .filter_map(|e| {
                let line = (e.line as usize).checked_sub(1)?;
                Some((e.offset, held.get(line)?.as_ref()?))
            })
            .collect();
        let mut open: Vec<wave_wbin::VarLocation> = Vec::new();
        for (j, (offset, vars)) in insts.iter().enumerate() {
            let end = insts.get(j + 1).map_or(k.code.end, |n| n.0);
            let (mut kept, closed): (Vec<_>, Vec<_>) = open.into_iter().partition(|o| {
                o.end == *offset
                    && vars.iter().any(|(n, r, t)| *n == o.name && *r == o.register && *t == o.ty)
            });
            out.extend(closed);
            for (name, register, ty) in vars.iter() {
                match kept.iter_mut().find(|o| o.name == *name && o.register == *register) {
                    Some(o) => o.end = end,
                    None => kept.push(wave_wbin::VarLocation {
                        name: name.clone(),
                        ty: *ty,
                        register: *register,
                        start: *offset,
                        end,
                    }),
                }
            }
            open = kept;
        }
        out.extend(open);
    }
    out.sort_by(|a, b| (a.start, &a.name).cmp(&(b.start, &b.name)));
    out
}

/// The assembly text of compiled kernels, and for each of its lines the source span.
pub fn assembly(kernels: &[Kernel]) -> (String, Vec<Option<Span>>) {
    let (text, spans, _) = assembly_with_variables(kernels);
    (text, spans)
}

/// [`assembly`], with the source variables in registers before each instruction line.
#[allow(clippy::type_complexity, reason = "three views of the same lines")]
fn assembly_with_variables(
    kernels: &[Kernel],
) -> (String, Vec<Option<Span>>, Vec<Option<Vec<Held>>>) {
    let mut text = String::new();
    let mut spans: Vec<Option<Span>> = Vec::new();
    let mut held: Vec<Option<Vec<Held>>> = Vec::new();
    let mut line = |text: &mut String, s: &str, span: Option<Span>, vars: Option<Vec<Held>>| {
        text.push_str(s);
        text.push('\n');
        spans.push(span);
        held.push(vars);
    };
    for (i, k) in kernels.iter().enumerate() {
        if i > 0 {
            line(&mut text, "", None, None);
        }
        line(&mut text, &format!(".kernel {}", k.lir.name), None, None);
        for (name, ty) in &k.lir.params {
            line(&mut text, &format!(".param {name}: {ty}"), None, None);
        }
        line(&mut text, &format!(".registers {}", k.allocation.registers.max(1)), None, None);
        let local = regalloc::local_memory(&k.lir, k.allocation.spill_slots);
        if local > 0 {
            line(&mut text, &format!(".local_memory {local}"), None, None);
        }
        if let Some([x, y, z]) = k.lir.workgroup_size {
            line(&mut text, &format!(".workgroup_size {x}, {y}, {z}"), None, None);
        }
        let insts = regalloc::rewrite_indexed(&k.lir, &k.allocation);
        let vars = visible(k);
        let (reg, pred) = regalloc::names();
        let mut depth = 1usize;
        for (index, inst) in &insts {
            if matches!(inst.kind, lir::Kind::Else | lir::Kind::EndIf | lir::Kind::EndLoop) {
                depth = depth.saturating_sub(1);
            }
            let mut s = "    ".repeat(depth);
            let _ = write!(s, "{}", lir::inst_text(inst, &reg, &pred));
            line(&mut text, &s, Some(inst.span.clone()), vars.get(*index).cloned());
            if matches!(inst.kind, lir::Kind::If | lir::Kind::Else | lir::Kind::Loop) {
                depth += 1;
            }
        }
        line(&mut text, ".end", None, None);
    }
    (text, spans, held)
}

/// Line starts of a text, for 1-based lines and byte columns.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// 1-based line and column of a byte offset.
    fn position(&self, offset: usize) -> (u32, u32) {
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        ((line + 1) as u32, (offset - self.starts[line] + 1) as u32)
    }
}

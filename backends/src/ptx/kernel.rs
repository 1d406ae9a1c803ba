//! One kernel's PTX around its statements: the `.entry` with its parameters and register
//! declarations, the per-thread identity registers, and functions kept as `.func`s with their
//! calls.

use crate::names;

use super::{KEYWORDS, Kernel};

impl Kernel<'_, '_> {
    /// The name of function `f` of this kernel when it stays a function.
    pub(super) fn function_name(&self, f: usize) -> String {
        let entry = self.program.insts[self.program.functions[f].entry].offset;
        format!("wave_fn_{}_{entry}", names::safe(&self.program.kernel.name, KEYWORDS))
    }

    /// The register declarations every body needs.
    pub(super) fn declarations(&mut self) {
        let regs = self.program.registers;
        self.line(&format!(".reg .b32 %r<{regs}>;"));
        self.line(".reg .pred %p<4>;");
        if self.lowered.flags > 2 || self.lowered.uniform {
            self.line(&format!(".reg .pred %f<{}>;", self.lowered.flags.max(2)));
        }
        self.line(".reg .pred %act, %halted, %ptrue, %pfalse;");
        self.line(".reg .pred %q<8>;");
        self.line(".reg .b32 %t<24>;");
        self.line(".reg .b32 %live, %wave_id, %lane;");
        self.line(".reg .b64 %a<4>;");
        self.line(".reg .f64 %d<12>;");
        self.line(".reg .b16 %h<8>;");
    }

    /// Constants, the wave and the live lanes: linear thread index / 32, and the threads this
    /// warp has.
    pub(super) fn identity(&mut self) {
        self.line("mov.b32 %t0, 0;");
        self.line("setp.eq.b32 %ptrue, %t0, 0;");
        self.line("setp.ne.b32 %pfalse, %t0, 0;");
        self.line("mov.u32 %t0, %tid.x;");
        self.line("mov.u32 %t1, %tid.y;");
        self.line("mov.u32 %t2, %tid.z;");
        self.line("mov.u32 %t3, %ntid.x;");
        self.line("mov.u32 %t4, %ntid.y;");
        self.line("mov.u32 %t5, %ntid.z;");
        self.line("mad.lo.u32 %t1, %t2, %t4, %t1;");
        self.line("mad.lo.u32 %t0, %t1, %t3, %t0;");
        self.line("shr.u32 %wave_id, %t0, 5;");
        self.line("and.b32 %lane, %t0, 31;");
        self.line("mul.lo.u32 %t3, %t3, %t4;");
        self.line("mul.lo.u32 %t3, %t3, %t5;");
        self.line("shl.b32 %t6, %wave_id, 5;");
        self.line("sub.u32 %t6, %t3, %t6;");
        self.line("min.u32 %t6, %t6, 32;");
        self.line("shl.b32 %live, 1, %t6;");
        self.line("sub.u32 %live, %live, 1;");
    }

    /// Bytes of the register block a function kept as a function takes and returns: every
    /// WAVE register, then the four predicates as words (one `.param` array each way, as the
    /// PTX ABI that recursion needs allows a single return value).
    pub(super) fn block_bytes(&self) -> usize {
        4 * (self.program.registers + 4)
    }

    pub(super) fn function_header(&self, name: &str) -> String {
        let n = self.block_bytes();
        format!(
            ".func (.param .align 4 .b8 wave_out[{n}]) {name}(.param .b64 wave_in_mem, .param .align 4 .b8 wave_in[{n}])"
        )
    }

    pub(super) fn functions(&mut self) {
        let functions = self.lowered.functions.clone();
        if functions.is_empty() {
            return;
        }
        // Prototypes first: the functions may call each other in any order.
        for (f, _) in &functions {
            let line = format!("{};", self.function_header(&self.function_name(*f)));
            self.out.flush_left(&line);
        }
        let regs = self.program.registers;
        for (f, body) in &functions {
            let name = self.function_name(*f);
            let entry = self.program.functions[*f].entry;
            self.out.current = Some(self.program.insts[entry].offset);
            self.out.flush_left("");
            self.out.flush_left(&format!(
                "// function `{}`, kept as a function because the kernel recurses: every register is passed in and out",
                self.label_of(entry)
            ));
            let header = self.function_header(&name);
            self.out.flush_left(&header);
            self.out.flush_left("{");
            self.out.indent = 1;
            self.declarations();
            self.line(".reg .b64 %mem;");
            self.line("ld.param.b64 %mem, [wave_in_mem];");
            for r in 0..regs {
                self.line(&format!("ld.param.b32 %r{r}, [wave_in+{}];", 4 * r));
            }
            self.identity();
            for k in 0..4 {
                self.line(&format!("ld.param.b32 %t{}, [wave_in+{}];", 10 + k, 4 * (regs + k)));
                self.line(&format!("setp.ne.b32 %p{k}, %t{}, 0;", 10 + k));
            }
            self.ret_label = Some(self.label("return"));
            self.stmts(body);
            let ret = self.ret_label.take().unwrap_or_default();
            self.out.flush_left(&format!("{ret}:"));
            for r in 0..regs {
                self.line(&format!("st.param.b32 [wave_out+{}], %r{r};", 4 * r));
            }
            for k in 0..4 {
                self.line(&format!("selp.b32 %t{}, 1, 0, %p{k};", 10 + k));
                self.line(&format!("st.param.b32 [wave_out+{}], %t{};", 4 * (regs + k), 10 + k));
            }
            self.line("ret;");
            self.out.indent = 0;
            self.out.flush_left("}");
        }
    }

    pub(super) fn label_of(&self, entry: usize) -> String {
        let offset = self.program.insts[entry].offset;
        self.module.symbol_at(offset).map_or_else(|| format!("fn_{offset}"), |s| s.name.clone())
    }

    /// A call of a function kept as a function.
    pub(super) fn call(&mut self, callee: usize) {
        let name = self.function_name(callee);
        let regs = self.program.registers;
        let n = self.block_bytes();
        self.line("{");
        self.line(".param .b64 wave_call_mem;");
        self.line(&format!(".param .align 4 .b8 wave_call_in[{n}];"));
        self.line(&format!(".param .align 4 .b8 wave_call_out[{n}];"));
        self.line("st.param.b64 [wave_call_mem], %mem;");
        for r in 0..regs {
            self.line(&format!("st.param.b32 [wave_call_in+{}], %r{r};", 4 * r));
        }
        for k in 0..4 {
            self.line(&format!("selp.b32 %t{}, 1, 0, %p{k};", 10 + k));
            self.line(&format!("st.param.b32 [wave_call_in+{}], %t{};", 4 * (regs + k), 10 + k));
        }
        self.line(&format!("call (wave_call_out), {name}, (wave_call_mem, wave_call_in);"));
        for r in 0..regs {
            self.line(&format!("ld.param.b32 %r{r}, [wave_call_out+{}];", 4 * r));
        }
        for k in 0..4 {
            self.line(&format!("ld.param.b32 %t{}, [wave_call_out+{}];", 10 + k, 4 * (regs + k)));
            self.line(&format!("setp.ne.b32 %p{k}, %t{}, 0;", 10 + k));
        }
        self.line("}");
    }

    pub(super) fn kernel(&mut self) {
        let k = self.program.kernel;
        let name = names::safe(&k.name, KEYWORDS);
        if k.local_memory > 0 && !self.lowered.functions.is_empty() {
            // Functions reach the kernel's local memory through a module-scope array.
            self.out.flush_left(&format!(
                ".shared .align 16 .b8 wave_local_{name}[{}];",
                k.local_memory
            ));
        }
        self.functions();
        self.out.current = Some(k.code.start);
        self.out.flush_left("");
        self.out.flush_left(&format!(
            "// kernel `{}`: {} registers, {} bytes of local memory",
            k.name, self.program.registers, k.local_memory
        ));
        self.out.flush_left(&format!(".visible .entry {name}("));
        let mut params = vec!["    .param .u64 wave_mem".to_string()];
        for p in &k.params {
            params.push(format!("    .param .u32 wave_arg_{}", names::safe(&p.name, KEYWORDS)));
        }
        let n = params.len();
        for (i, p) in params.into_iter().enumerate() {
            self.out.flush_left(&format!("{p}{}", if i + 1 < n { "," } else { "" }));
        }
        self.out.flush_left(")");
        if let Some([x, y, z]) = k.workgroup_size {
            self.out.flush_left(&format!(".maxntid {x}, {y}, {z}"));
        }
        self.out.flush_left("{");
        self.out.indent = 1;
        self.declarations();
        self.line(".reg .b64 %mem;");
        if k.local_memory > 0 && self.lowered.functions.is_empty() {
            self.line(&format!(".shared .align 16 .b8 wave_local[{}];", k.local_memory));
        }
        // Parameters are preloaded into r0, r1, ...; every other register starts at zero.
        self.line("ld.param.u64 %mem, [wave_mem];");
        for (i, p) in k.params.iter().enumerate() {
            let line = format!(
                "ld.param.u32 %r{i}, [wave_arg_{}];   // {}: {}",
                names::safe(&p.name, KEYWORDS),
                p.name,
                p.ty.name()
            );
            self.line(&line);
        }
        for i in k.params.len()..self.program.registers {
            self.line(&format!("mov.b32 %r{i}, 0;"));
        }
        self.identity();
        for p in 0..4 {
            self.line(&format!("mov.pred %p{p}, %pfalse;"));
        }
        let body = self.lowered.body.clone();
        self.stmts(&body);
        self.out.current = None;
        self.line("ret;");
        self.out.indent = 0;
        self.out.flush_left("}");
    }
}

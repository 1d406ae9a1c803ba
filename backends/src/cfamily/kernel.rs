//! One kernel's C++ around its statements: the kernel function with its parameters and
//! locals, HIP's thread identity, and functions kept as functions.

use wave_wbin::ParamType;

use crate::names;

use super::{Dialect, Writer, flag_name};

impl Writer<'_, '_> {
    pub(super) fn kernel(&mut self) {
        let k = self.program.kernel;
        let d = self.d();
        let (u32t, i32t, _, _) = d.types();
        let name = names::safe(&k.name, self.config.keywords);
        self.functions();
        self.out.current = Some(k.code.start);
        self.out.flush_left("");
        self.out.flush_left(&format!(
            "// kernel `{}`: {} registers, {} bytes of local memory{}",
            k.name,
            self.program.registers,
            k.local_memory,
            if self.lowered.uniform {
                "; wave-uniform control flow (the kernel uses wave operations)"
            } else {
                ""
            }
        ));
        let params: Vec<(String, String, ParamType)> = k
            .params
            .iter()
            .map(|p| {
                let ty = match p.ty {
                    ParamType::F32 => "float",
                    ParamType::I32 => i32t,
                    _ => u32t,
                };
                (names::safe(&p.name, self.config.keywords), ty.to_string(), p.ty)
            })
            .collect();
        let wave_width = self.config.wave_width;
        match d {
            Dialect::Hip => {
                let bounds = k
                    .workgroup_size
                    .map(|s| format!("__launch_bounds__({}) ", s.iter().product::<u32>()))
                    .unwrap_or_default();
                let mut sig = vec!["uint8_t* __restrict__ wave_mem".to_string()];
                sig.extend(params.iter().map(|(n, t, _)| format!("{t} {n}")));
                self.out.flush_left(&format!(
                    "extern \"C\" __global__ void {bounds}{name}({}) {{",
                    sig.join(", ")
                ));
            }
            Dialect::Sycl => {
                self.out.flush_left(&format!("struct wave_kernel_{name} {{"));
                self.out.flush_left("    uint8_t* wave_mem;");
                for (n, t, _) in &params {
                    self.out.flush_left(&format!("    {t} {n};"));
                }
                if k.local_memory > 0 {
                    self.out.flush_left("    sycl::local_accessor<uint8_t, 1> wave_local_memory;");
                }
                self.out.flush_left(&format!(
                    "    [[sycl::reqd_sub_group_size({})]] void operator()(sycl::nd_item<3> wave_item) const {{",
                    wave_width.unwrap_or(32)
                ));
            }
            Dialect::Metal => {
                let mut sig = vec!["device uchar* wave_mem [[buffer(0)]]".to_string()];
                for (i, (n, t, _)) in params.iter().enumerate() {
                    sig.push(format!("constant {t}& {n} [[buffer({})]]", i + 1));
                }
                sig.push("uint3 wave_tid [[thread_position_in_threadgroup]]".into());
                sig.push("uint3 wave_ctaid [[threadgroup_position_in_grid]]".into());
                sig.push("uint3 wave_ntid [[threads_per_threadgroup]]".into());
                sig.push("uint3 wave_nctaid [[threadgroups_per_grid]]".into());
                sig.push("uint wave_lane [[thread_index_in_simdgroup]]".into());
                sig.push("uint wave_simd [[simdgroup_index_in_threadgroup]]".into());
                self.out.flush_left(&format!("kernel void {name}("));
                let n = sig.len();
                for (i, s) in sig.into_iter().enumerate() {
                    self.out.flush_left(&format!("    {s}{}", if i + 1 < n { "," } else { ") {" }));
                }
            }
        }
        self.out.indent = if d == Dialect::Sycl { 2 } else { 1 };
        // Thread identity.
        match d {
            Dialect::Hip => self.hip_identity(),
            Dialect::Sycl => {
                self.line("sycl::sub_group wave_sg = wave_item.get_sub_group();");
                self.line("const uint32_t wave_tx = wave_item.get_local_id(2), wave_ty = wave_item.get_local_id(1), wave_tz = wave_item.get_local_id(0);");
                self.line("const uint32_t wave_threads = wave_item.get_local_range(0) * wave_item.get_local_range(1) * wave_item.get_local_range(2);");
                self.line(&format!("const uint32_t wave_w = {};", wave_width.unwrap_or(32)));
                self.line("const uint32_t lane = wave_sg.get_local_linear_id(), wave_id = wave_sg.get_group_linear_id();");
                if k.local_memory > 0 {
                    self.line("uint8_t* wave_local = wave_local_memory.get_multi_ptr<sycl::access::decorated::no>().get();");
                }
            }
            Dialect::Metal => {
                self.line("const uint wave_threads = wave_ntid.x * wave_ntid.y * wave_ntid.z;");
                self.line("const uint wave_w = 32;");
                self.line("const uint lane = wave_lane, wave_id = wave_simd;");
            }
        }
        if k.local_memory > 0 {
            let words = k.local_memory.div_ceil(16);
            match d {
                Dialect::Hip => {
                    self.line(&format!("__shared__ uint4 wave_local_words[{words}];"));
                    self.line("uint8_t* wave_local = (uint8_t*)wave_local_words;");
                }
                Dialect::Metal => {
                    self.line(&format!("threadgroup uint4 wave_local_words[{words}];"));
                    self.line(
                        "threadgroup uchar* wave_local = (threadgroup uchar*)wave_local_words;",
                    );
                }
                Dialect::Sycl => {}
            }
        }
        // Registers: parameters first, then zeros.
        let regs = self.program.registers;
        let mut inits = Vec::new();
        for i in 0..regs {
            let init = match params.get(i) {
                Some((n, _, ParamType::F32)) => format!("wave_u({n})"),
                Some((n, _, _)) => format!("({u32t}){n}"),
                None => "0u".into(),
            };
            inits.push(format!("r{i} = {init}"));
        }
        for chunk in inits.chunks(8) {
            self.line(&format!("{u32t} {};", chunk.join(", ")));
        }
        self.line("bool p0 = false, p1 = false, p2 = false, p3 = false;");
        if !self.lowered.functions.is_empty() {
            self.line("bool halted = false;");
        }
        if self.lowered.flags > 0 {
            let flags: Vec<String> =
                (0..self.lowered.flags).map(|f| format!("{} = false", flag_name(f))).collect();
            for chunk in flags.chunks(12) {
                self.line(&format!("bool {};", chunk.join(", ")));
            }
        }
        self.line("(void)wave_threads; (void)lane; (void)wave_id; (void)wave_w;");
        let body = self.lowered.body.clone();
        self.stmts(&body);
        self.out.current = None;
        match d {
            Dialect::Sycl => {
                self.out.indent = 0;
                self.out.flush_left("    }");
                self.out.flush_left("};");
                let mut args = vec!["uint8_t* mem".to_string()];
                args.extend(params.iter().map(|(n, t, _)| format!("{t} {n}")));
                self.out.flush_left(&format!(
                    "/// Runs `{}`: `grid` in workgroups and `workgroup` in threads, both x, y, z (x varies fastest)."
                , k.name));
                self.out.flush_left(&format!(
                    "inline sycl::event launch_{name}(sycl::queue& queue, sycl::range<3> grid, sycl::range<3> workgroup, {}) {{",
                    args.join(", ")
                ));
                self.out.flush_left("    return queue.submit([&](sycl::handler& h) {");
                let mut fields = vec!["mem".to_string()];
                fields.extend(params.iter().map(|(n, _, _)| n.clone()));
                if k.local_memory > 0 {
                    fields.push(format!(
                        "sycl::local_accessor<uint8_t, 1>(sycl::range<1>({}), h)",
                        k.local_memory
                    ));
                }
                self.out.flush_left(&format!(
                    "        wave_kernel_{name} kernel{{{}}};",
                    fields.join(", ")
                ));
                self.out.flush_left("        h.parallel_for(sycl::nd_range<3>(");
                self.out.flush_left("            sycl::range<3>(grid[2] * workgroup[2], grid[1] * workgroup[1], grid[0] * workgroup[0]),");
                self.out.flush_left("            sycl::range<3>(workgroup[2], workgroup[1], workgroup[0])), kernel);");
                self.out.flush_left("    });");
                self.out.flush_left("}");
            }
            _ => {
                self.out.indent = 0;
                self.out.flush_left("}");
            }
        }
    }

    pub(super) fn hip_identity(&mut self) {
        self.line(
            "const uint32_t wave_tx = threadIdx.x, wave_ty = threadIdx.y, wave_tz = threadIdx.z;",
        );
        self.line("const uint32_t wave_threads = blockDim.x * blockDim.y * blockDim.z;");
        self.line(
            "const uint32_t wave_linear = wave_tx + blockDim.x * (wave_ty + blockDim.y * wave_tz);",
        );
        self.line("const uint32_t wave_w = warpSize;");
        self.line("const uint32_t lane = wave_linear % wave_w, wave_id = wave_linear / wave_w;");
    }

    /// The name of function `f` of this kernel when it stays a function.
    pub(super) fn function_name(&self, f: usize) -> String {
        let entry = self.program.insts[self.program.functions[f].entry].offset;
        format!("wave_fn_{}_{entry}", names::safe(&self.program.kernel.name, self.config.keywords))
    }

    /// Every register and predicate by reference, then the halted flag.
    pub(super) fn function_signature(&self, name: &str) -> String {
        let mut p =
            vec!["uint8_t* __restrict__ wave_mem".to_string(), "uint8_t* wave_local".to_string()];
        p.extend((0..self.program.registers).map(|r| format!("uint32_t& r{r}")));
        p.extend((0..4).map(|k| format!("bool& p{k}")));
        p.push("bool& halted".into());
        format!("__device__ static void {name}({})", p.join(", "))
    }

    /// Functions kept as functions (a recursive kernel on HIP): prototypes, then bodies.
    pub(super) fn functions(&mut self) {
        let functions = self.lowered.functions.clone();
        if functions.is_empty() {
            return;
        }
        self.out.flush_left("");
        for (f, _) in &functions {
            let sig = self.function_signature(&self.function_name(*f));
            self.out.flush_left(&format!("{sig};"));
        }
        for (f, body) in &functions {
            let entry = self.program.functions[*f].entry;
            let offset = self.program.insts[entry].offset;
            self.out.current = Some(offset);
            let label = self
                .module
                .symbol_at(offset)
                .map_or_else(|| format!("fn_{offset}"), |s| s.name.clone());
            self.out.flush_left("");
            self.out.flush_left(&format!(
                "// function `{label}`, kept as a function because the kernel recurses: registers are passed by reference"
            ));
            let sig = self.function_signature(&self.function_name(*f));
            self.out.flush_left(&format!("{sig} {{"));
            self.out.indent = 1;
            self.hip_identity();
            self.line(
                "(void)wave_threads; (void)lane; (void)wave_id; (void)wave_w; (void)wave_local;",
            );
            self.in_function = true;
            self.stmts(body);
            self.in_function = false;
            self.out.indent = 0;
            self.out.flush_left("}");
        }
    }
}

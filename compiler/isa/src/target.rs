//! Section 7: the queryable constants and capabilities, named target profiles, and the
//! occupancy equation with every other residency limit.
//!
//! The spec fixes only minimums; real targets exceed them. The profiles other than
//! `spec-minimum` carry figures typical of each vendor's current parts (documented per
//! profile) so that `wave info` and the editor's occupancy hints can answer "what limits this
//! kernel on an NVIDIA SM / AMD CU / Intel Xe-core / Apple GPU core". They are estimates for
//! planning, not a vendor's datasheet.

use crate::Capability;

/// The deepest structured control flow (`if`, `loop`) the toolchain accepts: the largest
/// divergence depth of any target profile. Deeper nesting is undefined behaviour on every
/// target (spec 5.4), so the assembler refuses it (E0167) and the backends refuse a `.wbin`
/// that has it, rather than follow it level by level.
pub const MAX_DIVERGENCE_DEPTH: usize = 1024;

/// The constants of spec 7.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    /// WAVE_WIDTH: threads per wave.
    pub wave_width: u32,
    /// MAX_REGISTERS: registers per thread.
    pub max_registers: u32,
    /// REGISTER_FILE_SIZE (F): bytes of register file per core.
    pub register_file_size: u32,
    /// LOCAL_MEMORY_SIZE (S): bytes of local memory per workgroup.
    pub local_memory_size: u32,
    /// MAX_WORKGROUP_SIZE: threads per workgroup.
    pub max_workgroup_size: u32,
    /// MAX_WORKGROUPS_PER_CORE.
    pub max_workgroups_per_core: u32,
    /// MAX_WAVES_PER_CORE.
    pub max_waves_per_core: u32,
    /// DEVICE_MEMORY_SIZE in bytes (the emulator's default allocation for the minimum profile).
    pub device_memory_size: u64,
    /// CLUSTER_SIZE: workgroups per cluster.
    pub cluster_size: u32,
    /// MAX_CALL_DEPTH.
    pub max_call_depth: u32,
    /// MIN_DIVERGENCE_DEPTH: nesting depth of structured control flow supported.
    pub divergence_depth: u32,
}

impl Constants {
    /// Each constant with its spec name and value, in the order of spec 7.1.
    pub fn entries(&self) -> [(&'static str, u64); 11] {
        [
            ("WAVE_WIDTH", self.wave_width.into()),
            ("MAX_REGISTERS", self.max_registers.into()),
            ("REGISTER_FILE_SIZE", self.register_file_size.into()),
            ("LOCAL_MEMORY_SIZE", self.local_memory_size.into()),
            ("MAX_WORKGROUP_SIZE", self.max_workgroup_size.into()),
            ("MAX_WORKGROUPS_PER_CORE", self.max_workgroups_per_core.into()),
            ("MAX_WAVES_PER_CORE", self.max_waves_per_core.into()),
            ("DEVICE_MEMORY_SIZE", self.device_memory_size),
            ("CLUSTER_SIZE", self.cluster_size.into()),
            ("MAX_CALL_DEPTH", self.max_call_depth.into()),
            ("MIN_DIVERGENCE_DEPTH", self.divergence_depth.into()),
        ]
    }
}

/// The minimums of spec 7.1 (DEVICE_MEMORY_SIZE has none; 16 MiB is the emulator default).
pub const MINIMUMS: Constants = Constants {
    wave_width: 8,
    max_registers: 64,
    register_file_size: 16384,
    local_memory_size: 16384,
    max_workgroup_size: 256,
    max_workgroups_per_core: 1,
    max_waves_per_core: 4,
    device_memory_size: 16 << 20,
    cluster_size: 1,
    max_call_depth: 8,
    divergence_depth: 32,
};

/// MMA tile dimensions, when CAP_MMA is present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaShape {
    /// MMA_M.
    pub m: u32,
    /// MMA_N.
    pub n: u32,
    /// MMA_K.
    pub k: u32,
}

/// A named target: constants plus capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Name used by `--target`.
    pub name: &'static str,
    /// What it models and where its figures come from.
    pub description: &'static str,
    /// The constants.
    pub constants: Constants,
    /// The capabilities present.
    pub capabilities: &'static [Capability],
    /// MMA tile shape, if CAP_MMA.
    pub mma: Option<MmaShape>,
}

impl Profile {
    /// Whether the profile has `cap`.
    pub fn has(&self, cap: Capability) -> bool {
        self.capabilities.contains(&cap)
    }
}

/// The named target profiles. The first is the default.
pub static PROFILES: &[Profile] = &[
    Profile {
        name: "spec-minimum",
        description: "exactly the minimums of WAVE v0.3 section 7.1, no optional capability",
        constants: MINIMUMS,
        capabilities: &[],
        mma: None,
    },
    Profile {
        name: "emulator",
        description: "the WAVE emulator: W = 32 by default (4, 8, 16, 32, 64 selectable), F64, \
                      64-bit and F32 atomics, recursion; a core holds any one workgroup of up \
                      to 1024 threads with 256 registers at any width",
        constants: Constants {
            wave_width: 32,
            max_registers: 256,
            register_file_size: 1024 * 1024,
            local_memory_size: 64 * 1024,
            max_workgroup_size: 1024,
            max_workgroups_per_core: 32,
            max_waves_per_core: 256,
            device_memory_size: 16 << 20,
            cluster_size: 1,
            max_call_depth: 64,
            divergence_depth: 256,
        },
        capabilities: &[
            Capability::F64,
            Capability::Atomic64,
            Capability::AtomicF32,
            Capability::Recursion,
        ],
        mma: None,
    },
    Profile {
        name: "nvidia",
        description: "an NVIDIA SM of the Ampere/Hopper class: warp 32, 64K 32-bit registers \
                      (256 KiB), up to 255 registers per thread, 48 KiB static shared memory \
                      per block, 1024 threads per block, 32 blocks and 64 warps per SM",
        constants: Constants {
            wave_width: 32,
            max_registers: 255,
            register_file_size: 256 * 1024,
            local_memory_size: 48 * 1024,
            max_workgroup_size: 1024,
            max_workgroups_per_core: 32,
            max_waves_per_core: 64,
            device_memory_size: 80 << 30,
            cluster_size: 16,
            max_call_depth: 64,
            divergence_depth: 1024,
        },
        capabilities: &[
            Capability::F64,
            Capability::Atomic64,
            Capability::AtomicF32,
            Capability::Mma,
            Capability::Recursion,
            Capability::Cluster,
        ],
        mma: Some(MmaShape { m: 16, n: 8, k: 16 }),
    },
    Profile {
        name: "amd-cdna",
        description: "an AMD CDNA compute unit (MI200/MI300 class): wavefront 64, 4 SIMDs with \
                      512 VGPRs of 64 lanes each (512 KiB), 64 KiB LDS, 1024 threads per \
                      workgroup, 32 wavefronts per CU",
        constants: Constants {
            wave_width: 64,
            max_registers: 512,
            register_file_size: 512 * 1024,
            local_memory_size: 64 * 1024,
            max_workgroup_size: 1024,
            max_workgroups_per_core: 16,
            max_waves_per_core: 32,
            device_memory_size: 128 << 30,
            cluster_size: 1,
            max_call_depth: 64,
            divergence_depth: 1024,
        },
        capabilities: &[
            Capability::F64,
            Capability::Atomic64,
            Capability::AtomicF32,
            Capability::Mma,
            Capability::Recursion,
        ],
        mma: Some(MmaShape { m: 16, n: 16, k: 16 }),
    },
    Profile {
        name: "amd-rdna",
        description: "an AMD RDNA work-group processor in wave32 mode: 2 SIMD32 per CU with \
                      128 KiB of VGPRs each, 64 KiB LDS, 1024 threads per workgroup, 32 waves \
                      per CU",
        constants: Constants {
            wave_width: 32,
            max_registers: 256,
            register_file_size: 256 * 1024,
            local_memory_size: 64 * 1024,
            max_workgroup_size: 1024,
            max_workgroups_per_core: 32,
            max_waves_per_core: 32,
            device_memory_size: 16 << 30,
            cluster_size: 1,
            max_call_depth: 64,
            divergence_depth: 1024,
        },
        capabilities: &[
            Capability::F64,
            Capability::Atomic64,
            Capability::AtomicF32,
            Capability::Recursion,
        ],
        mma: None,
    },
    Profile {
        name: "intel",
        description: "an Intel Xe-core (Arc/Data Center GPU class): sub-group 16, 8 vector \
                      engines x 8 threads x 4 KiB GRF (256 KiB), 64 KiB SLM, 1024 work-items \
                      per work-group, 64 sub-groups per Xe-core",
        constants: Constants {
            wave_width: 16,
            max_registers: 128,
            register_file_size: 256 * 1024,
            local_memory_size: 64 * 1024,
            max_workgroup_size: 1024,
            max_workgroups_per_core: 64,
            max_waves_per_core: 64,
            device_memory_size: 16 << 30,
            cluster_size: 1,
            max_call_depth: 64,
            divergence_depth: 1024,
        },
        capabilities: &[Capability::F64, Capability::Atomic64, Capability::AtomicF32],
        mma: None,
    },
    Profile {
        name: "apple",
        description: "an Apple GPU core (G13/M-series class): SIMD-group 32, up to 128 \
                      registers per thread, about 208 KiB of register file, 32 KiB threadgroup \
                      memory, 1024 threads per threadgroup, 24 SIMD-groups per core; no F64",
        constants: Constants {
            wave_width: 32,
            max_registers: 128,
            register_file_size: 208 * 1024,
            local_memory_size: 32 * 1024,
            max_workgroup_size: 1024,
            max_workgroups_per_core: 24,
            max_waves_per_core: 24,
            device_memory_size: 16 << 30,
            cluster_size: 1,
            max_call_depth: 32,
            divergence_depth: 1024,
        },
        capabilities: &[Capability::Atomic64, Capability::AtomicF32],
        mma: None,
    },
];

/// The profile named `name`.
pub fn profile(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// What a kernel asks of a core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelResources {
    /// R: registers per thread.
    pub registers: u32,
    /// Bytes of local memory per workgroup.
    pub local_memory: u32,
    /// Threads per workgroup (x * y * z).
    pub workgroup_threads: u32,
}

/// The resource that bounds residency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The register file: floor(F / (R * W * 4)).
    Registers,
    /// MAX_WAVES_PER_CORE.
    WavesPerCore,
    /// LOCAL_MEMORY_SIZE shared by resident workgroups.
    LocalMemory,
    /// MAX_WORKGROUPS_PER_CORE.
    WorkgroupsPerCore,
}

impl Limit {
    /// A short description.
    pub fn describe(self) -> &'static str {
        match self {
            Limit::Registers => "registers (register file size / (R * W * 4))",
            Limit::WavesPerCore => "waves per core (MAX_WAVES_PER_CORE)",
            Limit::LocalMemory => "local memory (LOCAL_MEMORY_SIZE)",
            Limit::WorkgroupsPerCore => "workgroups per core (MAX_WORKGROUPS_PER_CORE)",
        }
    }

    /// The resource's name alone (`registers`, `waves per core`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Limit::Registers => "registers",
            Limit::WavesPerCore => "waves per core",
            Limit::LocalMemory => "local memory",
            Limit::WorkgroupsPerCore => "workgroups per core",
        }
    }
}

/// Why a kernel cannot be dispatched on a target (spec 2.6: the dispatch MUST be rejected).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// R above MAX_REGISTERS.
    TooManyRegisters {
        /// R.
        registers: u32,
        /// MAX_REGISTERS.
        max: u32,
    },
    /// Workgroup above MAX_WORKGROUP_SIZE.
    WorkgroupTooLarge {
        /// Threads per workgroup.
        threads: u32,
        /// MAX_WORKGROUP_SIZE.
        max: u32,
    },
    /// Local memory above LOCAL_MEMORY_SIZE.
    TooMuchLocalMemory {
        /// Bytes asked.
        bytes: u32,
        /// LOCAL_MEMORY_SIZE.
        max: u32,
    },
    /// One workgroup's waves do not fit in the register file or wave slots of a core.
    WorkgroupDoesNotFit {
        /// Waves of one workgroup.
        waves: u32,
        /// Waves that fit.
        fit: u32,
        /// What bounds them.
        limit: Limit,
    },
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::TooManyRegisters { registers, max } => {
                write!(f, "{registers} registers per thread exceed MAX_REGISTERS = {max}")
            }
            Rejection::WorkgroupTooLarge { threads, max } => {
                write!(f, "{threads} threads per workgroup exceed MAX_WORKGROUP_SIZE = {max}")
            }
            Rejection::TooMuchLocalMemory { bytes, max } => {
                write!(f, "{bytes} bytes of local memory exceed LOCAL_MEMORY_SIZE = {max}")
            }
            Rejection::WorkgroupDoesNotFit { waves, fit, limit } => write!(
                f,
                "a workgroup needs {waves} resident waves but only {fit} fit, limited by {}",
                limit.describe()
            ),
        }
    }
}

/// Residency of a kernel on one core of a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// ceil(workgroup_threads / W).
    pub waves_per_workgroup: u32,
    /// The occupancy equation: floor(F / (R * W * 4)).
    pub waves_by_registers: u32,
    /// Resident workgroups allowed by each limit: registers, waves, local memory, workgroups.
    pub workgroups_by: [(Limit, u32); 4],
    /// Resident workgroups per core (the minimum of `workgroups_by`).
    pub resident_workgroups: u32,
    /// Resident waves per core.
    pub resident_waves: u32,
    /// Which limit binds (the first minimal one).
    pub limit: Limit,
    /// Resident waves / MAX_WAVES_PER_CORE, in percent.
    pub percent: u32,
    /// When registers bind: the largest R that fits one more workgroup, if any.
    pub registers_for_next_workgroup: Option<u32>,
    /// Why the kernel cannot be dispatched, if it cannot.
    pub rejections: Vec<Rejection>,
}

/// Computes the occupancy of a kernel with `resources` on a target with `constants`.
pub fn occupancy(constants: &Constants, resources: KernelResources) -> Occupancy {
    let w = constants.wave_width.max(1);
    let r = resources.registers.max(1);
    let threads = resources.workgroup_threads.max(1);
    let waves_per_workgroup = threads.div_ceil(w);
    let waves_by_registers =
        (u64::from(constants.register_file_size) / (u64::from(r) * u64::from(w) * 4)) as u32;
    let by_registers = waves_by_registers / waves_per_workgroup;
    let by_waves = constants.max_waves_per_core / waves_per_workgroup;
    // A kernel without local memory is not limited by it.
    let by_local =
        constants.local_memory_size.checked_div(resources.local_memory).unwrap_or(u32::MAX);
    let by_workgroups = constants.max_workgroups_per_core;
    let workgroups_by = [
        (Limit::Registers, by_registers),
        (Limit::WavesPerCore, by_waves),
        (Limit::LocalMemory, by_local),
        (Limit::WorkgroupsPerCore, by_workgroups),
    ];
    let (limit, resident_workgroups) =
        workgroups_by.iter().copied().min_by_key(|(_, n)| *n).unwrap_or((Limit::Registers, 0));
    let resident_waves = resident_workgroups.saturating_mul(waves_per_workgroup);
    let mut rejections = Vec::new();
    if resources.registers > constants.max_registers {
        rejections.push(Rejection::TooManyRegisters {
            registers: resources.registers,
            max: constants.max_registers,
        });
    }
    if threads > constants.max_workgroup_size {
        rejections
            .push(Rejection::WorkgroupTooLarge { threads, max: constants.max_workgroup_size });
    }
    if resources.local_memory > constants.local_memory_size {
        rejections.push(Rejection::TooMuchLocalMemory {
            bytes: resources.local_memory,
            max: constants.local_memory_size,
        });
    }
    if rejections.is_empty() && resident_workgroups == 0 {
        let (limit, fit) = if by_registers == 0 {
            (Limit::Registers, waves_by_registers)
        } else {
            (Limit::WavesPerCore, constants.max_waves_per_core)
        };
        rejections.push(Rejection::WorkgroupDoesNotFit { waves: waves_per_workgroup, fit, limit });
    }
    let registers_for_next_workgroup = (limit == Limit::Registers && rejections.is_empty())
        .then(|| {
            let want = u64::from(resident_workgroups + 1) * u64::from(waves_per_workgroup);
            (u64::from(constants.register_file_size) / (want * u64::from(w) * 4)) as u32
        })
        .filter(|r| *r >= 1);
    Occupancy {
        waves_per_workgroup,
        waves_by_registers,
        workgroups_by,
        resident_workgroups,
        resident_waves,
        limit,
        percent: (u64::from(resident_waves) * 100 / u64::from(constants.max_waves_per_core.max(1)))
            as u32,
        registers_for_next_workgroup,
        rejections,
    }
}

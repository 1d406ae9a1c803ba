//! What kernels and launches are described with: element types, parameters, options, sources.

use std::fmt;

use wave_kernel::Language;
use wave_kernel::hir::Scalar;

/// Alignment of each buffer in a launch's memory.
pub(super) const ALIGN: usize = 256;

/// The element type of a buffer, or the type of a scalar parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    /// `bool` (a scalar parameter passed as 0 or 1).
    Bool,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `f16`.
    F16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `u8` (a buffer's element only; the kernel reads it as a `u32`).
    U8,
    /// `u16` (as `u8`).
    U16,
}

impl Elem {
    /// The name in kernel annotations (`f32`).
    pub fn name(self) -> &'static str {
        match self {
            Elem::Bool => "bool",
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::F16 => "f16",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::U8 => "u8",
            Elem::U16 => "u16",
        }
    }

    /// Bytes per element in a buffer.
    pub fn size(self) -> usize {
        match self {
            Elem::U8 => 1,
            Elem::F16 | Elem::U16 => 2,
            Elem::F64 => 8,
            Elem::Bool | Elem::I32 | Elem::U32 | Elem::F32 => 4,
        }
    }

    pub(super) fn of(s: Scalar) -> Elem {
        match s {
            Scalar::Bool => Elem::Bool,
            Scalar::I32 => Elem::I32,
            Scalar::U32 => Elem::U32,
            Scalar::F16 => Elem::F16,
            Scalar::F32 => Elem::F32,
            Scalar::F64 => Elem::F64,
            Scalar::U8 => Elem::U8,
            Scalar::U16 => Elem::U16,
        }
    }

    pub(super) fn from_name(name: &str) -> Option<Elem> {
        [Elem::Bool, Elem::I32, Elem::U32, Elem::F16, Elem::F32, Elem::F64, Elem::U8, Elem::U16]
            .into_iter()
            .find(|e| e.name() == name)
    }
}

/// A plain value type that buffers hold: `f32`, `f64`, `i32`, `u32`.
pub trait Element: Copy + Default + 'static {
    /// Its element type.
    const ELEM: Elem;
    /// Its little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// The value of `bytes` (exactly [`Elem::size`] of them).
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $e:expr) => {
        impl Element for $t {
            const ELEM: Elem = $e;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    };
}
element!(f32, Elem::F32);
element!(f64, Elem::F64);
element!(i32, Elem::I32);
element!(u32, Elem::U32);
element!(u8, Elem::U8);
element!(u16, Elem::U16);

/// What a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A buffer of `elem` (unknown for assembly and `.wbin`, whose pointers are untyped);
    /// `written` when the kernel may store into it (or, unknown, may).
    Buffer {
        /// The element type, where the source says.
        elem: Option<Elem>,
        /// Whether the kernel may write it.
        written: bool,
    },
    /// A scalar.
    Scalar(Elem),
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// What it takes.
    pub kind: ParamKind,
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ParamKind::Buffer { elem: Some(e), .. } => write!(f, "{}: {}[:]", self.name, e.name()),
            ParamKind::Buffer { elem: None, .. } => write!(f, "{}: ptr", self.name),
            ParamKind::Scalar(e) => write!(f, "{}: {}", self.name, e.name()),
        }
    }
}

/// A kernel of a [`Program`](super::Program): its name, parameters and declared workgroup size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelInfo {
    /// Its name.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// The workgroup size the source declares.
    pub workgroup_size: Option<[u32; 3]>,
}

impl KernelInfo {
    /// `name(a: f32[:], n: u32)`.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|p| p.to_string()).collect();
        format!("{}({})", self.name, params.join(", "))
    }
}

/// How to compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// Optimisation level, 0 to 3 (`-O`).
    pub opt_level: u8,
    /// The most registers a kernel may use before it spills.
    pub max_registers: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { opt_level: 2, max_registers: 64 }
    }
}

/// What to compile or load.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A kernel in Python, Rust, C++ or TypeScript.
    Kernel {
        /// The whole file's text.
        text: &'a str,
        /// Its language.
        language: Language,
    },
    /// WAVE assembly.
    Assembly(&'a str),
    /// A `.wbin`.
    Wbin(&'a [u8]),
}

//! MIR: a kernel as a control-flow graph of basic blocks in SSA form.
//!
//! Every value is defined once; phi nodes merge values where control flow joins. They are
//! placed at the iterated dominance frontiers of each variable's definitions (Cytron et al.),
//! then the variables are renamed along the dominator tree. Memory accesses are lowered to
//! explicit byte addresses (`base + index << log2(size)`) in an address space: device memory
//! for buffer parameters, Local Memory for local arrays (laid out one after another).
//!
//! HIR's structured control flow becomes blocks with explicit branches: an `if` is a diamond,
//! a loop a header that tests its condition, a body, and (for `for`) a latch that steps the
//! variable; `break` jumps to the loop's exit and `continue` to its header (or latch). The graph
//! is therefore reducible, with one header per loop, which is what LIR needs to recover
//! structured `if`/`loop` instructions.
//!
//! The types are here; the rest is in rooms, in the order a kernel meets them: [`lower`]
//! (from HIR), `ssa` (SSA construction, shared with [`mem2reg`]), `analysis` (what passes
//! ask of a function without changing it), [`verify`] and [`print()`]. None of them knows
//! about the passes that run on MIR (`opt`) or what comes after.

mod analysis;
mod half;
mod lower;
mod parse;
mod print;
mod ssa;
mod verify;

pub use analysis::{DomTree, upper_bounds};
pub(crate) use analysis::{common_dominator, natural_loops, simple_loop};
pub use half::{f16_bits, f16_value};
pub use lower::lower;
pub use parse::{ParseError, parse};
pub use print::{line_spans, print};
pub use ssa::mem2reg;
pub(crate) use ssa::{Raw, rebuild};
pub use verify::verify;

use std::collections::HashMap;

use wave_diag::Span;

use crate::hir::{self, BinOp, Intrinsic, Scalar, Special, Ty, UnOp, VarId};

/// An SSA value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// A basic block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

/// An address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Device memory.
    Device,
    /// The workgroup's Local Memory.
    Local,
    /// A private array of the thread (the HIR variable): its accesses take the element
    /// index, not a byte address. mem2reg turns the arrays indexed only by constants into
    /// SSA values; LIR places the others in the thread's frame in Local Memory.
    Private(VarId),
}

/// A private array: each thread's own, zero-filled on entry.
#[derive(Clone, Debug, PartialEq)]
pub struct PrivateArray {
    /// The HIR variable.
    pub var: VarId,
    /// Its source name.
    pub name: String,
    /// The element type.
    pub elem: Scalar,
    /// The number of elements.
    pub len: u32,
}

/// What an instruction computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// An integer constant (bits of the value's type).
    Int(i64),
    /// A float constant.
    Float(f64),
    /// `true`/`false`.
    Bool(bool),
    /// Parameter `n` (a buffer parameter is its byte address).
    Param(u32),
    /// A special register, or a value computed from them.
    Special(Special),
    /// A unary operation.
    Unary(UnOp, Value),
    /// A binary operation.
    Binary(BinOp, Value, Value),
    /// A conversion to the result type.
    Cast(Value),
    /// `cond ? a : b`.
    Select(Value, Value, Value),
    /// A load of the result type from a byte address.
    Load(Space, Value),
    /// A store of a value to a byte address.
    Store(Space, Value, Value),
    /// An atomic read-modify-write at a byte address, returning the old value.
    Atomic(hir::AtomicOp, Space, Value, Value),
    /// A barrier, fence, wave operation or math function.
    Call(Intrinsic, Vec<Value>),
}

impl Op {
    /// The values it reads.
    pub fn operands(&self) -> Vec<Value> {
        match self {
            Op::Int(_) | Op::Float(_) | Op::Bool(_) | Op::Param(_) | Op::Special(_) => Vec::new(),
            Op::Unary(_, a) | Op::Cast(a) | Op::Load(_, a) => vec![*a],
            Op::Binary(_, a, b) | Op::Store(_, a, b) | Op::Atomic(_, _, a, b) => vec![*a, *b],
            Op::Select(c, a, b) => vec![*c, *a, *b],
            Op::Call(_, args) => args.clone(),
        }
    }

    /// Whether it has an effect beyond its result (it must stay even if unused).
    pub fn has_effect(&self) -> bool {
        matches!(
            self,
            Op::Store(..) | Op::Atomic(..) | Op::Call(Intrinsic::Barrier | Intrinsic::Fence, _)
        )
    }

    /// Replaces each value it reads by `f` of it.
    pub fn map_operands(&mut self, f: &mut dyn FnMut(Value) -> Value) {
        match self {
            Op::Int(_) | Op::Float(_) | Op::Bool(_) | Op::Param(_) | Op::Special(_) => {}
            Op::Unary(_, a) | Op::Cast(a) | Op::Load(_, a) => *a = f(*a),
            Op::Binary(_, a, b) | Op::Store(_, a, b) | Op::Atomic(_, _, a, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            Op::Select(c, a, b) => {
                *c = f(*c);
                *a = f(*a);
                *b = f(*b);
            }
            Op::Call(_, args) => args.iter_mut().for_each(|a| *a = f(*a)),
        }
    }
}

/// An instruction: an operation and the value it defines (if it defines one).
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// The value defined.
    pub dst: Option<Value>,
    /// What it computes.
    pub op: Op,
    /// The source it comes from.
    pub span: Span,
}

/// A phi node: the value of `var` on entry, from each predecessor.
#[derive(Clone, Debug, PartialEq)]
pub struct Phi {
    /// The value defined.
    pub dst: Value,
    /// The HIR variable it merges (for names in the text form).
    pub var: VarId,
    /// One incoming value per predecessor.
    pub args: Vec<(BlockId, Value)>,
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// Go to a block.
    Jump(BlockId),
    /// Go to the first block when the value is true, else to the second.
    Branch(Value, BlockId, BlockId),
    /// The thread ends.
    Return,
}

impl Term {
    /// The blocks it can go to.
    pub fn successors(&self) -> Vec<BlockId> {
        match self {
            Term::Jump(b) => vec![*b],
            Term::Branch(_, a, b) => vec![*a, *b],
            Term::Return => Vec::new(),
        }
    }
}

/// A basic block.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Phi nodes, first.
    pub phis: Vec<Phi>,
    /// The instructions.
    pub insts: Vec<Inst>,
    /// How it ends.
    pub term: Term,
}

/// A kernel in MIR.
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    /// Its name.
    pub name: String,
    /// Parameters: name and type.
    pub params: Vec<(String, Ty)>,
    /// Blocks; the first is the entry.
    pub blocks: Vec<Block>,
    /// The type of each value.
    pub types: Vec<Ty>,
    /// Bytes of Local Memory (the local arrays, one after another).
    pub local_memory: u32,
    /// The private arrays (those mem2reg promoted are gone from the code, not from here).
    pub private: Vec<PrivateArray>,
    /// A workgroup size given in the source.
    pub workgroup_size: Option<[u32; 3]>,
    /// The source variables each value is the value of (for the debugger's variables):
    /// recorded when SSA is built, and carried to a value's substitute by the passes.
    pub names: HashMap<Value, Vec<String>>,
}

impl Func {
    /// Records that `v` is the value of the source variable `name`.
    pub fn name_value(&mut self, v: Value, name: &str) {
        // (Passes that rebuild SSA name their variables `` or `tmp.N`: not the source's.)
        if name.is_empty() || name.starts_with("tmp.") {
            return;
        }
        // A second variable of one name (`x#2`: a shadowing `let`, a second loop's `i`, a
        // helper inlined twice) is the source's `x`.
        let name = name.split('#').next().unwrap_or(name);
        let names = self.names.entry(v).or_default();
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }

    /// The names of `from` are also those of `to` (which replaces it).
    pub fn carry_names(&mut self, from: Value, to: Value) {
        if from == to {
            return;
        }
        if let Some(names) = self.names.get(&from).cloned() {
            for n in names {
                self.name_value(to, &n);
            }
        }
    }
}

/// Drops blocks no path from the entry reaches, renumbering the others.
pub(crate) fn remove_unreachable(func: &mut Func) {
    let rpo = func.reverse_postorder();
    let mut keep: Vec<BlockId> = rpo.clone();
    keep.sort();
    let mut new_id = vec![None; func.blocks.len()];
    for (i, b) in keep.iter().enumerate() {
        new_id[b.0 as usize] = Some(BlockId(i as u32));
    }
    let map = |b: BlockId| new_id[b.0 as usize].unwrap_or(BlockId(0));
    let old = std::mem::take(&mut func.blocks);
    for (i, mut block) in old.into_iter().enumerate() {
        if new_id[i].is_none() {
            continue;
        }
        block.term = match block.term {
            Term::Jump(t) => Term::Jump(map(t)),
            Term::Branch(c, a, b) => Term::Branch(c, map(a), map(b)),
            Term::Return => Term::Return,
        };
        for phi in &mut block.phis {
            phi.args.retain(|(p, _)| new_id[p.0 as usize].is_some());
            for (p, _) in &mut phi.args {
                *p = map(*p);
            }
        }
        func.blocks.push(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(src: &str) -> Func {
        let (kernels, d) = crate::hir(src, crate::Language::Python);
        assert!(d.is_empty(), "{d:?}");
        lower(&kernels[0])
    }

    const LOOP: &str = "import wave\n@wave.kernel\ndef k(out: u32[:], n: u32):\n    s = 0\n    i = 0\n    while i < 10:\n        i += 1\n        if i == 3:\n            continue\n        if i > 7:\n            break\n        s += i\n    out[0] = u32(s + i)\n";

    #[test]
    fn the_verifier_accepts_lowered_kernels_and_finds_broken_ones() {
        let f = lowered(LOOP);
        assert_eq!(verify(&f), Vec::<String>::new(), "{}", print(std::slice::from_ref(&f)));
        // Two loop-carried variables: two phis in the header.
        let header = f.blocks.iter().position(|b| b.phis.len() == 2).expect("a loop header");
        assert!(header > 0);
        // A phi argument dropped.
        let mut broken = f.clone();
        broken.blocks[header].phis[0].args.pop();
        assert!(
            verify(&broken).iter().any(|p| p.contains("has arguments from")),
            "{:?}",
            verify(&broken)
        );
        // A use before its definition.
        let mut broken = f.clone();
        let last = broken.blocks.len() - 1;
        let late = broken.blocks[last].insts.iter().find_map(|i| i.dst).expect("a value");
        broken.blocks[0].insts.push(Inst {
            dst: None,
            op: Op::Store(Space::Device, late, late),
            span: 0..0,
        });
        assert!(
            verify(&broken).iter().any(|p| p.contains("does not dominate")),
            "{:?}",
            verify(&broken)
        );
        // A value defined twice.
        let mut broken = f;
        let first = broken.blocks[0].insts[0].clone();
        broken.blocks[0].insts.push(first);
        assert!(verify(&broken).iter().any(|p| p.contains("defined twice")));
    }

    #[test]
    fn a_variable_read_before_any_write_is_zero_and_unreachable_code_is_dropped() {
        let f = lowered(
            "import wave\n@wave.kernel\ndef k(out: f32[:], c: bool):\n    if c:\n        x = 1.5\n    out[0] = x\n    return\n    out[1] = 2.0\n",
        );
        assert!(verify(&f).is_empty());
        let text = print(std::slice::from_ref(&f));
        assert!(
            text.contains("const 0.0 : f32"),
            "x is 0.0 on the path that skips the if:\n{text}"
        );
        assert!(text.contains("= phi f32"), "{text}");
        assert_eq!(
            text.matches("store.device").count(),
            1,
            "the store after return is gone:\n{text}"
        );
    }

    #[test]
    fn local_arrays_are_laid_out_and_addressed_in_local_memory() {
        let f = lowered(
            "import wave\n@wave.kernel\ndef k(out: f32[:]):\n    a = wave.local_array(u32, 3)\n    b = wave.local_array(f64, 2)\n    b[1] = 2.0\n    a[2] = 7\n    wave.barrier()\n    out[0] = f32(b[1])\n",
        );
        assert_eq!(f.local_memory, 16 + 16, "a: 12 bytes, b aligned to 16: 16 bytes");
        let text = print(std::slice::from_ref(&f));
        assert!(text.contains("store.local") && text.contains("load.local"), "{text}");
        assert!(text.contains("const 16 : u32"), "b starts at byte 16:\n{text}");
        assert!(text.contains("call barrier()"), "{text}");
    }
}

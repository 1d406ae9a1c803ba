//! What passes and analyses may assume about an instruction beyond its operands: its part in
//! where control goes next, memory, side effects, other lanes. Each row of the table carries
//! its [`Flags`]; the kinds of row share the constants here.

/// Where control goes after an instruction: its part in structured control flow, calls and
/// the end of a thread. Every control-flow analysis matches this, not the opcode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Flow {
    /// To the next instruction.
    #[default]
    Next,
    /// `if`: into the block, or past its `else` or `endif` for lanes whose predicate fails.
    If,
    /// `else`: the lanes of the `if` arm go to the `endif`; the others enter here.
    Else,
    /// `endif`: the lanes of both arms meet.
    Endif,
    /// `loop`: opens a loop.
    Loop,
    /// `endloop`: back to the `loop`.
    Endloop,
    /// `break`: the lanes whose predicate holds leave the innermost loop.
    Break,
    /// `continue`: the lanes whose predicate holds go back to the innermost loop's start.
    Continue,
    /// `call`: to a function, and back to the next instruction on `return`.
    Call,
    /// `return`: back to the instruction after the call.
    Return,
    /// `halt`: the thread ends.
    Halt,
}

impl Flags {
    /// Ordered against every memory access (barriers, fences, `wait`, calls): an instruction
    /// a pass may not move, guard or speculate.
    pub fn orders_memory(self) -> bool {
        self.reads_memory && self.writes_memory && !self.lane_varying
    }
}

impl Flow {
    /// Whether it opens a block (`if`, `loop`).
    pub fn opens(self) -> bool {
        matches!(self, Flow::If | Flow::Loop)
    }

    /// Whether it closes a block (`endif`, `endloop`).
    pub fn closes(self) -> bool {
        matches!(self, Flow::Endif | Flow::Endloop)
    }
}

/// What passes and analyses may assume about an instruction, beyond its operands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags {
    /// Where control goes after it.
    pub flow: Flow,
    /// Reads Local or Device Memory.
    pub reads_memory: bool,
    /// Writes Local or Device Memory.
    pub writes_memory: bool,
    /// Has an effect besides its destination registers (memory, synchronisation, ending the
    /// thread): it may not be removed, duplicated or moved past another such instruction.
    pub side_effects: bool,
    /// Reads other lanes of its wave, so it may not be guarded or speculated per lane.
    pub cross_lane: bool,
    /// Its result may differ between threads even when its register inputs agree (memory,
    /// other lanes, a thread's own special registers).
    pub lane_varying: bool,
    /// Its result is the bits of a source or of its immediate, unchanged (moves, `select`,
    /// shuffles): on a 64-bit register pair it is the same instruction once per half.
    pub copies: bool,
}

/// Arithmetic: nothing but its registers.
pub const PURE: Flags = Flags {
    flow: Flow::Next,
    reads_memory: false,
    writes_memory: false,
    side_effects: false,
    cross_lane: false,
    lane_varying: false,
    copies: false,
};
/// Moves and `select`: a source's bits, unchanged.
pub const COPY: Flags = Flags { copies: true, ..PURE };
/// Loads.
pub const LOAD: Flags = Flags { reads_memory: true, lane_varying: true, ..PURE };
/// Stores.
pub const STORE: Flags = Flags { writes_memory: true, side_effects: true, ..PURE };
/// Atomics: read, write and return what was there.
pub const ATOMIC: Flags = Flags {
    reads_memory: true,
    writes_memory: true,
    side_effects: true,
    lane_varying: true,
    ..PURE
};
/// Wave operations: they read other lanes.
pub const WAVE: Flags = Flags { cross_lane: true, lane_varying: true, ..PURE };
/// Shuffles and `wave_broadcast`: another lane's bits, unchanged.
pub const SHUFFLE: Flags = Flags { copies: true, ..WAVE };
/// `mov_special`: a thread's own ids.
pub const VARYING: Flags = Flags { lane_varying: true, ..PURE };
/// Calls, barriers, fences and `wait`: ordered against every memory access.
pub const SYNC: Flags =
    Flags { reads_memory: true, writes_memory: true, side_effects: true, ..PURE };
/// A control-flow instruction with no other effect.
pub const fn flow(flow: Flow) -> Flags {
    Flags { flow, ..PURE }
}
/// `call`: the function may do anything.
pub const CALL: Flags = Flags { flow: Flow::Call, ..SYNC };
/// `halt`.
pub const HALT: Flags = Flags { flow: Flow::Halt, side_effects: true, ..PURE };

//! What passes and analyses may assume about an instruction beyond its operands: its part in
//! structured control flow, memory, side effects, other lanes. Each row of the table carries
//! its [`Flags`]; the kinds of row share the constants here.

/// An instruction's part in structured control flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Block {
    /// None: it runs in line.
    #[default]
    None,
    /// Opens a block (`if`, `loop`).
    Open,
    /// Divides an `if` block (`else`).
    Else,
    /// Closes a block (`endif`, `endloop`).
    Close,
    /// Leaves or restarts the innermost loop (`break`, `continue`).
    Exit,
}

/// What passes and analyses may assume about an instruction, beyond its operands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags {
    /// Its part in structured control flow.
    pub block: Block,
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
    /// Ends the thread (`halt`) or the function (`return`).
    pub terminates: bool,
}

/// Arithmetic: nothing but its registers.
pub const PURE: Flags = Flags {
    block: Block::None,
    reads_memory: false,
    writes_memory: false,
    side_effects: false,
    cross_lane: false,
    lane_varying: false,
    terminates: false,
};
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
/// `mov_special`: a thread's own ids.
pub const VARYING: Flags = Flags { lane_varying: true, ..PURE };
/// Calls, barriers, fences and `wait`: ordered against every memory access.
pub const SYNC: Flags =
    Flags { reads_memory: true, writes_memory: true, side_effects: true, ..PURE };
/// `if`, `loop`.
pub const OPEN: Flags = Flags { block: Block::Open, ..PURE };
/// `else`.
pub const ELSE: Flags = Flags { block: Block::Else, ..PURE };
/// `endif`, `endloop`.
pub const CLOSE: Flags = Flags { block: Block::Close, ..PURE };
/// `break`, `continue`.
pub const EXIT: Flags = Flags { block: Block::Exit, ..PURE };
/// `return`.
pub const RETURN: Flags = Flags { terminates: true, ..PURE };
/// `halt`.
pub const HALT: Flags = Flags { terminates: true, side_effects: true, ..PURE };

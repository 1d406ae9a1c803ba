//! Register allocation: Chaitin–Briggs graph colouring with iterated coalescing (George and
//! Appel), spilling to Local Memory, and a checker that verifies the result independently.
//!
//! - **Build**: liveness over the structured instruction list (each thread follows its own
//!   path: registers are per thread, so an inactive lane's registers are untouched and the
//!   per-thread CFG is the right one). A definition interferes with everything live after it,
//!   except the source of a copy. Parameters are precoloured `r0..rn`. An atomic's result is
//!   never `r0` (that encodes the non-returning form).
//! - **Simplify / coalesce / freeze / spill / select** as in Appel's *Modern Compiler
//!   Implementation*, with Briggs's and George's conservative tests. Select takes the lowest
//!   free colour, so R (and with it occupancy) stays small.
//! - **Spill**: a spilled register lives in a slot of Local Memory, one 32-bit word per
//!   thread per slot (`base + slot * threads * 4 + linear_thread_id * 4`); each use loads
//!   into a fresh short-lived register and each definition stores from one, then allocation
//!   starts again. Spilling needs the workgroup size from the source.
//! - **Pairs**: 64-bit values (`f64`) are coloured among themselves first, and given even
//!   pairs above the 32-bit registers.
//! - **Predicates** live for one or two instructions (see `lir`); they are coloured over the
//!   linear list with four colours.
//! - **Checker**: a forward dataflow over the allocated program that knows which virtual
//!   registers each physical register holds at every point; every read must find its value
//!   in the register it was given, every spill reload must follow a store on every path.
//!
//! The driver, [`allocate`], is here: it builds the interference graph and goes round
//! colouring and spilling until nothing spills. The rooms: `color`, `spill`, `checker` (run
//! on every allocation before it is returned) and `rewrite` (the allocated program, for
//! emission). Register allocation reads LIR and its liveness; nothing before it reads it.

mod checker;
mod color;
mod rewrite;
mod spill;

pub use checker::check;
use color::{Graph, Irc, MoveState, NodeState, allocate_predicates, bits, color_pairs, lanes_only};
pub use rewrite::{names, rewrite, rewrite_indexed};
pub use spill::local_memory;
use spill::{insert_spill_pointer, set_spill_stride, spill_register};

/// (Kept here too, where it was: liveness is LIR's.)
pub use crate::lir::liveness;
use crate::lir::{self, Arg, Kind, Lir, PHYS, Reg};

/// The result: a physical register for every virtual one, and a predicate for every
/// virtual predicate.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// The physical register of each register (physical ones map to themselves).
    pub reg: Vec<u8>,
    /// The physical predicate of each virtual predicate.
    pub pred: Vec<u8>,
    /// R: registers per thread.
    pub registers: u16,
    /// Predicates used.
    pub predicates: u8,
    /// Registers spilled to Local Memory.
    pub spill_slots: u32,
}

/// Allocates registers and predicates for `lir` with at most `k` registers, spilling to
/// Local Memory when it must (which adds instructions to `lir`).
pub fn allocate(lir: &mut Lir, k: u32) -> Result<Allocation, String> {
    let k = k.clamp(1, PHYS);
    let nparams = lir.params.len() as u32;
    if nparams > k {
        return Err(format!("{nparams} parameters need more than {k} registers"));
    }
    // 64-bit values take pairs above the 32-bit registers (an even first register, so two
    // pairs are the same or apart): coloured first, among themselves, never spilled.
    let (pair_color, pair_colors) = color_pairs(lir)?;
    let pool = if pair_colors == 0 { 0 } else { 2 * pair_colors + 1 };
    if pool + nparams > k {
        return Err(format!(
            "`{}` holds {pair_colors} f64 values at once, which with its parameters need more than {k} registers (f64 values are not spilled yet); raise --max-registers",
            lir.name
        ));
    }
    let k = k - pool;
    let mut spill_slots = 0u32;
    // Private arrays in memory give a frame pointer, which spilling reuses.
    let mut spill_pointer: Option<Reg> = lir.frame;
    let mut unspillable: Vec<bool> = Vec::new();
    if let Some(fp) = lir.frame {
        // The frame pointer and the temporaries that compute it stay in registers.
        let at = lir.insts.iter().position(|i| i.defs().any(|d| d == fp)).unwrap_or(0);
        unspillable.resize(lir.next_reg.index(), false);
        for inst in lir.insts.iter().take(at + 1) {
            for d in inst.defs() {
                unspillable[d.index()] = true;
            }
        }
    }
    for round in 0..32 {
        let succ = lir::successors(&lir.insts)?;
        let n = lir.next_reg.index();
        let live_out = liveness(&lir.insts, &succ, n);
        let depth = lir::loop_depths(&lir.insts);
        let mut irc = Irc {
            k,
            g: Graph::new(n),
            state: (0..n)
                .map(|i| if i < PHYS as usize { NodeState::Precolored } else { NodeState::Initial })
                .collect(),
            moves: Vec::new(),
            move_state: Vec::new(),
            move_list: vec![Vec::new(); n],
            alias: (0..n as u32).collect(),
            color: (0..n).map(|i| if i < PHYS as usize { Some(i as u32) } else { None }).collect(),
            stack: Vec::new(),
            simplify: Vec::new(),
            freeze: Vec::new(),
            spill: Vec::new(),
            worklist_moves: Vec::new(),
            active_moves: Vec::new(),
            cost: vec![0.0; n],
        };
        let mut present = vec![false; n];
        let pair = |r: &Reg| lir.pairs.contains(r);
        for (i, inst) in lir.insts.iter().enumerate() {
            let weight = 10f64.powi(depth[i].min(8) as i32);
            for r in inst.defs().chain(inst.uses()).filter(|r| !pair(r)) {
                present[r.index()] = true;
                irc.cost[r.index()] += weight;
            }
            let mut live: Vec<u32> = bits(&live_out[i]).filter(|&r| !pair(&Reg(r))).collect();
            // A guarded copy that need not keep the old value coalesces like any other. One
            // that keeps it (the second arm of an if-converted phi) coalesces too when nothing
            // else says the two interfere: sharing a register, it writes nothing.
            let is_copy = inst.kind == Kind::Copy;
            if is_copy
                && let (Some(Arg::Def(d)), Some(Arg::Use(s))) =
                    (inst.args.first(), inst.args.get(1))
                && !pair(d)
                && !pair(s)
            {
                if inst.guard.is_none() || inst.guard_kills {
                    live.retain(|&x| x != s.0);
                }
                let m = irc.moves.len() as u32;
                irc.moves.push((d.0, s.0));
                irc.move_state.push(MoveState::Worklist);
                irc.move_list[d.index()].push(m);
                irc.move_list[s.index()].push(m);
                irc.worklist_moves.push(m);
            }
            for d in inst.defs().filter(|r| !pair(r)) {
                for &l in &live {
                    // A guarded write and a value needed only in the other lanes can share a
                    // register (if-converted arms updating a variable in place).
                    if let (Some((p, n)), true) = (inst.guard, inst.guard_kills)
                        && lanes_only(&lir.insts, &succ, &live_out, Reg(l), i, (p, !n))
                        && lanes_only(&lir.insts, &succ, &live_out, d, i, (p, n))
                    {
                        continue;
                    }
                    irc.g.add(l, d.0);
                }
                if inst.code.info().category == wave_isa::Category::Atomic {
                    irc.g.add(d.0, 0);
                }
            }
        }
        for r in 0..n {
            if r >= PHYS as usize && !present[r] {
                irc.state[r] = NodeState::Colored;
                irc.color[r] = Some(0);
            }
            if r < unspillable.len() && unspillable[r] {
                irc.cost[r] = f64::INFINITY;
            }
        }
        irc.make_worklist();
        irc.run();
        let spilled = irc.assign();
        if spilled.is_empty() {
            let mut reg: Vec<u8> =
                (0..n).map(|r| irc.color[r].map_or(0, |c| c.min(255) as u8)).collect();
            let mut registers = nparams;
            for inst in &lir.insts {
                for r in inst.defs().chain(inst.uses()).filter(|r| !pair(r)) {
                    registers = registers.max(u32::from(reg[r.index()]) + 1);
                }
            }
            if pair_colors > 0 {
                let base = registers.next_multiple_of(2);
                for (&r, &c) in &pair_color {
                    reg[r.index()] = (base + 2 * c).min(255) as u8;
                }
                registers = base + 2 * pair_colors;
            }
            let (pred, predicates) = allocate_predicates(lir)?;
            let alloc =
                Allocation { reg, pred, registers: registers as u16, predicates, spill_slots };
            // The pointer's stride is known now: all the slots of a thread.
            if let Some(sp) = spill_pointer {
                set_spill_stride(lir, sp, lir.frame_bytes + spill_slots * 4);
            }
            check(lir, &alloc)?;
            return Ok(alloc);
        }
        // Spill and start again.
        let Some([x, y, z]) = lir.workgroup_size else {
            return Err(format!(
                "`{}` needs more than {k} registers and would spill to Local Memory, which needs the workgroup size: give it in the kernel's decorator (`workgroup=(...)`)",
                lir.name
            ));
        };
        let _ = (x, y, z);
        let first_new = lir.next_reg;
        let sp = match spill_pointer {
            Some(sp) => sp,
            None => {
                let sp = insert_spill_pointer(lir);
                spill_pointer = Some(sp);
                sp
            }
        };
        // The pointer and its temporaries are never spilled (it is what spilling uses).
        let mut new_regs: Vec<Reg> = (first_new.0..lir.next_reg.0).map(Reg).collect();
        for v in spilled {
            if round > 30 || unspillable.get(v as usize).copied().unwrap_or(false) {
                return Err(format!(
                    "`{}` needs more than {k} registers even with values in Local Memory: an instruction's operands and the values live across it do not fit; raise --max-registers",
                    lir.name
                ));
            }
            let slot = spill_slots;
            spill_slots += 1;
            // Thread-major: each thread's slots are together, so a workgroup larger than
            // the size given reaches past the Local Memory declared (a trap), never into
            // another thread's slots. The pointer already holds base + thread * stride.
            let offset = lir.frame_bytes + slot * 4;
            let offset = i32::try_from(offset).map_err(|_| "spill area too large".to_string())?;
            spill_register(lir, Reg(v), slot, sp, offset, &mut new_regs);
        }
        unspillable.resize(lir.next_reg.index(), false);
        unspillable[sp.index()] = true;
        for t in new_regs {
            unspillable[t.index()] = true;
        }
    }
    Err(format!("`{}`: register allocation did not converge", lir.name))
}

/// The allocated register of `r`.
pub fn phys(alloc: &Allocation, r: Reg) -> u32 {
    u32::from(alloc.reg.get(r.index()).copied().unwrap_or(0))
}

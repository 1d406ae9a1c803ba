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

use std::collections::{HashMap, HashSet};

/// (Kept here too, where it was: liveness is LIR's.)
pub use crate::lir::liveness;
use crate::lir::{self, Arg, Inst, Kind, Lir, PHYS, Pred, Reg};

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

struct Graph {
    n: usize,
    bits: Vec<u64>,
    adj: Vec<Vec<u32>>,
    degree: Vec<u32>,
}

impl Graph {
    fn new(n: usize) -> Graph {
        Graph {
            n,
            bits: vec![0; (n * n).div_ceil(64)],
            adj: vec![Vec::new(); n],
            degree: vec![0; n],
        }
    }

    fn has(&self, u: usize, v: usize) -> bool {
        let k = u * self.n + v;
        self.bits[k / 64] >> (k % 64) & 1 == 1
    }

    fn add(&mut self, u: u32, v: u32) {
        let (ui, vi) = (u as usize, v as usize);
        if u == v || self.has(ui, vi) {
            return;
        }
        for (a, b) in [(ui, vi), (vi, ui)] {
            let k = a * self.n + b;
            self.bits[k / 64] |= 1 << (k % 64);
        }
        if u >= PHYS {
            self.adj[ui].push(v);
            self.degree[ui] += 1;
        }
        if v >= PHYS {
            self.adj[vi].push(u);
            self.degree[vi] += 1;
        }
    }
}

/// Whether, after instruction `at`, register `r` is read only in the lanes where `guard`
/// holds until it dies or a write under the other guard merges it: straight-line guarded
/// code, with the guard's predicate unchanged. Its value in the other lanes is then dead.
/// A way out on either guard (`continue p`, `break p`, `@p halt`) ends the question when
/// the lanes that take it, or those that stay, no longer need `r`.
fn lanes_only(
    insts: &[Inst],
    succ: &[Vec<usize>],
    live_out: &[Vec<u64>],
    r: Reg,
    at: usize,
    guard: (Pred, bool),
) -> bool {
    let live =
        |j: usize| live_out[j].get(r as usize / 64).is_some_and(|w| w & (1 << (r % 64)) != 0);
    // Live on entry to instruction j.
    let live_in = |j: usize| {
        j < insts.len()
            && (insts[j].uses().any(|u| u == r) || (live(j) && !insts[j].defs().any(|d| d == r)))
    };
    if !live(at) {
        return true;
    }
    for (j, x) in insts.iter().enumerate().skip(at + 1) {
        let escape = match (x.kind, x.args.first()) {
            (Kind::Continue | Kind::Break, Some(Arg::PUse(p, n))) => Some((*p, *n)),
            (Kind::Halt, _) => x.guard,
            _ => None,
        };
        if let Some(e) = escape {
            let target = succ[j].iter().copied().find(|&t| t != j + 1);
            return if e == guard {
                // The guard's lanes leave: the others must not need r.
                !live_in(j + 1)
            } else {
                // The other lanes leave: where they go, r must be dead; the lanes that stay
                // are the guard's.
                e == (guard.0, !guard.1) && target.is_none_or(|t| !live_in(t))
            };
        }
        if !matches!(x.kind, Kind::Op | Kind::Copy | Kind::Const)
            || x.pred_defs().any(|q| q == guard.0)
        {
            return false;
        }
        let writes = x.defs().any(|d| d == r);
        // A write under the other guard that keeps the rest: it reads r only in `guard`'s
        // lanes, and r holds the merged value from here.
        if writes {
            return x.guard == Some((guard.0, !guard.1))
                && !x.guard_kills
                && x.args.iter().all(|a| !matches!(a, Arg::Use(u) | Arg::Addr(u, _) if *u == r));
        }
        let reads = x.args.iter().any(|a| matches!(a, Arg::Use(u) | Arg::Addr(u, _) if *u == r));
        if reads && x.guard != Some(guard) {
            return false;
        }
        if !live(j) {
            return true;
        }
    }
    false
}

fn bits(set: &[u64]) -> impl Iterator<Item = u32> + '_ {
    set.iter().enumerate().flat_map(|(w, &x)| {
        let mut x = x;
        std::iter::from_fn(move || {
            if x == 0 {
                return None;
            }
            let b = x.trailing_zeros();
            x &= x - 1;
            Some(w as u32 * 64 + b)
        })
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum NodeState {
    Precolored,
    Initial,
    Simplify,
    Freeze,
    Spill,
    Spilled,
    Coalesced,
    Colored,
    Stack,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MoveState {
    Worklist,
    Active,
    Coalesced,
    Constrained,
    Frozen,
}

struct Irc {
    k: u32,
    g: Graph,
    state: Vec<NodeState>,
    moves: Vec<(u32, u32)>,
    move_state: Vec<MoveState>,
    move_list: Vec<Vec<u32>>,
    alias: Vec<u32>,
    color: Vec<Option<u32>>,
    stack: Vec<u32>,
    simplify: Vec<u32>,
    freeze: Vec<u32>,
    spill: Vec<u32>,
    worklist_moves: Vec<u32>,
    active_moves: Vec<u32>,
    cost: Vec<f64>,
}

impl Irc {
    fn node_moves(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        self.move_list[n as usize].iter().copied().filter(|&m| {
            matches!(self.move_state[m as usize], MoveState::Worklist | MoveState::Active)
        })
    }

    fn move_related(&self, n: u32) -> bool {
        self.node_moves(n).next().is_some()
    }

    fn adjacent(&self, n: u32) -> Vec<u32> {
        self.g.adj[n as usize]
            .iter()
            .copied()
            .filter(|&m| !matches!(self.state[m as usize], NodeState::Stack | NodeState::Coalesced))
            .collect()
    }

    fn make_worklist(&mut self) {
        for n in PHYS as usize..self.state.len() {
            if self.state[n] != NodeState::Initial {
                continue;
            }
            let n = n as u32;
            if self.g.degree[n as usize] >= self.k {
                self.state[n as usize] = NodeState::Spill;
                self.spill.push(n);
            } else if self.move_related(n) {
                self.state[n as usize] = NodeState::Freeze;
                self.freeze.push(n);
            } else {
                self.state[n as usize] = NodeState::Simplify;
                self.simplify.push(n);
            }
        }
    }

    fn enable_moves(&mut self, nodes: &[u32]) {
        for &n in nodes {
            let ms: Vec<u32> = self.node_moves(n).collect();
            for m in ms {
                if self.move_state[m as usize] == MoveState::Active {
                    self.move_state[m as usize] = MoveState::Worklist;
                    self.worklist_moves.push(m);
                }
            }
        }
    }

    fn decrement_degree(&mut self, m: u32) {
        if self.state[m as usize] == NodeState::Precolored {
            return;
        }
        let d = self.g.degree[m as usize];
        self.g.degree[m as usize] = d.saturating_sub(1);
        if d == self.k {
            let mut nodes = self.adjacent(m);
            nodes.push(m);
            self.enable_moves(&nodes);
            if self.state[m as usize] == NodeState::Spill {
                if self.move_related(m) {
                    self.state[m as usize] = NodeState::Freeze;
                    self.freeze.push(m);
                } else {
                    self.state[m as usize] = NodeState::Simplify;
                    self.simplify.push(m);
                }
            }
        }
    }

    fn do_simplify(&mut self, n: u32) {
        self.state[n as usize] = NodeState::Stack;
        self.stack.push(n);
        for m in self.adjacent(n) {
            self.decrement_degree(m);
        }
    }

    fn get_alias(&self, mut n: u32) -> u32 {
        while self.state[n as usize] == NodeState::Coalesced {
            n = self.alias[n as usize];
        }
        n
    }

    fn add_worklist(&mut self, u: u32) {
        if self.state[u as usize] != NodeState::Precolored
            && !self.move_related(u)
            && self.g.degree[u as usize] < self.k
            && self.state[u as usize] == NodeState::Freeze
        {
            self.state[u as usize] = NodeState::Simplify;
            self.simplify.push(u);
        }
    }

    fn ok(&self, t: u32, r: u32) -> bool {
        self.state[t as usize] == NodeState::Precolored
            || self.g.degree[t as usize] < self.k
            || self.g.has(t as usize, r as usize)
    }

    fn conservative(&self, nodes: &[u32]) -> bool {
        let mut k = 0;
        let mut seen = std::collections::HashSet::new();
        for &n in nodes {
            if seen.insert(n)
                && (self.state[n as usize] == NodeState::Precolored
                    || self.g.degree[n as usize] >= self.k)
            {
                k += 1;
            }
        }
        k < self.k
    }

    fn combine(&mut self, u: u32, v: u32) {
        if self.state[v as usize] == NodeState::Freeze {
            self.freeze.retain(|&x| x != v);
        } else {
            self.spill.retain(|&x| x != v);
        }
        self.state[v as usize] = NodeState::Coalesced;
        self.alias[v as usize] = u;
        let vm = self.move_list[v as usize].clone();
        self.move_list[u as usize].extend(vm);
        self.enable_moves(&[v]);
        for t in self.adjacent(v) {
            self.g.add(t, u);
            self.decrement_degree(t);
        }
        self.cost[u as usize] += self.cost[v as usize];
        if self.g.degree[u as usize] >= self.k && self.state[u as usize] == NodeState::Freeze {
            self.freeze.retain(|&x| x != u);
            self.state[u as usize] = NodeState::Spill;
            self.spill.push(u);
        }
    }

    fn coalesce(&mut self, m: u32) {
        let (x, y) = self.moves[m as usize];
        let (x, y) = (self.get_alias(x), self.get_alias(y));
        let (u, v) = if self.state[y as usize] == NodeState::Precolored { (y, x) } else { (x, y) };
        if u == v {
            self.move_state[m as usize] = MoveState::Coalesced;
            self.add_worklist(u);
        } else if self.state[v as usize] == NodeState::Precolored
            || self.g.has(u as usize, v as usize)
        {
            self.move_state[m as usize] = MoveState::Constrained;
            self.add_worklist(u);
            self.add_worklist(v);
        } else {
            let george = self.state[u as usize] == NodeState::Precolored
                && self.adjacent(v).iter().all(|&t| self.ok(t, u));
            let briggs = self.state[u as usize] != NodeState::Precolored && {
                let mut all = self.adjacent(u);
                all.extend(self.adjacent(v));
                self.conservative(&all)
            };
            if george || briggs {
                self.move_state[m as usize] = MoveState::Coalesced;
                self.combine(u, v);
                self.add_worklist(u);
            } else {
                self.move_state[m as usize] = MoveState::Active;
                self.active_moves.push(m);
            }
        }
    }

    fn freeze_moves(&mut self, u: u32) {
        let ms: Vec<u32> = self.node_moves(u).collect();
        for m in ms {
            let (x, y) = self.moves[m as usize];
            let v = if self.get_alias(y) == self.get_alias(u) {
                self.get_alias(x)
            } else {
                self.get_alias(y)
            };
            self.move_state[m as usize] = MoveState::Frozen;
            if self.state[v as usize] == NodeState::Freeze && !self.move_related(v) {
                self.freeze.retain(|&x| x != v);
                self.state[v as usize] = NodeState::Simplify;
                self.simplify.push(v);
            }
        }
    }

    /// Drops nodes that left the spill worklist; whether any remain.
    fn prune_spill(&mut self) -> bool {
        let state = &self.state;
        self.spill.retain(|&n| state[n as usize] == NodeState::Spill);
        !self.spill.is_empty()
    }

    fn run(&mut self) {
        loop {
            if let Some(n) = self.simplify.pop() {
                if self.state[n as usize] == NodeState::Simplify {
                    self.do_simplify(n);
                }
            } else if let Some(m) = self.worklist_moves.pop() {
                if self.move_state[m as usize] == MoveState::Worklist {
                    self.coalesce(m);
                }
            } else if let Some(u) = self.freeze.pop() {
                if self.state[u as usize] == NodeState::Freeze {
                    self.state[u as usize] = NodeState::Simplify;
                    self.simplify.push(u);
                    self.freeze_moves(u);
                }
            } else if self.prune_spill() {
                // The cheapest to spill: cost over degree.
                let (i, _) = self
                    .spill
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| {
                        (i, self.cost[n as usize] / f64::from(self.g.degree[n as usize].max(1)))
                    })
                    .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
                let m = self.spill.swap_remove(i);
                self.state[m as usize] = NodeState::Simplify;
                self.simplify.push(m);
                self.freeze_moves(m);
            } else {
                break;
            }
        }
    }

    /// Colours the stack; returns the nodes that found no colour.
    fn assign(&mut self) -> Vec<u32> {
        let mut spilled = Vec::new();
        while let Some(n) = self.stack.pop() {
            let mut used = vec![false; self.k as usize];
            for &w in &self.g.adj[n as usize] {
                let a = self.get_alias(w);
                if matches!(self.state[a as usize], NodeState::Colored | NodeState::Precolored)
                    && let Some(c) = self.color[a as usize]
                    && (c as usize) < used.len()
                {
                    used[c as usize] = true;
                }
            }
            match used.iter().position(|u| !u) {
                Some(c) => {
                    self.state[n as usize] = NodeState::Colored;
                    self.color[n as usize] = Some(c as u32);
                }
                None => {
                    self.state[n as usize] = NodeState::Spilled;
                    spilled.push(n);
                }
            }
        }
        for n in PHYS as usize..self.state.len() {
            if self.state[n] == NodeState::Coalesced {
                let a = self.get_alias(n as u32);
                self.color[n] = self.color[a as usize];
            }
        }
        spilled
    }
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
        unspillable.resize(lir.next_reg as usize, false);
        for inst in lir.insts.iter().take(at + 1) {
            for d in inst.defs() {
                unspillable[d as usize] = true;
            }
        }
    }
    for round in 0..32 {
        let succ = lir::successors(&lir.insts)?;
        let n = lir.next_reg as usize;
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
                present[r as usize] = true;
                irc.cost[r as usize] += weight;
            }
            let mut live: Vec<u32> = bits(&live_out[i]).filter(|r| !pair(r)).collect();
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
                    live.retain(|x| x != s);
                }
                let m = irc.moves.len() as u32;
                irc.moves.push((*d, *s));
                irc.move_state.push(MoveState::Worklist);
                irc.move_list[*d as usize].push(m);
                irc.move_list[*s as usize].push(m);
                irc.worklist_moves.push(m);
            }
            for d in inst.defs().filter(|r| !pair(r)) {
                for &l in &live {
                    // A guarded write and a value needed only in the other lanes can share a
                    // register (if-converted arms updating a variable in place).
                    if let (Some((p, n)), true) = (inst.guard, inst.guard_kills)
                        && lanes_only(&lir.insts, &succ, &live_out, l, i, (p, !n))
                        && lanes_only(&lir.insts, &succ, &live_out, d, i, (p, n))
                    {
                        continue;
                    }
                    irc.g.add(l, d);
                }
                if inst.mnemonic.starts_with("atomic_") {
                    irc.g.add(d, 0);
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
                    registers = registers.max(u32::from(reg[r as usize]) + 1);
                }
            }
            if pair_colors > 0 {
                let base = registers.next_multiple_of(2);
                for (&r, &c) in &pair_color {
                    reg[r as usize] = (base + 2 * c).min(255) as u8;
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
        let mut new_regs: Vec<Reg> = (first_new..lir.next_reg).collect();
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
            let old = std::mem::take(&mut lir.insts);
            for mut inst in old {
                let uses = inst.uses().any(|r| r == v);
                let defs = inst.defs().any(|r| r == v);
                if !uses && !defs {
                    lir.insts.push(inst);
                    continue;
                }
                let t = lir.reg();
                new_regs.push(t);
                for a in &mut inst.args {
                    match a {
                        Arg::Def(r) | Arg::Use(r) | Arg::Addr(r, _) if *r == v => *r = t,
                        _ => {}
                    }
                }
                let span = inst.span.clone();
                let guard = inst.guard;
                if uses {
                    lir.insts.push(Inst {
                        kind: Kind::SpillLoad(slot),
                        mnemonic: "local_load.u32".into(),
                        guard: None,
                        guard_kills: false,
                        args: vec![Arg::Def(t), Arg::Addr(sp, offset)],
                        span: span.clone(),
                    });
                }
                lir.insts.push(inst);
                if defs {
                    lir.insts.push(Inst {
                        kind: Kind::SpillStore(slot),
                        mnemonic: "local_store.u32".into(),
                        guard,
                        guard_kills: false,
                        args: vec![Arg::Addr(sp, offset), Arg::Use(t)],
                        span,
                    });
                }
            }
        }
        unspillable.resize(lir.next_reg as usize, false);
        unspillable[sp as usize] = true;
        for t in new_regs {
            unspillable[t as usize] = true;
        }
    }
    Err(format!("`{}`: register allocation did not converge", lir.name))
}

/// Colours the 64-bit values among themselves: each one's colour (values of one colour share
/// a pair) and how many colours. Copies between pairs that do not interfere share one.
fn color_pairs(lir: &Lir) -> Result<(HashMap<Reg, u32>, u32), String> {
    if lir.pairs.is_empty() {
        return Ok((HashMap::new(), 0));
    }
    let succ = lir::successors(&lir.insts)?;
    let live_out = liveness(&lir.insts, &succ, lir.next_reg as usize);
    let pair = |r: &Reg| lir.pairs.contains(r);
    let mut adj: HashMap<Reg, HashSet<Reg>> = HashMap::new();
    let mut moves: Vec<(Reg, Reg)> = Vec::new();
    let mut order: Vec<Reg> = Vec::new();
    for (i, inst) in lir.insts.iter().enumerate() {
        for r in inst.defs().chain(inst.uses()).filter(pair) {
            if !order.contains(&r) {
                order.push(r);
            }
        }
        let source = match (inst.kind, inst.args.first(), inst.args.get(1)) {
            (Kind::Copy, Some(Arg::Def(d)), Some(Arg::Use(s))) if pair(d) && pair(s) => {
                moves.push((*d, *s));
                (inst.guard.is_none() || inst.guard_kills).then_some(*s)
            }
            _ => None,
        };
        for d in inst.defs().filter(pair) {
            for l in bits(&live_out[i]).filter(pair) {
                if l != d && Some(l) != source {
                    adj.entry(d).or_default().insert(l);
                    adj.entry(l).or_default().insert(d);
                }
            }
        }
    }
    // Coalescing: a copy's two sides become one class when no member of one interferes
    // with a member of the other.
    let mut class: HashMap<Reg, Reg> = order.iter().map(|r| (*r, *r)).collect();
    let find = |class: &HashMap<Reg, Reg>, mut r: Reg| {
        while class[&r] != r {
            r = class[&r];
        }
        r
    };
    for (d, s) in moves {
        let (a, b) = (find(&class, d), find(&class, s));
        if a == b {
            continue;
        }
        let members = |c: Reg, class: &HashMap<Reg, Reg>| -> Vec<Reg> {
            order.iter().copied().filter(|r| find(class, *r) == c).collect()
        };
        let (ma, mb) = (members(a, &class), members(b, &class));
        let clash = ma.iter().any(|x| adj.get(x).is_some_and(|n| mb.iter().any(|y| n.contains(y))));
        if !clash {
            class.insert(b, a);
        }
    }
    // Greedy colouring of the classes, in order of first appearance.
    let mut color: HashMap<Reg, u32> = HashMap::new();
    let mut class_color: HashMap<Reg, u32> = HashMap::new();
    let mut colors = 0u32;
    for &r in &order {
        let c = find(&class, r);
        if class_color.contains_key(&c) {
            continue;
        }
        let taken: HashSet<u32> = order
            .iter()
            .filter(|x| find(&class, **x) == c)
            .flat_map(|x| adj.get(x).into_iter().flatten())
            .filter_map(|y| class_color.get(&find(&class, *y)).copied())
            .collect();
        let pick = (0..).find(|k| !taken.contains(k)).unwrap_or(0);
        class_color.insert(c, pick);
        colors = colors.max(pick + 1);
    }
    for &r in &order {
        color.insert(r, class_color[&find(&class, r)]);
    }
    Ok((color, colors))
}

/// Bytes of Local Memory a kernel needs with `slots` spill slots.
pub fn local_memory(lir: &Lir, slots: u32) -> u32 {
    let frame = lir.frame_bytes + slots * 4;
    if frame == 0 {
        return lir.local_memory;
    }
    let threads = lir.workgroup_size.map_or(0, |[x, y, z]| x * y * z);
    lir.local_memory.next_multiple_of(4) + frame * threads
}

/// Sets the spill pointer's stride (`sp = base + thread * stride`): the multiply before the
/// instruction that defines `sp` gets its immediate. It changes no register.
fn set_spill_stride(lir: &mut Lir, sp: Reg, stride: u32) {
    let Some(at) = lir.insts.iter().position(|i| i.defs().any(|d| d == sp)) else { return };
    // `imul sp, a, stride` (the frame at address 0), or `imul a, a, stride; iadd sp, a, base`.
    let at = if lir.insts[at].mnemonic == "imul" { Some(at) } else { at.checked_sub(1) };
    if let Some(at) = at
        && lir.insts[at].mnemonic == "imul"
    {
        lir.insts[at].args[2] = Arg::Imm(stride.to_string());
    }
}

/// `sp = base + linear_thread_id * stride`, at the entry (the stride, every slot of one
/// thread, is set when allocation is done).
fn insert_spill_pointer(lir: &mut Lir) -> Reg {
    let span = lir.insts.first().map(|i| i.span.clone()).unwrap_or(0..0);
    let sp = lir.reg();
    let (code, next) = lir::frame_pointer_code(lir, sp, 0, &span);
    lir.next_reg = next;
    lir.insts.splice(0..0, code);
    sp
}

/// Colours predicates by their liveness over the structured control flow (a predicate held
/// across a loop interferes with every one defined in it): the one defined is given the
/// lowest of the four colours that nothing live after its definition has.
fn allocate_predicates(lir: &Lir) -> Result<(Vec<u8>, u8), String> {
    let n = lir.next_pred as usize;
    let words = n.div_ceil(64).max(1);
    let succ = lir::successors(&lir.insts)?;
    let len = lir.insts.len();
    let mut live_in = vec![vec![0u64; words]; len + 1];
    let mut live_out = vec![vec![0u64; words]; len];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..len).rev() {
            let mut out = vec![0u64; words];
            for &s in &succ[i] {
                for (o, x) in out.iter_mut().zip(&live_in[s.min(len)]) {
                    *o |= x;
                }
            }
            let mut inn = out.clone();
            for p in lir.insts[i].pred_defs() {
                inn[p as usize / 64] &= !(1 << (p % 64));
            }
            for p in lir.insts[i].pred_uses() {
                inn[p as usize / 64] |= 1 << (p % 64);
            }
            if inn != live_in[i] {
                live_in[i] = inn;
                changed = true;
            }
            live_out[i] = out;
        }
    }
    // Interference: a predicate defined where others are live after.
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut first = vec![usize::MAX; n];
    for (i, inst) in lir.insts.iter().enumerate() {
        for p in inst.pred_defs().chain(inst.pred_uses()) {
            first[p as usize] = first[p as usize].min(i);
        }
        for p in inst.pred_defs() {
            for q in bits(&live_out[i]) {
                if q != p {
                    adj[p as usize].push(q);
                    adj[q as usize].push(p);
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&p| first[p] != usize::MAX).collect();
    order.sort_by_key(|&p| first[p]);
    let mut color: Vec<Option<u8>> = vec![None; n];
    let mut used = 0u8;
    for p in order {
        let mut taken = [false; 4];
        for &q in &adj[p] {
            if let Some(c) = color[q as usize] {
                taken[usize::from(c)] = true;
            }
        }
        let Some(c) = taken.iter().position(|t| !t) else {
            return Err(format!(
                "`{}` needs more than 4 predicates at once (instruction {})",
                lir.name, first[p]
            ));
        };
        color[p] = Some(c as u8);
        used = used.max(c as u8 + 1);
    }
    Ok((color.into_iter().map(|c| c.unwrap_or(0)).collect(), used))
}

/// The allocated register of `r`.
pub fn phys(alloc: &Allocation, r: Reg) -> u32 {
    u32::from(alloc.reg.get(r as usize).copied().unwrap_or(0))
}

/// What a physical register holds: a virtual register's value, in every lane or only in
/// the lanes where a guard held.
type Held = (Reg, Option<(Pred, bool)>);

/// Checks an allocation independently of how it was found.
pub fn check(lir: &Lir, alloc: &Allocation) -> Result<(), String> {
    let succ = lir::successors(&lir.insts)?;
    let n = lir.insts.len();
    let nphys = usize::from(alloc.registers).max(1);
    // State: for each physical register, the virtual registers whose value it holds (in
    // every lane, or where a guard held); for each predicate the virtual predicates; and
    // the spill slots written.
    #[derive(Clone, PartialEq)]
    struct State {
        regs: Vec<Vec<Held>>,
        preds: Vec<Vec<Pred>>,
        slots: Vec<bool>,
    }
    // Where paths join: a value held in every lane on one and in some lanes on the other is
    // held in those lanes.
    let meet = |a: &State, b: &State| State {
        regs: a
            .regs
            .iter()
            .zip(&b.regs)
            .map(|(x, y)| {
                x.iter()
                    .filter_map(|&(r, t)| {
                        let u = y.iter().find(|(q, _)| *q == r)?.1;
                        match (t, u) {
                            _ if t == u => Some((r, t)),
                            (None, u) => Some((r, u)),
                            (t, None) => Some((r, t)),
                            _ => None,
                        }
                    })
                    .collect()
            })
            .collect(),
        preds: a
            .preds
            .iter()
            .zip(&b.preds)
            .map(|(x, y)| x.iter().copied().filter(|v| y.contains(v)).collect())
            .collect(),
        slots: a.slots.iter().zip(&b.slots).map(|(x, y)| *x && *y).collect(),
    };
    let mut entry = State {
        regs: vec![Vec::new(); nphys.max(lir.params.len())],
        preds: vec![Vec::new(); 4],
        slots: vec![false; alloc.spill_slots as usize],
    };
    for p in 0..lir.params.len() {
        entry.regs[p].push((p as Reg, None));
    }
    // Reads an instruction makes: (register, the lanes that need its value).
    let reads = |inst: &Inst| -> Vec<(Reg, Option<(Pred, bool)>)> {
        let mut out = Vec::new();
        for a in &inst.args {
            match a {
                Arg::Use(r) | Arg::Addr(r, _) => out.push((*r, inst.guard)),
                // A guarded write that keeps the old value where the guard fails.
                Arg::Def(r) if inst.guard.is_some() && !inst.guard_kills => {
                    out.push((*r, inst.guard.map(|(p, n)| (p, !n))))
                }
                _ => {}
            }
        }
        out
    };
    let holds = |h: &[Held], r: Reg, lanes: Option<(Pred, bool)>| {
        h.iter().any(|(x, g)| *x == r && (g.is_none() || *g == lanes))
    };
    let mut into: Vec<Option<State>> = vec![None; n + 1];
    into[0] = Some(entry);
    let mut work = vec![0usize];
    let mut errors = Vec::new();
    let mut steps = 0usize;
    while let Some(i) = work.pop() {
        steps += 1;
        if i >= n || steps > 1000 * (n + 1) {
            continue;
        }
        let Some(mut st) = into[i].clone() else { continue };
        let inst = &lir.insts[i];
        // Transfer.
        if let Kind::SpillStore(s) = inst.kind
            && let Some(x) = st.slots.get_mut(s as usize)
        {
            *x = true;
        }
        if let Kind::SpillLoad(s) = inst.kind
            && !st.slots.get(s as usize).copied().unwrap_or(false)
        {
            errors.push(format!("instruction {i} reloads spill slot {s} before it is stored"));
        }
        let source: Option<Vec<Held>> = match (inst.kind == Kind::Copy, inst.args.get(1)) {
            (true, Some(Arg::Use(s))) => {
                Some(st.regs.get(phys(alloc, *s) as usize).cloned().unwrap_or_default())
            }
            _ => None,
        };
        for d in inst.defs() {
            let pr = phys(alloc, d) as usize;
            if pr >= st.regs.len() {
                errors.push(format!("instruction {i} writes r{pr}, beyond R"));
                continue;
            }
            let old = st.regs[pr].clone();
            for r in &mut st.regs {
                r.retain(|x| x.0 != d);
            }
            st.regs[pr] = match inst.guard {
                None => {
                    let mut h = source.clone().unwrap_or_default();
                    h.retain(|x| x.0 != d);
                    h.push((d, None));
                    h
                }
                Some((p, neg)) => {
                    let (g, ng) = (Some((p, neg)), Some((p, !neg)));
                    // What the lanes that run it hold: the copied values and d; what the
                    // others keep: the register's old contents (with d's old value only
                    // when the write keeps it).
                    let mut run: Vec<Reg> = source
                        .as_ref()
                        .map(|h| {
                            h.iter()
                                .filter(|(x, t)| *x != d && (t.is_none() || *t == g))
                                .map(|(x, _)| *x)
                                .collect()
                        })
                        .unwrap_or_default();
                    run.push(d);
                    let kept: Vec<Reg> = old
                        .iter()
                        .filter(|(x, t)| {
                            (t.is_none() || *t == ng) && (*x != d || !inst.guard_kills)
                        })
                        .map(|(x, _)| *x)
                        .collect();
                    let mut h: Vec<Held> = Vec::new();
                    for x in run.iter().chain(&kept) {
                        if h.iter().any(|(y, _)| y == x) {
                            continue;
                        }
                        let tag = match (run.contains(x), kept.contains(x)) {
                            (true, true) => None,
                            (true, false) => g,
                            _ => ng,
                        };
                        h.push((*x, tag));
                    }
                    h
                }
            };
        }
        for p in inst.pred_defs() {
            for r in &mut st.preds {
                r.retain(|x| *x != p);
            }
            // What was known only under this predicate no longer is.
            for r in &mut st.regs {
                r.retain(|(_, g)| g.is_none_or(|(q, _)| q != p));
            }
            let c = usize::from(alloc.pred.get(p as usize).copied().unwrap_or(0));
            st.preds[c] = vec![p];
        }
        // A way out taken where a guard holds (`continue p`, `break p`, `@p halt`): the lanes
        // that take it are those where the guard holds, and the others go on.
        let escape = match (inst.kind, inst.args.first()) {
            (Kind::Continue | Kind::Break, Some(Arg::PUse(p, neg))) => Some((*p, *neg)),
            (Kind::Halt, _) => inst.guard,
            _ => None,
        };
        // (`icmp.eq p, any, any` then `break p`: every lane leaves, nothing goes on.)
        let always = i > 0
            && matches!(inst.args.first(), Some(Arg::PUse(p, false))
                if lir.insts[i - 1].guard.is_none()
                    && lir.insts[i - 1].mnemonic == "icmp.eq"
                    && lir.insts[i - 1].args == [Arg::PDef(*p), Arg::Any, Arg::Any]);
        let targets = &succ[i];
        for &s in targets {
            if always && escape.is_some() && s == i + 1 && targets.iter().any(|&t| t != i + 1) {
                continue;
            }
            let lanes = match escape {
                Some(g) if targets.iter().filter(|&&t| t == s).count() == 1 => {
                    Some(if s == i + 1 { (g.0, !g.1) } else { g })
                }
                _ => None,
            };
            let edge = match lanes {
                None => None,
                Some(g) => {
                    let mut e = st.clone();
                    for h in &mut e.regs {
                        h.retain(|(_, t)| t.is_none() || *t == Some(g));
                        h.iter_mut().for_each(|(_, t)| *t = None);
                    }
                    Some(e)
                }
            };
            let st = edge.as_ref().unwrap_or(&st);
            let merged = match &into[s] {
                None => st.clone(),
                Some(old) => meet(old, st),
            };
            if into[s].as_ref() != Some(&merged) {
                into[s] = Some(merged);
                work.push(s);
            }
        }
    }
    for (i, inst) in lir.insts.iter().enumerate() {
        let Some(st) = &into[i] else { continue };
        for (u, lanes) in reads(inst) {
            let pr = phys(alloc, u) as usize;
            if !st.regs.get(pr).is_some_and(|h| holds(h, u, lanes)) {
                errors.push(format!(
                    "instruction {i} (`{}`) reads %{} from r{pr}, which does not hold it there",
                    inst.mnemonic,
                    u.wrapping_sub(PHYS)
                ));
            }
        }
        for p in inst.pred_uses() {
            let c = usize::from(alloc.pred.get(p as usize).copied().unwrap_or(0));
            if !st.preds[c].contains(&p) {
                errors.push(format!(
                    "instruction {i} (`{}`) reads %p{p} from p{c}, which does not hold it",
                    inst.mnemonic
                ));
            }
        }
        if inst.mnemonic.starts_with("atomic_") && inst.defs().any(|d| phys(alloc, d) == 0) {
            errors.push(format!("instruction {i}: an atomic's result in r0 would discard it"));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        errors.truncate(5);
        Err(format!("the register allocation of `{}` is wrong: {}", lir.name, errors.join("; ")))
    }
}

/// The allocated program: every register and predicate physical.
pub fn rewrite(lir: &Lir, alloc: &Allocation) -> Vec<Inst> {
    rewrite_indexed(lir, alloc).into_iter().map(|(_, inst)| inst).collect()
}

/// [`rewrite`], with the index in `lir.insts` each instruction comes from (for debug info).
pub fn rewrite_indexed(lir: &Lir, alloc: &Allocation) -> Vec<(usize, Inst)> {
    let mut out = Vec::with_capacity(lir.insts.len());
    for (index, original) in lir.insts.iter().enumerate() {
        let mut inst = original.clone();
        for a in &mut inst.args {
            match a {
                Arg::Def(r) | Arg::Use(r) | Arg::Addr(r, _) => *r = phys(alloc, *r),
                Arg::PDef(p) | Arg::PUse(p, _) => {
                    *p = u32::from(alloc.pred.get(*p as usize).copied().unwrap_or(0))
                }
                _ => {}
            }
        }
        if let Some((p, n)) = inst.guard {
            inst.guard = Some((u32::from(alloc.pred.get(p as usize).copied().unwrap_or(0)), n));
        }
        // A copy into its own register is gone (guarded or not).
        if inst.kind == Kind::Copy
            && let (Some(Arg::Def(d)), Some(Arg::Use(s))) = (inst.args.first(), inst.args.get(1))
            && d == s
        {
            continue;
        }
        // A copy, a constant, a select or a shuffle of a pair is one instruction per half:
        // the second on the pair registers' second halves (and a constant's high word).
        let wide = matches!(
            inst.mnemonic.as_str(),
            "mov"
                | "mov_imm"
                | "select"
                | "wave_shuffle"
                | "wave_shuffle_up"
                | "wave_shuffle_down"
                | "wave_shuffle_xor"
                | "wave_broadcast"
        ) && original
            .args
            .first()
            .is_some_and(|a| matches!(a, Arg::Def(r) if lir.pairs.contains(r)));
        if wide {
            let split = |t: &str| u64::from_str_radix(t.trim_start_matches("0x"), 16).unwrap_or(0);
            let constant = inst.mnemonic == "mov_imm";
            let mut hi = inst.clone();
            for (a, o) in hi.args.iter_mut().zip(&original.args) {
                match (a, o) {
                    (Arg::Def(r) | Arg::Use(r), Arg::Def(v) | Arg::Use(v))
                        if lir.pairs.contains(v) =>
                    {
                        *r += 1
                    }
                    (Arg::Imm(t), _) if constant => *t = format!("0x{:08x}", split(t) >> 32),
                    _ => {}
                }
            }
            if constant {
                for a in &mut inst.args {
                    if let Arg::Imm(t) = a {
                        *t = format!("0x{:08x}", split(t) & 0xffff_ffff);
                    }
                }
            }
            out.push((index, inst));
            out.push((index, hi));
            continue;
        }
        out.push((index, inst));
    }
    tidy(out)
}

/// Removes the structure that coalesced copies left empty: `if p / else X / endif` becomes
/// `if !p / X / endif`, an empty `else` goes, and an empty `if`/`endif` pair goes.
fn tidy(insts: Vec<(usize, Inst)>) -> Vec<(usize, Inst)> {
    let mut out: Vec<(usize, Inst)> = Vec::with_capacity(insts.len());
    for (index, inst) in insts {
        match inst.kind {
            Kind::Else if out.last().is_some_and(|(_, l)| l.kind == Kind::If) => {
                if let Some((_, last)) = out.last_mut()
                    && let Some(Arg::PUse(_, neg)) = last.args.first_mut()
                {
                    *neg = !*neg;
                }
                // Mark the flipped `if` as having no else: nothing to push.
            }
            Kind::EndIf if out.last().is_some_and(|(_, l)| l.kind == Kind::Else) => {
                out.pop();
                out.push((index, inst));
            }
            Kind::EndIf if out.last().is_some_and(|(_, l)| l.kind == Kind::If) => {
                out.pop();
            }
            _ => out.push((index, inst)),
        }
    }
    // Falling off the end of a kernel halts: a last `halt` is not needed.
    if out.last().is_some_and(|(_, i)| i.kind == Kind::Halt && i.guard.is_none()) {
        out.pop();
    }
    out
}

/// Register names for printing the allocated program.
pub fn names() -> (impl Fn(Reg) -> String, impl Fn(Pred) -> String) {
    (|r: Reg| format!("r{r}"), |p: Pred| format!("p{p}"))
}

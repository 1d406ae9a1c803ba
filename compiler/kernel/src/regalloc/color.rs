//! Colouring: Chaitin–Briggs with iterated coalescing (George and Appel) for 32-bit
//! registers, a greedy colouring of the 64-bit pairs among themselves, and predicates
//! coloured over the linear list with four colours.

use std::collections::{HashMap, HashSet};

use crate::lir::{self, Arg, Inst, Kind, Lir, PHYS, Pred, Reg, liveness};

pub(super) struct Graph {
    n: usize,
    bits: Vec<u64>,
    adj: Vec<Vec<u32>>,
    degree: Vec<u32>,
}

impl Graph {
    pub(super) fn new(n: usize) -> Graph {
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

    pub(super) fn add(&mut self, u: u32, v: u32) {
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
pub(super) fn lanes_only(
    insts: &[Inst],
    succ: &[Vec<usize>],
    live_out: &[Vec<u64>],
    r: Reg,
    at: usize,
    guard: (Pred, bool),
) -> bool {
    let live = |j: usize| {
        live_out[j].get(r.index() / 64).is_some_and(|w| w & (1 << (r.index() % 64)) != 0)
    };
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

pub(super) fn bits(set: &[u64]) -> impl Iterator<Item = u32> + '_ {
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
pub(super) enum NodeState {
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
pub(super) enum MoveState {
    Worklist,
    Active,
    Coalesced,
    Constrained,
    Frozen,
}

pub(super) struct Irc {
    pub(super) k: u32,
    pub(super) g: Graph,
    pub(super) state: Vec<NodeState>,
    pub(super) moves: Vec<(u32, u32)>,
    pub(super) move_state: Vec<MoveState>,
    pub(super) move_list: Vec<Vec<u32>>,
    pub(super) alias: Vec<u32>,
    pub(super) color: Vec<Option<u32>>,
    pub(super) stack: Vec<u32>,
    pub(super) simplify: Vec<u32>,
    pub(super) freeze: Vec<u32>,
    pub(super) spill: Vec<u32>,
    pub(super) worklist_moves: Vec<u32>,
    pub(super) active_moves: Vec<u32>,
    pub(super) cost: Vec<f64>,
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

    pub(super) fn make_worklist(&mut self) {
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

    pub(super) fn run(&mut self) {
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
    pub(super) fn assign(&mut self) -> Vec<u32> {
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

/// Colours the 64-bit values among themselves: each one's colour (values of one colour share
/// a pair) and how many colours. Copies between pairs that do not interfere share one.
pub(super) fn color_pairs(lir: &Lir) -> Result<(HashMap<Reg, u32>, u32), String> {
    if lir.pairs.is_empty() {
        return Ok((HashMap::new(), 0));
    }
    let succ = lir::successors(&lir.insts)?;
    let live_out = liveness(&lir.insts, &succ, lir.next_reg.index());
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
            for l in bits(&live_out[i]).map(Reg).filter(pair) {
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

/// Colours predicates by their liveness over the structured control flow (a predicate held
/// across a loop interferes with every one defined in it): the one defined is given the
/// lowest of the four colours that nothing live after its definition has.
pub(super) fn allocate_predicates(lir: &Lir) -> Result<(Vec<u8>, u8), String> {
    let n = lir.next_pred.index();
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
                inn[p.index() / 64] &= !(1 << (p.index() % 64));
            }
            for p in lir.insts[i].pred_uses() {
                inn[p.index() / 64] |= 1 << (p.index() % 64);
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
            first[p.index()] = first[p.index()].min(i);
        }
        for p in inst.pred_defs() {
            for q in bits(&live_out[i]) {
                if q != p.0 {
                    adj[p.index()].push(q);
                    adj[q as usize].push(p.0);
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

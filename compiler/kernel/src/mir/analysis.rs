//! What passes ask of a MIR function without changing it: predecessors, block orders,
//! dominators (and a dominator tree for constant-time queries), how often each value is read,
//! which additions fold into addresses, natural loops and their simple shape, and an upper
//! bound of every `u32` value.

use std::collections::HashMap;

use super::{BlockId, Func, Op, Phi, Space, Term, Value};
use crate::hir::{BinOp, Intrinsic, Scalar, Special, Ty};

impl Func {
    /// The predecessors of every block.
    pub fn predecessors(&self) -> Vec<Vec<BlockId>> {
        let mut preds = vec![Vec::new(); self.blocks.len()];
        for (i, b) in self.blocks.iter().enumerate() {
            for s in b.term.successors() {
                if !preds[s.0 as usize].contains(&BlockId(i as u32)) {
                    preds[s.0 as usize].push(BlockId(i as u32));
                }
            }
        }
        preds
    }

    /// Blocks in reverse postorder from the entry (unreachable blocks left out).
    pub fn reverse_postorder(&self) -> Vec<BlockId> {
        let mut seen = vec![false; self.blocks.len()];
        let mut post = Vec::new();
        let mut stack = vec![(BlockId(0), 0usize)];
        seen[0] = true;
        while let Some((b, i)) = stack.pop() {
            let succ = self.blocks[b.0 as usize].term.successors();
            if i < succ.len() {
                stack.push((b, i + 1));
                let s = succ[i];
                if !seen[s.0 as usize] {
                    seen[s.0 as usize] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
            }
        }
        post.reverse();
        post
    }

    /// Immediate dominators (Cooper, Harvey and Kennedy), by block; `None` for the entry and
    /// unreachable blocks.
    pub fn dominators(&self) -> Vec<Option<BlockId>> {
        let rpo = self.reverse_postorder();
        let mut order = vec![usize::MAX; self.blocks.len()];
        for (i, b) in rpo.iter().enumerate() {
            order[b.0 as usize] = i;
        }
        let preds = self.predecessors();
        let mut idom: Vec<Option<BlockId>> = vec![None; self.blocks.len()];
        idom[0] = Some(BlockId(0));
        let intersect = |idom: &[Option<BlockId>], mut a: BlockId, mut b: BlockId| {
            while a != b {
                while order[a.0 as usize] > order[b.0 as usize] {
                    a = idom[a.0 as usize].unwrap_or(BlockId(0));
                }
                while order[b.0 as usize] > order[a.0 as usize] {
                    b = idom[b.0 as usize].unwrap_or(BlockId(0));
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new: Option<BlockId> = None;
                for &p in &preds[b.0 as usize] {
                    if idom[p.0 as usize].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(n) => intersect(&idom, p, n),
                    });
                }
                if new.is_some() && idom[b.0 as usize] != new {
                    idom[b.0 as usize] = new;
                    changed = true;
                }
            }
        }
        idom[0] = None;
        idom
    }

    /// How many times each value is read: by phis, instructions and branches.
    pub fn reads(&self) -> Vec<usize> {
        let mut reads = vec![0usize; self.types.len()];
        for b in &self.blocks {
            for phi in &b.phis {
                for (_, v) in &phi.args {
                    reads[v.0 as usize] += 1;
                }
            }
            for inst in &b.insts {
                for v in inst.op.operands() {
                    reads[v.0 as usize] += 1;
                }
            }
            if let Term::Branch(c, ..) = &b.term {
                reads[c.0 as usize] += 1;
            }
        }
        reads
    }

    /// The values `x + c` (c a constant under 2^23 in magnitude) whose every read is the byte
    /// address of a load or store: the back end folds each into its accesses as `[x + c]`,
    /// so such a value costs no instruction and no register of its own.
    pub fn offset_addresses(&self) -> Vec<Option<(Value, i32)>> {
        let n = self.types.len();
        let mut def: Vec<Option<&Op>> = vec![None; n];
        let mut address_uses = vec![0usize; n];
        for block in &self.blocks {
            for inst in &block.insts {
                if let Some(d) = inst.dst {
                    def[d.0 as usize] = Some(&inst.op);
                }
                // (A private array's element index is not a byte address.)
                match &inst.op {
                    Op::Load(s, a) if !matches!(s, Space::Private(_)) => {
                        address_uses[a.0 as usize] += 1
                    }
                    Op::Store(s, a, x) if a != x && !matches!(s, Space::Private(_)) => {
                        address_uses[a.0 as usize] += 1
                    }
                    _ => {}
                }
            }
        }
        let all_uses = self.reads();
        (0..n)
            .map(|v| match def[v] {
                Some(Op::Binary(BinOp::Add, x, c))
                    if all_uses[v] > 0 && all_uses[v] == address_uses[v] =>
                {
                    match def[c.0 as usize] {
                        Some(Op::Int(k)) => i32::try_from(*k as i32 as i64)
                            .ok()
                            .filter(|k| k.unsigned_abs() < 1 << 23)
                            .map(|k| (*x, k)),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect()
    }

    /// Whether block `a` dominates block `b` (computing the dominators).
    pub fn dominates_block(&self, a: BlockId, b: BlockId) -> bool {
        Func::dominates(&self.dominators(), a, b)
    }

    /// Whether block `a` dominates block `b`.
    pub fn dominates(idom: &[Option<BlockId>], a: BlockId, mut b: BlockId) -> bool {
        loop {
            if a == b {
                return true;
            }
            match idom[b.0 as usize] {
                Some(p) if p != b => b = p,
                _ => return false,
            }
        }
    }
}

/// The dominator tree as intervals of a depth-first numbering: whether a block dominates
/// another in constant time, where [`Func::dominates`] walks the chain of dominators (as
/// long as the function, in straight-line code).
pub struct DomTree {
    /// When the walk enters and leaves each block (`u32::MAX` for unreachable blocks).
    enter: Vec<u32>,
    leave: Vec<u32>,
}

impl DomTree {
    /// The tree of the immediate dominators [`Func::dominators`] gives.
    pub fn new(idom: &[Option<BlockId>]) -> DomTree {
        let n = idom.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (b, d) in idom.iter().enumerate() {
            if let Some(p) = d
                && p.0 as usize != b
            {
                children[p.0 as usize].push(b);
            }
        }
        let (mut enter, mut leave) = (vec![u32::MAX; n], vec![u32::MAX; n]);
        let mut clock = 0u32;
        // (Block 0 is the entry; its own entry is `None` or itself.)
        if n > 0 {
            let mut stack = vec![(0usize, 0usize)];
            enter[0] = clock;
            clock += 1;
            while let Some((b, next)) = stack.last_mut() {
                if let Some(&c) = children[*b].get(*next) {
                    *next += 1;
                    enter[c] = clock;
                    clock += 1;
                    stack.push((c, 0));
                } else {
                    leave[*b] = clock;
                    clock += 1;
                    stack.pop();
                }
            }
        }
        DomTree { enter, leave }
    }

    /// Whether block `a` dominates block `b` (as [`Func::dominates`] says).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        let (a, b) = (a.0 as usize, b.0 as usize);
        a == b
            || (self.enter[a] != u32::MAX
                && self.enter[b] != u32::MAX
                && self.enter[a] <= self.enter[b]
                && self.leave[b] <= self.leave[a])
    }
}

/// The blocks of the natural loop of each back edge `latch → header`, by header.
pub(crate) fn natural_loops(f: &Func) -> Vec<(BlockId, Vec<BlockId>)> {
    let idom = f.dominators();
    let preds = f.predecessors();
    let mut loops: Vec<(BlockId, Vec<BlockId>)> = Vec::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for h in block.term.successors() {
            let latch = BlockId(b as u32);
            if !Func::dominates(&idom, h, latch) {
                continue;
            }
            // Everything that reaches the latch without passing the header.
            let mut body = vec![h];
            let mut work = vec![latch];
            while let Some(x) = work.pop() {
                if body.contains(&x) {
                    continue;
                }
                body.push(x);
                work.extend(preds[x.0 as usize].iter().copied());
            }
            match loops.iter_mut().find(|(hh, _)| *hh == h) {
                Some((_, existing)) => {
                    for x in body {
                        if !existing.contains(&x) {
                            existing.push(x);
                        }
                    }
                }
                None => loops.push((h, body)),
            }
        }
    }
    loops
}

/// The preheader and the latch of a loop with exactly one of each: one block outside that
/// jumps to the header, and one block inside (not the header) that jumps back to it.
pub(crate) fn simple_loop(
    f: &Func,
    preds: &[Vec<BlockId>],
    header: BlockId,
    body: &[BlockId],
) -> Option<(BlockId, BlockId)> {
    let from = &preds[header.0 as usize];
    let outside: Vec<BlockId> = from.iter().copied().filter(|p| !body.contains(p)).collect();
    let latches: Vec<BlockId> = from.iter().copied().filter(|p| body.contains(p)).collect();
    let ([pre], [latch]) = (outside.as_slice(), latches.as_slice()) else { return None };
    let jumps = |b: &BlockId| f.blocks[b.0 as usize].term == Term::Jump(header);
    (*latch != header && jumps(pre) && jumps(latch)).then_some((*pre, *latch))
}

/// The nearest common dominator of two blocks, given the immediate dominators.
pub(crate) fn common_dominator<'a>(
    f: &Func,
    idom: &'a [Option<BlockId>],
) -> impl Fn(BlockId, BlockId) -> BlockId + 'a {
    let mut order = vec![usize::MAX; f.blocks.len()];
    for (i, b) in f.reverse_postorder().iter().enumerate() {
        order[b.0 as usize] = i;
    }
    move |mut a: BlockId, mut b: BlockId| {
        while a != b {
            while order[a.0 as usize] > order[b.0 as usize] {
                a = idom[a.0 as usize].unwrap_or(BlockId(0));
            }
            while order[b.0 as usize] > order[a.0 as usize] {
                b = idom[b.0 as usize].unwrap_or(BlockId(0));
            }
        }
        a
    }
}

/// An upper bound of every `u32` value (as unsigned; `u32::MAX` when nothing is known), for
/// choosing the signed `idiv`/`imod` where both operands are below 2^31. Known: constants;
/// thread, lane and wave ids and sizes within a workgroup (below 2^31: a workgroup is at
/// most the target's MAX_WORKGROUP_SIZE, 1024 on every profile, far below); `x % c`,
/// `x & c`, `x >> k`, `x // c`, `min`; sums and products of bounded values; and a loop
/// counter `i = phi(start, i + step)` tested `i < b` at its header (at most b + step - 1).
pub fn upper_bounds(f: &Func) -> Vec<u64> {
    const ALL: u64 = u32::MAX as u64;
    let n = f.types.len();
    let mut def: Vec<Option<&Op>> = vec![None; n];
    let mut phi_of: HashMap<Value, (BlockId, &Phi)> = HashMap::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for phi in &block.phis {
            phi_of.insert(phi.dst, (BlockId(b as u32), phi));
        }
        for inst in &block.insts {
            if let Some(d) = inst.dst {
                def[d.0 as usize] = Some(&inst.op);
            }
        }
    }
    let mut bound: Vec<Option<u64>> = vec![None; n];
    let mut visiting = vec![false; n];
    #[allow(
        clippy::too_many_arguments,
        reason = "a recursive walk that carries its memo tables and the loop's facts"
    )]
    fn ub(
        v: Value,
        f: &Func,
        idom: &[Option<BlockId>],
        def: &[Option<&Op>],
        phi_of: &HashMap<Value, (BlockId, &Phi)>,
        bound: &mut Vec<Option<u64>>,
        visiting: &mut Vec<bool>,
        depth: u32,
    ) -> u64 {
        const ALL: u64 = u32::MAX as u64;
        let i = v.0 as usize;
        if let Some(b) = bound[i] {
            return b;
        }
        if visiting[i] || depth > 200 || f.types[i] != Ty::Scalar(Scalar::U32) {
            return ALL;
        }
        visiting[i] = true;
        let mut go = |x: &Value| ub(*x, f, idom, def, phi_of, bound, visiting, depth + 1);
        let konst = |x: &Value| match def[x.0 as usize] {
            Some(Op::Int(c)) => Some((*c as u64) & ALL),
            _ => None,
        };
        let r = match def[i] {
            Some(Op::Int(c)) => (*c as u64) & ALL,
            Some(Op::Special(
                Special::ThreadId(_)
                | Special::LaneId
                | Special::WaveId
                | Special::WaveWidth
                | Special::WorkgroupSize(_),
            )) => (1 << 31) - 1,
            Some(Op::Binary(op, a, b)) => match op {
                BinOp::Rem => match konst(b) {
                    Some(c) => c.saturating_sub(1).min(go(a)),
                    None => go(b).saturating_sub(1).min(go(a)),
                },
                BinOp::And => go(a).min(go(b)),
                BinOp::Shr => konst(b).map_or(go(a), |k| go(a) >> (k & 31)),
                BinOp::Div => konst(b).filter(|c| *c > 0).map_or(go(a), |c| go(a) / c),
                BinOp::Add => {
                    // A counter stepped at the top of its loop: `v = phi(start - step, v) +
                    // step`, tested `v < b` at the header.
                    let at_top = (|| {
                        let step = konst(b)?;
                        let (h, phi) = phi_of.get(a)?;
                        let Term::Branch(c, body, _) = f.blocks[h.0 as usize].term else {
                            return None;
                        };
                        let Some(Op::Binary(BinOp::Lt, x, limit)) = def[c.0 as usize] else {
                            return None;
                        };
                        let [(p0, a0), (p1, a1)] = phi.args.as_slice() else { return None };
                        let start = match (*a0 == v, *a1 == v) {
                            (false, true) if Func::dominates(idom, body, *p1) => *a0,
                            (true, false) if Func::dominates(idom, body, *p0) => *a1,
                            _ => return None,
                        };
                        if *x != v || step >= 1 << 20 {
                            return None;
                        }
                        // The first value: start - step + step.
                        let first = match def[start.0 as usize] {
                            Some(Op::Int(s)) => ((*s as u64).wrapping_add(step)) & ALL,
                            Some(Op::Binary(BinOp::Add, s, k))
                                if konst(k).map(|k| (k + step) & ALL) == Some(0) =>
                            {
                                go(s)
                            }
                            _ => return None,
                        };
                        Some(first.max(go(limit).saturating_add(step)))
                    })();
                    at_top.unwrap_or_else(|| go(a).saturating_add(go(b)))
                }
                BinOp::Mul => go(a).saturating_mul(go(b)),
                BinOp::Shl => match konst(b) {
                    Some(k) if k < 32 => go(a).saturating_mul(1 << k),
                    _ => ALL,
                },
                BinOp::Or | BinOp::Xor => {
                    let m = go(a).max(go(b));
                    if m == 0 { 0 } else { (1u64 << (64 - m.leading_zeros())) - 1 }
                }
                _ => ALL,
            },
            Some(Op::Call(Intrinsic::Min, args)) => args.iter().map(&mut go).min().unwrap_or(ALL),
            Some(Op::Call(Intrinsic::Max, args)) => args.iter().map(&mut go).max().unwrap_or(ALL),
            Some(Op::Select(_, a, b)) => go(a).max(go(b)),
            None => match phi_of.get(&v) {
                // A counter: phi(start, v + step) at a header that tests v < b.
                Some((h, phi)) => {
                    let counter = (|| {
                        let Term::Branch(c, body, _) = f.blocks[h.0 as usize].term else {
                            return None;
                        };
                        let Some(Op::Binary(BinOp::Lt, x, b)) = def[c.0 as usize] else {
                            return None;
                        };
                        if *x != v || phi.args.len() != 2 {
                            return None;
                        }
                        let mut step = None;
                        let mut start = None;
                        for (from, a) in &phi.args {
                            match def[a.0 as usize] {
                                // The step comes round from inside the body: the loop goes on
                                // while the test holds.
                                Some(Op::Binary(BinOp::Add, y, k))
                                    if *y == v && Func::dominates(idom, body, *from) =>
                                {
                                    step = konst(k)
                                }
                                _ => start = Some(*a),
                            }
                        }
                        Some((step?, start?, *b))
                    })();
                    match counter {
                        Some((step, start, b)) if step < 1 << 20 => {
                            let top = go(&b).saturating_add(step);
                            go(&start).max(top)
                        }
                        _ => ALL,
                    }
                }
                None => ALL,
            },
            _ => ALL,
        };
        let r = r.min(ALL);
        visiting[i] = false;
        bound[i] = Some(r);
        r
    }
    let idom = f.dominators();
    (0..n)
        .map(|v| {
            ub(Value(v as u32), f, &idom, &def, &phi_of, &mut bound, &mut visiting, 0).min(ALL)
        })
        .collect()
}

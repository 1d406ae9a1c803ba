//! What passes ask of a MIR function without changing it: predecessors, block orders,
//! dominators (and a dominator tree for constant-time queries), how often each value is read
//! and which additions fold into addresses.

use super::{BinOp, BlockId, Func, Op, Space, Term, Value};

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

//! Structured control flow recovered from the reducible CFG: loops from their headers,
//! `if`/`else` from branches with their join at the immediate post-dominator, and edges that
//! leave a loop or return to its header as `break`/`continue`.

use crate::lir::Code;
use wave_diag::Span;
use wave_isa::{IntCond, Opcode};

use super::Lower;
use crate::hir::BinOp;
use crate::lir::{Arg, Inst, Kind, Pred, Reg, Unsupported, guardable, is_copy};
use crate::mir::{BlockId, Func, Op, Term, Value};

/// Where control goes, in the current loop's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Block(BlockId),
    /// Back to the innermost loop's header.
    Cont,
    /// To the innermost loop's latch (the block that goes back to the header, like a `for`
    /// loop's step), which `continue` reaches in a `for` loop.
    Latch,
    /// Out of the innermost loop.
    Brk,
    /// The thread ends.
    Ret,
    /// Nowhere (no path continues).
    Exit,
}

struct Region {
    header: Option<BlockId>,
    exit: Option<BlockId>,
    /// The one block that jumps back to the header, when it is not the header itself.
    latch: Option<BlockId>,
    blocks: Vec<bool>,
}

struct Structurer<'a, 'f> {
    l: &'a mut Lower<'f>,
    dom: crate::mir::DomTree,
    succ: Vec<Vec<BlockId>>,
    /// Loop headers: blocks with an incoming edge from a block they dominate.
    header: Vec<bool>,
    regions: Vec<Region>,
    out: Vec<Inst>,
    emitted: Vec<bool>,
    /// Blocks in reverse postorder.
    rpo: Vec<BlockId>,
    /// Instructions emitted a second time (tail duplication), against a budget.
    duplicated: usize,
}

impl Structurer<'_, '_> {
    fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.dom.dominates(a, b)
    }

    fn region(&self) -> &Region {
        self.regions.last().expect("the kernel's region")
    }

    /// Where an edge to `b` goes, in the innermost region's terms.
    fn classify(&self, b: BlockId) -> Node {
        let r = self.region();
        if Some(b) == r.header {
            Node::Cont
        } else if Some(b) == r.latch {
            Node::Latch
        } else if Some(b) == r.exit {
            Node::Brk
        } else {
            Node::Block(b)
        }
    }

    /// Follows blocks with no code and no condition.
    fn resolve(&self, mut b: BlockId) -> Node {
        for _ in 0..self.succ.len() + 1 {
            match self.classify(b) {
                Node::Block(x)
                    if self.l.code[x.0 as usize].is_empty()
                        && !self.header[x.0 as usize]
                        && !self.emitted[x.0 as usize] =>
                {
                    match self.l.f.blocks[x.0 as usize].term {
                        Term::Jump(t) => b = t,
                        Term::Return => return Node::Ret,
                        Term::Branch(..) => return Node::Block(x),
                    }
                }
                other => return other,
            }
        }
        Node::Block(b)
    }

    /// A region: the blocks a loop header dominates that its exit does not reach without
    /// passing the header, with post-dominators inside.
    fn make_region(&self, header: Option<BlockId>, exit: Option<BlockId>) -> Region {
        let n = self.succ.len();
        let mut blocks = vec![false; n];
        match header {
            None => blocks.iter_mut().for_each(|b| *b = true),
            Some(h) => {
                // Reached from the exit without passing the header: outside.
                let mut outside = vec![false; n];
                if let Some(e) = exit {
                    let mut stack = vec![e];
                    outside[e.0 as usize] = true;
                    while let Some(x) = stack.pop() {
                        for &s in &self.succ[x.0 as usize] {
                            if s != h && !outside[s.0 as usize] {
                                outside[s.0 as usize] = true;
                                stack.push(s);
                            }
                        }
                    }
                }
                for (b, inside) in blocks.iter_mut().enumerate() {
                    let id = BlockId(b as u32);
                    *inside = !outside[b] && self.dominates(h, id);
                }
            }
        }
        // The latch: the only back edge's source, ending in a jump to the header.
        let latch = header.and_then(|h| {
            let sources: Vec<usize> =
                (0..n).filter(|&b| blocks[b] && self.succ[b].contains(&h)).collect();
            match sources.as_slice() {
                [l] if BlockId(*l as u32) != h && self.l.f.blocks[*l].term == Term::Jump(h) => {
                    Some(BlockId(*l as u32))
                }
                _ => None,
            }
        });
        Region { header, exit, latch, blocks }
    }

    /// The exit of the loop at `h`: the block after the loop, where `break` goes.
    fn loop_exit(&self, h: BlockId) -> Option<BlockId> {
        let n = self.succ.len();
        // The natural loop: blocks that reach a back edge's source without passing h.
        let mut in_loop = vec![false; n];
        in_loop[h.0 as usize] = true;
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in self.succ.iter().enumerate() {
            for s in ss {
                preds[s.0 as usize].push(BlockId(b as u32));
            }
        }
        let mut stack: Vec<BlockId> =
            preds[h.0 as usize].iter().copied().filter(|p| self.dominates(h, *p)).collect();
        while let Some(x) = stack.pop() {
            if !in_loop[x.0 as usize] {
                in_loop[x.0 as usize] = true;
                stack.extend(preds[x.0 as usize].iter().copied());
            }
        }
        // Candidates: the header's own way out first, then other exits, then what they
        // reach, in block order.
        let mut candidates: Vec<BlockId> = Vec::new();
        for &s in &self.succ[h.0 as usize] {
            if !in_loop[s.0 as usize] {
                candidates.push(s);
            }
        }
        let mut exits: Vec<BlockId> = (0..n)
            .filter(|&b| in_loop[b])
            .flat_map(|b| self.succ[b].iter().copied())
            .filter(|s| !in_loop[s.0 as usize])
            .collect();
        exits.sort();
        exits.dedup();
        candidates.extend(exits.iter().copied());
        let mut reach = vec![false; n];
        let mut stack = exits.clone();
        while let Some(x) = stack.pop() {
            for &s in &self.succ[x.0 as usize] {
                if !in_loop[s.0 as usize] && !reach[s.0 as usize] {
                    reach[s.0 as usize] = true;
                    stack.push(s);
                }
            }
        }
        candidates.extend((0..n).filter(|&b| reach[b]).map(|b| BlockId(b as u32)));
        if candidates.is_empty() {
            return None;
        }
        // Valid: every edge leaving the region goes to the exit or back to the header.
        for &m in &candidates {
            let r = self.make_region_blocks(h, m);
            let ok = (0..n)
                .filter(|&b| r[b])
                .all(|b| self.succ[b].iter().all(|s| *s == m || *s == h || r[s.0 as usize]));
            if ok {
                return Some(m);
            }
        }
        // Only ways out that end the thread: no exit.
        None
    }

    fn make_region_blocks(&self, h: BlockId, e: BlockId) -> Vec<bool> {
        let n = self.succ.len();
        let mut outside = vec![false; n];
        let mut stack = vec![e];
        outside[e.0 as usize] = true;
        while let Some(x) = stack.pop() {
            for &s in &self.succ[x.0 as usize] {
                if s != h && !outside[s.0 as usize] {
                    outside[s.0 as usize] = true;
                    stack.push(s);
                }
            }
        }
        (0..n).map(|b| !outside[b] && self.dominates(h, BlockId(b as u32))).collect()
    }

    /// Blocks reachable from `from` inside the region without leaving it or passing `stop`,
    /// and which of the latch, the header (`continue`) and `stop` it reaches.
    fn reach(&self, from: Node, stop: Node) -> (Vec<bool>, bool, bool, bool) {
        let n = self.succ.len();
        let mut seen = vec![false; n];
        let r = self.region();
        let b = match from {
            Node::Block(b) => b,
            Node::Latch => return (seen, true, false, stop == Node::Latch),
            Node::Cont => return (seen, false, true, stop == Node::Cont),
            _ => return (seen, false, false, false),
        };
        let (mut latch, mut cont, mut at_stop) = (false, false, false);
        let mut stack = vec![b];
        seen[b.0 as usize] = true;
        if stop == Node::Block(b) {
            return (seen, false, false, true);
        }
        while let Some(x) = stack.pop() {
            for &s in &self.succ[x.0 as usize] {
                if Some(s) == r.latch {
                    latch = true;
                    continue;
                }
                if Some(s) == r.header {
                    cont = true;
                    continue;
                }
                if Some(s) == r.exit || !r.blocks[s.0 as usize] {
                    continue;
                }
                if stop == Node::Block(s) {
                    at_stop = true;
                    seen[s.0 as usize] = true;
                    continue;
                }
                if !seen[s.0 as usize] {
                    seen[s.0 as usize] = true;
                    stack.push(s);
                }
            }
        }
        at_stop |= (stop == Node::Latch && latch) || (stop == Node::Cont && cont);
        (seen, latch, cont, at_stop)
    }

    /// Where the arms of an `if` meet: the first block (in reverse postorder) that both
    /// reach without leaving; else the latch (or header) if both go there; else an arm that
    /// never reaches `stop` (it leaves by break, continue or return) meets the other at the
    /// other's start.
    fn join(&self, t: Node, f: Node, stop: Node) -> Node {
        if t == stop || f == stop {
            return stop;
        }
        let ((rt, lt, ct, st), (rf, lf, cf, sf)) = (self.reach(t, stop), self.reach(f, stop));
        // The first common block that every continuing path passes: from either arm, a path
        // that avoids it must not reach what follows it (it may only leave the region).
        let common = self
            .rpo
            .iter()
            .find(|b| rt[b.0 as usize] && rf[b.0 as usize] && self.merges_all(**b, &[t, f], stop));
        match common {
            Some(b) => Node::Block(*b),
            None if st && sf => stop,
            None if sf => f,
            None if st => t,
            None if lt && lf => Node::Latch,
            None if ct && cf => Node::Cont,
            None => f,
        }
    }

    /// Whether every path from `arms` that does not pass `j` leaves the region (or ends)
    /// without reaching anything `j` reaches, or `stop`.
    fn merges_all(&self, j: BlockId, arms: &[Node], stop: Node) -> bool {
        let n = self.succ.len();
        let r = self.region();
        let inside = |s: BlockId| {
            Some(s) != r.header && Some(s) != r.exit && Some(s) != r.latch && r.blocks[s.0 as usize]
        };
        // What follows j.
        let mut after = vec![false; n];
        let mut stack = vec![j];
        while let Some(x) = stack.pop() {
            for &s in &self.succ[x.0 as usize] {
                if inside(s) && s != j && !after[s.0 as usize] {
                    after[s.0 as usize] = true;
                    stack.push(s);
                }
            }
        }
        let mut seen = vec![false; n];
        let mut stack: Vec<BlockId> = arms
            .iter()
            .filter_map(|a| match a {
                Node::Block(b) if *b != j => Some(*b),
                _ => None,
            })
            .collect();
        while let Some(x) = stack.pop() {
            if seen[x.0 as usize] {
                continue;
            }
            seen[x.0 as usize] = true;
            if after[x.0 as usize] || stop == Node::Block(x) {
                return false;
            }
            for &s in &self.succ[x.0 as usize] {
                if inside(s) && s != j {
                    stack.push(s);
                }
            }
        }
        true
    }

    fn always(&mut self, span: &Span) -> Pred {
        let p = self.l.lir.pred();
        self.out.push(Inst::new(
            Kind::Op,
            Code::with(Opcode::Icmp, IntCond::Eq),
            vec![Arg::PDef(p), Arg::Any, Arg::Any],
            span,
        ));
        p
    }

    /// Whether control can go on past the last instruction emitted: not after a `continue` or
    /// `break` on an always-true predicate ([`Self::always`]) or an unguarded `halt`.
    fn falls_through(&self) -> bool {
        let n = self.out.len();
        match self.out.last() {
            Some(i) if i.kind == Kind::Halt => i.guard.is_some(),
            Some(i) if matches!(i.kind, Kind::Break | Kind::Continue) && i.guard.is_none() => {
                let Some(Arg::PUse(p, false)) = i.args.first() else { return true };
                let before = n.checked_sub(2).and_then(|k| self.out.get(k));
                !before.is_some_and(|b| {
                    b.guard.is_none() && b.args.as_slice() == [Arg::PDef(*p), Arg::Any, Arg::Any]
                })
            }
            _ => true,
        }
    }

    /// Leaves unconditionally: `continue`/`break` on an always-true predicate, or `halt`.
    /// The latch's code, for a `continue` that must run it before going back.
    fn latch_code(&self) -> Vec<Inst> {
        match self.region().latch {
            Some(l) => self.l.code[l.0 as usize].clone(),
            None => Vec::new(),
        }
    }

    fn escape(&mut self, to: Node, span: &Span) {
        match to {
            Node::Latch => {
                let code = self.latch_code();
                self.out.extend(code);
                self.escape(Node::Cont, span);
            }
            Node::Cont => {
                let p = self.always(span);
                self.out.push(Inst::new(
                    Kind::Continue,
                    Code::of(Opcode::Continue),
                    vec![Arg::PUse(p, false)],
                    span,
                ));
            }
            Node::Brk => {
                let p = self.always(span);
                self.out.push(Inst::new(
                    Kind::Break,
                    Code::of(Opcode::Break),
                    vec![Arg::PUse(p, false)],
                    span,
                ));
            }
            Node::Ret => self.out.push(Inst::new(Kind::Halt, Code::of(Opcode::Halt), vec![], span)),
            _ => {}
        }
    }

    /// Leaves where the predicate holds.
    fn escape_if(&mut self, to: Node, c: (Pred, bool), span: &Span) {
        match to {
            Node::Latch => {
                let code = self.latch_code();
                if code.iter().all(is_copy) {
                    // Copies into the header's phis (or nothing): made where the way out is
                    // taken, then back to the top.
                    self.guarded(code, c);
                    self.escape_if(Node::Cont, c, span);
                } else {
                    self.out.push(Inst::new(
                        Kind::If,
                        Code::of(Opcode::If),
                        vec![Arg::PUse(c.0, c.1)],
                        span,
                    ));
                    self.out.extend(code);
                    self.escape(Node::Cont, span);
                    self.out.push(Inst::new(Kind::EndIf, Code::of(Opcode::Endif), vec![], span));
                }
            }
            Node::Cont => self.out.push(Inst::new(
                Kind::Continue,
                Code::of(Opcode::Continue),
                vec![Arg::PUse(c.0, c.1)],
                span,
            )),
            Node::Brk => self.out.push(Inst::new(
                Kind::Break,
                Code::of(Opcode::Break),
                vec![Arg::PUse(c.0, c.1)],
                span,
            )),
            Node::Ret => {
                let mut h = Inst::new(Kind::Halt, Code::of(Opcode::Halt), vec![], span);
                h.guard = Some(c);
                self.out.push(h);
            }
            _ => {}
        }
    }

    /// The operands of `c` when it is an `and` of two conditions held in predicates.
    fn held_and(&self, c: Value) -> Option<(Value, Value)> {
        match self.l.def[c.0 as usize] {
            Some(Op::Binary(BinOp::LogicAnd, x, y))
                if self.l.pred_form[c.0 as usize] && self.l.is_held(*x) && self.l.is_held(*y) =>
            {
                Some((*x, *y))
            }
            _ => None,
        }
    }

    /// Whether the innermost loop's latch holds only copies (or nothing): a way to it can
    /// then be `continue p`, with the copies made under `p` first.
    fn latch_copies_only(&self) -> bool {
        self.latch_code().iter().all(is_copy)
    }

    /// Whether the way from `arm` to `stop` is a few plain instructions in a row, which
    /// if-conversion turns into guarded instructions: no loop, branch or way out.
    fn straight_to(&self, mut arm: Node, stop: Node) -> bool {
        let mut count = 0;
        for _ in 0..self.succ.len() + 1 {
            if arm == stop {
                return true;
            }
            let Node::Block(b) = arm else { return false };
            let code = &self.l.code[b.0 as usize];
            count += code.iter().filter(|i| i.kind != Kind::Copy).count();
            if self.header[b.0 as usize] || count > 6 || !code.iter().all(guardable) {
                return false;
            }
            arm = match self.l.f.blocks[b.0 as usize].term {
                Term::Jump(t) => self.resolve(t),
                _ => return false,
            };
        }
        false
    }

    /// Whether to leave for `to` where a branch's condition says so, rather than wrap the
    /// other arm (`other`) in an `if`: always for `break`, `return` and `continue` past the
    /// rest of the body; for the end of the body (`to` is `stop`), when the latch holds
    /// only copies and the other arm is more than if-conversion would take.
    fn escape_pays(&self, to: Node, other: Node, stop: Node) -> bool {
        let can_leave = match to {
            Node::Brk | Node::Ret | Node::Cont => true,
            Node::Latch => self.latch_copies_only(),
            _ => false,
        };
        let other_is_long = matches!(other, Node::Block(_)) && !self.straight_to(other, stop);
        can_leave && other != to && (to != stop || other_is_long)
    }

    /// A block of a few plain instructions (phi copies, mostly) that then leaves the loop or
    /// the kernel: its code and where it goes.
    fn code_then_escape(&self, arm: Node, other: Node, stop: Node) -> Option<(Vec<Inst>, Node)> {
        let Node::Block(b) = arm else { return None };
        if self.header[b.0 as usize] || self.emitted[b.0 as usize] {
            return None;
        }
        let code = &self.l.code[b.0 as usize];
        if code.is_empty() || code.len() > 6 || !code.iter().all(guardable) {
            return None;
        }
        let to = match self.l.f.blocks[b.0 as usize].term {
            Term::Jump(t) => self.resolve(t),
            Term::Return => Node::Ret,
            Term::Branch(..) => return None,
        };
        self.escape_pays(to, other, stop).then(|| (code.clone(), to))
    }

    /// Emits `code` under `guard`, before a way out taken under the same guard; a register
    /// it writes that nothing else reads (a phi of the block the code comes from) need not
    /// keep its old value, nor does a phi's incoming copy: the lanes that stay write it
    /// again on their own way to the phi's block.
    fn guarded(&mut self, code: Vec<Inst>, guard: (Pred, bool)) {
        let phi_copies: std::collections::HashSet<Reg> =
            self.l.phi_copy.values().copied().collect();
        let reads_elsewhere = |d: Reg, code: &[Inst], l: &Lower<'_>| {
            let total: usize =
                l.code.iter().flatten().map(|i| i.uses().filter(|u| *u == d).count()).sum();
            let here: usize = code.iter().map(|i| i.uses().filter(|u| *u == d).count()).sum();
            total > here
        };
        let n = code.len();
        for k in 0..n {
            let mut i = code[k].clone();
            i.guard = Some(guard);
            i.guard_kills = i.defs().next().is_some()
                && i.defs().all(|d| {
                    phi_copies.contains(&d)
                        || (!reads_elsewhere(d, &code, self.l)
                            && code[..=k].iter().all(|x| !x.uses().any(|u| u == d)))
                });
            self.out.push(i);
        }
    }

    fn is_escape(n: Node) -> bool {
        matches!(n, Node::Cont | Node::Brk | Node::Ret | Node::Latch)
    }

    /// Emits code from `at` until control reaches `stop`.
    fn seq(&mut self, mut at: Node, stop: Node, depth: usize) -> Result<(), Unsupported> {
        if depth > 10_000 {
            return Err(Unsupported {
                message: "control flow nested too deeply".into(),
                span: 0..0,
            });
        }
        let mut guard = 0usize;
        loop {
            guard += 1;
            if guard > 4 * self.succ.len() + 8 {
                return Err(Unsupported {
                    message: "internal error: the control flow could not be structured".into(),
                    span: 0..0,
                });
            }
            if at == stop {
                return Ok(());
            }
            let b = match at {
                Node::Block(b) => b,
                Node::Exit => return Ok(()),
                escape => {
                    let span = self.out.last().map(|i| i.span.clone()).unwrap_or(0..0);
                    self.escape(escape, &span);
                    return Ok(());
                }
            };
            if self.emitted[b.0 as usize] {
                // Reached again from another arm (an unstructured merge, like the code a
                // `continue` skips in an unrolled loop): emit it again there (tail
                // duplication); each thread still runs it once.
                self.duplicated += self.l.code[b.0 as usize].len() + 1;
                if self.duplicated > 50_000 {
                    return Err(Unsupported {
                        message: "the control flow is too irregular to structure without copying too much code".into(),
                        span: self.l.end_span[b.0 as usize].clone(),
                    });
                }
            }
            if self.header[b.0 as usize] && self.region().header != Some(b) {
                // A loop: `loop`, the body from its header until it comes back, `endloop`.
                let exit = self.loop_exit(b);
                let span = self.l.end_span[b.0 as usize].clone();
                let region = self.make_region(Some(b), exit);
                self.out.push(Inst::new(Kind::Loop, Code::of(Opcode::Loop), vec![], &span));
                self.regions.push(region);
                let end = if self.region().latch.is_some() { Node::Latch } else { Node::Cont };
                if let Some(next) = self.block(b, end, depth)? {
                    self.seq(next, end, depth + 1)?;
                }
                // (A body that ends by leaving, `break` or `halt` on every path that reaches
                // its end, has no fall-through into the latch: its `continue`s carry the
                // latch's code themselves, and a copy here would be dead code reading values
                // that no path defines.)
                if let Some(l) = self.region().latch
                    && self.falls_through()
                {
                    self.block(l, Node::Cont, depth)?;
                }
                self.regions.pop();
                self.out.push(Inst::new(Kind::EndLoop, Code::of(Opcode::Endloop), vec![], &span));
                at = match exit {
                    Some(e) => self.resolve(e),
                    None => Node::Exit,
                };
                continue;
            }
            match self.block(b, stop, depth)? {
                Some(next) => at = next,
                None => return Ok(()),
            }
        }
    }

    /// Emits block `b` and its terminator; returns where control goes next (or `None` when
    /// the sequence is finished).
    fn block(&mut self, b: BlockId, stop: Node, depth: usize) -> Result<Option<Node>, Unsupported> {
        self.emitted[b.0 as usize] = true;
        let code = self.l.code[b.0 as usize].clone();
        self.out.extend(code);
        let span = self.l.end_span[b.0 as usize].clone();
        let term = self.l.f.blocks[b.0 as usize].term.clone();
        let next = match term {
            Term::Return => Node::Ret,
            Term::Jump(t) => self.resolve(t),
            Term::Branch(c, t, f) => {
                let (t, f) = (self.resolve(t), self.resolve(f));
                if t == f {
                    t
                } else if let Some((x, y)) = self.held_and(c)
                    && matches!(f, Node::Ret | Node::Brk | Node::Cont)
                    && self.escape_pays(f, t, stop)
                    && self.code_then_escape(t, f, stop).is_none()
                    && !(Self::is_escape(t) && self.escape_pays(t, f, stop))
                {
                    // Leaving unless two held conditions both hold: leave where either
                    // fails (`@!p0 halt` / `@!p1 halt`), rather than combine them first.
                    for v in [x, y] {
                        let mut pre = Vec::new();
                        let (p, n) = self.l.cond(v, &mut pre, &span);
                        self.out.extend(pre);
                        self.escape_if(f, (p, !n), &span);
                    }
                    t
                } else {
                    let before = self.out.len();
                    let mut pre = Vec::new();
                    let cond = self.l.cond(c, &mut pre, &span);
                    self.out.extend(pre);
                    if let Some((code, to)) = self.code_then_escape(t, f, stop) {
                        // The way out's code, run where it is taken, then leave.
                        self.guarded(code, cond);
                        self.escape_if(to, cond, &span);
                        f
                    } else if let Some((code, to)) = self.code_then_escape(f, t, stop) {
                        let neg = (cond.0, !cond.1);
                        self.guarded(code, neg);
                        self.escape_if(to, neg, &span);
                        t
                    } else if Self::is_escape(t) && self.escape_pays(t, f, stop) {
                        self.escape_if(t, cond, &span);
                        f
                    } else if Self::is_escape(f) && self.escape_pays(f, t, stop) {
                        self.escape_if(f, (cond.0, !cond.1), &span);
                        t
                    } else {
                        let mut join = self.join(t, f, stop);
                        if let Node::Block(j) = join {
                            join = self.resolve(j);
                        }
                        let if_at = self.out.len();
                        self.out.push(Inst::new(
                            Kind::If,
                            Code::of(Opcode::If),
                            vec![Arg::PUse(cond.0, cond.1)],
                            &span,
                        ));
                        self.seq(t, join, depth + 1)?;
                        if self.out.len() == if_at + 1 {
                            // Nothing to do where the condition holds: `if !p` and the rest.
                            self.out[if_at].args = vec![Arg::PUse(cond.0, !cond.1)];
                            self.seq(f, join, depth + 1)?;
                            if self.out.len() == if_at + 1 {
                                // Nothing at all: no test either.
                                self.out.truncate(before);
                            } else {
                                self.out.push(Inst::new(
                                    Kind::EndIf,
                                    Code::of(Opcode::Endif),
                                    vec![],
                                    &span,
                                ));
                            }
                        } else {
                            let else_at = self.out.len();
                            self.out.push(Inst::new(
                                Kind::Else,
                                Code::of(Opcode::Else),
                                vec![],
                                &span,
                            ));
                            self.seq(f, join, depth + 1)?;
                            if self.out.len() == else_at + 1 {
                                self.out.pop();
                            }
                            self.out.push(Inst::new(
                                Kind::EndIf,
                                Code::of(Opcode::Endif),
                                vec![],
                                &span,
                            ));
                        }
                        join
                    }
                }
            }
        };
        if next == stop {
            return Ok(None);
        }
        if next == Node::Ret {
            self.out.push(Inst::new(Kind::Halt, Code::of(Opcode::Halt), vec![], &span));
            return Ok(None);
        }
        Ok(Some(next))
    }
}

pub(super) fn structure(l: &mut Lower<'_>) -> Result<Vec<Inst>, Unsupported> {
    let f = l.f;
    let n = f.blocks.len();
    let idom = f.dominators();
    let succ: Vec<Vec<BlockId>> = f
        .blocks
        .iter()
        .map(|b| {
            let mut s = b.term.successors();
            s.dedup();
            s
        })
        .collect();
    let mut header = vec![false; n];
    for (b, ss) in succ.iter().enumerate() {
        for s in ss {
            if Func::dominates(&idom, *s, BlockId(b as u32)) {
                header[s.0 as usize] = true;
            }
        }
    }
    let mut s = Structurer {
        l,
        dom: crate::mir::DomTree::new(&idom),
        succ,
        header,
        regions: Vec::new(),
        out: Vec::new(),
        emitted: vec![false; n],
        rpo: f.reverse_postorder(),
        duplicated: 0,
    };
    let top = s.make_region(None, None);
    s.regions.push(top);
    s.seq(Node::Block(BlockId(0)), Node::Exit, 0)?;
    if s.out.last().is_none_or(|i| i.kind != Kind::Halt || i.guard.is_some()) {
        let span = s.out.last().map(|i| i.span.clone()).unwrap_or(0..0);
        s.out.push(Inst::new(Kind::Halt, Code::of(Opcode::Halt), vec![], &span));
    }
    Ok(std::mem::take(&mut s.out))
}

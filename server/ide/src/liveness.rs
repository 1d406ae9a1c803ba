//! Live registers per instruction: how many general registers hold a value that a later
//! instruction may read, after each instruction of a kernel (the optional inlay hint).
//!
//! A backward data-flow over each thread's control flow: `if` goes to its body and to its
//! `else` or `endif`, `else` jumps to its `endif`, `endloop` goes back to its `loop`, `break`
//! and `continue` (predicated) go on or leave, `halt` ends, `call` goes to its label and
//! `return` to after every call. A guarded write does not end a value's life (some lanes keep
//! the old one).

use wave_asm::syntax::{OperandKind, StmtKind};
use wave_db::KernelSource;
use wave_isa::{Flow, Operand as Form};

/// 256 registers as a bit set.
type Set = [u64; 4];

fn add(set: &mut Set, r: u32) {
    if let Some(word) = set.get_mut((r / 64) as usize) {
        *word |= 1 << (r % 64);
    }
}

fn count(set: &Set) -> u32 {
    set.iter().map(|w| w.count_ones()).sum()
}

/// For each instruction of a kernel that assembles: the end of its statement (an offset in the
/// kernel's text) and the number of registers live after it.
#[salsa::tracked(returns(ref), lru = 4096)]
pub fn kernel_liveness<'db>(
    db: &'db dyn salsa::Database,
    kernel: KernelSource<'db>,
) -> Vec<(usize, u32)> {
    let check = wave_db::check_kernel(db, kernel);
    let placed = &check.placed;
    let n = placed.len();
    if n == 0 {
        return Vec::new();
    }
    let mut uses = vec![[0u64; 4]; n];
    let mut defs = vec![[0u64; 4]; n];
    let mut flow = vec![Flow::Next; n];
    for (i, p) in placed.iter().enumerate() {
        let StmtKind::Instruction(inst) = &check.parsed.stmts[p.stmt].kind else { continue };
        let Some(op) = p.inst.info() else { continue };
        flow[i] = op.flags.flow;
        let guarded = p.inst.guard.is_some();
        for (k, operand) in inst.operands.iter().enumerate() {
            let write = matches!(op.operands.get(k), Some(Form::Reg { write: true, .. }));
            let regs: Vec<u32> = match &operand.kind {
                OperandKind::Register { number, .. } => vec![*number],
                OperandKind::Pair { low, high } => (*low..=*high).collect(),
                OperandKind::Memory { base, .. } => match base.kind {
                    OperandKind::Register { number, .. } => vec![number],
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            for r in regs {
                if write && !guarded {
                    add(&mut defs[i], r);
                } else if !write {
                    add(&mut uses[i], r);
                }
            }
        }
        // A parameter named as an operand reads its register.
        for operand in &inst.operands {
            let name = match &operand.kind {
                OperandKind::Name(n) => Some(n),
                OperandKind::Memory { base, .. } => match &base.kind {
                    OperandKind::Name(n) => Some(n),
                    _ => None,
                },
                _ => None,
            };
            if let Some(name) = name
                && let Some(k) = check.module.kernels.first()
                && let Some(index) = k.params.iter().position(|p| p.name == *name)
            {
                add(&mut uses[i], index as u32);
            }
        }
    }
    // Successors.
    let at_offset = |o: u32| placed.iter().position(|p| p.offset == o);
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut blocks: Vec<usize> = Vec::new();
    let mut matching = vec![usize::MAX; n]; // if → else/endif, else → endif, endloop → loop, loop → endloop
    for i in 0..n {
        match flow[i] {
            Flow::If | Flow::Loop => blocks.push(i),
            Flow::Else => {
                if let Some(open) = blocks.pop() {
                    matching[open] = i;
                }
                blocks.push(i);
            }
            Flow::Endif | Flow::Endloop => {
                if let Some(open) = blocks.pop() {
                    matching[open] = i;
                    matching[i] = open;
                }
            }
            Flow::Next | Flow::Break | Flow::Continue | Flow::Call | Flow::Return | Flow::Halt => {}
        }
    }
    let enclosing_loop = |i: usize| -> Option<usize> {
        (0..i)
            .rev()
            .find(|&j| flow[j] == Flow::Loop && matching[j] != usize::MAX && matching[j] > i)
    };
    let mut returns_to: Vec<usize> = Vec::new();
    for i in 0..n {
        let next = (i + 1 < n).then_some(i + 1);
        match flow[i] {
            Flow::If => {
                succ[i].extend(next);
                let m = matching[i];
                if m != usize::MAX {
                    succ[i].push(if flow[m] == Flow::Else { m + 1 } else { m });
                }
            }
            Flow::Else => {
                let m = matching[i];
                if m != usize::MAX {
                    succ[i].push(m);
                }
            }
            Flow::Endloop => {
                let m = matching[i];
                if m != usize::MAX {
                    succ[i].push(m);
                }
            }
            Flow::Break => {
                succ[i].extend(next);
                if let Some(l) = enclosing_loop(i) {
                    succ[i].extend((matching[l] + 1 < n).then_some(matching[l] + 1));
                }
            }
            Flow::Continue => {
                succ[i].extend(next);
                if let Some(l) = enclosing_loop(i) {
                    succ[i].push(l);
                }
            }
            Flow::Halt if placed[i].inst.guard.is_none() => {}
            Flow::Halt => succ[i].extend(next),
            Flow::Return => {}
            Flow::Call => {
                succ[i].extend(placed[i].inst.ext.and_then(at_offset));
                returns_to.extend(next);
            }
            Flow::Next | Flow::Loop | Flow::Endif => succ[i].extend(next),
        }
    }
    for i in 0..n {
        if flow[i] == Flow::Return {
            succ[i].extend(returns_to.iter().copied());
        }
    }
    // Backward fixpoint.
    let mut live_in = vec![[0u64; 4]; n];
    let mut live_out = vec![[0u64; 4]; n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            let mut out = [0u64; 4];
            for &s in &succ[i] {
                for w in 0..4 {
                    out[w] |= live_in[s][w];
                }
            }
            let mut inn = [0u64; 4];
            for w in 0..4 {
                inn[w] = uses[i][w] | (out[w] & !defs[i][w]);
            }
            if inn != live_in[i] || out != live_out[i] {
                live_in[i] = inn;
                live_out[i] = out;
                changed = true;
            }
        }
    }
    placed
        .iter()
        .enumerate()
        .map(|(i, p)| (check.parsed.stmts[p.stmt].span.end, count(&live_out[i])))
        .collect()
}

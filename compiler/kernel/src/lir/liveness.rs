//! Register liveness over the structured instruction list: each thread follows its own path,
//! so the per-thread control flow of [`super::successors`] is the right one. The if-converter
//! and the register allocator both ask it.

use super::Inst;

/// Live-out register sets of every instruction, as bit sets over `0..nregs`.
pub fn liveness(insts: &[Inst], succ: &[Vec<usize>], nregs: usize) -> Vec<Vec<u64>> {
    let words = nregs.div_ceil(64).max(1);
    let n = insts.len();
    let mut live_in = vec![vec![0u64; words]; n + 1];
    let mut live_out = vec![vec![0u64; words]; n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            let mut out = vec![0u64; words];
            for &s in &succ[i] {
                for (o, x) in out.iter_mut().zip(&live_in[s.min(n)]) {
                    *o |= x;
                }
            }
            let mut inn = out.clone();
            for d in insts[i].defs() {
                inn[d.index() / 64] &= !(1 << (d.index() % 64));
            }
            for u in insts[i].uses() {
                inn[u.index() / 64] |= 1 << (u.index() % 64);
            }
            if inn != live_in[i] {
                live_in[i] = inn;
                changed = true;
            }
            live_out[i] = out;
        }
    }
    live_out
}

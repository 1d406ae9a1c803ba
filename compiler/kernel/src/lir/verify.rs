//! The LIR verifier, run after lowering and after each LIR pass in debug builds.

use std::collections::HashMap;

use super::print::reg_name;
use super::{Kind, Lir, Pred, Reg, successors};

/// Checks LIR: structure balanced, every register and predicate read is written on every
/// path before it (parameters are written at entry), operands where they belong.
pub fn verify(lir: &Lir) -> Vec<String> {
    let mut problems = Vec::new();
    let succ = match successors(&lir.insts) {
        Ok(s) => s,
        Err(e) => return vec![e],
    };
    let n = lir.insts.len();
    // Must-be-defined: a forward dataflow of sets (intersection at joins).
    let mut index: HashMap<Reg, usize> = HashMap::new();
    let mut pindex: HashMap<Pred, usize> = HashMap::new();
    for inst in &lir.insts {
        for r in inst.defs().chain(inst.uses()) {
            let k = index.len();
            index.entry(r).or_insert(k);
        }
        for p in inst.pred_defs().chain(inst.pred_uses()) {
            let k = pindex.len();
            pindex.entry(p).or_insert(k);
        }
    }
    let width = index.len() + pindex.len();
    let words = width.div_ceil(64).max(1);
    let full = vec![u64::MAX; words];
    let mut into: Vec<Option<Vec<u64>>> = vec![None; n + 1];
    let mut entry = vec![0u64; words];
    for p in 0..lir.params.len() as u32 {
        if let Some(&k) = index.get(&Reg::phys(p)) {
            entry[k / 64] |= 1 << (k % 64);
        }
    }
    into[0] = Some(entry);
    let bit = |set: &[u64], k: usize| set[k / 64] >> (k % 64) & 1 == 1;
    let mut work: Vec<usize> = vec![0];
    let mut visits = 0usize;
    while let Some(i) = work.pop() {
        visits += 1;
        if visits > 64 * (n + 1) * 4 || i >= n {
            continue;
        }
        let mut set = into[i].clone().unwrap_or_else(|| full.clone());
        for r in lir.insts[i].defs() {
            let k = index[&r];
            set[k / 64] |= 1 << (k % 64);
        }
        for p in lir.insts[i].pred_defs() {
            let k = index.len() + pindex[&p];
            set[k / 64] |= 1 << (k % 64);
        }
        for &s in &succ[i] {
            let merged = match &into[s] {
                None => set.clone(),
                Some(old) => old.iter().zip(&set).map(|(a, b)| a & b).collect(),
            };
            if into[s].as_ref() != Some(&merged) {
                into[s] = Some(merged);
                work.push(s);
            }
        }
    }
    for (i, inst) in lir.insts.iter().enumerate() {
        let Some(set) = &into[i] else { continue };
        for r in inst.uses() {
            if !bit(set, index[&r]) {
                problems.push(format!(
                    "instruction {i} (`{}`) reads {} before it is written on some path",
                    inst.code,
                    reg_name(r)
                ));
            }
        }
        for p in inst.pred_uses() {
            if !bit(set, index.len() + pindex[&p]) {
                problems.push(format!(
                    "instruction {i} (`{}`) reads %p{} before it is written",
                    inst.code, p.0
                ));
            }
        }
        let control =
            matches!(inst.kind, Kind::If | Kind::Else | Kind::EndIf | Kind::Loop | Kind::EndLoop);
        if control && inst.guard.is_some() {
            problems.push(format!("instruction {i}: `{}` cannot be guarded", inst.code));
        }
    }
    problems
}

//! Sparse conditional constant propagation (O2).

use super::fold::{Lat, fold, meet, scalar_of};
use crate::hir::UnOp;
use crate::mir::{BlockId, Func, Inst, Op, Phi, Term, Value};

/// Sparse conditional constant propagation: values proven constant become constants, and
/// branches on constants become jumps, dropping the blocks and phi arguments they no longer
/// reach.
pub fn sccp(f: &mut Func) -> bool {
    let n = f.blocks.len();
    let mut lat = vec![Lat::Top; f.types.len()];
    let mut executable = vec![false; n];
    executable[0] = true;
    let rpo = f.reverse_postorder();
    // Edges that can be taken, by (from, to).
    let mut edges: std::collections::HashSet<(BlockId, BlockId)> = Default::default();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &rpo {
            if !executable[b.0 as usize] {
                continue;
            }
            let block = &f.blocks[b.0 as usize];
            for phi in &block.phis {
                let mut v = Lat::Top;
                for (p, a) in &phi.args {
                    if edges.contains(&(*p, b)) {
                        v = meet(v, lat[a.0 as usize]);
                    }
                }
                let new = meet(lat[phi.dst.0 as usize], v);
                if new != lat[phi.dst.0 as usize] {
                    lat[phi.dst.0 as usize] = new;
                    changed = true;
                }
            }
            for inst in &block.insts {
                let Some(d) = inst.dst else { continue };
                let get = |v: &Value| lat[v.0 as usize];
                let v = match &inst.op {
                    Op::Int(x) => Lat::Int(*x),
                    Op::Float(x) => Lat::Float(*x),
                    Op::Bool(x) => Lat::Bool(*x),
                    Op::Binary(op, a, b2) => match (get(a), get(b2)) {
                        (Lat::Top, _) | (_, Lat::Top) => Lat::Top,
                        (x, y) => {
                            scalar_of(f, *a).and_then(|s| fold(*op, s, x, y)).unwrap_or(Lat::Bottom)
                        }
                    },
                    Op::Unary(UnOp::Not, a) => match get(a) {
                        Lat::Bool(x) => Lat::Bool(!x),
                        Lat::Top => Lat::Top,
                        _ => Lat::Bottom,
                    },
                    Op::Select(c, a, b2) => match get(c) {
                        Lat::Bool(true) => get(a),
                        Lat::Bool(false) => get(b2),
                        Lat::Top => Lat::Top,
                        _ => meet(get(a), get(b2)),
                    },
                    _ => Lat::Bottom,
                };
                let new = meet(lat[d.0 as usize], v);
                if new != lat[d.0 as usize] {
                    lat[d.0 as usize] = new;
                    changed = true;
                }
            }
            let targets: Vec<BlockId> = match &block.term {
                Term::Jump(t) => vec![*t],
                Term::Branch(c, t, e) => match lat[c.0 as usize] {
                    Lat::Bool(true) => vec![*t],
                    Lat::Bool(false) => vec![*e],
                    Lat::Top => Vec::new(),
                    _ => vec![*t, *e],
                },
                Term::Return => Vec::new(),
            };
            for t in targets {
                if edges.insert((b, t)) {
                    changed = true;
                }
                if !executable[t.0 as usize] {
                    executable[t.0 as usize] = true;
                    changed = true;
                }
            }
        }
    }
    // Rewrite: constants, jumps, and the edges and blocks that are gone.
    let mut rewrote = false;
    for (block, _) in f.blocks.iter_mut().zip(&executable).filter(|(_, e)| **e) {
        for inst in &mut block.insts {
            let Some(d) = inst.dst else { continue };
            if inst.op.has_effect() || matches!(inst.op, Op::Int(_) | Op::Float(_) | Op::Bool(_)) {
                continue;
            }
            let c = match lat[d.0 as usize] {
                Lat::Int(x) => Op::Int(x),
                Lat::Float(x) => Op::Float(x),
                Lat::Bool(x) => Op::Bool(x),
                _ => continue,
            };
            inst.op = c;
            rewrote = true;
        }
        let mut consts = Vec::new();
        block.phis.retain(|phi: &Phi| {
            let c = match lat[phi.dst.0 as usize] {
                Lat::Int(x) => Op::Int(x),
                Lat::Float(x) => Op::Float(x),
                Lat::Bool(x) => Op::Bool(x),
                _ => return true,
            };
            consts.push(Inst { dst: Some(phi.dst), op: c, span: 0..0 });
            false
        });
        if !consts.is_empty() {
            rewrote = true;
            consts.extend(std::mem::take(&mut block.insts));
            block.insts = consts;
        }
        if let Term::Branch(c, t, e) = block.term.clone() {
            match lat[c.0 as usize] {
                Lat::Bool(true) => {
                    block.term = Term::Jump(t);
                    rewrote = true;
                }
                Lat::Bool(false) => {
                    block.term = Term::Jump(e);
                    rewrote = true;
                }
                _ => {}
            }
        }
    }
    if rewrote {
        crate::mir::remove_unreachable(f);
        // Phi arguments only from the predecessors that remain.
        let preds = f.predecessors();
        for (b, block) in f.blocks.iter_mut().enumerate() {
            for phi in &mut block.phis {
                phi.args.retain(|(p, _)| preds[b].contains(p));
            }
        }
    }
    rewrote
}

#[cfg(test)]
mod tests {

    use crate::opt::tests::lowered;
    use crate::opt::{Level, optimize};

    #[test]
    fn sccp_removes_a_dead_branch_and_strength_reduction_shifts() {
        let src = "import wave\n@wave.kernel\ndef k(out: u32[:], n: u32):\n    w = 4\n    if w > 8:\n        out[0] = 1\n    else:\n        out[1] = n * 8 + n // 4 + n % 16\n";
        let mut f = lowered(src);
        optimize(&mut f, Level::O2).expect("verified");
        let text = crate::mir::print(std::slice::from_ref(&f));
        assert_eq!(text.matches("store.device").count(), 1, "the dead branch is gone:\n{text}");
        assert!(!text.contains("branch"), "{text}");
        assert!(
            !text.contains(" mul ") && !text.contains(" div ") && !text.contains(" rem "),
            "{text}"
        );
        assert!(text.contains("shl") && text.contains("shr") && text.contains("and"), "{text}");
    }
}

//! Full unrolling of counted innermost loops: small ones at O2, larger ones at O3.

use std::collections::HashMap;

use super::fold::{Lat, fold, scalar_of, wrap};
use super::substitute;
use crate::hir::{BinOp, Intrinsic};
use crate::mir::{BlockId, Func, Op, Term, Value, natural_loops, simple_loop};

/// The most copies of a loop body full unrolling makes.
pub const UNROLL_MAX_TRIPS: u64 = 32;

/// The most instructions a fully unrolled loop may have.
pub const UNROLL_MAX_INSTRUCTIONS: usize = 384;

/// Full unrolling of innermost loops with a trip count known at compile time: a loop whose
/// only exit is its header's test of a basic induction variable (constant start and step)
/// against a constant. The body is copied once per iteration, the induction variable becomes
/// a constant in each copy, and the next passes fold it into addresses and offsets. A loop
/// whose copies would pass [`UNROLL_MAX_TRIPS`] iterations or [`UNROLL_MAX_INSTRUCTIONS`]
/// instructions stays a loop (more code would mean more registers live at once, and so less
/// occupancy, for little gain).
pub fn unroll(f: &mut Func) -> bool {
    unroll_within(f, UNROLL_MAX_TRIPS, UNROLL_MAX_INSTRUCTIONS)
}

/// The most copies of a loop body O2's unrolling makes.
pub const UNROLL_SMALL_MAX_TRIPS: u64 = 16;

/// The most instructions a loop fully unrolled at O2 may have.
pub const UNROLL_SMALL_MAX_INSTRUCTIONS: usize = 256;

/// Full unrolling at O2: as [`unroll`], for small loops only ([`UNROLL_SMALL_MAX_TRIPS`],
/// [`UNROLL_SMALL_MAX_INSTRUCTIONS`]), such as a 16-step walk over a tile. A GPU's own
/// compiler does not unroll a PTX loop, so a loop kept at O2 costs its test, its branch and
/// its counter on every step (SGEMM ran 1.4x slower than CUDA's unrolled twin). The
/// registers this could cost are won back by rematerialization (`motion.rs`).
pub fn unroll_small(f: &mut Func) -> bool {
    unroll_within(f, UNROLL_SMALL_MAX_TRIPS, UNROLL_SMALL_MAX_INSTRUCTIONS)
}

fn unroll_within(f: &mut Func, max_trips: u64, max_instructions: usize) -> bool {
    let mut changed = false;
    for _ in 0..16 {
        let loops = natural_loops(f);
        let innermost: Vec<(BlockId, Vec<BlockId>)> = loops
            .iter()
            .filter(|(h, body)| !loops.iter().any(|(h2, _)| h2 != h && body.contains(h2)))
            .cloned()
            .collect();
        let mut done = false;
        for (header, body) in innermost {
            if unroll_loop(f, header, &body, max_trips, max_instructions) {
                done = true;
                changed = true;
                break;
            }
        }
        if !done {
            break;
        }
    }
    changed
}

/// Whether a path through the loop to `latch` can pass by a block of `body` that holds a
/// wave operation or a barrier (an instruction that must run once with the lanes the source
/// runs it with): one such block does not dominate the latch (a `continue` skips it). Where
/// every path runs it (a barrier at the end of each step), restructuring the loop is safe.
pub(super) fn cross_lane_skipped(f: &Func, body: &[BlockId], latch: BlockId) -> bool {
    let idom = f.dominators();
    body.iter().any(|b| {
        f.blocks[b.0 as usize]
            .insts
            .iter()
            .any(|i| matches!(i.op, Op::Call(Intrinsic::Wave(_) | Intrinsic::Barrier, _)))
            && !Func::dominates(&idom, *b, latch)
    })
}

pub(super) fn unroll_loop(
    f: &mut Func,
    header: BlockId,
    body: &[BlockId],
    max_trips: u64,
    max_instructions: usize,
) -> bool {
    let preds = f.predecessors();
    let Some((pre, latch)) = simple_loop(f, &preds, header, body) else { return false };
    // A `continue` (a second way into the latch) becomes, once unrolled, a jump over the rest
    // of its copy into the next: a merge that structured control flow can only make by
    // emitting the skipped code on both sides. Each lane still runs it once, but a wave
    // operation or barrier there would then run twice, each time with only some of the lanes
    // (the differential fuzzer's kernels found it: a reduction after a `continue`).
    if preds[latch.0 as usize].len() > 1 && cross_lane_skipped(f, body, latch) {
        return false;
    }
    // The header's test is the only way out.
    let Term::Branch(cond, t, e) = f.blocks[header.0 as usize].term.clone() else { return false };
    let (inside, exit, exit_when) = match (body.contains(&t), body.contains(&e)) {
        (true, false) => (t, e, false),
        (false, true) => (e, t, true),
        _ => return false,
    };
    for b in body {
        if *b == header {
            continue;
        }
        let term = &f.blocks[b.0 as usize].term;
        if *term == Term::Return || term.successors().iter().any(|s| !body.contains(s)) {
            return false;
        }
    }
    // The test: a comparison of a header phi (the IV) with a constant.
    let def_op = |v: Value| {
        f.blocks.iter().flat_map(|b| &b.insts).find(|i| i.dst == Some(v)).map(|i| i.op.clone())
    };
    let konst = |v: Value| match def_op(v) {
        Some(Op::Int(x)) => Some(x),
        _ => None,
    };
    let Some(Op::Binary(cmp, iv, bound)) = def_op(cond) else { return false };
    if !cmp.is_comparison() {
        return false;
    }
    let Some(phi) = f.blocks[header.0 as usize].phis.iter().find(|p| p.dst == iv).cloned() else {
        return false;
    };
    let Some(s) = scalar_of(f, iv).filter(|s| s.is_int()) else { return false };
    let (Some(bound), Some(start)) =
        (konst(bound), phi.args.iter().find(|(p, _)| *p == pre).and_then(|(_, v)| konst(*v)))
    else {
        return false;
    };
    let Some(next) = phi.args.iter().find(|(p, _)| *p == latch).map(|(_, v)| *v) else {
        return false;
    };
    let step = match def_op(next) {
        Some(Op::Binary(BinOp::Add, x, c)) if x == iv => konst(c),
        Some(Op::Binary(BinOp::Sub, x, c)) if x == iv => konst(c).map(|c| -c),
        _ => None,
    };
    let Some(step) = step else { return false };
    // The trip count, by running the test with the machine's arithmetic.
    let mut trips = 0u64;
    let mut i = wrap(s, start);
    loop {
        let holds = match fold(cmp, s, Lat::Int(i), Lat::Int(wrap(s, bound))) {
            Some(Lat::Bool(b)) => b,
            _ => return false,
        };
        if holds == exit_when {
            break;
        }
        trips += 1;
        if trips > max_trips {
            return false;
        }
        i = wrap(s, i.wrapping_add(step));
    }
    let size: usize = body.iter().map(|b| f.blocks[b.0 as usize].insts.len() + 1).sum();
    if size * trips as usize > max_instructions {
        return false;
    }
    // Copies 0..trips of the whole loop, then copy `trips` of the header alone (the exit).
    let mut carried: HashMap<Value, Value> = HashMap::new();
    for p in &f.blocks[header.0 as usize].phis {
        if let Some((_, v)) = p.args.iter().find(|(b, _)| *b == pre) {
            carried.insert(p.dst, *v);
        }
    }
    let header_phis = f.blocks[header.0 as usize].phis.clone();
    let mut first: Option<BlockId> = None;
    let mut previous_latch: Option<BlockId> = None;
    let mut final_map: HashMap<Value, Value> = HashMap::new();
    for copy in 0..=trips {
        let last = copy == trips;
        let blocks: Vec<BlockId> = if last { vec![header] } else { body.to_vec() };
        let mut map: HashMap<Value, Value> = carried.clone();
        let mut bmap: HashMap<BlockId, BlockId> = HashMap::new();
        for b in &blocks {
            f.blocks.push(crate::mir::Block {
                phis: Vec::new(),
                insts: Vec::new(),
                term: Term::Return,
            });
            bmap.insert(*b, BlockId(f.blocks.len() as u32 - 1));
        }
        // Fresh values for everything the copied blocks define.
        for b in &blocks {
            let block = f.blocks[b.0 as usize].clone();
            for p in &block.phis {
                if *b != header {
                    f.types.push(f.types[p.dst.0 as usize]);
                    map.insert(p.dst, Value(f.types.len() as u32 - 1));
                }
            }
            for inst in &block.insts {
                if let Some(d) = inst.dst {
                    f.types.push(f.types[d.0 as usize]);
                    map.insert(d, Value(f.types.len() as u32 - 1));
                }
            }
        }
        let mv = |v: Value, map: &HashMap<Value, Value>| *map.get(&v).unwrap_or(&v);
        for b in &blocks {
            let block = f.blocks[b.0 as usize].clone();
            let nb = bmap[b];
            let mut phis = Vec::new();
            if *b != header {
                for p in &block.phis {
                    phis.push(crate::mir::Phi {
                        dst: mv(p.dst, &map),
                        var: p.var,
                        args: p.args.iter().map(|(pb, v)| (bmap[pb], mv(*v, &map))).collect(),
                    });
                }
            }
            let insts = block
                .insts
                .iter()
                .map(|inst| {
                    let mut inst = inst.clone();
                    inst.op.map_operands(&mut |v| mv(v, &map));
                    inst.dst = inst.dst.map(|d| mv(d, &map));
                    inst
                })
                .collect();
            let term = if *b == header {
                Term::Jump(if last { exit } else { bmap[&inside] })
            } else {
                match &block.term {
                    Term::Jump(x) if *x == header => Term::Jump(BlockId(u32::MAX)),
                    Term::Jump(x) => Term::Jump(bmap[x]),
                    Term::Branch(c, x, y) => Term::Branch(mv(*c, &map), bmap[x], bmap[y]),
                    Term::Return => Term::Return,
                }
            };
            f.blocks[nb.0 as usize] = crate::mir::Block { phis, insts, term };
        }
        // Link the previous copy's latch to this copy's header.
        let this_header = bmap[&header];
        match previous_latch {
            Some(l) => f.blocks[l.0 as usize].term = Term::Jump(this_header),
            None => first = Some(this_header),
        }
        if !last {
            previous_latch = Some(bmap[&latch]);
            // What the header phis are on the next iteration.
            let mut next = HashMap::new();
            for p in &header_phis {
                if let Some((_, v)) = p.args.iter().find(|(b, _)| *b == latch) {
                    next.insert(p.dst, mv(*v, &map));
                }
            }
            carried = next;
        } else {
            final_map = map;
        }
    }
    let first = first.expect("one copy at least");
    let exit_from = BlockId(f.blocks.len() as u32 - 1);
    // Enter the copies instead of the loop; the exit now comes from the last header copy.
    f.blocks[pre.0 as usize].term = Term::Jump(first);
    for p in &mut f.blocks[exit.0 as usize].phis {
        for (b, v) in &mut p.args {
            if *b == header {
                *b = exit_from;
                *v = *final_map.get(v).unwrap_or(v);
            }
        }
    }
    // Values of the header used after the loop are the last copy's.
    let header_values: HashMap<Value, Value> = final_map
        .iter()
        .filter(|(old, _)| {
            header_phis.iter().any(|p| p.dst == **old)
                || f.blocks[header.0 as usize].insts.iter().any(|i| i.dst == Some(**old))
        })
        .map(|(a, b)| (*a, *b))
        .collect();
    crate::mir::remove_unreachable(f);
    substitute(f, &header_values);
    true
}

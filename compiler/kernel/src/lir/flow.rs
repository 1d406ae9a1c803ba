//! Control flow of the linear form: each instruction's successors in a structured list, and
//! loop depths.

use std::collections::HashMap;

use super::{Inst, Kind};

/// The successors of every instruction of a structured list (index `len` is the end).
pub fn successors(insts: &[Inst]) -> Result<Vec<Vec<usize>>, String> {
    let n = insts.len();
    let mut succ = vec![Vec::new(); n];
    // Matching: for each if, its else (if any) and endif; for each loop, its endloop.
    let mut stack: Vec<(Kind, usize, Option<usize>)> = Vec::new();
    let mut if_else: HashMap<usize, usize> = HashMap::new();
    let mut if_end: HashMap<usize, usize> = HashMap::new();
    let mut else_end: HashMap<usize, usize> = HashMap::new();
    let mut loop_end: HashMap<usize, usize> = HashMap::new();
    let mut enclosing_loop = vec![None; n];
    let mut loops: Vec<usize> = Vec::new();
    for (i, inst) in insts.iter().enumerate() {
        enclosing_loop[i] = loops.last().copied();
        match inst.kind {
            Kind::If => stack.push((Kind::If, i, None)),
            Kind::Else => match stack.last_mut() {
                Some((Kind::If, at, e @ None)) => {
                    *e = Some(i);
                    if_else.insert(*at, i);
                }
                _ => return Err(format!("instruction {i}: `else` without `if`")),
            },
            Kind::EndIf => match stack.pop() {
                Some((Kind::If, at, e)) => {
                    if_end.insert(at, i);
                    if let Some(e) = e {
                        else_end.insert(e, i);
                    }
                }
                _ => return Err(format!("instruction {i}: `endif` without `if`")),
            },
            Kind::Loop => {
                stack.push((Kind::Loop, i, None));
                loops.push(i);
            }
            Kind::EndLoop => match stack.pop() {
                Some((Kind::Loop, at, _)) => {
                    loop_end.insert(at, i);
                    loops.pop();
                }
                _ => return Err(format!("instruction {i}: `endloop` without `loop`")),
            },
            Kind::Break | Kind::Continue if loops.is_empty() => {
                return Err(format!("instruction {i}: `{}` outside a loop", inst.code));
            }
            _ => {}
        }
    }
    if let Some((k, at, _)) = stack.last() {
        return Err(format!("instruction {at}: `{k:?}` is not closed"));
    }
    for (i, inst) in insts.iter().enumerate() {
        succ[i] = match inst.kind {
            Kind::If => {
                let other = match if_else.get(&i) {
                    Some(e) => e + 1,
                    None => if_end[&i],
                };
                vec![i + 1, other]
            }
            Kind::Else => vec![else_end[&i]],
            Kind::Break => {
                let l = enclosing_loop[i].unwrap_or(0);
                vec![i + 1, loop_end[&l] + 1]
            }
            Kind::Continue => {
                let l = enclosing_loop[i].unwrap_or(0);
                vec![i + 1, l + 1]
            }
            Kind::EndLoop => {
                let l = loops_start(insts, i);
                vec![l + 1]
            }
            Kind::Halt if inst.guard.is_none() => Vec::new(),
            _ => vec![i + 1],
        };
    }
    Ok(succ)
}

fn loops_start(insts: &[Inst], end: usize) -> usize {
    let mut depth = 0usize;
    for i in (0..end).rev() {
        match insts[i].kind {
            Kind::EndLoop => depth += 1,
            Kind::Loop if depth == 0 => return i,
            Kind::Loop => depth -= 1,
            _ => {}
        }
    }
    0
}

/// Loop depth of every instruction.
pub fn loop_depths(insts: &[Inst]) -> Vec<u32> {
    let mut depth = 0u32;
    insts
        .iter()
        .map(|i| match i.kind {
            Kind::Loop => {
                depth += 1;
                depth
            }
            Kind::EndLoop => {
                depth = depth.saturating_sub(1);
                depth + 1
            }
            _ => depth,
        })
        .collect()
}

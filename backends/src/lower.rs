//! From the tree of a kernel to structured statements that every backend prints.
//!
//! Calls are inlined, so a kernel becomes one body of statements. Two lowerings keep WAVE's
//! semantics exactly (see `docs/backends/index.md`):
//!
//! - **Per-thread** (the kernel uses no wave operation): each GPU thread follows its own path.
//!   `if`/`loop`/`break`/`continue` become the target's own structured control flow, a `halt`
//!   ends the thread, and a `return` sets a flag that skips the rest of the inlined function.
//!   Without wave operations no lane can observe which other lanes are active, so this is
//!   exactly the emulator's behaviour, at the speed of hand-written code.
//! - **Wave-uniform** (some reachable code uses a wave operation): every lane of a wave walks
//!   the same path, as the emulator's wave does, with a per-lane `act` flag that says whether
//!   the lane is active. A block runs when any lane of the wave needs it (`IfAny`), plain
//!   instructions run under `if (act)`, and wave operations run in every lane, converged,
//!   with `act` telling which lanes take part. Lanes that `break`, `continue`, `return` or
//!   `halt` clear their own saved flags of the blocks they leave, so the restore at each
//!   `endif`, `endloop` and after each call brings back exactly the lanes the emulator would.
//!   Blocks with no wave operation, call, barrier or halt, that no lane leaves early, still
//!   run per thread inside `if (act)`: nothing in them can observe other lanes.

use wave_isa::{Flow, Operation};

use crate::kind::Kind;
use crate::structure::{Node, Program};
use crate::{Problem, codes};

/// A per-lane boolean variable of the generated code.
pub(crate) type Flag = usize;

/// The flag that says whether the lane is active (wave-uniform lowering).
pub(crate) const ACT: Flag = 0;
/// The flag that says whether the lane has halted (wave-uniform lowering).
pub(crate) const HALTED: Flag = 1;

/// A literal of a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lit {
    Flag(Flag, bool),
    /// Predicate register `p<n>`, negated when `true`.
    Pred(u8, bool),
}

/// A conjunction of literals; empty means true.
pub(crate) type Cond = Vec<Lit>;

/// One statement of the lowered kernel.
#[derive(Clone, Debug)]
pub(crate) enum Stmt {
    /// A source instruction with no effect on control flow (arithmetic, memory, atomics,
    /// fences, moves), under its own guard.
    Inst(usize),
    /// A wave operation; lanes where the flag holds (and the instruction's guard) take part.
    /// `None`: every live lane of the wave (per-thread lowering never has wave operations).
    Wave {
        index: usize,
        active: Option<Flag>,
    },
    /// `barrier`, executed by every thread that gets here.
    Barrier(usize),
    /// A control-flow instruction, printed as a comment so that its line maps.
    Marker(usize),
    /// `flag = cond`.
    Set(Flag, Cond),
    /// `flag = false`.
    Reset(Flag),
    /// `flag = flag && !other`.
    Clear(Flag, Flag),
    /// `flag = flag || other`.
    Or(Flag, Flag),
    /// A per-lane branch.
    If {
        cond: Cond,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    /// A wave-uniform branch: the body runs in every lane of the wave when the condition
    /// holds in any lane.
    IfAny {
        cond: Cond,
        then: Vec<Stmt>,
    },
    /// A loop; left by `Break` or `BreakUnlessAny`.
    Loop(Vec<Stmt>),
    Break,
    Continue,
    /// Leaves the innermost loop unless the condition holds in some lane of the wave.
    BreakUnlessAny(Cond),
    /// The thread ends (per-thread `halt`).
    Exit,
    /// A call of a function kept as a function (recursive kernels, per-thread code).
    Call {
        callee: usize,
    },
    /// Return from a function kept as a function.
    Return,
    /// The kernel reached something the emulator traps on.
    Trap {
        index: usize,
        message: &'static str,
    },
}

/// A lowered kernel.
pub(crate) struct Lowered {
    pub body: Vec<Stmt>,
    /// In a recursive kernel, the functions kept as functions, by function index (calls are
    /// then `Stmt::Call`); empty when every call is inlined.
    pub functions: Vec<(usize, Vec<Stmt>)>,
    /// Number of flags (`ACT` and `HALTED` included in the wave-uniform lowering).
    pub flags: usize,
    /// Whether the wave-uniform lowering was used.
    pub uniform: bool,
    /// Warnings found while lowering.
    pub warnings: Vec<Problem>,
}

/// The most statements inlining may produce before the backend gives up.
const BUDGET: usize = 1 << 20;

/// Lowers `program`; `Err` when it recurses in wave-uniform code, or inlines past the budget.
pub(crate) fn lower(program: &Program<'_>, recursion: bool) -> Result<Lowered, Vec<Problem>> {
    let name = &program.kernel.name;
    let uniform = program.uses_wave_ops;
    // A recursive kernel keeps its functions as functions (per-thread code only: a wave-uniform
    // function would have to pass every lane's flags); the targets that have no recursion
    // refuse it.
    let real_calls = match program.recursive_call() {
        None => false,
        Some(call) if !recursion || uniform => {
            let why = if recursion {
                "this call is recursive in a kernel that uses wave operations, and the backends inline every call there"
            } else {
                "this call is recursive, and this target has no recursion (calls are inlined)"
            };
            return Err(vec![
                Problem::error(codes::RECURSION, name, Some(program.insts[call].offset), why.to_string())
                    .with_note(
                        "recursion is the optional capability CAP_RECURSION: the emulator has it; PTX and HIP have it in \
                         kernels without wave operations; SYCL and Metal forbid recursion in device code",
                    ),
            ]);
        }
        Some(_) => true,
    };
    let mut l = Lower {
        program,
        flags: if uniform { 2 } else { 0 },
        uniform,
        size: 0,
        scopes: Vec::new(),
        warnings: Vec::new(),
        over_budget: None,
        real_calls,
        in_function: false,
    };
    let mut body = Vec::new();
    if uniform {
        body.push(Stmt::Set(ACT, Vec::new()));
        body.push(Stmt::Reset(HALTED));
    }
    let kernel_body = &program.functions[0].body;
    body.extend(l.function(kernel_body, None));
    let mut functions = Vec::new();
    if real_calls {
        l.in_function = true;
        for f in program.reachable().into_iter().skip(1) {
            let stmts = l.function(&program.functions[f].body, Some(program.functions[f].entry));
            functions.push((f, stmts));
        }
    }
    if let Some(at) = l.over_budget {
        return Err(vec![Problem::error(
            codes::TOO_LARGE,
            name,
            Some(program.insts[at].offset),
            format!("inlining every call makes the kernel larger than {BUDGET} statements"),
        )]);
    }
    Ok(Lowered { body, functions, flags: l.flags, uniform, warnings: l.warnings })
}

/// A block of the inline stack that lanes can leave early.
#[derive(Clone, Copy, Debug)]
enum Scope {
    /// An `if`: the lanes to restore at `endif`.
    If { saved: Flag },
    /// A loop: the lanes to restore after it, and the lanes still in it.
    Loop { saved: Flag, inside: Flag },
    /// An inlined call: the caller's lanes, restored after the call. `ret` is the per-thread
    /// lowering's return flag.
    Call { saved: Option<Flag>, ret: Option<Flag> },
}

struct Lower<'p, 'm> {
    program: &'p Program<'m>,
    flags: usize,
    uniform: bool,
    size: usize,
    scopes: Vec<Scope>,
    warnings: Vec<Problem>,
    over_budget: Option<usize>,
    /// Calls stay calls (a recursive kernel, per-thread code).
    real_calls: bool,
    /// Lowering the body of a function that stays a function.
    in_function: bool,
}

impl Lower<'_, '_> {
    fn flag(&mut self) -> Flag {
        self.flags += 1;
        self.flags - 1
    }

    fn count(&mut self, at: usize) -> bool {
        self.size += 1;
        if self.size > BUDGET && self.over_budget.is_none() {
            self.over_budget = Some(at);
        }
        self.over_budget.is_none()
    }

    /// A function body: the kernel (`call` is `None`), an inlined callee, or a function kept as
    /// a function.
    fn function(&mut self, body: &[Node], call: Option<usize>) -> Vec<Stmt> {
        let mut out = self.block(body);
        // Falling off the end of a function's code halts the lanes that get there.
        let ends = match body.last() {
            Some(Node::Inst(n)) => {
                matches!(self.program.insts[*n].flags.flow, Flow::Return | Flow::Halt)
                    && self.program.insts[*n].inst.guard.is_none()
            }
            _ => false,
        };
        if !ends && call.is_some() {
            out.extend(self.halt(None));
        }
        out
    }

    fn block(&mut self, nodes: &[Node]) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut run: Vec<Stmt> = Vec::new();
        for (k, node) in nodes.iter().enumerate() {
            if !self.count(first_index(node)) {
                break;
            }
            // Plain instructions gather into runs: one `if (act)` per run in the
            // wave-uniform lowering.
            if let Node::Inst(n) = node
                && self.is_plain(*n)
            {
                run.push(Stmt::Inst(*n));
                continue;
            }
            // A block that no lane can leave early and that has no wave operation, call,
            // barrier or halt can run per thread inside the wave-uniform code: lanes diverge in
            // it and meet again at its end, and no other lane can tell.
            if self.uniform && !matches!(node, Node::Inst(_)) && self.closed(node, 0) {
                let scopes = std::mem::take(&mut self.scopes);
                self.uniform = false;
                let stmts = self.node(node);
                self.uniform = true;
                self.scopes = scopes;
                run.extend(stmts);
                continue;
            }
            self.flush(&mut run, &mut out);
            out.extend(self.node(node));
            // Per-thread: after a node that may `return`, skip the rest of the function.
            if !self.uniform
                && let Some(ret) = self.current_ret()
                && may_return(self.program, node)
            {
                if self.in_loop_of_function() {
                    out.push(Stmt::If {
                        cond: vec![Lit::Flag(ret, false)],
                        then: vec![Stmt::Break],
                        otherwise: Vec::new(),
                    });
                }
                let rest = self.block(&nodes[k + 1..]);
                if !rest.is_empty() {
                    out.push(Stmt::If {
                        cond: vec![Lit::Flag(ret, true)],
                        then: rest,
                        otherwise: Vec::new(),
                    });
                }
                return out;
            }
        }
        self.flush(&mut run, &mut out);
        out
    }

    fn flush(&mut self, run: &mut Vec<Stmt>, out: &mut Vec<Stmt>) {
        if run.is_empty() {
            return;
        }
        let run = std::mem::take(run);
        if self.uniform {
            out.push(Stmt::If {
                cond: vec![Lit::Flag(ACT, false)],
                then: run,
                otherwise: Vec::new(),
            });
        } else {
            out.extend(run);
        }
    }

    /// Whether `node` is closed: only plain instructions, blocks, and `break`/`continue` of
    /// loops inside it (`loops` of them enclose this point within the node).
    fn closed(&self, node: &Node, loops: usize) -> bool {
        match node {
            Node::Inst(n) => {
                let flow = self.program.insts[*n].flags.flow;
                self.is_plain(*n) || (loops > 0 && matches!(flow, Flow::Break | Flow::Continue))
            }
            Node::If { then, otherwise, .. } => {
                then.iter().chain(otherwise).all(|n| self.closed(n, loops))
            }
            Node::Loop { body, .. } => body.iter().all(|n| self.closed(n, loops + 1)),
        }
    }

    /// Whether instruction `n` is plain: no control flow, no wave operation, no barrier.
    fn is_plain(&self, n: usize) -> bool {
        let i = &self.program.insts[n];
        !i.is_wave_op() && i.flags.flow == Flow::Next && i.op != Operation::Barrier
    }

    fn node(&mut self, node: &Node) -> Vec<Stmt> {
        match node {
            Node::Inst(n) => self.inst(*n),
            Node::If { at, then, else_at, otherwise, end } => {
                let (p, negate) = self.program.insts[*at].pred();
                let mut out = vec![Stmt::Marker(*at)];
                if self.uniform {
                    let saved = self.flag();
                    let other = self.flag();
                    out.push(Stmt::Set(saved, vec![Lit::Flag(ACT, false)]));
                    out.push(Stmt::Set(other, vec![Lit::Flag(ACT, false), Lit::Pred(p, !negate)]));
                    out.push(Stmt::Set(ACT, vec![Lit::Flag(ACT, false), Lit::Pred(p, negate)]));
                    self.scopes.push(Scope::If { saved });
                    let then = self.block(then);
                    out.push(Stmt::IfAny { cond: vec![Lit::Flag(ACT, false)], then });
                    if let Some(e) = else_at {
                        out.push(Stmt::Marker(*e));
                        out.push(Stmt::Set(ACT, vec![Lit::Flag(other, false)]));
                        let otherwise = self.block(otherwise);
                        out.push(Stmt::IfAny {
                            cond: vec![Lit::Flag(ACT, false)],
                            then: otherwise,
                        });
                    }
                    self.scopes.pop();
                    out.push(Stmt::Marker(*end));
                    out.push(Stmt::Set(ACT, vec![Lit::Flag(saved, false)]));
                } else {
                    let then = self.block(then);
                    let mut other = Vec::new();
                    if let Some(e) = else_at {
                        other.push(Stmt::Marker(*e));
                        other.extend(self.block(otherwise));
                    }
                    out.push(Stmt::If { cond: vec![Lit::Pred(p, negate)], then, otherwise: other });
                    out.push(Stmt::Marker(*end));
                }
                out
            }
            Node::Loop { at, body, end } => {
                let mut out = vec![Stmt::Marker(*at)];
                if self.uniform {
                    let saved = self.flag();
                    let inside = self.flag();
                    out.push(Stmt::Set(saved, vec![Lit::Flag(ACT, false)]));
                    out.push(Stmt::Set(inside, vec![Lit::Flag(ACT, false)]));
                    self.scopes.push(Scope::Loop { saved, inside });
                    let mut stmts = vec![
                        Stmt::Set(ACT, vec![Lit::Flag(inside, false)]),
                        Stmt::BreakUnlessAny(vec![Lit::Flag(ACT, false)]),
                    ];
                    stmts.extend(self.block(body));
                    stmts.push(Stmt::Marker(*end));
                    self.scopes.pop();
                    out.push(Stmt::Loop(stmts));
                    out.push(Stmt::Set(ACT, vec![Lit::Flag(saved, false)]));
                } else {
                    self.scopes.push(Scope::Loop { saved: 0, inside: 0 });
                    let mut stmts = self.block(body);
                    stmts.push(Stmt::Marker(*end));
                    self.scopes.pop();
                    out.push(Stmt::Loop(stmts));
                }
                out
            }
        }
    }

    fn inst(&mut self, n: usize) -> Vec<Stmt> {
        let i = self.program.insts[n];
        let flow = i.flags.flow;
        match flow {
            Flow::Break | Flow::Continue => {
                let (p, negate) = i.pred();
                let leave = if flow == Flow::Break { Stmt::Break } else { Stmt::Continue };
                if !self.uniform {
                    return vec![
                        Stmt::Marker(n),
                        Stmt::If {
                            cond: vec![Lit::Pred(p, negate)],
                            then: vec![leave],
                            otherwise: Vec::new(),
                        },
                    ];
                }
                let gone = self.flag();
                let mut out = vec![
                    Stmt::Marker(n),
                    Stmt::Set(gone, vec![Lit::Flag(ACT, false), Lit::Pred(p, negate)]),
                    Stmt::Clear(ACT, gone),
                ];
                for scope in self.scopes.iter().rev() {
                    match *scope {
                        Scope::If { saved } => out.push(Stmt::Clear(saved, gone)),
                        Scope::Loop { inside, .. } => {
                            if flow == Flow::Break {
                                out.push(Stmt::Clear(inside, gone));
                            }
                            break;
                        }
                        Scope::Call { .. } => break,
                    }
                }
                out
            }
            Flow::Return if self.in_function => vec![Stmt::Marker(n), Stmt::Return],
            Flow::Return => {
                let Some(Scope::Call { ret, .. }) =
                    self.scopes.iter().rev().find(|s| matches!(s, Scope::Call { .. })).copied()
                else {
                    self.warnings.push(Problem::warning(
                        codes::TRAPS,
                        &self.program.kernel.name,
                        Some(i.offset),
                        "`return` outside a function: the emulator traps here, and the generated code traps too (on targets that have a trap)".into(),
                    ));
                    return vec![
                        Stmt::Marker(n),
                        Stmt::Trap { index: n, message: "return outside a function" },
                    ];
                };
                if !self.uniform {
                    let mut out = vec![Stmt::Marker(n)];
                    if let Some(ret) = ret {
                        out.push(Stmt::Set(ret, Vec::new()));
                    }
                    if self.in_loop_of_function() {
                        out.push(Stmt::Break);
                    }
                    return out;
                }
                let gone = self.flag();
                let mut out = vec![
                    Stmt::Marker(n),
                    Stmt::Set(gone, vec![Lit::Flag(ACT, false)]),
                    Stmt::Clear(ACT, gone),
                ];
                for scope in self.scopes.iter().rev() {
                    match *scope {
                        Scope::If { saved } => out.push(Stmt::Clear(saved, gone)),
                        Scope::Loop { saved, inside } => {
                            out.push(Stmt::Clear(saved, gone));
                            out.push(Stmt::Clear(inside, gone));
                        }
                        Scope::Call { .. } => break,
                    }
                }
                out
            }
            Flow::Halt => {
                let mut out = vec![Stmt::Marker(n)];
                out.extend(self.halt(i.inst.guard.map(|g| (g.predicate, g.negate))));
                out
            }
            Flow::Call => {
                let Some(callee) = self.program.callee(n) else { return vec![Stmt::Marker(n)] };
                if self.real_calls {
                    return vec![Stmt::Marker(n), Stmt::Call { callee }];
                }
                let body = self.program.functions[callee].body.clone();
                let mut out = vec![Stmt::Marker(n)];
                if self.uniform {
                    let saved = self.flag();
                    out.push(Stmt::Set(saved, vec![Lit::Flag(ACT, false)]));
                    self.scopes.push(Scope::Call { saved: Some(saved), ret: None });
                    let inner = self.function(&body, Some(n));
                    self.scopes.pop();
                    out.push(Stmt::IfAny { cond: vec![Lit::Flag(ACT, false)], then: inner });
                    out.push(Stmt::Set(ACT, vec![Lit::Flag(saved, false)]));
                } else {
                    let ret = has_return(self.program, &body).then(|| self.flag());
                    if let Some(ret) = ret {
                        out.push(Stmt::Reset(ret));
                    }
                    self.scopes.push(Scope::Call { saved: None, ret });
                    let inner = self.function(&body, Some(n));
                    self.scopes.pop();
                    out.extend(inner);
                }
                out
            }
            // The markers of `Node::If` and `Node::Loop`, never a `Node::Inst`.
            Flow::If | Flow::Else | Flow::Endif | Flow::Loop | Flow::Endloop => {
                vec![Stmt::Inst(n)]
            }
            Flow::Next => match i.kind() {
                Kind::Barrier => vec![Stmt::Barrier(n)],
                Kind::Wave(_) => vec![Stmt::Wave { index: n, active: self.uniform.then_some(ACT) }],
                // Control instructions all have a flow other than `Next`.
                Kind::Data | Kind::Control => vec![Stmt::Inst(n)],
            },
        }
    }

    /// Lanes (under `guard`, if any) halt.
    fn halt(&mut self, guard: Option<(u8, bool)>) -> Vec<Stmt> {
        if !self.uniform {
            return match guard {
                Some((p, negate)) => {
                    vec![Stmt::If {
                        cond: vec![Lit::Pred(p, negate)],
                        then: vec![Stmt::Exit],
                        otherwise: Vec::new(),
                    }]
                }
                None => vec![Stmt::Exit],
            };
        }
        let gone = self.flag();
        let mut cond = vec![Lit::Flag(ACT, false)];
        if let Some((p, negate)) = guard {
            cond.push(Lit::Pred(p, negate));
        }
        let mut out = vec![Stmt::Set(gone, cond), Stmt::Clear(ACT, gone), Stmt::Or(HALTED, gone)];
        for scope in self.scopes.iter().rev() {
            match *scope {
                Scope::If { saved } => out.push(Stmt::Clear(saved, gone)),
                Scope::Loop { saved, inside } => {
                    out.push(Stmt::Clear(saved, gone));
                    out.push(Stmt::Clear(inside, gone));
                }
                Scope::Call { saved, .. } => {
                    if let Some(saved) = saved {
                        out.push(Stmt::Clear(saved, gone));
                    }
                }
            }
        }
        out
    }

    /// The per-thread return flag of the innermost inlined call.
    fn current_ret(&self) -> Option<Flag> {
        match self.scopes.iter().rev().find(|s| matches!(s, Scope::Call { .. })) {
            Some(Scope::Call { ret, .. }) => *ret,
            _ => None,
        }
    }

    /// Whether a loop encloses this point inside the innermost inlined function.
    fn in_loop_of_function(&self) -> bool {
        for scope in self.scopes.iter().rev() {
            match scope {
                Scope::Loop { .. } => return true,
                Scope::Call { .. } => return false,
                Scope::If { .. } => {}
            }
        }
        false
    }
}

/// The first instruction index of a node.
fn first_index(node: &Node) -> usize {
    match node {
        Node::Inst(n) => *n,
        Node::If { at, .. } | Node::Loop { at, .. } => *at,
    }
}

/// Whether a node contains a `return` of the function it is in (calls do not count: their
/// returns end the callee).
fn may_return(program: &Program<'_>, node: &Node) -> bool {
    let mut found = false;
    crate::structure::walk(std::slice::from_ref(node), &mut |n| {
        found |= program.insts[n].op == Operation::Return;
    });
    found
}

fn has_return(program: &Program<'_>, body: &[Node]) -> bool {
    body.iter().any(|n| may_return(program, n))
}

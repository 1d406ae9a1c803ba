//! Mnemonic resolution: from the text `device_load.u32.streaming` (or an alias such as
//! `device_load_u32`, `shl`, `local_atomic_add`) to an opcode and its modifier and scope fields.
//!
//! Every spelling is derived from the table: canonical names, the rows' explicit aliases, and
//! the underscore forms `NAME_SUFFIX` generated for every named modifier (the dialect of the
//! existing reference toolchain). Suffixes may come in any order; the canonical text prints
//! them in one fixed order (see [`crate::write_inst`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use crate::{
    AtomicType, CACHE_HINTS, Category, DEFAULT_SCOPE, Modifier, OPCODES, OpInfo, SCOPES, ScopeUse,
};

/// A mnemonic resolved to its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The table row.
    pub op: &'static OpInfo,
    /// The modifier field from the suffixes (predicate sources and half selects are added
    /// from the operands by the assembler).
    pub modifier: u8,
    /// The scope field (scope or cache hint).
    pub scope: u8,
}

/// Why a mnemonic does not resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SuffixError {
    /// No instruction or alias has this name.
    UnknownMnemonic {
        /// The name, lowercase, without suffixes.
        name: String,
        /// The closest known spelling.
        suggestion: Option<&'static str>,
    },
    /// A suffix that means nothing for this instruction.
    UnknownSuffix {
        /// The suffix, without its dot.
        suffix: String,
        /// The instruction.
        mnemonic: &'static str,
        /// The suffixes it accepts.
        expected: Vec<&'static str>,
    },
    /// Two suffixes set the same field.
    Conflict {
        /// The suffix given first.
        first: String,
        /// The suffix that conflicts with it.
        second: String,
    },
    /// The instruction needs a suffix that was not given.
    MissingModifier {
        /// The instruction.
        mnemonic: &'static str,
        /// The suffixes it accepts there.
        expected: Vec<&'static str>,
    },
}

impl std::fmt::Display for SuffixError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SuffixError::UnknownMnemonic { name, .. } => write!(f, "unknown instruction `{name}`"),
            SuffixError::UnknownSuffix { suffix, mnemonic, .. } => {
                write!(f, "`.{suffix}` is not a suffix of `{mnemonic}`")
            }
            SuffixError::Conflict { first, second } => {
                write!(f, "suffix `.{second}` conflicts with `.{first}`")
            }
            SuffixError::MissingModifier { mnemonic, expected } => write!(
                f,
                "`{mnemonic}` needs one of the suffixes {}",
                expected.iter().map(|s| format!("`.{s}`")).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

struct Names {
    map: HashMap<String, (u8, Vec<&'static str>)>,
    all: Vec<String>,
}

fn names() -> &'static Names {
    static NAMES: OnceLock<Names> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut map: HashMap<String, (u8, Vec<&'static str>)> = HashMap::new();
        for op in OPCODES {
            map.insert(op.mnemonic.to_owned(), (op.opcode, Vec::new()));
        }
        for op in OPCODES {
            for (alias, suffixes) in op.aliases {
                map.entry((*alias).to_owned()).or_insert((op.opcode, suffixes.to_vec()));
            }
            if let Modifier::Named { names, .. } = op.modifier {
                for (name, _) in names {
                    map.entry(format!("{}_{name}", op.mnemonic))
                        .or_insert((op.opcode, vec![*name]));
                }
            }
            if op.category == Category::Atomic {
                map.entry(format!("local_{}", op.mnemonic)).or_insert((op.opcode, vec!["local"]));
                for (alias, _) in op.aliases {
                    map.entry(format!("local_{alias}")).or_insert((op.opcode, vec!["local"]));
                }
            }
        }
        let mut all: Vec<String> = map.keys().cloned().collect();
        all.sort();
        Names { map, all }
    })
}

/// Every accepted spelling of a mnemonic without dot suffixes (canonical names and aliases),
/// sorted. Used for completion, the grammar's highlight list and did-you-mean.
pub fn all_spellings() -> &'static [String] {
    &names().all
}

/// The table row and implied suffixes of a mnemonic name without dot suffixes (lowercase).
pub fn lookup_name(name: &str) -> Option<(&'static OpInfo, &'static [&'static str])> {
    let (opcode, suffixes) = names().map.get(name)?;
    Some((crate::info(*opcode)?, suffixes.as_slice()))
}

/// The name of scope field value `scope`.
pub fn scope_name(scope: u8) -> &'static str {
    SCOPES[usize::from(scope & 3)]
}

#[derive(Default)]
struct Parts<'a> {
    named: Option<(u8, Cow<'a, str>)>,
    scope: Option<(u8, Cow<'a, str>)>,
    hint: Option<(u8, Cow<'a, str>)>,
    atomic: Option<(AtomicType, Cow<'a, str>)>,
    local: Option<Cow<'a, str>>,
}

fn set<'a, T>(
    slot: &mut Option<(T, Cow<'a, str>)>,
    value: T,
    text: Cow<'a, str>,
) -> Result<(), SuffixError> {
    if let Some((_, first)) = slot {
        return Err(SuffixError::Conflict { first: first.to_string(), second: text.into_owned() });
    }
    *slot = Some((value, text));
    Ok(())
}

/// Every dot suffix `op` accepts: its named modifiers or atomic types, and its scopes or
/// cache hints.
pub fn expected_suffixes(op: &OpInfo) -> Vec<&'static str> {
    let mut out = Vec::new();
    match op.modifier {
        Modifier::Named { names, .. } => out.extend(crate::canonical_names(names).map(|(n, _)| n)),
        Modifier::Atomic { types } => {
            out.extend(types.iter().map(|t| t.name()));
            out.push("local");
        }
        _ => {}
    }
    match op.scope {
        ScopeUse::Scope => out.extend(SCOPES),
        ScopeUse::CacheHint => out.extend(&CACHE_HINTS[1..]),
        ScopeUse::None => {}
    }
    out
}

/// Resolves `mnemonic` (any case, with dot suffixes) plus `extra` suffixes (a scope written as
/// a trailing operand in the legacy dialect) to its fields.
pub fn lookup(mnemonic: &str, extra: &[&str]) -> Result<Resolved, SuffixError> {
    let lower: Cow<'_, str> = if mnemonic.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(mnemonic.to_ascii_lowercase())
    } else {
        Cow::Borrowed(mnemonic)
    };
    let mut pieces = lower.split('.');
    let name = pieces.next().unwrap_or("");
    let Some((op, implied)) = lookup_name(name) else {
        let suggestion = crate::lookup::suggest(name);
        return Err(SuffixError::UnknownMnemonic { name: name.to_owned(), suggestion });
    };
    let mut parts = Parts::default();
    let suffixes = implied
        .iter()
        .map(|s| Cow::Borrowed(*s))
        .chain(pieces.map(|s| Cow::Owned(s.to_owned())))
        .chain(extra.iter().map(|s| Cow::Owned(s.to_ascii_lowercase())));
    for suffix in suffixes {
        let s: &str = &suffix;
        if let Modifier::Named { names, .. } = op.modifier
            && let Some((_, v)) = names.iter().find(|(n, _)| *n == s)
        {
            set(&mut parts.named, *v, suffix)?;
            continue;
        }
        if let Modifier::Atomic { types } = op.modifier {
            if let Some(t) = types.iter().find(|t| t.name() == s) {
                set(&mut parts.atomic, *t, suffix)?;
                continue;
            }
            if s == "local" {
                if let Some(first) = &parts.local {
                    return Err(SuffixError::Conflict {
                        first: first.to_string(),
                        second: suffix.into_owned(),
                    });
                }
                parts.local = Some(suffix);
                continue;
            }
        }
        match op.scope {
            ScopeUse::Scope => {
                if let Some(i) = SCOPES.iter().position(|n| *n == s) {
                    set(&mut parts.scope, i as u8, suffix)?;
                    continue;
                }
            }
            ScopeUse::CacheHint => {
                if let Some(i) = CACHE_HINTS.iter().skip(1).position(|n| *n == s) {
                    set(&mut parts.hint, i as u8 + 1, suffix)?;
                    continue;
                }
            }
            ScopeUse::None => {}
        }
        return Err(SuffixError::UnknownSuffix {
            suffix: suffix.into_owned(),
            mnemonic: op.mnemonic,
            expected: expected_suffixes(op),
        });
    }
    let modifier = match op.modifier {
        Modifier::Named { names, default } => match (parts.named, default) {
            (Some((v, _)), _) => v,
            (None, Some(d)) => d,
            (None, None) => {
                return Err(SuffixError::MissingModifier {
                    mnemonic: op.mnemonic,
                    expected: names.iter().map(|(n, _)| *n).collect(),
                });
            }
        },
        Modifier::Atomic { .. } => {
            parts.atomic.map_or(0, |(t, _)| t as u8) | (u8::from(parts.local.is_some()) << 3)
        }
        _ => 0,
    };
    let scope = match op.scope {
        ScopeUse::Scope => parts.scope.map_or(DEFAULT_SCOPE, |(v, _)| v),
        ScopeUse::CacheHint => parts.hint.map_or(0, |(v, _)| v),
        ScopeUse::None => 0,
    };
    Ok(Resolved { op, modifier, scope })
}

/// The closest known mnemonic spelling to `name`, for did-you-mean.
pub fn suggest(name: &str) -> Option<&'static str> {
    // Prefer canonical names; fall back to aliases.
    let canonical = OPCODES.iter().map(|op| op.mnemonic);
    wave_did_you_mean(name, canonical)
        .or_else(|| wave_did_you_mean(name, all_spellings().iter().map(String::as_str)))
}

fn wave_did_you_mean<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.len().max(3) / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(word, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<u8> = b.bytes().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.bytes().enumerate() {
        cur[0] = i + 1;
        for j in 1..=b.len() {
            cur[j] =
                (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + usize::from(ca != b[j - 1]));
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

//! Word-level pieces the memory instructions share, on the direct path and on a worker's
//! overlay: recognising a coalesced access, checking bounds in one pass, gathering eight lanes
//! at a time, and what an atomic stores.

use wave_isa::{AtomicOp, AtomicType};

use super::float::f;
use super::rows::LANE_IDS;
use super::{CHUNK, LANES};

/// The byte address of lane 0 when lanes `0..w` of the address row `addrs` (plus `offset`)
/// are `size` bytes apart in lane order, with no address below zero or past 4 GiB; `None`
/// otherwise.
#[inline(always)]
pub(super) fn contiguous(
    addrs: &[u32; LANES],
    w: usize,
    size: usize,
    offset: i64,
) -> Option<usize> {
    let a0 = addrs[0];
    let shift = size.trailing_zeros();
    // One branch-free pass in 32-bit lanes, so that the check vectorises.
    let mut ok = true;
    for (&a, &l) in addrs[..w].iter().zip(&LANE_IDS[..w]) {
        ok &= a.wrapping_sub(a0) == l << shift;
    }
    let first = i64::from(a0) + offset;
    let end = i64::from(a0) + (size * w) as i64;
    (ok && first >= 0 && end <= 1 << 32).then_some(first as usize)
}

/// Whether every access of `size` bytes at `addrs` plus `offset` lies inside `len` bytes: one
/// branch-free pass (unsigned compares, which the baseline x86-64 target vectorises better
/// than a minimum and a maximum).
#[inline(always)]
pub(super) fn all_within(addrs: &[u32], offset: i64, size: usize, len: usize) -> bool {
    let Some(room) = (len as i64).checked_sub(size as i64 + offset) else { return false };
    if room < 0 || offset < -(u32::MAX as i64) {
        return false;
    }
    let highest = room.min(u32::MAX as i64) as u32;
    let mut ok = true;
    if offset >= 0 {
        for &a in addrs {
            ok &= a <= highest;
        }
    } else {
        let lowest = (-offset) as u32;
        for &a in addrs {
            ok &= a <= highest && a >= lowest;
        }
    }
    ok
}

/// Reads the 32-bit word at each address of `addrs` (plus `offset`) into `out`, calling
/// `seen(at, bytes)` for each run of bytes read; `false` as soon as an access falls outside
/// `mem` (the caller then finds the lane to trap). Eight lanes at a time that read
/// consecutive words, or all one word (a row of a tile, a broadcast: the common patterns of a
/// workgroup's loads from a tile), take one bounds check and one copy.
#[inline(always)]
pub(super) fn gather_words(
    mem: &[u8],
    addrs: &[u32],
    offset: i64,
    out: &mut [u32],
    mut seen: impl FnMut(usize, usize),
) -> bool {
    let word = |a: u32| -> Option<(usize, u32)> {
        let at = usize::try_from(i64::from(a) + offset).ok()?;
        let bytes: [u8; 4] = mem.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some((at, u32::from_le_bytes(bytes)))
    };
    let (outs, out_rest) = out.as_chunks_mut::<CHUNK>();
    let (chunks, rest) = addrs.as_chunks::<CHUNK>();
    for (c, a) in chunks.iter().enumerate().take(outs.len()) {
        let a0 = a[0];
        let (mut consecutive, mut same) = (true, true);
        for (i, &ai) in a.iter().enumerate() {
            consecutive &= ai == a0.wrapping_add(4 * i as u32);
            same &= ai == a0;
        }
        if consecutive
            && let Ok(at) = usize::try_from(i64::from(a0) + offset)
            && let Some(bytes) = mem.get(at..at + 4 * CHUNK)
        {
            for (o, b) in outs[c].iter_mut().zip(bytes.as_chunks::<4>().0) {
                *o = u32::from_le_bytes(*b);
            }
            seen(at, 4 * CHUNK);
        } else if same {
            let Some((at, v)) = word(a0) else { return false };
            outs[c] = [v; CHUNK];
            seen(at, 4);
        } else if c >= 2 && chunks[c - 2] == *a {
            // The lanes two chunks before read these addresses: the next row of a 16-wide
            // workgroup reading the same fragment.
            outs[c] = outs[c - 2];
        } else {
            for (o, &a) in outs[c].iter_mut().zip(a) {
                let Some((at, v)) = word(a) else { return false };
                *o = v;
                seen(at, 4);
            }
        }
    }
    for (o, &a) in out_rest.iter_mut().zip(rest) {
        let Some((at, v)) = word(a) else { return false };
        *o = v;
        seen(at, 4);
    }
    true
}

/// What an atomic stores, from the old value, the operand and (for compare-and-swap) the new
/// value; 32-bit values zero-extended, compared sign-extended where signed.
pub(super) fn combine(kind: AtomicOp, ty: AtomicType, old: u64, value: u64, compare: u64) -> u64 {
    let signed = matches!(ty, AtomicType::I32 | AtomicType::I64);
    let sx = |v: u64| if ty.is_64() { v as i64 } else { i64::from(v as u32 as i32) };
    match kind {
        AtomicOp::Add if ty == AtomicType::F32 => {
            u64::from((f(old as u32) + f(value as u32)).to_bits())
        }
        AtomicOp::Add => old.wrapping_add(value),
        AtomicOp::Sub => old.wrapping_sub(value),
        AtomicOp::Min if signed => {
            if sx(value) < sx(old) {
                value
            } else {
                old
            }
        }
        AtomicOp::Min => old.min(value),
        AtomicOp::Max if signed => {
            if sx(value) > sx(old) {
                value
            } else {
                old
            }
        }
        AtomicOp::Max => old.max(value),
        AtomicOp::And => old & value,
        AtomicOp::Or => old | value,
        AtomicOp::Xor => old ^ value,
        AtomicOp::Exchange => value,
        // The operand is the compare value, `compare` the new value.
        AtomicOp::Cas => {
            if old == value {
                compare
            } else {
                old
            }
        }
    }
}

/// Lanes read from consecutive `size`-byte values of `bytes` (1, 2 or 4 bytes, zero-extended)
/// into `out`.
#[inline(always)]
pub(super) fn widen(bytes: &[u8], size: usize, out: &mut [u32]) {
    match size {
        4 => {
            for (o, b) in out.iter_mut().zip(bytes.as_chunks::<4>().0) {
                *o = u32::from_le_bytes(*b);
            }
        }
        2 => {
            for (o, b) in out.iter_mut().zip(bytes.as_chunks::<2>().0) {
                *o = u32::from(u16::from_le_bytes(*b));
            }
        }
        _ => {
            for (o, &b) in out.iter_mut().zip(bytes) {
                *o = u32::from(b);
            }
        }
    }
}

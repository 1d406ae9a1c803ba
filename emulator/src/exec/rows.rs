//! Register rows: a register holds one row of [`LANES`] lanes, and these are the row
//! operations the semantics are written with (map a function over the active lanes, blend a
//! result in, read and write pairs and predicates).

use crate::decode::Op;

use super::float::{bits, bits64, f};
use super::{CHUNK, Exec, LANES, Wave};

/// Lane numbers, for rows that hold them.
pub(super) const LANE_IDS: [u32; LANES] = {
    let mut ids = [0u32; LANES];
    let mut l = 0;
    while l < LANES {
        ids[l] = l as u32;
        l += 1;
    }
    ids
};

/// Writes `src` into row `rd` of `regs` in the lanes of `mask`. With every lane active
/// (`full`) the first `span` lanes are written, scratch lanes included, which keeps the loop
/// branch-free.
#[inline(always)]
pub(super) fn put_row(
    regs: &mut [u32],
    rd: u16,
    full: bool,
    mask: u64,
    span: usize,
    src: &[u32; LANES],
) {
    let start = usize::from(rd) * LANES;
    let Some(Ok(dst)) = regs.get_mut(start..start + LANES).map(<&mut [u32; LANES]>::try_from)
    else {
        return;
    };
    if full {
        // Fixed-size pieces: the compiler copies them inline, not through memcpy.
        let pieces = dst.as_chunks_mut::<CHUNK>().0.iter_mut();
        for (d, o) in pieces.zip(src.as_chunks::<CHUNK>().0).take(span / CHUNK) {
            *d = *o;
        }
    } else {
        // Only the active lanes: as cheap for a single lane as it can be, and no
        // mispredicted branch per lane.
        for l in lanes(mask) {
            dst[l] = src[l];
        }
    }
}

/// Writes predicate `pd` in the lanes of `mask`.
pub(super) fn set_pred_bits(wave: &mut Wave, pd: u16, mask: u64, bits: u64) {
    let p = &mut wave.preds[usize::from(pd & 3)];
    *p = (*p & !mask) | (bits & mask);
}

/// `acc = a * b + acc` in the first `span` lanes, with the CPU's FMA when it has one.
pub(super) fn fma_acc_rows(
    a: &[u32; LANES],
    b: &[u32; LANES],
    acc: &mut [u32; LANES],
    span: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        #[allow(
            unsafe_code,
            reason = "the CPU was just checked to have FMA, which is all the function needs"
        )]
        // SAFETY: `fma_acc_hardware` only requires the `fma` target feature, detected above.
        unsafe {
            fma_acc_hardware(a, b, acc, span);
        }
        return;
    }
    fma_acc_portable(a, b, acc, span);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn fma_acc_hardware(a: &[u32; LANES], b: &[u32; LANES], acc: &mut [u32; LANES], span: usize) {
    fma_acc_portable(a, b, acc, span);
}

#[inline(always)]
fn fma_acc_portable(a: &[u32; LANES], b: &[u32; LANES], acc: &mut [u32; LANES], span: usize) {
    let chunks = acc
        .as_chunks_mut::<CHUNK>()
        .0
        .iter_mut()
        .zip(a.as_chunks::<CHUNK>().0)
        .zip(b.as_chunks::<CHUNK>().0)
        .take(span / CHUNK);
    for ((o, x), y) in chunks {
        for i in 0..CHUNK {
            o[i] = bits(f(x[i]).mul_add(f(y[i]), f(o[i])));
        }
    }
}

/// Row `rd` to write and rows `srcs` to read, apart, when no source is `rd`: so that an
/// instruction with every lane active writes its result in place, without a row in between.
#[inline(always)]
pub(super) fn split_rows<const N: usize>(
    regs: &mut [u32],
    rd: u16,
    srcs: [u16; N],
) -> Option<(&mut [u32; LANES], [&[u32; LANES]; N])> {
    static ZERO: [u32; LANES] = [0; LANES];
    let at = usize::from(rd) * LANES;
    let (lo, rest) = regs.split_at_mut_checked(at)?;
    let (dst, hi) = rest.split_at_mut_checked(LANES)?;
    let dst: &mut [u32; LANES] = dst.try_into().ok()?;
    let (lo, hi) = (&*lo, &*hi);
    let mut rows = [&ZERO; N];
    for (row, &r) in rows.iter_mut().zip(&srcs) {
        let s = usize::from(r) * LANES;
        let found = if s + LANES <= at {
            lo.get(s..s + LANES)
        } else if s >= at + LANES {
            hi.get(s - at - LANES..s - at)
        } else {
            None
        };
        *row = found?.try_into().ok()?;
    }
    Some((dst, rows))
}

/// Register row `r` (a row of zeros if it does not exist, which decoding rules out).
#[inline(always)]
pub(super) fn row_ref(regs: &[u32], r: u16) -> &[u32; LANES] {
    const ZERO: [u32; LANES] = [0; LANES];
    let start = usize::from(r) * LANES;
    match regs.get(start..start + LANES).map(<&[u32; LANES]>::try_from) {
        Some(Ok(row)) => row,
        _ => &ZERO,
    }
}

/// Iterates the set bits of a mask.
pub(super) fn lanes(mask: u64) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            return None;
        }
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        Some(l)
    })
}

impl Exec {
    pub(super) fn row(&self, r: u16) -> std::ops::Range<usize> {
        let start = usize::from(r) * LANES;
        start..start + LANES
    }

    /// Writes `out` into row `rd` in the lanes of `mask`.
    #[inline(always)]
    pub(super) fn blend(&self, wave: &mut Wave, rd: u16, mask: u64, out: &[u32; LANES]) {
        put_row(&mut wave.regs, rd, mask == self.full, mask, self.span, out);
    }

    /// Source row `r`: a register of the wave, or (at and above R) an immediate's row.
    #[inline(always)]
    pub(super) fn src<'s>(&'s self, wave: &'s Wave, r: u16) -> &'s [u32; LANES] {
        row_ref(&wave.regs, r)
    }

    /// `rd = f(rs1)` in the lanes of `mask`.
    #[inline(never)]
    pub(super) fn map1(&self, wave: &mut Wave, op: &Op, mask: u64, f: impl Fn(u32) -> u32) {
        if mask == self.full {
            // Every lane active: the result goes straight into rd.
            let n = self.span / CHUNK;
            if op.rd == op.rs1 {
                let at = usize::from(op.rd) * LANES;
                if let Some(Ok(dst)) =
                    wave.regs.get_mut(at..at + LANES).map(<&mut [u32; LANES]>::try_from)
                {
                    for o in dst.as_chunks_mut::<CHUNK>().0.iter_mut().take(n) {
                        for v in o.iter_mut() {
                            *v = f(*v);
                        }
                    }
                    return;
                }
            } else if let Some((dst, [x])) = split_rows(&mut wave.regs, op.rd, [op.rs1]) {
                let pieces = dst.as_chunks_mut::<CHUNK>().0.iter_mut();
                for (o, x) in pieces.zip(x.as_chunks::<CHUNK>().0).take(n) {
                    for i in 0..CHUNK {
                        o[i] = f(x[i]);
                    }
                }
                return;
            }
        }
        let a = self.src(wave, op.rs1);
        let mut out = [0u32; LANES];
        for (o, x) in out
            .as_chunks_mut::<CHUNK>()
            .0
            .iter_mut()
            .zip(a.as_chunks::<CHUNK>().0.iter())
            .take(self.span / CHUNK)
        {
            for i in 0..CHUNK {
                o[i] = f(x[i]);
            }
        }
        self.blend(wave, op.rd, mask, &out);
    }

    /// `rd = f(rs1, rs2)` in the lanes of `mask`.
    #[inline(never)]
    pub(super) fn map2(&self, wave: &mut Wave, op: &Op, mask: u64, f: impl Fn(u32, u32) -> u32) {
        if mask == self.full {
            // Every lane active: the result goes straight into rd (also when rd is one of
            // the sources, as in `iadd r1, r1, 4`: lane i reads only lane i).
            let n = self.span / CHUNK;
            let (rd, r1, r2) = (op.rd, op.rs1, op.rs2);
            // An immediate (a constant row) is one value for every lane, which lets the
            // compiler vectorise what it cannot lane by lane (shifts, on the baseline target).
            let uniform = usize::from(r2) >= self.prog.registers;
            if uniform && rd != r2 {
                let b = self.src(wave, r2)[0];
                if rd == r1 {
                    if let Some(Ok(dst)) = wave
                        .regs
                        .get_mut(usize::from(rd) * LANES..(usize::from(rd) + 1) * LANES)
                        .map(<&mut [u32; LANES]>::try_from)
                    {
                        for o in dst.as_chunks_mut::<CHUNK>().0.iter_mut().take(n) {
                            for v in o.iter_mut() {
                                *v = f(*v, b);
                            }
                        }
                        return;
                    }
                } else if let Some((dst, [x])) = split_rows(&mut wave.regs, rd, [r1]) {
                    let pieces = dst.as_chunks_mut::<CHUNK>().0.iter_mut();
                    for (o, x) in pieces.zip(x.as_chunks::<CHUNK>().0).take(n) {
                        for i in 0..CHUNK {
                            o[i] = f(x[i], b);
                        }
                    }
                    return;
                }
            }
            if rd != r1 && rd != r2 {
                if let Some((dst, [x, y])) = split_rows(&mut wave.regs, rd, [r1, r2]) {
                    let pieces = dst.as_chunks_mut::<CHUNK>().0.iter_mut();
                    let sources = x.as_chunks::<CHUNK>().0.iter().zip(y.as_chunks::<CHUNK>().0);
                    for (o, (x, y)) in pieces.zip(sources).take(n) {
                        for i in 0..CHUNK {
                            o[i] = f(x[i], y[i]);
                        }
                    }
                    return;
                }
            } else if rd == r1 && rd != r2 {
                if let Some((dst, [y])) = split_rows(&mut wave.regs, rd, [r2]) {
                    let pieces = dst.as_chunks_mut::<CHUNK>().0.iter_mut();
                    for (o, y) in pieces.zip(y.as_chunks::<CHUNK>().0).take(n) {
                        for i in 0..CHUNK {
                            o[i] = f(o[i], y[i]);
                        }
                    }
                    return;
                }
            } else if rd == r2
                && rd != r1
                && let Some((dst, [x])) = split_rows(&mut wave.regs, rd, [r1])
            {
                let pieces = dst.as_chunks_mut::<CHUNK>().0.iter_mut();
                for (o, x) in pieces.zip(x.as_chunks::<CHUNK>().0).take(n) {
                    for i in 0..CHUNK {
                        o[i] = f(x[i], o[i]);
                    }
                }
                return;
            }
        }
        let (a, b) = (self.src(wave, op.rs1), self.src(wave, op.rs2));
        let mut out = [0u32; LANES];
        let rows = out
            .as_chunks_mut::<CHUNK>()
            .0
            .iter_mut()
            .zip(a.as_chunks::<CHUNK>().0.iter())
            .zip(b.as_chunks::<CHUNK>().0.iter());
        for ((o, x), y) in rows.take(self.span / CHUNK) {
            for i in 0..CHUNK {
                o[i] = f(x[i], y[i]);
            }
        }
        self.blend(wave, op.rd, mask, &out);
    }

    /// `rd = f(rs1, rs2, rs3)` in the lanes of `mask`.
    #[inline(never)]
    pub(super) fn map3(
        &self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        f: impl Fn(u32, u32, u32) -> u32,
    ) {
        let (a, b, c) = (self.src(wave, op.rs1), self.src(wave, op.rs2), self.src(wave, op.rs3));
        let mut out = [0u32; LANES];
        let rows = out
            .as_chunks_mut::<CHUNK>()
            .0
            .iter_mut()
            .zip(a.as_chunks::<CHUNK>().0.iter())
            .zip(b.as_chunks::<CHUNK>().0.iter())
            .zip(c.as_chunks::<CHUNK>().0.iter());
        for (((o, x), y), z) in rows.take(self.span / CHUNK) {
            for i in 0..CHUNK {
                o[i] = f(x[i], y[i], z[i]);
            }
        }
        self.blend(wave, op.rd, mask, &out);
    }

    /// `rd = rs1 * rs2 + rs3` with one rounding, using the CPU's FMA when it has one.
    pub(super) fn fma(&self, wave: &mut Wave, op: &Op, mask: u64) {
        if mask == self.full {
            // Every lane active: accumulate in place (`fma r10, r1, r2, r10`), or write rd
            // straight from three other rows.
            let (rd, r1, r2, r3) = (op.rd, op.rs1, op.rs2, op.rs3);
            if rd == r3
                && rd != r1
                && rd != r2
                && let Some((acc, [x, y])) = split_rows(&mut wave.regs, rd, [r1, r2])
            {
                fma_acc_rows(x, y, acc, self.span);
                return;
            }
            if rd != r1
                && rd != r2
                && rd != r3
                && let Some((dst, [x, y, z])) = split_rows(&mut wave.regs, rd, [r1, r2, r3])
            {
                *dst = *z;
                fma_acc_rows(x, y, dst, self.span);
                return;
            }
        }
        let mut out = *self.src(wave, op.rs3);
        fma_acc_rows(self.src(wave, op.rs1), self.src(wave, op.rs2), &mut out, self.span);
        self.blend(wave, op.rd, mask, &out);
    }

    /// Sets predicate `pd` in the lanes of `mask` from a per-lane test.
    pub(super) fn set_pred(
        &self,
        wave: &mut Wave,
        pd: u16,
        mask: u64,
        test: impl Fn(usize) -> bool,
    ) {
        let mut value = 0u64;
        for l in lanes(mask) {
            if test(l) {
                value |= 1 << l;
            }
        }
        let p = &mut wave.preds[usize::from(pd & 3)];
        *p = (*p & !mask) | value;
    }

    pub(super) fn pair(&self, wave: &Wave, r: u16, l: usize) -> u64 {
        let lo = wave.regs[usize::from(r) * LANES + l];
        let hi = wave.regs[(usize::from(r) + 1) * LANES + l];
        u64::from(lo) | (u64::from(hi) << 32)
    }

    pub(super) fn set_pair(&self, wave: &mut Wave, r: u16, l: usize, v: u64) {
        wave.regs[usize::from(r) * LANES + l] = v as u32;
        wave.regs[(usize::from(r) + 1) * LANES + l] = (v >> 32) as u32;
    }

    pub(super) fn map_f64(
        &self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        f: impl Fn(f64, f64, f64) -> f64,
    ) {
        for l in lanes(mask) {
            let a = f64::from_bits(self.pair(wave, op.rs1, l));
            let b = f64::from_bits(self.pair(wave, op.rs2, l));
            let c = f64::from_bits(self.pair(wave, op.rs3, l));
            let v = bits64(f(a, b, c));
            self.set_pair(wave, op.rd, l, v);
        }
    }

    pub(super) fn reg(&self, wave: &Wave, r: u16, l: usize) -> u32 {
        wave.regs[usize::from(r) * LANES + l]
    }
}

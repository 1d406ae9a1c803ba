//! Memory instructions: loads, stores and atomics on device or local memory, with the
//! bounds checks that trap, a fast path for coalesced accesses, and the byte counters.

use wave_isa::{AtomicOp, AtomicType, MemWidth};

use crate::Trap;
use crate::decode::Op;

use super::access::{all_within, combine, contiguous, gather_words, widen};
use super::rows::{lanes, put_row, row_ref};
use super::{CHUNK, Exec, LANES, Wave};

impl Exec {
    /// The out-of-bounds trap for lane `lane`'s access at `addr`.
    #[cold]
    pub(super) fn out_of_bounds(
        &self,
        wave: &Wave,
        op: &Op,
        lane: usize,
        addr: i64,
        size: usize,
        local: bool,
    ) -> Trap {
        let (space, len) =
            if local { ("local", self.local.len()) } else { ("device", self.device_len()) };
        self.trap(
            Some(wave),
            Some(op),
            Some(lane),
            format!(
                "{space} memory out of bounds: {size}-byte access at address {addr} (0x{:x}); {space} memory is {len} bytes",
                addr as u64
            ),
        )
    }

    /// The byte offset of every lane's access in `mask`, checked against the memory size,
    /// indexed by lane; or the trap of the first lane out of bounds.
    pub(super) fn addresses(
        &self,
        wave: &Wave,
        op: &Op,
        mask: u64,
        size: usize,
        local: bool,
        offset: i64,
    ) -> Result<[usize; LANES], Trap> {
        let mut addrs = [0usize; LANES];
        let len = if local { self.local.len() } else { self.device_len() } as i64;
        let base = &wave.regs[self.row(op.rs1)];
        for l in lanes(mask) {
            let addr = i64::from(base[l]) + offset;
            if addr < 0 || addr + size as i64 > len {
                return Err(self.out_of_bounds(wave, op, l, addr, size, local));
            }
            addrs[l] = addr as usize;
        }
        Ok(addrs)
    }

    /// A 32-bit load with every lane active where lane l reads `first + 4 l` (a coalesced
    /// access, the most common load): one bounds check and a copy into the row, without the
    /// general path's setup. `false` when the load is not of that kind.
    #[inline(always)]
    pub(super) fn load_row(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        width: MemWidth,
        local: bool,
    ) -> bool {
        let size = width.bytes();
        if mask != self.full || size > 4 || (!local && self.overlay.is_some()) {
            return false;
        }
        let w = self.w;
        let addrs = row_ref(&wave.regs, op.rs1);
        if addrs[1] != addrs[0].wrapping_add(size as u32) {
            return false;
        }
        let Some(first) = contiguous(addrs, w, size, i64::from(op.imm)) else { return false };
        let mem: &[u8] = if local { &self.local } else { &self.device };
        let rd = usize::from(op.rd) * LANES;
        let (Some(bytes), Some(out)) =
            (mem.get(first..first + size * w), wave.regs.get_mut(rd..rd + w))
        else {
            return false;
        };
        widen(bytes, size, out);
        let n = (size * w) as u64;
        if local {
            self.stats.local_bytes[0] += n;
        } else {
            self.stats.device_bytes[0] += n;
        }
        true
    }

    /// A 32-bit integer `atomic_add` (counters, histograms) with every address in bounds:
    /// lane by lane, without the general path's address table; the old values only when the
    /// destination is not `r0`. `false` when the atomic is not of that kind. (Out of line:
    /// inlined into the step loop's `match` it made the whole loop slower, the histogram by 8%.)
    #[inline(never)]
    pub(super) fn add_words(&mut self, wave: &mut Wave, op: &Op, mask: u64, local: bool) -> bool {
        if !local && self.overlay.is_some() {
            return false;
        }
        let (full, w) = (mask == self.full, self.w);
        let mem: &mut [u8] = if local { &mut self.local } else { &mut self.device };
        let (base, values) = (row_ref(&wave.regs, op.rs1), row_ref(&wave.regs, op.rs2));
        let within = if full {
            all_within(&base[..w], 0, 4, mem.len())
        } else {
            (lanes(mask).fold(0u32, |hi, l| hi.max(base[l])) as usize) + 4 <= mem.len()
        };
        if !within {
            return false;
        }
        let add = |mem: &mut [u8], l: usize| -> u32 {
            let at = base[l] as usize;
            match mem.get_mut(at..at + 4).map(<&mut [u8; 4]>::try_from) {
                Some(Ok(cell)) => {
                    let old = u32::from_le_bytes(*cell);
                    *cell = old.wrapping_add(values[l]).to_le_bytes();
                    old
                }
                _ => 0,
            }
        };
        if op.rd == 0 {
            // The form `atomic_add r0, ...` keeps no old values.
            if full {
                (0..w).for_each(|l| {
                    add(mem, l);
                });
            } else {
                lanes(mask).for_each(|l| {
                    add(mem, l);
                });
            }
        } else {
            let mut olds = [0u32; LANES];
            if full {
                (0..w).for_each(|l| olds[l] = add(mem, l));
            } else {
                lanes(mask).for_each(|l| olds[l] = add(mem, l));
            }
            put_row(&mut wave.regs, op.rd, full, mask, self.span, &olds);
        }
        self.count_bytes(mask, 4, local, 0);
        self.count_bytes(mask, 4, local, 1);
        true
    }

    pub(super) fn load(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        width: MemWidth,
        local: bool,
    ) -> Result<(), Trap> {
        if !local && self.overlay.is_some() {
            return self.load_speculative(wave, op, mask, width);
        }
        let size = width.bytes();
        let (base, rd) = (usize::from(op.rs1) * LANES, usize::from(op.rd) * LANES);
        let offset = i64::from(op.imm);
        let mem: &[u8] = if local { &self.local } else { &self.device };
        // Lanes before a faulting one may already hold their value: the run stops anyway.
        let at = |wave: &Wave, l: usize| -> Result<usize, Trap> {
            let addr = i64::from(wave.regs[base + l]) + offset;
            match usize::try_from(addr) {
                Ok(at) if at + size <= mem.len() => Ok(at),
                _ => Err(self.out_of_bounds(wave, op, l, addr, size, local)),
            }
        };
        // (A coalesced load of 8, 16 or 32 bits never gets here: `load_row` took it.)
        if mask == self.full && size == 4 {
            // Every lane active (the common case): eight lanes at a time are read as a row,
            // a broadcast or a gather, each checked once.
            let addrs = row_ref(&wave.regs, op.rs1);
            let w = self.w;
            let mut out = [0u32; LANES];
            if gather_words(mem, &addrs[..w], offset, &mut out[..w], |_, _| {}) {
                self.blend(wave, op.rd, mask, &out);
                self.count_bytes(mask, size, local, 0);
                return Ok(());
            }
        }
        if mask == self.full && size == 8 && op.rd < u16::MAX {
            // A register pair in every lane: one bounds pass, then two words a lane.
            let addrs = row_ref(&wave.regs, op.rs1);
            let w = self.w;
            if all_within(&addrs[..w], offset, 8, mem.len()) {
                let (mut lo, mut hi) = ([0u32; LANES], [0u32; LANES]);
                let pair = |a: u32| {
                    let at = (i64::from(a) + offset) as usize;
                    let v = match mem.get(at..at + 8).map(<&[u8; 8]>::try_from) {
                        Some(Ok(bytes)) => u64::from_le_bytes(*bytes),
                        _ => 0,
                    };
                    (v as u32, (v >> 32) as u32)
                };
                let chunks = addrs[..w].as_chunks::<CHUNK>().0;
                let (los, his) = (lo.as_chunks_mut::<CHUNK>().0, hi.as_chunks_mut::<CHUNK>().0);
                for (c, a) in chunks.iter().enumerate() {
                    // Eight lanes reading what eight lanes two chunks before read (the next
                    // row of a 16-wide workgroup reading the same fragment).
                    if c >= 2 && chunks[c - 2] == *a {
                        los[c] = los[c - 2];
                        his[c] = his[c - 2];
                    } else if a.iter().all(|&x| x == a[0]) {
                        // Eight lanes reading one pair (a fragment every lane of a row shares).
                        let (x, y) = pair(a[0]);
                        (los[c], his[c]) = ([x; CHUNK], [y; CHUNK]);
                    } else {
                        for i in 0..CHUNK {
                            (los[c][i], his[c][i]) = pair(a[i]);
                        }
                    }
                }
                for l in (w / CHUNK * CHUNK)..w {
                    (lo[l], hi[l]) = pair(addrs[l]);
                }
                self.blend(wave, op.rd, mask, &lo);
                self.blend(wave, op.rd + 1, mask, &hi);
                self.count_bytes(mask, size, local, 0);
                return Ok(());
            }
        }
        match size {
            // Every lane active: check the lowest and highest address once, then gather.
            4 if mask == self.full => {
                let addrs = row_ref(&wave.regs, op.rs1);
                let w = self.w;
                let (lo, hi) =
                    addrs[..w].iter().fold((u32::MAX, 0), |(lo, hi), &a| (lo.min(a), hi.max(a)));
                let fits =
                    i64::from(lo) + offset >= 0 && i64::from(hi) + offset + 4 <= mem.len() as i64;
                if !fits {
                    for l in 0..w {
                        at(wave, l)?;
                    }
                }
                let mut out = [0u32; LANES];
                gather_words(mem, &addrs[..w], offset, &mut out[..w], |_, _| {});
                self.blend(wave, op.rd, mask, &out);
            }
            4 => {
                for l in lanes(mask) {
                    let a = at(wave, l)?;
                    let word: [u8; 4] = mem[a..a + 4].try_into().unwrap_or([0; 4]);
                    wave.regs[rd + l] = u32::from_le_bytes(word);
                }
            }
            1 => {
                for l in lanes(mask) {
                    let a = at(wave, l)?;
                    wave.regs[rd + l] = u32::from(mem[a]);
                }
            }
            2 => {
                for l in lanes(mask) {
                    let a = at(wave, l)?;
                    wave.regs[rd + l] = u32::from(mem[a]) | (u32::from(mem[a + 1]) << 8);
                }
            }
            _ => {
                for l in lanes(mask) {
                    let a = at(wave, l)?;
                    for (i, chunk) in mem[a..a + size].chunks_exact(4).enumerate() {
                        let word: [u8; 4] = chunk.try_into().unwrap_or([0; 4]);
                        wave.regs[rd + i * LANES + l] = u32::from_le_bytes(word);
                    }
                }
            }
        }
        self.count_bytes(mask, size, local, 0);
        Ok(())
    }

    /// Adds the bytes an access of `size` in the lanes of `mask` moved: `direction` 0 read,
    /// 1 written.
    pub(super) fn count_bytes(&mut self, mask: u64, size: usize, local: bool, direction: usize) {
        let lanes = if mask == self.full { self.w as u64 } else { u64::from(mask.count_ones()) };
        let n = lanes * size as u64;
        if local {
            self.stats.local_bytes[direction] += n;
        } else {
            self.stats.device_bytes[direction] += n;
        }
    }

    pub(super) fn store(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        width: MemWidth,
        local: bool,
    ) -> Result<(), Trap> {
        if !local && self.overlay.is_some() {
            return self.store_speculative(wave, op, mask, width);
        }
        let size = width.bytes();
        let rs2 = usize::from(op.rs2) * LANES;
        let w = self.w;
        if mask == self.full
            && size == 4
            && let Some(first) = contiguous(row_ref(&wave.regs, op.rs1), w, 4, i64::from(op.imm))
        {
            let mem: &mut [u8] = if local { &mut self.local } else { &mut self.device };
            if let Some(bytes) = mem.get_mut(first..first + 4 * w) {
                // Every lane active and lane l writing `first + 4 * l`: a straight copy.
                for (b, v) in bytes.chunks_exact_mut(4).zip(&wave.regs[rs2..rs2 + w]) {
                    b.copy_from_slice(&v.to_le_bytes());
                }
                self.count_bytes(mask, size, local, 1);
                return Ok(());
            }
        }
        let addrs = self.addresses(wave, op, mask, size, local, i64::from(op.imm))?;
        let mem: &mut [u8] = if local { &mut self.local } else { &mut self.device };
        for l in lanes(mask) {
            let at = addrs[l];
            for i in 0..size.div_ceil(4) {
                let word = wave.regs[rs2 + i * LANES + l].to_le_bytes();
                let n = (size - 4 * i).min(4);
                mem[at + 4 * i..at + 4 * i + n].copy_from_slice(&word[..n]);
            }
        }
        self.count_bytes(mask, size, local, 1);
        Ok(())
    }

    pub(super) fn atomic(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        kind: AtomicOp,
        ty: AtomicType,
        local: bool,
    ) -> Result<(), Trap> {
        if !local && self.overlay.is_some() {
            return self.atomic_speculative(wave, op, mask, kind, ty);
        }
        let size = if ty.is_64() { 8 } else { 4 };
        let addrs = self.addresses(wave, op, mask, size, local, 0)?;
        let combine = |old: u64, value: u64, compare: u64| combine(kind, ty, old, value, compare);
        let mem: &mut [u8] = if local { &mut self.local } else { &mut self.device };
        let (rs2, rs3, rd) =
            (usize::from(op.rs2) * LANES, usize::from(op.rs3) * LANES, usize::from(op.rd) * LANES);
        if size == 4 {
            for l in lanes(mask) {
                let at = addrs[l];
                let Some(Ok(cell)) = mem.get_mut(at..at + 4).map(<&mut [u8; 4]>::try_from) else {
                    continue;
                };
                let old = u32::from_le_bytes(*cell);
                let new = combine(
                    u64::from(old),
                    u64::from(wave.regs[rs2 + l]),
                    u64::from(wave.regs[rs3 + l]),
                );
                *cell = (new as u32).to_le_bytes();
                if rd != 0 {
                    wave.regs[rd + l] = old;
                }
            }
        } else {
            let pair = |regs: &[u32], row: usize, l: usize| {
                u64::from(regs[row + l]) | (u64::from(regs[row + LANES + l]) << 32)
            };
            for l in lanes(mask) {
                let at = addrs[l];
                let Some(Ok(cell)) = mem.get_mut(at..at + 8).map(<&mut [u8; 8]>::try_from) else {
                    continue;
                };
                let old = u64::from_le_bytes(*cell);
                let new = combine(old, pair(&wave.regs, rs2, l), pair(&wave.regs, rs3, l));
                *cell = new.to_le_bytes();
                if rd != 0 {
                    wave.regs[rd + l] = old as u32;
                    wave.regs[rd + LANES + l] = (old >> 32) as u32;
                }
            }
        }
        self.count_bytes(mask, size, local, 0);
        self.count_bytes(mask, size, local, 1);
        Ok(())
    }
}

/// The trap that ends a speculative run which must be redone; never reported.
pub(super) const REDO: &str = "speculation abandoned";

impl Exec {
    /// The size of device memory.
    pub(super) fn device_len(&self) -> usize {
        match &self.overlay {
            Some(o) => o.len(),
            None => self.device.len(),
        }
    }

    /// Ends a speculative run whose view of memory depends on an atomic it recorded.
    fn speculation_check(&self) -> Result<(), Trap> {
        match &self.overlay {
            Some(o) if o.poisoned => Err(self.trap(None, None, None, REDO.into())),
            _ => Ok(()),
        }
    }

    /// A device load through the workgroup's overlay (see `overlay`).
    fn load_speculative(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        width: MemWidth,
    ) -> Result<(), Trap> {
        let size = width.bytes();
        let offset = i64::from(op.imm);
        let (w, len) = (self.w, self.device_len());
        let rd = usize::from(op.rd) * LANES;
        if mask == self.full
            && size <= 4
            && let Some(first) = contiguous(row_ref(&wave.regs, op.rs1), w, size, offset)
            && first + size * w <= len
            && let Some(ov) = self.overlay.as_mut()
            && let Some(bytes) = ov.range(first, size * w)
            && let Some(out) = wave.regs.get_mut(rd..rd + w)
        {
            widen(bytes, size, out);
            self.count_bytes(mask, size, false, 0);
            return self.speculation_check();
        }
        if mask == self.full && size == 4 {
            // A gather from pages the workgroup has not written: straight from the base.
            let addrs = row_ref(&wave.regs, op.rs1);
            let (lo, hi) =
                addrs[..w].iter().fold((u32::MAX, 0), |(lo, hi), &a| (lo.min(a), hi.max(a)));
            let mut out = [0u32; LANES];
            if let Some(ov) = self.overlay.as_mut()
                && ov.gather_words(
                    &addrs[..w],
                    offset,
                    (i64::from(lo) + offset, i64::from(hi) + offset),
                    &mut out[..w],
                )
            {
                self.blend(wave, op.rd, mask, &out);
                self.count_bytes(mask, size, false, 0);
                return Ok(());
            }
        }
        let addrs = self.addresses(wave, op, mask, size, false, offset)?;
        let Some(ov) = self.overlay.as_mut() else { return Ok(()) };
        for l in lanes(mask) {
            let mut buf = [0u8; 16];
            ov.read(addrs[l], &mut buf[..size]);
            for (i, word) in buf[..size.next_multiple_of(4)].chunks_exact(4).enumerate() {
                if let Some(r) = wave.regs.get_mut(rd + i * LANES + l) {
                    *r = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                }
            }
        }
        self.count_bytes(mask, size, false, 0);
        self.speculation_check()
    }

    /// A device store into the workgroup's overlay.
    fn store_speculative(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        width: MemWidth,
    ) -> Result<(), Trap> {
        let size = width.bytes();
        let rs2 = usize::from(op.rs2) * LANES;
        let w = self.w;
        let len = self.device_len();
        if mask == self.full
            && size == 4
            && let Some(first) = contiguous(row_ref(&wave.regs, op.rs1), w, 4, i64::from(op.imm))
            && first + 4 * w <= len
            && let Some(ov) = self.overlay.as_mut()
        {
            let mut bytes = [0u8; 4 * LANES];
            for (b, v) in bytes.chunks_exact_mut(4).zip(&wave.regs[rs2..rs2 + w]) {
                b.copy_from_slice(&v.to_le_bytes());
            }
            ov.write(first, &bytes[..4 * w]);
            self.count_bytes(mask, size, false, 1);
            return self.speculation_check();
        }
        let addrs = self.addresses(wave, op, mask, size, false, i64::from(op.imm))?;
        let Some(ov) = self.overlay.as_mut() else { return Ok(()) };
        for l in lanes(mask) {
            let mut bytes = [0u8; 16];
            for i in 0..size.div_ceil(4) {
                let word = wave.regs.get(rs2 + i * LANES + l).copied().unwrap_or(0);
                bytes[4 * i..4 * i + 4].copy_from_slice(&word.to_le_bytes());
            }
            ov.write(addrs[l], &bytes[..size]);
        }
        self.count_bytes(mask, size, false, 1);
        self.speculation_check()
    }

    /// A device atomic on the workgroup's overlay: recorded for the commit when nothing reads
    /// its old value, performed on the overlay otherwise.
    fn atomic_speculative(
        &mut self,
        wave: &mut Wave,
        op: &Op,
        mask: u64,
        kind: AtomicOp,
        ty: AtomicType,
    ) -> Result<(), Trap> {
        let size = if ty.is_64() { 8 } else { 4 };
        let addrs = self.addresses(wave, op, mask, size, false, 0)?;
        let (rs2, rs3, rd) =
            (usize::from(op.rs2) * LANES, usize::from(op.rs3) * LANES, usize::from(op.rd) * LANES);
        let Some(ov) = self.overlay.as_mut() else { return Ok(()) };
        let value = |regs: &[u32], row: usize, l: usize| {
            let lo = u64::from(regs.get(row + l).copied().unwrap_or(0));
            if size == 8 {
                lo | u64::from(regs.get(row + LANES + l).copied().unwrap_or(0)) << 32
            } else {
                lo
            }
        };
        let defer = op.discard && ov.defers();
        for l in lanes(mask) {
            let (v, c) = (value(&wave.regs, rs2, l), value(&wave.regs, rs3, l));
            if defer {
                ov.defer_atomic(addrs[l], kind, ty, v, c);
                continue;
            }
            let mut old = [0u8; 8];
            ov.read(addrs[l], &mut old[..size]);
            let old = u64::from_le_bytes(old);
            let new = combine(kind, ty, old, v, c);
            ov.write(addrs[l], &new.to_le_bytes()[..size]);
            if rd != 0 {
                wave.regs[rd + l] = old as u32;
                if size == 8 {
                    wave.regs[rd + LANES + l] = (old >> 32) as u32;
                }
            }
        }
        self.count_bytes(mask, size, false, 0);
        self.count_bytes(mask, size, false, 1);
        self.speculation_check()
    }
}

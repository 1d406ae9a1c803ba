//! Speculative device memory, for workgroups run in parallel.
//!
//! A workgroup run on a worker thread sees device memory as it was when its batch began (the
//! `base`, shared and never written while the batch runs) through an overlay of its own:
//! a store copies the page it lands in and writes the copy; a load reads the copy where there
//! is one and the base elsewhere. Every load records the 64-byte lines it read. An atomic whose
//! old value nobody reads (destination `r0`) is not performed but recorded, to be applied when
//! the workgroup commits, in program order.
//!
//! The batch then commits in workgroup order (see `parallel`): a workgroup that read a line an
//! earlier workgroup of its batch wrote saw memory the one-thread run would not have shown it,
//! and runs again on the memory as committed so far. Everything else it did is what the
//! one-thread run does, so its writes and recorded atomics are applied as they are.

use std::sync::Arc;

use wave_isa::{AtomicOp, AtomicType};

use super::access::combine;

/// Bytes per page copied on a workgroup's first store into it.
const PAGE: usize = 4096;
/// Bytes per line: the unit in which reads and writes are compared across workgroups.
const LINE: usize = 64;
const LINES_PER_PAGE: usize = PAGE / LINE;

/// A set of lines: one bit each, and the words that hold a bit, so that clearing costs what
/// was set.
#[derive(Default)]
pub(crate) struct Lines {
    bits: Vec<u64>,
    touched: Vec<u32>,
}

impl Lines {
    /// Sized for `bytes` of memory (emptied when the size changes).
    pub(crate) fn fit(&mut self, bytes: usize) {
        let words = bytes.div_ceil(LINE * 64);
        if self.bits.len() != words {
            self.bits = vec![0; words];
            self.touched.clear();
        }
    }

    pub(crate) fn clear(&mut self) {
        for &w in &self.touched {
            if let Some(b) = self.bits.get_mut(w as usize) {
                *b = 0;
            }
        }
        self.touched.clear();
    }

    #[inline(always)]
    fn set(&mut self, line: usize) {
        if let Some(word) = self.bits.get_mut(line / 64) {
            if *word == 0 {
                self.touched.push((line / 64) as u32);
            }
            *word |= 1 << (line % 64);
        }
    }

    /// Sets the lines of bytes `at..at + n` (n ≥ 1).
    #[inline(always)]
    fn set_bytes(&mut self, at: usize, n: usize) {
        let (first, last) = (at / LINE, (at + n - 1) / LINE);
        self.set(first);
        for line in first + 1..=last {
            self.set(line);
        }
    }

    #[inline(always)]
    fn get(&self, line: usize) -> bool {
        self.bits.get(line / 64).is_some_and(|w| w >> (line % 64) & 1 == 1)
    }

    fn any_bytes(&self, at: usize, n: usize) -> bool {
        (at / LINE..=(at + n - 1) / LINE).any(|line| self.get(line))
    }

    /// Whether the two sets share a line.
    pub(crate) fn meets(&self, other: &Lines) -> bool {
        self.touched.iter().any(|&w| {
            let w = w as usize;
            self.bits.get(w).zip(other.bits.get(w)).is_some_and(|(a, b)| a & b != 0)
        })
    }
}

/// A page a workgroup wrote: the bytes it stored, and which they are (one word per line, a
/// bit per byte); the other bytes of `data` mean nothing.
struct Page {
    data: Box<[u8; PAGE]>,
    written: [u64; LINES_PER_PAGE],
}

/// How many of some bytes of a page the workgroup wrote.
enum Written {
    All,
    None,
    Some,
}

impl Page {
    /// The bits of bytes `off..off + n` of the page, line by line: (line, mask).
    fn lines(off: usize, n: usize) -> impl Iterator<Item = (usize, u64)> {
        let end = off + n;
        (off / LINE..=(end - 1) / LINE).map(move |line| {
            let lo = off.max(line * LINE) - line * LINE;
            let hi = end.min((line + 1) * LINE) - line * LINE;
            let mask = if hi - lo == 64 { u64::MAX } else { ((1u64 << (hi - lo)) - 1) << lo };
            (line, mask)
        })
    }

    fn mark(&mut self, off: usize, n: usize) {
        for (line, mask) in Self::lines(off, n) {
            self.written[line] |= mask;
        }
    }

    fn written_in(&self, off: usize, n: usize) -> Written {
        let (mut all, mut none) = (true, true);
        for (line, mask) in Self::lines(off, n) {
            let w = self.written[line] & mask;
            all &= w == mask;
            none &= w == 0;
        }
        if all {
            Written::All
        } else if none {
            Written::None
        } else {
            Written::Some
        }
    }
}

/// An atomic left for the commit.
#[derive(Clone, Copy)]
struct Deferred {
    at: usize,
    kind: AtomicOp,
    ty: AtomicType,
    value: u64,
    compare: u64,
}

/// One workgroup's view of device memory and the record of what it did to it.
#[derive(Default)]
pub(crate) struct Overlay {
    base: Option<Arc<Vec<u8>>>,
    len: usize,
    /// Page number to its slot plus one; 0 for a page not written.
    table: Vec<u32>,
    slots: Vec<Page>,
    /// The page number of each slot in use.
    pages: Vec<u32>,
    pub(crate) read: Lines,
    /// Lines a recorded atomic will update.
    atomic: Lines,
    deferred: Vec<Deferred>,
    /// Record atomics without a destination rather than perform them.
    defer: bool,
    /// The workgroup touched a line after recording an atomic there: what it saw depends on
    /// the atomic, so it must run again with atomics performed.
    pub(crate) poisoned: bool,
}

impl Overlay {
    /// Starts a workgroup over `base`: nothing read or written.
    pub(crate) fn begin(&mut self, base: Arc<Vec<u8>>, defer: bool) {
        self.len = base.len();
        let pages = self.len.div_ceil(PAGE);
        if self.table.len() != pages {
            self.table = vec![0; pages];
            self.pages.clear();
        }
        for &p in &self.pages {
            if let Some(t) = self.table.get_mut(p as usize) {
                *t = 0;
            }
        }
        self.pages.clear();
        self.read.fit(self.len);
        self.read.clear();
        self.atomic.fit(self.len);
        self.atomic.clear();
        self.deferred.clear();
        self.defer = defer;
        self.poisoned = false;
        self.base = Some(base);
    }

    /// Lets go of the base, so that the committed memory can be written again.
    pub(crate) fn end(&mut self) {
        self.base = None;
    }

    /// Pages the workgroup wrote.
    pub(crate) fn pages(&self) -> usize {
        self.pages.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn defers(&self) -> bool {
        self.defer
    }

    fn base(&self) -> &[u8] {
        self.base.as_deref().map_or(&[], Vec::as_slice)
    }

    /// A plain access to lines with a recorded atomic poisons the run.
    #[inline(always)]
    fn check_atomic(&mut self, at: usize, n: usize) {
        if !self.deferred.is_empty() && self.atomic.any_bytes(at, n) {
            self.poisoned = true;
        }
    }

    /// Bytes `at..at + n` (in bounds) as one slice of the base, when the workgroup wrote no page
    /// they lie in; recorded as read.
    #[inline(always)]
    pub(crate) fn range(&mut self, at: usize, n: usize) -> Option<&[u8]> {
        let (first, last) = (at / PAGE, (at + n - 1) / PAGE);
        if (first..=last).any(|p| self.table.get(p).is_none_or(|&t| t != 0)) {
            return None;
        }
        self.check_atomic(at, n);
        self.read.set_bytes(at, n);
        self.base.as_deref().and_then(|b| b.get(at..at + n))
    }

    /// Reads the 32-bit word at each of `addrs` (plus `offset`) into `out`, recording each
    /// as read, when every address lies in bounds within `lo..hi` and the workgroup wrote no
    /// page there nor recorded an atomic; `false` otherwise (then the caller reads lane by
    /// lane; lines recorded as read before an address failed only make the set larger).
    #[inline(always)]
    pub(crate) fn gather_words(
        &mut self,
        addrs: &[u32],
        offset: i64,
        (lo, hi): (i64, i64),
        out: &mut [u32],
    ) -> bool {
        if lo < 0 || hi + 4 > self.len as i64 || !self.deferred.is_empty() {
            return false;
        }
        let (first, last) = (lo as usize / PAGE, (hi as usize + 3) / PAGE);
        if (first..=last).any(|p| self.table.get(p).is_none_or(|&t| t != 0)) {
            return false;
        }
        let Some(base) = self.base.as_deref() else { return false };
        let read = &mut self.read;
        super::access::gather_words(base, addrs, offset, out, |at, n| read.set_bytes(at, n))
    }

    /// Reads bytes `at..at + out.len()` (in bounds), recording them as read.
    #[inline(always)]
    pub(crate) fn read(&mut self, at: usize, out: &mut [u8]) {
        let n = out.len();
        self.check_atomic(at, n);
        self.read.set_bytes(at, n);
        let page = at / PAGE;
        if (at + n - 1) / PAGE == page {
            let off = at % PAGE;
            let src = match self.table.get(page) {
                Some(&t) if t != 0 => match self.slots.get(t as usize - 1) {
                    // Bytes the workgroup wrote come from its page, the others from the base.
                    Some(slot) => match slot.written_in(off, n) {
                        Written::All => slot.data.get(off..off + n),
                        Written::None => self.base().get(at..at + n),
                        Written::Some => None,
                    },
                    None => None,
                },
                _ => self.base().get(at..at + n),
            };
            if let Some(src) = src {
                out.copy_from_slice(src);
                return;
            }
        }
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.byte(at + i);
        }
    }

    /// Byte `a` as the workgroup sees it.
    fn byte(&self, a: usize) -> u8 {
        let from_base = || self.base().get(a).copied().unwrap_or(0);
        match self.table.get(a / PAGE) {
            Some(&t) if t != 0 => match self.slots.get(t as usize - 1) {
                Some(slot) if slot.written[(a % PAGE) / LINE] >> (a % LINE) & 1 == 1 => {
                    slot.data[a % PAGE]
                }
                _ => from_base(),
            },
            _ => from_base(),
        }
    }

    /// The slot of page `page`, taken on first use; only the bytes marked written in it mean
    /// anything, so nothing is copied.
    fn slot(&mut self, page: usize) -> Option<&mut Page> {
        let t = *self.table.get(page)?;
        let index = if t != 0 {
            t as usize - 1
        } else {
            let index = self.pages.len();
            if index == self.slots.len() {
                self.slots.push(Page { data: Box::new([0; PAGE]), written: [0; LINES_PER_PAGE] });
            }
            self.slots.get_mut(index)?.written = [0; LINES_PER_PAGE];
            self.pages.push(page as u32);
            self.table[page] = index as u32 + 1;
            index
        };
        self.slots.get_mut(index)
    }

    /// Writes `bytes` at `at` (in bounds).
    #[inline(always)]
    pub(crate) fn write(&mut self, at: usize, bytes: &[u8]) {
        let n = bytes.len();
        self.check_atomic(at, n);
        let mut done = 0;
        while done < n {
            let a = at + done;
            let off = a % PAGE;
            let take = (PAGE - off).min(n - done);
            let Some(slot) = self.slot(a / PAGE) else { return };
            slot.data[off..off + take].copy_from_slice(&bytes[done..done + take]);
            slot.mark(off, take);
            done += take;
        }
    }

    /// Records an atomic for the commit.
    pub(crate) fn defer_atomic(
        &mut self,
        at: usize,
        kind: AtomicOp,
        ty: AtomicType,
        value: u64,
        compare: u64,
    ) {
        let size = if ty.is_64() { 8 } else { 4 };
        self.atomic.set_bytes(at, size);
        self.deferred.push(Deferred { at, kind, ty, value, compare });
    }

    /// Applies the workgroup's writes and recorded atomics to `device` (the memory as
    /// committed so far), adding the lines they touched to `written`.
    pub(crate) fn commit(&self, device: &mut [u8], written: &mut Lines) {
        for (slot, &page) in self.slots.iter().zip(&self.pages) {
            let start = page as usize * PAGE;
            for (line, &mask) in slot.written.iter().enumerate() {
                if mask == 0 {
                    continue;
                }
                let at = start + line * LINE;
                written.set(at / LINE);
                let src = &slot.data[line * LINE..(line + 1) * LINE];
                let Some(dst) = device.get_mut(at..(at + LINE).min(self.len)) else { continue };
                if mask == u64::MAX
                    && let (Ok(dst), Ok(src)) =
                        (<&mut [u8; LINE]>::try_from(&mut *dst), <&[u8; LINE]>::try_from(src))
                {
                    // A whole line: a fixed-size copy, not a call.
                    *dst = *src;
                } else {
                    for (i, d) in dst.iter_mut().enumerate() {
                        if mask >> i & 1 == 1 {
                            *d = src[i];
                        }
                    }
                }
            }
        }
        for d in &self.deferred {
            let size = if d.ty.is_64() { 8 } else { 4 };
            written.set_bytes(d.at, size);
            let Some(cell) = device.get_mut(d.at..d.at + size) else { continue };
            let mut old = [0u8; 8];
            old[..size].copy_from_slice(cell);
            let new = combine(d.kind, d.ty, u64::from_le_bytes(old), d.value, d.compare);
            cell.copy_from_slice(&new.to_le_bytes()[..size]);
        }
    }
}

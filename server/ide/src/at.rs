//! Finding the kernel, statement and token under a byte offset of a file.

use wave_db::{Database, KernelCheck, KernelSpan, SourceFile, check_kernel, kernels};

/// A kernel with its check, and an offset relative to its text.
pub(crate) struct KernelAt<'db> {
    /// Where the kernel is in the file.
    pub span: &'db KernelSpan<'db>,
    /// What checking it gave.
    pub check: &'db KernelCheck,
    /// Its text.
    pub text: &'db str,
    /// The offset, relative to `text`.
    pub local: usize,
}

impl KernelAt<'_> {
    /// The byte offset in the file of `local`, an offset in the kernel's text.
    pub fn file_offset(&self, local: usize) -> usize {
        self.span.range.start + local
    }

    /// A range of the kernel's text as a range of the file.
    pub fn file_range(&self, r: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.file_offset(r.start)..self.file_offset(r.end)
    }
}

/// The kernel that contains byte `offset` of `file` (its end included), if any.
pub(crate) fn kernel_at(db: &Database, file: SourceFile, offset: usize) -> Option<KernelAt<'_>> {
    let text = file.text(db);
    if offset > text.len() || !text.is_char_boundary(offset) {
        return None;
    }
    let layout = kernels(db, file);
    let span = layout
        .kernels
        .iter()
        .find(|k| k.range.contains(&offset))
        .or_else(|| layout.kernels.iter().find(|k| k.range.end == offset))?;
    Some(KernelAt {
        span,
        check: check_kernel(db, span.source),
        text: span.source.text(db),
        local: offset - span.range.start,
    })
}

/// Every kernel of `file`, with its check.
pub(crate) fn all_kernels(db: &Database, file: SourceFile) -> Vec<KernelAt<'_>> {
    kernels(db, file)
        .kernels
        .iter()
        .map(|span| KernelAt {
            span,
            check: check_kernel(db, span.source),
            text: span.source.text(db),
            local: 0,
        })
        .collect()
}

//! Memory as the engine sees it: the caller's buffer of a memory type, or string slots; the
//! caller's buffer shared by a parallel copy (`MemOut`); each worker's scratch buffer.

use crate::error::{Error, Kind, Result};
use crate::nc::types::NcType;

/// Memory as the engine sees it: bytes of a numeric/char memory type, or string slots.
pub enum Mem<'a> {
    Bytes(&'a mut [u8], MemType),
    Strings(&'a mut [Option<Option<String>>]),
}

/// The memory side's element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemType {
    Text,
    Num(NcType),
}

impl MemType {
    pub(crate) fn size(self) -> usize {
        match self {
            MemType::Text => 1,
            MemType::Num(t) => t.size(),
        }
    }
}

/// `len` bytes of the caller's buffer from `off`; a selection reaching past it is refused.
pub(super) fn slice_of(buf: &[u8], off: usize, len: usize) -> Result<&[u8]> {
    buf.get(off..off + len).ok_or_else(|| Error::new(Kind::Internal, "selection outside the user buffer"))
}

/// The user's buffer, shared by the parallel copy of a get.
pub(super) struct MemOut {
    pub(super) ptr: *mut u8,
    pub(super) len: usize,
}

// SAFETY: a get's chunks hold disjoint sets of selected elements, and each element has one
// memory slot, so concurrent `copy_out` calls never write the same byte; every write is
// bounds-checked against `len`.
// SAFETY: as the paragraph above says.
unsafe impl Send for MemOut {}
// SAFETY: as the paragraph above says.
unsafe impl Sync for MemOut {}

impl MemOut {
    /// A bounds-checked view of part of the buffer.
    ///
    /// # Safety
    /// No other thread may access `off..off + len` while the view lives.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn range(&self, off: usize, len: usize) -> &mut [u8] {
        assert!(off + len <= self.len, "selection outside the user buffer");
        // SAFETY: in bounds; exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(off), len) }
    }

    pub(super) fn write(&self, off: usize, bytes: &[u8]) {
        assert!(off + bytes.len() <= self.len, "selection outside the user buffer");
        // SAFETY: in bounds (checked) and disjoint from other threads' writes (see above).
        crate::bytes::copy(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(off), bytes.len()) }, bytes)
    }
}

thread_local! {
    /// Each worker's buffer for chunks read whole and copied out in rows, or joined from short
    /// rows before they are stored. Kept across calls:
    /// rayon calls a `map_init` initialiser per split job, so a buffer made there was often
    /// new, and each new one cost page faults and zeroing.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `work` with this thread's scratch buffer, or a new one when the buffer is in use further up
/// this thread's stack: an aggregated variable's store reads its fragments, which may be our
/// own datasets, inside a read of the aggregated dataset.
pub(super) fn with_scratch<R>(work: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut buf) => work(&mut buf),
        Err(_) => work(&mut Vec::new()),
    })
}

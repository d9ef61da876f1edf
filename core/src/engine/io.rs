//! Moving chunks between storage and memory: direct reads of uncompressed spans, the parallel
//! scatter into the caller's buffer (`MemOut`), and batched chunk writes.

use super::chunk::{ChunkBuf, Layout};
use super::convert::{load, store};
use super::mem::MemType;
use super::plan::{ChunkPlan, Run, contiguous_span};
use crate::error::{Error, Kind, Result};
use crate::model::StorageKind;
use crate::nc::types::NcType;
use crate::nc::values::convert_scalar;
use crate::zmap::{ByteRange, Key, Zmap};
use rayon::prelude::*;

/// Reads an uncompressed chunk's selected part without the cache: a chunk whose elements
/// land contiguously in memory is read straight into the user's buffer; a chunk of which a
/// small part is wanted is read by byte ranges, anything else whole into a scratch buffer.
/// Uncompressed chunks cost nothing to decode, so they are not cached. Absent chunks read
/// as fill.
pub(super) fn read_direct(store: &dyn Zmap, layout: &Layout, p: &ChunkPlan, out: &MemOut, scratch: &mut Vec<u8>) -> Result<()> {
    let fs = layout.item;
    let fill: Vec<u8> = layout.fill.as_ref().map(|f| f.to_ne_bytes()).unwrap_or_else(|| vec![0u8; fs]);
    let key = layout.chunk_key(&p.idx)?;
    let total: usize = p.runs.iter().map(|r| r.n).sum();
    let write_fill = |r: &Run| {
        for j in 0..r.n {
            out.write(r.mem(j) * fs, &fill);
        }
    };
    if let Some((moff, n)) = contiguous_span(layout, p) {
        // SAFETY: this chunk's memory range is written by this task only (MemOut).
        let dst = unsafe { out.range(moff * fs, n * fs) };
        if !store.read_into(&key, dst)? {
            p.runs.iter().for_each(write_fill);
        }
        return Ok(());
    }
    if tiles_chunk(layout, p) {
        // The whole chunk, each row contiguous in the caller's memory: read straight into
        // those rows (one vectored read), no scratch copy.
        let mut parts: Vec<&mut [u8]> = p
            .runs
            .iter()
            // SAFETY: the runs of one chunk hold distinct elements with distinct memory slots,
            // and this chunk's slots belong to this task (MemOut).
            .map(|r| unsafe { out.range(r.moff * fs, r.n * fs) })
            .collect();
        let found = store.read_scatter(&key, &mut parts)?;
        drop(parts);
        if !found {
            p.runs.iter().for_each(write_fill);
        }
        return Ok(());
    }
    if total * 4 > layout.nelems {
        // Most of the chunk is wanted: read it whole into this thread's scratch buffer.
        scratch.resize(layout.nelems * fs, 0);
        if !store.read_into(&key, scratch)? {
            p.runs.iter().for_each(write_fill);
            return Ok(());
        }
        copy_runs(p, fs, scratch, out);
        return Ok(());
    }
    // A small part is wanted: byte ranges.
    if !read_ranges(store, &key, layout, p, out)? {
        p.runs.iter().for_each(write_fill);
    }
    Ok(())
}

/// Copies the plan's runs out of a whole chunk's bytes into the caller's memory.
fn copy_runs(p: &ChunkPlan, fs: usize, chunk: &[u8], out: &MemOut) {
    for r in &p.runs {
        if r.cstep == 1 && r.mstep == 1 {
            out.write(r.moff * fs, &chunk[r.coff * fs..(r.coff + r.n) * fs]);
        } else {
            for j in 0..r.n {
                let c = (r.coff + j * r.cstep) * fs;
                out.write(r.mem(j) * fs, &chunk[c..c + fs]);
            }
        }
    }
}

/// Reads the plan's runs of an uncompressed chunk by byte ranges (one per contiguous run, one
/// per element of a strided one) into the caller's memory; `false`: the chunk is absent.
fn read_ranges(store: &dyn Zmap, key: &Key, layout: &Layout, p: &ChunkPlan, out: &MemOut) -> Result<bool> {
    let fs = layout.item;
    let at = |offset: usize, len: usize| ByteRange::At { offset: offset as u64, len };
    let mut ranges = Vec::new();
    for r in &p.runs {
        if r.cstep == 1 {
            ranges.push(at(r.coff * fs, r.n * fs));
        } else {
            ranges.extend((0..r.n).map(|j| at((r.coff + j * r.cstep) * fs, fs)));
        }
    }
    let Some(got) = store.get_ranges(key, &ranges, Some((layout.nelems * fs) as u64))?.map(|r| r.parts) else {
        return Ok(false);
    };
    let mut pieces = got.into_iter();
    for r in &p.runs {
        if r.cstep == 1 {
            let piece = pieces.next().unwrap_or_default();
            if r.mstep == 1 {
                out.write(r.moff * fs, &piece);
            } else {
                for j in 0..r.n {
                    out.write(r.mem(j) * fs, &piece[j * fs..(j + 1) * fs]);
                }
            }
        } else {
            for j in 0..r.n {
                out.write(r.mem(j) * fs, &pieces.next().unwrap_or_default());
            }
        }
    }
    Ok(true)
}

/// Do the chunk's runs cover all of it in storage order, each contiguous in chunk and memory?
/// Then the chunk's bytes are the runs' memory, one after another.
pub(super) fn tiles_chunk(layout: &Layout, p: &ChunkPlan) -> bool {
    let mut next = 0;
    p.runs.iter().map(|r| r.n).sum::<usize>() == layout.nelems
        && p.runs.iter().all(|r| {
            let fits = r.coff == next && (r.cstep == 1 || r.n == 1) && (r.mstep == 1 || r.n == 1);
            next += r.n;
            fits
        })
}

/// `len` bytes of the caller's buffer from `off`; a selection reaching past it is refused.
pub(super) fn slice_of(buf: &[u8], off: usize, len: usize) -> Result<&[u8]> {
    buf.get(off..off + len).ok_or_else(|| crate::error::Error::new(crate::error::Kind::Internal, "selection outside the user buffer"))
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

/// `copy_run` towards memory through a shared `MemOut`.
pub(super) fn copy_out(run: &Run, chunk: &[u8], file: NcType, out: &MemOut, mt: MemType) -> bool {
    let fs = file.size();
    let ms = mt.size();
    let mem_t = match mt {
        MemType::Text => NcType::Char,
        MemType::Num(t) => t,
    };
    let last = run.mem_end() * ms;
    assert!(last <= out.len, "selection outside the user buffer");
    let write = |m: usize, bytes: &[u8]| {
        // SAFETY: in bounds (checked above) and disjoint from other threads' writes (MemOut).
        crate::bytes::copy(unsafe { std::slice::from_raw_parts_mut(out.ptr.add(m), bytes.len()) }, bytes)
    };
    if mem_t == file {
        if run.cstep == 1 && run.mstep == 1 {
            write(run.moff * ms, &chunk[run.coff * fs..(run.coff + run.n) * fs]);
        } else {
            for j in 0..run.n {
                let c = (run.coff + j * run.cstep) * fs;
                write(run.mem(j) * ms, &chunk[c..c + fs]);
            }
        }
        return false;
    }
    let mut range = false;
    let mut tmp = [0u8; 8];
    for j in 0..run.n {
        let (v, r) = convert_scalar(load(chunk, run.coff + j * run.cstep, file), mem_t);
        store(&mut tmp, 0, mem_t, v);
        write(run.mem(j) * ms, &tmp[..ms]);
        range |= r;
    }
    range
}

/// Encodes chunks in parallel and stores them.
/// A dirty chunk on its way to storage, with its background encoding if one was started.
pub(super) type DirtyChunk<'a> = (&'a Vec<u64>, &'a ChunkBuf, Option<&'a Pending>);

pub(super) fn encoded<'b>(layout: &Layout, buf: &'b ChunkBuf, pending: Option<&Pending>) -> Result<std::borrow::Cow<'b, [u8]>> {
    if layout.sharded && layout.is_fill(buf) {
        // No bytes: the shard index marks the inner chunk empty (read back as fill), and a
        // shard left with no chunks is not stored at all, as zarr-python does.
        return Ok(std::borrow::Cow::Borrowed(&[]));
    }
    match pending.and_then(|p| p.take(layout)) {
        Some(bytes) => bytes.map(std::borrow::Cow::Owned),
        None => layout.encode(buf),
    }
}

pub(super) fn write_chunks(store: &dyn Zmap, layout: &Layout, chunks: &[DirtyChunk<'_>]) -> Result<()> {
    if store.caps().concurrent_puts && chunks.len() > 1 {
        // Each task encodes its chunk and stores it: compression on one core overlaps the
        // writes of the other, with no barrier between encoding and storing.
        let results: Vec<Result<()>> = crate::parallel::run(|| {
            chunks.par_iter().map(|(k, b, p)| store.put(&layout.chunk_key(k)?, &encoded(layout, b, *p)?)).collect()
        });
        return results.into_iter().collect();
    }
    // Encode in parallel batches (bounded memory), then hand each batch to the store at once
    // (S3 sends it concurrently).
    for batch in chunks.chunks(store.caps().batch_size) {
        if layout.filters.is_empty() && !layout.big_endian && layout.storage != StorageKind::Half && !store.caps().latency_bound {
            for (k, b, _) in batch {
                store.put(&layout.chunk_key(k)?, &layout.encode(b)?)?;
            }
            continue;
        }
        let all: Vec<Result<(Key, Vec<u8>)>> = if batch.len() > 1 {
            crate::parallel::run(|| {
                batch.par_iter().map(|(k, b, p)| Ok((layout.chunk_key(k)?, encoded(layout, b, *p)?.into_owned()))).collect()
            })
        } else {
            batch.iter().map(|(k, b, p)| Ok((layout.chunk_key(k)?, encoded(layout, b, *p)?.into_owned()))).collect()
        };
        let items = all.into_iter().collect::<Result<Vec<_>>>()?;
        store.put_chunks(items)?;
    }
    Ok(())
}

/// The result of an encoding running on the thread pool, and what it was encoded with.
pub(super) struct Pending {
    pub(super) result: std::sync::Mutex<std::sync::mpsc::Receiver<Result<Vec<u8>>>>,
    pub(super) filters: Vec<crate::codec::Filter>,
    pub(super) big_endian: bool,
}

impl Pending {
    /// The encoded bytes, if they were made with this layout's codecs.
    pub(super) fn take(&self, layout: &Layout) -> Option<Result<Vec<u8>>> {
        if self.filters != layout.filters || self.big_endian != layout.big_endian {
            return None;
        }
        self.result.lock().ok()?.recv().ok()
    }
}

/// Background encodings in flight, bounded so snapshots cannot pile up in memory.
pub(super) static ENCODES_IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub(super) const MAX_ENCODES_IN_FLIGHT: usize = 16;

/// Starts encoding a completely written chunk on the pool, so compression overlaps the
/// caller's next steps instead of all waiting for the flush.
pub(super) fn encode_behind(layout: &Layout, buf: &ChunkBuf) -> Option<Pending> {
    use std::sync::atomic::Ordering;
    let ChunkBuf::Fixed(bytes) = buf else { return None };
    if layout.filters.is_empty() || ENCODES_IN_FLIGHT.load(Ordering::Relaxed) >= MAX_ENCODES_IN_FLIGHT {
        return None;
    }
    ENCODES_IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = std::sync::mpsc::channel();
    let (snapshot, layout_copy) = (ChunkBuf::Fixed(bytes.clone()), layout.clone());
    crate::parallel::spawn(move || {
        let encoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| layout_copy.encode_owned(&snapshot)))
            .unwrap_or_else(|_| Err(Error::new(Kind::Internal, "encoder panicked")));
        drop(snapshot);
        ENCODES_IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
        let _ = tx.send(encoded);
    });
    Some(Pending { result: std::sync::Mutex::new(rx), filters: layout.filters.clone(), big_endian: layout.big_endian })
}

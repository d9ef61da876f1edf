//! Dirty chunks to storage: each encoded (or taken from the encoding started when a write
//! covered it whole, `encode_behind`) and stored, in parallel batches the store's caps size.

use super::chunk::{ChunkBuf, Layout};
use crate::error::{Error, Kind, Result};
use crate::model::StorageKind;
use crate::zmap::{Key, Zmap};
use rayon::prelude::*;

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

/// Encodes chunks in parallel and stores them.
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

//! The scanners' view of an object: `hdf5_reader::Storage` over ranged reads. The first bytes
//! (where netCDF-3 headers and, for files netcdf-c writes, most HDF5 metadata are) come in one
//! read; any other read asks for the whole aligned block around it, so the small reads a
//! scanner makes of one B-tree node or heap cost one request, not one each.

use crate::zmap::range::RangeSource;
use hdf5_reader::storage::{Storage, StorageBuffer};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes read first, from offset 0.
pub(super) const HEAD: u64 = 4 << 20;
/// Bytes read around any later miss.
const BLOCK: u64 = 256 << 10;

pub(super) struct Prefetched {
    source: Arc<dyn RangeSource>,
    size: u64,
    /// Spans read so far, by start offset.
    spans: Mutex<BTreeMap<u64, Arc<[u8]>>>,
    /// Reads of the source, and bytes they moved (the trace line at the end of a scan).
    pub(super) requests: AtomicU64,
    pub(super) bytes: AtomicU64,
}

impl Prefetched {
    /// Over `source`, with `head` (its first bytes, when a probe already read them).
    pub(super) fn new(source: Arc<dyn RangeSource>, head: Option<Vec<u8>>) -> Prefetched {
        let size = source.size();
        let mut spans = BTreeMap::new();
        if let Some(head) = head.filter(|h| !h.is_empty()) {
            spans.insert(0, Arc::from(head));
        }
        Prefetched { source, size, spans: Mutex::new(spans), requests: AtomicU64::new(0), bytes: AtomicU64::new(0) }
    }

    fn spans(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<[u8]>>> {
        self.spans.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The span already read that holds `offset..end`, with the start of that span.
    fn cached(&self, offset: u64, end: u64) -> Option<(u64, Arc<[u8]>)> {
        let spans = self.spans();
        let (&start, bytes) = spans.range(..=offset).next_back()?;
        (start + bytes.len() as u64 >= end).then(|| (start, bytes.clone()))
    }

    fn fetch(&self, start: u64, end: u64) -> crate::error::Result<Arc<[u8]>> {
        let got = self.source.read(start, end - start)?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(got.len() as u64, Ordering::Relaxed);
        let got: Arc<[u8]> = Arc::from(got);
        self.spans().insert(start, got.clone());
        Ok(got)
    }
}

impl Storage for Prefetched {
    fn len(&self) -> u64 {
        self.size
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        let end = offset.checked_add(len as u64).filter(|&e| e <= self.size).ok_or(hdf5_reader::error::Error::UnexpectedEof {
            offset,
            needed: len as u64,
            available: self.size.saturating_sub(offset),
        })?;
        if let Some((start, bytes)) = self.cached(offset, end) {
            return StorageBuffer::from_shared(bytes, (offset - start) as usize, len);
        }
        let (start, stop) = if end <= HEAD.min(self.size) && self.spans().is_empty() {
            (0, HEAD.min(self.size))
        } else {
            let start = offset / BLOCK * BLOCK;
            (start, end.div_ceil(BLOCK).saturating_mul(BLOCK).min(self.size).max(end))
        };
        let bytes = self.fetch(start, stop).map_err(|e| hdf5_reader::error::Error::Io(std::io::Error::other(e.to_string())))?;
        StorageBuffer::from_shared(bytes, (offset - start) as usize, len)
    }
}

/// Chunk reads: from the bytes the scan read when they hold the chunk (a small file is read
/// once), else from the object (not kept: the engine's chunk cache holds decoded chunks).
impl RangeSource for Prefetched {
    fn size(&self) -> u64 {
        self.size
    }

    fn read(&self, offset: u64, len: u64) -> crate::error::Result<Vec<u8>> {
        let end = offset.saturating_add(len);
        if let Some((start, bytes)) = self.cached(offset, end) {
            let at = (offset - start) as usize;
            return Ok(bytes[at..at + len as usize].to_vec());
        }
        self.source.read(offset, len)
    }

    fn describe(&self) -> String {
        self.source.describe()
    }

    fn url(&self) -> Option<String> {
        self.source.url()
    }
}

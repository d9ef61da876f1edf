//! Where copied values came from: what lets `nccopy in.nc refs.json#mode=kerchunk` write
//! references instead of bytes. A program copies values (`nc_get_vara` into a buffer, then
//! `nc_put_vara` of that buffer); the values cross our API, their provenance does not. So while
//! a reference set is being written in this process, a read of whole chunks of a variable whose
//! chunks are addressable (a lazily opened netCDF file, a reference set) is remembered by the
//! hash of the values it returned, with where those chunks are and how they are encoded; a put
//! of a buffer with the same hash, length, shape and type into the set's variable at a chunk
//! boundary then stores those chunks as references (`dataset/references.rs`).
//!
//! The table is bounded (oldest first out) and empty, at no cost to reads, while no reference
//! set is being written. A 128-bit hash of equal-length buffers of equal shape: a false match
//! would need a collision of XXH3-128 between two buffers one program read and wrote.

use super::mem::MemType;
use crate::codec::Filter;
use crate::nc::types::NcType;
use crate::zmap::Located;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// How a variable's stored chunks are encoded: what a variable referencing them must declare.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Encoding {
    pub chunk_shape: Vec<u64>,
    pub nctype: NcType,
    pub big_endian: bool,
    /// As the variable declares them (before `codec::localize`).
    pub filters: Vec<Filter>,
    /// One fill element in native byte order (`None`: no fill); a missing chunk reads as it.
    pub fill: Option<Vec<u8>>,
}

/// Where the values one read returned are stored.
#[derive(Debug)]
pub(crate) struct Origin {
    /// The read's shape and memory type.
    pub count: Vec<u64>,
    pub mem: MemType,
    pub encoding: Encoding,
    /// Every chunk the read covered, by index relative to its first chunk, and where it is
    /// (`None`: nowhere nameable, e.g. an edge chunk cut from unchunked data: copied).
    pub chunks: Vec<(Vec<u64>, Option<Located>)>,
    /// Values stored unchunked and unfiltered, the read's rows one run of bytes: any chunk of
    /// whole rows inside it can be named, whatever the chunks it was read by.
    pub run: Option<Run>,
}

/// Where a read's values lie in one run of bytes (C order, whole rows).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Run {
    pub url: String,
    /// Of the read's first value.
    pub offset: u64,
}

/// The most reads remembered, and the most chunk locations across them.
const MOST_ORIGINS: usize = 4096;
const MOST_CHUNKS: usize = 1 << 20;

#[derive(Default)]
struct Table {
    by_hash: HashMap<(u128, usize), Arc<Origin>>,
    order: VecDeque<(u128, usize)>,
    chunks: usize,
}

static WRITERS: AtomicUsize = AtomicUsize::new(0);
static TABLE: Mutex<Option<Table>> = Mutex::new(None);

/// Held by a reference set being written: reads are remembered while one exists.
pub(crate) struct WriterTicket(());

impl WriterTicket {
    pub(crate) fn new() -> WriterTicket {
        WRITERS.fetch_add(1, Ordering::SeqCst);
        WriterTicket(())
    }
}

impl Drop for WriterTicket {
    fn drop(&mut self) {
        if WRITERS.fetch_sub(1, Ordering::SeqCst) == 1
            && let Ok(mut t) = TABLE.lock()
        {
            *t = None;
        }
    }
}

/// Is a reference set being written (reads worth remembering)?
pub fn wanted() -> bool {
    WRITERS.load(Ordering::Relaxed) > 0
}

fn hash(bytes: &[u8]) -> (u128, usize) {
    (twox_hash::XxHash3_128::oneshot(bytes), bytes.len())
}

/// Remembers that a read returned `values` from `origin`.
pub(crate) fn note(values: &[u8], origin: Origin) {
    if !wanted() || origin.chunks.len() > MOST_CHUNKS {
        return;
    }
    let key = hash(values);
    let Ok(mut guard) = TABLE.lock() else { return };
    let table = guard.get_or_insert_with(Table::default);
    table.chunks += origin.chunks.len();
    if let Some(old) = table.by_hash.insert(key, Arc::new(origin)) {
        table.chunks -= old.chunks.len();
    } else {
        table.order.push_back(key);
    }
    while table.by_hash.len() > MOST_ORIGINS || table.chunks > MOST_CHUNKS {
        let Some(oldest) = table.order.pop_front() else { break };
        if let Some(gone) = table.by_hash.remove(&oldest) {
            table.chunks -= gone.chunks.len();
        }
    }
}

/// Reads the region a put names from files another library read for this program (a real
/// netcdf-c behind the preload library reads local files; their origins are not seen):
/// `lazy::copies` reads it lazily, which notes the origin if the region is whole chunks.
/// Arguments: the variable's key (`grp/var`), the selection, the memory type, the put's values.
pub(crate) type Reread = fn(&str, &super::Selection, MemType, &[u8]);

static REREAD: std::sync::OnceLock<Reread> = std::sync::OnceLock::new();

/// Installs the re-reader (once; later calls change nothing).
pub(crate) fn set_reread(reread: Reread) {
    let _ = REREAD.set(reread);
}

/// The re-reader, if one is installed.
pub(crate) fn reread() -> Option<Reread> {
    REREAD.get().copied()
}

/// Where the values of a put came from, if a remembered read returned exactly them.
pub(crate) fn find(values: &[u8], count: &[u64], mem: MemType) -> Option<Arc<Origin>> {
    if !wanted() {
        return None;
    }
    let key = hash(values);
    let guard = TABLE.lock().ok()?;
    let origin = guard.as_ref()?.by_hash.get(&key)?;
    (origin.count == count && origin.mem == mem).then(|| origin.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(count: u64) -> Origin {
        let encoding = Encoding { chunk_shape: vec![2], nctype: NcType::Int, big_endian: false, filters: vec![], fill: None };
        Origin { count: vec![count], mem: MemType::Num(NcType::Int), encoding, chunks: vec![(vec![0], Some(Located::Absent))], run: None }
    }

    #[test]
    fn remembered_only_while_a_writer_exists() {
        let values = [7u8; 8];
        note(&values, origin(2));
        let ticket = WriterTicket::new();
        assert!(find(&values, &[2], MemType::Num(NcType::Int)).is_none());
        note(&values, origin(2));
        assert!(find(&values, &[2], MemType::Num(NcType::Int)).is_some());
        // Same bytes, another shape or type: not the same values.
        assert!(find(&values, &[1], MemType::Num(NcType::Int)).is_none());
        assert!(find(&values, &[2], MemType::Num(NcType::Float)).is_none());
        drop(ticket);
        assert!(find(&values, &[2], MemType::Num(NcType::Int)).is_none());
    }
}

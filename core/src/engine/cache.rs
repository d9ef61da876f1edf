//! The per-dataset cache of decoded chunks: an LRU per variable, storing and evicting only
//! (a dirty chunk evicted or flushed goes to `flush::write_chunks`). The read and write paths
//! that fill it are `read.rs` and `write.rs`.

use super::chunk::{ChunkBuf, Layout};
use super::flush::{DirtyChunk, Pending, write_chunks};
use super::pieces::Piece;
use crate::error::{Error, Kind, Result};
use crate::model::VarKey;
use crate::zmap::Zmap;
use std::collections::{BTreeSet, HashMap};

pub(super) struct Entry {
    pub(super) buf: ChunkBuf,
    pub(super) dirty: bool,
    pub(super) last_use: u64,
    /// A background encoding of `buf` started when a write covered the whole chunk; used at
    /// flush if the chunk was not touched again (any later write drops it).
    pub(super) pending: Option<Pending>,
    /// Parallel datasets: the elements this rank wrote since the last collective flush.
    pub(super) written: Option<super::pieces::Mask>,
}

#[derive(Default)]
pub(super) struct VarChunks {
    pub(super) entries: HashMap<Vec<u64>, Entry>,
    pub(super) bytes: usize,
    /// `(last_use, chunk)` of every entry, least recently used first: eviction takes from
    /// the front instead of sorting all entries on each trim.
    lru: BTreeSet<(u64, Vec<u64>)>,
}

impl VarChunks {
    pub(super) fn insert(&mut self, idx: &[u64], buf: ChunkBuf, clock: u64) {
        self.bytes += buf.bytes();
        if let Some(old) = self.entries.insert(idx.to_vec(), Entry { buf, dirty: false, last_use: clock, pending: None, written: None }) {
            self.bytes -= old.buf.bytes();
            self.lru.remove(&(old.last_use, idx.to_vec()));
        }
        self.lru.insert((clock, idx.to_vec()));
    }

    /// The cached chunk, marked used at `clock`.
    pub(super) fn touch(&mut self, idx: &[u64], clock: u64) -> Result<&mut Entry> {
        let e = self.entries.get_mut(idx).ok_or_else(|| Error::new(Kind::Internal, "chunk not cached"))?;
        if e.last_use != clock {
            self.lru.remove(&(e.last_use, idx.to_vec()));
            self.lru.insert((clock, idx.to_vec()));
            e.last_use = clock;
        }
        Ok(e)
    }

    pub(super) fn remove(&mut self, idx: &[u64]) -> Option<Entry> {
        let e = self.entries.remove(idx)?;
        self.bytes -= e.buf.bytes();
        self.lru.remove(&(e.last_use, idx.to_vec()));
        Some(e)
    }
}

/// Decoded chunks of every variable of one dataset.
#[derive(Default)]
pub(crate) struct Cache {
    pub(super) vars: HashMap<VarKey, VarChunks>,
    pub(super) clock: u64,
    /// Record which elements each write touched (parallel datasets, `pieces`).
    pub(super) tracking: bool,
    /// Buffers of chunks evicted after writing, reused for chunks a write covers whole: no
    /// page faults and zeroing for a fresh buffer, no fill for bytes about to be overwritten.
    spare: Vec<Vec<u8>>,
}

/// How many evicted chunk buffers are kept for reuse.
const SPARE_BUFFERS: usize = 8;

impl Cache {
    pub(super) fn var(&mut self, key: VarKey) -> &mut VarChunks {
        self.vars.entry(key).or_default()
    }

    /// An evicted chunk buffer of `len` bytes for a chunk about to be overwritten whole, if
    /// one is kept.
    pub(super) fn take_spare(&mut self, len: usize) -> Option<Vec<u8>> {
        let i = self.spare.iter().position(|b| b.len() == len)?;
        Some(self.spare.swap_remove(i))
    }

    /// Keeps a variable's cache within `budget` bytes, writing dirty chunks it drops.
    pub(crate) fn trim(&mut self, store: &dyn Zmap, var: VarKey, layout: &Layout, budget: usize) -> Result<()> {
        let vc = self.vars.entry(var).or_default();
        if vc.bytes <= budget {
            return Ok(());
        }
        let mut victims = Vec::new();
        let mut bytes = vc.bytes;
        for (_, k) in &vc.lru {
            if bytes <= budget {
                break;
            }
            if let Some(e) = vc.entries.get(k) {
                if e.dirty && e.written.as_ref().is_some_and(|m| layout.sharded || !m.full()) {
                    // Part of a chunk (or shard) other ranks may also write: it waits, cached,
                    // for the next collective flush (`pieces`).
                    continue;
                }
                bytes -= e.buf.bytes();
                victims.push(k.clone());
            }
        }
        let dirty: Vec<DirtyChunk<'_>> =
            victims.iter().filter_map(|k| vc.entries.get(k).filter(|e| e.dirty).map(|e| (k, &e.buf, e.pending.as_ref()))).collect();
        write_chunks(store, layout, &dirty)?;
        for k in victims {
            if let Some(Entry { buf: ChunkBuf::Fixed(b), .. }) = vc.remove(&k)
                && self.spare.len() < SPARE_BUFFERS
            {
                self.spare.push(b);
            }
        }
        Ok(())
    }

    /// Writes every dirty chunk of one variable (they stay cached, now clean).
    pub(crate) fn flush_var(&mut self, store: &dyn Zmap, var: VarKey, layout: &Layout) -> Result<()> {
        let Some(vc) = self.vars.get_mut(&var) else { return Ok(()) };
        let dirty: Vec<DirtyChunk<'_>> = vc.entries.iter().filter(|(_, e)| e.dirty).map(|(k, e)| (k, &e.buf, e.pending.as_ref())).collect();
        if dirty.is_empty() {
            return Ok(());
        }
        write_chunks(store, layout, &dirty)?;
        for e in vc.entries.values_mut() {
            e.dirty = false;
            e.pending = None;
            e.written = None;
        }
        Ok(())
    }

    pub(crate) fn dirty_vars(&self) -> Vec<VarKey> {
        self.vars.iter().filter(|(_, vc)| vc.entries.values().any(|e| e.dirty)).map(|(k, _)| *k).collect()
    }

    /// Drops one cached chunk unwritten (its key now names bytes stored elsewhere).
    pub(crate) fn drop_chunk(&mut self, var: VarKey, idx: &[u64]) {
        if let Some(vc) = self.vars.get_mut(&var) {
            vc.remove(idx);
        }
    }

    /// Does the cache hold any chunk of the variable?
    pub(crate) fn holds(&self, var: VarKey) -> bool {
        self.vars.get(&var).is_some_and(|vc| !vc.entries.is_empty())
    }

    /// Forgets a variable's chunks (its storage moved or its layout changed).
    pub(crate) fn forget(&mut self, var: VarKey) {
        self.vars.remove(&var);
    }
}

impl Cache {
    /// Parallel datasets: remember which elements each write touched, so partly written
    /// chunks can travel as pieces instead of being stored whole by every writer.
    pub(crate) fn track_writes(&mut self) {
        self.tracking = true;
    }

    /// Removes and returns this variable's dirty chunks that this rank wrote only in part
    /// (`all`: every dirty chunk, for chunks that share a storage object).
    pub(crate) fn take_pieces(&mut self, var: VarKey, all: bool) -> Vec<Piece> {
        let Some(vc) = self.vars.get_mut(&var) else { return Vec::new() };
        let partial: Vec<Vec<u64>> = vc
            .entries
            .iter()
            .filter(|(_, e)| e.dirty && e.written.as_ref().is_some_and(|m| all || !m.full()))
            .map(|(k, _)| k.clone())
            .collect();
        partial
            .into_iter()
            .filter_map(|idx| {
                let e = vc.remove(&idx)?;
                Some(Piece { var, mask: e.written.expect("filtered"), buf: e.buf, idx })
            })
            .collect()
    }

    /// Bytes held in partly written chunks (what waits for the next collective call).
    pub(crate) fn pending_bytes(&self) -> usize {
        self.vars
            .values()
            .flat_map(|vc| vc.entries.values())
            .filter(|e| e.dirty && e.written.as_ref().is_some_and(|m| !m.full()))
            .map(|e| e.buf.bytes())
            .sum()
    }

    /// Drops every cached chunk (all clean after a collective flush): other ranks' writes
    /// become visible to this rank's next reads.
    pub(crate) fn clear(&mut self) {
        self.vars.clear();
    }
}

//! The per-dataset write-back cache of decoded chunks: an LRU per variable, dirty chunks
//! encoded ahead of eviction, and the get/put/flush entry points the dataset calls.

use super::chunk::{ChunkBuf, Layout};
use super::convert::copy_run;
use super::io::{DirtyChunk, MemOut, Pending, copy_out, encode_behind, read_direct, slice_of, tiles_chunk, write_chunks};
use super::mem::Mem;
use super::pieces::Piece;
use super::plan::{ChunkPlan, contiguous_span, plan};
use super::selection::Selection;
use crate::codec;
use crate::error::{Error, Kind, Result, err};
use crate::model::StorageKind;
use crate::zmap::{Key, Zmap};
use rayon::prelude::*;
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
fn with_scratch<R>(work: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut buf) => work(&mut buf),
        Err(_) => work(&mut Vec::new()),
    })
}

/// Rows at least this long (on average) are written straight from the caller's memory with one
/// vectored write per chunk; shorter ones are first joined in a scratch buffer.
const GATHER_MIN_ROW: usize = 4096;

#[derive(Default)]
pub(super) struct VarChunks {
    pub(super) entries: HashMap<Vec<u64>, Entry>,
    pub(super) bytes: usize,
    /// `(last_use, chunk)` of every entry, least recently used first: eviction takes from
    /// the front instead of sorting all entries on each trim.
    lru: BTreeSet<(u64, Vec<u64>)>,
}

impl VarChunks {
    fn insert(&mut self, idx: &[u64], buf: ChunkBuf, clock: u64) {
        self.bytes += buf.bytes();
        if let Some(old) = self.entries.insert(idx.to_vec(), Entry { buf, dirty: false, last_use: clock, pending: None, written: None }) {
            self.bytes -= old.buf.bytes();
            self.lru.remove(&(old.last_use, idx.to_vec()));
        }
        self.lru.insert((clock, idx.to_vec()));
    }

    /// The cached chunk, marked used at `clock`.
    fn touch(&mut self, idx: &[u64], clock: u64) -> Result<&mut Entry> {
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
    pub(super) vars: HashMap<(usize, usize), VarChunks>,
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
    pub(super) fn var(&mut self, key: (usize, usize)) -> &mut VarChunks {
        self.vars.entry(key).or_default()
    }

    /// Brings every chunk of `idxs` that is not cached into the cache: one batched fetch,
    /// parallel decode. `skip_read` chunks (fully overwritten) become fill chunks unread.
    pub(super) fn load(&mut self, store: &dyn Zmap, var: (usize, usize), layout: &Layout, idxs: &[(Vec<u64>, bool)]) -> Result<()> {
        let missing: Vec<&(Vec<u64>, bool)> = {
            let vc = self.var(var);
            idxs.iter().filter(|(i, _)| !vc.entries.contains_key(i)).collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let to_read: Vec<&Vec<u64>> = missing.iter().filter(|(_, skip)| !skip).map(|(i, _)| i).collect();
        let keys: Vec<Key> = to_read.iter().map(|i| layout.chunk_key(i)).collect::<Result<_>>()?;
        let fetched = if keys.is_empty() { Vec::new() } else { store.get_many_limited(&keys, layout.stored_limit())? };
        let decoded: Vec<Result<ChunkBuf>> = if fetched.len() > 1 {
            crate::parallel::run(|| fetched.into_par_iter().map(|b| layout.decode(b)).collect())
        } else {
            fetched.into_iter().map(|b| layout.decode(b)).collect()
        };
        self.clock += 1;
        let clock = self.clock;
        let vc = self.var(var);
        for (idx, buf) in to_read.into_iter().zip(decoded) {
            vc.insert(idx, buf?, clock);
        }
        let want = layout.nelems * layout.item;
        for (idx, _) in missing.iter().filter(|(_, skip)| *skip) {
            // Whole-chunk writes overwrite every byte: a recycled buffer needs no fill.
            let buf = match self.spare.iter().position(|b| b.len() == want) {
                Some(i) if !layout.is_text() => ChunkBuf::Fixed(self.spare.swap_remove(i)),
                _ => layout.fill_chunk(),
            };
            self.vars.entry(var).or_default().insert(idx, buf, clock);
        }
        Ok(())
    }

    /// Reads a selection into memory. Returns whether any element was out of range.
    pub(crate) fn get(
        &mut self,
        store: &dyn Zmap,
        var: (usize, usize),
        layout: &Layout,
        shape: &[u64],
        sel: &Selection,
        mem: Mem<'_>,
    ) -> Result<bool> {
        let mut plans = plan(layout, shape, sel);
        let mut mem = mem;
        if let Mem::Bytes(buf, mt) = &mut mem
            && (layout.decodes_into(*mt) || (layout.is_plain(*mt) && store.caps().latency_bound))
        {
            plans = self.get_direct(store, var, layout, plans, buf)?;
        }
        if let Mem::Bytes(buf, mt) = &mut mem
            && layout.is_plain(*mt)
            && !store.caps().latency_bound
        {
            plans = self.get_plain(store, var, layout, plans, buf)?;
        }
        let idxs: Vec<(Vec<u64>, bool)> = plans.iter().map(|p| (p.idx.clone(), false)).collect();
        self.load(store, var, layout, &idxs)?;
        self.clock += 1;
        let clock = self.clock;
        let vc = self.var(var);
        let mut range = false;
        match mem {
            Mem::Bytes(buf, mt) => {
                for p in &plans {
                    vc.touch(&p.idx, clock)?;
                }
                let mut jobs: Vec<(&ChunkPlan, &[u8])> = Vec::with_capacity(plans.len());
                for p in &plans {
                    match vc.entries.get(&p.idx).map(|e| &e.buf) {
                        Some(ChunkBuf::Fixed(chunk)) => jobs.push((p, chunk)),
                        _ => return err(Kind::Internal, "chunk missing or of the wrong kind"),
                    }
                }
                let out = MemOut { ptr: buf.as_mut_ptr(), len: buf.len() };
                let copy = |(p, chunk): &(&ChunkPlan, &[u8])| {
                    p.runs.iter().fold(false, |r, run| r | copy_out(run, chunk, layout.nctype, &out, mt))
                };
                range = if jobs.len() > 1 && sel.nelems() >= 1 << 16 {
                    crate::parallel::run(|| jobs.par_iter().map(copy).reduce(|| false, |a, b| a | b))
                } else {
                    jobs.iter().map(copy).fold(false, |a, b| a | b)
                };
            }
            Mem::Strings(slots) => {
                for p in &plans {
                    let e = vc.touch(&p.idx, clock)?;
                    let ChunkBuf::Strings(items) = &e.buf else { return err(Kind::Internal, "number chunk for strings") };
                    for r in &p.runs {
                        for j in 0..r.n {
                            slots[r.mem(j)] = Some(items[r.coff + j * r.cstep].clone());
                        }
                    }
                }
            }
        }
        Ok(range)
    }

    /// Whole chunks laid out contiguously in memory that nobody has cached: decoded (or,
    /// unfiltered on a store with latency, read) straight into the caller's buffer (a full read
    /// wants each chunk once). Returns the plans left for the cache.
    fn get_direct(
        &mut self,
        store: &dyn Zmap,
        var: (usize, usize),
        layout: &Layout,
        plans: Vec<ChunkPlan>,
        buf: &mut [u8],
    ) -> Result<Vec<ChunkPlan>> {
        let cached = &self.var(var).entries;
        let (direct, rest): (Vec<ChunkPlan>, Vec<ChunkPlan>) =
            plans.into_iter().partition(|p| !cached.contains_key(&p.idx) && contiguous_span(layout, p).is_some());
        let keys: Vec<Key> = direct.iter().map(|p| layout.chunk_key(&p.idx)).collect::<Result<_>>()?;
        let out = MemOut { ptr: buf.as_mut_ptr(), len: buf.len() };
        let batch = store.caps().batch_size;
        let fs = layout.item;
        let fill = |dst: &mut [u8]| match &layout.fill {
            Some(f) => dst.chunks_exact_mut(fs).for_each(|e| e.copy_from_slice(&f.to_ne_bytes())),
            None => dst.fill(0),
        };
        if layout.filters.is_empty() {
            // Stored bytes are the values: each chunk read straight into its place.
            for (batch_plans, batch_keys) in direct.chunks(batch).zip(keys.chunks(batch)) {
                let spans: Vec<(usize, usize)> = batch_plans.iter().map(|p| contiguous_span(layout, p).expect("checked")).collect();
                // SAFETY: the chunks of one get cover disjoint memory ranges (MemOut).
                let outs: Vec<&mut [u8]> = spans.iter().map(|&(moff, n)| unsafe { out.range(moff * fs, n * fs) }).collect();
                let found = store.read_many_into(batch_keys, outs)?;
                for (&(moff, n), _) in spans.iter().zip(found).filter(|(_, f)| !f) {
                    // SAFETY: as above; the read left this range alone.
                    fill(unsafe { out.range(moff * fs, n * fs) });
                }
            }
        } else {
            for (batch_plans, batch_keys) in direct.chunks(batch).zip(keys.chunks(batch)) {
                let fetched = store.get_many_limited(batch_keys, layout.stored_limit())?;
                let results: Vec<Result<()>> = crate::parallel::run(|| {
                    batch_plans
                        .par_iter()
                        .zip(fetched)
                        .map(|(p, stored)| {
                            let (moff, n) = contiguous_span(layout, p).expect("checked");
                            // SAFETY: this chunk's memory range belongs to this task (MemOut).
                            let dst = unsafe { out.range(moff * fs, n * fs) };
                            match stored {
                                Some(bytes) => {
                                    if !codec::decode_into(&layout.filters, &bytes, dst, fs)? {
                                        crate::bytes::copy(dst, &codec::decode(&layout.filters, bytes, fs, dst.len())?);
                                    }
                                }
                                None => fill(dst),
                            }
                            Ok(())
                        })
                        .collect()
                });
                results.into_iter().collect::<Result<()>>()?;
            }
        }
        Ok(rest)
    }

    /// Unfiltered chunks on a local store, read straight into the caller's buffer, each on
    /// the worker pool. Returns the plans left for the cache (chunks already cached).
    fn get_plain(
        &mut self,
        store: &dyn Zmap,
        var: (usize, usize),
        layout: &Layout,
        plans: Vec<ChunkPlan>,
        buf: &mut [u8],
    ) -> Result<Vec<ChunkPlan>> {
        let cached = &self.var(var).entries;
        let (direct, rest): (Vec<ChunkPlan>, Vec<ChunkPlan>) = plans.into_iter().partition(|p| !cached.contains_key(&p.idx));
        let out = MemOut { ptr: buf.as_mut_ptr(), len: buf.len() };
        let results: Vec<Result<()>> = crate::parallel::run(|| {
            direct.par_iter().map(|p| with_scratch(|scratch| read_direct(store, layout, p, &out, scratch))).collect()
        });
        results.into_iter().collect::<Result<()>>()?;
        Ok(rest)
    }

    /// Writes a selection from memory into cached chunks (marked dirty), keeping the
    /// variable's cache within `budget` bytes: a write larger than the cache goes through it in
    /// batches of chunks, each trimmed (written out) before the next is loaded, so memory stays
    /// bounded and evicted buffers are reused.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put(
        &mut self,
        store: &dyn Zmap,
        var: (usize, usize),
        layout: &Layout,
        shape: &[u64],
        sel: &Selection,
        mut mem: Mem<'_>,
        budget: usize,
    ) -> Result<bool> {
        let mut plans = plan(layout, shape, sel);
        if let Mem::Bytes(buf, mt) = &mem
            && layout.is_plain(*mt)
            && layout.quantize.is_none()
            && !layout.sharded
            && layout.storage != StorageKind::Bool
        {
            // Whole chunks whose rows lie contiguously in the caller's memory go straight to
            // storage, gathered from those rows (one vectored write each): no copy, no chunk
            // buffer, no cache entry (a cached copy would now be stale, so it is dropped).
            // (A chunk contiguous as a whole is the one-row case.)
            let (direct, rest): (Vec<ChunkPlan>, Vec<ChunkPlan>) = plans.into_iter().partition(|p| tiles_chunk(layout, p));
            plans = rest;
            let fs = layout.item;
            let buf: &[u8] = buf;
            let vc = self.var(var);
            for p in &direct {
                vc.remove(&p.idx);
            }
            if store.caps().latency_bound {
                // A store with latency uploads behind the caller, so it needs bodies it owns:
                // one copy each, gathered from the rows batch by batch, and each batch handed
                // over as soon as it is copied (the next is copied while it goes up).
                let owned = |p: &ChunkPlan| -> Result<(Key, Vec<u8>)> {
                    let mut body = Vec::with_capacity(layout.nelems * fs);
                    for r in &p.runs {
                        body.extend_from_slice(slice_of(buf, r.moff * fs, r.n * fs)?);
                    }
                    Ok((layout.chunk_key(&p.idx)?, body))
                };
                for batch in direct.chunks(store.caps().batch_size) {
                    let items: Vec<Result<(Key, Vec<u8>)>> = crate::parallel::run(|| batch.par_iter().map(owned).collect());
                    store.put_chunks(items.into_iter().collect::<Result<_>>()?)?;
                }
            } else {
                let store_one = |p: &ChunkPlan| -> Result<()> {
                    let key = layout.chunk_key(&p.idx)?;
                    if let Some((moff, n)) = contiguous_span(layout, p) {
                        return store.put(&key, slice_of(buf, moff * fs, n * fs)?);
                    }
                    let parts: Vec<&[u8]> = p.runs.iter().map(|r| slice_of(buf, r.moff * fs, r.n * fs)).collect::<Result<_>>()?;
                    if layout.nelems * fs >= GATHER_MIN_ROW * parts.len() {
                        return store.put_parts(&key, &parts);
                    }
                    // Short rows cost the kernel more per byte than one copy into a reused buffer.
                    with_scratch(|joined| {
                        joined.clear();
                        parts.iter().for_each(|part| joined.extend_from_slice(part));
                        store.put(&key, joined)
                    })
                };
                let stored: Vec<Result<()>> = if store.caps().concurrent_puts && direct.len() > 1 {
                    crate::parallel::run(|| direct.par_iter().map(store_one).collect())
                } else {
                    direct.iter().map(store_one).collect()
                };
                stored.into_iter().collect::<Result<()>>()?;
            }
        }
        let mut range = false;
        let per_batch = (budget / (layout.nelems * layout.item).max(1)).max(1);
        for batch in plans.chunks(per_batch) {
            let idxs: Vec<(Vec<u64>, bool)> = batch.iter().map(|p| (p.idx.clone(), p.whole)).collect();
            self.load(store, var, layout, &idxs)?;
            self.clock += 1;
            let clock = self.clock;
            let tracking = self.tracking;
            let vc = self.var(var);
            for p in batch {
                let e = vc.touch(&p.idx, clock)?;
                e.dirty = true;
                e.pending = None;
                if tracking {
                    let mask = e.written.get_or_insert_with(|| super::pieces::Mask::new(layout.nelems));
                    for r in &p.runs {
                        (0..r.n).for_each(|j| mask.set(r.coff + j * r.cstep));
                    }
                }
                match (&mut e.buf, &mut mem) {
                    (ChunkBuf::Fixed(chunk), Mem::Bytes(buf, mt)) => {
                        for r in &p.runs {
                            range |= copy_run(r, chunk, layout.nctype, buf, *mt, false);
                            if layout.storage == StorageKind::Bool {
                                for j in 0..r.n {
                                    let at = r.coff + j * r.cstep;
                                    chunk[at] = (chunk[at] != 0) as u8;
                                }
                            }
                            if layout.storage == StorageKind::Half {
                                // Finite floats beyond half precision's range are stored as
                                // infinity: NC_ERANGE, as for any narrowing conversion.
                                range |= (0..r.n).any(|j| {
                                    let at = (r.coff + j * r.cstep) * 4;
                                    let f = f32::from_ne_bytes([chunk[at], chunk[at + 1], chunk[at + 2], chunk[at + 3]]);
                                    f.is_finite() && f.abs() > 65504.0
                                });
                            }
                            if let Some(q) = &layout.quantize {
                                // BitGroom alternates by the element's place in the caller's block.
                                q.apply(chunk, (0..r.n).map(|j| (r.coff + j * r.cstep, r.mem(j))));
                            }
                        }
                        if p.whole {
                            e.pending = encode_behind(layout, &e.buf);
                        }
                    }
                    (ChunkBuf::Strings(items), Mem::Strings(slots)) => {
                        for r in &p.runs {
                            for j in 0..r.n {
                                let v = slots[r.mem(j)].clone().flatten();
                                items[r.coff + j * r.cstep] = v.map(|s| layout.clip(s));
                            }
                        }
                    }
                    _ => return err(Kind::Internal, "memory kind does not match the chunk"),
                }
            }
            self.trim(store, var, layout, budget)?;
        }
        Ok(range)
    }

    /// Keeps a variable's cache within `budget` bytes, writing dirty chunks it drops.
    pub(crate) fn trim(&mut self, store: &dyn Zmap, var: (usize, usize), layout: &Layout, budget: usize) -> Result<()> {
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
    pub(crate) fn flush_var(&mut self, store: &dyn Zmap, var: (usize, usize), layout: &Layout) -> Result<()> {
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

    pub(crate) fn dirty_vars(&self) -> Vec<(usize, usize)> {
        self.vars.iter().filter(|(_, vc)| vc.entries.values().any(|e| e.dirty)).map(|(k, _)| *k).collect()
    }

    /// Drops one cached chunk unwritten (its key now names bytes stored elsewhere).
    pub(crate) fn drop_chunk(&mut self, var: (usize, usize), idx: &[u64]) {
        if let Some(vc) = self.vars.get_mut(&var) {
            vc.remove(idx);
        }
    }

    /// Does the cache hold any chunk of the variable?
    pub(crate) fn holds(&self, var: (usize, usize)) -> bool {
        self.vars.get(&var).is_some_and(|vc| !vc.entries.is_empty())
    }

    /// Forgets a variable's chunks (its storage moved or its layout changed).
    pub(crate) fn forget(&mut self, var: (usize, usize)) {
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
    pub(crate) fn take_pieces(&mut self, var: (usize, usize), all: bool) -> Vec<Piece> {
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

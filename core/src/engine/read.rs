//! The read path: chunks missing from the cache fetched in one batch and decoded in parallel
//! (`load`), and a get's three strategies: whole chunks decoded straight into the caller's
//! memory (`get_direct`), uncompressed chunks read straight into it (`get_plain`, `read_direct`),
//! everything else through the cache and copied out with conversions.

use super::cache::Cache;
use super::chunk::{ChunkBuf, Layout};
use super::convert::copy_out;
use super::mem::{Mem, MemOut, with_scratch};
use super::plan::{ChunkPlan, Run, contiguous_span, plan, tiles_chunk};
use super::selection::Selection;
use crate::codec;
use crate::error::{Kind, Result, err};
use crate::model::VarKey;
use crate::zmap::{ByteRange, Key, Zmap};
use rayon::prelude::*;

impl Cache {
    /// Brings every chunk of `idxs` that is not cached into the cache: one batched fetch,
    /// parallel decode. `skip_read` chunks (fully overwritten) become fill chunks unread.
    pub(super) fn load(&mut self, store: &dyn Zmap, var: VarKey, layout: &Layout, idxs: &[(Vec<u64>, bool)]) -> Result<()> {
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
            let spare = if layout.is_text() { None } else { self.take_spare(want) };
            let buf = spare.map_or_else(|| layout.fill_chunk(), ChunkBuf::Fixed);
            self.vars.entry(var).or_default().insert(idx, buf, clock);
        }
        Ok(())
    }

    /// Reads a selection into memory. Returns whether any element was out of range.
    pub(crate) fn get(
        &mut self,
        store: &dyn Zmap,
        var: VarKey,
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
        var: VarKey,
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
        var: VarKey,
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
}

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

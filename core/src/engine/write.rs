//! The write path: a put's whole chunks gathered from the caller's rows straight to storage
//! (`put_direct`), the rest copied into cached chunks in batches within the variable's budget
//! (`put_cached`), a chunk a write covered whole encoded at once (`flush::encode_behind`).

use super::cache::Cache;
use super::chunk::{ChunkBuf, Layout};
use super::convert::copy_run;
use super::flush::encode_behind;
use super::mem::{Mem, slice_of, with_scratch};
use super::plan::{ChunkPlan, contiguous_span, plan, tiles_chunk};
use super::selection::Selection;
use crate::error::{Kind, Result, err};
use crate::model::{StorageKind, VarKey};
use crate::zmap::{Key, Zmap};
use rayon::prelude::*;

/// Rows at least this long (on average) are written straight from the caller's memory with one
/// vectored write per chunk; shorter ones are first joined in a scratch buffer.
const GATHER_MIN_ROW: usize = 4096;

impl Cache {
    /// Writes a selection from memory: whole chunks whose rows the caller's memory holds as
    /// they are stored go straight to storage (`put_direct`), the rest into cached chunks
    /// (`put_cached`). Returns whether any element was out of range.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put(
        &mut self,
        store: &dyn Zmap,
        var: VarKey,
        layout: &Layout,
        shape: &[u64],
        sel: &Selection,
        mem: Mem<'_>,
        budget: usize,
    ) -> Result<bool> {
        let mut plans = plan(layout, shape, sel);
        if let Mem::Bytes(buf, mt) = &mem
            && layout.is_plain(*mt)
            && layout.quantize.is_none()
            && !layout.sharded
            && layout.storage != StorageKind::Bool
        {
            let (direct, rest): (Vec<ChunkPlan>, Vec<ChunkPlan>) = plans.into_iter().partition(|p| tiles_chunk(layout, p));
            plans = rest;
            let vc = self.var(var);
            for p in &direct {
                // A cached copy would now be stale.
                vc.remove(&p.idx);
            }
            put_direct(store, layout, &direct, buf)?;
        }
        self.put_cached(store, var, layout, &plans, mem, budget)
    }

    /// Copies the plans' runs from memory into cached chunks (marked dirty), keeping the
    /// variable's cache within `budget` bytes: a write larger than the cache goes through it in
    /// batches of chunks, each trimmed (written out) before the next is loaded, so memory stays
    /// bounded and evicted buffers are reused.
    fn put_cached(
        &mut self,
        store: &dyn Zmap,
        var: VarKey,
        layout: &Layout,
        plans: &[ChunkPlan],
        mut mem: Mem<'_>,
        budget: usize,
    ) -> Result<bool> {
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
                range |= copy_into_chunk(layout, p, &mut e.buf, &mut mem)?;
                if p.whole {
                    e.pending = encode_behind(layout, &e.buf);
                }
            }
            self.trim(store, var, layout, budget)?;
        }
        Ok(range)
    }
}

/// Whole chunks whose rows lie contiguously in the caller's memory, stored gathered from those
/// rows (one vectored write each): no copy, no chunk buffer, no cache entry. (A chunk
/// contiguous as a whole is the one-row case.)
fn put_direct(store: &dyn Zmap, layout: &Layout, direct: &[ChunkPlan], buf: &[u8]) -> Result<()> {
    let fs = layout.item;
    if store.caps().latency_bound {
        // A store with latency uploads behind the caller, so it needs bodies it owns: one copy
        // each, gathered from the rows batch by batch, and each batch handed over as soon as it
        // is copied (the next is copied while it goes up).
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
        return Ok(());
    }
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
    stored.into_iter().collect()
}

/// One plan's runs copied from memory into a cached chunk, with the element rules of its
/// storage (booleans, half precision, quantization). Returns whether any was out of range.
fn copy_into_chunk(layout: &Layout, p: &ChunkPlan, chunk: &mut ChunkBuf, mem: &mut Mem<'_>) -> Result<bool> {
    let mut range = false;
    match (chunk, mem) {
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
                    // Finite floats beyond half precision's range are stored as infinity:
                    // NC_ERANGE, as for any narrowing conversion.
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
    Ok(range)
}

//! NC_STRING on fixed-width storage (Zarr v2 `|S<n>`): a string never loses a byte.
//!
//! netcdf-c cuts strings at the variable's width (nczarr-format.md §6.2). We keep the layout it
//! reads, but the width follows the data: the first write picks it from the longest string,
//! and a longer string arriving later first rewrites the chunks already stored at a wider
//! width. The width is recorded as the dtype and as `_nczarr_maxstrlen`, so netcdf-c reads it.

use super::*;
use crate::codec::MAX_CHUNK_BYTES;
use crate::model::{MAX_STRLEN, StorageKind};

/// How many chunks are read and rewritten per storage round trip while widening.
const REWRITE_BATCH: usize = 64;

impl Dataset {
    /// Makes the variable's string width hold every string of `items` before they are written.
    pub(super) fn fit_string_width(&mut self, gid: usize, varid: VarRef, items: &[Option<Option<String>>]) -> Result<()> {
        let var = self.model.var(gid, varid)?;
        if var.nctype != NcType::String || var.stored.element != StorageKind::Native {
            return Ok(());
        }
        // The fill goes into the same chunks (the unwritten elements of a written chunk), so
        // it must fit the width as much as the data.
        let longest = items.iter().filter_map(|s| s.as_ref()?.as_ref()).map(String::len).max().unwrap_or(0).max(string_fill_len(var));
        let old = self.model.maxstrlen(var);
        if longest <= old {
            return Ok(());
        }
        if longest > MAX_STRLEN {
            return err(Kind::Invalid, format!("a string of {longest} bytes is longer than the widest supported ({MAX_STRLEN})"));
        }
        if self.par.is_some() {
            // Widening rewrites every chunk: not something one rank may do while others write.
            return err(
                Kind::Invalid,
                format!("a string of {longest} bytes does not fit the width {old} fixed at nc_enddef in parallel (set _nczarr_maxstrlen)"),
            );
        }
        if var.stored.v3.as_ref().is_some_and(|v| v.shard.is_some()) {
            return err(Kind::Invalid, format!("a string of {longest} bytes does not fit the sharded array's width {old}"));
        }
        let vi = varid.index()?;
        let old_layout = self.chunk_layout(gid, vi)?;
        // Chunks written so far, all on storage at the old width.
        self.chunks.flush_var(self.store.as_ref(), crate::model::VarKey::new(gid, vi), &old_layout)?;
        self.chunks.forget(crate::model::VarKey::new(gid, vi));
        // Anything under the array's key but its metadata is a chunk (or a folder of them).
        let written = self.store.list_dir(&Key::new(old_layout.key.clone())?)?.iter().any(|n| !n.starts_with('.'));
        // The first write takes the width of its data; a later widening leaves room to grow,
        // so strings lengthening one byte at a time do not rewrite the variable each time.
        let new = if written { longest.max(old + old / 2).min(MAX_STRLEN) } else { longest };
        if (old_layout.nelems as u128) * (new as u128) > MAX_CHUNK_BYTES {
            return err(Kind::Invalid, format!("strings of {new} bytes make a chunk larger than {MAX_CHUNK_BYTES} bytes"));
        }
        trace::emit(2, &format!("strings: {} widened from {old} to {new} bytes", old_layout.key));
        let shape = self.model.var_shape(self.model.var(gid, varid)?);
        self.set_string_width(gid, varid, new)?;
        let new_layout = self.chunk_layout(gid, vi)?;
        let keys = if written { chunk_keys(&old_layout, &shape)? } else { Vec::new() };
        for batch in keys.chunks(REWRITE_BATCH) {
            let bytes = self.store.get_many(batch)?;
            let mut rewritten = Vec::with_capacity(batch.len());
            for (key, raw) in batch.iter().zip(bytes) {
                // A chunk deleted meanwhile stays absent (fill).
                if raw.is_some() {
                    let chunk = old_layout.decode(raw)?;
                    rewritten.push((key.clone(), new_layout.encode(&chunk)?.into_owned()));
                }
            }
            self.store.put_chunks(rewritten)?;
        }
        // The new dtype goes out with the rewritten chunks.
        self.persist()
    }

    /// Records a string variable's width: its dtype and its `_nczarr_maxstrlen` attribute.
    fn set_string_width(&mut self, gid: usize, varid: VarRef, width: usize) -> Result<()> {
        let var = self.model.var_mut(gid, varid)?;
        var.stored.maxstrlen = Some(width);
        let value = Values::Int(vec![i32::try_from(width).map_err(|_| Error::new(Kind::Invalid, "string width"))?]);
        match var.atts.iter_mut().find(|a| a.name == "_nczarr_maxstrlen") {
            Some(a) => a.value = value,
            None => var.atts.push(Att::new("_nczarr_maxstrlen".into(), value)),
        }
        self.dirty = true;
        Ok(())
    }
}

/// Every chunk key of a variable's grid (chunks never written are absent on storage).
fn chunk_keys(layout: &crate::engine::Layout, shape: &[u64]) -> Result<Vec<Key>> {
    let grid: Vec<u64> = shape.iter().zip(&layout.chunk_shape).map(|(&s, &c)| s.div_ceil(c.max(1))).collect();
    let total: u64 = grid.iter().product();
    let mut keys = Vec::new();
    let mut idx = vec![0u64; grid.len()];
    for _ in 0..total {
        keys.push(layout.chunk_key(&idx)?);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < grid[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(keys)
}

/// Bytes of a string variable's fill value (0 without one).
pub(super) fn string_fill_len(var: &Var) -> usize {
    match &var.storage_fill {
        Some(Values::Str(items)) => items.first().and_then(|s| s.as_ref()).map_or(0, String::len),
        _ => 0,
    }
}

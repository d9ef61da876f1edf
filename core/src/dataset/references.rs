//! Reference sets written by copying (`nccopy in.nc 'refs.json#mode=kerchunk'`): a read of
//! whole chunks of an addressable variable is remembered with where the chunks are
//! (`engine::origins`); a put of the same values into a reference set at a chunk boundary
//! stores those chunks as references, and the variable takes its source's chunk shape, filters
//! and byte order (the references are to bytes encoded so). Every other put stores bytes.

use super::Dataset;
use crate::engine::MemType;
use crate::engine::origins::{self, Encoding, Origin};
use crate::engine::{Layout, Selection};
use crate::error::Result;
use crate::model::{Endian, StorageKind};
use crate::nc::modes::VarRef;
use crate::nc::types::NcType;
use crate::zmap::{Key, Located};

/// Chunk indexes of a selection that covers whole chunks (edge chunks up to the variable's
/// end): the first chunk and how many along each dimension; `None`: it cuts a chunk.
fn whole_chunks(sel: &Selection, chunks: &[u64], shape: &[u64]) -> Option<(Vec<u64>, Vec<u64>)> {
    if sel.stride.iter().any(|&s| s != 1) || sel.origin != 0 || chunks.len() != sel.start.len() {
        return None;
    }
    // C order in memory: the memory map is the plain one.
    let mut step = 1i64;
    for d in (0..sel.count.len()).rev() {
        if sel.imap.get(d) != Some(&step) && sel.count[d] > 1 {
            return None;
        }
        step = step.checked_mul(i64::try_from(sel.count[d]).ok()?)?;
    }
    let mut first = Vec::with_capacity(chunks.len());
    let mut many = Vec::with_capacity(chunks.len());
    for d in 0..chunks.len() {
        let (start, count, c) = (sel.start[d], sel.count[d], chunks[d]);
        let ends_at_edge = start + count == shape[d];
        if c == 0 || count == 0 || start % c != 0 || (count % c != 0 && !ends_at_edge) {
            return None;
        }
        first.push(start / c);
        many.push(count.div_ceil(c));
    }
    Some((first, many))
}

/// Every index in the box `many` (C order), relative to its corner.
fn indexes(many: &[u64]) -> Vec<Vec<u64>> {
    let total: u64 = many.iter().product();
    (0..total)
        .map(|mut n| {
            let mut idx = vec![0u64; many.len()];
            for d in (0..many.len()).rev() {
                idx[d] = n % many[d];
                n /= many[d];
            }
            idx
        })
        .collect()
}

/// What `write_by_reference` left to write by value.
pub(super) enum ByReference {
    /// All of the put.
    Not,
    /// These parts of it (one chunk each; none: every chunk is a reference now), each with the
    /// offset of its first element in the put's memory.
    Except(Vec<(Selection, usize)>),
}

/// The part of `sel` in chunk `idx`, and the element offset of its first value in `sel`'s
/// memory (C order: `sel.imap` holds the strides).
fn chunk_selection(sel: &Selection, idx: &[u64], chunk: &[u64]) -> (Selection, usize) {
    let mut part = sel.clone();
    let mut offset = 0u64;
    for d in 0..idx.len() {
        let lo = (idx[d] * chunk[d]).max(sel.start[d]);
        let hi = ((idx[d] + 1) * chunk[d]).min(sel.start[d] + sel.count[d]);
        offset += (lo - sel.start[d]) * sel.imap[d].max(0) as u64;
        part.start[d] = lo;
        part.count[d] = hi.saturating_sub(lo);
    }
    (part, offset as usize)
}

/// Chunk `idx` of a read (`values`, in `sel`'s C order) whose values a remembered read returned
/// whole from a chunk of the same shape or an unchunked run: where they are, encoded how.
fn copied_chunk(sel: &Selection, values: &[u8], mem: MemType, idx: &[u64], layout: &Layout) -> Option<(Located, Encoding)> {
    let (part, _) = chunk_selection(sel, idx, &layout.chunk_shape);
    // An edge chunk holds fewer values than a stored chunk: no stored chunk is it.
    if part.count != layout.chunk_shape {
        return None;
    }
    let item = mem.size();
    let corner: Vec<u64> = part.start.iter().zip(&sel.start).map(|(a, b)| a - b).collect();
    let origin = origins::find(&gather(values, &sel.count, &corner, &part.count, item), &part.count, mem)?;
    if let [(_, Some(at))] = origin.chunks.as_slice()
        && origin.encoding.chunk_shape == layout.chunk_shape
    {
        return Some((at.clone(), origin.encoding.clone()));
    }
    let run = origin.run.as_ref()?;
    let len = part.count.iter().product::<u64>() * item as u64;
    let encoding = Encoding { chunk_shape: layout.chunk_shape.clone(), filters: Vec::new(), ..origin.encoding.clone() };
    Some((Located::Range { url: run.url.clone(), offset: run.offset, len }, encoding))
}

/// The box `count` at `corner` of C-ordered `values` of shape `shape`, `item` bytes each.
fn gather(values: &[u8], shape: &[u64], corner: &[u64], count: &[u64], item: usize) -> Vec<u8> {
    let r = shape.len();
    if r == 0 {
        return values.to_vec();
    }
    let row = count[r - 1] as usize * item;
    let mut out = Vec::with_capacity(count.iter().product::<u64>() as usize * item);
    for outer in indexes(&count[..r - 1]) {
        let mut at = 0u64;
        for d in 0..r {
            at = at * shape[d] + corner[d] + if d + 1 < r { outer[d] } else { 0 };
        }
        let from = at as usize * item;
        out.extend_from_slice(values.get(from..from + row).unwrap_or_default());
    }
    out
}

fn absolute(first: &[u64], rel: &[u64]) -> Vec<u64> {
    first.iter().zip(rel).map(|(a, b)| a + b).collect()
}

/// Values read in the variable's own type (no conversion: the bytes are the stored values).
fn same_type(nctype: NcType, mem: MemType) -> bool {
    match mem {
        MemType::Text => nctype == NcType::Char,
        MemType::Num(t) => t == nctype,
    }
}

impl Dataset {
    /// Can this variable's chunks be named as they are stored (plain fixed-size values)?
    fn addressable(&self, gid: usize, varid: usize) -> Option<(std::sync::Arc<Layout>, Vec<u64>)> {
        let var = self.model.var(gid, VarRef::Var(varid)).ok()?;
        let plain = var.nctype != NcType::String && var.stored.element == StorageKind::Native && !var.stored.fortran_order;
        if !plain || var.stored.v3.is_some() {
            return None;
        }
        Some((self.chunk_layout(gid, varid).ok()?, self.model.var_shape(var)))
    }

    /// After a read: remembers where its values are stored, when it covered whole chunks of a
    /// variable whose chunks this dataset's store can name.
    pub(super) fn note_origin(&self, gid: usize, varid: usize, sel: &Selection, values: &[u8], mem: MemType) -> Result<()> {
        let Some((layout, shape)) = self.addressable(gid, varid) else { return Ok(()) };
        let var = self.model.var(gid, VarRef::Var(varid))?;
        if !same_type(var.nctype, mem) || layout.perm.is_some() {
            return Ok(());
        }
        let run = self.run_of(gid, varid, &layout, sel, &shape)?;
        let own = Encoding {
            chunk_shape: layout.chunk_shape.clone(),
            nctype: var.nctype,
            big_endian: layout.big_endian,
            filters: var.filters.clone(),
            fill: layout.fill.as_ref().map(|f| f.to_ne_bytes()),
        };
        // Chunks this store can name are encoded as this variable says; others may be values
        // another read returned whole (an aggregated dataset's chunk is a fragment, read from
        // its own file), encoded as that file says. One encoding per read: the first found.
        let mut encoding: Option<Encoding> = None;
        let mut chunks = Vec::new();
        if let Some((first, many)) = whole_chunks(sel, &layout.chunk_shape, &shape) {
            for rel in indexes(&many) {
                let idx = absolute(&first, &rel);
                let found = match self.store.locate(&layout.chunk_key(&idx)?)? {
                    Some(at) => Some((at, own.clone())),
                    None => copied_chunk(sel, values, mem, &idx, &layout),
                };
                let at = found.and_then(|(at, enc)| (*encoding.get_or_insert_with(|| enc.clone()) == enc).then_some(at));
                chunks.push((rel, at));
            }
        }
        if chunks.iter().all(|(_, at)| at.is_none()) && run.is_none() {
            return Ok(());
        }
        let encoding = encoding.unwrap_or(own);
        origins::note(values, Origin { count: sel.count.clone(), mem, encoding, chunks, run });
        Ok(())
    }

    /// Where the values of a read lie when the variable is stored as one unfiltered run of
    /// bytes (netCDF-3 fixed-size variables, HDF5 contiguous data) and the read is whole rows.
    fn run_of(&self, gid: usize, varid: usize, layout: &Layout, sel: &Selection, shape: &[u64]) -> Result<Option<origins::Run>> {
        let var = self.model.var(gid, VarRef::Var(varid))?;
        let contiguous = self.scanned_storage(gid, varid) == Some(crate::nc::modes::Storage::Contiguous);
        // netCDF-3 record variables interleave their records: not one run.
        let records = var.dimids.first().is_some_and(|&d| self.model.dims[d].unlimited);
        let whole_rows = (1..shape.len()).all(|d| sel.start[d] == 0 && sel.count[d] == shape[d]);
        if !contiguous || records || !layout.filters.is_empty() || !whole_rows || sel.stride.iter().any(|&s| s != 1) {
            return Ok(None);
        }
        let first = vec![0u64; shape.len()];
        let Some(Located::Range { url, offset, .. }) = self.store.locate(&layout.chunk_key(&first)?)? else { return Ok(None) };
        let row: u64 = shape.iter().skip(1).product::<u64>() * layout.item as u64;
        Ok(Some(origins::Run { url, offset: offset + sel.start.first().copied().unwrap_or(0) * row }))
    }

    /// Before a write into a reference set: stores the put's chunks as references when its
    /// values are those of a remembered read; what is left to write by value.
    pub(super) fn write_by_reference(
        &mut self,
        gid: usize,
        varid: usize,
        sel: &Selection,
        values: &[u8],
        mem: MemType,
    ) -> Result<ByReference> {
        if self.references_out.is_none() {
            return Ok(ByReference::Not);
        }
        let origin = origins::find(values, &sel.count, mem).or_else(|| {
            // Values another library read: read the same region of a file it has open.
            let reread = origins::reread()?;
            reread(&self.model.var_key(gid, varid), sel, mem, values);
            origins::find(values, &sel.count, mem)
        });
        let Some(origin) = origin else { return Ok(ByReference::Not) };
        if let Some(run) = &origin.run
            && origin.chunks.iter().all(|(_, at)| at.is_none())
        {
            return self.write_run(gid, varid, sel, &origin, run);
        }
        let var = self.model.var(gid, VarRef::Var(varid))?;
        if var.nctype != origin.encoding.nctype
            || self.addressable(gid, varid).is_none()
            || !self.encode_as(gid, varid, &origin.encoding)?
        {
            return Ok(ByReference::Not);
        }
        let Some((layout, shape)) = self.addressable(gid, varid) else { return Ok(ByReference::Not) };
        let Some((first, many)) = whole_chunks(sel, &layout.chunk_shape, &shape) else { return Ok(ByReference::Not) };
        let fill = layout.fill.as_ref().map(|f| f.to_ne_bytes());
        // A missing source chunk reads as the source's fill: here only if that is ours too.
        if many.iter().product::<u64>() != origin.chunks.len() as u64
            || origin.chunks.iter().any(|(_, at)| *at == Some(Located::Absent)) && fill != origin.encoding.fill
        {
            return Ok(ByReference::Not);
        }
        let mut by_value = Vec::new();
        for (rel, at) in &origin.chunks {
            let idx = absolute(&first, rel);
            let Some(at) = at else {
                by_value.push(chunk_selection(sel, &idx, &layout.chunk_shape));
                continue;
            };
            // A store that keeps bytes only says so at the first chunk, before anything changed.
            if !self.store.put_located(&layout.chunk_key(&idx)?, at)? {
                return Ok(ByReference::Not);
            }
            self.chunks.drop_chunk(crate::model::VarKey::new(gid, varid), &idx);
        }
        Ok(ByReference::Except(by_value))
    }

    /// A put of values stored as one run of bytes: chunks of whole rows (the first put's
    /// rows, unless chunks are stored already) inside the put become ranges of the run; the
    /// chunks it covers in part are written by value.
    fn write_run(&mut self, gid: usize, varid: usize, sel: &Selection, origin: &Origin, run: &origins::Run) -> Result<ByReference> {
        let var = self.model.var(gid, VarRef::Var(varid))?;
        let shape = self.model.var_shape(var);
        let rows_whole = |chunks: &[u64]| chunks.len() == shape.len() && (1..shape.len()).all(|d| chunks[d] == shape[d]);
        let stored = self.holds_chunks(gid, varid)?;
        let var = self.model.var(gid, VarRef::Var(varid))?;
        let chunk_shape = if stored && rows_whole(&var.chunks) && !var.chunks.is_empty() && var.chunks[0] > 0 {
            var.chunks.clone()
        } else {
            let mut c = sel.count.clone();
            if let Some(first) = c.first_mut() {
                *first = (*first).max(1);
            }
            c
        };
        if var.nctype != origin.encoding.nctype || shape.is_empty() {
            return Ok(ByReference::Not);
        }
        let enc = Encoding { chunk_shape, filters: Vec::new(), ..origin.encoding.clone() };
        if self.addressable(gid, varid).is_none() || !self.encode_as(gid, varid, &enc)? {
            return Ok(ByReference::Not);
        }
        let Some((layout, shape)) = self.addressable(gid, varid) else { return Ok(ByReference::Not) };
        let rows = layout.chunk_shape[0];
        let row: u64 = shape.iter().skip(1).product::<u64>() * layout.item as u64;
        let (start, end) = (sel.start[0], sel.start[0] + sel.count[0]);
        let mut by_value = Vec::new();
        for c in start / rows..end.div_ceil(rows) {
            let mut idx = vec![0u64; shape.len()];
            idx[0] = c;
            let (lo, hi) = (c * rows, (c + 1) * rows);
            // Inside the put and the variable: a whole chunk of the run.
            if lo >= start && hi <= end && hi <= shape[0] {
                let at = Located::Range { url: run.url.clone(), offset: run.offset + (lo - start) * row, len: rows * row };
                if !self.store.put_located(&layout.chunk_key(&idx)?, &at)? {
                    return Ok(ByReference::Not);
                }
                self.chunks.drop_chunk(crate::model::VarKey::new(gid, varid), &idx);
            } else {
                by_value.push(chunk_selection(sel, &idx, &layout.chunk_shape));
            }
        }
        Ok(ByReference::Except(by_value))
    }

    /// Does the variable have chunks stored or cached?
    fn holds_chunks(&self, gid: usize, varid: usize) -> Result<bool> {
        let layout = self.chunk_layout(gid, varid)?;
        let stored = self.store.list_dir(&Key::new(&layout.key)?)?.iter().any(|n| !n.starts_with('.'));
        Ok(stored || self.chunks.holds(crate::model::VarKey::new(gid, varid)))
    }

    /// Makes variable `varid` store its chunks encoded as `enc` says: already so, or changed
    /// while it holds no chunk. `false`: it holds chunks encoded otherwise.
    fn encode_as(&mut self, gid: usize, varid: usize, enc: &Encoding) -> Result<bool> {
        let var = self.model.var(gid, VarRef::Var(varid))?;
        let big = var.endian == Endian::Big && var.nctype.is_numeric();
        if var.chunks == enc.chunk_shape && var.filters == enc.filters && big == enc.big_endian {
            return Ok(true);
        }
        let layout = self.chunk_layout(gid, varid)?;
        if var.dimids.len() != enc.chunk_shape.len() || self.holds_chunks(gid, varid)? {
            crate::trace::emit(1, &format!("refs: {}: chunks stored otherwise already; copied", layout.key));
            return Ok(false);
        }
        let var = self.model.var_mut(gid, VarRef::Var(varid))?;
        var.chunks = enc.chunk_shape.clone();
        var.filters = enc.filters.clone();
        var.endian = if enc.big_endian { Endian::Big } else { Endian::Little };
        crate::trace::emit(1, &format!("refs: {}: chunks {:?} as its source stores them", layout.key, enc.chunk_shape));
        self.chunks.forget(crate::model::VarKey::new(gid, varid));
        self.dirty = true;
        Ok(true)
    }
}

impl Dataset {
    /// The variable whose key (`grp/var`) is `key`, as (group, varid).
    pub(crate) fn var_by_key(&self, key: &str) -> Option<(usize, usize)> {
        (0..self.model.groups.len()).find_map(|gid| {
            let vars = self.model.groups[gid].vars.len();
            (0..vars).find(|&v| self.model.var_key(gid, v) == key).map(|v| (gid, v))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(start: &[u64], count: &[u64]) -> Selection {
        let mut imap = vec![1i64; count.len()];
        for d in (0..count.len().saturating_sub(1)).rev() {
            imap[d] = imap[d + 1] * count[d + 1] as i64;
        }
        Selection { start: start.to_vec(), count: count.to_vec(), stride: vec![1; count.len()], imap, origin: 0 }
    }

    #[test]
    fn whole_chunks_only() {
        // A 10 x 6 variable in 4 x 3 chunks.
        let (chunks, shape) = ([4, 3], [10, 6]);
        assert_eq!(whole_chunks(&sel(&[0, 0], &[10, 6]), &chunks, &shape), Some((vec![0, 0], vec![3, 2])));
        assert_eq!(whole_chunks(&sel(&[4, 3], &[6, 3]), &chunks, &shape), Some((vec![1, 1], vec![2, 1])), "to the edge");
        assert_eq!(whole_chunks(&sel(&[4, 0], &[2, 6]), &chunks, &shape), None, "half a chunk");
        assert_eq!(whole_chunks(&sel(&[1, 0], &[4, 6]), &chunks, &shape), None, "off the grid");
        let mut strided = sel(&[0, 0], &[4, 3]);
        strided.stride = vec![2, 1];
        assert_eq!(whole_chunks(&strided, &chunks, &shape), None);
        let mut mapped = sel(&[0, 0], &[4, 3]);
        mapped.imap = vec![1, 4];
        assert_eq!(whole_chunks(&mapped, &chunks, &shape), None, "a transposing memory map");
    }

    #[test]
    fn the_part_of_a_put_in_one_chunk() {
        // Rows 2..9 of a 6-wide variable in chunks of 4 rows: chunk 1 holds rows 4..8.
        let (part, offset) = chunk_selection(&sel(&[2, 0], &[7, 6]), &[1, 0], &[4, 6]);
        assert_eq!((part.start, part.count, offset), (vec![4, 0], vec![4, 6], 12));
        let (part, offset) = chunk_selection(&sel(&[2, 0], &[7, 6]), &[2, 0], &[4, 6]);
        assert_eq!((part.start, part.count, offset), (vec![8, 0], vec![1, 6], 36));
        assert_eq!(indexes(&[2, 2]), vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
        // Rows 1..3, columns 2..4 of a 3 x 4 array of bytes 0..12.
        let values: Vec<u8> = (0..12).collect();
        assert_eq!(gather(&values, &[3, 4], &[1, 2], &[2, 2], 1), vec![6, 7, 10, 11]);
    }
}

//! Where a variable's chunks are in the object: HDF5 layouts (compact, contiguous, chunked
//! under each of HDF5's chunk indexes) and netCDF-3 offsets. Data stored without chunks is cut
//! into chunks of whole rows, about `ROWS_BYTES` each, so a slice reads what it needs.

use crate::nc::modes::Storage;
use crate::zmap::refs::Ref;
use hdf5_reader::Hdf5File;
use hdf5_reader::chunk_index::ChunkEntry;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::messages::layout::{ChunkIndexing, DataLayout};

/// About how many bytes one chunk cut from unchunked data holds.
const ROWS_BYTES: u64 = 4 << 20;

/// A variable's chunks: their shape, the filters they went through, and where each is.
pub(super) struct Plan {
    pub chunk: Vec<u64>,
    pub filters: Vec<(u32, Vec<u32>)>,
    pub big_endian: bool,
    /// How the file stores the variable (what `nc_inq_var_chunking` says).
    pub stored: Storage,
    /// Chunk grid index → where its bytes are (chunks not listed were never written).
    pub refs: Vec<(Vec<u64>, Ref)>,
}

/// Why a variable cannot be read lazily (the object is read whole instead).
pub(super) type Why = String;

/// Chunks of `rows` shape `shape` stored C-ordered from `offset` on: cut along the first axis
/// that makes them about `ROWS_BYTES`, the edge chunk read short and padded.
pub(super) fn contiguous(shape: &[u64], esize: u64, offset: u64, stored: u64) -> Plan {
    let mut chunk = shape.to_vec();
    // The first axis whose rows (what follows it) fit: the chunk takes as many as fit.
    let mut axis = 0;
    while axis < shape.len() {
        let row: u64 = shape[axis + 1..].iter().product::<u64>().max(1) * esize;
        if row <= ROWS_BYTES || axis + 1 == shape.len() {
            chunk[axis] = (ROWS_BYTES / row.max(1)).clamp(1, shape[axis].max(1));
            for c in &mut chunk[..axis] {
                *c = 1;
            }
            break;
        }
        axis += 1;
    }
    let chunk_bytes: u64 = chunk.iter().product::<u64>() * esize;
    let grid: Vec<u64> = shape.iter().zip(&chunk).map(|(&s, &c)| s.div_ceil(c.max(1))).collect();
    let total: u64 = grid.iter().product();
    let mut refs = Vec::new();
    let mut idx = vec![0u64; grid.len()];
    for _ in 0..total {
        // C order: the chunk starts at its first element's linear offset.
        let mut first = 0u64;
        for d in 0..shape.len() {
            first = first * shape[d] + idx[d] * chunk[d];
        }
        let start = first * esize;
        // Chunks are whole rows in C order: their starts only grow.
        if start >= stored {
            break;
        }
        let len = chunk_bytes.min(stored - start);
        {
            let at = offset + start;
            let r = if len == chunk_bytes {
                Ref::Range { target: 0, offset: at, len }
            } else {
                Ref::Short { target: 0, offset: at, len, full: chunk_bytes }
            };
            refs.push((idx.clone(), r));
        }
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < grid[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Plan { chunk, filters: Vec::new(), big_endian: false, stored: Storage::Contiguous, refs }
}

/// netCDF-3: a fixed-size variable at `begin` (`shape` elements), or a record variable whose
/// record `r` is at `begin + r * recsize` (`shape[0]` records).
pub(super) fn classic(shape: &[u64], esize: u64, begin: u64, record: Option<u64>, size: u64) -> Result<Plan, Why> {
    let Some(recsize) = record else {
        let stored = shape.iter().try_fold(esize, |acc, &n| acc.checked_mul(n)).unwrap_or(u64::MAX);
        // (A header claiming more than the file holds is caught by the caller's end check.)
        let mut plan = contiguous(shape, esize, begin, stored.min(size.saturating_sub(begin).saturating_add(1)));
        plan.big_endian = true;
        return Ok(plan);
    };
    if shape[0] > 0 && shape[0].saturating_sub(1).saturating_mul(recsize).saturating_add(begin) >= size {
        return Err(format!("{} records of {recsize} bytes from byte {begin} of a {size}-byte file", shape[0]));
    }
    let inner = &shape[1..];
    let stored = inner.iter().product::<u64>() * esize;
    let one = contiguous(inner, esize, 0, stored);
    let mut refs = Vec::new();
    for r in 0..shape[0] {
        for (idx, at) in &one.refs {
            let mut full = vec![r];
            full.extend_from_slice(idx);
            let moved = match at {
                Ref::Range { offset, len, .. } => Ref::Range { target: 0, offset: begin + r * recsize + offset, len: *len },
                Ref::Short { offset, len, full, .. } => {
                    Ref::Short { target: 0, offset: begin + r * recsize + offset, len: *len, full: *full }
                }
                other => other.clone(),
            };
            refs.push((full, moved));
        }
    }
    let mut chunk = vec![1];
    chunk.extend_from_slice(&one.chunk);
    Ok(Plan { chunk, filters: Vec::new(), big_endian: true, stored: Storage::Contiguous, refs })
}

/// An HDF5 dataset's chunks (`path` from the root, `shape` its extent, `esize` bytes per element).
pub(super) fn hdf5(file: &Hdf5File, path: &str, shape: &[u64], esize: u64) -> H5Result<Result<Plan, Why>> {
    let dataset = file.dataset(path)?;
    let header = file.get_or_parse_header(dataset.address())?;
    let (mut layout, mut filters) = (None, Vec::new());
    for m in &header.messages {
        match m {
            HdfMessage::DataLayout(l) => layout = Some(l.layout.clone()),
            HdfMessage::FilterPipeline(p) => filters = p.filters.iter().map(|f| (u32::from(f.id), f.client_data.clone())).collect(),
            _ => {}
        }
    }
    let big_endian = matches!(
        dataset.dtype(),
        hdf5_reader::Datatype::FixedPoint { byte_order: hdf5_reader::ByteOrder::BigEndian, .. }
            | hdf5_reader::Datatype::FloatingPoint { byte_order: hdf5_reader::ByteOrder::BigEndian, .. }
    );
    let sb = file.superblock();
    let undefined = |a: u64| hdf5_reader::io::Cursor::is_undefined_offset(a, sb.offset_size);
    let plan = match layout {
        None => Err(format!("{path}: no data layout message")),
        Some(DataLayout::Compact { data }) => {
            let want: u64 = shape.iter().product::<u64>() * esize;
            if data.len() as u64 == want {
                let refs = vec![(vec![0; shape.len()], Ref::Inline(data))];
                Ok(Plan { chunk: shape.to_vec(), filters: Vec::new(), big_endian, stored: Storage::Compact, refs })
            } else {
                Err(format!("{path}: compact data of {} bytes for {want}", data.len()))
            }
        }
        Some(DataLayout::Contiguous { address, .. }) if undefined(address) => {
            Ok(Plan { refs: Vec::new(), ..contiguous(shape, esize, 0, 0) })
        }
        Some(DataLayout::Contiguous { address, size }) => {
            // (Past the file's end by one at most: the caller's end check names it.)
            let room = file.storage().len().saturating_sub(address).saturating_add(1);
            Ok(contiguous(shape, esize, sb.base_address + address, size.min(room)))
        }
        Some(DataLayout::Chunked { address, dims, chunk_indexing, .. }) => {
            let index =
                Index { file, dataset: &dataset, address, dims: &dims, kind: chunk_indexing.as_ref(), undefined: undefined(address) };
            chunked(&index, path, shape, esize, filters)?
        }
    };
    Ok(plan.map(|plan| Plan { big_endian, ..plan }))
}

type H5Result<T> = hdf5_reader::error::Result<T>;

/// A chunked dataset's index: where it is and of which kind.
struct Index<'a> {
    file: &'a Hdf5File,
    dataset: &'a hdf5_reader::Dataset,
    address: u64,
    /// The layout's chunk dimensions (version 4 layouts add the element size).
    dims: &'a [u32],
    kind: Option<&'a ChunkIndexing>,
    /// No chunk was ever written.
    undefined: bool,
}

/// A chunked dataset's plan: each chunk its index lists, as a reference.
fn chunked(index: &Index<'_>, path: &str, shape: &[u64], esize: u64, filters: Vec<(u32, Vec<u32>)>) -> H5Result<Result<Plan, Why>> {
    let ndim = shape.len();
    if index.dims.len() < ndim {
        return Ok(Err(format!("{path}: {} chunk dimensions for {ndim}", index.dims.len())));
    }
    let chunk: Vec<u64> = index.dims[..ndim].iter().map(|&d| u64::from(d)).collect();
    if chunk.contains(&0) {
        return Ok(Err(format!("{path}: a chunk dimension of 0")));
    }
    let chunk_bytes = chunk.iter().product::<u64>() * esize;
    let entries = if index.undefined { Vec::new() } else { entries(index, shape, esize, !filters.is_empty())? };
    let base = index.file.superblock().base_address;
    let mut refs = Vec::with_capacity(entries.len());
    for e in entries {
        if e.filter_mask != 0 && !filters.is_empty() {
            return Ok(Err(format!("{path}: a chunk stored without some of its filters")));
        }
        if e.offsets.len() != ndim || e.offsets.iter().zip(&chunk).any(|(&o, &c)| o % c != 0) {
            return Ok(Err(format!("{path}: a chunk off the chunk grid")));
        }
        // Chunks HDF5 keeps beyond the current extent are not part of the variable.
        if e.offsets.iter().zip(shape).any(|(&o, &s)| o >= s) {
            continue;
        }
        let idx = e.offsets.iter().zip(&chunk).map(|(&o, &c)| o / c).collect();
        // Indexes of unfiltered chunks may not store their size: the chunk's.
        let len = if filters.is_empty() { chunk_bytes } else { e.size };
        refs.push((idx, Ref::Range { target: 0, offset: base + e.address, len }));
    }
    Ok(Ok(Plan { chunk, filters, big_endian: false, stored: Storage::Chunked, refs }))
}

/// Every chunk the index lists, whichever of HDF5's index kinds it is.
fn entries(index: &Index<'_>, shape: &[u64], esize: u64, filtered: bool) -> H5Result<Vec<ChunkEntry>> {
    let sb = index.file.superblock();
    let (storage, address, dims, ndim) = (index.file.storage(), index.address, index.dims, shape.len());
    let chunk_bytes = dims[..ndim].iter().map(|&d| u64::from(d)).product::<u64>() * esize;
    let (osize, lsize) = (sb.offset_size, sb.length_size);
    Ok(match index.kind {
        None => hdf5_reader::btree_v1::collect_btree_v1_leaves_storage(storage, address, osize, lsize, Some(ndim as u32), dims, None)?
            .into_iter()
            .filter_map(|(key, addr)| match key {
                hdf5_reader::btree_v1::BTreeV1Key::RawData { chunk_size, filter_mask, offsets } => Some(ChunkEntry {
                    address: addr,
                    size: u64::from(chunk_size),
                    filter_mask,
                    offsets: offsets[..ndim.min(offsets.len())].to_vec(),
                }),
                _ => None,
            })
            .collect(),
        Some(ChunkIndexing::SingleChunk { filtered_size, filters: mask }) => {
            let size = if filtered { *filtered_size } else { chunk_bytes };
            vec![hdf5_reader::chunk_index::single_chunk_entry(address, size, *mask, ndim)]
        }
        Some(ChunkIndexing::BTreeV2) => {
            hdf5_reader::chunk_index::collect_v2_chunk_entries_storage(storage, address, osize, lsize, ndim as u32, dims, None)?
        }
        Some(ChunkIndexing::Implicit) => {
            hdf5_reader::chunk_index::collect_implicit_chunk_entries(address, shape, dims, esize as usize, None, storage.len())?
        }
        Some(ChunkIndexing::FixedArray { .. }) => {
            hdf5_reader::fixed_array::collect_fixed_array_chunk_entries_storage(storage, address, osize, lsize, shape, dims, None)?
        }
        Some(ChunkIndexing::ExtensibleArray { .. }) => {
            let max = index.dataset.max_dims().map(<[u64]>::to_vec);
            hdf5_reader::extensible_array::collect_extensible_array_chunk_entries_storage(
                storage,
                address,
                osize,
                lsize,
                shape,
                max.as_deref(),
                dims,
                None,
            )?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(r: &Ref) -> (u64, u64, Option<u64>) {
        match r {
            Ref::Range { offset, len, .. } => (*offset, *len, None),
            Ref::Short { offset, len, full, .. } => (*offset, *len, Some(*full)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn contiguous_rows_cut_to_about_four_mib_with_a_short_edge() {
        // 10 rows of 1 MiB: chunks of 4 rows, the last of 2 rows read short and padded.
        let plan = contiguous(&[10, 262144], 4, 1000, 10 << 20);
        assert_eq!(plan.chunk, vec![4, 262144]);
        let got: Vec<_> = plan.refs.iter().map(|(i, r)| (i.clone(), range(r))).collect();
        assert_eq!(
            got,
            vec![
                (vec![0, 0], (1000, 4 << 20, None)),
                (vec![1, 0], (1000 + (4 << 20), 4 << 20, None)),
                (vec![2, 0], (1000 + (8 << 20), 2 << 20, Some(4 << 20))),
            ]
        );
    }

    #[test]
    fn rows_bigger_than_the_target_cut_along_the_next_axis() {
        // One row of 8 MiB (2 × 1M floats): chunks of one row's half.
        let plan = contiguous(&[3, 2, 1 << 20], 4, 0, 24 << 20);
        assert_eq!(plan.chunk, vec![1, 1, 1 << 20]);
        assert_eq!(plan.refs.len(), 6);
        assert_eq!(range(&plan.refs[3].1), (3 * (4 << 20), 4 << 20, None));
    }

    #[test]
    fn scalars_and_empty_variables() {
        let plan = contiguous(&[], 8, 40, 8);
        assert_eq!((plan.chunk.len(), plan.refs.len()), (0, 1));
        assert_eq!(range(&plan.refs[0].1), (40, 8, None));
        assert!(contiguous(&[0, 5], 4, 0, 0).refs.is_empty());
    }

    #[test]
    fn classic_record_variables_one_chunk_per_record() {
        // 3 records of (4, 5) shorts, records 100 bytes apart from 500 on.
        let plan = classic(&[3, 4, 5], 2, 500, Some(100), 1000).unwrap();
        assert_eq!(plan.chunk, vec![1, 4, 5]);
        assert!(plan.big_endian && plan.stored == Storage::Contiguous);
        let offsets: Vec<_> = plan.refs.iter().map(|(i, r)| (i.clone(), range(r).0)).collect();
        assert_eq!(offsets, vec![(vec![0, 0, 0], 500), (vec![1, 0, 0], 600), (vec![2, 0, 0], 700)]);
        // A header claiming records the file does not hold.
        assert!(classic(&[1 << 40, 4, 5], 2, 500, Some(100), 1000).is_err());
    }
}

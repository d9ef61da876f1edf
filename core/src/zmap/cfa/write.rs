//! The store behind an aggregated dataset being written (`#mode=cfa`): the master's metadata
//! and its own variables live in memory; each chunk of an aggregated variable is one fragment
//! file, written through a `FragmentWriter` as the chunk is stored.
//!
//! Which variables are aggregated: those of the root group with two or more dimensions and a
//! numeric type (coordinate variables, and every variable of fewer dimensions, stay in the
//! master, as S3netCDF4 and CF aggregation keep them).
//!
//! A chunk reaches `put` as values in native byte order (the store's `raw_chunks`: the engine
//! runs none of the variable's codecs, the fragment file does), and the fragment gets them cut
//! to the array's extent along fixed dimensions. Along an unlimited dimension the extent grows after the chunk is stored, so a
//! fragment there holds the whole chunk until `flush` (a sync or close), which cuts it to the
//! extent the array has then (`FragmentWriter::settle`).

use super::super::memory::MemoryStore;
use super::super::{Caps, Key, Zmap};
use crate::error::{Error, Kind, Result, err};
use std::sync::{Arc, RwLock};

/// One array as its dataset defines it now (`Arrays`): what a store that writes each chunk
/// somewhere of its own (an aggregated dataset's fragment files) needs to know.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayInfo {
    /// The array's key in the store (`tas`, `g/tas`).
    pub key: String,
    pub name: String,
    /// In the root group.
    pub root: bool,
    /// Name, current length and whether unlimited, per dimension.
    pub dims: Vec<(String, u64, bool)>,
    pub chunks: Vec<u64>,
    pub nctype: crate::nc::types::NcType,
    /// Stored big-endian (its fragment files are made so; chunks reach the store native).
    pub big_endian: bool,
    /// The fill value, one element in native byte order.
    pub fill: Vec<u8>,
    /// The variable's codecs (its fragment files apply them; chunks reach the store as values).
    pub filters: Vec<crate::codec::Filter>,
    /// The variable's attributes (a fragment file carries them: it describes itself).
    pub attributes: Vec<(String, crate::nc::values::Values)>,
}

/// The arrays of the dataset being written, as it told them last: it tells them after their
/// metadata is written, at every enddef, sync and close (`Dataset::tell_arrays`), and the
/// store reads them when a chunk or a flush reaches it.
#[derive(Default)]
pub struct Arrays(RwLock<Vec<ArrayInfo>>);

impl Arrays {
    pub fn new(arrays: Vec<ArrayInfo>) -> Arrays {
        Arrays(RwLock::new(arrays))
    }

    pub fn set(&self, arrays: Vec<ArrayInfo>) -> Result<()> {
        *self.0.write().map_err(|_| Error::new(Kind::Internal, "array list poisoned"))? = arrays;
        Ok(())
    }

    pub fn get(&self) -> Result<Vec<ArrayInfo>> {
        Ok(self.0.read().map_err(|_| Error::new(Kind::Internal, "array list poisoned"))?.clone())
    }
}

/// Where fragment files are written and read back (the C boundary, through the real
/// netcdf-c; tests, in memory).
pub trait FragmentWriter: Send + Sync {
    /// Stores fragment `index` of `array`: `count` elements (native order) at its origin. A
    /// writer may store it after returning (a failure is then reported by a later call).
    fn write(&self, array: &ArrayInfo, index: &[u64], count: &[usize], data: Vec<u8>) -> Result<()>;
    /// The first `count` elements of fragment `index` as stored so far (cells it does not hold
    /// are the fill value); `None` when the fragment was never written.
    fn read(&self, array: &ArrayInfo, index: &[u64], count: &[usize]) -> Result<Option<Vec<u8>>>;
    /// A durability point: every fragment cut to its array's extent now and stored.
    fn settle(&self, arrays: &[ArrayInfo]) -> Result<()>;
}

/// Is `array` written as fragments?
pub fn is_aggregated(array: &ArrayInfo) -> bool {
    array.root && array.dims.len() >= 2 && array.nctype.is_numeric()
}

/// Elements of fragment `index` a chunk put writes: the chunk, cut at the end of every fixed
/// dimension (an unlimited one is cut at `settle`).
pub(crate) fn fragment_count(array: &ArrayInfo, index: &[u64]) -> Vec<usize> {
    array
        .dims
        .iter()
        .zip(&array.chunks)
        .zip(index)
        .map(|(((_, len, unlimited), &chunk), &i)| {
            let start = i * chunk;
            if *unlimited { chunk as usize } else { chunk.min(len.saturating_sub(start)) as usize }
        })
        .collect()
}

/// The `count` block at the origin of a chunk of shape `chunk` (row-major, `item` bytes per
/// element), copied out.
pub(crate) fn cut_block(chunk: &[usize], count: &[usize], item: usize, src: &[u8]) -> Vec<u8> {
    if count == chunk {
        return src.to_vec();
    }
    let mut out = Vec::with_capacity(count.iter().product::<usize>() * item);
    for_rows(chunk, count, |offset, n| out.extend_from_slice(&src[offset * item..(offset + n) * item]));
    out
}

/// A chunk of shape `chunk` whose `count` block at the origin is `block` and whose other cells
/// hold `fill`.
pub fn place_block(chunk: &[usize], count: &[usize], fill: &[u8], block: &[u8]) -> Vec<u8> {
    let item = fill.len();
    if count == chunk {
        return block.to_vec();
    }
    let mut out = fill.repeat(chunk.iter().product::<usize>());
    let mut at = 0;
    for_rows(chunk, count, |offset, n| {
        out[offset * item..(offset + n) * item].copy_from_slice(&block[at..at + n * item]);
        at += n * item;
    });
    out
}

/// Calls `row(offset, n)` for each row of the `count` block at the origin of an array of shape
/// `outer`, in order: `offset` is the row's first element in the outer array.
fn for_rows(outer: &[usize], count: &[usize], mut row: impl FnMut(usize, usize)) {
    let n = outer.len();
    if n == 0 {
        row(0, 1);
        return;
    }
    if count.contains(&0) {
        return;
    }
    let mut at = vec![0usize; n - 1];
    loop {
        let offset = at.iter().zip(outer).fold(0, |o, (i, len)| o * len + i) * outer[n - 1];
        row(offset, count[n - 1]);
        let mut d = n - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            at[d] += 1;
            if at[d] < count[d] {
                break;
            }
            at[d] = 0;
        }
    }
}

/// The aggregated dataset's store while it is written.
pub struct CfaWriteStore {
    inner: Arc<MemoryStore>,
    arrays: Arc<Arrays>,
    writer: Arc<dyn FragmentWriter>,
    name: String,
}

impl CfaWriteStore {
    /// `arrays`: what the dataset written over this store tells of its arrays.
    pub fn new(name: &str, inner: Arc<MemoryStore>, writer: Arc<dyn FragmentWriter>, arrays: Arc<Arrays>) -> CfaWriteStore {
        CfaWriteStore { inner, arrays, writer, name: name.to_string() }
    }

    /// The aggregated array and chunk index a key names, when it names a chunk of one.
    fn chunk_of(&self, key: &str) -> Option<(ArrayInfo, Vec<u64>)> {
        let arrays = self.arrays.0.read().ok()?;
        arrays.iter().filter(|a| is_aggregated(a)).find_map(|a| {
            let rest = key.strip_prefix(a.key.as_str())?.strip_prefix('/')?;
            if rest.starts_with('.') || rest.contains("zarr.json") {
                return None;
            }
            let index: Vec<u64> = rest.split(['.', '/']).filter(|p| *p != "c").map(|p| p.parse().ok()).collect::<Option<_>>()?;
            (index.len() == a.dims.len()).then(|| (a.clone(), index))
        })
    }

    fn chunk_shape(array: &ArrayInfo) -> Vec<usize> {
        array.chunks.iter().map(|&c| c as usize).collect()
    }
}

impl Zmap for CfaWriteStore {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        let Some((array, index)) = self.chunk_of(key.as_str()) else { return self.inner.get(key) };
        let count = fragment_count(&array, &index);
        let Some(block) = self.writer.read(&array, &index, &count)? else { return Ok(None) };
        Ok(Some(place_block(&Self::chunk_shape(&array), &count, &array.fill, &block)))
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        let Some((array, index)) = self.chunk_of(key.as_str()) else { return self.inner.put(key, value) };
        let item = array.nctype.size();
        let shape = Self::chunk_shape(&array);
        let elements: usize = shape.iter().product();
        if value.len() != elements * item {
            return err(Kind::Internal, format!("{key}: a chunk of {} bytes for {} elements", value.len(), elements));
        }
        let count = fragment_count(&array, &index);
        self.writer.write(&array, &index, &count, cut_block(&shape, &count, item, value))
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        self.inner.list_dir(prefix)
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        self.inner.delete_prefix(prefix)
    }

    fn flush(&self) -> Result<()> {
        self.writer.settle(&self.arrays.get()?)
    }

    fn describe(&self) -> String {
        format!("aggregated dataset {} (writing)", self.name)
    }

    fn caps(&self) -> Caps {
        Caps { batch_size: 16, latency_bound: false, concurrent_puts: false, versioned: false, raw_chunks: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nc::types::NcType;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// A fragment held in memory: its shape and values.
    type Block = (Vec<usize>, Vec<u8>);

    /// Fragments in memory, as written.
    #[derive(Default)]
    struct Held(Mutex<HashMap<(String, Vec<u64>), Block>>);

    impl FragmentWriter for Held {
        fn write(&self, a: &ArrayInfo, index: &[u64], count: &[usize], data: Vec<u8>) -> Result<()> {
            self.0.lock().unwrap().insert((a.key.clone(), index.to_vec()), (count.to_vec(), data));
            Ok(())
        }
        fn read(&self, a: &ArrayInfo, index: &[u64], count: &[usize]) -> Result<Option<Vec<u8>>> {
            let held = self.0.lock().unwrap();
            Ok(held.get(&(a.key.clone(), index.to_vec())).map(|(c, d)| {
                assert_eq!(c, count);
                d.clone()
            }))
        }
        fn settle(&self, _: &[ArrayInfo]) -> Result<()> {
            Ok(())
        }
    }

    fn array(big_endian: bool) -> ArrayInfo {
        ArrayInfo {
            key: "v".into(),
            name: "v".into(),
            root: true,
            dims: vec![("t".into(), 3, true), ("x".into(), 5, false)],
            chunks: vec![2, 3],
            nctype: NcType::Short,
            big_endian,
            fill: (-1i16).to_ne_bytes().to_vec(),
            filters: Vec::new(),
            attributes: Vec::new(),
        }
    }

    #[test]
    fn blocks_cut_and_placed() {
        let chunk: Vec<u8> = (0u8..12).collect();
        assert_eq!(cut_block(&[3, 4], &[2, 3], 1, &chunk), vec![0, 1, 2, 4, 5, 6]);
        assert_eq!(place_block(&[3, 4], &[2, 3], &[9], &[0, 1, 2, 4, 5, 6]), vec![0, 1, 2, 9, 4, 5, 6, 9, 9, 9, 9, 9]);
        assert_eq!(cut_block(&[], &[], 2, &[7, 8]), vec![7, 8]);
    }

    #[test]
    fn edge_chunks_become_cut_fragments() {
        for big_endian in [false, true] {
            let held = Arc::new(Held::default());
            let arrays = Arc::new(Arrays::new(vec![array(big_endian)]));
            let store = CfaWriteStore::new("t", Arc::new(MemoryStore::new()), held.clone(), arrays);
            // Chunk (0, 1): columns 3..5 of a 5-wide x, so 2 of its 3 columns are inside. A
            // big-endian variable's chunks reach the store native too (`raw_chunks`).
            let values: Vec<i16> = (0..6).collect();
            let stored: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
            store.put(&Key::new("v/0.1").unwrap(), &stored).unwrap();
            let (count, data) = held.0.lock().unwrap()[&("v".to_string(), vec![0, 1])].clone();
            assert_eq!(count, vec![2, 2], "unlimited t whole, x cut at 5");
            let got: Vec<i16> = data.chunks(2).map(|c| i16::from_ne_bytes([c[0], c[1]])).collect();
            assert_eq!(got, vec![0, 1, 3, 4]);
            let back = store.get(&Key::new("v/0.1").unwrap()).unwrap().unwrap();
            let back: Vec<i16> = back.chunks(2).map(|c| i16::from_ne_bytes([c[0], c[1]])).collect();
            assert_eq!(back, vec![0, 1, -1, 3, 4, -1], "cells past the edge are fill");
            assert!(store.get(&Key::new("v/1.0").unwrap()).unwrap().is_none(), "never written");
            store.put(&Key::new("v/.zarray").unwrap(), b"{}").unwrap();
            assert!(held.0.lock().unwrap().len() == 1, "metadata stays in memory");
        }
    }
}

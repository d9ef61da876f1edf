//! Zarr v3 sharding (`sharding_indexed`, zarr-v3.md §7) as a storage adapter.
//!
//! The chunk engine plans, caches and codes *inner* chunks under virtual keys
//! `<var>/c/i/j`; `ShardStore` maps each to its shard object and slot. Reads fetch a shard's
//! index once (a suffix or prefix read, cached per dataset) and then only the byte ranges of
//! the inner chunks asked for; a batch wanting most of a shard reads it whole. Writes are
//! collected per shard and `finish` stores each touched shard exactly once, copying the
//! encoded bytes of untouched inner chunks from the old shard (no decode, no re-encode).

use crate::error::{Error, Kind, Result, err};
use crate::model::{ShardIndex, Var, join_key};
use crate::zmap::{ByteRange, Caps, Key, Limit, Ranges, Zmap};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// `(offset, nbytes)` per inner chunk in C order; `EMPTY` pairs mark absent chunks.
pub(crate) type Index = Arc<Vec<(u64, u64)>>;
const EMPTY: u64 = u64::MAX;
/// Shard indexes kept per dataset before the cache starts over.
const MAX_CACHED_INDEXES: usize = 4096;

/// `NCZARR_SHARD_READS=whole`: always read whole shards (stores where one large request
/// beats an index read plus ranges; also the benchmark's baseline).
fn whole_reads() -> bool {
    crate::config::shard_reads_whole()
}

/// Shard indexes read so far, by shard key.
#[derive(Default)]
pub(crate) struct IndexCache(Mutex<HashMap<String, Index>>);

impl IndexCache {
    fn get(&self, key: &str) -> Option<Index> {
        self.0.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: &str, index: Index) {
        if let Ok(mut m) = self.0.lock() {
            if m.len() >= MAX_CACHED_INDEXES {
                m.clear();
            }
            m.insert(key.to_string(), index);
        }
    }

    fn forget(&self, key: &str) {
        if let Ok(mut m) = self.0.lock() {
            m.remove(key);
        }
    }

    /// Drops every index under a variable's key (its objects moved or were rewritten).
    pub(crate) fn forget_prefix(&self, prefix: &str) {
        if let Ok(mut m) = self.0.lock() {
            m.retain(|k, _| !k.starts_with(prefix));
        }
    }
}

pub(crate) struct ShardStore<'a> {
    inner: &'a dyn Zmap,
    cache: &'a IndexCache,
    var_key: String,
    /// Inner chunks per shard along each dimension.
    per_shard: Vec<u64>,
    default_keys: bool,
    sep: char,
    index: ShardIndex,
    /// Codecs around whole shards: shards are then read whole and decoded first.
    outer: Vec<crate::codec::Filter>,
    /// Encoded inner chunks written since the last `finish`, by shard key and slot.
    pending: Mutex<BTreeMap<String, BTreeMap<usize, Vec<u8>>>>,
    /// The most bytes an inner chunk can have (its layout's `stored_limit`): index entries
    /// and whole shards claiming more are refused before anything that size is read.
    chunk_limit: Limit,
}

/// The adapter for a sharded variable whose objects live under `key`; `None` when unsharded.
pub(crate) fn for_var<'a>(inner: &'a dyn Zmap, cache: &'a IndexCache, var: &Var, key: &str) -> Option<ShardStore<'a>> {
    let v3 = var.stored.v3.as_ref()?;
    let shard = v3.shard.as_ref()?;
    let per_shard = shard.iter().zip(&var.chunks).map(|(s, c)| s / c.max(&1)).collect();
    Some(ShardStore {
        inner,
        cache,
        var_key: key.to_string(),
        per_shard,
        default_keys: v3.default_keys,
        sep: var.stored.separator,
        index: v3.index,
        outer: v3.outer.clone(),
        pending: Mutex::new(BTreeMap::new()),
        chunk_limit: Limit::NONE,
    })
}

/// Runs `f` on the store a variable's chunks go through (its shards' adapter when sharded),
/// then stores every shard `f` wrote to. `chunk_limit`: the most bytes an inner chunk can have.
pub(crate) fn through<R>(
    inner: &dyn Zmap,
    cache: &IndexCache,
    var: &Var,
    key: &str,
    chunk_limit: Limit,
    f: impl FnOnce(&dyn Zmap) -> Result<R>,
) -> Result<R> {
    match for_var(inner, cache, var, key) {
        None => f(inner),
        Some(mut shards) => {
            shards.chunk_limit = chunk_limit;
            let r = f(&shards)?;
            shards.finish()?;
            Ok(r)
        }
    }
}

impl ShardStore<'_> {
    /// Keeps an inner chunk's bytes until its shard is written whole (`finish`).
    fn hold(&self, key: &Key, bytes: Vec<u8>) -> Result<()> {
        let (shard, slot) = self.locate(key)?;
        self.pending.lock().map_err(|_| Error::new(Kind::Internal, "shard lock poisoned"))?.entry(shard).or_default().insert(slot, bytes);
        Ok(())
    }

    fn nslots(&self) -> usize {
        self.per_shard.iter().product::<u64>() as usize
    }

    fn index_len(&self) -> usize {
        16 * self.nslots() + if self.index.crc { 4 } else { 0 }
    }

    fn shard_key(&self, sidx: &[u64]) -> String {
        let s = self.sep.to_string();
        let name = match (self.default_keys, sidx.is_empty()) {
            (true, true) => "c".to_string(),
            (true, false) => format!("c{s}{}", sidx.iter().map(u64::to_string).collect::<Vec<_>>().join(&s)),
            (false, true) => "0".to_string(),
            (false, false) => sidx.iter().map(u64::to_string).collect::<Vec<_>>().join(&s),
        };
        join_key(&self.var_key, &name)
    }

    /// Shard key and slot of an inner chunk's virtual key `<var>/c/i/j`.
    fn locate(&self, key: &str) -> Result<(String, usize)> {
        let bad = || Error::new(Kind::Internal, format!("{key} is not an inner chunk key"));
        let rest = if self.var_key.is_empty() {
            key
        } else {
            key.strip_prefix(&self.var_key).and_then(|r| r.strip_prefix('/')).ok_or_else(bad)?
        };
        let rest = rest.strip_prefix('c').ok_or_else(bad)?;
        let idx: Vec<u64> =
            rest.split('/').filter(|p| !p.is_empty()).map(|p| p.parse::<u64>().map_err(|_| bad())).collect::<Result<_>>()?;
        if idx.len() != self.per_shard.len() {
            return Err(bad());
        }
        let sidx: Vec<u64> = idx.iter().zip(&self.per_shard).map(|(i, p)| i / p).collect();
        let slot = idx.iter().zip(&self.per_shard).fold(0u64, |acc, (i, p)| acc * p + i % p) as usize;
        Ok((self.shard_key(&sidx), slot))
    }

    /// Decodes and validates an index read from a shard of `total` bytes.
    fn parse_index(&self, key: &str, raw: &[u8], total: u64) -> Result<Vec<(u64, u64)>> {
        let body = if self.index.crc {
            crate::codec::check_crc32c(raw).map_err(|e| Error::new(Kind::Filter, format!("{key}: shard index {}", e.context)))?
        } else {
            raw
        };
        if body.len() != 16 * self.nslots() {
            return err(Kind::NcZarr, format!("{key}: shard index of {} bytes", body.len()));
        }
        let word = |b: &[u8]| {
            let a: [u8; 8] = b.try_into().unwrap_or([0; 8]);
            if self.index.big_endian { u64::from_be_bytes(a) } else { u64::from_le_bytes(a) }
        };
        let ilen = self.index_len() as u64;
        let (data_lo, data_hi) = if self.index.at_start { (ilen, total) } else { (0, total.saturating_sub(ilen)) };
        body.chunks_exact(16)
            .map(|e| {
                let (off, n) = (word(&e[..8]), word(&e[8..]));
                if off == EMPTY && n == EMPTY {
                    return Ok((EMPTY, EMPTY));
                }
                match off.checked_add(n) {
                    Some(end) if off >= data_lo && end <= data_hi => Ok((off, n)),
                    _ => err(Kind::NcZarr, format!("{key}: shard index entry {off}+{n} outside the shard's data")),
                }
            })
            .collect()
    }

    /// The index of one shard: cached, or one suffix/prefix read. `None`: no shard.
    fn index_of(&self, key: &str) -> Result<Option<Index>> {
        if let Some(i) = self.cache.get(key) {
            return Ok(Some(i));
        }
        let n = self.index_len() as u64;
        let got = if self.index.at_start {
            match self.inner.get_ranges(&Key::new(key)?, &[ByteRange::At { offset: 0, len: n as usize }], None)? {
                Some(mut r) => {
                    let raw = r.parts.pop().unwrap_or_default();
                    Some(self.parse_index(key, &raw, r.size)?)
                }
                None => None,
            }
        } else {
            match self.inner.get_ranges(&Key::new(key)?, &[ByteRange::Suffix(n)], None)? {
                Some(mut r) => {
                    let raw = r.parts.pop().unwrap_or_default();
                    Some(self.parse_index(key, &raw, r.size)?)
                }
                None => None,
            }
        };
        Ok(got.map(|v| {
            let i: Index = Arc::new(v);
            self.cache.put(key, i.clone());
            i
        }))
    }

    /// A whole shard object as stored, with the codecs around it undone. A shard is at most
    /// its index and every inner chunk at its largest: a bigger object is refused unread.
    fn get_whole(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let most = (self.nslots() as u64).saturating_mul(self.chunk_limit.bytes).saturating_add(self.index_len() as u64);
        let limit = Limit {
            bytes: if self.outer.is_empty() { most } else { most.saturating_add(most / 4).saturating_add(1 << 16) },
            ..self.chunk_limit
        };
        let Some(bytes) = self.inner.get_many_limited(&[Key::new(key)?], limit)?.pop().flatten() else { return Ok(None) };
        if self.outer.is_empty() {
            return Ok(Some(bytes));
        }
        crate::codec::decode_unsized(&self.outer, bytes, 1).map(Some).map_err(|e| Error::new(e.kind, format!("{key}: {}", e.context)))
    }

    /// The index and inner-chunk bytes of a whole (decoded) shard.
    fn split_whole(&self, key: &str, whole: &[u8]) -> Result<Vec<Option<Vec<u8>>>> {
        let ilen = self.index_len();
        if whole.len() < ilen {
            return err(Kind::NcZarr, format!("{key}: {} bytes, shorter than its index", whole.len()));
        }
        let raw = if self.index.at_start { &whole[..ilen] } else { &whole[whole.len() - ilen..] };
        let index = self.parse_index(key, raw, whole.len() as u64)?;
        self.cache.put(key, Arc::new(index.clone()));
        Ok(index.iter().map(|&(o, n)| (o != EMPTY).then(|| whole[o as usize..(o + n) as usize].to_vec())).collect())
    }

    /// Reads the wanted slots of one shard.
    fn read_shard(&self, key: &str, slots: &[usize]) -> Result<Vec<Option<Vec<u8>>>> {
        let mut distinct = slots.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let whole = whole_reads() || !self.outer.is_empty() || distinct.len() * 2 > self.nslots() && self.cache.get(key).is_none();
        if whole {
            let Some(bytes) = self.get_whole(key)? else { return Ok(vec![None; slots.len()]) };
            let all = self.split_whole(key, &bytes)?;
            return Ok(slots.iter().map(|&s| all[s].clone()).collect());
        }
        let Some(index) = self.index_of(key)? else { return Ok(vec![None; slots.len()]) };
        let present: Vec<usize> = distinct.iter().copied().filter(|&s| index[s].0 != EMPTY).collect();
        for &s in &present {
            self.chunk_limit.check(key, index[s].1)?;
        }
        let ranges: Vec<ByteRange> = present.iter().map(|&s| ByteRange::At { offset: index[s].0, len: index[s].1 as usize }).collect();
        let got =
            if ranges.is_empty() { Some(Vec::new()) } else { self.inner.get_ranges(&Key::new(key)?, &ranges, None)?.map(|r| r.parts) };
        let Some(got) = got else { return Ok(vec![None; slots.len()]) };
        let by_slot: HashMap<usize, Vec<u8>> = present.into_iter().zip(got).collect();
        Ok(slots.iter().map(|s| by_slot.get(s).cloned()).collect())
    }

    /// Stores every shard written to since the last call, each exactly once.
    pub(crate) fn finish(&self) -> Result<()> {
        let pending = std::mem::take(&mut *self.pending.lock().map_err(|_| Error::new(Kind::Internal, "shard lock poisoned"))?);
        if pending.is_empty() {
            return Ok(());
        }
        let n = self.nslots();
        let built: Vec<Result<(String, Option<Vec<u8>>)>> = crate::parallel::run(|| {
            pending
                .into_par_iter()
                .map(|(key, slots)| {
                    let mut all: Vec<Option<Vec<u8>>> = vec![None; n];
                    if slots.len() < n
                        && let Some(old) = self.get_whole(&key)?
                    {
                        all = self.split_whole(&key, &old)?;
                    }
                    for (s, bytes) in slots {
                        // Empty bytes: an all-fill inner chunk, marked empty in the index.
                        all[s] = (!bytes.is_empty()).then_some(bytes);
                    }
                    if all.iter().all(Option::is_none) {
                        return Ok((key, None));
                    }
                    let shard = self.assemble(&all);
                    let shard = if self.outer.is_empty() { shard } else { crate::codec::encode(&self.outer, &shard, 1)? };
                    Ok((key, Some(shard)))
                })
                .collect()
        });
        let items = built.into_iter().collect::<Result<Vec<_>>>()?;
        let mut puts = Vec::with_capacity(items.len());
        for (k, bytes) in items {
            self.cache.forget(&k);
            match bytes {
                Some(b) => puts.push((Key::new(k)?, b)),
                // A shard holding no chunks is not stored (an old one is removed).
                None => self.inner.delete_prefix(&Key::new(&k)?)?,
            }
        }
        self.inner.put_chunks(puts)
    }

    /// Inner chunks back to back in C order, then the index (+ CRC) where the metadata says.
    fn assemble(&self, chunks: &[Option<Vec<u8>>]) -> Vec<u8> {
        let ilen = self.index_len();
        let base = if self.index.at_start { ilen as u64 } else { 0 };
        let data_len: usize = chunks.iter().flatten().map(Vec::len).sum();
        let mut data = Vec::with_capacity(data_len + ilen);
        let mut index = Vec::with_capacity(ilen);
        for c in chunks {
            let (o, n) = match c {
                Some(b) => {
                    let o = base + data.len() as u64;
                    data.extend_from_slice(b);
                    (o, b.len() as u64)
                }
                None => (EMPTY, EMPTY),
            };
            for w in [o, n] {
                index.extend_from_slice(&if self.index.big_endian { w.to_be_bytes() } else { w.to_le_bytes() });
            }
        }
        if self.index.crc {
            let c = crate::codec::crc32c(&index);
            index.extend_from_slice(&c.to_le_bytes());
        }
        if self.index.at_start {
            index.extend_from_slice(&data);
            index
        } else {
            data.extend_from_slice(&index);
            data
        }
    }
}

// Every method is written out: a default would read inner-chunk keys as if they were objects
// of the store below.
#[deny(clippy::missing_trait_methods)]
impl Zmap for ShardStore<'_> {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        Ok(self.get_many(std::slice::from_ref(key))?.pop().flatten())
    }

    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        let mut out: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
        let mut by_shard: BTreeMap<String, Vec<(usize, usize)>> = BTreeMap::new();
        {
            let pending = self.pending.lock().map_err(|_| Error::new(Kind::Internal, "shard lock poisoned"))?;
            for (pos, k) in keys.iter().enumerate() {
                let (shard, slot) = self.locate(k)?;
                match pending.get(&shard).and_then(|p| p.get(&slot)) {
                    Some(b) => out[pos] = (!b.is_empty()).then(|| b.clone()),
                    None => by_shard.entry(shard).or_default().push((pos, slot)),
                }
            }
        }
        let shards: Vec<(String, Vec<(usize, usize)>)> = by_shard.into_iter().collect();
        let read: Vec<Result<Vec<Option<Vec<u8>>>>> = crate::parallel::run(|| {
            shards.par_iter().map(|(key, want)| self.read_shard(key, &want.iter().map(|w| w.1).collect::<Vec<_>>())).collect()
        });
        for ((_, want), got) in shards.iter().zip(read) {
            for (&(pos, _), bytes) in want.iter().zip(got?) {
                out[pos] = bytes;
            }
        }
        Ok(out)
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        self.hold(key, value.to_vec())
    }

    fn put_parts(&self, key: &Key, parts: &[&[u8]]) -> Result<()> {
        self.hold(key, parts.concat())
    }

    fn get_many_limited(&self, keys: &[Key], limit: Limit) -> Result<Vec<Option<Vec<u8>>>> {
        crate::zmap::within_limit(keys, self.get_many(keys)?, limit)
    }

    // Inner chunks are assembled whole from their shard; parts of one are cut from that.
    fn read_into(&self, key: &Key, out: &mut [u8]) -> Result<bool> {
        crate::zmap::copy_exact(key, self.get(key)?, out)
    }

    fn read_scatter(&self, key: &Key, parts: &mut [&mut [u8]]) -> Result<bool> {
        crate::zmap::scatter_exact(key, self.get(key)?, parts)
    }

    // One batch of shards, the inner chunks cut from them.
    fn read_many_into(&self, keys: &[Key], outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        keys.iter().zip(self.get_many(keys)?).zip(outs).map(|((k, got), out)| crate::zmap::copy_exact(k, got, out)).collect()
    }

    fn get_ranges(&self, key: &Key, ranges: &[ByteRange], size: Option<u64>) -> Result<Option<Ranges>> {
        crate::zmap::cut_ranges(key, self.get(key)?, ranges, size)
    }

    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        items.iter().try_for_each(|(k, v)| self.put(k, v))
    }

    // Inner chunks are held for their shard; the shards go out (behind, where the store
    // writes behind) when it is finished.
    fn put_chunks(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        items.into_iter().try_for_each(|(k, v)| self.hold(&k, v))
    }

    // Listing, deleting and renaming name prefixes, whose objects below are whole shards.
    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        self.inner.list_dir(prefix)
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        self.inner.delete_prefix(prefix)
    }

    fn copy_prefix(&self, from: &Key, to: &Key) -> Result<()> {
        self.inner.copy_prefix(from, to)
    }

    fn rename_prefix(&self, from: &Key, to: &Key) -> Result<()> {
        self.inner.rename_prefix(from, to)
    }

    /// Pending inner chunks become shards, then the store below is made durable.
    fn flush(&self) -> Result<()> {
        self.finish()?;
        self.inner.flush()
    }

    // An inner chunk is a byte range of its shard, but no reference set names it: a shard's
    // chunks are copied (Zarr v2 reference sets have no shards).
    fn locate(&self, _key: &Key) -> Result<Option<crate::zmap::Located>> {
        Ok(None)
    }

    fn put_located(&self, _key: &Key, _at: &crate::zmap::Located) -> Result<bool> {
        Ok(false)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    /// A batch spans about two shards' worth of inner chunks: enough for one request per
    /// shard to serve many inner chunks, bounded so a large read is not held in memory whole.
    /// Writes only fill the pending map (behind a lock), so they may run concurrently.
    fn caps(&self) -> Caps {
        let inner = self.inner.caps();
        Caps {
            batch_size: (2 * self.nslots()).clamp(inner.batch_size, 65536),
            latency_bound: inner.latency_bound,
            concurrent_puts: true,
            versioned: inner.versioned,
            raw_chunks: inner.raw_chunks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChunkCache, Endian, StorageKind, V3Array};
    use crate::nc::types::NcType;
    use crate::zmap::Key;
    use crate::zmap::memory::MemoryStore;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    proptest! {
        /// Shard objects of any bytes, and a real shard with its index (or data) overwritten
        /// or cut, with and without the index checksum: inner chunks or an error, never a
        /// panic or an out-of-bounds slice.
        #[test]
        fn fuzz_shard_index(bytes in proptest::collection::vec(any::<u8>(), 0..400),
                            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8), cut in any::<usize>(), crc in any::<bool>()) {
            let mut v = var();
            if let Some(a) = v.stored.v3.as_mut() {
                a.index.crc = crc;
            }
            let keys: Vec<String> = (0..2).flat_map(|i| (0..4).map(move |j| format!("v/c/{i}/{j}"))).collect();
            let store = MemoryStore::new();
            {
                let cache = IndexCache::default();
                let w = for_var(&store, &cache, &v, "v").unwrap();
                for (n, k) in keys.iter().enumerate() {
                    w.put(&Key::new(k).unwrap(), &[n as u8; 12]).unwrap();
                }
                w.finish().unwrap();
            }
            let good = store.get(&Key::new("v/c/0/0").unwrap()).unwrap().unwrap();
            for data in [bytes.clone(), crate::bytes::mutated(&good, &edits, cut)] {
                store.put(&Key::new("v/c/0/0").unwrap(), &data).unwrap();
                let cache = IndexCache::default();
                let r = for_var(&store, &cache, &v, "v").unwrap();
                let _ = r.get_many(&Key::all(&keys[..1]).unwrap());
                let _ = r.get_many(&Key::all(&keys).unwrap());
            }
        }
    }

    /// Counts requests by kind on the way to a memory store.
    #[derive(Default)]
    struct Counting {
        inner: MemoryStore,
        gets: AtomicUsize,
        suffixes: AtomicUsize,
        span_calls: AtomicUsize,
        spans: AtomicUsize,
        puts: AtomicUsize,
    }

    impl Zmap for Counting {
        fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
            self.gets.fetch_add(1, Ordering::SeqCst);
            self.inner.get(key)
        }
        fn get_ranges(&self, key: &Key, ranges: &[ByteRange], size: Option<u64>) -> Result<Option<Ranges>> {
            if let [ByteRange::Suffix(_)] = ranges {
                self.suffixes.fetch_add(1, Ordering::SeqCst);
            } else {
                self.span_calls.fetch_add(1, Ordering::SeqCst);
                self.spans.fetch_add(ranges.len(), Ordering::SeqCst);
            }
            self.inner.get_ranges(key, ranges, size)
        }
        fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
            self.puts.fetch_add(1, Ordering::SeqCst);
            self.inner.put(key, value)
        }
        fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
            self.inner.list_dir(prefix)
        }
        fn delete_prefix(&self, prefix: &Key) -> Result<()> {
            self.inner.delete_prefix(prefix)
        }
        fn describe(&self) -> String {
            "counting".into()
        }
    }

    fn var() -> Var {
        Var {
            name: "v".into(),
            nctype: NcType::UShort,
            dimids: vec![0, 1],
            atts: vec![],
            chunks: vec![2, 3],
            filters: vec![],
            no_fill: false,
            storage_fill: None,
            endian: Endian::Little,
            locked: true,
            quantize: (0, 0),
            cache: ChunkCache { size: 0, nelems: 0, preemption: 0.0 },
            stored: crate::model::StoredArray {
                key: Some("v".into()),
                separator: '/',
                extra_zarray: Default::default(),
                maxstrlen: None,
                fortran_order: false,
                element: StorageKind::Native,
                v3: Some(Box::new(V3Array {
                    default_keys: true,
                    shard: Some(vec![4, 12]),
                    index: ShardIndex { at_start: false, crc: true, big_endian: false },
                    ..Default::default()
                })),
            },
        }
    }

    #[test]
    fn two_of_eight_inner_chunks_cost_an_index_read_and_two_ranges() {
        let store = Counting::default();
        let cache = IndexCache::default();
        let v = var();
        // Shard c/0/0 holds 2 x 4 inner chunks of 2x3 u16 (12 bytes each).
        let keys: Vec<String> = (0..2).flat_map(|i| (0..4).map(move |j| format!("v/c/{i}/{j}"))).collect();
        {
            let w = for_var(&store, &cache, &v, "v").expect("sharded");
            for (n, k) in keys.iter().enumerate() {
                w.put(&Key::new(k).unwrap(), &[n as u8; 12]).unwrap();
            }
            assert_eq!(store.puts.load(Ordering::SeqCst), 0, "nothing stored before finish");
            w.finish().unwrap();
        }
        assert_eq!(store.puts.load(Ordering::SeqCst), 1, "one shard written once");
        assert_eq!(store.gets.load(Ordering::SeqCst), 0, "a complete shard is built without reading");
        let shard = store.inner.get(&Key::new("v/c/0/0").unwrap()).unwrap().unwrap();
        assert_eq!(shard.len(), 8 * 12 + 8 * 16 + 4);

        let fresh = IndexCache::default();
        let r = for_var(&store, &fresh, &v, "v").unwrap();
        let got = r.get_many(&[Key::new("v/c/0/1").unwrap(), Key::new("v/c/1/2").unwrap()]).unwrap();
        assert_eq!(got, vec![Some(vec![1u8; 12]), Some(vec![6u8; 12])]);
        assert_eq!(store.suffixes.load(Ordering::SeqCst), 1, "one index read");
        assert_eq!(store.span_calls.load(Ordering::SeqCst), 1);
        assert_eq!(store.spans.load(Ordering::SeqCst), 2, "exactly the two inner chunks");
        assert_eq!(store.gets.load(Ordering::SeqCst), 0, "no whole-shard read");
        // The index is cached: the next read costs one range and no index read.
        r.get_many(&[Key::new("v/c/0/0").unwrap()]).unwrap();
        assert_eq!(store.suffixes.load(Ordering::SeqCst), 1);
        assert_eq!(store.spans.load(Ordering::SeqCst), 3);
        // Absent shards read as absent (fill), not as errors.
        assert_eq!(r.get_many(&[Key::new("v/c/3/0").unwrap()]).unwrap(), vec![None]);

        // Rewriting one inner chunk reads the old shard once and keeps the others' bytes.
        let w = for_var(&store, &fresh, &v, "v").unwrap();
        w.put(&Key::new("v/c/1/3").unwrap(), &[99u8; 12]).unwrap();
        w.finish().unwrap();
        assert_eq!(store.gets.load(Ordering::SeqCst), 1);
        let r = for_var(&store, &fresh, &v, "v").unwrap();
        let got = r.get_many(&Key::all(&keys).unwrap()).unwrap();
        assert_eq!(got[7], Some(vec![99u8; 12]));
        assert_eq!(got[3], Some(vec![3u8; 12]));

        // A corrupt index (CRC) is NC_EFILTER; an entry past the data is NC_ENCZARR.
        let mut bad = store.inner.get(&Key::new("v/c/0/0").unwrap()).unwrap().unwrap();
        let n = bad.len();
        bad[n - 10] ^= 1;
        store.inner.put(&Key::new("v/c/0/0").unwrap(), &bad).unwrap();
        let cold = IndexCache::default();
        let r = for_var(&store, &cold, &v, "v").unwrap();
        assert_eq!(r.get_many(&[Key::new("v/c/0/0").unwrap()]).unwrap_err().kind, Kind::Filter);
    }
}

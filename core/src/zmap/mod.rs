//! Key/value storage ("zmap"): the one small trait every storage driver implements.
//!
//! Keys are `/`-separated paths relative to the dataset root, validated once here: no leading
//! slash, no empty, `.` or `..` segment, no control characters or backslashes. A missing key is
//! `Ok(None)`, never an error; there is no separate "exists"/"length" call because on S3 that
//! would cost a HEAD before every GET.

pub(crate) mod adapter;
pub mod cfa;
#[cfg(test)]
pub(crate) mod conformance;
pub mod file;
pub(crate) mod http;
#[cfg(feature = "icechunk")]
pub(crate) mod icechunk;
mod key;
pub mod memory;
pub mod open;
pub mod range;
pub mod refs;
pub mod s3;
pub(crate) mod zip;

use crate::error::{Kind, Result, err};

pub use key::Key;

/// Several objects read `get` by `get`, eight threads at once: for stores whose every read
/// waits on a network (web servers, reference targets). `what` names a read that panicked.
pub(crate) fn get_concurrently(
    keys: &[Key],
    get: &(dyn Fn(&Key) -> Result<Option<Vec<u8>>> + Sync),
    what: &str,
) -> Result<Vec<Option<Vec<u8>>>> {
    if keys.len() < 2 {
        return keys.iter().map(get).collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            keys.chunks(keys.len().div_ceil(8)).map(|part| scope.spawn(move || part.iter().map(get).collect::<Vec<_>>())).collect();
        let mut out = Vec::with_capacity(keys.len());
        for h in handles {
            out.extend(h.join().map_err(|_| crate::error::Error::new(Kind::Internal, format!("{what} stopped")))?);
        }
        out.into_iter().collect()
    })
}

pub trait Zmap: Send + Sync {
    /// The whole object, or `None` when absent.
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>>;

    /// Several objects in one batch; drivers with latency override this to overlap requests.
    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|k| self.get(k)).collect()
    }

    /// Chunk objects, none allowed above `limit` bytes (larger than any encoding of the
    /// chunk could be): NC_ENCZARR, and drivers that know sizes up front (file, zip) refuse
    /// before reading, so a hostile object cannot make us allocate its size.
    fn get_many_limited(&self, keys: &[Key], limit: Limit) -> Result<Vec<Option<Vec<u8>>>> {
        within_limit(keys, self.get_many(keys)?, limit)
    }

    /// Replaces an object atomically.
    fn put(&self, key: &Key, value: &[u8]) -> Result<()>;

    /// Replaces an object atomically with the parts' bytes in order: a chunk gathered straight
    /// from the rows of the caller's array. Drivers that can write vectored override this.
    fn put_parts(&self, key: &Key, parts: &[&[u8]]) -> Result<()> {
        match parts {
            [one] => self.put(key, one),
            _ => self.put(key, &parts.concat()),
        }
    }

    /// Reads an object of exactly `out.len()` bytes straight into `out` (no intermediate
    /// buffer). `Ok(false)`: absent. A different size is NC_ENCZARR (truncated or foreign).
    fn read_into(&self, key: &Key, out: &mut [u8]) -> Result<bool> {
        copy_exact(key, self.get(key)?, out)
    }

    /// Several objects, each of exactly its `outs` slice's length, straight into those slices;
    /// `false`: absent (the slice untouched). Drivers with latency overlap the reads.
    fn read_many_into(&self, keys: &[Key], outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        keys.iter().zip(outs).map(|(k, out)| self.read_into(k, out)).collect()
    }

    /// Reads an object of exactly the parts' total length into the parts, in order: a chunk
    /// scattered straight into the rows of the caller's array. `Ok(false)`: absent.
    fn read_scatter(&self, key: &Key, parts: &mut [&mut [u8]]) -> Result<bool> {
        scatter_exact(key, self.get(key)?, parts)
    }

    /// Byte ranges of one object, in the order asked, and the object's size; `None`: absent.
    /// A range past the end is NC_ENCZARR. `size`: the object must be exactly this long (a
    /// chunk of the size its metadata says; else NC_ENCZARR, truncated or foreign), checked
    /// before reading by drivers that know sizes up front.
    fn get_ranges(&self, key: &Key, ranges: &[ByteRange], size: Option<u64>) -> Result<Option<Ranges>> {
        cut_ranges(key, self.get(key)?, ranges, size)
    }

    /// Several objects, all stored on return; a key given twice ends with its later value.
    /// Drivers with latency or parallel I/O override this.
    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        items.iter().try_for_each(|(k, v)| self.put(k, v))
    }

    /// Chunk objects, in no order among themselves. A driver may return before they are
    /// stored (S3 writes behind) if every other call waits for them first and the next
    /// write or `flush` reports one that failed: metadata written after chunks is still
    /// stored after them.
    fn put_chunks(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        self.put_many(items)
    }

    /// Names of the direct children (objects and sub-prefixes) under `prefix` ("" = root).
    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>>;

    /// Removes every object under `prefix` (and the object named `prefix` itself).
    fn delete_prefix(&self, prefix: &Key) -> Result<()>;

    /// Makes every object under `from` also present at the same relative key under `to`,
    /// replacing whatever was under `to`; the objects under `from` stay. The first half of a
    /// crash-safe move: the metadata naming `to` is written next, `from` deleted last, so a
    /// writer stopped anywhere leaves the old dataset or the new one (reliability.md).
    fn copy_prefix(&self, from: &Key, to: &Key) -> Result<()> {
        self.delete_prefix(to)?;
        let mut keys = Vec::new();
        let mut stack = vec![String::new()];
        while let Some(rel) = stack.pop() {
            for child in self.list_dir(&Key::new(join(from, &rel))?)? {
                let child_rel = join(&rel, &child);
                keys.push(child_rel.clone());
                stack.push(child_rel);
            }
        }
        // A listed name is an object, a sub-prefix or both; absent objects are sub-prefixes.
        for batch in keys.chunks(self.caps().batch_size.max(1)) {
            let from_keys = batch.iter().map(|rel| Key::new(join(from, rel))).collect::<Result<Vec<_>>>()?;
            let got = self.get_many(&from_keys)?;
            let items = batch
                .iter()
                .zip(got)
                .filter_map(|(rel, bytes)| bytes.map(|b| Key::new(join(to, rel)).map(|k| (k, b))))
                .collect::<Result<Vec<_>>>()?;
            if !items.is_empty() {
                self.put_many(items)?;
            }
        }
        Ok(())
    }

    /// Moves every object under `from` to the same relative key under `to`, replacing
    /// whatever was under `to`: in one step where the driver can (a directory rename), which
    /// a dataset whose listing is its metadata (pure Zarr) needs to change atomically.
    fn rename_prefix(&self, from: &Key, to: &Key) -> Result<()> {
        self.copy_prefix(from, to)?;
        self.delete_prefix(from)
    }

    /// Makes everything written so far durable (the zip driver rewrites its archive here).
    fn flush(&self) -> Result<()> {
        Ok(())
    }

    /// Where `key`'s bytes are, as a reference set can name them to other programs; `None`:
    /// this store cannot say (its objects are not addressable from outside, or the key's bytes
    /// are made up, e.g. a padded edge chunk).
    fn locate(&self, _key: &Key) -> Result<Option<Located>> {
        Ok(None)
    }

    /// Stores `key` as a pointer to bytes elsewhere instead of the bytes themselves (a reference
    /// set being written); `false`: this store keeps bytes only, write them instead.
    fn put_located(&self, _key: &Key, _at: &Located) -> Result<bool> {
        Ok(false)
    }

    /// Where this store lives, for messages.
    fn describe(&self) -> String;

    /// What the engine should know to schedule requests on this store.
    fn caps(&self) -> Caps {
        Caps::default()
    }
}

/// Where one key's bytes are, in a form another program can follow (kerchunk's reference
/// values): `Zmap::locate` answers it, `Zmap::put_located` stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// No object: the chunk reads as the fill value.
    Absent,
    /// The bytes themselves (small objects kept in the reference set).
    Inline(Vec<u8>),
    /// `len` bytes at `offset` of the object at `url` (`s3://`, `http(s)://` or an absolute path).
    Range { url: String, offset: u64, len: u64 },
    /// All of the object at `url`.
    Whole { url: String },
}

/// How a store likes to be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// How many objects one batch should hold: larger where each request pays network
    /// latency and requests overlap.
    pub batch_size: usize,
    /// Requests cost a round trip (S3): prefer batched fetches over per-chunk direct reads.
    pub latency_bound: bool,
    /// `put` may be called from several threads at once (independent objects).
    pub concurrent_puts: bool,
    /// Writes are one transaction that `flush` commits (an Icechunk session): no write is seen
    /// before it, so there is no crash order to keep, and a flush in mid-update would commit a
    /// half-made version. Dropped without a flush, the writes are discarded.
    pub versioned: bool,
    /// Chunks are handed over as values, in native byte order, and read back so: the store
    /// lays them out itself (an aggregated dataset, whose fragment files apply the variable's
    /// codecs), so the engine runs none.
    pub raw_chunks: bool,
}

impl Default for Caps {
    fn default() -> Caps {
        Caps { batch_size: 16, latency_bound: false, concurrent_puts: false, versioned: false, raw_chunks: false }
    }
}

/// A zeroed buffer of `len` bytes, a size read from storage: NC_ENOMEM when it cannot be had,
/// never an abort (a sparse 1 TiB object must not take the process down).
pub(crate) fn zeroed(len: u64) -> Result<Vec<u8>> {
    let mut buf = with_room(len)?;
    buf.resize(len as usize, 0);
    Ok(buf)
}

/// An empty buffer with room for `len` bytes, allocated fallibly (see `zeroed`).
pub(crate) fn with_room(len: u64) -> Result<Vec<u8>> {
    let n = usize::try_from(len).map_err(|_| crate::error::Error::new(Kind::NoMem, format!("{len} bytes")))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(n).map_err(|_| crate::error::Error::new(Kind::NoMem, format!("cannot allocate {n} bytes")))?;
    Ok(buf)
}

/// Objects fetched in full, refused when one is larger than `limit` allows.
pub(crate) fn within_limit(keys: &[Key], got: Vec<Option<Vec<u8>>>, limit: Limit) -> Result<Vec<Option<Vec<u8>>>> {
    for (key, bytes) in keys.iter().zip(&got) {
        if let Some(b) = bytes {
            limit.check(key, b.len() as u64)?;
        }
    }
    Ok(got)
}

/// Bytes per bounce read: small enough to stay in the core's cache between the kernel's copy
/// into it and ours out of it.
const BOUNCE_BYTES: usize = 256 << 10;

thread_local! {
    static BOUNCE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Fills `parts` in order from `reader`, positioned at byte `start` of its file: vectored reads
/// straight into the parts when each part sits at the same offset in a cache line as its bytes
/// in the file, else through a bounce buffer that does. The kernel's copy-to-user (`rep movsb`)
/// runs at half speed otherwise: measured on tmpfs, 256 MiB of 256 KiB chunks read into the rows
/// of a `malloc`ed array (16 bytes past a line) take 0.17 s, into line-aligned rows 0.08 s, and
/// through a line-aligned bounce buffer plus a user-space copy 0.09 s. An early end is NC_ENCZARR.
pub(crate) fn read_vectored_exact(key: &str, reader: &mut impl std::io::Read, start: u64, parts: &mut [&mut [u8]]) -> Result<()> {
    use crate::bytes::LINE;
    let short = || err(Kind::NcZarr, format!("{key}: shorter than its size"));
    let mut at = start as usize;
    let matched = parts.iter().all(|p| {
        let same = (p.as_ptr() as usize).wrapping_sub(at).is_multiple_of(LINE);
        at += p.len();
        same
    });
    if matched {
        let mut slices: Vec<std::io::IoSliceMut<'_>> = parts.iter_mut().map(|p| std::io::IoSliceMut::new(p)).collect();
        let mut rest = &mut slices[..];
        while !rest.is_empty() {
            let n = reader.read_vectored(rest)?;
            if n == 0 {
                return short();
            }
            std::io::IoSliceMut::advance_slices(&mut rest, n);
        }
        return Ok(());
    }
    BOUNCE.with(|cell| {
        let mut held = cell.borrow_mut();
        held.resize(BOUNCE_BYTES + 2 * LINE, 0);
        let first = held.as_ptr().align_offset(LINE) + start as usize % LINE;
        let bounce = &mut held[first..first + BOUNCE_BYTES];
        let (mut part, mut into) = (0, 0);
        let mut left: usize = parts.iter().map(|p| p.len()).sum();
        while left > 0 {
            let want = left.min(BOUNCE_BYTES);
            match reader.read_exact(&mut bounce[..want]) {
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return short(),
                r => r?,
            }
            let mut from = 0;
            while from < want {
                let dst = &mut parts[part][into..];
                let n = dst.len().min(want - from);
                crate::bytes::copy(&mut dst[..n], &bounce[from..from + n]);
                from += n;
                into += n;
                if into == parts[part].len() {
                    part += 1;
                    into = 0;
                }
            }
            left -= want;
        }
        Ok(())
    })
}

/// Writes every part, in order, with as few `writev` calls as the kernel allows. Empty parts
/// are left out: a `writev` of nothing but empty slices writes 0 bytes, which is not a failure.
pub(crate) fn write_vectored_all(writer: &mut impl std::io::Write, parts: &[&[u8]]) -> std::io::Result<()> {
    let mut slices: Vec<std::io::IoSlice<'_>> = parts.iter().filter(|p| !p.is_empty()).map(|p| std::io::IoSlice::new(p)).collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        let n = writer.write_vectored(rest)?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        std::io::IoSlice::advance_slices(&mut rest, n);
    }
    Ok(())
}

/// `read_scatter` from a whole object: its bytes laid into `parts` in order.
pub(crate) fn scatter_exact(key: &str, got: Option<Vec<u8>>, parts: &mut [&mut [u8]]) -> Result<bool> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let Some(bytes) = got else { return Ok(false) };
    if bytes.len() != total {
        return err(Kind::NcZarr, format!("{key}: {} bytes, expected {total}", bytes.len()));
    }
    let mut at = 0;
    for p in parts.iter_mut() {
        crate::bytes::copy(p, &bytes[at..at + p.len()]);
        at += p.len();
    }
    Ok(true)
}

/// `read_into` from a whole object: absent → `false`; any size but `out.len()` is NC_ENCZARR.
pub(crate) fn copy_exact(key: &str, got: Option<Vec<u8>>, out: &mut [u8]) -> Result<bool> {
    match got {
        None => Ok(false),
        Some(b) if b.len() == out.len() => {
            crate::bytes::copy(out, &b);
            Ok(true)
        }
        Some(b) => err(Kind::NcZarr, format!("{key}: {} bytes, expected {}", b.len(), out.len())),
    }
}

/// A byte range of one stored object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteRange {
    /// `len` bytes from `offset`.
    At { offset: u64, len: usize },
    /// The last `n` bytes (a shard index at its end).
    Suffix(u64),
}

impl ByteRange {
    /// Offset and length in an object of `size` bytes; past the end is NC_ENCZARR.
    pub(crate) fn within(self, key: &str, size: u64) -> Result<(u64, usize)> {
        match self {
            ByteRange::At { offset, len } => match offset.checked_add(len as u64) {
                Some(end) if end <= size => Ok((offset, len)),
                _ => err(Kind::NcZarr, format!("{key}: range {offset}+{len} past the end ({size} bytes)")),
            },
            ByteRange::Suffix(n) if n <= size => Ok((size - n, n as usize)),
            ByteRange::Suffix(n) => err(Kind::NcZarr, format!("{key}: {size} bytes, shorter than its {n}-byte index")),
        }
    }
}

/// What a ranged read returns: the parts, in the order asked, and the object's size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranges {
    pub parts: Vec<Vec<u8>>,
    pub size: u64,
}

/// NC_ENCZARR unless an object of `actual` bytes is the `expected` size (when one is).
pub(crate) fn check_size(key: &str, actual: u64, expected: Option<u64>) -> Result<()> {
    match expected {
        Some(n) if n != actual => err(Kind::NcZarr, format!("{key}: {actual} bytes, expected {n}")),
        _ => Ok(()),
    }
}

/// `get_ranges` cut from a whole object.
pub(crate) fn cut_ranges(key: &str, got: Option<Vec<u8>>, ranges: &[ByteRange], size: Option<u64>) -> Result<Option<Ranges>> {
    let Some(b) = got else { return Ok(None) };
    let total = b.len() as u64;
    check_size(key, total, size)?;
    let parts = ranges
        .iter()
        .map(|r| r.within(key, total).map(|(off, n)| b[off as usize..off as usize + n].to_vec()))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(Ranges { parts, size: total }))
}

/// The largest valid size of a chunk object, and what a larger one is: NC_ENCZARR for raw
/// chunks (reliability.md C2), NC_EFILTER for compressed ones (a stream that long cannot
/// decode to the chunk, C4).
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub bytes: u64,
    pub kind: Kind,
}

impl Limit {
    pub(crate) const NONE: Limit = Limit { bytes: u64::MAX, kind: Kind::NcZarr };

    pub(crate) fn check(&self, key: &str, len: u64) -> Result<()> {
        if len > self.bytes {
            return err(self.kind, format!("{key}: {len} bytes, more than any encoding of its chunk ({})", self.bytes));
        }
        Ok(())
    }
}

pub(crate) fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// Rejects keys that could leave the store or confuse a backend (reliability.md §3.3); the
/// rule itself is `Key::new`'s.
pub(crate) fn validate_key(key: &str) -> Result<()> {
    Key::new(key).map(drop)
}

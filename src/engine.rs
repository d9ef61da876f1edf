//! The chunk engine: every get/put call becomes a plan (which chunks, which part of each,
//! where in user memory), missing chunks are fetched in one batch and decoded in parallel,
//! then elements move between chunk buffers and user memory with netcdf-c's conversions.
//!
//! Decoded chunks live in a per-variable LRU cache in native byte order; writes land in the
//! cache and reach storage, encoded in parallel, when evicted or at sync/close. A chunk that
//! was only read is never written back (C7); a chunk a write covers entirely is never read.

use crate::codec;
use crate::error::{Error, Kind, Result, err};
use crate::model::{Endian, Model, StorageKind, Var};
use crate::types::NcType;
use crate::values::{Scalar, Values, convert_scalar};
use crate::zmap::Zmap;
use rayon::prelude::*;
use std::collections::HashMap;

/// A validated hyperslab: per dimension start, count and stride, and the memory map in
/// elements (C order for everything but `varm`).
#[derive(Debug, Clone)]
pub struct Selection {
    pub start: Vec<u64>,
    pub count: Vec<u64>,
    pub stride: Vec<u64>,
    pub imap: Vec<i64>,
    /// Memory index of the first selected element: non-zero only when negative imap entries
    /// make later elements sit before it (the caller's pointer then addresses that element).
    pub origin: u64,
}

impl Selection {
    pub fn nelems(&self) -> u64 {
        self.count.iter().product()
    }

    /// Number of memory slots the selection spans, counted from the lowest one (the user
    /// buffer must hold this many; the caller's pointer is at slot `origin`).
    pub fn mem_span(&self) -> Result<usize> {
        let mut max = self.origin as i64;
        for (&c, &m) in self.count.iter().zip(&self.imap) {
            if c == 0 {
                return Ok(0);
            }
            let reach = (c as i64 - 1).checked_mul(m.max(0)).ok_or_else(|| Error::new(Kind::Invalid, "imap overflow"))?;
            max = max.checked_add(reach).ok_or_else(|| Error::new(Kind::Invalid, "imap overflow"))?;
        }
        usize::try_from(max + 1).map_err(|_| Error::new(Kind::NoMem, "selection too large"))
    }
}

/// The raw pointer-free description of a data call's arguments (NULL = `None`).
pub struct Request<'a> {
    pub start: Option<&'a [usize]>,
    pub count: Option<&'a [usize]>,
    pub stride: Option<&'a [isize]>,
    pub imap: Option<&'a [isize]>,
}

/// Checks a request in netcdf-c's order and resolves its defaults (c-api.md §9.2).
pub fn select(shape: &[u64], unlimited: &[bool], write: bool, req: &Request<'_>) -> Result<Selection> {
    let rank = shape.len();
    if rank == 0 {
        return Ok(Selection { start: vec![], count: vec![], stride: vec![], imap: vec![], origin: 0 });
    }
    let start: Vec<u64> = match req.start {
        Some(s) => s.iter().map(|&x| x as u64).collect(),
        None => return err(Kind::InvalidCoords, "NULL start"),
    };
    let count: Vec<u64> = match req.count {
        Some(c) => c.iter().map(|&x| x as u64).collect(),
        None => shape.to_vec(),
    };
    let stride: Vec<u64> = match req.stride {
        Some(st) => {
            if st.iter().any(|&x| x <= 0) {
                return err(Kind::Stride, "stride must be positive");
            }
            st.iter().map(|&x| x as u64).collect()
        }
        None => vec![1; rank],
    };
    for d in 0..rank {
        if write && unlimited[d] {
            continue;
        }
        if start[d] > shape[d] || (start[d] == shape[d] && count[d] > 0) {
            return err(Kind::InvalidCoords, format!("start {} beyond dimension length {}", start[d], shape[d]));
        }
    }
    for d in 0..rank {
        if count[d] == 0 || (write && unlimited[d]) {
            continue;
        }
        let last = (count[d] - 1).checked_mul(stride[d]).and_then(|x| x.checked_add(start[d] + 1));
        if last.is_none_or(|l| l > shape[d]) {
            return err(Kind::Edge, "start + count exceeds dimension length");
        }
    }
    let imap: Vec<i64> = match req.imap {
        Some(m) => m.iter().map(|&x| x as i64).collect(),
        None => {
            let mut m = vec![1i64; rank];
            for d in (0..rank - 1).rev() {
                m[d] = m[d + 1].saturating_mul(count[d + 1] as i64);
            }
            m
        }
    };
    // Negative imap entries walk backwards from the caller's pointer.
    let mut origin: i64 = 0;
    for (&c, &m) in count.iter().zip(&imap) {
        if c > 0 && m < 0 {
            let back = (c as i64 - 1).checked_mul(-m).ok_or_else(|| Error::new(Kind::Invalid, "imap overflow"))?;
            origin = origin.checked_add(back).ok_or_else(|| Error::new(Kind::Invalid, "imap overflow"))?;
        }
    }
    Ok(Selection { start, count, stride, imap, origin: origin as u64 })
}

/// One dimension's part of one chunk: `n` selected positions, the first at `first_off`
/// inside the chunk (then every `stride`), being the `first_k`-th..of the selection.
#[derive(Debug, Clone, Copy)]
struct Piece {
    chunk: u64,
    first_off: u64,
    first_k: u64,
    n: u64,
}

fn project(start: u64, count: u64, stride: u64, chunk_len: u64) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < count {
        let idx = start + k * stride;
        let chunk = idx / chunk_len;
        let chunk_end = (chunk + 1) * chunk_len;
        let kmax = ((chunk_end - 1 - start) / stride).min(count - 1);
        out.push(Piece { chunk, first_off: idx - chunk * chunk_len, first_k: k, n: kmax - k + 1 });
        k = kmax + 1;
    }
    out
}

/// Decoded chunk contents in native byte order.
#[derive(Debug, Clone)]
pub enum ChunkBuf {
    Fixed(Vec<u8>),
    Strings(Vec<Option<String>>),
}

impl ChunkBuf {
    fn bytes(&self) -> usize {
        match self {
            ChunkBuf::Fixed(b) => b.len(),
            ChunkBuf::Strings(s) => s.iter().map(|x| x.as_ref().map_or(8, |s| s.len() + 24)).sum(),
        }
    }
}

/// Everything needed to turn a variable's chunks into bytes and back.
#[derive(Debug, Clone)]
pub struct Layout {
    pub nctype: NcType,
    pub chunk_shape: Vec<u64>,
    pub nelems: usize,
    pub item: usize,
    pub big_endian: bool,
    pub storage: StorageKind,
    pub width: usize,
    pub filters: Vec<crate::model::Filter>,
    pub key: String,
    pub sep: char,
    /// Zarr v3 `default` chunk keys (`c/i/j`, `c` for scalars).
    pub default_keys: bool,
    /// Inner chunks of shards: stored through `shard::ShardStore`, whole shards per flush.
    pub sharded: bool,
    pub fill: Option<Values>,
    pub fortran: bool,
    /// Stored axis order inside a chunk (`transpose`), when not C order.
    pub perm: Option<Vec<usize>>,
    /// Applied to float/double elements as they are written (`nc_def_var_quantize`).
    pub quantize: Option<crate::quantize::Quantizer>,
}

impl Layout {
    pub fn new(model: &Model, var: &Var, key: String) -> Result<Layout> {
        let chunk_shape = if var.dimids.is_empty() { vec![] } else { var.chunks.clone() };
        let nelems = chunk_shape
            .iter()
            .try_fold(1usize, |a, &c| a.checked_mul(c as usize))
            .ok_or_else(|| Error::new(Kind::NoMem, "chunk too large"))?;
        let sharded = var.v3.as_ref().is_some_and(|v| v.shard.is_some());
        if let Some(f) = var.filters.iter().find(|f| !codec::is_supported(f) && !is_object_codec(f)) {
            let id = f.raw.as_ref().and_then(|r| r.get("id")).map(|v| v.to_string()).unwrap_or_else(|| f.id.to_string());
            return err(Kind::NoFilter, format!("codec {id} is not available"));
        }
        Ok(Layout {
            nctype: var.nctype,
            chunk_shape,
            nelems,
            item: var.nctype.size(),
            big_endian: var.endian == Endian::Big && var.nctype.is_numeric(),
            storage: var.storage,
            width: crate::format::write::maxstrlen(model, var),
            filters: var
                .filters
                .iter()
                .filter(|f| !is_object_codec(f))
                .map(|f| if var.v3.is_some() { codec::v3_effective(f) } else { f.clone() })
                .collect(),
            key,
            // Inner chunks of a shard go by virtual `c/i/j` keys that `ShardStore` maps.
            sep: if sharded { '/' } else { var.dim_separator },
            default_keys: sharded || var.v3.as_ref().is_some_and(|v| v.default_keys),
            sharded,
            fill: if var.no_fill { None } else { Some(var.fill_value()) },
            fortran: var.fortran_order,
            perm: var
                .v3
                .as_ref()
                .and_then(|v| v.transpose.clone())
                .or_else(|| var.fortran_order.then(|| (0..var.dimids.len()).rev().collect())),
            quantize: {
                let fill = match var.declared_fill() {
                    Values::Float(v) => v.first().map(|&f| f as f64),
                    Values::Double(v) => v.first().copied(),
                    _ => None,
                };
                fill.and_then(|f| crate::quantize::Quantizer::new(var.quantize.0, var.quantize.1, var.nctype, f))
            },
        })
    }

    /// The most bytes a stored chunk object can have: the raw chunk plus room for any
    /// codec's framing and incompressible-data overhead. Objects above it are corrupt or
    /// hostile and are refused before they are read (reliability.md §4.2, §4.3 N8).
    /// Variable-length (object codec) chunks have no such bound.
    pub fn stored_limit(&self) -> crate::zmap::Limit {
        let per_element = match self.storage {
            StorageKind::Vlen => return crate::zmap::Limit::NONE,
            StorageKind::Utf32(n) => 4 * n as u64,
            StorageKind::Half => 2,
            StorageKind::Bool => 1,
            StorageKind::Native => self.item.max(self.width) as u64,
        };
        let raw = (self.nelems as u64).saturating_mul(per_element);
        if self.filters.is_empty() {
            crate::zmap::Limit { bytes: raw, kind: Kind::NcZarr }
        } else {
            crate::zmap::Limit { bytes: raw.saturating_add(raw / 4).saturating_add(1 << 16), kind: Kind::Filter }
        }
    }

    pub fn chunk_key(&self, idx: &[u64]) -> String {
        let sep = self.sep.to_string();
        let joined = idx.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(&sep);
        let name = match (self.default_keys, idx.is_empty()) {
            (true, true) => "c".to_string(),
            (true, false) => format!("c{sep}{joined}"),
            (false, true) => "0".to_string(),
            (false, false) => joined,
        };
        crate::model::join_key(&self.key, &name)
    }

    /// Element strides inside a chunk: C order, or the stored axis order of `order: "F"`
    /// (v2) and `transpose` (v3) arrays.
    fn chunk_strides(&self) -> Vec<usize> {
        let r = self.chunk_shape.len();
        let mut s = vec![1usize; r];
        match &self.perm {
            Some(perm) if perm.len() == r => {
                let mut acc = 1usize;
                for &axis in perm.iter().rev() {
                    s[axis] = acc;
                    acc *= self.chunk_shape[axis] as usize;
                }
            }
            _ => {
                for d in (0..r.saturating_sub(1)).rev() {
                    s[d] = s[d + 1] * self.chunk_shape[d + 1] as usize;
                }
            }
        }
        s
    }

    fn is_text(&self) -> bool {
        self.nctype == NcType::String
    }

    pub fn fill_chunk(&self) -> ChunkBuf {
        if self.is_text() {
            let s = match &self.fill {
                Some(Values::Str(v)) => v.first().cloned().flatten().unwrap_or_default(),
                _ => String::new(),
            };
            return ChunkBuf::Strings(vec![Some(s); self.nelems]);
        }
        match &self.fill {
            Some(f) => ChunkBuf::Fixed(f.to_ne_bytes().repeat(self.nelems)),
            None => ChunkBuf::Fixed(vec![0u8; self.nelems * self.item]),
        }
    }

    pub fn decode(&self, stored: Option<Vec<u8>>) -> Result<ChunkBuf> {
        let Some(bytes) = stored else { return Ok(self.fill_chunk()) };
        let ctx = |e: Error| Error::new(e.kind, format!("{}: {}", self.key, e.context));
        match (self.is_text(), self.storage) {
            (false, StorageKind::Half) => {
                let mut raw = codec::decode(&self.filters, bytes, 2, self.nelems * 2).map_err(ctx)?;
                if self.big_endian {
                    swap_bytes(&mut raw, 2);
                }
                Ok(ChunkBuf::Fixed(
                    raw.chunks_exact(2).flat_map(|h| crate::values::f16_to_f32(u16::from_le_bytes([h[0], h[1]])).to_ne_bytes()).collect(),
                ))
            }
            (false, _) => {
                let mut raw = codec::decode(&self.filters, bytes, self.item, self.nelems * self.item).map_err(ctx)?;
                if self.big_endian {
                    swap_bytes(&mut raw, self.item);
                }
                Ok(ChunkBuf::Fixed(raw))
            }
            (true, StorageKind::Native | StorageKind::Half | StorageKind::Bool) => {
                let raw = codec::decode(&self.filters, bytes, self.width, self.nelems * self.width).map_err(ctx)?;
                Ok(ChunkBuf::Strings(
                    raw.chunks_exact(self.width)
                        .map(|b| {
                            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                            Some(String::from_utf8_lossy(&b[..end]).into_owned())
                        })
                        .collect(),
                ))
            }
            (true, StorageKind::Utf32(n)) if self.filters.is_empty() && bytes.len() == self.nelems * n => {
                // netcdf-c 4.8.1-4.9.0 typed char data `<U1` but stored one byte per character.
                Ok(ChunkBuf::Strings(
                    bytes
                        .chunks_exact(n)
                        .map(|b| {
                            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                            Some(String::from_utf8_lossy(&b[..end]).into_owned())
                        })
                        .collect(),
                ))
            }
            (true, StorageKind::Utf32(n)) => {
                let raw = codec::decode(&self.filters, bytes, 4, self.nelems * 4 * n).map_err(ctx)?;
                Ok(ChunkBuf::Strings(
                    raw.chunks_exact(4 * n)
                        .map(|b| {
                            let s: String = b
                                .chunks_exact(4)
                                .map(|c| {
                                    if self.big_endian {
                                        u32::from_be_bytes([c[0], c[1], c[2], c[3]])
                                    } else {
                                        u32::from_le_bytes([c[0], c[1], c[2], c[3]])
                                    }
                                })
                                .take_while(|&c| c != 0)
                                .map(|c| char::from_u32(c).unwrap_or('\u{fffd}'))
                                .collect();
                            Some(s)
                        })
                        .collect(),
                ))
            }
            (true, StorageKind::Vlen) => {
                let raw = codec::decode_unsized(&self.filters, bytes, 1).map_err(ctx)?;
                decode_vlen(&raw, self.nelems).map_err(ctx)
            }
        }
    }

    pub fn encode<'b>(&self, buf: &'b ChunkBuf) -> Result<std::borrow::Cow<'b, [u8]>> {
        use std::borrow::Cow;
        if let ChunkBuf::Fixed(b) = buf
            && self.filters.is_empty()
            && !self.big_endian
            && self.storage != StorageKind::Half
        {
            return Ok(Cow::Borrowed(b));
        }
        self.encode_owned(buf).map(Cow::Owned)
    }

    fn encode_owned(&self, buf: &ChunkBuf) -> Result<Vec<u8>> {
        match buf {
            ChunkBuf::Fixed(b) if self.storage == StorageKind::Half => {
                let mut raw: Vec<u8> = b
                    .chunks_exact(4)
                    .flat_map(|f| crate::values::f32_to_f16(f32::from_ne_bytes([f[0], f[1], f[2], f[3]])).to_le_bytes())
                    .collect();
                if self.big_endian {
                    swap_bytes(&mut raw, 2);
                }
                codec::encode(&self.filters, &raw, 2)
            }
            ChunkBuf::Fixed(b) if self.big_endian => {
                let mut raw = b.clone();
                swap_bytes(&mut raw, self.item);
                codec::encode(&self.filters, &raw, self.item)
            }
            ChunkBuf::Fixed(b) => codec::encode(&self.filters, b, self.item),
            ChunkBuf::Strings(items) => match self.storage {
                StorageKind::Native | StorageKind::Half | StorageKind::Bool => {
                    let mut raw = vec![0u8; items.len() * self.width];
                    for (slot, s) in raw.chunks_exact_mut(self.width).zip(items) {
                        let b = s.as_deref().unwrap_or("").as_bytes();
                        let n = b.len().min(self.width);
                        slot[..n].copy_from_slice(&b[..n]);
                    }
                    codec::encode(&self.filters, &raw, self.width)
                }
                StorageKind::Utf32(n) => {
                    let mut raw = vec![0u8; items.len() * 4 * n];
                    for (slot, s) in raw.chunks_exact_mut(4 * n).zip(items) {
                        for (c, out) in s.as_deref().unwrap_or("").chars().zip(slot.chunks_exact_mut(4)) {
                            out.copy_from_slice(&if self.big_endian { (c as u32).to_be_bytes() } else { (c as u32).to_le_bytes() });
                        }
                    }
                    codec::encode(&self.filters, &raw, 4)
                }
                StorageKind::Vlen => {
                    let mut raw = (items.len() as u32).to_le_bytes().to_vec();
                    for s in items {
                        let b = s.as_deref().unwrap_or("").as_bytes();
                        raw.extend_from_slice(&(b.len() as u32).to_le_bytes());
                        raw.extend_from_slice(b);
                    }
                    codec::encode(&self.filters, &raw, 1)
                }
            },
        }
    }

    /// Chunks stored as plain native bytes, read in the memory type itself: no decode step.
    fn is_plain(&self, mt: MemType) -> bool {
        let mem_t = match mt {
            MemType::Text => NcType::Char,
            MemType::Num(t) => t,
        };
        self.filters.is_empty()
            && !self.big_endian
            && self.nctype != NcType::String
            && mem_t == self.nctype
            && !self.fortran
            && self.storage != StorageKind::Half
    }

    /// Compressed chunks of plain values read in their own type: decodable into user memory.
    fn decodes_into(&self, mt: MemType) -> bool {
        let mem_t = match mt {
            MemType::Text => NcType::Char,
            MemType::Num(t) => t,
        };
        !self.filters.is_empty()
            && !self.big_endian
            && self.nctype != NcType::String
            && mem_t == self.nctype
            && !self.fortran
            && self.storage != StorageKind::Half
    }

    /// Whether every element of a chunk is the fill value (bit for bit).
    fn is_fill(&self, buf: &ChunkBuf) -> bool {
        match (buf, &self.fill) {
            (ChunkBuf::Fixed(b), Some(f)) => {
                let f = f.to_ne_bytes();
                !f.is_empty() && b.chunks_exact(f.len()).all(|e| e == f.as_slice())
            }
            (ChunkBuf::Fixed(b), None) => b.iter().all(|&x| x == 0),
            (ChunkBuf::Strings(items), fill) => {
                let f = match fill {
                    Some(Values::Str(v)) => v.first().cloned().flatten().unwrap_or_default(),
                    _ => String::new(),
                };
                items.iter().all(|s| s.as_deref().unwrap_or("") == f)
            }
        }
    }

    /// A string as the storage keeps it: fixed widths cut at a character boundary.
    fn clip(&self, s: String) -> String {
        if self.storage != StorageKind::Native || s.len() <= self.width {
            return s;
        }
        let mut end = self.width;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s[..end].to_string()
    }
}

pub(crate) fn is_object_codec(f: &crate::model::Filter) -> bool {
    f.raw.as_ref().and_then(|r| r.get("id")).and_then(|v| v.as_str()).is_some_and(|id| id == "vlen-utf8" || id == "vlen-bytes")
}

fn decode_vlen(raw: &[u8], nelems: usize) -> Result<ChunkBuf> {
    let bad = || Error::new(Kind::NcZarr, "malformed vlen-utf8 chunk");
    let u32_at = |i: usize| raw.get(i..i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let n = u32_at(0).ok_or_else(bad)?;
    if n != nelems {
        return Err(bad());
    }
    let mut pos = 4;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let len = u32_at(pos).ok_or_else(bad)?;
        let bytes = raw.get(pos + 4..pos + 4 + len).ok_or_else(bad)?;
        out.push(Some(String::from_utf8_lossy(bytes).into_owned()));
        pos += 4 + len;
    }
    Ok(ChunkBuf::Strings(out))
}

fn swap_bytes(raw: &mut [u8], item: usize) {
    if item > 1 {
        for e in raw.chunks_exact_mut(item) {
            e.reverse();
        }
    }
}

// ---- the cache -----------------------------------------------------------------------------

struct Entry {
    buf: ChunkBuf,
    dirty: bool,
    last_use: u64,
    /// A background encoding of `buf` started when a write covered the whole chunk; used at
    /// flush if the chunk was not touched again (any later write drops it).
    pending: Option<Pending>,
}

/// The result of an encoding running on the thread pool, and what it was encoded with.
struct Pending {
    result: std::sync::Mutex<std::sync::mpsc::Receiver<Result<Vec<u8>>>>,
    filters: Vec<crate::model::Filter>,
    big_endian: bool,
}

impl Pending {
    /// The encoded bytes, if they were made with this layout's codecs.
    fn take(&self, layout: &Layout) -> Option<Result<Vec<u8>>> {
        if self.filters != layout.filters || self.big_endian != layout.big_endian {
            return None;
        }
        self.result.lock().ok()?.recv().ok()
    }
}

/// Background encodings in flight, bounded so snapshots cannot pile up in memory.
static ENCODES_IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
const MAX_ENCODES_IN_FLIGHT: usize = 16;

/// Starts encoding a completely written chunk on the pool, so compression overlaps the
/// caller's next steps instead of all waiting for the flush.
fn encode_behind(layout: &Layout, buf: &ChunkBuf) -> Option<Pending> {
    use std::sync::atomic::Ordering;
    let ChunkBuf::Fixed(bytes) = buf else { return None };
    if layout.filters.is_empty() || ENCODES_IN_FLIGHT.load(Ordering::Relaxed) >= MAX_ENCODES_IN_FLIGHT {
        return None;
    }
    ENCODES_IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = std::sync::mpsc::channel();
    let (snapshot, layout_copy) = (ChunkBuf::Fixed(bytes.clone()), layout.clone());
    crate::parallel::spawn(move || {
        let encoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| layout_copy.encode_owned(&snapshot)))
            .unwrap_or_else(|_| Err(Error::new(Kind::Internal, "encoder panicked")));
        drop(snapshot);
        ENCODES_IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
        let _ = tx.send(encoded);
    });
    Some(Pending { result: std::sync::Mutex::new(rx), filters: layout.filters.clone(), big_endian: layout.big_endian })
}

#[derive(Default)]
struct VarChunks {
    entries: HashMap<Vec<u64>, Entry>,
    bytes: usize,
}

/// Decoded chunks of every variable of one dataset.
#[derive(Default)]
pub struct Cache {
    vars: HashMap<(usize, usize), VarChunks>,
    clock: u64,
}

/// Memory as the engine sees it: bytes of a numeric/char memory type, or string slots.
pub enum Mem<'a> {
    Bytes(&'a mut [u8], MemType),
    Strings(&'a mut [Option<Option<String>>]),
}

/// The memory side's element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemType {
    Text,
    Num(NcType),
}

impl MemType {
    fn size(self) -> usize {
        match self {
            MemType::Text => 1,
            MemType::Num(t) => t.size(),
        }
    }
}

/// One contiguous-in-loop transfer: `n` elements, chunk offset/step and memory offset/step.
struct Run {
    coff: usize,
    cstep: usize,
    moff: usize,
    mstep: isize,
    n: usize,
}

impl Run {
    /// Memory index of the run's `j`-th element (steps may be negative under an imap).
    fn mem(&self, j: usize) -> usize {
        (self.moff as isize + j as isize * self.mstep) as usize
    }

    /// One past the highest memory index the run touches.
    fn mem_end(&self) -> usize {
        self.moff.max(self.mem(self.n.saturating_sub(1))) + 1
    }
}

struct ChunkPlan {
    idx: Vec<u64>,
    /// Does the selection cover every in-bounds element of the chunk?
    whole: bool,
    runs: Vec<Run>,
}

fn plan(layout: &Layout, shape: &[u64], sel: &Selection) -> Vec<ChunkPlan> {
    let rank = sel.count.len();
    if rank == 0 {
        return vec![ChunkPlan { idx: vec![], whole: true, runs: vec![Run { coff: 0, cstep: 1, moff: 0, mstep: 1, n: 1 }] }];
    }
    let per_dim: Vec<Vec<Piece>> = (0..rank).map(|d| project(sel.start[d], sel.count[d], sel.stride[d], layout.chunk_shape[d])).collect();
    let cstr = layout.chunk_strides();
    let mut plans = Vec::new();
    let mut which = vec![0usize; rank];
    'chunks: loop {
        let pieces: Vec<Piece> = (0..rank).map(|d| per_dim[d][which[d]]).collect();
        let whole = (0..rank).all(|d| {
            let p = pieces[d];
            let cl = layout.chunk_shape[d];
            let valid = cl.min(shape[d].saturating_sub(p.chunk * cl)).max(1);
            p.first_off == 0 && p.n >= valid && (sel.stride[d] == 1 || p.n == 1 && valid == 1)
        });
        let mut runs = Vec::new();
        let last = rank - 1;
        let mut j = vec![0u64; rank];
        loop {
            let mut coff = 0usize;
            let mut moff = sel.origin as i64;
            for d in 0..last {
                coff += ((pieces[d].first_off + j[d] * sel.stride[d]) as usize) * cstr[d];
                moff += (pieces[d].first_k + j[d]) as i64 * sel.imap[d];
            }
            coff += pieces[last].first_off as usize * cstr[last];
            moff += pieces[last].first_k as i64 * sel.imap[last];
            runs.push(Run {
                coff,
                cstep: sel.stride[last] as usize * cstr[last],
                moff: moff as usize,
                mstep: sel.imap[last] as isize,
                n: pieces[last].n as usize,
            });
            let mut d = last;
            loop {
                if d == 0 {
                    break;
                }
                d -= 1;
                j[d] += 1;
                if j[d] < pieces[d].n {
                    break;
                }
                j[d] = 0;
                if d == 0 {
                    d = usize::MAX;
                    break;
                }
            }
            if d == usize::MAX || last == 0 {
                break;
            }
        }
        plans.push(ChunkPlan { idx: pieces.iter().map(|p| p.chunk).collect(), whole, runs });
        let mut d = rank;
        loop {
            if d == 0 {
                break 'chunks;
            }
            d -= 1;
            which[d] += 1;
            if which[d] < per_dim[d].len() {
                break;
            }
            which[d] = 0;
        }
    }
    plans
}

/// Reads the element at `i` of a native buffer of type `t` as a scalar.
fn load(b: &[u8], i: usize, t: NcType) -> Scalar {
    macro_rules! rd {
        ($ty:ty) => {{
            const N: usize = std::mem::size_of::<$ty>();
            <$ty>::from_ne_bytes(b[i * N..i * N + N].try_into().expect("element"))
        }};
    }
    match t {
        NcType::Byte => Scalar::Int(rd!(i8) as i128),
        NcType::UByte | NcType::Char => Scalar::Int(b[i] as i128),
        NcType::Short => Scalar::Int(rd!(i16) as i128),
        NcType::UShort => Scalar::Int(rd!(u16) as i128),
        NcType::Int => Scalar::Int(rd!(i32) as i128),
        NcType::UInt => Scalar::Int(rd!(u32) as i128),
        NcType::Int64 => Scalar::Int(rd!(i64) as i128),
        NcType::UInt64 => Scalar::Int(rd!(u64) as i128),
        NcType::Float => Scalar::F32(rd!(f32)),
        NcType::Double => Scalar::F64(rd!(f64)),
        NcType::String => Scalar::Int(0),
    }
}

fn store(b: &mut [u8], i: usize, t: NcType, s: Scalar) {
    let as_i = |s: Scalar| match s {
        Scalar::Int(v) => v,
        Scalar::F32(v) => v as i128,
        Scalar::F64(v) => v as i128,
    };
    let as_f = |s: Scalar| match s {
        Scalar::Int(v) => v as f64,
        Scalar::F32(v) => v as f64,
        Scalar::F64(v) => v,
    };
    macro_rules! wr {
        ($v:expr, $ty:ty) => {{
            const N: usize = std::mem::size_of::<$ty>();
            b[i * N..i * N + N].copy_from_slice(&($v).to_ne_bytes());
        }};
    }
    match t {
        NcType::Byte => wr!(as_i(s) as i8, i8),
        NcType::UByte | NcType::Char => b[i] = as_i(s) as u8,
        NcType::Short => wr!(as_i(s) as i16, i16),
        NcType::UShort => wr!(as_i(s) as u16, u16),
        NcType::Int => wr!(as_i(s) as i32, i32),
        NcType::UInt => wr!(as_i(s) as u32, u32),
        NcType::Int64 => wr!(as_i(s) as i64, i64),
        NcType::UInt64 => wr!(as_i(s) as u64, u64),
        NcType::Float => wr!(as_f(s) as f32, f32),
        NcType::Double => wr!(as_f(s), f64),
        NcType::String => {}
    }
}

/// Moves one run between a chunk buffer (`file`) and memory; returns "out of range seen".
fn copy_run(run: &Run, chunk: &mut [u8], file: NcType, mem: &mut [u8], mt: MemType, to_mem: bool) -> bool {
    let fs = file.size();
    let ms = mt.size();
    let mem_t = match mt {
        MemType::Text => NcType::Char,
        MemType::Num(t) => t,
    };
    if mem_t == file {
        if run.cstep == 1 && run.mstep == 1 {
            let (c, m) = (run.coff * fs, run.moff * ms);
            let len = run.n * fs;
            if to_mem {
                mem[m..m + len].copy_from_slice(&chunk[c..c + len]);
            } else {
                chunk[c..c + len].copy_from_slice(&mem[m..m + len]);
            }
        } else {
            for j in 0..run.n {
                let c = (run.coff + j * run.cstep) * fs;
                let m = run.mem(j) * ms;
                if to_mem {
                    mem[m..m + fs].copy_from_slice(&chunk[c..c + fs]);
                } else {
                    chunk[c..c + fs].copy_from_slice(&mem[m..m + fs]);
                }
            }
        }
        return false;
    }
    let mut range = false;
    for j in 0..run.n {
        let c = run.coff + j * run.cstep;
        let m = run.mem(j);
        if to_mem {
            let (v, r) = convert_scalar(load(chunk, c, file), mem_t);
            store(mem, m, mem_t, v);
            range |= r;
        } else {
            let (v, r) = convert_scalar(load(mem, m, mem_t), file);
            store(chunk, c, file, v);
            range |= r;
        }
    }
    range
}

/// `(memory offset, elements)` when a plan covers its whole chunk and the chunk's elements
/// sit contiguously and in order in memory (then chunk bytes and memory bytes coincide).
fn contiguous_span(layout: &Layout, p: &ChunkPlan) -> Option<(usize, usize)> {
    let total: usize = p.runs.iter().map(|r| r.n).sum();
    let first = p.runs.first()?;
    let mut next = (0usize, first.moff);
    let ok = total == layout.nelems
        && p.runs.iter().all(|r| {
            let ok = r.cstep == 1 && (r.mstep == 1 || r.n == 1) && (r.coff, r.moff) == next;
            next = (r.coff + r.n, r.moff + r.n);
            ok
        });
    ok.then_some((first.moff, total))
}

/// Reads an uncompressed chunk's selected part without the cache: a chunk whose elements
/// land contiguously in memory is read straight into the user's buffer; a chunk of which a
/// small part is wanted is read by byte ranges, anything else whole into a scratch buffer.
/// Uncompressed chunks cost nothing to decode, so they are not cached. Absent chunks read
/// as fill.
fn read_direct(store: &dyn Zmap, layout: &Layout, p: &ChunkPlan, out: &MemOut, scratch: &mut Vec<u8>) -> Result<()> {
    let fs = layout.item;
    let fill: Vec<u8> = layout.fill.as_ref().map(|f| f.to_ne_bytes()).unwrap_or_else(|| vec![0u8; fs]);
    let key = layout.chunk_key(&p.idx);
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
    if total * 4 > layout.nelems {
        // Most of the chunk is wanted: read it whole into this thread's scratch buffer.
        scratch.resize(layout.nelems * fs, 0);
        if !store.read_into(&key, scratch)? {
            p.runs.iter().for_each(write_fill);
            return Ok(());
        }
        for r in &p.runs {
            if r.cstep == 1 && r.mstep == 1 {
                out.write(r.moff * fs, &scratch[r.coff * fs..(r.coff + r.n) * fs]);
            } else {
                for j in 0..r.n {
                    let c = (r.coff + j * r.cstep) * fs;
                    out.write(r.mem(j) * fs, &scratch[c..c + fs]);
                }
            }
        }
        return Ok(());
    }
    // A small part is wanted: byte ranges.
    let mut ranges = Vec::new();
    for r in &p.runs {
        if r.cstep == 1 {
            ranges.push(((r.coff * fs) as u64, r.n * fs));
        } else {
            ranges.extend((0..r.n).map(|j| (((r.coff + j * r.cstep) * fs) as u64, fs)));
        }
    }
    let Some(got) = store.get_ranges(&key, (layout.nelems * fs) as u64, &ranges)? else {
        p.runs.iter().for_each(write_fill);
        return Ok(());
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
    Ok(())
}

/// The user's buffer, shared by the parallel copy of a get.
struct MemOut {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a get's chunks hold disjoint sets of selected elements, and each element has one
// memory slot, so concurrent `copy_out` calls never write the same byte; every write is
// bounds-checked against `len`.
unsafe impl Send for MemOut {}
unsafe impl Sync for MemOut {}

impl MemOut {
    /// A bounds-checked view of part of the buffer.
    ///
    /// # Safety
    /// No other thread may access `off..off + len` while the view lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn range(&self, off: usize, len: usize) -> &mut [u8] {
        assert!(off + len <= self.len, "selection outside the user buffer");
        // SAFETY: in bounds; exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(off), len) }
    }

    fn write(&self, off: usize, bytes: &[u8]) {
        assert!(off + bytes.len() <= self.len, "selection outside the user buffer");
        // SAFETY: in bounds (checked) and disjoint from other threads' writes (see above).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(off), bytes.len()) }
    }
}

/// `copy_run` towards memory through a shared `MemOut`.
fn copy_out(run: &Run, chunk: &[u8], file: NcType, out: &MemOut, mt: MemType) -> bool {
    let fs = file.size();
    let ms = mt.size();
    let mem_t = match mt {
        MemType::Text => NcType::Char,
        MemType::Num(t) => t,
    };
    let last = run.mem_end() * ms;
    assert!(last <= out.len, "selection outside the user buffer");
    let write = |m: usize, bytes: &[u8]| {
        // SAFETY: in bounds (checked above) and disjoint from other threads' writes (MemOut).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.ptr.add(m), bytes.len()) }
    };
    if mem_t == file {
        if run.cstep == 1 && run.mstep == 1 {
            write(run.moff * ms, &chunk[run.coff * fs..(run.coff + run.n) * fs]);
        } else {
            for j in 0..run.n {
                let c = (run.coff + j * run.cstep) * fs;
                write(run.mem(j) * ms, &chunk[c..c + fs]);
            }
        }
        return false;
    }
    let mut range = false;
    let mut tmp = [0u8; 8];
    for j in 0..run.n {
        let (v, r) = convert_scalar(load(chunk, run.coff + j * run.cstep, file), mem_t);
        store(&mut tmp, 0, mem_t, v);
        write(run.mem(j) * ms, &tmp[..ms]);
        range |= r;
    }
    range
}

/// Checks that memory and variable types can meet (c-api.md §9.4).
pub fn check_types(file: NcType, mem: &Mem<'_>) -> Result<()> {
    match (file, mem) {
        (NcType::Char, Mem::Bytes(_, MemType::Text)) | (NcType::String, Mem::Strings(_)) => Ok(()),
        (NcType::Char, Mem::Bytes(_, MemType::Num(_))) => err(Kind::Char, "numbers into a char variable"),
        (NcType::String, Mem::Bytes(_, MemType::Text)) => err(Kind::Char, "text into a string variable"),
        (NcType::String, Mem::Bytes(..)) | (_, Mem::Strings(_)) => err(Kind::BadType, "strings and numbers do not convert"),
        (_, Mem::Bytes(_, MemType::Text)) => err(Kind::Char, "text into a numeric variable"),
        (_, Mem::Bytes(_, MemType::Num(_))) => Ok(()),
    }
}

impl Cache {
    fn var(&mut self, key: (usize, usize)) -> &mut VarChunks {
        self.vars.entry(key).or_default()
    }

    /// Brings every chunk of `idxs` that is not cached into the cache: one batched fetch,
    /// parallel decode. `skip_read` chunks (fully overwritten) become fill chunks unread.
    fn load(&mut self, store: &dyn Zmap, var: (usize, usize), layout: &Layout, idxs: &[(Vec<u64>, bool)]) -> Result<()> {
        let missing: Vec<&(Vec<u64>, bool)> = {
            let vc = self.var(var);
            idxs.iter().filter(|(i, _)| !vc.entries.contains_key(i)).collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let to_read: Vec<&Vec<u64>> = missing.iter().filter(|(_, skip)| !skip).map(|(i, _)| i).collect();
        let keys: Vec<String> = to_read.iter().map(|i| layout.chunk_key(i)).collect();
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
            let buf = buf?;
            vc.bytes += buf.bytes();
            vc.entries.insert(idx.clone(), Entry { buf, dirty: false, last_use: clock, pending: None });
        }
        for (idx, _) in missing.iter().filter(|(_, skip)| *skip) {
            let buf = layout.fill_chunk();
            vc.bytes += buf.bytes();
            vc.entries.insert(idx.clone(), Entry { buf, dirty: false, last_use: clock, pending: None });
        }
        Ok(())
    }

    /// Reads a selection into memory. Returns whether any element was out of range.
    pub fn get(
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
            && layout.decodes_into(*mt)
        {
            // Whole chunks laid out contiguously in memory that nobody has cached: decode
            // straight into the caller's buffer (a full read wants each chunk once).
            let cached = &self.var(var).entries;
            let (direct, rest): (Vec<ChunkPlan>, Vec<ChunkPlan>) =
                plans.into_iter().partition(|p| !cached.contains_key(&p.idx) && contiguous_span(layout, p).is_some());
            plans = rest;
            let keys: Vec<String> = direct.iter().map(|p| layout.chunk_key(&p.idx)).collect();
            let out = MemOut { ptr: buf.as_mut_ptr(), len: buf.len() };
            let batch = store.batch_size();
            for (batch_plans, batch_keys) in direct.chunks(batch).zip(keys.chunks(batch)) {
                let fetched = store.get_many_limited(batch_keys, layout.stored_limit())?;
                let results: Vec<Result<()>> = crate::parallel::run(|| {
                    batch_plans
                        .par_iter()
                        .zip(fetched)
                        .map(|(p, stored)| {
                            let (moff, n) = contiguous_span(layout, p).expect("checked");
                            let fs = layout.item;
                            // SAFETY: this chunk's memory range belongs to this task (MemOut).
                            let dst = unsafe { out.range(moff * fs, n * fs) };
                            match stored {
                                Some(bytes) => {
                                    if !codec::decode_into(&layout.filters, &bytes, dst)? {
                                        dst.copy_from_slice(&codec::decode(&layout.filters, bytes, fs, dst.len())?);
                                    }
                                }
                                None => match &layout.fill {
                                    Some(f) => dst.chunks_exact_mut(fs).for_each(|e| e.copy_from_slice(&f.to_ne_bytes())),
                                    None => dst.fill(0),
                                },
                            }
                            Ok(())
                        })
                        .collect()
                });
                results.into_iter().collect::<Result<()>>()?;
            }
        }
        if let Mem::Bytes(buf, mt) = &mut mem
            && layout.is_plain(*mt)
            && !store.latency_bound()
        {
            let cached = &self.var(var).entries;
            let (direct, rest): (Vec<ChunkPlan>, Vec<ChunkPlan>) = plans.into_iter().partition(|p| !cached.contains_key(&p.idx));
            plans = rest;
            let out = MemOut { ptr: buf.as_mut_ptr(), len: buf.len() };
            let results: Vec<Result<()>> = crate::parallel::run(|| {
                direct.par_iter().map_init(Vec::new, |scratch, p| read_direct(store, layout, p, &out, scratch)).collect()
            });
            results.into_iter().collect::<Result<()>>()?;
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
                    vc.entries.get_mut(&p.idx).ok_or_else(|| Error::new(Kind::Internal, "chunk not cached"))?.last_use = clock;
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
                    let e = vc.entries.get_mut(&p.idx).ok_or_else(|| Error::new(Kind::Internal, "chunk not cached"))?;
                    e.last_use = clock;
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

    /// Writes a selection from memory into cached chunks (marked dirty).
    pub fn put(
        &mut self,
        store: &dyn Zmap,
        var: (usize, usize),
        layout: &Layout,
        shape: &[u64],
        sel: &Selection,
        mut mem: Mem<'_>,
    ) -> Result<bool> {
        let mut plans = plan(layout, shape, sel);
        if let Mem::Bytes(buf, mt) = &mem
            && layout.is_plain(*mt)
            && layout.quantize.is_none()
            && !layout.sharded
            && layout.storage != StorageKind::Bool
            && !store.latency_bound()
        {
            // Whole chunks laid out contiguously in the caller's memory go straight to storage:
            // no copy, no cache entry (a cached copy would now be stale, so it is dropped).
            let (direct, rest): (Vec<ChunkPlan>, Vec<ChunkPlan>) = plans.into_iter().partition(|p| contiguous_span(layout, p).is_some());
            plans = rest;
            for p in direct {
                let (moff, n) = contiguous_span(layout, &p).expect("checked");
                store.put(&layout.chunk_key(&p.idx), &buf[moff * layout.item..(moff + n) * layout.item])?;
                let vc = self.var(var);
                if let Some(e) = vc.entries.remove(&p.idx) {
                    vc.bytes -= e.buf.bytes();
                }
            }
        }
        let idxs: Vec<(Vec<u64>, bool)> = plans.iter().map(|p| (p.idx.clone(), p.whole)).collect();
        self.load(store, var, layout, &idxs)?;
        self.clock += 1;
        let clock = self.clock;
        let vc = self.var(var);
        let mut range = false;
        for p in &plans {
            let e = vc.entries.get_mut(&p.idx).ok_or_else(|| Error::new(Kind::Internal, "chunk not cached"))?;
            e.last_use = clock;
            e.dirty = true;
            e.pending = None;
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
        Ok(range)
    }

    /// Keeps a variable's cache within `budget` bytes, writing dirty chunks it drops.
    pub fn trim(&mut self, store: &dyn Zmap, var: (usize, usize), layout: &Layout, budget: usize) -> Result<()> {
        let vc = self.var(var);
        if vc.bytes <= budget {
            return Ok(());
        }
        let mut order: Vec<(u64, Vec<u64>)> = vc.entries.iter().map(|(k, e)| (e.last_use, k.clone())).collect();
        order.sort();
        let mut victims = Vec::new();
        let mut bytes = vc.bytes;
        for (_, k) in order {
            if bytes <= budget {
                break;
            }
            if let Some(e) = vc.entries.get(&k) {
                bytes -= e.buf.bytes();
                victims.push(k);
            }
        }
        let dirty: Vec<DirtyChunk<'_>> =
            victims.iter().filter_map(|k| vc.entries.get(k).filter(|e| e.dirty).map(|e| (k, &e.buf, e.pending.as_ref()))).collect();
        write_chunks(store, layout, &dirty)?;
        for k in victims {
            if let Some(e) = vc.entries.remove(&k) {
                vc.bytes -= e.buf.bytes();
            }
        }
        Ok(())
    }

    /// Writes every dirty chunk of one variable (they stay cached, now clean).
    pub fn flush_var(&mut self, store: &dyn Zmap, var: (usize, usize), layout: &Layout) -> Result<()> {
        let Some(vc) = self.vars.get_mut(&var) else { return Ok(()) };
        let dirty: Vec<DirtyChunk<'_>> = vc.entries.iter().filter(|(_, e)| e.dirty).map(|(k, e)| (k, &e.buf, e.pending.as_ref())).collect();
        if dirty.is_empty() {
            return Ok(());
        }
        write_chunks(store, layout, &dirty)?;
        for e in vc.entries.values_mut() {
            e.dirty = false;
            e.pending = None;
        }
        Ok(())
    }

    pub fn dirty_vars(&self) -> Vec<(usize, usize)> {
        self.vars.iter().filter(|(_, vc)| vc.entries.values().any(|e| e.dirty)).map(|(k, _)| *k).collect()
    }

    /// Forgets a variable's chunks (its storage moved or its layout changed).
    pub fn forget(&mut self, var: (usize, usize)) {
        self.vars.remove(&var);
    }
}

/// Encodes chunks in parallel and stores them.
/// A dirty chunk on its way to storage, with its background encoding if one was started.
type DirtyChunk<'a> = (&'a Vec<u64>, &'a ChunkBuf, Option<&'a Pending>);

fn encoded<'b>(layout: &Layout, buf: &'b ChunkBuf, pending: Option<&Pending>) -> Result<std::borrow::Cow<'b, [u8]>> {
    if layout.sharded && layout.is_fill(buf) {
        // No bytes: the shard index marks the inner chunk empty (read back as fill), and a
        // shard left with no chunks is not stored at all, as zarr-python does.
        return Ok(std::borrow::Cow::Borrowed(&[]));
    }
    match pending.and_then(|p| p.take(layout)) {
        Some(bytes) => bytes.map(std::borrow::Cow::Owned),
        None => layout.encode(buf),
    }
}

fn write_chunks(store: &dyn Zmap, layout: &Layout, chunks: &[DirtyChunk<'_>]) -> Result<()> {
    if store.concurrent_puts() && chunks.len() > 1 {
        // Each task encodes its chunk and stores it: compression on one core overlaps the
        // writes of the other, with no barrier between encoding and storing.
        let results: Vec<Result<()>> =
            crate::parallel::run(|| chunks.par_iter().map(|(k, b, p)| store.put(&layout.chunk_key(k), &encoded(layout, b, *p)?)).collect());
        return results.into_iter().collect();
    }
    // Encode in parallel batches (bounded memory), then hand each batch to the store at once
    // (S3 sends it concurrently).
    for batch in chunks.chunks(store.batch_size()) {
        if layout.filters.is_empty() && !layout.big_endian && layout.storage != StorageKind::Half && !store.latency_bound() {
            for (k, b, _) in batch {
                store.put(&layout.chunk_key(k), &layout.encode(b)?)?;
            }
            continue;
        }
        let all: Vec<Result<(String, Vec<u8>)>> = if batch.len() > 1 {
            crate::parallel::run(|| {
                batch.par_iter().map(|(k, b, p)| Ok((layout.chunk_key(k), encoded(layout, b, *p)?.into_owned()))).collect()
            })
        } else {
            batch.iter().map(|(k, b, p)| Ok((layout.chunk_key(k), encoded(layout, b, *p)?.into_owned()))).collect()
        };
        let items = all.into_iter().collect::<Result<Vec<_>>>()?;
        store.put_many(items)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projections() {
        let p = project(3, 5, 1, 4);
        assert_eq!(p.iter().map(|x| (x.chunk, x.first_off, x.first_k, x.n)).collect::<Vec<_>>(), vec![(0, 3, 0, 1), (1, 0, 1, 4)]);
        let p = project(1, 4, 3, 4);
        assert_eq!(
            p.iter().map(|x| (x.chunk, x.first_off, x.first_k, x.n)).collect::<Vec<_>>(),
            vec![(0, 1, 0, 1), (1, 0, 1, 2), (2, 2, 3, 1)]
        );
    }

    #[test]
    fn selection_rules() {
        let shape = [4u64, 6];
        let req = |start: Option<&'static [usize]>, count: Option<&'static [usize]>| Request { start, count, stride: None, imap: None };
        assert_eq!(select(&shape, &[false, false], false, &req(None, Some(&[1, 1]))).unwrap_err().kind, Kind::InvalidCoords);
        assert_eq!(select(&shape, &[false, false], false, &req(Some(&[4, 0]), Some(&[1, 1]))).unwrap_err().kind, Kind::InvalidCoords);
        assert!(select(&shape, &[false, false], false, &req(Some(&[4, 0]), Some(&[0, 1]))).is_ok());
        assert_eq!(select(&shape, &[false, false], false, &req(Some(&[1, 0]), None)).unwrap_err().kind, Kind::Edge);
        assert_eq!(select(&shape, &[false, false], false, &req(Some(&[3, 0]), Some(&[2, 1]))).unwrap_err().kind, Kind::Edge);
        assert!(select(&shape, &[true, false], true, &req(Some(&[10, 0]), Some(&[2, 6]))).is_ok());
        let s = select(&shape, &[false, false], false, &req(Some(&[0, 0]), None)).unwrap();
        assert_eq!(s.imap, vec![6, 1]);
        let bad = Request { start: Some(&[0, 0]), count: Some(&[0, 0]), stride: Some(&[1, 0]), imap: None };
        assert_eq!(select(&shape, &[false, false], false, &bad).unwrap_err().kind, Kind::Stride);
    }
}

//! One chunk's bytes: decoding and encoding through the filter chain, fill values, byte order
//! and fixed-width strings (`Layout`), and the decoded form the cache holds (`ChunkBuf`).

use super::mem::MemType;
use crate::codec;
use crate::error::{Error, Kind, Result, err};
use crate::model::{Endian, Model, StorageKind, Var};
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::zmap::Key;

/// Decoded chunk contents in native byte order.
#[derive(Debug, Clone)]
pub(crate) enum ChunkBuf {
    Fixed(Vec<u8>),
    Strings(Vec<Option<String>>),
}

impl ChunkBuf {
    pub(super) fn bytes(&self) -> usize {
        match self {
            ChunkBuf::Fixed(b) => b.len(),
            ChunkBuf::Strings(s) => s.iter().map(|x| x.as_ref().map_or(8, |s| s.len() + 24)).sum(),
        }
    }
}

/// Everything needed to turn a variable's chunks into bytes and back.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub nctype: NcType,
    pub chunk_shape: Vec<u64>,
    pub nelems: usize,
    pub item: usize,
    pub big_endian: bool,
    pub storage: StorageKind,
    pub width: usize,
    pub filters: Vec<crate::codec::Filter>,
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
    pub quantize: Option<crate::nc::quantize::Quantizer>,
}

impl Layout {
    pub(crate) fn new(model: &Model, var: &Var, key: String) -> Result<Layout> {
        let chunk_shape = if var.dimids.is_empty() { vec![] } else { var.chunks.clone() };
        let nelems = chunk_shape
            .iter()
            .try_fold(1usize, |a, &c| a.checked_mul(c as usize))
            .ok_or_else(|| Error::new(Kind::NoMem, "chunk too large"))?;
        let sharded = var.stored.v3.as_ref().is_some_and(|v| v.shard.is_some());
        if let Some(f) = var.filters.iter().find(|f| !codec::is_supported(f) && !codec::is_object_codec(f)) {
            let id = f.raw.as_ref().and_then(|r| r.get("id")).map(|v| v.to_string()).unwrap_or_else(|| f.id.to_string());
            return err(Kind::NoFilter, format!("codec {id} is not available"));
        }
        let big_endian = var.endian == Endian::Big && var.nctype.is_numeric();
        // Plugin filters with HDF5's set_local run on the parameters it makes for this type
        // and chunk shape.
        let filters = var
            .filters
            .iter()
            .filter(|f| !codec::is_object_codec(f))
            .map(|f| if var.stored.v3.is_some() { codec::v3_effective(f) } else { f.clone() })
            .map(|f| codec::localize(&f, var.nctype, big_endian, &chunk_shape))
            .collect::<Result<Vec<_>>>()?;
        Ok(Layout {
            nctype: var.nctype,
            chunk_shape,
            nelems,
            item: var.nctype.size(),
            big_endian,
            storage: var.stored.element,
            width: model.maxstrlen(var),
            filters,
            key,
            // Inner chunks of a shard go by virtual `c/i/j` keys that `ShardStore` maps.
            sep: if sharded { '/' } else { var.stored.separator },
            default_keys: sharded || var.stored.v3.as_ref().is_some_and(|v| v.default_keys),
            sharded,
            fill: if var.no_fill { None } else { Some(var.fill_value()) },
            fortran: var.stored.fortran_order,
            perm: var
                .stored
                .v3
                .as_ref()
                .and_then(|v| v.transpose.clone())
                .or_else(|| var.stored.fortran_order.then(|| (0..var.dimids.len()).rev().collect())),
            quantize: {
                let fill = match var.declared_fill() {
                    Values::Float(v) => v.first().map(|&f| f as f64),
                    Values::Double(v) => v.first().copied(),
                    _ => None,
                };
                fill.and_then(|f| crate::nc::quantize::Quantizer::new(var.quantize.0, var.quantize.1, var.nctype, f))
            },
        })
    }

    /// This layout for a store that takes chunks as values (`Caps::raw_chunks`): no codec,
    /// native byte order, elements as the variable's type holds them. The variable keeps its
    /// codecs and byte order for the files that store it.
    pub(crate) fn into_values(mut self) -> Layout {
        self.filters.clear();
        self.big_endian = false;
        self.perm = None;
        self
    }

    /// The most bytes a stored chunk object can have: the raw chunk plus room for any
    /// codec's framing and incompressible-data overhead. Objects above it are corrupt or
    /// hostile and are refused before they are read (reliability.md §4.2, §4.3 N8).
    /// Variable-length (object codec) chunks are bounded by `NCZARR_MAX_CHUNK_MB` instead.
    pub(crate) fn stored_limit(&self) -> crate::zmap::Limit {
        let per_element = match self.storage {
            // No bound follows from the metadata: the stated one (NCZARR_MAX_CHUNK_MB).
            StorageKind::Vlen => return crate::zmap::Limit { bytes: crate::config::max_chunk_bytes(), kind: Kind::NcZarr },
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

    pub(crate) fn chunk_key(&self, idx: &[u64]) -> Result<Key> {
        let sep = self.sep.to_string();
        let joined = idx.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(&sep);
        let name = match (self.default_keys, idx.is_empty()) {
            (true, true) => "c".to_string(),
            (true, false) => format!("c{sep}{joined}"),
            (false, true) => "0".to_string(),
            (false, false) => joined,
        };
        Key::new(crate::model::join_key(&self.key, &name))
    }

    /// Element strides inside a chunk: C order, or the stored axis order of `order: "F"`
    /// (v2) and `transpose` (v3) arrays.
    pub(super) fn chunk_strides(&self) -> Vec<usize> {
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

    pub(super) fn is_text(&self) -> bool {
        self.nctype == NcType::String
    }

    pub(crate) fn fill_chunk(&self) -> ChunkBuf {
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

    pub(crate) fn decode(&self, stored: Option<Vec<u8>>) -> Result<ChunkBuf> {
        let Some(bytes) = stored else { return Ok(self.fill_chunk()) };
        let ctx = |e: Error| Error::new(e.kind, format!("{}: {}", self.key, e.context));
        match (self.is_text(), self.storage) {
            (false, StorageKind::Half) => {
                let mut raw = codec::decode(&self.filters, bytes, 2, self.nelems * 2).map_err(ctx)?;
                if self.big_endian {
                    swap_bytes(&mut raw, 2);
                }
                Ok(ChunkBuf::Fixed(
                    raw.chunks_exact(2)
                        .flat_map(|h| crate::nc::values::f16_to_f32(u16::from_le_bytes([h[0], h[1]])).to_ne_bytes())
                        .collect(),
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

    pub(crate) fn encode<'b>(&self, buf: &'b ChunkBuf) -> Result<std::borrow::Cow<'b, [u8]>> {
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

    pub(super) fn encode_owned(&self, buf: &ChunkBuf) -> Result<Vec<u8>> {
        match buf {
            ChunkBuf::Fixed(b) if self.storage == StorageKind::Half => {
                let mut raw: Vec<u8> = b
                    .chunks_exact(4)
                    .flat_map(|f| crate::nc::values::f32_to_f16(f32::from_ne_bytes([f[0], f[1], f[2], f[3]])).to_le_bytes())
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
    pub(super) fn is_plain(&self, mt: MemType) -> bool {
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
    pub(super) fn decodes_into(&self, mt: MemType) -> bool {
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
    pub(super) fn is_fill(&self, buf: &ChunkBuf) -> bool {
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
    pub(super) fn clip(&self, s: String) -> String {
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

pub(super) fn decode_vlen(raw: &[u8], nelems: usize) -> Result<ChunkBuf> {
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

pub(super) fn swap_bytes(raw: &mut [u8], item: usize) {
    if item > 1 {
        for e in raw.chunks_exact_mut(item) {
            e.reverse();
        }
    }
}

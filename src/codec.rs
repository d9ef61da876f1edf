//! The codec registry: Zarr codec JSON ↔ netCDF/HDF5 filter ids and parameters.
//!
//! Two `match` tables, one per direction. Codecs without an HDF5 id (gzip, lz4, ...) are read
//! with id 0 and kept as raw JSON. The encoders and decoders themselves belong to the data path.

use crate::error::{Kind, Result, err};
use crate::json::{int_param, to_bytes};
use serde_json::{Value, json};

/// One entry of a variable's filter chain, in encode order.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// HDF5 filter id, 0 for a codec with no HDF5 id (only ever read from storage).
    pub id: u32,
    pub params: Vec<u32>,
    /// The codec JSON as stored, for codecs we did not create (kept verbatim).
    pub raw: Option<Value>,
}

/// Largest decoded chunk we accept (bytes): metadata asking for more is refused at open.
pub const MAX_CHUNK_BYTES: u128 = 4_294_967_295;

/// Codecs that turn array elements into bytes themselves (zarr's variable-length strings):
/// they replace the fixed-width element layout instead of filtering its bytes.
pub fn is_object_codec(f: &Filter) -> bool {
    f.raw.as_ref().and_then(|r| r.get("id")).and_then(|v| v.as_str()).is_some_and(|id| id == "vlen-utf8" || id == "vlen-bytes")
}

pub(crate) const DEFLATE: u32 = 1;
pub(crate) const SHUFFLE: u32 = 2;
pub(crate) const FLETCHER32: u32 = 3;
pub(crate) const SZIP: u32 = 4;
pub(crate) const BZIP2: u32 = 307;
pub(crate) const BLOSC: u32 = 32001;
pub(crate) const ZSTD: u32 = 32015;

/// Filters this library implements (what `nc_inq_filter_avail` reports).
pub(crate) const AVAILABLE: &[u32] = &[DEFLATE, SHUFFLE, FLETCHER32, BZIP2, BLOSC, ZSTD];

const BLOSC_NAMES: [&str; 6] = ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"];

/// A filter from its Zarr JSON; unknown codecs become id 0 with the JSON kept.
pub fn from_zarr(v: &Value) -> Result<Filter> {
    let obj = v.as_object().ok_or_else(|| crate::error::Error::new(Kind::NcZarr, "codec is not an object"))?;
    let id = obj.get("id").and_then(Value::as_str).ok_or_else(|| crate::error::Error::new(Kind::NcZarr, "codec without string id"))?;
    let level = || int_param(obj.get("level")).unwrap_or(0);
    let keep = |id: u32, params: Vec<u32>| Ok(Filter { id, params, raw: Some(v.clone()) });
    match id {
        "zlib" => keep(DEFLATE, vec![level() as u32]),
        "shuffle" => keep(SHUFFLE, vec![]),
        "fletcher32" => keep(FLETCHER32, vec![]),
        "szip" => {
            keep(SZIP, vec![int_param(obj.get("mask")).unwrap_or(0) as u32, int_param(obj.get("pixels-per-block")).unwrap_or(0) as u32])
        }
        "bz2" => keep(BZIP2, vec![level() as u32]),
        "zstd" => keep(ZSTD, vec![level() as i32 as u32]),
        "blosc" => {
            let cname = obj.get("cname").and_then(Value::as_str).unwrap_or("lz4");
            let code = BLOSC_NAMES.iter().position(|n| *n == cname).unwrap_or(1) as u32;
            let shuffle = int_param(obj.get("shuffle")).unwrap_or(1).clamp(0, 2) as u32;
            keep(
                BLOSC,
                vec![
                    0,
                    0,
                    0,
                    int_param(obj.get("blocksize")).unwrap_or(0) as u32,
                    int_param(obj.get("clevel")).unwrap_or(5) as u32,
                    shuffle,
                    code,
                ],
            )
        }
        _ => keep(0, vec![]),
    }
}

/// Validates a filter definition from the API (`nc_def_var_filter`).
pub fn check_params(id: u32, params: &[u32]) -> Result<()> {
    match id {
        DEFLATE if params.len() != 1 || params[0] > 9 => err(Kind::Invalid, "deflate level"),
        BZIP2 if params.len() != 1 || !(1..=9).contains(&params[0]) => err(Kind::Invalid, "bzip2 level"),
        ZSTD if params.len() != 1 || !(-131072..=22).contains(&(params[0] as i32)) => err(Kind::Invalid, "zstd level"),
        BLOSC if params.len() < 7 || params[5] > 2 || params[6] > 5 || params[6] == 3 => err(Kind::Invalid, "blosc parameters"),
        SZIP if params.len() != 2 => err(Kind::Invalid, "szip parameters"),
        DEFLATE | SHUFFLE | FLETCHER32 | BZIP2 | ZSTD | BLOSC | SZIP => Ok(()),
        _ => err(Kind::Invalid, format!("filter id {id} is not implemented")),
    }
}

/// The Zarr JSON for a filter; `elem_size` is the variable's element size (shuffle, C1).
pub fn to_zarr(f: &Filter, elem_size: usize) -> Value {
    if f.id == 0 || matches!(codec_id(f).as_str(), "gzip" | "crc32c") {
        return f.raw.clone().unwrap_or(Value::Null);
    }
    let p = |i: usize| f.params.get(i).copied().unwrap_or(0);
    match f.id {
        DEFLATE => json!({"id": "zlib", "level": p(0)}),
        SHUFFLE => json!({"id": "shuffle", "elementsize": elem_size}),
        FLETCHER32 => json!({"id": "fletcher32"}),
        SZIP => json!({"id": "szip", "mask": p(0), "pixels-per-block": p(1)}),
        BZIP2 => json!({"id": "bz2", "level": p(0)}),
        ZSTD => json!({"id": "zstd", "level": p(0) as i32}),
        BLOSC => {
            json!({"id": "blosc", "clevel": p(4), "blocksize": 0, "cname": BLOSC_NAMES.get(p(6) as usize).copied().unwrap_or("lz4"), "shuffle": p(5)})
        }
        _ => f.raw.clone().unwrap_or(Value::Null),
    }
}

/// `_Codecs`: the codec list netcdf-c exposes as a virtual attribute, in its JSON style
/// (`{"id": "zlib", "level": 3}`, list items joined by `,`); codecs read from storage are
/// shown exactly as stored.
pub fn codecs_text(filters: &[Filter], elem_size: usize) -> String {
    let parts: Vec<String> = filters.iter().map(|f| netcdf_json(f.raw.as_ref().unwrap_or(&to_zarr(f, elem_size)))).collect();
    format!("[{}]", parts.join(","))
}

pub fn netcdf_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m.iter().map(|(k, v)| format!("{}: {}", Value::String(k.clone()), netcdf_json(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(netcdf_json).collect::<Vec<_>>().join(",")),
        other => String::from_utf8_lossy(&to_bytes(other)).into_owned(),
    }
}

// ---- encoding and decoding -------------------------------------------------------------------

/// Slack allowed above the decoded chunk size while a chain is being undone (fletcher32 adds
/// 4 bytes per stage); anything larger is a decompression bomb or a wrong chunk.
const DECODE_SLACK: usize = 64;

fn filter_error(what: impl std::fmt::Display) -> crate::error::Error {
    crate::error::Error::new(Kind::Filter, what.to_string())
}

/// The numcodecs id of a filter: the stored codec's own id when there is one (so a `gzip`
/// or `crc32c` read as deflate/fletcher32 keeps its framing), else by HDF5 id.
fn codec_id(f: &Filter) -> String {
    if let Some(id) = f.raw.as_ref().and_then(|r| r.get("id")).and_then(Value::as_str) {
        return id.to_string();
    }
    match f.id {
        DEFLATE => "zlib".into(),
        SHUFFLE => "shuffle".into(),
        FLETCHER32 => "fletcher32".into(),
        SZIP => "szip".into(),
        BZIP2 => "bz2".into(),
        ZSTD => "zstd".into(),
        BLOSC => "blosc".into(),
        _ => String::new(),
    }
}

// ---- Zarr v3 codec names (zarr-v3.md §6) ---------------------------------------------------

/// A v3 bytes→bytes codec as a filter. Known names map to HDF5 ids (gzip reports deflate,
/// crc32c fletcher32); the codec's framing is kept in `raw` under a numcodecs-style id.
pub fn from_v3(v: &Value) -> Result<Filter> {
    let obj = v.as_object().ok_or_else(|| crate::error::Error::new(Kind::NcZarr, "codec is not an object"))?;
    let name = obj.get("name").and_then(Value::as_str).ok_or_else(|| crate::error::Error::new(Kind::NcZarr, "codec without a name"))?;
    let mut conf = match obj.get("configuration") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return err(Kind::NcZarr, format!("codec {name}: configuration is not an object")),
    };
    let base = name.strip_prefix("numcodecs.").unwrap_or(name);
    let level = int_param(conf.get("level")).unwrap_or(0);
    Ok(match base {
        "gzip" => Filter { id: DEFLATE, params: vec![level.clamp(0, 9) as u32], raw: Some(json!({"id": "gzip", "level": level})) },
        "crc32c" => Filter { id: FLETCHER32, params: vec![], raw: Some(json!({"id": "crc32c"})) },
        "blosc" => {
            let shuffle = match conf.get("shuffle") {
                Some(Value::String(s)) if s == "noshuffle" => 0,
                Some(Value::String(s)) if s == "bitshuffle" => 2,
                Some(Value::String(_)) => 1,
                other => int_param(other).unwrap_or(1),
            };
            conf.insert("shuffle".into(), json!(shuffle));
            conf.insert("id".into(), json!("blosc"));
            from_zarr(&Value::Object(conf))?
        }
        _ => {
            conf.insert("id".into(), json!(base));
            let f = from_zarr(&Value::Object(conf))?;
            // Unknown names keep the v3 spelling for messages and `_Codecs`.
            if f.id == 0 && !is_supported(&f) { Filter { id: 0, params: vec![], raw: Some(json!({"id": name})) } } else { f }
        }
    })
}

/// The v3 JSON we write for a filter (§6 table); `elem_size` is the element size.
pub fn to_v3(f: &Filter, elem_size: usize) -> Value {
    let p = |i: usize| f.params.get(i).copied().unwrap_or(0);
    let id = codec_id(f);
    match (f.id, id.as_str()) {
        (DEFLATE, "zlib") if f.raw.is_some() => json!({"name": "numcodecs.zlib", "configuration": {"level": p(0)}}),
        (DEFLATE, _) => json!({"name": "gzip", "configuration": {"level": p(0)}}),
        (SHUFFLE, _) => json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": elem_size}}),
        (FLETCHER32, "fletcher32") if f.raw.is_some() => json!({"name": "numcodecs.fletcher32"}),
        (FLETCHER32, _) => json!({"name": "crc32c"}),
        (BZIP2, _) => json!({"name": "numcodecs.bz2", "configuration": {"level": p(0)}}),
        (ZSTD, _) => json!({"name": "zstd", "configuration": {"level": p(0) as i32, "checksum": false}}),
        (BLOSC, _) => {
            let shuffle = ["noshuffle", "shuffle", "bitshuffle"][p(5).min(2) as usize];
            json!({"name": "blosc", "configuration": {
            "typesize": elem_size, "cname": BLOSC_NAMES.get(p(6) as usize).copied().unwrap_or("lz4"), "clevel": p(4),
            "shuffle": shuffle, "blocksize": 0}})
        }
        _ => {
            let mut conf = f.raw.clone().and_then(|r| r.as_object().cloned()).unwrap_or_default();
            conf.remove("id");
            let name =
                if id.contains('.') || ["gzip", "zstd", "blosc", "crc32c"].contains(&id.as_str()) { id } else { format!("numcodecs.{id}") };
            if conf.is_empty() { json!({"name": name}) } else { json!({"name": name, "configuration": conf}) }
        }
    }
}

/// The codec a filter runs as in a v3 array: deflate is gzip, fletcher32 is crc32c there.
pub fn v3_effective(f: &Filter) -> Filter {
    match (f.id, &f.raw) {
        (DEFLATE, None) => Filter { raw: Some(json!({"id": "gzip", "level": f.params.first().copied().unwrap_or(1)})), ..f.clone() },
        (FLETCHER32, None) => Filter { raw: Some(json!({"id": "crc32c"})), ..f.clone() },
        _ => f.clone(),
    }
}

/// CRC-32C (Castagnoli), as the v3 `crc32c` codec and shard indexes append it.
pub fn crc32c(data: &[u8]) -> u32 {
    // The crate uses SSE4.2 / ARMv8 CRC instructions where the CPU has them.
    crc32c::crc32c(data)
}

/// Splits a `crc32c`-suffixed buffer, verifying the checksum.
pub fn check_crc32c(data: &[u8]) -> Result<&[u8]> {
    if data.len() < 4 {
        return err(Kind::Filter, "crc32c: chunk too short");
    }
    let (body, sum) = data.split_at(data.len() - 4);
    if crc32c(body).to_le_bytes() != sum {
        return err(Kind::Filter, "crc32c checksum mismatch");
    }
    Ok(body)
}

/// Codecs whose data this library can encode and decode.
pub fn is_supported(f: &Filter) -> bool {
    matches!(codec_id(f).as_str(), "zlib" | "gzip" | "shuffle" | "fletcher32" | "crc32c" | "bz2" | "zstd" | "blosc" | "lz4")
}

/// Shuffle element size: the recorded one when it is a real size (numcodecs treats ≤ 1 as
/// "no shuffle"); netcdf-c's `elementsize: 0` meant the variable's type size.
fn shuffle_size(f: &Filter, elem_size: usize) -> usize {
    match f.raw.as_ref().and_then(|r| int_param(r.get("elementsize"))) {
        Some(n) if n >= 2 => n as usize,
        Some(1) => 1,
        _ => elem_size,
    }
}

fn shuffle(data: &[u8], es: usize) -> Vec<u8> {
    if es <= 1 || data.len() < es {
        return data.to_vec();
    }
    let count = data.len() / es;
    let mut out = vec![0u8; data.len()];
    for (i, elem) in data.chunks_exact(es).enumerate() {
        for (b, &byte) in elem.iter().enumerate() {
            out[b * count + i] = byte;
        }
    }
    out[count * es..].copy_from_slice(&data[count * es..]);
    out
}

fn unshuffle(data: &[u8], es: usize) -> Vec<u8> {
    if es <= 1 || data.len() < es {
        return data.to_vec();
    }
    let count = data.len() / es;
    let mut out = vec![0u8; data.len()];
    for (i, elem) in out.chunks_exact_mut(es).enumerate() {
        for (b, byte) in elem.iter_mut().enumerate() {
            *byte = data[b * count + i];
        }
    }
    out[count * es..].copy_from_slice(&data[count * es..]);
    out
}

/// Fletcher-32 as HDF5 and numcodecs compute it (16-bit big-endian words).
pub fn fletcher32(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0xffffu32, 0xffffu32);
    let words = data.len() / 2;
    let mut i = 0;
    let mut left = words;
    while left > 0 {
        let n = left.min(360);
        left -= n;
        for _ in 0..n {
            sum1 += ((data[i] as u32) << 8) | data[i + 1] as u32;
            sum2 += sum1;
            i += 2;
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if data.len() % 2 == 1 {
        sum1 += (data[i] as u32) << 8;
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    (sum2 << 16) | sum1
}

/// Reads a decompressor's output, refusing more than `cap` bytes.
fn read_capped(mut r: impl std::io::Read, cap: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::with_capacity(cap.min(1 << 26));
    (&mut r).take(cap as u64 + 1).read_to_end(&mut out).map_err(filter_error)?;
    if out.len() > cap {
        return err(Kind::Filter, "decompressed data larger than the chunk");
    }
    Ok(out)
}

/// zlib/gzip streams through libdeflate: several times faster than zlib at level 1, and its
/// one-shot API decodes straight into a buffer of the expected size (no growth, no bombs).
fn deflate(data: &[u8], level: i32, gzip: bool) -> Result<Vec<u8>> {
    let lvl = libdeflater::CompressionLvl::new(level.max(0)).map_err(|_| crate::error::Error::new(Kind::Filter, "deflate level"))?;
    let mut c = libdeflater::Compressor::new(lvl);
    let bound = if gzip { c.gzip_compress_bound(data.len()) } else { c.zlib_compress_bound(data.len()) };
    let mut out = vec![0u8; bound];
    let n = if gzip { c.gzip_compress(data, &mut out) } else { c.zlib_compress(data, &mut out) }.map_err(filter_error)?;
    out.truncate(n);
    Ok(out)
}

fn inflate(data: &[u8], cap: usize, gzip: bool) -> Result<Vec<u8>> {
    let mut d = libdeflater::Decompressor::new();
    let mut out = vec![0u8; cap];
    let n = if gzip { d.gzip_decompress(data, &mut out) } else { d.zlib_decompress(data, &mut out) }.map_err(|e| match e {
        libdeflater::DecompressionError::InsufficientSpace => {
            crate::error::Error::new(Kind::Filter, "decompressed data larger than the chunk")
        }
        other => filter_error(other),
    })?;
    out.truncate(n);
    Ok(out)
}

fn level_of(f: &Filter, key: &str, default: i64) -> i64 {
    f.raw.as_ref().and_then(|r| int_param(r.get(key))).unwrap_or(default)
}

// blosc-src builds c-blosc; naming the crate makes cargo link it.
use blosc_src as _;

mod blosc_ffi {
    use std::ffi::{c_char, c_int, c_void};
    unsafe extern "C" {
        pub fn blosc_compress_ctx(
            clevel: c_int,
            doshuffle: c_int,
            typesize: usize,
            nbytes: usize,
            src: *const c_void,
            dest: *mut c_void,
            destsize: usize,
            compressor: *const c_char,
            blocksize: usize,
            numinternalthreads: c_int,
        ) -> c_int;
        pub fn blosc_decompress_ctx(src: *const c_void, dest: *mut c_void, destsize: usize, numinternalthreads: c_int) -> c_int;
        pub fn blosc_cbuffer_validate(cbuffer: *const c_void, cbytes: usize, nbytes: *mut usize) -> c_int;
    }
}

fn blosc_encode(f: &Filter, data: &[u8], elem_size: usize) -> Result<Vec<u8>> {
    let p = |i: usize| f.params.get(i).copied().unwrap_or(0);
    let cname = std::ffi::CString::new(*BLOSC_NAMES.get(p(6) as usize).unwrap_or(&"lz4")).map_err(filter_error)?;
    let typesize = elem_size.clamp(1, 255);
    let mut out = vec![0u8; data.len() + 16 + 64];
    // SAFETY: src/dest point to live buffers of the stated sizes; blosc writes at most destsize.
    let n = unsafe {
        blosc_ffi::blosc_compress_ctx(
            p(4).min(9) as i32,
            p(5) as i32,
            typesize,
            data.len(),
            data.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            out.len(),
            cname.as_ptr(),
            p(3) as usize,
            1,
        )
    };
    if n <= 0 {
        return err(Kind::Filter, "blosc compression failed");
    }
    out.truncate(n as usize);
    Ok(out)
}

fn blosc_decode(data: &[u8], cap: usize) -> Result<Vec<u8>> {
    let mut nbytes = 0usize;
    // SAFETY: blosc reads at most `data.len()` bytes to validate the header.
    if data.len() < 16 || unsafe { blosc_ffi::blosc_cbuffer_validate(data.as_ptr().cast(), data.len(), &mut nbytes) } != 0 {
        return err(Kind::Filter, "corrupt blosc header");
    }
    if nbytes > cap {
        return err(Kind::Filter, "blosc data larger than the chunk");
    }
    let mut out = vec![0u8; nbytes];
    // SAFETY: the header was validated against the buffer; `out` holds `nbytes`.
    let n = unsafe { blosc_ffi::blosc_decompress_ctx(data.as_ptr().cast(), out.as_mut_ptr().cast(), nbytes, 1) };
    if n < 0 || n as usize != nbytes {
        return err(Kind::Filter, "blosc decompression failed");
    }
    Ok(out)
}

fn encode_one(f: &Filter, data: &[u8], elem_size: usize) -> Result<Vec<u8>> {
    use std::io::Write;
    Ok(match codec_id(f).as_str() {
        "zlib" => {
            let level = f.params.first().copied().unwrap_or(level_of(f, "level", 1) as u32).min(9);
            deflate(data, level as i32, false)?
        }
        "gzip" => deflate(data, level_of(f, "level", 1).clamp(0, 9) as i32, true)?,
        "shuffle" => shuffle(data, shuffle_size(f, elem_size)),
        "fletcher32" => {
            let mut out = Vec::with_capacity(data.len() + 4);
            out.extend_from_slice(data);
            out.extend_from_slice(&fletcher32(data).to_le_bytes());
            out
        }
        "crc32c" => {
            let mut out = Vec::with_capacity(data.len() + 4);
            out.extend_from_slice(data);
            out.extend_from_slice(&crc32c(data).to_le_bytes());
            out
        }
        "bz2" => {
            let level = f.params.first().copied().unwrap_or(9).clamp(1, 9);
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(level));
            e.write_all(data).map_err(filter_error)?;
            e.finish().map_err(filter_error)?
        }
        "zstd" => {
            let level = f.params.first().map(|&p| p as i32).unwrap_or(level_of(f, "level", 3) as i32);
            zstd::bulk::compress(data, level).map_err(filter_error)?
        }
        "lz4" => {
            let mut out = (data.len() as u32).to_le_bytes().to_vec();
            out.extend_from_slice(&lz4_flex::block::compress(data));
            out
        }
        "blosc" => blosc_encode(f, data, elem_size)?,
        other => return err(Kind::NoFilter, format!("codec {other:?} is not available")),
    })
}

fn decode_one(f: &Filter, data: Vec<u8>, elem_size: usize, cap: usize) -> Result<Vec<u8>> {
    Ok(match codec_id(f).as_str() {
        "zlib" => inflate(&data, cap, false)?,
        "gzip" => inflate(&data, cap, true)?,
        "shuffle" => unshuffle(&data, shuffle_size(f, elem_size)),
        "fletcher32" => {
            if data.len() < 4 {
                return err(Kind::Filter, "fletcher32: chunk too short");
            }
            let (body, sum) = data.split_at(data.len() - 4);
            if fletcher32(body).to_le_bytes() != sum {
                return err(Kind::Filter, "fletcher32 checksum mismatch");
            }
            body.to_vec()
        }
        "crc32c" => check_crc32c(&data)?.to_vec(),
        "bz2" => read_capped(bzip2::read::BzDecoder::new(&data[..]), cap)?,
        "zstd" => zstd::bulk::decompress(&data, cap).map_err(filter_error)?,
        "lz4" => {
            if data.len() < 4 {
                return err(Kind::Filter, "lz4: chunk too short");
            }
            let n = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize;
            if n > cap {
                return err(Kind::Filter, "lz4 data larger than the chunk");
            }
            let mut out = vec![0u8; n];
            let got = lz4_flex::block::decompress_into(&data[4..], &mut out).map_err(filter_error)?;
            if got != n {
                return err(Kind::Filter, "lz4: short block");
            }
            out
        }
        "blosc" => blosc_decode(&data, cap)?,
        other => return err(Kind::NoFilter, format!("codec {other:?} is not available")),
    })
}

/// Encodes raw chunk bytes through the chain, in definition order.
pub fn encode(filters: &[Filter], raw: &[u8], elem_size: usize) -> Result<Vec<u8>> {
    let Some((first, rest)) = filters.split_first() else { return Ok(raw.to_vec()) };
    rest.iter().try_fold(encode_one(first, raw, elem_size)?, |data, f| encode_one(f, &data, elem_size))
}

/// Decodes a stored chunk through the chain in reverse; the result must be exactly
/// `expected` bytes, and no stage may grow past that (bounded memory on hostile input).
pub fn decode(filters: &[Filter], stored: Vec<u8>, elem_size: usize, expected: usize) -> Result<Vec<u8>> {
    let cap = expected + DECODE_SLACK;
    let out = filters.iter().rev().try_fold(stored, |data, f| decode_one(f, data, elem_size, cap))?;
    if out.len() != expected {
        let kind = if filters.is_empty() { Kind::NcZarr } else { Kind::Filter };
        return err(kind, format!("chunk decodes to {} bytes, expected {expected}", out.len()));
    }
    Ok(out)
}

/// Decodes straight into `out` (the chunk's exact size) when the chain allows it without an
/// intermediate buffer: a single zlib or gzip stage. `Ok(false)`: use `decode`.
pub fn decode_into(filters: &[Filter], stored: &[u8], out: &mut [u8]) -> Result<bool> {
    let [f] = filters else { return Ok(false) };
    let gzip = match codec_id(f).as_str() {
        "zlib" => false,
        "gzip" => true,
        _ => return Ok(false),
    };
    let mut d = libdeflater::Decompressor::new();
    let n = if gzip { d.gzip_decompress(stored, out) } else { d.zlib_decompress(stored, out) }.map_err(|e| match e {
        libdeflater::DecompressionError::InsufficientSpace => {
            crate::error::Error::new(Kind::Filter, "decompressed data larger than the chunk")
        }
        other => filter_error(other),
    })?;
    if n != out.len() {
        return err(Kind::Filter, format!("chunk decodes to {n} bytes, expected {}", out.len()));
    }
    Ok(true)
}

/// Decodes a chunk whose size is not known in advance (variable-length strings); bounded by
/// the largest chunk we accept.
pub fn decode_unsized(filters: &[Filter], stored: Vec<u8>, elem_size: usize) -> Result<Vec<u8>> {
    let cap = MAX_CHUNK_BYTES as usize;
    filters.iter().rev().try_fold(stored, |data, f| decode_one(f, data, elem_size, cap))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filt(v: Value) -> Filter {
        from_zarr(&v).unwrap()
    }

    #[test]
    fn numcodecs_vectors() {
        // numcodecs.Fletcher32().encode(b"abcde")
        let f = filt(json!({"id": "fletcher32"}));
        assert_eq!(encode(std::slice::from_ref(&f), b"abcde", 1).unwrap(), b"abcde\xc7\x29\xf0\x4f");
        // numcodecs.LZ4().encode(b"abcdeabcde" * 3)
        let lz = filt(json!({"id": "lz4", "acceleration": 1}));
        let v = [0x1e, 0, 0, 0, 0x5f, 0x61, 0x62, 0x63, 0x64, 0x65, 0x05, 0x00, 0x01, 0x50, 0x61, 0x62, 0x63, 0x64, 0x65];
        assert_eq!(decode(&[lz], v.to_vec(), 1, 30).unwrap(), b"abcdeabcde".repeat(3));
    }

    #[test]
    fn v3_codecs() {
        // The CRC-32C check value, and zarr-python's 48-byte chunk + 4 (zarr-v3.md §6).
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        let g = from_v3(&json!({"name": "gzip", "configuration": {"level": 5}})).unwrap();
        assert_eq!((g.id, g.params.clone()), (DEFLATE, vec![5]));
        assert_eq!(to_v3(&g, 4), json!({"name": "gzip", "configuration": {"level": 5}}));
        let b = from_v3(&json!({"name": "blosc", "configuration": {"typesize": 4, "cname": "zstd", "clevel": 1, "shuffle": "bitshuffle", "blocksize": 0}})).unwrap();
        assert_eq!((b.id, b.params[5], b.params[6]), (BLOSC, 2, 5));
        let data: Vec<u8> = (0..48u8).collect();
        for f in [
            g,
            b,
            from_v3(&json!({"name": "crc32c"})).unwrap(),
            from_v3(&json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}})).unwrap(),
        ] {
            let enc = encode(std::slice::from_ref(&f), &data, 4).unwrap();
            assert_eq!(decode(&[f], enc, 4, 48).unwrap(), data);
        }
        let c = from_v3(&json!({"name": "crc32c"})).unwrap();
        let mut enc = encode(std::slice::from_ref(&c), &data, 4).unwrap();
        assert_eq!(enc.len(), 52);
        enc[0] ^= 1;
        assert_eq!(decode(&[c], enc, 4, 48).unwrap_err().kind, Kind::Filter);
        let unknown = from_v3(&json!({"name": "mystery"})).unwrap();
        assert_eq!(decode(&[unknown], vec![1], 1, 1).unwrap_err().kind, Kind::NoFilter);
    }

    #[test]
    fn round_trips_and_bounds() {
        let data: Vec<u8> = (0..4096u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
        for chain in [
            vec![json!({"id": "shuffle", "elementsize": 4}), json!({"id": "zlib", "level": 1})],
            vec![json!({"id": "zstd", "level": 3})],
            vec![json!({"id": "bz2", "level": 9})],
            vec![json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})],
            vec![json!({"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 2, "blocksize": 0})],
            vec![json!({"id": "gzip", "level": 5}), json!({"id": "fletcher32"})],
            vec![json!({"id": "lz4", "acceleration": 1})],
        ] {
            let filters: Vec<Filter> = chain.into_iter().map(filt).collect();
            let enc = encode(&filters, &data, 4).unwrap();
            assert_eq!(decode(&filters, enc.clone(), 4, data.len()).unwrap(), data);
            // A chunk declared smaller than its content is refused, not over-allocated.
            assert!(decode(&filters, enc, 4, 100).is_err());
        }
        // A zlib bomb: 512 KiB of zeros for an expected 24-byte chunk.
        let z = vec![filt(json!({"id": "zlib", "level": 9}))];
        let bomb = encode(&z, &vec![0u8; 512 * 1024], 1).unwrap();
        assert_eq!(decode(&z, bomb, 1, 24).unwrap_err().kind, Kind::Filter);
        assert_eq!(decode(&z, b"not zlib".to_vec(), 1, 24).unwrap_err().kind, Kind::Filter);
        let unknown = vec![filt(json!({"id": "evilcodec"}))];
        assert_eq!(decode(&unknown, vec![1, 2], 1, 2).unwrap_err().kind, Kind::NoFilter);
        assert_eq!(decode(&[], vec![1, 2, 3], 1, 4).unwrap_err().kind, Kind::NcZarr);
    }
}

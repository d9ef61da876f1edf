//! Codecs: netCDF/HDF5 filters ↔ Zarr codecs, and the encoders and decoders that run them.
//!
//! `CODECS` is the one table: each row names a codec in every world (numcodecs id, HDF5 id,
//! v2 and v3 JSON) and says how it transforms bytes; each codec lives in its own file. Adding
//! a codec is one file and one row. Codecs without an HDF5 id (gzip, crc32c, lz4) are read
//! with id 0 and kept as their stored JSON.

mod blosc;
mod bzip2;
mod crc32c;
mod fletcher32;
mod lz4;
pub mod plugin;
mod shuffle;
mod szip;
mod zlib;
mod zstd;

pub(crate) use crc32c::{check_crc32c, crc32c};
pub use fletcher32::fletcher32;

use crate::error::{Kind, Result, err};
use crate::json::{int_param, to_bytes};
use serde_json::{Map, Value, json};

/// One entry of a variable's filter chain, in encode order.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// HDF5 filter id, 0 for a codec with no HDF5 id (only ever read from storage).
    pub id: u32,
    pub params: Vec<u32>,
    /// The codec JSON as stored, for codecs we did not create (kept verbatim).
    pub raw: Option<Value>,
}

impl Filter {
    /// The i-th netCDF parameter, 0 when absent.
    pub(crate) fn param(&self, i: usize) -> u32 {
        self.params.get(i).copied().unwrap_or(0)
    }
}

/// Largest decoded chunk we accept (bytes): metadata asking for more is refused at open.
pub(crate) const MAX_CHUNK_BYTES: u128 = 4_294_967_295;

/// Codecs that turn array elements into bytes themselves (zarr's variable-length strings):
/// they replace the fixed-width element layout instead of filtering its bytes.
pub(crate) fn is_object_codec(f: &Filter) -> bool {
    f.raw.as_ref().and_then(|r| r.get("id")).and_then(|v| v.as_str()).is_some_and(|id| id == "vlen-utf8" || id == "vlen-bytes")
}

// HDF5 filter ids (registered with The HDF Group), defined here only: the header generator
// writes `FILTER_IDS` into netcdf_filter.h as `H5Z_FILTER_<name>`.
pub const DEFLATE: u32 = 1;
pub const SHUFFLE: u32 = 2;
pub const FLETCHER32: u32 = 3;
pub const SZIP: u32 = 4;
pub const BZIP2: u32 = 307;
pub const BLOSC: u32 = 32001;
pub const ZSTD: u32 = 32015;
/// Every id above with its netcdf_filter.h name.
pub const FILTER_IDS: &[(&str, u32)] = &[
    ("DEFLATE", DEFLATE),
    ("SHUFFLE", SHUFFLE),
    ("FLETCHER32", FLETCHER32),
    ("SZIP", SZIP),
    ("BZIP2", BZIP2),
    ("ZSTD", ZSTD),
    ("BLOSC", BLOSC),
];

/// Filters this library implements itself.
pub(crate) const AVAILABLE: &[u32] = &[DEFLATE, SHUFFLE, FLETCHER32, BZIP2, BLOSC, ZSTD];

/// Is HDF5 filter `id` available, built in or from a plugin (`nc_inq_filter_avail`)?
pub fn available(id: u32) -> bool {
    AVAILABLE.contains(&id) || plugin::find(id).is_some()
}

/// The codec id of the entry written for an HDF5 filter that no codec (ours or numcodecs')
/// describes: `{"id": "hdf5", "filter_id": N, "parameters": [...]}` (`numcodecs.hdf5` in v3),
/// so no reader takes its chunks for raw data.
pub(crate) const HDF5_ENTRY: &str = "hdf5";

/// The built-in codec row of a filter, when it has one that runs.
fn built_in(f: &Filter) -> Option<&'static Run> {
    by_id(&codec_id(f)).and_then(|c| c.run.as_ref())
}

/// The plugin that runs a filter with no built-in encoder.
fn plugin_for(f: &Filter) -> Option<&'static plugin::Plugin> {
    if built_in(f).is_some() {
        return None;
    }
    // A filter with HDF5's set_local runs only on parameters that went through it.
    plugin::find(f.id).filter(|p| !p.set_local || is_localized(f))
}

/// A filter whose parameters `localize` made (the chain a variable's chunks run through; never
/// written to metadata).
fn is_localized(f: &Filter) -> bool {
    f.raw.as_ref().and_then(|r| r.get("local")).and_then(Value::as_bool) == Some(true)
}

/// The filter as it runs on chunks of a variable of `nctype` (`big_endian`) chunked as `chunk`:
/// a plugin filter with HDF5's `set_local` gets the parameters HDF5 would make for it
/// (`plugin::Plugin::localize`); any other filter is unchanged. Metadata keeps the parameters
/// the program gave, as netcdf-c's codecs do, so they are made again on every open.
pub(crate) fn localize(f: &Filter, nctype: crate::nc::types::NcType, big_endian: bool, chunk: &[u64]) -> Result<Filter> {
    if built_in(f).is_some() || is_localized(f) {
        return Ok(f.clone());
    }
    match plugin::find(f.id) {
        Some(p) if p.set_local => {
            let params = p.localize(&f.params, nctype, big_endian, chunk)?;
            let raw = json!({"id": HDF5_ENTRY, "filter_id": f.id, "parameters": params, "local": true});
            Ok(Filter { id: f.id, params, raw: Some(raw) })
        }
        _ => Ok(f.clone()),
    }
}

// ---- the codec table ------------------------------------------------------------------------

/// One codec: its names and its parameters in each world, and how it runs.
pub(crate) struct Codec {
    /// numcodecs id: `id` in v2 metadata, and the name a stored codec goes by.
    id: &'static str,
    /// HDF5 filter id (netCDF's filter API); 0: none of its own.
    hdf5_id: u32,
    /// netCDF parameters from the v2 codec JSON.
    params: fn(&Map<String, Value>) -> Vec<u32>,
    /// The v2 codec JSON of a filter; the second argument is the element size.
    v2_json: fn(&Filter, usize) -> Value,
    /// The v3 codec JSON of a filter (zarr-v3.md §6).
    v3_json: fn(&Filter, usize) -> Value,
    /// `None`: metadata only, no encoder here (NC_ENOFILTER on data).
    run: Option<Run>,
}

/// (filter, data, element size) → encoded bytes.
type EncodeFn = fn(&Filter, &[u8], usize) -> Result<Vec<u8>>;
/// (filter, stored bytes, element size, largest output allowed) → decoded bytes.
type DecodeFn = fn(&Filter, Vec<u8>, usize, usize) -> Result<Vec<u8>>;

struct Run {
    encode: EncodeFn,
    decode: DecodeFn,
}

const CODECS: &[Codec] = &[
    zlib::ZLIB,
    zlib::GZIP,
    shuffle::SHUFFLE_CODEC,
    fletcher32::FLETCHER32_CODEC,
    crc32c::CRC32C,
    bzip2::BZ2,
    zstd::ZSTD_CODEC,
    lz4::LZ4,
    blosc::BLOSC_CODEC,
    szip::SZIP_CODEC,
];

fn by_id(id: &str) -> Option<&'static Codec> {
    CODECS.iter().find(|c| c.id == id)
}

fn by_hdf5_id(id: u32) -> Option<&'static Codec> {
    CODECS.iter().find(|c| id != 0 && c.hdf5_id == id)
}

impl Codec {
    /// A codec with no HDF5 id: only ever read from storage, so its metadata is kept as
    /// stored (v2) or renamed generically (v3).
    const fn stored_only(id: &'static str, run: Run) -> Codec {
        Codec { id, hdf5_id: 0, params: |_| Vec::new(), v2_json: raw_json, v3_json: generic_v3, run: Some(run) }
    }
}

/// `data` followed by a 4-byte checksum (fletcher32, crc32c).
fn with_checksum(data: &[u8], sum: [u8; 4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 4);
    out.extend_from_slice(data);
    out.extend_from_slice(&sum);
    out
}

/// The stored JSON itself (codecs we never define).
fn raw_json(f: &Filter, _: usize) -> Value {
    f.raw.clone().unwrap_or(Value::Null)
}

/// v3 JSON from the stored v2-style JSON: bare names for codecs v3 defines, `numcodecs.` for
/// the rest, the other members as configuration.
fn generic_v3(f: &Filter, _: usize) -> Value {
    let id = codec_id(f);
    let mut conf = f.raw.clone().and_then(|r| r.as_object().cloned()).unwrap_or_default();
    conf.remove("id");
    let name = if id.contains('.') || ["gzip", "zstd", "blosc", "crc32c"].contains(&id.as_str()) { id } else { format!("numcodecs.{id}") };
    if conf.is_empty() { json!({"name": name}) } else { json!({"name": name, "configuration": conf}) }
}

fn filter_error(what: impl std::fmt::Display) -> crate::error::Error {
    crate::error::Error::new(Kind::Filter, what.to_string())
}

/// An integer member of the stored codec JSON.
fn level_of(f: &Filter, key: &str, default: i64) -> i64 {
    f.raw.as_ref().and_then(|r| int_param(r.get(key))).unwrap_or(default)
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

/// The numcodecs id of a filter: the stored codec's own id when there is one (so a `gzip`
/// or `crc32c` read as deflate/fletcher32 keeps its framing), else by HDF5 id.
fn codec_id(f: &Filter) -> String {
    if let Some(id) = f.raw.as_ref().and_then(|r| r.get("id")).and_then(Value::as_str) {
        return id.to_string();
    }
    by_hdf5_id(f.id).map(|c| c.id.to_string()).unwrap_or_default()
}

// ---- metadata -------------------------------------------------------------------------------

/// A filter from its Zarr v2 JSON; unknown codecs (and those without an HDF5 id) become id 0
/// with the JSON kept.
pub(crate) fn from_zarr(v: &Value) -> Result<Filter> {
    let obj = v.as_object().ok_or_else(|| crate::error::Error::new(Kind::NcZarr, "codec is not an object"))?;
    let id = obj.get("id").and_then(Value::as_str).ok_or_else(|| crate::error::Error::new(Kind::NcZarr, "codec without string id"))?;
    if id == HDF5_ENTRY {
        let filter_id = int_param(obj.get("filter_id")).filter(|n| (1..=u32::MAX as i64).contains(n));
        let filter_id = filter_id.ok_or_else(|| crate::error::Error::new(Kind::NcZarr, "hdf5 codec without a filter_id"))?;
        let params = match obj.get("parameters") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|p| int_param(Some(p)).filter(|n| (0..=u32::MAX as i64).contains(n)).map(|n| n as u32))
                .collect::<Option<Vec<u32>>>()
                .ok_or_else(|| crate::error::Error::new(Kind::NcZarr, "hdf5 codec parameters"))?,
            Some(_) => return err(Kind::NcZarr, "hdf5 codec parameters are not a list"),
        };
        return Ok(Filter { id: filter_id as u32, params, raw: Some(v.clone()) });
    }
    Ok(match by_id(id).filter(|c| c.hdf5_id != 0) {
        Some(c) => Filter { id: c.hdf5_id, params: (c.params)(obj), raw: Some(v.clone()) },
        // A codec a codec plugin defines: its HDF5 filter and parameters. (A codec it cannot
        // read stays unknown: its data is NC_ENOFILTER, the metadata still opens.)
        None => match plugin::codec_lib::by_codec_id(id).and_then(|c| c.to_params(v).ok().map(|p| (c.hdf5_id, p))) {
            Some((hdf5_id, params)) => Filter { id: hdf5_id, params, raw: Some(v.clone()) },
            None => Filter { id: 0, params: vec![], raw: Some(v.clone()) },
        },
    })
}

/// Validates a filter definition from the API (`nc_def_var_filter`).
pub(crate) fn check_params(id: u32, params: &[u32]) -> Result<()> {
    match id {
        DEFLATE if params.len() != 1 || params[0] > 9 => err(Kind::Invalid, "deflate level"),
        // netcdf-c reads the level and ignores any further values (nccopy -F "v,307,9,4").
        BZIP2 if params.is_empty() || !(1..=9).contains(&params[0]) => err(Kind::Invalid, "bzip2 level"),
        ZSTD if params.len() != 1 || !(-131072..=22).contains(&(params[0] as i32)) => err(Kind::Invalid, "zstd level"),
        BLOSC if params.len() < 7 || params[5] > 2 || params[6] > 5 || params[6] == 3 => err(Kind::Invalid, "blosc parameters"),
        SZIP if params.len() != 2 => err(Kind::Invalid, "szip parameters"),
        _ if by_hdf5_id(id).is_some() => Ok(()),
        // (A plugin with set_local checks its parameters when the variable's chunks are laid
        // out: `localize`.)
        _ if plugin::find(id).is_some() => Ok(()),
        // netcdf-c 4.10.1 on NCZarr: an id past HDF5's range is NC_EINVAL, a filter no plugin
        // provides NC_ENOFILTER.
        _ if id > 65535 => err(Kind::Invalid, format!("filter id {id} is past HDF5's 65535")),
        _ => err(Kind::NoFilter, format!("filter id {id} is not available (no plugin provides it)")),
    }
}

/// The Zarr v2 JSON for a filter; `elem_size` is the variable's element size (shuffle, C1).
pub(crate) fn to_zarr(f: &Filter, elem_size: usize) -> Value {
    if f.id == 0 || matches!(codec_id(f).as_str(), "gzip" | "crc32c") {
        return raw_json(f, elem_size);
    }
    match by_hdf5_id(f.id) {
        Some(c) => (c.v2_json)(f, elem_size),
        // A plugin filter defined through the API: its codec plugin's JSON, else the `hdf5`
        // entry (also when the codec plugin refuses the parameters: never a silent drop).
        None if f.raw.is_none() => plugin::codec_lib::by_hdf5_id(f.id)
            .and_then(|c| c.to_json(&f.params).ok())
            .unwrap_or_else(|| json!({"id": HDF5_ENTRY, "filter_id": f.id, "parameters": f.params})),
        None => raw_json(f, elem_size),
    }
}

/// `_Codecs`: the codec list netcdf-c exposes as a virtual attribute, in its JSON style
/// (`{"id": "zlib", "level": 3}`, list items joined by `,`); codecs read from storage are
/// shown exactly as stored.
pub(crate) fn codecs_text(filters: &[Filter], elem_size: usize) -> String {
    let parts: Vec<String> = filters.iter().map(|f| netcdf_json(f.raw.as_ref().unwrap_or(&to_zarr(f, elem_size)))).collect();
    format!("[{}]", parts.join(","))
}

pub(crate) fn netcdf_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m.iter().map(|(k, v)| format!("{}: {}", Value::String(k.clone()), netcdf_json(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(netcdf_json).collect::<Vec<_>>().join(",")),
        other => String::from_utf8_lossy(&to_bytes(other)).into_owned(),
    }
}

// ---- Zarr v3 codec names (zarr-v3.md §6) ---------------------------------------------------

/// A v3 bytes→bytes codec as a filter. Known names map to HDF5 ids (gzip reports deflate,
/// crc32c fletcher32); the codec's framing is kept in `raw` under a numcodecs-style id.
pub(crate) fn from_v3(v: &Value) -> Result<Filter> {
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
pub(crate) fn to_v3(f: &Filter, elem_size: usize) -> Value {
    match by_hdf5_id(f.id) {
        Some(c) => (c.v3_json)(f, elem_size),
        // A plugin filter defined through the API: the `hdf5` entry, as `numcodecs.hdf5`.
        None if f.raw.is_none() => generic_v3(&Filter { raw: Some(to_zarr(f, elem_size)), ..f.clone() }, elem_size),
        None => generic_v3(f, elem_size),
    }
}

/// The codec a filter runs as in a v3 array: deflate is gzip, fletcher32 is crc32c there.
pub(crate) fn v3_effective(f: &Filter) -> Filter {
    match (f.id, &f.raw) {
        (DEFLATE, None) => Filter { raw: Some(json!({"id": "gzip", "level": f.params.first().copied().unwrap_or(1)})), ..f.clone() },
        (FLETCHER32, None) => Filter { raw: Some(json!({"id": "crc32c"})), ..f.clone() },
        _ => f.clone(),
    }
}

// ---- encoding and decoding -------------------------------------------------------------------

/// Slack allowed above the decoded chunk size while a chain is being undone (fletcher32 adds
/// 4 bytes per stage); anything larger is a decompression bomb or a wrong chunk.
const DECODE_SLACK: usize = 64;

/// Codecs whose data this library can encode and decode.
pub(crate) fn is_supported(f: &Filter) -> bool {
    built_in(f).is_some() || (f.id != 0 && plugin::find(f.id).is_some())
}

fn unavailable(f: &Filter) -> crate::error::Error {
    let id = codec_id(f);
    let id = if id.is_empty() || id == HDF5_ENTRY { format!("HDF5 filter {}", f.id) } else { format!("codec {id:?}") };
    crate::error::Error::new(Kind::NoFilter, format!("{id} is not available"))
}

fn encode_one(f: &Filter, data: &[u8], elem_size: usize) -> Result<Vec<u8>> {
    if let Some(run) = built_in(f) {
        return (run.encode)(f, data, elem_size);
    }
    match plugin_for(f) {
        // Parameters that went through set_local may still have been made for another chunk
        // shape (a program copying them from an HDF5 file): what such a filter writes must
        // decode back to the chunk's size, or it is refused here rather than read as an error
        // later (the stored data would be lost).
        Some(p) if p.set_local => p.encode_checked(&f.params, data, DECODE_SLACK),
        Some(p) => p.run(&f.params, data, false, usize::MAX),
        None => Err(unavailable(f)),
    }
}

fn decode_one(f: &Filter, data: Vec<u8>, elem_size: usize, cap: usize) -> Result<Vec<u8>> {
    if let Some(run) = built_in(f) {
        return (run.decode)(f, data, elem_size, cap);
    }
    match plugin_for(f) {
        Some(p) => p.run(&f.params, &data, true, cap),
        None => Err(unavailable(f)),
    }
}

/// Encodes raw chunk bytes through the chain, in definition order.
pub(crate) fn encode(filters: &[Filter], raw: &[u8], elem_size: usize) -> Result<Vec<u8>> {
    let Some((first, rest)) = filters.split_first() else { return Ok(raw.to_vec()) };
    rest.iter().try_fold(encode_one(first, raw, elem_size)?, |data, f| encode_one(f, &data, elem_size))
}

/// Decodes a stored chunk through the chain in reverse; the result must be exactly
/// `expected` bytes, and no stage may grow past that (bounded memory on hostile input).
pub(crate) fn decode(filters: &[Filter], stored: Vec<u8>, elem_size: usize, expected: usize) -> Result<Vec<u8>> {
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
pub(crate) fn decode_into(filters: &[Filter], stored: &[u8], out: &mut [u8], elem_size: usize) -> Result<bool> {
    let gzip_of = |f: &Filter| match codec_id(f).as_str() {
        "zlib" => Some(false),
        "gzip" => Some(true),
        _ => None,
    };
    let inflate = |gzip: bool, out: &mut [u8]| -> Result<()> {
        let n = zlib::inflate_into(stored, out, gzip)?;
        if n != out.len() {
            return err(Kind::Filter, format!("chunk decodes to {n} bytes, expected {}", out.len()));
        }
        Ok(())
    };
    match filters {
        [f] => match gzip_of(f) {
            Some(gzip) => inflate(gzip, out).map(|()| true),
            None => Ok(false),
        },
        // netCDF-4's shuffle + deflate: inflated into a buffer kept per thread, unshuffled into
        // place (no chunk-sized allocation, page faults or copy per chunk).
        [s, f] if codec_id(s) == "shuffle" => {
            let Some(gzip) = gzip_of(f) else { return Ok(false) };
            let es = shuffle::element_size(s, elem_size);
            SCRATCH.with(|cell| {
                let mut scratch = cell.try_borrow_mut().map_err(|_| crate::error::Error::new(Kind::Internal, "decode scratch in use"))?;
                scratch.resize(out.len(), 0);
                inflate(gzip, &mut scratch)?;
                shuffle::unshuffle_into(&scratch, es, out);
                Ok(true)
            })
        }
        _ => Ok(false),
    }
}

thread_local! {
    /// `decode_into`'s inflate buffer, one per worker thread.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Decodes a chunk whose size is not known in advance (variable-length strings); bounded by
/// the largest chunk we accept.
pub(crate) fn decode_unsized(filters: &[Filter], stored: Vec<u8>, elem_size: usize) -> Result<Vec<u8>> {
    let cap = MAX_CHUNK_BYTES as usize;
    filters.iter().rev().try_fold(stored, |data, f| decode_one(f, data, elem_size, cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plugin_filters_are_named_by_an_hdf5_entry() {
        // A filter no codec describes (LZ4's HDF5 id) is written as the `hdf5` entry...
        let f = Filter { id: 32004, params: vec![1 << 20], raw: None };
        let v2 = to_zarr(&f, 4);
        assert_eq!(v2, json!({"id": "hdf5", "filter_id": 32004, "parameters": [1048576]}));
        assert_eq!(to_v3(&f, 4), json!({"name": "numcodecs.hdf5", "configuration": {"filter_id": 32004, "parameters": [1048576]}}));
        // ... and read back as that filter, from v2 and from v3.
        let back = from_zarr(&v2).unwrap();
        assert_eq!((back.id, back.params.clone()), (32004, vec![1 << 20]));
        let back = from_v3(&to_v3(&f, 4)).unwrap();
        assert_eq!((back.id, back.params), (32004, vec![1 << 20]));
        // Malformed entries are metadata errors, never a filter 0 read as raw data.
        for bad in
            [json!({"id": "hdf5"}), json!({"id": "hdf5", "filter_id": -1}), json!({"id": "hdf5", "filter_id": 4, "parameters": [-1]})]
        {
            assert_eq!(from_zarr(&bad).unwrap_err().kind, Kind::NcZarr, "{bad}");
        }
    }

    fn every_codec() -> Vec<Filter> {
        [
            r#"{"id":"zlib","level":1}"#,
            r#"{"id":"gzip","level":1}"#,
            r#"{"id":"shuffle","elementsize":4}"#,
            r#"{"id":"fletcher32"}"#,
            r#"{"id":"zstd","level":1}"#,
            r#"{"id":"bz2","level":1}"#,
            r#"{"id":"blosc","cname":"lz4","clevel":1,"shuffle":1,"blocksize":0}"#,
            r#"{"id":"lz4","acceleration":1}"#,
            r#"{"id":"crc32c"}"#,
        ]
        .iter()
        .filter_map(|t| from_zarr(&serde_json::from_str(t).ok()?).ok())
        .collect()
    }

    proptest! {
        /// Stored chunk bytes through every codec's decoder: the chunk or an error, never a
        /// panic and never more than the chunk (zip bombs refused).
        #[test]
        fn fuzz_codec_decode(bytes in proptest::collection::vec(any::<u8>(), 0..4096), raw in proptest::collection::vec(any::<u8>(), 0..512),
                             edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6), cut in any::<usize>()) {
            for f in every_codec() {
                let chain = std::slice::from_ref(&f);
                if let Ok(out) = decode(chain, bytes.clone(), 4, 1024) {
                    prop_assert!(out.len() <= 1024);
                }
                let _ = decode_unsized(chain, bytes.clone(), 4);
                if let Ok(good) = encode(chain, &raw[..raw.len() / 4 * 4], 4) {
                    let _ = decode(chain, crate::bytes::mutated(&good, &edits, cut), 4, raw.len() / 4 * 4);
                }
            }
        }

        /// Codec JSON of any shape (v2 `compressor`/`filters`, v3 `codecs`): a filter or an error.
        #[test]
        fn fuzz_codec_json(text in any::<String>(), id in prop::sample::select(vec!["zlib", "blosc", "shuffle", "zstd", "bz2", "gzip", "lz4", "crc32c", "bytes", "transpose", "sharding_indexed", "x"]),
                           level in any::<i64>(), extra in any::<String>()) {
            for doc in [format!(r#"{{"id":"{id}","level":{level},"x":"{}"}}"#, extra.escape_default()),
                        format!(r#"{{"name":"{id}","configuration":{{"level":{level},"elementsize":{level}}}}}"#), text.clone()] {
                if let Ok(v) = crate::json::parse(doc.as_bytes(), "t") {
                    let _ = from_zarr(&v);
                    let _ = from_v3(&v);
                }
            }
        }
    }

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

//! The codec registry: Zarr codec JSON ↔ netCDF/HDF5 filter ids and parameters.
//!
//! Two `match` tables, one per direction. Codecs without an HDF5 id (gzip, lz4, ...) are read
//! with id 0 and kept as raw JSON. The encoders and decoders themselves belong to the data path.

use crate::error::{Kind, Result, err};
use crate::format::json::{int_param, to_bytes};
use crate::model::Filter;
use serde_json::{Value, json};

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
    if f.id == 0 {
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

fn netcdf_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m.iter().map(|(k, v)| format!("{}: {}", Value::String(k.clone()), netcdf_json(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(netcdf_json).collect::<Vec<_>>().join(",")),
        other => String::from_utf8_lossy(&to_bytes(other)).into_owned(),
    }
}

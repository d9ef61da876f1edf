//! zlib and gzip (deflate streams) through libdeflate: several times faster than zlib at level
//! 1, and its one-shot API decodes straight into a buffer of the expected size (no growth, no
//! bombs). HDF5's deflate filter is zlib; gzip has no HDF5 id of its own (v3 reports it as
//! deflate, see `from_v3`).

use super::{Codec, DEFLATE, Filter, Run, filter_error, level_of};
use crate::error::{Error, Kind, Result};
use crate::json::int_param;
use serde_json::{Value, json};

pub(super) const ZLIB: Codec = Codec {
    id: "zlib",
    hdf5_id: DEFLATE,
    params: |obj| vec![int_param(obj.get("level")).unwrap_or(0) as u32],
    v2_json: |f, _| json!({"id": "zlib", "level": f.param(0)}),
    v3_json: zlib_v3,
    run: Some(Run { encode: encode_zlib, decode: |_, data, _, cap| inflate(&data, cap, false) }),
};

pub(super) const GZIP: Codec = Codec::stored_only(
    "gzip",
    Run {
        encode: |f, data, _| deflate(data, level_of(f, "level", 1).clamp(0, 9) as i32, true),
        decode: |_, data, _, cap| inflate(&data, cap, true),
    },
);

/// A zlib codec read from storage keeps its v3 name; deflate we define is v3's `gzip`.
fn zlib_v3(f: &Filter, _: usize) -> Value {
    if f.raw.is_some() && super::codec_id(f) == "zlib" {
        json!({"name": "numcodecs.zlib", "configuration": {"level": f.param(0)}})
    } else {
        json!({"name": "gzip", "configuration": {"level": f.param(0)}})
    }
}

fn encode_zlib(f: &Filter, data: &[u8], _: usize) -> Result<Vec<u8>> {
    let level = f.params.first().copied().unwrap_or(level_of(f, "level", 1) as u32).min(9);
    deflate(data, level as i32, false)
}

fn deflate(data: &[u8], level: i32, gzip: bool) -> Result<Vec<u8>> {
    let lvl = libdeflater::CompressionLvl::new(level.max(0)).map_err(|_| Error::new(Kind::Filter, "deflate level"))?;
    let mut c = libdeflater::Compressor::new(lvl);
    let bound = if gzip { c.gzip_compress_bound(data.len()) } else { c.zlib_compress_bound(data.len()) };
    let mut out = vec![0u8; bound];
    let n = if gzip { c.gzip_compress(data, &mut out) } else { c.zlib_compress(data, &mut out) }.map_err(filter_error)?;
    out.truncate(n);
    Ok(out)
}

fn inflate(data: &[u8], cap: usize, gzip: bool) -> Result<Vec<u8>> {
    let mut out = vec![0u8; cap];
    let n = inflate_into(data, &mut out, gzip)?;
    out.truncate(n);
    Ok(out)
}

/// Inflates into `out`; more output than `out` holds is an error (a bomb or a wrong chunk).
pub(super) fn inflate_into(data: &[u8], out: &mut [u8], gzip: bool) -> Result<usize> {
    let mut d = libdeflater::Decompressor::new();
    if gzip { d.gzip_decompress(data, out) } else { d.zlib_decompress(data, out) }.map_err(|e| match e {
        libdeflater::DecompressionError::InsufficientSpace => Error::new(Kind::Filter, "decompressed data larger than the chunk"),
        other => filter_error(other),
    })
}

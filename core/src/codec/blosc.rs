//! Blosc (HDF5 filter 32001, numcodecs and v3 `blosc`) through c-blosc from `blosc-src`.
//! netCDF parameters: 0, 0, 0, blocksize, clevel, shuffle (0 none, 1 byte, 2 bit), compressor.

use super::{BLOSC, Codec, Filter, Run, filter_error};
use crate::error::{Kind, Result, err};
use crate::json::int_param;
use serde_json::{Map, Value, json};

/// Compressor names by their netCDF parameter number.
const NAMES: [&str; 6] = ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"];

pub(super) const BLOSC_CODEC: Codec = Codec {
    id: "blosc",
    hdf5_id: BLOSC,
    params,
    v2_json: |f, _| json!({"id": "blosc", "clevel": f.param(4), "blocksize": f.param(3), "cname": name(f), "shuffle": f.param(5)}),
    v3_json: |f, elem| {
        let shuffle = ["noshuffle", "shuffle", "bitshuffle"][f.param(5).min(2) as usize];
        json!({"name": "blosc", "configuration": {
            "typesize": elem, "cname": name(f), "clevel": f.param(4), "shuffle": shuffle, "blocksize": f.param(3)}})
    },
    run: Some(Run { encode, decode: |_, data, _, cap| decode(&data, cap) }),
};

fn params(obj: &Map<String, Value>) -> Vec<u32> {
    let cname = obj.get("cname").and_then(Value::as_str).unwrap_or("lz4");
    let code = NAMES.iter().position(|n| *n == cname).unwrap_or(1) as u32;
    let shuffle = int_param(obj.get("shuffle")).unwrap_or(1).clamp(0, 2) as u32;
    let blocksize = int_param(obj.get("blocksize")).unwrap_or(0) as u32;
    vec![0, 0, 0, blocksize, int_param(obj.get("clevel")).unwrap_or(5) as u32, shuffle, code]
}

fn name(f: &Filter) -> &'static str {
    NAMES.get(f.param(6) as usize).copied().unwrap_or("lz4")
}

// blosc-src builds c-blosc and declares its functions (its own bindgen output).
use blosc_src as ffi;

fn encode(f: &Filter, data: &[u8], elem_size: usize) -> Result<Vec<u8>> {
    let cname = std::ffi::CString::new(name(f)).map_err(filter_error)?;
    let typesize = elem_size.clamp(1, 255);
    let mut out = vec![0u8; data.len() + 16 + 64];
    // SAFETY: src/dest point to live buffers of the stated sizes; blosc writes at most destsize.
    let n = unsafe {
        ffi::blosc_compress_ctx(
            f.param(4).min(9) as i32,
            f.param(5) as i32,
            typesize,
            data.len(),
            data.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            out.len(),
            cname.as_ptr(),
            f.param(3) as usize,
            1,
        )
    };
    if n <= 0 {
        return err(Kind::Filter, "blosc compression failed");
    }
    out.truncate(n as usize);
    Ok(out)
}

fn decode(data: &[u8], cap: usize) -> Result<Vec<u8>> {
    let mut nbytes = 0usize;
    // SAFETY: blosc reads at most `data.len()` bytes to validate the header.
    if data.len() < 16 || unsafe { ffi::blosc_cbuffer_validate(data.as_ptr().cast(), data.len(), &mut nbytes) } != 0 {
        return err(Kind::Filter, "corrupt blosc header");
    }
    if nbytes > cap {
        return err(Kind::Filter, "blosc data larger than the chunk");
    }
    let mut out = vec![0u8; nbytes];
    // SAFETY: the header was validated against the buffer; `out` holds `nbytes`.
    let n = unsafe { ffi::blosc_decompress_ctx(data.as_ptr().cast(), out.as_mut_ptr().cast(), nbytes, 1) };
    if n < 0 || n as usize != nbytes {
        return err(Kind::Filter, "blosc decompression failed");
    }
    Ok(out)
}

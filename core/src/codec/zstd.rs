//! Zstandard (HDF5 filter 32015, numcodecs and v3 `zstd`). Levels may be negative (fast modes).

use super::{Codec, Run, ZSTD, filter_error, level_of};
use crate::json::int_param;
use serde_json::json;

pub(super) const ZSTD_CODEC: Codec = Codec {
    id: "zstd",
    hdf5_id: ZSTD,
    params: |obj| vec![int_param(obj.get("level")).unwrap_or(0) as i32 as u32],
    v2_json: |f, _| json!({"id": "zstd", "level": f.param(0) as i32}),
    v3_json: |f, _| json!({"name": "zstd", "configuration": {"level": f.param(0) as i32, "checksum": false}}),
    run: Some(Run {
        encode: |f, data, _| {
            let level = f.params.first().map(|&p| p as i32).unwrap_or(level_of(f, "level", 3) as i32);
            zstd::bulk::compress(data, level).map_err(filter_error)
        },
        decode: |_, data, _, cap| zstd::bulk::decompress(&data, cap).map_err(filter_error),
    }),
};

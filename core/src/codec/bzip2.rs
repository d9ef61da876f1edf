//! bzip2 (HDF5 filter 307, numcodecs `bz2`).

use super::{BZIP2, Codec, Run, filter_error, read_capped};
use crate::json::int_param;
use serde_json::json;

pub(super) const BZ2: Codec = Codec {
    id: "bz2",
    hdf5_id: BZIP2,
    params: |obj| vec![int_param(obj.get("level")).unwrap_or(0) as u32],
    v2_json: |f, _| json!({"id": "bz2", "level": f.param(0)}),
    v3_json: |f, _| json!({"name": "numcodecs.bz2", "configuration": {"level": f.param(0)}}),
    run: Some(Run {
        encode: |f, data, _| {
            use std::io::Write;
            let level = f.params.first().copied().unwrap_or(9).clamp(1, 9);
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(level));
            e.write_all(data).map_err(filter_error)?;
            e.finish().map_err(filter_error)
        },
        decode: |_, data, _, cap| read_capped(bzip2::read::BzDecoder::new(&data[..]), cap),
    }),
};

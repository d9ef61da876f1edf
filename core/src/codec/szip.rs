//! szip (HDF5 filter 4): metadata only. Its parameters are read and written so datasets that
//! name it keep their metadata, but no encoder is available (NC_ENOFILTER on data).

use super::{Codec, SZIP, generic_v3};
use crate::json::int_param;
use serde_json::json;

pub(super) const SZIP_CODEC: Codec = Codec {
    id: "szip",
    hdf5_id: SZIP,
    params: |obj| vec![int_param(obj.get("mask")).unwrap_or(0) as u32, int_param(obj.get("pixels-per-block")).unwrap_or(0) as u32],
    v2_json: |f, _| json!({"id": "szip", "mask": f.param(0), "pixels-per-block": f.param(1)}),
    v3_json: generic_v3,
    run: None,
};

//! Byte shuffle (HDF5's shuffle filter, numcodecs `shuffle`): byte k of every element together.

use super::{Codec, Filter, Run, SHUFFLE};
use crate::json::int_param;
use serde_json::json;

pub(super) const SHUFFLE_CODEC: Codec = Codec {
    id: "shuffle",
    hdf5_id: SHUFFLE,
    params: |_| Vec::new(),
    // `elementsize` is the variable's element size (C1: netcdf-c wrote 0).
    v2_json: |_, elem| json!({"id": "shuffle", "elementsize": elem}),
    v3_json: |_, elem| json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": elem}}),
    run: Some(Run {
        encode: |f, data, elem| Ok(shuffle(data, element_size(f, elem))),
        decode: |f, data, elem, _| Ok(unshuffle(&data, element_size(f, elem))),
    }),
};

/// Shuffle element size: the recorded one when it is a real size (numcodecs treats ≤ 1 as
/// "no shuffle"); netcdf-c's `elementsize: 0` meant the variable's type size.
fn element_size(f: &Filter, elem_size: usize) -> usize {
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

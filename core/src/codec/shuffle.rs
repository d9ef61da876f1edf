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
pub(super) fn element_size(f: &Filter, elem_size: usize) -> usize {
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
    let mut out = vec![0u8; data.len()];
    unshuffle_into(data, es, &mut out);
    out
}

/// Unshuffles `data` (as long as `out`) into `out`: element `i`'s byte `b` is at
/// `b * count + i`. The common element sizes go through a fixed-size transpose the compiler
/// unrolls (it was a third of a whole-variable read of shuffled float data).
pub(super) fn unshuffle_into(data: &[u8], es: usize, out: &mut [u8]) {
    if es <= 1 || data.len() < es || data.len() != out.len() {
        let n = data.len().min(out.len());
        out[..n].copy_from_slice(&data[..n]);
        return;
    }
    let count = data.len() / es;
    match es {
        2 => transpose::<2>(data, count, out),
        4 => transpose::<4>(data, count, out),
        8 => transpose::<8>(data, count, out),
        _ => {
            for (i, elem) in out[..count * es].chunks_exact_mut(es).enumerate() {
                for (b, byte) in elem.iter_mut().enumerate() {
                    *byte = data[b * count + i];
                }
            }
        }
    }
    out[count * es..].copy_from_slice(&data[count * es..]);
}

/// Elements of `N` bytes gathered from `N` planes of `count` bytes, 16 elements at a time.
fn transpose<const N: usize>(data: &[u8], count: usize, out: &mut [u8]) {
    const BLOCK: usize = 16;
    let planes: [&[u8]; N] = std::array::from_fn(|b| &data[b * count..(b + 1) * count]);
    let blocks = count / BLOCK;
    for (k, dst) in out[..blocks * BLOCK * N].chunks_exact_mut(BLOCK * N).enumerate() {
        let src: [&[u8; BLOCK]; N] = std::array::from_fn(|b| planes[b][k * BLOCK..(k + 1) * BLOCK].try_into().expect("16 bytes"));
        for i in 0..BLOCK {
            for b in 0..N {
                dst[i * N + b] = src[b][i];
            }
        }
    }
    for i in blocks * BLOCK..count {
        for b in 0..N {
            out[i * N + b] = planes[b][i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unshuffle_undoes_shuffle() {
        for es in [1usize, 2, 3, 4, 8, 16] {
            for len in [0usize, 1, 7, 16, 33, 64 * 8 + 5, 1000] {
                let data: Vec<u8> = (0..len).map(|i| (i * 7 + es) as u8).collect();
                assert_eq!(unshuffle(&shuffle(&data, es), es), data, "element size {es}, {len} bytes");
            }
        }
    }
}

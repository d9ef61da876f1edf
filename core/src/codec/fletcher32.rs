//! Fletcher-32 checksums as HDF5 and numcodecs compute them (16-bit big-endian words),
//! appended little-endian after the data. In v3 datasets the filter runs as `crc32c`.

use super::{Codec, FLETCHER32, Filter, Run, with_checksum};
use crate::error::{Kind, Result, err};
use serde_json::{Value, json};

pub(super) const FLETCHER32_CODEC: Codec = Codec {
    id: "fletcher32",
    hdf5_id: FLETCHER32,
    params: |_| Vec::new(),
    v2_json: |_, _| json!({"id": "fletcher32"}),
    v3_json: fletcher32_v3,
    run: Some(Run { encode: |_, data, _| Ok(with_checksum(data, fletcher32(data).to_le_bytes())), decode: |_, data, _, _| check(&data) }),
};

/// A fletcher32 codec read from storage keeps its name; the one we define is v3's `crc32c`.
fn fletcher32_v3(f: &Filter, _: usize) -> Value {
    if f.raw.is_some() && super::codec_id(f) == "fletcher32" { json!({"name": "numcodecs.fletcher32"}) } else { json!({"name": "crc32c"}) }
}

fn check(data: &[u8]) -> Result<Vec<u8>> {
    if data.len() < 4 {
        return err(Kind::Filter, "fletcher32: chunk too short");
    }
    let (body, sum) = data.split_at(data.len() - 4);
    if fletcher32(body).to_le_bytes() != sum {
        return err(Kind::Filter, "fletcher32 checksum mismatch");
    }
    Ok(body.to_vec())
}

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

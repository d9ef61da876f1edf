//! numcodecs `lz4`: a little-endian u32 of the decoded size, then one LZ4 block. No HDF5 id.

use super::{Codec, Run, filter_error};
use crate::error::{Kind, err};

pub(super) const LZ4: Codec = Codec::stored_only(
    "lz4",
    Run {
        encode: |_, data, _| {
            let mut out = (data.len() as u32).to_le_bytes().to_vec();
            out.extend_from_slice(&lz4_flex::block::compress(data));
            Ok(out)
        },
        decode: |_, data, _, cap| {
            if data.len() < 4 {
                return err(Kind::Filter, "lz4: chunk too short");
            }
            let n = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize;
            if n > cap {
                return err(Kind::Filter, "lz4 data larger than the chunk");
            }
            let mut out = vec![0u8; n];
            let got = lz4_flex::block::decompress_into(&data[4..], &mut out).map_err(filter_error)?;
            if got != n {
                return err(Kind::Filter, "lz4: short block");
            }
            Ok(out)
        },
    },
);

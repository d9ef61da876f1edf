//! CRC-32C (Castagnoli) appended little-endian, as the v3 `crc32c` codec and shard indexes
//! use it. The crate uses SSE4.2 / ARMv8 CRC instructions where the CPU has them.

use super::{Codec, Run, with_checksum};
use crate::error::{Kind, Result, err};

pub(super) const CRC32C: Codec = Codec::stored_only(
    "crc32c",
    Run {
        encode: |_, data, _| Ok(with_checksum(data, crc32c(data).to_le_bytes())),
        decode: |_, data, _, _| Ok(check_crc32c(&data)?.to_vec()),
    },
);

pub(crate) fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// Splits a `crc32c`-suffixed buffer, verifying the checksum.
pub(crate) fn check_crc32c(data: &[u8]) -> Result<&[u8]> {
    if data.len() < 4 {
        return err(Kind::Filter, "crc32c: chunk too short");
    }
    let (body, sum) = data.split_at(data.len() - 4);
    if crc32c(body).to_le_bytes() != sum {
        return err(Kind::Filter, "crc32c checksum mismatch");
    }
    Ok(body)
}

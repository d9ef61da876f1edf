//! What a netCDF file is, from its first bytes: the signatures netcdf-c's `NC_check_file_type`
//! looks for (`CDF\001`, `CDF\002`, `CDF\005`, and HDF5's signature at offset 0 or at a
//! user-block boundary: 512, 1024, 2048, … bytes).

/// The on-disk format of a netCDF file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Classic,
    Offset64,
    Cdf5,
    Hdf5,
}

const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// The format whose signature starts `head` (a netCDF-3 header, or HDF5 at offset 0).
pub fn signature(head: &[u8]) -> Option<FileFormat> {
    match head {
        [b'C', b'D', b'F', 1, ..] => Some(FileFormat::Classic),
        [b'C', b'D', b'F', 2, ..] => Some(FileFormat::Offset64),
        [b'C', b'D', b'F', 5, ..] => Some(FileFormat::Cdf5),
        _ if head.starts_with(HDF5_SIGNATURE) => Some(FileFormat::Hdf5),
        _ => None,
    }
}

/// Offsets where an HDF5 signature may sit in a file of `size` bytes: 0, then every power of
/// two from 512 (HDF5 allows a user block of any such size before the superblock).
pub(crate) fn hdf5_offsets(size: u64) -> impl Iterator<Item = u64> {
    std::iter::once(0).chain(std::iter::successors(Some(512u64), |o| o.checked_mul(2))).take_while(move |o| o.saturating_add(8) <= size)
}

/// The format of a file whose first bytes are `head` (of a file of `size` bytes); `None` when
/// `head` holds no signature. An HDF5 signature past the end of `head` cannot be seen here:
/// `hdf5_offsets` lists where else to look.
pub(crate) fn sniff(head: &[u8], size: u64) -> Option<FileFormat> {
    signature(head).or_else(|| {
        hdf5_offsets(size)
            .filter_map(|o| head.get(usize::try_from(o).ok()?..))
            .find(|at| at.starts_with(HDF5_SIGNATURE))
            .map(|_| FileFormat::Hdf5)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        assert_eq!(signature(b"CDF\x01\0\0"), Some(FileFormat::Classic));
        assert_eq!(signature(b"CDF\x02"), Some(FileFormat::Offset64));
        assert_eq!(signature(b"CDF\x05"), Some(FileFormat::Cdf5));
        assert_eq!(signature(b"CDF\x03"), None);
        assert_eq!(signature(b"\x89HDF\r\n\x1a\nrest"), Some(FileFormat::Hdf5));
        assert_eq!(signature(b"{\"zarr_format\":2}"), None);
        assert_eq!(signature(b""), None);
        let mut blocked = vec![0u8; 1024 + 16];
        blocked[1024..1032].copy_from_slice(HDF5_SIGNATURE);
        assert_eq!(sniff(&blocked, blocked.len() as u64), Some(FileFormat::Hdf5));
        assert_eq!(sniff(&blocked[..600], blocked.len() as u64), None);
        assert_eq!(hdf5_offsets(5000).collect::<Vec<_>>(), vec![0, 512, 1024, 2048, 4096]);
        assert_eq!(hdf5_offsets(4).count(), 0);
    }
}

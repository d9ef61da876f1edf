//! Reading objects out of the archive: by entry, by file offset of a stored entry (`pread`,
//! no inflating), or from memory when staged; every size checked before it is allocated.

use super::{MAX_ENTRY, ZipStore, zip_error};
use crate::error::{Error, Kind, Result, err};
use crate::zmap::{Key, Limit};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

pub(super) fn read_entry(archive: &mut zip::ZipArchive<File>, idx: usize, limit: Limit) -> Result<Vec<u8>> {
    let entry = archive.by_index(idx).map_err(zip_error)?;
    let declared = entry.size();
    if declared > MAX_ENTRY {
        return err(Kind::NoMem, "zip entry larger than the object ceiling");
    }
    limit.check(entry.name(), declared)?;
    let mut buf = Vec::with_capacity(declared.min(1 << 26) as usize);
    entry.take(declared + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 != declared {
        return err(Kind::NcZarr, "zip entry size differs from its declared size");
    }
    Ok(buf)
}

/// Where an object's bytes are: staged in memory, or an entry stored uncompressed at a file
/// offset of the archive or of the next archive (compressed entries are inflated whole).
pub(super) enum Entry {
    Absent,
    Bytes(Vec<u8>),
    Stored(PathBuf, u64, u64),
}

/// `len` bytes at `offset` of the file at `path`.
pub(super) fn read_at(path: &Path, offset: u64, len: u64) -> Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut buf = crate::zmap::zeroed(len)?;
    File::open(path)?.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

impl ZipStore {
    /// An object of at most `limit` bytes; an entry declaring more is refused unread.
    pub(super) fn get_limited(&self, key: &Key, limit: Limit) -> Result<Option<Vec<u8>>> {
        let mut st = self.state();
        if let Some(staged) = st.staged.get(key.as_str()) {
            return Ok(staged.clone());
        }
        if let Some(spill) = &st.spill
            && let Some(&(offset, len)) = spill.at.get(key.as_str())
        {
            limit.check(key, len)?;
            return read_at(&spill.tmp, offset, len).map(Some);
        }
        let Some(&idx) = st.index.get(key.as_str()) else { return Ok(None) };
        let archive = st.archive.as_mut().ok_or_else(|| Error::new(Kind::Internal, "zip archive not open"))?;
        read_entry(archive, idx, limit).map(Some)
    }

    /// An entry to read ranges of: stored entries by position, compressed ones inflated
    /// (refused unread when they declare more than `limit`).
    pub(super) fn stored_entry(&self, key: &Key, limit: Limit) -> Result<Entry> {
        let mut st = self.state();
        if let Some(staged) = st.staged.get(key.as_str()) {
            return Ok(staged.clone().map_or(Entry::Absent, Entry::Bytes));
        }
        if let Some(spill) = &st.spill
            && let Some(&(offset, len)) = spill.at.get(key.as_str())
        {
            return Ok(Entry::Stored(spill.tmp.clone(), offset, len));
        }
        let Some(&idx) = st.index.get(key.as_str()) else { return Ok(Entry::Absent) };
        let archive = st.archive.as_mut().ok_or_else(|| Error::new(Kind::Internal, "zip archive not open"))?;
        let (stored, start, size) = {
            let e = archive.by_index_raw(idx).map_err(zip_error)?;
            (e.compression() == zip::CompressionMethod::Stored, e.data_start(), e.size())
        };
        if stored {
            return Ok(Entry::Stored(self.path.clone(), start, size));
        }
        read_entry(archive, idx, limit).map(Entry::Bytes)
    }
}

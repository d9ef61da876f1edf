//! Objects read by byte range: what a reference store's targets are when their maker opened
//! them (a lazy open hands over the object it scanned), and a local file as one.

use crate::error::{Error, Kind, Result, err};
use std::os::unix::fs::FileExt;

/// One object read by byte range, opened by whoever made the references (a lazy open of a
/// netCDF object hands over the object it scanned).
pub trait RangeSource: Send + Sync {
    /// Its size in bytes.
    fn size(&self) -> u64;
    /// `len` bytes at `offset` (all inside the object).
    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>>;
    /// Its name, for messages.
    fn describe(&self) -> String;
    /// A URL another program can read it by (a reference set names it so): `s3://bucket/key`,
    /// `http(s)://…` or an absolute path; `None`: it has none.
    fn url(&self) -> Option<String> {
        None
    }
}

/// A local file as a `RangeSource`.
pub struct LocalFile {
    file: std::fs::File,
    size: u64,
    name: String,
    /// Its absolute path (what a reference set written from a read of it names).
    absolute: Option<String>,
}

impl LocalFile {
    pub fn open(path: &std::path::Path) -> Result<LocalFile> {
        let name = path.display().to_string();
        let absolute = std::fs::canonicalize(path).ok().map(|p| p.display().to_string());
        let file = std::fs::File::open(path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound { Kind::Errno(libc::ENOENT) } else { Kind::Io };
            Error::new(kind, format!("{name}: {e}"))
        })?;
        let size = file.metadata().map_err(|e| Error::new(Kind::Io, format!("{name}: {e}")))?.len();
        Ok(LocalFile { file, size, name, absolute })
    }
}

impl RangeSource for LocalFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        if offset.checked_add(len).is_none_or(|end| end > self.size) {
            return err(Kind::NcZarr, format!("{}: range {offset}+{len} past its end ({} bytes)", self.name, self.size));
        }
        let mut buf = super::zeroed(len)?;
        self.file.read_exact_at(&mut buf, offset).map_err(|e| Error::new(Kind::Io, format!("{}: {e}", self.name)))?;
        Ok(buf)
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn url(&self) -> Option<String> {
        self.absolute.clone()
    }
}

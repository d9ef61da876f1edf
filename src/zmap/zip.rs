//! Zip-archive store, in netcdf-c's layout: every entry lives under one top-level folder named
//! after the archive minus its extension (`ints.zip` → `ints/...`), entries stored uncompressed.
//!
//! Reads go through the central directory by validated name, never by extracting. Writes are
//! staged in memory and the whole archive is rewritten beside the original and renamed over it
//! at `flush` (sync/close), so the archive on disk is always complete and never has duplicates.
//! Archives written by zarr-python (`ZipStore`, entries at the root) open too.

use super::{ByteRange, Key, Ranges, Zmap, validate_key};
use crate::error::{Error, Kind, Result, err};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use zip::write::SimpleFileOptions;

struct State {
    archive: Option<zip::ZipArchive<File>>,
    /// key (relative to the dataset prefix) → entry index, in archive order.
    index: BTreeMap<String, usize>,
    order: Vec<String>,
    /// Pending changes: `Some(bytes)` written, `None` deleted.
    staged: BTreeMap<String, Option<Vec<u8>>>,
    dirty: bool,
}

pub struct ZipStore {
    path: PathBuf,
    prefix: String,
    state: Mutex<State>,
}

fn zip_error(e: zip::result::ZipError) -> Error {
    match e {
        zip::result::ZipError::Io(io) => io.into(),
        other => Error::new(Kind::NotNetcdf, format!("zip: {other}")),
    }
}

/// Largest object we will inflate from an archive entry (guards against zip bombs).
const MAX_ENTRY: u64 = 1 << 34;

impl ZipStore {
    /// `top_folder`: netcdf-c's layout (entries under one folder named after the archive);
    /// false: entries at the archive root, as zarr-python's `ZipStore` writes v3.
    pub fn create(path: &Path, top_folder: bool) -> Result<ZipStore> {
        if std::fs::symlink_metadata(path).is_ok() {
            std::fs::remove_file(path)?;
        }
        let prefix = if top_folder {
            path.file_stem().and_then(|s| s.to_str()).filter(|s| validate_key(s).is_ok() && !s.is_empty()).unwrap_or("dataset").to_string()
        } else {
            String::new()
        };
        let store = ZipStore {
            path: path.to_path_buf(),
            prefix,
            state: Mutex::new(State { archive: None, index: BTreeMap::new(), order: Vec::new(), staged: BTreeMap::new(), dirty: true }),
        };
        Ok(store)
    }

    pub fn open(path: &Path) -> Result<ZipStore> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return err(Kind::NoObject, format!("{} does not exist", path.display()));
            }
            Err(e) => return Err(e.into()),
        };
        // Duplicate names: zarr-python's ZipStore appends a new entry on every rewrite, and
        // readers (Python's zipfile, zarr) take the last one; the zip crate indexes by name
        // and does the same. We never write duplicates ourselves.
        let mut archive = zip::ZipArchive::new(file).map_err(zip_error)?;
        let mut names: Vec<(String, usize)> = Vec::new();
        let mut seen = BTreeSet::new();
        for i in 0..archive.len() {
            let entry = archive.by_index_raw(i).map_err(zip_error)?;
            let name = entry.name().to_string();
            let is_link = entry.unix_mode().is_some_and(|m| m & 0o170000 == 0o120000);
            if name.starts_with('/') || name.contains('\\') || name.contains('\0') {
                return err(Kind::BadName, format!("zip entry {name:?}"));
            }
            let trimmed = name.trim_end_matches('/');
            if trimmed.split('/').any(|s| s == ".." || s == ".") {
                return err(Kind::BadName, format!("zip entry {name:?}"));
            }
            if !seen.insert(name.clone()) {
                continue;
            }
            if entry.is_dir() || is_link || trimmed.is_empty() {
                continue;
            }
            validate_key(trimmed)?;
            names.push((trimmed.to_string(), i));
        }
        let all: BTreeSet<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
        // netcdf-c takes the folder of the archive's first entry as the dataset root (its own
        // zips: `x/`, `x/.zgroup`, ...), even when the archive root holds metadata as well.
        let first_folder =
            archive.by_index_raw(0).ok().and_then(|e| e.name().split_once('/').map(|(f, _)| f.to_string())).unwrap_or_default();
        let has = |p: &str, m: &str| all.contains(format!("{p}{m}").as_str());
        let has_meta = |p: &str| [".zgroup", ".zarray", ".zattrs", "zarr.json"].iter().any(|m| has(p, m));
        let folder = format!("{first_folder}/");
        // Metadata only at the archive root (zarr-python's layout) is read from the root: in
        // its v3 archives the first folder may be an array with a `zarr.json` of its own, and
        // only a folder that is a group (or the only metadata there is) is taken as the root.
        let prefix = if !first_folder.is_empty() && has_meta(&folder) && (has(&folder, ".zgroup") || !has_meta("")) {
            first_folder
        } else if has_meta("") {
            String::new()
        } else {
            return err(Kind::NotNetcdf, format!("{}: no Zarr metadata in archive", path.display()));
        };
        let lead = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
        let mut index = BTreeMap::new();
        let mut order = Vec::new();
        for (name, i) in names {
            if let Some(rel) = name.strip_prefix(&lead) {
                index.insert(rel.to_string(), i);
                order.push(rel.to_string());
            }
        }
        Ok(ZipStore {
            path: path.to_path_buf(),
            prefix,
            state: Mutex::new(State { archive: Some(archive), index, order, staged: BTreeMap::new(), dirty: false }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn full(&self, key: &str) -> String {
        super::join(&self.prefix, key)
    }
}

fn read_entry(archive: &mut zip::ZipArchive<File>, idx: usize, limit: super::Limit) -> Result<Vec<u8>> {
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

/// Where an object's bytes are: staged in memory, or an archive entry stored uncompressed
/// at a file offset (compressed entries are inflated whole).
enum Entry {
    Absent,
    Bytes(Vec<u8>),
    Stored(u64, u64),
}

impl ZipStore {
    /// An object of at most `limit` bytes; an entry declaring more is refused unread.
    fn get_limited(&self, key: &Key, limit: super::Limit) -> Result<Option<Vec<u8>>> {
        let mut st = self.state();
        if let Some(staged) = st.staged.get(key.as_str()) {
            return Ok(staged.clone());
        }
        let Some(&idx) = st.index.get(key.as_str()) else { return Ok(None) };
        let archive = st.archive.as_mut().ok_or_else(|| Error::new(Kind::Internal, "zip archive not open"))?;
        read_entry(archive, idx, limit).map(Some)
    }

    /// An entry to read ranges of: stored entries by position, compressed ones inflated
    /// (refused unread when they declare more than `limit`).
    fn stored_entry(&self, key: &Key, limit: super::Limit) -> Result<Entry> {
        let mut st = self.state();
        if let Some(staged) = st.staged.get(key.as_str()) {
            return Ok(staged.clone().map_or(Entry::Absent, Entry::Bytes));
        }
        let Some(&idx) = st.index.get(key.as_str()) else { return Ok(Entry::Absent) };
        let archive = st.archive.as_mut().ok_or_else(|| Error::new(Kind::Internal, "zip archive not open"))?;
        let (stored, start, size) = {
            let e = archive.by_index_raw(idx).map_err(zip_error)?;
            (e.compression() == zip::CompressionMethod::Stored, e.data_start(), e.size())
        };
        if stored {
            return Ok(Entry::Stored(start, size));
        }
        read_entry(archive, idx, limit).map(Entry::Bytes)
    }
}

impl State {
    fn live_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.order.iter().filter(|k| !self.staged.contains_key(*k)).cloned().collect();
        keys.extend(self.staged.iter().filter(|(_, v)| v.is_some()).map(|(k, _)| k.clone()));
        keys
    }
}

impl Zmap for ZipStore {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        self.get_limited(key, super::Limit::NONE)
    }

    fn get_many_limited(&self, keys: &[Key], limit: super::Limit) -> Result<Vec<Option<Vec<u8>>>> {
        keys.iter().map(|k| self.get_limited(k, limit)).collect()
    }

    /// Stored (uncompressed) entries are read by `pread` at the entry's data offset: a shard
    /// index or an inner chunk costs what it weighs, not the whole entry.
    /// A raw chunk is at most its exact size: a bigger (compressed) entry is refused unread.
    fn read_into(&self, key: &Key, out: &mut [u8]) -> Result<bool> {
        self.read_scatter(key, &mut [out])
    }

    /// A stored (uncompressed) entry is read with vectored reads from its data offset, straight
    /// into the parts, as the directory store reads its files.
    fn read_scatter(&self, key: &Key, parts: &mut [&mut [u8]]) -> Result<bool> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let exact = super::Limit { bytes: total as u64, kind: Kind::NcZarr };
        match self.stored_entry(key, exact)? {
            Entry::Absent => Ok(false),
            Entry::Bytes(b) => super::scatter_exact(key, Some(b), parts),
            Entry::Stored(start, len) => {
                use std::io::{Seek, SeekFrom};
                super::check_size(key, len, Some(total as u64))?;
                let mut file = File::open(&self.path)?;
                file.seek(SeekFrom::Start(start))?;
                super::read_vectored_exact(key, &mut file, start, parts)?;
                Ok(true)
            }
        }
    }

    fn get_ranges(&self, key: &Key, ranges: &[ByteRange], size: Option<u64>) -> Result<Option<Ranges>> {
        // A compressed entry larger than the expected object is refused unread.
        let limit = size.map_or(super::Limit::NONE, |bytes| super::Limit { bytes, kind: Kind::NcZarr });
        match self.stored_entry(key, limit)? {
            Entry::Absent => Ok(None),
            Entry::Bytes(b) => super::cut_ranges(key, Some(b), ranges, size),
            Entry::Stored(start, len) => {
                use std::os::unix::fs::FileExt;
                super::check_size(key, len, size)?;
                let file = File::open(&self.path)?;
                let parts = ranges
                    .iter()
                    .map(|r| {
                        let (off, n) = r.within(key, len)?;
                        let mut b = vec![0u8; n];
                        file.read_exact_at(&mut b, start + off)?;
                        Ok(b)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Some(Ranges { parts, size: len }))
            }
        }
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        if key.is_empty() {
            return err(Kind::BadName, "empty key");
        }
        let mut st = self.state();
        st.staged.insert(key.to_string(), Some(value.to_vec()));
        st.dirty = true;
        Ok(())
    }

    /// Takes the buffers as they are (no copy): the archive is written from them at flush.
    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        if items.iter().any(|(k, _)| k.is_empty()) {
            return err(Kind::BadName, "empty key");
        }
        let mut st = self.state();
        for (key, value) in items {
            st.staged.insert(key.to_string(), Some(value));
        }
        st.dirty = true;
        Ok(())
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        let lead = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
        let st = self.state();
        let mut out = BTreeSet::new();
        for key in st.live_keys() {
            if let Some(rest) = key.strip_prefix(&lead)
                && let Some(child) = rest.split('/').next().filter(|c| !c.is_empty())
            {
                out.insert(child.to_string());
            }
        }
        Ok(out.into_iter().collect())
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        let lead = format!("{prefix}/");
        let mut st = self.state();
        for key in st.live_keys() {
            if prefix.is_empty() || key == prefix.as_str() || key.starts_with(&lead) {
                st.staged.insert(key, None);
            }
        }
        st.dirty = true;
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        let mut st = self.state();
        if !st.dirty {
            return Ok(());
        }
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
        let tmp =
            dir.join(format!(".{}.nczarr-tmp-{}", self.path.file_name().and_then(|n| n.to_str()).unwrap_or("zip"), std::process::id()));
        let result = (|| -> Result<()> {
            let out = QuietAfterError::new(File::create(&tmp)?);
            let mut writer = zip::ZipWriter::new(out);
            let filled = (|| -> Result<()> {
                let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored).large_file(false);
                let mut dirs_done: BTreeSet<String> = BTreeSet::new();
                let mut add_dirs = |writer: &mut zip::ZipWriter<QuietAfterError>, key: &str| -> Result<()> {
                    if self.prefix.is_empty() {
                        // zarr-python's root layout has no directory entries.
                        return Ok(());
                    }
                    let full = self.full(key);
                    let mut acc = String::new();
                    let segs: Vec<&str> = full.split('/').collect();
                    for seg in &segs[..segs.len() - 1] {
                        acc.push_str(seg);
                        acc.push('/');
                        if dirs_done.insert(acc.clone()) {
                            writer.add_directory(acc.clone(), opts).map_err(zip_error)?;
                        }
                    }
                    Ok(())
                };
                let keys = st.live_keys();
                let State { staged, index, archive, .. } = &mut *st;
                for key in keys {
                    add_dirs(&mut writer, &key)?;
                    if let Some(Some(bytes)) = staged.get(&key) {
                        let big = bytes.len() as u64 >= 0xffff_ffff;
                        writer.start_file(self.full(&key), opts.large_file(big)).map_err(zip_error)?;
                        writer.write_all(bytes)?;
                        continue;
                    }
                    // An unchanged entry is copied as it is stored (no inflate, no re-deflate).
                    let archive = archive.as_mut().ok_or_else(|| Error::new(Kind::Internal, "zip archive"))?;
                    let entry = archive.by_index_raw(index[&key]).map_err(zip_error)?;
                    writer.raw_copy_file_rename(entry, self.full(&key)).map_err(zip_error)?;
                }
                Ok(())
            })();
            filled?;
            writer.finish().map_err(zip_error)?;
            std::fs::rename(&tmp, &self.path)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
            return result;
        }
        let reopened = ZipStore::open(&self.path)?;
        let new_state = reopened.state.into_inner().unwrap_or_else(|p| p.into_inner());
        *st = new_state;
        Ok(())
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// The temporary archive's file. After its first I/O error (a full disk, a size limit) it
/// stands in for a file without touching the disk: the error has already reached `flush`,
/// which deletes the file, and the zip writer's destructor then finishes quietly instead of
/// printing to stderr. Positions are tracked so the writer's offset arithmetic stays sane.
struct QuietAfterError {
    file: File,
    failed: bool,
    pos: u64,
    end: u64,
}

impl QuietAfterError {
    fn new(file: File) -> QuietAfterError {
        QuietAfterError { file, failed: false, pos: 0, end: 0 }
    }

    fn advance(&mut self, n: usize) -> usize {
        self.pos += n as u64;
        self.end = self.end.max(self.pos);
        n
    }
}

impl Write for QuietAfterError {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.failed {
            return Ok(self.advance(buf.len()));
        }
        match self.file.write(buf) {
            Ok(n) => Ok(self.advance(n)),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if self.failed { Ok(()) } else { self.file.flush() }
    }
}

impl std::io::Seek for QuietAfterError {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        use std::io::SeekFrom;
        if !self.failed {
            let at = self.file.seek(to)?;
            self.pos = at;
            self.end = self.end.max(at);
            return Ok(at);
        }
        self.pos = match to {
            SeekFrom::Start(n) => n,
            SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
            SeekFrom::End(d) => self.end.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zmap::Key;

    #[test]
    fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ints.zip");
        let store = ZipStore::create(&path, true).unwrap();
        super::super::conformance::run(&store);
        store.put(&Key::new(".zgroup").unwrap(), b"{}").unwrap();
        store.flush().unwrap();
        let again = ZipStore::open(&path).unwrap();
        assert_eq!(again.prefix, "ints");
        assert_eq!(again.get(&Key::new(".zgroup").unwrap()).unwrap().as_deref(), Some(&b"{}"[..]));

        // v3 layout at the archive root; ranges of stored entries come by pread.
        let path = dir.path().join("v3.zip");
        let store = ZipStore::create(&path, false).unwrap();
        store.put(&Key::new("zarr.json").unwrap(), b"{}").unwrap();
        store.put(&Key::new("v/c/0").unwrap(), b"0123456789").unwrap();
        store.flush().unwrap();
        let again = ZipStore::open(&path).unwrap();
        assert_eq!(again.prefix, "");
        let at = |offset: u64, len: usize| ByteRange::At { offset, len };
        let got = again.get_ranges(&Key::new("v/c/0").unwrap(), &[at(1, 2), at(7, 3), ByteRange::Suffix(3)], Some(10)).unwrap().unwrap();
        assert_eq!((got.parts, got.size), (vec![b"12".to_vec(), b"789".to_vec(), b"789".to_vec()], 10));
        assert_eq!(again.get_ranges(&Key::new("v/c/0").unwrap(), &[at(9, 2)], None).unwrap_err().kind, Kind::NcZarr);
        assert_eq!(again.get_ranges(&Key::new("v/c/0").unwrap(), &[at(0, 2)], Some(9)).unwrap_err().kind, Kind::NcZarr);
        assert_eq!(again.get_ranges(&Key::new("v/c/1").unwrap(), &[at(0, 1)], None).unwrap(), None);
        let names: Vec<String> = zip::ZipArchive::new(File::open(&path).unwrap()).unwrap().file_names().map(str::to_string).collect();
        assert!(names.iter().all(|n| !n.ends_with('/')), "no directory entries at the root layout: {names:?}");
    }
}

//! Zip-archive store, in netcdf-c's layout: every entry lives under one top-level folder named
//! after the archive minus its extension (`ints.zip` → `ints/...`), entries stored uncompressed.
//!
//! Reads go through the central directory by validated name, never by extracting. Writes build
//! the next archive beside the original, renamed over it at `flush` (sync/close), so the archive
//! on disk is always complete and never has duplicates. Big objects (chunks) are written into
//! that next archive the moment they are put (`Spill`): their bytes neither wait in memory nor
//! are copied again at `flush`, which appends the small objects (metadata, kept in memory
//! because they are rewritten), the unchanged entries of the original and the central
//! directory. Archives written by zarr-python (`ZipStore`, entries at the root) open too.
//!
//! Files: `state` (what is pending between flushes), `read` (entries by offset or inflated),
//! `writer` (the next archive and `ZipStore::rewrite`), `temp_file` (the file it goes to).

mod read;
mod state;
mod temp_file;
mod writer;

use super::{ByteRange, Key, Ranges, Zmap, validate_key};
use crate::error::{Error, Kind, Result, err};
use read::Entry;
use state::{SPILL_AT, State};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub(crate) struct ZipStore {
    path: PathBuf,
    prefix: String,
    state: Mutex<State>,
}

pub(super) fn zip_error(e: zip::result::ZipError) -> Error {
    match e {
        zip::result::ZipError::Io(io) => io.into(),
        other => Error::new(Kind::NotNetcdf, format!("zip: {other}")),
    }
}

/// Largest object we will inflate from an archive entry (guards against zip bombs).
pub(super) const MAX_ENTRY: u64 = 1 << 34;

impl ZipStore {
    /// `top_folder`: netcdf-c's layout (entries under one folder named after the archive);
    /// false: entries at the archive root, as zarr-python's `ZipStore` writes v3.
    pub(crate) fn create(path: &Path, top_folder: bool) -> Result<ZipStore> {
        if std::fs::symlink_metadata(path).is_ok() {
            std::fs::remove_file(path)?;
        }
        let prefix = if top_folder {
            path.file_stem().and_then(|s| s.to_str()).filter(|s| validate_key(s).is_ok() && !s.is_empty()).unwrap_or("dataset").to_string()
        } else {
            String::new()
        };
        let store = ZipStore { path: path.to_path_buf(), prefix, state: Mutex::new(State::new(None, BTreeMap::new(), Vec::new(), true)) };
        Ok(store)
    }

    pub(crate) fn open(path: &Path) -> Result<ZipStore> {
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
        Ok(ZipStore { path: path.to_path_buf(), prefix, state: Mutex::new(State::new(Some(archive), index, order, false)) })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn full(&self, key: &str) -> String {
        super::join(&self.prefix, key)
    }
}

/// A dataset closed without `flush` (aborted, or after an error) leaves no temp archive.
impl Drop for ZipStore {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(spill) = st.spill.take() {
            let tmp = spill.tmp.clone();
            drop(spill);
            let _ = std::fs::remove_file(tmp);
        }
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
            Entry::Stored(path, start, len) => {
                use std::io::{Seek, SeekFrom};
                super::check_size(key, len, Some(total as u64))?;
                let mut file = File::open(path)?;
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
            Entry::Stored(path, start, len) => {
                use std::os::unix::fs::FileExt;
                super::check_size(key, len, size)?;
                let file = File::open(path)?;
                let parts = ranges
                    .iter()
                    .map(|r| {
                        let (off, n) = r.within(key, len)?;
                        let mut b = super::zeroed(n as u64)?;
                        file.read_exact_at(&mut b, start + off)?;
                        Ok(b)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Some(Ranges { parts, size: len }))
            }
        }
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        self.put_parts(key, &[value])
    }

    /// A big object goes into the next archive from the parts themselves (no gathering copy).
    fn put_parts(&self, key: &Key, parts: &[&[u8]]) -> Result<()> {
        if key.is_empty() {
            return err(Kind::BadName, "empty key");
        }
        let mut st = self.state();
        if parts.iter().map(|p| p.len()).sum::<usize>() >= SPILL_AT {
            return self.spill_put(&mut st, key, parts);
        }
        st.stage(key, parts.concat());
        Ok(())
    }

    /// Small objects are kept as they are (no copy) until `flush`; big ones are written now.
    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        if items.iter().any(|(k, _)| k.is_empty()) {
            return err(Kind::BadName, "empty key");
        }
        let mut st = self.state();
        for (key, value) in items {
            if value.len() >= SPILL_AT {
                self.spill_put(&mut st, &key, &[&value])?;
            } else {
                st.stage(&key, value);
            }
        }
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
                st.unspill(&key);
                st.staged.insert(key, None);
            }
        }
        st.dirty = true;
        Ok(())
    }

    /// Finishes the next archive and renames it over the archive (`ZipStore::rewrite`).
    fn flush(&self) -> Result<()> {
        self.rewrite()
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zmap::Key;
    use proptest::prelude::*;

    /// A real archive of ours to mutate: netcdf-c's layout with folders, metadata and chunks.
    fn sample_archive() -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.zip");
        let store = ZipStore::create(&path, true).unwrap();
        store.put(&Key::new(".zgroup").unwrap(), br#"{"zarr_format":2}"#).unwrap();
        store.put(&Key::new("v/.zarray").unwrap(), b"{}").unwrap();
        store.put(&Key::new("v/0").unwrap(), &[7u8; 300]).unwrap();
        store.flush().unwrap();
        std::fs::read(&path).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
        /// Zip archives as hostile stores hold them: arbitrary bytes, and a real archive with
        /// bytes overwritten (local headers, central directory, data) or cut. Opened and read
        /// or refused, never a panic, and never an allocation of a size the archive claims.
        #[test]
        fn fuzz_zip_directory(bytes in proptest::collection::vec(any::<u8>(), 0..600),
                              edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f.zip");
            for data in [bytes.clone(), crate::bytes::mutated(&sample_archive(), &edits, cut)] {
                std::fs::write(&path, &data).unwrap();
                if let Ok(store) = ZipStore::open(&path) {
                    let _ = store.list_dir(&Key::root());
                    for k in [".zgroup", "v/.zarray", "v/0"] {
                        let _ = store.get(&Key::new(k).unwrap());
                        let mut out = vec![0u8; 300];
                        let _ = store.read_into(&Key::new(k).unwrap(), &mut out);
                    }
                }
            }
        }
    }

    #[test]
    fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ints.zip");
        let store = ZipStore::create(&path, true).unwrap();
        crate::zmap::conformance::run(&store);
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

    /// Big objects are written into the next archive when put, read back from it before the
    /// flush, and replaced or deleted without leaving duplicates or temp files behind.
    #[test]
    fn big_objects_go_straight_into_the_next_archive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.zip");
        let key = |k: &str| Key::new(k).unwrap();
        let big = |b: u8| vec![b; SPILL_AT + 10];
        let files = || std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect::<Vec<_>>();
        let store = ZipStore::create(&path, true).unwrap();
        store.put(&key(".zgroup"), b"{}").unwrap();
        store.put_parts(&key("v/0"), &[&big(1)[..100], &big(1)[100..]]).unwrap();
        store.put_many(vec![(key("v/1"), big(2)), (key("v/2"), big(3))]).unwrap();
        assert_eq!(store.get(&key("v/1")).unwrap(), Some(big(2)));
        let mut out = vec![0u8; SPILL_AT + 10];
        assert!(store.read_into(&key("v/2"), &mut out).unwrap());
        assert_eq!(out, big(3));
        assert_eq!(store.list_dir(&key("v")).unwrap(), ["0", "1", "2"]);
        store.flush().unwrap();
        assert_eq!(files(), ["big.zip"]);

        let again = ZipStore::open(&path).unwrap();
        assert_eq!(again.get(&key("v/0")).unwrap(), Some(big(1)));
        again.put(&key("v/0"), &big(4)).unwrap();
        again.put(&key("v/0"), &big(5)).unwrap();
        again.delete_prefix(&key("v/1")).unwrap();
        assert_eq!(again.get(&key("v/0")).unwrap(), Some(big(5)));
        again.flush().unwrap();
        assert_eq!(files(), ["big.zip"]);
        let names: Vec<String> = zip::ZipArchive::new(File::open(&path).unwrap()).unwrap().file_names().map(str::to_string).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "duplicate entries: {names:?}");

        let third = ZipStore::open(&path).unwrap();
        assert_eq!(third.get(&key("v/0")).unwrap(), Some(big(5)));
        assert_eq!(third.get(&key("v/1")).unwrap(), None);
        assert_eq!(third.get(&key("v/2")).unwrap(), Some(big(3)));
        assert_eq!(third.get(&key(".zgroup")).unwrap().as_deref(), Some(&b"{}"[..]));
        third.put(&key("v/3"), &big(6)).unwrap();
        drop(third);
        assert_eq!(files(), ["big.zip"]);

        // An original entry rewritten once (big: into the spill, which stays fresh) is
        // written once at flush, not also copied as unchanged (zip_close.c: the flush failed
        // with a duplicate name and the rewrite was lost).
        let fifth = ZipStore::open(&path).unwrap();
        fifth.put(&key("v/2"), &big(8)).unwrap();
        fifth.flush().unwrap();
        assert_eq!(ZipStore::open(&path).unwrap().get(&key("v/2")).unwrap(), Some(big(8)));

        // A big object replaced by a small one and then by a big one again: the archive being
        // written already holds its first entry, so the third put waits in memory (writing the
        // name twice failed the close: difftest seed 504240).
        let sixth = ZipStore::open(&path).unwrap();
        sixth.put(&key("v/9"), &big(1)).unwrap();
        sixth.put(&key("v/9"), b"small").unwrap();
        sixth.put(&key("v/9"), &big(2)).unwrap();
        sixth.delete_prefix(&key("v/9")).unwrap();
        sixth.put(&key("v/9"), &big(3)).unwrap();
        sixth.flush().unwrap();
        assert_eq!(ZipStore::open(&path).unwrap().get(&key("v/9")).unwrap(), Some(big(3)));

        // A killed writer's temp archive goes when the next writer starts one; a live
        // process's stays.
        let orphan = dir.path().join(format!(".big.zip.nczarr-tmp-{}-0", i32::MAX));
        let live = dir.path().join(format!(".big.zip.nczarr-tmp-{}-999999", std::process::id()));
        std::fs::write(&orphan, b"junk").unwrap();
        std::fs::write(&live, b"junk").unwrap();
        let fourth = ZipStore::open(&path).unwrap();
        fourth.put(&key("v/4"), &big(7)).unwrap();
        fourth.flush().unwrap();
        assert!(!orphan.exists() && live.exists());
    }
}

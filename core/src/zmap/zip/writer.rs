//! Writing the next archive: temp archives beside the original (orphans of killed writers
//! removed), folders and stored entries as netcdf-c lays them out, big objects written as they
//! are put, and `rewrite`, which finishes the next archive and renames it over the original.

use super::state::{Spill, State};
use super::temp_file::QuietAfterError;
use super::{ZipStore, zip_error};
use crate::error::{Error, Kind, Result};
use crate::zmap::Key;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use zip::write::SimpleFileOptions;

impl ZipStore {
    /// The folder of the archive and the start of its temp archives' names
    /// (`.<archive>.nczarr-tmp-<pid>-<n>`, names readers skip).
    pub(super) fn temp_stem(&self) -> (PathBuf, String) {
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        let name = self.path.file_name().and_then(|n| n.to_str()).unwrap_or("zip");
        (dir, format!(".{name}.nczarr-tmp-"))
    }

    /// A fresh temp archive beside the original. The temp archives a killed writer left behind
    /// (its process is gone) are removed first: with big objects written as they are put, one
    /// can be as big as the data written before the kill.
    pub(super) fn temp_writer(&self) -> Result<(zip::ZipWriter<QuietAfterError>, Arc<AtomicU64>, PathBuf)> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let (dir, stem) = self.temp_stem();
        remove_orphan_temps(&dir, &stem);
        let tmp = dir.join(format!("{stem}{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
        let out = QuietAfterError::new(File::create(&tmp)?);
        let pos = out.pos.clone();
        Ok((zip::ZipWriter::new(out), pos, tmp))
    }

    /// The directory entries above `key` not yet in the archive being written (netcdf-c's
    /// layout has them; zarr-python's root layout has none).
    pub(super) fn add_dirs(&self, writer: &mut zip::ZipWriter<QuietAfterError>, dirs: &mut BTreeSet<String>, key: &str) -> Result<()> {
        if self.prefix.is_empty() {
            return Ok(());
        }
        let full = self.full(key);
        let mut acc = String::new();
        let segs: Vec<&str> = full.split('/').collect();
        for seg in &segs[..segs.len() - 1] {
            acc.push_str(seg);
            acc.push('/');
            if dirs.insert(acc.clone()) {
                writer.add_directory(acc.clone(), stored()).map_err(zip_error)?;
            }
        }
        Ok(())
    }

    /// Writes a big object into the next archive now. A key already written there cannot be
    /// written again (no duplicate entries): its new bytes wait in memory and the next
    /// archive is rebuilt at `flush`.
    pub(super) fn spill_put(&self, st: &mut State, key: &Key, parts: &[&[u8]]) -> Result<()> {
        // Written into the next archive before (and since replaced, deleted or not): the new
        // bytes wait in memory and flush rebuilds the archive without the old entry.
        if st.spill.as_ref().is_some_and(|s| s.names.contains(key.as_str())) {
            st.stage(key, parts.concat());
            if let Some(spill) = st.spill.as_mut() {
                spill.stale = true;
            }
            return Ok(());
        }
        st.dirty = true;
        if st.spill.is_none() {
            let (writer, pos, tmp) = self.temp_writer()?;
            st.spill = Some(Spill { writer, pos, tmp, at: BTreeMap::new(), dirs: BTreeSet::new(), names: BTreeSet::new(), stale: false });
        }
        st.staged.remove(key.as_str());
        let spill = st.spill.as_mut().expect("made above");
        let len: u64 = parts.iter().map(|p| p.len() as u64).sum();
        let written = (|| -> Result<u64> {
            self.add_dirs(&mut spill.writer, &mut spill.dirs, key)?;
            start_stored(&mut spill.writer, self.full(key), len)?;
            let start = spill.pos.load(Ordering::Relaxed);
            for part in parts {
                spill.writer.write_all(part)?;
            }
            Ok(start)
        })();
        match written {
            Ok(start) => {
                spill.at.insert(key.to_string(), (start, len));
                spill.names.insert(key.to_string());
                Ok(())
            }
            Err(e) => {
                // The next archive is unusable now: what it held since the last flush is lost
                // (the archive on disk still holds the last flushed state), and flush says so.
                let _ = std::fs::remove_file(&spill.tmp);
                st.spill = None;
                st.failed = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Finishes the next archive (begun by big puts, or begun here) with the small objects,
    /// the original's unchanged entries and the central directory, and renames it over the
    /// archive. A stale spill (an entry in it replaced or deleted) is first copied, live
    /// entries only, into a fresh one.
    pub(super) fn rewrite(&self) -> Result<()> {
        let mut st = self.state();
        // What the failed write held is gone: finishing the archive without it would lose data
        // silently, so every later flush fails too (the archive keeps its last flushed state).
        if let Some(e) = &st.failed {
            return Err(Error::new(e.kind, format!("an earlier write to {} failed: {}", self.path.display(), e.context)));
        }
        if !st.dirty {
            return Ok(());
        }
        let mut temps: Vec<PathBuf> = Vec::new();
        // Taken before the spill is: an original entry rewritten into the spill is not
        // unchanged, and copying it too would make a duplicate name the archive refuses.
        let unchanged = st.unchanged_keys();
        let result = (|| -> Result<()> {
            let (mut writer, mut dirs, tmp) = match st.spill.take() {
                Some(spill) if !spill.stale => {
                    temps.push(spill.tmp.clone());
                    (spill.writer, spill.dirs, spill.tmp)
                }
                Some(spill) => {
                    temps.push(spill.tmp.clone());
                    spill.writer.finish().map_err(zip_error)?;
                    let mut old = zip::ZipArchive::new(File::open(&spill.tmp)?).map_err(zip_error)?;
                    let (mut writer, _, tmp) = self.temp_writer()?;
                    temps.push(tmp.clone());
                    let mut dirs = BTreeSet::new();
                    for key in spill.at.keys() {
                        self.add_dirs(&mut writer, &mut dirs, key)?;
                        let idx = old.index_for_name(&self.full(key)).ok_or_else(|| Error::new(Kind::Internal, "spilled entry missing"))?;
                        let entry = old.by_index_raw(idx).map_err(zip_error)?;
                        writer.raw_copy_file_rename(entry, self.full(key)).map_err(zip_error)?;
                    }
                    (writer, dirs, tmp)
                }
                None => {
                    let (writer, _, tmp) = self.temp_writer()?;
                    temps.push(tmp.clone());
                    (writer, BTreeSet::new(), tmp)
                }
            };
            // An unchanged entry is copied as it is stored (no inflate, no re-deflate).
            for key in unchanged {
                self.add_dirs(&mut writer, &mut dirs, &key)?;
                let State { archive, index, .. } = &mut *st;
                let archive = archive.as_mut().ok_or_else(|| Error::new(Kind::Internal, "zip archive"))?;
                let entry = archive.by_index_raw(index[&key]).map_err(zip_error)?;
                writer.raw_copy_file_rename(entry, self.full(&key)).map_err(zip_error)?;
            }
            for (key, bytes) in &st.staged {
                let Some(bytes) = bytes else { continue };
                self.add_dirs(&mut writer, &mut dirs, key)?;
                start_stored(&mut writer, self.full(key), bytes.len() as u64)?;
                writer.write_all(bytes)?;
            }
            writer.finish().map_err(zip_error)?;
            std::fs::rename(&tmp, &self.path)?;
            temps.retain(|t| t != &tmp);
            Ok(())
        })();
        for t in &temps {
            let _ = std::fs::remove_file(t);
        }
        result?;
        let reopened = ZipStore::open(&self.path)?;
        std::mem::swap(&mut *st, &mut *reopened.state());
        Ok(())
    }
}

/// Removes the files in `dir` named `<stem><pid>-<n>` whose process no longer exists. Another
/// live writer's temp archive (this process's included) is left alone.
fn remove_orphan_temps(dir: &Path, stem: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) =
            name.to_str().and_then(|n| n.strip_prefix(stem)).and_then(|rest| rest.split('-').next()).and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid <= 0 || pid as u32 == std::process::id() {
            continue;
        }
        // SAFETY: signal 0 only asks whether the process exists; nothing is sent.
        let gone = unsafe { libc::kill(pid, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Entries are stored uncompressed, as netcdf-c writes them (chunks carry their own codecs).
pub(super) fn stored() -> SimpleFileOptions {
    SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored).large_file(false)
}

/// Begins a stored entry of `len` bytes (ZIP64 from 4 GiB on).
pub(super) fn start_stored(writer: &mut zip::ZipWriter<QuietAfterError>, name: String, len: u64) -> Result<()> {
    writer.start_file(name, stored().large_file(len >= 0xffff_ffff)).map_err(zip_error)
}

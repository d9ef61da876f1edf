//! Writing a reference set (`nc_create` of `…/refs.json#mode=kerchunk`, or of a Parquet
//! reference directory `…/refs.parq#mode=kerchunk`; local or on S3): a store
//! whose chunk keys can point into other objects (`put_located`, filled by a copy whose values
//! came from chunks of a lazily opened netCDF file or another reference set: `engine::origins`)
//! and whose other keys hold bytes: metadata documents and small chunks inline, larger chunks as
//! objects beside the set (`<name>.chunks/<hash of the bytes>`), referenced whole.
//!
//! The document is rewritten whole, atomically, at every flush (enddef, sync, close): the
//! objects it names are written first and are never overwritten with other bytes (their name
//! is their content's hash), so a writer stopped anywhere leaves the last document or the new
//! one, each naming only objects that exist (reliability.md). A Parquet directory is several
//! files: each is replaced atomically, the record files first and `.zmetadata` last.

use super::{RefStore, kerchunk};
use crate::error::{Error, Kind, Result, err};
use crate::url::OpenSpec;
use crate::zmap::{Caps, Key, Located, Zmap};
use std::sync::RwLock;

/// Chunks up to this many bytes stay in the document (kerchunk inlines small chunks too).
const INLINE_MAX: usize = 4096;

/// Where the set is: a store over its folder, the document's key there, and the URL prefix its
/// folder has for other programs (an absolute path or `s3://bucket/prefix`).
struct Home {
    folder: Box<dyn Zmap>,
    document: Key,
    url: String,
    /// A Parquet reference directory (fsspec's layout) rather than one JSON document.
    parquet: bool,
}

pub struct RefWriter {
    name: String,
    home: Home,
    set: RwLock<RefStore>,
}

impl RefWriter {
    /// A new, empty reference set where `spec` names it (nothing is written before the first
    /// flush; a set already there is replaced then).
    pub fn create(spec: &OpenSpec) -> Result<RefWriter> {
        let name = spec.original.split('#').next().unwrap_or(&spec.original).to_string();
        let home = match &spec.s3 {
            Some(target) => {
                let bucket = target.bucket.clone();
                let (store, key) = super::s3_object(target.clone(), &spec.params)?;
                let folder = target.root.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
                let url = if folder.is_empty() { format!("s3://{bucket}") } else { format!("s3://{bucket}/{folder}") };
                Home { folder: Box::new(store), document: key, url, parquet: false }
            }
            None if name.to_ascii_lowercase().starts_with("http") => {
                return err(Kind::NotBuilt, format!("{name}: a web server without the S3 API is read, not written"));
            }
            None => {
                let file = spec.path.file_name().and_then(|f| f.to_str()).filter(|f| !f.is_empty());
                let file = file.ok_or_else(|| Error::new(Kind::Invalid, format!("{}: names no file", spec.path.display())))?;
                let parent = match spec.path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => std::path::PathBuf::from("."),
                };
                let parent = std::fs::canonicalize(&parent).map_err(|e| {
                    let kind = if e.kind() == std::io::ErrorKind::NotFound { Kind::Errno(libc::ENOENT) } else { Kind::Io };
                    Error::new(kind, format!("{}: {e}", parent.display()))
                })?;
                let folder = crate::zmap::file::FileStore::open(&parent)?;
                Home { folder: Box::new(folder), document: Key::new(file)?, url: parent.display().to_string(), parquet: false }
            }
        };
        let mut home = home;
        let lower = name.trim_end_matches('/').to_ascii_lowercase();
        home.parquet = lower.ends_with(".parq") || lower.ends_with(".parquet");
        if home.parquet {
            // netcdf-c's clobber: the directory's old record files go now.
            home.folder.delete_prefix(&home.document)?;
        } else if spec.s3.is_none() && spec.path.is_dir() {
            return err(Kind::Invalid, format!("{}: a directory (a JSON reference set is one file)", spec.path.display()));
        }
        Ok(RefWriter { set: RwLock::new(RefStore::empty(name.clone())), name, home })
    }

    fn read(&self) -> Result<std::sync::RwLockReadGuard<'_, RefStore>> {
        self.set.read().map_err(|_| Error::new(Kind::Internal, format!("{}: a writer stopped", self.name)))
    }

    fn write(&self) -> Result<std::sync::RwLockWriteGuard<'_, RefStore>> {
        self.set.write().map_err(|_| Error::new(Kind::Internal, format!("{}: a writer stopped", self.name)))
    }

    /// Stores bytes: inline when small or metadata, else as an object beside the set.
    fn keep(&self, key: &Key, value: &[u8]) -> Result<Located> {
        let last = key.as_str().rsplit('/').next().unwrap_or("");
        if value.len() <= INLINE_MAX || last.starts_with('.') || last == "zarr.json" {
            return Ok(Located::Inline(value.to_vec()));
        }
        let hash = twox_hash::XxHash3_128::oneshot(value);
        let rel = format!("{}.chunks/{hash:032x}", self.home.document.as_str());
        self.home.folder.put(&Key::new(&rel)?, value)?;
        Ok(Located::Whole { url: format!("{}/{rel}", self.home.url) })
    }
}

impl Zmap for RefWriter {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        self.read()?.get(key)
    }

    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        self.read()?.get_many(keys)
    }

    fn read_many_into(&self, keys: &[Key], outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        self.read()?.read_many_into(keys, outs)
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        let at = self.keep(key, value)?;
        self.write()?.set(key.as_str(), &at);
        Ok(())
    }

    fn locate(&self, key: &Key) -> Result<Option<Located>> {
        self.read()?.locate(key)
    }

    fn put_located(&self, key: &Key, at: &Located) -> Result<bool> {
        self.write()?.set(key.as_str(), at);
        Ok(true)
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        self.read()?.list_dir(prefix)
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        self.write()?.remove_prefix(prefix.as_str());
        Ok(())
    }

    /// The document, rewritten whole (one atomic replace).
    fn flush(&self) -> Result<()> {
        let set = self.read()?;
        let entries = set.entries()?;
        let beside = format!("{}/{}.chunks/", self.home.url, self.home.document.as_str());
        let copied = |at: &Located| match at {
            Located::Inline(_) => true,
            Located::Whole { url } => url.starts_with(&beside),
            _ => false,
        };
        let refs = entries.iter().filter(|(_, at)| !matches!(at, Located::Inline(_) | Located::Absent) && !copied(at)).count();
        // The log line for variables written by value (no read of a file had their values).
        let mut by_value: Vec<&str> = entries
            .iter()
            .filter(|(key, at)| !key.rsplit('/').next().unwrap_or(key).starts_with('.') && copied(at))
            .filter_map(|(key, _)| key.rsplit_once('/').map(|(array, _)| array))
            .collect();
        by_value.dedup();
        if !by_value.is_empty() {
            crate::trace::emit(1, &format!("refs: {}: chunks copied, not referenced, in {}", self.name, by_value.join(", ")));
        }
        if self.home.parquet {
            let files = super::parquet::render(&self.name, &entries, super::parquet::RECORD_SIZE)?;
            crate::trace::emit(1, &format!("refs: {}: {} keys, {refs} references, {} files", self.name, entries.len(), files.len()));
            for (rel, bytes) in files {
                self.home.folder.put(&Key::new(format!("{}/{rel}", self.home.document.as_str()))?, &bytes)?;
            }
            return Ok(());
        }
        let document = kerchunk::render(&entries);
        crate::trace::emit(1, &format!("refs: {}: {} keys, {refs} references, {} bytes", self.name, entries.len(), document.len()));
        self.home.folder.put(&self.home.document, &document)
    }

    fn describe(&self) -> String {
        format!("reference set {} (being written)", self.name)
    }

    fn caps(&self) -> Caps {
        Caps { batch_size: 64, latency_bound: false, concurrent_puts: false, versioned: false, raw_chunks: false }
    }
}

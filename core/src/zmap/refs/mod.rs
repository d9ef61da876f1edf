//! Reference stores (references.md): a Zarr store whose every key resolves to inline bytes, a
//! byte range of another object, a whole object, or nothing (a missing chunk reads as the fill
//! value). kerchunk's JSON reference sets are read (`kerchunk`); the objects they point into
//! are local files (paths, `file://` URLs, and names relative to the reference set's folder)
//! and S3 objects (`s3://`, every URL form and alias the library accepts). A target that cannot
//! be read fails the read with its name, never as fill. Every target must lie where the
//! reference set may point (`url::trust`, README "Security").
//!
//! Read-only: a put is NC_EPERM.

pub mod kerchunk;
pub mod parquet;
mod spans;
pub mod writer;

use super::range::RangeSource;
use super::{ByteRange, Caps, Key, Located, Zmap};
use crate::error::{Error, Kind, Result, err};
use crate::url::OpenSpec;
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

/// Where one key's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ref {
    Inline(Vec<u8>),
    /// `len` bytes at `offset` of target `target`.
    Range {
        target: usize,
        offset: u64,
        len: u64,
    },
    Whole {
        target: usize,
    },
    /// The first `len` bytes of a `full`-byte chunk at `offset` of `target`, zeros after: an
    /// edge chunk cut from data stored without chunks (netCDF-3, HDF5 contiguous), which ends
    /// where the variable does.
    Short {
        target: usize,
        offset: u64,
        len: u64,
        full: u64,
    },
}

impl Ref {
    /// Where the bytes it names end in its target (`None`: inline, or the whole object).
    pub fn end(&self) -> Option<u64> {
        match self {
            Ref::Range { offset, len, .. } | Ref::Short { offset, len, .. } => Some(offset.saturating_add(*len)),
            Ref::Inline(_) | Ref::Whole { .. } => None,
        }
    }
}

/// A target object, opened on first use.
enum Opened {
    Local {
        file: std::fs::File,
        size: u64,
    },
    S3 {
        store: Box<super::s3::S3Store>,
        key: Key,
    },
    /// A web server without the S3 API (ranged GETs).
    Http {
        url: String,
    },
    /// Opened by the maker of the references.
    Source(std::sync::Arc<dyn RangeSource>),
}

struct Target {
    /// As the reference set names it, resolved against the set's folder.
    name: String,
    /// What another program reads it by (`None`: an object its opener has no URL for).
    url: Option<String>,
    opened: OnceLock<std::result::Result<Opened, Error>>,
}

pub struct RefStore {
    name: String,
    refs: BTreeMap<String, Ref>,
    targets: Vec<Target>,
    remote: bool,
    /// The S3 endpoint the set itself was read from (`scheme://host:port`): HTTP targets there
    /// are S3 objects too; other HTTP targets are plain web objects unless AWS names them.
    s3_origin: Option<String>,
}

/// The reference set's own bytes, wherever the name says it is.
fn read_document(spec: &OpenSpec) -> Result<Vec<u8>> {
    let base = spec.original.split('#').next().unwrap_or(&spec.original);
    let lower = base.to_ascii_lowercase();
    match &spec.s3 {
        Some(target) => {
            let (store, key) = s3_object(target.clone(), &spec.params)?;
            store.get(&key)?.ok_or_else(|| Error::new(Kind::Errno(libc::ENOENT), format!("{}: no such object", target.describe())))
        }
        None if lower.starts_with("http://") || lower.starts_with("https://") => {
            super::http::get(base, None)?.ok_or_else(|| Error::new(Kind::Errno(libc::ENOENT), format!("{base}: no such object")))
        }
        None => std::fs::read(&spec.path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound { Kind::Errno(libc::ENOENT) } else { Kind::Io };
            Error::new(kind, format!("{}: {e}", spec.path.display()))
        }),
    }
}

/// Is the set a Parquet reference directory (a local directory, or a name ending `.parq`,
/// `.parquet` or `/`)?
fn is_parquet_set(spec: &OpenSpec) -> bool {
    let base = spec.original.split('#').next().unwrap_or(&spec.original).to_ascii_lowercase();
    if spec.s3.is_none() && !base.starts_with("http://") && !base.starts_with("https://") {
        return spec.path.is_dir();
    }
    [".parq", ".parq/", ".parquet", ".parquet/"].iter().any(|e| base.ends_with(e)) || base.ends_with('/')
}

/// The file `rel` of a reference set that is a directory (`None`: no such file).
fn read_beside(spec: &OpenSpec, rel: &str) -> Result<Option<Vec<u8>>> {
    let mut inner = spec.clone();
    let base = spec.original.split('#').next().unwrap_or(&spec.original).trim_end_matches('/');
    inner.original = format!("{base}/{rel}");
    inner.path = spec.path.join(rel);
    if let Some(t) = &mut inner.s3 {
        t.root = format!("{}/{rel}", t.root.trim_end_matches('/'));
    }
    match read_document(&inner) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind == Kind::Errno(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An S3 object as a store over its folder and its key in that store.
fn s3_object(mut target: crate::url::s3::S3Target, params: &BTreeMap<String, String>) -> Result<(super::s3::S3Store, Key)> {
    let (folder, file) = match target.root.rsplit_once('/') {
        Some((d, f)) => (d.to_string(), f.to_string()),
        None => (String::new(), target.root.clone()),
    };
    if file.is_empty() {
        return err(Kind::Invalid, format!("{}: names no object", target.describe()));
    }
    target.root = folder;
    Ok((super::s3::S3Store::new(&target, params)?, Key::new(file)?))
}

/// A local target's absolute path (relative names are relative to the working directory);
/// URLs as they are.
fn absolute(name: &str) -> String {
    if name.contains("://") || name.starts_with('/') {
        return name.to_string();
    }
    match std::env::current_dir() {
        Ok(dir) => dir.join(name).display().to_string(),
        Err(_) => name.to_string(),
    }
}

/// Where a target named `name` in the reference set `document` is: URLs and absolute paths as
/// they are, other names relative to the set's folder.
fn resolve(document: &str, name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    if lower.contains("://") || name.starts_with('/') {
        return name.to_string();
    }
    let base = document.split('#').next().unwrap_or(document);
    match base.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{}", name.trim_start_matches("./")),
        None => name.to_string(),
    }
}

impl RefStore {
    /// Opens the reference set `spec` names; every target checked against where the set is.
    pub fn open(spec: &OpenSpec) -> Result<RefStore> {
        let name = spec.original.split('#').next().unwrap_or(&spec.original).to_string();
        let parsed = if is_parquet_set(spec) {
            let set = spec.clone();
            let fetch = move |rel: &str| read_beside(&set, rel);
            let zmetadata = fetch(".zmetadata")?
                .ok_or_else(|| Error::new(Kind::Errno(libc::ENOENT), format!("{name}: no .zmetadata (a Parquet reference set)")))?;
            // Targets are named relative to the directory, not to its parent.
            let mut parsed = parquet::parse(&name, &zmetadata, &fetch)?;
            let dir = format!("{}/", name.trim_end_matches('/'));
            for t in &mut parsed.targets {
                if !t.contains("://") && !t.starts_with('/') {
                    *t = format!("{dir}{}", t.trim_start_matches("./"));
                }
            }
            parsed
        } else {
            kerchunk::parse(&name, &read_document(spec)?)?
        };
        let mut targets = Vec::with_capacity(parsed.targets.len());
        for t in parsed.targets {
            let resolved = resolve(&name, &t);
            crate::url::trust::check_target(&name, &resolved, "reference target")?;
            targets.push(Target { url: Some(absolute(&resolved)), name: resolved, opened: OnceLock::new() });
        }
        let remote = spec.s3.is_some() || targets.iter().any(|t| t.name.contains("://") && !t.name.starts_with("file://"));
        crate::trace::emit(1, &format!("refs: {name}: {} keys over {} targets", parsed.refs.len(), targets.len()));
        let s3_origin = spec.s3.as_ref().and_then(|t| t.effective_endpoint());
        Ok(RefStore { name, refs: parsed.refs, targets, remote, s3_origin })
    }

    /// A reference set made in memory (a lazy open's) over objects its maker opened: `refs`
    /// name targets by their index in `sources`.
    pub fn from_parts(name: String, refs: BTreeMap<String, Ref>, sources: Vec<std::sync::Arc<dyn RangeSource>>, remote: bool) -> RefStore {
        let targets = sources
            .into_iter()
            .map(|source| Target { name: source.describe(), url: source.url(), opened: OnceLock::from(Ok(Opened::Source(source))) })
            .collect();
        RefStore { name, refs, targets, remote, s3_origin: None }
    }

    /// An empty reference set named `name` (one being written: `writer`).
    pub(crate) fn empty(name: String) -> RefStore {
        RefStore { name, refs: BTreeMap::new(), targets: Vec::new(), remote: false, s3_origin: None }
    }

    /// Sets what `key` resolves to (a set being written).
    pub(crate) fn set(&mut self, key: &str, at: &Located) {
        let r = match at {
            Located::Absent => {
                self.refs.remove(key);
                return;
            }
            Located::Inline(bytes) => Ref::Inline(bytes.clone()),
            Located::Range { url, offset, len } => Ref::Range { target: self.target_for(url), offset: *offset, len: *len },
            Located::Whole { url } => Ref::Whole { target: self.target_for(url) },
        };
        self.refs.insert(key.to_string(), r);
    }

    /// The index of the target `url`, added when new.
    fn target_for(&mut self, url: &str) -> usize {
        if let Some(i) = self.targets.iter().position(|t| t.name == url) {
            return i;
        }
        self.remote |= url.contains("://") && !url.starts_with("file://");
        self.targets.push(Target { name: url.to_string(), url: Some(url.to_string()), opened: OnceLock::new() });
        self.targets.len() - 1
    }

    /// Drops every key under `prefix` (and `prefix` itself).
    pub(crate) fn remove_prefix(&mut self, prefix: &str) {
        let p = prefix.trim_end_matches('/');
        let under = format!("{p}/");
        self.refs.retain(|k, _| !(p.is_empty() || k == p || k.starts_with(&under)));
    }

    /// Every key with where it points, targets by URL (what `kerchunk::render` writes).
    pub(crate) fn entries(&self) -> Result<Vec<(&str, Located)>> {
        self.refs.keys().map(|k| Ok((k.as_str(), self.locate_str(k)?.unwrap_or(Located::Absent)))).collect()
    }

    fn target_url(&self, index: usize) -> Option<String> {
        self.targets.get(index).and_then(|t| t.url.clone())
    }

    fn locate_str(&self, key: &str) -> Result<Option<Located>> {
        let missing_url = |t: &usize| Error::new(Kind::NotBuilt, format!("{}: target {t} has no URL", self.name));
        Ok(Some(match self.refs.get(key) {
            None => Located::Absent,
            Some(Ref::Inline(b)) => Located::Inline(b.clone()),
            Some(Ref::Range { target, offset, len }) => {
                Located::Range { url: self.target_url(*target).ok_or_else(|| missing_url(target))?, offset: *offset, len: *len }
            }
            Some(Ref::Whole { target }) => Located::Whole { url: self.target_url(*target).ok_or_else(|| missing_url(target))? },
            // Zeros past the stored bytes are ours: no reader of references adds them.
            Some(Ref::Short { .. }) => return Ok(None),
        }))
    }

    /// Is the HTTP(S) URL `name` an S3 object (the set's own S3 endpoint, or an AWS host)?
    fn is_s3(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        let origin_matches = self.s3_origin.as_deref().is_some_and(|o| {
            let o = o.trim_end_matches('/').to_ascii_lowercase();
            lower.strip_prefix(&o).is_some_and(|rest| rest.starts_with('/'))
        });
        origin_matches || crate::url::s3::is_s3_url(name, &[])
    }

    fn open_target(&self, name: &str) -> Result<Opened> {
        let lower = name.to_ascii_lowercase();
        if let Some(path) = name.strip_prefix("file://").or((!lower.contains("://")).then_some(name)) {
            let path = path.strip_prefix("localhost").unwrap_or(path);
            let file = std::fs::File::open(path).map_err(|e| {
                let kind = if e.kind() == std::io::ErrorKind::NotFound { Kind::Errno(libc::ENOENT) } else { Kind::Io };
                Error::new(kind, format!("reference target {name}: {e}"))
            })?;
            let size = file.metadata().map_err(|e| Error::new(Kind::Io, format!("reference target {name}: {e}")))?.len();
            return Ok(Opened::Local { file, size });
        }
        if lower.starts_with("s3://") || lower.starts_with("gs3://") || self.is_s3(name) {
            let target = crate::url::s3::parse_target(name)?;
            let (store, key) = s3_object(target, &BTreeMap::new())?;
            return Ok(Opened::S3 { store: Box::new(store), key });
        }
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Ok(Opened::Http { url: name.split('#').next().unwrap_or(name).to_string() });
        }
        err(Kind::NotBuilt, format!("reference target {name}: only local files, S3 objects and HTTP(S) URLs are read"))
    }

    fn target(&self, index: usize) -> Result<(&Opened, &str)> {
        let t = self.targets.get(index).ok_or_else(|| Error::new(Kind::Internal, "reference to no target"))?;
        match t.opened.get_or_init(|| self.open_target(&t.name)) {
            Ok(opened) => Ok((opened, &t.name)),
            Err(e) => Err(e.clone()),
        }
    }

    /// `len` bytes at `offset` of a target (`None`: all of it).
    fn read_target(&self, index: usize, range: Option<(u64, u64)>) -> Result<Vec<u8>> {
        let (opened, name) = self.target(index)?;
        match opened {
            Opened::Local { file, size } => {
                let (offset, len) = range.unwrap_or((0, *size));
                if offset.checked_add(len).is_none_or(|end| end > *size) {
                    return err(Kind::NcZarr, format!("reference target {name}: range {offset}+{len} past its end ({size} bytes)"));
                }
                let mut buf = super::zeroed(len)?;
                file.read_exact_at(&mut buf, offset).map_err(|e| Error::new(Kind::Io, format!("reference target {name}: {e}")))?;
                Ok(buf)
            }
            Opened::S3 { store, key } => match range {
                Some((offset, len)) => {
                    let len = usize::try_from(len).map_err(|_| Error::new(Kind::NoMem, format!("{name}: {len} bytes")))?;
                    let got = store.get_ranges(key, &[ByteRange::At { offset, len }], None)?;
                    let mut got =
                        got.ok_or_else(|| Error::new(Kind::Errno(libc::ENOENT), format!("reference target {name}: no such object")))?;
                    Ok(got.parts.swap_remove(0))
                }
                None => {
                    store.get(key)?.ok_or_else(|| Error::new(Kind::Errno(libc::ENOENT), format!("reference target {name}: no such object")))
                }
            },
            Opened::Http { url } => super::http::get(url, range)?
                .ok_or_else(|| Error::new(Kind::Errno(libc::ENOENT), format!("reference target {name}: no such object"))),
            Opened::Source(source) => {
                let (offset, len) = range.unwrap_or((0, source.size()));
                source.read(offset, len)
            }
        }
    }
}

impl Zmap for RefStore {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        match self.refs.get(key.as_str()) {
            None => Ok(None),
            Some(Ref::Inline(bytes)) => Ok(Some(bytes.clone())),
            Some(Ref::Range { target, offset, len }) => self.read_target(*target, Some((*offset, *len))).map(Some),
            Some(Ref::Whole { target }) => self.read_target(*target, None).map(Some),
            Some(Ref::Short { target, offset, len, full }) => {
                let mut bytes = self.read_target(*target, Some((*offset, *len)))?;
                let full = usize::try_from(*full).map_err(|_| Error::new(Kind::NoMem, format!("{}: {full} bytes", key.as_str())))?;
                bytes.resize(full.max(bytes.len()), 0);
                Ok(Some(bytes))
            }
        }
    }

    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        // Close ranges of one target as one read; remote reads several at once (spans.rs).
        self.get_spans(keys)
    }

    // Uncompressed chunks (netCDF-3 data, unfiltered HDF5) take this path: spans too.
    fn read_many_into(&self, keys: &[Key], outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        let got = self.get_spans(keys)?;
        keys.iter().zip(got).zip(outs).map(|((k, bytes), out)| super::copy_exact(k, bytes, out)).collect()
    }

    fn locate(&self, key: &Key) -> Result<Option<Located>> {
        match self.locate_str(key.as_str()) {
            // A target with no URL (an object opened by a program's own credentials) is not
            // nameable: the chunk is copied instead.
            Err(e) if e.kind == Kind::NotBuilt => Ok(None),
            other => other,
        }
    }

    fn put(&self, key: &Key, _value: &[u8]) -> Result<()> {
        err(Kind::ReadOnly, format!("{}: a reference set is read-only ({})", self.name, key.as_str()))
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        let p = prefix.as_str().trim_end_matches('/');
        let start = if p.is_empty() { String::new() } else { format!("{p}/") };
        let mut names: Vec<String> = self
            .refs
            .range(start.clone()..)
            .take_while(|(k, _)| k.starts_with(&start))
            .filter_map(|(k, _)| k[start.len()..].split('/').next().map(str::to_string))
            .collect();
        names.dedup();
        Ok(names)
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        err(Kind::ReadOnly, format!("{}: a reference set is read-only ({})", self.name, prefix.as_str()))
    }

    fn describe(&self) -> String {
        format!("reference set {}", self.name)
    }

    fn caps(&self) -> Caps {
        Caps { batch_size: 64, latency_bound: self.remote, concurrent_puts: false, versioned: false, raw_chunks: false }
    }
}

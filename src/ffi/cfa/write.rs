//! Aggregated datasets written through `nc_*`: `nc_create` of a name whose mode says `cfa`
//! (`file:///d/x.nca#mode=cfa`, `s3://b/k/x.nca#mode=cfa`, `cfa=0.5`/`cfa=0.4` for S3netCDF4's
//! forms) gives one of our datasets, held in memory, whose aggregated variables (`zmap::cfa::
//! write`) go to fragment files as their chunks are stored: one netCDF-4 file per chunk, named
//! as S3netCDF4 names sub-arrays (`<dir>/<stem>/<stem>.<var>.<i>.<j>….nc`), beside the master
//! on disk or under the same S3 prefix. `nc_sync` and `nc_close` store the fragments, then write
//! the master (`master`).
//!
//! Fragment files are created, reopened and read back through the library's own `nc_*` (the
//! real netcdf-c, or our S3 objects in front of it), one call at a time; at most `filehandles`
//! are open at once and at most `memory` bytes of fragment data are held in open files, the
//! least recently used closed (stored) first and reopened to append.

use super::{ONE_AT_A_TIME, cname, quiet_hdf5_here};
use crate::error::{Error, Kind, Result, err};
use crate::nc::modes::OpenFlags;
use crate::zmap::ArrayInfo;
use crate::zmap::cfa::write::{CfaWriteStore, FragmentWriter, place_block};
use crate::zmap::memory::MemoryStore;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

use super::super::consts::{
    NC_64BIT_DATA, NC_64BIT_OFFSET, NC_CLASSIC_MODEL, NC_CLOBBER, NC_ENOTINDEFINE, NC_NETCDF4, NC_NOCLOBBER, NC_NOERR, NC_WRITE,
};

/// The master's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Convention {
    /// CF aggregation variables (CF-1.12): the default.
    Cf,
    /// S3netCDF4's CFA-0.5: a `cfa_<var>` group per variable.
    V05,
    /// CFA-0.4: the partition matrix as JSON in `cfa_array`.
    V04,
}

/// Where an aggregated dataset's master and fragments are.
#[derive(Debug, Clone)]
pub(super) struct Place {
    /// The name the caller gave (relative fragment names resolve against it).
    pub original: String,
    /// The master as the library is asked to create it: a path, or an S3 URL as a netCDF object.
    pub master: String,
    /// The master's file name without its extension: the fragments' directory and prefix.
    pub stem: String,
    /// The master's directory, for the fragments' directory (empty: the working directory).
    pub local_dir: Option<String>,
}

impl Place {
    pub fn parse(name: &str) -> Result<Place> {
        let base = name.split('#').next().unwrap_or(name);
        let lower = base.to_ascii_lowercase();
        let remote = ["s3://", "http://", "https://"].iter().any(|s| lower.starts_with(s));
        let path = if remote { base.to_string() } else { strip_file_scheme(base).to_string() };
        let file = path.rsplit('/').next().unwrap_or(&path);
        let stem = match file.rsplit_once('.') {
            Some((stem, _)) if !stem.is_empty() => stem.to_string(),
            _ => file.to_string(),
        };
        if stem.is_empty() {
            return err(Kind::Invalid, format!("{name}: no file name for the master"));
        }
        let dir = path.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/"));
        Ok(Place {
            original: name.to_string(),
            master: if remote { format!("{path}#mode=bytes") } else { path.clone() },
            stem,
            local_dir: (!remote).then_some(dir),
        })
    }

    /// How a master names a fragment the library opens as `resolved`: relative to the master
    /// when it lies under the master's directory, else as it is.
    pub fn name_in_master(&self, resolved: &str) -> String {
        let base = self.original.split('#').next().unwrap_or(&self.original);
        let base = if self.local_dir.is_some() { strip_file_scheme(base) } else { base };
        let dir = base.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/"));
        let plain = resolved.split('#').next().unwrap_or(resolved);
        match plain.strip_prefix(dir.as_str()) {
            Some(rel) if !dir.is_empty() || !plain.contains("://") => rel.to_string(),
            _ => plain.to_string(),
        }
    }

    /// The fragment's name as the master records it (relative to the master).
    pub fn relative(&self, var: &str, index: &[u64]) -> String {
        let at: Vec<String> = index.iter().map(u64::to_string).collect();
        format!("{0}/{0}.{var}.{1}.nc", self.stem, at.join("."))
    }
}

fn strip_file_scheme(base: &str) -> &str {
    match base.strip_prefix("file://") {
        Some(p) => p.strip_prefix("localhost").unwrap_or(p),
        None => base,
    }
}

/// Does the name ask for an aggregated dataset (`cfa` in its mode, or a `cfa=` version)?
pub(super) fn wants_cfa(name: &str) -> Option<Convention> {
    let (_, fragment) = name.split_once('#')?;
    let params = crate::url::parse_fragment(fragment);
    let mode_says = params.get("mode").is_some_and(|m| m.split(',').any(|w| w.eq_ignore_ascii_case("cfa")));
    match params.get("cfa").map(|v| v.trim()) {
        Some("0.5") => Some(Convention::V05),
        Some("0.4") => Some(Convention::V04),
        Some(_) => Some(Convention::Cf),
        None => mode_says.then_some(Convention::Cf),
    }
}

/// A fragment: its array's key and its index in the fragment grid.
type FragmentId = (String, Vec<u64>);

struct Stored {
    /// The name the library opens it by.
    name: String,
    /// Its variable's name.
    ncvar: String,
    /// Its name in the master.
    relative: String,
    /// Its variable's shape in the file.
    shape: Vec<usize>,
    /// Made by this writer (an abort removes it).
    created: bool,
}

struct OpenFragment {
    ncid: c_int,
    varid: c_int,
    bytes: u64,
    used: u64,
}

#[derive(Default)]
struct Files {
    stored: HashMap<FragmentId, Stored>,
    open: HashMap<FragmentId, OpenFragment>,
    clock: u64,
    /// The arrays as the last sync saw them (the master is written from them).
    arrays: Vec<ArrayInfo>,
}

/// An aggregated dataset's fragment files.
pub(super) struct FragmentFiles {
    place: Place,
    files: Mutex<Files>,
    handles: usize,
    memory: u64,
    behind: Behind,
    /// This writer, for the thread that writes behind the caller.
    me: std::sync::Weak<FragmentFiles>,
}

/// A fragment write queued behind the caller.
struct Job {
    array: ArrayInfo,
    index: Vec<u64>,
    count: Vec<usize>,
    data: Vec<u8>,
}

/// Fragment writes made behind the caller, on one thread (the real netcdf-c takes one call
/// at a time anyway): the put returns as soon as its chunk is queued, and the caller's next
/// chunk is encoded while this one is written. Every other call waits for the queue first;
/// a write that failed is reported by the next write, read or sync.
#[derive(Default)]
struct Behind {
    queue: Mutex<Option<std::sync::mpsc::SyncSender<Job>>>,
    /// Set once the writer is finished: no more thread.
    closed: std::sync::atomic::AtomicBool,
    inflight: Mutex<usize>,
    idle: std::sync::Condvar,
    failed: Mutex<Option<Error>>,
}

/// Chunks queued at once (each a fragment's data: at most a few fragments' worth of memory).
const QUEUED: usize = 2;

/// A failed call on a fragment, with the fragment's name in the log.
fn fragment_error(name: &str, status: c_int, what: &str) -> Error {
    crate::trace::warn(&format!("fragment {name}: {what}: {}", crate::error::message(status).to_string_lossy()));
    Error::new(if status > 0 { Kind::Errno(status) } else { Kind::Real(status) }, format!("fragment {name}: {what}"))
}

fn check(status: c_int, name: &str, what: &str) -> Result<()> {
    if status == NC_NOERR { Ok(()) } else { Err(fragment_error(name, status, what)) }
}

impl FragmentFiles {
    pub fn new(place: Place) -> Arc<FragmentFiles> {
        let resources = crate::url::s3::resources();
        let handles = crate::config::cfa_filehandles().or(resources.filehandles.map(|n| n as usize)).unwrap_or(64).max(1);
        let memory = crate::config::cfa_memory_budget().or(resources.memory).unwrap_or(1 << 30);
        Arc::new_cyclic(|me| FragmentFiles {
            place,
            files: Mutex::new(Files::default()),
            handles,
            memory,
            behind: Behind::default(),
            me: me.clone(),
        })
    }

    /// The queue of writes behind the caller, its thread started on first use; `None` once
    /// the writer is finished or when no thread can be started (writes are then made at once).
    fn queue(&self) -> Option<std::sync::mpsc::SyncSender<Job>> {
        if self.behind.closed.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        let mut queue = self.behind.queue.lock().unwrap_or_else(|p| p.into_inner());
        if queue.is_none() {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(QUEUED);
            let me = self.me.clone();
            let spawned = std::thread::Builder::new().name("nczarr-cfa-writer".into()).spawn(move || {
                while let Ok(job) = rx.recv() {
                    let Some(files) = me.upgrade() else { return };
                    if let Err(e) = files.write_now(&job.array, &job.index, &job.count, &job.data) {
                        files.behind.failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                    }
                    let mut n = files.behind.inflight.lock().unwrap_or_else(|p| p.into_inner());
                    *n -= 1;
                    files.behind.idle.notify_all();
                }
            });
            if spawned.is_err() {
                return None;
            }
            *queue = Some(tx);
        }
        queue.clone()
    }

    /// Waits until every queued write is made; the first that failed, if any.
    fn drain(&self) -> Result<()> {
        let mut n = self.behind.inflight.lock().unwrap_or_else(|p| p.into_inner());
        while *n > 0 {
            n = self.behind.idle.wait(n).unwrap_or_else(|p| p.into_inner());
        }
        drop(n);
        match self.behind.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// No more writes behind: the queue drained and its thread ended.
    pub fn finish(&self) -> Result<()> {
        let drained = self.drain();
        self.behind.closed.store(true, std::sync::atomic::Ordering::Release);
        self.behind.queue.lock().unwrap_or_else(|p| p.into_inner()).take();
        drained
    }

    pub fn place(&self) -> &Place {
        &self.place
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every stored fragment of `key`: index, shape, name in the master.
    pub fn fragments_of(&self, key: &str) -> Vec<(Vec<u64>, Vec<usize>, String)> {
        let _ = self.drain();
        let files = self.lock();
        let mut out: Vec<_> = files
            .stored
            .iter()
            .filter(|((k, _), _)| k == key)
            .map(|((_, i), s)| (i.clone(), s.shape.clone(), s.relative.clone()))
            .collect();
        out.sort();
        out
    }

    pub fn arrays(&self) -> Vec<ArrayInfo> {
        self.lock().arrays.clone()
    }

    /// Opens a stored fragment for writing, unless it is open.
    fn ensure_open(&self, files: &mut Files, array: &ArrayInfo, id: &FragmentId) -> Result<()> {
        files.clock += 1;
        let clock = files.clock;
        if let Some(f) = files.open.get_mut(id) {
            f.used = clock;
            return Ok(());
        }
        let stored = files.stored.get(id).ok_or_else(|| Error::new(Kind::Internal, "fragment never stored"))?;
        let c = cname(&stored.name)?;
        let mut ncid = 0;
        // SAFETY: NUL-terminated name; valid out-pointer.
        check(unsafe { super::super::file::open(c.as_ptr(), c.as_ptr(), NC_WRITE, &mut ncid) }, &stored.name, "cannot reopen")?;
        let v = cname(&stored.ncvar)?;
        let mut varid = 0;
        // SAFETY: as above.
        let st = unsafe { super::super::var::nc_inq_varid(ncid, v.as_ptr(), &mut varid) };
        if st != NC_NOERR {
            super::super::file::close(ncid);
            return Err(fragment_error(&stored.name, st, &format!("no variable {}", stored.ncvar)));
        }
        let bytes = (stored.shape.iter().product::<usize>() * array.nctype.size()) as u64;
        files.open.insert(id.clone(), OpenFragment { ncid, varid, bytes, used: clock });
        Ok(())
    }

    /// Creates (or replaces) fragment `id` with the variable of shape `count`, open.
    fn create(&self, files: &mut Files, array: &ArrayInfo, id: &FragmentId, count: &[usize]) -> Result<()> {
        self.close_one(files, id)?;
        // A fragment made again keeps its name (a master written elsewhere may name it otherwise).
        let (name, relative) = match files.stored.get(id) {
            Some(s) => (s.name.clone(), s.relative.clone()),
            None => {
                let relative = self.place.relative(&array.name, &id.1);
                (super::resolve(&self.place.original, &relative), relative)
            }
        };
        if let Some(dir) = &self.place.local_dir {
            let folder = format!("{dir}{}", self.place.stem);
            std::fs::create_dir_all(&folder).map_err(|e| Error::new(Kind::Io, format!("{folder}: {e}")))?;
        }
        let c = cname(&name)?;
        let mut ncid = 0;
        // SAFETY: NUL-terminated name; valid out-pointer.
        check(unsafe { super::super::file::create(c.as_ptr(), NC_NETCDF4 | NC_CLOBBER, &mut ncid) }, &name, "cannot create")?;
        let ncvar = files.stored.get(id).map_or(array.name.clone(), |s| s.ncvar.clone());
        let defined = define_fragment(ncid, array, &ncvar, count).map_err(|(st, what)| fragment_error(&name, st, &what));
        let varid = match defined {
            Ok(v) => v,
            Err(e) => {
                super::super::file::abort(ncid);
                return Err(e);
            }
        };
        let created = files.stored.get(id).is_none_or(|s| s.created);
        files.stored.insert(id.clone(), Stored { name, ncvar, relative, shape: count.to_vec(), created });
        files.clock += 1;
        let bytes = (count.iter().product::<usize>() * array.nctype.size()) as u64;
        files.open.insert(id.clone(), OpenFragment { ncid, varid, bytes, used: files.clock });
        Ok(())
    }

    /// Closes (stores) one open fragment.
    fn close_one(&self, files: &mut Files, id: &FragmentId) -> Result<()> {
        let Some(f) = files.open.remove(id) else { return Ok(()) };
        let st = super::super::file::close(f.ncid);
        let name = files.stored.get(id).map_or(String::new(), |s| s.name.clone());
        check(st, &name, "cannot store")
    }

    /// Closes the least recently used fragments (never `keep`) until the budget holds.
    fn evict(&self, files: &mut Files, keep: &FragmentId) -> Result<()> {
        loop {
            let bytes: u64 = files.open.values().map(|f| f.bytes).sum();
            if files.open.len() <= self.handles && bytes <= self.memory {
                return Ok(());
            }
            let Some(victim) = files.open.iter().filter(|(id, _)| *id != keep).min_by_key(|(_, f)| f.used).map(|(id, _)| id.clone()) else {
                return Ok(());
            };
            self.close_one(files, &victim)?;
        }
    }

    /// Stores and closes every open fragment.
    fn close_all(&self, files: &mut Files) -> Result<()> {
        let ids: Vec<FragmentId> = files.open.keys().cloned().collect();
        let mut first = Ok(());
        for id in ids {
            let r = self.close_one(files, &id);
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Drops everything unstored: open fragments aborted, files this writer made removed.
    /// After a failed close: fragments still open are closed without storing more.
    fn abort_open(&self) {
        let _ = self.finish();
        let mut files = self.lock();
        let _real = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        for (_, f) in files.open.drain() {
            super::super::file::abort(f.ncid);
        }
    }

    pub fn abort(&self) {
        self.abort_open();
        let mut files = self.lock();
        if let Some(dir) = &self.place.local_dir {
            for s in files.stored.values().filter(|s| s.created) {
                let _ = std::fs::remove_file(&s.name);
            }
            let _ = std::fs::remove_dir(format!("{dir}{}", self.place.stem));
        }
        files.stored.clear();
    }

    /// Makes fragment `index` of `array` a file of shape `count` holding only fill values,
    /// unless it is stored (CF aggregation has no missing fragments: cfdm refuses an empty
    /// URI). A netCDF-4 variable never written costs no data storage.
    pub fn materialise(&self, array: &ArrayInfo, index: &[u64], count: &[usize]) -> Result<()> {
        self.drain()?;
        let id = (array.key.clone(), index.to_vec());
        let mut files = self.lock();
        if files.stored.contains_key(&id) {
            return Ok(());
        }
        let _real = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        quiet_hdf5_here();
        self.create(&mut files, array, &id, count)?;
        self.close_one(&mut files, &id)
    }

    /// Reads `count` (each at most the stored shape) at the origin of an open fragment.
    fn read_open(&self, files: &Files, array: &ArrayInfo, id: &FragmentId, count: &[usize]) -> Result<Vec<u8>> {
        let f = files.open.get(id).ok_or_else(|| Error::new(Kind::Internal, "fragment not open"))?;
        let mut out = vec![0u8; count.iter().product::<usize>() * array.nctype.size()];
        let start = vec![0usize; count.len()];
        if !out.is_empty() {
            let st =
                // SAFETY: the buffer and start/count are sized for the fragment just above.
                unsafe { super::super::data_matrix::nc_get_vara(f.ncid, f.varid, start.as_ptr(), count.as_ptr(), out.as_mut_ptr() as *mut c_void) };
            check(st, &files.stored[id].name, "cannot read")?;
        }
        Ok(out)
    }

    fn write_open(&self, files: &Files, id: &FragmentId, count: &[usize], data: &[u8]) -> Result<()> {
        let f = files.open.get(id).ok_or_else(|| Error::new(Kind::Internal, "fragment not open"))?;
        let start = vec![0usize; count.len()];
        // SAFETY: the buffer and start/count are sized for the fragment just above.
        let st = unsafe {
            super::super::data_matrix::nc_put_vara(f.ncid, f.varid, start.as_ptr(), count.as_ptr(), data.as_ptr() as *const c_void)
        };
        check(st, &files.stored[id].name, "cannot write")
    }
}

/// Defines a fragment file's dimensions (the aggregated variable's names, the fragment's
/// lengths) and variable (type, fill value, byte order, filters); returns the variable's id.
fn define_fragment(ncid: c_int, array: &ArrayInfo, ncvar: &str, count: &[usize]) -> std::result::Result<c_int, (c_int, String)> {
    let name = |s: &str| cname(s).map_err(|_| (super::super::consts::NC_EBADNAME, format!("name {s:?}")));
    let mut dimids = Vec::with_capacity(count.len());
    for ((dname, _, _), &len) in array.dims.iter().zip(count) {
        let c = name(dname)?;
        let mut id = 0;
        // SAFETY: NUL-terminated name; valid out-pointer.
        let st = unsafe { super::super::group::nc_def_dim(ncid, c.as_ptr(), len, &mut id) };
        if st != NC_NOERR {
            return Err((st, format!("dimension {dname}")));
        }
        dimids.push(id);
    }
    let v = name(ncvar)?;
    let mut varid = 0;
    // SAFETY: NUL-terminated name; `dimids` holds the rank's ids; valid out-pointer.
    let st =
        unsafe { super::super::var::nc_def_var(ncid, v.as_ptr(), array.nctype.id(), dimids.len() as c_int, dimids.as_ptr(), &mut varid) };
    if st != NC_NOERR {
        return Err((st, format!("variable {ncvar}")));
    }
    // SAFETY: one element of the variable's type.
    let st = unsafe { super::super::var::nc_def_var_fill(ncid, varid, 0, array.fill.as_ptr() as *const c_void) };
    if st != NC_NOERR {
        return Err((st, "fill value".into()));
    }
    if array.big_endian {
        // SAFETY: a plain call.
        let st = unsafe { super::super::var::nc_def_var_endian(ncid, varid, super::super::consts::NC_ENDIAN_BIG) };
        if st != NC_NOERR {
            return Err((st, "byte order".into()));
        }
    }
    for f in &array.filters {
        // SAFETY: `params` holds `len` values.
        let st = unsafe { super::super::filters::nc_def_var_filter(ncid, varid, f.id, f.params.len(), f.params.as_ptr()) };
        if st != NC_NOERR {
            return Err((st, format!("filter {}", f.id)));
        }
    }
    for (aname, values) in &array.attributes {
        if aname == "_FillValue" {
            continue;
        }
        let st = put_attribute(ncid, varid, &name(aname)?, values);
        if st != NC_NOERR {
            return Err((st, format!("attribute {aname}")));
        }
    }
    // SAFETY: a plain ncid call.
    let st = unsafe { super::super::file::nc_enddef(ncid) };
    if st != NC_NOERR {
        return Err((st, "enddef".into()));
    }
    Ok(varid)
}

/// One attribute of ours, put on a fragment's variable.
fn put_attribute(ncid: c_int, varid: c_int, name: &CStr, values: &crate::nc::values::Values) -> c_int {
    use crate::nc::values::Values;
    match values {
        // SAFETY: `text` holds `len` bytes.
        Values::Char(text) => unsafe {
            super::super::att::nc_put_att_text(ncid, varid, name.as_ptr(), text.len(), text.as_ptr() as *const c_char)
        },
        Values::Str(items) => {
            let owned: Vec<std::ffi::CString> =
                items.iter().map(|s| std::ffi::CString::new(s.clone().unwrap_or_default().replace('\0', "")).unwrap_or_default()).collect();
            let ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
            // SAFETY: `ptrs` holds `len` NUL-terminated strings that outlive the call.
            unsafe { super::super::att::nc_put_att_string(ncid, varid, name.as_ptr(), ptrs.len(), ptrs.as_ptr() as *mut *const c_char) }
        }
        numeric => {
            let bytes = numeric.to_ne_bytes();
            // SAFETY: `bytes` holds `len` elements of the attribute's type, native order.
            unsafe {
                super::super::att::nc_put_att(
                    ncid,
                    varid,
                    name.as_ptr(),
                    numeric.nctype().id(),
                    numeric.len(),
                    bytes.as_ptr() as *const c_void,
                )
            }
        }
    }
}

impl FragmentFiles {
    /// Stores one fragment now (on the caller's thread, or the one writing behind it).
    fn write_now(&self, array: &ArrayInfo, index: &[u64], count: &[usize], data: &[u8]) -> Result<()> {
        let id = (array.key.clone(), index.to_vec());
        let mut files = self.lock();
        let _real = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        quiet_hdf5_here();
        if files.stored.get(&id).is_some_and(|s| s.shape == count) {
            self.ensure_open(&mut files, array, &id)?;
        } else {
            // New, or its extent along an unlimited dimension changed since it was cut: the
            // chunk holds all of its data, so the file is made again at the new shape.
            self.create(&mut files, array, &id, count)?;
        }
        self.write_open(&files, &id, count, data)?;
        self.evict(&mut files, &id)
    }
}

impl FragmentWriter for FragmentFiles {
    fn write(&self, array: &ArrayInfo, index: &[u64], count: &[usize], data: Vec<u8>) -> Result<()> {
        // A write behind that failed is reported by the next call.
        if let Some(e) = self.behind.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        let Some(queue) = self.queue() else { return self.write_now(array, index, count, &data) };
        *self.behind.inflight.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        let job = Job { array: array.clone(), index: index.to_vec(), count: count.to_vec(), data };
        if let Err(std::sync::mpsc::SendError(job)) = queue.send(job) {
            *self.behind.inflight.lock().unwrap_or_else(|p| p.into_inner()) -= 1;
            return self.write_now(&job.array, &job.index, &job.count, &job.data);
        }
        Ok(())
    }

    fn read(&self, array: &ArrayInfo, index: &[u64], count: &[usize]) -> Result<Option<Vec<u8>>> {
        self.drain()?;
        let id = (array.key.clone(), index.to_vec());
        let mut files = self.lock();
        let Some(stored) = files.stored.get(&id) else { return Ok(None) };
        let have: Vec<usize> = stored.shape.iter().zip(count).map(|(s, c)| (*s).min(*c)).collect();
        let _real = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        quiet_hdf5_here();
        self.ensure_open(&mut files, array, &id)?;
        let block = self.read_open(&files, array, &id, &have)?;
        self.evict(&mut files, &id)?;
        Ok(Some(place_block(count, &have, &array.fill, &block)))
    }

    fn settle(&self, arrays: &[ArrayInfo]) -> Result<()> {
        self.drain()?;
        let mut files = self.lock();
        let _real = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        quiet_hdf5_here();
        for array in arrays.iter().filter(|a| a.dims.iter().any(|d| d.2)) {
            let ids: Vec<FragmentId> = files.stored.keys().filter(|(k, _)| *k == array.key).cloned().collect();
            for id in ids {
                let shape = files.stored[&id].shape.clone();
                // Along an unlimited dimension, only what the array now holds.
                let target: Vec<usize> = (0..shape.len())
                    .map(|d| {
                        let (_, len, unlimited) = &array.dims[d];
                        let start = id.1[d] * array.chunks[d];
                        if *unlimited { shape[d].min(len.saturating_sub(start) as usize) } else { shape[d] }
                    })
                    .collect();
                if target == shape || target.contains(&0) {
                    continue;
                }
                self.ensure_open(&mut files, array, &id)?;
                let block = self.read_open(&files, array, &id, &target)?;
                self.create(&mut files, array, &id, &target)?;
                self.write_open(&files, &id, &target, &block)?;
            }
        }
        files.arrays = arrays.to_vec();
        self.close_all(&mut files)
    }
}

/// One aggregated dataset being written.
pub(super) struct Writer {
    pub files: Arc<FragmentFiles>,
    pub convention: Convention,
    /// The master's create mode for the real library.
    pub master_mode: c_int,
}

fn writers() -> std::sync::MutexGuard<'static, HashMap<c_int, Arc<Writer>>> {
    static WRITERS: std::sync::LazyLock<Mutex<HashMap<c_int, Arc<Writer>>>> = std::sync::LazyLock::new(Default::default);
    WRITERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The file slot of an ncid (a writer is the whole dataset, whichever group is asked).
fn slot(ncid: c_int) -> c_int {
    ncid >> 16
}

pub fn is_writer(ncid: c_int) -> bool {
    writers().contains_key(&slot(ncid))
}

/// `nc_create` of an aggregated dataset: `Some(status)` when the name asks for one.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `ncidp` is NULL or writable.
pub unsafe fn create(call: &str, path: *const c_char, cmode: c_int, ncidp: *mut c_int) -> Option<c_int> {
    if path.is_null() {
        return None;
    }
    // SAFETY: checked non-NULL; the caller's NUL-terminated name.
    let name = std::str::from_utf8(unsafe { CStr::from_ptr(path) }.to_bytes()).ok()?;
    let convention = wants_cfa(name)?;
    Some(super::super::call(
        call,
        || format!("path={name:?} (aggregated, {convention:?})"),
        || {
            let place = Place::parse(name)?;
            if cmode & NC_NOCLOBBER != 0 && master_exists(&place)? {
                return err(Kind::Exists, format!("{}: exists and NC_NOCLOBBER was given", place.master));
            }
            let master_mode = match convention {
                Convention::V04 if cmode & NC_NETCDF4 == 0 => NC_CLOBBER | (cmode & (NC_64BIT_OFFSET | NC_64BIT_DATA)),
                Convention::V04 => NC_CLOBBER | NC_NETCDF4 | (cmode & NC_CLASSIC_MODEL),
                _ => NC_CLOBBER | NC_NETCDF4,
            };
            let files = FragmentFiles::new(place);
            let store = CfaWriteStore::new(name, Arc::new(MemoryStore::new()), files.clone());
            let mut spec = crate::url::OpenSpec::in_memory(name);
            spec.fragment_split = Some(crate::config::cfa_subarray_bytes());
            // The logical dataset is netCDF-4 whatever the master is (the classic model kept
            // when asked for, so a classic master can hold it).
            let classic = cmode & NC_CLASSIC_MODEL != 0 || master_mode & NC_NETCDF4 == 0;
            let flags = OpenFlags::from_bits(NC_NETCDF4 | NC_CLOBBER | if classic { NC_CLASSIC_MODEL } else { 0 });
            let ds = crate::dataset::Dataset::create_on(spec, flags, Box::new(store), crate::format::ZarrFormat::V2)?;
            let ncid = crate::registry::insert(ds)?;
            writers().insert(slot(ncid), Arc::new(Writer { files, convention, master_mode }));
            // SAFETY: the caller's out-pointer.
            unsafe { super::super::put(ncidp, ncid) };
            Ok(())
        },
    ))
}

fn master_exists(place: &Place) -> Result<bool> {
    if place.local_dir.is_some() {
        return Ok(std::path::Path::new(&place.master).exists());
    }
    match crate::url::object::object_name(&place.master, true)? {
        Some(object) => crate::zmap::s3::object::S3Object::new(&object.target, &object.params)?.exists(),
        None => Ok(false),
    }
}

/// Each aggregated variable of a dataset being reopened, as its store sees it.
pub(super) fn array_infos(ours: c_int, vars: &[(crate::zmap::cfa::Aggregated, Vec<u8>)]) -> Result<Vec<ArrayInfo>> {
    let unlimited = super::unlimited_dims(ours)?;
    vars.iter()
        .map(|(agg, fill)| {
            let c = cname(&agg.key)?;
            let mut varid = 0;
            // SAFETY: NUL-terminated name; valid out-pointer.
            super::ok(unsafe { super::super::var::nc_inq_varid(ours, c.as_ptr(), &mut varid) }, "aggregated variable")?;
            let dims = super::var_dimids(ours, varid)?
                .into_iter()
                .zip(&agg.shape)
                .map(|(d, &len)| {
                    let mut buf = [0 as c_char; super::super::consts::NC_MAX_NAME as usize + 1];
                    // SAFETY: NC_MAX_NAME+1 bytes.
                    super::ok(unsafe { super::super::group::nc_inq_dimname(ours, d, buf.as_mut_ptr()) }, "dimension name")?;
                    // SAFETY: NUL-terminated by the library.
                    let name = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
                    Ok((name, len as u64, unlimited.contains(&d)))
                })
                .collect::<Result<_>>()?;
            Ok(ArrayInfo {
                key: agg.key.clone(),
                name: agg.key.clone(),
                root: true,
                dims,
                chunks: agg.chunks.iter().map(|&c| c as u64).collect(),
                nctype: agg.xtype,
                big_endian: false,
                fill: fill.clone(),
                filters: Vec::new(),
                // (The first sync tells the store the variables' attributes.)
                attributes: Vec::new(),
            })
        })
        .collect()
}

/// `nc_open(NC_WRITE)` of an aggregated master: our dataset over its fragments, written as a
/// new one is (new chunks become new fragments; unlimited dimensions grow by them). The
/// fragments must lie on one regular grid (each at a multiple of the grid's step, none larger):
/// a master aggregating irregular fragments, or constant (`unique_values`) ones, is read-only.
pub(super) fn reopen(
    name: &str,
    version: &str,
    format: c_int,
    memory: Arc<MemoryStore>,
    vars: Vec<(crate::zmap::cfa::Aggregated, Vec<u8>)>,
    infos: Vec<ArrayInfo>,
    mode: c_int,
) -> Result<c_int> {
    use super::super::consts::{NC_FORMAT_64BIT_DATA, NC_FORMAT_64BIT_OFFSET, NC_FORMAT_CLASSIC, NC_FORMAT_NETCDF4_CLASSIC};
    let convention = match version {
        "CFA-0.4" => Convention::V04,
        "CFA-0.5" => Convention::V05,
        _ => Convention::Cf,
    };
    let master_mode = NC_CLOBBER
        | match format {
            NC_FORMAT_CLASSIC => 0,
            NC_FORMAT_64BIT_OFFSET => NC_64BIT_OFFSET,
            NC_FORMAT_64BIT_DATA => NC_64BIT_DATA,
            NC_FORMAT_NETCDF4_CLASSIC => NC_NETCDF4 | NC_CLASSIC_MODEL,
            _ => NC_NETCDF4,
        };
    if let Some((agg, _)) = vars.iter().find(|(a, _)| a.key.contains('/')) {
        return err(Kind::ReadOnly, format!("{name}: {} is aggregated in a sub-group; it can be read, not written", agg.key));
    }
    let place = Place::parse(name)?;
    let files = FragmentFiles::new(place);
    {
        let mut held = files.lock();
        for (agg, _) in &vars {
            for f in &agg.fragments {
                let aligned =
                    f.constant.is_none() && (0..agg.chunks.len()).all(|d| f.start[d] % agg.chunks[d] == 0 && f.shape[d] <= agg.chunks[d]);
                if !aligned {
                    return err(
                        Kind::ReadOnly,
                        format!("{name}: {} has fragments off a regular grid; it can be read, not written", agg.key),
                    );
                }
                let index: Vec<u64> = (0..agg.chunks.len()).map(|d| (f.start[d] / agg.chunks[d]) as u64).collect();
                let stored = Stored {
                    name: f.file.clone(),
                    ncvar: f.ncvar.clone(),
                    relative: files.place.name_in_master(&f.file),
                    shape: f.shape.clone(),
                    created: false,
                };
                held.stored.insert((agg.key.clone(), index), stored);
            }
        }
    }
    let store = CfaWriteStore::new(name, memory, files.clone());
    crate::zmap::Zmap::note_arrays(&store, infos)?;
    let mut spec = crate::url::OpenSpec::in_memory(name);
    spec.fragment_split = Some(crate::config::cfa_subarray_bytes());
    let ds = crate::dataset::Dataset::open_on(spec, OpenFlags::from_bits(mode), Box::new(store))?;
    let ncid = crate::registry::insert(ds)?;
    writers().insert(slot(ncid), Arc::new(Writer { files, convention, master_mode }));
    Ok(ncid)
}

/// Our dataset out of define mode and durable (fragments stored), then the master written.
fn store_all(ncid: c_int, writer: &Writer) -> Result<()> {
    // (The dataset's own calls: the exports would come back here.)
    match super::super::with(ncid, |ds, gid| ds.end_define(gid)) {
        Err(e) if e.code() == NC_ENOTINDEFINE => {}
        other => other?,
    }
    super::super::with(ncid, |ds, gid| ds.sync_group(gid))?;
    super::master::write(ncid, writer)
}

/// `nc_sync` of an aggregated dataset: fragments stored, the master written.
pub fn sync(ncid: c_int) -> c_int {
    let Some(writer) = writers().get(&slot(ncid)).cloned() else { return super::super::consts::NC_EBADID };
    super::super::call("nc_sync", || format!("ncid={ncid:#x} (aggregated)"), || store_all(ncid, &writer))
}

/// `nc_close` of an aggregated dataset: as `sync`, then our dataset goes (it goes also when
/// storing failed: the caller's handle is released either way, as netcdf-c's close does).
pub fn close(ncid: c_int) -> c_int {
    let Some(writer) = writers().remove(&slot(ncid)) else { return super::super::consts::NC_EBADID };
    let stored = super::super::call("nc_close", || format!("ncid={ncid:#x} (aggregated)"), || store_all(ncid, &writer));
    let closed = super::super::file::close(ncid);
    if stored != NC_NOERR {
        writer.files.abort_open();
        return stored;
    }
    let finished = super::super::call("nc_close", || format!("ncid={ncid:#x} (aggregated)"), || writer.files.finish());
    if closed != NC_NOERR { closed } else { finished }
}

/// `nc_abort` of an aggregated dataset: nothing more is stored; fragments this writer made
/// are removed from disk.
pub fn abort(ncid: c_int) -> c_int {
    let Some(writer) = writers().remove(&slot(ncid)) else { return super::super::consts::NC_EBADID };
    writer.files.abort();
    super::super::file::abort(ncid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_where_fragments_go() {
        let p = Place::parse("file:///data/run/x.nca#mode=cfa").unwrap();
        assert_eq!((p.master.as_str(), p.stem.as_str(), p.local_dir.as_deref()), ("/data/run/x.nca", "x", Some("/data/run/")));
        assert_eq!(p.relative("tas", &[0, 2, 1]), "x/x.tas.0.2.1.nc");
        assert_eq!(super::super::resolve(&p.original, &p.relative("tas", &[1])), "/data/run/x/x.tas.1.nc");
        let p = Place::parse("s3://b/k/x.nca#mode=cfa").unwrap();
        assert_eq!((p.master.as_str(), p.local_dir.is_none()), ("s3://b/k/x.nca#mode=bytes", true));
        assert_eq!(super::super::resolve(&p.original, &p.relative("v", &[0])), "s3://b/k/x/x.v.0.nc");
        let p = Place::parse("http://h:9/b/x.nca#mode=cfa,s3").unwrap();
        assert_eq!(super::super::resolve(&p.original, &p.relative("v", &[0])), "http://h:9/b/x/x.v.0.nc#mode=bytes");
        assert_eq!(Place::parse("x.nca#mode=cfa").unwrap().local_dir.as_deref(), Some(""));
        assert_eq!(wants_cfa("x.nca#mode=cfa"), Some(Convention::Cf));
        assert_eq!(wants_cfa("x.nca#mode=cfa&cfa=0.4"), Some(Convention::V04));
        assert_eq!(wants_cfa("x.nca#cfa=0.5"), Some(Convention::V05));
        assert_eq!(wants_cfa("x.nca#mode=nczarr,file"), None);
        assert_eq!(wants_cfa("x.nca"), None);
    }
}

//! The fragment files of an aggregated dataset being written: made, filled and closed through
//! our own C API as the dataset's chunks arrive (`FragmentWriter`), written behind the caller
//! on a thread; and `Writer`, one dataset's fragments with the master's layout.

use super::calls::cname;
use crate::aggregate::place::{Convention, Place, resolve};
use crate::error::{Error, Kind, Result};
use crate::ffi::consts::{NC_CLOBBER, NC_NETCDF4, NC_NOERR, NC_WRITE};
use crate::ffi::real::{ONE_AT_A_TIME, quiet_hdf5_here};
use crate::zmap::ArrayInfo;
use crate::zmap::cfa::write::{FragmentWriter, place_block};
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Arc;
use std::sync::Mutex;

/// A fragment: its array's key and its index in the fragment grid.
pub(super) type FragmentId = (String, Vec<u64>);

pub(super) struct Stored {
    /// The name the library opens it by.
    pub(super) name: String,
    /// Its variable's name.
    pub(super) ncvar: String,
    /// Its name in the master.
    pub(super) relative: String,
    /// Its variable's shape in the file.
    pub(super) shape: Vec<usize>,
    /// Made by this writer (an abort removes it).
    pub(super) created: bool,
}

struct OpenFragment {
    ncid: c_int,
    varid: c_int,
    bytes: u64,
    used: u64,
}

#[derive(Default)]
pub(super) struct Files {
    pub(super) stored: HashMap<FragmentId, Stored>,
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

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
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
        let class = crate::url::classify::classify(&stored.name, false);
        // SAFETY: NUL-terminated name; valid out-pointer.
        check(unsafe { crate::ffi::file::open(c.as_ptr(), Some(&class), NC_WRITE, &mut ncid) }, &stored.name, "cannot reopen")?;
        let v = cname(&stored.ncvar)?;
        let mut varid = 0;
        // SAFETY: as above.
        let st = unsafe { crate::ffi::var::nc_inq_varid(ncid, v.as_ptr(), &mut varid) };
        if st != NC_NOERR {
            crate::ffi::file::close(ncid);
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
                (resolve(&self.place.original, &relative), relative)
            }
        };
        if let Some(dir) = &self.place.local_dir {
            let folder = format!("{dir}{}", self.place.stem);
            std::fs::create_dir_all(&folder).map_err(|e| Error::new(Kind::Io, format!("{folder}: {e}")))?;
        }
        let c = cname(&name)?;
        let mut ncid = 0;
        let class = crate::url::classify::classify(&name, true);
        // SAFETY: NUL-terminated name; valid out-pointer.
        check(unsafe { crate::ffi::file::create(c.as_ptr(), Some(&class), NC_NETCDF4 | NC_CLOBBER, &mut ncid) }, &name, "cannot create")?;
        let ncvar = files.stored.get(id).map_or(array.name.clone(), |s| s.ncvar.clone());
        let defined = define_fragment(ncid, array, &ncvar, count).map_err(|(st, what)| fragment_error(&name, st, &what));
        let varid = match defined {
            Ok(v) => v,
            Err(e) => {
                crate::ffi::file::abort(ncid);
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
        let st = crate::ffi::file::close(f.ncid);
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
    pub(super) fn abort_open(&self) {
        let _ = self.finish();
        let mut files = self.lock();
        let _real = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        for (_, f) in files.open.drain() {
            crate::ffi::file::abort(f.ncid);
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
                unsafe { crate::ffi::data_matrix::nc_get_vara(f.ncid, f.varid, start.as_ptr(), count.as_ptr(), out.as_mut_ptr() as *mut c_void) };
            check(st, &files.stored[id].name, "cannot read")?;
        }
        Ok(out)
    }

    fn write_open(&self, files: &Files, id: &FragmentId, count: &[usize], data: &[u8]) -> Result<()> {
        let f = files.open.get(id).ok_or_else(|| Error::new(Kind::Internal, "fragment not open"))?;
        let start = vec![0usize; count.len()];
        // SAFETY: the buffer and start/count are sized for the fragment just above.
        let st = unsafe {
            crate::ffi::data_matrix::nc_put_vara(f.ncid, f.varid, start.as_ptr(), count.as_ptr(), data.as_ptr() as *const c_void)
        };
        check(st, &files.stored[id].name, "cannot write")
    }
}

/// Defines a fragment file's dimensions (the aggregated variable's names, the fragment's
/// lengths) and variable (type, fill value, byte order, filters); returns the variable's id.
fn define_fragment(ncid: c_int, array: &ArrayInfo, ncvar: &str, count: &[usize]) -> std::result::Result<c_int, (c_int, String)> {
    let name = |s: &str| cname(s).map_err(|_| (crate::ffi::consts::NC_EBADNAME, format!("name {s:?}")));
    let mut dimids = Vec::with_capacity(count.len());
    for ((dname, _, _), &len) in array.dims.iter().zip(count) {
        let c = name(dname)?;
        let mut id = 0;
        // SAFETY: NUL-terminated name; valid out-pointer.
        let st = unsafe { crate::ffi::group::nc_def_dim(ncid, c.as_ptr(), len, &mut id) };
        if st != NC_NOERR {
            return Err((st, format!("dimension {dname}")));
        }
        dimids.push(id);
    }
    let v = name(ncvar)?;
    let mut varid = 0;
    // SAFETY: NUL-terminated name; `dimids` holds the rank's ids; valid out-pointer.
    let st =
        unsafe { crate::ffi::var::nc_def_var(ncid, v.as_ptr(), array.nctype.id(), dimids.len() as c_int, dimids.as_ptr(), &mut varid) };
    if st != NC_NOERR {
        return Err((st, format!("variable {ncvar}")));
    }
    // SAFETY: one element of the variable's type.
    let st = unsafe { crate::ffi::var::nc_def_var_fill(ncid, varid, 0, array.fill.as_ptr() as *const c_void) };
    if st != NC_NOERR {
        return Err((st, "fill value".into()));
    }
    if array.big_endian {
        // SAFETY: a plain call.
        let st = unsafe { crate::ffi::var::nc_def_var_endian(ncid, varid, crate::ffi::consts::NC_ENDIAN_BIG) };
        if st != NC_NOERR {
            return Err((st, "byte order".into()));
        }
    }
    for f in &array.filters {
        // SAFETY: `params` holds `len` values.
        let st = unsafe { crate::ffi::filters::nc_def_var_filter(ncid, varid, f.id, f.params.len(), f.params.as_ptr()) };
        if st != NC_NOERR {
            return Err((st, format!("filter {}", f.id)));
        }
    }
    for (aname, values) in &array.attributes {
        // A fragment holds the aggregated variable's stored (packed) values: CF aggregation
        // unpacks a fragment by its own scale_factor/add_offset before the aggregation
        // variable's packing applies, so the fragment carries neither (else cfdm, and we,
        // would unpack twice).
        if matches!(aname.as_str(), "_FillValue" | "scale_factor" | "add_offset") {
            continue;
        }
        let st = put_attribute(ncid, varid, &name(aname)?, values);
        if st != NC_NOERR {
            return Err((st, format!("attribute {aname}")));
        }
    }
    // SAFETY: a plain ncid call.
    let st = unsafe { crate::ffi::file::nc_enddef(ncid) };
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
            crate::ffi::att::nc_put_att_text(ncid, varid, name.as_ptr(), text.len(), text.as_ptr() as *const c_char)
        },
        Values::Str(items) => {
            let owned: Vec<std::ffi::CString> =
                items.iter().map(|s| std::ffi::CString::new(s.clone().unwrap_or_default().replace('\0', "")).unwrap_or_default()).collect();
            let ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
            // SAFETY: `ptrs` holds `len` NUL-terminated strings that outlive the call.
            unsafe { crate::ffi::att::nc_put_att_string(ncid, varid, name.as_ptr(), ptrs.len(), ptrs.as_ptr() as *mut *const c_char) }
        }
        numeric => {
            let bytes = numeric.to_ne_bytes();
            // SAFETY: `bytes` holds `len` elements of the attribute's type, native order.
            unsafe {
                crate::ffi::att::nc_put_att(
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

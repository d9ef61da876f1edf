//! The fragment files of an aggregated dataset being written: made, filled and closed through
//! the caller's `Opener` as the dataset's chunks arrive (`FragmentWriter`), written behind the
//! caller on a thread, within the handle and memory budgets.

use super::Opener;
use super::place::{Place, resolve};
use crate::error::{Error, Kind, Result};
use crate::nc::values::Values;
use crate::source::{CreateFormat, GroupId, NcFile};
use crate::zmap::cfa::write::ArrayInfo;
use crate::zmap::cfa::write::{FragmentWriter, place_block};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A fragment: its array's key and its index in the fragment grid.
pub(super) type FragmentId = (String, Vec<u64>);

pub(super) struct Stored {
    /// The name the opener opens it by.
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
    file: Box<dyn NcFile>,
    varid: usize,
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
pub struct FragmentFiles {
    place: Place,
    opener: Arc<dyn Opener>,
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

/// A failed call on a fragment, with the fragment's name (in the log too).
pub(super) fn fragment_error(name: &str, e: Error, what: &str) -> Error {
    let why = crate::error::message(e.code()).to_string_lossy().into_owned();
    crate::trace::warn(&format!("fragment {name}: {what}: {why} ({})", e.context));
    Error::new(e.kind, format!("fragment {name}: {what}"))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl FragmentFiles {
    pub fn new(place: Place, opener: Arc<dyn Opener>) -> Arc<FragmentFiles> {
        let resources = crate::url::s3::resources();
        let handles = crate::config::cfa_filehandles().or(resources.filehandles.map(|n| n as usize)).unwrap_or(64).max(1);
        let memory = crate::config::cfa_memory_budget().or(resources.memory).unwrap_or(1 << 30);
        Arc::new_cyclic(|me| FragmentFiles {
            place,
            opener,
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
        let mut queue = lock(&self.behind.queue);
        if queue.is_none() {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(QUEUED);
            let me = self.me.clone();
            let spawned = std::thread::Builder::new().name("nczarr-cfa-writer".into()).spawn(move || {
                while let Ok(job) = rx.recv() {
                    let Some(files) = me.upgrade() else { return };
                    if let Err(e) = files.write_now(&job.array, &job.index, &job.count, &job.data) {
                        lock(&files.behind.failed).get_or_insert(e);
                    }
                    *lock(&files.behind.inflight) -= 1;
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
        let mut n = lock(&self.behind.inflight);
        while *n > 0 {
            n = self.behind.idle.wait(n).unwrap_or_else(|p| p.into_inner());
        }
        drop(n);
        match lock(&self.behind.failed).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// No more writes behind: the queue drained and its thread ended.
    pub fn finish(&self) -> Result<()> {
        let drained = self.drain();
        self.behind.closed.store(true, std::sync::atomic::Ordering::Release);
        lock(&self.behind.queue).take();
        drained
    }

    pub fn place(&self) -> &Place {
        &self.place
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
        lock(&self.files)
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
        let file = self.opener.open_write(&stored.name).map_err(|e| fragment_error(&stored.name, e, "cannot reopen"))?;
        let varid = match file.var_id(crate::source::NcSource::root(file.as_ref()), &stored.ncvar) {
            Ok(Some(v)) => v,
            other => {
                let _ = file.close();
                let e = other.err().unwrap_or_else(|| Error::new(Kind::NotVar, stored.ncvar.clone()));
                return Err(fragment_error(&stored.name, e, &format!("no variable {}", stored.ncvar)));
            }
        };
        let bytes = (stored.shape.iter().product::<usize>() * array.nctype.size()) as u64;
        files.open.insert(id.clone(), OpenFragment { file, varid, bytes, used: clock });
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
        let mut file = self.opener.create(&name, CreateFormat::Netcdf4).map_err(|e| fragment_error(&name, e, "cannot create"))?;
        let ncvar = files.stored.get(id).map_or(array.name.clone(), |s| s.ncvar.clone());
        let varid = match define_fragment(file.as_mut(), array, &ncvar, count) {
            Ok(v) => v,
            Err((e, what)) => {
                let _ = file.abort();
                return Err(fragment_error(&name, e, &what));
            }
        };
        let created = files.stored.get(id).is_none_or(|s| s.created);
        files.stored.insert(id.clone(), Stored { name, ncvar, relative, shape: count.to_vec(), created });
        files.clock += 1;
        let bytes = (count.iter().product::<usize>() * array.nctype.size()) as u64;
        files.open.insert(id.clone(), OpenFragment { file, varid, bytes, used: files.clock });
        Ok(())
    }

    /// Closes (stores) one open fragment.
    fn close_one(&self, files: &mut Files, id: &FragmentId) -> Result<()> {
        let Some(f) = files.open.remove(id) else { return Ok(()) };
        let name = files.stored.get(id).map_or(String::new(), |s| s.name.clone());
        f.file.close().map_err(|e| fragment_error(&name, e, "cannot store"))
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

    /// Drops everything unstored: open fragments aborted (after a failed close: fragments
    /// still open are released without storing more).
    pub fn abort_open(&self) {
        let _ = self.finish();
        let mut files = self.lock();
        for (_, f) in files.open.drain() {
            let _ = f.file.abort();
        }
    }

    /// As `abort_open`, and the files this writer made removed.
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
        self.create(&mut files, array, &id, count)?;
        self.close_one(&mut files, &id)
    }

    /// Reads `count` (each at most the stored shape) at the origin of an open fragment.
    fn read_open(&self, files: &mut Files, array: &ArrayInfo, id: &FragmentId, count: &[usize]) -> Result<Vec<u8>> {
        let name = files.stored.get(id).map_or(String::new(), |s| s.name.clone());
        let f = files.open.get_mut(id).ok_or_else(|| Error::new(Kind::Internal, "fragment not open"))?;
        let mut out = vec![0u8; count.iter().product::<usize>() * array.nctype.size()];
        if !out.is_empty() {
            let root = crate::source::NcSource::root(f.file.as_ref());
            let start = vec![0usize; count.len()];
            f.file.get_vara(root, f.varid, array.nctype, &start, count, &mut out).map_err(|e| fragment_error(&name, e, "cannot read"))?;
        }
        Ok(out)
    }

    fn write_open(&self, files: &mut Files, id: &FragmentId, count: &[usize], data: &[u8]) -> Result<()> {
        let name = files.stored.get(id).map_or(String::new(), |s| s.name.clone());
        let f = files.open.get_mut(id).ok_or_else(|| Error::new(Kind::Internal, "fragment not open"))?;
        let root = crate::source::NcSink::root(f.file.as_ref());
        let start = vec![0usize; count.len()];
        f.file.put_vara(root, f.varid, &start, count, data).map_err(|e| fragment_error(&name, e, "cannot write"))
    }

    /// Stores one fragment now (on the caller's thread, or the one writing behind it).
    fn write_now(&self, array: &ArrayInfo, index: &[u64], count: &[usize], data: &[u8]) -> Result<()> {
        let id = (array.key.clone(), index.to_vec());
        let mut files = self.lock();
        if files.stored.get(&id).is_some_and(|s| s.shape == count) {
            self.ensure_open(&mut files, array, &id)?;
        } else {
            // New, or its extent along an unlimited dimension changed since it was cut: the
            // chunk holds all of its data, so the file is made again at the new shape.
            self.create(&mut files, array, &id, count)?;
        }
        self.write_open(&mut files, &id, count, data)?;
        self.evict(&mut files, &id)
    }
}

/// Defines a fragment file's dimensions (the aggregated variable's names, the fragment's
/// lengths) and variable (type, fill value, byte order, filters, attributes); its index.
fn define_fragment(file: &mut dyn NcFile, array: &ArrayInfo, ncvar: &str, count: &[usize]) -> std::result::Result<usize, (Error, String)> {
    let root: GroupId = crate::source::NcSink::root(file);
    for ((dname, _, _), &len) in array.dims.iter().zip(count) {
        file.def_dim(root, dname, Some(len)).map_err(|e| (e, format!("dimension {dname}")))?;
    }
    let dims: Vec<String> = array.dims.iter().map(|d| d.0.clone()).collect();
    let varid = file.def_var(root, ncvar, array.nctype, &dims).map_err(|e| (e, format!("variable {ncvar}")))?;
    file.def_var_fill(root, varid, Values::from_ne_bytes(array.nctype, &array.fill)).map_err(|e| (e, "fill value".to_string()))?;
    if array.big_endian {
        file.def_var_endian_big(root, varid).map_err(|e| (e, "byte order".to_string()))?;
    }
    for f in &array.filters {
        file.def_var_filter(root, varid, f.id, &f.params).map_err(|e| (e, format!("filter {}", f.id)))?;
    }
    for (aname, values) in &array.attributes {
        // A fragment holds the aggregated variable's stored (packed) values: CF aggregation
        // unpacks a fragment by its own scale_factor/add_offset before the aggregation
        // variable's packing applies, so the fragment carries neither (else cfdm, and we,
        // would unpack twice).
        if matches!(aname.as_str(), "_FillValue" | "scale_factor" | "add_offset") {
            continue;
        }
        file.put_att(root, Some(varid), aname, values.clone()).map_err(|e| (e, format!("attribute {aname}")))?;
    }
    file.enddef().map_err(|e| (e, "enddef".to_string()))?;
    Ok(varid)
}

impl FragmentWriter for FragmentFiles {
    fn write(&self, array: &ArrayInfo, index: &[u64], count: &[usize], data: Vec<u8>) -> Result<()> {
        // A write behind that failed is reported by the next call.
        if let Some(e) = lock(&self.behind.failed).take() {
            return Err(e);
        }
        let Some(queue) = self.queue() else { return self.write_now(array, index, count, &data) };
        *lock(&self.behind.inflight) += 1;
        let job = Job { array: array.clone(), index: index.to_vec(), count: count.to_vec(), data };
        if let Err(std::sync::mpsc::SendError(job)) = queue.send(job) {
            *lock(&self.behind.inflight) -= 1;
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
        self.ensure_open(&mut files, array, &id)?;
        let block = self.read_open(&mut files, array, &id, &have)?;
        self.evict(&mut files, &id)?;
        Ok(Some(place_block(count, &have, &array.fill, &block)))
    }

    fn settle(&self, arrays: &[ArrayInfo]) -> Result<()> {
        self.drain()?;
        let mut files = self.lock();
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
                let block = self.read_open(&mut files, array, &id, &target)?;
                self.create(&mut files, array, &id, &target)?;
                self.write_open(&mut files, &id, &target, &block)?;
            }
        }
        files.arrays = arrays.to_vec();
        self.close_all(&mut files)
    }
}

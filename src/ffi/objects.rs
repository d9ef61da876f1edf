//! netCDF files stored as one S3 object (classic, 64-bit offset, CDF-5, netCDF-4), served by
//! the real netcdf-c behind us: the object's bytes are fetched into memory or a local file
//! (`dataset::object_file`), the real library opens them (`nc_open_mem` / `nc_open` /
//! `nc_create`), and its ncid is claimed for it like any forwarded one. What this module adds
//! to a forwarded dataset: the name it was opened by (`nc_inq_path`), and the store of the
//! file at `nc_sync` and `nc_close` (never at `nc_abort`).

use super::consts::{NC_DISKLESS, NC_ENOTBUILT, NC_INMEMORY, NC_MMAP, NC_NOCLOBBER, NC_NOERR, NC_PERSIST, NC_WRITE};
use super::route::{self, real_call};
use crate::dataset::object_file::{Local, ObjectFile};
use crate::error::{Error, Kind};
use crate::lazy::Lazy;
use crate::url::classify::Classified;
use crate::url::object::{ObjectName, has_netcdf_extension};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

/// The open objects, by the file slot of their ncid.
static OPEN: std::sync::LazyLock<Mutex<HashMap<u32, Arc<ObjectFile>>>> = std::sync::LazyLock::new(Default::default);

fn slot(ncid: c_int) -> u32 {
    ncid as u32 >> 16
}

fn table() -> std::sync::MutexGuard<'static, HashMap<u32, Arc<ObjectFile>>> {
    OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn lookup(ncid: c_int) -> Option<Arc<ObjectFile>> {
    table().get(&slot(ncid)).cloned()
}

/// A failed call's code, traced like every other.
fn fail(call: &str, name: &str, e: Error) -> c_int {
    super::call(call, || format!("path={name:?}"), || Err(e))
}

/// The name as a netCDF object, when it is one and a real library can serve it. Without a
/// real library, names only a probe could decide stay Zarr names unless the key ends like a
/// netCDF file (those are NC_ENOTBUILT, saying why).
fn usable(call: &str, class: &Classified) -> Option<std::result::Result<ObjectName, c_int>> {
    let name = class.name.as_str();
    let object = match &class.object {
        Ok(Some(o)) => o.clone(),
        Ok(None) => return None,
        Err(e) => return Some(Err(fail(call, name, e.clone()))),
    };
    if route::passthrough() && route::real_available_retry() {
        return Some(Ok(object));
    }
    if !object.certain && !has_netcdf_extension(&object.target.root) {
        return None;
    }
    let why = "netCDF files on S3 are served by a real netcdf-c: use the preload library, or set NCZARR_FALLBACK_LIB";
    Some(Err(fail(call, name, Error::new(Kind::NotBuilt, why))))
}

/// A dataset our scanners read, registered; its ncid in `*ncidp`.
///
/// # Safety
/// `ncidp` is NULL or writable.
unsafe fn hand_out(call: &str, name: &str, ds: crate::dataset::Dataset, ncidp: *mut c_int) -> c_int {
    match crate::registry::insert(ds) {
        Ok(ncid) => {
            // SAFETY: this function's contract.
            unsafe { super::put(ncidp, ncid) };
            NC_NOERR
        }
        Err(e) => fail(call, name, e),
    }
}

/// `nc_open`/`nc__open` of a local netCDF file that no real library serves (the drop-in
/// alone): read lazily by our scanners, read-only. `None`: not such a file, or one they cannot
/// read (the caller answers as before).
///
/// # Safety
/// `ncidp` is NULL or writable.
pub unsafe fn open_local(call: &str, class: &Classified, mode: c_int, ncidp: *mut c_int) -> Option<c_int> {
    let path = class.real_name.strip_prefix("file://").unwrap_or(&class.real_name);
    match crate::lazy::open_named(class, crate::nc::modes::OpenFlags::from_bits(mode), crate::lazy::Places::Local)? {
        // SAFETY: the caller's ncid out-pointer.
        Ok(Lazy::Open(ds)) => Some(unsafe { hand_out(call, &class.name, *ds, ncidp) }),
        // With no real library to read it whole, the scanners' reason is the answer.
        Ok(Lazy::Whole(why)) if why != crate::lazy::NOT_NETCDF && !route::real_available() => {
            let hint = "a real netcdf-c may read it: set NCZARR_FALLBACK_LIB to one, or put libnczarr_preload.so in front of one";
            Some(fail(call, &class.name, Error::new(Kind::NotNetcdf, format!("{path}: our scanners cannot read it ({why}); {hint}"))))
        }
        Ok(Lazy::Whole(why)) => {
            crate::trace::emit(1, &format!("{call}({:?}): our scanners cannot read it: {why}", class.name));
            None
        }
        Err(e) => Some(fail(call, &class.name, e)),
    }
}

/// `nc_open`/`nc__open` of a netCDF object on S3: `Some(status)` when served here, `None`
/// when the name is not one (the caller goes on as before).
///
/// # Safety
/// `ncidp` is NULL or writable.
pub unsafe fn open(call: &str, class: &Classified, mode: c_int, ncidp: *mut c_int) -> Option<c_int> {
    if let Some(scanned) = crate::lazy::open_named(class, crate::nc::modes::OpenFlags::from_bits(mode), crate::lazy::Places::Remote) {
        match scanned {
            // (An aggregation master becomes our dataset over its fragments in lifecycle's
            // aggregation turn, as when the real library opens it.)
            // SAFETY: the caller's ncid out-pointer.
            Ok(Lazy::Open(ds)) => return Some(unsafe { hand_out(call, &class.name, *ds, ncidp) }),
            Ok(Lazy::Whole(why)) if !why.is_empty() => crate::trace::emit(1, &format!("{call}({:?}): read whole: {why}", class.name)),
            Ok(Lazy::Whole(_)) => {}
            Err(e) => crate::trace::emit(1, &format!("{call}({:?}): read whole after: {e}", class.name)),
        }
    }
    let object = match usable(call, class)? {
        Ok(o) => o,
        Err(status) => return Some(status),
    };
    let file = match ObjectFile::open(object, mode & NC_WRITE != 0) {
        Ok(Some(f)) => f,
        Ok(None) => return None,
        Err(e) => return Some(fail(call, &class.name, e)),
    };
    // SAFETY: the caller's ncid out-pointer.
    Some(unsafe { serve(call, &class.name, file, mode, ncidp) })
}

/// Hands a fetched object to the real library (`nc_open_mem`, or `nc_open` of its local
/// file) and claims the ncid.
///
/// # Safety
/// `ncidp` is NULL or writable.
pub unsafe fn serve(call: &str, name: &str, mut file: ObjectFile, mode: c_int, ncidp: *mut c_int) -> c_int {
    // SAFETY: this function's contract.
    let status = unsafe { open_fetched(call, name, &mut file, mode, ncidp) };
    // SAFETY: the caller's ncid out-pointer, written by the real library on success.
    unsafe { keep(call, name, status, ncidp, false, file) }
}

/// The real library's open of a fetched object's bytes where they are: `nc_open_mem` of bytes
/// in memory, `nc_open` of a local file. The ncid is neither claimed nor remembered: the
/// caller does both, and keeps `file` alive until the real library closes it.
///
/// # Safety
/// `ncidp` is NULL or writable.
pub unsafe fn open_fetched(call: &str, name: &str, file: &mut ObjectFile, mode: c_int, ncidp: *mut c_int) -> c_int {
    // The real library reads the bytes where they are; anything asking for another storage
    // (diskless, mmap) has no meaning for them.
    let mode = mode & !(NC_DISKLESS | NC_INMEMORY | NC_MMAP | NC_PERSIST);
    let status = match &mut file.local {
        Local::Memory(data) => {
            let (size, memory) = (data.len(), data.as_mut_ptr() as *mut c_void);
            // The real library would read a URL's fragment as its own mode: it gets the
            // object's base name (nc_inq_path still answers with the caller's name).
            let base = file.name.target.root.rsplit('/').next().unwrap_or("object").replace('\0', "");
            let base = std::ffi::CString::new(base).unwrap_or_else(|_| c"object".to_owned());
            real_call!(nc_open_mem(base.as_ptr(), mode, size, memory, ncidp): (*const c_char, c_int, usize, *mut c_void, *mut c_int))
        }
        Local::File { path: local, .. } => real_call!(nc_open(local.as_ptr(), mode, ncidp): (*const c_char, c_int, *mut c_int)),
    }
    .unwrap_or_else(|missing| missing);
    // No system call can fail on bytes in memory, yet netcdf-c's in-memory netCDF-3 reader
    // answers some valid files (and truncated ones) with EPERM: its file reader decides.
    if status > 0 && matches!(file.local, Local::Memory(_)) {
        crate::trace::emit(1, &format!("{call}({name:?}): the in-memory open said {status}; opening a local copy"));
        if let Err(e) = file.to_local_file() {
            return fail(call, name, e);
        }
        return match file.path() {
            Some(local) => {
                real_call!(nc_open(local.as_ptr(), mode, ncidp): (*const c_char, c_int, *mut c_int)).unwrap_or_else(|missing| missing)
            }
            None => status,
        };
    }
    status
}

/// `nc_create`/`nc__create` of a netCDF object on S3 (see `open`). `create` makes the local
/// file with the real library's create of the caller's choice, given the local path and the
/// mode without `NC_NOCLOBBER` (the object's existence was checked here).
///
/// # Safety
/// `ncidp` is NULL or writable.
pub unsafe fn create(
    call: &str,
    class: &Classified,
    cmode: c_int,
    ncidp: *mut c_int,
    create: impl FnOnce(*const c_char, c_int) -> c_int,
) -> Option<c_int> {
    let name = class.name.as_str();
    let object = match usable(call, class)? {
        Ok(o) => o,
        Err(status) => return Some(status),
    };
    let file = match ObjectFile::create(object, cmode & NC_NOCLOBBER != 0) {
        Ok(f) => f,
        Err(e) => return Some(fail(call, name, e)),
    };
    let Some(local) = file.path().cloned() else { return Some(fail(call, name, Error::new(Kind::Internal, "no local file"))) };
    let status = create(local.as_ptr(), cmode & !(NC_NOCLOBBER | NC_DISKLESS | NC_INMEMORY | NC_MMAP | NC_PERSIST));
    // SAFETY: as in `open`.
    Some(unsafe { keep(call, name, status, ncidp, true, file) })
}

/// After the real open or create: claim the ncid and remember the object behind it.
///
/// # Safety
/// `ncidp` is NULL or the caller's `int*` the real library wrote to.
unsafe fn keep(call: &str, name: &str, status: c_int, ncidp: *mut c_int, creating: bool, file: ObjectFile) -> c_int {
    // SAFETY: forwarded unchanged.
    let status = unsafe { route::claim_real(status, ncidp, creating) };
    if status == NC_NOERR && !ncidp.is_null() {
        // SAFETY: the real library just wrote the new ncid.
        let ncid = unsafe { *ncidp };
        crate::trace::emit(1, &format!("{call}({name:?}) = 0: ncid {ncid:#x} served by the real netCDF library from {}", file.describe()));
        table().insert(slot(ncid), Arc::new(file));
    } else {
        crate::trace::emit(1, &format!("{call}({name:?}) = {status} (the real netCDF library)"));
    }
    status
}

/// A failed store's code (`NC_ES3`, `NC_EACCESS`, …), traced.
fn stored(call: &str, ncid: c_int, file: &ObjectFile) -> c_int {
    super::call(call, || format!("ncid={ncid:#x} store {}", file.describe()), || file.store())
}

/// After the real `nc_close`: a writer's file is stored (only when the real close succeeded:
/// a file it failed to finish never replaces the object); memory and cache files go.
pub fn after_close(ncid: c_int, status: c_int) -> c_int {
    let status = route::release_real(ncid, status);
    let Some(file) = (if status == NC_NOERR { table().remove(&slot(ncid)) } else { None }) else { return status };
    if file.writable { stored("nc_close", ncid, &file) } else { status }
}

/// After the real `nc_abort`: nothing is stored.
pub fn after_abort(ncid: c_int, status: c_int) -> c_int {
    let status = route::release_real(ncid, status);
    if status == NC_NOERR {
        table().remove(&slot(ncid));
    }
    status
}

/// After the real `nc_sync`: a writer's file is stored as it now stands.
pub fn after_sync(ncid: c_int, status: c_int) -> c_int {
    match lookup(ncid) {
        Some(file) if status == NC_NOERR && file.writable => stored("nc_sync", ncid, &file),
        _ => status,
    }
}

/// The name an object's dataset was opened by (`nc_inq_path`), when `ncid` is one.
pub fn opened_name(ncid: c_int) -> Option<String> {
    lookup(ncid).map(|f| f.name.original.clone())
}

/// Is `ncid` a netCDF object's dataset? (`nc_close_memio` of one closes and stores it as
/// `nc_close` does: its memory is ours, never the caller's.)
pub fn is_object(ncid: c_int) -> bool {
    lookup(ncid).is_some()
}

/// A real-library close for objects (`nc_close_memio` on one).
pub fn close(ncid: c_int) -> c_int {
    let status = real_call!(nc_close(ncid): (c_int)).unwrap_or(NC_ENOTBUILT);
    after_close(ncid, status)
}

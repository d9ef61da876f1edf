//! Aggregated datasets at the C boundary: the core's `aggregate` reads and writes them; this
//! file hands it what only the C crate has (the real netcdf-c, through `real::RealOpener`; the
//! ncids) and keeps the writers by ncid.
//! * `after_open`: a master the real library opened becomes our dataset (read-only over its
//!   fragments, or writable);
//! * `create`: `nc_create` of a name asking for an aggregated dataset;
//! * `sync`, `close`, `abort` of a writer: the fragments stored and the master written.

use crate::aggregate::write::{CreateRequest, Writer};
use crate::aggregate::{build, convention_of, place::wants_cfa};
use crate::error::Result;
use crate::ffi::consts::{
    NC_64BIT_DATA, NC_64BIT_OFFSET, NC_CLASSIC_MODEL, NC_FORMAT_64BIT_DATA, NC_FORMAT_64BIT_OFFSET, NC_FORMAT_CLASSIC,
    NC_FORMAT_NETCDF4_CLASSIC, NC_NETCDF4, NC_NOCLOBBER, NC_NOERR, NC_WRITE,
};
use crate::ffi::real::{RealFile, RealOpener};
use crate::nc::modes::OpenFlags;
use crate::source::CreateFormat;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int};
use std::sync::{Arc, Mutex};

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

/// After the real library opened the dataset `name` (its ncid in `*ncidp`): when the file is
/// an aggregation master, our logical dataset takes its place (the real ncid is closed and
/// `*ncidp` becomes ours). Any other file is left as it is.
///
/// # Safety
/// `ncidp` is the caller's `int*`, which the real library wrote.
pub unsafe fn after_open(name: &str, mode: c_int, ncidp: *mut c_int) -> c_int {
    // SAFETY: the real library just wrote the ncid.
    let real = unsafe { *ncidp };
    let Some(version) = convention_of(&RealFile::borrowed(real)) else { return NC_NOERR };
    let built = crate::ffi::call(
        "nc_open",
        || format!("path={name:?} ({version} master)"),
        || {
            let ncid = open_master(real, name, &version, mode)?;
            // SAFETY: the caller's out-pointer.
            unsafe { *ncidp = ncid };
            Ok(())
        },
    );
    // The master is read; its real-library dataset goes either way.
    crate::ffi::file::close(real);
    built
}

/// After a lazy open of the netCDF file `name` (our dataset, scanned from it, its ncid in
/// `*ncidp`): when the file is an aggregation master, our read-only dataset over its fragments
/// takes its place. Any other file is left as it is.
///
/// # Safety
/// `ncidp` is the caller's `int*`, which the open wrote.
pub unsafe fn after_scanned_open(name: &str, mode: c_int, ncidp: *mut c_int) -> c_int {
    // SAFETY: the open just wrote the ncid.
    let scanned = unsafe { *ncidp };
    let version = crate::registry::with(scanned, |ds, _| Ok(convention_of(ds))).ok().flatten();
    let Some(version) = version else { return NC_NOERR };
    crate::ffi::call(
        "nc_open",
        || format!("path={name:?} ({version} master)"),
        || {
            let mut master = crate::registry::remove(scanned)?;
            let built = build(&mut master, name, &version, Arc::new(RealOpener))?;
            let ncid = crate::registry::insert(built.read_only(OpenFlags::from_bits(mode))?)?;
            // SAFETY: the caller's out-pointer.
            unsafe { *ncidp = ncid };
            Ok(())
        },
    )
}

/// Our dataset for the master `real`, registered; its ncid.
fn open_master(real: c_int, name: &str, version: &str, mode: c_int) -> Result<c_int> {
    let mut master = RealFile::borrowed(real);
    let built = build(&mut master, name, version, Arc::new(RealOpener))?;
    if mode & NC_WRITE == 0 {
        let ds = built.read_only(OpenFlags::from_bits(mode))?;
        return crate::registry::insert(ds);
    }
    let master_format = match master.format()? {
        NC_FORMAT_CLASSIC => CreateFormat::Classic,
        NC_FORMAT_64BIT_OFFSET => CreateFormat::Offset64,
        NC_FORMAT_64BIT_DATA => CreateFormat::Data64,
        NC_FORMAT_NETCDF4_CLASSIC => CreateFormat::Netcdf4Classic,
        _ => CreateFormat::Netcdf4,
    };
    let (ds, writer) = crate::aggregate::write::reopen(built, version, master_format, OpenFlags::from_bits(mode))?;
    let ncid = crate::registry::insert(ds)?;
    writers().insert(slot(ncid), Arc::new(writer));
    Ok(ncid)
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
    Some(crate::ffi::call(
        call,
        || format!("path={name:?} (aggregated, {convention:?})"),
        || {
            let request = CreateRequest {
                netcdf4: cmode & NC_NETCDF4 != 0,
                classic_model: cmode & NC_CLASSIC_MODEL != 0,
                offset64: cmode & NC_64BIT_OFFSET != 0,
                data64: cmode & NC_64BIT_DATA != 0,
                noclobber: cmode & NC_NOCLOBBER != 0,
            };
            let (ds, writer) = crate::aggregate::write::create(name, convention, request, Arc::new(RealOpener))?;
            let ncid = crate::registry::insert(ds)?;
            writers().insert(slot(ncid), Arc::new(writer));
            // SAFETY: the caller's out-pointer.
            unsafe { crate::ffi::put(ncidp, ncid) };
            Ok(())
        },
    ))
}

/// Our dataset out of define mode and durable (fragments stored), then the master written.
fn store_all(ncid: c_int, writer: &Writer) -> Result<()> {
    crate::ffi::with(ncid, |ds, gid| writer.store(ds, gid))
}

/// `nc_sync` of an aggregated dataset: fragments stored, the master written.
pub fn sync(ncid: c_int) -> c_int {
    let Some(writer) = writers().get(&slot(ncid)).cloned() else { return crate::ffi::consts::NC_EBADID };
    crate::ffi::call("nc_sync", || format!("ncid={ncid:#x} (aggregated)"), || store_all(ncid, &writer))
}

/// `nc_close` of an aggregated dataset: as `sync`, then our dataset goes (it goes also when
/// storing failed: the caller's handle is released either way, as netcdf-c's close does).
pub fn close(ncid: c_int) -> c_int {
    let Some(writer) = writers().remove(&slot(ncid)) else { return crate::ffi::consts::NC_EBADID };
    let stored = crate::ffi::call("nc_close", || format!("ncid={ncid:#x} (aggregated)"), || store_all(ncid, &writer));
    let closed = crate::ffi::file::close(ncid);
    if stored != NC_NOERR {
        writer.abort_open();
        return stored;
    }
    let finished = crate::ffi::call("nc_close", || format!("ncid={ncid:#x} (aggregated)"), || writer.finish());
    if closed != NC_NOERR { closed } else { finished }
}

/// `nc_abort` of an aggregated dataset: nothing more is stored; fragments this writer made
/// are removed from disk.
pub fn abort(ncid: c_int) -> c_int {
    let Some(writer) = writers().remove(&slot(ncid)) else { return crate::ffi::consts::NC_EBADID };
    writer.abort();
    crate::ffi::file::abort(ncid)
}

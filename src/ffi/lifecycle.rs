//! Datasets made, opened, stored and closed: the exports an aggregated (CFA) dataset takes
//! part in. Each gives aggregation its turn (a `cfa` mode makes a writer; a real-library file
//! that is a master becomes our logical dataset; a writer's sync and close write its master),
//! then does the plain call of `file.rs`. The aggregation code itself uses the plain calls
//! for its masters and fragments, so it never comes back here.

use super::aggregate;
use super::file;
use super::route::is_foreign;
use crate::url::classify::Classified;
use nczarr_macros::export;
use std::ffi::{c_char, c_int};

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_create(path: *const c_char, cmode: c_int, ncidp: *mut c_int) -> c_int {
    // SAFETY: this export's own contract.
    let class = unsafe { file::judged(path, true) };
    if class.as_ref().is_some_and(|c| c.writes_aggregation) {
        // SAFETY: as above.
        if let Some(status) = unsafe { aggregate::create("nc_create", path, cmode, ncidp) } {
            return status;
        }
    }
    // SAFETY: as above.
    unsafe { file::create(path, class.as_ref(), cmode, ncidp) }
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc__create(
    path: *const c_char,
    cmode: c_int,
    initialsz: usize,
    chunksizehintp: *mut usize,
    ncidp: *mut c_int,
) -> c_int {
    // SAFETY: this export's own contract.
    let class = unsafe { file::judged(path, true) };
    if class.as_ref().is_some_and(|c| c.writes_aggregation) {
        // SAFETY: as above.
        if let Some(status) = unsafe { aggregate::create("nc__create", path, cmode, ncidp) } {
            return status;
        }
    }
    // SAFETY: as above.
    unsafe { file::create_with_hints(path, class.as_ref(), cmode, initialsz, chunksizehintp, ncidp) }
}

/// A successful open by the real library (directly or of a netCDF object): when the file is an
/// aggregation master, our logical dataset takes its place (unless the name or the
/// environment turns that off).
///
/// # Safety
/// `ncidp` is NULL or the caller's `int*`.
unsafe fn aggregate(status: c_int, class: Option<&Classified>, mode: c_int, ncidp: *mut c_int) -> c_int {
    let Some(class) = class.filter(|c| !c.no_aggregation) else { return status };
    if status != 0 || ncidp.is_null() || crate::config::cfa_disabled() {
        return status;
    }
    // SAFETY: checked for NULL; the ncid the open just wrote.
    let ncid = unsafe { *ncidp };
    if !is_foreign(ncid) {
        // A netCDF file our scanners read lazily may be a master too.
        let scanned = crate::registry::with(ncid, |ds, _| Ok(ds.scanned_from().is_some())).unwrap_or(false);
        // SAFETY: as above.
        return if scanned { unsafe { aggregate::after_scanned_open(&class.name, mode, ncidp) } } else { status };
    }
    // SAFETY: the caller's pointer.
    unsafe { aggregate::after_open(&class.name, mode, ncidp) }
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_open(path: *const c_char, mode: c_int, ncidp: *mut c_int) -> c_int {
    // SAFETY: this export's own contract.
    let class = unsafe { file::judged(path, false) };
    // SAFETY: as above.
    unsafe { aggregate(file::open(path, class.as_ref(), mode, ncidp), class.as_ref(), mode, ncidp) }
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc__open(path: *const c_char, mode: c_int, chunksizehintp: *mut usize, ncidp: *mut c_int) -> c_int {
    // SAFETY: this export's own contract.
    let class = unsafe { file::judged(path, false) };
    // SAFETY: as above.
    unsafe { aggregate(file::open_with_hints(path, class.as_ref(), mode, chunksizehintp, ncidp), class.as_ref(), mode, ncidp) }
}

#[export(by_hand)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_sync(ncid: c_int) -> c_int {
    if aggregate::is_writer(ncid) {
        return aggregate::sync(ncid);
    }
    file::sync(ncid)
}

#[export(by_hand)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_close(ncid: c_int) -> c_int {
    if aggregate::is_writer(ncid) {
        return aggregate::close(ncid);
    }
    file::close(ncid)
}

#[export(by_hand)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_abort(ncid: c_int) -> c_int {
    if aggregate::is_writer(ncid) {
        return aggregate::abort(ncid);
    }
    file::abort(ncid)
}

#[export(by_hand)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_close_memio(ncid: c_int, info: *mut super::consts::NC_memio) -> c_int {
    if aggregate::is_writer(ncid) {
        return aggregate::close(ncid);
    }
    // SAFETY: this export's own contract.
    unsafe { file::close_memio(ncid, info) }
}

#[export(path = create)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc__create_mp(
    path: *const c_char,
    cmode: c_int,
    initialsz: usize,
    basepe: c_int,
    chunksizehintp: *mut usize,
    ncidp: *mut c_int,
) -> c_int {
    // SAFETY: forwards the caller's pointers under this function's own contract.
    unsafe {
        let _ = basepe;
        nc__create(path, cmode, initialsz, chunksizehintp, ncidp)
    }
}

#[export(path = open)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc__open_mp(
    path: *const c_char,
    mode: c_int,
    basepe: c_int,
    chunksizehintp: *mut usize,
    ncidp: *mut c_int,
) -> c_int {
    // SAFETY: forwards the caller's pointers under this function's own contract.
    unsafe {
        let _ = basepe;
        nc__open(path, mode, chunksizehintp, ncidp)
    }
}

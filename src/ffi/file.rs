//! Dataset-level exports: create, open, modes, close, whole-file inquiries.

use super::{cstr, put, put_slice, with};
use crate::dataset::Dataset;
use crate::error::{Error, Kind, Result, err};
use crate::nc::magic::FileFormat;
use crate::nc::modes::{FillMode, OpenFlags};
use crate::registry;
use crate::url::classify::{Classified, classify, spec_of as classified_spec};
use crate::url::{self, OpenSpec};
use nczarr_macros::export;
use std::ffi::{c_char, c_int};

/// What to do when a name is not Zarr and no real netcdf-c is there to serve it (the drop-in
/// alone): the common surprise of a `.nc` file given to it.
fn no_real_library_hint() -> &'static str {
    if super::route::real_available() {
        ""
    } else {
        "; this library alone serves Zarr and reads netCDF files: for the rest set NCZARR_FALLBACK_LIB to a real netcdf-c \
         (e.g. /usr/lib/x86_64-linux-gnu/libnetcdf.so.19) or put libnczarr_preload.so in front of one"
    }
}

/// Dataset name → spec. Names that are not ours: a missing path is errno 2 (as netcdf-c),
/// anything else NC_ENOTNC (classic and HDF5 files are not served by this library).
pub(super) fn spec_for(path: *const c_char, creating: bool) -> Result<OpenSpec> {
    // SAFETY: `path` is the caller's NUL-terminated dataset name (NULL checked).
    let raw = unsafe { cstr(path) }?;
    let name = std::str::from_utf8(raw).map_err(|_| crate::error::Error::new(Kind::Invalid, "path is not UTF-8"))?;
    spec_of(name, creating)
}

/// `spec_for` of a name in Rust.
pub(super) fn spec_of(name: &str, creating: bool) -> Result<OpenSpec> {
    match url::parse(name)? {
        Some(spec) if spec.is_explicit() || spec.driver.is_some() => Ok(spec),
        // Without a URL naming Zarr nothing chooses Zarr on create (netcdf-c's dispatcher
        // never does, and a real library behind us creates netCDF files for such names).
        Some(_) if creating => err(Kind::NotBuilt, format!("{name}: only Zarr datasets (URLs with mode=nczarr/zarr) can be created")),
        Some(spec) => match url::probe(&spec.path) {
            Some(_) => Ok(spec),
            None if !spec.path.exists() => err(Kind::Errno(libc::ENOENT), format!("{name}: no such file")),
            None => err(Kind::NotNetcdf, format!("{name}: not a Zarr dataset{}", no_real_library_hint())),
        },
        None if creating => err(Kind::NotBuilt, format!("{name}: only Zarr datasets can be created")),
        None => {
            let base = name.split('#').next().unwrap_or(name);
            if std::path::Path::new(base).exists() {
                err(Kind::NotNetcdf, format!("{name}: not a Zarr dataset{}", no_real_library_hint()))
            } else {
                err(Kind::Errno(libc::ENOENT), format!("{name}: no such file"))
            }
        }
    }
}

/// # Safety
/// `path` is NULL or NUL-terminated; `ncidp` is NULL or writable.
pub unsafe fn create_impl(path: *const c_char, cmode: c_int, ncidp: *mut c_int) -> Result<()> {
    hand_out(Dataset::create(spec_for(path, true)?, OpenFlags::from_bits(cmode))?, ncidp)
}

/// Registers a newly created or opened dataset and stores its ncid through `ncidp`.
pub(super) fn hand_out(ds: Dataset, ncidp: *mut c_int) -> Result<()> {
    let ncid = registry::insert(ds)?;
    // SAFETY: optional out-pointer (NULL or the caller's int*).
    unsafe { put(ncidp, ncid) };
    Ok(())
}

/// # Safety
/// `path` is NULL or NUL-terminated; `ncidp` is NULL or writable.
pub unsafe fn open_impl(path: *const c_char, mode: c_int, ncidp: *mut c_int) -> Result<()> {
    hand_out(Dataset::open(spec_for(path, false)?, OpenFlags::from_bits(mode))?, ncidp)
}

/// The caller's name judged once (`url::classify`); `None` for NULL or a name that is not
/// UTF-8, which the by-name calls report (or the real library, given it unchanged).
///
/// # Safety
/// `path` is NULL or NUL-terminated.
pub(crate) unsafe fn judged(path: *const c_char, creating: bool) -> Option<Classified> {
    if path.is_null() {
        return None;
    }
    // SAFETY: checked non-NULL; the caller's NUL-terminated dataset name.
    let name = std::str::from_utf8(unsafe { std::ffi::CStr::from_ptr(path) }.to_bytes()).ok()?;
    Some(classify(name, creating))
}

/// The real library's name for a judged name (our words out), as C text.
fn real_name(class: &Classified) -> Option<std::ffi::CString> {
    std::ffi::CString::new(class.real_name.as_str()).ok()
}

/// Is a name that is not ours the real library's to open or create now?
fn goes_to_real(class: &Classified) -> bool {
    super::route::passthrough() && !class.is_ours() && super::route::real_available_retry()
}

/// `nc_create` without aggregation (`lifecycle.rs` gives that its turn first): a netCDF
/// object on S3, the real library's file, or our dataset.
///
/// # Safety
/// As `nc_create`'s: `path` NULL or NUL-terminated, `ncidp` NULL or writable.
pub(crate) unsafe fn create(path: *const c_char, class: Option<&Classified>, cmode: c_int, ncidp: *mut c_int) -> c_int {
    let real_create = |local: *const c_char, mode: c_int| {
        super::route::real_call!(nc_create(local, mode, ncidp): (*const c_char, c_int, *mut c_int)).unwrap_or_else(|m| m)
    };
    let Some(class) = class else {
        // SAFETY: this function's contract.
        return unsafe { create_by_name(path, cmode, ncidp) };
    };
    // SAFETY: as above.
    if let Some(status) = unsafe { super::objects::create("nc_create", class, cmode, ncidp, real_create) } {
        return status;
    }
    if goes_to_real(class)
        && let Some(real) = real_name(class)
    {
        // SAFETY: the real library's create of the caller's name; the ncid it wrote, claimed.
        return unsafe { super::route::claim_real(real_create(real.as_ptr(), cmode), ncidp, true) };
    }
    hand_out_created(path, class, cmode, ncidp)
}

/// `nc_create` of a name judged ours (or with no real library to take it).
#[export(name = "nc_create", trace(path, cmode))]
fn hand_out_created(path: *const c_char, class: &Classified, cmode: c_int, ncidp: *mut c_int) -> c_int {
    let spec = classified_spec(class, true, "")?;
    hand_out(Dataset::create(spec, OpenFlags::from_bits(cmode))?, ncidp)
}

/// `nc_create` of a name that is not UTF-8 (or NULL): the real library's when it is not ours.
#[export(name = "nc_create", path = create, trace(path, cmode))]
unsafe fn create_by_name(path: *const c_char, cmode: c_int, ncidp: *mut c_int) -> c_int {
    // SAFETY: this function's contract.
    unsafe { create_impl(path, cmode, ncidp) }
}

/// `nc__create` without aggregation.
///
/// # Safety
/// As `nc__create`'s.
pub(crate) unsafe fn create_with_hints(
    path: *const c_char,
    class: Option<&Classified>,
    cmode: c_int,
    initialsz: usize,
    chunksizehintp: *mut usize,
    ncidp: *mut c_int,
) -> c_int {
    let real_create = |local: *const c_char, mode: c_int| {
        super::route::real_call!(nc__create(local, mode, initialsz, chunksizehintp, ncidp): (*const c_char, c_int, usize, *mut usize, *mut c_int))
            .unwrap_or_else(|m| m)
    };
    let Some(class) = class else {
        // SAFETY: this function's contract.
        return unsafe { create_with_hints_by_name(path, cmode, initialsz, chunksizehintp, ncidp) };
    };
    // SAFETY: as above.
    if let Some(status) = unsafe { super::objects::create("nc__create", class, cmode, ncidp, real_create) } {
        return status;
    }
    if goes_to_real(class)
        && let Some(real) = real_name(class)
    {
        // SAFETY: as in `create`.
        return unsafe { super::route::claim_real(real_create(real.as_ptr(), cmode), ncidp, true) };
    }
    let status = hand_out_created(path, class, cmode, ncidp);
    if status == 0 {
        // SAFETY: optional out-pointer.
        unsafe { put(chunksizehintp, 0) };
    }
    status
}

/// `nc__create` of a name that is not a netCDF object.
#[export(name = "nc__create", path = create, trace(path, cmode, initialsz))]
unsafe fn create_with_hints_by_name(
    path: *const c_char,
    cmode: c_int,
    initialsz: usize,
    chunksizehintp: *mut usize,
    ncidp: *mut c_int,
) -> c_int {
    // SAFETY: this function's contract.
    unsafe { create_impl(path, cmode, ncidp) }?;
    // SAFETY: optional out-pointer.
    unsafe { put(chunksizehintp, 0) };
    Ok(())
}

#[export(memory = create, trace(path, mode, initialsize, ncidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_create_mem(path: *const c_char, mode: c_int, initialsize: usize, ncidp: *mut c_int) -> c_int {
    err(Kind::Invalid, "in-memory Zarr datasets are not supported")
}

/// `nc_open` without aggregation: a netCDF object on S3, the real library's file (by the name
/// without our words), or our dataset.
///
/// # Safety
/// As `nc_open`'s.
pub(crate) unsafe fn open(path: *const c_char, class: Option<&Classified>, mode: c_int, ncidp: *mut c_int) -> c_int {
    let Some(class) = class else {
        // SAFETY: this function's contract.
        return unsafe { open_by_name(path, path, mode, ncidp) };
    };
    // SAFETY: as above.
    if let Some(status) = unsafe { super::objects::open("nc_open", class, mode, ncidp) } {
        return status;
    }
    if goes_to_real(class)
        && let Some(real) = real_name(class)
    {
        let status =
            super::route::real_call!(nc_open(real.as_ptr(), mode, ncidp): (*const c_char, c_int, *mut c_int)).unwrap_or_else(|m| m);
        // SAFETY: the ncid the real library wrote.
        let status = unsafe { super::route::claim_real(status, ncidp, false) };
        // SAFETY: as above.
        return unsafe { noted_real_open(status, ncidp, &real, mode) };
    }
    // SAFETY: as above.
    if let Some(status) = unsafe { super::objects::open_local("nc_open", class, mode, ncidp) } {
        return status;
    }
    hand_out_opened(path, class, mode, ncidp)
}

/// A local file the real library opened read-only: a reference set written in this process
/// may point into it (`lazy::copies`).
///
/// # Safety
/// `ncidp` is NULL or holds the ncid the real library wrote when `status` is 0.
unsafe fn noted_real_open(status: c_int, ncidp: *mut c_int, real: &std::ffi::CStr, mode: c_int) -> c_int {
    if status != 0 || ncidp.is_null() || mode & super::consts::NC_WRITE != 0 {
        return status;
    }
    if let Ok(name) = real.to_str() {
        let path = name.strip_prefix("file://").unwrap_or(name);
        if !path.contains("://") {
            // SAFETY: checked non-NULL; the real library wrote the ncid.
            crate::lazy::copies::real_opened(unsafe { *ncidp }, std::path::PathBuf::from(path));
        }
    }
    status
}

/// `nc_open` of a name judged ours (or with no real library to take it).
#[export(name = "nc_open", trace(path, mode))]
fn hand_out_opened(path: *const c_char, class: &Classified, mode: c_int, ncidp: *mut c_int) -> c_int {
    let spec = classified_spec(class, false, no_real_library_hint())?;
    hand_out(Dataset::open(spec, OpenFlags::from_bits(mode))?, ncidp)
}

/// `nc_open` of a name that is not UTF-8 (or NULL): the real library's when it is not ours.
#[export(name = "nc_open", path = open, forward(real_path, mode, ncidp), trace(path, mode))]
unsafe fn open_by_name(path: *const c_char, real_path: *const c_char, mode: c_int, ncidp: *mut c_int) -> c_int {
    // SAFETY: this function's contract.
    unsafe { open_impl(path, mode, ncidp) }
}

/// `nc__open` without aggregation.
///
/// # Safety
/// As `nc__open`'s.
pub(crate) unsafe fn open_with_hints(
    path: *const c_char,
    class: Option<&Classified>,
    mode: c_int,
    chunksizehintp: *mut usize,
    ncidp: *mut c_int,
) -> c_int {
    let Some(class) = class else {
        // SAFETY: this function's contract.
        return unsafe { open_with_hints_by_name(path, path, mode, chunksizehintp, ncidp) };
    };
    // SAFETY: as above.
    if let Some(status) = unsafe { super::objects::open("nc__open", class, mode, ncidp) } {
        return status;
    }
    if goes_to_real(class)
        && let Some(real) = real_name(class)
    {
        let status =
            super::route::real_call!(nc__open(real.as_ptr(), mode, chunksizehintp, ncidp): (*const c_char, c_int, *mut usize, *mut c_int))
                .unwrap_or_else(|m| m);
        // SAFETY: as in `open`.
        let status = unsafe { super::route::claim_real(status, ncidp, false) };
        // SAFETY: as above.
        return unsafe { noted_real_open(status, ncidp, &real, mode) };
    }
    // SAFETY: as above.
    let status = match unsafe { super::objects::open_local("nc__open", class, mode, ncidp) } {
        Some(status) => status,
        None => hand_out_opened(path, class, mode, ncidp),
    };
    if status == 0 {
        // SAFETY: optional out-pointer.
        unsafe { put(chunksizehintp, 0) };
    }
    status
}

/// `nc__open` of a name that is not a netCDF object.
#[export(name = "nc__open", path = open, forward(real_path, mode, chunksizehintp, ncidp), trace(path, mode))]
unsafe fn open_with_hints_by_name(
    path: *const c_char,
    real_path: *const c_char,
    mode: c_int,
    chunksizehintp: *mut usize,
    ncidp: *mut c_int,
) -> c_int {
    // SAFETY: this function's contract.
    unsafe { open_impl(path, mode, ncidp) }?;
    // SAFETY: optional out-pointer.
    unsafe { put(chunksizehintp, 0) };
    Ok(())
}

#[export(memory = open, trace(path, mode, size, memory, ncidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_open_mem(
    path: *const c_char,
    mode: c_int,
    size: usize,
    memory: *mut std::ffi::c_void,
    ncidp: *mut c_int,
) -> c_int {
    if path.is_null() || memory.is_null() {
        return err(Kind::Invalid, "NULL argument");
    }
    err(Kind::NotNetcdf, "memory images of Zarr datasets are not supported")
}

#[export(memory = open, trace(path, mode, info, ncidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_open_memio(path: *const c_char, mode: c_int, info: *mut super::consts::NC_memio, ncidp: *mut c_int) -> c_int {
    if path.is_null() || info.is_null() {
        return err(Kind::Invalid, "NULL argument");
    }
    err(Kind::NotNetcdf, "memory images of Zarr datasets are not supported")
}

/// `nc_close_memio` of anything but an aggregation writer.
///
/// # Safety
/// As `nc_close_memio`'s: `info` NULL or writable.
pub(crate) unsafe fn close_memio(ncid: c_int, info: *mut super::consts::NC_memio) -> c_int {
    // A netCDF object's bytes are the library's, never the caller's: a plain close (with
    // the store), and `info` says there is no image.
    if super::route::is_foreign(ncid) && super::objects::is_object(ncid) {
        // SAFETY: optional out-pointer.
        unsafe { put(info, super::consts::NC_memio { size: 0, memory: std::ptr::null_mut(), flags: 0 }) };
        return super::objects::close(ncid);
    }
    close_memio_by_ncid(ncid, info)
}

/// `nc_close_memio` of a dataset that is not a netCDF object. No dataset of ours lives in
/// memory: this is a plain close and `info` is left untouched, as netcdf-c's NCZarr close
/// ignores it.
#[export(name = "nc_close_memio", then = super::route::release_real, trace(ncid, info))]
fn close_memio_by_ncid(ncid: c_int, info: *mut super::consts::NC_memio) -> c_int {
    registry::remove(ncid)?.close()
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_redef(ncid: c_int) -> c_int {
    with(ncid, |ds, _| ds.redef())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_enddef(ncid: c_int) -> c_int {
    with(ncid, |ds, gid| ds.end_define(gid))
}

#[export(trace(ncid, h_minfree, v_align, v_minfree, r_align))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc__enddef(ncid: c_int, h_minfree: usize, v_align: usize, v_minfree: usize, r_align: usize) -> c_int {
    with(ncid, |ds, gid| ds.end_define(gid))
}

/// `nc_sync` of anything but an aggregation writer. A netCDF object on S3 is stored as the
/// real library left the file (`after_sync`).
#[export(name = "nc_sync", then = super::objects::after_sync, trace(ncid))]
pub(crate) fn sync(ncid: c_int) -> c_int {
    with(ncid, |ds, gid| ds.sync_group(gid))
}

/// `nc_close` of anything but an aggregation writer.
#[export(name = "nc_close", then = super::objects::after_close, trace(ncid))]
pub(crate) fn close(ncid: c_int) -> c_int {
    registry::remove(ncid)?.close()
}

/// `nc_abort` of anything but an aggregation writer.
#[export(name = "nc_abort", then = super::objects::after_abort, trace(ncid))]
pub(crate) fn abort(ncid: c_int) -> c_int {
    registry::remove(ncid)?.abort()
}

#[export(path = open, trace(path))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_delete(path: *const c_char) -> c_int {
    let spec = spec_for(path, false)?;
    crate::zmap::open::delete(&spec)
}

/// The real nc_delete calls nc_delete_mp through its PLT, i.e. us: this forwards to the real
/// nc_delete_mp, never back to nc_delete.
#[export(path = open)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_delete_mp(path: *const c_char, basepe: c_int) -> c_int {
    // SAFETY: forwards the caller's pointers under this function's own contract.
    unsafe {
        let _ = basepe;
        nc_delete(path)
    }
}

#[export(trace(ncid, fillmode))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_fill(ncid: c_int, fillmode: c_int, old_modep: *mut c_int) -> c_int {
    let old = with(ncid, |ds, _| {
        let mode = FillMode::from_c(fillmode).ok_or_else(|| Error::new(Kind::Invalid, format!("fill mode {fillmode}")))?;
        ds.set_fill(mode)
    })?;
    // SAFETY: optional out-pointer.
    unsafe { put(old_modep, old.to_c()) };
    Ok(())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq(ncid: c_int, ndimsp: *mut c_int, nvarsp: *mut c_int, nattsp: *mut c_int, unlimdimidp: *mut c_int) -> c_int {
    with(ncid, |ds, gid| {
        let c = ds.group_counts(gid);
        // SAFETY: optional out-pointers.
        unsafe {
            put(ndimsp, c.ndims as c_int);
            put(nvarsp, c.nvars as c_int);
            put(nattsp, c.natts as c_int);
            put(unlimdimidp, c.unlimited.map_or(-1, |d| d as c_int));
        }
        Ok(())
    })
}

/// One of the group's counts (`nc_inq`'s), `pick`ed, into `out`.
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn put_count(ncid: c_int, out: *mut c_int, pick: impl FnOnce(crate::dataset::GroupCounts) -> c_int) -> Result<()> {
    let n = with(ncid, |ds, gid| Ok(pick(ds.group_counts(gid))))?;
    // SAFETY: this function's contract.
    unsafe { put(out, n) };
    Ok(())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_ndims(ncid: c_int, ndimsp: *mut c_int) -> c_int {
    // SAFETY: optional out-pointer.
    unsafe { put_count(ncid, ndimsp, |c| c.ndims as c_int) }
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_nvars(ncid: c_int, nvarsp: *mut c_int) -> c_int {
    // SAFETY: optional out-pointer.
    unsafe { put_count(ncid, nvarsp, |c| c.nvars as c_int) }
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_natts(ncid: c_int, nattsp: *mut c_int) -> c_int {
    // SAFETY: optional out-pointer.
    unsafe { put_count(ncid, nattsp, |c| c.natts as c_int) }
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_unlimdim(ncid: c_int, unlimdimidp: *mut c_int) -> c_int {
    // SAFETY: optional out-pointer.
    unsafe { put_count(ncid, unlimdimidp, |c| c.unlimited.map_or(-1, |d| d as c_int)) }
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_unlimdims(ncid: c_int, nunlimdimsp: *mut c_int, unlimdimidsp: *mut c_int) -> c_int {
    with(ncid, |ds, gid| {
        let ids: Vec<c_int> = ds.unlimited_dims(gid).into_iter().map(|d| d as c_int).collect();
        // SAFETY: optional out-pointers; the id array holds the unlimited dims of the group.
        unsafe {
            put(nunlimdimsp, ids.len() as c_int);
            put_slice(unlimdimidsp, &ids);
        }
        Ok(())
    })
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_format(ncid: c_int, formatp: *mut c_int) -> c_int {
    with(ncid, |ds, _| {
        // SAFETY: optional out-pointer.
        unsafe { put(formatp, format_of(ds)) };
        Ok(())
    })
}

/// `nc_inq_format`'s answer: a scanned netCDF file's own format, else netCDF-4 (classic model).
fn format_of(ds: &Dataset) -> c_int {
    use super::consts::{NC_FORMAT_64BIT_OFFSET, NC_FORMAT_CDF5, NC_FORMAT_CLASSIC, NC_FORMAT_NETCDF4, NC_FORMAT_NETCDF4_CLASSIC};
    match ds.scanned_from() {
        Some(FileFormat::Classic) => NC_FORMAT_CLASSIC,
        Some(FileFormat::Offset64) => NC_FORMAT_64BIT_OFFSET,
        Some(FileFormat::Cdf5) => NC_FORMAT_CDF5,
        _ if ds.is_classic_model() => NC_FORMAT_NETCDF4_CLASSIC,
        _ => NC_FORMAT_NETCDF4,
    }
}

/// `nc_inq_format_extended`'s dispatch format: the scanned file's (netCDF-3, HDF5), else NCZarr.
fn formatx_of(ds: &Dataset) -> c_int {
    use super::consts::{NC_FORMATX_NC_HDF5, NC_FORMATX_NC3, NC_FORMATX_NCZARR};
    match ds.scanned_from() {
        Some(FileFormat::Classic | FileFormat::Offset64 | FileFormat::Cdf5) => NC_FORMATX_NC3,
        Some(FileFormat::Hdf5) => NC_FORMATX_NC_HDF5,
        None => NC_FORMATX_NCZARR,
    }
}

/// The format flags netcdf-c's mode carries for a netCDF file it opened.
fn scanned_mode_bits(ds: &Dataset) -> c_int {
    use super::consts::{NC_64BIT_DATA, NC_64BIT_OFFSET, NC_CLASSIC_MODEL, NC_NETCDF4};
    match ds.scanned_from() {
        Some(FileFormat::Offset64) => NC_64BIT_OFFSET,
        Some(FileFormat::Cdf5) => NC_64BIT_DATA,
        Some(FileFormat::Hdf5) => NC_NETCDF4 | if ds.is_classic_model() { NC_CLASSIC_MODEL } else { 0 },
        _ => 0,
    }
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_format_extended(ncid: c_int, formatp: *mut c_int, modep: *mut c_int) -> c_int {
    with(ncid, |ds, _| {
        // SAFETY: optional out-pointers.
        unsafe {
            put(formatp, formatx_of(ds));
            put(modep, ds.mode().reported() | scanned_mode_bits(ds));
        }
        Ok(())
    })
}

#[export(by_hand)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_path(ncid: c_int, pathlen: *mut usize, path: *mut c_char) -> c_int {
    // A netCDF object on S3 reports the name it was opened by, not the local file behind it.
    if super::route::is_foreign(ncid)
        && let Some(name) = super::objects::opened_name(ncid)
    {
        // SAFETY: optional out-pointers; `path` must hold pathlen+1 bytes (netCDF contract).
        unsafe { put_path(pathlen, path, name.as_bytes()) };
        return super::consts::NC_NOERR;
    }
    // SAFETY: this export's own contract.
    unsafe { inq_path_by_ncid(ncid, pathlen, path) }
}

/// `nc_inq_path` of anything but a netCDF object on S3.
///
/// # Safety
/// As `nc_inq_path`'s.
#[export(name = "nc_inq_path", trace(ncid))]
unsafe fn inq_path_by_ncid(ncid: c_int, pathlen: *mut usize, path: *mut c_char) -> c_int {
    with(ncid, |ds, _| {
        // SAFETY: this function's contract.
        unsafe { put_path(pathlen, path, ds.path().as_bytes()) };
        Ok(())
    })
}

/// Stores a path and its length through optional out-pointers.
///
/// # Safety
/// `pathlen` is NULL or writable; `path` is NULL or holds `p.len() + 1` bytes.
unsafe fn put_path(pathlen: *mut usize, path: *mut c_char, p: &[u8]) {
    // SAFETY: the caller's contract.
    unsafe {
        put(pathlen, p.len());
        if !path.is_null() {
            super::put_slice(path as *mut u8, p);
            path.add(p.len()).write(0);
        }
    }
}

#[export(trace(ncid, pe))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_base_pe(ncid: c_int, pe: c_int) -> c_int {
    with(ncid, |_, _| Ok(()))
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_base_pe(ncid: c_int, pe: *mut c_int) -> c_int {
    with(ncid, |_, _| {
        // SAFETY: optional out-pointer.
        unsafe { put(pe, 0) };
        Ok(())
    })
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_show_metadata(ncid: c_int) -> c_int {
    // netcdf-c shows metadata only through its log (at a log level); ours is NCTRACING.
    with(ncid, |ds, _| {
        if crate::trace::enabled(1) {
            crate::trace::emit(1, &ds.describe());
        }
        Ok(())
    })
}

//! Library-level calls: error texts, version, `.ncrc` settings, global defaults, logging,
//! and the netCDF-2 API (thin wrappers over the nc_ calls with netcdf-c's -1/ncerr protocol).

use super::consts::nc_type;
use super::with;
use super::{cstr, malloc_string, put};
use crate::api;
use crate::error::{Kind, Result, err};
use std::ffi::{CStr, c_char, c_int, c_long, c_void};
use std::sync::Mutex;

/// Text of every netCDF error code, byte for byte as netcdf-c 4.10.1 prints them.
fn error_text(code: c_int) -> &'static CStr {
    match code {
        0 => c"No error",
        -33 => c"NetCDF: Not a valid ID",
        -34 => c"NetCDF: Too many files open",
        -35 => c"NetCDF: File exists && NC_NOCLOBBER",
        -36 => c"NetCDF: Invalid argument",
        -37 => c"NetCDF: Write to read only",
        -38 => c"NetCDF: Operation not allowed in data mode",
        -39 => c"NetCDF: Operation not allowed in define mode",
        -40 => c"NetCDF: Index exceeds dimension bound",
        -41 => c"NetCDF: NC_MAX_DIMS exceeded",
        -42 => c"NetCDF: String match to name in use",
        -43 => c"NetCDF: Attribute not found",
        -44 => c"NetCDF: NC_MAX_ATTRS exceeded",
        -45 => c"NetCDF: Not a valid data type or _FillValue type mismatch",
        -46 => c"NetCDF: Invalid dimension ID or name",
        -47 => c"NetCDF: NC_UNLIMITED in the wrong index",
        -48 => c"NetCDF: NC_MAX_VARS exceeded",
        -49 => c"NetCDF: Variable not found",
        -50 => c"NetCDF: Action prohibited on NC_GLOBAL varid",
        -51 => c"NetCDF: Unknown file format",
        -52 => c"NetCDF: In Fortran, string too short",
        -53 => c"NetCDF: NC_MAX_NAME exceeded",
        -54 => c"NetCDF: NC_UNLIMITED size already in use",
        -55 => c"NetCDF: nc_rec op when there are no record vars",
        -56 => c"NetCDF: Attempt to convert between text & numbers",
        -57 => c"NetCDF: Start+count exceeds dimension bound",
        -58 => c"NetCDF: Illegal stride",
        -59 => c"NetCDF: Name contains illegal characters",
        -60 => c"NetCDF: Numeric conversion not representable",
        -61 => c"NetCDF: Memory allocation (malloc) failure",
        -62 => c"NetCDF: One or more variable sizes violate format constraints",
        -63 => c"NetCDF: Invalid dimension size",
        -64 => c"NetCDF: File likely truncated or possibly corrupted",
        -65 => c"NetCDF: Illegal axis type",
        -66 => c"NetCDF: DAP failure",
        -67 => c"NetCDF: libcurl failure",
        -68 => c"NetCDF: I/O failure",
        -69 => c"NetCDF: Variable has no data",
        -70 => c"NetCDF: DAP server error",
        -71 => c"NetCDF: Malformed or inaccessible DAP DAS",
        -72 => c"NetCDF: Malformed or inaccessible DAP2 DDS or DAP4 DMR response",
        -73 => c"NetCDF: Malformed or inaccessible DAP2 DATADDS or DAP4 DAP response",
        -74 => c"NetCDF: Malformed URL",
        -75 => c"NetCDF: Malformed or unexpected Constraint",
        -76 => c"NetCDF: Untranslatable construct",
        -77 => c"NetCDF: Access failure",
        -78 => c"NetCDF: Authorization failure",
        -90 => c"NetCDF: file not found",
        -91 => c"NetCDF: cannot delete file",
        -92 => c"NetCDF: internal library error; Please contact Unidata support",
        -93 => c"NetCDF: PnetCDF error",
        -101 => c"NetCDF: HDF error",
        -102 => c"NetCDF: Can't read file",
        -103 => c"NetCDF: Can't write file",
        -104 => c"NetCDF: Can't create file",
        -105 => c"NetCDF: Can't add HDF5 file metadata",
        -106 => c"NetCDF: Can't define dimensional metadata",
        -107 => c"NetCDF: Can't open HDF5 attribute",
        -108 => c"NetCDF: Problem with variable metadata.",
        -109 => c"NetCDF: Can't create HDF5 compound type",
        -110 => c"NetCDF: Attempt to create attribute that already exists",
        -111 => c"NetCDF: Attempting netcdf-4 operation on netcdf-3 file",
        -112 => c"NetCDF: Attempting netcdf-4 operation on strict nc3 netcdf-4 file",
        -113 => c"NetCDF: Attempting netcdf-3 operation on netcdf-4 file",
        -114 => c"NetCDF: Parallel operation on file opened for non-parallel access",
        -115 => c"NetCDF: Error initializing for parallel access",
        -116 => c"NetCDF: Bad group ID",
        -117 => c"NetCDF: Bad type ID",
        -118 => c"NetCDF: Type has already been defined and may not be edited",
        -119 => c"NetCDF: Bad field ID",
        -120 => c"NetCDF: Bad class",
        -121 => c"NetCDF: Mapped access for atomic types only",
        -122 => c"NetCDF: Attempt to define fill value when data already exists.",
        -123 => c"NetCDF: Attempt to define var properties, like deflate, after enddef.",
        -124 => c"NetCDF: Problem with HDF5 dimscales.",
        -125 => c"NetCDF: No group found.",
        -126 => c"NetCDF: Cannot specify both contiguous and chunking.",
        -127 => c"NetCDF: Bad chunk sizes.",
        -128 => c"NetCDF: Attempt to use feature that was not turned on when netCDF was built.",
        -129 => c"NetCDF: Error in using diskless access",
        -130 => c"NetCDF: Attempt to extend dataset during NC_INDEPENDENT I/O operation. Use nc_var_par_access to set mode NC_COLLECTIVE before extending variable.",
        -131 => c"NetCDF: MPI operation failed.",
        -132 => c"NetCDF: Filter error: bad id or parameters or duplicate filter",
        -133 => c"NetCDF: RC File Failure.",
        -134 => c"NetCDF: File fails strict Null-Byte Header check.",
        -135 => c"NetCDF: In-memory File operation failed.",
        -136 => c"NetCDF: Filter error: undefined filter encountered",
        -137 => c"NetCDF: NCZarr error",
        -138 => c"NetCDF: S3 error",
        -139 => c"NetCDF: Attempt to read empty NCZarr map key",
        -140 => c"NetCDF: Some object exists when it should not",
        -141 => c"NetCDF: Some object not found",
        -142 => c"NetCDF: Unclassified failure in accessing a dynamically loaded plugin",
        _ => c"Unknown Error",
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_strerror(ncerr1: c_int) -> *const c_char {
    if ncerr1 > 0 {
        // SAFETY: strerror returns a pointer to static (per-thread) storage or NULL.
        let p = unsafe { libc::strerror(ncerr1) };
        return if p.is_null() { c"Unknown Error".as_ptr() } else { p };
    }
    error_text(ncerr1).as_ptr()
}

/// First word a netcdf-c version (netCDF4-python parses it); our identity follows.
const LIBVERS: &CStr = c"4.9.2 of Nov 20 2026 00:00:00 $ nczarr-rs";

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_libvers() -> *const c_char {
    LIBVERS.as_ptr()
}

// ---- .ncrc settings (kept in crate::config) ---------------------------------------------

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_rc_set(key: *const c_char, value: *const c_char) -> c_int {
    api!("nc_rc_set", (key, value), {
        // SAFETY: NUL-terminated strings (NULL key → NC_EINVAL).
        let k = String::from_utf8_lossy(unsafe { cstr(key) }?).into_owned();
        let v = if value.is_null() { String::new() } else { String::from_utf8_lossy(unsafe { cstr(value) }?).into_owned() };
        crate::config::rc_set(k, v);
        // Both libraries hold rc keys (passthrough.md §9); Debian's 4.9.0 has no nc_rc_set.
        real_share(super::route::also_real!(nc_rc_set(key, value): (*const c_char, *const c_char)))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_rc_get(key: *const c_char) -> *mut c_char {
    if key.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: non-NULL, NUL-terminated.
    let k = String::from_utf8_lossy(unsafe { CStr::from_ptr(key) }.to_bytes()).into_owned();
    match crate::config::rc_get(&k) {
        Some(v) => malloc_string(v.as_bytes()).unwrap_or(std::ptr::null_mut()),
        None => std::ptr::null_mut(),
    }
}

/// A global setter's share for the real library: its failure becomes ours.
fn real_share(status: Option<c_int>) -> crate::error::Result<()> {
    match status {
        Some(status) if status != 0 => Err(crate::error::Error::from_code(status)),
        _ => Ok(()),
    }
}

// ---- global defaults ------------------------------------------------------------------------

static DEFAULT_FORMAT: Mutex<c_int> = Mutex::new(1);
static ALIGNMENT: Mutex<(c_int, c_int)> = Mutex::new((0, 0));
static META_BLOCK: Mutex<usize> = Mutex::new(0);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_default_format(format: c_int, old_formatp: *mut c_int) -> c_int {
    api!("nc_set_default_format", (format), {
        if !(1..=5).contains(&format) {
            return err(Kind::Invalid, format!("format {format}"));
        }
        {
            let mut f = DEFAULT_FORMAT.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: optional out-pointer.
            unsafe { put(old_formatp, *f) };
            *f = format;
        }
        // The real library creates plain paths with it; the old value reported is ours.
        let mut real_old = 0;
        real_share(super::route::also_real!(nc_set_default_format(format, &mut real_old): (c_int, *mut c_int)))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_chunk_cache(size: usize, nelems: usize, preemption: f32) -> c_int {
    api!("nc_set_chunk_cache", (size, nelems, preemption), {
        if !(0.0..=1.0).contains(&preemption) {
            return err(Kind::Invalid, "preemption outside [0, 1]");
        }
        *crate::dataset::CACHE_DEFAULTS.lock().unwrap_or_else(|p| p.into_inner()) = crate::model::ChunkCache { size, nelems, preemption };
        real_share(super::route::also_real!(nc_set_chunk_cache(size, nelems, preemption): (usize, usize, f32)))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_chunk_cache(sizep: *mut usize, nelemsp: *mut usize, preemptionp: *mut f32) -> c_int {
    api!("nc_get_chunk_cache", (sizep, nelemsp, preemptionp), {
        let c = crate::dataset::cache_defaults();
        // SAFETY: optional out-pointers.
        unsafe {
            put(sizep, c.size);
            put(nelemsp, c.nelems);
            put(preemptionp, c.preemption);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_chunk_cache_ints(size: c_int, nelems: c_int, preemption: c_int) -> c_int {
    // SAFETY: forwards the caller's pointers under this function's own contract.
    unsafe {
        if size <= 0 || nelems <= 0 || !(0..=100).contains(&preemption) {
            return -36;
        }
        nc_set_chunk_cache(size as usize, nelems as usize, preemption as f32 / 100.0)
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_chunk_cache_ints(sizep: *mut c_int, nelemsp: *mut c_int, preemptionp: *mut c_int) -> c_int {
    api!("nc_get_chunk_cache_ints", (sizep, nelemsp, preemptionp), {
        let c = crate::dataset::cache_defaults();
        // SAFETY: optional out-pointers.
        unsafe {
            put(sizep, c.size as c_int);
            put(nelemsp, c.nelems as c_int);
            put(preemptionp, (c.preemption * 100.0).round() as c_int);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_alignment(threshold: c_int, alignment: c_int) -> c_int {
    *ALIGNMENT.lock().unwrap_or_else(|p| p.into_inner()) = (threshold, alignment);
    super::route::also_real!(nc_set_alignment(threshold, alignment): (c_int, c_int)).unwrap_or(0)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_alignment(thresholdp: *mut c_int, alignmentp: *mut c_int) -> c_int {
    // Alignment only means something to the real library's HDF5 files: ask it when present.
    if let Some(status) = super::route::also_real!(nc_get_alignment(thresholdp, alignmentp): (*mut c_int, *mut c_int)) {
        return status;
    }
    let (t, a) = *ALIGNMENT.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: optional out-pointers.
    unsafe {
        put(thresholdp, t);
        put(alignmentp, a);
    }
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_meta_block_size(size: usize) -> c_int {
    *META_BLOCK.lock().unwrap_or_else(|p| p.into_inner()) = size;
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_meta_block_size(sizep: *mut usize) -> c_int {
    // SAFETY: optional out-pointer.
    unsafe { put(sizep, *META_BLOCK.lock().unwrap_or_else(|p| p.into_inner())) };
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_log_level(new_level: c_int) -> c_int {
    // Our logging is NCTRACING; a real library behind us gets the level for its own.
    super::route::also_real!(nc_set_log_level(new_level): (c_int)).unwrap_or(0)
}

static INITIALIZED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static FINALIZED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Idempotent; forwarded to a real library once per process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_initialize() -> c_int {
    if INITIALIZED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return 0;
    }
    super::route::also_real!(nc_initialize(): ()).unwrap_or(0)
}

/// Idempotent: tools call it and the real library's atexit handler calls it again (through
/// our export); the real one runs once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_finalize() -> c_int {
    if FINALIZED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return 0;
    }
    super::route::also_real!(nc_finalize(): ()).unwrap_or(0)
}

/// Used by the preload library's constructor (csrc/preload_init.c); not exported there.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_use_passthrough_numbering() {
    crate::registry::set_passthrough();
}

// ---- netCDF-2 API ---------------------------------------------------------------------------

unsafe extern "C" {
    fn nc_advise(routine: *const c_char, err: c_int, fmt: *const c_char, ...);
}

/// The v2 convention: the value on success, -1 after `nc_advise` on failure. `detail` is the
/// middle part of netcdf-c's message for that routine (`ncid 65536` for most of them).
fn v2(routine: &CStr, status: c_int, ok: c_int, detail: impl FnOnce() -> String) -> c_int {
    if status == 0 {
        return ok;
    }
    let detail = std::ffi::CString::new(detail().replace('\0', "")).unwrap_or_default();
    // SAFETY: C strings; "%s" consumes exactly the one string passed.
    unsafe { nc_advise(routine.as_ptr(), status, c"%s".as_ptr(), detail.as_ptr()) };
    -1
}

/// netcdf-c's detail text for most v2 routines.
fn at(ncid: c_int) -> impl FnOnce() -> String {
    move || format!("ncid {ncid}")
}

/// A C string argument for a message (NULL prints as netcdf-c's printf would).
fn shown(p: *const c_char) -> String {
    if p.is_null() {
        return "(null)".into();
    }
    // SAFETY: non-NULL, NUL-terminated by the caller's contract.
    String::from_utf8_lossy(unsafe { CStr::from_ptr(p) }.to_bytes()).into_owned()
}

// Every v2 wrapper forwards the caller's pointers to the nc_ function under the same contract.

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nccreate(path: *const c_char, cmode: c_int) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::file::nc_create(path, cmode, &mut id) };
    v2(c"nccreate", s, id, || format!("filename \"{}\"", shown(path)))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncopen(path: *const c_char, mode: c_int) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::file::nc_open(path, mode, &mut id) };
    v2(c"ncopen", s, id, || format!("filename \"{}\"", shown(path)))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncsetfill(ncid: c_int, fillmode: c_int) -> c_int {
    let mut old = 0;
    // SAFETY: see above.
    let s = unsafe { super::file::nc_set_fill(ncid, fillmode, &mut old) };
    v2(c"ncsetfill", s, old, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncredef(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncredef", unsafe { super::file::nc_redef(ncid) }, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncendef(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncendef", unsafe { super::file::nc_enddef(ncid) }, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncsync(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncsync", unsafe { super::file::nc_sync(ncid) }, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncabort(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncabort", unsafe { super::file::nc_abort(ncid) }, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncclose(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncclose", unsafe { super::file::nc_close(ncid) }, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncinquire(
    ncid: c_int,
    ndimsp: *mut c_int,
    nvarsp: *mut c_int,
    nattsp: *mut c_int,
    unlimdimp: *mut c_int,
) -> c_int {
    // SAFETY: see above.
    v2(c"ncinquire", unsafe { super::file::nc_inq(ncid, ndimsp, nvarsp, nattsp, unlimdimp) }, ncid, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncdimdef(ncid: c_int, name: *const c_char, len: c_long) -> c_int {
    if len < 0 {
        return v2(c"ncdimdef", -63, -1, at(ncid));
    }
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::group::nc_def_dim(ncid, name, len as usize, &mut id) };
    v2(c"ncdimdef", s, id, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncdimid(ncid: c_int, name: *const c_char) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::group::nc_inq_dimid(ncid, name, &mut id) };
    v2(c"ncdimid", s, id, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncdiminq(ncid: c_int, dimid: c_int, name: *mut c_char, lenp: *mut c_long) -> c_int {
    let mut len = 0usize;
    // SAFETY: see above; `lenp` is an optional out-pointer.
    let s = unsafe { super::group::nc_inq_dim(ncid, dimid, name, &mut len) };
    unsafe { put(lenp, len as c_long) };
    v2(c"ncdiminq", s, dimid, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncdimrename(ncid: c_int, dimid: c_int, name: *const c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncdimrename", unsafe { super::group::nc_rename_dim(ncid, dimid, name) }, dimid, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvardef(ncid: c_int, name: *const c_char, xtype: nc_type, ndims: c_int, dimidsp: *const c_int) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::var::nc_def_var(ncid, name, xtype, ndims, dimidsp, &mut id) };
    v2(c"ncvardef", s, id, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarid(ncid: c_int, name: *const c_char) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::var::nc_inq_varid(ncid, name, &mut id) };
    v2(c"ncvarid", s, id, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarinq(
    ncid: c_int,
    varid: c_int,
    name: *mut c_char,
    xtypep: *mut nc_type,
    ndimsp: *mut c_int,
    dimidsp: *mut c_int,
    nattsp: *mut c_int,
) -> c_int {
    // SAFETY: see above.
    v2(c"ncvarinq", unsafe { super::var::nc_inq_var(ncid, varid, name, xtypep, ndimsp, dimidsp, nattsp) }, varid, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarrename(ncid: c_int, varid: c_int, name: *const c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncvarrename", unsafe { super::var::nc_rename_var(ncid, varid, name) }, varid, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattput(ncid: c_int, varid: c_int, name: *const c_char, xtype: nc_type, len: c_int, op: *const c_void) -> c_int {
    if len < 0 {
        return v2(c"ncattput", -36, -1, at(ncid));
    }
    // SAFETY: see above.
    v2(c"ncattput", unsafe { super::att::nc_put_att(ncid, varid, name, xtype, len as usize, op) }, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattinq(ncid: c_int, varid: c_int, name: *const c_char, xtypep: *mut nc_type, lenp: *mut c_int) -> c_int {
    let mut len = 0usize;
    // SAFETY: see above; `lenp` is an optional out-pointer.
    let s = unsafe { super::att::nc_inq_att(ncid, varid, name, xtypep, &mut len) };
    unsafe { put(lenp, len as c_int) };
    v2(c"ncattinq", s, 1, || format!("ncid {ncid}; varid {varid}; attname \"{}\"", shown(name)))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattget(ncid: c_int, varid: c_int, name: *const c_char, ip: *mut c_void) -> c_int {
    // SAFETY: see above.
    v2(c"ncattget", unsafe { super::att::nc_get_att(ncid, varid, name, ip) }, 1, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattcopy(ncid_in: c_int, varid_in: c_int, name: *const c_char, ncid_out: c_int, varid_out: c_int) -> c_int {
    // SAFETY: see above.
    v2(c"ncattcopy", unsafe { super::att::nc_copy_att(ncid_in, varid_in, name, ncid_out, varid_out) }, 0, String::new)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattname(ncid: c_int, varid: c_int, attnum: c_int, name: *mut c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncattname", unsafe { super::att::nc_inq_attname(ncid, varid, attnum, name) }, attnum, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattrename(ncid: c_int, varid: c_int, name: *const c_char, newname: *const c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncattrename", unsafe { super::att::nc_rename_att(ncid, varid, name, newname) }, 1, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattdel(ncid: c_int, varid: c_int, name: *const c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncattdel", unsafe { super::att::nc_del_att(ncid, varid, name) }, 1, at(ncid))
}

// v2 data access. `long` index/count/stride arrays have `size_t`/`ptrdiff_t`'s layout on the
// LP64 targets we build for, so they are passed through as netcdf-c does there (a negative
// index arrives as a huge one and is NC_EINVALCOORDS). imap is in bytes in v2.
const _: () = assert!(std::mem::size_of::<c_long>() == std::mem::size_of::<usize>());

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarput1(ncid: c_int, varid: c_int, index: *const c_long, value: *const c_void) -> c_int {
    let s = super::data_matrix::nc_put_var1(ncid, varid, index.cast(), value);
    v2(c"ncvarput1", s, 0, at(ncid))
}

/// netcdf-c reports this routine's failures under the name "ncdimid" (c-api.md §12).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarget1(ncid: c_int, varid: c_int, index: *const c_long, value: *mut c_void) -> c_int {
    let s = super::data_matrix::nc_get_var1(ncid, varid, index.cast(), value);
    v2(c"ncdimid", s, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarput(ncid: c_int, varid: c_int, start: *const c_long, count: *const c_long, value: *const c_void) -> c_int {
    let s = super::data_matrix::nc_put_vara(ncid, varid, start.cast(), count.cast(), value);
    v2(c"ncvarput", s, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarget(ncid: c_int, varid: c_int, start: *const c_long, count: *const c_long, value: *mut c_void) -> c_int {
    let s = super::data_matrix::nc_get_vara(ncid, varid, start.cast(), count.cast(), value);
    v2(c"ncvarget", s, 0, || format!("ncid {ncid}; varid {varid}"))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarputs(
    ncid: c_int,
    varid: c_int,
    start: *const c_long,
    count: *const c_long,
    stride: *const c_long,
    value: *const c_void,
) -> c_int {
    if stride.is_null() {
        // SAFETY: same contract.
        return unsafe { ncvarput(ncid, varid, start, count, value) };
    }
    let s = super::data_matrix::nc_put_vars(ncid, varid, start.cast(), count.cast(), stride.cast(), value);
    v2(c"ncvarputs", s, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvargets(
    ncid: c_int,
    varid: c_int,
    start: *const c_long,
    count: *const c_long,
    stride: *const c_long,
    value: *mut c_void,
) -> c_int {
    if stride.is_null() {
        // SAFETY: same contract.
        return unsafe { ncvarget(ncid, varid, start, count, value) };
    }
    let s = super::data_matrix::nc_get_vars(ncid, varid, start.cast(), count.cast(), stride.cast(), value);
    v2(c"ncvargets", s, 0, at(ncid))
}

/// Runs a mapped v2 access with its byte map turned into an element map (netcdf-c divides
/// each entry by the type's size). Errors looking the variable up are returned raw, as
/// netcdf-c does, without `nc_advise`.
fn with_element_map(routine: &CStr, ncid: c_int, varid: c_int, map: *const c_long, call: impl FnOnce(*const isize) -> c_int) -> c_int {
    let (mut ndims, mut xtype) = (0, 0);
    // SAFETY: out-pointers to locals.
    let s = unsafe { super::var::nc_inq_varndims(ncid, varid, &mut ndims) };
    if s != 0 {
        return s;
    }
    // SAFETY: as above.
    let s = unsafe { super::var::nc_inq_vartype(ncid, varid, &mut xtype) };
    if s != 0 {
        return s;
    }
    // SAFETY: no pointers.
    let size = unsafe { super::usertypes::nctypelen(xtype) }.max(1) as isize;
    // SAFETY: the caller's map holds one entry per dimension.
    let bytes = unsafe { std::slice::from_raw_parts(map, ndims.max(0) as usize) };
    let imap: Vec<isize> = bytes.iter().map(|&b| b as isize / size).collect();
    v2(routine, call(imap.as_ptr()), 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarputg(
    ncid: c_int,
    varid: c_int,
    start: *const c_long,
    count: *const c_long,
    stride: *const c_long,
    map: *const c_long,
    value: *const c_void,
) -> c_int {
    if map.is_null() {
        // SAFETY: same contract.
        return unsafe { ncvarputs(ncid, varid, start, count, stride, value) };
    }
    with_element_map(c"ncvarputg", ncid, varid, map, |imap| {
        super::data_matrix::nc_put_varm(ncid, varid, start.cast(), count.cast(), stride.cast(), imap, value)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvargetg(
    ncid: c_int,
    varid: c_int,
    start: *const c_long,
    count: *const c_long,
    stride: *const c_long,
    map: *const c_long,
    value: *mut c_void,
) -> c_int {
    if map.is_null() {
        // SAFETY: same contract.
        return unsafe { ncvargets(ncid, varid, start, count, stride, value) };
    }
    with_element_map(c"ncvargetg", ncid, varid, map, |imap| {
        super::data_matrix::nc_get_varm(ncid, varid, start.cast(), count.cast(), stride.cast(), imap, value)
    })
}

/// Record variables (first dimension unlimited) of a group and the bytes one record of each
/// holds; none when the group has no unlimited dimension.
fn record_vars(ncid: c_int) -> Result<Vec<(c_int, Vec<usize>, usize)>> {
    with(ncid, |ds, gid| {
        let Some(unlim) = ds.model.first_unlimited(gid) else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for (varid, var) in ds.model.groups[gid].vars.iter().enumerate() {
            if var.dimids.first() == Some(&unlim) {
                let lens: Vec<usize> = var.dimids.iter().map(|&d| ds.model.dims[d].len as usize).collect();
                let bytes = lens[1..].iter().product::<usize>() * var.nctype.size();
                out.push((varid as c_int, lens, bytes));
            }
        }
        Ok(out)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncrecinq(ncid: c_int, nrecvarsp: *mut c_int, recvarids: *mut c_int, recsizes: *mut c_long) -> c_int {
    match record_vars(ncid) {
        Ok(vars) => {
            // SAFETY: optional out-pointers; the arrays hold one entry per record variable.
            unsafe {
                put(nrecvarsp, vars.len() as c_int);
                for (i, (varid, _, bytes)) in vars.iter().enumerate() {
                    if !recvarids.is_null() {
                        *recvarids.add(i) = *varid;
                    }
                    if !recsizes.is_null() {
                        *recsizes.add(i) = *bytes as c_long;
                    }
                }
            }
            vars.len() as c_int
        }
        Err(e) => v2(c"ncrecinq", e.code(), 0, at(ncid)),
    }
}

/// One record of every record variable, from or to the caller's per-variable buffers (a NULL
/// buffer skips that variable).
fn records(ncid: c_int, recnum: c_long, mut each: impl FnMut(c_int, &[usize], &[usize], usize) -> c_int) -> c_int {
    let vars = match record_vars(ncid) {
        Ok(v) => v,
        Err(e) => return e.code(),
    };
    for (i, (varid, lens, _)) in vars.iter().enumerate() {
        let mut start = vec![0usize; lens.len()];
        start[0] = recnum as usize;
        let mut count = lens.clone();
        count[0] = 1;
        let s = each(*varid, &start, &count, i);
        if s != 0 {
            return s;
        }
    }
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncrecput(ncid: c_int, recnum: c_long, datap: *const *const c_void) -> c_int {
    let s = records(ncid, recnum, |varid, start, count, i| {
        // SAFETY: `datap` holds one pointer per record variable (ncrecinq's order).
        let data = if datap.is_null() { std::ptr::null() } else { unsafe { *datap.add(i) } };
        if data.is_null() { 0 } else { super::data_matrix::nc_put_vara(ncid, varid, start.as_ptr(), count.as_ptr(), data) }
    });
    v2(c"ncrecput", s, 0, at(ncid))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncrecget(ncid: c_int, recnum: c_long, datap: *const *mut c_void) -> c_int {
    let s = records(ncid, recnum, |varid, start, count, i| {
        // SAFETY: `datap` holds one pointer per record variable (ncrecinq's order).
        let data = if datap.is_null() { std::ptr::null_mut() } else { unsafe { *datap.add(i) } };
        if data.is_null() { 0 } else { super::data_matrix::nc_get_vara(ncid, varid, start.as_ptr(), count.as_ptr(), data) }
    });
    v2(c"ncrecget", s, 0, at(ncid))
}

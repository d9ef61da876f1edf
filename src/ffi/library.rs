//! Library-wide calls that name no dataset: error texts, version, `.ncrc` settings, global
//! defaults (format, chunk cache, alignment), logging, initialize/finalize.

use super::{cstr, malloc_string, put};
use crate::error::{Kind, err};
use nczarr_macros::export;
use std::ffi::{CStr, c_char, c_int};
use std::sync::Mutex;

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_strerror(ncerr1: c_int) -> *const c_char {
    if ncerr1 > 0 {
        // SAFETY: strerror returns a pointer to static (per-thread) storage or NULL.
        let p = unsafe { libc::strerror(ncerr1) };
        return if p.is_null() { c"Unknown Error".as_ptr() } else { p };
    }
    crate::error::message(ncerr1).as_ptr()
}

// ---- the reason behind an error ------------------------------------------------------------

thread_local! {
    /// The reason behind this thread's last failed call (`nczarr_last_error`).
    static LAST_ERROR: std::cell::RefCell<std::ffi::CString> = std::cell::RefCell::new(std::ffi::CString::default());
}

/// Keeps a failed call's reason for `nczarr_last_error`, and says it on stderr (one line)
/// when `NCZARR_LOG` includes `errors`: the cause without turning tracing on.
pub(crate) fn note_error(call: &str, code: c_int, reason: &str) {
    let text = format!("{call}: {} ({reason})", crate::error::message(code).to_string_lossy());
    if crate::config::log_errors() {
        eprintln!("nczarr: {text}");
    }
    let c = std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = c);
}

/// Our extension (`netcdf_nczarr.h`): the reason behind the last call of this thread that
/// failed, as one line (`nc_open: NetCDF: Invalid argument (unknown mode word "nczar" …)`);
/// "" before any. Valid until the next failed call on this thread; calls forwarded to another
/// netcdf-c are not ours and are not recorded.
#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// First word a netcdf-c version (netCDF4-python parses it); our identity follows.
static LIBVERS: std::sync::LazyLock<std::ffi::CString> = std::sync::LazyLock::new(|| {
    let text = format!("{} of Nov 20 2026 00:00:00 $ nczarr-rs", crate::nc::version::NETCDF);
    std::ffi::CString::new(text).unwrap_or_default()
});

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_libvers() -> *const c_char {
    LIBVERS.as_ptr()
}

// ---- .ncrc settings (kept in crate::config) ---------------------------------------------

#[export(trace(key, value))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_rc_set(key: *const c_char, value: *const c_char) -> c_int {
    // SAFETY: NUL-terminated strings (NULL key → NC_EINVAL).
    let k = String::from_utf8_lossy(unsafe { cstr(key) }?).into_owned();
    // SAFETY: a non-NULL value is NUL-terminated.
    let v = if value.is_null() { String::new() } else { String::from_utf8_lossy(unsafe { cstr(value) }?).into_owned() };
    crate::config::rc_set(k, v);
    // Both libraries hold rc keys (passthrough.md §9); Debian's 4.9.0 has no nc_rc_set.
    super::route::real_share(super::route::also_real!(nc_rc_set(key, value): (*const c_char, *const c_char)))
}

#[export]
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

// ---- global defaults ------------------------------------------------------------------------

static DEFAULT_FORMAT: Mutex<c_int> = Mutex::new(1);
static ALIGNMENT: Mutex<(c_int, c_int)> = Mutex::new((0, 0));
static META_BLOCK: Mutex<usize> = Mutex::new(0);

#[export(trace(format))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_default_format(format: c_int, old_formatp: *mut c_int) -> c_int {
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
    super::route::real_share(super::route::also_real!(nc_set_default_format(format, &mut real_old): (c_int, *mut c_int)))
}

#[export(trace(size, nelems, preemption))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_chunk_cache(size: usize, nelems: usize, preemption: f32) -> c_int {
    if !(0.0..=1.0).contains(&preemption) {
        return err(Kind::Invalid, "preemption outside [0, 1]");
    }
    *crate::dataset::CACHE_DEFAULTS.lock().unwrap_or_else(|p| p.into_inner()) = crate::model::ChunkCache { size, nelems, preemption };
    super::route::real_share(super::route::also_real!(nc_set_chunk_cache(size, nelems, preemption): (usize, usize, f32)))
}

#[export(trace(sizep, nelemsp, preemptionp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_chunk_cache(sizep: *mut usize, nelemsp: *mut usize, preemptionp: *mut f32) -> c_int {
    let c = crate::dataset::cache_defaults();
    // SAFETY: optional out-pointers.
    unsafe {
        put(sizep, c.size);
        put(nelemsp, c.nelems);
        put(preemptionp, c.preemption);
    }
    Ok(())
}

#[export]
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

#[export(trace(sizep, nelemsp, preemptionp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_chunk_cache_ints(sizep: *mut c_int, nelemsp: *mut c_int, preemptionp: *mut c_int) -> c_int {
    let c = crate::dataset::cache_defaults();
    // SAFETY: optional out-pointers.
    unsafe {
        put(sizep, c.size as c_int);
        put(nelemsp, c.nelems as c_int);
        put(preemptionp, (c.preemption * 100.0).round() as c_int);
    }
    Ok(())
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_alignment(threshold: c_int, alignment: c_int) -> c_int {
    *ALIGNMENT.lock().unwrap_or_else(|p| p.into_inner()) = (threshold, alignment);
    super::route::also_real!(nc_set_alignment(threshold, alignment): (c_int, c_int)).unwrap_or(0)
}

#[export]
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

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_meta_block_size(size: usize) -> c_int {
    *META_BLOCK.lock().unwrap_or_else(|p| p.into_inner()) = size;
    0
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_meta_block_size(sizep: *mut usize) -> c_int {
    // SAFETY: optional out-pointer.
    unsafe { put(sizep, *META_BLOCK.lock().unwrap_or_else(|p| p.into_inner())) };
    0
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_log_level(new_level: c_int) -> c_int {
    // Our logging is NCTRACING; a real library behind us gets the level for its own.
    super::route::also_real!(nc_set_log_level(new_level): (c_int)).unwrap_or(0)
}

static INITIALIZED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static FINALIZED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Idempotent; forwarded to a real library once per process.
#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_initialize() -> c_int {
    if INITIALIZED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return 0;
    }
    super::route::also_real!(nc_initialize(): ()).unwrap_or(0)
}

/// Idempotent: tools call it and the real library's atexit handler calls it again (through
/// our export); the real one runs once.
#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_finalize() -> c_int {
    if FINALIZED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return 0;
    }
    super::route::also_real!(nc_finalize(): ()).unwrap_or(0)
}

/// Used by the preload library's constructor (csrc/preload_init.c); not exported there.
#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_use_passthrough_numbering() {
    crate::registry::set_passthrough();
}

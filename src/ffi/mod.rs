//! The C boundary. Every export converts its arguments, calls the safe core and returns an
//! `NC_*` code through `call`, which also turns a panic into NC_EINTERNAL and traces the call
//! when `NCTRACING` is set. The core sees C types only where it calls C itself (the MPI
//! vtable, filter plugins); this module sees the core only through `Dataset`'s methods (its
//! fields are private), never its model.
//!
//! Each export has one shape, written once under `#[export]` (the `nczarr-macros` crate): its
//! options say how the call is routed (by ncid, by dataset name with `path = create|open`,
//! memory images with `memory = ..`, two ncids with `ncids(a, b), mixed = f`) and traced
//! (`trace(args)` runs the body inside `call`); the body converts arguments and calls the
//! core. Where an export first gives another world its turn (aggregation, netCDF objects on
//! S3), the rest is a helper under the same attribute with `name = "nc_x"`. `api!` remains for
//! the helpers many generated exports share, whose traced name is an argument.
//!
//! # Safety
//! Every export is `unsafe extern "C"` with one contract, netcdf-c's documented one: each
//! pointer argument is NULL (where netcdf-c allows it, checked here) or valid for what the
//! function reads or writes through it. That is why the hand-written exports carry no
//! per-function `# Safety` section (the generated matrices point to theirs).
#![allow(clippy::missing_safety_doc)]

mod aggregate;
pub mod att;
mod att_matrix;
pub mod consts;
mod cross;
pub mod data;
mod data_matrix;
pub mod file;
pub mod filters;
pub mod group;
pub mod library;
mod lifecycle;
mod objects;
pub mod par;
mod real;
pub mod route;
pub mod tool_compat;
pub mod usertypes;
pub mod v2;
pub mod var;

use crate::error::{Error, Kind, Result, err};
use crate::registry;
use crate::trace;
use std::ffi::{CStr, c_char, c_int, c_long};

/// `long` is 64-bit on LP64, 32-bit elsewhere: netcdf-c maps it by size.
pub(crate) const LONG_TYPE: crate::nc::types::NcType =
    if std::mem::size_of::<c_long>() == 8 { crate::nc::types::NcType::Int64 } else { crate::nc::types::NcType::Int };

use consts::{NC_EINTERNAL, NC_NOERR};

/// Test hook (reliability.md A10): `NCZARR_TEST_PANIC=<function>[:<n>]`, read at the first
/// call, makes the n-th call (default the first) of that exported function panic inside the
/// boundary, so a test can check that the panic becomes NC_EINTERNAL and later calls work.
static PANIC_AT: std::sync::LazyLock<Option<(String, usize)>> = std::sync::LazyLock::new(crate::config::test_panic);
static PANIC_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn test_panic_hook(name: &str) {
    if let Some((at, nth)) = PANIC_AT.as_ref()
        && at == name
        && PANIC_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == *nth
    {
        panic!("NCZARR_TEST_PANIC: forced panic in {name}");
    }
}

/// Runs one API call: panics become NC_EINTERNAL, errors their code; traced at level ≥ 1.
pub fn call(name: &str, args: impl FnOnce() -> String, body: impl FnOnce() -> Result<()>) -> c_int {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        test_panic_hook(name);
        body()
    }));
    let code = match &result {
        Ok(Ok(())) => NC_NOERR,
        Ok(Err(e)) => e.code(),
        Err(_) => NC_EINTERNAL,
    };
    match &result {
        Ok(Err(e)) => library::note_error(name, code, &e.to_string()),
        Err(_) => library::note_error(name, code, "a panic inside the library"),
        _ => {}
    }
    if trace::enabled(1) {
        let detail = match &result {
            Ok(Err(e)) => format!(" ({e})"),
            Err(_) => " (panic)".into(),
            _ => String::new(),
        };
        trace::emit(1, &format!("{name}({}) = {code}{detail}", args()));
    }
    code
}

/// `api!("nc_x", (a, b) { body })`: a traced call whose arguments print with `{:?}`.
#[macro_export]
macro_rules! api {
    ($name:expr, ($($arg:ident),*), $body:block) => {
        $crate::ffi::call($name, || { let parts: Vec<String> = vec![$(format!("{}={:?}", stringify!($arg), $arg)),*]; parts.join(", ") }, || $body)
    };
}

/// A C string argument; NULL → NC_EINVAL.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
pub unsafe fn cstr<'a>(p: *const c_char) -> Result<&'a [u8]> {
    if p.is_null() {
        return err(Kind::Invalid, "NULL name");
    }
    // SAFETY: checked non-NULL; the caller promises NUL termination.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// Stores `v` through an optional out-pointer (NULL = not wanted, as in netcdf-c).
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
pub unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL out-pointer provided by the caller for this value.
        unsafe { p.write(v) };
    }
}

/// Copies `src` into an optional out-array.
///
/// # Safety
/// `p` is NULL or valid for `src.len()` writes.
pub unsafe fn put_slice<T: Copy>(p: *mut T, src: &[T]) {
    if !p.is_null() && !src.is_empty() {
        // SAFETY: the caller sized the array for `src.len()` elements (netCDF contract).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p, src.len()) };
    }
}

/// Writes a name plus NUL into a caller buffer of at least NC_MAX_NAME+1 bytes.
///
/// # Safety
/// `p` is NULL or valid for `s.len() + 1` bytes.
pub unsafe fn put_name(p: *mut c_char, s: &str) {
    if !p.is_null() {
        // SAFETY: as above.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, p, s.len());
            p.add(s.len()).write(0);
        }
    }
}

/// An input array of `n` elements; NULL with `n > 0` → NC_EINVAL, and so is a count no
/// memory could hold (a negative count cast to `size_t`).
///
/// # Safety
/// `p` is NULL or valid for `n` reads.
pub unsafe fn slice<'a, T>(p: *const T, n: usize) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(Kind::Invalid, "NULL array");
    }
    if n.checked_mul(std::mem::size_of::<T>()).is_none_or(|bytes| bytes > isize::MAX as usize) {
        return err(Kind::Invalid, format!("array of {n} elements"));
    }
    // SAFETY: non-NULL, and the caller provides `n` elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// A `malloc`ed copy of a string, so C callers can `free` it (and `nc_free_string` works).
pub fn malloc_string(s: &[u8]) -> Result<*mut c_char> {
    // SAFETY: malloc of len+1 bytes, then filled and NUL-terminated.
    unsafe {
        let p = libc::malloc(s.len() + 1) as *mut c_char;
        if p.is_null() {
            return err(Kind::NoMem, "malloc");
        }
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, p, s.len());
        p.add(s.len()).write(0);
        Ok(p)
    }
}

pub fn with<R>(ncid: c_int, f: impl FnOnce(&mut crate::dataset::Dataset, usize) -> Result<R>) -> Result<R> {
    registry::with(ncid, f)
}

pub fn internal(msg: &str) -> Error {
    Error::new(Kind::Internal, msg)
}

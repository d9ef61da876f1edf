//! netcdf-c internals that Debian's ncdump, ncgen and nccopy import from libnetcdf.so.19.
//!
//! They matter only for the drop-in library: the tools are linked BIND_NOW, so every one of
//! these must exist for them to start, and their struct layouts are those of netcdf-c 4.9.x.
//! The preload library does not export them (the tools take the real library's).

mod cdtime;
mod filterspec;
mod hdf5;
mod logging;
mod nclist;
mod ncuri;
mod pluginpath;
mod strings;

use std::ffi::{CStr, c_char};

unsafe fn text<'a>(p: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: NULL or NUL-terminated (callers' contract).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes())
}

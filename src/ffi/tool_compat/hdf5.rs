//! HDF5 names that programs built against Debian's libnetcdf take from it: Debian's
//! netCDF4-python (`_netCDF4.so`) calls `H5get_libversion` without linking HDF5 itself, so
//! without this export `import netCDF4` fails with an undefined symbol under the drop-in.

use crate::ffi::route::hdf5_symbol;
use nczarr_macros::export;
use std::ffi::{c_int, c_uint};

type GetLibversion = unsafe extern "C" fn(*mut c_uint, *mut c_uint, *mut c_uint) -> c_int;

/// HDF5's version, from the HDF5 the real netcdf-c (`NCZARR_FALLBACK_LIB`) or the system has;
/// without one, 0.0.0 and a negative `herr_t`, as HDF5 reports failure.
#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn H5get_libversion(majnum: *mut c_uint, minnum: *mut c_uint, relnum: *mut c_uint) -> c_int {
    let f = hdf5_symbol(c"H5get_libversion");
    if !f.is_null() {
        // SAFETY: HDF5's `herr_t H5get_libversion(unsigned*, unsigned*, unsigned*)`, called
        // with the caller's own pointers.
        return unsafe { std::mem::transmute::<*mut std::ffi::c_void, GetLibversion>(f)(majnum, minnum, relnum) };
    }
    for p in [majnum, minnum, relnum] {
        if !p.is_null() {
            // SAFETY: a non-NULL out-pointer from the caller.
            unsafe { p.write(0) };
        }
    }
    -1
}

//! Reading fragments: our `FragmentReader`, which opens each fragment file through the
//! library's own `nc_open` (netCDF-3, netCDF-4 or NCZarr, local or on S3), one at a time since
//! the real netcdf-c is not thread-safe.

use super::calls::{cname, get_vara_as, var_shape};
use crate::error::{Error, Kind, Result};
use crate::ffi::consts::{NC_NOERR, NC_NOWRITE};
use crate::nc::types::NcType;
use crate::zmap::cfa::{Fragment, FragmentReader, Packing};
use std::ffi::{CString, c_int, c_void};

/// Is the fragment a netCDF object on S3 (fetched before the real library opens it)?
fn route_needs_fetch(file: &str) -> bool {
    matches!(crate::url::object::object_name(file, false), Ok(Some(_)))
}

/// Reads fragments through the library's own `nc_open`, one at a time.
pub(super) struct Fragments;

pub(super) static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// HDF5 keeps its "print errors" switch per thread, and netcdf-c turns it off only on the
/// thread that initialised it: fragment reads run on the engine's worker threads, where the
/// real library's expected failures (probing for optional attributes) would print. Turned
/// off once per thread, through the real library's own HDF5.
pub(super) fn quiet_hdf5_here() {
    thread_local!(static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if QUIET.with(|q| q.replace(true)) {
        return;
    }
    let p = crate::ffi::route::hdf5_symbol(c"H5Eset_auto2");
    if !p.is_null() {
        // SAFETY: herr_t H5Eset_auto2(hid_t estack, H5E_auto2_t func, void *client_data), with
        // H5E_DEFAULT (0) and no function: printing off for this thread's default stack.
        unsafe {
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(i64, *mut c_void, *mut c_void) -> c_int>(p)(
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }
}

impl FragmentReader for Fragments {
    fn read(&self, f: &Fragment, xtype: NcType, fill: &[u8], start: &[usize], count: &[usize], out: &mut [u8]) -> Result<()> {
        let fail = |status: c_int, what: &str| {
            crate::trace::warn(&format!("fragment {}: {what}: {}", f.file, crate::error::message(status).to_string_lossy()));
            Error::new(if status > 0 { Kind::Errno(status) } else { Kind::Real(status) }, format!("fragment {}: {what}", f.file))
        };
        // A fragment on S3 is fetched before the real library is taken: fetches of the
        // fragments of one read overlap (the engine asks for them from several threads).
        let fetched = if route_needs_fetch(&f.file) {
            match crate::ffi::objects::fetch(&f.file) {
                Ok(got) => got,
                Err(e) => {
                    crate::trace::warn(&format!("fragment {}: {e}", f.file));
                    return Err(Error::new(e.kind, format!("fragment {}: {}", f.file, e.context)));
                }
            }
        } else {
            None
        };
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        quiet_hdf5_here();
        let path = cname(&f.file)?;
        let mut ncid = 0;
        let st = match fetched {
            // SAFETY: a valid out-pointer.
            Some(file) => unsafe { crate::ffi::objects::serve("nc_open", &f.file, file, NC_NOWRITE, &mut ncid) },
            // SAFETY: NUL-terminated name; valid out-pointer.
            None => unsafe { crate::ffi::file::open(path.as_ptr(), path.as_ptr(), NC_NOWRITE, &mut ncid) },
        };
        if st != NC_NOERR {
            return Err(fail(st, "cannot open"));
        }
        let result = read_open(ncid, f, xtype, fill, start, count, out).map_err(|(st, what)| fail(st, &what));
        crate::ffi::file::close(ncid);
        result
    }
}

fn read_open(
    ncid: c_int,
    f: &Fragment,
    xtype: NcType,
    fill: &[u8],
    start: &[usize],
    count: &[usize],
    out: &mut [u8],
) -> std::result::Result<(), (c_int, String)> {
    let vn = CString::new(f.ncvar.as_str()).map_err(|_| (crate::ffi::consts::NC_EBADNAME, "variable name".to_string()))?;
    let mut varid = 0;
    // SAFETY: NUL-terminated name, valid out-pointers.
    let st = unsafe { crate::ffi::var::nc_inq_varid(ncid, vn.as_ptr(), &mut varid) };
    if st != NC_NOERR {
        return Err((st, format!("no variable {}", f.ncvar)));
    }
    let lens = var_shape(ncid, varid).map_err(|e| (e.code(), format!("shape of {}", f.ncvar)))?;
    // A fragment may leave out dimensions of size one (CF aggregation allows it).
    let kept: Vec<usize> = (0..f.shape.len()).filter(|&d| lens.len() == f.shape.len() || f.shape[d] != 1).collect();
    let expected: Vec<usize> = kept.iter().map(|&d| f.shape[d]).collect();
    if lens != expected {
        return Err((crate::ffi::consts::NC_EEDGE, format!("variable {} has shape {lens:?}, the master says {:?}", f.ncvar, f.shape)));
    }
    let start: Vec<usize> = kept.iter().map(|&d| start[d]).collect();
    let count: Vec<usize> = kept.iter().map(|&d| count[d]).collect();
    if let Some(packing) = packing_of(ncid, varid) {
        let cells: usize = count.iter().product();
        let mut raw = vec![0u8; cells * 8];
        let st = get_vara_as(ncid, varid, NcType::Double, &start, &count, &mut raw);
        if st != NC_NOERR {
            return Err((st, format!("reading {}", f.ncvar)));
        }
        let raw: Vec<f64> = raw.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap_or([0; 8]))).collect();
        return packing.unpack(&raw, xtype, fill, out).map_err(|e| (e.code(), format!("unpacking {}", f.ncvar)));
    }
    let st = get_vara_as(ncid, varid, xtype, &start, &count, out);
    if st != NC_NOERR {
        return Err((st, format!("reading {}", f.ncvar)));
    }
    Ok(())
}

/// The fragment variable's own packing, if it has `scale_factor` or `add_offset`.
fn packing_of(ncid: c_int, varid: c_int) -> Option<Packing> {
    let mut vtype = 0;
    // SAFETY: a valid out-pointer.
    if unsafe { crate::ffi::var::nc_inq_vartype(ncid, varid, &mut vtype) } != NC_NOERR {
        return None;
    }
    let first = |name: &std::ffi::CStr| numeric_att(ncid, varid, name).and_then(|v| v.first().copied());
    let (scale, offset) = (first(c"scale_factor"), first(c"add_offset"));
    if scale.is_none() && offset.is_none() {
        return None;
    }
    let missing = numeric_att(ncid, varid, c"missing_value").unwrap_or_default();
    Packing::of(NcType::from_id(vtype).ok()?, scale, offset, first(c"_FillValue"), &missing)
}

/// A numeric attribute's values as doubles; `None` when absent or not numeric.
fn numeric_att(ncid: c_int, varid: c_int, name: &std::ffi::CStr) -> Option<Vec<f64>> {
    let (mut xtype, mut len) = (0, 0usize);
    // SAFETY: NUL-terminated name; valid out-pointers.
    if unsafe { crate::ffi::att::nc_inq_att(ncid, varid, name.as_ptr(), &mut xtype, &mut len) } != NC_NOERR {
        return None;
    }
    if !NcType::from_id(xtype).is_ok_and(|t| t.is_numeric()) || len == 0 || len > 1 << 20 {
        return None;
    }
    let mut values = vec![0f64; len];
    // SAFETY: `values` holds the attribute's `len` elements.
    (unsafe { crate::ffi::att_matrix::nc_get_att_double(ncid, varid, name.as_ptr(), values.as_mut_ptr()) } == NC_NOERR).then_some(values)
}

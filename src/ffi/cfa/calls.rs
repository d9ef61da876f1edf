//! The C API calls the aggregation code makes on datasets (the real library's masters, our
//! own datasets and fragments), wrapped into `Result`s: attribute text, dimension ids, shapes,
//! names, typed reads.

use crate::error::{Error, Kind, Result};
use crate::ffi::consts::{NC_MAX_NAME, NC_MAX_VAR_DIMS, NC_NOERR, nc_type};
use std::ffi::{CStr, CString, c_char, c_int};

/// A status of a routed call as a `Result` (the code kept; `what` says which call).
pub(super) fn ok(status: c_int, what: &str) -> Result<()> {
    if status == NC_NOERR { Ok(()) } else { Err(Error::new(Kind::Real(status), what.to_string())) }
}

pub(super) fn cname(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(Kind::BadName, format!("{s:?}")))
}

/// A text attribute of `(ncid, varid)` (NC_CHAR, or one NC_STRING), `None` when absent or
/// of another type.
pub(super) fn text_att(ncid: c_int, varid: c_int, name: &CStr) -> Option<String> {
    let mut len = 0usize;
    let mut xtype: nc_type = 0;
    // SAFETY: NUL-terminated name; valid out-pointers.
    if unsafe { crate::ffi::att::nc_inq_att(ncid, varid, name.as_ptr(), &mut xtype, &mut len) } != NC_NOERR {
        return None;
    }
    if xtype == crate::ffi::consts::NC_STRING && len == 1 {
        let mut p: *mut c_char = std::ptr::null_mut();
        // SAFETY: one string pointer, freed below with the library's own free.
        if unsafe { crate::ffi::att::nc_get_att_string(ncid, varid, name.as_ptr(), &mut p) } != NC_NOERR || p.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated string the library allocated.
        let text = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        // SAFETY: the one string nc_get_att_string allocated.
        unsafe { crate::ffi::usertypes::nc_free_string(1, &mut p) };
        return Some(text);
    }
    if xtype != crate::ffi::consts::NC_CHAR {
        return None;
    }
    let mut buf = vec![0u8; len + 1];
    // SAFETY: `buf` holds the attribute's `len` characters.
    if unsafe { crate::ffi::att::nc_get_att_text(ncid, varid, name.as_ptr(), buf.as_mut_ptr() as *mut c_char) } != NC_NOERR {
        return None;
    }
    buf.truncate(len);
    while buf.last() == Some(&0) {
        buf.pop();
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// A variable's dimension ids (routed to whichever library holds `ncid`).
pub(super) fn var_dimids(ncid: c_int, varid: c_int) -> Result<Vec<c_int>> {
    let mut n = 0;
    let mut ids = [0 as c_int; NC_MAX_VAR_DIMS as usize];
    // SAFETY: out-pointers sized by netcdf-c's limits.
    unsafe {
        ok(crate::ffi::var::nc_inq_varndims(ncid, varid, &mut n), "variable rank")?;
        ok(crate::ffi::var::nc_inq_vardimid(ncid, varid, ids.as_mut_ptr()), "variable dimensions")?;
    }
    Ok(ids[..n.clamp(0, NC_MAX_VAR_DIMS) as usize].to_vec())
}

/// Ids an inquiry returns as a count, then into a buffer of that size (`nc_inq_unlimdims`,
/// `nc_inq_grps`).
pub(super) fn counted_ids(what: &str, inquire: impl Fn(*mut c_int, *mut c_int) -> c_int) -> Result<Vec<c_int>> {
    let mut n = 0;
    ok(inquire(&mut n, std::ptr::null_mut()), what)?;
    let mut ids = vec![0 as c_int; n.max(0) as usize];
    ok(inquire(&mut n, ids.as_mut_ptr()), what)?;
    Ok(ids)
}

/// The ids of a group's unlimited dimensions.
pub(super) fn unlimited_dims(ncid: c_int) -> Result<Vec<c_int>> {
    // SAFETY: `counted_ids` passes a count pointer and NULL, then a buffer of that count.
    counted_ids("unlimited dimensions", |n, ids| unsafe { crate::ffi::file::nc_inq_unlimdims(ncid, n, ids) })
}

/// The ncids of a group's child groups.
pub(super) fn child_groups(ncid: c_int) -> Result<Vec<c_int>> {
    // SAFETY: as for `unlimited_dims`.
    counted_ids("groups", |n, ids| unsafe { crate::ffi::group::nc_inq_grps(ncid, n, ids) })
}

/// A variable's shape.
pub(super) fn var_shape(ncid: c_int, varid: c_int) -> Result<Vec<usize>> {
    var_dimids(ncid, varid)?
        .into_iter()
        .map(|d| {
            let mut len = 0usize;
            // SAFETY: valid out-pointer.
            ok(unsafe { crate::ffi::group::nc_inq_dimlen(ncid, d, &mut len) }, "dimension length")?;
            Ok(len)
        })
        .collect()
}

pub(super) fn names(ncid: c_int, varid: c_int, count: c_int) -> Result<Vec<CString>> {
    (0..count)
        .map(|a| {
            let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
            // SAFETY: NC_MAX_NAME+1 bytes.
            ok(unsafe { crate::ffi::att::nc_inq_attname(ncid, varid, a, buf.as_mut_ptr()) }, "attribute name")?;
            // SAFETY: NUL-terminated by the library.
            Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_owned())
        })
        .collect()
}

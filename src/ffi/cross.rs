//! The three functions that take two ncids, when those belong to different worlds (one ours,
//! one the real netcdf-c's; passthrough.md §7). They are compositions of routed public calls,
//! as netcdf-c's own dcopy.c is: each side's lock is taken and released inside each call, so
//! no lock is ever held across the two libraries. Atomic types cross freely; a user-defined
//! type cannot be represented on our side.

use super::att::{nc_get_att, nc_inq_att, nc_inq_attname, nc_put_att};
use super::consts::{NC_EBADTYPE, NC_EINDEFINE, NC_ENOTINDEFINE, NC_MAX_NAME, NC_MAX_VAR_DIMS, NC_NOERR, NC_STRING, nc_type};
use super::data_matrix::{nc_get_vara, nc_put_vara};
use super::file::{nc_enddef, nc_redef};
use super::group::{nc_inq_dimid, nc_inq_dimlen, nc_inq_dimname};
use super::usertypes::{nc_free_string, nc_inq_type};
use super::var::{nc_def_var, nc_inq_var};
use super::{put, with};
use crate::error::{Error, Kind};
use crate::nc::modes::VarRef;
use crate::nc::names;
use crate::nc::types::NcType;
use nczarr_macros::export;
use std::ffi::{c_char, c_int, c_void};

/// Largest atomic type id (NC_STRING); anything above is user-defined.
const MAX_ATOMIC: nc_type = NC_STRING;

macro_rules! check {
    ($e:expr) => {{
        let status = $e;
        if status != NC_NOERR {
            return status;
        }
    }};
}

/// Size in memory of one element of `xtype` as the source library reports it.
fn element_size(ncid: c_int, xtype: nc_type) -> Result<usize, c_int> {
    let mut size = 0usize;
    // SAFETY: NULL name is allowed; `size` is a valid out-pointer.
    let status = unsafe { nc_inq_type(ncid, xtype, std::ptr::null_mut(), &mut size) };
    if status != NC_NOERR { Err(status) } else { Ok(size.max(1)) }
}

/// `nc_copy_att` between worlds: inquire, get, put, release.
pub fn copy_att(ncid_in: c_int, varid_in: c_int, name: *const c_char, ncid_out: c_int, varid_out: c_int) -> c_int {
    let (mut xtype, mut len) = (0 as nc_type, 0usize);
    // SAFETY: `name` is the caller's (checked by the library that receives it).
    check!(unsafe { nc_inq_att(ncid_in, varid_in, name, &mut xtype, &mut len) });
    if xtype > MAX_ATOMIC {
        return NC_EBADTYPE;
    }
    let size = match element_size(ncid_in, xtype) {
        Ok(s) => s,
        Err(status) => return status,
    };
    // Word-aligned storage for any element type, pointers (NC_STRING) included.
    let words = (len.max(1) * size).div_ceil(8);
    let mut buf = vec![0u64; words];
    let data = buf.as_mut_ptr() as *mut c_void;
    // SAFETY: `buf` holds `len` elements of the attribute's type.
    check!(unsafe { nc_get_att(ncid_in, varid_in, name, data) });
    // SAFETY: as above; the attribute is put in its own type.
    let status = unsafe { nc_put_att(ncid_out, varid_out, name, xtype, len, data) };
    if xtype == NC_STRING {
        // SAFETY: nc_get_att filled `len` malloc'ed strings (freed with libc free, as both
        // libraries allocate them).
        unsafe { nc_free_string(len, data as *mut *mut c_char) };
    }
    status
}

/// `nc_copy_var` between worlds, as netcdf-c's dcopy.c: same dimension names must exist in
/// the output; the variable is defined with the same type, its attributes copied, then the
/// data moved one record (index of the first dimension) at a time.
pub fn copy_var(ncid_in: c_int, varid_in: c_int, ncid_out: c_int) -> c_int {
    let mut name = [0 as c_char; NC_MAX_NAME as usize + 1];
    let (mut xtype, mut ndims, mut natts) = (0 as nc_type, 0 as c_int, 0 as c_int);
    let mut dimids_in = [0 as c_int; NC_MAX_VAR_DIMS as usize];
    // SAFETY: buffers sized by netcdf-c's limits.
    check!(unsafe { nc_inq_var(ncid_in, varid_in, name.as_mut_ptr(), &mut xtype, &mut ndims, dimids_in.as_mut_ptr(), &mut natts) });
    if xtype > MAX_ATOMIC {
        return NC_EBADTYPE;
    }
    let rank = ndims.clamp(0, NC_MAX_VAR_DIMS) as usize;
    let mut dimids_out = vec![0 as c_int; rank];
    let mut shape = vec![0usize; rank];
    for d in 0..rank {
        let mut dname = [0 as c_char; NC_MAX_NAME as usize + 1];
        // SAFETY: name buffer of NC_MAX_NAME+1 bytes; out-pointers valid.
        unsafe {
            check!(nc_inq_dimname(ncid_in, dimids_in[d], dname.as_mut_ptr()));
            check!(nc_inq_dimlen(ncid_in, dimids_in[d], &mut shape[d]));
            check!(nc_inq_dimid(ncid_out, dname.as_ptr(), &mut dimids_out[d]));
        }
    }
    // SAFETY: plain ncid calls.
    let status = unsafe { nc_redef(ncid_out) };
    if status != NC_NOERR && status != NC_EINDEFINE {
        return status;
    }
    let mut varid_out = 0;
    // SAFETY: `name` is NUL-terminated by nc_inq_var; dimids hold `rank` entries.
    check!(unsafe { nc_def_var(ncid_out, name.as_ptr(), xtype, rank as c_int, dimids_out.as_ptr(), &mut varid_out) });
    for a in 0..natts {
        let mut aname = [0 as c_char; NC_MAX_NAME as usize + 1];
        // SAFETY: name buffer of NC_MAX_NAME+1 bytes.
        check!(unsafe { nc_inq_attname(ncid_in, varid_in, a, aname.as_mut_ptr()) });
        check!(copy_att(ncid_in, varid_in, aname.as_ptr(), ncid_out, varid_out));
    }
    // SAFETY: plain ncid call.
    let status = unsafe { nc_enddef(ncid_out) };
    if status != NC_NOERR && status != NC_ENOTINDEFINE {
        return status;
    }
    copy_var_data(ncid_in, varid_in, ncid_out, varid_out, xtype, &shape)
}

pub(super) fn copy_var_data(ncid_in: c_int, varid_in: c_int, ncid_out: c_int, varid_out: c_int, xtype: nc_type, shape: &[usize]) -> c_int {
    if shape.contains(&0) {
        return NC_NOERR;
    }
    let size = match element_size(ncid_in, xtype) {
        Ok(s) => s,
        Err(status) => return status,
    };
    let (records, per_record) = match shape.split_first() {
        Some((&n, rest)) => (n, rest.iter().product::<usize>()),
        None => (1, 1),
    };
    let mut buf = vec![0u64; (per_record * size).div_ceil(8).max(1)];
    let data = buf.as_mut_ptr() as *mut c_void;
    let mut start = vec![0usize; shape.len()];
    let mut count = shape.to_vec();
    if let Some(c) = count.first_mut() {
        *c = 1;
    }
    for r in 0..records {
        if let Some(s) = start.first_mut() {
            *s = r;
        }
        // SAFETY: `buf` holds one record of the variable's type; start/count hold `rank` entries.
        check!(unsafe { nc_get_vara(ncid_in, varid_in, start.as_ptr(), count.as_ptr(), data) });
        // SAFETY: as above; `buf` now holds the record read.
        let status = unsafe { nc_put_vara(ncid_out, varid_out, start.as_ptr(), count.as_ptr(), data) };
        if xtype == NC_STRING {
            // SAFETY: nc_get_vara filled `per_record` malloc'ed strings.
            unsafe { nc_free_string(per_record, data as *mut *mut c_char) };
        }
        check!(status);
    }
    NC_NOERR
}

/// `nc_inq_type_equal` between worlds: each type is checked in its own world; atomic types
/// are equal when their ids are, user-defined types never equal anything across worlds.
pub fn type_equal(ncid1: c_int, typeid1: nc_type, ncid2: c_int, typeid2: nc_type, equal: *mut c_int) -> c_int {
    // SAFETY: NULL out-pointers are allowed by nc_inq_type.
    unsafe {
        check!(nc_inq_type(ncid1, typeid1, std::ptr::null_mut(), std::ptr::null_mut()));
        check!(nc_inq_type(ncid2, typeid2, std::ptr::null_mut(), std::ptr::null_mut()));
    }
    let same = typeid1 == typeid2 && typeid1 <= MAX_ATOMIC;
    if !equal.is_null() {
        // SAFETY: non-NULL out-pointer from the caller.
        unsafe { *equal = same as c_int };
    }
    NC_NOERR
}

// ---- the exports: one world, or the other, or both -------------------------------------------

#[export(ncids(ncid_in, ncid_out), mixed = copy_att, trace(ncid_in, varid_in, name, ncid_out, varid_out))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_copy_att(ncid_in: c_int, varid_in: c_int, name: *const c_char, ncid_out: c_int, varid_out: c_int) -> c_int {
    // Both datasets are checked before the attribute is looked up (netcdf-c's order).
    with(ncid_in, |_, _| Ok(()))?;
    with(ncid_out, |_, _| Ok(()))?;
    // A copy onto itself is nothing to do, and netcdf-c answers it before looking at the
    // variable, the name or the attribute.
    if ncid_in == ncid_out && varid_in == varid_out {
        return Ok(());
    }
    // Into a classic-model dataset netcdf-c first looks the name up in the target variable
    // (to keep the attributes' order), so a missing target variable is NC_ENOTVAR before
    // anything is read from the source.
    with(ncid_out, |ds, gid| if ds.is_classic_model() { ds.atts(gid, VarRef::from_c(varid_out)).map(|_| ()) } else { Ok(()) })?;
    // SAFETY: as above.
    let raw = unsafe { super::att::att_name(name) }?;
    let text = String::from_utf8_lossy(raw).into_owned();
    let att = with(ncid_in, |ds, gid| {
        let atts = ds.atts(gid, VarRef::from_c(varid_in))?;
        atts.iter().find(|a| a.name == names::normalize(&text)).cloned().ok_or_else(|| Error::new(Kind::NotAtt, text.clone()))
    })?;
    let t = att.value.nctype().id();
    with(ncid_out, |ds, gid| ds.put_att_codes(gid, VarRef::from_c(varid_out), raw, t, att.value))
}

#[export(ncids(ncid_in, ncid_out), mixed = copy_var, trace(ncid_in, varid, ncid_out))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_copy_var(ncid_in: c_int, varid: c_int, ncid_out: c_int) -> c_int {
    // netcdf-c starts with nc_inq_var on the input, which accepts NC_GLOBAL, so for
    // NC_GLOBAL the output dataset is checked first.
    if varid == -1 {
        with(ncid_in, |_, _| Ok(()))?;
        with(ncid_out, |_, _| Ok(()))?;
    }
    let (var, dim_names) = with(ncid_in, |ds, gid| ds.var_for_copy(gid, VarRef::from_c(varid)))?;
    with(ncid_out, |ds, gid| ds.copy_var_from(gid, &var, &dim_names))?;
    super::data::copy_var_data(ncid_in, varid, ncid_out, &var)
}

#[export(ncids(ncid1, ncid2), mixed = type_equal, trace(ncid1, typeid1, ncid2, typeid2))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_type_equal(ncid1: c_int, typeid1: nc_type, ncid2: c_int, typeid2: nc_type, equal: *mut c_int) -> c_int {
    with(ncid1, |_, _| Ok(()))?;
    // Only user-defined types would need the second dataset; atomic ones are compared
    // without looking it up, as netcdf-c does.
    let (a, b) = (NcType::from_id(typeid1)?, NcType::from_id(typeid2)?);
    // SAFETY: optional out-pointer.
    unsafe { put(equal, (a == b) as c_int) };
    Ok(())
}

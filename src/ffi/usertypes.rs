//! Types: the atomic types' facts, and the user-defined-type API, which NCZarr does not
//! support (definitions → NC_ENOTNC4 as in netcdf-c 4.10.1; every other call can only meet an
//! invalid type id). Also the memory helpers for strings and vlens.

use super::consts::nc_type;
use super::consts::nc_vlen_t;
use super::{cstr, put, put_name, with};
use crate::error::{Kind, Result, err};
use crate::nc::types::NcType;
use nczarr_macros::export;
use std::ffi::{c_char, c_int, c_longlong, c_void};

#[export(trace(ncid, xtype))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_type(ncid: c_int, xtype: nc_type, name: *mut c_char, size: *mut usize) -> c_int {
    // Atomic types are answered whatever the ncid, as netcdf-c does for compatibility.
    let t = NcType::from_id(xtype)?;
    // SAFETY: optional out-pointers.
    unsafe {
        put_name(name, t.name());
        put(size, t.size());
    }
    Ok(())
}

#[export(trace(ncid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_typeid(ncid: c_int, name: *const c_char, typeidp: *mut nc_type) -> c_int {
    with(ncid, |_, _| Ok(()))?;
    // SAFETY: NUL-terminated name or NULL (→ NC_EINVAL).
    let n = crate::nc::names::lookup(unsafe { cstr(name) }?)?;
    if n.contains('/') {
        return err(Kind::Invalid, format!("type path {n:?}"));
    }
    let t = NcType::from_name(&n).ok_or_else(|| crate::error::Error::new(Kind::BadType, n))?;
    // SAFETY: optional out-pointer.
    unsafe { put(typeidp, t.id()) };
    Ok(())
}

#[export(trace(ncid, typeids))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_typeids(ncid: c_int, ntypes: *mut c_int, typeids: *mut c_int) -> c_int {
    with(ncid, |_, _| Ok(()))?;
    // SAFETY: optional out-pointer; there are no user types to list.
    unsafe { put(ntypes, 0) };
    Ok(())
}

#[export(trace(ncid, xtype, name, size, base_nc_typep, nfieldsp, classp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_user_type(
    ncid: c_int,
    xtype: nc_type,
    name: *mut c_char,
    size: *mut usize,
    base_nc_typep: *mut nc_type,
    nfieldsp: *mut usize,
    classp: *mut c_int,
) -> c_int {
    no_such_type(ncid)
}

fn no_user_types(ncid: c_int) -> Result<()> {
    with(ncid, |_, _| Ok(()))?;
    err(Kind::NotNc4, "user-defined types are not supported by NCZarr")
}

/// Type inquiries that netcdf-c answers through `nc_inq_user_type` (NC_EBADTYPE: there are
/// none); the field and member calls instead reach NCZarr's not-netCDF-4 stubs (NC_ENOTNC4).
fn no_such_type(ncid: c_int) -> Result<()> {
    with(ncid, |_, _| Ok(()))?;
    err(Kind::BadType, "no user-defined types exist")
}

#[export(trace(ncid, size, name, typeidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_compound(ncid: c_int, size: usize, name: *const c_char, typeidp: *mut nc_type) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, name, base_typeid, xtypep))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_vlen(ncid: c_int, name: *const c_char, base_typeid: nc_type, xtypep: *mut nc_type) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, base_typeid, name, typeidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_enum(ncid: c_int, base_typeid: nc_type, name: *const c_char, typeidp: *mut nc_type) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, size, name, xtypep))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_opaque(ncid: c_int, size: usize, name: *const c_char, xtypep: *mut nc_type) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, name, offset, field_typeid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_insert_compound(
    ncid: c_int,
    xtype: nc_type,
    name: *const c_char,
    offset: usize,
    field_typeid: nc_type,
) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, name, offset, field_typeid, ndims, dim_sizes))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_insert_array_compound(
    ncid: c_int,
    xtype: nc_type,
    name: *const c_char,
    offset: usize,
    field_typeid: nc_type,
    ndims: c_int,
    dim_sizes: *const c_int,
) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, name, sizep, nfieldsp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound(ncid: c_int, xtype: nc_type, name: *mut c_char, sizep: *mut usize, nfieldsp: *mut usize) -> c_int {
    no_such_type(ncid)
}

#[export(trace(ncid, xtype, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_name(ncid: c_int, xtype: nc_type, name: *mut c_char) -> c_int {
    no_such_type(ncid)
}

#[export(trace(ncid, xtype, sizep))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_size(ncid: c_int, xtype: nc_type, sizep: *mut usize) -> c_int {
    no_such_type(ncid)
}

#[export(trace(ncid, xtype, nfieldsp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_nfields(ncid: c_int, xtype: nc_type, nfieldsp: *mut usize) -> c_int {
    no_such_type(ncid)
}

#[export(trace(ncid, xtype, fieldid, name, offsetp, field_typeidp, ndimsp, dim_sizesp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_field(
    ncid: c_int,
    xtype: nc_type,
    fieldid: c_int,
    name: *mut c_char,
    offsetp: *mut usize,
    field_typeidp: *mut nc_type,
    ndimsp: *mut c_int,
    dim_sizesp: *mut c_int,
) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, fieldid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_fieldname(ncid: c_int, xtype: nc_type, fieldid: c_int, name: *mut c_char) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, name, fieldidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_fieldindex(ncid: c_int, xtype: nc_type, name: *const c_char, fieldidp: *mut c_int) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, fieldid, offsetp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_fieldoffset(ncid: c_int, xtype: nc_type, fieldid: c_int, offsetp: *mut usize) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, fieldid, field_typeidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_fieldtype(ncid: c_int, xtype: nc_type, fieldid: c_int, field_typeidp: *mut nc_type) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, fieldid, ndimsp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_fieldndims(ncid: c_int, xtype: nc_type, fieldid: c_int, ndimsp: *mut c_int) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, fieldid, dim_sizes))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_compound_fielddim_sizes(ncid: c_int, xtype: nc_type, fieldid: c_int, dim_sizes: *mut c_int) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, name, datum_sizep, base_nc_typep))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_vlen(
    ncid: c_int,
    xtype: nc_type,
    name: *mut c_char,
    datum_sizep: *mut usize,
    base_nc_typep: *mut nc_type,
) -> c_int {
    no_such_type(ncid)
}

#[export(trace(ncid, typeid1, vlen_element, len, data))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_put_vlen_element(
    ncid: c_int,
    typeid1: nc_type,
    vlen_element: *mut c_void,
    len: usize,
    data: *const c_void,
) -> c_int {
    no_such_type(ncid)
}

#[export(trace(ncid, typeid1, vlen_element, len, data))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_vlen_element(
    ncid: c_int,
    typeid1: nc_type,
    vlen_element: *const c_void,
    len: *mut usize,
    data: *mut c_void,
) -> c_int {
    no_such_type(ncid)
}

#[export(trace(ncid, xtype, name, value))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_insert_enum(ncid: c_int, xtype: nc_type, name: *const c_char, value: *const c_void) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, name, base_nc_typep, base_sizep, num_membersp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_enum(
    ncid: c_int,
    xtype: nc_type,
    name: *mut c_char,
    base_nc_typep: *mut nc_type,
    base_sizep: *mut usize,
    num_membersp: *mut usize,
) -> c_int {
    no_such_type(ncid)
}

#[export(trace(ncid, xtype, idx, name, value))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_enum_member(ncid: c_int, xtype: nc_type, idx: c_int, name: *mut c_char, value: *mut c_void) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, value, identifier))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_enum_ident(ncid: c_int, xtype: nc_type, value: c_longlong, identifier: *mut c_char) -> c_int {
    no_user_types(ncid)
}

#[export(trace(ncid, xtype, name, sizep))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_opaque(ncid: c_int, xtype: nc_type, name: *mut c_char, sizep: *mut usize) -> c_int {
    no_such_type(ncid)
}

/// Frees each non-NULL string of an array filled by a get call (not the array itself).
#[export(trace(len, data))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_free_string(len: usize, data: *mut *mut c_char) -> c_int {
    if data.is_null() {
        return if len == 0 { Ok(()) } else { err(Kind::Invalid, "NULL array") };
    }
    for i in 0..len {
        // SAFETY: `data` holds `len` pointers from `malloc` (or NULL).
        unsafe { libc::free(*data.add(i) as *mut c_void) };
    }
    Ok(())
}

#[export(trace(vl))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_free_vlen(vl: *mut nc_vlen_t) -> c_int {
    if !vl.is_null() {
        // SAFETY: `vl` points to a vlen whose `p` came from malloc.
        unsafe {
            libc::free((*vl).p);
            (*vl).p = std::ptr::null_mut();
        }
    }
    Ok(())
}

#[export(trace(len, vlens))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_free_vlens(len: usize, vlens: *mut nc_vlen_t) -> c_int {
    if vlens.is_null() {
        return Ok(());
    }
    for i in 0..len {
        // SAFETY: `vlens` holds `len` entries.
        unsafe { libc::free((*vlens.add(i)).p) };
    }
    Ok(())
}

fn reclaim(xtype: nc_type, memory: *mut c_void, count: usize) -> Result<()> {
    // SAFETY: forwards the caller's pointers under this function's own contract.
    unsafe {
        if (13..32).contains(&xtype) || xtype >= 32 || xtype <= 0 {
            return err(Kind::BadTypeId, format!("type {xtype}"));
        }
        if xtype == 12 && !memory.is_null() {
            nc_free_string(count, memory as *mut *mut c_char);
        }
        Ok(())
    }
}

#[export(trace(ncid, xtypeid, memory, count))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_reclaim_data(ncid: c_int, xtypeid: nc_type, memory: *mut c_void, count: usize) -> c_int {
    instance_args(ncid, xtypeid)?;
    reclaim(xtypeid, memory, count)
}

#[export(trace(ncid, xtypeid, memory, count))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_reclaim_data_all(ncid: c_int, xtypeid: nc_type, memory: *mut c_void, count: usize) -> c_int {
    instance_args(ncid, xtypeid)?;
    reclaim(xtypeid, memory, count)?;
    // SAFETY: the top-level array came from malloc.
    unsafe { libc::free(memory) };
    Ok(())
}

/// netcdf-c's first test in the reclaim/copy family: a negative ncid or a non-type is
/// NC_EINVAL before anything is touched (nothing freed, nothing copied).
fn instance_args(ncid: c_int, xtype: nc_type) -> Result<()> {
    if ncid < 0 || xtype <= 0 { err(Kind::Invalid, format!("ncid {ncid}, type {xtype}")) } else { Ok(()) }
}

fn copy_data(xtype: nc_type, src: *const c_void, count: usize, dst: *mut c_void) -> Result<()> {
    let t = NcType::from_id(xtype).map_err(|_| crate::error::Error::new(Kind::BadTypeId, format!("type {xtype}")))?;
    if count == 0 {
        return Ok(());
    }
    if src.is_null() || dst.is_null() {
        return err(Kind::Invalid, "NULL data");
    }
    // SAFETY: `src` holds `count` elements of `t`, `dst` has room for them.
    unsafe {
        let v = super::att::values_from_mem(t, src, count)?;
        super::att::values_to_mem(&v, dst)
    }
}

#[export(trace(ncid, xtypeid, memory, count, copy))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_copy_data(ncid: c_int, xtypeid: nc_type, memory: *const c_void, count: usize, copy: *mut c_void) -> c_int {
    instance_args(ncid, xtypeid)?;
    copy_data(xtypeid, memory, count, copy)
}

#[export(trace(ncid, xtypeid, memory, count, copyp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_copy_data_all(
    ncid: c_int,
    xtypeid: nc_type,
    memory: *const c_void,
    count: usize,
    copyp: *mut *mut c_void,
) -> c_int {
    instance_args(ncid, xtypeid)?;
    let t = NcType::from_id(xtypeid).map_err(|_| crate::error::Error::new(Kind::BadTypeId, format!("type {xtypeid}")))?;
    let bytes = count.checked_mul(t.size()).ok_or_else(|| crate::error::Error::new(Kind::NoMem, "size"))?;
    // SAFETY: malloc of the array, filled by copy_data.
    let dst = unsafe { libc::malloc(bytes.max(1)) };
    if dst.is_null() {
        return err(Kind::NoMem, "malloc");
    }
    if let Err(e) = copy_data(xtypeid, memory, count, dst) {
        // SAFETY: allocated just above.
        unsafe { libc::free(dst) };
        return Err(e);
    }
    // SAFETY: optional out-pointer.
    unsafe { put(copyp, dst) };
    Ok(())
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nctypelen(datatype: nc_type) -> c_int {
    NcType::from_id(datatype).map(|t| t.size() as c_int).unwrap_or(-1)
}

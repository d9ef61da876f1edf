//! Attributes: the typed put/get matrix, inquiry, copy, rename, delete.

use super::consts::nc_type;
use super::{cstr, malloc_string, put, put_name, with};
use crate::api;
use crate::error::{Error, Kind, Result, err};
use crate::nc::modes::VarRef;
use crate::nc::names;
use crate::nc::types::NcType;
use crate::nc::values::Values;
use nczarr_macros::export;
use std::ffi::{CStr, c_char, c_int, c_void};

/// An attribute name from C in the calls that put, get, inquire or copy one: NULL is
/// NC_EBADNAME there, as in netcdf-c (nc_del_att and nc_rename_att say NC_EINVAL).
///
/// # Safety
/// `p` is NULL or NUL-terminated.
pub(super) unsafe fn att_name<'a>(p: *const c_char) -> Result<&'a [u8]> {
    if p.is_null() {
        return err(Kind::BadName, "NULL attribute name");
    }
    // SAFETY: as this function's contract.
    unsafe { cstr(p) }
}

/// Reads `n` elements of type `t` from C memory (`char*` array for strings).
///
/// # Safety
/// `p` is NULL or valid for `n` elements of `t`'s C type.
pub unsafe fn values_from_mem(t: NcType, p: *const c_void, n: usize) -> Result<Values> {
    // netcdf-c refuses attribute lengths over NC_MAX_INT (a negative length cast to size_t
    // lands there) before it reads the data.
    if n > i32::MAX as usize {
        return err(Kind::Invalid, format!("attribute length {n} over NC_MAX_INT"));
    }
    if n == 0 {
        return Ok(Values::empty(t));
    }
    if p.is_null() {
        return err(Kind::Invalid, "NULL data");
    }
    if t == NcType::String {
        // SAFETY: an array of `n` char pointers, each NULL or NUL-terminated.
        let ptrs = unsafe { std::slice::from_raw_parts(p as *const *const c_char, n) };
        let items = ptrs
            .iter()
            .map(|&s| {
                if s.is_null() {
                    None
                } else {
                    // SAFETY: as above.
                    Some(String::from_utf8_lossy(unsafe { CStr::from_ptr(s) }.to_bytes()).into_owned())
                }
            })
            .collect();
        return Ok(Values::Str(items));
    }
    let bytes = n.checked_mul(t.size()).ok_or_else(|| Error::new(Kind::NoMem, "attribute too large"))?;
    // SAFETY: `n` elements of `t.size()` bytes.
    let raw = unsafe { std::slice::from_raw_parts(p as *const u8, bytes) };
    Ok(Values::from_ne_bytes(t, raw))
}

/// Writes values into C memory; strings become `malloc`ed copies.
///
/// # Safety
/// `p` is valid for `values.len()` elements of the values' C type.
pub unsafe fn values_to_mem(values: &Values, p: *mut c_void) -> Result<()> {
    match values {
        Values::Str(items) => {
            let out = p as *mut *mut c_char;
            for (i, s) in items.iter().enumerate() {
                let ptr = match s {
                    Some(s) => malloc_string(s.as_bytes())?,
                    None => std::ptr::null_mut(),
                };
                // SAFETY: room for `items.len()` pointers.
                unsafe { out.add(i).write(ptr) };
            }
        }
        other => {
            let bytes = other.to_ne_bytes();
            // SAFETY: room for the values' bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p as *mut u8, bytes.len()) };
        }
    }
    Ok(())
}

/// # Safety
/// `name` is NULL or NUL-terminated; `op` is NULL or holds `len` values of `mem`.
unsafe fn put_att_impl(
    ncid: c_int,
    varid: c_int,
    name: *const c_char,
    xtype: nc_type,
    mem: NcType,
    len: usize,
    op: *const c_void,
) -> Result<()> {
    // SAFETY: NUL-terminated name or NULL (→ NC_EINVAL).
    let name = unsafe { att_name(name) }?;
    // SAFETY: `op` holds `len` elements of the memory type.
    let values = unsafe { values_from_mem(mem, op, len) }?;
    with(ncid, |ds, gid| ds.put_att_codes(gid, VarRef::from_c(varid), name, xtype, values))
}

/// # Safety
/// `name` is NULL or NUL-terminated; `ip` is NULL or has room for the attribute's values in
/// `mem` (its own type when None).
unsafe fn get_att_impl(ncid: c_int, varid: c_int, name: *const c_char, mem: Option<NcType>, ip: *mut c_void) -> Result<()> {
    // SAFETY: as above.
    let raw = unsafe { att_name(name) }?;
    let (values, range) = with(ncid, |ds, gid| {
        let att = ds.get_att(gid, VarRef::from_c(varid), &names::lookup(raw)?)?;
        ds.att_in_type(&att, mem.unwrap_or(att.value.nctype()))
    })?;
    if !ip.is_null() {
        // SAFETY: the caller sized `ip` for the attribute's length in the memory type.
        unsafe { values_to_mem(&values, ip) }?;
    }
    if range { err(Kind::Range, "attribute value out of range") } else { Ok(()) }
}

#[export(trace(ncid, varid, name, xtype, len))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_put_att(
    ncid: c_int,
    varid: c_int,
    name: *const c_char,
    xtype: nc_type,
    len: usize,
    op: *const c_void,
) -> c_int {
    let mem = if xtype >= 32 { return with(ncid, |_, _| err(Kind::BadTypeId, "user type")) } else { NcType::from_id(xtype)? };
    // SAFETY: the caller's pointers, under this export's contract.
    unsafe { put_att_impl(ncid, varid, name, xtype, mem, len, op) }
}

#[export(trace(ncid, varid, name, len))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_put_att_text(ncid: c_int, varid: c_int, name: *const c_char, len: usize, op: *const c_char) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    unsafe { put_att_impl(ncid, varid, name, 2, NcType::Char, len, op as *const c_void) }
}

#[export(trace(ncid, varid, name, len))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_put_att_string(ncid: c_int, varid: c_int, name: *const c_char, len: usize, op: *mut *const c_char) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    unsafe { put_att_impl(ncid, varid, name, 12, NcType::String, len, op as *const c_void) }
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_att(ncid: c_int, varid: c_int, name: *const c_char, ip: *mut c_void) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    unsafe { get_att_impl(ncid, varid, name, None, ip) }
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_att_text(ncid: c_int, varid: c_int, name: *const c_char, ip: *mut c_char) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    unsafe { get_att_impl(ncid, varid, name, Some(NcType::Char), ip as *mut c_void) }
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_att_string(ncid: c_int, varid: c_int, name: *const c_char, ip: *mut *mut c_char) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    unsafe { get_att_impl(ncid, varid, name, Some(NcType::String), ip as *mut c_void) }
}

/// # Safety
/// As `put_att_impl`.
#[allow(clippy::too_many_arguments)] // the C signature plus the call name and memory type
pub(crate) unsafe fn put_att_typed(
    call: &str,
    ncid: c_int,
    varid: c_int,
    name: *const c_char,
    xtype: nc_type,
    mem: NcType,
    len: usize,
    op: *const c_void,
) -> c_int {
    api!(call, (ncid, varid, name, xtype, len), {
        // SAFETY: this function's contract.
        unsafe { put_att_impl(ncid, varid, name, xtype, mem, len, op) }
    })
}

/// # Safety
/// As `get_att_impl`.
pub(crate) unsafe fn get_att_typed(call: &str, ncid: c_int, varid: c_int, name: *const c_char, mem: NcType, ip: *mut c_void) -> c_int {
    api!(call, (ncid, varid, name), {
        // SAFETY: this function's contract.
        unsafe { get_att_impl(ncid, varid, name, Some(mem), ip) }
    })
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_att(ncid: c_int, varid: c_int, name: *const c_char, xtypep: *mut nc_type, lenp: *mut usize) -> c_int {
    // SAFETY: as above.
    let att = unsafe { att_named(ncid, varid, name) }?;
    // SAFETY: optional out-pointers.
    unsafe {
        put(xtypep, att.value.nctype().id());
        put(lenp, att.value.len());
    }
    Ok(())
}

/// The attribute `name` names (NULL, too long or absent: NC_EBADNAME/NC_ENOTATT).
///
/// # Safety
/// `name` is NULL or NUL-terminated.
unsafe fn att_named(ncid: c_int, varid: c_int, name: *const c_char) -> Result<crate::model::Att> {
    // SAFETY: this function's contract.
    let raw = unsafe { att_name(name) }?;
    with(ncid, |ds, gid| ds.get_att(gid, VarRef::from_c(varid), &names::lookup(raw)?))
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_atttype(ncid: c_int, varid: c_int, name: *const c_char, xtypep: *mut nc_type) -> c_int {
    // SAFETY: as above.
    let att = unsafe { att_named(ncid, varid, name) }?;
    // SAFETY: optional out-pointer.
    unsafe { put(xtypep, att.value.nctype().id()) };
    Ok(())
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_attlen(ncid: c_int, varid: c_int, name: *const c_char, lenp: *mut usize) -> c_int {
    // SAFETY: as above.
    let att = unsafe { att_named(ncid, varid, name) }?;
    // SAFETY: optional out-pointer.
    unsafe { put(lenp, att.value.len()) };
    Ok(())
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_attid(ncid: c_int, varid: c_int, name: *const c_char, idp: *mut c_int) -> c_int {
    // SAFETY: as above.
    let raw = unsafe { att_name(name) }?;
    let id = with(ncid, |ds, gid| ds.att_id(gid, VarRef::from_c(varid), &names::lookup(raw)?))?;
    // SAFETY: optional out-pointer.
    unsafe { put(idp, id as c_int) };
    Ok(())
}

#[export(trace(ncid, varid, attnum))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_attname(ncid: c_int, varid: c_int, attnum: c_int, name: *mut c_char) -> c_int {
    let n = with(ncid, |ds, gid| Ok(ds.att_name(gid, VarRef::from_c(varid), attnum)?.to_string()))?;
    // SAFETY: caller buffer of NC_MAX_NAME+1 bytes.
    unsafe { put_name(name, &n) };
    Ok(())
}

#[export(trace(ncid, varid, name, newname))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_rename_att(ncid: c_int, varid: c_int, name: *const c_char, newname: *const c_char) -> c_int {
    // SAFETY: as above.
    let (old, new) = unsafe { (cstr(name)?, cstr(newname)?) };
    with(ncid, |ds, gid| ds.rename_att(gid, VarRef::from_c(varid), old, new))
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_del_att(ncid: c_int, varid: c_int, name: *const c_char) -> c_int {
    // SAFETY: as above.
    let name = unsafe { cstr(name) }?;
    with(ncid, |ds, gid| ds.del_att(gid, VarRef::from_c(varid), name))
}

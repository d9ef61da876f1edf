//! Groups and dimensions.

use super::{cstr, put, put_name, put_slice, with};
use crate::api;
use crate::error::Result;
use crate::nc::names;
use crate::registry::group_ncid;
use nczarr_macros::export;
use std::ffi::{c_char, c_int};

#[export(trace(parent_ncid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_grp(parent_ncid: c_int, name: *const c_char, new_ncid: *mut c_int) -> c_int {
    // SAFETY: NUL-terminated name or NULL (→ NC_EINVAL).
    let name = unsafe { cstr(name) }?;
    let gid = with(parent_ncid, |ds, gid| ds.def_grp(gid, name))?;
    // SAFETY: optional out-pointer.
    unsafe { put(new_ncid, group_ncid(parent_ncid, gid)) };
    Ok(())
}

#[export(trace(grpid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_rename_grp(grpid: c_int, name: *const c_char) -> c_int {
    // SAFETY: as above.
    let name = unsafe { cstr(name) }?;
    with(grpid, |ds, gid| ds.rename_grp(gid, name))
}

#[export(trace(ncid, grp_name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_grp_ncid(ncid: c_int, grp_name: *const c_char, grp_ncid: *mut c_int) -> c_int {
    // SAFETY: as above.
    let raw = unsafe { cstr(grp_name) }?;
    let gid = with(ncid, |ds, gid| ds.child_group(gid, &names::lookup(raw)?))?;
    // SAFETY: optional out-pointer.
    unsafe { put(grp_ncid, group_ncid(ncid, gid)) };
    Ok(())
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_ncid(ncid: c_int, name: *const c_char, grp_ncid: *mut c_int) -> c_int {
    if name.is_null() {
        return api!("nc_inq_ncid", (ncid), {
            with(ncid, |_, _| Ok(()))?;
            // SAFETY: optional out-pointer.
            unsafe { put(grp_ncid, ncid) };
            Ok(())
        });
    }
    api!("nc_inq_ncid", (ncid, name), {
        // SAFETY: a NUL-terminated name (checked non-NULL above).
        let raw = unsafe { cstr(name) }?;
        let gid = with(ncid, |ds, gid| ds.child_group(gid, &names::lookup(raw)?))?;
        // SAFETY: optional out-pointer.
        unsafe { put(grp_ncid, group_ncid(ncid, gid)) };
        Ok(())
    })
}

#[export(trace(ncid, full_name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_grp_full_ncid(ncid: c_int, full_name: *const c_char, grp_ncid: *mut c_int) -> c_int {
    // SAFETY: as above.
    let path = String::from_utf8_lossy(unsafe { cstr(full_name) }?).into_owned();
    let gid = with(ncid, |ds, gid| ds.group_by_path(gid, &path))?;
    // SAFETY: optional out-pointer.
    unsafe { put(grp_ncid, group_ncid(ncid, gid)) };
    Ok(())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_grps(ncid: c_int, numgrps: *mut c_int, ncids: *mut c_int) -> c_int {
    let ids: Vec<c_int> = with(ncid, |ds, gid| Ok(ds.child_groups(gid).iter().map(|&c| group_ncid(ncid, c)).collect()))?;
    // SAFETY: optional out-pointers sized by a previous count call.
    unsafe {
        put(numgrps, ids.len() as c_int);
        put_slice(ncids, &ids);
    }
    Ok(())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_grpname(ncid: c_int, name: *mut c_char) -> c_int {
    let n = with(ncid, |ds, gid| Ok(ds.group_name(gid).to_string()))?;
    // SAFETY: caller buffer of NC_MAX_NAME+1 bytes.
    unsafe { put_name(name, &n) };
    Ok(())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_grpname_full(ncid: c_int, lenp: *mut usize, full_name: *mut c_char) -> c_int {
    let n = with(ncid, |ds, gid| Ok(ds.group_full_name(gid)))?;
    // SAFETY: optional out-pointers; the buffer holds len+1 bytes.
    unsafe {
        put(lenp, n.len());
        put_name(full_name, &n);
    }
    Ok(())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_grpname_len(ncid: c_int, lenp: *mut usize) -> c_int {
    let n = with(ncid, |ds, gid| Ok(ds.group_full_name(gid).len()))?;
    // SAFETY: optional out-pointer.
    unsafe { put(lenp, n) };
    Ok(())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_grp_parent(ncid: c_int, parent_ncid: *mut c_int) -> c_int {
    let parent = with(ncid, |ds, gid| ds.group_parent(gid))?;
    // SAFETY: optional out-pointer.
    unsafe { put(parent_ncid, group_ncid(ncid, parent)) };
    Ok(())
}

#[export(trace(ncid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_varids(ncid: c_int, nvars: *mut c_int, varids: *mut c_int) -> c_int {
    let n = with(ncid, |ds, gid| Ok(ds.var_count(gid)))?;
    let ids: Vec<c_int> = (0..n as c_int).collect();
    // SAFETY: optional out-pointers.
    unsafe {
        put(nvars, n as c_int);
        put_slice(varids, &ids);
    }
    Ok(())
}

#[export(trace(ncid, include_parents))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_dimids(ncid: c_int, ndims: *mut c_int, dimids: *mut c_int, include_parents: c_int) -> c_int {
    let ids: Vec<c_int> = with(ncid, |ds, gid| Ok(ds.dim_ids(gid, include_parents != 0).into_iter().map(|d| d as c_int).collect()))?;
    // SAFETY: optional out-pointers.
    unsafe {
        put(ndims, ids.len() as c_int);
        put_slice(dimids, &ids);
    }
    Ok(())
}

#[export(trace(ncid, name, len))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_dim(ncid: c_int, name: *const c_char, len: usize, idp: *mut c_int) -> c_int {
    // SAFETY: as above.
    let name = unsafe { cstr(name) }?;
    let id = with(ncid, |ds, gid| ds.def_dim(gid, name, len as u64))?;
    // SAFETY: optional out-pointer.
    unsafe { put(idp, id as c_int) };
    Ok(())
}

#[export(trace(ncid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_dimid(ncid: c_int, name: *const c_char, idp: *mut c_int) -> c_int {
    // The ncid is checked before the name, as netcdf-c's dispatch does.
    with(ncid, |_, _| Ok(()))?;
    // SAFETY: as above.
    let raw = unsafe { cstr(name) }?;
    // Not validated beyond netcdf-c's own checks: a name that cannot exist is simply not
    // found (NC_EBADDIM); a '/' would make it a path, which netcdf-c rejects here.
    let name = names::lookup(raw)?;
    let id = with(ncid, |ds, gid| ds.dim_id(gid, &name))?;
    // SAFETY: optional out-pointer.
    unsafe { put(idp, id as c_int) };
    Ok(())
}

fn dim_info(ncid: c_int, dimid: c_int) -> Result<(String, usize)> {
    with(ncid, |ds, _| {
        let d = ds.dim_info(dimid)?;
        Ok((d.name.clone(), d.len as usize))
    })
}

#[export(trace(ncid, dimid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_dim(ncid: c_int, dimid: c_int, name: *mut c_char, lenp: *mut usize) -> c_int {
    let (n, len) = dim_info(ncid, dimid)?;
    // SAFETY: optional out-pointers.
    unsafe {
        put_name(name, &n);
        put(lenp, len);
    }
    Ok(())
}

#[export(trace(ncid, dimid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_dimname(ncid: c_int, dimid: c_int, name: *mut c_char) -> c_int {
    let (n, _) = dim_info(ncid, dimid)?;
    // SAFETY: optional out-pointer.
    unsafe { put_name(name, &n) };
    Ok(())
}

#[export(trace(ncid, dimid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_dimlen(ncid: c_int, dimid: c_int, lenp: *mut usize) -> c_int {
    let (_, len) = dim_info(ncid, dimid)?;
    // SAFETY: optional out-pointer.
    unsafe { put(lenp, len) };
    Ok(())
}

#[export(trace(ncid, dimid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_rename_dim(ncid: c_int, dimid: c_int, name: *const c_char) -> c_int {
    // SAFETY: as above.
    let name = unsafe { cstr(name) }?;
    with(ncid, |ds, gid| ds.rename_dim(gid, dimid, name))
}

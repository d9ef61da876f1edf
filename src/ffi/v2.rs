//! The netCDF-2 API: thin wrappers over the `nc_` calls with netcdf-c's protocol (the value on
//! success; -1 after `nc_advise`, which sets `ncerr` and may print or exit, on failure).

use super::consts::nc_type;
use super::{put, with};
use crate::error::Result;
use nczarr_macros::export;
use std::ffi::{CStr, c_char, c_int, c_long, c_void};

unsafe extern "C" {
    fn nc_advise(routine: *const c_char, err: c_int, fmt: *const c_char, ...);
}

/// The v2 convention: the value on success, -1 after `nc_advise` on failure. `detail` is the
/// middle part of netcdf-c's message for that routine (`ncid 65536` for most of them).
fn v2(routine: &CStr, status: c_int, ok: c_int, detail: impl FnOnce() -> String) -> c_int {
    if status == 0 {
        return ok;
    }
    let detail = std::ffi::CString::new(detail().replace('\0', "")).unwrap_or_default();
    // SAFETY: C strings; "%s" consumes exactly the one string passed.
    unsafe { nc_advise(routine.as_ptr(), status, c"%s".as_ptr(), detail.as_ptr()) };
    -1
}

/// netcdf-c's detail text for most v2 routines.
fn at(ncid: c_int) -> impl FnOnce() -> String {
    move || format!("ncid {ncid}")
}

/// A C string argument for a message (NULL prints as netcdf-c's printf would).
fn shown(p: *const c_char) -> String {
    if p.is_null() {
        return "(null)".into();
    }
    // SAFETY: non-NULL, NUL-terminated by the caller's contract.
    String::from_utf8_lossy(unsafe { CStr::from_ptr(p) }.to_bytes()).into_owned()
}

// Every v2 wrapper forwards the caller's pointers to the nc_ function under the same contract.

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nccreate(path: *const c_char, cmode: c_int) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::lifecycle::nc_create(path, cmode, &mut id) };
    v2(c"nccreate", s, id, || format!("filename \"{}\"", shown(path)))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncopen(path: *const c_char, mode: c_int) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::lifecycle::nc_open(path, mode, &mut id) };
    v2(c"ncopen", s, id, || format!("filename \"{}\"", shown(path)))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncsetfill(ncid: c_int, fillmode: c_int) -> c_int {
    let mut old = 0;
    // SAFETY: see above.
    let s = unsafe { super::file::nc_set_fill(ncid, fillmode, &mut old) };
    v2(c"ncsetfill", s, old, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncredef(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncredef", unsafe { super::file::nc_redef(ncid) }, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncendef(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncendef", unsafe { super::file::nc_enddef(ncid) }, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncsync(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncsync", unsafe { super::lifecycle::nc_sync(ncid) }, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncabort(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncabort", unsafe { super::lifecycle::nc_abort(ncid) }, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncclose(ncid: c_int) -> c_int {
    // SAFETY: no pointers.
    v2(c"ncclose", unsafe { super::lifecycle::nc_close(ncid) }, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncinquire(
    ncid: c_int,
    ndimsp: *mut c_int,
    nvarsp: *mut c_int,
    nattsp: *mut c_int,
    unlimdimp: *mut c_int,
) -> c_int {
    // SAFETY: see above.
    v2(c"ncinquire", unsafe { super::file::nc_inq(ncid, ndimsp, nvarsp, nattsp, unlimdimp) }, ncid, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncdimdef(ncid: c_int, name: *const c_char, len: c_long) -> c_int {
    if len < 0 {
        return v2(c"ncdimdef", -63, -1, at(ncid));
    }
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::group::nc_def_dim(ncid, name, len as usize, &mut id) };
    v2(c"ncdimdef", s, id, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncdimid(ncid: c_int, name: *const c_char) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::group::nc_inq_dimid(ncid, name, &mut id) };
    v2(c"ncdimid", s, id, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncdiminq(ncid: c_int, dimid: c_int, name: *mut c_char, lenp: *mut c_long) -> c_int {
    let mut len = 0usize;
    // SAFETY: see above; `lenp` is an optional out-pointer.
    let s = unsafe { super::group::nc_inq_dim(ncid, dimid, name, &mut len) };
    // SAFETY: an optional out-pointer.
    unsafe { put(lenp, len as c_long) };
    v2(c"ncdiminq", s, dimid, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncdimrename(ncid: c_int, dimid: c_int, name: *const c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncdimrename", unsafe { super::group::nc_rename_dim(ncid, dimid, name) }, dimid, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvardef(ncid: c_int, name: *const c_char, xtype: nc_type, ndims: c_int, dimidsp: *const c_int) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::var::nc_def_var(ncid, name, xtype, ndims, dimidsp, &mut id) };
    v2(c"ncvardef", s, id, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarid(ncid: c_int, name: *const c_char) -> c_int {
    let mut id = -1;
    // SAFETY: see above.
    let s = unsafe { super::var::nc_inq_varid(ncid, name, &mut id) };
    v2(c"ncvarid", s, id, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarinq(
    ncid: c_int,
    varid: c_int,
    name: *mut c_char,
    xtypep: *mut nc_type,
    ndimsp: *mut c_int,
    dimidsp: *mut c_int,
    nattsp: *mut c_int,
) -> c_int {
    // SAFETY: see above.
    v2(c"ncvarinq", unsafe { super::var::nc_inq_var(ncid, varid, name, xtypep, ndimsp, dimidsp, nattsp) }, varid, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarrename(ncid: c_int, varid: c_int, name: *const c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncvarrename", unsafe { super::var::nc_rename_var(ncid, varid, name) }, varid, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattput(ncid: c_int, varid: c_int, name: *const c_char, xtype: nc_type, len: c_int, op: *const c_void) -> c_int {
    if len < 0 {
        return v2(c"ncattput", -36, -1, at(ncid));
    }
    // SAFETY: see above.
    v2(c"ncattput", unsafe { super::att::nc_put_att(ncid, varid, name, xtype, len as usize, op) }, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattinq(ncid: c_int, varid: c_int, name: *const c_char, xtypep: *mut nc_type, lenp: *mut c_int) -> c_int {
    let mut len = 0usize;
    // SAFETY: see above; `lenp` is an optional out-pointer.
    let s = unsafe { super::att::nc_inq_att(ncid, varid, name, xtypep, &mut len) };
    // SAFETY: an optional out-pointer.
    unsafe { put(lenp, len as c_int) };
    v2(c"ncattinq", s, 1, || format!("ncid {ncid}; varid {varid}; attname \"{}\"", shown(name)))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattget(ncid: c_int, varid: c_int, name: *const c_char, ip: *mut c_void) -> c_int {
    // SAFETY: see above.
    v2(c"ncattget", unsafe { super::att::nc_get_att(ncid, varid, name, ip) }, 1, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattcopy(ncid_in: c_int, varid_in: c_int, name: *const c_char, ncid_out: c_int, varid_out: c_int) -> c_int {
    // SAFETY: see above.
    v2(c"ncattcopy", unsafe { super::cross::nc_copy_att(ncid_in, varid_in, name, ncid_out, varid_out) }, 0, String::new)
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattname(ncid: c_int, varid: c_int, attnum: c_int, name: *mut c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncattname", unsafe { super::att::nc_inq_attname(ncid, varid, attnum, name) }, attnum, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattrename(ncid: c_int, varid: c_int, name: *const c_char, newname: *const c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncattrename", unsafe { super::att::nc_rename_att(ncid, varid, name, newname) }, 1, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncattdel(ncid: c_int, varid: c_int, name: *const c_char) -> c_int {
    // SAFETY: see above.
    v2(c"ncattdel", unsafe { super::att::nc_del_att(ncid, varid, name) }, 1, at(ncid))
}

// v2 data access. `long` index/count/stride arrays have `size_t`/`ptrdiff_t`'s layout on the
// LP64 targets we build for, so they are passed through as netcdf-c does there (a negative
// index arrives as a huge one and is NC_EINVALCOORDS). imap is in bytes in v2.
const _: () = assert!(std::mem::size_of::<c_long>() == std::mem::size_of::<usize>());

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarput1(ncid: c_int, varid: c_int, index: *const c_long, value: *const c_void) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    let s = unsafe { super::data_matrix::nc_put_var1(ncid, varid, index.cast(), value) };
    v2(c"ncvarput1", s, 0, at(ncid))
}

/// netcdf-c reports this routine's failures under the name "ncdimid" (c-api.md §12).
#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarget1(ncid: c_int, varid: c_int, index: *const c_long, value: *mut c_void) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    let s = unsafe { super::data_matrix::nc_get_var1(ncid, varid, index.cast(), value) };
    v2(c"ncdimid", s, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarput(ncid: c_int, varid: c_int, start: *const c_long, count: *const c_long, value: *const c_void) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    let s = unsafe { super::data_matrix::nc_put_vara(ncid, varid, start.cast(), count.cast(), value) };
    v2(c"ncvarput", s, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarget(ncid: c_int, varid: c_int, start: *const c_long, count: *const c_long, value: *mut c_void) -> c_int {
    // SAFETY: the caller's pointers, under this export's contract.
    let s = unsafe { super::data_matrix::nc_get_vara(ncid, varid, start.cast(), count.cast(), value) };
    v2(c"ncvarget", s, 0, || format!("ncid {ncid}; varid {varid}"))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarputs(
    ncid: c_int,
    varid: c_int,
    start: *const c_long,
    count: *const c_long,
    stride: *const c_long,
    value: *const c_void,
) -> c_int {
    if stride.is_null() {
        // SAFETY: same contract.
        return unsafe { ncvarput(ncid, varid, start, count, value) };
    }
    // SAFETY: the caller's pointers, under this export's contract.
    let s = unsafe { super::data_matrix::nc_put_vars(ncid, varid, start.cast(), count.cast(), stride.cast(), value) };
    v2(c"ncvarputs", s, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvargets(
    ncid: c_int,
    varid: c_int,
    start: *const c_long,
    count: *const c_long,
    stride: *const c_long,
    value: *mut c_void,
) -> c_int {
    if stride.is_null() {
        // SAFETY: same contract.
        return unsafe { ncvarget(ncid, varid, start, count, value) };
    }
    // SAFETY: the caller's pointers, under this export's contract.
    let s = unsafe { super::data_matrix::nc_get_vars(ncid, varid, start.cast(), count.cast(), stride.cast(), value) };
    v2(c"ncvargets", s, 0, at(ncid))
}

/// Runs a mapped v2 access with its byte map turned into an element map (netcdf-c divides
/// each entry by the type's size). Errors looking the variable up are returned raw, as
/// netcdf-c does, without `nc_advise`.
fn with_element_map(routine: &CStr, ncid: c_int, varid: c_int, map: *const c_long, call: impl FnOnce(*const isize) -> c_int) -> c_int {
    let (mut ndims, mut xtype) = (0, 0);
    // SAFETY: out-pointers to locals.
    let s = unsafe { super::var::nc_inq_varndims(ncid, varid, &mut ndims) };
    if s != 0 {
        return s;
    }
    // SAFETY: as above.
    let s = unsafe { super::var::nc_inq_vartype(ncid, varid, &mut xtype) };
    if s != 0 {
        return s;
    }
    // SAFETY: no pointers.
    let size = unsafe { super::usertypes::nctypelen(xtype) }.max(1) as isize;
    // SAFETY: the caller's map holds one entry per dimension.
    let bytes = unsafe { std::slice::from_raw_parts(map, ndims.max(0) as usize) };
    let imap: Vec<isize> = bytes.iter().map(|&b| b as isize / size).collect();
    v2(routine, call(imap.as_ptr()), 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvarputg(
    ncid: c_int,
    varid: c_int,
    start: *const c_long,
    count: *const c_long,
    stride: *const c_long,
    map: *const c_long,
    value: *const c_void,
) -> c_int {
    if map.is_null() {
        // SAFETY: same contract.
        return unsafe { ncvarputs(ncid, varid, start, count, stride, value) };
    }
    with_element_map(c"ncvarputg", ncid, varid, map, |imap| {
        // SAFETY: the caller's pointers, under this export's contract.
        unsafe { super::data_matrix::nc_put_varm(ncid, varid, start.cast(), count.cast(), stride.cast(), imap, value) }
    })
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncvargetg(
    ncid: c_int,
    varid: c_int,
    start: *const c_long,
    count: *const c_long,
    stride: *const c_long,
    map: *const c_long,
    value: *mut c_void,
) -> c_int {
    if map.is_null() {
        // SAFETY: same contract.
        return unsafe { ncvargets(ncid, varid, start, count, stride, value) };
    }
    with_element_map(c"ncvargetg", ncid, varid, map, |imap| {
        // SAFETY: the caller's pointers, under this export's contract.
        unsafe { super::data_matrix::nc_get_varm(ncid, varid, start.cast(), count.cast(), stride.cast(), imap, value) }
    })
}

/// Record variables (first dimension unlimited) of a group and the bytes one record of each
/// holds; none when the group has no unlimited dimension.
fn record_vars(ncid: c_int) -> Result<Vec<(c_int, Vec<usize>, usize)>> {
    with(ncid, |ds, gid| {
        let records = ds.record_vars(gid).into_iter().map(|(varid, lens, nctype)| {
            let bytes = lens[1..].iter().product::<usize>() * nctype.size();
            (varid as c_int, lens, bytes)
        });
        Ok(records.collect())
    })
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncrecinq(ncid: c_int, nrecvarsp: *mut c_int, recvarids: *mut c_int, recsizes: *mut c_long) -> c_int {
    match record_vars(ncid) {
        Ok(vars) => {
            // SAFETY: optional out-pointers; the arrays hold one entry per record variable.
            unsafe {
                put(nrecvarsp, vars.len() as c_int);
                for (i, (varid, _, bytes)) in vars.iter().enumerate() {
                    if !recvarids.is_null() {
                        *recvarids.add(i) = *varid;
                    }
                    if !recsizes.is_null() {
                        *recsizes.add(i) = *bytes as c_long;
                    }
                }
            }
            vars.len() as c_int
        }
        Err(e) => v2(c"ncrecinq", e.code(), 0, at(ncid)),
    }
}

/// One record of every record variable, from or to the caller's per-variable buffers (a NULL
/// buffer skips that variable).
fn records(ncid: c_int, recnum: c_long, mut each: impl FnMut(c_int, &[usize], &[usize], usize) -> c_int) -> c_int {
    let vars = match record_vars(ncid) {
        Ok(v) => v,
        Err(e) => return e.code(),
    };
    for (i, (varid, lens, _)) in vars.iter().enumerate() {
        let mut start = vec![0usize; lens.len()];
        start[0] = recnum as usize;
        let mut count = lens.clone();
        count[0] = 1;
        let s = each(*varid, &start, &count, i);
        if s != 0 {
            return s;
        }
    }
    0
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncrecput(ncid: c_int, recnum: c_long, datap: *const *mut c_void) -> c_int {
    let s = records(ncid, recnum, |varid, start, count, i| {
        // SAFETY: `datap` holds one pointer per record variable (ncrecinq's order).
        let data = if datap.is_null() { std::ptr::null() } else { unsafe { *datap.add(i) } };
        // SAFETY: the caller's pointers, under this export's contract.
        if data.is_null() { 0 } else { unsafe { super::data_matrix::nc_put_vara(ncid, varid, start.as_ptr(), count.as_ptr(), data) } }
    });
    v2(c"ncrecput", s, 0, at(ncid))
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncrecget(ncid: c_int, recnum: c_long, datap: *mut *mut c_void) -> c_int {
    let s = records(ncid, recnum, |varid, start, count, i| {
        // SAFETY: `datap` holds one pointer per record variable (ncrecinq's order).
        let data = if datap.is_null() { std::ptr::null_mut() } else { unsafe { *datap.add(i) } };
        // SAFETY: the caller's pointers, under this export's contract.
        if data.is_null() { 0 } else { unsafe { super::data_matrix::nc_get_vara(ncid, varid, start.as_ptr(), count.as_ptr(), data) } }
    });
    v2(c"ncrecget", s, 0, at(ncid))
}

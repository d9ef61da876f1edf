//! Filters: deflate, shuffle, fletcher32, szip, the generic filter calls, and the bzip2, zstd
//! and blosc helpers of netcdf_filter.h.

use super::consts::NCPluginList;
use super::var::settings_var;
use super::{put, put_slice, slice, with};
use crate::api;
use crate::codec;
use crate::error::{Error, Kind, err};
use crate::model::Var;
use crate::nc::modes::VarRef;
use nczarr_macros::export;
use std::ffi::{c_char, c_int, c_uint};

#[export(trace(ncid, varid, shuffle, deflate, deflate_level))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_deflate(ncid: c_int, varid: c_int, shuffle: c_int, deflate: c_int, deflate_level: c_int) -> c_int {
    with(ncid, |ds, gid| ds.def_var_deflate(gid, VarRef::from_c(varid), shuffle != 0, deflate != 0, deflate_level))
}

fn filter_params(v: &Var, id: u32) -> Option<Vec<u32>> {
    v.filters.iter().find(|f| f.id == id).map(|f| f.params.clone())
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_deflate(
    ncid: c_int,
    varid: c_int,
    shufflep: *mut c_int,
    deflatep: *mut c_int,
    deflate_levelp: *mut c_int,
) -> c_int {
    let (sh, de) = settings_var(ncid, varid, |v| (filter_params(v, codec::SHUFFLE).is_some(), filter_params(v, codec::DEFLATE)))?;
    // SAFETY: optional out-pointers.
    unsafe {
        put(shufflep, sh as c_int);
        put(deflatep, de.is_some() as c_int);
        put(deflate_levelp, de.and_then(|p| p.first().copied()).unwrap_or(0) as c_int);
    }
    Ok(())
}

#[export(trace(ncid, varid, fletcher32))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_fletcher32(ncid: c_int, varid: c_int, fletcher32: c_int) -> c_int {
    with(ncid, |ds, gid| ds.def_var_fletcher32(gid, VarRef::from_c(varid), fletcher32 != 0))
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_fletcher32(ncid: c_int, varid: c_int, fletcher32p: *mut c_int) -> c_int {
    let on = settings_var(ncid, varid, |v| filter_params(v, codec::FLETCHER32).is_some())?;
    // SAFETY: optional out-pointer.
    unsafe { put(fletcher32p, on as c_int) };
    Ok(())
}

#[export(trace(ncid, varid, options_mask, pixels_per_block))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_szip(ncid: c_int, varid: c_int, options_mask: c_int, pixels_per_block: c_int) -> c_int {
    with(ncid, |ds, gid| ds.def_var_filter(gid, VarRef::from_c(varid), codec::SZIP, vec![options_mask as u32, pixels_per_block as u32]))
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_szip(ncid: c_int, varid: c_int, options_maskp: *mut c_int, pixels_per_blockp: *mut c_int) -> c_int {
    let p = settings_var(ncid, varid, |v| filter_params(v, codec::SZIP))?.unwrap_or_default();
    // SAFETY: optional out-pointers.
    unsafe {
        put(options_maskp, p.first().copied().unwrap_or(0) as c_int);
        put(pixels_per_blockp, p.get(1).copied().unwrap_or(0) as c_int);
    }
    Ok(())
}

#[export(trace(ncid, varid, id, nparams))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_filter(ncid: c_int, varid: c_int, id: c_uint, nparams: usize, parms: *const c_uint) -> c_int {
    // SAFETY: `parms` holds `nparams` values.
    let given = unsafe { slice(parms, nparams) }?;
    // A count larger than memory holds is NC_ENOMEM (netcdf-c's failed malloc), not an abort.
    let mut params = Vec::new();
    params.try_reserve_exact(given.len()).map_err(|_| Error::new(Kind::NoMem, format!("{nparams} filter parameters")))?;
    params.extend_from_slice(given);
    with(ncid, |ds, gid| ds.def_var_filter(gid, VarRef::from_c(varid), id, params))
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_filter(ncid: c_int, varid: c_int, idp: *mut c_uint, nparams: *mut usize, params: *mut c_uint) -> c_int {
    let first = settings_var(ncid, varid, |v| v.filters.iter().find(|f| f.id != 0).map(|f| (f.id, f.params.clone())))?;
    // SAFETY: optional out-pointers; `params` sized by a previous call.
    unsafe {
        match first {
            None => put(idp, 0),
            Some((id, p)) => {
                put(idp, id);
                put(nparams, p.len());
                put_slice(params, &p);
            }
        }
    }
    Ok(())
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_filter_ids(ncid: c_int, varid: c_int, nfilters: *mut usize, filterids: *mut c_uint) -> c_int {
    let ids: Vec<u32> = settings_var(ncid, varid, |v| v.filters.iter().filter(|f| f.id != 0).map(|f| f.id).collect())?;
    // SAFETY: optional out-pointers.
    unsafe {
        put(nfilters, ids.len());
        put_slice(filterids, &ids);
    }
    Ok(())
}

#[export(trace(ncid, varid, id))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_filter_info(ncid: c_int, varid: c_int, id: c_uint, nparams: *mut usize, params: *mut c_uint) -> c_int {
    let p = settings_var(ncid, varid, |v| filter_params(v, id))?.ok_or_else(|| Error::new(Kind::NoFilter, format!("filter {id}")))?;
    // SAFETY: optional out-pointers.
    unsafe {
        put(nparams, p.len());
        put_slice(params, &p);
    }
    Ok(())
}

#[export(trace(ncid, id))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_filter_avail(ncid: c_int, id: c_uint) -> c_int {
    with(ncid, |_, _| Ok(()))?;
    if id == 0 {
        return err(Kind::Invalid, "filter id 0");
    }
    if codec::available(id) { Ok(()) } else { err(Kind::NoFilter, format!("filter {id}")) }
}

#[export(trace(ncid, varid, level))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_bzip2(ncid: c_int, varid: c_int, level: c_int) -> c_int {
    if !(1..=9).contains(&level) {
        with(ncid, |_, _| Ok(()))?;
        return err(Kind::Invalid, "bzip2 level");
    }
    with(ncid, |ds, gid| ds.def_var_filter(gid, VarRef::from_c(varid), codec::BZIP2, vec![level as u32]))
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_bzip2(ncid: c_int, varid: c_int, hasfilterp: *mut c_int, levelp: *mut c_int) -> c_int {
    inq_one_param(ncid, varid, codec::BZIP2, hasfilterp, levelp)
}

#[export(trace(ncid, varid, level))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_zstandard(ncid: c_int, varid: c_int, level: c_int) -> c_int {
    if !(-131072..=22).contains(&level) {
        with(ncid, |_, _| Ok(()))?;
        return err(Kind::Invalid, "zstd level");
    }
    with(ncid, |ds, gid| ds.def_var_filter(gid, VarRef::from_c(varid), codec::ZSTD, vec![level as u32]))
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_zstandard(ncid: c_int, varid: c_int, hasfilterp: *mut c_int, levelp: *mut c_int) -> c_int {
    inq_one_param(ncid, varid, codec::ZSTD, hasfilterp, levelp)
}

fn inq_one_param(ncid: c_int, varid: c_int, id: u32, hasfilterp: *mut c_int, levelp: *mut c_int) -> c_int {
    api!("nc_inq_var_<codec>", (ncid, varid, id), {
        let p = settings_var(ncid, varid, |v| filter_params(v, id))?;
        // SAFETY: optional out-pointers.
        unsafe {
            match p {
                None => put(hasfilterp, 0),
                Some(p) if p.len() != 1 => return err(Kind::Filter, "wrong parameter count"),
                Some(p) => {
                    put(hasfilterp, 1);
                    put(levelp, p[0] as c_int);
                }
            }
        }
        Ok(())
    })
}

#[export(trace(ncid, varid, subcompressor, level, blocksize, addshuffle))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_blosc(
    ncid: c_int,
    varid: c_int,
    subcompressor: c_uint,
    level: c_uint,
    blocksize: c_uint,
    addshuffle: c_uint,
) -> c_int {
    if addshuffle > 2 || subcompressor > 5 {
        with(ncid, |_, _| Ok(()))?;
        return err(Kind::Invalid, "blosc parameters");
    }
    with(ncid, |ds, gid| {
        ds.def_var_filter(gid, VarRef::from_c(varid), codec::BLOSC, vec![0, 0, 0, blocksize, level, addshuffle, subcompressor])
    })
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_blosc(
    ncid: c_int,
    varid: c_int,
    hasfilterp: *mut c_int,
    subcompressorp: *mut c_uint,
    levelp: *mut c_uint,
    blocksizep: *mut c_uint,
    addshufflep: *mut c_uint,
) -> c_int {
    let p = settings_var(ncid, varid, |v| filter_params(v, codec::BLOSC))?;
    // SAFETY: optional out-pointers.
    unsafe {
        match p {
            None => put(hasfilterp, 0),
            Some(p) if p.len() != 7 => return err(Kind::Filter, "wrong parameter count"),
            Some(p) => {
                put(hasfilterp, 1);
                put(blocksizep, p[3]);
                put(levelp, p[4]);
                put(addshufflep, p[5]);
                put(subcompressorp, p[6]);
            }
        }
    }
    Ok(())
}

// ---- the plugin path (netcdf-c 4.9.3+) -------------------------------------------------------

/// The entries of a caller's plugin list, NULL ones as None.
///
/// # Safety
/// `list.dirs` holds `list.ndirs` entries, each NULL or NUL-terminated.
pub(super) unsafe fn plugin_entries(list: &NCPluginList) -> crate::error::Result<Vec<Option<String>>> {
    if list.ndirs == 0 {
        return Ok(Vec::new());
    }
    if list.dirs.is_null() {
        return err(Kind::Invalid, "plugin list with no directories vector");
    }
    // SAFETY: `ndirs` entries (the caller's contract).
    let entries = unsafe { std::slice::from_raw_parts(list.dirs, list.ndirs) };
    // SAFETY: each entry NULL or NUL-terminated.
    Ok(entries.iter().map(|&d| (!d.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(d) }.to_string_lossy().into_owned())).collect())
}

/// The directories of a caller's plugin list (NULL entries refused: netcdf-c would keep them
/// and fail later).
///
/// # Safety
/// `dirs` is NULL or points to a list whose `dirs` holds `ndirs` NUL-terminated strings.
unsafe fn plugin_list(dirs: *const NCPluginList) -> crate::error::Result<Vec<String>> {
    // SAFETY: NULL checked; the caller's list.
    let Some(list) = (unsafe { dirs.as_ref() }) else { return err(Kind::Invalid, "NULL plugin list") };
    // SAFETY: the caller's list.
    let entries = unsafe { plugin_entries(list) }?;
    entries.into_iter().map(|d| d.ok_or_else(|| Error::new(Kind::Invalid, "NULL plugin directory"))).collect()
}

/// Fills a caller's plugin list with `dirs` (netcdf-c's contract: a NULL `dirs` vector is
/// allocated with calloc; otherwise the caller's is written; each name is malloc'ed).
///
/// # Safety
/// `list` is valid; a non-NULL `list.dirs` has room for `dirs.len()` entries.
pub(super) unsafe fn fill_plugin_list(list: &mut NCPluginList, dirs: &[String]) -> crate::error::Result<()> {
    list.ndirs = dirs.len();
    if dirs.is_empty() {
        return Ok(());
    }
    if list.dirs.is_null() {
        // SAFETY: calloc of `len` pointers; the caller frees (ncaux_plugin_path_clear).
        list.dirs = unsafe { libc::calloc(dirs.len(), std::mem::size_of::<*mut c_char>()) } as *mut *mut c_char;
        if list.dirs.is_null() {
            return err(Kind::NoMem, "plugin list");
        }
    }
    for (i, d) in dirs.iter().enumerate() {
        // SAFETY: room for `dirs.len()` entries (above, or the caller's contract).
        unsafe { *list.dirs.add(i) = super::malloc_string(d.as_bytes())? };
    }
    Ok(())
}

#[export(trace())]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_plugin_path_ndirs(ndirsp: *mut usize) -> c_int {
    // SAFETY: optional out-pointer.
    unsafe { put(ndirsp, codec::plugin::path().len()) };
    Ok(())
}

#[export(trace())]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_plugin_path_get(dirs: *mut NCPluginList) -> c_int {
    // SAFETY: NULL (nothing to do) or the caller's list.
    let Some(list) = (unsafe { dirs.as_mut() }) else { return Ok(()) };
    // SAFETY: the caller's list, as `fill_plugin_list` needs.
    unsafe { fill_plugin_list(list, &codec::plugin::path()) }
}

#[export(trace())]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_plugin_path_set(dirs: *mut NCPluginList) -> c_int {
    // SAFETY: NULL checked there; the caller's list.
    let list = unsafe { plugin_list(dirs) }?;
    crate::trace::emit(1, &format!("plugin path set to {list:?}"));
    codec::plugin::set_path(list);
    // Both libraries search plugins (passthrough.md §9); Debian's 4.9.0 has no such call.
    super::route::real_share(super::route::also_real!(nc_plugin_path_set(dirs): (*mut NCPluginList)))
}

//! Variables: definition, inquiry, storage settings, filters, per-variable chunk cache.

use super::att::{values_from_mem, values_to_mem};
use super::consts::nc_type;
use super::{cstr, put, put_name, put_slice, with};
use crate::error::{Kind, Result, err};
use crate::model::{Endian, Var};
use crate::nc::magic::FileFormat;
use crate::nc::modes::{EndianRequest, QuantizeMode, Storage, VarRef};
use crate::nc::names;
use nczarr_macros::export;
use std::ffi::{c_char, c_int, c_void};

#[export(trace(ncid, name, xtype, ndims))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var(
    ncid: c_int,
    name: *const c_char,
    xtype: nc_type,
    ndims: c_int,
    dimidsp: *const c_int,
    varidp: *mut c_int,
) -> c_int {
    // SAFETY: NUL-terminated name or NULL (→ NC_EINVAL).
    let name = unsafe { cstr(name) }?;
    let dims = if ndims > 0 && !dimidsp.is_null() {
        // SAFETY: `dimidsp` holds `ndims` ids (netCDF contract).
        Some(unsafe { std::slice::from_raw_parts(dimidsp, ndims as usize) })
    } else {
        None
    };
    let varid = with(ncid, |ds, gid| ds.def_var_codes(gid, name, xtype, dims, ndims))?;
    // SAFETY: optional out-pointer.
    unsafe { put(varidp, varid as c_int) };
    Ok(())
}

fn var_info<R>(ncid: c_int, varid: c_int, f: impl FnOnce(&crate::dataset::Dataset, &Var) -> R) -> Result<R> {
    with(ncid, |ds, gid| {
        let var = ds.var(gid, VarRef::from_c(varid))?;
        Ok(f(ds, var))
    })
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var(
    ncid: c_int,
    varid: c_int,
    name: *mut c_char,
    xtypep: *mut nc_type,
    ndimsp: *mut c_int,
    dimidsp: *mut c_int,
    nattsp: *mut c_int,
) -> c_int {
    if varid == -1 && !nattsp.is_null() {
        // netcdf-c answers NC_GLOBAL with the group's attribute count alone (and only
        // when that is asked for); nc_inq_varnatts relies on it.
        let n = with(ncid, |ds, gid| Ok(ds.att_count(gid, VarRef::Global)? as c_int))?;
        // SAFETY: checked non-NULL above.
        unsafe { put(nattsp, n) };
        return Ok(());
    }
    let (n, t, dims, natts) = var_info(ncid, varid, |_, v| {
        (v.name.clone(), v.nctype.id(), v.dimids.iter().map(|&d| d as c_int).collect::<Vec<_>>(), v.atts.len() as c_int)
    })?;
    // SAFETY: optional out-pointers; `dimidsp` holds ndims ids.
    unsafe {
        put_name(name, &n);
        put(xtypep, t);
        put(ndimsp, dims.len() as c_int);
        put_slice(dimidsp, &dims);
        put(nattsp, natts);
    }
    Ok(())
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_varname(ncid: c_int, varid: c_int, name: *mut c_char) -> c_int {
    let n = var_info(ncid, varid, |_, v| v.name.clone())?;
    // SAFETY: optional out-pointer.
    unsafe { put_name(name, &n) };
    Ok(())
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_vartype(ncid: c_int, varid: c_int, xtypep: *mut nc_type) -> c_int {
    let t = var_info(ncid, varid, |_, v| v.nctype.id())?;
    // SAFETY: optional out-pointer.
    unsafe { put(xtypep, t) };
    Ok(())
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_varndims(ncid: c_int, varid: c_int, ndimsp: *mut c_int) -> c_int {
    let n = var_info(ncid, varid, |_, v| v.dimids.len() as c_int)?;
    // SAFETY: optional out-pointer.
    unsafe { put(ndimsp, n) };
    Ok(())
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_vardimid(ncid: c_int, varid: c_int, dimidsp: *mut c_int) -> c_int {
    let dims = var_info(ncid, varid, |_, v| v.dimids.iter().map(|&d| d as c_int).collect::<Vec<_>>())?;
    // SAFETY: optional out-pointer holding ndims ids.
    unsafe { put_slice(dimidsp, &dims) };
    Ok(())
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_varnatts(ncid: c_int, varid: c_int, nattsp: *mut c_int) -> c_int {
    // NC_GLOBAL: the group's attribute count (nc_inq_natts).
    let n = if varid == -1 {
        with(ncid, |ds, gid| Ok(ds.att_count(gid, VarRef::Global)? as c_int))?
    } else {
        var_info(ncid, varid, |_, v| v.atts.len() as c_int)?
    };
    // SAFETY: optional out-pointer.
    unsafe { put(nattsp, n) };
    Ok(())
}

#[export(trace(ncid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_varid(ncid: c_int, name: *const c_char, varidp: *mut c_int) -> c_int {
    // SAFETY: as above.
    let raw = unsafe { cstr(name) }?;
    if raw.len() > names::MAX_NAME {
        return err(Kind::MaxName, "name too long");
    }
    let id = with(ncid, |ds, gid| ds.var_id(gid, &names::lookup(raw)?))?;
    // SAFETY: optional out-pointer.
    unsafe { put(varidp, id as c_int) };
    Ok(())
}

#[export(trace(ncid, varid, name))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_rename_var(ncid: c_int, varid: c_int, name: *const c_char) -> c_int {
    // SAFETY: as above.
    let name = unsafe { cstr(name) }?;
    with(ncid, |ds, gid| ds.rename_var(gid, VarRef::from_c(varid), name))
}

// ---- fill ---------------------------------------------------------------------------------

#[export(trace(ncid, varid, no_fill, fill_value))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_fill(ncid: c_int, varid: c_int, no_fill: c_int, fill_value: *const c_void) -> c_int {
    with(ncid, |ds, gid| {
        // A missing variable is reported by def_var_fill, after its permission check.
        let value = match ds.var(gid, VarRef::from_c(varid)) {
            Ok(var) if no_fill == 0 && !fill_value.is_null() => {
                // SAFETY: `fill_value` points to one element of the variable's type.
                Some(unsafe { values_from_mem(var.nctype, fill_value, 1) }?)
            }
            _ => None,
        };
        ds.def_var_fill(gid, VarRef::from_c(varid), no_fill != 0, value)
    })
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_fill(ncid: c_int, varid: c_int, no_fill: *mut c_int, fill_valuep: *mut c_void) -> c_int {
    let (off, fill) = with(ncid, |ds, gid| ds.var_fill(gid, VarRef::from_c(varid)))?;
    // SAFETY: optional out-pointers; `fill_valuep` holds one element of the var's type.
    unsafe {
        put(no_fill, off as c_int);
        if !off && !fill_valuep.is_null() {
            values_to_mem(&fill, fill_valuep)?;
        }
    }
    Ok(())
}

pub(super) fn settings_var<R>(ncid: c_int, varid: c_int, f: impl FnOnce(&Var) -> R) -> Result<R> {
    with(ncid, |ds, gid| {
        if varid == -1 {
            return err(Kind::NotVar, "NC_GLOBAL");
        }
        Ok(f(ds.var(gid, VarRef::from_c(varid))?))
    })
}

// ---- chunking, endianness, quantize ---------------------------------------------------------

#[export(trace(ncid, varid, storage))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_chunking(ncid: c_int, varid: c_int, storage: c_int, chunksizesp: *const usize) -> c_int {
    with(ncid, |ds, gid| {
        // A missing variable is reported by def_var_chunking, after its permission check.
        let rank = ds.rank_or_zero(gid, VarRef::from_c(varid));
        let sizes = if chunksizesp.is_null() || rank == 0 {
            None
        } else {
            // SAFETY: `chunksizesp` holds one size per dimension.
            Some(unsafe { std::slice::from_raw_parts(chunksizesp, rank) }.iter().map(|&c| c as u64).collect())
        };
        ds.def_var_chunking(gid, VarRef::from_c(varid), Storage::from_c(storage), sizes)
    })
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_chunking(ncid: c_int, varid: c_int, storagep: *mut c_int, chunksizesp: *mut usize) -> c_int {
    let chunks: Vec<usize> = settings_var(ncid, varid, |v| v.chunks.iter().map(|&c| c as usize).collect())?;
    // A netCDF file read lazily: its own storage, as netcdf-c answers (no chunk sizes).
    let scanned = with(ncid, |ds, gid| Ok(ds.scanned_storage(gid, varid as usize)))?;
    if let Some(storage) = scanned {
        // SAFETY: optional out-pointer.
        unsafe { put(storagep, if storage == Storage::Compact { super::consts::NC_COMPACT } else { super::consts::NC_CONTIGUOUS }) };
        return Ok(());
    }
    // SAFETY: optional out-pointers; one size per dimension.
    unsafe {
        put(storagep, 0);
        put_slice(chunksizesp, &chunks);
    }
    Ok(())
}

/// Our extension (`netcdf_nczarr.h`): shard shape of a Zarr v3 variable, each entry a
/// multiple of its chunk size; NULL = unsharded.
#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_def_var_shards(ncid: c_int, varid: c_int, shardp: *const usize) -> c_int {
    with(ncid, |ds, gid| {
        let rank = if varid >= 0 { ds.var(gid, VarRef::from_c(varid))?.rank() } else { 0 };
        let shard = if shardp.is_null() {
            None
        } else {
            // SAFETY: `shardp` holds one size per dimension.
            Some(unsafe { std::slice::from_raw_parts(shardp, rank) }.iter().map(|&c| c as u64).collect())
        };
        ds.def_var_shards(gid, VarRef::from_c(varid), shard)
    })
}

/// Our extension (`netcdf_nczarr.h`): whether a variable is sharded, and its shard shape.
#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_inq_var_shards(ncid: c_int, varid: c_int, shardedp: *mut c_int, shardp: *mut usize) -> c_int {
    let shard: Option<Vec<usize>> = settings_var(ncid, varid, |v| {
        v.stored.v3.as_ref().and_then(|x| x.shard.as_ref()).map(|s| s.iter().map(|&c| c as usize).collect())
    })?;
    // SAFETY: optional out-pointers; one size per dimension.
    unsafe {
        put(shardedp, shard.is_some() as c_int);
        if let Some(s) = &shard {
            put_slice(shardp, s);
        }
    }
    Ok(())
}

#[export(trace(ncid, varid, storage))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_chunking_ints(ncid: c_int, varid: c_int, storage: c_int, chunksizesp: *const c_int) -> c_int {
    with(ncid, |ds, gid| {
        let rank = ds.rank_or_zero(gid, VarRef::from_c(varid));
        let sizes = if chunksizesp.is_null() || rank == 0 {
            None
        } else {
            // SAFETY: one int per dimension.
            let raw = unsafe { std::slice::from_raw_parts(chunksizesp, rank) };
            if raw.iter().any(|&c| c < 0) {
                return err(Kind::BadChunk, "negative chunk size");
            }
            Some(raw.iter().map(|&c| c as u64).collect())
        };
        ds.def_var_chunking(gid, VarRef::from_c(varid), Storage::from_c(storage), sizes)
    })
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_chunking_ints(ncid: c_int, varid: c_int, storagep: *mut c_int, chunksizesp: *mut c_int) -> c_int {
    let chunks: Vec<u64> = settings_var(ncid, varid, |v| v.chunks.clone())?;
    if chunks.iter().any(|&c| c > i32::MAX as u64) {
        return err(Kind::Range, "chunk size does not fit an int");
    }
    let ints: Vec<c_int> = chunks.iter().map(|&c| c as c_int).collect();
    // SAFETY: optional out-pointers.
    unsafe {
        put(storagep, 0);
        put_slice(chunksizesp, &ints);
    }
    Ok(())
}

#[export(trace(ncid, varid, endian))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_endian(ncid: c_int, varid: c_int, endian: c_int) -> c_int {
    with(ncid, |ds, gid| ds.def_var_endian(gid, VarRef::from_c(varid), EndianRequest::from_c(endian)))
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_endian(ncid: c_int, varid: c_int, endianp: *mut c_int) -> c_int {
    // A netCDF-3 file read lazily: no byte order to ask about, as in netcdf-c.
    if with(ncid, |ds, _| Ok(ds.scanned_from().is_some_and(|f| f != FileFormat::Hdf5)))? {
        return err(Kind::NotNc4, "a netCDF-3 file has no per-variable byte order");
    }
    // Strings and chars have no byte order: netcdf-c reports NC_ENDIAN_NATIVE for them.
    let e = settings_var(ncid, varid, |v| match (v.nctype.is_numeric(), v.endian) {
        (false, _) => 0,
        (true, Endian::Big) => 2,
        (true, Endian::Little) => 1,
    })?;
    // SAFETY: optional out-pointer.
    unsafe { put(endianp, e) };
    Ok(())
}

#[export(trace(ncid, varid, quantize_mode, nsd))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_def_var_quantize(ncid: c_int, varid: c_int, quantize_mode: c_int, nsd: c_int) -> c_int {
    with(ncid, |ds, gid| ds.def_var_quantize(gid, VarRef::from_c(varid), QuantizeMode::from_c(quantize_mode), nsd))
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_inq_var_quantize(ncid: c_int, varid: c_int, quantize_modep: *mut c_int, nsdp: *mut c_int) -> c_int {
    with(ncid, |_, _| Ok(()))?;
    if varid == -1 {
        return err(Kind::Global, "NC_GLOBAL");
    }
    let (m, n) = settings_var(ncid, varid, |v| v.quantize)?;
    // SAFETY: optional out-pointers.
    unsafe {
        put(quantize_modep, m);
        put(nsdp, n);
    }
    Ok(())
}

// ---- chunk caches -------------------------------------------------------------------------

#[export(trace(ncid, varid, size, nelems, preemption))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_var_chunk_cache(ncid: c_int, varid: c_int, size: usize, nelems: usize, preemption: f32) -> c_int {
    with(ncid, |ds, gid| ds.set_var_chunk_cache(gid, VarRef::from_c(varid), Some(crate::model::ChunkCache { size, nelems, preemption })))
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_var_chunk_cache(
    ncid: c_int,
    varid: c_int,
    sizep: *mut usize,
    nelemsp: *mut usize,
    preemptionp: *mut f32,
) -> c_int {
    let c = settings_var(ncid, varid, |v| v.cache)?;
    // SAFETY: optional out-pointers.
    unsafe {
        put(sizep, c.size);
        put(nelemsp, c.nelems);
        put(preemptionp, c.preemption);
    }
    Ok(())
}

#[export(trace(ncid, varid, size, nelems, preemption))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_set_var_chunk_cache_ints(ncid: c_int, varid: c_int, size: c_int, nelems: c_int, preemption: c_int) -> c_int {
    with(ncid, |ds, gid| {
        let bytes = if size < 0 { crate::dataset::cache_defaults().size } else { size as usize * 1_048_576 };
        let cache = ((0..=100).contains(&preemption) && nelems >= 0).then(|| crate::model::ChunkCache {
            size: bytes,
            nelems: nelems as usize,
            preemption: preemption as f32 / 100.0,
        });
        ds.set_var_chunk_cache(gid, VarRef::from_c(varid), cache)
    })
}

#[export(trace(ncid, varid))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_get_var_chunk_cache_ints(
    ncid: c_int,
    varid: c_int,
    sizep: *mut c_int,
    nelemsp: *mut c_int,
    preemptionp: *mut c_int,
) -> c_int {
    let c = settings_var(ncid, varid, |v| v.cache)?;
    // SAFETY: optional out-pointers.
    unsafe {
        put(sizep, (c.size / 1_048_576) as c_int);
        put(nelemsp, c.nelems as c_int);
        put(preemptionp, (c.preemption * 100.0).round() as c_int);
    }
    Ok(())
}

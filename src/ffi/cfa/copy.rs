//! A master copied into our in-memory dataset: its groups, dimensions, attributes and ordinary
//! variables as they are, each aggregated variable defined over its aggregated dimensions (its
//! fragments listed for `zmap::cfa`), the CFA bookkeeping left out.

use super::calls::{child_groups, cname, names, ok, text_att, unlimited_dims, var_dimids};
use super::fragments::{aggregated_terms, fragments_04, fragments_05, fragments_cf};
use crate::error::{Kind, Result, err};
use crate::ffi::consts::{NC_CHUNKED, NC_GLOBAL, NC_MAX_NAME, NC_NOERR, nc_type};
use crate::nc::types::NcType;
use crate::zmap::cfa::Aggregated;
use std::ffi::{CStr, c_char, c_int, c_void};

/// Attributes of the master that are CFA bookkeeping, never copied.
fn bookkeeping(name: &str) -> bool {
    name == "cf_role" || name.starts_with("cfa_") || name == "aggregated_dimensions" || name == "aggregated_data"
}

/// Copies the master's root group into `ours` and returns the aggregated variables with their
/// fill values.
pub(super) fn copy_master(real: c_int, ours: c_int, master: &str, version: &str) -> Result<Vec<(Aggregated, Vec<u8>)>> {
    let mut aggregated = Vec::new();
    copy_group(real, ours, "", master, version, &mut aggregated)?;
    Ok(aggregated)
}

/// Copies group `real` of the master (at `path`, "" for the root, else `g/h/`) into group
/// `ours`, its sub-groups too (CFA-0.5's partition groups are bookkeeping), and adds its
/// aggregated variables to `aggregated`.
fn copy_group(
    real: c_int,
    ours: c_int,
    path: &str,
    master: &str,
    version: &str,
    aggregated: &mut Vec<(Aggregated, Vec<u8>)>,
) -> Result<()> {
    let (mut ndims, mut nvars, mut natts, mut unlim) = (0, 0, 0, -1);
    // SAFETY: valid out-pointers.
    ok(unsafe { crate::ffi::file::nc_inq(real, &mut ndims, &mut nvars, &mut natts, &mut unlim) }, "master")?;
    let unlimited = unlimited_dims(real)?;
    // CF aggregation: the fragment array variables (`map`, `uris`, ...) and the dimensions
    // only they use are bookkeeping too.
    let mut hidden_vars = std::collections::HashSet::new();
    let mut aggregated_dims = std::collections::HashSet::new();
    for v in 0..nvars {
        if let Some(data) = text_att(real, v, c"aggregated_data") {
            hidden_vars.extend(aggregated_terms(&data).into_iter().map(|(_, var)| var));
        }
        for att in [c"aggregated_dimensions", c"cfa_dimensions"] {
            if let Some(dims) = text_att(real, v, att) {
                aggregated_dims.extend(dims.split_whitespace().map(str::to_string));
            }
        }
    }
    let var_name = |v: c_int| -> Result<String> {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        // SAFETY: NC_MAX_NAME+1 bytes.
        ok(unsafe { crate::ffi::var::nc_inq_varname(real, v, buf.as_mut_ptr()) }, "variable name")?;
        // SAFETY: NUL-terminated by the library.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    };
    let mut hidden_ids = std::collections::HashSet::new();
    let mut used = std::collections::HashSet::new();
    for v in 0..nvars {
        let dims = var_dimids(real, v)?;
        if hidden_vars.contains(&var_name(v)?) {
            hidden_ids.insert(v);
        } else {
            used.extend(dims);
        }
    }
    let mut dimids = vec![0 as c_int; ndims.max(0) as usize];
    // SAFETY: `dimids` holds the root group's dimensions.
    ok(unsafe { crate::ffi::group::nc_inq_dimids(real, &mut ndims, dimids.as_mut_ptr(), 0) }, "dimensions")?;
    let hidden_var_dims: std::collections::HashSet<c_int> =
        hidden_ids.iter().map(|v| var_dimids(real, *v)).collect::<Result<Vec<_>>>()?.into_iter().flatten().collect();
    for d in &dimids {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        let mut len = 0usize;
        // SAFETY: NC_MAX_NAME+1 bytes; valid out-pointer.
        ok(unsafe { crate::ffi::group::nc_inq_dim(real, *d, buf.as_mut_ptr(), &mut len) }, "dimension")?;
        // SAFETY: NUL-terminated by the library.
        let dname = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        if hidden_var_dims.contains(d) && !used.contains(d) && !aggregated_dims.contains(&dname) {
            continue;
        }
        let is_unlimited = unlimited.contains(d);
        let mut id = 0;
        // SAFETY: NUL-terminated name from the library.
        ok(unsafe { crate::ffi::group::nc_def_dim(ours, buf.as_ptr(), if is_unlimited { 0 } else { len }, &mut id) }, "define dimension")?;
    }
    for a in names(real, NC_GLOBAL, natts)? {
        let conventions = (path.is_empty() && a.as_bytes() == b"Conventions").then(|| text_att(real, NC_GLOBAL, c"Conventions")).flatten();
        if let Some(conventions) = conventions.filter(|c| c.contains("CFA-")) {
            // Only the CFA word goes: the dataset is no longer CFA-netCDF.
            let rest: Vec<&str> = conventions.split(' ').filter(|w| !w.starts_with("CFA-") && !w.is_empty()).collect();
            if !rest.is_empty() {
                let text = rest.join(" ");
                ok(
                    // SAFETY: `text` holds `len` bytes.
                    unsafe { crate::ffi::att::nc_put_att_text(ours, NC_GLOBAL, a.as_ptr(), text.len(), text.as_ptr() as *const c_char) },
                    "Conventions",
                )?;
            }
            continue;
        }
        ok(crate::ffi::cross::copy_att(real, NC_GLOBAL, a.as_ptr(), ours, NC_GLOBAL), "global attribute")?;
    }
    let mut partition_groups = std::collections::HashSet::new();
    for v in 0..nvars {
        if hidden_ids.contains(&v) {
            continue;
        }
        if let Some(g) = text_att(real, v, c"cfa_group") {
            partition_groups.insert(g);
        }
        let is_aggregated =
            text_att(real, v, c"cf_role").as_deref() == Some("cfa_variable") || text_att(real, v, c"aggregated_dimensions").is_some();
        if !is_aggregated {
            ok(crate::ffi::cross::copy_var(real, v, ours), "variable")?;
            continue;
        }
        aggregated.push(define_aggregated(real, v, ours, master, version, path)?);
    }
    for g in child_groups(real)? {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        // SAFETY: NC_MAX_NAME+1 bytes.
        ok(unsafe { crate::ffi::group::nc_inq_grpname(g, buf.as_mut_ptr()) }, "group name")?;
        // SAFETY: NUL-terminated by the library.
        let gname = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        if partition_groups.contains(&gname) {
            continue;
        }
        let mut child = 0;
        // SAFETY: our dataset in define mode (or it enters it); NUL-terminated name.
        unsafe {
            let st = crate::ffi::file::nc_redef(ours);
            if st != NC_NOERR && st != crate::ffi::consts::NC_EINDEFINE {
                ok(st, "redef")?;
            }
            ok(crate::ffi::group::nc_def_grp(ours, buf.as_ptr(), &mut child), "group")?;
        }
        copy_group(g, child, &format!("{path}{gname}/"), master, version, aggregated)?;
    }
    Ok(())
}

/// Defines the aggregated variable `v` of the master in `ours`.
fn define_aggregated(real: c_int, v: c_int, ours: c_int, master: &str, version: &str, path: &str) -> Result<(Aggregated, Vec<u8>)> {
    let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
    let (mut xtype, mut natts): (nc_type, c_int) = (0, 0);
    // SAFETY: NC_MAX_NAME+1 bytes; valid out-pointers.
    unsafe {
        ok(crate::ffi::var::nc_inq_varname(real, v, buf.as_mut_ptr()), "variable name")?;
        ok(crate::ffi::var::nc_inq_vartype(real, v, &mut xtype), "variable type")?;
        ok(crate::ffi::var::nc_inq_varnatts(real, v, &mut natts), "variable attributes")?;
    }
    // SAFETY: NUL-terminated by the library.
    let vname = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
    let nctype = NcType::from_id(xtype)?;
    if nctype == NcType::String || nctype == NcType::Char {
        return err(Kind::BadType, format!("{vname}: aggregated {nctype:?} variables are not supported"));
    }
    let dims_text = text_att(real, v, c"cfa_dimensions").or_else(|| text_att(real, v, c"aggregated_dimensions")).unwrap_or_default();
    let dim_names: Vec<&str> = dims_text.split_whitespace().collect();
    let mut dimids = Vec::with_capacity(dim_names.len());
    let mut shape = Vec::with_capacity(dim_names.len());
    for d in &dim_names {
        let (mut id, mut len) = (0, 0usize);
        let dn = cname(d)?;
        // SAFETY: NUL-terminated name; valid out-pointers.
        unsafe {
            ok(crate::ffi::group::nc_inq_dimid(ours, dn.as_ptr(), &mut id), "aggregated dimension")?;
            let mut real_id = 0;
            ok(crate::ffi::group::nc_inq_dimid(real, dn.as_ptr(), &mut real_id), "aggregated dimension")?;
            ok(crate::ffi::group::nc_inq_dimlen(real, real_id, &mut len), "aggregated dimension length")?;
        }
        dimids.push(id);
        shape.push(len);
    }
    let fragments = if let Some(json) = text_att(real, v, c"cfa_array") {
        fragments_04(master, &json, dim_names.len())?
    } else if let Some(group) = text_att(real, v, c"cfa_group") {
        fragments_05(master, real, &group, dim_names.len())?
    } else if let Some(data) = text_att(real, v, c"aggregated_data") {
        fragments_cf(master, real, &data, &shape, nctype)?
    } else {
        return err(Kind::Invalid, format!("{vname}: {version} variable without cfa_array or cfa_group"));
    };
    // Every fragment inside the aggregated array (a hostile or broken master is refused), and
    // in the master's own place unless the user allowed more (README "Security").
    for f in &fragments {
        if f.constant.is_none() {
            crate::url::trust::check_target(master, &f.file, &format!("{vname}: fragment"))?;
        }
        let inside = f.start.len() == shape.len()
            && f.shape.len() == shape.len()
            && (0..shape.len()).all(|d| f.shape[d] > 0 && f.start[d].checked_add(f.shape[d]).is_some_and(|end| end <= shape[d]));
        if !inside {
            return err(
                Kind::Invalid,
                format!("{vname}: fragment {} at {:?} of shape {:?} lies outside {shape:?}", f.file, f.start, f.shape),
            );
        }
    }
    let chunks = Aggregated::chunk_shape(&shape, &fragments);
    let mut id = 0;
    // SAFETY: define mode calls on our dataset; arrays of `rank` entries.
    unsafe {
        let st = crate::ffi::file::nc_redef(ours);
        if st != NC_NOERR && st != crate::ffi::consts::NC_EINDEFINE {
            ok(st, "redef")?;
        }
        ok(crate::ffi::var::nc_def_var(ours, buf.as_ptr(), xtype, dimids.len() as c_int, dimids.as_ptr(), &mut id), "define aggregated")?;
        if !dimids.is_empty() {
            ok(crate::ffi::var::nc_def_var_chunking(ours, id, NC_CHUNKED, chunks.as_ptr()), "fragment chunks")?;
        }
    }
    for a in names(real, v, natts)? {
        if bookkeeping(&a.to_string_lossy()) {
            continue;
        }
        ok(crate::ffi::cross::copy_att(real, v, a.as_ptr(), ours, id), "attribute")?;
    }
    let mut fill = vec![0u8; nctype.size()];
    let mut nofill = 0;
    // SAFETY: `fill` holds one element of the variable's type.
    ok(unsafe { crate::ffi::var::nc_inq_var_fill(ours, id, &mut nofill, fill.as_mut_ptr() as *mut c_void) }, "fill value")?;
    // SAFETY: a plain ncid call.
    let st = unsafe { crate::ffi::file::nc_enddef(ours) };
    if st != NC_NOERR && st != crate::ffi::consts::NC_ENOTINDEFINE {
        ok(st, "enddef")?;
    }
    crate::trace::emit(1, &format!("cfa: {vname}{shape:?} in {} fragments, chunks {chunks:?}", fragments.len()));
    Ok((Aggregated { key: format!("{path}{vname}"), shape, chunks, xtype: nctype, fragments }, fill))
}

//! Writing an aggregated dataset's master file from our logical dataset, after its fragments
//! are stored: the dimensions, attributes and ordinary variables (with their data) of every
//! group, and each aggregated variable as a scalar variable with its attributes and the
//! bookkeeping of the chosen convention:
//! * CF aggregation (CF-1.12): `aggregated_dimensions`, `aggregated_data` naming a `map` of
//!   fragment sizes (one row per dimension), the fragments' `uris` (empty: never written, read as
//!   missing data) and their `identifiers` (the variable's name in each fragment);
//! * CFA-0.5: a group `cfa_<var>` holding the partition matrix (`pmshape`, `pmdimensions`,
//!   `index`, `location` as half-open ranges, `ncvar`, `file`, `format`, `shape`);
//! * CFA-0.4: the partition matrix as the JSON attribute `cfa_array` (inclusive ranges).
//!
//! A local master is written beside its final name and renamed over it once complete.

use super::calls::{child_groups, cname, names, ok, text_att, unlimited_dims, var_dimids, var_shape};
use super::fragment_files::Writer;
use crate::aggregate::place::Convention;
use crate::error::{Error, Kind, Result};
use crate::zmap::ArrayInfo;
use crate::zmap::cfa::write::is_aggregated;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int};

use super::super::consts::{NC_ENOTINDEFINE, NC_GLOBAL, NC_INT, NC_INT64, NC_MAX_NAME, NC_NOERR, NC_STRING, nc_type};

/// A variable whose data is copied once the master leaves define mode.
struct DataCopy {
    src: (c_int, c_int),
    dst: (c_int, c_int),
    xtype: nc_type,
    shape: Vec<usize>,
}

/// Bookkeeping data written once the master leaves define mode.
enum Fill {
    Ints { ncid: c_int, varid: c_int, values: Vec<i64>, wide: bool },
    Strings { ncid: c_int, varid: c_int, values: Vec<String> },
}

pub(super) fn write(ours: c_int, writer: &Writer) -> Result<()> {
    let place = writer.files.place();
    // A local master is written beside its name and renamed over it when complete.
    let (target, final_path) = match &place.local_dir {
        Some(_) => (format!("{}.tmp-{}", place.master, std::process::id()), Some(place.master.clone())),
        None => (place.master.clone(), None),
    };
    let c = cname(&target)?;
    let mut m = 0;
    let class = crate::url::classify::classify(&target, true);
    // SAFETY: NUL-terminated name; valid out-pointer.
    ok(unsafe { super::super::file::create(c.as_ptr(), Some(&class), writer.master_mode, &mut m) }, "creating the master")?;
    let filled = fill(ours, m, writer);
    if let Err(e) = filled {
        super::super::file::abort(m);
        if final_path.is_some() {
            let _ = std::fs::remove_file(&target);
        }
        return Err(e);
    }
    ok(super::super::file::close(m), "storing the master")?;
    if let Some(path) = final_path {
        std::fs::rename(&target, &path).map_err(|e| Error::new(Kind::Io, format!("{path}: {e}")))?;
    }
    Ok(())
}

fn fill(ours: c_int, m: c_int, writer: &Writer) -> Result<()> {
    let arrays: HashMap<String, ArrayInfo> = writer
        .files
        .arrays()
        .into_iter()
        .filter(|a| is_aggregated(a) && a.dims.iter().all(|d| d.1 > 0))
        .map(|a| (a.name.clone(), a))
        .collect();
    let mut copies = Vec::new();
    let mut fills = Vec::new();
    define_group(ours, m, true, &arrays, writer, &mut copies, &mut fills)?;
    set_conventions(ours, m, writer.convention)?;
    // SAFETY: a plain ncid call.
    let st = unsafe { super::super::file::nc_enddef(m) };
    if st != NC_NOERR && st != NC_ENOTINDEFINE {
        ok(st, "master enddef")?;
    }
    for c in &copies {
        ok(super::super::cross::copy_var_data(c.src.0, c.src.1, c.dst.0, c.dst.1, c.xtype, &c.shape), "copying a variable to the master")?;
    }
    for f in fills {
        match f {
            Fill::Ints { ncid, varid, values, wide: true } => {
                // SAFETY: the values vector holds one value per element of the variable.
                ok(unsafe { super::super::data_matrix::nc_put_var_longlong(ncid, varid, values.as_ptr()) }, "bookkeeping")?;
            }
            Fill::Ints { ncid, varid, values, wide: false } => {
                let narrow: Vec<c_int> = values.iter().map(|&v| v as c_int).collect();
                // SAFETY: the values vector holds one value per element of the variable.
                ok(unsafe { super::super::data_matrix::nc_put_var_int(ncid, varid, narrow.as_ptr()) }, "bookkeeping")?;
            }
            Fill::Strings { ncid, varid, values } => {
                let owned: Vec<CString> = values.iter().map(|s| cname(s)).collect::<Result<_>>()?;
                let mut ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
                // SAFETY: the values vector holds one value per element of the variable.
                ok(unsafe { super::super::data_matrix::nc_put_var_string(ncid, varid, ptrs.as_mut_ptr()) }, "bookkeeping")?;
            }
        }
    }
    Ok(())
}

fn name_of(buf: &[c_char]) -> String {
    // SAFETY: NUL-terminated by the library (buffers of NC_MAX_NAME+1).
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

/// Defines group `src` of ours in `dst` (dimensions, attributes, variables, subgroups).
#[allow(clippy::too_many_arguments)]
fn define_group(
    src: c_int,
    dst: c_int,
    root: bool,
    arrays: &HashMap<String, ArrayInfo>,
    writer: &Writer,
    copies: &mut Vec<DataCopy>,
    fills: &mut Vec<Fill>,
) -> Result<()> {
    let (mut ndims, mut nvars, mut natts, mut unlim) = (0, 0, 0, -1);
    // SAFETY: valid out-pointers.
    ok(unsafe { super::super::file::nc_inq(src, &mut ndims, &mut nvars, &mut natts, &mut unlim) }, "group")?;
    let mut dimids = vec![0 as c_int; ndims.max(0) as usize];
    // SAFETY: `dimids` holds the group's own dimensions.
    ok(unsafe { super::super::group::nc_inq_dimids(src, &mut ndims, dimids.as_mut_ptr(), 0) }, "dimensions")?;
    let unlimited = unlimited_dims(src)?;
    for d in &dimids {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        let mut len = 0usize;
        // SAFETY: NC_MAX_NAME+1 bytes; valid out-pointers.
        ok(unsafe { super::super::group::nc_inq_dim(src, *d, buf.as_mut_ptr(), &mut len) }, "dimension")?;
        let mut id = 0;
        let len = if unlimited.contains(d) { 0 } else { len };
        // SAFETY: NUL-terminated name.
        ok(unsafe { super::super::group::nc_def_dim(dst, buf.as_ptr(), len, &mut id) }, "master dimension")?;
    }
    for a in names(src, NC_GLOBAL, natts)? {
        if root && a.as_bytes() == b"Conventions" {
            continue;
        }
        ok(super::super::cross::copy_att(src, NC_GLOBAL, a.as_ptr(), dst, NC_GLOBAL), "global attribute")?;
    }
    for v in 0..nvars {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        let (mut xtype, mut vatts): (nc_type, c_int) = (0, 0);
        // SAFETY: NC_MAX_NAME+1 bytes; valid out-pointers.
        unsafe {
            ok(super::super::var::nc_inq_varname(src, v, buf.as_mut_ptr()), "variable name")?;
            ok(super::super::var::nc_inq_vartype(src, v, &mut xtype), "variable type")?;
            ok(super::super::var::nc_inq_varnatts(src, v, &mut vatts), "variable attributes")?;
        }
        let vname = name_of(&buf);
        let aggregated = if root { arrays.get(&vname) } else { None };
        let dims = if aggregated.is_some() { Vec::new() } else { master_dims(src, v, dst)? };
        let mut id = 0;
        ok(
            // SAFETY: NUL-terminated name; `dims` holds the rank's ids.
            unsafe { super::super::var::nc_def_var(dst, buf.as_ptr(), xtype, dims.len() as c_int, dims.as_ptr(), &mut id) },
            "master variable",
        )?;
        for a in names(src, v, vatts)? {
            ok(super::super::cross::copy_att(src, v, a.as_ptr(), dst, id), "variable attribute")?;
        }
        match aggregated {
            Some(array) => bookkeeping(dst, id, array, writer, fills)?,
            None => copies.push(DataCopy { src: (src, v), dst: (dst, id), xtype, shape: var_shape(src, v)? }),
        }
    }
    for g in child_groups(src)? {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        // SAFETY: NC_MAX_NAME+1 bytes.
        ok(unsafe { super::super::group::nc_inq_grpname(g, buf.as_mut_ptr()) }, "group name")?;
        let mut child = 0;
        // SAFETY: NUL-terminated name; valid out-pointer.
        ok(unsafe { super::super::group::nc_def_grp(dst, buf.as_ptr(), &mut child) }, "master group")?;
        define_group(g, child, false, arrays, writer, copies, fills)?;
    }
    Ok(())
}

/// A variable's dimension ids in the master (the same names, found from `dst` up).
fn master_dims(src: c_int, v: c_int, dst: c_int) -> Result<Vec<c_int>> {
    var_dimids(src, v)?
        .into_iter()
        .map(|d| {
            let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
            let mut id = 0;
            // SAFETY: NC_MAX_NAME+1 bytes; NUL-terminated name; valid out-pointer.
            unsafe {
                ok(super::super::group::nc_inq_dimname(src, d, buf.as_mut_ptr()), "dimension name")?;
                ok(super::super::group::nc_inq_dimid(dst, buf.as_ptr(), &mut id), "master dimension")?;
            }
            Ok(id)
        })
        .collect()
}

fn put_text(ncid: c_int, varid: c_int, name: &CStr, text: &str) -> Result<()> {
    // SAFETY: `text` holds `len` bytes.
    ok(
        unsafe { super::super::att::nc_put_att_text(ncid, varid, name.as_ptr(), text.len(), text.as_ptr() as *const c_char) },
        "bookkeeping attribute",
    )
}

/// A dimension named `name` of `len` in `ncid`: an existing one of that length, else a new
/// one (suffixed with its length when the name is taken by another length).
fn dim(ncid: c_int, name: &str, len: usize) -> Result<c_int> {
    // Only the group's own dimensions count (a group's may shadow its parent's).
    let mut n = 0;
    // SAFETY: a count first, then the ids into a buffer of that size.
    ok(unsafe { super::super::group::nc_inq_dimids(ncid, &mut n, std::ptr::null_mut(), 0) }, "dimensions")?;
    let mut own = vec![0 as c_int; n.max(0) as usize];
    // SAFETY: as above.
    ok(unsafe { super::super::group::nc_inq_dimids(ncid, &mut n, own.as_mut_ptr(), 0) }, "dimensions")?;
    for candidate in [name.to_string(), format!("{name}_{len}")] {
        let c = cname(&candidate)?;
        let mut id = 0;
        // SAFETY: NUL-terminated name; valid out-pointer.
        if unsafe { super::super::group::nc_inq_dimid(ncid, c.as_ptr(), &mut id) } == NC_NOERR && own.contains(&id) {
            let mut have = 0usize;
            // SAFETY: valid out-pointer.
            ok(unsafe { super::super::group::nc_inq_dimlen(ncid, id, &mut have) }, "dimension length")?;
            if have == len {
                return Ok(id);
            }
            continue;
        }
        // SAFETY: as above.
        ok(unsafe { super::super::group::nc_def_dim(ncid, c.as_ptr(), len, &mut id) }, "bookkeeping dimension")?;
        return Ok(id);
    }
    Err(Error::new(Kind::NameInUse, format!("{name}: no free dimension name")))
}

fn var(ncid: c_int, name: &str, xtype: nc_type, dims: &[c_int]) -> Result<c_int> {
    let c = cname(name)?;
    let mut id = 0;
    ok(
        // SAFETY: NUL-terminated name; `dims` holds the rank's ids.
        unsafe { super::super::var::nc_def_var(ncid, c.as_ptr(), xtype, dims.len() as c_int, dims.as_ptr(), &mut id) },
        "bookkeeping variable",
    )?;
    Ok(id)
}

/// The fragment grid of an aggregated array: per dimension, the number of fragments and the
/// extent of each.
fn grid(array: &ArrayInfo) -> Vec<Vec<usize>> {
    array
        .dims
        .iter()
        .zip(&array.chunks)
        .map(|((_, len, _), &chunk)| {
            let (len, chunk) = (*len as usize, chunk.max(1) as usize);
            (0..len.div_ceil(chunk)).map(|k| chunk.min(len - k * chunk)).collect()
        })
        .collect()
}

/// Every fragment in row-major order: its index and its start and shape in the array.
fn cells(sizes: &[Vec<usize>]) -> Vec<(Vec<u64>, Vec<usize>, Vec<usize>)> {
    let counts: Vec<usize> = sizes.iter().map(Vec::len).collect();
    let total: usize = counts.iter().product();
    (0..total)
        .map(|f| {
            let mut index = vec![0usize; counts.len()];
            let mut rest = f;
            for d in (0..counts.len()).rev() {
                index[d] = rest % counts[d];
                rest /= counts[d];
            }
            let start = (0..counts.len()).map(|d| sizes[d][..index[d]].iter().sum()).collect();
            let shape = (0..counts.len()).map(|d| sizes[d][index[d]]).collect();
            (index.iter().map(|&i| i as u64).collect(), start, shape)
        })
        .collect()
}

/// Defines the bookkeeping of aggregated variable `id` (scalar in `m`) and queues its data.
fn bookkeeping(m: c_int, id: c_int, array: &ArrayInfo, writer: &Writer, fills: &mut Vec<Fill>) -> Result<()> {
    let sizes = grid(array);
    if writer.convention == Convention::Cf {
        for (index, _, shape) in cells(&sizes) {
            writer.files.materialise(array, &index, &shape)?;
        }
    }
    let place = writer.files.place();
    let stored: HashMap<Vec<u64>, String> =
        writer.files.fragments_of(&array.key).into_iter().map(|(i, _, rel)| (i, place.master_name(&rel, writer.convention))).collect();
    let dim_names: Vec<&str> = array.dims.iter().map(|d| d.0.as_str()).collect();
    let rank = sizes.len();
    let fragments = cells(&sizes);
    let v = &array.name;
    match writer.convention {
        Convention::Cf => {
            let widest = sizes.iter().map(Vec::len).max().unwrap_or(1);
            let rows = dim(m, &format!("a_map_j{rank}"), rank)?;
            let cols = dim(m, &format!("a_map_i{widest}"), widest)?;
            let grid_dims: Vec<c_int> =
                dim_names.iter().zip(&sizes).map(|(d, s)| dim(m, &format!("a_{d}"), s.len())).collect::<Result<_>>()?;
            let wide = array.dims.iter().any(|d| d.1 > i32::MAX as u64);
            let map = var(m, &format!("fragment_map_{v}"), if wide { NC_INT64 } else { NC_INT }, &[rows, cols])?;
            let uris = var(m, &format!("fragment_uris_{v}"), NC_STRING, &grid_dims)?;
            let identifiers = var(m, &format!("fragment_identifiers_{v}"), NC_STRING, &[])?;
            put_text(m, id, c"aggregated_dimensions", &dim_names.join(" "))?;
            let data = format!("map: fragment_map_{v} uris: fragment_uris_{v} identifiers: fragment_identifiers_{v}");
            put_text(m, id, c"aggregated_data", &data)?;
            let missing = if wide { super::super::consts::NC_FILL_INT64 } else { super::super::consts::NC_FILL_INT as i64 };
            let values = sizes.iter().flat_map(|row| (0..widest).map(|k| row.get(k).map_or(missing, |&n| n as i64))).collect();
            fills.push(Fill::Ints { ncid: m, varid: map, values, wide });
            let names = fragments.iter().map(|(i, _, _)| stored.get(i).cloned().unwrap_or_default()).collect();
            fills.push(Fill::Strings { ncid: m, varid: uris, values: names });
            fills.push(Fill::Strings { ncid: m, varid: identifiers, values: vec![v.clone()] });
        }
        Convention::V05 => {
            let group = format!("cfa_{v}");
            let g = {
                let c = cname(&group)?;
                let mut g = 0;
                // SAFETY: NUL-terminated name; valid out-pointer.
                ok(unsafe { super::super::group::nc_def_grp(m, c.as_ptr(), &mut g) }, "partition group")?;
                g
            };
            let grid_dims: Vec<c_int> = dim_names.iter().zip(&sizes).map(|(d, s)| dim(g, d, s.len())).collect::<Result<_>>()?;
            let ndims = dim(g, "ndimensions", rank)?;
            let bounds = dim(g, "bounds", 2)?;
            let with = |extra: &[c_int]| -> Vec<c_int> { grid_dims.iter().chain(extra).copied().collect() };
            let pmshape = var(g, "pmshape", NC_INT, &[ndims])?;
            let pmdims = var(g, "pmdimensions", NC_STRING, &[])?;
            let index = var(g, "index", NC_INT, &with(&[ndims]))?;
            let location = var(g, "location", NC_INT, &with(&[ndims, bounds]))?;
            let ncvar = var(g, "ncvar", NC_STRING, &grid_dims)?;
            let file = var(g, "file", NC_STRING, &grid_dims)?;
            let format = var(g, "format", NC_STRING, &grid_dims)?;
            let shape = var(g, "shape", NC_INT, &with(&[ndims]))?;
            put_text(m, id, c"cf_role", "cfa_variable")?;
            put_text(m, id, c"cfa_dimensions", &dim_names.join(" "))?;
            put_text(m, id, c"cfa_group", &group)?;
            let ints = |varid: c_int, values: Vec<i64>| Fill::Ints { ncid: g, varid, values, wide: false };
            fills.push(ints(pmshape, sizes.iter().map(|s| s.len() as i64).collect()));
            fills.push(Fill::Strings { ncid: g, varid: pmdims, values: vec![dim_names.join(", ")] });
            fills.push(ints(index, fragments.iter().flat_map(|(i, _, _)| i.iter().map(|&x| x as i64)).collect()));
            let loc = fragments.iter().flat_map(|(_, s, n)| s.iter().zip(n).flat_map(|(&a, &k)| [a as i64, (a + k) as i64])).collect();
            fills.push(ints(location, loc));
            fills.push(ints(shape, fragments.iter().flat_map(|(_, _, n)| n.iter().map(|&k| k as i64)).collect()));
            let present = |i: &Vec<u64>| stored.contains_key(i);
            let strings =
                |f: &dyn Fn(&Vec<u64>) -> String| fragments.iter().map(|(i, _, _)| if present(i) { f(i) } else { String::new() }).collect();
            fills.push(Fill::Strings { ncid: g, varid: ncvar, values: strings(&|_| v.clone()) });
            fills.push(Fill::Strings { ncid: g, varid: file, values: strings(&|i| stored[i].clone()) });
            fills.push(Fill::Strings { ncid: g, varid: format, values: strings(&|_| "NETCDF4".to_string()) });
        }
        Convention::V04 => {
            let partitions: Vec<serde_json::Value> = fragments
                .iter()
                .filter(|(i, _, _)| stored.contains_key(i))
                .map(|(i, s, n)| {
                    let location: Vec<[usize; 2]> = s.iter().zip(n).map(|(&a, &k)| [a, a + k - 1]).collect();
                    serde_json::json!({
                        "subarray": {"ncvar": v, "file": stored[i], "format": "NETCDF4", "shape": n},
                        "index": i,
                        "location": location,
                    })
                })
                .collect();
            let doc = serde_json::json!({
                "pmshape": sizes.iter().map(Vec::len).collect::<Vec<_>>(),
                "pmdimensions": dim_names,
                "Partitions": partitions,
            });
            put_text(m, id, c"cf_role", "cfa_variable")?;
            put_text(m, id, c"cfa_dimensions", &dim_names.join(" "))?;
            put_text(m, id, c"cfa_array", &doc.to_string())?;
        }
    }
    Ok(())
}

/// The master's `Conventions`: ours, with the convention's word (CF-1.12 at least, or the
/// CFA version) in place of any earlier one.
fn set_conventions(ours: c_int, m: c_int, convention: Convention) -> Result<()> {
    let had = text_att(ours, NC_GLOBAL, c"Conventions").unwrap_or_default();
    let mut words: Vec<String> = had.split([' ', ',']).filter(|w| !w.is_empty() && !w.starts_with("CFA-")).map(str::to_string).collect();
    match convention {
        Convention::Cf => {
            let old_cf = |w: &String| w.strip_prefix("CF-1.").and_then(|m| m.parse::<u32>().ok()).is_some_and(|m| m < 12);
            let has_new = words.iter().any(|w| w.starts_with("CF-") && !old_cf(w));
            words.retain(|w| !old_cf(w));
            if !has_new {
                words.insert(0, "CF-1.12".to_string());
            }
        }
        Convention::V05 => words.push("CFA-0.5".to_string()),
        Convention::V04 => words.push("CFA-0.4".to_string()),
    }
    put_text(m, NC_GLOBAL, c"Conventions", &words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_grid_and_cells() {
        let a = ArrayInfo {
            key: "v".into(),
            name: "v".into(),
            root: true,
            dims: vec![("t".into(), 7, true), ("x".into(), 4, false)],
            chunks: vec![3, 4],
            nctype: crate::nc::types::NcType::Float,
            big_endian: false,
            fill: vec![0; 4],
            filters: Vec::new(),
            attributes: Vec::new(),
        };
        let sizes = grid(&a);
        assert_eq!(sizes, vec![vec![3, 3, 1], vec![4]]);
        let c = cells(&sizes);
        assert_eq!(c.len(), 3);
        assert_eq!(c[2], (vec![2, 0], vec![6, 0], vec![1, 4]));
    }
}

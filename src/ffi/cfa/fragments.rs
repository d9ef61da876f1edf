//! A master's fragment list, per convention: CFA-0.4's JSON partition matrix, CFA-0.5's
//! `cfa_<var>` partition groups, CF-1.12's aggregation variables (`location`, `address`,
//! `identifier`, `unique_values`).

use super::calls::{cname, get_vara_as, ok, text_type, var_shape, var_strings};
use super::place::resolve;
use crate::error::{Error, Kind, Result, err};
use crate::ffi::consts::NC_NOERR;
use crate::nc::types::NcType;
use crate::zmap::cfa::Fragment;
use std::ffi::{CStr, c_int, c_void};

/// The fragments of an aggregated variable from CFA-0.4's `cfa_array` JSON attribute
/// (locations are inclusive index ranges).
pub(super) fn fragments_04(master: &str, json: &str, rank: usize) -> Result<Vec<Fragment>> {
    let bad = |why: &str| Error::new(Kind::Invalid, format!("cfa_array: {why}"));
    let doc: serde_json::Value = serde_json::from_str(json).map_err(|_| bad("not valid JSON"))?;
    let parts = doc.get("Partitions").and_then(|p| p.as_array()).ok_or_else(|| bad("no Partitions"))?;
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        let sub = p.get("subarray").ok_or_else(|| bad("partition without subarray"))?;
        let file = sub.get("file").and_then(|f| f.as_str()).ok_or_else(|| bad("subarray without file"))?;
        let ncvar = sub.get("ncvar").and_then(|f| f.as_str()).ok_or_else(|| bad("subarray without ncvar"))?;
        let loc = p.get("location").and_then(|l| l.as_array()).ok_or_else(|| bad("partition without location"))?;
        if loc.len() != rank {
            return Err(bad("location of the wrong rank"));
        }
        let mut start = Vec::with_capacity(rank);
        let mut shape = Vec::with_capacity(rank);
        for range in loc {
            let r: Vec<u64> = range.as_array().map(|a| a.iter().filter_map(|v| v.as_u64()).collect()).unwrap_or_default();
            match r[..] {
                [a, b] if b >= a && b < u64::MAX => {
                    let (Ok(a), Ok(n)) = (usize::try_from(a), usize::try_from(b - a + 1)) else {
                        return Err(bad("location out of range"));
                    };
                    start.push(a);
                    shape.push(n);
                }
                _ => return Err(bad("location range is not [first, last]")),
            }
        }
        out.push(Fragment { file: resolve(master, file), ncvar: ncvar.to_string(), start, shape, constant: None });
    }
    Ok(out)
}

/// The fragments of an aggregated variable from a CFA-0.5 partition group (`location`,
/// `file`, `ncvar` over the partition matrix).
pub(super) fn fragments_05(master: &str, real: c_int, group: &str, rank: usize) -> Result<Vec<Fragment>> {
    let mut gid = 0;
    let g = cname(group)?;
    // SAFETY: NUL-terminated name, valid out-pointer.
    ok(unsafe { crate::ffi::group::nc_inq_grp_ncid(real, g.as_ptr(), &mut gid) }, "cfa group")?;
    let varid = |name: &CStr| -> Result<c_int> {
        let mut v = 0;
        // SAFETY: as above.
        ok(unsafe { crate::ffi::var::nc_inq_varid(gid, name.as_ptr(), &mut v) }, "cfa group variable")?;
        Ok(v)
    };
    let (loc_id, file_id, ncvar_id) = (varid(c"location")?, varid(c"file")?, varid(c"ncvar")?);
    // Every buffer is sized from its own variable's dimensions: a master whose partition
    // variables disagree is refused, never read past a buffer.
    let cells = |v: c_int| -> Result<usize> {
        var_shape(gid, v)?
            .into_iter()
            .try_fold(1usize, |n, len| n.checked_mul(len))
            .ok_or_else(|| Error::new(Kind::Invalid, format!("{group}: partition matrix too large")))
    };
    let nparts = cells(file_id)?;
    if cells(ncvar_id)? != nparts || cells(loc_id)? != nparts.saturating_mul(rank).saturating_mul(2) {
        return err(Kind::Invalid, format!("{group}: file, ncvar and location disagree on the number of partitions"));
    }
    let mut location = vec![0 as c_int; nparts * rank * 2];
    // SAFETY: `location` has room for every element of the variable (its shape, checked above).
    ok(unsafe { crate::ffi::data_matrix::nc_get_var_int(gid, loc_id, location.as_mut_ptr()) }, "location")?;
    let (files, ncvars) = (var_strings(gid, file_id, nparts)?, var_strings(gid, ncvar_id, nparts)?);
    let mut out = Vec::new();
    for p in 0..nparts {
        if files[p].is_empty() {
            continue;
        }
        let loc = &location[p * rank * 2..(p + 1) * rank * 2];
        let (mut start, mut shape) = (Vec::new(), Vec::new());
        for d in 0..rank {
            // CFA-0.5 locations are half-open ranges (0.4's are inclusive).
            let (a, b) = (loc[2 * d], loc[2 * d + 1]);
            if a < 0 || b <= a {
                return err(Kind::Invalid, format!("{group}: location [{a}, {b})"));
            }
            start.push(a as usize);
            shape.push((b - a) as usize);
        }
        out.push(Fragment { file: resolve(master, &files[p]), ncvar: ncvars[p].clone(), start, shape, constant: None });
    }
    Ok(out)
}

/// The fragments of a CF aggregation variable (CF-1.12 and later): `map` gives the fragment
/// sizes along each dimension (one row per dimension, missing entries past the last
/// fragment), `uris` the fragment files over the fragment array, `identifiers` the variable
/// in each (one for all, or one per fragment). An empty URI is a missing fragment.
pub(super) fn fragments_cf(master: &str, real: c_int, data: &str, shape: &[usize], xtype: NcType) -> Result<Vec<Fragment>> {
    let terms = aggregated_terms(data);
    let term = |t: &str| terms.iter().find(|(k, _)| k == t).map(|(_, v)| v.clone());
    let rank = shape.len();
    let varid = |name: &str| -> Result<(c_int, Vec<usize>)> {
        let mut v = 0;
        let c = cname(name)?;
        // SAFETY: NUL-terminated name; valid out-pointer.
        ok(unsafe { crate::ffi::var::nc_inq_varid(real, c.as_ptr(), &mut v) }, "fragment array variable")?;
        Ok((v, var_shape(real, v)?))
    };
    let map_name = term("map").ok_or_else(|| Error::new(Kind::Invalid, "aggregated_data without map"))?;
    let (map_id, map_dims) = varid(&map_name)?;
    let cells: usize = map_dims.iter().product();
    let mut map = vec![0i64; cells.max(1)];
    // SAFETY: `map` has room for every element of the variable (`cells`).
    ok(unsafe { crate::ffi::data_matrix::nc_get_var_longlong(real, map_id, map.as_mut_ptr()) }, "map")?;
    // One row of fragment sizes per dimension.
    let width = if map_dims.len() == 2 { map_dims[1] } else { 1 };
    if map_dims.first().copied().unwrap_or(0) != rank && rank > 0 {
        return err(Kind::Invalid, format!("{map_name}: {} rows for {rank} dimensions", map_dims.first().copied().unwrap_or(0)));
    }
    let mut sizes: Vec<Vec<usize>> = Vec::with_capacity(rank);
    for d in 0..rank {
        // Entries past a dimension's last fragment are missing (the fill value, never > 0).
        let row: Vec<usize> = map[d * width..(d + 1) * width].iter().filter(|&&n| n > 0).map(|&n| n as usize).collect();
        if row.iter().sum::<usize>() != shape[d] {
            return err(Kind::Invalid, format!("{map_name}: fragment sizes {row:?} do not add up to {}", shape[d]));
        }
        sizes.push(row);
    }
    let counts: Vec<usize> = sizes.iter().map(Vec::len).collect();
    let total: usize = counts.iter().product();
    let position = |f: usize| -> (Vec<usize>, Vec<usize>) {
        let mut index = vec![0usize; rank];
        let mut rest = f;
        for d in (0..rank).rev() {
            index[d] = rest % counts[d];
            rest /= counts[d];
        }
        let start = (0..rank).map(|d| sizes[d][..index[d]].iter().sum()).collect();
        let shape = (0..rank).map(|d| sizes[d][index[d]]).collect();
        (start, shape)
    };
    // Constant fragments: one value each over the fragment array, the fill value where none.
    if let Some(values_name) = term("unique_values") {
        let (id, dims) = varid(&values_name)?;
        if dims.iter().product::<usize>() != total {
            return err(Kind::Invalid, format!("{values_name}: {} values for {total} fragments", dims.iter().product::<usize>()));
        }
        let size = xtype.size();
        let mut values = vec![0u8; total * size];
        let zeros = vec![0usize; dims.len()];
        let status = get_vara_as(real, id, xtype, &zeros, &dims, &mut values);
        ok(status, "unique_values")?;
        let mut fill = vec![0u8; size];
        let mut nofill = 0;
        // SAFETY: one element; the fill of a variable of another type is never compared.
        let has_fill = unsafe { crate::ffi::var::nc_inq_var_fill(real, id, &mut nofill, fill.as_mut_ptr() as *mut c_void) } == NC_NOERR
            && text_type(real, id) == Some(xtype);
        let mut out = Vec::new();
        for f in 0..total {
            let value = &values[f * size..(f + 1) * size];
            if has_fill && value == fill.as_slice() {
                continue;
            }
            let (start, shape) = position(f);
            out.push(Fragment { file: String::new(), ncvar: String::new(), start, shape, constant: Some(value.to_vec()) });
        }
        return Ok(out);
    }
    let uris_name = term("uris").or_else(|| term("location")).ok_or_else(|| Error::new(Kind::Invalid, "aggregated_data without uris"))?;
    let (uris_id, uris_dims) = varid(&uris_name)?;
    let n_uris: usize = uris_dims.iter().product();
    // More than one URI per fragment (a trailing dimension of alternatives): the first.
    let per = if total > 0 && n_uris.is_multiple_of(total) { n_uris / total } else { 0 };
    if per == 0 {
        return err(Kind::Invalid, format!("{uris_name}: {n_uris} URIs for {total} fragments"));
    }
    let uris = var_strings(real, uris_id, n_uris)?;
    let identifiers = match term("identifiers").or_else(|| term("identifier")) {
        Some(name) => {
            let (id, dims) = varid(&name)?;
            var_strings(real, id, dims.iter().product())?
        }
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for f in 0..total {
        let uri = &uris[f * per];
        if !uri.is_empty() {
            let ident = match identifiers.len() {
                0 => return err(Kind::Invalid, "aggregated_data without identifiers"),
                1 => identifiers[0].clone(),
                _ => identifiers.get(f).cloned().unwrap_or_default(),
            };
            let (start, fshape) = position(f);
            out.push(Fragment {
                file: resolve(master, uri),
                ncvar: ident.trim_start_matches('/').to_string(),
                start,
                shape: fshape,
                constant: None,
            });
        }
    }
    Ok(out)
}

/// CF's `aggregated_data`: `term: variable` pairs (`map: fragment_map uris: fragment_uris`).
pub(super) fn aggregated_terms(text: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .chunks(2)
        .filter_map(|p| match p {
            [term, var] => Some((term.trim_end_matches(':').to_string(), var.to_string())),
            _ => None,
        })
        .collect()
}

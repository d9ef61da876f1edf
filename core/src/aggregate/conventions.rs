//! Which convention a master follows, and an aggregated variable's fragment list per
//! convention: CFA-0.4's JSON partition matrix, CFA-0.5's `cfa_<var>` partition groups, CF-1.12's
//! aggregation variables (`map`, `uris`/`location`, `identifiers`, `unique_values`).

use super::place::resolve;
use crate::error::{Error, Kind, Result, err};
use crate::nc::types::NcType;
use crate::source::{GroupId, NcSource};
use crate::zmap::cfa::Fragment;

/// Which aggregation convention a file follows: the CFA version its `Conventions` names
/// (`CFA-0.4`, `CFA-0.5`), or `CF` when a variable is a CF aggregation variable
/// (`aggregated_dimensions`, CF-1.12 and later); `None` for any other file.
///
/// Only the global `Conventions` is read for any other file: a file whose `Conventions` names
/// no CF version from 1.12 on (when aggregation joined CF) is never scanned, since asking
/// about a variable's attributes makes netCDF-4 read that variable's metadata.
pub fn convention_of(file: &dyn NcSource) -> Option<String> {
    let conventions = file.text_att(file.root(), None, "Conventions")?;
    let words: Vec<&str> = conventions.split([' ', ',']).collect();
    if let Some(v) = words.iter().find(|w| w.starts_with("CFA-")) {
        return Some(v.to_string());
    }
    let cf_minor = |w: &&str| w.strip_prefix("CF-1.").and_then(|m| m.parse::<u32>().ok());
    if !words.iter().filter_map(cf_minor).any(|m| m >= 12) {
        return None;
    }
    aggregates(file, file.root()).then(|| "CF".to_string())
}

/// Does group `g`, or any group below it, hold a CF aggregation variable?
fn aggregates(file: &dyn NcSource, g: GroupId) -> bool {
    let nvars = file.var_count(g).unwrap_or(0);
    if (0..nvars).any(|v| file.text_att(g, Some(v), "aggregated_dimensions").is_some()) {
        return true;
    }
    file.groups(g).unwrap_or_default().into_iter().any(|(child, _)| aggregates(file, child))
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

/// A variable of `g` by name, with its shape (NC_ENOTVAR naming `what` when absent).
fn var_named(file: &dyn NcSource, g: GroupId, name: &str, what: &str) -> Result<(usize, Vec<usize>)> {
    let v = file.var_id(g, name)?.ok_or_else(|| Error::new(Kind::NotVar, format!("{what} {name}")))?;
    Ok((v, file.var(g, v)?.shape))
}

/// The number of elements of a shape, refusing an overflow.
fn cells(shape: &[usize], what: &str) -> Result<usize> {
    shape.iter().try_fold(1usize, |n, &len| n.checked_mul(len)).ok_or_else(|| Error::new(Kind::Invalid, format!("{what}: too large")))
}

/// A whole variable read as 32-bit or 64-bit integers.
fn ints(file: &mut dyn NcSource, g: GroupId, v: usize, shape: &[usize]) -> Result<Vec<i64>> {
    let n = cells(shape, "partition variable")?;
    let mut raw = vec![0u8; n * 8];
    let zeros = vec![0usize; shape.len()];
    file.get_vara(g, v, NcType::Int64, &zeros, shape, &mut raw)?;
    Ok(raw.chunks_exact(8).map(|c| i64::from_ne_bytes(c.try_into().unwrap_or([0; 8]))).collect())
}

/// A whole string variable (a NULL string reads as empty).
fn strings(file: &mut dyn NcSource, g: GroupId, v: usize, shape: &[usize]) -> Result<Vec<String>> {
    let zeros = vec![0usize; shape.len()];
    Ok(file.get_strings(g, v, &zeros, shape)?.into_iter().map(Option::unwrap_or_default).collect())
}

/// The fragments of an aggregated variable from a CFA-0.5 partition group (`location`,
/// `file`, `ncvar` over the partition matrix).
pub(super) fn fragments_05(master: &str, file: &mut dyn NcSource, g: GroupId, group: &str, rank: usize) -> Result<Vec<Fragment>> {
    let gid = file.group(g, group)?.ok_or_else(|| Error::new(Kind::NoGroup, format!("cfa group {group}")))?;
    let (loc_id, loc_shape) = var_named(file, gid, "location", "cfa group variable")?;
    let (file_id, file_shape) = var_named(file, gid, "file", "cfa group variable")?;
    let (ncvar_id, ncvar_shape) = var_named(file, gid, "ncvar", "cfa group variable")?;
    // Every buffer is sized from its own variable's dimensions: a master whose partition
    // variables disagree is refused, never read past a buffer.
    let nparts = cells(&file_shape, group)?;
    if cells(&ncvar_shape, group)? != nparts || cells(&loc_shape, group)? != nparts.saturating_mul(rank).saturating_mul(2) {
        return err(Kind::Invalid, format!("{group}: file, ncvar and location disagree on the number of partitions"));
    }
    let location = ints(file, gid, loc_id, &loc_shape)?;
    let (files, ncvars) = (strings(file, gid, file_id, &file_shape)?, strings(file, gid, ncvar_id, &ncvar_shape)?);
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

/// A fragment grid's cells: index, start and shape of each fragment.
type Cells = Vec<(Vec<u64>, Vec<usize>, Vec<usize>)>;

/// Every fragment of a fragment grid (`sizes`: per dimension, the extent of each fragment) in
/// row-major order: its index, and its start and shape in the array.
pub(super) fn grid_cells(sizes: &[Vec<usize>]) -> Cells {
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

/// CF's `map`: the fragment sizes along each dimension (one row per dimension, missing entries
/// past a dimension's last fragment).
fn fragment_grid(file: &mut dyn NcSource, g: GroupId, map_name: &str, shape: &[usize]) -> Result<Vec<Vec<usize>>> {
    let rank = shape.len();
    let (map_id, map_dims) = var_named(file, g, map_name, "fragment array variable")?;
    let map = ints(file, g, map_id, &map_dims)?;
    let width = if map_dims.len() == 2 { map_dims[1] } else { 1 };
    if map_dims.first().copied().unwrap_or(0) != rank && rank > 0 {
        return err(Kind::Invalid, format!("{map_name}: {} rows for {rank} dimensions", map_dims.first().copied().unwrap_or(0)));
    }
    let mut sizes: Vec<Vec<usize>> = Vec::with_capacity(rank);
    for (d, &len) in shape.iter().enumerate() {
        // Entries past a dimension's last fragment are missing (the fill value, never > 0).
        let row: Vec<usize> = map.get(d * width..(d + 1) * width).unwrap_or(&[]).iter().filter(|&&n| n > 0).map(|&n| n as usize).collect();
        if row.iter().sum::<usize>() != len {
            return err(Kind::Invalid, format!("{map_name}: fragment sizes {row:?} do not add up to {len}"));
        }
        sizes.push(row);
    }
    Ok(sizes)
}

/// CF `unique_values`: one value per fragment over the fragment array, the fill value where
/// there is none.
fn constant_fragments(file: &mut dyn NcSource, g: GroupId, name: &str, grid: Cells, xtype: NcType) -> Result<Vec<Fragment>> {
    let (id, dims) = var_named(file, g, name, "fragment array variable")?;
    let total = grid.len();
    if cells(&dims, name)? != total {
        return err(Kind::Invalid, format!("{name}: {} values for {total} fragments", cells(&dims, name)?));
    }
    let size = xtype.size();
    let mut values = vec![0u8; total * size];
    let zeros = vec![0usize; dims.len()];
    file.get_vara(g, id, xtype, &zeros, &dims, &mut values)?;
    // The fill of a variable of another type is never compared.
    let fill = match (file.var(g, id)?.xtype == xtype, file.fill(g, id)?) {
        (true, Some(fill)) => Some(fill.to_ne_bytes()),
        _ => None,
    };
    let mut out = Vec::new();
    for (f, (_, start, shape)) in grid.into_iter().enumerate() {
        let value = &values[f * size..(f + 1) * size];
        if fill.as_deref() == Some(value) {
            continue;
        }
        out.push(Fragment { file: String::new(), ncvar: String::new(), start, shape, constant: Some(value.to_vec()) });
    }
    Ok(out)
}

/// The fragments of a CF aggregation variable (CF-1.12 and later): `map` gives the fragment
/// sizes, `uris` the fragment files over the fragment array, `identifiers` the variable in each
/// (one for all, or one per fragment). An empty URI is a missing fragment.
pub(super) fn fragments_cf(
    master: &str,
    file: &mut dyn NcSource,
    g: GroupId,
    data: &str,
    shape: &[usize],
    xtype: NcType,
) -> Result<Vec<Fragment>> {
    let terms = aggregated_terms(data);
    let term = |t: &str| terms.iter().find(|(k, _)| k == t).map(|(_, v)| v.clone());
    let map_name = term("map").ok_or_else(|| Error::new(Kind::Invalid, "aggregated_data without map"))?;
    let grid = grid_cells(&fragment_grid(file, g, &map_name, shape)?);
    if let Some(values_name) = term("unique_values") {
        return constant_fragments(file, g, &values_name, grid, xtype);
    }
    let total = grid.len();
    let uris_name = term("uris").or_else(|| term("location")).ok_or_else(|| Error::new(Kind::Invalid, "aggregated_data without uris"))?;
    let (uris_id, uris_dims) = var_named(file, g, &uris_name, "fragment array variable")?;
    let n_uris = cells(&uris_dims, &uris_name)?;
    // More than one URI per fragment (a trailing dimension of alternatives): the first.
    let per = if total > 0 && n_uris.is_multiple_of(total) { n_uris / total } else { 0 };
    if per == 0 {
        return err(Kind::Invalid, format!("{uris_name}: {n_uris} URIs for {total} fragments"));
    }
    let uris = strings(file, g, uris_id, &uris_dims)?;
    let identifiers = match term("identifiers").or_else(|| term("identifier")) {
        Some(name) => {
            let (id, dims) = var_named(file, g, &name, "fragment array variable")?;
            strings(file, g, id, &dims)?
        }
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for (f, (_, start, fshape)) in grid.into_iter().enumerate() {
        let uri = &uris[f * per];
        if uri.is_empty() {
            continue;
        }
        let ident = match identifiers.len() {
            0 => return err(Kind::Invalid, "aggregated_data without identifiers"),
            1 => identifiers[0].clone(),
            _ => identifiers.get(f).cloned().unwrap_or_default(),
        };
        out.push(Fragment {
            file: resolve(master, uri),
            ncvar: ident.trim_start_matches('/').to_string(),
            start,
            shape: fshape,
            constant: None,
        });
    }
    Ok(out)
}

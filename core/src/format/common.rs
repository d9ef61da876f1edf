//! What the v2 and v3 metadata readers share: the loaded result, and the readers of shapes,
//! name lists, pure-Zarr dimensions and recorded quantization.

use crate::error::{Error, Kind, Result, err};
use crate::format::Layout;
use crate::json;
use crate::model::{Att, Model};
use crate::nc::names;
use crate::trace;
use serde_json::Value;
use std::collections::HashMap;

/// Deepest group nesting we accept (S3 keys are limited to 1024 bytes anyway).
pub(crate) const MAX_DEPTH: usize = 1024;

/// The root objects `format::open` fetches at open, in this order (v2's reader indexes them).
pub(crate) const ROOT_KEYS: [&str; 6] = [".zgroup", ".zattrs", ".zarray", ".zmetadata", ".nczarr", "zarr.json"];

/// A dataset's metadata as read: the model and what is kept to rewrite it.
pub struct Loaded {
    pub model: Model,
    pub layout: Layout,
    /// Metadata objects exactly as read, to rewrite only what changed.
    pub stored: HashMap<String, Vec<u8>>,
    pub nc_properties: Option<String>,
    pub has_zmetadata: bool,
    /// Recorded netCDF-4 classic model (our superblock extension).
    pub classic: bool,
    /// 2 or 3.
    pub zarr_format: u8,
}

pub(crate) fn string_list(v: Option<&Value>, what: &str) -> Result<Option<Vec<String>>> {
    match v {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(|| Error::new(Kind::NcZarr, format!("{what}: not a list of names"))))
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(_) => err(Kind::NcZarr, format!("{what}: not a list")),
    }
}

/// An array's extents (`shape`, `chunks`) as a list of integers of at least `min`.
pub(crate) fn shape_of(v: Option<&Value>, what: &str, min: i128) -> Result<Vec<u64>> {
    let items = v.and_then(Value::as_array).ok_or_else(|| Error::new(Kind::NcZarr, format!("{what} missing or not a list")))?;
    if items.len() > 1024 {
        return err(Kind::NcZarr, format!("{what}: rank above NC_MAX_VAR_DIMS"));
    }
    items
        .iter()
        .map(|i| match i {
            Value::Number(n) => match json::int_of(n) {
                Some(x) if x >= min && x <= i64::MAX as i128 => Ok(x as u64),
                _ => err(Kind::NcZarr, format!("{what}: bad extent {n}")),
            },
            other => err(Kind::NcZarr, format!("{what}: bad extent {other}")),
        })
        .collect()
}

/// The quantization recorded by a variable's attributes: (mode, nsd), (0, 0) when none.
pub(crate) fn quantize_of(atts: &[Att]) -> (i32, i32) {
    crate::nc::quantize::ATT_NAMES
        .iter()
        .enumerate()
        .find_map(|(i, q)| match atts.iter().find(|a| a.name == *q)?.value.scalars().first().copied()? {
            crate::nc::values::Scalar::Int(n) => Some((i as i32 + 1, n as i32)),
            _ => None,
        })
        .unwrap_or((0, 0))
}

/// Dimensions of a pure Zarr array: `_ARRAY_DIMENSIONS` names in the array's own group, or
/// netcdf-c's anonymous `_Anonymous_Dim_<len>` in the root.
pub(crate) fn pure_dims(model: &mut Model, gid: usize, what: &str, shape: &[u64], names_v: Option<&Value>) -> Result<Vec<usize>> {
    let listed = string_list(names_v, "_ARRAY_DIMENSIONS")?.filter(|l| l.len() == shape.len());
    if let Some(list) = listed {
        let mut ids = Vec::new();
        let mut conflict = false;
        for (n, &len) in list.iter().zip(shape) {
            let (home, n) = dim_home(model, gid, n);
            let n = names::check_stored(n)?;
            match model.groups[home].dims.iter().copied().find(|&d| model.dims[d].name == n) {
                Some(d) if model.dims[d].len == len => ids.push(d),
                Some(_) => {
                    conflict = true;
                    break;
                }
                None => ids.push(model.add_dim(home, n, len, false)),
            }
        }
        if !conflict {
            return Ok(ids);
        }
        trace::warn(&format!("{what}: dimension lengths conflict; using anonymous dimensions"));
    }
    let mut ids = Vec::new();
    for &len in shape {
        let name = format!("_Anonymous_Dim_{len}");
        let found = model.groups[0].dims.iter().copied().find(|&d| model.dims[d].name == name);
        ids.push(found.unwrap_or_else(|| model.add_dim(0, name, len, false)));
    }
    Ok(ids)
}

/// Where a pure Zarr array of group `gid` finds the dimension it names: a plain name in its
/// own group; a path (`grp/n`, `/grp/n`, as kerchunk writes for netCDF-4 groups) in the group
/// the path names when that is the array's group or one above it. Any other path is left
/// whole, for the name check to refuse (`../y` is NC_EBADNAME).
fn dim_home<'n>(model: &Model, gid: usize, name: &'n str) -> (usize, &'n str) {
    let Some((path, last)) = name.rsplit_once('/') else { return (gid, name) };
    let mut g = Some(0usize);
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        g = g.and_then(|at| model.groups[at].children.iter().copied().find(|&c| model.groups[c].name == seg));
    }
    let mut up = Some(gid);
    while let Some(at) = up {
        if Some(at) == g {
            return (at, last);
        }
        up = model.groups[at].parent;
    }
    (gid, name)
}

/// The dimensions an NCZarr array references by full name; an unlimited one grows to the
/// array's length, a fixed one must match it.
pub(crate) fn referenced_dims(model: &mut Model, what: &str, refs: &[String], shape: &[u64]) -> Result<Vec<usize>> {
    if refs.len() != shape.len() {
        return err(Kind::NcZarr, format!("{what}: {} dimension references for rank {}", refs.len(), shape.len()));
    }
    let mut ids = Vec::new();
    for (r, &len) in refs.iter().zip(shape) {
        for seg in r.split('/').filter(|s| !s.is_empty()) {
            names::check_stored(seg)?;
        }
        let d = model.dim_by_fqn(r)?;
        let dim = &model.dims[d];
        if !(dim.len == len || dim.unlimited && len <= dim.len) {
            if dim.unlimited {
                model.dims[d].len = len;
            } else {
                return err(Kind::NcZarr, format!("{what}: shape {len} differs from dimension {r} = {}", dim.len));
            }
        }
        ids.push(d);
    }
    Ok(ids)
}

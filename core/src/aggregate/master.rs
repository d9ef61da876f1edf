//! Writing an aggregated dataset's master file from our logical dataset, after its fragments
//! are stored: the dimensions, attributes and ordinary variables (with their data) of every
//! group, and each aggregated variable as a scalar variable with its attributes and the
//! bookkeeping of the chosen convention:
//! * CF aggregation (CF-1.12): `aggregated_dimensions`, `aggregated_data` naming a `map` of
//!   fragment sizes (one row per dimension), the fragments' `uris` and their `identifiers`
//!   (the variable's name in each fragment);
//! * CFA-0.5: a group `cfa_<var>` holding the partition matrix (`pmshape`, `pmdimensions`,
//!   `index`, `location` as half-open ranges, `ncvar`, `file`, `format`, `shape`);
//! * CFA-0.4: the partition matrix as the JSON attribute `cfa_array` (inclusive ranges).
//!
//! The master is read from ours through `NcSource` and written through `NcSink`; a local
//! master is written beside its final name and renamed over it once complete.

use super::Opener;
use super::conventions::grid_cells as cells;
use super::fragment_files::FragmentFiles;
use super::place::Convention;
use crate::error::{Error, Kind, Result};
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::source::{GroupId, NcFile, NcSink, NcSource};
use crate::zmap::cfa::write::ArrayInfo;
use crate::zmap::cfa::write::is_aggregated;
use std::collections::HashMap;

/// A variable whose data is copied once the master leaves define mode.
struct DataCopy {
    from: (GroupId, usize),
    to: (GroupId, usize),
    info: crate::source::VarInfo,
}

/// Bookkeeping data written once the master leaves define mode.
enum Fill {
    Ints { g: GroupId, v: usize, values: Vec<i64>, wide: bool },
    Strings { g: GroupId, v: usize, values: Vec<String> },
}

/// What the master is written from besides our dataset: the stored fragments, the convention,
/// the master's format and the opener that makes it.
pub(super) struct Writer<'a> {
    pub files: &'a FragmentFiles,
    pub convention: Convention,
    pub master_format: crate::source::CreateFormat,
    pub opener: &'a dyn Opener,
}

/// Writes the master of `ours` (whose fragments `writer.files` stored).
pub(super) fn write(ours: &mut dyn NcSource, writer: &Writer<'_>) -> Result<()> {
    let place = writer.files.place();
    // A local master is written beside its name and renamed over it when complete.
    let (target, final_path) = match &place.local_dir {
        Some(_) => (format!("{}.tmp-{}", place.master, std::process::id()), Some(place.master.clone())),
        None => (place.master.clone(), None),
    };
    let mut m = writer.opener.create(&target, writer.master_format)?;
    if let Err(e) = fill(ours, m.as_mut(), writer) {
        let _ = m.abort();
        if final_path.is_some() {
            let _ = std::fs::remove_file(&target);
        }
        return Err(e);
    }
    m.close().map_err(|e| Error::new(e.kind, format!("storing the master {target}: {}", e.context)))?;
    if let Some(path) = final_path {
        std::fs::rename(&target, &path).map_err(|e| Error::new(Kind::Io, format!("{path}: {e}")))?;
    }
    Ok(())
}

/// Everything the master holds, defined, then its data.
fn fill(ours: &mut dyn NcSource, m: &mut dyn NcFile, writer: &Writer<'_>) -> Result<()> {
    let arrays: HashMap<String, ArrayInfo> = writer
        .files
        .arrays()
        .into_iter()
        .filter(|a| is_aggregated(a) && a.dims.iter().all(|d| d.1 > 0))
        .map(|a| (a.name.clone(), a))
        .collect();
    let mut copies = Vec::new();
    let mut fills = Vec::new();
    let mut defining = Defining { arrays: &arrays, writer, copies: &mut copies, fills: &mut fills };
    let (from, to) = (NcSource::root(ours), NcSink::root(m));
    defining.group(ours, from, m, to, true)?;
    set_conventions(ours, m, writer.convention)?;
    m.enddef()?;
    for c in &copies {
        copy_data(ours, m, c)?;
    }
    for f in fills {
        match f {
            Fill::Ints { g, v, values, wide } => {
                let bytes: Vec<u8> = if wide {
                    values.iter().flat_map(|x| x.to_ne_bytes()).collect()
                } else {
                    values.iter().flat_map(|&x| (x as i32).to_ne_bytes()).collect()
                };
                let shape = m.var(g, v)?.shape;
                m.put_vara(g, v, &vec![0; shape.len()], &shape, &bytes)?;
            }
            Fill::Strings { g, v, values } => {
                let shape = m.var(g, v)?.shape;
                let values: Vec<Option<String>> = values.into_iter().map(Some).collect();
                m.put_strings(g, v, &vec![0; shape.len()], &shape, &values)?;
            }
        }
    }
    Ok(())
}

/// One ordinary variable's data, a record (index of the first dimension) at a time.
fn copy_data(ours: &mut dyn NcSource, m: &mut dyn NcFile, c: &DataCopy) -> Result<()> {
    let shape = &c.info.shape;
    if shape.contains(&0) {
        return Ok(());
    }
    let (records, per_record) = match shape.split_first() {
        Some((&n, rest)) => (n, rest.iter().product::<usize>()),
        None => (1, 1),
    };
    let mut count = shape.clone();
    if let Some(first) = count.first_mut() {
        *first = 1;
    }
    let mut start = vec![0usize; shape.len()];
    let mut buf = vec![0u8; if c.info.xtype == NcType::String { 0 } else { per_record * c.info.xtype.size() }];
    for r in 0..records {
        if let Some(s) = start.first_mut() {
            *s = r;
        }
        if c.info.xtype == NcType::String {
            let strings = ours.get_strings(c.from.0, c.from.1, &start, &count)?;
            m.put_strings(c.to.0, c.to.1, &start, &count, &strings)?;
        } else {
            ours.get_vara(c.from.0, c.from.1, c.info.xtype, &start, &count, &mut buf)?;
            m.put_vara(c.to.0, c.to.1, &start, &count, &buf)?;
        }
    }
    Ok(())
}

/// What defining the master's groups gathers for after define mode.
struct Defining<'a> {
    arrays: &'a HashMap<String, ArrayInfo>,
    writer: &'a Writer<'a>,
    copies: &'a mut Vec<DataCopy>,
    fills: &'a mut Vec<Fill>,
}

impl Defining<'_> {
    /// Defines group `from` of ours in `to` (dimensions, attributes, variables, subgroups).
    fn group(&mut self, ours: &mut dyn NcSource, from: GroupId, m: &mut dyn NcFile, to: GroupId, root: bool) -> Result<()> {
        for dim in ours.dims(from)? {
            m.def_dim(to, &dim.name, (!dim.unlimited).then_some(dim.len))?;
        }
        for name in ours.att_names(from, None)? {
            if root && name == "Conventions" {
                continue;
            }
            if let Some(values) = ours.att(from, None, &name)? {
                m.put_att(to, None, &name, values)?;
            }
        }
        for v in 0..ours.var_count(from)? {
            let info = ours.var(from, v)?;
            let aggregated = if root { self.arrays.get(&info.name) } else { None };
            let dims = if aggregated.is_some() { Vec::new() } else { info.dims.clone() };
            let id = m.def_var(to, &info.name, info.xtype, &dims)?;
            for name in ours.att_names(from, Some(v))? {
                if let Some(values) = ours.att(from, Some(v), &name)? {
                    m.put_att(to, Some(id), &name, values)?;
                }
            }
            match aggregated {
                Some(array) => self.bookkeeping(m, to, id, array)?,
                None => self.copies.push(DataCopy { from: (from, v), to: (to, id), info }),
            }
        }
        for (child, name) in ours.groups(from)? {
            let into = m.def_grp(to, &name)?;
            self.group(ours, child, m, into, false)?;
        }
        Ok(())
    }

    /// Defines the bookkeeping of aggregated variable `id` (scalar in group `g` of the
    /// master) and queues its data.
    fn bookkeeping(&mut self, m: &mut dyn NcFile, g: GroupId, id: usize, array: &ArrayInfo) -> Result<()> {
        let writer = self.writer;
        let sizes = grid(array);
        let fragments = cells(&sizes);
        if writer.convention == Convention::Cf {
            for (index, _, shape) in &fragments {
                writer.files.materialise(array, index, shape)?;
            }
        }
        let place = writer.files.place();
        let stored: HashMap<Vec<u64>, String> =
            writer.files.fragments_of(&array.key).into_iter().map(|(i, _, rel)| (i, place.master_name(&rel, writer.convention))).collect();
        let layout = Partition { array, fragments, sizes, stored };
        match writer.convention {
            Convention::Cf => self.cf(m, g, id, &layout),
            Convention::V05 => self.cfa05(m, g, id, &layout),
            Convention::V04 => cfa04(m, g, id, &layout),
        }
    }

    /// CF aggregation: `aggregated_dimensions`, `aggregated_data`, and its fragment array
    /// variables (`map`, `uris`, `identifiers`).
    fn cf(&mut self, m: &mut dyn NcFile, g: GroupId, id: usize, p: &Partition<'_>) -> Result<()> {
        let (v, sizes, dim_names) = (&p.array.name, &p.sizes, p.dim_names());
        let rank = sizes.len();
        let widest = sizes.iter().map(Vec::len).max().unwrap_or(1);
        let rows = dim(m, g, &format!("a_map_j{rank}"), rank)?;
        let cols = dim(m, g, &format!("a_map_i{widest}"), widest)?;
        let grid_dims: Vec<String> =
            dim_names.iter().zip(sizes).map(|(d, s)| dim(m, g, &format!("a_{d}"), s.len())).collect::<Result<_>>()?;
        let wide = p.array.dims.iter().any(|d| d.1 > i32::MAX as u64);
        let map = m.def_var(g, &format!("fragment_map_{v}"), if wide { NcType::Int64 } else { NcType::Int }, &[rows, cols])?;
        let uris = m.def_var(g, &format!("fragment_uris_{v}"), NcType::String, &grid_dims)?;
        let identifiers = m.def_var(g, &format!("fragment_identifiers_{v}"), NcType::String, &[])?;
        put_text(m, g, id, "aggregated_dimensions", &dim_names.join(" "))?;
        let data = format!("map: fragment_map_{v} uris: fragment_uris_{v} identifiers: fragment_identifiers_{v}");
        put_text(m, g, id, "aggregated_data", &data)?;
        // Entries past a dimension's last fragment hold the type's fill value (missing).
        let missing = if wide { -9223372036854775806 } else { i64::from(-2147483647i32) };
        let values = sizes.iter().flat_map(|row| (0..widest).map(|k| row.get(k).map_or(missing, |&n| n as i64))).collect();
        self.fills.push(Fill::Ints { g, v: map, values, wide });
        self.fills.push(Fill::Strings { g, v: uris, values: p.names(&|i| p.stored[i].clone()) });
        self.fills.push(Fill::Strings { g, v: identifiers, values: vec![v.clone()] });
        Ok(())
    }

    /// CFA-0.5: the partition matrix in a group `cfa_<var>`.
    fn cfa05(&mut self, m: &mut dyn NcFile, g: GroupId, id: usize, p: &Partition<'_>) -> Result<()> {
        let (v, sizes, dim_names) = (&p.array.name, &p.sizes, p.dim_names());
        let group = format!("cfa_{v}");
        let pg = m.def_grp(g, &group)?;
        let grid_dims: Vec<String> = dim_names.iter().zip(sizes).map(|(d, s)| dim(m, pg, d, s.len())).collect::<Result<_>>()?;
        let ndims = dim(m, pg, "ndimensions", sizes.len())?;
        let bounds = dim(m, pg, "bounds", 2)?;
        let with = |extra: &[&String]| -> Vec<String> { grid_dims.iter().chain(extra.iter().copied()).cloned().collect() };
        let pmshape = m.def_var(pg, "pmshape", NcType::Int, std::slice::from_ref(&ndims))?;
        let pmdims = m.def_var(pg, "pmdimensions", NcType::String, &[])?;
        let index = m.def_var(pg, "index", NcType::Int, &with(&[&ndims]))?;
        let location = m.def_var(pg, "location", NcType::Int, &with(&[&ndims, &bounds]))?;
        let ncvar = m.def_var(pg, "ncvar", NcType::String, &grid_dims)?;
        let file = m.def_var(pg, "file", NcType::String, &grid_dims)?;
        let format = m.def_var(pg, "format", NcType::String, &grid_dims)?;
        let shape = m.def_var(pg, "shape", NcType::Int, &with(&[&ndims]))?;
        put_text(m, g, id, "cf_role", "cfa_variable")?;
        put_text(m, g, id, "cfa_dimensions", &dim_names.join(" "))?;
        put_text(m, g, id, "cfa_group", &group)?;
        let ints = |v: usize, values: Vec<i64>| Fill::Ints { g: pg, v, values, wide: false };
        let fragments = &p.fragments;
        self.fills.push(ints(pmshape, sizes.iter().map(|s| s.len() as i64).collect()));
        self.fills.push(Fill::Strings { g: pg, v: pmdims, values: vec![dim_names.join(", ")] });
        self.fills.push(ints(index, fragments.iter().flat_map(|(i, _, _)| i.iter().map(|&x| x as i64)).collect()));
        // Half-open ranges (0.4's are inclusive).
        let loc = fragments.iter().flat_map(|(_, s, n)| s.iter().zip(n).flat_map(|(&a, &k)| [a as i64, (a + k) as i64])).collect();
        self.fills.push(ints(location, loc));
        self.fills.push(ints(shape, fragments.iter().flat_map(|(_, _, n)| n.iter().map(|&k| k as i64)).collect()));
        self.fills.push(Fill::Strings { g: pg, v: ncvar, values: p.names(&|_| v.clone()) });
        self.fills.push(Fill::Strings { g: pg, v: file, values: p.names(&|i| p.stored[i].clone()) });
        self.fills.push(Fill::Strings { g: pg, v: format, values: p.names(&|_| "NETCDF4".to_string()) });
        Ok(())
    }
}

/// An aggregated array cut into its fragments: the grid, every cell, and the names of the
/// stored ones as the master records them.
struct Partition<'a> {
    array: &'a ArrayInfo,
    sizes: Vec<Vec<usize>>,
    fragments: Vec<(Vec<u64>, Vec<usize>, Vec<usize>)>,
    stored: HashMap<Vec<u64>, String>,
}

impl Partition<'_> {
    fn dim_names(&self) -> Vec<&str> {
        self.array.dims.iter().map(|d| d.0.as_str()).collect()
    }

    /// One entry per fragment: `present` of it when it is stored, else empty.
    fn names(&self, present: &dyn Fn(&Vec<u64>) -> String) -> Vec<String> {
        self.fragments.iter().map(|(i, _, _)| if self.stored.contains_key(i) { present(i) } else { String::new() }).collect()
    }
}

/// CFA-0.4: the partition matrix as the JSON attribute `cfa_array` (inclusive ranges).
fn cfa04(m: &mut dyn NcFile, g: GroupId, id: usize, p: &Partition<'_>) -> Result<()> {
    let (v, dim_names) = (&p.array.name, p.dim_names());
    let partitions: Vec<serde_json::Value> = p
        .fragments
        .iter()
        .filter(|(i, _, _)| p.stored.contains_key(i))
        .map(|(i, s, n)| {
            let location: Vec<[usize; 2]> = s.iter().zip(n).map(|(&a, &k)| [a, a + k - 1]).collect();
            serde_json::json!({
                "subarray": {"ncvar": v, "file": p.stored[i], "format": "NETCDF4", "shape": n},
                "index": i,
                "location": location,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "pmshape": p.sizes.iter().map(Vec::len).collect::<Vec<_>>(),
        "pmdimensions": dim_names,
        "Partitions": partitions,
    });
    put_text(m, g, id, "cf_role", "cfa_variable")?;
    put_text(m, g, id, "cfa_dimensions", &dim_names.join(" "))?;
    put_text(m, g, id, "cfa_array", &doc.to_string())
}

fn put_text(m: &mut dyn NcFile, g: GroupId, v: usize, name: &str, text: &str) -> Result<()> {
    m.put_att(g, Some(v), name, Values::Char(text.as_bytes().to_vec()))
}

/// A dimension named `name` of `len` in group `g`: one of the group's own of that length, else a
/// new one (suffixed with its length when the name is taken by another length). Its name.
fn dim(m: &mut dyn NcFile, g: GroupId, name: &str, len: usize) -> Result<String> {
    // Only the group's own dimensions count (a group's may shadow its parent's).
    let own = m.dims(g)?;
    for candidate in [name.to_string(), format!("{name}_{len}")] {
        match own.iter().find(|d| d.name == candidate) {
            Some(d) if d.len == len => return Ok(candidate),
            Some(_) => continue,
            None => {
                m.def_dim(g, &candidate, Some(len))?;
                return Ok(candidate);
            }
        }
    }
    Err(Error::new(Kind::NameInUse, format!("{name}: no free dimension name")))
}

/// The fragment grid of an aggregated array: per dimension, the extent of each fragment.
pub(super) fn grid(array: &ArrayInfo) -> Vec<Vec<usize>> {
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

/// The master's `Conventions`: ours, with the convention's word (CF-1.12 at least, or the
/// CFA version) in place of any earlier one.
fn set_conventions(ours: &dyn NcSource, m: &mut dyn NcFile, convention: Convention) -> Result<()> {
    let had = ours.text_att(NcSource::root(ours), None, "Conventions").unwrap_or_default();
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
    let root = NcSink::root(m);
    m.put_att(root, None, "Conventions", Values::Char(words.join(" ").into_bytes()))
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
            nctype: NcType::Float,
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

//! A master copied into our dataset: its groups, dimensions, attributes and ordinary variables
//! as they are, each aggregated variable defined over its aggregated dimensions (its fragments
//! listed for `zmap::cfa`), the CFA bookkeeping left out.

use super::conventions::{aggregated_terms, fragments_04, fragments_05, fragments_cf};
use crate::dataset::Dataset;
use crate::error::{Error, Kind, Result, err};
use crate::nc::types::NcType;
use crate::source::{GroupId, NcSink, NcSource, copy_var};
use crate::zmap::cfa::{Aggregated, Fragment};
use std::collections::HashSet;

/// Attributes of the master that are CFA bookkeeping, never copied.
fn bookkeeping(name: &str) -> bool {
    name == "cf_role" || name.starts_with("cfa_") || name == "aggregated_dimensions" || name == "aggregated_data"
}

/// The master being copied: its name (fragments resolve against it) and convention.
pub(super) struct Copy<'a> {
    pub master: &'a str,
    pub version: &'a str,
    /// Every aggregated variable found, with its fill value (one element, native order).
    pub aggregated: super::AggregatedVars,
}

/// What of a group is CF bookkeeping: the fragment array variables (`map`, `uris`, ...) and the
/// dimensions only they use.
struct Hidden {
    vars: HashSet<usize>,
    dims: HashSet<String>,
}

fn hidden(file: &dyn NcSource, g: GroupId) -> Result<Hidden> {
    let nvars = file.var_count(g)?;
    let mut names = HashSet::new();
    let mut aggregated_dims = HashSet::new();
    for v in 0..nvars {
        if let Some(data) = file.text_att(g, Some(v), "aggregated_data") {
            names.extend(aggregated_terms(&data).into_iter().map(|(_, var)| var));
        }
        for att in ["aggregated_dimensions", "cfa_dimensions"] {
            if let Some(dims) = file.text_att(g, Some(v), att) {
                aggregated_dims.extend(dims.split_whitespace().map(str::to_string));
            }
        }
    }
    let (mut vars, mut used, mut hidden_dims) = (HashSet::new(), HashSet::new(), HashSet::new());
    for v in 0..nvars {
        let info = file.var(g, v)?;
        if names.contains(&info.name) {
            vars.insert(v);
            hidden_dims.extend(info.dims);
        } else {
            used.extend(info.dims);
        }
    }
    let dims = hidden_dims.into_iter().filter(|d| !used.contains(d) && !aggregated_dims.contains(d)).collect();
    Ok(Hidden { vars, dims })
}

impl Copy<'_> {
    /// Copies group `g` of the master (at `path`, "" for the root, else `g/h/`) into group `to`
    /// of ours, its sub-groups too (CFA-0.5's partition groups are bookkeeping).
    pub(super) fn group(&mut self, file: &mut dyn NcSource, g: GroupId, ours: &mut Dataset, to: GroupId, path: &str) -> Result<()> {
        let hidden = hidden(file, g)?;
        for dim in file.dims(g)? {
            if !hidden.dims.contains(&dim.name) {
                NcSink::def_dim(ours, to, &dim.name, (!dim.unlimited).then_some(dim.len))?;
            }
        }
        self.group_atts(file, g, ours, to, path.is_empty())?;
        let mut partition_groups = HashSet::new();
        for v in 0..file.var_count(g)? {
            if hidden.vars.contains(&v) {
                continue;
            }
            if let Some(group) = file.text_att(g, Some(v), "cfa_group") {
                partition_groups.insert(group);
            }
            let aggregated = file.text_att(g, Some(v), "cf_role").as_deref() == Some("cfa_variable")
                || file.text_att(g, Some(v), "aggregated_dimensions").is_some();
            if aggregated {
                let found = self.aggregated_var(file, g, v, ours, to, path)?;
                self.aggregated.push(found);
            } else {
                copy_var(file, g, v, ours, to)?;
            }
        }
        for (child, name) in file.groups(g)? {
            if partition_groups.contains(&name) {
                continue;
            }
            let into = NcSink::def_grp(ours, to, &name)?;
            self.group(file, child, ours, into, &format!("{path}{name}/"))?;
        }
        Ok(())
    }

    /// The group's attributes; the root's `Conventions` loses its CFA word (the dataset is no
    /// longer CFA-netCDF), and goes when nothing else is left.
    fn group_atts(&self, file: &dyn NcSource, g: GroupId, ours: &mut Dataset, to: GroupId, root: bool) -> Result<()> {
        for name in file.att_names(g, None)? {
            let conventions = (root && name == "Conventions").then(|| file.text_att(g, None, "Conventions")).flatten();
            if let Some(conventions) = conventions.filter(|c| c.contains("CFA-")) {
                let rest: Vec<&str> = conventions.split(' ').filter(|w| !w.starts_with("CFA-") && !w.is_empty()).collect();
                if !rest.is_empty() {
                    let text = rest.join(" ");
                    NcSink::put_att(ours, to, None, &name, crate::nc::values::Values::Char(text.into_bytes()))?;
                }
                continue;
            }
            if let Some(values) = file.att(g, None, &name)? {
                NcSink::put_att(ours, to, None, &name, values)?;
            }
        }
        Ok(())
    }

    /// The fragments of aggregated variable `v` of group `g`, per its convention's bookkeeping.
    fn fragments(&self, file: &mut dyn NcSource, g: GroupId, v: usize, shape: &[usize], xtype: NcType) -> Result<Vec<Fragment>> {
        let name = file.var(g, v)?.name;
        if let Some(json) = file.text_att(g, Some(v), "cfa_array") {
            fragments_04(self.master, &json, shape.len())
        } else if let Some(group) = file.text_att(g, Some(v), "cfa_group") {
            fragments_05(self.master, file, g, &group, shape.len())
        } else if let Some(data) = file.text_att(g, Some(v), "aggregated_data") {
            fragments_cf(self.master, file, g, &data, shape, xtype)
        } else {
            err(Kind::Invalid, format!("{name}: {} variable without cfa_array or cfa_group", self.version))
        }
    }

    /// Defines aggregated variable `v` of the master in ours.
    fn aggregated_var(
        &self,
        file: &mut dyn NcSource,
        g: GroupId,
        v: usize,
        ours: &mut Dataset,
        to: GroupId,
        path: &str,
    ) -> Result<(Aggregated, Vec<u8>)> {
        let info = file.var(g, v)?;
        let vname = info.name.clone();
        if info.xtype == NcType::String || info.xtype == NcType::Char {
            return err(Kind::BadType, format!("{vname}: aggregated {:?} variables are not supported", info.xtype));
        }
        let dims_text =
            file.text_att(g, Some(v), "cfa_dimensions").or_else(|| file.text_att(g, Some(v), "aggregated_dimensions")).unwrap_or_default();
        let dim_names: Vec<String> = dims_text.split_whitespace().map(str::to_string).collect();
        let groups = groups_down_to(file, g)?;
        let shape = dim_names.iter().map(|d| dim_len(file, &groups, d)).collect::<Result<Vec<usize>>>()?;
        let fragments = self.fragments(file, g, v, &shape, info.xtype)?;
        check_fragments(self.master, &vname, &shape, &fragments)?;
        let chunks = Aggregated::chunk_shape(&shape, &fragments);
        let id = NcSink::def_var(ours, to, &vname, info.xtype, &dim_names)?;
        if !dim_names.is_empty() {
            NcSink::def_var_chunking(ours, to, id, &chunks)?;
        }
        for name in file.att_names(g, Some(v))? {
            if bookkeeping(&name) {
                continue;
            }
            if let Some(values) = file.att(g, Some(v), &name)? {
                NcSink::put_att(ours, to, Some(id), &name, values)?;
            }
        }
        let fill = NcSource::fill(ours, to, id)?.unwrap_or_else(|| crate::nc::values::Values::default_fill(info.xtype)).to_ne_bytes();
        NcSink::enddef(ours)?;
        crate::trace::emit(1, &format!("cfa: {vname}{shape:?} in {} fragments, chunks {chunks:?}", fragments.len()));
        Ok((Aggregated { key: format!("{path}{vname}"), shape, chunks, xtype: info.xtype, fragments }, fill))
    }
}

/// The groups from the master's root down to `g`, the root alone when `g` is not below it.
fn groups_down_to(file: &dyn NcSource, g: GroupId) -> Result<Vec<GroupId>> {
    let mut path = vec![file.root()];
    if !find_path(file, file.root(), g, &mut path)? {
        path.truncate(1);
    }
    Ok(path)
}

/// The length of dimension `name` as seen from the last of `groups` (its own, else a parent's:
/// a dimension only the bookkeeping names is found by searching the groups from there up).
fn dim_len(file: &dyn NcSource, groups: &[GroupId], name: &str) -> Result<usize> {
    for group in groups.iter().rev() {
        if let Some(d) = file.dims(*group)?.into_iter().find(|d| d.name == name) {
            return Ok(d.len);
        }
    }
    Err(Error::new(Kind::BadDim, format!("aggregated dimension {name}")))
}

/// The groups from `at` down to `target` (appended to `path`); false when `target` is not below.
fn find_path(file: &dyn NcSource, at: GroupId, target: GroupId, path: &mut Vec<GroupId>) -> Result<bool> {
    if at == target {
        return Ok(true);
    }
    for (child, _) in file.groups(at)? {
        path.push(child);
        if find_path(file, child, target, path)? {
            return Ok(true);
        }
        path.pop();
    }
    Ok(false)
}

/// Every fragment inside the aggregated array (a hostile or broken master is refused), and in
/// the master's own place unless the user allowed more (README "Security").
fn check_fragments(master: &str, vname: &str, shape: &[usize], fragments: &[Fragment]) -> Result<()> {
    for f in fragments {
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
    Ok(())
}

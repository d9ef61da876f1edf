//! Inquiries and id lookups, answered in Rust values: the C layer only writes them out. Group
//! ids are the model's (`gid`); the C layer turns them into ncids.

use super::*;
use crate::model::Dim;

/// What `nc_inq` reports for one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCounts {
    pub ndims: usize,
    pub nvars: usize,
    pub natts: usize,
    /// The group's first unlimited dimension, if any (netCDF-3's one record dimension).
    pub unlimited: Option<usize>,
}

impl Dataset {
    pub fn group_counts(&self, gid: usize) -> GroupCounts {
        let g = &self.model.groups[gid];
        GroupCounts { ndims: g.dims.len(), nvars: g.vars.len(), natts: g.atts.len(), unlimited: self.model.first_unlimited(gid) }
    }

    /// The group's unlimited dimensions, in definition order.
    pub fn unlimited_dims(&self, gid: usize) -> Vec<usize> {
        self.model.groups[gid].dims.iter().copied().filter(|&d| self.model.dims[d].unlimited).collect()
    }

    /// Dimension ids visible in a group (with its ancestors' when `include_parents`), sorted.
    pub fn dim_ids(&self, gid: usize, include_parents: bool) -> Vec<usize> {
        let mut ids = Vec::new();
        let mut cur = Some(gid);
        while let Some(g) = cur {
            ids.extend(self.model.groups[g].dims.iter().copied());
            cur = if include_parents { self.model.groups[g].parent } else { None };
        }
        ids.sort_unstable();
        ids
    }

    /// A dimension by name, searched in the group and then its ancestors (NC_EBADDIM).
    pub fn dim_id(&self, gid: usize, name: &str) -> Result<usize> {
        if name.contains('/') {
            // A path: netcdf-c rejects it here rather than resolving it.
            return err(Kind::Invalid, format!("dimension path {name:?}"));
        }
        self.model.find_dim(gid, name).ok_or_else(|| Error::new(Kind::BadDim, name.to_string()))
    }

    /// A dimension by id (file-wide numbering; NC_EBADDIM).
    pub fn dim_info(&self, dimid: i32) -> Result<&Dim> {
        self.model.dim(dimid)
    }

    pub fn group_name(&self, gid: usize) -> &str {
        &self.model.groups[gid].name
    }

    /// "/g1/g2", "/" for the root.
    pub fn group_full_name(&self, gid: usize) -> String {
        self.model.full_name(gid)
    }

    /// The parent group (the root has none: NC_ENOGRP).
    pub fn group_parent(&self, gid: usize) -> Result<usize> {
        self.model.groups[gid].parent.ok_or_else(|| Error::new(Kind::NoGroup, "root has no parent"))
    }

    pub fn child_groups(&self, gid: usize) -> &[usize] {
        &self.model.groups[gid].children
    }

    /// A direct child group by name (NC_ENOGRP); a name holding `/` is NC_EBADNAME.
    pub fn child_group(&self, gid: usize, name: &str) -> Result<usize> {
        if name.contains('/') || name.is_empty() {
            return err(Kind::BadName, format!("group name {name:?}"));
        }
        self.child_by_name(gid, name).ok_or_else(|| Error::new(Kind::NoGroup, name.to_string()))
    }

    /// A group by path below `gid` ("a/b" or "/a/b"; NC_ENOGRP).
    pub fn group_by_path(&self, gid: usize, path: &str) -> Result<usize> {
        let mut g = gid;
        for seg in path.split('/').filter(|s| !s.is_empty()) {
            g = self.child_by_name(g, seg).ok_or_else(|| Error::new(Kind::NoGroup, path.to_string()))?;
        }
        Ok(g)
    }

    fn child_by_name(&self, gid: usize, name: &str) -> Option<usize> {
        let name = names::normalize(name);
        self.model.groups[gid].children.iter().copied().find(|&c| self.model.groups[c].name == name)
    }

    pub fn var_count(&self, gid: usize) -> usize {
        self.model.groups[gid].vars.len()
    }

    /// A variable by name (NC_ENOTVAR).
    pub fn var_id(&self, gid: usize, name: &str) -> Result<usize> {
        self.model.groups[gid].vars.iter().position(|v| v.name == name).ok_or_else(|| Error::new(Kind::NotVar, name.to_string()))
    }

    /// `nc_inq_var_fill`: whether fill is off, and the fill value in use (`_FillValue` if set,
    /// else the type's default: after deleting `_FillValue` the default is reported again,
    /// where netcdf-c keeps reporting the deleted value, c-api.md §8.3).
    pub fn var_fill(&self, gid: usize, varid: VarRef) -> Result<(bool, Values)> {
        let v = self.model.var(gid, varid)?;
        Ok((v.no_fill, v.declared_fill()))
    }

    /// An attribute's number in its list. `_NCProperties` exists but has no number
    /// (NC_EATTMETA, as netcdf-c answers for its hidden attributes).
    pub fn att_id(&self, gid: usize, varid: VarRef, name: &str) -> Result<usize> {
        let atts = self.model.atts(gid, varid)?;
        match atts.iter().position(|a| a.name == name) {
            Some(i) => Ok(i),
            None if varid == VarRef::Global && name == "_NCProperties" && self.virtual_att(gid, varid, name).is_some() => {
                err(Kind::AttMeta, "_NCProperties has no attribute number")
            }
            None => err(Kind::NotAtt, name.to_string()),
        }
    }

    /// An attribute's name by number (NC_ENOTATT past the end).
    pub fn att_name(&self, gid: usize, varid: VarRef, attnum: i32) -> Result<&str> {
        let atts = self.model.atts(gid, varid)?;
        usize::try_from(attnum)
            .ok()
            .and_then(|i| atts.get(i))
            .map(|a| a.name.as_str())
            .ok_or_else(|| Error::new(Kind::NotAtt, format!("attnum {attnum}")))
    }

    pub fn att_count(&self, gid: usize, varid: VarRef) -> Result<usize> {
        Ok(self.model.atts(gid, varid)?.len())
    }

    /// `nc_inq_format`: netCDF-4 classic model or netCDF-4.
    pub fn is_classic_model(&self) -> bool {
        self.classic
    }

    /// The format of the netCDF file a lazy open read this dataset from (`None`: Zarr).
    pub fn scanned_from(&self) -> Option<crate::nc::magic::FileFormat> {
        self.scanned.as_ref().map(|s| s.format)
    }

    /// How the netCDF file a lazy open read stores variable `varid` of group `gid`, when not
    /// in chunks (`nc_inq_var_chunking` answers as netcdf-c does for that file).
    pub fn scanned_storage(&self, gid: usize, varid: usize) -> Option<crate::nc::modes::Storage> {
        self.scanned.as_ref().and_then(|s| s.storage.get(&(gid, varid)).copied())
    }

    /// The name the dataset was opened or created with (`nc_inq_path`).
    pub fn path(&self) -> &str {
        &self.spec.original
    }
}

/// Lookups the C layer needs beside the summaries above, and the few settings it changes: it
/// never walks the model itself.
impl Dataset {
    /// A variable's definition.
    pub fn var(&self, gid: usize, varid: VarRef) -> Result<&Var> {
        self.model.var(gid, varid)
    }

    /// A variable's rank; 0 for NC_GLOBAL or a missing variable, which the caller's next step
    /// reports in netcdf-c's order (after its own checks).
    pub fn rank_or_zero(&self, gid: usize, varid: VarRef) -> usize {
        self.model.var(gid, varid).map(|v| v.rank()).unwrap_or(0)
    }

    /// The attributes of a variable, or of the group for NC_GLOBAL.
    pub fn atts(&self, gid: usize, varid: VarRef) -> Result<&[Att]> {
        self.model.atts(gid, varid).map(|a| a.as_slice())
    }

    /// How many groups the dataset has (group ids are `0..group_count()`).
    pub fn group_count(&self) -> usize {
        self.model.groups.len()
    }

    /// The id of the variable named `name` in group `gid`.
    pub fn var_named(&self, gid: usize, name: &str) -> Result<usize> {
        self.model.groups[gid].vars.iter().position(|v| v.name == name).ok_or_else(|| Error::new(Kind::NotVar, name.to_string()))
    }

    /// The record variables of a group (first dimension its first unlimited one): id, every
    /// dimension's length, and type. None when the group has no unlimited dimension.
    pub fn record_vars(&self, gid: usize) -> Vec<(usize, Vec<usize>, NcType)> {
        let Some(unlim) = self.model.first_unlimited(gid) else { return Vec::new() };
        let vars = self.model.groups[gid].vars.iter().enumerate();
        vars.filter(|(_, v)| v.dimids.first() == Some(&unlim))
            .map(|(varid, v)| (varid, v.dimids.iter().map(|&d| self.model.dims[d].len as usize).collect(), v.nctype))
            .collect()
    }

    /// What `nc_copy_var` takes from its input: the variable, and its dimensions' names (the
    /// output finds its own dimensions by name).
    pub fn var_for_copy(&self, gid: usize, varid: VarRef) -> Result<(Var, Vec<String>)> {
        let v = self.model.var(gid, varid)?.clone();
        let names = v.dimids.iter().map(|&d| self.model.dims[d].name.clone()).collect();
        Ok((v, names))
    }

    /// Whether the dataset was opened for writing.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// The mode argument of the create or open.
    pub fn mode(&self) -> OpenFlags {
        self.mode
    }

    /// v2 or v3.
    pub fn format(&self) -> ZarrFormat {
        self.format
    }

    /// The whole model, for `nc_show_metadata`'s trace.
    pub fn describe(&self) -> String {
        format!("{:#?}", *self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nc::modes::OpenFlags;

    fn scratch(name: &str) -> (Dataset, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("nczarr-inquire-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let url = format!("file://{}#mode=nczarr,file", dir.display());
        let spec = crate::url::parse(&url).unwrap().unwrap();
        (Dataset::create(spec, OpenFlags::from_bits(0)).unwrap(), dir)
    }

    #[test]
    fn groups_dims_and_vars_answer_in_rust_values() {
        let (mut ds, dir) = scratch("tree");
        let t = ds.def_dim(0, b"time", 0).unwrap();
        let x = ds.def_dim(0, b"x", 4).unwrap();
        let g = ds.def_grp(0, b"sub").unwrap();
        let y = ds.def_dim(g, b"y", 2).unwrap();
        let v = ds.def_var(g, b"v", NcType::Float, &[crate::model::DimId(t), crate::model::DimId(y)]).unwrap();
        ds.put_att(g, VarRef::Var(v), b"units", NcType::Char, Values::Char(b"m".to_vec())).unwrap();

        assert_eq!(ds.group_counts(0), GroupCounts { ndims: 2, nvars: 0, natts: 0, unlimited: Some(t) });
        assert_eq!(ds.unlimited_dims(0), vec![t]);
        assert_eq!(ds.dim_ids(g, false), vec![y]);
        assert_eq!(ds.dim_ids(g, true), vec![t, x, y]);
        assert_eq!(ds.dim_id(g, "x").unwrap(), x, "ancestors' dimensions are visible");
        assert_eq!(ds.dim_id(g, "a/b").unwrap_err().kind, Kind::Invalid);
        assert_eq!(ds.dim_id(0, "y").unwrap_err().kind, Kind::BadDim, "a child's dimension is not");
        assert_eq!(ds.child_group(0, "sub").unwrap(), g);
        assert_eq!(ds.child_group(0, "nope").unwrap_err().kind, Kind::NoGroup);
        assert_eq!(ds.child_group(0, "a/b").unwrap_err().kind, Kind::BadName);
        assert_eq!(ds.group_by_path(0, "/sub").unwrap(), g);
        assert_eq!(ds.group_full_name(g), "/sub");
        assert_eq!(ds.group_parent(g).unwrap(), 0);
        assert_eq!(ds.group_parent(0).unwrap_err().kind, Kind::NoGroup);
        assert_eq!(ds.var_id(g, "v").unwrap(), v);
        assert_eq!(ds.var_id(0, "v").unwrap_err().kind, Kind::NotVar);
        let s = ds.var(g, VarRef::Var(v)).unwrap();
        assert_eq!((s.name.as_str(), s.nctype, s.dimids.clone(), s.atts.len()), ("v", NcType::Float, vec![t, y], 1));
        assert_eq!(ds.var(g, VarRef::Global).unwrap_err().kind, Kind::NotVar);
        assert_eq!(ds.att_id(g, VarRef::Var(v), "units").unwrap(), 0);
        assert_eq!(ds.att_name(g, VarRef::Var(v), 0).unwrap(), "units");
        assert_eq!(ds.att_name(g, VarRef::Var(v), 1).unwrap_err().kind, Kind::NotAtt);
        assert_eq!(ds.att_id(0, VarRef::Global, "_NCProperties").unwrap_err().kind, Kind::AttMeta);
        let (no_fill, fill) = ds.var_fill(g, VarRef::Var(v)).unwrap();
        assert!(!no_fill);
        assert_eq!(fill, Values::default_fill(NcType::Float));
        ds.close().unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}

//! A `Dataset` as an `NcSource` and an `NcSink` (`source.rs`): an NCZarr master or fragment is
//! read, and an aggregated dataset built, with no C call in between. Group ids are the model's.

use super::Dataset;
use crate::engine::{Mem, MemType, Request};
use crate::error::{Error, Kind, Result};
use crate::nc::modes::{Storage, VarRef};
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::source::{DimInfo, GroupId, NcSink, NcSource, VarInfo};

fn var_ref(v: Option<usize>) -> VarRef {
    v.map_or(VarRef::Global, VarRef::Var)
}

impl Dataset {
    fn group_checked(&self, g: GroupId) -> Result<usize> {
        if g.0 < self.model.groups.len() { Ok(g.0) } else { Err(Error::new(Kind::BadGroupId, format!("group {}", g.0))) }
    }

    /// The selection of `count` elements at `start` (leaving define mode first, as a data call does).
    fn selection(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize], write: bool) -> Result<crate::engine::Selection> {
        let gid = self.group_checked(g)?;
        self.begin_data()?;
        let req = Request { start: Some(start), count: Some(count), stride: None, imap: None };
        self.select(gid, VarRef::Var(v), &req, write)
    }
}

impl NcSource for Dataset {
    fn root(&self) -> GroupId {
        GroupId(0)
    }

    fn groups(&self, g: GroupId) -> Result<Vec<(GroupId, String)>> {
        let gid = self.group_checked(g)?;
        Ok(self.model.groups[gid].children.iter().map(|&c| (GroupId(c), self.model.groups[c].name.clone())).collect())
    }

    fn dims(&self, g: GroupId) -> Result<Vec<DimInfo>> {
        let gid = self.group_checked(g)?;
        Ok(self.model.groups[gid]
            .dims
            .iter()
            .map(|&d| {
                let dim = &self.model.dims[d];
                DimInfo { name: dim.name.clone(), len: dim.len as usize, unlimited: dim.unlimited }
            })
            .collect())
    }

    fn var_count(&self, g: GroupId) -> Result<usize> {
        Ok(self.model.groups[self.group_checked(g)?].vars.len())
    }

    fn var(&self, g: GroupId, v: usize) -> Result<VarInfo> {
        let var = self.model.var(self.group_checked(g)?, VarRef::Var(v))?;
        Ok(VarInfo {
            name: var.name.clone(),
            xtype: var.nctype,
            dims: var.dimids.iter().map(|&d| self.model.dims[d].name.clone()).collect(),
            shape: self.model.var_shape(var).into_iter().map(|n| n as usize).collect(),
        })
    }

    fn var_id(&self, g: GroupId, name: &str) -> Result<Option<usize>> {
        Ok(self.model.groups[self.group_checked(g)?].vars.iter().position(|v| v.name == name))
    }

    fn att_names(&self, g: GroupId, v: Option<usize>) -> Result<Vec<String>> {
        Ok(self.atts(self.group_checked(g)?, var_ref(v))?.iter().map(|a| a.name.clone()).collect())
    }

    fn att(&self, g: GroupId, v: Option<usize>, name: &str) -> Result<Option<Values>> {
        Ok(self.atts(self.group_checked(g)?, var_ref(v))?.iter().find(|a| a.name == name).map(|a| a.value.clone()))
    }

    fn fill(&self, g: GroupId, v: usize) -> Result<Option<Values>> {
        let (no_fill, value) = self.var_fill(self.group_checked(g)?, VarRef::Var(v))?;
        Ok((!no_fill).then_some(value))
    }

    fn get_vara(&mut self, g: GroupId, v: usize, xtype: NcType, start: &[usize], count: &[usize], out: &mut [u8]) -> Result<()> {
        let sel = self.selection(g, v, start, count, false)?;
        if sel.nelems() == 0 {
            return Ok(());
        }
        let mem = if xtype == NcType::Char { MemType::Text } else { MemType::Num(xtype) };
        self.read(g.0, VarRef::Var(v), &sel, Mem::Bytes(out, mem))
    }

    fn get_strings(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize]) -> Result<Vec<Option<String>>> {
        let sel = self.selection(g, v, start, count, false)?;
        let mut slots: Vec<Option<Option<String>>> = vec![None; sel.nelems() as usize];
        if !slots.is_empty() {
            self.read(g.0, VarRef::Var(v), &sel, Mem::Strings(&mut slots))?;
        }
        Ok(slots.into_iter().map(Option::flatten).collect())
    }
}

impl NcSink for Dataset {
    fn root(&self) -> GroupId {
        GroupId(0)
    }

    fn def_grp(&mut self, parent: GroupId, name: &str) -> Result<GroupId> {
        let gid = self.group_checked(parent)?;
        Ok(GroupId(Dataset::def_grp(self, gid, name.as_bytes())?))
    }

    fn def_dim(&mut self, g: GroupId, name: &str, len: Option<usize>) -> Result<()> {
        let gid = self.group_checked(g)?;
        Dataset::def_dim(self, gid, name.as_bytes(), len.unwrap_or(0) as u64).map(|_| ())
    }

    fn def_var(&mut self, g: GroupId, name: &str, xtype: NcType, dims: &[String]) -> Result<usize> {
        let gid = self.group_checked(g)?;
        let ids: Vec<crate::model::DimId> = dims.iter().map(|d| self.dim_id(gid, d).map(crate::model::DimId)).collect::<Result<_>>()?;
        Dataset::def_var(self, gid, name.as_bytes(), xtype, &ids)
    }

    fn def_var_chunking(&mut self, g: GroupId, v: usize, chunks: &[usize]) -> Result<()> {
        let gid = self.group_checked(g)?;
        let sizes = chunks.iter().map(|&c| c as u64).collect();
        Dataset::def_var_chunking(self, gid, VarRef::Var(v), Storage::Chunked, Some(sizes))
    }

    fn put_att(&mut self, g: GroupId, v: Option<usize>, name: &str, values: Values) -> Result<()> {
        let gid = self.group_checked(g)?;
        let nctype = values.nctype();
        Dataset::put_att(self, gid, var_ref(v), name.as_bytes(), nctype, values)
    }

    fn enddef(&mut self) -> Result<()> {
        if self.define_mode { Dataset::enddef(self) } else { Ok(()) }
    }

    fn put_vara(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize], data: &[u8]) -> Result<()> {
        let sel = self.selection(g, v, start, count, true)?;
        if sel.nelems() == 0 {
            return Ok(());
        }
        let xtype = self.model.var(g.0, VarRef::Var(v))?.nctype;
        let mem = if xtype == NcType::Char { MemType::Text } else { MemType::Num(xtype) };
        // (The engine takes memory it may also read back into; a copy keeps the caller's.)
        let mut bytes = data.to_vec();
        self.write(g.0, VarRef::Var(v), &sel, Mem::Bytes(&mut bytes, mem))
    }

    fn put_strings(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize], data: &[Option<String>]) -> Result<()> {
        let sel = self.selection(g, v, start, count, true)?;
        if sel.nelems() == 0 {
            return Ok(());
        }
        let mut slots: Vec<Option<Option<String>>> = data.iter().map(|s| Some(s.clone())).collect();
        self.write(g.0, VarRef::Var(v), &sel, Mem::Strings(&mut slots))
    }

    fn def_var_fill(&mut self, g: GroupId, v: usize, fill: Values) -> Result<()> {
        let gid = self.group_checked(g)?;
        Dataset::def_var_fill(self, gid, VarRef::Var(v), false, Some(fill))
    }

    fn def_var_endian_big(&mut self, g: GroupId, v: usize) -> Result<()> {
        let gid = self.group_checked(g)?;
        Dataset::def_var_endian(self, gid, VarRef::Var(v), crate::nc::modes::EndianRequest::Big)
    }

    fn def_var_filter(&mut self, g: GroupId, v: usize, id: u32, params: &[u32]) -> Result<()> {
        let gid = self.group_checked(g)?;
        Dataset::def_var_filter(self, gid, VarRef::Var(v), id, params.to_vec())
    }
}

impl crate::source::NcFile for Dataset {
    fn close(self: Box<Self>) -> Result<()> {
        Dataset::close(*self)
    }

    fn abort(self: Box<Self>) -> Result<()> {
        Dataset::abort(*self)
    }
}

/// Datasets built in memory from another file (aggregated datasets, `aggregate/`).
impl Dataset {
    /// What an open of the built dataset gives: its metadata and data stored, then read-only
    /// with `omode` over `store` (which holds what the old one held, and more).
    pub fn seal_on(&mut self, omode: crate::nc::modes::OpenFlags, store: Box<dyn crate::zmap::Zmap>) -> Result<()> {
        if self.define_mode {
            Dataset::enddef(self)?;
        }
        self.persist()?;
        self.store = store;
        self.layouts.clear();
        self.model.number_dims_depth_first();
        self.writable = false;
        self.created = false;
        self.dirty = false;
        self.mode = omode;
        for gid in 0..self.model.groups.len() {
            self.mark_group_written(gid);
        }
        Ok(())
    }

    /// Marks the dataset as scanned from a netCDF file (`classic`: of the classic model,
    /// netCDF-3 or netCDF-4 classic).
    pub(crate) fn set_scanned(&mut self, scanned: super::Scanned, classic: bool) {
        self.scanned = Some(scanned);
        self.classic = classic;
    }

    /// Sets the length of unlimited dimension `name` of group `gid` (a dataset built over
    /// data that is already stored: a lazy open's).
    pub(crate) fn set_unlimited_len(&mut self, gid: usize, name: &str, len: u64) -> Result<()> {
        let d = self.dim_id(gid, name)?;
        let dim = &mut self.model.dims[d];
        if !dim.unlimited {
            return Err(Error::new(Kind::Internal, format!("dimension {name} is not unlimited")));
        }
        dim.len = len;
        self.dirty = true;
        Ok(())
    }

    /// Aggregated variable `agg` (fill value `fill`) as a fragment writer sees it.
    pub fn aggregated_array_info(&self, agg: &crate::zmap::cfa::Aggregated, fill: &[u8]) -> Result<crate::zmap::cfa::write::ArrayInfo> {
        let (parent, name) = agg.key.rsplit_once('/').map_or(("", agg.key.as_str()), |(p, n)| (p, n));
        let gid = if parent.is_empty() { 0 } else { self.group_by_path(0, parent)? };
        let var = self.model.var(gid, VarRef::Var(self.var_id(gid, name)?))?;
        let dims = var
            .dimids
            .iter()
            .zip(&agg.shape)
            .map(|(&d, &len)| (self.model.dims[d].name.clone(), len as u64, self.model.dims[d].unlimited))
            .collect();
        Ok(crate::zmap::cfa::write::ArrayInfo {
            key: agg.key.clone(),
            name: agg.key.clone(),
            root: true,
            dims,
            chunks: agg.chunks.iter().map(|&c| c as u64).collect(),
            nctype: agg.xtype,
            big_endian: false,
            fill: fill.to_vec(),
            filters: Vec::new(),
            // (The first sync tells the store the variables' attributes.)
            attributes: Vec::new(),
        })
    }
}

//! Making a dataset durable: renamed nodes' objects moved, dirty chunks written, then the
//! metadata objects whose bytes changed, in crash-safe order.

use super::*;
use crate::format::RenderOptions;
use crate::zmap::Key;

impl Dataset {
    /// Makes everything durable in crash-safe order: moved objects of renamed nodes, then
    /// chunks, then array metadata, then group metadata (`flush_metadata`).
    pub(crate) fn persist(&mut self) -> Result<()> {
        let r = self.write_out().and_then(|()| self.store.flush());
        self.after_store_call(r)
    }

    /// A storage failure may be a metadata write made behind the caller (S3) that the store
    /// reports only now, at any later call: what `stored` says is on storage can no longer be
    /// trusted, so the next persist writes every metadata object again, and nothing retired
    /// is deleted until that has succeeded.
    pub(super) fn after_store_call<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r
            && self.writable
            && matches!(e.kind, Kind::S3 | Kind::Io | Kind::Errno(_) | Kind::Access | Kind::NoObject)
        {
            self.stored.clear();
            self.dirty = true;
        }
        r
    }

    /// What `persist` stores, in the same order, without waiting until the store has it: nc_create
    /// and nc_enddef write the metadata so far but are not durability points (nc_sync and
    /// nc_close are), so on S3 their waves go up while the program goes on.
    pub(crate) fn persist_behind(&mut self) -> Result<()> {
        let r = self.write_out();
        self.after_store_call(r)
    }

    fn write_out(&mut self) -> Result<()> {
        if self.par.is_some() {
            return self.persist_par();
        }
        self.apply_renames()?;
        for crate::model::VarKey { gid, varid } in self.chunks.dirty_vars() {
            let layout = self.chunk_layout(gid, varid)?;
            let var = self.model.var(gid, VarRef::Var(varid))?;
            crate::zmap::adapter::shard::through(
                self.store.as_ref(),
                &self.shard_indexes,
                var,
                &layout.key,
                layout.stored_limit(),
                |store| self.chunks.flush_var(store, crate::model::VarKey::new(gid, varid), &layout),
            )?;
        }
        self.flush_metadata()?;
        self.delete_retired()?;
        if let Some(arrays) = &self.arrays_out {
            arrays.set(self.array_infos())?;
        }
        Ok(())
    }

    /// The last step of a rename: the old keys' objects go once no stored metadata names them.
    pub(super) fn delete_retired(&mut self) -> Result<()> {
        if self.retired.is_empty() {
            return Ok(());
        }
        // Stored, not just sent: an S3 metadata wave may still be in flight, and may fail. (A
        // versioned store has no order to keep, and its flush would commit a half-made version.)
        if !self.store.caps().versioned {
            self.store.flush()?;
        }
        while let Some(old) = self.retired.pop() {
            if let Err(e) = self.store.delete_prefix(&Key::new(old.clone())?) {
                self.retired.push(old);
                return Err(e);
            }
        }
        Ok(())
    }

    /// From now on, `arrays` is told this dataset's arrays after their metadata is written (at
    /// every enddef, sync and close): an aggregated dataset's store, which writes each chunk
    /// into a fragment file of its array, reads them there.
    pub fn tell_arrays(&mut self, arrays: std::sync::Arc<crate::zmap::cfa::write::Arrays>) {
        self.arrays_out = Some(arrays);
    }

    /// Every variable as a store that lays out arrays itself sees it (`tell_arrays`).
    fn array_infos(&self) -> Vec<crate::zmap::cfa::write::ArrayInfo> {
        let mut out = Vec::new();
        for (gid, group) in self.model.groups.iter().enumerate() {
            for (varid, var) in group.vars.iter().enumerate() {
                let dims = var.dimids.iter().map(|&d| &self.model.dims[d]).map(|d| (d.name.clone(), d.len, d.unlimited)).collect();
                out.push(crate::zmap::cfa::write::ArrayInfo {
                    key: var.stored.key.clone().unwrap_or_else(|| self.model.var_key(gid, varid)),
                    name: var.name.clone(),
                    root: gid == 0,
                    dims,
                    chunks: var.chunks.clone(),
                    nctype: var.nctype,
                    big_endian: var.endian == crate::model::Endian::Big && var.nctype.is_numeric(),
                    fill: var.fill_value().to_ne_bytes(),
                    filters: var.filters.clone(),
                    attributes: var.atts.iter().filter(|a| !a.synthetic).map(|a| (a.name.clone(), a.value.clone())).collect(),
                });
            }
        }
        out
    }

    /// The chunk layout of a variable, at the key its objects live under now: built once and
    /// kept until the model changes (`layouts.rs`).
    pub(crate) fn chunk_layout(&self, gid: usize, varid: usize) -> Result<std::sync::Arc<crate::engine::Layout>> {
        let raw = self.store.caps().raw_chunks;
        self.layouts.get(&self.model, crate::model::VarKey::new(gid, varid), |model| {
            let var = model.var(gid, VarRef::Var(varid))?;
            let key = var.stored.key.clone().unwrap_or_else(|| model.var_key(gid, varid));
            let layout = crate::engine::Layout::new(model, var, key)?;
            // A store that takes values lays them out itself (an aggregated dataset).
            Ok(if raw { layout.into_values() } else { layout })
        })
    }

    /// Writes every metadata object whose bytes differ from storage, in crash-safe order.
    /// Only `persist` calls it, after renamed nodes' objects have been moved.
    pub(super) fn flush_metadata(&mut self) -> Result<()> {
        self.flush_metadata_as(true)
    }

    /// How this dataset's metadata is rendered.
    pub(super) fn render_options(&self) -> RenderOptions {
        RenderOptions {
            flavor: self.flavor,
            xarray: self.spec.xarray,
            strict_char: self.spec.strict_char,
            nc_properties: if self.nc_properties.is_empty() { NC_PROPERTIES.to_string() } else { self.nc_properties.clone() },
            // On S3 every object costs a round trip, so datasets there carry consolidated
            // metadata unless the name says `noconsolidated`: an open is then one batch.
            consolidated: self.spec.consolidated == Some(true)
                || self.has_zmetadata
                || (self.spec.consolidated.is_none() && self.spec.s3.is_some()),
            classic: self.classic,
        }
    }

    /// `write`: false on the ranks of a parallel dataset other than 0, which keep the
    /// bookkeeping of what is stored but leave the writing to rank 0.
    pub(super) fn flush_metadata_as(&mut self, write: bool) -> Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let opts = self.render_options();
        let rendered = self.format.render(&self.model, &opts);
        let changed: Vec<(String, Vec<u8>)> = rendered.into_iter().filter(|(k, b)| self.stored.get(k) != Some(b)).collect();
        // Crash-safe order, one concurrent batch per wave: every array's objects, then groups
        // deepest first (a group lists its children, so they must exist before it does), the
        // consolidated document last. A writer killed between waves leaves the old listing.
        let arrays: std::collections::HashSet<String> = (0..self.model.groups.len())
            .flat_map(|g| (0..self.model.groups[g].vars.len()).map(move |v| (g, v)))
            .map(|(g, v)| self.model.var_key(g, v))
            .collect();
        let node_of = |key: &str| key.rsplit_once('/').map_or(String::new(), |(node, _)| node.to_string());
        let depth = |node: &str| if node.is_empty() { 0 } else { node.split('/').count() };
        let deepest = changed.iter().map(|(k, _)| depth(&node_of(k))).max().unwrap_or(0);
        // Within a node, v2's `.zattrs` goes before the `.zarray`/`.zgroup` that makes the node
        // exist: a pure Zarr reader lists nodes, and must not find a new variable without its
        // attributes (`_ARRAY_DIMENSIONS`, `units`).
        let wave_of = |key: &str| {
            let node = node_of(key);
            let level = if key == ".zmetadata" {
                deepest + 2
            } else if arrays.contains(&node) {
                0
            } else {
                1 + deepest - depth(&node)
            };
            2 * level + usize::from(!key.ends_with(".zattrs"))
        };
        let mut waves: std::collections::BTreeMap<usize, Vec<(String, Vec<u8>)>> = std::collections::BTreeMap::new();
        for (key, bytes) in changed {
            waves.entry(wave_of(&key)).or_default().push((key, bytes));
        }
        for (_, wave) in waves {
            if write {
                let items = wave.iter().map(|(k, b)| Ok((Key::new(k.as_str())?, b.clone()))).collect::<Result<Vec<_>>>()?;
                self.store.put_many(items)?;
            }
            self.stored.extend(wave);
        }
        for gid in 0..self.model.groups.len() {
            let gkey = self.model.group_key(gid);
            self.model.groups[gid].stored_key = Some(gkey);
            for varid in 0..self.model.groups[gid].vars.len() {
                let vkey = self.model.var_key(gid, varid);
                self.model.groups[gid].vars[varid].stored.key = Some(vkey);
            }
        }
        self.dirty = false;
        Ok(())
    }

    /// Puts the objects of renamed groups and variables at their new keys (FIX of netcdf-c's
    /// rename data loss): groups top-down, then variables. Crash-safe order (reliability.md):
    /// the objects are copied (hard links on a directory store) and the old keys deleted only
    /// after the metadata that names the new keys is stored (`delete_retired`), so a writer
    /// stopped at any point leaves a dataset with the old names or the new ones, never a
    /// variable whose metadata names a directory that is gone. A pure Zarr dataset without a
    /// consolidated document is its own listing: there one directory rename is the commit.
    pub(super) fn apply_renames(&mut self) -> Result<()> {
        self.clear_new_keys()?;
        self.renames(true)
    }

    /// The bookkeeping of `apply_renames` without moving anything: ranks of a parallel
    /// dataset other than 0, after rank 0 moved the objects.
    pub(super) fn note_renames(&mut self) {
        // Without store calls nothing here can fail.
        let _ = self.renames(false);
        self.retired.clear();
    }

    /// Nodes defined since the dataset was opened start empty: objects a writer stopped before
    /// `delete_retired` left under their keys (invisible until then, since no metadata names
    /// them) must not become a new variable's data.
    fn clear_new_keys(&mut self) -> Result<()> {
        if self.created {
            return Ok(());
        }
        let mut fresh = Vec::new();
        for gid in 0..self.model.groups.len() {
            if gid > 0 && self.model.groups[gid].stored_key.is_none() {
                fresh.push(self.model.group_key(gid));
                continue;
            }
            for varid in 0..self.model.groups[gid].vars.len() {
                if self.model.groups[gid].vars[varid].stored.key.is_none() {
                    fresh.push(self.model.var_key(gid, varid));
                }
            }
        }
        fresh.iter().try_for_each(|k| self.store.delete_prefix(&Key::new(k.as_str())?))
    }

    fn renames(&mut self, move_objects: bool) -> Result<()> {
        let atomic = self.layout == crate::format::Layout::Pure && !self.render_options().consolidated;
        for gid in 1..self.model.groups.len() {
            let now = self.model.group_key(gid);
            if let Some(old) = self.model.groups[gid].stored_key.clone()
                && old != now
            {
                if move_objects {
                    self.move_prefix(&old, &now, atomic)?;
                }
                let lead = format!("{old}/");
                let fix = |k: &mut Option<String>| {
                    if let Some(s) = k.as_mut()
                        && let Some(rest) = s.strip_prefix(&lead)
                    {
                        *s = format!("{now}/{rest}");
                    }
                };
                for g in &mut self.model.groups {
                    fix(&mut g.stored_key);
                    for v in &mut g.vars {
                        fix(&mut v.stored.key);
                    }
                }
                self.model.groups[gid].stored_key = Some(now.clone());
                self.stored.retain(|k, _| !k.starts_with(&lead));
                self.shard_indexes.forget_prefix(&lead);
            }
        }
        for gid in 0..self.model.groups.len() {
            for varid in 0..self.model.groups[gid].vars.len() {
                let now = self.model.var_key(gid, varid);
                if let Some(old) = self.model.groups[gid].vars[varid].stored.key.clone()
                    && old != now
                    && !old.is_empty()
                {
                    if move_objects {
                        self.move_prefix(&old, &now, atomic)?;
                    }
                    let lead = format!("{old}/");
                    self.stored.retain(|k, _| !k.starts_with(&lead));
                    self.shard_indexes.forget_prefix(&lead);
                    self.model.groups[gid].vars[varid].stored.key = Some(now);
                }
            }
        }
        if move_objects {
            self.retire_reused_keys()?;
        }
        Ok(())
    }

    /// The objects under `old` made present under `now`; `old` kept until `delete_retired`
    /// unless one step moves them (`atomic`).
    fn move_prefix(&mut self, old: &str, now: &str, atomic: bool) -> Result<()> {
        let (from, to) = (Key::new(old)?, Key::new(now)?);
        if atomic {
            return self.store.rename_prefix(&from, &to);
        }
        // A key retired earlier in this update that is reused now (a -> b, then c -> a) must
        // not be deleted after its new objects are written.
        self.retired.retain(|r| r != now && !r.starts_with(&format!("{now}/")));
        self.store.copy_prefix(&from, &to)?;
        self.retired.push(old.to_string());
        Ok(())
    }

    /// A retired key that a node now lives under (a variable renamed away and another given
    /// its old name in the same define session) cannot wait until the metadata is stored: its
    /// old objects would become the new node's. They go now; this one case is not crash-safe.
    fn retire_reused_keys(&mut self) -> Result<()> {
        if self.retired.is_empty() {
            return Ok(());
        }
        let mut live = Vec::new();
        for g in 0..self.model.groups.len() {
            live.push(self.model.group_key(g));
            live.extend((0..self.model.groups[g].vars.len()).map(|v| self.model.var_key(g, v)));
        }
        let (reused, kept): (Vec<String>, Vec<String>) =
            std::mem::take(&mut self.retired).into_iter().partition(|r| live.iter().any(|k| k == r || k.starts_with(&format!("{r}/"))));
        self.retired = kept;
        reused.iter().try_for_each(|r| self.store.delete_prefix(&Key::new(r.as_str())?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DimId;
    use crate::nc::modes::{FillMode, OpenFlags, QuantizeMode, Storage};
    use crate::zmap::file::FileStore;

    fn scratch(name: &str, mode: &str) -> (String, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("nczarr-persist-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (format!("file://{}#mode={mode}", dir.display()), dir)
    }

    fn create(url: &str) -> Dataset {
        Dataset::create(crate::url::parse(url).unwrap().unwrap(), OpenFlags::from_bits(0)).unwrap()
    }

    /// Defines a dataset touching every kind of metadata the writers render.
    fn populate(ds: &mut Dataset) {
        let t = DimId(ds.def_dim(0, b"time", 0).unwrap());
        let x = DimId(ds.def_dim(0, b"x", 6).unwrap());
        let g = ds.def_grp(0, b"obs").unwrap();
        let v = VarRef::Var(ds.def_var(0, b"temp", NcType::Float, &[t, x]).unwrap());
        ds.def_var_chunking(0, v, Storage::Chunked, Some(vec![4, 3])).unwrap();
        ds.def_var_deflate(0, v, true, true, 4).unwrap();
        ds.def_var_quantize(0, v, QuantizeMode::BitRound, 10).unwrap();
        ds.put_att(0, v, b"units", NcType::Char, Values::Char(b"K".to_vec())).unwrap();
        ds.put_att(0, v, b"_FillValue", NcType::Float, Values::Float(vec![-999.0])).unwrap();
        ds.put_att(0, VarRef::Global, b"title", NcType::Char, Values::Char(b"round trip".to_vec())).unwrap();
        ds.put_att(0, VarRef::Global, b"levels", NcType::Int64, Values::Int64(vec![1, -2, 3])).unwrap();
        let s = VarRef::Var(ds.def_var(g, b"station", NcType::String, &[]).unwrap());
        ds.put_att(g, s, b"kind", NcType::String, Values::Str(vec![Some("a".into()), Some("bb".into())])).unwrap();
        ds.set_fill(FillMode::NoFill).unwrap();
        ds.def_var(g, b"count", NcType::UShort, &[x]).unwrap();
        ds.enddef().unwrap();
    }

    /// What the writers must preserve, as one comparable value per variable and group.
    fn summary(model: &Model) -> Vec<String> {
        let mut out = Vec::new();
        for (gid, g) in model.groups.iter().enumerate() {
            let atts: Vec<String> = g.atts.iter().filter(|a| !a.synthetic).map(|a| format!("{}={:?}", a.name, a.value)).collect();
            out.push(format!("group {} {:?}", model.full_name(gid), atts));
            for &d in &g.dims {
                let dim = &model.dims[d];
                out.push(format!("  dim {} {} {}", dim.name, dim.len, dim.unlimited));
            }
            for v in &g.vars {
                let dims: Vec<&str> = v.dimids.iter().map(|&d| model.dims[d].name.as_str()).collect();
                let mut atts: Vec<String> = v.atts.iter().map(|a| format!("{}={:?}", a.name, a.value)).collect();
                atts.sort();
                let filters: Vec<(u32, Vec<u32>)> = v.filters.iter().map(|f| (f.id, f.params.clone())).collect();
                out.push(format!(
                    "  var {} {:?} {dims:?} chunks {:?} filters {filters:?} no_fill {} quantize {:?} atts {atts:?}",
                    v.name, v.nctype, v.chunks, v.no_fill, v.quantize
                ));
            }
        }
        out
    }

    fn round_trip(name: &str, mode: &str, zarr_format: u8) {
        let (url, dir) = scratch(name, mode);
        let mut ds = create(&url);
        populate(&mut ds);
        let written = summary(&ds.model);
        ds.close().unwrap();
        let store = FileStore::open(&dir).unwrap();
        let loaded = open::read(&store, None, None, "t", None).unwrap();
        assert_eq!(loaded.zarr_format, zarr_format);
        assert_eq!(summary(&loaded.model), written, "{mode}: what was read differs from what was written");
        // A reopen that changes nothing writes nothing (C6): every object keeps its bytes.
        let before = loaded.stored.clone();
        let reopened = Dataset::open(crate::url::parse(&url).unwrap().unwrap(), OpenFlags::from_bits(0x0001)).unwrap();
        reopened.close().unwrap();
        let again = open::read(&FileStore::open(&dir).unwrap(), None, None, "t", None).unwrap();
        assert_eq!(again.stored, before, "{mode}: an unchanged reopen rewrote metadata");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn nczarr_v2_metadata_round_trips() {
        round_trip("v2", "nczarr,file", 2);
    }

    #[test]
    fn nczarr_v3_metadata_round_trips() {
        round_trip("v3", "nczarr,file,v3", 3);
    }

    #[test]
    fn renamed_variables_keep_their_chunks() {
        let (url, dir) = scratch("rename", "nczarr,file");
        let mut ds = create(&url);
        let x = DimId(ds.def_dim(0, b"x", 4).unwrap());
        let v = VarRef::Var(ds.def_var(0, b"old", NcType::Int, &[x]).unwrap());
        ds.enddef().unwrap();
        let req = crate::engine::Request { start: Some(&[0]), count: Some(&[4]), stride: None, imap: None };
        let sel = ds.select(0, v, &req, true).unwrap();
        let mut data: Vec<u8> = [1i32, 2, 3, 4].iter().flat_map(|i| i.to_ne_bytes()).collect();
        ds.write(0, v, &sel, crate::engine::Mem::Bytes(&mut data, crate::engine::MemType::Num(NcType::Int))).unwrap();
        ds.sync().unwrap();
        ds.rename_var(0, v, b"new").unwrap();
        ds.close().unwrap();
        assert!(dir.join("new/0").exists() && !dir.join("old").exists(), "chunks move with the variable");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

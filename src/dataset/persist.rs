//! Making a dataset durable: renamed nodes' objects moved, dirty chunks written, then the
//! metadata objects whose bytes changed, in crash-safe order.

use super::*;
use crate::format::RenderOptions;

impl Dataset {
    /// Makes everything durable in crash-safe order: moved objects of renamed nodes, then
    /// chunks, then array metadata, then group metadata (`flush_metadata`).
    pub fn persist(&mut self) -> Result<()> {
        self.apply_renames()?;
        for (gid, varid) in self.chunks.dirty_vars() {
            let layout = self.chunk_layout(gid, varid)?;
            let var = self.model.var(gid, VarRef::Var(varid))?;
            crate::zmap::shard::through(self.store.as_ref(), &self.shard_indexes, var, &layout.key, |store| {
                self.chunks.flush_var(store, (gid, varid), &layout)
            })?;
        }
        self.flush_metadata()?;
        self.store.flush()
    }

    /// The chunk layout of a variable, at the key its objects live under now.
    pub(super) fn chunk_layout(&self, gid: usize, varid: usize) -> Result<crate::engine::Layout> {
        let var = self.model.var(gid, VarRef::Var(varid))?;
        let key = var.stored.key.clone().unwrap_or_else(|| self.model.var_key(gid, varid));
        crate::engine::Layout::new(&self.model, var, key)
    }

    /// Writes every metadata object whose bytes differ from storage, in crash-safe order.
    /// Only `persist` calls it, after renamed nodes' objects have been moved.
    pub(super) fn flush_metadata(&mut self) -> Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let opts = RenderOptions {
            flavor: self.flavor,
            xarray: self.spec.xarray,
            strict_char: self.spec.strict_char,
            nc_properties: if self.nc_properties.is_empty() { NC_PROPERTIES.to_string() } else { self.nc_properties.clone() },
            consolidated: self.spec.consolidated == Some(true) || self.has_zmetadata,
            classic: self.classic,
        };
        let rendered = self.format.render(&self.model, &opts);
        for (key, bytes) in rendered {
            if self.stored.get(&key) != Some(&bytes) {
                self.store.put(&key, &bytes)?;
                self.stored.insert(key, bytes);
            }
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

    /// Moves the objects of renamed groups and variables to their new keys (FIX of netcdf-c's
    /// rename data loss): groups top-down, then variables.
    pub(super) fn apply_renames(&mut self) -> Result<()> {
        for gid in 1..self.model.groups.len() {
            let now = self.model.group_key(gid);
            if let Some(old) = self.model.groups[gid].stored_key.clone()
                && old != now
            {
                self.store.rename_prefix(&old, &now)?;
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
                    self.store.rename_prefix(&old, &now)?;
                    let lead = format!("{old}/");
                    self.stored.retain(|k, _| !k.starts_with(&lead));
                    self.shard_indexes.forget_prefix(&lead);
                    self.model.groups[gid].vars[varid].stored.key = Some(now);
                }
            }
        }
        Ok(())
    }
}

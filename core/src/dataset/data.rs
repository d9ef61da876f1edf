//! Data calls: a request checked against the variable's shape, then read or written through
//! the chunk engine (through the shard adapter for sharded variables).

use super::*;

impl Dataset {
    /// Validates a data request against the variable's current shape.
    pub fn select(&self, gid: usize, varid: VarRef, req: &crate::engine::Request<'_>, write: bool) -> Result<crate::engine::Selection> {
        let var = self.model.var(gid, varid)?;
        let shape = self.model.var_shape(var);
        let unlimited: Vec<bool> = var.dimids.iter().map(|&d| self.model.dims[d].unlimited).collect();
        crate::engine::select(&shape, &unlimited, write, req)
    }

    pub fn read(&mut self, gid: usize, varid: VarRef, sel: &crate::engine::Selection, mem: crate::engine::Mem<'_>) -> Result<()> {
        match mem {
            // A reference set is being written in this process: where these values are
            // stored may be what a put of them references (references.rs).
            crate::engine::Mem::Bytes(values, mt) if crate::engine::origins::wanted() => {
                self.read_values(gid, varid, sel, crate::engine::Mem::Bytes(&mut *values, mt))?;
                self.note_origin(gid, varid.index()?, sel, values, mt)
            }
            mem => self.read_values(gid, varid, sel, mem),
        }
    }

    fn read_values(&mut self, gid: usize, varid: VarRef, sel: &crate::engine::Selection, mem: crate::engine::Mem<'_>) -> Result<()> {
        let var = self.model.var(gid, varid)?;
        crate::engine::check_types(var.nctype, &mem)?;
        let unchecked = self.unchecked_mem_range(var.nctype, &mem);
        let (shape, budget) = (self.model.var_shape(var), var.cache.size);
        let layout = self.chunk_layout(gid, varid.index()?)?;
        let key = crate::model::VarKey::new(gid, varid.index()?);
        let range = crate::zmap::adapter::shard::through(
            self.store.as_ref(),
            &self.shard_indexes,
            var,
            &layout.key,
            layout.stored_limit(),
            |store| {
                let range = self.chunks.get(store, key, &layout, &shape, sel, mem)?;
                self.chunks.trim(store, key, &layout, budget)?;
                Ok(range)
            },
        );
        let range = self.after_store_call(range)?;
        if range && !unchecked { err(Kind::Range, "value out of range for the memory type") } else { Ok(()) }
    }

    /// Records a put to the variable (after which its `_FillValue` is NC_ELATEFILL).
    pub fn mark_written(&mut self, gid: usize, varid: usize) {
        self.written.insert(crate::model::VarKey::new(gid, varid));
    }

    /// `unchecked_range` for the memory side of a data call.
    fn unchecked_mem_range(&self, file: NcType, mem: &crate::engine::Mem<'_>) -> bool {
        matches!(mem, crate::engine::Mem::Bytes(_, crate::engine::MemType::Num(t)) if self.unchecked_range(file, *t))
    }

    pub fn write(&mut self, gid: usize, varid: VarRef, sel: &crate::engine::Selection, mem: crate::engine::Mem<'_>) -> Result<()> {
        self.check_writable()?;
        crate::engine::check_types(self.model.var(gid, varid)?.nctype, &mem)?;
        if let crate::engine::Mem::Strings(items) = &mem {
            self.fit_string_width(gid, varid, items)?;
        }
        let var = self.model.var(gid, varid)?;
        // Writing past an unlimited dimension's end grows it for every variable using it.
        // The growth is undone if the data cannot be stored, so a later sync never records
        // a shape whose chunks were not written (a full disk must not look like fill).
        let (dimids, was_dirty) = (var.dimids.clone(), self.dirty);
        let mut grown = Vec::new();
        for (d, &dimid) in dimids.iter().enumerate() {
            if self.model.dims[dimid].unlimited && sel.count[d] > 0 {
                let end = sel.start[d] + (sel.count[d] - 1) * sel.stride[d] + 1;
                if end > self.model.dims[dimid].len {
                    grown.push((dimid, self.model.dims[dimid].len));
                    self.model.dims[dimid].len = end;
                    self.dirty = true;
                }
            }
        }
        self.mark_written(gid, varid.index()?);
        let stored = self.write_chunks(gid, varid, sel, mem).and_then(|()| self.after_par_write(gid, varid.index()?));
        if stored.as_ref().is_err_and(|e| e.kind != Kind::Range) {
            for (dimid, len) in grown {
                self.model.dims[dimid].len = len;
            }
            self.dirty = was_dirty;
        }
        self.after_store_call(stored)
    }

    pub(super) fn write_chunks(
        &mut self,
        gid: usize,
        varid: VarRef,
        sel: &crate::engine::Selection,
        mem: crate::engine::Mem<'_>,
    ) -> Result<()> {
        let mem = match mem {
            crate::engine::Mem::Bytes(values, mt) => match self.write_by_reference(gid, varid.index()?, sel, values, mt)? {
                super::references::ByReference::Not => crate::engine::Mem::Bytes(values, mt),
                super::references::ByReference::Except(parts) => {
                    let item = mt.size();
                    for (part, offset) in parts {
                        let rest = values.get_mut(offset * item..).unwrap_or_default();
                        self.put_values(gid, varid, &part, crate::engine::Mem::Bytes(rest, mt))?;
                    }
                    return Ok(());
                }
            },
            other => other,
        };
        self.put_values(gid, varid, sel, mem)
    }

    /// Writes values through the chunk engine.
    fn put_values(&mut self, gid: usize, varid: VarRef, sel: &crate::engine::Selection, mem: crate::engine::Mem<'_>) -> Result<()> {
        let var = self.model.var(gid, varid)?;
        let unchecked = self.unchecked_mem_range(var.nctype, &mem);
        let (shape, budget) = (self.model.var_shape(var), var.cache.size);
        let layout = self.chunk_layout(gid, varid.index()?)?;
        let key = crate::model::VarKey::new(gid, varid.index()?);
        let range = crate::zmap::adapter::shard::through(
            self.store.as_ref(),
            &self.shard_indexes,
            var,
            &layout.key,
            layout.stored_limit(),
            |store| self.chunks.put(store, key, &layout, &shape, sel, mem, budget),
        )?;
        if range && !unchecked { err(Kind::Range, "value out of range for the variable type") } else { Ok(()) }
    }
}

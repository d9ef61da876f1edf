//! Attributes: put, delete, rename, get, and the virtual attributes netcdf-c answers by name
//! only (`_NCProperties`, `_IsNetcdf4`, `_SuperblockVersion`, `_Codecs`).

use super::*;

impl Dataset {
    /// Puts an attribute given in memory type, converted to `nctype`. Atomic: on any error
    /// nothing changes, except NC_ERANGE, where the converted values are stored (netcdf-c).
    /// (`put_att_codes` takes netCDF's type code.)
    pub fn put_att(&mut self, gid: usize, varid: VarRef, name: &[u8], nctype: NcType, values: Values) -> Result<()> {
        let name = self.att_put_name(gid, varid, name, Some(nctype), values.len())?;
        self.store_att(gid, varid, name, nctype, values)
    }

    /// The checks every put of an attribute starts with, in netcdf-c's order (the variable,
    /// write access, the name, then define mode if the attribute is new or grows); the name.
    /// `nctype`: `None` for a type code that names no type (then it counts as growing).
    pub(super) fn att_put_name(&mut self, gid: usize, varid: VarRef, name: &[u8], nctype: Option<NcType>, len: usize) -> Result<String> {
        // A missing variable is reported before a read-only dataset (netcdf-c's order).
        self.model.atts(gid, varid)?;
        self.check_writable()?;
        let name = names::check(name)?;
        if reserved_att(&name, gid, varid) {
            return err(Kind::NameInUse, format!("{name} is reserved"));
        }
        // netcdf-c: a new attribute, or one growing in bytes, needs define mode (implicit
        // redef; classic model NC_ENOTINDEFINE); rewriting one no larger stays in data mode.
        let new_bytes = (len as u64).saturating_mul(nctype.map_or(u64::MAX, |t| t.size() as u64));
        let grows = match self.model.atts(gid, varid)?.iter().find(|a| a.name == name) {
            None => true,
            Some(old) => new_bytes > (old.value.len() * old.value.nctype().size()) as u64,
        };
        if grows {
            self.begin_define()?;
        }
        Ok(name)
    }

    /// The rest of a put once `att_put_name` passed: the type's rules, the conversion,
    /// `_FillValue`'s rules, the store.
    pub(super) fn store_att(&mut self, gid: usize, varid: VarRef, name: String, target: NcType, values: Values) -> Result<()> {
        if self.classic && !target.is_classic() {
            return err(Kind::StrictNc3, "type not in the classic model");
        }
        let from = values.nctype();
        let (converted, range) = values.convert(target)?;
        let range = range && !self.unchecked_range(target, from);
        if name == "_FillValue" && varid != VarRef::Global {
            let var = self.model.var(gid, varid)?;
            if converted.len() != 1 {
                return err(Kind::Invalid, "_FillValue must have one element");
            }
            // netcdf-c's rule (`written_to`): too late once data was written to the variable
            // since the dataset was opened; netCDF-3 has no such rule. (Checked before the
            // type, as netcdf-c does.)
            if self.written.contains(&crate::model::VarKey::new(gid, varid.index()?)) && !self.netcdf3_semantics() {
                return err(Kind::LateFill, "_FillValue after data was written");
            }
            if target != var.nctype {
                return err(Kind::BadType, "_FillValue type mismatch");
            }
        }
        let atts = self.model.atts_mut(gid, varid)?;
        let att = Att::new(name.clone(), converted);
        match atts.iter_mut().find(|a| a.name == name) {
            Some(existing) => *existing = att,
            None => atts.push(att),
        }
        if name == "_FillValue"
            && let VarRef::Var(_) = varid
        {
            // A _FillValue set after enddef is the fill of every chunk never written from now
            // on; stored chunks keep the cells they hold (netcdf-c, and netCDF-3's rule).
            let var = self.model.var(gid, varid)?;
            if var.locked && !var.no_fill {
                // Chunks written so far keep their cells; chunks held as fill are read again.
                let vi = varid.index()?;
                let layout = self.chunk_layout(gid, vi)?;
                self.chunks.flush_var(self.store.as_ref(), crate::model::VarKey::new(gid, vi), &layout)?;
                self.chunks.forget(crate::model::VarKey::new(gid, vi));
                let var = self.model.var_mut(gid, varid)?;
                var.storage_fill = Some(var.declared_fill());
            }
        }
        self.touched();
        if range { err(Kind::Range, "value out of range for the attribute type") } else { Ok(()) }
    }

    pub fn del_att(&mut self, gid: usize, varid: VarRef, name: &[u8]) -> Result<()> {
        self.begin_define()?;
        self.model.atts(gid, varid)?;
        let name = names::normalize(&String::from_utf8_lossy(name));
        let atts = self.model.atts_mut(gid, varid)?;
        let pos = atts.iter().position(|a| a.name == name).ok_or_else(|| Error::new(Kind::NotAtt, name.clone()))?;
        atts.remove(pos);
        self.touched();
        Ok(())
    }

    pub fn rename_att(&mut self, gid: usize, varid: VarRef, old: &[u8], new: &[u8]) -> Result<()> {
        self.check_writable()?;
        // netcdf-c's order: the new name's syntax, the variable, the new name in use (the old
        // name counts), the old attribute, then the define-mode rule.
        let new = names::check(new)?;
        let atts = self.model.atts(gid, varid)?;
        let old = names::normalize(&String::from_utf8_lossy(old));
        if atts.iter().any(|a| a.name == new) {
            return err(Kind::NameInUse, new);
        }
        let pos = atts.iter().position(|a| a.name == old).ok_or_else(|| Error::new(Kind::NotAtt, old.clone()))?;
        if reserved_att(&new, gid, varid) {
            return err(Kind::NameInUse, new);
        }
        self.begin_rename(new.len() > old.len())?;
        let atts = self.model.atts_mut(gid, varid)?;
        atts[pos].name = new;
        atts[pos].synthetic = false;
        self.touched();
        Ok(())
    }

    /// An attribute by name, including the virtual ones netcdf-c answers by name only.
    pub fn get_att(&self, gid: usize, varid: VarRef, name: &str) -> Result<Att> {
        let atts = self.model.atts(gid, varid)?;
        let name = names::normalize(name);
        if let Some(a) = atts.iter().find(|a| a.name == name) {
            return Ok(a.clone());
        }
        self.virtual_att(gid, varid, &name).ok_or_else(|| Error::new(Kind::NotAtt, name))
    }

    pub(crate) fn virtual_att(&self, gid: usize, varid: VarRef, name: &str) -> Option<Att> {
        let text = |s: &str| Some(Att::new(name.into(), Values::Char(s.as_bytes().to_vec())));
        match (varid, name) {
            (VarRef::Global, "_NCProperties") if gid == 0 && !self.nc_properties.is_empty() => text(&self.nc_properties),
            (VarRef::Global, "_IsNetcdf4") if gid == 0 => Some(Att::new(name.into(), Values::Int(vec![1]))),
            (VarRef::Global, "_SuperblockVersion") if gid == 0 => {
                Some(Att::new(name.into(), Values::Int(vec![self.format.superblock_version(self.is_pure_zarr())])))
            }
            (VarRef::Var(_), "_Codecs") => {
                let var = self.model.var(gid, varid).ok()?;
                Some(Att::new(name.into(), Values::Char(self.format.codecs_attribute(&self.model, var)?)))
            }
            _ => None,
        }
    }
}

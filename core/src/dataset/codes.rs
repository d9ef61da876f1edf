//! Define and attribute calls whose arguments arrive as netCDF's integer codes (a type code, a
//! dimension count with a pointer that may be NULL): the codes are checked in netcdf-c's order,
//! which interleaves them with the dataset's state (define mode and the name come first), and
//! the typed call does the rest. The C layer hands its arguments over unchanged; everything in
//! Rust calls the typed `def_var`/`put_att`.

use super::Dataset;
use super::define::MAX_VAR_DIMS;
use crate::error::{Kind, Result, err};
use crate::model::{DimId, check_var_type};
use crate::nc::modes::VarRef;
use crate::nc::types::NcType;
use crate::nc::values::Values;

impl Dataset {
    /// `nc_def_var`: type `xtype`, `ndims` dimensions whose ids `dimids` holds (NULL: `None`).
    pub fn def_var_codes(&mut self, gid: usize, name: &[u8], xtype: i32, dimids: Option<&[i32]>, ndims: i32) -> Result<usize> {
        self.begin_define()?;
        let checked = self.node_name(name)?;
        if xtype == 0 {
            return err(Kind::BadType, "NC_NAT");
        }
        if self.classic && xtype > 6 {
            return err(Kind::StrictNc3, "type not in the classic model");
        }
        if ndims < 0 {
            return err(Kind::Invalid, "negative ndims");
        }
        if ndims as usize > MAX_VAR_DIMS {
            return err(Kind::MaxDims, "more than NC_MAX_VAR_DIMS dimensions");
        }
        if self.model.name_in_use(gid, &checked) {
            return err(Kind::NameInUse, checked);
        }
        let dims: Vec<DimId> = match (ndims, dimids) {
            (0, _) => Vec::new(),
            (_, None) => return err(Kind::Invalid, "NULL dimids"),
            (_, Some(ids)) => ids.iter().map(|&d| self.model.dim(d).map(|_| DimId(d as usize))).collect::<Result<_>>()?,
        };
        let nctype = check_var_type(xtype)?;
        self.def_var(gid, name, nctype, &dims)
    }

    /// `nc_put_att`: values converted to the type of code `xtype` (NC_EBADTYPID past the atomic
    /// types' range, NC_EBADTYPE for one that names no type, checked where netcdf-c checks).
    pub fn put_att_codes(&mut self, gid: usize, varid: VarRef, name: &[u8], xtype: i32, values: Values) -> Result<()> {
        let name = self.att_put_name(gid, varid, name, NcType::from_id(xtype).ok(), values.len())?;
        if xtype >= 32 {
            return err(Kind::BadTypeId, format!("type {xtype}"));
        }
        let target = NcType::from_id(xtype)?;
        self.store_att(gid, varid, name, target, values)
    }
}

//! Data access: the shared implementation behind the generated `nc_put_*`/`nc_get_*` matrix
//! (data_matrix.rs). The chunk engine lands with the data-path issue; until then each call
//! validates its ids, leaves define mode as netcdf-c does, and returns NC_ENOTBUILT.

use super::with;
use crate::api;
use crate::error::{Kind, Result, err};
use crate::model::Var;
use crate::types::NcType;
use std::ffi::{c_int, c_void};

/// The memory side of a transfer.
#[derive(Debug, Clone, Copy)]
pub enum Mem {
    /// `_text`: chars, only to/from NC_CHAR.
    Text,
    /// A typed suffix: converted to/from the variable's type.
    Typed(NcType),
    /// No suffix: memory laid out in the variable's own type.
    Native,
}

/// Which part of the variable a call addresses, as the C pointers arrived.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    Var,
    Var1(*const usize),
    Vara(*const usize, *const usize),
    Vars(*const usize, *const usize, *const isize),
    Varm(*const usize, *const usize, *const isize, *const isize),
}

fn data_call(ncid: c_int, varid: c_int) -> Result<()> {
    with(ncid, |ds, gid| {
        ds.model.var(gid, varid)?;
        ds.begin_data()?;
        err(Kind::NotBuilt, "data access is not implemented yet")
    })
}

pub(crate) fn put(call: &str, ncid: c_int, varid: c_int, shape: Shape, mem: Mem, op: *const c_void) -> c_int {
    api!(call, (ncid, varid, shape, mem, op), { data_call(ncid, varid) })
}

pub(crate) fn get(call: &str, ncid: c_int, varid: c_int, shape: Shape, mem: Mem, ip: *mut c_void) -> c_int {
    api!(call, (ncid, varid, shape, mem, ip), { data_call(ncid, varid) })
}

/// The data half of `nc_copy_var`.
pub fn copy_var_data(ncid_in: c_int, varid: c_int, ncid_out: c_int, var: &Var) -> Result<()> {
    let _ = (ncid_out, var);
    data_call(ncid_in, varid)
}

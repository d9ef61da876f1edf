//! Data access exports: `nc_put_*` / `nc_get_*` × `var, var1, vara, vars, varm` × every
//! memory type. The chunk engine lands with the data-path issue; until then each call checks
//! its ids and returns NC_ENOTBUILT.

use super::with;
use crate::api;
use crate::error::{Kind, Result, err};
use crate::model::Var;
use std::ffi::{c_char, c_int, c_long, c_longlong, c_schar, c_short, c_uchar, c_uint, c_ulonglong, c_ushort, c_void};

fn data_call(ncid: c_int, varid: c_int) -> Result<()> {
    with(ncid, |ds, gid| {
        ds.model.var(gid, varid)?;
        ds.begin_data()?;
        err(Kind::NotBuilt, "data access is not implemented yet")
    })
}

/// The data half of `nc_copy_var`.
pub fn copy_var_data(ncid_in: c_int, varid: c_int, ncid_out: c_int, var: &Var) -> Result<()> {
    let _ = (ncid_out, var);
    data_call(ncid_in, varid)
}

macro_rules! data_fns {
    ($var_put:ident, $var_get:ident, $var1_put:ident, $var1_get:ident, $vara_put:ident, $vara_get:ident,
     $vars_put:ident, $vars_get:ident, $varm_put:ident, $varm_get:ident, $pt:ty, $gt:ty) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn $var_put(ncid: c_int, varid: c_int, op: $pt) -> c_int {
            api!(stringify!($var_put), (ncid, varid, op), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $var_get(ncid: c_int, varid: c_int, ip: $gt) -> c_int {
            api!(stringify!($var_get), (ncid, varid, ip), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $var1_put(ncid: c_int, varid: c_int, indexp: *const usize, op: $pt) -> c_int {
            api!(stringify!($var1_put), (ncid, varid, indexp, op), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $var1_get(ncid: c_int, varid: c_int, indexp: *const usize, ip: $gt) -> c_int {
            api!(stringify!($var1_get), (ncid, varid, indexp, ip), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $vara_put(ncid: c_int, varid: c_int, startp: *const usize, countp: *const usize, op: $pt) -> c_int {
            api!(stringify!($vara_put), (ncid, varid, startp, countp, op), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $vara_get(ncid: c_int, varid: c_int, startp: *const usize, countp: *const usize, ip: $gt) -> c_int {
            api!(stringify!($vara_get), (ncid, varid, startp, countp, ip), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $vars_put(
            ncid: c_int, varid: c_int, startp: *const usize, countp: *const usize, stridep: *const isize, op: $pt,
        ) -> c_int {
            api!(stringify!($vars_put), (ncid, varid, startp, countp, stridep, op), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $vars_get(
            ncid: c_int, varid: c_int, startp: *const usize, countp: *const usize, stridep: *const isize, ip: $gt,
        ) -> c_int {
            api!(stringify!($vars_get), (ncid, varid, startp, countp, stridep, ip), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $varm_put(
            ncid: c_int, varid: c_int, startp: *const usize, countp: *const usize, stridep: *const isize, imapp: *const isize, op: $pt,
        ) -> c_int {
            api!(stringify!($varm_put), (ncid, varid, startp, countp, stridep, imapp, op), { data_call(ncid, varid) })
        }
        #[unsafe(no_mangle)]
        pub extern "C" fn $varm_get(
            ncid: c_int, varid: c_int, startp: *const usize, countp: *const usize, stridep: *const isize, imapp: *const isize, ip: $gt,
        ) -> c_int {
            api!(stringify!($varm_get), (ncid, varid, startp, countp, stridep, imapp, ip), { data_call(ncid, varid) })
        }
    };
}

data_fns!(nc_put_var_text, nc_get_var_text, nc_put_var1_text, nc_get_var1_text, nc_put_vara_text, nc_get_vara_text, nc_put_vars_text, nc_get_vars_text, nc_put_varm_text, nc_get_varm_text, *const c_char, *mut c_char);
data_fns!(nc_put_var_schar, nc_get_var_schar, nc_put_var1_schar, nc_get_var1_schar, nc_put_vara_schar, nc_get_vara_schar, nc_put_vars_schar, nc_get_vars_schar, nc_put_varm_schar, nc_get_varm_schar, *const c_schar, *mut c_schar);
data_fns!(nc_put_var_uchar, nc_get_var_uchar, nc_put_var1_uchar, nc_get_var1_uchar, nc_put_vara_uchar, nc_get_vara_uchar, nc_put_vars_uchar, nc_get_vars_uchar, nc_put_varm_uchar, nc_get_varm_uchar, *const c_uchar, *mut c_uchar);
data_fns!(nc_put_var_short, nc_get_var_short, nc_put_var1_short, nc_get_var1_short, nc_put_vara_short, nc_get_vara_short, nc_put_vars_short, nc_get_vars_short, nc_put_varm_short, nc_get_varm_short, *const c_short, *mut c_short);
data_fns!(nc_put_var_int, nc_get_var_int, nc_put_var1_int, nc_get_var1_int, nc_put_vara_int, nc_get_vara_int, nc_put_vars_int, nc_get_vars_int, nc_put_varm_int, nc_get_varm_int, *const c_int, *mut c_int);
data_fns!(nc_put_var_long, nc_get_var_long, nc_put_var1_long, nc_get_var1_long, nc_put_vara_long, nc_get_vara_long, nc_put_vars_long, nc_get_vars_long, nc_put_varm_long, nc_get_varm_long, *const c_long, *mut c_long);
data_fns!(nc_put_var_float, nc_get_var_float, nc_put_var1_float, nc_get_var1_float, nc_put_vara_float, nc_get_vara_float, nc_put_vars_float, nc_get_vars_float, nc_put_varm_float, nc_get_varm_float, *const f32, *mut f32);
data_fns!(nc_put_var_double, nc_get_var_double, nc_put_var1_double, nc_get_var1_double, nc_put_vara_double, nc_get_vara_double, nc_put_vars_double, nc_get_vars_double, nc_put_varm_double, nc_get_varm_double, *const f64, *mut f64);
data_fns!(nc_put_var_ushort, nc_get_var_ushort, nc_put_var1_ushort, nc_get_var1_ushort, nc_put_vara_ushort, nc_get_vara_ushort, nc_put_vars_ushort, nc_get_vars_ushort, nc_put_varm_ushort, nc_get_varm_ushort, *const c_ushort, *mut c_ushort);
data_fns!(nc_put_var_uint, nc_get_var_uint, nc_put_var1_uint, nc_get_var1_uint, nc_put_vara_uint, nc_get_vara_uint, nc_put_vars_uint, nc_get_vars_uint, nc_put_varm_uint, nc_get_varm_uint, *const c_uint, *mut c_uint);
data_fns!(nc_put_var_longlong, nc_get_var_longlong, nc_put_var1_longlong, nc_get_var1_longlong, nc_put_vara_longlong, nc_get_vara_longlong, nc_put_vars_longlong, nc_get_vars_longlong, nc_put_varm_longlong, nc_get_varm_longlong, *const c_longlong, *mut c_longlong);
data_fns!(nc_put_var_ulonglong, nc_get_var_ulonglong, nc_put_var1_ulonglong, nc_get_var1_ulonglong, nc_put_vara_ulonglong, nc_get_vara_ulonglong, nc_put_vars_ulonglong, nc_get_vars_ulonglong, nc_put_varm_ulonglong, nc_get_varm_ulonglong, *const c_ulonglong, *mut c_ulonglong);
data_fns!(nc_put_var_string, nc_get_var_string, nc_put_var1_string, nc_get_var1_string, nc_put_vara_string, nc_get_vara_string, nc_put_vars_string, nc_get_vars_string, nc_put_varm_string, nc_get_varm_string, *mut *const c_char, *mut *mut c_char);
data_fns!(nc_put_var_ubyte, nc_get_var_ubyte, nc_put_var1_ubyte, nc_get_var1_ubyte, nc_put_vara_ubyte, nc_get_vara_ubyte, nc_put_vars_ubyte, nc_get_vars_ubyte, nc_put_varm_ubyte, nc_get_varm_ubyte, *const c_uchar, *mut c_uchar);
data_fns!(nc_put_var, nc_get_var, nc_put_var1, nc_get_var1, nc_put_vara, nc_get_vara, nc_put_vars, nc_get_vars, nc_put_varm, nc_get_varm, *const c_void, *mut c_void);

//! Opening a master: `after_open` turns a master the real library opened into one of our
//! datasets (`aggregate::build`, read-only over its fragments, or writable through
//! `write::reopen`). (The name's `cfa`/`nocfa` words are judged by `url::classify`.)

use super::write;
use crate::aggregate::{Built, build, convention_of};
use crate::error::Result;
use crate::ffi::consts::NC_NOERR;
use crate::ffi::real::{RealFile, RealOpener};
use crate::nc::modes::OpenFlags;
use std::ffi::c_int;
use std::sync::Arc;

/// After the real library opened the dataset `name` (its ncid in `*ncidp`): when the file is
/// an aggregation master, our logical dataset takes its place (the real ncid is closed and
/// `*ncidp` becomes ours). Any other file is left as it is.
///
/// # Safety
/// `ncidp` is the caller's `int*`, which the real library wrote.
pub unsafe fn after_open(name: &str, mode: c_int, ncidp: *mut c_int) -> c_int {
    // SAFETY: the real library just wrote the ncid.
    let real = unsafe { *ncidp };
    let Some(version) = convention_of(&RealFile::borrowed(real)) else { return NC_NOERR };
    let built = crate::ffi::call(
        "nc_open",
        || format!("path={name:?} ({version} master)"),
        || {
            let ncid = build_master(real, name, &version, mode)?;
            // SAFETY: the caller's out-pointer.
            unsafe { *ncidp = ncid };
            Ok(())
        },
    );
    // The master is read; its real-library dataset goes either way.
    crate::ffi::file::close(real);
    built
}

/// Builds our dataset for the master `real` and returns its ncid.
fn build_master(real: c_int, name: &str, version: &str, mode: c_int) -> Result<c_int> {
    let built: Built = build(&mut RealFile::borrowed(real), name, version, Arc::new(RealOpener))?;
    if mode & crate::ffi::consts::NC_WRITE != 0 {
        let infos = built.array_infos()?;
        let (memory, vars) = built.into_parts()?;
        let mut format = 0;
        // SAFETY: a valid out-pointer.
        let status = unsafe { crate::ffi::file::nc_inq_format(real, &mut format) };
        if status != NC_NOERR {
            return Err(crate::error::Error::new(crate::error::Kind::Real(status), "master format"));
        }
        return write::reopen(name, version, format, memory, vars, infos, mode);
    }
    let ds = built.read_only(OpenFlags::from_bits(mode & !crate::ffi::consts::NC_WRITE))?;
    crate::registry::insert(ds)
}

//! Parallel exports (netcdf_par.h). `nc_create_par`/`nc_open_par` take MPI types, so they live
//! in the MPI shim (`csrc/par_mpi.c`) of the parallel library; the shim wraps its
//! communicator in a `NczParComm` table and calls `nczarr_par_create`/`nczarr_par_open` here.
//! In the serial libraries no shim registers itself: the `_fortran` forms and
//! `nc_var_par_access` answer NC_ENOPAR, as a netcdf-c built without parallel I/O does.

use super::file::{hand_out, spec_for};
use super::with;
use crate::collective::{Comm, NczParComm};
use crate::dataset::{Access, Dataset};
use crate::error::{Kind, Result, err};
use crate::nc::modes::{OpenFlags, VarRef};
use nczarr_macros::export;
use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicPtr, Ordering};

/// What the MPI shim offers beyond one communicator: turning a Fortran handle into one.
#[repr(C)]
pub struct NczParHooks {
    pub comm_from_fortran: Option<unsafe extern "C" fn(fcomm: c_int, out: *mut NczParComm) -> c_int>,
}

static HOOKS: AtomicPtr<NczParHooks> = AtomicPtr::new(std::ptr::null_mut());

/// Called once by the MPI shim when the parallel library loads.
///
/// # Safety
/// `hooks` points to a table that lives as long as the process.
#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_par_register(hooks: *mut NczParHooks) {
    HOOKS.store(hooks, Ordering::Release);
}

/// # Safety
/// `comm` is NULL or a filled table whose ownership passes to us.
unsafe fn take_comm(comm: *const NczParComm) -> Result<Comm> {
    if comm.is_null() {
        return err(Kind::ParInit, "no communicator");
    }
    // SAFETY: the shim's table, moved out once.
    Comm::new(unsafe { std::ptr::read(comm) })
}

fn create(path: *const c_char, cmode: c_int, comm: Comm, ncidp: *mut c_int) -> Result<()> {
    hand_out(Dataset::create_par(spec_for(path, true)?, OpenFlags::from_bits(cmode), comm)?, ncidp)
}

fn open(path: *const c_char, mode: c_int, comm: Comm, ncidp: *mut c_int) -> Result<()> {
    hand_out(Dataset::open_par(spec_for(path, false)?, OpenFlags::from_bits(mode), comm)?, ncidp)
}

/// The body of `nc_create_par` after the shim duplicated the communicator.
/// Collective: every rank of the communicator calls it.
#[export(name = "nc_create_par", trace(path, cmode, ncidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_par_create(path: *const c_char, cmode: c_int, comm: *const NczParComm, ncidp: *mut c_int) -> c_int {
    // SAFETY: the shim's table.
    let comm = unsafe { take_comm(comm) }?;
    create(path, cmode, comm, ncidp)
}

/// The body of `nc_open_par`. Collective.
#[export(name = "nc_open_par", trace(path, mode, ncidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_par_open(path: *const c_char, mode: c_int, comm: *const NczParComm, ncidp: *mut c_int) -> c_int {
    // SAFETY: the shim's table.
    let comm = unsafe { take_comm(comm) }?;
    open(path, mode, comm, ncidp)
}

/// For the shim of the preload library: 1 when `nc_create_par`/`nc_open_par` of this name
/// belongs to the real netcdf-c behind us (passthrough, not a Zarr name, library found).
///
/// # Safety
/// `path` is NULL or NUL-terminated.
// A panic answers "not forwarded": the call stays with us and reports its error.
#[export(on_panic = 0)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_par_forward(path: *const c_char, creating: c_int) -> c_int {
    // SAFETY: the caller's dataset name.
    (super::route::passthrough() && !unsafe { super::route::path_ptr_is_ours(path, creating != 0) } && super::route::real_available_retry())
        as c_int
}

/// For the shim of the preload library, after a forwarded create/open: claims the new ncid
/// for the real library (see `route::claim_real`).
///
/// # Safety
/// `ncidp` is NULL or the `int*` the real library wrote to.
#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nczarr_par_claim(status: c_int, ncidp: *mut c_int, creating: c_int) -> c_int {
    // SAFETY: as documented.
    unsafe { super::route::claim_real(status, ncidp, creating != 0) }
}

fn fortran_comm(fcomm: c_int) -> Result<Comm> {
    let hooks = HOOKS.load(Ordering::Acquire);
    // SAFETY: registered by the shim, lives for the process.
    let Some(from) = (unsafe { hooks.as_ref() }).and_then(|h| h.comm_from_fortran) else {
        return err(Kind::NoPar, "parallel I/O is not built into this library (link libnetcdf_mpi)");
    };
    let mut raw = std::mem::MaybeUninit::<NczParComm>::zeroed();
    // SAFETY: the shim fills the table on success.
    let code = unsafe { from(fcomm, raw.as_mut_ptr()) };
    if code != 0 {
        return err(Kind::ParInit, format!("MPI_Comm_f2c/dup failed ({code})"));
    }
    // SAFETY: filled by the shim.
    Comm::new(unsafe { raw.assume_init() })
}

#[export(path = create, trace(path, cmode, comm, info, ncidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_create_par_fortran(path: *const c_char, cmode: c_int, comm: c_int, info: c_int, ncidp: *mut c_int) -> c_int {
    create(path, cmode, fortran_comm(comm)?, ncidp)
}

#[export(path = open, trace(path, mode, comm, info, ncidp))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_open_par_fortran(path: *const c_char, mode: c_int, comm: c_int, info: c_int, ncidp: *mut c_int) -> c_int {
    open(path, mode, fortran_comm(comm)?, ncidp)
}

#[export(trace(ncid, varid, par_access))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_var_par_access(ncid: c_int, varid: c_int, par_access: c_int) -> c_int {
    if HOOKS.load(Ordering::Acquire).is_null() {
        // A serial library, like netcdf-c built without parallel I/O: NC_ENOPAR for any call.
        return err(Kind::NoPar, "parallel I/O is not built into this library (link libnetcdf_mpi)");
    }
    let access = match par_access {
        0 => Access::Independent,
        1 => Access::Collective,
        _ => return err(Kind::Invalid, format!("par_access {par_access}")),
    };
    with(ncid, |ds, gid| ds.set_par_access(gid, VarRef::from_c(varid), access))
}

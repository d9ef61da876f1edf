//! Open datasets by ncid: netcdf-c's encoding, `slot << 16 | group id`.
//!
//! The table lock is held only to find or change a slot; each dataset has its own lock for
//! the length of a call, so different datasets proceed in parallel and one dataset is never
//! used by two calls at once. Standalone numbering takes the lowest free slot from 1, as
//! netcdf-c does; the preload library numbers top-down from 0x7FFF so its ids stay clear of
//! the real netcdf-c's (passthrough.md §5.2). Slot allocation lives only here.

use crate::dataset::Dataset;
use crate::error::{Error, Kind, Result, err};
use std::sync::{Arc, Mutex, MutexGuard};

pub struct OpenFile {
    dataset: Mutex<Option<Dataset>>,
}

const SLOTS: usize = 0x10000;
const PASSTHROUGH_TOP: usize = 0x7fff;

static TABLE: Mutex<Vec<Option<Arc<OpenFile>>>> = Mutex::new(Vec::new());
/// Top-down numbering whenever a real netcdf-c may sit behind us (the router decides).
pub fn passthrough_numbering() -> bool {
    crate::ffi::route::passthrough()
}

fn table() -> MutexGuard<'static, Vec<Option<Arc<OpenFile>>>> {
    let mut t = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    if t.is_empty() {
        t.resize_with(SLOTS, || None);
    }
    t
}

pub fn insert(ds: Dataset) -> Result<i32> {
    let mut t = table();
    let passthrough = passthrough_numbering();
    let slot = if passthrough {
        (1..=PASSTHROUGH_TOP).rev().find(|&s| t[s].is_none() && !crate::ffi::route::held_by_real(s))
    } else {
        (1..SLOTS).find(|&s| t[s].is_none())
    };
    let Some(slot) = slot else { return err(Kind::NoMem, "all dataset slots are in use") };
    t[slot] = Some(Arc::new(OpenFile { dataset: Mutex::new(Some(ds)) }));
    if passthrough {
        crate::ffi::route::mark_ours(slot);
    }
    Ok((slot << 16) as i32)
}

fn split(ncid: i32) -> Result<(usize, usize)> {
    if ncid < 0 {
        return err(Kind::BadId, format!("ncid {ncid}"));
    }
    Ok(((ncid as u32 >> 16) as usize, (ncid & 0xffff) as usize))
}

/// True when the ncid's slot holds one of our datasets.
pub fn owns(ncid: i32) -> bool {
    split(ncid).is_ok_and(|(slot, _)| slot > 0 && table()[slot].is_some())
}

/// Runs `f` on the dataset and group an ncid names. Unknown slot or group → NC_EBADID.
pub fn with<R>(ncid: i32, f: impl FnOnce(&mut Dataset, usize) -> Result<R>) -> Result<R> {
    let (slot, gid) = split(ncid)?;
    let file = table().get(slot).and_then(|s| s.clone()).ok_or_else(|| Error::new(Kind::BadId, format!("ncid {ncid}")))?;
    let mut guard = file.dataset.lock().map_err(|_| Error::new(Kind::Internal, "dataset lock poisoned by an earlier panic"))?;
    let ds = guard.as_mut().ok_or_else(|| Error::new(Kind::BadId, format!("ncid {ncid} is closed")))?;
    if gid >= ds.model.groups.len() {
        return err(Kind::BadId, format!("ncid {ncid}: no such group"));
    }
    f(ds, gid)
}

/// The ncid of group `gid` in the dataset `ncid` belongs to.
pub fn group_ncid(ncid: i32, gid: usize) -> i32 {
    (ncid & !0xffff) | gid as i32
}

/// Removes the dataset from the table (close/abort). The slot is freed even if the dataset
/// lock was poisoned, so a failed dataset can always be closed.
pub fn remove(ncid: i32) -> Result<Dataset> {
    let (slot, gid) = split(ncid)?;
    let file = {
        let mut t = table();
        let present = t.get(slot).and_then(|s| s.as_ref()).is_some();
        if slot == 0 || !present {
            return err(Kind::BadId, format!("ncid {ncid}"));
        }
        let file = t[slot].clone().ok_or_else(|| Error::new(Kind::BadId, "ncid"))?;
        {
            let g = file.dataset.lock().unwrap_or_else(|p| p.into_inner());
            if g.as_ref().is_some_and(|ds| gid >= ds.model.groups.len()) {
                return err(Kind::BadId, format!("ncid {ncid}: no such group"));
            }
        }
        t[slot] = None;
        crate::ffi::route::release_ours(slot);
        file
    };
    let mut guard = file.dataset.lock().unwrap_or_else(|p| p.into_inner());
    guard.take().ok_or_else(|| Error::new(Kind::BadId, "dataset already closed"))
}

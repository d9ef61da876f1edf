//! Open datasets by ncid (netcdf-c's encoding, `slot << 16 | group id`) and who owns each slot.
//!
//! One table of 65,536 slots. Each slot says who owns it (free, ours, or the real netcdf-c
//! behind the preload library) and holds our dataset when it is ours. The owner is an atomic
//! read without a lock on every call (`is_foreign`: the passthrough hot path); a dataset is
//! locked for the length of one call, so different datasets proceed in parallel and one
//! dataset is never used by two calls at once.
//!
//! Numbering: standalone takes the lowest free slot from 1, as netcdf-c does; in passthrough
//! we number top-down from 0x7FFF so our ids stay clear of the real library's, and a slot the
//! real library holds is never handed out (passthrough.md §5.2).

use crate::dataset::Dataset;
use crate::error::{Error, Kind, Result, err};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

const SLOT_COUNT: usize = 0x10000;
const PASSTHROUGH_TOP: usize = 0x7fff;

/// Who owns a slot. `FREE` slots are forwarded in passthrough (the real library may use them
/// without telling us first); `REAL` ones are known to hold the real library's dataset.
const FREE: u8 = 0;
const OURS: u8 = 1;
const REAL: u8 = 2;

struct Slot {
    owner: AtomicU8,
    /// `Some` while our dataset is open here. Boxed: the table is mostly empty.
    dataset: Mutex<Option<Box<Dataset>>>,
}

static SLOTS: [Slot; SLOT_COUNT] = [const { Slot { owner: AtomicU8::new(FREE), dataset: Mutex::new(None) } }; SLOT_COUNT];

// ---- deployment -----------------------------------------------------------------------------

/// How we were deployed: decided once, never by when a real library shows up.
const UNDECIDED: u8 = 0;
const STANDALONE: u8 = 1;
const PASSTHROUGH: u8 = 2;
static DEPLOYMENT: AtomicU8 = AtomicU8::new(UNDECIDED);

/// The preload library's constructor calls this; the drop-in decides from
/// `NCZARR_FALLBACK_LIB` at first use.
pub fn set_passthrough() {
    DEPLOYMENT.store(PASSTHROUGH, Ordering::Relaxed);
    // Test knob for the fail-closed rule: the claimed slot is ours with no dataset in it, so
    // the real library's first open collides with it.
    if let Some(n) = crate::config::test_claim_slot()
        && (1..SLOT_COUNT).contains(&n)
    {
        SLOTS[n].owner.store(OURS, Ordering::Relaxed);
    }
}

/// Passthrough deployment: the preload shim, or the drop-in with an explicit fallback.
pub fn passthrough() -> bool {
    match DEPLOYMENT.load(Ordering::Relaxed) {
        PASSTHROUGH => true,
        STANDALONE => false,
        _ => {
            let decided = if crate::config::fallback_lib().is_some() { PASSTHROUGH } else { STANDALONE };
            let _ = DEPLOYMENT.compare_exchange(UNDECIDED, decided, Ordering::Relaxed, Ordering::Relaxed);
            DEPLOYMENT.load(Ordering::Relaxed) == PASSTHROUGH
        }
    }
}

// ---- ownership ------------------------------------------------------------------------------

fn slot_of(ncid: i32) -> usize {
    (ncid as u32 >> 16) as usize
}

/// True when a call with this ncid must go to the real library (lock-free).
#[inline]
pub fn is_foreign(ncid: i32) -> bool {
    DEPLOYMENT.load(Ordering::Relaxed) == PASSTHROUGH && SLOTS[slot_of(ncid)].owner.load(Ordering::Relaxed) != OURS
}

/// After the real library opened `ncid`: record its slot as the real library's. False when
/// the slot is ours (the caller must close the real dataset again and fail closed).
pub fn claim_real(ncid: i32) -> bool {
    let owner = &SLOTS[slot_of(ncid)].owner;
    owner.compare_exchange(FREE, REAL, Ordering::AcqRel, Ordering::Acquire).is_ok() || owner.load(Ordering::Acquire) == REAL
}

/// After the real library closed `ncid`: its slot is free again.
pub fn release_real(ncid: i32) {
    let _ = SLOTS[slot_of(ncid)].owner.compare_exchange(REAL, FREE, Ordering::AcqRel, Ordering::Relaxed);
}

// ---- our datasets ---------------------------------------------------------------------------

/// Puts an open dataset in a free slot; returns its root ncid.
pub fn insert(ds: Dataset) -> Result<i32> {
    let claim = |s: usize| SLOTS[s].owner.compare_exchange(FREE, OURS, Ordering::AcqRel, Ordering::Relaxed).is_ok();
    let slot = if passthrough() { (1..=PASSTHROUGH_TOP).rev().find(|&s| claim(s)) } else { (1..SLOT_COUNT).find(|&s| claim(s)) };
    let Some(slot) = slot else { return err(Kind::NoMem, "all dataset slots are in use") };
    *lock(slot) = Some(Box::new(ds));
    Ok((slot << 16) as i32)
}

/// A slot's dataset lock; a lock poisoned by an earlier panic is taken over (the dataset is
/// still consistent: every mutation either completes or returns an error first).
fn lock(slot: usize) -> std::sync::MutexGuard<'static, Option<Box<Dataset>>> {
    SLOTS[slot].dataset.lock().unwrap_or_else(|p| p.into_inner())
}

fn split(ncid: i32) -> Result<(usize, usize)> {
    if ncid < 0 {
        return err(Kind::BadId, format!("ncid {ncid}"));
    }
    Ok((slot_of(ncid), (ncid & 0xffff) as usize))
}

/// True when the ncid's slot holds one of our datasets.
pub fn owns(ncid: i32) -> bool {
    split(ncid).is_ok_and(|(slot, _)| slot > 0 && lock(slot).is_some())
}

/// Runs `f` on the dataset and group an ncid names. Unknown slot or group → NC_EBADID.
pub fn with<R>(ncid: i32, f: impl FnOnce(&mut Dataset, usize) -> Result<R>) -> Result<R> {
    let (slot, gid) = split(ncid)?;
    let mut guard = lock(slot);
    let ds = guard.as_mut().ok_or_else(|| Error::new(Kind::BadId, format!("ncid {ncid}")))?;
    if gid >= ds.group_count() {
        return err(Kind::BadId, format!("ncid {ncid}: no such group"));
    }
    f(ds, gid)
}

/// The ncid of group `gid` in the dataset `ncid` belongs to.
pub fn group_ncid(ncid: i32, gid: usize) -> i32 {
    (ncid & !0xffff) | gid as i32
}

/// Takes the dataset out of the table (close/abort) and frees its slot. A call still running
/// on it finishes first; later calls with its ncid get NC_EBADID.
pub fn remove(ncid: i32) -> Result<Dataset> {
    let (slot, gid) = split(ncid)?;
    if slot == 0 {
        return err(Kind::BadId, format!("ncid {ncid}"));
    }
    let mut guard = lock(slot);
    match guard.as_ref() {
        None => return err(Kind::BadId, format!("ncid {ncid}")),
        Some(ds) if gid >= ds.group_count() => return err(Kind::BadId, format!("ncid {ncid}: no such group")),
        Some(_) => {}
    }
    let ds = guard.take().ok_or_else(|| Error::new(Kind::BadId, "dataset already closed"))?;
    SLOTS[slot].owner.store(FREE, Ordering::Release);
    Ok(*ds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_ncids_keep_the_slot() {
        assert_eq!(group_ncid(0x30000, 2), 0x30002);
        assert_eq!(group_ncid(0x30005, 0), 0x30000);
    }

    #[test]
    fn bad_ids_are_rejected_before_any_lookup() {
        assert_eq!(split(-1).unwrap_err().kind, Kind::BadId);
        assert!(!owns(-5));
        assert!(!owns(0));
        assert_eq!(with(0x7ffe0000, |_, _| Ok(())).unwrap_err().kind, Kind::BadId);
        assert!(remove(0).is_err_and(|e| e.kind == Kind::BadId));
    }

    #[test]
    fn foreign_only_in_passthrough() {
        // The test process is standalone: nothing is ever forwarded.
        if !passthrough() {
            assert!(!is_foreign(0x10000));
        }
    }
}

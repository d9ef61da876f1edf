//! What a zip store holds between flushes: the open archive's directory, small objects
//! staged in memory, and the next archive (`Spill`) that big objects are written into at once.

use super::temp_file::QuietAfterError;
use crate::error::Error;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

pub(super) struct State {
    pub(super) archive: Option<zip::ZipArchive<File>>,
    /// key (relative to the dataset prefix) → entry index, in archive order.
    pub(super) index: BTreeMap<String, usize>,
    pub(super) order: Vec<String>,
    /// Pending small changes: `Some(bytes)` written, `None` deleted. A key is in at most one of
    /// `staged` and the spill: whichever was written last.
    pub(super) staged: BTreeMap<String, Option<Vec<u8>>>,
    /// The next archive, once a big object was put.
    pub(super) spill: Option<Spill>,
    /// Writing the next archive failed (what it held is lost): `flush` reports it.
    pub(super) failed: Option<Error>,
    pub(super) dirty: bool,
}

/// Objects at least this big go straight into the next archive when put; smaller ones
/// (metadata, rewritten as a dataset is defined) wait in memory for `flush`.
pub(super) const SPILL_AT: usize = 64 << 10;

/// The next archive, begun at the first big put. Its entries cannot be removed (a zip writer
/// appends), so a spilled object that is replaced or deleted makes it `stale`: `flush` then
/// copies the live entries into a fresh archive instead of finishing this one.
pub(super) struct Spill {
    pub(super) writer: zip::ZipWriter<QuietAfterError>,
    /// The writer's position in the file: where an entry's data begins after its header.
    pub(super) pos: Arc<AtomicU64>,
    pub(super) tmp: PathBuf,
    /// Live objects written here: key → (data offset, length), read back with `pread`.
    pub(super) at: BTreeMap<String, (u64, u64)>,
    /// Directory entries written (netcdf-c's layout has one per folder).
    pub(super) dirs: BTreeSet<String>,
    /// Every object name written into this archive, live or not: a zip writer refuses a name
    /// twice, so an object replaced after it was put waits in memory instead.
    pub(super) names: BTreeSet<String>,
    pub(super) stale: bool,
}

impl State {
    /// Nothing pending: the archive as `open` found it (or none yet, for `create`).
    pub(super) fn new(archive: Option<zip::ZipArchive<File>>, index: BTreeMap<String, usize>, order: Vec<String>, dirty: bool) -> State {
        State { archive, index, order, staged: BTreeMap::new(), spill: None, failed: None, dirty }
    }

    /// Keeps `bytes` in memory as `key`'s newest value until `flush`.
    pub(super) fn stage(&mut self, key: &str, bytes: Vec<u8>) {
        self.unspill(key);
        self.staged.insert(key.to_string(), Some(bytes));
        self.dirty = true;
    }

    pub(super) fn spilled(&self, key: &str) -> bool {
        self.spill.as_ref().is_some_and(|s| s.at.contains_key(key))
    }

    /// The original archive's entries that are neither replaced nor deleted.
    pub(super) fn unchanged_keys(&self) -> Vec<String> {
        self.order.iter().filter(|k| !self.staged.contains_key(*k) && !self.spilled(k)).cloned().collect()
    }

    pub(super) fn live_keys(&self) -> Vec<String> {
        let mut keys = self.unchanged_keys();
        if let Some(spill) = &self.spill {
            keys.extend(spill.at.keys().cloned());
        }
        keys.extend(self.staged.iter().filter(|(_, v)| v.is_some()).map(|(k, _)| k.clone()));
        keys
    }

    /// Marks `key` deleted or replaced by staged bytes: out of the spill if it was there.
    pub(super) fn unspill(&mut self, key: &str) {
        if let Some(spill) = self.spill.as_mut()
            && spill.at.remove(key).is_some()
        {
            spill.stale = true;
        }
    }
}

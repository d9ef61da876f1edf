//! Write-behind: chunk uploads handed to the runtime and not waited for, and how many
//! requests a batch keeps in flight.

use super::runtime::{block_on, runtime};
use crate::error::{Error, Kind, Result, err};
use std::sync::Arc;

/// How many requests a batch keeps in flight. A request's time is mostly round trip when its
/// object is small, so small objects get many at once; for big ones the bytes in flight are
/// what counts (memory, and a link or server that is already busy gains nothing from more).
#[derive(Clone, Copy)]
pub(super) struct InFlight {
    /// `NCZARR_S3_CONCURRENCY`: this many, whatever the objects.
    pub(super) fixed: Option<usize>,
}

impl InFlight {
    pub(super) const MOST: usize = 128;
    const FEWEST: usize = 32;
    const BYTES: usize = 64 << 20;

    /// Requests at once for objects of about `bytes` each (`None`: small or not known yet).
    pub(super) fn limit(&self, bytes: Option<usize>) -> usize {
        match (self.fixed, bytes) {
            (Some(n), _) => n,
            (None, None) => Self::MOST,
            (None, Some(b)) => (Self::BYTES / b.max(1)).clamp(Self::FEWEST, Self::MOST),
        }
    }

    /// The most requests ever in flight at once.
    pub(super) fn max(&self) -> usize {
        self.fixed.unwrap_or(Self::MOST)
    }

    /// The share of `max` one request for an object of `bytes` takes, so that a pool of
    /// `max` permits runs `limit(bytes)` such requests at once.
    pub(super) fn weight(&self, bytes: Option<usize>) -> u32 {
        (self.max() / self.limit(bytes)).max(1) as u32
    }
}

/// Uploads handed to the runtime and not waited for: the caller's next step (copying or
/// encoding the next chunks, defining the next variable) overlaps them, and one batch does
/// not wait for its slowest request before the next starts.
///
/// Order is kept where it matters: a later upload of the same object waits for the earlier
/// one; a metadata wave (`put_many`) waits for every upload handed over before it, so the
/// crash-safe order chunks → arrays → groups → consolidated holds on the server. Reads,
/// listings, deletes and `flush` wait for everything first, so they see what was written. A
/// failed upload is reported (once) by the next write or `flush`: at the latest by
/// nc_sync/nc_close, before any later metadata wave is stored.
pub(super) struct Uploads {
    /// KiB of bodies handed over and not yet stored: bounds the memory uploads hold.
    room: Arc<tokio::sync::Semaphore>,
    room_kib: u32,
    /// Chunk PUTs in flight: `InFlight::max` permits, an upload takes `InFlight::weight`.
    requests: Arc<tokio::sync::Semaphore>,
    in_flight: InFlight,
    failed: Arc<std::sync::Mutex<Option<Error>>>,
    /// The last upload of each object not known to be finished.
    running: std::sync::Mutex<Running>,
}

#[derive(Default)]
pub(super) struct Running {
    by_key: std::collections::HashMap<String, Done>,
    /// Size of `by_key` after its last pruning: it is pruned again when it doubles.
    pruned_at: usize,
}

/// Closed when its upload task ends (the task holds the sender).
pub(super) type Done = tokio::sync::watch::Receiver<()>;

pub(super) async fn wait_all(done: Vec<Done>) {
    for mut d in done {
        while d.changed().await.is_ok() {}
    }
}

/// One upload's hold on `Uploads::room`; a task that ends without saying how (a panic, the
/// runtime shutting down) counts as a failed upload.
pub(super) struct UploadTicket {
    _room: tokio::sync::OwnedSemaphorePermit,
    failed: Arc<std::sync::Mutex<Option<Error>>>,
    outcome: Option<Result<()>>,
}

impl UploadTicket {
    fn done(mut self, outcome: Result<()>) {
        self.outcome = Some(outcome);
    }
}

impl Drop for UploadTicket {
    fn drop(&mut self) {
        let failure = match self.outcome.take() {
            Some(Ok(())) => return,
            Some(Err(e)) => e,
            None => Error::new(Kind::S3, "an S3 upload stopped before it finished"),
        };
        if let Ok(mut slot) = self.failed.lock() {
            slot.get_or_insert(failure);
        }
    }
}

impl Uploads {
    pub(super) fn new(in_flight: InFlight, room_mb: f64) -> Uploads {
        let room_kib = (room_mb * 1024.0).clamp(1024.0, f64::from(u32::MAX >> 4)) as u32;
        Uploads {
            room: Arc::new(tokio::sync::Semaphore::new(room_kib as usize)),
            room_kib,
            requests: Arc::new(tokio::sync::Semaphore::new(in_flight.max())),
            in_flight,
            failed: Arc::default(),
            running: Default::default(),
        }
    }

    /// Waits until no upload is running.
    pub(super) fn settle(&self) -> Result<()> {
        let all: Vec<Done> = match self.running.lock() {
            Ok(mut r) => std::mem::take(&mut *r).by_key.into_values().collect(),
            Err(_) => return err(Kind::Internal, "S3 upload bookkeeping poisoned"),
        };
        if all.iter().all(|d| d.has_changed().is_err()) {
            return Ok(());
        }
        block_on(wait_all(all))
    }

    /// Waits for running uploads and reports (once) the first that failed.
    pub(super) fn finish(&self) -> Result<()> {
        self.settle()?;
        self.take_failure()
    }

    pub(super) fn take_failure(&self) -> Result<()> {
        match self.failed.lock().map(|mut f| f.take()) {
            Ok(Some(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Starts `upload` once the uploads it must follow have finished: those of the same
    /// objects, or (`after_all`, a metadata wave) every upload handed over so far. `bytes`:
    /// what the upload holds in memory; waits while the uploads in flight hold too much.
    pub(super) fn start<F>(&self, keys: &[String], bytes: usize, after_all: bool, upload: F) -> Result<()>
    where
        F: std::future::Future<Output = Result<()>> + Send + 'static,
    {
        let kib = (bytes.div_ceil(1024) as u64).clamp(1, u64::from(self.room_kib)) as u32;
        let room = match self.room.clone().try_acquire_many_owned(kib) {
            Ok(p) => p,
            Err(_) => {
                let room = self.room.clone();
                block_on(async move { room.acquire_many_owned(kib).await })?
                    .map_err(|_| Error::new(Kind::Internal, "S3 upload accounting closed"))?
            }
        };
        let ticket = UploadTicket { _room: room, failed: self.failed.clone(), outcome: None };
        let (finished, done) = tokio::sync::watch::channel(());
        let before: Vec<Done> = {
            let Ok(mut running) = self.running.lock() else { return err(Kind::Internal, "S3 upload bookkeeping poisoned") };
            if running.by_key.len() > 2 * running.pruned_at.max(64) {
                running.by_key.retain(|_, d| d.has_changed().is_ok());
                running.pruned_at = running.by_key.len();
            }
            let before = match after_all {
                true => running.by_key.values().cloned().collect(),
                false => keys.iter().filter_map(|k| running.by_key.get(k).cloned()).collect(),
            };
            for k in keys {
                running.by_key.insert(k.clone(), done.clone());
            }
            before
        };
        let requests = self.requests.clone();
        // One chunk is one request and queues for its share of the pool. A metadata wave limits
        // its own requests (`put_many`) and does not queue there: behind a put's hundreds of
        // chunks it would wait for nearly all of them, though it only waits for what came
        // before it, and the waves after it (group metadata, .zmetadata) would then go out one
        // round trip after another at the end.
        let weight = (!after_all).then(|| self.in_flight.weight(Some(bytes)));
        runtime()?.spawn(async move {
            let _finished = finished;
            wait_all(before).await;
            let _request = match weight {
                Some(w) => Some(requests.acquire_many_owned(w).await),
                None => None,
            };
            ticket.done(upload.await);
        });
        Ok(())
    }
}

//! The tokio runtime the S3 driver owns, and how synchronous callers run futures on it.

use crate::error::{Error, Kind, Result};
use std::sync::Arc;

static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();

pub(super) fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    // A failure to start is reported and tried again by the next call. Two first callers may
    // both build one; the loser's is dropped unused.
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("nczarr-s3")
        .enable_all()
        .build()
        .map_err(|e| Error::new(Kind::S3, format!("cannot start the S3 runtime: {e}")))?;
    Ok(RUNTIME.get_or_init(|| built))
}

/// Runs a future to completion on our runtime, from any caller (one inside another tokio
/// runtime included: blocking there would panic, so a helper thread waits instead).
pub(super) fn block_on<F>(f: F) -> Result<F::Output>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| s.spawn(|| rt.block_on(f)).join()).map_err(|_| Error::new(Kind::Internal, "S3 helper thread failed"))
    } else {
        Ok(rt.block_on(f))
    }
}

/// Runs `jobs` concurrently (at most `limit` at once) and returns their results in order.
pub(super) async fn run_limited<T, F>(limit: usize, jobs: Vec<F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let sem = Arc::new(tokio::sync::Semaphore::new(limit.max(1)));
    let mut set = tokio::task::JoinSet::new();
    let n = jobs.len();
    for (i, job) in jobs.into_iter().enumerate() {
        let sem = sem.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            (i, job.await)
        });
    }
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    while let Some(done) = set.join_next().await {
        if let Ok((i, v)) = done {
            out[i] = Some(v);
        }
    }
    out.into_iter().map(|v| v.expect("every S3 job completes")).collect()
}

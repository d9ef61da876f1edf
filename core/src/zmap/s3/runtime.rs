//! The tokio runtime the S3 driver owns, and how synchronous callers run futures on it.

use crate::error::{Error, Kind, Result};
use std::sync::Arc;

static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();

pub(crate) fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    // A failure to start is reported and tried again by the next call. Two first callers may
    // both build one; the loser's is dropped unused.
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("nczarr-s3")
        // Every connection is written from these threads: a peer that hangs up mid-upload must
        // give EPIPE (an error we report), never SIGPIPE, which would kill the host program.
        // (The guard is kept for the thread's life: its drop would unblock.)
        .on_thread_start(|| std::mem::forget(NoSigpipe::block()))
        .enable_all()
        .build()
        .map_err(|e| Error::new(Kind::S3, format!("cannot start the S3 runtime: {e}")))?;
    Ok(RUNTIME.get_or_init(|| built))
}

/// Runs a future to completion on our runtime, from any caller (one inside another tokio
/// runtime included: blocking there would panic, so a helper thread waits instead).
pub(crate) fn block_on<F>(f: F) -> Result<F::Output>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    // The future itself runs on this (the caller's) thread and may write to a socket too.
    let _quiet = NoSigpipe::block();
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| {
            s.spawn(|| {
                let _quiet = NoSigpipe::block();
                rt.block_on(f)
            })
            .join()
        })
        .map_err(|_| Error::new(Kind::Internal, "S3 helper thread failed"))
    } else {
        Ok(rt.block_on(f))
    }
}

/// SIGPIPE blocked in this thread while the value lives (reliability: no signal the library
/// causes reaches the host). A write to a socket whose peer is gone then fails with EPIPE; the
/// SIGPIPE the kernel still raises for this thread stays pending, and is taken back before the
/// old mask returns unless one was already pending when we started (the host's, not ours).
/// This is how libcurl keeps SIGPIPE from its callers where MSG_NOSIGNAL cannot be used:
/// hyper writes with `writev`, which has no such flag.
pub(crate) struct NoSigpipe {
    old: libc::sigset_t,
    was_pending: bool,
}

impl NoSigpipe {
    pub(crate) fn block() -> Option<NoSigpipe> {
        // SAFETY: sigset_t is plain data that sigemptyset/sigaddset/sigpending initialise; the
        // pointers are to locals.
        unsafe {
            let mut pipe: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut pipe);
            libc::sigaddset(&mut pipe, libc::SIGPIPE);
            let mut old: libc::sigset_t = std::mem::zeroed();
            if libc::pthread_sigmask(libc::SIG_BLOCK, &pipe, &mut old) != 0 {
                return None;
            }
            Some(NoSigpipe { old, was_pending: sigpipe_pending() })
        }
    }
}

/// Is a SIGPIPE pending for this thread or the process?
fn sigpipe_pending() -> bool {
    // SAFETY: sigpending fills a local set; sigismember reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigpending(&mut set) == 0 && libc::sigismember(&set, libc::SIGPIPE) == 1
    }
}

impl Drop for NoSigpipe {
    fn drop(&mut self) {
        // SAFETY: local sets and a zero timeout; sigtimedwait only takes a signal that is
        // pending and blocked (ours), and pthread_sigmask restores the mask saved in `block`.
        unsafe {
            if !self.was_pending && sigpipe_pending() {
                let mut pipe: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut pipe);
                libc::sigaddset(&mut pipe, libc::SIGPIPE);
                let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                while libc::sigtimedwait(&pipe, std::ptr::null_mut(), &zero) == libc::SIGPIPE {}
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
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

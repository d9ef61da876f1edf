//! The worker pool for chunk encode/decode and metadata parsing.
//!
//! Why not rayon's global pool: a process that forks after the library started its workers
//! (a test harness that writes, forks a writer and SIGKILLs it, then reopens; a server that
//! forks per request) gets a child whose pool has a registry but no threads, so the first
//! parallel call there would wait forever. The pool here belongs to one process id: a child
//! builds its own on first use. The parent's pool is leaked in the child (its threads do not
//! exist there; dropping it would wait for them).

use std::sync::Mutex;

struct Owned {
    pid: u32,
    pool: &'static rayon::ThreadPool,
}

static POOL: Mutex<Option<Owned>> = Mutex::new(None);

/// This process's pool, built on first use (and again in a forked child).
pub(crate) fn pool() -> &'static rayon::ThreadPool {
    let pid = std::process::id();
    // A poisoned lock only means a panic elsewhere while holding it; the slot is still valid.
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(owned) = slot.as_ref().filter(|o| o.pid == pid) {
        return owned.pool;
    }
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("nczarr-worker-{i}"))
        .build()
        .map(|p| &*Box::leak(Box::new(p)))
        // Thread creation can fail under tight ulimits: one worker still makes progress
        // (rayon runs the caller's work in `install` on a pool thread).
        .or_else(|_| rayon::ThreadPoolBuilder::new().num_threads(1).build().map(|p| &*Box::leak(Box::new(p))))
        .expect("cannot start a single worker thread");
    *slot = Some(Owned { pid, pool });
    pool
}

/// Runs `work` with its parallel iterators on this process's pool.
pub(crate) fn run<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    let pool = pool();
    // Already on one of our workers (nested parallel sections): stay there.
    if pool.current_thread_index().is_some() {
        return work();
    }
    pool.install(work)
}

/// Starts `work` in the background on this process's pool.
pub(crate) fn spawn(work: impl FnOnce() + Send + 'static) {
    pool().spawn(work)
}

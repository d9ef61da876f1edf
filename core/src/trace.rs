//! `NCTRACING=<level>`: API calls and storage operations on stderr. Off by default; when off,
//! each check is one relaxed atomic load. Errors never print unless tracing is on.

use std::sync::atomic::{AtomicI32, Ordering};

static LEVEL: AtomicI32 = AtomicI32::new(-1);

pub(crate) fn level() -> i32 {
    let l = LEVEL.load(Ordering::Relaxed);
    if l >= 0 {
        return l;
    }
    let l = crate::config::tracing_level();
    LEVEL.store(l, Ordering::Relaxed);
    l
}

pub fn enabled(at: i32) -> bool {
    level() >= at
}

pub fn emit(at: i32, msg: &str) {
    if enabled(at) {
        eprintln!("[nczarr] {msg}");
    }
}

/// Something odd in a dataset that we worked around (level 1).
pub fn warn(msg: &str) {
    emit(1, &format!("warning: {msg}"));
}

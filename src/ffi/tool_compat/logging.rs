//! netcdf-c's log switches (the tools set them; we log through `NCTRACING` instead).

#![allow(non_snake_case, non_camel_case_types, clippy::upper_case_acronyms)]

use nczarr_macros::export;
use std::ffi::c_int;

static LOGGING: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

#[export(on_panic = 0)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncsetlogging(tf: c_int) -> c_int {
    LOGGING.swap(tf, std::sync::atomic::Ordering::Relaxed)
}

#[export(on_panic = 0)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncsetloglevel(level: c_int) -> c_int {
    LOGGING.swap(level, std::sync::atomic::Ordering::Relaxed)
}

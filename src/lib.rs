//! nczarr-rs: a drop-in `libnetcdf` whose storage engine is NCZarr. This crate is the C ABI
//! (`libnetcdf.so`, `libnczarr_preload.so`, `libnetcdf.a`): netcdf-c's exports, the ncid
//! registry and the passthrough to a real netcdf-c. Everything they call is the safe core,
//! `nczarr_core` (`core/`), whose public modules are re-exported here under their own names so
//! that `crate::dataset` in an export is the core's `dataset`.
//!
//! # Layers
//! The core's modules (layers 0–9, see `core/src/lib.rs`) sit under these two; each module
//! may import only modules of a lower layer. `tools/check_layers.py` reads both tables.
//!
//! | layer | modules | what they hold |
//! |---|---|---|
//! | 11 | `ffi` | the exported C API: converts arguments, calls the core, maps errors; passthrough routing |
//! | 10 | `registry` | ncid ↔ open dataset, slot ownership (ours / the real netcdf-c's / free) |

pub use nczarr_core::{aggregate, codec, collective, config, dataset, engine, error, format, lazy, model, nc, source, trace, url, zmap};

pub mod ffi;
pub mod registry;

/// Rust-side allocations (metadata parsing is allocation-heavy) use mimalloc; memory handed to
/// C callers is always allocated with libc `malloc`, so this choice never crosses the ABI.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

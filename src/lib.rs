//! nczarr-rs: a drop-in `libnetcdf` whose storage engine is NCZarr.
//!
//! Layers, top to bottom (dependencies point down only):
//! - `ffi`: the exported `nc_*` C API; converts arguments, calls the core, maps errors.
//! - `registry`: ncid ↔ open dataset table, netcdf-c's id encoding.
//! - `dataset`: what each call does to an open dataset (define mode, persistence).
//! - `format`: NCZarr/Zarr v2 metadata ↔ `model`, every layout netcdf-c ever wrote.
//! - `model`, `values`, `types`, `names`: the netCDF-4 data model, values and name rules.
//! - `codec`: Zarr codec JSON ↔ netCDF filter ids.
//! - `parallel`: the per-process worker pool (survives fork).
//! - `zmap`: key/value storage drivers (directory tree, zip, memory).
//! - `url`: dataset names and `#mode=` fragments.
//! - `error`, `trace`: the one error type and its `NC_*` mapping; `NCTRACING` output.

pub mod codec;
pub mod dataset;
pub mod engine;
pub mod error;
pub mod ffi;
pub mod format;
pub mod model;
pub mod names;
pub mod parallel;
pub mod quantize;
pub mod registry;
pub mod shard;
pub mod trace;
pub mod types;
pub mod url;
pub mod values;
pub mod zmap;

/// Rust-side allocations (metadata parsing is allocation-heavy) use mimalloc; memory handed to
/// C callers is always allocated with libc `malloc`, so this choice never crosses the ABI.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

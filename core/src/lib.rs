//! nczarr-core: the safe Rust core of nczarr-rs. The netCDF-4 data model over NCZarr and Zarr
//! (v2 and v3) stores on a directory, a zip archive or S3; no C ABI, no `unsafe` pointer from
//! a caller. The `netcdf` crate (the repository root) is its C API.
//!
//! Visibility: `pub` is the Rust API, what the C ABI crate (and any Rust user) calls;
//! everything else is `pub(crate)`, and `bytes`, `json`, `parallel` and the readers' and
//! writers' submodules (`format::v2`, `format::v3`, the zip driver, the store adapters) are
//! private to the core as a whole.
//!
//! Comments cite the specifications in `doc/spec/` by file and section (`zarr-v3.md §7.4`,
//! `reliability.md C2`).
//!
//! # Layers
//! Each module may import only modules of a lower layer (and its own submodules); modules of
//! one layer never import each other. `tools/check_layers.py` reads this table and fails
//! `make check` on any import against it.
//!
//! | layer | modules | what they hold |
//! |---|---|---|
//! | 10 | `aggregate` `lazy` | aggregated datasets (CFA-0.4/0.5, CF-1.12): masters read through `NcSource` into our datasets over their fragments; lazy opens of netCDF-3/netCDF-4 objects: scanned into our datasets over references into them |
//! | 9 | `dataset` | what each call does to an open dataset: define mode, inquiries, data, persistence |
//! | 8 | `format` `engine` | Zarr metadata ↔ model (every layout netcdf-c wrote; v2 and v3); the chunk data path |
//! | 7 | `zmap` | storage drivers (directory, zip, S3, memory), tracing, v3 shards as a store adapter |
//! | 6 | `url` | dataset names, `#mode=` fragments, S3 URL forms |
//! | 5 | `model` | one dataset's netCDF-4 model: groups, dims, vars, atts; plain data |
//! | 4 | `codec` `source` | filters and Zarr codecs: ids, JSON, encode/decode; "a netCDF file" as the `NcSource`/`NcSink` traits |
//! | 3 | `nc` `json` | netCDF vocabulary (types, names, values, quantize); JSON as Zarr writers write it |
//! | 2 | `trace` | `NCTRACING` output |
//! | 1 | `config` `parallel` `collective` | `.ncrc` and environment settings; the per-process worker pool; MPI ranks as a C vtable |
//! | 0 | `error` `bytes` | the one error type and its `NC_*` codes; byte copies into caller memory |

// Aggregation is pure Rust over `NcSource`: the compiler holds it to that.
#[forbid(unsafe_code)]
pub mod aggregate;
pub(crate) mod bytes;
pub mod codec;
pub mod collective;
pub mod config;
pub mod dataset;
pub mod engine;
pub mod error;
pub mod format;
pub(crate) mod json;
pub mod lazy;
pub mod model;
pub mod nc;
pub(crate) mod parallel;
pub mod source;
pub mod trace;
pub mod url;
pub mod zmap;

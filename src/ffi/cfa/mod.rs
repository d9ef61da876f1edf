//! Aggregated datasets (CFA-netCDF 0.4 and 0.5, as S3netCDF4 writes them), read
//! transparently. A master file opened by the real netcdf-c whose `Conventions` names CFA is
//! turned into one of our datasets, held in memory: the master's dimensions, attributes and
//! ordinary variables (copied, as `nc_copy_var` copies across the two worlds), and each
//! aggregated variable as an ordinary variable over its aggregated dimensions whose chunks are
//! read from the fragment files (`zmap::cfa`). The CFA bookkeeping (the `cf_role`/`cfa_*`
//! attributes, CFA-0.5's `cfa_<var>` groups) is not copied. `#mode=nocfa` or `NCZARR_CFA=0`
//! leaves the master as it is.
//!
//! Fragment files are opened through our own `nc_open` (so each may be netCDF-3, netCDF-4 or
//! NCZarr, local or on S3) one at a time: the real netcdf-c is not thread-safe.

//!
//! Files: `open` (masters found and turned into our datasets), `copy` (a master into ours),
//! `fragments` (a master's fragment list, per convention), `read` (fragments read through our
//! `nc_open`), `write` (creating, reopening and storing), `fragment_files` (fragments written
//! behind), `master` (the master written), `place` (names), `calls` (C API helpers).

mod calls;
mod fragment_files;
mod master;
mod open;
pub mod write;

pub use open::after_open;

//! The netCDF-4 vocabulary, with no I/O: atomic types, name rules, typed values and their
//! conversions, and netcdf-c's quantize algorithms.

pub mod magic;
pub mod modes;
pub mod names;
pub(crate) mod quantize;
pub mod types;
pub mod values;
pub mod version;

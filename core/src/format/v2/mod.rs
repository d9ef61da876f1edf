//! Zarr v2 and every NCZarr layout netcdf-c wrote on it (`.zgroup`, `.zarray`, `.zattrs`,
//! `.zmetadata`; G1, G2u, G2l, G2a and pure Zarr).

mod array;
mod nodes;
pub mod read;
pub mod write;

//! Zarr metadata ↔ the in-memory model: v2 (with every NCZarr layout) and v3.
//!
//! `read` accepts every layout netcdf-c has written (G1, G2u, G2l, G2a) and pure Zarr, and
//! normalises them once into `Model`; nothing downstream knows which layout a dataset came
//! from except `Layout`, used only to refuse writing into legacy layouts. `write` renders one
//! layout per flavour.

pub mod attrs;
pub mod dtype;
pub mod v2;
pub mod v3;

/// Which generation of metadata a dataset was read from (nczarr-format.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// 4.9.3+: `_nczarr_*` in `.zattrs`. What we write.
    G2a,
    /// 4.9.1–4.9.2: `_nczarr_*` inside `.zgroup`/`.zarray`.
    G2l,
    /// 4.8.1–4.9.0: `_NCZARR_*` inside `.zgroup`/`.zarray`.
    G2u,
    /// 4.8.0: separate `.nczarr`, `.nczgroup`, `.nczvar`, `.nczattr` objects.
    G1,
    /// No NCZarr metadata at all.
    Pure,
}

impl Layout {
    pub fn is_legacy(self) -> bool {
        matches!(self, Layout::G2l | Layout::G2u | Layout::G1)
    }
}

/// Attribute names that belong to the layout and never appear in netCDF attribute lists.
pub const HIDDEN_ATTS: &[&str] = &[
    "_nczarr_superblock",
    "_nczarr_group",
    "_nczarr_array",
    "_nczarr_attr",
    "_NCZARR_SUPERBLOCK",
    "_NCZARR_GROUP",
    "_NCZARR_ARRAY",
    "_NCZARR_ATTR",
    "_ARRAY_DIMENSIONS",
    "_NCProperties",
];

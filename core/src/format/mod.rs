//! Zarr metadata ↔ the in-memory model: v2 (with every NCZarr layout) and v3.
//!
//! `read` accepts every layout netcdf-c has written (G1, G2u, G2l, G2a) and pure Zarr, and
//! normalises them once into `Model`; nothing downstream knows which layout a dataset came
//! from except `Layout`, used only to refuse writing into legacy layouts. `write` renders one
//! layout per flavour.

pub(crate) mod attrs;
pub(crate) mod common;
pub(crate) mod dtype;
pub mod open;
pub(crate) mod v2;
pub(crate) mod v3;

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
    pub(crate) fn is_legacy(self) -> bool {
        matches!(self, Layout::G2l | Layout::G2u | Layout::G1)
    }
}

/// Attribute names that belong to the layout and never appear in netCDF attribute lists.
pub(crate) const HIDDEN_ATTS: &[&str] = &[
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

/// The Zarr format of a dataset, chosen at create (zarr-v3.md V1) or found at open. The
/// dataset asks it for everything that differs between the versions instead of branching on
/// a version number itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZarrFormat {
    V2,
    V3,
}

/// What rendering needs from the dataset besides its model.
pub struct RenderOptions {
    pub flavor: crate::url::Flavor,
    /// Write `_ARRAY_DIMENSIONS` (v2; v3 has `dimension_names`).
    pub xarray: bool,
    /// Char variables as `>S1` (netcdf-c's v2 dtype).
    pub strict_char: bool,
    pub nc_properties: String,
    pub consolidated: bool,
    pub classic: bool,
}

impl ZarrFormat {
    pub(crate) fn from_number(n: u8) -> ZarrFormat {
        if n == 3 { ZarrFormat::V3 } else { ZarrFormat::V2 }
    }

    pub(crate) fn number(self) -> u8 {
        match self {
            ZarrFormat::V2 => 2,
            ZarrFormat::V3 => 3,
        }
    }

    /// Naming rules of the format on top of netCDF's, for groups and variables.
    pub(crate) fn check_node_name(self, name: &str) -> crate::error::Result<()> {
        match self {
            ZarrFormat::V2 => Ok(()),
            ZarrFormat::V3 => v3::check_node_name(name),
        }
    }

    /// Chunk-key separator when neither the URL nor `.ncrc` names one: netcdf-c's `.` in v2,
    /// `/` for v3 `default` keys (zarr-v3.md §5).
    pub(crate) fn default_separator(self) -> char {
        match self {
            ZarrFormat::V2 => '.',
            ZarrFormat::V3 => '/',
        }
    }

    /// Sets up a new variable's stored form: v3 arrays get their v3 part, and v3 strings are
    /// `string` + `vlen-utf8` (zarr-v3.md V3): no width, no truncation.
    pub(crate) fn init_var(self, var: &mut crate::model::Var) {
        if self == ZarrFormat::V3 {
            var.stored.v3 = Some(Box::new(crate::model::V3Array { default_keys: true, ..Default::default() }));
            if var.nctype == crate::nc::types::NcType::String {
                var.stored.element = crate::model::StorageKind::Vlen;
                var.filters.push(crate::codec::Filter { id: 0, params: vec![], raw: Some(serde_json::json!({"id": "vlen-utf8"})) });
            }
        }
    }

    /// Refuses a filter the format has no codec for.
    pub(crate) fn check_filter(self, id: u32) -> crate::error::Result<()> {
        match self {
            ZarrFormat::V3 if id == crate::codec::SZIP => crate::error::err(crate::error::Kind::Filter, "szip has no Zarr v3 codec"),
            _ => Ok(()),
        }
    }

    /// Sharding exists in v3 only.
    pub(crate) fn has_shards(self) -> bool {
        self == ZarrFormat::V3
    }

    /// Zip archives: netcdf-c's v2 archives hold the dataset in a folder named after the
    /// archive; v3 archives keep entries at the root (zarr-v3.md V12).
    pub(crate) fn zip_in_folder(self) -> bool {
        self == ZarrFormat::V2
    }

    /// Strings must be valid UTF-8: v3 declares them so and zarr-python fails a whole chunk on
    /// bad bytes (zarr-v3.md §3.1); v2 keeps netcdf-c's byte-for-byte tolerance.
    pub fn strict_utf8(self) -> bool {
        self == ZarrFormat::V3
    }

    /// `_SuperblockVersion`: 0 for pure Zarr, else the format number.
    pub(crate) fn superblock_version(self, pure: bool) -> i32 {
        if pure { 0 } else { self.number() as i32 }
    }

    /// Every metadata object of the model, in the crash-safe order they must be written.
    pub fn render(self, model: &crate::model::Model, opts: &RenderOptions) -> Vec<(String, Vec<u8>)> {
        match self {
            ZarrFormat::V2 => v2::write::render(model, opts),
            ZarrFormat::V3 => {
                let v3_opts = v3::Options {
                    nczarr: opts.flavor == crate::url::Flavor::NcZarr,
                    nc_properties: opts.nc_properties.replace("nczarr=2.0.0", "nczarr=3.0.0"),
                    consolidated: opts.consolidated,
                    classic: opts.classic,
                };
                v3::render(model, &v3_opts)
            }
        }
    }

    /// The `_Codecs` attribute netcdf-c answers for a variable (NUL-terminated: ncdump reads
    /// it into an uninitialised len+1 buffer and prints up to the first NUL); `None` when the
    /// variable has no filters.
    pub(crate) fn codecs_attribute(self, model: &crate::model::Model, var: &crate::model::Var) -> Option<Vec<u8>> {
        let mut bytes = match &var.stored.v3 {
            // v3: the `codecs` list itself (sharding included), as stored or as we write it.
            Some(v3) => {
                let list = match v3.doc.as_ref().and_then(|d| d.get("codecs")) {
                    Some(c) => c.clone(),
                    None => v3::codecs_for(var, var.nctype.size()),
                };
                crate::codec::netcdf_json(&list).into_bytes()
            }
            None if var.filters.is_empty() => return None,
            None => {
                let size = if var.nctype == crate::nc::types::NcType::String { model.maxstrlen(var) } else { var.nctype.size() };
                crate::codec::codecs_text(&var.filters, size).into_bytes()
            }
        };
        bytes.push(0);
        Some(bytes)
    }
}

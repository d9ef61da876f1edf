//! The safe core API: what one `nc_*` call does to one open dataset, in Rust types.
//!
//! A `Dataset` owns its model and its store. Define-mode rules, NC_EPERM, the enddef lock on
//! variables and metadata persistence live here; the FFI layer only converts arguments.
//! Metadata is written at enddef, sync and close, and only the objects whose bytes changed
//! are rewritten, so reopening for write and closing with no change touches nothing (C6).

use crate::codec;
use crate::codec::Filter;
use crate::error::{Error, Kind, Result, err};
use crate::format::open;
use crate::format::{Layout, ZarrFormat};
use crate::model::{Att, ChunkCache, Endian, Model, Var, default_chunks};
use crate::nc::modes::{FillMode, OpenFlags, VarRef};
use crate::nc::names;
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::trace;
use crate::url::{Driver, Flavor, OpenSpec, probe};
use crate::zmap::{Key, Zmap};
use std::collections::HashMap;
use std::sync::Mutex;

mod attrs;
mod codes;
mod data;
mod define;
mod inquire;
mod layouts;
pub mod object_file;
mod parallel;
mod references;
mod source;
mod strings;

pub use parallel::Access;

pub use inquire::GroupCounts;
mod persist;

/// The provenance string written into new datasets' `_NCProperties`.
pub(crate) static NC_PROPERTIES: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("version=2,netcdf={},nczarr=2.0.0,nczarr-rs={}", crate::nc::version::NETCDF, env!("CARGO_PKG_VERSION"))
});

/// Attribute names netcdf-c reserves: not settable, not deletable, hidden from listings.
pub(crate) const RESERVED_ATTS: &[&str] = &[
    "_NCProperties",
    "_IsNetcdf4",
    "_SuperblockVersion",
    "_Codecs",
    "_Format",
    "_nc3_strict",
    "_ARRAY_DIMENSIONS",
    "_Netcdf4Coordinates",
    "_Netcdf4Dimid",
    "CLASS",
    "DIMENSION_LIST",
    "NAME",
    "REFERENCE_LIST",
    "_nczarr_attr",
    "_nczarr_group",
    "_nczarr_array",
    "_nczarr_superblock",
];

/// Whether an attribute name is netcdf-c's to give where it is put: every reserved name on the
/// root group; on variables the ones netcdf-c hides there (HDF5 dimension-scale names, and
/// `_Codecs`, answered virtually here); elsewhere only the names this library's storage uses
/// itself (`_nczarr_attr` and its siblings, `_ARRAY_DIMENSIONS`, and `_NCProperties`, which
/// readers hide).
pub(crate) fn reserved_att(name: &str, gid: usize, varid: VarRef) -> bool {
    const STORAGE: &[&str] =
        &["_ARRAY_DIMENSIONS", "_NCProperties", "_nczarr_attr", "_nczarr_group", "_nczarr_array", "_nczarr_superblock"];
    const ON_VARIABLES: &[&str] = &["CLASS", "DIMENSION_LIST", "NAME", "REFERENCE_LIST", "_Netcdf4Coordinates", "_Netcdf4Dimid", "_Codecs"];
    if STORAGE.contains(&name) {
        return true;
    }
    match varid {
        VarRef::Global if gid == 0 => RESERVED_ATTS.contains(&name),
        VarRef::Global => false,
        VarRef::Var(_) => ON_VARIABLES.contains(&name),
    }
}

/// Library-wide chunk cache defaults (`nc_set_chunk_cache`), netcdf-c 4.10.1's values.
pub static CACHE_DEFAULTS: Mutex<ChunkCache> = Mutex::new(ChunkCache { size: 67_108_864, nelems: 1000, preemption: 0.75 });

pub fn cache_defaults() -> ChunkCache {
    *CACHE_DEFAULTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a lazily opened dataset's inquiries answer as the netCDF file it was scanned from.
#[derive(Debug, Clone)]
pub struct Scanned {
    pub format: crate::nc::magic::FileFormat,
    /// Variables (group, varid) the file stores contiguous or compact (not chunked: the
    /// chunks we read them by are cut from its bytes).
    pub storage: HashMap<(usize, usize), crate::nc::modes::Storage>,
}

pub struct Dataset {
    model: layouts::TrackedModel,
    /// Each variable's chunk layout, built once per change of the model (`layouts.rs`).
    layouts: layouts::Layouts,
    store: Box<dyn Zmap>,
    spec: OpenSpec,
    flavor: Flavor,
    /// Mode argument of create/open (`nc_inq_format_extended` reports it).
    mode: OpenFlags,
    writable: bool,
    define_mode: bool,
    classic: bool,
    nofill_default: bool,
    dirty: bool,
    layout: Layout,
    stored: HashMap<String, Vec<u8>>,
    nc_properties: String,
    has_zmetadata: bool,
    created: bool,
    /// Decoded chunks; dirty ones reach storage at eviction, sync and close.
    chunks: crate::engine::Cache,
    /// v2 or v3: supplies every rule that differs between them.
    format: ZarrFormat,
    /// Shard indexes read so far, by shard key (zarr-v3.md §7.3).
    shard_indexes: crate::zmap::adapter::shard::IndexCache,
    /// The MPI ranks sharing this dataset (`nc_create_par`/`nc_open_par`).
    par: Option<parallel::ParState>,
    /// Variables (group, varid) written to since the dataset was opened: netcdf-c's
    /// `written_to`, after which a `_FillValue` is NC_ELATEFILL.
    written: std::collections::HashSet<crate::model::VarKey>,
    /// Old keys of renamed nodes whose objects were copied to their new keys: deleted once the
    /// metadata naming the new keys is stored (persist.rs).
    retired: Vec<String>,
    /// The netCDF file a lazy open scanned into this dataset: inquiries answer as for it.
    scanned: Option<Scanned>,
    /// Held while this dataset is a reference set being written: reads in the process are
    /// remembered so puts of their values become references (references.rs).
    references_out: Option<crate::engine::origins::WriterTicket>,
    /// Told the arrays at every enddef, sync and close: an aggregated dataset's store
    /// (`tell_arrays`).
    arrays_out: Option<std::sync::Arc<crate::zmap::cfa::write::Arrays>>,
}

impl Dataset {
    pub fn create(spec: OpenSpec, cmode: OpenFlags) -> Result<Dataset> {
        // A reference set copied from a netCDF-3 file (nccopy keeps the input's format flags)
        // holds that file's chunks: its 64-bit offsets are the source's business.
        let copied_format = spec.driver == Some(Driver::Refs) && !cmode.in_memory();
        if cmode.unsupported_for_create() && !copied_format {
            return err(Kind::Invalid, "mode flag not supported for Zarr datasets");
        }
        if cmode.noclobber() && crate::zmap::open::exists(&spec)? {
            return err(Kind::Exists, format!("{} exists", spec.path.display()));
        }
        let mut spec = spec;
        let references = spec.driver == Some(Driver::Refs);
        if references {
            // What fsspec/zarr/xarray read: Zarr v2 with xarray's dimension names.
            if spec.zarr_format.is_some_and(|f| f != 2) || spec.shard != crate::url::ShardRequest::None {
                return err(Kind::Invalid, "a reference set holds Zarr v2 (no v3, no shards)");
            }
            // NCZarr's attributes ride along (unlimited dimensions, variable order: what a
            // netCDF program reads back); `mode=zarr,kerchunk` writes plain Zarr, as kerchunk does.
            (spec.flavor, spec.xarray, spec.zarr_format) = (Some(spec.flavor.unwrap_or(Flavor::NcZarr)), true, Some(2));
        }
        let format = ZarrFormat::from_number(spec.create_format());
        if !format.has_shards() && spec.shard != crate::url::ShardRequest::None {
            return err(Kind::Invalid, "shard= needs mode v3");
        }
        let (store, _) = crate::zmap::open::open(&spec, true, true, format.zip_in_folder())?;
        let mut ds = Dataset::create_on(spec, cmode, store, format)?;
        if references {
            ds.references_out = Some(crate::engine::origins::WriterTicket::new());
        }
        Ok(ds)
    }

    /// A new dataset over a store the caller made (an aggregated dataset's memory store).
    pub fn create_on(spec: OpenSpec, cmode: OpenFlags, store: Box<dyn Zmap>, format: ZarrFormat) -> Result<Dataset> {
        let mut ds = Dataset::fresh(spec, cmode, store, format);
        ds.persist_behind()?;
        Ok(ds)
    }

    /// A new, empty dataset in define mode over `store` (nothing written yet).
    fn fresh(spec: OpenSpec, cmode: OpenFlags, store: Box<dyn Zmap>, format: ZarrFormat) -> Dataset {
        let flavor = spec.flavor.unwrap_or(Flavor::NcZarr);
        if !spec.xarray && flavor == Flavor::Zarr {
            trace::warn("noxarray implies pure Zarr: dimension names will not be stored");
        }
        Dataset {
            model: layouts::TrackedModel::new(Model::new()),
            layouts: Default::default(),
            store,
            flavor,
            mode: cmode,
            writable: true,
            define_mode: true,
            classic: cmode.classic_model(),
            nofill_default: false,
            dirty: true,
            layout: if flavor == Flavor::Zarr { Layout::Pure } else { Layout::G2a },
            stored: HashMap::new(),
            nc_properties: NC_PROPERTIES.to_string(),
            has_zmetadata: false,
            created: true,
            chunks: Default::default(),
            format,
            shard_indexes: Default::default(),
            par: None,
            written: Default::default(),
            retired: Vec::new(),
            scanned: None,
            references_out: None,
            arrays_out: None,
            spec,
        }
    }

    pub fn open(spec: OpenSpec, omode: OpenFlags) -> Result<Dataset> {
        if omode.unsupported_for_open() {
            return err(Kind::Invalid, "mode flag not supported for Zarr datasets");
        }
        let (store, _) = crate::zmap::open::open(&spec, false, omode.write(), false)?;
        Dataset::open_on(spec, omode, store)
    }

    /// Opens the dataset held by a store the caller made (an aggregated dataset's).
    pub fn open_on(spec: OpenSpec, omode: OpenFlags, store: Box<dyn Zmap>) -> Result<Dataset> {
        let name = spec.path.to_string_lossy().into_owned();
        let loaded = match open::read(store.as_ref(), spec.flavor, spec.consolidated, &name, spec.zarr_format) {
            // On S3 "no metadata" may mean nothing at all under the root (or no bucket): the
            // same NC_ENOOBJECT a missing directory gives.
            Err(e)
                if e.kind == Kind::NotNetcdf
                    && spec.s3.is_some()
                    && match store.list_dir(&Key::root()) {
                        Ok(children) => children.is_empty(),
                        Err(listing) => listing.kind == Kind::NoObject,
                    } =>
            {
                return err(Kind::NoObject, format!("{} does not exist", spec.path.display()));
            }
            other => other?,
        };
        let flavor = spec.flavor.unwrap_or(if loaded.layout == Layout::Pure { Flavor::Zarr } else { Flavor::NcZarr });
        let mut model = loaded.model;
        model.number_dims_depth_first();
        let defaults = cache_defaults();
        for g in &mut model.groups {
            for v in &mut g.vars {
                v.cache = defaults;
            }
        }
        if loaded.layout.is_legacy() && omode.write() {
            trace::warn("legacy NCZarr layout: opened read-only");
        }
        let mut ds = Dataset {
            model: layouts::TrackedModel::new(model),
            layouts: Default::default(),
            store,
            flavor,
            mode: omode,
            writable: omode.write() && !loaded.layout.is_legacy(),
            define_mode: false,
            classic: loaded.classic,
            nofill_default: false,
            dirty: false,
            layout: loaded.layout,
            stored: loaded.stored,
            nc_properties: loaded.nc_properties.unwrap_or_default(),
            has_zmetadata: loaded.has_zmetadata,
            created: false,
            chunks: Default::default(),
            format: ZarrFormat::from_number(loaded.zarr_format),
            shard_indexes: Default::default(),
            par: None,
            written: Default::default(),
            retired: Vec::new(),
            scanned: None,
            references_out: None,
            arrays_out: None,
            spec,
        };
        // netcdf-c counts every variable of an opened file as written (`written_to`): a
        // _FillValue for it is NC_ELATEFILL from the start.
        for gid in 0..ds.model.groups.len() {
            ds.mark_group_written(gid);
        }
        Ok(ds)
    }

    pub(crate) fn is_pure_zarr(&self) -> bool {
        self.layout == Layout::Pure
    }

    /// NC_EPERM on a dataset opened read-only.
    pub(super) fn check_writable(&self) -> Result<()> {
        if self.writable { Ok(()) } else { err(Kind::ReadOnly, "dataset is read-only") }
    }

    /// netCDF-3's rule, kept by netcdf-c for classic-model datasets: bytes converted to or from
    /// unsigned bytes are never out of range.
    pub(super) fn unchecked_range(&self, file: NcType, mem: NcType) -> bool {
        self.classic && matches!((file, mem), (NcType::Byte, NcType::UByte) | (NcType::UByte, NcType::Byte))
    }

    /// An attribute's value converted to memory type `mem` as netcdf-c converts it: a
    /// zero-length attribute reads as any type (`nc_get_att_text` of an empty NC_SHORT is
    /// NC_NOERR), and NC_ERANGE is reported unless the classic byte rule waives it.
    pub fn att_in_type(&self, att: &Att, mem: NcType) -> Result<(Values, bool)> {
        if att.value.is_empty() {
            return Ok((Values::from_scalars(mem, std::iter::empty()), false));
        }
        let (values, range) = att.value.convert(mem)?;
        Ok((values, range && !self.unchecked_range(att.value.nctype(), mem)))
    }

    /// Every metadata-changing call starts here: NC_EPERM on read-only datasets, implicit
    /// redef in data mode (classic model: NC_ENOTINDEFINE instead).
    pub(crate) fn begin_define(&mut self) -> Result<()> {
        self.check_define()?;
        self.define_mode = true;
        Ok(())
    }

    /// `begin_define`'s refusals without the implicit redef, for the calls netcdf-c checks
    /// whole before it leaves data mode (`nc_def_dim`, `nc_def_grp`): refused, they leave the
    /// dataset in data mode, so the next `nc_enddef` is NC_ENOTINDEFINE as in netcdf-c.
    pub(crate) fn check_define(&self) -> Result<()> {
        self.check_writable()?;
        if !self.define_mode && self.classic {
            return err(Kind::NotInDefine, "classic model: call nc_redef first");
        }
        Ok(())
    }

    /// A dataset this session created without `NC_NETCDF4` was asked for as netCDF-3, and
    /// netCDF-3 lets `_FillValue` be set after data was written (NCO's `ncap2` does so when
    /// its input is a classic file); netCDF-4 answers NC_ELATEFILL.
    pub(super) fn netcdf3_semantics(&self) -> bool {
        self.created && !self.mode.netcdf4()
    }

    /// Renames of dimensions, variables and attributes: netcdf-c does them in data mode
    /// without entering define mode (the next `nc_enddef` is NC_ENOTINDEFINE); in a
    /// classic-model dataset a longer variable or attribute name needs define mode
    /// (`longer`), as netCDF-3's header rewrite does. The new names reach storage at the
    /// next enddef, sync or close; until then data goes to the objects' old keys.
    pub(crate) fn begin_rename(&mut self, longer: bool) -> Result<()> {
        self.check_writable()?;
        if !self.define_mode && self.classic && longer {
            return err(Kind::NotInDefine, "classic model: a longer name needs define mode");
        }
        Ok(())
    }

    /// Every data call starts here: implicit enddef (classic model: NC_EINDEFINE instead).
    pub fn begin_data(&mut self) -> Result<()> {
        if self.define_mode {
            if self.classic {
                return err(Kind::InDefine, "classic model: call nc_enddef first");
            }
            self.enddef()?;
        }
        Ok(())
    }

    pub fn redef(&mut self) -> Result<()> {
        self.check_writable()?;
        if self.define_mode {
            return err(Kind::InDefine, "already in define mode");
        }
        if let Some(par) = &self.par {
            // Collective: every rank enters define mode at the same call.
            par.comm.barrier()?;
        }
        self.define_mode = true;
        Ok(())
    }

    pub fn enddef(&mut self) -> Result<()> {
        if !self.define_mode {
            return err(Kind::NotInDefine, "not in define mode");
        }
        let target = match self.spec.shard {
            crate::url::ShardRequest::None => None,
            crate::url::ShardRequest::Auto => Some(64 << 20),
            crate::url::ShardRequest::Bytes(n) => Some(n),
        };
        if self.format.has_shards() {
            for gid in 0..self.model.groups.len() {
                for varid in 0..self.model.groups[gid].vars.len() {
                    let var = &self.model.groups[gid].vars[varid];
                    if var.locked {
                        continue;
                    }
                    let explicit = var.stored.v3.as_ref().is_some_and(|v| v.shard_explicit);
                    let wanted = match (explicit, target) {
                        (false, Some(t)) => self.auto_shard(var, t),
                        _ => var.stored.v3.as_ref().and_then(|v| v.shard.clone()),
                    };
                    // Chunk sizes may have changed after the shards were set: keep whole chunks.
                    let wanted = wanted.map(|s| s.iter().zip(&var.chunks).map(|(&s, &c)| s.div_ceil(c) * c).collect::<Vec<u64>>());
                    let var = &mut self.model.groups[gid].vars[varid];
                    let v3 = var.stored.v3.get_or_insert_with(Default::default);
                    v3.shard = wanted.filter(|s| s != &var.chunks);
                    if v3.shard.is_some() {
                        v3.index = crate::model::ShardIndex { at_start: false, crc: true, big_endian: false };
                    }
                }
            }
        }
        let widths: Vec<Vec<usize>> = self.model.groups.iter().map(|g| g.vars.iter().map(|v| self.model.maxstrlen(v)).collect()).collect();
        for (g, widths) in self.model.groups.iter_mut().zip(widths) {
            for (v, width) in g.vars.iter_mut().zip(widths) {
                if !v.locked {
                    v.locked = true;
                    if v.quantize.0 > 0 {
                        let name = crate::nc::quantize::ATT_NAMES[v.quantize.0 as usize - 1];
                        v.atts.retain(|a| a.name != name);
                        v.atts.push(Att::new(name.into(), Values::Int(vec![v.quantize.1])));
                    }
                    v.storage_fill = if v.no_fill { None } else { Some(v.declared_fill()) };
                    if v.nctype == NcType::String && v.stored.element == crate::model::StorageKind::Native {
                        // The width chunks are written with is fixed from here on.
                        // Wide enough for the fill too: unwritten elements of a written chunk
                        // hold it, and a string is never cut.
                        v.stored.maxstrlen.get_or_insert(width.max(strings::string_fill_len(v)).min(crate::model::MAX_STRLEN));
                    }
                }
            }
        }
        self.define_mode = false;
        self.persist_behind()
    }

    /// `nc_enddef` on group `gid` itself (not the implicit enddef of a data call): netcdf-c
    /// first counts every variable of that group as written (`written_to`, so a later
    /// `_FillValue` is NC_ELATEFILL), even when the call then fails outside define mode.
    pub fn end_define(&mut self, gid: usize) -> Result<()> {
        self.mark_group_written(gid);
        self.enddef()
    }

    /// `nc_sync` on group `gid`: in define mode it ends it as `nc_enddef` does.
    pub fn sync_group(&mut self, gid: usize) -> Result<()> {
        if self.define_mode && self.writable && !self.classic {
            self.mark_group_written(gid);
        }
        self.sync()
    }

    fn mark_group_written(&mut self, gid: usize) {
        let n = self.model.groups.get(gid).map_or(0, |g| g.vars.len());
        self.written.extend((0..n).map(|v| crate::model::VarKey::new(gid, v)));
    }

    pub(crate) fn sync(&mut self) -> Result<()> {
        if !self.writable {
            return Ok(());
        }
        if self.define_mode {
            if self.classic {
                return err(Kind::InDefine, "classic model: sync in define mode");
            }
            self.enddef()?;
        }
        self.persist()
    }

    pub fn close(mut self) -> Result<()> {
        if self.writable {
            if self.define_mode {
                self.enddef()?;
            }
            self.persist()?;
        }
        Ok(())
    }

    /// Abort: a dataset created in this session and never made durable is deleted; otherwise
    /// pending changes are dropped (nothing is written).
    pub fn abort(self) -> Result<()> {
        // A versioned store's writes are one session, discarded by dropping it; its place is a
        // repository with a history, never deleted here.
        if self.store.caps().versioned {
            return Ok(());
        }
        if self.created
            && self.par.as_ref().is_none_or(|p| p.comm.rank() == 0)
            && self.model.groups[0].vars.is_empty()
            && self.model.dims.is_empty()
            && self.model.groups.len() == 1
            && self.define_mode
        {
            if self.spec.s3.is_some() {
                return self.store.delete_prefix(&Key::root());
            }
            drop(self.store);
            if std::fs::metadata(&self.spec.path).is_ok_and(|m| m.is_dir()) {
                std::fs::remove_dir_all(&self.spec.path)?;
            } else if std::fs::metadata(&self.spec.path).is_ok() {
                std::fs::remove_file(&self.spec.path)?;
            }
        }
        Ok(())
    }

    /// `nc_set_fill`: the default for variables defined from now on; returns the old one.
    pub fn set_fill(&mut self, mode: FillMode) -> Result<FillMode> {
        self.check_writable()?;
        let old = if self.nofill_default { FillMode::NoFill } else { FillMode::Fill };
        self.nofill_default = mode == FillMode::NoFill;
        Ok(old)
    }

    fn touched(&mut self) {
        self.dirty = true;
    }
}

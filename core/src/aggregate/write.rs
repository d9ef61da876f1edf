//! Writing aggregated datasets: a create of a name that asks for one (`#mode=cfa`,
//! `cfa=0.4|0.5`), the reopen of a master for writing, and the store at sync and close, which
//! stores the fragments and then writes the master (`master.rs`). Our dataset lives in memory
//! over a `CfaWriteStore` that hands each chunk to the fragment files.

use super::fragment_files::{FragmentFiles, Stored};
use super::place::{Convention, Place};
use super::{Built, Opener};
use crate::dataset::Dataset;
use crate::error::{Kind, Result, err};
use crate::nc::modes::OpenFlags;
use crate::source::CreateFormat;
use crate::zmap::cfa::write::{Arrays, CfaWriteStore};
use crate::zmap::memory::MemoryStore;
use std::sync::Arc;

/// One aggregated dataset being written.
pub struct Writer {
    pub(super) files: Arc<FragmentFiles>,
    pub(super) convention: Convention,
    /// How the master is made.
    pub(super) master_format: CreateFormat,
    pub(super) opener: Arc<dyn Opener>,
}

/// What a create asks of the files: the master's format, and the logical dataset's classic
/// model (so that a classic master can hold it).
#[derive(Debug, Clone, Copy)]
pub struct CreateRequest {
    /// `NC_NETCDF4` given.
    pub netcdf4: bool,
    pub classic_model: bool,
    pub offset64: bool,
    pub data64: bool,
    pub noclobber: bool,
}

/// The dataset's memory spec: fragments cut as the aggregation's subarray size says.
fn spec(name: &str) -> crate::url::OpenSpec {
    let mut spec = crate::url::OpenSpec::in_memory(name);
    spec.fragment_split = Some(crate::config::cfa_subarray_bytes());
    spec
}

/// A new aggregated dataset named `name` (whose mode asks for `convention`).
pub fn create(name: &str, convention: Convention, request: CreateRequest, opener: Arc<dyn Opener>) -> Result<(Dataset, Writer)> {
    let place = Place::parse(name)?;
    if request.noclobber && master_exists(&place)? {
        return err(Kind::Exists, format!("{}: exists and NC_NOCLOBBER was given", place.master));
    }
    let master_format = match convention {
        Convention::V04 if !request.netcdf4 && request.data64 => CreateFormat::Data64,
        Convention::V04 if !request.netcdf4 && request.offset64 => CreateFormat::Offset64,
        Convention::V04 if !request.netcdf4 => CreateFormat::Classic,
        Convention::V04 if request.classic_model => CreateFormat::Netcdf4Classic,
        _ => CreateFormat::Netcdf4,
    };
    let files = FragmentFiles::new(place, opener.clone());
    let arrays = Arc::new(Arrays::default());
    let store = CfaWriteStore::new(name, Arc::new(MemoryStore::new()), files.clone(), arrays.clone());
    // The logical dataset is netCDF-4 whatever the master is (the classic model kept when
    // asked for, so a classic master can hold it).
    let classic = request.classic_model || !matches!(master_format, CreateFormat::Netcdf4 | CreateFormat::Netcdf4Classic);
    let mut ds = Dataset::create_on(spec(name), OpenFlags::aggregated_create(classic), Box::new(store), crate::format::ZarrFormat::V2)?;
    ds.tell_arrays(arrays);
    Ok((ds, Writer { files, convention, master_format, opener }))
}

fn master_exists(place: &Place) -> Result<bool> {
    if place.local_dir.is_some() {
        return Ok(std::path::Path::new(&place.master).exists());
    }
    match crate::url::object::object_name(&place.master, true)? {
        Some(object) => crate::zmap::s3::object::S3Object::new(&object.target, &object.params)?.exists(),
        None => Ok(false),
    }
}

/// The master of `built` (convention `version`, made as `master_format`) reopened for writing:
/// our dataset over its fragments, written as a new one is (new chunks become new fragments;
/// unlimited dimensions grow by them). The fragments must lie on one regular grid (each at a
/// multiple of the grid's step, none larger): a master aggregating irregular fragments, or
/// constant (`unique_values`) ones, is read-only.
pub fn reopen(built: Built, version: &str, master_format: CreateFormat, omode: OpenFlags) -> Result<(Dataset, Writer)> {
    let convention = match version {
        "CFA-0.4" => Convention::V04,
        "CFA-0.5" => Convention::V05,
        _ => Convention::Cf,
    };
    let name = built.name.clone();
    let opener = built.opener.clone();
    if let Some((agg, _)) = built.vars.iter().find(|(a, _)| a.key.contains('/')) {
        return err(Kind::ReadOnly, format!("{name}: {} is aggregated in a sub-group; it can be read, not written", agg.key));
    }
    let infos = built.array_infos()?;
    let (memory, vars) = built.into_parts()?;
    let files = FragmentFiles::new(Place::parse(&name)?, opener.clone());
    {
        let mut held = files.lock();
        for (agg, _) in &vars {
            for f in &agg.fragments {
                let aligned =
                    f.constant.is_none() && (0..agg.chunks.len()).all(|d| f.start[d] % agg.chunks[d] == 0 && f.shape[d] <= agg.chunks[d]);
                if !aligned {
                    return err(
                        Kind::ReadOnly,
                        format!("{name}: {} has fragments off a regular grid; it can be read, not written", agg.key),
                    );
                }
                let index: Vec<u64> = (0..agg.chunks.len()).map(|d| (f.start[d] / agg.chunks[d]) as u64).collect();
                let stored = Stored {
                    name: f.file.clone(),
                    ncvar: f.ncvar.clone(),
                    relative: files.place().name_in_master(&f.file),
                    shape: f.shape.clone(),
                    created: false,
                };
                held.stored.insert((agg.key.clone(), index), stored);
            }
        }
    }
    // Until the reopened dataset first tells its arrays, the store knows them as the master
    // aggregates them.
    let arrays = Arc::new(Arrays::new(infos));
    let store = CfaWriteStore::new(&name, memory, files.clone(), arrays.clone());
    let mut ds = Dataset::open_on(spec(&name), omode, Box::new(store))?;
    ds.tell_arrays(arrays);
    Ok((ds, Writer { files, convention, master_format, opener }))
}

impl Writer {
    /// Our dataset (group `gid` asked) out of define mode and durable (fragments stored), then
    /// the master written.
    pub fn store(&self, ds: &mut Dataset, gid: usize) -> Result<()> {
        match ds.end_define(gid) {
            Err(e) if e.kind == Kind::NotInDefine => {}
            other => other?,
        }
        ds.sync_group(gid)?;
        let master = super::master::Writer {
            files: &self.files,
            convention: self.convention,
            master_format: self.master_format,
            opener: self.opener.as_ref(),
        };
        super::master::write(ds, &master)
    }

    /// After the dataset's last store: no more writes behind.
    pub fn finish(&self) -> Result<()> {
        self.files.finish()
    }

    /// After a failed store: the fragments still open are released without storing more.
    pub fn abort_open(&self) {
        self.files.abort_open()
    }

    /// Nothing more is stored; the fragments this writer made are removed from disk.
    pub fn abort(&self) {
        self.files.abort()
    }
}

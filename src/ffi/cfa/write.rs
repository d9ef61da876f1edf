//! Writing aggregated datasets: `nc_create` of a name that asks for one (`#mode=cfa`,
//! `cfa=0.4|0.5`), `nc_open(NC_WRITE)` of a master (`reopen`), and sync/close/abort, which
//! store the fragments and then write the master (`master.rs`). Our dataset lives in memory
//! over a `CfaWriteStore` that hands each chunk to the fragment files.

use super::fragment_files::{FragmentFiles, Stored, Writer};
use crate::aggregate::place::{Convention, Place, wants_cfa};
use crate::error::{Kind, Result, err};
use crate::ffi::consts::{
    NC_64BIT_DATA, NC_64BIT_OFFSET, NC_CLASSIC_MODEL, NC_CLOBBER, NC_ENOTINDEFINE, NC_NETCDF4, NC_NOCLOBBER, NC_NOERR,
};
use crate::nc::modes::OpenFlags;
use crate::zmap::ArrayInfo;
use crate::zmap::cfa::write::CfaWriteStore;
use crate::zmap::memory::MemoryStore;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int};
use std::sync::Arc;
use std::sync::Mutex;

fn writers() -> std::sync::MutexGuard<'static, HashMap<c_int, Arc<Writer>>> {
    static WRITERS: std::sync::LazyLock<Mutex<HashMap<c_int, Arc<Writer>>>> = std::sync::LazyLock::new(Default::default);
    WRITERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The file slot of an ncid (a writer is the whole dataset, whichever group is asked).
fn slot(ncid: c_int) -> c_int {
    ncid >> 16
}

pub fn is_writer(ncid: c_int) -> bool {
    writers().contains_key(&slot(ncid))
}

/// `nc_create` of an aggregated dataset: `Some(status)` when the name asks for one.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `ncidp` is NULL or writable.
pub unsafe fn create(call: &str, path: *const c_char, cmode: c_int, ncidp: *mut c_int) -> Option<c_int> {
    if path.is_null() {
        return None;
    }
    // SAFETY: checked non-NULL; the caller's NUL-terminated name.
    let name = std::str::from_utf8(unsafe { CStr::from_ptr(path) }.to_bytes()).ok()?;
    let convention = wants_cfa(name)?;
    Some(crate::ffi::call(
        call,
        || format!("path={name:?} (aggregated, {convention:?})"),
        || {
            let place = Place::parse(name)?;
            if cmode & NC_NOCLOBBER != 0 && master_exists(&place)? {
                return err(Kind::Exists, format!("{}: exists and NC_NOCLOBBER was given", place.master));
            }
            let master_mode = match convention {
                Convention::V04 if cmode & NC_NETCDF4 == 0 => NC_CLOBBER | (cmode & (NC_64BIT_OFFSET | NC_64BIT_DATA)),
                Convention::V04 => NC_CLOBBER | NC_NETCDF4 | (cmode & NC_CLASSIC_MODEL),
                _ => NC_CLOBBER | NC_NETCDF4,
            };
            let files = FragmentFiles::new(place);
            let store = CfaWriteStore::new(name, Arc::new(MemoryStore::new()), files.clone());
            let mut spec = crate::url::OpenSpec::in_memory(name);
            spec.fragment_split = Some(crate::config::cfa_subarray_bytes());
            // The logical dataset is netCDF-4 whatever the master is (the classic model kept
            // when asked for, so a classic master can hold it).
            let classic = cmode & NC_CLASSIC_MODEL != 0 || master_mode & NC_NETCDF4 == 0;
            let flags = OpenFlags::from_bits(NC_NETCDF4 | NC_CLOBBER | if classic { NC_CLASSIC_MODEL } else { 0 });
            let ds = crate::dataset::Dataset::create_on(spec, flags, Box::new(store), crate::format::ZarrFormat::V2)?;
            let ncid = crate::registry::insert(ds)?;
            writers().insert(slot(ncid), Arc::new(Writer { files, convention, master_mode }));
            // SAFETY: the caller's out-pointer.
            unsafe { crate::ffi::put(ncidp, ncid) };
            Ok(())
        },
    ))
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

/// `nc_open(NC_WRITE)` of an aggregated master: our dataset over its fragments, written as a
/// new one is (new chunks become new fragments; unlimited dimensions grow by them). The
/// fragments must lie on one regular grid (each at a multiple of the grid's step, none larger):
/// a master aggregating irregular fragments, or constant (`unique_values`) ones, is read-only.
pub(super) fn reopen(
    name: &str,
    version: &str,
    format: c_int,
    memory: Arc<MemoryStore>,
    vars: Vec<(crate::zmap::cfa::Aggregated, Vec<u8>)>,
    infos: Vec<ArrayInfo>,
    mode: c_int,
) -> Result<c_int> {
    use crate::ffi::consts::{NC_FORMAT_64BIT_DATA, NC_FORMAT_64BIT_OFFSET, NC_FORMAT_CLASSIC, NC_FORMAT_NETCDF4_CLASSIC};
    let convention = match version {
        "CFA-0.4" => Convention::V04,
        "CFA-0.5" => Convention::V05,
        _ => Convention::Cf,
    };
    let master_mode = NC_CLOBBER
        | match format {
            NC_FORMAT_CLASSIC => 0,
            NC_FORMAT_64BIT_OFFSET => NC_64BIT_OFFSET,
            NC_FORMAT_64BIT_DATA => NC_64BIT_DATA,
            NC_FORMAT_NETCDF4_CLASSIC => NC_NETCDF4 | NC_CLASSIC_MODEL,
            _ => NC_NETCDF4,
        };
    if let Some((agg, _)) = vars.iter().find(|(a, _)| a.key.contains('/')) {
        return err(Kind::ReadOnly, format!("{name}: {} is aggregated in a sub-group; it can be read, not written", agg.key));
    }
    let place = Place::parse(name)?;
    let files = FragmentFiles::new(place);
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
    let store = CfaWriteStore::new(name, memory, files.clone());
    crate::zmap::Zmap::note_arrays(&store, infos)?;
    let mut spec = crate::url::OpenSpec::in_memory(name);
    spec.fragment_split = Some(crate::config::cfa_subarray_bytes());
    let ds = crate::dataset::Dataset::open_on(spec, OpenFlags::from_bits(mode), Box::new(store))?;
    let ncid = crate::registry::insert(ds)?;
    writers().insert(slot(ncid), Arc::new(Writer { files, convention, master_mode }));
    Ok(ncid)
}

/// Our dataset out of define mode and durable (fragments stored), then the master written.
fn store_all(ncid: c_int, writer: &Writer) -> Result<()> {
    // (The dataset's own calls: the exports would come back here.)
    match crate::ffi::with(ncid, |ds, gid| ds.end_define(gid)) {
        Err(e) if e.code() == NC_ENOTINDEFINE => {}
        other => other?,
    }
    crate::ffi::with(ncid, |ds, gid| ds.sync_group(gid))?;
    super::master::write(ncid, writer)
}

/// `nc_sync` of an aggregated dataset: fragments stored, the master written.
pub fn sync(ncid: c_int) -> c_int {
    let Some(writer) = writers().get(&slot(ncid)).cloned() else { return crate::ffi::consts::NC_EBADID };
    crate::ffi::call("nc_sync", || format!("ncid={ncid:#x} (aggregated)"), || store_all(ncid, &writer))
}

/// `nc_close` of an aggregated dataset: as `sync`, then our dataset goes (it goes also when
/// storing failed: the caller's handle is released either way, as netcdf-c's close does).
pub fn close(ncid: c_int) -> c_int {
    let Some(writer) = writers().remove(&slot(ncid)) else { return crate::ffi::consts::NC_EBADID };
    let stored = crate::ffi::call("nc_close", || format!("ncid={ncid:#x} (aggregated)"), || store_all(ncid, &writer));
    let closed = crate::ffi::file::close(ncid);
    if stored != NC_NOERR {
        writer.files.abort_open();
        return stored;
    }
    let finished = crate::ffi::call("nc_close", || format!("ncid={ncid:#x} (aggregated)"), || writer.files.finish());
    if closed != NC_NOERR { closed } else { finished }
}

/// `nc_abort` of an aggregated dataset: nothing more is stored; fragments this writer made
/// are removed from disk.
pub fn abort(ncid: c_int) -> c_int {
    let Some(writer) = writers().remove(&slot(ncid)) else { return crate::ffi::consts::NC_EBADID };
    writer.files.abort();
    crate::ffi::file::abort(ncid)
}

//! The store factory: which driver a dataset name's storage takes (the mode's, else what the
//! path holds), opened or created, wrapped for tracing at `NCTRACING=2`. Datasets get their
//! store here; tests can instead hand a dataset any `Zmap` (the memory store).

use crate::error::{Error, Kind, Result, err};
use crate::trace;
use crate::url::{Driver, OpenSpec, probe};
use crate::zmap::Zmap;
use crate::zmap::adapter::traced::Traced;
use crate::zmap::file::FileStore;
use crate::zmap::refs::RefStore;
use crate::zmap::s3::S3Store;
use crate::zmap::zip::ZipStore;

/// The store of `spec`, created (`create`) or opened (for writing: `write`), and the driver it
/// took. `zip_in_folder`: a created zip archive holds the store in a folder (Zarr v3's layout).
#[cfg_attr(not(feature = "icechunk"), allow(unused_variables))]
pub(crate) fn open(spec: &OpenSpec, create: bool, write: bool, zip_in_folder: bool) -> Result<(Box<dyn Zmap>, Driver)> {
    let driver = match spec.driver {
        Some(d) => d,
        None if create => Driver::File,
        None => match probe(&spec.path) {
            Some(d) => d,
            None if !spec.path.exists() && spec.is_explicit() => {
                return err(Kind::NoObject, format!("{} does not exist", spec.path.display()));
            }
            None if !spec.path.exists() => return err(Kind::Errno(libc::ENOENT), format!("{} does not exist", spec.path.display())),
            None => return err(Kind::NotNetcdf, format!("{} is not a Zarr store", spec.path.display())),
        },
    };
    trace::emit(2, &format!("storage: {} {:?} {}", if create { "create" } else { "open" }, driver, spec.path.display()));
    let store: Box<dyn Zmap> = match (driver, create) {
        (Driver::File, false) => Box::new(FileStore::open(&spec.path)?),
        (Driver::File, true) => Box::new(FileStore::create(&spec.path)?),
        (Driver::Zip, false) => Box::new(ZipStore::open(&spec.path)?),
        (Driver::Zip, true) => Box::new(ZipStore::create(&spec.path, zip_in_folder)?),
        (Driver::Refs, false) => Box::new(RefStore::open(spec)?),
        (Driver::Refs, true) => Box::new(crate::zmap::refs::writer::RefWriter::create(spec)?),
        (Driver::Http, false) => Box::new(crate::zmap::http::WebStore::open(&spec.path.to_string_lossy())),
        (Driver::Http, true) => {
            return err(Kind::NotBuilt, format!("{}: a web server without the S3 API is read, not written", spec.path.display()));
        }
        #[cfg(feature = "icechunk")]
        (Driver::Icechunk, create) => Box::new(crate::zmap::icechunk::IcechunkStore::open(spec, create, write)?),
        #[cfg(not(feature = "icechunk"))]
        (Driver::Icechunk, _) => {
            return err(Kind::NotBuilt, "Icechunk repositories: this library was built without them (cargo feature icechunk)");
        }
        (Driver::S3, create) => {
            let target = spec.s3.as_ref().ok_or_else(|| Error::new(Kind::Invalid, "S3 driver without an S3 URL"))?;
            let store = S3Store::new(target, &spec.params)?;
            if create {
                // netcdf-c's clobber: every object under the root key goes first (and a
                // missing bucket is created).
                store.create_root()?;
            }
            Box::new(store)
        }
    };
    let store: Box<dyn Zmap> = if trace::enabled(2) { Box::new(Traced(store)) } else { store };
    Ok((store, driver))
}

/// Whether something already sits where `spec` would create a store (`NC_NOCLOBBER`).
pub(crate) fn exists(spec: &OpenSpec) -> Result<bool> {
    match &spec.s3 {
        Some(target) => S3Store::new(target, &spec.params)?.exists(),
        None => Ok(std::fs::symlink_metadata(&spec.path).is_ok()),
    }
}

/// Deletes a dataset by name (`nc_delete`).
pub fn delete(spec: &OpenSpec) -> Result<()> {
    if let Some(target) = &spec.s3 {
        let store = S3Store::new(target, &spec.params)?;
        if !store.exists()? {
            return err(Kind::NoObject, format!("{} does not exist", target.describe()));
        }
        return store.clear();
    }
    let path = &spec.path;
    match std::fs::symlink_metadata(path) {
        Err(_) => err(Kind::NoObject, format!("{} does not exist", path.display())),
        Ok(m) if m.is_dir() => {
            if probe(path).is_none() {
                return err(Kind::NotNetcdf, "not a Zarr store");
            }
            std::fs::remove_dir_all(path)?;
            Ok(())
        }
        Ok(_) => {
            std::fs::remove_file(path)?;
            Ok(())
        }
    }
}

//! A netCDF file stored as one S3 object, while it is open: its bytes held locally (in
//! memory, or in a cache file when bigger than the memory budget) for the real netcdf-c to
//! serve, and stored back whole when a writer syncs or closes.
//!
//! * Read-only opens within the budget hand the real library the object's bytes in memory
//!   (`nc_open_mem`); everything else gets a local file it opens by path: a file in RAM
//!   (`/dev/shm`) within the budget, else a cache file under `cache_location` /
//!   `NCZARR_S3_CACHE_DIR` / the temp dir; either is removed when the dataset goes.
//! * Writers (creates, `NC_WRITE` opens) always get a file: `nc_sync` must be able to store
//!   the file as it stands, which an in-memory image only yields at close.

use crate::error::{Error, Kind, Result, err};
use crate::nc::magic::FileFormat;
use crate::url::object::{ObjectName, has_netcdf_extension};
use crate::zmap::s3::object::{Destination, Probed, S3Object};
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// Where an open object's bytes are.
pub enum Local {
    /// The whole file in memory, for the real library's `nc_open_mem`.
    Memory(Vec<u8>),
    /// A local file the real library opens by `path`; `cache` is removed when it goes.
    File { file: std::fs::File, path: CString, cache: Option<PathBuf> },
}

pub struct ObjectFile {
    pub name: ObjectName,
    object: S3Object,
    pub local: Local,
    /// Created, or opened with `NC_WRITE`: stored back at sync and close.
    pub writable: bool,
    /// The format found at open (`None` for a create: the real library's choice).
    pub format: Option<FileFormat>,
}

impl ObjectFile {
    /// Opens the object `name` names. `Ok(None)`: there is no netCDF file under that name
    /// and the name may still be Zarr (the caller goes on as for any S3 name).
    pub fn open(name: ObjectName, writable: bool) -> Result<Option<ObjectFile>> {
        let object = S3Object::new(&name.target, &name.params)?;
        let (format, size, head, etag, pending) = match object.probe()? {
            Probed::File { format, size, head, etag, pending } => (format, size, head, etag, pending),
            Probed::Absent if name.certain || has_netcdf_extension(&name.target.root) => {
                return err(Kind::Errno(libc::ENOENT), format!("{}: no such object", object.describe()));
            }
            Probed::NotNetcdf if name.certain || has_netcdf_extension(&name.target.root) => {
                return err(Kind::NotNetcdf, format!("{}: not a netCDF file", object.describe()));
            }
            Probed::Absent | Probed::NotNetcdf => return Ok(None),
        };
        let budget = memory_budget();
        crate::trace::emit(
            1,
            &format!("s3 object: {} is a {format:?} netCDF file of {size} bytes (memory budget {budget} bytes)", object.describe()),
        );
        let local = if !writable && size <= budget {
            let mut data = crate::zmap::zeroed(size)?;
            object.download(size, &head, etag.as_deref(), pending, Destination::Memory(&mut data))?;
            Local::Memory(data)
        } else {
            let local = local_file(size > budget, &name.target.root)?;
            let Local::File { file, .. } = &local else { unreachable!("local_file makes files") };
            object.download(size, &head, etag.as_deref(), pending, Destination::File(file))?;
            local
        };
        Ok(Some(ObjectFile { name, object, local, writable, format: Some(format) }))
    }

    /// A new, empty local file for the object `name` names, stored at sync and close.
    /// `NC_NOCLOBBER` and an existing object: NC_EEXIST, before anything is made.
    pub fn create(name: ObjectName, noclobber: bool) -> Result<ObjectFile> {
        let object = S3Object::new(&name.target, &name.params)?;
        if noclobber && object.exists()? {
            return err(Kind::Exists, format!("{}: the object exists and NC_NOCLOBBER was given", object.describe()));
        }
        let local = local_file(false, &name.target.root)?;
        Ok(ObjectFile { name, object, local, writable: true, format: None })
    }

    /// The path the real library opens (`None`: the bytes are in memory).
    pub fn path(&self) -> Option<&CString> {
        match &self.local {
            Local::File { path, .. } => Some(path),
            Local::Memory(_) => None,
        }
    }

    /// Moves bytes held in memory to a local file (the real library's file reader is used
    /// where its in-memory reader refuses a file).
    pub fn to_local_file(&mut self) -> Result<()> {
        let Local::Memory(data) = &self.local else { return Ok(()) };
        let local = local_file(data.len() as u64 > memory_budget(), &self.name.target.root)?;
        if let Local::File { file, .. } = &local {
            use std::io::Write;
            (&*file).write_all(data).map_err(|e| Error::new(Kind::Io, format!("local file: {e}")))?;
        }
        self.local = local;
        Ok(())
    }

    /// Stores the local file as the object (writers only; the real library has flushed it).
    pub fn store(&self) -> Result<()> {
        let Local::File { file, .. } = &self.local else { return Ok(()) };
        if !self.writable {
            return Ok(());
        }
        self.object.upload(Mapped::of(file)?.into_bytes())
    }

    pub fn describe(&self) -> String {
        self.object.describe()
    }
}

impl Drop for ObjectFile {
    fn drop(&mut self) {
        if let Local::File { cache: Some(path), .. } = &self.local {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The memory budget: `NCZARR_S3_MEMORY_MB`, else S3netCDF4's `resource_allocation.memory`,
/// else the memory available now (S3netCDF4's default).
pub(crate) fn memory_budget() -> u64 {
    crate::config::s3_memory_budget().or_else(|| crate::url::s3::resources().memory).unwrap_or_else(available_memory)
}

fn available_memory() -> u64 {
    // SAFETY: sysconf only reads system parameters.
    let (pages, size) = unsafe { (libc::sysconf(libc::_SC_AVPHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    if pages > 0 && size > 0 { (pages as u64).saturating_mul(size as u64) } else { 1 << 30 }
}

/// Where cache files go: `NCZARR_S3_CACHE_DIR`, else S3netCDF4's `cache_location`, else the
/// temp dir.
pub(crate) fn cache_dir() -> PathBuf {
    crate::config::s3_cache_dir().or_else(|| crate::url::s3::resources().cache_location).unwrap_or_else(std::env::temp_dir)
}

/// A local file for an object: in memory (a file in `/dev/shm`, a RAM file system) unless
/// `on_disk`, or when there is no such file system; else a cache file. (An anonymous
/// `memfd` would do for netCDF-3, but HDF5 refuses to create a file through its
/// `/proc/self/fd` name.)
fn local_file(on_disk: bool, key: &str) -> Result<Local> {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if !on_disk && shm.is_dir() { shm.to_path_buf() } else { cache_dir() };
    let made = new_file(&dir, key);
    match made {
        Err(_) if dir == shm => new_file(&cache_dir(), key),
        made => made,
    }
}

fn new_file(dir: &std::path::Path, key: &str) -> Result<Local> {
    let base: String =
        key.rsplit('/').next().unwrap_or("object").chars().filter(|c| c.is_ascii_alphanumeric() || ".-_".contains(*c)).collect();
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for _ in 0..16 {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cache = dir.join(format!("nczarr-{}-{n}-{base}", std::process::id()));
        use std::os::unix::fs::OpenOptionsExt;
        match std::fs::OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).open(&cache) {
            Ok(file) => {
                crate::trace::emit(1, &format!("s3 object: cache file {}", cache.display()));
                let path = CString::new(cache.as_os_str().as_encoded_bytes()).map_err(|_| Error::new(Kind::Invalid, "cache path"))?;
                return Ok(Local::File { file, path, cache: Some(cache) });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                let kind = e.raw_os_error().map_or(Kind::Io, Kind::Errno);
                return Err(Error::new(kind, format!("cache file in {}: {e}", dir.display())));
            }
        }
    }
    err(Kind::Io, format!("no free cache file name in {}", dir.display()))
}

/// A read-only map of a local file, handed to the upload without a copy.
struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by this value alone.
unsafe impl Send for Mapped {}
// SAFETY: as above; shared readers only read.
unsafe impl Sync for Mapped {}

impl Mapped {
    fn of(file: &std::fs::File) -> Result<Mapped> {
        let len = file.metadata().map_err(|e| Error::new(Kind::Io, format!("local file: {e}")))?.len();
        let len = usize::try_from(len).map_err(|_| Error::new(Kind::NoMem, "local file too large"))?;
        if len == 0 {
            return Ok(Mapped { ptr: std::ptr::null_mut(), len: 0 });
        }
        // SAFETY: a fresh read-only shared mapping of an open file of `len` bytes (populated at
        // once: the upload reads every page, and one fault per page would cost more).
        let ptr =
            unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED | libc::MAP_POPULATE, file.as_raw_fd(), 0) };
        if ptr == libc::MAP_FAILED {
            return err(Kind::NoMem, format!("cannot map the local file ({len} bytes)"));
        }
        Ok(Mapped { ptr, len })
    }

    fn into_bytes(self) -> bytes::Bytes {
        if self.len == 0 { bytes::Bytes::new() } else { bytes::Bytes::from_owner(self) }
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: a live mapping of `len` readable bytes, unmapped only on drop.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping made in `of`, unmapped once.
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}

//! The real netcdf-c as an `NcSource` (`RealFile`), and the `Opener` the aggregation code in the
//! core opens fragments with: our own datasets directly, netCDF objects on S3 fetched and then
//! handed to the real library, everything else opened by the real library. This is the adapter
//! between the core's Rust view of "a netCDF file" and the real library's C calls.
//!
//! The real netcdf-c is not thread-safe: every call made here holds `ONE_AT_A_TIME` (fragments
//! are read from the engine's worker threads). The real library's ncids are claimed in the
//! registry like any it hands out, so its calls to its own exports, which come back through
//! ours, are forwarded to it.

use super::consts::{
    NC_64BIT_DATA, NC_64BIT_OFFSET, NC_CHAR, NC_CHUNKED, NC_CLASSIC_MODEL, NC_CLOBBER, NC_EINDEFINE, NC_ENDIAN_BIG, NC_ENOTATT,
    NC_ENOTINDEFINE, NC_ENOTVAR, NC_MAX_NAME, NC_MAX_VAR_DIMS, NC_NETCDF4, NC_NOERR, NC_NOWRITE, NC_STRING, NC_WRITE, nc_type,
};
use super::route::real_call;
use crate::aggregate::Opener;
use crate::dataset::object_file::ObjectFile;
use crate::error::{Error, Kind, Result};
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::source::{CreateFormat, DimInfo, GroupId, NcFile, NcSink, NcSource, VarInfo};
use std::ffi::{CStr, CString, c_char, c_int, c_void};

/// One real-library call at a time, from any thread.
pub(crate) static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// HDF5 keeps its "print errors" switch per thread, and netcdf-c turns it off only on the
/// thread that initialised it: fragment reads run on the engine's worker threads, where the
/// real library's expected failures (probing for optional attributes) would print. Turned
/// off once per thread, through the real library's own HDF5.
pub(crate) fn quiet_hdf5_here() {
    thread_local!(static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if QUIET.with(|q| q.replace(true)) {
        return;
    }
    let p = super::route::hdf5_symbol(c"H5Eset_auto2");
    if !p.is_null() {
        // SAFETY: herr_t H5Eset_auto2(hid_t estack, H5E_auto2_t func, void *client_data), with
        // H5E_DEFAULT (0) and no function: printing off for this thread's default stack.
        unsafe {
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(i64, *mut c_void, *mut c_void) -> c_int>(p)(
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }
}

/// `work` with the real library to itself.
fn exclusive<R>(work: impl FnOnce() -> R) -> R {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    quiet_hdf5_here();
    work()
}

/// A real-library status as a `Result` (`what` says which call; the code is kept).
fn ok(status: std::result::Result<c_int, c_int>, what: &str) -> Result<()> {
    match status.unwrap_or_else(|missing| missing) {
        NC_NOERR => Ok(()),
        s if s > 0 => Err(Error::new(Kind::Errno(s), what.to_string())),
        s => Err(Error::new(Kind::Real(s), what.to_string())),
    }
}

fn cname(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(Kind::BadName, format!("{s:?}")))
}

fn name_from(buf: &[c_char]) -> String {
    // SAFETY: a buffer of NC_MAX_NAME+1 the real library NUL-terminated.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}

/// A dataset the real library has open: one it opened for us (closed when this goes), or the
/// caller's (a master the caller closes).
pub struct RealFile {
    ncid: c_int,
    owned: bool,
    /// Opened or created for writing.
    writable: bool,
    /// A netCDF object's bytes the real library reads in place (kept until it is closed).
    object: Option<ObjectFile>,
}

impl RealFile {
    /// The real library's dataset `ncid`, which the caller keeps and closes.
    pub fn borrowed(ncid: c_int) -> RealFile {
        RealFile { ncid, owned: false, writable: false, object: None }
    }

    /// Opens `name` with the real library (a fetched object's bytes when `object`), read-only
    /// or, with `NC_WRITE` in `mode`, for writing.
    fn open(name: &str, mut object: Option<ObjectFile>, mode: c_int) -> Result<RealFile> {
        let mut ncid = 0;
        let status = exclusive(|| {
            let status = match &mut object {
                // SAFETY: a valid out-pointer.
                Some(file) => unsafe { super::objects::open_fetched("nc_open", name, file, mode, &mut ncid) },
                None => match cname(name) {
                    Ok(c) => real_call!(nc_open(c.as_ptr(), mode, &mut ncid): (*const c_char, c_int, *mut c_int))
                        .unwrap_or_else(|missing| missing),
                    Err(e) => return Err(e),
                },
            };
            // SAFETY: the ncid the real library just wrote.
            Ok(unsafe { super::route::claim_real(status, &mut ncid, false) })
        })?;
        ok(Ok(status), name)?;
        Ok(RealFile { ncid, owned: true, writable: mode & NC_WRITE != 0, object })
    }

    /// Creates `name` with the real library (its local file when it is an S3 object, stored at
    /// close), replacing any.
    fn create(name: &str, object: Option<ObjectFile>, mode: c_int) -> Result<RealFile> {
        let local = match &object {
            Some(file) => file.path().cloned().ok_or_else(|| Error::new(Kind::Internal, "an object to create has no local file"))?,
            None => cname(name)?,
        };
        let mut ncid = 0;
        let status = exclusive(|| {
            let status = real_call!(nc_create(local.as_ptr(), mode, &mut ncid): (*const c_char, c_int, *mut c_int)).unwrap_or_else(|m| m);
            // SAFETY: the ncid the real library just wrote.
            unsafe { super::route::claim_real(status, &mut ncid, true) }
        });
        ok(Ok(status), name)?;
        Ok(RealFile { ncid, owned: true, writable: true, object })
    }

    /// Closes (or aborts) the dataset this opened; a writable object's file is stored after a
    /// close.
    fn finish(&mut self, abort: bool) -> Result<()> {
        if !self.owned {
            return Ok(());
        }
        self.owned = false;
        let ncid = self.ncid;
        let status = exclusive(|| {
            let status = if abort { real_call!(nc_abort(ncid): (c_int)) } else { real_call!(nc_close(ncid): (c_int)) };
            let status = status.unwrap_or_else(|missing| missing);
            super::route::release_real(ncid, status);
            status
        });
        ok(Ok(status), if abort { "abort" } else { "close" })?;
        match self.object.take() {
            Some(file) if !abort && file.writable => file.store(),
            _ => Ok(()),
        }
    }

    /// A define call, entering define mode first when the file is in data mode.
    fn define(what: &str, ncid: c_int, mut call: impl FnMut() -> std::result::Result<c_int, c_int>) -> Result<()> {
        exclusive(|| {
            let mut status = call();
            if status == Ok(NC_ENOTINDEFINE) {
                let redef = real_call!(nc_redef(ncid): (c_int));
                if redef != Ok(NC_NOERR) && redef != Ok(NC_EINDEFINE) {
                    return ok(redef, what);
                }
                status = call();
            }
            ok(status, what)
        })
    }

    /// The file's format (`NC_FORMAT_*`), as the real library reports it.
    pub fn format(&self) -> Result<c_int> {
        let (ncid, mut format) = (self.ncid, 0);
        exclusive(|| ok(real_call!(nc_inq_format(ncid, &mut format): (c_int, *mut c_int)), "format"))?;
        Ok(format)
    }

    fn ncid(g: GroupId) -> c_int {
        g.0 as c_int
    }

    /// Ids an inquiry returns as a count, then into a buffer of that size.
    fn counted(what: &str, inquire: impl Fn(*mut c_int, *mut c_int) -> std::result::Result<c_int, c_int>) -> Result<Vec<c_int>> {
        let mut n = 0;
        ok(inquire(&mut n, std::ptr::null_mut()), what)?;
        let mut ids = vec![0 as c_int; n.max(0) as usize];
        ok(inquire(&mut n, ids.as_mut_ptr()), what)?;
        ids.truncate(n.max(0) as usize);
        Ok(ids)
    }

    fn dim(ncid: c_int, dimid: c_int) -> Result<(String, usize)> {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        let mut len = 0usize;
        let p = buf.as_mut_ptr();
        ok(real_call!(nc_inq_dim(ncid, dimid, p, &mut len): (c_int, c_int, *mut c_char, *mut usize)), "dimension")?;
        Ok((name_from(&buf), len))
    }

    /// An attribute's type and length (`None`: absent).
    fn att_type(ncid: c_int, varid: c_int, name: &CStr) -> Result<Option<(nc_type, usize)>> {
        let (mut xtype, mut len) = (0 as nc_type, 0usize);
        let np = name.as_ptr();
        let status = real_call!(nc_inq_att(ncid, varid, np, &mut xtype, &mut len): (c_int, c_int, *const c_char, *mut nc_type, *mut usize));
        match status {
            Ok(NC_ENOTATT) => Ok(None),
            other => ok(other, "attribute").map(|()| Some((xtype, len))),
        }
    }

    /// `n` strings at `ptrs` the real library allocated, copied out and freed.
    fn take_strings(ptrs: &mut [*mut c_char]) -> Vec<Option<String>> {
        let out = ptrs
            .iter()
            // SAFETY: NUL-terminated strings the real library allocated (or NULL).
            .map(|p| (!p.is_null()).then(|| unsafe { CStr::from_ptr(*p) }.to_string_lossy().into_owned()))
            .collect();
        let (n, p) = (ptrs.len(), ptrs.as_mut_ptr());
        let _ = real_call!(nc_free_string(n, p): (usize, *mut *mut c_char));
        out
    }
}

fn varid(v: Option<usize>) -> c_int {
    v.map_or(-1, |v| v as c_int)
}

impl Drop for RealFile {
    fn drop(&mut self) {
        // A file dropped without a close: read-only ones are closed, writable ones released
        // without storing more.
        let _ = self.finish(self.writable);
        // (The object's bytes go only now, after the real library let go of them.)
        self.object.take();
    }
}

impl NcSource for RealFile {
    fn root(&self) -> GroupId {
        GroupId(self.ncid as u32 as usize)
    }

    fn groups(&self, g: GroupId) -> Result<Vec<(GroupId, String)>> {
        exclusive(|| {
            let ncid = Self::ncid(g);
            let ids = Self::counted("groups", |n, ids| real_call!(nc_inq_grps(ncid, n, ids): (c_int, *mut c_int, *mut c_int)))?;
            ids.into_iter()
                .map(|id| {
                    let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
                    let p = buf.as_mut_ptr();
                    ok(real_call!(nc_inq_grpname(id, p): (c_int, *mut c_char)), "group name")?;
                    Ok((GroupId(id as u32 as usize), name_from(&buf)))
                })
                .collect()
        })
    }

    fn dims(&self, g: GroupId) -> Result<Vec<DimInfo>> {
        exclusive(|| {
            let ncid = Self::ncid(g);
            let ids =
                Self::counted("dimensions", |n, ids| real_call!(nc_inq_dimids(ncid, n, ids, 0): (c_int, *mut c_int, *mut c_int, c_int)))?;
            let unlimited = Self::counted(
                "unlimited dimensions",
                |n, ids| real_call!(nc_inq_unlimdims(ncid, n, ids): (c_int, *mut c_int, *mut c_int)),
            )?;
            ids.into_iter()
                .map(|id| {
                    let (name, len) = Self::dim(ncid, id)?;
                    Ok(DimInfo { name, len, unlimited: unlimited.contains(&id) })
                })
                .collect()
        })
    }

    fn var_count(&self, g: GroupId) -> Result<usize> {
        let ncid = Self::ncid(g);
        let mut n = 0;
        exclusive(|| ok(real_call!(nc_inq_nvars(ncid, &mut n): (c_int, *mut c_int)), "variables"))?;
        Ok(n.max(0) as usize)
    }

    fn var(&self, g: GroupId, v: usize) -> Result<VarInfo> {
        exclusive(|| {
            let ncid = Self::ncid(g);
            let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
            let (mut xtype, mut ndims, mut natts) = (0 as nc_type, 0 as c_int, 0 as c_int);
            let mut dimids = [0 as c_int; NC_MAX_VAR_DIMS as usize];
            let (p, d, vid) = (buf.as_mut_ptr(), dimids.as_mut_ptr(), v as c_int);
            ok(
                real_call!(nc_inq_var(ncid, vid, p, &mut xtype, &mut ndims, d, &mut natts):
                    (c_int, c_int, *mut c_char, *mut nc_type, *mut c_int, *mut c_int, *mut c_int)),
                "variable",
            )?;
            let name = name_from(&buf);
            let xtype = NcType::from_id(xtype).map_err(|_| Error::new(Kind::BadType, format!("{name}: a user-defined type")))?;
            let (dims, shape) = dimids[..ndims.clamp(0, NC_MAX_VAR_DIMS) as usize]
                .iter()
                .map(|&d| Self::dim(ncid, d))
                .collect::<Result<(Vec<_>, Vec<_>)>>()?;
            Ok(VarInfo { name, xtype, dims, shape })
        })
    }

    fn var_id(&self, g: GroupId, name: &str) -> Result<Option<usize>> {
        let (ncid, c) = (Self::ncid(g), cname(name)?);
        let mut v = 0;
        let status = exclusive(|| real_call!(nc_inq_varid(ncid, c.as_ptr(), &mut v): (c_int, *const c_char, *mut c_int)));
        match status {
            Ok(NC_ENOTVAR) => Ok(None),
            other => ok(other, "variable").map(|()| Some(v.max(0) as usize)),
        }
    }

    fn att_names(&self, g: GroupId, v: Option<usize>) -> Result<Vec<String>> {
        exclusive(|| {
            let (ncid, vid) = (Self::ncid(g), varid(v));
            let mut n = 0;
            ok(real_call!(nc_inq_varnatts(ncid, vid, &mut n): (c_int, c_int, *mut c_int)), "attributes")?;
            (0..n)
                .map(|a| {
                    let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
                    let p = buf.as_mut_ptr();
                    ok(real_call!(nc_inq_attname(ncid, vid, a, p): (c_int, c_int, c_int, *mut c_char)), "attribute name")?;
                    Ok(name_from(&buf))
                })
                .collect()
        })
    }

    fn att(&self, g: GroupId, v: Option<usize>, name: &str) -> Result<Option<Values>> {
        let c = cname(name)?;
        exclusive(|| {
            let (ncid, vid) = (Self::ncid(g), varid(v));
            let Some((xtype, len)) = Self::att_type(ncid, vid, &c)? else { return Ok(None) };
            let np = c.as_ptr();
            if xtype == NC_STRING {
                let mut ptrs = vec![std::ptr::null_mut::<c_char>(); len];
                let p = ptrs.as_mut_ptr();
                ok(real_call!(nc_get_att_string(ncid, vid, np, p): (c_int, c_int, *const c_char, *mut *mut c_char)), name)?;
                return Ok(Some(Values::Str(Self::take_strings(&mut ptrs))));
            }
            let t = NcType::from_id(xtype).map_err(|_| Error::new(Kind::BadType, format!("{name}: a user-defined type")))?;
            // Word-aligned storage for any element type.
            let mut words = vec![0u64; (len * t.size()).div_ceil(8).max(1)];
            let p = words.as_mut_ptr() as *mut c_void;
            ok(real_call!(nc_get_att(ncid, vid, np, p): (c_int, c_int, *const c_char, *mut c_void)), name)?;
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).take(len * t.size()).collect();
            Ok(Some(if xtype == NC_CHAR { Values::Char(bytes) } else { Values::from_ne_bytes(t, &bytes) }))
        })
    }

    fn fill(&self, g: GroupId, v: usize) -> Result<Option<Values>> {
        let t = self.var(g, v)?.xtype;
        exclusive(|| {
            let (ncid, vid) = (Self::ncid(g), v as c_int);
            let mut no_fill = 0;
            let mut words = [0u64; 1];
            let p = words.as_mut_ptr() as *mut c_void;
            ok(real_call!(nc_inq_var_fill(ncid, vid, &mut no_fill, p): (c_int, c_int, *mut c_int, *mut c_void)), "fill value")?;
            if t == NcType::String {
                let mut ptrs = [words[0] as usize as *mut c_char];
                let value = Self::take_strings(&mut ptrs);
                return Ok((no_fill == 0).then_some(Values::Str(value)));
            }
            let bytes = words[0].to_ne_bytes();
            Ok((no_fill == 0).then(|| Values::from_ne_bytes(t, &bytes[..t.size()])))
        })
    }

    fn get_vara(&mut self, g: GroupId, v: usize, xtype: NcType, start: &[usize], count: &[usize], out: &mut [u8]) -> Result<()> {
        let cells: usize = count.iter().product();
        if out.len() != cells * xtype.size() || start.len() != count.len() {
            return Err(Error::new(Kind::Internal, "get_vara: buffer and request disagree"));
        }
        let (ncid, vid) = (Self::ncid(g), v as c_int);
        let (s, c, p) = (start.as_ptr(), count.as_ptr(), out.as_mut_ptr() as *mut c_void);
        // (Each typed read converts as netCDF's get of that memory type converts.)
        let status = exclusive(|| match xtype {
            NcType::Byte => real_call!(nc_get_vara_schar(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::Char => real_call!(nc_get_vara_text(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::UByte => real_call!(nc_get_vara_ubyte(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::Short => real_call!(nc_get_vara_short(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::UShort => real_call!(nc_get_vara_ushort(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::Int => real_call!(nc_get_vara_int(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::UInt => real_call!(nc_get_vara_uint(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::Int64 => real_call!(nc_get_vara_longlong(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::UInt64 => {
                real_call!(nc_get_vara_ulonglong(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void))
            }
            NcType::Float => real_call!(nc_get_vara_float(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::Double => real_call!(nc_get_vara_double(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut c_void)),
            NcType::String => Ok(super::consts::NC_EBADTYPE),
        });
        ok(status, "reading")
    }

    fn get_strings(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize]) -> Result<Vec<Option<String>>> {
        if start.len() != count.len() {
            return Err(Error::new(Kind::Internal, "get_strings: request of two ranks"));
        }
        let cells: usize = count.iter().product();
        let (ncid, vid) = (Self::ncid(g), v as c_int);
        let mut ptrs = vec![std::ptr::null_mut::<c_char>(); cells];
        let (s, c, p) = (start.as_ptr(), count.as_ptr(), ptrs.as_mut_ptr());
        exclusive(|| {
            if cells == 0 {
                return Ok(Vec::new());
            }
            ok(
                real_call!(nc_get_vara_string(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *mut *mut c_char)),
                "reading strings",
            )?;
            Ok(Self::take_strings(&mut ptrs))
        })
    }
}

/// Opens what a master names: ours directly, netCDF objects on S3 fetched (outside the lock, so
/// the fragments of one read download together) and then handed to the real library, anything
/// else by the real library.
pub struct RealOpener;

impl RealOpener {
    fn no_real_library(name: &str) -> Result<()> {
        if super::route::real_available_retry() {
            Ok(())
        } else {
            Err(Error::new(Kind::NotNetcdf, format!("{name}: not a Zarr dataset, and no real netcdf-c to read it")))
        }
    }

    /// A netCDF object on S3 or a web server, or a local netCDF file with no real library to read it, read
    /// lazily by our scanners (a fragment read moves its chunks, not the file); `None` when
    /// the name is neither, or the scanners leave the file to be read whole.
    fn lazily(class: &crate::url::classify::Classified, mode: c_int) -> Result<Option<Box<dyn NcFile>>> {
        use crate::lazy::{Lazy, Places, open_named};
        if class.is_ours() {
            return Ok(None);
        }
        // Local files when no real library is there, and while a reference set is being
        // written: our reader knows where their chunks are (fragments become references).
        let local = crate::engine::origins::wanted() || !super::route::real_available_retry();
        let places = if local { Places::Both } else { Places::Remote };
        let Some(scanned) = open_named(class, crate::nc::modes::OpenFlags::from_bits(mode), places) else { return Ok(None) };
        let scanned = scanned?;
        Ok(match scanned {
            Lazy::Open(ds) => Some(ds),
            Lazy::Whole(why) => {
                crate::trace::emit(1, &format!("{}: read whole: {why}", class.name));
                None
            }
        })
    }

    /// `name` opened read-only (`NC_NOWRITE`) or for writing (`NC_WRITE`).
    fn open_mode(name: &str, mode: c_int) -> Result<Box<dyn NcFile>> {
        let class = crate::url::classify::classify(name, false);
        if mode & NC_WRITE == 0
            && let Some(scanned) = RealOpener::lazily(&class, mode)?
        {
            return Ok(scanned);
        }
        if let Some(object) = class.object.clone()?
            && let Some(file) = ObjectFile::open(object, mode & NC_WRITE != 0)?
        {
            return Ok(Box::new(RealFile::open(name, Some(file), mode)?));
        }
        if let Some(spec) = class.zarr.clone()? {
            return Ok(Box::new(crate::dataset::Dataset::open(spec, crate::nc::modes::OpenFlags::from_bits(mode))?));
        }
        RealOpener::no_real_library(name)?;
        Ok(Box::new(RealFile::open(&class.real_name, None, mode)?))
    }
}

impl Opener for RealOpener {
    fn open(&self, name: &str) -> Result<Box<dyn NcSource + Send>> {
        Ok(RealOpener::open_mode(name, NC_NOWRITE)?)
    }

    fn open_write(&self, name: &str) -> Result<Box<dyn NcFile>> {
        RealOpener::open_mode(name, NC_WRITE)
    }

    fn create(&self, name: &str, format: CreateFormat) -> Result<Box<dyn NcFile>> {
        let mode = NC_CLOBBER
            | match format {
                CreateFormat::Classic => 0,
                CreateFormat::Offset64 => NC_64BIT_OFFSET,
                CreateFormat::Data64 => NC_64BIT_DATA,
                CreateFormat::Netcdf4Classic => NC_NETCDF4 | NC_CLASSIC_MODEL,
                CreateFormat::Netcdf4 => NC_NETCDF4,
            };
        let class = crate::url::classify::classify(name, true);
        if let Some(object) = class.object.clone()? {
            RealOpener::no_real_library(name)?;
            return Ok(Box::new(RealFile::create(name, Some(ObjectFile::create(object, false)?), mode)?));
        }
        if let Some(spec) = class.zarr.clone()? {
            return Ok(Box::new(crate::dataset::Dataset::create(spec, crate::nc::modes::OpenFlags::from_bits(mode))?));
        }
        RealOpener::no_real_library(name)?;
        Ok(Box::new(RealFile::create(&class.real_name, None, mode)?))
    }
}

impl NcFile for RealFile {
    fn close(mut self: Box<Self>) -> Result<()> {
        self.finish(false)
    }

    fn abort(mut self: Box<Self>) -> Result<()> {
        self.finish(true)
    }
}

impl NcSink for RealFile {
    fn root(&self) -> GroupId {
        GroupId(self.ncid as u32 as usize)
    }

    fn def_grp(&mut self, parent: GroupId, name: &str) -> Result<GroupId> {
        let (ncid, c) = (Self::ncid(parent), cname(name)?);
        let mut child = 0;
        Self::define(name, ncid, || real_call!(nc_def_grp(ncid, c.as_ptr(), &mut child): (c_int, *const c_char, *mut c_int)))?;
        Ok(GroupId(child as u32 as usize))
    }

    fn def_dim(&mut self, g: GroupId, name: &str, len: Option<usize>) -> Result<()> {
        let (ncid, c, len) = (Self::ncid(g), cname(name)?, len.unwrap_or(0));
        let mut id = 0;
        Self::define(name, ncid, || real_call!(nc_def_dim(ncid, c.as_ptr(), len, &mut id): (c_int, *const c_char, usize, *mut c_int)))
    }

    fn def_var(&mut self, g: GroupId, name: &str, xtype: NcType, dims: &[String]) -> Result<usize> {
        let ncid = Self::ncid(g);
        let mut ids = Vec::with_capacity(dims.len());
        for d in dims {
            let c = cname(d)?;
            let mut id = 0;
            exclusive(|| ok(real_call!(nc_inq_dimid(ncid, c.as_ptr(), &mut id): (c_int, *const c_char, *mut c_int)), d))?;
            ids.push(id);
        }
        let (c, t, n, p) = (cname(name)?, xtype.id(), ids.len() as c_int, ids.as_ptr());
        let mut varid = 0;
        Self::define(
            name,
            ncid,
            || real_call!(nc_def_var(ncid, c.as_ptr(), t, n, p, &mut varid): (c_int, *const c_char, nc_type, c_int, *const c_int, *mut c_int)),
        )?;
        Ok(varid.max(0) as usize)
    }

    fn def_var_chunking(&mut self, g: GroupId, v: usize, chunks: &[usize]) -> Result<()> {
        let (ncid, vid, p) = (Self::ncid(g), v as c_int, chunks.as_ptr());
        Self::define("chunking", ncid, || real_call!(nc_def_var_chunking(ncid, vid, NC_CHUNKED, p): (c_int, c_int, c_int, *const usize)))
    }

    fn put_att(&mut self, g: GroupId, v: Option<usize>, name: &str, values: Values) -> Result<()> {
        let (ncid, vid, c) = (Self::ncid(g), varid(v), cname(name)?);
        let np = c.as_ptr();
        match &values {
            Values::Char(text) => {
                let (n, p) = (text.len(), text.as_ptr() as *const c_char);
                Self::define(
                    name,
                    ncid,
                    || real_call!(nc_put_att_text(ncid, vid, np, n, p): (c_int, c_int, *const c_char, usize, *const c_char)),
                )
            }
            Values::Str(items) => {
                let owned: Vec<CString> =
                    items.iter().map(|s| CString::new(s.clone().unwrap_or_default().replace('\0', "")).unwrap_or_default()).collect();
                let ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
                let (n, p) = (ptrs.len(), ptrs.as_ptr());
                Self::define(
                    name,
                    ncid,
                    || real_call!(nc_put_att_string(ncid, vid, np, n, p): (c_int, c_int, *const c_char, usize, *const *const c_char)),
                )
            }
            numeric => {
                let bytes = numeric.to_ne_bytes();
                let (t, n, p) = (numeric.nctype().id(), numeric.len(), bytes.as_ptr() as *const c_void);
                Self::define(
                    name,
                    ncid,
                    || real_call!(nc_put_att(ncid, vid, np, t, n, p): (c_int, c_int, *const c_char, nc_type, usize, *const c_void)),
                )
            }
        }
    }

    fn enddef(&mut self) -> Result<()> {
        let ncid = self.ncid;
        let status = exclusive(|| real_call!(nc_enddef(ncid): (c_int)));
        if status == Ok(NC_ENOTINDEFINE) { Ok(()) } else { ok(status, "enddef") }
    }

    fn put_vara(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize], data: &[u8]) -> Result<()> {
        if start.len() != count.len() {
            return Err(Error::new(Kind::Internal, "put_vara: request of two ranks"));
        }
        let (ncid, vid) = (Self::ncid(g), v as c_int);
        let (s, c, p) = (start.as_ptr(), count.as_ptr(), data.as_ptr() as *const c_void);
        exclusive(|| ok(real_call!(nc_put_vara(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *const c_void)), "writing"))
    }

    fn put_strings(&mut self, g: GroupId, v: usize, start: &[usize], count: &[usize], data: &[Option<String>]) -> Result<()> {
        if start.len() != count.len() || data.len() != count.iter().product::<usize>() {
            return Err(Error::new(Kind::Internal, "put_strings: request and data disagree"));
        }
        let owned: Vec<Option<CString>> =
            data.iter().map(|s| s.as_ref().map(|s| CString::new(s.replace('\0', "")).unwrap_or_default())).collect();
        let ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())).collect();
        let (ncid, vid) = (Self::ncid(g), v as c_int);
        let (s, c, p) = (start.as_ptr(), count.as_ptr(), ptrs.as_ptr());
        exclusive(|| {
            ok(
                real_call!(nc_put_vara_string(ncid, vid, s, c, p): (c_int, c_int, *const usize, *const usize, *const *const c_char)),
                "writing strings",
            )
        })
    }

    fn def_var_fill(&mut self, g: GroupId, v: usize, fill: Values) -> Result<()> {
        let (ncid, vid, bytes) = (Self::ncid(g), v as c_int, fill.to_ne_bytes());
        let p = bytes.as_ptr() as *const c_void;
        Self::define("fill value", ncid, || real_call!(nc_def_var_fill(ncid, vid, 0, p): (c_int, c_int, c_int, *const c_void)))
    }

    fn def_var_endian_big(&mut self, g: GroupId, v: usize) -> Result<()> {
        let (ncid, vid) = (Self::ncid(g), v as c_int);
        Self::define("byte order", ncid, || real_call!(nc_def_var_endian(ncid, vid, NC_ENDIAN_BIG): (c_int, c_int, c_int)))
    }

    fn def_var_filter(&mut self, g: GroupId, v: usize, id: u32, params: &[u32]) -> Result<()> {
        let (ncid, vid, n, p) = (Self::ncid(g), v as c_int, params.len(), params.as_ptr());
        Self::define("filter", ncid, || real_call!(nc_def_var_filter(ncid, vid, id, n, p): (c_int, c_int, u32, usize, *const u32)))
    }
}

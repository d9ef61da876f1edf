//! The real netcdf-c as an `NcSource` (`RealFile`), and the `Opener` the aggregation code in the
//! core opens fragments with: our own datasets directly, netCDF objects on S3 fetched and then
//! handed to the real library, everything else opened by the real library. This is the adapter
//! between the core's Rust view of "a netCDF file" and the real library's C calls.
//!
//! The real netcdf-c is not thread-safe: every call made here holds `ONE_AT_A_TIME` (fragments
//! are read from the engine's worker threads). The real library's ncids are claimed in the
//! registry like any it hands out, so its calls to its own exports, which come back through
//! ours, are forwarded to it.

use super::consts::{NC_CHAR, NC_ENOTATT, NC_ENOTVAR, NC_MAX_NAME, NC_MAX_VAR_DIMS, NC_NOERR, NC_NOWRITE, NC_STRING, nc_type};
use super::route::real_call;
use crate::aggregate::Opener;
use crate::dataset::object_file::ObjectFile;
use crate::error::{Error, Kind, Result};
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::source::{DimInfo, GroupId, NcSource, VarInfo};
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
    /// A netCDF object's bytes the real library reads in place (kept until it is closed).
    object: Option<ObjectFile>,
}

impl RealFile {
    /// The real library's dataset `ncid`, which the caller keeps and closes.
    pub fn borrowed(ncid: c_int) -> RealFile {
        RealFile { ncid, owned: false, object: None }
    }

    /// Opens `name` read-only with the real library (a fetched object's bytes when `object`).
    fn open(name: &str, mut object: Option<ObjectFile>) -> Result<RealFile> {
        let mut ncid = 0;
        let status = exclusive(|| {
            let status = match &mut object {
                // SAFETY: a valid out-pointer.
                Some(file) => unsafe { super::objects::open_fetched("nc_open", name, file, NC_NOWRITE, &mut ncid) },
                None => match cname(name) {
                    Ok(c) => real_call!(nc_open(c.as_ptr(), NC_NOWRITE, &mut ncid): (*const c_char, c_int, *mut c_int))
                        .unwrap_or_else(|missing| missing),
                    Err(e) => return Err(e),
                },
            };
            // SAFETY: the ncid the real library just wrote.
            Ok(unsafe { super::route::claim_real(status, &mut ncid, false) })
        })?;
        ok(Ok(status), name)?;
        Ok(RealFile { ncid, owned: true, object })
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
        if self.owned {
            let ncid = self.ncid;
            exclusive(|| {
                let status = real_call!(nc_close(ncid): (c_int)).unwrap_or_else(|missing| missing);
                super::route::release_real(ncid, status);
            });
        }
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

impl Opener for RealOpener {
    fn open(&self, name: &str) -> Result<Box<dyn NcSource + Send>> {
        let class = crate::url::classify::classify(name, false);
        if let Some(object) = class.object.clone()?
            && let Some(file) = ObjectFile::open(object, false)?
        {
            return Ok(Box::new(RealFile::open(name, Some(file))?));
        }
        if let Some(spec) = class.zarr.clone()? {
            return Ok(Box::new(crate::dataset::Dataset::open(spec, crate::nc::modes::OpenFlags::from_bits(NC_NOWRITE))?));
        }
        if !super::route::real_available_retry() {
            return Err(Error::new(Kind::NotNetcdf, format!("{name}: not a Zarr dataset, and no real netcdf-c to read it")));
        }
        Ok(Box::new(RealFile::open(&class.real_name, None)?))
    }
}

//! netcdf-c's codec plugins (NCZarr's filter design): a library exporting `NCZ_get_codec_info`
//! (one `NCZ_codec_t`) or `NCZ_codec_info_defaults` (a NULL-terminated vector of them)
//! translates between an HDF5 filter's parameters and its Zarr codec JSON. A filter with no
//! built-in codec is written with its codec plugin's JSON when one is found, and a stored
//! codec id we do not know is read through the plugin that names it.
//!
//! The structure is the one netcdf-c 4.8 to 4.10 release (`NCZ_CODEC_CLASS_VER` 1, sort
//! `NCZ_CODEC_HDF5`): the conversions take no environment argument. Its
//! `NCZ_modify_parameters` (per-variable working parameters) is not called: the filter's own
//! HDF5 `set_local` makes those here (`Plugin::localize`), as HDF5 would.

use super::{CStr, Error, Kind, Result, c_char, c_int, c_uint, c_void};
use serde_json::Value;

/// `NCZ_codec_t` as netcdf-c 4.8–4.10 define it.
#[repr(C)]
struct NczCodec {
    version: c_int,
    sort: c_int,
    codec_id: *const c_char,
    hdf5_id: c_uint,
    initialize: Option<unsafe extern "C" fn()>,
    finalize: Option<unsafe extern "C" fn()>,
    codec_to_hdf5: Option<unsafe extern "C" fn(*const c_char, *mut usize, *mut *mut c_uint) -> c_int>,
    hdf5_to_codec: Option<unsafe extern "C" fn(usize, *const c_uint, *mut *mut c_char) -> c_int>,
    modify_parameters: Option<unsafe extern "C" fn(c_int, c_int, *mut usize, *mut *mut c_uint, *mut usize, *mut *mut c_uint) -> c_int>,
}

/// One codec a library defines.
pub(crate) struct CodecPlugin {
    /// The codec's id in Zarr metadata (`"id"` in v2).
    pub codec_id: String,
    /// The HDF5 filter it describes.
    pub hdf5_id: u32,
    /// The library's `NCZ_codec_t` (static in a library that stays loaded).
    class: usize,
}

/// The codecs a loaded library defines (none when it has no codec entry point).
///
/// # Safety
/// If codecs are returned the library must stay loaded.
pub(crate) unsafe fn codecs_of(lib: &libloading::os::unix::Library) -> Vec<CodecPlugin> {
    type Entry = unsafe extern "C" fn() -> *const c_void;
    let mut classes: Vec<*const NczCodec> = Vec::new();
    // SAFETY: netcdf-c's entry points `const void *NCZ_get_codec_info(void)` and
    // `const void *NCZ_codec_info_defaults(void)`.
    unsafe {
        if let Ok(one) = lib.get::<Entry>(b"NCZ_get_codec_info\0") {
            classes.push(one() as *const NczCodec);
        }
        if let Ok(many) = lib.get::<Entry>(b"NCZ_codec_info_defaults\0") {
            let list = many() as *const *const NczCodec;
            // A NULL-terminated vector; bounded in case one is not.
            for i in 0..256 {
                if list.is_null() || (*list.add(i)).is_null() {
                    break;
                }
                classes.push(*list.add(i));
            }
        }
    }
    let mut codecs: Vec<CodecPlugin> = Vec::new();
    for class in classes.into_iter().filter(|c| !c.is_null()) {
        // SAFETY: a codec class static in the library.
        let c = unsafe { &*class };
        if c.version != 1 || c.sort != 1 || c.codec_id.is_null() || c.hdf5_id == 0 {
            continue;
        }
        // SAFETY: the class's NUL-terminated id.
        let codec_id = unsafe { CStr::from_ptr(c.codec_id) }.to_string_lossy().into_owned();
        if codecs.iter().any(|k| k.codec_id == codec_id) {
            continue;
        }
        if let Some(init) = c.initialize {
            // SAFETY: netcdf-c calls it once when the codec is loaded; so do we.
            unsafe { init() };
        }
        codecs.push(CodecPlugin { codec_id, hdf5_id: c.hdf5_id, class: class as usize });
    }
    codecs
}

impl CodecPlugin {
    fn class(&self) -> &NczCodec {
        // SAFETY: the class static in a library that stays loaded.
        unsafe { &*(self.class as *const NczCodec) }
    }

    fn failed(&self, what: impl std::fmt::Display) -> Error {
        Error::new(Kind::Filter, format!("codec plugin {:?}: {what}", self.codec_id))
    }

    /// The codec JSON for HDF5 parameters `params`.
    pub(crate) fn to_json(&self, params: &[u32]) -> Result<Value> {
        let convert = self.class().hdf5_to_codec.ok_or_else(|| self.failed("no HDF5-to-codec conversion"))?;
        let mut text: *mut c_char = std::ptr::null_mut();
        // SAFETY: netcdf-c's conversion: the parameters in, a malloc'ed JSON string out.
        let status = unsafe { convert(params.len(), params.as_ptr(), &mut text) };
        if status != 0 || text.is_null() {
            return Err(self.failed(format!("parameters {params:?} refused ({status})")));
        }
        // SAFETY: the NUL-terminated string it made, freed after the copy.
        let json = unsafe {
            let copy = CStr::from_ptr(text).to_bytes().to_vec();
            libc::free(text as *mut c_void);
            copy
        };
        match serde_json::from_slice::<Value>(&json) {
            Ok(v) if v.get("id").and_then(Value::as_str).is_some() => Ok(v),
            _ => Err(self.failed(format!("wrote {:?}, not a codec object", String::from_utf8_lossy(&json)))),
        }
    }

    /// The HDF5 parameters of a stored codec JSON object.
    pub(crate) fn to_params(&self, json: &Value) -> Result<Vec<u32>> {
        let convert = self.class().codec_to_hdf5.ok_or_else(|| self.failed("no codec-to-HDF5 conversion"))?;
        let text = std::ffi::CString::new(json.to_string()).map_err(|_| self.failed("a NUL in the codec"))?;
        let (mut n, mut params): (usize, *mut c_uint) = (0, std::ptr::null_mut());
        // SAFETY: netcdf-c's conversion: a JSON string in, a malloc'ed parameter vector out.
        let status = unsafe { convert(text.as_ptr(), &mut n, &mut params) };
        if status != 0 {
            return Err(self.failed(format!("{json} refused ({status})")));
        }
        if n > 0 && params.is_null() {
            return Err(self.failed("no parameter vector"));
        }
        // SAFETY: `n` parameters it allocated, freed after the copy.
        let out = unsafe {
            let copy = if n == 0 { Vec::new() } else { std::slice::from_raw_parts(params, n).to_vec() };
            libc::free(params as *mut c_void);
            copy
        };
        Ok(out)
    }
}

/// The codec plugin describing HDF5 filter `id`, if one was found.
pub(crate) fn by_hdf5_id(id: u32) -> Option<&'static CodecPlugin> {
    super::found().codecs.iter().find(|c| id != 0 && c.hdf5_id == id).copied()
}

/// The codec plugin of a stored codec id, if one was found.
pub(crate) fn by_codec_id(id: &str) -> Option<&'static CodecPlugin> {
    super::found().codecs.iter().find(|c| c.codec_id == id).copied()
}

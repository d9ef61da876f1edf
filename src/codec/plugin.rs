//! HDF5 filter plugins found at run time, for filter ids not built in (NCZarr's design:
//! reuse the HDF5 filter implementations). Every shared library in the plugin directories
//! (`HDF5_PLUGIN_PATH`, else HDF5's, netcdf-c's and Debian's default directories) is probed
//! once, on first use, for HDF5's plugin entry points (`H5PLget_plugin_type`,
//! `H5PLget_plugin_info` → `H5Z_class2_t`); the first library of a filter id wins, as in HDF5.
//! A library that does not load or is not a filter plugin is skipped (`NCTRACING=1` says why).
//! Libraries stay loaded for the life of the process; a plugin that needs libhdf5 gets it from
//! its own dependencies.
//!
//! The filter function is HDF5's `H5Z_func_t`: it takes a `malloc`ed buffer and returns the
//! bytes it holds after the filter (or 0 on failure), replacing the buffer as it needs.
//! Calls into one plugin are made one at a time (HDF5 itself never calls a filter from two
//! threads at once, and plugins are written for that).

use crate::error::{Error, Kind, Result};
use crate::nc::types::NcType;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// `hid_t` (HDF5 1.10 and later).
type Hid = i64;

/// `H5Z_func_t`.
type FilterFn = unsafe extern "C" fn(c_uint, usize, *const c_uint, usize, *mut usize, *mut *mut c_void) -> usize;

/// `H5Z_class2_t` (HDF5 1.8 and later; `version` is `H5Z_CLASS_T_VERS`, 1).
#[repr(C)]
struct H5ZClass2 {
    version: c_int,
    id: c_int,
    encoder_present: c_uint,
    decoder_present: c_uint,
    name: *const c_char,
    can_apply: Option<unsafe extern "C" fn(Hid, Hid, Hid) -> c_int>,
    set_local: Option<unsafe extern "C" fn(Hid, Hid, Hid) -> c_int>,
    filter: Option<FilterFn>,
}

/// `H5Z_FLAG_REVERSE`: decode.
const REVERSE: c_uint = 0x0100;
/// `H5PL_TYPE_FILTER`.
const FILTER_PLUGIN: c_int = 0;

/// What `localize` makes parameters from: the program's parameters, the type, big-endian, the
/// chunk shape.
type LocalKey = (Vec<u32>, NcType, bool, Vec<u64>);

/// One filter from a plugin library.
pub struct Plugin {
    pub id: u32,
    pub name: String,
    pub path: PathBuf,
    pub encoder: bool,
    pub decoder: bool,
    /// The filter has HDF5's `set_local` callback: the parameters a program gives are changed by
    /// variable type and chunk shape before the filter sees them (`localize`); the filter never
    /// sees parameters that did not go through it (ZFP crashes on those).
    pub set_local: bool,
    filter: FilterFn,
    /// Parameters `localize` made, by what they were made from.
    localized: Mutex<std::collections::HashMap<LocalKey, Vec<u32>>>,
    /// Parameters and chunk sizes whose output was seen to decode back to the chunk's size.
    verified: Mutex<std::collections::HashSet<(Vec<u32>, usize)>>,
    /// The library's handle and its `H5Z_class2_t` (addresses: the library stays loaded).
    handle: usize,
    class: usize,
    one_at_a_time: Mutex<()>,
}

/// The directories searched, in order.
pub fn directories() -> Vec<PathBuf> {
    match crate::config::hdf5_plugin_path() {
        Some(list) => std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()).collect(),
        None => ["/usr/local/hdf5/lib/plugin", "/usr/local/hdf5/plugin", "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"]
            .iter()
            .map(PathBuf::from)
            .collect(),
    }
}

/// Every filter plugin found (probed once).
pub fn plugins() -> &'static [Plugin] {
    static FOUND: OnceLock<Vec<Plugin>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let mut found: Vec<Plugin> = Vec::new();
        for dir in directories() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for path in paths.into_iter().filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(".so"))) {
                match load(&path) {
                    Ok(p) if found.iter().any(|f| f.id == p.id) => {
                        crate::trace::emit(1, &format!("filter plugin {}: id {} already found earlier, skipped", path.display(), p.id));
                    }
                    Ok(p) => {
                        let local = if p.set_local { ", with set_local" } else { "" };
                        crate::trace::emit(1, &format!("filter plugin {}: id {} ({}){local}", path.display(), p.id, p.name));
                        found.push(p);
                    }
                    Err(why) => crate::trace::emit(1, &format!("filter plugin {}: skipped: {why}", path.display())),
                }
            }
        }
        found
    })
}

/// The plugin for HDF5 filter `id`, if one was found.
pub fn find(id: u32) -> Option<&'static Plugin> {
    if id == 0 {
        return None;
    }
    plugins().iter().find(|p| p.id == id)
}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libc.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".to_string()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn load(path: &Path) -> std::result::Result<Plugin, String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| "a NUL in the name".to_string())?;
    // SAFETY: a NUL-terminated path; the library's initialisers run as for any dlopen.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(dlerror());
    }
    // SAFETY: a live handle and NUL-terminated symbol names.
    let (kind, info) =
        unsafe { (libc::dlsym(handle, c"H5PLget_plugin_type".as_ptr()), libc::dlsym(handle, c"H5PLget_plugin_info".as_ptr())) };
    let unload = |why: &str| {
        // SAFETY: the handle this function opened, used no further.
        unsafe { libc::dlclose(handle) };
        Err(why.to_string())
    };
    if kind.is_null() || info.is_null() {
        return unload("not an HDF5 plugin (no H5PLget_plugin_type/H5PLget_plugin_info)");
    }
    // SAFETY: HDF5's plugin entry points: `H5PL_type_t H5PLget_plugin_type(void)` and
    // `const void *H5PLget_plugin_info(void)`.
    let (kind, class) = unsafe {
        let kind: extern "C" fn() -> c_int = std::mem::transmute(kind);
        let info: extern "C" fn() -> *const c_void = std::mem::transmute(info);
        (kind(), info() as *const H5ZClass2)
    };
    if kind != FILTER_PLUGIN {
        return unload("not a filter plugin");
    }
    if class.is_null() {
        return unload("no filter class");
    }
    // SAFETY: a filter plugin's `H5Z_class2_t`, static in the library (which stays loaded).
    let class = unsafe { &*class };
    if class.version != 1 {
        return unload(&format!("H5Z_class_t version {} (not 2)", class.version));
    }
    let Some(filter) = class.filter else { return unload("no filter function") };
    if class.id <= 0 {
        return unload(&format!("filter id {}", class.id));
    }
    let name = if class.name.is_null() {
        String::new()
    } else {
        // SAFETY: the class's NUL-terminated name.
        unsafe { CStr::from_ptr(class.name) }.to_string_lossy().into_owned()
    };
    Ok(Plugin {
        id: class.id as u32,
        name,
        path: path.to_path_buf(),
        encoder: class.encoder_present != 0,
        decoder: class.decoder_present != 0,
        set_local: class.set_local.is_some(),
        filter,
        localized: Mutex::new(std::collections::HashMap::new()),
        verified: Mutex::new(std::collections::HashSet::new()),
        handle: handle as usize,
        class: class as *const H5ZClass2 as usize,
        one_at_a_time: Mutex::new(()),
    })
}

impl Plugin {
    /// Encodes with a `set_local` filter's parameters, checking once per parameters and chunk
    /// size that the output decodes back to the chunk's size (parameters made for another chunk
    /// shape, as copied from an HDF5 file, would store data no one can read).
    pub fn encode_checked(&self, params: &[u32], data: &[u8], slack: usize) -> Result<Vec<u8>> {
        let encoded = self.run(params, data, false, usize::MAX)?;
        let key = (params.to_vec(), data.len());
        if self.verified.lock().unwrap_or_else(|p| p.into_inner()).contains(&key) {
            return Ok(encoded);
        }
        match self.run(params, &encoded, true, data.len() + slack) {
            Ok(back) if back.len() == data.len() => {
                self.verified.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
                Ok(encoded)
            }
            _ => Err(Error::new(Kind::Filter, format!("filter {} ({}): parameters {params:?} do not fit this chunk", self.id, self.name))),
        }
    }

    /// Runs the filter over `data` (forward, or `reverse` to decode) with HDF5 parameters
    /// `params`; the output may not exceed `cap` bytes.
    pub fn run(&self, params: &[u32], data: &[u8], reverse: bool, cap: usize) -> Result<Vec<u8>> {
        let failed = |what: &str| Error::new(Kind::Filter, format!("filter {} ({}): {what}", self.id, self.name));
        if (reverse && !self.decoder) || (!reverse && !self.encoder) {
            return Err(Error::new(
                Kind::NoFilter,
                format!("filter {} ({}) cannot {}", self.id, self.name, if reverse { "decode" } else { "encode" }),
            ));
        }
        let _one = self.one_at_a_time.lock().unwrap_or_else(|p| p.into_inner());
        // The filter owns the buffer from here: it may free it and hand back another.
        // SAFETY: a fresh allocation of at least one byte.
        let mut buf = unsafe { libc::malloc(data.len().max(1)) };
        if buf.is_null() {
            return Err(Error::new(Kind::NoMem, "filter buffer"));
        }
        // SAFETY: `buf` holds `data.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf as *mut u8, data.len()) };
        let mut size = data.len().max(1);
        // SAFETY: HDF5's filter calling convention: parameters, the bytes in use, the
        // buffer's size and the buffer, both of which the filter may replace.
        let n = unsafe { (self.filter)(if reverse { REVERSE } else { 0 }, params.len(), params.as_ptr(), data.len(), &mut size, &mut buf) };
        let out = if n == 0 {
            Err(failed("the filter failed"))
        } else if n > cap {
            Err(failed(&format!("{n} bytes, more than the chunk allows")))
        } else {
            // SAFETY: the filter's buffer holds the `n` bytes it returned (HDF5 trusts the
            // count too: some filters leave the size they were given when they grow it).
            Ok(unsafe { std::slice::from_raw_parts(buf as *const u8, n) }.to_vec())
        };
        if !buf.is_null() {
            // SAFETY: the buffer the filter left us (plugins allocate with malloc).
            unsafe { libc::free(buf) };
        }
        out
    }
}

impl Plugin {
    /// The parameters HDF5 would give this filter for a variable of `nctype` (`big_endian`)
    /// chunked as `chunk`: HDF5's own dataset-creation steps (`can_apply`, then `set_local`
    /// on a creation property list holding the filter), made with the libhdf5 the plugin
    /// itself links. The parameters a program gives are rewritten there (ZFP's header, szip's
    /// pixel sizes, bitshuffle's element size); for filters without `set_local`, unchanged.
    pub fn localize(&self, params: &[u32], nctype: NcType, big_endian: bool, chunk: &[u64]) -> Result<Vec<u32>> {
        if !self.set_local {
            return Ok(params.to_vec());
        }
        let key = (params.to_vec(), nctype, big_endian, chunk.to_vec());
        if let Some(done) = self.localized.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(done.clone());
        }
        let made = self.localize_now(params, nctype, big_endian, chunk)?;
        self.localized.lock().unwrap_or_else(|p| p.into_inner()).insert(key, made.clone());
        Ok(made)
    }

    fn localize_now(&self, params: &[u32], nctype: NcType, big_endian: bool, chunk: &[u64]) -> Result<Vec<u32>> {
        let failed = |what: &str| Error::new(Kind::Filter, format!("filter {} ({}): {what}", self.id, self.name));
        let native = match nctype {
            NcType::Byte => c"H5T_NATIVE_SCHAR_g",
            NcType::UByte => c"H5T_NATIVE_UCHAR_g",
            NcType::Short => c"H5T_NATIVE_SHORT_g",
            NcType::UShort => c"H5T_NATIVE_USHORT_g",
            NcType::Int => c"H5T_NATIVE_INT_g",
            NcType::UInt => c"H5T_NATIVE_UINT_g",
            NcType::Int64 => c"H5T_NATIVE_LLONG_g",
            NcType::UInt64 => c"H5T_NATIVE_ULLONG_g",
            NcType::Float => c"H5T_NATIVE_FLOAT_g",
            NcType::Double => c"H5T_NATIVE_DOUBLE_g",
            _ => return Err(failed("not for text or string variables")),
        };
        let handle = self.handle as *mut c_void;
        // The HDF5 the plugin's own code calls: the dynamic linker binds a library opened with
        // RTLD_LOCAL to the process's global libhdf5 first (one a real netcdf-c brought in),
        // else to the one it links. Ours must be the same one: a property list made by one
        // HDF5 and read by another crashes.
        let sym = |name: &CStr| -> Result<*mut c_void> {
            // SAFETY: NUL-terminated names; a live handle (plugins stay loaded).
            let p = unsafe {
                let global = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
                if global.is_null() { libc::dlsym(handle, name.as_ptr()) } else { global }
            };
            if p.is_null() { Err(failed(&format!("its libhdf5 has no {}", name.to_string_lossy()))) } else { Ok(p) }
        };
        macro_rules! f {
            ($name:literal, $ty:ty) => {{
                let p = sym($name)?;
                // SAFETY: the HDF5 function of that name, with HDF5's signature.
                unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
            }};
        }
        let open = f!(c"H5open", unsafe extern "C" fn() -> c_int);
        let eset_auto = f!(c"H5Eset_auto2", unsafe extern "C" fn(Hid, *const c_void, *mut c_void) -> c_int);
        let zregister = f!(c"H5Zregister", unsafe extern "C" fn(*const c_void) -> c_int);
        let pcreate = f!(c"H5Pcreate", unsafe extern "C" fn(Hid) -> Hid);
        let pset_chunk = f!(c"H5Pset_chunk", unsafe extern "C" fn(Hid, c_int, *const u64) -> c_int);
        let pset_filter = f!(c"H5Pset_filter", unsafe extern "C" fn(Hid, c_int, c_uint, usize, *const c_uint) -> c_int);
        let pget_filter = f!(
            c"H5Pget_filter_by_id2",
            unsafe extern "C" fn(Hid, c_int, *mut c_uint, *mut usize, *mut c_uint, usize, *mut c_char, *mut c_uint) -> c_int
        );
        let tcopy = f!(c"H5Tcopy", unsafe extern "C" fn(Hid) -> Hid);
        let tset_order = f!(c"H5Tset_order", unsafe extern "C" fn(Hid, c_int) -> c_int);
        let screate_simple = f!(c"H5Screate_simple", unsafe extern "C" fn(c_int, *const u64, *const u64) -> Hid);
        let pclose = f!(c"H5Pclose", unsafe extern "C" fn(Hid) -> c_int);
        let tclose = f!(c"H5Tclose", unsafe extern "C" fn(Hid) -> c_int);
        let sclose = f!(c"H5Sclose", unsafe extern "C" fn(Hid) -> c_int);
        let dcpl_class = sym(c"H5P_CLS_DATASET_CREATE_ID_g")? as *const Hid;
        let native = sym(native)? as *const Hid;
        let class = self.class as *const H5ZClass2;
        let _one = self.one_at_a_time.lock().unwrap_or_else(|p| p.into_inner());
        let dims: Vec<u64> = if chunk.is_empty() { vec![1] } else { chunk.iter().map(|&c| c.max(1)).collect() };
        // SAFETY: HDF5's API with its documented arguments; every id made here is closed
        // before returning; the class is the plugin's own static `H5Z_class2_t`.
        unsafe {
            if open() < 0 {
                return Err(failed("H5open failed"));
            }
            // HDF5 prints its error stack by default; failures here are answered by our codes.
            eset_auto(0, std::ptr::null(), std::ptr::null_mut());
            zregister(class as *const c_void);
            let dcpl = pcreate(*dcpl_class);
            if dcpl < 0 {
                return Err(failed("H5Pcreate failed"));
            }
            let t = tcopy(*native);
            let s = screate_simple(dims.len() as c_int, dims.as_ptr(), std::ptr::null());
            let result = (|| {
                if t < 0 || s < 0 {
                    return Err(failed("H5Tcopy/H5Screate_simple failed"));
                }
                if big_endian && tset_order(t, 1) < 0 {
                    return Err(failed("H5Tset_order failed"));
                }
                if pset_chunk(dcpl, dims.len() as c_int, dims.as_ptr()) < 0 {
                    return Err(failed("H5Pset_chunk failed"));
                }
                if pset_filter(dcpl, self.id as c_int, 0, params.len(), params.as_ptr()) < 0 {
                    return Err(failed("H5Pset_filter refused the parameters"));
                }
                if let Some(can_apply) = (*class).can_apply {
                    let r = can_apply(dcpl, t, s);
                    if r <= 0 {
                        return Err(failed(&format!("cannot apply to a {} variable chunked {chunk:?}", nctype.name())));
                    }
                }
                if let Some(set_local) = (*class).set_local
                    && set_local(dcpl, t, s) < 0
                {
                    return Err(failed(&format!("its set_local refused the parameters {params:?}")));
                }
                let mut values = [0 as c_uint; 64];
                let (mut flags, mut n, mut config) = (0 as c_uint, values.len(), 0 as c_uint);
                let mut name = [0 as c_char; 64];
                if pget_filter(dcpl, self.id as c_int, &mut flags, &mut n, values.as_mut_ptr(), name.len(), name.as_mut_ptr(), &mut config)
                    < 0
                {
                    return Err(failed("H5Pget_filter_by_id2 failed"));
                }
                if n > values.len() {
                    return Err(failed(&format!("{n} parameters")));
                }
                Ok(values[..n].to_vec())
            })();
            if s >= 0 {
                sclose(s);
            }
            if t >= 0 {
                tclose(t);
            }
            pclose(dcpl);
            result
        }
    }
}

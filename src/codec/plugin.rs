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
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

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
    can_apply: *const c_void,
    set_local: *const c_void,
    filter: Option<FilterFn>,
}

/// `H5Z_FLAG_REVERSE`: decode.
const REVERSE: c_uint = 0x0100;
/// `H5PL_TYPE_FILTER`.
const FILTER_PLUGIN: c_int = 0;

/// One filter from a plugin library.
pub struct Plugin {
    pub id: u32,
    pub name: String,
    pub path: PathBuf,
    pub encoder: bool,
    pub decoder: bool,
    /// The filter has HDF5's `set_local` callback: the parameters a program gives are changed by
    /// variable type and chunk shape before the filter sees them, which only HDF5 can do (ZFP
    /// crashes on parameters it did not make). Such a filter is found but not used.
    pub set_local: bool,
    filter: FilterFn,
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
                        let unused = if p.set_local { ": not used (it needs HDF5's set_local)" } else { "" };
                        crate::trace::emit(1, &format!("filter plugin {}: id {} ({}){unused}", path.display(), p.id, p.name));
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
        set_local: !class.set_local.is_null(),
        filter,
        one_at_a_time: Mutex::new(()),
    })
}

impl Plugin {
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

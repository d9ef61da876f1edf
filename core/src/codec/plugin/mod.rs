//! HDF5 filter plugins found at run time, for filter ids not built in (NCZarr's design:
//! reuse the HDF5 filter implementations). Every shared library in the plugin directories
//! (`HDF5_PLUGIN_PATH`, else HDF5's, netcdf-c's and Debian's default directories) is probed
//! once, on first use, for HDF5's plugin entry points (`H5PLget_plugin_type`,
//! `H5PLget_plugin_info` → `H5Z_class2_t`); the first library of a filter id wins, as in HDF5.
//! A library that does not load or is not a filter plugin is skipped (`NCTRACING=1` says why).
//! Libraries stay loaded for the life of the process; a plugin that needs libhdf5 gets it from
//! its own dependencies.
//!
//! The same libraries are probed for netcdf-c's codec entry points (`NCZ_get_codec_info`,
//! `NCZ_codec_info_defaults` → `NCZ_codec_t`, `codec_lib`), which translate a filter's HDF5
//! parameters to and from its Zarr codec JSON.
//!
//! The filter function is HDF5's `H5Z_func_t`: it takes a `malloc`ed buffer and returns the
//! bytes it holds after the filter (or 0 on failure), replacing the buffer as it needs.
//! Calls into one plugin are made one at a time (HDF5 itself never calls a filter from two
//! threads at once, and plugins are written for that).

use crate::error::{Error, Kind, Result};
use crate::nc::types::NcType;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

pub(crate) mod codec_lib;
use codec_lib::CodecPlugin;

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
pub(crate) struct Plugin {
    pub id: u32,
    pub name: String,
    pub encoder: bool,
    pub decoder: bool,
    /// The filter has HDF5's `set_local` callback: the parameters a program gives are changed by
    /// variable type and chunk shape before the filter sees them (`localize`); the filter never
    /// sees parameters that did not go through it (ZFP crashes on those).
    pub set_local: bool,
    filter: FilterFn,
    /// Parameters `localize` made, by what they were made from.
    localized: Mutex<HashMap<LocalKey, Vec<u32>>>,
    /// Parameters and chunk sizes whose output was seen to decode back to the chunk's size.
    verified: Mutex<std::collections::HashSet<(Vec<u32>, usize)>>,
    /// The library and its `H5Z_class2_t` (an address: the library stays loaded).
    library: Loaded,
    class: usize,
    one_at_a_time: Mutex<()>,
}

/// The plugin path: the directories searched, in order. Set by `nc_plugin_path_set`; until
/// then netcdf-c's rule: the directories of `HDF5_PLUGIN_PATH`, else the default ones.
static PATH: RwLock<Option<Vec<String>>> = RwLock::new(None);

/// The directories searched when `HDF5_PLUGIN_PATH` is unset: HDF5's default, netcdf-c's
/// install directory, Debian's plugin packages.
const DEFAULT_DIRS: &[&str] = &["/usr/local/hdf5/lib/plugin", "/usr/local/hdf5/plugin", "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"];

/// The plugin path now (`nc_plugin_path_get`).
pub fn path() -> Vec<String> {
    if let Some(dirs) = PATH.read().unwrap_or_else(|p| p.into_inner()).as_ref() {
        return dirs.clone();
    }
    let initial = match crate::config::hdf5_plugin_path() {
        Some(list) => split_path(&list.to_string_lossy(), ':'),
        None => DEFAULT_DIRS.iter().map(|d| d.to_string()).collect(),
    };
    PATH.write().unwrap_or_else(|p| p.into_inner()).get_or_insert(initial).clone()
}

/// Replaces the plugin path (`nc_plugin_path_set`): filters are looked up in the new
/// directories from the next use. Libraries already loaded stay loaded (datasets open now may
/// run them), but a filter is only found through the directories of the path.
pub fn set_path(dirs: Vec<String>) {
    // Under the probe lock, so no lookup in progress stores what it found in the old path.
    let _probing = PROBED.lock().unwrap_or_else(|p| p.into_inner());
    *PATH.write().unwrap_or_else(|p| p.into_inner()) = Some(dirs);
    *FOUND.write().unwrap_or_else(|p| p.into_inner()) = None;
}

/// netcdf-c's path-list syntax: pieces between separators, empty ones included.
pub fn split_path(list: &str, sep: char) -> Vec<String> {
    if list.is_empty() {
        return Vec::new();
    }
    list.split(sep).map(str::to_string).collect()
}

/// What the plugin path's libraries hold: filters (the first library of an id wins) and codecs
/// (the first of a codec id wins).
#[derive(Default)]
pub(crate) struct Found {
    pub filters: Vec<&'static Plugin>,
    pub codecs: Vec<&'static CodecPlugin>,
}

/// What one library holds.
struct Library {
    filter: Option<&'static Plugin>,
    codecs: Vec<&'static CodecPlugin>,
}

/// A shared library loaded for good: plugins' code and static classes are used for the rest of
/// the process, so nothing is ever unloaded.
type Loaded = &'static libloading::os::unix::Library;

/// `dlopen(path, RTLD_NOW | scope)`.
fn open(path: &std::ffi::OsStr, scope: c_int) -> std::result::Result<libloading::os::unix::Library, String> {
    // SAFETY: the library's initialisers run as for any dlopen (plugins and HDF5 are C
    // libraries with no unsound initialisers of their own).
    unsafe { libloading::os::unix::Library::open(Some(path), libc::RTLD_NOW | scope) }.map_err(|e| e.to_string())
}

/// The global scope (the program, what it was linked with, libraries loaded RTLD_GLOBAL), as
/// `dlsym(RTLD_DEFAULT, ..)` searches it.
fn global_scope() -> Loaded {
    static THIS: OnceLock<libloading::os::unix::Library> = OnceLock::new();
    THIS.get_or_init(libloading::os::unix::Library::this)
}

/// A symbol's address in `lib`, if it has one.
fn address(lib: &libloading::os::unix::Library, name: &CStr) -> Option<*mut c_void> {
    // SAFETY: the address only, not yet used as anything.
    unsafe { lib.get::<*mut c_void>(name.to_bytes_with_nul()) }.ok().map(|s| *s)
}

/// What the plugin path holds now (None: not looked for since the last change).
static FOUND: RwLock<Option<Arc<Found>>> = RwLock::new(None);

/// Every library probed, by path: what it holds, or why it was skipped. Probed once per
/// process; libraries that hold something stay loaded.
static PROBED: Mutex<Option<HashMap<PathBuf, std::result::Result<Library, String>>>> = Mutex::new(None);

/// The filters and codecs in the plugin path's directories.
pub(crate) fn found() -> Arc<Found> {
    if let Some(found) = FOUND.read().unwrap_or_else(|p| p.into_inner()).as_ref() {
        return found.clone();
    }
    let mut probed = PROBED.lock().unwrap_or_else(|p| p.into_inner());
    let probed = probed.get_or_insert_with(HashMap::new);
    let mut found = Found::default();
    for dir in path().iter().filter(|d| !d.is_empty()) {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths.into_iter().filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains(".so"))) {
            let fresh = !probed.contains_key(&path);
            let say = |what: String| {
                if fresh {
                    crate::trace::emit(1, &format!("filter plugin {}: {what}", path.display()));
                }
            };
            let library = probed.entry(path.clone()).or_insert_with(|| load(&path));
            let library = match library {
                Ok(library) => library,
                Err(why) => {
                    say(format!("skipped: {why}"));
                    continue;
                }
            };
            if let Some(p) = library.filter {
                if found.filters.iter().any(|f| f.id == p.id) {
                    say(format!("id {} already found earlier, skipped", p.id));
                } else {
                    let local = if p.set_local { ", with set_local" } else { "" };
                    say(format!("id {} ({}){local}", p.id, p.name));
                    found.filters.push(p);
                }
            }
            for c in &library.codecs {
                if found.codecs.iter().any(|f| f.codec_id == c.codec_id) {
                    say(format!("codec {:?} already found earlier, skipped", c.codec_id));
                } else {
                    say(format!("codec {:?} for HDF5 filter {}", c.codec_id, c.hdf5_id));
                    found.codecs.push(c);
                }
            }
        }
    }
    let found = Arc::new(found);
    *FOUND.write().unwrap_or_else(|p| p.into_inner()) = Some(found.clone());
    found
}

/// The plugin for HDF5 filter `id`, if one was found.
pub(crate) fn find(id: u32) -> Option<&'static Plugin> {
    if id == 0 {
        return None;
    }
    found().filters.iter().find(|p| p.id == id).copied()
}

/// Loads a library and takes what it holds: an HDF5 filter plugin, netcdf-c codecs, or both.
fn load(path: &Path) -> std::result::Result<Library, String> {
    let mut opened = open(path.as_os_str(), libc::RTLD_LOCAL);
    // A plugin that links neither libhdf5 nor its codec's library but takes their symbols from
    // the process (data ones too, such as H5E_CALLBACK_g, which no lazy binding defers):
    // Debian's LZF plugin wants HDF5 and liblzf. Each missing symbol's provider is put in the
    // global namespace once (`provide`), and the plugin opened again.
    for _ in 0..PROVIDERS.len() {
        let Err(why) = &opened else { break };
        let missing = why.rsplit_once("undefined symbol: ").map(|(_, s)| s.trim().to_string());
        if missing.as_deref().is_none_or(|m| provide(m).is_err()) {
            break;
        }
        opened = open(path.as_os_str(), libc::RTLD_LOCAL);
    }
    let library = opened?;
    // SAFETY: the library just loaded, kept loaded below if it holds codecs.
    let codecs = unsafe { codec_lib::codecs_of(&library) };
    let filter = filter_of(&library);
    if filter.is_err() && codecs.is_empty() {
        // Nothing in it is used: unloaded when dropped here.
        return Err(filter.err().unwrap_or_default());
    }
    let library: Loaded = Box::leak(Box::new(library));
    let codecs = codecs.into_iter().map(|c| &*Box::leak(Box::new(c))).collect();
    let filter = filter.ok().map(|f| &*Box::leak(Box::new(Plugin { library, ..f })));
    Ok(Library { filter, codecs })
}

/// The HDF5 filter plugin in a loaded library.
/// (The `Plugin` it returns names the global scope as its library until `load` keeps `lib`.)
fn filter_of(lib: &libloading::os::unix::Library) -> std::result::Result<Plugin, String> {
    // SAFETY: HDF5's plugin entry points: `H5PL_type_t H5PLget_plugin_type(void)` and
    // `const void *H5PLget_plugin_info(void)`.
    let entries = unsafe {
        (
            lib.get::<unsafe extern "C" fn() -> c_int>(b"H5PLget_plugin_type\0"),
            lib.get::<unsafe extern "C" fn() -> *const c_void>(b"H5PLget_plugin_info\0"),
        )
    };
    let unload = |why: &str| Err(why.to_string());
    let (Ok(kind), Ok(info)) = entries else {
        return unload("not an HDF5 plugin (no H5PLget_plugin_type/H5PLget_plugin_info)");
    };
    // SAFETY: as above; both take nothing.
    let (kind, class) = unsafe { (kind(), info() as *const H5ZClass2) };
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
        encoder: class.encoder_present != 0,
        decoder: class.decoder_present != 0,
        set_local: class.set_local.is_some(),
        filter,
        localized: Mutex::new(HashMap::new()),
        verified: Mutex::new(std::collections::HashSet::new()),
        library: global_scope(),
        class: class as *const H5ZClass2 as usize,
        one_at_a_time: Mutex::new(()),
    })
}

impl Plugin {
    /// Encodes with a `set_local` filter's parameters, checking once per parameters and chunk
    /// size that the output decodes back to the chunk's size (parameters made for another chunk
    /// shape, as copied from an HDF5 file, would store data no one can read).
    pub(crate) fn encode_checked(&self, params: &[u32], data: &[u8], slack: usize) -> Result<Vec<u8>> {
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
    pub(crate) fn run(&self, params: &[u32], data: &[u8], reverse: bool, cap: usize) -> Result<Vec<u8>> {
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
    pub(crate) fn localize(&self, params: &[u32], nctype: NcType, big_endian: bool, chunk: &[u64]) -> Result<Vec<u32>> {
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
        let hdf5 = hdf5_for(self.library).map_err(|why| failed(&why))?;
        let api = Hdf5Api::resolve(hdf5, native, &failed)?;
        let _one = self.one_at_a_time.lock().unwrap_or_else(|p| p.into_inner());
        let dims: Vec<u64> = if chunk.is_empty() { vec![1] } else { chunk.iter().map(|&c| c.max(1)).collect() };
        // SAFETY: HDF5's API with its documented arguments; every id made here is closed
        // before returning.
        unsafe {
            if (api.open)() < 0 {
                return Err(failed("H5open failed"));
            }
            // HDF5 prints its error stack by default; failures here are answered by our codes.
            (api.eset_auto)(0, std::ptr::null(), std::ptr::null_mut());
            (api.zregister)(self.class as *const c_void);
            let dcpl = (api.pcreate)(*api.dcpl_class);
            if dcpl < 0 {
                return Err(failed("H5Pcreate failed"));
            }
            let t = (api.tcopy)(*api.native);
            let s = (api.screate_simple)(dims.len() as c_int, dims.as_ptr(), std::ptr::null());
            let result = if t < 0 || s < 0 {
                Err(failed("H5Tcopy/H5Screate_simple failed"))
            } else {
                self.set_local_on(&api, dcpl, t, s, params, nctype, big_endian, &dims).map_err(|what| failed(&what))
            };
            if s >= 0 {
                (api.sclose)(s);
            }
            if t >= 0 {
                (api.tclose)(t);
            }
            (api.pclose)(dcpl);
            result
        }
    }

    /// The parameters the filter's `set_local` makes on a dataset creation property list
    /// `dcpl` for type `t` and chunk space `s`: HDF5's steps, as H5Dcreate takes them.
    ///
    /// # Safety
    /// `dcpl`, `t` and `s` are live HDF5 ids of `api`'s library.
    #[allow(clippy::too_many_arguments)]
    unsafe fn set_local_on(
        &self,
        api: &Hdf5Api,
        dcpl: Hid,
        t: Hid,
        s: Hid,
        params: &[u32],
        nctype: NcType,
        big_endian: bool,
        dims: &[u64],
    ) -> std::result::Result<Vec<u32>, String> {
        let class = self.class as *const H5ZClass2;
        // SAFETY: the caller's ids; the class is the plugin's own static `H5Z_class2_t`.
        unsafe {
            if big_endian && (api.tset_order)(t, 1) < 0 {
                return Err("H5Tset_order failed".into());
            }
            if (api.pset_chunk)(dcpl, dims.len() as c_int, dims.as_ptr()) < 0 {
                return Err("H5Pset_chunk failed".into());
            }
            if (api.pset_filter)(dcpl, self.id as c_int, 0, params.len(), params.as_ptr()) < 0 {
                return Err("H5Pset_filter refused the parameters".into());
            }
            if let Some(can_apply) = (*class).can_apply
                && can_apply(dcpl, t, s) <= 0
            {
                return Err(format!("cannot apply to a {} variable chunked {dims:?}", nctype.name()));
            }
            if let Some(set_local) = (*class).set_local
                && set_local(dcpl, t, s) < 0
            {
                return Err(format!("its set_local refused the parameters {params:?}"));
            }
            let mut values = [0 as c_uint; 64];
            let (mut flags, mut n, mut config) = (0 as c_uint, values.len(), 0 as c_uint);
            let mut name = [0 as c_char; 64];
            if (api.pget_filter)(
                dcpl,
                self.id as c_int,
                &mut flags,
                &mut n,
                values.as_mut_ptr(),
                name.len(),
                name.as_mut_ptr(),
                &mut config,
            ) < 0
            {
                return Err("H5Pget_filter_by_id2 failed".into());
            }
            if n > values.len() {
                return Err(format!("{n} parameters"));
            }
            Ok(values[..n].to_vec())
        }
    }
}

/// The HDF5 functions and globals a `set_local` call needs, from the library the plugin's own
/// HDF5 calls go to.
struct Hdf5Api {
    open: unsafe extern "C" fn() -> c_int,
    eset_auto: unsafe extern "C" fn(Hid, *const c_void, *mut c_void) -> c_int,
    zregister: unsafe extern "C" fn(*const c_void) -> c_int,
    pcreate: unsafe extern "C" fn(Hid) -> Hid,
    pset_chunk: unsafe extern "C" fn(Hid, c_int, *const u64) -> c_int,
    pset_filter: unsafe extern "C" fn(Hid, c_int, c_uint, usize, *const c_uint) -> c_int,
    pget_filter: unsafe extern "C" fn(Hid, c_int, *mut c_uint, *mut usize, *mut c_uint, usize, *mut c_char, *mut c_uint) -> c_int,
    tcopy: unsafe extern "C" fn(Hid) -> Hid,
    tset_order: unsafe extern "C" fn(Hid, c_int) -> c_int,
    screate_simple: unsafe extern "C" fn(c_int, *const u64, *const u64) -> Hid,
    pclose: unsafe extern "C" fn(Hid) -> c_int,
    tclose: unsafe extern "C" fn(Hid) -> c_int,
    sclose: unsafe extern "C" fn(Hid) -> c_int,
    /// `H5P_CLS_DATASET_CREATE_ID_g`.
    dcpl_class: *const Hid,
    /// The variable type's `H5T_NATIVE_*_g`.
    native: *const Hid,
}

impl Hdf5Api {
    /// Looks every function up in `hdf5` (a live handle, or RTLD_DEFAULT); `native`: the name
    /// of the type's global.
    fn resolve(hdf5: Loaded, native: &CStr, failed: &dyn Fn(&str) -> Error) -> Result<Hdf5Api> {
        let missing = |name: &CStr| failed(&format!("its libhdf5 has no {}", name.to_string_lossy()));
        let sym = |name: &CStr| address(hdf5, name).ok_or_else(|| missing(name));
        macro_rules! f {
            ($name:literal) => {
                // SAFETY: the HDF5 function of that name, whose signature is the field's; the
                // library stays loaded, so the pointer outlives the symbol.
                *unsafe { hdf5.get($name.to_bytes_with_nul()) }.map_err(|_| missing($name))?
            };
        }
        Ok(Hdf5Api {
            open: f!(c"H5open"),
            eset_auto: f!(c"H5Eset_auto2"),
            zregister: f!(c"H5Zregister"),
            pcreate: f!(c"H5Pcreate"),
            pset_chunk: f!(c"H5Pset_chunk"),
            pset_filter: f!(c"H5Pset_filter"),
            pget_filter: f!(c"H5Pget_filter_by_id2"),
            tcopy: f!(c"H5Tcopy"),
            tset_order: f!(c"H5Tset_order"),
            screate_simple: f!(c"H5Screate_simple"),
            pclose: f!(c"H5Pclose"),
            tclose: f!(c"H5Tclose"),
            sclose: f!(c"H5Sclose"),
            dcpl_class: sym(c"H5P_CLS_DATASET_CREATE_ID_g")? as *const Hid,
            native: sym(native)? as *const Hid,
        })
    }
}

/// Where a plugin's HDF5 calls go, for ours to go to the same library (a property list made by
/// one HDF5 and read by another crashes): the process's global libhdf5 when there is one (a
/// real netcdf-c brought it; the dynamic linker binds a plugin opened with RTLD_LOCAL to it
/// first); else the one the plugin links; else, for plugins that link none and look HDF5 up
/// in the global namespace (hdf5plugin's), a system libhdf5 loaded globally once.
fn hdf5_for(plugin: Loaded) -> std::result::Result<Loaded, String> {
    let has_hdf5 = |lib: Loaded| address(lib, c"H5Pcreate").is_some() && address(lib, c"H5Eset_auto2").is_some();
    if has_hdf5(global_scope()) {
        return Ok(global_scope());
    }
    if has_hdf5(plugin) {
        return Ok(plugin);
    }
    global_hdf5()?;
    if !has_hdf5(global_scope()) {
        return Err("the libhdf5 loaded has no H5Pcreate".into());
    }
    // Such plugins bound their HDF5 calls when they were loaded, to nothing then: hdf5plugin's
    // `init_filter(NULL)` binds them again, to the library just loaded.
    // SAFETY: hdf5plugin's `int init_filter(const char *libname)`.
    if let Ok(init) = unsafe { plugin.get::<unsafe extern "C" fn(*const c_char) -> c_int>(b"init_filter\0") } {
        // SAFETY: NULL: the global scope. Its result is not an answer: it says -1 when a
        // symbol of a newer HDF5 is missing, having bound the rest; the filter's set_local
        // reports what it lacks.
        unsafe { init(std::ptr::null()) };
    }
    Ok(global_scope())
}

/// Where a plugin's missing symbols come from, by name prefix: HDF5's (`global_hdf5`), and
/// the codec libraries Debian's plugins expect the process to hold (liblzf for LZF).
const PROVIDERS: &[(&str, &[&str])] = &[("H5", &[]), ("lzf_", &["liblzf.so.1", "liblzf.so"])];

/// Puts the library that provides `symbol` in the global namespace (once per library).
fn provide(symbol: &str) -> std::result::Result<(), String> {
    let Some((prefix, libs)) = PROVIDERS.iter().find(|(p, _)| symbol.starts_with(p)) else {
        return Err(format!("no known provider of {symbol}"));
    };
    if *prefix == "H5" {
        return global_hdf5();
    }
    static LOADED: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut loaded = LOADED.lock().unwrap_or_else(|p| p.into_inner());
    for &lib in *libs {
        if loaded.contains(&lib) {
            return Ok(());
        }
        if let Ok(kept) = open(lib.as_ref(), libc::RTLD_GLOBAL) {
            std::mem::forget(kept);
            crate::trace::emit(1, &format!("filter plugins: loaded {lib} for a plugin that needs {symbol}"));
            loaded.push(lib);
            return Ok(());
        }
    }
    Err(format!("{symbol}: none of {} loads", libs.join(", ")))
}

/// A system libhdf5 in the global namespace, loaded once (`NCZARR_HDF5_LIB` names it, else
/// the first of `HDF5_LIBS` that loads), for plugins that link none and look HDF5 up there.
fn global_hdf5() -> std::result::Result<(), String> {
    static LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let names: Vec<String> = match crate::config::hdf5_lib() {
                Some(name) => vec![name],
                None => HDF5_LIBS.iter().map(|n| n.to_string()).collect(),
            };
            for name in &names {
                if let Ok(kept) = open(name.as_ref(), libc::RTLD_GLOBAL) {
                    std::mem::forget(kept);
                    crate::trace::emit(1, &format!("filter plugins: loaded {name} for plugins that link no libhdf5"));
                    return Ok(());
                }
            }
            Err(format!("it links no libhdf5 and none of {} loads (NCZARR_HDF5_LIB)", names.join(", ")))
        })
        .clone()
}

/// System libhdf5 names tried, newest HDF5 first after Debian's serial build.
const HDF5_LIBS: &[&str] =
    &["libhdf5_serial.so.103", "libhdf5.so.310", "libhdf5.so.200", "libhdf5.so.103", "libhdf5_serial.so", "libhdf5.so"];

#[cfg(test)]
mod tests {
    use super::split_path;

    #[test]
    fn plugin_paths_split_as_netcdf_c_does() {
        assert_eq!(split_path("/a:/b::/c", ':'), ["/a", "/b", "", "/c"]);
        assert_eq!(split_path("/a;/b", ';'), ["/a", "/b"]);
        assert_eq!(split_path("/a:", ':'), ["/a", ""]);
        assert!(split_path("", ':').is_empty());
    }
}

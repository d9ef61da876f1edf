//! Passthrough routing (passthrough.md): which datasets are ours, which belong to a real
//! netcdf-c loaded behind us, and how calls reach that library.
//!
//! * Every ncid-taking export starts with the check `#[export]` writes: it looks up the slot's owner in the registry's lock-free
//!   table and, for anything not ours, calls the real library's function of the same name
//!   with the arguments unchanged. The forwarding path takes no lock and allocates
//!   nothing: the real library calls its own exports (`nc_inq_var` from `nc_inq_varndims`, …)
//!   and those calls arrive here with its ncids, often while we are forwarding.
//! * Paths are classified before anything else: Zarr (by URL mode, `s3:` scheme, or a
//!   directory/zip holding Zarr metadata) is ours, everything else is forwarded unchanged.
//! * The real library is found lazily, per symbol: `dlsym(RTLD_NEXT)` (a tool that links
//!   netcdf-c), else by scanning loaded objects (a Python wheel loads its copy RTLD_LOCAL),
//!   else `NCZARR_FALLBACK_LIB` (drop-in build, dlopen'ed with RTLD_DEEPBIND unless the
//!   program holds copies of HDF5's variables). This is the only module that calls
//!   `dlsym`/`dlopen`.

use super::consts::{NC_EBADID, NC_ENFILE, NC_ENOTBUILT};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

/// The drop-in's explicit fallback library, as a C string for `dlopen`.
fn fallback_path() -> Option<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    crate::config::fallback_lib().and_then(|v| std::ffi::CString::new(v.as_bytes()).ok())
}

/// Lock-free: does a call with this ncid go to the real library? (The registry owns slots.)
pub use crate::registry::{is_foreign, passthrough};

// ---- finding the real library ---------------------------------------------------------------

/// Where symbols come from once discovery has succeeded.
const LIB_UNKNOWN: u8 = 0;
const LIB_NEXT: u8 = 1;
const LIB_HANDLE: u8 = 2;
const LIB_NONE: u8 = 3;
static LIB_KIND: AtomicU8 = AtomicU8::new(LIB_UNKNOWN);
static LIB_HANDLE_PTR: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Base address of our own shared object (symbols found there are never "the real one").
fn own_base() -> *mut c_void {
    static BASE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    let b = BASE.load(Ordering::Relaxed);
    if !b.is_null() {
        return b;
    }
    // SAFETY: `Dl_info` is plain C data (pointers and NULLs); all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr(const void*, Dl_info*) with an address inside this object.
    let found = unsafe { libc::dladdr(own_base as *const c_void, &mut info) } != 0;
    let b = if found { info.dli_fbase } else { std::ptr::null_mut() };
    BASE.store(b, Ordering::Relaxed);
    b
}

fn defined_elsewhere(p: *mut c_void) -> bool {
    if p.is_null() {
        return false;
    }
    // SAFETY: `Dl_info` is plain C data (pointers and NULLs); all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only inspects the address.
    let found = unsafe { libc::dladdr(p, &mut info) } != 0;
    !found || info.dli_fbase != own_base()
}

fn log(msg: &str) {
    if crate::config::log_routing() || crate::trace::enabled(1) {
        eprintln!("nczarr: {msg}");
    }
}

/// Is a real netcdf-c reachable? Discovery runs the first time; after a failed discovery
/// only opens and creates look again (`real_available_retry`), so calls with foreign ncids
/// and global setters never rescan the loaded objects.
pub fn real_available() -> bool {
    match LIB_KIND.load(Ordering::Acquire) {
        LIB_NEXT | LIB_HANDLE => true,
        LIB_UNKNOWN => discover(),
        _ => false,
    }
}

/// `real_available` for opens and creates: a library loaded since the last look (Python
/// imports the wheel's netcdf-c late) is found now.
pub fn real_available_retry() -> bool {
    real_available() || discover()
}

fn discover() -> bool {
    // 1. The next object in the global search order (a tool linking netcdf-c).
    // SAFETY: dlsym(void*, const char*) with a NUL-terminated name.
    let next = unsafe { libc::dlsym(libc::RTLD_NEXT, c"nc_inq_libvers".as_ptr()) };
    if defined_elsewhere(next) {
        LIB_KIND.store(LIB_NEXT, Ordering::Release);
        log("real netcdf-c found with dlsym(RTLD_NEXT)");
        return true;
    }
    // 2. A library loaded RTLD_LOCAL (Python wheels): scan loaded objects.
    if let Some(h) = scan_loaded() {
        LIB_HANDLE_PTR.store(h, Ordering::Release);
        LIB_KIND.store(LIB_HANDLE, Ordering::Release);
        return true;
    }
    // 3. The drop-in's explicit fallback.
    if passthrough()
        && let Some(path) = fallback_path()
        && let Some(h) = open_fallback(&path)
    {
        LIB_HANDLE_PTR.store(h, Ordering::Release);
        LIB_KIND.store(LIB_HANDLE, Ordering::Release);
        return true;
    }
    LIB_KIND.store(LIB_NONE, Ordering::Release);
    false
}

fn scan_loaded() -> Option<*mut c_void> {
    let mut names: Vec<std::ffi::CString> = Vec::new();
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
        // SAFETY: glibc passes a valid dl_phdr_info and our Vec as `data`.
        unsafe {
            let names = &mut *(data as *mut Vec<std::ffi::CString>);
            let name = (*info).dlpi_name;
            if !name.is_null() && *name != 0 && (*info).dlpi_addr as *mut c_void != own_base() {
                names.push(CStr::from_ptr(name).to_owned());
            }
        }
        0
    }
    // SAFETY: the callback matches dl_iterate_phdr's prototype and only reads `info`.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut names as *mut _ as *mut c_void) };
    let mut chosen: Option<(*mut c_void, *mut c_void)> = None;
    for name in &names {
        // SAFETY: RTLD_NOLOAD only returns a handle on an object that is already loaded.
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            continue;
        }
        // SAFETY: dlsym on a valid handle.
        let (open, vers) = unsafe { (libc::dlsym(h, c"nc_open".as_ptr()), libc::dlsym(h, c"nc_inq_libvers".as_ptr())) };
        if defined_elsewhere(open) && defined_elsewhere(vers) {
            match chosen {
                None => {
                    log(&format!("real netcdf-c found by scanning loaded objects: {}", name.to_string_lossy()));
                    chosen = Some((h, open));
                    continue;
                }
                Some((_, first)) if first != open => {
                    log(&format!("a second netcdf-c is loaded ({}); keeping the first", name.to_string_lossy()));
                }
                _ => {}
            }
        }
        // SAFETY: balances the dlopen above (NOLOAD handles are reference counted too).
        unsafe { libc::dlclose(h) };
    }
    chosen.map(|(h, _)| h)
}

fn open_fallback(path: &CStr) -> Option<*mut c_void> {
    // A sanitizer runtime cannot coexist with RTLD_DEEPBIND: refuse instead of crashing.
    for sym in [c"__asan_init", c"__tsan_init", c"__msan_init"] {
        // SAFETY: dlsym(RTLD_DEFAULT, name) only looks the name up.
        if !unsafe { libc::dlsym(libc::RTLD_DEFAULT, sym.as_ptr()) }.is_null() {
            log("NCZARR_FALLBACK_LIB refused: a sanitizer runtime is loaded and RTLD_DEEPBIND is incompatible with it");
            return None;
        }
    }
    // DEEPBIND keeps the library's internal calls inside it, except in a program that holds
    // copies of HDF5's global variables (see `hdf5_globals_copied`): there it would read
    // variables HDF5 never sets. Without it the library's internal nc_* calls come through our
    // exports, which hand its ncids back to it, as the preload library does.
    let copied = hdf5_globals_copied();
    let deep = if copied { 0 } else { libc::RTLD_DEEPBIND };
    // SAFETY: dlopen of a caller-named library.
    let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | deep) };
    if h.is_null() {
        log(&format!("NCZARR_FALLBACK_LIB {} could not be loaded", path.to_string_lossy()));
        return None;
    }
    let how = if copied { " (without RTLD_DEEPBIND: the program holds copies of HDF5's variables)" } else { "" };
    log(&format!("real netcdf-c loaded from NCZARR_FALLBACK_LIB={}{how}", path.to_string_lossy()));
    Some(h)
}

/// Does the program hold its own copies of libhdf5's global variables? A program that links
/// libhdf5 and reads `H5T_NATIVE_INT_g` and its kind directly (CDO) gets copy relocations: the
/// variables live in the program, and HDF5 initialises those copies. A library opened with
/// RTLD_DEEPBIND looks such names up in libhdf5 first and finds libhdf5's own storage, which
/// HDF5 never sets: every type it passes is invalid and each open of a netCDF-4 file fails
/// with NC_EHDFERR.
fn hdf5_globals_copied() -> bool {
    let name = c"H5T_NATIVE_INT_g";
    // SAFETY: a lookup of a NUL-terminated name in the global scope.
    let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if global.is_null() {
        return false;
    }
    HDF5_SONAMES.iter().any(|soname| {
        // SAFETY: RTLD_NOLOAD only finds a library already loaded; the handle is released.
        let h = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            return false;
        }
        // SAFETY: a live handle and a NUL-terminated name; then the handle is released.
        let own = unsafe { libc::dlsym(h, name.as_ptr()) };
        // SAFETY: balances the dlopen above.
        unsafe { libc::dlclose(h) };
        !own.is_null() && own != global
    })
}

/// The sonames a system libhdf5 goes by, newest first.
const HDF5_SONAMES: &[&CStr] =
    &[c"libhdf5_serial.so.310", c"libhdf5_serial.so.103", c"libhdf5.so.310", c"libhdf5.so.200", c"libhdf5.so.103", c"libhdf5.so"];

/// An HDF5 function for the drop-in's HDF5 shims: from the real netcdf-c's own HDF5 (a
/// `dlsym` on its handle searches its dependencies), else from a system HDF5 loaded for the
/// purpose. NULL when neither exists.
pub fn hdf5_symbol(name: &CStr) -> *mut c_void {
    let p = resolve(name);
    if !p.is_null() {
        return p;
    }
    static SYSTEM: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    static LOOKED: std::sync::Once = std::sync::Once::new();
    LOOKED.call_once(|| {
        for soname in HDF5_SONAMES {
            // SAFETY: dlopen of a system library by name; kept open for the process.
            let h = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
            if !h.is_null() {
                log(&format!("HDF5 for the H5* shims: {}", soname.to_string_lossy()));
                SYSTEM.store(h, Ordering::Release);
                return;
            }
        }
    });
    let h = SYSTEM.load(Ordering::Acquire);
    if h.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: dlsym on a live handle with a NUL-terminated name.
    unsafe { libc::dlsym(h, name.as_ptr()) }
}

/// Resolves a real-library symbol (NULL when there is no real library or it lacks the name).
fn resolve(name: &CStr) -> *mut c_void {
    if !real_available() {
        return std::ptr::null_mut();
    }
    let p = match LIB_KIND.load(Ordering::Acquire) {
        // SAFETY: dlsym with a NUL-terminated name.
        LIB_NEXT => unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) },
        // SAFETY: the handle stays open for the life of the process.
        LIB_HANDLE => unsafe { libc::dlsym(LIB_HANDLE_PTR.load(Ordering::Acquire), name.as_ptr()) },
        _ => std::ptr::null_mut(),
    };
    if defined_elsewhere(p) { p } else { std::ptr::null_mut() }
}

/// One forwarded symbol, resolved on first use and cached (lock-free afterwards).
pub struct Sym {
    name: &'static CStr,
    ptr: AtomicPtr<c_void>,
}

impl Sym {
    pub const fn new(name: &'static CStr) -> Sym {
        Sym { name, ptr: AtomicPtr::new(std::ptr::null_mut()) }
    }

    pub fn get(&self) -> Option<*mut c_void> {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return Some(p);
        }
        let p = resolve(self.name);
        if p.is_null() {
            return None;
        }
        self.ptr.store(p, Ordering::Release);
        Some(p)
    }

    /// The code a forwarded call returns when the symbol cannot be reached: no real library
    /// → the ncid is simply unknown (NC_EBADID); a real library without this function →
    /// NC_ENOTBUILT.
    pub fn missing_code(&self) -> c_int {
        if real_available() { NC_ENOTBUILT } else { NC_EBADID }
    }
}

/// Calls the real library's function of this name: `Ok(status)`, or `Err(code)` when it
/// cannot be reached (see `Sym::missing_code`).
macro_rules! real_call {
    ($name:ident($($arg:expr),*): ($($ty:ty),*)) => {{
        static SYM: $crate::ffi::route::Sym = $crate::ffi::route::Sym::new(
            // SAFETY: a literal with one trailing NUL.
            unsafe { ::std::ffi::CStr::from_bytes_with_nul_unchecked(concat!(stringify!($name), "\0").as_bytes()) });
        match SYM.get() {
            // SAFETY: the real library's function of this name has exactly this C prototype.
            Some(p) => Ok(unsafe {
                ::std::mem::transmute::<*mut ::std::ffi::c_void, unsafe extern "C" fn($($ty),*) -> ::std::ffi::c_int>(p)($($arg),*)
            }),
            None => Err(SYM.missing_code()),
        }
    }};
}
pub(crate) use real_call;

/// A global setter's share for the real library (passthrough.md §9): `Some(status)` when a
/// real library is behind us and has the function, else `None` (nothing to forward).
macro_rules! also_real {
    ($name:ident($($arg:expr),*): ($($ty:ty),*)) => {{
        if $crate::ffi::route::passthrough() && $crate::ffi::route::real_available() {
            $crate::ffi::route::real_call!($name($($arg),*): ($($ty),*)).ok()
        } else {
            None
        }
    }};
}
pub(crate) use also_real;

/// A global setter's share for the real library: its failure becomes ours.
pub(crate) fn real_share(status: Option<c_int>) -> crate::error::Result<()> {
    match status {
        Some(status) if status != 0 => Err(crate::error::Error::from_code(status)),
        _ => Ok(()),
    }
}

// ---- paths ----------------------------------------------------------------------------------

/// Is this dataset name ours (passthrough.md §4)? `creating`: a plain path is never ours.
pub fn path_is_ours(name: &[u8], creating: bool) -> bool {
    let Ok(name) = std::str::from_utf8(name) else { return false };
    match crate::url::parse(name) {
        Ok(Some(spec)) if spec.is_explicit() || spec.driver.is_some() => true,
        Ok(Some(spec)) => !creating && crate::url::probe(&spec.path).is_some(),
        // A URL naming Zarr whose fragment we reject is still ours: we report the error.
        Err(_) => true,
        Ok(None) => false,
    }
}

/// `path_is_ours` on a C string; NULL is never ours (the real library reports it).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
pub unsafe fn path_ptr_is_ours(path: *const c_char, creating: bool) -> bool {
    // SAFETY: NULL checked; otherwise the caller's NUL-terminated dataset name.
    !path.is_null() && path_is_ours(unsafe { CStr::from_ptr(path) }.to_bytes(), creating)
}

// ---- forwarded opens and closes -------------------------------------------------------------

pub type OpenFn = unsafe extern "C" fn(*const c_char, c_int, *mut c_int) -> c_int;

/// After a forwarded open/create succeeded: claim the slot for the real library, or — if it
/// handed out one of ours — close its dataset again and fail closed with NC_ENFILE.
///
/// # Safety
/// `ncidp` is NULL or the caller's `int*` the real library wrote the new ncid to.
pub unsafe fn claim_real(status: c_int, ncidp: *mut c_int, creating: bool) -> c_int {
    if status != 0 || ncidp.is_null() {
        return status;
    }
    // SAFETY: the real library just wrote the new ncid here.
    let ncid = unsafe { *ncidp };
    if crate::registry::claim_real(ncid) {
        return status;
    }
    log(&format!("the real netcdf-c returned ncid {ncid:#x}, a slot of ours; closing it (NC_ENFILE)"));
    static CLOSE: Sym = Sym::new(c"nc_close");
    static ABORT: Sym = Sym::new(c"nc_abort");
    if let Some(p) = if creating { ABORT.get() } else { CLOSE.get() } {
        // SAFETY: int nc_close(int) / int nc_abort(int).
        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(c_int) -> c_int>(p)(ncid) };
    }
    NC_ENFILE
}

/// After a forwarded close/abort: the slot is free again.
pub fn release_real(ncid: c_int, status: c_int) -> c_int {
    if status == 0 {
        crate::registry::release_real(ncid);
        crate::lazy::copies::real_closed(ncid);
    }
    status
}

/// `NCTRACING=2`: one line per forwarded call (never on by default: this is the hot path).
pub fn trace_forward(name: &str, ncid: c_int) {
    crate::trace::emit(2, &format!("forward {name}(ncid={ncid:#x}) to the real netCDF library"));
}

#[cfg(test)]
mod tests {
    use super::path_is_ours;

    #[test]
    fn classification_follows_passthrough_spec() {
        let ours = |s: &str, creating: bool| path_is_ours(s.as_bytes(), creating);
        assert!(ours("file:///tmp/x#mode=nczarr,file", false));
        assert!(ours("file:///tmp/x#mode=zarr,zip", true));
        assert!(ours("file:///tmp/x#zarr", true));
        assert!(ours("s3://bucket/key", false));
        assert!(!ours("http://server/dods/data", false));
        assert!(!ours("https://host/x#mode=dap4", false));
        assert!(!ours("https://host/x#mode=bytes", false));
        assert!(!ours("file:///tmp/x#mode=nczarr,bytes", false));
        assert!(!ours("/etc/hostname", false));
        assert!(!ours("/nonexistent/file.nc", false));
        let dir = std::env::temp_dir().join(format!("nczarr-route-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".zgroup"), b"{\"zarr_format\":2}").unwrap();
        let plain = dir.to_str().unwrap();
        assert!(ours(plain, false), "a directory holding Zarr metadata");
        assert!(!ours(plain, true), "never Zarr by inference on create");
        assert!(ours(&format!("file://{plain}"), false), "file: URL without mode, Zarr inside");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

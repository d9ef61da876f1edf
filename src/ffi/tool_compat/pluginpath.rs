//! `ncaux_plugin_path_*`: netcdf-c's helpers for plugin-path lists (netcdf_aux.h, 4.9.3+):
//! parsing a path string into an `NCPluginList`, joining one back, growing and freeing one, and
//! the string forms netcdf-fortran uses (always `;`-separated). Every vector and name they hand
//! out is malloc'ed, for the caller to free or to give to `ncaux_plugin_path_clear`.

use super::text;
use crate::error::{Kind, Result, err};
use crate::ffi::consts::NCPluginList;
use crate::ffi::filters::{fill_plugin_list, plugin_entries};
use nczarr_macros::export;
use std::ffi::{c_char, c_int, c_void};

/// A separator argument: `'\0'` means the platform's (`:` here).
fn separator(sep: c_char) -> char {
    if sep == 0 { ':' } else { sep as u8 as char }
}

/// The names of a list, NULL entries as empty ones (netcdf-c joins them so).
///
/// # Safety
/// `list.dirs` holds `list.ndirs` entries, each NULL or NUL-terminated.
unsafe fn names(list: &NCPluginList) -> Result<Vec<String>> {
    // SAFETY: the caller's contract.
    Ok(unsafe { plugin_entries(list) }?.into_iter().map(Option::unwrap_or_default).collect())
}

/// Parses `path` into `dirs` (its vector allocated when NULL, else the caller's written).
///
/// # Safety
/// `dirs` is NULL or a valid list; see `fill_plugin_list`.
unsafe fn parse_into(path: &[u8], sep: c_char, dirs: *mut NCPluginList) -> Result<()> {
    // SAFETY: NULL checked; the caller's list.
    let Some(list) = (unsafe { dirs.as_mut() }) else { return err(Kind::Invalid, "NULL plugin list") };
    // netcdf-c reads the counted text only up to a NUL in it.
    let path = path.split(|&b| b == 0).next().unwrap_or_default();
    if path.is_empty() {
        list.ndirs = 0;
        return Ok(());
    }
    let pieces = crate::codec::plugin::split_path(&String::from_utf8_lossy(path), separator(sep));
    // SAFETY: as this function's contract.
    unsafe { fill_plugin_list(list, &pieces) }
}

#[export(trace(pathlen, sep))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_parsen(pathlen: usize, pathlist: *const c_char, sep: c_char, dirs: *mut NCPluginList) -> c_int {
    if dirs.is_null() {
        return err(Kind::Invalid, "NULL plugin list");
    }
    let path: &[u8] = if pathlist.is_null() || pathlen == 0 {
        &[]
    } else {
        // SAFETY: `pathlen` readable bytes (the caller's contract); a length no memory could
        // hold is refused by `slice`.
        unsafe { crate::ffi::slice(pathlist as *const u8, pathlen) }?
    };
    // SAFETY: a non-NULL list.
    unsafe { parse_into(path, sep, dirs) }
}

#[export(trace(sep))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_parse(pathlist: *const c_char, sep: c_char, dirs: *mut NCPluginList) -> c_int {
    // SAFETY: NULL or NUL-terminated.
    let path = unsafe { text(pathlist) }.unwrap_or_default();
    // SAFETY: the caller's list (NULL refused there).
    unsafe { parse_into(path, sep, dirs) }
}

#[export(trace(sep))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_tostring(dirs: *const NCPluginList, sep: c_char, catp: *mut *mut c_char) -> c_int {
    // SAFETY: NULL checked; the caller's list.
    let Some(list) = (unsafe { dirs.as_ref() }) else { return err(Kind::Invalid, "NULL plugin list") };
    // SAFETY: the caller's list.
    let joined = unsafe { names(list) }?.join(&separator(sep).to_string());
    if !catp.is_null() {
        // SAFETY: a non-NULL out-pointer.
        unsafe { *catp = crate::ffi::malloc_string(joined.as_bytes())? };
    }
    Ok(())
}

#[export(trace())]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_clear(dirs: *mut NCPluginList) -> c_int {
    // SAFETY: NULL or the caller's list, whose vector and names were malloc'ed.
    if let Some(list) = unsafe { dirs.as_mut() }
        && list.ndirs > 0
        && !list.dirs.is_null()
    {
        for i in 0..list.ndirs {
            // SAFETY: `ndirs` malloc'ed (or NULL) entries.
            unsafe {
                libc::free(*list.dirs.add(i) as *mut c_void);
                *list.dirs.add(i) = std::ptr::null_mut();
            }
        }
        // SAFETY: the malloc'ed vector.
        unsafe { libc::free(list.dirs as *mut c_void) };
        list.dirs = std::ptr::null_mut();
        list.ndirs = 0;
    }
    Ok(())
}

#[export(trace())]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_reclaim(dirs: *mut NCPluginList) -> c_int {
    // SAFETY: as for clear; the list itself was malloc'ed (netcdf-c's contract).
    unsafe {
        ncaux_plugin_path_clear(dirs);
        libc::free(dirs as *mut c_void);
    }
    Ok(())
}

/// Adds `dir` at the front or the back of a list, reallocating its vector.
///
/// # Safety
/// `dirs` NULL or a valid list with a malloc'ed vector; `dir` NULL or NUL-terminated.
unsafe fn insert(dirs: *mut NCPluginList, dir: *const c_char, front: bool) -> Result<()> {
    // SAFETY: NULL checked; the caller's list.
    let (Some(list), Some(name)) = (unsafe { dirs.as_mut() }, unsafe { text(dir) }) else {
        return err(Kind::Invalid, "NULL plugin list or directory");
    };
    let n = if list.dirs.is_null() { 0 } else { list.ndirs };
    // SAFETY: calloc of n+1 pointers.
    let grown = unsafe { libc::calloc(n + 1, std::mem::size_of::<*mut c_char>()) } as *mut *mut c_char;
    if grown.is_null() {
        return err(Kind::NoMem, "plugin list");
    }
    let at = if front { 0 } else { n };
    // SAFETY: the old vector's `n` entries move into the new one, which has room for n+1.
    unsafe {
        if n > 0 {
            std::ptr::copy_nonoverlapping(list.dirs, grown.add(if front { 1 } else { 0 }), n);
        }
        libc::free(list.dirs as *mut c_void);
        *grown.add(at) = crate::ffi::malloc_string(name)?;
    }
    list.dirs = grown;
    list.ndirs = n + 1;
    Ok(())
}

#[export(trace())]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_append(dirs: *mut NCPluginList, dir: *const c_char) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { insert(dirs, dir, false) }
}

#[export(trace())]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_prepend(dirs: *mut NCPluginList, dir: *const c_char) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { insert(dirs, dir, true) }
}

/// The plugin path as netcdf-fortran's string: `;`-separated.
fn path_string() -> String {
    crate::codec::plugin::path().join(";")
}

#[export(on_panic = -1)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_stringlen() -> c_int {
    c_int::try_from(path_string().len()).unwrap_or(-1)
}

#[export(trace(pathlen))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_stringget(pathlen: c_int, path: *mut c_char) -> c_int {
    if pathlen <= 0 || path.is_null() {
        return err(Kind::Invalid, "no room for the plugin path");
    }
    let s = path_string();
    let room = pathlen as usize;
    // strncpy's contract, as netcdf-c: at most `pathlen` bytes, NUL-padded, unterminated when
    // the path fills the room.
    // SAFETY: the caller's `pathlen` writable bytes.
    unsafe {
        let n = s.len().min(room);
        std::ptr::copy_nonoverlapping(s.as_ptr(), path as *mut u8, n);
        std::ptr::write_bytes((path as *mut u8).add(n), 0, room - n);
    }
    Ok(())
}

#[export(trace(pathlen))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_plugin_path_stringset(pathlen: c_int, path: *const c_char) -> c_int {
    if pathlen <= 0 || path.is_null() {
        return err(Kind::Invalid, "no plugin path");
    }
    let mut list = NCPluginList { ndirs: 0, dirs: std::ptr::null_mut() };
    // SAFETY: `pathlen` readable bytes (the caller's contract); a local list.
    let set = unsafe {
        let bytes = std::slice::from_raw_parts(path as *const u8, pathlen as usize);
        match parse_into(bytes, b';' as c_char, &mut list) {
            Ok(()) => match crate::ffi::filters::nc_plugin_path_set(&mut list) {
                0 => Ok(()),
                status => Err(crate::error::Error::from_code(status)),
            },
            Err(e) => Err(e),
        }
    };
    // SAFETY: the local list, filled by parse_into.
    unsafe { ncaux_plugin_path_clear(&mut list) };
    set
}

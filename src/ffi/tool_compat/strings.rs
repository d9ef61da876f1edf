//! String and path helpers the tools call: shell unescaping, path canonicalisation, BSD
//! `strlcat`, UTF-8 to UTF-16.

#![allow(non_snake_case, non_camel_case_types, clippy::upper_case_acronyms)]

use super::text;
use crate::ffi::malloc_string;
use nczarr_macros::export;
use std::ffi::{c_char, c_int, c_ushort, c_void};

/// Copy of a string with shell backslash escapes removed.
#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn NC_shellUnescape(esc: *const c_char) -> *mut c_char {
    // SAFETY: see `text`.
    let Some(s) = (unsafe { text(esc) }) else { return std::ptr::null_mut() };
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\' && i + 1 < s.len() {
            i += 1;
        }
        out.push(s[i]);
        i += 1;
    }
    malloc_string(&out).unwrap_or(std::ptr::null_mut())
}

#[export(on_panic = crate::ffi::consts::NC_EINTERNAL)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn NCpathcanonical(srcpath: *const c_char, canonp: *mut *mut c_char) -> c_int {
    // SAFETY: see `text`.
    let Some(s) = (unsafe { text(srcpath) }) else { return -36 };
    let copy = match malloc_string(s) {
        Ok(p) => p,
        Err(_) => return -61,
    };
    // SAFETY: optional out-pointer.
    unsafe { crate::ffi::put(canonp, copy) };
    0
}

/// BSD strlcat (Debian 12's glibc lacks it; its libnetcdf exported one).
#[export(on_panic = 0)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn strlcat(dst: *mut c_char, src: *const c_char, siz: usize) -> usize {
    // SAFETY: `dst` holds a NUL-terminated string within `siz` bytes (or siz bytes of
    // garbage, handled as in BSD), `src` is NUL-terminated.
    unsafe {
        let slen = libc::strlen(src);
        let mut dlen = 0;
        while dlen < siz && *dst.add(dlen) != 0 {
            dlen += 1;
        }
        if dlen == siz {
            return siz + slen;
        }
        let room = siz - dlen - 1;
        let n = slen.min(room);
        std::ptr::copy_nonoverlapping(src, dst.add(dlen), n);
        *dst.add(dlen + n) = 0;
        dlen + slen
    }
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc_utf8_to_utf16(s8: *const u8, utf16p: *mut *mut c_ushort, len16p: *mut usize) -> c_int {
    // SAFETY: see `text`.
    let Some(bytes) = (unsafe { text(s8 as *const c_char) }) else { return -36 };
    let Ok(s) = std::str::from_utf8(bytes) else { return -59 };
    let units: Vec<u16> = s.encode_utf16().collect();
    // SAFETY: malloc'd array of units + a terminating 0.
    unsafe {
        let p = libc::malloc((units.len() + 1) * 2) as *mut c_ushort;
        if p.is_null() {
            return -61;
        }
        std::ptr::copy_nonoverlapping(units.as_ptr(), p, units.len());
        *p.add(units.len()) = 0;
        if utf16p.is_null() {
            libc::free(p as *mut c_void);
        } else {
            *utf16p = p;
        }
        crate::ffi::put(len16p, units.len());
    }
    0
}

//! netcdf-c's `NClist`, a growable array of pointers the tools build filter lists in.

#![allow(non_snake_case, non_camel_case_types, clippy::upper_case_acronyms)]

use nczarr_macros::export;
use std::ffi::{c_int, c_void};

/// netcdf-c's growable pointer list.
#[repr(C)]
pub struct NClist {
    alloc: usize,
    length: usize,
    content: *mut *mut c_void,
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nclistnew() -> *mut NClist {
    // SAFETY: zeroed allocation of the C struct.
    unsafe { libc::calloc(1, std::mem::size_of::<NClist>()) as *mut NClist }
}

#[export(on_panic = 0)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nclistpush(l: *mut NClist, elem: *mut c_void) -> c_int {
    if l.is_null() {
        return 0;
    }
    // SAFETY: `l` came from `nclistnew`; content grows with realloc.
    unsafe {
        let list = &mut *l;
        if list.length >= list.alloc {
            let new_alloc = (list.alloc * 2).max(16);
            let p = libc::realloc(list.content as *mut c_void, new_alloc * std::mem::size_of::<*mut c_void>()) as *mut *mut c_void;
            if p.is_null() {
                return 0;
            }
            list.content = p;
            list.alloc = new_alloc;
        }
        *list.content.add(list.length) = elem;
        list.length += 1;
    }
    1
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nclistremove(l: *mut NClist, i: usize) -> *mut c_void {
    if l.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: `l` came from `nclistnew`; `i` checked against the length.
    unsafe {
        let list = &mut *l;
        if i >= list.length {
            return std::ptr::null_mut();
        }
        let elem = *list.content.add(i);
        std::ptr::copy(list.content.add(i + 1), list.content.add(i), list.length - i - 1);
        list.length -= 1;
        elem
    }
}

#[export(on_panic = 0)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nclistfree(l: *mut NClist) -> c_int {
    if !l.is_null() {
        // SAFETY: `l` and its content came from calloc/realloc.
        unsafe {
            libc::free((*l).content as *mut c_void);
            libc::free(l as *mut c_void);
        }
    }
    1
}

//! `ncaux` helpers: filter-spec parsing for ncgen/nccopy `-F` and type-class alignment.

#![allow(non_snake_case, non_camel_case_types, clippy::upper_case_acronyms)]

use super::text;
use crate::codec;
use nczarr_macros::export;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// Parses one filter parameter: integers (also negative, as their bit pattern), floats with
/// an `f` suffix (one word), doubles and 64-bit integers (`d`, `l`/`ll` suffixes: two words).
fn parse_param(p: &str, out: &mut Vec<c_uint>) -> bool {
    let p = p.trim();
    let lower = p.to_ascii_lowercase();
    if let Some(v) = lower.strip_suffix("ull").or_else(|| lower.strip_suffix("ll")).or_else(|| lower.strip_suffix('l')) {
        let Ok(x) = v.parse::<i128>() else { return false };
        let bits = x as u64;
        out.push(bits as u32);
        out.push((bits >> 32) as u32);
        return true;
    }
    if let Some(v) = lower.strip_suffix('d') {
        let Ok(x) = v.parse::<f64>() else { return false };
        let bits = x.to_bits();
        out.push(bits as u32);
        out.push((bits >> 32) as u32);
        return true;
    }
    if let Some(v) = lower.strip_suffix('f') {
        let Ok(x) = v.parse::<f32>() else { return false };
        out.push(x.to_bits());
        return true;
    }
    match lower.parse::<i64>() {
        Ok(x) if x >= i32::MIN as i64 && x <= u32::MAX as i64 => {
            out.push(x as u32);
            true
        }
        _ => match lower.parse::<f32>() {
            Ok(x) => {
                out.push(x.to_bits());
                true
            }
            Err(_) => false,
        },
    }
}

#[export(on_panic = crate::ffi::consts::NC_EINTERNAL)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_h5filterspec_parselist(
    txt0: *const c_char,
    formatp: *mut c_int,
    nspecsp: *mut usize,
    vectorp: *mut *mut *mut crate::ffi::consts::NC_H5_Filterspec,
) -> c_int {
    // SAFETY: see `text`.
    let Some(raw) = (unsafe { text(txt0) }) else { return -36 };
    let txt = String::from_utf8_lossy(raw).into_owned();
    let mut specs: Vec<(u32, Vec<u32>)> = Vec::new();
    for spec in txt.split('|').filter(|s| !s.trim().is_empty()) {
        let mut parts = spec.split(',');
        let id_text = parts.next().unwrap_or("").trim();
        let id = match id_text.parse::<u32>() {
            Ok(id) => id,
            Err(_) => match id_text.to_ascii_lowercase().as_str() {
                "deflate" | "zlib" => codec::DEFLATE,
                "shuffle" => codec::SHUFFLE,
                "fletcher32" => codec::FLETCHER32,
                "szip" => codec::SZIP,
                "bzip2" | "bz2" => codec::BZIP2,
                "zstd" | "zstandard" => codec::ZSTD,
                "blosc" => codec::BLOSC,
                _ => return -132,
            },
        };
        let mut params = Vec::new();
        for p in parts {
            if !parse_param(p, &mut params) {
                return -132;
            }
        }
        specs.push((id, params));
    }
    // SAFETY: C allocations the caller frees with ncaux_h5filterspec_free and free().
    unsafe {
        let vec = libc::calloc(specs.len().max(1), std::mem::size_of::<*mut crate::ffi::consts::NC_H5_Filterspec>())
            as *mut *mut crate::ffi::consts::NC_H5_Filterspec;
        if vec.is_null() {
            return -61;
        }
        for (i, (id, params)) in specs.iter().enumerate() {
            let spec =
                libc::calloc(1, std::mem::size_of::<crate::ffi::consts::NC_H5_Filterspec>()) as *mut crate::ffi::consts::NC_H5_Filterspec;
            let pv = libc::calloc(params.len().max(1), std::mem::size_of::<c_uint>()) as *mut c_uint;
            if spec.is_null() || pv.is_null() {
                return -61;
            }
            std::ptr::copy_nonoverlapping(params.as_ptr(), pv, params.len());
            (*spec).filterid = *id;
            (*spec).nparams = params.len();
            (*spec).params = pv;
            *vec.add(i) = spec;
        }
        crate::ffi::put(formatp, 2);
        crate::ffi::put(nspecsp, specs.len());
        if vectorp.is_null() {
            for i in 0..specs.len() {
                ncaux_h5filterspec_free(*vec.add(i));
            }
            libc::free(vec as *mut c_void);
        } else {
            *vectorp = vec;
        }
    }
    0
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_h5filterspec_free(f: *mut crate::ffi::consts::NC_H5_Filterspec) {
    if f.is_null() {
        return;
    }
    // SAFETY: allocated by ncaux_h5filterspec_parselist.
    unsafe {
        libc::free((*f).params as *mut c_void);
        libc::free(f as *mut c_void);
    }
}

/// Alignment of a netCDF type class in C memory (ncgen lays out compound data with it).
#[export(on_panic = crate::ffi::consts::NC_EINTERNAL)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_class_alignment(ncclass: c_int, alignp: *mut usize) -> c_int {
    let align = match ncclass {
        1 | 2 | 7 => 1,
        3 | 8 => 2,
        4 | 5 | 9 => 4,
        6 | 10 | 11 => 8,
        12 => std::mem::align_of::<*const c_char>(),
        13 => std::mem::align_of::<crate::ffi::consts::nc_vlen_t>(),
        14 => 1,
        _ => return -36,
    };
    // SAFETY: optional out-pointer.
    unsafe { crate::ffi::put(alignp, align) };
    0
}

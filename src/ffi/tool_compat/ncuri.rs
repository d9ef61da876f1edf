//! netcdf-c's URL parser (`NCURI`), with its struct layout and its quirks: ncdump and nccopy
//! parse dataset names with it.

#![allow(non_snake_case, non_camel_case_types, clippy::upper_case_acronyms)]

use super::text;
use crate::ffi::malloc_string;
use nczarr_macros::export;
use std::ffi::{CStr, c_char, c_int, c_void};

/// The URL layout of netcdf-c 4.9 (`ncuri.h`).
#[repr(C)]
pub struct NCURI {
    pub uri: *mut c_char,
    pub protocol: *mut c_char,
    pub user: *mut c_char,
    pub password: *mut c_char,
    pub host: *mut c_char,
    pub port: *mut c_char,
    pub path: *mut c_char,
    pub query: *mut c_char,
    pub fragment: *mut c_char,
    pub fraglist: *mut *mut c_char,
    pub querylist: *mut *mut c_char,
}

struct ParsedUrl {
    protocol: String,
    user: Option<String>,
    password: Option<String>,
    host: Option<String>,
    port: Option<String>,
    path: String,
    query: Option<String>,
    fragment: Option<String>,
}

fn parse_url(s: &str) -> Option<ParsedUrl> {
    let (protocol, rest) = s.split_once("://").or_else(|| s.strip_prefix("file:").map(|r| ("file", r)))?;
    if protocol.is_empty() || !protocol.chars().all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.') {
        return None;
    }
    let (rest, fragment) = match rest.split_once('#') {
        Some((a, f)) => (a, Some(f.to_string())),
        None => (rest, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((a, q)) => (a, Some(q.to_string())),
        None => (rest, None),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, String::new()),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (user, password) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((a, b)) => (Some(a.to_string()), Some(b.to_string())),
            None => (Some(u.to_string()), None),
        },
        None => (None, None),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => (h, Some(p.to_string())),
        _ => (hostport, None),
    };
    Some(ParsedUrl {
        protocol: protocol.to_string(),
        user,
        password,
        host: (!host.is_empty()).then(|| host.to_string()),
        port,
        path,
        query,
        fragment,
    })
}

fn dup(s: Option<&str>) -> *mut c_char {
    s.and_then(|s| malloc_string(s.as_bytes()).ok()).unwrap_or(std::ptr::null_mut())
}

/// An envv list (key, value, ..., NULL) of `&`-separated `key[=value]` pairs.
fn envv(pairs: Option<&str>) -> *mut *mut c_char {
    let Some(pairs) = pairs else { return std::ptr::null_mut() };
    let mut items: Vec<*mut c_char> = Vec::new();
    for p in pairs.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        items.push(dup(Some(k)));
        items.push(dup(Some(v)));
    }
    items.push(std::ptr::null_mut());
    // SAFETY: calloc'd array of pointers, filled below.
    unsafe {
        let arr = libc::calloc(items.len(), std::mem::size_of::<*mut c_char>()) as *mut *mut c_char;
        if arr.is_null() {
            return arr;
        }
        std::ptr::copy_nonoverlapping(items.as_ptr(), arr, items.len());
        arr
    }
}

fn envv_free(list: *mut *mut c_char) {
    if list.is_null() {
        return;
    }
    // SAFETY: a NULL-terminated list from `envv`.
    unsafe {
        let mut i = 0;
        while !(*list.add(i)).is_null() {
            libc::free(*list.add(i) as *mut c_void);
            i += 1;
        }
        libc::free(list as *mut c_void);
    }
}

fn envv_text(list: *mut *mut c_char) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if list.is_null() {
        return out;
    }
    // SAFETY: a NULL-terminated list of (key, value) pairs.
    unsafe {
        let mut i = 0;
        while !(*list.add(i)).is_null() {
            let k = String::from_utf8_lossy(CStr::from_ptr(*list.add(i)).to_bytes()).into_owned();
            let vp = *list.add(i + 1);
            let v = if vp.is_null() { String::new() } else { String::from_utf8_lossy(CStr::from_ptr(vp).to_bytes()).into_owned() };
            out.push((k, v));
            if vp.is_null() {
                break;
            }
            i += 2;
        }
    }
    out
}

#[export(on_panic = crate::ffi::consts::NC_EINTERNAL)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncuriparse(s: *const c_char, ncurip: *mut *mut NCURI) -> c_int {
    // SAFETY: see `text`.
    let Some(raw) = (unsafe { text(s) }) else { return -36 };
    let raw = String::from_utf8_lossy(raw).into_owned();
    let Some(u) = parse_url(&raw) else {
        // SAFETY: optional out-pointer.
        unsafe { crate::ffi::put(ncurip, std::ptr::null_mut()) };
        return -74;
    };
    let uri = Box::new(NCURI {
        uri: dup(Some(&raw)),
        protocol: dup(Some(&u.protocol)),
        user: dup(u.user.as_deref()),
        password: dup(u.password.as_deref()),
        host: dup(u.host.as_deref()),
        port: dup(u.port.as_deref()),
        path: dup(Some(&u.path)),
        query: dup(u.query.as_deref()),
        fragment: dup(u.fragment.as_deref()),
        fraglist: envv(u.fragment.as_deref()),
        querylist: envv(u.query.as_deref()),
    });
    // SAFETY: optional out-pointer; freed by `ncurifree`.
    unsafe { crate::ffi::put(ncurip, Box::into_raw(uri)) };
    0
}

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncurifree(uri: *mut NCURI) {
    if uri.is_null() {
        return;
    }
    // SAFETY: `uri` came from `ncuriparse`.
    let u = unsafe { Box::from_raw(uri) };
    for p in [u.uri, u.protocol, u.user, u.password, u.host, u.port, u.path, u.query, u.fragment] {
        // SAFETY: malloc'd or NULL.
        unsafe { libc::free(p as *mut c_void) };
    }
    envv_free(u.fraglist);
    envv_free(u.querylist);
}

const NCURIPWD: c_int = 0x1;
const NCURIQUERY: c_int = 0x2;
const NCURIFRAG: c_int = 0x4;
const NCURIENCODE: c_int = 0x8;

#[export]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncuribuild(uri: *mut NCURI, prefix: *const c_char, suffix: *const c_char, flags: c_int) -> *mut c_char {
    if uri.is_null() {
        return std::ptr::null_mut();
    }
    let _ = NCURIENCODE;
    // SAFETY: `uri` came from `ncuriparse`; string fields are NULL or NUL-terminated.
    let u = unsafe { &*uri };
    // SAFETY: as above: the NCURI's string fields.
    let field = |p: *mut c_char| unsafe { text(p) }.map(|b| String::from_utf8_lossy(b).into_owned());
    let mut out = String::new();
    out.push_str(&field(u.protocol).unwrap_or_default());
    out.push_str("://");
    if flags & NCURIPWD != 0
        && let Some(user) = field(u.user)
    {
        out.push_str(&user);
        if let Some(pw) = field(u.password) {
            out.push(':');
            out.push_str(&pw);
        }
        out.push('@');
    }
    out.push_str(&field(u.host).unwrap_or_default());
    if let Some(port) = field(u.port) {
        out.push(':');
        out.push_str(&port);
    }
    // SAFETY: see `text`.
    if let Some(p) = unsafe { text(prefix) } {
        out.push_str(&String::from_utf8_lossy(p));
    }
    out.push_str(&field(u.path).unwrap_or_default());
    // SAFETY: see `text`.
    if let Some(s) = unsafe { text(suffix) } {
        out.push_str(&String::from_utf8_lossy(s));
    }
    let join = |list: Vec<(String, String)>| {
        list.into_iter().map(|(k, v)| if v.is_empty() { k } else { format!("{k}={v}") }).collect::<Vec<_>>().join("&")
    };
    if flags & NCURIQUERY != 0 && !u.querylist.is_null() {
        let q = join(envv_text(u.querylist));
        if !q.is_empty() {
            out.push('?');
            out.push_str(&q);
        }
    }
    if flags & NCURIFRAG != 0 && !u.fraglist.is_null() {
        let f = join(envv_text(u.fraglist));
        if !f.is_empty() {
            out.push('#');
            out.push_str(&f);
        }
    }
    malloc_string(out.as_bytes()).unwrap_or(std::ptr::null_mut())
}

#[export(on_panic = crate::ffi::consts::NC_EINTERNAL)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncuriappendfragmentkey(uri: *mut NCURI, key: *const c_char, value: *const c_char) -> c_int {
    if uri.is_null() {
        return -36;
    }
    // SAFETY: see `text`; `uri` came from `ncuriparse`.
    let (k, v) = unsafe { (text(key), text(value)) };
    let Some(k) = k else { return -36 };
    // SAFETY: as above: an NCURI from `ncuriparse`, which the caller owns.
    let u = unsafe { &mut *uri };
    let mut list = envv_text(u.fraglist);
    let k = String::from_utf8_lossy(k).into_owned();
    let v = v.map(|v| String::from_utf8_lossy(v).into_owned()).unwrap_or_default();
    match list.iter_mut().find(|(lk, _)| *lk == k) {
        Some(e) => e.1 = v,
        None => list.push((k, v)),
    }
    let text = list.iter().map(|(k, v)| if v.is_empty() { k.clone() } else { format!("{k}={v}") }).collect::<Vec<_>>().join("&");
    envv_free(u.fraglist);
    // SAFETY: malloc'd field.
    unsafe { libc::free(u.fragment as *mut c_void) };
    u.fraglist = envv(Some(&text));
    u.fragment = dup(Some(&text));
    0
}

/// netcdf-c 4.9's "is this a URL" test; `basenamep` gets the last path segment minus extension.
#[export(on_panic = 0)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nc__testurl(path: *const c_char, basenamep: *mut *mut c_char) -> c_int {
    // SAFETY: see `text`.
    let Some(raw) = (unsafe { text(path) }) else { return 0 };
    let Some(u) = parse_url(&String::from_utf8_lossy(raw)) else { return 0 };
    if !basenamep.is_null() {
        let seg = u.path.rsplit('/').next().unwrap_or("");
        let base = match seg.rfind('.') {
            Some(i) if i > 0 => &seg[..i],
            _ => seg,
        };
        // SAFETY: non-NULL out-pointer.
        unsafe { *basenamep = dup(Some(base)) };
    }
    1
}

/// The 4.10 form adds whether the URL names a local file.
#[export(on_panic = 0)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn NC__testurl(path: *const c_char, basenamep: *mut *mut c_char, isfilep: *mut c_int) -> c_int {
    // SAFETY: forwards the caller's pointers under this function's own contract.
    let is_url = unsafe { nc__testurl(path, basenamep) };
    // SAFETY: see `text`.
    let is_file = unsafe { text(path) }.is_some_and(|p| p.starts_with(b"file:"));
    // SAFETY: optional out-pointer.
    unsafe { crate::ffi::put(isfilep, is_file as c_int) };
    is_url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = parse_url("file:///tmp/x.file#mode=nczarr,file").unwrap();
        assert_eq!(u.protocol, "file");
        assert_eq!(u.path, "/tmp/x.file");
        assert_eq!(u.fragment.as_deref(), Some("mode=nczarr,file"));
        assert!(parse_url("/tmp/plain.nc").is_none());
    }
}

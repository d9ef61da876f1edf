//! netcdf-c internals that Debian's ncdump, ncgen and nccopy import from libnetcdf.so.19.
//!
//! They matter only for the drop-in library: the tools are linked BIND_NOW, so every one of
//! these must exist for them to start, and their struct layouts are those of netcdf-c 4.9.x.
//! The preload library does not export them (the tools take the real library's).

#![allow(non_snake_case, non_camel_case_types)]

use super::malloc_string;
use std::ffi::{CStr, c_char, c_int, c_uint, c_ushort, c_void};

unsafe fn text<'a>(p: *const c_char) -> Option<&'a [u8]> {
    // SAFETY: NULL or NUL-terminated (callers' contract).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// Copy of a string with shell backslash escapes removed.
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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn NCpathcanonical(srcpath: *const c_char, canonp: *mut *mut c_char) -> c_int {
    // SAFETY: see `text`.
    let Some(s) = (unsafe { text(srcpath) }) else { return -36 };
    let copy = match malloc_string(s) {
        Ok(p) => p,
        Err(_) => return -61,
    };
    // SAFETY: optional out-pointer.
    unsafe { super::put(canonp, copy) };
    0
}

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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncuriparse(s: *const c_char, ncurip: *mut *mut NCURI) -> c_int {
    // SAFETY: see `text`.
    let Some(raw) = (unsafe { text(s) }) else { return -36 };
    let raw = String::from_utf8_lossy(raw).into_owned();
    let Some(u) = parse_url(&raw) else {
        // SAFETY: optional out-pointer.
        unsafe { super::put(ncurip, std::ptr::null_mut()) };
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
    unsafe { super::put(ncurip, Box::into_raw(uri)) };
    0
}

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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncuribuild(uri: *mut NCURI, prefix: *const c_char, suffix: *const c_char, flags: c_int) -> *mut c_char {
    if uri.is_null() {
        return std::ptr::null_mut();
    }
    let _ = NCURIENCODE;
    // SAFETY: `uri` came from `ncuriparse`; string fields are NULL or NUL-terminated.
    let u = unsafe { &*uri };
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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncuriappendfragmentkey(uri: *mut NCURI, key: *const c_char, value: *const c_char) -> c_int {
    if uri.is_null() {
        return -36;
    }
    // SAFETY: see `text`; `uri` came from `ncuriparse`.
    let (k, v) = unsafe { (text(key), text(value)) };
    let Some(k) = k else { return -36 };
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
#[unsafe(no_mangle)]
pub unsafe extern "C" fn NC__testurl(path: *const c_char, basenamep: *mut *mut c_char, isfilep: *mut c_int) -> c_int {
    // SAFETY: forwards the caller's pointers under this function's own contract.
    let is_url = unsafe { nc__testurl(path, basenamep) };
    // SAFETY: see `text`.
    let is_file = unsafe { text(path) }.is_some_and(|p| p.starts_with(b"file:"));
    // SAFETY: optional out-pointer.
    unsafe { super::put(isfilep, is_file as c_int) };
    is_url
}

/// netcdf-c's growable pointer list.
#[repr(C)]
pub struct NClist {
    alloc: usize,
    length: usize,
    content: *mut *mut c_void,
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn nclistnew() -> *mut NClist {
    // SAFETY: zeroed allocation of the C struct.
    unsafe { libc::calloc(1, std::mem::size_of::<NClist>()) as *mut NClist }
}

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

static LOGGING: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncsetlogging(tf: c_int) -> c_int {
    LOGGING.swap(tf, std::sync::atomic::Ordering::Relaxed)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncsetloglevel(level: c_int) -> c_int {
    LOGGING.swap(level, std::sync::atomic::Ordering::Relaxed)
}

/// BSD strlcat (Debian 12's glibc lacks it; its libnetcdf exported one).
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
        super::put(len16p, units.len());
    }
    0
}

// ---- CDMS calendar helpers (ncdump -t, ncgen time literals) ----------------------------------

/// `cdCompTime` of netcdf-c's cdTime library.
#[repr(C)]
pub struct cdCompTime {
    pub year: std::ffi::c_long,
    pub month: std::ffi::c_short,
    pub day: std::ffi::c_short,
    pub hour: f64,
}

/// Days from 1970-01-01 in the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// "YYYY-MM-DD[ T]hh:mm:ss" → (y, m, d, hours).
fn parse_time(s: &str) -> Option<(i64, i64, i64, f64)> {
    let s = s.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], s[i + 1..].trim()),
        None => (s, ""),
    };
    let neg = date.starts_with('-');
    let mut parts = date.trim_start_matches('-').split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next().map(|p| p.parse().ok()).unwrap_or(Some(1))?;
    let d: i64 = parts.next().map(|p| p.parse().ok()).unwrap_or(Some(1))?;
    let mut hours = 0.0;
    if !time.is_empty() {
        let time = time.trim_end_matches('Z');
        let mut tp = time.split(':');
        let h: f64 = tp.next()?.parse().ok()?;
        let mi: f64 = tp.next().map(|p| p.parse().ok()).unwrap_or(Some(0.0))?;
        let se: f64 = tp.next().map(|p| p.parse().ok()).unwrap_or(Some(0.0))?;
        hours = h + mi / 60.0 + se / 3600.0;
    }
    Some((if neg { -y } else { y }, m, d, hours))
}

/// Units ("days since ...") → (seconds per unit, base (y, m, d, hours)).
fn parse_relunits(s: &str) -> Option<(f64, (i64, i64, i64, f64))> {
    let lower = s.trim().to_ascii_lowercase();
    let (unit, base) = lower.split_once(" since ")?;
    let secs = match unit.trim() {
        "second" | "seconds" | "sec" | "secs" | "s" => 1.0,
        "minute" | "minutes" | "min" | "mins" => 60.0,
        "hour" | "hours" | "hr" | "hrs" | "h" => 3600.0,
        "day" | "days" | "d" => 86400.0,
        "week" | "weeks" => 604800.0,
        _ => return None,
    };
    Some((secs, parse_time(base)?))
}

/// Only the standard/Gregorian calendars (cdCalenType 0x1111 and mixed 0x2111) are converted;
/// others report failure and ncdump prints the raw numbers.
fn gregorian(timetype: c_int) -> bool {
    matches!(timetype, 0x1111 | 0x2111)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cdParseRelunits(
    timetype: c_int,
    relunits: *mut c_char,
    unit: *mut c_int,
    base_comptime: *mut cdCompTime,
) -> c_int {
    // SAFETY: see `text`.
    let Some(s) = (unsafe { text(relunits) }) else { return 1 };
    if !gregorian(timetype) {
        return 1;
    }
    let Some((secs, (y, m, d, h))) = parse_relunits(&String::from_utf8_lossy(s)) else { return 1 };
    let code = match secs as i64 {
        1 => 4,
        60 => 3,
        3600 => 2,
        86400 => 1,
        _ => 0,
    };
    // SAFETY: optional out-pointers.
    unsafe {
        super::put(unit, code);
        super::put(base_comptime, cdCompTime { year: y as _, month: m as _, day: d as _, hour: h });
    }
    0
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cdRel2Iso(timetype: c_int, relunits: *mut c_char, separator: c_int, reltime: f64, chartime: *mut c_char) {
    if chartime.is_null() {
        return;
    }
    // SAFETY: see `text`.
    let parsed = unsafe { text(relunits) }.and_then(|s| parse_relunits(&String::from_utf8_lossy(s)));
    let out = match (gregorian(timetype), parsed) {
        (true, Some((secs, (y, m, d, h)))) => {
            let base = days_from_civil(y, m, d) as f64 * 86400.0 + h * 3600.0;
            let t = base + reltime * secs;
            let days = (t / 86400.0).floor();
            let mut rem = t - days * 86400.0;
            let (yy, mm, dd) = civil_from_days(days as i64);
            let hh = (rem / 3600.0).floor();
            rem -= hh * 3600.0;
            let mi = (rem / 60.0).floor();
            let ss = rem - mi * 60.0;
            let sep = if separator == 0 { ' ' } else { separator as u8 as char };
            if ss.fract().abs() > 1e-6 {
                format!("{yy}-{mm:02}-{dd:02}{sep}{hh:02}:{mi:02}:{ss:09.6}")
            } else {
                format!("{yy}-{mm:02}-{dd:02}{sep}{hh:02}:{mi:02}:{:02}", ss.round() as i64)
            }
        }
        _ => format!("{reltime}"),
    };
    // SAFETY: ncdump passes a buffer of at least CD_MAX_CHARTIME (64) bytes.
    unsafe { super::put_name(chartime, &out[..out.len().min(63)]) };
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cdSetErrOpts(opts: c_int) {
    let _ = opts;
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cdChar2Comp(timetype: c_int, chartime: *mut c_char, comptime: *mut cdCompTime) {
    let _ = timetype;
    // SAFETY: see `text`.
    let parsed = unsafe { text(chartime) }.and_then(|s| parse_time(&String::from_utf8_lossy(s)));
    let (y, m, d, h) = parsed.unwrap_or((0, 1, 1, 0.0));
    // SAFETY: optional out-pointer.
    unsafe { super::put(comptime, cdCompTime { year: y as _, month: m as _, day: d as _, hour: h }) };
}

/// `CdTime` of cdTime's "human" form, as ncgen passes it to `Cdh2e`.
#[repr(C)]
pub struct CdTime {
    pub year: std::ffi::c_long,
    pub month: std::ffi::c_short,
    pub day: std::ffi::c_short,
    pub hour: f64,
    pub baseYear: std::ffi::c_long,
    pub timeType: c_int,
}

/// Human time → epochal hours since the base year (Gregorian).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Cdh2e(htime: *mut CdTime, etime: *mut f64) {
    if htime.is_null() {
        return;
    }
    // SAFETY: non-NULL struct from ncgen.
    let h = unsafe { &*htime };
    let days = days_from_civil(h.year, h.month as i64, h.day as i64) - days_from_civil(h.baseYear, 1, 1);
    // SAFETY: optional out-pointer.
    unsafe { super::put(etime, days as f64 * 24.0 + h.hour) };
}

// ---- ncaux helpers used by the tools -------------------------------------------------------

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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_h5filterspec_parselist(
    txt0: *const c_char,
    formatp: *mut c_int,
    nspecsp: *mut usize,
    vectorp: *mut *mut *mut super::consts::NC_H5_Filterspec,
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
                "deflate" | "zlib" => 1,
                "shuffle" => 2,
                "fletcher32" => 3,
                "szip" => 4,
                "bzip2" | "bz2" => 307,
                "zstd" | "zstandard" => 32015,
                "blosc" => 32001,
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
        let vec = libc::calloc(specs.len().max(1), std::mem::size_of::<*mut super::consts::NC_H5_Filterspec>())
            as *mut *mut super::consts::NC_H5_Filterspec;
        if vec.is_null() {
            return -61;
        }
        for (i, (id, params)) in specs.iter().enumerate() {
            let spec = libc::calloc(1, std::mem::size_of::<super::consts::NC_H5_Filterspec>()) as *mut super::consts::NC_H5_Filterspec;
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
        super::put(formatp, 2);
        super::put(nspecsp, specs.len());
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

#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_h5filterspec_free(f: *mut super::consts::NC_H5_Filterspec) {
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
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ncaux_class_alignment(ncclass: c_int, alignp: *mut usize) -> c_int {
    let align = match ncclass {
        1 | 2 | 7 => 1,
        3 | 8 => 2,
        4 | 5 | 9 => 4,
        6 | 10 | 11 => 8,
        12 => std::mem::align_of::<*const c_char>(),
        13 => std::mem::align_of::<super::consts::nc_vlen_t>(),
        14 => 1,
        _ => return -36,
    };
    // SAFETY: optional out-pointer.
    unsafe { super::put(alignp, align) };
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
        let (secs, base) = parse_relunits("days since 2000-01-01 00:00:00").unwrap();
        assert_eq!(secs, 86400.0);
        assert_eq!(base, (2000, 1, 1, 0.0));
    }

    #[test]
    fn urls() {
        let u = parse_url("file:///tmp/x.file#mode=nczarr,file").unwrap();
        assert_eq!(u.protocol, "file");
        assert_eq!(u.path, "/tmp/x.file");
        assert_eq!(u.fragment.as_deref(), Some("mode=nczarr,file"));
        assert!(parse_url("/tmp/plain.nc").is_none());
    }
}

//! Opening a master: the `cfa`/`nocfa` words taken out of a name before the real library sees
//! it, and `after_open`, which turns a master the real library opened into one of our datasets
//! (`aggregate::build`, read-only over its fragments, or writable through `write::reopen`).

use super::write;
use crate::aggregate::{Built, build, convention_of};
use crate::error::Result;
use crate::ffi::consts::NC_NOERR;
use crate::ffi::real::{RealFile, RealOpener};
use crate::nc::modes::OpenFlags;
use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::Arc;

/// Does the name or the environment turn aggregation off?
fn disabled(name: &str) -> bool {
    let words = name.split_once('#').map(|(_, f)| crate::url::parse_fragment(f)).and_then(|p| p.get("mode").cloned()).unwrap_or_default();
    words.split(',').any(|w| w.eq_ignore_ascii_case("nocfa")) || crate::config::cfa_disabled()
}

/// The dataset name without the words only we know (`nocfa`, `cfa` in its mode, a `cfa=`
/// version, `cfa_names=`), for the real library; `None` when the name has none.
///
/// # Safety
/// `path` is NULL or NUL-terminated.
pub unsafe fn without_cfa_words(path: *const c_char) -> Option<CString> {
    if path.is_null() {
        return None;
    }
    // SAFETY: the caller's NUL-terminated name.
    let name = std::str::from_utf8(unsafe { CStr::from_ptr(path) }.to_bytes()).ok()?;
    let (base, fragment) = name.split_once('#')?;
    if !fragment.to_ascii_lowercase().contains("cfa") {
        return None;
    }
    let ours = |w: &str| w.eq_ignore_ascii_case("nocfa") || w.eq_ignore_ascii_case("cfa");
    let kept: Vec<String> = fragment
        .split('&')
        .filter_map(|pair| match pair.split_once('=') {
            Some((k, v)) if k.eq_ignore_ascii_case("mode") => {
                let words: Vec<&str> = v.split(',').filter(|w| !ours(w) && !w.is_empty()).collect();
                (!words.is_empty()).then(|| format!("{k}={}", words.join(",")))
            }
            Some((k, _)) if k.eq_ignore_ascii_case("cfa") || k.eq_ignore_ascii_case("cfa_names") => None,
            _ if ours(pair) || pair.is_empty() => None,
            _ => Some(pair.to_string()),
        })
        .collect();
    // A `file://` URL left without a fragment is a plain path to the real library.
    let stripped = match (kept.is_empty(), base.strip_prefix("file://")) {
        (true, Some(path)) => path.strip_prefix("localhost").unwrap_or(path).to_string(),
        (true, None) => base.to_string(),
        (false, _) => format!("{base}#{}", kept.join("&")),
    };
    CString::new(stripped).ok()
}

/// After the real library opened `path` (`status` NC_NOERR, the ncid in `*ncidp`): when the
/// file is a CFA master, our logical dataset takes its place (the real ncid is closed and
/// `*ncidp` becomes ours). Any other file is left as it is.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `ncidp` is NULL or the caller's `int*`.
pub unsafe fn after_open(status: c_int, path: *const c_char, mode: c_int, ncidp: *mut c_int) -> c_int {
    if status != NC_NOERR || ncidp.is_null() || path.is_null() {
        return status;
    }
    // SAFETY: the caller's NUL-terminated dataset name.
    let Ok(name) = std::str::from_utf8(unsafe { CStr::from_ptr(path) }.to_bytes()) else { return status };
    // SAFETY: the real library just wrote the ncid.
    let real = unsafe { *ncidp };
    let Some(version) = convention_of(&RealFile::borrowed(real)) else { return status };
    if disabled(name) {
        return status;
    }
    let built = crate::ffi::call(
        "nc_open",
        || format!("path={name:?} ({version} master)"),
        || {
            let ncid = build_master(real, name, &version, mode)?;
            // SAFETY: the caller's out-pointer.
            unsafe { *ncidp = ncid };
            Ok(())
        },
    );
    // The master is read; its real-library dataset goes either way.
    crate::ffi::file::close(real);
    built
}

/// Builds our dataset for the master `real` and returns its ncid.
fn build_master(real: c_int, name: &str, version: &str, mode: c_int) -> Result<c_int> {
    let built: Built = build(&mut RealFile::borrowed(real), name, version, Arc::new(RealOpener))?;
    if mode & crate::ffi::consts::NC_WRITE != 0 {
        let infos = built.array_infos()?;
        let (memory, vars) = built.into_parts()?;
        let mut format = 0;
        // SAFETY: a valid out-pointer.
        let status = unsafe { crate::ffi::file::nc_inq_format(real, &mut format) };
        if status != NC_NOERR {
            return Err(crate::error::Error::new(crate::error::Kind::Real(status), "master format"));
        }
        return write::reopen(name, version, format, memory, vars, infos, mode);
    }
    let ds = built.read_only(OpenFlags::from_bits(mode & !crate::ffi::consts::NC_WRITE))?;
    crate::registry::insert(ds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nocfa_is_taken_out_for_the_real_library() {
        let strip = |s: &str| {
            let c = CString::new(s).unwrap();
            // SAFETY: a NUL-terminated string.
            unsafe { without_cfa_words(c.as_ptr()) }.map(|c| c.into_string().unwrap())
        };
        assert_eq!(strip("file:///d/x.nca#mode=nocfa").as_deref(), Some("/d/x.nca"));
        assert_eq!(strip("http://h/b/x.nca#mode=bytes,nocfa").as_deref(), Some("http://h/b/x.nca#mode=bytes"));
        assert_eq!(strip("x.nca#nocfa").as_deref(), Some("x.nca"));
        assert_eq!(strip("/d/x.nca"), None);
        assert_eq!(strip("http://h/b/x.nca#mode=bytes"), None);
        assert_eq!(strip("file:///d/x.nca#mode=cfa&cfa=0.5").as_deref(), Some("/d/x.nca"));
        assert_eq!(strip("s3://b/x.nca#mode=cfa,s3").as_deref(), Some("s3://b/x.nca#mode=s3"));
    }
}

//! Opening a master: which files are CFA masters (`Conventions`), the `cfa`/`nocfa` words
//! taken out of a name before the real library sees it, and `after_open`, which turns a master
//! the real library opened into one of our datasets (read-only over `zmap::cfa`, or writable
//! through `write::reopen`).

use super::calls::{child_groups, ok, text_att};
use super::copy::copy_master;
use super::read::Fragments;
use super::write;
use crate::error::Result;
use crate::ffi::consts::{NC_CLOBBER, NC_GLOBAL, NC_NETCDF4, NC_NOERR};
use crate::nc::modes::OpenFlags;
use crate::zmap::cfa::{CfaStore, FragmentReader};
use crate::zmap::memory::MemoryStore;
use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::Arc;

/// Which aggregation convention a file follows: the CFA version its `Conventions` names
/// (`CFA-0.4`, `CFA-0.5`), or `CF` when a root variable is a CF aggregation variable
/// (`aggregated_dimensions`, CF-1.12 and later); `None` for any other file.
///
/// Only the global `Conventions` is read for any other file: a file whose `Conventions` names
/// no CF version from 1.12 on (when aggregation joined CF) is never scanned, since asking
/// about a variable's attributes makes netCDF-4 read that variable's metadata.
fn cfa_version(ncid: c_int) -> Option<String> {
    let conventions = text_att(ncid, NC_GLOBAL, c"Conventions")?;
    let words: Vec<&str> = conventions.split([' ', ',']).collect();
    if let Some(v) = words.iter().find(|w| w.starts_with("CFA-")) {
        return Some(v.to_string());
    }
    let cf_minor = |w: &&str| w.strip_prefix("CF-1.").and_then(|m| m.parse::<u32>().ok());
    if !words.iter().filter_map(cf_minor).any(|m| m >= 12) {
        return None;
    }
    aggregates(ncid).then(|| "CF".to_string())
}

/// Does group `ncid`, or any group below it, hold a CF aggregation variable?
fn aggregates(ncid: c_int) -> bool {
    let mut nvars = 0;
    // SAFETY: valid out-pointer.
    if unsafe { crate::ffi::file::nc_inq_nvars(ncid, &mut nvars) } != NC_NOERR {
        return false;
    }
    if (0..nvars).any(|v| text_att(ncid, v, c"aggregated_dimensions").is_some()) {
        return true;
    }
    child_groups(ncid).unwrap_or_default().into_iter().any(aggregates)
}

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
    let Some(version) = cfa_version(real) else { return status };
    if disabled(name) {
        return status;
    }
    let built = crate::ffi::call(
        "nc_open",
        || format!("path={name:?} ({version} master)"),
        || {
            let ncid = build(real, name, &version, mode)?;
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
fn build(real: c_int, name: &str, version: &str, mode: c_int) -> Result<c_int> {
    let memory = Arc::new(MemoryStore::new());
    let reader: Arc<dyn FragmentReader> = Arc::new(Fragments);
    let spec = crate::url::OpenSpec::in_memory(name);
    let staging = CfaStore::new(name, memory.clone(), Vec::new(), reader.clone(), false);
    let ds = crate::dataset::Dataset::create_on(
        spec.clone(),
        OpenFlags::from_bits(NC_NETCDF4 | NC_CLOBBER),
        Box::new(staging),
        crate::format::ZarrFormat::V2,
    )?;
    let ours = crate::registry::insert(ds)?;
    let result = copy_master(real, ours, name, version);
    let infos = match (&result, mode & crate::ffi::consts::NC_WRITE != 0) {
        (Ok(vars), true) => Some(write::array_infos(ours, vars)),
        _ => None,
    };
    let closed = crate::ffi::file::close(ours);
    let vars = result?;
    ok(closed, "writing the aggregated dataset's metadata")?;
    if let Some(infos) = infos {
        let mut format = 0;
        // SAFETY: a valid out-pointer.
        ok(unsafe { crate::ffi::file::nc_inq_format(real, &mut format) }, "master format")?;
        return write::reopen(name, version, format, memory, vars, infos?, mode);
    }
    let remote = vars.iter().any(|(v, _)| v.fragments.iter().any(|f| f.file.contains("://")));
    let store = CfaStore::new(name, memory, vars, reader, remote);
    let flags = OpenFlags::from_bits(mode & !crate::ffi::consts::NC_WRITE);
    let ds = crate::dataset::Dataset::open_on(spec, flags, Box::new(store))?;
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

//! Aggregated datasets (CFA-netCDF 0.4 and 0.5, as S3netCDF4 writes them), read
//! transparently. A master file opened by the real netcdf-c whose `Conventions` names CFA is
//! turned into one of our datasets, held in memory: the master's dimensions, attributes and
//! ordinary variables (copied, as `nc_copy_var` copies across the two worlds), and each
//! aggregated variable as an ordinary variable over its aggregated dimensions whose chunks are
//! read from the fragment files (`zmap::cfa`). The CFA bookkeeping (the `cf_role`/`cfa_*`
//! attributes, CFA-0.5's `cfa_<var>` groups) is not copied. `#mode=nocfa` or `NCZARR_CFA=0`
//! leaves the master as it is.
//!
//! Fragment files are opened through our own `nc_open` (so each may be netCDF-3, netCDF-4 or
//! NCZarr, local or on S3) one at a time: the real netcdf-c is not thread-safe.

mod master;
pub mod write;

use super::consts::{NC_CHUNKED, NC_CLOBBER, NC_GLOBAL, NC_MAX_NAME, NC_MAX_VAR_DIMS, NC_NETCDF4, NC_NOERR, NC_NOWRITE, nc_type};
use crate::error::{Error, Kind, Result, err};
use crate::nc::modes::OpenFlags;
use crate::nc::types::NcType;
use crate::zmap::cfa::{Aggregated, CfaStore, Fragment, FragmentReader};
use crate::zmap::memory::MemoryStore;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::Arc;

/// A status of a routed call as a `Result` (the code kept; `what` says which call).
fn ok(status: c_int, what: &str) -> Result<()> {
    if status == NC_NOERR { Ok(()) } else { Err(Error::new(Kind::Real(status), what.to_string())) }
}

fn cname(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(Kind::BadName, format!("{s:?}")))
}

/// A text attribute of `(ncid, varid)` (NC_CHAR, or one NC_STRING), `None` when absent or
/// of another type.
fn text_att(ncid: c_int, varid: c_int, name: &CStr) -> Option<String> {
    let mut len = 0usize;
    let mut xtype: nc_type = 0;
    // SAFETY: NUL-terminated name; valid out-pointers.
    if unsafe { super::att::nc_inq_att(ncid, varid, name.as_ptr(), &mut xtype, &mut len) } != NC_NOERR {
        return None;
    }
    if xtype == super::consts::NC_STRING && len == 1 {
        let mut p: *mut c_char = std::ptr::null_mut();
        // SAFETY: one string pointer, freed below with the library's own free.
        if unsafe { super::att::nc_get_att_string(ncid, varid, name.as_ptr(), &mut p) } != NC_NOERR || p.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated string the library allocated.
        let text = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        // SAFETY: the one string nc_get_att_string allocated.
        unsafe { super::usertypes::nc_free_string(1, &mut p) };
        return Some(text);
    }
    if xtype != super::consts::NC_CHAR {
        return None;
    }
    let mut buf = vec![0u8; len + 1];
    // SAFETY: `buf` holds the attribute's `len` characters.
    if unsafe { super::att::nc_get_att_text(ncid, varid, name.as_ptr(), buf.as_mut_ptr() as *mut c_char) } != NC_NOERR {
        return None;
    }
    buf.truncate(len);
    while buf.last() == Some(&0) {
        buf.pop();
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

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
    if unsafe { super::file::nc_inq_nvars(ncid, &mut nvars) } != NC_NOERR {
        return false;
    }
    if (0..nvars).any(|v| text_att(ncid, v, c"aggregated_dimensions").is_some()) {
        return true;
    }
    child_groups(ncid).unwrap_or_default().into_iter().any(aggregates)
}

/// CF's `aggregated_data`: `term: variable` pairs (`map: fragment_map uris: fragment_uris`).
fn aggregated_terms(text: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .chunks(2)
        .filter_map(|p| match p {
            [term, var] => Some((term.trim_end_matches(':').to_string(), var.to_string())),
            _ => None,
        })
        .collect()
}

/// Does the name or the environment turn aggregation off?
fn disabled(name: &str) -> bool {
    let words = name.split_once('#').map(|(_, f)| crate::url::parse_fragment(f)).and_then(|p| p.get("mode").cloned()).unwrap_or_default();
    words.split(',').any(|w| w.eq_ignore_ascii_case("nocfa")) || crate::config::cfa_disabled()
}

/// The dataset name without the words only we know (`nocfa`, `cfa` in its mode, a `cfa=`
/// version), for the real library; `None` when the name has none.
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
            Some((k, _)) if k.eq_ignore_ascii_case("cfa") => None,
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
    let built = super::call(
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
    super::file::close(real);
    built
}

/// Where a fragment named `file` in a master named `master` is.
fn resolve(master: &str, file: &str) -> String {
    let lower = file.to_ascii_lowercase();
    if let Some(path) = file.strip_prefix("file://") {
        return path.to_string();
    }
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return if file.contains('#') { file.to_string() } else { format!("{file}#mode=bytes") };
    }
    if lower.starts_with("s3://") || file.starts_with('/') {
        return file.to_string();
    }
    let (base, fragment) = master.split_once('#').unwrap_or((master, ""));
    let base = base.strip_prefix("file://").unwrap_or(base);
    let dir = base.rsplit_once('/').map_or("", |(d, _)| d);
    let rel = file.trim_start_matches("./");
    let joined = if dir.is_empty() { rel.to_string() } else { format!("{dir}/{rel}") };
    let remote = ["http://", "https://"].iter().any(|s| base.to_ascii_lowercase().starts_with(s));
    match (remote, fragment.is_empty()) {
        (true, _) => format!("{joined}#mode=bytes"),
        (false, _) => joined,
    }
}

/// A variable's dimension ids (routed to whichever library holds `ncid`).
fn var_dimids(ncid: c_int, varid: c_int) -> Result<Vec<c_int>> {
    let mut n = 0;
    let mut ids = [0 as c_int; NC_MAX_VAR_DIMS as usize];
    // SAFETY: out-pointers sized by netcdf-c's limits.
    unsafe {
        ok(super::var::nc_inq_varndims(ncid, varid, &mut n), "variable rank")?;
        ok(super::var::nc_inq_vardimid(ncid, varid, ids.as_mut_ptr()), "variable dimensions")?;
    }
    Ok(ids[..n.clamp(0, NC_MAX_VAR_DIMS) as usize].to_vec())
}

/// Ids an inquiry returns as a count, then into a buffer of that size (`nc_inq_unlimdims`,
/// `nc_inq_grps`).
fn counted_ids(what: &str, inquire: impl Fn(*mut c_int, *mut c_int) -> c_int) -> Result<Vec<c_int>> {
    let mut n = 0;
    ok(inquire(&mut n, std::ptr::null_mut()), what)?;
    let mut ids = vec![0 as c_int; n.max(0) as usize];
    ok(inquire(&mut n, ids.as_mut_ptr()), what)?;
    Ok(ids)
}

/// The ids of a group's unlimited dimensions.
fn unlimited_dims(ncid: c_int) -> Result<Vec<c_int>> {
    // SAFETY: `counted_ids` passes a count pointer and NULL, then a buffer of that count.
    counted_ids("unlimited dimensions", |n, ids| unsafe { super::file::nc_inq_unlimdims(ncid, n, ids) })
}

/// The ncids of a group's child groups.
fn child_groups(ncid: c_int) -> Result<Vec<c_int>> {
    // SAFETY: as for `unlimited_dims`.
    counted_ids("groups", |n, ids| unsafe { super::group::nc_inq_grps(ncid, n, ids) })
}

/// A variable's shape.
fn var_shape(ncid: c_int, varid: c_int) -> Result<Vec<usize>> {
    var_dimids(ncid, varid)?
        .into_iter()
        .map(|d| {
            let mut len = 0usize;
            // SAFETY: valid out-pointer.
            ok(unsafe { super::group::nc_inq_dimlen(ncid, d, &mut len) }, "dimension length")?;
            Ok(len)
        })
        .collect()
}

/// The `n` strings of a string variable (a NULL one reads as empty).
fn var_strings(ncid: c_int, varid: c_int, n: usize) -> Result<Vec<String>> {
    let mut ptrs = vec![std::ptr::null_mut::<c_char>(); n.max(1)];
    // SAFETY: `ptrs` has room for one pointer per string of the variable.
    ok(unsafe { super::data_matrix::nc_get_var_string(ncid, varid, ptrs.as_mut_ptr()) }, "strings")?;
    let out = ptrs
        .iter()
        .take(n)
        // SAFETY: NUL-terminated strings the library allocated (or NULL).
        .map(|p| if p.is_null() { String::new() } else { unsafe { CStr::from_ptr(*p) }.to_string_lossy().into_owned() })
        .collect();
    // SAFETY: the strings nc_get_var_string allocated.
    unsafe { super::usertypes::nc_free_string(n, ptrs.as_mut_ptr()) };
    Ok(out)
}

/// The fragments of an aggregated variable from CFA-0.4's `cfa_array` JSON attribute
/// (locations are inclusive index ranges).
fn fragments_04(master: &str, json: &str, rank: usize) -> Result<Vec<Fragment>> {
    let bad = |why: &str| Error::new(Kind::Invalid, format!("cfa_array: {why}"));
    let doc: serde_json::Value = serde_json::from_str(json).map_err(|_| bad("not valid JSON"))?;
    let parts = doc.get("Partitions").and_then(|p| p.as_array()).ok_or_else(|| bad("no Partitions"))?;
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        let sub = p.get("subarray").ok_or_else(|| bad("partition without subarray"))?;
        let file = sub.get("file").and_then(|f| f.as_str()).ok_or_else(|| bad("subarray without file"))?;
        let ncvar = sub.get("ncvar").and_then(|f| f.as_str()).ok_or_else(|| bad("subarray without ncvar"))?;
        let loc = p.get("location").and_then(|l| l.as_array()).ok_or_else(|| bad("partition without location"))?;
        if loc.len() != rank {
            return Err(bad("location of the wrong rank"));
        }
        let mut start = Vec::with_capacity(rank);
        let mut shape = Vec::with_capacity(rank);
        for range in loc {
            let r: Vec<u64> = range.as_array().map(|a| a.iter().filter_map(|v| v.as_u64()).collect()).unwrap_or_default();
            match r[..] {
                [a, b] if b >= a && b < u64::MAX => {
                    let (Ok(a), Ok(n)) = (usize::try_from(a), usize::try_from(b - a + 1)) else {
                        return Err(bad("location out of range"));
                    };
                    start.push(a);
                    shape.push(n);
                }
                _ => return Err(bad("location range is not [first, last]")),
            }
        }
        out.push(Fragment { file: resolve(master, file), ncvar: ncvar.to_string(), start, shape, constant: None });
    }
    Ok(out)
}

/// The fragments of an aggregated variable from a CFA-0.5 partition group (`location`,
/// `file`, `ncvar` over the partition matrix).
fn fragments_05(master: &str, real: c_int, group: &str, rank: usize) -> Result<Vec<Fragment>> {
    let mut gid = 0;
    let g = cname(group)?;
    // SAFETY: NUL-terminated name, valid out-pointer.
    ok(unsafe { super::group::nc_inq_grp_ncid(real, g.as_ptr(), &mut gid) }, "cfa group")?;
    let varid = |name: &CStr| -> Result<c_int> {
        let mut v = 0;
        // SAFETY: as above.
        ok(unsafe { super::var::nc_inq_varid(gid, name.as_ptr(), &mut v) }, "cfa group variable")?;
        Ok(v)
    };
    let (loc_id, file_id, ncvar_id) = (varid(c"location")?, varid(c"file")?, varid(c"ncvar")?);
    // Every buffer is sized from its own variable's dimensions: a master whose partition
    // variables disagree is refused, never read past a buffer.
    let cells = |v: c_int| -> Result<usize> {
        var_shape(gid, v)?
            .into_iter()
            .try_fold(1usize, |n, len| n.checked_mul(len))
            .ok_or_else(|| Error::new(Kind::Invalid, format!("{group}: partition matrix too large")))
    };
    let nparts = cells(file_id)?;
    if cells(ncvar_id)? != nparts || cells(loc_id)? != nparts.saturating_mul(rank).saturating_mul(2) {
        return err(Kind::Invalid, format!("{group}: file, ncvar and location disagree on the number of partitions"));
    }
    let mut location = vec![0 as c_int; nparts * rank * 2];
    // SAFETY: `location` has room for every element of the variable (its shape, checked above).
    ok(unsafe { super::data_matrix::nc_get_var_int(gid, loc_id, location.as_mut_ptr()) }, "location")?;
    let (files, ncvars) = (var_strings(gid, file_id, nparts)?, var_strings(gid, ncvar_id, nparts)?);
    let mut out = Vec::new();
    for p in 0..nparts {
        if files[p].is_empty() {
            continue;
        }
        let loc = &location[p * rank * 2..(p + 1) * rank * 2];
        let (mut start, mut shape) = (Vec::new(), Vec::new());
        for d in 0..rank {
            // CFA-0.5 locations are half-open ranges (0.4's are inclusive).
            let (a, b) = (loc[2 * d], loc[2 * d + 1]);
            if a < 0 || b <= a {
                return err(Kind::Invalid, format!("{group}: location [{a}, {b})"));
            }
            start.push(a as usize);
            shape.push((b - a) as usize);
        }
        out.push(Fragment { file: resolve(master, &files[p]), ncvar: ncvars[p].clone(), start, shape, constant: None });
    }
    Ok(out)
}

/// Attributes of the master that are CFA bookkeeping, never copied.
fn bookkeeping(name: &str) -> bool {
    name == "cf_role" || name.starts_with("cfa_") || name == "aggregated_dimensions" || name == "aggregated_data"
}

fn names(ncid: c_int, varid: c_int, count: c_int) -> Result<Vec<CString>> {
    (0..count)
        .map(|a| {
            let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
            // SAFETY: NC_MAX_NAME+1 bytes.
            ok(unsafe { super::att::nc_inq_attname(ncid, varid, a, buf.as_mut_ptr()) }, "attribute name")?;
            // SAFETY: NUL-terminated by the library.
            Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_owned())
        })
        .collect()
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
    let infos = match (&result, mode & super::consts::NC_WRITE != 0) {
        (Ok(vars), true) => Some(write::array_infos(ours, vars)),
        _ => None,
    };
    let closed = super::file::close(ours);
    let vars = result?;
    ok(closed, "writing the aggregated dataset's metadata")?;
    if let Some(infos) = infos {
        let mut format = 0;
        // SAFETY: a valid out-pointer.
        ok(unsafe { super::file::nc_inq_format(real, &mut format) }, "master format")?;
        return write::reopen(name, version, format, memory, vars, infos?, mode);
    }
    let remote = vars.iter().any(|(v, _)| v.fragments.iter().any(|f| f.file.contains("://")));
    let store = CfaStore::new(name, memory, vars, reader, remote);
    let flags = OpenFlags::from_bits(mode & !super::consts::NC_WRITE);
    let ds = crate::dataset::Dataset::open_on(spec, flags, Box::new(store))?;
    crate::registry::insert(ds)
}

/// Copies the master's root group into `ours` and returns the aggregated variables with their
/// fill values.
fn copy_master(real: c_int, ours: c_int, master: &str, version: &str) -> Result<Vec<(Aggregated, Vec<u8>)>> {
    let mut aggregated = Vec::new();
    copy_group(real, ours, "", master, version, &mut aggregated)?;
    Ok(aggregated)
}

/// Copies group `real` of the master (at `path`, "" for the root, else `g/h/`) into group
/// `ours`, its sub-groups too (CFA-0.5's partition groups are bookkeeping), and adds its
/// aggregated variables to `aggregated`.
fn copy_group(
    real: c_int,
    ours: c_int,
    path: &str,
    master: &str,
    version: &str,
    aggregated: &mut Vec<(Aggregated, Vec<u8>)>,
) -> Result<()> {
    let (mut ndims, mut nvars, mut natts, mut unlim) = (0, 0, 0, -1);
    // SAFETY: valid out-pointers.
    ok(unsafe { super::file::nc_inq(real, &mut ndims, &mut nvars, &mut natts, &mut unlim) }, "master")?;
    let unlimited = unlimited_dims(real)?;
    // CF aggregation: the fragment array variables (`map`, `uris`, ...) and the dimensions
    // only they use are bookkeeping too.
    let mut hidden_vars = std::collections::HashSet::new();
    let mut aggregated_dims = std::collections::HashSet::new();
    for v in 0..nvars {
        if let Some(data) = text_att(real, v, c"aggregated_data") {
            hidden_vars.extend(aggregated_terms(&data).into_iter().map(|(_, var)| var));
        }
        for att in [c"aggregated_dimensions", c"cfa_dimensions"] {
            if let Some(dims) = text_att(real, v, att) {
                aggregated_dims.extend(dims.split_whitespace().map(str::to_string));
            }
        }
    }
    let var_name = |v: c_int| -> Result<String> {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        // SAFETY: NC_MAX_NAME+1 bytes.
        ok(unsafe { super::var::nc_inq_varname(real, v, buf.as_mut_ptr()) }, "variable name")?;
        // SAFETY: NUL-terminated by the library.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    };
    let mut hidden_ids = std::collections::HashSet::new();
    let mut used = std::collections::HashSet::new();
    for v in 0..nvars {
        let dims = var_dimids(real, v)?;
        if hidden_vars.contains(&var_name(v)?) {
            hidden_ids.insert(v);
        } else {
            used.extend(dims);
        }
    }
    let mut dimids = vec![0 as c_int; ndims.max(0) as usize];
    // SAFETY: `dimids` holds the root group's dimensions.
    ok(unsafe { super::group::nc_inq_dimids(real, &mut ndims, dimids.as_mut_ptr(), 0) }, "dimensions")?;
    let hidden_var_dims: std::collections::HashSet<c_int> =
        hidden_ids.iter().map(|v| var_dimids(real, *v)).collect::<Result<Vec<_>>>()?.into_iter().flatten().collect();
    for d in &dimids {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        let mut len = 0usize;
        // SAFETY: NC_MAX_NAME+1 bytes; valid out-pointer.
        ok(unsafe { super::group::nc_inq_dim(real, *d, buf.as_mut_ptr(), &mut len) }, "dimension")?;
        // SAFETY: NUL-terminated by the library.
        let dname = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        if hidden_var_dims.contains(d) && !used.contains(d) && !aggregated_dims.contains(&dname) {
            continue;
        }
        let is_unlimited = unlimited.contains(d);
        let mut id = 0;
        // SAFETY: NUL-terminated name from the library.
        ok(unsafe { super::group::nc_def_dim(ours, buf.as_ptr(), if is_unlimited { 0 } else { len }, &mut id) }, "define dimension")?;
    }
    for a in names(real, NC_GLOBAL, natts)? {
        let conventions = (path.is_empty() && a.as_bytes() == b"Conventions").then(|| text_att(real, NC_GLOBAL, c"Conventions")).flatten();
        if let Some(conventions) = conventions.filter(|c| c.contains("CFA-")) {
            // Only the CFA word goes: the dataset is no longer CFA-netCDF.
            let rest: Vec<&str> = conventions.split(' ').filter(|w| !w.starts_with("CFA-") && !w.is_empty()).collect();
            if !rest.is_empty() {
                let text = rest.join(" ");
                ok(
                    // SAFETY: `text` holds `len` bytes.
                    unsafe { super::att::nc_put_att_text(ours, NC_GLOBAL, a.as_ptr(), text.len(), text.as_ptr() as *const c_char) },
                    "Conventions",
                )?;
            }
            continue;
        }
        ok(super::cross::copy_att(real, NC_GLOBAL, a.as_ptr(), ours, NC_GLOBAL), "global attribute")?;
    }
    let mut partition_groups = std::collections::HashSet::new();
    for v in 0..nvars {
        if hidden_ids.contains(&v) {
            continue;
        }
        if let Some(g) = text_att(real, v, c"cfa_group") {
            partition_groups.insert(g);
        }
        let is_aggregated =
            text_att(real, v, c"cf_role").as_deref() == Some("cfa_variable") || text_att(real, v, c"aggregated_dimensions").is_some();
        if !is_aggregated {
            ok(super::cross::copy_var(real, v, ours), "variable")?;
            continue;
        }
        aggregated.push(define_aggregated(real, v, ours, master, version, path)?);
    }
    for g in child_groups(real)? {
        let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
        // SAFETY: NC_MAX_NAME+1 bytes.
        ok(unsafe { super::group::nc_inq_grpname(g, buf.as_mut_ptr()) }, "group name")?;
        // SAFETY: NUL-terminated by the library.
        let gname = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        if partition_groups.contains(&gname) {
            continue;
        }
        let mut child = 0;
        // SAFETY: our dataset in define mode (or it enters it); NUL-terminated name.
        unsafe {
            let st = super::file::nc_redef(ours);
            if st != NC_NOERR && st != super::consts::NC_EINDEFINE {
                ok(st, "redef")?;
            }
            ok(super::group::nc_def_grp(ours, buf.as_ptr(), &mut child), "group")?;
        }
        copy_group(g, child, &format!("{path}{gname}/"), master, version, aggregated)?;
    }
    Ok(())
}

/// The fragments of a CF aggregation variable (CF-1.12 and later): `map` gives the fragment
/// sizes along each dimension (one row per dimension, missing entries past the last
/// fragment), `uris` the fragment files over the fragment array, `identifiers` the variable
/// in each (one for all, or one per fragment). An empty URI is a missing fragment.
fn fragments_cf(master: &str, real: c_int, data: &str, shape: &[usize], xtype: NcType) -> Result<Vec<Fragment>> {
    let terms = aggregated_terms(data);
    let term = |t: &str| terms.iter().find(|(k, _)| k == t).map(|(_, v)| v.clone());
    let rank = shape.len();
    let varid = |name: &str| -> Result<(c_int, Vec<usize>)> {
        let mut v = 0;
        let c = cname(name)?;
        // SAFETY: NUL-terminated name; valid out-pointer.
        ok(unsafe { super::var::nc_inq_varid(real, c.as_ptr(), &mut v) }, "fragment array variable")?;
        Ok((v, var_shape(real, v)?))
    };
    let map_name = term("map").ok_or_else(|| Error::new(Kind::Invalid, "aggregated_data without map"))?;
    let (map_id, map_dims) = varid(&map_name)?;
    let cells: usize = map_dims.iter().product();
    let mut map = vec![0i64; cells.max(1)];
    // SAFETY: `map` has room for every element of the variable (`cells`).
    ok(unsafe { super::data_matrix::nc_get_var_longlong(real, map_id, map.as_mut_ptr()) }, "map")?;
    // One row of fragment sizes per dimension.
    let width = if map_dims.len() == 2 { map_dims[1] } else { 1 };
    if map_dims.first().copied().unwrap_or(0) != rank && rank > 0 {
        return err(Kind::Invalid, format!("{map_name}: {} rows for {rank} dimensions", map_dims.first().copied().unwrap_or(0)));
    }
    let mut sizes: Vec<Vec<usize>> = Vec::with_capacity(rank);
    for d in 0..rank {
        // Entries past a dimension's last fragment are missing (the fill value, never > 0).
        let row: Vec<usize> = map[d * width..(d + 1) * width].iter().filter(|&&n| n > 0).map(|&n| n as usize).collect();
        if row.iter().sum::<usize>() != shape[d] {
            return err(Kind::Invalid, format!("{map_name}: fragment sizes {row:?} do not add up to {}", shape[d]));
        }
        sizes.push(row);
    }
    let counts: Vec<usize> = sizes.iter().map(Vec::len).collect();
    let total: usize = counts.iter().product();
    let position = |f: usize| -> (Vec<usize>, Vec<usize>) {
        let mut index = vec![0usize; rank];
        let mut rest = f;
        for d in (0..rank).rev() {
            index[d] = rest % counts[d];
            rest /= counts[d];
        }
        let start = (0..rank).map(|d| sizes[d][..index[d]].iter().sum()).collect();
        let shape = (0..rank).map(|d| sizes[d][index[d]]).collect();
        (start, shape)
    };
    // Constant fragments: one value each over the fragment array, the fill value where none.
    if let Some(values_name) = term("unique_values") {
        let (id, dims) = varid(&values_name)?;
        if dims.iter().product::<usize>() != total {
            return err(Kind::Invalid, format!("{values_name}: {} values for {total} fragments", dims.iter().product::<usize>()));
        }
        let size = xtype.size();
        let mut values = vec![0u8; total * size];
        let zeros = vec![0usize; dims.len()];
        let status = get_vara_as(real, id, xtype, &zeros, &dims, &mut values);
        ok(status, "unique_values")?;
        let mut fill = vec![0u8; size];
        let mut nofill = 0;
        // SAFETY: one element; the fill of a variable of another type is never compared.
        let has_fill = unsafe { super::var::nc_inq_var_fill(real, id, &mut nofill, fill.as_mut_ptr() as *mut c_void) } == NC_NOERR
            && text_type(real, id) == Some(xtype);
        let mut out = Vec::new();
        for f in 0..total {
            let value = &values[f * size..(f + 1) * size];
            if has_fill && value == fill.as_slice() {
                continue;
            }
            let (start, shape) = position(f);
            out.push(Fragment { file: String::new(), ncvar: String::new(), start, shape, constant: Some(value.to_vec()) });
        }
        return Ok(out);
    }
    let uris_name = term("uris").or_else(|| term("location")).ok_or_else(|| Error::new(Kind::Invalid, "aggregated_data without uris"))?;
    let (uris_id, uris_dims) = varid(&uris_name)?;
    let n_uris: usize = uris_dims.iter().product();
    // More than one URI per fragment (a trailing dimension of alternatives): the first.
    let per = if total > 0 && n_uris.is_multiple_of(total) { n_uris / total } else { 0 };
    if per == 0 {
        return err(Kind::Invalid, format!("{uris_name}: {n_uris} URIs for {total} fragments"));
    }
    let uris = var_strings(real, uris_id, n_uris)?;
    let identifiers = match term("identifiers").or_else(|| term("identifier")) {
        Some(name) => {
            let (id, dims) = varid(&name)?;
            var_strings(real, id, dims.iter().product())?
        }
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for f in 0..total {
        let uri = &uris[f * per];
        if !uri.is_empty() {
            let ident = match identifiers.len() {
                0 => return err(Kind::Invalid, "aggregated_data without identifiers"),
                1 => identifiers[0].clone(),
                _ => identifiers.get(f).cloned().unwrap_or_default(),
            };
            let (start, fshape) = position(f);
            out.push(Fragment {
                file: resolve(master, uri),
                ncvar: ident.trim_start_matches('/').to_string(),
                start,
                shape: fshape,
                constant: None,
            });
        }
    }
    Ok(out)
}

/// Defines the aggregated variable `v` of the master in `ours`.
fn define_aggregated(real: c_int, v: c_int, ours: c_int, master: &str, version: &str, path: &str) -> Result<(Aggregated, Vec<u8>)> {
    let mut buf = [0 as c_char; NC_MAX_NAME as usize + 1];
    let (mut xtype, mut natts): (nc_type, c_int) = (0, 0);
    // SAFETY: NC_MAX_NAME+1 bytes; valid out-pointers.
    unsafe {
        ok(super::var::nc_inq_varname(real, v, buf.as_mut_ptr()), "variable name")?;
        ok(super::var::nc_inq_vartype(real, v, &mut xtype), "variable type")?;
        ok(super::var::nc_inq_varnatts(real, v, &mut natts), "variable attributes")?;
    }
    // SAFETY: NUL-terminated by the library.
    let vname = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
    let nctype = NcType::from_id(xtype)?;
    if nctype == NcType::String || nctype == NcType::Char {
        return err(Kind::BadType, format!("{vname}: aggregated {nctype:?} variables are not supported"));
    }
    let dims_text = text_att(real, v, c"cfa_dimensions").or_else(|| text_att(real, v, c"aggregated_dimensions")).unwrap_or_default();
    let dim_names: Vec<&str> = dims_text.split_whitespace().collect();
    let mut dimids = Vec::with_capacity(dim_names.len());
    let mut shape = Vec::with_capacity(dim_names.len());
    for d in &dim_names {
        let (mut id, mut len) = (0, 0usize);
        let dn = cname(d)?;
        // SAFETY: NUL-terminated name; valid out-pointers.
        unsafe {
            ok(super::group::nc_inq_dimid(ours, dn.as_ptr(), &mut id), "aggregated dimension")?;
            let mut real_id = 0;
            ok(super::group::nc_inq_dimid(real, dn.as_ptr(), &mut real_id), "aggregated dimension")?;
            ok(super::group::nc_inq_dimlen(real, real_id, &mut len), "aggregated dimension length")?;
        }
        dimids.push(id);
        shape.push(len);
    }
    let fragments = if let Some(json) = text_att(real, v, c"cfa_array") {
        fragments_04(master, &json, dim_names.len())?
    } else if let Some(group) = text_att(real, v, c"cfa_group") {
        fragments_05(master, real, &group, dim_names.len())?
    } else if let Some(data) = text_att(real, v, c"aggregated_data") {
        fragments_cf(master, real, &data, &shape, nctype)?
    } else {
        return err(Kind::Invalid, format!("{vname}: {version} variable without cfa_array or cfa_group"));
    };
    // Every fragment inside the aggregated array (a hostile or broken master is refused).
    for f in &fragments {
        let inside = f.start.len() == shape.len()
            && f.shape.len() == shape.len()
            && (0..shape.len()).all(|d| f.shape[d] > 0 && f.start[d].checked_add(f.shape[d]).is_some_and(|end| end <= shape[d]));
        if !inside {
            return err(
                Kind::Invalid,
                format!("{vname}: fragment {} at {:?} of shape {:?} lies outside {shape:?}", f.file, f.start, f.shape),
            );
        }
    }
    let chunks = Aggregated::chunk_shape(&shape, &fragments);
    let mut id = 0;
    // SAFETY: define mode calls on our dataset; arrays of `rank` entries.
    unsafe {
        let st = super::file::nc_redef(ours);
        if st != NC_NOERR && st != super::consts::NC_EINDEFINE {
            ok(st, "redef")?;
        }
        ok(super::var::nc_def_var(ours, buf.as_ptr(), xtype, dimids.len() as c_int, dimids.as_ptr(), &mut id), "define aggregated")?;
        if !dimids.is_empty() {
            ok(super::var::nc_def_var_chunking(ours, id, NC_CHUNKED, chunks.as_ptr()), "fragment chunks")?;
        }
    }
    for a in names(real, v, natts)? {
        if bookkeeping(&a.to_string_lossy()) {
            continue;
        }
        ok(super::cross::copy_att(real, v, a.as_ptr(), ours, id), "attribute")?;
    }
    let mut fill = vec![0u8; nctype.size()];
    let mut nofill = 0;
    // SAFETY: `fill` holds one element of the variable's type.
    ok(unsafe { super::var::nc_inq_var_fill(ours, id, &mut nofill, fill.as_mut_ptr() as *mut c_void) }, "fill value")?;
    // SAFETY: a plain ncid call.
    let st = unsafe { super::file::nc_enddef(ours) };
    if st != NC_NOERR && st != super::consts::NC_ENOTINDEFINE {
        ok(st, "enddef")?;
    }
    crate::trace::emit(1, &format!("cfa: {vname}{shape:?} in {} fragments, chunks {chunks:?}", fragments.len()));
    Ok((Aggregated { key: format!("{path}{vname}"), shape, chunks, xtype: nctype, fragments }, fill))
}

/// Is the fragment a netCDF object on S3 (fetched before the real library opens it)?
fn route_needs_fetch(file: &str) -> bool {
    matches!(crate::url::object::object_name(file, false), Ok(Some(_)))
}

/// Reads fragments through the library's own `nc_open`, one at a time.
struct Fragments;

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// HDF5 keeps its "print errors" switch per thread, and netcdf-c turns it off only on the
/// thread that initialised it: fragment reads run on the engine's worker threads, where the
/// real library's expected failures (probing for optional attributes) would print. Turned
/// off once per thread, through the real library's own HDF5.
fn quiet_hdf5_here() {
    thread_local!(static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if QUIET.with(|q| q.replace(true)) {
        return;
    }
    let p = super::route::hdf5_symbol(c"H5Eset_auto2");
    if !p.is_null() {
        // SAFETY: herr_t H5Eset_auto2(hid_t estack, H5E_auto2_t func, void *client_data), with
        // H5E_DEFAULT (0) and no function: printing off for this thread's default stack.
        unsafe {
            std::mem::transmute::<*mut c_void, unsafe extern "C" fn(i64, *mut c_void, *mut c_void) -> c_int>(p)(
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
    }
}

impl FragmentReader for Fragments {
    fn read(&self, f: &Fragment, xtype: NcType, start: &[usize], count: &[usize], out: &mut [u8]) -> Result<()> {
        let fail = |status: c_int, what: &str| {
            crate::trace::warn(&format!("fragment {}: {what}: {}", f.file, crate::error::message(status).to_string_lossy()));
            Error::new(if status > 0 { Kind::Errno(status) } else { Kind::Real(status) }, format!("fragment {}: {what}", f.file))
        };
        // A fragment on S3 is fetched before the real library is taken: fetches of the
        // fragments of one read overlap (the engine asks for them from several threads).
        let fetched = if route_needs_fetch(&f.file) {
            match super::objects::fetch(&f.file) {
                Ok(got) => got,
                Err(e) => {
                    crate::trace::warn(&format!("fragment {}: {e}", f.file));
                    return Err(Error::new(e.kind, format!("fragment {}: {}", f.file, e.context)));
                }
            }
        } else {
            None
        };
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        quiet_hdf5_here();
        let path = cname(&f.file)?;
        let mut ncid = 0;
        let st = match fetched {
            // SAFETY: a valid out-pointer.
            Some(file) => unsafe { super::objects::serve("nc_open", &f.file, file, NC_NOWRITE, &mut ncid) },
            // SAFETY: NUL-terminated name; valid out-pointer.
            None => unsafe { super::file::open(path.as_ptr(), path.as_ptr(), NC_NOWRITE, &mut ncid) },
        };
        if st != NC_NOERR {
            return Err(fail(st, "cannot open"));
        }
        let result = read_open(ncid, f, xtype, start, count, out).map_err(|(st, what)| fail(st, &what));
        super::file::close(ncid);
        result
    }
}

fn read_open(
    ncid: c_int,
    f: &Fragment,
    xtype: NcType,
    start: &[usize],
    count: &[usize],
    out: &mut [u8],
) -> std::result::Result<(), (c_int, String)> {
    let vn = CString::new(f.ncvar.as_str()).map_err(|_| (super::consts::NC_EBADNAME, "variable name".to_string()))?;
    let mut varid = 0;
    // SAFETY: NUL-terminated name, valid out-pointers.
    let st = unsafe { super::var::nc_inq_varid(ncid, vn.as_ptr(), &mut varid) };
    if st != NC_NOERR {
        return Err((st, format!("no variable {}", f.ncvar)));
    }
    let lens = var_shape(ncid, varid).map_err(|e| (e.code(), format!("shape of {}", f.ncvar)))?;
    // A fragment may leave out dimensions of size one (CF aggregation allows it).
    let kept: Vec<usize> = (0..f.shape.len()).filter(|&d| lens.len() == f.shape.len() || f.shape[d] != 1).collect();
    let expected: Vec<usize> = kept.iter().map(|&d| f.shape[d]).collect();
    if lens != expected {
        return Err((super::consts::NC_EEDGE, format!("variable {} has shape {lens:?}, the master says {:?}", f.ncvar, f.shape)));
    }
    let start: Vec<usize> = kept.iter().map(|&d| start[d]).collect();
    let count: Vec<usize> = kept.iter().map(|&d| count[d]).collect();
    let st = get_vara_as(ncid, varid, xtype, &start, &count, out);
    if st != NC_NOERR {
        return Err((st, format!("reading {}", f.ncvar)));
    }
    Ok(())
}

/// The type of a variable, as ours.
fn text_type(ncid: c_int, varid: c_int) -> Option<NcType> {
    let mut xtype: nc_type = 0;
    // SAFETY: a valid out-pointer.
    if unsafe { super::var::nc_inq_vartype(ncid, varid, &mut xtype) } != NC_NOERR {
        return None;
    }
    NcType::from_id(xtype).ok()
}

/// `nc_get_vara` converted to `xtype` (native byte order) into `out`, through the library's
/// own typed reads (routed to whichever library holds `ncid`).
fn get_vara_as(ncid: c_int, varid: c_int, xtype: NcType, start: &[usize], count: &[usize], out: &mut [u8]) -> c_int {
    let cells: usize = count.iter().product();
    if out.len() < cells * xtype.size() {
        return super::consts::NC_EINTERNAL;
    }
    let (s, c) = (start.as_ptr(), count.as_ptr());
    let p = out.as_mut_ptr();
    // SAFETY: `out` holds `cells` values of `xtype` (checked above); start/count hold one entry
    // per dimension.
    unsafe {
        match xtype {
            NcType::Byte => super::data_matrix::nc_get_vara_schar(ncid, varid, s, c, p as *mut _),
            NcType::UByte => super::data_matrix::nc_get_vara_ubyte(ncid, varid, s, c, p as *mut _),
            NcType::Short => super::data_matrix::nc_get_vara_short(ncid, varid, s, c, p as *mut _),
            NcType::UShort => super::data_matrix::nc_get_vara_ushort(ncid, varid, s, c, p as *mut _),
            NcType::Int => super::data_matrix::nc_get_vara_int(ncid, varid, s, c, p as *mut _),
            NcType::UInt => super::data_matrix::nc_get_vara_uint(ncid, varid, s, c, p as *mut _),
            NcType::Int64 => super::data_matrix::nc_get_vara_longlong(ncid, varid, s, c, p as *mut _),
            NcType::UInt64 => super::data_matrix::nc_get_vara_ulonglong(ncid, varid, s, c, p as *mut _),
            NcType::Float => super::data_matrix::nc_get_vara_float(ncid, varid, s, c, p as *mut _),
            NcType::Double => super::data_matrix::nc_get_vara_double(ncid, varid, s, c, p as *mut _),
            NcType::Char | NcType::String => super::consts::NC_EBADTYPE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragment_names_resolve_against_the_master() {
        assert_eq!(resolve("/data/x.nca", "./x/x.tas.0.nc"), "/data/x/x.tas.0.nc");
        assert_eq!(resolve("x.nca", "./x/x.tas.0.nc"), "x/x.tas.0.nc");
        assert_eq!(resolve("file:///data/x.nca#mode=nocfa", "x/a.nc"), "/data/x/a.nc");
        assert_eq!(resolve("http://h:1/b/k/x.nca#mode=s3", "./x/a.nc"), "http://h:1/b/k/x/a.nc#mode=bytes");
        assert_eq!(resolve("s3://b/k/x.nca", "./x/a.nc"), "s3://b/k/x/a.nc");
        assert_eq!(resolve("/data/x.nca", "/abs/a.nc"), "/abs/a.nc");
        assert_eq!(resolve("/data/x.nca", "file:///abs/a.nc"), "/abs/a.nc");
        assert_eq!(resolve("/data/x.nca", "s3://b/a.nc"), "s3://b/a.nc");
        assert_eq!(resolve("/data/x.nca", "https://h/b/a.nc"), "https://h/b/a.nc#mode=bytes");
    }

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

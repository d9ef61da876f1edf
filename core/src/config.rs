//! Settings from outside the API: netcdf-c's `.ncrc` files and the environment.
//!
//! Every `NC*`/`NCZARR_*` variable the library reads is read here, so this file is the list of
//! what can be configured. (The `AWS_*` variables belong to the S3 driver's settings, which
//! follow the AWS SDK's own rules.) Knobs that describe the process (tracing, logging, the
//! fallback library, test hooks) are read once; knobs a program may change between two
//! creates (`NCZARRFORMAT`, `NCZARR_CONSOLIDATED`, the S3 tuning values) are read where used.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

// ---- .ncrc ----------------------------------------------------------------------------------

static RC: Mutex<Option<BTreeMap<String, String>>> = Mutex::new(None);

/// netcdf-c's rc search (ecosystem.md §4.2): `NCRCENV_RC` names the only file; otherwise
/// `.ncrc`, `.daprc`, `.dodsrc` in `$NCRCENV_HOME` (or `$HOME`), then in the current directory,
/// a later file overriding an earlier one; `NCRCENV_IGNORE` skips them all.
fn rc_files() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    if std::env::var_os("NCRCENV_IGNORE").is_some() {
        return files;
    }
    if let Ok(f) = std::env::var("NCRCENV_RC") {
        files.push(f.into());
        return files;
    }
    let home = std::env::var("NCRCENV_HOME").ok().or_else(|| std::env::var("HOME").ok());
    for dir in [home, Some(".".to_string())].into_iter().flatten() {
        for name in [".ncrc", ".daprc", ".dodsrc"] {
            files.push(std::path::Path::new(&dir).join(name));
        }
    }
    files
}

/// `key=value` lines; a `[url]` prefix is dropped and the key kept; `#` starts a comment line.
fn parse_rc(text: &str, into: &mut BTreeMap<String, String>) {
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = match line.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map(|(_, r)| r.trim()).unwrap_or(""),
            None => line,
        };
        if let Some((k, v)) = line.split_once('=') {
            into.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
}

fn load_rc() -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for f in rc_files() {
        if let Ok(text) = std::fs::read_to_string(&f) {
            parse_rc(&text, &mut map);
        }
    }
    map
}

/// An rc key's value (files read at the first lookup, `nc_rc_set` values on top).
pub fn rc_get(key: &str) -> Option<String> {
    let mut rc = RC.lock().unwrap_or_else(|p| p.into_inner());
    rc.get_or_insert_with(load_rc).get(key).cloned()
}

/// `nc_rc_set`: overrides the files' value for the rest of the process.
pub fn rc_set(key: String, value: String) {
    let mut rc = RC.lock().unwrap_or_else(|p| p.into_inner());
    rc.get_or_insert_with(load_rc).insert(key, value);
}

// ---- environment ----------------------------------------------------------------------------

fn env_str(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn yes(v: &str) -> bool {
    matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes")
}

/// `NCZARRFORMAT=3`: creates write Zarr v3 unless the mode names a version (read per create).
pub(crate) fn create_format() -> Option<u8> {
    match env_str("NCZARRFORMAT").as_deref().map(str::trim) {
        Some("3") => Some(3),
        Some("2") => Some(2),
        _ => None,
    }
}

/// `NCZARR_ICECHUNK_SPEC=1|2`: the on-disk spec version of an Icechunk repository `nc_create`
/// makes (read per create); `None`: the library's default (1, which every Icechunk reader reads).
/// Anything else is an error the create reports.
#[cfg_attr(not(feature = "icechunk"), allow(dead_code))]
pub(crate) fn icechunk_spec() -> Option<String> {
    env_str("NCZARR_ICECHUNK_SPEC").map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// `NCZARR_ICECHUNK_MESSAGE`: the message of every Icechunk commit instead of the program's name
/// and the time (read per commit).
#[cfg_attr(not(feature = "icechunk"), allow(dead_code))]
pub(crate) fn icechunk_message() -> Option<String> {
    env_str("NCZARR_ICECHUNK_MESSAGE").filter(|v| !v.is_empty())
}

/// `NCZARR_CONSOLIDATED=1|true|yes`: write and read `.zmetadata` when the mode does not say.
pub(crate) fn consolidated() -> bool {
    env_str("NCZARR_CONSOLIDATED").is_some_and(|v| yes(&v))
}

/// `NCTRACING=<level>`: trace level at start-up (`nc_set_log_level` changes it later).
pub(crate) fn tracing_level() -> i32 {
    env_str("NCTRACING").and_then(|v| v.trim().parse::<i32>().ok()).unwrap_or(0).max(0)
}

/// `NCZARR_LOG`: words separated by commas. `errors`: each failed call's reason on stderr (one
/// line); `all`: that and the passthrough decisions; anything else but `0` (`1`, `routing`):
/// the passthrough decisions.
fn log_words() -> &'static [String] {
    static WORDS: OnceLock<Vec<String>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let v = std::env::var("NCZARR_LOG").unwrap_or_default();
        v.split(',').map(|w| w.trim().to_ascii_lowercase()).filter(|w| !w.is_empty() && w != "0").collect()
    })
}

/// `NCZARR_LOG` asks for the passthrough decisions.
pub fn log_routing() -> bool {
    log_words().iter().any(|w| w != "errors")
}

/// `NCZARR_LOG` asks for failed calls' reasons.
pub fn log_errors() -> bool {
    log_words().iter().any(|w| w == "errors" || w == "all")
}

/// `NCZARR_CFA_NAMES=relative`: aggregation masters name fragments relative to themselves
/// (the name's `cfa_names=` wins).
pub fn cfa_names() -> Option<String> {
    env_str("NCZARR_CFA_NAMES")
}

/// `NCZARR_ALLOW_TARGETS` (else rc `NCZARR.ALLOW_TARGETS`): what a remote document may name
/// beyond its own place (url/trust.rs). Read at every check: a program may set it late.
pub(crate) fn allow_targets() -> Option<String> {
    #[cfg(test)]
    if let Some(v) = ALLOW_TARGETS_TEST.with(|t| t.borrow().clone()) {
        return v;
    }
    env_str("NCZARR_ALLOW_TARGETS").or_else(|| rc_get("NCZARR.ALLOW_TARGETS")).filter(|v| !v.trim().is_empty())
}

// Tests set the consent for their own thread rather than in the process environment.
#[cfg(test)]
thread_local! {
    static ALLOW_TARGETS_TEST: std::cell::RefCell<Option<Option<String>>> = const { std::cell::RefCell::new(None) };
}

#[cfg(test)]
pub(crate) fn set_allow_targets_for_test(v: Option<&str>) {
    ALLOW_TARGETS_TEST.with(|t| *t.borrow_mut() = Some(v.map(str::to_string)));
}

/// `NCZARR_FALLBACK_LIB`: the real netcdf-c the drop-in forwards non-Zarr datasets to.
pub fn fallback_lib() -> Option<OsString> {
    std::env::var_os("NCZARR_FALLBACK_LIB").filter(|v| !v.is_empty())
}

/// `NCZARR_SHARD_READS=whole`: read whole shards instead of index + ranges.
pub(crate) fn shard_reads_whole() -> bool {
    static WHOLE: OnceLock<bool> = OnceLock::new();
    *WHOLE.get_or_init(|| env_str("NCZARR_SHARD_READS").is_some_and(|v| v.eq_ignore_ascii_case("whole")))
}

/// `NCZARR_MAX_CHUNK_MB` (default 1024): the largest stored object read whole whose size the
/// metadata cannot bound (variable-length string chunks); a bigger one is NC_ENCZARR.
pub(crate) fn max_chunk_bytes() -> u64 {
    static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| (number("NCZARR_MAX_CHUNK_MB", 1024.0) * 1048576.0) as u64)
}

/// A positive number from the environment (the `NCZARR_S3_*` tuning knobs), else `default`.
pub(crate) fn number(name: &str, default: f64) -> f64 {
    env_str(name).and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| *v > 0.0).unwrap_or(default)
}

/// A positive number of seconds from an rc key (`HTTP.TIMEOUT`, `HTTP.CONNECTTIMEOUT`).
pub(crate) fn rc_seconds(key: &str) -> Option<f64> {
    rc_get(key).and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| *v > 0.0)
}

/// `$HOME`, where netcdf-c looks for `.ncrc`, `.s3nc.json` and `.aws/`.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// `~/x` → `$HOME/x` (S3netCDF4's `cache_location` may start with `~`).
pub(crate) fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// `NCZARR_S3_MEMORY_MB`: how big a netCDF file stored as one S3 object may be and still be
/// held in memory; `None` when unset (the S3netCDF4 file's `resource_allocation.memory`,
/// else the default, decides).
pub(crate) fn s3_memory_budget() -> Option<u64> {
    env_str("NCZARR_S3_MEMORY_MB").and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| *v >= 0.0).map(|mb| (mb * 1048576.0) as u64)
}

/// `HDF5_PLUGIN_PATH`: where HDF5 filter plugins are looked for (a `:`-separated list).
pub(crate) fn hdf5_plugin_path() -> Option<std::ffi::OsString> {
    std::env::var_os("HDF5_PLUGIN_PATH")
}

/// `NCZARR_PAR_PENDING_MB`: MiB of partly written chunks a parallel rank holds between
/// collective calls (the default is `dataset::parallel`'s).
pub(crate) fn par_pending_mb() -> Option<usize> {
    env_str("NCZARR_PAR_PENDING_MB").and_then(|v| v.trim().parse::<usize>().ok())
}

/// `NCZARR_HDF5_LIB`: the libhdf5 loaded for filter plugins that link none (found by name
/// when unset).
pub(crate) fn hdf5_lib() -> Option<String> {
    env_str("NCZARR_HDF5_LIB").filter(|v| !v.trim().is_empty())
}

/// `NCZARR_CFA=0`: aggregated (CFA) masters open as the plain files they are.
pub fn cfa_disabled() -> bool {
    env_str("NCZARR_CFA").is_some_and(|v| v.trim() == "0" || v.trim().eq_ignore_ascii_case("no") || v.trim().eq_ignore_ascii_case("false"))
}

/// `NCZARR_LAZY=0`: netCDF objects are read whole before the first value (as before lazy
/// opens), never scanned by range.
pub fn lazy_disabled() -> bool {
    env_str("NCZARR_LAZY").is_some_and(|v| v.trim() == "0" || v.trim().eq_ignore_ascii_case("no") || v.trim().eq_ignore_ascii_case("false"))
}

/// `NCZARR_CFA_FILEHANDLES`: fragment files an aggregated dataset keeps open at once.
pub fn cfa_filehandles() -> Option<usize> {
    env_str("NCZARR_CFA_FILEHANDLES").and_then(|v| v.trim().parse::<usize>().ok()).filter(|n| *n > 0)
}

/// `NCZARR_CFA_MEMORY_MB`: fragment data an aggregated dataset keeps in open fragment files.
pub fn cfa_memory_budget() -> Option<u64> {
    env_str("NCZARR_CFA_MEMORY_MB").and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| *v > 0.0).map(|mb| (mb * 1048576.0) as u64)
}

/// `NCZARR_CFA_SUBARRAY_MB`: the largest fragment S3netCDF4's splitting rule makes for a
/// variable with no chunking of its own (S3netCDF4's `max_subarray_size`, 50 MB by default).
pub fn cfa_subarray_bytes() -> u64 {
    env_str("NCZARR_CFA_SUBARRAY_MB")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0)
        .map_or(50 << 20, |mb| (mb * 1048576.0) as u64)
}

/// `NCZARR_S3_CACHE_DIR`: where netCDF objects over the memory budget are cached while open.
pub(crate) fn s3_cache_dir() -> Option<PathBuf> {
    std::env::var_os("NCZARR_S3_CACHE_DIR").filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The S3netCDF4 alias file: `$S3_NC_CONFIG`, else `~/.s3nc.json`.
pub(crate) fn s3nc_config() -> Option<PathBuf> {
    match std::env::var_os("S3_NC_CONFIG") {
        Some(p) => Some(PathBuf::from(p)),
        None => home_dir().map(|h| h.join(".s3nc.json")),
    }
}

/// The folder holding AWS `config` and `credentials`: `$NC_TEST_AWS_DIR` (netcdf-c's test
/// override), else `~/.aws`.
pub(crate) fn aws_dir() -> Option<PathBuf> {
    std::env::var_os("NC_TEST_AWS_DIR").map(PathBuf::from).or_else(|| home_dir().map(|h| h.join(".aws")))
}

// ---- test hooks (reliability.md A10, passthrough.md §5.2) ------------------------------------

/// `NCZARR_TEST_PANIC=<function>[:<n>]`: the n-th call (default 1) of that export panics.
pub fn test_panic() -> Option<(String, usize)> {
    let spec = env_str("NCZARR_TEST_PANIC")?;
    match spec.split_once(':') {
        Some((name, n)) => Some((name.to_string(), n.trim().parse().ok()?)),
        None => Some((spec, 1)),
    }
}

/// `NCZARR_TEST_CLAIM_SLOT=<n>`: slot n is marked ours at start-up, with no dataset in it.
pub fn test_claim_slot() -> Option<usize> {
    env_str("NCZARR_TEST_CLAIM_SLOT").and_then(|v| v.trim().parse::<usize>().ok())
}

/// `NCZARR_TEST_S3_ENDPOINT`: the S3 server the driver's own unit tests use.
#[cfg(test)]
pub(crate) fn test_s3_endpoint() -> Option<String> {
    env_str("NCZARR_TEST_S3_ENDPOINT")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text as an rc file (`.ncrc`, `.daprc`, `.dodsrc`): settings, never a panic.
        #[test]
        fn fuzz_rc_files(text in any::<String>(), lines in proptest::collection::vec("\\[?[a-z:/.]{0,8}\\]? ?[A-Z.]{0,8}=? ?[a-z0-9]{0,6}", 0..10)) {
            let mut m = BTreeMap::new();
            parse_rc(&text, &mut m);
            parse_rc(&lines.join("\n"), &mut m);
        }
    }

    #[test]
    fn rc_lines_keep_keys_and_drop_url_prefixes() {
        let mut m = BTreeMap::new();
        parse_rc("# comment\n\nA=1\n[http://x.org] B = two\nnot a setting\n[broken C=3\n", &mut m);
        assert_eq!(m.get("A").map(String::as_str), Some("1"));
        assert_eq!(m.get("B").map(String::as_str), Some("two"));
        assert_eq!(m.len(), 2);
        parse_rc("A=override", &mut m);
        assert_eq!(m.get("A").map(String::as_str), Some("override"));
    }
}

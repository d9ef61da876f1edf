//! Dataset names → `OpenSpec`: which storage driver, which flavour of Zarr, which options.
//!
//! netcdf-c selects NCZarr only from a URL fragment (`#mode=nczarr,file`); we also recognise a
//! plain path or `file://` URL whose target holds Zarr metadata (probed at open). Mode words,
//! macros and implications are tables, as in netcdf-c's `dinfermodel.c`; an unknown or
//! conflicting combination fails before any I/O.

pub mod classify;
pub mod object;
pub mod s3;
pub mod trust;

use crate::error::{Kind, Result, err};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    File,
    Zip,
    S3,
    /// A reference set (kerchunk JSON): keys resolve to bytes of other objects; read-only.
    Refs,
    /// A plain web server (no S3 API): keys read by GET under the base URL; read-only.
    Http,
    /// An Icechunk repository (a directory or an S3 prefix): Zarr v3 read through a session
    /// on one branch, tag or snapshot; every sync and close of a writer one commit.
    Icechunk,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// NCZarr metadata (netCDF types, shared dims, groups) on top of Zarr v2.
    NcZarr,
    /// Plain Zarr v2: no `_nczarr_*` keys written, and ignored on read.
    Zarr,
}

#[derive(Debug, Clone)]
pub struct OpenSpec {
    /// The name exactly as the caller gave it (`nc_inq_path` returns it).
    pub original: String,
    pub path: PathBuf,
    /// `None`: decided by probing the target at open time.
    pub driver: Option<Driver>,
    /// `None`: no mode word chose it; open infers from the metadata found.
    pub flavor: Option<Flavor>,
    /// Write `_ARRAY_DIMENSIONS` (and use it on read).
    pub xarray: bool,
    /// `Some(true)`: read/write `.zmetadata`; `Some(false)`: never read it.
    pub consolidated: Option<bool>,
    /// Write char variables as `>S1` (netcdf-c's dtype) instead of `|S1` + `type_alias`.
    pub strict_char: bool,
    pub dimension_separator: Option<char>,
    pub params: BTreeMap<String, String>,
    /// Bucket, key prefix and endpoint when the driver is S3.
    pub s3: Option<s3::S3Target>,
    /// `v2`/`v3` in the mode; `None`: create v2 (or `NCZARRFORMAT`), open infers.
    pub zarr_format: Option<u8>,
    /// `shard=` fragment key (zarr-v3.md §7.4).
    pub shard: ShardRequest,
    /// The logical dataset of an aggregated (CFA) writer: variables without chunking of their
    /// own get S3netCDF4's sub-array shape for this many bytes (`model::fragment_chunks`).
    pub fragment_split: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardRequest {
    None,
    /// Target 64 MiB of uncompressed data per shard.
    Auto,
    /// Target bytes of uncompressed data per shard.
    Bytes(u64),
}

impl OpenSpec {
    /// The Zarr format a create writes: the mode's word, else `NCZARRFORMAT`, else 2 (V1).
    pub(crate) fn create_format(&self) -> u8 {
        self.zarr_format.or_else(crate::config::create_format).unwrap_or(2)
    }
}

fn parse_shard(v: Option<&String>) -> Result<ShardRequest> {
    let Some(v) = v else { return Ok(ShardRequest::None) };
    let t = v.trim().to_ascii_lowercase();
    match t.as_str() {
        "" | "none" => return Ok(ShardRequest::None),
        "auto" => return Ok(ShardRequest::Auto),
        _ => {}
    }
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t.as_str(), 1),
    };
    match num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)) {
        Some(n) if n > 0 => Ok(ShardRequest::Bytes(n)),
        _ => err(Kind::Invalid, format!("shard={v}")),
    }
}

/// Levenshtein distance, for suggesting the mode word a misspelling meant.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// Mode words we know. netCDF-3/4/DAP words are known but never select us.
const OUR_WORDS: &[&str] = &[
    "nczarr",
    "zarr",
    "xarray",
    "noxarray",
    "file",
    "zip",
    "s3",
    "gs3",
    "bytes",
    "consolidated",
    "noconsolidated",
    "v2",
    "v3",
    "nc4char",
    "log",
    "kerchunk",
    "http",
    "icechunk",
];
const OTHER_WORDS: &[&str] = &[
    "nc3",
    "nc4",
    "netcdf",
    "netcdf3",
    "netcdf4",
    "classic",
    "64bitoffset",
    "64bitdata",
    "cdf5",
    "dap2",
    "dap4",
    "udf0",
    "udf1",
    "hdf5",
    "nocfa",
    "cfa",
];

/// Fragment keys without a value that expand to mode words.
const MACROS: &[(&str, &[&str])] = &[
    ("zarr", &["nczarr", "zarr"]),
    ("xarray", &["zarr"]),
    ("noxarray", &["nczarr", "noxarray"]),
    ("nczarr", &["nczarr"]),
    ("s3", &["s3", "nczarr"]),
    ("bytes", &["bytes"]),
];

/// (word, implied words), applied until nothing changes.
const IMPLIES: &[(&str, &[&str])] = &[("zarr", &["nczarr"]), ("xarray", &["zarr"]), ("noxarray", &["nczarr", "zarr"])];

/// `%XX` escapes of a URL path decoded (invalid escapes kept as they are).
pub(crate) fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

pub fn parse_fragment(fragment: &str) -> BTreeMap<String, String> {
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    for pair in fragment.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = match pair.split_once('=') {
            Some((k, v)) => (k.to_ascii_lowercase(), v.to_string()),
            None => (pair.to_ascii_lowercase(), String::new()),
        };
        let (key, value) = match MACROS.iter().find(|(m, _)| *m == key && value.is_empty()) {
            Some((_, words)) => ("mode".to_string(), words.join(",")),
            None => (key, value),
        };
        match map.get_mut(&key) {
            Some(existing) => {
                for v in value.split(',').filter(|v| !v.is_empty()) {
                    if !existing.split(',').any(|e| e == v) {
                        if !existing.is_empty() {
                            existing.push(',');
                        }
                        existing.push_str(v);
                    }
                }
            }
            None => {
                map.insert(key, value);
            }
        }
    }
    map
}

/// Parses a dataset name. `Ok(None)` means "not a Zarr dataset by name": the caller may still
/// probe the path (`probe`) before deciding it is not ours.
pub fn parse(name: &str) -> Result<Option<OpenSpec>> {
    let (base, fragment) = name.split_once('#').unwrap_or((name, ""));
    let Some((path, s3)) = location(base, fragment)? else { return Ok(None) };
    let params = parse_fragment(fragment);
    let Some(words) = mode_words(&params, s3.is_some())? else { return Ok(None) };
    let has = |w: &str| words.iter().any(|x| x == w);
    let driver = storage_driver(&words, s3.is_some())?;
    if has("v2") && has("v3") {
        return err(Kind::Invalid, "both v2 and v3 requested");
    }
    let icechunk = driver == Some(Driver::Icechunk);
    if icechunk && has("v2") {
        return err(Kind::Invalid, "an Icechunk repository holds Zarr v3 (no v2)");
    }
    if has("consolidated") && has("noconsolidated") {
        return err(Kind::Invalid, "consolidated and noconsolidated both requested");
    }
    let dimension_separator = match params.get("dimension_separator").map(String::as_str) {
        None => None,
        Some("/") => Some('/'),
        Some(".") => Some('.'),
        Some(other) => return err(Kind::Invalid, format!("dimension_separator {other:?}")),
    };
    let shard = parse_shard(params.get("shard"))?;
    let pick = |a: &str, b: &str| {
        if has(a) {
            Some(true)
        } else if has(b) {
            Some(false)
        } else {
            None
        }
    };
    Ok(Some(OpenSpec {
        original: name.to_string(),
        path,
        driver,
        flavor: pick("zarr", "nczarr").map(|pure| if pure { Flavor::Zarr } else { Flavor::NcZarr }),
        xarray: !has("noxarray"),
        consolidated: if crate::config::consolidated() { Some(true) } else { pick("consolidated", "noconsolidated") },
        strict_char: has("nc4char"),
        dimension_separator,
        params,
        s3,
        zarr_format: if icechunk { Some(3) } else { pick("v3", "v2").map(|v3| if v3 { 3 } else { 2 }) },
        shard,
        fragment_split: None,
    }))
}

/// Where a name's dataset is: a local path, or an S3 target (with its description as the path);
/// `None` for web names that are not ours (DAP, byte-range HDF5, plain web URLs), which belong
/// to the real netcdf-c.
fn location(base: &str, fragment: &str) -> Result<Option<(PathBuf, Option<s3::S3Target>)>> {
    let lower = base.to_ascii_lowercase();
    if lower.starts_with("file://") {
        let rest = &base[7..];
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        return Ok(Some((PathBuf::from(percent_decode(rest)), None)));
    }
    if !["s3://", "gs3://", "http://", "https://"].iter().any(|s| lower.starts_with(s)) {
        return Ok(Some((PathBuf::from(base), None)));
    }
    let params = parse_fragment(fragment);
    let words: Vec<String> = params.get("mode").map(|m| m.split(',').map(|w| w.to_ascii_lowercase()).collect()).unwrap_or_default();
    let web = lower.starts_with("http://") || lower.starts_with("https://");
    if web && words.iter().any(|w| w == "kerchunk") && !s3::is_s3_url(base, &words) {
        // A reference set on a plain web server: its keys are in the document.
        return Ok(Some((PathBuf::from(base), None)));
    }
    if web && words.iter().any(|w| w == "http") {
        // A Zarr store on a plain web server (no S3 API): its keys are URLs under the base.
        return Ok(Some((PathBuf::from(base), None)));
    }
    if words.iter().any(|w| w == "bytes") || !s3::is_s3_url(base, &words) {
        return Ok(None);
    }
    let target = s3::parse_target(base)?;
    Ok(Some((PathBuf::from(target.describe()), Some(target))))
}

/// The mode's words, checked (an unknown word is NC_EINVAL with the nearest known one), with
/// the words they imply; `None` when they name another format (nc4, dap2, bytes...).
fn mode_words(params: &BTreeMap<String, String>, on_s3: bool) -> Result<Option<Vec<String>>> {
    let mut words: Vec<String> =
        params.get("mode").map(|m| m.split(',').filter(|w| !w.is_empty()).map(|w| w.to_ascii_lowercase()).collect()).unwrap_or_default();
    for w in &words {
        if !OUR_WORDS.contains(&w.as_str()) && !OTHER_WORDS.contains(&w.as_str()) {
            let near = OUR_WORDS.iter().chain(OTHER_WORDS).min_by_key(|k| edit_distance(w, k)).filter(|k| edit_distance(w, k) <= 2);
            let hint = near.map(|k| format!("; did you mean {k:?}?")).unwrap_or_default();
            return err(Kind::Invalid, format!("unknown mode word {w:?}{hint} (words: {})", OUR_WORDS.join(", ")));
        }
    }
    loop {
        let before = words.len();
        for (word, implied) in IMPLIES {
            if words.iter().any(|w| w == word) {
                for i in implied.iter() {
                    if !words.iter().any(|w| w == i) {
                        words.push(i.to_string());
                    }
                }
            }
        }
        if words.len() == before {
            break;
        }
    }
    if words.iter().any(|w| w == "bytes") {
        words.retain(|w| w != "nczarr" && w != "zarr");
    }
    // An S3 name is Zarr by its scheme (netcdf-c routes s3: URLs to NCZarr): `mode=s3` implied.
    if on_s3 {
        for w in ["s3", "nczarr"] {
            if !words.iter().any(|x| x == w) {
                words.push(w.to_string());
            }
        }
    }
    let has = |w: &str| words.iter().any(|x| x == w);
    // A reference set holds Zarr whose flavor its content says (kerchunk writes plain Zarr).
    let explicit = has("nczarr") || has("zarr") || has("kerchunk") || has("icechunk");
    if !explicit && !words.is_empty() && !words.iter().all(|w| ["file", "zip"].contains(&w.as_str())) {
        return Ok(None);
    }
    Ok(Some(words))
}

/// The storage driver the words name (none: inferred at open), checked against each other and
/// the name. A reference set is its own driver, whether the set is a file or an S3 object.
fn storage_driver(words: &[String], on_s3: bool) -> Result<Option<Driver>> {
    let has = |w: &str| words.iter().any(|x| x == w);
    let drivers: Vec<Driver> =
        [("file", Driver::File), ("zip", Driver::Zip), ("s3", Driver::S3), ("gs3", Driver::S3), ("http", Driver::Http)]
            .iter()
            .filter(|(w, _)| has(w))
            .map(|(_, d)| *d)
            .collect();
    if drivers.len() > 1 && drivers.iter().any(|d| *d != drivers[0]) {
        return err(Kind::Invalid, "conflicting storage drivers in mode");
    }
    if has("kerchunk") {
        if drivers.contains(&Driver::Zip) {
            return err(Kind::Invalid, "kerchunk and zip both requested");
        }
        return Ok(Some(Driver::Refs));
    }
    if has("icechunk") {
        // The repository is a directory or, on S3, a key prefix: the S3 word only says where.
        if drivers.iter().any(|d| !matches!(d, Driver::File | Driver::S3)) {
            return err(Kind::Invalid, "icechunk is a directory or an S3 prefix (no zip, kerchunk or http)");
        }
        if drivers.contains(&Driver::S3) && !on_s3 {
            return err(Kind::Invalid, "mode s3 needs an s3:// or http(s):// URL");
        }
        return Ok(Some(Driver::Icechunk));
    }
    if drivers.first() == Some(&Driver::S3) && !on_s3 {
        return err(Kind::Invalid, "mode s3 needs an s3:// or http(s):// URL");
    }
    Ok(drivers.first().copied())
}

impl OpenSpec {
    /// The spec of a dataset the library builds in memory under the caller's `name` (an
    /// aggregated dataset's logical view): NCZarr v2, nothing inferred from the name.
    pub fn in_memory(name: &str) -> OpenSpec {
        OpenSpec {
            original: name.to_string(),
            path: PathBuf::from(name),
            driver: None,
            flavor: Some(Flavor::NcZarr),
            xarray: false,
            consolidated: Some(false),
            strict_char: false,
            dimension_separator: None,
            params: BTreeMap::new(),
            s3: None,
            zarr_format: Some(2),
            shard: ShardRequest::None,
            fragment_split: None,
        }
    }

    /// True when the name itself said "Zarr" (a mode word), not just a path to probe.
    pub fn is_explicit(&self) -> bool {
        self.flavor.is_some()
    }
}

/// Does a file starting with `head` look like a kerchunk reference set (a JSON object naming
/// Zarr metadata keys, or version 1's `refs`)?
fn looks_like_references(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    text.trim_start().starts_with('{')
        && ([r#"".zgroup""#, r#"".zarray""#, r#""zarr.json""#].iter().any(|k| text.contains(k))
            || (text.contains(r#""refs""#) && text.contains(r#""version""#)))
}

/// Storage inferred from what is at `path`: a directory holding Zarr metadata is a file store,
/// a regular file starting with a zip signature is a zip store, and one holding a kerchunk
/// reference set (JSON) is a reference store.
pub fn probe(path: &std::path::Path) -> Option<Driver> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_dir() {
        // A Parquet reference set: `.zmetadata` with its `record_size` (its chunks are elsewhere).
        let zmetadata = std::fs::read(path.join(".zmetadata")).unwrap_or_default();
        if serde_json::from_slice::<serde_json::Value>(&zmetadata).is_ok_and(|v| v.get("record_size").is_some()) {
            return Some(Driver::Refs);
        }
        // An Icechunk repository: spec 2's `repo` object, or spec 1's refs and snapshots.
        if path.join("repo").is_file() || (path.join("refs").is_dir() && path.join("snapshots").is_dir()) {
            return Some(Driver::Icechunk);
        }
        let markers = [".zgroup", ".zarray", ".zattrs", "zarr.json", ".zmetadata"];
        return markers.iter().any(|m| path.join(m).exists()).then_some(Driver::File);
    }
    use std::io::Read;
    let mut head = Vec::with_capacity(64 << 10);
    std::fs::File::open(path).ok()?.take(64 << 10).read_to_end(&mut head).ok()?;
    if head.starts_with(b"PK\x03\x04") {
        return Some(Driver::Zip);
    }
    looks_like_references(&head).then_some(Driver::Refs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reference_sets_are_known_by_content() {
        assert!(looks_like_references(br#" {".zgroup": "{\"zarr_format\": 2}", "v/0": ["x.nc", 0, 4]}"#));
        assert!(looks_like_references(br#"{"version": 1, "refs": {}}"#));
        assert!(!looks_like_references(br#"{"title": "some other JSON"}"#));
        assert!(!looks_like_references(b"CDF\x01"));
    }

    proptest! {
        /// Dataset names and `#mode=` fragments of any shape: a spec or an error, never a panic.
        #[test]
        fn fuzz_dataset_names(path in any::<String>(), fragment in any::<String>(),
                              words in proptest::collection::vec(prop::sample::select(vec!["nczarr", "zarr", "file", "zip", "s3", "v3", "xarray", "noxarray", "consolidated", "bytes", "", "shard=auto", "shard=9Q"]), 0..5)) {
            let _ = parse(&path);
            let _ = parse(&format!("file://{path}#{fragment}"));
            let _ = parse(&format!("file:///tmp/x#mode={}&{fragment}", words.join(",")));
            let _ = parse_fragment(&fragment);
        }
    }

    #[test]
    fn modes() {
        let s = parse("file:///tmp/x.file#mode=nczarr,file").unwrap().unwrap();
        assert_eq!(s.path, PathBuf::from("/tmp/x.file"));
        assert_eq!(s.driver, Some(Driver::File));
        assert_eq!(s.flavor, Some(Flavor::NcZarr));
        let s = parse("/tmp/x.zip#MODE=zarr&mode=zip").unwrap().unwrap();
        assert_eq!(s.driver, Some(Driver::Zip));
        assert_eq!(s.flavor, Some(Flavor::Zarr));
        let s = parse("file:///tmp/x#noxarray").unwrap().unwrap();
        assert_eq!(s.flavor, Some(Flavor::Zarr));
        assert!(!s.xarray);
        assert_eq!(parse("/tmp/x#mode=nczarr,file,zip").unwrap_err().kind, Kind::Invalid);
        assert_eq!(parse("/tmp/x#mode=nczarr,v3").unwrap().unwrap().zarr_format, Some(3));
        assert_eq!(parse("/tmp/x#mode=nczarr,v2,v3").unwrap_err().kind, Kind::Invalid);
        assert_eq!(parse("/tmp/x#mode=nczarr,v3&shard=4M").unwrap().unwrap().shard, ShardRequest::Bytes(4 << 20));
        assert_eq!(parse("/tmp/x#mode=nczarr,v3&shard=lots").unwrap_err().kind, Kind::Invalid);
        assert_eq!(parse("/tmp/x#mode=bogus").unwrap_err().kind, Kind::Invalid);
        assert!(parse("/tmp/x#mode=nc4").unwrap().is_none());
        let s = parse("/tmp/x.nc").unwrap().unwrap();
        assert_eq!(s.flavor, None);
        assert_eq!(parse("file:///a%20b#mode=zarr").unwrap().unwrap().path, PathBuf::from("/a b"));
    }
}

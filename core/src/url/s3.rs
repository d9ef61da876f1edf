//! S3 dataset names (nczarr-format.md §11.3, ecosystem.md §4.3): which URLs name S3 and where
//! they point.
//!
//! URL forms: `s3://bucket/key`, `gs3://bucket/key`, AWS path style
//! `https://s3[.<region>].amazonaws.com/bucket/key`, virtual host
//! `https://bucket.s3[.<region>].amazonaws.com/key`, Google
//! `https://storage.googleapis.com/bucket/key`, and any other `http(s)://host[:port]/bucket/key`
//! as a path-style custom endpoint (plain HTTP allowed: the user named it). With a configured
//! S3netCDF4 alias (`~/.s3nc.json`), `s3://<alias>/bucket/key` goes to that alias's endpoint
//! with its keys; an unconfigured first segment is a bucket.

use super::percent_decode;
use crate::error::{Error, Kind, Result, err};
use std::path::PathBuf;

/// Where a dataset lives on S3.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Target {
    /// `None`: AWS itself (the SDK's endpoint rules); else `scheme://host[:port]`.
    pub endpoint: Option<String>,
    pub bucket: String,
    /// Key prefix of the dataset root, without leading or trailing `/` (may be empty).
    pub root: String,
    /// Region named by the host (`s3.<region>.amazonaws.com`).
    pub url_region: Option<String>,
    /// Keys from an S3netCDF4 alias.
    pub alias_keys: Option<(String, String)>,
    /// Connect and read timeouts of the alias's own backend (`backends.<backend>`).
    pub alias_timeouts: AliasTimeouts,
    /// Transfer settings of the alias's backend, for netCDF files stored as one object.
    pub alias_transfer: AliasTransfer,
}

/// S3netCDF4's transfer settings of a backend (`enable_multipart_download/upload`,
/// `maximum_part_size`, `maximum_parts`); `None` where the alias file does not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AliasTransfer {
    pub multipart_download: Option<bool>,
    pub multipart_upload: Option<bool>,
    pub part_size: Option<u64>,
    pub max_parts: Option<u32>,
}

/// `connect_timeout` / `read_timeout` of an S3netCDF4 backend, when the alias file gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AliasTimeouts {
    pub connect: Option<std::time::Duration>,
    pub read: Option<std::time::Duration>,
}

impl std::fmt::Debug for S3Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the alias's secret.
        write!(f, "s3://{}/{} (endpoint {:?})", self.bucket, self.root, self.endpoint)
    }
}

impl S3Target {
    /// Where requests go: the URL's own endpoint, else, for AWS-form names, the SDK's endpoint
    /// variables (aws-config semantics: how `s3://` names reach an S3-compatible server), else
    /// `None`: AWS itself.
    pub(crate) fn effective_endpoint(&self) -> Option<String> {
        self.endpoint
            .clone()
            .or_else(|| ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"].iter().find_map(|v| std::env::var(v).ok().filter(|e| !e.is_empty())))
    }

    pub(crate) fn describe(&self) -> String {
        match &self.endpoint {
            Some(e) => format!("{e}/{}/{}", self.bucket, self.root),
            None => format!("s3://{}/{}", self.bucket, self.root),
        }
    }
}

fn split_bucket(path: &str) -> Result<(String, String)> {
    let (bucket, rest) = path.split_once('/').unwrap_or((path, ""));
    if bucket.is_empty() {
        return err(Kind::Url, "S3 URL without a bucket");
    }
    Ok((bucket.to_string(), percent_decode(rest.trim_matches('/'))))
}

/// Is this URL (scheme, host, mode words) an S3 dataset name?
pub(crate) fn is_s3_url(base: &str, words: &[String]) -> bool {
    let lower = base.to_ascii_lowercase();
    if lower.starts_with("s3://") || lower.starts_with("gs3://") {
        return true;
    }
    let Some(rest) = lower.strip_prefix("https://").or_else(|| lower.strip_prefix("http://")) else { return false };
    let host = rest.split('/').next().unwrap_or("").split(':').next().unwrap_or("");
    words.iter().any(|w| w == "s3" || w == "gs3" || w == "nczarr" || w == "zarr")
        || host.ends_with(".amazonaws.com")
        || host == "storage.googleapis.com"
}

/// Parses the part of an S3 dataset name before `#`.
pub(crate) fn parse_target(base: &str) -> Result<S3Target> {
    let lower = base.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("s3://").map(|_| &base[5..]) {
        let (first, after) = split_bucket(rest)?;
        if let Some(alias) = alias_for(&first)? {
            let (bucket, root) = split_bucket(&after)?;
            return Ok(S3Target {
                alias_keys: alias.keys,
                alias_timeouts: alias.timeouts,
                alias_transfer: alias.transfer,
                ..S3Target::plain(Some(alias.url), bucket, root, None)
            });
        }
        return Ok(S3Target::plain(None, first, after, None));
    }
    if lower.starts_with("gs3://") {
        let (bucket, root) = split_bucket(&base[6..])?;
        return Ok(S3Target::plain(Some("https://storage.googleapis.com".into()), bucket, root, None));
    }
    let (scheme, rest) = if lower.starts_with("https://") { ("https", &base[8..]) } else { ("http", &base[7..]) };
    let (hostport, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = hostport.split(':').next().unwrap_or("").to_ascii_lowercase();
    if host.is_empty() {
        return err(Kind::Url, "S3 URL without a host");
    }
    if let Some(target) = amazon_target(&host, path)? {
        return Ok(target);
    }
    let (bucket, root) = split_bucket(path)?;
    Ok(S3Target::plain(Some(format!("{scheme}://{hostport}")), bucket, root, None))
}

/// An AWS host name (`s3 | s3.<region> | <bucket>.s3 | <bucket>.s3.<region>` under
/// `amazonaws.com`, bucket names may hold dots) with the path after it; `None` for other hosts.
fn amazon_target(host: &str, path: &str) -> Result<Option<S3Target>> {
    let Some(prefix) = host.strip_suffix(".amazonaws.com") else { return Ok(None) };
    let labels: Vec<&str> = prefix.split('.').collect();
    let Some(i) = labels.iter().rposition(|l| *l == "s3" || l.starts_with("s3-")) else { return Ok(None) };
    let region = labels.get(i + 1).map(|r| r.to_string()).or_else(|| labels[i].strip_prefix("s3-").map(str::to_string));
    if i == 0 {
        let (bucket, root) = split_bucket(path)?;
        return Ok(Some(S3Target::plain(None, bucket, root, region)));
    }
    Ok(Some(S3Target::plain(None, labels[..i].join("."), percent_decode(path.trim_matches('/')), region)))
}

impl S3Target {
    /// A target with no alias: the endpoint the name gives (`None`: AWS's), its bucket and root.
    fn plain(endpoint: Option<String>, bucket: String, root: String, url_region: Option<String>) -> S3Target {
        S3Target {
            endpoint,
            bucket,
            root,
            url_region,
            alias_keys: None,
            alias_timeouts: AliasTimeouts::default(),
            alias_transfer: AliasTransfer::default(),
        }
    }
}

// ---- S3netCDF4 aliases ---------------------------------------------------------------------

struct Alias {
    url: String,
    keys: Option<(String, String)>,
    timeouts: AliasTimeouts,
    transfer: AliasTransfer,
}

fn alias_file() -> Option<PathBuf> {
    crate::config::s3nc_config()
}

/// The alias `s3://<name>` from `~/.s3nc.json` (or `$S3_NC_CONFIG`), when one is configured.
fn alias_for(name: &str) -> Result<Option<Alias>> {
    let Some(path) = alias_file() else { return Ok(None) };
    let Ok(text) = std::fs::read(&path) else { return Ok(None) };
    alias_in(&text, name, &path.display().to_string())
}

/// The name of an S3netCDF4 alias (`~/.s3nc.json`) whose endpoint is `endpoint`
/// (`scheme://host[:port]`): how S3netCDF4 names objects there (`s3://<alias>/bucket/key`).
pub fn alias_named_for(endpoint: &str) -> Option<String> {
    let text = std::fs::read(alias_file()?).ok()?;
    let doc: serde_json::Value = serde_json::from_slice(&text).ok()?;
    let same = |url: &str| url.trim_end_matches('/').eq_ignore_ascii_case(endpoint.trim_end_matches('/'));
    doc.get("hosts")?.as_object()?.iter().find_map(|(name, host)| {
        let alias = name.strip_prefix("s3://")?;
        (!alias.is_empty() && host.get("url").and_then(|u| u.as_str()).is_some_and(same)).then(|| alias.to_string())
    })
}

/// The alias `s3://<name>` in the text of an `.s3nc.json` file (`file` names it in errors).
fn alias_in(text: &[u8], name: &str, file: &str) -> Result<Option<Alias>> {
    let bad = |why: &str| Error::new(Kind::Invalid, format!("{file}: {why}"));
    let doc: serde_json::Value = serde_json::from_slice(text).map_err(|_| bad("not valid JSON"))?;
    if doc.get("version").and_then(|v| v.as_str()) != Some("9") {
        return Err(bad("\"version\" must be \"9\""));
    }
    let hosts = doc.get("hosts").and_then(|h| h.as_object()).ok_or_else(|| bad("no \"hosts\" object"))?;
    let Some(host) = hosts.get(&format!("s3://{name}")) else { return Ok(None) };
    let url = host.get("url").and_then(|u| u.as_str()).ok_or_else(|| bad("alias without \"url\""))?;
    let creds = host.get("credentials");
    let key = |k: &str| creds.and_then(|c| c.get(k)).and_then(|v| v.as_str()).map(str::to_string);
    let keys = match (key("accessKey"), key("secretKey")) {
        (Some(a), Some(s)) if !a.is_empty() => Some((a, s)),
        _ => None,
    };
    // The alias's backend (`"backend": "s3aioFileObject"`) names its entry in `backends`.
    let backend = host.get("backend").and_then(|b| b.as_str()).and_then(|b| doc.get("backends")?.get(b));
    let seconds = |k: &str| {
        let v = backend?.get(k)?;
        let secs = v.as_f64().or_else(|| v.as_str()?.trim().parse().ok())?;
        std::time::Duration::try_from_secs_f64(secs).ok().filter(|d| !d.is_zero())
    };
    let timeouts = AliasTimeouts { connect: seconds("connect_timeout"), read: seconds("read_timeout") };
    let flag = |k: &str| {
        let v = backend?.get(k)?;
        v.as_bool().or_else(|| match v.as_str()?.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Some(true),
            "false" | "no" | "0" => Some(false),
            _ => None,
        })
    };
    let transfer = AliasTransfer {
        multipart_download: flag("enable_multipart_download"),
        multipart_upload: flag("enable_multipart_upload"),
        part_size: backend.and_then(|b| b.get("maximum_part_size")).and_then(size_value).filter(|n| *n > 0),
        max_parts: backend
            .and_then(|b| b.get("maximum_parts"))
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()))
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0),
    };
    Ok(Some(Alias { url: url.trim_end_matches('/').to_string(), keys, timeouts, transfer }))
}

/// An S3netCDF4 size: a number of bytes, or a string with a decimal unit (`"50MB"` is
/// 50,000,000 bytes: S3netCDF4 multiplies by powers of 1000 whatever its comment says).
fn size_value(v: &serde_json::Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let t = v.as_str()?.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = (t[..split].trim().parse::<f64>().ok()?, t[split..].trim().to_ascii_uppercase());
    let mult = match unit.as_str() {
        "" | "B" => 1e0,
        "KB" | "K" => 1e3,
        "MB" | "M" => 1e6,
        "GB" | "G" => 1e9,
        "TB" | "T" => 1e12,
        "PB" | "P" => 1e15,
        _ => return None,
    };
    let bytes = num * mult;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// The process-wide settings of the S3netCDF4 configuration file: the memory budget for
/// netCDF objects held in memory (`resource_allocation.memory`) and where bigger ones are
/// cached (`cache_location`). Empty when there is no file or it is not valid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    pub memory: Option<u64>,
    pub cache_location: Option<PathBuf>,
    /// Fragment files an aggregated dataset keeps open at once (`resource_allocation.filehandles`,
    /// or S3netCDF4's `disk_handles`).
    pub filehandles: Option<u64>,
}

pub fn resources() -> Resources {
    let Some(text) = alias_file().and_then(|p| std::fs::read(p).ok()) else { return Resources::default() };
    resources_in(&text)
}

fn resources_in(text: &[u8]) -> Resources {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(text) else { return Resources::default() };
    Resources {
        memory: doc.get("resource_allocation").and_then(|r| r.get("memory")).and_then(size_value),
        filehandles: doc
            .get("resource_allocation")
            .and_then(|r| r.get("filehandles").or_else(|| r.get("disk_handles")))
            .and_then(size_value)
            .filter(|n| *n > 0),
        cache_location: doc
            .get("cache_location")
            .and_then(|c| c.as_str())
            .filter(|c| !c.trim().is_empty())
            .map(|c| crate::config::expand_home(c.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALIASES: &str = r#"{"version": "9", "hosts": {"s3://t0": {"url": "http://h:9000/", "backend": "b",
        "credentials": {"accessKey": "a", "secretKey": "s"}}}, "backends": {"b": {"connect_timeout": 3, "read_timeout": "1e9"}}}"#;

    proptest! {
        /// `.s3nc.json` texts, arbitrary and mutated from a valid one: an alias or an error.
        #[test]
        fn fuzz_s3nc_json(bytes in proptest::collection::vec(any::<u8>(), 0..512),
                          edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6), cut in any::<usize>()) {
            let _ = alias_in(&bytes, "t0", "x");
            let _ = alias_in(&crate::bytes::mutated(ALIASES.as_bytes(), &edits, cut), "t0", "x");
        }

        /// Dataset names of every shape: a target or an error, never a panic.
        #[test]
        fn fuzz_s3_urls(tail in any::<String>(), scheme in prop::sample::select(vec!["s3://", "https://", "http://127.0.0.1:1/", "gs3://", "https://s3.amazonaws.com/", "https://b.s3.x.amazonaws.com/"])) {
            let _ = parse_target(&format!("{scheme}{tail}"));
            let _ = is_s3_url(&format!("{scheme}{tail}"), std::slice::from_ref(&tail));
        }
    }

    #[test]
    fn alias_transfer_and_resources() {
        let text = r#"{"version": "9", "hosts": {"s3://t1": {"url": "http://h:1", "backend": "b"}},
            "backends": {"b": {"enable_multipart_upload": false, "enable_multipart_download": "true",
                               "maximum_part_size": "50MB", "maximum_parts": 4}},
            "cache_location": "/var/tmp/c", "resource_allocation": {"memory": "1.5GB"}}"#;
        let a = alias_in(text.as_bytes(), "t1", "x").unwrap().unwrap();
        assert_eq!(
            a.transfer,
            AliasTransfer {
                multipart_download: Some(true),
                multipart_upload: Some(false),
                part_size: Some(50_000_000),
                max_parts: Some(4)
            }
        );
        let r = resources_in(text.as_bytes());
        assert_eq!((r.memory, r.cache_location), (Some(1_500_000_000), Some(PathBuf::from("/var/tmp/c"))));
        assert_eq!(size_value(&serde_json::json!("64kB")), Some(64_000));
        assert_eq!(size_value(&serde_json::json!(12)), Some(12));
        assert_eq!(size_value(&serde_json::json!("lots")), None);
        assert_eq!(resources_in(b"nonsense"), Resources::default());
    }

    #[test]
    fn alias_from_text() {
        let a = alias_in(ALIASES.as_bytes(), "t0", "x").unwrap().unwrap();
        assert_eq!(a.url, "http://h:9000");
        assert!(alias_in(ALIASES.as_bytes(), "other", "x").unwrap().is_none());
        assert!(alias_in(b"{", "t0", "x").is_err());
    }

    #[test]
    fn url_forms() {
        let t = parse_target("s3://bucket/a/b").unwrap();
        assert_eq!((t.endpoint.as_deref(), t.bucket.as_str(), t.root.as_str()), (None, "bucket", "a/b"));
        let t = parse_target("https://s3.us-west-2.amazonaws.com/bkt/x/y").unwrap();
        assert_eq!((t.bucket.as_str(), t.root.as_str(), t.url_region.as_deref()), ("bkt", "x/y", Some("us-west-2")));
        let t = parse_target("https://my.bkt.s3.eu-west-1.amazonaws.com/k/z").unwrap();
        assert_eq!((t.bucket.as_str(), t.root.as_str(), t.url_region.as_deref(), t.endpoint), ("my.bkt", "k/z", Some("eu-west-1"), None));
        let t = parse_target("https://bkt.s3.amazonaws.com/k").unwrap();
        assert_eq!((t.bucket.as_str(), t.url_region), ("bkt", None));
        let t = parse_target("https://s3.amazonaws.com/bkt/k").unwrap();
        assert_eq!(t.bucket, "bkt");
        let t = parse_target("http://127.0.0.1:9000/bkt/deep/key").unwrap();
        assert_eq!((t.endpoint.as_deref(), t.bucket.as_str(), t.root.as_str()), (Some("http://127.0.0.1:9000"), "bkt", "deep/key"));
        let t = parse_target("gs3://gb/k").unwrap();
        assert_eq!(t.endpoint.as_deref(), Some("https://storage.googleapis.com"));
        assert!(parse_target("s3:///k").is_err());
        assert!(is_s3_url("https://x.s3.amazonaws.com/k", &[]));
        assert!(!is_s3_url("https://example.com/dods/x", &[]));
        assert!(is_s3_url("http://127.0.0.1:9000/b/k", &["s3".into()]));
    }
}

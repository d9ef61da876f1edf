//! The trust rule for documents that name other data (aggregation masters, reference sets):
//! a document fetched from a remote store may name targets in its own place only, unless the
//! user allowed more (README "Security").
//!
//! A document's place: for a local document, everything (the user chose to open a file of
//! theirs); for a document on S3, its endpoint, its bucket and the folder of its key (a master
//! `s3://b/run/m.nca` may name anything under `s3://b/run/`); for a document on HTTP(S), its
//! origin (scheme, host, port) and the folder of its path. Targets are compared after `.` and
//! `..` segments are resolved, so `../` cannot climb out of the folder; S3 names in every form
//! the library accepts (`s3://`, aliases, path-style and virtual-host URLs) are compared by the
//! endpoint, bucket and key they resolve to. Anything else a remote document names (a local
//! file, another host, a cloud metadata address, another bucket) is NC_EACCESS.
//!
//! Consent: `NCZARR_ALLOW_TARGETS` (environment) or `NCZARR.ALLOW_TARGETS` (`.ncrc`), a list of
//! prefixes separated by commas or spaces (`s3://other-bucket/,/data/archive/,https://host/p/`),
//! any target starting with one of them allowed; `*` (or `all`) allows every target.

use crate::error::{Kind, Result, err};

/// Where a name points, for comparing places.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Location {
    /// A path on this machine (absolute, or relative to the working directory).
    Local(String),
    /// A remote object: `origin` names the server (`https://host:443`, or `s3:aws` for AWS
    /// itself), `path` is `/bucket/key` on S3 or the URL's path on HTTP, with `.`/`..` resolved.
    Remote { origin: String, path: String },
}

/// Refuses `target`, which the document `document` names, unless the rule above or the
/// user's consent allows it. `what` says what the target is, for the message.
pub fn check_target(document: &str, target: &str, what: &str) -> Result<()> {
    let Location::Remote { origin, path } = locate(document)? else { return Ok(()) };
    let folder = match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    };
    let to = match locate(target) {
        Ok(to) => to,
        Err(e) => {
            let msg = format!("{what} {target} named by the remote document {document}: refused ({})", e.context);
            crate::trace::warn(&msg);
            return err(Kind::Access, msg);
        }
    };
    if let Location::Remote { origin: o, path: p } = &to
        && *o == origin
        && p.starts_with(folder)
    {
        return Ok(());
    }
    if allowed_by_user(&to) {
        return Ok(());
    }
    let plain = |s: &str| s.split('#').next().unwrap_or(s).to_string();
    let why = match &to {
        Location::Local(_) => "a local file",
        Location::Remote { origin: o, .. } if *o != origin => "on another server",
        Location::Remote { .. } => "outside the document's folder (bucket and prefix on S3)",
    };
    let msg = format!(
        "{what} {} named by the remote document {} is {why}: refused (allow it with NCZARR_ALLOW_TARGETS, README \"Security\")",
        plain(target),
        plain(document)
    );
    crate::trace::warn(&msg);
    err(Kind::Access, msg)
}

/// Where `name` points. A name with a scheme other than `file`, `s3`, `gs3`, `http`, `https`
/// is refused: the library reads nothing else, and an unknown scheme must not pass as local.
fn locate(name: &str) -> Result<Location> {
    let base = name.split('#').next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    if lower.starts_with("file://") {
        let path = &base[7..];
        return Ok(Location::Local(normalize(path.strip_prefix("localhost").unwrap_or(path))));
    }
    if lower.starts_with("s3://") || lower.starts_with("gs3://") {
        return s3_location(base);
    }
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let host = lower.split("://").nth(1).unwrap_or("").split('/').next().unwrap_or("");
        let host = host.rsplit('@').next().unwrap_or(host).split(':').next().unwrap_or("");
        // AWS and Google host forms name their bucket in the host or path: compare them as S3.
        if host.ends_with(".amazonaws.com") || host == "storage.googleapis.com" {
            return s3_location(base);
        }
        let rest = &base[lower.find("://").map_or(0, |i| i + 3)..];
        let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        let scheme = if lower.starts_with("https") { "https" } else { "http" };
        return Ok(Location::Remote {
            origin: origin_of(&format!("{scheme}://{authority}")),
            path: normalize(&format!("/{}", super::percent_decode(path.split('?').next().unwrap_or(path)))),
        });
    }
    if let Some((scheme, _)) = base.split_once("://")
        && !scheme.is_empty()
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return err(Kind::Url, format!("{base}: the scheme {scheme}:// is not one the library reads"));
    }
    Ok(Location::Local(normalize(base)))
}

/// `scheme://host:port`, lower case, the default port written out, credentials dropped.
fn origin_of(endpoint: &str) -> String {
    let lower = endpoint.trim_end_matches('/').to_ascii_lowercase();
    let (scheme, rest) = lower.split_once("://").unwrap_or(("https", &lower));
    let authority = rest.split('/').next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let has_port = authority.rsplit_once(':').is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && !authority.ends_with(']');
    if has_port { format!("{scheme}://{authority}") } else { format!("{scheme}://{authority}:{}", if scheme == "http" { 80 } else { 443 }) }
}

/// An S3 name as the server it goes to (the S3 driver's own choice, `effective_endpoint`; `s3:aws`
/// for AWS itself) and `/bucket/key`.
fn s3_location(base: &str) -> Result<Location> {
    let t = super::s3::parse_target(base)?;
    let origin = t.effective_endpoint().map_or_else(|| "s3:aws".to_string(), |e| origin_of(&e));
    Ok(Location::Remote { origin, path: normalize(&format!("/{}/{}", t.bucket, t.root)) })
}

/// `.` and `..` segments resolved (RFC 3986's remove_dot_segments), repeated slashes kept as
/// they are (S3 keys may hold them); `..` above the top stays at the top, as a server resolving
/// the URL would. Fragment names joined to a master's folder are resolved with it too, so what
/// is checked is what is read.
pub fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {}
            ".." => {
                out.pop();
            }
            "" if i == 0 && absolute => {}
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if absolute { format!("/{joined}") } else { joined }
}

/// The user's list (`NCZARR_ALLOW_TARGETS`, else the rc key `NCZARR.ALLOW_TARGETS`).
fn allowed_by_user(to: &Location) -> bool {
    let Some(list) = crate::config::allow_targets() else { return false };
    list.split([',', ' ', '\n', '\t']).map(str::trim).filter(|p| !p.is_empty()).any(|prefix| {
        if prefix == "*" || prefix.eq_ignore_ascii_case("all") {
            return true;
        }
        // Both sides resolved the same way: `..` in the target cannot reach past a prefix.
        match (to, locate(prefix)) {
            (Location::Local(p), Ok(Location::Local(allowed))) => under(p, &allowed),
            (Location::Remote { origin, path }, Ok(Location::Remote { origin: o, path: allowed })) => *origin == o && under(path, &allowed),
            _ => false,
        }
    })
}

/// Is `path` at or under `allowed` (a folder when it ends in `/`, else a path prefix that
/// must end at a segment boundary)?
fn under(path: &str, allowed: &str) -> bool {
    if allowed.ends_with('/') || allowed.is_empty() {
        return path.starts_with(allowed);
    }
    path == allowed || path.starts_with(&format!("{allowed}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(doc: &str, target: &str) -> bool {
        match check_target(doc, target, "fragment") {
            Ok(()) => false,
            Err(e) => {
                assert_eq!(e.kind, Kind::Access, "{doc} -> {target}: {e:?}");
                true
            }
        }
    }

    #[test]
    fn local_documents_name_anything() {
        assert!(!refused("/data/m.nca", "/etc/passwd"));
        assert!(!refused("file:///data/m.nca", "s3://b/x.nc"));
        assert!(!refused("m.nca", "http://169.254.169.254/latest"));
    }

    #[test]
    fn remote_documents_name_their_own_folder_only() {
        let doc = "http://127.0.0.1:9000/bucket/run/m.nca#mode=s3";
        assert!(!refused(doc, "http://127.0.0.1:9000/bucket/run/m/m.v.0.nc#mode=bytes"));
        assert!(!refused(doc, "http://127.0.0.1:9000/bucket/run/deeper/f.nc"));
        assert!(refused(doc, "/tmp/secret.nc"));
        assert!(refused(doc, "file:///tmp/secret.nc"));
        assert!(refused(doc, "FILE:///tmp/secret.nc"), "a scheme in capitals is still a local file");
        assert!(refused(doc, "http://169.254.169.254/latest/meta-data#mode=bytes"));
        assert!(refused(doc, "http://127.0.0.1:9001/bucket/run/f.nc"));
        assert!(refused(doc, "http://localhost:9000/bucket/run/f.nc"), "another host name is another origin");
        assert!(refused(doc, "http://127.0.0.1:9000/other/run/f.nc"));
        assert!(refused(doc, "http://127.0.0.1:9000/bucket/elsewhere/f.nc"));
        assert!(refused(doc, "http://127.0.0.1:9000/bucket/run/../elsewhere/f.nc"), "a .. escape");
        assert!(refused(doc, "http://127.0.0.1:9000/bucket/run/%2e%2e/x.nc"), "an encoded .. escape");
        assert!(refused(doc, "ftp://127.0.0.1/bucket/run/f.nc"));
        let s3 = "s3://bucket/run/m.nca";
        assert!(!refused(s3, "s3://bucket/run/m/m.v.0.nc"));
        assert!(refused(s3, "s3://other/run/m/m.v.0.nc"));
        assert!(refused(s3, "s3://bucket/run2/x.nc"), "a sibling folder sharing the prefix's text");
        assert!(refused(s3, "s3://bucket/run/./../x.nc"));
        assert!(!refused("https://s3.us-east-1.amazonaws.com/bucket/run/m.nca", "s3://bucket/run/f.nc"), "path style is the same place");
        assert!(!refused("https://bucket.s3.eu-west-2.amazonaws.com/run/m.nca", "s3://bucket/run/f.nc"), "virtual host too");
        assert!(!refused("s3://bucket/m.nca", "s3://bucket/any/thing.nc"), "a document at the bucket's top names the bucket");
    }

    #[test]
    fn the_user_allows_prefixes() {
        let doc = "http://127.0.0.1:9000/bucket/run/m.nca#mode=s3";
        crate::config::set_allow_targets_for_test(Some("/data/archive/, s3://other/pub/"));
        assert!(!refused(doc, "/data/archive/x.nc"));
        assert!(refused(doc, "/data/archive/../secret.nc"));
        assert!(refused(doc, "/data/archive2/x.nc"));
        assert!(!refused(doc, "s3://other/pub/x.nc"));
        assert!(refused(doc, "s3://other/private/x.nc"));
        crate::config::set_allow_targets_for_test(Some("*"));
        assert!(!refused(doc, "/etc/passwd"));
        crate::config::set_allow_targets_for_test(None);
        assert!(refused(doc, "/data/archive/x.nc"));
    }

    #[test]
    fn places_compare_resolved() {
        assert_eq!(normalize("/a/b/../c/./d"), "/a/c/d");
        assert_eq!(normalize("/../../x"), "/x");
        assert_eq!(origin_of("HTTP://Host:80/"), "http://host:80");
        assert_eq!(origin_of("https://host"), "https://host:443");
        assert_eq!(origin_of("http://user:pw@host"), "http://host:80");
        assert!(under("/data/archive/x.nc", "/data/archive"));
        assert!(!under("/data/archive2/x.nc", "/data/archive"));
        assert!(under("/data/archive/x.nc", "/data/"));
    }
}

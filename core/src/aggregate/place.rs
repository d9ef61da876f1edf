//! Names: where an aggregated dataset's master and fragments are (`Place`), which layout a
//! name asks for (`Convention`), and where a fragment a master names is (`resolve`).

use crate::error::{Kind, Result, err};

/// The master's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convention {
    /// CF aggregation variables (CF-1.12): the default.
    Cf,
    /// S3netCDF4's CFA-0.5: a `cfa_<var>` group per variable.
    V05,
    /// CFA-0.4: the partition matrix as JSON in `cfa_array`.
    V04,
}

/// Where an aggregated dataset's master and fragments are.
#[derive(Debug, Clone)]
pub struct Place {
    /// The name the caller gave (relative fragment names resolve against it).
    pub original: String,
    /// The master as the library is asked to create it: a path, or an S3 URL as a netCDF object.
    pub master: String,
    /// The master's file name without its extension: the fragments' directory and prefix.
    pub stem: String,
    /// The master's directory, for the fragments' directory (empty: the working directory).
    pub local_dir: Option<String>,
    /// The master names fragments relative to itself (`cfa_names=relative`), not in full.
    pub relative_names: bool,
}

impl Place {
    pub fn parse(name: &str) -> Result<Place> {
        let base = name.split('#').next().unwrap_or(name);
        let lower = base.to_ascii_lowercase();
        let remote = ["s3://", "http://", "https://"].iter().any(|s| lower.starts_with(s));
        let path = if remote { base.to_string() } else { strip_file_scheme(base).to_string() };
        let file = path.rsplit('/').next().unwrap_or(&path);
        let stem = match file.rsplit_once('.') {
            Some((stem, _)) if !stem.is_empty() => stem.to_string(),
            _ => file.to_string(),
        };
        if stem.is_empty() {
            return err(Kind::Invalid, format!("{name}: no file name for the master"));
        }
        let dir = path.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/"));
        let params = name.split_once('#').map(|(_, f)| crate::url::parse_fragment(f)).unwrap_or_default();
        let names = params.get("cfa_names").cloned().or_else(crate::config::cfa_names).unwrap_or_default();
        Ok(Place {
            relative_names: names.trim().eq_ignore_ascii_case("relative"),
            original: name.to_string(),
            master: if remote { format!("{path}#mode=bytes") } else { path.clone() },
            stem,
            local_dir: (!remote).then_some(dir),
        })
    }

    /// How a master names a fragment the library opens as `resolved`: relative to the master
    /// when it lies under the master's directory, else as it is.
    pub fn name_in_master(&self, resolved: &str) -> String {
        let base = self.original.split('#').next().unwrap_or(&self.original);
        let base = if self.local_dir.is_some() { strip_file_scheme(base) } else { base };
        let dir = base.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/"));
        let plain = resolved.split('#').next().unwrap_or(resolved);
        match plain.strip_prefix(dir.as_str()) {
            Some(rel) if !dir.is_empty() || !plain.contains("://") => rel.to_string(),
            _ => plain.to_string(),
        }
    }

    /// How the master names the fragment `rel` (its name relative to the master, or a full
    /// name). By default in full, so that other readers open it from anywhere: S3netCDF4 opens a
    /// name exactly as written and cfdm resolves relative URIs against its working directory.
    /// CFA-0.4/0.5 as S3netCDF4 writes them: an absolute path, an `s3://` name (through the
    /// `~/.s3nc.json` alias of a custom endpoint when there is one); CF-1.12: a `file://` URI or
    /// the object's URL. With `relative_names`, the relative name (`./` first for CFA, as
    /// S3netCDF4 writes one): a folder that moves as a whole, read from the master's place.
    pub fn master_name(&self, rel: &str, convention: Convention) -> String {
        let cf = convention == Convention::Cf;
        if self.relative_names {
            return if cf || rel.starts_with('/') || rel.contains("://") || rel.starts_with("./") {
                rel.to_string()
            } else {
                format!("./{rel}")
            };
        }
        let resolved = resolve(&self.original, rel);
        let plain = resolved.split('#').next().unwrap_or(&resolved);
        if plain.contains("://") {
            let lower = plain.to_ascii_lowercase();
            let scheme = ["http://", "https://"].into_iter().find(|s| lower.starts_with(s));
            if let (false, Some(scheme)) = (cf, scheme) {
                let rest = &plain[scheme.len()..];
                if let Some((host, path)) = rest.split_once('/')
                    && let Some(alias) = crate::url::s3::alias_named_for(&format!("{scheme}{host}"))
                {
                    return format!("s3://{alias}/{path}");
                }
            }
            return plain.to_string();
        }
        let absolute = if plain.starts_with('/') {
            plain.to_string()
        } else {
            std::env::current_dir().map(|d| d.join(plain).display().to_string()).unwrap_or_else(|_| plain.to_string())
        };
        if cf { format!("file://{absolute}") } else { absolute }
    }

    /// The fragment's name as the master records it (relative to the master).
    pub fn relative(&self, var: &str, index: &[u64]) -> String {
        let at: Vec<String> = index.iter().map(u64::to_string).collect();
        format!("{0}/{0}.{var}.{1}.nc", self.stem, at.join("."))
    }
}

fn strip_file_scheme(base: &str) -> &str {
    match base.strip_prefix("file://") {
        Some(p) => p.strip_prefix("localhost").unwrap_or(p),
        None => base,
    }
}

/// Does the name ask for an aggregated dataset (`cfa` in its mode, or a `cfa=` version)?
pub fn wants_cfa(name: &str) -> Option<Convention> {
    let (_, fragment) = name.split_once('#')?;
    let params = crate::url::parse_fragment(fragment);
    let mode_says = params.get("mode").is_some_and(|m| m.split(',').any(|w| w.eq_ignore_ascii_case("cfa")));
    match params.get("cfa").map(|v| v.trim()) {
        Some("0.5") => Some(Convention::V05),
        Some("0.4") => Some(Convention::V04),
        Some(_) => Some(Convention::Cf),
        None => mode_says.then_some(Convention::Cf),
    }
}

/// Where a fragment named `file` in a master named `master` is.
pub fn resolve(master: &str, file: &str) -> String {
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
    // `..` and `.` resolved as a URL resolver would (the object read is the one the trust
    // rule checks): in the path after `scheme://authority`, or in the whole local path.
    let joined = match joined.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            format!("{scheme}://{authority}{}", crate::url::trust::normalize(&format!("/{path}")))
        }
        None if joined.contains("..") || joined.contains("/./") => crate::url::trust::normalize(&joined),
        None => joined,
    };
    let remote = ["http://", "https://"].iter().any(|s| base.to_ascii_lowercase().starts_with(s));
    match (remote, fragment.is_empty()) {
        (true, _) => format!("{joined}#mode=bytes"),
        (false, _) => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_where_fragments_go() {
        let p = Place::parse("file:///data/run/x.nca#mode=cfa").unwrap();
        assert_eq!((p.master.as_str(), p.stem.as_str(), p.local_dir.as_deref()), ("/data/run/x.nca", "x", Some("/data/run/")));
        assert_eq!(p.relative("tas", &[0, 2, 1]), "x/x.tas.0.2.1.nc");
        assert_eq!(resolve(&p.original, &p.relative("tas", &[1])), "/data/run/x/x.tas.1.nc");
        let p = Place::parse("s3://b/k/x.nca#mode=cfa").unwrap();
        assert_eq!((p.master.as_str(), p.local_dir.is_none()), ("s3://b/k/x.nca#mode=bytes", true));
        assert_eq!(resolve(&p.original, &p.relative("v", &[0])), "s3://b/k/x/x.v.0.nc");
        let p = Place::parse("http://h:9/b/x.nca#mode=cfa,s3").unwrap();
        assert_eq!(resolve(&p.original, &p.relative("v", &[0])), "http://h:9/b/x/x.v.0.nc#mode=bytes");
        assert_eq!(Place::parse("x.nca#mode=cfa").unwrap().local_dir.as_deref(), Some(""));
        assert_eq!(wants_cfa("x.nca#mode=cfa"), Some(Convention::Cf));
        assert_eq!(wants_cfa("x.nca#mode=cfa&cfa=0.4"), Some(Convention::V04));
        assert_eq!(wants_cfa("x.nca#cfa=0.5"), Some(Convention::V05));
        assert_eq!(wants_cfa("x.nca#mode=nczarr,file"), None);
        assert_eq!(wants_cfa("x.nca"), None);
    }

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
        assert_eq!(resolve("http://h:1/b/k/x.nca#mode=s3", "../../o/a.nc"), "http://h:1/o/a.nc#mode=bytes");
        assert_eq!(resolve("s3://b/k/x.nca", "./../a.nc"), "s3://b/a.nc");
        assert_eq!(resolve("/data/run/x.nca", "../a.nc"), "/data/a.nc");
    }
}

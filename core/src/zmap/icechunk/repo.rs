//! Opening an Icechunk repository: the version a name picks, the storage under it, which
//! virtual chunk containers may be read, the spec version of a new one, commit messages.

use crate::error::{Error, Kind, Result, err};
use crate::url::OpenSpec;
use crate::zmap::s3::runtime::block_on;
use icechunk::format::format_constants::SpecVersionBin;
use icechunk::repository::VersionInfo;
use icechunk::session::Session;
use icechunk::{Repository, Storage};
use std::sync::Arc;

/// Which version of the repository a name asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Version {
    Branch(String),
    Tag(String),
    Snapshot(String),
}

impl Version {
    /// The fragment's `branch=`, `tag=` or `snapshot=` (at most one), default branch `main`.
    pub(crate) fn of(spec: &OpenSpec) -> Result<Version> {
        let get = |k: &str| spec.params.get(k).filter(|v| !v.is_empty()).cloned();
        match (get("branch"), get("tag"), get("snapshot")) {
            (None, None, None) => Ok(Version::Branch("main".into())),
            (Some(b), None, None) => Ok(Version::Branch(b)),
            (None, Some(t), None) => Ok(Version::Tag(t)),
            (None, None, Some(s)) => Ok(Version::Snapshot(s)),
            _ => err(Kind::Invalid, "name at most one of branch=, tag= and snapshot="),
        }
    }
}

/// The session of `version`: writable on a branch (made from `main`'s tip when a create names
/// one that does not exist yet), read-only otherwise.
pub(super) async fn session_at(repo: &Repository, version: &Version, writable: bool, create: bool, place: &str) -> Result<Session> {
    let missing = |what: &str| Error::new(Kind::NoObject, format!("{place}: no {what}"));
    match version {
        Version::Branch(b) if writable => {
            if repo.lookup_branch(b).await.is_err() {
                if !create {
                    return Err(missing(&format!("branch {b}")));
                }
                let tip = repo.lookup_branch("main").await.map_err(|_| missing("branch main"))?;
                repo.create_branch(b, &tip).await.map_err(|e| Error::new(Kind::Io, format!("{place}: {}", e.kind)))?;
            }
            repo.writable_session(b).await.map_err(|_| missing(&format!("branch {b}")))
        }
        Version::Branch(b) => {
            repo.readonly_session(&VersionInfo::BranchTipRef(b.clone())).await.map_err(|_| missing(&format!("branch {b}")))
        }
        Version::Tag(t) => repo.readonly_session(&VersionInfo::TagRef(t.clone())).await.map_err(|_| missing(&format!("tag {t}"))),
        Version::Snapshot(s) => {
            let id = s.as_str().try_into().map_err(|_| Error::new(Kind::Invalid, format!("snapshot={s}: not a snapshot id")))?;
            repo.readonly_session(&VersionInfo::SnapshotId(id)).await.map_err(|_| missing(&format!("snapshot {s}")))
        }
    }
}

/// The repository's virtual chunk containers (URL prefixes of the objects its virtual chunks
/// point into) we may read, with how: the rule for documents that name other data (README
/// "Security") decides, the repository being the document. A local repository may name
/// anything; one on S3 or a web server its own folder, or what `NCZARR_ALLOW_TARGETS` allows.
/// Others are not authorised: a read of a chunk there fails with Icechunk's reason.
pub(super) fn authorized_containers(
    config: &icechunk::RepositoryConfig,
    repository: &str,
) -> std::collections::HashMap<String, Option<icechunk::config::Credentials>> {
    use icechunk::config::Credentials;
    let mut allowed = std::collections::HashMap::new();
    for container in config.virtual_chunk_containers() {
        let prefix = container.url_prefix();
        if let Err(e) = crate::url::trust::check_target(repository, prefix, "virtual chunk container") {
            crate::trace::emit(1, &format!("icechunk: {}", e.context));
            continue;
        }
        let scheme = prefix.split_once("://").map_or("", |(s, _)| s).to_ascii_lowercase();
        let credentials = match scheme.as_str() {
            "file" => Some(Credentials::LocalFileSystemAccess),
            "http" | "https" => Some(Credentials::HttpAccess),
            // (Google's and Azure's stores are not built in.)
            "s3" | "tigris" => Some(Credentials::S3(icechunk::storage::S3Credentials::FromEnv)),
            _ => continue,
        };
        allowed.insert(prefix.to_string(), credentials);
    }
    allowed
}

/// The storage under the repository: a local directory or an S3 prefix with the S3 driver's
/// endpoint, region and credentials.
pub(super) fn storage(spec: &OpenSpec) -> Result<Arc<dyn Storage + Send + Sync>> {
    let Some(target) = &spec.s3 else {
        let path = spec.path.clone();
        return block_on(async move { icechunk::new_local_filesystem_storage(&path).await })?
            .map_err(|e| Error::new(Kind::Io, format!("{}: {}", spec.path.display(), e.kind)));
    };
    let settings = crate::zmap::s3::credentials::resolve(target, &spec.params);
    let mut options = icechunk::storage::S3Options::default()
        .with_region(settings.region.clone())
        .with_anonymous(settings.keys.is_none())
        .with_allow_http(target.endpoint.as_deref().is_some_and(|e| e.starts_with("http://")))
        .with_force_path_style(target.endpoint.is_some());
    if let Some(endpoint) = &target.endpoint {
        options = options.with_endpoint_url(endpoint.clone());
    }
    let credentials = match &settings.keys {
        None => icechunk::storage::S3Credentials::Anonymous,
        Some(k) => icechunk::storage::S3Credentials::Static(icechunk::storage::S3StaticCredentials {
            access_key_id: k.access.clone(),
            secret_access_key: k.secret.clone(),
            session_token: k.token.clone(),
            expires_after: None,
        }),
    };
    let prefix = (!target.root.is_empty()).then(|| target.root.clone());
    icechunk::new_s3_storage(options, target.bucket.clone(), prefix, Some(credentials), Vec::new(), Vec::new(), None)
        .map_err(|e| Error::new(Kind::S3, format!("{}: {}", target.describe(), e.kind)))
}

/// The spec version `nc_create` makes a repository with (`NCZARR_ICECHUNK_SPEC`, default 1).
pub(super) fn spec_version() -> Result<SpecVersionBin> {
    match crate::config::icechunk_spec().as_deref() {
        None | Some("1") => Ok(SpecVersionBin::V1),
        Some("2") => Ok(SpecVersionBin::V2),
        Some(other) => err(Kind::Invalid, format!("NCZARR_ICECHUNK_SPEC={other}: Icechunk spec versions are 1 and 2")),
    }
}

/// `NCZARR_ICECHUNK_MESSAGE`, else "<program>: netCDF dataset written by nczarr-rs".
pub(super) fn commit_message() -> String {
    crate::config::icechunk_message().unwrap_or_else(|| {
        let program = std::env::args_os()
            .next()
            .map(std::path::PathBuf::from)
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "a program".into());
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        format!("{program}: netCDF dataset written by nczarr-rs (unix time {now})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_by_name() {
        let spec = |f: &str| crate::url::parse(&format!("file:///r#mode=nczarr,icechunk{f}")).unwrap().unwrap();
        assert_eq!(Version::of(&spec("")).unwrap(), Version::Branch("main".into()));
        assert_eq!(Version::of(&spec("&branch=dev")).unwrap(), Version::Branch("dev".into()));
        assert_eq!(Version::of(&spec("&tag=v1")).unwrap(), Version::Tag("v1".into()));
        assert_eq!(Version::of(&spec("&snapshot=ABC")).unwrap(), Version::Snapshot("ABC".into()));
        assert_eq!(Version::of(&spec("&tag=v1&branch=dev")).unwrap_err().kind, Kind::Invalid);
        let s = spec("");
        assert_eq!((s.driver, s.zarr_format), (Some(crate::url::Driver::Icechunk), Some(3)));
        assert_eq!(crate::url::parse("file:///r#mode=nczarr,icechunk,v2").unwrap_err().kind, Kind::Invalid);
        assert_eq!(crate::url::parse("file:///r#mode=nczarr,icechunk,zip").unwrap_err().kind, Kind::Invalid);
    }
}

//! Icechunk repositories (`#mode=nczarr,icechunk`): the Zarr v3 keys of one session of an
//! Icechunk repository, a directory or an S3 prefix, through the reference implementation (the
//! `icechunk` crate) on the S3 driver's tokio runtime.
//!
//! A version is picked by the name's fragment (`branch=`, `tag=`, `snapshot=`; default the
//! `main` branch). A writable open is one writable session on its branch; `flush` (nc_sync,
//! nc_close) commits it as one snapshot, rebasing onto a branch another writer moved when no
//! change of both touched the same chunk or metadata (else `Kind::Conflict`, nothing stored and
//! the branch keeps the other's snapshot); dropping the store without a flush (nc_abort, a
//! killed program) discards the session. Readers see whole commits only: that is Icechunk's.

use crate::error::{Error, Kind, Result, err};
use crate::url::OpenSpec;
use crate::zmap::s3::runtime::block_on;
use crate::zmap::{Caps, Key, Zmap};
use futures_util::{StreamExt as _, TryStreamExt as _};
use icechunk::conflicts::basic_solver::{BasicConflictSolver, VersionSelection};
use icechunk::format::ByteRange;
use icechunk::format::format_constants::SpecVersionBin;
use icechunk::repository::VersionInfo;
use icechunk::session::{Session, SessionErrorKind};
use icechunk::store::StoreErrorKind;
use icechunk::{Repository, Storage, Store};
use std::sync::Arc;
use tokio::sync::RwLock;

/// How many chunk writes (or reads) one batch keeps in flight.
const IN_FLIGHT: usize = 16;
/// A commit that lost a race is rebased and tried again this many times before giving up.
const REBASE_ATTEMPTS: u16 = 8;

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

pub(crate) struct IcechunkStore {
    repo: Repository,
    store: Store,
    session: Arc<RwLock<Session>>,
    /// The branch commits go to; `None`: a tag or snapshot, read-only.
    branch: Option<String>,
    /// Where the repository is, for messages.
    place: String,
    /// Storage errors are this kind (S3 or I/O).
    storage_kind: Kind,
}

impl IcechunkStore {
    /// The repository of `spec`, at the version its name picks. `create`: made if it does not
    /// exist, and the session starts from an empty hierarchy (netcdf-c's clobber, as one more
    /// commit: the replaced dataset stays in the history). `write`: a writable session (a tag
    /// or snapshot is NC_EPERM).
    pub(crate) fn open(spec: &OpenSpec, create: bool, write: bool) -> Result<IcechunkStore> {
        let version = Version::of(spec)?;
        let place = spec.s3.as_ref().map_or_else(|| spec.path.display().to_string(), |t| t.describe());
        let storage_kind = if spec.s3.is_some() { Kind::S3 } else { Kind::Io };
        let writable = create || write;
        let branch = match (&version, writable) {
            (Version::Branch(b), true) => Some(b.clone()),
            (Version::Branch(_), false) => None,
            (_, true) => return err(Kind::ReadOnly, format!("{place}: a tag or snapshot is read-only; write to a branch")),
            (_, false) => None,
        };
        let spec_version = if create { Some(spec_version()?) } else { None };
        let storage = storage(spec)?;
        let fail = |e: &dyn std::fmt::Display| Error::new(storage_kind, format!("{place}: {e}"));
        let (repo, session) = block_on(async {
            let exists = Repository::exists(storage.clone(), None).await.map_err(|e| fail(&e.kind))?;
            let repo = match (exists, spec_version) {
                (true, _) => Repository::open(storage).execute().await,
                (false, Some(v)) => Repository::create(storage).spec_version(v).execute().await,
                (false, None) => return err(Kind::NoObject, format!("{place}: no Icechunk repository")),
            }
            .map_err(|e| fail(&e.kind))?;
            let session = session_at(&repo, &version, writable, create, &place).await?;
            Ok::<_, Error>((repo, session))
        })??;
        let session = Arc::new(RwLock::new(session));
        let store = block_on(Store::from_session(session.clone()))?;
        let ice = IcechunkStore { repo, store, session, branch, place, storage_kind };
        if create {
            ice.run(|s| async move { s.clear().await })?;
        }
        Ok(ice)
    }

    /// Runs one store call on the runtime, its error ours.
    fn run<T, F, Fut>(&self, call: F) -> Result<T>
    where
        F: FnOnce(Store) -> Fut + Send,
        Fut: std::future::Future<Output = icechunk::store::StoreResult<T>> + Send,
        T: Send,
    {
        let store = self.store.clone();
        block_on(call(store))?.map_err(|e| self.error(&e.kind))
    }

    fn error(&self, kind: &StoreErrorKind) -> Error {
        let k = match kind {
            StoreErrorKind::ReadOnly => Kind::ReadOnly,
            StoreErrorKind::NotFound(_) => Kind::NoObject,
            StoreErrorKind::InvalidKey { .. } | StoreErrorKind::BadMetadata(_) | StoreErrorKind::BadChunkGridMetadata(_) => Kind::NcZarr,
            StoreErrorKind::SessionError(s) if is_conflict(s) => Kind::Conflict,
            _ => self.storage_kind,
        };
        Error::new(k, format!("{}: {kind}", self.place))
    }

    /// Commits the session's changes as one snapshot on its branch, then starts a new session
    /// from it (a committed Icechunk session is read-only).
    fn commit(&self, branch: &str) -> Result<()> {
        let message = commit_message();
        let solver = BasicConflictSolver {
            // Two writers of one chunk: the later commit fails, never overwrites (no lost update).
            on_chunk_conflict: VersionSelection::Fail,
            fail_on_delete_of_updated_array: true,
            fail_on_delete_of_updated_group: true,
        };
        let place = &self.place;
        let storage_kind = self.storage_kind;
        block_on(async {
            let mut session = self.session.write().await;
            if !session.has_uncommitted_changes() {
                return Ok(());
            }
            let committed = session.commit(message).rebase(&solver, REBASE_ATTEMPTS).execute().await;
            if let Err(e) = committed {
                let kind = if is_conflict(&e.kind) { Kind::Conflict } else { storage_kind };
                // What this session wrote is not on the branch: drop it, so a later close
                // cannot half-apply it.
                let _ = session.discard_changes();
                return err(kind, format!("{place}: commit to branch {branch} failed: {}", e.kind));
            }
            *session = self.repo.writable_session(branch).await.map_err(|e| Error::new(storage_kind, format!("{place}: {}", e.kind)))?;
            Ok(())
        })?
    }
}

/// A conflict another writer's commit caused (as opposed to a storage failure).
fn is_conflict(kind: &SessionErrorKind) -> bool {
    matches!(kind, SessionErrorKind::Conflict { .. } | SessionErrorKind::RebaseFailed { .. })
}

/// The session of `version`: writable on a branch (made from `main`'s tip when a create names
/// one that does not exist yet), read-only otherwise.
async fn session_at(repo: &Repository, version: &Version, writable: bool, create: bool, place: &str) -> Result<Session> {
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

/// The storage under the repository: a local directory or an S3 prefix with the S3 driver's
/// endpoint, region and credentials.
fn storage(spec: &OpenSpec) -> Result<Arc<dyn Storage + Send + Sync>> {
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
fn spec_version() -> Result<SpecVersionBin> {
    match crate::config::icechunk_spec().as_deref() {
        None | Some("1") => Ok(SpecVersionBin::V1),
        Some("2") => Ok(SpecVersionBin::V2),
        Some(other) => err(Kind::Invalid, format!("NCZARR_ICECHUNK_SPEC={other}: Icechunk spec versions are 1 and 2")),
    }
}

/// `NCZARR_ICECHUNK_MESSAGE`, else "<program>: netCDF dataset written by nczarr-rs".
fn commit_message() -> String {
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

/// A missing key of the session is `None`, not an error; so is a key that is no Zarr v3 key
/// (an Icechunk session holds nothing else: v2's `.zgroup`, NCZarr's `.nczarr` probes).
fn absent<T>(got: std::result::Result<T, icechunk::store::StoreError>) -> std::result::Result<Option<T>, icechunk::store::StoreError> {
    match got {
        Ok(v) => Ok(Some(v)),
        Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_) | StoreErrorKind::InvalidKey { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Zmap for IcechunkStore {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        let key = key.to_string();
        self.run(|s| async move { absent(s.get(&key, &ByteRange::ALL).await).map(|b| b.map(|b| b.to_vec())) })
    }

    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
        self.run(|s| async move {
            futures_util::stream::iter(keys)
                .map(|k| {
                    let s = s.clone();
                    async move { absent(s.get(&k, &ByteRange::ALL).await).map(|b| b.map(|b| b.to_vec())) }
                })
                .buffered(IN_FLIGHT)
                .try_collect()
                .await
        })
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        let (key, value) = (key.to_string(), bytes::Bytes::copy_from_slice(value));
        self.run(|s| async move { s.set(&key, value).await })
    }

    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        self.run(|s| async move {
            futures_util::stream::iter(items)
                .map(|(k, v)| {
                    let s = s.clone();
                    async move { s.set(&k.to_string(), bytes::Bytes::from(v)).await }
                })
                .buffer_unordered(IN_FLIGHT)
                .try_collect::<Vec<()>>()
                .await
                .map(drop)
        })
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        let prefix = prefix.to_string();
        self.run(|s| async move {
            match absent(s.list_dir(&prefix).await) {
                Ok(Some(stream)) => stream.try_collect().await,
                Ok(None) => Ok(Vec::new()),
                // A prefix that is no node (an array's `c/`) lists nothing we need.
                Err(e) if matches!(e.kind, StoreErrorKind::SessionError(SessionErrorKind::NodeNotFound { .. })) => Ok(Vec::new()),
                Err(e) => Err(e),
            }
        })
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        let prefix = prefix.to_string();
        if prefix.is_empty() {
            return self.run(|s| async move { s.clear().await });
        }
        self.run(|s| async move { s.delete_dir(&prefix).await })
    }

    fn flush(&self) -> Result<()> {
        match &self.branch {
            Some(branch) => self.commit(branch),
            None => Ok(()),
        }
    }

    fn describe(&self) -> String {
        format!("icechunk {}", self.place)
    }

    fn caps(&self) -> Caps {
        Caps { batch_size: 64, latency_bound: self.storage_kind == Kind::S3, concurrent_puts: true, versioned: true }
    }
}

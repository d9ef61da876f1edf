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
//!
//! Chunks the session stores itself (Icechunk's native chunks, objects `chunks/<id>` of the
//! repository) are read through our own driver of the repository's place, straight into the
//! caller's memory, once the session has said which object holds them; chunk writes go up
//! behind the caller (as the S3 driver's do), every other call waiting for them first.
//!
//! Virtual chunks (byte ranges of other objects, as VirtualiZarr writes them) are read through
//! the reference store kerchunk references use (`zmap::refs`: local files, S3 objects with the
//! library's S3 settings and aliases, web servers; close ranges of one object as one request),
//! when their object is in a virtual chunk container the repository may name under the rule for
//! documents that name other data (README "Security"); a chunk pinned to its object's version
//! by a checksum is read by Icechunk's client, which verifies it.

mod index;
mod repo;

use crate::error::{Error, Kind, Result, err};
use crate::url::OpenSpec;
use crate::zmap::s3::runtime::block_on;
use crate::zmap::{ByteRange as Span, Caps, Key, Zmap};
use futures_util::{StreamExt as _, TryStreamExt as _};
use icechunk::conflicts::basic_solver::{BasicConflictSolver, VersionSelection};
use icechunk::format::manifest::{ChunkPayload, ChunkRef};
use icechunk::format::{ByteRange, ChunkId, ChunkIndices, Path};
use icechunk::session::{Session, SessionErrorKind};
use icechunk::store::StoreErrorKind;
use icechunk::{Repository, Store};
use index::{ArrayIndex, Found, chunk_coords, found_of};
use repo::{Version, authorized_containers, commit_message, session_at, spec_version, storage};
use std::sync::{Arc, Mutex};
use tokio::sync::{RwLock, Semaphore};

/// How many chunk writes (or reads) one batch keeps in flight.
const IN_FLIGHT: usize = 16;
/// A commit that lost a race is rebased and tried again this many times before giving up.
const REBASE_ATTEMPTS: u16 = 8;

pub(crate) struct IcechunkStore {
    /// Our own driver of the repository's place (its directory or S3 prefix): native chunks are
    /// read from it as `chunks/<id>`.
    raw: Box<dyn Zmap>,
    /// Chunks up to this size are kept in the manifest (Icechunk's inline chunks), larger ones
    /// are objects of their own.
    inline_limit: usize,
    /// Chunk writes on their way (`put_chunks`), and the bound on how many.
    behind: Mutex<Vec<tokio::task::JoinHandle<Result<()>>>>,
    in_flight: Arc<Semaphore>,
    /// Chunk locations by array path (`ArrayIndex`).
    locations: Mutex<std::collections::HashMap<String, ArrayIndex>>,
    repo: Repository,
    store: Store,
    session: Arc<RwLock<Session>>,
    /// The branch commits go to; `None`: a tag or snapshot, read-only.
    branch: Option<String>,
    /// Where the repository is, for messages.
    place: String,
    /// Storage errors are this kind (S3 or I/O).
    storage_kind: Kind,
    /// The repository's name as it was opened, the document the security rule judges.
    document: String,
    /// The URL prefixes of the virtual chunk containers it may read (`authorized_containers`).
    containers: Vec<String>,
    /// Virtual chunks, by key, as references into their objects (opened once each).
    virtuals: Mutex<crate::zmap::refs::RefStore>,
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
        let document = spec.original.split('#').next().unwrap_or_default().to_string();
        let mut containers = Vec::new();
        let (repo, session) = block_on(async {
            let exists = Repository::exists(storage.clone(), None).await.map_err(|e| fail(&e.kind))?;
            let repo = match (exists, spec_version) {
                (true, _) => {
                    let config = Repository::fetch_config(storage.clone()).await.map_err(|e| fail(&e.kind))?;
                    let allowed = config.map(|(c, _)| authorized_containers(&c, &document)).unwrap_or_default();
                    containers = allowed.keys().cloned().collect();
                    Repository::open(storage).authorize_virtual_chunk_access(allowed).execute().await
                }
                (false, Some(v)) => Repository::create(storage).spec_version(v).execute().await,
                (false, None) => return err(Kind::NoObject, format!("{place}: no Icechunk repository")),
            }
            .map_err(|e| fail(&e.kind))?;
            let session = session_at(&repo, &version, writable, create, &place).await?;
            Ok::<_, Error>((repo, session))
        })??;
        let session = Arc::new(RwLock::new(session));
        let store = block_on(Store::from_session(session.clone()))?;
        let raw: Box<dyn Zmap> = match &spec.s3 {
            Some(target) => Box::new(crate::zmap::s3::S3Store::new(target, &spec.params)?),
            None => Box::new(crate::zmap::file::FileStore::open(&spec.path)?),
        };
        let (behind, in_flight) = (Mutex::new(Vec::new()), Arc::new(Semaphore::new(IN_FLIGHT)));
        let inline_limit = usize::from(repo.config().inline_chunk_threshold_bytes());
        let ice = IcechunkStore {
            raw,
            inline_limit,
            behind,
            in_flight,
            locations: Mutex::default(),
            repo,
            store,
            session,
            branch,
            virtuals: Mutex::new(crate::zmap::refs::RefStore::empty(format!("virtual chunks of {place}"))),
            place,
            storage_kind,
            document,
            containers,
        };
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
        store_error(kind, &self.place, self.storage_kind)
    }

    /// Waits for the chunk writes on their way; the first that failed is the answer.
    fn settle(&self) -> Result<()> {
        let pending = std::mem::take(&mut *lock(&self.behind)?);
        if pending.is_empty() {
            return Ok(());
        }
        let results = block_on(futures_util::future::join_all(pending))?;
        let mut first = Ok(());
        for r in results {
            let r = r.unwrap_or_else(|e| err(Kind::Internal, format!("a chunk write stopped: {e}")));
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Where the session keeps each of `keys`: `None` for a key that is no chunk, or whose
    /// chunk is not a native one (read through the session). An array's chunk index is read
    /// whole at its first chunk (up to `PREFETCH` chunks) and kept: one walk of the manifest
    /// instead of a lookup per chunk.
    fn locate_chunks(&self, keys: &[Key]) -> Result<Vec<Option<Found>>> {
        let coords: Vec<Option<(Path, ChunkIndices)>> = keys.iter().map(|k| chunk_coords(k)).collect();
        if coords.iter().all(Option::is_none) {
            return Ok(vec![None; keys.len()]);
        }
        if let Some(known) = self.known_locations(&coords)? {
            // Every chunk's place is known already: no trip through the session's runtime (a
            // plane-by-plane read asks for one chunk at a time).
            return Ok(known);
        }
        let session = self.session.clone();
        let (place, storage_kind) = (self.place.clone(), self.storage_kind);
        let locations = &self.locations;
        block_on(async move {
            let session = session.read().await;
            let fail = |e: icechunk::session::SessionError| store_error(&StoreErrorKind::SessionError(e.kind), &place, storage_kind);
            let mut out = Vec::with_capacity(coords.len());
            for c in coords {
                let Some((path, idx)) = c else {
                    out.push(None);
                    continue;
                };
                let array = path.to_string();
                let known = lock(locations)?.get(&array).map(|ix| ix.get(&idx.0));
                let found = match known {
                    Some(Some(found)) => found,
                    Some(None) => {
                        let found = found_of(session.get_chunk_ref(&path, &idx).await).map_err(fail)?;
                        if let Some(ix) = lock(locations)?.get_mut(&array) {
                            ix.learn(idx.0, found.clone());
                        }
                        found
                    }
                    None => {
                        let ix = ArrayIndex::read(&session, &path).await.map_err(fail)?;
                        let found = match ix.get(&idx.0) {
                            Some(found) => found,
                            None => found_of(session.get_chunk_ref(&path, &idx).await).map_err(fail)?,
                        };
                        lock(locations)?.insert(array, ix);
                        found
                    }
                };
                out.push(found);
            }
            Ok(out)
        })?
    }

    /// Where each of the chunks `coords` is when the kept indexes know all of them (`None`
    /// otherwise: the session is asked).
    fn known_locations(&self, coords: &[Option<(Path, ChunkIndices)>]) -> Result<Option<Vec<Option<Found>>>> {
        let locations = lock(&self.locations)?;
        let mut out = Vec::with_capacity(coords.len());
        for c in coords {
            let found = match c {
                None => None,
                Some((path, idx)) => match locations.get(&path.to_string()).and_then(|ix| ix.get(&idx.0)) {
                    Some(found) => found,
                    None => return Ok(None),
                },
            };
            out.push(found);
        }
        Ok(Some(out))
    }

    /// A write to `key` (a chunk): its location is no longer known.
    fn forget(&self, key: &Key) -> Result<()> {
        if let Some((path, idx)) = chunk_coords(key)
            && let Some(ix) = lock(&self.locations)?.get_mut(&path.to_string())
        {
            ix.forget(idx.0);
        }
        Ok(())
    }

    /// Virtual chunks `(key, url, offset, len)` through the reference store, in order; each
    /// object must be in an authorised container and allowed by the security rule.
    fn get_virtual(&self, chunks: &[(&Key, &str, u64, u64)]) -> Result<Vec<Option<Vec<u8>>>> {
        let mut refs = lock(&self.virtuals)?;
        for &(key, url, offset, len) in chunks {
            if !self.containers.iter().any(|prefix| url.starts_with(prefix.as_str())) {
                return err(
                    Kind::Access,
                    format!(
                        "{}: virtual chunk {key} is in {url}, which no virtual chunk container it may read holds (README \"Security\")",
                        self.place
                    ),
                );
            }
            crate::url::trust::check_target(&self.document, url, "virtual chunk object")?;
            refs.set(key.as_str(), &crate::zmap::Located::Range { url: url.to_string(), offset, len });
        }
        let keys: Vec<Key> = chunks.iter().map(|(k, ..)| (*k).clone()).collect();
        let got = refs.get_many(&keys)?;
        crate::trace::emit(2, &format!("icechunk: {}: {} virtual chunks read by reference", self.place, keys.len()));
        Ok(got)
    }

    /// One object through the session (metadata, virtual chunks).
    fn get_through_session(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        let key = key.to_string();
        self.run(|s| async move { absent(s.get(&key, &ByteRange::ALL).await).map(|b| b.map(|b| b.to_vec())) })
    }

    /// Writes a chunk of `len` bytes larger than the inline limit as Icechunk would (an object
    /// `chunks/<random id>`, by `write` through our driver) and names it in the session;
    /// `false`: not such a chunk, nothing done.
    fn put_native(&self, key: &Key, len: usize, write: impl FnOnce(&Key) -> Result<()>) -> Result<bool> {
        let Some((path, idx)) = chunk_coords(key).filter(|_| len > self.inline_limit) else { return Ok(false) };
        let id = ChunkId::random();
        write(&Key::new(format!("chunks/{id}"))?)?;
        self.name_chunks(vec![(path, idx, ChunkPayload::Ref(ChunkRef { id, offset: 0, length: len as u64 }))])?;
        Ok(true)
    }

    /// Records chunk objects already written in the session.
    fn name_chunks(&self, refs: Vec<(Path, ChunkIndices, ChunkPayload)>) -> Result<()> {
        let session = self.session.clone();
        let (place, storage_kind) = (self.place.clone(), self.storage_kind);
        block_on(async move {
            let mut session = session.write().await;
            for (path, idx, payload) in refs {
                session
                    .set_chunk_ref(path, idx, Some(payload))
                    .await
                    .map_err(|e| store_error(&StoreErrorKind::SessionError(e.kind), &place, storage_kind))?;
            }
            Ok(())
        })?
    }

    /// A native chunk's bytes from our driver of the repository's place.
    fn get_native(&self, key: &Key, offset: u64, len: u64) -> Result<Vec<u8>> {
        let missing = || Error::new(self.storage_kind, format!("{}: chunk object {key} is missing", self.place));
        if offset == 0 {
            let got = self.raw.get(key)?.ok_or_else(missing)?;
            if got.len() as u64 == len {
                return Ok(got);
            }
        }
        let span = usize::try_from(len).map_err(|_| Error::new(Kind::NoMem, format!("{key}: {len} bytes")))?;
        let mut got = self.raw.get_ranges(key, &[Span::At { offset, len: span }], None)?.ok_or_else(missing)?;
        Ok(got.parts.swap_remove(0))
    }
}

fn lock<T>(m: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>> {
    m.lock().map_err(|_| Error::new(Kind::Internal, "icechunk store: lock poisoned"))
}

fn store_error(kind: &StoreErrorKind, place: &str, storage_kind: Kind) -> Error {
    {
        let k = match kind {
            StoreErrorKind::ReadOnly => Kind::ReadOnly,
            StoreErrorKind::NotFound(_) => Kind::NoObject,
            StoreErrorKind::InvalidKey { .. } | StoreErrorKind::BadMetadata(_) | StoreErrorKind::BadChunkGridMetadata(_) => Kind::NcZarr,
            StoreErrorKind::SessionError(s) if is_conflict(s) => Kind::Conflict,
            _ => storage_kind,
        };
        Error::new(k, format!("{place}: {kind}"))
    }
}

impl IcechunkStore {
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
        let committed = block_on(async {
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
        })?;
        // The new session starts from the branch's tip, which may hold other writers' chunks
        // (a rebased commit), or a failed one dropped ours: what we knew of chunk locations is
        // stale either way.
        lock(&self.locations)?.clear();
        committed
    }
}

/// A conflict another writer's commit caused (as opposed to a storage failure).
fn is_conflict(kind: &SessionErrorKind) -> bool {
    matches!(kind, SessionErrorKind::Conflict { .. } | SessionErrorKind::RebaseFailed { .. })
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
        Ok(self.get_many(std::slice::from_ref(key))?.pop().flatten())
    }

    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        self.settle()?;
        let found = self.locate_chunks(keys)?;
        // Virtual chunks first, in one batch: the reference store joins close ranges of one
        // object and reads remote ones concurrently.
        let virtual_chunks: Vec<(&Key, &str, u64, u64)> = keys
            .iter()
            .zip(&found)
            .filter_map(|(k, f)| match f {
                Some(Found::Virtual { url, offset, len }) => Some((k, url.as_str(), *offset, *len)),
                _ => None,
            })
            .collect();
        let mut virtuals: std::collections::HashMap<&Key, Option<Vec<u8>>> = std::collections::HashMap::new();
        if !virtual_chunks.is_empty() {
            let got = self.get_virtual(&virtual_chunks)?;
            virtuals = virtual_chunks.iter().map(|(k, ..)| *k).zip(got).collect();
        }
        let virtuals = Mutex::new(virtuals);
        let by_key: std::collections::HashMap<&Key, &Option<Found>> = keys.iter().zip(&found).collect();
        let one = |k: &Key| match by_key.get(k) {
            Some(Some(Found::Absent)) => Ok(None),
            Some(Some(Found::Inline(b))) => Ok(Some(b.clone())),
            Some(Some(Found::Native { key, offset, len })) => self.get_native(key, *offset, *len).map(Some),
            // (A key asked for twice is read again the second time.)
            Some(Some(Found::Virtual { url, offset, len })) => match lock(&virtuals)?.remove(k) {
                Some(got) => Ok(got),
                None => Ok(self.get_virtual(&[(k, url, *offset, *len)])?.pop().flatten()),
            },
            _ => self.get_through_session(k),
        };
        if !self.caps().latency_bound {
            return keys.iter().map(one).collect();
        }
        crate::zmap::get_concurrently(keys, &one, "an icechunk read")
    }

    fn read_into(&self, key: &Key, out: &mut [u8]) -> Result<bool> {
        Ok(self.read_many_into(std::slice::from_ref(key), vec![out])?.pop().unwrap_or(false))
    }

    /// Whole native chunks go straight from our driver into `outs` (parallel reads of files,
    /// concurrent GETs on S3); the rest through `get_many`.
    fn read_many_into(&self, keys: &[Key], mut outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        self.settle()?;
        let found = self.locate_chunks(keys)?;
        let mut done = vec![false; keys.len()];
        let (mut direct_keys, mut direct_outs, mut direct_at, mut rest) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, (f, out)) in found.iter().zip(outs.iter_mut()).enumerate() {
            match f {
                Some(Found::Native { key, offset: 0, len }) if *len == out.len() as u64 => {
                    direct_keys.push(key.clone());
                    direct_outs.push(&mut **out);
                    direct_at.push(i);
                }
                _ => rest.push(i),
            }
        }
        if !direct_keys.is_empty() {
            for (i, present) in direct_at.iter().zip(self.raw.read_many_into(&direct_keys, direct_outs)?) {
                if !present {
                    return err(self.storage_kind, format!("{}: chunk object {} is missing", self.place, keys[*i]));
                }
                done[*i] = true;
            }
        }
        if !rest.is_empty() {
            let rest_keys: Vec<Key> = rest.iter().map(|&i| keys[i].clone()).collect();
            for (&i, got) in rest.iter().zip(self.get_many(&rest_keys)?) {
                done[i] = crate::zmap::copy_exact(&keys[i], got, outs[i])?;
            }
        }
        Ok(done)
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        self.settle()?;
        self.forget(key)?;
        if self.put_native(key, value.len(), |object| self.raw.put(object, value))? {
            return Ok(());
        }
        let (key, value) = (key.to_string(), bytes::Bytes::copy_from_slice(value));
        self.run(|s| async move { s.set(&key, value).await })
    }

    /// A chunk gathered from the caller's rows goes to its object without a copy.
    fn put_parts(&self, key: &Key, parts: &[&[u8]]) -> Result<()> {
        self.settle()?;
        self.forget(key)?;
        let len = parts.iter().map(|p| p.len()).sum();
        if self.put_native(key, len, |object| self.raw.put_parts(object, parts))? {
            return Ok(());
        }
        self.put(key, &parts.concat())
    }

    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        self.settle()?;
        items.iter().try_for_each(|(k, _)| self.forget(k))?;
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

    /// A chunk larger than the inline limit is written as Icechunk writes one (an object
    /// `chunks/<random id>`) by our own driver, straight from `items` (the S3 driver's uploads go
    /// behind the caller; `flush` waits for them before the commit), then named in the session.
    /// The rest go through the session, each a task of its own, at most `IN_FLIGHT` at once (the
    /// caller waits for a free place: memory stays bounded); every other call waits for them.
    fn put_chunks(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        let (mut objects, mut refs, mut through) = (Vec::new(), Vec::new(), Vec::new());
        for (key, value) in items {
            self.forget(&key)?;
            match chunk_coords(&key) {
                Some((path, idx)) if value.len() > self.inline_limit => {
                    let id = ChunkId::random();
                    let length = value.len() as u64;
                    objects.push((Key::new(format!("chunks/{id}"))?, value));
                    refs.push((path, idx, ChunkPayload::Ref(ChunkRef { id, offset: 0, length })));
                }
                _ => through.push((key, value)),
            }
        }
        if !objects.is_empty() {
            self.raw.put_chunks(objects)?;
            self.name_chunks(refs)?;
        }
        let rt = crate::zmap::s3::runtime::runtime()?;
        for (key, value) in through {
            let permit =
                block_on(self.in_flight.clone().acquire_owned())?.map_err(|_| Error::new(Kind::Internal, "icechunk writes: closed"))?;
            let (store, place, storage_kind) = (self.store.clone(), self.place.clone(), self.storage_kind);
            let task = rt.spawn(async move {
                let _permit = permit;
                store.set(&key.to_string(), bytes::Bytes::from(value)).await.map_err(|e| store_error(&e.kind, &place, storage_kind))
            });
            lock(&self.behind)?.push(task);
        }
        Ok(())
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        self.settle()?;
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
        self.settle()?;
        lock(&self.locations)?.clear();
        let prefix = prefix.to_string();
        if prefix.is_empty() {
            return self.run(|s| async move { s.clear().await });
        }
        self.run(|s| async move { s.delete_dir(&prefix).await })
    }

    fn flush(&self) -> Result<()> {
        self.settle()?;
        // Chunk objects written by our driver are stored before the commit names them.
        self.raw.flush()?;
        match &self.branch {
            Some(branch) => self.commit(branch),
            None => Ok(()),
        }
    }

    fn describe(&self) -> String {
        format!("icechunk {}", self.place)
    }

    fn caps(&self) -> Caps {
        Caps { batch_size: 64, latency_bound: self.storage_kind == Kind::S3, concurrent_puts: true, versioned: true, raw_chunks: false }
    }
}

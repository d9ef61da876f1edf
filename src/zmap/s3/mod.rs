//! S3 storage driver on aws-sdk-s3, with a tokio runtime owned by the library.
//!
//! * The runtime starts at the first S3 open (file-only programs start no threads). A caller
//!   already inside a tokio runtime is served from a helper thread instead of nesting.
//! * One round trip per object read: GET directly, 404 means absent (no HEAD first).
//! * Batches (`get_many`, `put_many`, ranged reads) run concurrently, so a chunk plan pays
//!   latency once, not per chunk. How many requests are in flight adapts to the objects
//!   (`InFlight`): small ones (metadata, small chunks) are latency-bound and go up to 128 at
//!   once, big ones are held to about 64 MiB in flight (never fewer than 32);
//!   `NCZARR_S3_CONCURRENCY` fixes the number instead.
//! * Faults: the SDK's standard retry (exponential backoff with jitter on 5xx, throttling,
//!   timeouts) bounded by `NCZARR_S3_MAX_ATTEMPTS`; explicit per-attempt and per-operation
//!   timeouts; 403 is NC_EACCESS without retry; a body shorter than its Content-Length is
//!   resumed with a ranged GET pinned to the ETag, and never returned as data.
//! * Chunks are written behind: `put_chunks` returns once their uploads are handed to the runtime (at most
//!   `NCZARR_S3_WRITE_BEHIND_MB`, default 256, of bodies held), so copying and encoding the next
//!   chunks overlaps them; reads, metadata writes and `flush` wait for them first (`Uploads`).
//! * PUT bodies carry a CRC32C checksum the server verifies, instead of a SHA-256 payload
//!   signature over every byte (`NCZARR_S3_SIGN_PAYLOAD=1` restores that).
//! * Objects above `NCZARR_S3_MULTIPART_MB` (default 64) go up as multipart uploads; a failed
//!   upload is aborted, leaving no partial object.

pub mod object;
mod settings;

use super::s3conf;
use super::{ByteRange, Caps, Key, Ranges, Zmap, validate_key};
use crate::error::{Error, Kind, Result, err};
use crate::url::s3::S3Target;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation};
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

// ---- runtime --------------------------------------------------------------------------------

static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();

fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    // A failure to start is reported and tried again by the next call. Two first callers may
    // both build one; the loser's is dropped unused.
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("nczarr-s3")
        .enable_all()
        .build()
        .map_err(|e| Error::new(Kind::S3, format!("cannot start the S3 runtime: {e}")))?;
    Ok(RUNTIME.get_or_init(|| built))
}

/// Runs a future to completion on our runtime, from any caller (one inside another tokio
/// runtime included: blocking there would panic, so a helper thread waits instead).
fn block_on<F>(f: F) -> Result<F::Output>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| s.spawn(|| rt.block_on(f)).join()).map_err(|_| Error::new(Kind::Internal, "S3 helper thread failed"))
    } else {
        Ok(rt.block_on(f))
    }
}

// ---- errors ---------------------------------------------------------------------------------

/// One place that turns SDK failures into NC_* meanings (keys named, secrets never).
fn map_err<E: ProvideErrorMetadata + std::fmt::Debug>(e: SdkError<E, aws_sdk_s3::config::http::HttpResponse>, what: &str) -> Error {
    let status = e.raw_response().map(|r| r.status().as_u16());
    let code = e.code().map(str::to_string);
    let access_codes = ["AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken"];
    let kind = match (&e, status, code.as_deref()) {
        (_, Some(403), _) => Kind::Access,
        (_, _, Some(c)) if access_codes.contains(&c) => Kind::Access,
        (_, _, Some("NoSuchBucket")) => Kind::NoObject,
        (_, Some(404), _) => Kind::NoObject,
        _ => Kind::S3,
    };
    let detail = match (&e, code) {
        (_, Some(c)) => format!("{c} (HTTP {})", status.map(|s| s.to_string()).unwrap_or_else(|| "-".into())),
        (SdkError::TimeoutError(_), _) => "timed out".into(),
        (SdkError::DispatchFailure(f), _) => format!("connection failed ({})", if f.is_timeout() { "timeout" } else { "dispatch" }),
        (SdkError::ResponseError(_), _) => "bad response".into(),
        _ => format!("HTTP {}", status.map(|s| s.to_string()).unwrap_or_else(|| "-".into())),
    };
    Error::new(kind, format!("S3 {what}: {detail}"))
}

fn is_not_found<E: ProvideErrorMetadata>(e: &SdkError<E, aws_sdk_s3::config::http::HttpResponse>) -> bool {
    e.raw_response().map(|r| r.status().as_u16()) == Some(404) || matches!(e.code(), Some("NoSuchKey") | Some("NotFound"))
}

// ---- the store --------------------------------------------------------------------------------

/// How many requests a batch keeps in flight. A request's time is mostly round trip when its
/// object is small, so small objects get many at once; for big ones the bytes in flight are
/// what counts (memory, and a link or server that is already busy gains nothing from more).
#[derive(Clone, Copy)]
struct InFlight {
    /// `NCZARR_S3_CONCURRENCY`: this many, whatever the objects.
    fixed: Option<usize>,
}

impl InFlight {
    const MOST: usize = 128;
    const FEWEST: usize = 32;
    const BYTES: usize = 64 << 20;

    /// Requests at once for objects of about `bytes` each (`None`: small or not known yet).
    fn limit(&self, bytes: Option<usize>) -> usize {
        match (self.fixed, bytes) {
            (Some(n), _) => n,
            (None, None) => Self::MOST,
            (None, Some(b)) => (Self::BYTES / b.max(1)).clamp(Self::FEWEST, Self::MOST),
        }
    }

    /// The most requests ever in flight at once.
    fn max(&self) -> usize {
        self.fixed.unwrap_or(Self::MOST)
    }

    /// The share of `max` one request for an object of `bytes` takes, so that a pool of
    /// `max` permits runs `limit(bytes)` such requests at once.
    fn weight(&self, bytes: Option<usize>) -> u32 {
        (self.max() / self.limit(bytes)).max(1) as u32
    }
}

pub struct S3Store {
    client: Client,
    target: S3Target,
    /// The region buckets are created in (`create_root`).
    region: String,
    in_flight: InFlight,
    multipart_threshold: usize,
    part_size: usize,
    /// Longest wait for the next piece of a response body.
    stall: Duration,
    /// PUT bodies signed with their SHA-256 (`NCZARR_S3_SIGN_PAYLOAD=1`) rather than
    /// checked by CRC32C.
    sign_payload: bool,
    uploads: Uploads,
}

/// Uploads handed to the runtime and not waited for: the caller's next step (copying or
/// encoding the next chunks, defining the next variable) overlaps them, and one batch does
/// not wait for its slowest request before the next starts.
///
/// Order is kept where it matters: a later upload of the same object waits for the earlier
/// one; a metadata wave (`put_many`) waits for every upload handed over before it, so the
/// crash-safe order chunks → arrays → groups → consolidated holds on the server. Reads,
/// listings, deletes and `flush` wait for everything first, so they see what was written. A
/// failed upload is reported (once) by the next write or `flush`: at the latest by
/// nc_sync/nc_close, before any later metadata wave is stored.
struct Uploads {
    /// KiB of bodies handed over and not yet stored: bounds the memory uploads hold.
    room: Arc<tokio::sync::Semaphore>,
    room_kib: u32,
    /// Chunk PUTs in flight: `InFlight::max` permits, an upload takes `InFlight::weight`.
    requests: Arc<tokio::sync::Semaphore>,
    in_flight: InFlight,
    failed: Arc<std::sync::Mutex<Option<Error>>>,
    /// The last upload of each object not known to be finished.
    running: std::sync::Mutex<Running>,
}

#[derive(Default)]
struct Running {
    by_key: std::collections::HashMap<String, Done>,
    /// Size of `by_key` after its last pruning: it is pruned again when it doubles.
    pruned_at: usize,
}

/// Closed when its upload task ends (the task holds the sender).
type Done = tokio::sync::watch::Receiver<()>;

async fn wait_all(done: Vec<Done>) {
    for mut d in done {
        while d.changed().await.is_ok() {}
    }
}

/// One upload's hold on `Uploads::room`; a task that ends without saying how (a panic, the
/// runtime shutting down) counts as a failed upload.
struct UploadTicket {
    _room: tokio::sync::OwnedSemaphorePermit,
    failed: Arc<std::sync::Mutex<Option<Error>>>,
    outcome: Option<Result<()>>,
}

impl UploadTicket {
    fn done(mut self, outcome: Result<()>) {
        self.outcome = Some(outcome);
    }
}

impl Drop for UploadTicket {
    fn drop(&mut self) {
        let failure = match self.outcome.take() {
            Some(Ok(())) => return,
            Some(Err(e)) => e,
            None => Error::new(Kind::S3, "an S3 upload stopped before it finished"),
        };
        if let Ok(mut slot) = self.failed.lock() {
            slot.get_or_insert(failure);
        }
    }
}

impl Uploads {
    fn new(in_flight: InFlight, room_mb: f64) -> Uploads {
        let room_kib = (room_mb * 1024.0).clamp(1024.0, f64::from(u32::MAX >> 4)) as u32;
        Uploads {
            room: Arc::new(tokio::sync::Semaphore::new(room_kib as usize)),
            room_kib,
            requests: Arc::new(tokio::sync::Semaphore::new(in_flight.max())),
            in_flight,
            failed: Arc::default(),
            running: Default::default(),
        }
    }

    /// Waits until no upload is running.
    fn settle(&self) -> Result<()> {
        let all: Vec<Done> = match self.running.lock() {
            Ok(mut r) => std::mem::take(&mut *r).by_key.into_values().collect(),
            Err(_) => return err(Kind::Internal, "S3 upload bookkeeping poisoned"),
        };
        if all.iter().all(|d| d.has_changed().is_err()) {
            return Ok(());
        }
        block_on(wait_all(all))
    }

    /// Waits for running uploads and reports (once) the first that failed.
    fn finish(&self) -> Result<()> {
        self.settle()?;
        self.take_failure()
    }

    fn take_failure(&self) -> Result<()> {
        match self.failed.lock().map(|mut f| f.take()) {
            Ok(Some(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Starts `upload` once the uploads it must follow have finished: those of the same
    /// objects, or (`after_all`, a metadata wave) every upload handed over so far. `bytes`:
    /// what the upload holds in memory; waits while the uploads in flight hold too much.
    fn start<F>(&self, keys: &[String], bytes: usize, after_all: bool, upload: F) -> Result<()>
    where
        F: std::future::Future<Output = Result<()>> + Send + 'static,
    {
        let kib = (bytes.div_ceil(1024) as u64).clamp(1, u64::from(self.room_kib)) as u32;
        let room = match self.room.clone().try_acquire_many_owned(kib) {
            Ok(p) => p,
            Err(_) => {
                let room = self.room.clone();
                block_on(async move { room.acquire_many_owned(kib).await })?
                    .map_err(|_| Error::new(Kind::Internal, "S3 upload accounting closed"))?
            }
        };
        let ticket = UploadTicket { _room: room, failed: self.failed.clone(), outcome: None };
        let (finished, done) = tokio::sync::watch::channel(());
        let before: Vec<Done> = {
            let Ok(mut running) = self.running.lock() else { return err(Kind::Internal, "S3 upload bookkeeping poisoned") };
            if running.by_key.len() > 2 * running.pruned_at.max(64) {
                running.by_key.retain(|_, d| d.has_changed().is_ok());
                running.pruned_at = running.by_key.len();
            }
            let before = match after_all {
                true => running.by_key.values().cloned().collect(),
                false => keys.iter().filter_map(|k| running.by_key.get(k).cloned()).collect(),
            };
            for k in keys {
                running.by_key.insert(k.clone(), done.clone());
            }
            before
        };
        let requests = self.requests.clone();
        // One chunk is one request and queues for its share of the pool. A metadata wave limits
        // its own requests (`put_many`) and does not queue there: behind a put's hundreds of
        // chunks it would wait for nearly all of them, though it only waits for what came
        // before it, and the waves after it (group metadata, .zmetadata) would then go out one
        // round trip after another at the end.
        let weight = (!after_all).then(|| self.in_flight.weight(Some(bytes)));
        runtime()?.spawn(async move {
            let _finished = finished;
            wait_all(before).await;
            let _request = match weight {
                Some(w) => Some(requests.acquire_many_owned(w).await),
                None => None,
            };
            ticket.done(upload.await);
        });
        Ok(())
    }
}

impl Drop for S3Store {
    /// Uploads still running finish before the store goes (a dataset closed without a flush,
    /// e.g. after an error, still stores what it handed over).
    fn drop(&mut self) {
        let _ = self.uploads.settle();
    }
}

/// What makes two datasets' clients interchangeable: the same server, region, keys, timeouts
/// and retries.
#[derive(PartialEq, Eq, Hash)]
struct ClientKey {
    endpoint: Option<String>,
    region: String,
    keys: Option<(String, String, Option<String>)>,
    limits: [u64; 4],
    attempts: u32,
}

/// One client (and so one connection pool) per configuration for the whole process: a
/// program that opens dataset after dataset on one server (a loop over files, nccopy, a
/// reopen) reuses warm connections instead of paying TCP (and TLS) set-up on every open.
fn shared_client(key: ClientKey, make: impl FnOnce() -> Client) -> Result<Client> {
    static CLIENTS: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<ClientKey, Client>>> =
        std::sync::LazyLock::new(Default::default);
    let mut clients = CLIENTS.lock().map_err(|_| Error::new(Kind::Internal, "S3 client table poisoned"))?;
    Ok(clients.entry(key).or_insert_with(make).clone())
}

impl S3Store {
    /// Connects (lazily: no request is made here) with the settings of `target`/`params`.
    pub fn new(target: &S3Target, params: &BTreeMap<String, String>) -> Result<S3Store> {
        let settings = s3conf::resolve(target, params);
        crate::trace::emit(2, &format!("s3: {} region {} credentials from {}", target.describe(), settings.region, settings.source));
        // An alias's own backend timeouts apply to that alias only.
        let knobs = settings::Knobs::read(&target.alias_timeouts);
        let (connect, attempt, operation) = (knobs.connect, knobs.attempt, knobs.operation);
        crate::trace::emit(2, &format!("s3: timeouts connect {connect}s attempt {attempt}s operation {operation}s"));
        let (attempts, backoff) = (knobs.attempts, knobs.backoff_ms);
        let retry = aws_sdk_s3::config::retry::RetryConfig::standard()
            .with_max_attempts(attempts.max(1))
            .with_initial_backoff(Duration::from_secs_f64(backoff / 1000.0))
            .with_max_backoff(Duration::from_secs(20));
        let timeouts = aws_sdk_s3::config::timeout::TimeoutConfig::builder()
            .connect_timeout(Duration::from_secs_f64(connect))
            .operation_attempt_timeout(Duration::from_secs_f64(attempt))
            .operation_timeout(Duration::from_secs_f64(operation))
            .build();
        let mut b = aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(settings.region.clone()))
            .retry_config(retry)
            .timeout_config(timeouts)
            // S3-compatible servers reject the SDK's default extra checksums.
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenRequired);
        // The URL's own endpoint wins; AWS-form URLs honour the SDK's endpoint variables
        // (aws-config semantics), which is how s3:// names reach an S3-compatible server.
        let endpoint = target
            .endpoint
            .clone()
            .or_else(|| ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"].iter().find_map(|v| std::env::var(v).ok().filter(|e| !e.is_empty())));
        if let Some(ep) = &endpoint {
            b = b.endpoint_url(ep).force_path_style(true);
            // A plain-HTTP endpoint (a local or in-cluster server) needs no TLS: skipping it
            // saves parsing the system's CA bundle, which costs more than a whole small open.
            if ep.to_ascii_lowercase().starts_with("http://") {
                b = b.http_client(aws_smithy_http_client::Builder::new().build_http());
            }
        }
        b = match &settings.keys {
            Some(k) => b.credentials_provider(Credentials::new(&k.access, &k.secret, k.token.clone(), None, "nczarr")),
            None => b.allow_no_auth(),
        };
        let in_flight = InFlight { fixed: knobs.concurrency };
        let same_client = ClientKey {
            endpoint,
            region: settings.region.clone(),
            keys: settings.keys.as_ref().map(|k| (k.access.clone(), k.secret.clone(), k.token.clone())),
            limits: [connect, attempt, operation, backoff].map(f64::to_bits),
            attempts,
        };
        Ok(S3Store {
            client: shared_client(same_client, || Client::from_conf(b.build()))?,
            target: target.clone(),
            region: settings.region.clone(),
            in_flight,
            multipart_threshold: knobs.multipart_threshold,
            part_size: knobs.part_size,
            stall: Duration::from_secs_f64(attempt),
            sign_payload: knobs.sign_payload,
            uploads: Uploads::new(in_flight, knobs.write_behind_mb),
        })
    }

    fn put_ctx(&self) -> Arc<PutCtx> {
        Arc::new(PutCtx {
            client: self.client.clone(),
            bucket: self.target.bucket.clone(),
            multipart_threshold: self.multipart_threshold,
            part_size: self.part_size,
            part_concurrency: self.in_flight.limit(Some(self.part_size)).clamp(1, 8),
            sign_payload: self.sign_payload,
        })
    }

    fn object_key(&self, key: &str) -> String {
        match (self.target.root.is_empty(), key.is_empty()) {
            (true, _) => key.to_string(),
            (false, true) => self.target.root.clone(),
            (false, false) => format!("{}/{key}", self.target.root),
        }
    }

    /// Key prefix (with trailing `/`) of everything under `prefix`.
    fn dir_prefix(&self, prefix: &str) -> String {
        let k = self.object_key(prefix);
        if k.is_empty() { k } else { format!("{k}/") }
    }

    /// Deletes the dataset: every object under its root key (`x/...`), never an object named
    /// exactly like the root (`x` is not part of the dataset `x`; netcdf-c leaves it too).
    pub fn clear(&self) -> Result<()> {
        self.delete_prefix(&Key::root())
    }

    /// Makes room for a new dataset (netcdf-c's clobber): clears the root, and creates the
    /// bucket when it does not exist, as netcdf-c does (refused: NC_EACCESS).
    pub fn create_root(&self) -> Result<()> {
        self.uploads.finish()?;
        let (client, bucket, dir) = (self.client.clone(), self.target.bucket.clone(), self.dir_prefix(""));
        let region = self.region.clone();
        block_on(async move {
            match list_under(&client, &bucket, &dir).await? {
                Some(keys) => delete_keys(&client, &bucket, &keys).await,
                None => create_bucket(&client, &bucket, &region).await,
            }
        })?
    }

    /// Does anything exist under the dataset root?
    pub fn exists(&self) -> Result<bool> {
        self.uploads.settle()?;
        let (client, bucket, prefix) = (self.client.clone(), self.target.bucket.clone(), self.dir_prefix(""));
        block_on(async move {
            let out = client.list_objects_v2().bucket(&bucket).prefix(&prefix).max_keys(1).send().await;
            match out {
                Ok(o) => Ok(o.key_count().unwrap_or(0) > 0 || !o.contents().is_empty()),
                Err(e) if matches!(e.code(), Some("NoSuchBucket")) => Ok(false),
                Err(e) => Err(map_err(e, &format!("list {bucket}/{prefix}"))),
            }
        })?
    }
}

/// GET of a whole object; `None` when absent. A body cut short is resumed from where it
/// stopped with a ranged GET pinned to the ETag; a changed object is an error.
async fn get_object(client: Client, bucket: String, key: String, stall: Duration) -> Result<Option<Vec<u8>>> {
    let mut data = Vec::new();
    Ok(fetch(&client, &bucket, &key, stall, Sink::Grow(&mut data)).await?.then_some(data))
}

/// Where a GET's body goes: a growing buffer, or straight into caller memory of exactly the
/// object's size (no intermediate buffer; a different size is NC_ENCZARR).
enum Sink<'a> {
    Grow(&'a mut Vec<u8>),
    Exact(&'a mut [u8]),
}

/// GET of a whole object into `sink`; `false` when absent. A body cut short is resumed from
/// where it stopped with a ranged GET pinned to the ETag, so the bytes are one version.
async fn fetch(client: &Client, bucket: &str, key: &str, stall: Duration, mut sink: Sink<'_>) -> Result<bool> {
    let out = match client.get_object().bucket(bucket).key(key).send().await {
        Ok(o) => o,
        Err(e) if is_not_found(&e) => return Ok(false),
        Err(e) if matches!(e.code(), Some("NoSuchBucket")) => return Ok(false),
        Err(e) => return Err(map_err(e, &format!("get {key}"))),
    };
    let expected = out.content_length().map(|n| n.max(0) as usize);
    let etag = out.e_tag().map(str::to_string);
    let mut filled = 0;
    match &mut sink {
        // The size a server claims is allocated fallibly: a huge one is NC_ENOMEM, not an abort.
        Sink::Grow(data) => {
            data.try_reserve_exact(expected.unwrap_or(0)).map_err(|_| Error::new(Kind::NoMem, format!("{key}: {expected:?} bytes")))?
        }
        Sink::Exact(dst) => {
            if let Some(n) = expected {
                super::check_size(key, n as u64, Some(dst.len() as u64))?;
            }
        }
    }
    let mut body = out.body;
    let mut resumes = 0;
    loop {
        // A body that stops arriving for a whole attempt timeout counts as cut short.
        let next = match tokio::time::timeout(stall, body.next()).await {
            Ok(n) => n,
            Err(_) => {
                crate::trace::emit(2, &format!("s3: {key} stalled for {stall:?}"));
                Some(Err(aws_sdk_s3::primitives::ByteStreamError::from(std::io::Error::new(std::io::ErrorKind::TimedOut, "stalled"))))
            }
        };
        match next {
            Some(Ok(bytes)) => {
                match &mut sink {
                    Sink::Grow(data) => {
                        data.try_reserve(bytes.len()).map_err(|_| Error::new(Kind::NoMem, format!("{key}: body too large")))?;
                        data.extend_from_slice(&bytes)
                    }
                    Sink::Exact(dst) => match dst.get_mut(filled..filled + bytes.len()) {
                        Some(to) => crate::bytes::copy(to, &bytes),
                        None => return err(Kind::NcZarr, format!("{key}: more than the {} bytes expected", dst.len())),
                    },
                }
                filled += bytes.len();
            }
            Some(Err(_)) | None if expected.is_some_and(|n| filled < n) => {
                resumes += 1;
                let (Some(total), Some(tag)) = (expected, etag.as_deref()) else {
                    return err(Kind::S3, format!("S3 get {key}: body cut short and no ETag to resume"));
                };
                if resumes > 3 {
                    return err(Kind::S3, format!("S3 get {key}: body cut short {resumes} times"));
                }
                crate::trace::emit(2, &format!("s3: {key} cut at {filled} of {total} bytes; resuming"));
                let more = client
                    .get_object()
                    .bucket(bucket)
                    .key(key)
                    .range(format!("bytes={filled}-{}", total - 1))
                    .if_match(tag)
                    .send()
                    .await
                    .map_err(|e| match e.code() {
                        Some("PreconditionFailed") => Error::new(Kind::S3, format!("S3 get {key}: object changed while reading")),
                        _ => map_err(e, &format!("resume {key}")),
                    })?;
                body = more.body;
            }
            Some(Err(e)) => return err(Kind::S3, format!("S3 get {key}: {e}")),
            None => break,
        }
    }
    if let Some(n) = expected
        && filled != n
    {
        return err(Kind::S3, format!("S3 get {key}: {filled} bytes received, Content-Length {n}"));
    }
    if let Sink::Exact(dst) = &sink
        && filled != dst.len()
    {
        return err(Kind::NcZarr, format!("{key}: {filled} bytes, expected {}", dst.len()));
    }
    Ok(true)
}

/// One range of an object: its bytes and, when the server says, the object's size.
async fn get_range(client: Client, bucket: String, key: String, range: ByteRange) -> Result<Option<(Vec<u8>, Option<u64>)>> {
    let header = match range {
        ByteRange::At { len: 0, .. } => return Ok(Some((Vec::new(), None))),
        ByteRange::At { offset, len } => format!("bytes={offset}-{}", offset + len as u64 - 1),
        ByteRange::Suffix(n) => format!("bytes=-{n}"),
    };
    ranged_get(&client, &bucket, &key, header).await
}

/// One ranged GET: the body and the object's total size from `Content-Range`.
async fn ranged_get(client: &Client, bucket: &str, key: &str, range: String) -> Result<Option<(Vec<u8>, Option<u64>)>> {
    let out = match client.get_object().bucket(bucket).key(key).range(range).send().await {
        Ok(o) => o,
        Err(e) if is_not_found(&e) => return Ok(None),
        Err(e) if e.code() == Some("InvalidRange") => return err(Kind::NcZarr, format!("{key}: range past the end")),
        Err(e) => return Err(map_err(e, &format!("ranged get {key}"))),
    };
    let size = out.content_range().and_then(|r| r.rsplit('/').next()).and_then(|t| t.parse::<u64>().ok());
    let data = out.body.collect().await.map_err(|e| Error::new(Kind::S3, format!("S3 ranged get {key}: {e}")))?.to_vec();
    Ok(Some((data, size)))
}

async fn put_object(store: Arc<PutCtx>, key: String, value: impl Into<bytes::Bytes>) -> Result<()> {
    let value: bytes::Bytes = value.into();
    let (client, bucket) = (&store.client, &store.bucket);
    if value.len() <= store.multipart_threshold {
        let put = client.put_object().bucket(bucket).key(&key);
        let put = match store.sign_payload {
            true => put.body(ByteStream::from(value)).customize(),
            false => put.checksum_crc32_c(crc32c_header(&value)).body(ByteStream::from(value)).customize().disable_payload_signing(),
        };
        return put.send().await.map(|_| ()).map_err(|e| map_err(e, &format!("put {key}")));
    }
    let up =
        client.create_multipart_upload().bucket(bucket).key(&key).send().await.map_err(|e| map_err(e, &format!("start upload {key}")))?;
    let Some(id) = up.upload_id().map(str::to_string) else { return err(Kind::S3, format!("S3 upload {key}: no upload id")) };
    // Parts go out concurrently, each a slice of the one buffer (no copies).
    let body = value;
    let result: Result<()> = async {
        let jobs: Vec<_> = (0..body.len().div_ceil(store.part_size))
            .map(|i| {
                let (client, bucket, key, id) = (client.clone(), bucket.clone(), key.clone(), id.clone());
                let part = body.slice(i * store.part_size..((i + 1) * store.part_size).min(body.len()));
                let sign = store.sign_payload;
                async move {
                    let n = i as i32 + 1;
                    let up = client.upload_part().bucket(&bucket).key(&key).upload_id(&id).part_number(n);
                    let up = match sign {
                        true => up.body(ByteStream::from(part)).customize(),
                        false => {
                            up.checksum_crc32_c(crc32c_header(&part)).body(ByteStream::from(part)).customize().disable_payload_signing()
                        }
                    };
                    let out = up.send().await.map_err(|e| map_err(e, &format!("upload part {n} of {key}")))?;
                    Ok(aws_sdk_s3::types::CompletedPart::builder().set_e_tag(out.e_tag().map(str::to_string)).part_number(n).build())
                }
            })
            .collect();
        let parts = run_limited(store.part_concurrency, jobs).await.into_iter().collect::<Result<Vec<_>>>()?;
        let done = aws_sdk_s3::types::CompletedMultipartUpload::builder().set_parts(Some(parts)).build();
        client.complete_multipart_upload().bucket(bucket).key(&key).upload_id(&id).multipart_upload(done).send().await.map(|_| ()).or_else(
            |e| {
                // HTTP 200 whose body is not an <Error> means the upload completed: some servers
                // (moto) name the result element differently from what the SDK parses. Real S3
                // reports a failed completion as an <Error> body under 200, which stays an error.
                let raw = e.raw_response();
                let completed = raw.is_some_and(|r| {
                    r.status().as_u16() == 200 && r.body().bytes().is_some_and(|b| !String::from_utf8_lossy(b).contains("<Error>"))
                });
                if completed { Ok(()) } else { Err(map_err(e, &format!("complete upload {key}"))) }
            },
        )
    }
    .await;
    if result.is_err() {
        // Leave no partial object behind.
        let _ = client.abort_multipart_upload().bucket(bucket).key(&key).upload_id(&id).send().await;
    }
    result
}

struct PutCtx {
    client: Client,
    bucket: String,
    multipart_threshold: usize,
    part_size: usize,
    /// Parts of one upload in flight at once.
    part_concurrency: usize,
    sign_payload: bool,
}

/// The `x-amz-checksum-crc32c` value of a body: the server checks the bytes it received
/// against it. With it, a PUT need not hash its whole body with SHA-256 for the signature
/// (which costs client and server a pass over the data each); the headers, this checksum
/// among them, stay signed.
fn crc32c_header(body: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(crate::codec::crc32c(body).to_be_bytes())
}

/// Every key starting with `prefix`; `None` when the bucket does not exist.
async fn list_under(client: &Client, bucket: &str, prefix: &str) -> Result<Option<Vec<String>>> {
    let mut keys = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let out = match client.list_objects_v2().bucket(bucket).prefix(prefix).set_continuation_token(token.take()).send().await {
            Ok(o) => o,
            Err(e) if matches!(e.code(), Some("NoSuchBucket")) => return Ok(None),
            Err(e) => return Err(map_err(e, &format!("list {bucket}/{prefix}"))),
        };
        keys.extend(out.contents().iter().filter_map(|o| o.key().map(str::to_string)));
        match (out.is_truncated(), out.next_continuation_token()) {
            (Some(true), Some(t)) => token = Some(t.to_string()),
            _ => return Ok(Some(keys)),
        }
    }
}

/// Deletes `keys`, 1000 to a request (S3's limit).
async fn delete_keys(client: &Client, bucket: &str, keys: &[String]) -> Result<()> {
    for batch in keys.chunks(1000) {
        let ids: Vec<_> = batch.iter().filter_map(|k| aws_sdk_s3::types::ObjectIdentifier::builder().key(k).build().ok()).collect();
        let del = aws_sdk_s3::types::Delete::builder()
            .set_objects(Some(ids))
            .quiet(true)
            .build()
            .map_err(|e| Error::new(Kind::S3, format!("S3 delete request: {e}")))?;
        client.delete_objects().bucket(bucket).delete(del).send().await.map_err(|e| map_err(e, &format!("delete in {bucket}")))?;
    }
    Ok(())
}

/// Creates `bucket` in `region` (us-east-1 takes no location constraint); a bucket that
/// appeared meanwhile and is ours is fine.
async fn create_bucket(client: &Client, bucket: &str, region: &str) -> Result<()> {
    use aws_sdk_s3::types::{BucketLocationConstraint, CreateBucketConfiguration};
    let mut req = client.create_bucket().bucket(bucket);
    if region != "us-east-1" {
        let cfg = CreateBucketConfiguration::builder().location_constraint(BucketLocationConstraint::from(region)).build();
        req = req.create_bucket_configuration(cfg);
    }
    crate::trace::emit(2, &format!("s3: creating bucket {bucket} in {region}"));
    match req.send().await {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.code(), Some("BucketAlreadyOwnedByYou")) => Ok(()),
        Err(e) => Err(map_err(e, &format!("create bucket {bucket}"))),
    }
}

/// Runs `jobs` concurrently (at most `limit` at once) and returns their results in order.
async fn run_limited<T, F>(limit: usize, jobs: Vec<F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let sem = Arc::new(tokio::sync::Semaphore::new(limit.max(1)));
    let mut set = tokio::task::JoinSet::new();
    let n = jobs.len();
    for (i, job) in jobs.into_iter().enumerate() {
        let sem = sem.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            (i, job.await)
        });
    }
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    while let Some(done) = set.join_next().await {
        if let Ok((i, v)) = done {
            out[i] = Some(v);
        }
    }
    out.into_iter().map(|v| v.expect("every S3 job completes")).collect()
}

impl Zmap for S3Store {
    fn get(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        self.uploads.settle()?;
        block_on(get_object(self.client.clone(), self.target.bucket.clone(), self.object_key(key), self.stall))?
    }

    fn read_into(&self, key: &Key, out: &mut [u8]) -> Result<bool> {
        self.uploads.settle()?;
        block_on(fetch(&self.client, &self.target.bucket, &self.object_key(key), self.stall, Sink::Exact(out)))?
    }

    fn read_many_into(&self, keys: &[Key], outs: Vec<&mut [u8]>) -> Result<Vec<bool>> {
        keys.iter().try_for_each(|k| validate_key(k))?;
        self.uploads.settle()?;
        let (client, bucket, stall) = (&self.client, self.target.bucket.as_str(), self.stall);
        let objects: Vec<String> = keys.iter().map(|k| self.object_key(k)).collect();
        let outs_len = outs.iter().map(|o| o.len()).max();
        // Not spawned: each GET writes into memory borrowed from the caller, which outlives
        // this call; they run concurrently on this thread, the connections on the runtime.
        let gets: Vec<_> = objects.iter().zip(outs).map(|(key, out)| fetch(client, bucket, key, stall, Sink::Exact(out))).collect();
        let concurrency = self.in_flight.limit(outs_len);
        block_on(async move {
            use futures_util::StreamExt;
            futures_util::stream::iter(gets).buffered(concurrency).collect::<Vec<Result<bool>>>().await
        })?
        .into_iter()
        .collect()
    }

    fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Vec<u8>>>> {
        self.uploads.settle()?;
        keys.iter().try_for_each(|k| validate_key(k))?;
        let jobs: Vec<_> =
            keys.iter().map(|k| get_object(self.client.clone(), self.target.bucket.clone(), self.object_key(k), self.stall)).collect();
        block_on(run_limited(self.in_flight.limit(None), jobs))?.into_iter().collect()
    }

    fn put(&self, key: &Key, value: &[u8]) -> Result<()> {
        // Synchronous, after every upload handed over before it: metadata is stored this
        // way, and must never name chunks that are not stored yet.
        validate_key(key)?;
        self.uploads.finish()?;
        block_on(put_object(self.put_ctx(), self.object_key(key), value.to_vec()))?
    }

    fn put_many(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        // A metadata wave: stored after everything handed over before it (`Uploads`).
        items.iter().try_for_each(|(k, _)| validate_key(k))?;
        self.uploads.take_failure()?;
        let ctx = self.put_ctx();
        let keys: Vec<String> = items.iter().map(|(k, _)| self.object_key(k)).collect();
        let bytes = items.iter().map(|(_, v)| v.len()).sum();
        let largest = items.iter().map(|(_, v)| v.len()).max();
        let (concurrency, objects) = (self.in_flight.limit(largest), keys.clone());
        let wave = async move {
            let jobs: Vec<_> = objects.into_iter().zip(items).map(|(key, (_, v))| put_object(ctx.clone(), key, v)).collect();
            run_limited(concurrency, jobs).await.into_iter().collect::<Result<()>>()
        };
        self.uploads.start(&keys, bytes, true, wave)
    }

    fn put_chunks(&self, items: Vec<(Key, Vec<u8>)>) -> Result<()> {
        items.iter().try_for_each(|(k, _)| validate_key(k))?;
        self.uploads.take_failure()?;
        let ctx = self.put_ctx();
        for (k, v) in items {
            let key = self.object_key(&k);
            self.uploads.start(std::slice::from_ref(&key), v.len(), false, put_object(ctx.clone(), key.clone(), v))?;
        }
        Ok(())
    }

    fn get_ranges(&self, key: &Key, ranges: &[ByteRange], size: Option<u64>) -> Result<Option<Ranges>> {
        self.uploads.settle()?;
        let k = self.object_key(key);
        let jobs: Vec<_> = ranges.iter().map(|&r| get_range(self.client.clone(), self.target.bucket.clone(), k.clone(), r)).collect();
        let got: Vec<Option<(Vec<u8>, Option<u64>)>> =
            block_on(run_limited(self.in_flight.limit(None), jobs))?.into_iter().collect::<Result<_>>()?;
        let Some(got) = got.into_iter().collect::<Option<Vec<_>>>() else { return Ok(None) };
        // The object's size is `Content-Range`'s total. A server that omits it leaves the
        // length a suffix read returned (the whole object when it is shorter), else the
        // expected size, as the best bound.
        let reported = got.iter().find_map(|(_, s)| *s);
        let suffix_len = ranges.iter().zip(&got).find(|(r, _)| matches!(r, ByteRange::Suffix(_))).map(|(_, (d, _))| d.len() as u64);
        let total = reported.or(suffix_len).or(size).unwrap_or(u64::MAX);
        if reported.is_some() {
            super::check_size(key, total, size)?;
        }
        for (r, (data, _)) in ranges.iter().zip(&got) {
            let (_, n) = r.within(key, total)?;
            if data.len() != n {
                return err(Kind::S3, format!("S3 ranged get {key}: {} bytes, expected {n}", data.len()));
            }
        }
        Ok(Some(Ranges { parts: got.into_iter().map(|(d, _)| d).collect(), size: total }))
    }

    fn list_dir(&self, prefix: &Key) -> Result<Vec<String>> {
        self.uploads.settle()?;
        let (client, bucket, dir) = (self.client.clone(), self.target.bucket.clone(), self.dir_prefix(prefix));
        let raw: Vec<String> = block_on(async move {
            let mut names = Vec::new();
            let mut token: Option<String> = None;
            loop {
                let out = client
                    .list_objects_v2()
                    .bucket(&bucket)
                    .prefix(&dir)
                    .delimiter("/")
                    .set_continuation_token(token.take())
                    .send()
                    .await
                    .map_err(|e| map_err(e, &format!("list {dir}")))?;
                for p in out.common_prefixes() {
                    if let Some(p) = p.prefix() {
                        names.push(p[dir.len().min(p.len())..].trim_end_matches('/').to_string());
                    }
                }
                for o in out.contents() {
                    if let Some(k) = o.key() {
                        names.push(k[dir.len().min(k.len())..].to_string());
                    }
                }
                match (out.is_truncated(), out.next_continuation_token()) {
                    (Some(true), Some(t)) => token = Some(t.to_string()),
                    _ => break,
                }
            }
            Ok::<_, Error>(names)
        })??;
        let mut names = Vec::with_capacity(raw.len());
        for name in raw {
            // A server may list `root/../`, `a//b` or control characters: never follow them.
            if name.is_empty() || name == "." || name == ".." || name.contains('/') || validate_key(&name).is_err() {
                return err(Kind::BadName, format!("S3 listing under {prefix:?} holds a bad name {name:?}"));
            }
            if !names.contains(&name) {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn delete_prefix(&self, prefix: &Key) -> Result<()> {
        self.uploads.finish()?;
        let (client, bucket) = (self.client.clone(), self.target.bucket.clone());
        let (exact, dir) = (self.object_key(prefix), self.dir_prefix(prefix));
        // Inside the dataset an object may sit at the prefix itself; it is deleted only when
        // listed (some servers fail a delete of a key that is also a folder, as s3s-fs does).
        let at_root = prefix.is_empty();
        block_on(async move {
            let listed = if at_root { list_under(&client, &bucket, &dir).await? } else { list_under(&client, &bucket, &exact).await? };
            let Some(keys) = listed else { return Ok(()) };
            let keys: Vec<String> = keys.into_iter().filter(|k| k.starts_with(&dir) || (!at_root && *k == exact)).collect();
            delete_keys(&client, &bucket, &keys).await
        })?
    }

    fn flush(&self) -> Result<()> {
        self.uploads.finish()
    }

    fn describe(&self) -> String {
        self.target.describe()
    }

    fn caps(&self) -> Caps {
        // Batches bound what staging buffers hold (filtered chunks): twice the in-flight
        // limit of sizeable objects.
        Caps { batch_size: self.in_flight.limit(Some(1 << 20)).max(16) * 2, latency_bound: true, concurrent_puts: false }
    }
}

#[cfg(test)]
mod tests {
    use crate::zmap::Key;
    /// The conformance suite against a live server when `NCZARR_TEST_S3_ENDPOINT` names one
    /// (make check starts moto and runs it through ctests/run_s3.sh).
    #[test]
    fn conformance_on_live_server() {
        let Some(endpoint) = crate::config::test_s3_endpoint() else { return };
        let url = format!("{endpoint}/nczarr-conformance/run{}", std::process::id());
        let target = crate::url::s3::parse_target(&url).unwrap();
        let store = super::S3Store::new(&target, &Default::default()).unwrap();
        store.clear().unwrap();
        super::super::conformance::run(&store);
        // Inside a caller's own tokio runtime: no panic, same answers.
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async { assert_eq!(super::Zmap::get(&store, &Key::new("nope").unwrap()).unwrap(), None) });
        store.clear().unwrap();
    }

    #[test]
    fn requests_in_flight_follow_object_size() {
        let adaptive = super::InFlight { fixed: None };
        assert_eq!(adaptive.limit(None), 128);
        assert_eq!(adaptive.limit(Some(1000)), 128);
        assert_eq!(adaptive.limit(Some(1 << 20)), 64);
        assert_eq!(adaptive.limit(Some(16 << 20)), 32);
        assert_eq!(adaptive.weight(Some(1 << 20)), 2);
        assert_eq!(adaptive.weight(None), 1);
        let fixed = super::InFlight { fixed: Some(1) };
        assert_eq!((fixed.limit(None), fixed.limit(Some(1 << 30)), fixed.max(), fixed.weight(Some(5))), (1, 1, 1, 1));
    }
}

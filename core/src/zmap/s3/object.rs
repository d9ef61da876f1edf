//! A netCDF file stored as one S3 object: look at its first bytes, fetch it whole with
//! concurrent ranged GETs (into memory or into a local file), and store it back whole with a
//! multipart upload that completes only when every part is stored.
//!
//! S3netCDF4's backend settings apply when an alias names them (`enable_multipart_download`,
//! `enable_multipart_upload`, `maximum_part_size`, `maximum_parts`); otherwise parts are
//! `NCZARR_S3_PART_MB` and in flight as the store's own rules say.

use super::S3Store;
use super::errors::{is_not_found, map_err};
use super::requests::{PutCtx, put_object};
use super::runtime::block_on;
use crate::error::{Error, Kind, Result, err};
use crate::nc::magic::{self, FileFormat};
use crate::url::s3::S3Target;
use aws_sdk_s3::error::ProvideErrorMetadata;
use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One S3 object holding (or about to hold) a whole netCDF file.
pub struct S3Object {
    store: S3Store,
    key: String,
    part_size: usize,
    parts_in_flight: usize,
    multipart_download: bool,
    multipart_upload: bool,
}

/// What an open found under the name.
pub(crate) enum Probed {
    /// No object of that key (or no such bucket).
    Absent,
    /// An object that holds no netCDF signature.
    NotNetcdf,
    /// A netCDF file: its format, size, first bytes and version tag, and the rest of the
    /// first part still arriving (`download` takes it over, beside the other parts).
    File { format: FileFormat, size: u64, head: Vec<u8>, etag: Option<String>, pending: Option<FirstPart> },
}

/// The body of the first ranged GET, not yet read past `head`: it ends at byte `end`.
pub(crate) struct FirstPart {
    body: aws_sdk_s3::primitives::ByteStream,
    end: usize,
}

/// Where a download goes.
pub(crate) enum Destination<'a> {
    /// Memory of exactly the object's size.
    Memory(&'a mut [u8]),
    /// A local file (written at the same offsets as the object's bytes).
    File(&'a std::fs::File),
}

impl S3Object {
    pub fn new(target: &S3Target, params: &BTreeMap<String, String>) -> Result<S3Object> {
        let mut store = S3Store::new(target, params)?;
        let transfer = target.alias_transfer;
        let part_size = transfer.part_size.map_or(store.part_size, |n| usize::try_from(n).unwrap_or(usize::MAX).max(5 << 20));
        let parts_in_flight = transfer
            .max_parts
            .map_or_else(|| store.in_flight.limit(Some(part_size)), |n| n as usize)
            .clamp(1, super::uploads::InFlight::MOST);
        // An alias's part size is also where multipart starts (S3netCDF4's rule).
        if transfer.part_size.is_some() {
            store.multipart_threshold = part_size;
        }
        store.part_size = part_size;
        Ok(S3Object {
            key: target.root.clone(),
            store,
            part_size,
            parts_in_flight,
            multipart_download: transfer.multipart_download.unwrap_or(true),
            multipart_upload: transfer.multipart_upload.unwrap_or(true),
        })
    }

    pub(crate) fn describe(&self) -> String {
        self.store.target.describe()
    }

    fn bucket(&self) -> &str {
        &self.store.target.bucket
    }

    /// Asks for the first part of the object and says what it is from its first bytes (one
    /// request: an open of a small file costs one round trip). The rest of that part keeps
    /// arriving while `download` asks for the others. An HDF5 signature behind a user block
    /// costs the whole first part, then one small ranged GET per candidate offset past it.
    pub(crate) fn probe(&self) -> Result<Probed> {
        let (client, bucket, key) = (&self.store.client, self.bucket(), self.key.as_str());
        let first = self.part_size;
        let stall = self.store.stall;
        let got = block_on(async {
            match client.get_object().bucket(bucket).key(key).range(format!("bytes=0-{}", first - 1)).send().await {
                Ok(out) => {
                    let etag = out.e_tag().map(str::to_string);
                    let total = out.content_range().and_then(|r| r.rsplit('/').next()).and_then(|t| t.parse::<u64>().ok());
                    let total = total.or(out.content_length().and_then(|n| u64::try_from(n).ok()));
                    let mut body = out.body;
                    let mut head = Vec::new();
                    while head.len() < 8 {
                        match tokio::time::timeout(stall, body.next()).await {
                            Ok(Some(Ok(bytes))) => head.extend_from_slice(&bytes),
                            Ok(Some(Err(e))) => return err(Kind::S3, format!("S3 get {key}: {e}")),
                            Ok(None) => break,
                            Err(_) => return err(Kind::S3, format!("S3 get {key}: stalled")),
                        }
                    }
                    Ok(Some((head, body, total, etag)))
                }
                Err(e) if is_not_found(&e) || e.code() == Some("NoSuchBucket") => Ok(None),
                // An empty object has no first byte to ask for.
                Err(e) if e.code() == Some("InvalidRange") => Ok(Some((Vec::new(), Default::default(), Some(0), None))),
                Err(e) => Err(map_err(e, &format!("get {key}"))),
            }
        })??;
        let Some((mut head, body, total, etag)) = got else { return Ok(Probed::Absent) };
        let size = total.unwrap_or(head.len() as u64);
        let end = (first as u64).min(size) as usize;
        if let Some(format) = magic::signature(&head) {
            let pending = (head.len() < end).then_some(FirstPart { body, end });
            return Ok(Probed::File { format, size, head, etag, pending });
        }
        if head.len() < end {
            let rest = block_on(async { body.collect().await })?.map_err(|e| Error::new(Kind::S3, format!("S3 get {key}: {e}")))?;
            head.extend_from_slice(&rest.into_bytes());
        }
        if head.len() < end {
            return err(Kind::S3, format!("S3 get {key}: {} bytes of the first {end}", head.len()));
        }
        if let Some(format) = magic::sniff(&head, size) {
            return Ok(Probed::File { format, size, head, etag, pending: None });
        }
        for offset in magic::hdf5_offsets(size).filter(|o| *o + 8 > head.len() as u64) {
            let at = self.range(offset, 8)?;
            if magic::signature(&at) == Some(FileFormat::Hdf5) {
                return Ok(Probed::File { format: FileFormat::Hdf5, size, head, etag, pending: None });
            }
        }
        Ok(Probed::NotNetcdf)
    }

    /// The object's first `len` bytes (all of it when smaller) and its size, in one ranged
    /// GET; `None`: no such object or bucket (a lazy open's first read).
    pub(crate) fn head(&self, len: u64) -> Result<Option<(Vec<u8>, u64)>> {
        let (client, bucket, key) = (&self.store.client, self.bucket(), self.key.as_str());
        block_on(async {
            match client.get_object().bucket(bucket).key(key).range(format!("bytes=0-{}", len.max(1) - 1)).send().await {
                Ok(out) => {
                    let total = out.content_range().and_then(|r| r.rsplit('/').next()).and_then(|t| t.parse::<u64>().ok());
                    let total = total.or(out.content_length().and_then(|n| u64::try_from(n).ok()));
                    let bytes = out.body.collect().await.map_err(|e| Error::new(Kind::S3, format!("S3 get {key}: {e}")))?.to_vec();
                    let size = total.unwrap_or(bytes.len() as u64);
                    Ok(Some((bytes, size)))
                }
                Err(e) if is_not_found(&e) || e.code() == Some("NoSuchBucket") => Ok(None),
                Err(e) if e.code() == Some("InvalidRange") => Ok(Some((Vec::new(), 0))),
                Err(e) => Err(map_err(e, &format!("get {key}"))),
            }
        })?
    }

    /// `len` bytes at `offset` (a probe of a user-block offset, a lazy open's reads).
    pub(crate) fn range(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        let (client, bucket, key) = (&self.store.client, self.bucket(), self.key.as_str());
        block_on(async {
            let out = client
                .get_object()
                .bucket(bucket)
                .key(key)
                .range(format!("bytes={offset}-{}", offset + len - 1))
                .send()
                .await
                .map_err(|e| map_err(e, &format!("ranged get {key}")))?;
            Ok(out.body.collect().await.map_err(|e| Error::new(Kind::S3, format!("S3 get {key}: {e}")))?.to_vec())
        })?
    }

    /// Fetches the rest of a probed object (`head` holds its first bytes, `pending` the
    /// first part still arriving) into `dest`: the first part's body and concurrent ranged
    /// GETs of one part each for the others, every one pinned to the probed version (an
    /// object replaced meanwhile is an error, never a mix of two versions).
    pub(crate) fn download(
        &self,
        size: u64,
        head: &[u8],
        etag: Option<&str>,
        pending: Option<FirstPart>,
        dest: Destination<'_>,
    ) -> Result<()> {
        use std::future::Future;
        use std::pin::Pin;
        type Job<'a> = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;
        let size = usize::try_from(size).map_err(|_| Error::new(Kind::NoMem, format!("{}: {size} bytes", self.key)))?;
        let have = head.len().min(size);
        let first_end = pending.as_ref().map_or(have, |p| p.end.min(size));
        let part = if self.multipart_download { self.part_size } else { size.max(1) };
        let ranges: Vec<(usize, usize)> = (first_end..size).step_by(part.max(1)).map(|o| (o, (o + part).min(size))).collect();
        crate::trace::emit(
            2,
            &format!("s3 object: {} bytes of {} in {} ranged GETs, {} at once", size, self.key, ranges.len() + 1, self.parts_in_flight),
        );
        let key = self.key.as_str();
        let src = Version { client: &self.store.client, bucket: self.bucket(), key, etag, stall: self.store.stall };
        match dest {
            Destination::Memory(dst) => {
                if dst.len() != size {
                    return err(Kind::Internal, format!("{key}: destination of {} bytes for {size}", dst.len()));
                }
                crate::bytes::copy(&mut dst[..have], &head[..have]);
                let (first, mut rest) = dst[have..].split_at_mut(first_end - have);
                let mut jobs: Vec<Job<'_>> = Vec::with_capacity(ranges.len() + 1);
                if let Some(p) = pending {
                    jobs.push(Box::pin(src.finish_first(p.body, have, first)));
                }
                // Disjoint slices of the one buffer, one per range, filled concurrently.
                for &(a, b) in &ranges {
                    let (this, more) = rest.split_at_mut(b - a);
                    jobs.push(Box::pin(src.get_part(a as u64, this)));
                    rest = more;
                }
                run_jobs(jobs, self.parts_in_flight)
            }
            Destination::File(file) => {
                use std::os::unix::fs::FileExt;
                file.set_len(size as u64).map_err(|e| io_error(&e, "cache file"))?;
                file.write_all_at(&head[..have], 0).map_err(|e| io_error(&e, "cache file"))?;
                let mut jobs: Vec<Job<'_>> = Vec::with_capacity(ranges.len() + 1);
                if let Some(p) = pending {
                    jobs.push(Box::pin(async move {
                        let mut buf = crate::zmap::zeroed((first_end - have) as u64)?;
                        src.finish_first(p.body, have, &mut buf).await?;
                        file.write_all_at(&buf, have as u64).map_err(|e| io_error(&e, "cache file"))
                    }));
                }
                for &(a, b) in &ranges {
                    jobs.push(Box::pin(async move {
                        let mut buf = crate::zmap::zeroed((b - a) as u64)?;
                        src.get_part(a as u64, &mut buf).await?;
                        file.write_all_at(&buf, a as u64).map_err(|e| io_error(&e, "cache file"))
                    }));
                }
                run_jobs(jobs, self.parts_in_flight)
            }
        }
    }

    /// Does the object exist (`NC_NOCLOBBER`)? One HEAD request.
    pub fn exists(&self) -> Result<bool> {
        let (client, bucket, key) = (&self.store.client, self.bucket(), self.key.as_str());
        block_on(async {
            match client.head_object().bucket(bucket).key(key).send().await {
                Ok(_) => Ok(true),
                Err(e) if is_not_found(&e) || e.code() == Some("NoSuchBucket") => Ok(false),
                Err(e) => Err(map_err(e, &format!("head {key}"))),
            }
        })?
    }

    /// Stores `body` as the object. Above the part size it goes up in concurrent parts
    /// (unless the alias turned multipart uploads off); the upload completes only when every
    /// part is stored and is aborted otherwise, so a failure leaves the previous object.
    pub(crate) fn upload(&self, body: bytes::Bytes) -> Result<()> {
        // S3 allows 10,000 parts: a huge file gets bigger parts.
        let part_size = self.part_size.max(body.len().div_ceil(10_000));
        let ctx = Arc::new(PutCtx {
            client: self.store.client.clone(),
            bucket: self.store.target.bucket.clone(),
            multipart_threshold: if self.multipart_upload { self.store.multipart_threshold.max(5 << 20) } else { usize::MAX },
            part_size,
            part_concurrency: self.parts_in_flight,
            sign_payload: self.store.sign_payload,
        });
        crate::trace::emit(2, &format!("s3 object: uploading {} bytes to {}", body.len(), self.key));
        block_on(put_object(ctx, self.key.clone(), body))?
    }
}

/// Runs the download jobs, at most `limit` at once; the first error wins.
fn run_jobs(jobs: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send + '_>>>, limit: usize) -> Result<()> {
    block_on(async {
        let results: Vec<Result<()>> = futures_util::stream::iter(jobs).buffer_unordered(limit.max(1)).collect().await;
        results.into_iter().collect::<Result<()>>()
    })?
}

/// Copies a response body into `dst` from `*filled` on, until it ends, breaks, or stops
/// arriving for a whole attempt timeout (all three count as cut short: the caller resumes).
async fn drain(
    body: &mut aws_sdk_s3::primitives::ByteStream,
    dst: &mut [u8],
    filled: &mut usize,
    key: &str,
    stall: std::time::Duration,
) -> Result<()> {
    while let Ok(Some(piece)) = tokio::time::timeout(stall, body.next()).await {
        let Ok(bytes) = piece else { break };
        let Some(to) = dst.get_mut(*filled..*filled + bytes.len()) else {
            return err(Kind::S3, format!("S3 get {key}: more bytes than asked for"));
        };
        crate::bytes::copy(to, &bytes);
        *filled += bytes.len();
    }
    Ok(())
}

fn io_error(e: &std::io::Error, what: &str) -> Error {
    match e.raw_os_error() {
        Some(code) => Error::new(Kind::Errno(code), format!("{what}: {e}")),
        None => Error::new(Kind::Io, format!("{what}: {e}")),
    }
}

/// One version of one object (its ETag, when the server gave one): where the ranged GETs of
/// a download go.
#[derive(Clone, Copy)]
struct Version<'a> {
    client: &'a aws_sdk_s3::Client,
    bucket: &'a str,
    key: &'a str,
    etag: Option<&'a str>,
    /// Longest silence inside a body before it counts as cut short.
    stall: std::time::Duration,
}

impl Version<'_> {
    /// The rest of the first part: its body, already under way, into `dst` (which starts at
    /// byte `from` of the object); a body cut short is resumed with a ranged GET.
    async fn finish_first(self, mut body: aws_sdk_s3::primitives::ByteStream, from: usize, dst: &mut [u8]) -> Result<()> {
        let mut filled = 0usize;
        drain(&mut body, dst, &mut filled, self.key, self.stall).await?;
        if filled < dst.len() {
            self.get_part((from + filled) as u64, &mut dst[filled..]).await?;
        }
        Ok(())
    }

    /// One ranged GET into `dst` (exactly its length), pinned to the ETag; a body cut short
    /// is resumed from where it stopped (at most three times).
    async fn get_part(self, offset: u64, dst: &mut [u8]) -> Result<()> {
        let key = self.key;
        let mut filled = 0usize;
        for attempt in 0..4 {
            if filled == dst.len() {
                return Ok(());
            }
            if attempt > 0 {
                crate::trace::emit(2, &format!("s3 object: {key} part at {offset} cut at {filled}; resuming"));
            }
            let from = offset + filled as u64;
            let to = offset + dst.len() as u64 - 1;
            let out = self
                .client
                .get_object()
                .bucket(self.bucket)
                .key(key)
                .range(format!("bytes={from}-{to}"))
                .set_if_match(self.etag.map(str::to_string))
                .send()
                .await
                .map_err(|e| match e.code() {
                    Some("PreconditionFailed") => Error::new(Kind::S3, format!("S3 get {key}: the object changed while it was read")),
                    _ => map_err(e, &format!("ranged get {key}")),
                })?;
            let mut body = out.body;
            drain(&mut body, dst, &mut filled, key, self.stall).await?;
        }
        if filled == dst.len() { Ok(()) } else { err(Kind::S3, format!("S3 get {key}: part at {offset} cut short 4 times")) }
    }
}

/// A probed object read by range (a lazy open's target).
pub struct ObjectRanges {
    pub(crate) object: S3Object,
    pub(crate) size: u64,
}

impl crate::zmap::range::RangeSource for ObjectRanges {
    fn size(&self) -> u64 {
        self.size
    }

    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        if len == 0 {
            return Ok(Vec::new());
        }
        if offset.checked_add(len).is_none_or(|end| end > self.size) {
            return err(Kind::NcZarr, format!("{}: range {offset}+{len} past its end ({} bytes)", self.object.describe(), self.size));
        }
        crate::trace::emit(2, &format!("s3 object: ranged get {} {offset}+{len}", self.object.describe()));
        let got = self.object.range(offset, len)?;
        if got.len() as u64 != len {
            return err(Kind::S3, format!("{}: {} bytes of {len} at {offset}", self.object.describe(), got.len()));
        }
        Ok(got)
    }

    fn describe(&self) -> String {
        self.object.describe()
    }

    // kerchunk's spelling: readers pass the endpoint and credentials (fsspec's
    // `remote_options`, our settings) beside it.
    fn url(&self) -> Option<String> {
        Some(format!("s3://{}/{}", self.object.bucket(), self.object.key))
    }
}

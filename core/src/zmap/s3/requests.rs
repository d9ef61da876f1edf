//! The S3 requests the driver makes, one async function each: whole and ranged GETs (a body
//! cut short resumed against its ETag), PUTs (multipart above a threshold), listings,
//! deletes, bucket creation.

use super::errors::{is_not_found, map_err};
use super::runtime::run_limited;
use crate::error::{Error, Kind, Result, err};
use crate::zmap::{ByteRange, check_size};
use aws_sdk_s3::Client;
use aws_sdk_s3::error::ProvideErrorMetadata;
use aws_sdk_s3::primitives::ByteStream;
use std::sync::Arc;
use std::time::Duration;

/// GET of a whole object; `None` when absent. A body cut short is resumed from where it
/// stopped with a ranged GET pinned to the ETag; a changed object is an error.
pub(super) async fn get_object(client: Client, bucket: String, key: String, stall: Duration) -> Result<Option<Vec<u8>>> {
    let mut data = Vec::new();
    Ok(fetch(&client, &bucket, &key, stall, Sink::Grow(&mut data)).await?.then_some(data))
}

/// Where a GET's body goes: a growing buffer, or straight into caller memory of exactly the
/// object's size (no intermediate buffer; a different size is NC_ENCZARR).
pub(super) enum Sink<'a> {
    Grow(&'a mut Vec<u8>),
    Exact(&'a mut [u8]),
}

/// GET of a whole object into `sink`; `false` when absent. A body cut short is resumed from
/// where it stopped with a ranged GET pinned to the ETag, so the bytes are one version.
pub(super) async fn fetch(client: &Client, bucket: &str, key: &str, stall: Duration, mut sink: Sink<'_>) -> Result<bool> {
    let out = match client.get_object().bucket(bucket).key(key).send().await {
        Ok(o) => o,
        Err(e) if is_not_found(&e) => return Ok(false),
        Err(e) if matches!(e.code(), Some("NoSuchBucket")) => return Ok(false),
        Err(e) => return Err(map_err(e, &format!("get {key}"))),
    };
    let expected = out.content_length().map(|n| n.max(0) as usize);
    let etag = out.e_tag().map(str::to_string);
    let mut filled = 0;
    sink.prepare(key, expected)?;
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
                sink.take(key, filled, &bytes)?;
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
                body = resume(client, bucket, key, filled..total, tag).await?;
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

/// The rest of an object whose body was cut short (`bytes` of it), if it is still the object
/// of ETag `tag`.
async fn resume(
    client: &Client,
    bucket: &str,
    key: &str,
    bytes: std::ops::Range<usize>,
    tag: &str,
) -> Result<aws_sdk_s3::primitives::ByteStream> {
    let more = client
        .get_object()
        .bucket(bucket)
        .key(key)
        .range(format!("bytes={}-{}", bytes.start, bytes.end - 1))
        .if_match(tag)
        .send()
        .await
        .map_err(|e| match e.code() {
            Some("PreconditionFailed") => Error::new(Kind::S3, format!("S3 get {key}: object changed while reading")),
            _ => map_err(e, &format!("resume {key}")),
        })?;
    Ok(more.body)
}

impl Sink<'_> {
    /// Room for the `expected` bytes a server claims (allocated fallibly: a huge claim is
    /// NC_ENOMEM, not an abort), or that claim checked against the caller's buffer.
    fn prepare(&mut self, key: &str, expected: Option<usize>) -> Result<()> {
        match self {
            Sink::Grow(data) => {
                data.try_reserve_exact(expected.unwrap_or(0)).map_err(|_| Error::new(Kind::NoMem, format!("{key}: {expected:?} bytes")))
            }
            Sink::Exact(dst) => match expected {
                Some(n) => check_size(key, n as u64, Some(dst.len() as u64)),
                None => Ok(()),
            },
        }
    }

    /// The body's next `bytes`, `filled` bytes into it.
    fn take(&mut self, key: &str, filled: usize, bytes: &[u8]) -> Result<()> {
        match self {
            Sink::Grow(data) => {
                data.try_reserve(bytes.len()).map_err(|_| Error::new(Kind::NoMem, format!("{key}: body too large")))?;
                data.extend_from_slice(bytes);
                Ok(())
            }
            Sink::Exact(dst) => match dst.get_mut(filled..filled + bytes.len()) {
                Some(to) => {
                    crate::bytes::copy(to, bytes);
                    Ok(())
                }
                None => err(Kind::NcZarr, format!("{key}: more than the {} bytes expected", dst.len())),
            },
        }
    }
}

/// One range of an object: its bytes and, when the server says, the object's size.
pub(super) async fn get_range(client: Client, bucket: String, key: String, range: ByteRange) -> Result<Option<(Vec<u8>, Option<u64>)>> {
    let header = match range {
        ByteRange::At { len: 0, .. } => return Ok(Some((Vec::new(), None))),
        ByteRange::At { offset, len } => format!("bytes={offset}-{}", offset + len as u64 - 1),
        ByteRange::Suffix(n) => format!("bytes=-{n}"),
    };
    ranged_get(&client, &bucket, &key, header).await
}

/// One ranged GET: the body and the object's total size from `Content-Range`.
pub(super) async fn ranged_get(client: &Client, bucket: &str, key: &str, range: String) -> Result<Option<(Vec<u8>, Option<u64>)>> {
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

pub(super) async fn put_object(store: Arc<PutCtx>, key: String, value: impl Into<bytes::Bytes>) -> Result<()> {
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

pub(super) struct PutCtx {
    pub(super) client: Client,
    pub(super) bucket: String,
    pub(super) multipart_threshold: usize,
    pub(super) part_size: usize,
    /// Parts of one upload in flight at once.
    pub(super) part_concurrency: usize,
    pub(super) sign_payload: bool,
}

/// The `x-amz-checksum-crc32c` value of a body: the server checks the bytes it received
/// against it. With it, a PUT need not hash its whole body with SHA-256 for the signature
/// (which costs client and server a pass over the data each); the headers, this checksum
/// among them, stay signed.
pub(super) fn crc32c_header(body: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(crate::codec::crc32c(body).to_be_bytes())
}

/// Every key starting with `prefix`; `None` when the bucket does not exist.
pub(super) async fn list_under(client: &Client, bucket: &str, prefix: &str) -> Result<Option<Vec<String>>> {
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

/// The names directly under `dir` (a key prefix ending in `/`, or empty): objects and
/// common prefixes, as the server lists them (not yet checked).
pub(super) async fn list_children(client: &Client, bucket: &str, dir: &str) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let out = client
            .list_objects_v2()
            .bucket(bucket)
            .prefix(dir)
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
            _ => return Ok(names),
        }
    }
}

/// Deletes `keys`, 1000 to a request (S3's limit).
pub(super) async fn delete_keys(client: &Client, bucket: &str, keys: &[String]) -> Result<()> {
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
pub(super) async fn create_bucket(client: &Client, bucket: &str, region: &str) -> Result<()> {
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

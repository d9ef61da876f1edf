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

//!
//! Files: `client` builds the SDK client, `credentials` resolves region and keys, `settings`
//! reads every `NCZARR_S3_*` knob, `runtime` owns tokio, `requests` holds one async function per
//! S3 request, `uploads` the write-behind bookkeeping, `errors` the NC_* mapping; `object`
//! serves whole netCDF files stored as single objects.

mod client;
pub(crate) mod credentials;
mod errors;
pub mod object;
mod requests;
pub(crate) mod runtime;
mod settings;
mod uploads;

use super::{ByteRange, Caps, Key, Ranges, Zmap, check_size, validate_key};
use crate::error::{Kind, Result, err};
use crate::url::s3::S3Target;
use aws_sdk_s3::Client;
use aws_sdk_s3::error::ProvideErrorMetadata;
use errors::map_err;
use requests::{PutCtx, Sink, create_bucket, delete_keys, fetch, get_object, get_range, list_children, list_under, put_object};
use runtime::{block_on, run_limited};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use uploads::{InFlight, Uploads};

pub(crate) struct S3Store {
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

impl Drop for S3Store {
    /// Uploads still running finish before the store goes (a dataset closed without a flush,
    /// e.g. after an error, still stores what it handed over).
    fn drop(&mut self) {
        let _ = self.uploads.settle();
    }
}

impl S3Store {
    /// Connects (lazily: no request is made here) with the settings of `target`/`params`.
    pub(crate) fn new(target: &S3Target, params: &BTreeMap<String, String>) -> Result<S3Store> {
        let settings = credentials::resolve(target, params);
        crate::trace::emit(2, &format!("s3: {} region {} credentials from {}", target.describe(), settings.region, settings.source));
        // An alias's own backend timeouts apply to that alias only.
        let knobs = settings::Knobs::read(&target.alias_timeouts);
        let in_flight = InFlight { fixed: knobs.concurrency };
        Ok(S3Store {
            client: client::client_for(target, &settings, &knobs)?,
            target: target.clone(),
            region: settings.region.clone(),
            in_flight,
            multipart_threshold: knobs.multipart_threshold,
            part_size: knobs.part_size,
            stall: Duration::from_secs_f64(knobs.attempt),
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
    pub(crate) fn clear(&self) -> Result<()> {
        self.delete_prefix(&Key::root())
    }

    /// Makes room for a new dataset (netcdf-c's clobber): clears the root, and creates the
    /// bucket when it does not exist, as netcdf-c does (refused: NC_EACCESS).
    pub(crate) fn create_root(&self) -> Result<()> {
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
    pub(crate) fn exists(&self) -> Result<bool> {
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
        // Its PUTs run at once, in no order: a key given twice keeps only its later value.
        let items = last_of_each_key(items);
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
            check_size(key, total, size)?;
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
        let raw = block_on(async move { list_children(&client, &bucket, &dir).await })??;
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
        Caps {
            batch_size: self.in_flight.limit(Some(1 << 20)).max(16) * 2,
            latency_bound: true,
            concurrent_puts: false,
            versioned: false,
            raw_chunks: false,
        }
    }
}

/// `items` with each key once, at its last value, in the order of those last values.
fn last_of_each_key(items: Vec<(Key, Vec<u8>)>) -> Vec<(Key, Vec<u8>)> {
    let mut last = std::collections::HashMap::new();
    for (i, (k, _)) in items.iter().enumerate() {
        last.insert(k.to_string(), i);
    }
    items.into_iter().enumerate().filter(|(i, (k, _))| last.get(k.as_str()) == Some(i)).map(|(_, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use crate::zmap::Key;
    /// The conformance suite against a live server when `NCZARR_TEST_S3_ENDPOINT` names one
    /// (make check starts moto and runs it through ctests/s3/run.sh).
    #[test]
    fn conformance_on_live_server() {
        let Some(endpoint) = crate::config::test_s3_endpoint() else { return };
        let url = format!("{endpoint}/nczarr-conformance/run{}", std::process::id());
        let target = crate::url::s3::parse_target(&url).unwrap();
        let store = super::S3Store::new(&target, &Default::default()).unwrap();
        store.clear().unwrap();
        crate::zmap::conformance::run(&store);
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

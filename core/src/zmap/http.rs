//! Plain HTTP(S) reads, for servers without the S3 API: a whole object, or a byte range of one
//! (`Range: bytes=a-b`). Reference sets on web servers and the files they point into are read
//! this way. One client per process, on the library's own runtime (as the S3 driver's).

use crate::error::{Error, Kind, Result, err};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use std::sync::OnceLock;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// The largest whole object read into memory (a reference set, a small target).
const MOST_WHOLE: usize = 1 << 31;

fn client() -> Result<&'static Client<Https, Empty<Bytes>>> {
    static CLIENT: OnceLock<std::result::Result<Client<Https, Empty<Bytes>>, Error>> = OnceLock::new();
    let made = CLIENT.get_or_init(|| {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(rustls::crypto::aws_lc_rs::default_provider())
            .map_err(|e| Error::new(Kind::Io, format!("HTTPS: no certificate roots ({e})")))?
            .https_or_http()
            .enable_http1()
            .build();
        Ok(Client::builder(hyper_util::rt::TokioExecutor::new()).build(https))
    });
    made.as_ref().map_err(Clone::clone)
}

/// GET of `url`, whole (`range` `None`) or `len` bytes at `offset`; `None` when the server has
/// no such object (404, 410). A server that ignores the range sends the whole object, which is
/// cut here; a range past the end is NC_ENCZARR.
pub(crate) fn get(url: &str, range: Option<(u64, u64)>) -> Result<Option<Vec<u8>>> {
    // A dropped connection or a busy server (5xx) is tried again, a few times, backing off.
    let mut attempt = 0;
    loop {
        match get_once(url, range) {
            Err(e) if attempt < RETRIES && e.kind == Kind::Io => {
                attempt += 1;
                crate::trace::emit(2, &format!("http: {e}; try {} of {}", attempt + 1, RETRIES + 1));
                std::thread::sleep(std::time::Duration::from_millis(50 << attempt));
            }
            other => return other,
        }
    }
}

/// Further tries of a GET that failed in transport or with a server error.
const RETRIES: u32 = 3;

fn get_once(url: &str, range: Option<(u64, u64)>) -> Result<Option<Vec<u8>>> {
    let uri: http::Uri = url.parse().map_err(|e| Error::new(Kind::Url, format!("{url}: {e}")))?;
    let mut request = http::Request::get(uri);
    let want = match range {
        Some((_, 0)) => return Ok(Some(Vec::new())),
        Some((offset, len)) => {
            let last = offset.checked_add(len - 1).ok_or_else(|| Error::new(Kind::NcZarr, format!("{url}: range {offset}+{len}")))?;
            request = request.header(http::header::RANGE, format!("bytes={offset}-{last}"));
            Some((offset, usize::try_from(len).map_err(|_| Error::new(Kind::NoMem, format!("{url}: {len} bytes")))?))
        }
        None => None,
    };
    let request = request.body(Empty::<Bytes>::new()).map_err(|e| Error::new(Kind::Url, format!("{url}: {e}")))?;
    let client = client()?;
    let url_owned = url.to_string();
    crate::zmap::s3::runtime::block_on(async move {
        let response = client.request(request).await.map_err(|e| Error::new(Kind::Io, format!("HTTP get {url_owned}: {e}")))?;
        let status = response.status().as_u16();
        match status {
            404 | 410 => return Ok(None),
            416 => return err(Kind::NcZarr, format!("HTTP get {url_owned}: range past the end of the object")),
            200 | 206 => {}
            401 | 403 => return err(Kind::Access, format!("HTTP get {url_owned}: status {status} (refused)")),
            500..=599 => return err(Kind::Io, format!("HTTP get {url_owned}: status {status}")),
            other => return err(Kind::Url, format!("HTTP get {url_owned}: status {other}")),
        }
        // A body larger than asked for is refused as it arrives, never held.
        let limit = match (want, status) {
            (Some((_, len)), 206) => len,
            (Some((offset, len)), _) => usize::try_from(offset).unwrap_or(usize::MAX).saturating_add(len),
            (None, _) => MOST_WHOLE,
        };
        let body = Limited::new(response.into_body(), limit)
            .collect()
            .await
            .map_err(|e| Error::new(Kind::Io, format!("HTTP get {url_owned}: {e}")))?
            .to_bytes();
        match (want, status) {
            (Some((_, len)), 206) if body.len() != len => {
                err(Kind::NcZarr, format!("HTTP get {url_owned}: {} bytes, {len} asked for", body.len()))
            }
            (Some((offset, len)), 200) => {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                match body.get(start..start.saturating_add(len)) {
                    Some(part) => Ok(Some(part.to_vec())),
                    None => err(Kind::NcZarr, format!("HTTP get {url_owned}: range {offset}+{len} past the end ({} bytes)", body.len())),
                }
            }
            _ => Ok(Some(body.to_vec())),
        }
    })?
}

/// The first `len` bytes of `url` (all of it when smaller) and the object's size, in one
/// ranged GET; `None`: no such object. A server that ignores the range is read no further than
/// `len` bytes, its size taken from `Content-Length`.
pub(crate) fn head(url: &str, len: u64) -> Result<Option<(Vec<u8>, u64)>> {
    let uri: http::Uri = url.parse().map_err(|e| Error::new(Kind::Url, format!("{url}: {e}")))?;
    let request = http::Request::get(uri)
        .header(http::header::RANGE, format!("bytes=0-{}", len.max(1) - 1))
        .body(Empty::<Bytes>::new())
        .map_err(|e| Error::new(Kind::Url, format!("{url}: {e}")))?;
    let client = client()?;
    let url_owned = url.to_string();
    crate::zmap::s3::runtime::block_on(async move {
        let response = client.request(request).await.map_err(|e| Error::new(Kind::Io, format!("HTTP get {url_owned}: {e}")))?;
        let status = response.status().as_u16();
        let header = |name: http::header::HeaderName| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        let total = match status {
            404 | 410 => return Ok(None),
            // An empty object has no first byte to ask for.
            416 => return Ok(Some((Vec::new(), 0))),
            206 => header(http::header::CONTENT_RANGE).and_then(|r| r.rsplit('/').next().and_then(|t| t.trim().parse::<u64>().ok())),
            200 => header(http::header::CONTENT_LENGTH).and_then(|n| n.trim().parse::<u64>().ok()),
            401 | 403 => return err(Kind::Access, format!("HTTP get {url_owned}: status {status} (refused)")),
            500..=599 => return err(Kind::Io, format!("HTTP get {url_owned}: status {status}")),
            other => return err(Kind::Url, format!("HTTP get {url_owned}: status {other}")),
        };
        let total = total.ok_or_else(|| Error::new(Kind::Io, format!("HTTP get {url_owned}: the server gives no size")))?;
        let want = usize::try_from(len.min(total)).unwrap_or(usize::MAX);
        let mut body = response.into_body();
        let mut got = Vec::with_capacity(want);
        while got.len() < want {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        got.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => return err(Kind::Io, format!("HTTP get {url_owned}: {e}")),
                None => break,
            }
        }
        got.truncate(want);
        Ok(Some((got, total)))
    })?
}

/// An object on a plain web server read by range (a lazy open's target).
pub struct WebObject {
    pub(crate) url: String,
    pub(crate) size: u64,
}

impl crate::zmap::range::RangeSource for WebObject {
    fn size(&self) -> u64 {
        self.size
    }

    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        crate::trace::emit(2, &format!("http object: ranged get {} {offset}+{len}", self.url));
        get(&self.url, Some((offset, len)))?.ok_or_else(|| Error::new(Kind::Errno(libc::ENOENT), format!("{}: no such object", self.url)))
    }

    fn describe(&self) -> String {
        self.url.clone()
    }

    fn url(&self) -> Option<String> {
        Some(self.url.clone())
    }
}

/// A Zarr store on a plain web server (`https://host/path/x.zarr#mode=nczarr,http`): every key
/// a GET of `base/key`, ranges by `Range` (shards). A web server lists nothing: pure Zarr needs
/// its consolidated metadata (`.zmetadata`); NCZarr names its groups and arrays itself.
/// Read-only.
pub struct WebStore {
    base: String,
}

impl WebStore {
    pub fn open(base: &str) -> WebStore {
        WebStore { base: base.trim_end_matches('/').to_string() }
    }

    fn url(&self, key: &crate::zmap::Key) -> String {
        if key.is_empty() { self.base.clone() } else { format!("{}/{}", self.base, key.as_str()) }
    }
}

impl crate::zmap::Zmap for WebStore {
    fn get(&self, key: &crate::zmap::Key) -> Result<Option<Vec<u8>>> {
        get(&self.url(key), None)
    }

    fn get_many(&self, keys: &[crate::zmap::Key]) -> Result<Vec<Option<Vec<u8>>>> {
        // Each GET waits on the network: several run at once.
        crate::zmap::get_concurrently(keys, &|k| self.get(k), "a web read")
    }

    fn put(&self, key: &crate::zmap::Key, _value: &[u8]) -> Result<()> {
        err(Kind::ReadOnly, format!("{}: a web server is read-only here", self.url(key)))
    }

    fn list_dir(&self, prefix: &crate::zmap::Key) -> Result<Vec<String>> {
        // Asked at the root when the metadata expected was not there: no store at all is
        // "does not exist", not "cannot be listed".
        if prefix.is_empty() {
            let mut any = false;
            for marker in [".zgroup", ".zmetadata", "zarr.json", ".zarray"] {
                any = any || get(&format!("{}/{marker}", self.base), Some((0, 1)))?.is_some();
            }
            if !any {
                return err(Kind::NoObject, format!("{}: no Zarr store there", self.base));
            }
        }
        err(
            Kind::NotBuilt,
            format!("{}: a web server cannot be listed; write the store with consolidated metadata (.zmetadata)", self.url(prefix)),
        )
    }

    fn delete_prefix(&self, prefix: &crate::zmap::Key) -> Result<()> {
        err(Kind::ReadOnly, format!("{}: a web server is read-only here", self.url(prefix)))
    }

    fn describe(&self) -> String {
        format!("web store {}", self.base)
    }

    fn caps(&self) -> crate::zmap::Caps {
        crate::zmap::Caps { batch_size: 64, latency_bound: true, concurrent_puts: false, versioned: false, raw_chunks: false }
    }
}

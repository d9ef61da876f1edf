//! Every `NCZARR_S3_*` setting in one place, read when a store is made (as netcdf-c reads its
//! settings per open). For the two timeouts netcdf-c also has, its `.ncrc` keys come first, then
//! a bucket alias's own timeouts, then ours.

use crate::config::{number, rc_seconds};
use crate::url::s3::AliasTimeouts;

/// The tuning of one S3 store.
pub(super) struct Knobs {
    /// Seconds to connect (`HTTP.CONNECTTIMEOUT`, the alias's, `NCZARR_S3_CONNECT_TIMEOUT`; 5).
    pub connect: f64,
    /// Seconds per attempt (`HTTP.TIMEOUT`, the alias's read timeout, `NCZARR_S3_ATTEMPT_TIMEOUT`; 60).
    pub attempt: f64,
    /// Seconds per operation, retries included (`NCZARR_S3_OPERATION_TIMEOUT`; 300).
    pub operation: f64,
    /// Attempts per request (`NCZARR_S3_MAX_ATTEMPTS`; 5).
    pub attempts: u32,
    /// First retry delay in ms (`NCZARR_S3_BACKOFF_MS`; 200).
    pub backoff_ms: f64,
    /// A fixed number of requests in flight (`NCZARR_S3_CONCURRENCY`); None: adaptive.
    pub concurrency: Option<usize>,
    /// Objects from this size go up in parts (`NCZARR_S3_MULTIPART_MB`; 64 MiB).
    pub multipart_threshold: usize,
    /// Part size (`NCZARR_S3_PART_MB`; 16 MiB, at least S3's 5 MiB).
    pub part_size: usize,
    /// Sign payloads (`NCZARR_S3_SIGN_PAYLOAD=1`); off: unsigned payloads over TLS.
    pub sign_payload: bool,
    /// MiB of uploads a writer may have in flight behind the caller (`NCZARR_S3_WRITE_BEHIND_MB`; 256).
    pub write_behind_mb: f64,
}

impl Knobs {
    pub fn read(alias: &AliasTimeouts) -> Knobs {
        Knobs {
            connect: rc_seconds("HTTP.CONNECTTIMEOUT")
                .or(alias.connect.map(|d| d.as_secs_f64()))
                .unwrap_or_else(|| number("NCZARR_S3_CONNECT_TIMEOUT", 5.0)),
            attempt: rc_seconds("HTTP.TIMEOUT")
                .or(alias.read.map(|d| d.as_secs_f64()))
                .unwrap_or_else(|| number("NCZARR_S3_ATTEMPT_TIMEOUT", 60.0)),
            operation: number("NCZARR_S3_OPERATION_TIMEOUT", 300.0),
            attempts: number("NCZARR_S3_MAX_ATTEMPTS", 5.0) as u32,
            backoff_ms: number("NCZARR_S3_BACKOFF_MS", 200.0),
            concurrency: std::env::var("NCZARR_S3_CONCURRENCY").ok().map(|_| (number("NCZARR_S3_CONCURRENCY", 32.0) as usize).max(1)),
            multipart_threshold: (number("NCZARR_S3_MULTIPART_MB", 64.0) * 1048576.0) as usize,
            part_size: ((number("NCZARR_S3_PART_MB", 16.0) * 1048576.0) as usize).max(5 << 20),
            sign_payload: number("NCZARR_S3_SIGN_PAYLOAD", 0.0) != 0.0,
            write_behind_mb: number("NCZARR_S3_WRITE_BEHIND_MB", 256.0),
        }
    }
}

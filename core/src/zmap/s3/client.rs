//! The SDK client a store talks through: built from a dataset's settings (region, keys,
//! endpoint, timeouts, retries), and shared by every store with the same ones.

use super::credentials::Settings;
use super::settings::Knobs;
use crate::error::{Error, Kind, Result};
use crate::url::s3::S3Target;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region, RequestChecksumCalculation, ResponseChecksumValidation};
use std::time::Duration;

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

/// The client for `target` with `settings` and `knobs` (no request is made here).
pub(super) fn client_for(target: &S3Target, settings: &Settings, knobs: &Knobs) -> Result<Client> {
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
    let endpoint = target.effective_endpoint();
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
    let same_client = ClientKey {
        endpoint,
        region: settings.region.clone(),
        keys: settings.keys.as_ref().map(|k| (k.access.clone(), k.secret.clone(), k.token.clone())),
        limits: [connect, attempt, operation, backoff].map(f64::to_bits),
        attempts,
    };
    shared_client(same_client, || Client::from_conf(b.build()))
}

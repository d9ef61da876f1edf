//! One place that turns SDK failures into NC_* meanings (keys named, secrets never).

use crate::error::{Error, Kind};
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};

/// The NC_* meaning of an SDK failure while doing `what`.
pub(super) fn map_err<E: ProvideErrorMetadata + std::fmt::Debug>(
    e: SdkError<E, aws_sdk_s3::config::http::HttpResponse>,
    what: &str,
) -> Error {
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
    // What to do about it, for the failures users meet first.
    let fix = match (kind, &e) {
        (Kind::Access, _) => {
            "; check the keys (fragment aws.access_key_id, an ~/.s3nc.json alias, the AWS profile or AWS_ACCESS_KEY_ID: NCTRACING=2 names the source used)"
        }
        (_, SdkError::DispatchFailure(_) | SdkError::TimeoutError(_)) => {
            "; is the endpoint in the name right and its server up? (NCZARR_S3_CONNECT_TIMEOUT, NCZARR_S3_MAX_ATTEMPTS)"
        }
        _ => "",
    };
    Error::new(kind, format!("S3 {what}: {detail}{fix}"))
}

/// A 404 or `NoSuchKey`: the object is absent, which is an answer, not a failure.
pub(super) fn is_not_found<E: ProvideErrorMetadata>(e: &SdkError<E, aws_sdk_s3::config::http::HttpResponse>) -> bool {
    e.raw_response().map(|r| r.status().as_u16()) == Some(404) || matches!(e.code(), Some("NoSuchKey") | Some("NotFound"))
}

//! S3 settings for a dataset whose URL `crate::url::s3` parsed (ecosystem.md §4.4).
//!
//! Settings follow netcdf-c's order: URL fragment, rc file (`.ncrc`…), `AWS_*` environment,
//! `~/.aws/config` and `~/.aws/credentials` profiles; profile `none`/`no` means unsigned
//! requests; region defaults to us-east-1. Secrets are never formatted into messages.

use crate::url::s3::S3Target;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

// ---- AWS profiles ---------------------------------------------------------------------------

/// Profiles from `~/.aws/config` then `~/.aws/credentials` (credentials win on duplicate keys),
/// as netcdf-c and the AWS SDK read them: `[name]` and `[profile name]`, `#`/`;` comments.
pub(crate) fn load_profiles() -> HashMap<String, HashMap<String, String>> {
    let base = crate::config::aws_dir();
    let config = std::env::var_os("AWS_CONFIG_FILE").map(PathBuf::from).or_else(|| base.as_ref().map(|b| b.join("config")));
    let creds = std::env::var_os("AWS_SHARED_CREDENTIALS_FILE").map(PathBuf::from).or_else(|| base.as_ref().map(|b| b.join("credentials")));
    let mut profiles: HashMap<String, HashMap<String, String>> = HashMap::new();
    for path in [config, creds].into_iter().flatten() {
        let Ok(text) = std::fs::read(&path) else { continue };
        parse_profiles(&String::from_utf8_lossy(&text), &mut profiles);
    }
    profiles
}

/// The profiles of one AWS config or credentials file's text, over those read before.
fn parse_profiles(text: &str, profiles: &mut HashMap<String, HashMap<String, String>>) {
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let section = section.trim();
            let name = section.strip_prefix("profile ").map(str::trim).unwrap_or(section);
            current = Some(name.to_string());
            profiles.entry(name.to_string()).or_default();
            continue;
        }
        if let (Some(p), Some((k, v))) = (&current, line.split_once('=')) {
            profiles.entry(p.clone()).or_default().insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
}

/// Credentials to sign with; `None` = unsigned (anonymous) requests.
#[derive(Clone)]
pub(crate) struct Keys {
    pub access: String,
    pub secret: String,
    pub token: Option<String>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keys({}…, secret redacted)", self.access.chars().take(4).collect::<String>())
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub region: String,
    pub keys: Option<Keys>,
    /// Which source gave the keys (for the trace log; never the keys themselves).
    pub source: String,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn fragment(params: &BTreeMap<String, String>, key: &str) -> Option<String> {
    params.get(key).filter(|v| !v.is_empty()).cloned()
}

/// Profile, region and keys for a target, in netcdf-c's order of sources.
pub(crate) fn resolve(target: &S3Target, params: &BTreeMap<String, String>) -> Settings {
    let profiles = load_profiles();
    let rc = |k: &str| crate::config::rc_get(k).filter(|v| !v.is_empty());
    // Profile: fragment → rc → AWS_PROFILE (if it exists) → default (if it exists).
    let chosen = fragment(params, "aws.profile")
        .or_else(|| rc("AWS.PROFILE"))
        .or_else(|| env("AWS_PROFILE").filter(|p| profiles.contains_key(p) || p == "none" || p == "no"));
    let profile_name = chosen.clone().or_else(|| profiles.contains_key("default").then(|| "default".to_string()));
    let profile = profile_name.as_ref().and_then(|p| profiles.get(p));
    let region = target
        .url_region
        .clone()
        .or_else(|| fragment(params, "aws.region"))
        .or_else(|| rc("AWS.REGION"))
        .or_else(|| profile.and_then(|p| p.get("region").cloned()))
        .or_else(|| env("AWS_REGION"))
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .unwrap_or_else(|| "us-east-1".to_string());
    let from_profile = |p: &HashMap<String, String>| match (p.get("aws_access_key_id"), p.get("aws_secret_access_key")) {
        (Some(a), Some(s)) if !a.is_empty() => {
            Some(Keys { access: a.clone(), secret: s.clone(), token: p.get("aws_session_token").cloned() })
        }
        _ => None,
    };
    let anonymous = |source: &str| Settings { region: region.clone(), keys: None, source: source.into() };
    let with = |keys: Keys, source: String| Settings { region: region.clone(), keys: Some(keys), source };
    if let (Some(a), Some(s)) = (fragment(params, "aws.access_key_id"), fragment(params, "aws.secret_access_key")) {
        return with(Keys { access: a, secret: s, token: None }, "URL fragment".into());
    }
    if let Some((a, s)) = &target.alias_keys {
        return with(Keys { access: a.clone(), secret: s.clone(), token: None }, "~/.s3nc.json alias".into());
    }
    if let Some(name) = &chosen {
        if name == "none" || name == "no" {
            return anonymous("profile none (unsigned)");
        }
        if let Some(keys) = profiles.get(name).and_then(from_profile) {
            return with(keys, format!("profile {name}"));
        }
    }
    if let (Some(a), Some(s)) = (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
        return with(Keys { access: a, secret: s, token: env("AWS_SESSION_TOKEN") }, "AWS_ACCESS_KEY_ID environment".into());
    }
    if let Some(keys) = profiles.get("default").and_then(from_profile) {
        return with(keys, "profile default".into());
    }
    anonymous("no credentials found (unsigned)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text as an AWS config file: sections and keys, never a panic.
        #[test]
        fn fuzz_aws_config(text in any::<String>(), lines in proptest::collection::vec("\\[?(profile )?[a-z =\\]]{0,12}", 0..12)) {
            let mut profiles = HashMap::new();
            parse_profiles(&text, &mut profiles);
            parse_profiles(&lines.join("\n"), &mut profiles);
        }
    }

    #[test]
    fn profiles_from_text() {
        let mut profiles = HashMap::new();
        parse_profiles("[default]\nregion = eu\n; note\n[profile x]\nAWS_ACCESS_KEY_ID=a\n", &mut profiles);
        assert_eq!(profiles["default"]["region"], "eu");
        assert_eq!(profiles["x"]["aws_access_key_id"], "a");
    }
}

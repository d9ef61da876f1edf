//! kerchunk reference sets in JSON (references.md): version 0 (`{key: value}`) and version 1
//! (`{"version": 1, "templates": {...}, "refs": {...}}`). A value is inline text (the Zarr
//! metadata documents), `base64:` bytes, `[url]` (a whole object) or `[url, offset, length]`;
//! `{{name}}` in a URL is replaced by the template of that name. `gen` (generated keys) is not
//! read: a set that uses it is refused by name rather than read in part.

use super::Ref;
use crate::error::{Error, Kind, Result, err};
use base64::Engine;
use serde_json::Value;
use std::collections::BTreeMap;

/// The most template substitutions one URL may take (a template naming itself would loop).
const MAX_SUBSTITUTIONS: usize = 16;

/// A parsed reference set: every key's reference, and the targets they name (by index).
#[derive(Debug, Default)]
pub struct Parsed {
    pub refs: BTreeMap<String, Ref>,
    pub targets: Vec<String>,
}

fn bad(name: &str, why: impl std::fmt::Display) -> Error {
    Error::new(Kind::NotNetcdf, format!("{name}: not a kerchunk reference set: {why}"))
}

/// Parses the reference set `text` (named `name`, for messages).
pub fn parse(name: &str, text: &[u8]) -> Result<Parsed> {
    let doc: Value = serde_json::from_slice(text).map_err(|e| bad(name, e))?;
    let Value::Object(top) = doc else { return Err(bad(name, "the document is not a JSON object")) };
    let version = top.get("version").and_then(Value::as_u64);
    let (refs, templates) = match version {
        Some(1) => {
            if top.get("gen").is_some_and(|g| g.as_array().is_none_or(|a| !a.is_empty())) {
                return err(
                    Kind::NotBuilt,
                    format!("{name}: reference sets with \"gen\" (generated keys) are not read; expand them first"),
                );
            }
            let refs = top.get("refs").and_then(Value::as_object).ok_or_else(|| bad(name, "version 1 without \"refs\""))?;
            let templates: BTreeMap<String, String> = top
                .get("templates")
                .and_then(Value::as_object)
                .map(|t| t.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
                .unwrap_or_default();
            (refs.clone(), templates)
        }
        Some(v) => return err(Kind::NotNetcdf, format!("{name}: kerchunk reference version {v} (versions 0 and 1 are read)")),
        None => (top, BTreeMap::new()),
    };
    let mut out = Parsed::default();
    let mut target_ids: BTreeMap<String, usize> = BTreeMap::new();
    for (key, value) in refs {
        if version.is_none() && key == "version" {
            continue;
        }
        let r = match value {
            Value::String(s) => Ref::Inline(inline(name, &key, &s)?),
            Value::Array(parts) => {
                let url = match parts.first() {
                    Some(Value::String(u)) => expand(name, u, &templates)?,
                    _ => return Err(bad(name, format!("{key}: a reference without a URL"))),
                };
                let n = target_ids.len();
                let target = *target_ids.entry(url.clone()).or_insert_with(|| {
                    out.targets.push(url);
                    n
                });
                match parts.len() {
                    1 => Ref::Whole { target },
                    3 => {
                        let (Some(offset), Some(len)) = (parts[1].as_u64(), parts[2].as_u64()) else {
                            return Err(bad(name, format!("{key}: offset and length must be whole numbers")));
                        };
                        Ref::Range { target, offset, len }
                    }
                    n => return Err(bad(name, format!("{key}: a reference of {n} items (1 or 3)"))),
                }
            }
            // Some writers put the metadata documents in as JSON rather than as text.
            Value::Object(_) => Ref::Inline(value.to_string().into_bytes()),
            other => return Err(bad(name, format!("{key}: {other} is not a reference"))),
        };
        out.refs.insert(key, r);
    }
    Ok(out)
}

/// A reference set as kerchunk writes it (version 1): each target URL once, as a template
/// (`u0`, `u1`, …); metadata documents as text, other inline bytes as `base64:`.
pub fn render(entries: &[(&str, super::Located)]) -> Vec<u8> {
    use super::Located;
    let mut templates = serde_json::Map::new();
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    let mut template = |url: &str| -> String {
        if let Some(id) = ids.get(url) {
            return format!("{{{{{id}}}}}");
        }
        let id = format!("u{}", templates.len());
        // A URL holding `{{` would be read back as a template use: kept as it is.
        if url.contains("{{") {
            return url.to_string();
        }
        templates.insert(id.clone(), Value::String(url.to_string()));
        let out = format!("{{{{{id}}}}}");
        ids.insert(url.to_string(), id);
        out
    };
    let mut refs = serde_json::Map::new();
    for (key, at) in entries {
        let value = match at {
            Located::Absent => continue,
            Located::Inline(bytes) if is_metadata(key) => match std::str::from_utf8(bytes) {
                Ok(text) => Value::String(text.to_string()),
                Err(_) => Value::String(format!("base64:{}", base64::engine::general_purpose::STANDARD.encode(bytes))),
            },
            Located::Inline(bytes) => Value::String(format!("base64:{}", base64::engine::general_purpose::STANDARD.encode(bytes))),
            Located::Range { url, offset, len } => Value::Array(vec![Value::String(template(url)), (*offset).into(), (*len).into()]),
            Located::Whole { url } => Value::Array(vec![Value::String(template(url))]),
        };
        refs.insert(key.to_string(), value);
    }
    let mut top = serde_json::Map::new();
    top.insert("version".into(), 1.into());
    top.insert("templates".into(), Value::Object(templates));
    top.insert("refs".into(), Value::Object(refs));
    let mut out = Value::Object(top).to_string().into_bytes();
    out.push(b'\n');
    out
}

/// Is `key` a Zarr metadata document (kept as text)?
fn is_metadata(key: &str) -> bool {
    let last = key.rsplit('/').next().unwrap_or(key);
    matches!(last, ".zarray" | ".zattrs" | ".zgroup" | ".zmetadata" | "zarr.json")
}

/// Inline data: `base64:` bytes, else the text itself.
fn inline(name: &str, key: &str, s: &str) -> Result<Vec<u8>> {
    match s.strip_prefix("base64:") {
        Some(b64) => base64::engine::general_purpose::STANDARD.decode(b64).map_err(|e| bad(name, format!("{key}: {e}"))),
        None => Ok(s.as_bytes().to_vec()),
    }
}

/// A URL with its `{{name}}` templates replaced.
fn expand(name: &str, url: &str, templates: &BTreeMap<String, String>) -> Result<String> {
    let mut out = url.to_string();
    for _ in 0..MAX_SUBSTITUTIONS {
        let Some(start) = out.find("{{") else { return Ok(out) };
        let Some(len) = out[start..].find("}}") else { return Ok(out) };
        let key = out[start + 2..start + len].trim().to_string();
        let value = templates.get(&key).ok_or_else(|| bad(name, format!("template {key:?} is not defined")))?;
        out.replace_range(start..start + len + 2, value);
    }
    Err(bad(name, format!("templates in {url:?} nest more than {MAX_SUBSTITUTIONS} deep")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_render_writes_parse_reads() {
        use crate::zmap::Located;
        let entries = vec![
            (".zgroup", Located::Inline(br#"{"zarr_format":2}"#.to_vec())),
            ("v/0", Located::Range { url: "/d/x.nc".into(), offset: 10, len: 20 }),
            ("v/1", Located::Range { url: "/d/x.nc".into(), offset: 30, len: 20 }),
            ("v/2", Located::Whole { url: "s3://b/r.json.chunks/ab".into() }),
            ("v/3", Located::Inline(vec![0, 159, 255])),
            ("v/4", Located::Absent),
        ];
        let text = render(&entries);
        let doc: Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(doc["templates"].as_object().unwrap().len(), 2, "a template per target");
        assert_eq!(doc["refs"]["v/0"][0], "{{u0}}");
        let p = parse("r.json", &text).unwrap();
        assert_eq!(p.targets, ["/d/x.nc", "s3://b/r.json.chunks/ab"]);
        assert_eq!(p.refs[".zgroup"], Ref::Inline(br#"{"zarr_format":2}"#.to_vec()));
        assert_eq!(p.refs["v/1"], Ref::Range { target: 0, offset: 30, len: 20 });
        assert_eq!(p.refs["v/2"], Ref::Whole { target: 1 });
        assert_eq!(p.refs["v/3"], Ref::Inline(vec![0, 159, 255]), "chunk bytes as base64");
        assert!(!p.refs.contains_key("v/4"), "a missing chunk has no key");
    }

    #[test]
    fn versions_values_and_templates() {
        let v0 = br#"{".zgroup": "{\"zarr_format\": 2}", "v/0": ["data.nc", 10, 20], "v/1": ["s3://b/x.nc"], "v/2": "base64:AAEC"}"#;
        let p = parse("r.json", v0).unwrap();
        assert_eq!(p.refs[".zgroup"], Ref::Inline(br#"{"zarr_format": 2}"#.to_vec()));
        assert_eq!(p.refs["v/0"], Ref::Range { target: 0, offset: 10, len: 20 });
        assert_eq!(p.refs["v/1"], Ref::Whole { target: 1 });
        assert_eq!(p.refs["v/2"], Ref::Inline(vec![0, 1, 2]));
        assert_eq!(p.targets, ["data.nc", "s3://b/x.nc"]);
        let v1 = br#"{"version": 1, "templates": {"u": "s3://b/{{d}}", "d": "dir/x.nc"}, "refs": {"v/0": ["{{u}}", 0, 4], "v/1": ["{{u}}", 4, 4]}}"#;
        let p = parse("r.json", v1).unwrap();
        assert_eq!(p.targets, ["s3://b/dir/x.nc"], "one target, named twice");
        let looped = br#"{"version": 1, "templates": {"u": "{{u}}"}, "refs": {"v/0": ["{{u}}", 0, 4]}}"#;
        assert_eq!(parse("r.json", looped).unwrap_err().kind, Kind::NotNetcdf);
        let generated = br#"{"version": 1, "gen": [{"key": "v/{{i}}", "url": "x", "dimensions": {"i": 3}}], "refs": {}}"#;
        assert_eq!(parse("r.json", generated).unwrap_err().kind, Kind::NotBuilt);
        for hostile in [&b"[1, 2]"[..], b"{\"v/0\": [\"x\", -1, 4]}", b"{\"v/0\": [\"x\", 1]}", b"{\"v/0\": 7}", b"not json"] {
            assert!(parse("r.json", hostile).is_err(), "{}", String::from_utf8_lossy(hostile));
        }
    }
}

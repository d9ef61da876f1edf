//! What both v2 readers' phases share: where metadata objects come from (the store, or the
//! consolidated document) and the pieces every node has (attributes, NCZarr dimensions).

use crate::error::{Error, Kind, Result, err};
use crate::format::HIDDEN_ATTS;
use crate::format::attrs;
use crate::format::dtype;
use crate::json;
use crate::model::Att;
use crate::nc::names;
use crate::nc::values::Values;
use crate::trace;
use crate::zmap::{Key, Zmap};
use serde_json::{Map, Value};
use std::collections::HashMap;

pub(super) struct Source<'a> {
    pub(super) store: &'a dyn Zmap,
    pub(super) consolidated: Option<Map<String, Value>>,
    pub(super) stored: HashMap<String, Vec<u8>>,
}

impl Source<'_> {
    pub(super) fn get_many(&mut self, keys: &[String]) -> Result<Vec<Option<Value>>> {
        if let Some(meta) = &self.consolidated {
            return Ok(keys.iter().map(|k| meta.get(k).cloned()).collect());
        }
        let raw = self.store.get_many(&Key::all(keys)?)?;
        // Parsing is independent per object: in parallel for big batches.
        let parsed: Vec<Option<Value>> = {
            use rayon::prelude::*;
            let parse = |(key, bytes): (&String, &Option<Vec<u8>>)| bytes.as_ref().map(|b| json::parse(b, key)).transpose();
            if keys.len() >= 8 {
                crate::parallel::run(|| keys.par_iter().zip(raw.par_iter()).with_min_len(4).map(parse).collect::<Result<_>>())?
            } else {
                keys.iter().zip(raw.iter()).map(parse).collect::<Result<_>>()?
            }
        };
        for (key, bytes) in keys.iter().zip(raw) {
            if let Some(b) = bytes {
                self.stored.insert(key.clone(), b);
            }
        }
        Ok(parsed)
    }

    pub(super) fn is_object(v: &Option<Value>, key: &str) -> Result<()> {
        match v {
            Some(Value::Object(_)) | None => Ok(()),
            Some(_) => err(Kind::NcZarr, format!("{key} is not a JSON object")),
        }
    }

    pub(super) fn children(&self, prefix: &str) -> Result<Vec<String>> {
        if let Some(meta) = &self.consolidated {
            let lead = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
            let mut out: Vec<String> = Vec::new();
            for key in meta.keys() {
                if let Some(rest) = key.strip_prefix(&lead)
                    && let Some((child, _)) = rest.split_once('/')
                    && !out.iter().any(|c| c == child)
                {
                    out.push(child.to_string());
                }
            }
            out.sort();
            return Ok(out);
        }
        let mut out = self.store.list_dir(&Key::new(prefix)?)?;
        out.sort();
        Ok(out)
    }
}

pub(super) fn obj(v: &Option<Value>) -> Option<&Map<String, Value>> {
    v.as_ref().and_then(Value::as_object)
}

pub(super) fn member<'v>(m: Option<&'v Map<String, Value>>, keys: &[&str]) -> Option<&'v Value> {
    let m = m?;
    keys.iter().find_map(|k| m.get(*k))
}

/// `dims` of a group: integer lengths or `{"size": n, "unlimited": 1}`.
pub(super) fn group_dims(v: Option<&Value>) -> Result<Vec<(String, u64, bool)>> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let m = v.as_object().ok_or_else(|| Error::new(Kind::NcZarr, "group dimensions are not an object"))?;
    let mut out = Vec::new();
    for (name, d) in m {
        let name = names::check_stored(name)?;
        let (size, unlimited) = match d {
            Value::Object(o) => (json::int_param(o.get("size")), json::int_param(o.get("unlimited")).unwrap_or(0) != 0),
            other => (json::int_param(Some(other)), false),
        };
        let size = size.filter(|s| *s >= 0).ok_or_else(|| Error::new(Kind::NcZarr, format!("dimension {name}: bad size")))?;
        out.push((name, size as u64, unlimited));
    }
    Ok(out)
}

/// Reads the attributes of one `.zattrs` (plus legacy type info) into a list.
pub(super) fn read_atts(zattrs: Option<&Map<String, Value>>, types: Option<&Value>) -> Result<Vec<Att>> {
    let mut out = Vec::new();
    let Some(zattrs) = zattrs else { return Ok(out) };
    let types = types.and_then(Value::as_object);
    for (name, value) in zattrs {
        if HIDDEN_ATTS.contains(&name.as_str()) {
            continue;
        }
        let name = names::check_stored(name)?;
        let recorded = types.and_then(|t| t.get(&name)).and_then(Value::as_str);
        let parsed = match recorded {
            Some("|J0") => Some((Values::Char(serde_json::to_string(value).unwrap_or_default().into_bytes()), Some(value.clone()))),
            Some(code) => Some(attrs::typed(value, dtype::attr_type(code)?)?),
            None => attrs::inferred(value),
        };
        match parsed {
            Some((values, raw)) => out.push(Att { name, value: values, json: raw, synthetic: false }),
            None => trace::warn(&format!("attribute {name}: empty list skipped")),
        }
    }
    let latin1 = attrs::latin1_list(zattrs.get("_nczarr_attr"));
    attrs::restore_latin1(&mut out, &latin1, |name| zattrs.get(name).and_then(Value::as_str).map(str::to_string));
    Ok(out)
}

pub(super) struct ArrayObjects {
    pub(super) zarray: Option<Value>,
    pub(super) zattrs: Option<Value>,
    pub(super) ncz_array: Option<Value>,
    pub(super) ncz_attr: Option<Value>,
}

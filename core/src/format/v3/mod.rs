//! Zarr v3 metadata ↔ the in-memory model (zarr-v3.md): `zarr.json` documents of groups and
//! arrays, NCZarr-on-v3 attributes, implicit groups and inline consolidated metadata.
//!
//! Reading normalises every v3 array into the same `Var` the v2 reader builds; what the model
//! cannot hold (key encoding, sharding, the document as stored) goes into `Var::v3`.
//! Unsupported but valid nodes are skipped with a warning; malformed ones fail the open.

mod read;
mod write;

pub use read::read;
pub use write::{Options, render};
pub(crate) use write::{check_node_name, codecs_for};

use crate::codec;
use crate::codec::Filter;
use crate::error::{Error, Kind, Result, err};
use crate::format::HIDDEN_ATTS;
use crate::format::attrs;
use crate::format::attrs::decode_base64;
use crate::format::dtype::Unreadable;
use crate::json::{self, f64_value, int_of};
use crate::model::{Att, ShardIndex, StorageKind, join_key};
use crate::nc::names;
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::trace;
use crate::zmap::{Key, Zmap};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// Most inner chunks one shard may hold (a 256 MiB index).
const MAX_INNER_CHUNKS: u64 = 1 << 24;

/// A child node's name and its document (`None`: implicit group).
type NamedDoc = (String, Option<Map<String, Value>>);
const V3_HIDDEN: &[&str] = &["_nczarr_attrs", "_nczarr_attr"];

fn nczarr_err(what: &str, m: impl std::fmt::Display) -> Error {
    Error::new(Kind::NcZarr, format!("{what}: {m}"))
}

/// Where node documents come from: inline consolidated metadata or the store.
struct Source<'a> {
    store: &'a dyn Zmap,
    consolidated: Option<Map<String, Value>>,
    stored: HashMap<String, Vec<u8>>,
}

impl Source<'_> {
    /// Documents of several nodes (`zarr.json` under each prefix), one batch.
    fn docs(&mut self, prefixes: &[String]) -> Result<Vec<Option<Map<String, Value>>>> {
        if let Some(meta) = &self.consolidated {
            return Ok(prefixes.iter().map(|p| meta.get(p).and_then(Value::as_object).cloned()).collect());
        }
        let keys: Vec<String> = prefixes.iter().map(|p| join_key(p, "zarr.json")).collect();
        let raw = self.store.get_many(&Key::all(&keys)?)?;
        let mut out = Vec::with_capacity(keys.len());
        for (key, bytes) in keys.into_iter().zip(raw) {
            match bytes {
                None => out.push(None),
                Some(b) => {
                    let v = json::parse(&b, &key)?;
                    let Value::Object(m) = v else { return err(Kind::NcZarr, format!("{key} is not a JSON object")) };
                    self.stored.insert(key, b);
                    out.push(Some(m));
                }
            }
        }
        Ok(out)
    }

    /// Child names of a group prefix (sorted), from the listing or the consolidated keys.
    fn children(&self, prefix: &str) -> Result<Vec<String>> {
        let mut out: Vec<String> = match &self.consolidated {
            Some(meta) => {
                let lead = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
                let mut v: Vec<String> = meta
                    .keys()
                    .filter_map(|k| k.strip_prefix(&lead).map(|r| r.split('/').next().unwrap_or("").to_string()))
                    .filter(|c| !c.is_empty())
                    .collect();
                v.dedup();
                v
            }
            None => self.store.list_dir(&Key::new(prefix)?)?.into_iter().filter(|c| c != "zarr.json").collect(),
        };
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Does anything below `prefix` have a `zarr.json` (an implicit group, §8.4)?
    fn has_nodes_below(&self, prefix: &str) -> Result<bool> {
        if let Some(meta) = &self.consolidated {
            let lead = format!("{prefix}/");
            return Ok(meta.keys().any(|k| k.starts_with(&lead)));
        }
        let mut stack = vec![(prefix.to_string(), 0usize)];
        while let Some((p, depth)) = stack.pop() {
            if depth > 8 {
                continue;
            }
            for c in self.store.list_dir(&Key::new(p.as_str())?)? {
                if c == "zarr.json" {
                    return Ok(true);
                }
                stack.push((join_key(&p, &c), depth + 1));
            }
        }
        Ok(false)
    }
}

/// Checks the members every v3 node has; `None`: skip the node (unknown extension).
fn check_node(doc: &Map<String, Value>, what: &str) -> Result<Option<&'static str>> {
    match doc.get("zarr_format") {
        Some(Value::Number(n)) if int_of(n) == Some(3) => {}
        other => return Err(nczarr_err(what, format!("zarr_format {other:?}"))),
    }
    let kind = match doc.get("node_type").and_then(Value::as_str) {
        Some("group") => "group",
        Some("array") => "array",
        other => return Err(nczarr_err(what, format!("node_type {other:?}"))),
    };
    const KNOWN: &[&str] = &[
        "zarr_format",
        "node_type",
        "attributes",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
        "dimension_names",
        "storage_transformers",
        "consolidated_metadata",
    ];
    for (k, v) in doc {
        if !KNOWN.contains(&k.as_str()) && v.get("must_understand") != Some(&Value::Bool(false)) {
            trace::warn(&format!("{what}: unknown member {k:?} that must be understood; node skipped"));
            return Ok(None);
        }
    }
    if let Some(t) = doc.get("storage_transformers")
        && t.as_array().is_none_or(|a| !a.is_empty())
    {
        trace::warn(&format!("{what}: storage transformers are not supported; node skipped"));
        return Ok(None);
    }
    if let Some(a) = doc.get("attributes")
        && !a.is_object()
    {
        return Err(nczarr_err(what, "attributes is not an object"));
    }
    Ok(Some(kind))
}

fn attributes(doc: &Map<String, Value>) -> Option<&Map<String, Value>> {
    doc.get("attributes").and_then(Value::as_object)
}

/// `_nczarr_attrs.attribute_types`: an object `{name: type}` or netcdf-c's planned list form.
fn attribute_types(atts: Option<&Map<String, Value>>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Some(t) = atts.and_then(|a| a.get("_nczarr_attrs").or_else(|| a.get("_nczarr_attr"))) else { return out };
    match t.get("attribute_types").or_else(|| t.get("types")) {
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if let Some(s) = v.as_str() {
                    out.insert(k.clone(), s.to_string());
                }
            }
        }
        Some(Value::Array(list)) => {
            for item in list {
                let name = item.get("name").and_then(Value::as_str);
                let ty = item.get("configuration").and_then(|c| c.get("type")).and_then(Value::as_str);
                if let (Some(n), Some(t)) = (name, ty) {
                    out.insert(n.to_string(), t.to_string());
                }
            }
        }
        _ => {}
    }
    out
}

/// The netCDF type of a v3 attribute type name (`json` handled by the caller).
fn attr_type(name: &str) -> Option<NcType> {
    Some(match name {
        "int8" => NcType::Byte,
        "uint8" => NcType::UByte,
        "int16" => NcType::Short,
        "uint16" => NcType::UShort,
        "int32" => NcType::Int,
        "uint32" => NcType::UInt,
        "int64" => NcType::Int64,
        "uint64" => NcType::UInt64,
        "float32" => NcType::Float,
        "float64" => NcType::Double,
        "char" => NcType::Char,
        "string" => NcType::String,
        _ => return crate::format::dtype::attr_type(name).ok(),
    })
}

pub(crate) fn attr_type_name(t: NcType) -> &'static str {
    match t {
        NcType::Byte => "int8",
        NcType::UByte => "uint8",
        NcType::Short => "int16",
        NcType::UShort => "uint16",
        NcType::Int => "int32",
        NcType::UInt => "uint32",
        NcType::Int64 => "int64",
        NcType::UInt64 => "uint64",
        NcType::Float => "float32",
        NcType::Double => "float64",
        NcType::Char => "char",
        NcType::String => "string",
    }
}

/// The attributes of one node; `var_type` is the variable's type (for `_FillValue`).
fn read_atts(atts: Option<&Map<String, Value>>, typed: bool, var_type: Option<NcType>) -> Result<Vec<Att>> {
    let mut out = Vec::new();
    let Some(map) = atts else { return Ok(out) };
    let types = if typed { attribute_types(atts) } else { HashMap::new() };
    for (name, value) in map {
        if HIDDEN_ATTS.contains(&name.as_str()) || V3_HIDDEN.contains(&name.as_str()) {
            continue;
        }
        let name = names::check_stored(name)?;
        if name == "_FillValue"
            && let Some(t) = var_type
            && let Some(values) = fill_attribute(value, t)
        {
            out.push(Att::new(name, values));
            continue;
        }
        let parsed = match types.get(&name).map(String::as_str) {
            Some("json") => Some((Values::Char(serde_json::to_string(value).unwrap_or_default().into_bytes()), Some(value.clone()))),
            Some(t) => match attr_type(t) {
                Some(nt) => Some(attrs::typed(value, nt)?),
                None => attrs::inferred(value),
            },
            None => attrs::inferred(value),
        };
        match parsed {
            Some((values, raw)) => out.push(Att { name, value: values, json: raw, synthetic: false }),
            None => trace::warn(&format!("attribute {name}: empty list skipped")),
        }
    }
    if typed {
        let latin1 = attrs::latin1_list(map.get("_nczarr_attrs").or_else(|| map.get("_nczarr_attr")));
        attrs::restore_latin1(&mut out, &latin1, |name| map.get(name).and_then(Value::as_str).map(str::to_string));
    }
    Ok(out)
}

/// A `_FillValue` attribute in xarray's v3 spelling: base64 of the little-endian value for
/// floats, a plain number otherwise (§9.4). `None`: not in that form.
fn fill_attribute(v: &Value, t: NcType) -> Option<Values> {
    match (v, t) {
        (Value::String(s), NcType::Float | NcType::Double) if json::special_float(s).is_none() => {
            let b = decode_base64(s)?;
            let x = match b.len() {
                8 => f64::from_le_bytes(b.try_into().ok()?),
                4 => f32::from_le_bytes(b.try_into().ok()?) as f64,
                _ => {
                    trace::warn(&format!("_FillValue {s:?}: not a base64 float; kept as text"));
                    return None;
                }
            };
            Some(if t == NcType::Float { Values::Float(vec![x as f32]) } else { Values::Double(vec![x]) })
        }
        (Value::Number(_) | Value::String(_), t) if t.is_numeric() => attrs::typed(v, t).ok().map(|(v, _)| v),
        (Value::Number(n), NcType::Char) => int_of(n).map(|b| Values::Char(vec![b as u8])),
        _ => None,
    }
}

// ---- data types, fill values, codecs ------------------------------------------------------

struct DataType {
    nctype: NcType,
    storage: StorageKind,
    /// Fixed byte width of strings (`null_terminated_bytes`, `r<N>`).
    width: Option<usize>,
    item: usize,
}

fn data_type(v: &Value, char_marked: bool, string_marked: bool) -> std::result::Result<DataType, Unreadable> {
    let (name, conf) = match v {
        Value::String(s) => (s.as_str(), None),
        Value::Object(o) => (o.get("name").and_then(Value::as_str).unwrap_or(""), o.get("configuration")),
        _ => return Err(Unreadable::Invalid(format!("data_type {v}"))),
    };
    let plain = |t: NcType| Ok(DataType { nctype: t, storage: StorageKind::Native, width: None, item: t.size() });
    let length =
        || conf.and_then(|c| json::int_param(c.get("length_bytes"))).filter(|n| *n > 0 && *n <= crate::format::dtype::MAX_STRLEN as i64);
    match name {
        "int8" => plain(NcType::Byte),
        "uint8" if char_marked => plain(NcType::Char),
        "uint8" => plain(NcType::UByte),
        "int16" => plain(NcType::Short),
        "uint16" => plain(NcType::UShort),
        "int32" => plain(NcType::Int),
        "uint32" => plain(NcType::UInt),
        "int64" => plain(NcType::Int64),
        "uint64" => plain(NcType::UInt64),
        "float32" => plain(NcType::Float),
        "float64" => plain(NcType::Double),
        "float16" => Ok(DataType { nctype: NcType::Float, storage: StorageKind::Half, width: None, item: 2 }),
        "bool" => Ok(DataType { nctype: NcType::UByte, storage: StorageKind::Bool, width: None, item: 1 }),
        "string" => Ok(DataType { nctype: NcType::String, storage: StorageKind::Vlen, width: None, item: 8 }),
        "fixed_length_utf32" => {
            let n = length().filter(|n| n % 4 == 0).ok_or_else(|| Unreadable::Invalid(format!("data_type {v}")))? as usize;
            Ok(DataType { nctype: NcType::String, storage: StorageKind::Utf32(n / 4), width: None, item: n })
        }
        "null_terminated_bytes" => {
            let n = length().ok_or_else(|| Unreadable::Invalid(format!("data_type {v}")))? as usize;
            if n == 1 && char_marked {
                return plain(NcType::Char);
            }
            Ok(DataType { nctype: NcType::String, storage: StorageKind::Native, width: Some(n), item: n })
        }
        "numpy.datetime64" | "numpy.timedelta64" => plain(NcType::Int64),
        r if r.starts_with('r') && string_marked => {
            let bits: usize = r[1..].parse().map_err(|_| Unreadable::Invalid(format!("data_type {r}")))?;
            if bits == 0 || !bits.is_multiple_of(8) {
                return Err(Unreadable::Invalid(format!("data_type {r}")));
            }
            Ok(DataType { nctype: NcType::String, storage: StorageKind::Native, width: Some(bits / 8), item: bits / 8 })
        }
        other => Err(Unreadable::Unsupported(format!("data type {other:?}"))),
    }
}

/// The v3 `data_type` we write for a netCDF type (§3.1).
fn render_data_type(t: NcType) -> &'static str {
    match t {
        NcType::Char => "uint8",
        NcType::String => "string",
        other => attr_type_name(other),
    }
}

/// Reads `fill_value` (§4). `Ok(None)`: `null` (no fill).
fn parse_fill(v: &Value, dt: &DataType, what: &str) -> Result<Option<Values>> {
    let t = dt.nctype;
    match (v, t) {
        (Value::Null, _) => Ok(None),
        (Value::Number(n), NcType::Char) => Ok(Some(Values::Char(vec![int_of(n).unwrap_or(0) as u8]))),
        (Value::String(s), NcType::Float | NcType::Double) if s.starts_with("0x") || s.starts_with("0X") => {
            let digits = &s[2..];
            let bits = u64::from_str_radix(digits, 16).map_err(|_| nczarr_err(what, format!("fill_value {s}")))?;
            match (t, digits.len()) {
                (NcType::Float, 4) if dt.storage == StorageKind::Half => {
                    Ok(Some(Values::Float(vec![crate::nc::values::f16_to_f32(bits as u16)])))
                }
                (NcType::Float, 8) if dt.storage != StorageKind::Half => Ok(Some(Values::Float(vec![f32::from_bits(bits as u32)]))),
                (NcType::Double, 16) => Ok(Some(Values::Double(vec![f64::from_bits(bits)]))),
                _ => Err(nczarr_err(what, format!("fill_value {s}: wrong width"))),
            }
        }
        (Value::Bool(b), _) if t.is_numeric() => {
            Ok(Some(Values::from_scalars(t, std::iter::once(crate::nc::values::Scalar::Int(*b as i128)))))
        }
        (Value::Number(n), _) if t.is_numeric() && !t.is_float() => match n.as_f64() {
            // zarr-python accepts an integral float for an integer array.
            Some(f) if int_of(n).is_none() && f.fract() == 0.0 => attrs::parse_fill(&json!(f as i128), t),
            _ => attrs::parse_fill(v, t),
        },
        (_, NcType::String) if dt.storage == StorageKind::Native && dt.width.is_some() => match v {
            Value::String(s) => Ok(Some(Values::Str(vec![Some(
                decode_base64(s).map(|b| String::from_utf8_lossy(&b).trim_end_matches('\0').to_string()).unwrap_or_else(|| s.clone()),
            )]))),
            _ => Ok(Some(Values::Str(vec![Some(String::new())]))),
        },
        _ => attrs::parse_fill(v, t).map_err(|e| nczarr_err(what, e.context)),
    }
}

/// `fill_value` as we write it: shortest float text for the value's own width, `"NaN"` for
/// the canonical NaN, hex bits for other NaNs, integers for char.
fn render_fill(v: &Values) -> Value {
    match v {
        Values::Float(x) if x[0].is_nan() && x[0].to_bits() != 0x7fc0_0000 => json!(format!("0x{:08x}", x[0].to_bits())),
        Values::Double(x) if x[0].is_nan() && x[0].to_bits() != 0x7ff8_0000_0000_0000 => json!(format!("0x{:016x}", x[0].to_bits())),
        Values::Double(x) => f64_value(x[0]),
        Values::Char(b) => json!(b.first().copied().unwrap_or(0)),
        Values::Str(s) => json!(s.first().cloned().flatten().unwrap_or_default()),
        other => attrs::render_fill(other),
    }
}

fn zero_fill(t: NcType) -> Value {
    match t {
        NcType::Float | NcType::Double => json!(0.0),
        NcType::String => json!(""),
        _ => json!(0),
    }
}

/// A shard's inner chunk shape, inner pipeline and index layout.
type ShardSpec = (Vec<u64>, Box<Pipeline>, ShardIndex);

/// An array's codec pipeline, normalised (§6.1).
#[derive(Default)]
struct Pipeline {
    /// Combined `transpose` order: stored axis k is array axis `perm[k]`.
    perm: Option<Vec<usize>>,
    big_endian: bool,
    vlen: bool,
    filters: Vec<Filter>,
    /// Bytes-to-bytes codecs applied to whole shards.
    outer: Vec<Filter>,
    shard: Option<ShardSpec>,
}

fn codec_name(c: &Value) -> Result<(&str, Option<&Map<String, Value>>)> {
    let o = c.as_object().ok_or_else(|| Error::new(Kind::NcZarr, "codec is not an object"))?;
    let name = o.get("name").and_then(Value::as_str).ok_or_else(|| Error::new(Kind::NcZarr, "codec without a name"))?;
    Ok((name, o.get("configuration").and_then(Value::as_object)))
}

/// Parses a codec list; `rank` for `transpose`. `Ok(None)`: valid but unsupported.
fn pipeline(list: &Value, rank: usize, what: &str) -> Result<std::result::Result<Pipeline, String>> {
    let items = list.as_array().ok_or_else(|| nczarr_err(what, "codecs is not a list"))?;
    let mut p = Pipeline::default();
    let mut stage = 0; // 0: array→array, 1: after array→bytes
    for c in items {
        let (name, conf) = codec_name(c).map_err(|e| nczarr_err(what, e.context))?;
        match (stage, name) {
            (0, "transpose") => {
                // A permutation, or the "C"/"F" shorthands of early v3 drafts.
                let order: Vec<usize> = match conf.and_then(|c| c.get("order")) {
                    Some(Value::String(o)) if o == "C" => (0..rank).collect(),
                    Some(Value::String(o)) if o == "F" => (0..rank).rev().collect(),
                    Some(Value::Array(o)) => o.iter().filter_map(Value::as_u64).map(|x| x as usize).collect(),
                    _ => Vec::new(),
                };
                let mut sorted = order.clone();
                sorted.sort();
                if order.len() != rank || sorted != (0..rank).collect::<Vec<_>>() {
                    return Err(nczarr_err(what, "transpose order is not a permutation of the dimensions"));
                }
                // Transposes compose: stored axis k is the previous stage's axis order[k].
                let prev = p.perm.take().unwrap_or_else(|| (0..rank).collect());
                p.perm = Some(order.iter().map(|&o| prev[o]).collect());
            }
            (0, "bytes") => {
                p.big_endian = conf.and_then(|c| c.get("endian")).and_then(Value::as_str) == Some("big");
                stage = 1;
            }
            (0, "vlen-utf8") => {
                p.vlen = true;
                stage = 1;
            }
            (0, "sharding_indexed") => {
                if p.perm.as_ref().is_some_and(|o| o.iter().enumerate().any(|(i, &x)| i != x)) {
                    return Ok(Err("transpose of whole shards".into()));
                }
                match sharding(conf, rank, what)? {
                    Ok(shard) => p.shard = Some(shard),
                    Err(m) => return Ok(Err(m)),
                }
                stage = 1;
            }
            (0, other) if other.starts_with("numcodecs.vlen") || other == "vlen-bytes" => return Ok(Err(format!("codec {other}"))),
            (1, "transpose" | "bytes" | "vlen-utf8" | "sharding_indexed") => {
                return Err(nczarr_err(what, format!("codec {name} after the array-to-bytes codec")));
            }
            (1, _) if p.shard.is_some() => {
                // Codecs around whole shards: shards are then read and decoded whole.
                p.outer.push(codec::from_v3(c).map_err(|e| nczarr_err(what, e.context))?);
            }
            (1, _) => p.filters.push(codec::from_v3(c).map_err(|e| nczarr_err(what, e.context))?),
            (_, _) => return Err(nczarr_err(what, format!("codec {name} before the array-to-bytes codec"))),
        }
    }
    if stage == 0 {
        return Err(nczarr_err(what, "no array-to-bytes codec"));
    }
    Ok(Ok(p))
}

/// A `sharding_indexed` codec's configuration: the inner chunk shape, the inner pipeline and
/// the index layout. `Ok(Err)`: valid but unsupported (nested sharding, an unknown codec).
#[allow(clippy::type_complexity)]
fn sharding(
    conf: Option<&Map<String, Value>>,
    rank: usize,
    what: &str,
) -> Result<std::result::Result<(Vec<u64>, Box<Pipeline>, ShardIndex), String>> {
    let conf = conf.ok_or_else(|| nczarr_err(what, "sharding without configuration"))?;
    let inner_shape = conf
        .get("chunk_shape")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(|x| x.as_u64().filter(|v| *v >= 1)).collect::<Option<Vec<u64>>>())
        .filter(|s| s.len() == rank)
        .ok_or_else(|| nczarr_err(what, "sharding chunk_shape"))?;
    let inner = match pipeline(conf.get("codecs").unwrap_or(&json!([{"name": "bytes"}])), rank, what)? {
        Ok(i) if i.shard.is_none() => i,
        Ok(_) => return Ok(Err("nested sharding".into())),
        Err(m) => return Ok(Err(m)),
    };
    let mut index = ShardIndex::default();
    for (i, ic) in conf.get("index_codecs").and_then(Value::as_array).cloned().unwrap_or_default().iter().enumerate() {
        let (n, c) = codec_name(ic).map_err(|e| nczarr_err(what, e.context))?;
        match (i, n) {
            (0, "bytes") => index.big_endian = c.and_then(|c| c.get("endian")).and_then(Value::as_str) == Some("big"),
            (1, "crc32c") => index.crc = true,
            _ => return Err(nczarr_err(what, format!("shard index codec {n:?}"))),
        }
    }
    index.at_start = match conf.get("index_location").and_then(Value::as_str) {
        None | Some("end") => false,
        Some("start") => true,
        Some(other) => return Err(nczarr_err(what, format!("index_location {other:?}"))),
    };
    Ok(Ok((inner_shape, Box::new(inner), index)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::attrs::encode_base64;

    #[test]
    fn base64_and_fills() {
        assert_eq!(encode_base64(&(-999.0f64).to_le_bytes()), "AAAAAAA4j8A=");
        assert_eq!(encode_base64(&f64::NAN.to_le_bytes()), "AAAAAAAA+H8=");
        assert_eq!(decode_base64("AAAAAAA4j8A=").unwrap(), (-999.0f64).to_le_bytes());
        let f32dt = DataType { nctype: NcType::Float, storage: StorageKind::Native, width: None, item: 4 };
        let Some(Values::Float(nan)) = parse_fill(&json!("0x7fc00001"), &f32dt, "t").unwrap() else { panic!("not a float fill") };
        assert_eq!(nan[0].to_bits(), 0x7fc00001);
        assert!(parse_fill(&json!("0x3ff00000"), &DataType { nctype: NcType::Double, ..f32dt }, "t").is_err());
        assert_eq!(render_fill(&Values::Float(vec![f32::from_bits(0x7fc00001)])), json!("0x7fc00001"));
        assert_eq!(render_fill(&Values::Float(vec![f32::NAN])), json!("NaN"));
        assert_eq!(render_fill(&Values::default_fill(NcType::Float)).to_string(), "9.96921e+36");
    }
}

//! Zarr v3 metadata ↔ the in-memory model (zarr-v3.md): `zarr.json` documents of groups and
//! arrays, NCZarr-on-v3 attributes, implicit groups and inline consolidated metadata.
//!
//! Reading normalises every v3 array into the same `Var` the v2 reader builds; what the model
//! cannot hold (key encoding, sharding, the document as stored) goes into `Var::v3`.
//! Unsupported but valid nodes are skipped with a warning; malformed ones fail the open.

use super::attrs;
use super::attrs::{decode_base64, encode_base64};
use super::dtype::Unreadable;
use super::read::{Loaded, MAX_DEPTH, pure_dims, quantize_of, shape_of, string_list};
use super::{HIDDEN_ATTS, Layout};
use crate::codec;
use crate::codec::Filter;
use crate::codec::MAX_CHUNK_BYTES;
use crate::error::{Error, Kind, Result, err};
use crate::json::{self, f64_value, int_of, to_bytes};
use crate::model::{Att, ChunkCache, Endian, Model, ShardIndex, StorageKind, V3Array, Var, join_key};
use crate::nc::names;
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::trace;
use crate::url::Flavor;
use crate::zmap::Zmap;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};

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
        let raw = self.store.get_many(&keys)?;
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
            None => self.store.list_dir(prefix)?.into_iter().filter(|c| c != "zarr.json").collect(),
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
            for c in self.store.list_dir(&p)? {
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
        _ => return super::dtype::attr_type(name).ok(),
    })
}

pub fn attr_type_name(t: NcType) -> &'static str {
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
    let length = || conf.and_then(|c| json::int_param(c.get("length_bytes"))).filter(|n| *n > 0 && *n <= super::dtype::MAX_STRLEN as i64);
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
    shard: Option<(Vec<u64>, Box<Pipeline>, ShardIndex)>,
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
                p.shard = Some((inner_shape, Box::new(inner), index));
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

// ---- reading --------------------------------------------------------------------------------

/// Reads a v3 hierarchy whose root document has been fetched already.
/// `root_bytes`: the root `zarr.json`; `None` for an implicit root (tensorstore writes
/// arrays only), which is a v3 dataset only if some node exists below it.
pub fn read(
    store: &dyn Zmap,
    flavor: Option<Flavor>,
    consolidated: Option<bool>,
    dataset_name: &str,
    root_bytes: Option<Vec<u8>>,
) -> Result<Loaded> {
    let mut src = Source { store, consolidated: None, stored: HashMap::new() };
    let root = match root_bytes {
        Some(bytes) => {
            let Value::Object(root) = json::parse(&bytes, "zarr.json")? else {
                return err(Kind::NcZarr, "zarr.json is not a JSON object");
            };
            src.stored.insert("zarr.json".into(), bytes);
            root
        }
        None if src.has_nodes_below("")? => {
            let mut m = Map::new();
            m.insert("zarr_format".into(), json!(3));
            m.insert("node_type".into(), json!("group"));
            m
        }
        None => return err(Kind::NotNetcdf, format!("{}: no Zarr metadata", store.describe())),
    };
    let kind = check_node(&root, "zarr.json")?.ok_or_else(|| Error::new(Kind::NotNetcdf, "root node uses an unsupported extension"))?;
    let mut model = Model::new();
    if kind == "array" {
        let name = std::path::Path::new(dataset_name)
            .file_stem()
            .and_then(|s| s.to_str())
            .map(names::check_stored)
            .transpose()?
            .unwrap_or_else(|| "data".into());
        if let Some(var) = build_var(&mut model, 0, name, String::new(), &root, false)? {
            model.groups[0].vars.push(var);
        }
        return Ok(Loaded {
            model,
            layout: Layout::Pure,
            stored: src.stored,
            nc_properties: None,
            has_zmetadata: false,
            classic: false,
            zarr_format: 3,
        });
    }
    let has_consolidated = root.get("consolidated_metadata").is_some_and(|c| !c.is_null());
    if consolidated != Some(false)
        && let Some(c) = root.get("consolidated_metadata").and_then(Value::as_object)
    {
        match (c.get("kind").and_then(Value::as_str), c.get("metadata")) {
            (Some("inline"), Some(Value::Object(m))) => src.consolidated = Some(m.clone()),
            _ => trace::warn("zarr.json: consolidated metadata is not inline; reading the tree"),
        }
    }
    let root_atts = attributes(&root);
    let nczarr = flavor != Some(Flavor::Zarr) && root_atts.is_some_and(|a| a.contains_key("_nczarr_superblock"));
    let nc_properties = root_atts.and_then(|a| a.get("_NCProperties")).and_then(Value::as_str).map(str::to_string);
    let classic =
        nczarr && root_atts.and_then(|a| a.get("_nczarr_superblock")).and_then(|s| s.get("classic")).and_then(Value::as_i64) == Some(1);

    // Phase 1: groups and dimensions, breadth first (dimension ids in netcdf-c's order).
    let mut var_lists: Vec<Vec<NamedDoc>> = Vec::new();
    let mut queue = VecDeque::from([(0usize, Some(root))]);
    while let Some((gid, doc)) = queue.pop_front() {
        let key = model.group_key(gid);
        if key.split('/').count() > MAX_DEPTH {
            return err(Kind::NcZarr, "groups nested too deeply");
        }
        let doc = doc.unwrap_or_default();
        let atts = attributes(&doc);
        model.groups[gid].atts = read_atts(atts, nczarr, None)?;
        let gmeta = atts.and_then(|a| a.get("_nczarr_group")).filter(|_| nczarr);
        if let Some(g) = gmeta {
            match g.get("dimensions").or_else(|| g.get("dims")) {
                Some(Value::Object(dims)) => {
                    for (name, d) in dims {
                        let size = json::int_param(d.get("size")).or_else(|| json::int_param(Some(d)));
                        let unlimited = json::int_param(d.get("unlimited")).unwrap_or(0) != 0;
                        add_dim(&mut model, gid, name, size, unlimited)?;
                    }
                }
                Some(Value::Array(dims)) => {
                    for d in dims {
                        let name = d.get("name").and_then(Value::as_str).unwrap_or("");
                        let unlimited = json::int_param(d.get("unlimited")).unwrap_or(0) != 0;
                        add_dim(&mut model, gid, name, json::int_param(d.get("size")), unlimited)?;
                    }
                }
                None => {}
                Some(_) => return err(Kind::NcZarr, format!("group {key:?}: dimensions")),
            }
        }
        let listed_arrays = string_list(gmeta.and_then(|g| g.get("arrays")), "arrays")?;
        let listed_groups = string_list(gmeta.and_then(|g| g.get("groups").or_else(|| g.get("subgroups"))), "groups")?;
        let children: Vec<String> = match (&listed_arrays, &listed_groups) {
            (Some(a), Some(g)) => a.iter().chain(g.iter()).cloned().collect(),
            _ => src.children(&key)?,
        };
        let prefixes: Vec<String> = children.iter().map(|c| join_key(&key, c)).collect();
        let docs = src.docs(&prefixes)?;
        let mut arrays = Vec::new();
        let mut groups = Vec::new();
        for ((name, prefix), doc) in children.into_iter().zip(prefixes).zip(docs) {
            if name == "c" && listed_arrays.is_none() && doc.is_none() {
                continue;
            }
            let kind = match &doc {
                Some(d) => check_node(d, &prefix)?,
                None if src.has_nodes_below(&prefix)? => Some("group"),
                None => {
                    if listed_arrays.as_ref().is_some_and(|l| l.contains(&name)) {
                        trace::warn(&format!("array {prefix} listed but has no zarr.json; skipped"));
                    }
                    None
                }
            };
            match kind {
                Some("array") => arrays.push((name, doc)),
                Some(_) => groups.push((name, doc)),
                None => {}
            }
        }
        if let Some(order) = &listed_arrays {
            arrays.sort_by_key(|(n, _)| order.iter().position(|o| o == n));
        }
        if let Some(order) = &listed_groups {
            groups.sort_by_key(|(n, _)| order.iter().position(|o| o == n));
        }
        var_lists.push(arrays);
        for (name, doc) in groups {
            let name = names::check_stored(&name)?;
            if model.name_in_use(gid, &name) {
                return err(Kind::NcZarr, format!("duplicate group {name}"));
            }
            let child = model.add_group(gid, name);
            model.groups[child].stored_key = Some(model.group_key(child));
            queue.push_back((child, doc));
        }
    }
    // Phase 2: arrays, in group id order.
    for (gid, arrays) in var_lists.into_iter().enumerate() {
        let gkey = model.group_key(gid);
        for (name, doc) in arrays {
            let name = names::check_stored(&name)?;
            if model.name_in_use(gid, &name) {
                return err(Kind::NcZarr, format!("duplicate array {name}"));
            }
            let vkey = join_key(&gkey, &name);
            if let Some(var) = build_var(&mut model, gid, name, vkey, &doc.unwrap_or_default(), nczarr)? {
                model.groups[gid].vars.push(var);
            }
        }
    }
    Ok(Loaded {
        model,
        layout: if nczarr { Layout::G2a } else { Layout::Pure },
        stored: src.stored,
        nc_properties,
        has_zmetadata: has_consolidated,
        classic,
        zarr_format: 3,
    })
}

fn add_dim(model: &mut Model, gid: usize, name: &str, size: Option<i64>, unlimited: bool) -> Result<()> {
    let name = names::check_stored(name)?;
    let size = size.filter(|s| *s >= 0).ok_or_else(|| Error::new(Kind::NcZarr, format!("dimension {name}: bad size")))?;
    if model.groups[gid].dims.iter().any(|&d| model.dims[d].name == name) {
        return err(Kind::NcZarr, format!("duplicate dimension {name}"));
    }
    model.add_dim(gid, name, size as u64, unlimited);
    Ok(())
}

fn build_var(model: &mut Model, gid: usize, name: String, vkey: String, doc: &Map<String, Value>, nczarr: bool) -> Result<Option<Var>> {
    let what = if vkey.is_empty() { name.clone() } else { vkey.clone() };
    let atts_json = attributes(doc);
    let ameta = atts_json.and_then(|a| a.get("_nczarr_array")).and_then(Value::as_object).filter(|_| nczarr);
    let marker = |k: &str| ameta.and_then(|m| m.get("nczarr_type").or_else(|| m.get("type_alias"))).and_then(Value::as_str) == Some(k);
    let dt = match data_type(doc.get("data_type").ok_or_else(|| nczarr_err(&what, "data_type missing"))?, marker("char"), marker("string"))
    {
        Ok(d) => d,
        Err(Unreadable::Invalid(m)) => return Err(nczarr_err(&what, m)),
        Err(Unreadable::Unsupported(m)) => {
            trace::warn(&format!("{what}: {m} cannot be represented in netCDF; skipped"));
            return Ok(None);
        }
    };
    let shape = shape_of(doc.get("shape"), &format!("{what}: shape"), 0)?;
    let grid = doc.get("chunk_grid").and_then(Value::as_object).ok_or_else(|| nczarr_err(&what, "chunk_grid missing"))?;
    if grid.get("name").and_then(Value::as_str) != Some("regular") {
        trace::warn(&format!("{what}: chunk grid {:?} is not supported; skipped", grid.get("name")));
        return Ok(None);
    }
    let grid_shape = shape_of(grid.get("configuration").and_then(|c| c.get("chunk_shape")), &format!("{what}: chunk_shape"), 1)?;
    if grid_shape.len() != shape.len() {
        return Err(nczarr_err(&what, "rank of chunk_shape differs from rank of shape"));
    }
    let (default_keys, sep) = {
        let e = doc.get("chunk_key_encoding").and_then(Value::as_object).ok_or_else(|| nczarr_err(&what, "chunk_key_encoding missing"))?;
        let sep = e.get("configuration").and_then(|c| c.get("separator")).and_then(Value::as_str);
        match (e.get("name").and_then(Value::as_str), sep) {
            (Some("default"), None | Some("/")) => (true, '/'),
            (Some("default"), Some(".")) => (true, '.'),
            (Some("v2"), None | Some(".")) => (false, '.'),
            (Some("v2"), Some("/")) => (false, '/'),
            (n, s) => return Err(nczarr_err(&what, format!("chunk_key_encoding {n:?} separator {s:?}"))),
        }
    };
    let pipe = match pipeline(doc.get("codecs").ok_or_else(|| nczarr_err(&what, "codecs missing"))?, shape.len(), &what)? {
        Ok(p) => p,
        Err(m) => {
            trace::warn(&format!("{what}: {m} is not supported; skipped"));
            return Ok(None);
        }
    };
    if pipe.vlen != (dt.storage == StorageKind::Vlen) {
        return Err(nczarr_err(&what, "vlen-utf8 goes with the string data type only"));
    }
    let mut pipe = pipe;
    let outer = std::mem::take(&mut pipe.outer);
    let (chunks, shard, inner, index) = match pipe.shard {
        Some((inner_shape, inner, index)) => {
            if inner_shape.iter().zip(&grid_shape).any(|(i, s)| s % i != 0) {
                return Err(nczarr_err(&what, "inner chunk shape does not divide the shard shape"));
            }
            // The index holds 16 bytes per inner chunk: bound it (reliability.md §3.1 ceilings).
            let slots = inner_shape.iter().zip(&grid_shape).try_fold(1u64, |acc, (i, s)| acc.checked_mul(s / i));
            if slots.is_none_or(|n| n > MAX_INNER_CHUNKS) {
                return Err(nczarr_err(&what, "too many inner chunks per shard"));
            }
            (inner_shape, Some(grid_shape), *inner, index)
        }
        None => (grid_shape, None, pipe, ShardIndex::default()),
    };
    if let Some(f) = outer.iter().find(|f| !codec::is_supported(f)) {
        trace::warn(&format!("{what}: codec {:?} around its shards is not available", f.raw));
    }
    let perm = inner.perm.clone().filter(|o| o.iter().enumerate().any(|(i, &x)| i != x));
    let chunk_bytes = chunks.iter().try_fold(dt.item as u128, |acc, &c| acc.checked_mul(c as u128));
    if chunk_bytes.is_none_or(|b| b > MAX_CHUNK_BYTES) {
        return Err(nczarr_err(&what, "chunk too large"));
    }
    let mut filters = inner.filters;
    if inner.vlen {
        filters.insert(0, Filter { id: 0, params: vec![], raw: Some(json!({"id": "vlen-utf8"})) });
    }
    let no_fill_marked = ameta.and_then(|m| json::int_param(m.get("nofill"))).unwrap_or(0) != 0;
    let fill = match doc.get("fill_value") {
        None => return Err(nczarr_err(&what, "fill_value missing")),
        Some(v) => parse_fill(v, &dt, &what)?,
    };
    let fill = if no_fill_marked { None } else { fill };
    let mut atts = read_atts(atts_json, nczarr, Some(dt.nctype))?;
    if ameta.and_then(|m| json::int_param(m.get("fill_attribute"))).unwrap_or(0) != 0
        && let Some(f) = &fill
        && !atts.iter().any(|a| a.name == "_FillValue")
    {
        atts.push(Att::new("_FillValue".into(), f.clone()));
    }
    // Dimensions: NCZarr references, else `dimension_names`, else anonymous.
    let refs = string_list(ameta.and_then(|m| m.get("dimension_references").or_else(|| m.get("dimrefs"))), "dimension references")?;
    let dimids = if shape.is_empty() {
        Vec::new()
    } else if let Some(refs) = refs {
        if refs.len() != shape.len() {
            return Err(nczarr_err(&what, format!("{} dimension references for rank {}", refs.len(), shape.len())));
        }
        let mut ids = Vec::new();
        for (r, &len) in refs.iter().zip(&shape) {
            let d = model.dim_by_fqn(r)?;
            let dim = &model.dims[d];
            if dim.len != len {
                if dim.unlimited && len > dim.len {
                    model.dims[d].len = len;
                } else if !dim.unlimited {
                    return Err(nczarr_err(&what, format!("shape {len} differs from dimension {r} = {}", dim.len)));
                }
            }
            ids.push(d);
        }
        ids
    } else {
        match doc.get("dimension_names") {
            Some(Value::Array(l)) if l.iter().all(Value::is_string) => {
                pure_dims(model, gid, &what, &shape, Some(&Value::Array(l.clone())))?
            }
            Some(Value::Array(l)) if l.len() == shape.len() && l.iter().all(|n| n.is_string() || n.is_null()) => {
                // Some dimensions unnamed: those are anonymous, the named ones shared.
                let mut ids = Vec::new();
                for (n, &len) in l.iter().zip(&shape) {
                    let one = if n.is_null() { None } else { Some(Value::Array(vec![n.clone()])) };
                    ids.extend(pure_dims(model, gid, &what, &[len], one.as_ref())?);
                }
                ids
            }
            Some(Value::Array(_)) | None | Some(Value::Null) => {
                pure_dims(model, gid, &what, &shape, atts_json.and_then(|a| a.get("_ARRAY_DIMENSIONS")))?
            }
            Some(other) => return Err(nczarr_err(&what, format!("dimension_names {other}"))),
        }
    };
    let chunks = if shape.is_empty() { Vec::new() } else { chunks };
    let quantize = quantize_of(&atts);
    Ok(Some(Var {
        name,
        nctype: dt.nctype,
        dimids,
        atts,
        chunks,
        filters,
        no_fill: fill.is_none(),
        storage_fill: fill,
        endian: if inner.big_endian { Endian::Big } else { Endian::Little },
        locked: true,
        quantize,
        cache: ChunkCache { size: 0, nelems: 0, preemption: 0.0 },
        stored_key: Some(vkey),
        dim_separator: sep,
        extra_zarray: Map::new(),
        maxstrlen: dt.width,
        fortran_order: perm.is_some(),
        storage: dt.storage,
        v3: Some(Box::new(V3Array { doc: Some(doc.clone()), default_keys, shard, index, shard_explicit: true, transpose: perm, outer })),
    }))
}

// ---- writing --------------------------------------------------------------------------------

pub struct Options {
    pub nczarr: bool,
    pub nc_properties: String,
    pub consolidated: bool,
    pub classic: bool,
}

fn att_json(att: &Att, var: Option<&Var>) -> Value {
    if att.name == "_FillValue"
        && let Some(v) = var
    {
        match &att.value {
            Values::Float(x) if v.nctype == NcType::Float => return json!(encode_base64(&(x[0] as f64).to_le_bytes())),
            Values::Double(x) if v.nctype == NcType::Double => return json!(encode_base64(&x[0].to_le_bytes())),
            Values::Char(b) if v.nctype == NcType::Char => return json!(b.first().copied().unwrap_or(0)),
            _ => {}
        }
    }
    attrs::render(att)
}

/// User attributes of a node plus, in NCZarr mode, their types.
fn atts_object(atts: &[Att], var: Option<&Var>, nczarr: bool) -> (Map<String, Value>, Map<String, Value>) {
    let mut out = Map::new();
    let mut types = Map::new();
    for att in atts.iter().filter(|a| !a.synthetic) {
        if att.name == "_FillValue" && var.is_some_and(|v| v.nctype == NcType::String) {
            continue; // lives in fill_value (§9.4)
        }
        out.insert(att.name.clone(), att_json(att, var));
        let t = if att.json.is_some() { "json" } else { attr_type_name(att.value.nctype()) };
        if nczarr {
            types.insert(att.name.clone(), json!(t));
        }
    }
    (out, types)
}

/// The codec list of a variable we defined (§6, §7).
pub fn codecs_for(var: &Var, elem: usize) -> Value {
    let mut inner: Vec<Value> = Vec::new();
    if var.fortran_order && var.dimids.len() > 1 {
        inner.push(json!({"name": "transpose", "configuration": {"order": (0..var.dimids.len()).rev().collect::<Vec<_>>()}}));
    }
    if var.nctype == NcType::String {
        inner.push(json!({"name": "vlen-utf8", "configuration": {}}));
    } else if var.nctype.size() == 1 {
        inner.push(json!({"name": "bytes"}));
    } else {
        inner.push(json!({"name": "bytes", "configuration": {"endian": if var.endian == Endian::Big { "big" } else { "little" }}}));
    }
    let elem = if var.nctype == NcType::String { 1 } else { elem };
    inner.extend(var.filters.iter().filter(|f| !crate::codec::is_object_codec(f)).map(|f| codec::to_v3(f, elem)));
    match var.v3.as_ref().and_then(|v| v.shard.as_ref()) {
        Some(_) => json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": var.chunks,
            "codecs": inner,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]),
        None => Value::Array(inner),
    }
}

fn render_var(model: &Model, var: &Var, opts: &Options) -> Value {
    let shape = model.var_shape(var);
    let (mut user, mut types) = atts_object(&var.atts, Some(var), opts.nczarr);
    if opts.nczarr {
        let mut meta = Map::new();
        meta.insert("dimension_references".into(), json!(var.dimids.iter().map(|&d| model.dim_fqn(d)).collect::<Vec<_>>()));
        if var.dimids.is_empty() {
            meta.insert("scalar".into(), json!(1));
        }
        meta.insert("storage".into(), json!("chunked"));
        if var.nctype == NcType::Char {
            meta.insert("nczarr_type".into(), json!("char"));
        }
        if var.no_fill {
            meta.insert("nofill".into(), json!(1));
        }
        if var.nctype == NcType::String && var.atts.iter().any(|a| a.name == "_FillValue" && !a.synthetic) {
            meta.insert("fill_attribute".into(), json!(1));
        }
        user.insert("_nczarr_array".into(), Value::Object(meta));
        types.insert("_nczarr_array".into(), json!("json"));
        types.insert("_nczarr_attrs".into(), json!("json"));
        user.insert("_nczarr_attrs".into(), json!({"attribute_types": types}));
    }
    let names: Vec<Value> = var.dimids.iter().map(|&d| json!(model.dims[d].name)).collect();
    if let Some(doc) = var.v3.as_ref().and_then(|v| v.doc.as_ref()) {
        // Read from storage: everything but the shape and attributes stays as the producer wrote it.
        let mut doc = doc.clone();
        doc.insert("shape".into(), json!(shape));
        doc.insert("attributes".into(), Value::Object(user));
        if doc.contains_key("dimension_names") && !var.dimids.is_empty() {
            doc.insert("dimension_names".into(), Value::Array(names));
        }
        return Value::Object(doc);
    }
    let elem = var.nctype.size();
    let fill = if var.no_fill { zero_fill(var.nctype) } else { render_fill(&var.fill_value()) };
    let grid: Vec<u64> = var.v3.as_ref().and_then(|v| v.shard.clone()).unwrap_or_else(|| var.chunks.clone());
    let mut doc = Map::new();
    doc.insert("shape".into(), json!(shape));
    doc.insert("data_type".into(), json!(render_data_type(var.nctype)));
    doc.insert(
        "chunk_grid".into(),
        json!({"name": "regular", "configuration": {"chunk_shape": if var.dimids.is_empty() { vec![] } else { grid }}}),
    );
    doc.insert("chunk_key_encoding".into(), json!({"name": "default", "configuration": {"separator": var.dim_separator.to_string()}}));
    doc.insert("fill_value".into(), fill);
    doc.insert("codecs".into(), codecs_for(var, elem));
    doc.insert("attributes".into(), Value::Object(user));
    if !var.dimids.is_empty() {
        doc.insert("dimension_names".into(), Value::Array(names));
    }
    doc.insert("zarr_format".into(), json!(3));
    doc.insert("node_type".into(), json!("array"));
    Value::Object(doc)
}

fn render_group(model: &Model, gid: usize, opts: &Options) -> Value {
    let g = &model.groups[gid];
    let (mut user, mut types) = atts_object(&g.atts, None, opts.nczarr);
    if gid == 0 && opts.nczarr {
        user.insert("_NCProperties".into(), json!(opts.nc_properties));
        types.insert("_NCProperties".into(), json!("char"));
        let mut sb = json!({"version": "3.0.0", "format": 3});
        if opts.classic {
            sb["classic"] = json!(1);
        }
        user.insert("_nczarr_superblock".into(), sb);
        types.insert("_nczarr_superblock".into(), json!("json"));
    }
    if opts.nczarr {
        let mut dims = Map::new();
        for &d in &g.dims {
            let dim = &model.dims[d];
            dims.insert(dim.name.clone(), json!({"size": dim.len, "unlimited": dim.unlimited as u8}));
        }
        let arrays: Vec<&str> = g.vars.iter().map(|v| v.name.as_str()).collect();
        let groups: Vec<&str> = g.children.iter().map(|&c| model.groups[c].name.as_str()).collect();
        user.insert("_nczarr_group".into(), json!({"dimensions": dims, "arrays": arrays, "groups": groups}));
        types.insert("_nczarr_group".into(), json!("json"));
        types.insert("_nczarr_attrs".into(), json!("json"));
        user.insert("_nczarr_attrs".into(), json!({"attribute_types": types}));
    }
    json!({"zarr_format": 3, "node_type": "group", "attributes": user})
}

/// Every node document, in crash-safe order: arrays, groups deepest first, the root last
/// (carrying the consolidated metadata when asked).
pub fn render(model: &Model, opts: &Options) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut all: Vec<(String, Value)> = Vec::new();
    for gid in 0..model.groups.len() {
        for (varid, var) in model.groups[gid].vars.iter().enumerate() {
            let vkey = model.var_key(gid, varid);
            let doc = render_var(model, var, opts);
            out.push((join_key(&vkey, "zarr.json"), to_bytes(&doc)));
            all.push((vkey, doc));
        }
    }
    let mut root = Value::Null;
    for gid in (0..model.groups.len()).rev() {
        let gkey = model.group_key(gid);
        let doc = render_group(model, gid, opts);
        if gid == 0 {
            root = doc;
        } else {
            out.push((join_key(&gkey, "zarr.json"), to_bytes(&doc)));
            let mut entry = doc;
            entry["consolidated_metadata"] = json!({"kind": "inline", "must_understand": false, "metadata": {}});
            all.push((gkey, entry));
        }
    }
    if opts.consolidated {
        all.sort_by(|a, b| a.0.cmp(&b.0));
        let meta: Map<String, Value> = all.into_iter().collect();
        root["consolidated_metadata"] = json!({"kind": "inline", "must_understand": false, "metadata": meta});
    }
    out.push(("zarr.json".into(), to_bytes(&root)));
    out
}

/// v3 node names (§8.1): no `__` prefix, not only periods, not `zarr.json`.
pub fn check_node_name(name: &str) -> Result<()> {
    if name.starts_with("__") || name.chars().all(|c| c == '.') || name == "zarr.json" {
        return err(Kind::BadName, format!("{name:?} is not a valid Zarr v3 node name"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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

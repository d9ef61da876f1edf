//! Reading: every NCZarr generation and pure Zarr v2 → `Model`.
//!
//! The walk is breadth-first and iterative (no recursion proportional to nesting depth):
//! first every group and its dimensions, so dimension ids follow netcdf-c's traversal order and
//! any array may reference any group's dimension; then each group's arrays, fetched in one
//! `get_many` per group. Everything read is validated before the model is built: bad metadata
//! fails the open with NC_ENCZARR, bad names with NC_EBADNAME; arrays netCDF cannot represent
//! are skipped with a warning (D4).

use crate::codec::{self, MAX_CHUNK_BYTES};
use crate::error::{Error, Kind, Result, err};
use crate::format::attrs;
use crate::format::common::{Loaded, MAX_DEPTH, pure_dims, quantize_of, shape_of, string_list};
use crate::format::dtype::{self, Storage, Unreadable};
use crate::format::open::ROOT_KEYS;
use crate::format::{HIDDEN_ATTS, Layout};
use crate::json;
use crate::model::{Att, ChunkCache, Endian, Model, Var, join_key};
use crate::nc::names;
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::trace;
use crate::url::Flavor;
use crate::zmap::{Key, Zmap};
use serde_json::{Map, Value};
use std::collections::HashMap;

struct Source<'a> {
    store: &'a dyn Zmap,
    consolidated: Option<Map<String, Value>>,
    stored: HashMap<String, Vec<u8>>,
}

impl Source<'_> {
    fn get_many(&mut self, keys: &[String]) -> Result<Vec<Option<Value>>> {
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

    fn is_object(v: &Option<Value>, key: &str) -> Result<()> {
        match v {
            Some(Value::Object(_)) | None => Ok(()),
            Some(_) => err(Kind::NcZarr, format!("{key} is not a JSON object")),
        }
    }

    fn children(&self, prefix: &str) -> Result<Vec<String>> {
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

fn obj(v: &Option<Value>) -> Option<&Map<String, Value>> {
    v.as_ref().and_then(Value::as_object)
}

fn member<'v>(m: Option<&'v Map<String, Value>>, keys: &[&str]) -> Option<&'v Value> {
    let m = m?;
    keys.iter().find_map(|k| m.get(*k))
}

/// `dims` of a group: integer lengths or `{"size": n, "unlimited": 1}`.
fn group_dims(v: Option<&Value>) -> Result<Vec<(String, u64, bool)>> {
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
fn read_atts(zattrs: Option<&Map<String, Value>>, types: Option<&Value>) -> Result<Vec<Att>> {
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

struct ArrayObjects {
    zarray: Option<Value>,
    zattrs: Option<Value>,
    ncz_array: Option<Value>,
    ncz_attr: Option<Value>,
}

/// Reads a Zarr v2 hierarchy whose root objects `format::open` fetched: `raw_root` holds
/// `ROOT_KEYS`' objects in that order.
pub fn read(
    store: &dyn Zmap,
    flavor: Option<Flavor>,
    consolidated: Option<bool>,
    dataset_name: &str,
    raw_root: Vec<Option<Vec<u8>>>,
) -> Result<Loaded> {
    let mut src = Source { store, consolidated: None, stored: HashMap::new() };
    let root_keys = ROOT_KEYS.map(str::to_string);
    let has_zmetadata = raw_root[3].is_some();
    if consolidated != Some(false)
        && let Some(bytes) = &raw_root[3]
    {
        match json::parse(bytes, ".zmetadata") {
            Ok(Value::Object(m))
                if json::int_param(m.get("zarr_consolidated_format")) == Some(1)
                    && m.get("metadata").is_some_and(|x| x.as_object().is_some_and(|o| !o.is_empty())) =>
            {
                if let Some(Value::Object(meta)) = m.get("metadata") {
                    src.consolidated = Some(meta.clone());
                }
            }
            _ => trace::warn(".zmetadata is invalid; reading per-node metadata"),
        }
    }
    // A consolidated document is metadata enough: a store may hold `.zmetadata` and no
    // `.zgroup` of its own (the root group is then described by the document alone).
    if raw_root[0].is_none() && raw_root[1].is_none() && raw_root[2].is_none() && src.consolidated.is_none() {
        return err(Kind::NotNetcdf, format!("{}: no Zarr metadata", store.describe()));
    }
    // The first round trip already holds the root objects: parse them rather than fetch again.
    let mut parsed_root = Vec::with_capacity(5);
    for (key, bytes) in root_keys.iter().zip(&raw_root).take(5) {
        let value = match (&src.consolidated, bytes) {
            (Some(meta), _) if key != ".nczarr" => meta.get(key).cloned(),
            (_, Some(b)) => {
                let v = json::parse(b, key)?;
                src.stored.insert(key.clone(), b.clone());
                Some(v)
            }
            (_, None) => None,
        };
        parsed_root.push(value);
    }
    let nczarr_obj = if src.consolidated.is_none() { parsed_root[4].take() } else { None };
    let root = &parsed_root[..3];
    for (v, k) in root.iter().zip(&root_keys) {
        Source::is_object(v, k)?;
    }
    let zgroup = obj(&root[0]);
    let zattrs = obj(&root[1]);
    if let Some(fmt) = member(zgroup, &["zarr_format"])
        && (json::int_param(Some(fmt)) != Some(2) || !fmt.is_number())
    {
        return err(Kind::NcZarr, format!("unsupported zarr_format {fmt}"));
    }
    let layout = if flavor == Some(Flavor::Zarr) {
        Layout::Pure
    } else if zattrs.is_some_and(|a| a.contains_key("_nczarr_superblock")) {
        Layout::G2a
    } else if zgroup.is_some_and(|g| g.contains_key("_nczarr_superblock")) {
        Layout::G2l
    } else if zgroup.is_some_and(|g| g.contains_key("_NCZARR_SUPERBLOCK")) {
        Layout::G2u
    } else if nczarr_obj.is_some() {
        Layout::G1
    } else {
        Layout::Pure
    };
    let nc_properties = zattrs.and_then(|a| a.get("_NCProperties")).and_then(Value::as_str).map(str::to_string);
    let classic = layout == Layout::G2a
        && zattrs.and_then(|a| a.get("_nczarr_superblock")).and_then(|s| s.get("format")).and_then(Value::as_str)
            == Some("netCDF-4 classic model");
    let mut model = Model::new();

    // A bare array store: one variable at the root, named after the dataset.
    if root[0].is_none() && root[2].is_some() {
        let name = std::path::Path::new(dataset_name)
            .file_stem()
            .and_then(|s| s.to_str())
            .map(names::check_stored)
            .transpose()?
            .unwrap_or_else(|| "data".into());
        let objs = ArrayObjects { zarray: root[2].clone(), zattrs: root[1].clone(), ncz_array: None, ncz_attr: None };
        if let Some(var) = build_var(&mut model, 0, name, String::new(), objs, Layout::Pure, flavor)? {
            model.groups[0].vars.push(var);
        }
        return Ok(Loaded {
            model,
            layout: Layout::Pure,
            stored: src.stored,
            nc_properties,
            has_zmetadata,
            classic: false,
            zarr_format: 2,
        });
    }

    // Phase 1: groups and their dimensions, breadth first.
    let mut var_lists: Vec<Vec<String>> = Vec::new(); // per group id, filled in BFS (= id) order
    let mut queue = std::collections::VecDeque::from([0usize]);
    let mut root_objs = Some((root[0].clone(), root[1].clone()));
    while let Some(gid) = queue.pop_front() {
        let key = model.group_key(gid);
        if key.split('/').count() > MAX_DEPTH {
            return err(Kind::NcZarr, "groups nested too deeply");
        }
        let (zgroup_v, zattrs_v) = match root_objs.take() {
            Some(objs) => objs,
            None => {
                let mut got = src.get_many(&[join_key(&key, ".zgroup"), join_key(&key, ".zattrs")])?;
                let zattrs_v = got.pop().flatten();
                (got.pop().flatten(), zattrs_v)
            }
        };
        Source::is_object(&zgroup_v, ".zgroup")?;
        Source::is_object(&zattrs_v, ".zattrs")?;
        let (ncz_group, ncz_attr) = if layout == Layout::G1 {
            let mut got = src.get_many(&[join_key(&key, ".nczgroup"), join_key(&key, ".nczattr"), join_key(&key, ".nczattrs")])?;
            let attrs2 = got.pop().flatten();
            let attrs1 = got.pop().flatten();
            (got.pop().flatten(), attrs1.or(attrs2))
        } else {
            (None, None)
        };
        let gmeta: Option<&Value> = match layout {
            Layout::G2a => member(obj(&zattrs_v), &["_nczarr_group"]),
            Layout::G2l => member(obj(&zgroup_v), &["_nczarr_group"]),
            Layout::G2u => member(obj(&zgroup_v), &["_NCZARR_GROUP"]),
            Layout::G1 => ncz_group.as_ref(),
            Layout::Pure => None,
        };
        let gmeta_obj = gmeta.and_then(Value::as_object);
        if gmeta.is_some() && gmeta_obj.is_none() {
            return err(Kind::NcZarr, format!("group {key:?}: NCZarr group metadata is not an object"));
        }
        // Pure (mode=zarr, or no NCZarr metadata): an NCZarr store's own attribute types in
        // `.zattrs` still hold, so its NC_STRING attributes stay NC_STRING as in netcdf-c.
        let types = match layout {
            Layout::G2a | Layout::G2l | Layout::Pure => member(obj(&zattrs_v), &["_nczarr_attr"]).and_then(|a| a.get("types")),
            Layout::G2u => member(obj(&zattrs_v), &["_NCZARR_ATTR"]).and_then(|a| a.get("types")),
            Layout::G1 => ncz_attr.as_ref().and_then(|a| a.get("types")),
        };
        model.groups[gid].atts = read_atts(obj(&zattrs_v), types)?;
        for (name, len, unlimited) in group_dims(member(gmeta_obj, &["dimensions", "dims"]))? {
            if model.groups[gid].dims.iter().any(|&d| model.dims[d].name == name) {
                return err(Kind::NcZarr, format!("duplicate dimension {name}"));
            }
            model.add_dim(gid, name, len, unlimited);
        }
        let listed_vars = string_list(member(gmeta_obj, &["arrays", "vars"]), "arrays")?;
        let listed_groups = string_list(member(gmeta_obj, &["groups"]), "groups")?;
        let (vars, groups) = match (listed_vars, listed_groups) {
            (Some(v), Some(g)) => (v, g),
            (v, g) => {
                let (lv, lg) = list_children(&mut src, &key)?;
                (v.unwrap_or(lv), g.unwrap_or(lg))
            }
        };
        let mut var_names = Vec::new();
        for v in vars {
            var_names.push(names::check_stored(&v)?);
        }
        var_lists.push(var_names);
        for g in groups {
            let name = names::check_stored(&g)?;
            if model.name_in_use(gid, &name) {
                return err(Kind::NcZarr, format!("duplicate group {name}"));
            }
            let child = model.add_group(gid, name);
            model.groups[child].stored_key = Some(model.group_key(child));
            queue.push_back(child);
        }
    }

    // Phase 2: arrays, one batch per group.
    for (gid, names_here) in var_lists.into_iter().enumerate() {
        let gkey = model.group_key(gid);
        let per = if layout == Layout::G1 { 6 } else { 2 };
        let mut keys = Vec::new();
        for name in &names_here {
            let vkey = join_key(&gkey, name);
            keys.push(join_key(&vkey, ".zarray"));
            keys.push(join_key(&vkey, ".zattrs"));
            if layout == Layout::G1 {
                for k in [".nczvar", ".nczarray", ".nczattr", ".nczattrs"] {
                    keys.push(join_key(&vkey, k));
                }
            }
        }
        let mut got = src.get_many(&keys)?.into_iter();
        for name in names_here {
            let mut objs: Vec<Option<Value>> = (0..per).map(|_| got.next().flatten()).collect();
            let (zarray, zattrs) = (objs[0].take(), objs[1].take());
            let (ncz_array, ncz_attr) =
                if layout == Layout::G1 { (objs[2].take().or(objs[3].take()), objs[4].take().or(objs[5].take())) } else { (None, None) };
            if zarray.is_none() {
                trace::warn(&format!("array {name} listed but has no .zarray; skipped"));
                continue;
            }
            if model.name_in_use(gid, &name) {
                return err(Kind::NcZarr, format!("duplicate array {name}"));
            }
            let vkey = join_key(&gkey, &name);
            if let Some(var) = build_var(&mut model, gid, name, vkey, ArrayObjects { zarray, zattrs, ncz_array, ncz_attr }, layout, flavor)?
            {
                model.groups[gid].vars.push(var);
            }
        }
    }
    Ok(Loaded { model, layout, stored: src.stored, nc_properties, has_zmetadata, classic, zarr_format: 2 })
}

/// Children of a group without NCZarr lists: sub-keys holding `.zarray` are arrays, `.zgroup` groups.
fn list_children(src: &mut Source<'_>, key: &str) -> Result<(Vec<String>, Vec<String>)> {
    let children: Vec<String> = src.children(key)?.into_iter().filter(|c| !c.starts_with('.')).collect();
    let mut probe = Vec::new();
    for c in &children {
        let ck = join_key(key, c);
        probe.push(join_key(&ck, ".zarray"));
        probe.push(join_key(&ck, ".zgroup"));
    }
    let found: Vec<bool> = match &src.consolidated {
        Some(meta) => probe.iter().map(|k| meta.contains_key(k)).collect(),
        None => src.store.get_many(&Key::all(&probe)?)?.into_iter().map(|o| o.is_some()).collect(),
    };
    let mut vars = Vec::new();
    let mut groups = Vec::new();
    for (i, c) in children.into_iter().enumerate() {
        if found[2 * i] {
            vars.push(c);
        } else if found[2 * i + 1] {
            groups.push(c);
        }
    }
    Ok((vars, groups))
}

fn build_var(
    model: &mut Model,
    gid: usize,
    name: String,
    vkey: String,
    objs: ArrayObjects,
    layout: Layout,
    flavor: Option<Flavor>,
) -> Result<Option<Var>> {
    let what = if vkey.is_empty() { name.clone() } else { vkey.clone() };
    Source::is_object(&objs.zarray, &what)?;
    Source::is_object(&objs.zattrs, &what)?;
    let zarray = obj(&objs.zarray).ok_or_else(|| Error::new(Kind::NcZarr, format!("{what}/.zarray missing")))?;
    let zattrs = obj(&objs.zattrs);
    match zarray.get("zarr_format") {
        Some(Value::Number(n)) if json::int_of(n) == Some(2) => {}
        other => return err(Kind::NcZarr, format!("{what}: zarr_format {other:?}")),
    }
    let ameta: Option<&Value> = match layout {
        Layout::G2a => zattrs.and_then(|a| a.get("_nczarr_array")),
        Layout::G2l => zarray.get("_nczarr_array"),
        Layout::G2u => zarray.get("_NCZARR_ARRAY"),
        Layout::G1 => objs.ncz_array.as_ref(),
        Layout::Pure => None,
    };
    let ameta = ameta.and_then(Value::as_object);
    let types = match layout {
        Layout::G2a | Layout::G2l | Layout::Pure => zattrs.and_then(|a| a.get("_nczarr_attr")).and_then(|a| a.get("types")),
        Layout::G2u => zattrs.and_then(|a| a.get("_NCZARR_ATTR")).and_then(|a| a.get("types")),
        Layout::G1 => objs.ncz_attr.as_ref().and_then(|a| a.get("types")),
    };
    let char_alias = ameta.and_then(|m| m.get("type_alias")).and_then(Value::as_str) == Some("char");
    let dtype_text = zarray.get("dtype").and_then(Value::as_str).ok_or_else(|| Error::new(Kind::NcZarr, format!("{what}: dtype")))?;
    let mut dt = match dtype_text {
        "<U1" | ">U1" if matches!(layout, Layout::G2u | Layout::G1) => {
            dtype::DType { nctype: NcType::Char, endian: Endian::Little, storage: Storage::Plain }
        }
        text => match dtype::parse(text, char_alias) {
            Ok(d) => d,
            Err(Unreadable::Invalid(m)) => return err(Kind::NcZarr, format!("{what}: {m}")),
            Err(Unreadable::Unsupported(m)) => {
                trace::warn(&format!("{what}: {m} cannot be represented in netCDF; skipped"));
                return Ok(None);
            }
        },
    };
    if layout.is_legacy() {
        // 4.8.0-4.9.2 wrote a big-endian mark over little-endian bytes (nczarr-format.md §1).
        dt.endian = Endian::Little;
    }
    let shape = shape_of(zarray.get("shape"), &format!("{what}: shape"), 0)?;
    let chunks = shape_of(zarray.get("chunks"), &format!("{what}: chunks"), 1)?;
    if shape.len() != chunks.len() {
        return err(Kind::NcZarr, format!("{what}: rank of chunks differs from rank of shape"));
    }
    let chunk_bytes = chunks.iter().try_fold(dt.item_size() as u128, |acc, &c| acc.checked_mul(c as u128));
    if chunk_bytes.is_none_or(|b| b > MAX_CHUNK_BYTES) {
        return err(Kind::NcZarr, format!("{what}: chunk too large"));
    }
    let fortran_order = match zarray.get("order").and_then(Value::as_str) {
        Some("C") | None => false,
        Some("F") => true,
        Some(other) => return err(Kind::NcZarr, format!("{what}: order {other:?}")),
    };
    let dim_separator = match zarray.get("dimension_separator") {
        None | Some(Value::Null) => '.',
        Some(Value::String(s)) if s == "." => '.',
        Some(Value::String(s)) if s == "/" => '/',
        Some(other) => return err(Kind::NcZarr, format!("{what}: dimension_separator {other}")),
    };
    let mut filters = Vec::new();
    match zarray.get("filters") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            for f in list {
                filters.push(codec::from_zarr(f).map_err(|e| Error::new(Kind::NcZarr, format!("{what}: {}", e.context)))?);
            }
        }
        Some(other) => return err(Kind::NcZarr, format!("{what}: filters {other}")),
    }
    match zarray.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => filters.push(codec::from_zarr(c).map_err(|e| Error::new(Kind::NcZarr, format!("{what}: {}", e.context)))?),
    }
    if dt.storage == Storage::Object {
        let vlen = filters.iter().position(|f| {
            f.raw.as_ref().and_then(|r| r.get("id")).and_then(Value::as_str).is_some_and(|id| id == "vlen-utf8" || id == "vlen-bytes")
        });
        if vlen.is_none() {
            return err(Kind::NcZarr, format!("{what}: object dtype without a vlen codec"));
        }
    }
    let fill = attrs::parse_fill(zarray.get("fill_value").unwrap_or(&Value::Null), dt.nctype)
        .map_err(|e| Error::new(Kind::NcZarr, format!("{what}: {}", e.context)))?;
    let mut atts = read_atts(zattrs, types)?;
    // v2's fill_value has no spelling for a NaN payload: the `_FillValue` attribute's bits win
    // over its plain "NaN" (see `attrs::nan_bits_f32`).
    let fill = match (fill, atts.iter().find(|a| a.name == "_FillValue").map(|a| &a.value)) {
        (Some(Values::Float(f)), Some(Values::Float(a))) if f[0].is_nan() && a.len() == 1 && a[0].is_nan() => {
            Some(Values::Float(a.clone()))
        }
        (Some(Values::Double(f)), Some(Values::Double(a))) if f[0].is_nan() && a.len() == 1 && a[0].is_nan() => {
            Some(Values::Double(a.clone()))
        }
        (fill, _) => fill,
    };

    // Dimensions: NCZarr references first, then xarray names, then anonymous dims.
    let scalar_marker = ameta
        .is_some_and(|m| m.contains_key("scalar") && layout == Layout::G2a || m.get("storage").and_then(Value::as_str) == Some("scalar"));
    let xarray_names = zattrs.and_then(|a| a.get("_ARRAY_DIMENSIONS"));
    let refs = string_list(ameta.and_then(|m| m.get("dimension_references").or_else(|| m.get("dimrefs"))), "dimension references")?;
    let (dimids, chunks) = if scalar_marker || (shape.is_empty()) {
        if !shape.is_empty() && shape != [1] {
            return err(Kind::NcZarr, format!("{what}: scalar with shape {shape:?}"));
        }
        (Vec::new(), Vec::new())
    } else if flavor != Some(Flavor::Zarr) && layout != Layout::Pure && refs.is_some() {
        let refs = refs.unwrap_or_default();
        if refs.len() != shape.len() {
            return err(Kind::NcZarr, format!("{what}: {} dimension references for rank {}", refs.len(), shape.len()));
        }
        let mut ids = Vec::new();
        for (r, &len) in refs.iter().zip(&shape) {
            for seg in r.split('/').filter(|s| !s.is_empty()) {
                names::check_stored(seg)?;
            }
            let d = model.dim_by_fqn(r)?;
            let dim = &model.dims[d];
            if !(dim.len == len || dim.unlimited && len <= dim.len) {
                if dim.unlimited {
                    model.dims[d].len = len;
                } else {
                    return err(Kind::NcZarr, format!("{what}: shape {len} differs from dimension {r} = {}", dim.len));
                }
            }
            ids.push(d);
        }
        (ids, chunks)
    } else if xarray_names.and_then(Value::as_array).is_some_and(|l| l == &[Value::String("_scalar_".into())]) && shape == [1] {
        (Vec::new(), Vec::new())
    } else {
        (pure_dims(model, gid, &what, &shape, xarray_names)?, chunks)
    };
    if layout == Layout::Pure {
        // Untyped JSON cannot say `_FillValue`'s type; CF requires the variable's own.
        if let Some(a) = atts.iter_mut().find(|a| a.name == "_FillValue" && a.value.nctype() != dt.nctype) {
            let raw = zattrs.and_then(|z| z.get("_FillValue")).cloned().unwrap_or(Value::Null);
            if let Ok((v, _)) = attrs::typed(&raw, dt.nctype) {
                a.value = v;
                a.json = None;
            }
        }
    }
    if layout == Layout::Pure {
        attrs::add_declared_fill(&mut atts, fill.as_ref());
    }
    let maxstrlen = match dt.storage {
        Storage::FixedBytes(n) => Some(n),
        _ => None,
    };
    let quantize = quantize_of(&atts);
    let mut extra = zarray.clone();
    for k in [
        "zarr_format",
        "shape",
        "dtype",
        "chunks",
        "fill_value",
        "order",
        "compressor",
        "filters",
        "dimension_separator",
        "_nczarr_array",
        "_NCZARR_ARRAY",
    ] {
        extra.remove(k);
    }
    Ok(Some(Var {
        name,
        nctype: dt.nctype,
        dimids,
        atts,
        chunks,
        filters,
        no_fill: fill.is_none(),
        storage_fill: fill,
        endian: dt.endian,
        locked: true,
        quantize,
        cache: ChunkCache { size: 0, nelems: 0, preemption: 0.0 },
        stored: crate::model::StoredArray {
            key: Some(vkey),
            separator: dim_separator,
            extra_zarray: extra,
            maxstrlen,
            fortran_order,
            element: match dt.storage {
                Storage::Utf32(n) => crate::model::StorageKind::Utf32(n),
                Storage::Object => crate::model::StorageKind::Vlen,
                Storage::Bool => crate::model::StorageKind::Bool,
                _ => crate::model::StorageKind::Native,
            },
            v3: None,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zmap::memory::MemoryStore;
    use proptest::prelude::*;

    /// A small NCZarr dataset as our writer lays it out, in Zarr v2 (with `.zmetadata`) and v3.
    const V2: &[(&str, &str)] = &[
        (".zgroup", r#"{"zarr_format":2}"#),
        (
            ".zattrs",
            r#"{"t":"a","_nczarr_group":{"dimensions":{"x":2,"t":{"size":3,"unlimited":1}},"arrays":["c","s"],"groups":["g"]},"_nczarr_superblock":{"version":"2.0.0"},"_nczarr_attr":{"types":{"t":">S1","_nczarr_group":"|J0","_nczarr_superblock":"|J0","_nczarr_attr":"|J0"}}}"#,
        ),
        (
            "c/.zarray",
            r#"{"zarr_format":2,"shape":[3,2],"dtype":"<f4","chunks":[1,2],"fill_value":"NaN","order":"C","compressor":{"id":"zlib","level":1},"filters":[{"id":"shuffle","elementsize":4}]}"#,
        ),
        (
            "c/.zattrs",
            r#"{"u":[1,2],"_nczarr_array":{"dimension_references":["/t","/x"],"storage":"chunked"},"_nczarr_attr":{"types":{"u":"<i2"}}}"#,
        ),
        (
            "s/.zarray",
            r#"{"zarr_format":2,"shape":[2],"dtype":"|S5","chunks":[2],"fill_value":"","order":"C","compressor":null,"filters":null}"#,
        ),
        (
            "s/.zattrs",
            r#"{"_nczarr_array":{"dimension_references":["/x"],"storage":"chunked"},"_nczarr_attr":{"types":{"_nczarr_maxstrlen":"<i4"}},"_nczarr_maxstrlen":5}"#,
        ),
        ("g/.zgroup", r#"{"zarr_format":2}"#),
        ("g/.zattrs", r#"{"_nczarr_group":{"dimensions":{},"arrays":[],"groups":[]}}"#),
        (
            ".zmetadata",
            r#"{"metadata":{".zgroup":{"zarr_format":2},"c/.zarray":{"zarr_format":2,"shape":[1],"dtype":"<i4","chunks":[1],"fill_value":0,"order":"C","compressor":null,"filters":null}},"zarr_consolidated_format":1}"#,
        ),
    ];
    const V3: &[(&str, &str)] = &[
        (
            "zarr.json",
            r#"{"zarr_format":3,"node_type":"group","attributes":{"_nczarr_superblock":{"version":"3.0.0","format":3},"_nczarr_group":{"dimensions":{"x":{"size":4,"unlimited":0}},"arrays":["c"],"groups":[]}},"consolidated_metadata":null}"#,
        ),
        (
            "c/zarr.json",
            r#"{"shape":[4],"data_type":"int16","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":-1,"codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}}],"attributes":{"_nczarr_array":{"dimension_references":["/x"]}},"dimension_names":["x"],"zarr_format":3,"node_type":"array"}"#,
        ),
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        /// Every metadata object of a dataset (v2 `.zarray`/`.zattrs`/`.zgroup`/`.zmetadata`,
        /// v3 `zarr.json`) overwritten, cut or replaced by arbitrary bytes, one at a time: the
        /// dataset opens or is refused, never a panic.
        #[test]
        fn fuzz_dataset_metadata(which in any::<usize>(), v3 in any::<bool>(), bytes in proptest::collection::vec(any::<u8>(), 0..300),
                                 edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8), cut in any::<usize>(), arbitrary in any::<bool>()) {
            let objects = if v3 { V3 } else { V2 };
            let store = MemoryStore::new();
            for (i, (key, text)) in objects.iter().enumerate() {
                let bytes = match (i == which % objects.len(), arbitrary) {
                    (true, true) => bytes.clone(),
                    (true, false) => crate::bytes::mutated(text.as_bytes(), &edits, cut),
                    _ => text.as_bytes().to_vec(),
                };
                store.put(&Key::new(*key).unwrap(), &bytes).unwrap();
            }
            for consolidated in [None, Some(true), Some(false)] {
                let _ = crate::format::open::read(&store, None, consolidated, "fuzz", None);
                let _ = crate::format::open::read(&store, Some(Flavor::Zarr), consolidated, "fuzz", None);
            }
        }
    }

    #[test]
    fn sample_datasets_open() {
        for objects in [V2, V3] {
            let store = MemoryStore::new();
            for (key, text) in objects {
                store.put(&Key::new(*key).unwrap(), text.as_bytes()).unwrap();
            }
            let loaded = crate::format::open::read(&store, None, Some(false), "sample", None).unwrap();
            assert!(!loaded.model.groups[0].vars.is_empty());
        }
    }
}

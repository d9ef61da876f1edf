//! Reading Zarr v3: `zarr.json` documents (and consolidated metadata) → `Model`.

use super::*;
use crate::codec::MAX_CHUNK_BYTES;
use crate::format::Layout;
use crate::format::common::{Loaded, MAX_DEPTH, pure_dims, quantize_of, referenced_dims, shape_of, string_list};
use crate::model::{ChunkCache, Endian, Model, V3Array, Var, join_key};
use crate::url::Flavor;
use std::collections::VecDeque;

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
    let root = root_document(&mut src, root_bytes)?;
    let kind = check_node(&root, "zarr.json")?.ok_or_else(|| Error::new(Kind::NotNetcdf, "root node uses an unsupported extension"))?;
    let mut model = Model::new();
    if kind == "array" {
        bare_array(&mut model, dataset_name, &root)?;
        let stored = src.stored;
        return Ok(Loaded {
            model,
            layout: Layout::Pure,
            stored,
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
    let var_lists = read_groups(&mut src, &mut model, root, nczarr)?;
    read_arrays(&mut model, var_lists, nczarr)?;
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

/// The root `zarr.json`, or an implicit root group when none is stored but nodes are below.
fn root_document(src: &mut Source<'_>, root_bytes: Option<Vec<u8>>) -> Result<Map<String, Value>> {
    match root_bytes {
        Some(bytes) => {
            let Value::Object(root) = json::parse(&bytes, "zarr.json")? else {
                return err(Kind::NcZarr, "zarr.json is not a JSON object");
            };
            src.stored.insert("zarr.json".into(), bytes);
            Ok(root)
        }
        None if src.has_nodes_below("")? => {
            let mut m = Map::new();
            m.insert("zarr_format".into(), json!(3));
            m.insert("node_type".into(), json!("group"));
            Ok(m)
        }
        None => err(Kind::NotNetcdf, format!("{}: no Zarr metadata", src.store.describe())),
    }
}

/// A bare array store: one variable at the root, named after the dataset.
fn bare_array(model: &mut Model, dataset_name: &str, root: &Map<String, Value>) -> Result<()> {
    let name = std::path::Path::new(dataset_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .map(names::check_stored)
        .transpose()?
        .unwrap_or_else(|| "data".into());
    if let Some(var) = build_var(model, 0, name, String::new(), root, false)? {
        model.groups[0].vars.push(var);
    }
    Ok(())
}

/// Phase 1: groups and dimensions, breadth first (dimension ids in netcdf-c's order).
/// Returns each group's arrays (name and document), by group id.
fn read_groups(src: &mut Source<'_>, model: &mut Model, root: Map<String, Value>, nczarr: bool) -> Result<Vec<Vec<NamedDoc>>> {
    let mut var_lists: Vec<Vec<NamedDoc>> = Vec::new();
    let mut queue = VecDeque::from([(0usize, Some(root))]);
    while let Some((gid, doc)) = queue.pop_front() {
        if model.group_key(gid).split('/').count() > MAX_DEPTH {
            return err(Kind::NcZarr, "groups nested too deeply");
        }
        let (arrays, groups) = read_group(src, model, gid, doc.unwrap_or_default(), nczarr)?;
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
    Ok(var_lists)
}

/// One group's attributes and dimensions into `model`; its arrays and sub-groups, in the
/// order its NCZarr lists give, else as stored.
fn read_group(
    src: &mut Source<'_>,
    model: &mut Model,
    gid: usize,
    doc: Map<String, Value>,
    nczarr: bool,
) -> Result<(Vec<NamedDoc>, Vec<NamedDoc>)> {
    let key = model.group_key(gid);
    let atts = attributes(&doc);
    model.groups[gid].atts = read_atts(atts, nczarr, None)?;
    let gmeta = atts.and_then(|a| a.get("_nczarr_group")).filter(|_| nczarr);
    if let Some(dims) = gmeta.and_then(|g| g.get("dimensions").or_else(|| g.get("dims"))) {
        group_dims(model, gid, &key, dims)?;
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
    Ok((arrays, groups))
}

/// A group's NCZarr dimensions: `{name: size | {size, unlimited}}` or `[{name, size, unlimited}]`.
fn group_dims(model: &mut Model, gid: usize, key: &str, dims: &Value) -> Result<()> {
    match dims {
        Value::Object(dims) => {
            for (name, d) in dims {
                let size = json::int_param(d.get("size")).or_else(|| json::int_param(Some(d)));
                let unlimited = json::int_param(d.get("unlimited")).unwrap_or(0) != 0;
                add_dim(model, gid, name, size, unlimited)?;
            }
        }
        Value::Array(dims) => {
            for d in dims {
                let name = d.get("name").and_then(Value::as_str).unwrap_or("");
                let unlimited = json::int_param(d.get("unlimited")).unwrap_or(0) != 0;
                add_dim(model, gid, name, json::int_param(d.get("size")), unlimited)?;
            }
        }
        _ => return err(Kind::NcZarr, format!("group {key:?}: dimensions")),
    }
    Ok(())
}

/// Phase 2: arrays, in group id order.
fn read_arrays(model: &mut Model, var_lists: Vec<Vec<NamedDoc>>, nczarr: bool) -> Result<()> {
    for (gid, arrays) in var_lists.into_iter().enumerate() {
        let gkey = model.group_key(gid);
        for (name, doc) in arrays {
            let name = names::check_stored(&name)?;
            if model.name_in_use(gid, &name) {
                return err(Kind::NcZarr, format!("duplicate array {name}"));
            }
            let vkey = join_key(&gkey, &name);
            if let Some(var) = build_var(model, gid, name, vkey, &doc.unwrap_or_default(), nczarr)? {
                model.groups[gid].vars.push(var);
            }
        }
    }
    Ok(())
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
    let Some(dt) = array_type(doc, ameta, &what)? else { return Ok(None) };
    let shape = shape_of(doc.get("shape"), &format!("{what}: shape"), 0)?;
    let Some(grid_shape) = regular_grid(doc, shape.len(), &what)? else { return Ok(None) };
    let (default_keys, sep) = key_encoding(doc, &what)?;
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
    let Sharded { chunks, shard, inner, index, outer } = sharded(pipe, grid_shape, &what)?;
    let perm = inner.perm.clone().filter(|o| o.iter().enumerate().any(|(i, &x)| i != x));
    let chunk_bytes = chunks.iter().try_fold(dt.item as u128, |acc, &c| acc.checked_mul(c as u128));
    if chunk_bytes.is_none_or(|b| b > MAX_CHUNK_BYTES) {
        return Err(nczarr_err(&what, "chunk too large"));
    }
    let mut filters = inner.filters;
    if inner.vlen {
        filters.insert(0, Filter { id: 0, params: vec![], raw: Some(json!({"id": "vlen-utf8"})) });
    }
    let (fill, atts) = fill_and_attributes(doc, &dt, ameta, nczarr, &what)?;
    let dimids = array_dims(model, gid, &what, doc, ameta, &shape)?;
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
        stored: crate::model::StoredArray {
            key: Some(vkey),
            separator: sep,
            extra_zarray: Map::new(),
            maxstrlen: dt.width,
            fortran_order: perm.is_some(),
            element: dt.storage,
            v3: Some(Box::new(V3Array {
                doc: Some(doc.clone()),
                default_keys,
                shard,
                index,
                shard_explicit: true,
                transpose: perm,
                outer,
            })),
        },
    }))
}

/// The element type, with NCZarr's char/string markers; `None`: one netCDF cannot represent
/// (skipped with a warning).
fn array_type(doc: &Map<String, Value>, ameta: Option<&Map<String, Value>>, what: &str) -> Result<Option<DataType>> {
    let marker = |k: &str| ameta.and_then(|m| m.get("nczarr_type").or_else(|| m.get("type_alias"))).and_then(Value::as_str) == Some(k);
    match data_type(doc.get("data_type").ok_or_else(|| nczarr_err(what, "data_type missing"))?, marker("char"), marker("string")) {
        Ok(d) => Ok(Some(d)),
        Err(Unreadable::Invalid(m)) => Err(nczarr_err(what, m)),
        Err(Unreadable::Unsupported(m)) => {
            trace::warn(&format!("{what}: {m} cannot be represented in netCDF; skipped"));
            Ok(None)
        }
    }
}

/// The chunk shape of a regular chunk grid; `None`: another grid (skipped with a warning).
fn regular_grid(doc: &Map<String, Value>, rank: usize, what: &str) -> Result<Option<Vec<u64>>> {
    let grid = doc.get("chunk_grid").and_then(Value::as_object).ok_or_else(|| nczarr_err(what, "chunk_grid missing"))?;
    if grid.get("name").and_then(Value::as_str) != Some("regular") {
        trace::warn(&format!("{what}: chunk grid {:?} is not supported; skipped", grid.get("name")));
        return Ok(None);
    }
    let chunk_shape = shape_of(grid.get("configuration").and_then(|c| c.get("chunk_shape")), &format!("{what}: chunk_shape"), 1)?;
    if chunk_shape.len() != rank {
        return Err(nczarr_err(what, "rank of chunk_shape differs from rank of shape"));
    }
    Ok(Some(chunk_shape))
}

/// `chunk_key_encoding`: whether keys take the default `c/` prefix, and the separator.
fn key_encoding(doc: &Map<String, Value>, what: &str) -> Result<(bool, char)> {
    let e = doc.get("chunk_key_encoding").and_then(Value::as_object).ok_or_else(|| nczarr_err(what, "chunk_key_encoding missing"))?;
    let sep = e.get("configuration").and_then(|c| c.get("separator")).and_then(Value::as_str);
    match (e.get("name").and_then(Value::as_str), sep) {
        (Some("default"), None | Some("/")) => Ok((true, '/')),
        (Some("default"), Some(".")) => Ok((true, '.')),
        (Some("v2"), None | Some(".")) => Ok((false, '.')),
        (Some("v2"), Some("/")) => Ok((false, '/')),
        (n, s) => Err(nczarr_err(what, format!("chunk_key_encoding {n:?} separator {s:?}"))),
    }
}

/// An array's codecs with sharding taken apart: the chunks the engine sees (inner chunks of a
/// sharded array), the shard shape, the inner pipeline, the index layout and the codecs
/// around whole shards.
struct Sharded {
    chunks: Vec<u64>,
    shard: Option<Vec<u64>>,
    inner: Pipeline,
    index: ShardIndex,
    outer: Vec<Filter>,
}

fn sharded(mut pipe: Pipeline, grid_shape: Vec<u64>, what: &str) -> Result<Sharded> {
    let outer = std::mem::take(&mut pipe.outer);
    if let Some(f) = outer.iter().find(|f| !codec::is_supported(f)) {
        trace::warn(&format!("{what}: codec {:?} around its shards is not available", f.raw));
    }
    let Some((inner_shape, inner, index)) = pipe.shard.take() else {
        return Ok(Sharded { chunks: grid_shape, shard: None, inner: pipe, index: ShardIndex::default(), outer });
    };
    if inner_shape.iter().zip(&grid_shape).any(|(i, s)| s % i != 0) {
        return Err(nczarr_err(what, "inner chunk shape does not divide the shard shape"));
    }
    // The index holds 16 bytes per inner chunk: bound it (reliability.md §3.1 ceilings).
    let slots = inner_shape.iter().zip(&grid_shape).try_fold(1u64, |acc, (i, s)| acc.checked_mul(s / i));
    if slots.is_none_or(|n| n > MAX_INNER_CHUNKS) {
        return Err(nczarr_err(what, "too many inner chunks per shard"));
    }
    Ok(Sharded { chunks: inner_shape, shard: Some(grid_shape), inner: *inner, index, outer })
}

/// The fill value (`None`: no fill, or NCZarr's `nofill` mark) and the attributes, with
/// `_FillValue` added where NCZarr marked it, or pure Zarr declares a fill.
fn fill_and_attributes(
    doc: &Map<String, Value>,
    dt: &DataType,
    ameta: Option<&Map<String, Value>>,
    nczarr: bool,
    what: &str,
) -> Result<(Option<Values>, Vec<Att>)> {
    let no_fill_marked = ameta.and_then(|m| json::int_param(m.get("nofill"))).unwrap_or(0) != 0;
    let fill = match doc.get("fill_value") {
        None => return Err(nczarr_err(what, "fill_value missing")),
        Some(v) => parse_fill(v, dt, what)?,
    };
    let fill = if no_fill_marked { None } else { fill };
    let mut atts = read_atts(attributes(doc), nczarr, Some(dt.nctype))?;
    if ameta.and_then(|m| json::int_param(m.get("fill_attribute"))).unwrap_or(0) != 0
        && let Some(f) = &fill
        && !atts.iter().any(|a| a.name == "_FillValue")
    {
        atts.push(Att::new("_FillValue".into(), f.clone()));
    }
    if ameta.is_none() {
        crate::format::attrs::add_declared_fill(&mut atts, fill.as_ref());
    }
    Ok((fill, atts))
}

/// Dimensions: NCZarr references, else `dimension_names`, else xarray's `_ARRAY_DIMENSIONS`,
/// else anonymous.
fn array_dims(
    model: &mut Model,
    gid: usize,
    what: &str,
    doc: &Map<String, Value>,
    ameta: Option<&Map<String, Value>>,
    shape: &[u64],
) -> Result<Vec<usize>> {
    if shape.is_empty() {
        return Ok(Vec::new());
    }
    let refs = string_list(ameta.and_then(|m| m.get("dimension_references").or_else(|| m.get("dimrefs"))), "dimension references")?;
    if let Some(refs) = refs {
        return referenced_dims(model, what, &refs, shape);
    }
    match doc.get("dimension_names") {
        Some(Value::Array(l)) if l.iter().all(Value::is_string) => pure_dims(model, gid, what, shape, Some(&Value::Array(l.clone()))),
        Some(Value::Array(l)) if l.len() == shape.len() && l.iter().all(|n| n.is_string() || n.is_null()) => {
            // Some dimensions unnamed: those are anonymous, the named ones shared.
            let mut ids = Vec::new();
            for (n, &len) in l.iter().zip(shape) {
                let one = if n.is_null() { None } else { Some(Value::Array(vec![n.clone()])) };
                ids.extend(pure_dims(model, gid, what, &[len], one.as_ref())?);
            }
            Ok(ids)
        }
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            pure_dims(model, gid, what, shape, attributes(doc).and_then(|a| a.get("_ARRAY_DIMENSIONS")))
        }
        Some(other) => Err(nczarr_err(what, format!("dimension_names {other}"))),
    }
}

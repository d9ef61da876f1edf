//! Writing Zarr v3: `Model` → `zarr.json` documents, NCZarr attributes included.

use super::*;
use crate::format::attrs::encode_base64;
use crate::json::to_bytes;
use crate::model::{Endian, Model, Var, join_key};

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

/// `_nczarr_attrs`: the attribute types, and which char attributes are Latin-1 text
/// (`attrs::latin1_names`).
fn nczarr_attrs(types: Map<String, Value>, atts: &[Att]) -> Value {
    let latin1 = attrs::latin1_names(atts);
    if latin1.is_empty() { json!({"attribute_types": types}) } else { json!({"attribute_types": types, "latin1": latin1}) }
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
pub(crate) fn codecs_for(var: &Var, elem: usize) -> Value {
    let mut inner: Vec<Value> = Vec::new();
    if var.stored.fortran_order && var.dimids.len() > 1 {
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
    match var.stored.v3.as_ref().and_then(|v| v.shard.as_ref()) {
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
        user.insert("_nczarr_attrs".into(), nczarr_attrs(types, &var.atts));
    }
    let names: Vec<Value> = var.dimids.iter().map(|&d| json!(model.dims[d].name)).collect();
    if let Some(doc) = var.stored.v3.as_ref().and_then(|v| v.doc.as_ref()) {
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
    let grid: Vec<u64> = var.stored.v3.as_ref().and_then(|v| v.shard.clone()).unwrap_or_else(|| var.chunks.clone());
    let mut doc = Map::new();
    doc.insert("shape".into(), json!(shape));
    doc.insert("data_type".into(), json!(render_data_type(var.nctype)));
    doc.insert(
        "chunk_grid".into(),
        json!({"name": "regular", "configuration": {"chunk_shape": if var.dimids.is_empty() { vec![] } else { grid }}}),
    );
    doc.insert("chunk_key_encoding".into(), json!({"name": "default", "configuration": {"separator": var.stored.separator.to_string()}}));
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
        user.insert("_nczarr_attrs".into(), nczarr_attrs(types, &g.atts));
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
pub(crate) fn check_node_name(name: &str) -> Result<()> {
    if name.starts_with("__") || name.chars().all(|c| c == '.') || name == "zarr.json" {
        return err(Kind::BadName, format!("{name:?} is not a valid Zarr v3 node name"));
    }
    Ok(())
}

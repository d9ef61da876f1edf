//! Writing: `Model` → the metadata objects of one layout (G2a NCZarr with corrections C1–C12,
//! or pure Zarr v2), in crash-safe order: arrays, then groups from the deepest up, the root
//! last, then `.zmetadata`.

use crate::codec;
use crate::format::attrs;
use crate::format::dtype;
use crate::json::{f64_value, to_bytes};
use crate::model::{Model, Var};
use crate::nc::types::NcType;
use crate::url::Flavor;
use serde_json::{Map, Value, json};

use crate::format::RenderOptions as Options;

/// One metadata object: its key, its JSON and that JSON's bytes.
type Rendered = (String, Value, Vec<u8>);

fn attrs_object(atts: &[crate::model::Att], types: &mut Map<String, Value>, out: &mut Map<String, Value>) {
    for att in atts.iter().filter(|a| !a.synthetic) {
        out.insert(att.name.clone(), attrs::render(att));
        types.insert(att.name.clone(), Value::String(dtype::render_attr_type(att.value.nctype())));
    }
}

pub fn render(model: &Model, opts: &Options) -> Vec<(String, Vec<u8>)> {
    let nczarr = opts.flavor == Flavor::NcZarr;
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let mut consolidated = Map::new();
    let mut emit = |key: String, v: Value, bytes: Vec<u8>, out: &mut Vec<(String, Vec<u8>)>| {
        if opts.consolidated {
            consolidated.insert(key.clone(), v);
        }
        out.push((key, bytes));
    };
    // Variables render on every core (a thousand of them took 8 ms on one), in order.
    let vars: Vec<(usize, usize)> = (0..model.groups.len()).flat_map(|g| (0..model.groups[g].vars.len()).map(move |v| (g, v))).collect();
    let rendered: Vec<[Option<Rendered>; 2]> = {
        use rayon::prelude::*;
        let one = |&(gid, varid): &(usize, usize)| {
            let vkey = model.var_key(gid, varid);
            let (zarray, zattrs) = render_var(model, &model.groups[gid].vars[varid], opts);
            let zarray_bytes = to_bytes(&zarray);
            [
                Some((crate::model::join_key(&vkey, ".zarray"), zarray, zarray_bytes)),
                zattrs.map(|z| {
                    let bytes = to_bytes(&z);
                    (crate::model::join_key(&vkey, ".zattrs"), z, bytes)
                }),
            ]
        };
        if vars.len() < 64 {
            vars.iter().map(one).collect()
        } else {
            crate::parallel::run(|| vars.par_iter().with_min_len(16).map(one).collect())
        }
    };
    for (key, v, bytes) in rendered.into_iter().flatten().flatten() {
        emit(key, v, bytes, &mut out);
    }
    for gid in (0..model.groups.len()).rev() {
        let g = &model.groups[gid];
        let gkey = model.group_key(gid);
        let zgroup = json!({"zarr_format": 2});
        let bytes = to_bytes(&zgroup);
        emit(crate::model::join_key(&gkey, ".zgroup"), zgroup, bytes, &mut out);
        let mut zattrs = Map::new();
        let mut types = Map::new();
        attrs_object(&g.atts, &mut types, &mut zattrs);
        if gid == 0 {
            zattrs.insert("_NCProperties".into(), Value::String(opts.nc_properties.clone()));
            types.insert("_NCProperties".into(), Value::String(">S1".into()));
        }
        if nczarr {
            let mut dims = Map::new();
            for &d in &g.dims {
                let dim = &model.dims[d];
                let v = if dim.unlimited { json!({"size": dim.len, "unlimited": 1}) } else { json!(dim.len) };
                dims.insert(dim.name.clone(), v);
            }
            let arrays: Vec<Value> = g.vars.iter().map(|v| Value::String(v.name.clone())).collect();
            let groups: Vec<Value> = g.children.iter().map(|&c| Value::String(model.groups[c].name.clone())).collect();
            zattrs.insert("_nczarr_group".into(), json!({"dimensions": dims, "arrays": arrays, "groups": groups}));
            types.insert("_nczarr_group".into(), "|J0".into());
            if gid == 0 {
                let mut sb = json!({"version": "2.0.0"});
                if opts.classic {
                    sb["format"] = json!("netCDF-4 classic model");
                }
                zattrs.insert("_nczarr_superblock".into(), sb);
                types.insert("_nczarr_superblock".into(), "|J0".into());
            }
            types.insert("_nczarr_attr".into(), "|J0".into());
            zattrs.insert("_nczarr_attr".into(), json!({"types": types}));
        }
        if nczarr || !zattrs.is_empty() {
            let zattrs = Value::Object(zattrs);
            let bytes = to_bytes(&zattrs);
            emit(crate::model::join_key(&gkey, ".zattrs"), zattrs, bytes, &mut out);
        }
    }
    if opts.consolidated {
        let v = json!({"metadata": consolidated, "zarr_consolidated_format": 1});
        out.push((".zmetadata".into(), to_bytes(&v)));
    }
    out
}

fn render_var(model: &Model, var: &Var, opts: &Options) -> (Value, Option<Value>) {
    let nczarr = opts.flavor == Flavor::NcZarr;
    let scalar = var.dimids.is_empty();
    let width = model.maxstrlen(var);
    let (shape, chunks): (Vec<u64>, Vec<u64>) =
        if scalar { if nczarr { (vec![1], vec![1]) } else { (vec![], vec![]) } } else { (model.var_shape(var), var.chunks.clone()) };
    let mut zarray = Map::new();
    zarray.insert("zarr_format".into(), json!(2));
    zarray.insert("shape".into(), json!(shape));
    zarray.insert("dtype".into(), Value::String(dtype::render(var.nctype, var.endian, width, opts.strict_char)));
    zarray.insert("chunks".into(), json!(chunks));
    let fill = if var.no_fill {
        Value::Null
    } else {
        match var.fill_value() {
            crate::nc::values::Values::Double(d) => f64_value(d[0]),
            other => attrs::render_fill(&other),
        }
    };
    zarray.insert("fill_value".into(), fill);
    zarray.insert("order".into(), Value::String(if var.stored.fortran_order { "F" } else { "C" }.into()));
    let elem = if var.nctype == NcType::String { width } else { var.nctype.size() };
    let codecs: Vec<Value> = var.filters.iter().map(|f| codec::to_zarr(f, elem)).collect();
    match codecs.split_last() {
        None => {
            zarray.insert("compressor".into(), Value::Null);
            zarray.insert("filters".into(), Value::Null);
        }
        Some((last, rest)) => {
            zarray.insert("compressor".into(), last.clone());
            zarray.insert("filters".into(), if rest.is_empty() { Value::Null } else { Value::Array(rest.to_vec()) });
        }
    }
    if var.stored.separator == '/' {
        zarray.insert("dimension_separator".into(), "/".into());
    }
    for (k, v) in &var.stored.extra_zarray {
        zarray.entry(k.clone()).or_insert_with(|| v.clone());
    }

    let mut zattrs = Map::new();
    let mut types = Map::new();
    attrs_object(&var.atts, &mut types, &mut zattrs);
    if opts.xarray {
        let dims: Vec<Value> = if scalar {
            if nczarr { vec![Value::String("_scalar_".into())] } else { vec![] }
        } else {
            var.dimids.iter().map(|&d| Value::String(model.dims[d].name.clone())).collect()
        };
        zattrs.insert("_ARRAY_DIMENSIONS".into(), Value::Array(dims));
    }
    if nczarr {
        let refs: Vec<Value> = var.dimids.iter().map(|&d| Value::String(model.dim_fqn(d))).collect();
        let mut meta = Map::new();
        meta.insert("dimension_references".into(), Value::Array(refs));
        if scalar {
            meta.insert("scalar".into(), json!(1));
        }
        meta.insert("storage".into(), "chunked".into());
        if var.nctype == NcType::Char && !opts.strict_char {
            meta.insert("type_alias".into(), "char".into());
        }
        zattrs.insert("_nczarr_array".into(), Value::Object(meta));
        types.insert("_nczarr_array".into(), "|J0".into());
        types.insert("_nczarr_attr".into(), "|J0".into());
        zattrs.insert("_nczarr_attr".into(), json!({"types": types}));
    }
    let zattrs = if nczarr || !zattrs.is_empty() { Some(Value::Object(zattrs)) } else { None };
    (Value::Object(zarray), zattrs)
}

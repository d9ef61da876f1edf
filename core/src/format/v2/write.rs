//! Writing: `Model` → the metadata objects of one layout (G2a NCZarr with corrections C1–C12,
//! or pure Zarr v2), in crash-safe order: arrays, then groups from the deepest up, the root
//! last, then `.zmetadata`.

use crate::codec;
use crate::format::attrs;
use crate::format::dtype;
use crate::json::{ObjectBytes, f64_value, to_bytes};
use crate::model::{Model, Var};
use crate::nc::types::NcType;
use crate::url::Flavor;
use serde_json::{Map, Value, json};

use crate::format::RenderOptions as Options;

/// A metadata object: its key and its bytes.
type Object = (String, Vec<u8>);

/// A node's own attributes into its `.zattrs`, their types into `types` (`_nczarr_attr`).
/// Returns the names of the char attributes written as Latin-1 (`attrs::latin1_names`).
fn attrs_object<'a>(atts: &'a [crate::model::Att], types: &mut ObjectBytes<'a>, out: &mut ObjectBytes<'a>) -> Vec<&'a str> {
    for att in atts.iter().filter(|a| !a.synthetic) {
        out.value(att.name.as_str(), &attrs::render(att));
        types.value(att.name.as_str(), &dtype::render_attr_type(att.value.nctype()));
    }
    attrs::latin1_names(atts)
}

/// `_nczarr_attr`: the types of a node's attributes, itself included, and which char
/// attributes hold Latin-1 text standing for bytes that are not UTF-8.
fn nczarr_attr(mut types: ObjectBytes<'_>, latin1: &[&str], zattrs: &mut ObjectBytes<'_>) {
    types.value("_nczarr_attr", "|J0");
    let mut attr = ObjectBytes::default();
    attr.raw("types", types.finish());
    if !latin1.is_empty() {
        attr.value("latin1", &latin1);
    }
    zattrs.raw("_nczarr_attr", attr.finish());
}

pub fn render(model: &Model, opts: &Options) -> Vec<(String, Vec<u8>)> {
    let nczarr = opts.flavor == Flavor::NcZarr;
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    // `.zmetadata` holds every object's JSON as it is stored: its bytes, copied in.
    let mut consolidated = ObjectBytes::default();
    let mut emit = |key: String, bytes: Vec<u8>, out: &mut Vec<(String, Vec<u8>)>| {
        if opts.consolidated {
            consolidated.raw(key.clone(), bytes.clone());
        }
        out.push((key, bytes));
    };
    // Variables render on every core, in order.
    let vars: Vec<(usize, usize)> = (0..model.groups.len()).flat_map(|g| (0..model.groups[g].vars.len()).map(move |v| (g, v))).collect();
    let rendered: Vec<[Option<Object>; 2]> = {
        use rayon::prelude::*;
        let one = |&(gid, varid): &(usize, usize)| {
            let vkey = model.var_key(gid, varid);
            let (zarray, zattrs) = render_var(model, &model.groups[gid].vars[varid], opts);
            [Some((crate::model::join_key(&vkey, ".zarray"), zarray)), zattrs.map(|z| (crate::model::join_key(&vkey, ".zattrs"), z))]
        };
        if vars.len() < 64 {
            vars.iter().map(one).collect()
        } else {
            crate::parallel::run(|| vars.par_iter().with_min_len(16).map(one).collect())
        }
    };
    for (key, bytes) in rendered.into_iter().flatten().flatten() {
        emit(key, bytes, &mut out);
    }
    for gid in (0..model.groups.len()).rev() {
        let g = &model.groups[gid];
        let gkey = model.group_key(gid);
        emit(crate::model::join_key(&gkey, ".zgroup"), to_bytes(&json!({"zarr_format": 2})), &mut out);
        let mut zattrs = ObjectBytes::default();
        let mut types = ObjectBytes::default();
        let latin1 = attrs_object(&g.atts, &mut types, &mut zattrs);
        if gid == 0 {
            zattrs.value("_NCProperties", &opts.nc_properties);
            types.value("_NCProperties", ">S1");
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
            zattrs.value("_nczarr_group", &json!({"dimensions": dims, "arrays": arrays, "groups": groups}));
            types.value("_nczarr_group", "|J0");
            if gid == 0 {
                let mut sb = json!({"version": "2.0.0"});
                if opts.classic {
                    sb["format"] = json!("netCDF-4 classic model");
                }
                zattrs.value("_nczarr_superblock", &sb);
                types.value("_nczarr_superblock", "|J0");
            }
            nczarr_attr(types, &latin1, &mut zattrs);
        }
        if nczarr || !zattrs.is_empty() {
            emit(crate::model::join_key(&gkey, ".zattrs"), zattrs.finish(), &mut out);
        }
    }
    if opts.consolidated {
        let mut doc = ObjectBytes::default();
        doc.raw("metadata", consolidated.finish());
        doc.raw("zarr_consolidated_format", b"1".to_vec());
        out.push((".zmetadata".into(), doc.finish()));
    }
    out
}

/// A variable's `.zarray` and `.zattrs` (none in pure Zarr without attributes), written
/// straight to bytes (`ObjectBytes`).
fn render_var(model: &Model, var: &Var, opts: &Options) -> (Vec<u8>, Option<Vec<u8>>) {
    let nczarr = opts.flavor == Flavor::NcZarr;
    let scalar = var.dimids.is_empty();
    let width = model.maxstrlen(var);
    let (shape, chunks): (Vec<u64>, Vec<u64>) =
        if scalar { if nczarr { (vec![1], vec![1]) } else { (vec![], vec![]) } } else { (model.var_shape(var), var.chunks.clone()) };
    let mut zarray = ObjectBytes::default();
    zarray.raw("zarr_format", b"2".to_vec());
    zarray.value("shape", &shape);
    zarray.value("dtype", &dtype::render(var.nctype, var.endian, width, opts.strict_char));
    zarray.value("chunks", &chunks);
    let fill = if var.no_fill {
        Value::Null
    } else {
        match var.fill_value() {
            crate::nc::values::Values::Double(d) => f64_value(d[0]),
            other => attrs::render_fill(&other),
        }
    };
    zarray.value("fill_value", &fill);
    zarray.value("order", if var.stored.fortran_order { "F" } else { "C" });
    let elem = if var.nctype == NcType::String { width } else { var.nctype.size() };
    let codecs: Vec<Value> = var.filters.iter().map(|f| codec::to_zarr(f, elem)).collect();
    match codecs.split_last() {
        None => {
            zarray.raw("compressor", b"null".to_vec());
            zarray.raw("filters", b"null".to_vec());
        }
        Some((last, [])) => {
            zarray.value("compressor", last);
            zarray.raw("filters", b"null".to_vec());
        }
        Some((last, rest)) => {
            zarray.value("compressor", last);
            zarray.value("filters", rest);
        }
    }
    if var.stored.separator == '/' {
        zarray.value("dimension_separator", "/");
    }
    for (k, v) in &var.stored.extra_zarray {
        if !zarray.contains(k) {
            zarray.value(k.as_str(), v);
        }
    }

    let mut zattrs = ObjectBytes::default();
    let mut types = ObjectBytes::default();
    let latin1 = attrs_object(&var.atts, &mut types, &mut zattrs);
    if opts.xarray {
        let dims: Vec<&str> = if scalar {
            if nczarr { vec!["_scalar_"] } else { vec![] }
        } else {
            var.dimids.iter().map(|&d| model.dims[d].name.as_str()).collect()
        };
        zattrs.value("_ARRAY_DIMENSIONS", &dims);
    }
    if nczarr {
        let refs: Vec<String> = var.dimids.iter().map(|&d| model.dim_fqn(d)).collect();
        let mut meta = ObjectBytes::default();
        meta.value("dimension_references", &refs);
        if scalar {
            meta.raw("scalar", b"1".to_vec());
        }
        meta.value("storage", "chunked");
        if var.nctype == NcType::Char && !opts.strict_char {
            meta.value("type_alias", "char");
        }
        zattrs.raw("_nczarr_array", meta.finish());
        types.value("_nczarr_array", "|J0");
        nczarr_attr(types, &latin1, &mut zattrs);
    }
    let zattrs = if nczarr || !zattrs.is_empty() { Some(zattrs.finish()) } else { None };
    (zarray.finish(), zattrs)
}

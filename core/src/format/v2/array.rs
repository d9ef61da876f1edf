//! One v2 array's metadata (`.zarray`, `.zattrs`, NCZarr's array and attribute objects)
//! into a `Var`: element type, chunk grid, codecs, fill value and dimensions, in that order.

use super::nodes::{ArrayObjects, Source, obj, read_atts};
use crate::codec::{self, MAX_CHUNK_BYTES};
use crate::error::{Error, Kind, Result, err};
use crate::format::Layout;
use crate::format::attrs;
use crate::format::common::{pure_dims, quantize_of, referenced_dims, shape_of, string_list};
use crate::format::dtype::{self, Storage, Unreadable};
use crate::json;
use crate::model::{Att, ChunkCache, Endian, Model, Var};
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::trace;
use crate::url::Flavor;
use serde_json::{Map, Value};

pub(super) fn build_var(
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
    let Some(dt) = array_dtype(zarray, ameta, layout, &what)? else { return Ok(None) };
    let grid = array_grid(zarray, &dt, &what)?;
    let filters = array_filters(zarray, &dt, &what)?;
    let mut atts = read_atts(zattrs, types)?;
    let fill = array_fill(zarray, &dt, &atts, &what)?;
    let (dimids, chunks) = array_dims(model, gid, &what, ameta, zattrs, &grid, layout, flavor)?;
    if layout == Layout::Pure {
        pure_fill_attribute(&mut atts, zattrs, dt.nctype, fill.as_ref());
    }
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
        endian: dt.endian,
        locked: true,
        quantize,
        cache: ChunkCache { size: 0, nelems: 0, preemption: 0.0 },
        stored: crate::model::StoredArray {
            key: Some(vkey),
            separator: grid.separator,
            extra_zarray: extra_members(zarray),
            maxstrlen: match dt.storage {
                Storage::FixedBytes(n) => Some(n),
                _ => None,
            },
            fortran_order: grid.fortran_order,
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

/// The array's element type; `None`: one netCDF cannot represent (skipped with a warning).
fn array_dtype(
    zarray: &Map<String, Value>,
    ameta: Option<&Map<String, Value>>,
    layout: Layout,
    what: &str,
) -> Result<Option<dtype::DType>> {
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
    Ok(Some(dt))
}

/// An array's shape and chunk grid as `.zarray` states them.
struct Grid {
    shape: Vec<u64>,
    chunks: Vec<u64>,
    fortran_order: bool,
    separator: char,
}

/// Shape, chunks (no chunk above `MAX_CHUNK_BYTES`), order and dimension separator.
fn array_grid(zarray: &Map<String, Value>, dt: &dtype::DType, what: &str) -> Result<Grid> {
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
    let separator = match zarray.get("dimension_separator") {
        None | Some(Value::Null) => '.',
        Some(Value::String(s)) if s == "." => '.',
        Some(Value::String(s)) if s == "/" => '/',
        Some(other) => return err(Kind::NcZarr, format!("{what}: dimension_separator {other}")),
    };
    Ok(Grid { shape, chunks, fortran_order, separator })
}

/// `filters` then `compressor`, in the order they encode; object arrays need a vlen codec.
fn array_filters(zarray: &Map<String, Value>, dt: &dtype::DType, what: &str) -> Result<Vec<codec::Filter>> {
    let codec_of = |c: &Value| codec::from_zarr(c).map_err(|e| Error::new(Kind::NcZarr, format!("{what}: {}", e.context)));
    let mut filters = Vec::new();
    match zarray.get("filters") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            for f in list {
                filters.push(codec_of(f)?);
            }
        }
        Some(other) => return err(Kind::NcZarr, format!("{what}: filters {other}")),
    }
    match zarray.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => filters.push(codec_of(c)?),
    }
    if dt.storage == Storage::Object {
        let vlen = filters.iter().position(|f| {
            f.raw.as_ref().and_then(|r| r.get("id")).and_then(Value::as_str).is_some_and(|id| id == "vlen-utf8" || id == "vlen-bytes")
        });
        if vlen.is_none() {
            return err(Kind::NcZarr, format!("{what}: object dtype without a vlen codec"));
        }
    }
    Ok(filters)
}

/// The fill value `.zarray` states (`None`: no fill), with a NaN's payload from `_FillValue`.
fn array_fill(zarray: &Map<String, Value>, dt: &dtype::DType, atts: &[Att], what: &str) -> Result<Option<Values>> {
    let fill = attrs::parse_fill(zarray.get("fill_value").unwrap_or(&Value::Null), dt.nctype)
        .map_err(|e| Error::new(Kind::NcZarr, format!("{what}: {}", e.context)))?;
    // v2's fill_value has no spelling for a NaN payload: the `_FillValue` attribute's bits win
    // over its plain "NaN" (see `attrs::nan_bits_f32`).
    Ok(match (fill, atts.iter().find(|a| a.name == "_FillValue").map(|a| &a.value)) {
        (Some(Values::Float(f)), Some(Values::Float(a))) if f[0].is_nan() && a.len() == 1 && a[0].is_nan() => {
            Some(Values::Float(a.clone()))
        }
        (Some(Values::Double(f)), Some(Values::Double(a))) if f[0].is_nan() && a.len() == 1 && a[0].is_nan() => {
            Some(Values::Double(a.clone()))
        }
        (fill, _) => fill,
    })
}

/// The array's dimension ids and chunk sizes: NCZarr's references first, then xarray's
/// names, then anonymous dimensions; a scalar has neither.
#[allow(clippy::too_many_arguments)]
fn array_dims(
    model: &mut Model,
    gid: usize,
    what: &str,
    ameta: Option<&Map<String, Value>>,
    zattrs: Option<&Map<String, Value>>,
    grid: &Grid,
    layout: Layout,
    flavor: Option<Flavor>,
) -> Result<(Vec<usize>, Vec<u64>)> {
    let shape = &grid.shape;
    let scalar_marker = ameta
        .is_some_and(|m| m.contains_key("scalar") && layout == Layout::G2a || m.get("storage").and_then(Value::as_str) == Some("scalar"));
    let xarray_names = zattrs.and_then(|a| a.get("_ARRAY_DIMENSIONS"));
    let refs = string_list(ameta.and_then(|m| m.get("dimension_references").or_else(|| m.get("dimrefs"))), "dimension references")?;
    if scalar_marker || shape.is_empty() {
        if !shape.is_empty() && shape != &[1] {
            return err(Kind::NcZarr, format!("{what}: scalar with shape {shape:?}"));
        }
        return Ok((Vec::new(), Vec::new()));
    }
    if flavor != Some(Flavor::Zarr)
        && layout != Layout::Pure
        && let Some(refs) = refs
    {
        return Ok((referenced_dims(model, what, &refs, shape)?, grid.chunks.clone()));
    }
    if xarray_names.and_then(Value::as_array).is_some_and(|l| l == &[Value::String("_scalar_".into())]) && shape == &[1] {
        return Ok((Vec::new(), Vec::new()));
    }
    Ok((pure_dims(model, gid, what, shape, xarray_names)?, grid.chunks.clone()))
}

/// Pure Zarr: `_FillValue` in the variable's own type (untyped JSON cannot say it; CF requires
/// it), and one made from `fill_value` when the attributes have none.
fn pure_fill_attribute(atts: &mut Vec<Att>, zattrs: Option<&Map<String, Value>>, nctype: NcType, fill: Option<&Values>) {
    if let Some(a) = atts.iter_mut().find(|a| a.name == "_FillValue" && a.value.nctype() != nctype) {
        let raw = zattrs.and_then(|z| z.get("_FillValue")).cloned().unwrap_or(Value::Null);
        if let Ok((v, _)) = attrs::typed(&raw, nctype) {
            a.value = v;
            a.json = None;
        }
    }
    attrs::add_declared_fill(atts, fill);
}

/// `.zarray` members we do not interpret, kept to be written back unchanged.
fn extra_members(zarray: &Map<String, Value>) -> Map<String, Value> {
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
    extra
}

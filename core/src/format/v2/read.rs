//! Reading: every NCZarr generation and pure Zarr v2 → `Model`.
//!
//! The walk is breadth-first and iterative (no recursion proportional to nesting depth):
//! first every group and its dimensions, so dimension ids follow netcdf-c's traversal order and
//! any array may reference any group's dimension; then each group's arrays, fetched in one
//! `get_many` per group. Everything read is validated before the model is built: bad metadata
//! fails the open with NC_ENCZARR, bad names with NC_EBADNAME; arrays netCDF cannot represent
//! are skipped with a warning (D4).

use super::array::build_var;
use super::nodes::{ArrayObjects, Source, group_dims, member, obj, read_atts};
use crate::error::{Kind, Result, err};
use crate::format::Layout;
use crate::format::common::{Loaded, MAX_DEPTH, ROOT_KEYS, string_list};
use crate::json;
use crate::model::{Model, join_key};
use crate::nc::names;
use crate::trace;
use crate::url::Flavor;
use crate::zmap::{Key, Zmap};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Reads a Zarr v2 hierarchy whose root objects `format::open` fetched: `raw_root` holds
/// `ROOT_KEYS`' objects in that order. Phases: the consolidated document, the root objects,
/// the layout, then every group breadth first, then each group's arrays.
pub fn read(
    store: &dyn Zmap,
    flavor: Option<Flavor>,
    consolidated: Option<bool>,
    dataset_name: &str,
    raw_root: Vec<Option<Vec<u8>>>,
) -> Result<Loaded> {
    let has_zmetadata = raw_root[3].is_some();
    let mut src = Source { store, consolidated: consolidated_metadata(&raw_root[3], consolidated), stored: HashMap::new() };
    // A consolidated document is metadata enough: a store may hold `.zmetadata` and no
    // `.zgroup` of its own (the root group is then described by the document alone).
    if raw_root[..3].iter().all(Option::is_none) && src.consolidated.is_none() {
        return err(Kind::NotNetcdf, format!("{}: no Zarr metadata", store.describe()));
    }
    let mut root = parse_root(&mut src, &raw_root)?;
    let nczarr_obj = if src.consolidated.is_none() { root[4].take() } else { None };
    let layout = root_layout(flavor, &root, nczarr_obj.is_some())?;
    let zattrs = obj(&root[1]);
    let nc_properties = zattrs.and_then(|a| a.get("_NCProperties")).and_then(Value::as_str).map(str::to_string);
    let classic = layout == Layout::G2a
        && zattrs.and_then(|a| a.get("_nczarr_superblock")).and_then(|s| s.get("format")).and_then(Value::as_str)
            == Some("netCDF-4 classic model");
    let mut model = Model::new();
    if root[0].is_none() && root[2].is_some() {
        bare_array(&mut model, dataset_name, &root, flavor)?;
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
    let var_lists = read_groups(&mut src, &mut model, layout, (root[0].take(), root[1].take()))?;
    read_arrays(&mut src, &mut model, var_lists, layout, flavor)?;
    Ok(Loaded { model, layout, stored: src.stored, nc_properties, has_zmetadata, classic, zarr_format: 2 })
}

/// The `.zmetadata` document's `metadata`, unless the name said not to use it
/// (`consolidated=false`) or it is invalid (then per-node metadata is read, with a warning).
fn consolidated_metadata(raw: &Option<Vec<u8>>, consolidated: Option<bool>) -> Option<Map<String, Value>> {
    let bytes = raw.as_ref().filter(|_| consolidated != Some(false))?;
    match json::parse(bytes, ".zmetadata") {
        Ok(Value::Object(m))
            if json::int_param(m.get("zarr_consolidated_format")) == Some(1)
                && m.get("metadata").is_some_and(|x| x.as_object().is_some_and(|o| !o.is_empty())) =>
        {
            m.get("metadata").and_then(Value::as_object).cloned()
        }
        _ => {
            trace::warn(".zmetadata is invalid; reading per-node metadata");
            None
        }
    }
}

/// The first five root objects (`.zgroup`, `.zattrs`, `.zarray`, `.zmetadata`, `.nczarr`),
/// parsed from the bytes the first round trip fetched (or taken from the consolidated
/// document), without fetching them again.
fn parse_root(src: &mut Source<'_>, raw_root: &[Option<Vec<u8>>]) -> Result<Vec<Option<Value>>> {
    let mut parsed = Vec::with_capacity(5);
    for (key, bytes) in ROOT_KEYS.iter().zip(raw_root).take(5) {
        let value = match (&src.consolidated, bytes) {
            (Some(meta), _) if *key != ".nczarr" => meta.get(*key).cloned(),
            (_, Some(b)) => {
                let v = json::parse(b, key)?;
                src.stored.insert(key.to_string(), b.clone());
                Some(v)
            }
            (_, None) => None,
        };
        parsed.push(value);
    }
    for (v, k) in parsed.iter().zip(ROOT_KEYS).take(3) {
        Source::is_object(v, k)?;
    }
    Ok(parsed)
}

/// Which NCZarr generation (or pure Zarr) the root objects say the store is.
fn root_layout(flavor: Option<Flavor>, root: &[Option<Value>], has_nczarr_obj: bool) -> Result<Layout> {
    let (zgroup, zattrs) = (obj(&root[0]), obj(&root[1]));
    if let Some(fmt) = member(zgroup, &["zarr_format"])
        && (json::int_param(Some(fmt)) != Some(2) || !fmt.is_number())
    {
        return err(Kind::NcZarr, format!("unsupported zarr_format {fmt}"));
    }
    Ok(if flavor == Some(Flavor::Zarr) {
        Layout::Pure
    } else if zattrs.is_some_and(|a| a.contains_key("_nczarr_superblock")) {
        Layout::G2a
    } else if zgroup.is_some_and(|g| g.contains_key("_nczarr_superblock")) {
        Layout::G2l
    } else if zgroup.is_some_and(|g| g.contains_key("_NCZARR_SUPERBLOCK")) {
        Layout::G2u
    } else if has_nczarr_obj {
        Layout::G1
    } else {
        Layout::Pure
    })
}

/// A bare array store: one variable at the root, named after the dataset.
fn bare_array(model: &mut Model, dataset_name: &str, root: &[Option<Value>], flavor: Option<Flavor>) -> Result<()> {
    let name = std::path::Path::new(dataset_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .map(names::check_stored)
        .transpose()?
        .unwrap_or_else(|| "data".into());
    let objs = ArrayObjects { zarray: root[2].clone(), zattrs: root[1].clone(), ncz_array: None, ncz_attr: None };
    if let Some(var) = build_var(model, 0, name, String::new(), objs, Layout::Pure, flavor)? {
        model.groups[0].vars.push(var);
    }
    Ok(())
}

/// Phase 1: every group, its attributes and dimensions, breadth first (so dimension ids follow
/// netcdf-c's order). Returns each group's array names, by group id.
fn read_groups(
    src: &mut Source<'_>,
    model: &mut Model,
    layout: Layout,
    root_objs: (Option<Value>, Option<Value>),
) -> Result<Vec<Vec<String>>> {
    let mut var_lists: Vec<Vec<String>> = Vec::new(); // per group id, filled in BFS (= id) order
    let mut queue = std::collections::VecDeque::from([0usize]);
    let mut root_objs = Some(root_objs);
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
        let (vars, groups) = read_group(src, model, gid, layout, zgroup_v, zattrs_v)?;
        var_lists.push(vars);
        for name in groups {
            if model.name_in_use(gid, &name) {
                return err(Kind::NcZarr, format!("duplicate group {name}"));
            }
            let child = model.add_group(gid, name);
            model.groups[child].stored_key = Some(model.group_key(child));
            queue.push_back(child);
        }
    }
    Ok(var_lists)
}

/// One group's attributes and dimensions into `model`; its array and sub-group names, from
/// its NCZarr lists, else from what the store holds.
fn read_group(
    src: &mut Source<'_>,
    model: &mut Model,
    gid: usize,
    layout: Layout,
    zgroup_v: Option<Value>,
    zattrs_v: Option<Value>,
) -> Result<(Vec<String>, Vec<String>)> {
    let key = model.group_key(gid);
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
            let (lv, lg) = list_children(src, &key)?;
            (v.unwrap_or(lv), g.unwrap_or(lg))
        }
    };
    let vars = vars.iter().map(|v| names::check_stored(v)).collect::<Result<_>>()?;
    let groups = groups.iter().map(|g| names::check_stored(g)).collect::<Result<_>>()?;
    Ok((vars, groups))
}

/// Phase 2: each group's arrays, fetched in one batch per group.
fn read_arrays(src: &mut Source<'_>, model: &mut Model, var_lists: Vec<Vec<String>>, layout: Layout, flavor: Option<Flavor>) -> Result<()> {
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
            if let Some(var) = build_var(model, gid, name, vkey, ArrayObjects { zarray, zattrs, ncz_array, ncz_attr }, layout, flavor)? {
                model.groups[gid].vars.push(var);
            }
        }
    }
    Ok(())
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

//! Aggregation without C: masters of each convention (CFA-0.4, CFA-0.5, CF-1.12 with `uris`
//! and with `unique_values`) and their fragments built as datasets on memory stores, read back
//! through `aggregate::build`. Run one with `cargo test -p nczarr-core --test aggregate NAME`.

use nczarr_core::aggregate::{self, Opener};
use nczarr_core::dataset::Dataset;
use nczarr_core::engine::{Mem, MemType, Request};
use nczarr_core::error::{Kind, Result};
use nczarr_core::format::ZarrFormat;
use nczarr_core::nc::modes::{OpenFlags, VarRef};
use nczarr_core::nc::types::NcType;
use nczarr_core::nc::values::Values;
use nczarr_core::source::{CreateFormat, GroupId, NcFile, NcSink, NcSource};
use nczarr_core::url::OpenSpec;
use nczarr_core::zmap::memory::MemoryStore;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The aggregated field: `tas(time=4, x=6)`, value `10 * t + x`.
const SHAPE: [usize; 2] = [4, 6];

fn value(t: usize, x: usize) -> f32 {
    (10 * t + x) as f32
}

fn new_dataset(store: &MemoryStore) -> Dataset {
    Dataset::create_on(OpenSpec::in_memory("mem"), OpenFlags::from_bits(1), Box::new(store.clone()), ZarrFormat::V2).unwrap()
}

fn text(s: &str) -> Values {
    Values::Char(s.as_bytes().to_vec())
}

fn dim(ds: &mut Dataset, g: GroupId, name: &str, len: Option<usize>) {
    NcSink::def_dim(ds, g, name, len).unwrap()
}

fn att(ds: &mut Dataset, g: GroupId, v: Option<usize>, name: &str, values: Values) {
    NcSink::put_att(ds, g, v, name, values).unwrap()
}

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_ne_bytes()).collect()
}

/// A fragment file holding rows `rows` of the field as `name(time, x)`.
fn fragment(rows: std::ops::Range<usize>, name: &str) -> MemoryStore {
    let store = MemoryStore::new();
    let mut ds = new_dataset(&store);
    let root = NcSink::root(&ds);
    dim(&mut ds, root, "time", Some(rows.len()));
    dim(&mut ds, root, "x", Some(SHAPE[1]));
    let v = NcSink::def_var(&mut ds, root, name, NcType::Float, &["time".into(), "x".into()]).unwrap();
    let data: Vec<f32> = rows.clone().flat_map(|t| (0..SHAPE[1]).map(move |x| value(t, x))).collect();
    ds.put_vara(root, v, &[0, 0], &[rows.len(), SHAPE[1]], &floats(&data)).unwrap();
    ds.close().unwrap();
    store
}

/// Files by name, each a dataset on a memory store, opened afresh at every open.
struct Files(Mutex<HashMap<String, MemoryStore>>);

impl Files {
    fn new(files: impl IntoIterator<Item = (String, MemoryStore)>) -> Files {
        Files(Mutex::new(files.into_iter().collect()))
    }

    fn store(&self, name: &str) -> Result<MemoryStore> {
        self.0.lock().unwrap().get(name).cloned().ok_or_else(|| nczarr_core::error::Error::new(Kind::Errno(2), name.to_string()))
    }
}

impl Opener for Files {
    fn open(&self, name: &str) -> Result<Box<dyn NcSource + Send>> {
        Ok(Box::new(Dataset::open_on(OpenSpec::in_memory(name), OpenFlags::from_bits(0), Box::new(self.store(name)?))?))
    }

    fn open_write(&self, name: &str) -> Result<Box<dyn NcFile>> {
        Ok(Box::new(Dataset::open_on(OpenSpec::in_memory(name), OpenFlags::from_bits(1), Box::new(self.store(name)?))?))
    }

    fn create(&self, name: &str, _format: CreateFormat) -> Result<Box<dyn NcFile>> {
        let store = MemoryStore::new();
        self.0.lock().unwrap().insert(name.to_string(), store.clone());
        Ok(Box::new(new_dataset(&store)))
    }
}

/// Two fragments of two rows each: `/data/a.nc` (rows 0-1) and `/data/b.nc` (rows 2-3).
fn two_fragments() -> Arc<Files> {
    Arc::new(Files::new([("/data/a.nc".to_string(), fragment(0..2, "tas")), ("/data/b.nc".to_string(), fragment(2..4, "tas"))]))
}

/// A master with `time`, `x`, a coordinate `time(time)` and the aggregated scalar `tas` with
/// `atts`; `extra` adds the convention's bookkeeping.
fn master(conventions: &str, atts: &[(&str, Values)], extra: impl FnOnce(&mut Dataset)) -> MemoryStore {
    let store = MemoryStore::new();
    let mut ds = new_dataset(&store);
    let root = NcSink::root(&ds);
    att(&mut ds, root, None, "Conventions", text(conventions));
    dim(&mut ds, root, "time", Some(SHAPE[0]));
    dim(&mut ds, root, "x", Some(SHAPE[1]));
    let time = NcSink::def_var(&mut ds, root, "time", NcType::Double, &["time".into()]).unwrap();
    att(&mut ds, root, Some(time), "units", text("days since 2000-01-01"));
    let tas = NcSink::def_var(&mut ds, root, "tas", NcType::Float, &[]).unwrap();
    att(&mut ds, root, Some(tas), "units", text("K"));
    for (name, v) in atts {
        att(&mut ds, root, Some(tas), name, v.clone());
    }
    extra(&mut ds);
    let days: Vec<u8> = [0.0f64, 1.0, 2.0, 3.0].iter().flat_map(|d| d.to_ne_bytes()).collect();
    ds.put_vara(root, time, &[0], &[SHAPE[0]], &days).unwrap();
    ds.close().unwrap();
    store
}

/// The master opened as an aggregated dataset: its convention and `tas` read whole.
fn read_aggregated(master: &MemoryStore, files: Arc<Files>) -> Result<(String, Dataset, Vec<f32>)> {
    read_aggregated_named(master, "/data/m.nca", files)
}

fn read_aggregated_named(master: &MemoryStore, name: &str, files: Arc<Files>) -> Result<(String, Dataset, Vec<f32>)> {
    let mut source = Dataset::open_on(OpenSpec::in_memory(name), OpenFlags::from_bits(0), Box::new(master.clone()))?;
    let version = aggregate::convention_of(&source).expect("a master");
    let mut ds = aggregate::build(&mut source, name, &version, files)?.read_only(OpenFlags::from_bits(0))?;
    let v = ds.var_named(0, "tas")?;
    let req = Request { start: Some(&[0, 0]), count: Some(&SHAPE), stride: None, imap: None };
    let sel = ds.select(0, VarRef::Var(v), &req, false)?;
    let mut bytes = vec![0u8; SHAPE[0] * SHAPE[1] * 4];
    ds.read(0, VarRef::Var(v), &sel, Mem::Bytes(&mut bytes, MemType::Num(NcType::Float)))?;
    Ok((version, ds, bytes.chunks(4).map(|b| f32::from_ne_bytes(b.try_into().unwrap())).collect()))
}

fn the_field() -> Vec<f32> {
    (0..SHAPE[0]).flat_map(|t| (0..SHAPE[1]).map(move |x| value(t, x))).collect()
}

/// What every convention's logical dataset shares: `tas(time, x)` with its own attributes and
/// none of the bookkeeping, the coordinate copied, the CFA word gone from `Conventions`.
fn check_logical(ds: &Dataset, conventions: &str) {
    let tas = ds.var_named(0, "tas").unwrap();
    let info = NcSource::var(ds, GroupId(0), tas).unwrap();
    assert_eq!((info.dims, info.shape), (vec!["time".to_string(), "x".to_string()], SHAPE.to_vec()));
    let names = NcSource::att_names(ds, GroupId(0), Some(tas)).unwrap();
    assert_eq!(names, ["units"], "only the variable's own attributes");
    assert_eq!(ds.text_att(GroupId(0), None, "Conventions").as_deref(), Some(conventions));
    assert!(ds.var_named(0, "time").is_ok());
    assert_eq!(ds.group_count(), 1, "no bookkeeping groups");
    assert!(!ds.writable());
}

#[test]
fn cfa04_partition_matrix() {
    let partitions = r#"{"Partitions": [
        {"index": [0, 0], "location": [[0, 1], [0, 5]], "subarray": {"file": "/data/a.nc", "ncvar": "tas", "shape": [2, 6]}},
        {"index": [1, 0], "location": [[2, 3], [0, 5]], "subarray": {"file": "b.nc", "ncvar": "tas", "shape": [2, 6]}}]}"#;
    let m = master(
        "CF-1.7 CFA-0.4",
        &[("cf_role", text("cfa_variable")), ("cfa_dimensions", text("time x")), ("cfa_array", text(partitions))],
        |_| {},
    );
    let (version, ds, values) = read_aggregated(&m, two_fragments()).unwrap();
    assert_eq!(version, "CFA-0.4");
    assert_eq!(values, the_field());
    check_logical(&ds, "CF-1.7");
}

#[test]
fn cfa05_partition_group() {
    let m = master(
        "CF-1.7 CFA-0.5",
        &[("cf_role", text("cfa_variable")), ("cfa_dimensions", text("time x")), ("cfa_group", text("cfa_tas"))],
        |ds| {
            let g = NcSink::def_grp(ds, GroupId(0), "cfa_tas").unwrap();
            for (d, n) in [("pm_time", 2), ("ndimensions", 2), ("bounds", 2)] {
                dim(ds, g, d, Some(n));
            }
            let dims = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            let loc = NcSink::def_var(ds, g, "location", NcType::Int, &dims(&["pm_time", "ndimensions", "bounds"])).unwrap();
            let file = NcSink::def_var(ds, g, "file", NcType::String, &dims(&["pm_time"])).unwrap();
            let ncvar = NcSink::def_var(ds, g, "ncvar", NcType::String, &dims(&["pm_time"])).unwrap();
            let location: Vec<u8> = [0i32, 2, 0, 6, 2, 4, 0, 6].iter().flat_map(|i| i.to_ne_bytes()).collect();
            ds.put_vara(g, loc, &[0, 0, 0], &[2, 2, 2], &location).unwrap();
            ds.put_strings(g, file, &[0], &[2], &[Some("./a.nc".into()), Some("/data/b.nc".into())]).unwrap();
            ds.put_strings(g, ncvar, &[0], &[2], &[Some("tas".into()), Some("tas".into())]).unwrap();
        },
    );
    let (version, ds, values) = read_aggregated(&m, two_fragments()).unwrap();
    assert_eq!(version, "CFA-0.5");
    assert_eq!(values, the_field());
    check_logical(&ds, "CF-1.7");
}

/// CF-1.12's `map` (one row per dimension) for two fragments along `time`: [[2, 2], [6, _]].
fn cf_map(ds: &mut Dataset) {
    let root = GroupId(0);
    dim(ds, root, "j", Some(2));
    dim(ds, root, "i", Some(2));
    dim(ds, root, "f_time", Some(2));
    dim(ds, root, "f_x", Some(1));
    let map = NcSink::def_var(ds, root, "fragment_map", NcType::Int, &["j".into(), "i".into()]).unwrap();
    let sizes: Vec<u8> = [2i32, 2, 6, -2147483647].iter().flat_map(|i| i.to_ne_bytes()).collect();
    ds.put_vara(root, map, &[0, 0], &[2, 2], &sizes).unwrap();
}

#[test]
fn cf_uris() {
    let data = "map: fragment_map uris: fragment_uris identifiers: fragment_identifiers";
    let m = master("CF-1.12", &[("aggregated_dimensions", text("time x")), ("aggregated_data", text(data))], |ds| {
        cf_map(ds);
        let root = GroupId(0);
        let uris = NcSink::def_var(ds, root, "fragment_uris", NcType::String, &["f_time".into(), "f_x".into()]).unwrap();
        let ids = NcSink::def_var(ds, root, "fragment_identifiers", NcType::String, &[]).unwrap();
        ds.put_strings(root, uris, &[0, 0], &[2, 1], &[Some("file:///data/a.nc".into()), Some("b.nc".into())]).unwrap();
        ds.put_strings(root, ids, &[], &[], &[Some("tas".into())]).unwrap();
    });
    let (version, ds, values) = read_aggregated(&m, two_fragments()).unwrap();
    assert_eq!(version, "CF");
    assert_eq!(values, the_field());
    check_logical(&ds, "CF-1.12");
    for hidden in ["fragment_map", "fragment_uris", "fragment_identifiers"] {
        assert!(ds.var_named(0, hidden).is_err(), "{hidden} is bookkeeping");
    }
    assert!(ds.dim_id(0, "f_time").is_err(), "a dimension only bookkeeping uses goes too");
}

#[test]
fn cf_unique_values() {
    let data = "map: fragment_map unique_values: fragment_values";
    let m = master("CF-1.12", &[("aggregated_dimensions", text("time x")), ("aggregated_data", text(data))], |ds| {
        cf_map(ds);
        let root = GroupId(0);
        let values = NcSink::def_var(ds, root, "fragment_values", NcType::Float, &["f_time".into(), "f_x".into()]).unwrap();
        ds.put_vara(root, values, &[0, 0], &[2, 1], &floats(&[1.5, 2.5])).unwrap();
    });
    let (_, _, values) = read_aggregated(&m, Arc::new(Files::new([]))).unwrap();
    let expected: Vec<f32> = (0..24).map(|i| if i < 12 { 1.5 } else { 2.5 }).collect();
    assert_eq!(values, expected, "no file is opened for constant fragments");
}

#[test]
fn fragments_outside_the_array_and_missing_files_are_errors() {
    let partitions = r#"{"Partitions": [{"location": [[0, 9], [0, 5]], "subarray": {"file": "/data/a.nc", "ncvar": "tas"}}]}"#;
    let m = master(
        "CFA-0.4",
        &[("cf_role", text("cfa_variable")), ("cfa_dimensions", text("time x")), ("cfa_array", text(partitions))],
        |_| {},
    );
    let e = read_aggregated(&m, two_fragments()).err().expect("a fragment past the end");
    assert_eq!(e.kind, Kind::Invalid);
    let partitions = r#"{"Partitions": [{"location": [[0, 3], [0, 5]], "subarray": {"file": "/data/gone.nc", "ncvar": "tas"}}]}"#;
    let m = master(
        "CFA-0.4",
        &[("cf_role", text("cfa_variable")), ("cfa_dimensions", text("time x")), ("cfa_array", text(partitions))],
        |_| {},
    );
    let e = read_aggregated(&m, two_fragments()).err().expect("a missing fragment file fails the read");
    assert!(e.context.contains("/data/gone.nc"), "{e:?}");
}

/// Written, then read back: an aggregated dataset made through `aggregate::write` (each chunk a
/// fragment file, the master written at the store) reads equal through `aggregate::build`, in
/// each convention.
#[test]
fn written_and_read_back() {
    use nczarr_core::aggregate::place::Convention;
    use nczarr_core::aggregate::write::{CreateRequest, create};
    for (convention, version) in [(Convention::Cf, "CF"), (Convention::V05, "CFA-0.5"), (Convention::V04, "CFA-0.4")] {
        let files = Arc::new(Files::new([]));
        let name = "s3://bucket/run/x.nca";
        let request = CreateRequest { netcdf4: true, classic_model: false, offset64: false, data64: false, noclobber: false };
        let (mut ds, writer) = create(&format!("{name}#mode=cfa"), convention, request, files.clone()).unwrap();
        let root = GroupId(0);
        dim(&mut ds, root, "time", Some(SHAPE[0]));
        dim(&mut ds, root, "x", Some(SHAPE[1]));
        let v = NcSink::def_var(&mut ds, root, "tas", NcType::Float, &["time".into(), "x".into()]).unwrap();
        NcSink::def_var_chunking(&mut ds, root, v, &[2, 6]).unwrap();
        att(&mut ds, root, Some(v), "units", text("K"));
        ds.put_vara(root, v, &[0, 0], &SHAPE, &floats(&the_field())).unwrap();
        writer.store(&mut ds, 0).unwrap();
        ds.close().unwrap();
        writer.finish().unwrap();
        let master = files.store(&format!("{name}#mode=bytes")).unwrap();
        let (got_version, ds, values) = read_aggregated_named(&master, name, files.clone()).unwrap();
        assert_eq!(got_version, version);
        assert_eq!(values, the_field(), "{version}");
        let tas = ds.var_named(0, "tas").unwrap();
        assert_eq!(ds.text_att(root, Some(tas), "units").as_deref(), Some("K"));
    }
}

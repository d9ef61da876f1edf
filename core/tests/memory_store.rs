//! The core without C or disk: datasets written to and read from the memory store through
//! `Dataset::create_on`/`open_on`, the metadata readers fed hostile objects, and the chunk
//! cache counted at the store (`MemoryStore::reads`). Run one with `cargo test --release -p nczarr-core --test memory_store NAME`.

use nczarr_core::dataset::Dataset;
use nczarr_core::engine::{Mem, MemType, Request};
use nczarr_core::error::{Kind, Result};
use nczarr_core::format::ZarrFormat;
use nczarr_core::model::DimId;
use nczarr_core::nc::modes::{OpenFlags, Storage, VarRef};
use nczarr_core::nc::types::NcType;
use nczarr_core::nc::values::Values;
use nczarr_core::url::OpenSpec;
use nczarr_core::zmap::memory::MemoryStore;
use nczarr_core::zmap::{Key, Zmap};

const NC_WRITE: i32 = 1;

/// A dataset of a 4×6 float field `t(time, x)` (time unlimited), chunks 2×3, zlib, an
/// attribute, all values written; returns the values.
fn write_field(store: &MemoryStore, format: ZarrFormat) -> Vec<f32> {
    let spec = OpenSpec::in_memory("mem");
    let mut ds = Dataset::create_on(spec, OpenFlags::from_bits(NC_WRITE), Box::new(store.clone()), format).unwrap();
    let time = ds.def_dim(0, b"time", 0).unwrap();
    let x = ds.def_dim(0, b"x", 6).unwrap();
    let v = ds.def_var(0, b"t", NcType::Float, &[DimId(time), DimId(x)]).unwrap();
    ds.def_var_chunking(0, VarRef::Var(v), Storage::Chunked, Some(vec![2, 3])).unwrap();
    ds.def_var_deflate(0, VarRef::Var(v), true, true, 4).unwrap();
    ds.put_att(0, VarRef::Var(v), b"units", NcType::Char, Values::Char(b"K".to_vec())).unwrap();
    ds.enddef().unwrap();
    let values: Vec<f32> = (0..24).map(|i| 270.0 + i as f32 * 0.5).collect();
    let mut bytes: Vec<u8> = values.iter().flat_map(|f| f.to_ne_bytes()).collect();
    write(&mut ds, v, &[0, 0], &[4, 6], &mut bytes).unwrap();
    ds.close().unwrap();
    values
}

fn request<'a>(start: &'a [usize], count: &'a [usize]) -> Request<'a> {
    Request { start: Some(start), count: Some(count), stride: None, imap: None }
}

fn write(ds: &mut Dataset, v: usize, start: &[usize], count: &[usize], bytes: &mut [u8]) -> Result<()> {
    let sel = ds.select(0, VarRef::Var(v), &request(start, count), true)?;
    ds.write(0, VarRef::Var(v), &sel, Mem::Bytes(bytes, MemType::Num(NcType::Float)))
}

fn read(ds: &mut Dataset, v: usize, start: &[usize], count: &[usize]) -> Result<Vec<f32>> {
    let sel = ds.select(0, VarRef::Var(v), &request(start, count), false)?;
    let mut bytes = vec![0u8; count.iter().product::<usize>() * 4];
    ds.read(0, VarRef::Var(v), &sel, Mem::Bytes(&mut bytes, MemType::Num(NcType::Float)))?;
    Ok(bytes.chunks(4).map(|b| f32::from_ne_bytes(b.try_into().unwrap())).collect())
}

fn open(store: impl Zmap + 'static) -> Result<Dataset> {
    Dataset::open_on(OpenSpec::in_memory("mem"), OpenFlags::from_bits(0), Box::new(store))
}

#[test]
fn v2_dataset_round_trips_and_stores_its_layout() {
    let store = MemoryStore::new();
    let values = write_field(&store, ZarrFormat::V2);
    let keys = store.keys();
    for k in [".zgroup", ".zattrs", "t/.zarray", "t/.zattrs", "t/0.0", "t/1.1"] {
        assert!(keys.iter().any(|s| s == k), "{k} missing from {keys:?}");
    }
    assert_eq!(keys.iter().filter(|k| k.starts_with("t/") && !k.contains(".z")).count(), 4, "2×2 chunks");
    let mut ds = open(store).unwrap();
    assert_eq!(read(&mut ds, 0, &[0, 0], &[4, 6]).unwrap(), values);
    assert_eq!(read(&mut ds, 0, &[1, 2], &[2, 3]).unwrap(), [8, 9, 10, 14, 15, 16].map(|i| values[i]));
    assert_eq!(ds.get_att(0, VarRef::Var(0), "units").unwrap().value, Values::Char(b"K".to_vec()));
}

#[test]
fn v3_dataset_round_trips() {
    let store = MemoryStore::new();
    let values = write_field(&store, ZarrFormat::V3);
    assert!(store.keys().iter().any(|k| k == "t/zarr.json"), "{:?}", store.keys());
    let mut ds = open(store).unwrap();
    assert_eq!(read(&mut ds, 0, &[0, 0], &[4, 6]).unwrap(), values);
}

#[test]
fn hostile_metadata_is_a_clean_error() {
    let cases: [(&str, &[u8]); 5] = [
        ("t/.zarray", b"{"),
        ("t/.zarray", b"[]"),
        ("t/.zarray", br#"{"zarr_format":2,"shape":[4,6],"chunks":[0,3],"dtype":"<f4","compressor":null,"fill_value":null,"order":"C","filters":null}"#),
        ("t/.zarray", br#"{"zarr_format":2,"shape":[4],"chunks":[2,3],"dtype":"<f4","compressor":null,"fill_value":null,"order":"C","filters":null}"#),
        (".zgroup", b"\xff\xfe"),
    ];
    for (key, bytes) in cases {
        let store = MemoryStore::new();
        write_field(&store, ZarrFormat::V2);
        store.put(&Key::new(key).unwrap(), bytes).unwrap();
        let outcome = open(store.clone()).and_then(|mut ds| read(&mut ds, 0, &[0, 0], &[4, 6]));
        let e = outcome.expect_err(&format!("{key} = {:?} was accepted", String::from_utf8_lossy(bytes)));
        assert!(matches!(e.kind, Kind::NcZarr | Kind::NotNetcdf), "{key}: {e:?}");
    }
}

#[test]
fn truncated_chunk_is_nc_enczarr_or_a_filter_error() {
    let store = MemoryStore::new();
    write_field(&store, ZarrFormat::V2);
    let key = Key::new("t/0.1").unwrap();
    let chunk = store.get(&key).unwrap().unwrap();
    store.put(&key, &chunk[..chunk.len() / 2]).unwrap();
    let mut ds = open(store).unwrap();
    let e = read(&mut ds, 0, &[0, 0], &[4, 6]).unwrap_err();
    assert!(matches!(e.kind, Kind::NcZarr | Kind::Filter), "{e:?}");
    // The chunks that are whole still read.
    assert_eq!(read(&mut ds, 0, &[0, 0], &[2, 3]).unwrap().len(), 6);
}

#[test]
fn chunk_cache_serves_repeated_reads() {
    let store = MemoryStore::new();
    let values = write_field(&store, ZarrFormat::V2);
    let mut ds = open(store.clone()).unwrap();
    // Opened: the metadata is read; from here on every read of the store is a chunk's.
    let at_open = store.reads();
    assert_eq!(read(&mut ds, 0, &[0, 0], &[4, 6]).unwrap(), values);
    assert_eq!(store.reads() - at_open, 4, "each of the 4 chunks is read once");
    // Compressed chunks stay decoded in the cache: reading them again costs the store nothing.
    assert_eq!(read(&mut ds, 0, &[0, 0], &[4, 6]).unwrap(), values);
    assert_eq!(read(&mut ds, 0, &[3, 5], &[1, 1]).unwrap(), [values[23]]);
    assert_eq!(store.reads() - at_open, 4);
}

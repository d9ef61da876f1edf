//! The behaviour every driver must share, one check per `Zmap` method; each driver's tests
//! call `run` (S3's against a live server). A method a driver leaves at its default is still
//! checked here, so a driver that later overrides it is held to the same answers.

use super::ByteRange::{At, Suffix};
use super::{Key, Limit, Zmap};
use crate::error::Kind;

fn key(k: &str) -> Key {
    Key::new(k).unwrap()
}

fn got(store: &dyn Zmap, k: &str) -> Option<Vec<u8>> {
    store.get(&key(k)).unwrap()
}

pub(crate) fn run(store: &dyn Zmap) {
    whole_objects(store);
    batches(store);
    direct_reads(store);
    ranges(store);
    listing_and_moving(store);
    hooks(store);
    // Bad keys cannot reach a driver: `Key::new` refuses them (key.rs tests).
    // The root metadata stays: a zip archive without any is not a dataset.
    store.delete_prefix(&key("m")).unwrap();
    assert_eq!(store.list_dir(&Key::root()).unwrap(), [".zgroup"]);
    store.flush().unwrap();
}

/// get, put, put_parts: absent is `None`, a put replaces the whole object.
fn whole_objects(store: &dyn Zmap) {
    assert_eq!(got(store, "a/.zarray"), None);
    store.put(&key("a/.zarray"), b"{}").unwrap();
    store.put(&key("a/b/0.0"), b"xyz").unwrap();
    store.put(&key(".zgroup"), b"{\"zarr_format\":2}").unwrap();
    assert_eq!(got(store, "a/.zarray").as_deref(), Some(&b"{}"[..]));
    store.put(&key("a/.zarray"), b"[1]").unwrap();
    assert_eq!(got(store, "a/.zarray").as_deref(), Some(&b"[1]"[..]));
    // Replacing an object with a shorter one leaves none of the old bytes.
    store.put(&key("a/r"), b"0123456789").unwrap();
    store.put(&key("a/r"), b"abc").unwrap();
    assert_eq!(got(store, "a/r").as_deref(), Some(&b"abc"[..]));
    // Gathered parts are stored in order, as one object; an empty object is not an absent one.
    store.put_parts(&key("a/p"), &[b"ab", b"", b"cde"]).unwrap();
    assert_eq!(got(store, "a/p").as_deref(), Some(&b"abcde"[..]));
    store.put_parts(&key("a/p"), &[b"z"]).unwrap();
    assert_eq!(got(store, "a/p").as_deref(), Some(&b"z"[..]));
    store.put(&key("a/empty"), b"").unwrap();
    assert_eq!(got(store, "a/empty").as_deref(), Some(&b""[..]));
}

/// get_many, get_many_limited, put_many, put_chunks: answers in the order asked; every
/// object stored once `flush` (or any read) returns; a limit refuses larger objects.
fn batches(store: &dyn Zmap) {
    let many = store.get_many(&Key::all(&["a/b/0.0", "nope", "a/p"]).unwrap()).unwrap();
    assert_eq!(many, vec![Some(b"xyz".to_vec()), None, Some(b"z".to_vec())]);
    store.put_many(vec![(key("m/1"), b"one".to_vec()), (key("m/2"), b"two".to_vec()), (key("m/1"), b"uno".to_vec())]).unwrap();
    assert_eq!(got(store, "m/1").as_deref(), Some(&b"uno"[..]), "a later put of the same key wins");
    assert_eq!(got(store, "m/2").as_deref(), Some(&b"two"[..]));
    let chunks: Vec<_> = (0..40).map(|i| (key(&format!("m/c/{i}")), vec![i as u8; 100 + i])).collect();
    store.put_chunks(chunks).unwrap();
    store.flush().unwrap();
    for i in [0usize, 17, 39] {
        assert_eq!(got(store, &format!("m/c/{i}")), Some(vec![i as u8; 100 + i]));
    }
    let limit = Limit { bytes: 120, kind: Kind::Filter };
    let under = store.get_many_limited(&Key::all(&["m/c/3", "m/c/none"]).unwrap(), limit).unwrap();
    assert_eq!(under, vec![Some(vec![3u8; 103]), None]);
    let over = store.get_many_limited(&Key::all(&["m/c/3", "m/c/39"]).unwrap(), limit).unwrap_err();
    assert_eq!(over.kind, Kind::Filter, "an object above the limit is the limit's error");
    assert_eq!(store.get_many(&[]).unwrap(), Vec::<Option<Vec<u8>>>::new());
    store.put_many(Vec::new()).unwrap();
    store.put_chunks(Vec::new()).unwrap();
}

/// read_into, read_many_into, read_scatter: exact sizes straight into the caller's memory;
/// absent is `false` with the memory untouched; any other size is NC_ENCZARR.
fn direct_reads(store: &dyn Zmap) {
    store.put(&key("a/s"), b"0123456789").unwrap();
    let mut ten = [0u8; 10];
    assert!(store.read_into(&key("a/s"), &mut ten).unwrap());
    assert_eq!(&ten, b"0123456789");
    let mut nine = [7u8; 9];
    assert_eq!(store.read_into(&key("a/s"), &mut nine).unwrap_err().kind, Kind::NcZarr);
    assert!(!store.read_into(&key("a/none"), &mut nine).unwrap());
    assert_eq!(nine, [7u8; 9], "an absent object leaves the memory untouched");
    let (mut x, mut y, mut z) = ([0u8; 3], [9u8; 4], [0u8; 1]);
    let found = store.read_many_into(&Key::all(&["a/b/0.0", "a/none", "a/p"]).unwrap(), vec![&mut x[..], &mut y[..], &mut z[..]]).unwrap();
    assert_eq!(found, vec![true, false, true]);
    assert_eq!((&x, &y, &z), (b"xyz", &[9u8; 4], b"z"));
    let mut short = [0u8; 2];
    assert_eq!(store.read_many_into(&[key("a/b/0.0")], vec![&mut short[..]]).unwrap_err().kind, Kind::NcZarr);
    let (mut x, mut y) = ([0u8; 3], [0u8; 7]);
    assert!(store.read_scatter(&key("a/s"), &mut [&mut x[..], &mut y[..]]).unwrap());
    assert_eq!((&x[..], &y[..]), (&b"012"[..], &b"3456789"[..]));
    assert_eq!(store.read_scatter(&key("a/s"), &mut [&mut x[..]]).unwrap_err().kind, Kind::NcZarr);
    assert!(!store.read_scatter(&key("a/none"), &mut [&mut x[..]]).unwrap());
}

/// get_ranges (shards): spans, suffixes, absent objects, ranges past the end, expected sizes.
fn ranges(store: &dyn Zmap) {
    let at = |offset: u64, len: usize| At { offset, len };
    let got = store.get_ranges(&key("a/s"), &[at(2, 3), at(9, 1), at(0, 0), Suffix(4)], None).unwrap().unwrap();
    assert_eq!(got.parts, vec![b"234".to_vec(), b"9".to_vec(), Vec::new(), b"6789".to_vec()]);
    assert_eq!(got.size, 10);
    assert!(store.get_ranges(&key("a/s"), &[at(1, 2)], Some(10)).unwrap().is_some());
    assert_eq!(store.get_ranges(&key("a/s"), &[at(1, 2)], Some(11)).unwrap_err().kind, Kind::NcZarr);
    assert_eq!(store.get_ranges(&key("a/none"), &[at(0, 1)], None).unwrap(), None);
    assert_eq!(store.get_ranges(&key("a/none"), &[Suffix(4)], Some(4)).unwrap(), None);
    assert_eq!(store.get_ranges(&key("a/s"), &[at(8, 5)], None).unwrap_err().kind, Kind::NcZarr);
    assert_eq!(store.get_ranges(&key("a/s"), &[Suffix(11)], None).unwrap_err().kind, Kind::NcZarr);
}

/// list_dir, delete_prefix, copy_prefix, rename_prefix: direct children only, objects and sub-prefixes
/// alike; a prefix and everything under it go together.
fn listing_and_moving(store: &dyn Zmap) {
    let mut root = store.list_dir(&Key::root()).unwrap();
    root.sort();
    assert_eq!(root, [".zgroup", "a", "m"]);
    let mut a = store.list_dir(&key("a")).unwrap();
    a.sort();
    assert_eq!(a, [".zarray", "b", "empty", "p", "r", "s"]);
    assert_eq!(store.list_dir(&key("nowhere")).unwrap(), Vec::<String>::new());
    store.delete_prefix(&key("a/s")).unwrap();
    assert_eq!(got(store, "a/s"), None);
    store.delete_prefix(&key("nowhere")).unwrap();
    // A copy leaves the source whole and replaces what the target held.
    store.put(&key("c/stale"), b"old").unwrap();
    store.copy_prefix(&key("a"), &key("c")).unwrap();
    assert_eq!(got(store, "c/stale"), None, "the copy replaces the target");
    assert_eq!(got(store, "c/b/0.0").as_deref(), Some(&b"xyz"[..]));
    assert_eq!(got(store, "a/b/0.0").as_deref(), Some(&b"xyz"[..]), "the source stays");
    store.put(&key("c/b/0.0"), b"new").unwrap();
    assert_eq!(got(store, "a/b/0.0").as_deref(), Some(&b"xyz"[..]), "a write to the copy leaves the source");
    store.copy_prefix(&key("nowhere"), &key("n2")).unwrap();
    assert_eq!(store.list_dir(&key("n2")).unwrap(), Vec::<String>::new());
    store.rename_prefix(&key("a"), &key("c")).unwrap();
    assert_eq!(got(store, "a/.zarray"), None);
    assert_eq!(store.list_dir(&key("a")).unwrap(), Vec::<String>::new());
    assert_eq!(got(store, "c/b/0.0").as_deref(), Some(&b"xyz"[..]));
    assert_eq!(got(store, "c/.zarray").as_deref(), Some(&b"[1]"[..]));
    store.delete_prefix(&key("c")).unwrap();
    assert_eq!(got(store, "c/b/0.0"), None);
    assert_eq!(got(store, ".zgroup").as_deref(), Some(&br#"{"zarr_format":2}"#[..]), "other prefixes stay");
}

/// flush, describe, caps: what the engine asks of any store.
fn hooks(store: &dyn Zmap) {
    store.flush().unwrap();
    store.flush().unwrap();
    assert!(!store.describe().is_empty(), "messages name the store");
    let caps = store.caps();
    assert!(caps.batch_size >= 1, "a batch holds at least one object");
}

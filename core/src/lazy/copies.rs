//! Local netCDF files a real netcdf-c opened read-only for this program (the preload library
//! forwards them): when a reference set is being written, a put whose values no read of ours
//! returned may have come from one of them. The same region of the same variable is read again
//! here, lazily (our reader knows where its chunks are); if it covers whole chunks, the read
//! notes their origin (`engine::origins`) and the put becomes references when the values match.

use crate::dataset::Dataset;
use crate::engine::{Mem, MemType, Request, Selection};
use crate::nc::modes::{OpenFlags, VarRef};
use std::path::PathBuf;
use std::sync::Mutex;

/// The files a real library has open read-only, most recent last, each scanned on first use.
struct Opened {
    ncid: i32,
    path: PathBuf,
    /// `None`: not scanned yet; `Some(None)`: the scanner refused it.
    scanned: Option<Option<Box<Dataset>>>,
}

static OPENED: Mutex<Vec<Opened>> = Mutex::new(Vec::new());

/// Files looked at per put (the most recently opened).
const MOST_LOOKED_AT: usize = 8;

/// A real library opened the local file `path` read-only as `ncid`.
pub fn real_opened(ncid: i32, path: PathBuf) {
    crate::engine::origins::set_reread(reread);
    if let Ok(mut opened) = OPENED.lock() {
        opened.retain(|o| o.ncid != ncid);
        // Later reads may run in another working directory.
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        opened.push(Opened { ncid, path, scanned: None });
    }
}

/// The real library closed `ncid`.
pub fn real_closed(ncid: i32) {
    if let Ok(mut opened) = OPENED.lock() {
        opened.retain(|o| o.ncid != ncid);
    }
}

fn reread(var_key: &str, sel: &Selection, mem: MemType, values: &[u8]) {
    if !crate::engine::origins::wanted() || sel.stride.iter().any(|&s| s != 1) {
        return;
    }
    let Ok(mut opened) = OPENED.lock() else { return };
    let n = opened.len();
    for o in opened.iter_mut().skip(n.saturating_sub(MOST_LOOKED_AT)).rev() {
        let scanned = o.scanned.get_or_insert_with(|| match super::open_local(&o.path, OpenFlags::from_bits(0)) {
            Ok(super::Lazy::Open(ds)) => Some(ds),
            _ => None,
        });
        let Some(ds) = scanned else { continue };
        if read_same(ds, var_key, sel, mem).is_some_and(|read| read == values) {
            return;
        }
    }
}

/// Reads the selection of the variable `var_key` of `ds` (which notes its origin).
fn read_same(ds: &mut Dataset, var_key: &str, sel: &Selection, mem: MemType) -> Option<Vec<u8>> {
    let (gid, varid) = ds.var_by_key(var_key)?;
    let start: Vec<usize> = sel.start.iter().map(|&s| usize::try_from(s).ok()).collect::<Option<_>>()?;
    let count: Vec<usize> = sel.count.iter().map(|&c| usize::try_from(c).ok()).collect::<Option<_>>()?;
    let req = Request { start: Some(&start), count: Some(&count), stride: None, imap: None };
    let here = ds.select(gid, VarRef::Var(varid), &req, false).ok()?;
    let size = mem.size();
    let mut values = vec![0u8; usize::try_from(here.nelems()).ok()?.checked_mul(size)?];
    ds.read(gid, VarRef::Var(varid), &here, Mem::Bytes(&mut values, mem)).ok()?;
    Some(values)
}

//! Reading fragments: each fragment file is opened through the `Opener` the caller gave (the C
//! crate's opens netCDF-3, netCDF-4 and NCZarr files, local or on S3) and read as an
//! `NcSource`, a fragment's own packing undone (CF-1.12 §2.8).

use super::Opener;
use super::fragment_files::fragment_error;
use crate::error::{Error, Kind, Result};
use crate::nc::types::NcType;
use crate::nc::values::Values;
use crate::source::{GroupId, NcSource};
use crate::zmap::cfa::{Fragment, FragmentReader, Packing};
use std::sync::Arc;

/// Fragments read through an `Opener`.
pub(super) struct SourceReader {
    pub opener: Arc<dyn Opener>,
}

impl FragmentReader for SourceReader {
    fn read(&self, f: &Fragment, xtype: NcType, fill: &[u8], start: &[usize], count: &[usize], out: &mut [u8]) -> Result<()> {
        let fail = |e: Error, what: &str| fragment_error(&f.file, e, what);
        let mut file = self.opener.open(&f.file).map_err(|e| fail(e, "cannot open"))?;
        read_open(file.as_mut(), f, xtype, fill, start, count, out).map_err(|(e, what)| fail(e, &what))
    }
}

fn read_open(
    file: &mut dyn NcSource,
    f: &Fragment,
    xtype: NcType,
    fill: &[u8],
    start: &[usize],
    count: &[usize],
    out: &mut [u8],
) -> std::result::Result<(), (Error, String)> {
    let root = file.root();
    let varid = match file.var_id(root, &f.ncvar) {
        Ok(Some(v)) => v,
        Ok(None) => return Err((Error::new(Kind::NotVar, f.ncvar.clone()), format!("no variable {}", f.ncvar))),
        Err(e) => return Err((e, format!("no variable {}", f.ncvar))),
    };
    let lens = file.var(root, varid).map_err(|e| (e, format!("shape of {}", f.ncvar)))?.shape;
    // A fragment may leave out dimensions of size one (CF aggregation allows it).
    let kept: Vec<usize> = (0..f.shape.len()).filter(|&d| lens.len() == f.shape.len() || f.shape[d] != 1).collect();
    let expected: Vec<usize> = kept.iter().map(|&d| f.shape[d]).collect();
    if lens != expected {
        let why = format!("variable {} has shape {lens:?}, the master says {:?}", f.ncvar, f.shape);
        return Err((Error::new(Kind::Edge, why.clone()), why));
    }
    let start: Vec<usize> = kept.iter().map(|&d| start[d]).collect();
    let count: Vec<usize> = kept.iter().map(|&d| count[d]).collect();
    if let Some(packing) = packing_of(file, root, varid) {
        let cells: usize = count.iter().product();
        let mut raw = vec![0u8; cells * 8];
        file.get_vara(root, varid, NcType::Double, &start, &count, &mut raw).map_err(|e| (e, format!("reading {}", f.ncvar)))?;
        let raw: Vec<f64> = raw.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().unwrap_or([0; 8]))).collect();
        return packing.unpack(&raw, xtype, fill, out).map_err(|e| (e, format!("unpacking {}", f.ncvar)));
    }
    file.get_vara(root, varid, xtype, &start, &count, out).map_err(|e| (e, format!("reading {}", f.ncvar)))
}

/// The fragment variable's own packing, if it has `scale_factor` or `add_offset`.
fn packing_of(file: &dyn NcSource, g: GroupId, v: usize) -> Option<Packing> {
    let vtype = file.var(g, v).ok()?.xtype;
    let first = |name: &str| numeric_att(file, g, v, name).and_then(|v| v.first().copied());
    let (scale, offset) = (first("scale_factor"), first("add_offset"));
    if scale.is_none() && offset.is_none() {
        return None;
    }
    let missing = numeric_att(file, g, v, "missing_value").unwrap_or_default();
    Packing::of(vtype, scale, offset, first("_FillValue"), &missing)
}

/// A numeric attribute's values as doubles; `None` when absent or not numeric.
fn numeric_att(file: &dyn NcSource, g: GroupId, v: usize, name: &str) -> Option<Vec<f64>> {
    let values = file.att(g, Some(v), name).ok()??;
    if !values.nctype().is_numeric() || values.is_empty() {
        return None;
    }
    match values.convert(NcType::Double) {
        Ok((Values::Double(d), _)) => Some(d),
        _ => None,
    }
}

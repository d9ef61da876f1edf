//! Names of netCDF files stored as one S3 object (S3netCDF4's job, beside NCZarr on S3).
//!
//! The rule (README, "netCDF files on S3"): an S3 name whose fragment says `nczarr`/`zarr`
//! (or `xarray`/`noxarray`) is Zarr, as before. `mode=bytes` (netcdf-c's spelling, with or
//! without `s3`) is always a netCDF object. Otherwise an open looks at what is there (an
//! object with netCDF magic bytes is a file, anything else is Zarr), and a create makes a
//! netCDF object when the key ends in `.nc`, `.nc4` or `.cdf`, else Zarr.

use super::s3::{self, S3Target};
use crate::error::Result;
use std::collections::BTreeMap;

/// A dataset name that is (or may be) a netCDF file stored as one S3 object.
#[derive(Debug, Clone)]
pub struct ObjectName {
    /// The name exactly as the caller gave it.
    pub original: String,
    /// Bucket and endpoint; `root` is the object's key.
    pub target: S3Target,
    pub params: BTreeMap<String, String>,
    /// The name alone decides it (`mode=bytes`, or a create with a netCDF extension): no
    /// probe, and no falling back to Zarr.
    pub certain: bool,
}

/// Key endings that make a create without a Zarr mode a netCDF object.
const NETCDF_EXTENSIONS: &[&str] = &[".nc", ".nc4", ".cdf"];

/// Mode words that choose Zarr.
const ZARR_WORDS: &[&str] = &["nczarr", "zarr", "xarray", "noxarray", "kerchunk"];

/// Mode words that leave a name with the real library (not S3 at all).
const FOREIGN_WORDS: &[&str] = &["dap2", "dap4", "file", "zip", "udf0", "udf1", "http"];

/// Does the key end like a netCDF file?
pub fn has_netcdf_extension(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    NETCDF_EXTENSIONS.iter().any(|e| lower.ends_with(e))
}

/// Is `name` a netCDF object on S3 (`certain`), or an S3 name an open must probe? `None`:
/// not a netCDF object (Zarr, a local path, DAP, …).
pub fn object_name(name: &str, creating: bool) -> Result<Option<ObjectName>> {
    let (base, fragment) = name.split_once('#').unwrap_or((name, ""));
    let lower = base.to_ascii_lowercase();
    if !["s3://", "gs3://", "http://", "https://"].iter().any(|s| lower.starts_with(s)) {
        return Ok(None);
    }
    let params = super::parse_fragment(fragment);
    let words: Vec<String> = params.get("mode").map(|m| m.split(',').map(|w| w.trim().to_ascii_lowercase()).collect()).unwrap_or_default();
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    if has(ZARR_WORDS) || has(FOREIGN_WORDS) {
        return Ok(None);
    }
    let bytes = has(&["bytes"]);
    if !bytes && !s3::is_s3_url(base, &words) {
        return Ok(None);
    }
    let target = s3::parse_target(base)?;
    if target.root.is_empty() {
        // A bucket alone is no object; `url::parse` reports such names.
        return Ok(None);
    }
    let certain = bytes || (creating && has_netcdf_extension(&target.root));
    if creating && !certain {
        return Ok(None);
    }
    Ok(Some(ObjectName { original: name.to_string(), target, params, certain }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(name: &str, creating: bool) -> Option<bool> {
        object_name(name, creating).unwrap().map(|o| o.certain)
    }

    #[test]
    fn rule() {
        // Zarr words keep Zarr; bytes is always an object.
        assert_eq!(decide("s3://b/x.nc#mode=nczarr,s3", false), None);
        assert_eq!(decide("s3://b/x.nc#mode=zarr", true), None);
        assert_eq!(decide("s3://b/x#xarray", false), None);
        assert_eq!(decide("http://127.0.0.1:9/b/small.nc#mode=bytes", false), Some(true));
        assert_eq!(decide("http://127.0.0.1:9/b/small.nc#mode=bytes,s3", true), Some(true));
        // Opens without a Zarr word probe; creates decide by the extension.
        assert_eq!(decide("http://127.0.0.1:9/b/small.nc#mode=s3", false), Some(false));
        assert_eq!(decide("s3://b/dir/x", false), Some(false));
        assert_eq!(decide("s3://b/dir/x.nc4", true), Some(true));
        assert_eq!(decide("s3://b/dir/x.CDF", true), Some(true));
        assert_eq!(decide("s3://b/dir/x", true), None);
        // Not S3 at all.
        assert_eq!(decide("/tmp/x.nc", false), None);
        assert_eq!(decide("file:///tmp/x.nc#mode=bytes", false), None);
        assert_eq!(decide("https://server/dods/x.nc", false), None);
        assert_eq!(decide("https://server/dods/x.nc#mode=dap4", false), None);
        assert_eq!(decide("s3://bucket-only", false), None);
        let o = object_name("https://server/thredds/fileServer/x.nc#mode=bytes", false).unwrap().unwrap();
        assert_eq!((o.target.bucket.as_str(), o.target.root.as_str()), ("thredds", "fileServer/x.nc"));
    }
}

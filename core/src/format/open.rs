//! Opening a hierarchy: one round trip fetches every root object either version could have,
//! then the version is decided (v3 when `zarr.json` is there, unless v2 metadata is too and
//! the mode asks for v2) and the matching reader goes on from what was fetched.

use crate::error::Result;
use crate::format::common::{Loaded, ROOT_KEYS};
use crate::format::{v2, v3};
use crate::trace;
use crate::url::Flavor;
use crate::zmap::{Key, Zmap};

/// Reads the hierarchy in `store`; `prefer`: the Zarr version the mode names, if any.
pub fn read(
    store: &dyn Zmap,
    flavor: Option<Flavor>,
    consolidated: Option<bool>,
    dataset_name: &str,
    prefer: Option<u8>,
) -> Result<Loaded> {
    let root_keys = ROOT_KEYS.map(str::to_string);
    let raw_root = store.get_many(&Key::all(&root_keys)?)?;
    let v2_present = raw_root[..4].iter().any(Option::is_some);
    if let Some(root3) = &raw_root[5]
        && (!v2_present || prefer != Some(2))
    {
        if v2_present {
            trace::warn("both Zarr v2 and v3 metadata at the root; reading v3 (mode=v2 picks the other)");
        }
        return v3::read(store, flavor, consolidated, dataset_name, Some(root3.clone()));
    }
    if !v2_present {
        // Perhaps a v3 hierarchy without a root document (implicit root group).
        return v3::read(store, flavor, consolidated, dataset_name, None);
    }
    v2::read::read(store, flavor, consolidated, dataset_name, raw_root)
}

//! Stores wrapped around other stores, implementing `Zmap` over an inner one: `shard` packs
//! a sharded array's inner chunks into shard objects (Zarr v3 `sharding_indexed`), `traced`
//! logs every call (`NCZARR_TRACE`). Drivers (file, zip, S3, memory) hold bytes; adapters only
//! change how keys and bytes map onto a driver's.

pub(crate) mod shard;
pub(crate) mod traced;

"""zarr-python 3, xarray and tensorstore read the Zarr v3 datasets we write (v3write.c) with
exact values: every type, each codec, scalar, strings, char, unlimited growth, no-fill,
shards, groups, zip, pure Zarr, consolidated metadata."""
import json
import os
import sys
import warnings

import numpy as np
import tensorstore as ts
import xarray as xr
import zarr

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pycheck import check, finish  # noqa: E402

warnings.simplefilter("ignore")
TYPES = {"byte": "i1", "ubyte": "u1", "short": "i2", "ushort": "u2", "int": "i4", "uint": "u4", "int64": "i8",
         "uint64": "u8", "float": "f4", "double": "f8"}
CODECS = ["c_gzip", "c_shuf", "c_crc", "c_zstd", "c_blosc", "c_bz2", "c_big"]
# tensorstore has no `string` data type and no numcodecs.* codecs (zarr-v3.md §2).
NOT_FOR_TS = {"names", "c_shuf", "c_bz2", "sharded_z"}


def expected(name):
    j = np.arange(48)
    if name.startswith("v_"):
        t = TYPES[name[2:]]
        base = j * 5 if t[0] == "u" else (j - 10) * 2.5
        if t[0] in "iu":
            base = np.trunc(base)
        return base.astype(t).reshape(6, 8)
    if name in CODECS:
        return (j * 1000 - 7).astype("i4").reshape(6, 8)
    if name == "sharded":
        v = (j * 3).astype("u2").reshape(6, 8)
        v[5, :] = 65535
        return v
    if name == "sharded_z":
        return (j / 8.0).reshape(6, 8)
    raise KeyError(name)


def check_group(g, label, pure, zip_store=False):
    attrs = dict(g.attrs)
    check(attrs.get("title") == "ours v3" and attrs.get("scale") == [1.5, 2.25], f"{label}: root attributes {attrs}")
    check(("_nczarr_superblock" in attrs) == (not pure), f"{label}: NCZarr attributes only in NCZarr mode")
    for name in [f"v_{t}" for t in TYPES] + CODECS + ["sharded", "sharded_z"]:
        a = g[name]
        got = a[...]
        want = expected(name)
        check(got.dtype == want.dtype and np.array_equal(got, want), f"{label}: {name} {got.dtype} {got.tolist()[:2]}")
    rec = g["rec"][...]
    check(rec.shape == ((2, 6, 8) if pure else (3, 6, 8)), f"{label}: rec shape after growth {rec.shape}")
    check(np.array_equal(rec[0].reshape(-1), np.arange(48, dtype="f4") * 0.25), f"{label}: rec row 0")
    if not pure:
        check(np.all(rec[1] == -999.0) and np.array_equal(rec[2].reshape(-1), 100 + np.arange(48, dtype="f4")), f"{label}: rec growth")
    check(g["sc"].shape == () and g["sc"][...] == 42.5, f"{label}: scalar")
    check(g["names"][...].tolist() == ["alpha", "", "βητα"], f"{label}: strings {g['names'][...].tolist()}")
    code = g["code"][...]
    check(code.dtype == np.uint8 and bytes(code.reshape(-1).tolist()) == b"abcdef\0\0ghij", f"{label}: char as uint8")
    nf = g["nofill"]
    check(nf[...].tolist() == [11, 12, 0] and nf.fill_value == 0, f"{label}: no-fill zeros {nf[...].tolist()}")
    if not pure:
        meta = nf.attrs["_nczarr_array"]
        check(meta.get("nofill") == 1, f"{label}: nofill marker {meta}")
        check(g["sharded"].shards == (6, 4) and g["sharded"].chunks == (2, 2), f"{label}: shard shape")
    check(g["grp/gv"][...].tolist() == [-3, 3] and dict(g["grp"].attrs).get("about") == "sub", f"{label}: sub-group")
    codecs = g["c_big"].metadata.codecs
    codecs = getattr(codecs[0], "codecs", codecs)  # inside sharding_indexed when sharded
    check(codecs[0].endian.value == "big", f"{label}: big-endian bytes codec")


def check_xarray(path, label, pure):
    try:
        ds = xr.open_zarr(path, zarr_format=3, consolidated=None)
    except Exception as e:  # noqa: BLE001
        check(False, f"{label}: xarray open: {e}")
        return
    check(ds["v_float"].dims == ("y", "x") and np.array_equal(ds["v_float"].values, expected("v_float")), f"{label}: xarray values")
    rec = ds["rec"].values
    check(ds["rec"].attrs.get("units") == "K", f"{label}: xarray attributes")
    if not pure:
        check(np.isnan(rec[1]).all() and rec[2, 0, 0] == 100, f"{label}: xarray masks _FillValue (base64 attribute)")
    check(list(ds["names"].values) == ["alpha", "", "βητα"], f"{label}: xarray strings")
    check(float(ds["sc"].values) == 42.5, f"{label}: xarray scalar")


def check_tensorstore(path, label):
    for name in [f"v_{t}" for t in TYPES] + CODECS + ["sharded", "sharded_z", "sc", "code", "rec"]:
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": f"{path}/{name}"}}
        try:
            got = ts.open(spec).result().read().result()
            ok = name not in NOT_FOR_TS
            if name in ("sc", "code", "rec"):
                ok = ok and got.size > 0
            else:
                ok = ok and np.array_equal(got, expected(name))
            check(ok, f"{label}: tensorstore {name}")
        except Exception as e:  # noqa: BLE001
            check(name in NOT_FOR_TS, f"{label}: tensorstore {name}: {e}")


d = sys.argv[1]
for path, label, pure in [(f"{d}/nc3.zarr", "nczarr v3", False), (f"{d}/pure3.zarr", "pure v3", True),
                          (f"{d}/cons3.zarr", "consolidated", False), (f"{d}/auto3.zarr", "shard=1K", False)]:
    check_group(zarr.open_group(path, mode="r"), label, pure)
    check_xarray(path, label, pure)
    check_tensorstore(path, label)
store = zarr.storage.ZipStore(f"{d}/nc3.zip", mode="r")
check_group(zarr.open_group(store, mode="r"), "zip", False)
check_xarray(store, "zip", False)
with open(f"{d}/cons3.zarr/zarr.json") as f:
    root = json.load(f)
cm = root.get("consolidated_metadata", {})
check(cm.get("kind") == "inline" and "grp/gv" in cm.get("metadata", {}) and cm["metadata"]["rec"]["shape"] == [3, 6, 8],
      "consolidated metadata inline and fresh after growth")
auto = zarr.open_group(f"{d}/auto3.zarr", mode="r")
check(auto["v_double"].shards is not None and auto["rec"].shards is not None, f"shard=1K shards {auto['v_double'].shards} {auto['rec'].shards}")
check(auto["rec"].shards is None or auto["rec"].shards[0] == 1, "unlimited dimension stays at one chunk per shard")
sys.exit(finish("zarr v3 datasets we write"))

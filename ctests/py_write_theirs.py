"""We read what zarr-python and xarray write (Zarr v2): dimensions from _ARRAY_DIMENSIONS,
CF attributes with inferred types, strings (vlen-utf8, <U), bool, datetime64, 0-d arrays,
F order, '/' separators, consolidated metadata, zip stores, groups."""
import os
import subprocess
import sys
import tempfile
import warnings

import numcodecs
import numpy as np
from pycheck import check, finish
import pandas as pd
import xarray as xr
import zarr

from nclib import describe, read

warnings.simplefilter("ignore")
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tmp = tempfile.mkdtemp()

# 1. xarray: coordinates, CF encoding, strings, bool, datetimes, global attributes.
times = pd.date_range("2000-01-01", periods=3)
ds = xr.Dataset(
    {
        "temp": (("time", "lat", "lon"), np.arange(24, dtype="f4").reshape(3, 2, 4), {"units": "K", "long_name": "T"}),
        "packed": (("lat", "lon"), np.ones((2, 4))),
        "name": (("lat",), np.array(["north", "south"], dtype=object)),
        "flag": (("lon",), np.array([True, False, True, False])),
    },
    coords={"time": times, "lat": [10.0, 20.0], "lon": np.arange(4, dtype="i4")},
    attrs={"title": "xarray sample", "version": 3, "ratio": 0.5, "tags": ["a", "b"], "flag": True},
)
ds.packed.encoding = {"dtype": "int16", "scale_factor": 0.1, "add_offset": 1.0, "_FillValue": -1}
xpath = f"{tmp}/xr.zarr"
ds.to_zarr(xpath, zarr_format=2, consolidated=True)
d = describe(f"file://{xpath}#mode=zarr,file")
check(d["dims"] == {"time": 3, "lat": 2, "lon": 4}, f"xarray dims {d['dims']}")
check(d["vars"]["temp"]["dims"] == ["time", "lat", "lon"] and d["vars"]["temp"]["type"] == "float", "xarray temp")
check(d["vars"]["temp"]["atts"]["units"] == ("char", "K"), "xarray CF units")
check(d["vars"]["temp"]["atts"]["_FillValue"][0] == "float", f"synthesised _FillValue (D3) {d['vars']['temp']['atts'].get('_FillValue')}")
packed = d["vars"]["packed"]
check(packed["type"] == "short" and packed["atts"]["scale_factor"] == ("double", [0.1]), f"packed {packed}")
check(packed["atts"]["_FillValue"] == ("short", [-1]), f"packed fill {packed['atts'].get('_FillValue')}")
check(d["vars"]["name"]["type"] == "string", f"vlen-utf8 strings -> string: {d['vars']['name']['type']}")
check(d["vars"]["flag"]["type"] == "ubyte", "bool -> ubyte")
check(d["vars"]["time"]["type"] == "int64" and "days since" in d["vars"]["time"]["atts"]["units"][1], "datetime64")
check(d["atts"]["title"] == ("char", "xarray sample"), "global text")
check(d["atts"]["version"] == ("int", [3]), "global int")
check(d["atts"]["ratio"] == ("double", [0.5]), "global double")
check(d["atts"]["tags"] == ("string", ["a", "b"]), "list of strings -> string")
check(d["atts"]["flag"] == ("ubyte", [1]), "bool -> ubyte")
u = f"file://{xpath}#mode=zarr,file"
check(read(u, "temp") == list(np.arange(24, dtype="f4")), "xarray temp values")
check(read(u, "packed") == [0.0] * 8, f"packed raw values {read(u, 'packed')}")
check(read(u, "name") == ["north", "south"], f"vlen-utf8 values {read(u, 'name')}")
check(read(u, "flag") == [1, 0, 1, 0], "bool values")
check(read(u, "time") == [0, 1, 2], f"datetime values {read(u, 'time')}")
check(read(u, "lat") == [10.0, 20.0], "coordinate values")
d2 = describe(xpath)  # a plain path to a Zarr directory works too
check(d2["dims"] == d["dims"], "plain path")
d3 = describe(f"file://{xpath}#mode=zarr,file,noconsolidated")
check(d3["vars"].keys() == d["vars"].keys(), "per-node metadata when .zmetadata is off")

# 2. zarr-python: groups, F order, '/' separator, <U, 0-d, codecs, no dimension names.
zpath = f"{tmp}/zp.zarr"
root = zarr.open_group(zpath, mode="w", zarr_format=2)
root.attrs.update({"nested": {"a": [1, 2]}, "mixed": [1, "x"], "big": 2**40, "neg": -5, "empty": []})
a = root.create_array("forder", shape=(3, 5), dtype="i2", order="F", chunks=(2, 2))
a[:] = np.arange(15, dtype="i2").reshape(3, 5)
root.create_array("slash", shape=(4, 4), dtype="f8", chunks=(2, 2), chunk_key_encoding={"name": "v2", "separator": "/"})[:] = np.arange(16.0).reshape(4, 4)
root.create_array("ustr", shape=(3,), dtype="<U7")[:] = np.array(["a", "bé", "ccccccc"])
root.create_array("zero_d", shape=(), dtype="f4")[...] = 7.5
root.create_array("gz", shape=(10,), dtype="u4", compressors=numcodecs.GZip(level=5))[:] = np.arange(10, dtype="u4") * 1000
root.create_array("lz", shape=(10,), dtype="i8", compressors=numcodecs.LZ4())[:] = np.arange(10) - 5
root.create_array("bl", shape=(6,), dtype="f4", compressors=numcodecs.Blosc(cname="zstd", shuffle=2))[:] = np.arange(6, dtype="f4") / 4
root.create_array("zs", shape=(6,), dtype="i2", compressors=numcodecs.Zstd(level=3, checksum=True))[:] = np.arange(6, dtype="i2")
sub = root.create_group("sub")
sub.attrs["depth"] = 1
sub.create_array("inner", shape=(6,), dtype="i8", attributes={"_ARRAY_DIMENSIONS": ["n"]})
d = describe(f"file://{zpath}#mode=zarr,file")
check(d["vars"]["forder"]["type"] == "short" and len(d["vars"]["forder"]["dims"]) == 2, "F order array")
u = f"file://{zpath}#mode=zarr,file"
check(read(u, "forder") == list(range(15)), f"F order values, not transposed: {read(u, 'forder')}")
check(read(u, "slash") == list(range(16)), "'/' separator values")
check(read(u, "ustr") == ["a", "bé", "ccccccc"], f"<U values {read(u, 'ustr')}")
check(read(u, "zero_d") == [7.5], "0-d value")
check(read(u, "gz") == [i * 1000 for i in range(10)], "gzip values")
check(read(u, "lz") == [i - 5 for i in range(10)], "lz4 values")
check(read(u, "bl") == [i / 4 for i in range(6)], "blosc zstd bitshuffle values")
check(read(u, "zs") == list(range(6)), "zstd with checksum values")
check(d["vars"]["forder"]["dims"] == ["_Anonymous_Dim_3", "_Anonymous_Dim_5"], f"anonymous dims {d['vars']['forder']['dims']}")
check("slash" in d["vars"] and d["vars"]["slash"]["type"] == "double", "'/' separator array")
check(d["vars"]["ustr"]["type"] == "string", "<U -> string")
check(d["vars"]["zero_d"]["dims"] == [], "0-d array is a scalar")
check(d["vars"]["gz"]["type"] == "uint", "gzip array visible")
check(d["atts"]["nested"][0] == "char" and d["atts"]["nested"][1].replace(" ", "") == '{"a":[1,2]}', f"JSON attribute {d['atts']['nested']}")
check(d["atts"]["mixed"][0] == "char", "mixed list -> JSON text")
check(d["atts"]["big"] == ("int64", [2**40]), f"big int {d['atts']['big']}")
check("empty" not in d["atts"], "[] skipped")
check(d["groups"]["sub"]["vars"]["inner"]["dims"] == ["n"] and d["groups"]["sub"]["dims"] == {"n": 6}, "sub-group dims")
check(d["groups"]["sub"]["atts"]["depth"] == ("int", [1]), "sub-group attribute")

# 3. A zarr-python zip store (entries at the root of the archive).
zip_path = f"{tmp}/zp.zip"
store = zarr.storage.ZipStore(zip_path, mode="w")
zg = zarr.open_group(store, mode="w", zarr_format=2)
zg.attrs["source"] = "zip"
zg.create_array("v", shape=(2, 3), dtype="i4", attributes={"_ARRAY_DIMENSIONS": ["a", "b"]})
store.close()
d = describe(f"file://{zip_path}#mode=zarr,zip")
check(d["dims"] == {"a": 2, "b": 3} and d["atts"]["source"] == ("char", "zip"), f"zarr-python zip {d['dims']}")
d = describe(zip_path)
check(d["dims"] == {"a": 2, "b": 3}, "zip inferred from a plain path")

# 4. Debian's ncdump prints each of them under the preload library.
for url in [f"file://{xpath}#mode=zarr,file", f"file://{zpath}#mode=zarr,file", f"file://{zip_path}#mode=zarr,zip"]:
    out = subprocess.run(["ncdump", "-h", url], capture_output=True, text=True,
                         env=dict(os.environ, LD_PRELOAD=os.path.join(TOP, "build", "libnczarr_preload.so")))
    check(out.returncode == 0 and out.stdout.startswith("netcdf "), f"ncdump -h {url}: {out.stderr[-300:]}")

subprocess.run(["rm", "-rf", tmp])
sys.exit(finish("reading zarr-python/xarray stores"))

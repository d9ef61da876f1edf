"""zarr-python and xarray read every dataset build/write_interop writes (URLs on stdin):
dimensions, attributes with their values, dtypes, fill values, codecs, groups, scalars,
char and string variables, directory, zip and consolidated stores."""
import sys
import warnings

import numpy as np
from pycheck import check, finish
import xarray as xr
import zarr

warnings.simplefilter("ignore")


DTYPES = {"v_byte": "int8", "v_ubyte": "uint8", "v_short": "int16", "v_ushort": "uint16", "v_int": "int32",
          "v_uint": "uint32", "v_int64": "int64", "v_uint64": "uint64", "v_float": "float32",
          "v_double": "float64", "v_char": "|S1", "v_string": "|S128"}
FILLS = {"v_byte": -127, "v_ubyte": 255, "v_short": -32767, "v_ushort": 65535, "v_int": -2147483647,
         "v_uint": 4294967295, "v_int64": -9223372036854775806, "v_uint64": 18446744073709551614,
         "v_float": np.float32(9.96921e36), "v_double": 9.969209968386869e36}


def open_store(url):
    path = url.split("://", 1)[1].split("#", 1)[0]
    if path.endswith(".zip"):
        store = zarr.storage.ZipStore(path, mode="r")
        prefix = path.rsplit("/", 1)[1][:-4]
        return store, prefix
    return path, ""


for url in sys.stdin.read().split():
    pure = "mode=zarr" in url
    consolidated = "consolidated" in url
    store, prefix = open_store(url)
    root = zarr.open_group(store, path=prefix, mode="r", zarr_format=2)
    attrs = dict(root.attrs)
    check(attrs.get("title") == "interop sample", f"{url}: title {attrs.get('title')!r}")
    check(attrs.get("att_double") == [3.141592653589793, -1e-300], f"{url}: att_double exact")
    check(np.float32(attrs.get("att_float")[0]) == np.float32(0.1), f"{url}: att_float")
    check(attrs.get("att_int64") == -9000000000, f"{url}: att_int64")
    check(attrs.get("att_uint64") == 18000000000000000000, f"{url}: att_uint64")
    check(attrs.get("numeric_text") == "17", f"{url}: char attribute stays text (C4)")
    check(attrs.get("att_strings") == ["alpha", "beta"], f"{url}: string attribute")
    for name, dtype in DTYPES.items():
        arr = root[name]
        check(arr.shape == (3, 4), f"{url}: {name} shape {arr.shape}")
        check(str(arr.dtype) == dtype or arr.dtype == np.dtype(dtype), f"{url}: {name} dtype {arr.dtype}")
        data = arr[:]
        if name in FILLS:
            check(arr.fill_value == FILLS[name], f"{url}: {name} fill {arr.fill_value!r}")
            want = np.array(list(range(8)) + [FILLS[name]] * 4, dtype=dtype).reshape(3, 4)
            check(np.array_equal(data, want), f"{url}: {name} data {data.tolist()}")
        elif name == "v_char":
            check(data.tolist() == [[b"a", b"b", b"c", b"d"], [b"e", b"f", b"g", b"h"], [b"", b"", b"", b""]], f"{url}: chars {data.tolist()}")
        else:
            check(data[0].tolist() == [b"s0", b"", b"s2", b"s3"] and data[1, 3] == b"a longer string" and data[2, 0] == b"",
                  f"{url}: strings {data.tolist()}")
        check(arr.attrs.get("_ARRAY_DIMENSIONS") == ["y", "x"], f"{url}: {name} dims")
    temp = root["temp"]
    check(temp.shape == (2, 4), f"{url}: temp shape {temp.shape}")
    check(temp[:].tolist() == [[1.5, -2.5, 3.25, 273.15002441406], [5, 6, 7, 8]] or
          np.array_equal(temp[:], np.array([[1.5, -2.5, 3.25, 273.15], [5, 6, 7, 8]], dtype="f4")), f"{url}: temp data (zlib+shuffle)")
    check(temp.fill_value == -999.0, f"{url}: temp fill")
    md = temp.metadata.to_dict()
    check(md["compressor"]["id"] == "zlib" and md["filters"][0] == {"id": "shuffle", "elementsize": 4},
          f"{url}: temp codecs {md['compressor']} {md['filters']}")
    scalar = root["scalar"]
    check(scalar.shape == (() if pure else (1,)), f"{url}: scalar shape {scalar.shape}")
    check(float(np.asarray(scalar[...]).reshape(-1)[0]) == 42.5, f"{url}: scalar value")
    gv = root["g1/gv"]
    check(gv.shape == (3, 2) and gv.attrs.get("_ARRAY_DIMENSIONS") == ["y", "k"], f"{url}: g1/gv")
    check(gv[:].tolist() == [[1, 2], [3, 4], [5, 6]], f"{url}: g1/gv data")
    check(dict(root["g1/g2"].attrs).get("level") == 2, f"{url}: g1/g2 attribute")

    # xarray: dimensions and CF attributes, every group.
    kw = dict(consolidated=consolidated, zarr_format=2, mask_and_scale=False)
    ds = xr.open_zarr(store, group=prefix or None, **kw)
    check(dict(ds.sizes) == ({"y": 3, "x": 4, "time": 2} if pure else {"y": 3, "x": 4, "time": 2, "_scalar_": 1}),
          f"{url}: xarray sizes {dict(ds.sizes)}")
    check(ds["temp"].attrs.get("units") == "K", f"{url}: xarray temp units")
    dsm = xr.open_zarr(store, group=prefix or None, consolidated=consolidated, zarr_format=2)
    check(float(dsm["v_int"].values[2, 0]) != float(dsm["v_int"].values[2, 0]), f"{url}: xarray masks fill as NaN")
    check(float(dsm["temp"].values[0, 3]) == np.float32(273.15), f"{url}: xarray temp values")
    check(ds["v_int"].dtype == np.int32 and ds["v_string"].dims == ("y", "x"), f"{url}: xarray variables")
    check(ds.attrs.get("title") == "interop sample", f"{url}: xarray global attributes")
    g1 = xr.open_zarr(store, group=(prefix + "/g1") if prefix else "g1", **kw)
    check(dict(g1.sizes) == {"y": 3, "k": 2}, f"{url}: xarray group sizes {dict(g1.sizes)}")
    g2 = xr.open_zarr(store, group=(prefix + "/g1/g2") if prefix else "g1/g2", **kw)
    check(g2["deep"].dims == ("k",) and g2.attrs.get("level") == 2, f"{url}: xarray nested group")

sys.exit(finish("zarr-python/xarray reading ours"))

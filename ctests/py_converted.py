"""zarr-python reads what `nccopy <netCDF file> <NCZarr URL>` wrote under the preload library:
every variable of every group holds exactly the values netCDF4-python reads from the source
file (raw values: no masking, no scaling, char as bytes).

usage: py_converted.py <source.nc> <store path> [zip]"""
import sys
import warnings

import netCDF4
import numpy as np
import zarr
from pycheck import check, finish

warnings.simplefilter("ignore")
src, store_path = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    # netcdf-c's zip layout: everything under a directory named after the zip file.
    stem = store_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    root = zarr.open_group(zarr.storage.ZipStore(store_path, mode="r"), path=stem, mode="r")
else:
    root = zarr.open_group(store_path, mode="r")


def as_text(a):
    a = np.asarray(a)
    if a.dtype.kind in "SU" or a.dtype == object:
        return np.vectorize(lambda s: s.decode() if isinstance(s, bytes) else str(s), otypes=[object])(a)
    return a


def walk(group, zgroup, prefix):
    for name, var in group.variables.items():
        var.set_auto_maskandscale(False)
        var.set_auto_chartostring(False)
        want = var[...]
        try:
            got = zgroup[name][...]
        except KeyError:
            check(False, f"{prefix}{name}: missing in the Zarr store")
            continue
        if var.dtype == str or var.dtype == "S1":
            ok = np.array_equal(as_text(want).reshape(-1), as_text(got).reshape(-1))
        else:
            ok = np.array_equal(np.asarray(want).reshape(-1), np.asarray(got).reshape(-1)) and got.dtype == np.asarray(want).dtype
        # Scalars are stored with shape [1] (decision D2, as netcdf-c writes them).
        same_shape = np.shape(got) == np.shape(want) or (np.ndim(want) == 0 and np.shape(got) == (1,))
        check(ok and same_shape, f"{prefix}{name}: values equal ({np.asarray(want).dtype})")
    for name, sub in group.groups.items():
        walk(sub, zgroup[name], f"{prefix}{name}/")


with netCDF4.Dataset(src) as ds:
    walk(ds, root, "/")
sys.exit(finish(f"zarr-python reads the nccopy conversion of {src.rsplit('/', 1)[-1]}"))

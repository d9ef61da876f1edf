"""zarr-python reads a dataset written by many MPI ranks exactly as the serial copy.

    python3 py_read_par.py <parallel store> <serial store>
Every array (groups included) must exist in both and hold equal values; xarray opens the root.
"""
import sys

import numpy as np
import xarray as xr
import zarr


def arrays(group, prefix=""):
    for name, node in group.members():
        if isinstance(node, zarr.Array):
            yield prefix + name, node
        else:
            yield from arrays(node, prefix + name + "/")


par, ser = zarr.open_group(sys.argv[1], mode="r"), zarr.open_group(sys.argv[2], mode="r")
p, s = dict(arrays(par)), dict(arrays(ser))
passed = failed = 0
if sorted(p) == sorted(s) and len(p) >= 16:
    passed += 1
else:
    failed += 1
    print("FAILED: arrays differ:", sorted(p), sorted(s))
for name in sorted(p):
    a, b = p[name][...], s[name][...]
    if a.shape == b.shape and np.array_equal(a, b):
        passed += 1
    else:
        failed += 1
        print(f"FAILED: {name} differs from the serial copy")
ds = xr.open_zarr(sys.argv[1], consolidated=False)
if int(ds["a"].sum()) == int(np.asarray(s["a"][...]).sum()):
    passed += 1
else:
    failed += 1
    print("FAILED: xarray sum of a")
print(f"zarr-python reads the parallel dataset: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

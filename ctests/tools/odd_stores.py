"""Stores of shapes netcdf-c's own tests use and our writers never make (issue 13):
  rootzip.zip  entries under x/ first (netcdf-c's dataset folder), and a second hierarchy's
               .zgroup at the archive root; netcdf-c reads x/ as the dataset.
  zmeta.zarr   consolidated metadata only: .zmetadata and arrays, no .zgroup or .zattrs.
usage: odd_stores.py DIR"""
import json
import os
import sys
import zipfile

import numpy as np

out = sys.argv[1]


def zarray(shape, chunks, dtype, fill):
    return json.dumps({"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype, "fill_value": fill,
                       "order": "C", "compressor": None, "filters": None})


with zipfile.ZipFile(os.path.join(out, "rootzip.zip"), "w", zipfile.ZIP_STORED) as z:
    z.writestr("x/", b"")
    z.writestr("x/.zgroup", json.dumps({"zarr_format": 2}))
    z.writestr("x/.zattrs", json.dumps({"title": "inside x"}))
    z.writestr("x/v/.zarray", zarray([3], [3], "<i4", 0))
    z.writestr("x/v/.zattrs", json.dumps({"_ARRAY_DIMENSIONS": ["d"]}))
    z.writestr("x/v/0", np.array([7, 8, 9], dtype="<i4").tobytes())
    z.writestr(".zgroup", json.dumps({"zarr_format": 2}))
    z.writestr(".zattrs", json.dumps({"title": "archive root"}))
    z.writestr("w/.zarray", zarray([2], [2], "<f8", 0))
    z.writestr("w/.zattrs", json.dumps({"_ARRAY_DIMENSIONS": ["e"]}))
    z.writestr("w/0", np.array([1.5, 2.5]).tobytes())

root = os.path.join(out, "zmeta.zarr")
meta = {".zgroup": {"zarr_format": 2}, ".zattrs": {"title": "consolidated only"},
        "v/.zarray": json.loads(zarray([4], [2], "<i2", -1)), "v/.zattrs": {"_ARRAY_DIMENSIONS": ["x"]},
        "g/.zgroup": {"zarr_format": 2}, "g/w/.zarray": json.loads(zarray([2], [2], "<f4", 0)),
        "g/w/.zattrs": {"_ARRAY_DIMENSIONS": ["y"]}}
os.makedirs(os.path.join(root, "v"))
os.makedirs(os.path.join(root, "g", "w"))
with open(os.path.join(root, ".zmetadata"), "w") as f:
    json.dump({"zarr_consolidated_format": 1, "metadata": meta}, f)
for i, part in enumerate(np.array([1, 2, 3, 4], dtype="<i2").reshape(2, 2)):
    with open(os.path.join(root, "v", str(i)), "wb") as f:
        f.write(part.tobytes())
with open(os.path.join(root, "g", "w", "0"), "wb") as f:
    f.write(np.array([0.25, 0.5], dtype="<f4").tobytes())

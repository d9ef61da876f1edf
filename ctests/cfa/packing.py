"""Packed variables in CF aggregations, both ways, with cfdm as the other side (check-cfa).
usage: packing.py source <dir>       src.nc: short v(y, x), scale_factor 0.01, add_offset 273.15,
                                     _FillValue -999, stored -200 0 100 / -999 5 10
       packing.py cfdm-writes <dir>  cfdm's aggregation of src.nc (cfpacked.nc, absolute URI)
       packing.py values <file>      (under the preload library) netCDF4-python reads v: the
                                     source's values, unpacked, the -999 cell masked
       packing.py cfdm-reads <file>  cfdm reads the aggregation from another directory: the same
CF aggregation (and cfdm) undo a fragment's own packing before its values enter the aggregated
variable, so an aggregation must neither unpack twice nor hand out raw packed values."""
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pycheck import check, finish  # noqa: E402

WANT = np.ma.masked_values([[271.15, 273.15, 274.15], [-1, 273.20, 273.25]], -1)
op, where = sys.argv[1], sys.argv[2]


def same(got, what):
    got = np.ma.asarray(got).astype("f8")
    check(got.shape == WANT.shape, f"{what}: shape {got.shape}")
    check((np.ma.getmaskarray(got) == np.ma.getmaskarray(WANT)).all(), f"{what}: the fill cell is missing, no other ({np.ma.getmaskarray(got).tolist()})")
    check(np.allclose(got.filled(0), WANT.filled(0), atol=1e-4), f"{what}: values {got.tolist()}")


if op == "source":
    import netCDF4

    with netCDF4.Dataset(os.path.join(where, "src.nc"), "w") as ds:
        ds.createDimension("y", 2)
        ds.createDimension("x", 3)
        v = ds.createVariable("v", "i2", ("y", "x"), fill_value=-999)
        v.set_auto_maskandscale(False)
        v.scale_factor = 0.01
        v.add_offset = 273.15
        v.units = "K"
        v.standard_name = "air_temperature"
        v[:] = np.array([[-200, 0, 100], [-999, 5, 10]], dtype="i2")
    print("ok")
elif op == "cfdm-writes":
    import cfdm

    os.chdir(where)
    f = cfdm.read("src.nc", cfa_write="field")[0]
    cfdm.write(f, "cfpacked.nc", cfa={"constructs": "field", "uri": "absolute"})
    same(cfdm.read("cfpacked.nc")[0].array, "cfdm reads its own aggregation")
    sys.exit(finish("cfdm wrote a packed aggregation"))
elif op == "values":
    import netCDF4

    with netCDF4.Dataset(where) as ds:
        same(ds["v"][...], f"netCDF4-python through us reads {os.path.basename(where)}")
    sys.exit(finish("packed aggregation read through us"))
elif op == "cfdm-reads":
    import cfdm

    path = os.path.abspath(where)
    os.chdir("/")
    fields = [f for f in cfdm.read(path) if f.nc_get_variable() == "v"]
    check(len(fields) == 1, f"cfdm sees v in {os.path.basename(path)}")
    if fields:
        same(fields[0].array, f"cfdm reads {os.path.basename(path)} from /")
    sys.exit(finish("cfdm reads the packed aggregation"))
else:
    sys.exit(f"unknown operation {op}")

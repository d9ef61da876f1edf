"""netCDF4-python (its wheel bundles netcdf-c 4.10.1) with our preload library in front:
netCDF files stored as one S3 object, named by an S3netCDF4 alias, written and read through
the unchanged Python API. usage: py_s3file.py s3://<alias>/<bucket>/<prefix>"""
import sys
import warnings

import netCDF4
import numpy as np
from pycheck import check, finish

warnings.simplefilter("ignore")
base = sys.argv[1]

for fmt, name in [("NETCDF4", "x4.nc"), ("NETCDF3_CLASSIC", "x3.nc"), ("NETCDF3_64BIT_DATA", "x5.cdf")]:
    url = f"{base}/{name}"
    with netCDF4.Dataset(url, "w", format=fmt) as ds:
        ds.createDimension("t", None)
        ds.createDimension("x", 4)
        v = ds.createVariable("v", "f8", ("t", "x"), fill_value=-1.0)
        v.units = "m"
        v[0:3, :] = np.arange(12.0).reshape(3, 4)
        ds.title = f"{fmt} on S3 through nczarr-rs"
    with netCDF4.Dataset(url) as ds:
        check(ds.data_model == fmt, f"{name}: data model {ds.data_model}")
        check(ds.filepath() == url, f"{name}: filepath {ds.filepath()}")
        check(ds.title == f"{fmt} on S3 through nczarr-rs", f"{name}: title")
        check(ds["v"].units == "m", f"{name}: units")
        check(np.array_equal(ds["v"][:], np.arange(12.0).reshape(3, 4)), f"{name}: values")
sys.exit(finish("netCDF4-python reads and writes netCDF files on S3"))

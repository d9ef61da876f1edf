"""Changing a dataset someone else wrote: xarray's consolidated store is opened for writing
through our library, an attribute and a variable are added, and zarr-python/xarray reading
with consolidated metadata (their default) see the change: no stale .zmetadata (D5)."""
import ctypes
import sys
import tempfile
import warnings

import numpy as np
from pycheck import check, finish
import xarray as xr
import zarr

from nclib import call, describe, lib

warnings.simplefilter("ignore")


tmp = tempfile.mkdtemp()
path = f"{tmp}/c.zarr"
xr.Dataset({"v": (("x",), np.arange(4.0))}, attrs={"a": 1}).to_zarr(path, zarr_format=2, consolidated=True)
url = f"file://{path}#mode=zarr,file"
ncid = ctypes.c_int()
call(lib.nc_open, url.encode(), 1, ctypes.byref(ncid))
call(lib.nc_put_att_text, ncid, -1, b"added", ctypes.c_size_t(3), b"yes")
varid, dimid = ctypes.c_int(), ctypes.c_int()
call(lib.nc_inq_dimid, ncid, b"x", ctypes.byref(dimid))
call(lib.nc_def_var, ncid, b"w", 4, 1, ctypes.byref(dimid), ctypes.byref(varid))
call(lib.nc_close, ncid)
g = zarr.open_consolidated(path, zarr_format=2)
check(g.attrs.get("added") == "yes", "consolidated metadata carries the new attribute")
check("w" in g, "consolidated metadata carries the new variable")
ds = xr.open_zarr(path, consolidated=True)
check(ds.attrs.get("added") == "yes" and ds["w"].dims == ("x",), "xarray sees the change")
d = describe(url)
check(d["atts"]["added"] == ("char", "yes") and "w" in d["vars"], "reopened through our library")
sys.exit(finish("modifying their datasets"))

"""netCDF4-python (its wheel bundles netcdf-c 4.10.1) with our preload library in front:
our datasets open, read and write through the unchanged Python API."""
import sys
import warnings

import netCDF4
import numpy as np
from pycheck import check, finish

warnings.simplefilter("ignore")
out = sys.argv[1]


check("nczarr-rs" in netCDF4.getlibversion(), f"our library answers: {netCDF4.getlibversion()}")
url = f"file://{out}/p.file#mode=nczarr,file"
with netCDF4.Dataset(url, "w") as ds:
    ds.createDimension("t", None)
    ds.createDimension("x", 4)
    v = ds.createVariable("v", "f8", ("t", "x"), zlib=True, complevel=2, fill_value=-1.0)
    v.units = "m"
    v[0:3, :] = np.arange(12.0).reshape(3, 4)
    s = ds.createVariable("s", str, ("x",))
    s[:] = np.array(["a", "bb", "ccc", "dddd"], dtype=object)
    ds.title = "written by netCDF4-python through nczarr-rs"
    g = ds.createGroup("g")
    g.createVariable("i", "i2", ("x",))[:] = [1, -2, 3, -4]
# netCDF4-python re-creates for "a"/"r+" when os.path.exists(name) is false, as it is for a URL:
# the plain directory path (which we recognise as Zarr) opens the existing dataset.
with netCDF4.Dataset(f"{out}/p.file", "r+") as ds:
    ds["v"][3, :] = [100, 101, 102, 103]
with netCDF4.Dataset(url) as ds:
    check(ds.dimensions["t"].isunlimited() and len(ds.dimensions["t"]) == 4, "unlimited dimension grew")
    check(np.array_equal(ds["v"][:3], np.arange(12.0).reshape(3, 4)) and ds["v"][3, 2] == 102, "float data")
    check(ds["v"].units == "m" and ds["v"].filters()["zlib"], "attributes and filters")
    check(list(ds["s"][:]) == ["a", "bb", "ccc", "dddd"], "strings")
    check(list(ds["g"]["i"][:]) == [1, -2, 3, -4], "group data")
    check(ds.title.startswith("written by"), "global attribute")

# Both worlds in one process: netCDF-4 and classic files go to the wheel's own netcdf-c (found
# by scanning loaded objects: Python loads it RTLD_LOCAL), Zarr to us; reads interleave.
for fmt in ("NETCDF4", "NETCDF3_CLASSIC"):
    path = f"{out}/real_{fmt}.nc"
    with netCDF4.Dataset(path, "w", format=fmt) as r:
        r.createDimension("x", 4)
        r.createVariable("w", "i4", ("x",))[:] = [5, 6, 7, 8]
        r.origin = "wheel"
    with netCDF4.Dataset(path) as r, netCDF4.Dataset(url) as z:
        check(r.file_format == fmt and z.file_format == "NETCDF4", f"{fmt}: each world reports its format")
        check(list(r["w"][:]) == [5, 6, 7, 8] and z["v"][3, 0] == 100, f"{fmt}: interleaved reads")
        check(r.origin == "wheel" and z.title.startswith("written by"), f"{fmt}: attributes from both worlds")
        z2 = netCDF4.Dataset(url)
        check(list(r["w"][1:3]) == [6, 7] and z2["g"]["i"][0] == 1, f"{fmt}: a third dataset, ids kept apart")
        z2.close()
sys.exit(finish("netCDF4-python through the preload library"))

"""Writes NCZarr datasets with netCDF4-python (netcdf-c 4.10.1 inside the wheel) into the
directory given as argv[1], and prints one URL per line. The client tests dump each with
netcdf-c 4.10.1 and with our library and compare."""
import sys
import warnings

import netCDF4
import numpy as np

warnings.simplefilter("ignore")
out = sys.argv[1]
urls = []


def new(name):
    url = f"file://{out}/{name}#mode=nczarr,file"
    urls.append(url)
    return netCDF4.Dataset(url, "w", format="NETCDF4")


ds = new("groups.file")
ds.createDimension("time", None)
ds.createDimension("x", 3)
v = ds.createVariable("t", "f4", ("time", "x"), fill_value=-1.0)
v.units = "K"
v.setncattr("scale_factor", np.float32(0.5))
ds.title = "probe"
ds.ints = np.array([1, 2, 3], dtype="i4")
ds.d = 3.141592653589793
ds.setncattr_string("sattr", ["a", "bb"])
v[0:2] = np.array([[1.5, -2.25, 3], [4, 5, 6.125]], dtype="f4")
s = ds.createVariable("s", str, ("x",))
s[:] = np.array(["alpha", "beta", "gamma"], dtype=object)  # 4.10.1 reads "" back as NULL; ours keeps ""
c = ds.createVariable("c", "S1", ("x",))
c[:] = np.array([b"a", b"b", b"c"])
g = ds.createGroup("sub")
g.createDimension("k", 2)
g.createVariable("gv", "i8", ("x", "k"))[:] = np.arange(6).reshape(3, 2) - 3
g.gattr = np.int16(5)
g2 = g.createGroup("deeper")
g2.createVariable("dv", "u2", ("k",))
ds.createVariable("sc", "f8", ())[...] = 2.5
ds.createVariable("u8", "u1", ("x",))[:] = [0, 128, 255]
ds.close()

ds = new("types.file")
ds.createDimension("n", 4)
for code in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]:
    var = ds.createVariable(f"v_{code}", code, ("n",))
    var.setncattr(f"a_{code}", np.array([1, 2], dtype=code))
    var.setncattr("valid_max", np.array(100, dtype=code))
    info = np.iinfo(code) if code[0] in "iu" else np.finfo(code)
    var[:] = np.array([info.min, 0, 1, info.max], dtype=code)
ds.setncattr("neg", np.int8(-5))
ds.setncattr("big", np.uint64(18000000000000000000))
ds.setncattr("tiny", 1e-300)
ds.setncattr("fl", np.float32(0.1))
ds.setncattr("text", "with \"quotes\" and\nnewline")
ds.close()

ds = new("codecs.file")
ds.createDimension("t", None)
ds.createDimension("y", 10)
ds.createDimension("x", 20)
z = ds.createVariable("z", "f8", ("t", "y", "x"), zlib=True, shuffle=True, complevel=3, chunksizes=(1, 5, 10))
ds.createVariable("f", "i4", ("y", "x"), fletcher32=True, endian="big")
ds.createVariable("zs", "f4", ("y",), compression="zstd", complevel=4)
ds.createVariable("bz", "i2", ("x",), compression="bzip2", complevel=9)
ds.createVariable("nf", "i4", ("x",), fill_value=False)
z[0] = np.ones((10, 20))
z[1] = -np.ones((10, 20))
z[2] = np.arange(200.0).reshape(10, 20) / 7
ds["f"][:] = np.arange(200, dtype="i4").reshape(10, 20)
ds["zs"][:] = np.linspace(0, 1, 10, dtype="f4")
ds["bz"][:] = np.arange(20, dtype="i2") * -3
ds.close()

print("\n".join(urls))

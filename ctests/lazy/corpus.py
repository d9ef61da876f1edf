"""The lazy-open corpus (issue 37): netCDF-3 and netCDF-4 files as the programs people use write
them. `make DIR` writes every file into DIR and prints one line per file: its name and the
reader that can check it (`ncdump`: Debian's netcdf-c 4.9 reads it; `netcdf4`: only
netCDF4-python's newer netcdf-c does, for HDF5's newer chunk indexes). `compare URL FILE`
compares every variable and attribute of two datasets through netCDF4-python (run under the
preload library: URL is read by us, FILE by the real netcdf-c)."""
import os, subprocess, sys
import numpy as np


def run(*cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def make(d):
    here = os.path.dirname(os.path.abspath(__file__))
    made = []
    # ncgen (netcdf-c's own writer): every classic format and netCDF-4, groups, strings,
    # compact/contiguous/chunked storage, big-endian data, fletcher32, shuffle + deflate.
    for kind, suffix in [("nc3", "cdf1"), ("nc6", "cdf2"), ("nc5", "cdf5"), ("nc4", "nc4"), ("nc7", "nc4classic")]:
        out = f"{d}/ncgen_{suffix}.nc"
        run("ncgen", "-k", kind, "-o", out, f"{here}/classic.cdl")
        made.append((out, "ncdump"))
    run("ncgen", "-k", "nc4", "-o", f"{d}/ncgen_groups.nc", f"{here}/groups.cdl")
    made.append((f"{d}/ncgen_groups.nc", "ncdump"))
    # Filters from HDF5 plugins as netcdf-c's _Filter writes them (bzip2 307, LZ4 32004;
    # Debian's hdf5-filter-plugin, on HDF5_PLUGIN_PATH), beside shuffle + deflate + fletcher32.
    run("ncgen", "-k", "nc4", "-o", f"{d}/ncgen_filters.nc", f"{here}/filters.cdl")
    made.append((f"{d}/ncgen_filters.nc", "ncdump"))
    import netCDF4
    # netCDF4-python: zlib, an unlimited dimension, a string variable in a group.
    with netCDF4.Dataset(f"{d}/netcdf4python.nc", "w") as f:
        f.createDimension("time", None); f.createDimension("lat", 30); f.createDimension("lon", 40)
        t = f.createVariable("t", "f4", ("time", "lat", "lon"), zlib=True, complevel=1, chunksizes=(1, 15, 20), fill_value=1e20)
        t[:] = np.arange(5 * 30 * 40, dtype="f4").reshape(5, 30, 40)
        t.units = "K"
        c = f.createVariable("c", "i2", ("lat",), zlib=True, shuffle=True)
        c[:] = np.arange(30)
        u = f.createVariable("u", "u8", ("lon",), contiguous=True)
        u[:] = np.arange(40, dtype="u8") * 1000000007
        g = f.createGroup("grp"); g.createDimension("n", 3)
        s = g.createVariable("s", str, ("n",)); s[:] = np.array(["x", "yy", "zzz"], dtype=object)
        f.history = "made by netCDF4-python"
    made.append((f"{d}/netcdf4python.nc", "ncdump"))
    # The netCDF4 wheel's own filter plugins (netcdf-c's: zstd 32015, blosc 32001 with each of
    # its compressors), behind shuffle. Debian's netcdf-c has no such plugins: values are
    # compared through netCDF4-python.
    with netCDF4.Dataset(f"{d}/codecs.nc", "w") as f:
        f.createDimension("x", 50); f.createDimension("y", 40)
        for c in ["zstd", "blosc_lz", "blosc_lz4", "blosc_lz4hc", "blosc_zlib", "blosc_zstd"]:
            v = f.createVariable(c, "f4", ("x", "y"), compression=c, complevel=4, chunksizes=(10, 20), shuffle=True)
            v[:] = np.arange(2000, dtype="f4").reshape(50, 40) * 1.5
    made.append((f"{d}/codecs.nc", "netcdf4"))
    # h5netcdf/h5py: variable-length string attributes; HDF5's newer chunk indexes (fixed
    # array, extensible array, version 2 B-tree, single chunk) with libver="latest".
    import h5netcdf
    for libver in ["earliest", "latest"]:
        with h5netcdf.File(f"{d}/h5netcdf_{libver}.nc", "w", libver=libver) as f:
            f.dimensions = {"x": 10, "y": 8, "r": None}
            v = f.create_variable("fixed", ("x", "y"), "f8", chunks=(5, 4), compression="gzip", compression_opts=3)
            v[...] = np.arange(80).reshape(10, 8) / 3
            f.resize_dimension("r", 7)
            w = f.create_variable("ext", ("r", "y"), "i4", chunks=(2, 8))
            w[...] = np.arange(56).reshape(7, 8)
            z = f.create_variable("two", ("r", "x"), "i2", chunks=(2, 5))
            z[...] = np.arange(70).reshape(7, 10)
            s = f.create_variable("single", ("x",), "u1", chunks=(10,), compression="gzip")
            s[...] = np.arange(10)
            f.attrs["title"] = "h5netcdf " + libver
        made.append((f"{d}/h5netcdf_{libver}.nc", "ncdump" if libver == "earliest" else "netcdf4"))
    # xarray (through netCDF4-python): CF encoding, packed data, time.
    import xarray as xr, pandas as pd
    ds = xr.Dataset(
        {"tas": (("time", "y", "x"), (np.random.default_rng(1).normal(280, 5, (4, 6, 7))).astype("f4"))},
        coords={"time": pd.date_range("2000-01-01", periods=4), "y": np.arange(6.0), "x": np.arange(7.0)},
        attrs={"Conventions": "CF-1.8"},
    )
    ds.to_netcdf(f"{d}/xarray.nc", encoding={"tas": {"zlib": True, "dtype": "int16", "scale_factor": 0.01, "_FillValue": -32768}})
    made.append((f"{d}/xarray.nc", "ncdump"))
    # NCO and CDO: netCDF-4 with deflate and shuffle, netCDF-4 classic model.
    run("ncks", "-O", "-4", "-L", "5", "--ppc", "default=4", f"{d}/ncgen_cdf1.nc", f"{d}/nco.nc")
    made.append((f"{d}/nco.nc", "ncdump"))
    run("cdo", "-s", "-f", "nc4c", "-z", "zip_3", "copy", f"{d}/xarray.nc", f"{d}/cdo.nc")
    made.append((f"{d}/cdo.nc", "ncdump"))
    # A big-endian netCDF-4 file with a chunk stored short of its chunk shape is fine; a file
    # written with bzip2 (an HDF5 filter plugin, as netcdf-c's _Filter writes it).
    for name, reader in made:
        print(os.path.basename(name), reader)


def compare(url, path):
    import netCDF4
    bad = 0
    with netCDF4.Dataset(url) as a, netCDF4.Dataset(path) as b:
        def walk(ga, gb, where):
            nonlocal bad
            for k in gb.ncattrs():
                if str(ga.getncattr(k)) != str(gb.getncattr(k)):
                    print(f"BAD attribute {where}:{k}"); bad += 1
            for name, vb in gb.variables.items():
                va = ga.variables[name]
                va.set_auto_maskandscale(False); vb.set_auto_maskandscale(False)
                x, y = va[...], vb[...]
                same = np.array_equal(np.asarray(x), np.asarray(y)) and va.dimensions == vb.dimensions and va.dtype == vb.dtype
                print(("ok" if same else "BAD") + f" {where}/{name}")
                bad += not same
            for name, sub in gb.groups.items():
                walk(ga.groups[name], sub, f"{where}/{name}")
        walk(a, b, "")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        compare(sys.argv[2], sys.argv[3])

"""Reference sets for the refs suite: `make <dir>` writes netCDF files (netCDF-4 with groups
of chunked, compressed and contiguous variables; netCDF-3 classic) and kerchunk's references
to them; `compare <url> <file>` (run under the preload library) opens both through
netCDF4-python and compares every variable of the file: dimensions, type, values, attributes.
`written <set> <file> [endpoint]` reads a reference set we wrote through fsspec + zarr-python
and xarray (no netCDF library) and compares every variable with the file (read by the real
netcdf-c); it prints how many keys are references into other objects."""
import json
import os
import sys

import numpy as np


def make(d):
    import netCDF4
    from kerchunk.hdf import SingleHdf5ToZarr
    from kerchunk.netCDF3 import NetCDF3ToZarr

    nc4 = os.path.join(d, "data4.nc")
    with netCDF4.Dataset(nc4, "w") as ds:
        ds.title = "lazy"
        ds.createDimension("time", 6)
        ds.createDimension("lat", 20)
        ds.createDimension("lon", 30)
        ds.createVariable("time", "f8", ("time",))[:] = np.arange(6) * 6.0
        ds.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-90, 90, 20)
        ds.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 348, 30)
        t = ds.createVariable("t", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True, chunksizes=(1, 10, 15))
        t.units = "K"
        t[:] = 250 + np.arange(6 * 20 * 30, dtype="f4").reshape(6, 20, 30) / 100
        p = ds.createVariable("p", "i4", ("lat", "lon"), contiguous=True)
        p.long_name = "contiguous ints"
        p[:] = np.arange(600, dtype="i4").reshape(20, 30)
        q = ds.createVariable("q", "i2", ("time", "lat"), chunksizes=(2, 20), fill_value=-99)
        q[0:2] = 7  # the other chunks are never written: fill
    nc3 = os.path.join(d, "data3.nc")
    with netCDF4.Dataset(nc3, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("x", 5)
        ds.createDimension("y", 4)
        ds.createVariable("x", "f8", ("x",))[:] = np.arange(5) / 2
        ds.createVariable("y", "i4", ("y",))[:] = np.arange(4)
        v = ds.createVariable("v", "f4", ("y", "x"))
        v.units = "m"
        v[:] = np.arange(20, dtype="f4").reshape(4, 5)
    refs4 = SingleHdf5ToZarr(nc4, inline_threshold=0).translate()
    refs3 = NetCDF3ToZarr(nc3, inline_threshold=0).translate()
    for name, refs in (("refs4.json", refs4), ("refs3.json", refs3)):
        with open(os.path.join(d, name), "w") as f:
            json.dump(refs, f)
    # The same references naming their targets relative to the reference set's folder.
    rel = json.loads(json.dumps(refs4))
    table = rel.get("refs", rel)
    for k, v in table.items():
        if isinstance(v, list) and v and isinstance(v[0], str):
            v[0] = "data4.nc"
    with open(os.path.join(d, "refs4_relative.json"), "w") as f:
        json.dump(rel, f)
    # Parquet reference directories (fsspec's layout, as kerchunk.df writes them): small
    # records, so each variable spans several files.
    from kerchunk.df import refs_to_dataframe

    refs_to_dataframe(refs4, os.path.join(d, "refs4.parq"), record_size=5)
    refs_to_dataframe(refs3, os.path.join(d, "refs3.parq"), record_size=3)
    # For the reference sets we write: a group, and a contiguous variable larger than the
    # 4 MiB pieces a lazy open reads unchunked data by.
    with netCDF4.Dataset(os.path.join(d, "groups4.nc"), "w") as ds:
        ds.createDimension("y", 600)
        ds.createDimension("x", 1000)
        ds.createVariable("big", "f8", ("y", "x"), contiguous=True)[:] = np.arange(600000.0).reshape(600, 1000) / 7
        g = ds.createGroup("sub")
        g.createDimension("n", 10)
        v = g.createVariable("v", "i4", ("n",), chunksizes=(4,), zlib=True)
        v.units = "1"
        v[:] = np.arange(10) * 3
    # Twelve daily files combined along time by MultiZarrToZarr (one reference set over all).
    from kerchunk.combine import MultiZarrToZarr

    singles = []
    for day in range(12):
        path = os.path.join(d, f"day{day:02d}.nc")
        with netCDF4.Dataset(path, "w") as ds:
            ds.createDimension("time", None)
            ds.createDimension("x", 8)
            tv = ds.createVariable("time", "f8", ("time",))
            tv.units = "days since 2000-01-01"
            tv[:] = [day * 2.0, day * 2.0 + 1]
            ds.createVariable("x", "f4", ("x",))[:] = np.arange(8)
            v = ds.createVariable("v", "f4", ("time", "x"), zlib=True, chunksizes=(1, 8))
            v[:] = np.arange(16, dtype="f4").reshape(2, 8) + 100 * day
        singles.append(SingleHdf5ToZarr(path, inline_threshold=0).translate())
    combined = MultiZarrToZarr(singles, concat_dims=["time"], identical_dims=["x"]).translate()
    with open(os.path.join(d, "combined.json"), "w") as f:
        json.dump(combined, f)


def compare(url, path):
    import netCDF4

    fails = 0
    with netCDF4.Dataset(url) as got, netCDF4.Dataset(path) as want:
        for name, w in want.variables.items():
            g = got.variables.get(name)
            if g is None:
                print(f"FAIL {name}: missing")
                fails += 1
                continue
            problems = []
            if g.dimensions != w.dimensions:
                problems.append(f"dimensions {g.dimensions} != {w.dimensions}")
            # Byte order aside: Zarr keeps netCDF-3's big-endian dtype, which the real library
            # reports as native for a classic file.
            if g.dtype.newbyteorder("=") != w.dtype.newbyteorder("="):
                problems.append(f"type {g.dtype} != {w.dtype}")
            a, b = np.ma.filled(g[:], -1), np.ma.filled(w[:], -1)
            if a.shape != b.shape or not np.array_equal(a, b):
                problems.append("values differ")
            for att in w.ncattrs():
                if att != "_FillValue" and str(w.getncattr(att)) != str(g.getncattr(att) if att in g.ncattrs() else None):
                    problems.append(f"attribute {att}")
            print(("FAIL " if problems else "ok   ") + name + (": " + "; ".join(problems) if problems else ""))
            fails += bool(problems)
    sys.exit(1 if fails else 0)


def walk(group, prefix=""):
    yield from ((prefix + name, v) for name, v in group.variables.items())
    for name, g in group.groups.items():
        yield from walk(g, f"{prefix}{name}/")


def written(ref_set, path, endpoint=None):
    import fsspec
    import netCDF4
    import xarray as xr
    import zarr

    s3 = {"client_kwargs": {"endpoint_url": endpoint}} if endpoint else {}
    with fsspec.open(ref_set, "rb", **s3) as f:
        doc = json.load(f)
    refs, templates = doc.get("refs", doc), doc.get("templates", {})

    def target(v):
        url = v[0]
        for k, t in templates.items():
            url = url.replace("{{%s}}" % k, t)
        return url

    pointing = [k for k, v in refs.items() if isinstance(v, list)]
    into_source = [k for k in pointing if len(refs[k]) == 3 and target(refs[k]).endswith(os.path.basename(path))]
    if endpoint:
        # Every target an S3 object, reached with remote_options (zarr-python needs the
        # asynchronous file system).
        remote = {"remote_protocol": "s3", "remote_options": {**s3, "asynchronous": True}}
        store = zarr.storage.FsspecStore(fsspec.filesystem("reference", fo=doc, asynchronous=True, **remote), read_only=True, path="")
    else:
        store = fsspec.filesystem("reference", fo=doc).get_mapper("")
    root = zarr.open_group(store, mode="r")
    fails = 0
    with netCDF4.Dataset(path) as want:
        want.set_auto_maskandscale(False)
        ds = xr.open_dataset(store, engine="zarr", consolidated=False, mask_and_scale=False, decode_times=False)
        for name, w in walk(want):
            b = np.asarray(w[:])
            a = np.asarray(root[name][:])
            ok = a.shape == b.shape and np.array_equal(a, b)
            if "/" not in name:
                ok = ok and np.array_equal(ds[name].values, b)
            print(("ok   " if ok else "FAIL ") + name)
            fails += not ok
    print(f"references {len(into_source)} into the file, {len(pointing) - len(into_source)} to other objects, {len(refs)} keys")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    {
        "make": lambda: make(sys.argv[2]),
        "compare": lambda: compare(sys.argv[2], sys.argv[3]),
        "written": lambda: written(sys.argv[2], sys.argv[3], *sys.argv[4:5]),
    }[sys.argv[1]]()

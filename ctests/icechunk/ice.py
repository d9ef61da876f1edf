"""Icechunk repositories for the icechunk suite, made and read by icechunk-python (1.1.x:
repositories of spec 1) with xarray and zarr-python, never by our library.

  make DIR             a repository DIR/py.repo written by xarray: variables and a group in a
                       commit tagged v1, main moved on by a second commit, a branch dev from v1
                       with a third; and the same data as netCDF files (v1.nc, main.nc, dev.nc)
  compare URL FILE     URL read through netCDF4-python (under the preload library) equals FILE
                       (every variable in every group: dimensions, type, values, attributes)
  read REPO REF FILE   the repository at REF (a branch, or tag:NAME) read by icechunk-python +
                       xarray equals FILE (read by netCDF4-python's own netcdf-c)
  history REPO [BRANCH]  the branch's commit messages, newest first, one per line
  snapshot REPO REF    the snapshot id REF (a branch or tag:NAME) points at
  value REPO REF PATH INDEX  one value of an array, read by zarr-python (INDEX: i,j,...)
  virtual DIR          DIR/virt/data.nc (netCDF-4, contiguous) and DIR/virt.repo, whose arrays'
                       chunks are virtual references into it (a container file://DIR/virt/)
"""

import sys

import numpy as np

S3 = {}


def storage(repo):
    import icechunk

    # Its local storage warns on every open that it takes no concurrent commits from it.
    icechunk.set_logs_filter("error")
    if repo.startswith("s3://"):
        bucket, _, prefix = repo[5:].partition("/")
        return icechunk.s3_storage(
            bucket=bucket,
            prefix=prefix,
            endpoint_url=S3["endpoint"],
            allow_http=True,
            force_path_style=True,
            region="us-east-1",
            access_key_id="test",
            secret_access_key="test",
        )
    return icechunk.local_filesystem_storage(repo)


def session(repo, ref):
    import icechunk

    r = icechunk.Repository.open(storage(repo))
    if ref.startswith("tag:"):
        return r, r.readonly_session(tag=ref[4:])
    return r, r.readonly_session(branch=ref)


def datasets(scale, offset):
    import xarray as xr

    time = np.arange(6, dtype="f8")
    lat = np.linspace(-60, 60, 10).astype("f4")
    lon = np.linspace(0, 350, 12).astype("f4")
    t = (np.arange(6 * 10 * 12, dtype="f4").reshape(6, 10, 12) * scale + offset).astype("f4")
    # From 1: 0 is the Zarr fill value of an int array xarray writes, which ncdump shows as _.
    n = (np.arange(1, 6 * 10 + 1, dtype="i4").reshape(6, 10) * int(scale) + int(offset)).astype("i4")
    root = xr.Dataset(
        {
            "t": (("time", "lat", "lon"), t, {"units": "K", "long_name": "temperature"}),
            "n": (("time", "lat"), n, {"units": "1"}),
        },
        coords={"time": ("time", time, {"units": "days since 2000-01-01"}), "lat": ("lat", lat), "lon": ("lon", lon)},
        attrs={"title": "icechunk suite", "version": f"{scale}/{offset}"},
    )
    sub = xr.Dataset({"s": (("x",), (np.arange(7, dtype="f8") * scale + offset), {"units": "m"})}, attrs={"where": "sub"})
    return root, sub


def encode(ds):
    # Chunks smaller than the arrays, so commits touch several chunk objects each.
    return {name: {"chunks": tuple(max(1, s // 2) for s in v.shape)} for name, v in ds.data_vars.items()}


def write(store, scale, offset, mode):
    root, sub = datasets(scale, offset)
    enc = encode(root) if mode == "w" else None
    root.to_zarr(store, mode=mode, zarr_format=3, consolidated=False, encoding=enc)
    sub.to_zarr(store, group="sub", mode=mode, zarr_format=3, consolidated=False, encoding=encode(sub) if mode == "w" else None)


def as_netcdf(path, scale, offset):
    root, sub = datasets(scale, offset)
    root.to_netcdf(path, format="NETCDF4")
    sub.to_netcdf(path, mode="a", group="sub", format="NETCDF4")


def make(d):
    import icechunk

    repo = icechunk.Repository.create(storage(f"{d}/py.repo"))
    s = repo.writable_session("main")
    write(s.store, 1.0, 0.0, "w")
    v1 = s.commit("v1: written by xarray")
    repo.create_tag("v1", v1)
    as_netcdf(f"{d}/v1.nc", 1.0, 0.0)
    s = repo.writable_session("main")
    write(s.store, 2.0, 0.0, "r+")
    s.commit("v2: every value doubled")
    as_netcdf(f"{d}/main.nc", 2.0, 0.0)
    repo.create_branch("dev", v1)
    s = repo.writable_session("dev")
    write(s.store, 1.0, 1000.0, "r+")
    s.commit("dev: 1000 added")
    as_netcdf(f"{d}/dev.nc", 1.0, 1000.0)
    print(v1)


def refer(repo, path, url, message):
    """One commit of arrays v and w whose one chunk each is a reference into `url`, the netCDF
    file at `path` (read with h5py for its contiguous data's offsets)."""
    import h5py
    import zarr

    session = repo.writable_session("main")
    root = zarr.group(session.store)
    with h5py.File(path) as h5:
        for name, dims in (("v", ["y", "x"]), ("w", ["x"])):
            var = h5[name]
            root.create_array(name, shape=var.shape, chunks=var.shape, dtype=var.dtype, compressors=None,
                              fill_value=0, dimension_names=dims, attributes=({"units": "K"} if name == "v" else {}))
            key = f"{name}/c/" + "/".join("0" for _ in var.shape)
            session.store.set_virtual_ref(key, url, offset=var.id.get_offset(), length=var.id.get_storage_size())
    session.commit(message)


def virtual(d):
    """What VirtualiZarr does, by hand: arrays whose one chunk each is a byte range of a file."""
    import os

    import icechunk
    import netCDF4

    os.makedirs(f"{d}/virt", exist_ok=True)
    path = f"{d}/virt/data.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("y", 20)
        ds.createDimension("x", 30)
        v = ds.createVariable("v", "f4", ("y", "x"), contiguous=True)
        v[:] = np.arange(600, dtype="f4").reshape(20, 30) / 4
        v.units = "K"
        w = ds.createVariable("w", "i2", ("x",), contiguous=True)
        w[:] = np.arange(30, dtype="i2") - 7
    prefix = f"file://{d}/virt/"
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(prefix, icechunk.local_filesystem_store(f"{d}/virt/")))
    repo = icechunk.Repository.create(storage(f"{d}/virt.repo"), config, authorize_virtual_chunk_access={prefix: None})
    refer(repo, path, f"{prefix}data.nc", "virtual references into data.nc")


def virtual_s3(d, endpoint):
    """The arrays of `virtual`, their chunks references into the same file as an S3 object
    (s3://vsrc/src/data.nc on the server at `endpoint`), in a local repository."""
    import boto3
    import icechunk

    path = f"{d}/virt/data.nc"
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")
    s3.create_bucket(Bucket="vsrc")
    s3.upload_file(path, "vsrc", "src/data.nc")
    prefix = "s3://vsrc/src/"
    config = icechunk.RepositoryConfig.default()
    store = icechunk.s3_store(region="us-east-1", endpoint_url=endpoint, allow_http=True, s3_compatible=True, force_path_style=True)
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(prefix, store))
    repo = icechunk.Repository.create(storage(f"{d}/virts3.repo"), config, authorize_virtual_chunk_access={prefix: None})
    refer(repo, path, f"{prefix}data.nc", "virtual references into an S3 object")


def walk(group, prefix=""):
    yield from ((prefix + name, v) for name, v in group.variables.items())
    for name, g in group.groups.items():
        yield from walk(g, f"{prefix}{name}/")


def compare(url, path):
    import netCDF4

    fails = 0
    with netCDF4.Dataset(url) as got, netCDF4.Dataset(path) as want:
        mine = dict(walk(got))
        for name, w in walk(want):
            g = mine.get(name)
            if g is None:
                print(f"FAIL {name}: missing")
                fails += 1
                continue
            problems = []
            if g.dimensions != w.dimensions:
                problems.append(f"dimensions {g.dimensions} != {w.dimensions}")
            if g.dtype != w.dtype:
                problems.append(f"type {g.dtype} != {w.dtype}")
            # Stored values, unmasked: a Zarr array always has a fill value (netcdf-c reports
            # it as _FillValue), the netCDF file of the same data only where xarray set one.
            g.set_auto_maskandscale(False)
            w.set_auto_maskandscale(False)
            a, b = g[:], w[:]
            if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
                problems.append("values differ")
            for att in w.ncattrs():
                if att != "_FillValue" and str(w.getncattr(att)) != str(g.getncattr(att) if att in g.ncattrs() else None):
                    problems.append(f"attribute {att}")
            print(("FAIL " if problems else "ok   ") + name + (": " + "; ".join(problems) if problems else ""))
            fails += bool(problems)
    sys.exit(1 if fails else 0)


def read(repo, ref, path):
    import netCDF4
    import zarr

    _, s = session(repo, ref)
    root = zarr.open_group(s.store, mode="r")
    fails = 0
    with netCDF4.Dataset(path) as want:
        for name, w in walk(want):
            try:
                a = root[name][...]
            except KeyError:
                print(f"FAIL {name}: missing")
                fails += 1
                continue
            b = w[:]
            ok = a.shape == b.shape and np.array_equal(np.asarray(a), np.ma.filled(b, 0))
            print(("ok   " if ok else "FAIL ") + name)
            fails += not ok
    sys.exit(1 if fails else 0)


def history(repo, branch="main"):
    r = __import__("icechunk").Repository.open(storage(repo))
    print("\n".join(snap.message for snap in r.ancestry(branch=branch)))


def snapshot(repo, ref):
    r = __import__("icechunk").Repository.open(storage(repo))
    print(r.lookup_tag(ref[4:]) if ref.startswith("tag:") else r.lookup_branch(ref))


def offset(repo, ref, ncfile):
    """How far `t` at `ref` is from `t` in the netCDF file `ncfile`: one number when every
    value is off by the same amount (a whole commit), else every distinct difference."""
    import netCDF4
    import zarr

    _, s = session(repo, ref)
    got = np.asarray(zarr.open_group(s.store, mode="r")["t"][...], dtype="f8")
    with netCDF4.Dataset(ncfile) as ds:
        want = np.asarray(ds["t"][...], dtype="f8")
    print(" ".join(str(v) for v in np.unique(np.round(got - want, 6))))


def value(repo, ref, path, index):
    import zarr

    _, s = session(repo, ref)
    arr = zarr.open_group(s.store, mode="r")[path]
    print(arr[tuple(int(i) for i in index.split(","))].item())


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--s3":
        S3["endpoint"] = args[1]
        args = args[2:]
    cmd, rest = args[0], args[1:]
    {"make": make, "compare": compare, "read": read, "history": history, "snapshot": snapshot, "value": value, "offset": offset, "virtual": virtual,
     "virtual_s3": virtual_s3}[cmd](*rest)

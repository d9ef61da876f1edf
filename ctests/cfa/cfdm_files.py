"""CF aggregation files written by cfdm (PyPI), and ours read by cfdm, for check-cfa.
usage: cfdm_files.py make <dir>   fragments, aggregation files (relative and absolute URIs) and
                                  the values cfdm itself reads from them (<dir>/*.npy)
       cfdm_files.py read <dir>   run under the preload library: netCDF4-python reads the
                                  aggregation files through us; values and names compared
       cfdm_files.py dump <master> <npz>    (preload) the aggregated variables as we read them
       cfdm_files.py ours <master> <npz>    cfdm reads our master: the same values"""
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
op, out = sys.argv[1], sys.argv[2]

if op == "dump":
    import netCDF4

    with netCDF4.Dataset(out) as ds:
        arrays = {n: np.ma.filled(v[...].astype("f8"), np.nan) for n, v in ds.variables.items() if len(v.dimensions) >= 2}
    np.savez(sys.argv[3], **arrays)
    print(f"dumped {sorted(arrays)}")
    sys.exit(0)
if op == "ours":
    import cfdm

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from pycheck import check, finish

    want = np.load(sys.argv[3])
    # cfdm resolves relative fragment URIs against its working directory: our masters name
    # fragments in full, so it reads them from anywhere (here from /).
    path = os.path.abspath(out)
    os.chdir("/")
    fields = {f.nc_get_variable(): f for f in cfdm.read(path)}
    for name in want.files:
        check(name in fields, f"cfdm sees {name} (it sees {sorted(fields)})")
        if name in fields:
            got = np.ma.filled(np.ma.asarray(fields[name].array).astype("f8"), np.nan)
            check(got.shape == want[name].shape, f"{name}: shape {got.shape}")
            check(np.array_equal(got, want[name], equal_nan=True), f"{name}: values")
    sys.exit(finish("cfdm reads our CF aggregation master"))
if op == "make":
    import cfdm

    # Four fragments of q(lat, lon): two along lat, each split in two along lon? cfdm joins
    # along one axis at a time: lat first, then the joined halves along lon.
    parts = []
    for i in range(2):
        f = cfdm.example_field(0).copy()
        f.data[...] = np.arange(40).reshape(5, 8) * 1.5 + 100 * i
        cfdm.write(f, os.path.join(out, f"frag{i}.nc"))
        parts.append(cfdm.read(os.path.join(out, f"frag{i}.nc"), cfa_write="field")[0])
    agg = cfdm.Field.concatenate(parts, axis=0)
    cwd = os.getcwd()
    os.chdir(out)
    cfdm.write(agg, "agg_rel.nc", cfa={"constructs": "field", "uri": "relative"})
    cfdm.write(agg, "agg_abs.nc", cfa={"constructs": "field", "uri": "absolute"})
    # (cfdm resolves relative URIs against the working directory: read from beside them.)
    for name in ("agg_rel", "agg_abs"):
        q = cfdm.read(name + ".nc")[0]
        np.save(name + ".npy", np.asarray(q.array))
    os.chdir(cwd)
    print("cfdm wrote CF aggregation files")
else:
    import netCDF4

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from pycheck import check, finish

    for name in ("agg_rel", "agg_abs"):
        want = np.load(os.path.join(out, name + ".npy"))
        with netCDF4.Dataset(os.path.join(out, name + ".nc")) as ds:
            q = ds["q"]
            check(q.dimensions == ("lat", "lon"), f"{name}: dimensions {q.dimensions}")
            check(np.array_equal(q[:], want), f"{name}: values")
            check(np.array_equal(q[3:7, 2:8:3], want[3:7, 2:8:3]), f"{name}: a window across the fragment edge")
            hidden = [v for v in ds.variables if v.startswith("fragment_")] + [d for d in ds.dimensions if d.startswith("a_")]
            check(not hidden, f"{name}: bookkeeping visible: {hidden}")
            check("aggregated_data" not in q.ncattrs() and "aggregated_dimensions" not in q.ncattrs(), f"{name}: attributes {q.ncattrs()}")
            check(q.standard_name == "specific_humidity", f"{name}: attributes kept")
    sys.exit(finish("cfdm's CF aggregation files read through nczarr-rs"))

"""Our CFA-0.5 and CFA-0.4 masters laid out as S3netCDF4 lays out its own (the fixtures in
ctests/fixtures/s3netcdf4), read raw with netCDF4-python (no preload).
usage: layout.py <ours.nca> <fixture.nca> <0.5|0.4>"""
import json
import os
import re
import sys

import netCDF4

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pycheck import check, finish

ours_path, fixture_path, version = sys.argv[1:4]
stem = os.path.splitext(os.path.basename(ours_path))[0]


def shape_of(group, name):
    return tuple(group[name].dimensions), group[name].dtype


with netCDF4.Dataset(ours_path) as ours, netCDF4.Dataset(fixture_path) as fixture:
    check(ours.Conventions.split()[-1] == f"CFA-{version}", f"Conventions {ours.Conventions!r}")
    check(fixture.Conventions == f"CFA-{version}", "the fixture is the version compared")
    # Fragments are named in full (absolute paths, as S3netCDF4 writes them), so any reader
    # opens them from any working directory.
    absdir = re.escape(os.path.dirname(os.path.abspath(ours_path)))
    for name in ("tas",):
        v, f = ours[name], fixture[name]
        check(v.dimensions == () and f.dimensions == (), f"{name}: a scalar placeholder")
        check(v.cf_role == f.cf_role == "cfa_variable", f"{name}: cf_role")
        check(v.cfa_dimensions == "time lat lon", f"{name}: cfa_dimensions {v.cfa_dimensions!r}")
        if version == "0.5":
            check(v.cfa_group == f"cfa_{name}" and f.cfa_group == f"cfa_{name}", f"{name}: cfa_group")
            g, h = ours.groups[f"cfa_{name}"], fixture.groups[f"cfa_{name}"]
            check(sorted(g.dimensions) == sorted(h.dimensions), f"partition dimensions {sorted(g.dimensions)}")
            check(sorted(g.variables) == sorted(h.variables), f"partition variables {sorted(g.variables)}")
            for pv in h.variables:
                check(shape_of(g, pv)[0] == shape_of(h, pv)[0], f"{pv}: dimensions {g[pv].dimensions} vs {h[pv].dimensions}")
                check(g[pv].dtype == h[pv].dtype, f"{pv}: type {g[pv].dtype} vs {h[pv].dtype}")
            check(g["pmdimensions"][...] == "time, lat, lon", "pmdimensions")
            files = [x for x in g["file"][...].ravel() if x]
            check(len(files) > 0 and all(re.fullmatch(rf"{absdir}/{stem}/{stem}\.{name}\.\d+\.\d+\.\d+\.nc", x) for x in files), f"file names {files[:2]}")
            check(set(g["format"][...].ravel()) <= {"NETCDF4", ""}, "format")
            check(set(g["ncvar"][...].ravel()) <= {name, ""}, "ncvar")
            loc = g["location"][...]
            check(loc.shape[-1] == 2 and (loc[..., 1] > loc[..., 0]).all(), "half-open locations")
        else:
            a, b = json.loads(v.cfa_array), json.loads(f.cfa_array)
            check(sorted(a) == sorted(b), f"cfa_array keys {sorted(a)}")
            check(a["pmdimensions"] == ["time", "lat", "lon"], "pmdimensions")
            pa, pb = a["Partitions"][0], b["Partitions"][0]
            check(sorted(pa) == sorted(pb) and sorted(pa["subarray"]) == sorted(pb["subarray"]), f"partition keys {sorted(pa)}")
            for p in a["Partitions"]:
                s = p["subarray"]
                check(re.fullmatch(rf"{absdir}/{stem}/{stem}\.{name}\.\d+\.\d+\.\d+\.nc", s["file"]) is not None, f"file {s['file']}")
                check(s["format"] == "NETCDF4" and s["ncvar"] == name, "format, ncvar")
                # Inclusive ranges, as the shape says.
                check([hi - lo + 1 for lo, hi in p["location"]] == s["shape"], f"location {p['location']} vs shape {s['shape']}")
            # Each fragment file: the variable over its own dimensions, of the shape the master says.
            for p in a["Partitions"]:
                path = os.path.join(os.path.dirname(ours_path), p["subarray"]["file"])
                with netCDF4.Dataset(path) as frag:
                    check(list(frag[name].shape) == p["subarray"]["shape"], f"{path}: shape")
                    check(frag[name].dimensions == ("time", "lat", "lon"), f"{path}: dimensions")
sys.exit(finish(f"our CFA-{version} master laid out as S3netCDF4's"))

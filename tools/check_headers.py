#!/usr/bin/env python3
"""The generated public headers declare only netcdf-c's names.

cbindgen exports every `pub` item it can see; a crate-internal constant or type that slips
into include/ collides with names in C programs (a program may well define its own `LINE`).
Every macro, typedef and function in include/*.h must be in netcdf-c's namespace.
"""
import pathlib
import re
import sys

ALLOWED = re.compile(
    r"^(nc|NC|H5Z_FILTER_|H5_SZIP_|FILL_|MAX_NC_|MAX_VAR_DIMS$|_FillValue$|_NETCDF_|NETCDF_|"
    r"EXTERNL$|MSC_EXTRA$|DIM_WITHOUT_VARIABLE$)"
)
include = pathlib.Path(__file__).resolve().parent.parent / "include"
problems = []
for header in sorted(include.glob("*.h")):
    text = header.read_text()
    names = re.findall(r"^#\s*define\s+([A-Za-z_0-9]+)", text, re.M)
    names += re.findall(r"^typedef\s+(?:struct\s+\w+\s+|enum\s+\w+\s+)?[^;{]*?(\w+);", text, re.M)
    names += re.findall(r"^}\s*(\w+);", text, re.M)
    names += re.findall(r"^(\w+)\(", text, re.M)
    for name in sorted(set(names)):
        if not ALLOWED.match(name):
            problems.append(f"include/{header.name}: `{name}` is not a netcdf-c name (make it pub(crate) or exclude it in cbindgen.toml)")
for p in problems:
    print(p)
if problems:
    sys.exit(f"check_headers: {len(problems)} foreign name(s) in the public headers")
print("check_headers: every name in include/ is netcdf-c's")

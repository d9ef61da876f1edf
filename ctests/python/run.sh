#!/bin/sh
# Interoperability with the Python Zarr world: zarr-python and xarray read what we write;
# we read what they write.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build="$top/build"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 -c "import zarr, xarray, numcodecs, netCDF4" || { echo "missing Python packages (pip install zarr xarray numcodecs netCDF4)"; exit 1; }
cc -std=c11 -I"$top/include" -o "$build/write_interop" "$top/ctests/tools/write_interop.c" -L"$build" -lnetcdf -Wl,-rpath,"$build"
fail=0
"$build/write_interop" "$scratch" > "$scratch/urls.txt" || fail=1
(cd "$top/ctests" && python3 py_read_ours.py < "$scratch/urls.txt") || fail=1
(cd "$top/ctests" && python3 py_write_theirs.py) || fail=1
(cd "$top/ctests" && python3 py_modify_theirs.py) || fail=1
mkdir -p "$scratch/nc4py"
(cd "$top/ctests" && LD_PRELOAD="$build/libnczarr_preload.so" python3 py_netcdf4_preload.py "$scratch/nc4py") || fail=1
exit $fail

#!/bin/sh
# Interoperability with the Python Zarr world: zarr-python and xarray read what we write;
# we read what they write. One case per direction; each prints its checks' count, and a failed
# check's line (FAILED: what) above it.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
python3 -c "import zarr, xarray, numcodecs, netCDF4" || { echo "missing Python packages (sh ctests/ensure_deps.sh)"; exit 1; }

# run_py WHAT COMMAND...: runs a checker from ctests/ (stdin passed on), one line for it.
run_py() {
    what="$1"; shift
    if (cd "$top/ctests" && "$@") > "$scratch/py.txt" 2>&1; then
        ok "$(tail -1 "$scratch/py.txt")"
    else
        bad "$what: $(tail -1 "$scratch/py.txt")"
        grep -v "passed, .* failed$" "$scratch/py.txt" | tail -30
    fi
}

# 1. zarr-python and xarray read every dataset write_interop writes (directory, zip,
#    consolidated, pure Zarr).
if case_ "1-zarr-python-reads-ours"; then
cc -std=c11 -I"$top/include" -o "$build/write_interop" "$top/ctests/tools/write_interop.c" -L"$build" -lnetcdf -Wl,-rpath,"$build" || bad "write_interop build"
"$build/write_interop" "$scratch" > "$scratch/urls.txt" && ok "write_interop writes its datasets" || bad "write_interop writes its datasets"
run_py "zarr-python and xarray read ours" python3 py_read_ours.py < "$scratch/urls.txt"
fi

# 2. We read what zarr-python and xarray write.
if case_ "2-we-read-theirs"; then
run_py "we read theirs" python3 py_write_theirs.py
fi

# 3. We modify their datasets, and they read the result.
if case_ "3-we-modify-theirs"; then
run_py "we modify theirs" python3 py_modify_theirs.py
fi

# 4. netCDF4-python, run with the preload library, on NCZarr.
if case_ "4-netcdf4-python-preload"; then
mkdir -p "$scratch/nc4py"
run_py "netCDF4-python through the preload library" env LD_PRELOAD="$pre" python3 py_netcdf4_preload.py "$scratch/nc4py"
fi

echo "python tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

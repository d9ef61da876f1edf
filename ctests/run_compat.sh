#!/bin/sh
# netcdf-c as the contract: each ctests/compat/t_*.c is built against our library and against
# netcdf-c 4.10.1 (the netCDF4 wheel's libnetcdf, with its filter plugins) and must pass with both.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/build/ctests/compat"
mkdir -p "$out"
cc=${CC:-cc}
eval "$(python3 - <<'PY'
import glob, os, netCDF4
d = os.path.join(os.path.dirname(os.path.dirname(netCDF4.__file__)), "netcdf4.libs")
print(f"wheel_dir='{d}'")
print(f"wheel='{glob.glob(os.path.join(d, 'libnetcdf-*.so*'))[0]}'")
print(f"plugins='{os.path.join(os.path.dirname(netCDF4.__file__), 'plugins')}'")
PY
)"
pass=0
fail=0
for src in "$top"/ctests/compat/t_*.c; do
    name=$(basename "$src" .c)
    flags="-std=c11 -Wall -Werror -D_GNU_SOURCE -I$top/include"
    $cc $flags -o "$out/$name.ours" "$src" -L"$top/build" -lnetcdf -lm -Wl,-rpath,"$top/build"
    $cc $flags -o "$out/$name.ref" "$src" "$wheel" -lm -Wl,-rpath,"$wheel_dir"
    for which in ours ref; do
        scratch=$(mktemp -d)
        if HDF5_PLUGIN_PATH="$plugins" "$out/$name.$which" "$scratch" > "$out/$name.$which.log" 2>&1; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
        fi
        printf '%s: ' "$which"
        grep -E "library:|FAILED|passed" "$out/$name.$which.log" | tr '\n' ' '
        echo
        rm -rf "$scratch"
    done
done
echo "netcdf-c contract tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

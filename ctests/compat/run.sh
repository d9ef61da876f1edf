#!/bin/sh
# netcdf-c as the contract: each ctests/compat/t_*.c is built against our library and against
# netcdf-c 4.10.1 (the netCDF4 wheel's libnetcdf, with its filter plugins) and must pass with both.
# One line per program and library (`ok N - t_x (ours)`); `T=<text>` runs only the programs
# whose name contains <text>.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
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
    case "$name" in *"${T:-}"*) ;; *) continue ;; esac
    flags="-std=c11 -Wall -Werror -D_GNU_SOURCE -I$top/include"
    $cc $flags -o "$out/$name.ours" "$src" -L"$top/build" -lnetcdf -lm -Wl,-rpath,"$top/build"
    $cc $flags -o "$out/$name.ref" "$src" "$wheel" -lm -Wl,-rpath,"$wheel_dir"
    for which in ours ref; do
        scratch=$(mktemp -d)
        if HDF5_PLUGIN_PATH="$plugins" "$out/$name.$which" "$scratch" > "$out/$name.$which.log" 2>&1; then
            pass=$((pass + 1))
            printf 'ok %d - %s (%s): ' $((pass + fail)) "$name" "$which"
        else
            fail=$((fail + 1))
            printf 'not ok %d - %s (%s): ' $((pass + fail)) "$name" "$which"
        fi
        grep -E "library:|FAILED|passed" "$out/$name.$which.log" | tr '\n' ' '
        echo
        rm -rf "$scratch"
    done
done
# Strings longer than the default width: we write (dir, zip), we read every byte back, and
# netcdf-c 4.10.1 reads the directory store (its wheel has no zip support) byte for byte.
case wide_strings in *"${T:-}"*)
flags="-std=c11 -Wall -Werror -D_GNU_SOURCE -I$top/include"
$cc $flags -o "$out/wide_strings.ours" "$top/ctests/compat/wide_strings.c" -L"$top/build" -lnetcdf -Wl,-rpath,"$top/build"
$cc $flags -o "$out/wide_strings.ref" "$top/ctests/compat/wide_strings.c" "$wheel" -Wl,-rpath,"$wheel_dir"
scratch=$(mktemp -d)
for kind in file zip; do
    if "$out/wide_strings.ours" write "file://$scratch/wide.$kind#mode=nczarr,$kind" > "$out/wide.$kind.log" 2>&1; then
        pass=$((pass + 1)); echo "ok $((pass + fail)) - wide_strings: ours writes and reads ($kind)"
    else
        fail=$((fail + 1)); echo "not ok $((pass + fail)) - wide_strings: ours writes and reads ($kind)"; cat "$out/wide.$kind.log"
    fi
done
if "$out/wide_strings.ref" read "file://$scratch/wide.file#mode=nczarr,file" > "$out/wide.ref.log" 2>&1; then
    pass=$((pass + 1)); echo "ok $((pass + fail)) - wide_strings: netcdf-c 4.10.1 reads ours"
else
    fail=$((fail + 1)); echo "not ok $((pass + fail)) - wide_strings: netcdf-c 4.10.1 reads ours"; cat "$out/wide.ref.log"
fi
rm -rf "$scratch"
;; esac
echo "netcdf-c contract tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/bin/sh
# make demo: writes a dataset through the C API onto local storage, then shows it as
# netCDF (Debian's ncdump under LD_PRELOAD, when installed) and as plain Zarr (the JSON
# objects on disk; zarr-python's view when installed).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
out="$build/demo"
rm -rf "$out"
mkdir -p "$out"
cc -std=c11 -I"$top/include" -o "$build/demo_writer" "$top/ctests/tools/demo.c" -L"$build" -lnetcdf -Wl,-rpath,"$build"
url="file://$out/demo.zarr#mode=nczarr,file"
"$build/demo_writer" "$url"
echo
echo "== objects on disk ($out/demo.zarr)"
(cd "$out/demo.zarr" && find . -type f | LC_ALL=C sort)
echo
echo "== temperature/.zarray"
cat "$out/demo.zarr/temperature/.zarray"
echo
if command -v ncdump > /dev/null; then
    echo
    echo "== LD_PRELOAD=$build/libnczarr_preload.so ncdump -h '$url'"
    LD_PRELOAD="$build/libnczarr_preload.so" ncdump -h "$url"
fi
if python3 -c "import zarr" 2> /dev/null; then
    echo
    echo "== zarr-python"
    python3 -c "import zarr,sys; g=zarr.open_group(sys.argv[1], mode='r', zarr_format=2); print(g.tree()); print(dict(g['temperature'].attrs))" "$out/demo.zarr"
fi

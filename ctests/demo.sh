#!/bin/sh
# make demo: writes a dataset through the C API onto local storage (three time steps of a
# field), then shows it as netCDF (Debian's ncdump under LD_PRELOAD, values included), as the
# storage objects with their sizes, and as plain Zarr (zarr-python's view of the same values);
# a missing ncdump or zarr-python is named, with the way to get it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
out="$build/demo"
rm -rf "$out"
mkdir -p "$out"
cc -std=c11 -I"$top/include" -o "$build/demo_writer" "$top/ctests/tools/demo.c" -L"$build" -lnetcdf -lm -Wl,-rpath,"$build"
url="file://$out/demo.zarr#mode=nczarr,file"
"$build/demo_writer" "$url"
echo
echo "== objects on disk ($out/demo.zarr), bytes and key"
(cd "$out/demo.zarr" && find . -type f -printf '%8s  %P\n' | LC_ALL=C sort -k2)
echo
echo "== temperature/.zarray"
cat "$out/demo.zarr/temperature/.zarray"
echo
echo
if command -v ncdump > /dev/null; then
    echo "== LD_PRELOAD=$build/libnczarr_preload.so ncdump '$url'"
    LD_PRELOAD="$build/libnczarr_preload.so" ncdump "$url"
else
    echo "== (no ncdump here: 'apt-get install netcdf-bin', or 'make deps', shows the dataset as netCDF)"
fi
if ! python3 -c "import zarr" 2> /dev/null; then
    echo
    echo "== (no zarr-python for $(command -v python3): 'make deps' installs it into .venv and shows the dataset as Zarr)"
else
    echo
    echo "== zarr-python"
    python3 - "$out/demo.zarr" <<'PY'
import sys, zarr, numpy
g = zarr.open_group(sys.argv[1], mode="r", zarr_format=2)
print(g.tree())
t = g["temperature"]
numpy.set_printoptions(precision=1, suppress=True, linewidth=100)
print("temperature", t.shape, t.dtype, dict(t.attrs))
print(t[:])
print("time", g["time"][:], "lat", g["lat"][:], "lon", g["lon"][:])
PY
fi

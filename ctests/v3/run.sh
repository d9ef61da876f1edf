#!/bin/sh
# Zarr v3 (zarr-v3.md): we read what zarr-python 3, xarray and tensorstore write; they read
# what we write; Debian's ncgen/nccopy/ncdump make and read v3 datasets under LD_PRELOAD; a
# sharded hyperslab costs one index read plus the inner chunks it needs.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
python3 -c "import zarr, xarray, tensorstore, numcodecs" || { echo "missing Python packages (pip install zarr xarray tensorstore numcodecs)"; exit 1; }
cc -std=c11 -Wall -Werror -I"$top/include" -o "$build/v3_hyperslab" "$top/ctests/v3/v3_hyperslab.c" -L"$build" -lnetcdf -Wl,-rpath,"$build"
cc -std=c11 -Wall -Werror -I"$top/include" -o "$build/v3write" "$top/ctests/v3/v3write.c" -L"$build" -lnetcdf -Wl,-rpath,"$build"
cc -std=c11 -I"$top/include" -o "$build/ncprobe" "$top/ctests/tools/ncprobe.c" -L"$build" -lnetcdf -Wl,-rpath,"$build"
py_fail=0

# 1. Their stores, read through our C API and by ncdump.
if case_ "1-their-stores-read"; then
mkdir -p "$scratch/theirs"
python3 "$top/ctests/v3/py_theirs3.py" "$scratch/theirs" || py_fail=1
python3 "$top/ctests/v3/py_bad3.py" || py_fail=1
fi

# 2. Our datasets, read by zarr-python, xarray and tensorstore.
if case_ "2-datasets-read-zarr"; then
mkdir -p "$scratch/ours"
"$build/v3write" "$scratch/ours" > /dev/null && ok "v3write" || bad "v3write"
python3 "$top/ctests/v3/py_ours3.py" "$scratch/ours" || py_fail=1
fi

# 3. Real clients: ncgen writes v3, ncdump reads it back as the CDL says; nccopy (which sets
#    NC_NOFILL) copies netCDF-4 to v3 and back.
if case_ "3-real-clients-ncgen"; then
strip() { sed -e '1d' -e '/_NCProperties\|_SuperblockVersion\|_IsNetcdf4\|_Format\|_Codecs\|_Storage\|_ChunkSizes\|_Filter\|_Endianness\|_DeflateLevel\|_Shuffle\|_Fletcher32\|_NoFill/d' "$1"; }
src="$top/ctests/data/debian.cdl"
ncgen -k nc4 -o "$scratch/in.nc" "$src" && ok "ncgen netCDF-4" || bad "ncgen netCDF-4"
ncdump "$scratch/in.nc" > "$scratch/in.cdl"
for store in "nc3.zarr#mode=nczarr,v3,file" "nc3.zip#mode=nczarr,v3,zip"; do
    u="file://$scratch/gen_$store"
    LD_PRELOAD="$pre" ncgen -lb -o "$u" "$src" && ok "ncgen -> $store" || bad "ncgen -> $store"
    LD_PRELOAD="$pre" ncdump "$u" > "$scratch/gen.cdl" 2>&1 || bad "ncdump $store"
    strip "$scratch/in.cdl" > "$scratch/a.cdl"
    strip "$scratch/gen.cdl" > "$scratch/b.cdl"
    same "ncgen -> v3 ($store) reads back as the CDL" "$scratch/a.cdl" "$scratch/b.cdl"
done
cp_url="file://$scratch/cp3.zarr#mode=nczarr,v3,file"
LD_PRELOAD="$pre" nccopy "$scratch/in.nc" "$cp_url" && ok "nccopy netCDF-4 -> v3" || bad "nccopy netCDF-4 -> v3"
LD_PRELOAD="$pre" ncdump "$cp_url" > "$scratch/cp.cdl" 2>&1
strip "$scratch/cp.cdl" > "$scratch/b.cdl"
same "nccopy netCDF-4 -> v3 keeps everything" "$scratch/a.cdl" "$scratch/b.cdl"
LD_PRELOAD="$pre" ncdump -hs "$cp_url" | grep -q '"fill_value"\|temp:_FillValue = -999.f' && ok "fill kept through nccopy" || bad "fill kept through nccopy"
python3 - "$scratch/cp3.zarr" <<'PY' && ok "nccopy output: NC_NOFILL arrays carry a zero fill and nofill=1; xarray opens it" || bad "nccopy output: NC_NOFILL arrays carry a zero fill and nofill=1; xarray opens it"
import json, sys, warnings
import xarray as xr
warnings.simplefilter("ignore")
doc = json.load(open(sys.argv[1] + "/flags/zarr.json"))
assert doc["fill_value"] == 0 and doc["attributes"]["_nczarr_array"]["nofill"] == 1, doc
ds = xr.open_zarr(sys.argv[1], zarr_format=3, consolidated=False)
assert ds["temp"].attrs["units"] == "K" and float(ds["lat"][0]) == float(ds["lat"][0])
PY
LD_PRELOAD="$pre" nccopy -k nc4 "$cp_url" "$scratch/back.nc" && ok "nccopy v3 -> netCDF-4" || bad "nccopy v3 -> netCDF-4"
ncdump "$scratch/back.nc" > "$scratch/back.cdl"
strip "$scratch/back.cdl" > "$scratch/b.cdl"
same "v3 -> netCDF-4 round trip" "$scratch/a.cdl" "$scratch/b.cdl"
LD_PRELOAD="$pre" nccopy "$cp_url" "file://$scratch/cp2.zarr#mode=nczarr,v2,file" && ok "nccopy v3 -> v2" || bad "nccopy v3 -> v2"
LD_PRELOAD="$pre" ncdump "file://$scratch/cp2.zarr#mode=nczarr,file" > "$scratch/v2.cdl" 2>&1
strip "$scratch/v2.cdl" > "$scratch/b.cdl"
same "v3 -> v2 keeps everything" "$scratch/a.cdl" "$scratch/b.cdl"
fi

# 4. netCDF4-python through the preload library writes and reads v3; zarr-python reads it.
if case_ "4-netcdf4-python-through"; then
LD_PRELOAD="$pre" python3 - "$scratch/n4v3.zarr" <<'PY' && ok "netCDF4-python writes and reads v3 through the preload library" || bad "netCDF4-python writes and reads v3 through the preload library"
import sys, warnings
import netCDF4, numpy as np, zarr
warnings.simplefilter("ignore")
u = f"file://{sys.argv[1]}#mode=nczarr,v3,file"
ds = netCDF4.Dataset(u, "w")
ds.createDimension("t", None)
ds.createDimension("x", 3)
v = ds.createVariable("v", "f4", ("t", "x"), zlib=True, complevel=3, fill_value=-1.0)
v.units = "m"
v[0:2, :] = np.arange(6).reshape(2, 3)
s = ds.createVariable("s", str, ("x",))
s[:] = np.array(["a", "bé", ""], dtype=object)
ds.close()
# netCDF4-python re-creates for "a"/"r+" when os.path.exists(name) is false, as it is for a
# URL: append through the bare path (the format is inferred from zarr.json).
ds = netCDF4.Dataset(sys.argv[1], "r+")
ds["v"][2, :] = [7, 8, 9]
ds.close()
ds = netCDF4.Dataset(u)
assert ds["v"][:].tolist() == [[0, 1, 2], [3, 4, 5], [7, 8, 9]] and ds["v"].units == "m", ds["v"][:]
assert ds["s"][:].tolist() == ["a", "bé", ""] and ds["v"].filters()["zlib"] and ds["v"].filters()["complevel"] == 3
ds.close()
g = zarr.open_group(sys.argv[1], mode="r")
assert g["v"][...].tolist() == [[0, 1, 2], [3, 4, 5], [7, 8, 9]] and g["s"][...].tolist() == ["a", "bé", ""]
PY
fi

# 5. netcdf-fortran: the same Fortran 90 round trip, made v3 by NCZARRFORMAT=3 (no code change).
if case_ "5-netcdf-fortran-same"; then
gfortran -I/usr/include -o "$scratch/f90" "$top/ctests/fortran/f90_roundtrip.f90" -lnetcdff || bad "fortran build"
mkdir -p "$scratch/f3"
NCZARRFORMAT=3 LD_PRELOAD="$pre" "$scratch/f90" "$scratch/f3" > /dev/null && [ -f "$scratch/f3/f.file/zarr.json" ] && ok \
    || bad "netcdf-fortran writes and reads v3 (NCZARRFORMAT=3)"
fi

echo "v3 client tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$py_fail" -eq 0 ]

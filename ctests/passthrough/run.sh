#!/bin/sh
# Passthrough (passthrough.md): the preload library in front of Debian's netcdf-c serves Zarr
# itself and hands every other dataset to the real library, in one process and one call
# sequence; the drop-in with NCZARR_FALLBACK_LIB does the same; without a real library the
# drop-in refuses non-Zarr names as specified.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
data="$top/ctests/data"
for tool in ncdump ncgen nccopy; do
    command -v $tool > /dev/null || { echo "missing tool: $tool (apt-get install netcdf-bin)"; exit 1; }
done
real="/usr/lib/$(gcc -print-multiarch)/libnetcdf.so.19"
[ -f "$real" ] || { echo "missing Debian libnetcdf.so.19 (apt-get install libnetcdf19)"; exit 1; }

# 1. Non-Zarr files dump byte-identically with and without the preload library: CDF-1, CDF-2,
#    CDF-5, and netCDF-4/HDF5 with groups, strings, enums, vlens and compression.
if case_ "1-non-zarr-files"; then
for k in classic 64-bit-offset cdf5 nc4; do
    ncgen -k $k -o "$scratch/classic_$k.nc" "$data/pt_classic.cdl" || bad "ncgen -k $k"
done
ncgen -k nc4 -o "$scratch/nc4.nc" "$data/pt_nc4.cdl" || bad "ncgen nc4"
ncgen -k nc4 -o "$scratch/enum.nc" "$data/pt_enum.cdl" || bad "ncgen enum"
for f in classic_classic classic_64-bit-offset classic_cdf5 classic_nc4 nc4 enum; do
    for opt in "" -h -s "-v vals,b" ; do
        case "$f:$opt" in nc4:-v*|enum:-v*) opt="-v time" ;; esac
        [ "$f:$opt" = "enum:-v time" ] && opt="-v v"
        ncdump $opt "$scratch/$f.nc" > "$scratch/plain.cdl" 2>&1
        LD_PRELOAD="$pre" ncdump $opt "$scratch/$f.nc" > "$scratch/pre.cdl" 2>&1
        same "ncdump $opt $f.nc under the preload library" "$scratch/plain.cdl" "$scratch/pre.cdl"
    done
done
fi

# 2. nccopy converts netCDF files into NCZarr (directory and zip) in one process: the real
#    library reads, we write. ncdump of the result equals the input's; zarr-python reads the
#    values; and back from NCZarr to a netCDF-4 file round-trips. CDF-5 input needs -k nc4
#    (nccopy asks for a CDF-5 output, which an NCZarr URL refuses with NC_EINVAL as netcdf-c).
if case_ "2-nccopy-converts-netcdf"; then
for f in nc4 classic_classic classic_cdf5; do
    for kind in file zip; do
        url="file://$scratch/conv_$f.$kind#mode=nczarr,$kind"
        k=""; [ "$f" = classic_cdf5 ] && k="-k nc4"
        LD_PRELOAD="$pre" nccopy $k "$scratch/$f.nc" "$url" && ok "nccopy $f.nc -> $kind" || bad "nccopy $f.nc -> $kind"
        ncdump "$scratch/$f.nc" | sed 1d > "$scratch/want.cdl"
        LD_PRELOAD="$pre" ncdump "$url" | sed 1d > "$scratch/got.cdl"
        same "ncdump of nccopy $f.nc -> NCZarr $kind" "$scratch/want.cdl" "$scratch/got.cdl"
        zipflag=""; [ $kind = zip ] && zipflag=zip
        (cd "$top/ctests" && python3 py_converted.py "$scratch/$f.nc" "$scratch/conv_$f.$kind" $zipflag) && ok "zarr-python values of $f.$kind" || bad "zarr-python values of $f.$kind"
        LD_PRELOAD="$pre" nccopy -k nc4 "$url" "$scratch/back_${f}_$kind.nc" && ok "nccopy NCZarr $kind -> netCDF-4" || bad "nccopy NCZarr $kind -> netCDF-4"
        ncdump "$scratch/back_${f}_$kind.nc" | sed 1d > "$scratch/back.cdl"
        same "NCZarr $kind -> netCDF-4 round trip of $f" "$scratch/want.cdl" "$scratch/back.cdl"
    done
done
# A user-defined type cannot cross into NCZarr: nccopy stops with netcdf-c's message.
LD_PRELOAD="$pre" nccopy "$scratch/enum.nc" "file://$scratch/enum.file#mode=nczarr,file" > "$scratch/enum.txt" 2>&1
grep -q "netcdf-4 operation on netcdf-3 file" "$scratch/enum.txt" && ok || { bad "enum refused by nccopy"; cat "$scratch/enum.txt"; }
# ncgen writes a netCDF-4 file through the real library while preloaded.
LD_PRELOAD="$pre" ncgen -k nc4 -o "$scratch/gen.nc" "$data/pt_nc4.cdl" && ok "ncgen of a plain path under the preload library" || bad "ncgen of a plain path under the preload library"
ncdump "$scratch/gen.nc" > "$scratch/a.cdl"; ncdump "$scratch/nc4.nc" > "$scratch/b.cdl"
sed -i 1d "$scratch/a.cdl" "$scratch/b.cdl"
same "ncgen plain path under preload" "$scratch/b.cdl" "$scratch/a.cdl"
fi

# 3. One C program, both worlds: copies attributes and variables both ways, type equality in
#    all four combinations, interleaved inquiries; hundreds of interleaved opens and closes.
if case_ "3-one-c-program"; then
cc -std=c11 -Wall -I/usr/include -o "$scratch/t_worlds" "$top/ctests/passthrough/t_worlds.c" -lnetcdf || bad "t_worlds build"
mkdir -p "$scratch/w"
LD_PRELOAD="$pre" "$scratch/t_worlds" "$scratch/w" worlds && ok "t_worlds worlds" || bad "t_worlds worlds"
LD_PRELOAD="$pre" "$scratch/t_worlds" "$scratch/w" stress && ok "t_worlds stress" || bad "t_worlds stress"
cp "$scratch/classic_classic.nc" "$scratch/w/collide.nc"
printf 'netcdf c {\ndimensions: x = 4 ;\nvariables: float v(x) ;\ndata: v = 1, 2, 3, 4 ;\n}\n' > "$scratch/c.cdl"
ncgen -k classic -o "$scratch/w/collide.nc" "$scratch/c.cdl"
# Fail closed: the real library's first ncid lands on a slot marked ours.
NCZARR_TEST_CLAIM_SLOT=1 LD_PRELOAD="$pre" "$scratch/t_worlds" "$scratch/w" collide && ok "t_worlds collide" || bad "t_worlds collide"
# The real library's internal calls come back through our exports and are forwarded.
NCTRACING=2 LD_PRELOAD="$pre" "$scratch/t_worlds" "$scratch/w" strided 2> "$scratch/trace.txt" && ok "t_worlds strided" || bad "t_worlds strided"
n=$(grep -c "forward nc_inq_var(" "$scratch/trace.txt")
[ "$n" -gt 0 ] && ok "no internal nc_inq_var calls of the real library were routed" || bad "no internal nc_inq_var calls of the real library were routed"
# Without tracing, forwarding prints nothing.
LD_PRELOAD="$pre" "$scratch/t_worlds" "$scratch/w" strided 2> "$scratch/quiet.txt" > /dev/null
grep -q forward "$scratch/quiet.txt" && bad "forwarding logged without tracing" || ok
fi

# 4. The drop-in: alone, non-Zarr names fail as specified; with NCZARR_FALLBACK_LIB the real
#    library serves them (RTLD_DEEPBIND) and everything above works the same.
if case_ "4-drop-alone-non"; then
LD_LIBRARY_PATH="$build" "$scratch/t_worlds" "$scratch/w" alone && ok "drop-in without a real library" || bad "drop-in without a real library"
for f in classic_classic nc4; do
    ncdump "$scratch/$f.nc" > "$scratch/plain.cdl"
    NCZARR_FALLBACK_LIB="$real" LD_LIBRARY_PATH="$build" ncdump "$scratch/$f.nc" > "$scratch/fb.cdl" 2>&1
    same "drop-in + NCZARR_FALLBACK_LIB: ncdump $f.nc" "$scratch/plain.cdl" "$scratch/fb.cdl"
done
rm -rf "$scratch/w2" && mkdir -p "$scratch/w2"
NCZARR_FALLBACK_LIB="$real" LD_LIBRARY_PATH="$build" "$scratch/t_worlds" "$scratch/w2" worlds && ok "drop-in + fallback: worlds" || bad "drop-in + fallback: worlds"
url="file://$scratch/fb.file#mode=nczarr,file"
NCZARR_FALLBACK_LIB="$real" LD_LIBRARY_PATH="$build" nccopy "$scratch/nc4.nc" "$url" && ok "drop-in + fallback: nccopy" || bad "drop-in + fallback: nccopy"
ncdump "$scratch/nc4.nc" | sed 1d > "$scratch/want.cdl"
LD_LIBRARY_PATH="$build" ncdump "$url" | sed 1d > "$scratch/got.cdl"
same "drop-in + fallback: nccopy result" "$scratch/want.cdl" "$scratch/got.cdl"
fi

# 5. Debian's netCDF4-python under the drop-in: its module takes H5get_libversion from
#    libnetcdf.so.19 (issue 23, item 15). Imports and works alone (system HDF5) for NCZarr,
#    and with NCZARR_FALLBACK_LIB for netCDF-4 files too.
if case_ "5-debian-s-netcdf4"; then
cat > "$scratch/debpy.py" <<'PY'
import sys, netCDF4, numpy
d = sys.argv[1]
assert netCDF4.__hdf5libversion__.count(".") == 2, netCDF4.__hdf5libversion__
names = ["file://%s/deb.zarr#mode=nczarr,file" % d] + (["%s/deb.nc" % d] if sys.argv[2] == "fallback" else [])
for name in names:
    with netCDF4.Dataset(name, "w") as ds:
        ds.createDimension("x", 3)
        ds.createVariable("v", "f4", ("x",))[:] = [1.5, 2.5, 3.5]
    with netCDF4.Dataset(name) as ds:
        assert list(ds["v"][:]) == [1.5, 2.5, 3.5], ds["v"][:]
PY
LD_LIBRARY_PATH="$build" /usr/bin/python3 "$scratch/debpy.py" "$scratch" alone && ok "drop-in: Debian netCDF4-python imports and writes NCZarr" || bad "drop-in: Debian netCDF4-python imports and writes NCZarr"
NCZARR_FALLBACK_LIB="$real" LD_LIBRARY_PATH="$build" /usr/bin/python3 "$scratch/debpy.py" "$scratch" fallback && ok "drop-in + fallback: Debian netCDF4-python, NCZarr and netCDF-4" || bad "drop-in + fallback: Debian netCDF4-python, NCZarr and netCDF-4"
fi

# 6. CDO under the drop-in with Debian's netcdf-c as NCZARR_FALLBACK_LIB. CDO links libhdf5 and
#    reads its global variables, so it holds copies of them: the fallback is then loaded
#    without RTLD_DEEPBIND (which would make it read HDF5's never-set originals, and every
#    netCDF-4 open fail). netCDF-4 reads, writes and copies, and a copy into NCZarr and back.
if case_ "6-cdo-drop-in-fallback"; then
command -v cdo > /dev/null || { bad "missing tool: cdo (sh ctests/ensure_deps.sh)"; }
python3 - "$scratch/grid.nc" << 'PY'
import sys, netCDF4, numpy as np
with netCDF4.Dataset(sys.argv[1], "w", format="NETCDF4") as ds:
    ds.createDimension("time", None)
    ds.createDimension("lat", 3)
    ds.createDimension("lon", 4)
    t = ds.createVariable("time", "f8", ("time",))
    t.units, t.calendar = "days since 2000-01-01", "standard"
    t[:] = [0, 1]
    la = ds.createVariable("lat", "f4", ("lat",))
    la.units, la.standard_name = "degrees_north", "latitude"
    la[:] = [-10, 0, 10]
    lo = ds.createVariable("lon", "f4", ("lon",))
    lo.units, lo.standard_name = "degrees_east", "longitude"
    lo[:] = [0, 90, 180, 270]
    v = ds.createVariable("tas", "f4", ("time", "lat", "lon"))
    v.units = "K"
    v[:] = np.arange(24).reshape(2, 3, 4) + 270
PY
fb() { NCZARR_FALLBACK_LIB="$real" LD_LIBRARY_PATH="$build" "$@"; }
cdo -s outputf,%g "$scratch/grid.nc" > "$scratch/cdo_plain.txt" 2>&1
fb cdo -s outputf,%g "$scratch/grid.nc" > "$scratch/cdo_fb.txt" 2>&1
same "drop-in + fallback: cdo reads a netCDF-4 file as Debian's netcdf-c does" "$scratch/cdo_plain.txt" "$scratch/cdo_fb.txt"
fb cdo -s sinfon "$scratch/grid.nc" > "$scratch/o.txt" 2>&1 && grep -q "tas" "$scratch/o.txt" && ok "drop-in + fallback: cdo sinfon of a netCDF-4 file" || { bad "drop-in + fallback: cdo sinfon"; cat "$scratch/o.txt"; }
fb cdo -s -f nc4 copy "$scratch/grid.nc" "$scratch/cdo_copy.nc" > "$scratch/o.txt" 2>&1 && ok "drop-in + fallback: cdo -f nc4 copy" || { bad "drop-in + fallback: cdo -f nc4 copy"; cat "$scratch/o.txt"; }
fb cdo -s outputf,%g "$scratch/cdo_copy.nc" > "$scratch/cdo_copy.txt" 2>&1
same "drop-in + fallback: cdo's netCDF-4 copy holds the values" "$scratch/cdo_plain.txt" "$scratch/cdo_copy.txt"
fb cdo -s -f nc4 mulc,2 "$scratch/grid.nc" "$scratch/cdo_mul.nc" > "$scratch/o.txt" 2>&1 && fb cdo -s outputf,%g "$scratch/cdo_mul.nc" | head -1 | grep -q "^540" \
    && ok "drop-in + fallback: cdo computes into a new netCDF-4 file" || { bad "drop-in + fallback: cdo mulc"; cat "$scratch/o.txt"; }
fb nccopy "$scratch/grid.nc" "file://$scratch/cdo.zarr#mode=nczarr,file" \
    && fb cdo -s outputf,%g "file://$scratch/cdo.zarr#mode=nczarr,file" > "$scratch/cdo_zarr.txt" 2>&1
same "drop-in + fallback: cdo reads the NCZarr copy" "$scratch/cdo_plain.txt" "$scratch/cdo_zarr.txt"
NCZARR_LOG=1 fb cdo -s sinfon "$scratch/grid.nc" 2>&1 | grep -q "without RTLD_DEEPBIND" && ok "drop-in + fallback: the log says why DEEPBIND was left out" || bad "drop-in + fallback: the log says why DEEPBIND was left out"
fi

echo "passthrough tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

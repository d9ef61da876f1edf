#!/bin/sh
# Lazy opens (issue 37, item 2): netCDF-3 and netCDF-4 files as netcdf-c (ncgen),
# netCDF4-python, h5netcdf (HDF5's old and new chunk indexes), xarray, NCO and CDO write them
# (ctests/lazy/corpus.py), read by our scanners chunk by chunk:
# 1. local files by the drop-in alone (no real netcdf-c): ncdump equal to netcdf-c's (filters
#    from HDF5 plugins too; zstd and blosc, which Debian's netcdf-c cannot read, through
#    netCDF4-python in case 2);
# 2. S3 objects (moto) under the preload library: ncdump equal to netcdf-c's of the local file,
#    every open lazy (fallbacks counted and named), values equal through netCDF4-python;
# 3. what a slice of a big object costs: requests and bytes, against the whole-object read;
# 4. S3 objects by the drop-in alone;
# 5. what the scanners cannot read lazily is read whole (user-defined types), or fails clean
#    (a truncated object);
# 6. plain web servers: netCDF files by ranged GETs, Zarr stores by GET (#mode=nczarr,http).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
for tool in moto_server curl ncdump ncgen ncks cdo; do
    command -v $tool > /dev/null || { echo "missing tool: $tool (sh ctests/ensure_deps.sh)"; exit 1; }
done
python3 -c "import netCDF4, h5netcdf, xarray, boto3" || { echo "missing Python packages (sh ctests/ensure_deps.sh)"; exit 1; }
# Debian's HDF5 filter plugins (bzip2, LZ4) for the corpus's plugin-filtered file: netcdf-c
# needs them to write and read it, we to read it.
export HDF5_PLUGIN_PATH=/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins
[ -f "$HDF5_PLUGIN_PATH/libh5bz2.so" ] && [ -f "$HDF5_PLUGIN_PATH/libh5lz4.so" ] || { echo "missing hdf5-filter-plugin (sh ctests/ensure_deps.sh)"; exit 1; }
# The netCDF4 wheel's plugins (zstd, blosc) after Debian's: the wheel writes and reads the
# corpus's zstd/blosc file with them (we decode both ourselves).
wheel_plugins=$(python3 -c "import netCDF4, os; print(os.path.join(os.path.dirname(netCDF4.__file__), 'plugins'))")
[ -f "$wheel_plugins/lib__nch5zstd.so" ] && [ -f "$wheel_plugins/lib__nch5blosc.so" ] || { echo "missing the netCDF4 wheel's filter plugins in $wheel_plugins"; exit 1; }
export HDF5_PLUGIN_PATH="$HDF5_PLUGIN_PATH:$wheel_plugins"
d="$scratch/lazy"
mkdir -p "$d"
python3 "$top/ctests/lazy/corpus.py" make "$d" > "$d/list.txt" || bad "making the corpus"
alone() { LD_LIBRARY_PATH="$build" NCZARR_FALLBACK_LIB= "$@"; }

# 1. The drop-in alone reads local netCDF files (it answered "Unknown file format" before).
if case_ "1-local-dropin"; then
n=0
while read -r f reader; do
    [ "$reader" = ncdump ] || continue
    ncdump "$d/$f" > "$scratch/ref.cdl" 2>&1
    alone ncdump "$d/$f" > "$scratch/got.cdl" 2>&1
    if cmp -s "$scratch/ref.cdl" "$scratch/got.cdl"; then n=$((n + 1)); else bad "ncdump $f by the drop-in alone"; diff "$scratch/ref.cdl" "$scratch/got.cdl" | head -10; fi
    [ "$(ncdump -k "$d/$f")" = "$(alone ncdump -k "$d/$f")" ] || bad "ncdump -k $f: $(ncdump -k "$d/$f") vs $(alone ncdump -k "$d/$f")"
done < "$d/list.txt"
[ "$n" -ge 12 ] && ok "$n files: ncdump by the drop-in alone equals netcdf-c's, and ncdump -k" || bad "only $n files equal"
alone nccopy "$d/ncgen_groups.nc" "file://$scratch/copy.zarr#mode=nczarr,file" && alone ncdump "file://$scratch/copy.zarr#mode=nczarr,file" | sed 1d > "$scratch/c1.cdl" \
    && ncdump "$d/ncgen_groups.nc" | sed 1d > "$scratch/c2.cdl" && cmp -s "$scratch/c1.cdl" "$scratch/c2.cdl" \
    && ok "nccopy by the drop-in alone from a netCDF-4 file into NCZarr" || bad "nccopy by the drop-in alone from a netCDF-4 file into NCZarr"
alone ncdump -h "$d/list.txt" > /dev/null 2> "$scratch/notnc.txt" && bad "a text file must not open" \
    || { grep -q "Unknown file format\|NetCDF" "$scratch/notnc.txt" && ok "a file that is not netCDF: NC_ENOTNC" || bad "a text file: $(cat "$scratch/notnc.txt")"; }
fi

wait_up() { for i in $(seq 1 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "server $1 did not start"; exit 1; }
M=$(port); moto_server -H 127.0.0.1 -p "$M" > "$scratch/moto.log" 2>&1 & pids="$pids $!"
wait_up "http://127.0.0.1:$M/"
export AWS_ACCESS_KEY_ID=AKIATESTKEY AWS_SECRET_ACCESS_KEY=test-secret
unset AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 2> /dev/null
E="http://127.0.0.1:$M"
python3 - "$d" "$E" <<'PY' || bad "uploading the corpus"
import boto3, os, sys
d, endpoint = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
s3.create_bucket(Bucket="lazy")
for line in open(f"{d}/list.txt"):
    name = line.split()[0]
    s3.upload_file(f"{d}/{name}", "lazy", f"corpus/{name}")
PY

# 2. S3 objects under the preload library: every one opened lazily, ncdump and values equal.
if case_ "2-s3-preload"; then
n=0; lazy=0; whole=""
while read -r f reader; do
    LD_PRELOAD="$pre" NCTRACING=1 ncdump "$E/lazy/corpus/$f#mode=s3" > "$scratch/got.cdl" 2> "$scratch/trace.txt"
    grep -q "lazy: " "$scratch/trace.txt" && lazy=$((lazy + 1)) || whole="$whole $f($(grep -o 'read whole.*' "$scratch/trace.txt" | head -1))"
    if [ "$reader" = ncdump ]; then
        ncdump "$d/$f" | sed 1d > "$scratch/ref.cdl"
        sed 1d "$scratch/got.cdl" | cmp -s - "$scratch/ref.cdl" && n=$((n + 1)) || { bad "ncdump of s3 object $f"; sed 1d "$scratch/got.cdl" | diff - "$scratch/ref.cdl" | head -10; }
    else
        LD_PRELOAD="$pre" python3 "$top/ctests/lazy/corpus.py" compare "$E/lazy/corpus/$f#mode=s3" "$d/$f" > "$scratch/cmp.txt" 2>&1 \
            && n=$((n + 1)) || { bad "values of s3 object $f"; cat "$scratch/cmp.txt"; }
    fi
done < "$d/list.txt"
total=$(wc -l < "$d/list.txt")
[ "$n" -eq "$total" ] && ok "$n of $total objects read equal to the files (ncdump; netCDF4-python for HDF5's newer indexes and zstd/blosc)" || bad "$n of $total objects equal"
[ "$lazy" -eq "$total" ] && ok "$lazy of $total opened lazily, 0 read whole" || bad "$lazy of $total lazy; read whole:$whole"
LD_PRELOAD="$pre" python3 "$top/ctests/lazy/corpus.py" compare "$E/lazy/corpus/xarray.nc#mode=s3" "$d/xarray.nc" > "$scratch/cmp.txt" 2>&1 \
    && ok "netCDF4-python: every variable of an xarray-written object equal" || { bad "netCDF4-python on the xarray object"; cat "$scratch/cmp.txt"; }
fi

# 3. A slice of a big object: a few ranged GETs, not the object.
if case_ "3-slice-costs"; then
python3 - "$d/big.nc" <<'PY' || bad "making big.nc"
import sys, numpy as np, netCDF4
rng = np.random.default_rng(0)
with netCDF4.Dataset(sys.argv[1], "w") as f:
    f.createDimension("time", 24); f.createDimension("lat", 360); f.createDimension("lon", 720)
    t = f.createVariable("t", "f4", ("time", "lat", "lon"), zlib=True, complevel=1, chunksizes=(1, 360, 720))
    for i in range(24):
        t[i] = rng.normal(280, 5, (360, 720)).astype("f4")
PY
python3 -c "
import boto3, sys
boto3.client('s3', endpoint_url='$E', region_name='us-east-1').upload_file('$d/big.nc', 'lazy', 'big.nc')"
size=$(stat -c %s "$d/big.nc")
slice='import netCDF4, sys
with netCDF4.Dataset(sys.argv[1]) as f:
    print(float(f["t"][20, 100:110, 200:210].sum()))'
want=$(python3 -c "$slice" "$d/big.nc")
got=$(LD_PRELOAD="$pre" NCTRACING=2 python3 -c "$slice" "$E/lazy/big.nc#mode=s3" 2> "$scratch/trace.txt")
[ "$got" = "$want" ] && ok "the slice's values" || bad "the slice: $got, want $want"
gets=$(grep -c "ranged get" "$scratch/trace.txt")
meta=$(grep -o "metadata in [0-9]* reads of [0-9]* bytes" "$scratch/trace.txt")
moved=$(grep "ranged get" "$scratch/trace.txt" | sed 's/.*+//' | awk '{s += $1} END {print s + 0}')
# The first request (4 MiB) is the scan's; then the index blocks and the one chunk.
[ "$gets" -le 3 ] && [ "$moved" -lt "$((size / 4))" ] && ok "a slice of a $size-byte object: 1 + $gets ranged GETs, $moved bytes after the first 4 MiB ($meta)" \
    || { bad "a slice of a $size-byte object: $gets ranged GETs, $moved bytes"; grep "ranged get\|lazy" "$scratch/trace.txt" | head; }
NCZARR_LAZY=0 LD_PRELOAD="$pre" NCTRACING=1 python3 -c "$slice" "$E/lazy/big.nc#mode=s3" > "$scratch/w.txt" 2> "$scratch/trace.txt"
[ "$(cat "$scratch/w.txt")" = "$want" ] && ! grep -q "lazy: " "$scratch/trace.txt" && ok "NCZARR_LAZY=0 reads the object whole, as before" || bad "NCZARR_LAZY=0"
fi

# 4. The drop-in alone reads netCDF objects on S3 (before: NC_ENOTBUILT without a real library).
if case_ "4-s3-dropin"; then
ncdump "$d/netcdf4python.nc" | sed 1d > "$scratch/ref.cdl"
alone ncdump "$E/lazy/corpus/netcdf4python.nc#mode=s3" | sed 1d > "$scratch/got.cdl" 2>&1
same "ncdump of an S3 object by the drop-in alone" "$scratch/ref.cdl" "$scratch/got.cdl"
ncdump "$d/ncgen_cdf2.nc" | sed 1d > "$scratch/ref.cdl"
alone ncdump "s3://lazy/corpus/ncgen_cdf2.nc#mode=s3" > "$scratch/got0.cdl" 2>&1 || true
AWS_ENDPOINT_URL="$E" alone ncdump "s3://lazy/corpus/ncgen_cdf2.nc" | sed 1d > "$scratch/got.cdl" 2>&1
same "a netCDF-3 object named s3://bucket/key" "$scratch/ref.cdl" "$scratch/got.cdl"
fi

# 5. What the scanners cannot read lazily: read whole (preload), or a clean error.
if case_ "5-fallbacks"; then
cat > "$d/compound.cdl" <<'CDL'
netcdf compound {
types:
  compound pair { int a ; float b ; } ;
dimensions:
  n = 2 ;
variables:
  pair p(n) ;
  int plain(n) ;
data:
  p = {1, 2.5}, {3, 4.5} ;
  plain = 7, 8 ;
}
CDL
ncgen -k nc4 -o "$d/compound.nc" "$d/compound.cdl"
head -c 5000 "$d/netcdf4python.nc" > "$d/truncated.nc"
python3 -c "
import boto3
s3 = boto3.client('s3', endpoint_url='$E', region_name='us-east-1')
for n in ('compound.nc', 'truncated.nc'):
    s3.upload_file('$d/' + n, 'lazy', n)"
ncdump "$d/compound.nc" | sed 1d > "$scratch/ref.cdl"
LD_PRELOAD="$pre" NCTRACING=1 ncdump "$E/lazy/compound.nc#mode=s3" 2> "$scratch/trace.txt" | sed 1d > "$scratch/got.cdl"
same "a user-defined type: read whole by the real library, equal" "$scratch/ref.cdl" "$scratch/got.cdl"
grep -q "read whole: .*user-defined type" "$scratch/trace.txt" && ok "the fallback is named: $(grep -o 'read whole: .*' "$scratch/trace.txt" | head -1)" || { bad "the fallback is named"; cat "$scratch/trace.txt"; }
for who in preload alone; do
    if [ $who = preload ]; then LD_PRELOAD="$pre" timeout 60 ncdump "$E/lazy/truncated.nc#mode=s3" > /dev/null 2> "$scratch/t.txt"
    else alone timeout 60 ncdump "$E/lazy/truncated.nc#mode=s3" > /dev/null 2> "$scratch/t.txt"; fi
    st=$?
    [ $st -ne 0 ] && [ $st -lt 124 ] && ok "a truncated object ($who): a clean error ($(head -c 100 "$scratch/t.txt"))" || { bad "a truncated object ($who): status $st"; cat "$scratch/t.txt"; }
done
fi

# 6. Plain web servers (no S3 API, ranged GETs): netCDF files (`#mode=bytes`) read lazily, and
#    Zarr stores (`#mode=nczarr,http`, `#mode=zarr,http` with consolidated metadata).
if case_ "6-web"; then
H=$(port); python3 "$top/ctests/tools/range_server.py" "$H" "$d" "$scratch/http.log" & pids="$pids $!"
wait_up "http://127.0.0.1:$H/list.txt"
W="http://127.0.0.1:$H"
ncdump "$d/netcdf4python.nc" | sed 1d > "$scratch/ref.cdl"
: > "$scratch/http.log"
LD_PRELOAD="$pre" NCTRACING=1 ncdump "$W/netcdf4python.nc#mode=bytes" 2> "$scratch/trace.txt" | sed 1d > "$scratch/got.cdl"
same "ncdump of a netCDF-4 file on a web server (#mode=bytes)" "$scratch/ref.cdl" "$scratch/got.cdl"
grep -q "lazy: " "$scratch/trace.txt" && ! awk '$2 == "-"' "$scratch/http.log" | grep -q . && ok "read lazily, by ranged GETs only ($(wc -l < "$scratch/http.log") GETs)" \
    || { bad "read lazily by ranged GETs"; cat "$scratch/trace.txt" "$scratch/http.log" | head; }
ncdump "$d/ncgen_cdf5.nc" | sed 1d > "$scratch/ref.cdl"
alone ncdump "$W/ncgen_cdf5.nc#mode=bytes" | sed 1d > "$scratch/got.cdl" 2>&1
same "a CDF-5 file on a web server, by the drop-in alone" "$scratch/ref.cdl" "$scratch/got.cdl"
alone nccopy "$d/ncgen_groups.nc" "file://$d/groups.zarr#mode=nczarr,file" || bad "nccopy into NCZarr"
python3 -c "
import xarray as xr, numpy as np
xr.Dataset({'a': (('x', 'y'), np.arange(12.0).reshape(3, 4))}, coords={'x': [1, 2, 3]}).to_zarr('$d/xr.zarr', consolidated=True, zarr_format=2)" \
    || bad "xarray's consolidated store"
ncdump "$d/ncgen_groups.nc" | sed 1d > "$scratch/ref.cdl"
alone ncdump "$W/groups.zarr#mode=nczarr,http" | sed 1d > "$scratch/got.cdl" 2>&1
same "an NCZarr store on a web server (#mode=nczarr,http)" "$scratch/ref.cdl" "$scratch/got.cdl"
LD_PRELOAD="$pre" python3 -c "
import netCDF4, numpy as np
with netCDF4.Dataset('$W/xr.zarr#mode=zarr,http') as ds:
    assert np.array_equal(ds['a'][:], np.arange(12.0).reshape(3, 4)) and list(ds['x'][:]) == [1, 2, 3]
" && ok "xarray's consolidated Zarr on a web server (#mode=zarr,http)" || bad "xarray's consolidated Zarr on a web server"
LD_PRELOAD="$pre" NCZARR_LOG=errors ncdump -h "$W/notthere.zarr#mode=nczarr,http" > /dev/null 2> "$scratch/e.txt" \
    && bad "a missing store must not open" || ok "a missing store on a web server: $(head -c 90 "$scratch/e.txt")"
fi

echo "lazy-open tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/bin/sh
# Reference sets (issue 37): kerchunk references to netCDF-4 and netCDF-3 files, made by
# kerchunk itself, read through nc_open (#mode=kerchunk) locally, on S3 (moto) and from a plain
# web server (ctests/tools/range_server.py), compared
# variable by variable with the files they point into (netCDF4-python under the preload
# library, the files served by the real netcdf-c); relative targets; a missing target and
# hostile reference sets fail with their reason; a remote set may not point at local files.
# Reference sets we write (nccopy into refs.json#mode=kerchunk) read equal through fsspec +
# zarr-python and xarray, and point into the files they copy.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
for tool in moto_server curl ncdump; do
    command -v $tool > /dev/null || { echo "missing tool: $tool (sh ctests/ensure_deps.sh)"; exit 1; }
done
python3 -c "import kerchunk, netCDF4" || { echo "missing Python packages (sh ctests/ensure_deps.sh installs kerchunk)"; exit 1; }
d="$scratch/refs"
mkdir -p "$d"
python3 "$top/ctests/refs/refs.py" make "$d" || bad "making the files and their references"
compare() { LD_PRELOAD="$pre" python3 "$top/ctests/refs/refs.py" compare "$1" "$2" > "$scratch/cmp.txt" 2>&1; }

# 1. kerchunk's references, read as the files they point into.
if case_ "1-kerchunk-local"; then
compare "file://$d/refs4.json#mode=kerchunk" "$d/data4.nc" && ok "netCDF-4 by SingleHdf5ToZarr: $(grep -c '^ok' "$scratch/cmp.txt") variables equal" || { bad "netCDF-4 by SingleHdf5ToZarr"; cat "$scratch/cmp.txt"; }
compare "file://$d/refs3.json#mode=kerchunk" "$d/data3.nc" && ok "netCDF-3 by NetCDF3ToZarr: $(grep -c '^ok' "$scratch/cmp.txt") variables equal" || { bad "netCDF-3 by NetCDF3ToZarr"; cat "$scratch/cmp.txt"; }
compare "file://$d/refs4_relative.json#mode=kerchunk" "$d/data4.nc" && ok "targets relative to the reference set" || { bad "targets relative to the reference set"; cat "$scratch/cmp.txt"; }
LD_PRELOAD="$pre" ncdump -h "file://$d/refs4.json#mode=kerchunk" > "$scratch/h.cdl" 2>&1 && grep -q "float t(time, lat, lon)" "$scratch/h.cdl" \
    && ok "ncdump -h" || { bad "ncdump -h"; cat "$scratch/h.cdl"; }
# Without the mode word, a reference set is known by its content.
compare "$d/refs4.json" "$d/data4.nc" && ok "a plain path to a reference set" || { bad "a plain path to a reference set"; cat "$scratch/cmp.txt"; }
LD_PRELOAD="$pre" ncdump -v v "$d/refs3.json" > "$scratch/p.cdl" 2>&1 && grep -q "^ v =" "$scratch/p.cdl" \
    && ok "ncdump of a plain path to a reference set" || { bad "ncdump of a plain path to a reference set"; cat "$scratch/p.cdl"; }
fi

# 1b. Parquet reference directories (kerchunk.df / fsspec's layout), named with the mode word or
#     known by their .zmetadata's record_size.
if case_ "1b-parquet"; then
compare "file://$d/refs4.parq#mode=kerchunk" "$d/data4.nc" && ok "netCDF-4 through Parquet references: $(grep -c '^ok' "$scratch/cmp.txt") variables equal" || { bad "netCDF-4 through Parquet references"; cat "$scratch/cmp.txt"; }
compare "$d/refs3.parq" "$d/data3.nc" && ok "netCDF-3 through Parquet references, a plain path" || { bad "netCDF-3 through Parquet references"; cat "$scratch/cmp.txt"; }
LD_PRELOAD="$pre" ncdump "file://$d/refs4.json#mode=kerchunk" | sed 1d > "$scratch/j.cdl"
LD_PRELOAD="$pre" ncdump "$d/refs4.parq" | sed 1d > "$scratch/p.cdl"
same "ncdump: Parquet and JSON references alike" "$scratch/j.cdl" "$scratch/p.cdl"
fi

# 1c. MultiZarrToZarr: twelve files combined along time into one reference set.
if case_ "1c-combined"; then
LD_PRELOAD="$pre" python3 - "$d" <<'PY' && ok "12 files combined by MultiZarrToZarr: every value and time equal" || bad "12 files combined by MultiZarrToZarr"
import sys, netCDF4, numpy as np
d = sys.argv[1]
with netCDF4.Dataset(f"file://{d}/combined.json#mode=kerchunk") as ds:
    v, t = ds["v"][:], ds["time"][:]
    assert v.shape == (24, 8), v.shape
    want = np.concatenate([np.arange(16, dtype="f4").reshape(2, 8) + 100 * day for day in range(12)])
    assert np.array_equal(v, want), "values"
    assert np.array_equal(t, np.arange(24.0)), t
PY
LD_PRELOAD="$pre" ncdump -h "file://$d/combined.json#mode=kerchunk" > "$scratch/c.cdl" 2>&1 && grep -q "float v(time, x)" "$scratch/c.cdl" \
    && ok "ncdump -h of the combined set" || { bad "ncdump -h of the combined set"; cat "$scratch/c.cdl"; }
fi

# 2. What fails, fails with its reason: a missing target, hostile reference sets.
if case_ "2-failures"; then
mkdir -p "$d/moved" && cp "$d/refs4_relative.json" "$d/moved/"
LD_PRELOAD="$pre" NCZARR_LOG=errors ncdump -v t "file://$d/moved/refs4_relative.json#mode=kerchunk" > /dev/null 2> "$scratch/miss.txt" \
    && bad "a missing target must fail the read" || ok "a missing target fails the read"
grep -q "moved/data4.nc" "$scratch/miss.txt" && ok "the missing target is named" || { bad "the missing target is named"; cat "$scratch/miss.txt"; }
python3 - "$d" <<'PY'
import json, sys
d = sys.argv[1]
refs = json.load(open(f"{d}/refs4.json"))
table = refs.get("refs", refs)
key = next(k for k in table if k.startswith("t/") and not k.split("/")[-1].startswith("."))
hostile = {
    "notjson": "{not json",
    "huge": dict(table, **{key: [f"{d}/data4.nc", 0, 1 << 62]}),
    "pastend": dict(table, **{key: [f"{d}/data4.nc", 1 << 30, 100]}),
    "loop": {"version": 1, "templates": {"a": "{{b}}", "b": "{{a}}"}, "refs": dict(table, **{key: ["{{a}}", 0, 4]})},
    "gen": {"version": 1, "gen": [{"key": "x/{{i}}", "url": "y", "dimensions": {"i": 2}}], "refs": table},
}
for name, doc in hostile.items():
    with open(f"{d}/hostile_{name}.json", "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
PY
for h in notjson huge pastend loop gen; do
    LD_PRELOAD="$pre" timeout 60 ncdump -v t "file://$d/hostile_$h.json#mode=kerchunk" > /dev/null 2> "$scratch/h_$h.txt"
    st=$?
    [ $st -ne 0 ] && [ $st -lt 124 ] && grep -q "NetCDF\|error" "$scratch/h_$h.txt" && ok "hostile reference set ($h): a clean error" || { bad "hostile reference set ($h): status $st"; tail -3 "$scratch/h_$h.txt"; }
done
fi

# 3. On S3: the reference set and its targets as objects; a remote set may not name local files.
if case_ "3-kerchunk-on-s3"; then
wait_up() { for i in $(seq 1 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "server $1 did not start"; exit 1; }
M=$(port); moto_server -H 127.0.0.1 -p "$M" > "$scratch/moto.log" 2>&1 & pids="$pids $!"
wait_up "http://127.0.0.1:$M/"
export AWS_ACCESS_KEY_ID=AKIATESTKEY AWS_SECRET_ACCESS_KEY=test-secret AWS_ENDPOINT_URL="http://127.0.0.1:$M"
python3 - "$d" "$M" <<'PY' || bad "uploading"
import boto3, json, sys
d, port = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1")
s3.create_bucket(Bucket="refs")
s3.upload_file(f"{d}/data4.nc", "refs", "run/data4.nc")
import os
from kerchunk.df import refs_to_dataframe
s3_refs = json.loads(json.dumps(json.load(open(f"{d}/refs4.json"))))
for v in s3_refs.get("refs", s3_refs).values():
    if isinstance(v, list) and v and isinstance(v[0], str):
        v[0] = "s3://refs/run/data4.nc"
refs_to_dataframe(s3_refs, f"{d}/s3refs4.parq", record_size=5)
for root, _, files in os.walk(f"{d}/s3refs4.parq"):
    for f in files:
        rel = os.path.relpath(os.path.join(root, f), f"{d}/s3refs4.parq")
        s3.upload_file(os.path.join(root, f), "refs", f"run/refs4.parq/{rel}")
refs = json.load(open(f"{d}/refs4.json"))
for name, url in (("absolute", "s3://refs/run/data4.nc"), ("relative", "data4.nc"), ("local", f"{d}/data4.nc")):
    doc = json.loads(json.dumps(refs))
    for v in doc.get("refs", doc).values():
        if isinstance(v, list) and v and isinstance(v[0], str):
            v[0] = url
    s3.put_object(Bucket="refs", Key=f"run/{name}.json", Body=json.dumps(doc).encode())
PY
compare "s3://refs/run/absolute.json#mode=kerchunk" "$d/data4.nc" && ok "a reference set on S3 into an S3 object" || { bad "a reference set on S3 into an S3 object"; cat "$scratch/cmp.txt"; }
compare "http://127.0.0.1:$M/refs/run/relative.json#mode=kerchunk,s3" "$d/data4.nc" && ok "relative targets beside a set on S3" || { bad "relative targets beside a set on S3"; cat "$scratch/cmp.txt"; }
compare "s3://refs/run/refs4.parq#mode=kerchunk" "$d/data4.nc" && ok "a Parquet reference set on S3 into an S3 object" || { bad "a Parquet reference set on S3"; cat "$scratch/cmp.txt"; }
LD_PRELOAD="$pre" NCZARR_LOG=errors ncdump -v t "s3://refs/run/local.json#mode=kerchunk" > /dev/null 2> "$scratch/local.txt" \
    && bad "a remote reference set must not read local files" || ok "a remote reference set naming a local file is refused"
grep -q "refused" "$scratch/local.txt" && ok "the refusal says why" || { bad "the refusal says why"; cat "$scratch/local.txt"; }
# A reference set written on S3 from a netCDF object on S3 (read lazily): s3:// targets.
LD_PRELOAD="$pre" nccopy "s3://refs/run/data4.nc" "s3://refs/run/written4.json#mode=kerchunk" || bad "nccopy from S3 into a reference set on S3"
if python3 "$top/ctests/refs/refs.py" written "s3://refs/run/written4.json" "$d/data4.nc" "http://127.0.0.1:$M" > "$scratch/w.txt" 2>&1 \
    && grep -q "^references 2[89] into" "$scratch/w.txt"; then
    ok "a set written on S3 read by fsspec: $(tail -1 "$scratch/w.txt")"
else bad "a set written on S3 read by fsspec"; cat "$scratch/w.txt"; fi
compare "s3://refs/run/written4.json#mode=kerchunk" "$d/data4.nc" && ok "the set written on S3 read back" || { bad "the set written on S3 read back"; cat "$scratch/cmp.txt"; }
fi

# 4. A plain web server (no S3 API), honouring Range: the reference set and its targets read
#    from it by ranged GETs, absolute and relative; a slice moves a fraction of the file.
if case_ "4-plain-http"; then
wait_http() { for i in $(seq 1 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "server $1 did not start"; exit 1; }
H=$(port); python3 "$top/ctests/tools/range_server.py" "$H" "$d" "$scratch/http.log" & pids="$pids $!"
wait_http "http://127.0.0.1:$H/"
python3 - "$d" "$H" <<'PY' || bad "writing the web reference sets"
import json, sys
d, port = sys.argv[1], sys.argv[2]
refs = json.load(open(f"{d}/refs4.json"))
for name, url in (("web_absolute", f"http://127.0.0.1:{port}/data4.nc"), ("web_relative", "data4.nc")):
    doc = json.loads(json.dumps(refs))
    for v in doc.get("refs", doc).values():
        if isinstance(v, list) and v and isinstance(v[0], str):
            v[0] = url
    json.dump(doc, open(f"{d}/{name}.json", "w"))
PY
compare "file://$d/web_absolute.json#mode=kerchunk" "$d/data4.nc" && ok "a local set into a file on a web server" || { bad "a local set into a file on a web server"; cat "$scratch/cmp.txt"; }
compare "http://127.0.0.1:$H/web_relative.json#mode=kerchunk" "$d/data4.nc" && ok "a set on a web server, targets beside it" || { bad "a set on a web server, targets beside it"; cat "$scratch/cmp.txt"; }
: > "$scratch/http.log"
LD_PRELOAD="$pre" python3 -c "
import netCDF4
with netCDF4.Dataset('http://127.0.0.1:$H/web_relative.json#mode=kerchunk') as ds:
    assert abs(float(ds['t'][2, 3, 4]) - (250 + (2 * 600 + 3 * 30 + 4) / 100)) < 1e-4
" && ok "one value read" || bad "one value read"
size=$(stat -c %s "$d/data4.nc")
moved=$(grep 'data4.nc' "$scratch/http.log" | awk '{s += $3} END {print s + 0}')
unranged=$(grep 'data4.nc' "$scratch/http.log" | awk '$2 == "-"' | wc -l)
[ "$unranged" -eq 0 ] && [ "$moved" -lt "$((size / 4))" ] && ok "ranged reads only: $moved of $size bytes moved" || { bad "ranged reads only: $moved of $size bytes moved, $unranged whole GETs"; cat "$scratch/http.log"; }
fi

# 5. Reference sets we write: nccopy into refs.json#mode=kerchunk points into the files it
#    copies, read lazily by the drop-in alone or by the real netcdf-c behind the preload library;
#    fsspec + zarr-python and xarray (no netCDF library) read them equal to the files, so do we.
if case_ "5-written"; then
w="$d/written"; mkdir -p "$w"
alone() { LD_LIBRARY_PATH="$build" NCZARR_FALLBACK_LIB= "$@"; }
written() { python3 "$top/ctests/refs/refs.py" written "$@" > "$scratch/w.txt" 2>&1; }
refs_in() { sed -n 's/^references \([0-9]*\) into.*/\1/p' "$scratch/w.txt"; }
check_written() { # what, set, file, least references into the file
    if written "$2" "$3" && [ "$(refs_in)" -ge "$4" ]; then ok "$1: $(grep -c '^ok' "$scratch/w.txt") variables equal, $(tail -1 "$scratch/w.txt")"
    else bad "$1"; cat "$scratch/w.txt"; fi
}
LD_PRELOAD="$pre" nccopy "$d/data4.nc" "file://$w/pre4.json#mode=kerchunk" || bad "nccopy under the preload library"
check_written "nccopy of a netCDF-4 file under the preload library" "$w/pre4.json" "$d/data4.nc" 28
alone nccopy "$d/data4.nc" "file://$w/alone4.json#mode=kerchunk" || bad "nccopy with the drop-in alone"
check_written "nccopy of a netCDF-4 file, the drop-in alone" "$w/alone4.json" "$d/data4.nc" 28
LD_PRELOAD="$pre" nccopy "$d/data3.nc" "file://$w/pre3.json#mode=kerchunk" || bad "nccopy of a netCDF-3 file"
check_written "nccopy of a netCDF-3 file" "$w/pre3.json" "$d/data3.nc" 3
# A 1 MB copy buffer: the contiguous variable arrives in pieces of 125 rows; whole pieces are
# ranges of the file, the edge beside the set.
LD_PRELOAD="$pre" nccopy -m 1000000 "$d/groups4.nc" "file://$w/groups4.json#mode=kerchunk" || bad "nccopy of groups and a large contiguous variable"
check_written "groups, a large contiguous variable copied in pieces" "$w/groups4.json" "$d/groups4.nc" 5
ls "$w/groups4.json.chunks" 2> /dev/null | grep -q . && ok "a piece that is no range of the file is kept beside the set" || bad "no chunk object beside the set"
compare "file://$w/pre4.json#mode=kerchunk" "$d/data4.nc" && ok "read back through nc_open" || { bad "read back through nc_open"; cat "$scratch/cmp.txt"; }
LD_PRELOAD="$pre" ncdump "$d/groups4.nc" | sed 1d > "$scratch/want.cdl"
LD_PRELOAD="$pre" ncdump "file://$w/groups4.json#mode=kerchunk" | sed 1d > "$scratch/got.cdl"
same "ncdump of the written set equals the file's" "$scratch/want.cdl" "$scratch/got.cdl"
# Values no read returned (ncgen's) are kept inline or beside the set.
cat > "$w/gen.cdl" << 'CDL'
netcdf gen {
dimensions:
	n = 3000 ;
	s = 4 ;
variables:
	double big(n) ;
	short small(s) ;
		small:units = "1" ;
data:
 small = 1, 2, 3, 4 ;
}
CDL
python3 -c "print('\n'.join(' big = ' + ', '.join(str(i / 3) for i in range(3000)) + ' ;' for _ in [0]))" > "$scratch/big.txt"
sed -i "/^ small =/r $scratch/big.txt" "$w/gen.cdl"
ncgen -o "$w/gen.nc" "$w/gen.cdl" && LD_PRELOAD="$pre" ncgen -o "file://$w/gen.json#mode=kerchunk" "$w/gen.cdl" || bad "ncgen into a reference set"
check_written "values written by ncgen: inline and beside the set" "$w/gen.json" "$w/gen.nc" 0
# A Parquet reference directory (fsspec's layout) instead of one JSON document.
LD_PRELOAD="$pre" nccopy "$d/data4.nc" "file://$w/pre4.parq#mode=kerchunk" || bad "nccopy into a Parquet reference set"
python3 -c "
import fsspec, zarr, netCDF4, numpy as np, sys
m = fsspec.filesystem('reference', fo='$w/pre4.parq', remote_protocol='file').get_mapper('')
g = zarr.open_group(m, mode='r')
with netCDF4.Dataset('$d/data4.nc') as want:
    want.set_auto_maskandscale(False)
    for name, v in want.variables.items():
        assert np.array_equal(np.asarray(g[name][:]), np.asarray(v[:])), name
" > "$scratch/parq.txt" 2>&1 && ok "a Parquet reference set read by fsspec + zarr-python equal to the file" || { bad "a Parquet reference set read by fsspec"; cat "$scratch/parq.txt"; }
compare "file://$w/pre4.parq#mode=kerchunk" "$d/data4.nc" && ok "the Parquet set read back through nc_open" || { bad "the Parquet set read back"; cat "$scratch/cmp.txt"; }
# An aggregated dataset (a CFA-0.5 master over 4 x 9 x 18 fragment files) becomes one
# reference set into its fragments.
cp -r "$top/ctests/fixtures/s3netcdf4" "$w/fx"
(cd "$w/fx" && LD_PRELOAD="$pre" nccopy cfa4_v05.nca "file://$w/cfa.json#mode=kerchunk") || bad "nccopy of an aggregated dataset into a reference set"
fragments=$(grep -o 'cfa4_v05\.[a-z]*\.[0-9.]*nc' "$w/cfa.json" | sort -u | wc -l)
LD_PRELOAD="$pre" python3 -c "
import fsspec, zarr, netCDF4, numpy as np
g = zarr.open_group(fsspec.filesystem('reference', fo='$w/cfa.json').get_mapper(''), mode='r')
with netCDF4.Dataset('$w/fx/cfa4_v05.nca') as want:
    want.set_auto_maskandscale(False)
    for name in ('tas', 'pr', 'time', 'lat', 'lon'):
        assert np.array_equal(np.asarray(g[name][:]), np.asarray(want[name][:])), name
" > "$scratch/cfa.txt" 2>&1 && [ "$fragments" -ge 16 ] \
    && ok "an aggregated dataset: one set into $fragments fragment files, read equal by fsspec + zarr-python" \
    || { bad "an aggregated dataset into one reference set ($fragments fragment files named)"; cat "$scratch/cfa.txt"; }
fi

# 6. A writer killed at each file-system mutation of writing a set (ctests/crash/crashpoint.c)
#    leaves a set that reads as before (the old values), as an earlier flush of the new one
#    (nothing defined yet, or every value the fill), or as the new one: never a broken set.
if case_ "6-crash-points"; then
cc -shared -fPIC -O2 -o "$scratch/crashpoint.so" "$top/ctests/crash/crashpoint.c" -ldl || bad "build crashpoint.so"
cc -std=c11 -Wall -O2 -I"$top/include" -o "$scratch/refs_crash" "$top/ctests/refs/refs_crash.c" -L"$build" -lnetcdf -ldl -Wl,-rpath,"$build" || bad "build refs_crash"
c="$d/crash"; mkdir -p "$c"; url="file://$c/set.json#mode=kerchunk"
dump() { LD_LIBRARY_PATH="$build" NCZARR_FALLBACK_LIB= ncdump "$url" 2>&1 | sed 1d; }
"$scratch/refs_crash" "$url" new > /dev/null && dump > "$scratch/new.txt"
rm -rf "$c"/*; "$scratch/refs_crash" "$url" old > /dev/null && dump > "$scratch/old.txt"
total=$(LD_PRELOAD="$scratch/crashpoint.so" "$scratch/refs_crash" "$url" new)
o=0 n=0 e=0 l=0 i=1
while [ "$i" -le "${total:-0}" ]; do
    rm -rf "$c"/*; "$scratch/refs_crash" "$url" old > /dev/null
    CRASH_AT=$i LD_PRELOAD="$scratch/crashpoint.so" "$scratch/refs_crash" "$url" new > /dev/null 2>&1
    dump > "$scratch/got.txt"
    if cmp -s "$scratch/got.txt" "$scratch/old.txt"; then o=$((o + 1))
    elif cmp -s "$scratch/got.txt" "$scratch/new.txt"; then n=$((n + 1))
    elif ! grep -qi "error\|netcdf:" "$scratch/got.txt" && ! grep -q "big = 0, 0.333" "$scratch/got.txt"; then e=$((e + 1))
    else l=$((l + 1)); echo "# crash point $i: neither state"; head -5 "$scratch/got.txt"; fi
    i=$((i + 1))
done
[ "${total:-0}" -gt 3 ] && [ "$l" -eq 0 ] && ok "crash points of writing a set: $total: old $o, earlier flush $e, new $n, broken 0" \
    || bad "crash points of writing a set: $total: old $o, earlier flush $e, new $n, broken $l"
fi

echo "reference tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

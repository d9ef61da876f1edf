#!/bin/sh
# The crash-point tester: every multi-object update (renames of variables and groups, new
# variables and groups, attribute changes) is stopped at each of its crash points, and the
# dataset a reader then opens must be the last closed state or the new one, never neither.
#
# Directory, zip and v3 stores: crashpoint.so (LD_PRELOAD) SIGKILLs the writer just before its
# N-th file-system mutation, for every N the update has. S3: the fault proxy forwards only the
# first N mutating requests (PUT, POST, DELETE) and refuses the rest, for every N: the server
# then holds what a writer killed after N requests leaves.
#
# CRASH_ALL=1 (make fuzz) runs every scenario on every store; otherwise a small set. Each case
# prints its counts: "old N new M per-object K duplicate D lost 0".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
cc -shared -fPIC -O2 -o "$scratch/crashpoint.so" "$top/ctests/crash/crashpoint.c" -ldl || { bad "build crashpoint.so"; exit 1; }
cc -std=c11 -Wall -O2 -I"$top/include" -o "$scratch/driver" "$top/ctests/crash/crash_driver.c" -L"$build" -lnetcdf -ldl -Wl,-rpath,"$build" \
    || { bad "build crash_driver"; exit 1; }
drv="$scratch/driver"
all=${CRASH_ALL:-0}

# Judges a dump against the old and the new one: old, new, per-object (each group and
# variable is its old or its new self, as many variables as before: an update of several
# objects where nothing but their listing ties them, pure Zarr's renames of two variables or
# attributes changed on several variables), duplicate (a renamed variable under both names:
# pure Zarr on S3, where a move is a copy and a delete), or lost (anything else).
judge() { # dump old new
    if cmp -s "$1" "$2"; then echo old; return; fi
    if cmp -s "$1" "$3"; then echo new; return; fi
    python3 - "$1" "$2" "$3" << 'PY'
import sys
got, old, new = (open(p).read().splitlines() for p in sys.argv[1:4])
nvars = lambda lines: sum(l.startswith("var ") for l in lines)
if not all(l in old or l in new for l in got):
    print("lost")
elif nvars(got) in (nvars(old), nvars(new)):
    print("per-object")
elif nvars(got) > max(nvars(old), nvars(new)):
    print("duplicate")
else:
    print("lost")
PY
}

# Counts one crash point's outcome (`tally WHERE`, after the dump is in got.txt); `report
# LABEL TOTAL` ends a scenario with one line.
tally() {
    case $(judge "$scratch/got.txt" "$scratch/old.txt" "$scratch/new.txt") in
        old) o=$((o + 1)) ;; new) n=$((n + 1)) ;; per-object) p=$((p + 1)) ;; duplicate) d=$((d + 1)) ;;
        *) l=$((l + 1)); echo "# $1: neither state"; diff "$scratch/old.txt" "$scratch/got.txt" | head -8 ;;
    esac
}
report() {
    counts="$2 crash points: old $o new $n per-object $p duplicate $d lost $l"
    [ "$l" -eq 0 ] && ok "$1: $counts" || bad "$1: $counts"
}

# One scenario on one file-based store: `file_case SCENARIO MODE SUFFIX`.
file_case() {
    sc=$1 mode=$2 ext=$3
    base="$scratch/base$ext" work="$scratch/work$ext"
    url="file://$work#mode=$mode"
    rm -rf "$base" "$work"
    "$drv" setup "$sc" "file://$base#mode=$mode" || { bad "$sc $mode: setup"; return; }
    cp -a "$base" "$work"
    "$drv" dump "$url" > "$scratch/old.txt"
    total=$(LD_PRELOAD="$scratch/crashpoint.so" "$drv" update "$sc" "$url") || { bad "$sc $mode: update"; return; }
    "$drv" dump "$url" > "$scratch/new.txt"
    if cmp -s "$scratch/old.txt" "$scratch/new.txt"; then bad "$sc $mode: the update changed nothing"; return; fi
    o=0 n=0 p=0 d=0 l=0 i=1
    while [ "$i" -le "$total" ]; do
        rm -rf "$work"; cp -a "$base" "$work"
        CRASH_AT=$i LD_PRELOAD="$scratch/crashpoint.so" "$drv" update "$sc" "$url" > /dev/null 2>&1
        "$drv" dump "$url" > "$scratch/got.txt"
        tally "crash point $i of $total"
        i=$((i + 1))
    done
    report "$sc on $mode" "$total"
}

scenarios_small="rename_var rename_grp define_var"
scenarios_all="rename_var rename_two rename_grp rename_in_grp define_var define_grp attributes"
[ "$all" = 1 ] && scenarios=$scenarios_all || scenarios=$scenarios_small

if case_ "1-directory-nczarr"; then
    for sc in $scenarios; do file_case "$sc" "nczarr,file" .file; done
fi
if case_ "2-directory-v3"; then
    for sc in $scenarios; do file_case "$sc" "nczarr,file,v3" .file; done
fi
if case_ "3-zip"; then
    for sc in $scenarios; do file_case "$sc" "nczarr,zip" .zip; done
    [ "$all" = 1 ] && for sc in $scenarios; do file_case "$sc" "nczarr,zip,v3" .zip; done
fi
if case_ "4-directory-pure-zarr"; then
    for sc in $scenarios; do file_case "$sc" "zarr,file" .file; done
    [ "$all" = 1 ] && for sc in $scenarios; do file_case "$sc" "zarr,file,v3" .file; done
fi

# S3: moto behind the fault proxy; the crash point is the number of mutating requests forwarded.
if case_ "5-s3"; then
    command -v moto_server > /dev/null || { bad "missing tool: moto_server (sh ctests/ensure_deps.sh)"; exit 1; }
    M=$(port); moto_server -H 127.0.0.1 -p "$M" > "$scratch/moto.log" 2>&1 & pids="$pids $!"
    P=$(port); python3 "$top/ctests/s3/s3proxy.py" "$P" "http://127.0.0.1:$M" & pids="$pids $!"
    for u in "http://127.0.0.1:$M/" "http://127.0.0.1:$P/__proxy"; do
        for _ in $(seq 1 100); do curl -s -o /dev/null "$u" && break; sleep 0.1; done
    done
    ctl() { curl -s -X POST -d "$1" "http://127.0.0.1:$P/__proxy"; }
    export AWS_ACCESS_KEY_ID=AKIATESTKEY AWS_SECRET_ACCESS_KEY=test-secret AWS_REGION=us-east-1 NCZARR_S3_MAX_ATTEMPTS=1 NCZARR_S3_BACKOFF_MS=1
    s3_case() { # SCENARIO MODE
        sc=$1 mode=$2
        via="http://127.0.0.1:$P/crash/$sc#mode=$mode" direct="http://127.0.0.1:$M/crash/$sc#mode=$mode"
        ctl '{"mutations_left": -1}' > /dev/null
        "$drv" setup "$sc" "$via" && "$drv" dump "$direct" > "$scratch/old.txt" || { bad "$sc $mode: setup"; return; }
        ctl '{}' > /dev/null
        "$drv" update "$sc" "$via" > /dev/null || { bad "$sc $mode: update"; return; }
        total=$(curl -s "http://127.0.0.1:$P/__proxy" | python3 -c 'import json,sys; print(json.load(sys.stdin)["mutations"])')
        "$drv" dump "$direct" > "$scratch/new.txt"
        o=0 n=0 p=0 d=0 l=0 i=0
        while [ "$i" -lt "$total" ]; do
            ctl '{"mutations_left": -1}' > /dev/null
            "$drv" setup "$sc" "$via" || { bad "$sc $mode: setup"; return; }
            ctl "{\"mutations_left\": $i}" > /dev/null
            "$drv" update "$sc" "$via" > /dev/null 2>&1
            "$drv" dump "$direct" > "$scratch/got.txt"
            tally "after $i of $total requests"
            i=$((i + 1))
        done
        ctl '{"mutations_left": -1}' > /dev/null
        report "$sc on $mode (S3)" "$total"
    }
    python3 -c "
import boto3
boto3.client('s3', endpoint_url='http://127.0.0.1:$M', region_name='us-east-1').create_bucket(Bucket='crash')
" || bad "bucket creation"
    for sc in $scenarios; do s3_case "$sc" "nczarr,s3"; done
    [ "$all" = 1 ] && for sc in $scenarios; do s3_case "$sc" "nczarr,s3,v3"; s3_case "$sc" "zarr,s3"; done
fi

echo "crash-point tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

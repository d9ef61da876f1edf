#!/bin/sh
# Icechunk repositories (issue 39): a repository icechunk-python (1.1.x, spec 1) wrote with
# xarray reads through nc_open equal to the same data as netCDF files, at a branch, a tag and a
# snapshot; nccopy, NCO, a C and a Fortran program write into repositories that icechunk-python
# reads back equal, one snapshot per nc_close (and per nc_sync); a tag is read-only; nc_abort
# commits nothing; two writers of disjoint chunks both land and two of one chunk fail the second
# cleanly (NC_EOBJECT) with the first's values kept; a writer killed at every file-system
# mutation of a commit leaves the previous snapshot or the new one; the same on S3 (moto), with
# writers killed at moments spread over their life; virtual chunks into a netCDF file, local and
# as an S3 object, read by reference (and the rule for what a remote repository may name); spec 2.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
for tool in moto_server ncdump nccopy ncks gfortran; do
    command -v $tool > /dev/null || { echo "missing tool: $tool (sh ctests/ensure_deps.sh)"; exit 1; }
done
python3 -c "import icechunk, xarray, netCDF4" || { echo "missing Python packages (sh ctests/ensure_deps.sh installs icechunk)"; exit 1; }
d="$scratch/ice"
mkdir -p "$d"
ice() { python3 "$top/ctests/icechunk/ice.py" "$@"; }
v1=$(ice make "$d" 2> "$scratch/make.txt" | tail -1) || { bad "icechunk-python writing the repository"; cat "$scratch/make.txt"; }
compare() { LD_PRELOAD="$pre" python3 "$top/ctests/icechunk/ice.py" compare "$1" "$2" > "$scratch/cmp.txt" 2>&1; }
cc -std=c11 -Wall -O2 -I"$top/include" -o "$scratch/ice_write" "$top/ctests/icechunk/ice_write.c" -L"$build" -lnetcdf -ldl -Wl,-rpath,"$build" \
    || bad "build ice_write"
W="$scratch/ice_write"
repo="file://$d/py.repo#mode=nczarr,icechunk"

# 1. What icechunk-python wrote, read through nc_open: the branch main, the tag v1, the branch
#    dev, a snapshot by id, and the directory without a mode (known by its layout).
if case_ "1-read-python"; then
compare "$repo" "$d/main.nc" && ok "main: $(grep -c '^ok' "$scratch/cmp.txt") variables equal to main.nc" || { bad "main"; cat "$scratch/cmp.txt"; }
compare "$repo&tag=v1" "$d/v1.nc" && ok "tag v1 after main moved: v1's values" || { bad "tag v1"; cat "$scratch/cmp.txt"; }
compare "$repo&branch=dev" "$d/dev.nc" && ok "branch dev" || { bad "branch dev"; cat "$scratch/cmp.txt"; }
compare "$repo&snapshot=$v1" "$d/v1.nc" && ok "snapshot $v1 (v1's id)" || { bad "snapshot by id"; cat "$scratch/cmp.txt"; }
compare "$d/py.repo" "$d/main.nc" && ok "a plain path to a repository" || { bad "a plain path to a repository"; cat "$scratch/cmp.txt"; }
# Pure Zarr keeps no order of variables and dimensions (ours come in the order listed): the
# lines are compared as sets; every Zarr array has a fill value, the file's only where set.
LD_PRELOAD="$pre" ncdump "$repo&tag=v1" | sed -e 1d -e '/_FillValue\|^$/d' | sort > "$scratch/ours.cdl" 2>&1
ncdump "$d/v1.nc" | sed -e 1d -e '/_FillValue\|^$/d' | sort > "$scratch/theirs.cdl"
same "ncdump of tag v1 has the lines of ncdump of v1.nc (but _FillValue)" "$scratch/theirs.cdl" "$scratch/ours.cdl"
LD_PRELOAD="$pre" NCZARR_LOG=errors ncdump -h "$repo&tag=nosuch" > /dev/null 2> "$scratch/e.txt" && bad "a missing tag must fail" \
    || { grep -q "tag nosuch" "$scratch/e.txt" && ok "a missing tag fails, named" || { bad "a missing tag is named"; cat "$scratch/e.txt"; }; }
fi

# 2. Writers: nccopy, NCO, the C API (one commit per nc_sync and nc_close), a Fortran program;
#    icechunk-python reads each commit back equal and counts the snapshots.
if case_ "2-write"; then
r2="$d/ours.repo"
LD_PRELOAD="$pre" nccopy "$d/main.nc" "file://$r2#mode=nczarr,icechunk" && ok "nccopy into a new repository" || bad "nccopy into a new repository"
ice read "$r2" main "$d/main.nc" > "$scratch/r.txt" 2>&1 && ok "icechunk-python reads nccopy's commit equal: $(grep -c '^ok' "$scratch/r.txt") arrays" \
    || { bad "icechunk-python reading nccopy's commit"; cat "$scratch/r.txt"; }
n=$(ice history "$r2" | wc -l)
[ "$n" -eq 2 ] && ok "nccopy's nc_close is one snapshot (2 with the repository's first)" || { bad "snapshots after nccopy: $n"; ice history "$r2"; }
"$W" "file://$r2#mode=nczarr,icechunk" syncs 3 && ok "three updates, two nc_sync and nc_close" || bad "three updates with nc_sync"
n=$(ice history "$r2" | wc -l)
[ "$n" -eq 5 ] && ok "each nc_sync and the nc_close one snapshot (5 in all)" || { bad "snapshots after syncs: $n"; ice history "$r2"; }
got=$(ice value "$r2" main t 0,0,1); want=$(python3 -c "import netCDF4; print(float(netCDF4.Dataset('$d/main.nc')['t'][0,0,1]) + 3)")
[ "$got" = "$want" ] && ok "the last commit's values ($got)" || bad "the last commit's values: $got, want $want"
ice history "$r2" | sed -n 1p | grep -q "ice_write" && ok "the commit message names the program" || { bad "commit message"; ice history "$r2" | head -1; }
NCZARR_ICECHUNK_MESSAGE="my message" "$W" "file://$r2#mode=nczarr,icechunk" put t 0,0,0 5
ice history "$r2" | sed -n 1p | grep -qx "my message" && ok "NCZARR_ICECHUNK_MESSAGE" || bad "NCZARR_ICECHUNK_MESSAGE"
before=$(ice history "$r2" | wc -l)
"$W" "file://$r2#mode=nczarr,icechunk" abort && [ "$(ice history "$r2" | wc -l)" -eq "$before" ] && [ "$(ice value "$r2" main t 0,0,0)" = "5.0" ] \
    && ok "nc_abort commits nothing" || bad "nc_abort commits nothing"
LD_PRELOAD="$pre" ncks --no_tmp_fl -O "$d/dev.nc" "file://$d/nco.repo#mode=nczarr,icechunk" > "$scratch/nco.txt" 2>&1 \
    && ice read "$d/nco.repo" main "$d/dev.nc" > "$scratch/r.txt" 2>&1 && ok "ncks writes a repository icechunk-python reads equal" \
    || { bad "ncks into a repository"; cat "$scratch/nco.txt" "$scratch/r.txt"; }
cat > "$scratch/f.f90" << 'EOF'
program ice_f
  use netcdf
  implicit none
  integer :: nc, x, v, i
  real :: vals(5) = [(real(i) * 1.5, i = 1, 5)]
  call check(nf90_create(trim(arg(1)), nf90_netcdf4, nc))
  call check(nf90_def_dim(nc, "x", 5, x))
  call check(nf90_def_var(nc, "f", nf90_real, [x], v))
  call check(nf90_put_att(nc, v, "units", "m"))
  call check(nf90_enddef(nc))
  call check(nf90_put_var(nc, v, vals))
  call check(nf90_close(nc))
contains
  function arg(k) result(s)
    integer, intent(in) :: k
    character(len=512) :: s
    call get_command_argument(k, s)
  end function
  subroutine check(s)
    integer, intent(in) :: s
    if (s /= nf90_noerr) then
      print *, trim(nf90_strerror(s))
      stop 1
    end if
  end subroutine
end program
EOF
gfortran -I/usr/include -o "$scratch/ice_f" "$scratch/f.f90" -lnetcdff 2> "$scratch/fc.txt" \
    || { bad "build the Fortran writer"; cat "$scratch/fc.txt"; }
LD_LIBRARY_PATH="$build" "$scratch/ice_f" "file://$d/f.repo#mode=nczarr,icechunk&branch=main" && [ "$(ice value "$d/f.repo" main f 4)" = "7.5" ] \
    && [ "$(ice history "$d/f.repo" | wc -l)" -eq 2 ] && ok "a Fortran program's nf90_close is one snapshot icechunk-python reads" || bad "a Fortran writer"
fi

# 3. Versions by name: writing to a tag or snapshot is NC_EPERM; a create on a new branch starts
#    it from main; main and the tag keep their values.
if case_ "3-versions"; then
"$W" "$repo&tag=v1" put t 0,0,0 1 2> "$scratch/e.txt" && bad "a tag must be read-only" \
    || { grep -q "Write to read only" "$scratch/e.txt" && ok "writing to a tag: NC_EPERM" || { bad "writing to a tag"; cat "$scratch/e.txt"; }; }
LD_PRELOAD="$pre" nccopy "$d/v1.nc" "$repo&branch=copy" && ice read "$d/py.repo" copy "$d/v1.nc" > /dev/null 2>&1 \
    && ice read "$d/py.repo" main "$d/main.nc" > /dev/null 2>&1 && ice read "$d/py.repo" tag:v1 "$d/v1.nc" > /dev/null 2>&1 \
    && ok "nccopy into a new branch; main and v1 unchanged" || bad "nccopy into a new branch"
r3="$d/clobber.repo"; "$W" "file://$r3#mode=nczarr,icechunk" crash old > /dev/null && "$W" "file://$r3#mode=nczarr,icechunk" crash new > /dev/null
[ "$(ice history "$r3" | wc -l)" -eq 3 ] && [ "$(ice value "$r3" main t 0,1)" = "2.0" ] \
    && ok "nc_create of an existing repository: one more commit, the new dataset" || bad "nc_create of an existing repository"
NCZARR_LOG=errors "$W" "$repo&branch=nosuch" put t 0,0,0 1 2> "$scratch/e.txt" && bad "opening a missing branch must fail" \
    || { grep -q "branch nosuch" "$scratch/e.txt" && ok "nc_open of a missing branch fails, named" || { bad "a missing branch"; cat "$scratch/e.txt"; }; }
fi

# 4. Two writers at once: disjoint chunks both land (the second commit rebased); the same chunk
#    fails the second nc_close with NC_EOBJECT and the first's value stays.
if case_ "4-concurrent"; then
# A copy of icechunk-python's repository: t in chunks of 3 x 5 x 6, so the two corners written
# are in different chunks.
r4="$d/race.repo"; cp -a "$d/py.repo" "$r4"
u="file://$r4#mode=nczarr,icechunk"
rm -f "$scratch/go"; "$W" "$u" put t 0,0,0 111 "$scratch/go" & a=$!
sleep 1; "$W" "$u" put t 5,9,11 222; b=$?
touch "$scratch/go"; wait $a; a=$?
[ "$a" -eq 0 ] && [ "$b" -eq 0 ] && [ "$(ice value "$r4" main t 0,0,0)" = "111.0" ] && [ "$(ice value "$r4" main t 5,9,11)" = "222.0" ] \
    && ok "two writers of disjoint chunks: both land" || bad "disjoint chunks: exits $a $b, values $(ice value "$r4" main t 0,0,0) $(ice value "$r4" main t 5,9,11)"
rm -f "$scratch/go"; "$W" "$u" put t 0,0,1 333 "$scratch/go" 2> "$scratch/a.txt" & a=$!
sleep 1; "$W" "$u" put t 0,0,1 444; b=$?
touch "$scratch/go"; wait $a; a=$?
[ "$b" -eq 0 ] && [ "$a" -eq 3 ] && [ "$(ice value "$r4" main t 0,0,1)" = "444.0" ] \
    && ok "two writers of one chunk: the later close is NC_EOBJECT, the first's value kept" \
    || { bad "one chunk: exits $a $b, value $(ice value "$r4" main t 0,0,1)"; cat "$scratch/a.txt"; }
# A reader opened before a commit keeps reading the snapshot it opened (all of a commit or none).
LD_PRELOAD="$pre" python3 - "$u" "$W" << 'PY' && ok "a reader opened before a commit sees none of it; one opened after sees all" || bad "snapshot isolation of readers"
import subprocess, sys, netCDF4
url, writer = sys.argv[1], sys.argv[2]
before = netCDF4.Dataset(url)
old = float(before["t"][0, 0, 0])
subprocess.run([writer, url, "put", "t", "0,0,0", str(old + 1)], check=True)
subprocess.run([writer, url, "put", "t", "5,9,11", "-5"], check=True)
assert float(before["t"][0, 0, 0]) == old and float(before["t"][5, 9, 11]) != -5, "the open reader saw a later commit"
after = netCDF4.Dataset(url)
assert float(after["t"][0, 0, 0]) == old + 1 and float(after["t"][5, 9, 11]) == -5, "a new reader missed the commits"
PY
fi

# 5. A writer killed at each file-system mutation of nc_create .. nc_close into a repository
#    (ctests/crash/crashpoint.c) leaves the branch at the old snapshot or the new one.
if case_ "5-crash-points"; then
cc -shared -fPIC -O2 -o "$scratch/crashpoint.so" "$top/ctests/crash/crashpoint.c" -ldl || bad "build crashpoint.so"
c="$d/crash.repo"; url="file://$c#mode=nczarr,icechunk"
dump() { LD_LIBRARY_PATH="$build" NCZARR_FALLBACK_LIB= ncdump "$url" 2>&1 | sed 1d; }
"$W" "$url" crash new > /dev/null && dump > "$scratch/new.txt"
rm -rf "$c"; "$W" "$url" crash old > /dev/null && dump > "$scratch/old.txt"
cp -a "$c" "$d/crash.old"
total=$(LD_PRELOAD="$scratch/crashpoint.so" "$W" "$url" crash new)
o=0 n=0 l=0 i=1
while [ "$i" -le "${total:-0}" ]; do
    rm -rf "$c"; cp -a "$d/crash.old" "$c"
    CRASH_AT=$i LD_PRELOAD="$scratch/crashpoint.so" "$W" "$url" crash new > /dev/null 2>&1
    dump > "$scratch/got.txt"
    if cmp -s "$scratch/got.txt" "$scratch/old.txt"; then o=$((o + 1))
    elif cmp -s "$scratch/got.txt" "$scratch/new.txt"; then n=$((n + 1))
    else l=$((l + 1)); echo "# crash point $i: neither state"; head -5 "$scratch/got.txt"; fi
    i=$((i + 1))
done
[ "${total:-0}" -gt 3 ] && [ "$l" -eq 0 ] && ok "crash points of a commit: $total: old $o, new $n, broken 0" \
    || bad "crash points of a commit: $total: old $o, new $n, broken $l"
fi

# 6. On S3 (moto): nccopy into a repository under a prefix, read back by icechunk-python and by
#    nc_open, a second commit, the tag of a repository icechunk-python wrote there.
if case_ "6-s3"; then
M=$(port); moto_server -H 127.0.0.1 -p "$M" > "$scratch/moto.log" 2>&1 & pids="$pids $!"
i=0; until curl -s "http://127.0.0.1:$M" > /dev/null 2>&1 || [ $i -ge 50 ]; do sleep 0.2; i=$((i + 1)); done
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
python3 -c "import boto3; boto3.client('s3', endpoint_url='http://127.0.0.1:$M').create_bucket(Bucket='ice')"
s3u="http://127.0.0.1:$M/ice/a/repo#mode=nczarr,icechunk,s3"
LD_PRELOAD="$pre" nccopy "$d/main.nc" "$s3u" && ok "nccopy into a repository on S3" || bad "nccopy into a repository on S3"
ice --s3 "http://127.0.0.1:$M" read s3://ice/a/repo main "$d/main.nc" > "$scratch/r.txt" 2>&1 && ok "icechunk-python reads it from S3 equal" \
    || { bad "icechunk-python reading from S3"; cat "$scratch/r.txt"; }
compare "$s3u" "$d/main.nc" && ok "read back through nc_open" || { bad "read back from S3"; cat "$scratch/cmp.txt"; }
"$W" "$s3u" syncs 2 && [ "$(ice --s3 "http://127.0.0.1:$M" history s3://ice/a/repo | wc -l)" -eq 4 ] \
    && ok "two more commits on S3 (4 snapshots)" || bad "commits on S3"
# kill -9 of a writer at moments spread over its life (open, write, nc_close: one commit of every
# value + 1; about 0.1 s on S3 here): main is always one whole snapshot, the last one or the new
# one, read alike by icechunk-python and by us. (Case 5 enumerates the crash points of a commit
# one by one, locally; on S3 the moments are by time.)
old=0 new=0 broken=0
before=$(ice --s3 "http://127.0.0.1:$M" offset s3://ice/a/repo main "$d/main.nc")
n=0
for ms in 20 40 60 70 80 90 100 110 120 140 170 200 300 600 1200; do
    n=$((n + 1))
    "$W" "$s3u" syncs 1 > /dev/null 2>&1 & w=$!
    sleep "$(awk "BEGIN { print $ms / 1000 }")"; kill -9 "$w" 2> /dev/null; wait "$w" 2> /dev/null
    after=$(ice --s3 "http://127.0.0.1:$M" offset s3://ice/a/repo main "$d/main.nc")
    ours=$(LD_PRELOAD="$pre" python3 -c "import netCDF4, numpy as np; a = netCDF4.Dataset('$s3u')['t'][...]; b = netCDF4.Dataset('$d/main.nc')['t'][...]; print(' '.join(str(v) for v in np.unique(np.round(np.asarray(a, 'f8') - np.asarray(b, 'f8'), 6))))")
    whole=no; case "$after" in "" | *" "*) ;; *) [ "$ours" = "$after" ] && whole=yes ;; esac
    if [ "$whole" = yes ] && awk "BEGIN { exit !($after == $before) }"; then old=$((old + 1))
    elif [ "$whole" = yes ] && awk "BEGIN { exit !($after == $before + 1) }"; then new=$((new + 1)); before=$after
    else broken=$((broken + 1)); echo "after a kill at $ms ms: icechunk-python sees offsets '$after', we see '$ours' (before: $before)"; fi
done
[ "$broken" -eq 0 ] && [ "$old" -gt 0 ] && [ "$new" -gt 0 ] && ok "kill -9 of a writer on S3 at $n moments: old $old, new $new, broken 0" \
    || bad "kill -9 on S3: old $old, new $new, broken $broken"
fi

# 7. Virtual chunks (VirtualiZarr's kind of repository): arrays whose chunks are byte ranges of a
#    netCDF file, read equal through nc_open by our reference store (its trace line says so); the
#    same repository on S3 may not read local files (the rule for documents that name other data:
#    NC_EACCESS) unless NCZARR_ALLOW_TARGETS allows them; references into the file as an S3 object
#    are read with the library's S3 settings, not the container's.
if case_ "7-virtual"; then
ice virtual "$d" > "$scratch/v.txt" 2>&1 || { bad "icechunk-python writing virtual references"; cat "$scratch/v.txt"; }
compare "file://$d/virt.repo#mode=nczarr,icechunk" "$d/virt/data.nc" && ok "virtual chunks into a netCDF file: $(grep -c '^ok' "$scratch/cmp.txt") variables equal" \
    || { bad "virtual chunks"; cat "$scratch/cmp.txt"; }
NCTRACING=2 LD_PRELOAD="$pre" ncdump -v v "file://$d/virt.repo#mode=nczarr,icechunk" 2>&1 >/dev/null | grep -q "virtual chunks read by reference" \
    && ok "... read through the reference store kerchunk references use" || bad "virtual chunks not read by reference"
M=$(port); moto_server -H 127.0.0.1 -p "$M" > "$scratch/moto7.log" 2>&1 & pids="$pids $!"
i=0; until curl -s "http://127.0.0.1:$M" > /dev/null 2>&1 || [ $i -ge 50 ]; do sleep 0.2; i=$((i + 1)); done
AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test python3 - "$M" "$d/virt.repo" << 'PY'
import os, sys, boto3
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{sys.argv[1]}", region_name="us-east-1")
s3.create_bucket(Bucket="virt")
root = sys.argv[2]
for top, _, files in os.walk(root):
    for f in files:
        s3.upload_file(os.path.join(top, f), "virt", "r/" + os.path.relpath(os.path.join(top, f), root))
PY
vu="http://127.0.0.1:$M/virt/r#mode=nczarr,icechunk,s3"
AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test NCZARR_LOG=errors LD_PRELOAD="$pre" ncdump -v v "$vu" > /dev/null 2> "$scratch/e.txt" \
    && bad "a repository on S3 must not read local files" \
    || { grep -q "Access failure" "$scratch/e.txt" && ok "a repository on S3 pointing at local files: refused (NC_EACCESS)" || { bad "refusal"; cat "$scratch/e.txt"; }; }
AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test NCZARR_ALLOW_TARGETS="$d/virt/" compare "$vu" "$d/virt/data.nc" \
    && ok "... read when NCZARR_ALLOW_TARGETS allows the folder" || { bad "NCZARR_ALLOW_TARGETS for virtual chunks"; cat "$scratch/cmp.txt"; }
ice virtual_s3 "$d" "http://127.0.0.1:$M" > "$scratch/vs.txt" 2>&1 || { bad "icechunk-python writing references into an S3 object"; cat "$scratch/vs.txt"; }
NCTRACING=2 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_ENDPOINT_URL="http://127.0.0.1:$M" compare "file://$d/virts3.repo#mode=nczarr,icechunk" "$d/virt/data.nc" \
    && grep -q "virtual chunks read by reference" "$scratch/cmp.txt" && ok "virtual chunks into an S3 object, by reference with the library's S3 settings (AWS_ENDPOINT_URL): $(grep -c '^ok' "$scratch/cmp.txt") variables equal" \
    || { bad "virtual chunks on S3"; cat "$scratch/cmp.txt"; }
fi

# 8. Spec versions: NCZARR_ICECHUNK_SPEC=2 makes a spec 2 repository (its `repo` object), which
#    takes commits and reads back; the spec 1 ones above were committed into without migrating
#    (icechunk-python 1.1 still reads them); another number is NC_EINVAL.
if case_ "8-spec"; then
r8="$d/spec2.repo"
NCZARR_ICECHUNK_SPEC=2 LD_PRELOAD="$pre" nccopy "$d/main.nc" "file://$r8#mode=nczarr,icechunk" && [ -f "$r8/repo" ] \
    && ok "NCZARR_ICECHUNK_SPEC=2: a spec 2 repository" || bad "a spec 2 repository"
"$W" "file://$r8#mode=nczarr,icechunk" syncs 2 && got=$(LD_PRELOAD="$pre" python3 -c "import netCDF4; print(float(netCDF4.Dataset('file://$r8#mode=nczarr,icechunk')['t'][0,0,1]))") \
    && want=$(python3 -c "import netCDF4; print(float(netCDF4.Dataset('$d/main.nc')['t'][0,0,1]) + 2)") && [ "$got" = "$want" ] \
    && ok "two commits into it read back ($got)" || bad "commits into a spec 2 repository: ${got:-} want ${want:-}"
[ ! -f "$d/py.repo/repo" ] && ok "icechunk-python's spec 1 repository written into and still spec 1" || bad "the spec 1 repository was migrated"
NCZARR_ICECHUNK_SPEC=3 LD_PRELOAD="$pre" nccopy "$d/main.nc" "file://$d/spec3.repo#mode=nczarr,icechunk" 2> "$scratch/e.txt" \
    && bad "NCZARR_ICECHUNK_SPEC=3 must fail" || { grep -q "Invalid argument" "$scratch/e.txt" && ok "NCZARR_ICECHUNK_SPEC=3: NC_EINVAL" || { bad "spec 3"; cat "$scratch/e.txt"; }; }
fi

# 9. Damaged repositories fail with an error and its reason, never a crash or a hang: snapshots
#    cut short, manifests of garbage, chunk objects cut short, no refs.
if case_ "9-damaged"; then
damage() { # name what-to-damage command
    rm -rf "$d/h.repo"; cp -a "$d/$2" "$d/h.repo"; sh -c "$3" "$d"
    LD_PRELOAD="$pre" NCZARR_LOG=errors timeout 60 ncdump -v t "file://$d/h.repo#mode=nczarr,icechunk" > /dev/null 2> "$scratch/h.txt"; rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && grep -q "$4" "$scratch/h.txt" && ok "$1: $(grep -o "$4" "$scratch/h.txt" | head -1)" \
        || { bad "$1 (exit $rc)"; tail -3 "$scratch/h.txt"; }
}
LD_PRELOAD="$pre" nccopy "$d/main.nc" "file://$d/big.repo#mode=nczarr,icechunk"
damage "snapshots cut short" py.repo 'for f in "$0"/h.repo/snapshots/*; do head -c 20 "$f" > "$f.t"; mv "$f.t" "$f"; done' "I/O failure"
damage "manifests of garbage" py.repo 'for f in "$0"/h.repo/manifests/*; do printf garbage > "$f"; done' "invalid icechunk header"
damage "chunk objects cut short" big.repo 'for f in "$0"/h.repo/chunks/*; do head -c 100 "$f" > "$f.t"; mv "$f.t" "$f"; done' "past the end"
damage "no refs" py.repo 'rm -rf "$0"/h.repo/refs/*' "no Icechunk repository"
fi

echo "icechunk tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/bin/sh
# Aggregated datasets (CFA-netCDF 0.4/0.5 masters written by S3netCDF4, in
# ctests/fixtures/s3netcdf4) read through the preload library in front of Debian's
# netcdf-c: ncdump of each master equals the logical dataset S3netCDF4's own reader returns;
# the C API's view (inquiries, hyperslabs and strides across fragments, conversions) equals
# the fragment files read directly; nocfa opens a master raw; missing and wrong fragments;
# nccopy materialises a master as netCDF-4 and as NCZarr; CF aggregation files written by
# cfdm read as cfdm reads them. (On S3: ctests/s3/run.sh.)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
for tool in ncdump nccopy python3; do
    command -v $tool > /dev/null || { echo "missing tool: $tool (sh ctests/ensure_deps.sh)"; exit 1; }
done
fix="$top/ctests/fixtures/s3netcdf4"
[ -d "$fix" ] || { echo "missing fixtures: $fix"; exit 1; }
cp -r "$fix" "$scratch/fx"
F="$scratch/fx"
# What S3netCDF4's reader returns for each master (cases 1 and 9 compare with it).
for m in cfa3_v04 cfa4_v04 cfa4_v05; do sed 1d "$F/$m.expected.cdl" > "$scratch/$m.want.cdl"; done
# The CF aggregation files cfdm writes (cases 7 and 10), made once by the first case to ask.
cf_files() {
    [ -f "$scratch/cf/frag1.nc" ] && return 0
    mkdir -p "$scratch/cf"
    python3 -c "import cfdm" 2> /dev/null || { echo "missing Python package: cfdm (sh ctests/ensure_deps.sh)"; exit 1; }
    python3 "$top/ctests/cfa/cfdm_files.py" make "$scratch/cf" > "$scratch/o.txt" 2>&1 && ok "cfdm writes aggregation files" || { bad "cfdm writes aggregation files"; cat "$scratch/o.txt"; }
}

# 1. Each S3netCDF4 master: ncdump equals its logical dataset; the C API's view (t_cfa); by
#    absolute path; raw with nocfa or NCZARR_CFA=0; nccopy materialises it as netCDF-4 and NCZarr.
if case_ "1-s3netcdf4-masters"; then
cc -std=c11 -Wall -I/usr/include -o "$scratch/t_cfa" "$top/ctests/cfa/t_cfa.c" -lnetcdf || bad "t_cfa build"
for case in "cfa3_v04 3 18 12" "cfa4_v04 6 9 36" "cfa4_v05 4 9 18"; do
    set -- $case
    m=$1
    (cd "$F" && LD_PRELOAD="$pre" ncdump "$m.nca") 2> "$scratch/err.txt" | sed 1d > "$scratch/$m.cdl"
    same "ncdump of $m.nca equals its logical dataset" "$scratch/$m.want.cdl" "$scratch/$m.cdl"
    [ -s "$scratch/err.txt" ] && { bad "$m: messages on stderr"; head -5 "$scratch/err.txt"; } || ok "$m: nothing on stderr"
    LD_PRELOAD="$pre" "$scratch/t_cfa" "$F/$m.nca" "$F/$m/$m" $2 $3 $4 > "$scratch/o.txt" 2>&1 && ok "t_cfa $m" || { bad "t_cfa $m"; cat "$scratch/o.txt"; }
    # By absolute path, from another directory (fragments resolve against the master).
    LD_PRELOAD="$pre" ncdump "$F/$m.nca" | sed 1d | cmp -s - "$scratch/$m.want.cdl" && ok "$m by absolute path" || bad "$m by absolute path"
    # Raw: the bookkeeping is visible again.
    LD_PRELOAD="$pre" ncdump -h "file://$F/$m.nca#mode=nocfa" | grep -q 'cf_role = "cfa_variable"' && ok "$m with #mode=nocfa" || bad "$m with #mode=nocfa"
    NCZARR_CFA=0 LD_PRELOAD="$pre" ncdump -h "$F/$m.nca" | grep -q 'cf_role = "cfa_variable"' && ok "$m with NCZARR_CFA=0" || bad "$m with NCZARR_CFA=0"
    # nccopy materialises the logical dataset: as netCDF-4, and as NCZarr.
    LD_PRELOAD="$pre" nccopy -k nc4 "$F/$m.nca" "$scratch/$m.nc" && ok "nccopy $m to netCDF-4" || bad "nccopy $m to netCDF-4"
    ncdump "$scratch/$m.nc" | sed 1d | cmp -s - "$scratch/$m.want.cdl" && ok "nccopy $m to netCDF-4: values" || bad "nccopy $m to netCDF-4: values"
    LD_PRELOAD="$pre" nccopy "$F/$m.nca" "file://$scratch/$m.zarr#mode=nczarr,file" && ok "nccopy $m to NCZarr" || bad "nccopy $m to NCZarr"
    LD_PRELOAD="$pre" ncdump "file://$scratch/$m.zarr#mode=nczarr,file" | sed 1d | cmp -s - "$scratch/$m.want.cdl" && ok "nccopy $m to NCZarr: values" || bad "nccopy $m to NCZarr: values"
done
fi

# 2. A fragment file that is gone: the read fails (ENOENT) and the log names the fragment.
if case_ "2-missing-fragment-file"; then
cp -r "$F" "$scratch/gone"
rm "$scratch/gone/cfa4_v04/cfa4_v04.tas.1.1.0.nc"
(cd "$scratch/gone" && NCTRACING=1 LD_PRELOAD="$pre" ncdump -v tas cfa4_v04.nca) > /dev/null 2> "$scratch/gone.txt" && bad "a missing fragment file must fail the read" || ok "a missing fragment file fails the read"
grep -q "fragment ./cfa4_v04/cfa4_v04.tas.1.1.0.nc\|fragment .*cfa4_v04.tas.1.1.0.nc: cannot open" "$scratch/gone.txt" && ok "the missing fragment is named" || { bad "the missing fragment is named"; tail -3 "$scratch/gone.txt"; }
(cd "$scratch/gone" && LD_PRELOAD="$pre" ncdump -v pr cfa4_v04.nca) > /dev/null 2>&1 && ok "the other variable still reads" || bad "the other variable still reads"
fi

# 3. A fragment of the wrong shape: a clear error, never wrong data.
if case_ "3-wrong-shape-fragment"; then
cp -r "$F" "$scratch/shape"
cp "$F/cfa4_v04/cfa4_v04.tas.0.0.0.nc" "$scratch/shape/cfa4_v05/cfa4_v05.tas.0.0.0.nc"
(cd "$scratch/shape" && NCTRACING=1 LD_PRELOAD="$pre" ncdump -v tas cfa4_v05.nca) > /dev/null 2> "$scratch/shape.txt" && bad "a wrong-shape fragment must fail" || ok "a wrong-shape fragment fails"
grep -q "has shape \[6, 9, 36\], the master says \[4, 9, 18\]" "$scratch/shape.txt" && ok "wrong shape is explained" || { bad "wrong shape is explained"; tail -3 "$scratch/shape.txt"; }
fi

# 4. A fragment whose variable is text, not numbers: a clear error naming it.
if case_ "4-text-fragment"; then
cp -r "$F" "$scratch/type"
python3 -c "
import netCDF4
with netCDF4.Dataset('$scratch/type/cfa4_v05/cfa4_v05.tas.0.0.0.nc', 'w') as ds:
    for d, n in (('time', 4), ('lat', 9), ('lon', 18)):
        ds.createDimension(d, n)
    ds.createVariable('tas', 'S1', ('time', 'lat', 'lon'))
" || bad "writing a text fragment"
(cd "$scratch/type" && NCTRACING=1 LD_PRELOAD="$pre" ncdump -v tas cfa4_v05.nca) > /dev/null 2> "$scratch/type.txt" && bad "a text fragment must fail" || ok "a text fragment fails"
grep -q "fragment .*cfa4_v05.tas.0.0.0.nc: reading tas: .*text" "$scratch/type.txt" && ok "the wrong type is explained" || { bad "the wrong type is explained"; tail -3 "$scratch/type.txt"; }
fi

# 5. Broken or hostile masters are refused at open (NC_EINVAL), never read out of bounds.
if case_ "5-hostile-masters"; then
cp -r "$F" "$scratch/bad"
python3 -c "
import netCDF4, json
with netCDF4.Dataset('$scratch/bad/cfa3_v04.nca', 'a') as ds:
    a = json.loads(ds['tas'].cfa_array)
    a['Partitions'][0]['location'] = [[0, 99999999], [0, 17], [0, 11]]
    ds['tas'].cfa_array = json.dumps(a)
    ds['pr'].cfa_array = '{not json'
with netCDF4.Dataset('$scratch/bad/cfa4_v05.nca', 'a') as ds:
    ds.groups['cfa_tas']['location'][0, 0, 0, 0, :] = [-5, 2000000000]
" || bad "editing masters"
for m in cfa3_v04 cfa4_v05; do
    (cd "$scratch/bad" && LD_PRELOAD="$pre" ncdump -h $m.nca) > /dev/null 2> "$scratch/o.txt"; rc=$?
    [ $rc -eq 1 ] && grep -q "Invalid argument" "$scratch/o.txt" && ok "hostile $m refused (rc $rc)" || { bad "hostile $m refused (rc $rc)"; cat "$scratch/o.txt"; }
done
fi

# 6. A partition with no file (CFA-0.5: an empty name) is missing data: the fill value.
if case_ "6-partition-without-file"; then
cp -r "$F" "$scratch/hole"
python3 -c "
import netCDF4
with netCDF4.Dataset('$scratch/hole/cfa4_v05.nca', 'a') as ds:
    ds.groups['cfa_tas']['file'][0, 0, 0] = ''
" || bad "editing the partition matrix"
cat > "$scratch/hole.c" << 'C'
#include <stdio.h>
#include <netcdf.h>
int main(int c, char **v) {
    int ncid, var; float x[12 * 18 * 36];
    if (nc_open(v[1], NC_NOWRITE, &ncid) || nc_inq_varid(ncid, "tas", &var) || nc_get_var_float(ncid, var, x)) return 1;
    /* fragment (0,0,0) covers time 0-3, lat 0-8, lon 0-17: fill; the cell beside it is data */
    printf("%g %g %g\n", x[0], x[(3 * 18 + 8) * 36 + 17], x[18]);
    return nc_close(ncid);
}
C
cc -o "$scratch/hole_read" "$scratch/hole.c" -lnetcdf
out=$(LD_PRELOAD="$pre" "$scratch/hole_read" "$scratch/hole/cfa4_v05.nca")
want=$(python3 -c "
import netCDF4
with netCDF4.Dataset('$F/cfa4_v05/cfa4_v05.tas.0.0.1.nc') as ds: print('-999 -999 %g' % ds['tas'][0, 0, 0])")
[ "$out" = "$want" ] && ok "a partition without a file reads as the fill value ($out, want $want)" || bad "a partition without a file reads as the fill value ($out, want $want)"

fi

# 7. CF aggregation (CF-1.12+) files written by cfdm, with relative and absolute file:// URIs:
#    netCDF4-python reads them through us as cfdm itself reads them, bookkeeping hidden.
if case_ "7-cf-aggregation-files"; then
cf_files
LD_PRELOAD="$pre" python3 "$top/ctests/cfa/cfdm_files.py" read "$scratch/cf" > "$scratch/o.txt" 2>&1 && ok "CF aggregation files read" || { bad "CF aggregation files read"; cat "$scratch/o.txt"; }
LD_PRELOAD="$pre" nccopy -k nc4 "$scratch/cf/agg_rel.nc" "$scratch/cf/flat.nc" && ok "nccopy of a CF aggregation file" || bad "nccopy of a CF aggregation file"
ncdump -h "$scratch/cf/flat.nc" | grep -q "double q(lat, lon)" && ok "nccopy materialised q(lat, lon)" || bad "nccopy materialised q(lat, lon)"
# CF unique_values fragments are constants; a missing value is a missing fragment.
python3 - "$scratch/cf/uv.nc" << 'PY' || bad "writing a unique_values aggregation"
import sys, netCDF4, numpy as np
with netCDF4.Dataset(sys.argv[1], "w") as ds:
    ds.Conventions = "CF-1.12"
    for name, n in (("t", 6), ("x", 4), ("rows", 2), ("cols", 3), ("f_t", 3), ("f_x", 1)):
        ds.createDimension(name, n)
    v = ds.createVariable("v", "f4", (), fill_value=-1.0)
    v.aggregated_dimensions = "t x"
    v.aggregated_data = "map: fragment_map unique_values: fragment_values"
    m = ds.createVariable("fragment_map", "i4", ("rows", "cols"), fill_value=-1)
    m[:] = np.ma.masked_equal(np.array([[2, 2, 2], [4, -1, -1]], dtype="i4"), -1)
    u = ds.createVariable("fragment_values", "f4", ("f_t", "f_x"), fill_value=-1.0)
    u[:] = np.ma.masked_equal(np.array([[1.5], [-1.0], [3.25]], dtype="f4"), -1.0)
PY
LD_PRELOAD="$pre" ncdump -v v "$scratch/cf/uv.nc" | tr -d ' \n' | grep -q "v=1.5,1.5,1.5,1.5,1.5,1.5,1.5,1.5,_,_,_,_,_,_,_,_,3.25,3.25,3.25,3.25,3.25,3.25,3.25,3.25;" \
    && ok "unique_values fragments" || bad "unique_values fragments"
# A file that names CF-1.12 but aggregates nothing is left alone.
ncdump -h "$scratch/cf/frag0.nc" > "$scratch/plain.cdl"
LD_PRELOAD="$pre" ncdump -h "$scratch/cf/frag0.nc" | cmp -s - "$scratch/plain.cdl" && ok "a plain CF file is not touched" || bad "a plain CF file is not touched"

fi

# 8. Writing (#mode=cfa): the C API's view of what it wrote, the fragment files themselves, an
#    abort, NC_NOCLOBBER, and 200 fragments under a budget of 8 open files with a descriptor
#    limit that more open files would exceed; for each master convention.
if case_ "8-write-each-convention"; then
cc -std=c11 -Wall -I/usr/include -o "$scratch/t_cfa_write" "$top/ctests/cfa/t_cfa_write.c" -lnetcdf || bad "t_cfa_write build"
for conv in cf 0.5 0.4; do
    mkdir -p "$scratch/w$conv"
    (ulimit -n 40; cd "$scratch/w$conv" && NCZARR_CFA_FILEHANDLES=8 LD_PRELOAD="$pre" "$scratch/t_cfa_write" "$scratch/w$conv" $conv) > "$scratch/o.txt" 2>&1 \
        && ok "t_cfa_write $conv" || { bad "t_cfa_write $conv"; tail -5 "$scratch/o.txt"; }
done
# Without the budget the same descriptor limit is exceeded (so the run above proves the budget).
mkdir -p "$scratch/wnobudget"
(ulimit -n 40; NCZARR_CFA_FILEHANDLES=1000 LD_PRELOAD="$pre" "$scratch/t_cfa_write" "$scratch/wnobudget" cf) > "$scratch/o.txt" 2>&1 \
    && bad "200 open fragments under 40 descriptors should fail without the budget" || ok "without the budget 40 descriptors are exceeded"
# S3netCDF4's layouts: the partition group / JSON, the names, inclusive and half-open ranges.
python3 "$top/ctests/cfa/layout.py" "$scratch/w0.5/w.nca" "$F/cfa4_v05.nca" 0.5 > "$scratch/o.txt" 2>&1 && ok "CFA-0.5 layout" || { bad "CFA-0.5 layout"; cat "$scratch/o.txt"; }
python3 "$top/ctests/cfa/layout.py" "$scratch/w0.4/w.nca" "$F/cfa4_v04.nca" 0.4 > "$scratch/o.txt" 2>&1 && ok "CFA-0.4 layout" || { bad "CFA-0.4 layout"; cat "$scratch/o.txt"; }
# cfdm reads our CF aggregation master: the values we read.
LD_PRELOAD="$pre" python3 "$top/ctests/cfa/cfdm_files.py" dump "$scratch/wcf/w.nca" "$scratch/wcf.npz" > /dev/null 2>&1 || bad "dumping our master"
python3 "$top/ctests/cfa/cfdm_files.py" ours "$scratch/wcf/w.nca" "$scratch/wcf.npz" > "$scratch/o.txt" 2>&1 && ok "cfdm reads ours" || { bad "cfdm reads ours"; cat "$scratch/o.txt"; }
fi

# 9. Real clients write aggregated datasets: nccopy of S3netCDF4's logical dataset into each
#    convention, read back equal; netCDF4-python writing one with fragments never written
#    (cfdm reads them as missing data).
if case_ "9-clients-write"; then
for conv in cf 0.5 0.4; do
    case $conv in cf) q="";; *) q="\&cfa=$conv";; esac
    LD_PRELOAD="$pre" nccopy -k nc4 "$F/cfa4_v05.nca" "file://$scratch/copy$conv.nca#mode=cfa$(printf "$q")" && ok "nccopy into #mode=cfa ($conv)" || bad "nccopy into #mode=cfa ($conv)"
    LD_PRELOAD="$pre" ncdump "$scratch/copy$conv.nca" | sed 1d | grep -v ':Conventions = ' > "$scratch/copy.cdl"
    grep -v ':Conventions = ' "$scratch/cfa4_v05.want.cdl" | cmp -s - "$scratch/copy.cdl" && ok "nccopy into #mode=cfa ($conv): values" || { bad "nccopy into #mode=cfa ($conv): values"; diff "$scratch/cfa4_v05.want.cdl" "$scratch/copy.cdl" | head -5; }
done
ls "$scratch/copycf/" | grep -q "^copycf.tas.0.0.nc$\|^copycf.tas.0.0.0.nc$" && ok "fragments named as S3netCDF4 names them" || { bad "fragments named as S3netCDF4 names them"; ls "$scratch/copycf" | head -3; }
LD_PRELOAD="$pre" python3 - "$scratch/sparse.nca" << 'PY' > "$scratch/o.txt" 2>&1 && ok "netCDF4-python writes a sparse aggregated dataset" || { bad "netCDF4-python writes a sparse aggregated dataset"; cat "$scratch/o.txt"; }
import sys, netCDF4, numpy as np
with netCDF4.Dataset(sys.argv[1] + "#mode=cfa", "w") as ds:
    ds.createDimension("y", 6)
    ds.createDimension("x", 8)
    v = ds.createVariable("v", "f8", ("y", "x"), chunksizes=(3, 4), fill_value=-1.0)
    v[0:3, 0:4] = np.arange(12.0).reshape(3, 4)
with netCDF4.Dataset(sys.argv[1]) as ds:
    got = ds["v"][...]
    assert got[2, 3] == 11.0 and got.mask[3:, :].all() and got.mask[:, 4:].all(), got
PY
# (CF aggregation has no missing fragments: the unwritten ones are files of fill values.)
ls "$scratch/sparse" | wc -l | grep -qx 4 && ok "every fragment is a file" || bad "every fragment is a file"
LD_PRELOAD="$pre" python3 "$top/ctests/cfa/cfdm_files.py" dump "$scratch/sparse.nca" "$scratch/sparse.npz" > /dev/null 2>&1 || bad "dumping the sparse master"
python3 "$top/ctests/cfa/cfdm_files.py" ours "$scratch/sparse.nca" "$scratch/sparse.npz" > "$scratch/o.txt" 2>&1 && ok "cfdm reads missing fragments as missing data" || { bad "cfdm reads missing fragments as missing data"; cat "$scratch/o.txt"; }

fi

# 10. Sub-groups: ours keep theirs in the master; a CF aggregation variable in a sub-group reads
#     as an ordinary variable of that group.
if case_ "10-sub-groups"; then
cf_files
LD_PRELOAD="$pre" python3 - "$scratch/groups.nca" "$scratch/cf/frag1.nc" << 'PY' > "$scratch/o.txt" 2>&1 && ok "groups in aggregated datasets" || { bad "groups in aggregated datasets"; cat "$scratch/o.txt"; }
import sys, netCDF4, numpy as np
with netCDF4.Dataset(sys.argv[1] + "#mode=cfa", "w") as ds:
    ds.createDimension("y", 4)
    ds.createDimension("x", 6)
    ds.createVariable("v", "i4", ("y", "x"), chunksizes=(2, 3))[:] = np.arange(24).reshape(4, 6)
    g = ds.createGroup("g")
    g.note = "kept"
    g.createVariable("w", "f8", ("x",))[:] = np.arange(6) * 0.5
with netCDF4.Dataset(sys.argv[1]) as ds:
    assert (ds["v"][:] == np.arange(24).reshape(4, 6)).all()
    g = ds.groups["g"]
    assert g.note == "kept" and (g["w"][:] == np.arange(6) * 0.5).all(), g
# A CF master whose aggregation variable lives in group "sub" (cfdm's frag1.nc: q(lat, lon)).
with netCDF4.Dataset(sys.argv[2]) as f:
    q = f["q"][:]
name = sys.argv[1].replace("groups.nca", "subagg.nc")
import os
rel = os.path.relpath(sys.argv[2], os.path.dirname(name))
with netCDF4.Dataset(name, "w") as ds:
    ds.Conventions = "CF-1.12"
    s = ds.createGroup("sub")
    s.createDimension("lat", q.shape[0])
    s.createDimension("lon", q.shape[1])
    s.createDimension("j", 2)
    s.createDimension("i", 1)
    s.createDimension("one", 1)
    v = s.createVariable("q", "f8", ())
    v.aggregated_dimensions = "lat lon"
    v.aggregated_data = "map: fmap uris: furis identifiers: fid"
    m = s.createVariable("fmap", "i4", ("j", "i"))
    m[:] = [[q.shape[0]], [q.shape[1]]]
    u = s.createVariable("furis", str, ("one", "one"))
    u[0, 0] = rel
    s.createVariable("fid", str, ())[...] = np.array("q", dtype=object)
with netCDF4.Dataset(name) as ds:
    s = ds.groups["sub"]
    assert list(s.variables) == ["q"], list(s.variables)
    assert (s["q"][:] == q).all()
print("ok")
PY

fi

# 11. A fragment that cannot be stored (its directory's name is taken by a file) fails the put
#     or the close (written behind the caller, never lost silently), and no master is written.
if case_ "11-fragment-cannot-be-stored"; then
mkdir -p "$scratch/blocked" && touch "$scratch/blocked/b"
LD_PRELOAD="$pre" python3 - "$scratch/blocked/b.nca" << 'PY' > "$scratch/o.txt" 2>&1 && ok "a fragment that cannot be stored is an error" || { bad "a fragment that cannot be stored is an error"; cat "$scratch/o.txt"; }
import sys, netCDF4, numpy as np
ds = netCDF4.Dataset(sys.argv[1] + "#mode=cfa", "w")
ds.createDimension("y", 8)
ds.createDimension("x", 4)
v = ds.createVariable("v", "f4", ("y", "x"), chunksizes=(2, 4))
try:
    v[:] = np.ones((8, 4))
    ds.close()
except RuntimeError as e:
    print("reported:", e)
    sys.exit(0)
sys.exit("no error")
PY
[ ! -e "$scratch/blocked/b.nca" ] && ok "no master after a failed fragment" || bad "no master after a failed fragment"
fi

# 12. Packed variables (short, scale_factor/add_offset, _FillValue) both ways with cfdm: our
#     aggregation of a packed file reads as the source's values in cfdm and through us, and
#     cfdm's aggregation of it (a float variable over the packed fragment) reads unpacked
#     through us. cfdm reads from / (our fragment names are absolute).
if case_ "12-packing"; then
mkdir -p "$scratch/pk"
python3 "$top/ctests/cfa/packing.py" source "$scratch/pk" > "$scratch/o.txt" 2>&1 || { bad "packed source file"; cat "$scratch/o.txt"; }
py() { python3 "$top/ctests/cfa/packing.py" "$@" > "$scratch/o.txt" 2>&1 && ok "$(tail -1 "$scratch/o.txt")" || { bad "packing.py $*"; cat "$scratch/o.txt"; }; }
LD_PRELOAD="$pre" py values "$scratch/pk/src.nc"
for conv in cf 0.5 0.4; do
    LD_PRELOAD="$pre" nccopy -k nc4 "$scratch/pk/src.nc" "file://$scratch/pk/ours$conv.nca#mode=cfa&cfa=$conv" \
        && ok "nccopy of the packed file into #mode=cfa&cfa=$conv" || bad "nccopy of the packed file into #mode=cfa&cfa=$conv"
    LD_PRELOAD="$pre" py values "$scratch/pk/ours$conv.nca"
    LD_PRELOAD="$pre" ncdump -v v "$scratch/pk/ours$conv.nca" | grep -q "v =" && ok "ncdump of our packed $conv aggregation" || bad "ncdump of our packed $conv aggregation"
    LD_PRELOAD="$pre" ncdump -h "$scratch/pk/ours$conv.nca" | grep -q "short v(y, x)" && ok "the $conv aggregation variable stays packed (short)" || bad "the $conv aggregation variable stays packed (short)"
    frag=$(ls "$scratch/pk/ours$conv/"*.nc | head -1)
    ncdump -h "$frag" | grep -q "scale_factor\|add_offset" && bad "a $conv fragment carries the packing" || ok "$conv fragments hold packed values without the packing"
done
py cfdm-reads "$scratch/pk/ourscf.nca"
py cfdm-writes "$scratch/pk"
LD_PRELOAD="$pre" py values "$scratch/pk/cfpacked.nc"
fi

# 13. S3netCDF4 itself (ctests/tools/s3netcdf4.sh builds it once) reads the CFA-0.5 and
#     CFA-0.4 masters we write, from a working directory other than the master's: our masters
#     name fragments in full, as S3netCDF4 does (it opens a name exactly as written).
if case_ "13-s3netcdf4-reads-ours"; then
s3nc=$(sh "$top/ctests/tools/s3netcdf4.sh") || bad "S3netCDF4 build"
mkdir -p "$scratch/s3h" "$scratch/s3nc"
echo '{"version": "9", "hosts": {}, "cache_location": "'"$scratch"'/s3nc/cache", "resource_allocation": {"memory": "1GB", "filehandles": 20}}' > "$scratch/s3h/.s3nc.json"
python3 - "$scratch/s3nc/src.nc" << 'PY'
import sys, netCDF4, numpy as np
with netCDF4.Dataset(sys.argv[1], "w") as ds:
    ds.createDimension("time", 4)
    ds.createDimension("lat", 3)
    ds.createDimension("lon", 5)
    v = ds.createVariable("tas", "f4", ("time", "lat", "lon"), chunksizes=(2, 3, 5))
    v.units = "K"
    v[:] = np.arange(60).reshape(4, 3, 5)
PY
for conv in 0.5 0.4; do
    LD_PRELOAD="$pre" nccopy -k nc4 "$scratch/s3nc/src.nc" "file://$scratch/s3nc/m$conv.nca#mode=cfa&cfa=$conv" || bad "nccopy into cfa=$conv"
    (cd / && HOME="$scratch/s3h" "$s3nc" - "$scratch/s3nc/m$conv.nca" << 'PY') > "$scratch/o.txt" 2>&1 && ok "S3netCDF4 reads our CFA-$conv master from /" || { bad "S3netCDF4 reads our CFA-$conv master from /"; tail -5 "$scratch/o.txt"; }
import sys
import numpy as np
from S3netCDF4._s3netCDF4 import s3Dataset
with s3Dataset(sys.argv[1], "r") as ds:
    got = np.array(ds.variables["tas"][:])
assert (got == np.arange(60).reshape(4, 3, 5)).all(), got.ravel()[:10]
PY
done
# A packed variable (case 12's source) as S3netCDF4 defines it: the stored values and the
# variable's scale_factor/add_offset, applied once by the user (its fragments carry none).
mkdir -p "$scratch/s3nc/pk"
python3 "$top/ctests/cfa/packing.py" source "$scratch/s3nc/pk" > /dev/null 2>&1 || bad "packed source file"
for conv in 0.5 0.4; do
    LD_PRELOAD="$pre" nccopy -k nc4 "$scratch/s3nc/pk/src.nc" "file://$scratch/s3nc/pk/m$conv.nca#mode=cfa&cfa=$conv" || bad "nccopy of the packed file into cfa=$conv"
    (cd / && HOME="$scratch/s3h" "$s3nc" - "$scratch/s3nc/pk/m$conv.nca" << 'PY') > "$scratch/o.txt" 2>&1 && ok "S3netCDF4 reads our packed CFA-$conv master: stored values and the packing, once" || { bad "S3netCDF4 reads our packed CFA-$conv master"; tail -5 "$scratch/o.txt"; }
import sys
import numpy as np
from S3netCDF4._s3netCDF4 import s3Dataset
with s3Dataset(sys.argv[1], "r") as ds:
    v = ds.variables["v"]
    got = np.array(v[:])
    assert (got == [[-200, 0, 100], [-999, 5, 10]]).all(), got
    assert abs(v.scale_factor - 0.01) < 1e-9 and abs(v.add_offset - 273.15) < 1e-6, (v.scale_factor, v.add_offset)
PY
done
fi

echo "CFA tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

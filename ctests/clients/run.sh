#!/bin/sh
# Real clients: Debian's ncdump/ncgen under LD_PRELOAD of our preload library (and with our
# drop-in found first), compared with netcdf-c's own output; persistence and tracing checks;
# the bad-input suite; the export lists of both libraries.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
fixtures="$top/ctests/fixtures/legacy"

for tool in ncdump ncgen ncap2; do
    command -v $tool > /dev/null || { echo "missing tool: $tool (apt-get install netcdf-bin nco)"; exit 1; }
done
cc -std=c11 -I"$top/include" -o "$build/ncprobe" "$top/ctests/tools/ncprobe.c" -L"$build" -lnetcdf -Wl,-rpath,"$build"

# 1. Every legacy NCZarr layout (netcdf-c 4.8.0, 4.8.1, 4.9.2), directory and zip: ncdump -h
#    prints the CDL the datasets were made from.
if case_ "1-every-legacy-nczarr"; then
for v in 4.8.0 4.8.1 4.9.2; do
    for n in public scalars fills; do
        for kind in file zip; do
            [ -f "$fixtures/$v/$n.cdl" ] || continue
            python3 "$top/ctests/cdl_header.py" "$fixtures/$v/$n.cdl" > "$scratch/want.cdl"
            LD_PRELOAD="$pre" ncdump -h "file://$fixtures/$v/$n.$kind#mode=nczarr,$kind" > "$scratch/got.cdl" 2>&1
            same "legacy $v $n.$kind" "$scratch/want.cdl" "$scratch/got.cdl"
        done
    done
done
fi

# 2. Datasets written by netCDF4-python: same `ncdump -h` and `ncdump -hs` as netcdf-c 4.10.1.
if case_ "2-datasets-written-netcdf4"; then
wheel=$(python3 -c "import netCDF4,os,glob;print(glob.glob(os.path.dirname(os.path.dirname(netCDF4.__file__))+'/netcdf4.libs/libnetcdf-*.so*')[0])")
plugins=$(python3 -c "import netCDF4,os;print(os.path.dirname(netCDF4.__file__)+'/plugins')")
mkdir -p "$scratch/py"
HDF5_PLUGIN_PATH="$plugins" python3 "$top/ctests/make_nc4py.py" "$scratch/py" > "$scratch/urls.txt" || bad "netCDF4-python writer"
while read -r url; do
    for opt in -h -hs "" -s; do
        HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$wheel" ncdump $opt "$url" > "$scratch/ref.cdl" 2>&1
        LD_PRELOAD="$pre" ncdump $opt "$url" > "$scratch/got.cdl" 2>&1
        same "netCDF4-python ncdump $opt $url" "$scratch/ref.cdl" "$scratch/got.cdl"
    done
    # Reopen read-write, walk everything, close: every object byte-identical.
    dir=$(echo "$url" | sed -e 's|^file://||' -e 's|#.*||')
    sh "$top/ctests/tools/nctree.sh" "$dir" > "$scratch/before.txt"
    [ "$("$build/ncprobe" "$url" write)" = "rc=0" ] && ok "reopen-write $url" || bad "reopen-write $url"
    sh "$top/ctests/tools/nctree.sh" "$dir" > "$scratch/after.txt"
    same "reopen-write leaves objects byte-identical: $url" "$scratch/before.txt" "$scratch/after.txt"
done < "$scratch/urls.txt"
fi

# 3. A dataset written by Debian's netcdf-c 4.9.0 itself (G2u layout): our ncdump -h matches
#    Debian's own.
if case_ "3-dataset-written-debian"; then
deb="file://$scratch/debian.file#mode=nczarr,file"
ncgen -k nc4 -o "$deb" "$top/ctests/data/debian.cdl" || bad "Debian ncgen"
ncdump -h "$deb" > "$scratch/ref.cdl" 2>&1
LD_PRELOAD="$pre" ncdump -h "$deb" > "$scratch/got.cdl" 2>&1
same "Debian 4.9.0 dataset" "$scratch/ref.cdl" "$scratch/got.cdl"

# Debian 4.9.0 writes NCZarr scalars its own ncdump crashes on; we print the source CDL.
debs="file://$scratch/debian_scalar.file#mode=nczarr,file"
ncgen -k nc4 -o "$debs" "$top/ctests/data/debian_scalar.cdl" || bad "Debian ncgen (scalars)"
LD_PRELOAD="$pre" ncdump -h "$debs" > "$scratch/got_scalar.cdl" 2>&1
same "Debian 4.9.0 scalars" "$top/ctests/data/debian_scalar.cdl" "$scratch/got_scalar.cdl"

# ncgen -lb under LD_PRELOAD writes the legacy fixtures' CDL sources with their data; ncdump
# prints the expected CDL (the `partial` variable's data was written by a program, not CDL).
nopartial() { python3 -c "import re,sys; print(re.sub(r' partial =.*?;\n', '', open(sys.argv[1]).read(), flags=re.S))" "$1"; }
for n in public scalars fills; do
    gen="file://$scratch/gen_$n.file#mode=nczarr,file"
    LD_PRELOAD="$pre" ncgen -lb -k nc4 -o "$gen" "$fixtures/4.9.2/$n.src.cdl" && ok "ncgen -lb $n" || bad "ncgen -lb $n"
    LD_PRELOAD="$pre" ncdump "$gen" | sed "1s/.*/netcdf $n {/" > "$scratch/gen.cdl"
    nopartial "$scratch/gen.cdl" > "$scratch/got.cdl"
    nopartial "$fixtures/4.9.2/$n.cdl" > "$scratch/want.cdl"
    same "ncgen -lb then ncdump: $n" "$scratch/want.cdl" "$scratch/got.cdl"
done

# nccopy under LD_PRELOAD: NCZarr directory -> zip -> pure Zarr -> NCZarr with -d5 -s.
src="$(head -1 "$scratch/urls.txt")"
LD_PRELOAD="$pre" nccopy "$src" "file://$scratch/cp.zip#mode=nczarr,zip" && ok "nccopy file -> zip" || bad "nccopy file -> zip"
LD_PRELOAD="$pre" ncdump "$src" | sed 1d > "$scratch/a.cdl"
LD_PRELOAD="$pre" ncdump "file://$scratch/cp.zip#mode=nczarr,zip" | sed 1d > "$scratch/b.cdl"
same "nccopy to zip keeps everything" "$scratch/a.cdl" "$scratch/b.cdl"
LD_PRELOAD="$pre" nccopy "file://$scratch/cp.zip#mode=nczarr,zip" "file://$scratch/cp.zarr#mode=zarr,file" && ok "nccopy zip -> pure zarr" || bad "nccopy zip -> pure zarr"
LD_PRELOAD="$pre" nccopy -d5 -s "file://$scratch/cp.zarr#mode=zarr,file" "file://$scratch/cp2.file#mode=nczarr,file" && ok "nccopy -d5 -s" || bad "nccopy -d5 -s"
LD_PRELOAD="$pre" ncdump "file://$scratch/cp.zarr#mode=zarr,file" | sed 1d > "$scratch/c.cdl"
LD_PRELOAD="$pre" ncdump "file://$scratch/cp2.file#mode=nczarr,file" | sed 1d > "$scratch/d.cdl"
same "nccopy from pure zarr back to NCZarr keeps values" "$scratch/c.cdl" "$scratch/d.cdl"
LD_PRELOAD="$pre" ncdump -hs "file://$scratch/cp2.file#mode=nczarr,file" | grep -q 't:_DeflateLevel = 5' && ok "nccopy -d5 recompressed" || bad "nccopy -d5 recompressed"
LD_PRELOAD="$pre" ncdump -hs "file://$scratch/cp2.file#mode=nczarr,file" | grep -q 't:_Shuffle = "true"' && ok "nccopy -s shuffled" || bad "nccopy -s shuffled"
# Shapes netcdf-c's own tests use: a zip whose first entry's folder x/ is the dataset though
# the archive root holds metadata too (netcdf-c's rule), and a store with .zmetadata only.
mkdir -p "$scratch/odd" && python3 "$top/ctests/tools/odd_stores.py" "$scratch/odd" || bad "odd_stores.py"
LD_PRELOAD="$pre" ncdump "file://$scratch/odd/rootzip.zip#mode=zarr,zip" > "$scratch/odd.cdl" 2>&1
grep -q ':title = "inside x"' "$scratch/odd.cdl" && grep -q 'v = 7, 8, 9' "$scratch/odd.cdl" && ! grep -q 'group:' "$scratch/odd.cdl" \
    && ok || { bad "zip: the first entry's folder is the dataset root"; cat "$scratch/odd.cdl"; }
for m in "zarr,file" "zarr,file,consolidated" "nczarr,file"; do
    LD_PRELOAD="$pre" ncdump "file://$scratch/odd/zmeta.zarr#mode=$m" > "$scratch/odd.cdl" 2>&1
    grep -q 'v = 1, 2, 3, 4' "$scratch/odd.cdl" && grep -q 'w = 0.25, 0.5' "$scratch/odd.cdl" && grep -q ':title = "consolidated only"' "$scratch/odd.cdl" \
        && ok || { bad ".zmetadata without .zgroup ($m)"; cat "$scratch/odd.cdl"; }
done

# nccopy -F parses its filter list with the preload library's ncaux_h5filterspec_parselist;
# bzip2 ignores values after the level, blosc keeps its blocksize (as netcdf-c does).
cat > "$scratch/plain.cdl" <<'CDL'
netcdf plain {
dimensions:
	x = 3 ;
variables:
	ubyte u8(x) ;
	float t(x) ;
data:
 u8 = 0, 128, 255 ;
 t = 1.5, -2, 3.25 ;
}
CDL
LD_PRELOAD="$pre" ncgen -k nc4 -o "file://$scratch/plain.file#mode=nczarr,file" "$scratch/plain.cdl" && ok "ncgen plain" || bad "ncgen plain"
LD_PRELOAD="$pre" nccopy -F "u8,307,9,4" -F "t,32001,0,0,0,256,5,1,1" "file://$scratch/plain.file#mode=nczarr,file" "file://$scratch/cp3.file#mode=nczarr,file" && ok "nccopy -F bzip2 with two values, blosc" || bad "nccopy -F bzip2 with two values, blosc"
LD_PRELOAD="$pre" ncdump -hs "file://$scratch/cp3.file#mode=nczarr,file" > "$scratch/f.cdl"
grep -q 'u8:_Filter = "307,9"' "$scratch/f.cdl" && ok || { bad "nccopy -F bzip2 level kept"; cat "$scratch/f.cdl"; }
grep -q 't:_Filter = "32001,0,0,0,256,5,1,1"' "$scratch/f.cdl" && ok "nccopy -F blosc blocksize kept" || bad "nccopy -F blosc blocksize kept"
LD_PRELOAD="$pre" ncdump "file://$scratch/plain.file#mode=nczarr,file" | sed 1d > "$scratch/e1.cdl"
LD_PRELOAD="$pre" ncdump "file://$scratch/cp3.file#mode=nczarr,file" | sed 1d > "$scratch/e2.cdl"
same "nccopy -F keeps values" "$scratch/e1.cdl" "$scratch/e2.cdl"
python3 -c "
import zarr, numpy as np, sys
g = zarr.open_group(sys.argv[1], mode='r', zarr_format=2)
assert np.allclose(g['t'][:2], [[3, -4.5, 6], [8, 10, 12.25]]), g['t'][:]  # packed: scale_factor 0.5
assert list(g['u8'][:]) == [0, 128, 255]
" "$scratch/cp2.file" && ok "zarr-python reads nccopy -d5 -s output" || bad "zarr-python reads nccopy -d5 -s output"
fi

# 4. The drop-in library replaces Debian's libnetcdf.so.19 outright (tools are BIND_NOW).
if case_ "4-drop-library-replaces"; then
url="file://$fixtures/4.9.2/public.file#mode=nczarr,file"
LD_LIBRARY_PATH="$build" ncdump -h "$url" > "$scratch/dropin.cdl" 2>&1
LD_PRELOAD="$pre" ncdump -h "$url" > "$scratch/preload.cdl" 2>&1
same "drop-in ncdump -h" "$scratch/preload.cdl" "$scratch/dropin.cdl"
LD_LIBRARY_PATH="$build" ldd "$(command -v ncdump)" | grep -q "$build/libnetcdf.so.19" && ok "drop-in is the loaded libnetcdf" || bad "drop-in is the loaded libnetcdf"
LD_LIBRARY_PATH="$build" ncgen -k nc4 -o "file://$scratch/ncgen.file#mode=nczarr,file" "$top/ctests/data/debian.cdl" && ok "drop-in ncgen" || bad "drop-in ncgen"
LD_PRELOAD="$pre" ncdump -h "file://$scratch/ncgen.file#mode=nczarr,file" | sed 's/^netcdf ncgen/netcdf debian/' > "$scratch/got.cdl"
same "ncgen through the drop-in" "$scratch/ref.cdl" "$scratch/got.cdl"
fi

# 5. Tracing: NCTRACING lists API calls and storage operations on stderr; silent by default.
if case_ "5-tracing-nctracing-lists"; then
NCTRACING=9 "$build/ncprobe" "$url" 2> "$scratch/trace.txt" > /dev/null
grep -q "nc_open(" "$scratch/trace.txt" && grep -q "storage: open" "$scratch/trace.txt" && ok "NCTRACING output" || bad "NCTRACING output"
"$build/ncprobe" "file://$scratch/none#mode=nczarr,file" 2> "$scratch/quiet.txt" > /dev/null
[ ! -s "$scratch/quiet.txt" ] && ok "errors print nothing without NCTRACING" || bad "errors print nothing without NCTRACING"
fi

# 6. Exports: the drop-in has every P0 symbol, the preload library every P0 symbol that is
#    public API (all but the netcdf-c internals in build/helpers.txt); it exports no tool helper.
if case_ "6-exports-drop-has"; then
awk -F'\t' 'NR>1 && $4=="P0"{print $1}' "$top/doc/spec/client-symbols.tsv" | sort > "$scratch/p0.txt"
nm -D --defined-only "$build/libnetcdf.so.19" | awk '{print $3}' | sort > "$scratch/dropin.txt"
missing=$(comm -23 "$scratch/p0.txt" "$scratch/dropin.txt")
[ -z "$missing" ] && ok "drop-in lacks P0 symbols: $missing" || bad "drop-in lacks P0 symbols: $missing"
nm -D --defined-only "$pre" | awk '{print $3}' | sort > "$scratch/preload.txt"
missing=$(comm -23 "$scratch/p0.txt" "$build/helpers.txt" | comm -23 - "$scratch/preload.txt")
[ -z "$missing" ] && ok "preload library lacks P0 API symbols: $missing" || bad "preload library lacks P0 API symbols: $missing"
leaked=$(comm -12 "$build/helpers.txt" "$scratch/preload.txt")
[ -z "$leaked" ] && ok "preload library exports tool helpers: $leaked" || bad "preload library exports tool helpers: $leaked"
foreign=$(grep -v -E '^(nc|NC|ncaux_)' "$scratch/preload.txt")
[ -z "$foreign" ] && ok "preload library exports non-API names: $foreign" || bad "preload library exports non-API names: $foreign"
readelf -d "$pre" | grep -q 'SONAME.*libnczarr_preload.so' && ok "preload SONAME" || bad "preload SONAME"
readelf -d "$build/libnetcdf.so.19" | grep -q 'SONAME.*libnetcdf.so.19' && ok "drop-in SONAME" || bad "drop-in SONAME"

# Passthrough numbering: behind LD_PRELOAD our ncids come top-down from slot 0x7FFF.
cc -o "$scratch/preload_ids" "$top/ctests/tools/preload_ids.c" -lnetcdf
[ "$(LD_PRELOAD="$pre" "$scratch/preload_ids" "$scratch")" = "7fff0000 7ffe0000" ] && ok "preload ncid numbering" || bad "preload ncid numbering"

# netcdf-fortran (Debian's libnetcdff) through the drop-in and through the preload library.
command -v gfortran > /dev/null || { echo "missing tool: gfortran (apt-get install gfortran libnetcdff-dev)"; exit 1; }
gfortran -I/usr/include -o "$scratch/f90" "$top/ctests/fortran/f90_roundtrip.f90" -lnetcdff || bad "fortran build"
mkdir -p "$scratch/f1" "$scratch/f2"
LD_LIBRARY_PATH="$build" "$scratch/f90" "$scratch/f1" && ok "fortran with the drop-in" || bad "fortran with the drop-in"
LD_PRELOAD="$pre" "$scratch/f90" "$scratch/f2" && ok "fortran with the preload library" || bad "fortran with the preload library"
fi

# 7. Bad and hostile stores.
if case_ "7-bad-hostile-stores"; then
python3 "$top/ctests/bad_inputs.py" && ok "bad-input suite" || bad "bad-input suite"
fi

# 8. One C program's transcript (every call's status, values bit-exact, quantize included)
#    is identical against netcdf-c 4.10.1 and against us; then each library's ncdump -v, full
#    and -s output of the dataset the other wrote is identical too (char written as ">S1"
#    via nc4char so 4.10.1 types it as netcdf-c does; our default is decision D1). The
#    wheel's netcdf-c is built without zip support, so directories only.
if case_ "8-one-c-program"; then
cc -std=c11 -Wall -o "$scratch/transcript" "$top/ctests/transcript.c" -lnetcdf || bad "transcript build"
for kind in file; do
    ref="file://$scratch/tr_ref.$kind#mode=nczarr,$kind"
    ours="file://$scratch/tr_ours.$kind#mode=nczarr,$kind,nc4char"
    HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$wheel" "$scratch/transcript" "$ref" > "$scratch/tr_ref.txt" 2>&1
    LD_PRELOAD="$pre" "$scratch/transcript" "$ours" > "$scratch/tr_ours.txt" 2>&1
    # The preload library numbers ncids from the top (passthrough.md §5.2): the v2 API's
    # messages name them, so ids are normalised before comparing.
    sed -i 's/ncid [0-9][0-9]*/ncid N/' "$scratch/tr_ref.txt" "$scratch/tr_ours.txt"
    same "transcript vs netcdf-c 4.10.1 ($kind)" "$scratch/tr_ref.txt" "$scratch/tr_ours.txt"
    for url in "$ref" "$ours"; do
        url=${url%,nc4char}
        for opt in "-v f,i,c" "-v d,g,s,z" "" "-s"; do
            HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$wheel" ncdump $opt "$url" > "$scratch/ref.cdl" 2>&1
            LD_PRELOAD="$pre" ncdump $opt "$url" > "$scratch/got.cdl" 2>&1
            same "ncdump $opt of $url" "$scratch/ref.cdl" "$scratch/got.cdl"
        done
    done
done
fi

# 9. Bad ids (reliability.md A1/A2): every exported function taking an ncid, called with
#    ncid -1, 0, 123456, a closed dataset and its group, then with varid -5, 999 and NC_GLOBAL
#    on a read-only dataset, each call in a forked child; the transcript of return codes must
#    equal netcdf-c 4.10.1's (tools/gen_badid_test.py writes the program).
if case_ "9-bad-ids-reliability"; then
cc -std=c11 -D_GNU_SOURCE -w -o "$scratch/badids" "$top/ctests/tools/badids.c" -lnetcdf || bad "badids build"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$wheel" "$scratch/badids" "file://$scratch/bad_ref#mode=nczarr,file" > "$scratch/bad_ref.txt" 2>&1
LD_LIBRARY_PATH="$build" "$scratch/badids" "file://$scratch/bad_ours#mode=nczarr,file" > "$scratch/bad_ours.txt" 2>&1
[ "$(wc -l < "$scratch/bad_ref.txt")" -gt 2000 ] && ok "badids reference transcript too short" || bad "badids reference transcript too short"
same "bad ids and varids vs netcdf-c 4.10.1" "$scratch/bad_ref.txt" "$scratch/bad_ours.txt"
fi

# 10. NCO (issue 23, item 16): ncap2 from a classic file creates its output with classic flags
#     and sets _FillValue after writing data, as netCDF-3 allows; into NCZarr under the preload
#     library the result equals ncap2's own netCDF output (history aside).
if case_ "10-nco-issue-23"; then
cat > "$scratch/nco_in.cdl" <<'CDL'
netcdf nco_in {
dimensions:
  t = UNLIMITED ; x = 4 ;
variables:
  float x(x) ;
    x:units = "m" ;
  double v(t, x) ;
    v:_FillValue = -99. ;
data:
  x = 1, 2, 3, 4 ;
  v = 1, 2, 3, 4, 5, 6, -99, 8 ;
}
CDL
ncgen -o "$scratch/nco_in.nc" "$scratch/nco_in.cdl" || bad "ncgen nco_in"
nco_url="file://$scratch/nco_out.zarr#mode=nczarr,file"
LD_PRELOAD="$pre" ncap2 -O -s 'y=x*2;w=v+1' "$scratch/nco_in.nc" "$nco_url" && ok "ncap2 into NCZarr" || bad "ncap2 into NCZarr"
ncap2 -O -s 'y=x*2;w=v+1' "$scratch/nco_in.nc" "$scratch/nco_ref.nc" || bad "ncap2 reference"
LD_PRELOAD="$pre" ncdump "$nco_url" | sed -e 1d -e '/:history = /d' > "$scratch/nco_ours.cdl"
ncdump "$scratch/nco_ref.nc" | sed -e 1d -e '/:history = /d' > "$scratch/nco_ref.cdl"
same "ncap2 -s 'y=x*2;w=v+1' into NCZarr" "$scratch/nco_ref.cdl" "$scratch/nco_ours.cdl"
fi

# 11. make demo (issue 23, item 17) writes real values: ncdump shows the three time steps and
#     zarr-python reads the same field.
if case_ "11-make-demo-issue"; then
sh "$top/ctests/demo.sh" > "$scratch/demo.txt" 2>&1 || bad "make demo"
grep -q "^ time = 0, 6, 12 ;" "$scratch/demo.txt" && ok "demo: ncdump shows the time steps" || bad "demo: ncdump shows the time steps"
grep -q "^  273, 275.6, 275.6, 273, 270.4, 270.4 ;" "$scratch/demo.txt" && ok "demo: ncdump shows the field's values" || bad "demo: ncdump shows the field's values"
grep -q "^temperature (3, 4, 6) float32" "$scratch/demo.txt" && grep -q "285.  287.6 287.6 285.  282.4 282.4" "$scratch/demo.txt" && ok "demo: zarr-python reads the values" || bad "demo: zarr-python reads the values"
fi

# 12. The first NCZarr layout (issue 23, item 14): `.nczattrs`/`.nczarray` with `dimrefs`, as
#     netcdf-c's 4.8.1 development builds wrote it, in a zip whose top folder is not named after
#     the archive (netcdf-c's own ref_oldformat.zip is laid out so). The zip, the same tree as a
#     directory, and an nccopy of it into today's layout all print the same CDL with every
#     attribute's type; under mode=zarr the copy's char attributes stay char (README: "Under
#     mode=zarr, an NCZarr store's recorded attribute types still hold").
if case_ "12-first-nczarr-layout-zip"; then
python3 - "$scratch/v1" <<'PY'
import json, os, struct, sys, zipfile
root = sys.argv[1]
objs = {
    ".nczarr": {"zarr_format": 2, "nczarr_version": "1.0.0"},
    ".zgroup": {"zarr_format": 2},
    ".nczgroup": {"dims": {"lat": 8}, "vars": ["lat"], "groups": ["g1"]},
    ".zattrs": {"title": "first layout"},
    ".nczattrs": {"types": {"title": "2"}},
    "lat/.zarray": {"zarr_format": 2, "shape": [8], "dtype": "<i4", "chunks": [8], "fill_value": -1,
                    "order": "C", "compressor": None, "filters": None},
    "lat/.nczarray": {"dimrefs": ["/lat"], "storage": "chunked"},
    "lat/.zattrs": {"_FillValue": -1, "lat_attr": "latitude"},
    "lat/.nczattrs": {"types": {"_FillValue": "4", "lat_attr": "2"}},
    "g1/.zgroup": {"zarr_format": 2},
    "g1/.nczgroup": {"dims": {"lon": 10}, "vars": ["pos"], "groups": []},
    "g1/.zattrs": {"g1_attr": 17, "scale": [0.5, 2]},
    "g1/.nczattrs": {"types": {"g1_attr": "4", "scale": "6"}},
    "g1/pos/.zarray": {"zarr_format": 2, "shape": [8, 10], "dtype": "<i4", "chunks": [8, 10],
                       "fill_value": -1, "order": "C", "compressor": None, "filters": None},
    "g1/pos/.nczarray": {"dimrefs": ["/lat", "/g1/lon"], "storage": "chunked"},
    "g1/pos/.zattrs": {"_FillValue": -1, "pos_attr": "latXlon"},
    "g1/pos/.nczattrs": {"types": {"_FillValue": "4", "pos_attr": "2"}},
}
chunk = struct.pack("<8i", *range(1, 9))
tree = os.path.join(root, "oldformat.file")
for key, doc in objs.items():
    os.makedirs(os.path.dirname(os.path.join(tree, key)), exist_ok=True)
    with open(os.path.join(tree, key), "w") as f:
        json.dump(doc, f)
with open(os.path.join(tree, "lat/0"), "wb") as f:
    f.write(chunk)
# Folder entries first, as `zip -r` writes them, under a top folder named unlike the archive.
with zipfile.ZipFile(os.path.join(root, "ref_oldformat.zip"), "w") as z:
    for folder in ["", "g1/", "g1/pos/", "lat/"]:
        z.writestr("oldformat.file/" + folder, b"")
    for key, doc in objs.items():
        z.writestr("oldformat.file/" + key, json.dumps(doc))
    z.writestr("oldformat.file/lat/0", chunk)
PY
cat > "$scratch/v1_want.cdl" <<'CDL'
netcdf ref_oldformat {
dimensions:
	lat = 8 ;
variables:
	int lat(lat) ;
		lat:_FillValue = -1 ;
		lat:lat_attr = "latitude" ;

// global attributes:
		:title = "first layout" ;
data:

 lat = 1, 2, 3, 4, 5, 6, 7, 8 ;

group: g1 {
  dimensions:
  	lon = 10 ;
  variables:
  	int pos(lat, lon) ;
  		pos:_FillValue = -1 ;
  		pos:pos_attr = "latXlon" ;

  // group attributes:
  		:g1_attr = 17 ;
  		:scale = 0.5, 2. ;
  data:

   pos =
  _, _, _, _, _, _, _, _, _, _,
  _, _, _, _, _, _, _, _, _, _,
  _, _, _, _, _, _, _, _, _, _,
  _, _, _, _, _, _, _, _, _, _,
  _, _, _, _, _, _, _, _, _, _,
  _, _, _, _, _, _, _, _, _, _,
  _, _, _, _, _, _, _, _, _, _,
  _, _, _, _, _, _, _, _, _, _ ;
  } // group g1
}
CDL
v1="$scratch/v1"
LD_PRELOAD="$pre" ncdump -n ref_oldformat "file://$v1/ref_oldformat.zip#mode=nczarr,zip" > "$v1/zip.cdl" 2>&1
same "the first layout from a zip" "$scratch/v1_want.cdl" "$v1/zip.cdl"
LD_PRELOAD="$pre" ncdump -n ref_oldformat "file://$v1/oldformat.file#mode=nczarr,file" > "$v1/dir.cdl" 2>&1
same "the first layout from a directory" "$scratch/v1_want.cdl" "$v1/dir.cdl"
LD_PRELOAD="$pre" nccopy "file://$v1/ref_oldformat.zip#mode=nczarr,zip" "file://$v1/new.file#mode=nczarr,file" || bad "nccopy of the first layout"
LD_PRELOAD="$pre" ncdump -n ref_oldformat "file://$v1/new.file#mode=nczarr,file" > "$v1/new.cdl" 2>&1
same "the first layout copied into today's" "$scratch/v1_want.cdl" "$v1/new.cdl"
LD_PRELOAD="$pre" ncdump -h -n ref_oldformat "file://$v1/new.file#mode=zarr,file" > "$v1/pure.cdl" 2>&1
grep -q '^		lat:lat_attr = "latitude" ;' "$v1/pure.cdl" && grep -q '^  		pos:pos_attr = "latXlon" ;' "$v1/pure.cdl" \
    && ok "the copy under mode=zarr keeps char attributes char" || { bad "the copy under mode=zarr keeps char attributes char"; cat "$v1/pure.cdl"; }
fi

# 13. Zip stores in zarr-python and xarray (issue 38, item 3): the README's recipes, exactly,
#     on v2 and v3 zips of NCZarr and plain Zarr written through netCDF4-python.
if case_ "13-zip-recipes"; then
mkdir -p "$scratch/zips"
(cd "$scratch/zips" && LD_PRELOAD="$pre" python3 - <<'PY'
import netCDF4, numpy as np
for name, mode in (("n2", "nczarr,zip"), ("z2", "zarr,zip"), ("n3", "nczarr,zip,v3"), ("z3", "zarr,zip,v3")):
    with netCDF4.Dataset(f"file://{__import__('os').getcwd()}/{name}.zip#mode={mode}", "w") as ds:
        ds.createDimension("x", 4)
        ds.createDimension("s", 3)
        t = ds.createVariable("t", "f4", ("x",))
        t[:] = np.arange(4) + 0.5
        t.units = "K"
        c = ds.createVariable("c", "S1", ("x", "s"))
        c[:] = netCDF4.stringtochar(np.array(["ab", "cde", "f", "gh"], dtype="S3"))
        c.long_name = "labels"
PY
) || bad "writing the zips"
(cd "$scratch/zips" && python3 - "$scratch/zips" <<'PY'
import sys, warnings
import numpy as np
import xarray as xr, zarr
warnings.simplefilter("ignore")
d = sys.argv[1]
fails = 0
def check(what, cond):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    fails += not cond
labels = [b"ab", b"cde", b"f", b"gh"]
for x in ("n2", "z2"):
    ds = xr.open_zarr(zarr.storage.ZipStore(f"{x}.zip", mode="r"), group=x, consolidated=False)
    check(f"{x}: xarray, v2 recipe: values", list(ds["t"].values) == [0.5, 1.5, 2.5, 3.5] and ds["t"].attrs["units"] == "K")
    check(f"{x}: xarray, v2 recipe: char as strings", [v if isinstance(v, bytes) else v.encode() for v in ds["c"].values] == labels)
    g = zarr.open_group(zarr.storage.ZipStore(f"{x}.zip", mode="r"), path=x, mode="r")
    check(f"{x}: zarr-python, v2 recipe", list(g["t"][:]) == [0.5, 1.5, 2.5, 3.5])
for x in ("n3", "z3"):
    for how, ds in (("ZipStore", xr.open_zarr(zarr.storage.ZipStore(f"{x}.zip", mode="r"), consolidated=False)),
                    ("zip::", xr.open_dataset(f"zip::file://{d}/{x}.zip", engine="zarr"))):
        check(f"{x}: xarray, v3 recipe ({how}): values", list(ds["t"].values) == [0.5, 1.5, 2.5, 3.5])
        chars = ds["c"].values.view("S1")
        check(f"{x}: v3 char recipe", [b"".join(r).rstrip(b"\0") for r in chars] == labels)
        own = {k: v for k, v in ds["c"].attrs.items() if not k.startswith("_nczarr_")}
        check(f"{x}: v3 own attributes without _nczarr_*", own == {"long_name": "labels"})
sys.exit(1 if fails else 0)
PY
) > "$scratch/zips.txt" 2>&1 && ok "the README's zip recipes: $(grep -c '^ok' "$scratch/zips.txt") checks" || { bad "the README's zip recipes"; cat "$scratch/zips.txt"; }
fi

echo "client tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

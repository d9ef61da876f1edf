#!/bin/sh
# HDF5 filter plugins: a filter we do not build in (Debian's LZ4 plugin, HDF5 id 32004) runs
# through its plugin from HDF5_PLUGIN_PATH: NCZarr v2 and v3 round trips (chunks really
# compressed, the id listed after reopening, the `hdf5` codec entry in the metadata); the same
# stores with no plugin open and inquire, and their data reads are NC_ENOFILTER; ZFP, whose
# plugin has HDF5's set_local, in reversible and accuracy modes; szip through the netCDF4
# wheel's plugin; a plugin
# directory holding a broken library (skipped, said by NCTRACING); nccopy of a netCDF-4/HDF5
# file compressed by the plugin into NCZarr and back, through the preload library; bitshuffle
# with LZ4 through hdf5plugin's plugin (which links no libhdf5); the plugin-path API; a codec
# plugin (netcdf-c's NCZ_codec_t) naming a plugin filter's JSON; the codec JSON we write
# against netcdf-c's own codec libraries, and the filters and `_Codecs` our library and
# netcdf-c 4.10.1 report for the same stores.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
plugins=/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins
[ -f "$plugins/libh5lz4.so" ] || { echo "missing HDF5 LZ4 plugin: $plugins/libh5lz4.so (sh ctests/ensure_deps.sh)"; exit 1; }
for tool in ncdump nccopy cc; do
    command -v $tool > /dev/null || { echo "missing tool: $tool (sh ctests/ensure_deps.sh)"; exit 1; }
done
cc -std=c11 -Wall -I"$top/include" -o "$scratch/t_plugins" "$top/ctests/plugins/t_plugins.c" -L"$build" -lnetcdf -Wl,-rpath,"$build" || bad "t_plugins build"

# A plugin directory: the LZ4 plugin, a library that is not a plugin, and junk named like one.
mkdir -p "$scratch/plugins"
ln -s "$plugins/libh5lz4.so" "$scratch/plugins/libh5lz4.so"
ln -s /lib/x86_64-linux-gnu/libz.so.1 "$scratch/plugins/libz.so"
echo "not a library" > "$scratch/plugins/libbroken.so"
[ -f "$plugins/libh5zzfp.so" ] && ln -s "$plugins/libh5zzfp.so" "$scratch/plugins/libh5zzfp.so"
mkdir -p "$scratch/none"
# netcdf-c's (Debian's) writer of a netCDF-4 file with one filtered variable; cases 3, 4, 5 and
# 8 make their files from it with another filter.
cat > "$scratch/mk.c" << 'C'
#include <netcdf.h>
#include <netcdf_filter.h>
int main(int c, char **v) {
    int ncid, d, var, data[4096];
    size_t chunk = 1024;
    for (int i = 0; i < 4096; i++) data[i] = i / 3;
    if (nc_create(v[1], NC_NETCDF4 | NC_CLOBBER, &ncid) || nc_def_dim(ncid, "x", 4096, &d) || nc_def_var(ncid, "v", NC_INT, 1, &d, &var)
        || nc_def_var_chunking(ncid, var, NC_CHUNKED, &chunk) || nc_def_var_filter(ncid, var, 32004, 0, NULL)
        || nc_put_var_int(ncid, var, data) || nc_close(ncid)) return 1;
    return 0;
}
C
cc -o "$scratch/mk" "$scratch/mk.c" -lnetcdf || bad "mk build"
# The netCDF4 wheel's plugins: netcdf-c's own H5Z szip and its codec libraries (cases 4 and 9).
wheel=$(python3 -c "import netCDF4, os; print(os.path.join(os.path.dirname(netCDF4.__file__), 'plugins'))" 2> /dev/null)

# 1. The LZ4 plugin from a directory that also holds a broken library and a library that is no
#    plugin: v2 and v3 round trips, the metadata naming the filter, chunks really compressed;
#    with no plugin the stores open and inquire, data is NC_ENOFILTER.
if case_ "1-lz4-plugin"; then
HDF5_PLUGIN_PATH="$scratch/plugins" NCTRACING=1 "$scratch/t_plugins" "$scratch" write 32004 > "$scratch/o.txt" 2> "$scratch/trace.txt" \
    && ok "round trips through the LZ4 plugin" || { bad "round trips through the LZ4 plugin"; cat "$scratch/o.txt"; tail -5 "$scratch/trace.txt"; }
grep -q "libbroken.so: skipped" "$scratch/trace.txt" && ok "a broken library is skipped and said" || bad "a broken library is skipped and said"
grep -q "libz.so: skipped: not an HDF5 plugin" "$scratch/trace.txt" && ok "a library that is no plugin is skipped and said" || bad "a library that is no plugin is skipped and said"
grep -q "libh5lz4.so: id 32004" "$scratch/trace.txt" && ok "the LZ4 plugin is found" || bad "the LZ4 plugin is found"
grep -q '"compressor":{"id":"hdf5","filter_id":32004,"parameters":\[\]}' "$scratch/p2.zarr/v/.zarray" && ok "v2 metadata names the filter" || { bad "v2 metadata names the filter"; cat "$scratch/p2.zarr/v/.zarray"; }
grep -q '"name":"numcodecs.hdf5","configuration":{"parameters":\[\],"filter_id":32004}' "$scratch/p3.zarr/v/zarr.json" \
    && ok "v3 metadata names the filter" || { bad "v3 metadata names the filter"; cat "$scratch/p3.zarr/v/zarr.json"; }
size=$(stat -c %s "$scratch/p2.zarr/v/0")
[ "$size" -lt 4000 ] && ok "chunks are compressed ($size bytes for 8192)" || bad "chunks are compressed ($size bytes for 8192)"
# No plugin: the stores open and inquire; data is NC_ENOFILTER, never raw bytes.
HDF5_PLUGIN_PATH="$scratch/none" "$scratch/t_plugins" "$scratch" missing 32004 > "$scratch/o.txt" 2>&1 \
    && ok "stores with no plugin" || { bad "stores with no plugin"; cat "$scratch/o.txt"; }
HDF5_PLUGIN_PATH="$scratch/none" LD_PRELOAD="$pre" ncdump -hs "file://$scratch/p2.zarr#mode=nczarr,file" > "$scratch/h.txt" 2>&1 \
    && ok "ncdump -hs with no plugin" || { bad "ncdump -hs with no plugin"; cat "$scratch/h.txt"; }
grep -q 'v:_Filter = "32004"' "$scratch/h.txt" && ok "_Filter shown" || { bad "_Filter shown"; grep Filter "$scratch/h.txt"; }
fi

# 2. ZFP, whose plugin has HDF5's set_local: the program's parameters go through it (run with
#    the libhdf5 the plugin links) before the filter sees them.
if case_ "2-zfp-set-local"; then
if [ -f "$plugins/libh5zzfp.so" ]; then
    HDF5_PLUGIN_PATH="$scratch/plugins" NCTRACING=1 "$scratch/t_plugins" "$scratch" zfp 32013 > "$scratch/o.txt" 2> "$scratch/trace.txt" \
        && ok "ZFP round trips" || { bad "ZFP round trips"; cat "$scratch/o.txt"; grep -i zfp "$scratch/trace.txt" | tail -3; }
    grep -q "libh5zzfp.so: id 32013 .*with set_local" "$scratch/trace.txt" && ok "ZFP's plugin is found with its set_local" || bad "ZFP's plugin is found with its set_local"
    size=$(du -sb "$scratch/zfp_acc.zarr/v" | cut -f1)
    [ "$size" -lt 12000 ] && ok "ZFP compressed the data ($size bytes for 16384)" || bad "ZFP compressed the data ($size bytes for 16384)"
else
    bad "missing ZFP plugin: $plugins/libh5zzfp.so (sh ctests/ensure_deps.sh)"
fi
fi

# 3. netCDF-4/HDF5 compressed by the plugin (Debian's netcdf-c) → NCZarr → netCDF-4, by nccopy.
if case_ "3-nccopy-lz4-file"; then
HDF5_PLUGIN_PATH="$plugins" "$scratch/mk" "$scratch/lz4.nc" && ok "Debian's netcdf-c writes an LZ4-compressed file" || bad "Debian's netcdf-c writes an LZ4-compressed file"
HDF5_PLUGIN_PATH="$plugins" ncdump -hs "$scratch/lz4.nc" | grep -q '_Filter = "32004"' && ok "the file's variable uses the LZ4 filter" || bad "the file's variable uses the LZ4 filter"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$pre" nccopy "$scratch/lz4.nc" "file://$scratch/c.zarr#mode=nczarr,file" && ok "nccopy LZ4 netCDF-4 to NCZarr" || bad "nccopy LZ4 netCDF-4 to NCZarr"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$pre" ncdump -hs "file://$scratch/c.zarr#mode=nczarr,file" | grep -q 'v:_Filter = "32004"' \
    && ok "nccopy kept the filter" || bad "nccopy kept the filter"
HDF5_PLUGIN_PATH="$plugins" ncdump "$scratch/lz4.nc" | sed 1d > "$scratch/want.cdl"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$pre" ncdump "file://$scratch/c.zarr#mode=nczarr,file" | sed 1d > "$scratch/got.cdl"
same "the NCZarr copy reads as the file" "$scratch/want.cdl" "$scratch/got.cdl"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$pre" nccopy "file://$scratch/c.zarr#mode=nczarr,file" "$scratch/back.nc" && ok "nccopy NCZarr back to netCDF-4" || bad "nccopy NCZarr back to netCDF-4"
HDF5_PLUGIN_PATH="$plugins" ncdump -hs "$scratch/back.nc" | grep -q '_Filter = "32004"' && ok "the filter survives the way back" || bad "the filter survives the way back"
HDF5_PLUGIN_PATH="$plugins" ncdump "$scratch/back.nc" | sed 1d | cmp -s - "$scratch/want.cdl" && ok "the way back reads as the file" || bad "the way back reads as the file"

fi

# 4. szip through the netCDF4 wheel's plugin (netcdf-c's own H5Z szip): netcdf-c's codec JSON.
if case_ "4-szip-wheel-plugin"; then
if [ -f "$wheel/lib__nch5szip.so" ]; then
    HDF5_PLUGIN_PATH="$wheel" NCTRACING=1 "$scratch/t_plugins" "$scratch" szip 4 > "$scratch/o.txt" 2> "$scratch/trace.txt" \
        && ok "szip round trip" || { bad "szip round trip"; cat "$scratch/o.txt"; grep -i szip "$scratch/trace.txt" | tail -3; }
    grep -q '"compressor":{"id":"szip","mask":32,"pixels-per-block":32}' "$scratch/sz.zarr/v/.zarray" && ok "szip JSON" || { bad "szip JSON"; cat "$scratch/sz.zarr/v/.zarray"; }
    grep -q 'lib__nczhdf5filters.so: codec "szip" for HDF5 filter 4' "$scratch/trace.txt" && ok "netcdf-c's codec library is found as codecs" || bad "netcdf-c's codec library is found as codecs"
    grep -q "lib__nczhdf5filters.so: id" "$scratch/trace.txt" && bad "netcdf-c's codec library taken for a filter plugin" || ok "netcdf-c's codec library is not taken for a filter plugin"
    # An szip netCDF-4 file (Debian's HDF5 has szip) into NCZarr through the wheel's plugin, in
    # a process whose global libhdf5 is Debian's, and back: equal.
    sed 's/nc_def_var_filter(ncid, var, 32004, 0, NULL)/nc_def_var_szip(ncid, var, 32, 32)/' "$scratch/mk.c" > "$scratch/mksz.c"
    cc -o "$scratch/mksz" "$scratch/mksz.c" -lnetcdf && "$scratch/mksz" "$scratch/sz.nc" && ok "Debian's netcdf-c writes an szip file" || bad "Debian's netcdf-c writes an szip file"
    ncdump "$scratch/sz.nc" | sed 1d > "$scratch/sz.cdl"
    HDF5_PLUGIN_PATH="$wheel" LD_PRELOAD="$pre" nccopy "$scratch/sz.nc" "file://$scratch/szc.zarr#mode=nczarr,file" && ok "nccopy szip netCDF-4 to NCZarr" || bad "nccopy szip netCDF-4 to NCZarr"
    HDF5_PLUGIN_PATH="$wheel" LD_PRELOAD="$pre" ncdump "file://$scratch/szc.zarr#mode=nczarr,file" | sed 1d | cmp -s - "$scratch/sz.cdl" \
        && ok "the szip NCZarr copy reads as the file" || bad "the szip NCZarr copy reads as the file"
    HDF5_PLUGIN_PATH="$wheel" LD_PRELOAD="$pre" nccopy "file://$scratch/szc.zarr#mode=nczarr,file" "$scratch/szback.nc" && ok "nccopy szip NCZarr back" || bad "nccopy szip NCZarr back"
    ncdump -hs "$scratch/szback.nc" | grep -q '_Filter = "4,' && ok "szip survives the way back" || bad "szip survives the way back"
    ncdump "$scratch/szback.nc" | sed 1d | cmp -s - "$scratch/sz.cdl" && ok "the szip way back reads as the file" || bad "the szip way back reads as the file"
else
    bad "missing the netCDF4 wheel's szip plugin: $wheel/lib__nch5szip.so (sh ctests/ensure_deps.sh)"
fi
fi

# 5. ZFP parameters as an HDF5 file reports them (already made by set_local, for its chunks):
#    nccopy into NCZarr chunked otherwise is refused (NC_EFILTER), never stored unreadable.
if case_ "5-zfp-file-nccopy"; then
sed 's/nc_def_var_filter(ncid, var, 32004, 0, NULL)/nc_def_var_filter(ncid, var, 32013, 4, (unsigned[]){5, 0, 0, 0})/; s/int ncid, d, var, data\[4096\]/int ncid, d, var; float data[4096]/; s/NC_INT, 1/NC_FLOAT, 1/; s/nc_put_var_int/nc_put_var_float/' \
    "$scratch/mk.c" > "$scratch/mkzfp.c"
cc -o "$scratch/mkzfp" "$scratch/mkzfp.c" -lnetcdf || bad "mkzfp build"
HDF5_PLUGIN_PATH="$plugins" "$scratch/mkzfp" "$scratch/zfp.nc" && ok "Debian's netcdf-c writes a ZFP file" || bad "Debian's netcdf-c writes a ZFP file"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$pre" nccopy "$scratch/zfp.nc" "file://$scratch/zc.zarr#mode=nczarr,file" > "$scratch/o.txt" 2>&1 \
    && bad "copying set_local-made ZFP parameters to other chunks must be refused" || ok "set_local-made ZFP parameters are refused for other chunks"
grep -q "Filter error" "$scratch/o.txt" && ok "the refusal says why" || { bad "the refusal says why"; cat "$scratch/o.txt"; }
# With the program's own parameters (`nccopy -F`), ZFP copies into NCZarr and back, equal.
HDF5_PLUGIN_PATH="$plugins" ncdump "$scratch/zfp.nc" | sed 1d > "$scratch/zfp.cdl"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$pre" nccopy -F 'v,32013,5,0,0,0' "$scratch/zfp.nc" "file://$scratch/zf.zarr#mode=nczarr,file" \
    && ok "nccopy -F of a ZFP file into NCZarr" || bad "nccopy -F of a ZFP file into NCZarr"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$pre" ncdump "file://$scratch/zf.zarr#mode=nczarr,file" | sed 1d | cmp -s - "$scratch/zfp.cdl" \
    && ok "the ZFP NCZarr copy reads as the file" || bad "the ZFP NCZarr copy reads as the file"
HDF5_PLUGIN_PATH="$plugins" LD_PRELOAD="$pre" nccopy "file://$scratch/zf.zarr#mode=nczarr,file" "$scratch/zback.nc" && ok "nccopy ZFP NCZarr back to netCDF-4" || bad "nccopy ZFP NCZarr back to netCDF-4"
HDF5_PLUGIN_PATH="$plugins" ncdump -hs "$scratch/zback.nc" | grep -q '_Filter = "32013,' && ok "ZFP survives the way back" || bad "ZFP survives the way back"
HDF5_PLUGIN_PATH="$plugins" ncdump "$scratch/zback.nc" | sed 1d | cmp -s - "$scratch/zfp.cdl" && ok "the ZFP way back reads as the file" || bad "the ZFP way back reads as the file"

fi

# 6. The plugin path API: HDF5_PLUGIN_PATH's two directories, then set, read and reset through
#    nc_plugin_path_* and the ncaux helpers.
if case_ "6-plugin-path-api"; then
HDF5_PLUGIN_PATH="$scratch/plugins:$scratch/none" "$scratch/t_plugins" "$scratch" path 32004 > "$scratch/o.txt" 2>&1 \
    && ok "the plugin-path API" || { bad "the plugin-path API"; cat "$scratch/o.txt"; }

fi

# 7. A codec plugin in netcdf-c's form for the LZ4 filter: stores name the filter by its codec
#    (v2 and v3), read back through it; with the codec but no filter plugin, they open and
#    inquire and their data is NC_ENOFILTER.
if case_ "7-codec-plugin"; then
mkdir -p "$scratch/codecs"
cc -shared -fPIC -o "$scratch/codecs/libtest_codec.so" "$top/ctests/plugins/test_codec.c" || bad "test codec build"
ln -s "$plugins/libh5lz4.so" "$scratch/codecs/libh5lz4.so"
HDF5_PLUGIN_PATH="$scratch/codecs" NCTRACING=1 "$scratch/t_plugins" "$scratch" write 32004 > "$scratch/o.txt" 2> "$scratch/trace.txt" \
    && ok "round trips named by a codec plugin" || { bad "round trips named by a codec plugin"; cat "$scratch/o.txt"; }
grep -q 'libtest_codec.so: codec "test_lz4" for HDF5 filter 32004' "$scratch/trace.txt" && ok "the codec plugin is found" || bad "the codec plugin is found"
grep -q '"compressor":{"id":"test_lz4"}' "$scratch/p2.zarr/v/.zarray" && ok "v2 metadata by the codec plugin" || { bad "v2 metadata by the codec plugin"; cat "$scratch/p2.zarr/v/.zarray"; }
grep -q '"name":"numcodecs.test_lz4"' "$scratch/p3.zarr/v/zarr.json" && ok "v3 metadata by the codec plugin" || { bad "v3 metadata by the codec plugin"; cat "$scratch/p3.zarr/v/zarr.json"; }
rm "$scratch/codecs/libh5lz4.so"
HDF5_PLUGIN_PATH="$scratch/codecs" "$scratch/t_plugins" "$scratch" missing 32004 > "$scratch/o.txt" 2>&1 \
    && ok "a codec with no filter plugin" || { bad "a codec with no filter plugin"; cat "$scratch/o.txt"; }

fi

# 8. Bitshuffle (+LZ4) through hdf5plugin's plugin, which links no libhdf5: our library loads
#    one for its set_local; a netCDF-4 file Debian's netcdf-c writes with it copies into NCZarr
#    and back with nccopy, equal.
if case_ "8-bitshuffle-hdf5plugin"; then
h5p=$(python3 -c "import importlib.util as u, os; print(os.path.join(os.path.dirname(u.find_spec('hdf5plugin').origin), 'plugins'))" 2> /dev/null)
if [ -f "$h5p/libh5bshuf.so" ]; then
    mkdir -p "$scratch/bshuf"
    ln -s "$h5p/libh5bshuf.so" "$scratch/bshuf/libh5bshuf.so"
    HDF5_PLUGIN_PATH="$scratch/bshuf" NCTRACING=1 "$scratch/t_plugins" "$scratch" write 32008 0 2 > "$scratch/o.txt" 2> "$scratch/trace.txt" \
        && ok "bitshuffle+LZ4 round trips" || { bad "bitshuffle+LZ4 round trips"; cat "$scratch/o.txt"; grep -i "bitshuffle\|libhdf5" "$scratch/trace.txt" | tail -3; }
    grep -q "loaded .*libhdf5.* for plugins that link no libhdf5" "$scratch/trace.txt" && ok "a libhdf5 loaded for hdf5plugin's plugin" || bad "a libhdf5 loaded for hdf5plugin's plugin"
    size=$(stat -c %s "$scratch/p2.zarr/v/0")
    [ "$size" -lt 4000 ] && ok "bitshuffle+LZ4 compressed the chunks ($size bytes for 8192)" || bad "bitshuffle+LZ4 compressed the chunks ($size bytes for 8192)"
    sed 's/nc_def_var_filter(ncid, var, 32004, 0, NULL)/nc_def_var_filter(ncid, var, 32008, 2, (unsigned[]){0, 2})/' "$scratch/mk.c" > "$scratch/mkbs.c"
    cc -o "$scratch/mkbs" "$scratch/mkbs.c" -lnetcdf && HDF5_PLUGIN_PATH="$scratch/bshuf" "$scratch/mkbs" "$scratch/bs.nc" \
        && ok "Debian's netcdf-c writes a bitshuffle+LZ4 file" || bad "Debian's netcdf-c writes a bitshuffle+LZ4 file"
    HDF5_PLUGIN_PATH="$scratch/bshuf" ncdump "$scratch/bs.nc" | sed 1d > "$scratch/bs.cdl"
    HDF5_PLUGIN_PATH="$scratch/bshuf" LD_PRELOAD="$pre" nccopy "$scratch/bs.nc" "file://$scratch/bs.zarr#mode=nczarr,file" && ok "nccopy bitshuffle netCDF-4 to NCZarr" || bad "nccopy bitshuffle netCDF-4 to NCZarr"
    grep -q '"filter_id":32008' "$scratch/bs.zarr/v/.zarray" && ok "the NCZarr copy keeps bitshuffle" || bad "the NCZarr copy keeps bitshuffle"
    HDF5_PLUGIN_PATH="$scratch/bshuf" LD_PRELOAD="$pre" ncdump "file://$scratch/bs.zarr#mode=nczarr,file" | sed 1d | cmp -s - "$scratch/bs.cdl" \
        && ok "the bitshuffle NCZarr copy reads as the file" || bad "the bitshuffle NCZarr copy reads as the file"
    HDF5_PLUGIN_PATH="$scratch/bshuf" LD_PRELOAD="$pre" nccopy "file://$scratch/bs.zarr#mode=nczarr,file" "$scratch/bsback.nc" && ok "nccopy bitshuffle NCZarr back" || bad "nccopy bitshuffle NCZarr back"
    HDF5_PLUGIN_PATH="$scratch/bshuf" ncdump -hs "$scratch/bsback.nc" | grep -q '_Filter = "32008,' && ok "bitshuffle survives the way back" || bad "bitshuffle survives the way back"
    HDF5_PLUGIN_PATH="$scratch/bshuf" ncdump "$scratch/bsback.nc" | sed 1d | cmp -s - "$scratch/bs.cdl" && ok "the bitshuffle way back reads as the file" || bad "the bitshuffle way back reads as the file"
else
    bad "missing hdf5plugin's bitshuffle plugin: $h5p/libh5bshuf.so (sh ctests/ensure_deps.sh)"
fi
fi

# 9. The codec JSON netcdf-c's own codec libraries (the wheel's) write for each filter both
#    libraries build in, against ours; then what each library reports of the same stores (what
#    ncdump -hs shows: the filters with their parameters, and `_Codecs`) and the values each
#    decodes from them (sz.zarr is case 4's szip store, made here if case 4 did not run).
if case_ "9-codec-json-netcdf-c"; then
if [ -f "$wheel/lib__nczhdf5filters.so" ]; then
    [ -d "$scratch/sz.zarr" ] || HDF5_PLUGIN_PATH="$wheel" "$scratch/t_plugins" "$scratch" szip 4 > /dev/null 2>&1 || bad "writing sz.zarr"
    wheel_lib=$(python3 -c "import netCDF4,os,glob;print(glob.glob(os.path.dirname(os.path.dirname(netCDF4.__file__))+'/netcdf4.libs/libnetcdf-*.so*')[0])")
    cc -o "$scratch/codec_json" "$top/ctests/plugins/codec_json.c" -ldl || bad "codec_json build"
    cc -I"$top/include" -o "$scratch/show.ours" "$top/ctests/plugins/show_filters.c" -L"$build" -lnetcdf -Wl,-rpath,"$build" || bad "show_filters build"
    cc -I"$top/include" -o "$scratch/show.ref" "$top/ctests/plugins/show_filters.c" "$wheel_lib" -Wl,-rpath,"$(dirname "$wheel_lib")" || bad "show_filters build"
    for who in netcdf-c ours; do
        if [ $who = ours ]; then pl="$pre"; else pl=""; fi
        HDF5_PLUGIN_PATH="$wheel" LD_PRELOAD="$pl" python3 - "$scratch/codecs_$who.zarr" << 'PY' || bad "$who writes the filter stores"
import sys, numpy as np, netCDF4
d = netCDF4.Dataset(f"file://{sys.argv[1]}#mode=nczarr,file", "w")
d.createDimension("x", 64)
for name, kw in [("a", dict(zlib=True, shuffle=True, complevel=5, fletcher32=True)), ("b", dict(compression="bzip2", complevel=9)),
                 ("c", dict(compression="blosc_lz4", complevel=5, blosc_shuffle=1)), ("z", dict(compression="zstd", complevel=3)),
                 ("s", dict(compression="szip", szip_coding="nn", szip_pixels_per_block=32))]:
    d.createVariable(name, "i4", ("x",), **kw)[:] = np.arange(64)
d.close()
PY
    done
    HDF5_PLUGIN_PATH="$wheel" python3 - "$scratch" "$wheel" << 'PY' && ok "our codec JSON is netcdf-c's codec libraries' JSON" || bad "our codec JSON is netcdf-c's codec libraries' JSON"
import json, subprocess, sys
scratch, wheel = sys.argv[1], sys.argv[2]
def theirs(lib, *spec):
    return json.loads(subprocess.run([f"{scratch}/codec_json", f"{wheel}/{lib}", *map(str, spec)], check=True, capture_output=True, text=True).stdout)
def ours(var):
    z = json.load(open(f"{scratch}/codecs_ours.zarr/{var}/.zarray"))
    return (z["filters"] or []) + [z["compressor"]]
want = {"a": [dict(theirs("lib__nczhdf5filters.so", 2), elementsize=4), theirs("lib__nczhdf5filters.so", 1, 5), theirs("lib__nczhdf5filters.so", 3)],
        "b": [theirs("lib__nczstdfilters.so", 307, 9)], "z": [theirs("lib__nczstdfilters.so", 32015, 3)],
        "c": [theirs("lib__nczstdfilters.so", 32001, 0, 0, 0, 0, 5, 1, 1)]}
# (shuffle: netcdf-c's codec writes elementsize 0; we write the element size numcodecs needs.)
bad = {v: (ours(v), w) for v, w in want.items() if ours(v) != w}
print(bad or "same")
sys.exit(1 if bad else 0)
PY
    for store in codecs_netcdf-c.zarr codecs_ours.zarr sz.zarr; do
        # (sz.zarr's chunks are shorter than its dimension: netcdf-c's szip codec derives
        # pixels-per-scanline from the dimension where HDF5 and we use the chunk, so its values
        # differ there; README "Filters and plugins".)
        values='s/; values: .*//'
        [ $store = sz.zarr ] || values='s/^$//'
        HDF5_PLUGIN_PATH="$wheel" "$scratch/show.ref" "file://$scratch/$store#mode=nczarr,file" 2>&1 | sed "$values" > "$scratch/show.ref.txt"
        HDF5_PLUGIN_PATH="$wheel" "$scratch/show.ours" "file://$scratch/$store#mode=nczarr,file" 2>&1 | sed "$values" > "$scratch/show.ours.txt"
        grep -q "_Codecs = \[" "$scratch/show.ref.txt" && ok "netcdf-c reports the filters of $store" || { bad "netcdf-c reports the filters of $store"; cat "$scratch/show.ref.txt"; }
        same "filters and _Codecs of $store as netcdf-c 4.10.1 reports them" "$scratch/show.ref.txt" "$scratch/show.ours.txt"
    done
else
    bad "missing the netCDF4 wheel's codec libraries: $wheel/lib__nczhdf5filters.so (sh ctests/ensure_deps.sh)"
fi
fi

# 10. A plugin that links no libhdf5 and takes HDF5's symbols (data ones too) from the process:
#     Debian's LZF plugin (id 32000). It loads (a system libhdf5 is put in the global namespace
#     for it), round trips through our C programs and through nccopy under the preload library,
#     and without it the filter is NC_ENOFILTER as in netcdf-c.
if case_ "10-lzf-plugin"; then
lzf="$plugins/liblzf_filter.so"
[ -f "$lzf" ] || { bad "missing HDF5 LZF plugin: $lzf (sh ctests/ensure_deps.sh)"; }
mkdir -p "$scratch/lzf" && ln -sf "$lzf" "$scratch/lzf/liblzf_filter.so"
rm -rf "$scratch/p2.zarr" "$scratch/p3.zarr"
HDF5_PLUGIN_PATH="$scratch/lzf" NCTRACING=1 "$scratch/t_plugins" "$scratch" write 32000 > "$scratch/o.txt" 2> "$scratch/trace.txt" \
    && ok "round trips through the LZF plugin" || { bad "round trips through the LZF plugin"; cat "$scratch/o.txt"; grep -i lzf "$scratch/trace.txt" | head -5; }
grep -q "liblzf_filter.so: id 32000" "$scratch/trace.txt" && ok "the LZF plugin is found" || { bad "the LZF plugin is found"; grep -i "lzf\|skipped" "$scratch/trace.txt" | head -5; }
size=$(stat -c %s "$scratch/p2.zarr/v/0" 2> /dev/null || echo 99999)
[ "$size" -lt 4000 ] && ok "LZF chunks are compressed ($size bytes for 8192)" || bad "LZF chunks are compressed ($size bytes for 8192)"
HDF5_PLUGIN_PATH="$scratch/none" "$scratch/t_plugins" "$scratch" missing 32000 > "$scratch/o.txt" 2>&1 \
    && ok "LZF stores with no plugin: data NC_ENOFILTER" || { bad "LZF stores with no plugin: data NC_ENOFILTER"; cat "$scratch/o.txt"; }
HDF5_PLUGIN_PATH="$scratch/lzf" LD_PRELOAD="$pre" nccopy "file://$scratch/p2.zarr#mode=nczarr,file" "file://$scratch/lzfcopy.zarr#mode=nczarr,file" \
    && HDF5_PLUGIN_PATH="$scratch/lzf" LD_PRELOAD="$pre" ncdump -s "file://$scratch/lzfcopy.zarr#mode=nczarr,file" > "$scratch/lzf.cdl" \
    && grep -q 'v:_Filter = "32000"' "$scratch/lzf.cdl" && grep -q "v = 0, 0, 0," "$scratch/lzf.cdl" \
    && ok "nccopy of an LZF store under the preload library" || bad "nccopy of an LZF store under the preload library"
cat > "$scratch/nofilter.c" << 'C'
#include <netcdf.h>
#include <netcdf_filter.h>
#include <stdio.h>
int main(int c, char **v) {
    int nc, d, x;
    if (nc_create(v[1], NC_NETCDF4 | NC_CLOBBER, &nc) || nc_def_dim(nc, "x", 4, &d) || nc_def_var(nc, "v", NC_INT, 1, &d, &x)) return 2;
    int a = nc_def_var_filter(nc, x, 32000, 0, NULL), b = nc_def_var_filter(nc, x, 99999, 0, NULL);
    printf("%d %d\n", a, b);
    nc_close(nc);
    return !(a == NC_ENOFILTER && b == NC_EINVAL);
}
C
cc -std=c11 -I"$top/include" -o "$scratch/nofilter" "$scratch/nofilter.c" -L"$build" -lnetcdf -Wl,-rpath,"$build" \
    && HDF5_PLUGIN_PATH="$scratch/none" "$scratch/nofilter" "file://$scratch/nf.zarr#mode=nczarr,file" > "$scratch/o.txt" \
    && ok "an unavailable filter is NC_ENOFILTER, an id past 65535 NC_EINVAL (netcdf-c 4.10.1)" || { bad "unavailable filter codes: $(cat "$scratch/o.txt")"; }
fi

echo "plugin tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

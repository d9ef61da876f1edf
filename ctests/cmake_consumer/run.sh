#!/bin/sh
# Installs into a scratch prefix and checks the packaging: a CMake consumer project
# configures, builds and runs against it; pkg-config and nc-config answer correctly.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v cmake > /dev/null || { echo "missing tool: cmake"; exit 1; }
command -v pkg-config > /dev/null || { echo "missing tool: pkg-config"; exit 1; }
. "$top/ctests/harness.sh"
prefix="$scratch/prefix"
make -C "$top" --no-print-directory install PREFIX="$prefix" > "$scratch/install.log"

for f in lib/libnetcdf.so lib/libnetcdf.so.19 lib/libnetcdf.so.22 lib/libnetcdf.a lib/libnczarr_preload.so \
         include/netcdf.h include/netcdf_meta.h include/netcdf_filter.h include/netcdf_mem.h include/netcdf_aux.h include/netcdf_nczarr.h \
         lib/pkgconfig/netcdf.pc bin/nc-config lib/cmake/netCDF/netCDFConfig.cmake lib/cmake/netCDF/netCDFConfigVersion.cmake; do
    [ -e "$prefix/$f" ] && ok "installed $f" || bad "installed $f"
done

cmake -S "$top/ctests/cmake_consumer" -B "$scratch/cm" -DCMAKE_PREFIX_PATH="$prefix" > "$scratch/cmake.log" 2>&1 && ok || { bad "cmake configure"; cat "$scratch/cmake.log"; }
grep -q "NetCDFVersion=4.9.2" "$scratch/cmake.log" && ok "NetCDFVersion" || bad "NetCDFVersion"
cmake --build "$scratch/cm" > "$scratch/build.log" 2>&1 && ok || { bad "cmake build"; cat "$scratch/build.log"; }
"$scratch/cm/consumer" "$scratch" && ok "consumer run" || bad "consumer run"
mkdir -p "$scratch/v5"
printf 'cmake_minimum_required(VERSION 3.16)\nproject(v5 C)\nfind_package(netCDF 5 REQUIRED CONFIG)\n' > "$scratch/v5/CMakeLists.txt"
cmake -S "$scratch/v5" -B "$scratch/v5b" -DCMAKE_PREFIX_PATH="$prefix" > /dev/null 2>&1 && bad "find_package(netCDF 5) must fail" || ok

PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs netcdf | grep -q -- "-L$prefix/lib/pkgconfig/../../lib -Wl,-rpath,$prefix/lib/pkgconfig/../../lib -lnetcdf" && ok || bad "pkg-config --libs: $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs netcdf)"
[ "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion netcdf)" = "4.9.2" ] && ok "pkg-config version" || bad "pkg-config version"
# Each route builds a program that runs against this library (the consumer checks
# nc_inq_libvers), with no LD_LIBRARY_PATH, although Debian's netcdf-c has the same SONAME.
cc -o "$scratch/pc" "$top/ctests/cmake_consumer/main.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs netcdf) \
    && env -u LD_LIBRARY_PATH "$scratch/pc" "$scratch" > /dev/null && ok "pkg-config build runs against this library" || bad "pkg-config build runs against this library"
cc -o "$scratch/ncc" "$top/ctests/cmake_consumer/main.c" $("$prefix/bin/nc-config" --cflags --libs) \
    && env -u LD_LIBRARY_PATH "$scratch/ncc" "$scratch" > /dev/null && ok "nc-config build runs against this library" || bad "nc-config build runs against this library"
env -u LD_LIBRARY_PATH "$scratch/cm/consumer" "$scratch" > /dev/null && ok "CMake build runs against this library" || bad "CMake build runs against this library"
nc="$prefix/bin/nc-config"
[ "$($nc --version)" = "netCDF 4.9.2" ] && ok "nc-config --version" || bad "nc-config --version"
[ "$($nc --prefix)" = "$prefix" ] && ok "nc-config --prefix" || bad "nc-config --prefix"
[ "$($nc --has-nczarr)" = yes ] && [ "$($nc --has-hdf5)" = no ] && [ "$($nc --has-nc4)" = yes ] && ok "nc-config --has-*" || bad "nc-config --has-*"
[ "$($nc --has-s3)" = yes ] && grep -q "define NC_HAS_S3 1" "$prefix/include/netcdf_meta.h" && grep -q "netCDF_HAS_S3 yes" "$prefix/lib/cmake/netCDF/netCDFConfig.cmake" \
    && ok "S3 support said by nc-config, netcdf_meta.h and the CMake package" || bad "S3 support said by nc-config, netcdf_meta.h and the CMake package"
for flag in dap dap2 dap4 nc2 nc4 hdf5 hdf4 pnetcdf parallel szlib zstd logging cdf5 parallel4 benchmarks multifilters stdfilters quantize; do
    v=$($nc --has-$flag)
    [ "$v" = yes ] || [ "$v" = no ] && ok "nc-config --has-$flag said $v" || bad "nc-config --has-$flag said $v"
done
$nc --bogus > /dev/null && bad "unknown nc-config option must fail" || ok
echo "packaging tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

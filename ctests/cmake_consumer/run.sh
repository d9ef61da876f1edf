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

PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs netcdf | grep -q -- "-L$prefix/lib/pkgconfig/../../lib -lnetcdf" && ok || bad "pkg-config --libs: $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --libs netcdf)"
[ "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion netcdf)" = "4.9.2" ] && ok "pkg-config version" || bad "pkg-config version"
cc -o "$scratch/pc" "$top/ctests/cmake_consumer/main.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs netcdf) -Wl,-rpath,"$prefix/lib" && "$scratch/pc" "$scratch" > /dev/null && ok "pkg-config build" || bad "pkg-config build"
nc="$prefix/bin/nc-config"
[ "$($nc --version)" = "netCDF 4.9.2" ] && ok "nc-config --version" || bad "nc-config --version"
[ "$($nc --prefix)" = "$prefix" ] && ok "nc-config --prefix" || bad "nc-config --prefix"
[ "$($nc --has-nczarr)" = yes ] && [ "$($nc --has-hdf5)" = no ] && [ "$($nc --has-nc4)" = yes ] && ok "nc-config --has-*" || bad "nc-config --has-*"
for flag in dap dap2 dap4 nc2 nc4 hdf5 hdf4 pnetcdf parallel szlib zstd logging cdf5 parallel4 benchmarks multifilters stdfilters quantize; do
    v=$($nc --has-$flag)
    [ "$v" = yes ] || [ "$v" = no ] && ok "nc-config --has-$flag said $v" || bad "nc-config --has-$flag said $v"
done
$nc --bogus > /dev/null && bad "unknown nc-config option must fail" || ok
echo "packaging tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

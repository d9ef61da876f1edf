#!/bin/sh
# Parallel I/O (netcdf_par.h over MPI): the parallel libraries are built here (they need
# mpicc, which ensure_deps.sh installs), then t_par runs under mpirun with 1, 2, 4 and 7 ranks
# on the directory store and on S3 (moto): whole-chunk and chunk-splitting writes, strided rows,
# unlimited growth by different ranks, every type, compressed collective variables, groups,
# compared value by value with the same data written serially, and read back by zarr-python.
# Also: a program built against Debian's parallel netcdf-c runs unchanged on our drop-in; the
# preload variant in front of Debian's library keeps HDF5 files going to netcdf-c; a rank killed
# mid-write leaves the last synced state; netcdf-fortran's nf90_create_par.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/ctests/harness.sh"
for tool in mpicc mpirun mpif90 moto_server curl; do
    command -v $tool > /dev/null || { echo "missing tool: $tool (sh ctests/ensure_deps.sh)"; exit 1; }
done
DEB_INC=/usr/lib/x86_64-linux-gnu/netcdf/mpi/include
[ -f "$DEB_INC/netcdf_par.h" ] || { echo "missing Debian's parallel netcdf-c (libnetcdf-mpi-dev)"; exit 1; }
make -C "$top" --no-print-directory build/libnetcdf_mpi.so.19 build/libnczarr_mpi_preload.so > "$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; exit 1; }
mpi="$build/libnetcdf_mpi.so.19"
# The suite runs as root in CI containers; OpenMPI refuses that unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
run() { mpirun --oversubscribe "$@"; }

mpicc -Wall -I"$top/include" -o "$scratch/t_par" "$top/ctests/mpi/t_par.c" -L"$build" -lnetcdf_mpi -Wl,-rpath,"$build" || bad "t_par build"
mpicc -Wall -I"$top/include" -o "$scratch/t_par_kill" "$top/ctests/mpi/t_par_kill.c" -L"$build" -lnetcdf_mpi -Wl,-rpath,"$build" || bad "t_par_kill build"
# Against Debian's headers and library: what an existing parallel program is.
mpicc -I"$DEB_INC" -o "$scratch/t_par_deb" "$top/ctests/mpi/t_par.c" -lnetcdf_mpi || bad "t_par build against Debian"
mpicc -I"$DEB_INC" -o "$scratch/t_par_hdf5" "$top/ctests/mpi/t_par_hdf5.c" -lnetcdf_mpi || bad "t_par_hdf5 build"
mpif90 -I/usr/include -o "$scratch/fpar" "$top/ctests/mpi/fpar.f90" -lnetcdff > "$scratch/f.log" 2>&1 || { bad "fpar build"; cat "$scratch/f.log"; }

# 1. Directory store, 1/2/4/7 ranks, then zarr-python compares with the serial copy.
if case_ "1-directory-store-1"; then
for np in 1 2 4 7; do
    d="$scratch/dir$np"; mkdir -p "$d"
    run -np $np "$scratch/t_par" "file://$d" "#mode=nczarr,file" > "$scratch/o.txt" 2>&1 && ok || { bad "t_par dir np=$np"; tail -20 "$scratch/o.txt"; }
    grep "passed" "$scratch/o.txt"
    python3 "$top/ctests/mpi/py_read_par.py" "$d/par" "$d/serial" > "$scratch/py.txt" 2>&1 && ok || { bad "zarr-python np=$np"; cat "$scratch/py.txt"; }
done
tail -1 "$scratch/py.txt"
fi

# 2. S3 (moto), 1/2/4/7 ranks.
if case_ "2-s3-moto-1"; then
M=$(port); moto_server -H 127.0.0.1 -p "$M" > "$scratch/moto.log" 2>&1 & pids="$pids $!"
for i in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$M/" && break; sleep 0.1; done
export AWS_ACCESS_KEY_ID=AKIATESTKEY AWS_SECRET_ACCESS_KEY=test-secret NCZARR_S3_BACKOFF_MS=10
unset AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 S3_NC_CONFIG 2> /dev/null
for np in 1 2 4 7; do
    run -np $np "$scratch/t_par" "http://127.0.0.1:$M/nczarr-par/np$np" "#mode=nczarr,s3" > "$scratch/o.txt" 2>&1 && ok || { bad "t_par S3 np=$np"; tail -20 "$scratch/o.txt"; }
    grep "passed" "$scratch/o.txt"
done
python3 - "$M" > "$scratch/py.txt" 2>&1 << 'PY' && ok || { bad "zarr-python on S3"; cat "$scratch/py.txt"; }
import sys, numpy as np, s3fs, zarr
fs = s3fs.S3FileSystem(key="AKIATESTKEY", secret="test-secret", client_kwargs={"endpoint_url": f"http://127.0.0.1:{sys.argv[1]}", "region_name": "us-east-1"})
par = zarr.open_group(zarr.storage.FsspecStore(fs, path="nczarr-par/np4/par", read_only=True), mode="r")
ser = zarr.open_group(zarr.storage.FsspecStore(fs, path="nczarr-par/np4/serial", read_only=True), mode="r")
for name in ("a", "b", "u", "z", "t4", "t12", "g/gv"):
    assert np.array_equal(par[name][...], ser[name][...]), name
print("zarr-python on S3: 7 arrays equal")
PY
fi

# 3. Drop-in: the program built against Debian's parallel netcdf-c, run on ours.
if case_ "3-drop-program-built"; then
d="$scratch/deb"; mkdir -p "$d"
LD_LIBRARY_PATH="$build" ldd "$scratch/t_par_deb" 2> /dev/null | grep -q "$build/libnetcdf_mpi.so.19" && ok "drop-in resolves to ours" || bad "drop-in resolves to ours"
run -np 4 -x LD_LIBRARY_PATH="$build" "$scratch/t_par_deb" "file://$d" "#mode=nczarr,file" > "$scratch/o.txt" 2>&1 && ok || { bad "Debian-built t_par on the drop-in"; tail -20 "$scratch/o.txt"; }
fi

# 4. Preload in front of Debian's parallel netcdf-c: HDF5 stays netcdf-c's, Zarr is ours.
if case_ "4-preload-front-debian"; then
run -np 2 "$scratch/t_par_hdf5" "$d/plain.nc" > "$scratch/o.txt" 2>&1 && ok || { bad "HDF5 on Debian's library"; tail "$scratch/o.txt"; }
run -np 2 -x LD_PRELOAD="$build/libnczarr_mpi_preload.so" "$scratch/t_par_hdf5" "$d/h.nc" "file://$d/z#mode=nczarr,file" > "$scratch/o.txt" 2>&1 && ok || { bad "preload: HDF5 and Zarr"; tail "$scratch/o.txt"; }
grep -q "h.nc format 2" "$scratch/o.txt" && grep -q "z#mode=nczarr,file format 10" "$scratch/o.txt" && ok "preload routed HDF5 to netcdf-c and Zarr to us" || bad "preload routed HDF5 to netcdf-c and Zarr to us"
[ -f "$d/h.nc" ] && head -c 4 "$d/h.nc" | grep -q "HDF" && ok "preload: h.nc is an HDF5 file" || bad "preload: h.nc is an HDF5 file"
[ -f "$d/z/.zgroup" ] && ok "preload: z is a Zarr store" || bad "preload: z is a Zarr store"
fi

# 5. A rank killed mid-write: the last synced state reads back.
if case_ "5-rank-killed-mid"; then
run -np 3 "$scratch/t_par_kill" write "file://$d/k#mode=nczarr,file" > "$scratch/o.txt" 2>&1 && bad "killed run must fail" || ok
"$scratch/t_par_kill" verify "file://$d/k#mode=nczarr,file" 3 > "$scratch/o.txt" 2>&1 && ok || { bad "synced state after a kill"; cat "$scratch/o.txt"; }
fi

# 6. netcdf-fortran (Debian's, which links the serial libnetcdf.so.19): nf90_create_par and
#    nf90_open_par reach the parallel library preloaded in front of it.
if case_ "6-netcdf-fortran-debian"; then
run -np 2 -x LD_PRELOAD="$mpi" "$scratch/fpar" "file://$d/f#mode=nczarr,file" > "$scratch/o.txt" 2>&1 && ok || { bad "fortran parallel"; tail "$scratch/o.txt"; }
grep -q "fortran parallel (2 ranks): 0 failed" "$scratch/o.txt" && ok "fortran result" || bad "fortran result"
fi

# 7. The serial libraries stay free of MPI.
if case_ "7-serial-libraries-stay"; then
for lib in "$build/libnetcdf.so.19" "$build/libnczarr_preload.so"; do
    objdump -p "$lib" | grep NEEDED | grep -q mpi && bad "$lib needs MPI" || ok
done
objdump -p "$mpi" | grep -q "SONAME *libnetcdf_mpi.so.19" && ok "SONAME libnetcdf_mpi.so.19" || bad "SONAME libnetcdf_mpi.so.19"
fi

# 8. Installed like Debian's parallel package: netcdf_par.h, netcdf-mpi.pc, cmake/netCDF_mpi.
if case_ "8-installed-like-debian"; then
prefix="$scratch/prefix"
make -C "$top" --no-print-directory install PREFIX="$prefix" > "$scratch/install.log" 2>&1 || { bad "install"; cat "$scratch/install.log"; }
for f in lib/libnetcdf_mpi.so.19 lib/libnetcdf_mpi.so lib/libnczarr_mpi_preload.so include/netcdf_par.h \
         lib/pkgconfig/netcdf-mpi.pc lib/cmake/netCDF_mpi/netCDFConfig.cmake lib/cmake/netCDF_mpi/netCDFConfigVersion.cmake; do
    [ -e "$prefix/$f" ] && ok "installed $f" || bad "installed $f"
done
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs netcdf-mpi)
echo "$flags" | grep -q -- "-lnetcdf_mpi" && ok "pkg-config netcdf-mpi: $flags" || bad "pkg-config netcdf-mpi: $flags"
mkdir -p "$scratch/cm"
cat > "$scratch/cm/CMakeLists.txt" << 'CM'
cmake_minimum_required(VERSION 3.16)
project(par C)
find_package(MPI REQUIRED COMPONENTS C)
find_package(netCDF REQUIRED CONFIG)
message(STATUS "netCDF_HAS_PARALLEL=${netCDF_HAS_PARALLEL}")
add_executable(t_par ${SRC})
target_link_libraries(t_par netCDF::netcdf MPI::MPI_C)
CM
cmake -S "$scratch/cm" -B "$scratch/cmb" -DnetCDF_DIR="$prefix/lib/cmake/netCDF_mpi" -DSRC="$top/ctests/mpi/t_par.c" > "$scratch/cmake.log" 2>&1 && ok || { bad "cmake netCDF_mpi configure"; cat "$scratch/cmake.log"; }
grep -q "netCDF_HAS_PARALLEL=yes" "$scratch/cmake.log" && ok "netCDF_HAS_PARALLEL" || bad "netCDF_HAS_PARALLEL"
cmake --build "$scratch/cmb" > "$scratch/cmbuild.log" 2>&1 && ok || { bad "cmake build against netCDF_mpi"; cat "$scratch/cmbuild.log"; }
mkdir -p "$scratch/cmrun"
run -np 2 "$scratch/cmb/t_par" "file://$scratch/cmrun" "#mode=nczarr,file" > "$scratch/o.txt" 2>&1 && ok || { bad "cmake-built t_par"; tail "$scratch/o.txt"; }
fi

echo "MPI tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

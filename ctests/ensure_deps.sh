#!/bin/sh
# Installs what the test suite drives, when missing: Debian's netCDF tools (the real clients
# and netcdf-c 4.9.0, with its headers), CMake and pkg-config (packaging tests), and from PyPI,
# into the checkout's own virtual environment (.venv), zarr, xarray, numcodecs, tensorstore,
# netCDF4 (netcdf-c 4.10.1 as the reference), pandas, cfdm, hdf5plugin, moto, boto3, s3fs and
# kerchunk.
# Tests never skip: a tool that cannot be installed fails the run.
set -eu
need_apt=""
for tool in ncdump:netcdf-bin ncap2:nco cdo:cdo cmake:cmake pkg-config:pkg-config gfortran:gfortran curl:curl; do
    command -v "${tool%%:*}" > /dev/null 2>&1 || need_apt="$need_apt ${tool#*:}"
done
[ -f /usr/include/netcdf.h ] || need_apt="$need_apt libnetcdf-dev"
# Debian's netCDF4-python (for /usr/bin/python3): the drop-in must let it import (H5 symbols).
/usr/bin/python3 -c "import netCDF4" 2> /dev/null || need_apt="$need_apt python3-netcdf4"
[ -f /usr/include/netcdf.mod ] || need_apt="$need_apt libnetcdff-dev"
# Parallel I/O: OpenMPI (mpicc, mpif90, mpirun) and Debian's parallel netcdf-c to compare with.
for tool in mpicc mpirun mpif90; do command -v $tool > /dev/null 2>&1 || need_apt="$need_apt openmpi-bin libopenmpi-dev"; done
[ -f /usr/lib/x86_64-linux-gnu/netcdf/mpi/include/netcdf_par.h ] || need_apt="$need_apt libnetcdf-mpi-dev"
# HDF5 filter plugins (LZ4, bzip2; ZFP; LZF) for the plugin tests.
[ -f /usr/lib/x86_64-linux-gnu/hdf5/serial/plugins/libh5lz4.so ] || need_apt="$need_apt hdf5-filter-plugin"
[ -f /usr/lib/x86_64-linux-gnu/hdf5/serial/plugins/libh5zzfp.so ] || need_apt="$need_apt hdf5-filter-plugin-zfp-serial"
# LZF (id 32000): a plugin that links no libhdf5 and takes HDF5's symbols from the process.
[ -f /usr/lib/x86_64-linux-gnu/hdf5/serial/plugins/liblzf_filter.so ] || need_apt="$need_apt hdf5-plugin-lzf"
# ... and takes liblzf's functions from the process too (the package depends on libc alone).
[ -f /usr/lib/x86_64-linux-gnu/liblzf.so.1 ] || need_apt="$need_apt liblzf1"
if [ -n "$need_apt" ]; then
    echo "installing:$need_apt"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need_apt > /dev/null
fi
# Python packages go into the checkout's own virtual environment, never the system Python:
# $NCZARR_VENV, else .venv at the top of the checkout (the Makefile puts its bin/ first on
# PATH for every test and benchmark). Made with the python3 on PATH.
venv="${NCZARR_VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv}"
if [ ! -x "$venv/bin/python3" ]; then
    echo "creating the Python environment $venv"
    if ! python3 -m venv "$venv" > /dev/null 2>&1; then
        # Debian's python3 makes environments only with python3-venv installed.
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO=sudo
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv > /dev/null
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
    "$venv/bin/python3" -m pip install -q --upgrade pip
fi
py="$venv/bin/python3"
pip_install() {
    echo "installing Python packages into $venv: $*"
    "$py" -m pip install -q "$@"
}
"$py" -c "import zarr, xarray, numcodecs, netCDF4, pandas" 2> /dev/null || pip_install zarr xarray numcodecs netCDF4 pandas
"$py" -c "import tensorstore" 2> /dev/null || pip_install tensorstore
# cfdm writes CF aggregation files.
"$py" -c "import cfdm" 2> /dev/null || pip_install cfdm
# hdf5plugin: HDF5 filter plugins (bitshuffle, ZFP, SZ, ...).
"$py" -c "import importlib.util as u; assert u.find_spec('hdf5plugin')" 2> /dev/null || pip_install hdf5plugin
# s3fs first: its aiobotocore pins botocore, and boto3 is then taken to match it (installed
# together, pip settles on an s3fs from before aiobotocore, which zarr-python cannot use).
if ! "$py" -c "import moto.server, flask, boto3, s3fs, aiobotocore" 2> /dev/null; then
    pip_install "s3fs>=2024.1"
    pip_install "moto[server]" boto3 "botocore==$("$py" -c 'import botocore; print(botocore.__version__)')"
fi
# kerchunk makes the reference sets the refs suite reads.
"$py" -c "import kerchunk.hdf, kerchunk.netCDF3" 2> /dev/null || pip_install kerchunk
# fastparquet: kerchunk.df writes the Parquet reference sets the refs suite reads.
"$py" -c "import fastparquet" 2> /dev/null || pip_install fastparquet
# h5netcdf (with h5py) writes part of the lazy suite's corpus (HDF5's newer chunk indexes).
"$py" -c "import h5netcdf, h5py" 2> /dev/null || pip_install h5netcdf h5py
# icechunk-python (1.1.x on this Python: repositories of spec 1) writes and reads the Icechunk
# repositories the icechunk suite compares with ours.
"$py" -c "import icechunk" 2> /dev/null || pip_install "icechunk>=1.1,<2"

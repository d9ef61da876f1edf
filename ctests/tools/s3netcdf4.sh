#!/bin/sh
# Prints the path of a Python that imports S3netCDF4 (CEDA's reference CFA-0.4/0.5 reader),
# building it once into a cache folder from the copy in ctests/fixtures/peers/s3netcdf4
# (about a minute or more on 2 cores; NCZARR_PEERS_CACHE moves the cache). Fails loudly.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
venv=${NCZARR_PEERS_CACHE:-${HOME:-/tmp}/.cache/nczarr-rs}/s3netcdf4-venv
if ! "$venv/bin/python" -c "import S3netCDF4" > /dev/null 2>&1; then
    # (S3netCDF4 imports only once a ~/.s3nc.json exists: the check above fails until a test
    # gives it one, so the import itself is checked with a scratch HOME.)
    scratch_home=$(mktemp -d)
    echo '{"version": "9", "hosts": {}}' > "$scratch_home/.s3nc.json"
    if ! (cd / && HOME="$scratch_home" "$venv/bin/python" -c "from S3netCDF4._s3netCDF4 import s3Dataset") > /dev/null 2>&1; then
        rm -rf "$venv"
        bash "$top/ctests/fixtures/peers/s3netcdf4/build.sh" "$venv" >&2
    fi
    rm -rf "$scratch_home"
fi
echo "$venv/bin/python"

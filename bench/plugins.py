"""Filters from HDF5 plugins: write and read a 64 MiB float variable through Debian's LZ4 and
ZFP (reversible) plugins and hdf5plugin's bitshuffle+LZ4, ours on NCZarr against Debian's
netcdf-c on HDF5 (the same plugin libraries from HDF5_PLUGIN_PATH, the same chunks). Medians of BENCH_RUNS (5). Called by
bench/run.py."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, "build")
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
PLUGINS = "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins"
import importlib.util

HDF5PLUGIN = os.path.join(os.path.dirname(importlib.util.find_spec("hdf5plugin").origin), "plugins")
FILTERS = [("LZ4", ["32004"], PLUGINS), ("ZFP reversible", ["32013", "5", "0", "0", "0"], PLUGINS),
           ("bitshuffle+LZ4", ["32008", "0", "2"], HDF5PLUGIN)]


def main():
    src = os.path.join(TOP, "bench", "plugin_rw.c")
    ours_bin, theirs_bin = f"{BUILD}/plugin_rw", f"{BUILD}/plugin_rw_netcdf_c"
    subprocess.run(["cc", "-O2", f"-I{TOP}/include", "-o", ours_bin, src, f"-L{BUILD}", "-lnetcdf", f"-Wl,-rpath,{BUILD}"], check=True)
    subprocess.run(["cc", "-O2", "-o", theirs_bin, src, "-lnetcdf"], check=True)
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    scratch = tempfile.mkdtemp(dir=os.environ.get("BENCH_DIR", shm))
    try:
        def run(binary, name, op, args, plugins):
            env = dict(os.environ, HDF5_PLUGIN_PATH=plugins)
            out = subprocess.run([binary, name, op] + args, env=env, capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(f"{binary} {name} {op}: {out.stderr}")
            return float(out.stdout.split()[1])

        rows = []
        for label, args, plugins in FILTERS:
            ours = f"file://{scratch}/p.zarr#mode=nczarr,file"
            theirs = os.path.join(scratch, "p.nc")
            for op in ("write", "read"):
                o = statistics.median(run(ours_bin, ours, op, args, plugins) for _ in range(RUNS))
                t = statistics.median(run(theirs_bin, theirs, op, args, plugins) for _ in range(RUNS))
                rows.append((label, op, o, t))
            shutil.rmtree(f"{scratch}/p.zarr", ignore_errors=True)
        print(f"\nFilters from HDF5 plugins: v(64, 512, 512) float, chunks 1 x 512 x 512 (medians of {RUNS}):")
        print(f"{'filter':16} {'op':6} {'ours s':>8} {'netcdf-c s':>11} {'ours/netcdf-c':>14}")
        for label, op, o, t in rows:
            print(f"{label:16} {op:6} {o:8.3f} {t:11.3f} {o / t:14.3f}")
        print("ours: NCZarr, chunks encoded in parallel through the plugin (one call at a time per plugin);"
              " netcdf-c: Debian's 4.9.0 on HDF5 1.10")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

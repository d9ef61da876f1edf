"""Lazy reads of a netCDF-4 object on a web server (issue 37, item 7): t(time, lat, lon) float,
zlib level 1, one chunk per time step (the issue's 343 MB file unless BENCH_LAZY_TIMES shrinks
it), served by ctests/tools/range_server.py behind the latency proxy (ctests/s3/s3proxy.py) at
0, 20 and 50 ms. Two reads: a 10 x 10 slice of one time step, and the whole variable. Readers,
each timed inside its own process (interpreter and library start-up excluded):
  ours       netCDF4-python under the preload library, `URL#mode=bytes` (our lazy open)
  netcdf-c   netCDF4-python's own netcdf-c 4.10.1, `URL#mode=bytes` (HDF5's byte-range driver)
  fsspec     fsspec + zarr-python on kerchunk references of the file (made beforehand)
  h5netcdf   h5netcdf over fsspec's HTTP file (what Python users do without references)
  bare       the whole variable only: its chunks' byte ranges fetched 8 at a time, not decoded
Requests and bytes are counted at the server; peak memory is the reader's maximum RSS. Medians
of BENCH_RUNS (3); BENCH_LAZY_LATENCIES (0,20,50) and BENCH_LAZY_READERS (all) pick rows and
columns. Called by bench/run.py; `python3 bench/lazy.py` alone works too."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3_peers import free_port, proxy_ctl, proxy_requests, wait_up  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("NCZARR_BUILD", os.path.join(TOP, "build"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
TIMES = int(os.environ.get("BENCH_LAZY_TIMES", "128"))
LAT, LON = 720, 1440

PRELUDE = """
import resource, sys, time
url, what = sys.argv[1], sys.argv[2]
"""

READERS = {
    "ours": ("import netCDF4, numpy", """
t0 = time.perf_counter()
with netCDF4.Dataset(url + "#mode=bytes") as d:
    t = d["t"]; x = t[64 % t.shape[0], 100:110, 200:210] if what == "slice" else t[:]
    s = float(numpy.asarray(x, dtype="f8").sum())
"""),
    "fsspec": ("import fsspec, zarr, numpy", """
t0 = time.perf_counter()
fs = fsspec.filesystem("reference", fo=sys.argv[3], remote_protocol="http", remote_options={"asynchronous": True}, asynchronous=True)
t = zarr.open_group(zarr.storage.FsspecStore(fs, read_only=True, path=""), mode="r", zarr_format=2)["t"]
x = t[64 % t.shape[0], 100:110, 200:210] if what == "slice" else t[:]
s = float(numpy.asarray(x, dtype="f8").sum())
"""),
    "h5netcdf": ("import fsspec, h5netcdf, numpy", """
t0 = time.perf_counter()
with h5netcdf.File(fsspec.filesystem("http").open(url, "rb"), "r") as d:
    t = d["t"]; x = t[64 % t.shape[0], 100:110, 200:210] if what == "slice" else t[:]
    s = float(numpy.asarray(x, dtype="f8").sum())
"""),
    "bare": ("import json, http.client, urllib.parse, concurrent.futures", """
refs = json.load(open(sys.argv[3]))["refs"]
ranges = [v[1:] for k, v in refs.items() if k.startswith("t/") and isinstance(v, list)]
u = urllib.parse.urlsplit(url)
t0 = time.perf_counter()
def get(r):
    c = http.client.HTTPConnection(u.netloc); c.request("GET", u.path, headers={"Range": "bytes=%d-%d" % (r[0], r[0] + r[1] - 1)})
    return len(c.getresponse().read())
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    s = float(sum(pool.map(get, ranges)))
"""),
}
READERS["netcdf-c"] = READERS["ours"]
EPILOGUE = """
print(time.perf_counter() - t0, s, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def make(path):
    import netCDF4
    import numpy as np

    rng = np.random.default_rng(0)
    base = (np.sin(np.linspace(0, 20, LAT))[:, None] * np.cos(np.linspace(0, 40, LON))[None, :] * 30 + 280).astype("f4")
    with netCDF4.Dataset(path, "w") as d:
        d.createDimension("time", TIMES), d.createDimension("lat", LAT), d.createDimension("lon", LON)
        t = d.createVariable("t", "f4", ("time", "lat", "lon"), zlib=True, complevel=1, chunksizes=(1, LAT, LON))
        for i in range(TIMES):
            t[i] = base + rng.normal(0, 1, (LAT, LON)).astype("f4")


def main():
    scratch = tempfile.mkdtemp(dir=os.environ.get("BENCH_DIR"))
    procs = []
    try:
        make(os.path.join(scratch, "big.nc"))
        size = os.path.getsize(os.path.join(scratch, "big.nc"))
        hport, pport = free_port(), free_port()
        log = os.path.join(scratch, "http.log")
        procs.append(subprocess.Popen([sys.executable, os.path.join(TOP, "ctests", "tools", "range_server.py"), str(hport), scratch, log]))
        procs.append(subprocess.Popen([sys.executable, os.path.join(TOP, "ctests", "s3", "s3proxy.py"), str(pport), f"http://127.0.0.1:{hport}"]))
        wait_up(f"http://127.0.0.1:{pport}/__proxy")
        url = f"http://127.0.0.1:{pport}/big.nc"
        import fsspec
        from kerchunk.hdf import SingleHdf5ToZarr

        refs = os.path.join(scratch, "refs.json")
        with fsspec.open(url, "rb") as f:
            json.dump(SingleHdf5ToZarr(f, url).translate(), open(refs, "w"))

        def once(reader, what):
            setup, body = READERS[reader]
            env = dict(os.environ)
            if reader == "ours":
                env["LD_PRELOAD"] = os.path.join(BUILD, "libnczarr_preload.so")
            open(log, "w").close()
            before = proxy_requests(pport)
            out = subprocess.run([sys.executable, "-c", setup + PRELUDE + body + EPILOGUE,
                                  url, what, refs], env=env, capture_output=True, text=True, timeout=1800)
            if out.returncode:
                raise SystemExit(f"{reader} {what}: {out.stderr[-2000:]}")
            seconds, checksum, rss = out.stdout.split()
            moved = sum(int(line.split()[-1]) for line in open(log) if line.strip())
            return float(seconds), float(checksum), int(rss), proxy_requests(pport) - before, moved

        rows = []
        latencies = [int(x) for x in os.environ.get("BENCH_LAZY_LATENCIES", "0,20,50").split(",")]
        only = os.environ.get("BENCH_LAZY_READERS", ",".join(READERS)).split(",")
        for latency in latencies:
            proxy_ctl(pport, latency_ms=latency)
            for what in ("slice", "whole"):
                cells = {}
                for reader in READERS:
                    if (reader == "bare" and what == "slice") or reader not in only:
                        continue
                    got = [once(reader, what) for _ in range(RUNS)]
                    cells[reader] = (statistics.median(g[0] for g in got),) + got[0][1:]
                sums = {r: c[1] for r, c in cells.items() if r != "bare"}
                assert len({round(v, 2) for v in sums.values()}) == 1, f"readers disagree: {sums}"
                rows.append((latency, what, cells))
        print(f"\nLazy reads: t({TIMES}, {LAT}, {LON}) float, zlib 1, one chunk per time step, {size / 1e6:.0f} MB on a web server "
              f"(medians of {RUNS}; time s / requests / MB moved / peak RSS MB):")
        names = list(READERS)
        print(f"{'ms':>3} {'read':6} " + " ".join(f"{n:>22}" for n in names) + f" {'ours/best peer':>15}")
        for latency, what, cells in rows:
            line = f"{latency:3d} {what:6} "
            for n in names:
                c = cells.get(n)
                line += f" {c[0]:7.3f} {c[3]:4d} {c[4] / 1e6:5.0f} {c[2]:4d}" if c else f" {'-':>22}"
            peers = [cells[n][0] for n in ("netcdf-c", "fsspec", "h5netcdf") if n in cells]
            line += f" {cells['ours'][0] / min(peers):15.2f}" if peers and "ours" in cells else f" {'-':>15}"
            if "bare" in cells and "ours" in cells:
                line += f"  ours/bare {cells['ours'][0] / cells['bare'][0]:.2f}"
            print(line)
    finally:
        for p in procs:
            p.terminate()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

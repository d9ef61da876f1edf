"""Aggregated reads: a 256 MiB variable v(1024, 65536) float in 64 fragments of 16 rows (4 MiB
each, netCDF-4), described by a CF aggregation file, against the same data in one netCDF-4 file
and in NCZarr. Read all, and a window of 10 rows (inside one fragment), locally and on S3 (moto
behind the latency proxy at 20 ms). Ours: bench/cfa_read.c under the preload library. Medians of
BENCH_RUNS (3); on S3 the requests each read made (the window must touch only its fragment).
Called by bench/run.py."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3_peers import BUCKET, KEY, SECRET, free_port, proxy_ctl, proxy_requests, start_server, wait_up  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, "build")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
ROWS, COLS, FRAG = 1024, 65536, 16


def make(d):
    import netCDF4

    os.makedirs(os.path.join(d, "agg"))
    block = np.arange(FRAG * COLS, dtype="f4").reshape(FRAG, COLS)
    for i in range(ROWS // FRAG):
        with netCDF4.Dataset(os.path.join(d, "agg", f"agg.v.{i}.nc"), "w") as ds:
            ds.createDimension("t", FRAG)
            ds.createDimension("x", COLS)
            ds.createVariable("v", "f4", ("t", "x"))[:] = block + i
    with netCDF4.Dataset(os.path.join(d, "agg.nc"), "w") as ds:
        ds.Conventions = "CF-1.12"
        ds.createDimension("t", ROWS)
        ds.createDimension("x", COLS)
        ds.createDimension("f_j", ROWS // FRAG)
        ds.createDimension("f_i", 1)
        ds.createDimension("rows", 2)
        ds.createDimension("cols", ROWS // FRAG)
        v = ds.createVariable("v", "f4", ())
        v.aggregated_dimensions = "t x"
        v.aggregated_data = "map: fragment_map uris: fragment_uris identifiers: fragment_identifiers"
        m = ds.createVariable("fragment_map", "i4", ("rows", "cols"), fill_value=-1)
        full = np.full((2, ROWS // FRAG), -1, dtype="i4")
        full[0, :] = FRAG
        full[1, 0] = COLS
        m[:] = np.ma.masked_equal(full, -1)
        u = ds.createVariable("fragment_uris", str, ("f_j", "f_i"))
        for i in range(ROWS // FRAG):
            u[i, 0] = f"agg/agg.v.{i}.nc"
        ds.createVariable("fragment_identifiers", str, ())[...] = np.array("v", dtype=object)
    with netCDF4.Dataset(os.path.join(d, "one.nc"), "w") as ds:
        ds.createDimension("t", ROWS)
        ds.createDimension("x", COLS)
        v = ds.createVariable("v", "f4", ("t", "x"), chunksizes=(FRAG, COLS))
        for i in range(ROWS // FRAG):
            v[i * FRAG:(i + 1) * FRAG, :] = block + i
    pre = dict(os.environ, LD_PRELOAD=os.path.join(BUILD, "libnczarr_preload.so"))
    subprocess.run(["nccopy", os.path.join(d, "one.nc"), f"file://{d}/one.zarr#mode=nczarr,file"], env=pre, check=True)


def main():
    subprocess.run(["cc", "-O2", "-o", f"{BUILD}/cfa_read", os.path.join(TOP, "bench", "cfa_read.c"), "-lnetcdf"], check=True)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    scratch = tempfile.mkdtemp(dir=os.environ.get("BENCH_DIR", shm))
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1",
               LD_PRELOAD=os.path.join(BUILD, "libnczarr_preload.so"))
    server = proxy = None
    try:
        make(scratch)

        def read(name, what):
            out = subprocess.run([f"{BUILD}/cfa_read", name, what], env=env, capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(f"cfa_read {name} {what}: {out.stderr}")
            return float(out.stdout.split()[1]), out.stdout.split()[3]

        rows = []
        local = {"aggregated": os.path.join(scratch, "agg.nc"), "one netCDF-4": os.path.join(scratch, "one.nc"),
                 "NCZarr": f"file://{scratch}/one.zarr#mode=nczarr,file"}
        for what in ("all", "window"):
            times, sums = {}, set()
            for label, name in local.items():
                got = [read(name, what) for _ in range(RUNS)]
                times[label] = statistics.median(t for t, _ in got)
                sums.add(got[0][1])
            assert len(sums) == 1, f"the three read different data: {sums}"
            rows.append(("local", what, times, None))
        server, sport, sname, _ = start_server(scratch)
        pport = free_port()
        proxy = subprocess.Popen([sys.executable, os.path.join(TOP, "ctests", "s3", "s3proxy.py"), str(pport), f"http://127.0.0.1:{sport}"])
        wait_up(f"http://127.0.0.1:{pport}/__proxy")
        import boto3

        s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{sport}", aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                          region_name="us-east-1")
        for root, _, files in os.walk(scratch):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), scratch)
                if not rel.startswith("s3s"):
                    s3.upload_file(os.path.join(root, f), BUCKET, "cfa/" + rel)
        proxy_ctl(pport, latency_ms=20)
        ep = f"http://127.0.0.1:{pport}/{BUCKET}/cfa"
        remote = {"aggregated": f"{ep}/agg.nc#mode=bytes", "one netCDF-4": f"{ep}/one.nc#mode=bytes",
                  "NCZarr": f"{ep}/one.zarr#mode=nczarr,s3"}
        for what in ("all", "window"):
            times, requests = {}, {}
            for label, name in remote.items():
                got = []
                for _ in range(RUNS):
                    before = proxy_requests(pport)
                    got.append(read(name, what)[0])
                    requests[label] = proxy_requests(pport) - before
                times[label] = statistics.median(got)
            rows.append((f"S3 20 ms ({sname})", what, times, requests))
        print(f"\nAggregated read: v(1024, 65536) float, 256 MiB in 64 fragments (medians of {RUNS}; window: 10 rows in one fragment):")
        print(f"{'where':18} {'read':7} {'agg s':>8} {'nc4 s':>8} {'agg/nc4':>8} {'target':>7} {'zarr s':>8} {'agg/zarr':>8} {'req agg':>8} {'req nc4':>8} {'req zarr':>8}")
        for where, what, t, req in rows:
            a, n, z = t["aggregated"], t["one netCDF-4"], t["NCZarr"]
            r = f" {req['aggregated']:8d} {req['one netCDF-4']:8d} {req['NCZarr']:8d}" if req else f" {'-':>8} {'-':>8} {'-':>8}"
            print(f"{where:18} {what:7} {a:8.3f} {n:8.3f} {a / n:8.3f} {'<=' if a / n <= 1.5 else '>'}{1.5:6.1f} {z:8.3f} {a / z:8.3f}{r}")
    finally:
        if proxy:
            proxy.terminate()
        if server:
            server.terminate()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

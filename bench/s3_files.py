"""netCDF files stored as one S3 object: read (open + the whole variable) and write (create +
put + the upload at close) of a 256 MiB netCDF-4 file and a 64 MiB classic one, on the same
server and latency proxy as the Zarr rows (bench/s3_peers.py), at 0, 20 and 50 ms per request.

Sides, each timed around its own transfers only:
* ours: bench/s3_files.c under the preload library in front of Debian's netcdf-c;
* bare: curl making the same requests ours makes (reads: the first part, then the other parts
  at once; writes: one multipart upload of the same parts, all at once), with presigned URLs
  and no netCDF work: what this server and proxy allow any client;
* netCDF4-python 1.7 with netcdf-c 4.10.1's own `#mode=bytes` (reads only; its HDF5 has no
  byte-range driver, so classic only).
Medians of BENCH_RUNS (3). Called by bench/run.py."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3_peers import BUCKET, KEY, SECRET, free_port, proxy_ctl, start_server, wait_up  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, "build")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
LATENCIES = [int(x) for x in os.environ.get("BENCH_S3_LATENCIES", "0,20,50").split(",")]
PART = 16 << 20  # NCZARR_S3_PART_MB's default: ours and bare make the same requests
FILES = [("nc4", 256, "netCDF-4 256 MiB"), ("classic", 64, "classic 64 MiB")]
NC4PY_LIMIT = 30


def main():
    import boto3

    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1")
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1")
    subprocess.run(["cc", "-O2", "-o", f"{BUILD}/s3_files", os.path.join(TOP, "bench", "s3_files.c"), "-lnetcdf"], check=True)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    scratch = tempfile.mkdtemp(dir=os.environ.get("BENCH_DIR", shm))
    server, sport, name, root = start_server(scratch)
    pport = free_port()
    proxy = subprocess.Popen([sys.executable, os.path.join(TOP, "ctests", "s3", "s3proxy.py"), str(pport), f"http://127.0.0.1:{sport}"])
    preload = dict(env, LD_PRELOAD=os.path.join(BUILD, "libnczarr_preload.so"))
    try:
        wait_up(f"http://127.0.0.1:{pport}/__proxy")
        ep = f"http://127.0.0.1:{pport}"
        s3 = boto3.client("s3", endpoint_url=ep, aws_access_key_id=KEY, aws_secret_access_key=SECRET, region_name="us-east-1")

        def ours(key, op, mib, kind):
            out = subprocess.run([f"{BUILD}/s3_files", f"{ep}/{BUCKET}/{key}#mode=s3", op, str(mib), kind], env=preload,
                                 capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(f"s3_files {op} {key}: {out.stderr}")
            return float(out.stdout.split()[1])

        def curl(cfg_lines, parallel=True):
            cfg = os.path.join(scratch, "bare.curl")
            with open(cfg, "w") as f:
                f.write("\nnext\n".join(cfg_lines) + "\n")
            subprocess.run(["curl", "-sSf", "--no-progress-meter", "-H", "Expect:"] + (["-Z", "--parallel-max", "64"] if parallel else [])
                           + ["-K", cfg], check=True)

        def bare_read(key, size):
            url = s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=3600)
            ranges = [(a, min(a + PART, size) - 1) for a in range(0, size, PART)]
            lines = [f'url = "{url}"\nrange = "{a}-{b}"\noutput = "/dev/null"' for a, b in ranges]
            t0 = time.perf_counter()
            curl(lines[:1], parallel=False)
            if len(lines) > 1:
                curl(lines[1:])
            return time.perf_counter() - t0

        def bare_write(key, parts):
            t0 = time.perf_counter()
            up = s3.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]
            lines = []
            for i, part in enumerate(parts, 1):
                url = s3.generate_presigned_url("upload_part", Params={"Bucket": BUCKET, "Key": key, "UploadId": up, "PartNumber": i},
                                                ExpiresIn=3600)
                lines.append(f'url = "{url}"\nupload-file = "{part}"\noutput = "/dev/null"\ndump-header = "{part}.h"')
            curl(lines)
            etags = []
            for part in parts:
                with open(part + ".h") as f:
                    etags.append(next(line.split(":", 1)[1].strip() for line in f if line.lower().startswith("etag:")))
            s3.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=up,
                                         MultipartUpload={"Parts": [{"ETag": e, "PartNumber": i} for i, e in enumerate(etags, 1)]})
            return time.perf_counter() - t0

        def nc4py_read(key):
            """Seconds, or None when it takes longer than NC4PY_LIMIT: netcdf-c's byte-range reads
            go one small GET at a time (thousands for this file)."""
            code = ("import netCDF4, time, sys\nt = time.perf_counter()\n"
                    f"ds = netCDF4.Dataset('{ep}/{BUCKET}/{key}#mode=bytes')\nv = ds['v'][:]\nds.close()\n"
                    "print(time.perf_counter() - t)")
            try:
                out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=NC4PY_LIMIT)
            except subprocess.TimeoutExpired:
                return None
            return float(out.stdout.strip()) if out.returncode == 0 else None

        # The data every side reads, written once by us; the parts the bare writer uploads.
        sources = {}
        for kind, mib, _ in FILES:
            ours(f"files/src.{kind}.nc", "write", mib, kind)
            local = os.path.join(scratch, f"src.{kind}.nc")
            s3.download_file(BUCKET, f"files/src.{kind}.nc", local)
            size = os.path.getsize(local)
            parts = []
            with open(local, "rb") as f:
                for i in range(0, size, PART):
                    parts.append(os.path.join(scratch, f"{kind}.part{i // PART}"))
                    with open(parts[-1], "wb") as p:
                        p.write(f.read(PART))
            os.unlink(local)
            sources[kind] = (size, parts)
        rows = []
        for lat in LATENCIES:
            proxy_ctl(pport, latency_ms=lat)
            for kind, mib, label in FILES:
                size, parts = sources[kind]
                o, b = [], []
                for r in range(RUNS):
                    o.append(ours(f"files/src.{kind}.nc", "read", mib, kind))
                    b.append(bare_read(f"files/src.{kind}.nc", size))
                # One run: it is orders of magnitude slower, and bounded by NC4PY_LIMIT.
                p = nc4py_read(f"files/src.{kind}.nc") if kind == "classic" else "-"
                rows.append((lat, label, "read", statistics.median(o), statistics.median(b), p))
                o, b = [], []
                for r in range(RUNS):
                    o.append(ours(f"files/w-ours-{kind}-{lat}-{r}.nc", "write", mib, kind))
                    b.append(bare_write(f"files/w-bare-{kind}-{lat}-{r}.nc", parts))
                    for side in ("ours", "bare"):
                        s3.delete_object(Bucket=BUCKET, Key=f"files/w-{side}-{kind}-{lat}-{r}.nc")
                rows.append((lat, label, "write", statistics.median(o), statistics.median(b), "-"))
        print(f"\nnetCDF files on S3 ({name} behind the latency proxy; medians of {RUNS}; parts of {PART >> 20} MiB):")
        print(f"{'ms':>3} {'file':18} {'op':6} {'ours s':>8} {'bare s':>8} {'ours/bare':>9} {'target':>7} {'nc4py s':>8} {'ours/nc4py':>10}")
        for lat, label, op, mo, mb, mp in rows:
            ok = mo / mb <= 1.2
            if mp is None:
                py = f" {'>' + str(NC4PY_LIMIT):>8} {'<' + f'{mo / NC4PY_LIMIT:.3f}':>10}"
            elif mp == "-":
                py = f" {'-':>8} {'-':>10}"
            else:
                py = f" {mp:8.3f} {mo / mp:10.3f}"
            print(f"{lat:3d} {label:18} {op:6} {mo:8.3f} {mb:8.3f} {mo / mb:9.3f} {'<=' if ok else '>'}{1.2:6.2f}{py}")
        print("bare: curl making the same ranged GETs / part PUTs as ours (presigned, no netCDF work);"
              " nc4py: netCDF4-python with netcdf-c 4.10.1's #mode=bytes, one run, cut at"
              f" {NC4PY_LIMIT} s (classic only: its HDF5 has no byte-range driver)")
    finally:
        proxy.terminate()
        server.terminate()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

"""S3 against the Zarr peers: our library (bench/s3_peers.c), TensorStore and zarr-python 3 (over
s3fs) on the same data, the same server (s3s-fs when installed, else moto) and the same latency
proxy (ctests/s3/s3proxy.py) at 0, 20 and 50 ms per request. Medians of N runs, printed as
ours/TensorStore and ours/zarr-python with the request counts each side made. Called by
bench/run.py.

Each side runs all its runs in one long-lived process (ours: `s3_peers serve`), so each keeps
what it keeps between operations, connection pools included, as a program using it would.

Workloads: open 200 variables (metadata only), read 64 MiB in 64 uncompressed 1 MiB chunks,
write 256 MiB in 1 MiB chunks.

Beside them, a bare client for the read and the write: curl making only the chunk requests (64
transfers at once, presigned URLs, no metadata, no signing or decoding work of its own). It shows
what the server and the proxy allow any client on this machine: where the bare client is no
faster than TensorStore, the row is bound by them, not by the client.

The server keeps its objects on tmpfs (/dev/shm when there is one; BENCH_DIR picks another place)
and every written prefix is removed after its run, outside the timed part: on a disk, the page
cache's writeback of earlier runs' gigabytes lands in whichever later run it likes and swamps
the differences measured here."""
import json
import logging
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, "build")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
LATENCIES = [int(x) for x in os.environ.get("BENCH_S3_LATENCIES", "0,20,50").split(",")]
KEY, SECRET, BUCKET = "AKIABENCHPEERS", "bench-peers-secret", "nczarr-peers"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_up(url):
    for _ in range(300):
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except Exception as e:  # noqa: BLE001 - any HTTP answer means "up"
            if hasattr(e, "code"):
                return
            time.sleep(0.05)
    raise SystemExit(f"server {url} did not start")


def start_server(scratch):
    port = free_port()
    s3s = shutil.which("s3s-fs") or os.environ.get("S3S_FS")
    if s3s and os.path.exists(s3s):
        root = os.path.join(scratch, "s3s")
        os.makedirs(os.path.join(root, BUCKET))
        proc = subprocess.Popen([s3s, "--host", "127.0.0.1", "--port", str(port), "--access-key", KEY, "--secret-key", SECRET, root],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        name = "s3s-fs"
    else:
        proc = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        name = "moto"
    wait_up(f"http://127.0.0.1:{port}/")
    if name == "moto":
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/{BUCKET}", method="PUT"))
    return proc, port, name, (os.path.join(scratch, "s3s", BUCKET) if name == "s3s-fs" else None)


def drop_written(root, prefix):
    """Removes what a write run stored (s3s-fs keeps objects as files; moto keeps them in its
    own memory, which the runs are too few to fill)."""
    if root:
        shutil.rmtree(os.path.join(root, prefix), ignore_errors=True)


def proxy_ctl(port, **state):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/__proxy", data=json.dumps(state).encode(), method="POST")
    urllib.request.urlopen(req)


def proxy_requests(port):
    return json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/__proxy"))["requests"]


def zarr_python(ep):
    """zarr-python 3's open/read/write of the same workloads, each with fresh stores (no caching
    between runs); its own async concurrency, as a user gets it."""
    import asyncio

    import zarr
    from zarr.core.sync import sync
    from zarr.storage import FsspecStore

    # A new s3fs instance per store: fsspec's instance cache would carry connections (and their
    # event loop) from one run to the next.
    opts = {"endpoint_url": ep, "key": KEY, "secret": SECRET, "client_kwargs": {"region_name": "us-east-1"}, "skip_instance_cache": True}

    def store(path, read_only):
        return FsspecStore.from_url(f"s3://{BUCKET}/{path}", storage_options=opts, read_only=read_only)

    def open200():
        async def go():
            base = store("peers/meta", True)
            return await asyncio.gather(*(zarr.api.asynchronous.open_array(store=base, path=f"v{i:03d}", mode="r", zarr_format=2)
                                          for i in range(200)))
        got = sync(go())  # on zarr's own event loop, where its sync API runs too
        assert len(got) == 200

    def read():
        data = zarr.open_array(store=store("peers/big64/v", True), mode="r", zarr_format=2)[:]
        assert data.shape == (64 << 18,)

    def write(run, big):
        arr = zarr.create_array(store=store(f"peers/w256-zp-{run}", False), shape=big.shape, chunks=(1 << 18,), dtype="<f4",
                                compressors=None, zarr_format=2, overwrite=True)
        arr[:] = big

    return open200, read, write


def bare_client(ep, scratch):
    """curl on presigned URLs: `read()` GETs the 64 chunks of peers/big64/v, `write(run)` PUTs 256
    chunks of 1 MiB under peers/w256-bare-<run>. Returns (read, write), each giving seconds."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=ep, aws_access_key_id=KEY, aws_secret_access_key=SECRET, region_name="us-east-1")
    body = os.path.join(scratch, "chunk.bin")
    with open(body, "wb") as f:
        f.write(os.urandom(1 << 20))

    def config(name, lines):
        path = os.path.join(scratch, name)
        with open(path, "w") as f:
            # No "Expect: 100-continue" round trip before each upload: the other sides make none.
            f.write('header = "Expect:"\n' + "".join(lines))
        return path

    def presigned(method, key):
        return s3.generate_presigned_url(method, Params={"Bucket": BUCKET, "Key": key}, ExpiresIn=24 * 3600)

    reads = config("read.curl", [f'url = "{presigned("get_object", f"peers/big64/v/{i}")}"\noutput = "/dev/null"\n' for i in range(64)])

    def curl(cfg):
        t0 = time.perf_counter()
        subprocess.run(["curl", "-sSfZ", "--no-progress-meter", "--parallel-max", "64", "-K", cfg], check=True)
        return time.perf_counter() - t0

    def write(run):
        # Signed before the clock starts: the floor does no work of its own.
        cfg = config(f"write-{run}.curl", [f'url = "{presigned("put_object", f"peers/w256-bare-{run}/v/{i}")}"\n'
                                           f'upload-file = "{body}"\noutput = "/dev/null"\n' for i in range(256)])
        return curl(cfg)

    return lambda: curl(reads), write


def main():
    # TensorStore's AWS code looks for ~/.aws files and logs each miss; zarr-python's s3fs leaves
    # sessions to the garbage collector, which logs each one. Neither says anything about speed.
    quiet = tempfile.NamedTemporaryFile(prefix="aws-", delete=False)
    os.environ.setdefault("AWS_CONFIG_FILE", quiet.name)
    os.environ.setdefault("AWS_SHARED_CREDENTIALS_FILE", quiet.name)
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    import tensorstore as ts

    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1")
    os.environ.update(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1")
    subprocess.run(["cc", "-O2", "-I", os.path.join(TOP, "include"), "-o", f"{BUILD}/s3_peers", os.path.join(TOP, "bench", "s3_peers.c"),
                    f"-L{BUILD}", "-lnetcdf", f"-Wl,-rpath,{BUILD}"], check=True)
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    scratch = tempfile.mkdtemp(dir=os.environ.get("BENCH_DIR", shm))
    server, sport, name, root = start_server(scratch)
    pport = free_port()
    proxy = subprocess.Popen([sys.executable, os.path.join(TOP, "ctests", "s3", "s3proxy.py"), str(pport), f"http://127.0.0.1:{sport}"])
    mine_proc = subprocess.Popen([f"{BUILD}/s3_peers", "serve"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        wait_up(f"http://127.0.0.1:{pport}/__proxy")
        ep = f"http://127.0.0.1:{pport}"

        def ours(path, *args):
            before = proxy_requests(pport)
            mine_proc.stdin.write(" ".join([f"{ep}/{BUCKET}/{path}#mode=nczarr,s3", *args]) + "\n")
            mine_proc.stdin.flush()
            line = mine_proc.stdout.readline()
            if not line:
                raise SystemExit(f"s3_peers serve stopped (exit {mine_proc.wait()})")
            return float(line.split()[1]), proxy_requests(pport) - before

        def kv(path):
            return {"driver": "s3", "bucket": BUCKET, "path": path.rstrip("/") + "/", "endpoint": ep, "aws_region": "us-east-1"}

        # A fresh context per run: TensorStore's cache must not carry data between runs.
        def ts_open200():
            before = proxy_requests(pport)
            t0 = time.perf_counter()
            ctx = ts.Context()
            futs = [ts.open({"driver": "zarr", "kvstore": kv(f"peers/meta/v{i:03d}")}, context=ctx, read=True) for i in range(200)]
            for f in futs:
                f.result()
            return time.perf_counter() - t0, proxy_requests(pport) - before

        def ts_read():
            before = proxy_requests(pport)
            t0 = time.perf_counter()
            arr = ts.open({"driver": "zarr", "kvstore": kv("peers/big64/v")}, context=ts.Context(), read=True).result()
            data = arr.read().result()
            t = time.perf_counter() - t0
            assert data.shape == (64 << 18,)
            return t, proxy_requests(pport) - before

        big = (np.arange(256 << 18) % 1000).astype("f4") * 0.5

        def ts_write(run):
            before = proxy_requests(pport)
            t0 = time.perf_counter()
            arr = ts.open({"driver": "zarr", "kvstore": kv(f"peers/w256-ts-{run}"),
                           "metadata": {"compressor": None, "dtype": "<f4", "shape": [256 << 18], "chunks": [1 << 18]}},
                          context=ts.Context(), create=True, delete_existing=True).result()
            arr.write(big).result()
            return time.perf_counter() - t0, proxy_requests(pport) - before

        zp_open200, zp_read, zp_write = zarr_python(ep)
        bare_read, bare_write = bare_client(ep, scratch)

        def timed(fn, *args):
            before = proxy_requests(pport)
            t0 = time.perf_counter()
            fn(*args)
            return time.perf_counter() - t0, proxy_requests(pport) - before

        # The data every side reads, written once by us.
        ours("peers/meta", "meta-write")
        ours("peers/big64", "big-write", "64")
        rows = []
        for lat in LATENCIES:
            proxy_ctl(pport, latency_ms=lat)
            # Each write goes to a new prefix, so no side pays for deleting an earlier run's objects.
            for phase, mine, theirs, zp, bare in (
                ("open 200 vars", lambda r: ours("peers/meta", "meta-open"), lambda r: ts_open200(), lambda r: timed(zp_open200), None),
                ("read 64 MiB", lambda r: ours("peers/big64", "big-read"), lambda r: ts_read(), lambda r: timed(zp_read),
                 lambda r: bare_read()),
                ("write 256 MiB", lambda r: ours(f"peers/w256-ours-{lat}-{r}", "big-write", "256"), lambda r: ts_write(f"{lat}-{r}"),
                 lambda r: timed(zp_write, f"{lat}-{r}", big), lambda r: bare_write(f"{lat}-{r}")),
            ):
                o, t, z, b = [], [], [], []
                for r in range(RUNS):
                    o.append(mine(r))
                    t.append(theirs(r))
                    z.append(zp(r))
                    if bare:
                        b.append(bare(r))
                    for side in ("ours", "ts", "zp", "bare"):
                        drop_written(root, f"peers/w256-{side}-{lat}-{r}")
                mo, mt, mz = (statistics.median(x[0] for x in side) for side in (o, t, z))
                rows.append((lat, phase, mo, mt, mz, o[0][1], t[0][1], z[0][1], statistics.median(b) if b else None))
        print(f"\nS3 vs TensorStore and zarr-python 3 ({name} behind the latency proxy; medians of {RUNS}; requests per run):")
        print(f"{'ms':>3} {'phase':14} {'ours s':>8} {'TS s':>8} {'ours/TS':>8} {'target':>7} {'zarr s':>8} {'ours/zarr':>9}"
              f" {'req ours':>9} {'req TS':>7} {'req zarr':>8} {'bare s':>7} {'bare/TS':>7}")
        for lat, phase, mo, mt, mz, ro, rt, rz, mb in rows:
            ok = mo / mt <= 0.8
            bare = f" {mb:7.3f} {mb / mt:7.3f}" if mb is not None else f" {'-':>7} {'-':>7}"
            print(f"{lat:3d} {phase:14} {mo:8.3f} {mt:8.3f} {mo / mt:8.3f} {'<=' if ok else '>'}{0.8:6.2f} {mz:8.3f} {mo / mz:9.3f}"
                  f" {ro:9d} {rt:7d} {rz:8d}{bare}")
        print("bare: curl making only the chunk requests (64 at once, presigned URLs): what this server and proxy allow any client")
    finally:
        mine_proc.stdin.close()
        mine_proc.wait()
        proxy.terminate()
        server.terminate()
        shutil.rmtree(scratch, ignore_errors=True)
        os.unlink(quiet.name)


if __name__ == "__main__":
    main()

"""Icechunk row of `make bench`: the same 256 MiB (float v(256, 512, 512) in 1 MiB chunks, no
codec) written in one commit and read back, locally (tmpfs) and on S3 (moto on loopback), by
  ours, Icechunk   bench/ice_bench.c into file://…/r#mode=nczarr,icechunk (an nc_close = a commit)
  ours, plain v3   the same program into a plain Zarr v3 store (#mode=nczarr,v3)
  icechunk-python  zarr-python 3 on an icechunk-python 1.1 session, the same array, one commit
Medians of BENCH_RUNS (3); targets: ours on Icechunk within 1.2x of ours on plain v3, and
faster than icechunk-python."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
build = os.path.join(TOP, "build")
SCRATCH = os.environ.get("BENCH_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
NT, NY, NX = 256, 512, 512


def ours(url, phase, env=None):
    out = subprocess.run([f"{build}/ice_bench", url, phase], capture_output=True, text=True, check=True, env=env)
    return float(out.stdout.split()[1])


def python_peer(storage, phase):
    """icechunk-python + zarr-python: one commit of the whole array, or every plane read."""
    import icechunk
    import numpy as np
    import zarr

    icechunk.set_logs_filter("error")
    t0 = time.perf_counter()
    if phase == "write":
        repo = icechunk.Repository.create(storage)
        session = repo.writable_session("main")
        arr = zarr.create_array(session.store, name="v", shape=(NT, NY, NX), chunks=(1, NY, NX), dtype="<f4", compressors=None, fill_value=0)
        i = np.arange(NY * NX)
        base = (280.0 + (i % NX) * 0.01 + (i // NX) * 0.02).reshape(NY, NX)
        for t in range(NT):
            arr[t] = (base + t * 0.5).astype("f4")
        session.commit("bench")
    else:
        repo = icechunk.Repository.open(storage)
        arr = zarr.open_array(repo.readonly_session(branch="main").store, path="v", mode="r")
        total = 0.0
        for t in range(NT):
            total += float(arr[t][0, 0])
    return time.perf_counter() - t0


def table(title, cases):
    """cases: name -> (write(), read()) callables, each run in a fresh place."""
    times = {name: {"write": [], "read": []} for name in cases}
    for _ in range(RUNS):
        for name, (write, read) in cases.items():
            with tempfile.TemporaryDirectory(dir=SCRATCH) as d:
                key = f"r{time.time_ns()}"
                times[name]["write"].append(write(d, key))
                times[name]["read"].append(read(d, key))
    print(f"\n{title} (medians of {RUNS}, seconds):")
    print(f"{'phase':6} {'ours ice':>9} {'ours v3':>9} {'ice-py':>9} {'ice/v3':>7} {'target':>7} {'ice/ice-py':>11} {'target':>7}")
    for phase in ("write", "read"):
        m = {name: statistics.median(times[name][phase]) for name in cases}
        a, b, c = m["ours ice"], m["ours v3"], m["ice-py"]
        print(f"{phase:6} {a:9.3f} {b:9.3f} {c:9.3f} {a / b:7.2f} {'<=1.20' if a / b <= 1.2 else ' >1.20'} {a / c:11.2f} {'<1' if a / c < 1 else '>=1':>7}")


subprocess.run(["cc", "-O2", "-I", os.path.join(TOP, "include"), "-o", f"{build}/ice_bench", os.path.join(TOP, "bench", "ice_bench.c"),
                f"-L{build}", "-lnetcdf", f"-Wl,-rpath,{build}"], check=True)


def local_storage(d, key):
    import icechunk

    return icechunk.local_filesystem_storage(f"{d}/{key}.py")


table(
    "Icechunk, local (tmpfs): float v(256,512,512), 1 MiB chunks, one commit",
    {
        "ours ice": (lambda d, k: ours(f"file://{d}/{k}#mode=nczarr,icechunk", "write"), lambda d, k: ours(f"file://{d}/{k}#mode=nczarr,icechunk", "read")),
        "ours v3": (lambda d, k: ours(f"file://{d}/{k}.zarr#mode=nczarr,v3,file", "write"), lambda d, k: ours(f"file://{d}/{k}.zarr#mode=nczarr,v3,file", "read")),
        "ice-py": (lambda d, k: python_peer(local_storage(d, k), "write"), lambda d, k: python_peer(local_storage(d, k), "read")),
    },
)

# ---- the same on S3: moto on loopback, no added latency.
import socket
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


port = free_port()
server = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            break
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.05)
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/bench", method="PUT"))
    env = dict(os.environ, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1")
    os.environ.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test")
    base = f"http://127.0.0.1:{port}/bench"

    def s3_storage(d, key):
        import icechunk

        return icechunk.s3_storage(bucket="bench", prefix=f"{key}.py", endpoint_url=base.rsplit("/", 1)[0], allow_http=True,
                                   force_path_style=True, region="us-east-1", access_key_id="test", secret_access_key="test")

    table(
        f"Icechunk on S3 (moto on loopback, no added latency): the same",
        {
            "ours ice": (lambda d, k: ours(f"{base}/{k}#mode=nczarr,icechunk,s3", "write", env), lambda d, k: ours(f"{base}/{k}#mode=nczarr,icechunk,s3", "read", env)),
            "ours v3": (lambda d, k: ours(f"{base}/{k}.zarr#mode=nczarr,v3,s3", "write", env), lambda d, k: ours(f"{base}/{k}.zarr#mode=nczarr,v3,s3", "read", env)),
            "ice-py": (lambda d, k: python_peer(s3_storage(d, k), "write"), lambda d, k: python_peer(s3_storage(d, k), "read")),
        },
    )
finally:
    server.terminate()

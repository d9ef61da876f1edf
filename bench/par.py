"""Parallel row of `make bench`: 1, 2 and 4 MPI ranks writing and reading 256 MiB (one float
variable, 256 KiB chunks (64 x 1024)) with chunk-aligned and chunk-splitting decompositions (bench/par.c),
on our directory store and on S3 (s3s-fs when installed, else moto), against Debian's parallel
netcdf-c writing netCDF-4/HDF5 on local disk with the same decomposition, collective and
independent. One program: built against Debian's library, with our preload library in front
for the Zarr runs. Medians of BENCH_RUNS (3) runs, alternating sides; seconds and ratios."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_peers  # noqa: E402 - the S3 server starter

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, "build")
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
MIB = os.environ.get("BENCH_PAR_MIB", "256")
DEB_INC = "/usr/lib/x86_64-linux-gnu/netcdf/mpi/include"
PRELOAD = os.path.join(BUILD, "libnczarr_mpi_preload.so")


def main():
    if not shutil.which("mpicc") or not os.path.exists(PRELOAD):
        raise SystemExit("parallel bench needs mpicc and build/libnczarr_mpi_preload.so (make)")
    exe = os.path.join(BUILD, "bench_par")
    subprocess.run(["mpicc", "-O2", "-I", DEB_INC, "-o", exe, os.path.join(TOP, "bench", "par.c"), "-lnetcdf_mpi"], check=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               AWS_ACCESS_KEY_ID=s3_peers.KEY, AWS_SECRET_ACCESS_KEY=s3_peers.SECRET, AWS_REGION="us-east-1")
    # tmpfs by default: each run creates and deletes hundreds of chunk files, and on ext4 the
    # inode allocator then scans past recently deleted inodes, a cost that grows run by run
    # (measured: the same np=1 write 0.58 s early in a run of the bench, 1.56 s later) and that
    # HDF5's one file never pays. BENCH_DIR=<dir> measures a disk instead.
    where = os.environ.get("BENCH_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    scratch = tempfile.mkdtemp(dir=where)
    server, port, server_name, _ = s3_peers.start_server(scratch)
    counter = [0]

    def once(np_, target, decomp, access, ours):
        counter[0] += 1
        if target == "hdf5":
            path = os.path.join(scratch, f"h{counter[0]}.nc")
        elif target == "dir":
            path = f"file://{scratch}/z{counter[0]}#mode=nczarr,file"
        else:
            path = f"http://127.0.0.1:{port}/{s3_peers.BUCKET}/par{counter[0]}#mode=nczarr,s3"
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_)]
        if ours:
            cmd += ["-x", f"LD_PRELOAD={PRELOAD}"]
        out = subprocess.run(cmd + [exe, path, decomp, access, MIB], env=env, capture_output=True, text=True)
        words = out.stdout.split()
        if out.returncode or "ok" not in words:
            raise SystemExit(f"{cmd} {path}: {out.stdout}{out.stderr}")
        if target == "hdf5":
            os.remove(path)
        elif target == "dir":
            shutil.rmtree(path[len("file://"):].split("#")[0])
        return float(words[1]), float(words[3])

    def medians(np_, decomp, configs):
        # Interleaved (each run goes through every side once) so drift in the machine's disk
        # writeback hits all sides alike.
        runs = [[once(np_, target, decomp, access, ours) for target, access, ours in configs] for _ in range(RUNS)]
        return [(statistics.median(r[i][0] for r in runs), statistics.median(r[i][1] for r in runs)) for i in range(len(configs))]

    try:
        print(f"\nparallel I/O: {MIB} MiB float, 256 KiB chunks (64 x 1024); seconds (medians of {RUNS}) in {scratch}; ours on dir and S3 ({server_name}),")
        print("netcdf-c = Debian's parallel netcdf-c 4.9.0 writing netCDF-4/HDF5 in the same place; dir/hdf5 against its better access mode")
        print(f"{'decomp':8} {'np':>2} {'hdf5 coll w/r':>15} {'hdf5 ind w/r':>15} {'dir coll w/r':>15} {'dir ind w/r':>15} {'s3 coll w/r':>15}"
              f" {'dir/hdf5 w':>10} {'dir/hdf5 r':>10}")
        for decomp in ("aligned", "split"):
            for np_ in (1, 2, 4):
                hc, hi, dc, di, sc = medians(
                    np_, decomp, [("hdf5", "coll", False), ("hdf5", "indep", False), ("dir", "coll", True), ("dir", "indep", True), ("s3", "coll", True)]
                )
                best_w, best_r = min(hc[0], hi[0]), min(hc[1], hi[1])
                ours_w, ours_r = min(dc[0], di[0]), min(dc[1], di[1])
                fmt = lambda p: f"{p[0]:.3f}/{p[1]:.3f}"  # noqa: E731
                print(f"{decomp:8} {np_:>2} {fmt(hc):>15} {fmt(hi):>15} {fmt(dc):>15} {fmt(di):>15} {fmt(sc):>15}"
                      f" {ours_w / best_w:>10.2f} {ours_r / best_r:>10.2f}")
    finally:
        server.terminate()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

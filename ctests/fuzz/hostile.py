#!/usr/bin/env python3
"""Hostile-store fuzzer: structure-aware mutations of every kind of stored object, each case
read by a C client through the whole API under a time and memory bound.

    hostile.py [--count N] [--seed S] [--keep DIR]

Seed datasets are written by our library (seedstore.c): Zarr v2 NCZarr on a directory and in
a zip archive, pure Zarr v2 with consolidated metadata, NCZarr on Zarr v3, and v3 with a
sharded variable. Each case copies one seed and applies 1-3 mutations chosen by object kind:

* JSON metadata (.zarray, .zattrs, .zgroup, .zmetadata, zarr.json): a member deleted or
  replaced by a hostile value (huge, negative, wrong type, deep nesting, NaN, 2^64, long
  strings), shapes and chunks made zero, huge or inconsistent, dtypes and codecs made
  unknown, or the bytes flipped, cut or made invalid UTF-8;
* chunks: truncated, extended, bits flipped, emptied, or enlarged sparsely to GiBs or a TiB;
* shard indexes: entries pointing outside the shard, overlapping, huge, or bad checksums;
* zip archives: bytes flipped in local headers and the central directory, truncated,
  an entry named "../x" or duplicated;
* file types: an object replaced by a FIFO, a directory, a symlink out of the store or a
  dangling one.

The reader (reader.c) walks every group, dimension, variable, attribute and value. A case
ends as "data" (everything read), "error" (a clean NC_* error somewhere), "crash" (a signal,
or an exit that is not the reader's own) or "hang" (over the time bound). Crashes and hangs
fail the run and their stores are kept for reproduction.
"""
import argparse
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import warnings
import zipfile
import zlib

warnings.simplefilter("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(TOP, "build")
TIME_LIMIT = 20  # seconds per case
MEMORY_LIMIT = 3 << 30  # bytes of address space per case (RLIMIT_AS)

SEEDS = [
    ("v2dir", "nczarr,file", ""),
    ("v2zip", "nczarr,zip", ""),
    ("pure", "zarr,file,consolidated", ""),
    ("v3dir", "nczarr,file,v3", ""),
    ("v3shard", "nczarr,file,v3", "shards"),
    ("v3zip", "nczarr,zip,v3", "shards"),
]

HOSTILE_VALUES = [None, -1, 0, 2**64, -(2**63) - 1, 1e308, "x" * 5000, [], {}, [[[[[[[[[[[]]]]]]]]]]],
                  "NaN", True, 1.5, [1] * 300, {"a": 1}, "", "\u0000", [-5, 3], [2**40, 2**40], "<f99",
                  "|O", {"id": "nosuchcodec"}, [{"name": "nosuch", "configuration": {}}]]


def build(cmd_name, extra=()):
    out = os.path.join(BUILD, cmd_name)
    subprocess.run(["cc", "-std=c11", "-O1", "-I" + os.path.join(TOP, "include"), "-o", out, os.path.join(HERE, cmd_name + ".c"),
                    "-L" + BUILD, "-lnetcdf", "-Wl,-rpath," + BUILD, *extra], check=True)
    return out


def objects(root):
    """Every file of a store tree (relative paths)."""
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def mutate_json_value(rng, doc):
    """Replace or delete a random member somewhere in a JSON document."""
    paths = []

    def walk(v, path):
        if isinstance(v, dict):
            for k, c in v.items():
                paths.append(path + [k])
                walk(c, path + [k])
        elif isinstance(v, list):
            for i, c in enumerate(v[:20]):
                paths.append(path + [i])
                walk(c, path + [i])

    walk(doc, [])
    if not paths:
        return rng.choice(HOSTILE_VALUES)
    path = rng.choice(paths)
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    key = path[-1]
    if isinstance(parent, dict) and rng.random() < 0.3:
        del parent[key]
    else:
        special = {"shape": [[0], [2**62], [-1], [1, 1, 1, 1, 1, 1, 1], [2**31] * 3],
                   "chunks": [[0], [2**40], [-3], [1] * 9, [2**20, 2**20, 2**20]],
                   "chunk_shape": [[0], [2**40], [-3]],
                   "dtype": ["<f16", "|S0", "<U99999999", ">i9", "|V8", "S"],
                   "data_type": ["float128", "r0", "r7", {"name": "x"}, "string"],
                   "fill_value": ["Infinity", "0xZZ", 2**70, "AAAA", [1, 2], {"x": 1}],
                   "size": [-1, 2**63, "5"], "dimensions": [{"x": -1}, {"": 3}, [1]]}
        choices = special.get(key, []) + HOSTILE_VALUES
        parent[key] = rng.choice(choices)
    return doc


def mutate_bytes(rng, data):
    kind = rng.randrange(5)
    b = bytearray(data)
    if kind == 0 and b:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == 1:
        b = b[: rng.randrange(len(b) + 1)]
    elif kind == 2:
        b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    elif kind == 3 and b:
        b[rng.randrange(len(b))] = rng.choice([0x80, 0xff, 0xc3, 0x00])
    else:
        b = bytes()
    return bytes(b)


def mutate_file(rng, root, rel, allow_special=True):
    path = os.path.join(root, rel)
    name = os.path.basename(rel)
    r = rng.random()
    if allow_special and r < 0.08:
        os.remove(path)
        choice = rng.randrange(4)
        if choice == 0:
            os.mkfifo(path)
        elif choice == 1:
            os.mkdir(path)
        elif choice == 2:
            os.symlink("/etc/hostname", path)
        else:
            os.symlink(os.path.join(root, "nowhere"), path)
        return "type:%s" % ["fifo", "dir", "symlink-out", "dangling"][choice]
    if allow_special and r < 0.14 and not name.startswith(".") and name != "zarr.json":
        with open(path, "r+b") as f:
            f.truncate(rng.choice([2 << 30, 1 << 40, (1 << 31) + 5]))
        return "sparse"
    with open(path, "rb") as f:
        data = f.read()
    if name.startswith(".z") or name == "zarr.json":
        if rng.random() < 0.7:
            try:
                doc = json.loads(data)
                doc = mutate_json_value(rng, doc)
                text = json.dumps(doc)
                if rng.random() < 0.1:
                    text = text.replace("\"", "", 1)
                data = text.encode()
                with open(path, "wb") as f:
                    f.write(data)
                return "json"
            except ValueError:
                pass
    if "/c/" in "/" + rel and rng.random() < 0.4 and len(data) >= 16:
        # Shard or v3 chunk: the index is at the end; point entries anywhere.
        b = bytearray(data)
        at = len(b) - 4 - 16 * rng.randint(1, max(1, (len(b) - 4) // 16 // 4))
        if at >= 0:
            value = rng.choice([0xffffffffffffffff, 0, len(b), len(b) * 2, 2**62, rng.randrange(len(b))])
            b[at:at + 8] = value.to_bytes(8, "little")
            if rng.random() < 0.5:
                b[at + 8:at + 16] = rng.choice([0xffffffffffffffff, 2**40, 1, 7]).to_bytes(8, "little")
            with open(path, "wb") as f:
                f.write(bytes(b))
            return "shard-index"
    with open(path, "wb") as f:
        f.write(mutate_bytes(rng, data))
    return "bytes"


def mutate_zip(rng, path):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    r = rng.random()
    if r < 0.35:
        # Bytes of the central directory (its signature is PK\1\2) or a local header.
        sig = rng.choice([b"PK\x01\x02", b"PK\x03\x04", b"PK\x05\x06"])
        spots = [i for i in range(len(data)) if data[i:i + 4] == sig]
        if spots:
            at = rng.choice(spots) + rng.randrange(4, 46)
            for k in range(rng.randint(1, 4)):
                if at + k < len(data):
                    data[at + k] = rng.randrange(256)
        kind = "zip-header"
    elif r < 0.5:
        data = data[: rng.randrange(len(data))]
        kind = "zip-truncate"
    elif r < 0.7:
        # Rewrite with an entry renamed to escape, or duplicated with other bytes.
        tmp = path + ".new"
        try:
            with zipfile.ZipFile(path) as zin, zipfile.ZipFile(tmp, "w") as zout:
                infos = zin.infolist()
                victim = rng.choice(infos)
                for info in infos:
                    body = zin.read(info)
                    if info is victim and rng.random() < 0.5:
                        zout.writestr(rng.choice(["../x", "/abs", victim.filename + "/../../y", "a\\b"]), body)
                    else:
                        zout.writestr(info, body)
                    if info is victim:
                        zout.writestr(info.filename, mutate_bytes(rng, body))  # a duplicate name
            os.replace(tmp, path)
            return "zip-entries"
        # (an earlier mutation of this case may have corrupted a compressed member: zlib.error)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, zlib.error):
            data = data[: max(1, len(data) // 2)]
            kind = "zip-truncate"
    else:
        # A member's contents (stored uncompressed): mutate inside the archive bytes.
        for _ in range(rng.randint(1, 16)):
            at = rng.randrange(len(data))
            data[at] ^= 1 << rng.randrange(8)
        kind = "zip-bytes"
    with open(path, "wb") as f:
        f.write(bytes(data))
    return kind


def limit():
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=os.path.join(BUILD, "hostile"))
    args = ap.parse_args()
    seedstore = build("seedstore")
    reader = build("reader")
    counts = {"data": 0, "error": 0, "crash": 0, "hang": 0}
    kinds = {}
    os.makedirs(args.keep, exist_ok=True)
    env = dict(os.environ, LD_LIBRARY_PATH=BUILD)
    env.pop("LD_PRELOAD", None)
    with tempfile.TemporaryDirectory() as tmp:
        seeds = {}
        for name, mode, extra in SEEDS:
            ext = "zip" if "zip" in mode else "zarr"
            path = os.path.join(tmp, "seed-%s.%s" % (name, ext))
            subprocess.run([seedstore, "file://%s#mode=%s" % (path, mode)] + ([extra] if extra else []), check=True, env=env)
            seeds[name] = (path, mode, ext)
        for k in range(args.count):
            seed = args.seed + k
            rng = random.Random(seed)
            name = list(seeds)[k % len(seeds)]
            src, mode, ext = seeds[name]
            case = os.path.join(tmp, "case.%s" % ext)
            shutil.rmtree(case, ignore_errors=True)
            if os.path.lexists(case) and not os.path.isdir(case):
                os.remove(case)
            applied = []
            if ext == "zip":
                shutil.copy(src, case)
                for _ in range(rng.randint(1, 2)):
                    applied.append(mutate_zip(rng, case))
            else:
                shutil.copytree(src, case, symlinks=True)
                for _ in range(rng.randint(1, 3)):
                    files = [f for f in objects(case) if os.path.isfile(os.path.join(case, f)) and not os.path.islink(os.path.join(case, f))
                             and os.path.getsize(os.path.join(case, f)) < (64 << 20)]
                    if not files:
                        break
                    applied.append(mutate_file(rng, case, rng.choice(files)))
            for a in applied:
                kinds[a] = kinds.get(a, 0) + 1
            url = "file://%s#mode=%s" % (case, mode)
            try:
                p = subprocess.run([reader, url], capture_output=True, text=True, timeout=TIME_LIMIT, env=env, preexec_fn=limit)
                if p.returncode != 0 or not p.stdout.strip():
                    outcome = "crash"
                    detail = "exit %d: %s" % (p.returncode, p.stderr.strip()[-500:])
                else:
                    outcome = "data" if p.stdout.startswith("data") else "error"
                    detail = p.stdout.strip()
            except subprocess.TimeoutExpired:
                outcome, detail = "hang", "over %d s" % TIME_LIMIT
            counts[outcome] += 1
            if outcome in ("crash", "hang"):
                kept = os.path.join(args.keep, "case%d-%s" % (seed, name))
                shutil.rmtree(kept, ignore_errors=True)
                if ext == "zip":
                    os.makedirs(kept, exist_ok=True)
                    shutil.copy(case, kept)
                else:
                    # FIFOs and sparse giants are recreated from the recorded mutations, not copied.
                    shutil.copytree(case, kept, symlinks=True, ignore=lambda d, fs: [f for f in fs if not (os.path.isdir(os.path.join(d, f)) or stat.S_ISREG(os.lstat(os.path.join(d, f)).st_mode) and os.lstat(os.path.join(d, f)).st_size < (64 << 20))])
                print("hostile: case %d (%s, %s): %s: %s; kept in %s" % (seed, name, "+".join(applied), outcome, detail, kept))
    print("hostile: %d stores (seeds %d..%d; %s): clean errors %d, data %d, crashes %d, hangs %d" % (
        args.count, args.seed, args.seed + args.count - 1, "/".join(s[0] for s in SEEDS), counts["error"], counts["data"], counts["crash"], counts["hang"]))
    print("  mutations: " + ", ".join("%s %d" % kv for kv in sorted(kinds.items())))
    if counts["crash"] or counts["hang"]:
        sys.exit(1)


if __name__ == "__main__":
    main()

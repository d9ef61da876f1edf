"""Bad and hostile Zarr v3 stores (zarr-v3.md §13, reliability.md): one defect at a time in a
valid sharded store made by zarr-python; each must end in the promised NC_* code from the
open (build/ncprobe walks all metadata) or from a data read (build/v3_hyperslab), never a
crash, a hang or a wrong answer."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import zarr

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pycheck import check, finish  # noqa: E402

warnings.simplefilter("ignore")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE, SLAB = os.path.join(TOP, "build", "ncprobe"), os.path.join(TOP, "build", "v3_hyperslab")
ENCZARR, EFILTER, ENOFILTER, ENOTNC = -137, -132, -136, -51
tmp = tempfile.mkdtemp()
base = f"{tmp}/base.zarr"
a = zarr.create_array(base, shape=(8, 12), chunks=(2, 3), shards=(4, 12), dtype="u2", dimension_names=["y", "x"], zarr_format=3,
                      compressors=None)
a[...] = np.arange(96).reshape(8, 12)


def rc_of(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "hang"
    text = out.stdout + out.stderr
    if out.returncode not in (0, 1):
        return f"exit {out.returncode}: {text[-200:]}"
    for tok in text.split():
        if tok.startswith("rc="):
            return int(tok[3:])
    return 0 if out.returncode == 0 else f"no code: {text[-200:]}"


def case(name, mutate, want_open=0, want_read=0):
    d = f"{tmp}/{name.replace(' ', '_')}.zarr"
    shutil.copytree(base, d)
    mutate(d)
    url = f"file://{d}#mode=zarr,file"
    got = rc_of([PROBE, url])
    check(got == want_open, f"{name}: open {got}, expected {want_open}")
    if want_open == 0:
        got = rc_of([SLAB, url, "0", "0", "2", "6"])
        check(got == want_read, f"{name}: read {got}, expected {want_read}")


def meta(fn):
    def go(d):
        p = f"{d}/zarr.json"
        doc = json.load(open(p))
        fn(doc)
        json.dump(doc, open(p, "w"))
    return go


def shard_bytes(fn):
    def go(d):
        p = f"{d}/c/0/0"
        b = bytearray(open(p, "rb").read())
        b = fn(b)
        open(p, "wb").write(bytes(b))
    return go


def with_index(b, entries):
    """Rewrites the shard index (8 slots, little-endian, CRC-32C) of shard bytes `b`."""
    body = np.frombuffer(bytes(b[-132:-4]), dtype="<u8").copy()
    for slot, (off, n) in entries.items():
        body[2 * slot], body[2 * slot + 1] = off, n
    raw = body.tobytes()
    from numcodecs import CRC32C
    crc = bytes(CRC32C().encode(raw))[-4:]
    return b[:-132] + raw + crc


case("valid", lambda d: None)
case("zarr_format 4", meta(lambda m: m.update(zarr_format=4)), ENCZARR)
case("node_type bogus", meta(lambda m: m.update(node_type="table")), ENCZARR)
case("shape negative", meta(lambda m: m.update(shape=[-8, 12])), ENCZARR)
case("chunk_shape rank", meta(lambda m: m["chunk_grid"]["configuration"].update(chunk_shape=[4])), ENCZARR)
case("chunk_shape zero", meta(lambda m: m["chunk_grid"]["configuration"].update(chunk_shape=[0, 12])), ENCZARR)
case("huge chunks", meta(lambda m: m["codecs"][0]["configuration"].update(chunk_shape=[2**40, 2**40])), ENCZARR)
case("fill_value missing", meta(lambda m: m.pop("fill_value")), ENCZARR)
case("codecs not a list", meta(lambda m: m.update(codecs={"name": "bytes"})), ENCZARR)
case("gzip before bytes", meta(lambda m: m.update(codecs=[{"name": "gzip", "configuration": {"level": 1}}, {"name": "bytes"}])), ENCZARR)
case("no array-to-bytes codec", meta(lambda m: m.update(codecs=[{"name": "gzip"}])), ENCZARR)
case("inner chunk does not divide the shard",
     meta(lambda m: m["codecs"][0]["configuration"].update(chunk_shape=[3, 3])), ENCZARR)
case("2^62 inner chunks per shard",
     meta(lambda m: (m.update(shape=[2**31, 2**31]), m["chunk_grid"]["configuration"].update(chunk_shape=[2**31, 2**31]),
                     m["codecs"][0]["configuration"].update(chunk_shape=[1, 1]))), ENCZARR)
case("variable-length index codec",
     meta(lambda m: m["codecs"][0]["configuration"].update(index_codecs=[{"name": "bytes"}, {"name": "gzip"}])), ENCZARR)
case("bad chunk key encoding", meta(lambda m: m.update(chunk_key_encoding={"name": "weird"})), ENCZARR)
case("deep attribute nesting", lambda d: open(f"{d}/zarr.json", "w").write('{"zarr_format": 3, "node_type": "array", "attributes": ' + "[" * 100000), ENCZARR)
case("unknown codec: opens, data NC_ENOFILTER",
     meta(lambda m: m["codecs"][0]["configuration"]["codecs"].append({"name": "evilcodec"})), 0, ENOFILTER)
case("shard index CRC mismatch", shard_bytes(lambda b: b[:-5] + bytes([b[-5] ^ 1]) + b[-4:]), 0, EFILTER)
case("shard truncated below its index", shard_bytes(lambda b: b[:50]), 0, ENCZARR)
case("index entry past the end", shard_bytes(lambda b: with_index(b, {0: (10**6, 12)})), 0, ENCZARR)
case("index entry overlapping the index", shard_bytes(lambda b: with_index(b, {0: (len(b) - 140, 12)})), 0, ENCZARR)
case("inner chunk of the wrong size", shard_bytes(lambda b: with_index(b, {0: (0, 10)})), 0, ENCZARR)
case("huge index entry", shard_bytes(lambda b: with_index(b, {1: (2**63, 2**63)})), 0, ENCZARR)
case("empty inner chunk reads as fill", shard_bytes(lambda b: with_index(b, {0: (2**64 - 1, 2**64 - 1)})), 0, 0)
case("absent shard reads as fill", lambda d: os.remove(f"{d}/c/0/0"), 0, 0)
check(rc_of([PROBE, f"file://{tmp}/nothing.zarr#mode=zarr,file"]) != 0, "missing store refused")
os.makedirs(f"{tmp}/junk.zarr/a/b")
check(rc_of([PROBE, f"file://{tmp}/junk.zarr#mode=zarr,file"]) == ENOTNC, "directory tree without any zarr.json: NC_ENOTNC")
sys.exit(finish("bad v3 inputs"))

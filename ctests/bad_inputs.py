"""Bad and hostile stores (doc/spec/reliability.md §1, §4.1, §4.3): each is made by
mutating a valid store one defect at a time, then opened and walked by build/ncprobe.
Every case must end in the promised NC_* code: never a crash, a hang or a partial open."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = os.path.join(TOP, "build", "ncprobe")
ENCZARR, EBADNAME, EACCESS, ENOTNC, ENOOBJECT, EMAXNAME, EFILTER = -137, -59, -77, -51, -141, -53, -132

passed = failed = 0


def probe(url, *extra):
    out = subprocess.run([PROBE, url, *extra], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        return f"exit {out.returncode}: {out.stderr.strip()[-200:]}"
    return int(out.stdout.strip().split("=")[1])


def expect(name, url, want):
    global passed, failed
    got = probe(url)
    if got == want:
        passed += 1
    else:
        failed += 1
        print(f"FAILED {name}: got {got}, expected {want}")


def expect_data(name, url, want, max_rss_mib=96):
    """Reads every variable's data: the code must be `want` and the probe's peak resident
    memory stay under `max_rss_mib` (hostile objects are never loaded whole)."""
    global passed, failed
    out = subprocess.run([PROBE, url, "data"], capture_output=True, text=True, timeout=60)
    fields = dict(f.split("=") for f in out.stdout.split()) if out.returncode == 0 else {}
    got = int(fields["rc"]) if "rc" in fields else f"exit {out.returncode}: {out.stderr.strip()[-200:]}"
    rss_mib = int(fields.get("hwm", "0")) // 1024
    if got == want and rss_mib < max_rss_mib:
        passed += 1
    else:
        failed += 1
        print(f"FAILED {name}: got {got} with peak {rss_mib} MiB, expected {want} under {max_rss_mib} MiB")


def write(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = obj if isinstance(obj, bytes) else (obj if isinstance(obj, str) else json.dumps(obj)).encode()
    with open(path, "wb") as f:
        f.write(data)


ZARRAY = {"zarr_format": 2, "shape": [4, 6], "dtype": "<i4", "chunks": [2, 3], "fill_value": 0,
          "order": "C", "compressor": None, "filters": None}


def pure_store(root, zarray=None, zattrs=None, raw_zarray=None):
    shutil.rmtree(root, ignore_errors=True)
    write(f"{root}/.zgroup", {"zarr_format": 2})
    write(f"{root}/v/.zarray", raw_zarray if raw_zarray is not None else (zarray or ZARRAY))
    write(f"{root}/v/.zattrs", zattrs if zattrs is not None else {"_ARRAY_DIMENSIONS": ["y", "x"]})
    return f"file://{root}#mode=zarr,file"


def nczarr_store(root, dims=None, refs=None, arrays=None, groups=None, shape=None):
    shutil.rmtree(root, ignore_errors=True)
    write(f"{root}/.zgroup", {"zarr_format": 2})
    write(f"{root}/.zattrs", {
        "_nczarr_superblock": {"version": "2.0.0"},
        "_nczarr_group": {"dimensions": dims if dims is not None else {"y": 4, "x": 6},
                          "arrays": arrays if arrays is not None else ["v"],
                          "groups": groups if groups is not None else []},
        "_nczarr_attr": {"types": {"_nczarr_group": "|J0", "_nczarr_superblock": "|J0"}}})
    za = dict(ZARRAY)
    if shape is not None:
        za["shape"] = shape
    write(f"{root}/v/.zarray", za)
    write(f"{root}/v/.zattrs", {"_nczarr_array": {"dimension_references": refs if refs is not None else ["/y", "/x"],
                                                  "storage": "chunked"}})
    return f"file://{root}#mode=nczarr,file"


def main():
    tmp = tempfile.mkdtemp()
    s = f"{tmp}/s.zarr"
    expect("valid pure zarr", pure_store(s), 0)
    expect("valid nczarr", nczarr_store(s), 0)
    for name, patch in [
        ("dtype <q99", {"dtype": "<q99"}),
        ("dtype |O without codec", {"dtype": "|O"}),
        ("dtype |S2147483648", {"dtype": "|S2147483648"}),
        ("dtype |S0", {"dtype": "|S0"}),
        ("dtype structured", {"dtype": [["a", "<i4"]]}),
        ("zarr_format 99", {"zarr_format": 99}),
        ("zarr_format 3", {"zarr_format": 3}),
        ("zarr_format '2'", {"zarr_format": "2"}),
        ("fill_value abc", {"fill_value": "abc"}),
        ("fill_value NaN on int", {"fill_value": "NaN"}),
        ("shape negative", {"shape": [-4, 6]}),
        ("shape float", {"shape": [4.5, 6]}),
        ("shape string", {"shape": ["4", 6]}),
        ("shape above i64", {"shape": [2**64 + 5, 6]}),
        ("shape missing", {"shape": None}),
        ("chunks zero", {"chunks": [0, 3]}),
        ("chunks negative", {"chunks": [-2, 3]}),
        ("chunks float", {"chunks": [2.0, 3]}),
        ("huge shape and chunks", {"shape": [2**62, 2**62], "chunks": [2**31, 2**31]}),
        ("chunk product overflow", {"chunks": [2**40, 2**40]}),
        ("rank mismatch", {"chunks": [2]}),
        ("order X", {"order": "X"}),
        ("dimension_separator x", {"dimension_separator": "x"}),
        ("compressor id not a string", {"compressor": {"id": 5}}),
        ("filters not a list", {"filters": "zlib"}),
    ]:
        za = dict(ZARRAY)
        for k, v in patch.items():
            if v is None:
                za.pop(k)
            else:
                za[k] = v
        expect(name, pure_store(s, zarray=za), ENCZARR)
    expect("zarr_format missing", pure_store(s, zarray={k: v for k, v in ZARRAY.items() if k != "zarr_format"}), ENCZARR)
    for name, raw in [("truncated json", '{"zarr_format": 2, "shape": [4'), ("empty object file", ""),
                      ("json null", "null"), ("json array", "[1, 2]"), ("not utf-8", b"\xff\xfe{}"),
                      ("deep nesting", "[" * 100000)]:
        expect(name, pure_store(s, raw_zarray=raw), ENCZARR)
    expect("deep .zattrs nesting", pure_store(s, zattrs="{\"a\": " + "[" * 100000), ENCZARR)
    # Names from storage.
    expect("_ARRAY_DIMENSIONS with ..", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["../../y", "x"]}), EBADNAME)
    expect("_ARRAY_DIMENSIONS with NUL", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["y", "x\u0000\u0007"]}), EBADNAME)
    expect("attribute name with NUL", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["y", "x"], "a\u0000b": 1}), EBADNAME)
    expect("attribute name with newline", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["y", "x"], "c\nd": 1}), EBADNAME)
    expect("empty attribute name", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["y", "x"], "": 1}), EBADNAME)
    expect("300-byte dimension name", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["y" * 300, "x"]}), EMAXNAME)
    url = pure_store(s)
    os.makedirs(f"{s}/a\nb")
    write(f"{s}/a\nb/.zarray", ZARRAY)
    expect("child directory with newline", url, EBADNAME)
    # Odd but valid: survives.
    expect("attribute []", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["y", "x"], "e": []}), 0)
    expect("mixed list attribute", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["y", "x"], "m": [1, "a"]}), 0)
    expect("unknown codec opens", pure_store(s, zarray=dict(ZARRAY, compressor={"id": "evilcodec"})), 0)
    expect("complex dtype skipped", pure_store(s, zarray=dict(ZARRAY, dtype="<c8")), 0)
    expect("conflicting dimension lengths", pure_store(s, zattrs={"_ARRAY_DIMENSIONS": ["y", "y"]}), 0)
    # NCZarr metadata.
    expect("dim refs count != rank", nczarr_store(s, refs=["/y"]), ENCZARR)
    expect("dim ref to missing dim", nczarr_store(s, refs=["/y", "/nope"]), ENCZARR)
    expect("dim size != shape", nczarr_store(s, dims={"y": 5, "x": 6}), ENCZARR)
    expect("array list with ../x", nczarr_store(s, arrays=["../x"]), EBADNAME)
    expect("array list with a/b", nczarr_store(s, arrays=["a/b"]), EBADNAME)
    expect("array list with empty name", nczarr_store(s, arrays=[""]), EBADNAME)
    expect("group list with 300-byte name", nczarr_store(s, groups=["g" * 300]), EMAXNAME)
    expect("dimensions not an object", nczarr_store(s, dims=[1, 2]), ENCZARR)
    # Storage: symlinks out of the store, missing and foreign targets.
    outside = f"{tmp}/outside"
    os.makedirs(outside, exist_ok=True)
    write(f"{outside}/.zarray", ZARRAY)
    url = pure_store(s)
    shutil.rmtree(f"{s}/v")
    os.symlink(outside, f"{s}/v")
    write(f"{s}/w/.zarray", ZARRAY)
    os.symlink(f"{outside}/.zarray", f"{s}/w/.zattrs")
    expect("array directory is a symlink out of the store", url, EACCESS)
    os.makedirs(f"{tmp}/empty")
    expect("empty directory", f"file://{tmp}/empty#mode=zarr,file", ENOTNC)
    write(f"{tmp}/text.txt", "hello")
    expect("text file", f"file://{tmp}/text.txt#mode=zarr,file", ENOTNC)
    expect("missing directory", f"file://{tmp}/missing#mode=zarr,file", ENOOBJECT)
    # Deep nesting: fine at 1000 levels (netcdf-c 4.10.1 corrupts its heap from 31 on).
    deep = f"{tmp}/deep.zarr"
    path = deep
    write(f"{path}/.zgroup", {"zarr_format": 2})
    for i in range(1000):
        path = f"{path}/g"
        write(f"{path}/.zgroup", {"zarr_format": 2})
    expect("1000 nested groups", f"file://{deep}#mode=zarr,file", 0)
    # Zip archives with hostile entries.
    for name, entry in [("zip entry with ..", "ds/../evil"), ("zip absolute entry", "/etc/evil")]:
        zpath = f"{tmp}/bad.zip"
        with zipfile.ZipFile(zpath, "w") as z:
            z.writestr("ds/.zgroup", json.dumps({"zarr_format": 2}))
            z.writestr(entry, "x")
        expect(name, f"file://{zpath}#mode=zarr,zip", EBADNAME)
    zpath = f"{tmp}/dup.zip"
    with warnings.catch_warnings(), zipfile.ZipFile(zpath, "w") as z:
        warnings.simplefilter("ignore")
        z.writestr("ds/.zgroup", "{broken")
        z.writestr("ds/.zgroup", json.dumps({"zarr_format": 2}))
    expect("zip duplicate entries: the last one wins, as in zarr-python", f"file://{zpath}#mode=zarr,zip", 0)
    zpath = f"{tmp}/root.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr(".zgroup", json.dumps({"zarr_format": 2}))
        z.writestr("v/.zarray", json.dumps(ZARRAY))
    expect("zip with entries at the root (zarr-python layout)", f"file://{zpath}#mode=zarr,zip", 0)
    # Chunk objects far larger than any encoding of their chunk (reliability.md C2, C4, N8):
    # refused from their size, before anything is read or inflated.
    small = dict(ZARRAY, shape=[4], chunks=[4])
    dims1 = {"_ARRAY_DIMENSIONS": ["x"]}
    url = pure_store(s, zarray=small, zattrs=dims1)
    expect_data("valid chunk reads", url, 0)
    write(f"{s}/v/0", b"\0" * 17)
    expect_data("raw chunk one byte too long", url, ENCZARR)
    write(f"{s}/v/0", b"\0" * 15)
    expect_data("raw chunk one byte short", url, ENCZARR)
    with open(f"{s}/v/0", "wb") as f:
        f.truncate(300 << 20)
    expect_data("300 MiB raw chunk for a 16-byte chunk", url, ENCZARR)
    url = pure_store(s, zarray=dict(small, compressor={"id": "zlib", "level": 1}), zattrs=dims1)
    import zlib
    z = zlib.compressobj(1)
    bomb = b"".join(z.compress(b"\0" * (1 << 20)) for _ in range(512)) + z.flush()
    write(f"{s}/v/0", bomb)
    expect_data("zlib stream inflating to 512 MiB for a 16-byte chunk", url, EFILTER)
    write(f"{s}/v/0", zlib.compress(b"\0" * 4096))
    expect_data("zlib stream inflating to 4 KiB for a 16-byte chunk", url, EFILTER)
    zpath = f"{tmp}/bigentry.zip"
    with zipfile.ZipFile(zpath, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(".zgroup", json.dumps({"zarr_format": 2}))
        zf.writestr("v/.zarray", json.dumps(small))
        zf.writestr("v/.zattrs", json.dumps(dims1))
        zf.writestr("v/0", b"\0" * (256 << 20))
    expect_data("zip entry inflating to 256 MiB for a 16-byte chunk", f"file://{zpath}#mode=zarr,zip", ENCZARR)
    subprocess.run(["rm", "-rf", tmp], check=True)
    print(f"bad inputs: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

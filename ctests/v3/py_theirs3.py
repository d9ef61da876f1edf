"""We read the Zarr v3 stores zarr-python 3, xarray and tensorstore write (zarr-v3.md §14):
every data type, fill encoding, key encoding, codec, transpose, big-endian, sharding (index
at end and start, empty inner chunks, absent shards), implicit groups, consolidated
metadata, skipped nodes. Values are checked through our C API (ctypes) and every store is
dumped by Debian's ncdump under the preload library."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import tensorstore as ts
import xarray as xr
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec, ZstdCodec
import numcodecs.zarr3 as nz

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from nclib import describe, read  # noqa: E402
from pycheck import check, finish  # noqa: E402

warnings.simplefilter("ignore")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRELOAD = os.path.join(TOP, "build", "libnczarr_preload.so")
tmp = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()


def flat(a):
    a = np.asarray(a)
    if a.dtype.kind in "USO" or str(a.dtype).startswith("StringDType") or a.dtype.kind == "T":
        return [x.decode() if isinstance(x, bytes) else str(x) for x in a.reshape(-1).tolist()]
    if a.dtype.kind == "M" or a.dtype.kind == "m":
        a = a.view("i8")
    return [float(x) for x in a.astype("f8").reshape(-1)]


def same(got, want):
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if isinstance(w, float) and np.isnan(w):
            if not (isinstance(g, float) and np.isnan(g)):
                return False
        elif g != w:
            return False
    return True


def ncdump(url, *args):
    r = subprocess.run(["ncdump", *args, url], env=dict(os.environ, LD_PRELOAD=PRELOAD), capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def edit(path, fn):
    with open(path) as f:
        doc = json.load(f)
    fn(doc)
    with open(path, "w") as f:
        json.dump(doc, f)


# ---- 1. zarr-python: types, fills, codecs, key encodings -----------------------------------
p = f"{tmp}/zp.zarr"
g = zarr.open_group(p, mode="w", zarr_format=3, attributes={"title": "zp", "n": 3, "r": [0.5, 1.5]})
expect = {}


def arr(name, data, **kw):
    a = g.create_array(name, shape=data.shape, dtype=kw.pop("dtype", data.dtype), **kw)
    a[...] = data
    expect[name] = flat(a[...])
    return a


for dt in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]:
    arr(f"n_{dt}", (np.arange(12).reshape(3, 4) * 3 - 5).astype(dt) if dt[0] != "u" else (np.arange(12).reshape(3, 4) * 3).astype(dt),
        chunks=(2, 3), dimension_names=["y", "x"])
arr("flag", np.array([True, False, True, True]), dimension_names=["x"])
arr("names", np.array(["ab", "", "déf", "z"], dtype=object), dtype=str, dimension_names=["x"])
arr("u5", np.array(["ab", "", "déf", "zzzzz"], dtype="<U5"), dimension_names=["x"])
arr("s5", np.array([b"ab", b"", b"xyz", b"abcde"], dtype="|S5"), dimension_names=["x"])
arr("when", np.array(["2020-01-01", "2021-06-30", "1969-12-31", "2000-02-29"], dtype="datetime64[s]"), dimension_names=["x"])
arr("scalar", np.array(3.25))
arr("half", np.array([0.5, -2, 65504, 1e-7], dtype="f2"), dimension_names=["x"])
arr("gz", np.arange(12, dtype="f4").reshape(3, 4), compressors=[GzipCodec(level=5), Crc32cCodec()], dimension_names=["y", "x"])
arr("bl", np.arange(12, dtype="i4").reshape(3, 4), compressors=[BloscCodec(cname="zstd", clevel=1, shuffle="bitshuffle")], dimension_names=["y", "x"])
arr("nc", np.arange(12, dtype="f8").reshape(3, 4), compressors=[nz.Shuffle(elementsize=8), nz.Zlib(level=4)], dimension_names=["y", "x"])
arr("bz", np.arange(12, dtype="i2").reshape(3, 4), compressors=[nz.BZ2(level=9)], dimension_names=["y", "x"])
arr("lz", np.arange(12, dtype="u4").reshape(3, 4), compressors=[nz.LZ4()], dimension_names=["y", "x"])
arr("zc", np.arange(12, dtype="i8").reshape(3, 4), compressors=[ZstdCodec(level=3, checksum=True)], dimension_names=["y", "x"])
arr("tr", np.arange(12, dtype="i4").reshape(3, 4), filters=[TransposeCodec(order=(1, 0))], compressors=None, dimension_names=["y", "x"])
arr("tr3", np.arange(24, dtype="i2").reshape(2, 3, 4), filters=[TransposeCodec(order=(2, 0, 1))], compressors=None,
    dimension_names=["a", "b", "c"])
arr("outer", np.arange(48, dtype="u2").reshape(4, 12), serializer=ShardingCodec(chunk_shape=(2, 3), codecs=[BytesCodec()]),
    compressors=[GzipCodec(level=1)], chunks=(4, 12), dimension_names=["y4", "x12"])
arr("be", np.arange(12, dtype=">i4").reshape(3, 4) - 6, serializer=BytesCodec(endian="big"), compressors=None, dimension_names=["y", "x"])
arr("dot", np.arange(12, dtype="i2").reshape(3, 4), chunks=(2, 2), chunk_key_encoding={"name": "default", "separator": "."}, dimension_names=["y", "x"])
arr("v2dot", np.arange(12, dtype="i2").reshape(3, 4), chunks=(2, 2), chunk_key_encoding={"name": "v2", "separator": "."}, dimension_names=["y", "x"])
arr("v2slash", np.arange(12, dtype="i2").reshape(3, 4), chunks=(2, 2), chunk_key_encoding={"name": "v2", "separator": "/"}, dimension_names=["y", "x"])
arr("anon", np.arange(6, dtype="f4").reshape(2, 3))
arr("halfnamed", np.arange(6, dtype="f4").reshape(2, 3), dimension_names=["y2", None])
part = g.create_array("partial", shape=(4, 4), chunks=(2, 2), dtype="i2", fill_value=-7, dimension_names=["p", "q"])
part[0:2, 0:2] = 1
expect["partial"] = flat(part[...])
# Sharding: index at the end (default) and at the start, an empty inner chunk, an absent shard.
sh = g.create_array("sh", shape=(8, 12), chunks=(2, 3), shards=(4, 12), dtype="u2", dimension_names=["y8", "x12"])
sh[...] = np.arange(96).reshape(8, 12)
sh[0:2, 3:6] = 0
expect["sh"] = flat(sh[...])
ss = zarr.create_array(f"{p}/ss", shape=(8, 6), dtype="f4", chunks=(4, 6), dimension_names=["y8", "x6"],
                       serializer=ShardingCodec(chunk_shape=(2, 3), codecs=[BytesCodec(), ZstdCodec(level=1)], index_location="start"),
                       compressors=None, zarr_format=3)
ss[0:4, :] = np.arange(24, dtype="f4").reshape(4, 6)
expect["ss"] = flat(ss[...])
sub = g.create_group("sub", attributes={"k": 1})
sv = sub.create_array("v", shape=(2,), dtype="i2", dimension_names=["k"], fill_value=-1)
sv[...] = [5, 6]
expect["sub/v"] = [5.0, 6.0]
# Fill encodings: hex NaN payload (float32), Infinity, integral float for an int array.
hx = g.create_array("hexnan", shape=(2,), dtype="f4", dimension_names=["two"])
edit(f"{p}/hexnan/zarr.json", lambda d: d.update(fill_value="0x7fc00001"))
inf = g.create_array("inf", shape=(2,), dtype="f8", fill_value=np.inf, dimension_names=["two"])
edit(f"{p}/inf/zarr.json", lambda d: d.update(fill_value="Infinity"))
fi = g.create_array("intfill", shape=(2,), dtype="i4", dimension_names=["two"])
edit(f"{p}/intfill/zarr.json", lambda d: d.update(fill_value=5.0))
url = f"file://{p}#mode=zarr,file"
try:
    d = describe(url)
except Exception as e:  # noqa: BLE001
    d = {"vars": {}, "dims": {}, "atts": {}, "groups": {}}
    check(False, f"open zarr-python store: {e}")
check(d["atts"].get("title") == ("char", "zp") and d["atts"].get("n") == ("int", [3]), f"group attributes {d['atts']}")
types = {k: v["type"] for k, v in d["vars"].items()}
for dt, t in {"i1": "byte", "u1": "ubyte", "i2": "short", "u2": "ushort", "i4": "int", "u4": "uint", "i8": "int64",
              "u8": "uint64", "f4": "float", "f8": "double"}.items():
    check(types.get(f"n_{dt}") == t, f"{dt} -> {t}: {types.get(f'n_{dt}')}")
check(types.get("flag") == "ubyte" and types.get("names") == "string" and types.get("u5") == "string" and types.get("s5") == "string",
      f"bool/string types {types}")
check(types.get("when") == "int64" and types.get("scalar") == "double", f"datetime64/scalar {types}")
check(types.get("half") == "float", f"float16 widened to float {types.get('half')}")
check(d["vars"].get("scalar", {}).get("dims") == [], "0-d array is a scalar")
check(d["vars"].get("n_f4", {}).get("dims") == ["y", "x"], "dimension_names are shared dimensions")
check(d["vars"].get("anon", {}).get("dims") == ["_Anonymous_Dim_2", "_Anonymous_Dim_3"], f"no names -> anonymous {d['vars'].get('anon')}")
check(d["vars"].get("halfnamed", {}).get("dims") == ["y2", "_Anonymous_Dim_3"], f"null entry -> anonymous {d['vars'].get('halfnamed')}")
# Arrays without NCZarr attributes show their fill_value as _FillValue, as pure v2 arrays do
# (D3; the spec's V13 is superseded so CF clients mask the same values whichever format).
check(d["vars"].get("n_f4", {}).get("atts", {}).get("_FillValue") == ("float", [0.0]),
      f"fill_value shown as _FillValue {d['vars'].get('n_f4', {}).get('atts')}")
check(d["vars"].get("intfill", {}).get("atts", {}).get("_FillValue") == ("int", [5]),
      f"integral float fill of an int array {d['vars'].get('intfill', {}).get('atts')}")
check(d["groups"].get("sub", {}).get("atts", {}).get("k") == ("int", [1]), "sub-group attributes")
for name, want in expect.items():
    try:
        got = read(url, name)
    except Exception as e:  # noqa: BLE001
        check(False, f"read {name}: {e}")
        continue
    if name == "s5":
        want = ["ab", "", "xyz", "abcde"]
    check(same(got, want), f"{name}: {got} != {want}")
hexbits = np.array(read(url, "hexnan"), dtype="f4").view("u4").tolist()
check(hexbits == [0x7FC00001, 0x7FC00001], f"hex NaN fill payload kept {[hex(x) for x in hexbits]}")
check(read(url, "inf") == [float("inf")] * 2 and read(url, "intfill") == [5.0, 5.0], "Infinity and integral float fills")
rc, out = ncdump(url)
check(rc == 0 and "n_u8 =" in out and "sh =" in out and "v = 5, 6" in out, f"ncdump of the zarr-python store: rc {rc} {out[-300:]}")
rc, out = ncdump(url, "-s")
check(rc == 0 and "sharding_indexed" in out, "ncdump -s shows sharding in _Codecs")

# Nodes we must skip, not fail on: an unknown must-understand member, storage transformers,
# complex numbers. An extension marked must_understand=false is fine.
kp = f"{tmp}/skip.zarr"
k = zarr.open_group(kp, mode="w", zarr_format=3)
for name in ["skip_mu", "skip_st", "ext_ok"]:
    k.create_array(name, shape=(2,), dtype="i4", dimension_names=["two"])[...] = [1, 2]
edit(f"{kp}/skip_mu/zarr.json", lambda d: d.update(future_thing={"x": 1}))
edit(f"{kp}/skip_st/zarr.json", lambda d: d.update(storage_transformers=[{"name": "chunk-manifest"}]))
edit(f"{kp}/ext_ok/zarr.json", lambda d: d.update(future_thing={"must_understand": False, "x": 1}))
k.create_array("cplx", shape=(2,), dtype="c8", dimension_names=["two"])
# The "F" shorthand of early v3 drafts for a reversed transpose.
shutil.copytree(f"{p}/tr", f"{kp}/trF")
edit(f"{kp}/trF/zarr.json", lambda d: d["codecs"][0]["configuration"].update(order="F"))
try:
    d = describe(f"file://{kp}#mode=zarr,file")
    check(sorted(d["vars"]) == ["ext_ok", "trF"], f"unusable nodes skipped, the rest opens: {sorted(d['vars'])}")
    check(read(f"file://{kp}#mode=zarr,file", "trF") == expect["tr"], "transpose order \"F\"")
    check(read(f"file://{kp}#mode=zarr,file", "ext_ok") == [1.0, 2.0], "must_understand=false extension read")
except Exception as e:  # noqa: BLE001
    check(False, f"store with unusable nodes: {e}")

# A put into their float16 array rounds to half precision, and zarr-python reads it.
import ctypes  # noqa: E402
from nclib import call, lib  # noqa: E402
ncid, varid = ctypes.c_int(), ctypes.c_int()
call(lib.nc_open, url.encode(), 1, ctypes.byref(ncid))
call(lib.nc_inq_varid, ncid, b"half", ctypes.byref(varid))
call(lib.nc_put_var1_float, ncid, varid, (ctypes.c_size_t * 1)(1), ctypes.byref(ctypes.c_float(3.140625)))
call(lib.nc_close, ncid)
call(lib.nc_open, url.encode(), 1, ctypes.byref(ncid))
call(lib.nc_inq_varid, ncid, b"outer", ctypes.byref(varid))
call(lib.nc_put_var1_ushort, ncid, varid, (ctypes.c_size_t * 2)(1, 4), ctypes.byref(ctypes.c_ushort(7777)))
call(lib.nc_close, ncid)
call(lib.nc_open, url.encode(), 1, ctypes.byref(ncid))
call(lib.nc_inq_varid, ncid, b"flag", ctypes.byref(varid))
call(lib.nc_put_var1_uchar, ncid, varid, (ctypes.c_size_t * 1)(1), ctypes.byref(ctypes.c_ubyte(5)))
call(lib.nc_close, ncid)
fl = zarr.open_array(f"{p}/flag", mode="r")[...]
check(fl.tolist() == [True, True, True, True] and read(url, "flag") == [1.0, 1.0, 1.0, 1.0], f"bool put of 5 stores 1 {fl.tolist()}")
o = zarr.open_array(f"{p}/outer", mode="r")[...]
want_o = np.arange(48, dtype="u2").reshape(4, 12)
want_o[1, 4] = 7777
check(np.array_equal(o, want_o), "a put into a shard wrapped in gzip: zarr-python reads it")
call(lib.nc_open, url.encode(), 1, ctypes.byref(ncid))
call(lib.nc_inq_varid, ncid, b"half", ctypes.byref(varid))
rc = lib.nc_put_var1_float(ncid, varid, (ctypes.c_size_t * 1)(3), ctypes.byref(ctypes.c_float(1e6)))
call(lib.nc_close, ncid)
check(rc == -60, f"float16 overflow is NC_ERANGE ({rc})")
h = zarr.open_array(f"{p}/half", mode="r")[...]
check(h.dtype == np.float16 and h.tolist() == [0.5, 3.140625, 65504.0, float("inf")], f"float16 put {h.tolist()}")

# Consolidated metadata: served inline (one GET), refreshed view of the same data.
zarr.consolidate_metadata(p)
check(read(url, "sub/v") == [5.0, 6.0] and read(url, "sh") == expect["sh"], "consolidated store reads")
check(same(read(f"file://{p}#mode=zarr,noconsolidated,file", "gz"), expect["gz"]), "noconsolidated walks the tree")

# ---- 2. xarray v3: CF attributes, base64 _FillValue, strings --------------------------------
xp = f"{tmp}/xr3.zarr"
ds = xr.Dataset(
    {"temp": (("time", "lat"), np.arange(6, dtype="f4").reshape(2, 3), {"units": "K"}),
     "city": (("lat",), np.array(["a", "bb", "ccc"], dtype=object)),
     "packed": (("lat",), np.array([1.0, np.nan, 3.0]))},
    coords={"lat": [10.0, 20.0, 30.0]}, attrs={"title": "xr v3"})
ds.temp.encoding = {"_FillValue": -999.0}
ds.packed.encoding = {"dtype": "int16", "scale_factor": 0.5, "_FillValue": -1}
ds.to_zarr(xp, zarr_format=3, consolidated=True)
xu = f"file://{xp}#mode=zarr,file"
d = describe(xu)
check(d["vars"]["temp"]["atts"].get("_FillValue") == ("float", [-999.0]), f"base64 _FillValue decoded {d['vars']['temp']['atts']}")
check(d["vars"]["packed"]["atts"].get("_FillValue") == ("short", [-1]), f"integer _FillValue {d['vars']['packed']['atts']}")
check(d["vars"]["city"]["type"] == "string" and read(xu, "city") == ["a", "bb", "ccc"], "xarray strings")
check(read(xu, "temp") == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and read(xu, "lat") == [10.0, 20.0, 30.0], "xarray values")
check(read(xu, "packed") == [2.0, -1.0, 6.0], f"packed raw values {read(xu, 'packed')}")
check(ncdump(xu)[0] == 0, "ncdump of the xarray v3 store")

# ---- 3. tensorstore: arrays only (implicit groups), sharding, no chunk-key configuration ----
tp = f"{tmp}/ts.zarr"
spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": f"{tp}/grp/arr"},
        "metadata": {"shape": [6, 8], "data_type": "int32", "dimension_names": ["a", "b"],
                     "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 8]}},
                     "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 2],
                                 "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}]}}]},
        "create": True, "delete_existing": True}
t = ts.open(spec).result()
tdata = np.arange(48, dtype="i4").reshape(6, 8)
t.write(tdata).result()
spec2 = {"driver": "zarr3", "kvstore": {"driver": "file", "path": f"{tp}/top"},
         "metadata": {"shape": [4], "data_type": "float64", "dimension_names": ["n"],
                      "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 3}}]},
         "create": True, "delete_existing": True}
ts.open(spec2).result().write(np.array([0.5, 1.5, -2.5, 1e300])).result()
turl = f"file://{tp}#mode=zarr,file"
try:
    d = describe(turl)
    check("grp" in d["groups"] and "arr" in d["groups"]["grp"]["vars"], f"implicit groups {d}")
    check(read(turl, "grp/arr") == flat(tdata), "tensorstore sharded values")
    check(read(turl, "top") == [0.5, 1.5, -2.5, 1e300], "tensorstore big-endian gzip values")
except Exception as e:  # noqa: BLE001
    check(False, f"tensorstore store: {e}")
check(ncdump(turl)[0] == 0, "ncdump of the tensorstore store")

# ---- 3b. netcdf-c's unreleased v3 layout (PR 3078, zarr-v3.md §9.6): list-form dimensions and
# attribute types, `subgroups`, `type_alias`, bare codec names, r<8n> strings, `null` fill,
# `_ARRAY_DIMENSIONS` beside `dimension_names`.
import zlib  # noqa: E402
dp = f"{tmp}/draft.zarr"


def put(rel, obj):
    os.makedirs(os.path.dirname(f"{dp}/{rel}"), exist_ok=True)
    with open(f"{dp}/{rel}", "wb") as f:
        f.write(obj if isinstance(obj, bytes) else json.dumps(obj).encode())


def array(shape, dtype, codecs, fill, meta, extra=None):
    doc = {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shape}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": fill, "codecs": codecs, "dimension_names": ["x"],
           "attributes": {"_nczarr_array": meta, "_ARRAY_DIMENSIONS": ["x"]}}
    doc["attributes"].update(extra or {})
    return doc


put("zarr.json", {"zarr_format": 3, "node_type": "group", "attributes": {
    "title": "draft", "_nczarr_superblock": {"version": "3.0.0"},
    "_nczarr_group": {"dimensions": [{"name": "x", "size": 4, "unlimited": 0}], "arrays": ["v", "s", "c", "nf"], "subgroups": ["g"]},
    "_nczarr_attrs": {"attribute_types": [{"name": "title", "configuration": {"type": "char"}},
                                          {"name": "_nczarr_group", "configuration": {"type": "json"}}]}}})
refs = {"dimension_references": ["/x"], "storage": "chunked"}
put("v/zarr.json", array([4], "int32", [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zlib", "configuration": {"level": 1}},
                                        {"name": "fletcher32"}], -2147483647, refs,
                         {"units": "m", "_nczarr_attrs": {"attribute_types": [{"name": "units", "configuration": {"type": "char"}}]}}))
raw = np.array([1, 2, 3, 4], dtype="<i4").tobytes()
z = zlib.compress(raw, 1)
import numcodecs  # noqa: E402
put("v/c/0", numcodecs.Fletcher32().encode(z))
put("s/zarr.json", array([4], "r64", [{"name": "bytes"}], "AAAAAAAAAAA=", dict(refs, nczarr_type="string")))
put("s/c/0", b"".join(x.ljust(8, b"\0") for x in [b"ab", b"", b"cdefgh", b"12345678"]))
put("c/zarr.json", array([4], "uint8", [{"name": "bytes"}], "", dict(refs, type_alias="char")))
put("c/c/0", b"wxyz")
put("nf/zarr.json", array([4], "int16", [{"name": "bytes", "configuration": {"endian": "little"}}], None, refs))
put("g/zarr.json", {"zarr_format": 3, "node_type": "group", "attributes": {"_nczarr_group": {"dimensions": [], "arrays": [], "subgroups": []}}})
du = f"file://{dp}#mode=nczarr,file"
try:
    d = describe(du)
    check(d["dims"] == {"x": 4} and d["atts"].get("title") == ("char", "draft") and "g" in d["groups"], f"draft layout structure {d}")
    check(d["vars"]["v"]["atts"].get("units") == ("char", "m") and "_ARRAY_DIMENSIONS" not in d["vars"]["v"]["atts"], "draft attributes")
    check(read(du, "v") == [1.0, 2.0, 3.0, 4.0], f"draft bare zlib + fletcher32 {read(du, 'v')}")
    check(d["vars"]["s"]["type"] == "string" and read(du, "s") == ["ab", "", "cdefgh", "12345678"], f"draft r64 strings {read(du, 's')}")
    check(d["vars"]["c"]["type"] == "char" and read(du, "c") == "wxyz", "draft char via type_alias")
    check(read(du, "nf") == [0.0] * 4, "draft null fill: no fill, zeros")
except Exception as e:  # noqa: BLE001
    check(False, f"netcdf-c draft layout: {e}")

# ---- 4. a sharded read touches the index and exactly the inner chunks it needs ------------------
rp = f"{tmp}/ranges.zarr"
r = zarr.create_array(rp, shape=(8, 12), chunks=(2, 3), shards=(4, 12), dtype="u2", dimension_names=["y", "x"], zarr_format=3)
r[...] = np.arange(96).reshape(8, 12)
probe = os.path.join(TOP, "build", "v3_hyperslab")
env = dict(os.environ, NCTRACING="2")
res = subprocess.run([probe, f"file://{rp}#mode=zarr,file", "0", "0", "2", "6"], env=env, capture_output=True, text=True)
log = [line for line in res.stderr.splitlines() if "storage:" in line and "c/" in line]
suffix = [line for line in log if "get suffix" in line]
ranges = [line for line in log if "get ranges" in line]
whole = [line for line in log if "storage: get " in line and "suffix" not in line and "ranges" not in line]
check(res.returncode == 0 and res.stdout.split() == [str(x) for x in np.arange(96).reshape(8, 12)[0:2, 0:6].reshape(-1)],
      f"hyperslab values {res.stdout} {res.stderr[-300:]}")
check(len(suffix) == 1 and len(ranges) == 1 and ranges[0].count("+") == 2 and not whole,
      "2 of 8 inner chunks: one index read and exactly 2 ranges:\n" + "\n".join(log))

sys.exit(finish("zarr v3 stores of others"))

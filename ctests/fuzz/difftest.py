#!/usr/bin/env python3
"""Differential tester: seeded random sequences of nc_* calls over the whole data model,
run against our library (directory, zip and v3 stores) and against netcdf-c 4.10.1 on HDF5
(the netCDF4 wheel's library), every return code and value compared.

    difftest.py [--count N] [--seed S] [--keep DIR]

Each sequence creates a dataset, defines groups, dimensions (fixed and unlimited), variables
of every atomic type, attributes (puts in every memory type, conversions, NC_ERANGE), fills,
chunking and deflate settings, writes and reads hyperslabs, renames and deletes, crosses
define and data mode, syncs, closes and reopens for write, and finally reopens read-only and
dumps everything. A smaller share of calls does strided access, byte order, checksums,
attribute copies, group renames and the fill mode. About one call in six is wrong on purpose (bad ids, names, types,
coordinates, modes). The two transcripts must agree line by line; where they first differ
the sequence stops counting. A divergence is "known" when it matches a documented
difference (ours on purpose, or netcdf-c/HDF5 misbehaviour, listed in KNOWN below) and
"unexplained" otherwise: the script is then saved for reproduction and the run fails.
A sequence the reference library crashes on is counted and skipped.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(TOP, "build")

NC_BYTE, NC_CHAR, NC_SHORT, NC_INT, NC_FLOAT, NC_DOUBLE = 1, 2, 3, 4, 5, 6
NC_UBYTE, NC_USHORT, NC_UINT, NC_INT64, NC_UINT64, NC_STRING = 7, 8, 9, 10, 11, 12
CLASSIC_TYPES = [NC_BYTE, NC_CHAR, NC_SHORT, NC_INT, NC_FLOAT, NC_DOUBLE]
ALL_TYPES = CLASSIC_TYPES + [NC_UBYTE, NC_USHORT, NC_UINT, NC_INT64, NC_UINT64, NC_STRING]
NUMERIC = [t for t in ALL_TYPES if t not in (NC_CHAR, NC_STRING)]
NC_NETCDF4, NC_CLASSIC_MODEL, NC_WRITE = 0x1000, 0x100, 1

# Where our library differs from netcdf-c 4.10.1 on HDF5 by design, or where netcdf-c/HDF5
# misbehave: (reason, predicate over the diverging op, our line, the reference's line and the
# whole script `ops` with both transcripts up to here in `ctx`). The README's "Where we differ
# from netcdf-c on purpose" lists ours.
def history(ctx):
    """The ops before the diverging one, each with the reference's line for it."""
    return zip(ctx["ops"][: ctx["i"]], ctx["ref"][: ctx["i"]])


def earlier(ctx, pred):
    return any(pred(o, r) for o, r in history(ctx))


def is_get(op):
    return op[0] in ("get_all", "get_vara", "get_vars")


KNOWN = [
    # c-api.md: NCZarr's NC_EINDEFINE, not HDF5's silent 0 (MATCH NCZarr).
    ("nc_redef in define mode: NC_EINDEFINE (NCZarr) vs 0 (HDF5)", lambda op, a, b, ctx: op[0] == "redef" and a.endswith("rc=-39")),
    # HDF5 stores variables as contiguous by default; filters on them answer differently.
    ("deflate on a contiguous HDF5 variable", lambda op, a, b, ctx: op[0] == "def_var_deflate" and b.endswith("rc=-46")),
    # A chunk size larger than a fixed dimension: HDF5 NC_EBADCHUNK, NCZarr accepts (Zarr allows).
    ("chunk larger than its dimension", lambda op, a, b, ctx: op[0] == "def_var_chunking" and b.endswith("rc=-127") and a.endswith("rc=0")),
    # netcdf-c's HDF5 layer renames a variable over a dimension's name by making a new
    # dimension scale ("rename bugs"); our renames are plain.
    ("HDF5 rename of a coordinate variable", lambda op, a, b, ctx: op[0] in ("rename_var", "rename_dim") and b.endswith("rc=-101")),
    # netcdf-c deletes and re-creates an HDF5 dataset whose fill value changes after it was
    # created: it then lists after the others when the file is reopened.
    # ... and attributes rewritten after they were created are re-created by HDF5 too.
    ("HDF5 re-created a variable (new fill value): order after reopen", lambda op, a, b, ctx: op[0] == "inq" and sorted_entries(a) == sorted_entries(b)),
    ("HDF5 re-created rewritten attributes: order after reopen", lambda op, a, b, ctx: op[0] == "inq" and sorted(a.replace("]", " ").split()) == sorted(b.replace("]", " ").split())),
    # netcdf-c misreads a variable with an unlimited dimension after its first one when its
    # HDF5 dataset is shorter than that dimension (rows shifted, data cut): see above.
    ("netcdf-c misreads variables with a later unlimited dimension", lambda op, a, b, ctx: is_get(op) and later_unlimited(ctx["ops"])),
    # HDF5 leaves an attribute behind when a put fails ("ghost attributes").
    ("HDF5 ghost attribute after a failed put", lambda op, a, b, ctx: op[0] == "inq" and ghost_only(a, b)),
    # HDF5 loses a variable (it lists with no name and no type after reopen) or the rename of
    # a variable named like a dimension ("rename bugs").
    ("HDF5 lost a variable", lambda op, a, b, ctx: op[0] == "inq" and "var[ t=0" in b),
    ("HDF5 lost the rename of a variable named like a dimension", lambda op, a, b, ctx: op[0] == "inq" and renamed_coordinate(ctx["ops"])),
    # Errors only HDF5 has (NC_EHDFERR .. NC_EVARMETA, NC_EDIMSCALE).
    ("HDF5 internal error", lambda op, a, b, ctx: rc_of(b) in ("-101", "-102", "-103", "-104", "-105", "-106", "-107", "-108", "-124")),
    # netcdf-c (HDF5) reads a variable whose HDF5 dataset is shorter than the unlimited
    # dimension it shares with a longer variable as if its rows had the shorter length:
    # the same values, shifted (ours keep their coordinates).
    ("HDF5 rows shifted in a variable shorter than its unlimited dimension", lambda op, a, b, ctx: is_get(op) and same_values(a, b)),
    # netcdf-c keeps a deleted _FillValue as the variable's fill (nc_inq_var_fill, reads).
    ("netcdf-c keeps the fill of a deleted or renamed _FillValue", lambda op, a, b, ctx: (is_get(op) or op[0] == "inq")
     and earlier(ctx, lambda o, r: o[:1] in (["del_att"], ["rename_att"]) and o[3:4] == ["_FillValue"] and r.endswith("rc=0"))),
    # A failed put leaves a ghost attribute in netcdf-c that can then be read or deleted.
    ("netcdf-c ghost attribute after a failed put", lambda op, a, b, ctx: op[0] in ("del_att", "get_att", "rename_att")
     and earlier(ctx, lambda o, r: o[:1] == ["put_att"] and o[1:4] == op[1:4] and not r.endswith("rc=0"))),
    # netcdf-c turns shuffle on for a nc_def_var_deflate it then refuses (level out of range).
    ("netcdf-c applies shuffle of a refused nc_def_var_deflate", lambda op, a, b, ctx: op[0] == "inq"
     and earlier(ctx, lambda o, r: o[:1] == ["def_var_deflate"] and r.endswith("rc=-36"))),
    # With several unlimited dimensions in a group, nc_inq_unlimdim after a reopen answers the
    # first in netcdf-c's own index order (HDF5 link order); ours the lowest id.
    ("first of several unlimited dimensions after reopen", lambda op, a, b, ctx: op[0] == "inq"
     and [w for w in a.split() if not w.startswith("unlim=")] == [w for w in b.split() if not w.startswith("unlim=")]),
    # A no-fill variable never written holds whatever HDF5's storage held (undefined values).
    ("HDF5 no-fill variable never written: undefined values", lambda op, a, b, ctx: is_get(op)
     and earlier(ctx, lambda o, r: (o[:1] == ["def_var_fill"] and o[3:4] == ["1"] or o == ["set_fill", "256"]) and r.endswith("rc=0"))),
    # netcdf-c grows an unlimited dimension for a put it then refuses for its memory type.
    ("netcdf-c grows the unlimited dimension for a refused put", lambda op, a, b, ctx: (is_get(op) or op[0] in ("inq", "put_vara"))
     and earlier(ctx, lambda o, r: o[:1] == ["put_vara"] and (r.endswith("rc=-45") or r.endswith("rc=-56")))),
    # netcdf-c takes an out-of-range deflate level (10) for a variable already deflated (the
    # filter is updated without the level check), and HDF5 then refuses it at nc_close
    # (NC_EFILTER, variables lost); ours refuses the call (NC_EINVAL) as for any variable.
    ("netcdf-c takes deflate level 10 on a deflated variable", lambda op, a, b, ctx: op[0] == "def_var_deflate"
     and op[4:5] == ["1"] and int(op[5]) > 9 and a.endswith("rc=-36") and b.endswith("rc=0")
     and earlier(ctx, lambda o, r: o[:1] == ["def_var_deflate"] and o[1:3] == op[1:3] and o[4:5] == ["1"] and r.endswith("rc=0"))),
    # netcdf-c does not take an attribute renamed to _FillValue as the fill value (reads and
    # nc_inq_var_fill ignore it, and a later no-fill setting keeps it); ours it is.
    ("netcdf-c ignores an attribute renamed to _FillValue", lambda op, a, b, ctx: (is_get(op) or op[0] == "inq")
     and earlier(ctx, lambda o, r: o[:1] == ["rename_att"] and o[4:5] == ["_FillValue"] and r.endswith("rc=0"))),
    # HDF5 keeps the old copy of an attribute that was put again with another type and then
    # renamed: after reopen netcdf-c lists both names ("ghost attributes").
    ("HDF5 keeps a retyped attribute's old name after a rename", lambda op, a, b, ctx: op[0] == "inq" and renamed_ghost(a, b, ctx)),
    # After nc_set_fill(NC_NOFILL), netcdf-c's nc_inq_var_fill reports the new variables'
    # no_fill as the mode's value (256); ours says 1, as the function documents.
    ("netcdf-c reports no_fill as NC_NOFILL (256)", lambda op, a, b, ctx: op[0] == "inq" and a == b.replace("nofill=256", "nofill=1")),
    # nc_def_var_endian with a value that is no byte order: NC_EINVAL (c-api.md 8.3 FIX);
    # netcdf-c takes it (and its NCZarr then stores a wrong dtype).
    ("nc_def_var_endian with no byte order: NC_EINVAL", lambda op, a, b, ctx: op[0] == "def_var_endian"
     and op[3] not in ("0", "1", "2") and a.endswith("rc=-36")),
    # HDF5 moves a renamed group's link to the end of the creation order, so after a reopen
    # netcdf-c lists it after its siblings and the group indexes of the script shift; ours
    # keep the order the groups were made in.
    ("HDF5 lists a renamed group last after reopen", lambda op, a, b, ctx: renamed_group_reopened(ctx)),
    # _NCProperties is hidden by every reader of this library's stores, so it stays reserved in
    # every group (netcdf-c reserves it on the root group only).
    ("_NCProperties reserved in every group", lambda op, a, b, ctx: op[0] in ("put_att", "rename_att") and "_NCProperties" in op and a.endswith("rc=-42")),
]


def sorted_entries(line):
    return sorted(line.replace("] ", "]\n").split("\n"))


def ghost_only(a, b):
    wa, wb = a.replace("]", " ").split(), b.replace("]", " ").split()
    extra = [w for w in wb if w not in wa]
    return bool(extra) and all(w.startswith("@") and w.endswith(":0") for w in extra) and [w for w in wa if w not in wb] == []


def renamed_group_reopened(ctx):
    seen_rename = False
    for o, r in history(ctx):
        if o[:1] == ["rename_grp"] and r.endswith("rc=0"):
            seen_rename = True
        elif o[:1] == ["open"] and seen_rename:
            return True
    return False


def renamed_ghost(a, b, ctx):
    """b = a plus attributes named as ones a successful rename_att renamed away."""
    old = {o[3] for o, r in history(ctx) if o[:1] == ["rename_att"] and r.endswith("rc=0")}
    # (the group's or variable's natts count the ghost too)
    wa, wb = ([w for w in x.replace("]", " ").split() if not w.startswith("natts=")] for x in (a, b))
    extra = [w for w in wb if w not in wa]
    return bool(extra) and all(w.startswith("@") and w[1:].split(":")[0] in old for w in extra) and all(w in wb for w in wa)


def same_values(a, b):
    return a != b and sorted(a.split()) == sorted(b.split())


def later_unlimited(ops):
    unlimited = set()
    for o in ops:
        if o[:1] == ["def_dim"] and o[3:4] == ["0"]:
            unlimited.add(o[2])
        elif o[:1] == ["rename_dim"] and o[2] in unlimited:
            unlimited.add(o[3])
    return any(o[:1] == ["def_var"] and any(d in unlimited for d in o[6:]) for o in ops)


def renamed_coordinate(ops):
    dims = {o[2] for o in ops if o[:1] == ["def_dim"]} | {o[3] for o in ops if o[:1] == ["rename_dim"]}
    named_like_dim = any(o[:1] == ["def_var"] and o[2] in dims for o in ops) or any(o[:1] == ["rename_var"] and o[3] in dims for o in ops)
    return named_like_dim and any(o[:1] in (["rename_var"], ["rename_dim"]) for o in ops)


def rc_of(line):
    return line.rsplit("rc=", 1)[-1] if "rc=" in line else "?"


class Seq:
    """Generates one sequence of calls, keeping a shadow of the dataset to stay mostly valid."""

    def __init__(self, rng, classic):
        self.r = rng
        self.classic = classic
        self.lines = []
        self.groups = [None]  # parent index of each group (root: None)
        self.dims = []  # (group, name, len or None for unlimited); the index is the dimid
        self.vars = [[]]  # per group: (name, type, dimids)
        self.define = True
        self.names = 0

    def name(self, kind):
        self.names += 1
        if self.r.random() < 0.04:
            return self.r.choice(["a/b", "-", "_reserved x", "1st"]).replace(" ", "")
        if self.r.random() < 0.05 and kind == "att":
            return self.r.choice(["_FillValue", "units", "valid_range", "_NCProperties"])
        return "%s%d" % (kind, self.names)

    def types(self):
        return CLASSIC_TYPES if self.classic else ALL_TYPES

    def emit(self, *words):
        self.lines.append(" ".join(str(w) for w in words))

    def visible_dims(self, g):
        out, cur = [], g
        while cur is not None:
            out += [i for i, d in enumerate(self.dims) if d[0] == cur]
            cur = self.groups[cur]
        return out

    def shape(self, g, v):
        return [self.dims[d][2] for d in self.vars[g][v][2]]

    def bad(self):
        return self.r.random() < 0.15

    def op(self):
        r = self.r
        g = r.randrange(len(self.groups))
        if r.random() < 0.08:
            return self.other_op(g)
        choice = r.random()
        if choice < 0.08 and not self.classic and len(self.groups) < 5:
            parent = r.randrange(len(self.groups))
            self.emit("def_grp", parent, self.name("g"))
            self.groups.append(parent)
            self.vars.append([])
        elif choice < 0.22:
            unlimited = r.random() < 0.3 and not (self.classic and any(d[2] is None for d in self.dims))
            length = 0 if unlimited else r.randint(1, 7)
            name = self.name("d")
            self.emit("def_dim", g, name, length)
            self.dims.append((g, name, None if unlimited else length))
        elif choice < 0.40:
            vis = self.visible_dims(g)
            nd = r.randint(0, min(3, len(vis)))
            dims = r.sample(vis, nd)
            if self.classic:
                dims.sort(key=lambda d: self.dims[d][2] is not None)
            t = r.choice(self.types())
            if self.bad():
                dims = dims + [99]
            name = self.name("v")
            self.emit("def_var", g, name, t, len(dims), *[self.dims[d][1] if d != 99 else 99 for d in dims])
            if 99 not in dims and not any(n == name for n, _, _ in self.vars[g]) and "/" not in name and name != "-":
                self.vars[g].append((name, t, dims))
        elif choice < 0.55:
            self.put_att(g)
        elif choice < 0.62:
            v = self.pick_var(g, allow_global=True)
            self.emit("get_att", g, v, self.att_name(), r.choice(ALL_TYPES))
        elif choice < 0.80:
            self.vara(g, put=True)
        elif choice < 0.88:
            self.vara(g, put=False)
        elif choice < 0.91:
            v = self.pick_var(g)
            self.emit("def_var_fill", g, v, int(r.random() < 0.3), r.randrange(1 << 30))
        elif choice < 0.93:
            v = self.pick_var(g)
            nd = len(self.vars[g][v][2]) if 0 <= v < len(self.vars[g]) else 1
            sizes = [r.randint(1, 4) for _ in range(nd)]
            self.emit("def_var_chunking", g, v, 0, len(sizes), *sizes)
        elif choice < 0.94:
            v = self.pick_var(g)
            self.emit("def_var_deflate", g, v, r.randint(0, 1), r.randint(0, 1), r.choice([0, 1, 5, 9, 10]))
        elif choice < 0.955:
            self.emit("rename_att", g, self.pick_var(g, allow_global=True), self.att_name(), self.name("att"))
        elif choice < 0.965:
            self.emit("del_att", g, self.pick_var(g, allow_global=True), self.att_name())
        elif choice < 0.975 and self.dims:
            d = r.randrange(len(self.dims))
            name = self.name("d")
            self.emit("rename_dim", self.dims[d][0], self.dims[d][1], name)
            if "/" not in name and name != "-" and not any(x[1] == name for x in self.dims):
                self.dims[d] = (self.dims[d][0], name, self.dims[d][2])
        elif choice < 0.985:
            v = self.pick_var(g)
            self.emit("rename_var", g, v, self.name("v"))
        elif choice < 0.99:
            self.emit("inq", g)
        else:
            self.mode_switch()

    def other_op(self, g):
        """The calls the main mix leaves out: strided access, byte order, checksums, copies of
        attributes, group renames, the fill mode."""
        r = self.r
        choice = r.random()
        if choice < 0.3 and self.vars[g]:
            v = r.randrange(len(self.vars[g]))
            start, count, stride = [], [], []
            for n in self.shape(g, v):
                n = n if n is not None else r.randint(1, 4)
                s = r.randint(0, n - 1)
                st = r.randint(1, 3)
                c = r.randint(0, (n - 1 - s) // st + 1)
                if self.bad():
                    st = r.choice([0, -1, st + 5])
                start.append(s)
                count.append(c)
                stride.append(st)
            put = r.random() < 0.5
            self.emit("put_vars" if put else "get_vars", g, v, len(start), *start, *count, *stride, *([r.randrange(1 << 30)] if put else []))
        elif choice < 0.45:
            self.emit("def_var_endian", g, self.pick_var(g), r.choice([0, 1, 2, 1, 2, 7]))
        elif choice < 0.55:
            self.emit("def_var_fletcher32", g, self.pick_var(g), r.choice([0, 1, 1, 5]))
        elif choice < 0.7:
            self.emit("copy_att", g, self.pick_var(g, allow_global=True), self.att_name(), self.pick_var(g, allow_global=True))
        elif choice < 0.82:
            self.emit("inq_var", g, self.pick_var(g))
        elif choice < 0.92 and len(self.groups) > 1:
            self.emit("rename_grp", r.randrange(len(self.groups)), self.name("g"))
        else:
            self.emit("set_fill", r.choice([0, 0x100, 0x100, 7]))

    def att_name(self):
        return self.r.choice(["att%d" % self.r.randint(1, max(1, self.names)), "_FillValue", "units"])

    def pick_var(self, g, allow_global=False):
        n = len(self.vars[g])
        if allow_global and (n == 0 or self.r.random() < 0.3):
            return -1
        if n == 0 or self.bad():
            return self.r.choice([n, 42, -2])
        return self.r.randrange(n)

    def put_att(self, g):
        r = self.r
        v = self.pick_var(g, allow_global=True)
        xt = r.choice(self.types())
        mt = xt if r.random() < 0.5 else r.choice(ALL_TYPES)
        if xt == NC_CHAR:
            mt = NC_CHAR
        if xt == NC_STRING:
            mt = NC_STRING
        name = self.name("att")
        length = 1 if r.random() < 0.5 else r.randint(0, 5)
        if name == "_FillValue" and 0 <= v < len(self.vars[g]):
            xt = self.vars[g][v][1]
            mt = xt
            length = 1
        self.emit("put_att", g, v, name, xt, mt, length, r.randrange(1 << 30))

    def vara(self, g, put):
        r = self.r
        if not self.vars[g]:
            return
        v = r.randrange(len(self.vars[g]))
        _, t, dims = self.vars[g][v]
        shape = self.shape(g, v)
        start, count = [], []
        for n in shape:
            if n is None:  # unlimited: puts may grow it
                s = r.randint(0, 4)
                c = r.randint(0, 3) if put else r.randint(0, 2)
            else:
                s = r.randint(0, n - 1)
                c = r.randint(0 if r.random() < 0.05 else 1, n - s)
            if self.bad():
                c += r.randint(1, 3)
            start.append(s)
            count.append(c)
        if t == NC_CHAR:
            mt = NC_CHAR if r.random() < 0.9 else NC_INT
        elif t == NC_STRING:
            mt = NC_STRING if r.random() < 0.9 else NC_DOUBLE
        else:
            mt = r.choice(NUMERIC) if r.random() < 0.95 else NC_CHAR
        if put:
            self.emit("put_vara", g, v, mt, len(shape), *start, *count, r.randrange(1 << 30))
        else:
            self.emit("get_vara", g, v, mt, len(shape), *start, *count)

    def mode_switch(self):
        r = self.r.random()
        if r < 0.4:
            self.emit("enddef" if self.define else "redef")
            self.define = not self.define
        elif r < 0.7:
            self.emit("sync")
            self.define = False
        else:
            self.emit("close")
            self.emit("open", NC_WRITE)
            self.define = False
            # Groups are numbered depth first on reopen: renumber the shadow the same way.
            self.renumber()

    def renumber(self):
        order = []

        def walk(gi):
            order.append(gi)
            for child in [i for i, p in enumerate(self.groups) if p == gi]:
                walk(child)

        walk(0)
        index = {old: new for new, old in enumerate(order)}
        self.groups = [None if self.groups[old] is None else index[self.groups[old]] for old in order]
        self.vars = [self.vars[old] for old in order]
        self.dims = [(index[g], n, l) for g, n, l in self.dims]

    def script(self, nops):
        cmode = NC_NETCDF4 | (NC_CLASSIC_MODEL if self.classic else 0)
        self.emit("create", cmode)
        for _ in range(nops):
            self.op()
        self.emit("close")
        self.emit("open", 0)
        self.renumber()
        for g in range(len(self.groups)):
            self.emit("inq", g)
            self.emit("get_all", g)
        self.emit("close")
        return "\n".join(self.lines) + "\n"


def wheel_library():
    import glob
    import netCDF4

    libs = glob.glob(os.path.join(os.path.dirname(os.path.dirname(netCDF4.__file__)), "netcdf4.libs", "libnetcdf-*"))
    if not libs:
        sys.exit("difftest: the netCDF4 wheel's libnetcdf was not found (pip install netCDF4)")
    return libs[0]


def run(runner, name, script, env):
    try:
        p = subprocess.run([runner, name], input=script, capture_output=True, text=True, env=env, timeout=120)
        return p.returncode, p.stdout.splitlines()
    except subprocess.TimeoutExpired:
        return "timeout", []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops", type=int, default=40)
    ap.add_argument("--keep", default=os.path.join(BUILD, "difftest"))
    ap.add_argument("--show-known", action="store_true", help="print each known divergence")
    args = ap.parse_args()
    runner = os.path.join(BUILD, "oprunner")
    subprocess.run(["cc", "-std=c11", "-O1", "-o", runner, os.path.join(HERE, "oprunner.c"), "-lnetcdf"], check=True)
    wheel = wheel_library()
    ours_env = dict(os.environ, LD_LIBRARY_PATH=BUILD)
    ref_env = dict(os.environ, LD_PRELOAD=wheel)
    ours_env.pop("LD_PRELOAD", None)
    os.makedirs(args.keep, exist_ok=True)
    stores = ["nczarr,file", "nczarr,zip", "nczarr,file,v3"]
    counts = {"agree": 0, "known": 0, "unexplained": 0, "ref-crash": 0, "ours-crash": 0, "compared-lines": 0}
    known_reasons = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.count):
            seed = args.seed + k
            rng = random.Random(seed)
            script = Seq(rng, classic=rng.random() < 0.25).script(args.ops)
            mode = stores[k % len(stores)]
            ours_name = "file://%s/s%d.store#mode=%s" % (tmp, seed, mode)
            ref_name = "%s/s%d.nc" % (tmp, seed)
            rc_ours, ours = run(runner, ours_name, script, ours_env)
            rc_ref, ref = run(runner, ref_name, script, ref_env)
            for p in (ref_name, ours_name.split("#")[0][len("file://"):]):
                shutil.rmtree(p, ignore_errors=True)
                if os.path.exists(p):
                    os.remove(p)
            if rc_ref != 0:
                counts["ref-crash"] += 1
                continue
            if rc_ours != 0:
                counts["ours-crash"] += 1
                save(args.keep, seed, mode, script, ours, ref, "our runner exited %s" % rc_ours)
                continue
            ops = [l.split() for l in script.splitlines()]
            verdict = "agree"
            for i, (a, b) in enumerate(zip(ours, ref)):
                counts["compared-lines"] += 1
                if a == b:
                    continue
                op = ops[i] if i < len(ops) else ["?"]
                reason = next((why for why, pred in KNOWN if pred(op, a, b, {"ops": ops, "ref": ref, "ours": ours, "i": i})), None)
                if reason:
                    if args.show_known:
                        print("known: seed %d line %d (%s): %s\n  ours: %s\n  ref:  %s" % (seed, i + 1, reason, " ".join(op), a[:200], b[:200]))
                    verdict = "known"
                    known_reasons[reason] = known_reasons.get(reason, 0) + 1
                else:
                    verdict = "unexplained"
                    save(args.keep, seed, mode, script, ours, ref, "line %d differs:\n  ours: %s\n  ref:  %s" % (i + 1, a, b))
                break
            else:
                if len(ours) != len(ref):
                    verdict = "unexplained"
                    save(args.keep, seed, mode, script, ours, ref, "transcripts differ in length")
            counts[verdict] += 1
    print("difftest: %d sequences (seeds %d..%d, %d ops each, %s): %s" % (
        args.count, args.seed, args.seed + args.count - 1, args.ops, "/".join(stores),
        ", ".join("%s %d" % kv for kv in counts.items())))
    for why, n in sorted(known_reasons.items()):
        print("  known (%d): %s" % (n, why))
    if counts["unexplained"] or counts["ours-crash"]:
        print("difftest: FAILED; scripts and transcripts in %s" % args.keep)
        sys.exit(1)


def save(keep, seed, mode, script, ours, ref, why):
    base = os.path.join(keep, "seed%d" % seed)
    with open(base + ".ops", "w") as f:
        f.write(script)
    with open(base + ".ours", "w") as f:
        f.write("\n".join(ours) + "\n")
    with open(base + ".ref", "w") as f:
        f.write("\n".join(ref) + "\n")
    print("difftest: seed %d (%s): %s" % (seed, mode, why))


if __name__ == "__main__":
    main()

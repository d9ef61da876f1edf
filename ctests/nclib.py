"""A small ctypes view of our library for the Python tests: open a dataset and describe its
groups, dimensions, variables and attributes as plain Python values."""
import ctypes
import os

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
lib = ctypes.CDLL(os.path.join(TOP, "build", "libnetcdf.so.19"))
lib.nc_strerror.restype = ctypes.c_char_p
TYPES = {1: "byte", 2: "char", 3: "short", 4: "int", 5: "float", 6: "double", 7: "ubyte", 8: "ushort",
         9: "uint", 10: "int64", 11: "uint64", 12: "string"}
CTYPES = {1: ctypes.c_int8, 3: ctypes.c_int16, 4: ctypes.c_int32, 5: ctypes.c_float, 6: ctypes.c_double,
          7: ctypes.c_uint8, 8: ctypes.c_uint16, 9: ctypes.c_uint32, 10: ctypes.c_int64, 11: ctypes.c_uint64}


class NcError(Exception):
    def __init__(self, code):
        super().__init__(f"{code}: {lib.nc_strerror(code).decode()}")
        self.code = code


def call(fn, *args):
    rc = fn(*args)
    if rc != 0:
        raise NcError(rc)


def att_value(ncid, varid, name):
    t, n = ctypes.c_int(), ctypes.c_size_t()
    call(lib.nc_inq_att, ncid, varid, name.encode(), ctypes.byref(t), ctypes.byref(n))
    if t.value == 2:
        buf = ctypes.create_string_buffer(n.value + 1)
        call(lib.nc_get_att_text, ncid, varid, name.encode(), buf)
        return ("char", buf.raw[: n.value].decode("utf-8", "replace"))
    if t.value == 12:
        arr = (ctypes.c_char_p * max(n.value, 1))()
        call(lib.nc_get_att_string, ncid, varid, name.encode(), arr)
        vals = [arr[i].decode() if arr[i] is not None else None for i in range(n.value)]
        lib.nc_free_string(ctypes.c_size_t(n.value), arr)
        return ("string", vals)
    arr = (CTYPES[t.value] * max(n.value, 1))()
    call(lib.nc_get_att, ncid, varid, name.encode(), arr)
    return (TYPES[t.value], [arr[i] for i in range(n.value)])


def atts(ncid, varid, count):
    out = {}
    for i in range(count):
        buf = ctypes.create_string_buffer(257)
        call(lib.nc_inq_attname, ncid, varid, i, buf)
        out[buf.value.decode()] = att_value(ncid, varid, buf.value.decode())
    return out


def describe_group(ncid):
    nd, nv, na = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    call(lib.nc_inq, ncid, ctypes.byref(nd), ctypes.byref(nv), ctypes.byref(na), None)
    dimids = (ctypes.c_int * max(nd.value, 1))()
    call(lib.nc_inq_dimids, ncid, None, dimids, 0)
    dims = {}
    for i in range(nd.value):
        buf, ln = ctypes.create_string_buffer(257), ctypes.c_size_t()
        call(lib.nc_inq_dim, ncid, dimids[i], buf, ctypes.byref(ln))
        dims[buf.value.decode()] = ln.value
    variables = {}
    for v in range(nv.value):
        buf, t, vnd, vna = ctypes.create_string_buffer(257), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        ids = (ctypes.c_int * 1024)()
        call(lib.nc_inq_var, ncid, v, buf, ctypes.byref(t), ctypes.byref(vnd), ids, ctypes.byref(vna))
        names = []
        for i in range(vnd.value):
            dbuf = ctypes.create_string_buffer(257)
            call(lib.nc_inq_dimname, ncid, ids[i], dbuf)
            names.append(dbuf.value.decode())
        variables[buf.value.decode()] = {"type": TYPES[t.value], "dims": names, "atts": atts(ncid, v, vna.value)}
    ng = ctypes.c_int()
    call(lib.nc_inq_grps, ncid, ctypes.byref(ng), None)
    gids = (ctypes.c_int * max(ng.value, 1))()
    call(lib.nc_inq_grps, ncid, None, gids)
    groups = {}
    for i in range(ng.value):
        buf = ctypes.create_string_buffer(257)
        call(lib.nc_inq_grpname, gids[i], buf)
        groups[buf.value.decode()] = describe_group(gids[i])
    return {"dims": dims, "vars": variables, "atts": atts(ncid, -1, na.value), "groups": groups}


def describe(url):
    ncid = ctypes.c_int()
    call(lib.nc_open, url.encode(), 0, ctypes.byref(ncid))
    try:
        return describe_group(ncid.value)
    finally:
        lib.nc_close(ncid.value)


def _find(ncid, path):
    """(group ncid, varid) of a variable given as 'g1/g2/name'."""
    *groups, name = path.split("/")
    gid = ncid
    for g in groups:
        child = ctypes.c_int()
        call(lib.nc_inq_grp_ncid, gid, g.encode(), ctypes.byref(child))
        gid = child.value
    varid = ctypes.c_int()
    call(lib.nc_inq_varid, gid, name.encode(), ctypes.byref(varid))
    return gid, varid.value


def read(url, path):
    """A variable's values, flattened: floats for numbers, str for strings and chars."""
    ncid = ctypes.c_int()
    call(lib.nc_open, url.encode(), 0, ctypes.byref(ncid))
    try:
        gid, varid = _find(ncid.value, path)
        t, nd = ctypes.c_int(), ctypes.c_int()
        ids = (ctypes.c_int * 1024)()
        call(lib.nc_inq_var, gid, varid, None, ctypes.byref(t), ctypes.byref(nd), ids, None)
        n = 1
        for i in range(nd.value):
            ln = ctypes.c_size_t()
            call(lib.nc_inq_dimlen, gid, ids[i], ctypes.byref(ln))
            n *= ln.value
        if t.value == 12:
            arr = (ctypes.c_char_p * max(n, 1))()
            call(lib.nc_get_var_string, gid, varid, arr)
            out = [arr[i].decode() if arr[i] is not None else None for i in range(n)]
            lib.nc_free_string(ctypes.c_size_t(n), arr)
            return out
        if t.value == 2:
            buf = ctypes.create_string_buffer(max(n, 1))
            call(lib.nc_get_var_text, gid, varid, buf)
            return buf.raw[:n].decode("latin-1")
        arr = (ctypes.c_double * max(n, 1))()
        call(lib.nc_get_var_double, gid, varid, arr)
        return [arr[i] for i in range(n)]
    finally:
        lib.nc_close(ncid.value)

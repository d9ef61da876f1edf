/* The differential tester's runner: executes a script of nc_* calls on one dataset and prints
 * one line per call with its return code and what it returned. The same script runs against
 * our library and against netcdf-c 4.10.1 (HDF5); difftest.py compares the two outputs.
 *
 *   oprunner DATASET-NAME < script
 *
 * Script lines: an operation name and its arguments, separated by spaces. Groups are named by
 * their index in the order they were made (0 = the root of the open dataset); values put are
 * generated from a seed, so both runs write identical bytes. Names are printable ASCII
 * without spaces ("-" stands for the empty name). */
#include <netcdf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXG 64
#define MAXELEMS 100000

static int grp[MAXG], ngrp;
static int ncid = -1;

static const char *name_arg(const char *s)
{
    return strcmp(s, "-") == 0 ? "" : s;
}

/* A deterministic pseudo-random sequence per seed and index. */
static uint64_t rnd(uint64_t seed, uint64_t i)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + 1;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return x;
}

/* Fills `n` values of memory type `t` from `seed`: mostly small numbers, some at or past
 * the edges of narrower types (so conversions and NC_ERANGE are exercised). */
static void gen(int t, uint64_t seed, size_t n, void *out, char *strbuf)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd(seed, i);
        int edge = (r % 11) == 0;
        long long small = (long long)(r % 200) - 100;
        long long big = (r & 1) ? 300 : (r & 2) ? 70000 : (r & 4) ? 5000000000ll : -129;
        long long v = edge ? big : small;
        switch (t) {
        case NC_BYTE: ((signed char *)out)[i] = (signed char)(edge ? (r & 1 ? 127 : -128) : small); break;
        case NC_UBYTE: ((unsigned char *)out)[i] = (unsigned char)(edge ? 255 : (r % 200)); break;
        case NC_CHAR: ((char *)out)[i] = (char)('a' + r % 26); break;
        case NC_SHORT: ((short *)out)[i] = (short)(edge ? (r & 1 ? 32767 : -32768) : v); break;
        case NC_USHORT: ((unsigned short *)out)[i] = (unsigned short)(edge ? 65535 : (r % 1000)); break;
        case NC_INT: ((int *)out)[i] = (int)(edge ? (int)(r & 0x7fffffff) * ((r & 8) ? -1 : 1) : v); break;
        case NC_UINT: ((unsigned *)out)[i] = (unsigned)(edge ? (unsigned)r : (unsigned)(r % 1000)); break;
        case NC_INT64: ((long long *)out)[i] = v; break;
        case NC_UINT64: ((unsigned long long *)out)[i] = edge ? r : r % 1000; break;
        case NC_FLOAT: ((float *)out)[i] = edge ? (r & 1 ? 3.0e38f : -1.5e10f) : (float)small / 4.0f; break;
        case NC_DOUBLE: ((double *)out)[i] = edge ? (r & 1 ? 1e300 : -7e9) : (double)small / 8.0; break;
        case NC_STRING: {
            char *s = strbuf + i * 24;
            snprintf(s, 24, "s%llu", (unsigned long long)(r % (edge ? 100000000 : 1000)));
            ((char **)out)[i] = s;
            break;
        }
        }
    }
}

static void print_values(int t, size_t n, const void *p)
{
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case NC_BYTE: printf(" %d", ((const signed char *)p)[i]); break;
        case NC_UBYTE: printf(" %u", ((const unsigned char *)p)[i]); break;
        case NC_CHAR: printf(" %02x", ((const unsigned char *)p)[i]); break;
        case NC_SHORT: printf(" %d", ((const short *)p)[i]); break;
        case NC_USHORT: printf(" %u", ((const unsigned short *)p)[i]); break;
        case NC_INT: printf(" %d", ((const int *)p)[i]); break;
        case NC_UINT: printf(" %u", ((const unsigned *)p)[i]); break;
        case NC_INT64: printf(" %lld", ((const long long *)p)[i]); break;
        case NC_UINT64: printf(" %llu", ((const unsigned long long *)p)[i]); break;
        case NC_FLOAT: printf(" %.9g", ((const float *)p)[i]); break;
        case NC_DOUBLE: printf(" %.17g", ((const double *)p)[i]); break;
        case NC_STRING: {
            const char *s = ((char *const *)p)[i];
            printf(" \"%s\"", s ? s : "(null)");
            break;
        }
        }
    }
}

/* A dimension by name as seen from group g (numeric: a raw id, for the wrong-id cases):
 * dimension ids after a reopen are each library's own numbering. */
static int dim_of(int g, const char *s)
{
    int id = -1;
    if (strspn(s, "0123456789") == strlen(s)) return atoi(s);
    return nc_inq_dimid(g, s, &id) ? -7 : id;
}

/* The names, types and lengths of a variable's (or a group's) attributes, in order. */
static void print_atts(int g, int v, int n)
{
    for (int a = 0; a < n; a++) {
        char an[NC_MAX_NAME + 1] = "";
        nc_type at = 0;
        size_t al = 0;
        nc_inq_attname(g, v, a, an);
        nc_inq_att(g, v, an, &at, &al);
        printf(" @%s:%d:%zu", an, at, al);
    }
}

static int g_of(const char *s)
{
    int i = atoi(s);
    return i >= 0 && i < ngrp ? grp[i] : -12345;
}

/* The group table of a freshly opened dataset: the root, then every group depth first. */
static void walk_groups(int id)
{
    if (ngrp >= MAXG) return;
    grp[ngrp++] = id;
    int n = 0, ids[MAXG];
    if (nc_inq_grps(id, &n, NULL) || n > MAXG) return;
    nc_inq_grps(id, &n, ids);
    for (int i = 0; i < n; i++) walk_groups(ids[i]);
}

int main(int argc, char **argv)
{
    const char *path = argv[1];
    char line[8192];
    int lineno = 0;
    static char strbuf[MAXELEMS * 24];
    static unsigned char buf[MAXELEMS * 8], buf2[MAXELEMS * 8];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        lineno++;
        char *tok[600];
        int nt = 0;
        for (char *p = strtok(line, " \n"); p && nt < 600; p = strtok(NULL, " \n")) tok[nt++] = p;
        if (nt == 0) continue;
        const char *op = tok[0];
        int rc = 0;
        printf("%d %s", lineno, op);
#define ARG(i) (i < nt ? tok[i] : "0")
#define I(i) atoi(ARG(i))
        if (!strcmp(op, "create")) {
            rc = nc_create(path, I(1), &ncid);
            ngrp = 0;
            if (!rc) grp[ngrp++] = ncid;
        } else if (!strcmp(op, "open")) {
            rc = nc_open(path, I(1), &ncid);
            ngrp = 0;
            if (!rc) walk_groups(ncid);
        } else if (!strcmp(op, "close")) {
            rc = nc_close(ncid);
        } else if (!strcmp(op, "sync")) {
            rc = nc_sync(ncid);
        } else if (!strcmp(op, "redef")) {
            rc = nc_redef(ncid);
        } else if (!strcmp(op, "enddef")) {
            rc = nc_enddef(ncid);
        } else if (!strcmp(op, "set_fill")) {
            int old = -1;
            rc = nc_set_fill(ncid, I(1), &old);
            if (!rc) printf(" old=%d", old);
        } else if (!strcmp(op, "def_grp")) {
            int id = -1;
            rc = nc_def_grp(g_of(ARG(1)), name_arg(ARG(2)), &id);
            if (!rc && ngrp < MAXG) grp[ngrp++] = id;
        } else if (!strcmp(op, "rename_grp")) {
            rc = nc_rename_grp(g_of(ARG(1)), name_arg(ARG(2)));
        } else if (!strcmp(op, "def_dim")) {
            int id = -1;
            rc = nc_def_dim(g_of(ARG(1)), name_arg(ARG(2)), (size_t)atoll(ARG(3)), &id);
            if (!rc) printf(" id=%d", id);
        } else if (!strcmp(op, "rename_dim")) {
            rc = nc_rename_dim(g_of(ARG(1)), dim_of(g_of(ARG(1)), ARG(2)), name_arg(ARG(3)));
        } else if (!strcmp(op, "def_var")) {
            int id = -1, dims[64], nd = I(4);
            for (int i = 0; i < nd && i < 64; i++) dims[i] = dim_of(g_of(ARG(1)), ARG(5 + i));
            rc = nc_def_var(g_of(ARG(1)), name_arg(ARG(2)), I(3), nd, dims, &id);
            if (!rc) printf(" id=%d", id);
        } else if (!strcmp(op, "rename_var")) {
            rc = nc_rename_var(g_of(ARG(1)), I(2), name_arg(ARG(3)));
        } else if (!strcmp(op, "def_var_fill")) {
            int g = g_of(ARG(1)), v = I(2), t = NC_INT;
            nc_inq_vartype(g, v, &t);
            gen(t, (uint64_t)atoll(ARG(4)), 1, buf, strbuf);
            rc = nc_def_var_fill(g, v, I(3), buf);
        } else if (!strcmp(op, "def_var_chunking")) {
            size_t sizes[64];
            int n = I(4);
            for (int i = 0; i < n && i < 64; i++) sizes[i] = (size_t)atoll(ARG(5 + i));
            rc = nc_def_var_chunking(g_of(ARG(1)), I(2), I(3), n ? sizes : NULL);
        } else if (!strcmp(op, "def_var_deflate")) {
            rc = nc_def_var_deflate(g_of(ARG(1)), I(2), I(3), I(4), I(5));
        } else if (!strcmp(op, "put_att")) {
            /* put_att G VARID NAME XTYPE MEMTYPE LEN SEED */
            int g = g_of(ARG(1)), v = I(2), xt = I(4), mt = I(5);
            size_t len = (size_t)atoll(ARG(6));
            if (len > 1000) len = 1000;
            gen(mt, (uint64_t)atoll(ARG(7)), len, buf, strbuf);
            const char *name = name_arg(ARG(3));
            switch (mt) {
            case NC_CHAR: rc = nc_put_att_text(g, v, name, len, (char *)buf); break;
            case NC_STRING: rc = nc_put_att_string(g, v, name, len, (const char **)buf); break;
            case NC_BYTE: rc = nc_put_att_schar(g, v, name, xt, len, (signed char *)buf); break;
            case NC_UBYTE: rc = nc_put_att_ubyte(g, v, name, xt, len, buf); break;
            case NC_SHORT: rc = nc_put_att_short(g, v, name, xt, len, (short *)buf); break;
            case NC_USHORT: rc = nc_put_att_ushort(g, v, name, xt, len, (unsigned short *)buf); break;
            case NC_INT: rc = nc_put_att_int(g, v, name, xt, len, (int *)buf); break;
            case NC_UINT: rc = nc_put_att_uint(g, v, name, xt, len, (unsigned *)buf); break;
            case NC_INT64: rc = nc_put_att_longlong(g, v, name, xt, len, (long long *)buf); break;
            case NC_UINT64: rc = nc_put_att_ulonglong(g, v, name, xt, len, (unsigned long long *)buf); break;
            case NC_FLOAT: rc = nc_put_att_float(g, v, name, xt, len, (float *)buf); break;
            case NC_DOUBLE: rc = nc_put_att_double(g, v, name, xt, len, (double *)buf); break;
            default: rc = nc_put_att(g, v, name, xt, len, buf); break;
            }
        } else if (!strcmp(op, "get_att")) {
            /* get_att G VARID NAME MEMTYPE: its type and length, then the values */
            int g = g_of(ARG(1)), v = I(2), mt = I(4), t = 0;
            size_t len = 0;
            const char *name = name_arg(ARG(3));
            rc = nc_inq_att(g, v, name, &t, &len);
            if (!rc) {
                printf(" type=%d len=%zu", t, len);
                if (len > MAXELEMS) len = MAXELEMS;
                memset(buf, 0, sizeof buf);
                switch (mt) {
                case NC_CHAR: rc = nc_get_att_text(g, v, name, (char *)buf); break;
                case NC_STRING: rc = nc_get_att_string(g, v, name, (char **)buf); break;
                case NC_BYTE: rc = nc_get_att_schar(g, v, name, (signed char *)buf); break;
                case NC_UBYTE: rc = nc_get_att_ubyte(g, v, name, buf); break;
                case NC_SHORT: rc = nc_get_att_short(g, v, name, (short *)buf); break;
                case NC_USHORT: rc = nc_get_att_ushort(g, v, name, (unsigned short *)buf); break;
                case NC_INT: rc = nc_get_att_int(g, v, name, (int *)buf); break;
                case NC_UINT: rc = nc_get_att_uint(g, v, name, (unsigned *)buf); break;
                case NC_INT64: rc = nc_get_att_longlong(g, v, name, (long long *)buf); break;
                case NC_UINT64: rc = nc_get_att_ulonglong(g, v, name, (unsigned long long *)buf); break;
                case NC_FLOAT: rc = nc_get_att_float(g, v, name, (float *)buf); break;
                case NC_DOUBLE: rc = nc_get_att_double(g, v, name, (double *)buf); break;
                }
                if (rc == 0 || rc == NC_ERANGE) print_values(mt, len, buf);
                if (mt == NC_STRING && (rc == 0 || rc == NC_ERANGE)) nc_free_string(len, (char **)buf);
            }
        } else if (!strcmp(op, "del_att")) {
            rc = nc_del_att(g_of(ARG(1)), I(2), name_arg(ARG(3)));
        } else if (!strcmp(op, "rename_att")) {
            rc = nc_rename_att(g_of(ARG(1)), I(2), name_arg(ARG(3)), name_arg(ARG(4)));
        } else if (!strcmp(op, "put_vara") || !strcmp(op, "get_vara")) {
            /* put_vara G VARID MEMTYPE RANK START... COUNT... SEED (get_vara without SEED) */
            int g = g_of(ARG(1)), v = I(2), mt = I(3), rank = I(4);
            size_t start[32] = {0}, count[32] = {0}, n = 1;
            if (rank > 32) rank = 32;
            for (int i = 0; i < rank; i++) {
                start[i] = (size_t)atoll(ARG(5 + i));
                count[i] = (size_t)atoll(ARG(5 + rank + i));
                n *= count[i];
            }
            if (n > MAXELEMS) {
                printf(" skipped-large\n");
                continue;
            }
            int put = op[0] == 'p';
            memset(buf, 0, sizeof buf);
            if (put) gen(mt, (uint64_t)atoll(ARG(5 + 2 * rank)), n, buf, strbuf);
            void *p = buf;
            if (put) {
                switch (mt) {
                case NC_CHAR: rc = nc_put_vara_text(g, v, start, count, p); break;
                case NC_STRING: rc = nc_put_vara_string(g, v, start, count, p); break;
                case NC_BYTE: rc = nc_put_vara_schar(g, v, start, count, p); break;
                case NC_UBYTE: rc = nc_put_vara_ubyte(g, v, start, count, p); break;
                case NC_SHORT: rc = nc_put_vara_short(g, v, start, count, p); break;
                case NC_USHORT: rc = nc_put_vara_ushort(g, v, start, count, p); break;
                case NC_INT: rc = nc_put_vara_int(g, v, start, count, p); break;
                case NC_UINT: rc = nc_put_vara_uint(g, v, start, count, p); break;
                case NC_INT64: rc = nc_put_vara_longlong(g, v, start, count, p); break;
                case NC_UINT64: rc = nc_put_vara_ulonglong(g, v, start, count, p); break;
                case NC_FLOAT: rc = nc_put_vara_float(g, v, start, count, p); break;
                case NC_DOUBLE: rc = nc_put_vara_double(g, v, start, count, p); break;
                }
            } else {
                switch (mt) {
                case NC_CHAR: rc = nc_get_vara_text(g, v, start, count, p); break;
                case NC_STRING: rc = nc_get_vara_string(g, v, start, count, p); break;
                case NC_BYTE: rc = nc_get_vara_schar(g, v, start, count, p); break;
                case NC_UBYTE: rc = nc_get_vara_ubyte(g, v, start, count, p); break;
                case NC_SHORT: rc = nc_get_vara_short(g, v, start, count, p); break;
                case NC_USHORT: rc = nc_get_vara_ushort(g, v, start, count, p); break;
                case NC_INT: rc = nc_get_vara_int(g, v, start, count, p); break;
                case NC_UINT: rc = nc_get_vara_uint(g, v, start, count, p); break;
                case NC_INT64: rc = nc_get_vara_longlong(g, v, start, count, p); break;
                case NC_UINT64: rc = nc_get_vara_ulonglong(g, v, start, count, p); break;
                case NC_FLOAT: rc = nc_get_vara_float(g, v, start, count, p); break;
                case NC_DOUBLE: rc = nc_get_vara_double(g, v, start, count, p); break;
                }
                if (rc == 0 || rc == NC_ERANGE) print_values(mt, n, p);
                if (mt == NC_STRING && (rc == 0 || rc == NC_ERANGE)) nc_free_string(n, (char **)p);
            }
        } else if (!strcmp(op, "put_vars") || !strcmp(op, "get_vars")) {
            /* put_vars G VARID RANK START... COUNT... STRIDE... SEED (get_vars without SEED):
             * strided, in the variable's own type */
            int g = g_of(ARG(1)), v = I(2), rank = I(3), t = NC_INT;
            size_t start[32] = {0}, count[32] = {0}, n = 1;
            ptrdiff_t stride[32] = {0};
            if (rank > 32) rank = 32;
            for (int i = 0; i < rank; i++) {
                start[i] = (size_t)atoll(ARG(4 + i));
                count[i] = (size_t)atoll(ARG(4 + rank + i));
                stride[i] = (ptrdiff_t)atoll(ARG(4 + 2 * rank + i));
                n *= count[i];
            }
            if (n > MAXELEMS) {
                printf(" skipped-large\n");
                continue;
            }
            nc_inq_vartype(g, v, &t);
            if (t > NC_STRING) t = NC_INT;
            memset(buf, 0, sizeof buf);
            if (op[0] == 'p') {
                gen(t, (uint64_t)atoll(ARG(4 + 3 * rank)), n, buf, strbuf);
                rc = nc_put_vars(g, v, start, count, stride, buf);
            } else {
                rc = nc_get_vars(g, v, start, count, stride, buf);
                if (rc == 0) print_values(t, n, buf);
                if (rc == 0 && t == NC_STRING) nc_free_string(n, (char **)buf);
            }
        } else if (!strcmp(op, "def_var_endian")) {
            rc = nc_def_var_endian(g_of(ARG(1)), I(2), I(3));
        } else if (!strcmp(op, "def_var_fletcher32")) {
            rc = nc_def_var_fletcher32(g_of(ARG(1)), I(2), I(3));
        } else if (!strcmp(op, "copy_att")) {
            /* copy_att G VARID NAME VARID_OUT: within the group */
            rc = nc_copy_att(g_of(ARG(1)), I(2), name_arg(ARG(3)), g_of(ARG(1)), I(4));
        } else if (!strcmp(op, "inq_var")) {
            /* inq_var G VARID: byte order and checksum settings. NCZarr reports a variable
             * whose order was never set as NC_ENDIAN_LITTLE, HDF5 as NC_ENDIAN_NATIVE: the same
             * bytes on this (little-endian) machine, so both print as "le". */
            int g = g_of(ARG(1)), v = I(2), endian = -1, fl = -1;
            rc = nc_inq_var_endian(g, v, &endian);
            if (!rc) rc = nc_inq_var_fletcher32(g, v, &fl);
            if (!rc) printf(" endian=%s fletcher32=%d", endian == NC_ENDIAN_BIG ? "be" : endian == NC_ENDIAN_LITTLE || endian == NC_ENDIAN_NATIVE ? "le" : "?", fl);
        } else if (!strcmp(op, "inq")) {
            /* inq G: counts, then every dimension and variable with its attributes' names */
            int g = g_of(ARG(1)), nd = 0, nv = 0, na = 0, ul = -2;
            rc = nc_inq(g, &nd, &nv, &na, &ul);
            if (!rc) {
                /* Dimensions by name: ids after a reopen are numbered as each library reads the
                 * file (HDF5 keeps creation order in _Netcdf4Dimid; NCZarr numbers depth first). */
                char uname[NC_MAX_NAME + 1] = "-";
                if (ul >= 0) nc_inq_dimname(g, ul, uname);
                printf(" ndims=%d nvars=%d natts=%d unlim=%s", nd, nv, na, uname);
                int dimids[256], nd2 = 0;
                nc_inq_dimids(g, &nd2, dimids, 0);
                for (int i = 0; i < nd2 && i < 256; i++) {
                    char name[NC_MAX_NAME + 1] = "";
                    size_t len = 0;
                    nc_inq_dim(g, dimids[i], name, &len);
                    printf(" dim[%s=%zu]", name, len);
                }
                for (int v = 0; v < nv; v++) {
                    char name[NC_MAX_NAME + 1] = "";
                    int t = 0, vnd = 0, vd[64], vna = 0, nofill = -1;
                    nc_inq_var(g, v, name, &t, &vnd, vd, &vna);
                    printf(" var[%s t=%d", name, t);
                    for (int k = 0; k < vnd && k < 64; k++) {
                        char dn[NC_MAX_NAME + 1] = "?";
                        nc_inq_dimname(g, vd[k], dn);
                        printf(" (%s)", dn);
                    }
                    nc_inq_var_fill(g, v, &nofill, buf2);
                    printf(" nofill=%d", nofill);
                    if (!nofill && t != NC_STRING) print_values(t, 1, buf2);
                    int sh = -1, de = -1, lv = -1;
                    nc_inq_var_deflate(g, v, &sh, &de, &lv);
                    printf(" shuffle=%d deflate=%d level=%d", sh, de, lv);
                    print_atts(g, v, vna);
                    printf("]");
                }
                print_atts(g, NC_GLOBAL, na);
            }
        } else if (!strcmp(op, "get_all")) {
            /* get_all G: every variable of the group whole, in its own type */
            int g = g_of(ARG(1)), nv = 0;
            rc = nc_inq_nvars(g, &nv);
            for (int v = 0; !rc && v < nv; v++) {
                int t = 0, nd = 0, dims[64];
                size_t n = 1, len;
                nc_inq_var(g, v, NULL, &t, &nd, dims, NULL);
                for (int k = 0; k < nd && k < 64; k++) {
                    nc_inq_dimlen(g, dims[k], &len);
                    n *= len;
                }
                printf(" v%d:", v);
                if (n > MAXELEMS || t > NC_STRING) {
                    printf(" skipped");
                    continue;
                }
                memset(buf, 0, sizeof buf);
                int r = nc_get_var(g, v, buf);
                printf(" rc%d", r);
                if (!r) print_values(t, n, buf);
                if (!r && t == NC_STRING) nc_free_string(n, (char **)buf);
            }
        } else {
            printf(" unknown-op");
        }
        printf(" rc=%d\n", rc);
    }
    return 0;
}

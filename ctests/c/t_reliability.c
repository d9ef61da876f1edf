/* Reliability defects found by differential and hostile-input testing (issue 23, the
 * reproductions in ctests/fixtures/repro/): each block failed before its fix. Expected codes are
 * netcdf-c 4.10.1's on the same calls (netCDF-4/HDF5), where the item is a divergence. */
#include "check.h"
#include "netcdf_nczarr.h"
#include "netcdf_filter.h"
#include "netcdf_aux.h"
#include <math.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>

/* The path of an object inside a directory store. */
static const char *obj(const char *dir, const char *store, const char *key)
{
    static char b[4096];
    snprintf(b, sizeof b, "%s/%s/%s", dir, store, key);
    return b;
}

/* 1. zip_close.c: a zip dataset reopened for write and rewritten keeps the rewrite. */
static void zip_rewrite(const char *dir)
{
    const char *u = url(dir, "zc.zip", "nczarr,zip");
    int ncid, du, da, v;
    OK(nc_create(u, NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "u", NC_UNLIMITED, &du));
    OK(nc_def_dim(ncid, "a", NC_UNLIMITED, &da));
    int dims[2] = {da, du};
    OK(nc_def_var(ncid, "Q", NC_UINT, 2, dims, &v));
    size_t st[2] = {0, 2}, ct[2] = {2, 1};
    unsigned two[2] = {0, 194};
    OK(nc_put_vara_uint(ncid, v, st, ct, two));
    OK(nc_close(ncid));
    unsigned six[6] = {294, 219, 1051620808, 183, 38, 132}, back[6] = {0};
    for (int round = 0; round < 2; round++) {
        OK(nc_open(u, NC_WRITE, &ncid));
        six[0] += round;
        OK(nc_put_var_uint(ncid, v, six));
        OK(nc_close(ncid));
        OK(nc_open(u, NC_NOWRITE, &ncid));
        OK(nc_get_var_uint(ncid, v, back));
        CHECK(memcmp(back, six, sizeof six) == 0);
        OK(nc_close(ncid));
    }
}

/* 2. fill_inf.c: ±Inf and NaN fills (with payloads) of both float types reopen and read back,
 * as attribute and as fill value, v2 and v3. */
static void inf_fills(const char *dir)
{
    const char *modes[2] = {"nczarr,file", "nczarr,file,v3"};
    uint32_t payload = 0x7fc00123u;
    float fpay;
    memcpy(&fpay, &payload, 4);
    float fills[4] = {INFINITY, -INFINITY, NAN, fpay};
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 4; k++)
            for (int how = 0; how < 2; how++) {
                char name[64];
                snprintf(name, sizeof name, "inf-%d-%d-%d", m, k, how);
                const char *u = url(dir, name, modes[m]);
                int ncid, d, vf, vd;
                double dfill = fills[k];
                OK(nc_create(u, NC_NETCDF4, &ncid));
                OK(nc_def_dim(ncid, "x", 2, &d));
                OK(nc_def_var(ncid, "f", NC_FLOAT, 1, &d, &vf));
                OK(nc_def_var(ncid, "d", NC_DOUBLE, 1, &d, &vd));
                if (how == 0) {
                    OK(nc_put_att_float(ncid, vf, "_FillValue", NC_FLOAT, 1, &fills[k]));
                    OK(nc_put_att_double(ncid, vd, "_FillValue", NC_DOUBLE, 1, &dfill));
                } else {
                    OK(nc_def_var_fill(ncid, vf, 0, &fills[k]));
                    OK(nc_def_var_fill(ncid, vd, 0, &dfill));
                }
                OK(nc_put_att_float(ncid, NC_GLOBAL, "fa", NC_FLOAT, 1, &fills[k]));
                OK(nc_close(ncid));
                EXPECT(NC_NOERR, nc_open(u, NC_NOWRITE, &ncid));
                float f = 0, data[2] = {0, 0}, fa = 0;
                double dd = 0;
                OK(nc_get_att_float(ncid, vf, "_FillValue", &f));
                OK(nc_get_att_double(ncid, vd, "_FillValue", &dd));
                OK(nc_get_att_float(ncid, NC_GLOBAL, "fa", &fa));
                OK(nc_get_var_float(ncid, vf, data));
                /* Bit for bit: NaN payloads included, v2 as v3. */
                CHECK(memcmp(&f, &fills[k], 4) == 0);
                CHECK(memcmp(&data[1], &fills[k], 4) == 0);
                CHECK(memcmp(&dd, &dfill, 8) == 0);
                CHECK(memcmp(&fa, &fills[k], 4) == 0);
                OK(nc_close(ncid));
            }
}

/* 3. NC_CHAR is bytes: text that is not UTF-8 (Latin-1) keeps every byte, attribute and char
 * fill alike, v2 and v3; so does a store netcdf-c wrote with those bytes raw in its JSON. */
static void char_bytes(const char *dir)
{
    const char *modes[3] = {"nczarr,file", "nczarr,file,v3", "nczarr,zip"};
    for (int m = 0; m < 3; m++) {
        char name[32];
        snprintf(name, sizeof name, "latin1-%d", m);
        const char *u = url(dir, name, modes[m]);
        int ncid, d, v;
        char fill = '\xe9', data[2] = {0, 0}, buf[8] = {0};
        size_t len = 0;
        OK(nc_create(u, NC_NETCDF4, &ncid));
        OK(nc_def_dim(ncid, "x", 2, &d));
        OK(nc_def_var(ncid, "c", NC_CHAR, 1, &d, &v));
        OK(nc_def_var_fill(ncid, v, 0, &fill));
        OK(nc_put_att_text(ncid, NC_GLOBAL, "t", 3, "a\xe9z"));
        OK(nc_put_att_text(ncid, v, "u", 4, "\xc3\xa9\xff!"));
        OK(nc_put_att_text(ncid, v, "utf8", 2, "\xc3\xa9"));
        OK(nc_close(ncid));
        OK(nc_open(u, NC_NOWRITE, &ncid));
        OK(nc_inq_attlen(ncid, NC_GLOBAL, "t", &len));
        OK(nc_get_att_text(ncid, NC_GLOBAL, "t", buf));
        CHECK(len == 3 && memcmp(buf, "a\xe9z", 3) == 0);
        OK(nc_inq_attlen(ncid, v, "u", &len));
        OK(nc_get_att_text(ncid, v, "u", buf));
        CHECK(len == 4 && memcmp(buf, "\xc3\xa9\xff!", 4) == 0);
        OK(nc_inq_attlen(ncid, v, "utf8", &len));
        CHECK(len == 2);
        OK(nc_get_var_text(ncid, v, data));
        CHECK((unsigned char)data[0] == 0xe9 && (unsigned char)data[1] == 0xe9);
        OK(nc_close(ncid));
    }
    /* netcdf-c's own spelling: the byte raw inside the JSON string. */
    const char *u = url(dir, "rawjson", "nczarr,file");
    int ncid;
    OK(nc_create(u, NC_NETCDF4, &ncid));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "t", 3, "abc"));
    OK(nc_close(ncid));
    FILE *f = fopen(obj(dir, "rawjson", ".zattrs"), "w");
    fputs("{\"t\": \"a\xe9z\", \"_nczarr_attr\": {\"types\": {\"t\": \">S1\", \"_nczarr_attr\": \"|J0\"}}}", f);
    fclose(f);
    OK(nc_open(u, NC_NOWRITE, &ncid));
    char buf[8] = {0};
    size_t len = 0;
    OK(nc_inq_attlen(ncid, NC_GLOBAL, "t", &len));
    OK(nc_get_att_text(ncid, NC_GLOBAL, "t", buf));
    CHECK(len == 3 && memcmp(buf, "a\xe9z", 3) == 0);
    OK(nc_close(ncid));
}

/* 4. A NC_STRING fill longer than the default width (128) is never cut in a written chunk. */
static void long_string_fill(const char *dir)
{
    const char *u = url(dir, "sfill", "nczarr,file");
    int ncid, d, v;
    char longfill[301];
    memset(longfill, 'L', 300);
    longfill[300] = 0;
    const char *fp = longfill, *one = "1";
    OK(nc_create(u, NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "x", 4, &d));
    OK(nc_def_var(ncid, "s", NC_STRING, 1, &d, &v));
    OK(nc_def_var_fill(ncid, v, 0, &fp));
    size_t cs[1] = {2}, i0[1] = {0};
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, cs));
    OK(nc_put_var1_string(ncid, v, i0, &one));
    OK(nc_close(ncid));
    OK(nc_open(u, NC_NOWRITE, &ncid));
    char *out[4] = {0};
    OK(nc_get_var_string(ncid, v, out));
    CHECK(out[0] && strcmp(out[0], "1") == 0);
    CHECK(out[1] && strlen(out[1]) == 300);
    CHECK(out[3] && strlen(out[3]) == 300);
    nc_free_string(4, out);
    OK(nc_close(ncid));
}

/* 5. Objects enlarged (sparse) past anything their metadata allows are refused unread, with
 * a clean error and no abort: a v3 vlen-string chunk and a shard. */
static void oversized(const char *dir)
{
    int ncid, d, v, w;
    const char *u = url(dir, "big.v3", "nczarr,file,v3");
    OK(nc_create(u, NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "x", 4, &d));
    OK(nc_def_var(ncid, "s", NC_STRING, 1, &d, &v));
    OK(nc_def_var(ncid, "i", NC_INT, 1, &d, &w));
    size_t cs[1] = {1}, sh[1] = {4};
    OK(nc_def_var_chunking(ncid, w, NC_CHUNKED, cs));
    OK(nczarr_def_var_shards(ncid, w, sh));
    const char *strs[4] = {"a", "b", "c", "d"};
    int ints[4] = {1, 2, 3, 4};
    OK(nc_put_var_string(ncid, v, strs));
    OK(nc_put_var_int(ncid, w, ints));
    OK(nc_close(ncid));
    CHECK(truncate(obj(dir, "big.v3", "s/c/0"), 2LL << 30) == 0);
    OK(nc_open(u, NC_NOWRITE, &ncid));
    char *out[4] = {0};
    int rc = nc_get_var_string(ncid, v, out);
    CHECK(rc == NC_ENCZARR || rc == NC_ENOMEM);
    CHECK(truncate(obj(dir, "big.v3", "s/c/0"), 1LL << 40) == 0);
    rc = nc_get_var_string(ncid, v, out);
    CHECK(rc == NC_ENCZARR || rc == NC_ENOMEM);
    OK(nc_close(ncid));
    /* The shard: its index moves to the (zero) end, or its whole is bigger than allowed. */
    for (int k = 0; k < 2; k++) {
        CHECK(truncate(obj(dir, "big.v3", "i/c/0"), k ? 1LL << 40 : 2LL << 30) == 0);
        OK(nc_open(u, NC_NOWRITE, &ncid));
        int back[4];
        size_t s0[1] = {0}, c1[1] = {1};
        rc = nc_get_vara_int(ncid, w, s0, c1, back);
        CHECK(rc != NC_NOERR);
        rc = nc_get_var_int(ncid, w, back);
        CHECK(rc != NC_NOERR);
        OK(nc_close(ncid));
    }
}

/* 6. A FIFO in place of a chunk: every reader gets an error at once instead of hanging. */
static void fifo_chunk(const char *dir)
{
    int ncid, d, v;
    const char *u = url(dir, "fifo", "nczarr,file");
    OK(nc_create(u, NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "x", 4, &d));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &d, &v));
    int ints[4] = {1, 2, 3, 4};
    OK(nc_put_var_int(ncid, v, ints));
    OK(nc_close(ncid));
    CHECK(unlink(obj(dir, "fifo", "v/0")) == 0);
    CHECK(mkfifo(obj(dir, "fifo", "v/0"), 0644) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20); /* a hang fails the test instead of the suite */
        int n, back[4];
        if (nc_open(u, NC_NOWRITE, &n)) _exit(2);
        int rc = nc_get_var_int(n, 0, back);
        nc_close(n);
        _exit(rc == NC_EACCESS || rc == NC_ENCZARR ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* 7-13: return codes of netcdf-c 4.10.1 (api_diffs.c and netcdf-c's own tests). */
static void api_codes(const char *dir)
{
    int ncid, d, d2, v, g, sh, de, lv;
    /* 7: renames in data mode stay in data mode; classic model: a longer variable or
     * attribute name needs define mode, a dimension's does not. */
    OK(nc_create(url(dir, "ren", "nczarr,file"), NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "x", 6, &d));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &d, &v));
    OK(nc_put_att_int(ncid, v, "a", NC_INT, 1, &d));
    OK(nc_enddef(ncid));
    OK(nc_rename_dim(ncid, d, "y"));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    OK(nc_rename_var(ncid, v, "w"));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    OK(nc_rename_att(ncid, v, "a", "b"));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    int ints[6] = {1, 2, 3, 4, 5, 6}, back[6];
    OK(nc_put_var_int(ncid, v, ints));
    OK(nc_close(ncid));
    OK(nc_open(url(dir, "ren", "nczarr,file"), NC_NOWRITE, &ncid));
    char name[NC_MAX_NAME + 1];
    OK(nc_inq_dimname(ncid, 0, name));
    CHECK(strcmp(name, "y") == 0);
    OK(nc_inq_varid(ncid, "w", &v));
    OK(nc_get_var_int(ncid, v, back));
    CHECK(memcmp(back, ints, sizeof ints) == 0);
    OK(nc_inq_attname(ncid, v, 0, name));
    CHECK(strcmp(name, "b") == 0);
    OK(nc_close(ncid));
    OK(nc_create(url(dir, "rencm", "nczarr,file"), NC_NETCDF4 | NC_CLASSIC_MODEL, &ncid));
    OK(nc_def_dim(ncid, "x", 2, &d));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &d, &v));
    OK(nc_put_att_int(ncid, v, "a", NC_INT, 1, &d));
    OK(nc_enddef(ncid));
    OK(nc_rename_dim(ncid, d, "xlonger"));
    EXPECT(NC_ENOTINDEFINE, nc_rename_var(ncid, v, "vlonger"));
    OK(nc_rename_var(ncid, v, "w"));
    EXPECT(NC_ENOTINDEFINE, nc_rename_att(ncid, v, "a", "blonger"));
    OK(nc_rename_att(ncid, v, "a", "b"));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    /* 13: quantize after enddef in a classic-model dataset (run_quantize.sh). */
    EXPECT(NC_ELATEDEF, nc_def_var_quantize(ncid, v, NC_QUANTIZE_BITGROOM, 3));
    OK(nc_close(ncid));

    /* 8: deflate level 0 adds no deflate filter (an earlier one stays). */
    OK(nc_create(url(dir, "defl", "nczarr,file"), NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "x", 6, &d));
    OK(nc_def_var(ncid, "v", NC_DOUBLE, 1, &d, &v));
    OK(nc_def_var(ncid, "w", NC_DOUBLE, 1, &d, &d2));
    OK(nc_def_var_deflate(ncid, v, 0, 1, 0));
    OK(nc_inq_var_deflate(ncid, v, &sh, &de, &lv));
    CHECK(sh == 0 && de == 0 && lv == 0);
    OK(nc_def_var_deflate(ncid, d2, 0, 1, 5));
    OK(nc_def_var_deflate(ncid, d2, 0, 1, 0));
    OK(nc_inq_var_deflate(ncid, d2, &sh, &de, &lv));
    CHECK(de == 1 && lv == 5);

    /* 9: attribute type mismatches. */
    const char *s[1] = {"abc"};
    double x = 1.5;
    short sv;
    char *sp[1];
    char tb[4];
    OK(nc_put_att_string(ncid, NC_GLOBAL, "s", 1, s));
    OK(nc_put_att_double(ncid, NC_GLOBAL, "d", NC_DOUBLE, 1, &x));
    OK(nc_put_att_short(ncid, NC_GLOBAL, "z", NC_SHORT, 0, NULL));
    EXPECT(NC_EBADTYPE, nc_get_att_short(ncid, NC_GLOBAL, "s", &sv));
    EXPECT(NC_EBADTYPE, nc_get_att_string(ncid, NC_GLOBAL, "d", sp));
    OK(nc_get_att_text(ncid, NC_GLOBAL, "z", tb));
    EXPECT(NC_ECHAR, nc_get_att_text(ncid, NC_GLOBAL, "d", tb));
    OK(nc_close(ncid));

    /* 10, 12: zero counts and memory types, in netcdf-c's order; a refused get or put in
     * define mode leaves define mode alone. */
    OK(nc_create(url(dir, "zero", "nczarr,file"), NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "t", NC_UNLIMITED, &d));
    OK(nc_def_dim(ncid, "one", 1, &d2));
    OK(nc_def_var(ncid, "c", NC_CHAR, 1, &d, &v));
    int dims2[2] = {d2, d2};
    OK(nc_def_var(ncid, "n", NC_INT, 2, dims2, &g));
    size_t st[2] = {0, 0}, ct0[2] = {0, 0}, ct20[2] = {2, 0}, bad[2] = {5, 0}, ct1[2] = {1, 1};
    EXPECT(NC_ECHAR, nc_get_vara_int(ncid, v, st, ct0, back));
    EXPECT(NC_ECHAR, nc_put_vara_int(ncid, v, st, ct0, back));
    size_t cs[1] = {4};
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, cs));
    OK(nc_enddef(ncid));
    EXPECT(NC_EEDGE, nc_get_vara_int(ncid, g, st, ct20, back));
    OK(nc_put_vara_int(ncid, g, st, ct20, back));
    EXPECT(NC_ECHAR, nc_get_vara_int(ncid, v, bad, ct1, back));
    EXPECT(NC_EINVALCOORDS, nc_get_vara_int(ncid, g, bad, ct20, back));
    OK(nc_close(ncid));

    /* 11: classic model accepts an unlimited dimension that is not first (netCDF-4). */
    OK(nc_create(url(dir, "cmu", "nczarr,file"), NC_NETCDF4 | NC_CLASSIC_MODEL, &ncid));
    OK(nc_def_dim(ncid, "t", NC_UNLIMITED, &d));
    OK(nc_def_dim(ncid, "x", 2, &d2));
    int dims[2] = {d2, d};
    OK(nc_def_var(ncid, "v", NC_FLOAT, 2, dims, &v));
    OK(nc_enddef(ncid));
    size_t s1[2] = {1, 3}, c1[2] = {1, 1};
    float f = 1;
    size_t len;
    OK(nc_put_vara_float(ncid, v, s1, c1, &f));
    OK(nc_inq_dimlen(ncid, d, &len));
    CHECK(len == 4);
    OK(nc_close(ncid));
}

/* 16. A dataset created without NC_NETCDF4 takes a _FillValue after data (netCDF-3 rules,
 * NCO's ncap2); netCDF-4 datasets still say NC_ELATEFILL. */
static void late_fill(const char *dir)
{
    int ncid, d, v, w;
    const char *u = url(dir, "late", "nczarr,file");
    OK(nc_create(u, NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "x", 8, &d));
    OK(nc_def_var(ncid, "y", NC_DOUBLE, 1, &d, &v));
    size_t cs[1] = {2};
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, cs));
    OK(nc_enddef(ncid));
    double two[2] = {1, 2}, fill = -99, back[8];
    size_t st[1] = {0}, ct[1] = {2};
    OK(nc_put_vara_double(ncid, v, st, ct, two));
    OK(nc_redef(ncid));
    OK(nc_put_att_double(ncid, v, "_FillValue", NC_DOUBLE, 1, &fill));
    OK(nc_close(ncid));
    OK(nc_open(u, NC_NOWRITE, &ncid));
    OK(nc_get_var_double(ncid, v, back));
    CHECK(back[0] == 1 && back[1] == 2 && back[2] == -99 && back[7] == -99);
    OK(nc_close(ncid));
    OK(nc_create(url(dir, "late4", "nczarr,file"), NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "x", 8, &d));
    OK(nc_def_var(ncid, "y", NC_DOUBLE, 1, &d, &w));
    OK(nc_enddef(ncid));
    OK(nc_put_vara_double(ncid, w, st, ct, two));
    EXPECT(NC_ELATEFILL, nc_put_att_double(ncid, w, "_FillValue", NC_DOUBLE, 1, &fill));
    OK(nc_close(ncid));
}

/* Found by `make fuzz` (seed 20261127..): netcdf-c checks nc_def_dim, nc_def_grp and
 * nc_rename_grp whole before it leaves data mode, so a refused call leaves the dataset in data
 * mode (the next nc_enddef is NC_ENOTINDEFINE); a _FillValue for a written variable is
 * NC_ELATEFILL before its type is looked at; an attribute length over NC_MAX_INT (a negative
 * length) is NC_EINVAL, where one-byte types used to abort the process allocating it. */
static void define_checks_first(const char *dir)
{
    int ncid, g, d, v, x = 1;
    unsigned char u = 3;
    OK(nc_create(url(dir, "order", "nczarr,file"), NC_NETCDF4, &ncid));
    OK(nc_def_grp(ncid, "g", &g));
    OK(nc_def_dim(ncid, "d", 2, &d));
    OK(nc_def_var(ncid, "v", NC_UBYTE, 1, &d, &v));
    OK(nc_enddef(ncid));
    EXPECT(NC_EBADNAME, nc_def_dim(g, "a/b", 0, &d));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    EXPECT(NC_ENAMEINUSE, nc_def_dim(ncid, "d", 4, &d));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    EXPECT(NC_ENAMEINUSE, nc_def_grp(ncid, "g", &g));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    EXPECT(NC_EBADNAME, nc_def_grp(ncid, "a/b", &g));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    EXPECT(NC_ENAMEINUSE, nc_rename_grp(g, "g"));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    EXPECT(NC_EBADGRPID, nc_rename_grp(ncid, "root"));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    /* (nc_def_var redefines first, as netcdf-c does.) */
    EXPECT(NC_ENAMEINUSE, nc_def_var(ncid, "v", NC_INT, 0, NULL, &x));
    OK(nc_enddef(ncid));
    OK(nc_rename_grp(g, "h"));
    OK(nc_enddef(ncid));
    EXPECT(NC_ELATEFILL, nc_put_att_int(ncid, v, "_FillValue", NC_INT, 1, &x));
    EXPECT(NC_ELATEFILL, nc_put_att_uchar(ncid, v, "_FillValue", NC_UBYTE, 1, &u));
    EXPECT(NC_EINVAL, nc_put_att_uchar(ncid, v, "big", NC_UBYTE, (size_t)-1, &u));
    EXPECT(NC_EINVAL, nc_put_att_text(ncid, v, "big", (size_t)INT32_MAX + 1, "x"));
    EXPECT(NC_EINVAL, nc_put_att_int(ncid, NC_GLOBAL, "big", NC_INT, (size_t)-1, &x));
    /* Counts no memory could hold, in the other calls taking one: NC_EINVAL, never an abort. */
    unsigned p = 1;
    OK(nc_def_var(ncid, "f", NC_INT, 1, &d, &v));
    EXPECT(NC_EINVAL, nc_def_var_filter(ncid, v, 1, (size_t)-1, &p));
    EXPECT(NC_EINVAL, nc_def_var_filter(ncid, v, 1, (size_t)1 << 62, &p));
    NCPluginList dirs = {0, NULL};
    EXPECT(NC_EINVAL, ncaux_plugin_path_parsen((size_t)-1, "/a:/b", ':', &dirs));
    OK(nc_close(ncid));
}

/* Found when the differential tester learned nc_copy_att: a copy onto itself (same ncid, same
 * varid) is NC_NOERR whatever the name, as in netcdf-c; into a classic-model dataset a missing
 * target variable is NC_ENOTVAR before the source attribute is looked up. */
static void copy_att_codes(const char *dir)
{
    int ncid, g, d, v;
    OK(nc_create(url(dir, "copyatt", "nczarr,file"), NC_NETCDF4, &ncid));
    OK(nc_def_grp(ncid, "g", &g));
    OK(nc_copy_att(ncid, NC_GLOBAL, "nope", ncid, NC_GLOBAL));
    OK(nc_copy_att(ncid, 42, "nope", ncid, 42));
    OK(nc_copy_att(ncid, NC_GLOBAL, NULL, ncid, NC_GLOBAL));
    EXPECT(NC_ENOTATT, nc_copy_att(ncid, NC_GLOBAL, "nope", g, NC_GLOBAL));
    EXPECT(NC_EBADID, nc_copy_att(ncid + 999, NC_GLOBAL, "nope", ncid + 999, NC_GLOBAL));
    OK(nc_close(ncid));
    OK(nc_create(url(dir, "copyatt3", "nczarr,file"), NC_NETCDF4 | NC_CLASSIC_MODEL, &ncid));
    OK(nc_def_dim(ncid, "x", 2, &d));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &d, &v));
    EXPECT(NC_ENOTVAR, nc_copy_att(ncid, NC_GLOBAL, "nope", ncid, 5));
    EXPECT(NC_ENOTATT, nc_copy_att(ncid, NC_GLOBAL, "nope", ncid, v));
    OK(nc_close(ncid));
}

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    zip_rewrite(dir);
    inf_fills(dir);
    char_bytes(dir);
    long_string_fill(dir);
    oversized(dir);
    fifo_chunk(dir);
    api_codes(dir);
    late_fill(dir);
    define_checks_first(dir);
    copy_att_codes(dir);
    DONE();
}

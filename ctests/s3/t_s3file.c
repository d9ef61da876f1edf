/* netCDF files stored as one S3 object, through the nc_* API (served by the real netcdf-c
 * behind the preload library, or behind the drop-in with NCZARR_FALLBACK_LIB).
 * usage: t_s3file <url> <action> [args]
 *   create <classic|64bit|cdf5|nc4>  write a small file (nc_sync halfway, then close)
 *   read <classic|64bit|cdf5|nc4>    check the values, the format and nc_inq_path
 *   modify                           open NC_WRITE, add an attribute and a record, close
 *   read-modified                    check what modify wrote
 *   abort                            open NC_WRITE, change a value, nc_abort (nothing stored)
 *   sync-then-wait <file>            create, write, nc_sync, touch <file>, wait until it is gone
 *   open-expect <code> / create-expect <code> [noclobber] / modify-expect <code>  */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../check.h"

#define NX 5

static int flags_for(const char *fmt) {
    if (!strcmp(fmt, "classic")) return NC_CLOBBER;
    if (!strcmp(fmt, "64bit")) return NC_CLOBBER | NC_64BIT_OFFSET;
    if (!strcmp(fmt, "cdf5")) return NC_CLOBBER | NC_64BIT_DATA;
    return NC_CLOBBER | NC_NETCDF4;
}

static int format_for(const char *fmt) {
    if (!strcmp(fmt, "classic")) return NC_FORMAT_CLASSIC;
    if (!strcmp(fmt, "64bit")) return NC_FORMAT_64BIT_OFFSET;
    if (!strcmp(fmt, "cdf5")) return NC_FORMAT_CDF5;
    return NC_FORMAT_NETCDF4;
}

static void define(int ncid, int *v) {
    int t, x, xv;
    OK(nc_def_dim(ncid, "time", NC_UNLIMITED, &t));
    OK(nc_def_dim(ncid, "x", NX, &x));
    int d2[2] = {t, x};
    OK(nc_def_var(ncid, "v", NC_DOUBLE, 2, d2, v));
    OK(nc_def_var(ncid, "x", NC_INT, 1, &x, &xv));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "title", 9, "on S3 too"));
    OK(nc_enddef(ncid));
    int xs[NX] = {10, 20, 30, 40, 50};
    OK(nc_put_var_int(ncid, xv, xs));
}

static void put_row(int ncid, int v, int r) {
    double row[NX];
    for (int i = 0; i < NX; i++) row[i] = r * 100 + i + 0.5;
    size_t st[2] = {r, 0}, cnt[2] = {1, NX};
    OK(nc_put_vara_double(ncid, v, st, cnt, row));
}

static void check_rows(int ncid, int nrows) {
    int v, t;
    size_t n;
    OK(nc_inq_varid(ncid, "v", &v));
    OK(nc_inq_dimid(ncid, "time", &t));
    OK(nc_inq_dimlen(ncid, t, &n));
    CHECK(n == (size_t)nrows);
    for (int r = 0; r < nrows; r++) {
        double row[NX];
        size_t st[2] = {r, 0}, cnt[2] = {1, NX};
        OK(nc_get_vara_double(ncid, v, st, cnt, row));
        for (int i = 0; i < NX; i++) CHECK(row[i] == r * 100 + i + 0.5);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *u = argv[1], *act = argv[2], *arg = argc > 3 ? argv[3] : "nc4";
    int ncid, v;
    if (!strcmp(act, "create")) {
        OK(nc_create(u, flags_for(arg), &ncid));
        define(ncid, &v);
        put_row(ncid, v, 0);
        OK(nc_sync(ncid));
        put_row(ncid, v, 1);
        put_row(ncid, v, 2);
        OK(nc_close(ncid));
    } else if (!strcmp(act, "read")) {
        OK(nc_open(u, NC_NOWRITE, &ncid));
        int fmt = -1;
        OK(nc_inq_format(ncid, &fmt));
        CHECK(fmt == format_for(arg));
        size_t len = 0;
        char path[4096];
        OK(nc_inq_path(ncid, &len, path));
        CHECK(len == strlen(u) && !strcmp(path, u));
        char title[16] = {0};
        OK(nc_get_att_text(ncid, NC_GLOBAL, "title", title));
        CHECK(!strcmp(title, "on S3 too"));
        check_rows(ncid, 3);
        OK(nc_close(ncid));
    } else if (!strcmp(act, "modify") || !strcmp(act, "modify-expect")) {
        int want = argc > 3 ? atoi(argv[3]) : 0;
        OK(nc_open(u, NC_WRITE, &ncid));
        OK(nc_redef(ncid));
        OK(nc_put_att_text(ncid, NC_GLOBAL, "history", 8, "modified"));
        OK(nc_enddef(ncid));
        OK(nc_inq_varid(ncid, "v", &v));
        put_row(ncid, v, 3);
        EXPECT(want, nc_close(ncid));
    } else if (!strcmp(act, "read-modified")) {
        OK(nc_open(u, NC_NOWRITE, &ncid));
        char h[16] = {0};
        OK(nc_get_att_text(ncid, NC_GLOBAL, "history", h));
        CHECK(!strcmp(h, "modified"));
        check_rows(ncid, 4);
        OK(nc_close(ncid));
    } else if (!strcmp(act, "abort")) {
        OK(nc_open(u, NC_WRITE, &ncid));
        OK(nc_inq_varid(ncid, "v", &v));
        double big = -1;
        size_t at[2] = {0, 0};
        OK(nc_put_var1_double(ncid, v, at, &big));
        OK(nc_abort(ncid));
    } else if (!strcmp(act, "sync-then-wait")) {
        OK(nc_create(u, NC_CLOBBER, &ncid));
        define(ncid, &v);
        put_row(ncid, v, 0);
        OK(nc_sync(ncid));
        FILE *f = fopen(argv[3], "w");
        if (f) fclose(f);
        struct stat st;
        for (int i = 0; i < 600 && stat(argv[3], &st) == 0; i++) usleep(50000);
        put_row(ncid, v, 1);
        put_row(ncid, v, 2);
        OK(nc_close(ncid));
    } else if (!strcmp(act, "open-expect")) {
        int want = atoi(arg);
        int got = nc_open(u, NC_NOWRITE, &ncid);
        EXPECT(want, got);
        if (got == NC_NOERR) nc_close(ncid);
    } else if (!strcmp(act, "create-expect")) {
        int want = atoi(arg);
        int mode = NC_NETCDF4 | ((argc > 4 && !strcmp(argv[4], "noclobber")) ? NC_NOCLOBBER : 0);
        int got = nc_create(u, mode, &ncid);
        EXPECT(want, got);
        if (got == NC_NOERR) nc_close(ncid);
    } else {
        return 2;
    }
    DONE();
}

/* Two worlds in one process (passthrough.md): netCDF-4/classic files through the real
 * netcdf-c behind the preload library, Zarr through us. Built against the system netcdf.h and
 * -lnetcdf; run with LD_PRELOAD of our preload library (or our drop-in + NCZARR_FALLBACK_LIB).
 *
 * usage: t_worlds <scratch-dir> worlds|stress|collide|alone|strided
 */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

static char dir[512];

static void path(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }
static void zurl(char *out, size_t n, const char *name) { snprintf(out, n, "file://%s/%s#mode=nczarr,file", dir, name); }

static int ours(int ncid) { return ((unsigned)ncid >> 16) >= 0x7000; }

/* A netCDF-4 file made by the real library: groups, unlimited dim, compression, strings. */
static void make_real(const char *p, const char *title) {
    int ncid, t, x, v, s, g;
    OK(nc_create(p, NC_NETCDF4 | NC_CLOBBER, &ncid));
    CHECK(!ours(ncid));
    OK(nc_def_dim(ncid, "time", NC_UNLIMITED, &t));
    OK(nc_def_dim(ncid, "x", 4, &x));
    int d2[2] = {t, x};
    OK(nc_def_var(ncid, "temp", NC_FLOAT, 2, d2, &v));
    OK(nc_def_var_deflate(ncid, v, 1, 1, 2));
    OK(nc_def_var(ncid, "names", NC_STRING, 1, &x, &s));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "title", strlen(title), title));
    double range[2] = {-1.5, 40.25};
    OK(nc_put_att_double(ncid, v, "valid_range", NC_DOUBLE, 2, range));
    short flag = 7;
    OK(nc_put_att_short(ncid, v, "flag", NC_SHORT, 1, &flag));
    const char *hist[2] = {"made by netcdf-c", "for t_worlds"};
    OK(nc_put_att_string(ncid, NC_GLOBAL, "history", 2, hist));
    OK(nc_def_grp(ncid, "sub", &g));
    int gi = 42;
    OK(nc_put_att_int(g, NC_GLOBAL, "answer", NC_INT, 1, &gi));
    OK(nc_enddef(ncid));
    float data[3][4];
    for (int i = 0; i < 12; i++) data[i / 4][i % 4] = (float)i * 0.5f;
    size_t st[2] = {0, 0}, cnt[2] = {3, 4};
    OK(nc_put_vara_float(ncid, v, st, cnt, &data[0][0]));
    const char *nm[4] = {"alpha", "beta", "", "delta"};
    OK(nc_put_var_string(ncid, s, nm));
    OK(nc_close(ncid));
}

static void make_zarr(const char *u, const char *title) {
    int ncid, x, v;
    OK(nc_create(u, NC_NETCDF4 | NC_CLOBBER, &ncid));
    CHECK(ours(ncid));
    OK(nc_def_dim(ncid, "x", 4, &x));
    OK(nc_def_var(ncid, "zv", NC_INT, 1, &x, &v));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "title", strlen(title), title));
    OK(nc_enddef(ncid));
    int data[4] = {10, 20, 30, 40};
    OK(nc_put_var_int(ncid, v, data));
    OK(nc_close(ncid));
}

static void title_is(int ncid, const char *want) {
    char got[128] = {0};
    size_t len = 0;
    OK(nc_inq_attlen(ncid, NC_GLOBAL, "title", &len));
    CHECK(len < sizeof got);
    OK(nc_get_att_text(ncid, NC_GLOBAL, "title", got));
    if (strcmp(got, want) != 0) {
        printf("title of %#x: got '%s', want '%s'\n", ncid, got, want);
        CHECK(0);
    }
}

static void worlds(void) {
    char rp[600], zu[700];
    path(rp, sizeof rp, "real.nc");
    zurl(zu, sizeof zu, "both.zarr");
    make_real(rp, "real file");
    make_zarr(zu, "zarr store");

    int r, z;
    OK(nc_open(rp, NC_WRITE, &r));
    OK(nc_open(zu, NC_WRITE, &z));
    CHECK(!ours(r) && ours(z));
    /* Interleaved inquiries on both. */
    int rv, zv, nd;
    OK(nc_inq_varid(r, "temp", &rv));
    OK(nc_inq_varid(z, "zv", &zv));
    OK(nc_inq_varndims(r, rv, &nd));
    CHECK(nd == 2);
    OK(nc_inq_varndims(z, zv, &nd));
    CHECK(nd == 1);
    EXPECT(NC_ENOTVAR, nc_inq_varid(z, "temp", &rv));
    EXPECT(NC_ENOTVAR, nc_inq_varid(r, "zv", &zv));
    OK(nc_inq_varid(r, "temp", &rv));
    title_is(r, "real file");
    title_is(z, "zarr store");

    /* real -> ours: attributes of several types, then a whole variable (needs the dims). */
    OK(nc_redef(z));
    int zt, zx;
    OK(nc_def_dim(z, "time", NC_UNLIMITED, &zt));
    OK(nc_inq_dimid(z, "x", &zx));
    OK(nc_copy_att(r, NC_GLOBAL, "history", z, NC_GLOBAL));
    OK(nc_copy_att(r, rv, "valid_range", z, zv));
    OK(nc_copy_att(r, rv, "flag", z, zv));
    EXPECT(NC_ENOTATT, nc_copy_att(r, rv, "nope", z, zv));
    OK(nc_copy_var(r, rv, z));
    int names;
    OK(nc_inq_varid(r, "names", &names));
    OK(nc_copy_var(r, names, z));

    /* ours -> real. */
    OK(nc_redef(r));
    OK(nc_copy_att(z, NC_GLOBAL, "title", r, NC_GLOBAL));
    OK(nc_copy_var(z, zv, r));

    /* Types across worlds. */
    int eq = -1;
    OK(nc_inq_type_equal(r, NC_FLOAT, z, NC_FLOAT, &eq));
    CHECK(eq == 1);
    OK(nc_inq_type_equal(z, NC_INT, r, NC_SHORT, &eq));
    CHECK(eq == 0);
    OK(nc_inq_type_equal(r, NC_STRING, r, NC_STRING, &eq));
    CHECK(eq == 1);
    OK(nc_inq_type_equal(z, NC_DOUBLE, z, NC_DOUBLE, &eq));
    CHECK(eq == 1);
    EXPECT(NC_EBADTYPE, nc_inq_type_equal(r, 999, z, NC_INT, &eq));
    OK(nc_close(r));
    OK(nc_close(z));

    /* Read back what crossed, in both directions. */
    OK(nc_open(zu, NC_NOWRITE, &z));
    int zt2, ztemp, znames;
    OK(nc_inq_varid(z, "temp", &ztemp));
    OK(nc_inq_varid(z, "names", &znames));
    OK(nc_inq_dimid(z, "time", &zt2));
    size_t tl;
    OK(nc_inq_dimlen(z, zt2, &tl));
    CHECK(tl == 3);
    float f[12];
    OK(nc_get_var_float(z, ztemp, f));
    for (int i = 0; i < 12; i++) CHECK(f[i] == (float)i * 0.5f);
    double range[2];
    OK(nc_get_att_double(z, ztemp, "valid_range", range));
    CHECK(range[0] == -1.5 && range[1] == 40.25);
    nc_type at;
    size_t alen;
    OK(nc_inq_att(z, ztemp, "flag", &at, &alen));
    CHECK(at == NC_SHORT && alen == 1);
    char *hist[2] = {0};
    OK(nc_get_att_string(z, NC_GLOBAL, "history", hist));
    CHECK(hist[1] && strcmp(hist[1], "for t_worlds") == 0);
    OK(nc_free_string(2, hist));
    char *nm[4] = {0};
    OK(nc_get_var_string(z, znames, nm));
    CHECK(nm[0] && strcmp(nm[0], "alpha") == 0 && nm[3] && strcmp(nm[3], "delta") == 0);
    OK(nc_free_string(4, nm));

    OK(nc_open(rp, NC_NOWRITE, &r));
    title_is(r, "zarr store");
    int rzv;
    OK(nc_inq_varid(r, "zv", &rzv));
    int iv[4];
    OK(nc_get_var_int(r, rzv, iv));
    CHECK(iv[0] == 10 && iv[3] == 40);
    /* The real library's group ids stay the real library's. */
    int sub, answer = 0;
    OK(nc_inq_ncid(r, "sub", &sub));
    CHECK(!ours(sub));
    OK(nc_get_att_int(sub, NC_GLOBAL, "answer", &answer));
    CHECK(answer == 42);
    OK(nc_close(z));
    OK(nc_close(r));
    EXPECT(NC_EBADID, nc_inq_varid(r, "zv", &rzv));
    EXPECT(NC_EBADID, nc_inq_varid(z, "zv", &rzv));
}

/* Hundreds of datasets of both kinds opened and closed interleaved: ids never confused. */
static void stress(void) {
    enum { NR = 4, NZ = 4, OPEN = 40, ROUNDS = 600 };
    char rp[NR][600], zu[NZ][700], title[64];
    for (int i = 0; i < NR; i++) {
        char n[32];
        snprintf(n, sizeof n, "r%d.nc", i);
        path(rp[i], sizeof rp[i], n);
        snprintf(title, sizeof title, "real %d", i);
        make_real(rp[i], title);
    }
    for (int i = 0; i < NZ; i++) {
        char n[32];
        snprintf(n, sizeof n, "z%d.zarr", i);
        zurl(zu[i], sizeof zu[i], n);
        snprintf(title, sizeof title, "zarr %d", i);
        make_zarr(zu[i], title);
    }
    int ids[OPEN], kind[OPEN], which[OPEN];
    for (int k = 0; k < OPEN; k++) ids[k] = -1;
    unsigned seed = 12345;
    int opened = 0;
    for (int round = 0; round < ROUNDS; round++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % OPEN);
        if (ids[k] >= 0) {
            snprintf(title, sizeof title, "%s %d", kind[k] ? "zarr" : "real", which[k]);
            title_is(ids[k], title);
            OK(nc_close(ids[k]));
            ids[k] = -1;
        } else {
            kind[k] = (int)((seed >> 16) & 1);
            which[k] = (int)((seed >> 20) % 4);
            OK(nc_open(kind[k] ? zu[which[k]] : rp[which[k]], NC_NOWRITE, &ids[k]));
            CHECK(ours(ids[k]) == kind[k]);
            for (int j = 0; j < OPEN; j++) CHECK(j == k || ids[j] != ids[k]);
            opened++;
        }
    }
    for (int k = 0; k < OPEN; k++)
        if (ids[k] >= 0) {
            snprintf(title, sizeof title, "%s %d", kind[k] ? "zarr" : "real", which[k]);
            title_is(ids[k], title);
            OK(nc_close(ids[k]));
        }
    CHECK(opened > 200);
}

/* NCZARR_TEST_CLAIM_SLOT=1: the real library's first dataset lands on a slot marked ours. */
static void collide(void) {
    char rp[600];
    path(rp, sizeof rp, "collide.nc");
    int ncid = -1;
    /* (created by the harness with plain ncgen) */
    EXPECT(NC_ENFILE, nc_open(rp, NC_NOWRITE, &ncid));
}

/* The drop-in with no real library: a netCDF file opens read-only (our scanners read it);
 * writing one, and foreign ids, fail as specified. */
static void alone(void) {
    char rp[600], np[600];
    path(rp, sizeof rp, "collide.nc");
    path(np, sizeof np, "new.nc");
    int ncid, nv = -1;
    OK(nc_open(rp, NC_NOWRITE, &ncid));
    OK(nc_inq_nvars(ncid, &nv));
    CHECK(nv == 1);
    OK(nc_close(ncid));
    EXPECT(NC_ENOTNC, nc_open(rp, NC_WRITE, &ncid));
    EXPECT(NC_ENOTBUILT, nc_create(np, NC_NETCDF4, &ncid));
    EXPECT(2, nc_open("/nonexistent/file.nc", NC_NOWRITE, &ncid));
    int nvars;
    EXPECT(NC_EBADID, nc_inq_nvars(0x10000, &nvars));
}

/* A strided read of a classic file through the real library (the harness counts the real
 * library's internal nc_inq_var calls that came back through us). */
static void strided(void) {
    char rp[600];
    path(rp, sizeof rp, "collide.nc");
    int ncid, v;
    OK(nc_open(rp, NC_NOWRITE, &ncid));
    OK(nc_inq_varid(ncid, "v", &v));
    size_t st[1] = {0}, cnt[1] = {2};
    ptrdiff_t sd[1] = {2};
    float f[2];
    OK(nc_get_vars_float(ncid, v, st, cnt, sd, f));
    CHECK(f[0] == 1 && f[1] == 3);
    OK(nc_close(ncid));
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: t_worlds <dir> worlds|stress|collide|alone|strided\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    if (!strcmp(argv[2], "worlds")) worlds();
    else if (!strcmp(argv[2], "stress")) stress();
    else if (!strcmp(argv[2], "collide")) collide();
    else if (!strcmp(argv[2], "alone")) alone();
    else if (!strcmp(argv[2], "strided")) strided();
    else return 2;
    printf("%s: ", argv[2]);
    DONE();
}

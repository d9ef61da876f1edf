/* Aggregated datasets written through the nc_* API (#mode=cfa), read back through the API
 * and through their fragment files directly.
 * usage: t_cfa_write <dir or URL prefix> <convention: cf | 0.5 | 0.4> [fragment suffix]
 *   writes <prefix>/w.nca (and w/ beside it), <prefix>/ab.nca (aborted), <prefix>/many.nca
 *   (200 fragments; run with NCZARR_CFA_FILEHANDLES=8 to check the budget). */
#include <stdlib.h>
#include <string.h>
#include "../check.h"

#define NT 5
#define NY 6
#define NX 8

static char prefix[2048];
static const char *suffix = "", *convention;

/* The master's name: "#mode=cfa" (with "bytes" for S3 URLs: an http name is an S3 object only
 * when its mode says so). */
static const char *name(const char *stem) {
    static char buf[4096];
    const char *mode = *suffix ? "cfa,bytes" : "cfa";
    if (!strcmp(convention, "cf"))
        snprintf(buf, sizeof buf, "%s/%s.nca#mode=%s", prefix, stem, mode);
    else
        snprintf(buf, sizeof buf, "%s/%s.nca#mode=%s&cfa=%s", prefix, stem, mode, convention);
    return buf;
}

static float value(size_t t, size_t y, size_t x) { return (float)(t * 100 + y * 10 + x) + 0.5f; }

static void write_main(void) {
    int ncid, dt, dy, dx, vt, vy, vx, tas, pr, be, d3[3];
    OK(nc_create(name("w"), NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "time", NC_UNLIMITED, &dt));
    OK(nc_def_dim(ncid, "lat", NY, &dy));
    OK(nc_def_dim(ncid, "lon", NX, &dx));
    OK(nc_def_var(ncid, "time", NC_DOUBLE, 1, &dt, &vt));
    OK(nc_def_var(ncid, "lat", NC_FLOAT, 1, &dy, &vy));
    OK(nc_def_var(ncid, "lon", NC_FLOAT, 1, &dx, &vx));
    OK(nc_put_att_text(ncid, vt, "units", 22, "days since 2000-01-01"));
    d3[0] = dt, d3[1] = dy, d3[2] = dx;
    OK(nc_def_var(ncid, "tas", NC_FLOAT, 3, d3, &tas));
    size_t chunks[3] = {2, 3, NX};
    OK(nc_def_var_chunking(ncid, tas, NC_CHUNKED, chunks));
    OK(nc_def_var_deflate(ncid, tas, 1, 1, 1));
    float fill = -999.f;
    OK(nc_def_var_fill(ncid, tas, 0, &fill));
    OK(nc_put_att_text(ncid, tas, "units", 1, "K"));
    OK(nc_def_var(ncid, "pr", NC_INT, 3, d3, &pr));   /* no chunking: S3netCDF4's split */
    OK(nc_def_var(ncid, "be", NC_SHORT, 3, d3, &be));
    OK(nc_def_var_endian(ncid, be, NC_ENDIAN_BIG));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "title", 4, "test"));
    OK(nc_enddef(ncid));
    float lat[NY], lon[NX];
    for (int i = 0; i < NY; i++) lat[i] = -50.f + 20 * i;
    for (int i = 0; i < NX; i++) lon[i] = 45.f * i;
    OK(nc_put_var_float(ncid, vy, lat));
    OK(nc_put_var_float(ncid, vx, lon));
    /* Three records, a sync (fragments stored, the master written), then two more. */
    static float block[NT * NY * NX];
    static int iblock[NT * NY * NX];
    static short sblock[NT * NY * NX];
    for (size_t t = 0; t < NT; t++)
        for (size_t y = 0; y < NY; y++)
            for (size_t x = 0; x < NX; x++) {
                block[(t * NY + y) * NX + x] = value(t, y, x);
                iblock[(t * NY + y) * NX + x] = (int)(t * 1000 + y * NX + x);
                sblock[(t * NY + y) * NX + x] = (short)(t * 100 - y * NX - x);
            }
    size_t start[3] = {0, 0, 0}, count[3] = {3, NY, NX};
    OK(nc_put_vara_float(ncid, tas, start, count, block));
    OK(nc_put_vara_short(ncid, be, start, count, sblock));
    double times[NT] = {0, 30, 60, 90, 120};
    OK(nc_put_vara_double(ncid, vt, start, count, times));
    OK(nc_sync(ncid));
    start[0] = 3, count[0] = 2;
    OK(nc_put_vara_float(ncid, tas, start, count, block + 3 * NY * NX));
    OK(nc_put_vara_short(ncid, be, start, count, sblock + 3 * NY * NX));
    OK(nc_put_vara_double(ncid, vt, start, count, times + 3));
    /* pr: records 1..2 only; the rest is fill. */
    start[0] = 1, count[0] = 2;
    OK(nc_put_vara_int(ncid, pr, start, count, iblock + NY * NX));
    /* tas cell (4, 5, 7) left as fill by a strided write of the fill value. */
    size_t one[3] = {4, 5, 7};
    OK(nc_put_var1_float(ncid, tas, one, &fill));
    /* Read back while writing (fragments read back from their files). */
    float back[NY * NX];
    size_t s2[3] = {1, 0, 0}, c2[3] = {1, NY, NX};
    OK(nc_get_vara_float(ncid, tas, s2, c2, back));
    CHECK(back[7] == value(1, 0, 7));
    OK(nc_close(ncid));
}

static void read_main(void) {
    int ncid, tas, pr, be, ndims, natts, nvars, ngrps;
    size_t len;
    nc_type xt;
    OK(nc_open(name("w"), NC_NOWRITE, &ncid));
    OK(nc_inq_dimlen(ncid, 0, &len));
    CHECK(len == NT);
    OK(nc_inq_nvars(ncid, &nvars));
    CHECK(nvars == 6);
    OK(nc_inq_grps(ncid, &ngrps, NULL));
    CHECK(ngrps == 0);
    OK(nc_inq_varid(ncid, "tas", &tas));
    OK(nc_inq_var(ncid, tas, NULL, &xt, &ndims, NULL, &natts));
    CHECK(xt == NC_FLOAT && ndims == 3 && natts == 2);
    static float f[NT * NY * NX];
    OK(nc_get_var_float(ncid, tas, f));
    int wrong = 0;
    for (size_t t = 0; t < NT; t++)
        for (size_t y = 0; y < NY; y++)
            for (size_t x = 0; x < NX; x++) {
                float want = (t == 4 && y == 5 && x == 7) ? -999.f : value(t, y, x);
                wrong += f[(t * NY + y) * NX + x] != want;
            }
    CHECK(wrong == 0);
    /* A strided window across fragment edges. */
    size_t st[3] = {1, 1, 2}, ct[3] = {2, 3, 3};
    ptrdiff_t sd[3] = {2, 2, 2};
    float w[18];
    OK(nc_get_vars_float(ncid, tas, st, ct, sd, w));
    CHECK(w[0] == value(1, 1, 2) && w[17] == value(3, 5, 6));
    OK(nc_inq_varid(ncid, "pr", &pr));
    static int p[NT * NY * NX];
    OK(nc_get_var_int(ncid, pr, p));
    CHECK(p[0] == NC_FILL_INT && p[NY * NX] == 1000 && p[2 * NY * NX + 3] == 2003 && p[3 * NY * NX] == NC_FILL_INT);
    OK(nc_inq_varid(ncid, "be", &be));
    static short s[NT * NY * NX];
    OK(nc_get_var_short(ncid, be, s));
    CHECK(s[4 * NY * NX + 9] == (short)(400 - 9));
    double times[NT];
    OK(nc_get_var_double(ncid, 0, times));
    CHECK(times[4] == 120);
    char title[8] = "";
    OK(nc_get_att_text(ncid, NC_GLOBAL, "title", title));
    CHECK(!strncmp(title, "test", 4));
    OK(nc_close(ncid));
}

/* The fragment files themselves: netCDF-4, the chunk's shape (cut at the array's edges), the
 * variable's own settings. */
static void read_fragments(void) {
    char f[4096];
    int ncid, v, shuffle, deflate, level, endian;
    size_t len;
    snprintf(f, sizeof f, "%s/w/w.tas.2.1.0.nc%s", prefix, suffix);
    OK(nc_open(f, NC_NOWRITE, &ncid));
    OK(nc_inq_varid(ncid, "tas", &v));
    OK(nc_inq_dimlen(ncid, 0, &len));
    CHECK(len == 1);   /* time 4..4: the last fragment along time holds one record */
    OK(nc_inq_var_deflate(ncid, v, &shuffle, &deflate, &level));
    CHECK(shuffle == 1 && deflate == 1 && level == 1);
    char units[4] = "";
    OK(nc_get_att_text(ncid, v, "units", units));   /* the fragment describes itself */
    CHECK(units[0] == 'K');
    float cell;
    size_t at[3] = {0, 2, 7};
    OK(nc_get_var1_float(ncid, v, at, &cell));
    CHECK(cell == -999.f);
    OK(nc_close(ncid));
    snprintf(f, sizeof f, "%s/w/w.be.0.0.0.nc%s", prefix, suffix);
    OK(nc_open(f, NC_NOWRITE, &ncid));
    OK(nc_inq_varid(ncid, "be", &v));
    OK(nc_inq_var_endian(ncid, v, &endian));
    CHECK(endian == NC_ENDIAN_BIG);
    OK(nc_close(ncid));
    snprintf(f, sizeof f, "%s/w/w.tas.0.0.0.nc%s", prefix, suffix);
    OK(nc_open(f, NC_NOWRITE, &ncid));
    OK(nc_inq_dimlen(ncid, 1, &len));
    CHECK(len == 3);
    OK(nc_close(ncid));
}

/* Reopened for writing: the unlimited dimension grows by new fragments (and the last one,
 * cut at close, grows again); everything written before reads back. */
static void append(void) {
    int ncid, tas, ndims;
    size_t len;
    OK(nc_open(name("w"), NC_WRITE, &ncid));
    OK(nc_inq_varid(ncid, "tas", &tas));
    OK(nc_inq_varndims(ncid, tas, &ndims));
    CHECK(ndims == 3);
    static float more[2 * NY * NX];
    for (size_t t = 0; t < 2; t++)
        for (size_t y = 0; y < NY; y++)
            for (size_t x = 0; x < NX; x++) more[(t * NY + y) * NX + x] = value(NT + t, y, x);
    size_t start[3] = {NT, 0, 0}, count[3] = {2, NY, NX};
    OK(nc_put_vara_float(ncid, tas, start, count, more));
    double times[2] = {150, 180};
    OK(nc_put_vara_double(ncid, 0, start, count, times));
    OK(nc_close(ncid));
    OK(nc_open(name("w"), NC_NOWRITE, &ncid));
    OK(nc_inq_dimlen(ncid, 0, &len));
    CHECK(len == NT + 2);
    static float f[(NT + 2) * NY * NX];
    OK(nc_inq_varid(ncid, "tas", &tas));
    OK(nc_get_var_float(ncid, tas, f));
    int wrong = 0;
    for (size_t t = 0; t < NT + 2; t++)
        for (size_t y = 0; y < NY; y++)
            for (size_t x = 0; x < NX; x++) {
                float want = (t == 4 && y == 5 && x == 7) ? -999.f : value(t, y, x);
                wrong += f[(t * NY + y) * NX + x] != want;
            }
    CHECK(wrong == 0);
    OK(nc_close(ncid));
    /* The last fragment along time holds the one record past the others. */
    char frag[4096];
    snprintf(frag, sizeof frag, "%s/w/w.tas.3.0.0.nc%s", prefix, suffix);
    OK(nc_open(frag, NC_NOWRITE, &ncid));
    OK(nc_inq_dimlen(ncid, 0, &len));
    CHECK(len == 1);
    OK(nc_close(ncid));
}

/* An aborted dataset leaves nothing; NC_NOCLOBBER on an existing master is NC_EEXIST. */
static void abort_and_noclobber(void) {
    int ncid, d[2], v;
    OK(nc_create(name("ab"), NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "y", 4, &d[0]));
    OK(nc_def_dim(ncid, "x", 4, &d[1]));
    OK(nc_def_var(ncid, "v", NC_INT, 2, d, &v));
    OK(nc_enddef(ncid));
    int data[16] = {0};
    OK(nc_put_var_int(ncid, v, data));
    OK(nc_abort(ncid));
    EXPECT(2, nc_open(name("ab"), NC_NOWRITE, &ncid));
    EXPECT(NC_EEXIST, nc_create(name("w"), NC_NOCLOBBER, &ncid));
}

/* 200 fragments written in an order that visits each many times (ctests/cfa/run.sh runs this with
 * NCZARR_CFA_FILEHANDLES=8 under a descriptor limit that more open files would exceed). */
static void many(void) {
    int ncid, d[3], v;
    OK(nc_create(name("many"), NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "t", 20, &d[0]));
    OK(nc_def_dim(ncid, "y", 10, &d[1]));
    OK(nc_def_dim(ncid, "x", 10, &d[2]));
    OK(nc_def_var(ncid, "v", NC_INT, 3, d, &v));
    size_t chunks[3] = {1, 1, 10};
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, chunks));
    OK(nc_enddef(ncid));
    /* Column by column: every write touches all 200 fragments. */
    for (size_t x = 0; x < 10; x++) {
        static int col[200];
        for (int i = 0; i < 200; i++) col[i] = i * 10 + (int)x;
        size_t start[3] = {0, 0, x}, count[3] = {20, 10, 1};
        OK(nc_put_vara_int(ncid, v, start, count, col));
        /* Stored mid-way: later columns reopen the fragments to add to them. */
        if (x == 3 || x == 6) OK(nc_sync(ncid));
    }
    OK(nc_close(ncid));
    OK(nc_open(name("many"), NC_NOWRITE, &ncid));
    static int all[2000];
    OK(nc_get_var_int(ncid, 0, all));
    int wrong = 0;
    for (int i = 0; i < 2000; i++) wrong += all[i] != i;
    CHECK(wrong == 0);
    OK(nc_close(ncid));
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    snprintf(prefix, sizeof prefix, "%s", argv[1]);
    convention = argv[2];
    if (argc > 3) suffix = argv[3];
    write_main();
    read_main();
    read_fragments();
    append();
    abort_and_noclobber();
    many();
    DONE();
}

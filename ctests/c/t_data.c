/* Data access: every shape, conversions and their errors, fill, unlimited growth, strings,
 * chars, scalars, byte order, codecs, the chunk cache, renames with data (c-api.md §9). */
#include "check.h"
#include "netcdf_filter.h"
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>

static int exists(const char *dir, const char *rel)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    const char *u = url(dir, "d.file", "nczarr,file");
    int ncid, t, y, x, v, vi, vc, vs, vsc, vb, vz[6], n;
    size_t len;

    OK(nc_create(u, 0, &ncid));
    OK(nc_def_dim(ncid, "time", NC_UNLIMITED, &t));
    OK(nc_def_dim(ncid, "y", 5, &y));
    OK(nc_def_dim(ncid, "x", 7, &x));
    int yx[2] = {y, x}, tyx[3] = {t, y, x};
    OK(nc_def_var(ncid, "f", NC_FLOAT, 2, yx, &v));
    size_t ch[2] = {2, 3};
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, ch));
    OK(nc_def_var(ncid, "i", NC_INT, 3, tyx, &vi));
    OK(nc_def_var(ncid, "c", NC_CHAR, 2, yx, &vc));
    OK(nc_def_var(ncid, "s", NC_STRING, 1, &y, &vs));
    int width = 4;
    OK(nc_put_att_int(ncid, vs, "_nczarr_maxstrlen", NC_INT, 1, &width));
    OK(nc_def_var(ncid, "sc", NC_DOUBLE, 0, NULL, &vsc));
    OK(nc_def_var(ncid, "big", NC_INT, 1, &x, &vb));
    OK(nc_def_var_endian(ncid, vb, NC_ENDIAN_BIG));
    const char *cnames[6] = {"zlib", "fletcher", "zstd", "bzip2", "blosc", "nofill"};
    for (int k = 0; k < 6; k++) {
        OK(nc_def_var(ncid, cnames[k], NC_DOUBLE, 2, yx, &vz[k]));
        OK(nc_def_var_chunking(ncid, vz[k], NC_CHUNKED, ch));
    }
    OK(nc_def_var_deflate(ncid, vz[0], 1, 1, 1));
    OK(nc_def_var_fletcher32(ncid, vz[1], 1));
    OK(nc_def_var_zstandard(ncid, vz[2], 3));
    OK(nc_def_var_bzip2(ncid, vz[3], 9));
    OK(nc_def_var_blosc(ncid, vz[4], BLOSC_ZSTD, 5, 0, BLOSC_BITSHUFFLE));
    OK(nc_def_var_fill(ncid, vz[5], 1, NULL));

    /* vara over chunk boundaries, then whole-variable read. */
    float f[5][7], g[5][7];
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 7; b++) f[a][b] = a * 10 + b + 0.5f;
    size_t st[3] = {1, 2, 0}, co[3] = {3, 4, 0};
    float part[3][4];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++) part[a][b] = f[1 + a][2 + b];
    OK(nc_put_vara_float(ncid, v, st, co, &part[0][0])); /* implicit enddef */
    OK(nc_get_var_float(ncid, v, &g[0][0]));
    CHECK(g[0][0] == NC_FILL_FLOAT && g[1][2] == f[1][2] && g[3][5] == f[3][5] && g[4][6] == NC_FILL_FLOAT);
    OK(nc_put_var_float(ncid, v, &f[0][0]));
    memset(g, 0, sizeof g);
    OK(nc_get_var_float(ncid, v, &g[0][0]));
    CHECK(memcmp(f, g, sizeof f) == 0);
    EXPECT(NC_ELATEDEF, nc_def_var_deflate(ncid, v, 0, 1, 1));

    /* var1, vars, varm (a transposed read). */
    size_t idx[2] = {4, 6};
    float one;
    OK(nc_get_var1_float(ncid, v, idx, &one));
    CHECK(one == f[4][6]);
    double dd;
    OK(nc_get_var1_double(ncid, v, idx, &dd));
    CHECK(dd == (double)f[4][6]);
    size_t s0[2] = {0, 1}, c0[2] = {3, 3};
    ptrdiff_t sd[2] = {2, 2};
    float strided[3][3];
    OK(nc_get_vars_float(ncid, v, s0, c0, sd, &strided[0][0]));
    CHECK(strided[0][0] == f[0][1] && strided[2][2] == f[4][5] && strided[1][1] == f[2][3]);
    size_t sa[2] = {0, 0}, ca[2] = {5, 7};
    ptrdiff_t im[2] = {1, 5};
    float tr[7][5];
    OK(nc_get_varm_float(ncid, v, sa, ca, NULL, im, &tr[0][0]));
    CHECK(tr[6][4] == f[4][6] && tr[2][1] == f[1][2]);
    float wv[7][5];
    for (int a = 0; a < 7; a++)
        for (int b = 0; b < 5; b++) wv[a][b] = tr[a][b] * 2;
    OK(nc_put_varm_float(ncid, v, sa, ca, NULL, im, &wv[0][0]));
    OK(nc_get_var1_float(ncid, v, idx, &one));
    CHECK(one == 2 * f[4][6]);
    OK(nc_put_var_float(ncid, v, &f[0][0]));

    /* Argument checks, in netcdf-c's order and codes. */
    size_t bad1[2] = {5, 0}, bad2[2] = {4, 0}, c2[2] = {2, 1}, zero[2] = {0, 0};
    ptrdiff_t badst[2] = {1, 0};
    EXPECT(NC_EINVALCOORDS, nc_get_vara_float(ncid, v, bad1, c2, &one));
    EXPECT(NC_EEDGE, nc_get_vara_float(ncid, v, bad2, c2, &one));
    EXPECT(NC_ESTRIDE, nc_get_vars_float(ncid, v, s0, zero, badst, &one));
    EXPECT(NC_EINVALCOORDS, nc_get_vara_float(ncid, v, NULL, c2, &one));
    EXPECT(NC_EINVALCOORDS, nc_get_var1_float(ncid, v, NULL, &one));
    EXPECT(NC_EEDGE, nc_get_vara_float(ncid, v, s0, NULL, &g[0][0]));
    EXPECT(NC_EINVAL, nc_get_var_float(ncid, v, NULL));
    EXPECT(NC_EINVAL, nc_put_var_float(ncid, v, NULL));
    OK(nc_get_vara_float(ncid, v, sa, zero, NULL));
    size_t edge[2] = {5, 7};
    OK(nc_get_vara_float(ncid, v, edge, zero, NULL));
    EXPECT(NC_ENOTVAR, nc_get_var_float(ncid, 99, &g[0][0]));
    EXPECT(NC_EBADID, nc_get_var_float(ncid + 99, v, &g[0][0]));

    /* Conversions: NC_ERANGE after the whole transfer, values as C casts them. */
    double big[7] = {1, 2, 3e10, -1, NAN, 2147483647.0, 5};
    EXPECT(NC_ERANGE, nc_put_var_double(ncid, vb, big));
    int back[7];
    OK(nc_get_var_int(ncid, vb, back));
    CHECK(back[0] == 1 && back[1] == 2 && back[2] == INT32_MIN && back[3] == -1 && back[4] == INT32_MIN && back[6] == 5);
    short sh[7];
    EXPECT(NC_ERANGE, nc_get_var_short(ncid, vb, sh));
    CHECK(sh[0] == 1 && sh[6] == 5 && sh[5] == -1);
    unsigned char uc[7];
    EXPECT(NC_ERANGE, nc_get_var_uchar(ncid, vb, uc));
    CHECK(uc[3] == 255);
    long long ll[7];
    OK(nc_get_var_longlong(ncid, vb, ll));
    CHECK(ll[5] == 2147483647LL);
    EXPECT(NC_ECHAR, nc_put_var_int(ncid, vc, back));
    EXPECT(NC_ECHAR, nc_get_var_text(ncid, vb, (char *)uc));
    char *sp[5];
    EXPECT(NC_EBADTYPE, nc_get_var_string(ncid, vb, sp));
    EXPECT(NC_EBADTYPE, nc_get_var_int(ncid, vs, back));
    EXPECT(NC_ECHAR, nc_get_var_text(ncid, vs, (char *)uc));

    /* Text, strings (width 4 widens to the longest: no byte is lost), scalars. */
    char text[5][7];
    memset(text, 'a', sizeof text);
    memcpy(text[2], "hello!!", 7);
    OK(nc_put_var_text(ncid, vc, &text[0][0]));
    char tback[5][7];
    OK(nc_get_var_text(ncid, vc, &tback[0][0]));
    CHECK(memcmp(text, tback, sizeof text) == 0);
    const char *words[5] = {"a", "", NULL, "toolong", "ünï"};
    OK(nc_put_var_string(ncid, vs, words));
    OK(nc_get_var_string(ncid, vs, sp));
    CHECK(strcmp(sp[0], "a") == 0 && strcmp(sp[1], "") == 0 && strcmp(sp[3], "toolong") == 0);
    CHECK(sp[2] == NULL || strcmp(sp[2], "") == 0);
    CHECK(strcmp(sp[4], "ünï") == 0);
    OK(nc_free_string(5, sp));
    double pi = 3.14159, piback = 0;
    OK(nc_put_var_double(ncid, vsc, &pi));
    OK(nc_get_var_double(ncid, vsc, &piback));
    CHECK(piback == pi);
    OK(nc_get_var1_double(ncid, vsc, NULL, &piback));
    CHECK(piback == pi);

    /* Unlimited growth, fill between, shared by every variable on the dimension. */
    int rec[5][7];
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 7; b++) rec[a][b] = a * 7 + b;
    size_t rs[3] = {3, 0, 0}, rc[3] = {1, 5, 7};
    OK(nc_put_vara_int(ncid, vi, rs, rc, &rec[0][0]));
    OK(nc_inq_dimlen(ncid, t, &len));
    CHECK(len == 4);
    int recback[4][5][7];
    OK(nc_get_var_int(ncid, vi, &recback[0][0][0]));
    CHECK(recback[0][0][0] == NC_FILL_INT && recback[3][4][6] == 34 && recback[2][1][1] == NC_FILL_INT);
    size_t zc[3] = {0, 5, 7}, far[3] = {9, 0, 0};
    OK(nc_put_vara_int(ncid, vi, far, zc, &rec[0][0])); /* count 0 does not grow */
    OK(nc_inq_dimlen(ncid, t, &len));
    CHECK(len == 4);

    /* Codecs round trip; a NOFILL variable reads zeros where never written. */
    double dv[5][7], dback[5][7];
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 7; b++) dv[a][b] = sin(a * 7 + b);
    for (int k = 0; k < 5; k++) OK(nc_put_var_double(ncid, vz[k], &dv[0][0]));
    size_t one1[2] = {1, 1};
    OK(nc_put_vara_double(ncid, vz[5], one1, one1, &pi));
    OK(nc_close(ncid));

    OK(nc_open(u, NC_WRITE, &ncid));
    OK(nc_get_var_float(ncid, v, &g[0][0]));
    CHECK(memcmp(f, g, sizeof f) == 0);
    for (int k = 0; k < 5; k++) {
        memset(dback, 0, sizeof dback);
        OK(nc_get_var_double(ncid, vz[k], &dback[0][0]));
        CHECK(memcmp(dv, dback, sizeof dv) == 0);
    }
    OK(nc_get_var_double(ncid, vz[5], &dback[0][0]));
    CHECK(dback[0][0] == 0 && dback[1][1] == pi);
    OK(nc_get_var_int(ncid, vb, back));
    CHECK(back[0] == 1 && back[6] == 5);
    OK(nc_inq_dimlen(ncid, t, &len));
    CHECK(len == 4);
    OK(nc_get_var_int(ncid, vi, &recback[0][0][0]));
    CHECK(recback[3][4][6] == 34 && recback[1][0][0] == NC_FILL_INT);
    OK(nc_get_var_string(ncid, vs, sp));
    CHECK(strcmp(sp[3], "toolong") == 0 && strcmp(sp[4], "ünï") == 0);
    OK(nc_free_string(5, sp));
    OK(nc_get_var_double(ncid, vsc, &piback));
    CHECK(piback == pi);
    /* Reading never creates chunks (C7). */
    CHECK(!exists(dir, "d.file/nofill/2.0"));
    CHECK(exists(dir, "d.file/nofill/0.0"));

    /* Renames keep the data (netcdf-c 4.10.1 loses it). */
    OK(nc_rename_var(ncid, v, "f_renamed"));
    OK(nc_close(ncid));
    OK(nc_open(u, NC_NOWRITE, &ncid));
    OK(nc_inq_varid(ncid, "f_renamed", &n));
    OK(nc_get_var_float(ncid, n, &g[0][0]));
    CHECK(memcmp(f, g, sizeof f) == 0);
    EXPECT(NC_EPERM, nc_put_var_float(ncid, n, &f[0][0]));
    OK(nc_close(ncid));

    /* A cache of one chunk: every write evicts and writes back; everything survives. */
    const char *uz = url(dir, "cache.zip", "nczarr,zip");
    OK(nc_create(uz, 0, &ncid));
    OK(nc_def_dim(ncid, "n", 1000, &x));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &x, &v));
    size_t c10 = 10;
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, &c10));
    OK(nc_set_var_chunk_cache(ncid, v, 40, 1, 0.5f));
    for (size_t k = 0; k < 1000; k++) {
        int val = (int)k * 3;
        OK(nc_put_var1_int(ncid, v, &k, &val));
    }
    OK(nc_close(ncid));
    OK(nc_open(uz, 0, &ncid));
    int all[1000];
    OK(nc_get_var_int(ncid, v, all));
    int good = 1;
    for (int k = 0; k < 1000; k++) good &= all[k] == k * 3;
    CHECK(good);

    /* nc_copy_var: definition, attributes and data. */
    int out;
    OK(nc_create(url(dir, "copy.file", "nczarr,file"), 0, &out));
    OK(nc_def_dim(out, "n", 1000, NULL));
    OK(nc_copy_var(ncid, v, out));
    OK(nc_close(ncid));
    OK(nc_inq_varid(out, "v", &n));
    memset(all, 0, sizeof all);
    OK(nc_get_var_int(out, n, all));
    CHECK(all[999] == 2997);
    OK(nc_close(out));
    DONE();
}

/* Zarr v3 through the nc_* API (zarr-v3.md): every type, codecs, scalars, strings, char,
 * unlimited growth across reopen, groups, no-fill, shards (API and `shard=`), zip, pure
 * Zarr v3, mode errors and v3 name rules. */
#include "check.h"
#include "netcdf_filter.h"
#include "netcdf_nczarr.h"
#include <sys/stat.h>

static int exists(const char *dir, const char *rel)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

static void write_all_types(const char *u)
{
    int ncid, t, lat, sl, g, k, v, sc, nm, stn, big, z, i64, ub, nf, fv, sub, bl, zs;
    OK(nc_create(u, NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "time", NC_UNLIMITED, &t));
    OK(nc_def_dim(ncid, "lat", 3, &lat));
    OK(nc_def_dim(ncid, "strlen", 4, &sl));
    int tl[2] = {t, lat}, ls[2] = {lat, sl};
    OK(nc_def_var(ncid, "t", NC_FLOAT, 2, tl, &v));
    float fill = -999.0f;
    OK(nc_put_att_float(ncid, v, "_FillValue", NC_FLOAT, 1, &fill));
    OK(nc_put_att_text(ncid, v, "units", 1, "K"));
    OK(nc_def_var(ncid, "sc", NC_DOUBLE, 0, NULL, &sc));
    OK(nc_def_var(ncid, "name", NC_STRING, 1, &lat, &nm));
    OK(nc_def_var(ncid, "stn", NC_CHAR, 2, ls, &stn));
    OK(nc_def_var(ncid, "big", NC_SHORT, 1, &lat, &big));
    OK(nc_def_var_endian(ncid, big, NC_ENDIAN_BIG));
    OK(nc_def_var_fletcher32(ncid, big, 1));
    OK(nc_def_var(ncid, "z", NC_INT, 2, tl, &z));
    OK(nc_def_var_deflate(ncid, z, 1, 1, 4));
    OK(nc_def_var(ncid, "i64", NC_INT64, 1, &lat, &i64));
    OK(nc_def_var_zstandard(ncid, i64, 3));
    OK(nc_def_var(ncid, "ub", NC_UBYTE, 1, &lat, &ub));
    OK(nc_def_var_bzip2(ncid, ub, 9));
    OK(nc_def_var(ncid, "bl", NC_DOUBLE, 1, &lat, &bl));
    OK(nc_def_var_blosc(ncid, bl, BLOSC_ZSTD, 5, 0, BLOSC_BITSHUFFLE));
    OK(nc_def_var(ncid, "nf", NC_INT, 1, &lat, &nf));
    OK(nc_def_var_fill(ncid, nf, NC_NOFILL, NULL));
    OK(nc_def_var(ncid, "fv", NC_UINT64, 1, &lat, &fv));
    OK(nc_def_var(ncid, "zs", NC_USHORT, 1, &lat, &zs));
    EXPECT(NC_EFILTER, nc_def_var_szip(ncid, zs, 32, 32));
    EXPECT(NC_EBADNAME, nc_def_var(ncid, "__hidden", NC_INT, 0, NULL, NULL));
    EXPECT(NC_EBADNAME, nc_def_grp(ncid, "...", NULL));
    OK(nc_def_grp(ncid, "g1", &g));
    OK(nc_def_dim(g, "k", 2, &k));
    OK(nc_def_var(g, "v", NC_SHORT, 1, &k, &sub));
    signed char flag[2] = {1, -1};
    OK(nc_put_att_schar(g, sub, "flag", NC_BYTE, 2, flag));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "title", 7, "example"));
    OK(nc_enddef(ncid));

    float tv[6] = {1, 2, 3, 4, 5, 6};
    size_t st[2] = {0, 0}, ct[2] = {2, 3};
    OK(nc_put_vara_float(ncid, v, st, ct, tv));
    double scv = 2.5;
    OK(nc_put_var_double(ncid, sc, &scv));
    const char *names[3] = {"Paris", "", "Z\xc3\xbcrich"};
    const char *bad_utf8[3] = {"ok", "\xff\xfe", "ok"};
    EXPECT(NC_EINVAL, nc_put_var_string(ncid, nm, bad_utf8));
    OK(nc_put_var_string(ncid, nm, names));
    OK(nc_put_var_text(ncid, stn, "abcdef\0\0ghij"));
    short bv[3] = {1, -2, 300};
    OK(nc_put_var_short(ncid, big, bv));
    int zv[6] = {1, 2, 3, 4, 5, 6};
    OK(nc_put_vara_int(ncid, z, st, ct, zv));
    long long iv[3] = {-9000000000LL, 0, 9000000000LL};
    OK(nc_put_var_longlong(ncid, i64, iv));
    unsigned char uv[3] = {0, 128, 255};
    OK(nc_put_var_uchar(ncid, ub, uv));
    double blv[3] = {0.5, -1.5, 1e300};
    OK(nc_put_var_double(ncid, bl, blv));
    size_t one = 1, i1 = 1;
    unsigned long long fvv = 18446744073709551615ULL;
    OK(nc_put_var1_ulonglong(ncid, fv, &i1, &fvv));
    short sv[2] = {1, -1};
    OK(nc_put_var_short(g, sub, sv));
    (void)one;
    OK(nc_close(ncid));
}

static void read_all_types(const char *u, int nczarr)
{
    int ncid, v, g, sub, ndims, fmt, sb, nf, shuf, defl, level, endian, fl, nofill, id;
    size_t len, chunks[2];
    OK(nc_open(u, NC_WRITE, &ncid));
    OK(nc_inq_format(ncid, &fmt));
    CHECK(fmt == NC_FORMAT_NETCDF4);
    OK(nc_inq_format_extended(ncid, &fmt, NULL));
    CHECK(fmt == NC_FORMATX_NCZARR);
    OK(nc_get_att_int(ncid, NC_GLOBAL, "_SuperblockVersion", &sb));
    CHECK(sb == (nczarr ? 3 : 0));
    int tdim;
    OK(nc_inq_dimid(ncid, "time", &tdim));
    OK(nc_inq_dimlen(ncid, tdim, &len));
    CHECK(len == 2);
    OK(nc_inq_varid(ncid, "t", &v));
    float tv[6], fill = 0;
    OK(nc_get_var_float(ncid, v, tv));
    CHECK(tv[0] == 1 && tv[5] == 6);
    OK(nc_get_att_float(ncid, v, "_FillValue", &fill));
    CHECK(fill == -999.0f);
    /* Unlimited growth after reopen: row 3 written, row 2 reads as fill. Pure Zarr has no
     * unlimited dimensions (the row is out of bounds there). */
    size_t st[2] = {3, 0}, ct[2] = {1, 3};
    float row[3] = {7, 8, 9}, back[12];
    EXPECT(nczarr ? NC_NOERR : NC_EINVALCOORDS, nc_put_vara_float(ncid, v, st, ct, row));
    if (nczarr) {
        OK(nc_inq_dimlen(ncid, tdim, &len));
        CHECK(len == 4);
        OK(nc_get_var_float(ncid, v, back));
        CHECK(back[6] == -999.0f && back[9] == 7 && back[11] == 9);
    }
    double scv = 0;
    OK(nc_inq_varid(ncid, "sc", &v));
    OK(nc_inq_varndims(ncid, v, &ndims));
    CHECK(ndims == 0);
    OK(nc_get_var_double(ncid, v, &scv));
    CHECK(scv == 2.5);
    char *names[3] = {0};
    OK(nc_inq_varid(ncid, "name", &v));
    nc_type type;
    OK(nc_inq_vartype(ncid, v, &type));
    CHECK(type == NC_STRING);
    OK(nc_get_var_string(ncid, v, names));
    CHECK(names[0] && strcmp(names[0], "Paris") == 0 && names[1] && names[1][0] == 0 && names[2] && strcmp(names[2], "Z\xc3\xbcrich") == 0);
    OK(nc_free_string(3, names));
    char text[13] = {0};
    OK(nc_inq_varid(ncid, "stn", &v));
    OK(nc_inq_vartype(ncid, v, &type));
    CHECK(type == (nczarr ? NC_CHAR : NC_UBYTE));
    if (nczarr) {
        OK(nc_get_var_text(ncid, v, text));
        CHECK(memcmp(text, "abcdef\0\0ghij", 12) == 0);
    }
    short bv[3];
    OK(nc_inq_varid(ncid, "big", &v));
    OK(nc_get_var_short(ncid, v, bv));
    CHECK(bv[0] == 1 && bv[1] == -2 && bv[2] == 300);
    OK(nc_inq_var_endian(ncid, v, &endian));
    CHECK(endian == NC_ENDIAN_BIG);
    OK(nc_inq_var_fletcher32(ncid, v, &fl));
    CHECK(fl == 1);
    int zv[6];
    OK(nc_inq_varid(ncid, "z", &v));
    OK(nc_get_vara_int(ncid, v, (size_t[]){0, 0}, (size_t[]){2, 3}, zv));
    CHECK(zv[0] == 1 && zv[5] == 6);
    OK(nc_inq_var_deflate(ncid, v, &shuf, &defl, &level));
    CHECK(shuf == 1 && defl == 1 && level == 4);
    OK(nc_inq_var_chunking(ncid, v, NULL, chunks));
    CHECK(chunks[0] == 1 && chunks[1] == 3);
    long long iv[3];
    OK(nc_inq_varid(ncid, "i64", &v));
    OK(nc_get_var_longlong(ncid, v, iv));
    CHECK(iv[0] == -9000000000LL && iv[2] == 9000000000LL);
    unsigned int ids[4];
    size_t nfilt;
    OK(nc_inq_var_filter_ids(ncid, v, &nfilt, ids));
    CHECK(nfilt == 1 && ids[0] == H5Z_FILTER_ZSTD);
    unsigned char uv[3];
    OK(nc_inq_varid(ncid, "ub", &v));
    OK(nc_get_var_uchar(ncid, v, uv));
    CHECK(uv[1] == 128 && uv[2] == 255);
    double blv[3];
    OK(nc_inq_varid(ncid, "bl", &v));
    OK(nc_get_var_double(ncid, v, blv));
    CHECK(blv[0] == 0.5 && blv[2] == 1e300);
    OK(nc_inq_var_filter_ids(ncid, v, &nfilt, ids));
    CHECK(nfilt == 1 && ids[0] == H5Z_FILTER_BLOSC);
    int nfv[3] = {5, 5, 5};
    OK(nc_inq_varid(ncid, "nf", &nf));
    OK(nc_inq_var_fill(ncid, nf, &nofill, NULL));
    CHECK(nofill == (nczarr ? 1 : 0));
    OK(nc_get_var_int(ncid, nf, nfv));
    CHECK(nfv[0] == 0 && nfv[2] == 0);
    unsigned long long fvv[3];
    OK(nc_inq_varid(ncid, "fv", &v));
    OK(nc_get_var_ulonglong(ncid, v, fvv));
    CHECK(fvv[0] == NC_FILL_UINT64 && fvv[1] == 18446744073709551615ULL);
    OK(nc_inq_ncid(ncid, "g1", &g));
    OK(nc_inq_varid(g, "v", &sub));
    short sv[2];
    OK(nc_get_var_short(g, sub, sv));
    CHECK(sv[0] == 1 && sv[1] == -1);
    signed char flag[2];
    OK(nc_get_att_schar(g, sub, "flag", flag));
    CHECK(flag[1] == -1);
    if (nczarr) {
        OK(nc_inq_atttype(g, sub, "flag", &type));
        CHECK(type == NC_BYTE);
    }
    id = 0;
    OK(nc_close(ncid));
    (void)id;
}

static void shards(const char *dir)
{
    int ncid, y, x, v, w, sharded;
    size_t shard[2], chunk[2] = {2, 3}, sh[2] = {4, 6}, bad[2] = {3, 6};
    const char *u = url(dir, "sh.zarr", "nczarr,v3,file");
    OK(nc_create(u, NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "y", 8, &y));
    OK(nc_def_dim(ncid, "x", 6, &x));
    int yx[2] = {y, x};
    OK(nc_def_var(ncid, "v", NC_USHORT, 2, yx, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, chunk));
    EXPECT(NC_EBADCHUNK, nczarr_def_var_shards(ncid, v, bad));
    OK(nczarr_def_var_shards(ncid, v, sh));
    OK(nczarr_inq_var_shards(ncid, v, &sharded, shard));
    CHECK(sharded == 1 && shard[0] == 4 && shard[1] == 6);
    OK(nc_def_var(ncid, "w", NC_FLOAT, 2, yx, &w));
    OK(nc_def_var_chunking(ncid, w, NC_CHUNKED, chunk));
    OK(nc_def_var_deflate(ncid, w, 1, 1, 1));
    OK(nczarr_def_var_shards(ncid, w, sh));
    OK(nczarr_def_var_shards(ncid, w, NULL));
    OK(nczarr_inq_var_shards(ncid, w, &sharded, NULL));
    CHECK(sharded == 0);
    OK(nczarr_def_var_shards(ncid, w, sh));
    OK(nc_enddef(ncid));
    EXPECT(NC_ELATEDEF, nczarr_def_var_shards(ncid, v, sh));
    unsigned short data[48];
    float fdata[48];
    for (int i = 0; i < 48; i++) {
        data[i] = (unsigned short)i;
        fdata[i] = i * 0.5f;
    }
    /* Rows written in separate calls: each shard is stored once per flush. */
    for (size_t r = 0; r < 8; r++) {
        OK(nc_put_vara_ushort(ncid, v, (size_t[]){r, 0}, (size_t[]){1, 6}, data + 6 * r));
    }
    OK(nc_put_var_float(ncid, w, fdata));
    OK(nc_close(ncid));
    CHECK(exists(dir, "sh.zarr/v/c/0/0") && exists(dir, "sh.zarr/v/c/1/0") && !exists(dir, "sh.zarr/v/c/0/1"));

    unsigned short back[48];
    float fback[48];
    OK(nc_open(u, NC_WRITE, &ncid));
    OK(nc_inq_varid(ncid, "v", &v));
    OK(nczarr_inq_var_shards(ncid, v, &sharded, shard));
    CHECK(sharded == 1 && shard[0] == 4);
    OK(nc_inq_var_chunking(ncid, v, NULL, shard));
    CHECK(shard[0] == 2 && shard[1] == 3);
    OK(nc_get_var_ushort(ncid, v, back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    /* One element changed: read-modify-write of its shard, neighbours intact. */
    unsigned short seven = 7777;
    OK(nc_put_var1_ushort(ncid, v, (size_t[]){5, 4}, &seven));
    OK(nc_inq_varid(ncid, "w", &w));
    OK(nc_get_var_float(ncid, w, fback));
    CHECK(memcmp(fback, fdata, sizeof fdata) == 0);
    OK(nc_close(ncid));
    OK(nc_open(u, 0, &ncid));
    OK(nc_get_var_ushort(ncid, v, back));
    data[5 * 6 + 4] = 7777;
    CHECK(memcmp(back, data, sizeof data) == 0);
    unsigned short part[4];
    OK(nc_get_vara_ushort(ncid, v, (size_t[]){4, 2}, (size_t[]){2, 2}, part));
    CHECK(part[0] == 26 && part[1] == 27 && part[2] == 32 && part[3] == 33);
    OK(nc_close(ncid));
    /* A renamed sharded variable keeps its shards (objects move; cached indexes forgotten). */
    OK(nc_open(u, NC_WRITE, &ncid));
    OK(nc_get_vara_ushort(ncid, v, (size_t[]){4, 2}, (size_t[]){2, 2}, part));
    OK(nc_rename_var(ncid, v, "moved"));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid)); /* a rename in data mode stays in data mode */
    memset(back, 0, sizeof back);
    OK(nc_get_var_ushort(ncid, v, back));
    CHECK(memcmp(back, data, sizeof data) == 0);
    OK(nc_close(ncid));
    CHECK(exists(dir, "sh.zarr/moved/c/1/0") && !exists(dir, "sh.zarr/v/c/1/0"));
    /* A shard rewritten as all fill is removed (its inner chunks are empty); it reads as fill. */
    OK(nc_open(u, NC_WRITE, &ncid));
    unsigned short fills[24];
    for (int i = 0; i < 24; i++)
        fills[i] = NC_FILL_USHORT;
    OK(nc_put_vara_ushort(ncid, v, (size_t[]){4, 0}, (size_t[]){4, 6}, fills));
    OK(nc_close(ncid));
    CHECK(!exists(dir, "sh.zarr/moved/c/1/0") && exists(dir, "sh.zarr/moved/c/0/0"));
    OK(nc_open(u, 0, &ncid));
    OK(nc_get_var_ushort(ncid, v, back));
    CHECK(back[0] == 0 && back[47] == NC_FILL_USHORT && back[24] == NC_FILL_USHORT);
    OK(nc_close(ncid));

    /* shard= in the URL: a 4 KiB target over 8x128 float chunks of a 64x512 array. */
    const char *ua = url(dir, "auto.zarr", "nczarr,v3,file&shard=16K");
    OK(nc_create(ua, NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "t", NC_UNLIMITED, &y));
    OK(nc_def_dim(ncid, "y", 64, &y));
    OK(nc_def_dim(ncid, "x", 512, &x));
    int tyx[3] = {0, y, x};
    OK(nc_def_var(ncid, "a", NC_FLOAT, 3, tyx, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){1, 8, 128}));
    OK(nc_enddef(ncid));
    OK(nczarr_inq_var_shards(ncid, v, &sharded, chunk));
    size_t s3[3];
    OK(nczarr_inq_var_shards(ncid, v, &sharded, s3));
    CHECK(sharded == 1 && s3[0] == 1 && s3[1] == 8 && s3[2] == 512);
    OK(nc_close(ncid));

    /* v2 datasets: no shards. */
    OK(nc_create(url(dir, "v2.zarr", "nczarr,file"), NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "y", 8, &y));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &y, &v));
    EXPECT(NC_ENOTBUILT, nczarr_def_var_shards(ncid, v, sh));
    OK(nc_close(ncid));
    EXPECT(NC_EINVAL, nc_create(url(dir, "bad.zarr", "nczarr,file&shard=auto"), NC_CLOBBER, &ncid));
    EXPECT(NC_EINVAL, nc_create(url(dir, "bad.zarr", "nczarr,v2,v3,file"), NC_CLOBBER, &ncid));
}

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    write_all_types(url(dir, "n3.zarr", "nczarr,v3,file"));
    CHECK(exists(dir, "n3.zarr/zarr.json") && exists(dir, "n3.zarr/t/c/0/0") && exists(dir, "n3.zarr/sc/c"));
    CHECK(!exists(dir, "n3.zarr/.zgroup"));
    read_all_types(url(dir, "n3.zarr", "nczarr,file"), 1);
    /* Open infers the version from the store: a bare path works too. */
    int ncid;
    OK(nc_open(path_in(dir, "n3.zarr"), 0, &ncid));
    OK(nc_close(ncid));

    write_all_types(url(dir, "p3.zarr", "zarr,v3,file"));
    read_all_types(url(dir, "p3.zarr", "zarr,file"), 0);

    write_all_types(url(dir, "z3.zip", "nczarr,v3,zip"));
    read_all_types(url(dir, "z3.zip", "nczarr,zip"), 1);

    /* NCZARRFORMAT=3 makes creates v3 without the mode word. */
    setenv("NCZARRFORMAT", "3", 1);
    OK(nc_create(url(dir, "env.zarr", "nczarr,file"), NC_CLOBBER, &ncid));
    OK(nc_close(ncid));
    unsetenv("NCZARRFORMAT");
    CHECK(exists(dir, "env.zarr/zarr.json"));
    OK(nc_create(url(dir, "env2.zarr", "nczarr,file"), NC_CLOBBER, &ncid));
    OK(nc_close(ncid));
    CHECK(exists(dir, "env2.zarr/.zgroup") && !exists(dir, "env2.zarr/zarr.json"));

    /* .ncrc ZARR.DIMENSION_SEPARATOR=. gives `default` keys with `.` (c.0.0). */
    OK(nc_rc_set("ZARR.DIMENSION_SEPARATOR", "."));
    int d2[2], dv;
    OK(nc_create(url(dir, "dot.zarr", "nczarr,v3,file"), NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "a", 2, &d2[0]));
    OK(nc_def_dim(ncid, "b", 2, &d2[1]));
    OK(nc_def_var(ncid, "v", NC_INT, 2, d2, &dv));
    OK(nc_put_var_int(ncid, dv, (int[]){1, 2, 3, 4}));
    OK(nc_close(ncid));
    OK(nc_rc_set("ZARR.DIMENSION_SEPARATOR", ""));
    CHECK(exists(dir, "dot.zarr/v/c.0.0"));
    int four[4] = {0};
    OK(nc_open(url(dir, "dot.zarr", "nczarr,file"), 0, &ncid));
    OK(nc_get_var_int(ncid, dv, four));
    CHECK(four[0] == 1 && four[3] == 4);
    OK(nc_close(ncid));

    shards(dir);
    DONE();
}

/* Writes the Zarr v3 datasets the Python readers check (py_ours3.py): every netCDF type, each
 * codec, a scalar, strings, char, unlimited growth over two sessions, no-fill, groups,
 * sharded variables (API and shard=), zip and pure Zarr. Values follow the formulas in
 * py_ours3.py. Usage: v3write DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "netcdf.h"
#include "netcdf_filter.h"
#include "netcdf_nczarr.h"

#define OK(call)                                                                          \
    do {                                                                                  \
        int rc_ = (call);                                                                 \
        if (rc_) {                                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(rc_)); \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static void write_dataset(const char *u, int pure)
{
    int ncid, t, y, x, n, sl, v, g, k;
    OK(nc_create(u, NC_CLOBBER, &ncid));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "title", 7, "ours v3"));
    double scale[2] = {1.5, 2.25};
    OK(nc_put_att_double(ncid, NC_GLOBAL, "scale", NC_DOUBLE, 2, scale));
    OK(nc_def_dim(ncid, "time", pure ? 2 : NC_UNLIMITED, &t));
    OK(nc_def_dim(ncid, "y", 6, &y));
    OK(nc_def_dim(ncid, "x", 8, &x));
    OK(nc_def_dim(ncid, "n", 3, &n));
    OK(nc_def_dim(ncid, "strlen", 4, &sl));
    int yx[2] = {y, x}, tyx[3] = {t, y, x}, ns[2] = {n, sl};
    static const nc_type types[] = {NC_BYTE, NC_UBYTE, NC_SHORT, NC_USHORT, NC_INT, NC_UINT, NC_INT64, NC_UINT64, NC_FLOAT, NC_DOUBLE};
    static const char *tnames[] = {"byte", "ubyte", "short", "ushort", "int", "uint", "int64", "uint64", "float", "double"};
    for (int i = 0; i < 10; i++) {
        char name[32];
        snprintf(name, sizeof name, "v_%s", tnames[i]);
        OK(nc_def_var(ncid, name, types[i], 2, yx, &v));
        OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){3, 4}));
    }
    static const char *codecs[] = {"c_gzip", "c_shuf", "c_crc", "c_zstd", "c_blosc", "c_bz2", "c_big"};
    for (int i = 0; i < 7; i++) {
        OK(nc_def_var(ncid, codecs[i], NC_INT, 2, yx, &v));
        OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){3, 4}));
        switch (i) {
        case 0: OK(nc_def_var_deflate(ncid, v, 0, 1, 5)); break;
        case 1: OK(nc_def_var_deflate(ncid, v, 1, 1, 1)); break;
        case 2: OK(nc_def_var_fletcher32(ncid, v, 1)); break;
        case 3: OK(nc_def_var_zstandard(ncid, v, 3)); break;
        case 4: OK(nc_def_var_blosc(ncid, v, BLOSC_LZ4, 5, 0, BLOSC_SHUFFLE)); break;
        case 5: OK(nc_def_var_bzip2(ncid, v, 9)); break;
        case 6: OK(nc_def_var_endian(ncid, v, NC_ENDIAN_BIG)); break;
        }
    }
    OK(nc_def_var(ncid, "rec", NC_FLOAT, 3, tyx, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){1, 3, 8}));
    float fill = -999.0f;
    OK(nc_put_att_float(ncid, v, "_FillValue", NC_FLOAT, 1, &fill));
    OK(nc_put_att_text(ncid, v, "units", 1, "K"));
    OK(nc_def_var(ncid, "sc", NC_DOUBLE, 0, NULL, &v));
    OK(nc_def_var(ncid, "names", NC_STRING, 1, &n, &v));
    OK(nc_def_var(ncid, "code", NC_CHAR, 2, ns, &v));
    OK(nc_def_var(ncid, "nofill", NC_SHORT, 1, &n, &v));
    OK(nc_def_var_fill(ncid, v, NC_NOFILL, NULL));
    OK(nc_def_var(ncid, "sharded", NC_USHORT, 2, yx, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){2, 2}));
    if (!pure)
        OK(nczarr_def_var_shards(ncid, v, (size_t[]){6, 4}));
    OK(nc_def_var(ncid, "sharded_z", NC_DOUBLE, 2, yx, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){3, 4}));
    OK(nc_def_var_deflate(ncid, v, 1, 1, 3));
    if (!pure)
        OK(nczarr_def_var_shards(ncid, v, (size_t[]){6, 8}));
    OK(nc_def_grp(ncid, "grp", &g));
    OK(nc_def_dim(g, "k", 2, &k));
    OK(nc_def_var(g, "gv", NC_SHORT, 1, &k, &v));
    OK(nc_put_att_text(g, NC_GLOBAL, "about", 3, "sub"));
    OK(nc_enddef(ncid));

    double vals[48];
    for (int i = 0; i < 48; i++)
        vals[i] = i - 10;
    for (int i = 0; i < 10; i++) {
        char name[32];
        snprintf(name, sizeof name, "v_%s", tnames[i]);
        OK(nc_inq_varid(ncid, name, &v));
        double pos[48];
        for (int j = 0; j < 48; j++)
            pos[j] = (types[i] == NC_UBYTE || types[i] == NC_USHORT || types[i] == NC_UINT || types[i] == NC_UINT64) ? j * 5 : vals[j] * 2.5;
        if (types[i] == NC_FLOAT || types[i] == NC_DOUBLE)
            OK(nc_put_var_double(ncid, v, pos));
        else {
            long long ints[48];
            for (int j = 0; j < 48; j++)
                ints[j] = (long long)pos[j];
            OK(nc_put_var_longlong(ncid, v, ints));
        }
    }
    int ints[48];
    for (int j = 0; j < 48; j++)
        ints[j] = j * 1000 - 7;
    for (int i = 0; i < 7; i++) {
        OK(nc_inq_varid(ncid, codecs[i], &v));
        OK(nc_put_var_int(ncid, v, ints));
    }
    float rec[48];
    for (int j = 0; j < 48; j++)
        rec[j] = j * 0.25f;
    OK(nc_inq_varid(ncid, "rec", &v));
    OK(nc_put_vara_float(ncid, v, (size_t[]){0, 0, 0}, (size_t[]){1, 6, 8}, rec));
    double sc = 42.5;
    OK(nc_inq_varid(ncid, "sc", &v));
    OK(nc_put_var_double(ncid, v, &sc));
    const char *names[3] = {"alpha", "", "\xce\xb2\xce\xb7\xcf\x84\xce\xb1"};
    OK(nc_inq_varid(ncid, "names", &v));
    OK(nc_put_var_string(ncid, v, names));
    OK(nc_inq_varid(ncid, "code", &v));
    OK(nc_put_var_text(ncid, v, "abcdef\0\0ghij"));
    short nf[2] = {11, 12};
    OK(nc_inq_varid(ncid, "nofill", &v));
    OK(nc_put_vara_short(ncid, v, (size_t[]){0}, (size_t[]){2}, nf));
    unsigned short us[48];
    for (int j = 0; j < 48; j++)
        us[j] = (unsigned short)(j * 3);
    OK(nc_inq_varid(ncid, "sharded", &v));
    /* Rows in separate calls; the last row untouched (fill). */
    for (size_t r = 0; r < 5; r++)
        OK(nc_put_vara_ushort(ncid, v, (size_t[]){r, 0}, (size_t[]){1, 8}, us + 8 * r));
    double dz[48];
    for (int j = 0; j < 48; j++)
        dz[j] = j / 8.0;
    OK(nc_inq_varid(ncid, "sharded_z", &v));
    OK(nc_put_var_double(ncid, v, dz));
    short gv[2] = {-3, 3};
    OK(nc_inq_varid(g, "gv", &v));
    OK(nc_put_var_short(g, v, gv));
    OK(nc_close(ncid));

    if (!pure) {
        /* Second session: the unlimited dimension grows to 3 (row 1 left as fill). */
        OK(nc_open(u, NC_WRITE, &ncid));
        OK(nc_inq_varid(ncid, "rec", &v));
        float last[48];
        for (int j = 0; j < 48; j++)
            last[j] = 100 + j;
        OK(nc_put_vara_float(ncid, v, (size_t[]){2, 0, 0}, (size_t[]){1, 6, 8}, last));
        OK(nc_close(ncid));
    }
    printf("%s\n", u);
}

int main(int argc, char **argv)
{
    char u[4096];
    if (argc != 2)
        return 2;
    snprintf(u, sizeof u, "file://%s/nc3.zarr#mode=nczarr,v3,file", argv[1]);
    write_dataset(u, 0);
    snprintf(u, sizeof u, "file://%s/pure3.zarr#mode=zarr,v3,file", argv[1]);
    write_dataset(u, 1);
    snprintf(u, sizeof u, "file://%s/nc3.zip#mode=nczarr,v3,zip", argv[1]);
    write_dataset(u, 0);
    snprintf(u, sizeof u, "file://%s/cons3.zarr#mode=nczarr,v3,consolidated,file", argv[1]);
    write_dataset(u, 0);
    snprintf(u, sizeof u, "file://%s/auto3.zarr#mode=nczarr,v3,file&shard=1K", argv[1]);
    write_dataset(u, 0);
    return 0;
}

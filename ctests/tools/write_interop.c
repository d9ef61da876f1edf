/* write_interop DIR: writes the datasets ctests/py_read_ours.py checks with zarr-python and
 * xarray: every atomic type as variable and attribute, nested groups, scalars, char and
 * string variables, unlimited dimensions, NCZarr and pure Zarr, directory and zip. */
#include <stdio.h>
#include <stdlib.h>
#include "netcdf.h"

#define E(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(s_)); exit(1); } } while (0)

static void define(const char *url)
{
    int nc, t, x, y, g, g2, v, k;
    E(nc_create(url, 0, &nc));
    E(nc_def_dim(nc, "time", NC_UNLIMITED, &t));
    E(nc_def_dim(nc, "y", 3, &y));
    E(nc_def_dim(nc, "x", 4, &x));
    int yx[2] = {y, x}, tx[2] = {t, x};
    static const struct { const char *name; nc_type type; } types[] = {
        {"v_byte", NC_BYTE}, {"v_ubyte", NC_UBYTE}, {"v_short", NC_SHORT}, {"v_ushort", NC_USHORT},
        {"v_int", NC_INT}, {"v_uint", NC_UINT}, {"v_int64", NC_INT64}, {"v_uint64", NC_UINT64},
        {"v_float", NC_FLOAT}, {"v_double", NC_DOUBLE}, {"v_char", NC_CHAR}, {"v_string", NC_STRING}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        E(nc_def_var(nc, types[i].name, types[i].type, 2, yx, &v));
    double d[2] = {3.141592653589793, -1e-300};
    float f[2] = {0.1f, 9.96921e36f};
    long long ll = -9000000000LL;
    unsigned long long ull = 18000000000000000000ULL;
    signed char sc = -7;
    unsigned short us = 65000;
    const char *strs[2] = {"alpha", "beta"};
    E(nc_put_att_double(nc, NC_GLOBAL, "att_double", NC_DOUBLE, 2, d));
    E(nc_put_att_float(nc, NC_GLOBAL, "att_float", NC_FLOAT, 2, f));
    E(nc_put_att_longlong(nc, NC_GLOBAL, "att_int64", NC_INT64, 1, &ll));
    E(nc_put_att_ulonglong(nc, NC_GLOBAL, "att_uint64", NC_UINT64, 1, &ull));
    E(nc_put_att_schar(nc, NC_GLOBAL, "att_byte", NC_BYTE, 1, &sc));
    E(nc_put_att_ushort(nc, NC_GLOBAL, "att_ushort", NC_USHORT, 1, &us));
    E(nc_put_att_text(nc, NC_GLOBAL, "title", 14, "interop sample"));
    E(nc_put_att_text(nc, NC_GLOBAL, "numeric_text", 2, "17"));
    E(nc_put_att_string(nc, NC_GLOBAL, "att_strings", 2, strs));
    E(nc_def_var(nc, "temp", NC_FLOAT, 2, tx, &v));
    E(nc_put_att_text(nc, v, "units", 1, "K"));
    float fill = -999.0f;
    E(nc_put_att_float(nc, v, "_FillValue", NC_FLOAT, 1, &fill));
    E(nc_def_var_deflate(nc, v, 1, 1, 1));
    E(nc_def_var(nc, "scalar", NC_DOUBLE, 0, NULL, &v));
    E(nc_put_att_text(nc, v, "long_name", 6, "scalar"));
    E(nc_def_grp(nc, "g1", &g));
    E(nc_def_dim(g, "k", 2, &k));
    int yk[2] = {y, k};
    E(nc_def_var(g, "gv", NC_INT, 2, yk, &v));
    E(nc_def_grp(g, "g2", &g2));
    E(nc_def_var(g2, "deep", NC_SHORT, 1, &k, &v));
    E(nc_put_att_int(g2, NC_GLOBAL, "level", NC_INT, 1, (int[]){2}));

    /* Data: every type gets 0..11 (chars 'a'.., strings "s0".., one left unwritten as fill). */
    double vals[12];
    for (int i = 0; i < 12; i++) vals[i] = i;
    size_t start[2] = {0, 0}, count[2] = {3, 4}, part[2] = {2, 4};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        E(nc_inq_varid(nc, types[i].name, &v));
        if (types[i].type == NC_CHAR) {
            E(nc_put_vara_text(nc, v, start, part, "abcdefgh"));
        } else if (types[i].type == NC_STRING) {
            const char *s[8] = {"s0", "", "s2", "s3", "s4", "s5", "s6", "a longer string"};
            E(nc_put_vara_string(nc, v, start, part, s));
        } else {
            E(nc_put_vara_double(nc, v, start, part, vals));
        }
    }
    E(nc_inq_varid(nc, "temp", &v));
    float tv[8] = {1.5f, -2.5f, 3.25f, 273.15f, 5, 6, 7, 8};
    size_t tc[2] = {2, 4};
    E(nc_put_vara_float(nc, v, start, tc, tv)); /* grows time to 2 */
    E(nc_inq_varid(nc, "scalar", &v));
    E(nc_put_var_double(nc, v, (double[]){42.5}));
    E(nc_inq_varid(g, "gv", &v));
    int gvals[6] = {1, 2, 3, 4, 5, 6};
    E(nc_put_var_int(g, v, gvals));
    (void)count;
    E(nc_close(nc));
}

int main(int argc, char **argv)
{
    char url[4096];
    const char *modes[][2] = {{"nczarr.file", "nczarr,file"}, {"nczarr.zip", "nczarr,zip"},
                              {"pure.zarr", "zarr,file"}, {"consolidated.file", "nczarr,file,consolidated"}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        snprintf(url, sizeof url, "file://%s/%s#mode=%s", argv[1], modes[i][0], modes[i][1]);
        define(url);
        printf("%s\n", url);
    }
    return 0;
}

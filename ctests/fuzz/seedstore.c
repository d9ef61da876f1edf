/* Writes the seed dataset the hostile-store fuzzer mutates: groups, fixed and unlimited
 * dimensions, every kind of variable (numeric with and without filters, char, string,
 * scalar), attributes of several types, several chunks per variable with some never written,
 * and on v3 a sharded variable.
 *
 *   seedstore DATASET-NAME [shards] */
#include <netcdf.h>
#include "netcdf_nczarr.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s: %s\n", #call, nc_strerror(s_)); exit(1); } } while (0)

int main(int argc, char **argv)
{
    int ncid, t, x, y, g, vi, vf, vd, vc, vs, vb, vsc, vg, vsh;
    int shards = argc > 2 && !strcmp(argv[2], "shards");
    E(nc_create(argv[1], NC_NETCDF4 | NC_CLOBBER, &ncid));
    E(nc_def_dim(ncid, "t", NC_UNLIMITED, &t));
    E(nc_def_dim(ncid, "y", 6, &y));
    E(nc_def_dim(ncid, "x", 8, &x));
    int d3[3] = {t, y, x}, d2[2] = {y, x};
    size_t c3[3] = {1, 3, 4}, c2[2] = {3, 4}, c1[1] = {4};
    E(nc_def_var(ncid, "i", NC_INT, 2, d2, &vi));
    E(nc_def_var_chunking(ncid, vi, NC_CHUNKED, c2));
    E(nc_def_var(ncid, "f", NC_FLOAT, 3, d3, &vf));
    E(nc_def_var_chunking(ncid, vf, NC_CHUNKED, c3));
    E(nc_def_var_deflate(ncid, vf, 1, 1, 3));
    float ff = -1.0f;
    E(nc_def_var_fill(ncid, vf, 0, &ff));
    E(nc_def_var(ncid, "d", NC_DOUBLE, 1, &x, &vd));
    E(nc_def_var_chunking(ncid, vd, NC_CHUNKED, c1));
    E(nc_def_var(ncid, "c", NC_CHAR, 2, d2, &vc));
    E(nc_def_var(ncid, "s", NC_STRING, 1, &x, &vs));
    E(nc_def_var_chunking(ncid, vs, NC_CHUNKED, c1));
    E(nc_def_var(ncid, "b", NC_UBYTE, 1, &y, &vb));
    E(nc_def_var_fletcher32(ncid, vb, 1));
    E(nc_def_var(ncid, "scalar", NC_DOUBLE, 0, NULL, &vsc));
    if (shards) {
        E(nc_def_var(ncid, "sh", NC_SHORT, 2, d2, &vsh));
        size_t inner[2] = {1, 2}, outer[2] = {3, 4};
        E(nc_def_var_chunking(ncid, vsh, NC_CHUNKED, inner));
        E(nczarr_def_var_shards(ncid, vsh, outer));
    }
    E(nc_put_att_text(ncid, NC_GLOBAL, "title", 9, "hostile seed"));
    int ia[3] = {1, -2, 3};
    E(nc_put_att_int(ncid, NC_GLOBAL, "ints", NC_INT, 3, ia));
    const char *strs[2] = {"alpha", "beta"};
    E(nc_put_att_string(ncid, vs, "names", 2, strs));
    E(nc_put_att_text(ncid, vf, "units", 1, "K"));
    double range[2] = {-50, 50};
    E(nc_put_att_double(ncid, vf, "valid_range", NC_DOUBLE, 2, range));
    E(nc_def_grp(ncid, "g", &g));
    int z;
    E(nc_def_dim(g, "z", 5, &z));
    int dgz[2] = {z, x};
    E(nc_def_var(g, "v", NC_INT64, 2, dgz, &vg));
    E(nc_put_att_text(g, NC_GLOBAL, "note", 5, "inner"));
    E(nc_enddef(ncid));

    int ibuf[48];
    for (int k = 0; k < 48; k++) ibuf[k] = k * 7 - 100;
    size_t s2[2] = {0, 0}, n2[2] = {3, 8};
    E(nc_put_vara_int(ncid, vi, s2, n2, ibuf)); /* rows 3..5 stay unwritten */
    float fbuf[2 * 48];
    for (int k = 0; k < 96; k++) fbuf[k] = (float)k / 4;
    size_t s3[3] = {0, 0, 0}, n3[3] = {2, 6, 8};
    E(nc_put_vara_float(ncid, vf, s3, n3, fbuf));
    double dbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    E(nc_put_var_double(ncid, vd, dbuf));
    char cbuf[48];
    for (int k = 0; k < 48; k++) cbuf[k] = (char)('a' + k % 26);
    E(nc_put_var_text(ncid, vc, cbuf));
    const char *sv[8] = {"one", "two", "", "four", "five", "six", "seven", "eight"};
    E(nc_put_var_string(ncid, vs, sv));
    unsigned char bbuf[6] = {1, 2, 3, 4, 5, 6};
    E(nc_put_var_ubyte(ncid, vb, bbuf));
    double one = 42;
    E(nc_put_var_double(ncid, vsc, &one));
    long long lbuf[40];
    for (int k = 0; k < 40; k++) lbuf[k] = (long long)k << 33;
    E(nc_put_var_longlong(g, vg, lbuf));
    if (shards) {
        short sbuf[48];
        for (int k = 0; k < 48; k++) sbuf[k] = (short)(k * 3);
        E(nc_put_var_short(ncid, vsh, sbuf));
    }
    E(nc_close(ncid));
    return 0;
}

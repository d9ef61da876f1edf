/* Aggregated (CFA) masters read through the nc_* API, checked against their own fragment
 * files read directly.
 * usage: t_cfa <master> <fragment prefix> <s0> <s1> <s2> [suffix]
 *   fragment (i,j,k) of variable v is "<prefix>.<v>.<i>.<j>.<k>.nc<suffix>", of shape
 *   s0 x s1 x s2 (suffix: "#mode=bytes" for fragments on S3). */
#include <stdlib.h>
#include <string.h>
#include "../check.h"

#define NT 12
#define NY 18
#define NX 36
#define AT(t, y, x) (((t) * NY + (y)) * NX + (x))

static double tas[NT * NY * NX], ref[NT * NY * NX];
static const char *suffix = "";

static void assemble(const char *prefix, const char *var, const size_t *s) {
    for (size_t i = 0; i < NT / s[0]; i++)
        for (size_t j = 0; j < NY / s[1]; j++)
            for (size_t k = 0; k < NX / s[2]; k++) {
                char name[4096];
                snprintf(name, sizeof name, "%s.%s.%zu.%zu.%zu.nc%s", prefix, var, i, j, k, suffix);
                int ncid, v;
                OK(nc_open(name, NC_NOWRITE, &ncid));
                OK(nc_inq_varid(ncid, var, &v));
                double *block = malloc(s[0] * s[1] * s[2] * sizeof(double));
                OK(nc_get_var_double(ncid, v, block));
                OK(nc_close(ncid));
                for (size_t a = 0; a < s[0]; a++)
                    for (size_t b = 0; b < s[1]; b++)
                        for (size_t c = 0; c < s[2]; c++)
                            ref[AT(i * s[0] + a, j * s[1] + b, k * s[2] + c)] = block[(a * s[1] + b) * s[2] + c];
                free(block);
            }
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) return 2;
    if (argc == 7) suffix = argv[6];
    const char *master = argv[1], *prefix = argv[2];
    size_t s[3] = {atoi(argv[3]), atoi(argv[4]), atoi(argv[5])};
    int ncid, v, p, ndims, natts, ngrps, dimids[3], fmt;
    nc_type xtype;
    OK(nc_open(master, NC_NOWRITE, &ncid));
    OK(nc_inq_varid(ncid, "tas", &v));
    OK(nc_inq_varid(ncid, "pr", &p));
    /* The aggregated variable is ordinary: its dimensions, type and attributes, no bookkeeping. */
    OK(nc_inq_var(ncid, v, NULL, &xtype, &ndims, dimids, &natts));
    CHECK(xtype == NC_FLOAT && ndims == 3 && natts == 3);
    size_t len[3];
    for (int d = 0; d < 3; d++) OK(nc_inq_dimlen(ncid, dimids[d], &len[d]));
    CHECK(len[0] == NT && len[1] == NY && len[2] == NX);
    EXPECT(NC_ENOTATT, nc_inq_att(ncid, v, "cf_role", NULL, NULL));
    EXPECT(NC_ENOTATT, nc_inq_att(ncid, v, "cfa_dimensions", NULL, NULL));
    EXPECT(NC_ENOTATT, nc_inq_att(ncid, NC_GLOBAL, "Conventions", NULL, NULL));
    OK(nc_inq_grps(ncid, &ngrps, NULL));
    CHECK(ngrps == 0);
    OK(nc_inq_format(ncid, &fmt));
    float fill;
    OK(nc_get_att_float(ncid, v, "_FillValue", &fill));
    CHECK(fill == -999.0f);
    /* Whole variables equal their fragments assembled. */
    OK(nc_get_var_double(ncid, v, tas));
    assemble(prefix, "tas", s);
    CHECK(!memcmp(tas, ref, sizeof tas));
    CHECK(tas[AT(3, 5, 7)] == -999.0);
    static int pr[NT * NY * NX];
    OK(nc_get_var_int(ncid, p, pr));
    assemble(prefix, "pr", s);
    int same = 1;
    for (int i = 0; i < NT * NY * NX; i++) same &= pr[i] == (int)ref[i];
    CHECK(same);
    /* A strided window across fragment boundaries, in another memory type. */
    size_t st[3] = {1, 2, 3}, cnt[3] = {5, 6, 8};
    ptrdiff_t sd[3] = {2, 3, 4};
    float win[5 * 6 * 8];
    OK(nc_get_vars_float(ncid, v, st, cnt, sd, win));
    assemble(prefix, "tas", s);
    same = 1;
    for (size_t a = 0; a < cnt[0]; a++)
        for (size_t b = 0; b < cnt[1]; b++)
            for (size_t c = 0; c < cnt[2]; c++)
                same &= win[(a * cnt[1] + b) * cnt[2] + c] == (float)ref[AT(st[0] + a * sd[0], st[1] + b * sd[1], st[2] + c * sd[2])];
    CHECK(same);
    /* One cell, and a hyperslab over exactly one fragment's edge. */
    double one;
    size_t at[3] = {NT - 1, NY - 1, NX - 1}, c1[3] = {1, 1, 1};
    OK(nc_get_vara_double(ncid, v, at, c1, &one));
    CHECK(one == ref[AT(NT - 1, NY - 1, NX - 1)]);
    /* Read-only: the aggregated dataset is not written through. */
    float x = 1;
    size_t z[3] = {0, 0, 0};
    EXPECT(NC_EPERM, nc_put_var1_float(ncid, v, z, &x));
    OK(nc_close(ncid));
    DONE();
}

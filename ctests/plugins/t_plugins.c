/* HDF5 filter plugins (ctests/run_plugins.sh): a filter we do not build in, run through its
 * plugin from HDF5_PLUGIN_PATH.
 * usage: t_plugins <dir> write <id>     NCZarr (v2 and v3) round trips through filter <id>
 *        t_plugins <dir> missing <id>   the stores written before, with no plugin for <id>:
 *                                       they open and inquire; data reads are NC_ENOFILTER
 *        t_plugins <dir> zfp <id>       ZFP (set_local): reversible and accuracy modes
 *        t_plugins <dir> szip 4         szip (set_local) through nc_def_var_szip */
#include <stdlib.h>
#include "../check.h"
#include "netcdf_filter.h"

#define N 4096

static void round_trip(const char *dir, const char *name, const char *mode, unsigned id) {
    int ncid, dim, var;
    static int data[N], back[N];
    for (int i = 0; i < N; i++) data[i] = i / 7;   /* compressible */
    OK(nc_create(url(dir, name, mode), NC_CLOBBER | NC_NETCDF4, &ncid));
    EXPECT(NC_NOERR, nc_inq_filter_avail(ncid, id));
    OK(nc_def_dim(ncid, "x", N, &dim));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &dim, &var));
    size_t chunk = N / 2;
    OK(nc_def_var_chunking(ncid, var, NC_CHUNKED, &chunk));
    OK(nc_def_var_filter(ncid, var, id, 0, NULL));
    OK(nc_put_var_int(ncid, var, data));
    OK(nc_close(ncid));
    OK(nc_open(url(dir, name, mode), NC_NOWRITE, &ncid));
    size_t nfilters = 0;
    unsigned ids[4] = {0};
    OK(nc_inq_var_filter_ids(ncid, 0, &nfilters, ids));
    CHECK(nfilters == 1 && ids[0] == id);
    OK(nc_get_var_int(ncid, 0, back));
    int wrong = 0;
    for (int i = 0; i < N; i++) wrong += back[i] != data[i];
    CHECK(wrong == 0);
    OK(nc_close(ncid));
}

static void missing(const char *dir, const char *name, const char *mode, unsigned id) {
    int ncid, xtype;
    static int back[N];
    OK(nc_open(url(dir, name, mode), NC_NOWRITE, &ncid));
    EXPECT(NC_ENOFILTER, nc_inq_filter_avail(ncid, id));
    OK(nc_inq_vartype(ncid, 0, &xtype));
    CHECK(xtype == NC_INT);
    size_t nfilters = 0;
    unsigned ids[4] = {0};
    OK(nc_inq_var_filter_ids(ncid, 0, &nfilters, ids));
    CHECK(nfilters == 1 && ids[0] == id);
    EXPECT(NC_ENOFILTER, nc_get_var_int(ncid, 0, back));
    OK(nc_close(ncid));
}

/* ZFP (lossy, with HDF5's set_local): the parameters a program gives (reversible mode, then an
 * accuracy), through the plugin's set_local, round trip exactly / within the accuracy. */
static void zfp(const char *dir, unsigned id) {
    int ncid, dim, var;
    static float data[N], back[N];
    for (int i = 0; i < N; i++) data[i] = (float)(i % 97) * 0.25f + 3.0f;
    for (int mode = 0; mode < 2; mode++) {
        const char *name = mode ? "zfp_acc.zarr" : "zfp_rev.zarr";
        unsigned params[4] = {5, 0, 0, 0};
        if (mode) {
            double accuracy = 0.01;
            params[0] = 3;
            memcpy(&params[2], &accuracy, sizeof accuracy);
        }
        OK(nc_create(url(dir, name, "nczarr,file"), NC_CLOBBER | NC_NETCDF4, &ncid));
        EXPECT(NC_NOERR, nc_inq_filter_avail(ncid, id));
        OK(nc_def_dim(ncid, "x", N, &dim));
        OK(nc_def_var(ncid, "v", NC_FLOAT, 1, &dim, &var));
        size_t chunk = N / 4;
        OK(nc_def_var_chunking(ncid, var, NC_CHUNKED, &chunk));
        OK(nc_def_var_filter(ncid, var, id, 4, params));
        OK(nc_put_var_float(ncid, var, data));
        OK(nc_close(ncid));
        OK(nc_open(url(dir, name, "nczarr,file"), NC_NOWRITE, &ncid));
        size_t nparams = 0;
        unsigned got[8] = {0};
        OK(nc_inq_var_filter_info(ncid, 0, id, &nparams, got));
        CHECK(nparams == 4 && got[0] == params[0]);   /* what the program gave */
        OK(nc_get_var_float(ncid, 0, back));
        double worst = 0;
        for (int i = 0; i < N; i++) {
            double e = back[i] > data[i] ? back[i] - data[i] : data[i] - back[i];
            if (e > worst) worst = e;
        }
        CHECK(mode ? worst <= 0.01 : worst == 0);
        if (!(mode ? worst <= 0.01 : worst == 0)) fprintf(stderr, "zfp mode %d: worst error %g\n", mode, worst);
        OK(nc_close(ncid));
    }
}

/* szip through its plugin: netCDF's shorthand, netcdf-c's codec JSON, values exact. */
static void szip(const char *dir) {
    int ncid, dim, var, mask = 0, ppb = 0;
    static int data[N], back[N];
    for (int i = 0; i < N; i++) data[i] = i / 5;
    OK(nc_create(url(dir, "sz.zarr", "nczarr,file"), NC_CLOBBER | NC_NETCDF4, &ncid));
    EXPECT(NC_NOERR, nc_inq_filter_avail(ncid, 4));
    OK(nc_def_dim(ncid, "x", N, &dim));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &dim, &var));
    size_t chunk = N / 4;
    OK(nc_def_var_chunking(ncid, var, NC_CHUNKED, &chunk));
    OK(nc_def_var_szip(ncid, var, 32, 32));
    OK(nc_put_var_int(ncid, var, data));
    OK(nc_close(ncid));
    OK(nc_open(url(dir, "sz.zarr", "nczarr,file"), NC_NOWRITE, &ncid));
    OK(nc_inq_var_szip(ncid, 0, &mask, &ppb));
    CHECK(mask == 32 && ppb == 32);
    OK(nc_get_var_int(ncid, 0, back));
    int wrong = 0;
    for (int i = 0; i < N; i++) wrong += back[i] != data[i];
    CHECK(wrong == 0);
    OK(nc_close(ncid));
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    unsigned id = (unsigned)atoi(argv[3]);
    const char *dir = argv[1];
    if (!strcmp(argv[2], "szip")) {
        szip(dir);
        DONE();
    }
    if (!strcmp(argv[2], "zfp")) {
        zfp(dir, id);
        DONE();
    }
    int writing = !strcmp(argv[2], "write");
    const char *modes[] = {"nczarr,file", "nczarr,file,v3"};
    const char *names[] = {"p2.zarr", "p3.zarr"};
    for (int m = 0; m < 2; m++) {
        if (writing) round_trip(dir, names[m], modes[m], id);
        else missing(dir, names[m], modes[m], id);
    }
    DONE();
}

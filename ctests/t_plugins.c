/* HDF5 filter plugins (ctests/run_plugins.sh): a filter we do not build in, run through its
 * plugin from HDF5_PLUGIN_PATH.
 * usage: t_plugins <dir> write <id>     NCZarr (v2 and v3) round trips through filter <id>
 *        t_plugins <dir> missing <id>   the stores written before, with no plugin for <id>:
 *                                       they open and inquire; data reads are NC_ENOFILTER
 *        t_plugins <dir> refused <id>   a plugin that needs HDF5's set_local: NC_EFILTER */
#include <stdlib.h>
#include "check.h"
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

static void refused(const char *dir, unsigned id) {
    int ncid, dim, var;
    OK(nc_create(url(dir, "r.zarr", "nczarr,file"), NC_CLOBBER | NC_NETCDF4, &ncid));
    EXPECT(NC_ENOFILTER, nc_inq_filter_avail(ncid, id));
    OK(nc_def_dim(ncid, "x", N, &dim));
    OK(nc_def_var(ncid, "v", NC_FLOAT, 1, &dim, &var));
    unsigned params[4] = {1, 0, 0, 0};
    EXPECT(NC_EFILTER, nc_def_var_filter(ncid, var, id, 4, params));
    EXPECT(NC_EFILTER, nc_def_var_filter(ncid, var, id, 0, NULL));
    OK(nc_close(ncid));
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    unsigned id = (unsigned)atoi(argv[3]);
    const char *dir = argv[1];
    if (!strcmp(argv[2], "refused")) {
        refused(dir, id);
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

/* HDF5 filter plugins (ctests/plugins/run.sh): a filter we do not build in, run through its
 * plugin from HDF5_PLUGIN_PATH.
 * usage: t_plugins <dir> write <id> [p...] NCZarr (v2 and v3) round trips through filter <id>
 *                                       (with HDF5 parameters p...)
 *        t_plugins <dir> missing <id>   the stores written before, with no plugin for <id>:
 *                                       they open and inquire; data reads are NC_ENOFILTER
 *        t_plugins <dir> zfp <id>       ZFP (set_local): reversible and accuracy modes
 *        t_plugins <dir> szip 4         szip (set_local) through nc_def_var_szip
 *        t_plugins <dir> path <id>      the plugin-path API: HDF5_PLUGIN_PATH is two directories,
 *                                       the first holding the plugin of <id>, the second none */
#include <stdlib.h>
#include "../check.h"
#include "netcdf_filter.h"
#include "netcdf_aux.h"

#define N 4096

static unsigned nparams, params[8];

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
    OK(nc_def_var_filter(ncid, var, id, nparams, params));
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

/* The plugin path: netcdf-c's initial path is HDF5_PLUGIN_PATH's directories; setting it
 * changes where filters are found from the next use; the ncaux helpers parse, join, grow and
 * free lists, and read and set the path as netcdf-fortran's `;`-separated string. */
static void plugin_path(const char *dir, unsigned id) {
    int ncid;
    size_t n = 99;
    OK(nc_create(url(dir, "path.zarr", "nczarr,file"), NC_CLOBBER | NC_NETCDF4, &ncid));
    OK(nc_plugin_path_ndirs(&n));
    CHECK(n == 2);
    NCPluginList now = {0, NULL};
    OK(nc_plugin_path_get(&now));
    CHECK(now.ndirs == 2 && now.dirs != NULL && strstr(now.dirs[1], "none") != NULL);
    EXPECT(NC_NOERR, nc_inq_filter_avail(ncid, id));
    /* Only the directory without plugins: the filter is not found. */
    NCPluginList only = {1, &now.dirs[1]};
    OK(nc_plugin_path_set(&only));
    OK(nc_plugin_path_ndirs(&n));
    CHECK(n == 1);
    EXPECT(NC_ENOFILTER, nc_inq_filter_avail(ncid, id));
    /* Back: found again. */
    OK(nc_plugin_path_set(&now));
    EXPECT(NC_NOERR, nc_inq_filter_avail(ncid, id));
    EXPECT(NC_EINVAL, nc_plugin_path_set(NULL));
    OK(nc_plugin_path_get(NULL));
    /* The string forms. */
    int len = ncaux_plugin_path_stringlen();
    CHECK(len == (int)(strlen(now.dirs[0]) + 1 + strlen(now.dirs[1])));
    char buf[4096];
    OK(ncaux_plugin_path_stringget((int)sizeof buf, buf));
    CHECK(strchr(buf, ';') != NULL && (int)strlen(buf) == len);
    OK(ncaux_plugin_path_stringset((int)strlen(now.dirs[1]), now.dirs[1]));
    EXPECT(NC_ENOFILTER, nc_inq_filter_avail(ncid, id));
    OK(ncaux_plugin_path_stringset((int)strlen(buf), buf));
    EXPECT(NC_NOERR, nc_inq_filter_avail(ncid, id));
    EXPECT(NC_EINVAL, ncaux_plugin_path_stringset(0, buf));
    /* Lists: parse, join, grow, free. */
    NCPluginList l = {0, NULL};
    OK(ncaux_plugin_path_parse("/a:/b::/c", ':', &l));
    CHECK(l.ndirs == 4 && !strcmp(l.dirs[0], "/a") && !strcmp(l.dirs[2], "") && !strcmp(l.dirs[3], "/c"));
    OK(ncaux_plugin_path_append(&l, "/z"));
    OK(ncaux_plugin_path_prepend(&l, "/first"));
    char *joined = NULL;
    OK(ncaux_plugin_path_tostring(&l, ';', &joined));
    CHECK(joined != NULL && !strcmp(joined, "/first;/a;/b;;/c;/z"));
    free(joined);
    OK(ncaux_plugin_path_clear(&l));
    CHECK(l.ndirs == 0 && l.dirs == NULL);
    OK(ncaux_plugin_path_parsen(5, "/x;/yyyy", ';', &l));
    CHECK(l.ndirs == 2 && !strcmp(l.dirs[1], "/y"));
    OK(ncaux_plugin_path_clear(&l));
    OK(ncaux_plugin_path_parse("", 0, &l));
    CHECK(l.ndirs == 0);
    EXPECT(NC_EINVAL, ncaux_plugin_path_parse("/a", 0, NULL));
    EXPECT(NC_EINVAL, ncaux_plugin_path_append(NULL, "/a"));
    NCPluginList *heap = calloc(1, sizeof *heap);
    OK(ncaux_plugin_path_parse("/p:/q", 0, heap));
    CHECK(heap->ndirs == 2);
    OK(ncaux_plugin_path_reclaim(heap));
    OK(ncaux_plugin_path_clear(&now));
    OK(nc_close(ncid));
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    unsigned id = (unsigned)atoi(argv[3]);
    const char *dir = argv[1];
    for (int i = 4; i < argc && nparams < 8; i++) params[nparams++] = (unsigned)strtoul(argv[i], NULL, 0);
    if (!strcmp(argv[2], "path")) {
        plugin_path(dir, id);
        DONE();
    }
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

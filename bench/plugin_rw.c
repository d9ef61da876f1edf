/* One variable through an HDF5 filter plugin, timed inside the process (bench/plugins.py runs
 * it against our library on NCZarr and against Debian's netcdf-c on HDF5, with the same
 * plugin from HDF5_PLUGIN_PATH).
 * usage: plugin_rw <name> write|read <filter id> [params...]
 *   write: nc_create, v(64, 512, 512) float in chunks of 1 x 512 x 512 through the filter,
 *          nc_put_var, nc_close;  read: nc_open, nc_get_var, nc_close (values checked)
 * Prints "seconds <s>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netcdf.h>
#include "timing.h"
#include <netcdf_filter.h>

#define NZ 64
#define NY 512
#define NX 512


int main(int argc, char **argv) {
    if (argc < 4) return 2;
    size_t n = (size_t)NZ * NY * NX;
    float *data = malloc(n * sizeof(float));
    if (!data) return 1;
    unsigned id = (unsigned)atoi(argv[3]), params[8];
    size_t nparams = 0;
    for (int i = 4; i < argc && nparams < 8; i++) params[nparams++] = (unsigned)strtoul(argv[i], NULL, 0);
    int ncid, dims[3], var;
    double t0;
    if (!strcmp(argv[2], "write")) {
        /* Smooth fields: what climate data compresses like. */
        for (size_t i = 0; i < n; i++) data[i] = (float)((i % NX) / 16 + (i / NX) % NY / 8) * 0.5f;
        t0 = now();
        NC(nc_create(argv[1], NC_CLOBBER | NC_NETCDF4, &ncid));
        NC(nc_def_dim(ncid, "z", NZ, &dims[0]));
        NC(nc_def_dim(ncid, "y", NY, &dims[1]));
        NC(nc_def_dim(ncid, "x", NX, &dims[2]));
        NC(nc_def_var(ncid, "v", NC_FLOAT, 3, dims, &var));
        size_t chunks[3] = {1, NY, NX};
        NC(nc_def_var_chunking(ncid, var, NC_CHUNKED, chunks));
        NC(nc_def_var_filter(ncid, var, id, nparams, params));
        NC(nc_put_var_float(ncid, var, data));
        NC(nc_close(ncid));
    } else {
        memset(data, 0, n * sizeof(float));
        t0 = now();
        NC(nc_open(argv[1], NC_NOWRITE, &ncid));
        NC(nc_inq_varid(ncid, "v", &var));
        NC(nc_get_var_float(ncid, var, data));
        NC(nc_close(ncid));
        for (size_t i = 0; i < n; i += 4099)
            if (data[i] != (float)((i % NX) / 16 + (i / NX) % NY / 8) * 0.5f) { fprintf(stderr, "wrong value at %zu\n", i); return 1; }
    }
    printf("seconds %.6f\n", now() - t0);
    free(data);
    return 0;
}

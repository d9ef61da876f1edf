/* netCDF files stored as one S3 object, timed inside the process (bench/s3_files.py runs it
 * under the preload library in front of Debian's netcdf-c).
 * usage: s3_files <url> read|write <MiB> nc4|classic
 *   write: nc_create, one float variable of <MiB>, nc_put_var, nc_close (the upload)
 *   read:  nc_open (the download), nc_get_var of the whole variable, nc_close
 * Prints "seconds <s>"; exits non-zero on any error or a wrong value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netcdf.h>
#include "timing.h"


int main(int argc, char **argv) {
    if (argc != 5) return 2;
    const char *url = argv[1], *op = argv[2];
    size_t n = (size_t)atoi(argv[3]) << 18;
    int nc4 = !strcmp(argv[4], "nc4");
    float *data = malloc(n * sizeof(float));
    if (!data) return 1;
    int ncid, dim, var;
    double t0;
    if (!strcmp(op, "write")) {
        for (size_t i = 0; i < n; i++) data[i] = (float)(i % 1000) * 0.5f;
        t0 = now();
        NC(nc_create(url, NC_CLOBBER | (nc4 ? NC_NETCDF4 : 0), &ncid));
        NC(nc_def_dim(ncid, "x", n, &dim));
        NC(nc_def_var(ncid, "v", NC_FLOAT, 1, &dim, &var));
        if (nc4) NC(nc_def_var_chunking(ncid, var, NC_CONTIGUOUS, NULL));
        NC(nc_enddef(ncid));
        NC(nc_put_var_float(ncid, var, data));
        NC(nc_close(ncid));
    } else {
        memset(data, 0, n * sizeof(float));
        t0 = now();
        NC(nc_open(url, NC_NOWRITE, &ncid));
        NC(nc_inq_varid(ncid, "v", &var));
        NC(nc_get_var_float(ncid, var, data));
        NC(nc_close(ncid));
        for (size_t i = 0; i < n; i += 4099)
            if (data[i] != (float)(i % 1000) * 0.5f) { fprintf(stderr, "wrong value at %zu\n", i); return 1; }
    }
    printf("seconds %.6f\n", now() - t0);
    free(data);
    return 0;
}

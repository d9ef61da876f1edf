/* The demo: a C program, unchanged from what it would be against netcdf-c, writes a
 * netCDF-4 dataset as NCZarr on local storage and reads its structure back. */
#include <stdio.h>
#include <stdlib.h>
#include "netcdf.h"

#define E(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s: %s\n", #call, nc_strerror(s_)); exit(1); } } while (0)

int main(int argc, char **argv)
{
    const char *url = argv[1];
    int ncid, t, lat, lon, v, g, gv, nvars, ndims;
    printf("library: %s\n", nc_inq_libvers());
    E(nc_create(url, NC_CLOBBER, &ncid));
    E(nc_def_dim(ncid, "time", NC_UNLIMITED, &t));
    E(nc_def_dim(ncid, "lat", 180, &lat));
    E(nc_def_dim(ncid, "lon", 360, &lon));
    int dims[3] = {t, lat, lon};
    E(nc_def_var(ncid, "temperature", NC_FLOAT, 3, dims, &v));
    E(nc_def_var_deflate(ncid, v, 1, 1, 4));
    E(nc_put_att_text(ncid, v, "units", 6, "kelvin"));
    float fill = -999.0f;
    E(nc_def_var_fill(ncid, v, 0, &fill));
    E(nc_put_att_text(ncid, NC_GLOBAL, "title", 21, "nczarr-rs demo output"));
    E(nc_def_grp(ncid, "stations", &g));
    E(nc_def_var(g, "elevation", NC_DOUBLE, 1, &lat, &gv));
    E(nc_close(ncid));

    E(nc_open(url, NC_NOWRITE, &ncid));
    E(nc_inq(ncid, &ndims, &nvars, NULL, NULL));
    size_t chunks[3];
    int shuffle, deflate, level;
    E(nc_inq_var_chunking(ncid, v, NULL, chunks));
    E(nc_inq_var_deflate(ncid, v, &shuffle, &deflate, &level));
    printf("reopened %s: %d dimensions, %d variables in /, group /stations\n", url, ndims, nvars);
    printf("temperature: chunks %zux%zux%zu, shuffle=%d deflate=%d level=%d\n", chunks[0], chunks[1], chunks[2], shuffle, deflate, level);
    E(nc_close(ncid));
    return 0;
}

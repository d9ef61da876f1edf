/* The demo: a C program, unchanged from what it would be against netcdf-c, writes a
 * netCDF-4 dataset as NCZarr on local storage (three time steps of a temperature field on a
 * small grid, with its coordinates), then reads the values back. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include "netcdf.h"

#define TEXT(ncid, varid, name, text) E(nc_put_att_text(ncid, varid, name, strlen(text), text))
#define E(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s: %s\n", #call, nc_strerror(s_)); exit(1); } } while (0)

enum { NT = 3, NLAT = 4, NLON = 6 };

int main(int argc, char **argv)
{
    const char *url = argv[1];
    int ncid, t, lat, lon, v, vt, vlat, vlon, g, gv, nvars, ndims;
    printf("library: %s\n", nc_inq_libvers());
    E(nc_create(url, NC_CLOBBER | NC_NETCDF4, &ncid));
    E(nc_def_dim(ncid, "time", NC_UNLIMITED, &t));
    E(nc_def_dim(ncid, "lat", NLAT, &lat));
    E(nc_def_dim(ncid, "lon", NLON, &lon));
    E(nc_def_var(ncid, "time", NC_DOUBLE, 1, &t, &vt));
    TEXT(ncid, vt, "units", "hours since 2026-11-26 00:00:00");
    E(nc_def_var(ncid, "lat", NC_FLOAT, 1, &lat, &vlat));
    TEXT(ncid, vlat, "units", "degrees_north");
    E(nc_def_var(ncid, "lon", NC_FLOAT, 1, &lon, &vlon));
    TEXT(ncid, vlon, "units", "degrees_east");
    int dims[3] = {t, lat, lon};
    E(nc_def_var(ncid, "temperature", NC_FLOAT, 3, dims, &v));
    size_t chunk[3] = {1, NLAT, NLON};
    E(nc_def_var_chunking(ncid, v, NC_CHUNKED, chunk));
    E(nc_def_var_deflate(ncid, v, 1, 1, 4));
    TEXT(ncid, v, "units", "K");
    float fill = -999.0f;
    E(nc_def_var_fill(ncid, v, 0, &fill));
    TEXT(ncid, NC_GLOBAL, "title", "nczarr-rs demo output");
    E(nc_def_grp(ncid, "stations", &g));
    E(nc_def_var(g, "elevation", NC_DOUBLE, 1, &lat, &gv));
    E(nc_enddef(ncid));

    float lats[NLAT], lons[NLON];
    for (int i = 0; i < NLAT; i++) lats[i] = -45.0f + 30.0f * i;
    for (int j = 0; j < NLON; j++) lons[j] = 60.0f * j;
    E(nc_put_var_float(ncid, vlat, lats));
    E(nc_put_var_float(ncid, vlon, lons));
    double elev[NLAT] = {12.5, 840.0, 2301.25, 5.0};
    E(nc_put_var_double(g, gv, elev));
    /* One time step per call, as a model writes its output. */
    for (int k = 0; k < NT; k++) {
        float field[NLAT][NLON];
        for (int i = 0; i < NLAT; i++)
            for (int j = 0; j < NLON; j++)
                field[i][j] = roundf((288.0f - 0.4f * fabsf(lats[i]) + 3.0f * sinf(lons[j] * 0.01745f) + 1.5f * k) * 10) / 10;
        size_t start[3] = {k, 0, 0}, count[3] = {1, NLAT, NLON};
        double hour = 6.0 * k;
        size_t at = k;
        E(nc_put_vara_float(ncid, v, start, count, &field[0][0]));
        E(nc_put_var1_double(ncid, vt, &at, &hour));
    }
    E(nc_close(ncid));

    E(nc_open(url, NC_NOWRITE, &ncid));
    E(nc_inq(ncid, &ndims, &nvars, NULL, NULL));
    size_t ntime, chunks[3];
    int shuffle, deflate, level;
    E(nc_inq_dimlen(ncid, t, &ntime));
    E(nc_inq_var_chunking(ncid, v, NULL, chunks));
    E(nc_inq_var_deflate(ncid, v, &shuffle, &deflate, &level));
    float back[NLAT * NLON];
    size_t start[3] = {NT - 1, 0, 0}, count[3] = {1, NLAT, NLON};
    E(nc_get_vara_float(ncid, v, start, count, back));
    printf("reopened %s: %d dimensions, %d variables in /, group /stations\n", url, ndims, nvars);
    printf("temperature: %zu time steps, chunks %zux%zux%zu, shuffle=%d deflate=%d level=%d\n", ntime, chunks[0], chunks[1],
           chunks[2], shuffle, deflate, level);
    printf("last time step, first row: %.1f %.1f %.1f ...\n", back[0], back[1], back[2]);
    E(nc_close(ncid));
    return 0;
}

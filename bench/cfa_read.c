/* Reads variable "v" of a dataset whole or a window of it, timed inside the process
 * (bench/cfa.py runs it under the preload library in front of Debian's netcdf-c).
 * usage: cfa_read <name> all|window   Prints "seconds <s> sum <checksum>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netcdf.h>
#include "timing.h"


int main(int argc, char **argv) {
    if (argc != 3) return 2;
    int ncid, v, dims[2];
    size_t n0, n1;
    double t0 = now();
    NC(nc_open(argv[1], NC_NOWRITE, &ncid));
    NC(nc_inq_varid(ncid, "v", &v));
    NC(nc_inq_vardimid(ncid, v, dims));
    NC(nc_inq_dimlen(ncid, dims[0], &n0));
    NC(nc_inq_dimlen(ncid, dims[1], &n1));
    size_t st[2] = {0, 0}, cnt[2] = {n0, n1};
    if (!strcmp(argv[2], "window")) {
        /* 10 rows in the middle: inside one fragment of 16-row fragments */
        st[0] = n0 / 2 + 3;
        cnt[0] = 10;
        cnt[1] = n1 / 4;
    }
    float *data = malloc(cnt[0] * cnt[1] * sizeof(float));
    NC(nc_get_vara_float(ncid, v, st, cnt, data));
    NC(nc_close(ncid));
    double t = now() - t0;
    double sum = 0;
    for (size_t i = 0; i < cnt[0] * cnt[1]; i += 997) sum += data[i];
    printf("seconds %.6f sum %.1f\n", t, sum);
    free(data);
    return 0;
}

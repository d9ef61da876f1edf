/* Reads a 2-D hyperslab of the first variable of a dataset and prints its values, one per
 * line (as unsigned long long): the storage requests it causes are what the tests count
 * (NCTRACING=2). Usage: v3_hyperslab URL start0 start1 count0 count1 */
#include <stdio.h>
#include <stdlib.h>
#include "netcdf.h"

int main(int argc, char **argv)
{
    int ncid, rc;
    if (argc != 6) {
        fprintf(stderr, "usage: %s URL start0 start1 count0 count1\n", argv[0]);
        return 2;
    }
    size_t start[2] = {strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10)};
    size_t count[2] = {strtoul(argv[4], NULL, 10), strtoul(argv[5], NULL, 10)};
    if ((rc = nc_open(argv[1], 0, &ncid))) {
        fprintf(stderr, "rc=%d %s\n", rc, nc_strerror(rc));
        return 1;
    }
    unsigned long long *v = calloc(count[0] * count[1] + 1, sizeof *v);
    if (!v || (rc = nc_get_vara_ulonglong(ncid, 0, start, count, v))) {
        fprintf(stderr, "rc=%d %s\n", rc, nc_strerror(rc));
        return 1;
    }
    for (size_t i = 0; i < count[0] * count[1]; i++)
        printf("%llu\n", v[i]);
    free(v);
    return nc_close(ncid) ? 1 : 0;
}

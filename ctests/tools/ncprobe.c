/* ncprobe URL [write|data]: opens a dataset (read-only, or NC_WRITE with "write"), walks every
 * group, dimension, variable and attribute (reading each attribute's value, and with "data"
 * every numeric or char variable's values), closes it, and
 * prints "rc=<code>" for the first failure (0 when everything worked). Used by the bad-input
 * and persistence tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "netcdf.h"

static int walk_atts(int ncid, int varid, int natts)
{
    for (int a = 0; a < natts; a++) {
        char name[NC_MAX_NAME + 1];
        nc_type type;
        size_t len;
        int rc;
        if ((rc = nc_inq_attname(ncid, varid, a, name))) return rc;
        if ((rc = nc_inq_att(ncid, varid, name, &type, &len))) return rc;
        size_t size = type == NC_STRING ? sizeof(char *) : (size_t)nctypelen(type);
        void *buf = calloc(len + 1, size);
        if ((rc = nc_get_att(ncid, varid, name, buf))) { free(buf); return rc; }
        if (type == NC_STRING) nc_free_string(len, buf);
        free(buf);
    }
    return 0;
}

static int read_data;

/* All values of a non-string variable (small test stores only). */
static int walk_data(int ncid, int varid, nc_type type, int nd, const int *dimids)
{
    if (type == NC_STRING) return 0;
    size_t n = 1, len;
    int rc;
    for (int d = 0; d < nd; d++) {
        if ((rc = nc_inq_dimlen(ncid, dimids[d], &len))) return rc;
        n *= len;
    }
    void *buf = malloc(n * (size_t)nctypelen(type) + 1);
    rc = nc_get_var(ncid, varid, buf);
    free(buf);
    return rc;
}

static int walk(int ncid)
{
    int rc, ndims, nvars, natts, ngrps, ids[NC_MAX_VAR_DIMS];
    if ((rc = nc_inq(ncid, &ndims, &nvars, &natts, NULL))) return rc;
    if ((rc = walk_atts(ncid, NC_GLOBAL, natts))) return rc;
    int *dimids = malloc(sizeof(int) * (ndims + 1));
    if ((rc = nc_inq_dimids(ncid, &ndims, dimids, 0))) { free(dimids); return rc; }
    for (int d = 0; d < ndims; d++) {
        char name[NC_MAX_NAME + 1];
        size_t len;
        if ((rc = nc_inq_dim(ncid, dimids[d], name, &len))) { free(dimids); return rc; }
    }
    free(dimids);
    for (int v = 0; v < nvars; v++) {
        char name[NC_MAX_NAME + 1];
        nc_type type;
        int nd, na;
        if ((rc = nc_inq_var(ncid, v, name, &type, &nd, ids, &na))) return rc;
        if ((rc = walk_atts(ncid, v, na))) return rc;
        if (read_data && (rc = walk_data(ncid, v, type, nd, ids))) return rc;
    }
    if ((rc = nc_inq_grps(ncid, &ngrps, NULL))) return rc;
    int *grps = malloc(sizeof(int) * (ngrps + 1));
    nc_inq_grps(ncid, NULL, grps);
    for (int g = 0; g < ngrps; g++)
        if ((rc = walk(grps[g]))) { free(grps); return rc; }
    free(grps);
    return 0;
}

int main(int argc, char **argv)
{
    int ncid, rc;
    if (argc < 2) return 2;
    int mode = (argc > 2 && strcmp(argv[2], "write") == 0) ? NC_WRITE : NC_NOWRITE;
    read_data = argc > 2 && strcmp(argv[2], "data") == 0;
    rc = nc_open(argv[1], mode, &ncid);
    if (rc == 0) {
        rc = walk(ncid);
        int rc2 = nc_close(ncid);
        if (rc == 0) rc = rc2;
    }
    if (read_data) {
        /* Peak resident memory of this process image (the parent's pages before exec are
         * not counted, unlike getrusage's ru_maxrss). */
        long hwm = -1;
        char line[256];
        FILE *f = fopen("/proc/self/status", "r");
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %ld", &hwm) == 1) break;
        if (f) fclose(f);
        printf("rc=%d hwm=%ld\n", rc, hwm);
        return 0;
    }
    printf("rc=%d\n", rc);
    return 0;
}

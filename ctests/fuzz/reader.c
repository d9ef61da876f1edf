/* The hostile-store fuzzer's reader: opens a dataset and touches everything a client would:
 * every group, dimension, variable and attribute (values included), then every variable's
 * data in its own type. Prints the first error and "data" or "error"; exits 0 either way, so
 * only a crash (a signal) or a hang (the caller's timeout) counts against the library.
 *
 *   reader DATASET-NAME */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ELEMS (4u << 20)

static int first_error;

static void note(int rc)
{
    if (rc && !first_error) first_error = rc;
}

static void walk(int g, int depth)
{
    int nd = 0, nv = 0, na = 0, ng = 0;
    if (depth > 64) return;
    note(nc_inq(g, &nd, &nv, &na, NULL));
    int dimids[1024];
    int n = 0;
    if (!nc_inq_dimids(g, &n, NULL, 0) && n <= 1024) {
        note(nc_inq_dimids(g, &n, dimids, 0));
        for (int i = 0; i < n; i++) {
            char name[NC_MAX_NAME + 1];
            size_t len;
            note(nc_inq_dim(g, dimids[i], name, &len));
        }
    }
    for (int v = -1; v < nv; v++) {
        int natts = na, t = 0, vnd = 0, vd[NC_MAX_VAR_DIMS];
        char name[NC_MAX_NAME + 1];
        if (v >= 0) {
            note(nc_inq_var(g, v, name, &t, &vnd, NULL, &natts));
            if (vnd > NC_MAX_VAR_DIMS) continue;
            note(nc_inq_vardimid(g, v, vd));
            int storage, sh, de, lv, nofill;
            size_t chunks[NC_MAX_VAR_DIMS];
            note(nc_inq_var_chunking(g, v, &storage, chunks));
            note(nc_inq_var_deflate(g, v, &sh, &de, &lv));
            unsigned char fill[64];
            if (t != NC_STRING) note(nc_inq_var_fill(g, v, &nofill, fill));
        }
        for (int a = 0; a < natts; a++) {
            char an[NC_MAX_NAME + 1];
            nc_type at;
            size_t al;
            if (nc_inq_attname(g, v, a, an) || nc_inq_att(g, v, an, &at, &al)) {
                note(-1000);
                continue;
            }
            if (al > MAX_ELEMS) continue;
            void *buf = calloc(al ? al : 1, 8);
            if (!buf) continue;
            note(nc_get_att(g, v, an, buf));
            if (at == NC_STRING) nc_free_string(al, buf);
            free(buf);
        }
        if (v < 0) continue;
        size_t total = 1;
        for (int k = 0; k < vnd; k++) {
            size_t len = 0;
            note(nc_inq_dimlen(g, vd[k], &len));
            total = len && total > MAX_ELEMS / len ? MAX_ELEMS + 1 : total * len;
        }
        if (total > MAX_ELEMS || t > NC_STRING || t < NC_BYTE) continue;
        void *data = calloc(total ? total : 1, 8);
        if (!data) continue;
        int rc = nc_get_var(g, v, data);
        note(rc);
        if (!rc && t == NC_STRING) nc_free_string(total, data);
        free(data);
    }
    if (!nc_inq_grps(g, &ng, NULL) && ng > 0 && ng < 4096) {
        int *ids = malloc(sizeof(int) * ng);
        note(nc_inq_grps(g, &ng, ids));
        for (int i = 0; i < ng; i++) walk(ids[i], depth + 1);
        free(ids);
    }
}

int main(int argc, char **argv)
{
    int ncid;
    int rc = nc_open(argv[1], NC_NOWRITE, &ncid);
    if (rc) {
        printf("error open %d\n", rc);
        return 0;
    }
    walk(ncid, 0);
    note(nc_close(ncid));
    if (first_error)
        printf("error %d\n", first_error);
    else
        printf("data\n");
    return 0;
}

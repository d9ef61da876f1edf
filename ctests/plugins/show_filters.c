/* What `ncdump -hs` shows of each variable's filters, through the API: the `_Filter` ids and
 * parameters (nc_inq_var_filter_ids/info) and the `_Codecs` attribute; and a checksum of each
 * (1-D numeric) variable's values, decoded through those filters. Built against our
 * library and against netcdf-c 4.10.1 (the wheel); ctests/plugins/run.sh compares the two on the
 * same stores.   usage: show_filters <dataset> */
#include <stdio.h>
#include <stdlib.h>
#include "netcdf.h"
#include "netcdf_filter.h"

int main(int argc, char **argv) {
    int ncid, nvars;
    if (argc != 2 || nc_open(argv[1], NC_NOWRITE, &ncid) || nc_inq_nvars(ncid, &nvars)) return 1;
    for (int v = 0; v < nvars; v++) {
        char name[NC_MAX_NAME + 1];
        size_t nf = 0, len = 0;
        unsigned ids[16];
        nc_inq_varname(ncid, v, name);
        printf("%s: _Filter =", name);
        if (nc_inq_var_filter_ids(ncid, v, &nf, NULL) == NC_NOERR && nf <= 16 && nc_inq_var_filter_ids(ncid, v, &nf, ids) == NC_NOERR) {
            for (size_t i = 0; i < nf; i++) {
                size_t np = 0;
                unsigned params[64];
                printf(" %u(", ids[i]);
                if (nc_inq_var_filter_info(ncid, v, ids[i], &np, NULL) == NC_NOERR && np <= 64
                    && nc_inq_var_filter_info(ncid, v, ids[i], &np, params) == NC_NOERR)
                    for (size_t k = 0; k < np; k++) printf(k ? ",%u" : "%u", params[k]);
                printf(")");
            }
        }
        if (nc_inq_attlen(ncid, v, "_Codecs", &len) == NC_NOERR) {
            char *text = calloc(len + 1, 1);
            nc_get_att_text(ncid, v, "_Codecs", text);
            printf("; _Codecs = %s", text);
            free(text);
        }
        size_t n = 0;
        int dimid;
        if (nc_inq_vardimid(ncid, v, &dimid) == NC_NOERR && nc_inq_dimlen(ncid, dimid, &n) == NC_NOERR && n > 0) {
            double *values = calloc(n, sizeof *values), sum = 0;
            int status = nc_get_var_double(ncid, v, values);
            for (size_t i = 0; i < n; i++) sum += values[i] * (double)(i % 7 + 1);
            if (status) printf("; values: error %d", status);
            else printf("; values: %.17g", sum);
            free(values);
        }
        printf("\n");
    }
    return nc_close(ncid) ? 1 : 0;
}

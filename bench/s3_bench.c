/* The S3 row of `make bench`: one dataset on a local S3 server behind a proxy adding latency
 * per request; read-all and time-series workloads. Run once with our concurrent plan and once
 * with NCZARR_S3_CONCURRENCY=1 (the same requests issued one at a time).
 * usage: s3_bench <url> write|read */
#define _POSIX_C_SOURCE 200809L
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define NT 64
#define NY 128
#define NX 128
#define E(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(s_)); exit(1); } } while (0)
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    if (argc != 3) return 2;
    const char *url = argv[1];
    int ncid, v, dims[3];
    fprintf(stderr, "library: %s\n", nc_inq_libvers());
    if (!strcmp(argv[2], "write")) {
        float *plane = malloc(sizeof(float) * NY * NX);
        E(nc_create(url, NC_CLOBBER, &ncid));
        E(nc_def_dim(ncid, "time", NT, &dims[0]));
        E(nc_def_dim(ncid, "y", NY, &dims[1]));
        E(nc_def_dim(ncid, "x", NX, &dims[2]));
        E(nc_def_var(ncid, "v", NC_FLOAT, 3, dims, &v));
        size_t chunks[3] = {1, NY, NX};
        E(nc_def_var_chunking(ncid, v, NC_CHUNKED, chunks));
        E(nc_def_var_deflate(ncid, v, 0, 1, 1));
        E(nc_enddef(ncid));
        for (int t = 0; t < NT; t++) {
            for (int i = 0; i < NY * NX; i++) plane[i] = (float)(280.0 + t * 0.5 + (i % NX) * 0.01);
            size_t start[3] = {t, 0, 0}, count[3] = {1, NY, NX};
            E(nc_put_vara_float(ncid, v, start, count, plane));
        }
        E(nc_close(ncid));
        return 0;
    }
    float *all = malloc(sizeof(float) * NT * NY * NX), series[NT];
    double check = 0, t0 = now();
    E(nc_open(url, NC_NOWRITE, &ncid));
    E(nc_inq_varid(ncid, "v", &v));
    E(nc_get_var_float(ncid, v, all));
    E(nc_close(ncid));
    double t1 = now();
    E(nc_open(url, NC_NOWRITE, &ncid));
    E(nc_inq_varid(ncid, "v", &v));
    for (int p = 0; p < 64; p++) {
        size_t start[3] = {0, (p * 37) % NY, (p * 101) % NX}, count[3] = {NT, 1, 1};
        E(nc_get_vara_float(ncid, v, start, count, series));
        check += series[NT - 1];
    }
    E(nc_close(ncid));
    double t2 = now();
    printf("readall %.6f\nseries %.6f\n", t1 - t0, t2 - t1);
    fprintf(stderr, "checksum %.3f %.3f\n", check, all[NT * NY * NX - 1]);
    return 0;
}

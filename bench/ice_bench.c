/* The Icechunk row's workload (bench/ice_peers.py): float v(256, 512, 512), 256 MiB in 1 MiB
 * chunks of one plane, no codec. Prints "<phase> <seconds>".
 *   ice_bench URL write    nc_create .. nc_close (for a repository: one commit)
 *   ice_bench URL read     nc_open, every value read plane by plane, nc_close */
#define _POSIX_C_SOURCE 200809L
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NT 256
#define NY 512
#define NX 512
#define E(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(s_)); exit(1); } } while (0)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    float *plane = malloc(sizeof(float) * NY * NX);
    int nc, dims[3], v;
    double t0 = now(), sum = 0;
    if (strcmp(argv[2], "write") == 0) {
        E(nc_create(argv[1], NC_CLOBBER | NC_NETCDF4, &nc));
        E(nc_def_dim(nc, "time", NT, &dims[0]));
        E(nc_def_dim(nc, "y", NY, &dims[1]));
        E(nc_def_dim(nc, "x", NX, &dims[2]));
        E(nc_def_var(nc, "v", NC_FLOAT, 3, dims, &v));
        size_t chunks[3] = {1, NY, NX};
        E(nc_def_var_chunking(nc, v, NC_CHUNKED, chunks));
        E(nc_enddef(nc));
        for (int t = 0; t < NT; t++) {
            for (int i = 0; i < NY * NX; i++) plane[i] = (float)(280.0 + t * 0.5 + (i % NX) * 0.01 + (i / NX) * 0.02);
            size_t start[3] = {t, 0, 0}, count[3] = {1, NY, NX};
            E(nc_put_vara_float(nc, v, start, count, plane));
        }
        E(nc_close(nc));
        printf("write %.6f\n", now() - t0);
    } else {
        E(nc_open(argv[1], NC_NOWRITE, &nc));
        E(nc_inq_varid(nc, "v", &v));
        for (int t = 0; t < NT; t++) {
            size_t start[3] = {t, 0, 0}, count[3] = {1, NY, NX};
            E(nc_get_vara_float(nc, v, start, count, plane));
            sum += plane[t];
        }
        E(nc_close(nc));
        printf("read %.6f\n", now() - t0);
        if (sum <= 0) return 1;
    }
    free(plane);
    return 0;
}

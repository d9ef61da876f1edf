/* Our side of the S3 peer comparison (bench/s3_peers.py runs TensorStore on the same data,
 * server and latency). Prints "<phase> <seconds>".
 * usage: s3_peers <url> meta-write | meta-open | big-write <MiB> | big-read
 *        s3_peers serve      the same commands, one per line on stdin ("<url> <mode> [MiB]"),
 *                            in one process: as TensorStore and zarr-python run in the harness
 *   meta-*   200 float variables of 16 values each in the root group, 1 chunk each
 *   big-*    one float variable of <MiB> MiB in 1 MiB uncompressed chunks */
#define _POSIX_C_SOURCE 200809L
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define NVARS 200
#define E(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(s_)); exit(1); } } while (0)
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; }

/* One command; returns 0, or 1 when the data read back is wrong, 2 for a bad command. */
static int run(const char *url, const char *mode, const char *arg)
{
    int ncid, d, v;
    char name[NC_MAX_NAME + 1];
    if (!strcmp(mode, "meta-write")) {
        float vals[16];
        for (int i = 0; i < 16; i++) vals[i] = (float)i;
        E(nc_create(url, NC_CLOBBER | NC_NETCDF4, &ncid));
        E(nc_def_dim(ncid, "n", 16, &d));
        for (int i = 0; i < NVARS; i++) {
            snprintf(name, sizeof name, "v%03d", i);
            E(nc_def_var(ncid, name, NC_FLOAT, 1, &d, &v));
        }
        E(nc_enddef(ncid));
        for (int i = 0; i < NVARS; i++) E(nc_put_var_float(ncid, i, vals));
        E(nc_close(ncid));
        return 0;
    }
    if (!strcmp(mode, "meta-open")) {
        double t0 = now();
        int nvars, ndims, dimids[NC_MAX_VAR_DIMS], natts;
        nc_type type;
        E(nc_open(url, NC_NOWRITE, &ncid));
        E(nc_inq_nvars(ncid, &nvars));
        for (int i = 0; i < nvars; i++) E(nc_inq_var(ncid, i, name, &type, &ndims, dimids, &natts));
        E(nc_close(ncid));
        printf("open200 %.6f\n", now() - t0);
        return nvars == NVARS ? 0 : 1;
    }
    if (!strcmp(mode, "big-write") && arg) {
        size_t n = (size_t)atoi(arg) << 18; /* floats in <MiB> MiB */
        float *buf = malloc(sizeof(float) * n);
        for (size_t i = 0; i < n; i++) buf[i] = (float)(i % 1000) * 0.5f;
        double t0 = now();
        E(nc_create(url, NC_CLOBBER | NC_NETCDF4, &ncid));
        E(nc_def_dim(ncid, "n", n, &d));
        E(nc_def_var(ncid, "v", NC_FLOAT, 1, &d, &v));
        size_t chunk = 1 << 18;
        E(nc_def_var_chunking(ncid, v, NC_CHUNKED, &chunk));
        E(nc_def_var_fill(ncid, v, NC_NOFILL, NULL));
        E(nc_enddef(ncid));
        E(nc_put_var_float(ncid, v, buf));
        E(nc_close(ncid));
        printf("write %.6f\n", now() - t0);
        free(buf);
        return 0;
    }
    if (!strcmp(mode, "big-read")) {
        double t0 = now();
        size_t n;
        E(nc_open(url, NC_NOWRITE, &ncid));
        E(nc_inq_dimlen(ncid, 0, &n));
        float *buf = malloc(sizeof(float) * n);
        E(nc_get_var_float(ncid, 0, buf));
        E(nc_close(ncid));
        printf("readall %.6f\n", now() - t0);
        int ok = buf[n - 1] == (float)((n - 1) % 1000) * 0.5f;
        free(buf);
        return ok ? 0 : 1;
    }
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "serve")) {
        char line[4096], url[4000], mode[32], arg[32];
        while (fgets(line, sizeof line, stdin)) {
            int n = sscanf(line, "%3999s %31s %31s", url, mode, arg);
            if (n < 2) return 2;
            int rc = run(url, mode, n > 2 ? arg : NULL);
            if (rc) return rc;
            if (strncmp(mode, "big-", 4) && strcmp(mode, "meta-open")) printf("done 0\n");
            fflush(stdout);
        }
        return 0;
    }
    if (argc < 3) return 2;
    return run(argv[1], argv[2], argc > 3 ? argv[3] : NULL);
}

/* The benchmark workload, one C program linked twice (against our library and against
 * netcdf-c 4.10.1): prints "<phase> <seconds>" lines. Usage:
 *   bench DIR CHUNKING CODEC [FORMAT]
 *                                 CHUNKING: plane (1x512x512) | tile (8x128x128)
 *                                 CODEC: none | zlib1 | shuffle_zlib1
 *                                 FORMAT: v2 (default) | v3 | v3shard (v3, 8 MiB shards) | zip (v2 in a zip)
 *   bench DIR meta                20 groups x 50 variables x 5 attributes, reopen, inquire */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netcdf.h>

#define NT 64
#define NY 512
#define NX 512
#define E(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, nc_strerror(s_)); exit(1); } } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void meta(const char *dir)
{
    char url[4096], name[64];
    int ncid, g, d, v;
    snprintf(url, sizeof url, "file://%s/meta.file#mode=nczarr,file", dir);
    double t0 = now();
    E(nc_create(url, NC_CLOBBER, &ncid));
    E(nc_def_dim(ncid, "n", 10, &d));
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "group%d", i);
        E(nc_def_grp(ncid, name, &g));
        for (int j = 0; j < 50; j++) {
            snprintf(name, sizeof name, "var%d", j);
            E(nc_def_var(g, name, NC_FLOAT, 1, &d, &v));
            for (int k = 0; k < 5; k++) {
                snprintf(name, sizeof name, "att%d", k);
                double val = i * 1000 + j * 10 + k;
                E(nc_put_att_double(g, v, name, NC_DOUBLE, 1, &val));
            }
        }
    }
    E(nc_close(ncid));
    double t1 = now();
    E(nc_open(url, NC_NOWRITE, &ncid));
    int ngrps, grps[32], nvars, natts, ndims, dimids[4];
    nc_type type;
    double sum = 0;
    E(nc_inq_grps(ncid, &ngrps, grps));
    for (int i = 0; i < ngrps; i++) {
        E(nc_inq_nvars(grps[i], &nvars));
        for (int j = 0; j < nvars; j++) {
            E(nc_inq_var(grps[i], j, name, &type, &ndims, dimids, &natts));
            for (int k = 0; k < natts; k++) {
                double val;
                E(nc_inq_attname(grps[i], j, k, name));
                E(nc_get_att_double(grps[i], j, name, &val));
                sum += val;
            }
        }
    }
    E(nc_close(ncid));
    double t2 = now();
    printf("create_meta %.6f\nreopen_inquire %.6f\n", t1 - t0, t2 - t1);
    if (sum <= 0) exit(1);
}

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    fprintf(stderr, "library: %s\n", nc_inq_libvers());
    if (strcmp(argv[2], "meta") == 0) {
        meta(dir);
        return 0;
    }
    int tile = strcmp(argv[2], "tile") == 0;
    const char *codec = argv[3];
    char url[4096];
    const char *format = argc > 4 ? argv[4] : "v2";
    int zip = strcmp(format, "zip") == 0;
    const char *mode = strcmp(format, "v3") == 0        ? "nczarr,v3,file"
                       : strcmp(format, "v3shard") == 0 ? "nczarr,v3,file&shard=8M"
                       : zip                            ? "nczarr,zip"
                                                        : "nczarr,file";
    snprintf(url, sizeof url, "file://%s/%s_%s.%s#mode=%s", dir, argv[2], codec, zip ? "zip" : "file", mode);
    float *plane = malloc(sizeof(float) * NY * NX);
    int ncid, dims[3], v;

    double t0 = now();
    E(nc_create(url, NC_CLOBBER, &ncid));
    E(nc_def_dim(ncid, "time", NT, &dims[0]));
    E(nc_def_dim(ncid, "y", NY, &dims[1]));
    E(nc_def_dim(ncid, "x", NX, &dims[2]));
    E(nc_def_var(ncid, "v", NC_FLOAT, 3, dims, &v));
    size_t chunks[3] = {1, NY, NX};
    if (tile) {
        chunks[0] = 8;
        chunks[1] = chunks[2] = 128;
    }
    E(nc_def_var_chunking(ncid, v, NC_CHUNKED, chunks));
    if (strcmp(codec, "zlib1") == 0) E(nc_def_var_deflate(ncid, v, 0, 1, 1));
    if (strcmp(codec, "shuffle_zlib1") == 0) E(nc_def_var_deflate(ncid, v, 1, 1, 1));
    E(nc_enddef(ncid));
    for (int t = 0; t < NT; t++) {
        /* A smooth field plus noise in the low bits: compresses like real model output. */
        for (int i = 0; i < NY * NX; i++) {
            unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(t * 40503u);
            h ^= h >> 15;
            plane[i] = (float)(280.0 + t * 0.5 + (i % NX) * 0.01 + (i / NX) * 0.02 + (h % 1000) * 0.0001);
        }
        size_t start[3] = {t, 0, 0}, count[3] = {1, NY, NX};
        E(nc_put_vara_float(ncid, v, start, count, plane));
    }
    E(nc_close(ncid));
    double t1 = now();

    float *all = malloc(sizeof(float) * NT * NY * NX);
    E(nc_open(url, NC_NOWRITE, &ncid));
    E(nc_get_var_float(ncid, v, all));
    E(nc_close(ncid));
    double t2 = now();
    double check = all[(size_t)63 * NY * NX + 511 * NX + 511];

    float series[NT];
    E(nc_open(url, NC_NOWRITE, &ncid));
    for (int p = 0; p < 64; p++) {
        size_t start[3] = {0, (p * 37) % NY, (p * 101) % NX}, count[3] = {NT, 1, 1};
        E(nc_get_vara_float(ncid, v, start, count, series));
        check += series[NT - 1];
    }
    E(nc_close(ncid));
    double t3 = now();

    float window[64 * 64];
    E(nc_open(url, NC_NOWRITE, &ncid));
    for (int t = 0; t < NT; t++) {
        size_t start[3] = {t, 200, 300}, count[3] = {1, 64, 64};
        E(nc_get_vara_float(ncid, v, start, count, window));
        check += window[64 * 64 - 1];
    }
    E(nc_close(ncid));
    double t4 = now();
    printf("write %.6f\nreadall %.6f\nseries %.6f\nwindow %.6f\n", t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    fprintf(stderr, "checksum %.3f\n", check);
    return 0;
}

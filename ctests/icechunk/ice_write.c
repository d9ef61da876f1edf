/* ice_write.c: one writer of an Icechunk repository for the icechunk suite.
 *
 *   ice_write URL put VAR I,J,... VALUE [WAITFILE]
 *       opens URL for writing, stores VALUE (a float) at one index of VAR, then (if WAITFILE is
 *       given) waits until that file exists, then closes: two of these started together are two
 *       uncoordinated writers whose sessions overlap. Exit 0: closed; 3: the close was NC_EOBJECT
 *       (a conflicting commit); 1: any other failure.
 *   ice_write URL syncs N
 *       opens URL for writing and N times adds 1 to every value of t, calling nc_sync after each
 *       but the last, then closes: N commits.
 *   ice_write URL crash old|new
 *       clobbers URL with a dataset of one float variable (old or new values) between
 *       crashpoint_arm() and crashpoint_disarm() (ctests/crash/crashpoint.c, looked up at run
 *       time) and prints the number of file-system mutations made.
 *   ice_write URL abort
 *       opens URL for writing, sets every value of t to -1, and calls nc_abort. */
#define _DEFAULT_SOURCE
#include <dlfcn.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(e) do { int s_ = (e); if (s_) { fprintf(stderr, "%s: %s\n", #e, nc_strerror(s_)); return 1; } } while (0)

static int put(const char *url, const char *var, const char *index, float value, const char *waitfile) {
    int nc, v, nd;
    size_t at[NC_MAX_VAR_DIMS] = {0};
    CHECK(nc_open(url, NC_WRITE, &nc));
    CHECK(nc_inq_varid(nc, var, &v));
    CHECK(nc_inq_varndims(nc, v, &nd));
    char *copy = strdup(index), *save = NULL;
    int i = 0;
    for (char *t = strtok_r(copy, ",", &save); t && i < nd; t = strtok_r(NULL, ",", &save)) at[i++] = strtoul(t, NULL, 10);
    free(copy);
    CHECK(nc_put_var1_float(nc, v, at, &value));
    if (waitfile)
        while (access(waitfile, F_OK) != 0) usleep(10000);
    int s = nc_close(nc);
    if (s) fprintf(stderr, "nc_close: %d %s\n", s, nc_strerror(s));
    return s == NC_EOBJECT ? 3 : s ? 1 : 0;
}

static int syncs(const char *url, int n) {
    int nc, v, nd, dims[NC_MAX_VAR_DIMS];
    size_t len = 1, dl;
    CHECK(nc_open(url, NC_WRITE, &nc));
    CHECK(nc_inq_varid(nc, "t", &v));
    CHECK(nc_inq_var(nc, v, NULL, NULL, &nd, dims, NULL));
    for (int d = 0; d < nd; d++) {
        CHECK(nc_inq_dimlen(nc, dims[d], &dl));
        len *= dl;
    }
    float *x = malloc(len * sizeof *x);
    for (int k = 0; k < n; k++) {
        CHECK(nc_get_var_float(nc, v, x));
        for (size_t i = 0; i < len; i++) x[i] += 1;
        CHECK(nc_put_var_float(nc, v, x));
        if (k + 1 < n) CHECK(nc_sync(nc));
    }
    free(x);
    CHECK(nc_close(nc));
    return 0;
}

static int crash(const char *url, int new) {
    float x[4096];
    for (int i = 0; i < 4096; i++) x[i] = (new ? 2.0f : 1.0f) * i;
    void (*arm)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "crashpoint_arm");
    long (*disarm)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "crashpoint_disarm");
    int nc, d[2], v;
    if (arm) arm();
    CHECK(nc_create(url, NC_CLOBBER | NC_NETCDF4, &nc));
    CHECK(nc_def_dim(nc, "y", 64, &d[0]));
    CHECK(nc_def_dim(nc, "x", 64, &d[1]));
    CHECK(nc_def_var(nc, "t", NC_FLOAT, 2, d, &v));
    size_t chunks[2] = {16, 64};
    CHECK(nc_def_var_chunking(nc, v, NC_CHUNKED, chunks));
    CHECK(nc_put_att_text(nc, NC_GLOBAL, "state", 3, new ? "new" : "old"));
    CHECK(nc_enddef(nc));
    CHECK(nc_put_var_float(nc, v, x));
    CHECK(nc_close(nc));
    printf("%ld\n", disarm ? disarm() : 0L);
    return 0;
}

static int abort_(const char *url) {
    int nc, v;
    CHECK(nc_open(url, NC_WRITE, &nc));
    CHECK(nc_inq_varid(nc, "t", &v));
    size_t at[3] = {0, 0, 0};
    float m = -1;
    CHECK(nc_put_var1_float(nc, v, at, &m));
    CHECK(nc_abort(nc));
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 6 && !strcmp(argv[2], "put")) return put(argv[1], argv[3], argv[4], strtof(argv[5], NULL), argc > 6 ? argv[6] : NULL);
    if (argc == 4 && !strcmp(argv[2], "syncs")) return syncs(argv[1], atoi(argv[3]));
    if (argc == 4 && !strcmp(argv[2], "crash")) return crash(argv[1], !strcmp(argv[3], "new"));
    if (argc == 3 && !strcmp(argv[2], "abort")) return abort_(argv[1]);
    fprintf(stderr, "usage: see ice_write.c\n");
    return 2;
}

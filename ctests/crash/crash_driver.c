/* crash_driver.c: the updates the crash-point tester interrupts, and the dump it judges.
 *
 *   crash_driver setup SCENARIO URL    the last closed state (no crash point is armed)
 *   crash_driver update SCENARIO URL   the update, with the shim's crash points armed around it
 *                                      (crashpoint.so under LD_PRELOAD); prints the count
 *   crash_driver dump URL              one line per group and per variable (name, type, shape,
 *                                      attributes, values) or "open failed ..."
 *
 * Each update is one define session closed by nc_close, so the states a reader may find after a
 * crash are the one before it ("old") and the one after it ("new"); run.sh compares dumps. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x) do { int r_ = (x); if (r_) { fprintf(stderr, "%s: %s\n", #x, nc_strerror(r_)); exit(2); } } while (0)

static void put_ints(int nc, int v, int base, int n) {
    int *b = malloc(n * sizeof *b);
    for (int i = 0; i < n; i++) b[i] = base + i;
    CK(nc_put_var_int(nc, v, b));
    free(b);
}

/* The last closed state every scenario starts from: d and e in the root (8 ints in chunks of
 * 2, so several chunk objects), group g holding v and a subgroup s holding w. */
static void setup(const char *url) {
    int nc, x, d, e, g, s, v, w;
    size_t ch = 2;
    CK(nc_create(url, NC_NETCDF4 | NC_CLOBBER, &nc));
    CK(nc_def_dim(nc, "x", 8, &x));
    CK(nc_def_var(nc, "d", NC_INT, 1, &x, &d));
    CK(nc_def_var_chunking(nc, d, NC_CHUNKED, &ch));
    CK(nc_put_att_text(nc, d, "units", 1, "m"));
    CK(nc_def_var(nc, "e", NC_INT, 1, &x, &e));
    CK(nc_def_var_chunking(nc, e, NC_CHUNKED, &ch));
    CK(nc_put_att_text(nc, NC_GLOBAL, "title", 3, "old"));
    CK(nc_def_grp(nc, "g", &g));
    CK(nc_def_var(g, "v", NC_INT, 1, &x, &v));
    CK(nc_def_var_chunking(g, v, NC_CHUNKED, &ch));
    CK(nc_def_grp(g, "s", &s));
    CK(nc_def_var(s, "w", NC_INT, 1, &x, &w));
    CK(nc_enddef(nc));
    put_ints(nc, d, 1, 8);
    put_ints(nc, e, 11, 8);
    put_ints(g, v, 21, 8);
    put_ints(s, w, 31, 8);
    CK(nc_close(nc));
}

static void update(const char *scenario, const char *url) {
    int nc, g, d, e, x, n;
    size_t ch = 2;
    CK(nc_open(url, NC_WRITE, &nc));
    CK(nc_redef(nc));
    if (!strcmp(scenario, "rename_var")) {
        CK(nc_inq_varid(nc, "d", &d));
        CK(nc_rename_var(nc, d, "r"));
    } else if (!strcmp(scenario, "rename_two")) {          /* two variables, one metadata update */
        CK(nc_inq_varid(nc, "d", &d));
        CK(nc_rename_var(nc, d, "d2"));
        CK(nc_inq_varid(nc, "e", &e));
        CK(nc_rename_var(nc, e, "e2"));
    } else if (!strcmp(scenario, "rename_grp")) {
        CK(nc_inq_ncid(nc, "g", &g));
        CK(nc_rename_grp(g, "h"));
    } else if (!strcmp(scenario, "rename_in_grp")) {
        CK(nc_inq_ncid(nc, "g", &g));
        CK(nc_inq_varid(g, "v", &d));
        CK(nc_rename_var(g, d, "v2"));
    } else if (!strcmp(scenario, "define_var")) {       /* a new variable (fill until written) */
        CK(nc_inq_dimid(nc, "x", &x));
        CK(nc_def_var(nc, "n", NC_INT, 1, &x, &n));
        CK(nc_def_var_chunking(nc, n, NC_CHUNKED, &ch));
        CK(nc_put_att_text(nc, n, "units", 2, "kg"));
    } else if (!strcmp(scenario, "define_grp")) {
        CK(nc_def_grp(nc, "k", &g));
        CK(nc_inq_dimid(nc, "x", &x));
        CK(nc_def_var(g, "kv", NC_INT, 1, &x, &n));
    } else if (!strcmp(scenario, "attributes")) {        /* redefine: attributes changed and deleted */
        CK(nc_inq_varid(nc, "d", &d));
        CK(nc_del_att(nc, d, "units"));
        CK(nc_put_att_text(nc, NC_GLOBAL, "title", 3, "new"));
    } else {
        fprintf(stderr, "unknown scenario %s\n", scenario);
        exit(2);
    }
    CK(nc_close(nc));
}

static void dump_group(int grp, const char *path) {
    int nvars, natts, ngrps, ids[64];
    char name[NC_MAX_NAME + 1];
    nc_inq_natts(grp, &natts);
    printf("group %s atts", path);
    for (int a = 0; a < natts; a++) {
        char text[256] = {0};
        size_t len;
        nc_inq_attname(grp, NC_GLOBAL, a, name);
        nc_inq_attlen(grp, NC_GLOBAL, name, &len);
        if (len < sizeof text) nc_get_att_text(grp, NC_GLOBAL, name, text);
        printf(" %s=%s", name, text);
    }
    printf("\n");
    nc_inq_nvars(grp, &nvars);
    for (int v = 0; v < nvars; v++) {
        int ndims, dims[8], vnatts;
        size_t len = 1;
        nc_type type;
        nc_inq_var(grp, v, name, &type, &ndims, dims, &vnatts);
        printf("var %s/%s type %d", path, name, type);
        for (int i = 0; i < ndims; i++) {
            size_t n;
            nc_inq_dimlen(grp, dims[i], &n);
            printf(" dim %zu", n);
            len *= n;
        }
        for (int a = 0; a < vnatts; a++) {
            char an[NC_MAX_NAME + 1], text[256] = {0};
            size_t al;
            nc_inq_attname(grp, v, a, an);
            nc_inq_attlen(grp, v, an, &al);
            if (al < sizeof text) nc_get_att_text(grp, v, an, text);
            printf(" att %s=%s", an, text);
        }
        int *vals = calloc(len ? len : 1, sizeof *vals);
        int rc = nc_get_var_int(grp, v, vals);
        printf(" data");
        if (rc) printf(" error %d", rc);
        else for (size_t i = 0; i < len; i++) printf(" %d", vals[i]);
        printf("\n");
        free(vals);
    }
    nc_inq_grps(grp, &ngrps, ids);
    for (int i = 0; i < ngrps; i++) {
        char sub[1024];
        nc_inq_grpname(ids[i], name);
        snprintf(sub, sizeof sub, "%s/%s", path, name);
        dump_group(ids[i], sub);
    }
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "setup")) {
        setup(argv[3]);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "update")) {
        void (*arm)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "crashpoint_arm");
        long (*disarm)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "crashpoint_disarm");
        if (arm) arm();
        update(argv[2], argv[3]);
        long n = disarm ? disarm() : -1;
        printf("%ld\n", n);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "dump")) {
        int nc, rc = nc_open(argv[2], NC_NOWRITE, &nc);
        if (rc) {
            printf("open failed %d %s\n", rc, nc_strerror(rc));
            return 0;
        }
        dump_group(nc, "");
        nc_close(nc);
        return 0;
    }
    fprintf(stderr, "usage: crash_driver setup|update SCENARIO URL | dump URL\n");
    return 2;
}

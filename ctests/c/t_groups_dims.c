/* Groups and dimensions: ids, names, lookups, renames, persistence (c-api.md §6, §7, §10.1). */
#include "check.h"

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    const char *u = url(dir, "g.file", "nczarr,file");
    int ncid, g1, g2, g3, gx, d0, d1, d2, d3, n, ids[16], parent;
    char name[NC_MAX_NAME + 1], full[1024];
    size_t len;

    OK(nc_create(u, 0, &ncid));
    OK(nc_def_dim(ncid, "time", NC_UNLIMITED, &d0));
    OK(nc_def_dim(ncid, "lat", 3, &d1));
    CHECK(d0 == 0 && d1 == 1);
    EXPECT(NC_ENAMEINUSE, nc_def_dim(ncid, "lat", 4, NULL));
    EXPECT(NC_EBADNAME, nc_def_dim(ncid, "a/b", 4, NULL));
    EXPECT(NC_EBADNAME, nc_def_dim(ncid, "", 4, NULL));
    EXPECT(NC_EBADNAME, nc_def_dim(ncid, "x ", 4, NULL));
    EXPECT(NC_EBADNAME, nc_def_dim(ncid, "-x", 4, NULL));
    EXPECT(NC_EINVAL, nc_def_dim(ncid, NULL, 4, NULL));
    EXPECT(NC_EDIMSIZE, nc_def_dim(ncid, "huge", (size_t)-1, NULL));
    char longname[300];
    memset(longname, 'a', 299);
    longname[299] = 0;
    EXPECT(NC_EMAXNAME, nc_def_dim(ncid, longname, 4, NULL));
    longname[256] = 0;
    OK(nc_def_dim(ncid, longname, 1, NULL));

    OK(nc_def_grp(ncid, "g1", &g1));
    CHECK(g1 == (ncid | 1));
    OK(nc_def_grp(g1, "g2", &g2));
    OK(nc_def_grp(ncid, "g3", &g3));
    CHECK(g2 == (ncid | 2) && g3 == (ncid | 3));
    EXPECT(NC_ENAMEINUSE, nc_def_grp(ncid, "g1", NULL));
    OK(nc_def_var(ncid, "v", NC_INT, 0, NULL, NULL));
    EXPECT(NC_ENAMEINUSE, nc_def_grp(ncid, "v", NULL));
    EXPECT(NC_ENAMEINUSE, nc_def_var(ncid, "g1", NC_INT, 0, NULL, NULL));
    OK(nc_def_dim(g1, "lat", 5, &d2)); /* shadows the root's lat */
    OK(nc_def_dim(g2, "k", 2, &d3));
    CHECK(d2 == 3 && d3 == 4);

    /* Lookups: own group first, then ancestors. */
    OK(nc_inq_dimid(g2, "lat", &n));
    CHECK(n == d2);
    OK(nc_inq_dimid(g3, "lat", &n));
    CHECK(n == d1);
    EXPECT(NC_EBADDIM, nc_inq_dimid(ncid, "k", &n));
    EXPECT(NC_EINVAL, nc_inq_dimid(ncid, "a/b", &n));
    OK(nc_inq_dim(g3, d3, name, &len)); /* any dimid of the file works from any group */
    CHECK(strcmp(name, "k") == 0 && len == 2);
    EXPECT(NC_EBADDIM, nc_inq_dim(ncid, 99, name, &len));
    EXPECT(NC_EBADDIM, nc_inq_dimlen(ncid, -1, &len));
    OK(nc_inq_dimids(g2, &n, ids, 0));
    CHECK(n == 1 && ids[0] == d3);
    OK(nc_inq_dimids(g2, &n, ids, 1));
    CHECK(n == 5 && ids[0] == 0 && ids[4] == 4);
    OK(nc_inq_unlimdims(ncid, &n, ids));
    CHECK(n == 1 && ids[0] == d0);
    OK(nc_inq_unlimdims(g1, &n, NULL));
    CHECK(n == 0);
    OK(nc_inq_unlimdim(g1, &n));
    CHECK(n == -1);
    OK(nc_inq_unlimdim(ncid, &n));
    CHECK(n == d0);
    OK(nc_inq(g1, &n, NULL, NULL, NULL));
    CHECK(n == 1);

    /* Group names and navigation. */
    OK(nc_inq_grpname(ncid, name));
    CHECK(strcmp(name, "/") == 0);
    OK(nc_inq_grpname(g2, name));
    CHECK(strcmp(name, "g2") == 0);
    OK(nc_inq_grpname_full(g2, &len, NULL));
    OK(nc_inq_grpname_full(g2, NULL, full));
    CHECK(len == 6 && strcmp(full, "/g1/g2") == 0);
    OK(nc_inq_grpname_len(ncid, &len));
    CHECK(len == 1);
    OK(nc_inq_grp_parent(g2, &parent));
    CHECK(parent == g1);
    EXPECT(NC_ENOGRP, nc_inq_grp_parent(ncid, &parent));
    OK(nc_inq_grps(ncid, &n, ids));
    CHECK(n == 2 && ids[0] == g1 && ids[1] == g3);
    OK(nc_inq_grp_ncid(ncid, "g3", &gx));
    CHECK(gx == g3);
    EXPECT(NC_ENOGRP, nc_inq_grp_ncid(ncid, "nope", &gx));
    EXPECT(NC_EBADNAME, nc_inq_grp_ncid(ncid, "g1/g2", &gx));
    OK(nc_inq_ncid(ncid, NULL, &gx));
    CHECK(gx == ncid);
    OK(nc_inq_grp_full_ncid(ncid, "/g1/g2", &gx));
    CHECK(gx == g2);
    OK(nc_inq_grp_full_ncid(ncid, "g1//g2", &gx));
    CHECK(gx == g2);
    OK(nc_inq_grp_full_ncid(ncid, "/", &gx));
    CHECK(gx == ncid);
    EXPECT(NC_ENOGRP, nc_inq_grp_full_ncid(ncid, "/g9", &gx));
    EXPECT(NC_EBADID, nc_inq_grpname(ncid | 77, name));

    /* Renames. */
    EXPECT(NC_EBADGRPID, nc_rename_grp(ncid, "root"));
    EXPECT(NC_ENAMEINUSE, nc_rename_grp(g3, "g1"));
    OK(nc_rename_grp(g3, "g3renamed"));
    EXPECT(NC_ENAMEINUSE, nc_rename_dim(ncid, d1, "time"));
    OK(nc_rename_dim(ncid, d1, "latitude"));
    OK(nc_def_var(g2, "kv", NC_DOUBLE, 1, &d3, NULL));
    OK(nc_close(ncid));

    /* Reopen: same hierarchy; dimids in traversal order (root first). */
    OK(nc_open(u, NC_WRITE, &ncid));
    OK(nc_inq_dimid(ncid, "latitude", &n));
    CHECK(n == 1);
    OK(nc_inq_dimlen(ncid, 0, &len));
    CHECK(len == 0);
    OK(nc_inq_unlimdims(ncid, &n, ids));
    CHECK(n == 1 && ids[0] == 0);
    OK(nc_inq_grp_full_ncid(ncid, "/g1/g2", &g2));
    OK(nc_inq_grp_ncid(ncid, "g3renamed", &g3));
    OK(nc_inq_varid(g2, "kv", &n));
    OK(nc_inq_vardimid(g2, n, ids));
    OK(nc_inq_dimname(g2, ids[0], name));
    CHECK(strcmp(name, "k") == 0);
    /* Data mode: metadata calls imply redef. */
    OK(nc_rename_grp(g2, "deeper"));
    OK(nc_def_dim(g3, "extra", 7, NULL));
    OK(nc_close(ncid));
    OK(nc_open(u, 0, &ncid));
    OK(nc_inq_grp_full_ncid(ncid, "/g1/deeper", &g2));
    OK(nc_inq_varid(g2, "kv", &n));
    OK(nc_inq_grp_ncid(ncid, "g3renamed", &g3));
    OK(nc_inq_dimid(g3, "extra", &n));
    OK(nc_close(ncid));
    DONE();
}

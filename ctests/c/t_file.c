/* Datasets: create/open/close, modes, ncids, formats, paths, errors (c-api.md §4, §5, §11). */
#include "check.h"
#include <sys/stat.h>

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    int ncid, ncid2, fmt, mode, old;
    char buf[4096];
    size_t len;

    /* Version and error texts. */
    CHECK(strncmp(nc_inq_libvers(), "4.9.2 ", 6) == 0);
    CHECK(strcmp(nc_strerror(NC_NOERR), "No error") == 0);
    CHECK(strcmp(nc_strerror(NC_EBADID), "NetCDF: Not a valid ID") == 0);
    CHECK(strcmp(nc_strerror(NC_EEXIST), "NetCDF: File exists && NC_NOCLOBBER") == 0);
    CHECK(strcmp(nc_strerror(NC_ENCZARR), "NetCDF: NCZarr error") == 0);
    CHECK(strcmp(nc_strerror(NC_EVARMETA), "NetCDF: Problem with variable metadata.") == 0);
    CHECK(strcmp(nc_strerror(-143), "Unknown Error") == 0);
    CHECK(strcmp(nc_strerror(-9999), "Unknown Error") == 0);
    CHECK(strcmp(nc_strerror(-1), "Unknown Error") == 0);
    CHECK(strcmp(nc_strerror(2), "No such file or directory") == 0);

    /* ncid encoding: slot << 16, lowest free slot from 1, reused after close. */
    EXPECT(NC_EINVAL, nc_create(NULL, 0, &ncid));
    OK(nc_create(url(dir, "a.file", "nczarr,file"), 0, &ncid));
    CHECK(ncid == 0x10000);
    OK(nc_create(url(dir, "b.file", "nczarr,file"), NC_CLOBBER, &ncid2));
    CHECK(ncid2 == 0x20000);
    OK(nc_close(ncid));
    OK(nc_create(url(dir, "c.file", "nczarr"), 0, &ncid));
    CHECK(ncid == 0x10000);
    OK(nc_close(ncid));
    OK(nc_close(ncid2));
    EXPECT(NC_EBADID, nc_close(ncid2));
    EXPECT(NC_EBADID, nc_inq(0x7fff0000, NULL, NULL, NULL, NULL));
    EXPECT(NC_EBADID, nc_inq(-5, NULL, NULL, NULL, NULL));
    EXPECT(NC_EBADID, nc_inq(0, NULL, NULL, NULL, NULL));
    OK(nc_create(url(dir, "null-id.file", "nczarr,file"), 0, NULL));

    /* Unsupported create/open modes for Zarr. */
    EXPECT(NC_EINVAL, nc_create(url(dir, "x.file", "nczarr,file"), NC_64BIT_OFFSET, &ncid));
    EXPECT(NC_EINVAL, nc_create(url(dir, "x.file", "nczarr,file"), NC_64BIT_DATA, &ncid));
    EXPECT(NC_EINVAL, nc_create(url(dir, "x.file", "nczarr,file"), NC_DISKLESS, &ncid));
    EXPECT(NC_EINVAL, nc_create(url(dir, "x.file", "nczarr,v2,v3"), 0, &ncid));
    EXPECT(NC_EINVAL, nc_create(url(dir, "x.file", "nczarr,file,zip"), 0, &ncid));
    EXPECT(NC_EINVAL, nc_create(url(dir, "x.file", "nczarr,bogus"), 0, &ncid));

    /* Formats and paths. */
    OK(nc_create(url(dir, "fmt.file", "nczarr,file"), NC_NETCDF4, &ncid));
    OK(nc_inq_format(ncid, &fmt));
    CHECK(fmt == NC_FORMAT_NETCDF4);
    OK(nc_inq_format_extended(ncid, &fmt, &mode));
    CHECK(fmt == NC_FORMATX_NCZARR);
    CHECK(mode == NC_NETCDF4);
    OK(nc_inq_format_extended(ncid, NULL, NULL));
    OK(nc_inq_path(ncid, &len, NULL));
    OK(nc_inq_path(ncid, NULL, buf));
    CHECK(len == strlen(url(dir, "fmt.file", "nczarr,file")));
    CHECK(strcmp(buf, url(dir, "fmt.file", "nczarr,file")) == 0);
    /* Define-mode rules. */
    EXPECT(NC_EINDEFINE, nc_redef(ncid));
    OK(nc_enddef(ncid));
    EXPECT(NC_ENOTINDEFINE, nc_enddef(ncid));
    OK(nc_redef(ncid));
    OK(nc_sync(ncid));
    EXPECT(NC_EINVAL, nc_set_fill(ncid, 7, &old));
    OK(nc_set_fill(ncid, NC_NOFILL, &old));
    CHECK(old == NC_FILL);
    OK(nc_set_fill(ncid, NC_FILL, &old));
    CHECK(old == NC_NOFILL);
    OK(nc_set_fill(ncid, NC_FILL, NULL));
    OK(nc_close(ncid));

    OK(nc_open(url(dir, "fmt.file", "nczarr,file"), NC_WRITE | NC_SHARE, &ncid));
    OK(nc_inq_format_extended(ncid, &fmt, &mode));
    CHECK(mode == (NC_WRITE | NC_SHARE | NC_NETCDF4));
    OK(nc_close(ncid));

    /* Read-only datasets refuse every change. */
    OK(nc_open(url(dir, "fmt.file", "nczarr,file"), NC_NOWRITE, &ncid));
    EXPECT(NC_EPERM, nc_redef(ncid));
    EXPECT(NC_EPERM, nc_def_dim(ncid, "d", 3, NULL));
    EXPECT(NC_EPERM, nc_put_att_text(ncid, NC_GLOBAL, "a", 1, "x"));
    EXPECT(NC_EPERM, nc_set_fill(ncid, NC_NOFILL, &old));
    EXPECT(NC_EPERM, nc_def_grp(ncid, "g", NULL));
    OK(nc_sync(ncid));
    OK(nc_close(ncid));

    /* NC_NOCLOBBER on an existing dataset: NC_EEXIST, dataset untouched. */
    OK(nc_create(url(dir, "keep.file", "nczarr,file"), 0, &ncid));
    OK(nc_def_dim(ncid, "keepme", 4, NULL));
    OK(nc_close(ncid));
    EXPECT(NC_EEXIST, nc_create(url(dir, "keep.file", "nczarr,file"), NC_NOCLOBBER, &ncid));
    OK(nc_open(url(dir, "keep.file", "nczarr,file"), NC_NOWRITE, &ncid));
    OK(nc_inq_dimid(ncid, "keepme", &old));
    OK(nc_close(ncid));

    /* Missing and foreign datasets. */
    EXPECT(NC_ENOOBJECT, nc_open(url(dir, "missing.file", "nczarr,file"), 0, &ncid));
    EXPECT(2, nc_open(path_in(dir, "missing-plain.nc"), 0, &ncid));
    snprintf(buf, sizeof buf, "%s/plain.txt", dir);
    FILE *f = fopen(buf, "w");
    fputs("not netcdf\n", f);
    fclose(f);
    EXPECT(NC_ENOTNC, nc_open(buf, 0, &ncid));
    snprintf(buf, sizeof buf, "%s/emptydir", dir);
    mkdir(buf, 0777);
    EXPECT(NC_ENOTNC, nc_open(url(dir, "emptydir", "nczarr,file"), 0, &ncid));

    /* A plain path to a Zarr directory is recognised. */
    OK(nc_open(path_in(dir, "keep.file"), 0, &ncid));
    OK(nc_close(ncid));

    /* nc_abort of a fresh create removes it; nc_delete removes a store. */
    OK(nc_create(url(dir, "aborted.file", "nczarr,file"), 0, &ncid));
    OK(nc_abort(ncid));
    EXPECT(NC_ENOOBJECT, nc_open(url(dir, "aborted.file", "nczarr,file"), 0, &ncid));
    OK(nc_delete(url(dir, "keep.file", "nczarr,file")));
    EXPECT(NC_ENOOBJECT, nc_open(url(dir, "keep.file", "nczarr,file"), 0, &ncid));
    EXPECT(NC_ENOOBJECT, nc_delete(url(dir, "keep.file", "nczarr,file")));

    /* Classic model: strict netCDF-3 rules, recorded so they survive a reopen. */
    OK(nc_create(url(dir, "classic.file", "nczarr,file"), NC_NETCDF4 | NC_CLASSIC_MODEL, &ncid));
    OK(nc_inq_format(ncid, &fmt));
    CHECK(fmt == NC_FORMAT_NETCDF4_CLASSIC);
    OK(nc_inq_format_extended(ncid, NULL, &mode));
    CHECK(mode == (NC_NETCDF4 | NC_CLASSIC_MODEL));
    EXPECT(NC_ESTRICTNC3, nc_def_grp(ncid, "g", NULL));
    OK(nc_def_dim(ncid, "t", NC_UNLIMITED, NULL));
    EXPECT(NC_EUNLIMIT, nc_def_dim(ncid, "t2", NC_UNLIMITED, NULL));
    EXPECT(NC_ESTRICTNC3, nc_def_var(ncid, "u", NC_UBYTE, 0, NULL, NULL));
    EXPECT(NC_ESTRICTNC3, nc_put_att_uint(ncid, NC_GLOBAL, "u", NC_UINT, 0, NULL));
    OK(nc_enddef(ncid));
    EXPECT(NC_ENOTINDEFINE, nc_def_dim(ncid, "late", 1, NULL));
    EXPECT(NC_EINDEFINE, (nc_redef(ncid), nc_sync(ncid)));
    OK(nc_close(ncid));
    OK(nc_open(url(dir, "classic.file", "nczarr,file"), 0, &ncid));
    OK(nc_inq_format(ncid, &fmt));
    CHECK(fmt == NC_FORMAT_NETCDF4_CLASSIC);
    OK(nc_close(ncid));

    /* Zip storage: netcdf-c's layout, reopened by inference too. */
    OK(nc_create(url(dir, "z.zip", "nczarr,zip"), 0, &ncid));
    OK(nc_def_dim(ncid, "zd", 2, NULL));
    OK(nc_close(ncid));
    OK(nc_open(url(dir, "z.zip", "nczarr,zip"), 0, &ncid));
    OK(nc_inq_dimid(ncid, "zd", &old));
    OK(nc_close(ncid));
    OK(nc_open(path_in(dir, "z.zip"), 0, &ncid));
    OK(nc_close(ncid));

    /* Library-level calls. */
    EXPECT(NC_EINVAL, nc_set_default_format(9, &old));
    OK(nc_set_default_format(NC_FORMAT_NETCDF4, &old));
    CHECK(old == NC_FORMAT_CLASSIC);
    EXPECT(NC_EINVAL, nc_rc_set(NULL, "x"));
    OK(nc_rc_set("HTTP.SSL.CAINFO", "/tmp/ca.pem"));
    char *v = nc_rc_get("HTTP.SSL.CAINFO");
    CHECK(v && strcmp(v, "/tmp/ca.pem") == 0);
    free(v);
    OK(nc_initialize());
    OK(nc_finalize());
    OK(nc_finalize());
    CHECK(nctypelen(NC_DOUBLE) == 8 && nctypelen(99) == -1);
    EXPECT(NC_ENOPAR, nc_var_par_access(0x10000, 0, 0));
    DONE();
}

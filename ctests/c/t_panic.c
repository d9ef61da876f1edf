/* A Rust panic inside an API call (reliability.md A10), forced by the library's test hook
 * NCZARR_TEST_PANIC=<function>:<n>: the call returns NC_EINTERNAL, the process lives on, and
 * the same dataset keeps working (the hook fires before the dataset is touched). */
#include "check.h"

int main(int argc, char **argv)
{
    /* Read by the library at its first call. */
    setenv("NCZARR_TEST_PANIC", "nc_inq_nvars:2", 1);
    const char *u = url(argv[1], "panic.file", "nczarr,file");
    int ncid, d, v, n = -1;
    OK(nc_create(u, 0, &ncid));
    OK(nc_def_dim(ncid, "x", 4, &d));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &d, &v));
    OK(nc_inq_nvars(ncid, &n));
    CHECK(n == 1);
    EXPECT(NC_EINTERNAL, nc_inq_nvars(ncid, &n));
    n = -1;
    OK(nc_inq_nvars(ncid, &n));
    CHECK(n == 1);
    int data[4] = {1, 2, 3, 4}, back[4] = {0};
    OK(nc_put_var_int(ncid, v, data));
    OK(nc_close(ncid));
    OK(nc_open(u, NC_NOWRITE, &ncid));
    OK(nc_get_var_int(ncid, v, back));
    CHECK(back[0] == 1 && back[3] == 4);
    OK(nc_close(ncid));
    DONE();
}

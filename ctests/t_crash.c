/* Crash safety (reliability.md §3.7): a writer killed with SIGKILL after nc_sync leaves a
 * dataset that opens and returns everything written up to that sync. */
#include "check.h"
#include <signal.h>
#include <sys/wait.h>

static void writer(const char *u)
{
    int ncid, t, x, v;
    if (nc_create(u, 0, &ncid) || nc_def_dim(ncid, "time", NC_UNLIMITED, &t) || nc_def_dim(ncid, "x", 8, &x)) _exit(2);
    int dims[2] = {t, x};
    if (nc_def_var(ncid, "v", NC_INT, 2, dims, &v) || nc_def_var_deflate(ncid, v, 1, 1, 1)) _exit(2);
    int row[8];
    for (size_t r = 0; r < 70; r++) {
        for (int i = 0; i < 8; i++) row[i] = (int)r * 100 + i;
        size_t start[2] = {r, 0}, count[2] = {1, 8};
        if (nc_put_vara_int(ncid, v, start, count, row)) _exit(2);
        if (r == 49 && nc_sync(ncid)) _exit(2);
    }
    raise(SIGKILL);
}

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    const char *urls[2] = {url(dir, "crash.file", "nczarr,file"), url(dir, "crash.zip", "nczarr,zip")};
    /* t_fork.c covers forks after the library is in use; here the writers come first. */
    for (int k = 0; k < 2; k++) {
        pid_t pid = fork();
        if (pid == 0) writer(urls[k]);
        int status;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    }
    for (int k = 0; k < 2; k++) {
        const char *u = urls[k];
        int ncid, v;
        size_t len;
        OK(nc_open(u, NC_NOWRITE, &ncid));
        OK(nc_inq_dimlen(ncid, 0, &len));
        CHECK(len == 50);
        OK(nc_inq_varid(ncid, "v", &v));
        int all[50][8];
        OK(nc_get_var_int(ncid, v, &all[0][0]));
        CHECK(all[0][0] == 0 && all[49][7] == 4907 && all[25][3] == 2503);
        OK(nc_close(ncid));
    }
    DONE();
}
